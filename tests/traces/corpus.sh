#!/bin/sh
# corpus.sh - replays every trace (*.rptrace) of a directory on the CPU
# driver, without the shim and under it: the two digests must be equal, every
# call's result as recorded (--strict), and the share replayed under the shim
# at least the one the directory's README.md gives the trace, in a table row
#   | `NAME.rptrace` | ... | SHARE |
# (the last column). A trace with no such row fails. The replays run as fast
# as the calls go (--timing none) with the engine's idle watch off and its
# costs pinned, as the round trips of tests/integration do.
# With --jitter SEED,SEED,... (timing as a test, issue 35 item 5) each trace
# is instead replayed under the shim once per seed with its recorded timing
# perturbed from that seed (`reprise replay --jitter SEED`, gaps over 20 ms
# shortened to 20 ms: --max-gap) and the engine's defaults (its idle watch
# on), costs pinned: each digest must equal the one of the replay without
# the shim, and each share be at least the README's.
# With --floors FILE, a trace named in FILE (lines `NAME PLAIN JITTER`, `#`
# a comment) must also reach PLAIN (as fast as the calls go) or JITTER
# (with --jitter): the shares this checkout reaches, a little under, so
# that a change that loses some of them fails here and not only past the
# README's floors (which guard the corpus for everyone, and are lower).
# usage: corpus.sh BUILD_DIR DIR [--optional] [--jitter SEEDS] [--floors FILE]
#   --optional: a missing or empty DIR skips (exit 77, saying so)
set -u
build=$1 dir=$2
shift 2
optional= seeds= floors=
while [ $# -gt 0 ]; do
    case $1 in
        --optional) optional=--optional; shift ;;
        --jitter) seeds=$(echo "$2" | tr ',' ' '); shift 2 ;;
        --floors) floors=$2; shift 2 ;;
        *) echo "usage: corpus.sh BUILD_DIR DIR [--optional] [--jitter SEEDS] [--floors FILE]" >&2; exit 2 ;;
    esac
done
[ -z "$floors" ] || [ -r "$floors" ] || { echo "FAIL: cannot read the floors $floors"; exit 1; }
cmd=$build/bin/reprise
drv=$build/cpudriver
here=$(cd "$(dirname "$0")" && pwd)
flat="$here/../integration/jsonpaths.awk"
work=${TMPDIR:-/tmp}/reprise-corpus.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"
set -- "$dir"/*.rptrace
if [ ! -f "$1" ]; then
    if [ "$optional" = --optional ]; then
        echo "skip: no traces in $dir (framework traces recorded elsewhere go there, each with a README.md row)"
        exit 77
    fi
    echo "FAIL: no traces in $dir"
    exit 1
fi
value() { awk -f "$flat" "$1" | awk -F '\t' -v k="$2" '$1 == k { print $2; exit }'; }
fails=0 n=0
for t in "$@"; do
    name=$(basename "$t")
    n=$((n + 1))
    want=$(awk -F '|' -v n="\`$name\`" '$2 ~ n { v = $(NF - 1); gsub(/[^0-9.]/, "", v); print v; exit }' \
        "$dir/README.md" 2>/dev/null)
    if [ -z "$want" ]; then
        echo "FAIL: $name has no row with its expected share in $dir/README.md"
        fails=$((fails + 1))
        continue
    fi
    if [ -n "$floors" ]; then
        col=2
        [ -n "$seeds" ] && col=3
        own=$(awk -v n="${name%.rptrace}" -v c=$col '$1 == n { print $c; exit }' "$floors")
        [ -n "$own" ] && want=$(awk -v a="$want" -v b="$own" 'BEGIN { print (b > a ? b : a) }')
    fi
    ok=1
    for mode in no-shim shim; do
        stats=
        [ $mode = shim ] && stats="--stats $work/$name.json"
        [ $mode = shim ] && [ -n "$seeds" ] && continue
        # shellcheck disable=SC2086
        env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$work/$name.$mode.drv.json" REPRISE_IDLE_US=0 \
            REPRISE_COSTS=3000,500,10000 $asan "$cmd" replay "$t" --$mode --driver "$drv/libcuda.so.1" \
            --timing none --strict $stats >"$work/$name.$mode.out" 2>&1 ||
            { echo "FAIL: $name does not replay --$mode:"; tail -5 "$work/$name.$mode.out"; ok=0; }
    done
    [ $ok -eq 1 ] || { fails=$((fails + 1)); continue; }
    if [ -n "$seeds" ]; then
        a=$(value "$work/$name.no-shim.drv.json" digest.value)
        shares=
        for seed in $seeds; do
            # shellcheck disable=SC2086
            env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$work/$name.$seed.drv.json" \
                REPRISE_COSTS=3000,500,10000 $asan "$cmd" replay "$t" --shim --driver "$drv/libcuda.so.1" \
                --jitter "$seed" --max-gap 20 --strict --stats "$work/$name.$seed.json" \
                >"$work/$name.$seed.out" 2>&1 ||
                { echo "FAIL: $name does not replay with --jitter $seed:"; tail -5 "$work/$name.$seed.out"; ok=0; continue; }
            b=$(value "$work/$name.$seed.drv.json" digest.value)
            share=$(value "$work/$name.$seed.json" replayed_share)
            shares="${shares:+$shares, }$share"
            if [ -z "$a" ] || [ "$a" != "$b" ]; then
                echo "FAIL: $name: digests $a without the shim, $b with it and --jitter $seed"
                ok=0
            elif awk -v s="${share:-0}" -v w="$want" 'BEGIN { exit !(s + 1e-9 < w) }'; then
                echo "FAIL: $name: replayed share $share under the shim with --jitter $seed, expected at least $want"
                ok=0
            fi
        done
        if [ $ok -eq 1 ]; then
            echo "ok: $name: digest $a without the shim and with it at each seed, replayed shares $shares with --jitter $(echo $seeds | tr ' ' ','), at least $want"
        else
            fails=$((fails + 1))
        fi
        continue
    fi
    a=$(value "$work/$name.no-shim.drv.json" digest.value)
    b=$(value "$work/$name.shim.drv.json" digest.value)
    share=$(value "$work/$name.json" replayed_share)
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        echo "FAIL: $name: digests $a without the shim, $b with it"
        fails=$((fails + 1))
    elif awk -v s="${share:-0}" -v w="$want" 'BEGIN { exit !(s + 1e-9 < w) }'; then
        echo "FAIL: $name: replayed share $share under the shim, expected at least $want"
        fails=$((fails + 1))
    else
        echo "ok: $name: digest $a without and with the shim, replayed share $share (at least $want)"
    fi
done
[ $fails -eq 0 ] || { echo "FAIL: $fails of $n traces"; exit 1; }
