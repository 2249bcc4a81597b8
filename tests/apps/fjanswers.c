/* fjanswers - what the program's event and stream queries answer after a
 * fork/join step (issue 26, findings 1-4). Eagerly each answer below follows
 * from the program's order alone, on any driver: an event complete means
 * the work recorded before it on its stream is complete, and a stream whose
 * last op is complete is idle. A shim that replays the step as one graph
 * and then records events of its own (its bookkeeping) must give the same
 * answers. The program counts them (idle or complete, busy or not ready)
 * and prints the counts beside the checksums, so a wrong answer changes its
 * output. Every iteration the home stream S runs two kernels and records F;
 * the side stream A waits on F, runs its kernels on its own buffer and
 * records J, its last op; S waits on J and runs two kernels that read A's
 * buffer. Then the host asks, by mode:
 *   side    after cuEventSynchronize(J): is A idle (cuStreamQuery(A))? It
 *           is, J being A's last op
 *   home    the step ends with a record of D on S (S's last op); after
 *           cuEventSynchronize(D): is S idle?
 *   legacy  S and A are blocking streams (CU_STREAM_DEFAULT); after
 *           cuStreamSynchronize(S): is the legacy stream idle? It waits
 *           for every blocking stream, and A's last op J is complete, since
 *           S waited on it
 *   twice   one event recorded twice in the step: S records J (instead of
 *           F); A waits on J, runs a kernel, records D, runs a kernel,
 *           records J again; S waits on J. After cuEventSynchronize(J): is
 *           D complete (cuEventQuery(D))? It is: J's last record came after
 *           D's on A
 *   staged  as home, and the step begins with a host-to-device copy from
 *           pageable memory on S (staged by a shim at the call): its
 *           bookkeeping of that staging must not come after D either (a
 *           fuzzed program found it did)
 * With `spin`, the host waits by polling cuEventQuery (cuStreamQuery(S) in
 * legacy mode) instead of synchronizing, and asks the moment the wait ends.
 * Prints a checksum per buffer and a line `answers MODE: N idle, M busy`
 * (always M = 0 eagerly).
 * Usage: fjanswers MODULE ITERS [side|home|legacy|twice|staged [spin]] (default side) */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 2048

#include "stepkernels.h"
static int spin;

/* Until e is complete: synchronized, or polled (spin). */
static void wait_event(CUevent e)
{
    if (!spin) {
        CK(cuEventSynchronize, (e));
        return;
    }
    CUresult r;
    while ((r = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
        ;
    if (r != CUDA_SUCCESS)
        app_fail("cuEventQuery", (int)r);
}

static void wait_stream(CUstream s)
{
    if (!spin) {
        CK(cuStreamSynchronize, (s));
        return;
    }
    CUresult r;
    while ((r = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY)
        ;
    if (r != CUDA_SUCCESS)
        app_fail("cuStreamQuery", (int)r);
}

/* A query's answer counted: complete (idle) or not ready (busy); any
 * other answer is an error. */
static void count(const char *call, CUresult r, long *idle, long *busy)
{
    if (r == CUDA_SUCCESS)
        (*idle)++;
    else if (r == CUDA_ERROR_NOT_READY)
        (*busy)++;
    else
        app_fail(call, (int)r);
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[side|home|legacy|twice|staged [spin]]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "side";
    int side = !strcmp(mode, "side"), home = !strcmp(mode, "home"),
        legacy = !strcmp(mode, "legacy"), twice = !strcmp(mode, "twice");
    int staged = !strcmp(mode, "staged");
    if (staged)
        home = 1;
    if (!side && !home && !legacy && !twice)
        app_die("the third argument must be side, home, legacy, twice or staged");
    if (argc > 4 && strcmp(argv[4], "spin"))
        app_die("the fourth argument must be spin");
    spin = argc > 4;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    step_kernels_load(mod);

    unsigned int flags = legacy ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;
    CUstream s, a;
    CUevent F, J, D;
    CUdeviceptr main_buf, side_buf, in_buf;
    float *pageable = malloc(N * sizeof(float));
    if (!pageable)
        app_die("out of host memory");
    CK(cuStreamCreate, (&s, flags));
    CK(cuStreamCreate, (&a, flags));
    CK(cuEventCreate, (&F, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&J, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&D, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc, (&main_buf, N * sizeof(float)));
    CK(cuMemAlloc, (&side_buf, N * sizeof(float)));
    CK(cuMemAlloc, (&in_buf, N * sizeof(float)));
    iota(s, main_buf, 1.0f);
    iota(a, side_buf, 2.0f);
    CK(cuCtxSynchronize, ());

    long idle = 0, busy = 0;
    for (long it = 0; it < iters; it++) {
        if (staged) {
            for (int i = 0; i < N; i++)
                pageable[i] = (float)((i + it) % 17) * 0.25f;
            CK(cuMemcpyHtoDAsync, (in_buf, pageable, N * sizeof(float), s));
            axpy(s, main_buf, in_buf, 0.125f);
        }
        scale(s, main_buf, 1);
        axpy(s, main_buf, main_buf, 0.0625f);
        CUevent fork = twice ? J : F;
        CK(cuEventRecord, (fork, s));
        CK(cuStreamWaitEvent, (a, fork, 0));
        scale(a, side_buf, 2);
        if (twice)
            CK(cuEventRecord, (D, a));
        axpy(a, side_buf, side_buf, -0.03125f);
        CK(cuEventRecord, (J, a));
        CK(cuStreamWaitEvent, (s, J, 0));
        axpy(s, main_buf, side_buf, 0.015625f);
        scale(s, main_buf, 3);
        if (home)
            CK(cuEventRecord, (D, s));
        if (side) {
            wait_event(J);
            count("cuStreamQuery", cuStreamQuery(a), &idle, &busy);
        } else if (home) {
            wait_event(D);
            count("cuStreamQuery", cuStreamQuery(s), &idle, &busy);
        } else if (legacy) {
            wait_stream(s);
            count("cuStreamQuery", cuStreamQuery(CU_STREAM_LEGACY), &idle, &busy);
        } else {
            wait_event(J);
            count("cuEventQuery", cuEventQuery(D), &idle, &busy);
        }
    }
    printf("answers %s%s: %ld idle, %ld busy\n", mode, spin ? " spin" : "", idle, busy);

    float *h = malloc(N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuCtxSynchronize, ());
    CK(cuMemcpyDtoH, (h, main_buf, N * sizeof(float)));
    app_checksum("fjanswers-main", app_hash(0x6d, h, N * sizeof(float)));
    CK(cuMemcpyDtoH, (h, side_buf, N * sizeof(float)));
    app_checksum("fjanswers-side", app_hash(0x73, h, N * sizeof(float)));
    free(h);
    CK(cuMemFree, (main_buf));
    CK(cuMemFree, (side_buf));
    CK(cuMemFree, (in_buf));
    free(pageable);
    CK(cuEventDestroy, (F));
    CK(cuEventDestroy, (J));
    CK(cuEventDestroy, (D));
    CK(cuStreamDestroy, (a));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
