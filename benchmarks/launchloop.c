/* launchloop.c - a launch-bound loop, the case reprise is for: each
 * iteration launches K tiny kernels on one stream and synchronizes.
 *   launchloop MODULE K ITERS MODE
 * MODE: eager    the same K launches every iteration
 *       scalars  the same, but one argument of every launch changes each
 *                iteration (a step counter), as training loops do
 *       cycle    the same, but the argument cycles with period 17 (contents
 *                that come back, more of them than REPRISE_MAX_VARIANTS)
 *       graph    the program captures one iteration into a graph itself,
 *                once, and launches it ITERS times: the limit reprise aims at
 * Prints the median iteration time over ITERS iterations (after a warmup of
 * ITERS/10 + 8 iterations, excluded) and the peak resident set size, in one
 * line: launchloop MODE K ns_per_iter=... ns_per_op=... maxrss_kb=... */
#include "bench.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODULE K ITERS eager|scalars|cycle|graph\n", argv[0]);
        return 2;
    }
    long k = atol(argv[2]), iters = atol(argv[3]);
    const char *mode = argv[4];
    int cycle = !strcmp(mode, "cycle");
    int scalars = cycle || !strcmp(mode, "scalars"), graph = !strcmp(mode, "graph");
    if (k < 1 || iters < 1 || (!scalars && !graph && strcmp(mode, "eager"))) {
        fprintf(stderr, "launchloop: bad arguments\n");
        return 2;
    }
    bench b;
    bench_setup(&b, argv[1], "tick");
    CUfunction fn = b.fn;
    CUstream s = b.s;
    CUdeviceptr word = bench_counter(&b);
    unsigned long long add = 1;
    void *args[] = {&word, &add};

    CUgraphExec exec = NULL;
    if (graph) {
        CUgraph g;
        CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        for (long i = 0; i < k; i++)
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
        CHECK(cuStreamEndCapture(s, &g));
        CHECK(cuGraphInstantiate(&exec, g, 0));
        CHECK(cuGraphDestroy(g));
    }
    long warm = iters / 10 + 8;
    double *t = malloc((size_t)iters * sizeof *t);
    if (!t)
        return 1;
    for (long it = 0; it < warm + iters; it++) {
        double t0 = now_ns();
        if (graph) {
            CHECK(cuGraphLaunch(exec, s));
        } else {
            if (scalars)
                add = (unsigned long long)(cycle ? it % 17 : it);
            for (long i = 0; i < k; i++)
                CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
        }
        CHECK(cuStreamSynchronize(s));
        if (it >= warm)
            t[it - warm] = now_ns() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    double med = t[iters / 2];
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    unsigned long long h = 0;
    CHECK(cuMemcpyDtoH(&h, word, sizeof h));
    printf("launchloop %s %ld ns_per_iter=%.0f ns_per_op=%.1f maxrss_kb=%ld word=%llu\n", mode, k,
           med, med / (double)k, ru.ru_maxrss, h);
    free(t);
    if (exec)
        CHECK(cuGraphExecDestroy(exec));
    CHECK(cuMemFree(word));
    bench_teardown(&b);
    return 0;
}
