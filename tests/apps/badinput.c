/* badinput - a program that misuses the driver API on purpose and prints
 * the CUresult of each misuse: a NULL function, a zero grid, too many
 * threads per block, too much shared memory, both kinds of parameter
 * arguments at once (kernelParams with an `extra` buffer: INVALID_VALUE; with
 * an empty `extra` the real driver launches with the kernelParams, observed
 * on an H200), copies and memsets with NULL or unallocated addresses, a zero
 * allocation, a free of memory never allocated; each also after the same
 * launch succeeded often enough for a replaying shim to have captured it;
 * then the same misuses inside a step whose grid and addresses change every
 * time (three buffers in turn: a shim replays it with node updates), where
 * they fall in fields a graph node could be set to (issue 34: a zero grid
 * there was deferred, answered CUDA_SUCCESS, and its node update refused).
 * With or without the shim the printed codes must be the same (only misuses
 * the real driver also reports, never ones that would crash it).
 * Usage: badinput MODULE ITERS */
#include <cuda.h>

#include "appcommon.h"

static void report(const char *what, CUresult r)
{
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "?";
    printf("%-44s %d %s\n", what, (int)r, name);
}

/* One step of the loop whose fields change: a memset of buffer b, axpy
 * into y over it with a grid of g x gy blocks (of `block` threads, `shmem`
 * bytes of dynamic shared memory), a copy of b into y's second half, and
 * a fixed axpy of that half: each misuse falls in the middle of the step.
 * src, when not 0, replaces b as the copy's source. Prints what each call
 * returned when `what` is not NULL. */
static void vstep(CUfunction f, CUstream s, CUdeviceptr y, CUdeviceptr b, CUdeviceptr src,
                  unsigned int g, unsigned int gy, unsigned int block, unsigned int shmem,
                  const char *what)
{
    int32_t n = 256;
    float a = 0.25f;
    CUdeviceptr y1 = y + (CUdeviceptr)n * sizeof(float);
    void *args[] = { &y, &b, &a, &n };
    void *args1[] = { &y1, &b, &a, &n };
    CUresult r[4];
    r[0] = cuMemsetD32Async(b, 0x3f800000u, (size_t)n, s);
    r[1] = cuLaunchKernel(f, g, gy, 1, block, 1, 1, shmem, s, args, NULL);
    r[2] = cuMemcpyDtoDAsync(y1, src ? src : b, (size_t)n * sizeof(float), s);
    r[3] = cuLaunchKernel(f, 2, 1, 1, 128, 1, 1, 0, s, args1, NULL);
    static const char *const call[4] = { "memset", "launch", "copy", "fixed launch" };
    for (int i = 0; i < 4; i++) {
        char line[96];
        if (what) {
            snprintf(line, sizeof line, "in a changing step: %s: %s", what, call[i]);
            report(line, r[i]);
        } else if (r[i] != CUDA_SUCCESS) {
            app_fail(call[i], (int)r[i]);
        }
    }
    CK(cuStreamSynchronize, (s));
}

