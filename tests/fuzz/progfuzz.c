/* progfuzz - a differential fuzzer's program generator and interpreter: from
 * a seed, it builds a random driver-API program (launches of the test
 * kernels with random arguments, copies of every kind from and to pinned and
 * pageable memory, memsets, syncs and queries, events, several streams: the
 * legacy one, the per-thread one, blocking and non-blocking ones, blocks of
 * ops repeated with and without changes, occasional allocations) and runs it,
 * printing one line with a checksum of everything it computed. Run with and
 * without the shim, the line must be identical (tests/fuzz/run_corpus.sh).
 *
 * On top of these base shapes, each selectable by a letter of SHAPES:
 *   p  pinned memory written in stream order and read back by host-to-device
 *      copies on the same stream with no host synchronization between: by a
 *      device-to-host copy (a bounce buffer), a host function
 *      (cuLaunchHostFunc), a kernel writing mapped pinned memory
 *      (CU_MEMHOSTALLOC_DEVICEMAP); lanes whose host memory is allocated
 *      pinned, mapped, or registered (cuMemHostRegister) and, at host
 *      checkpoints, unregistered and registered again (while unregistered it
 *      is pageable: copies from it are staged at the call, and the program
 *      overwrites it as soon as the call returns)
 *   t  two helper threads, each with work on its own per-thread default
 *      stream left unsynchronized, and issuing ops on the shared streams and
 *      the legacy stream; the main thread hands each op to its thread and
 *      waits until it is issued (a condition variable), so the order of the
 *      calls is the same on every run
 *   c  contexts created (cuCtxCreate pushes them), used for an allocation, a
 *      memset and a free, and popped, while the streams hold work
 *   d  teardown calls while the streams hold work: a retain and a release of
 *      the primary context (its count never reaching zero), cuCtxDestroy of
 *      an unrelated context
 *   s  a created stream destroyed with work queued and replaced by one of
 *      the same or the other kind (the driver may hand out the same handle),
 *      sometimes while the issuing thread has a stream capture of its own
 *      open on another stream (thread-local mode; ended and the graph
 *      destroyed after the swap)
 *   n  blocks repeated with no synchronization at all, within or between
 *      their repetitions
 *   g  geometry that changes between repetitions (issue 17): an op that
 *      varies also varies its grid (1 to 3 blocks) and its element count
 *      (N down to N - 96), and with it its copy's or memset's size
 *   f  fork and join (issue 16): a non-blocking lane records an event,
 *      another non-blocking lane waits on it and reads the first lane's
 *      buffer, records an event the first lane waits on (so that its later
 *      writes wait for the read); sometimes with an event created for the
 *      step and destroyed while the wait is pending, the legacy stream also
 *      waiting on the join, or the host querying it (after synchronizing
 *      the stream that recorded it, its answer is part of the checksum)
 *   j  the fork/join shapes of issue 26: a step between two created lanes of
 *      any blocking flags (a blocking side lane of a non-blocking home
 *      included) that forks by an event, runs the side lane's kernels on
 *      its own buffers and joins back (the home lane waits on the side's
 *      last record, then runs a kernel, sometimes reading the side's buffer
 *      and handing it back by another event); sometimes the fork event
 *      recorded again by the side lane as its join, after another event
 *      (finding 4's shape); sometimes the legacy stream held
 *      (cuStreamWaitValue32) and writing a blocking side lane's buffer
 *      before the step, released by the host once the step is issued;
 *      sometimes a step that stops before its join, its side lane held by
 *      such a wait, followed at once by the whole step; and the host's
 *      questions after it, whose answers go into the checksum: after
 *      synchronizing the join event, is the side lane idle, is the event
 *      recorded before it complete; after synchronizing an event the home
 *      lane recorded last, is the home lane idle. Besides, a lane held by
 *      such a wait replays a step with a staged copy behind it while steps
 *      on another lane are learnt (each synchronized), and only then does
 *      the host release it (with REPRISE_MAX_GRAPHS=2, one of
 *      run_corpus.sh's configurations, captures evict graphs meanwhile);
 *      its kernel changes for good after three repetitions. Every program
 *      has a watchdog: a run that hangs prints `error: hung: ...` after
 *      5 s (a mismatch)
 *   a  families of steps that begin alike and part (issue 36): two or three
 *      variants of a block of kernels on one created lane, each step ended
 *      by synchronizing the lane, the variants differing from one of their
 *      ops on (there in its scalar or its kernel, and maybe in kernels
 *      after it), repeated in a random order, so that the engine learns a
 *      sequence of each and matches them as several candidates that part;
 *      from halfway on, one step in three takes another variant's scalars
 *      where their kernels agree (a candidate kept with a field taken as
 *      volatile for the occurrence, a change of the candidate that lends
 *      its records)
 *
 * The programs are race-free by construction, so that their output is
 * deterministic: each stream ("lane") owns its device buffers and its host
 * buffer; the legacy stream may also touch the buffers of the lanes that are
 * blocking streams at that moment, with which it is implicitly ordered (the
 * rule under test), including the per-thread streams of every thread; host
 * memory is read or refilled by the program only after a context
 * synchronization, and written in stream order only by the lane's own
 * stream (or the legacy stream, for a blocking lane). A stream replaced
 * mid-program hands its order to its successor through events.
 * Usage: progfuzz MODULE SEED [OPS [SHAPES]]
 *   OPS: rough number of ops (default 300); SHAPES: letters of the shapes
 *   above (default "ptcdsngfj": all but a), "-" for the base shapes only */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 256u
