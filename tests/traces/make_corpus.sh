#!/bin/sh
# make_corpus.sh - records the committed traces of this directory again
# (after a change of the format, docs/trace.md) from the test programs, on
# the CPU driver with the engine off, and prints the share each replays under
# the shim as corpus.sh runs it: the README.md's expectations are these less
# a point, rounded down.
# usage: tests/traces/make_corpus.sh BUILD_DIR
set -eu
build=$1
dir=$(cd "$(dirname "$0")" && pwd)
drv=$build/cpudriver
mod=$build/kernels/libtestkernels.so
# name | program and arguments | extra variables
while IFS='|' read -r name run extra; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE_DRIVER="$drv/libcuda.so.1" \
        REPRISE_TRACE="$dir/$name.rptrace" $extra $build/apps/${run%% *} $mod ${run#* } >/dev/null
    env LD_LIBRARY_PATH="$drv" REPRISE_IDLE_US=0 REPRISE_COSTS=3000,500,10000 \
        "$build/bin/reprise" replay "$dir/$name.rptrace" --shim --driver "$drv/libcuda.so.1" --timing none \
        --stats "/tmp/make_corpus.$$.json" 2>/dev/null
    share=$(sed -n 's/^  "replayed_share": \([0-9.]*\).*/\1/p' "/tmp/make_corpus.$$.json")
    echo "$name.rptrace  $(wc -c <"$dir/$name.rptrace") bytes  share $share  ($run $extra)"
done <<'LIST'
heat|heat 200|
stepper|stepper 100 5|
decode|decode 120 64|
nosync-fixed|nosync 100 fixed|
nosync-rotate|nosync 100 rotate 8 3|
forkjoin|forkjoin 60 fork 2|
threads|threads 30 4 steady|
selfcapture|selfcapture 24|
pageable-data|pageable 16|REPRISE_TRACE_DATA=1
attrs|attrs 60|
threads-ctx|threads 3 3 ctx|
LIST
rm -f "/tmp/make_corpus.$$.json"
