/* decode2 - a decode loop whose kernels switch as the KV cache grows (issue
 * 28, shape 3), on the legacy stream as PyTorch's generate() issues it. One
 * attention head of dimension D = 16 over a hidden state of H = 64; per
 * token, at position pos with len = pos + 1 cached entries:
 *   - q, k and v projections (gemv_n_small, fixed shapes);
 *   - the cache grown by the new k and v. With CACHE `cat` (the default:
 *     the dynamic cache generate() uses, grown by torch.cat) every token a
 *     new block takes the old cache (a cuMemcpyDtoDAsync of len - 1
 *     entries) and the new entry (another), and the old block goes back to
 *     the caching allocator, which hands blocks out by size class (512
 *     bytes, 8 entries here): within a class the cache alternates between
 *     two blocks, and moves to new ones every 8 tokens, so the cache's
 *     address in every op that reads it changes every token. With `static`
 *     the cache is one buffer of capacity PROMPT + TOKENS, the entry copied
 *     in at pos;
 *   - the scores over the cache, a gemv of len rows whose FUNCTION the
 *     library picks by size, as cuBLAS picks another gemv at some lengths:
 *     gemv_n_small (32-thread blocks) below 48 rows, gemv_n_large (128)
 *     from 48 on; the grid grows with len;
 *   - the softmax over len scores, another FUNCTION per length bucket, as a
 *     framework's softmax template is specialised by size: softmax_16 up to
 *     16, softmax_32 up to 32, softmax_64 up to 64, softmax_128 up to 128,
 *     softmax_block beyond;
 *   - the probabilities applied to the cached values (gemv_t, len rows);
 *   - the output projection through cuLaunchKernelEx with
 *     CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1, as cuBLASLt
 *     launches some GEMMs;
 *   - a residual axpy, an MLP-like scale_add_scalar, stencil3 and axpy;
 *   - the "logits": a cuMemsetD8Async of a sum and checksum_u64 over the
 *     hidden state, read back every token as .item() does (cuMemcpyDtoHAsync
 *     into pageable memory, cuStreamSynchronize: generate()'s stopping
 *     check); the next token's input stays on the device, as it does there.
 * 18 ops a token with `cat`, 16 with `static`. Before every launch, copy and
 * memset, 5 to HOSTUS microseconds (default 40) of host time (a busy wait
 * on the clock, from a fixed-seed generator). With PROMPT 8 (the default)
 * 100 tokens reach len 108: the softmax switches at len 17, 33 and 65, the
 * gemv at 48; 300 tokens also cross 128. REQUESTS (default 1) generations
 * run one after the other, each from the same prompt (its cache entries and
 * the hidden state filled again): the length buckets come back.
 * Prints checksums of the values read back, the cache and the hidden state.
 * Usage: decode2 MODULE TOKENS [PROMPT [REQUESTS [cat|static [HOSTUS]]]] */
#include <cuda.h>

#include "appcommon.h"

#define H 64
#define D 16
#define GEMV_LARGE_FROM 48
#define CLASS_BYTES 512     /* the caching allocator's rounding */

static long g_host_us;
static uint64_t g_rng = 0x6465636f6465ull;

static unsigned int ceil_div(long n, long d) { return (unsigned int)((n + d - 1) / d); }

static void host_time(void)
{
    if (g_host_us > 0)
        app_spin_us(app_rand_in(&g_rng, 5, g_host_us));
}

/* The caching allocator's block for a cache of `len` entries (`cat`): size
 * class c = ceil(len * D floats / CLASS_BYTES) holds two blocks, at
 * CLASS_BYTES * c * (c - 1) + p * CLASS_BYTES * c in the arena. */
static long cache_class(long len) { return (len * D * (long)sizeof(float) + CLASS_BYTES - 1) / CLASS_BYTES; }
static CUdeviceptr cache_block(CUdeviceptr arena, long c, int p)
{
    return arena + (size_t)(CLASS_BYTES * c * (c - 1) + p * CLASS_BYTES * c);
}