#define BUFS 3           /* device buffers per lane */
/* Lanes: 0, 1 created blocking; 2 the main thread's per-thread stream; 3, 4
 * created non-blocking (lanes 0, 1, 3, 4 may change kind when replaced);
 * 5, 6 the per-thread streams of helper threads 1 and 2. */
#define LANES 7
#define LEGACY LANES     /* pseudo-lane: the legacy stream */
#define HELPERS 2
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

/* The shapes enabled (SHAPES). */
static int sh_pinned, sh_threads, sh_ctx, sh_teardown, sh_streams, sh_nosync, sh_geometry,
    sh_fork, sh_fj, sh_alike;

enum op_kind {
    OP_AXPY, OP_SCALE, OP_STENCIL, OP_IOTA, OP_HTOD_PINNED, OP_HTOD_PAGEABLE, OP_DTOH_PINNED,
    OP_DTOD_ASYNC, OP_DTOD_SYNC, OP_MEMSET32, OP_MEMSET8_SYNC, OP_STREAM_SYNC, OP_QUERY,
    OP_EVENT, OP_SYNC_HTOD, OP_SYNC_DTOH, OP_TEMP, OP_CTX_SYNC,
    /* p */ OP_HOSTFN, OP_MAPPED_WRITE, OP_BOUNCE,
    /* c */ OP_CTX_DETOUR,
    /* d */ OP_RETAIN_RELEASE, OP_CTX_DESTROY_OTHER,
    /* s */ OP_RECREATE,
    /* f */ OP_XFER,
    /* j */ OP_FJSTEP, OP_HELD,
    OP_KINDS
};

/* How often each kind is drawn (relative); 0 where its shape is off. */
static unsigned int weight[OP_KINDS];

static int is_sync_kind(enum op_kind k)
{
    return k == OP_DTOD_SYNC || k == OP_MEMSET8_SYNC || k == OP_STREAM_SYNC ||
           k == OP_SYNC_HTOD || k == OP_SYNC_DTOH || k == OP_TEMP || k == OP_CTX_SYNC ||
           k == OP_CTX_DETOUR || k == OP_RETAIN_RELEASE || k == OP_CTX_DESTROY_OTHER ||
           k == OP_RECREATE || k == OP_HELD;
}

typedef struct op {
    enum op_kind kind;
    int lane, lane_b;     /* lane_b: the lane of the buffers (legacy ops) */
    int thr;              /* the thread that issues it: 0 main, 1.. helpers */
    int a, b;             /* buffer indices within the lanes */
    int region;           /* which half of the lane's host buffer */
    float f;              /* a scalar argument */
    uint32_t u;           /* a counter argument / memset value / variant */
    int varies;           /* the scalar changes with the repetition */
    int skip_at;          /* repetition at which this op is left out (-1: never) */
    int quiet;            /* in a block with no synchronization (j: no questions) */
} op;

static CUdevice dev;
static CUcontext ctx;
static CUfunction f_axpy, f_scale, f_stencil, f_iota;
static CUstream streams[LANES + 1];
static int blocking[LANES + 1];  /* the lane's stream is a blocking one now */
static CUstream capstream;       /* the program's own captures (s) */
static CUdeviceptr capbuf;
static CUdeviceptr bufs[LANES][BUFS];
/* A lane's host buffer: 2N floats, [0,N) sources, [N,2N) destinations.
 * kind 0 pinned, 1 pinned and mapped, 2 registered (mapped) program memory. */
static float *pinned[LANES];
static int host_kind[LANES];
static int host_pinned[LANES];   /* pinned now (a registered one may not be) */
static CUdeviceptr host_dev[LANES];
static CUevent ev, ev_old, ev_leg, ev_fork, ev_join;
/* j: the step's events (fork, join, the one recorded before the join when
 * the fork event is recorded again, the hand-back, the home lane's last),
 * the value the host-released waits wait for (each waits for a higher one
 * and is released within its op) and the stream that writes it. */
static CUevent ev_fjf, ev_fjj, ev_fjm, ev_fjb, ev_fje;
static CUdeviceptr held_flag;
static cuuint32_t held_count;
static CUstream wstream;
static uint64_t acc = 0x66757a7aull, nops;
/* Calls of the host function per lane: changed only by the host function,
 * which runs in the order of the streams that use the lane's buffer. */
static uint32_t hostfn_calls[LANES];
static CUcontext spare_ctx;      /* an unrelated context, for a later destroy */
static int extra_retains;
static int lane_used[LANES + 1];
static int lane_list[LANES + 1], nlanes;

/* The lane an op runs on, the lanes whose buffers it uses and the thread
 * that issues it. A legacy-stream op may use any lane's buffers: at run time
 * it moves on to the next lane that is a blocking stream at that moment. */
static void place(op *o)
{
    o->lane = lane_list[pick((unsigned int)nlanes)];
    o->lane_b = o->lane == LEGACY ? lane_list[pick((unsigned int)nlanes - 1)] : o->lane;
    o->a = (int)pick(BUFS);
    o->b = (int)pick(BUFS);
    if (o->lane == 2)
        o->thr = 0;
    else if (o->lane == 5 || o->lane == 6)
        o->thr = o->lane - 4;
    else
        o->thr = sh_threads ? (int)pick(HELPERS + 1) : 0;
}

static enum op_kind pick_kind(int nosync)
{
    unsigned int total = 0;
    for (int k = 0; k < OP_KINDS; k++)
        if (!nosync || !is_sync_kind((enum op_kind)k))
            total += weight[k];
    unsigned int w = pick(total);
    for (int k = 0; k < OP_KINDS; k++) {
        if (nosync && is_sync_kind((enum op_kind)k))
            continue;
        if (w < weight[k])
            return (enum op_kind)k;
        w -= weight[k];
    }
    return OP_AXPY;
}

