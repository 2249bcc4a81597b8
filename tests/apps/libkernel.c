/* libkernel - the library-management API of CUDA 12: cuLibraryLoadFromFile,
 * cuLibraryGetKernel, a CUkernel launched directly (cast to CUfunction) and
 * through the CUfunction cuKernelGetFunction gives, cuFuncGetName and
 * cuKernelGetName, and the parameter layout cuKernelGetParamInfo reports,
 * checked against the layout the program itself was compiled with.
 * Usage: libkernel MODULE ITERS [N]   (N cells, default 2048) */
#include <stddef.h>

#include <cuda.h>

#include "appcommon.h"

/* Walk a kernel's parameters until CUDA_ERROR_INVALID_VALUE and require the
 * offsets and sizes of the layout structure; returns a hash of the layout. */
static uint64_t check_layout(CUkernel k, const char *name, const size_t *offs,
                             const size_t *sizes, size_t count)
{
    uint64_t h = app_hash(0x4c41, name, strlen(name));
    size_t i = 0;
    for (;; i++) {
        size_t off = 0, size = 0;
        CUresult r = cuKernelGetParamInfo(k, i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break;
        if (r != CUDA_SUCCESS)
            app_fail("cuKernelGetParamInfo", (int)r);
        if (i >= count || off != offs[i] || size != sizes[i]) {
            printf("error: %s parameter %zu is at %zu size %zu, want %zu size %zu\n",
                   name, i, off, size, i < count ? offs[i] : 0, i < count ? sizes[i] : 0);
            exit(1);
        }
        h = app_hash_u64(app_hash_u64(h, off), size);
    }
    if (i != count) {
        printf("error: %s has %zu parameters, want %zu\n", name, i, count);
        exit(1);
    }
    return h;
}

#define OFF(T, m) offsetof(T, m)
#define SZ(T, m) sizeof(((T *)0)->m)

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 2048, 8, 1 << 24);

    CUdevice dev;
    CUcontext ctx;
    CUlibrary lib;
    CUkernel k_stencil, k_axpy, k_jacobi;
    CUfunction f_axpy;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    /* The library loads before any context is current, as the runtime does. */
    CK(cuLibraryLoadFromFile, (&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel, (&k_stencil, lib, "stencil3"));
    CK(cuLibraryGetKernel, (&k_axpy, lib, "axpy"));
    CK(cuLibraryGetKernel, (&k_jacobi, lib, "jacobi2d"));
    CK(cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(cuCtxSetCurrent, (ctx));
    CK(cuKernelGetFunction, (&f_axpy, k_axpy));

    const char *name = NULL;
    CK(cuFuncGetName, (&name, f_axpy));
    if (name == NULL || strcmp(name, "axpy") != 0)
        app_die("cuFuncGetName does not name axpy");
    name = NULL;
    CK(cuKernelGetName, (&name, k_stencil));
    if (name == NULL || strcmp(name, "stencil3") != 0)
        app_die("cuKernelGetName does not name stencil3");

    const size_t st_off[] = { OFF(tk_stencil3_args, out), OFF(tk_stencil3_args, in),
                              OFF(tk_stencil3_args, n), OFF(tk_stencil3_args, wl),
                              OFF(tk_stencil3_args, wc), OFF(tk_stencil3_args, wr) };
    const size_t st_sz[] = { SZ(tk_stencil3_args, out), SZ(tk_stencil3_args, in),
                             SZ(tk_stencil3_args, n), SZ(tk_stencil3_args, wl),
                             SZ(tk_stencil3_args, wc), SZ(tk_stencil3_args, wr) };
    const size_t ja_off[] = { OFF(tk_jacobi2d_args, dst), OFF(tk_jacobi2d_args, src),
                              OFF(tk_jacobi2d_args, rhs), OFF(tk_jacobi2d_args, fixed_boundary),
                              OFF(tk_jacobi2d_args, g) };
    const size_t ja_sz[] = { SZ(tk_jacobi2d_args, dst), SZ(tk_jacobi2d_args, src),
                             SZ(tk_jacobi2d_args, rhs), SZ(tk_jacobi2d_args, fixed_boundary),
                             SZ(tk_jacobi2d_args, g) };
    uint64_t layout = check_layout(k_stencil, "stencil3", st_off, st_sz, 6);
    layout = app_hash_u64(layout, check_layout(k_jacobi, "jacobi2d", ja_off, ja_sz, 5));

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    size_t bytes = (size_t)n * sizeof(float);
    CUdeviceptr a, b;
    CK(cuMemAlloc, (&a, bytes));
    CK(cuMemAlloc, (&b, bytes));
    float *h = malloc(bytes);
    if (h == NULL)
        app_die("out of host memory");
    for (int32_t i = 0; i < n; i++)
        h[i] = (float)(i % 64) - 16.0f;
    CK(cuMemcpyHtoD, (a, h, bytes));
    CK(cuMemcpyHtoD, (b, h, bytes));

    unsigned int grid = app_blocks(n);
    float wl = 0.125f, wc = 0.75f, wr = 0.125f, a_coef = -0.5f;
    void *st_args[] = { &b, &a, &n, &wl, &wc, &wr };
    void *ax_args[] = { &a, &b, &a_coef, &n };
    uint64_t probes = 0x4c49424bull;
    for (long it = 0; it < iters; it++) {
        /* The CUkernel itself, cast, then the CUfunction got from it. */
        CK(cuLaunchKernel, ((CUfunction)k_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s,
                            st_args, NULL));
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ax_args, NULL));
        if (it % 8 == 7) {
            float v[2];
            CK(cuStreamSynchronize, (s));
            CK(cuMemcpyDtoH, (v, a + sizeof(float) * 5, sizeof v));
            probes = app_hash(probes, v, sizeof v);
        }
    }
    CK(cuStreamSynchronize, (s));
    CK(cuMemcpyDtoH, (h, a, bytes));
    app_checksum("libkernel-layout", layout);
    app_checksum("libkernel-probes", probes);
    app_checksum("libkernel-field", app_hash(0x4c46, h, bytes));

    free(h);
    CK(cuMemFree, (a));
    CK(cuMemFree, (b));
    CK(cuStreamDestroy, (s));
    CK(cuLibraryUnload, (lib));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
