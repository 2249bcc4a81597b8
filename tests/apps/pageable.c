/* pageable - copies between the device and plain malloc memory: synchronous
 * cuMemcpyHtoD / cuMemcpyDtoH whose host buffer is overwritten the moment
 * the call returns, and cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on a created
 * stream from and to pageable memory, with the source overwritten right after
 * the async call (the driver must have taken the bytes by then).
 * Usage: pageable MODULE ITERS [N]   (N floats, default 1500) */
#include <cuda.h>

#include "appcommon.h"

static void fill(float *h, int32_t n, long it, int salt)
{
    for (int32_t i = 0; i < n; i++)
        h[i] = (float)((i * 7 + (int32_t)it * 3 + salt) % 101) * 0.125f;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 1500, 8, 1 << 24);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_axpy;
    app_open(argv[1], &dev, &ctx, &mod);
    f_scale = app_function(mod, "scale_add_scalar");
    f_axpy = app_function(mod, "axpy");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    size_t bytes = (size_t)n * sizeof(float);
    CUdeviceptr d, e;
    CK(cuMemAlloc, (&d, bytes));
    CK(cuMemAlloc, (&e, bytes));
    float *src = malloc(bytes), *dst = malloc(bytes);
    if (src == NULL || dst == NULL)
        app_die("out of host memory");

    unsigned int grid = app_blocks(n);
    float decay = 0.5f, dt = 0.5f, two = 2.0f;
    uint64_t sync_h = 0x50475300ull, async_h = 0x50474100ull;
    for (long it = 0; it < iters; it++) {
        uint32_t iter = (uint32_t)it;
        void *sc_args[] = { &d, &n, &decay, &dt, &iter };

        /* Synchronous copies on the legacy stream; the buffers are reused
         * as soon as each call returns. */
        fill(src, n, it, 0);
        CK(cuMemcpyHtoD, (d, src, bytes));
        memset(src, 0xEE, bytes);
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, sc_args, NULL));
        CK(cuMemcpyDtoH, (dst, d, bytes));
        sync_h = app_hash(sync_h, dst, bytes);
        memset(dst, 0xDD, bytes);

        /* Async copies from and to pageable memory on a created stream. */
        fill(src, n, it, 1);
        CK(cuMemcpyHtoDAsync, (e, src, bytes, s));
        memset(src, 0xCC, bytes);
        void *ax_args[] = { &e, &d, &two, &n };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ax_args, NULL));
        CK(cuMemcpyDtoHAsync, (dst, e, bytes, s));
        CK(cuStreamSynchronize, (s));
        async_h = app_hash(async_h, dst, bytes);
        memset(dst, 0xBB, bytes);
    }
    app_checksum("pageable-sync", sync_h);
    app_checksum("pageable-async", async_h);

    free(src);
    free(dst);
    CK(cuMemFree, (d));
    CK(cuMemFree, (e));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
