/* testkernels.h - what the test kernels and the test programs agree on: the
 * by-value structures kernels take, each kernel's parameter layout, and the
 * integer hashes both kernels and programs use. Plain C, also read by nvcc. */
#ifndef TESTKERNELS_H
#define TESTKERNELS_H

#include <stdint.h>

#if defined(__CUDACC__)
#define TK_HD static __host__ __device__ __forceinline__
#else
#define TK_HD static inline
#endif

/* Threads per block the programs use for 1-D kernels. */
#define TK_BLOCK 128u

/* A 2-D grid passed by value to jacobi2d: 24 bytes, 8-byte aligned, so the
 * int parameter in front of it is followed by 4 bytes of padding. The field
 * has a halo ring: (nx + 2) x (ny + 2) cells, rows `pitch` elements apart. */
typedef struct tk_grid2d {
    uint32_t nx, ny;   /* interior size, cells */
    uint64_t pitch;    /* row pitch, elements (>= nx + 2) */
    float weight;      /* factor applied to the five-point sum */
} tk_grid2d;

/* Parameter layouts, one structure per kernel, members in parameter order.
 * A C structure pads each member to its natural alignment exactly as nvcc lays
 * out a kernel's parameter buffer, so offsetof() gives what
 * cuFuncGetParamInfo reports. Device pointers are held as 64-bit integers
 * (CUdeviceptr). The C module builds its parameter table from these, and a
 * program can use one to pack an `extra` launch buffer. */
typedef struct tk_stencil3_args {           /* out = 3-point stencil of in */
    uint64_t out, in; int32_t n; float wl, wc, wr;
} tk_stencil3_args;
typedef struct tk_axpy_args {               /* y = a*x + y */
    uint64_t y, x; float a; int32_t n;
} tk_axpy_args;
/* A C++ kernel, named as nvcc names it (mangled): tk::scale_inplace<float>. */
#define TK_SCALE_INPLACE_NAME "_ZN2tk13scale_inplaceIfEEvPT_iS1_"
typedef struct tk_scale_inplace_args {      /* x = x*a */
    uint64_t x; int32_t n; float a;
} tk_scale_inplace_args;
typedef struct tk_scale_add_scalar_args {   /* x = x*decay + dt*((iter+i)%7) */
    uint64_t x; int32_t n; float decay, dt; uint32_t iter;
} tk_scale_add_scalar_args;
typedef struct tk_rng_fill_args {           /* out[i] = rng(seed, offset+i) */
    uint64_t out; int32_t n; uint64_t seed, offset;
} tk_rng_fill_args;
typedef struct tk_add_noise_args {          /* x += scale*(u24(noise)/2^24 - 1/2) */
    uint64_t x, noise; int32_t n; float scale;
} tk_add_noise_args;
typedef struct tk_reduce_sum_u64_args {     /* per-block sums, dynamic shared */
    uint64_t partials, in; int32_t n;
} tk_reduce_sum_u64_args;
typedef struct tk_reduce_finalize_u64_args {/* *result = sum(partials) */
    uint64_t result, partials; int32_t nparts;
} tk_reduce_finalize_u64_args;
typedef struct tk_jacobi2d_args {           /* one sweep, src -> dst */
    uint64_t dst, src, rhs; int32_t fixed_boundary; tk_grid2d g;
} tk_jacobi2d_args;
typedef struct tk_boundary_apply_args {     /* x[0] = b[0], x[n-1] = b[1] */
    uint64_t x; int32_t n; uint64_t bvals;
} tk_boundary_apply_args;
typedef struct tk_smem_size_add_args {     /* *acc += the launch's dynamic shared bytes */
    uint64_t acc;
} tk_smem_size_add_args;
typedef struct tk_checksum_u64_args {       /* *out += sum of word hashes */
    uint64_t out, words; int32_t nwords; uint64_t seed;
} tk_checksum_u64_args;
typedef struct tk_iota_f32_args {           /* x[i] = i*scale + base */
    uint64_t x; int32_t n; float scale, base;
} tk_iota_f32_args;
/* softmax_16, softmax_32, softmax_64, softmax_128 and softmax_block: one
 * function per length bucket, as a framework's softmax template is
 * specialised by size (softmax_N reads at most N elements; softmax_block
 * any number). Exponentials differ between a CPU's libm and a GPU, so the
 * "exponential" is e = in*in + 1 and out[i] = e[i] / sum(e), the sum taken
 * in index order (every thread takes it whole: order-free across blocks).
 * out must not overlap in. */
typedef struct tk_softmax_args {
    uint64_t out, in; int32_t n;
} tk_softmax_args;
/* gemv_n_small, gemv_n_large: y[r] = alpha * sum_c A[r*cols + c] * x[c]
 * (row-major A, the sum in column order), one thread a row; the same
 * arithmetic under two names, as a BLAS library picks one of its gemv
 * kernels by shape. gemv_t: y[c] = alpha * sum_r A[r*cols + c] * x[r]. */
typedef struct tk_gemv_args {
    uint64_t y, a, x; int32_t rows, cols; float alpha;
} tk_gemv_args;

/* add_i64_vec4, add_i64_vec2, add_i64_unrolled: out[i] = a[i] + b[i] over n
 * int64 elements, three functions a framework would choose between by the
 * alignment of its pointers (PyTorch's vectorized_elementwise_kernel<4|2>
 * and unrolled_elementwise_kernel: the same result, another function and,
 * for the unrolled one, another parameter layout). The unrolled one takes
 * its element count first and the strides (in elements, all 1 here) in a
 * 12-byte struct last: a parameter block of 44 bytes, not a multiple of 8. */
typedef struct tk_add_i64_args {
    uint64_t out, a, b; int32_t n;
} tk_add_i64_args;
typedef struct tk_strides3 {
    uint32_t s[3];
} tk_strides3;
typedef struct tk_add_i64_unrolled_args {
    int32_t n; uint64_t out, a, b; tk_strides3 st;
} tk_add_i64_unrolled_args;

/* splitmix64's finaliser: a bijective 64-bit mix. */
TK_HD uint64_t tk_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* What checksum_u64 adds for word w at index i: position-dependent, so a
 * permutation of the buffer changes the sum, while the sum (wrapping
 * addition) does not depend on the order threads and blocks run in. */
TK_HD uint64_t tk_word_hash(uint64_t seed, uint64_t i, uint32_t w)
{
    return tk_mix64(seed ^ tk_mix64(i * 0x100000001B3ull + w));
}

/* The counter-based random word rng_fill writes at position pos. */
TK_HD uint32_t tk_rng_word(uint64_t seed, uint64_t pos)
{
    return (uint32_t)(tk_mix64(seed ^ tk_mix64(pos)) >> 32);
}

#endif
