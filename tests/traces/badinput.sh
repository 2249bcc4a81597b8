#!/bin/sh
# badinput.sh - damaged traces get a clear error, never a crash: a trace of
# a test program is cut at every byte, has every byte's lowest bit flipped,
# says another format version, names an entry id nothing defined, or gives
# an entry an unknown family. `reprise trace info` must exit 1 with one line
# on stderr naming the byte offset, or, for a trace cut exactly between two
# records, exit 0 and say where it ends (what a killed process leaves; a
# flipped byte must be an error); never another status (a crash is 128 and up). `reprise replay` is run on
# every eighth damaged trace with the same rule, and on the named cases.
# usage: badinput.sh BUILD_DIR
set -u
build=$1
cmd=$build/bin/reprise
mut=$build/traces/tracemut
work=${TMPDIR:-/tmp}/reprise-badtrace.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE_DRIVER="$drv/libcuda.so.1" \
    REPRISE_TRACE="$work/t.trace" $asan "$build/apps/heat" "$build/kernels/libtestkernels.so" 2 \
    >/dev/null 2>&1 || { echo "FAIL: recording heat failed"; exit 1; }
size=$("$mut" "$work/t.trace" size)
fails=0 errors=0 notices=0 checked=0

# check FILE WHAT: info (and, when asked, replay) on a damaged trace.
check() {
    checked=$((checked + 1))
    timeout 20 "$cmd" trace info "$1" >"$work/info.out" 2>"$work/info.err"
    rc=$?
    if [ $rc -eq 1 ]; then
        if [ "$(wc -l <"$work/info.err")" -ne 1 ] || ! grep -q ": byte [0-9][0-9]*: " "$work/info.err"; then
            echo "FAIL: $2: info's error is not one line naming a byte:"; cat "$work/info.err"
            fails=$((fails + 1))
        fi
        errors=$((errors + 1))
    elif [ $rc -eq 0 ]; then
        if [ "${4:-}" = error ]; then
            echo "FAIL: $2: read without an error"
            fails=$((fails + 1))
        elif ! grep -q "not closed: .*: byte [0-9]*: " "$work/info.out"; then
            echo "FAIL: $2: info read a damaged trace as a whole one"
            fails=$((fails + 1))
        fi
        notices=$((notices + 1))
    else
        echo "FAIL: $2: info exited $rc"; cat "$work/info.err"
        fails=$((fails + 1))
    fi
    if [ "${3:-}" = replay ]; then
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$drv" $asan timeout 60 "$cmd" replay "$1" --driver "$drv/libcuda.so.1" \
            --timing none >"$work/replay.out" 2>&1
        rr=$?
        if [ $rr -ne 0 ] && [ $rr -ne 1 ]; then
            echo "FAIL: $2: replay exited $rr"; tail -3 "$work/replay.out"
            fails=$((fails + 1))
        elif [ $rr -eq 1 ] && ! grep -q ": byte [0-9][0-9]*: " "$work/replay.out"; then
            echo "FAIL: $2: replay's error does not name a byte"; tail -3 "$work/replay.out"
            fails=$((fails + 1))
        fi
    fi
}

# Every byte; under a sanitizer (slow) every fifth, a different residue
# for cuts and flips so that together they still cover the record kinds.
step=1
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && step=5
n=0
while [ $n -lt "$size" ]; do
    "$mut" "$work/t.trace" "$work/cut" cut $n
    r=; [ $((n % (8 * step))) -eq 0 ] && r=replay
    check "$work/cut" "cut at byte $n" $r
    f=$((n + step / 2))
    if [ $f -lt "$size" ]; then
        "$mut" "$work/t.trace" "$work/flip" flip $f
        # A flipped byte is an error, never a shorter trace.
        check "$work/flip" "byte $f flipped" "${r:-info}" error
    fi
    n=$((n + step))
done

"$mut" "$work/t.trace" "$work/v2" version 2
check "$work/v2" "version 2" replay
grep -q "version 2; this reprise reads version 1" "$work/info.err" ||
    { echo "FAIL: another version is not named as such:"; cat "$work/info.err"; fails=$((fails + 1)); }
"$mut" "$work/t.trace" "$work/entry" entry
check "$work/entry" "an unknown entry id" replay
grep -q "entry id 127, which no ENTRY record defined" "$work/info.err" ||
    { echo "FAIL: an unknown entry id is not named as such:"; cat "$work/info.err"; fails=$((fails + 1)); }
"$mut" "$work/t.trace" "$work/family" family
check "$work/family" "an unknown family" replay
grep -q "of family 126, which this reprise does not know" "$work/info.err" ||
    { echo "FAIL: an unknown family is not named as such:"; cat "$work/info.err"; fails=$((fails + 1)); }
printf 'not a trace at all\n' >"$work/text"
check "$work/text" "a text file" replay
: >"$work/empty"
check "$work/empty" "an empty file" replay

if [ $fails -ne 0 ]; then
    echo "FAIL: $fails of $checked damaged traces handled badly"
    exit 1
fi
echo "ok: $checked damaged traces of a $size-byte trace: $errors one-line errors, $notices cut between records"
