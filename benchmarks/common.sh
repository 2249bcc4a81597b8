# common.sh - what the benchmark scripts share: where the binaries, the
# shim and the driver are, and the median of numbers read on stdin.
# Sourced with $build and $gpu set; sets shim, module, drv_env.
shim=$(cd "$build/lib" && pwd)/libreprise.so
if [ "$gpu" = "--gpu" ]; then
  module=$build/benchmarks/benchkernels.cubin
  drv_env=()
else
  module=$build/benchmarks/libbenchkernels.so
  drv=$(cd "$build/cpudriver" && pwd)
  drv_env=(LD_LIBRARY_PATH="$drv${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" REPRISE_DRIVER="$drv/libcuda.so.1")
fi
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
