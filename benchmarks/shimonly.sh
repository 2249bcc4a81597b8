#!/usr/bin/env bash
# shimonly.sh - the shim's own instructions per iteration of launchloop
# (callgrind's self cost of the functions in libreprise.so, every thread),
# for one or more builds side by side: the CPU driver's work is the same in
# every build and is left out, so that a change of the shim's hot path is
# not lost in the whole process's noise (docs/BENCHMARKS.md, "The engine in
# layers"). Settings as benchmarks/suite.sh's reprise rows: the idle watch
# off, costs pinned, the CPU driver running graph nodes in creation order on
# one worker. Per build, K and mode: (I(2n) - I(n)) / n.
# usage: benchmarks/shimonly.sh BUILD_DIR [BUILD_DIR...]   (needs valgrind)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [BUILD_DIR...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "shimonly.sh: valgrind not found" >&2; exit 1; }
base=$1
costs=${COSTS:-1911,146,21970}
ir() { # build mode k iters
  local d b=$1
  d=$(mktemp -d)
  env LD_LIBRARY_PATH="$base/cpudriver" CPUCUDA_GRAPH_ORDER=creation CPUCUDA_GRAPH_WORKERS=1 \
      LD_PRELOAD="$b/lib/libreprise.so" REPRISE=1 REPRISE_IDLE_US=0 REPRISE_COSTS="$costs" \
      valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" \
      "$base/benchmarks/launchloop" "$base/benchmarks/libbenchkernels.so" "$3" "$4" "$2" >/dev/null 2>&1
  callgrind_annotate --auto=no --threshold=100 "$d/cg.out" 2>/dev/null |
    grep -E "shim/|libreprise" | awk '{gsub(",", "", $1); s += $1} END {print s + 0}'
  rm -rf "$d"
}
printf '%-5s %-8s' K mode
for b in "$@"; do printf ' %14s' "$(basename "$(cd "$b" && pwd)")"; done
echo
for k in 10 100; do
  n=$(( k >= 100 ? 40 : 200 ))
  for mode in eager scalars; do
    printf '%-5s %-8s' "$k" "$mode"
    for b in "$@"; do
      a=$(ir "$b" "$mode" "$k" "$n"); c=$(ir "$b" "$mode" "$k" $((2 * n)))
      printf ' %14d' $(( (c - a) / n ))
    done
    echo
  done
done
