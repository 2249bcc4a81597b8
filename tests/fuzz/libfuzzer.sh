#!/bin/sh
# libfuzzer.sh - runs a libFuzzer target the same way every time (issue 34,
# finding 4): its corpus is a fresh copy of the committed seed files in a
# folder of its own, removed afterwards (libFuzzer adds what it finds to its
# corpus folder, so a corpus kept in the build tree grows with every run
# and no two runs are the same test), and the seed, the number of runs and
# the bounds on an input's length, memory and time are fixed.
# usage: libfuzzer.sh TARGET RUNS MAX_LEN SEED_FILE...
# Exit status: the target's (0: every input passed).
set -u
[ $# -ge 4 ] || { echo "usage: $0 TARGET RUNS MAX_LEN SEED_FILE..." >&2; exit 2; }
target=$1 runs=$2 max_len=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-libfuzzer.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/corpus" || exit 2
for f in "$@"; do
    cp "$f" "$work/corpus/" || exit 2
done
# A crash or a leak leaves its input beside the target (crash-*, oom-*).
"$target" -runs="$runs" -max_len="$max_len" -seed=1 -rss_limit_mb=512 -timeout=20 \
    -artifact_prefix="$(dirname "$target")/" "$work/corpus"
