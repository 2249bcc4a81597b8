/* bench.h - what the benchmark programs share: a check that stops the
 * program with the failing call's name and CUresult, and their set-up. */
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

/* What every benchmark sets up: the primary context of device 0, the
 * module and one kernel of it, and a non-blocking stream; and takes down. */
typedef struct bench {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream s;
} bench;

static inline void bench_setup(bench *b, const char *module, const char *kernel)
{
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&b->dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&b->ctx, b->dev));
    CHECK(cuCtxSetCurrent(b->ctx));
    CHECK(cuModuleLoad(&b->mod, module));
    CHECK(cuModuleGetFunction(&b->fn, b->mod, kernel));
    CHECK(cuStreamCreate(&b->s, CU_STREAM_NON_BLOCKING));
}

/* A zeroed 64-bit counter for the `tick` kernel. Zeroed on the benchmark's
 * stream itself: a plain cuMemsetD8 runs on the legacy stream, which a
 * non-blocking stream does not wait for. */
static inline CUdeviceptr bench_counter(bench *b)
{
    CUdeviceptr word;
    CHECK(cuMemAlloc(&word, sizeof(unsigned long long)));
    CHECK(cuMemsetD8Async(word, 0, sizeof(unsigned long long), b->s));
    return word;
}

static inline void bench_teardown(bench *b)
{
    CHECK(cuStreamDestroy(b->s));
    CHECK(cuModuleUnload(b->mod));
    CHECK(cuDevicePrimaryCtxRelease(b->dev));
}

#endif
