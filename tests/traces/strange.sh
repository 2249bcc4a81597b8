#!/bin/sh
# strange.sh - no trace, however strange, crashes or hangs the player
# (issue 34, finding 1): traces whose records are well formed but say
# things no program did. Each trace below has one byte changed at a time
# (every STRIDE-th byte after the header, its lowest bit flipped) and every
# check byte made right again (tracemut fixsums), so that the change
# reaches the decoding and, where it still decodes, the player: another
# id, size, offset, value, geometry, parameter or entry. `reprise replay`
# without the shim (and with it, every fourth) must exit 0, or 1 with one
# line naming the file and the byte; never another status (a crash is 128
# and up), never over 60 seconds (a hang).
# usage: strange.sh BUILD_DIR SOURCE_DIR [STRIDE]
set -u
build=$1 src=$2 stride=${3:-0}
cmd=$build/bin/reprise
mut=$build/traces/tracemut
drv=$build/cpudriver
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-strange.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
# A trace of contexts made and destroyed by threads (threads MODULE 3 3 ctx,
# recorded once and kept: a recording made here would differ with the
# threads' timing, and the same byte flipped would change another record in
# every run), beside committed ones of events, graphs, launch attributes and
# recorded data.
fails=0 replays=0 completed=0 stopped=0
for t in "$src/tests/traces/threads-ctx.rptrace" "$src/tests/traces/forkjoin.rptrace" "$src/tests/traces/selfcapture.rptrace" \
    "$src/tests/traces/attrs.rptrace" "$src/tests/traces/pageable-data.rptrace"; do
    size=$("$mut" "$t" size) || exit 1
    # About 24 places a trace, unless asked for a stride.
    st=$stride
    [ "$st" -gt 0 ] || st=$((size / 24 + 1))
    pos=$((16 + size % 7)) # the header's first bytes are a magic and a version: refused
    n=0
    while [ $pos -lt "$size" ]; do
        "$mut" "$t" "$work/x.rptrace" flip $pos && "$mut" "$work/x.rptrace" "$work/x.rptrace" fixsums ||
            { echo "FAIL: tracemut on $t at $pos"; exit 1; }
        for how in no-shim shim; do
            [ $how = shim ] && [ $((n % 4)) -ne 0 ] && continue
            replays=$((replays + 1))
            # shellcheck disable=SC2086
            env LD_LIBRARY_PATH="$drv" $asan timeout 60 "$cmd" replay "$work/x.rptrace" --$how \
                --driver "$drv/libcuda.so.1" --timing none >"$work/out" 2>&1
            rc=$?
            if [ $rc -eq 0 ]; then
                completed=$((completed + 1))
            elif [ $rc -eq 1 ] && [ "$(grep -c ': byte [0-9][0-9]*: ' "$work/out")" -eq 1 ] &&
                grep -q "$work/x.rptrace: byte [0-9]" "$work/out"; then
                stopped=$((stopped + 1))
            else
                echo "FAIL: ${t##*/} with byte $pos flipped, replayed --$how, exited $rc (124: over 60 s; 128 and up: a crash):"
                tail -3 "$work/out"
                fails=$((fails + 1))
            fi
        done
        n=$((n + 1))
        pos=$((pos + st))
    done
done
[ $fails -eq 0 ] || { echo "FAIL: $fails of $replays replays of strange traces"; exit 1; }
echo "ok: $replays replays of traces with one byte changed: $completed completed, $stopped stopped with one line naming the byte"
