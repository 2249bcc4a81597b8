#!/usr/bin/env bash
# hostwork.sh - host work inside a step (issue 14): per step, half of K
# launches, HOST_US of host work without a driver call, the other half, a
# synchronize (benchmarks/hostwork). Eagerly the first half runs during the
# host work; reprise must not hold it until the step is complete. Runs the
# loop without the shim and with reprise in turn (absent, reprise, absent,
# ...: pairing keeps each ratio meaningful when the machine's speed drifts),
# and prints each pair's median step time and ratio, then min/median/max of
# each column over the RUNS pairs.
# Device time: on the CPU driver each op sleeps DELAY_US (CPUCUDA_DELAY_US,
# also per graph node); with --gpu each kernel waits KERNEL_US on the GPU.
# Defaults: K=20, 250 us a kernel, 5 ms of host work: 5 ms of device time a
# step, half of it hidden behind the host work when run eagerly (7.5 ms a
# step at best) and none if the first half is held (10 ms).
# Usage: benchmarks/hostwork.sh [BUILD_DIR] [--gpu]
set -euo pipefail
build=${1:-build}
gpu=${2:-}
runs=${RUNS:-5}
k=${K:-20}
iters=${ITERS:-40}
host_us=${HOST_US:-5000}
. "$(dirname "$0")/common.sh"
bin=$build/benchmarks/hostwork
if [ "$gpu" = "--gpu" ]; then
  kernel_us=${KERNEL_US:-250}
  dev_env=()
  dev="each kernel ${kernel_us} us on the GPU"
else
  kernel_us=0
  dev_env=(CPUCUDA_DELAY_US="${DELAY_US:-250}")
  dev="CPUCUDA_DELAY_US=${DELAY_US:-250}"
fi

one() { # one CONFIG -> us per step
  case $1 in
    absent)  env "${drv_env[@]}" "${dev_env[@]}" "$bin" "$module" "$k" "$iters" "$host_us" "$kernel_us" ;;
    reprise) env "${drv_env[@]}" "${dev_env[@]}" LD_PRELOAD="$shim" REPRISE=1 \
               "$bin" "$module" "$k" "$iters" "$host_us" "$kernel_us" ;;
  esac | sed -n 's/.*us_per_step=\([0-9.]*\).*/\1/p'
}
# stats COLUMN FILE -> min median max of that column
stats() {
  local col=$1 f=$2
  printf "%s %s %s" "$(awk -v c="$col" '{print $c}' "$f" | sort -g | head -n 1)" \
    "$(awk -v c="$col" '{print $c}' "$f" | median)" \
    "$(awk -v c="$col" '{print $c}' "$f" | sort -g | tail -n 1)"
}

echo "# reprise host work in a step: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}"
echo "# K=$k launches a step, host work ${host_us} us after the first $((k / 2)), $dev, median step of $iters, $runs pairs"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
printf "%4s %16s %16s %10s\n" pair "eager us/step" "reprise us/step" "ratio"
for r in $(seq "$runs"); do
  e=$(one absent)
  p=$(one reprise)
  if [ -z "$e" ] || [ -z "$p" ]; then
    echo "error: a run printed no step time" >&2
    exit 1
  fi
  q=$(awk -v e="$e" -v p="$p" 'BEGIN{printf "%.3f", p/e}')
  echo "$e $p $q" >>"$rows"
  printf "%4s %16.1f %16.1f %10.3f\n" "$r" "$e" "$p" "$q"
done
echo
printf "%-22s %10s %10s %10s\n" "" min median max
read -r a b c <<<"$(stats 1 "$rows")"
printf "%-22s %10.1f %10.1f %10.1f\n" "eager us/step" "$a" "$b" "$c"
read -r a b c <<<"$(stats 2 "$rows")"
printf "%-22s %10.1f %10.1f %10.1f\n" "reprise us/step" "$a" "$b" "$c"
read -r a b c <<<"$(stats 3 "$rows")"
printf "%-22s %10.3f %10.3f %10.3f\n" "ratio reprise/eager" "$a" "$b" "$c"