static void gen_op(op *o, int nosync)
{
    memset(o, 0, sizeof *o);
    o->kind = pick_kind(nosync);
    place(o);
    if ((o->kind == OP_DTOD_SYNC || o->kind == OP_MEMSET8_SYNC || o->kind == OP_SYNC_HTOD ||
         o->kind == OP_SYNC_DTOH) && o->lane != LEGACY) {
        o->lane = LEGACY; /* the synchronous forms run on the legacy stream */
        o->lane_b = lane_list[pick((unsigned int)nlanes - 1)];
    }
    if ((o->kind == OP_HTOD_PINNED || o->kind == OP_DTOH_PINNED) && o->lane == LEGACY &&
        !sh_pinned) {
        o->lane = o->lane_b; /* base shapes: pinned buffers are a lane's own */
        if (o->lane == 2)
            o->thr = 0;
        else if (o->lane == 5 || o->lane == 6)
            o->thr = o->lane - 4;
    }
    if (o->kind == OP_RECREATE && o->lane != 0 && o->lane != 1 && o->lane != 3 && o->lane != 4)
        o->lane = o->lane_b = (int)(pick(2) * 3 + pick(2)); /* a created stream's lane */
    o->region = o->kind == OP_DTOH_PINNED ? 1 : 0;
    if (sh_pinned && (o->kind == OP_HTOD_PINNED || o->kind == OP_DTOH_PINNED ||
                      o->kind == OP_HOSTFN || o->kind == OP_MAPPED_WRITE || o->kind == OP_BOUNCE))
        o->region = (int)pick(2);
    if (o->kind == OP_XFER)
        o->region = !nosync; /* may synchronize the reading lane */
    o->quiet = nosync; /* j: the host asks nothing */
    o->f = (float)(int)(pick(9) + 1) * 0.125f;
    o->u = (uint32_t)pick(1000);
    o->varies = pick(3) == 0;
    o->skip_at = pick(6) == 0 ? (int)pick(6) : -1;
}

/* An op that interrupts a step: a read through the legacy stream of a
 * lane's buffers (of another thread's per-thread stream, with t), a context
 * created and popped (c), a teardown call (d), a stream replaced (s).
 * Returns 0 when no such shape is enabled. */
static int gen_interrupter(op *o)
{
    enum op_kind k[8];
    int nk = 0;
    if (sh_threads || sh_streams) {
        k[nk++] = OP_SYNC_DTOH;
        k[nk++] = OP_AXPY;
    }
    if (sh_ctx)
        k[nk++] = OP_CTX_DETOUR;
    if (sh_teardown) {
        k[nk++] = OP_RETAIN_RELEASE;
        k[nk++] = OP_CTX_DESTROY_OTHER;
    }
    if (sh_streams)
        k[nk++] = OP_RECREATE;
    if (nk == 0)
        return 0;
    gen_op(o, 0);
    o->kind = k[pick((unsigned int)nk)];
    o->skip_at = -1;
    if (o->kind == OP_SYNC_DTOH || o->kind == OP_AXPY) {
        o->lane = LEGACY;
        o->lane_b = lane_list[pick((unsigned int)nlanes - 1)];
    }
    if (o->kind == OP_RECREATE)
        o->lane = o->lane_b = (int)(pick(2) * 3 + pick(2));
    if (o->lane == 2)
        o->thr = 0; /* lane 2 is the main thread's per-thread stream */
    return 1;
}

static CUdeviceptr buf(int lane, int i) { return bufs[lane][i]; }

/* A host function: fills a half of a lane's pinned buffer, in stream order
 * on a driver thread. Everything it needs is in its argument's value. */
static void CUDA_CB host_fill(void *arg)
{
    uintptr_t v = (uintptr_t)arg;
    int lane = (int)(v & 15u), region = (int)((v >> 4) & 1u);
    uint32_t u = (uint32_t)(v >> 8) + hostfn_calls[lane]++;
    float *p = pinned[lane] + (size_t)region * N;
    for (unsigned int i = 0; i < N; i++)
        p[i] = (float)((i * 5u + u) % 29u) * 0.25f;
}

/* A context of its own: created (and so made current), used, popped; then
 * destroyed at once or kept for a later OP_CTX_DESTROY_OTHER. */
static void ctx_detour(uint32_t u, int keep)
{
    CUcontext c2, popped;
    CUdeviceptr tmp;
    CK(cuCtxCreate, (&c2, NULL, 0, dev));
    CK(cuMemAlloc, (&tmp, 4096));
    if (u & 1) {
        CK(cuMemsetD32Async, (tmp, u, 1024, CU_STREAM_LEGACY)); /* the new context's */
        CK(cuStreamSynchronize, (CU_STREAM_LEGACY));
    } else {
        CK(cuMemsetD8, (tmp, (unsigned char)u, 4096));
    }
    CK(cuMemFree, (tmp));
    CK(cuCtxPopCurrent, (&popped));
    if (popped != c2)
        app_die("cuCtxPopCurrent did not pop the context cuCtxCreate pushed");
    if (keep && !spare_ctx)
        spare_ctx = c2;
    else
        CK(cuCtxDestroy, (c2));
}

/* Replaces lane l's stream with a new one of the given kind, with the old
 * one's work still queued. The new stream waits for the old one's work and
 * for the legacy stream's (which may have used the lane's buffers), and the
 * legacy stream waits for the old one's work (the old stream may have been
 * non-blocking, and whether the driver orders the legacy stream after a
 * destroyed blocking stream's work is not documented). With `capture`, the destroy and the create
 * happen while this thread captures on capstream. */
