/* benchkernels.c - the kernels of the benchmarks as a CPU-driver module: an
 * empty kernel (pure launch cost), a tiny one that touches one word, and one
 * that takes a given time (spin). */
#include <time.h>

#include "cpukernel.h"

static void k_empty(const cpuk_block *b, void *const *params)
{
    (void)b;
    (void)params;
}

static void k_tick(const cpuk_block *b, void *const *params)
{
    unsigned long long *p = (unsigned long long *)CPUK_ARG(params, 0, unsigned long long);
    unsigned long long add = CPUK_ARG(params, 1, unsigned long long);
    if (b->blockIdx.x == 0)
        *p += add;
}

/* The GPU version waits on the global timer; here the driver's worker
 * sleeps for the time, as CPUCUDA_DELAY_US does: simulated device time that
 * leaves the host's core free. */
static void k_spin(const cpuk_block *b, void *const *params)
{
    unsigned long long *p = (unsigned long long *)CPUK_ARG(params, 0, unsigned long long);
    unsigned long long ns = CPUK_ARG(params, 1, unsigned long long);
    if (b->blockIdx.x != 0)
        return;
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    *p += 1;
}

const cpuk_kernel cpuk_module_kernels[] = {
    {"empty", k_empty, 0, {{0, 0}}},
    {"tick", k_tick, 2, {{0, 8}, {8, 8}}},
    {"spin", k_spin, 2, {{0, 8}, {8, 8}}},
    {0, 0, 0, {{0, 0}}},
};
