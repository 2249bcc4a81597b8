/* benchkernels.c - the kernels of the benchmarks as a CPU-driver module: an
 * empty kernel (pure launch cost) and a tiny one that touches one word. */
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

const cpuk_kernel cpuk_module_kernels[] = {
    {"empty", k_empty, 0, {{0, 0}}},
    {"tick", k_tick, 2, {{0, 8}, {8, 8}}},
    {0, 0, 0, {{0, 0}}},
};
