/* progfuzz - a differential fuzzer's program generator and interpreter: from
 * a seed, it builds a random driver-API program (launches of the test
 * kernels with random arguments, copies of every kind from and to pinned and
 * pageable memory, memsets, syncs and queries, events, several streams: the
 * legacy one, the per-thread one, blocking and non-blocking ones, blocks of
 * ops repeated with and without changes, occasional allocations) and runs it,
 * printing one line with a checksum of everything it computed. Run with and
 * without the shim, the line must be identical (tests/fuzz/run_corpus.sh).
 *
 * The programs are race-free by construction, so that their output is
 * deterministic: each stream ("lane") owns its buffers; the legacy stream may
 * also touch the buffers of the blocking lanes, with which it is implicitly
 * ordered (the rule under test); host memory is read or refilled only after
 * a synchronization that covers it.
 * Usage: progfuzz MODULE SEED [OPS]   (OPS: rough number of ops, default 300) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 256u
#define BUFS 3           /* device buffers per lane */
#define LANES 5          /* blocking 1, blocking 2, per-thread, non-blocking 1, 2 */
#define LEGACY LANES     /* pseudo-lane: the legacy stream */
#define MAXOPS 16

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static unsigned int pick(unsigned int n) { return (unsigned int)(rnd() % n); }

enum op_kind {
    OP_AXPY, OP_SCALE, OP_STENCIL, OP_IOTA, OP_HTOD_PINNED, OP_HTOD_PAGEABLE, OP_DTOH_PINNED,
    OP_DTOD_ASYNC, OP_DTOD_SYNC, OP_MEMSET32, OP_MEMSET8_SYNC, OP_STREAM_SYNC, OP_QUERY,
    OP_EVENT, OP_SYNC_HTOD, OP_SYNC_DTOH, OP_TEMP, OP_CTX_SYNC, OP_KINDS
};

typedef struct op {
    enum op_kind kind;
    int lane, lane_b;     /* lane_b: the lane of the second buffer (legacy ops) */
    int a, b;             /* buffer indices within the lanes */
    float f;              /* a scalar argument */
    uint32_t u;           /* a counter argument / memset value */
    int varies;           /* the scalar changes with the repetition */
    int skip_at;          /* repetition at which this op is left out (-1: never) */
} op;

static CUfunction f_axpy, f_scale, f_stencil, f_iota;
static CUstream streams[LANES + 1];
static CUdeviceptr bufs[LANES][BUFS];
static float *pinned[LANES];     /* 2N floats: [0,N) sources, [N,2N) destinations */
static CUevent ev;
static uint64_t acc = 0x66757a7aull, nops;

static int blocking_lane(int l) { return l <= 2; }

/* A lane the op may run on, and the lane whose buffers it uses. */
static void place(op *o)
{
    o->lane = (int)pick(LANES + 1);
    o->lane_b = o->lane == LEGACY ? (int)pick(3) : o->lane; /* legacy: a blocking lane's buffers */
    o->a = (int)pick(BUFS);
    o->b = (int)pick(BUFS);
}

static void gen_op(op *o)
{
    memset(o, 0, sizeof *o);
    o->kind = (enum op_kind)pick(OP_KINDS);
    place(o);
    if ((o->kind == OP_DTOD_SYNC || o->kind == OP_MEMSET8_SYNC || o->kind == OP_SYNC_HTOD ||
         o->kind == OP_SYNC_DTOH) && o->lane != LEGACY) {
        o->lane = LEGACY; /* the synchronous forms run on the legacy stream */
        o->lane_b = (int)pick(3);
    }
    if ((o->kind == OP_HTOD_PINNED || o->kind == OP_DTOH_PINNED) && o->lane == LEGACY) {
        o->lane = o->lane_b; /* pinned buffers are a lane's own */
    }
    o->f = (float)(int)(pick(9) + 1) * 0.125f;
    o->u = (uint32_t)pick(1000);
    o->varies = pick(3) == 0;
    o->skip_at = pick(6) == 0 ? (int)pick(6) : -1;
}

