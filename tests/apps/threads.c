/* threads - several host threads sharing one context: each worker runs its
 * own loop on its own CU_STREAM_NON_BLOCKING stream and buffers, while one
 * more thread issues work on the legacy stream. Per-thread checksums are
 * printed and combined in thread-index order, so the output is deterministic.
 * Usage: threads MODULE ITERS [NTHREADS [steady|ctx]]   (2..8 workers, default 4)
 * With `steady`, the workers' per-iteration scalars (RNG offset, step
 * counter) stay fixed, so every iteration repeats the same launches with the
 * same arguments (the buffers still evolve). With `ctx`, each worker runs
 * rounds (worker i: i + 1 of them, each after the first on a thread of its
 * own that ends with it) of: create a context of its own
 * (cuCtxCreate), load the module in it, work there, destroy the context
 * (its stream, memory and module with it) while the others still work: the
 * handles a destroyed context held come back for the contexts, streams,
 * modules and memory of the workers still running (issue 34, finding 1).
 * Every thread allocates before
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
    int own_ctx;
    long iters;
    uint64_t result;
} worker;

static CUcontext g_ctx;
static CUdevice g_dev;
static const char *g_module;
static pthread_barrier_t g_setup, g_teardown;
static CUfunction f_rng, f_noise, f_stencil, f_scale, f_checksum, f_axpy, f_iota;

/* A worker's loop: random noise, a stencil pair, a scalar step, and a
 * device-side checksum read back into pinned memory each iteration. In
 * `ctx` mode a round of it runs in a context of the worker's own, made and
 * destroyed around it; worker i runs i + 1 rounds. */
static void worker_round(worker *w, int round, uint64_t *acc)
{
    /* The functions this worker launches: the shared module's, or those of
     * its own module in its own context (a module's functions launch only
     * in their context). */
    CUfunction rng = f_rng, noise_f = f_noise, stencil = f_stencil, scale_f = f_scale,
               checksum = f_checksum, iota = f_iota;
    CUcontext own = NULL;
    if (w->own_ctx) {
        CUmodule mod;
        CK(cuCtxCreate, (&own, NULL, 0, g_dev));
        CK(cuModuleLoad, (&mod, g_module));
        rng = app_function(mod, "rng_fill");
        noise_f = app_function(mod, "add_noise");
        stencil = app_function(mod, "stencil3");
        scale_f = app_function(mod, "scale_add_scalar");
        checksum = app_function(mod, "checksum_u64");
        iota = app_function(mod, "iota_f32");
    } else {
        CK(cuCtxSetCurrent, (g_ctx));
    }
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
    CK(cuLaunchKernel, (iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));

    if (round == 0)
        pthread_barrier_wait(&g_setup);

    uint64_t seed = 0x7468726561640000ull + (uint64_t)w->index;
    float nscale = 0.5f, wl = 0.25f, wc = 0.5f, wr = 0.25f, decay = 0.875f, dt = 0.0625f;
    for (long it = 0; it < w->iters; it++) {
        uint64_t offset = w->steady ? 0 : (uint64_t)it * N;
        uint32_t iter = w->steady ? 0 : (uint32_t)it;
        void *rng_args[] = { &noise, &n, &seed, &offset };
        void *noise_args[] = { &x, &noise, &n, &nscale };
        void *xy_args[] = { &y, &x, &n, &wl, &wc, &wr };
        void *yx_args[] = { &x, &y, &n, &wl, &wc, &wr };
        void *scale_args[] = { &x, &n, &decay, &dt, &iter };
        void *ck_args[] = { &sum, &x, &n, &seed };
        CK(cuLaunchKernel, (rng, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, rng_args, NULL));
        CK(cuLaunchKernel, (noise_f, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, noise_args, NULL));
        CK(cuLaunchKernel, (stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, xy_args, NULL));
        CK(cuLaunchKernel, (stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, yx_args, NULL));
        CK(cuLaunchKernel, (scale_f, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
        CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), s));
        CK(cuLaunchKernel, (checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ck_args, NULL));
        CK(cuMemcpyDtoHAsync, (hsum, sum, sizeof(uint64_t), s));
        CK(cuStreamSynchronize, (s));
        *acc = app_hash_u64(*acc, *hsum);
    }

    if (w->own_ctx) {
        /* Everything of the context goes with it, while the other workers
         * still work: its stream, memory, pinned memory and module. */
        CK(cuCtxDestroy, (own));
        return;
    }
    pthread_barrier_wait(&g_teardown);
    CK(cuMemFreeHost, (hsum));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuMemFree, (noise));
    CK(cuMemFree, (sum));
    CK(cuStreamDestroy, (s));
}

struct round_arg {
    worker *w;
    int round;
    uint64_t *acc;
};

static void *round_main(void *arg)
{
    struct round_arg *a = arg;
    worker_round(a->w, a->round, a->acc);
    return NULL;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    uint64_t acc = 0x7468726561640000ull + (uint64_t)w->index;
    if (!w->own_ctx) {
        worker_round(w, 0, &acc);
    } else {
        /* Each round on a thread of its own, which exits when its context
         * is gone: threads come and go while the others work. */
        for (int r = 0; r <= w->index; r++) {
            struct round_arg a = {w, r, &acc};
            pthread_t t;
            if (r == 0) {
                round_main(&a);
                continue;
            }
            if (pthread_create(&t, NULL, round_main, &a) != 0)
                app_die("pthread_create failed");
            pthread_join(t, NULL);
        }
    }
    w->result = acc;
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
    app_usage(argc, argv, "[NTHREADS [steady|ctx]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int nt = (int)app_arg(argc, argv, 3, 4, 2, MAXT);
    int steady = argc > 4 && strcmp(argv[4], "steady") == 0;
    int own_ctx = argc > 4 && strcmp(argv[4], "ctx") == 0;
    if (argc > 4 && !steady && !own_ctx)
        app_die("the fourth argument must be `steady` or `ctx`");

    CUdevice dev;
    CUmodule mod;
    g_module = argv[1];
    app_open(argv[1], &dev, &g_ctx, &mod);
    g_dev = dev;
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
        pthread_barrier_init(&g_teardown, NULL, own_ctx ? 1u : (unsigned int)nt + 1) != 0)
        app_die("pthread_barrier_init failed");
    for (int t = 0; t <= nt; t++) {
        ws[t].index = t;
        ws[t].steady = steady;
        ws[t].own_ctx = own_ctx && t < nt;
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
