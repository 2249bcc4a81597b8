/* midseq - contexts and streams created or destroyed in the middle of a
 * repeated sequence. Every mode repeats a step of three launches (x scaled,
 * y += x/2, x scaled again) with a synchronization after each step, so a
 * shim learns and replays it; then one step is interrupted after its second
 * launch by the event of the mode, and finished afterwards:
 *   ctx-ptsz    on CU_STREAM_PER_THREAD: cuCtxCreate (which makes the new
 *               context current), an allocation, a memset and a free in
 *               it, cuCtxPopCurrent back to the first context
 *   ctx-stream  the same, on a created stream
 *   ctx-legacy  the same, on the legacy stream
 *   release     a worker thread's per-thread stream; the main thread calls
 *               cuDevicePrimaryCtxRelease (the count stays above zero)
 *   destroy     the same, with cuCtxDestroy of an unrelated context
 *   reuse       a created non-blocking stream (two steps only); while the
 *               program captures
 *               a graph of its own on another stream, it destroys that
 *               stream and creates a blocking one (the driver may give it
 *               the same handle), which then runs two launches of the
 *               step; a kernel on the legacy stream reads their result
 *               (the driver orders it after the blocking stream's work)
 * Usage: midseq MODULE ITERS [MODE]   (default ctx-ptsz) */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

enum mode { CTX_PTSZ, CTX_STREAM, CTX_LEGACY, RELEASE, DESTROY, REUSE };
static const char *const mode_names[] = {"ctx-ptsz", "ctx-stream", "ctx-legacy",
                                         "release", "destroy", "reuse"};

static CUdevice g_dev;
static CUcontext g_ctx;
static CUfunction f_axpy, f_scale;
static CUdeviceptr g_x, g_y;
static long g_iters;
static enum mode g_mode;
static int32_t g_n = N;
static float g_half = 0.5f, g_decay = 0.9375f, g_dt = 0.25f;
static uint32_t g_iter = 3;

static void op(int k, CUstream s)
{
    void *axpy_args[] = { &g_y, &g_x, &g_half, &g_n };
    void *scale_args[] = { &g_x, &g_n, &g_decay, &g_dt, &g_iter };
    CK(cuLaunchKernel, (k == 1 ? f_axpy : f_scale, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s,
                        k == 1 ? axpy_args : scale_args, NULL));
}

/* ITERS whole steps on s, each synchronized, then the first two launches
 * of one more. */
static void learn_then_interrupt(CUstream s)
{
    for (long it = 0; it < g_iters; it++) {
        op(0, s);
        op(1, s);
        op(2, s);
        CK(cuStreamSynchronize, (s));
    }
    op(0, s);
    op(1, s);
}

/* A context of its own, used and left again. */
static void other_context(void)
{
    CUcontext c2, popped;
    CUdeviceptr tmp;
    CK(cuCtxCreate, (&c2, NULL, 0, g_dev));
    CK(cuMemAlloc, (&tmp, 4096));
    CK(cuMemsetD8, (tmp, 0x5a, 4096));
    CK(cuMemFree, (tmp));
    CK(cuCtxPopCurrent, (&popped));
    if (popped != c2)
        app_die("cuCtxPopCurrent did not pop the context cuCtxCreate pushed");
    CK(cuCtxDestroy, (c2));
}

