/* kernels.c - the test kernels as a CPU driver module (libtestkernels.so):
 * the same names, parameters and results as kernels.cu, written against
 * cpukernel.h. Floating point is rounded after every operation (built with
 * -ffp-contract=off; kernels.cu uses __fmul_rn/__fadd_rn) so both give the
 * same bits, and no result depends on the order blocks run in. */
#include <stddef.h>
#include <stdint.h>

#include "cpukernel.h"
#include "testkernels.h"

/* Global 1-D thread index and grid stride, as threadIdx/blockIdx give them. */
#define GID(b, tx) ((uint64_t)(b)->blockIdx.x * (b)->blockDim.x + (tx))
#define GSTRIDE(b) ((uint64_t)(b)->gridDim.x * (b)->blockDim.x)

static void k_stencil3(const cpuk_block *b, void *const *p)
{
    float *out = CPUK_ARG(p, 0, float *);
    const float *in = CPUK_ARG(p, 1, const float *);
    int32_t n = CPUK_ARG(p, 2, int32_t);
    float wl = CPUK_ARG(p, 3, float), wc = CPUK_ARG(p, 4, float), wr = CPUK_ARG(p, 5, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b)) {
            if (i == 0 || i == (uint64_t)n - 1) {
                out[i] = in[i];
            } else {
                float l = wl * in[i - 1];
                float c = wc * in[i];
                float r = wr * in[i + 1];
                float s = l + c;
                out[i] = s + r;
            }
        }
    }
}

static void k_axpy(const cpuk_block *b, void *const *p)
{
    float *y = CPUK_ARG(p, 0, float *);
    const float *x = CPUK_ARG(p, 1, const float *);
    float a = CPUK_ARG(p, 2, float);
    int32_t n = CPUK_ARG(p, 3, int32_t);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b)) {
            float ax = a * x[i];
            y[i] = ax + y[i];
        }
    }
}

/* tk::scale_inplace<float>: the C++ template kernel of kernels.cu, under
 * its mangled name (TK_SCALE_INPLACE_NAME). */
static void k_scale_inplace(const cpuk_block *b, void *const *p)
{
    float *x = CPUK_ARG(p, 0, float *);
    int32_t n = CPUK_ARG(p, 1, int32_t);
    float a = CPUK_ARG(p, 2, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b))
            x[i] = x[i] * a;
    }
}

static void k_scale_add_scalar(const cpuk_block *b, void *const *p)
{
    float *x = CPUK_ARG(p, 0, float *);
    int32_t n = CPUK_ARG(p, 1, int32_t);
    float decay = CPUK_ARG(p, 2, float), dt = CPUK_ARG(p, 3, float);
    uint32_t iter = CPUK_ARG(p, 4, uint32_t);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b)) {
            float k = (float)((iter + (uint32_t)i) % 7u);
            float xd = x[i] * decay;
            float kd = dt * k;
            x[i] = xd + kd;
        }
    }
}

static void k_rng_fill(const cpuk_block *b, void *const *p)
{
    uint32_t *out = CPUK_ARG(p, 0, uint32_t *);
    int32_t n = CPUK_ARG(p, 1, int32_t);
    uint64_t seed = CPUK_ARG(p, 2, uint64_t), offset = CPUK_ARG(p, 3, uint64_t);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b))
            out[i] = tk_rng_word(seed, offset + i);
    }
}

static void k_add_noise(const cpuk_block *b, void *const *p)
{
    float *x = CPUK_ARG(p, 0, float *);
    const uint32_t *noise = CPUK_ARG(p, 1, const uint32_t *);
    int32_t n = CPUK_ARG(p, 2, int32_t);
    float scale = CPUK_ARG(p, 3, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b)) {
            float u = (float)(noise[i] >> 8);      /* exact: < 2^24 */
            float f = u * 0x1p-24f;                /* exact: power of two */
            float c = f - 0.5f;
            float d = scale * c;
            x[i] = x[i] + d;
        }
    }
}

/* Per-block partial sums through dynamic shared memory (8 bytes a thread):
 * each thread sums a grid-strided slice into its slot, then thread 0 adds the
 * slots, as the GPU's tree reduction does (integer sums are order-free). */
static void k_reduce_sum_u64(const cpuk_block *b, void *const *p)
{
    uint64_t *partials = CPUK_ARG(p, 0, uint64_t *);
    const uint32_t *in = CPUK_ARG(p, 1, const uint32_t *);
    int32_t n = CPUK_ARG(p, 2, int32_t);
    uint64_t *sh = b->shared;
    unsigned int nthreads = b->blockDim.x * b->blockDim.y * b->blockDim.z;
    if (b->shared_bytes < (size_t)nthreads * sizeof(uint64_t))
        return; /* on a GPU: out of bounds; here: no result */
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        uint64_t s = 0;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b))
            s += in[i];
        sh[tx] = s;
    }
    uint64_t total = 0;
    for (unsigned int t = 0; t < b->blockDim.x; t++)
        total += sh[t];
    partials[b->blockIdx.x] = total;
}

