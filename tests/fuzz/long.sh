#!/bin/sh
# long.sh - the long differential-fuzzing campaign: seeds FIRST..LAST with
# OPS ops each, of the shapes SHAPES (progfuzz's letters, default all), every
# seed run without the shim (twice, once with simulated device time) and with
# it in four engine configurations (run_corpus.sh). JOBS (environment,
# default 1) splits the seeds among that many run_corpus.sh at once. Prints
# every mismatch and the campaign's figures at the end.
# usage: [JOBS=n] tests/fuzz/long.sh [BUILD_DIR] [FIRST] [LAST] [OPS] [SHAPES]
set -u
build=${1:-build} first=${2:-1} last=${3:-2000} ops=${4:-1000} shapes=${5:-ptcdsngfj}
jobs=${JOBS:-1}
here=$(dirname "$0")
tmp=$(mktemp -d)
start=$(date +%s)
count=$((last - first + 1))
j=0
while [ "$j" -lt "$jobs" ]; do
    lo=$((first + count * j / jobs))
    hi=$((first + count * (j + 1) / jobs - 1))
    sh "$here/run_corpus.sh" "$build" "$lo" "$hi" "$ops" "$shapes" > "$tmp/$j.log" 2>&1 &
    j=$((j + 1))
done
wait
cat "$tmp"/*.log | grep -v '^fuzz: seeds'
# Sum the parts' summary lines.
sum=$(cat "$tmp"/*.log | sed -n 's/^fuzz: seeds .*, \([0-9]*\) shim runs, \([0-9]*\) ops per configuration, \([0-9]*\) mismatches, \([0-9]*\) nondeterministic$/\1 \2 \3 \4/p' |
    awk '{r+=$1; o+=$2; m+=$3; z+=$4; n++} END {printf "%d %d %d %d %d", r, o, m, z, n}')
rm -rf "$tmp"
# shellcheck disable=SC2086
set -- $sum  # four numbers, split on purpose
runs=$1 total_ops=$2 fails=$3 racy=$4 parts=$5
rc=0
if [ "$parts" -ne "$jobs" ] || [ "$fails" -ne 0 ] || [ "$racy" -ne 0 ]; then
    rc=1
fi
echo "fuzz campaign: seeds $first..$last, $count programs, shapes $shapes, $ops ops asked," \
    "$total_ops ops per configuration, $runs shim runs, $fails mismatches," \
    "$racy nondeterministic or failing without the shim"
echo "fuzz campaign: $(date -u +%Y-%m-%d), $(( $(date +%s) - start )) s, $jobs jobs, exit $rc"
exit $rc
