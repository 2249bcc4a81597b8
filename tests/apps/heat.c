/* heat - a 1-D heat equation on a created stream, the pattern a simulation
 * loop has: per step an async upload of changing boundary values from pinned
 * memory, a boundary kernel and several stencil kernels, an async download of
 * one probe value into pinned memory, and a stream synchronize. With
 * `pageable`, the boundary values come from plain malloc memory instead (the
 * driver then reads them at the call, so a shim must stage them).
 * Usage: heat MODULE ITERS [N [pageable]]   (N cells, default 4096) */
#include <cuda.h>

#include "appcommon.h"

#define STENCILS 4

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N [pageable]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 4096, 8, 1 << 24);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_stencil, f_boundary, f_checksum, f_iota;
    app_open(argv[1], &dev, &ctx, &mod);
    f_stencil = app_function(mod, "stencil3");
    f_boundary = app_function(mod, "boundary_apply");
    f_checksum = app_function(mod, "checksum_u64");
    f_iota = app_function(mod, "iota_f32");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));

    CUdeviceptr a, b, bvals, sum;
    size_t bytes = (size_t)n * sizeof(float);
    CK(cuMemAlloc, (&a, bytes));
    CK(cuMemAlloc, (&b, bytes));
    CK(cuMemAlloc, (&bvals, 2 * sizeof(float)));
    CK(cuMemAlloc, (&sum, sizeof(uint64_t)));

    int pageable = argc > 4 && !strcmp(argv[4], "pageable");
    if (argc > 4 && !pageable)
        app_die("the fourth argument must be pageable");
    float *hbound, *hprobe;
    if (pageable) {
        hbound = malloc(2 * sizeof(float));
        if (hbound == NULL)
            app_die("out of host memory");
    } else {
        CK(cuMemHostAlloc, ((void **)&hbound, 2 * sizeof(float), 0));
    }
    CK(cuMemHostAlloc, ((void **)&hprobe, sizeof(float), 0));

    unsigned int grid = app_blocks(n);
    float scale = 1.0f / 1024.0f, base = 0.0f;
    void *iota_args[] = { &a, &n, &scale, &base };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));

    float wl = 0.25f, wc = 0.5f, wr = 0.25f;
    void *ab_args[] = { &b, &a, &n, &wl, &wc, &wr };
    void *ba_args[] = { &a, &b, &n, &wl, &wc, &wr };
    void *bnd_args[] = { &a, &n, &bvals };
    CUdeviceptr probe = a + (CUdeviceptr)(n / 3) * sizeof(float);

    uint64_t probes = 0x4845415400000000ull;
    for (long it = 0; it < iters; it++) {
        /* Values that change every step: the stream was synchronized at the
         * end of the previous step, so the pinned buffer is free to reuse. */
        hbound[0] = (float)(it % 17) * 0.5f;
        hbound[1] = -(float)(it % 5);
        CK(cuMemcpyHtoDAsync, (bvals, hbound, 2 * sizeof(float), s));
        CK(cuLaunchKernel, (f_boundary, 1, 1, 1, 1, 1, 1, 0, s, bnd_args, NULL));
        for (int k = 0; k < STENCILS / 2; k++) {
            CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ab_args, NULL));
            CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ba_args, NULL));
        }
        CK(cuMemcpyDtoHAsync, (hprobe, probe, sizeof(float), s));
        CK(cuStreamSynchronize, (s));
        probes = app_hash_u64(probes, app_f32_bits(*hprobe));
    }

    /* The whole field, hashed on the device and on the host. */
    uint64_t seed = 0x1234, dsum = 0;
    void *ck_args[] = { &sum, &a, &n, &seed };
    CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), s));
    CK(cuLaunchKernel, (f_checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ck_args, NULL));
    CK(cuStreamSynchronize, (s));
    CK(cuMemcpyDtoH, (&dsum, sum, sizeof dsum));
    float *field = malloc(bytes);
    if (field == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (field, a, bytes));
    uint64_t hsum = 0;
    for (int32_t i = 0; i < n; i++)
        hsum += tk_word_hash(seed, (uint64_t)i, app_f32_bits(field[i]));
    if (hsum != dsum)
        app_die("device checksum differs from host checksum");

    app_checksum("heat-probes", probes);
    app_checksum("heat-field", dsum);

    free(field);
    if (pageable)
        free(hbound);
    else
        CK(cuMemFreeHost, (hbound));
    CK(cuMemFreeHost, (hprobe));
    CK(cuMemFree, (a));
    CK(cuMemFree, (b));
    CK(cuMemFree, (bvals));
    CK(cuMemFree, (sum));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
