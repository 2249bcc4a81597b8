/* rtapi - a small CUDA runtime API program: a <<<>>> launch, cudaMemcpy, and
 * cudaMemcpyAsync plus cudaStreamSynchronize on a created stream. Built with
 * static and with shared cudart to check that the shim sees the runtime's
 * driver lookups; on the CPU driver it stops at cudart's private tables.
 * Usage: rtapi [STEPS [ROUNDS]]   (STEPS launches per round, default 16;
 * ROUNDS rounds, each ended by cudaStreamSynchronize, default 1: with more
 * rounds the same launches repeat, which a replaying shim turns into graph
 * launches on a GPU) */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#define CK(call)                                                               \
    do {                                                                       \
        cudaError_t ck_e_ = (call);                                            \
        if (ck_e_ != cudaSuccess) {                                            \
            std::printf("error: %s failed: %d %s\n", #call, (int)ck_e_,        \
                        cudaGetErrorName(ck_e_));                              \
            return 1;                                                          \
        }                                                                      \
    } while (0)

__global__ void step(float *x, int n, float a, uint32_t iter)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = __fadd_rn(__fmul_rn(x[i], a), __uint2float_rn((iter + i) % 5u));
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? std::atoi(argv[1]) : 16;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
    const int n = 1000;
    float h[n];
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    float *d = nullptr;
    cudaStream_t s;
    CK(cudaMalloc(&d, sizeof h));
    CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    CK(cudaStreamCreate(&s));
    for (int r = 0; r < rounds; r++) {
        for (int it = 0; it < iters; it++) {
            step<<<(n + 127) / 128, 128, 0, s>>>(d, n, 0.5f, (uint32_t)it);
            CK(cudaGetLastError());
        }
        if (r + 1 < rounds)
            CK(cudaStreamSynchronize(s));
    }
    CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        uint32_t u;
        std::memcpy(&u, &h[i], sizeof u);
        sum = sum * 0x100000001B3ull + u;
    }
    std::printf("checksum rtapi %016llx\n", (unsigned long long)sum);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
    return 0;
}
