/* train - a training step as PyTorch issues it (issue 28, shape 1), as
 * faithful as it can be without the framework. Everything runs on the legacy
 * stream, as PyTorch's default stream is the legacy stream (stream 0 given
 * to plain entry points; the runtime is not built for per-thread default
 * streams). Per step:
 *   - zero_grad: one cuMemsetD8Async per parameter's gradient;
 *   - forward (the main thread, "Python"): per layer a stencil3 ("matmul")
 *     into a fresh activation, an axpy adding the layer's parameter and a
 *     scale_add_scalar ("activation"); the loss: the output cloned
 *     (cuMemcpyDtoDAsync), the target subtracted, reduce_sum_u64 (dynamic
 *     shared memory) and reduce_finalize_u64; the output gradient filled
 *     with ones (iota_f32 with scale 0, as ones_like);
 *   - backward, on a second host thread (autograd's device thread), handed
 *     the step through a pthread condition, with no CUDA synchronization:
 *     the loss gradient, then per layer (last first) a stencil3, an axpy
 *     with the saved activation and an axpy accumulating the parameter's
 *     gradient; the main thread waits on a condition until it is done, as
 *     loss.backward() does;
 *   - the optimizer, per parameter: SGD with momentum (tk::scale_inplace on
 *     the momentum, two axpys), or Adam-like (a cuStreamIsCapturing first,
 *     as PyTorch's Adam checks; per parameter two moving averages, each
 *     scale_inplace + axpy, and an axpy with a step size lr / (1 - b1^t)
 *     that changes every step; the second moment averages the gradient,
 *     not its square: there is no square kernel, and the launch stream, not
 *     the arithmetic, is the shape).
 * A caching allocator's address rotation: every temporary (activations, the
 * loss's clone, gradients in flight: 8 a step) is the next block of a pool
 * of 12, and the reduction's two small buffers the next of a pool of 3, so
 * a step's pointer arguments repeat every 3 steps. Python's host time: 5 to
 * HOSTUS microseconds (default 40) of busy waiting before every launch, and
 * at GAPS (default 3) of the step's 13 gap places, drawn afresh every step,
 * a gap of 50 to 400 us (a busy wait on the clock, no driver call), so the
 * gaps move from step to step. Each launch is preceded, as a framework's
 * device guard does, by cuCtxGetCurrent and cuCtxGetDevice (queries the
 * shim does not interpose). Everything drawn at random comes from a
 * fixed-seed generator: timing differs from run to run, results never.
 * No host synchronization inside the loop (one cuCtxSynchronize at the end)
 * unless `item`: then the loss is read back every step as .item() does
 * (cuMemcpyDtoHAsync into pageable memory, cuStreamSynchronize).
 * Prints checksums of every parameter, gradient and optimizer state, and of
 * the losses read back (`item`) or the last loss.
 * Usage: train MODULE STEPS [sgd|adam [nosync|item [GAPS [HOSTUS]]]] */
#include <pthread.h>

#include <cuda.h>

#include "appcommon.h"

#define N 512           /* floats in an activation, a parameter, a gradient */
#define LAYERS 3
#define POOL 12         /* the allocator's blocks of N floats */
#define SPOOL 3         /* its blocks of the small size (partials, loss) */
#define RBLOCKS 4       /* blocks of the loss reduction */
#define SITES 13        /* places in a step where a host gap can fall */
#define GAP_MIN_US 50
#define GAP_MAX_US 400

/* The gap places: 0 before zero_grad, 1..3 before each forward layer, 4
 * before the loss, 5 before the hand-off to the backward thread, 6..8 (on
 * that thread) before each backward layer, 9..11 before each parameter's
 * optimizer update, 12 at the end of the step. */
enum { SITE_ZERO = 0, SITE_FWD = 1, SITE_LOSS = 4, SITE_HANDOFF = 5, SITE_BWD = 6,
       SITE_OPT = 9, SITE_END = 12 };

typedef struct tr_thread {      /* what each host thread draws its host time from */
    uint64_t rng;
} tr_thread;

