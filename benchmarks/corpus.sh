#!/bin/sh
# corpus.sh - how much of each framework trace the engine replays, run after
# run (issue 35, item 7): every trace of DIR (default ../shared/traces beside
# the checkout, as tests/traces/corpus.sh finds it) replayed RUNS times under
# the shim as tests/traces/corpus.sh replays it (the CPU driver, --timing
# none, the idle watch off, costs pinned), then once at each of three seeds
# with its recorded timing perturbed (--jitter 1, 2, 3, gaps over 20 ms
# shortened to 20 ms, the engine's defaults: its idle watch on, costs
# pinned), as CI's jitter test replays it. Prints a table: per trace the
# worst and best replayed share over the RUNS runs, their spread in points,
# the same over the three jittered runs, and the floor of DIR's README.md.
# Every replay must exit 0 (--strict); the script fails if one does not.
# A benchmark, not a test: the figures are for docs/BENCHMARKS.md.
# usage: benchmarks/corpus.sh BUILD_DIR [RUNS]   (RUNS 5 by default)
#   TRACES=DIR (the traces), SEEDS=1,2,3 (the jitter seeds), KEEP=DIR (keep
#   every replay's output and stats there)
set -u
build=${1:?usage: corpus.sh BUILD_DIR [RUNS]}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
dir=${TRACES:-$here/../../shared/traces}
seeds=$(echo "${SEEDS:-1,2,3}" | tr ',' ' ')
flat=$here/../tests/integration/jsonpaths.awk
cmd=$build/bin/reprise
drv=$build/cpudriver
case $runs in '' | *[!0-9]*) echo "corpus.sh: RUNS must be a number, not '$runs'" >&2; exit 2 ;; esac
[ -x "$cmd" ] || { echo "corpus.sh: no $cmd: build first" >&2; exit 2; }
set -- "$dir"/*.rptrace
[ -f "$1" ] || { echo "corpus.sh: no traces in $dir" >&2; exit 2; }
if [ -n "${KEEP:-}" ]; then
    work=$KEEP
    mkdir -p "$work" || exit 2
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-corpus-bench.XXXXXX") || exit 2
    trap 'rm -rf "$work"' EXIT INT TERM
fi
share() { awk -f "$flat" "$1" | awk -F '\t' '$1 == "replayed_share" { print $2; exit }'; }
# replay TRACE NAME ARGS...: one replay under the shim, its share printed.
replay() {
    rt=$1 rn=$2
    shift 2
    env LD_LIBRARY_PATH="$drv" REPRISE_COSTS=3000,500,10000 "$cmd" replay "$rt" --shim \
        --driver "$drv/libcuda.so.1" --strict --stats "$work/$rn.json" "$@" >"$work/$rn.out" 2>&1 ||
        { echo "corpus.sh: $rn: the replay exited $?:" >&2; tail -3 "$work/$rn.out" >&2; exit 1; }
    share "$work/$rn.json"
}
minmax() { # the worst, the best and the spread in points of the shares on stdin
    awk 'NR == 1 { lo = hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
         END { printf "%.3f %.3f %.1f\n", lo, hi, (hi - lo) * 100 }'
}
echo "| trace | floor | $runs runs: worst | best | spread (points) | jitter $(echo $seeds | tr ' ' ','): worst | best | spread (points) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for t in "$@"; do
    name=$(basename "$t" .rptrace)
    floor=$(awk -F '|' -v n="\`$name.rptrace\`" '$2 ~ n { v = $(NF - 1); gsub(/[^0-9.]/, "", v); print v; exit }' \
        "$dir/README.md" 2>/dev/null)
    i=0
    : >"$work/$name.plain"
    while [ $i -lt "$runs" ]; do
        i=$((i + 1))
        REPRISE_IDLE_US=0 replay "$t" "$name.plain$i" --timing none >>"$work/$name.plain" || exit 1
    done
    : >"$work/$name.jitter"
    for seed in $seeds; do
        replay "$t" "$name.jitter$seed" --jitter "$seed" --max-gap 20 >>"$work/$name.jitter" || exit 1
    done
    # shellcheck disable=SC2046
    set -- $(minmax <"$work/$name.plain") $(minmax <"$work/$name.jitter")
    echo "| $name | ${floor:-?} | $1 | $2 | $3 | $4 | $5 | $6 |"
done
