#!/usr/bin/env bash
# updates.sh - replay with K updated kernel nodes vs the same iteration run
# eagerly, side by side in one run (CPU driver, or --gpu for a real one):
# per iteration, N tick launches (K of them with a changing argument) and a
# synchronize. Columns: eager ns/iter (no shim), replay ns/iter (shim on,
# REPRISE_MAX_UPDATES above N so every replay happens), their ratio, and the
# shim's cost per updated node beyond the K=0 replay; then the same in
# callgrind instructions per iteration.
# Usage: benchmarks/updates.sh [BUILD_DIR] [--gpu]
set -euo pipefail
build=${1:-build}
gpu=${2:-}
n=${N:-64}
iters=${ITERS:-2000}
runs=${RUNS:-5}
bin=$build/benchmarks/updates
. "$(dirname "$0")/common.sh"
run() { # run CONFIG K ITERS -> ns per iteration
  case $1 in
    eager)  env "${drv_env[@]}" "$bin" "$module" "$n" "$2" "$3" ;;
    replay) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_MAX_UPDATES=$((n + 1)) "$bin" "$module" "$n" "$2" "$3" ;;
  esac | sed -n 's/.*ns_per_iter=\([0-9.]*\).*/\1/p'
}
echo "# reprise updates: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}, N=$n launches per iteration"
printf "%4s %14s %14s %8s %16s\n" K "eager ns/it" "replay ns/it" "ratio" "ns per update"
base=""
for k in 0 1 2 4 8 16 32 64; do
  [ "$k" -le "$n" ] || continue
  e=$(for _ in $(seq "$runs"); do run eager "$k" "$iters"; done | median)
  r=$(for _ in $(seq "$runs"); do run replay "$k" "$iters"; done | median)
  [ -z "$base" ] && base=$r
  per=$(awk -v r="$r" -v b="$base" -v k="$k" 'BEGIN{ if (k > 0) printf "%.0f", (r-b)/k; else printf "-" }')
  printf "%4s %14.0f %14.0f %8.2f %16s\n" "$k" "$e" "$r" "$(awk -v e="$e" -v r="$r" 'BEGIN{printf "%.2f", r/e}')" "$per"
done
if command -v valgrind >/dev/null; then
  ir() { # ir CONFIG K ITERS -> instructions
    local out; out=$(mktemp)
    case $1 in
      eager)  env "${drv_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$n" "$2" "$3" >/dev/null 2>"$out" ;;
      replay) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_MAX_UPDATES=$((n + 1)) valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$n" "$2" "$3" >/dev/null 2>"$out" ;;
    esac
    awk '/Collected :/ {print $4}' "$out"; rm -f "$out"
  }
  echo
  printf "%4s %16s %16s %8s\n" K "eager instr/it" "replay instr/it" "ratio"
  for k in 0 1 4 16 64; do
    [ "$k" -le "$n" ] || continue
    e1=$(ir eager "$k" 100); e2=$(ir eager "$k" 400)
    r1=$(ir replay "$k" 100); r2=$(ir replay "$k" 400)
    ei=$(awk -v a="$e1" -v b="$e2" 'BEGIN{printf "%.0f", (b-a)/300}')
    ri=$(awk -v a="$r1" -v b="$r2" 'BEGIN{printf "%.0f", (b-a)/300}')
    printf "%4s %16s %16s %8.2f\n" "$k" "$ei" "$ri" "$(awk -v e="$ei" -v r="$ri" 'BEGIN{printf "%.2f", r/e}')"
  done
fi
