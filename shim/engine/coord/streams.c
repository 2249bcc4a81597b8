/* streams.c - what the engine knows of contexts and streams, and the
 * orderings the driver implies between them (DESIGN.md §2.2): the context
 * table, each context's stream records, boundaries (a stream's, those of the
 * streams implicitly ordered with it, or every context's), resolution of
 * deferred work on behalf of whoever must (another thread's per-thread
 * stream included, with every ordering the driver would have given that
 * work), the capture gates, the program's own captures (the engine steps
 * aside), teardown, fork and exit.
 *
 * All state lives per context (rp_ctxstate) under that context's lock, so
 * the driver sees each context's operations in the program's order and
 * contexts (devices) never contend. Finding a call's context takes no lock:
 * the current context, or the stream's, cached per thread. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CTX 16

/* The table the engine was installed with, and the lifecycle's view of it. */
static const struct rp__driver *D;
static rp_lc_driver lc_drv;

/* Context states: append-only, published by `nctxs` (release), created
 * under ctxs_lock. */
static rp_ctxstate ctxs[MAX_CTX];
static _Atomic size_t nctxs;
static pthread_mutex_t ctxs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Per-thread cache of the last looked-up stream's context. A destroyed
 * stream's handle may come back for another context: every destroy bumps
 * the generation and so empties every thread's cache. */
_Atomic unsigned int rp__stream_gen;
RP_TLS CUstream rp__tl_stream;
static RP_TLS CUcontext tl_ctx;
RP_TLS rp_ctxstate *rp__tl_cs; /* tl_ctx's state, once looked up */
RP_TLS unsigned int rp__tl_gen;

static inline void lock(rp_ctxstate *cs) { rp__lock(&cs->lock); }
static inline void unlock(rp_ctxstate *cs) { rp__unlock(&cs->lock); }

void rp__streams_setup(const struct rp__driver *drv)
{
    D = drv;
    rp__lc_driver_from(&lc_drv, drv);
}

/* ---- contexts ---------------------------------------------------------------- */

rp_ctxstate *rp__ctx_of(CUcontext ctx)
{
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (ctxs[i].ctx == ctx)
            return &ctxs[i];
    pthread_mutex_lock(&ctxs_lock);
    n = atomic_load_explicit(&nctxs, memory_order_relaxed);
    rp_ctxstate *cs = NULL;
    for (size_t i = 0; i < n && !cs; i++)
        if (ctxs[i].ctx == ctx)
            cs = &ctxs[i];
    if (!cs && n < MAX_CTX) {
        cs = &ctxs[n];
        memset(cs, 0, sizeof *cs);
        if (rp__det_init(&cs->det, rp__eng_cfg.table_size, rp__eng_cfg.warmup,
                         rp__eng_cfg.min_ops, rp__eng_cfg.max_ops) != 0 ||
            rp__det_init(&cs->sdet, rp__eng_cfg.table_size, rp__eng_cfg.warmup,
                         rp__eng_cfg.min_ops, rp__eng_cfg.max_ops) != 0) {
            rp__det_fini(&cs->det);
            cs = NULL;
        } else {
            rp__det_by_structure(&cs->sdet, rp__eng_cfg.max_variants);
            cs->ctx = ctx;
            cs->drv = D;
            pthread_rwlock_init(&cs->gate, NULL);
            rp__lc_ctx_init(&cs->lc, &lc_drv);
            rp__lc_window_init(&cs->win, &cs->lc, NULL);
            atomic_store_explicit(&nctxs, n + 1, memory_order_release);
        }
    }
    if (!cs)
        rp__bound_hit(NULL, RP_BOUND_CONTEXTS);
    pthread_mutex_unlock(&ctxs_lock);
    return cs;
}

rp_ctxstate *rp__ctx_at(size_t i)
{
    return i < atomic_load_explicit(&nctxs, memory_order_acquire) ? &ctxs[i] : NULL;
}

static CUstream normalise(CUstream s, int ptsz)
{
    return s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
}

rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    CUcontext ctx = NULL;
    if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if (D->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
            return NULL;
    } else {
        unsigned int gen = atomic_load_explicit(&rp__stream_gen, memory_order_acquire);
        if (rp__tl_stream == h && rp__tl_gen == gen) {
            if (rp__tl_cs) /* a context's state never changes hands */
                return rp__tl_cs;
            ctx = tl_ctx;
        } else {
            if (D->cuStreamGetCtx(h, &ctx) != CUDA_SUCCESS)
                return NULL;
            rp__tl_stream = h;
            tl_ctx = ctx;
            rp__tl_gen = gen;
        }
        rp__tl_cs = ctx ? rp__ctx_of(ctx) : NULL;
        return rp__tl_cs;
    }
    return ctx ? rp__ctx_of(ctx) : NULL;
}

rp_ctxstate *rp__ctx_current(void)
{
    CUcontext ctx = NULL;
    if (D->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    return rp__ctx_of(ctx);
}

/* ---- the per-thread stream's hand-off --------------------------------------- */

static int is_foreign(const rp_stream *st)
{
    return st->handle == CU_STREAM_PER_THREAD && !pthread_equal(st->tid, pthread_self());
}

/* Per-thread streams whose owner must wait for work another thread
 * resolved for them (must_wait set), all contexts: while there are any, a
 * call that goes straight to the driver (the engine steps aside for the
 * program's capture) first lets its thread's stream wait (rp__aside_rejoin). */
_Atomic int rp__rejoins;

static void set_must_wait(rp_stream *st, int v)
{
    if (st->handoff.must_wait != v)
        atomic_fetch_add(&rp__rejoins, v ? 1 : -1);
    st->handoff.must_wait = v;
}

/* The owner of a per-thread stream is back: if another thread resolved its
 * deferred work, its stream first waits for that work. */
static CUresult rejoin(rp_stream *st)
{
    if (!st->handoff.must_wait || is_foreign(st))
        return CUDA_SUCCESS;
    set_must_wait(st, 0);
    CUresult rc = D->cuStreamWaitEvent(st->handle, st->handoff.done_ev, 0);
    if (rc != CUDA_SUCCESS)
        rc = D->cuEventSynchronize(st->handoff.done_ev);
    return rc;
}

/* For a program capture's begin: a pending rejoin of another thread's
 * per-thread stream whose hand-off is complete needs nothing more. One that
 * is not stays pending, and is never waited for on the host here: that work
 * may sit behind the owner's cuStreamWaitValue32, which the capturing
 * thread releases only after its capture (a review found the hang). The
 * owner's stream waits on the device at its next call instead, also while
 * the engine steps aside (rp__aside_rejoin). */
static void settle(rp_stream *st)
{
    if (!st->used || !st->handoff.must_wait || !is_foreign(st))
        return;
    if (D->cuEventQuery(st->handoff.done_ev) == CUDA_SUCCESS)
        set_must_wait(st, 0);
}

void rp__aside_rejoin(void)
{
    static RP_TLS int inside; /* the calls below must not come back here */
    if (inside)
        return;
    inside = 1;
    rp_ctxstate *cs = rp__ctx_current();
    if (cs) {
        lock(cs);
        pthread_t self = pthread_self();
        for (size_t i = 0; i < cs->nstreams; i++) {
            rp_stream *st = &cs->streams[i];
            if (!st->used || !st->handoff.must_wait || st->handle != CU_STREAM_PER_THREAD ||
                !pthread_equal(st->tid, self))
                continue;
            /* Not into the program's own capture of this stream: a wait on
             * an event recorded outside it would invalidate it (905), and
             * captured work runs only when its graph is launched, after
             * this work anyway. The next call after the capture waits. */
            CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
            if (D->cuStreamIsCapturing &&
                D->cuStreamIsCapturing(CU_STREAM_PER_THREAD, &cap) == CUDA_SUCCESS &&
                cap == CU_STREAM_CAPTURE_STATUS_NONE)
                rejoin(st);
        }
        unlock(cs);
    }
    inside = 0;
}

/* At the start of a deferral on a per-thread stream, mark the point another
 * thread's resolution must wait for (see rp_stream). Returns 0, or -1 when
 * the mark cannot be made: then the stream must not defer, since another
 * thread could not resolve its work. */
static int mark_start(rp_stream *st)
{
    if (st->handle != CU_STREAM_PER_THREAD)
        return 0;
    st->handoff.start_recorded = 0;
    if (!st->handoff.start_ev && D->cuEventCreate(&st->handoff.start_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        st->handoff.start_ev = NULL;
    if (!st->handoff.done_ev && D->cuEventCreate(&st->handoff.done_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        st->handoff.done_ev = NULL;
    if (st->handoff.start_ev && st->handoff.done_ev && D->cuEventRecord(st->handoff.start_ev, st->handle) == CUDA_SUCCESS)
        st->handoff.start_recorded = 1;
    return st->handoff.start_recorded ? 0 : -1;
}

/* Where this thread can issue `st`'s deferred work: its own stream, or for
 * another thread's per-thread stream the private stream, made to wait for
 * what the owner had issued before the deferral began. NULL: nowhere (the
 * work stays deferred until its owner's next call). */
static CUstream resolve_target(rp_stream *st)
{
    if (!is_foreign(st))
        return st->handle;
    CUstream p = rp__private_stream(st->cs);
    if (!p || !st->handoff.start_recorded)
        return NULL; /* NEVER: a per-thread stream defers only after mark_start */
    /* If the device-side wait cannot be set up, the host waits instead:
     * slower, same order. */
    if (D->cuStreamWaitEvent(p, st->handoff.start_ev, 0) != CUDA_SUCCESS)
        D->cuEventSynchronize(st->handoff.start_ev);
    return p;
}

/* Work resolved on the private stream for another thread's per-thread
 * stream: nothing the driver would have ordered after it may overtake it.
 * The owner's stream waits at the owner's next call (only the owner can
 * name it), and the legacy stream waits now, since it waits for every
 * blocking stream, the per-thread ones included (and the other blocking
 * streams wait for the legacy stream's work in turn). If the marks cannot
 * be made, the host waits for the work now. */
static void hand_off(rp_stream *st, CUstream target)
{
    if (D->cuEventRecord(st->handoff.done_ev, target) == CUDA_SUCCESS) {
        set_must_wait(st, 1);
        if (D->cuStreamWaitEvent(CU_STREAM_LEGACY, st->handoff.done_ev, 0) != CUDA_SUCCESS)
            D->cuEventSynchronize(st->handoff.done_ev);
    } else {
        D->cuStreamSynchronize(target);
    }
}

/* ---- stream records ----------------------------------------------------------- */

rp_stream *rp__stream_of(rp_ctxstate *cs, CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    int legacy = h == CU_STREAM_LEGACY, perthread = h == CU_STREAM_PER_THREAD;
    pthread_t self = pthread_self();
    rp_stream *last = cs->last_stream;
    if (last && last->used && last->handle == h && (!perthread || pthread_equal(last->tid, self))) {
        if (last->handoff.must_wait)
            rejoin(last);
        return last;
    }
    rp_stream *free_slot = NULL;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (!st->used) {
            if (!free_slot)
                free_slot = st;
            continue;
        }
        if (st->handle == h && (!perthread || pthread_equal(st->tid, self))) {
            if (st->handoff.must_wait)
                rejoin(st);
            cs->last_stream = st;
            return st;
        }
    }
    if (!free_slot && cs->nstreams < RP_MAX_STREAMS)
        free_slot = &cs->streams[cs->nstreams++];
    if (!free_slot) {
        rp__bound_hit(cs, RP_BOUND_STREAMS);
        return NULL;
    }
    unsigned int flags = 0;
    if (!legacy && !perthread && D->cuStreamGetFlags(h, &flags) != CUDA_SUCCESS)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = 1;
    free_slot->cs = cs;
    free_slot->handle = h;
    free_slot->tid = self;
    free_slot->ctx = cs->ctx;
    free_slot->legacy = legacy;
    free_slot->blocking = legacy || perthread || !(flags & CU_STREAM_NON_BLOCKING);
    free_slot->trace.epoch = ++cs->trace_clock;
    return free_slot;
}

/* Implicit ordering (DESIGN.md §2.2): the legacy stream and the blocking
 * streams of one context order each other; non-blocking streams do not. */
static int ordered(const rp_stream *a, const rp_stream *b)
{
    if (a == b)
        return 1;
    return (a->legacy && b->blocking) || (b->legacy && a->blocking);
}

_Atomic long rp__ev_deferred;
_Atomic uint64_t rp__frees;
_Atomic uint64_t rp__issued;

/* The streams that joined the trace of `st` leave it. */
static void release_members(rp_stream *st)
{
    rp_ctxstate *cs = st->cs;
    for (size_t i = 0; st->trace.nmembers && i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (o->used && o->trace.owner == st) {
            o->trace.owner = NULL;
            st->trace.nmembers--;
        }
    }
    st->trace.nmembers = 0;
}

/* Release a stream's state (its deferred work was resolved or is being
 * abandoned with its context). */
static void stream_free(rp_stream *st)
{
    set_must_wait(st, 0);
    rp__seg_clear(st);
    rp__learn_stream_free(st);
    release_members(st);
    if (st->trace.owner && st->trace.owner->used && st->trace.owner->trace.nmembers)
        st->trace.owner->trace.nmembers--;
    for (size_t i = 0; i < (st->match.borrowed_seq ? st->match.borrowed_from : st->match.ndef); i++) {
        if (rp__op_is_event(st->match.def[i].kind))
            atomic_fetch_sub(&rp__ev_deferred, 1);
        rp__op_free(&st->match.def[i]); /* the fast path's unwritten ones own nothing */
    }
    free(st->learn.seg);
    free(st->match.def);
    free(st->match.arena);
    free(st->match.upd);
    if (st->handoff.start_ev)
        D->cuEventDestroy_v2(st->handoff.start_ev);
    if (st->handoff.done_ev)
        D->cuEventDestroy_v2(st->handoff.done_ev);
    memset(st, 0, sizeof *st);
}

/* ---- resolution and boundaries ------------------------------------------------- */

CUresult rp__resolve_stream(rp_stream *st)
{
    if (st->match.ndef == 0)
        return CUDA_SUCCESS;
    rp_ctxstate *cs = st->cs;
    CUstream target = resolve_target(st);
    if (!target)
        return CUDA_SUCCESS; /* NEVER in practice: left to the owner's next call */
    /* The legacy and the per-thread stream are per context, named through
     * the current one: issue in the stream's context (the program may have
     * made another current since). */
    CUcontext cur = NULL;
    int pushed = (st->legacy || st->handle == CU_STREAM_PER_THREAD) &&
                 D->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != cs->ctx &&
                 D->cuCtxPushCurrent_v2(cs->ctx) == CUDA_SUCCESS;
    struct rp_resolved r;
    rp__match_resolve(st, target, &r);
    if (target != st->handle)
        hand_off(st, target);
    if (pushed) {
        CUcontext popped;
        D->cuCtxPopCurrent_v2(&popped);
    }
    rp__learn_resolved(st, &r);
    return r.err;
}

int rp__defer(rp_stream *st, rp_op *op, CUresult *err)
{
    *err = CUDA_SUCCESS;
    enum rp_offer v = rp__match_offer(st, op);
    if (v == RP_OFFER_RESOLVE) {
        *err = rp__resolve_stream(st);
        v = rp__match_offer(st, op);
    }
    if (v == RP_OFFER_MATCHES && st->match.ndef == 0 && mark_start(st) != 0) {
        rp__match_cancel(st); /* eagerly: see mark_start */
        v = RP_OFFER_EAGER;
    }
    if (v != RP_OFFER_MATCHES)
        return 0;
    if (st->match.ndef == 0)
        rp__idle_watch();
    v = rp__match_defer(st, op);
    if (v == RP_OFFER_RESOLVE) { /* it could not be kept: eagerly, after what is pending */
        CUresult rc = rp__resolve_stream(st);
        if (*err == CUDA_SUCCESS)
            *err = rc;
        return 0;
    }
    if (v == RP_OFFER_COMPLETE) {
        CUresult rc = rp__resolve_stream(st);
        if (*err == CUDA_SUCCESS)
            *err = rc;
    }
    return 1;
}

/* A host boundary on stream `st`: what it holds is resolved and its
 * segment ends (when it has one). On a stream that joined another's trace,
 * that trace ends; the streams that joined this one's leave it, and the
 * events it recorded or waited on are no longer live in it. */
static CUresult end_segment(rp_stream *st)
{
    if (st->trace.owner)
        st = st->trace.owner;
    st->learn.boundary_opno = st->opno;
    st->trace.epoch = ++st->cs->trace_clock;
    if (st->trace.nmembers)
        release_members(st);
    if (!st->learn.nseg && !st->match.ndef)
        return CUDA_SUCCESS;
    CUresult rc = rp__resolve_stream(st);
    rp__seg_end(st);
    return rc;
}

CUresult rp__end_trace(rp_stream *home)
{
    return end_segment(home);
}

CUresult rp__join_trace(rp_stream *st, rp_stream *home)
{
    CUresult rc = end_segment(st);
    st->trace.owner = home;
    home->trace.nmembers++;
    st->cs->counters.stream_joins++;
    return rc;
}

CUresult rp__end_ordered(rp_stream *st, int self)
{
    rp_ctxstate *cs = st->cs;
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used || (o == st && !self) || !ordered(o, st))
            continue;
        CUresult rc = end_segment(o);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    return first;
}

CUresult rp__resolve_ctx(rp_ctxstate *cs)
{
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++)
        if (cs->streams[i].used && cs->streams[i].handoff.must_wait)
            rejoin(&cs->streams[i]); /* only the owner's own */
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used)
            continue;
        CUresult rc = end_segment(o);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    rp__sweep_broken(cs);
    return first;
}

CUresult rp__resolve_every_ctx(void (*then)(rp_ctxstate *, int), int arg)
{
    CUresult first = CUDA_SUCCESS;
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        lock(&ctxs[i]);
        CUresult rc = rp__resolve_ctx(&ctxs[i]);
        if (then)
            then(&ctxs[i], arg);
        unlock(&ctxs[i]);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    return first;
}

CUresult rp__engine_resolve_all(void)
{
    return rp__resolve_every_ctx(NULL, 0);
}

size_t rp__gates_hold(void)
{
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        pthread_rwlock_rdlock(&ctxs[i].gate);
    return n;
}

void rp__gates_release(size_t n)
{
    for (size_t i = n; i-- > 0;)
        pthread_rwlock_unlock(&ctxs[i].gate);
}

/* ---- teardown ---------------------------------------------------------------------- */

void rp__forget_ctx(rp_ctxstate *cs, int ctx_dies)
{
    rp__resolve_ctx(cs);
    rp__seqs_drop_all(cs);
    rp__rec_reset(cs);
    /* Another thread's per-thread stream whose work was just resolved for it
     * keeps its record, and with it the wait its owner's next call must make
     * (the handle names no other stream later; its event outlives the
     * private stream it was recorded on). Every other record goes. */
    size_t kept = 0;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handoff.must_wait && is_foreign(st)) {
            rp__seg_clear(st);
            if (kept != i) {
                cs->streams[kept] = *st;
                memset(st, 0, sizeof *st);
            }
            kept++;
        } else {
            stream_free(st);
        }
    }
    cs->nstreams = kept;
    if (ctx_dies && cs->priv) {
        D->cuStreamDestroy_v2(cs->priv);
        cs->priv = NULL;
        cs->win.stream = NULL;
    }
    if (ctx_dies)
        rp__fj_release(cs);
    atomic_fetch_add(&rp__stream_gen, 1);
}

