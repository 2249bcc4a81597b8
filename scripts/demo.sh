#!/usr/bin/env bash
# The demo: builds reprise, then runs a launch-heavy test program (heat) with
# and without `reprise`, on the GPU when a real driver with a device is
# present, otherwise on the project's CPU driver; checks that both runs print
# the same checksum and shows what reprise saw, printing each command it runs
# and, last, the one to run on your own program. It needs a C compiler,
# make, CMake and the CUDA toolkit's headers (cuda.h); nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD:-build}
iters=${1:-200}

# DEMO_BUILT=1: the tree is built already (the demo's test runs it so).
if [ "${DEMO_BUILT:-}" != 1 ]; then
  echo "== building into $build"
  mkdir -p "$build"
  cmake -S . -B "$build" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
  # The demo needs no cmocka: say so when the unit tests are left out.
  grep -h 'unit tests are skipped' "$build/configure.log" | sed 's/^-- /   /' || true
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >"$build/build.log" 2>&1 ||
    { grep -E -B2 -A8 'error|Error' "$build/build.log" | head -80; exit 1; }
fi

app=$build/apps/heat
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU &&
   [ -f "$build/kernels/testkernels.cubin" ]; then
  where="GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
  module=$build/kernels/testkernels.cubin
  run_env=()
else
  # No GPU: the program's libcuda.so.1 is the CPU driver, found where the
  # loader is told to look.
  where="CPU driver (no GPU here: $build/cpudriver/libcuda.so.1)"
  module=$build/kernels/libtestkernels.so
  run_env=(LD_LIBRARY_PATH="$build/cpudriver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi

stats=$build/demo-stats.json
echo "== running heat ($iters iterations) on the $where, without then with reprise"
echo "\$ ${run_env[*]}${run_env[*]:+ }$app $module $iters"
plain=$(env "${run_env[@]}" "$app" "$module" "$iters")
echo "$plain" | sed 's/^/  /'
echo "\$ ${run_env[*]}${run_env[*]:+ }$build/bin/reprise --summary 0 --stats $stats -- $app $module $iters"
shimmed=$(env "${run_env[@]}" "$build/bin/reprise" --summary 0 --stats "$stats" -- "$app" "$module" "$iters")
echo "$shimmed" | sed 's/^/  /'
if [ "$plain" != "$shimmed" ]; then
  echo "demo: the checksums differ: that is a bug in reprise" >&2
  exit 1
fi
echo "== identical results. What reprise did:"
echo "\$ $build/bin/reprise report -o $build/demo-report.html $stats"
"$build/bin/reprise" report -o "$build/demo-report.html" "$stats" | sed 's/^/  /'
echo "== the same as a page: $build/demo-report.html; every key of $stats: docs/stats.md"
echo "== now try it on your own program (a summary is printed at its exit):"
if [ ${#run_env[@]} -gt 0 ]; then
  echo "  LD_LIBRARY_PATH=$(cd "$build/cpudriver" && pwd) $build/bin/reprise --stats stats.json -- ./your_program args..."
  echo "  (no GPU here: LD_LIBRARY_PATH puts the CPU driver where a CUDA program looks for libcuda.so.1)"
else
  echo "  $build/bin/reprise --stats stats.json -- ./your_program args..."
fi
