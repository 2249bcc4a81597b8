/* threads - several host threads sharing one context: each worker runs its
 * own loop on its own CU_STREAM_NON_BLOCKING stream and buffers, while one
 * more thread issues work on the legacy stream. Per-thread checksums are
 * printed and combined in thread-index order, so the output is deterministic.
 * Usage: threads MODULE ITERS [NTHREADS [steady]]   (2..8 workers, default 4)
 * With `steady`, the workers' per-iteration scalars (RNG offset, step
 * counter) stay fixed, so every iteration repeats the same launches with the
 * same arguments (the buffers still evolve). Every thread allocates before
 * any loop starts and frees after every loop ended (a barrier each side),
 * as a program that sets up, runs and tears down does: an allocation is a
 * global boundary, and one thread's late set-up would otherwise cut into
 * the other threads' replays by a timing-dependent amount. */
#include <string.h>
#include <pthread.h>

#include <cuda.h>

#include "appcommon.h"

#define N 1024
#define MAXT 8

typedef struct worker {
    int index;
    int steady;
    long iters;
    uint64_t result;
} worker;

static CUcontext g_ctx;
static pthread_barrier_t g_setup, g_teardown;
static CUfunction f_rng, f_noise, f_stencil, f_scale, f_checksum, f_axpy, f_iota;

/* A worker's loop: random noise, a stencil pair, a scalar step, and a
 * device-side checksum read back into pinned memory each iteration. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    CK(cuCtxSetCurrent, (g_ctx));
    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, y, noise, sum;
    CK(cuMemAlloc, (&x, N * sizeof(float)));
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    CK(cuMemAlloc, (&noise, N * sizeof(uint32_t)));
    CK(cuMemAlloc, (&sum, sizeof(uint64_t)));
    uint64_t *hsum;
    CK(cuMemAllocHost, ((void **)&hsum, sizeof(uint64_t)));

    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float scale = 0.01f * (float)(w->index + 1), base = (float)w->index;
    void *iota_args[] = { &x, &n, &scale, &base };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));

    pthread_barrier_wait(&g_setup);

    uint64_t seed = 0x7468726561640000ull + (uint64_t)w->index;
    float nscale = 0.5f, wl = 0.25f, wc = 0.5f, wr = 0.25f, decay = 0.875f, dt = 0.0625f;
    uint64_t acc = seed;
    for (long it = 0; it < w->iters; it++) {
        uint64_t offset = w->steady ? 0 : (uint64_t)it * N;
        uint32_t iter = w->steady ? 0 : (uint32_t)it;
        void *rng_args[] = { &noise, &n, &seed, &offset };
        void *noise_args[] = { &x, &noise, &n, &nscale };
        void *xy_args[] = { &y, &x, &n, &wl, &wc, &wr };
        void *yx_args[] = { &x, &y, &n, &wl, &wc, &wr };
        void *scale_args[] = { &x, &n, &decay, &dt, &iter };
        void *ck_args[] = { &sum, &x, &n, &seed };
        CK(cuLaunchKernel, (f_rng, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, rng_args, NULL));
        CK(cuLaunchKernel, (f_noise, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, noise_args, NULL));
        CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, xy_args, NULL));
        CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, yx_args, NULL));
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
        CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), s));
        CK(cuLaunchKernel, (f_checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ck_args, NULL));
        CK(cuMemcpyDtoHAsync, (hsum, sum, sizeof(uint64_t), s));
        CK(cuStreamSynchronize, (s));
        acc = app_hash_u64(acc, *hsum);
    }
    w->result = acc;

    pthread_barrier_wait(&g_teardown);
    CK(cuMemFreeHost, (hsum));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuMemFree, (noise));
    CK(cuMemFree, (sum));
    CK(cuStreamDestroy, (s));
    return NULL;
}

/* The legacy-stream thread: axpy steps on stream 0, a synchronize every
 * fourth step, and a synchronous read-back at the end. */
static void *legacy_main(void *arg)
{
    worker *w = arg;
    CK(cuCtxSetCurrent, (g_ctx));
    CUdeviceptr x, y;
    CK(cuMemAlloc, (&x, N * sizeof(float)));
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float scale = 0.001f, base = 1.0f, zero = 0.0f;
    void *ix_args[] = { &x, &n, &scale, &base };
    void *iy_args[] = { &y, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, ix_args, NULL));
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, iy_args, NULL));
    pthread_barrier_wait(&g_setup);
    for (long it = 0; it < w->iters; it++) {
        float a = (it & 1) ? 0.5f : -0.25f;
        void *args[] = { &y, &x, &a, &n };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, args, NULL));
        if ((it + 1) % 4 == 0)
            CK(cuStreamSynchronize, (0));
    }
    pthread_barrier_wait(&g_teardown);
    float *h = malloc(N * sizeof(float));
    if (h == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, y, N * sizeof(float)));
    w->result = app_hash(0x6c6567, h, N * sizeof(float));
    free(h);
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[NTHREADS [steady]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int nt = (int)app_arg(argc, argv, 3, 4, 2, MAXT);
    int steady = argc > 4 && strcmp(argv[4], "steady") == 0;
    if (argc > 4 && !steady)
        app_die("the fourth argument must be `steady`");

    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_rng = app_function(mod, "rng_fill");
    f_noise = app_function(mod, "add_noise");
    f_stencil = app_function(mod, "stencil3");
    f_scale = app_function(mod, "scale_add_scalar");
    f_checksum = app_function(mod, "checksum_u64");
    f_axpy = app_function(mod, "axpy");
    f_iota = app_function(mod, "iota_f32");

    worker ws[MAXT + 1];
    pthread_t tids[MAXT + 1];
    if (pthread_barrier_init(&g_setup, NULL, (unsigned int)nt + 1) != 0 ||
        pthread_barrier_init(&g_teardown, NULL, (unsigned int)nt + 1) != 0)
        app_die("pthread_barrier_init failed");
    for (int t = 0; t <= nt; t++) {
        ws[t].index = t;
        ws[t].steady = steady;
        ws[t].iters = iters;
        ws[t].result = 0;
        if (pthread_create(&tids[t], NULL, t < nt ? worker_main : legacy_main, &ws[t]) != 0)
            app_die("pthread_create failed");
    }
    for (int t = 0; t <= nt; t++)
        pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&g_setup);
    pthread_barrier_destroy(&g_teardown);
    CK(cuCtxSynchronize, ());

    uint64_t all = 0x616c6c;
    char name[32];
    for (int t = 0; t < nt; t++) {
        snprintf(name, sizeof name, "threads-worker%d", t);
        app_checksum(name, ws[t].result);
        all = app_hash_u64(all, ws[t].result);
    }
    app_checksum("threads-legacy", ws[nt].result);
    all = app_hash_u64(all, ws[nt].result);
    app_checksum("threads-all", all);

    app_close(dev, mod);
    return 0;
}
