/* kernelcheck - runs every test kernel on inputs that exercise the
 * grid-stride loops and edge cases, and requires the exact bits of a host
 * reference that does the same operations in the same order. On the CPU
 * driver it checks the C kernels and the driver; on a GPU, the cubin: equal
 * to the reference on both means CPU and GPU give the same bits.
 * Usage: kernelcheck MODULE ITERS   (ITERS: repetitions of the whole check) */
#include <cuda.h>

#include "appcommon.h"

#define N 1000          /* not a multiple of the block */
#define GRID 3u         /* 384 threads: every thread loops */

static CUmodule mod;
static CUstream s;

static CUfunction fn(const char *name)
{
    CUfunction f;
    CK(cuModuleGetFunction, (&f, mod, name));
    return f;
}

static void launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int bx,
                   unsigned int by, unsigned int shared, void **args)
{
    CK(cuLaunchKernel, (f, gx, gy, 1, bx, by, 1, shared, s, args, NULL));
    CK(cuStreamSynchronize, (s));
}

static void expect(const char *kernel, const void *got, const void *want, size_t bytes,
                   uint64_t *h)
{
    if (memcmp(got, want, bytes) != 0) {
        const unsigned char *g = got, *w = want;
        size_t i = 0;
        while (g[i] == w[i])
            i++;
        printf("error: %s differs from the host reference at byte %zu\n", kernel, i);
        exit(1);
    }
    *h = app_hash(*h, got, bytes);
}

static void down(void *h, CUdeviceptr d, size_t bytes)
{
    CK(cuMemcpyDtoH, (h, d, bytes));
}

