#!/bin/sh
# alloc_sweep.sh - the shim's own allocations failed the SQLite way: the
# program runs once with REPRISE_FAULT_ALLOC=0 to count the allocations the
# shim makes (shim/core/alloc.c, the one seam every malloc/calloc/realloc of the
# shim goes through), then once per allocation N = 1, 2, ... with that one
# failing (REPRISE_FAULT_ALLOC=N), and once with every allocation from N on
# failing (N+). Every run must exit 0 within a timeout, print exactly what the
# program prints without the shim (no lost work, identical results), and say
# so in one line on stderr ("out of memory ... runs eagerly") when a fault
# fired; and the faults must be the ones asked for, counted from the shim's
# last line ("A allocations, F failed"): with N, F is 1 if A >= N (else 0);
# with N+, every allocation from the Nth on failed, F = A - N + 1 (no
# output can show a seam that fails fewer: issue 34, class g). Prints a
# summary line.
# usage: alloc_sweep.sh BUILD_DIR STRIDE APP ARGS...   (STRIDE: sweep every
#        STRIDE-th N only, 1 = every allocation; the last N is always swept)
set -u
build=$1 stride=$2; shift 2
drv=$build/cpudriver
work=${TMPDIR:-/tmp}/reprise-asweep.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
shimrun() { # shimrun SPEC APP ARGS...: one run with REPRISE_FAULT_ALLOC=SPEC into $work/f.*
    spec=$1; shift
    # shellcheck disable=SC2086
    timeout 60 env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_FAULT_ALLOC="$spec" $asan "$@" \
        >"$work/f.out" 2>"$work/f.err"
}

env LD_LIBRARY_PATH="$drv" "$@" >"$work/plain.out" 2>&1 ||
    { echo "FAIL: the program fails without the shim"; cat "$work/plain.out"; exit 1; }
shimrun 0 "$@"
total=$(sed -n 's/^reprise: \([0-9]*\) allocations, .*/\1/p' "$work/f.err" | tail -n 1)
[ -n "$total" ] || { echo "FAIL: the counting run said nothing"; cat "$work/f.err"; exit 1; }
runs=0 bad=0 fired=0
n=1
while [ "$n" -le "$total" ]; do
    for form in "" "+"; do
        shimrun "$n$form" "$@"
        rc=$?
        runs=$((runs + 1))
        f=$(sed -n 's/^reprise: [0-9]* allocations, \([0-9]*\) failed.*/\1/p' "$work/f.err" | tail -n 1)
        a=$(sed -n 's/^reprise: \([0-9]*\) allocations, [0-9]* failed.*/\1/p' "$work/f.err" | tail -n 1)
        f=${f:-0}
        fired=$((fired + f))
        why=
        [ $rc -ne 0 ] && why="exit $rc"
        cmp -s "$work/plain.out" "$work/f.out" || why="$why, other output"
        if [ -z "$a" ]; then
            why="$why, no count of allocations"
        else
            want=0
            if [ "$a" -ge "$n" ]; then
                want=1
                [ "$form" = "+" ] && want=$((a - n + 1))
            fi
            [ "$f" -eq "$want" ] || why="$why, $f of $a allocations failed, $want expected"
        fi
        if [ "$f" -gt 0 ] && ! grep -q '^reprise: out of memory' "$work/f.err"; then
            why="$why, no message"
        fi
        if [ -n "$why" ]; then
            bad=$((bad + 1))
            echo "FAIL: REPRISE_FAULT_ALLOC=$n$form:$why"
            diff "$work/plain.out" "$work/f.out" | head -5
            tail -n 5 "$work/f.err"
        fi
    done
    if [ "$n" -lt "$total" ] && [ $((n + stride)) -gt "$total" ]; then
        n=$total
    else
        n=$((n + stride))
    fi
done
echo "allocation sweep: $* : $total allocations, $runs runs, $fired faults fired, $bad failures"
[ "$bad" -eq 0 ]
