/* kernels.cu - the test kernels for a real GPU (testkernels.cubin): the same
 * names, parameters and results as kernels.c. Every float operation is an
 * explicitly rounded intrinsic (no FMA contraction), so the bits match the
 * CPU module, and no result depends on the order blocks run in. */
#include <stdint.h>

#include "testkernels.h"

#define GID() ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x)
#define GSTRIDE() ((uint64_t)gridDim.x * blockDim.x)

extern "C" __global__ void stencil3(float *out, const float *in, int32_t n,
                                    float wl, float wc, float wr)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE()) {
        if (i == 0 || i == (uint64_t)n - 1) {
            out[i] = in[i];
        } else {
            float l = __fmul_rn(wl, in[i - 1]);
            float c = __fmul_rn(wc, in[i]);
            float r = __fmul_rn(wr, in[i + 1]);
            out[i] = __fadd_rn(__fadd_rn(l, c), r);
        }
    }
}

extern "C" __global__ void axpy(float *y, const float *x, float a, int32_t n)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}

/* A C++ kernel: a template in a namespace, not extern "C", so that its
 * name is mangled (TK_SCALE_INPLACE_NAME), as a C++ program's kernels are. */
namespace tk {
template <typename T> __global__ void scale_inplace(T *x, int32_t n, T a)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        x[i] = __fmul_rn(x[i], a);
}
template __global__ void scale_inplace<float>(float *, int32_t, float);
} // namespace tk

extern "C" __global__ void scale_add_scalar(float *x, int32_t n, float decay,
                                            float dt, uint32_t iter)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE()) {
        float k = __uint2float_rn((iter + (uint32_t)i) % 7u);
        x[i] = __fadd_rn(__fmul_rn(x[i], decay), __fmul_rn(dt, k));
    }
}

extern "C" __global__ void rng_fill(uint32_t *out, int32_t n, uint64_t seed,
                                    uint64_t offset)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        out[i] = tk_rng_word(seed, offset + i);
}

extern "C" __global__ void add_noise(float *x, const uint32_t *noise, int32_t n,
                                     float scale)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE()) {
        float u = __uint2float_rn(noise[i] >> 8);
        float f = __fmul_rn(u, 0x1p-24f);
        float d = __fmul_rn(scale, __fsub_rn(f, 0.5f));
        x[i] = __fadd_rn(x[i], d);
    }
}

/* Dynamic shared memory: blockDim.x 64-bit slots. */
extern "C" __global__ void reduce_sum_u64(uint64_t *partials, const uint32_t *in,
                                          int32_t n)
{
    extern __shared__ uint64_t sh[];
    uint64_t s = 0;
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        s += in[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (unsigned int w = 1; w < blockDim.x; w *= 2) {
        if (threadIdx.x % (2 * w) == 0 && threadIdx.x + w < blockDim.x)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partials[blockIdx.x] = sh[0];
}

extern "C" __global__ void reduce_finalize_u64(uint64_t *result,
                                               const uint64_t *partials,
                                               int32_t nparts)
{
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0 ||
        threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0)
        return;
    uint64_t s = 0;
    for (int32_t i = 0; i < nparts; i++)
        s += partials[i];
    *result = s;
}

extern "C" __global__ void jacobi2d(float *dst, const float *src, const float *rhs,
                                    int32_t fixed_boundary, tk_grid2d g)
{
    uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t y = (uint64_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (uint64_t)g.nx + 2 || y >= (uint64_t)g.ny + 2)
        return;
    uint64_t i = y * g.pitch + x;
    if (x == 0 || y == 0 || x == (uint64_t)g.nx + 1 || y == (uint64_t)g.ny + 1) {
        dst[i] = fixed_boundary ? src[i] : 0.0f;
    } else {
        float s = __fadd_rn(src[i - 1], src[i + 1]);
        s = __fadd_rn(s, src[i - g.pitch]);
        s = __fadd_rn(s, src[i + g.pitch]);
        s = __fadd_rn(s, rhs[i]);
        dst[i] = __fmul_rn(s, g.weight);
    }
}

extern "C" __global__ void boundary_apply(float *x, int32_t n, const float *bvals)
{
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0 || n < 1 ||
        threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0)
        return;
    x[0] = bvals[0];
    x[n - 1] = bvals[1];
}

extern "C" __global__ void checksum_u64(uint64_t *out, const uint32_t *words,
                                        int32_t nwords, uint64_t seed)
{
    uint64_t s = 0;
    for (uint64_t i = GID(); i < (uint64_t)(nwords > 0 ? nwords : 0); i += GSTRIDE())
        s += tk_word_hash(seed, i, words[i]);
    atomicAdd((unsigned long long *)out, (unsigned long long)s);
}

/* Block 0's thread 0 adds the launch's dynamic shared memory size (bytes,
 * PTX's %dynamic_smem_size) to *acc. */
