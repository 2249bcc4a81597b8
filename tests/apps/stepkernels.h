/* stepkernels.h - the three launches the fork/join, host-wait and parts programs
 * build their steps from (forkjoin, fjanswers, fjshapes, hostwait, parts): y += a x,
 * x scaled, x filled with a ramp, each over N floats on stream s. Included
 * once per program, after appcommon.h and its N; the program loads the
 * functions (step_kernels_load). */
#ifndef STEPKERNELS_H
#define STEPKERNELS_H

#ifndef N
#error "stepkernels.h needs N, the element count, defined first"
#endif

static CUfunction f_axpy, f_scale, f_iota;
static int32_t n = N;
static unsigned int grid;

/* The three functions from `mod`, and the grid for N floats. */
static void step_kernels_load(CUmodule mod)
{
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    grid = app_blocks(N);
}

static void axpy(CUstream s, CUdeviceptr y, CUdeviceptr x, float a)
{
    void *args[] = { &y, &x, &a, &n };
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

static void scale(CUstream s, CUdeviceptr x, uint32_t iter)
{
    float decay = 0.96875f, dt = 0.125f;
    void *args[] = { &x, &n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

static void iota(CUstream s, CUdeviceptr x, float base)
{
    float step = 0.0009765625f;
    void *args[] = { &x, &n, &step, &base };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
}

#endif
