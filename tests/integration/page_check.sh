#!/bin/sh
# page_check.sh - `reprise report --html` as a reader sees it, in a real
# headless browser (Debian's chromium): three pages (three processes merged,
# two of them at 0%; a process where nothing was captured; the demo's heat
# alone) are opened at 1200 pixels with a script appended that reports what
# was laid out: the visible text (the sentences, the command lines, the
# columns of the text report, each process's advice kept, no "1 graphs"),
# the smallest type on the page, any element wider than the window, empty
# tables; and a screenshot whose size is checked and whose content is not
# blank (larger than a blank page's by far).
# Without chromium: in CI (CI=true) a failure, elsewhere skipped (exit 77)
# with one line. scripts/test.sh installs it.
# usage: page_check.sh BUILD_DIR MODULE
set -u
build=$1 mod=$2
work=${TMPDIR:-/tmp}/reprise-page.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
browser=
for c in chromium chromium-browser google-chrome; do
    command -v "$c" >/dev/null && { browser=$c; break; }
done
if [ -z "$browser" ]; then
    [ "${CI:-}" = true ] && fail "no chromium in CI: scripts/test.sh installs it (apt-get install chromium)"
    echo "skipped: no chromium installed (apt-get install chromium) to look at the page"
    exit 77
fi
drv=$build/cpudriver
run() { # run NAME APP ARGS...: under the shim, stats to NAME.json ($EXTRA: more settings)
    name=$1; shift
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$work/$name.json" ${EXTRA:-} \
        "$build/apps/$@" >/dev/null || fail "$1 exited $?"
}
run heat heat "$mod" 30
run grid phases "$mod" 60 4 grid
# Too short for its warmup: 0%, with advice of its own that the sum hides.
EXTRA=REPRISE_WARMUP=4 run short heat "$mod" 3
"$build/bin/reprise" report "$work/heat.json" "$work/short.json" "$work/grid.json" \
    --html "$work/merged.html" >/dev/null ||
    fail "reprise report (merged) exited $?"
"$build/bin/reprise" report "$work/grid.json" --html "$work/none.html" >/dev/null ||
    fail "reprise report (nothing captured) exited $?"
"$build/bin/reprise" report "$work/heat.json" --html "$work/heat.html" >/dev/null ||
    fail "reprise report (heat) exited $?"

