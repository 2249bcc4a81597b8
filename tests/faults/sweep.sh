#!/bin/sh
# sweep.sh - fault injection the SQLite way: for every driver entry point the
# shim calls on its own (the program never does), run the program with the
# CPU driver failing call N of that entry, for N = 1, 2, ... until no fault
# fires, in a transient (N) and a persistent (N+) form. Every run must print
# exactly what the program prints without the shim, exit 0, and finish
# within a timeout. Prints one line per entry and a summary.
# usage: sweep.sh BUILD_DIR MAXN APP ARGS...   (MAXN: stop at N = MAXN even if
#        faults still fire; 0 = no limit)
set -u
build=$1 maxn=$2; shift 2
drv=$build/cpudriver
work=${TMPDIR:-/tmp}/reprise-sweep.$$
mkdir -p "$work" || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
asan=
[ -n "${REPRISE_TEST_SANITIZED:-}" ] && asan="ASAN_OPTIONS=verify_asan_link_order=0"

# The driver calls the engine may make on its own: its helpers (shim/core/entries.h,
# RP_HELPERS) and the interposed entries rp__engine_install requires (hooks.c).
entries="cuGraphInstantiateWithFlags cuGraphLaunch cuGraphLaunch_ptsz cuGraphExecDestroy
cuGraphDestroy cuGraphGetNodes cuGraphNodeGetType cuStreamCreate cuStreamGetCtx
cuStreamGetFlags cuEventCreate cuEventDestroy_v2 cuEventSynchronize cuEventRecord
cuPointerGetAttribute cuFuncGetParamInfo cuKernelGetParamInfo cuFuncGetName cuKernelGetName
cuCtxGetCurrent cuLaunchKernel cuMemcpyHtoDAsync_v2 cuMemcpyDtoHAsync_v2 cuMemcpyDtoDAsync_v2
cuMemsetD8Async cuMemsetD16Async cuMemsetD32Async cuStreamBeginCapture_v2 cuStreamEndCapture
cuMemHostAlloc cuMemFreeHost cuStreamDestroy_v2 cuGraphUpload cuStreamGetCaptureInfo_v2
cuGraphExecKernelNodeSetParams_v2 cuGraphExecMemcpyNodeSetParams
cuGraphExecMemsetNodeSetParams cuGraphExecUpdate_v2 cuStreamWaitEvent cuCtxPushCurrent_v2
cuCtxPopCurrent_v2 cuStreamSynchronize"

env LD_LIBRARY_PATH="$drv" CPUCUDA_STATS="$work/plain.json" "$@" >"$work/plain.out" 2>&1 ||
    { echo "FAIL: the program fails without the shim"; cat "$work/plain.out"; exit 1; }
runs=0 fired=0 bad=0 tested=0
for e in $entries; do
    # Entries the program calls itself, in any variant (_v2, _ptsz, _ptds),
    # are left out: a fault there is the program's own error, and the shim
    # may issue the program's op through another variant of the same call
    # (another thread's per-thread stream work goes through the plain one).
    fam=$(echo "$e" | sed 's/_ptsz$//; s/_ptds$//; s/_v2$//')
    grep -Eq "\"${fam}(_v2)?(_ptsz|_ptds)?\":" "$work/plain.json" && continue
    tested=$((tested + 1))
    efired=0
    for form in "" "+"; do
        # A driver that refuses every cuStreamEndCapture leaves the private
        # stream capturing for good; the strict CPU driver then fails the
        # program's cuCtxSynchronize. Documented (docs/engine.md), not swept.
        [ "$e$form" = "cuStreamEndCapture+" ] && continue
        n=1
        while :; do
            # shellcheck disable=SC2086
            timeout 60 env LD_LIBRARY_PATH="$drv" LD_PRELOAD="$build/lib/libreprise.so" REPRISE=1 \
                REPRISE_DRIVER="$drv/libcuda.so.1" CPUCUDA_FAULTS="$e:$n$form" \
                CPUCUDA_STATS="$work/f.json" $asan "$@" >"$work/f.out" 2>"$work/f.err"
            rc=$?
            runs=$((runs + 1))
            f=$(sed -n 's/.*"faults\.fired":\([0-9]*\).*/\1/p' "$work/f.json" 2>/dev/null)
            f=${f:-0}
            if [ $rc -ne 0 ] || ! cmp -s "$work/plain.out" "$work/f.out"; then
                bad=$((bad + 1))
                echo "FAIL: $e:$n$form exit $rc"
                diff "$work/plain.out" "$work/f.out" | head -5
                tail -n 5 "$work/f.err"
            fi
            [ "$f" -eq 0 ] && break
            fired=$((fired + f)); efired=$((efired + f))
            n=$((n + 1))
            [ "$maxn" -gt 0 ] && [ "$n" -gt "$maxn" ] && break
        done
    done
    echo "  $e: $efired faults fired"
done
echo "fault sweep: $* : $tested entries, $runs runs, $fired faults fired, $bad failures"
[ "$bad" -eq 0 ]
