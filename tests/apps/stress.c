/* stress - many host threads on many streams at once: W workers (default 8),
 * each with its own non-blocking stream, repeat a three-launch sequence with
 * a synchronize for ITERS iterations, every seventh iteration inserting an
 * extra launch (a divergence for a replaying shim) and every fifth changing
 * an argument; one more thread meanwhile allocates and frees device memory
 * and calls cuCtxSynchronize (ITERS/4 + 1 times). Prints one checksum per worker, in order.
 * Usage: stress MODULE ITERS [WORKERS]   (1..16, default 8) */
#include <pthread.h>

#include <cuda.h>

#include "appcommon.h"

#define N 256
#define MAXW 16

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale, f_iota;
static long g_iters;

typedef struct worker { int index; uint64_t result; } worker;

static void *work(void *arg)
{
    worker *w = arg;
    CK(cuCtxSetCurrent, (g_ctx));
    CUstream s;
    CUdeviceptr x, y;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc, (&x, N * sizeof(float)));
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    int32_t n = N;
    float sc = 0.001f * (float)(w->index + 1), base = (float)w->index, zero = 0.0f;
    void *ix[] = { &x, &n, &sc, &base };
    void *iy[] = { &y, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, ix, NULL));
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, iy, NULL));
    uint64_t acc = (uint64_t)w->index;
    for (long it = 0; it < g_iters; it++) {
        float a = (it % 5 == 4) ? 0.125f : 0.5f, decay = 0.5f, dt = 0.25f;
        uint32_t iter = 2;
        void *axpy[] = { &y, &x, &a, &n };
        void *scale[] = { &y, &n, &decay, &dt, &iter };
        CK(cuLaunchKernel, (f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, axpy, NULL));
        if (it % 7 == 6)
            CK(cuLaunchKernel, (f_scale, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, scale, NULL));
        CK(cuLaunchKernel, (f_scale, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, scale, NULL));
        CK(cuLaunchKernel, (f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, axpy, NULL));
        CK(cuStreamSynchronize, (s));
        if (it % 16 == 15) {
            float h[N];
            CK(cuMemcpyDtoH, (h, y, sizeof h));
            acc = app_hash(acc, h, sizeof h);
        }
    }
    float h[N];
    CK(cuMemcpyDtoH, (h, y, sizeof h));
    w->result = app_hash(acc, h, sizeof h);
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuStreamDestroy, (s));
    return NULL;
}

/* Allocations and context-wide synchronizes while the workers run. */
static void *churn(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent, (g_ctx));
    /* A fixed count, so that what reaches the driver is the same every run. */
    for (long i = 0; i < g_iters / 4 + 1; i++) {
        CUdeviceptr t;
        CK(cuMemAlloc, (&t, 4096));
        CK(cuMemsetD8, (t, (unsigned char)i, 4096));
        CK(cuMemFree, (t));
        if (i % 4 == 3)
            CK(cuCtxSynchronize, ());
    }
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[WORKERS]");
    g_iters = app_arg(argc, argv, 2, 100, 1, 100000000);
    int nw = (int)app_arg(argc, argv, 3, 8, 1, MAXW);
    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    worker ws[MAXW];
    pthread_t t[MAXW], c;
    if (pthread_create(&c, NULL, churn, NULL) != 0)
        app_die("pthread_create failed");
    for (int i = 0; i < nw; i++) {
        ws[i].index = i;
        if (pthread_create(&t[i], NULL, work, &ws[i]) != 0)
            app_die("pthread_create failed");
    }
    for (int i = 0; i < nw; i++)
        pthread_join(t[i], NULL);
    pthread_join(c, NULL);
    char name[32];
    for (int i = 0; i < nw; i++) {
        snprintf(name, sizeof name, "stress-worker%d", i);
        app_checksum(name, ws[i].result);
    }
    app_close(dev, mod);
    return 0;
}
