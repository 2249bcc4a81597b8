#!/bin/sh
# snapshot.sh - a behaviour snapshot of the engine, for reshaping it without
# changing what it does: runs every single-threaded integration program (the
# _runs list of tests/integration/CMakeLists.txt whose output cannot depend
# on thread timing) with the shim enabled, and writes the shim's and the CPU
# driver's statistics, flattened to "path value" lines with the fields that
# legitimately vary (pid, host, times, paths) removed, one file per run.
# Two snapshots of the same behaviour are identical: compare with diff -r.
# usage: tests/refactor/snapshot.sh BUILD_DIR OUT_DIR
set -u
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
paths=$here/../integration/jsonpaths.awk
drv=$build/cpudriver
mod=$build/kernels/libtestkernels.so
mkdir -p "$out" || exit 1
norand=
setarch -R true 2>/dev/null && norand="setarch -R"
# Program and arguments; the multi-threaded programs are left out (their
# counters depend on which thread gets the context's lock first), and so is
# selfcapture: its steps are found by a landmark, cut where the op whose
# shape hashes smallest begins (winnowing), and a shape hashes its kernel's
# handle, an address that moves with the shim's own size from build to
# build (the same build with ASLR off gives the same counts every run).
while read -r name app args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    # The CPU driver's graph order is fixed (a random one would move counts
    # that depend on which node runs first), the idle watch off and the costs
    # pinned to the priors (both act on timing).
    # Address-space randomisation off too, where setarch can: the tables
    # the engine hashes pointers into (detector slots, a period's hash head)
    # then fill alike in every run (selfcapture's counts moved with it).
    $norand env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
        CPUCUDA_GRAPH_ORDER=creation CPUCUDA_GRAPH_WORKERS=1 REPRISE_IDLE_US=0 \
        REPRISE_COSTS=3500,700,7000 \
        REPRISE_DRIVER="$drv/libcuda.so.1" REPRISE_STATS="$out/$name.shim.json" \
        CPUCUDA_STATS="$out/$name.drv.json" "$build/apps/$app" "$mod" $args \
        >"$out/$name.out" 2>"$out/$name.err"
    for k in shim drv; do
        awk -f "$paths" "$out/$name.$k.json" |
            grep -Ev '^(pid|host|rank|rank_from|driver\.path|reprise_version|graph_order|graph_workers|wall_s)	|_ns	|_us	|costs_ns|cost_samples|time|elapsed' \
            >"$out/$name.$k.txt"
        rm -f "$out/$name.$k.json"
    done
done <<LIST
heat heat 40
heat_small heat 25 1000
heat_pageable heat 30 1000 pageable
pingpong pingpong 48
pingpong_odd pingpong 45 3
pingpong_three pingpong 60 2 3
stepper stepper 40
stepper_every5 stepper 30 5
stepper_sync stepper 100 1
stepper_200 stepper 200 1
runtime_like runtime_like 40
pageable pageable 16
libkernel libkernel 40
kernelcheck kernelcheck 2
phases phases 120 40
phases_grid phases 40 40 grid
badinput badinput 8
bounce_copy bounce 30 copy
bounce_mapped bounce 30 mapped
bounce_hostfn bounce 30 hostfn
midseq_ctx_ptsz midseq 6 ctx-ptsz
midseq_ctx_stream midseq 6 ctx-stream
midseq_ctx_legacy midseq 6 ctx-legacy
cxxnames cxxnames 30
subtle_lastbyte subtle 12 lastbyte
subtle_gridy subtle 12 gridy
subtle_memset subtle 12 memset
subtle_event subtle 24 event
subtle_staging subtle 40 staging
LIST
echo "snapshot: $(ls "$out"/*.txt | wc -l) files in $out"
