/* bounce - data that travels through pinned host memory within one stream,
 * with no host synchronization between the write and the read: a legal
 * pattern, since the driver reads a pinned source of cuMemcpyHtoDAsync when
 * the copy runs, in stream order, after earlier work on the stream has
 * filled it. Three ways to fill the pinned buffer P each step:
 *   copy    a device-to-host copy into P (a bounce buffer)
 *   mapped  a kernel writing P through its device address
 *           (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP)
 *   hostfn  a host function (cuLaunchHostFunc) writing P
 * then a host-to-device copy from P and a kernel that folds it into an
 * accumulator. The stream is synchronized every EVERY steps (default 1), so
 * a shim sees the same sequence repeat and replays it.
 * Usage: bounce MODULE ITERS [copy|mapped|hostfn [EVERY]]   (default copy) */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 1024

/* The host function's state: it runs on a driver thread, in stream order. */
static float *g_pinned;
static uint32_t g_calls;

static void CUDA_CB fill(void *user)
{
    (void)user;
    g_calls++;
    for (int i = 0; i < N; i++)
        g_pinned[i] = (float)((g_calls * 7u + (uint32_t)i) % 13u) * 0.125f;
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[copy|mapped|hostfn [EVERY]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *mode = argc > 3 ? argv[3] : "copy";
    int copy = !strcmp(mode, "copy"), mapped = !strcmp(mode, "mapped"),
        hostfn = !strcmp(mode, "hostfn");
    if (!copy && !mapped && !hostfn)
        app_die("the third argument must be copy, mapped or hostfn");
    long every = app_arg(argc, argv, 4, 1, 1, 1000000);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_axpy, f_iota;
    app_open(argv[1], &dev, &ctx, &mod);
    f_scale = app_function(mod, "scale_add_scalar");
    f_axpy = app_function(mod, "axpy");
    f_iota = app_function(mod, "iota_f32");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, y, z, pdev = 0;
    size_t bytes = N * sizeof(float);
    CK(cuMemAlloc, (&x, bytes));
    CK(cuMemAlloc, (&y, bytes));
    CK(cuMemAlloc, (&z, bytes));
    float *p;
    CK(cuMemHostAlloc, ((void **)&p, bytes, mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0));
    memset(p, 0, bytes);
    g_pinned = p;
    if (mapped)
        CK(cuMemHostGetDevicePointer, (&pdev, p, 0));

    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float s1 = 0.01f, b1 = 1.0f, zero = 0.0f;
    void *ix[] = { &x, &n, &s1, &b1 };
    void *iz[] = { &z, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ix, NULL));
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iz, NULL));
    CK(cuStreamSynchronize, (s));

    float decay = 0.75f, dt = 0.5f, quarter = 0.25f, half = 0.5f;
    uint32_t iter = 3;
    void *scale_args[] = { &x, &n, &decay, &dt, &iter };
    void *to_p_args[] = { &pdev, &x, &quarter, &n };   /* P += x/4 (mapped) */
    void *fold_args[] = { &z, &y, &half, &n };         /* z += y/2 */
    for (long it = 0; it < iters; it++) {
        if (copy) {
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
            CK(cuMemcpyDtoHAsync, (p, x, bytes, s));
        } else if (mapped) {
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, to_p_args, NULL));
        } else {
            CK(cuLaunchHostFunc, (s, fill, NULL));
        }
        CK(cuMemcpyHtoDAsync, (y, p, bytes, s));
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_args, NULL));
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
        if ((it + 1) % every == 0)
            CK(cuStreamSynchronize, (s));
    }
    CK(cuStreamSynchronize, (s));

    float h[N];
    CK(cuMemcpyDtoH, (h, z, bytes));
    app_checksum("bounce-z", app_hash(0x626f756eull, h, bytes));
    CK(cuMemcpyDtoH, (h, y, bytes));
    app_checksum("bounce-y", app_hash(0x79ull, h, bytes));
    app_checksum("bounce-hostfn-calls", g_calls);

    CK(cuMemFreeHost, (p));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuMemFree, (z));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
