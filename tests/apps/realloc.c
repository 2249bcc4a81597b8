/* realloc - a step whose temporaries are allocated and freed every
 * iteration, as a program without a caching allocator does: each iteration
 * allocates a temporary, fills it (memset, a kernel), folds it into an
 * accumulator (kernels, a device-to-device copy), and frees it. The
 * allocation and the free are boundaries, so the step between them is the
 * sequence; its addresses change from step to step (a new temporary each
 * time), so it is replayed with updates, captured from an occurrence whose
 * memory is still live (a capture from the first occurrence's records
 * would copy into freed memory and fail: issue 26). Modes:
 *   sync     cuMemAlloc before, cuMemFree after
 *   rotate   the next iteration's temporary is allocated before this one's
 *            is freed (the addresses never repeat two steps in a row)
 *   async    cuMemAllocAsync / cuMemFreeAsync on the step's stream
 * Prints a checksum of the accumulator and of the last temporary's copy.
 * Usage: realloc MODULE ITERS [sync|rotate|async] */
#include <cuda.h>

#include "appcommon.h"

#define N 2048

static CUfunction f_axpy, f_scale, f_iota;
static int32_t n = N;
static unsigned int grid;

static void step(CUstream s, CUdeviceptr tmp, CUdeviceptr acc, CUdeviceptr last, long it)
{
    float base = 0.25f * (float)(it % 5), step_ = 0.0009765625f, a = 0.5f;
    float decay = 0.96875f, dt = 0.125f;
    uint32_t iter = (uint32_t)(it % 3);
    CK(cuMemsetD32Async, (tmp, 0x3f800000u, N, s)); /* 1.0f */
    void *iota_args[] = { &tmp, &n, &step_, &base };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));
    void *axpy_args[] = { &acc, &tmp, &a, &n };
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL));
    void *scale_args[] = { &acc, &n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
    CK(cuMemcpyDtoDAsync, (last, tmp, N * sizeof(float), s));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[sync|rotate|async]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "sync";
    int rotate = !strcmp(mode, "rotate"), async = !strcmp(mode, "async");
    if (!rotate && !async && strcmp(mode, "sync")) {
        printf("error: bad mode %s (want sync, rotate or async)\n", mode);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    grid = app_blocks(N);

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr acc, last, next = 0;
    CK(cuMemAlloc, (&acc, N * sizeof(float)));
    CK(cuMemAlloc, (&last, N * sizeof(float)));
    CK(cuMemsetD32Async, (acc, 0, N, s));
    if (rotate)
        CK(cuMemAlloc, (&next, N * sizeof(float)));
    for (long it = 0; it < iters; it++) {
        CUdeviceptr tmp;
        if (async) {
            CK(cuMemAllocAsync, (&tmp, N * sizeof(float), s));
        } else if (rotate) {
            tmp = next;
            CK(cuMemAlloc, (&next, N * sizeof(float)));
        } else {
            CK(cuMemAlloc, (&tmp, N * sizeof(float)));
        }
        step(s, tmp, acc, last, it);
        if (async) {
            CK(cuMemFreeAsync, (tmp, s));
        } else {
            CK(cuStreamSynchronize, (s));
            CK(cuMemFree, (tmp));
        }
    }
    CK(cuStreamSynchronize, (s));
    if (rotate)
        CK(cuMemFree, (next));
    float *h = malloc(2 * N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, acc, N * sizeof(float)));
    CK(cuMemcpyDtoH, (h + N, last, N * sizeof(float)));
    app_checksum("realloc-acc", app_hash(0x41, h, N * sizeof(float)));
    app_checksum("realloc-last", app_hash(0x4c, h + N, N * sizeof(float)));
    free(h);
    CK(cuMemFree, (acc));
    CK(cuMemFree, (last));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
