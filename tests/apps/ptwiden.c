/* ptwiden - one structure learnt on two threads' per-thread default
 * streams, whose fields are found volatile on one thread while the other
 * holds work matched against it. Each step is scale_add_scalar(it), axpy,
 * scale_add_scalar(it), axpy: the iteration counter changes every step, so
 * a shim replays one graph with updates of ops 0 and 2, and matches op 1
 * and 3 exactly. The main thread runs ITERS steps (synchronizing each),
 * then issues the first two launches of one more and stops (a replaying
 * shim holds them). A second thread then runs the same kernels on other
 * buffers (the same structure: the per-thread streams share the handle
 * CU_STREAM_PER_THREAD), synchronizing each step, which finds op 1's
 * buffer argument volatile too. Then the main thread finishes its step.
 * Found by a review (2026-12-01): the held launch of op 1 was read back
 * from values the engine had never written.
 *
 * Mode `arena`: the held launches are exact ops of a sequence with updates
 * whose values the stream's record never wrote anywhere. Two structures
 * alternate on the main thread in an irregular order, each synchronized:
 * A = iota(scratch) with fixed values (idempotent: both threads may run
 * it on the same buffer), axpy(y, scratch), scale_add_scalar(y, it),
 * axpy(z, y); B = scale_add_scalar(x, it), axpy(w, x), scale_add_scalar(x,
 * it), whose first two ops' parameters take as many bytes as A's (so a
 * sequence's values kept for B lie where A's op 1 would be read, and are
 * another valid launch: a wrong result, not a crash). The main thread
 * ends with B, then holds A's first two launches (both exact, matched
 * with the values A was captured with); the second thread runs A's
 * structure on its own y and z, which widens op 1 (its y) in the match,
 * while the main thread holds it; the main thread then synchronizes (the
 * held launches run eagerly) and finishes its step. Found by a review (2026-12-01) and lost
 * when learning changed: the held op 1 was read back from the values
 * where the stream keeps a sequence's launches, which held B's.
 * The file is built with the per-thread default stream: stream 0 is each
 * thread's own.
 * Usage: ptwiden MODULE ITERS [arena] */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <pthread.h>
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 256

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale, f_iota;
static CUdeviceptr g_x1, g_y1, g_x2, g_y2, g_z1, g_z2, g_scratch, g_w1;
static int g_arena;

/* One step on x and y: x = decay*x + dt*it (twice), y += x/2 after each;
 * only the first `nops` launches. */
static void step(CUdeviceptr x, CUdeviceptr y, uint32_t it, int from, int nops)
{
    int32_t n = N;
    float a = 0.5f, decay = 0.9375f, dt = 0.25f;
    unsigned int grid = app_blocks(N);
    void *sc[] = {&x, &n, &decay, &dt, &it};
    void *ax[] = {&y, &x, &a, &n};
    for (int op = from; op < from + nops; op++)
        if (op % 2 == 0)
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, sc, NULL));
        else
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, ax, NULL));
}

/* Mode arena: structure A's launches [from, from + nops) on y and z. */
static void step_a(CUdeviceptr y, CUdeviceptr z, uint32_t it, int from, int nops)
{
    int32_t n = N;
    float a = 0.5f, decay = 0.9375f, dt = 0.25f, scale = 0.001f, base = 1.0f;
    unsigned int grid = app_blocks(N);
    void *io[] = {&g_scratch, &n, &scale, &base};
    void *ax1[] = {&y, &g_scratch, &a, &n};
    void *sc[] = {&y, &n, &decay, &dt, &it};
    void *ax2[] = {&z, &y, &a, &n};
    void **args[] = {io, ax1, sc, ax2};
    CUfunction fs[] = {f_iota, f_axpy, f_scale, f_axpy};
    for (int op = from; op < from + nops; op++)
        CK(cuLaunchKernel, (fs[op], grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, args[op], NULL));
}

