/* pingpong - a 2-D Jacobi solver on the legacy stream (stream 0) that
 * alternates two buffers, so the pointer arguments of consecutive launches
 * alternate, with a context synchronize every K sweeps. Its context is
 * created with cuCtxCreate, not the primary context.
 * Usage: pingpong MODULE ITERS [K [NBUF]]   (K sweeps between syncs, default 4;
 * NBUF buffers rotated, 2 or 3, default 2: with 3, sweep i reads buffer
 * i % 3 and writes buffer (i + 1) % 3) */
#include <cuda.h>

#include "appcommon.h"

#define NX 96u
#define NY 40u
#define PITCH 104u   /* > NX + 2: rows are padded */
#define BX 16u
#define BY 8u

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[K [NBUF]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    long k = app_arg(argc, argv, 3, 4, 1, 1000000);
    long nbuf = app_arg(argc, argv, 4, 2, 2, 3);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_jacobi;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuCtxCreate, (&ctx, NULL, 0, dev));
    CK(cuModuleLoad, (&mod, argv[1]));
    CK(cuModuleGetFunction, (&f_jacobi, mod, "jacobi2d"));

    size_t cells = (size_t)PITCH * (NY + 2);
    size_t bytes = cells * sizeof(float);
    CUdeviceptr u[3], rhs;
    for (long b = 0; b < nbuf; b++)
        CK(cuMemAlloc, (&u[b], bytes));
    CK(cuMemAlloc, (&rhs, bytes));

    /* A hot left edge, a cold right edge, and a point source. */
    float *h = calloc(cells, sizeof(float));
    if (h == NULL)
        app_die("out of host memory");
    for (unsigned int y = 0; y < NY + 2; y++) {
        h[y * PITCH] = 100.0f;
        h[y * PITCH + NX + 1] = -20.0f;
    }
    for (long b = 0; b < nbuf; b++)
        CK(cuMemcpyHtoD, (u[b], h, bytes));
    memset(h, 0, bytes);
    h[(NY / 2) * PITCH + NX / 3] = 50.0f;
    CK(cuMemcpyHtoD, (rhs, h, bytes));

    tk_grid2d g = { NX, NY, PITCH, 0.2f };
    int32_t fixed = 1;
    /* Sweep i writes u[(i + 1) % nbuf] from u[i % nbuf]. */
    void *args[3][5];
    for (long b = 0; b < nbuf; b++) {
        args[b][0] = &u[(b + 1) % nbuf];
        args[b][1] = &u[b];
        args[b][2] = &rhs;
        args[b][3] = &fixed;
        args[b][4] = &g;
    }
    unsigned int gx = (NX + 2 + BX - 1) / BX, gy = (NY + 2 + BY - 1) / BY;

    uint64_t syncs = 0;
    for (long it = 0; it < iters; it++) {
        CK(cuLaunchKernel, (f_jacobi, gx, gy, 1, BX, BY, 1, 0, 0, args[it % nbuf], NULL));
        if ((it + 1) % k == 0) {
            CK(cuCtxSynchronize, ());
            syncs++;
        }
    }
    CK(cuStreamSynchronize, (0));

    CK(cuMemcpyDtoH, (h, u[iters % nbuf], bytes));
    uint64_t field = 0x50494e47ull;
    for (unsigned int y = 0; y < NY + 2; y++)
        field = app_hash(field, &h[y * PITCH], (NX + 2) * sizeof(float));
    app_checksum("pingpong-field", field);
    app_checksum("pingpong-syncs", syncs);

    free(h);
    for (long b = 0; b < nbuf; b++)
        CK(cuMemFree, (u[b]));
    CK(cuMemFree, (rhs));
    CK(cuModuleUnload, (mod));
    CK(cuCtxDestroy, (ctx));
    return 0;
}
