#!/bin/sh
# run_corpus.sh - runs the random programs of seeds FIRST..LAST (OPS ops
# each, of the shapes SHAPES: progfuzz's letters, default all) on the CPU
# driver without the shim, twice (the second time with simulated device time,
# CPUCUDA_DELAY_US=20: a program whose output changes is racy, a fuzzer bug),
# and with the shim in four engine configurations (defaults; a warmup of 1;
# no variants, so every changing sequence is updated; at most two graphs, so
# that captures evict graphs all the time), and requires the same
# output line from all (a program that fails without the shim is a fuzzer
# bug, counted with the nondeterministic ones). Prints the seed and both lines on a mismatch; a
# summary line at the end. FUZZ_SHIM names another libreprise.so to test (an
# old build, to check that the fuzzer catches its mistakes).
# usage: run_corpus.sh BUILD_DIR FIRST LAST [OPS [SHAPES]]
set -u
build=$1 first=$2 last=$3 ops=${4:-300} shapes=${5:-ptcdsngfj}
drv=$build/cpudriver
bin=$build/fuzz/progfuzz
mod=$build/kernels/libtestkernels.so
shim=${FUZZ_SHIM:-$build/lib/libreprise.so}
asan=
# A run that hangs ends by progfuzz's watchdog after 5 s, printing
# `error: hung: ...` (a mismatch), or, as a last resort, is cut after 300 s.
to=
command -v timeout >/dev/null 2>&1 && to="timeout 300"
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"
runs=0 fails=0 racy=0 total_ops=0
seed=$first
while [ "$seed" -le "$last" ]; do
    # shellcheck disable=SC2086
    plain=$($to env LD_LIBRARY_PATH="$drv" "$bin" "$mod" "$seed" "$ops" "$shapes" 2>&1)
    # shellcheck disable=SC2086
    slow=$($to env LD_LIBRARY_PATH="$drv" CPUCUDA_DELAY_US=20 "$bin" "$mod" "$seed" "$ops" "$shapes" 2>&1)
    case $plain in
    "fuzz seed "*) ;;
    *) racy=$((racy + 1)); echo "FAILED seed $seed without the shim: $plain" ;;
    esac
    if [ "$plain" != "$slow" ]; then
        racy=$((racy + 1))
        echo "NONDETERMINISTIC seed $seed (without the shim; CPUCUDA_DELAY_US=20 second):"
        echo "  $plain"
        echo "  $slow"
    fi
    for cfg in "" "REPRISE_WARMUP=1" "REPRISE_MAX_VARIANTS=0" "REPRISE_MAX_GRAPHS=2"; do
        # shellcheck disable=SC2086
        out=$($to env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$shim" REPRISE=1 \
            REPRISE_DRIVER="$drv/libcuda.so.1" $asan $cfg "$bin" "$mod" "$seed" "$ops" "$shapes" 2>&1)
        runs=$((runs + 1))
        if [ "$plain" != "$out" ]; then
            fails=$((fails + 1))
            echo "MISMATCH seed $seed ($cfg):"
            echo "  without: $plain"
            echo "  with:    $out"
        fi
    done
    n=$(echo "$plain" | sed -n 's/.* ops \([0-9]*\) .*/\1/p')
    total_ops=$((total_ops + ${n:-0}))
    seed=$((seed + 1))
done
echo "fuzz: seeds $first..$last, shapes $shapes, $runs shim runs, $total_ops ops per configuration, $fails mismatches, $racy nondeterministic"
[ "$fails" -eq 0 ] && [ "$racy" -eq 0 ]
