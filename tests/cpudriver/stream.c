/* stream.c - streams and their work queues. Every stream (legacy, per-thread
 * and created) has a FIFO of ops and one worker thread that runs them, so
 * all work is asynchronous to the host. Implicit ordering (the legacy-stream
 * rule) and event waits are fences: (stream, sequence) positions an op must
 * wait for before it runs. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cc__stream_blocking(const cc_stream *s)
{
    if (s->kind == CC_S_PER_THREAD) return true;
    if (s->kind == CC_S_LEGACY) return false; /* it is the other side of the rule */
    return !(s->flags & CU_STREAM_NON_BLOCKING);
}

void cc__stream_ref(cc_stream *s) { s->refs++; }

/* Freed streams are kept (a few) and handed out again, newest first, so
 * that a destroyed stream's handle comes back for the next stream created,
 * as a real driver's may: a program, or a shim, that keeps state by handle
 * must not assume a handle names one stream forever. Under the global lock. */
#define RECYCLE_MAX 16
static cc_stream *recycled[RECYCLE_MAX];
static size_t nrecycled;

void cc__stream_unref(cc_stream *s)
{
    if (--s->refs > 0) return;
    pthread_cond_destroy(&s->work);
    free(s->cap_deps);
    if (nrecycled < RECYCLE_MAX) recycled[nrecycled++] = s;
    else free(s);
}

static cc_stream *stream_alloc(void)
{
    if (!nrecycled) return calloc(1, sizeof(cc_stream));
    cc_stream *s = recycled[--nrecycled];
    memset(s, 0, sizeof *s);
    return s;
}

static void unlink_from_ctx(cc_stream *s)
{
    for (cc_stream **pp = &s->ctx->streams; *pp; pp = &(*pp)->next_in_ctx)
        if (*pp == s) { *pp = s->next_in_ctx; break; }
}

static void *worker(void *arg)
{
    cc_stream *s = arg;
    cc__lock();
    for (;;) {
        while (!s->head && !s->dying) pthread_cond_wait(&s->work, &cc__g.mu);
        if (!s->head) break;
        cc_op *op = s->head;
        for (size_t i = 0; i < op->nfences; i++)
            while (op->fences[i].s->completed < op->fences[i].seq)
                pthread_cond_wait(&cc__g.progress, &cc__g.mu);
        unsigned delay = cc__g.delay_us;
        cc__unlock();
        if (delay) usleep(delay);
        cc__work_run(&op->w, false);
        cc__lock();
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        s->completed++;
        for (size_t i = 0; i < op->nfences; i++) cc__stream_unref(op->fences[i].s);
        cc__work_free(&op->w);
        free(op->fences);
        free(op);
        pthread_cond_broadcast(&cc__g.progress);
    }
    /* Retired and drained: stop the graph helpers (idle now), leave the
     * context's list (the legacy rule no longer needs to wait for us) and
     * drop the worker's reference. */
    cc__graph_thread_end();
    if (s->ctx->streams) unlink_from_ctx(s);
    cc__stream_unref(s);
    cc__unlock();
    return NULL;
}

cc_stream *cc__stream_new(cc_ctx *c, enum cc_stream_kind k, unsigned flags)
{
    cc_stream *s = stream_alloc();
    if (!s) return NULL;
    s->ctx = c;
    s->kind = k;
    s->flags = flags;
    s->id = cc__g.next_id++;
    s->refs = 2; /* the worker's and the owner's */
    pthread_cond_init(&s->work, NULL);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &a, worker, s);
    pthread_attr_destroy(&a);
    if (e) {
        pthread_cond_destroy(&s->work);
        free(s);
        return NULL;
    }
    s->next_in_ctx = c->streams;
    c->streams = s;
    return s;
}

void cc__stream_retire(cc_stream *s)
{
    s->dead = true;
    s->dying = true;
    pthread_cond_signal(&s->work);
    cc__stream_unref(s);
}

/* The per-thread stream of the calling thread in c, created on first use. */
static cc_stream *per_thread(cc_ctx *c)
{
    pthread_t me = pthread_self();
    for (cc_stream *s = c->streams; s; s = s->next_in_ctx)
        if (s->kind == CC_S_PER_THREAD && !s->dead && pthread_equal(s->owner, me)) return s;
    cc_stream *s = cc__stream_new(c, CC_S_PER_THREAD, 0);
    if (s) s->owner = me;
    return s;
}

