/* phases - a loop whose shape changes: the batch (grid and copy sizes) grows
 * at iteration K and again at 2K, as a decode or a growing batch does, and
 * within a phase every iteration changes a counter argument, a memset value
 * and the ring slot that a memset and a copy write (8 slots in rotation).
 * Per iteration on a created stream: a scaling kernel, a memset of a ring
 * slot, a device-to-device copy into another ring's slot, a checksum kernel
 * and an asynchronous read-back into pinned memory, then a synchronize.
 * With `grid`, the batch grows by one block every iteration instead, so no
 * two iterations have the same shape (nothing may be replayed). With
 * `fixedset`, the memset keeps the first phase's width (2048 words) while
 * the rest grows: a 1-D memset's width is a change the driver reference
 * only "opportunistically" allows in an executable, the grid and the copy's
 * extent are changes it allows. With `swap`, the memset keeps its width too,
 * and the scaling kernel is another function in the middle phase (a C++
 * template scaling in place, with other parameters): a change no node
 * update can follow, but a whole-executable update (cuGraphExecUpdate) may.
 * Usage: phases MODULE ITERS [K [grid|fixedset|swap]]   (K iterations per phase, default 40) */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define SLOTS 8u
#define MAXN (3u * 2048u + 64u * TK_BLOCK)

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[K [grid|fixedset|swap]]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    long k = app_arg(argc, argv, 3, 40, 1, 1000000);
    int grow = argc > 4 && strcmp(argv[4], "grid") == 0;
    int swap = argc > 4 && strcmp(argv[4], "swap") == 0;
    int fixedset = swap || (argc > 4 && strcmp(argv[4], "fixedset") == 0);
    if (argc > 4 && !grow && !fixedset)
        app_die("the fourth argument must be `grid`, `fixedset` or `swap`");
    if (grow && iters > 64)
        app_die("with `grid`, at most 64 iterations");

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_checksum, f_iota, f_inplace;
    CUstream s;
    app_open(argv[1], &dev, &ctx, &mod);
    f_scale = app_function(mod, "scale_add_scalar");
    f_checksum = app_function(mod, "checksum_u64");
    f_iota = app_function(mod, "iota_f32");
    f_inplace = app_function(mod, TK_SCALE_INPLACE_NAME);
    CK(cuStreamCreate, (&s, 0));

    CUdeviceptr x, ring, copies, sum;
    size_t slot_bytes = MAXN * sizeof(float);
    CK(cuMemAlloc, (&x, slot_bytes));
    CK(cuMemAlloc, (&ring, SLOTS * slot_bytes));
    CK(cuMemAlloc, (&copies, SLOTS * slot_bytes));
    CK(cuMemAlloc, (&sum, sizeof(uint64_t)));
    CK(cuMemsetD8, (ring, 0, SLOTS * slot_bytes));
    CK(cuMemsetD8, (copies, 0, SLOTS * slot_bytes));
    uint64_t *hsum;
    CK(cuMemHostAlloc, ((void **)&hsum, sizeof(uint64_t), 0));

    int32_t nmax = MAXN;
    float one = 0.001f, zero = 0.0f;
    void *iota_args[] = { &x, &nmax, &one, &zero };
    CK(cuLaunchKernel, (f_iota, app_blocks(MAXN), 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));

    uint64_t acc = 0x706861736573ull, seed = 0x5eedull;
    float decay = 0.96875f, dt = 0.125f;
    for (long it = 0; it < iters; it++) {
        long phase = it / k < 2 ? it / k : 2;
        int32_t n = grow ? (int32_t)((it + 1) * TK_BLOCK) : (int32_t)(2048u << phase);
        unsigned int grid = app_blocks((size_t)n);
        uint32_t iter = (uint32_t)it;
        CUdeviceptr slot = ring + (it % SLOTS) * slot_bytes;
        CUdeviceptr cslot = copies + (it % SLOTS) * slot_bytes;
        void *scale_args[] = { &x, &n, &decay, &dt, &iter };
        void *ck_args[] = { &sum, &x, &n, &seed };
        float a = 0.9921875f;
        void *inplace_args[] = { &x, &n, &a };
        if (swap && phase == 1)
            CK(cuLaunchKernel, (f_inplace, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, inplace_args, NULL));
        else
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL));
        CK(cuMemsetD32Async, (slot, 0x1000u + (unsigned int)it, fixedset ? (size_t)2048u : (size_t)n, s));
        CK(cuMemcpyDtoDAsync, (cslot, x, (size_t)n * sizeof(float), s));
        CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), s));
        CK(cuLaunchKernel, (f_checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ck_args, NULL));
        CK(cuMemcpyDtoHAsync, (hsum, sum, sizeof(uint64_t), s));
        CK(cuStreamSynchronize, (s));
        acc = app_hash_u64(acc, *hsum);
    }
    app_checksum("phases-steps", acc);

    float *h = malloc(SLOTS * slot_bytes);
    if (h == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, ring, SLOTS * slot_bytes));
    app_checksum("phases-ring", app_hash(0x72696e67ull, h, SLOTS * slot_bytes));
    CK(cuMemcpyDtoH, (h, copies, SLOTS * slot_bytes));
    app_checksum("phases-copies", app_hash(0x636f7079ull, h, SLOTS * slot_bytes));
    free(h);

    CK(cuMemFreeHost, (hsum));
    CK(cuMemFree, (x));
    CK(cuMemFree, (ring));
    CK(cuMemFree, (copies));
    CK(cuMemFree, (sum));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
