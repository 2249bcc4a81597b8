#!/bin/sh
# same_checksum.sh - runs one test program on the CPU driver several ways and
# requires exit 0, a checksum line, and byte-identical stdout in every run:
# without the shim (twice: the program must be deterministic), preloaded but
# disabled, preloaded and enabled, enabled with REPRISE_WARMUP=1 (capture at
# the first occurrence) and with REPRISE_MAX_VARIANTS=0 (updates only), and
# through the reprise command if built.
#
# usage: same_checksum.sh [--absent-only] [--sanitized] [--asan-runtime LIB]
#            [--env NAME=VALUE]... BUILD_DIR -- APP ARGS...
# --env sets a variable in every run (e.g. CPUCUDA_DELAY_US=50: simulated
# device time, so that work the host does not wait for really is late).
# --asan-runtime LIB goes first in LD_PRELOAD (a sanitized shim preloaded
# into a program that was not built with the sanitizer needs it there).
set -u

absent_only=0
sanitized=0
asan_rt=
extra_env=
while [ $# -gt 0 ]; do
    case $1 in
        --absent-only) absent_only=1; shift ;;
        --sanitized) sanitized=1; shift ;;
        --asan-runtime) asan_rt=$2; shift 2 ;;
        --env) extra_env="$extra_env $2"; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 3 ] || { echo "usage: $0 [--absent-only] [--sanitized] BUILD_DIR -- APP ARGS..." >&2; exit 2; }
build=$1; shift
[ "$1" = "--" ] && shift
app=$1

driver_dir=$build/cpudriver
driver=$driver_dir/libcuda.so.1
shim=$build/lib/libreprise.so
cmd=$build/bin/reprise
work=${TMPDIR:-/tmp}/reprise-same.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

[ -x "$app" ] || { echo "FAIL: $app is not built"; exit 1; }
preload=${asan_rt:+$asan_rt:}$shim
[ -f "$driver" ] || { echo "FAIL: $driver is not built"; exit 1; }

status=0

# run NAME VAR=VALUE... -- COMMAND...: runs one way, stdout to $work/NAME.out.
run() {
    name=$1; shift
    env_args=
    while [ "$1" != "--" ]; do env_args="$env_args $1"; shift; done
    shift
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$driver_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" $extra_env $env_args \
        "$@" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: $name run exited $rc: $*"
        echo "--- stdout"; cat "$work/$name.out"
        echo "--- stderr (last 20 lines)"; tail -n 20 "$work/$name.err"
        status=1
        return 1
    fi
    if ! grep -Eq '^checksum [^ ]+ [0-9a-f]{16}$' "$work/$name.out"; then
        echo "FAIL: $name run printed no checksum line: $*"
        cat "$work/$name.out"
        status=1
        return 1
    fi
    return 0
}

# same NAME: requires NAME's stdout to equal the first absent run's.
same() {
    [ -f "$work/$1.out" ] || return
    if ! cmp -s "$work/absent.out" "$work/$1.out"; then
        echo "FAIL: the $1 run printed a different stdout than the run without the shim"
        diff "$work/absent.out" "$work/$1.out"
        status=1
    fi
}

# The CPU driver runs a graph's independent nodes in a random order by
# default (tests/cpudriver/README.md): one seed for every run here, named
# when a run fails, so that the failure can be repeated.
if [ -z "${CPUCUDA_GRAPH_ORDER:-}" ]; then
    CPUCUDA_GRAPH_ORDER=random:$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    export CPUCUDA_GRAPH_ORDER
fi
order_note() { echo "(graph order: CPUCUDA_GRAPH_ORDER=$CPUCUDA_GRAPH_ORDER repeats these runs)"; }

preload_env=
if [ $sanitized -eq 1 ]; then
    preload_env="ASAN_OPTIONS=verify_asan_link_order=0"
fi

run absent -- "$@" || { order_note; exit 1; }
run absent2 -- "$@" && same absent2

if [ $absent_only -eq 0 ]; then
    [ -f "$shim" ] || { echo "FAIL: $shim is not built"; exit 1; }
    run disabled $preload_env LD_PRELOAD="$preload" REPRISE=0 REPRISE_DRIVER="$driver" -- "$@" \
        && same disabled
    run enabled $preload_env LD_PRELOAD="$preload" REPRISE=1 REPRISE_DRIVER="$driver" -- "$@" \
        && same enabled
    run warmup1 $preload_env LD_PRELOAD="$preload" REPRISE=1 REPRISE_WARMUP=1 \
        REPRISE_DRIVER="$driver" -- "$@" && same warmup1
    run novariants $preload_env LD_PRELOAD="$preload" REPRISE=1 REPRISE_MAX_VARIANTS=0 \
        REPRISE_DRIVER="$driver" -- "$@" && same novariants
    if [ -x "$cmd" ]; then
        run command $preload_env -- "$cmd" --driver "$driver" -- "$@" && same command
    fi
fi

if [ $status -eq 0 ]; then
    runs=
    for r in absent absent2 disabled enabled warmup1 novariants command; do
        [ -f "$work/$r.out" ] && runs="$runs $r"
    done
    echo "ok: every run ($runs ) printed:"
    cat "$work/absent.out"
else
    order_note
fi
exit $status
