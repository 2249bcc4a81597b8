#!/bin/sh
# layers.sh - the layering check of the shim (issue 27) and of the tools
# (issue 34): from the code's own includes and calls, fail when a file of
# shim/ or tools/ includes a header of, calls a function of, or uses data of
# a layer above its own or of a sibling; when files reach each other in a
# circle of more than 3 files or across layers; and when a file is over 700
# lines. The layers are shim/layers.txt's (folders) and tools/layers.txt's
# (file patterns: NAME=GLOB,...; a tools file may include no shim file
# outside them).
#
# usage: layers.sh [BUILD_DIR]                  the check: one line per
#                                               violation, exit 1 if any
#        layers.sh --table [BUILD_DIR]          docs/ARCHITECTURE.md's table
#        layers.sh --report [BUILD_DIR]         every file, edge and circle; exit 0
#        layers.sh --check-doc DOC [BUILD_DIR]  exit 1 when DOC's table (between
#                                               <!-- layers:begin --> and
#                                               <!-- layers:end -->) is not --table's
#        layers.sh --write-doc DOC [BUILD_DIR]  writes --table's into DOC
# BUILD_DIR (default: build next to this script's folder) is a configured and
# built tree: its CMakeCache.txt names the sources, the compiler and the
# shim's include folders. Exit 2: no such tree, objects older than their
# sources (build first), or a layers.txt that does not name the folders.
#
# What counts (docs/ARCHITECTURE.md, "The layers"):
#  - includes: each `#include "NAME"` of a shim .c or .h, NAME resolved to
#    the one shim file of that name (a name no shim file has, e.g. reprise.h
#    of include/, is not the shim's; one that several have is a violation);
#  - calls and uses: every undefined symbol of a shim object (nm of the
#    build tree's objects under BUILD_DIR/shim) that another shim object
#    defines: a function (calls) or data (uses). A reference made by a
#    header's inline function counts for each file it is inlined into (it
#    is that file's code), and for the header itself: each header is
#    compiled alone, its static inline functions kept, and charged with what
#    they reference less what the headers it includes already reference;
#    macros count only where expanded;
#  - circles: files that reach each other through includes, calls and
#    uses; every circle is reported, and one of over 3 files, or whose
#    files lie in different layers, fails. A .c and its own .h (the same
#    name in the same folder) count as one file there: the header is that
#    file's face, and its inline functions call the file they belong to.
set -u
LC_ALL=C
export LC_ALL
max_lines=700
max_circle=3

me=layers.sh
die() { echo "$me: $*" >&2; exit 2; }
usage() { awk '/^# usage:/ { f = 1 } f && /^#$/ { exit } f { sub(/^# ?/, ""); print }' "$0"; }

