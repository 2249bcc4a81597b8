#!/usr/bin/env bash
# The test command: builds with warnings as errors and runs every test
# (unit, CPU driver, integration under real LD_PRELOAD), then does the same
# in a second tree built with AddressSanitizer and UndefinedBehaviorSanitizer,
# then runs the tests with several host threads in a third tree built with
# ThreadSanitizer (the shim and the CPU driver both instrumented).
#   scripts/test.sh            all three passes
#   scripts/test.sh --quick    the first pass only
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export PATH=/usr/local/cuda/bin:$PATH

pass() { # pass BUILD_DIR [cmake args...]   (TESTS=regex: only those tests)
  local dir=$1; shift
  echo "== configure $dir $*"
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DREPRISE_WERROR=ON "$@" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  echo "== build $dir"
  cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1 ||
    { grep -E -B2 -A8 'error|Error' "$dir/build.log" | head -120; exit 1; }
  echo "== test $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 300 ${TESTS:+-R "$TESTS"}
}

pass build
if [ "${1:-}" != "--quick" ]; then
  pass build-asan -DREPRISE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
  # ThreadSanitizer exits non-zero on any race it reports: the tests of
  # threads, streams used from several threads, and the stress program.
  TESTS='threads|handoff|stress|edges_while|drv_streams|drv_capture|lifecycle' \
    pass build-tsan -DREPRISE_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DREPRISE_UNIT_TESTS=ON
fi