static struct {
    CUcontext ctx;
    CUfunction f_stencil, f_axpy, f_scale, f_inplace, f_iota, f_reduce, f_finalize;
    CUdeviceptr w[LAYERS], g[LAYERS], m[LAYERS], v[LAYERS];   /* params, grads, states */
    CUdeviceptr x, target;
    CUdeviceptr pool[POOL], spool[SPOOL];
    long next, snext;           /* the allocator's cursors */
    long host_us;
    int32_t n;
    unsigned int grid;
    /* What the forward hands to the backward thread. */
    CUdeviceptr act[LAYERS], diff, gout;
    long gap_us[SITES];         /* this step's gaps, by place */
    /* The hand-off: the step posted, the step done, the end. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long posted, done;
    int quit;
} T = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .posted = -1, .done = -1 };

/* The caching allocator: the next block of a size class, in rotation. Only
 * one thread runs the step at a time (the hand-off orders them). */
static CUdeviceptr tr_take(void) { return T.pool[T.next++ % POOL]; }
static CUdeviceptr tr_take_small(void) { return T.spool[T.snext++ % SPOOL]; }

/* What a framework does on the host before each launch: its own time, and
 * the device guard's queries. */
static void tr_before_launch(tr_thread *th)
{
    if (T.host_us > 0)
        app_spin_us(app_rand_in(&th->rng, 5, T.host_us));
    CUcontext cur;
    CUdevice d;
    CK(cuCtxGetCurrent, (&cur));
    CK(cuCtxGetDevice, (&d));
}

static void tr_launch(tr_thread *th, CUfunction f, unsigned int grid, unsigned int block,
                      unsigned int shmem, void **args)
{
    tr_before_launch(th);
    CK(cuLaunchKernel, (f, grid, 1, 1, block, 1, 1, shmem, 0, args, NULL));
}

static void tr_stencil(tr_thread *th, CUdeviceptr out, CUdeviceptr in)
{
    float wl = 0.25f, wc = 0.5f, wr = 0.25f;
    void *a[] = { &out, &in, &T.n, &wl, &wc, &wr };
    tr_launch(th, T.f_stencil, T.grid, TK_BLOCK, 0, a);
}

static void tr_axpy(tr_thread *th, CUdeviceptr y, CUdeviceptr x, float alpha)
{
    void *a[] = { &y, &x, &alpha, &T.n };
    tr_launch(th, T.f_axpy, T.grid, TK_BLOCK, 0, a);
}

static void tr_scale_inplace(tr_thread *th, CUdeviceptr x, float s)
{
    void *a[] = { &x, &T.n, &s };
    tr_launch(th, T.f_inplace, T.grid, TK_BLOCK, 0, a);
}

/* The backward part, on the calling thread: the loss gradient, then each
 * layer from the last. */
static void tr_backward(tr_thread *th)
{
    tr_axpy(th, T.gout, T.diff, 0.5f);
    CUdeviceptr gprev = T.gout;
    for (int l = LAYERS - 1; l >= 0; l--) {
        app_spin_us(T.gap_us[SITE_BWD + (LAYERS - 1 - l)]);
        CUdeviceptr gt = tr_take();
        tr_stencil(th, gt, gprev);
        tr_axpy(th, gt, T.act[l], 0.125f);
        tr_axpy(th, T.g[l], gt, 1.0f);
        gprev = gt;
    }
}

/* Autograd's device thread: waits for a step, runs its backward, says so.
 * The context is made current once, as the engine's thread sets its device. */
static void *tr_backward_thread(void *arg)
{
    (void)arg;
    tr_thread th = { 0x6261636b77617264ull };
    CK(cuCtxSetCurrent, (T.ctx));
    long seen = -1;
    for (;;) {
        pthread_mutex_lock(&T.mu);
        while (T.posted == seen && !T.quit)
            pthread_cond_wait(&T.cv, &T.mu);
        if (T.posted == seen) {     /* quit, nothing posted */
            pthread_mutex_unlock(&T.mu);
            return NULL;
        }
        seen = T.posted;
        pthread_mutex_unlock(&T.mu);
        tr_backward(&th);
        pthread_mutex_lock(&T.mu);
        T.done = seen;
        pthread_cond_broadcast(&T.cv);
        pthread_mutex_unlock(&T.mu);
    }
}

/* loss.backward(): hand the step over, wait until its backward is issued. */
static void tr_run_backward(long step)
{
    pthread_mutex_lock(&T.mu);
    T.posted = step;
    pthread_cond_broadcast(&T.cv);
    while (T.done < step)
        pthread_cond_wait(&T.cv, &T.mu);
    pthread_mutex_unlock(&T.mu);
}

static uint64_t tr_hash_buffer(uint64_t h, CUdeviceptr d)
{
    static float buf[N];
    CK(cuMemcpyDtoH, (buf, d, sizeof buf));
    return app_hash(h, buf, sizeof buf);
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[sgd|adam [nosync|item [GAPS [HOSTUS]]]]");
    long steps = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *opt = argc > 3 ? argv[3] : "sgd";
    const char *sync = argc > 4 ? argv[4] : "nosync";
    long gaps = app_arg(argc, argv, 5, 3, 0, SITES);
    T.host_us = app_arg(argc, argv, 6, 40, 0, 100000);
    int adam = !strcmp(opt, "adam"), item = !strcmp(sync, "item");
    if ((!adam && strcmp(opt, "sgd") != 0) || (!item && strcmp(sync, "nosync") != 0)) {
        printf("error: bad mode %s %s (want sgd or adam, then nosync or item)\n", opt, sync);
        return 2;
    }
    if (T.host_us > 0 && T.host_us < 5)
        T.host_us = 5;

    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &T.ctx, &mod);
    T.f_stencil = app_function(mod, "stencil3");
    T.f_axpy = app_function(mod, "axpy");
    T.f_scale = app_function(mod, "scale_add_scalar");
    T.f_inplace = app_function(mod, TK_SCALE_INPLACE_NAME);
    T.f_iota = app_function(mod, "iota_f32");
    T.f_reduce = app_function(mod, "reduce_sum_u64");
    T.f_finalize = app_function(mod, "reduce_finalize_u64");
    T.n = N;
    T.grid = app_blocks(N);

