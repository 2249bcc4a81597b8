#!/usr/bin/env bash
# suite.sh - the launch-bound benchmark, side by side in one run: for K tiny
# kernels per iteration (10, 100, 1000), the per-iteration time and per-op
# host time of the eager loop without the shim, with the shim disabled, with
# reprise, and of the hand-written graph (the limit), plus the same loop with
# a scalar that changes every iteration (without and with reprise). Ratios
# are computed against the eager loop of the same round: the configurations
# run in turn, RUNS rounds, and each ratio is given with its spread. Each
# time is the median over the rounds of the median iteration.
# Usage: benchmarks/suite.sh [BUILD_DIR] [--gpu]
set -euo pipefail
build=${1:-build}
gpu=${2:-}
runs=${RUNS:-3}
. "$(dirname "$0")/common.sh"
bin=$build/benchmarks/launchloop

one() { # one CONFIG MODE K ITERS -> ns per iteration
  local cfg=$1 mode=$2 k=$3 iters=$4
  case $cfg in
    absent)   env "${drv_env[@]}" "$bin" "$module" "$k" "$iters" "$mode" ;;
    disabled) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=0 "$bin" "$module" "$k" "$iters" "$mode" ;;
    reprise)  env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 "$bin" "$module" "$k" "$iters" "$mode" ;;
  esac | sed -n 's/.*ns_per_iter=\([0-9.]*\).*/\1/p'
}
# The configurations of one K run in turn (eager, disabled, reprise, graph,
# scalars eager, scalars reprise), RUNS rounds of that: each round's ratios
# against the round's own eager loop, so that a drift of the machine's
# speed between rounds does not bias them. Reported: the median time of
# each configuration, and the min, median and max of its ratio.
spread() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f %.2f %.2f", a[1], m, a[NR]}'; }

echo "# reprise launch-bound suite: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}, $runs alternating rounds"
printf "%5s  %-22s %12s %10s %22s\n" K configuration "us/iter" "ns/op" "vs eager min/med/max"
rows="absent:eager:eager disabled:eager:eager,_shim_disabled reprise:eager:reprise absent:graph:hand-written_graph absent:scalars:scalars_eager reprise:scalars:scalars_reprise"
for k in 10 100 1000; do
  iters=$(( k >= 1000 ? 200 : 1000 ))
  tmp=$(mktemp -d)
  for r in $(seq "$runs"); do
    i=0
    for row in $rows; do
      IFS=: read -r cfg mode _ <<<"$row"
      one "$cfg" "$mode" "$k" "$iters" >"$tmp/$i.$r"
      i=$((i + 1))
    done
  done
  i=0
  for row in $rows; do
    IFS=: read -r _ _ name <<<"$row"
    t=$(cat "$tmp/$i".* | median)
    ratios=$(for r in $(seq "$runs"); do awk -v v="$(cat "$tmp/$i.$r")" -v e="$(cat "$tmp/0.$r")" 'BEGIN{print v/e}'; done | spread)
    printf "%5s  %-22s %12.1f %10.1f %22s\n" "$k" "${name//_/ }" "$(awk -v v="$t" 'BEGIN{print v/1000}')" \
      "$(awk -v v="$t" -v k="$k" 'BEGIN{print v/k}')" "$ratios"
    i=$((i + 1))
  done
  rm -rf "$tmp"
done

# Memory: peak resident set of the eager loop without and with reprise (one
# captured graph of K ops), and the growth per captured op.
rss() { # rss CONFIG K -> max RSS in KiB
  case $1 in
    absent)  env "${drv_env[@]}" "$bin" "$module" "$2" 50 eager ;;
    reprise) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 "$bin" "$module" "$2" 50 eager ;;
  esac | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p'
}
echo
printf "%5s  %14s %14s %16s\n" K "absent KiB" "reprise KiB" "bytes per op"
for k in 10 100 1000 4000; do
  a=$(rss absent "$k"); r=$(rss reprise "$k")
  printf "%5s  %14s %14s %16s\n" "$k" "$a" "$r" "$(awk -v a="$a" -v r="$r" -v k="$k" 'BEGIN{printf "%.0f", (r-a)*1024/k}')"
done

# Instructions per iteration under callgrind (I(2n) - I(n)) / n: repeatable
# where wall time on a 2-core machine is not. The shim acts on time in two
# places, which callgrind (about 50 times slower) would distort: the idle
# watch (off here: REPRISE_IDLE_US=0) and the cost model, which gets the
# costs this machine measured without valgrind (REPRISE_COSTS pinned to a
# native run's costs_ns), so that it decides as it does natively.
if command -v valgrind >/dev/null && [ "${CALLGRIND:-1}" = 1 ]; then
  stats=$(mktemp)
  env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_STATS="$stats" "$bin" "$module" 100 400 scalars >/dev/null
  costs=$(grep -o '"costs_ns": *{[^}]*}' "$stats" | head -1 |
    sed 's/.*"eager_launch": *\([0-9]*\).*"node_update": *\([0-9]*\).*"graph_launch": *\([0-9]*\).*/\1,\2,\3/')
  rm -f "$stats"
  case $costs in 0,*|*,0,*|*,0|'') costs=measure ;; *,*,*) ;; *) costs=measure ;; esac
  echo
  echo "# callgrind rows: REPRISE_IDLE_US=0 REPRISE_COSTS=$costs (eager launch, node update, graph launch, ns, measured natively)"
  ir() { # ir CONFIG MODE K ITERS -> total instructions
    local out; out=$(mktemp)
    case $1 in
      absent)   env "${drv_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$3" "$4" "$2" >/dev/null 2>"$out" ;;
      disabled) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$3" "$4" "$2" >/dev/null 2>"$out" ;;
      reprise)  env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_IDLE_US=0 REPRISE_COSTS="$costs" \
                  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$3" "$4" "$2" >/dev/null 2>"$out" ;;
    esac
    awk '/Collected :/ {print $4}' "$out"; rm -f "$out"
  }
  echo
  printf "%5s  %-22s %14s %9s\n" K configuration "instr/iter" "vs eager"
  for k in 10 100; do
    n=$(( k >= 100 ? 40 : 200 ))
    base=""
    for row in "absent eager eager" "disabled eager eager,_shim_disabled" "reprise eager reprise" \
               "absent graph hand-written_graph" "absent scalars scalars_eager" "reprise scalars scalars_reprise"; do
      set -- $row
      a=$(ir "$1" "$2" "$k" "$n"); b=$(ir "$1" "$2" "$k" $((2 * n)))
      per=$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN{printf "%.0f", (b-a)/n}')
      [ -z "$base" ] && base=$per
      printf "%5s  %-22s %14s %9.2f\n" "$k" "${3//_/ }" "$per" "$(awk -v p="$per" -v e="$base" 'BEGIN{print p/e}')"
    done
  done
fi
