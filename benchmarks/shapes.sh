#!/usr/bin/env bash
# shapes.sh - issue 28's framework shapes, several runs each: every line of
# tests/apps/shapes_expect.txt (a program of tests/apps with its arguments
# and variables) is run RUNS times (default 5) with the shim absent and
# enabled in turn (absent, enabled, absent, ...: pairing keeps the ratio
# meaningful when the machine's speed drifts), every option at its default
# unless the line sets one, on the CPU driver with the line's
# CPUCUDA_DELAY_US (20 in every line; DELAY_US overrides it). Per shape it
# prints each enabled run's replayed share and what the shim's stats say
# went wrong (ops run eagerly by reason, idle flushes, periods and
# landmarks found, divergences, graphs captured and failed captures, launch
# attributes that were boundaries, launches captured without the
# programmatic stream serialization they asked for (pss dropped), and the
# captured sequences by the reason
# of their last divergence), then the share's min, max and spread in
# points, and the median wall time of the whole process absent and enabled
# and their ratio. A last table has one line per shape. Every enabled run
# must print the checksums the absent run printed; the script fails if not.
# Timing decides these shapes (host gaps against the idle flush), so the
# spread from run to run is a result, not noise to hide.
# Usage: benchmarks/shapes.sh [BUILD_DIR] [--gpu]
#   RUNS=N (5), SHAPES=REGEX (names to run, default all), DELAY_US=US,
#   EXPECT=FILE (tests/apps/shapes_expect.txt), KEEP=DIR (keep every run's
#   stdout and stats there)
set -euo pipefail
build=${1:-build}
gpu=${2:-}
runs=${RUNS:-5}
filter=${SHAPES:-.}
here=$(cd "$(dirname "$0")" && pwd)
expect=${EXPECT:-$here/../tests/apps/shapes_expect.txt}
. "$here/common.sh"
paths=$here/../tests/integration/jsonpaths.awk
apps=$build/apps
# The test programs take the test kernels, not the benchmarks' module.
if [ "$gpu" = "--gpu" ]; then
  module=$build/kernels/testkernels.cubin
else
  module=$build/kernels/libtestkernels.so
fi
[ -f "$module" ] || { echo "error: $module is not built" >&2; exit 1; }
[ -f "$shim" ] || { echo "error: $shim is not built" >&2; exit 1; }
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# now_ns: a monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }

# one MODE TAG ENV... -- PROGRAM ARGS...: runs once, stdout to $work/TAG.out,
# stats (enabled) to $work/TAG.json; prints the wall seconds.
one() {
  local mode=$1 tag=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local pre=()
  if [ "$mode" = enabled ]; then
    pre=(LD_PRELOAD="$shim" REPRISE=1 REPRISE_STATS="$work/$tag.json")
  fi
  local t0 t1 rc=0
  t0=$(now_ns)
  env "${drv_env[@]}" "${envs[@]}" "${pre[@]}" "$@" >"$work/$tag.out" 2>"$work/$tag.err" || rc=$?
  t1=$(now_ns)
  if [ $rc -ne 0 ]; then
    echo "error: $mode run exited $rc: $*" >&2
    tail -n 5 "$work/$tag.out" "$work/$tag.err" >&2
    exit 1
  fi
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}

# diag JSON: one line of what the stats say went wrong.
diag() {
  awk -f "$paths" "$1" | awk -F '\t' '
    $1 == "replayed_share" { share = $2 }
    $1 ~ /^engine\.ops_eager\./ && $1 != "engine.ops_eager_total" && $2 + 0 > 0 {
      k = substr($1, 18); eager = eager (eager ? " " : "") k "=" $2 }
    $1 ~ /^engine\.attr_boundaries\./ && $2 + 0 > 0 {
      k = substr($1, 24); attr = attr (attr ? " " : "") k "=" $2 }
    $1 == "engine.programmatic_serialization_dropped" { pssd = $2 + 0 }
    $1 == "engine.idle_flushes" { idle = $2 }
    $1 == "engine.periods_found" { per = $2 }
    $1 == "engine.landmarks_found" { lm = $2 }
    $1 == "engine.divergences" { div = $2 }
    $1 == "engine.graphs_captured" { gr = $2 }
    $1 == "engine.capture_failures" { cf = $2 }
    $1 == "engine.sequences[].divergences" { sdiv = $2 + 0 }
    $1 == "engine.sequences[].last_divergence.reason" {
      r = $2
      if (r ~ /^a boundary/) r = "boundary"
      else if (r ~ /^another/) r = "another_op"
      else if (r ~ /^same operation/) r = "other_args"
      seqs[r] += 1; divs[r] += sdiv }
    END {
      s = ""
      for (r in seqs) s = s (s ? " " : "") r "=" seqs[r] "(" divs[r] ")"
      printf "%s | eager: %s | idle %s periods %s landmarks %s div %s graphs %s capfail %s",
        share, eager ? eager : "-", idle, per, lm, div, gr, cf
      if (attr) printf " | attr: %s", attr
      if (pssd) printf " | pss dropped %d", pssd
      printf " | last div by reason: %s\n", s ? s : "-"
    }'
}

