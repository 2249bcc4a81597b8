/* rotate - buffers in rotation on a created stream, then changes that reach
 * a sequence with several executables (one per content that comes back).
 * Each step is scale_add_scalar(x_b), axpy(y_b, x_b, a), scale_add_scalar(x_b)
 * with b = step % NBUF, and a synchronize every SYNC steps. A shim replays it
 * with one graph with updates and an executable per buffer. From the first
 * third on, axpy's scale alternates between two values (a field found
 * volatile while the executables exist); in mode 1 the scalar of
 * scale_add_scalar alternates too. From the second third on, stencil3
 * (y_{b+1} from x_b) replaces axpy: a new structure, whose graph may take an
 * old executable over. Found by a review of the executables per content
 * (2026-12-01); prints one checksum over every buffer. In mode 2 nothing of
 * that happens: no buffer rotates, axpy stays, and the grid of both
 * scale_add_scalar launches takes NBUF values in turn (blocks past the end
 * do nothing): contents that come back told apart by their geometry alone.
 * Mode 3 is mode 2 with, before axpy, a kernel without parameters (tick)
 * whose grid counts up to 40 and starts again, and axpy launched through
 * `extra` (a launch the matcher's fast path leaves to the general path,
 * which writes the ops before it down as records: tick's without a block).
 * Usage: rotate MODULE ITERS [NBUF [SYNC [MODE]]]   (defaults 3, 1, 0) */
#include <cuda.h>

#include "appcommon.h"

#define N 512
#define MAXBUF 8

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[NBUF [SYNC [MODE]]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    long nbuf = app_arg(argc, argv, 3, 3, 1, MAXBUF);
    long sync = app_arg(argc, argv, 4, 1, 1, 1000000);
    long mode = app_arg(argc, argv, 5, 0, 0, 3);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    CUfunction f_axpy = app_function(mod, "axpy"), f_scale = app_function(mod, "scale_add_scalar"),
               f_stencil = app_function(mod, "stencil3"), f_tick = app_function(mod, "tick");
    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x[MAXBUF], y[MAXBUF];
    static float h[N];
    for (long b = 0; b < nbuf; b++) {
        CK(cuMemAlloc, (&x[b], sizeof h));
        CK(cuMemAlloc, (&y[b], sizeof h));
        for (int i = 0; i < N; i++)
            h[i] = (float)(b + 1) * 0.01f * (float)(i % 13);
        CK(cuMemcpyHtoD, (x[b], h, sizeof h));
        CK(cuMemcpyHtoD, (y[b], h, sizeof h));
    }
    /* A copy from pageable memory may return before it reaches the device,
     * and the stream does not wait for the legacy stream's work. */
    CK(cuCtxSynchronize, ());
    unsigned int grid = app_blocks(N);
    for (long it = 0; it < iters; it++) {
        int fixed = mode >= 2; /* no buffer rotates, axpy stays */
        long b = fixed ? 0 : it % nbuf, b2 = fixed ? 0 : (it + 1) % nbuf;
        unsigned int sgrid = mode == 2 ? grid + (unsigned int)(it % nbuf) : grid;
        int32_t n = N;
        float decay = 0.9375f, dt = 0.25f, a = 0.5f, wl = 0.25f, wc = 0.5f, wr = 0.25f;
        uint32_t tstep = 3;
        if (!fixed && it >= iters / 3 && it % 2)
            a = 0.125f;
        if (mode == 1 && it >= iters / 3)
            tstep = (uint32_t)(it % 2);
        void *sc[] = {&x[b], &n, &decay, &dt, &tstep};
        void *ax[] = {&y[b], &x[b], &a, &n};
        void *st[] = {&y[b2], &x[b], &n, &wl, &wc, &wr};
        CK(cuLaunchKernel, (f_scale, sgrid, 1, 1, TK_BLOCK, 1, 1, 0, s, sc, NULL));
        if (mode == 3) {
            CK(cuLaunchKernel, (f_tick, 1 + (unsigned int)(it % 40), 1, 1, TK_BLOCK, 1, 1, 0, s,
                                NULL, NULL));
            tk_axpy_args axb = {y[b], x[b], a, n};
            size_t axsize = sizeof axb;
            void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &axb, CU_LAUNCH_PARAM_BUFFER_SIZE,
                             &axsize, CU_LAUNCH_PARAM_END};
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, NULL, extra));
        } else if (fixed || it < 2 * iters / 3) {
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ax, NULL));
        } else {
            CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, st, NULL));
        }
        CK(cuLaunchKernel, (f_scale, sgrid, 1, 1, TK_BLOCK, 1, 1, 0, s, sc, NULL));
        if ((it + 1) % sync == 0)
            CK(cuStreamSynchronize, (s));
    }
    CK(cuStreamSynchronize, (s));
    uint64_t sum = 1;
    for (long b = 0; b < nbuf; b++) {
        CK(cuMemcpyDtoH, (h, x[b], sizeof h));
        sum = app_hash(sum, h, sizeof h);
        CK(cuMemcpyDtoH, (h, y[b], sizeof h));
        sum = app_hash(sum, h, sizeof h);
    }
    app_checksum("rotate", sum);
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
