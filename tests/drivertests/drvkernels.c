/* drvkernels.c - the C kernel module the driver tests load (cpukernel.h ABI).
 * Pointers arrive as CUdeviceptr values; pinned host memory is passed by its
 * (UVA) address, as on a GPU. The gate kernel blocks its stream until the host
 * opens the gate, which makes "has not run yet" observable without timing. */
#include <stdint.h>
#include <time.h>

#include "cpukernel.h"

#define P(i) ((void *)(uintptr_t)CPUK_ARG(params, i, uint64_t))

/* A log is unsigned[DRV_LOG_CAP]: [0] = entries, [1..] = tags in run order.
 * Kept in step with drvtest.h. */
#define LOG_CAP 64u
#define GATE_TIMEOUT_FLAG 0x80000000u
#define GATE_TIMEOUT_NS (3ull * 1000000000ull)

static void log_tag(unsigned *log, unsigned tag)
{
    unsigned i = __atomic_fetch_add(&log[0], 1u, __ATOMIC_ACQ_REL);
    if (i + 1 < LOG_CAP)
        __atomic_store_n(&log[i + 1], tag, __ATOMIC_RELEASE);
}

static int first_block(const cpuk_block *b)
{
    return b->blockIdx.x == 0 && b->blockIdx.y == 0 && b->blockIdx.z == 0;
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* drv_record(unsigned *log, unsigned tag): appends tag once. */
static void k_record(const cpuk_block *b, void *const *params)
{
    if (first_block(b))
        log_tag(P(0), CPUK_ARG(params, 1, unsigned));
}

/* drv_gate(int *gate, unsigned *log, unsigned tag): waits until *gate != 0,
 * then appends tag; gives up after 3 s and appends tag|GATE_TIMEOUT_FLAG so a
 * driver that wrongly waits for the gate fails a test instead of hanging it. */
static void k_gate(const cpuk_block *b, void *const *params)
{
    if (!first_block(b))
        return;
    const int *gate = P(0);
    unsigned tag = CPUK_ARG(params, 2, unsigned);
    unsigned long long until = now_ns() + GATE_TIMEOUT_NS;
    while (__atomic_load_n(gate, __ATOMIC_ACQUIRE) == 0) {
        if (now_ns() > until) {
            tag |= GATE_TIMEOUT_FLAG;
            break;
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    log_tag(P(1), tag);
}

/* drv_set(int *p, int v): p[0] = v. An atomic store: the asynchrony test
 * reads p[0] from the host while the kernel may run, on purpose, and
 * ThreadSanitizer must see that as intended. */
static void k_set(const cpuk_block *b, void *const *params)
{
    if (first_block(b))
        __atomic_store_n((int *)P(0), CPUK_ARG(params, 1, int), __ATOMIC_RELEASE);
}

/* drv_add(int *p, int v, unsigned n): p[i] += v for every global thread i < n. */
static void k_add(const cpuk_block *b, void *const *params)
{
    int *p = P(0);
    int v = CPUK_ARG(params, 1, int);
    unsigned n = CPUK_ARG(params, 2, unsigned);
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty;
        (void)tz;
        unsigned i = b->blockIdx.x * b->blockDim.x + tx;
        if (i < n && ty == 0 && tz == 0)
            p[i] += v;
    }
}

/* drv_shared(int *out): each thread puts tx + blockIdx.x in the block's
 * shared memory; out[block] = their sum, out[gridDim.x + block] = shared bytes. */
static void k_shared(const cpuk_block *b, void *const *params)
{
    int *out = P(0);
    int *s = b->shared;
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)ty;
        (void)tz;
        s[tx] = (int)(tx + b->blockIdx.x);
    }
    int sum = 0;
    for (unsigned i = 0; i < b->blockDim.x; i++)
        sum += s[i];
    out[b->blockIdx.x] = sum;
    out[b->gridDim.x + b->blockIdx.x] = (int)b->shared_bytes;
}

/* drv_mixed(char c, double d, short s, double *out): out = {c, d, s}. Its
 * layout (offsets 0, 8, 16, 24) is what nvcc gives the same CUDA signature. */
static void k_mixed(const cpuk_block *b, void *const *params)
{
    if (!first_block(b))
        return;
    double *out = (double *)(uintptr_t)CPUK_ARG(params, 3, uint64_t);
    out[0] = CPUK_ARG(params, 0, char);
    out[1] = CPUK_ARG(params, 1, double);
    out[2] = CPUK_ARG(params, 2, short);
}

/* drv_dims(unsigned *out): out[0..5] = gridDim, blockDim; out[6] counts block
 * calls; out[8 + linear block index] counts calls of that block; out[7] sums
 * the threads visited. */
static void k_dims(const cpuk_block *b, void *const *params)
{
    unsigned *out = P(0);
    if (first_block(b)) {
        out[0] = b->gridDim.x;
        out[1] = b->gridDim.y;
        out[2] = b->gridDim.z;
        out[3] = b->blockDim.x;
        out[4] = b->blockDim.y;
        out[5] = b->blockDim.z;
    }
    __atomic_fetch_add(&out[6], 1u, __ATOMIC_RELAXED);
    unsigned lin = (b->blockIdx.z * b->gridDim.y + b->blockIdx.y) * b->gridDim.x + b->blockIdx.x;
    __atomic_fetch_add(&out[8 + lin], 1u, __ATOMIC_RELAXED);
    unsigned threads = 0;
    CPUK_FOR_THREADS(b, tx, ty, tz) {
        (void)tx;
        (void)ty;
        (void)tz;
        threads++;
    }
    __atomic_fetch_add(&out[7], threads, __ATOMIC_RELAXED);
}

const cpuk_kernel cpuk_module_kernels[] = {
    {"drv_record", k_record, 2, {{0, 8}, {8, 4}}},
    {"drv_gate", k_gate, 3, {{0, 8}, {8, 8}, {16, 4}}},
    {"drv_set", k_set, 2, {{0, 8}, {8, 4}}},
    {"drv_add", k_add, 3, {{0, 8}, {8, 4}, {12, 4}}},
    {"drv_shared", k_shared, 1, {{0, 8}}},
    {"drv_mixed", k_mixed, 4, {{0, 1}, {8, 8}, {16, 2}, {24, 8}}},
    {"drv_dims", k_dims, 1, {{0, 8}}},
    {0, 0, 0, {{0, 0}}},
};