# stats COLUMN FILE -> min median max
colstats() {
  local col=$1 f=$2
  printf "%s %s %s" "$(awk -v c="$col" '{print $c}' "$f" | sort -g | head -n 1)" \
    "$(awk -v c="$col" '{print $c}' "$f" | median)" \
    "$(awk -v c="$col" '{print $c}' "$f" | sort -g | tail -n 1)"
}

echo "# reprise on issue 28's shapes: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}, $runs runs each"
echo "# shares are REPRISE_STATS replayed_share; wall: the whole process, seconds, median of $runs"
echo "# last div by reason: captured sequences by the reason of their last divergence (their divergences in parentheses)"
summary=$work/summary
: >"$summary"
status=0
while IFS= read -r line; do
  case $line in '#'* | '') continue ;; esac
  IFS='|' read -r name cmdline exprs envs <<<"$line"
  [[ $name =~ $filter ]] || continue
  read -r -a cmd <<<"$cmdline"
  read -r -a env_list <<<"${envs:-}"
  if [ -n "${DELAY_US:-}" ]; then
    env_list+=(CPUCUDA_DELAY_US="$DELAY_US")
  fi
  prog=$apps/${cmd[0]}
  [ -x "$prog" ] || { echo "error: $prog is not built" >&2; exit 1; }
  echo
  echo "## $name: ${cmdline} (${envs:-no variables}); goal: $exprs"
  rows=$work/$name.rows
  : >"$rows"
  for r in $(seq "$runs"); do
    ta=$(one absent "$name.$r.absent" "${env_list[@]}" -- "$prog" "$module" "${cmd[@]:1}")
    te=$(one enabled "$name.$r.enabled" "${env_list[@]}" -- "$prog" "$module" "${cmd[@]:1}")
    if ! cmp -s "$work/$name.$r.absent.out" "$work/$name.$r.enabled.out"; then
      echo "error: run $r printed other checksums with the shim enabled" >&2
      diff "$work/$name.$r.absent.out" "$work/$name.$r.enabled.out" >&2 || true
      status=1
    fi
    d=$(diag "$work/$name.$r.enabled.json")
    share=${d%% |*}
    echo "$share $ta $te" >>"$rows"
    printf "  run %d: share %s  absent %6.3f s  enabled %6.3f s\n    %s\n" "$r" "$share" "$ta" "$te" "${d#* | }"
  done
  read -r smin smed smax <<<"$(colstats 1 "$rows")"
  read -r _ amed _ <<<"$(colstats 2 "$rows")"
  read -r _ emed _ <<<"$(colstats 3 "$rows")"
  spread=$(awk -v a="$smin" -v b="$smax" 'BEGIN { printf "%.1f", (b - a) * 100 }')
  ratio=$(awk -v a="$amed" -v e="$emed" 'BEGIN { printf "%.3f", e / a }')
  shares=$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' "$rows")
  printf "  share min %s max %s spread %s points; wall median absent %.3f s, enabled %.3f s, enabled/absent %s\n" \
    "$smin" "$smax" "$spread" "$amed" "$emed" "$ratio"
  printf "%-58s %-36s %6s %6s %6s %8s %8s %7s\n" "$name" "$shares" "$smin" "$smax" "$spread" \
    "$amed" "$emed" "$ratio" >>"$summary"
done <"$expect"

echo
printf "%-58s %-36s %6s %6s %6s %8s %8s %7s\n" shape "shares (enabled runs)" min max "spread" \
  "absent s" "enabled" ratio
cat "$summary"
exit $status
