/* stepper - the shape of a training loop: every step launches kernels whose
 * scalar arguments change each iteration (an RNG offset, a time step, an
 * iteration counter), some through cuLaunchKernelEx and one through the
 * `extra` parameter buffer form, and every few steps reduces a buffer with a
 * shared-memory kernel and reads the sum back.
 * Usage: stepper MODULE ITERS [EVERY]   (steps between readbacks, default 8) */
#include <cuda.h>

#include "appcommon.h"

#define N 3000
#define RBLOCKS 8u

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[EVERY]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    long every = app_arg(argc, argv, 3, 8, 1, 1000000);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_rng, f_noise, f_scale, f_axpy, f_reduce, f_final;
    app_open(argv[1], &dev, &ctx, &mod);
    f_rng = app_function(mod, "rng_fill");
    f_noise = app_function(mod, "add_noise");
    f_scale = app_function(mod, "scale_add_scalar");
    f_axpy = app_function(mod, "axpy");
    f_reduce = app_function(mod, "reduce_sum_u64");
    f_final = app_function(mod, "reduce_finalize_u64");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));

    int32_t n = N, nparts = RBLOCKS;
    CUdeviceptr w, v, noise, partials, total;
    CK(cuMemAlloc, (&w, N * sizeof(float)));
    CK(cuMemAlloc, (&v, N * sizeof(float)));
    CK(cuMemAlloc, (&noise, N * sizeof(uint32_t)));
    CK(cuMemAlloc, (&partials, RBLOCKS * sizeof(uint64_t)));
    CK(cuMemAlloc, (&total, sizeof(uint64_t)));
    CK(cuMemsetD32Async, (w, 0, N, s));
    CK(cuMemsetD32Async, (v, 0, N, s));

    uint64_t *hsum;
    CK(cuMemHostAlloc, ((void **)&hsum, sizeof(uint64_t), CU_MEMHOSTALLOC_PORTABLE));

    unsigned int grid = app_blocks(N);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid; cfg.gridDimY = 1; cfg.gridDimZ = 1;
    cfg.blockDimX = TK_BLOCK; cfg.blockDimY = 1; cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 0;
    cfg.hStream = s;
    cfg.attrs = NULL;
    cfg.numAttrs = 0;

    CUlaunchConfig rcfg = cfg;
    rcfg.gridDimX = RBLOCKS;
    rcfg.sharedMemBytes = TK_BLOCK * sizeof(uint64_t);

    const uint64_t seed = 0x5eed5eed5eedull;
    float noise_scale = 0.125f, decay = 0.75f;
    uint64_t sums = 0x5354455000000000ull;
    for (long it = 0; it < iters; it++) {
        uint64_t offset = (uint64_t)it * N;          /* changes every step */
        float dt = 0.001f * (float)(it % 10 + 1);    /* changes every step */
        uint32_t iter = (uint32_t)it;

        void *rng_args[] = { &noise, &n, (void *)&seed, &offset };
        CK(cuLaunchKernelEx, (&cfg, f_rng, rng_args, NULL));

        void *noise_args[] = { &w, &noise, &n, &noise_scale };
        CK(cuLaunchKernel, (f_noise, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, noise_args, NULL));

        void *scale_args[] = { &w, &n, &decay, &dt, &iter };
        CK(cuLaunchKernelEx, (&cfg, f_scale, scale_args, NULL));

        /* v += 0.5 w through one packed, naturally aligned argument buffer. */
        tk_axpy_args ax = { v, w, 0.5f, n };
        size_t axsize = sizeof ax;
        void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &ax,
                          CU_LAUNCH_PARAM_BUFFER_SIZE, &axsize,
                          CU_LAUNCH_PARAM_END };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, NULL, extra));

        if ((it + 1) % every == 0) {
            void *red_args[] = { &partials, &noise, &n };
            CK(cuLaunchKernelEx, (&rcfg, f_reduce, red_args, NULL));
            void *fin_args[] = { &total, &partials, &nparts };
            CK(cuLaunchKernel, (f_final, 1, 1, 1, 1, 1, 1, 0, s, fin_args, NULL));
            CK(cuMemcpyDtoHAsync, (hsum, total, sizeof(uint64_t), s));
            CK(cuStreamSynchronize, (s));
            sums = app_hash_u64(sums, *hsum);
        }
    }
    CK(cuStreamSynchronize, (s));

    float *hw = malloc(2 * N * sizeof(float));
    if (hw == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (hw, w, N * sizeof(float)));
    CK(cuMemcpyDtoH, (hw + N, v, N * sizeof(float)));
    app_checksum("stepper-sums", sums);
    app_checksum("stepper-weights", app_hash(0x57, hw, N * sizeof(float)));
    app_checksum("stepper-velocity", app_hash(0x56, hw + N, N * sizeof(float)));

    free(hw);
    CK(cuMemFreeHost, (hsum));
    CK(cuMemFree, (w));
    CK(cuMemFree, (v));
    CK(cuMemFree, (noise));
    CK(cuMemFree, (partials));
    CK(cuMemFree, (total));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