CUresult rp__stream_destroyed_locked(rp_ctxstate *cs, CUstream h)
{
    CUresult pre = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handle == h) {
            pre = rp__end_ordered(st, 1);
            stream_free(st);
        }
    }
    return pre;
}

void rp__streams_changed(void)
{
    atomic_fetch_add(&rp__stream_gen, 1);
}

void rp__forget_stream(CUstream h)
{
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        lock(&ctxs[i]);
        rp__stream_destroyed_locked(&ctxs[i], h); /* nothing is deferred: no call made */
        unlock(&ctxs[i]);
    }
    rp__streams_changed();
}

/* ---- the program's own captures ------------------------------------------------- */

/* Captures the program itself has open: while any is, the engine steps
 * aside entirely (DESIGN.md §2.5). rp__prog_pending counts those being begun
 * as well: from the moment a begin starts, nothing new is deferred and no
 * capture window opens, so that the engine can be emptied before the
 * program's capture starts and stay empty while it steps aside. */
_Atomic int rp__prog_captures;
_Atomic int rp__prog_pending;
static _Atomic uint64_t prog_captures_total;


static void settle_streams(rp_ctxstate *cs, int unused)
{
    (void)unused;
    for (size_t j = 0; j < cs->nstreams; j++)
        settle(&cs->streams[j]);
}

