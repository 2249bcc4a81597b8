/* cpukernel.h - the ABI between the CPU driver (tests/cpudriver) and a module
 * of C kernels. A module is a shared object that exports one table,
 * `cpuk_module_kernels`, ended by an entry whose name is NULL. The driver
 * calls a kernel once per block of the grid; the kernel itself loops over the
 * threads of its block (CPUK_FOR_THREADS). Parameters arrive as an array of
 * pointers, one per parameter, into the bytes the driver copied at launch. */
#ifndef CPUKERNEL_H
#define CPUKERNEL_H

#include <stddef.h>
#include <stdint.h>

#define CPUK_ABI_VERSION 1
/* PTX modules loaded from text (cuModuleLoadData) may declare many
 * parameters (a Triton kernel has dozens): the bound is generous. */
#define CPUK_MAX_PARAMS 256

typedef struct cpuk_dim3 { unsigned int x, y, z; } cpuk_dim3;

/* What one call of a kernel sees: the grid and block shape, which block this
 * is, and the block's dynamic shared memory (shared_bytes long; its contents
 * are undefined at entry, as on a GPU: the driver fills it with 0xA5). */
typedef struct cpuk_block {
    cpuk_dim3 gridDim;
    cpuk_dim3 blockDim;
    cpuk_dim3 blockIdx;
    void *shared;
    size_t shared_bytes;
} cpuk_block;

typedef void (*cpuk_fn)(const cpuk_block *b, void *const *params);

/* Layout of one parameter in the launch buffer, as cuFuncGetParamInfo
 * reports it: offset and size in bytes. */
typedef struct cpuk_param { size_t offset, size; } cpuk_param;

typedef struct cpuk_kernel {
    const char *name;       /* NULL ends the table */
    cpuk_fn fn;
    unsigned int nparams;
    cpuk_param params[CPUK_MAX_PARAMS];
} cpuk_kernel;

/* The symbol a module exports. */
#define CPUK_MODULE_SYMBOL "cpuk_module_kernels"

/* Loop over every thread of the block: tx, ty, tz are unsigned ints. */
#define CPUK_FOR_THREADS(b, tx, ty, tz)                              \
    for (unsigned int tz = 0; tz < (b)->blockDim.z; tz++)            \
        for (unsigned int ty = 0; ty < (b)->blockDim.y; ty++)        \
            for (unsigned int tx = 0; tx < (b)->blockDim.x; tx++)

/* A parameter's value inside a kernel: CPUK_ARG(params, 2, float). */
#define CPUK_ARG(params, i, type) (*(type const *)(params)[i])

#endif
