/* A tiny stand-in for libcuda.so.1, for the shim's preload tests.
 *
 * It exports a handful of entry points that only count their calls, and a
 * cuGetProcAddress pair that, like the real driver, picks the variant from
 * the version and flags (cuLaunchKernel with flags 2 is cuLaunchKernel_ptsz,
 * cuMemcpyHtoD from 3020 is cuMemcpyHtoD_v2, the self-lookup from 12000 is
 * cuGetProcAddress_v2).  Linked -Bsymbolic like the real driver, so the
 * pointers it hands out are its own functions even when libreprise.so, which
 * exports the same names, is preloaded. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { F_INIT, F_VERSION, F_LAUNCH, F_LAUNCH_PTSZ, F_HTOD, F_HTOD_PTDS, F_COUNT };
static const char *const names[F_COUNT] = {"cuInit", "cuDriverGetVersion", "cuLaunchKernel",
                                           "cuLaunchKernel_ptsz", "cuMemcpyHtoD_v2",
                                           "cuMemcpyHtoD_v2_ptds"};
static int calls[F_COUNT];

/* How many times the entry point `name` of this fake was called (-1 if it
 * has no such entry point). */
FAKE_EXPORT int fakecuda_calls(const char *name)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(names[i], name) == 0)
            return calls[i];
    return -1;
}

/* dlsym(this driver, name), called from inside the driver: the shim must
 * answer with the driver's own function, never a wrapper. */
FAKE_EXPORT void *fakecuda_self_dlsym(const char *name)
{
    void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *p = self ? dlsym(self, name) : NULL;
    /* Not a tail call: dlsym must see this library as its caller. */
    __asm__ volatile("" ::: "memory");
    return p;
}

FAKE_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
    calls[F_INIT]++;
    return Flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    calls[F_VERSION]++;
    *v = 13000;
    return CUDA_SUCCESS;
}

#define LAUNCH_PARAMS                                                                       \
    CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,      \
        unsigned int by, unsigned int bz, unsigned int shm, CUstream s, void **params,      \
        void **extra

FAKE_EXPORT CUresult CUDAAPI cuLaunchKernel(LAUNCH_PARAMS)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shm, (void)s;
    (void)params, (void)extra;
    calls[F_LAUNCH]++;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(LAUNCH_PARAMS)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shm, (void)s;
    (void)params, (void)extra;
    calls[F_LAUNCH_PTSZ]++;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
    (void)d, (void)h, (void)n;
    calls[F_HTOD]++;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *h, size_t n)
{
    (void)d, (void)h, (void)n;
    calls[F_HTOD_PTDS]++;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                                 cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbolStatus);

FAKE_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                              cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

FAKE_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                                 cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbolStatus)
{
    bool ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    void *p = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        p = cudaVersion >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    else if (strcmp(symbol, "cuInit") == 0)
        p = (void *)cuInit;
    else if (strcmp(symbol, "cuDriverGetVersion") == 0)
        p = (void *)cuDriverGetVersion;
    else if (strcmp(symbol, "cuLaunchKernel") == 0)
        p = ptds ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
    else if (strcmp(symbol, "cuMemcpyHtoD") == 0 && cudaVersion >= 3020)
        p = ptds ? (void *)cuMemcpyHtoD_v2_ptds : (void *)cuMemcpyHtoD_v2;
    *pfn = p;
    if (symbolStatus)
        *symbolStatus = p ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
