/* parts - steps whose host gaps are quiet spots, where the engine's idle
 * watch launches what a stream holds as a part of the step's graph (issue
 * 34, classes d and e). Every step is synchronized; the gaps are GAPUS µs
 * (default 300) of host work without a driver call. Modes:
 *   staged   on a created stream, three pieces a step, each a host-to-device
 *            copy from pageable memory (malloc) whose bytes change every
 *            step and are overwritten right after the call, and an axpy
 *            that folds them into an accumulator; a gap after the first
 *            and the second piece. The driver takes a pageable source's
 *            bytes at the call, so each part must stage its own copies'
 *            bytes before it is launched: a part launched with the staging
 *            of the step before folds that step's bytes in
 *   ptsz     a worker thread's CU_STREAM_PER_THREAD: a 2-D memset of 16 MiB
 *            (eager: never part of a graph), six kernels that read the
 *            last floats it writes into a buffer, a gap, two that fold the buffer into an
 *            accumulator. The idle watch runs on a thread of its own, which
 *            cannot name the worker's per-thread stream: what it issues for
 *            it must run after the worker's earlier work, the memset still
 *            running (a part launched on the watch's own per-thread stream
 *            would read the memory before the memset wrote it)
 * Prints a checksum of the accumulator (and, staged, of the last copies).
 * Usage: parts MODULE ITERS [staged|ptsz [GAPUS]] */
#include <cuda.h>

#include "appcommon.h"

#define N 1024
#define PIECES 3
#define BIG (1 << 22) /* ptsz: floats the eager memset writes */

#include "stepkernels.h"

static long iters, gap_us;
static CUcontext ctx;

static void staged(void)
{
    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr acc, d[PIECES];
    CK(cuMemAlloc, (&acc, N * sizeof(float)));
    CK(cuMemsetD32Async, (acc, 0, N, s));
    for (int p = 0; p < PIECES; p++)
        CK(cuMemAlloc, (&d[p], N * sizeof(float)));
    float *h = malloc(N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    for (long it = 0; it < iters; it++) {
        for (int p = 0; p < PIECES; p++) {
            for (int i = 0; i < N; i++)
                h[i] = (float)((i * 5 + (int)it * 11 + p * 17) % 97) * 0.25f;
            CK(cuMemcpyHtoDAsync, (d[p], h, N * sizeof(float), s));
            memset(h, 0xCC, N * sizeof(float)); /* the driver took the bytes */
            axpy(s, acc, d[p], 0.5f + 0.25f * (float)p);
            if (p + 1 < PIECES)
                app_spin_us(gap_us);
        }
        CK(cuStreamSynchronize, (s));
    }
    CK(cuMemcpyDtoH, (h, acc, N * sizeof(float)));
    app_checksum("parts-staged-acc", app_hash(0x5041, h, N * sizeof(float)));
    uint64_t hl = 0x504c;
    for (int p = 0; p < PIECES; p++) {
        CK(cuMemcpyDtoH, (h, d[p], N * sizeof(float)));
        hl = app_hash(hl, h, N * sizeof(float));
    }
    app_checksum("parts-staged-last", hl);
    free(h);
    for (int p = 0; p < PIECES; p++)
        CK(cuMemFree, (d[p]));
    CK(cuMemFree, (acc));
    CK(cuStreamDestroy, (s));
}

/* The worker of `ptsz`: the whole loop on its per-thread stream. */
static void *ptsz_worker(void *out)
{
    CK(cuCtxSetCurrent, (ctx));
    CUstream s = CU_STREAM_PER_THREAD;
    CUdeviceptr acc, buf, big;
    CK(cuMemAlloc, (&acc, N * sizeof(float)));
    CK(cuMemAlloc, (&buf, N * sizeof(float)));
    CK(cuMemAlloc, (&big, BIG * sizeof(float)));
    CUdeviceptr tail = big + (BIG - N) * sizeof(float);
    CK(cuMemsetD32Async, (acc, 0, N, s));
    for (long it = 0; it < iters; it++) {
        /* A 2-D memset is never part of a graph: it runs eagerly, and
         * takes a while (16 MiB); the step's kernels read what it wrote. */
        CK(cuMemsetD2D32Async, (big, BIG * sizeof(float), app_f32_bits(1.0f + (float)(it % 5)), BIG, 1, s));
        iota(s, buf, (float)(it % 7));
        axpy(s, buf, tail, 0.5f); /* the last floats the memset writes */
        for (uint32_t k = 0; k < 4; k++)
            scale(s, buf, (uint32_t)it + k);
        app_spin_us(gap_us);
        axpy(s, acc, buf, 0.125f);
        scale(s, acc, (uint32_t)(it % 5));
        CK(cuStreamSynchronize, (s));
    }
    float *h = malloc(N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, acc, N * sizeof(float)));
    *(uint64_t *)out = app_hash(0x5054, h, N * sizeof(float));
    free(h);
    CK(cuMemFree, (acc));
    CK(cuMemFree, (buf));
    CK(cuMemFree, (big));
    return NULL;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[staged|ptsz [GAPUS]]");
    iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "staged";
    int ptsz = !strcmp(mode, "ptsz");
    if (!ptsz && strcmp(mode, "staged")) {
        printf("error: bad mode %s (want staged or ptsz)\n", mode);
        return 2;
    }
    gap_us = app_arg(argc, argv, 4, 300, 0, 1000000);
    CUdevice dev;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    step_kernels_load(mod);
    if (ptsz) {
        pthread_t t;
        uint64_t h = 0;
        if (pthread_create(&t, NULL, ptsz_worker, &h) != 0)
            app_die("pthread_create failed");
        pthread_join(t, NULL);
        CK(cuCtxSynchronize, ());
        app_checksum("parts-ptsz-acc", h);
    } else {
        staged();
    }
    app_close(dev, mod);
    return 0;
}
