#!/bin/sh
# run_corpus.sh - runs the random programs of seeds FIRST..LAST (OPS ops
# each, of the shapes SHAPES: progfuzz's letters, default all) on the CPU
# driver without the shim, twice (the second time with simulated device time,
# CPUCUDA_DELAY_US=20: a program whose output changes is racy, a fuzzer bug),
# and with the shim in four engine configurations (defaults; a warmup of 1;
# no variants, so every changing sequence is updated; at most two graphs, so
# that captures evict graphs all the time), and requires the same
# output line from all (a program that fails without the shim is a fuzzer
# bug, counted with the nondeterministic ones). Each program is also
# recorded with the shim preloaded and the engine off (REPRISE_TRACE), its
# output the same, and its trace replayed without the shim (`reprise
# replay --timing none --strict`): the CPU driver's fidelity digests of the
# recording run and of the replay must be equal (issue 34: what reached the
# driver, call by call; tests/cpudriver/README.md). Prints the seed and both lines on a mismatch; a
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
runs=0 fails=0 racy=0 total_ops=0 unfaithful=0
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
# fidelity FILE: the fidelity digest and its calls in a CPUCUDA_STATS file.
fidelity() {
    sed -n 's/.*"fidelity":{"value":"\([0-9a-f]*\)","calls":\([0-9]*\)}.*/\1 (\2 calls)/p' "$1" 2>/dev/null
}
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
    # Fidelity: recorded with the engine off, replayed without the shim.
    rm -f "$work/f.trace" "$work/rec.json" "$work/rep.json"
    # shellcheck disable=SC2086
    rec=$($to env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$shim" REPRISE_DRIVER="$drv/libcuda.so.1" \
        REPRISE_TRACE="$work/f.trace" CPUCUDA_STATS="$work/rec.json" $asan \
        "$bin" "$mod" "$seed" "$ops" "$shapes" 2>&1)
    # shellcheck disable=SC2086
    $to env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$work/rep.json" $asan "$build/bin/reprise" replay \
        "$work/f.trace" --no-shim --driver "$drv/libcuda.so.1" --timing none --strict >"$work/rep.out" 2>&1
    rc=$?
    f0=$(fidelity "$work/rec.json")
    f1=$(fidelity "$work/rep.json")
    if [ "$plain" != "$rec" ] || [ $rc -ne 0 ] || [ -z "$f0" ] || [ "$f0" != "$f1" ]; then
        unfaithful=$((unfaithful + 1))
        echo "UNFAITHFUL seed $seed: recorded \"$rec\" (fidelity $f0), replayed exit $rc (fidelity $f1)"
        tail -3 "$work/rep.out"
    fi
    n=$(echo "$plain" | sed -n 's/.* ops \([0-9]*\) .*/\1/p')
    total_ops=$((total_ops + ${n:-0}))
    seed=$((seed + 1))
done
echo "fuzz: seeds $first..$last, shapes $shapes, $runs shim runs, $total_ops ops per configuration, $fails mismatches, $racy nondeterministic, $unfaithful replays unfaithful to their recording"
[ "$fails" -eq 0 ] && [ "$racy" -eq 0 ] && [ "$unfaithful" -eq 0 ]
