/* runtime_like - finds the driver exactly as the CUDA runtime does, with no
 * link to libcuda: dlopen("libcuda.so.1"), one dlsym of cuGetProcAddress_v2,
 * a lookup of ("cuGetProcAddress", 12000) through it, and every other entry
 * point through that self-lookup pointer with explicit ABI versions, the
 * per-thread variants with version 7000 and the per-thread flag. The work runs on the per-thread stream
 * (CU_STREAM_PER_THREAD, or 0 given to a _ptsz entry point).
 * Usage: runtime_like MODULE ITERS [N]   (N cells, default 2048) */
#include <dlfcn.h>

#include <cudaTypedefs.h>

static PFN_cuGetErrorName_v6000 p_cuGetErrorName;
#define APP_ERROR_NAME(r, out) \
    (p_cuGetErrorName != NULL ? p_cuGetErrorName((r), (out)) : CUDA_ERROR_UNKNOWN)
#include "appcommon.h"

#define DEFAULT CU_GET_PROC_ADDRESS_DEFAULT
#define PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

static PFN_cuGetProcAddress_v12000 p_gpa;

/* One lookup through the self-lookup pointer, as cudart makes them: no
 * status argument. A missing entry point is an error naming the symbol. */
static void *lookup(const char *sym, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUresult r = p_gpa(sym, &fn, version, flags, NULL);
    if (r != CUDA_SUCCESS)
        app_fail("cuGetProcAddress", (int)r);
    if (fn == NULL) {
        printf("error: cuGetProcAddress(%s, %d, %llu) found nothing\n", sym, version,
               (unsigned long long)flags);
        exit(1);
    }
    return fn;
}

