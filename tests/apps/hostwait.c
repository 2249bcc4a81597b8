/* hostwait - programs in which the device waits for the host and the host
 * for the device, each legal and deadlock-free as written; a shim that
 * makes the host wait where the program does not (on work queued behind a
 * cuStreamWaitValue32 that the program's own later call releases), or that
 * holds back work the host is waiting for, hangs them (issue 26, findings 5
 * and 6, and the idle watch). A watchdog ends a hung run in a few seconds
 * with `error: hung: ...` and exit 3. Modes:
 *   evict     steps of a staged host-to-device copy (pageable memory, its
 *             bytes changing every step) and a kernel on stream S, each
 *             synchronized; every 8th step S first waits
 *             (cuStreamWaitValue32) for a flag that the host sets (by
 *             cuStreamWriteValue32 on another stream) only after a short
 *             step on stream T has been issued and synchronized three
 *             times: with REPRISE_MAX_GRAPHS=1, its capture evicts the
 *             sequence whose replay is queued behind the wait
 *   evictreuse  the same, T's step beginning with a staged copy of its own
 *             (the same size as S's, other bytes): its capture prepares
 *             staging while the evicted sequence's staging, which the
 *             queued replay still has to read, waits in the engine's pool
 *             (issue 34, class f)
 *   takeover  the same steps; then S waits for the flag, one more step is
 *             issued, twenty 2-op steps on twenty other streams follow
 *             (each synchronized), and then three steps of the same length
 *             and kinds but another kernel (add_noise for axpy: their
 *             structure changed for good) on S, each followed by the same
 *             wait again; only then does the host set the flag, and the
 *             new steps go on, synchronized. A capture of the new steps may
 *             take the old sequence's executable over while its last
 *             replay is still queued behind the wait
 *   capture   a worker thread repeats a 3-kernel step on its per-thread
 *             stream, synchronizing each; then its stream waits for the
 *             flag and the worker issues the first two kernels of one more
 *             step and stops; the main thread begins a capture of its own
 *             on another stream (thread-local mode), captures a kernel,
 *             ends it, and only then sets the flag; the worker finishes
 *             its step
 *   spin      steps of three kernels on S, the first writing mapped pinned
 *             memory (CU_MEMHOSTALLOC_DEVICEMAP); from the 7th step on the
 *             host pauses 5 ms before the step, and after its first kernel
 *             spins on the mapped memory, with no driver call, until the
 *             kernel has written it, then issues the rest. Work held back
 *             for a graph must be issued when the host goes quiet (the
 *             idle watch, REPRISE_IDLE_US); with it off (0) this mode
 *             hangs by design (docs/engine.md, "Known limits")
 * Prints a checksum per buffer.
 * Usage: hostwait MODULE ITERS [evict|evictreuse|takeover|capture|spin]   (default evict) */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "appcommon.h"

#define N 1024
#define NFILL 20
#define WATCHDOG_S 5

#include "stepkernels.h"
static CUfunction f_noise;