static CUdeviceptr buf(int lane, int i) { return bufs[lane][i]; }

static void run_op(const op *o, unsigned int rep)
{
    CUstream s = streams[o->lane];
    int L = o->lane_b;
    int32_t n = N;
    unsigned int grid = 2;
    float f = o->varies ? o->f + 0.0625f * (float)(rep % 5) : o->f;
    uint32_t u = o->varies ? o->u + rep : o->u;
    CUdeviceptr x = buf(L, o->a), y = buf(L, o->b);
    nops++;
    switch (o->kind) {
    case OP_AXPY: {
        void *args[] = { &y, &x, &f, &n };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
        break;
    }
    case OP_SCALE: {
        float decay = 0.5f;
        void *args[] = { &x, &n, &decay, &f, &u };
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
        break;
    }
    case OP_STENCIL: {
        CUdeviceptr out = buf(L, o->a), in = buf(L, (o->a + 1) % BUFS); /* never in place */
        float wl = 0.25f, wr = 0.25f;
        void *args[] = { &out, &in, &n, &wl, &f, &wr };
        CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
        break;
    }
    case OP_IOTA: {
        float base = (float)u;
        void *args[] = { &x, &n, &f, &base };
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
        break;
    }
    case OP_HTOD_PINNED:
        CK(cuMemcpyHtoDAsync, (x, pinned[L], N * sizeof(float), s));
        break;
    case OP_HTOD_PAGEABLE: {
        float *h = malloc(N * sizeof(float));
        if (!h)
            app_die("out of host memory");
        for (unsigned int i = 0; i < N; i++)
            h[i] = (float)(i % 17) * f;
        CK(cuMemcpyHtoDAsync, (x, h, N * sizeof(float), s));
        memset(h, 0xee, N * sizeof(float)); /* the driver (or the shim) staged it */
        free(h);
        break;
    }
    case OP_DTOH_PINNED:
        CK(cuMemcpyDtoHAsync, (pinned[L] + N, x, N * sizeof(float), s));
        break;
    case OP_DTOD_ASYNC:
        if (o->a != o->b)
            CK(cuMemcpyDtoDAsync, (y, x, N * sizeof(float), s));
        break;
    case OP_DTOD_SYNC:
        if (o->a != o->b)
            CK(cuMemcpyDtoD, (y, x, N * sizeof(float)));
        break;
    case OP_MEMSET32:
        CK(cuMemsetD32Async, (x, 0x3f800000u + u, N, s));
        break;
    case OP_MEMSET8_SYNC:
        CK(cuMemsetD8, (x, (unsigned char)u, N * sizeof(float)));
        break;
    case OP_STREAM_SYNC:
        CK(cuStreamSynchronize, (s));
        break;
    case OP_QUERY: {
        CUresult r = cuStreamQuery(s);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
            app_fail("cuStreamQuery", (int)r);
        break;
    }
    case OP_EVENT: /* an ordering edge: later work on the legacy stream waits */
        CK(cuEventRecord, (ev, s));
        CK(cuStreamWaitEvent, (streams[LEGACY], ev, 0));
        break;
    case OP_SYNC_HTOD: {
        float h[N];
        for (unsigned int i = 0; i < N; i++)
            h[i] = (float)((i * 7u + u) % 31u);
        CK(cuMemcpyHtoD, (x, h, sizeof h));
        break;
    }
    case OP_SYNC_DTOH: {
        float h[N];
        CK(cuMemcpyDtoH, (h, x, sizeof h));
        acc = app_hash(acc, h, sizeof h);
        break;
    }
    case OP_TEMP: {
        CUdeviceptr t;
        CK(cuMemAlloc, (&t, N * sizeof(float)));
        CK(cuMemsetD32Async, (t, 0x40000000u + u, N, s));
        CK(cuMemcpyDtoDAsync, (x, t, N * sizeof(float), s));
        CK(cuMemFree, (t)); /* waits for the device: the copy has read it */
        break;
    }
    case OP_CTX_SYNC:
        CK(cuCtxSynchronize, ());
        break;
    default:
        break;
    }
}

