#!/bin/sh
# same_work.sh - runs one program on the CPU driver without the shim and with
# it enabled, and requires that the driver executed the same work both times:
# kernels (eager launches + kernel nodes of launched graphs), copies (eager +
# memcpy nodes) and memsets (eager + memset nodes). Replaying through graphs
# may change how work is issued, never how much of it runs.
#
# usage: same_work.sh [--sanitized] [--asan-runtime LIB] BUILD_DIR -- APP ARGS...
set -u
here=$(dirname "$0")
sanitized=0
asan_rt=
while [ $# -gt 0 ]; do
    case $1 in
        --sanitized) sanitized=1; shift ;;
        --asan-runtime) asan_rt=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 3 ] || { echo "usage: $0 [--sanitized] BUILD_DIR -- APP ARGS..." >&2; exit 2; }
build=$1; shift
[ "$1" = "--" ] && shift

driver_dir=$build/cpudriver
driver=$driver_dir/libcuda.so.1
shim=$build/lib/libreprise.so
work=${TMPDIR:-/tmp}/reprise-work.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
[ -f "$driver" ] || { echo "FAIL: $driver is not built"; exit 1; }
[ -f "$shim" ] || { echo "FAIL: $shim is not built"; exit 1; }

asan=
[ $sanitized -eq 1 ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"

# totals NAME: prints "kernels N copies N memsets N" from NAME's statistics.
totals() {
    awk -f "$here/jsonpaths.awk" "$work/$1.json" | awk -F '\t' '
        { v[$1] = $2 + 0 }
        END {
            printf "kernels %d copies %d memsets %d\n",
                v["counters.launch.eager"] + v["counters.node.kernel"],
                v["counters.copy.eager"] + v["counters.node.memcpy"],
                v["counters.memset.eager"] + v["counters.node.memset"]
        }'
}

status=0
for mode in absent enabled; do
    if [ $mode = absent ]; then
        preload=
    else
        preload="LD_PRELOAD=${asan_rt:+$asan_rt:}$shim REPRISE=1 REPRISE_DRIVER=$driver $asan"
    fi
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$driver_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" $preload \
        CPUCUDA_STATS="$work/$mode.json" "$@" >"$work/$mode.out" 2>"$work/$mode.err"
    rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$work/$mode.json" ]; then
        echo "FAIL: the $mode run exited $rc or wrote no driver statistics: $*"
        cat "$work/$mode.out"; tail -n 20 "$work/$mode.err"
        exit 1
    fi
done
a=$(totals absent)
e=$(totals enabled)
echo "without the shim: $a"
echo "shim enabled:     $e"
case $a in
    "kernels 0 "*) echo "FAIL: the run without the shim executed no kernels"; status=1 ;;
esac
if [ "$a" != "$e" ]; then
    echo "FAIL: the driver executed different work with the shim enabled"
    status=1
fi
exit $status
