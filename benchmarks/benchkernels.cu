// benchkernels.cu - the benchmark kernels for a GPU (same names and
// semantics as benchkernels.c): an empty kernel, a one-word tick, and a
// kernel that takes a given time (spin).
extern "C" __global__ void empty(void) {}

extern "C" __global__ void tick(unsigned long long *p, unsigned long long add)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *p += add;
}

// One thread waits until `ns` nanoseconds of the global timer have passed,
// then ticks: a kernel of a chosen duration (benchmarks/hostwork), whatever
// the GPU's clock rate. The timer's resolution is about a microsecond.
extern "C" __global__ void spin(unsigned long long *p, unsigned long long ns)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    *p += 1;
}
