/* cxxnames - the kernels of a C++ program, whose names are mangled: a loop
 * on a created stream of tk::scale_inplace<float> (looked up by its mangled
 * name, TK_SCALE_INPLACE_NAME, as nvcc names it) and axpy, then a
 * synchronize; the report must show the kernel's demangled name.
 * Usage: cxxnames MODULE ITERS [N]   (N elements, default 4096) */
#include <cuda.h>

#include "appcommon.h"

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 4096, 1, 1 << 24);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_axpy, f_iota;
    app_open(argv[1], &dev, &ctx, &mod);
    CK(cuModuleGetFunction, (&f_scale, mod, TK_SCALE_INPLACE_NAME));
    f_axpy = app_function(mod, "axpy");
    f_iota = app_function(mod, "iota_f32");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    CUdeviceptr x, y;
    size_t bytes = (size_t)n * sizeof(float);
    CK(cuMemAlloc, (&x, bytes));
    CK(cuMemAlloc, (&y, bytes));
    unsigned int grid = app_blocks(n);
    float scale = 1.0f / 512.0f, base = 1.0f, zero = 0.0f;
    void *iota_x[] = { &x, &n, &scale, &base };
    void *iota_y[] = { &y, &n, &zero, &zero };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_x, NULL));
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_y, NULL));

    /* x stays bounded: x*0.5 then y += 0.25*x. */
    float half = 0.5f, quarter = 0.25f, two = 2.0f;
    void *scale_args[] = { &x, &n, &half };
    void *unscale_args[] = { &x, &n, &two };
    void *axpy_args[] = { &y, &x, &quarter, &n };
    for (long it = 0; it < iters; it++) {
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL));
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, unscale_args, NULL));
        CK(cuStreamSynchronize, (s));
    }

    float *hy = malloc(bytes);
    if (hy == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (hy, y, bytes));
    uint64_t h = 0x4358584e414d4553ull;
    for (int32_t i = 0; i < n; i++)
        h = app_hash_u64(h, app_f32_bits(hy[i]));
    app_checksum("cxxnames-y", h);

    free(hy);
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