static void recreate(int l, int new_blocking, int capture)
{
    CUstream old = streams[l], s;
    CK(cuEventRecord, (ev_old, old));
    CK(cuEventRecord, (ev_leg, CU_STREAM_LEGACY));
    if (capture) {
        int32_t n = N;
        float step = 1.0f, base = 0.0f;
        void *args[] = { &capbuf, &n, &step, &base };
        CK(cuStreamBeginCapture, (capstream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        CK(cuLaunchKernel, (f_iota, 2, 1, 1, TK_BLOCK, 1, 1, 0, capstream, args, NULL));
    }
    CK(cuStreamDestroy, (old));
    CK(cuStreamCreate, (&s, new_blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING));
    if (capture) {
        CUgraph g;
        CK(cuStreamEndCapture, (capstream, &g));
        CK(cuGraphDestroy, (g));
    }
    CK(cuStreamWaitEvent, (s, ev_old, 0));
    CK(cuStreamWaitEvent, (s, ev_leg, 0));
    CK(cuStreamWaitEvent, (CU_STREAM_LEGACY, ev_old, 0));
    streams[l] = s;
    blocking[l] = new_blocking;
}

/* j: another created lane than `lane` (lanes 0, 1, 3 and 4 are always in
 * use), chosen by `u`, of either blocking flag. */
static int other_created(int lane, uint32_t u)
{
    static const int created[] = {0, 1, 3, 4};
    for (int i = 0; i < 4; i++) {
        int l = created[(i + (int)u) % 4];
        if (l != lane)
            return l;
    }
    return -1;
}

static int is_created(int lane)
{
    return lane == 0 || lane == 1 || lane == 3 || lane == 4;
}

/* A host-released wait: `s` waits until the host writes a value at least
 * this one's (held_release), which the op that made it does before it
 * ends, before any call that could wait for `s`. */
static cuuint32_t held_wait(CUstream s)
{
    CK(cuStreamWaitValue32, (s, held_flag, ++held_count, CU_STREAM_WAIT_VALUE_GEQ));
    return held_count;
}

static void held_release(cuuint32_t v)
{
    CK(cuStreamWriteValue32, (wstream, held_flag, v, 0));
}

/* The host's question, its answer into the checksum (complete or idle,
 * eagerly, whenever j asks). */
static void answer(CUresult r, const char *call)
{
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
        app_fail(call, (int)r);
    acc = app_hash_u64(acc, (uint64_t)r);
}

/* One fork/join step of shape j from home lane A to side lane B (see the
 * top): B's kernels touch only B's buffers; A's kernel after the join its
 * own, or (back) reads B's and hands it back by an event B waits on, so
 * that B's later writes come after the read. Returns the join event. */
static CUevent fj_step(int A, int B, const op *o, uint32_t bits, float f, int32_t n,
                       unsigned int grid, int join)
{
    CUstream sa = streams[A], sb = streams[B];
    int reuse = bits & 1, back = bits & 32;
    CUevent J = reuse ? ev_fjf : ev_fjj;
    CUdeviceptr yb = buf(B, o->b), yb2 = buf(B, (o->b + 1) % BUFS), xa = buf(A, o->a);
    float decay = 0.75f;
    uint32_t it = bits >> 8;
    CK(cuEventRecord, (ev_fjf, sa));
    CK(cuStreamWaitEvent, (sb, ev_fjf, 0));
    void *sargs[] = { &yb, &n, &decay, &f, &it };
    CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, sb, sargs, NULL));
    if (reuse)
        CK(cuEventRecord, (ev_fjm, sb));
    void *aargs[] = { &yb, &yb2, &f, &n };
    CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, sb, aargs, NULL));
    CK(cuEventRecord, (J, sb)); /* reuse: the fork event again, B's last op */
    if (!join)
        return J;
    CK(cuStreamWaitEvent, (sa, J, 0));
    if (back) {
        void *args[] = { &xa, &yb, &f, &n };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, sa, args, NULL));
        CK(cuEventRecord, (ev_fjb, sa));
        CK(cuStreamWaitEvent, (sb, ev_fjb, 0));
    } else {
        void *args[] = { &xa, &n, &decay, &f, &it };
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, sa, args, NULL));
    }
    if (bits & 4)
        CK(cuEventRecord, (ev_fje, sa)); /* A's last op */
    return J;
}

