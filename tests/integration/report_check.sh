#!/bin/sh
# report_check.sh - `reprise report`: two ranks' stats files give one line
# per rank (named by host:pid, rank and command line) and the merged line,
# the reasons in sentences, and --html writes a page that a real parser
# accepts as HTML, whose SVG charts parse as XML (the page is XHTML, so
# xmllint parses it, inline SVG included, as XML; page_check.sh looks at it
# in a browser). A file that is not a stats file, or of another schema
# version, is refused with a line saying which.
# usage: report_check.sh BUILD_DIR MODULE
set -u
build=$1 mod=$2
work=${TMPDIR:-/tmp}/reprise-report.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
for r in 0 1; do
    # shellcheck disable=SC2086
    env RANK=$r LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$work/stats-%r.json" $asan \
        "$build/apps/stepper" "$mod" $((60 + 20 * r)) 1 >/dev/null || { echo "FAIL: stepper"; exit 1; }
done
[ -f "$work/stats-0.json" ] && [ -f "$work/stats-1.json" ] || { echo "FAIL: %r gave no per-rank files"; ls "$work"; exit 1; }
out=$("$build/bin/reprise" report "$work/stats-0.json" "$work/stats-1.json" --html "$work/r.html") ||
    { echo "FAIL: reprise report exited $?"; exit 1; }
echo "$out"
for want in '^[^ ]+:[0-9]+ rank 0 \([^ ]*apps/stepper [^)]*\): ' \
            '^[^ ]+:[0-9]+ rank 1 \([^ ]*apps/stepper [^)]*\): ' \
            '^all: [0-9,]+ capturable ops, [0-9,]+ replayed' '^[0-9,]+ ops \([0-9.]+%\) ran eagerly ' \
            'op 0 \(rng_fill\) parameter 3'; do
    echo "$out" | grep -Eq "$want" || { echo "FAIL: no line matching '$want'"; exit 1; }
done
# Processes without a rank are told apart by host:pid (they all had rank
# "0" before), in the text and on the page.
for p in a b; do
    # shellcheck disable=SC2086
    env -u RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID LD_LIBRARY_PATH="$drv" \
        LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 REPRISE_DRIVER="$drv/libcuda.so.1" \
        REPRISE_STATS="$work/norank-$p.json" $asan \
        "$build/apps/stepper" "$mod" 40 1 >/dev/null || { echo "FAIL: stepper"; exit 1; }
done
out2=$("$build/bin/reprise" report "$work/norank-a.json" "$work/norank-b.json" --html "$work/n.html") ||
    { echo "FAIL: reprise report exited $?"; exit 1; }
host=$(sed -n 's/^  "host": "\(.*\)",$/\1/p' "$work/norank-a.json")
for p in a b; do
    pid=$(sed -n 's/^  "pid": \([0-9]*\),$/\1/p' "$work/norank-$p.json")
    echo "$out2" | grep -q "^$host:$pid (" || { echo "$out2"; echo "FAIL: no line for $host:$pid"; exit 1; }
    grep -q "<td class=\"l\">$host:$pid</td>" "$work/n.html" || { echo "FAIL: the page does not name $host:$pid"; exit 1; }
done
echo "$out2" | grep -q ' rank ' && { echo "$out2"; echo "FAIL: a rank shown where none was set"; exit 1; }
# A file that is not a report is refused with a clear line and status 1.
echo '{"version": 1, "engine": [' >"$work/bad.json"
err=$("$build/bin/reprise" report "$work/bad.json" 2>&1) && { echo "FAIL: a bad file was accepted"; exit 1; }
echo "$err" | grep -q "not a reprise stats file" || { echo "FAIL: unclear error: $err"; exit 1; }
# JSON, but not a stats file: said so, not "stats schema version 0".
echo '{"a": 1}' >"$work/other.json"
err=$("$build/bin/reprise" report "$work/other.json" 2>&1) && { echo "FAIL: another JSON file was accepted"; exit 1; }
echo "$err" | grep -q 'other.json: not a reprise stats file (it has no "version" key)$' ||
    { echo "FAIL: unclear error for JSON that is no stats file: $err"; exit 1; }
echo "$err" | grep -q 'schema version' && { echo "FAIL: a schema version named for a file that has none: $err"; exit 1; }
echo '{"version": 2, "reprise_version": "9.0.0"}' >"$work/newer.json"
err=$("$build/bin/reprise" report "$work/newer.json" 2>&1) && { echo "FAIL: schema version 2 was accepted"; exit 1; }
echo "$err" | grep -q 'newer.json: stats schema version 2, this reprise reads version 1' ||
    { echo "FAIL: unclear error for another schema version: $err"; exit 1; }
# The page: valid HTML, and every SVG valid XML.
if command -v xmllint >/dev/null; then
    xmllint --noout "$work/r.html" 2>"$work/html.err" || { cat "$work/html.err"; echo "FAIL: the page does not parse"; exit 1; }
    [ -s "$work/html.err" ] && { cat "$work/html.err"; echo "FAIL: parser warnings"; exit 1; }
    grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$work/r.html" || { echo "FAIL: no SVG chart"; exit 1; }
    n=0
    sed -n 's/.*\(<svg .*<\/svg>\).*/\1/p' "$work/r.html" >"$work/inline.svg"
    awk '/<svg /{p=1} p{print} /<\/svg>/{if(p){exit}}' "$work/r.html" >"$work/first.svg"
    for svg in "$work/first.svg"; do
        xmllint --noout "$svg" || { echo "FAIL: SVG is not XML"; exit 1; }
        n=$((n + 1))
    done
    while IFS= read -r line; do
        printf '%s\n' "$line" >"$work/one.svg"
        xmllint --noout "$work/one.svg" || { echo "FAIL: an inline SVG is not XML"; exit 1; }
        n=$((n + 1))
    done <"$work/inline.svg"
    echo "ok: HTML and $n SVG charts parse"
else
    echo "skipped: xmllint is not installed (libxml2-utils)"
fi
exit 0