mode=check doc=
case ${1:-} in
--table) mode=table; shift ;;
--report) mode=report; shift ;;
--check-doc | --write-doc)
    [ $# -ge 2 ] || die "$1 needs a file"
    mode=${1#--} doc=$2
    shift 2 ;;
-h | --help) usage; exit 0 ;;
-*) echo "$me: unknown option $1" >&2; usage >&2; exit 2 ;;
esac
[ $# -le 1 ] || { usage >&2; exit 2; }
build=${1:-$(dirname "$0")/../build}
[ -f "$build/CMakeCache.txt" ] || die "no $build/CMakeCache.txt: configure and build first"
build=$(cd "$build" && pwd) || exit 2
cachevar() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | sed -n 1p; }
root=$(cachevar CMAKE_HOME_DIRECTORY)
cc=$(cachevar CMAKE_C_COMPILER)
shim_includes=$(cachevar REPRISE_SHIM_INCLUDES)
[ -n "$root" ] && [ -d "$root/shim" ] || die "$build/CMakeCache.txt names no source tree with a shim/"
[ -f "$root/shim/layers.txt" ] || die "no $root/shim/layers.txt"
[ -n "$cc" ] || die "$build/CMakeCache.txt names no C compiler"
[ -n "$doc" ] && { [ -f "$doc" ] || die "no $doc"; doc=$(cd "$(dirname "$doc")" && pwd)/${doc##*/}; }
cd "$root" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

# The trees checked: the shim (its folders are its layers) and the tools
# (layers of file patterns, tools/layers.txt); a tree without its
# layers.txt (a fake one of the self-test) is not checked.
trees=shim
[ -f tools/layers.txt ] && trees="shim tools"

# syms ORIGIN FILE OBJECT: S ORIGIN FILE TYPE SYMBOL LOCATION, one line per
# global or undefined symbol: what each object defines and references.
syms() {
    nm -l "$3" 2>/dev/null | awk -F '\t' -v o="$1" -v f="$2" -v root="$root/" '
        { loc = $2; sub(/ \(discriminator.*/, "", loc)
          if (index(loc, root) == 1) loc = substr(loc, length(root) + 1)
          if (loc == "") loc = "-"
          k = split($1, w, " ")
          if (k == 2) print "S", o, f, "U", w[2], loc          # undefined
          else if (k == 3 && w[2] ~ /^[BCDGRSTVWi]$/) print "S", o, f, w[2], w[3], loc }'
}

# glob_re GLOB: the awk regular expression of a file pattern (* and ?).
glob_re() {
    printf '%s\n' "$1" | sed 's/[.+^$(){}|]/\\&/g; s/\*/[^\/]*/g; s/?/[^\/]/g; s/.*/^&$/'
}

# facts TREE: the facts of one tree into $tmp/facts.TREE.
facts() {
    t=$1 f=$tmp/facts.$1
    echo "R $t" >"$f"
    if [ "$t" = shim ]; then
        # L LEVEL FOLDER: levels counted from the bottom (core is 1); siblings share one.
        awk '{ sub(/#.*/, "") } NF { n++; line[n] = $0 }
             END { for (i = 1; i <= n; i++) {
                       k = split(line[i], w, " ")
                       for (j = 1; j <= k; j++) print "L", n - i + 1, w[j]
                   } }' shim/layers.txt >>"$f"
        awk '$1 == "L" && $3 in seen { print "shim/layers.txt names " $3 " twice"; exit }
             $1 == "L" { seen[$3] = 1 }' "$f" | grep . >&2 && exit 2
        awk '$1 == "L" { print $3 }' "$f" | while read -r dir; do
            [ -d "shim/$dir" ] || die "shim/layers.txt names $dir, which is not a folder of shim/"
        done
        grep -q '^L ' "$f" || die "shim/layers.txt names no layer"
        find shim -type f \( -name '*.c' -o -name '*.h' \) | sort >"$tmp/files.$t"
    else
        # P LEVEL LAYER REGEX: a layer of file patterns (NAME=GLOB,...; a
        # glob without a slash names files of tools/).
        awk '{ sub(/#.*/, "") } NF { n++; line[n] = $0 }
             END { for (i = 1; i <= n; i++) {
                       k = split(line[i], w, " ")
                       for (j = 1; j <= k; j++) print n - i + 1, w[j]
                   } }' tools/layers.txt >"$tmp/words"
        while read -r lv word; do
            name=${word%%=*}
            [ "$name" != "$word" ] && [ -n "${word#*=}" ] ||
                die "tools/layers.txt: '$word' is not NAME=GLOB[,GLOB...]"
            set -f # the globs are patterns, not for the shell to expand
            for g in $(echo "${word#*=}" | tr ',' ' '); do
                case $g in */*) ;; *) g=tools/$g ;; esac
                echo "P $lv $name $(glob_re "$g")"
            done
            set +f
        done <"$tmp/words" >>"$f"
        grep -q '^P ' "$f" || die "tools/layers.txt names no layer"
        # The tools' files, and the shim's, which they may name: those of a
        # layer are checked with them; the others are there so that an
        # include of one is seen.
        { find tools -type f \( -name '*.c' -o -name '*.h' \); find shim -type f \( -name '*.c' -o -name '*.h' \); } |
            sort >"$tmp/all.$t"
        awk 'NR == FNR { if ($1 == "P") re[++n] = $4; next }
             /^tools\// { print; next }
             { for (i = 1; i <= n; i++) if ($0 ~ re[i]) { print; next }; print "O", $0 > "/dev/stderr" }' \
            "$f" "$tmp/all.$t" >"$tmp/files.$t" 2>>"$f"
    fi
    [ -s "$tmp/files.$t" ] || die "no .c or .h file under $root/$t"
    # F FILE LINES, I FILE LINE NAME: every source file, its length, its includes.
    # shellcheck disable=SC2046
    awk '{ n[FILENAME] = FNR }
         /^[ \t]*#[ \t]*include[ \t]*"/ {
             s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s)
             print "I", FILENAME, FNR, s
         }
         END { for (f in n) print "N", f, n[f] }' $(cat "$tmp/files.$t") >"$tmp/scan.$t"
    awk 'NR == FNR { f[++k] = $1; next } $1 == "N" { n[$2] = $3; next } { print }
         END { for (i = 1; i <= k; i++) print "F", f[i], n[f[i]] + 0 }' "$tmp/files.$t" "$tmp/scan.$t" >>"$f"

    # S obj: the objects of the tree's build folder (a source of another
    # folder compiled into it is named CMakeFiles/X.dir/__/PATH).
    objs=0
    : >"$tmp/compiled.$t"
    find "$build/$t" -path '*/CMakeFiles/*.dir/*' -name '*.o' 2>/dev/null | sort >"$tmp/objs.$t"
    while read -r o; do
        rel=${o#"$build"/}
        src=$(echo "$rel" | sed 's|CMakeFiles/[^/]*\.dir/||; s|\.o$||; s|^[^/]*/__/||')
        grep -qx "$src" "$tmp/files.$t" || continue
        grep -qx "$src" "$tmp/compiled.$t" && continue # the same source in two targets
        # Objects older than a source they were built from say nothing of today's code.
        deps=$src
        [ -f "$o.d" ] && deps="$deps $(tr ' \\' '\n\n' <"$o.d" | sed -n "s#^$root/\(\(shim\|tools\)/.*\)#\1#p" | sort -u | tr '\n' ' ')"
        # shellcheck disable=SC2086
        newer=$(find $deps -newer "$o" 2>/dev/null | sed -n 1p)
        [ -z "$newer" ] || die "$o is older than $newer: build first"
        syms obj "$src" "$o" >>"$f"
        echo "$src" >>"$tmp/compiled.$t"
        objs=$((objs + 1))
    done <"$tmp/objs.$t"
    [ "$objs" -gt 0 ] || die "no object of a $t source under $build/$t: build first"
    grep "^$t/.*\.c\$" "$tmp/files.$t" | while read -r src; do
        grep -qx "$src" "$tmp/compiled.$t" ||
            echo "X $src is compiled into no object of $build/$t: its calls are not seen"
    done >>"$f"

    # S hdr HEADER U SYMBOL LOCATION: what each header's inline functions reference.
    iflags="-I$root/$t"
    oldifs=$IFS
    IFS=';'
    for d in $shim_includes; do iflags="$iflags -I$d"; done
    IFS=$oldifs
    n=0
    for h in $(grep '\.h$' "$tmp/files.$t"); do
        n=$((n + 1))
        # always_inline functions are not kept otherwise; the header is not linked.
        # shellcheck disable=SC2086
        if "$cc" -std=c11 -D_GNU_SOURCE -Dalways_inline=unused -fkeep-inline-functions \
            -fkeep-static-functions -O0 -g -w $iflags -c -x c -o "$tmp/h$t$n.o" "$h" 2>"$tmp/h$t$n.err"; then
            syms hdr "$h" "$tmp/h$t$n.o" | awk '$4 == "U"'
        else
            echo "X $h does not compile alone ($(sed -n 1p "$tmp/h$t$n.err")): what its inline functions call counts only where they are inlined"
        fi
    done >>"$f"
}
for t in $trees; do facts "$t"; done

analyse() { # analyse MODE TREE: the tree's facts, checked (check, table or report)
    awk -v mode="$1" -v max_lines="$max_lines" -v max_circle="$max_circle" '
function base(f) { sub(/.*\//, "", f); return f }
function folder(f) { if (index(f, root "/") == 1) f = substr(f, length(root) + 2); if (f !~ /\//) return "."; sub(/\/[^\/]*$/, "", f); return f }
function shown(L) { return np ? L : L "/" } # a layer as tables name it
function rel(s, d) { # how the layer of d stands to the layer of s
    if (layer[s] == "" || layer[d] == "") return ""
    if (lvl[layer[d]] > lvl[layer[s]]) return "above"
    if (lvl[layer[d]] == lvl[layer[s]] && layer[d] != layer[s]) return "beside"
    return ""
}
function edge(s, d, kind, name, loc,    k) {
    if (s == d) return
    k = s SUBSEP kind SUBSEP name
    if (k in seen) return
    seen[k] = 1
    ne++; es[ne] = s; ed[ne] = d; ek[ne] = kind; en[ne] = name; el[ne] = loc
    adj[s, d] = 1
}
function violation(line) { nv++; viol[nv] = line }
function names(f, n, sym,    t, line, k) { # the line of f from n to n + 5 that names sym, or 0
    if (!((f, 0) in txt)) { txt[f, 0] = 1; t = 0; while ((getline line < f) > 0) txt[f, ++t] = line; close(f) }
    for (k = n; k <= n + 5; k++)
        if (((f, k) in txt) && txt[f, k] ~ ("(^|[^A-Za-z0-9_])" sym "([^A-Za-z0-9_]|$)")) return k
    return 0
}
function locate(s, sym, loc,    f, n, k, q, nq, h, j, done) {
    # nm gives the line where the statement holding a reference begins, and
    # at times the wrong file (a header inlined into s given as s): the
    # location kept is the line that names the symbol, at most 5 lines on,
    # in that file or else a header s includes; none (a call by a macro) is "-".
    if (loc !~ /^(shim|tools)\/.*:[0-9]+$/) return "-"
    f = loc; sub(/:[0-9]+$/, "", f); n = substr(loc, length(f) + 2) + 0
    if ((f in idx) && (k = names(f, n, sym))) return f ":" k
    nq = 1; q[1] = s; done[s] = 1
    for (j = 1; j <= nq; j++) {
        if (q[j] != f && (k = names(q[j], n, sym))) return q[j] ":" k
        for (h = 1; h <= ninc[q[j]]; h++)
            if (!(inc[q[j], h] in done)) { done[inc[q[j], h]] = 1; q[++nq] = inc[q[j], h] }
    }
    return "-"
}
$1 == "R" { root = $2; next }
$1 == "L" { lvl[$3] = $2; nl++; ldir[nl] = $3; next }
$1 == "P" { np++; pname[np] = $3; pre[np] = $4; if (!($3 in lvl)) { lvl[$3] = $2; nl++; ldir[nl] = $3 }; next }
$1 == "O" { no++; ofile[no] = $2; next }
$1 == "F" { nf++; file[nf] = $2; idx[$2] = nf; lines[$2] = $3; next }
$1 == "I" { ni++; isrc[ni] = $2; iline[ni] = $3; iname[ni] = $4; next }
$1 == "S" && $2 == "obj" && $4 != "U" {
    if (!($5 in def)) { def[$5] = $3; kind[$5] = ($4 ~ /^[TWi]$/) ? "calls" : "uses" }
    else if (def[$5] != $3) note("both " def[$5] " and " $3 " define " $5)
    next
}
$1 == "S" && $2 == "obj" { nr++; rsrc[nr] = $3; rname[nr] = $5; rloc[nr] = $6; next }
$1 == "S" { nh++; hsrc[nh] = $3; hname[nh] = $5; hloc[nh] = $6; href[$3, $5] = 1; next }
$1 == "X" { note(substr($0, 3)); next }
function note(s) { nn++; notes[nn] = s }
END {
    for (i = 1; i <= nf; i++) {
        f = file[i]; d = folder(f)
        if (np) {
            layer[f] = ""
            for (j = 1; j <= np && layer[f] == ""; j++) if (f ~ pre[j]) layer[f] = pname[j]
            if (layer[f] == "")
                violation(f ": in no layer (no pattern of " root "/layers.txt names it)")
        } else {
            layer[f] = (d in lvl) ? d : ""
            if (layer[f] == "")
                violation(f ": in no layer (" root "/" (d == "." ? "" : d "/") " is not in " root "/layers.txt)")
        }
        if (lines[f] > max_lines && index(f, root "/") == 1)
            violation(f ": over " max_lines " lines (" lines[f] ")")
        b = base(f); nb[b]++; byname[b] = f
    }
    # Files outside the layers of the tree (shim files, for the tools):
    # named by includes, never to be used.
    for (i = 1; i <= no; i++) { b = base(ofile[i]); nb[b]++; byname[b] = ofile[i]; outside[ofile[i]] = 1 }
    # Includes, resolved to the one file of that name.
    for (i = 1; i <= ni; i++) {
        s = isrc[i]; name = iname[i]; d = ""; hits = 0
        if (name !~ /\//) { hits = nb[name] + 0; if (hits == 1) d = byname[name] }
        else for (j = 1; j <= nf; j++)
            if (substr("/" file[j], length(file[j]) + 1 - length(name)) == "/" name) { hits++; d = file[j] }
        if (hits > 1) violation(s ":" iline[i] ": includes " name ", the name of " hits " " root " files")
        if (hits != 1 || ((d in outside) && index(s, root "/") != 1)) continue
        if ((d in outside) && index(s, root "/") == 1) {
            violation(s ":" iline[i] ": includes " name " of " d ", which no layer of " root "/layers.txt holds")
            continue
        }
        edge(s, d, "includes", name, s ":" iline[i])
        if (d ~ /\.h$/) { ninc[s]++; inc[s, ninc[s]] = d }
    }
    # Calls and uses by objects; then by headers, less what their headers reference.
    for (i = 1; i <= nr; i++)
        if (rname[i] in def) edge(rsrc[i], def[rname[i]], kind[rname[i]], rname[i], rloc[i])
    for (i = 1; i <= nh; i++) {
        s = hsrc[i]; name = hname[i]
        if (!(name in def)) continue
        inherited = 0
        for (j = 1; j <= ninc[s]; j++) if ((inc[s, j], name) in href) inherited = 1
        if (!inherited) edge(s, def[name], kind[name], name, hloc[i])
    }
    for (i = 1; i <= ne; i++) if (ek[i] != "includes") el[i] = locate(es[i], en[i], el[i])
    for (i = 1; i <= ne; i++) {
        r = rel(es[i], ed[i])
        if (r == "") continue
        s = es[i]; at = ""
        if (ek[i] == "includes" || index(el[i], es[i] ":") == 1) s = el[i]
        else if (el[i] != "-") at = " (at " el[i] ")"
        violation(s ": " ek[i] " " en[i] " of " ed[i] ", layer " layer[ed[i]] " " r \
                  " layer " layer[es[i]] at)
    }
    # Circles: the strongly connected components of the file graph.
    for (k = 1; k <= nf; k++) for (i = 1; i <= nf; i++)
        if ((file[i], file[k]) in adj)
            for (j = 1; j <= nf; j++)
                if ((file[k], file[j]) in adj) adj[file[i], file[j]] = 1
    nc = 0
    for (i = 1; i <= nf; i++) {
        if (i in comp) continue
        members = file[i]; comp[i] = i; nfiles = 1
        delete rooms; room = file[i]; sub(/\.[ch]$/, "", room); rooms[room] = 1; size = 1
        for (j = i + 1; j <= nf; j++)
            if (!(j in comp) && ((file[i], file[j]) in adj) && ((file[j], file[i]) in adj)) {
                comp[j] = i; members = members ", " file[j]; nfiles++
                room = file[j]; sub(/\.[ch]$/, "", room)
                if (!(room in rooms)) { rooms[room] = 1; size++ }
            }
        if (nfiles < 2) continue
        nc++; cfirst[nc] = i; csize[nc] = nfiles; cmem[nc] = members
        cl = ""; ncl = 0
        for (l = 1; l <= nl; l++) {
            for (j = i; j <= nf; j++) if ((j in comp) && comp[j] == i && layer[file[j]] == ldir[l]) break
            if (j <= nf) { cl = cl (ncl ? ", " : "") ldir[l]; ncl++ }
        }
        clayers[nc] = cl
        why = ""
        if (size > max_circle) why = ", over " max_circle
        if (ncl > 1) why = why ", across layers " cl
        if (why != "") violation("circle of " size " files" why ": " members)
    }
    if (mode == "check") {
        for (i = 1; i <= nv; i++) print viol[i] | "sort -t: -k1,1 -k2,2n -k3"
        close("sort -t: -k1,1 -k2,2n -k3")
        for (i = 1; i <= nn; i++) print "layers.sh: note: " notes[i] > "/dev/stderr"
        if (nv) printf "layers.sh: %d violations in %d files of %s/, %d edges, %d circles\n", nv, nf, root, ne, nc > "/dev/stderr"
        else printf "layers.sh: no violation in %d files of %s/ (%d includes, calls and uses; %d circles)\n", nf, root, ne, nc > "/dev/stderr"
        exit nv ? 1 : 0
    }
    if (mode == "table") {
        print "| level | " (np ? "layer" : "folder") " | files (lines) | uses below | uses above or beside (violations) |"
        print "|---:|---|---|---|---|"
        total = 0
        for (l = 1; l <= nl; l++) {
            L = ldir[l]; fl = ""
            for (i = 1; i <= nf; i++) if (layer[file[i]] == L) {
                fl = fl (fl == "" ? "" : ", ") "`" base(file[i]) "` " lines[file[i]]
                total += lines[file[i]]
            }
            below = ""; against = ""
            for (m = 1; m <= nl; m++) {
                M = ldir[m]; if (M == L) continue
                used = ""; split("", got)
                for (e = 1; e <= ne; e++)
                    if (layer[es[e]] == L && layer[ed[e]] == M && !(ed[e] in got)) got[ed[e]] = 1
                for (i = 1; i <= nf; i++) if (file[i] in got) used = used (used == "" ? "" : ", ") "`" base(file[i]) "`"
                if (used == "") continue
                used = "`" shown(M) "`: " used
                if (lvl[M] < lvl[L]) below = below (below == "" ? "" : "; ") used
                else against = against (against == "" ? "" : "; ") used
            }
            printf "| %d | `%s` | %s | %s | %s |\n", lvl[L], shown(L), (fl == "" ? "—" : fl), \
                (below == "" ? "—" : below), (against == "" ? "—" : against)
        }
        print ""
        printf "%d files, %d lines. ", nf, total
        if (!nc) print "Circles of files (through includes, calls and uses): none."
        else {
            print "Circles of files (through includes, calls and uses):"
            for (c = 1; c <= nc; c++) {
                m = cmem[c]; gsub(root "/", "", m); gsub(/, /, "`, `", m)
                printf "- %d files (%s): `%s`\n", csize[c], clayers[c], m
            }
        }
        exit 0
    }
    # report
    print "== layers, top to bottom (level: folders)"
    for (l = 1; l <= nl; l++) printf "%d: %s\n", lvl[ldir[l]], ldir[l]
    print ""; print "== files (layer, lines)"
    for (i = 1; i <= nf; i++)
        printf "%s  %s  %d\n", file[i], (layer[file[i]] == "" ? "(none)" : layer[file[i]]), lines[file[i]]
    print ""; print "== includes, calls and uses, by file [the line that names it; -: none does, e.g. a macro]"
    for (i = 1; i <= nf; i++) for (e = 1; e <= ne; e++) if (es[e] == file[i]) {
        r = rel(es[e], ed[e])
        printf "%s: %s %s of %s  [%s]%s\n", es[e], ek[e], en[e], ed[e], el[e], \
            (r == "" ? "" : "  VIOLATION: layer " layer[ed[e]] " " r " layer " layer[es[e]])
    }
    print ""; printf "== circles (%d)\n", nc
    for (c = 1; c <= nc; c++) {
        printf "%d files (%s): %s\n", csize[c], clayers[c], cmem[c]
        i = cfirst[c]
        for (e = 1; e <= ne; e++)
            if ((idx[es[e]] in comp) && comp[idx[es[e]]] == i && (idx[ed[e]] in comp) && comp[idx[ed[e]]] == i)
                printf "  %s -> %s (%s %s)\n", es[e], ed[e], ek[e], en[e]
    }
    print ""; printf "== notes (%d)\n", nn
    for (i = 1; i <= nn; i++) print notes[i]
    print ""; printf "== violations (%d)\n", nv
    for (i = 1; i <= nv; i++) print viol[i] | "sort -t: -k1,1 -k2,2n -k3"
    close("sort -t: -k1,1 -k2,2n -k3")
    exit 0
}' "$tmp/facts.$2"
}

# The tables of every tree: the shim's, then the tools'.
tables() {
    for t in $trees; do
        if [ "$t" = tools ]; then
            echo
            echo "The tools' layers (\`tools/layers.txt\`: layers of file patterns, the shim's \`model/\` and the headers they share below them):"
            echo
        fi
        analyse table "$t" || return 2
    done
}

case $mode in
check)
    rc=0
    for t in $trees; do analyse check "$t" || rc=1; done
    exit $rc ;;
report) for t in $trees; do echo "==== $t/"; analyse report "$t"; done ;;
table) tables ;;
check-doc | write-doc)
    tables >"$tmp/table" || exit 2
    grep -q '^<!-- layers:begin -->$' "$doc" && grep -q '^<!-- layers:end -->$' "$doc" ||
        die "$doc has no <!-- layers:begin --> and <!-- layers:end --> lines"
    awk '/^<!-- layers:end -->$/ { f = 0 } f { print } /^<!-- layers:begin -->$/ { f = 1 }' "$doc" >"$tmp/doc"
    if [ "$mode" = check-doc ]; then
        cmp -s "$tmp/table" "$tmp/doc" && exit 0
        echo "$doc: the layers table is not what the code shows now (- doc, + code);" \
            "run scripts/layers.sh --write-doc $doc" >&2
        diff -u "$tmp/doc" "$tmp/table" | sed 1,2d
        exit 1
    fi
    awk -v t="$tmp/table" '/^<!-- layers:end -->$/ { f = 0 } !f { print }
        /^<!-- layers:begin -->$/ { f = 1; while ((getline l < t) > 0) print l }' "$doc" >"$tmp/new" &&
        cat "$tmp/new" >"$doc" ;;
esac