static void run_op(const op *o, unsigned int rep)
{
    CUstream s = streams[o->lane];
    int L = o->lane_b;
    while (o->lane == LEGACY && (!blocking[L] || !lane_used[L]))
        L = (L + 1) % LANES; /* a non-blocking stream's: not ordered with legacy */
    int32_t n = N;
    unsigned int grid = 2;
    if (sh_geometry && o->varies) {
        grid = 1 + rep % 3;
        n = (int32_t)(N - 32u * (rep % 4));
    }
    size_t bytes = (size_t)n * sizeof(float);
    float f = o->varies ? o->f + 0.0625f * (float)(rep % 5) : o->f;
    uint32_t u = o->varies ? o->u + rep : o->u;
    CUdeviceptr x = buf(L, o->a), y = buf(L, o->b);
    float *host = pinned[L] + (size_t)o->region * N;
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
        CK(cuMemcpyHtoDAsync, (x, host, bytes, s));
        if (!host_pinned[L]) /* pageable now: the copy has staged it */
            for (unsigned int i = 0; i < N; i++)
                host[i] = (float)(i % 11u) * -3.0f;
        break;
    case OP_HTOD_PAGEABLE: {
        float *h = malloc(N * sizeof(float));
        if (!h)
            app_die("out of host memory");
        for (unsigned int i = 0; i < N; i++)
            h[i] = (float)(i % 17) * f;
        CK(cuMemcpyHtoDAsync, (x, h, bytes, s));
        memset(h, 0xee, N * sizeof(float)); /* the driver (or the shim) staged it */
        free(h);
        break;
    }
    case OP_DTOH_PINNED: /* into pageable memory, it returns once done */
        CK(cuMemcpyDtoHAsync, (host, x, bytes, s));
        break;
    case OP_DTOD_ASYNC:
        if (o->a != o->b)
            CK(cuMemcpyDtoDAsync, (y, x, bytes, s));
        break;
    case OP_DTOD_SYNC:
        if (o->a != o->b)
            CK(cuMemcpyDtoD, (y, x, bytes));
        break;
    case OP_MEMSET32:
        CK(cuMemsetD32Async, (x, 0x3f800000u + u, (size_t)n, s));
        break;
    case OP_MEMSET8_SYNC:
        CK(cuMemsetD8, (x, (unsigned char)u, bytes));
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
    case OP_HOSTFN: /* a pageable buffer would be read by copies at the call */
        if (host_pinned[L])
            CK(cuLaunchHostFunc, (s, host_fill,
                                  (void *)(uintptr_t)((unsigned)L | (unsigned)o->region << 4 |
                                                      (uintptr_t)u << 8)));
        break;
    case OP_MAPPED_WRITE: /* a kernel writes the host buffer through its device address */
        if (host_pinned[L] && host_dev[L]) {
            CUdeviceptr hd = host_dev[L] + (CUdeviceptr)o->region * N * sizeof(float);
            if (u & 1) {
                void *args[] = { &hd, &x, &f, &n };
                CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
            } else {
                float base = (float)(u % 97u);
                void *args[] = { &hd, &n, &f, &base };
                CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
            }
        }
        break;
    case OP_BOUNCE: /* fill the pinned buffer in stream order, then read it */
        if (host_pinned[L]) {
            op w = *o;
            w.kind = u % 3 == 0 ? OP_DTOH_PINNED : u % 3 == 1 ? OP_HOSTFN : OP_MAPPED_WRITE;
            if (w.kind == OP_MAPPED_WRITE && !host_dev[L])
                w.kind = OP_DTOH_PINNED;
            run_op(&w, rep);
            w.kind = OP_HTOD_PINNED;
            w.a = o->b;
            run_op(&w, rep);
            nops -= 2;
        }
        break;
    case OP_CTX_DETOUR:
        ctx_detour(u, sh_teardown && (u & 2));
        break;
    case OP_RETAIN_RELEASE: {
        CUcontext again;
        if (u % 3 == 0 || (u % 3 == 1 && extra_retains == 0)) {
            CK(cuDevicePrimaryCtxRetain, (&again, dev));
            CK(cuDevicePrimaryCtxRelease, (dev));
        } else if (u % 3 == 1) {
            CK(cuDevicePrimaryCtxRelease, (dev)); /* the count stays above zero */
            extra_retains--;
        } else if (extra_retains < 3) {
            CK(cuDevicePrimaryCtxRetain, (&again, dev));
            extra_retains++;
        }
        break;
    }
    case OP_CTX_DESTROY_OTHER:
        if (!spare_ctx)
            ctx_detour(u, 1);
        CK(cuCtxDestroy, (spare_ctx));
        spare_ctx = NULL;
        break;
    case OP_XFER: { /* fork/join between two non-blocking lanes (see the top) */
        int A = o->lane, B = -1;
        static const int created[] = {0, 1, 3, 4};
        for (int i = 0; i < 4 && B < 0; i++) {
            int l = created[(i + (int)u) % 4];
            if (l != A && lane_used[l] && !blocking[l])
                B = l;
        }
        if (A == LEGACY || A == 2 || A >= 5 || blocking[A] || B < 0)
            break; /* not two non-blocking lanes now: nothing */
        CUevent e1 = ev_fork;
        if (u & 1)
            CK(cuEventCreate, (&e1, CU_EVENT_DISABLE_TIMING));
        CK(cuEventRecord, (e1, streams[A]));
        CK(cuStreamWaitEvent, (streams[B], e1, 0));
        if (u & 1)
            CK(cuEventDestroy, (e1)); /* with the wait pending: legal */
        CUdeviceptr yb = buf(B, o->b), xa = buf(A, o->a);
        void *args[] = { &yb, &xa, &f, &n };
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, streams[B], args, NULL));
        CK(cuEventRecord, (ev_join, streams[B]));
        CK(cuStreamWaitEvent, (streams[A], ev_join, 0));
        if (u & 2)
            CK(cuStreamWaitEvent, (CU_STREAM_LEGACY, ev_join, 0));
        if (u & 4) {
            CUresult r = cuEventQuery(ev_join);
            if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
                app_fail("cuEventQuery", (int)r);
        }
        if ((u & 8) && o->region) { /* recorded on B: complete once B is synchronized */
            CK(cuStreamSynchronize, (streams[B]));
            CUresult r = cuEventQuery(ev_join);
            acc = app_hash(acc, &r, sizeof r);
        }
        break;
    }
    case OP_FJSTEP: { /* j: a fork/join step (see the top and fj_step) */
        uint32_t bits = o->u;
        int A = o->lane, B = other_created(A, bits);
        if (!is_created(A) || B < 0)
            break;
        cuuint32_t release = 0;
        if ((bits & 64) && blocking[B]) {
            /* The legacy stream's work before the step, which B's ops wait
             * for (B is blocking), held until the step is issued. */
            CUdeviceptr yb2 = buf(B, (o->b + 1) % BUFS);
            float base = (float)(bits % 13u);
            release = held_wait(CU_STREAM_LEGACY);
            void *args[] = { &yb2, &n, &f, &base };
            CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY, args,
                                NULL));
        }
        if ((bits & 16) && rep % 3 == 2) {
            /* A step that stops before its join, B held; the whole step
             * follows at once. */
            release = held_wait(streams[B]);
            fj_step(A, B, o, bits, f, n, grid, 0);
        }
        CUevent J = fj_step(A, B, o, bits, f, n, grid, 1);
        if (release)
            held_release(release);
        if (o->quiet)
            break;
        if ((bits & 2) && !(bits & 32)) { /* J is B's last op */
            CK(cuEventSynchronize, (J));
            answer(cuStreamQuery(streams[B]), "cuStreamQuery");
        }
        if ((bits & 1) && (bits & 8)) { /* recorded on B before J's last record */
            CK(cuEventSynchronize, (J));
            answer(cuEventQuery(ev_fjm), "cuEventQuery");
        }
        if (bits & 4) { /* A's last op */
            CK(cuEventSynchronize, (ev_fje));
            answer(cuStreamQuery(streams[A]), "cuStreamQuery");
        }
        break;
    }
    case OP_HELD: { /* j: a replay behind a host-released wait (see the top) */
        int L = o->lane, M = other_created(L, o->u);
        if (!is_created(L) || M < 0)
            break;
        cuuint32_t v = held_wait(streams[L]);
        float *h = malloc(N * sizeof(float));
        if (!h)
            app_die("out of host memory");
        for (unsigned int i = 0; i < N; i++)
            h[i] = (float)((i * 3u + rep) % 19u) * f;
        CUdeviceptr xl = buf(L, o->a), yl = buf(L, (o->a + 1) % BUFS);
        CK(cuMemcpyHtoDAsync, (xl, h, bytes, streams[L]));
        memset(h, 0xee, N * sizeof(float)); /* staged at the call */
        free(h);
        if ((o->u & 1) && rep >= 3) { /* the step's structure changes for good */
            float wl = 0.25f, wr = 0.25f;
            void *args[] = { &yl, &xl, &n, &wl, &f, &wr };
            CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, streams[L], args, NULL));
        } else {
            void *args[] = { &yl, &xl, &f, &n };
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, streams[L], args, NULL));
        }
        /* Steps on another lane meanwhile, learnt and captured. */
        CUdeviceptr xm = buf(M, o->b), ym = buf(M, (o->b + 1) % BUFS);
        for (unsigned int k = 0; k <= o->u % 3u; k++) {
            float decay = 0.5f;
            uint32_t it = o->u;
            void *sargs[] = { &xm, &n, &decay, &f, &it };
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, streams[M], sargs, NULL));
            void *aargs[] = { &ym, &xm, &f, &n };
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, streams[M], aargs, NULL));
            CK(cuStreamSynchronize, (streams[M]));
        }
        held_release(v);
        break;
    }
    case OP_RECREATE: {
        int l = o->lane;
        int nb = (u & 3) ? !blocking[l] : blocking[l]; /* mostly the other kind */
        recreate(l, nb, (u & 4) != 0);
        break;
    }
    default:
        break;
    }
}

