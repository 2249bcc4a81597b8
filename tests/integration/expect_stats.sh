#!/bin/sh
# expect_stats.sh - runs one program on the CPU driver (with the shim enabled
# unless --absent) and checks the JSON statistics it leaves behind: the CPU
# driver's (CPUCUDA_STATS) or the shim's (REPRISE_STATS). Each EXPR is
# PATH>N, PATH>=N or PATH=VALUE over the lines jsonpaths.awk prints (arrays
# are PATH[]); an expression holds when some line with that PATH satisfies it.
#
# usage: expect_stats.sh [--absent] [--may-fail] [--sanitized] [--asan-runtime LIB]
#            [--env VAR=VALUE] [--idle-default] --stats driver|shim BUILD_DIR EXPR... -- APP ARGS...
# --idle-default leaves the idle flush at the shim's default (REPRISE_IDLE_US
# unset) instead of turning it off: for checks of what a program gets at
# defaults, timing included (tests/apps/shapes_expect.txt).
set -u

here=$(dirname "$0")
absent=0
may_fail=0
sanitized=0
asan_rt=
which=driver
extra_env=
idle_env=REPRISE_IDLE_US=0
while [ $# -gt 0 ]; do
    case $1 in
        --absent) absent=1; shift ;;
        --may-fail) may_fail=1; shift ;;
        --sanitized) sanitized=1; shift ;;
        --asan-runtime) asan_rt=$2; shift 2 ;;
        --env) extra_env="$extra_env $2"; shift 2 ;;
        --idle-default) idle_env=; shift ;;
        --stats) which=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 3 ] || { echo "usage: see $0" >&2; exit 2; }
build=$1; shift
exprs=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do exprs="$exprs $1"; shift; done
[ $# -gt 1 ] || { echo "usage: see $0" >&2; exit 2; }
shift

driver_dir=$build/cpudriver
driver=$driver_dir/libcuda.so.1
shim=$build/lib/libreprise.so
work=${TMPDIR:-/tmp}/reprise-stats.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
stats=$work/stats.json

[ -f "$driver" ] || { echo "FAIL: $driver is not built"; exit 1; }
if [ "$which" = driver ]; then
    stats_env="CPUCUDA_STATS=$stats"
else
    stats_env="REPRISE_STATS=$stats"
fi
preload_env=
if [ $absent -eq 0 ]; then
    [ -f "$shim" ] || { echo "FAIL: $shim is not built"; exit 1; }
    preload_env="LD_PRELOAD=${asan_rt:+$asan_rt:}$shim REPRISE=1 REPRISE_DRIVER=$driver"
    [ $sanitized -eq 1 ] && preload_env="$preload_env ASAN_OPTIONS=verify_asan_link_order=0"
fi

# The idle flush (REPRISE_IDLE_US) acts on timing: a run preempted for a
# while mid-step would count differently. Counts are checked exactly here,
# so it is off unless the check sets it (--env REPRISE_IDLE_US=...) or asks
# for the default (--idle-default).
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$driver_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" $idle_env \
    $preload_env $stats_env $extra_env "$@" >"$work/out" 2>"$work/err"
rc=$?
echo "ran: $* (exit $rc)"
cat "$work/out"
if [ $rc -ne 0 ] && [ $may_fail -eq 0 ]; then
    echo "FAIL: the program exited $rc"
    tail -n 20 "$work/err"
    exit 1
fi
if [ ! -s "$stats" ]; then
    echo "FAIL: no $which statistics were written ($stats_env)"
    tail -n 20 "$work/err"
    exit 1
fi
awk -f "$here/jsonpaths.awk" "$stats" >"$work/paths"

status=0
for e in $exprs; do
    case $e in
        *'>='*) op='>='; p=${e%%>=*}; v=${e#*>=} ;;
        *'>'*) op='>'; p=${e%%>*}; v=${e#*>} ;;
        *'='*) op='='; p=${e%%=*}; v=${e#*=} ;;
        *) echo "FAIL: bad expression $e"; exit 2 ;;
    esac
    if awk -F '\t' -v p="$p" -v op="$op" -v v="$v" '
        $1 == p && ((op == "=" && $2 == v) || (op == ">" && $2 + 0 > v + 0) ||
                    (op == ">=" && $2 + 0 >= v + 0)) { found = 1 }
        END { exit found ? 0 : 1 }' "$work/paths"; then
        echo "ok: $e"
    else
        got=$(awk -F '\t' -v p="$p" '$1 == p { printf "%s ", $2 }' "$work/paths")
        echo "FAIL: $which statistics do not satisfy $e (values of $p: ${got:-none})"
        status=1
    fi
done
if [ $status -ne 0 ]; then
    echo "--- $which statistics"
    cat "$stats"
fi
exit $status
