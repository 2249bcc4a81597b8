#!/bin/sh
# bounds.sh - whatever a trace says, the reader holds no more than the
# file's size justifies, and `reprise trace info` and `reprise replay` end
# in bounded memory and time (issue 34, finding 3). Each input below is read
# by both under `ulimit -v` (256 MiB; not under a sanitizer, whose shadow
# memory needs more address space) and a 20-second limit, and each must
# exit 0 or 1, and where 1, with one line naming the byte and not "out of
# memory" (a reader that allocated what the trace asked for would fail at
# the limit, and the line would say so):
#  - every file of tests/traces/regressions/ as it is (the 739-byte input the
#    trace reader's fuzzer found driving it to 2 GB and 15 s; its check
#    bytes reject it), and with every check byte made right, so that its
#    bytes reach the decoding behind them (a check byte is 8 bits: a
#    damaged file passes it one record in 256, a crafted one always);
#  - a crafted trace of 3,000 functions each of a 128 KiB parameter buffer,
#    each launched once with its parameters "as last time" (10 bytes a
#    function, 384 MiB of parameters for a reader that took it at its
#    word): it must stop at the reader's budget.
# usage: bounds.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
cmd=$build/bin/reprise
mut=$build/traces/tracemut
drv=$build/cpudriver
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-bounds.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
limit="ulimit -v 262144;"
asan=
if [ -n "${REPRISE_TEST_SANITIZED:-}" ]; then
    limit=
    asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
fi
fails=0 checked=0

# run WHAT FILE MUST: info and replay of FILE; MUST is "error" when reading
# must fail.
run() {
    for how in info replay; do
        checked=$((checked + 1))
        if [ $how = info ]; then
            set -- "$1" "$2" "$3" "$cmd" trace info "$2"
        else
            set -- "$1" "$2" "$3" "$cmd" replay "$2" --driver "$drv/libcuda.so.1" --timing none
        fi
        what=$1 file=$2 must=$3
        shift 3
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$drv" $asan sh -c "$limit exec timeout 20 \"\$@\"" sh "$@" \
            >"$work/out" 2>"$work/err"
        rc=$?
        set -- "$what" "$file" "$must"
        if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
            echo "FAIL: $how of $what exited $rc (124: over 20 s; 128 and up: a crash)"
            tail -3 "$work/err"
            fails=$((fails + 1))
            continue
        fi
        if [ $rc -eq 0 ] && [ "$must" = error ]; then
            echo "FAIL: $how of $what read it without an error"
            fails=$((fails + 1))
            continue
        fi
        [ $rc -eq 1 ] || continue
        line=$(grep ": byte [0-9][0-9]*: " "$work/err")
        if [ "$(printf '%s\n' "$line" | grep -c .)" -ne 1 ]; then
            echo "FAIL: $how of $what: not one line naming a byte:"
            cat "$work/err"
            fails=$((fails + 1))
        elif printf '%s\n' "$line" | grep -q "out of memory"; then
            echo "FAIL: $how of $what ran out of memory: $line"
            fails=$((fails + 1))
        fi
    done
}

found=0
for f in "$src"/tests/traces/regressions/*.rptrace; do
    [ -f "$f" ] || continue
    found=$((found + 1))
    name=${f##*/}
    run "$name" "$f" error
    "$mut" "$f" "$work/fixed-$name" fixsums || { echo "FAIL: tracemut fixsums $name"; exit 1; }
    run "$name with its check bytes right" "$work/fixed-$name" error
done
[ $found -gt 0 ] || { echo "FAIL: no trace in $src/tests/traces/regressions"; exit 1; }
"$mut" "$src/tests/traces/heat.rptrace" "$work/bomb.rptrace" bomb 3000 ||
    { echo "FAIL: tracemut bomb"; exit 1; }
run "3,000 functions of 128 KiB parameters" "$work/bomb.rptrace" error
if ! grep -q "more than the [0-9]* its size justifies" "$work/err"; then
    echo "FAIL: the crafted trace did not stop at the reader's budget:"
    cat "$work/err"
    fails=$((fails + 1))
fi
if [ $fails -ne 0 ]; then
    echo "FAIL: $fails of $checked reads"
    exit 1
fi
echo "ok: $checked reads of $found regression inputs (as they are and with their check bytes right) and a crafted trace, each in bounded memory and time with a one-line error naming the byte"
