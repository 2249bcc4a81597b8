/* updates.c - the cost of replaying a sequence whose arguments change: each
 * iteration launches N `tick` kernels on a non-blocking stream, K of which
 * take the iteration number as an argument (so a replaying shim must update
 * K kernel nodes first), then synchronizes. Prints ns per iteration;
 * benchmarks/updates.sh runs it with and without the shim for a range of K.
 *   updates MODULE N K ITERS */
#include "bench.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>


int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODULE N K ITERS\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]), k = atol(argv[3]), iters = atol(argv[4]);
    if (n < 1 || k < 0 || k > n || iters < 1) {
        fprintf(stderr, "updates: need 1 <= N, 0 <= K <= N, ITERS >= 1\n");
        return 2;
    }
    bench b;
    bench_setup(&b, argv[1], "tick");
    CUfunction fn = b.fn;
    CUstream s = b.s;
    CUdeviceptr word = bench_counter(&b);
    unsigned long long one = 1, it_arg = 0;
    void *fixed_args[] = {&word, &one};
    void *moving_args[] = {&word, &it_arg};

    struct timespec t0, t1;
    long warm = iters / 10 + 8;
    for (long it = 0; it < warm + iters; it++) {
        if (it == warm)
            clock_gettime(CLOCK_MONOTONIC, &t0);
        it_arg = (unsigned long long)it;
        for (long i = 0; i < n; i++)
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, i < k ? moving_args : fixed_args, NULL));
        CHECK(cuStreamSynchronize(s));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    unsigned long long h = 0;
    CHECK(cuMemcpyDtoH(&h, word, sizeof h));
    printf("updates n=%ld k=%ld ns_per_iter=%.0f word=%llu\n", n, k, ns / (double)iters, h);
    CHECK(cuMemFree(word));
    bench_teardown(&b);
    return 0;
}
