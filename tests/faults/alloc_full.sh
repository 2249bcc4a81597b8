#!/bin/sh
# alloc_full.sh - the full allocation sweep: every run of the integration
# suite (each "app|args|variant|env" line of tests/integration/CMakeLists.txt,
# with its environment), every allocation of the shim failed once and from
# there on (alloc_sweep.sh, stride 1). Prints one summary line per run, every
# failure, then the totals.
# usage: tests/faults/alloc_full.sh [BUILD_DIR] [FILTER_REGEX]
set -u
build=${1:-build} filter=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
mod=$build/kernels/libtestkernels.so
start=$(date +%s)
status=0 progs=0 allocs=0 runs=0 fails=0
lines=$(sed -n 's/^  "\([a-z_]*|[^"]*\)"$/\1/p; s/^set(_runs$//' "$here/../integration/CMakeLists.txt" |
        grep -E "$filter")
tmp=$(mktemp)
echo "$lines" >"$tmp"
while IFS='|' read -r app args variant envs; do
    [ -n "$app" ] || continue
    # shellcheck disable=SC2086
    out=$(env $envs sh "$here/alloc_sweep.sh" "$build" 1 "$build/apps/$app" "$mod" $args </dev/null) ||
        status=1
    echo "$out" | grep -E '^FAIL' | head -n 5
    last=$(echo "$out" | tail -n 1)
    echo "$last${envs:+ ($envs)}"
    # shellcheck disable=SC2046
    set -- $(echo "$last" | sed -n 's/.* : \([0-9]*\) allocations, \([0-9]*\) runs, [0-9]* faults fired, \([0-9]*\) failures$/\1 \2 \3/p')
    progs=$((progs + 1)); allocs=$((allocs + ${1:-0})); runs=$((runs + ${2:-0})); fails=$((fails + ${3:-1}))
done <"$tmp"
rm -f "$tmp"
echo "full allocation sweep: $(date -u +%Y-%m-%d), $progs runs of test programs, $allocs allocations," \
     "$runs shim runs, $fails failures, $(( $(date +%s) - start )) s, exit $status"
exit $status
