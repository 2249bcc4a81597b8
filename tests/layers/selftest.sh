#!/bin/sh
# selftest.sh - tests of scripts/layers.sh on fake trees: a source tree with
# a shim/ of three levels (top; mid/a and mid/b, siblings; low) and a
# tools/ of three layers of file patterns (cmd; lib; and below them the
# shim's low/), and a build tree laid out as CMake lays out an object
# library and an executable (objects, dependency files and a
# CMakeCache.txt), compiled here.
#   selftest.sh CC violations   every kind of violation is reported, exactly
#                               those, and the check exits 1
#   selftest.sh CC clean        a clean tree passes; its table goes into a doc
#                               and is checked there; stale objects stop it
set -u
cc=$1 case=$2
here=$(cd "$(dirname "$0")" && pwd)
layers="sh $here/../../scripts/layers.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers-selftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src build=$tmp/build
fail() { echo "selftest.sh $case: $*" >&2; exit 1; }
put() { mkdir -p "$src/$(dirname "$1")" && cat >"$src/$1"; } # put PATH <TEXT
lineof() { grep -n -F "$2" "$src/$1" | sed -n '1s/:.*//p'; }   # lineof PATH TEXT

# The clean tree: calls, uses and includes downward only, a header's inline
# function calling downward, a .c and its .h in a circle of two, a circle of
# three files in one folder, a file of exactly 700 lines, includes of a
# system header and of a header outside shim/.
put shim/layers.txt <<'EOF'
# fake layers
top
mid/a mid/b   # siblings
low
EOF
put include/ext.h <<'EOF'
#define EXT 1
EOF
put shim/top/top.c <<'EOF'
#include <stddef.h>
#include "ext.h"
#include "mid_a.h"
#include "low.h"
int top_data;
int top_fn(void);
int top_fn(void) { return mid_a_fn() + mid_a_inline() + low_fn() + EXT; }
EOF
put shim/mid/a/mid_a.h <<'EOF'
#pragma once
#include "low.h"
int mid_a_fn(void);
int mid_a_helper(void);
static inline int mid_a_inline(void) { return low_fn() + mid_a_helper(); }
EOF
put shim/mid/a/mid_a.c <<'EOF'
#include "mid_a.h"
int mid_a_fn(void) { return low_fn(); }
int mid_a_helper(void) { return 1; }
EOF
put shim/mid/b/mid_b.c <<'EOF'
#include "low.h"
int mid_b_fn(void);
int mid_b_fn(void) { return low_fn() + low_data; }
EOF
put shim/low/low.h <<'EOF'
#pragma once
extern int low_data;
int low_fn(void);
int low_fn2(void);
static inline int low_twice(void) { return low_fn2() * 2; }
EOF
put shim/low/low.c <<'EOF'
#include "low.h"
int low_data = 1;
int low_fn(void) { return low_data; }
int low_fn2(void) { return low_twice() + low_data; }
EOF
put shim/low/c1.c <<'EOF'
int c1(int n); int c2(int n);
int c1(int n) { return n ? c2(n - 1) : 0; }
EOF
put shim/low/c2.c <<'EOF'
int c2(int n); int c3(int n);
int c2(int n) { return n ? c3(n - 1) : 0; }
EOF
put shim/low/c3.c <<'EOF'
int c3(int n); int c1(int n);
int c3(int n) { return n ? c1(n - 1) : 0; }
EOF
awk 'BEGIN { print "int long_fn(void);"; print "int long_fn(void) { return 0; }"
             for (i = 3; i <= 700; i++) print "/* line */" }' | put shim/low/long.c
# The tools: layers of file patterns, the shim's low/ at the bottom.
put tools/layers.txt <<'EOF'
# fake tools layers
cmd=cmd.c
lib=lib.c,lib.h,lib_*.c
base=shim/low/low.c,shim/low/low.h
EOF
put tools/cmd.c <<'EOF'
#include "lib.h"
int main(void);
int main(void) { return lib_fn(); }
EOF
put tools/lib.h <<'EOF'
#pragma once
#include "low.h"
int lib_fn(void);
EOF
put tools/lib.c <<'EOF'
#include "lib.h"
int lib_fn(void) { return low_fn(); }
EOF

if [ "$case" = violations ]; then
    put shim/low/bad_inc.c <<'EOF'
/* includes a higher layer's header */
#include "mid_a.h"
int bad_inc(void);
int bad_inc(void) { return 0; }
EOF
    put shim/low/bad_call.c <<'EOF'
/* calls a function and uses data of a higher layer: top.c calls back */
int top_fn(void);
extern int top_data;
int bad_call(void);
int bad_call(void)
{
    int n = top_fn();
    return n + top_data;
}
EOF
    # top.c calls bad_call: a circle of two files across layers
    printf 'int bad_call(void);\nint top_calls_down(void);\nint top_calls_down(void) { return bad_call(); }\n' >>"$src/shim/top/top.c"
    put shim/mid/b/sibling.c <<'EOF'