CUresult cc__stream_get(CUstream h, bool pt, cc_stream **out)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        cc_ctx *c;
        CUresult r = cc__ctx_current(&c);
        if (r) return r;
        bool want_pt = h == CU_STREAM_PER_THREAD || (h == NULL && pt);
        cc_stream *s = want_pt ? per_thread(c) : c->legacy;
        if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
        *out = s;
        return CUDA_SUCCESS;
    }
    cc_stream *s = (cc_stream *)h;
    if (!cc__handle_is(s, CC_K_STREAM) || s->dead) return CUDA_ERROR_INVALID_HANDLE;
    if (!cc__ctx_ok(s->ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *out = s;
    return CUDA_SUCCESS;
}

CUresult cc__legacy_use(cc_stream *s)
{
    if (s->kind != CC_S_LEGACY) return CUDA_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    for (cc_stream *b = s->ctx->streams; b; b = b->next_in_ctx)
        if (b->cap && cc__stream_blocking(b)) {
            if (!b->cap->invalid)
                cc__capture_invalidate(b->cap, "legacy stream used while a blocking stream captures");
            r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    return r;
}

static CUresult add_fence(cc_fence **f, size_t *n, size_t *cap, cc_stream *s, unsigned long long seq)
{
    if (s->completed >= seq) return CUDA_SUCCESS;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        cc_fence *nf = realloc(*f, nc * sizeof *nf);
        if (!nf) return CUDA_ERROR_OUT_OF_MEMORY;
        *f = nf;
        *cap = nc;
    }
    (*f)[(*n)++] = (cc_fence){s, seq};
    return CUDA_SUCCESS;
}

CUresult cc__submit(cc_stream *s, cc_work *w, const cc_fence *extra, size_t nextra,
                    unsigned long long *seq)
{
    cc_op *op = calloc(1, sizeof *op);
    if (!op) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t cap = 0;
    CUresult r = CUDA_SUCCESS;
    /* The legacy-stream rule, as positions to wait for. */
    if (s->kind == CC_S_LEGACY) {
        for (cc_stream *b = s->ctx->streams; b && !r; b = b->next_in_ctx)
            if (b != s && cc__stream_blocking(b))
                r = add_fence(&op->fences, &op->nfences, &cap, b, b->submitted);
    } else if (cc__stream_blocking(s) && s->ctx->legacy) {
        r = add_fence(&op->fences, &op->nfences, &cap, s->ctx->legacy, s->ctx->legacy->submitted);
    }
    for (size_t i = 0; i < nextra && !r; i++)
        if (extra[i].s != s) r = add_fence(&op->fences, &op->nfences, &cap, extra[i].s, extra[i].seq);
    if (r) {
        free(op->fences);
        free(op);
        return r;
    }
    for (size_t i = 0; i < op->nfences; i++) cc__stream_ref(op->fences[i].s);
    op->w = *w;
    memset(w, 0, sizeof *w);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    s->submitted++;
    if (seq) *seq = s->submitted;
    pthread_cond_signal(&s->work);
    return CUDA_SUCCESS;
}

CUresult cc__stream_op(cc_stream *s, cc_work *w, bool *captured, unsigned long long *seq)
{
    bool cap = false;
    CUresult r = cc__capture_add(s, w, &cap, NULL);
    if (!r && !cap) r = cc__legacy_use(s);
    if (!r && !cap) r = cc__submit(s, w, NULL, 0, seq);
    if (r || cap) cc__work_free(w);
    if (captured) *captured = cap;
    return r;
}

void cc__wait(cc_stream *s, unsigned long long seq)
{
    while (s->completed < seq) pthread_cond_wait(&cc__g.progress, &cc__g.mu);
}

/* ---- entry points -------------------------------------------------------- */

static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) {
        cc_stream *s = cc__stream_new(c, CC_S_USER, flags);
        if (!s) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            /* Priorities are clamped like the driver's: [-5, 0]. */
            s->prio = prio > 0 ? 0 : prio < -5 ? -5 : prio;
            cc__handle_add(s, CC_K_STREAM);
            *ph = (CUstream)s;
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    CC_ENTER(cuStreamCreate);
    return stream_create(phStream, Flags, 0);
}

CC_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    CC_ENTER(cuStreamCreateWithPriority);
    return stream_create(phStream, flags, priority);
}

/* Destroys a created stream; queued work still completes. Refused (900,
 * capture invalidated) while the stream captures: the capture could never
 * be ended, and the real driver's behaviour there is undocumented. */
static CUresult stream_destroy(CUstream h)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(h, false, &s);
    if (!r && s->cap) {
        cc__capture_invalidate(s->cap, "capturing stream destroyed");
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!r) {
        cc__handle_del(s);
        cc__stream_retire(s);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamDestroy(CUstream hStream)
{
    CC_ENTER(cuStreamDestroy);
    return stream_destroy(hStream);
}

CC_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    CC_ENTER(cuStreamDestroy_v2);
    return stream_destroy(hStream);
}

