#!/bin/sh
# crash.sh - a process killed by SIGKILL (no exit, no destructor) leaves a
# trace readable up to its last complete record: `reprise trace info` reads
# it (exit 0) and says it was not closed, naming the byte where it ends, and
# it holds every call the program made before it died; `reprise replay`
# replays it and says so too, with the same recorded duration as `trace
# info` gives (issue 37: it said "recorded 0.000 s" where info said 2.019 s).
# usage: crash.sh BUILD_DIR
set -u
build=$1
work=${TMPDIR:-/tmp}/reprise-crash.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
iters=40
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE_DRIVER="$drv/libcuda.so.1" \
    REPRISE_TRACE="$work/t.trace" $asan "$build/traces/crasher" "$build/kernels/libtestkernels.so" $iters \
    >"$work/run.out" 2>&1
rc=$?
[ $rc -eq 137 ] || { echo "FAIL: the program was to die by SIGKILL (137), it exited $rc"; cat "$work/run.out"; exit 1; }
"$build/bin/reprise" trace info "$work/t.trace" >"$work/info.out" 2>"$work/info.err" ||
    { echo "FAIL: the trace of a killed process cannot be read"; cat "$work/info.err"; exit 1; }
grep -q "not closed: .*byte [0-9]*: the trace ends\|not closed: .*byte [0-9]*: an unfinished record" "$work/info.out" ||
    { echo "FAIL: info does not say the trace was not closed, and where"; cat "$work/info.out"; exit 1; }
launches=$(awk '$2 == "cuLaunchKernel" { print $1 }' "$work/info.out")
syncs=$(awk '$2 == "cuCtxSynchronize" { print $1 }' "$work/info.out")
if [ "${launches:-0}" -ne $iters ] || [ "${syncs:-0}" -ne $iters ]; then
    echo "FAIL: the trace holds $launches launches and $syncs synchronizes, the program made $iters of each"
    cat "$work/info.out"
    exit 1
fi
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" $asan "$build/bin/reprise" replay "$work/t.trace" --driver "$drv/libcuda.so.1" \
    --strict >"$work/replay.out" 2>&1 ||
    { echo "FAIL: the trace of a killed process does not replay"; cat "$work/replay.out"; exit 1; }
grep -q "without its END record\|an unfinished record" "$work/replay.out" ||
    { echo "FAIL: the replay does not say the trace was not closed"; cat "$work/replay.out"; exit 1; }
# The duration, as both print it ("390.8 us").
info_d=$(awk '$1 == "duration" { print $2, $3; exit }' "$work/info.out")
replay_d=$(sed -n 's/.*(recorded \([0-9.]* [mu]*s\), not closed).*/\1/p' "$work/replay.out")
if [ -z "$info_d" ] || [ "$info_d" != "$replay_d" ]; then
    echo "FAIL: trace info says the killed process ran $info_d, the replay says recorded ${replay_d:-?}"
    cat "$work/info.out" "$work/replay.out"
    exit 1
fi
echo "ok: killed after $iters launches; the trace holds all $launches and replays; recorded $info_d both ways"
