/* bench.h - what the benchmark programs share: a check that stops the
 * program with the failing call's name and CUresult. */
#ifndef REPRISE_BENCH_H
#define REPRISE_BENCH_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                           \
    do {                                                                      \
        CUresult rc_ = (call);                                                \
        if (rc_ != CUDA_SUCCESS) {                                            \
            const char *n_ = NULL;                                            \
            cuGetErrorName(rc_, &n_);                                         \
            fprintf(stderr, "error: %s failed: %d %s\n", #call, (int)rc_,     \
                    n_ ? n_ : "?");                                           \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

#endif