static void volatile_misuses(CUfunction f, CUstream s, long iters)
{
    CUdeviceptr b[3], y2;
    CK(cuMemAlloc, (&y2, 512 * sizeof(float)));
    CK(cuMemsetD32Async, (y2, 0, 512, s));
    for (int i = 0; i < 3; i++)
        CK(cuMemAlloc, (&b[i], 256 * sizeof(float)));
    long k = 0;
    for (; k < iters + 6; k++)
        vstep(f, s, y2, b[k % 3], 0, 1 + (unsigned int)(k % 3), 1, 128, 0, NULL);
    vstep(f, s, y2, b[k % 3], 0, 0, 1, 128, 0, "zero grid");
    k++;
    vstep(f, s, y2, b[k % 3], 0, 2, 65536, 128, 0, "grid Y 65536");
    k++;
    vstep(f, s, y2, b[k % 3], 0, 2, 1, 2048, 0, "2048 threads per block");
    k++;
    vstep(f, s, y2, b[k % 3], 0, 2, 1, 128, 1u << 30, "1 GiB of shared memory");
    k++;
    vstep(f, s, y2, b[k % 3], 256, 2, 1, 128, 0, "copy: from address 256");
    for (long j = 0; j < 6; j++, k++)
        vstep(f, s, y2, b[k % 3], 0, 1 + (unsigned int)(k % 3), 1, 128, 0, NULL);
    float host[512];
    CK(cuMemcpyDtoH, (host, y2, sizeof host));
    app_checksum("badinput-changing", app_hash(0x766f6cull, host, sizeof host));
    for (int i = 0; i < 3; i++)
        CK(cuMemFree, (b[i]));
    CK(cuMemFree, (y2));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "");
    long iters = app_arg(argc, argv, 2, 8, 1, 1000000);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_axpy;
    CUstream s;
    app_open(argv[1], &dev, &ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    int32_t n = 256;
    float a = 0.5f;
    CUdeviceptr x, y;
    CK(cuMemAlloc, (&x, n * sizeof(float)));
    CK(cuMemAlloc, (&y, n * sizeof(float)));
    CK(cuMemsetD32Async, (x, 0x3f800000u, (size_t)n, s));
    CK(cuMemsetD32Async, (y, 0, (size_t)n, s));
    void *args[] = { &y, &x, &a, &n };
    float host[256] = {0};

    for (long it = 0; it < iters; it++) {
        /* A repeated sequence (captured by a replaying shim), then misuses. */
        CK(cuLaunchKernel, (f_axpy, 2, 1, 1, 128, 1, 1, 0, s, args, NULL));
        CK(cuLaunchKernel, (f_axpy, 2, 1, 1, 128, 1, 1, 0, s, args, NULL));
        CK(cuStreamSynchronize, (s));
    }
    CK(cuLaunchKernel, (f_axpy, 2, 1, 1, 128, 1, 1, 0, s, args, NULL));
    report("launch: NULL function", cuLaunchKernel(NULL, 2, 1, 1, 128, 1, 1, 0, s, args, NULL));
    report("launch: zero grid", cuLaunchKernel(f_axpy, 0, 1, 1, 128, 1, 1, 0, s, args, NULL));
    report("launch: 2048 threads per block",
           cuLaunchKernel(f_axpy, 2, 1, 1, 2048, 1, 1, 0, s, args, NULL));
    report("launch: 1 GiB of shared memory",
           cuLaunchKernel(f_axpy, 2, 1, 1, 128, 1, 1, 1u << 30, s, args, NULL));
    void *no_extra[] = { CU_LAUNCH_PARAM_END };
    report("launch: kernelParams and an empty extra",
           cuLaunchKernel(f_axpy, 2, 1, 1, 128, 1, 1, 0, s, args, no_extra));
    unsigned char buf[24] = {0};
    size_t bufsize = sizeof buf;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize,
                      CU_LAUNCH_PARAM_END };
    report("launch: kernelParams and an extra buffer",
           cuLaunchKernel(f_axpy, 2, 1, 1, 128, 1, 1, 0, s, args, extra));
    report("copy: HtoD from NULL", cuMemcpyHtoDAsync(x, NULL, sizeof host, s));
    report("copy: HtoD to address 0", cuMemcpyHtoDAsync(0, host, sizeof host, s));
    report("copy: DtoD from address 0", cuMemcpyDtoDAsync(y, 0, sizeof host, s));
    report("memset: address 0", cuMemsetD32Async(0, 0, 16, s));
    report("alloc: zero bytes", cuMemAlloc(&x, 0));
    CK(cuStreamSynchronize, (s));
    volatile_misuses(f_axpy, s, iters);
    CK(cuMemcpyDtoH, (host, y, sizeof host));
    app_checksum("badinput-y", app_hash(0x626164ull, host, sizeof host));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