/* The program begins its own capture: no new deferrals from here on,
 * everything deferred is resolved, and work another thread resolved for a
 * per-thread stream is waited for (its owner's next calls go straight to
 * the driver and could not wait on the device). */
CUresult rp__program_capture_prepare(void)
{
    atomic_fetch_add(&rp__prog_pending, 1);
    rp__note_issue();
    if (rp__stepping_aside())
        return CUDA_SUCCESS; /* already empty */
    return rp__resolve_every_ctx(settle_streams, 0);
}

void rp__program_capture_begun(CUresult rc)
{
    if (rc == CUDA_SUCCESS) {
        atomic_fetch_add(&rp__prog_captures, 1);
        atomic_fetch_add(&prog_captures_total, 1);
    } else {
        atomic_fetch_sub(&rp__prog_pending, 1);
    }
}

void rp__program_capture_ended(CUresult rc)
{
    rp__note_issue(); /* calls made while the engine stepped aside */
    /* 908 (wrong thread) and ILLEGAL_STATE (not capturing) leave things as
     * they were; any other outcome closed the capture. */
    if (rc != CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD && rc != CUDA_ERROR_ILLEGAL_STATE &&
        atomic_load(&rp__prog_captures) > 0) {
        atomic_fetch_sub(&rp__prog_captures, 1);
        atomic_fetch_sub(&rp__prog_pending, 1);
    }
}