    size_t bytes = N * sizeof(float);
    tr_thread th = { 0x707974686f6eull };
    /* Parameters, inputs and the pools, filled once (on the legacy stream,
     * which every later op follows). */
    CUdeviceptr *fill[] = { T.w, T.g, T.m, T.v };
    for (int k = 0; k < 4; k++) {
        for (int l = 0; l < LAYERS; l++) {
            CK(cuMemAlloc, (&fill[k][l], bytes));
            float sc = k == 0 ? 0.0001f * (float)(l + 1) : 0.0f, base = k == 0 ? -0.02f : 0.0f;
            void *a[] = { &fill[k][l], &T.n, &sc, &base };
            CK(cuLaunchKernel, (T.f_iota, T.grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, a, NULL));
        }
    }
    CK(cuMemAlloc, (&T.x, bytes));
    CK(cuMemAlloc, (&T.target, bytes));
    {
        float sx = 0.002f, bx = -0.5f, st = -0.001f, bt = 0.25f;
        void *ax[] = { &T.x, &T.n, &sx, &bx };
        void *at[] = { &T.target, &T.n, &st, &bt };
        CK(cuLaunchKernel, (T.f_iota, T.grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, ax, NULL));
        CK(cuLaunchKernel, (T.f_iota, T.grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, at, NULL));
    }
    for (int i = 0; i < POOL; i++)
        CK(cuMemAlloc, (&T.pool[i], bytes));
    for (int i = 0; i < SPOOL; i++)
        CK(cuMemAlloc, (&T.spool[i], 64 * sizeof(uint64_t)));

    pthread_t bt;
    if (pthread_create(&bt, NULL, tr_backward_thread, NULL) != 0)
        app_die("pthread_create failed");

