/* handoff - work issued by one thread on its per-thread default stream and
 * completed by another: a worker thread repeats the same launches on its
 * per-thread stream (built with CUDA_API_PER_THREAD_DEFAULT_STREAM, so stream
 * 0 is the per-thread stream), synchronizing each iteration except the last,
 * then exits; the main thread joins it (no driver call in between), calls
 * cuCtxSynchronize and reads the result. The last two iterations are not
 * synchronized, and the last one stops one launch short (so a replaying shim
 * holds it deferred, unmatched): its work must run although its thread is
 * gone, and after the previous iteration's work on that thread's stream.
 * With "capture", halfway through the worker stops after two launches of an
 * iteration; the main thread then allocates (a boundary that resolves the
 * worker's deferred launches for it) and begins a capture of its own on
 * another stream, and only then does the worker go on, its next launch on
 * its per-thread stream ordered after the two; the main thread ends its
 * capture after the worker is done.
 * Usage: handoff MODULE ITERS [capture] */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <pthread.h>
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale;
static CUdeviceptr g_x, g_y;
static long g_iters;
static int g_capture;
/* Phases (app_phase_set/app_phase_wait): 1: the worker waits; 2: the main thread captures */

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
        if (g_capture && it == g_iters / 2) {
            app_phase_set(1);
            app_phase_wait(2);
        }
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, scale_args, NULL));
        if (it + 2 < g_iters)
            CK(cuStreamSynchronize, (0));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[capture]");
    g_iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    CUdevice dev;
    CUmodule mod;
    CUfunction f_iota;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    int32_t n = N;
    float s1 = 0.001f, b1 = 1.0f, zero = 0.0f;
    void *ix[] = { &g_x, &n, &s1, &b1 };
    void *iy[] = { &g_y, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, ix, NULL));
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, iy, NULL));
    CK(cuCtxSynchronize, ());

    g_capture = argc > 3 && !strcmp(argv[3], "capture");
    if (argc > 3 && !g_capture)
        app_die("the third argument must be capture");
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        app_die("pthread_create failed");
    if (g_capture) {
        CUstream s2;
        CUdeviceptr tmp;
        CUgraph g;
        void *iz[] = { &tmp, &n, &zero, &zero };
        CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
        app_phase_wait(1);
        CK(cuMemAlloc, (&tmp, N * sizeof(float)));
        CK(cuStreamBeginCapture, (s2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        app_phase_set(2);
        CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s2, iz, NULL));
        pthread_join(t, NULL);
        CK(cuStreamEndCapture, (s2, &g));
        CK(cuGraphDestroy, (g));
        CK(cuStreamDestroy, (s2));
        CK(cuMemFree, (tmp));
    } else {
        pthread_join(t, NULL);
    }
    CK(cuCtxSynchronize, ());

    float h[N];
    CK(cuMemcpyDtoH, (h, g_y, sizeof h));
    app_checksum("handoff-y", app_hash(0x68616e64ull, h, sizeof h));
    CK(cuMemcpyDtoH, (h, g_x, sizeof h));
    app_checksum("handoff-x", app_hash(0x78ull, h, sizeof h));
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    app_close(dev, mod);
    return 0;
}