# What the page lays out, measured by the browser: one line per fact.
cat >"$work/look.js" <<'EOF'
(function () {
  var out = [];
  var text = document.body.innerText;
  out.push('TEXT ' + text.replace(/\s+/g, ' '));
  var min = 100, minAt = '';
  var all = document.body.querySelectorAll('*');
  for (var i = 0; i < all.length; i++) {
    var e = all[i];
    var own = false;
    for (var k = 0; k < e.childNodes.length; k++)
      if (e.childNodes[k].nodeType === 3 && e.childNodes[k].textContent.trim()) own = true;
    if (!own || !e.getClientRects().length) continue;
    var px = parseFloat(getComputedStyle(e).fontSize);
    if (px < min) { min = px; minAt = e.tagName + ' "' + e.textContent.trim().slice(0, 30) + '"'; }
  }
  out.push('MINFONT ' + min + ' ' + minAt);
  var wide = [];
  for (var i = 0; i < all.length; i++) {
    var r = all[i].getBoundingClientRect();
    if (r.right > window.innerWidth + 1) wide.push(all[i].tagName + ':' + Math.round(r.right));
  }
  out.push('OVERFLOW ' + (document.documentElement.scrollWidth > window.innerWidth ? 'page ' : '') + wide.length + ' ' + wide.slice(0, 5).join(' '));
  var tables = document.querySelectorAll('table'), empty = 0;
  for (var i = 0; i < tables.length; i++) if (tables[i].rows.length < 2) empty++;
  out.push('TABLES ' + tables.length + ' empty ' + empty);
  var bar = document.querySelector('svg');
  out.push('BAR ' + (bar ? Math.round(bar.getBoundingClientRect().width) : 0));
  var heads = [];
  document.querySelectorAll('th').forEach(function (h) { heads.push(h.textContent); });
  out.push('HEADS ' + heads.join('|'));
  var pre = document.createElement('pre');
  pre.id = 'rp-look';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
EOF
look() { # look PAGE: the facts of PAGE into PAGE.look
    sed 's|</body>|<script src="look.js"></script></body>|' "$work/$1.html" >"$work/$1-look.html"
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1200,1000 --virtual-time-budget=3000 --dump-dom \
        "file://$work/$1-look.html" 2>/dev/null |
        sed -n '/<pre id="rp-look">/,/<\/pre>/p' | sed 's/<[^>]*>//g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g; s/&quot;/"/g' \
        >"$work/$1.look"
    grep -q '^TEXT ' "$work/$1.look" || fail "$browser laid out nothing for $1.html"
}
has() { # has PAGE ERE WHY: the page's visible text matches ERE
    grep '^TEXT ' "$work/$1.look" | grep -Eq -- "$2" || { sed -n 's/^TEXT //p' "$work/$1.look" | fold -w 160; fail "$1: $3"; }
}
hasnt() {
    grep '^TEXT ' "$work/$1.look" | grep -Eq -- "$2" && { sed -n 's/^TEXT //p' "$work/$1.look" | fold -w 160; fail "$1: $3"; }
    return 0
}
smallest=100
for page in merged none heat; do
    look $page
    min=$(sed -n 's/^MINFONT \([0-9.]*\).*/\1/p' "$work/$page.look")
    awk -v m="$min" 'BEGIN { exit !(m >= 13) }' || fail "$page: type as small as ${min}px ($(sed -n 's/^MINFONT //p' "$work/$page.look"))"
    smallest=$(awk -v a="$smallest" -v b="$min" 'BEGIN { print (b < a ? b : a) }')
    grep -q '^OVERFLOW 0 ' "$work/$page.look" || fail "$page: wider than the window: $(sed -n 's/^OVERFLOW //p' "$work/$page.look")"
    grep -q '^TABLES [0-9]* empty 0$' "$work/$page.look" || fail "$page: an empty table"
    bar=$(sed -n 's/^BAR //p' "$work/$page.look")
    [ "${bar:-0}" -ge 500 ] || fail "$page: the chart is ${bar}px wide"
    hasnt $page '(^|[^0-9,.])1 (graphs|processes|ops|updates|graph launches)([^a-z]|$)' "a plural after 1"
    hasnt $page 'docs/stats.md' "a source path an installed copy lacks"
done
# Three processes merged: command lines, the columns of the text report,
# the reasons in sentences and with their meaning, each process's advice.
has merged '[^ ]*apps/heat [^ ]*libtestkernels.so 30 ' "no command line for heat"
has merged '[^ ]*apps/phases [^ ]*libtestkernels.so 60 4 grid ' "no command line for phases"
for col in occurrences replays diverged eager updates 'updated before each replay' 'last divergence'; do
    grep '^HEADS ' "$work/merged.look" | grep -q "|$col|\\||$col\$" ||
        fail "merged: no column '$col' ($(sed -n 's/^HEADS //p' "$work/merged.look"))"
done
has merged 'Why the rest ran eagerly' "no reasons section"
has merged 'the width of op 1 \(a memset\) grows every time' "the grid loop's cause is not said"
has merged 'eager, warming_up: [0-9]+ ops \([0-9.]+%\): their run of ops had not yet come back' "the legend does not say what warming_up means"
has merged 'with one width \(its largest\)' "the grid process's advice is not on the page"
has merged 'Advice for heat [^ ]+:[0-9]+ nothing was replayed: 1 run of ops came back, but not REPRISE_WARMUP \(4\) times' \
    "the advice of the process at 0% was dropped in the merge"
has merged 'What it saved driver launches [0-9,]+ -> [0-9,]+' "no launches saved"
# Nothing captured: no sequences table, no empty table, the cause in words.
has none 'ran eagerly because the width of op 1' "the cause is not in words"
hasnt none 'Sequences' "a sequences section with nothing captured"
grep -q '^TABLES 0 ' "$work/none.look" || fail "none: a table where nothing was captured"
hasnt none 'lower --warmup|longer run' "warmup advice where the structure changes every time"
# heat: one graph, one process, the demo's numbers.
has heat '1 graph captured' "'1 graph captured'"
has heat '1 process\.' "'1 process'"
has heat 'Process [^ ]+:[0-9]+: [^ ]*apps/heat [^ ]*libtestkernels.so 30, ' "the process's command line"

# A screenshot: the window's size, and content (a blank page's PNG is a
# few KB; the report's text and bars make it many times that).
printf '<!DOCTYPE html><html><body></body></html>\n' >"$work/blank.html"
for p in merged blank; do
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1200,900 --screenshot="$work/$p.png" "file://$work/$p.html" >/dev/null 2>&1
    [ -s "$work/$p.png" ] || fail "$browser took no screenshot of $p.html"
done
[ "$(od -An -tx1 -N8 "$work/merged.png" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"
wh=$(od -An -tu1 -j16 -N8 "$work/merged.png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
[ "$wh" = 1200x900 ] || fail "the screenshot is $wh, not 1200x900"
big=$(wc -c <"$work/merged.png") blank=$(wc -c <"$work/blank.png")
[ "$big" -gt $((blank * 5)) ] || fail "the screenshot looks blank ($big bytes; a blank page $blank)"
[ -n "${REPORT_SCREENSHOT:-}" ] && cp "$work/merged.png" "$REPORT_SCREENSHOT"
echo "ok: three pages laid out by $browser (type >= ${smallest}px, no overflow, no empty table); screenshot $wh, $big bytes (blank: $blank)"
