/* infer - an inference loop with Python's host time between launches (issue
 * 28, shape 4): an MLP forward on the legacy stream (PyTorch's default
 * stream), 4 layers of 4 kernels (stencil3 "matmul" into a fresh
 * activation, an axpy adding the layer's parameter, a scale_add_scalar
 * "activation", a tk::scale_inplace "norm"), then an axpy accumulating the
 * output: 17 launches a step. Activations are the next block of a caching
 * allocator's pool of 6 (4 a step: a step's pointers repeat every 3 steps).
 * Before every launch 5 to HOSTUS microseconds (default 40) of host time (a
 * busy wait on the clock, no driver call), and now and then a long gap: on
 * about one step in 32, 1 to 3 ms before one of its launches, both drawn
 * from a fixed-seed generator (timing moves, results never). Each launch is
 * preceded by cuCtxGetCurrent and cuCtxGetDevice, a framework's device
 * guard (queries the shim does not interpose).
 * Modes (default nosync):
 *   nosync          no synchronization inside the loop (one at the end)
 *   item [EVERY]    every EVERY steps (default 10) the accumulator's first
 *                   float read back as .item() does (cuMemcpyDtoHAsync into
 *                   pageable memory, cuStreamSynchronize)
 *   pinned [EVERY]  every step ends with the accumulator's first 4 floats
 *                   copied into pinned memory (cuMemcpyDtoHAsync), one of 3
 *                   buffers in turn, as a caching host allocator hands out
 *                   (.to("cpu", non_blocking=True)); every EVERY steps
 *                   (default 10) a synchronize, and the 3 buffers read
 * Prints a checksum of the accumulator, the parameters and the values read.
 * Usage: infer MODULE STEPS [nosync|item|pinned [EVERY [HOSTUS]]] */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 512
#define LAYERS 4
#define POOL 6
#define OPS_PER_STEP (LAYERS * 4 + 1)
#define LONG_GAP_ONE_IN 32
#define LONG_GAP_MIN_US 1000
#define LONG_GAP_MAX_US 3000

static uint64_t g_rng = 0x696e666572ull;
static long g_host_us;
static long g_launch;       /* launches so far in this step */
static long g_long_at = -1; /* this step's launch that a long gap precedes */

