/* alignswitch - a decode loop whose kernels switch with the alignment of
 * their pointers (issue 35): as Hugging Face generate() does on PyTorch,
 * views into a tensor of int64 token ids that grows by one element (8
 * bytes) a token are added with add_i64_vec4 when the view is 32-byte
 * aligned, add_i64_vec2 when 16-byte aligned, else add_i64_unrolled
 * (another parameter layout, 44 bytes): the token's step comes in three
 * forms in a cycle of 4 tokens, at three places of the step whose phases
 * differ. Around them, two layers of float kernels on the hidden state, on
 * the legacy stream. Modes:
 *   sync         each token reads its new id back into pinned memory and
 *                synchronizes the stream (generate's stop check)
 *   readback N [switch]  no synchronization but every N tokens, where a
 *                read-back (a device-to-host copy of the newest id, then a
 *                synchronize) comes in the middle of a step: one op more
 *                there, which shifts the stream's step (issue 35: steps
 *                that shift); the adds always add_i64_vec4 (a static
 *                cache: nothing switches), or, with `switch`, chosen by
 *                alignment as above
 *   kept         as sync, but the ids grow by four (one alignment: the
 *                same kernels, other pointers) every third token, and by
 *                one more every twelfth (the kernels switch): the adds'
 *                arguments are kept for three tokens, then change, mostly
 *                with the same kernel (a value found again, then another
 *                of the same function: issue 36, versions.c)
 *   fresh        as sync, in phases of new values and values that come
 *                back (issue 36, exec.c: RP_VOL_FRESH): 40 tokens whose ids
 *                grow by one (the adds' values new at every token), 24
 *                whose first add reads another place of the position ids
 *                each token (its values differ in another word), 40 whose
 *                ids take two lengths in turn (two values that come back),
 *                26 that grow again, then one length (a value kept) but
 *                at token 132, which takes the length of token 121 again
 *                (with the engine's timing today, the adds' last value
 *                looked up before their versions went unasked, the first
 *                after they are asked again); 160 tokens go through them all
 * Prints a checksum of the ids and of the hidden state.
 * Usage: alignswitch MODULE TOKENS [sync|kept|fresh|readback N [switch]] */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 1024     /* hidden state */
#define PROMPT 9   /* ids before the first token: the forms' phases start off 4 */
#define WINDOW 4   /* elements each switching add reads */
#define NPOS 128   /* position ids (fresh mode reads from up to 4 * 24 in) */

static CUfunction f_add[3], f_axpy, f_scale;
static unsigned int grid;
static int switching = 1, kept, fresh;

/* The ids' length at token t. */
static size_t length_at(long t)
{
    if (fresh) {
        size_t n = (size_t)t;
        return PROMPT + (t < 40    ? n
                         : t < 64  ? 40
                         : t < 104 ? 40 + 4 * (n & 1)
                         : t < 130 ? n - 60
                         : t == 132 ? 61
                                    : 70);
    }
    return kept ? PROMPT + 4 * (size_t)(t / 3) + (size_t)(t / 12) : PROMPT + (size_t)t;
}

/* Where the first add reads the position ids at token t (elements in). */
static size_t pos_at(long t)
{
    return fresh && t >= 40 && t < 64 ? 4 * (size_t)(t - 39) : 0;
}

/* out[0..n) = a[0..n) + b[0..n) as a framework picks the kernel: by the
 * alignment of every pointer (device allocations are 256-byte aligned). */
static void add_i64(CUdeviceptr out, CUdeviceptr a, CUdeviceptr b, int32_t n)
{
    CUdeviceptr all = out | a | b;
    int k = !switching || all % 32 == 0 ? 0 : all % 16 == 0 ? 1 : 2;
    if (k < 2) {
        void *args[] = { &out, &a, &b, &n };
        CK(cuLaunchKernel, (f_add[k], 1, 1, 1, TK_BLOCK, 1, 1, 0, NULL, args, NULL));
    } else {
        tk_strides3 st = { { 1, 1, 1 } };
        void *args[] = { &n, &out, &a, &b, &st };
        CK(cuLaunchKernel, (f_add[2], 1, 1, 1, TK_BLOCK, 1, 1, 0, NULL, args, NULL));
    }
}

static void axpy(CUdeviceptr y, CUdeviceptr x, float a)
{
    int32_t n = N;
    void *args[] = { &y, &x, &a, &n };
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, NULL, args, NULL));
}

static void scale(CUdeviceptr x, uint32_t iter)
{
    int32_t n = N;
    float decay = 0.96875f, dt = 0.125f;
    void *args[] = { &x, &n, &decay, &dt, &iter };
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, NULL, args, NULL));
}