    uint64_t plan = 0x67617073ull;       /* where the gaps fall, step by step */
    uint64_t losses = 0x6c6f7373ull;
    CUdeviceptr loss = 0;
    const float lr = 0.01f, momentum = 0.9f, b1 = 0.9f, b2 = 0.99f;
    float b1t = 1.0f;
    for (long step = 0; step < steps; step++) {
        /* This step's gaps: GAPS distinct places, 50-400 us each. */
        for (int s = 0; s < SITES; s++)
            T.gap_us[s] = 0;
        for (long k = 0; k < gaps; k++) {
            long s;
            do
                s = app_rand_in(&plan, 0, SITES - 1);
            while (T.gap_us[s] != 0);
            T.gap_us[s] = app_rand_in(&plan, GAP_MIN_US, GAP_MAX_US);
        }

        app_spin_us(T.gap_us[SITE_ZERO]);
        for (int l = 0; l < LAYERS; l++) {
            tr_before_launch(&th);
            CK(cuMemsetD8Async, (T.g[l], 0, bytes, 0));
        }

        /* forward */
        CUdeviceptr in = T.x;
        for (int l = 0; l < LAYERS; l++) {
            app_spin_us(T.gap_us[SITE_FWD + l]);
            CUdeviceptr a = tr_take();
            float decay = 0.5f, dt = 0.0625f;
            uint32_t zero = 0;
            void *sa[] = { &a, &T.n, &decay, &dt, &zero };
            tr_stencil(&th, a, in);
            tr_axpy(&th, a, T.w[l], 1.0f);
            tr_launch(&th, T.f_scale, T.grid, TK_BLOCK, 0, sa);
            T.act[l] = in = a;
        }
        app_spin_us(T.gap_us[SITE_LOSS]);
        T.diff = tr_take();
        tr_before_launch(&th);
        CK(cuMemcpyDtoDAsync, (T.diff, in, bytes, 0));
        tr_axpy(&th, T.diff, T.target, -1.0f);
        CUdeviceptr partials = tr_take_small();
        loss = tr_take_small();
        int32_t nparts = RBLOCKS;
        void *ra[] = { &partials, &T.diff, &T.n };
        void *fa[] = { &loss, &partials, &nparts };
        tr_launch(&th, T.f_reduce, RBLOCKS, TK_BLOCK, TK_BLOCK * sizeof(uint64_t), ra);
        tr_launch(&th, T.f_finalize, 1, 1, 0, fa);
        T.gout = tr_take();
        float zero = 0.0f, one = 1.0f;
        void *oa[] = { &T.gout, &T.n, &zero, &one };
        tr_launch(&th, T.f_iota, T.grid, TK_BLOCK, 0, oa);

        /* backward, on autograd's thread */
        app_spin_us(T.gap_us[SITE_HANDOFF]);
        tr_run_backward(step);

        /* optimizer */
        b1t *= b1;
        if (adam) {
            CUstreamCaptureStatus cs;
            CK(cuStreamIsCapturing, (0, &cs));
            if (cs != CU_STREAM_CAPTURE_STATUS_NONE)
                app_die("the legacy stream is capturing");
        }
        for (int l = 0; l < LAYERS; l++) {
            app_spin_us(T.gap_us[SITE_OPT + l]);
            if (adam) {
                tr_scale_inplace(&th, T.m[l], b1);
                tr_axpy(&th, T.m[l], T.g[l], 1.0f - b1);
                tr_scale_inplace(&th, T.v[l], b2);
                tr_axpy(&th, T.v[l], T.g[l], 1.0f - b2);
                tr_axpy(&th, T.w[l], T.m[l], -lr / (1.0f - b1t));
            } else {
                tr_scale_inplace(&th, T.m[l], momentum);
                tr_axpy(&th, T.m[l], T.g[l], 1.0f);
                tr_axpy(&th, T.w[l], T.m[l], -lr);
            }
        }
        app_spin_us(T.gap_us[SITE_END]);
        if (item) {     /* loss.item() */
            uint64_t v;
            CK(cuMemcpyDtoHAsync, (&v, loss, sizeof v, 0));
            CK(cuStreamSynchronize, (0));
            losses = app_hash_u64(losses, v);
        }
    }
    pthread_mutex_lock(&T.mu);
    T.quit = 1;
    pthread_cond_broadcast(&T.cv);
    pthread_mutex_unlock(&T.mu);
    pthread_join(bt, NULL);
    CK(cuCtxSynchronize, ());

    if (steps > 0 && !item) {
        uint64_t v;
        CK(cuMemcpyDtoH, (&v, loss, sizeof v));
        losses = app_hash_u64(losses, v);
    }
    char name[64];
    snprintf(name, sizeof name, "train-%s-%s-loss", opt, sync);
    app_checksum(name, losses);
    const char *what[] = { "param", "grad", adam ? "m" : "momentum", "v" };
    for (int k = 0; k < (adam ? 4 : 3); k++) {
        uint64_t h = 0x747261696eull + (uint64_t)k;
        for (int l = 0; l < LAYERS; l++)
            h = tr_hash_buffer(h, fill[k][l]);
        snprintf(name, sizeof name, "train-%s-%s-%s", opt, sync, what[k]);
        app_checksum(name, h);
    }

    for (int k = 0; k < 4; k++)
        for (int l = 0; l < LAYERS; l++)
            CK(cuMemFree, (fill[k][l]));
    for (int i = 0; i < POOL; i++)
        CK(cuMemFree, (T.pool[i]));
    for (int i = 0; i < SPOOL; i++)
        CK(cuMemFree, (T.spool[i]));
    CK(cuMemFree, (T.x));
    CK(cuMemFree, (T.target));
    app_close(dev, mod);
    return 0;
}
