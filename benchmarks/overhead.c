/* overhead.c - a launch-heavy driver-API program for measuring what the shim
 * costs per call. It issues N calls of one kind and prints the host time per
 * call; benchmarks/overhead.sh runs it with and without the shim, side by side.
 *   overhead MODULE MODE N
 * MODE: launch  N launches of an empty kernel on a non-blocking stream, with a
 *               cuStreamSynchronize every 64 launches
 *       query   N cuStreamQuery calls on an idle stream (the cheapest
 *               interposed call: what remains is the wrapper and the driver)
 *       args    N launches of the two-parameter `tick` kernel (a pointer and
 *               an increment that changes every launch), a synchronize every
 *               64: a launch a trace records with parameters
 *               (benchmarks/tracecost.sh) */
#include "bench.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODULE launch|query|args N\n", argv[0]);
        return 2;
    }
    const char *mode = argv[2];
    long n = atol(argv[3]);
    if (n <= 0 || (strcmp(mode, "launch") && strcmp(mode, "query") && strcmp(mode, "args"))) {
        fprintf(stderr, "overhead: bad mode or count\n");
        return 2;
    }
    bench b;
    bench_setup(&b, argv[1], "empty");
    CUfunction fn = b.fn;
    CUstream s = b.s;

    CUfunction tick = NULL;
    CUdeviceptr word = 0;
    unsigned long long add = 0;
    void *args[] = {&word, &add};
    if (!strcmp(mode, "args")) {
        CHECK(cuModuleGetFunction(&tick, b.mod, "tick"));
        word = bench_counter(&b);
        CHECK(cuStreamSynchronize(s));
    }
    double t0 = now_ns();
    if (!strcmp(mode, "args")) {
        for (long i = 0; i < n; i++) {
            add = (unsigned long long)i;
            CHECK(cuLaunchKernel(tick, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
            if ((i & 63) == 63)
                CHECK(cuStreamSynchronize(s));
        }
        CHECK(cuStreamSynchronize(s));
    } else if (!strcmp(mode, "launch")) {
        for (long i = 0; i < n; i++) {
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
            if ((i & 63) == 63)
                CHECK(cuStreamSynchronize(s));
        }
        CHECK(cuStreamSynchronize(s));
    } else {
        CHECK(cuStreamSynchronize(s));
        for (long i = 0; i < n; i++)
            CHECK(cuStreamQuery(s));
    }
    double t1 = now_ns();
    printf("%s %ld %.1f\n", mode, n, (t1 - t0) / (double)n);

    if (word)
        CHECK(cuMemFree(word));
    bench_teardown(&b);
    return 0;
}
