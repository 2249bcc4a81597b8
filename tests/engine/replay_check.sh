#!/bin/sh
# replay_check.sh - runs a test program on the CPU driver without the shim
# and with it enabled (optionally with driver faults injected), requires
# byte-identical output, and checks numbers from both stats files.
#
# usage: replay_check.sh BUILD_DIR [--faults SPEC] [--env VAR=VALUE]...
#            [--no-warnings] [--expect 'FILE KEY OP VALUE']... -- APP ARGS...
# --no-warnings: a `reprise:` line on stderr (at the default log level only
# warnings and errors print) is a failure.
# FILE is `shim` (REPRISE_STATS) or `driver` (CPUCUDA_STATS); KEY a JSON key
# whose first occurrence holds a number (e.g. replayed_share, launch.graph);
# OP one of -ge -le -eq -gt -lt (for shares, values are compared x10000).
set -u
build=$1; shift
faults=
envs=
no_warnings=0
expects=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
        --faults) faults=$2; shift 2 ;;
        --env) envs="$envs $2"; shift 2 ;;
        --no-warnings) no_warnings=1; shift ;;
        --expect) expects="$expects
$2"; shift 2 ;;
        *) echo "replay_check.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "${1:-}" = "--" ] && shift
drv=$build/cpudriver
work=${TMPDIR:-/tmp}/reprise-replay.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"

env LD_LIBRARY_PATH="$drv" "$@" >"$work/plain.out" 2>"$work/plain.err" ||
    { echo "FAIL: the program fails without the shim"; cat "$work/plain.err"; exit 1; }
# The idle flush (REPRISE_IDLE_US) acts on timing: a run preempted for a
# while mid-step would count differently. These checks count exactly, so it
# is off unless a check sets it (--env REPRISE_IDLE_US=...).
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 REPRISE_IDLE_US=0 \
    REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$work/shim.json" \
    CPUCUDA_STATS="$work/driver.json" ${faults:+CPUCUDA_FAULTS=$faults} $asan $envs \
    "$@" >"$work/shim.out" 2>"$work/shim.err"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: the program exits $rc with the shim"; cat "$work/shim.err"; exit 1
fi
if ! cmp -s "$work/plain.out" "$work/shim.out"; then
    echo "FAIL: output differs with the shim"; diff "$work/plain.out" "$work/shim.out"; exit 1
fi
cat "$work/shim.out"
if [ $no_warnings -eq 1 ] && grep -q '^reprise: ' "$work/shim.err"; then
    echo "FAIL: the shim warned:"; grep '^reprise: ' "$work/shim.err" | head -n 5; exit 1
fi

# value FILE KEY: the first number after "KEY": in the file.
value() {
    sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$work/$1.json" | head -n 1
}
status=0
echo "$expects" | while read -r file key op want; do
    [ -n "$file" ] || continue
    got=$(value "$file" "$key")
    [ -n "$got" ] || got=0
    g=$(awk -v v="$got" 'BEGIN{printf "%d", v * 10000}')
    w=$(awk -v v="$want" 'BEGIN{printf "%d", v * 10000}')
    if [ "$g" "$op" "$w" ]; then
        echo "ok: $file $key = $got ($op $want)"
    else
        echo "FAIL: $file $key = $got, expected $op $want"
        echo "--- shim stats"; cat "$work/shim.json"
        echo "--- shim stderr"; tail -n 20 "$work/shim.err"
        exit 1
    fi
done || status=1
exit $status