/* x += scale*(u24(noise)/2^24 - 1/2), noise read as words */
static void add_noise(CUstream s, CUdeviceptr x, CUdeviceptr noise, float sc)
{
    void *args[] = { &x, &noise, &n, &sc };
    CK(cuLaunchKernel, (f_noise, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000 * 1000};
    while (nanosleep(&t, &t) != 0)
        ;
}

/* Host bytes that change every step, then copied from pageable memory:
 * the driver takes them at the call (a shim stages them). */
static void staged_copy(CUstream s, CUdeviceptr dst, float *pageable, long step)
{
    for (int i = 0; i < N; i++)
        pageable[i] = (float)((step * 7 + i) % 13) * 0.25f;
    CK(cuMemcpyHtoDAsync, (dst, pageable, N * sizeof(float), s));
}

static uint64_t read_back(uint64_t seed, CUdeviceptr d)
{
    float h[N];
    CK(cuMemcpyDtoH, (h, d, sizeof h));
    return app_hash(seed, h, sizeof h);
}

/* ---- capture: the worker --------------------------------------------------- */

static CUcontext g_ctx;
static CUdeviceptr g_x, g_y, g_flag;
static long g_iters;
/* Phases: 1: the worker's held step has begun; 2: the main thread has set the flag */

static void *worker(void *unused)
{
    (void)unused;
    CK(cuCtxSetCurrent, (g_ctx));
    CUstream pt = CU_STREAM_PER_THREAD;
    for (long it = 0; it <= g_iters; it++) {
        if (it == g_iters) /* released by the main thread after its capture */
            CK(cuStreamWaitValue32, (pt, g_flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        scale(pt, g_x, 3);
        axpy(pt, g_y, g_x, 0.5f);
        if (it == g_iters) {
            app_phase_set(1);
            app_phase_wait(2);
        }
        scale(pt, g_y, 5);
        CK(cuStreamSynchronize, (pt));
    }
    return NULL;
}

static void capture_mode(CUstream w)
{
    CUstream s2;
    CUdeviceptr tmp;
    CUgraph g;
    CUgraphExec x;
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc, (&tmp, N * sizeof(float)));
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        app_die("pthread_create failed");
    app_phase_wait(1);
    CK(cuStreamBeginCapture, (s2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    iota(s2, tmp, 4.0f);
    CK(cuStreamEndCapture, (s2, &g));
    CK(cuStreamWriteValue32, (w, g_flag, 1, 0));
    app_phase_set(2);
    pthread_join(t, NULL);
    CK(cuGraphInstantiateWithFlags, (&x, g, 0));
    CK(cuGraphLaunch, (x, s2));
    CK(cuStreamSynchronize, (s2));
    CK(cuCtxSynchronize, ());
    app_checksum("hostwait-capture-x", read_back(0x78, g_x));
    app_checksum("hostwait-capture-y", read_back(0x79, g_y));
    app_checksum("hostwait-capture-graph", read_back(0x67, tmp));
    CK(cuGraphExecDestroy, (x));
    CK(cuGraphDestroy, (g));
    CK(cuMemFree, (tmp));
    CK(cuStreamDestroy, (s2));
}

/* ---- spin: mapped memory the held work writes ------------------------------- */

static void spin_mode(CUstream s, long iters, CUdeviceptr z)
{
    float *hp;
    CUdeviceptr dp;
    CK(cuMemHostAlloc, ((void **)&hp, N * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
    CK(cuMemHostGetDevicePointer, (&dp, hp, 0));
    const float sentinel = -1.0f, written = 1.0f + (float)(N - 1) * 0.0009765625f;
    uint32_t sentinel_bits = app_f32_bits(sentinel);
    uint64_t reads = 0x7370696eull;
    for (long it = 0; it < iters; it++) {
        int spin = it >= 6;
        hp[N - 1] = sentinel; /* the last step was synchronized: no kernel writes it now */
        if (spin)
            pause_ms(5); /* host work: long enough for a watch to fall asleep */
        iota(s, dp, 1.0f);
        if (spin) {
            /* The kernel just issued writes the value; the driver runs it
             * without any further call. */
            uint32_t *word = (uint32_t *)(void *)&hp[N - 1];
            while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == sentinel_bits)
                ;
        }
        axpy(s, z, dp, 0.5f);
        scale(s, z, 7);
        CK(cuStreamSynchronize, (s));
        if (app_f32_bits(hp[N - 1]) != app_f32_bits(written))
            app_die("the mapped memory does not hold what the kernel wrote");
        reads = app_hash(reads, hp, N * sizeof(float));
    }
    app_checksum("hostwait-spin-reads", reads);
    app_checksum("hostwait-spin-z", read_back(0x7a, z));
    CK(cuMemFreeHost, (hp));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[evict|evictreuse|takeover|capture|spin]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "evict";
    int reuse = !strcmp(mode, "evictreuse"), evict = reuse || !strcmp(mode, "evict"),
        takeover = !strcmp(mode, "takeover"), capture = !strcmp(mode, "capture"),
        spin = !strcmp(mode, "spin");
    if (!evict && !takeover && !capture && !spin)
        app_die("the third argument must be evict, evictreuse, takeover, capture or spin");
    app_watchdog(mode, WATCHDOG_S);
    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &g_ctx, &mod);
    step_kernels_load(mod);
    f_noise = app_function(mod, "add_noise");

    CUstream s, t, w;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&t, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&w, CU_STREAM_NON_BLOCKING));
    CUdeviceptr y, z, u;
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    CK(cuMemAlloc, (&z, N * sizeof(float)));
    CK(cuMemAlloc, (&u, N * sizeof(float)));
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    CK(cuMemAlloc, (&g_flag, sizeof(uint32_t)));
    CK(cuMemsetD32, (g_flag, 0, 1));
    /* Set up on the legacy stream: no sequence of S begins like the spin
     * steps but theirs. */
    iota(CU_STREAM_LEGACY, z, 0.5f);
    iota(CU_STREAM_LEGACY, u, 1.5f);
    iota(CU_STREAM_LEGACY, g_x, 1.0f);
    iota(CU_STREAM_LEGACY, g_y, 0.0f);
    CK(cuCtxSynchronize, ());
    float *pageable = malloc(N * sizeof(float)), *pageable_t = malloc(N * sizeof(float));
    if (!pageable || !pageable_t)
        app_die("out of host memory");
    CUdeviceptr ut;
    CK(cuMemAlloc, (&ut, N * sizeof(float)));
    g_iters = iters;

    if (capture) {
        capture_mode(w);
    } else if (spin) {
        spin_mode(s, iters, z);
    } else if (evict) {
        cuuint32_t round = 0;
        for (long it = 0; it < iters; it++) {
            int held = it % 8 == 7;
            if (held) /* released once T's steps are done */
                CK(cuStreamWaitValue32, (s, g_flag, ++round, CU_STREAM_WAIT_VALUE_GEQ));
            staged_copy(s, y, pageable, it);
            axpy(s, z, y, 0.5f);
            if (held) {
                for (int k = 0; k < 3; k++) { /* learnt, and captured */
                    if (reuse) {
                        staged_copy(t, ut, pageable_t, 1000 + 3 * it + k);
                        axpy(t, u, ut, 0.25f);
                    }
                    scale(t, u, 2);
                    axpy(t, u, u, -0.125f);
                    CK(cuStreamSynchronize, (t));
                }
                CK(cuStreamWriteValue32, (w, g_flag, round, 0));
            }
            CK(cuStreamSynchronize, (s));
        }
        app_checksum("hostwait-evict-z", read_back(0x7a, z));
        app_checksum("hostwait-evict-u", read_back(0x75, u));
    } else {
        /* The old steps, synchronized; then one more behind the wait. */
        long old = iters / 2 > 4 ? iters / 2 : 4;
        for (long it = 0; it <= old; it++) {
            if (it == old)
                CK(cuStreamWaitValue32, (s, g_flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
            staged_copy(s, y, pageable, it);
            axpy(s, z, y, 0.5f);
            if (it < old)
                CK(cuStreamSynchronize, (s));
        }
        /* Other streams' steps: time passes for the old sequence (the
         * engine's clock counts segments), and none of them repeats. */
        CUstream fill[NFILL];
        CUdeviceptr fbuf;
        CK(cuMemAlloc, (&fbuf, NFILL * N * sizeof(float)));
        for (int k = 0; k < NFILL; k++) {
            CK(cuStreamCreate, (&fill[k], CU_STREAM_NON_BLOCKING));
            CUdeviceptr b = fbuf + (CUdeviceptr)k * N * sizeof(float);
            iota(fill[k], b, (float)k);
            scale(fill[k], b, 4);
            CK(cuStreamSynchronize, (fill[k]));
        }
        /* The new steps, still behind the same wait: the same length and
         * kinds, another kernel. */
        for (long it = 0; it < 3; it++) {
            staged_copy(s, y, pageable, old + 1 + it);
            add_noise(s, z, y, 0.25f);
            CK(cuStreamWaitValue32, (s, g_flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
        }
        CK(cuStreamWriteValue32, (w, g_flag, 1, 0));
        CK(cuStreamSynchronize, (s));
        for (long it = old + 4; it < iters + 4; it++) { /* and synchronized */
            staged_copy(s, y, pageable, it);
            add_noise(s, z, y, 0.25f);
            CK(cuStreamSynchronize, (s));
        }
        CK(cuMemcpyDtoH, (pageable, fbuf, N * sizeof(float)));
        app_checksum("hostwait-takeover-fill", app_hash(0x66, pageable, N * sizeof(float)));
        app_checksum("hostwait-takeover-z", read_back(0x7a, z));
        for (int k = 0; k < NFILL; k++)
            CK(cuStreamDestroy, (fill[k]));
        CK(cuMemFree, (fbuf));
    }

    free(pageable);
    free(pageable_t);
    CK(cuMemFree, (y));
    CK(cuMemFree, (z));
    CK(cuMemFree, (u));
    CK(cuMemFree, (ut));
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    CK(cuMemFree, (g_flag));
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (t));
    CK(cuStreamDestroy, (w));
    app_close(dev, mod);
    return 0;
}
