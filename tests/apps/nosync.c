/* nosync - loops that never synchronize (issue 14): one stream, step after
 * step queued with no host synchronization inside the loop (only a final
 * synchronize and read-back), so that no host boundary delimits the step and
 * only the launch stream itself shows where it repeats. Each MODE is one
 * shape a period detector has to handle (tests/apps/README.md has the table;
 * tests/apps/nosync_expect.txt says what share of each should be replayed).
 *
 * Usage: nosync MODULE ITERS [MODE [ARGS]]   (ITERS steps; MODE default fixed)
 *   fixed      [K]             K ops a step (default 8), the same every step
 *   scalar     [K]             the same, with an iteration counter in every
 *                              scale_add_scalar that changes every step
 *   rotate     [K [NBUF]]      the step's two working buffers rotate among
 *                              NBUF = 2..4 (default 3)
 *   nested     [REPS [T]]      a 3-op layer repeated REPS times (default 4),
 *                              identical each time, then a tail of T ops
 *                              (default 4) that differs from the layer
 *   interleave                 two patterns, 5 ops and 7 ops, on their own
 *                              buffers, alternating (a step is both)
 *   phase      [K1 [K2 [SW]]]  steps of K1 ops (default 6) until step SW
 *                              (default ITERS/2), then of K2 ops (default 10)
 *   diverge    [P [T]]         an identical prefix of P ops (default 8), then
 *                              one of three tails (T, T+1 and T+2 ops, default
 *                              T=4) picked by a fixed-seed PRNG each step
 *   long       [K]             fixed with a step longer than REPRISE_MAX_OPS
 *                              (default K = 5000, the default bound is 4096)
 *   random     [K]             ITERS*K ops of random kernel, buffers and
 *                              scalars (fixed-seed PRNG): nothing repeats
 *   late       [R [K]]         R ops as in random (default 30000), then ITERS
 *                              fixed steps of K ops (default 8): a loop that
 *                              starts after a stream has stopped learning
 *   unaligned  [K [EVERY]]     fixed steps of K ops (default 12) with a
 *                              cuStreamSynchronize after every EVERY-th op
 *                              (default 5, which does not divide 12)
 *   longkernel [K [N]]         fixed steps over buffers of N floats (default
 *                              2^25, sized for ~100 us a kernel on an H200,
 *                              unmeasured; give a small N on the CPU driver
 *                              and simulate the time with CPUCUDA_DELAY_US)
 *   hostwork   [K [US]]        half a step, US microseconds (default 1000) of
 *                              host work with no driver call (a busy wait on
 *                              the clock), the other half, a synchronize
 *
 * Every op within a step differs from the others (each scale_add_scalar has
 * its own time step), so no step repeats inside itself unless the mode says
 * so (nested, interleave). Prints one checksum per buffer. */
#include <cuda.h>
#include <time.h>

#include "appcommon.h"

#define NBUFS 5          /* four that can rotate, and an accumulator */
#define SMALL_N 512      /* floats per buffer, every mode but longkernel */

typedef struct ns_prog {
    CUstream s;
    CUfunction f_stencil, f_axpy, f_scale, f_rng, f_noise, f_iota;
    CUdeviceptr buf[NBUFS], noise;
    int32_t n;
    unsigned int grid;
} ns_prog;

static void ns_stencil(ns_prog *p, CUdeviceptr out, CUdeviceptr in)
{
    float wl = 0.25f, wc = 0.5f, wr = 0.25f;
    void *a[] = { &out, &in, &p->n, &wl, &wc, &wr };
    CK(cuLaunchKernel, (p->f_stencil, p->grid, 1, 1, TK_BLOCK, 1, 1, 0, p->s, a, NULL));
}

static void ns_axpy(ns_prog *p, CUdeviceptr y, CUdeviceptr x, float alpha)
{
    void *a[] = { &y, &x, &alpha, &p->n };
    CK(cuLaunchKernel, (p->f_axpy, p->grid, 1, 1, TK_BLOCK, 1, 1, 0, p->s, a, NULL));
}