static void k_reduce_finalize_u64(const cpuk_block *b, void *const *p)
{
    uint64_t *result = CPUK_ARG(p, 0, uint64_t *);
    const uint64_t *partials = CPUK_ARG(p, 1, const uint64_t *);
    int32_t nparts = CPUK_ARG(p, 2, int32_t);
    if (b->blockIdx.x != 0 || b->blockIdx.y != 0 || b->blockIdx.z != 0)
        return;
    uint64_t s = 0;
    for (int32_t i = 0; i < nparts; i++)
        s += partials[i];
    *result = s;
}

static void k_jacobi2d(const cpuk_block *b, void *const *p)
{
    float *dst = CPUK_ARG(p, 0, float *);
    const float *src = CPUK_ARG(p, 1, const float *);
    const float *rhs = CPUK_ARG(p, 2, const float *);
    int32_t fixed = CPUK_ARG(p, 3, int32_t);
    tk_grid2d g = CPUK_ARG(p, 4, tk_grid2d);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)tz;
        uint64_t x = (uint64_t)b->blockIdx.x * b->blockDim.x + tx;
        uint64_t y = (uint64_t)b->blockIdx.y * b->blockDim.y + ty;
        if (x >= (uint64_t)g.nx + 2 || y >= (uint64_t)g.ny + 2)
            continue;
        uint64_t i = y * g.pitch + x;
        if (x == 0 || y == 0 || x == (uint64_t)g.nx + 1 || y == (uint64_t)g.ny + 1) {
            dst[i] = fixed ? src[i] : 0.0f;
        } else {
            float s = src[i - 1] + src[i + 1];
            s = s + src[i - g.pitch];
            s = s + src[i + g.pitch];
            s = s + rhs[i];
            dst[i] = s * g.weight;
        }
    }
}

static void k_boundary_apply(const cpuk_block *b, void *const *p)
{
    float *x = CPUK_ARG(p, 0, float *);
    int32_t n = CPUK_ARG(p, 1, int32_t);
    const float *bvals = CPUK_ARG(p, 2, const float *);
    if (b->blockIdx.x != 0 || b->blockIdx.y != 0 || b->blockIdx.z != 0 || n < 1)
        return;
    x[0] = bvals[0];
    x[n - 1] = bvals[1];
}

/* Each thread sums its grid-strided words' hashes and adds the sum to *out
 * atomically: blocks may run concurrently, and the result is order-free. */
static void k_checksum_u64(const cpuk_block *b, void *const *p)
{
    uint64_t *out = CPUK_ARG(p, 0, uint64_t *);
    const uint32_t *words = CPUK_ARG(p, 1, const uint32_t *);
    int32_t nwords = CPUK_ARG(p, 2, int32_t);
    uint64_t seed = CPUK_ARG(p, 3, uint64_t);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        uint64_t s = 0;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(nwords > 0 ? nwords : 0); i += GSTRIDE(b))
            s += tk_word_hash(seed, i, words[i]);
        __atomic_fetch_add(out, s, __ATOMIC_RELAXED);
    }
}

/* Block 0 adds the launch's dynamic shared memory size (bytes) to *acc:
 * a result that only the launch's shared memory decides. */
static void k_smem_size_add(const cpuk_block *b, void *const *p)
{
    uint64_t *acc = CPUK_ARG(p, 0, uint64_t *);
    if (b->blockIdx.x == 0 && b->blockIdx.y == 0 && b->blockIdx.z == 0)
        *acc += b->shared_bytes;
}

static void k_iota_f32(const cpuk_block *b, void *const *p)
{
    float *x = CPUK_ARG(p, 0, float *);
    int32_t n = CPUK_ARG(p, 1, int32_t);
    float scale = CPUK_ARG(p, 2, float), base = CPUK_ARG(p, 3, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b)) {
            float v = (float)(int32_t)i * scale;
            x[i] = v + base;
        }
    }
}

/* The softmax of a length bucket (testkernels.h): at most `limit` elements
 * (0: no limit). Every block takes the whole sum in index order first, as
 * each GPU thread does, so that no block depends on another. */