extern "C" __global__ void smem_size_add(uint64_t *acc)
{
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 &&
        threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned int bytes;
        asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
        *acc += bytes;
    }
}

/* A kernel without parameters, which does nothing: a launch whose node
 * has no argument block (its geometry may still change). */
extern "C" __global__ void tick(void) {}

extern "C" __global__ void iota_f32(float *x, int32_t n, float scale, float base)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        x[i] = __fadd_rn(__fmul_rn(__int2float_rn((int32_t)i), scale), base);
}

/* The softmax of a length bucket (testkernels.h): at most LIMIT elements
 * (0: no limit); every thread takes the whole sum in index order, so that
 * no block depends on another. */
template <int LIMIT> static __device__ __forceinline__ void softmax_upto(float *out, const float *in, int32_t n)
{
    if (LIMIT > 0 && n > LIMIT)
        n = LIMIT;
    if (n <= 0)
        return;
    float s = 0.0f;
    for (int32_t i = 0; i < n; i++)
        s = __fadd_rn(s, __fadd_rn(__fmul_rn(in[i], in[i]), 1.0f));
    for (uint64_t i = GID(); i < (uint64_t)n; i += GSTRIDE()) {
        float e = __fadd_rn(__fmul_rn(in[i], in[i]), 1.0f);
        out[i] = __fdiv_rn(e, s);
    }
}

extern "C" __global__ void softmax_16(float *out, const float *in, int32_t n) { softmax_upto<16>(out, in, n); }
extern "C" __global__ void softmax_32(float *out, const float *in, int32_t n) { softmax_upto<32>(out, in, n); }
extern "C" __global__ void softmax_64(float *out, const float *in, int32_t n) { softmax_upto<64>(out, in, n); }
extern "C" __global__ void softmax_128(float *out, const float *in, int32_t n) { softmax_upto<128>(out, in, n); }
extern "C" __global__ void softmax_block(float *out, const float *in, int32_t n) { softmax_upto<0>(out, in, n); }

/* y[r] = alpha * sum_c A[r*cols + c] * x[c], one thread a row. */
static __device__ __forceinline__ void gemv_n(float *y, const float *a, const float *x, int32_t rows, int32_t cols, float alpha)
{
    for (uint64_t r = GID(); r < (uint64_t)(rows > 0 ? rows : 0); r += GSTRIDE()) {
        float acc = 0.0f;
        for (int32_t c = 0; c < cols; c++)
            acc = __fadd_rn(acc, __fmul_rn(a[r * (uint64_t)cols + (uint64_t)c], x[c]));
        y[r] = __fmul_rn(alpha, acc);
    }
}

extern "C" __global__ void gemv_n_small(float *y, const float *a, const float *x, int32_t rows,
                                        int32_t cols, float alpha) { gemv_n(y, a, x, rows, cols, alpha); }
extern "C" __global__ void gemv_n_large(float *y, const float *a, const float *x, int32_t rows,
                                        int32_t cols, float alpha) { gemv_n(y, a, x, rows, cols, alpha); }

/* y[c] = alpha * sum_r A[r*cols + c] * x[r], one thread a column. */
extern "C" __global__ void gemv_t(float *y, const float *a, const float *x, int32_t rows,
                                  int32_t cols, float alpha)
{
    for (uint64_t c = GID(); c < (uint64_t)(cols > 0 ? cols : 0); c += GSTRIDE()) {
        float acc = 0.0f;
        for (int32_t r = 0; r < rows; r++)
            acc = __fadd_rn(acc, __fmul_rn(a[(uint64_t)r * (uint64_t)cols + c], x[r]));
        y[c] = __fmul_rn(alpha, acc);
    }
}

/* add_i64_vec4, add_i64_vec2, add_i64_unrolled (testkernels.h): the same
 * integer addition under three functions, two parameter layouts. */
__device__ __forceinline__ void add_i64_body(int64_t *out, const int64_t *a, const int64_t *b,
                                             int32_t n, uint32_t so, uint32_t sa, uint32_t sb)
{
    for (uint64_t i = GID(); i < (uint64_t)(n > 0 ? n : 0); i += GSTRIDE())
        out[i * so] = (int64_t)((uint64_t)a[i * sa] + (uint64_t)b[i * sb]);
}

extern "C" __global__ void add_i64_vec4(int64_t *out, const int64_t *a, const int64_t *b,
                                        int32_t n)
{
    add_i64_body(out, a, b, n, 1, 1, 1);
}

extern "C" __global__ void add_i64_vec2(int64_t *out, const int64_t *a, const int64_t *b,
                                        int32_t n)
{
    add_i64_body(out, a, b, n, 1, 1, 1);
}

extern "C" __global__ void add_i64_unrolled(int32_t n, int64_t *out, const int64_t *a,
                                            const int64_t *b, tk_strides3 st)
{
    add_i64_body(out, a, b, n, st.s[0], st.s[1], st.s[2]);
}
