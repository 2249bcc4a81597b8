/* forkjoin - a step that forks from its stream to side streams through
 * events and joins back (issue 16), once per synchronized iteration: the
 * shape frameworks use for side streams and for communication overlapped
 * with compute. Every iteration on the main stream S: two kernels, an event
 * recorded on S; each side stream waits on it, runs its own kernels on its
 * own buffer and records its event; S waits on every side event, runs a
 * kernel that reads every side buffer, and the host synchronizes S. Modes:
 *   fork N     N side streams (1-3), as above
 *   nested     S forks to A; A forks to B (B waits on an event A recorded)
 *              and joins B back into A before A joins S
 *   previous   a side stream waits on the event S recorded in the previous
 *              iteration (besides this iteration's): a join on an older event
 *   query      after each synchronize, the host queries the last side event
 *              and prints how often it was not complete (it must always be)
 *   streamquery  after each synchronize of the main stream, the host asks
 *              each side stream whether it is idle (cuStreamQuery): it is,
 *              eagerly, since the main stream waited on its last event
 *   sidequery  like query, but the host synchronizes the last side stream
 *              (before the main stream) and then queries its event, which
 *              is complete then when run eagerly
 *   foreign    the side stream belongs to another context (a created one):
 *              its wait and work cannot be part of S's graph
 *   later      after each synchronize, a fourth stream T waits on the first
 *              side stream's event, reads its buffer and records an event
 *              that the first side stream waits on in the next iteration
 *              before it writes that buffer again (a later wait on an event
 *              recorded in the replayed step, and a fork from outside it)
 *   nosync     fork 2 without the host synchronization in the loop (one at
 *              the end): a framework's eager loop with side streams
 *   held       fork 1, except that at the middle iteration the step stops
 *              at the join, the side stream waits (cuStreamWaitValue32) for
 *              a flag and the host synchronizes S; in the next iteration the
 *              side stream's kernel, queued behind that wait, reads a
 *              buffer the host rewrites (after a pause) before it sets the
 *              flag: a replay must not run it earlier (a review found one
 *              that did)
 *   blocked    the side stream first waits (cuStreamWaitValue32) for a value
 *              the host writes only once the main stream is synchronized:
 *              a graph that waited for the side stream's earlier work would
 *              hold the main stream up for ever (no join: the side stream's
 *              work is synchronized after the host writes the value)
 *   laterheld  later, with T first waiting (cuStreamWaitValue32) for a
 *              value the host writes only once it has issued the next
 *              step: when that step comes, the event its first side stream
 *              waits on is certainly not complete, so a graph launched for
 *              it (which leaves that wait out) would overwrite the side
 *              buffer before T reads it; eagerly every step waits
 * Prints a checksum per buffer.
 * Usage: forkjoin MODULE ITERS [fork N|nested|previous|query|foreign] */
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048
#define MAXSIDE 3

#include "stepkernels.h"