/* Helper threads: each runs the ops handed to it, one at a time, and the
 * main thread waits until the op is issued before it goes on. */
static pthread_mutex_t h_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t h_cv = PTHREAD_COND_INITIALIZER;
static struct helper {
    pthread_t t;
    int has_job, quit;
    op job;
    unsigned int rep;
} helpers[HELPERS + 1];

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    CK(cuCtxSetCurrent, (ctx));
    pthread_mutex_lock(&h_mu);
    for (;;) {
        while (!h->has_job && !h->quit)
            pthread_cond_wait(&h_cv, &h_mu);
        if (!h->has_job)
            break;
        pthread_mutex_unlock(&h_mu);
        run_op(&h->job, h->rep);
        pthread_mutex_lock(&h_mu);
        h->has_job = 0;
        pthread_cond_broadcast(&h_cv);
    }
    pthread_mutex_unlock(&h_mu);
    return NULL;
}

static void issue(const op *o, unsigned int rep)
{
    if (o->thr == 0) {
        run_op(o, rep);
        return;
    }
    struct helper *h = &helpers[o->thr];
    pthread_mutex_lock(&h_mu);
    h->job = *o;
    h->rep = rep;
    h->has_job = 1;
    pthread_cond_broadcast(&h_cv);
    while (h->has_job)
        pthread_cond_wait(&h_cv, &h_mu);
    pthread_mutex_unlock(&h_mu);
}

/* a: a family of steps that begin alike and part (the shape's comment at
 * the top). Op 0 of every variant changes its scalar at every step, so that
 * each variant's sequence has updates (only those are kept, widened, as
 * candidates that differ in a value); a value parting's op does not. */
