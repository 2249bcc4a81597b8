/* lenders - steps of three shapes that begin alike, in turn, each with a
 * value that changes every step (every sequence has updates):
 *   A = P M T        B = P D Q M T        C = P D Q K T
 * P: scale_add_scalar(x, step), axpy(y, x), scale_add_scalar(y, step),
 * axpy(x, y); M: a memset of z to the step; D: a copy of y into z;
 * Q: scale_add_scalar(x, step), axpy(y, x), scale_add_scalar(y, step);
 * K: axpy(x, z); T: stencil3(y, x), scale_add_scalar(x, step). Every step
 * ends with a synchronize. The shapes part where one has another kind of
 * op than the other (a memset, a copy, a kernel), which no update can
 * bridge. In a C step the three sequences are candidates from the first
 * op, and the one whose records the fast path borrows (A, the first
 * learnt) parts at D; B lends Q and parts at K: records written down from
 * both then point into the stream's two arenas while C is matched
 * (issue 36: the spare arena). A mistake in which arena holds what shows
 * as a wrong step value in a replayed C step: the checksum.
 * With `exact`, the same three shapes with values that never change (7
 * for the step): every sequence is exact, none has updates. In a C step
 * B's op where C launches K is M, a memset: B is let go as the launch's
 * divergence (issue 36: on the fast path, first session of 2026-12-08).
 * Kept by mistake, B completes with C at T and, learnt first, is the one
 * replayed: its memset instead of K, a wrong checksum (with updates, its
 * node would refuse the kernel's update and the step run eagerly).
 * With `parting`, steps of two shapes part first on a value, then on a
 * kernel:
 *   U = P axpy(x, y, 0.5) T        V = P axpy(x, y, a) K T
 * in turn, U (a = 0.5) and V (a = 0.25), then, from halfway on, U, V, U
 * with a = 0.25, V with a = 0.5: in the first V step with a = 0.5, the
 * sequence learnt from U steps matches its fifth op and the one learnt
 * from V steps differs there in `a` only, which it takes as volatile for
 * the occurrence (issue 36: decided from the launch on the fast path);
 * U's goes at K and V's completes, replayed with the fifth op's `a`
 * updated. In the first U step with a = 0.25 the two change places: the
 * one whose records the fast path borrows (the first learnt) is then the
 * one that differs, and the other lends from the fifth op on. A widening
 * lost on the way, or values kept by the wrong lender, show as a wrong
 * result: the checksum.
 * Usage: lenders MODULE STEPS [parting|exact] */
#include <cuda.h>

#include "appcommon.h"

#define N 512

static CUfunction f_axpy, f_scale, f_stencil;
static CUstream s;
static unsigned int grid;

static void scale(CUdeviceptr p, uint32_t step)
{
    int32_t n = N;
    float decay = 0.96875f, dt = 0.125f;
    void *args[] = {&p, &n, &decay, &dt, &step};
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

static void axpy(CUdeviceptr y, CUdeviceptr x, float a)
{
    int32_t n = N;
    void *args[] = {&y, &x, &a, &n};
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

static void stencil(CUdeviceptr out, CUdeviceptr in)
{
    int32_t n = N;
    float wl = 0.25f, wc = 0.5f, wr = 0.25f;
    void *args[] = {&out, &in, &n, &wl, &wc, &wr};
    CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[parting|exact]");
    long steps = app_arg(argc, argv, 2, 0, 0, 100000000);
    int parting = argc > 3 && !strcmp(argv[3], "parting");
    int exact = argc > 3 && !strcmp(argv[3], "exact");
    if (argc > 3 && !parting && !exact)
        app_die("the third argument, if any, is `parting` or `exact`");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_stencil = app_function(mod, "stencil3");
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    grid = app_blocks(N);
    CUdeviceptr x, y, z;
    static float h[N];
    CK(cuMemAlloc, (&x, sizeof h));
    CK(cuMemAlloc, (&y, sizeof h));
    CK(cuMemAlloc, (&z, sizeof h));
    for (int i = 0; i < N; i++)
        h[i] = 0.01f * (float)(i % 17);
    CK(cuMemcpyHtoD, (x, h, sizeof h));
    CK(cuMemcpyHtoD, (y, h, sizeof h));
    CK(cuMemcpyHtoD, (z, h, sizeof h));
    CK(cuCtxSynchronize, ());
    for (long it = 0; parting && it < steps; it++) {
        uint32_t step = (uint32_t)it;
        int v = (int)(it % 2); /* U, V, U, V' */
        scale(x, step); /* P */
        axpy(y, x, 0.5f);
        scale(y, step);
        axpy(x, y, 0.25f);
        /* U's 0.5 and V's 0.25, but from halfway on, one V step in two
         * takes 0.5 and one U step in two 0.25 */
        int other = it >= steps / 2 && it % 4 >= 2;
        axpy(x, y, v != other ? 0.25f : 0.5f);
        if (v)
            axpy(x, z, 0.125f); /* K */
        stencil(y, x);          /* T */
        scale(x, step);
        CK(cuStreamSynchronize, (s));
    }
    for (long it = 0; !parting && it < steps; it++) {
        uint32_t step = exact ? 7u : (uint32_t)it;
        int shape = (int)(it % 3); /* A, B, C */
        scale(x, step); /* P */
        axpy(y, x, 0.5f);
        scale(y, step);
        axpy(x, y, 0.25f);
        if (shape > 0) {
            CK(cuMemcpyDtoDAsync, (z, y, sizeof h, s)); /* D */
            scale(x, step);                              /* Q */
            axpy(y, x, 0.5f);
            scale(y, step);
        }
        if (shape < 2)
            CK(cuMemsetD32Async, (z, step, N, s)); /* M */
        else
            axpy(x, z, 0.125f); /* K */
        stencil(y, x);          /* T */
        scale(x, step);
        CK(cuStreamSynchronize, (s));
    }
    uint64_t sum = 1;
    CK(cuMemcpyDtoH, (h, x, sizeof h));
    sum = app_hash(sum, h, sizeof h);
    CK(cuMemcpyDtoH, (h, y, sizeof h));
    sum = app_hash(sum, h, sizeof h);
    CK(cuMemcpyDtoH, (h, z, sizeof h));
    sum = app_hash(sum, h, sizeof h);
    app_checksum("lenders", sum);
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
