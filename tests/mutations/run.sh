#!/bin/sh
# run.sh - checks the test suite's strength against known mistakes: each
# patch here is one small deliberate bug in the shim, its recorder or the
# trace tools (a mutation). For each, the tree is rebuilt with the patch
# applied, in a copy of the working tree, and the whole ctest suite runs;
# the mutation must make at least one test fail by a wrong output: a
# program printing a wrong checksum (its stdout differing from the run
# without the shim; so does a run that the program's own watchdog ended,
# its stdout saying `error: hung: ...` instead of its checksums:
# tests/apps/hostwait), an unequal digest (two replays of a trace, or a
# program's run and its trace's replay: the fidelity digest, issue 34), or
# a failed check of what a trace holds (a record of high bytes that cannot
# be read). A share or count threshold alone does not count: it catches a
# mutation only where no output can show it. A mutation that no output can
# show (a fault count: issue 34, class g) names the check that catches it
# instead, in a first line `Caught-by: ERE` before its diff: a line of the
# failing tests' log matching ERE counts as its catch. Prints, per
# mutation, the tests that caught it, and exits 1 if any mutation
# survived. Not part of CI (about a minute per
# mutation on 2 cores); docs/RELIABILITY.md has the latest figures.
# usage: tests/mutations/run.sh [PATCH...]   (default: every *.patch here)
# MUTATION_EXCLUDE=REGEX leaves out the tests it matches (ctest -E), for
# tests that fail on the unmutated tree too (a finding not fixed yet): a
# mutation caught only by them proves nothing.
# MUTATION_TESTS=REGEX runs only the tests it matches (ctest -R): a quick
# check of new mutations against the tests meant to catch them (the whole
# suite is the real run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${TMPDIR:-/tmp}/reprise-mutations.$$
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/src" || exit 1
(cd "$repo" && git ls-files -z | xargs -0 tar -cf - ) | tar -xf - -C "$work/src" || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
echo "== building the unmutated tree"
cmake -S "$work/src" -B "$work/build" -DREPRISE_UNIT_TESTS=OFF >"$work/configure.log" 2>&1 &&
    cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 ||
    { echo "build failed: $work/build.log"; tail -20 "$work/build.log"; exit 1; }
[ $# -gt 0 ] || set -- "$here"/*.patch
survived=0
for p in "$@"; do
    name=$(basename "$p" .patch)
    (cd "$work/src" && patch -s -p1 <"$p") || { echo "$name: the patch does not apply"; survived=1; continue; }
    if ! cmake --build "$work/build" -j "$jobs" >"$work/build-$name.log" 2>&1; then
        echo "$name: does not build ($work/build-$name.log)"; survived=1
    else
        ctest --test-dir "$work/build" -j "$jobs" --timeout 120 --output-on-failure \
            ${MUTATION_EXCLUDE:+-E "$MUTATION_EXCLUDE"} ${MUTATION_TESTS:+-R "$MUTATION_TESTS"} \
            >"$work/ctest-$name.log" 2>&1
        caught=$(grep -E '^[[:space:]]*[0-9]+ - .* \(Failed|Timeout|SEGFAULT\)' "$work/ctest-$name.log" |
                 sed 's/^[[:space:]]*[0-9]* - //; s/ (.*//' | tr '\n' ' ')
        wrong=$(grep -c 'printed a different stdout\|MISMATCH\|^error: hung: \|digests differ\|^UNFAITHFUL\|cannot be read (its check byte)' \
                "$work/ctest-$name.log")
        check=$(sed -n '1s/^Caught-by: //p' "$p")
        checks=0
        [ -n "$check" ] && checks=$(grep -Ec "$check" "$work/ctest-$name.log")
        if [ -z "$caught" ]; then
            echo "$name: SURVIVED (no test failed)"; survived=1
        elif [ "$wrong" -gt 0 ]; then
            echo "$name: caught, $wrong wrong outputs or digests, by: $caught"
        elif [ "$checks" -gt 0 ]; then
            echo "$name: caught, $checks failed checks ($check), by: $caught"
        else
            echo "$name: caught, but by no wrong output or digest: $caught"; survived=1
        fi
    fi
    (cd "$work/src" && patch -s -R -p1 <"$p")
done
exit $survived
