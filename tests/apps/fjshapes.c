/* fjshapes - fork/join steps of the shapes the rest of the suite lacked
 * (issue 26, the surviving mutations): a side stream whose blocking flag
 * differs from its home stream's, a stream-scoped boundary on a side stream
 * while it belongs to another stream's run, and a step that stops before
 * its join. Every iteration the home stream S runs a kernel and records F;
 * the side stream A waits on F and runs kernels on its own buffer; A
 * records J and S waits on it (the join) and runs a kernel that reads A's
 * buffer. Modes:
 *   blockside  S is a non-blocking stream and A a blocking one; before each
 *              step the legacy stream waits (cuStreamWaitValue32) for a
 *              value and then writes a buffer B (a kernel) that A's first
 *              kernel reads: A's ops wait for that legacy work implicitly,
 *              S's do not. The host writes the value (cuStreamWriteValue32
 *              on a third stream) only after the step is issued, then
 *              synchronizes S
 *   joined     A's part is split by host work (a 3 ms pause with no driver
 *              call: long enough for a shim's idle watch to issue what it
 *              holds) between its first kernel and the rest: a kernel and
 *              a copy of A's buffer into pinned memory (cuMemcpyDtoHAsync);
 *              from the 12th iteration on, every 4th synchronizes A right
 *              after that copy and reads the pinned memory at once; every
 *              iteration ends with cuCtxSynchronize and reads it again
 *   nojoin     from the 7th iteration on, every 4th step begins with A
 *              waiting (cuStreamWaitValue32) for a value and stops before
 *              the join (no wait on J, no kernel after it), and the next
 *              step follows at once, with no synchronization; that next
 *              step ends by writing the value (cuStreamWriteValue32 on a
 *              third stream), then S is synchronized. The other steps are
 *              synchronized each
 *   twohomes   a second home stream S2 (its own buffer and events) forks
 *              to the same side stream A: S's step, then cuStreamQuery(S)
 *              (it ends the step without waiting), then S2's step (A's
 *              part reads what S's part wrote into a buffer of S2's),
 *              cuStreamQuery(S2), and cuCtxSynchronize once a round.
 *              Eagerly A runs S2's part after S's; with device time S's
 *              step is still running when S2's comes, so a graph of S2's
 *              step launched beside it (its side stream taken for known
 *              because S's replay stamped it) would read A's buffer before
 *              S's part wrote it (issue 34, class h)
 * Prints a checksum per buffer (and of the pinned reads in joined).
 * Usage: fjshapes MODULE ITERS [blockside|joined|nojoin|twohomes]   (default blockside) */
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

#include "stepkernels.h"

