#!/usr/bin/env bash
# The demo: builds reprise, then runs a launch-heavy test program (heat) with
# and without `reprise`, on the GPU when a real driver with a device is
# present, otherwise on the project's CPU driver; checks that both runs print
# the same checksum and shows what reprise saw. It needs a C compiler, make,
# CMake and the CUDA toolkit's headers (cuda.h); nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
build=${BUILD:-build}
iters=${1:-200}

echo "== building into $build"
mkdir -p "$build"
cmake -S . -B "$build" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
# The demo needs no cmocka: say so when the unit tests are left out.
grep -h 'unit tests are skipped' "$build/configure.log" | sed 's/^-- /   /' || true
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >"$build/build.log" 2>&1 ||
  { grep -E -B2 -A8 'error|Error' "$build/build.log" | head -80; exit 1; }

app=$build/apps/heat
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU &&
   [ -f "$build/kernels/testkernels.cubin" ]; then
  where="GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
  module=$build/kernels/testkernels.cubin
  driver_opts=()
  run_env=()
else
  where="CPU driver (no GPU here: $build/cpudriver/libcuda.so.1)"
  module=$build/kernels/libtestkernels.so
  drv=$(cd "$build/cpudriver" && pwd)
  driver_opts=(--driver "$drv/libcuda.so.1")
  run_env=(LD_LIBRARY_PATH="$drv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi

stats=$build/demo-stats.json
echo "== running heat ($iters iterations) on the $where"
plain=$(env "${run_env[@]}" "$app" "$module" "$iters")
shimmed=$(env "${run_env[@]}" "$build/bin/reprise" --summary 0 --stats "$stats" "${driver_opts[@]}" -- "$app" "$module" "$iters")
echo "without reprise:"; echo "$plain" | sed 's/^/  /'
echo "with reprise:"; echo "$shimmed" | sed 's/^/  /'
if [ "$plain" != "$shimmed" ]; then
  echo "demo: the checksums differ: that is a bug in reprise" >&2
  exit 1
fi
echo "== identical results. What reprise did (reprise report $stats):"
"$build/bin/reprise" report --html "$build/demo-report.html" "$stats" | sed 's/^/  /'
echo "== the same as a page: $build/demo-report.html; every key of $stats: docs/stats.md"
