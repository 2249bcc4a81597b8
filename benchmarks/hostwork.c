/* hostwork.c - host work inside a step (issue 14): a program queues half a
 * step, works on the host for a while without a driver call (preparing the
 * next batch), queues the other half and synchronizes. Run eagerly, the
 * first half executes during the host work; a shim that holds it back until
 * the step is complete loses that overlap.
 *   hostwork MODULE K ITERS HOST_US [KERNEL_US]
 * Per step: K/2 launches, HOST_US microseconds of busy host work (spinning on
 * the clock, no driver call), K - K/2 launches, cuStreamSynchronize. With
 * KERNEL_US 0 (the default) the kernel is `tick` and device time comes from
 * the CPU driver's CPUCUDA_DELAY_US; otherwise the kernel is `spin`, which
 * takes KERNEL_US microseconds (on a GPU it waits on the global timer).
 * Prints the median step time over ITERS steps, after 5 steps not counted
 * (reprise captures during those), in one line:
 *   hostwork K=... host_us=... kernel_us=... us_per_step=... word=... */
#include "bench.h"

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARM_STEPS 5

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s MODULE K ITERS HOST_US [KERNEL_US]\n", argv[0]);
        return 2;
    }
    long k = atol(argv[2]), iters = atol(argv[3]), host_us = atol(argv[4]);
    long kernel_us = argc == 6 ? atol(argv[5]) : 0;
    if (k < 2 || iters < 1 || host_us < 0 || kernel_us < 0) {
        fprintf(stderr, "hostwork: bad arguments\n");
        return 2;
    }
    bench b;
    bench_setup(&b, argv[1], kernel_us > 0 ? "spin" : "tick");
    CUdeviceptr word = bench_counter(&b);
    /* tick adds the second argument; spin takes it as its duration in ns. */
    unsigned long long arg = kernel_us > 0 ? (unsigned long long)kernel_us * 1000ull : 1ull;
    void *args[] = {&word, &arg};

    double *t = malloc((size_t)iters * sizeof *t);
    if (!t)
        return 1;
    for (long it = 0; it < WARM_STEPS + iters; it++) {
        double t0 = now_us();
        for (long i = 0; i < k / 2; i++)
            CHECK(cuLaunchKernel(b.fn, 1, 1, 1, 1, 1, 1, 0, b.s, args, NULL));
        double h0 = now_us();
        while (now_us() - h0 < (double)host_us) {
            /* host work: no driver call */
        }
        for (long i = k / 2; i < k; i++)
            CHECK(cuLaunchKernel(b.fn, 1, 1, 1, 1, 1, 1, 0, b.s, args, NULL));
        CHECK(cuStreamSynchronize(b.s));
        if (it >= WARM_STEPS)
            t[it - WARM_STEPS] = now_us() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    unsigned long long h = 0;
    CHECK(cuMemcpyDtoH(&h, word, sizeof h));
    /* Every launch ran once: the word says so (ticks add 1; spins too). */
    if (h != (unsigned long long)(k * (WARM_STEPS + iters))) {
        fprintf(stderr, "hostwork: the counter is %llu, want %ld\n", h, k * (WARM_STEPS + iters));
        return 1;
    }
    printf("hostwork K=%ld host_us=%ld kernel_us=%ld us_per_step=%.1f word=%llu\n", k, host_us,
           kernel_us, t[iters / 2], h);
    free(t);
    CHECK(cuMemFree(word));
    bench_teardown(&b);
    return 0;
}