static void *worker(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent, (g_ctx));
    learn_then_interrupt(CU_STREAM_PER_THREAD);
    app_phase_set(1);
    app_phase_wait(2);
    op(2, CU_STREAM_PER_THREAD);
    CK(cuStreamSynchronize, (CU_STREAM_PER_THREAD));
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[ctx-ptsz|ctx-stream|ctx-legacy|release|destroy|reuse]");
    g_iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *m = argc > 3 ? argv[3] : "ctx-ptsz";
    size_t nmodes = sizeof mode_names / sizeof mode_names[0], i;
    for (i = 0; i < nmodes && strcmp(m, mode_names[i]); i++)
        ;
    if (i == nmodes)
        app_die("unknown mode (want ctx-ptsz, ctx-stream, ctx-legacy, release, destroy or reuse)");
    g_mode = (enum mode)i;

    CUmodule mod;
    CUfunction f_iota;
    app_open(argv[1], &g_dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    float s1 = 0.001f, b1 = 1.0f, zero = 0.0f;
    void *ix[] = { &g_x, &g_n, &s1, &b1 };
    void *iy[] = { &g_y, &g_n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, ix, NULL));
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, 0, iy, NULL));
    CK(cuCtxSynchronize, ());

    CUdeviceptr out = 0;
    if (g_mode <= CTX_LEGACY) {
        CUstream s = CU_STREAM_LEGACY;
        if (g_mode == CTX_PTSZ)
            s = CU_STREAM_PER_THREAD;
        else if (g_mode == CTX_STREAM)
            CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
        learn_then_interrupt(s);
        other_context();
        op(2, s);
        CK(cuStreamSynchronize, (s));
        if (g_mode == CTX_STREAM)
            CK(cuStreamDestroy, (s));
    } else if (g_mode == RELEASE || g_mode == DESTROY) {
        CUcontext extra = NULL, again;
        if (g_mode == RELEASE) {
            CK(cuDevicePrimaryCtxRetain, (&again, g_dev)); /* the count goes to 2 */
        } else {
            CUcontext popped;
            CK(cuCtxCreate, (&extra, NULL, 0, g_dev));
            CK(cuCtxPopCurrent, (&popped));
        }
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0)
            app_die("pthread_create failed");
        app_phase_wait(1);
        if (g_mode == RELEASE)
            CK(cuDevicePrimaryCtxRelease, (g_dev)); /* back to 1: the context lives */
        else
            CK(cuCtxDestroy, (extra));
        app_phase_set(2);
        pthread_join(t, NULL);
    } else {
        CUstream a, b, c;
        CUgraph g;
        CK(cuMemAlloc, (&out, N * sizeof(float)));
        CK(cuStreamCreate, (&a, CU_STREAM_NON_BLOCKING));
        CK(cuStreamCreate, (&c, CU_STREAM_NON_BLOCKING));
        /* Two whole steps: a shim that captures at the second holds a graph
         * of them (never launched on a, which would keep a alive). */
        for (int it = 0; it < 2; it++) {
            op(0, a);
            op(1, a);
            op(2, a);
            CK(cuStreamSynchronize, (a));
        }
        /* The program's own capture, and meanwhile a stream swapped. */
        CK(cuStreamBeginCapture, (c, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        CK(cuStreamDestroy, (a));
        /* Hostile on purpose: blocking streams are created until the
         * driver hands out the destroyed stream's handle again (a driver
         * may free a stream's memory only once its work has drained). The
         * spares are destroyed at the end; the result does not depend on
         * which stream b is. */
        CUstream spare[64];
        int nspare = 0;
        for (;;) {
            CK(cuStreamCreate, (&b, CU_STREAM_DEFAULT));
            if (b == a || nspare == 64)
                break;
            spare[nspare++] = b;
            usleep(200);
        }
        CK(cuStreamEndCapture, (c, &g));
        CK(cuGraphDestroy, (g));
        op(0, b);
        op(1, b);
        /* Read on the legacy stream, which waits for the blocking stream b. */
        CK(cuMemcpyDtoDAsync, (out, g_y, N * sizeof(float), CU_STREAM_LEGACY));
        void *axpy_args[] = { &out, &g_x, &g_half, &g_n };
        CK(cuLaunchKernel, (f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY,
                            axpy_args, NULL));
        op(2, b);
        CK(cuStreamSynchronize, (CU_STREAM_LEGACY));
        CK(cuStreamDestroy, (b));
        CK(cuStreamDestroy, (c));
        while (nspare > 0)
            CK(cuStreamDestroy, (spare[--nspare]));
    }
    CK(cuCtxSynchronize, ());

    float h[N];
    if (out) {
        CK(cuMemcpyDtoH, (h, out, sizeof h));
        app_checksum("midseq-read", app_hash(0x72656164ull, h, sizeof h));
        CK(cuMemFree, (out));
    }
    CK(cuMemcpyDtoH, (h, g_y, sizeof h));
    app_checksum("midseq-y", app_hash(0x6d696479ull, h, sizeof h));
    CK(cuMemcpyDtoH, (h, g_x, sizeof h));
    app_checksum("midseq-x", app_hash(0x6d696478ull, h, sizeof h));
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    app_close(g_dev, mod);
    return 0;
}
