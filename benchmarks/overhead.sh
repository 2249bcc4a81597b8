#!/usr/bin/env bash
# overhead.sh - what the shim costs per call, side by side in one run on the
# CPU driver (or on a real driver with --gpu), in four configurations:
#   absent    no shim
#   disabled  preloaded, REPRISE=0 (every call a plain forward)
#   learning  enabled, with a warmup no loop reaches (REPRISE_WARMUP=1000000):
#             every op is recorded and learnt, none replayed
#   replay    enabled with the defaults: the launch loop (64 identical
#             launches between syncs) is captured and replayed
# Measured:
#   - wall ns per call: median of RUNS runs of benchmarks/overhead, per mode;
#   - callgrind instructions per call: (I(N2) - I(N1)) / (N2 - N1), so the
#     one-off costs of loading and initialising cancel out.
# Usage: benchmarks/overhead.sh [BUILD_DIR] [--gpu]
set -euo pipefail
build=${1:-build}
gpu=${2:-}
runs=${RUNS:-7}
n_wall=${N_WALL:-200000}
bin=$build/benchmarks/overhead
. "$(dirname "$0")/common.sh"

run_cfg() { # run_cfg CONFIG MODE N -> prints ns per call
  local cfg=$1 mode=$2 n=$3
  case $cfg in
    absent)   env "${drv_env[@]}" "$bin" "$module" "$mode" "$n" ;;
    disabled) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=0 "$bin" "$module" "$mode" "$n" ;;
    learning) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_WARMUP=1000000 "$bin" "$module" "$mode" "$n" ;;
    replay)   env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 "$bin" "$module" "$mode" "$n" ;;
  esac | awk '{print $3}'
}


echo "# reprise overhead: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}"
printf "%-8s %-9s %12s %12s\n" mode config "ns/call" "vs absent"
for mode in query launch; do
  base=""
  for cfg in absent disabled learning replay; do
    m=$(for _ in $(seq "$runs"); do run_cfg $cfg $mode "$n_wall"; done | median)
    [ -z "$base" ] && base=$m
    printf "%-8s %-9s %12.1f %12s\n" $mode $cfg "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN{printf "%+.1f ns", a-b}')"
  done
done

if command -v valgrind >/dev/null; then
  n1=${N1:-2000}
  n2=${N2:-12000}
  ir() { # ir CONFIG MODE N -> total instructions
    local out
    out=$(mktemp)
    case $1 in
      absent)   env "${drv_env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$2" "$3" >/dev/null 2>"$out" ;;
      disabled) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$2" "$3" >/dev/null 2>"$out" ;;
      learning) env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 REPRISE_WARMUP=1000000 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$2" "$3" >/dev/null 2>"$out" ;;
      replay)   env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$module" "$2" "$3" >/dev/null 2>"$out" ;;
    esac
    awk '/Collected :/ {print $4}' "$out"
    rm -f "$out"
  }
  echo
  printf "%-8s %-9s %14s %14s\n" mode config "instr/call" "vs absent"
  for mode in query launch; do
    base=""
    for cfg in absent disabled learning replay; do
      a=$(ir $cfg $mode $n1)
      b=$(ir $cfg $mode $n2)
      per=$(awk -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" 'BEGIN{printf "%.1f", (b-a)/(n2-n1)}')
      [ -z "$base" ] && base=$per
      printf "%-8s %-9s %14s %14s\n" $mode $cfg "$per" "$(awk -v a="$per" -v b="$base" 'BEGIN{printf "%+.1f", a-b}')"
    done
  done
fi