static void pause_ms(long ms)
{
    struct timespec t = {0, ms * 1000 * 1000};
    while (nanosleep(&t, &t) != 0)
        ;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[blockside|joined|nojoin|twohomes]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "blockside";
    int blockside = !strcmp(mode, "blockside"), joined = !strcmp(mode, "joined"),
        nojoin = !strcmp(mode, "nojoin"), twohomes = !strcmp(mode, "twohomes");
    if (!blockside && !joined && !nojoin && !twohomes)
        app_die("the third argument must be blockside, joined, nojoin or twohomes");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    step_kernels_load(mod);

    CUstream s, a, w, s2;
    CUevent F, J, F2, J2;
    CUdeviceptr main_buf, side_buf, b, flag, main2, side2;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&F2, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&J2, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc, (&main2, N * sizeof(float)));
    CK(cuMemAlloc, (&side2, N * sizeof(float)));
    iota(s2, main2, 3.0f);
    iota(s2, side2, 0.5f);
    CK(cuStreamCreate, (&a, blockside ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&w, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&F, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&J, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc, (&main_buf, N * sizeof(float)));
    CK(cuMemAlloc, (&side_buf, N * sizeof(float)));
    CK(cuMemAlloc, (&b, N * sizeof(float)));
    CK(cuMemAlloc, (&flag, sizeof(uint32_t)));
    CK(cuMemsetD32, (flag, 0, 1));
    iota(s, main_buf, 1.0f);
    iota(a, side_buf, 2.0f);
    iota(a, b, 0.0f);
    CK(cuCtxSynchronize, ());
    float *pinned;
    CK(cuMemHostAlloc, ((void **)&pinned, N * sizeof(float), 0));
    memset(pinned, 0, N * sizeof(float));
    uint64_t reads = 0x6a6f696eull;

    cuuint32_t round = 0;
    int released_later = 0; /* nojoin: the last step left A waiting */
    for (long it = 0; it < iters; it++) {
        int rare = joined ? it >= 11 && it % 4 == 3 : nojoin ? it >= 6 && it % 4 == 2 : 0;
        if (blockside) { /* the legacy stream's work, held until the step is issued */
            CK(cuStreamWaitValue32, (CU_STREAM_LEGACY, flag, ++round, CU_STREAM_WAIT_VALUE_GEQ));
            iota(CU_STREAM_LEGACY, b, (float)(it % 5));
        }
        if (nojoin && rare)
            CK(cuStreamWaitValue32, (a, flag, ++round, CU_STREAM_WAIT_VALUE_GEQ));
        scale(s, main_buf, 1);
        CK(cuEventRecord, (F, s));
        CK(cuStreamWaitEvent, (a, F, 0));
        if (blockside)
            axpy(a, side_buf, b, 0.25f); /* after the legacy stream's iota */
        scale(a, side_buf, 2);
        if (joined) {
            pause_ms(3);
            axpy(a, side_buf, side_buf, -0.03125f);
            CK(cuMemcpyDtoHAsync, (pinned, side_buf, N * sizeof(float), a));
            if (rare) {
                CK(cuStreamSynchronize, (a));
                reads = app_hash(reads, pinned, N * sizeof(float));
            }
            scale(a, side_buf, 4);
        } else {
            axpy(a, side_buf, side_buf, -0.03125f);
        }
        CK(cuEventRecord, (J, a));
        if (nojoin && rare) { /* no join: the next step follows at once */
            released_later = 1;
            continue;
        }
        CK(cuStreamWaitEvent, (s, J, 0));
        axpy(s, main_buf, side_buf, 0.015625f);
        if (twohomes) { /* S's step ends unwaited; S2 forks to A in turn */
            (void)cuStreamQuery(s);
            scale(s2, main2, 5);
            CK(cuEventRecord, (F2, s2));
            CK(cuStreamWaitEvent, (a, F2, 0));
            scale(a, side2, 3);
            axpy(a, side2, side_buf, 0.0625f); /* after S's part, eagerly */
            CK(cuEventRecord, (J2, a));
            CK(cuStreamWaitEvent, (s2, J2, 0));
            axpy(s2, main2, side2, -0.03125f);
            (void)cuStreamQuery(s2);
            CK(cuCtxSynchronize, ());
            continue;
        }
        if (blockside || released_later) {
            CK(cuStreamWriteValue32, (w, flag, round, 0));
            released_later = 0;
        }
        if (joined) {
            CK(cuCtxSynchronize, ());
            reads = app_hash(reads, pinned, N * sizeof(float));
        } else {
            CK(cuStreamSynchronize, (s));
        }
    }
    if (released_later)
        CK(cuStreamWriteValue32, (w, flag, round, 0));

    float *h = malloc(N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuCtxSynchronize, ());
    CK(cuMemcpyDtoH, (h, main_buf, N * sizeof(float)));
    app_checksum("fjshapes-main", app_hash(0x6d, h, N * sizeof(float)));
    CK(cuMemcpyDtoH, (h, side_buf, N * sizeof(float)));
    app_checksum("fjshapes-side", app_hash(0x73, h, N * sizeof(float)));
    if (twohomes) {
        CK(cuMemcpyDtoH, (h, main2, N * sizeof(float)));
        app_checksum("fjshapes-main2", app_hash(0x32, h, N * sizeof(float)));
        CK(cuMemcpyDtoH, (h, side2, N * sizeof(float)));
        app_checksum("fjshapes-side2", app_hash(0x53, h, N * sizeof(float)));
    }
    if (joined)
        app_checksum("fjshapes-reads", reads);
    free(h);
    CK(cuMemFreeHost, (pinned));
    CK(cuMemFree, (main_buf));
    CK(cuMemFree, (side_buf));
    CK(cuMemFree, (b));
    CK(cuMemFree, (flag));
    CK(cuEventDestroy, (F));
    CK(cuEventDestroy, (J));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (w));
    CK(cuStreamDestroy, (s2));
    CK(cuEventDestroy, (F2));
    CK(cuEventDestroy, (J2));
    CK(cuMemFree, (main2));
    CK(cuMemFree, (side2));
    app_close(dev, mod);
    return 0;
}
