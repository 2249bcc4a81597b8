#!/bin/sh
# long.sh - the long differential-fuzzing campaign: seeds FIRST..LAST with
# OPS ops each, every seed run without the shim and with it in three engine
# configurations (run_corpus.sh). Prints the campaign's figures at the end.
# usage: tests/fuzz/long.sh [BUILD_DIR] [FIRST] [LAST] [OPS]
set -u
build=${1:-build} first=${2:-1} last=${3:-2000} ops=${4:-1000}
start=$(date +%s)
sh "$(dirname "$0")/run_corpus.sh" "$build" "$first" "$last" "$ops"
rc=$?
echo "fuzz campaign: $(date -u +%Y-%m-%d), $(( $(date +%s) - start )) s, exit $rc"
exit $rc
