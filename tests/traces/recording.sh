#!/bin/sh
# recording.sh - what recording does and does not change:
#   - the program prints the same with and without the recorder, engine on
#     or off;
#   - a trace recorded with the engine off holds the same calls, entry by
#     entry, as one recorded with it on (the recorder sees calls as the
#     program made them, in front of the engine);
#   - a trace holds no program data by default; with REPRISE_TRACE_DATA=1
#     it holds the bytes of every host-to-device copy, says so in its
#     header, and still replays with one digest without and with the shim;
#   - %p in REPRISE_TRACE becomes the process id;
#   - `reprise replay --shim` ends with the shim's summary, as a run under
#     `reprise` does;
#   - a record over 1 KiB of high bytes (a 64 KiB host-to-device copy of
#     0xff, with its contents) has a right check byte: the trace reads, and
#     its replay reaches the driver with the program's calls and bytes (the
#     fidelity digests, CPUCUDA_FIDELITY_DATA=1), which a check byte folded
#     every 256 words instead of 128 would not (issue 34, class c).
# usage: recording.sh BUILD_DIR
set -u
build=$1
cmd=$build/bin/reprise
work=${TMPDIR:-/tmp}/reprise-recording.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
drv=$build/cpudriver
here=$(cd "$(dirname "$0")" && pwd)
flat="$here/../integration/jsonpaths.awk"
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
app="$build/apps/pageable $build/kernels/libtestkernels.so 6"
fails=0
run() { # run NAME ENV...: the program, stdout to NAME.out
    name=$1; shift
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" REPRISE_DRIVER="$drv/libcuda.so.1" $asan "$@" $app >"$work/$name.out" 2>"$work/$name.err" ||
        { echo "FAIL: the $name run exited $?"; cat "$work/$name.err"; exit 1; }
}
run plain
run off LD_PRELOAD="$build/lib/libreprise.so" REPRISE_TRACE="$work/off-%p.trace"
run on LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 REPRISE_TRACE="$work/on.trace"
run data LD_PRELOAD="$build/lib/libreprise.so" REPRISE_TRACE="$work/data.trace" REPRISE_TRACE_DATA=1
for r in off on data; do
    cmp -s "$work/plain.out" "$work/$r.out" ||
        { echo "FAIL: the program prints otherwise while recording ($r)"; fails=$((fails + 1)); }
done
set -- "$work"/off-*.trace
[ -f "$1" ] && [ "$1" != "$work/off-%p.trace" ] && case "$1" in *off-[0-9]*.trace) true ;; *) false ;; esac ||
    { echo "FAIL: %p was not expanded: $*"; exit 1; }
off=$1
for t in "$off" "$work/on.trace" "$work/data.trace"; do
    "$cmd" trace info "$t" >"$t.info" 2>&1 || { echo "FAIL: $t cannot be read"; cat "$t.info"; exit 1; }
    sed -n '/^calls by entry point:/,/^$/p' "$t.info" | awk '{ print $1, $2 }' | sort >"$t.calls"
done
cmp -s "$off.calls" "$work/on.trace.calls" ||
    { echo "FAIL: the calls recorded with the engine off and on differ:"; diff "$off.calls" "$work/on.trace.calls"; fails=$((fails + 1)); }
grep -q "host-to-device contents recorded" "$off.info" &&
    { echo "FAIL: a trace without REPRISE_TRACE_DATA says it holds contents"; fails=$((fails + 1)); }
grep -q "host-to-device contents recorded" "$work/data.trace.info" ||
    { echo "FAIL: a trace with REPRISE_TRACE_DATA=1 does not say it holds contents"; fails=$((fails + 1)); }
s_off=$(wc -c <"$off")
s_data=$(wc -c <"$work/data.trace")
# pageable 6 copies 6 x 2 x 4 KiB from the host (synchronous and async).
[ $((s_data - s_off)) -ge 49152 ] ||
    { echo "FAIL: the trace with contents is only $((s_data - s_off)) bytes larger"; fails=$((fails + 1)); }