/* One layer of float kernels on the hidden state (weights fixed). */
static void layer(CUdeviceptr h, CUdeviceptr w, uint32_t which)
{
    scale(h, which);
    axpy(h, w, 0.0625f);
    scale(w, which + 1); /* the "weights" decay too: results depend on every launch */
    axpy(h, w, -0.03125f);
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[sync|kept|fresh|readback N [switch]]");
    long tokens = app_arg(argc, argv, 2, 0, 1, 100000);
    const char *mode = argc > 3 ? argv[3] : "sync";
    long every = 0;
    if (!strcmp(mode, "readback")) {
        every = app_arg(argc, argv, 4, 16, 2, 100000);
        switching = argc > 5 && !strcmp(argv[5], "switch");
        if (argc > 5 && !switching) {
            printf("error: bad argument %s (want switch)\n", argv[5]);
            return 2;
        }
    } else if (!strcmp(mode, "kept")) {
        kept = 1;
    } else if (!strcmp(mode, "fresh")) {
        fresh = 1;
    } else if (strcmp(mode, "sync")) {
        printf("error: bad mode %s (want sync, kept, fresh or readback N [switch])\n", mode);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    f_add[0] = app_function(mod, "add_i64_vec4");
    f_add[1] = app_function(mod, "add_i64_vec2");
    f_add[2] = app_function(mod, "add_i64_unrolled");
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    grid = app_blocks(N);

    size_t cap = 0;
    for (long t = 0; t <= tokens; t++)
        if (length_at(t) > cap)
            cap = length_at(t);
    cap += 1 + 2 * WINDOW;
    CUdeviceptr ids, pos, tmp, h, w[2];
    CK(cuMemAlloc, (&ids, cap * sizeof(int64_t)));
    CK(cuMemAlloc, (&pos, NPOS * sizeof(int64_t)));
    CK(cuMemAlloc, (&tmp, 64 * sizeof(int64_t)));
    CK(cuMemAlloc, (&h, N * sizeof(float)));
    CK(cuMemAlloc, (&w[0], N * sizeof(float)));
    CK(cuMemAlloc, (&w[1], N * sizeof(float)));
    int64_t *host_ids = calloc(cap, sizeof(int64_t));
    if (!host_ids)
        app_die("out of memory");
    for (size_t i = 0; i < cap; i++)
        host_ids[i] = (int64_t)(i < PROMPT ? 1000 + 7 * i : 0);
    int64_t host_pos[NPOS];
    for (int i = 0; i < NPOS; i++)
        host_pos[i] = 3 * i + 1;
    CK(cuMemcpyHtoD, (ids, host_ids, cap * sizeof(int64_t)));
    CK(cuMemcpyHtoD, (pos, host_pos, sizeof host_pos));
    CK(cuMemsetD32, (tmp, 0, 128));
    float hostf[N];
    for (int i = 0; i < N; i++)
        hostf[i] = (float)(i % 17) * 0.25f - 2.0f;
    CK(cuMemcpyHtoD, (h, hostf, sizeof hostf));
    for (int i = 0; i < N; i++)
        hostf[i] = (float)(i % 13) * -0.125f + 1.0f;
    CK(cuMemcpyHtoD, (w[0], hostf, sizeof hostf));
    CK(cuMemcpyHtoD, (w[1], hostf, sizeof hostf));
    int64_t *newest;
    CK(cuMemHostAlloc, ((void **)&newest, sizeof(int64_t), 0));
    CK(cuCtxSynchronize, ());

    uint64_t read = 0x5157;
    for (long t = 0; t < tokens; t++) {
        size_t len = length_at(t);
        CUdeviceptr view = ids + (len - WINDOW) * sizeof(int64_t);
        /* the position ids of the last WINDOW tokens, and a mask over them,
         * each from a view into the ids (their alignment cycles) */
        add_i64(tmp, view, pos + pos_at(t) * sizeof(int64_t), WINDOW);
        layer(h, w[0], 1);
        add_i64(tmp + 8 * sizeof(int64_t), view + sizeof(int64_t), tmp, WINDOW - 1);
        int mid = every && t % every == every / 2;
        if (mid) { /* the read-back, in the middle of the step */
            CK(cuMemcpyDtoHAsync, (newest, ids + (len - 1) * sizeof(int64_t), sizeof(int64_t),
                                   NULL));
            CK(cuStreamSynchronize, (NULL));
            read = app_hash_u64(read, (uint64_t)*newest);
        }
        layer(h, w[1], 2);
        /* the next id, written at the end of the ids (its pointer's
         * alignment cycles too) */
        add_i64(ids + len * sizeof(int64_t), tmp + 8 * sizeof(int64_t), pos + sizeof(int64_t), 1);
        if (!every) {
            CK(cuMemcpyDtoHAsync, (newest, ids + len * sizeof(int64_t), sizeof(int64_t), NULL));
            CK(cuStreamSynchronize, (NULL));
            read = app_hash_u64(read, (uint64_t)*newest);
        }
    }
    CK(cuCtxSynchronize, ());
    CK(cuMemcpyDtoH, (host_ids, ids, cap * sizeof(int64_t)));
    CK(cuMemcpyDtoH, (hostf, h, sizeof hostf));
    app_checksum("alignswitch-ids", app_hash(0x1d5, host_ids, cap * sizeof(int64_t)));
    app_checksum("alignswitch-hidden", app_hash(0x4d1, hostf, sizeof hostf));
    app_checksum("alignswitch-read", read);
    CK(cuMemFreeHost, (newest));
    free(host_ids);
    app_close(dev, mod);
    return 0;
}
