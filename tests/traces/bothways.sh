#!/bin/sh
# bothways.sh - a program recorded with the engine off and on, each trace
# replayed without and with the shim (issue 34, finding 1: the trace of a
# program whose threads each create a context, work in it and destroy it
# while the others work crashed `reprise replay`, SIGSEGV without the shim
# and SIGABRT with it, recorded either way). Every replay must complete,
# exit 0 with every call's result as the program's (--strict) and no call
# left out for want of its objects; never a crash. The trace recorded with
# the engine off must also reach the driver, replayed without the shim,
# with the program's calls (the fidelity digest, roundtrip.sh).
# usage: bothways.sh [--sanitized] BUILD_DIR -- APP ARGS...
set -u
asan=
if [ "${1:-}" = --sanitized ]; then
    asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
    shift
fi
[ $# -ge 3 ] || { echo "usage: $0 [--sanitized] BUILD_DIR -- APP ARGS..." >&2; exit 2; }
build=$1
shift
[ "$1" = "--" ] && shift
drv=$build/cpudriver
cmd=$build/bin/reprise
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-bothways.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
fid() { sed -n 's/.*"fidelity":{"value":"\([0-9a-f]*\)".*/\1/p' "$1" 2>/dev/null; }
fails=0
for engine in off on; do
    on=
    [ $engine = on ] && on="REPRISE=1"
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE_DRIVER="$drv/libcuda.so.1" \
        REPRISE_TRACE="$work/$engine.trace" CPUCUDA_STATS="$work/$engine.rec.json" $on $asan "$@" \
        >"$work/$engine.out" 2>&1 ||
        { echo "FAIL: the program exited $? recorded with the engine $engine: $*"; cat "$work/$engine.out"; exit 1; }
    for how in no-shim shim; do
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$work/$engine.$how.json" $asan timeout 120 "$cmd" replay \
            "$work/$engine.trace" --$how --driver "$drv/libcuda.so.1" --strict >"$work/r.out" 2>&1
        rc=$?
        if [ $rc -ne 0 ]; then
            echo "FAIL: the trace recorded with the engine $engine, replayed --$how, exited $rc (1: stopped; 3: a result differed; 124: hung; 128 and up: a crash):"
            tail -5 "$work/r.out"
            fails=$((fails + 1))
        elif grep -q "not issued" "$work/r.out"; then
            echo "FAIL: the trace recorded with the engine $engine, replayed --$how, left calls out:"
            grep "not issued" "$work/r.out"
            fails=$((fails + 1))
        fi
    done
done
f0=$(fid "$work/off.rec.json")
f1=$(fid "$work/off.no-shim.json")
if [ -z "$f0" ] || [ "$f0" != "$f1" ]; then
    echo "FAIL: the fidelity digests differ: the program's run (engine off) $f0, its trace's replay $f1"
    fails=$((fails + 1))
fi
[ $fails -eq 0 ] || exit 1
echo "ok: recorded with the engine off and on, each trace replayed without and with the shim, every call issued with the program's result; fidelity $f0: $*"