uint64_t rp__engine_program_captures(void)
{
    return atomic_load(&prog_captures_total);
}

/* ---- fork and exit ------------------------------------------------------------------- */

/* A forked child must not touch the parent's CUDA state (the driver does
 * not survive fork): nothing deferred in the parent is resolved from it. */
static _Atomic int forked_child;

void rp__engine_forked(void)
{
    atomic_store(&forked_child, 1);
}

bool rp__engine_in_forked_child(void)
{
    return atomic_load(&forked_child) != 0;
}

/* At exit, work still deferred reaches the driver (DESIGN.md §2.2), and
 * the idle watch touches nothing from then on (the driver is torn down
 * after us). */
static _Atomic int exiting;

bool rp__engine_exiting(void)
{
    return atomic_load(&exiting) != 0;
}

static void exit_hook(void)
{
    atomic_store(&exiting, 1);
    if (!atomic_load(&forked_child))
        rp__engine_resolve_all();
}

void rp__arm_exit_hook(void)
{
    static _Atomic int armed;
    /* Registered at the first capture, after the driver's own exit
     * handlers (cuInit has run by then), so it runs before them. */
    if (!atomic_exchange(&armed, 1))
        atexit(exit_hook);
}

/* ---- snapshots for the report ---------------------------------------------------------- */

int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions)
{
    rp_ctxstate *cs = rp__ctx_at(i);
    if (!cs)
        return 0;
    int locked = rp__ctx_lock_for_report(cs);
    *out = cs->counters;
    *evictions = cs->det.evictions;
    if (locked)
        unlock(cs);
    return 1;
}

size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max)
{
    size_t n = rp__retired_snapshot(out, max);
    for (size_t c = 0; rp__ctx_at(c); c++) {
        rp_ctxstate *cs = &ctxs[c];
        int locked = rp__ctx_lock_for_report(cs);
        for (size_t i = 0; i < cs->nseqs && n < max; i++)
            rp__seq_info(cs->seqs[i], &out[n++]);
        if (locked)
            unlock(cs);
    }
    return n;
}
