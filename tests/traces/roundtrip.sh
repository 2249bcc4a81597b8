#!/bin/sh
# roundtrip.sh - records one test program on the CPU driver and replays the
# trace without and with the shim (issue 29): the program runs once with the
# shim enabled, REPRISE_TRACE and REPRISE_STATS set (the live run); then
# `reprise replay` runs the trace against the CPU driver alone and, twice,
# under the shim. Every replay must exit 0 with every call's result as the
# program's (--strict) and give the same CPU-driver digest
# (tests/cpudriver/README.md, "The digest"), and the shares the replays
# under the shim replay must come within one point (0.01) of the live runs'
# (their ranges overlap, widened by the point).
# Fidelity (issue 34): the program also runs once with the engine off
# (REPRISE unset), recording a second trace, and that trace's replay
# without the shim must reach the driver with the recording run's calls:
# the CPU driver's fidelity digest (tests/cpudriver/README.md, "The
# fidelity digest"), which the replays compared with each other would not
# see if the recorder or the reader decoded wrongly but consistently. (The
# live run's trace is not used for this: with the engine on, what reaches
# the driver is the engine's work, not the program's calls; and the shares
# are compared on it, since the engine changes how threads interleave.)
#
# usage: roundtrip.sh [--sanitized] [--asan-runtime LIB] [--env NAME=VALUE]...
#            [--tolerance T] [--order entered|returned] [--trace-data] [--keep DIR]
#            BUILD_DIR -- APP ARGS...
# --env sets a variable in every run (CPUCUDA_DELAY_US, an engine bound),
# --replay-env in the replays only (CPUCUDA_DEVICES=2 for a program that
# sets it itself); --live-runs K runs the program K times live (default 3)
# and compares the replay's share with the range of theirs, widened by the
# tolerance: where the live share itself varies from run to run (threads,
# timing), one live run is no yardstick; the live run's trace is replayed
# in the order its calls began (`reprise replay --order entered`), the
# order the engine met them in (a boundary acts as its call begins), unless
# --order returned says otherwise (docs/trace.md, "What a replay does not
# reproduce"); --no-share REASON checks the
# digests only and says why the shares are not compared (docs/trace.md,
# "What a replay does not reproduce"); --trace-data records the bytes of
# host-to-device copies (REPRISE_TRACE_DATA=1) and has the fidelity digests
# hash those from pageable memory (CPUCUDA_FIDELITY_DATA=1); --keep leaves
# the traces and the reports in DIR.
set -u

sanitized=0
asan_rt=
extra_env=
replay_env=
tolerance=0.01
live_runs=3
no_share=
keep=
data=
order="--order entered"
while [ $# -gt 0 ]; do
    case $1 in
        --sanitized) sanitized=1; shift ;;
        --asan-runtime) asan_rt=$2; shift 2 ;;
        --env) extra_env="$extra_env $2"; shift 2 ;;
        --replay-env) replay_env="$replay_env $2"; shift 2 ;;
        --tolerance) tolerance=$2; shift 2 ;;
        --live-runs) live_runs=$2; shift 2 ;;
        --no-share) no_share=$2; live_runs=1; shift 2 ;;
        --order) order="--order $2"; shift 2 ;;
        --trace-data) data="REPRISE_TRACE_DATA=1 CPUCUDA_FIDELITY_DATA=1"; shift ;;
        --keep) keep=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 3 ] || { echo "usage: $0 [options] BUILD_DIR -- APP ARGS..." >&2; exit 2; }