/* After a context synchronize, host memory may be read and refilled. */
static void host_checkpoint(unsigned int tag)
{
    CK(cuCtxSynchronize, ());
    for (int l = 0; l < LANES; l++) {
        acc = app_hash(acc, pinned[l] + N, N * sizeof(float));
        for (unsigned int i = 0; i < N; i++)
            pinned[l][i] = (float)((i + tag * 3u + (unsigned int)l) % 23u) * 0.5f;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODULE SEED [OPS]\n", argv[0]);
        return 2;
    }
    uint64_t seed = strtoull(argv[2], NULL, 0);
    long budget = argc > 3 ? atol(argv[3]) : 300;
    rng_state = seed;

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(cuInit, (0));
    CK(cuDeviceGet, (&dev, 0));
    CK(cuDevicePrimaryCtxRetain, (&ctx, dev));
    CK(cuCtxSetCurrent, (ctx));
    CK(cuModuleLoad, (&mod, argv[1]));
    CK(cuModuleGetFunction, (&f_axpy, mod, "axpy"));
    CK(cuModuleGetFunction, (&f_scale, mod, "scale_add_scalar"));
    CK(cuModuleGetFunction, (&f_stencil, mod, "stencil3"));
    CK(cuModuleGetFunction, (&f_iota, mod, "iota_f32"));
    CK(cuStreamCreate, (&streams[0], CU_STREAM_DEFAULT));
    CK(cuStreamCreate, (&streams[1], CU_STREAM_DEFAULT));
    streams[2] = CU_STREAM_PER_THREAD;
    CK(cuStreamCreate, (&streams[3], CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&streams[4], CU_STREAM_NON_BLOCKING));
    streams[LEGACY] = CU_STREAM_LEGACY;
    CK(cuEventCreate, (&ev, CU_EVENT_DISABLE_TIMING));
    for (int l = 0; l < LANES; l++) {
        for (int b = 0; b < BUFS; b++) {
            CK(cuMemAlloc, (&bufs[l][b], N * sizeof(float)));
            CK(cuMemsetD32, (bufs[l][b], 0x3f800000u + (unsigned int)(l * BUFS + b), N));
        }
        CK(cuMemHostAlloc, ((void **)&pinned[l], 2 * N * sizeof(float), 0));
        memset(pinned[l], 0, 2 * N * sizeof(float));
    }
    (void)blocking_lane;
    host_checkpoint(0);

    unsigned int tag = 1;
    while ((long)nops < budget) {
        op block[MAXOPS];
        unsigned int len = 2 + pick(MAXOPS - 1);
        for (unsigned int i = 0; i < len; i++)
            gen_op(&block[i]);
        unsigned int reps = 1 + pick(8);
        int rotate = pick(4) == 0; /* rotate the buffers with the repetition */
        for (unsigned int r = 0; r < reps; r++) {
            for (unsigned int i = 0; i < len; i++) {
                if (block[i].skip_at == (int)r)
                    continue;
                op o = block[i];
                if (rotate) {
                    o.a = (o.a + (int)r) % BUFS;
                    o.b = (o.b + (int)r) % BUFS;
                }
                run_op(&o, r);
            }
            if (pick(3) == 0)
                host_checkpoint(tag++);
        }
    }
    host_checkpoint(tag);
    for (int l = 0; l < LANES; l++) {
        for (int b = 0; b < BUFS; b++) {
            float h[N];
            CK(cuMemcpyDtoH, (h, bufs[l][b], sizeof h));
            acc = app_hash(acc, h, sizeof h);
            CK(cuMemFree, (bufs[l][b]));
        }
        CK(cuMemFreeHost, (pinned[l]));
    }
    printf("fuzz seed %llu ops %llu checksum %016llx\n", (unsigned long long)seed,
           (unsigned long long)nops, (unsigned long long)acc);
    CK(cuEventDestroy, (ev));
    for (int l = 0; l < LANES; l++)
        if (l != 2)
            CK(cuStreamDestroy, (streams[l]));
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