static void ns_scale(ns_prog *p, CUdeviceptr x, float dt, uint32_t iter)
{
    float decay = 0.75f;
    void *a[] = { &x, &p->n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (p->f_scale, p->grid, 1, 1, TK_BLOCK, 1, 1, 0, p->s, a, NULL));
}

/* Two ops: fresh random words at a given stream offset, added as noise. */
static void ns_noise(ns_prog *p, CUdeviceptr x, uint64_t offset)
{
    uint64_t seed = 0x6e6f73796e63ull;
    float scale = 0.125f;
    void *ra[] = { &p->noise, &p->n, &seed, &offset };
    CK(cuLaunchKernel, (p->f_rng, p->grid, 1, 1, TK_BLOCK, 1, 1, 0, p->s, ra, NULL));
    void *na[] = { &x, &p->noise, &p->n, &scale };
    CK(cuLaunchKernel, (p->f_noise, p->grid, 1, 1, TK_BLOCK, 1, 1, 0, p->s, na, NULL));
}

/* The j-th op of a step over working buffers a, b and accumulator c: two
 * stencils (a -> b -> a), a scale_add_scalar whose time step is j's own, an
 * axpy into c. Any four consecutive ops hold one scale with a time step no
 * other op of the step has, so a step of K ops has no shorter period. */
static void ns_op(ns_prog *p, long j, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, uint32_t iter)
{
    switch (j % 4) {
    case 0: ns_stencil(p, b, a); break;
    case 1: ns_stencil(p, a, b); break;
    case 2: ns_scale(p, a, 0.001f * (float)(j + 1), iter); break;
    default: ns_axpy(p, c, a, 0.125f); break;
    }
}

/* ops [from, to) of a fixed step on buffers 0, 1 and the accumulator. */
static void ns_ops(ns_prog *p, long from, long to, uint32_t iter)
{
    for (long j = from; j < to; j++)
        ns_op(p, j, p->buf[0], p->buf[1], p->buf[NBUFS - 1], iter);
}

/* A fixed-seed generator (splitmix64), the same sequence on every run. */
static uint64_t ns_rand(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ull;
    return tk_mix64(*state);
}

/* One op drawn at random: a kernel, its buffers and its scalars. */
static void ns_random_op(ns_prog *p, uint64_t *rng)
{
    uint64_t r = ns_rand(rng);
    CUdeviceptr a = p->buf[(r >> 8) % 4];
    CUdeviceptr b = p->buf[((r >> 8) % 4 + 1 + (r >> 16) % 3) % 4];   /* != a */
    float v = 0.001f * (float)((r >> 24) % 1024 + 1);
    switch (r % 4) {
    case 0: ns_stencil(p, b, a); break;
    case 1: ns_scale(p, a, v, (uint32_t)(r >> 40)); break;
    case 2: ns_axpy(p, p->buf[NBUFS - 1], a, v); break;
    default: ns_noise(p, a, r >> 34); break;
    }
}

/* Host work without a driver call: spins on the monotonic clock. */
static void ns_host_work(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000L < us);
}