/* calls its sibling */
int mid_a_fn(void);
int sibling(void);
int sibling(void) { return mid_a_fn(); }
EOF
    put shim/low/up.h <<'EOF'
/* a header whose inline function (always inlined, as the fast paths are) calls up */
int top_fn(void);
static inline __attribute__((always_inline)) int up_inline(void) { return top_fn(); }
EOF
    for i in 1 2 3 4; do
        n=$((i % 4 + 1))
        put shim/mid/b/r$i.c <<EOF
int r$i(int k); int r$n(int k);
int r$i(int k) { return k ? r$n(k - 1) : 0; }
EOF
    done
    awk 'BEGIN { print "int long2(void);"; print "int long2(void) { return 0; }"
                 for (i = 3; i <= 701; i++) print "/* line */" }' | put shim/top/long2.c
    put shim/stray/stray.c <<'EOF'
int stray(void);
int stray(void) { return 0; }
EOF
    put shim/top/dup.h <<'EOF'
EOF
    put shim/low/dup.h <<'EOF'
EOF
    put shim/mid/a/dupuser.c <<'EOF'
#include "dup.h"
int dupuser(void);
int dupuser(void) { return 0; }
EOF
    put tools/lib_up.c <<'EOF'
/* calls the command above it, and includes a shim header of no tools layer */
#include "mid_a.h"
int cmd_helper(void);
int lib_up(void);
int lib_up(void) { return cmd_helper() + mid_a_fn(); }
EOF
    printf 'int cmd_helper(void);\nint cmd_helper(void) { return 0; }\n' >>"$src/tools/cmd.c"
    put tools/stray_tool.c <<'EOF'
int stray_tool(void);
int stray_tool(void) { return 0; }
EOF
fi

# The build tree, as CMake lays it out.
obj=$build/shim/CMakeFiles/fake.dir
incs="$src/include"
for d in top mid/a mid/b low stray; do incs="$incs;$src/shim/$d"; done
mkdir -p "$build" || exit 1
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\nCMAKE_C_COMPILER:FILEPATH=%s\nREPRISE_SHIM_INCLUDES:INTERNAL=%s\n' \
    "$src" "$cc" "$incs" >"$build/CMakeCache.txt"
iflags=$(echo "$incs" | tr ';' '\n' | sed 's/^/-I/' | tr '\n' ' ')
for c in $(cd "$src/shim" && find . -name '*.c' | sed 's|^\./||'); do
    mkdir -p "$(dirname "$obj/$c")"
    # shellcheck disable=SC2086
    "$cc" -std=c11 -g -O0 -Wall $iflags -MD -MF "$obj/$c.o.d" -c -o "$obj/$c.o" "$src/shim/$c" ||
        fail "the fake tree does not compile ($c)"
done
# The tools' executable: its own files, and the shim's low.c compiled in
# (CMake names an object of another folder CMakeFiles/X.dir/__/PATH).
tobj=$build/tools/CMakeFiles/faketool.dir
mkdir -p "$tobj/__/shim/low"
for c in $(cd "$src/tools" && find . -name '*.c' | sed 's|^\./||') __/shim/low/low.c; do
    in=$src/tools/$c
    [ "$c" = __/shim/low/low.c ] && in=$src/shim/low/low.c
    # shellcheck disable=SC2086
    "$cc" -std=c11 -g -O0 -Wall -I"$src/tools" $iflags -MD -MF "$tobj/$c.o.d" -c -o "$tobj/$c.o" "$in" ||
        fail "the fake tools do not compile ($c)"
done

out=$tmp/out err=$tmp/err
$layers "$build" >"$out" 2>"$err"
rc=$?
if [ "$case" = violations ]; then
    [ $rc = 1 ] || { cat "$out" "$err" >&2; fail "the check exited $rc, not 1"; }
    cat >"$tmp/want" <<EOF