build=$1; shift
[ "$1" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
flat="$here/../integration/jsonpaths.awk"

driver_dir=$build/cpudriver
driver=$driver_dir/libcuda.so.1
shim=$build/lib/libreprise.so
cmd=$build/bin/reprise
if [ -n "$keep" ]; then
    work=$keep
    mkdir -p "$work" || exit 1
else
    work=${TMPDIR:-/tmp}/reprise-roundtrip.$$
    mkdir -p "$work" || exit 1
    trap 'rm -rf "$work"' EXIT INT TERM
fi
asan=
[ $sanitized -eq 1 ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1"
preload=${asan_rt:+$asan_rt:}$shim

# value FILE KEY: a scalar of a JSON file, flattened.
value() {
    awk -f "$flat" "$1" | awk -F '\t' -v k="$2" '$1 == k { print $2; exit }'
}

# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$driver_dir" LD_PRELOAD="$preload" REPRISE=1 REPRISE_DRIVER="$driver" \
    REPRISE_STATS="$work/live.json" REPRISE_TRACE="$work/t.trace" $asan $extra_env $data "$@" \
    >"$work/live.out" 2>"$work/live.err" ||
    { echo "FAIL: the live run exited $?: $*"; cat "$work/live.err"; exit 1; }
[ -s "$work/t.trace" ] || { echo "FAIL: no trace was written: $*"; exit 1; }
lo=$(value "$work/live.json" replayed_share)
hi=$lo
nlive=1
# The fidelity run: the engine off, what reaches the driver is the
# program's own calls; then its trace replayed without the shim.
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$driver_dir" LD_PRELOAD="$preload" REPRISE_DRIVER="$driver" \
    REPRISE_TRACE="$work/f.trace" CPUCUDA_STATS="$work/rec.drv.json" $asan $extra_env $data "$@" \
    >"$work/rec.out" 2>"$work/rec.err" ||
    { echo "FAIL: the recording run with the engine off exited $?: $*"; cat "$work/rec.err"; exit 1; }
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$driver_dir" CPUCUDA_STATS="$work/fid.drv.json" $asan $extra_env $replay_env $data \
    "$cmd" replay "$work/f.trace" --no-shim --driver "$driver" --strict >"$work/fid.out" 2>"$work/fid.err" ||
    { echo "FAIL: the replay of the trace recorded with the engine off exited $?: $*"; cat "$work/fid.err"; exit 1; }
f0=$(value "$work/rec.drv.json" fidelity.value)
c0=$(value "$work/rec.drv.json" fidelity.calls)
f1=$(value "$work/fid.drv.json" fidelity.value)
c1=$(value "$work/fid.drv.json" fidelity.calls)
if [ -z "$f0" ] || [ "$f0" != "$f1" ]; then
    echo "FAIL: the fidelity digests differ: the program's run $f0 ($c0 calls), its trace's replay $f1 ($c1 calls): $*"
    exit 1
fi
# live_sample: one more live run (no trace), its share into lo..hi.
live_sample() {
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$driver_dir" LD_PRELOAD="$preload" REPRISE=1 REPRISE_DRIVER="$driver" \
        REPRISE_STATS="$work/live$nlive.json" $asan $extra_env "$@" >"$work/live$nlive.out" 2>&1 ||
        { echo "FAIL: live run $nlive exited $?: $*"; exit 1; }
    v=$(value "$work/live$nlive.json" replayed_share)
    lo=$(awk -v a="$lo" -v b="$v" 'BEGIN { print (b < a ? b : a) }')
    hi=$(awk -v a="$hi" -v b="$v" 'BEGIN { print (b > a ? b : a) }')
    nlive=$((nlive + 1))
}
while [ "$nlive" -lt "$live_runs" ]; do
    live_sample "$@"
done
# replay MODE NAME: one replay, --MODE (no-shim or shim), reports as NAME.
replay() {
    stats=
    [ "$1" = shim ] && stats="--stats $work/$2.json"
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$driver_dir" CPUCUDA_STATS="$work/$2.drv.json" $asan $extra_env $replay_env $data \
        "$cmd" replay "$work/t.trace" --"$1" $order --driver "$driver" --strict $stats \
        >"$work/$2.out" 2>"$work/$2.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: the replay --$1 exited $rc: $*"
        cat "$work/$2.err"
        exit 1
    fi
}
replay no-shim plain
d1=$(value "$work/plain.drv.json" digest.value)
n1=$(value "$work/plain.drv.json" digest.ops)
# The shim's decisions may vary from run to run, live and replayed alike
# (threads, device progress): replays under it are compared with the live
# runs' range; while the two ranges, widened by the tolerance, do not meet,
# one more of each, up to 4 more.
rlo= rhi= nrep=0 shares=
overlap() {
    awk -v lo="$lo" -v hi="$hi" -v a="$rlo" -v b="$rhi" -v t="$tolerance" \
        'BEGIN { print (b >= lo - t - 1e-9 && a <= hi + t + 1e-9) ? 1 : 0 }'
}
replay_sample() {
    nrep=$((nrep + 1))
    replay shim "shim$nrep" "$@"
    d2=$(value "$work/shim$nrep.drv.json" digest.value)
    n2=$(value "$work/shim$nrep.drv.json" digest.ops)
    if [ -z "$d1" ] || [ "$d1" != "$d2" ]; then
        echo "FAIL: the digests differ: without the shim $d1 ($n1 ops), with it $d2 ($n2 ops): $*"
        exit 1
    fi
    v=$(value "$work/shim$nrep.json" replayed_share)
    [ -n "$v" ] || { echo "FAIL: no replayed share in the replay's report: $*"; exit 1; }
    shares="${shares:+$shares, }$v"
    rlo=$(awk -v a="${rlo:-$v}" -v b="$v" 'BEGIN { print (b < a ? b : a) }')
    rhi=$(awk -v a="${rhi:-$v}" -v b="$v" 'BEGIN { print (b > a ? b : a) }')
}
replay_sample "$@"
if [ -n "$no_share" ]; then
    echo "ok: fidelity $f0 ($c0 calls) recorded and replayed; digest $d1 ($n1 ops) without and with the shim; replayed share $shares, live $lo, not compared: $no_share: $*"
    exit 0
fi
replay_sample "$@"
extra=0
while [ "$(overlap)" != 1 ] && [ $extra -lt 4 ]; do
    live_sample "$@"
    replay_sample "$@"
    extra=$((extra + 1))
done
ok=$(overlap)
live=$lo
[ "$hi" != "$lo" ] && live="$lo..$hi"
replay=$shares
if [ "$ok" != 1 ]; then
    echo "FAIL: replayed shares $replay under the shim, $live live (more than $tolerance apart): $*"
    exit 1
fi
echo "ok: fidelity $f0 ($c0 calls) recorded and replayed; digest $d1 ($n1 ops) without and with the shim ($nrep replays); replayed share $replay (live $live): $*"
