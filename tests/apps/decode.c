/* decode - a loop shaped like token-by-token generation (issue 17). Each step
 * (token) on a created stream: the KV-cache append (a one-float copy from
 * the hidden state, at the previous token, into the cache at the new
 * position), an attention-like part over the context so
 * far (the cache copied into a scores buffer, a grid-stride kernel over
 * `len` scores with grid = ceil(len/128) blocks and the previous token as an
 * argument, a memset of the sum and a checksum kernel over the scores), a
 * fixed MLP part (three kernels of fixed shapes and arguments on the hidden
 * state), and the token read back (an asynchronous copy into pinned memory
 * and a synchronize) whose value is the next step's argument, as greedy
 * decoding feeds each token to the next step. len = PROMPT + step + 1: the
 * grid, the length argument and the scores copy's size grow every step.
 * With `static`, the cache is static: every shape is fixed at its capacity
 * (PROMPT + TOKENS) and the position (the append's address and a kernel
 * argument) changes every step. Deterministic: floats are only scaled and
 * added element by element, and the checksum's sum does not depend on the
 * order blocks run in.
 * Usage: decode MODULE TOKENS [PROMPT [static]]   (PROMPT default 64) */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define HIDDEN 512u

static unsigned int blocks_for(long n) { return (unsigned int)((n + (long)TK_BLOCK - 1) / (long)TK_BLOCK); }

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODULE TOKENS [PROMPT [static]]\n", argc > 0 ? argv[0] : "decode");
        return 2;
    }
    long tokens = app_arg(argc, argv, 2, 0, 0, 100000);
    long prompt = app_arg(argc, argv, 3, 64, 1, 100000);
    int is_static = argc > 4 && strcmp(argv[4], "static") == 0;
    if (argc > 4 && !is_static)
        app_die("the fourth argument must be `static`");
    long cap = prompt + tokens;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_axpy, f_checksum, f_iota;
    CUstream s;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(cuCtxSetCurrent, (ctx));
    CK(cuModuleLoad, (&mod, argv[1]));
    CK(cuModuleGetFunction, (&f_scale, mod, "scale_add_scalar"));
    CK(cuModuleGetFunction, (&f_axpy, mod, "axpy"));
    CK(cuModuleGetFunction, (&f_checksum, mod, "checksum_u64"));
    CK(cuModuleGetFunction, (&f_iota, mod, "iota_f32"));
    CK(cuStreamCreate, (&s, 0));

    /* kv: the cache, one float per position; scores: what attention reads;
     * h, h2: the hidden state and the MLP's intermediate. */
    CUdeviceptr kv, scores, h, h2, sum;
    CK(cuMemAlloc, (&kv, (size_t)cap * sizeof(float)));
    CK(cuMemAlloc, (&scores, (size_t)cap * sizeof(float)));
    CK(cuMemAlloc, (&h, HIDDEN * sizeof(float)));
    CK(cuMemAlloc, (&h2, HIDDEN * sizeof(float)));
    CK(cuMemAlloc, (&sum, sizeof(uint64_t)));
    CK(cuMemsetD8, (kv, 0, (size_t)cap * sizeof(float)));
    CK(cuMemsetD8, (scores, 0, (size_t)cap * sizeof(float)));
    uint64_t *hsum;
    CK(cuMemHostAlloc, ((void **)&hsum, sizeof(uint64_t), 0));

    /* The prompt: its cache positions and the hidden state, filled once. */
    int32_t nprompt = (int32_t)prompt, nhidden = (int32_t)HIDDEN;
    float kscale = 0.015625f, kbase = 0.5f, hscale = 0.0078125f, hbase = -1.0f;
    void *kv_args[] = { &kv, &nprompt, &kscale, &kbase };
    void *h_args[] = { &h, &nhidden, &hscale, &hbase };
    CK(cuLaunchKernel, (f_iota, blocks_for(prompt), 1, 1, TK_BLOCK, 1, 1, 0, s, kv_args, NULL));
    CK(cuLaunchKernel, (f_iota, blocks_for(HIDDEN), 1, 1, TK_BLOCK, 1, 1, 0, s, h_args, NULL));

    uint64_t acc = 0x6465636f6465ull, seed = 0xdec0deull;
    uint32_t token = 1;
    float decay = 0.9375f, dt = 0.0625f, half = 0.5f, quarter = -0.25f, mdecay = 0.96875f, mdt = 0.125f;
    uint32_t mlp_iter = 3;
    for (long t = 0; t < tokens; t++) {
        long pos = prompt + t;              /* where this step's entry goes */
        int32_t len = (int32_t)(pos + 1);   /* the context attention reads */
        int32_t n = is_static ? (int32_t)cap : len;
        unsigned int grid = blocks_for(n);
        /* static: the position is the argument; dynamic: the token is */
        uint32_t iter = is_static ? token + (uint32_t)pos : token;
        void *attn_args[] = { &scores, &n, &decay, &dt, &iter };
        void *ck_args[] = { &sum, &scores, &n, &seed };
        void *up_args[] = { &h2, &h, &half, &nhidden };
        void *act_args[] = { &h2, &nhidden, &mdecay, &mdt, &mlp_iter };
        void *down_args[] = { &h, &h2, &quarter, &nhidden };

        CK(cuMemcpyDtoDAsync, (kv + (size_t)pos * sizeof(float), h + (size_t)(token % HIDDEN) * sizeof(float),
                               sizeof(float), s));
        CK(cuMemcpyDtoDAsync, (scores, kv, (size_t)n * sizeof(float), s));
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, attn_args, NULL));
        CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), s));
        CK(cuLaunchKernel, (f_checksum, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ck_args, NULL));
        CK(cuLaunchKernel, (f_axpy, blocks_for(HIDDEN), 1, 1, TK_BLOCK, 1, 1, 0, s, up_args, NULL));
        CK(cuLaunchKernel, (f_scale, blocks_for(HIDDEN), 1, 1, TK_BLOCK, 1, 1, 0, s, act_args, NULL));
        CK(cuLaunchKernel, (f_axpy, blocks_for(HIDDEN), 1, 1, TK_BLOCK, 1, 1, 0, s, down_args, NULL));
        CK(cuMemcpyDtoHAsync, (hsum, sum, sizeof(uint64_t), s));
        CK(cuStreamSynchronize, (s));
        token = (uint32_t)(*hsum >> 40) % 50257u;  /* greedy: the next step's input */
        acc = app_hash_u64(acc, token);
    }
    app_checksum("decode-tokens", acc);

    size_t kvb = (size_t)cap * sizeof(float);
    float *hk = malloc(kvb > HIDDEN * sizeof(float) ? kvb : HIDDEN * sizeof(float));
    if (hk == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (hk, kv, kvb));
    app_checksum("decode-cache", app_hash(0, hk, kvb));
    CK(cuMemcpyDtoH, (hk, h, HIDDEN * sizeof(float)));
    app_checksum("decode-hidden", app_hash(0, hk, HIDDEN * sizeof(float)));
    free(hk);

    CK(cuMemFreeHost, (hsum));
    CK(cuMemFree, (kv));
    CK(cuMemFree, (scores));
    CK(cuMemFree, (h));
    CK(cuMemFree, (h2));
    CK(cuMemFree, (sum));
    CK(cuStreamDestroy, (s));
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
