#!/bin/sh
# full.sh - the full fault sweep: every program, every driver call the shim
# makes on its own, N = 1, 2, ... until no fault fires (transient and
# persistent). Prints one summary line per program, then the totals.
# usage: tests/faults/full.sh [BUILD_DIR]
set -u
build=${1:-build}
here=$(dirname "$0")
mod=$build/kernels/libtestkernels.so
start=$(date +%s)
status=0
for run in "heat 30" "stepper 40 1" "phases 60 20" "pingpong 40 2 3" "handoff 20" \
           "threads 20 3 steady" "forkjoin 20 nested" "runtime_like 30" "selfcapture 10" "pageable 10" "libkernel 20"; do
    set -- $run
    app=$1; shift
    out=$(sh "$here/sweep.sh" "$build" 0 "$build/apps/$app" "$mod" "$@") || status=1
    echo "$out" | grep -E '^FAIL' | head -n 5
    echo "$out" | tail -n 1
done
echo "full fault sweep: $(date -u +%Y-%m-%d), $(( $(date +%s) - start )) s, exit $status"
exit $status
