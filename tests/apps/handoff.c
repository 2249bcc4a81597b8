/* handoff - work issued by one thread on its per-thread default stream and
 * completed by another: a worker thread repeats the same launches on its
 * per-thread stream (built with CUDA_API_PER_THREAD_DEFAULT_STREAM, so stream
 * 0 is the per-thread stream), synchronizing each iteration except the last,
 * then exits; the main thread joins it (no driver call in between), calls
 * cuCtxSynchronize and reads the result. The last two iterations are not
 * synchronized, and the last one stops one launch short (so a replaying shim
 * holds it deferred, unmatched): its work must run although its thread is
 * gone, and after the previous iteration's work on that thread's stream.
 * Usage: handoff MODULE ITERS */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <pthread.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale;
static CUdeviceptr g_x, g_y;
static long g_iters;

static void *worker(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent, (g_ctx));
    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float a = 0.5f, decay = 0.9375f, dt = 0.25f;
    uint32_t iter = 3;
    void *axpy_args[] = { &g_y, &g_x, &a, &n };
    void *scale_args[] = { &g_x, &n, &decay, &dt, &iter };
    for (long it = 0; it < g_iters; it++) {
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, scale_args, NULL));
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, axpy_args, NULL));
        if (it + 1 == g_iters)
            break;
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, scale_args, NULL));
        if (it + 2 < g_iters)
            CK(cuStreamSynchronize, (0));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "");
    g_iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    CUdevice dev;
    CUmodule mod;
    CUfunction f_iota;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuDevicePrimaryCtxRetain, (&g_ctx, dev));
    CK(cuCtxSetCurrent, (g_ctx));
    CK(cuModuleLoad, (&mod, argv[1]));
    CK(cuModuleGetFunction, (&f_axpy, mod, "axpy"));
    CK(cuModuleGetFunction, (&f_scale, mod, "scale_add_scalar"));
    CK(cuModuleGetFunction, (&f_iota, mod, "iota_f32"));
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    int32_t n = N;
    float s1 = 0.001f, b1 = 1.0f, zero = 0.0f;
    void *ix[] = { &g_x, &n, &s1, &b1 };
    void *iy[] = { &g_y, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, ix, NULL));
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, iy, NULL));
    CK(cuCtxSynchronize, ());

    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        app_die("pthread_create failed");
    pthread_join(t, NULL);
    CK(cuCtxSynchronize, ());

    float h[N];
    CK(cuMemcpyDtoH, (h, g_y, sizeof h));
    app_checksum("handoff-y", app_hash(0x68616e64ull, h, sizeof h));
    CK(cuMemcpyDtoH, (h, g_x, sizeof h));
    app_checksum("handoff-x", app_hash(0x78ull, h, sizeof h));
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
