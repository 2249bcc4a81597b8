#!/bin/sh
# allocfaults.sh - recording under failed allocations: the program runs with
# the shim enabled and REPRISE_TRACE set, once to count the shim's
# allocations (the recorder's included: shim/core/alloc.c is its seam too),
# then once per allocation N = 1, 2, ... with that one failing
# (REPRISE_FAULT_ALLOC=N) and once with every allocation from N on failing
# (N+). Every run must print exactly what the program prints without the
# shim; its trace must read to its end (`reprise trace info` exits 0: what
# the recorder could not keep, a handle's id or a function's layout, it
# records again or without, never a record a reader rejects); and replaying
# it (`reprise replay`, no shim) must end with exit 0 or, for a trace that
# lost what a call needs, 1 after one line, never a crash or a hang.
# usage: allocfaults.sh BUILD_DIR STRIDE APP ARGS...   (STRIDE: every
#        STRIDE-th N only; the last N is always swept)
set -u
build=$1 stride=$2; shift 2
drv=$build/cpudriver
cmd=$build/bin/reprise
work=${TMPDIR:-/tmp}/reprise-tralloc.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
shimrun() { # shimrun SPEC APP ARGS...: one recorded run with REPRISE_FAULT_ALLOC=SPEC
    spec=$1; shift
    rm -f "$work/t.trace"
    # shellcheck disable=SC2086
    timeout 60 env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_TRACE="$work/t.trace" \
        REPRISE_FAULT_ALLOC="$spec" $asan "$@" >"$work/f.out" 2>"$work/f.err"
}

env LD_LIBRARY_PATH="$drv" "$@" >"$work/plain.out" 2>&1 ||
    { echo "FAIL: the program fails without the shim"; cat "$work/plain.out"; exit 1; }
shimrun 0 "$@"
total=$(sed -n 's/^reprise: \([0-9]*\) allocations, .*/\1/p' "$work/f.err" | tail -n 1)
[ -n "$total" ] || { echo "FAIL: the counting run said nothing"; cat "$work/f.err"; exit 1; }
runs=0 bad=0 refused=0
n=1
while [ "$n" -le "$total" ]; do
    for form in "" "+"; do
        shimrun "$n$form" "$@"
        rc=$?
        runs=$((runs + 1))
        why=
        if [ "$rc" -ne 0 ]; then
            why="exit $rc"
        elif ! cmp -s "$work/plain.out" "$work/f.out"; then
            why="output differs"
        elif [ ! -s "$work/t.trace" ]; then
            : # the trace could not open (its first allocations): nothing recorded, said so
        elif ! "$cmd" trace info "$work/t.trace" >"$work/i.out" 2>"$work/i.err"; then
            why="trace info: $(head -n 1 "$work/i.err")"
        else
            # shellcheck disable=SC2086
            timeout 60 env LD_LIBRARY_PATH="$drv" $asan "$cmd" replay "$work/t.trace" \
                --driver "$drv/libcuda.so.1" >"$work/r.out" 2>"$work/r.err"
            r=$?
            if [ "$r" -eq 1 ] && [ "$(wc -l <"$work/r.err")" -eq 1 ]; then
                refused=$((refused + 1))
            elif [ "$r" -ne 0 ]; then
                why="replay exit $r: $(head -n 2 "$work/r.err" | tr '\n' ' ')"
            fi
        fi
        if [ -n "$why" ]; then
            bad=$((bad + 1))
            echo "FAIL at REPRISE_FAULT_ALLOC=$n$form: $why"
            head -n 5 "$work/f.err"
        fi
    done
    if [ "$n" -lt "$total" ] && [ $((n + stride)) -gt "$total" ]; then
        n=$total
    else
        n=$((n + stride))
    fi
done
echo "recording under failed allocations: $*: $total allocations, $runs runs, $refused replays refused with one line, $bad failures"
[ "$bad" -eq 0 ]