static void softmax_upto(const cpuk_block *b, void *const *p, int32_t limit)
{
    float *out = CPUK_ARG(p, 0, float *);
    const float *in = CPUK_ARG(p, 1, const float *);
    int32_t n = CPUK_ARG(p, 2, int32_t);
    if (limit > 0 && n > limit)
        n = limit;
    if (n <= 0)
        return;
    float s = 0.0f;
    for (int32_t i = 0; i < n; i++) {
        float w = in[i] * in[i];
        float e = w + 1.0f;
        s = s + e;
    }
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)n; i += GSTRIDE(b)) {
            float w = in[i] * in[i];
            float e = w + 1.0f;
            out[i] = e / s;
        }
    }
}

static void k_softmax_16(const cpuk_block *b, void *const *p) { softmax_upto(b, p, 16); }
static void k_softmax_32(const cpuk_block *b, void *const *p) { softmax_upto(b, p, 32); }
static void k_softmax_64(const cpuk_block *b, void *const *p) { softmax_upto(b, p, 64); }
static void k_softmax_128(const cpuk_block *b, void *const *p) { softmax_upto(b, p, 128); }
static void k_softmax_block(const cpuk_block *b, void *const *p) { softmax_upto(b, p, 0); }

/* y[r] = alpha * sum_c A[r*cols + c] * x[c], one thread a row. */
static void k_gemv_n(const cpuk_block *b, void *const *p)
{
    float *y = CPUK_ARG(p, 0, float *);
    const float *a = CPUK_ARG(p, 1, const float *);
    const float *x = CPUK_ARG(p, 2, const float *);
    int32_t rows = CPUK_ARG(p, 3, int32_t), cols = CPUK_ARG(p, 4, int32_t);
    float alpha = CPUK_ARG(p, 5, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t r = GID(b, tx); r < (uint64_t)(rows > 0 ? rows : 0); r += GSTRIDE(b)) {
            float acc = 0.0f;
            for (int32_t c = 0; c < cols; c++) {
                float m = a[r * (uint64_t)cols + (uint64_t)c] * x[c];
                acc = acc + m;
            }
            y[r] = alpha * acc;
        }
    }
}

/* y[c] = alpha * sum_r A[r*cols + c] * x[r], one thread a column. */
static void k_gemv_t(const cpuk_block *b, void *const *p)
{
    float *y = CPUK_ARG(p, 0, float *);
    const float *a = CPUK_ARG(p, 1, const float *);
    const float *x = CPUK_ARG(p, 2, const float *);
    int32_t rows = CPUK_ARG(p, 3, int32_t), cols = CPUK_ARG(p, 4, int32_t);
    float alpha = CPUK_ARG(p, 5, float);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t c = GID(b, tx); c < (uint64_t)(cols > 0 ? cols : 0); c += GSTRIDE(b)) {
            float acc = 0.0f;
            for (int32_t r = 0; r < rows; r++) {
                float m = a[(uint64_t)r * (uint64_t)cols + c] * x[r];
                acc = acc + m;
            }
            y[c] = alpha * acc;
        }
    }
}

static void add_i64(const cpuk_block *b, int64_t *out, const int64_t *x, const int64_t *y,
                    int32_t n, const uint32_t *st)
{
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty; (void)tz;
        for (uint64_t i = GID(b, tx); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE(b))
            out[i * st[0]] = (int64_t)((uint64_t)x[i * st[1]] + (uint64_t)y[i * st[2]]);
    }
}

static void k_add_i64_vec(const cpuk_block *b, void *const *p)
{
    static const uint32_t unit[3] = {1, 1, 1};
    add_i64(b, CPUK_ARG(p, 0, int64_t *), CPUK_ARG(p, 1, const int64_t *),
            CPUK_ARG(p, 2, const int64_t *), CPUK_ARG(p, 3, int32_t), unit);
}

static void k_add_i64_unrolled(const cpuk_block *b, void *const *p)
{
    tk_strides3 st = CPUK_ARG(p, 4, tk_strides3);
    add_i64(b, CPUK_ARG(p, 1, int64_t *), CPUK_ARG(p, 2, const int64_t *),
            CPUK_ARG(p, 3, const int64_t *), CPUK_ARG(p, 0, int32_t), st.s);
}

/* tick: no parameters, nothing done. */
static void k_tick(const cpuk_block *b, void *const *p)
{
    (void)b;
    (void)p;
}

/* One parameter's {offset, size} from its layout structure's member. */
#define P(T, m) { offsetof(T, m), sizeof(((T *)0)->m) }