int main(int argc, char **argv)
{
    app_usage(argc, argv,
              "[fork N|nested|previous|query|streamquery|sidequery|foreign|later|laterheld|nosync|held|blocked]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "fork";
    int nside = 2, nested = 0, previous = 0, query = 0, foreign = 0, later = 0, blocked = 0,
        nosync = 0, held = 0, sidequery = 0, streamquery = 0, laterheld = 0;
    if (!strcmp(mode, "fork"))
        nside = (int)app_arg(argc, argv, 4, 2, 1, MAXSIDE);
    else if (!strcmp(mode, "nested"))
        nested = 1, nside = 2;
    else if (!strcmp(mode, "previous"))
        previous = 1, nside = 1;
    else if (!strcmp(mode, "query"))
        query = 1, nside = 2;
    else if (!strcmp(mode, "sidequery"))
        sidequery = 1, nside = 2;
    else if (!strcmp(mode, "streamquery"))
        streamquery = 1, nside = 2;
    else if (!strcmp(mode, "foreign"))
        foreign = 1, nside = 1;
    else if (!strcmp(mode, "later"))
        later = 1, nside = 2;
    else if (!strcmp(mode, "laterheld"))
        later = 1, laterheld = 1, nside = 2;
    else if (!strcmp(mode, "blocked"))
        blocked = 1, nside = 1;
    else if (!strcmp(mode, "nosync"))
        nosync = 1, nside = 2;
    else if (!strcmp(mode, "held"))
        held = 1, nside = 1;
    else {
        printf("error: bad mode %s (want fork N, nested, previous, query, streamquery, "
               "sidequery, foreign, later, laterheld, nosync, held or blocked)\n", mode);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    step_kernels_load(mod);

    CUstream s, side[MAXSIDE];
    CUevent fork_ev, fork_prev, side_ev[MAXSIDE], inner_ev;
    CUdeviceptr main_buf, side_buf[MAXSIDE];
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate, (&fork_ev, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&fork_prev, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&inner_ev, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc, (&main_buf, N * sizeof(float)));
    iota(s, main_buf, 1.0f);
    /* Side streams: in the program's context, or (foreign) in a created
     * context whose memory the main stream's kernels never touch. */
    CUcontext other = NULL;
    CUmodule other_mod = NULL;
    if (foreign) {
        CK(cuCtxCreate, (&other, NULL, 0, dev));
        CK(cuModuleLoad, (&other_mod, argv[1]));
        step_kernels_load(other_mod);
    }
    for (int i = 0; i < nside; i++) {
        CK(cuStreamCreate, (&side[i], CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate, (&side_ev[i], CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc, (&side_buf[i], N * sizeof(float)));
        iota(side[i], side_buf[i], (float)(i + 2));
        CK(cuStreamSynchronize, (side[i]));
    }
    CUfunction side_axpy = f_axpy, side_scale = f_scale;
    if (foreign) {
        CK(cuCtxPopCurrent, (&other));
        step_kernels_load(mod);
    }
    CK(cuStreamSynchronize, (s));
    CUstream t = NULL;
    CUevent t_ev = NULL;
    CUdeviceptr t_buf = 0;
    CUstream writer = NULL;
    CUdeviceptr flag = 0;
    CUdeviceptr data = 0;
    if (blocked || held || laterheld) {
        CK(cuStreamCreate, (&writer, CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc, (&flag, sizeof(uint32_t)));
        CK(cuMemsetD32, (flag, 0, 1));
        CK(cuMemAlloc, (&data, N * sizeof(float)));
        iota(s, data, 0.5f);
        CK(cuCtxSynchronize, ());
    }
    if (later) {
        CK(cuStreamCreate, (&t, CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate, (&t_ev, CU_EVENT_DISABLE_TIMING));
        CK(cuMemAlloc, (&t_buf, N * sizeof(float)));
        iota(t, t_buf, 7.0f);
    }

    long not_done = 0;
    for (long it = 0; it < iters; it++) {
        if (blocked) /* released below, once S is synchronized */
            CK(cuStreamWaitValue32, (side[0], flag, (cuuint32_t)(it + 1), CU_STREAM_WAIT_VALUE_GEQ));
        scale(s, main_buf, 1);
        axpy(s, main_buf, main_buf, 0.0625f);
        CK(cuEventRecord, (fork_ev, s));
        if (foreign)
            CK(cuCtxPushCurrent, (other));
        CUfunction fa = f_axpy, fs = f_scale;
        f_axpy = side_axpy, f_scale = side_scale;
        for (int i = 0; i < nside; i++) {
            CK(cuStreamWaitEvent, (side[i], fork_ev, 0));
            if (previous && it > 0)
                CK(cuStreamWaitEvent, (side[i], fork_prev, 0));
            if (later && i == 0 && it > 0) /* T has read this buffer */
                CK(cuStreamWaitEvent, (side[0], t_ev, 0));
            scale(side[i], side_buf[i], (uint32_t)(i + 2));
            axpy(side[i], side_buf[i], held ? data : side_buf[i], -0.03125f * (float)(i + 1));
            if (nested && i == 0) { /* A forks to B and joins it back */
                CK(cuEventRecord, (inner_ev, side[0]));
                CK(cuStreamWaitEvent, (side[1], inner_ev, 0));
                scale(side[1], side_buf[1], 5);
                CK(cuEventRecord, (side_ev[1], side[1]));
                CK(cuStreamWaitEvent, (side[0], side_ev[1], 0));
                scale(side[0], side_buf[0], 6);
                CK(cuEventRecord, (side_ev[0], side[0]));
                break;
            }
            CK(cuEventRecord, (side_ev[i], side[i]));
        }
        f_axpy = fa, f_scale = fs;
        if (foreign)
            CK(cuCtxPopCurrent, (&other));
        for (int i = 0; i < (nested ? 1 : blocked ? 0 : nside); i++) /* join */
            CK(cuStreamWaitEvent, (s, side_ev[i], 0));
        if (held && it == iters / 2) { /* the step stops here; the side waits */
            CK(cuStreamWaitValue32, (side[0], flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
            CK(cuStreamSynchronize, (s));
            continue;
        }
        if (!foreign && !blocked)
            for (int i = 0; i < nside; i++)
                axpy(s, main_buf, side_buf[i], 0.015625f);
        scale(s, main_buf, 3);
        if (laterheld && it > 0) /* the step is issued: T's last piece may go */
            CK(cuStreamWriteValue32, (writer, flag, (cuuint32_t)it, 0));
        if (previous)
            CK(cuEventRecord, (fork_prev, s));
        if (held && it == iters / 2 + 1) { /* the side's kernel waits for this */
            struct timespec pause = {0, 50 * 1000 * 1000};
            nanosleep(&pause, NULL);
            iota(writer, data, 9.0f);
            CK(cuStreamWriteValue32, (writer, flag, 1, 0));
        }
        if (sidequery) {
            CK(cuStreamSynchronize, (side[nside - 1]));
            if (cuEventQuery(side_ev[nside - 1]) != CUDA_SUCCESS)
                not_done++;
        }
        if (!nosync)
            CK(cuStreamSynchronize, (s));
        if (blocked) {
            CK(cuStreamWriteValue32, (writer, flag, (cuuint32_t)(it + 1), 0));
            CK(cuStreamSynchronize, (side[0]));
        }
        if (query && cuEventQuery(side_ev[nside - 1]) != CUDA_SUCCESS)
            not_done++;
        for (int i = 0; streamquery && i < nside; i++)
            if (cuStreamQuery(side[i]) != CUDA_SUCCESS)
                not_done++;
        if (later) {
            if (laterheld) /* released once the next step is issued */
                CK(cuStreamWaitValue32, (t, flag, (cuuint32_t)(it + 1), CU_STREAM_WAIT_VALUE_GEQ));
            CK(cuStreamWaitEvent, (t, side_ev[0], 0));
            axpy(t, t_buf, side_buf[0], 0.5f);
            CK(cuEventRecord, (t_ev, t));
        }
    }
    if (later) {
        if (laterheld)
            CK(cuStreamWriteValue32, (writer, flag, (cuuint32_t)iters, 0));
        CK(cuStreamSynchronize, (t));
        float *ht = malloc(N * sizeof(float));
        if (!ht)
            app_die("out of host memory");
        CK(cuMemcpyDtoH, (ht, t_buf, N * sizeof(float)));
        app_checksum("forkjoin-later", app_hash(0x74, ht, N * sizeof(float)));
        free(ht);
        CK(cuMemFree, (t_buf));
        CK(cuEventDestroy, (t_ev));
        CK(cuStreamDestroy, (t));
    }
    if (query || sidequery)
        printf("forkjoin: side event not complete after the synchronize %ld times\n", not_done);
    if (streamquery)
        printf("forkjoin: a side stream not idle after the synchronize %ld times\n", not_done);
    float *h = malloc(N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuStreamSynchronize, (s));
    CK(cuMemcpyDtoH, (h, main_buf, N * sizeof(float)));
    app_checksum("forkjoin-main", app_hash(0x6d, h, N * sizeof(float)));
    if (foreign)
        CK(cuCtxPushCurrent, (other));
    for (int i = 0; i < nside; i++) {
        CK(cuStreamSynchronize, (side[i]));
        CK(cuMemcpyDtoH, (h, side_buf[i], N * sizeof(float)));
        char name[32];
        snprintf(name, sizeof name, "forkjoin-side%d", i);
        app_checksum(name, app_hash(0x73 + (uint64_t)i, h, N * sizeof(float)));
        CK(cuMemFree, (side_buf[i]));
        CK(cuStreamDestroy, (side[i]));
        CK(cuEventDestroy, (side_ev[i]));
    }
    if (foreign) {
        CK(cuModuleUnload, (other_mod));
        CK(cuCtxPopCurrent, (&other));
        CK(cuCtxDestroy, (other));
    }
    free(h);
    CK(cuMemFree, (main_buf));
    CK(cuEventDestroy, (fork_ev));
    CK(cuEventDestroy, (fork_prev));
    CK(cuEventDestroy, (inner_ev));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
