#!/bin/sh
# run_corpus.sh - runs the random programs of seeds FIRST..LAST (OPS ops
# each) on the CPU driver without the shim and with it, in three engine
# configurations (defaults; a warmup of 1; no variants, so every changing
# sequence is updated), and requires the same output line from all. Prints
# the seed and both lines on a mismatch; a summary line at the end.
# usage: run_corpus.sh BUILD_DIR FIRST LAST [OPS]
set -u
build=$1 first=$2 last=$3 ops=${4:-300}
drv=$build/cpudriver
bin=$build/fuzz/progfuzz
mod=$build/kernels/libtestkernels.so
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
runs=0 fails=0 total_ops=0
seed=$first
while [ "$seed" -le "$last" ]; do
    plain=$(env LD_LIBRARY_PATH="$drv" "$bin" "$mod" "$seed" "$ops" 2>&1)
    for cfg in "" "REPRISE_WARMUP=1" "REPRISE_MAX_VARIANTS=0"; do
        # shellcheck disable=SC2086
        shim=$(env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
            REPRISE_DRIVER="$drv/libcuda.so.1" $asan $cfg "$bin" "$mod" "$seed" "$ops" 2>&1)
        runs=$((runs + 1))
        if [ "$plain" != "$shim" ]; then
            fails=$((fails + 1))
            echo "MISMATCH seed $seed ($cfg):"
            echo "  without: $plain"
            echo "  with:    $shim"
        fi
    done
    n=$(echo "$plain" | sed -n 's/.* ops \([0-9]*\) .*/\1/p')
    total_ops=$((total_ops + ${n:-0}))
    seed=$((seed + 1))
done
echo "fuzz: seeds $first..$last, $runs shim runs, $total_ops ops per configuration, $fails mismatches"
[ "$fails" -eq 0 ]