__attribute__((visibility("default")))
const cpuk_kernel cpuk_module_kernels[] = {
    { "stencil3", k_stencil3, 6,
      { P(tk_stencil3_args, out), P(tk_stencil3_args, in), P(tk_stencil3_args, n),
        P(tk_stencil3_args, wl), P(tk_stencil3_args, wc), P(tk_stencil3_args, wr) } },
    { "axpy", k_axpy, 4,
      { P(tk_axpy_args, y), P(tk_axpy_args, x), P(tk_axpy_args, a), P(tk_axpy_args, n) } },
    { "scale_add_scalar", k_scale_add_scalar, 5,
      { P(tk_scale_add_scalar_args, x), P(tk_scale_add_scalar_args, n),
        P(tk_scale_add_scalar_args, decay), P(tk_scale_add_scalar_args, dt),
        P(tk_scale_add_scalar_args, iter) } },
    { "rng_fill", k_rng_fill, 4,
      { P(tk_rng_fill_args, out), P(tk_rng_fill_args, n), P(tk_rng_fill_args, seed),
        P(tk_rng_fill_args, offset) } },
    { "add_noise", k_add_noise, 4,
      { P(tk_add_noise_args, x), P(tk_add_noise_args, noise), P(tk_add_noise_args, n),
        P(tk_add_noise_args, scale) } },
    { "reduce_sum_u64", k_reduce_sum_u64, 3,
      { P(tk_reduce_sum_u64_args, partials), P(tk_reduce_sum_u64_args, in),
        P(tk_reduce_sum_u64_args, n) } },
    { "reduce_finalize_u64", k_reduce_finalize_u64, 3,
      { P(tk_reduce_finalize_u64_args, result), P(tk_reduce_finalize_u64_args, partials),
        P(tk_reduce_finalize_u64_args, nparts) } },
    { "jacobi2d", k_jacobi2d, 5,
      { P(tk_jacobi2d_args, dst), P(tk_jacobi2d_args, src), P(tk_jacobi2d_args, rhs),
        P(tk_jacobi2d_args, fixed_boundary), P(tk_jacobi2d_args, g) } },
    { "boundary_apply", k_boundary_apply, 3,
      { P(tk_boundary_apply_args, x), P(tk_boundary_apply_args, n),
        P(tk_boundary_apply_args, bvals) } },
    { "checksum_u64", k_checksum_u64, 4,
      { P(tk_checksum_u64_args, out), P(tk_checksum_u64_args, words),
        P(tk_checksum_u64_args, nwords), P(tk_checksum_u64_args, seed) } },
    { "smem_size_add", k_smem_size_add, 1, { P(tk_smem_size_add_args, acc) } },
    { "tick", k_tick, 0, { { 0, 0 } } },
    { "iota_f32", k_iota_f32, 4,
      { P(tk_iota_f32_args, x), P(tk_iota_f32_args, n), P(tk_iota_f32_args, scale),
        P(tk_iota_f32_args, base) } },
    { TK_SCALE_INPLACE_NAME, k_scale_inplace, 3,
      { P(tk_scale_inplace_args, x), P(tk_scale_inplace_args, n), P(tk_scale_inplace_args, a) } },
#define SOFTMAX(name, fn) \
    { name, fn, 3, { P(tk_softmax_args, out), P(tk_softmax_args, in), P(tk_softmax_args, n) } }
    SOFTMAX("softmax_16", k_softmax_16),
    SOFTMAX("softmax_32", k_softmax_32),
    SOFTMAX("softmax_64", k_softmax_64),
    SOFTMAX("softmax_128", k_softmax_128),
    SOFTMAX("softmax_block", k_softmax_block),
#define GEMV(name, fn) \
    { name, fn, 6, { P(tk_gemv_args, y), P(tk_gemv_args, a), P(tk_gemv_args, x), \
                     P(tk_gemv_args, rows), P(tk_gemv_args, cols), P(tk_gemv_args, alpha) } }
    GEMV("gemv_n_small", k_gemv_n),
    GEMV("gemv_n_large", k_gemv_n),
    GEMV("gemv_t", k_gemv_t),
#define ADD_I64(name) \
    { name, k_add_i64_vec, 4, { P(tk_add_i64_args, out), P(tk_add_i64_args, a), \
                                P(tk_add_i64_args, b), P(tk_add_i64_args, n) } }
    ADD_I64("add_i64_vec4"),
    ADD_I64("add_i64_vec2"),
    { "add_i64_unrolled", k_add_i64_unrolled, 5,
      { P(tk_add_i64_unrolled_args, n), P(tk_add_i64_unrolled_args, out),
        P(tk_add_i64_unrolled_args, a), P(tk_add_i64_unrolled_args, b),
        P(tk_add_i64_unrolled_args, st) } },
    { NULL, NULL, 0, { { 0, 0 } } },
};
