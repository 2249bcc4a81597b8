/* ptlegacy - work a thread leaves on its per-thread default stream, read
 * through the legacy stream. The per-thread stream is a blocking stream, so
 * the driver orders every later legacy-stream operation, of any thread,
 * after its earlier work. A worker thread repeats a step on its per-thread
 * stream (synchronizing each step, so a shim learns it) and then issues the
 * first two launches of one more step, without synchronizing, and stops (a
 * replaying shim holds them, waiting for the rest of the step). Then, by
 * mode:
 *   ctxsync  the main thread launches a kernel on the legacy stream that
 *            reads the worker's result, then cuCtxSynchronize;
 *   copy     the main thread reads the result with a synchronous
 *            cuMemcpyDtoH (a legacy-stream operation);
 *   alloc    the main thread calls cuMemAlloc while the worker waits; then
 *            the worker itself launches a kernel on the legacy stream that
 *            reads its own result, and synchronizes.
 * No other synchronization orders the reads after the worker's step. The
 * worker names its stream CU_STREAM_PER_THREAD (the file is built without
 * per-thread default stream, so stream 0 and the synchronous copies are the
 * legacy stream's).
 * Usage: ptlegacy MODULE ITERS [ctxsync|copy|alloc]   (default ctxsync) */
#include <pthread.h>
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale;
static CUdeviceptr g_x, g_y, g_out;
static long g_iters;
static int g_mode; /* 0 ctxsync, 1 copy, 2 alloc */
/* Phases (app_phase_set/app_phase_wait): 1: the worker's last step is issued; 2: main allocated */

/* out = x, then out += y/2, on the legacy stream. */
static void read_on_legacy(void)
{
    int32_t n = N;
    float half = 0.5f;
    void *copy_args[] = { &g_out, &g_y, &half, &n };
    CK(cuMemcpyDtoDAsync, (g_out, g_x, N * sizeof(float), CU_STREAM_LEGACY));
    CK(cuLaunchKernel, (f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY,
                        copy_args, NULL));
}

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
    for (long it = 0; it <= g_iters; it++) {
        CUstream pt = CU_STREAM_PER_THREAD;
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, pt, scale_args, NULL));
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, pt, axpy_args, NULL));
        if (it == g_iters)
            break; /* mid-step */
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, pt, scale_args, NULL));
        CK(cuStreamSynchronize, (pt));
    }
    app_phase_set(1);
    if (g_mode == 2) {
        app_phase_wait(2);
        read_on_legacy();
        CK(cuStreamSynchronize, (CU_STREAM_LEGACY));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[ctxsync|copy|alloc]");
    g_iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *mode = argc > 3 ? argv[3] : "ctxsync";
    if (!strcmp(mode, "ctxsync"))
        g_mode = 0;
    else if (!strcmp(mode, "copy"))
        g_mode = 1;
    else if (!strcmp(mode, "alloc"))
        g_mode = 2;
    else
        app_die("the third argument must be ctxsync, copy or alloc");
    CUdevice dev;
    CUmodule mod;
    CUfunction f_iota;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    CK(cuMemAlloc, (&g_out, N * sizeof(float)));
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
    app_phase_wait(1);
    float h[N];
    CUdeviceptr tmp = 0;
    if (g_mode == 0) {
        read_on_legacy();
        CK(cuCtxSynchronize, ());
        CK(cuMemcpyDtoH, (h, g_out, sizeof h));
    } else if (g_mode == 1) {
        CK(cuMemcpyDtoH, (h, g_y, sizeof h));
    } else {
        CK(cuMemAlloc, (&tmp, N * sizeof(float)));
        app_phase_set(2);
        pthread_join(t, NULL);
        CK(cuMemcpyDtoH, (h, g_out, sizeof h));
    }
    app_checksum("ptlegacy-read", app_hash(0x70746cull, h, sizeof h));
    if (g_mode != 2)
        pthread_join(t, NULL);
    CK(cuCtxSynchronize, ());
    CK(cuMemcpyDtoH, (h, g_y, sizeof h));
    app_checksum("ptlegacy-y", app_hash(0x79ull, h, sizeof h));
    if (tmp)
        CK(cuMemFree, (tmp));
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    CK(cuMemFree, (g_out));
    app_close(dev, mod);
    return 0;
}
