/* realloc - a step whose temporaries are allocated and freed every
 * iteration, as a program without a caching allocator does: each iteration
 * allocates a temporary, fills it (memset, a kernel), folds it into an
 * accumulator (kernels, a device-to-device copy), and frees it. The
 * allocation and the free are boundaries, so the step between them is the
 * sequence; its addresses change from step to step (a new temporary each
 * time), so it is replayed with updates, captured from an occurrence whose
 * memory is still live (a capture from the first occurrence's records
 * would copy into freed memory and fail: issue 26). Modes:
 *   sync     cuMemAlloc before, cuMemFree after
 *   rotate   the next iteration's temporary is allocated before this one's
 *            is freed (the addresses never repeat two steps in a row)
 *   async    cuMemAllocAsync / cuMemFreeAsync on the step's stream
 *   alternate [GAPUS]  as sync, the temporary's size alternating between
 *            256 and 128 floats (the memset's width, the kernels' n and
 *            grid and the copy's size follow it), with GAPUS µs (default
 *            300) of host work without a driver call after the memset and
 *            after the second kernel, so that the engine's idle watch
 *            launches parts of the step's graph at those quiet spots
 *            (issue 34, finding 2: where the allocator hands addresses
 *            back, contents come back, and an executable made for one
 *            from the graph captured before a free named freed memory)
 *   repool [GAPUS]  the same host gaps; the temporaries come from a pool of
 *            three used in turn, the scalars with them (contents that come
 *            back every third step), and every ninth step the program allocates a new pool
 *            and then frees the old one (as a caching allocator that
 *            releases its cache): the memory a graph was captured from is
 *            freed for good, whatever the allocator does
 * Prints a checksum of the accumulator and of the last temporary's copy.
 * Usage: realloc MODULE ITERS [sync|rotate|async|alternate|repool [GAPUS]] */
#include <cuda.h>

#include "appcommon.h"

#define N 2048

/* The alternate mode's two sizes (two grids). */
#define N_ALT_A 256
#define N_ALT_B 128
#define POOL 3        /* repool: temporaries in turn */
#define POOL_STEPS 9  /* repool: steps between two pools */

static CUfunction f_axpy, f_scale, f_iota;

/* One step over a temporary of n floats; gap_us of host work after the
 * memset and after the second kernel (0: none). */
static void step(CUstream s, CUdeviceptr tmp, CUdeviceptr acc, CUdeviceptr last, long it, int32_t n,
                 long gap_us)
{
    float base = 0.25f * (float)(it % 5), step_ = 0.0009765625f, a = 0.5f;
    float decay = 0.96875f, dt = 0.125f;
    uint32_t iter = (uint32_t)(it % 3);
    unsigned int grid = app_blocks(n);
    CK(cuMemsetD32Async, (tmp, 0x3f800000u, (size_t)n, s)); /* 1.0f */
    app_spin_us(gap_us);
    void *iota_args[] = { &tmp, &n, &step_, &base };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));
    void *axpy_args[] = { &acc, &tmp, &a, &n };
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL));
    app_spin_us(gap_us);
    void *scale_args[] = { &acc, &n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
    CK(cuMemcpyDtoDAsync, (last, tmp, (size_t)n * sizeof(float), s));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[sync|rotate|async|alternate|repool [GAPUS]]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "sync";
    int rotate = !strcmp(mode, "rotate"), async = !strcmp(mode, "async");
    int alternate = !strcmp(mode, "alternate"), repool = !strcmp(mode, "repool");
    if (!rotate && !async && !alternate && !repool && strcmp(mode, "sync")) {
        printf("error: bad mode %s (want sync, rotate, async, alternate or repool)\n", mode);
        return 2;
    }
    long gap_us = alternate || repool ? app_arg(argc, argv, 4, 300, 0, 1000000) : 0;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr acc, last, next = 0, pool[POOL];
    CK(cuMemAlloc, (&acc, N * sizeof(float)));
    CK(cuMemAlloc, (&last, N * sizeof(float)));
    CK(cuMemsetD32Async, (acc, 0, N, s));
    if (rotate)
        CK(cuMemAlloc, (&next, N * sizeof(float)));
    for (int i = 0; repool && i < POOL; i++)
        CK(cuMemAlloc, (&pool[i], N * sizeof(float)));
    for (long it = 0; it < iters; it++) {
        CUdeviceptr tmp;
        int32_t n = alternate ? (it % 2 ? N_ALT_B : N_ALT_A) : N;
        if (repool && it && it % POOL_STEPS == 0) {
            CUdeviceptr old[POOL];
            for (int i = 0; i < POOL; i++) {
                old[i] = pool[i];
                CK(cuMemAlloc, (&pool[i], N * sizeof(float)));
            }
            for (int i = 0; i < POOL; i++)
                CK(cuMemFree, (old[i]));
        }
        if (repool) {
            tmp = pool[it % POOL];
        } else if (async) {
            CK(cuMemAllocAsync, (&tmp, N * sizeof(float), s));
        } else if (rotate) {
            tmp = next;
            CK(cuMemAlloc, (&next, N * sizeof(float)));
        } else {
            CK(cuMemAlloc, (&tmp, (size_t)n * sizeof(float)));
        }
        /* repool: the scalars follow the pool, so a content comes back
         * every third step. */
        step(s, tmp, acc, last, repool ? it % POOL : it, n, gap_us);
        if (repool) {
            CK(cuStreamSynchronize, (s));
        } else if (async) {
            CK(cuMemFreeAsync, (tmp, s));
        } else {
            CK(cuStreamSynchronize, (s));
            CK(cuMemFree, (tmp));
        }
    }
    CK(cuStreamSynchronize, (s));
    if (rotate)
        CK(cuMemFree, (next));
    for (int i = 0; repool && i < POOL; i++)
        CK(cuMemFree, (pool[i]));
    float *h = malloc(2 * N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, acc, N * sizeof(float)));
    CK(cuMemcpyDtoH, (h + N, last, N * sizeof(float)));
    app_checksum("realloc-acc", app_hash(0x41, h, N * sizeof(float)));
    app_checksum("realloc-last", app_hash(0x4c, h + N, N * sizeof(float)));
    free(h);
    CK(cuMemFree, (acc));
    CK(cuMemFree, (last));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
