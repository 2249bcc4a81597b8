/* A library whose constructor calls the driver before the shim has done
 * anything: preloaded objects' constructors run after those of the
 * program's own dependencies, so this runs first.  Linked to a libcuda
 * (the fake one, or the CPU driver), its cuInit binds to libreprise's
 * wrapper under LD_PRELOAD; the wrapper must initialise itself there. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

static CUresult early_init_result = (CUresult)-1;

__attribute__((constructor)) static void early_ctor(void)
{
    early_init_result = cuInit(0);
}

__attribute__((visibility("default"))) int early_result(void)
{
    return (int)early_init_result;
}