circle of 2 files, across layers top, low: shim/low/bad_call.c, shim/top/top.c
circle of 4 files, over 3: shim/mid/b/r1.c, shim/mid/b/r2.c, shim/mid/b/r3.c, shim/mid/b/r4.c
shim/low/bad_call.c:$(lineof shim/low/bad_call.c 'n = top_fn()'): calls top_fn of shim/top/top.c, layer top above layer low
shim/low/bad_call.c:$(lineof shim/low/bad_call.c 'n + top_data'): uses top_data of shim/top/top.c, layer top above layer low
shim/low/bad_inc.c:2: includes mid_a.h of shim/mid/a/mid_a.h, layer mid/a above layer low
shim/low/up.h:3: calls top_fn of shim/top/top.c, layer top above layer low
shim/mid/a/dupuser.c:1: includes dup.h, the name of 2 shim files
shim/mid/b/sibling.c:4: calls mid_a_fn of shim/mid/a/mid_a.c, layer mid/a beside layer mid/b
shim/stray/stray.c: in no layer (shim/stray/ is not in shim/layers.txt)
shim/top/long2.c: over 700 lines (701)
tools/lib_up.c:2: includes mid_a.h of shim/mid/a/mid_a.h, which no layer of tools/layers.txt holds
tools/lib_up.c:$(lineof tools/lib_up.c 'cmd_helper() +'): calls cmd_helper of tools/cmd.c, layer cmd above layer lib
tools/stray_tool.c: in no layer (no pattern of tools/layers.txt names it)
EOF
    diff -u "$tmp/want" "$out" >&2 || fail "not exactly the violations of the fake tree (- wanted, + reported)"
    grep -q "^layers.sh: 10 violations in [0-9]* files of shim/" "$err" || { cat "$err" >&2; fail "no summary of 10 violations in shim/"; }
    grep -q "^layers.sh: 3 violations in [0-9]* files of tools/" "$err" || { cat "$err" >&2; fail "no summary of 3 violations in tools/"; }
    $layers --report "$build" >"$out" 2>"$err" || fail "--report exited $?, not 0"
    grep -q '^== violations (10)$' "$out" || fail "--report does not count 10 violations in shim/"
    grep -q '^== violations (3)$' "$out" || fail "--report does not count 3 violations in tools/"
    grep -q "^shim/mid/a/mid_a.h: calls mid_a_helper of shim/mid/a/mid_a.c  \\[shim/mid/a/mid_a.h:$(lineof shim/mid/a/mid_a.h 'mid_a_helper()')\\]\$" "$out" ||
        fail "--report does not show the header's inline call"
    exit 0
fi

[ $rc = 0 ] || { cat "$out" "$err" >&2; fail "the clean tree fails the check (exit $rc)"; }
[ ! -s "$out" ] || { cat "$out" >&2; fail "the check printed violations for the clean tree"; }
$layers --report "$build" >"$out" 2>"$err" || fail "--report exited $?"
grep -q '^== circles (3)$' "$out" || { cat "$out" >&2; fail "--report does not find the three circles"; }
grep -q '^2 files (mid/a): shim/mid/a/mid_a.c, shim/mid/a/mid_a.h$' "$out" || fail "no circle of mid_a.c and mid_a.h"
grep -q '^2 files (low): shim/low/low.c, shim/low/low.h$' "$out" || fail "no circle of low.c and low.h"
grep -q '^3 files (low): shim/low/c1.c, shim/low/c2.c, shim/low/c3.c$' "$out" || fail "no circle of c1, c2, c3"
grep -q '^shim/low/low.h: calls low_fn2 ' "$out" || fail "a header is not charged with what its inline function calls"
grep -q '^shim/mid/a/mid_a.h: calls low_fn2 ' "$out" && fail "a header is charged with what the header it includes calls"
$layers --table "$build" >"$tmp/table" || fail "--table exited $?"
grep -q '^| 2 | `mid/a/` | `mid_a.c` 3, `mid_a.h` 5 | `low/`: `low.c`, `low.h` | — |$' "$tmp/table" ||
    { cat "$tmp/table" >&2; fail "the table's row of mid/a is not its files and what they use"; }
grep -q '^| 1 | `low/` | .*`long.c` 700' "$tmp/table" || fail "the table does not count long.c's 700 lines"
grep -q '^| 2 | `lib` | `lib.c` 2, `lib.h` 3 | `base`: `low.c`, `low.h` | — |$' "$tmp/table" ||
    { cat "$tmp/table" >&2; fail "the tools table's row of lib is not its files and what they use"; }
grep -q '^| 3 | `cmd` | `cmd.c` 3 | `lib`: `lib.c`, `lib.h` | — |$' "$tmp/table" ||
    { cat "$tmp/table" >&2; fail "the tools table's row of cmd is not its files and what they use"; }
# The doc: written between its markers, then checked; a changed table fails.
printf '# Doc\nbefore\n<!-- layers:begin -->\nold\n<!-- layers:end -->\nafter\n' >"$tmp/doc.md"
$layers --check-doc "$tmp/doc.md" "$build" >/dev/null 2>&1 && fail "--check-doc passes a stale doc"
$layers --write-doc "$tmp/doc.md" "$build" || fail "--write-doc exited $?"
$layers --check-doc "$tmp/doc.md" "$build" || fail "--check-doc fails the doc --write-doc wrote"
{ printf '# Doc\nbefore\n<!-- layers:begin -->\n'; cat "$tmp/table"; printf '<!-- layers:end -->\nafter\n'; } |
    cmp -s - "$tmp/doc.md" || fail "--write-doc changed more than the lines between the markers"
# Stale objects: a source edited after its object was built stops the check.
sleep 1
echo '/* edited */' >>"$src/shim/low/low.h"
$layers "$build" >"$out" 2>"$err"
rc=$?
[ $rc = 2 ] || fail "the check exited $rc on stale objects, not 2"
grep -q 'low.c.o is older than shim/low/low.h: build first' "$err" || { cat "$err" >&2; fail "no 'build first'"; }
exit 0