for t in "$off" "$work/data.trace"; do
    for mode in no-shim shim; do
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$t.$mode.json" $asan "$cmd" replay "$t" --$mode \
            --driver "$drv/libcuda.so.1" --strict >"$t.$mode.out" 2>&1 ||
            { echo "FAIL: $t does not replay --$mode"; cat "$t.$mode.out"; exit 1; }
    done
    # Under the shim the replay ends with the summary a run under `reprise`
    # prints (issue 37: it printed none).
    grep -q "^reprise: [0-9][0-9]* capturable ops, " "$t.shim.out" ||
        { echo "FAIL: reprise replay --shim printed no summary:"; cat "$t.shim.out"; fails=$((fails + 1)); }
    a=$(awk -f "$flat" "$t.no-shim.json" | awk -F '\t' '$1 == "digest.value" { print $2 }')
    b=$(awk -f "$flat" "$t.shim.json" | awk -F '\t' '$1 == "digest.value" { print $2 }')
    [ -n "$a" ] && [ "$a" = "$b" ] ||
        { echo "FAIL: $t replays with digests $a and $b"; fails=$((fails + 1)); }
    if [ "$t" = "$off" ]; then d_off=$a; else d_data=$a; fi
done
# The recorded contents are what the replay copies: another digest.
[ "$d_off" != "$d_data" ] ||
    { echo "FAIL: the replay of the trace with contents moved the same bytes as without"; fails=$((fails + 1)); }
# The command's options: --trace FILE and the flag --trace-data.
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" $asan "$cmd" --driver "$drv/libcuda.so.1" --summary 0 --trace "$work/cmd.trace" \
    --trace-data -- $app >"$work/cmd.out" 2>"$work/cmd.err" ||
    { echo "FAIL: reprise --trace ... --trace-data exited $?"; cat "$work/cmd.err"; exit 1; }
cmp -s "$work/plain.out" "$work/cmd.out" ||
    { echo "FAIL: the program prints otherwise under reprise --trace"; fails=$((fails + 1)); }
"$cmd" trace info "$work/cmd.trace" | grep -q "host-to-device contents recorded" ||
    { echo "FAIL: reprise --trace-data did not record contents"; fails=$((fails + 1)); }
# High bytes: one record of 64 KiB of 0xff.
hb="$build/traces/highbytes $build/kernels/libtestkernels.so 65536"
# shellcheck disable=SC2086
env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE_DRIVER="$drv/libcuda.so.1" \
    REPRISE_TRACE="$work/high.trace" REPRISE_TRACE_DATA=1 CPUCUDA_FIDELITY_DATA=1 \
    CPUCUDA_STATS="$work/high.rec.json" $asan $hb >"$work/high.out" 2>&1 ||
    { echo "FAIL: highbytes exited $? while recording"; cat "$work/high.out"; exit 1; }
if ! "$cmd" trace info "$work/high.trace" >"$work/high.info" 2>&1; then
    echo "FAIL: the trace of a 64 KiB copy of 0xff cannot be read (its check byte):"
    tail -1 "$work/high.info"
    fails=$((fails + 1))
else
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" CPUCUDA_FIDELITY_DATA=1 CPUCUDA_STATS="$work/high.rep.json" $asan \
        "$cmd" replay "$work/high.trace" --no-shim --driver "$drv/libcuda.so.1" --strict \
        >"$work/high.rep.out" 2>&1 ||
        { echo "FAIL: the trace of a 64 KiB copy of 0xff does not replay"; cat "$work/high.rep.out"; fails=$((fails + 1)); }
    f0=$(awk -f "$flat" "$work/high.rec.json" | awk -F '\t' '$1 == "fidelity.value" { print $2 }')
    f1=$(awk -f "$flat" "$work/high.rep.json" | awk -F '\t' '$1 == "fidelity.value" { print $2 }')
    [ -n "$f0" ] && [ "$f0" = "$f1" ] ||
        { echo "FAIL: the 64 KiB copy of 0xff reached the driver otherwise replayed: fidelity $f0, replayed $f1"; fails=$((fails + 1)); }
fi
[ $fails -eq 0 ] || exit 1
echo "ok: same output recording with the engine off and on, the same calls in both traces; contents only with REPRISE_TRACE_DATA ($((s_data - s_off)) bytes more), both replay with one digest; a record of 64 KiB of 0xff reads and replays faithfully"