static void alike_family(void)
{
    static const enum op_kind kernels[] = { OP_AXPY, OP_SCALE, OP_STENCIL, OP_IOTA };
    static const int created[] = { 0, 1, 3, 4 };
    int lane = created[pick(4)];
    unsigned int len = 4 + pick(MAXOPS - 5), nv = 2 + pick(2);
    op v[3][MAXOPS], sync;
    for (unsigned int i = 0; i < len; i++) {
        op *o = &v[0][i];
        memset(o, 0, sizeof *o);
        o->kind = kernels[pick(4)];
        o->lane = o->lane_b = lane;
        o->a = (int)pick(BUFS);
        o->b = (int)pick(BUFS);
        o->f = (float)(int)(pick(9) + 1) * 0.125f;
        o->u = (uint32_t)pick(1000);
        o->varies = i == 0 || pick(3) == 0;
        o->skip_at = -1;
    }
    for (unsigned int j = 1; j < nv; j++) {
        memcpy(v[j], v[0], len * sizeof v[0][0]);
        unsigned int p = 1 + pick(len - 1);
        if (pick(2)) { /* a value: the op's scalar, fixed in every variant */
            for (unsigned int m = 0; m <= j; m++)
                v[m][p].varies = 0;
            v[j][p].f += 0.25f * (float)j;
        } else { /* a kernel */
            unsigned int k = 0;
            while (kernels[k] != v[j][p].kind)
                k++;
            v[j][p].kind = kernels[(k + 1 + pick(3)) % 4];
        }
        for (unsigned int i = p + 1; i < len; i++)
            if (pick(3) == 0)
                v[j][i].kind = kernels[pick(4)];
    }
    memset(&sync, 0, sizeof sync);
    sync.kind = OP_STREAM_SYNC;
    sync.lane = sync.lane_b = lane;
    sync.skip_at = -1;
    unsigned int reps = 12 + pick(24);
    for (unsigned int r = 0; r < reps; r++) {
        unsigned int j = pick(nv), m = r >= reps / 2 && pick(3) == 0 ? pick(nv) : j;
        for (unsigned int i = 0; i < len; i++) {
            op o = v[j][i];
            if (v[m][i].kind == o.kind) { /* another variant's scalars */
                o.f = v[m][i].f;
                o.varies = v[m][i].varies;
            }
            issue(&o, r);
        }
        issue(&sync, r);
    }
}

