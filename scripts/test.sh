#!/usr/bin/env bash
# The test command: builds with warnings as errors and runs every test
# (unit, CPU driver, integration under real LD_PRELOAD), then does the same
# in a second tree built with AddressSanitizer and UndefinedBehaviorSanitizer,
# then runs the tests with several host threads in a third tree built with
# ThreadSanitizer (the shim and the CPU driver both instrumented).
#   scripts/test.sh            all three passes
#   scripts/test.sh --quick    the first pass only
# It needs a C compiler, make, CMake, the CUDA toolkit's headers (cuda.h),
# cmocka, xmllint, groff and python3 with venv (the pip test of the plain
# pass, which also needs the Python package index). What is missing is installed first when it can be (as
# root, with apt-get); otherwise the script stops at once with the command
# that installs it. A headless browser (Debian's chromium) looks at the
# report page: installed the same way (in CI, CI=true, a browser that
# cannot be had fails the run; elsewhere that test is skipped). nvcc is
# optional (GPU kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
export PATH=/usr/local/cuda/bin:$PATH

# The headers cmocka needs, where CMake's find_path looks for them.
have_header() { # have_header NAME: in the compiler's default include path
  echo "#include <$1>" | ${CC:-cc} -E -x c - >/dev/null 2>&1
}
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v "${CC:-cc}" >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
if command -v "${CC:-cc}" >/dev/null; then
  have_header stdint.h || need+=(libc6-dev)
  have_header cmocka.h || need+=(libcmocka-dev)   # the unit tests
fi
command -v xmllint >/dev/null || need+=(libxml2-utils)  # validates reprise report's page
command -v groff >/dev/null || need+=(groff-base)       # checks the man page reprise(1)
# The pip test (plain pass): a fresh virtual environment of python3.
if ! command -v python3 >/dev/null; then
  need+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null ||
      { echo "test.sh: could not install ${need[*]}" >&2; exit 1; }
  else
    echo "test.sh: missing ${need[*]}; install with:" >&2
    echo "  sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
fi

# The report page's test (page_check.sh, the plain pass) reads it in a real
# browser.
have_browser() {
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null ||
    command -v google-chrome >/dev/null
}
if ! have_browser; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing chromium (the report page's test)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core \
        >/dev/null; } || echo "test.sh: could not install chromium" >&2
  fi
  if ! have_browser; then
    [ "${CI:-}" = true ] && { echo "test.sh: no chromium in CI: the page test needs it" >&2; exit 1; }
    echo "== no chromium: the report page's test is skipped (sudo apt-get install chromium)"
  fi
fi

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

# The plain pass also tests `pip install .` in a fresh virtual environment
# (about 20 s; the package index must be reachable).
pass build -DREPRISE_UNIT_TESTS=ON -DREPRISE_PIP_TEST=ON
if [ "${1:-}" != "--quick" ]; then
  pass build-asan -DREPRISE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug -DREPRISE_UNIT_TESTS=ON
  # ThreadSanitizer exits non-zero on any race it reports: the tests of
  # threads, streams used from several threads, the stress program, graphs
  # whose independent nodes the CPU driver runs on two threads, and the
  # training shape (a backward thread on the legacy stream).
  # tests/tsan.supp: a false positive of glibc's dynamic TLS (said there).
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp${TSAN_OPTIONS:+ $TSAN_OPTIONS}" \
  TESTS='threads|handoff|stress|edges_while|drv_streams|drv_capture|lifecycle|drv_graph_order|a_fork_to|^train_' \
    pass build-tsan -DREPRISE_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug -DREPRISE_UNIT_TESTS=ON
fi
