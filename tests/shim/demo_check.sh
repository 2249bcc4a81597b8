#!/bin/sh
# demo_check.sh SOURCE_DIR BUILD_DIR: scripts/demo.sh prints each command it
# runs (the CPU driver's LD_LIBRARY_PATH in them where there is no GPU) and
# ends with the line to run on one's own program, which works as printed.
set -u
src=$1 build=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "demo_check.sh: $*" >&2; cat "$out" >&2; exit 1; }
(cd "$src" && DEMO_BUILT=1 BUILD=$build bash scripts/demo.sh 50) >"$out" 2>&1 || fail "the demo failed"
grep -q "^\$ .*$build/apps/heat .* 50$" "$out" || fail "the run without reprise is not shown"
grep -q "^\$ .*$build/bin/reprise .* -- $build/apps/heat .* 50$" "$out" || fail "the run with reprise is not shown"
grep -q "^\$ $build/bin/reprise report " "$out" || fail "the report's command is not shown"
last=$(grep -A2 "^== now try it on your own program" "$out" | sed -n 2p)
[ -n "$last" ] || fail "no line to run on one's own program"
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  echo "$last" | grep -q "^  LD_LIBRARY_PATH=/.*/cpudriver " || fail "the line does not say how to reach the CPU driver"
fi
# The line, with the demo's program as one's own: it runs, and replays.
cmd=$(echo "$last" | sed "s|./your_program args...|$build/apps/heat $build/kernels/libtestkernels.so 50|; s|stats.json|$out.json|")
sh -c "$cmd" >/dev/null 2>"$out.err" || { cat "$out.err" >&2; rm -f "$out.json" "$out.err"; fail "the line failed: $cmd"; }
grep -q "^reprise: .* replayed" "$out.err" || { rm -f "$out.json" "$out.err"; fail "the line's run printed no summary"; }
rm -f "$out.json" "$out.err"
exit 0
