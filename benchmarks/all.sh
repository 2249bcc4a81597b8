#!/usr/bin/env bash
# all.sh - the whole benchmark suite in one command: the launch-bound loop
# (suite.sh), the per-call costs (overhead.sh), replays with k updates
# (updates.sh) and host work inside a step (hostwork.sh), side by side, each
# table with its date and machine.
# Usage: benchmarks/all.sh [BUILD_DIR] [--gpu]
set -euo pipefail
here=$(dirname "$0")
"$here/suite.sh" "$@"
echo
"$here/overhead.sh" "$@"
echo
"$here/updates.sh" "$@"
echo
"$here/hostwork.sh" "$@"
