/* tracecost.c - what recording a trace costs per call on the program's
 * thread, with the driver taken out: the shim's own code (linked in, as the
 * unit tests do) in front of a table of fake driver entries that return at
 * once. Each configuration issues N calls through the exported wrappers in
 * batches, and the fastest batch counts (a loaded machine preempts some
 * batches, never makes one faster). Prints ns per call:
 *   disabled    REPRISE unset: a plain forward
 *   enabled     the wrappers on (what recording turns on), nothing recorded
 *   traced      the wrappers on and every call recorded (REPRISE_TRACE)
 * for three calls: cuStreamQuery (the cheapest record), cuLaunchKernel of a
 * kernel with no parameters, and of one with a pointer and a value that
 * changes every launch (a delta of one word).
 *   tracecost N BATCHES TRACEFILE [CALL CONFIG]
 * With CALL (query, launch, args) and CONFIG (disabled, enabled, traced),
 * only that one runs, BATCHES x N calls and nothing printed: for counting
 * cycles with `perf stat` (tracecost.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "init.h"
#include "trace.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define X(name, params, args, role)                                             \
    static CUresult CUDAAPI fake_##name params                                  \
    {                                                                           \
        return CUDA_SUCCESS;                                                    \
    }
RP_ENTRIES(X)
RP_HELPERS(X)
#undef X
#pragma GCC diagnostic pop

static struct rp__driver fakes;
static int stream_obj, ctx_obj, fn_empty, fn_args;

static CUresult CUDAAPI fake_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    if (f != (CUfunction)&fn_args || i >= 2)
        return CUDA_ERROR_INVALID_VALUE;
    *off = 8 * i;
    *size = 8;
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_name(const char **name, CUfunction f)
{
    *name = f == (CUfunction)&fn_args ? "tick" : "empty";
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_stream_ctx(CUstream s, CUcontext *c)
{
    (void)s;
    *c = (CUcontext)&ctx_obj;
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_kernel_param_info(CUkernel k, size_t i, size_t *o, size_t *s)
{
    (void)k, (void)i, (void)o, (void)s;
    return CUDA_ERROR_INVALID_VALUE;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum call { QUERY, LAUNCH, ARGS };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double medians[3][3], median_now;

/* The fastest batch's ns per call (the median batch's in median_now). */
static double run(enum call what, long n, int batches)
{
    double *all = calloc((size_t)batches, sizeof *all);
    if (!all)
        abort();
    CUstream s = (CUstream)&stream_obj;
    CUdeviceptr word = 0x7000;
    unsigned long long add = 0;
    void *args[] = {&word, &add};
    double best = 1e30;
    for (int b = 0; b < batches; b++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            switch (what) {
            case QUERY:
                cuStreamQuery(s);
                break;
            case LAUNCH:
                cuLaunchKernel((CUfunction)&fn_empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
                break;
            case ARGS:
                add = (unsigned long long)i;
                cuLaunchKernel((CUfunction)&fn_args, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
                break;
            }
        }
        double t = (now_ns() - t0) / (double)n;
        all[b] = t;
        if (t < best)
            best = t;
    }
    qsort(all, (size_t)batches, sizeof *all, cmp_double);
    median_now = all[batches / 2];
    free(all);
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s N BATCHES TRACEFILE [query|launch|args disabled|enabled|traced]\n",
                argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    int batches = atoi(argv[2]);
#define X(name, params, args, role) fakes.name = fake_##name;
    RP_ENTRIES(X)
    RP_HELPERS(X)
#undef X
    fakes.cuFuncGetParamInfo = fake_param_info;
    fakes.cuKernelGetParamInfo = fake_kernel_param_info;
    fakes.cuFuncGetName = fake_name;
    fakes.cuStreamGetCtx = fake_stream_ctx;
    setenv("REPRISE_TRACE", argv[3], 1);
    rp__options_parse();

    static const char *const names[] = {"query", "launch", "args"};
    if (argc == 6) {
        int c = !strcmp(argv[4], "query") ? 0 : !strcmp(argv[4], "launch") ? 1 : 2;
        rp__install(&fakes, strcmp(argv[5], "disabled") != 0);
        if (!strcmp(argv[5], "traced") && !rp__trace_setup(&rp__core, &rp__real))
            return 1;
        run((enum call)c, n, batches);
        if (!strcmp(argv[5], "traced"))
            rp__trace_close();
        return 0;
    }
    double ns[3][3];
    for (int c = 0; c < 3; c++) {
        rp__install(&fakes, false);
        ns[c][0] = run((enum call)c, n, batches);
        medians[c][0] = median_now;
        rp__install(&fakes, true);
        ns[c][1] = run((enum call)c, n, batches);
        medians[c][1] = median_now;
    }
    rp__install(&fakes, true);
    if (!rp__trace_setup(&rp__core, &rp__real)) {
        fprintf(stderr, "tracecost: the trace cannot be opened\n");
        return 1;
    }
    for (int c = 0; c < 3; c++) {
        ns[c][2] = run((enum call)c, n, batches);
        medians[c][2] = median_now;
    }
    rp__trace_close();
    printf("ns per call, fastest of %d batches of %ld calls (median batch in brackets)\n", batches, n);
    printf("%-7s %16s %16s %16s %18s\n", "call", "disabled", "enabled", "traced",
           "traced - disabled");
    for (int c = 0; c < 3; c++)
        printf("%-7s %7.1f [%6.1f] %7.1f [%6.1f] %7.1f [%6.1f] %9.1f [%6.1f]\n", names[c], ns[c][0],
               medians[c][0], ns[c][1], medians[c][1], ns[c][2], medians[c][2], ns[c][2] - ns[c][0],
               medians[c][2] - medians[c][0]);
    return 0;
}