/* Allocates (or registers) lane l's host buffer, of its kind. */
static void host_attach(int l)
{
    size_t bytes = 2 * N * sizeof(float);
    host_dev[l] = 0;
    if (host_kind[l] == 2) {
        CK(cuMemHostRegister, (pinned[l], bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
    } else {
        CK(cuMemHostAlloc, ((void **)&pinned[l], bytes,
                            host_kind[l] == 1 ? CU_MEMHOSTALLOC_DEVICEMAP : 0));
        memset(pinned[l], 0, bytes);
    }
    if (host_kind[l] >= 1)
        CK(cuMemHostGetDevicePointer, (&host_dev[l], pinned[l], 0));
    host_pinned[l] = 1;
}

/* After a context synchronize, host memory may be read and refilled, and a
 * registered buffer unregistered or registered again. */
static void host_checkpoint(unsigned int tag)
{
    CK(cuCtxSynchronize, ());
    for (int l = 0; l < LANES; l++) {
        if (!lane_used[l])
            continue;
        acc = app_hash(acc, pinned[l] + N, N * sizeof(float));
        for (unsigned int i = 0; i < N; i++)
            pinned[l][i] = (float)((i + tag * 3u + (unsigned int)l) % 23u) * 0.5f;
        if (host_kind[l] == 2 && pick(6) == 0) {
            if (host_pinned[l]) {
                CK(cuMemHostUnregister, (pinned[l]));
                host_pinned[l] = 0;
                host_dev[l] = 0;
            } else {
                host_attach(l);
            }
        }
    }
}

static void parse_shapes(const char *s)
{
    if (!strcmp(s, "-"))
        return;
    for (; *s; s++) {
        switch (*s) {
        case 'p': sh_pinned = 1; break;
        case 't': sh_threads = 1; break;
        case 'c': sh_ctx = 1; break;
        case 'd': sh_teardown = 1; break;
        case 's': sh_streams = 1; break;
        case 'n': sh_nosync = 1; break;
        case 'g': sh_geometry = 1; break;
        case 'f': sh_fork = 1; break;
        case 'j': sh_fj = 1; break;
        case 'a': sh_alike = 1; break;
        default:
            fprintf(stderr, "progfuzz: unknown shape '%c' (want letters of ptcdsngfja, or -)\n", *s);
            exit(2);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODULE SEED [OPS [SHAPES]]\n", argv[0]);
        return 2;
    }
    uint64_t seed = strtoull(argv[2], NULL, 0);
    app_watchdog("progfuzz", 5);
    long budget = argc > 3 ? atol(argv[3]) : 300;
    parse_shapes(argc > 4 ? argv[4] : "ptcdsngfj");
    rng_state = seed;
    for (int k = 0; k < OP_KINDS; k++)
        weight[k] = k <= OP_CTX_SYNC ? 10 : 0;
    if (sh_pinned)
        weight[OP_HOSTFN] = weight[OP_MAPPED_WRITE] = weight[OP_HTOD_PINNED] =
            weight[OP_DTOH_PINNED] = weight[OP_BOUNCE] = 15;
    if (sh_ctx)
        weight[OP_CTX_DETOUR] = 2;
    if (sh_teardown)
        weight[OP_RETAIN_RELEASE] = weight[OP_CTX_DESTROY_OTHER] = 2;
    if (sh_streams)
        weight[OP_RECREATE] = 3;
    if (sh_fork)
        weight[OP_XFER] = 15;
    if (sh_fj)
        weight[OP_FJSTEP] = 12, weight[OP_HELD] = 5;
    nlanes = 0;
    for (int l = 0; l < LANES; l++)
        if (sh_threads || l < 5)
            lane_list[nlanes++] = l;
    lane_list[nlanes++] = LEGACY; /* last: place() leaves it out for lane_b */
    for (int i = 0; i < nlanes; i++)
        lane_used[lane_list[i]] = 1;

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
    streams[2] = streams[5] = streams[6] = CU_STREAM_PER_THREAD;
    CK(cuStreamCreate, (&streams[3], CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&streams[4], CU_STREAM_NON_BLOCKING));
    streams[LEGACY] = CU_STREAM_LEGACY;
    for (int l = 0; l <= LANES; l++)
        blocking[l] = l != 3 && l != 4;
    CK(cuEventCreate, (&ev, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&ev_old, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&ev_leg, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&ev_fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&ev_join, CU_EVENT_DISABLE_TIMING));
    if (sh_fj) {
        CUevent *fj[] = { &ev_fjf, &ev_fjj, &ev_fjm, &ev_fjb, &ev_fje };
        for (size_t i = 0; i < sizeof fj / sizeof fj[0]; i++)
            CK(cuEventCreate, (fj[i], CU_EVENT_DISABLE_TIMING));
        CK(cuStreamCreate, (&wstream, CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc, (&held_flag, sizeof(uint32_t)));
        CK(cuMemsetD32, (held_flag, 0, 1));
    }
    if (sh_streams) {
        CK(cuStreamCreate, (&capstream, CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc, (&capbuf, N * sizeof(float)));
    }
    for (int l = 0; l < LANES; l++) {
        if (!lane_used[l])
            continue;
        for (int b = 0; b < BUFS; b++) {
            CK(cuMemAlloc, (&bufs[l][b], N * sizeof(float)));
            CK(cuMemsetD32, (bufs[l][b], 0x3f800000u + (unsigned int)(l * BUFS + b), N));
        }
        host_kind[l] = sh_pinned ? (int)pick(3) : 0;
        if (host_kind[l] == 2) {
            pinned[l] = aligned_alloc(4096, 4096); /* 2N floats, page-aligned */
            if (!pinned[l])
                app_die("out of host memory");
            memset(pinned[l], 0, 4096);
        }
        host_attach(l);
    }
    if (sh_threads)
        for (int t = 1; t <= HELPERS; t++)
            if (pthread_create(&helpers[t].t, NULL, helper_main, &helpers[t]) != 0)
                app_die("pthread_create failed");
    host_checkpoint(0);

    unsigned int tag = 1;
    while ((long)nops < budget) {
        if (sh_alike && pick(3) == 0) {
            alike_family();
            continue;
        }
        op block[MAXOPS];
        int nosync = sh_nosync && pick(4) == 0; /* no synchronization at all */
        unsigned int len = 2 + pick(MAXOPS - 1);
        for (unsigned int i = 0; i < len; i++)
            gen_op(&block[i], nosync);
        unsigned int reps = 1 + pick(nosync ? 12 : 8);
        int rotate = pick(4) == 0; /* rotate the buffers with the repetition */
        /* The last repetition may be interrupted after op `cut` by an op of
         * a new shape (ptlegacy and midseq in tests/apps have this shape:
         * a step learnt, then interrupted while a shim holds its start),
         * and then finished or left unfinished. */
        unsigned int cut = pick(2) == 0 ? 1 + pick(len - 1) : len;
        int stop = pick(2);
        op intr;
        int has_intr = cut < len && gen_interrupter(&intr);
        for (unsigned int r = 0; r < reps; r++) {
            for (unsigned int i = 0; i < len; i++) {
                if (r == reps - 1 && i == cut) {
                    if (has_intr)
                        issue(&intr, r);
                    if (stop)
                        break;
                }
                if (block[i].skip_at == (int)r)
                    continue;
                op o = block[i];
                if (rotate) {
                    o.a = (o.a + (int)r) % BUFS;
                    o.b = (o.b + (int)r) % BUFS;
                }
                issue(&o, r);
            }
            if (!nosync && pick(3) == 0)
                host_checkpoint(tag++);
        }
    }
    host_checkpoint(tag);
    if (sh_threads) {
        pthread_mutex_lock(&h_mu);
        for (int t = 1; t <= HELPERS; t++)
            helpers[t].quit = 1;
        pthread_cond_broadcast(&h_cv);
        pthread_mutex_unlock(&h_mu);
        for (int t = 1; t <= HELPERS; t++)
            pthread_join(helpers[t].t, NULL);
    }
    for (int l = 0; l < LANES; l++) {
        if (!lane_used[l])
            continue;
        for (int b = 0; b < BUFS; b++) {
            float h[N];
            CK(cuMemcpyDtoH, (h, bufs[l][b], sizeof h));
            acc = app_hash(acc, h, sizeof h);
            CK(cuMemFree, (bufs[l][b]));
        }
        if (host_kind[l] == 2) {
            if (host_pinned[l])
                CK(cuMemHostUnregister, (pinned[l]));
            free(pinned[l]);
        } else {
            CK(cuMemFreeHost, (pinned[l]));
        }
    }
    acc = app_hash(acc, hostfn_calls, sizeof hostfn_calls);
    printf("fuzz seed %llu ops %llu checksum %016llx\n", (unsigned long long)seed,
           (unsigned long long)nops, (unsigned long long)acc);
    CK(cuEventDestroy, (ev));
    CK(cuEventDestroy, (ev_old));
    CK(cuEventDestroy, (ev_leg));
    if (sh_fj) {
        CUevent fj[] = { ev_fjf, ev_fjj, ev_fjm, ev_fjb, ev_fje };
        for (size_t i = 0; i < sizeof fj / sizeof fj[0]; i++)
            CK(cuEventDestroy, (fj[i]));
        CK(cuMemFree, (held_flag));
        CK(cuStreamDestroy, (wstream));
    }
    if (sh_streams) {
        CK(cuMemFree, (capbuf));
        CK(cuStreamDestroy, (capstream));
    }
    for (int l = 0; l < LANES; l++)
        if (l != 2 && l != 5 && l != 6)
            CK(cuStreamDestroy, (streams[l]));
    if (spare_ctx)
        CK(cuCtxDestroy, (spare_ctx));
    while (extra_retains-- > 0)
        CK(cuDevicePrimaryCtxRelease, (dev));
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
    return 0;
}