#define LOOKUP(var, sym, version, flags) \
    ((var) = (__typeof__(var))lookup((sym), (version), (flags)))

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 2048, 8, 1 << 24);

    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("error: dlopen libcuda.so.1 failed: %s\n", dlerror());
        return 1;
    }
    PFN_cuGetProcAddress_v12000 first;
    *(void **)&first = dlsym(h, "cuGetProcAddress_v2");
    if (first == NULL)
        app_die("dlsym cuGetProcAddress_v2 found nothing");
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *self = NULL;
    CUresult r = first("cuGetProcAddress", &self, 12000, DEFAULT, &st);
    if (r != CUDA_SUCCESS)
        app_fail("cuGetProcAddress_v2", (int)r);
    if (self == NULL || st != CU_GET_PROC_ADDRESS_SUCCESS)
        app_die("cuGetProcAddress_v2(cuGetProcAddress, 12000) found nothing");
    p_gpa = (PFN_cuGetProcAddress_v12000)self;

    PFN_cuInit_v2000 p_cuInit;
    PFN_cuDeviceGet_v2000 p_cuDeviceGet;
    PFN_cuDevicePrimaryCtxRetain_v7000 p_cuDevicePrimaryCtxRetain;
    PFN_cuDevicePrimaryCtxRelease_v11000 p_cuDevicePrimaryCtxRelease;
    PFN_cuCtxSetCurrent_v4000 p_cuCtxSetCurrent;
    PFN_cuCtxSynchronize_v2000 p_cuCtxSynchronize;
    PFN_cuModuleLoad_v2000 p_cuModuleLoad;
    PFN_cuModuleGetFunction_v2000 p_cuModuleGetFunction;
    PFN_cuModuleUnload_v2000 p_cuModuleUnload;
    PFN_cuMemAlloc_v3020 p_cuMemAlloc;
    PFN_cuMemFree_v3020 p_cuMemFree;
    PFN_cuMemHostAlloc_v2020 p_cuMemHostAlloc;
    PFN_cuMemFreeHost_v2000 p_cuMemFreeHost;
    PFN_cuLaunchKernel_v4000 p_cuLaunchKernel;
    PFN_cuLaunchKernel_v7000_ptsz p_cuLaunchKernel_ptsz;
    PFN_cuMemcpyHtoDAsync_v3020 p_cuMemcpyHtoDAsync;
    PFN_cuMemcpyHtoDAsync_v7000_ptsz p_cuMemcpyHtoDAsync_ptsz;
    PFN_cuMemcpyDtoHAsync_v7000_ptsz p_cuMemcpyDtoHAsync_ptsz;
    PFN_cuMemcpyDtoH_v7000_ptds p_cuMemcpyDtoH_ptds;
    PFN_cuMemsetD8Async_v7000_ptsz p_cuMemsetD8Async_ptsz;
    PFN_cuStreamSynchronize_v2000 p_cuStreamSynchronize;
    PFN_cuStreamSynchronize_v7000_ptsz p_cuStreamSynchronize_ptsz;

    LOOKUP(p_cuGetErrorName, "cuGetErrorName", 6000, DEFAULT);
    LOOKUP(p_cuInit, "cuInit", 2000, DEFAULT);
    LOOKUP(p_cuDeviceGet, "cuDeviceGet", 2000, DEFAULT);
    LOOKUP(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, DEFAULT);
    LOOKUP(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, DEFAULT);
    LOOKUP(p_cuCtxSetCurrent, "cuCtxSetCurrent", 4000, DEFAULT);
    LOOKUP(p_cuCtxSynchronize, "cuCtxSynchronize", 2000, DEFAULT);
    LOOKUP(p_cuModuleLoad, "cuModuleLoad", 2000, DEFAULT);
    LOOKUP(p_cuModuleGetFunction, "cuModuleGetFunction", 2000, DEFAULT);
    LOOKUP(p_cuModuleUnload, "cuModuleUnload", 2000, DEFAULT);
    LOOKUP(p_cuMemAlloc, "cuMemAlloc", 3020, DEFAULT);
    LOOKUP(p_cuMemFree, "cuMemFree", 3020, DEFAULT);
    LOOKUP(p_cuMemHostAlloc, "cuMemHostAlloc", 2020, DEFAULT);
    LOOKUP(p_cuMemFreeHost, "cuMemFreeHost", 2000, DEFAULT);
    LOOKUP(p_cuLaunchKernel, "cuLaunchKernel", 4000, DEFAULT);
    LOOKUP(p_cuLaunchKernel_ptsz, "cuLaunchKernel", 7000, PTDS);
    /* Per-thread variants are asked for at 7000, the version that brought
     * them (a lower version with the flag gets the legacy-stream variant). */
    LOOKUP(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync", 3020, DEFAULT);
    LOOKUP(p_cuMemcpyHtoDAsync_ptsz, "cuMemcpyHtoDAsync", 7000, PTDS);
    LOOKUP(p_cuMemcpyDtoHAsync_ptsz, "cuMemcpyDtoHAsync", 7000, PTDS);
    LOOKUP(p_cuMemcpyDtoH_ptds, "cuMemcpyDtoH", 7000, PTDS);
    LOOKUP(p_cuMemsetD8Async_ptsz, "cuMemsetD8Async", 7000, PTDS);
    LOOKUP(p_cuStreamSynchronize, "cuStreamSynchronize", 2000, DEFAULT);
    LOOKUP(p_cuStreamSynchronize_ptsz, "cuStreamSynchronize", 7000, PTDS);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_stencil, f_boundary, f_iota, f_checksum;
    CK(p_cuInit, (0));
    CK(p_cuDeviceGet, (&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(p_cuCtxSetCurrent, (ctx));
    CK(p_cuModuleLoad, (&mod, argv[1]));
    CK(p_cuModuleGetFunction, (&f_stencil, mod, "stencil3"));
    CK(p_cuModuleGetFunction, (&f_boundary, mod, "boundary_apply"));
    CK(p_cuModuleGetFunction, (&f_iota, mod, "iota_f32"));
    CK(p_cuModuleGetFunction, (&f_checksum, mod, "checksum_u64"));

    size_t bytes = (size_t)n * sizeof(float);
    CUdeviceptr a, b, bvals, sum;
    CK(p_cuMemAlloc, (&a, bytes));
    CK(p_cuMemAlloc, (&b, bytes));
    CK(p_cuMemAlloc, (&bvals, 2 * sizeof(float)));
    CK(p_cuMemAlloc, (&sum, sizeof(uint64_t)));
    float *hbound, *hprobe;
    CK(p_cuMemHostAlloc, ((void **)&hbound, 2 * sizeof(float), 0));
    CK(p_cuMemHostAlloc, ((void **)&hprobe, 2 * sizeof(float), 0));

    unsigned int grid = app_blocks(n);
    /* Initial field and boundary on the legacy stream (plain entry points,
     * stream 0), then a legacy-stream synchronize. */
    float scale = -1.0f / 256.0f, base = 3.0f;
    void *iota_args[] = { &a, &n, &scale, &base };
    CK(p_cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, iota_args, NULL));
    hbound[0] = hbound[1] = 0.0f;
    CK(p_cuMemcpyHtoDAsync, (bvals, hbound, 2 * sizeof(float), 0));
    CK(p_cuStreamSynchronize, (0));
    CK(p_cuCtxSynchronize, ());

    float wl = 0.25f, wc = 0.5f, wr = 0.25f;
    void *ab_args[] = { &b, &a, &n, &wl, &wc, &wr };
    void *ba_args[] = { &a, &b, &n, &wl, &wc, &wr };
    void *bnd_args[] = { &a, &n, &bvals };
    uint64_t probes = 0x52544c0000000000ull;
    for (long it = 0; it < iters; it++) {
        hbound[0] = (float)(it % 11);
        hbound[1] = (float)(it % 3) * 0.25f;
        CK(p_cuMemcpyHtoDAsync_ptsz, (bvals, hbound, 2 * sizeof(float), CU_STREAM_PER_THREAD));
        /* Stream 0 through a _ptsz entry point is the per-thread stream. */
        CK(p_cuLaunchKernel_ptsz, (f_boundary, 1, 1, 1, 1, 1, 1, 0, 0, bnd_args, NULL));
        CK(p_cuLaunchKernel_ptsz, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, ab_args, NULL));
        CK(p_cuLaunchKernel_ptsz, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0,
                                   CU_STREAM_PER_THREAD, ba_args, NULL));
        CK(p_cuMemcpyDtoHAsync_ptsz, (hprobe, a + (CUdeviceptr)(n / 2) * sizeof(float),
                                      2 * sizeof(float), 0));
        CK(p_cuStreamSynchronize_ptsz, (0));
        probes = app_hash(probes, hprobe, 2 * sizeof(float));
    }

    uint64_t seed = 77, dsum = 0;
    void *ck_args[] = { &sum, &a, &n, &seed };
    CK(p_cuMemsetD8Async_ptsz, (sum, 0, sizeof(uint64_t), CU_STREAM_PER_THREAD));
    CK(p_cuLaunchKernel_ptsz, (f_checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0,
                               CU_STREAM_PER_THREAD, ck_args, NULL));
    CK(p_cuMemcpyDtoH_ptds, (&dsum, sum, sizeof dsum));
    CK(p_cuCtxSynchronize, ());

    app_checksum("runtime_like-probes", probes);
    app_checksum("runtime_like-field", dsum);

    CK(p_cuMemFreeHost, (hbound));
    CK(p_cuMemFreeHost, (hprobe));
    CK(p_cuMemFree, (a));
    CK(p_cuMemFree, (b));
    CK(p_cuMemFree, (bvals));
    CK(p_cuMemFree, (sum));
    CK(p_cuModuleUnload, (mod));
    CK(p_cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