/* Looks a stream up and runs the statements after it, locked; returns r_. */
#define WITH_STREAM(h, pt, ...)                                   \
    do {                                                           \
        CUresult r_ = cc__check_init();                            \
        if (r_) return r_;                                         \
        cc__lock();                                                \
        cc_stream *s;                                              \
        r_ = cc__stream_get((h), (pt), &s);                        \
        if (!r_) { __VA_ARGS__ }                                          \
        cc__unlock();                                              \
        return r_;                                                 \
    } while (0)

static CUresult get_flags(CUstream h, bool pt, unsigned *flags)
{
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, { *flags = s->flags; });
}

CC_EXPORT CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    CC_ENTER(cuStreamGetFlags);
    return get_flags(hStream, false, flags);
}

CC_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    CC_ENTER(cuStreamGetFlags_ptsz);
    return get_flags(hStream, true, flags);
}

static CUresult get_prio(CUstream h, bool pt, int *prio)
{
    if (!prio) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, { *prio = s->prio; });
}

CC_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
    CC_ENTER(cuStreamGetPriority);
    return get_prio(hStream, false, priority);
}

CC_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
    CC_ENTER(cuStreamGetPriority_ptsz);
    return get_prio(hStream, true, priority);
}

static CUresult get_ctx(CUstream h, bool pt, CUcontext *pctx)
{
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, { *pctx = (CUcontext)s->ctx; });
}

CC_EXPORT CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    CC_ENTER(cuStreamGetCtx);
    return get_ctx(hStream, false, pctx);
}

CC_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    CC_ENTER(cuStreamGetCtx_ptsz);
    return get_ctx(hStream, true, pctx);
}

static CUresult get_id(CUstream h, bool pt, unsigned long long *id)
{
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, { *id = s->id; });
}

CC_EXPORT CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    CC_ENTER(cuStreamGetId);
    return get_id(hStream, false, streamId);
}

CC_EXPORT CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
    CC_ENTER(cuStreamGetId_ptsz);
    return get_id(hStream, true, streamId);
}

/* Waits for the legacy stream of c and for what every blocking stream of c
 * had been given when called: the legacy stream "synchronizes with all other
 * streams except non-blocking ones", so synchronizing it waits as an action
 * on it would (and as cuStreamQuery of it reports NOT_READY meanwhile).
 * Unverified on a GPU: a driver that only inserts the waits when work is
 * queued on the legacy stream would wait only for blocking-stream work
 * queued before its last legacy op. The positions are taken first, each
 * stream held by a reference, because every wait drops the lock. */
static CUresult legacy_sync(cc_stream *l)
{
    size_t n = 0;
    for (cc_stream *b = l->ctx->streams; b; b = b->next_in_ctx) n++;
    cc_fence *f = calloc(n ? n : 1, sizeof *f);
    if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t k = 0;
    for (cc_stream *b = l->ctx->streams; b; b = b->next_in_ctx)
        if (b == l || cc__stream_blocking(b)) {
            cc__stream_ref(b);
            f[k++] = (cc_fence){b, b->submitted};
        }
    for (size_t i = 0; i < k; i++) {
        cc__wait(f[i].s, f[i].seq);
        cc__stream_unref(f[i].s);
    }
    free(f);
    return CUDA_SUCCESS;
}

/* Synchronize: 900 + invalidation for a capturing stream, 906 for the
 * legacy stream while a blocking stream captures. */
static CUresult stream_sync(CUstream h, bool pt)
{
    WITH_STREAM(h, pt, {
        r_ = cc__capture_forbid(s);
        if (!r_) r_ = cc__legacy_use(s);
        if (!r_ && s->kind == CC_S_LEGACY) {
            r_ = legacy_sync(s);
            if (!r_) cc__count(CC_C_SYNC_STREAM);
        } else if (!r_) {
            cc__count(CC_C_SYNC_STREAM);
            cc__stream_ref(s);
            cc__wait(s, s->submitted);
            cc__stream_unref(s);
        }
    });
}

CC_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    CC_ENTER(cuStreamSynchronize);
    return stream_sync(hStream, false);
}

CC_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    CC_ENTER(cuStreamSynchronize_ptsz);
    return stream_sync(hStream, true);
}

static CUresult stream_query(CUstream h, bool pt)
{
    WITH_STREAM(h, pt, {
        r_ = cc__capture_forbid(s);
        if (!r_) r_ = cc__legacy_use(s);
        if (!r_ && s->completed < s->submitted) r_ = CUDA_ERROR_NOT_READY;
        /* The legacy stream is also busy while blocking streams have work
         * it would wait for. */
        if (!r_ && s->kind == CC_S_LEGACY)
            for (cc_stream *b = s->ctx->streams; b; b = b->next_in_ctx)
                if (cc__stream_blocking(b) && b->completed < b->submitted) r_ = CUDA_ERROR_NOT_READY;
    });
}

