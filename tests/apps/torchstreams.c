/* torchstreams - PyTorch's stream idioms as the driver sees them (issue 35,
 * CUDA-FACTS "Framework streams, seen 2026-12-06"): the main stream is the
 * legacy stream (stream 0, PyTorch's default), side streams are created
 * non-blocking (PyTorch's stream pool), and every
 *   s.wait_stream(t)   is  e = cuEventCreate(DISABLE_TIMING);
 *                          cuEventRecord(e, t); cuStreamWaitEvent(s, e);
 *                          cuEventDestroy(e)          (a fresh event each time)
 *   x.record_stream(s) makes the caching allocator record an event of its
 *                      own on s when x is freed, and query it (cuEventQuery)
 *                      at its next allocations, to know whether the block
 *                      may be handed out again; not ready, it hands out
 *                      another: the answer never changes a result (here it
 *                      is only counted: the program orders its streams
 *                      with wait_stream, and its output does not depend on
 *                      the answers).
 * Modes (ITERS steps each, no host synchronization in the loop but where
 * said):
 *   twostream  side.wait_stream(main); two kernels on the side stream, one
 *              reading the main stream's buffer; main.wait_stream(side);
 *              two kernels on the main stream, one reading the side's
 *              buffer; every 10 steps a read-back of the main buffer
 *   prefetch   a training loop's input pipeline: batches copied from
 *              pinned host memory (cuMemcpyHtoDAsync) on a side stream one
 *              step ahead into one of two device buffers; each step the
 *              main stream waits for the side stream (main.wait_stream),
 *              the allocator polls the event of the block the next batch
 *              goes to, the side stream waits for the main stream's work
 *              so far (side.wait_stream: the block's last reader), the
 *              next batch is copied, the main stream computes on the
 *              current one, and the allocator's event of the current
 *              block is recorded after it
 *   queries    one stream: each step's kernels, then the allocator's event
 *              recorded after them and queried, and the one of the step
 *              before queried too
 * Prints a checksum per buffer and how many queries answered (not how: the
 * answers depend on timing).
 * Usage: torchstreams MODULE ITERS [twostream|prefetch|queries] */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048
#define BATCHES 4

#include "stepkernels.h"

/* s.wait_stream(t), as PyTorch issues it. */
static void wait_stream(CUstream s, CUstream t)
{
    CUevent e;
    CK(cuEventCreate, (&e, CU_EVENT_DISABLE_TIMING));
    CK(cuEventRecord, (e, t));
    CK(cuStreamWaitEvent, (s, e, 0));
    CK(cuEventDestroy, (e));
}

/* The allocator's poll of a block's event: ready or not (an answer that
 * depends on timing and decides nothing here). Counts the polls. */
static long polls;
static void allocator_poll(CUevent e)
{
    CUresult r = cuEventQuery(e);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
        app_fail("cuEventQuery", (int)r);
    polls++;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[twostream|prefetch|queries]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "twostream";
    int twostream = !strcmp(mode, "twostream"), prefetch = !strcmp(mode, "prefetch"),
        queries = !strcmp(mode, "queries");
    if (!twostream && !prefetch && !queries) {
        printf("error: bad mode %s (want twostream, prefetch or queries)\n", mode);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    step_kernels_load(mod);

    CUstream main_s = NULL; /* the legacy stream */
    CUstream side;
    CK(cuStreamCreate, (&side, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b, batch[2];
    CK(cuMemAlloc, (&a, N * sizeof(float)));
    CK(cuMemAlloc, (&b, N * sizeof(float)));
    CK(cuMemAlloc, (&batch[0], N * sizeof(float)));
    CK(cuMemAlloc, (&batch[1], N * sizeof(float)));
    iota(main_s, a, 1.0f);
    iota(main_s, b, 2.0f);
    /* The allocator's events: one per block, reused (the caching
     * allocator pools them). */
    CUevent block_ev[2];
    for (int i = 0; i < 2; i++)
        CK(cuEventCreate, (&block_ev[i], CU_EVENT_DISABLE_TIMING));
    float *host[BATCHES];
    for (int k = 0; k < BATCHES; k++) {
        CK(cuMemHostAlloc, ((void **)&host[k], N * sizeof(float), 0));
        for (int i = 0; i < N; i++)
            host[k][i] = (float)((i * (k + 3)) % 29) * 0.0625f - 0.5f;
    }
    float *readback;
    CK(cuMemHostAlloc, ((void **)&readback, sizeof(float), 0));
    CK(cuCtxSynchronize, ());
    if (prefetch) /* the first batch, before the loop */
        CK(cuMemcpyHtoDAsync, (batch[0], host[0], N * sizeof(float), side));

    uint64_t read = 0x7157;
    for (long it = 0; it < iters; it++) {
        if (twostream) {
            wait_stream(side, main_s);
            scale(side, b, (uint32_t)(it % 5));
            axpy(side, b, a, 0.0625f);
            wait_stream(main_s, side);
            axpy(main_s, a, b, -0.03125f);
            scale(main_s, a, 2);
            if (it % 10 == 9) {
                CK(cuMemcpyDtoHAsync, (readback, a, sizeof(float), main_s));
                CK(cuStreamSynchronize, (main_s));
                read = app_hash_u64(read, app_f32_bits(*readback));
            }
        } else if (prefetch) {
            int cur = (int)(it % 2), next = 1 - cur;
            wait_stream(main_s, side); /* the current batch has arrived */
            /* The next batch's block was last read by the step before:
             * the allocator polls its event (record_stream), the side
             * stream waits for the main stream before writing it. */
            allocator_poll(block_ev[next]);
            wait_stream(side, main_s);
            CK(cuMemcpyHtoDAsync, (batch[next], host[(it + 1) % BATCHES], N * sizeof(float), side));
            axpy(main_s, a, batch[cur], 0.015625f);
            scale(main_s, a, 3);
            axpy(main_s, b, a, -0.0078125f);
            scale(main_s, b, 4);
            CK(cuEventRecord, (block_ev[cur], main_s)); /* batch[cur]'s last use */
        } else {
            int cur = (int)(it % 2);
            axpy(main_s, a, b, 0.03125f);
            scale(main_s, a, 1);
            axpy(main_s, b, a, -0.015625f);
            CK(cuEventRecord, (block_ev[cur], main_s));
            allocator_poll(block_ev[cur]);
            allocator_poll(block_ev[1 - cur]);
        }
    }
    CK(cuCtxSynchronize, ());
    static float out[N];
    CK(cuMemcpyDtoH, (out, a, sizeof out));
    app_checksum("torchstreams-a", app_hash(0xa, out, sizeof out));
    CK(cuMemcpyDtoH, (out, b, sizeof out));
    app_checksum("torchstreams-b", app_hash(0xb, out, sizeof out));
    app_checksum("torchstreams-read", read);
    printf("polls %ld\n", polls);
    for (int k = 0; k < BATCHES; k++)
        CK(cuMemFreeHost, (host[k]));
    CK(cuMemFreeHost, (readback));
    app_close(dev, mod);
    return 0;
}