static void launch(CUfunction f, unsigned int grid, unsigned int block, void **args)
{
    host_time();
    CK(cuLaunchKernel, (f, grid, 1, 1, block, 1, 1, 0, 0, args, NULL));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[PROMPT [REQUESTS [cat|static [HOSTUS]]]]");
    long tokens = app_arg(argc, argv, 2, 0, 0, 100000);
    long prompt = app_arg(argc, argv, 3, 8, 1, 100000);
    long requests = app_arg(argc, argv, 4, 1, 1, 1000);
    const char *cache = argc > 5 ? argv[5] : "cat";
    int cat = !strcmp(cache, "cat");
    if (!cat && strcmp(cache, "static") != 0) {
        printf("error: bad cache %s (want cat or static)\n", cache);
        return 2;
    }
    g_host_us = app_arg(argc, argv, 6, 40, 0, 100000);
    if (g_host_us > 0 && g_host_us < 5)
        g_host_us = 5;
    long cap = prompt + tokens;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    CUfunction f_small = app_function(mod, "gemv_n_small"), f_large = app_function(mod, "gemv_n_large"),
               f_t = app_function(mod, "gemv_t"), f_axpy = app_function(mod, "axpy"),
               f_scale = app_function(mod, "scale_add_scalar"), f_stencil = app_function(mod, "stencil3"),
               f_checksum = app_function(mod, "checksum_u64"), f_iota = app_function(mod, "iota_f32");
    CUfunction f_softmax[5];
    static const char *const softmax_names[] = { "softmax_16", "softmax_32", "softmax_64",
                                                 "softmax_128", "softmax_block" };
    for (int i = 0; i < 5; i++)
        f_softmax[i] = app_function(mod, softmax_names[i]);

    /* Weights (row-major), the cache, and the per-token buffers. */
    CUdeviceptr wq, wk, wv, wo, kc, vc, q, kt, vt, scores, probs, ctxv, h, h2, sum;
    CK(cuMemAlloc, (&wq, D * H * sizeof(float)));
    CK(cuMemAlloc, (&wk, D * H * sizeof(float)));
    CK(cuMemAlloc, (&wv, D * H * sizeof(float)));
    CK(cuMemAlloc, (&wo, H * D * sizeof(float)));
    /* static: the cache itself; cat: the arena its blocks are carved from */
    long cmax = cache_class(cap);
    size_t cache_bytes = cat ? (size_t)(CLASS_BYTES * cmax * (cmax + 1)) : (size_t)cap * D * sizeof(float);
    CK(cuMemAlloc, (&kc, cache_bytes));
    CK(cuMemAlloc, (&vc, cache_bytes));
    CUdeviceptr kcur = kc, vcur = vc;
    CK(cuMemAlloc, (&q, D * sizeof(float)));
    CK(cuMemAlloc, (&kt, D * sizeof(float)));
    CK(cuMemAlloc, (&vt, D * sizeof(float)));
    CK(cuMemAlloc, (&scores, (size_t)cap * sizeof(float)));
    CK(cuMemAlloc, (&probs, (size_t)cap * sizeof(float)));
    CK(cuMemAlloc, (&ctxv, D * sizeof(float)));
    CK(cuMemAlloc, (&h, H * sizeof(float)));
    CK(cuMemAlloc, (&h2, H * sizeof(float)));
    CK(cuMemAlloc, (&sum, sizeof(uint64_t)));
    {
        CUdeviceptr ws[] = { wq, wk, wv, wo };
        int32_t nw = D * H;
        for (int i = 0; i < 4; i++) {
            float sc = 0.00005f * (float)(i + 1), base = -0.05f + 0.02f * (float)i;
            void *a[] = { &ws[i], &nw, &sc, &base };
            CK(cuLaunchKernel, (f_iota, ceil_div(nw, TK_BLOCK), 1, 1, TK_BLOCK, 1, 1, 0, 0, a, NULL));
        }
    }

    int32_t nh = H, nd = D, ncache = (int32_t)(prompt * D);
    float one = 1.0f, eighth = 0.125f, quarter_s = 0.25f, half = 0.5f, mquarter = -0.25f;
    float decay = 0.9375f, dt = 0.0625f, wl = 0.25f, wc = 0.5f, wr = 0.25f;
    uint32_t mlp_iter = 3;
    uint64_t seed = 0xdec0de2ull, seen = 0x746f6b656eull;
    CUlaunchAttribute pss;
    memset(&pss, 0, sizeof pss);
    pss.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    pss.value.programmaticStreamSerializationAllowed = 1;

    for (long r = 0; r < requests; r++) {
        /* The prompt (prefill): its cache entries and the hidden state. */
        float ks = 0.001f, kb = -0.25f, vs = -0.0007f, vb = 0.3f, hs = 0.01f, hb = -0.3f;
        long cls = cache_class(prompt);
        int parity = 0;
        if (cat)
            kcur = cache_block(kc, cls, 0), vcur = cache_block(vc, cls, 0);
        void *ka[] = { &kcur, &ncache, &ks, &kb };
        void *va[] = { &vcur, &ncache, &vs, &vb };
        void *ha[] = { &h, &nh, &hs, &hb };
        launch(f_iota, ceil_div(ncache, TK_BLOCK), TK_BLOCK, ka);
        launch(f_iota, ceil_div(ncache, TK_BLOCK), TK_BLOCK, va);
        launch(f_iota, 1, TK_BLOCK, ha);

        for (long t = 0; t < tokens; t++) {
            long pos = prompt + t;
            int32_t len = (int32_t)(pos + 1);
            void *qa[] = { &q, &wq, &h, &nd, &nh, &eighth };
            void *kpa[] = { &kt, &wk, &h, &nd, &nh, &eighth };
            void *vpa[] = { &vt, &wv, &h, &nd, &nh, &eighth };
            launch(f_small, 1, 32, qa);
            launch(f_small, 1, 32, kpa);
            size_t row = D * sizeof(float);
            if (cat) {  /* torch.cat: a new block takes the old cache, then the entry */
                long c = cache_class(len);
                parity = c == cls ? 1 - parity : 0;
                cls = c;
                CUdeviceptr knew = cache_block(kc, cls, parity), vnew = cache_block(vc, cls, parity);
                host_time();
                CK(cuMemcpyDtoDAsync, (knew, kcur, (size_t)pos * row, 0));
                host_time();
                CK(cuMemcpyDtoDAsync, (vnew, vcur, (size_t)pos * row, 0));
                kcur = knew, vcur = vnew;
            }
            host_time();
            CK(cuMemcpyDtoDAsync, (kcur + (size_t)pos * row, kt, row, 0));
            launch(f_small, 1, 32, vpa);
            host_time();
            CK(cuMemcpyDtoDAsync, (vcur + (size_t)pos * row, vt, row, 0));

            void *sa[] = { &scores, &kcur, &q, &len, &nd, &quarter_s };
            if (len < GEMV_LARGE_FROM)
                launch(f_small, ceil_div(len, 32), 32, sa);
            else
                launch(f_large, ceil_div(len, 128), 128, sa);
            int bucket = len <= 16 ? 0 : len <= 32 ? 1 : len <= 64 ? 2 : len <= 128 ? 3 : 4;
            void *pa[] = { &probs, &scores, &len };
            launch(f_softmax[bucket], 1, bucket < 4 ? 32 : 128, pa);
            void *ca[] = { &ctxv, &vcur, &probs, &len, &nd, &one };
            launch(f_t, 1, 32, ca);

            /* the output projection, as cuBLASLt launches it */
            void *oa[] = { &h2, &wo, &ctxv, &nh, &nd, &one };
            CUlaunchConfig c;
            memset(&c, 0, sizeof c);
            c.gridDimX = c.gridDimY = c.gridDimZ = 1;
            c.blockDimX = 64, c.blockDimY = c.blockDimZ = 1;
            c.hStream = 0;
            c.attrs = &pss, c.numAttrs = 1;
            host_time();
            CK(cuLaunchKernelEx, (&c, f_small, oa, NULL));

            void *ra[] = { &h, &h2, &half, &nh };
            void *ma[] = { &h, &nh, &decay, &dt, &mlp_iter };
            void *ta[] = { &h2, &h, &nh, &wl, &wc, &wr };
            void *da[] = { &h, &h2, &mquarter, &nh };
            launch(f_axpy, 1, TK_BLOCK, ra);
            launch(f_scale, 1, TK_BLOCK, ma);
            launch(f_stencil, 1, TK_BLOCK, ta);
            launch(f_axpy, 1, TK_BLOCK, da);

            host_time();
            CK(cuMemsetD8Async, (sum, 0, sizeof(uint64_t), 0));
            void *la[] = { &sum, &h, &nh, &seed };
            launch(f_checksum, 1, TK_BLOCK, la);
            uint64_t v;     /* .item(): pageable memory, then the stream synchronized */
            host_time();
            CK(cuMemcpyDtoHAsync, (&v, sum, sizeof v, 0));
            CK(cuStreamSynchronize, (0));
            seen = app_hash_u64(seen, v);
        }
    }
    app_checksum("decode2-tokens", seen);

    size_t cb = (size_t)cap * D * sizeof(float);
    float *hk = malloc(cb > H * sizeof(float) ? cb : H * sizeof(float));
    if (hk == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (hk, kcur, cb));
    uint64_t ch = app_hash(0x6b76ull, hk, cb);
    CK(cuMemcpyDtoH, (hk, vcur, cb));
    app_checksum("decode2-cache", app_hash(ch, hk, cb));
    CK(cuMemcpyDtoH, (hk, h, H * sizeof(float)));
    app_checksum("decode2-hidden", app_hash(0x68ull, hk, H * sizeof(float)));
    free(hk);

    CUdeviceptr all[] = { wq, wk, wv, wo, kc, vc, q, kt, vt, scores, probs, ctxv, h, h2, sum };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CK(cuMemFree, (all[i]));
    app_close(dev, mod);
    return 0;
}