CC_EXPORT CUresult cuStreamQuery(CUstream hStream)
{
    CC_ENTER(cuStreamQuery);
    return stream_query(hStream, false);
}

CC_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream)
{
    CC_ENTER(cuStreamQuery_ptsz);
    return stream_query(hStream, true);
}

static CUresult host_func(CUstream h, bool pt, CUhostFn fn, void *data)
{
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, {
        cc_work w = {.kind = CC_W_HOST, .ctx = s->ctx};
        w.u.h.fn = fn;
        w.u.h.data = data;
        r_ = cc__stream_op(s, &w, NULL, NULL);
    });
}

CC_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    CC_ENTER(cuLaunchHostFunc);
    return host_func(hStream, false, fn, userData);
}

CC_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    CC_ENTER(cuLaunchHostFunc_ptsz);
    return host_func(hStream, true, fn, userData);
}

/* ---- stream memory operations ------------------------------------------- */

/* cuStreamWriteValue32/64 and cuStreamWaitValue32/64, every ABI. The address
 * must be aligned to the value's size and lie in device memory or pinned
 * host memory (allocated or registered: this driver's device sees host
 * pointers, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM is 1). Write flags: v1
 * accepts NO_MEMORY_BARRIER, v2 does not ("not supported in the v2 API"):
 * NOT_SUPPORTED. Wait flags: GEQ, EQ, AND, NOR; FLUSH needs
 * CAN_FLUSH_REMOTE_WRITES (0 here): NOT_SUPPORTED; other bits INVALID_VALUE.
 * In a capturing stream: 900 and the capture is invalidated (strict: the
 * real driver may capture them as batch mem-op nodes; unverified). */
static CUresult mem_op(CUstream h, bool pt, CUdeviceptr addr, uint64_t value, unsigned flags, bool is64,
                       bool wait, bool v2)
{
    unsigned sz = is64 ? 8 : 4;
    if (wait) {
        if (flags & CU_STREAM_WAIT_VALUE_FLUSH) return CUDA_ERROR_NOT_SUPPORTED;
        if (flags > CU_STREAM_WAIT_VALUE_NOR) return CUDA_ERROR_INVALID_VALUE;
    } else {
        if (flags & ~(unsigned)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) return CUDA_ERROR_INVALID_VALUE;
        if (v2 && flags) return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (!addr || addr % sz) return CUDA_ERROR_INVALID_VALUE;
    WITH_STREAM(h, pt, {
        r_ = cc__mem_check_dev_or_pinned(addr, sz);
        if (!r_) r_ = cc__capture_forbid(s);
        if (!r_) {
            cc_work w = {.kind = wait ? CC_W_WAIT_VALUE : CC_W_WRITE_VALUE, .ctx = s->ctx};
            w.u.mo.p = addr;
            w.u.mo.v = value;
            w.u.mo.cond = wait ? flags : 0;
            w.u.mo.is64 = is64;
            r_ = cc__stream_op(s, &w, NULL, NULL);
        }
    });
}

#define MEM_OPS(name, T, is64, wait)                                                               \
    CC_EXPORT CUresult name(CUstream stream, CUdeviceptr addr, T value, unsigned int flags)        \
    {                                                                                              \
        CC_ENTER(name);                                                                            \
        return mem_op(stream, false, addr, value, flags, is64, wait, false);                       \
    }                                                                                              \
    CC_EXPORT CUresult name##_ptsz(CUstream stream, CUdeviceptr addr, T value, unsigned int flags) \
    {                                                                                              \
        CC_ENTER(name##_ptsz);                                                                     \
        return mem_op(stream, true, addr, value, flags, is64, wait, false);                        \
    }                                                                                              \
    CC_EXPORT CUresult name##_v2(CUstream stream, CUdeviceptr addr, T value, unsigned int flags)   \
    {                                                                                              \
        CC_ENTER(name##_v2);                                                                       \
        return mem_op(stream, false, addr, value, flags, is64, wait, true);                        \
    }                                                                                              \
    CC_EXPORT CUresult name##_v2_ptsz(CUstream stream, CUdeviceptr addr, T value,                  \
                                      unsigned int flags)                                          \
    {                                                                                              \
        CC_ENTER(name##_v2_ptsz);                                                                  \
        return mem_op(stream, true, addr, value, flags, is64, wait, true);                         \
    }

MEM_OPS(cuStreamWriteValue32, cuuint32_t, false, false)
MEM_OPS(cuStreamWaitValue32, cuuint32_t, false, true)
MEM_OPS(cuStreamWriteValue64, cuuint64_t, true, false)
MEM_OPS(cuStreamWaitValue64, cuuint64_t, true, true)