static void up(CUdeviceptr d, const void *h, size_t bytes)
{
    CK(cuMemcpyHtoD, (d, h, bytes));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "");
    long reps = app_arg(argc, argv, 2, 1, 0, 1000000);

    CUdevice dev;
    CUcontext ctx;
    app_open(argv[1], &dev, &ctx, &mod);
    /* A blocking stream: the synchronous copies run on the legacy stream,
     * and a non-blocking stream would not be ordered after them. */
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));

    static float x[N], y[N], ref[N], got[N];
    static uint32_t u[N], uref[N], ugot[N];
    CUdeviceptr dx, dy, du, dw;
    size_t fb = sizeof x, ub = sizeof u;
    CK(cuMemAlloc, (&dx, fb));
    CK(cuMemAlloc, (&dy, fb));
    CK(cuMemAlloc, (&du, ub));
    CK(cuMemAlloc, (&dw, 64 * sizeof(uint64_t)));
    int32_t n = N;
    uint64_t all = 0x4b434b;

    for (long rep = 0; rep < (reps > 0 ? reps : 1); rep++) {
        for (int i = 0; i < N; i++) {
            x[i] = (float)((i * 37) % 101) * 0.37f - 11.0f;
            y[i] = (float)((i * 53) % 97) * -0.21f + 3.0f;
        }

        /* iota_f32 */
        float sc = 0.3f, base = -7.5f;
        void *a_iota[] = { &dx, &n, &sc, &base };
        launch(fn("iota_f32"), GRID, 1, TK_BLOCK, 1, 0, a_iota);
        for (int i = 0; i < N; i++) {
            float v = (float)i * sc;
            ref[i] = v + base;
        }
        down(got, dx, fb);
        expect("iota_f32", got, ref, fb, &all);

        /* stencil3 */
        float wl = 0.3f, wc = 0.45f, wr = 0.25f;
        up(dx, x, fb);
        void *a_st[] = { &dy, &dx, &n, &wl, &wc, &wr };
        launch(fn("stencil3"), GRID, 1, TK_BLOCK, 1, 0, a_st);
        for (int i = 0; i < N; i++) {
            if (i == 0 || i == N - 1) {
                ref[i] = x[i];
            } else {
                float l = wl * x[i - 1], c = wc * x[i], r = wr * x[i + 1];
                float t = l + c;
                ref[i] = t + r;
            }
        }
        down(got, dy, fb);
        expect("stencil3", got, ref, fb, &all);

        /* axpy */
        float aa = -1.7f;
        up(dx, x, fb);
        up(dy, y, fb);
        void *a_ax[] = { &dy, &dx, &aa, &n };
        launch(fn("axpy"), GRID, 1, TK_BLOCK, 1, 0, a_ax);
        for (int i = 0; i < N; i++) {
            float ax = aa * x[i];
            ref[i] = ax + y[i];
        }
        down(got, dy, fb);
        expect("axpy", got, ref, fb, &all);

        /* scale_add_scalar */
        float decay = 0.93f, dt = 0.013f;
        uint32_t iter = 0xFFFFFFF0u + (uint32_t)rep;   /* wraps inside the kernel */
        up(dx, x, fb);
        void *a_sc[] = { &dx, &n, &decay, &dt, &iter };
        launch(fn("scale_add_scalar"), GRID, 1, TK_BLOCK, 1, 0, a_sc);
        for (int i = 0; i < N; i++) {
            float k = (float)((iter + (uint32_t)i) % 7u);
            float xd = x[i] * decay, kd = dt * k;
            ref[i] = xd + kd;
        }
        down(got, dx, fb);
        expect("scale_add_scalar", got, ref, fb, &all);

        /* rng_fill: a 64-bit offset above 2^32 */
        uint64_t seed = 0xABCDEF0123456789ull, offset = 0x100000000ull * 3 + 17;
        void *a_rng[] = { &du, &n, &seed, &offset };
        launch(fn("rng_fill"), GRID, 1, TK_BLOCK, 1, 0, a_rng);
        for (int i = 0; i < N; i++)
            uref[i] = tk_rng_word(seed, offset + (uint64_t)i);
        down(ugot, du, ub);
        expect("rng_fill", ugot, uref, ub, &all);

        /* add_noise (noise from rng_fill above) */
        float ns = 0.75f;
        up(dx, x, fb);
        void *a_an[] = { &dx, &du, &n, &ns };
        launch(fn("add_noise"), GRID, 1, TK_BLOCK, 1, 0, a_an);
        for (int i = 0; i < N; i++) {
            float uu = (float)(uref[i] >> 8), f = uu * 0x1p-24f, c = f - 0.5f, d = ns * c;
            ref[i] = x[i] + d;
        }
        down(got, dx, fb);
        expect("add_noise", got, ref, fb, &all);

        /* reduce_sum_u64 + reduce_finalize_u64 (dynamic shared memory) */
        unsigned int rb = 5;
        void *a_rs[] = { &dw, &du, &n };
        launch(fn("reduce_sum_u64"), rb, 1, 64, 1, 64 * sizeof(uint64_t), a_rs);
        CUdeviceptr dtot = dw + 32 * sizeof(uint64_t);
        int32_t np = (int32_t)rb;
        void *a_rf[] = { &dtot, &dw, &np };
        launch(fn("reduce_finalize_u64"), 1, 1, 1, 1, 0, a_rf);
        uint64_t total = 0, want = 0;
        for (int i = 0; i < N; i++)
            want += uref[i];
        down(&total, dtot, sizeof total);
        expect("reduce_sum_u64", &total, &want, sizeof total, &all);

        /* checksum_u64: atomics across blocks */
        uint64_t cseed = 99, csum = 0, cwant = 0;
        CK(cuMemsetD8, (dtot, 0, sizeof(uint64_t)));
        void *a_ck[] = { &dtot, &du, &n, &cseed };
        launch(fn("checksum_u64"), GRID, 1, TK_BLOCK, 1, 0, a_ck);
        for (int i = 0; i < N; i++)
            cwant += tk_word_hash(cseed, (uint64_t)i, uref[i]);
        down(&csum, dtot, sizeof csum);
        expect("checksum_u64", &csum, &cwant, sizeof csum, &all);

        /* boundary_apply */
        float bv[2] = { 42.5f, -3.25f };
        CUdeviceptr db = dw;
        up(db, bv, sizeof bv);
        up(dx, x, fb);
        void *a_ba[] = { &dx, &n, &db };
        launch(fn("boundary_apply"), 2, 1, 4, 1, 0, a_ba);
        memcpy(ref, x, fb);
        ref[0] = bv[0];
        ref[N - 1] = bv[1];
        down(got, dx, fb);
        expect("boundary_apply", got, ref, fb, &all);

        /* jacobi2d: 30 x 20 interior, pitch 35, both boundary modes */
        tk_grid2d g = { 30, 20, 35, 0.19f };
        size_t cells = 35 * 22;
        for (int32_t fixed = 0; fixed <= 1; fixed++) {
            up(dx, x, cells * sizeof(float));
            up(dy, y, cells * sizeof(float));   /* dst: the padding must stay */
            CUdeviceptr drhs = dx + 100 * sizeof(float);   /* overlapping src is read only */
            void *a_j[] = { &dy, &dx, &drhs, &fixed, &g };
            launch(fn("jacobi2d"), 3, 2, 16, 16, 0, a_j);
            memcpy(ref, y, cells * sizeof(float));
            const float *rhs = x + 100;
            for (uint32_t yy = 0; yy < g.ny + 2; yy++) {
                for (uint32_t xx = 0; xx < g.nx + 2; xx++) {
                    size_t i = yy * g.pitch + xx;
                    if (xx == 0 || yy == 0 || xx == g.nx + 1 || yy == g.ny + 1) {
                        ref[i] = fixed ? x[i] : 0.0f;
                    } else {
                        float t = x[i - 1] + x[i + 1];
                        t = t + x[i - g.pitch];
                        t = t + x[i + g.pitch];
                        t = t + rhs[i];
                        ref[i] = t * g.weight;
                    }
                }
            }
            down(got, dy, cells * sizeof(float));
            expect("jacobi2d", got, ref, cells * sizeof(float), &all);
        }

        /* the softmax of each length bucket, given all N elements: softmax_K
         * reads and writes the first K only, the rest of out is left as it was */
        static const char *const smax[] = { "softmax_16", "softmax_32", "softmax_64",
                                            "softmax_128", "softmax_block" };
        static const int32_t slimit[] = { 16, 32, 64, 128, N };
        for (int k = 0; k < 5; k++) {
            up(dx, x, fb);
            up(dy, y, fb);
            void *a_sm[] = { &dy, &dx, &n };
            launch(fn(smax[k]), GRID, 1, TK_BLOCK, 1, 0, a_sm);
            memcpy(ref, y, fb);
            float sum = 0.0f;
            for (int32_t i = 0; i < slimit[k]; i++) {
                float w = x[i] * x[i];
                float e = w + 1.0f;
                sum = sum + e;
            }
            for (int32_t i = 0; i < slimit[k]; i++) {
                float w = x[i] * x[i];
                float e = w + 1.0f;
                ref[i] = e / sum;
            }
            down(got, dy, fb);
            expect(smax[k], got, ref, fb, &all);
        }

        /* gemv_n_small, gemv_n_large (A 40 x 25 from x, the vector from y)
         * and gemv_t (the same A, a vector of 40): more rows than threads */
        int32_t rows = 40, cols = 25;
        float alpha = -0.75f;
        static const char *const gemvs[] = { "gemv_n_small", "gemv_n_large", "gemv_t" };
        for (int k = 0; k < 3; k++) {
            int trans = k == 2;
            up(dx, x, fb);
            up(dw, y, (size_t)rows * sizeof(float));
            up(dy, y, fb);
            void *a_gv[] = { &dy, &dx, &dw, &rows, &cols, &alpha };
            launch(fn(gemvs[k]), 1, 1, 16, 1, 0, a_gv);
            memcpy(ref, y, fb);
            for (int32_t o = 0; o < (trans ? cols : rows); o++) {
                float acc = 0.0f;
                for (int32_t i = 0; i < (trans ? rows : cols); i++) {
                    float m = trans ? x[i * cols + o] * y[i] : x[o * cols + i] * y[i];
                    acc = acc + m;
                }
                ref[o] = alpha * acc;
            }
            down(got, dy, fb);
            expect(gemvs[k], got, ref, fb, &all);
        }

        /* add_i64_vec4, add_i64_vec2, add_i64_unrolled: int64 sums, from x's
         * and y's bits read as integers */
        static const char *const adds[] = { "add_i64_vec4", "add_i64_vec2", "add_i64_unrolled" };
        int32_t nn = N / 2;
        for (int k = 0; k < 3; k++) {
            up(dx, x, fb);
            up(du, y, fb);
            up(dy, y, fb);
            tk_strides3 st = { { 1, 1, 1 } };
            void *a_v[] = { &dy, &dx, &du, &nn };
            void *a_u[] = { &nn, &dy, &dx, &du, &st };
            launch(fn(adds[k]), GRID, 1, TK_BLOCK, 1, 0, k == 2 ? a_u : a_v);
            int64_t xi[N / 2], yi[N / 2], ri[N / 2];
            memcpy(xi, x, sizeof xi);
            memcpy(yi, y, sizeof yi);
            for (int32_t i = 0; i < nn; i++)
                ri[i] = (int64_t)((uint64_t)xi[i] + (uint64_t)yi[i]);
            memcpy(ref, y, fb);
            memcpy(ref, ri, sizeof ri);
            down(got, dy, fb);
            expect(adds[k], got, ref, fb, &all);
        }
    }
    app_checksum("kernelcheck-all", all);

    CK(cuMemFree, (dx));
    CK(cuMemFree, (dy));
    CK(cuMemFree, (du));
    CK(cuMemFree, (dw));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