/* Mode arena: structure B on x and w. */
static void step_b(CUdeviceptr x, CUdeviceptr w, uint32_t it)
{
    int32_t n = N;
    float a = 0.25f, decay = 0.96875f, dt = 0.125f;
    void *sc[] = {&x, &n, &decay, &dt, &it};
    void *ax[] = {&w, &x, &a, &n};
    for (int op = 0; op < 3; op++)
        CK(cuLaunchKernel, (op == 1 ? f_axpy : f_scale, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0,
                            op == 1 ? ax : sc, NULL));
}

/* The second thread: three whole steps on its own buffers, once the main
 * thread holds half a step. */
static void *other(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent, (g_ctx));
    int base = 0;
    if (g_arena) { /* no call of this thread while the main one makes its own */
        app_phase_set(1);
        base = 1;
    }
    app_phase_wait(base + 1);
    for (uint32_t i = 0; i < 3; i++) {
        if (g_arena)
            step_a(g_y2, g_z2, 1000 + i, 0, 4);
        else
            step(g_x2, g_y2, 1000 + i, 0, 4);
        CK(cuStreamSynchronize, (0));
    }
    app_phase_set(base + 2);
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[arena]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    if (argc > 3 && strcmp(argv[3], "arena") != 0)
        app_die("unknown mode (want arena)");
    g_arena = argc > 3;
    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    CUdeviceptr *bufs[] = {&g_x1, &g_y1, &g_x2, &g_y2, &g_z1, &g_z2, &g_scratch, &g_w1};
    int nbufs = g_arena ? 8 : 4;
    for (int i = 0; i < nbufs; i++) {
        int32_t n = N;
        float step0 = 0.001f * (float)(i + 1), base = i % 2 ? 0.0f : 1.0f;
        void *args[] = {bufs[i], &n, &step0, &base};
        CK(cuMemAlloc, (bufs[i], N * sizeof(float)));
        CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, args, NULL));
    }
    CK(cuCtxSynchronize, ());
    pthread_t t;
    if (pthread_create(&t, NULL, other, NULL) != 0)
        app_die("pthread_create failed");
    int base = 0;
    if (g_arena) {
        app_phase_wait(1); /* the other thread's context is set */
        base = 1;
    }
    for (long it = 0; it < iters; it++) {
        if (g_arena) {
            /* A and B in an order with no period short of the whole run
             * (the bits of a multiplicative hash), B last. */
            if ((((uint32_t)it * 2654435761u) >> 28 & 1) && it + 1 < iters)
                step_a(g_y1, g_z1, (uint32_t)it, 0, 4);
            else
                step_b(g_x1, g_w1, (uint32_t)it);
        } else {
            step(g_x1, g_y1, (uint32_t)it, 0, 4);
        }
        CK(cuStreamSynchronize, (0));
    }
    if (g_arena)
        step_a(g_y1, g_z1, 777, 0, 2); /* held by a replaying shim */
    else
        step(g_x1, g_y1, 777, 0, 2);
    app_phase_set(base + 1);
    app_phase_wait(base + 2);
    if (g_arena) { /* the held half step runs now, on its own */
        CK(cuStreamSynchronize, (0));
        step_a(g_y1, g_z1, 777, 2, 2);
    } else {
        step(g_x1, g_y1, 777, 2, 2);
    }
    CK(cuStreamSynchronize, (0));
    if (pthread_join(t, NULL) != 0)
        app_die("pthread_join failed");
    CK(cuCtxSynchronize, ());
    const char *names[] = {"x1", "y1", "x2", "y2", "z1", "z2", "scratch", "w1"};
    for (int i = 0; i < nbufs; i++) {
        float h[N];
        CK(cuMemcpyDtoH, (h, *bufs[i], sizeof h));
        app_checksum(names[i], app_hash((uint64_t)i + 1, h, sizeof h));
    }
    app_close(dev, mod);
    return 0;
}
