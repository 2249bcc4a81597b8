#!/bin/sh
# pip_check.sh SOURCE_DIR BUILD_DIR: `pip install SOURCE_DIR` in a fresh
# virtual environment builds the wheel (pyproject.toml: scikit-build-core
# driving the CMake build) and puts the `reprise` command on the
# environment's PATH; `reprise --help` and `python -m reprise` answer; and
# the demo's program (heat, on the CPU driver of BUILD_DIR) prints the same
# checksums without reprise and under the pip-installed one, which replays.
# Needs python3 with venv and the Python package index (CI's plain pass:
# scripts/test.sh configures with -DREPRISE_PIP_TEST=ON).
set -u
src=$1 build=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "pip_check.sh: $*" >&2; exit 1; }
python3 -m venv "$dir/venv" || fail "python3 -m venv failed"
start=$(date +%s)
# The wheel's CMake build on the machine's 2 cores, as the tests' own.
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
"$dir/venv/bin/pip" install --quiet --disable-pip-version-check "$src" >"$dir/pip.log" 2>&1 ||
  { tail -40 "$dir/pip.log" >&2; fail "pip install failed"; }
echo "pip install took $(( $(date +%s) - start )) s"
PATH=$dir/venv/bin:$PATH
export PATH
[ "$(command -v reprise)" = "$dir/venv/bin/reprise" ] || fail "reprise is not on the environment's PATH"
reprise --help >"$dir/help" || fail "reprise --help failed"
grep -q "^usage: reprise " "$dir/help" || fail "reprise --help printed no usage"
python -m reprise --version | grep -q "^reprise [0-9]" || fail "python -m reprise --version failed"
[ -f "$dir/venv/share/man/man1/reprise.1" ] || fail "the man page is not in the environment's share/man"
module=$build/kernels/libtestkernels.so
plain=$(LD_LIBRARY_PATH=$build/cpudriver "$build/apps/heat" "$module" 200) || fail "heat failed"
shimmed=$(LD_LIBRARY_PATH=$build/cpudriver reprise --stats "$dir/s.json" -- "$build/apps/heat" "$module" 200 \
  2>"$dir/err") || fail "heat under the pip-installed reprise failed"
[ "$plain" = "$shimmed" ] || fail "the checksums differ: $plain / $shimmed"
grep -q "^reprise: 1,403 capturable ops, 1,379 replayed" "$dir/err" ||
  { cat "$dir/err" >&2; fail "the pip-installed reprise did not replay"; }
exit 0
