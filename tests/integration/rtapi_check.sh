#!/bin/sh
# rtapi_check.sh - runs a CUDA runtime API program (rtapi_static or
# rtapi_shared) under the enabled shim on the CPU driver. The program stops
# at cudart's private tables (cuGetExportTable), which the CPU driver cannot
# serve; what is checked is that cudart's driver lookups went through the
# shim. Exits 77 (skipped) when the program was not built (no nvcc).
#
# usage: rtapi_check.sh [--sanitized] [--asan-runtime LIB] BUILD_DIR PROGRAM
set -u
here=$(dirname "$0")
flags=
while [ $# -gt 0 ]; do
    case $1 in
        --sanitized) flags="$flags $1"; shift ;;
        --asan-runtime) flags="$flags $1 $2"; shift 2 ;;
        *) break ;;
    esac
done
build=$1
prog=${2:-}
if [ -z "$prog" ]; then
    echo "skipped: nvcc was not found, so the runtime-API programs were not built"
    exit 77
fi
[ -x "$prog" ] || { echo "FAIL: $prog is not built"; exit 1; }
# shellcheck disable=SC2086
exec sh "$here/expect_stats.sh" $flags --may-fail --stats shim "$build" \
    enabled=true \
    'proc_address.lookups>100' \
    'proc_address.wrapped[]=cuLaunchKernel' \
    'proc_address.wrapped[]=cuLaunchKernel_ptsz' \
    'proc_address.wrapped[]=cuMemcpyHtoDAsync_v2' \
    'proc_address.wrapped[]=cuMemcpyHtoDAsync_v2_ptsz' \
    'proc_address.wrapped[]=cuStreamSynchronize' \
    -- "$prog" 4