static void launch(CUfunction f, unsigned int grid, void **args)
{
    if (g_host_us > 0)
        app_spin_us(app_rand_in(&g_rng, 5, g_host_us));
    if (g_launch++ == g_long_at)
        app_spin_us(app_rand_in(&g_rng, LONG_GAP_MIN_US, LONG_GAP_MAX_US));
    CUcontext cur;
    CUdevice d;
    CK(cuCtxGetCurrent, (&cur));
    CK(cuCtxGetDevice, (&d));
    CK(cuLaunchKernel, (f, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, args, NULL));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[nosync|item|pinned [EVERY [HOSTUS]]]");
    long steps = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *mode = argc > 3 ? argv[3] : "nosync";
    long every = app_arg(argc, argv, 4, 10, 1, 100000000);
    g_host_us = app_arg(argc, argv, 5, 40, 0, 100000);
    int item = !strcmp(mode, "item"), pinned = !strcmp(mode, "pinned");
    if (!item && !pinned && strcmp(mode, "nosync") != 0) {
        printf("error: bad mode %s (want nosync, item or pinned)\n", mode);
        return 2;
    }
    if (g_host_us > 0 && g_host_us < 5)
        g_host_us = 5;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    CUfunction f_stencil = app_function(mod, "stencil3"), f_axpy = app_function(mod, "axpy"),
               f_scale = app_function(mod, "scale_add_scalar"),
               f_inplace = app_function(mod, TK_SCALE_INPLACE_NAME),
               f_iota = app_function(mod, "iota_f32");
    int32_t n = N;
    unsigned int grid = app_blocks(N);
    size_t bytes = N * sizeof(float);
    CUdeviceptr w[LAYERS], pool[POOL], x, acc;
    for (int l = 0; l < LAYERS; l++) {
        CK(cuMemAlloc, (&w[l], bytes));
        float sc = 0.0002f * (float)(l + 1), base = -0.05f;
        void *a[] = { &w[l], &n, &sc, &base };
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, a, NULL));
    }
    for (int i = 0; i < POOL; i++)
        CK(cuMemAlloc, (&pool[i], bytes));
    CK(cuMemAlloc, (&x, bytes));
    CK(cuMemAlloc, (&acc, bytes));
    float *back[3] = {NULL, NULL, NULL};
    for (int i = 0; pinned && i < 3; i++) {
        CK(cuMemHostAlloc, ((void **)&back[i], 4 * sizeof(float), 0));
        memset(back[i], 0, 4 * sizeof(float));
    }
    {
        float sx = 0.004f, bx = -1.0f, zero = 0.0f;
        void *ax[] = { &x, &n, &sx, &bx };
        void *aa[] = { &acc, &n, &zero, &zero };
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, ax, NULL));
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, 0, aa, NULL));
    }

    uint64_t plan = 0x6c6f6e67ull, seen = 0x7265616475ull;
    long next = 0;
    float wl = 0.25f, wc = 0.5f, wr = 0.25f, one = 1.0f, decay = 0.5f, dt = 0.0625f, norm = 0.75f,
          eighth = 0.125f;
    uint32_t zero = 0;
    for (long step = 0; step < steps; step++) {
        g_launch = 0;
        g_long_at = app_rand_in(&plan, 0, LONG_GAP_ONE_IN - 1) == 0
                        ? app_rand_in(&plan, 0, OPS_PER_STEP - 1) : -1;
        CUdeviceptr in = x;
        for (int l = 0; l < LAYERS; l++) {
            CUdeviceptr a = pool[next++ % POOL];
            void *st[] = { &a, &in, &n, &wl, &wc, &wr };
            void *bi[] = { &a, &w[l], &one, &n };
            void *ac[] = { &a, &n, &decay, &dt, &zero };
            void *nm[] = { &a, &n, &norm };
            launch(f_stencil, grid, st);
            launch(f_axpy, grid, bi);
            launch(f_scale, grid, ac);
            launch(f_inplace, grid, nm);
            in = a;
        }
        void *ad[] = { &acc, &in, &eighth, &n };
        launch(f_axpy, grid, ad);
        if (pinned) {
            CK(cuMemcpyDtoHAsync, (back[step % 3], acc, 4 * sizeof(float), 0));
            if ((step + 1) % every == 0) {
                CK(cuStreamSynchronize, (0));
                for (int i = 0; i < 3; i++)
                    seen = app_hash(seen, back[i], 4 * sizeof(float));
            }
        }
        if (item && (step + 1) % every == 0) {
            float v;
            CK(cuMemcpyDtoHAsync, (&v, acc, sizeof v, 0));
            CK(cuStreamSynchronize, (0));
            seen = app_hash_u64(seen, app_f32_bits(v));
        }
    }
    CK(cuCtxSynchronize, ());

    static float h[N];
    char name[64];
    CK(cuMemcpyDtoH, (h, acc, bytes));
    snprintf(name, sizeof name, "infer-%s-acc", mode);
    app_checksum(name, app_hash(0x616363ull, h, bytes));
    uint64_t hw = 0x77ull;
    for (int l = 0; l < LAYERS; l++) {
        CK(cuMemcpyDtoH, (h, w[l], bytes));
        hw = app_hash(hw, h, bytes);
    }
    snprintf(name, sizeof name, "infer-%s-params", mode);
    app_checksum(name, hw);
    snprintf(name, sizeof name, "infer-%s-read", mode);
    app_checksum(name, seen);

    for (int l = 0; l < LAYERS; l++)
        CK(cuMemFree, (w[l]));
    for (int i = 0; i < POOL; i++)
        CK(cuMemFree, (pool[i]));
    CK(cuMemFree, (x));
    CK(cuMemFree, (acc));
    for (int i = 0; pinned && i < 3; i++)
        CK(cuMemFreeHost, (back[i]));
    app_close(dev, mod);
    return 0;
}
