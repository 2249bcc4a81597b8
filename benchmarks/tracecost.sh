#!/usr/bin/env bash
# tracecost.sh - what recording a trace (REPRISE_TRACE) costs per call on the
# program's thread, and the bytes it writes:
#   1. benchmarks/tracecost: the shim's own code in front of fake driver
#      entries that return at once (the driver taken out of the figure):
#      ns per call disabled / wrappers on / recorded, the fastest and the
#      median of BATCHES batches (a loaded machine preempts batches; the
#      fastest is the undisturbed cost);
#   2. the same under callgrind: instructions per call, differential
#      ((I(N2) - I(N1)) / (N2 - N1): opening the trace cancels out);
#   3. benchmarks/overhead on the CPU driver (or a real one with --gpu)
#      under callgrind, absent / disabled / recorded (engine off) / engine
#      on / engine on and recorded: the recorder's instructions next to the
#      driver's (the disabled wrapper is where recording off is measured);
#   4. the bytes per launch of the trace of `overhead args`.
# Usage: benchmarks/tracecost.sh [BUILD_DIR] [--gpu]
set -euo pipefail
build=${1:-build}
gpu=${2:-}
batches=${BATCHES:-300}
n=${N:-5000}
bin=$build/benchmarks/overhead
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/common.sh"

echo "# reprise trace cost: $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, driver: ${gpu:-cpu}"
echo "## 1. the recorder alone (fake driver)"
"$build/benchmarks/tracecost" "$n" "$batches" "$tmp/micro.trace"

if command -v valgrind >/dev/null; then
  echo
  echo "## 2. the recorder alone, instructions per call (callgrind)"
  printf "%-7s %10s %10s %10s %18s\n" call disabled enabled traced "traced - disabled"
  for call in query launch args; do
    row=()
    for cfg in disabled enabled traced; do
      a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$build/benchmarks/tracecost" 1000 1 \
          "$tmp/cg.trace" $call $cfg 2>&1 | awk '/Collected :/ {print $4}')
      b=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$build/benchmarks/tracecost" 1000 11 \
          "$tmp/cg.trace" $call $cfg 2>&1 | awk '/Collected :/ {print $4}')
      row+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", (b-a)/10000}')")
    done
    printf "%-7s %10s %10s %10s %18s\n" $call "${row[0]}" "${row[1]}" "${row[2]}" \
      "$(awk -v a="${row[2]}" -v b="${row[0]}" 'BEGIN{printf "%+.1f", a-b}')"
  done

  echo
  echo "## 3. through the driver: benchmarks/overhead, instructions per call (callgrind)"
  cfg_env() {
    case $1 in
      absent)   echo ;;
      disabled) echo "LD_PRELOAD=$shim" ;;
      traced)   echo "LD_PRELOAD=$shim REPRISE_TRACE=$tmp/o.trace" ;;
      engine)   echo "LD_PRELOAD=$shim REPRISE=1 REPRISE_WARMUP=1000000" ;;
      engine+traced) echo "LD_PRELOAD=$shim REPRISE=1 REPRISE_WARMUP=1000000 REPRISE_TRACE=$tmp/o.trace" ;;
    esac
  }
  n1=${N1:-2000}
  n2=${N2:-12000}
  ir() {
    # shellcheck disable=SC2046
    env "${drv_env[@]}" $(cfg_env "$1") valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      "$bin" "$module" "$2" "$3" 2>&1 >/dev/null | awk '/Collected :/ {print $4}'
  }
  printf "%-7s %-14s %12s %14s\n" mode config "instr/call" "recording"
  for mode in query launch args; do
    declare -A p=()
    for cfg in absent disabled traced engine engine+traced; do
      a=$(ir "$cfg" $mode $n1)
      b=$(ir "$cfg" $mode $n2)
      p[$cfg]=$(awk -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" 'BEGIN{printf "%.1f", (b-a)/(n2-n1)}')
    done
    for cfg in absent disabled traced engine engine+traced; do
      extra=""
      [ "$cfg" = disabled ] && extra=$(awk -v a="${p[disabled]}" -v b="${p[absent]}" 'BEGIN{printf "%+.1f (wrapper)", a-b}')
      [ "$cfg" = traced ] && extra=$(awk -v a="${p[traced]}" -v b="${p[disabled]}" 'BEGIN{printf "%+.1f", a-b}')
      [ "$cfg" = engine+traced ] && extra=$(awk -v a="${p[engine+traced]}" -v b="${p[engine]}" 'BEGIN{printf "%+.1f", a-b}')
      printf "%-7s %-14s %12s %14s\n" $mode "$cfg" "${p[$cfg]}" "$extra"
    done
    unset p
  done
fi

echo
echo "## 4. bytes"
env "${drv_env[@]}" LD_PRELOAD="$shim" REPRISE_TRACE="$tmp/args.trace" "$bin" "$module" args 100000 >/dev/null
echo "the trace of 'overhead args 100000': $(wc -c <"$tmp/args.trace") bytes"
"$build/bin/reprise" trace info "$tmp/args.trace" | grep -E '^launches:'
