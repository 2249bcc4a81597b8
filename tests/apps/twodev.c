/* twodev - two devices' contexts in one process (issue 16). Each device's
 * primary context gets the module and a blocking stream; every
 * iteration makes device 0's context current and queues a step on its
 * stream (and one kernel on its legacy stream), then the same on device 1,
 * then synchronizes both streams. The engine keeps state per context: each
 * device's steps are learnt and replayed on their own, with their own
 * private capture stream. On the CPU driver the program asks for a second
 * device itself (CPUCUDA_DEVICES=2, unless set); on a machine with one
 * device it prints a skip line and exits 0.
 * Usage: twodev MODULE ITERS [K]   (K launches a step, default 6) */
#include <cuda.h>

#include "appcommon.h"

#define N 2048

struct dev {
    CUcontext ctx;
    CUmodule mod;
    CUfunction axpy, scale, iota;
    CUstream s;
    CUdeviceptr x, y;
};

static void dev_open(struct dev *d, int ordinal, const char *module)
{
    CUdevice dev;
    CK(cuDeviceGet, (&dev, ordinal));
    CK(cuDevicePrimaryCtxRetain, (&d->ctx, dev));
    CK(cuCtxSetCurrent, (d->ctx));
    CK(cuModuleLoad, (&d->mod, module));
    d->axpy = app_function(d->mod, "axpy");
    d->scale = app_function(d->mod, "scale_add_scalar");
    d->iota = app_function(d->mod, "iota_f32");
    CK(cuStreamCreate, (&d->s, CU_STREAM_DEFAULT)); /* blocking: ordered with the legacy stream */
    CK(cuMemAlloc, (&d->x, N * sizeof(float)));
    CK(cuMemAlloc, (&d->y, N * sizeof(float)));
    int32_t n = N;
    float scale = 0.001f * (float)(ordinal + 1), base = (float)ordinal;
    void *ix[] = { &d->x, &n, &scale, &base };
    void *iy[] = { &d->y, &n, &base, &scale };
    CK(cuLaunchKernel, (d->iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, d->s, ix, NULL));
    CK(cuLaunchKernel, (d->iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, d->s, iy, NULL));
}

/* One step on device d's context (made current): K launches on its
 * stream, one on its legacy stream. */
static void dev_step(struct dev *d, long k, int ordinal)
{
    CK(cuCtxSetCurrent, (d->ctx));
    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float a = 0.125f * (float)(ordinal + 1), decay = 0.96875f, dt = 0.25f;
    for (long j = 0; j < k; j++) {
        uint32_t iter = (uint32_t)j;
        void *axpy[] = { j % 2 ? &d->x : &d->y, j % 2 ? &d->y : &d->x, &a, &n };
        void *scale[] = { &d->x, &n, &decay, &dt, &iter };
        if (j % 3 == 2)
            CK(cuLaunchKernel, (d->scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, d->s, scale, NULL));
        else
            CK(cuLaunchKernel, (d->axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, d->s, axpy, NULL));
    }
    CK(cuStreamSynchronize, (d->s));
    uint32_t iter = 99;
    void *scale[] = { &d->y, &n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (d->scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, NULL, scale, NULL));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[K]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    long k = app_arg(argc, argv, 3, 6, 1, 1000);
    setenv("CPUCUDA_DEVICES", "2", 0); /* the CPU driver's second device; a GPU ignores it */
    CK(cuInit, (0));
    int ndev = 0;
    CK(cuDeviceGetCount, (&ndev));
    if (ndev < 2) {
        printf("twodev: skipped, %d device (two are needed)\n", ndev);
        return 0;
    }
    struct dev d[2];
    for (int i = 0; i < 2; i++)
        dev_open(&d[i], i, argv[1]);
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < 2; i++)
            dev_step(&d[i], k, i);
    for (int i = 0; i < 2; i++) {
        CK(cuCtxSetCurrent, (d[i].ctx));
        CK(cuCtxSynchronize, ());
        float *h = malloc(2 * N * sizeof(float));
        if (!h)
            app_die("out of host memory");
        CK(cuMemcpyDtoH, (h, d[i].x, N * sizeof(float)));
        CK(cuMemcpyDtoH, (h + N, d[i].y, N * sizeof(float)));
        app_checksum(i ? "twodev-dev1" : "twodev-dev0", app_hash(0x7464 + (uint64_t)i, h, 2 * N * sizeof(float)));
        free(h);
        CK(cuMemFree, (d[i].x));
        CK(cuMemFree, (d[i].y));
        CK(cuStreamDestroy, (d[i].s));
        CK(cuModuleUnload, (d[i].mod));
        CUdevice dev;
        CK(cuDeviceGet, (&dev, i));
        CK(cuDevicePrimaryCtxRelease, (dev));
    }
    return 0;
}