/* A 64-bit word at a time: fast enough for longkernel's large buffers. */
static uint64_t ns_hash_words(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = tk_mix64(h ^ w);
    }
    return app_hash(h, b + i, n - i);
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[MODE [ARGS]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *mode = argc > 3 ? argv[3] : "fixed";
    static const char *const modes[] = { "fixed", "scalar", "rotate", "nested", "interleave",
        "phase", "diverge", "long", "random", "late", "unaligned", "longkernel", "hostwork" };
    int known = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        known |= !strcmp(mode, modes[i]);
    if (!known) {
        printf("error: bad mode %s (want fixed, scalar, rotate, nested, interleave, phase, "
               "diverge, long, random, late, unaligned, longkernel or hostwork)\n", mode);
        return 2;
    }
    const int small = strcmp(mode, "longkernel") != 0;

    ns_prog p;
    memset(&p, 0, sizeof p);
    p.n = small ? SMALL_N : (int32_t)app_arg(argc, argv, 5, 1L << 25, 8, 1L << 28);
    /* Small buffers: a few blocks (the kernels grid-stride). Large ones: a
     * thread an element, so that a kernel's time is its memory traffic. */
    if (small) {
        p.grid = app_blocks(p.n);
    } else {
        p.grid = (unsigned int)(((long)p.n + TK_BLOCK - 1) / TK_BLOCK);
    }

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(cuCtxSetCurrent, (ctx));
    CK(cuModuleLoad, (&mod, argv[1]));
    CK(cuModuleGetFunction, (&p.f_stencil, mod, "stencil3"));
    CK(cuModuleGetFunction, (&p.f_axpy, mod, "axpy"));
    CK(cuModuleGetFunction, (&p.f_scale, mod, "scale_add_scalar"));
    CK(cuModuleGetFunction, (&p.f_rng, mod, "rng_fill"));
    CK(cuModuleGetFunction, (&p.f_noise, mod, "add_noise"));
    CK(cuModuleGetFunction, (&p.f_iota, mod, "iota_f32"));
    CK(cuStreamCreate, (&p.s, CU_STREAM_NON_BLOCKING));

    size_t bytes = (size_t)p.n * sizeof(float);
    CK(cuMemAlloc, (&p.noise, (size_t)p.n * sizeof(uint32_t)));
    for (int i = 0; i < NBUFS; i++) {
        CK(cuMemAlloc, (&p.buf[i], bytes));
        float scale = 0.001f * (float)(i + 1), base = (float)i;
        void *a[] = { &p.buf[i], &p.n, &scale, &base };
        CK(cuLaunchKernel, (p.f_iota, p.grid, 1, 1, TK_BLOCK, 1, 1, 0, p.s, a, NULL));
    }
    CUdeviceptr acc = p.buf[NBUFS - 1];
    uint64_t rng = 0x4e4f53594e43ull;   /* fixed seed: every run the same */

    if (!strcmp(mode, "fixed") || !strcmp(mode, "scalar") || !strcmp(mode, "long") ||
        !strcmp(mode, "longkernel")) {
        long k = app_arg(argc, argv, 4, !strcmp(mode, "long") ? 5000 : 8, 1, 1000000);
        int changing = !strcmp(mode, "scalar");
        for (long it = 0; it < iters; it++)
            ns_ops(&p, 0, k, changing ? (uint32_t)it : 0u);
    } else if (!strcmp(mode, "rotate")) {
        long k = app_arg(argc, argv, 4, 8, 1, 1000000);
        long nbuf = app_arg(argc, argv, 5, 3, 2, 4);
        for (long it = 0; it < iters; it++)
            for (long j = 0; j < k; j++)
                ns_op(&p, j, p.buf[it % nbuf], p.buf[(it + 1) % nbuf], acc, 0);
    } else if (!strcmp(mode, "nested")) {
        long reps = app_arg(argc, argv, 4, 4, 1, 1000);
        long tail = app_arg(argc, argv, 5, 4, 1, 1000);
        for (long it = 0; it < iters; it++) {
            for (long r = 0; r < reps; r++) {   /* the layer: the same 3 ops */
                ns_stencil(&p, p.buf[1], p.buf[0]);
                ns_stencil(&p, p.buf[0], p.buf[1]);
                ns_axpy(&p, acc, p.buf[0], 0.125f);
            }
            for (long j = 0; j < tail; j++) {   /* the tail: other kernels */
                if (j % 2 == 0)
                    ns_scale(&p, p.buf[0], 0.002f * (float)(j + 1), 0);
                else
                    ns_axpy(&p, p.buf[2], p.buf[0], 0.25f);
            }
        }
    } else if (!strcmp(mode, "interleave")) {
        for (long it = 0; it < iters; it++) {
            for (long j = 0; j < 5; j++)        /* pattern A: buffers 0, 1 */
                ns_op(&p, j, p.buf[0], p.buf[1], acc, 0);
            for (long j = 0; j < 7; j++)        /* pattern B: buffers 2, 3 */
                ns_op(&p, 100 + j, p.buf[2], p.buf[3], acc, 1);
        }
    } else if (!strcmp(mode, "phase")) {
        long k1 = app_arg(argc, argv, 4, 6, 1, 1000000);
        long k2 = app_arg(argc, argv, 5, 10, 1, 1000000);
        long sw = app_arg(argc, argv, 6, iters / 2, 0, 100000000);
        for (long it = 0; it < iters; it++)
            ns_ops(&p, 0, it < sw ? k1 : k2, 0);
    } else if (!strcmp(mode, "diverge")) {
        long prefix = app_arg(argc, argv, 4, 8, 1, 1000000);
        long tail = app_arg(argc, argv, 5, 4, 1, 1000);
        for (long it = 0; it < iters; it++) {
            ns_ops(&p, 0, prefix, 0);
            switch (ns_rand(&rng) % 3) {
            case 0:                             /* T scales of the accumulator */
                for (long j = 0; j < tail; j++)
                    ns_scale(&p, acc, 0.01f * (float)(j + 1), 0);
                break;
            case 1:                             /* T+1 stencils on buffers 2, 3 */
                for (long j = 0; j <= tail; j++)
                    ns_stencil(&p, p.buf[(j + 1) % 2 + 2], p.buf[j % 2 + 2]);
                break;
            default:                            /* T+2: noise, then axpys */
                ns_noise(&p, p.buf[3], (uint64_t)it * (uint64_t)p.n);
                for (long j = 0; j < tail; j++)
                    ns_axpy(&p, p.buf[2], p.buf[3], 0.0625f * (float)(j + 1));
                break;
            }
        }
    } else if (!strcmp(mode, "random")) {
        long k = app_arg(argc, argv, 4, 16, 1, 1000000);
        for (long i = 0; i < iters * k; i++)
            ns_random_op(&p, &rng);
    } else if (!strcmp(mode, "late")) {
        long r = app_arg(argc, argv, 4, 30000, 0, 100000000);
        long k = app_arg(argc, argv, 5, 8, 1, 1000000);
        for (long i = 0; i < r; i++)
            ns_random_op(&p, &rng);
        for (long it = 0; it < iters; it++)
            ns_ops(&p, 0, k, 0u);
    } else if (!strcmp(mode, "unaligned")) {
        long k = app_arg(argc, argv, 4, 12, 1, 1000000);
        long every = app_arg(argc, argv, 5, 5, 1, 1000000);
        long done = 0;
        for (long it = 0; it < iters; it++) {
            for (long j = 0; j < k; j++) {
                ns_ops(&p, j, j + 1, 0);
                if (++done % every == 0)
                    CK(cuStreamSynchronize, (p.s));
            }
        }
    } else {                                    /* hostwork */
        long k = app_arg(argc, argv, 4, 20, 2, 1000000);
        long us = app_arg(argc, argv, 5, 1000, 0, 10000000);
        for (long it = 0; it < iters; it++) {
            ns_ops(&p, 0, k / 2, 0);
            ns_host_work(us);
            ns_ops(&p, k / 2, k, 0);
            CK(cuStreamSynchronize, (p.s));
        }
    }
    CK(cuStreamSynchronize, (p.s));

    unsigned char *h = malloc(bytes);
    if (h == NULL)
        app_die("out of host memory");
    for (int i = 0; i < NBUFS; i++) {
        char name[64];
        CK(cuMemcpyDtoH, (h, p.buf[i], bytes));
        snprintf(name, sizeof name, "nosync-%s-buf%d", mode, i);
        app_checksum(name, ns_hash_words(0x4e53ull + (uint64_t)i, h, bytes));
    }
    free(h);
    for (int i = 0; i < NBUFS; i++)
        CK(cuMemFree, (p.buf[i]));
    CK(cuMemFree, (p.noise));
    CK(cuStreamDestroy, (p.s));
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
