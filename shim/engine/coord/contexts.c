/* contexts.c - what the engine knows of contexts and streams: a context's
 * state, made on first use (RP_MAX_CTX of them, in the engine instance),
 * found from a stream through a per-thread cache; and a context's stream
 * records, made on first use, the per-thread stream one per thread, and
 * the hand-off of work another thread resolved for a per-thread stream.
 * Finding a call's context takes no lock: the current context, or the
 * stream's, cached per thread. Snapshots of both for the report. */
#include "contexts.h"

#include <stdlib.h>
#include <string.h>

/* Per-thread caches of the last looked-up stream's context and of the
 * current context's state (contexts.h). A destroyed stream's handle may
 * come back for another context: every destroy bumps the generation and
 * so empties every thread's cache. */
RP_TLS struct rp_tl_ctx rp__tl;

static inline void lock(rp_ctxstate *cs) { rp__lock(&cs->lock); }
static inline void unlock(rp_ctxstate *cs) { rp__unlock(&cs->lock); }

rp_ctxstate *rp__ctx_of(CUcontext ctx)
{
    size_t n = atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (rp__eng.ctxs[i].ctx == ctx)
            return &rp__eng.ctxs[i];
    pthread_mutex_lock(&rp__eng.ctxs_lock);
    n = atomic_load_explicit(&rp__eng.nctxs, memory_order_relaxed);
    rp_ctxstate *cs = NULL;
    for (size_t i = 0; i < n && !cs; i++)
        if (rp__eng.ctxs[i].ctx == ctx)
            cs = &rp__eng.ctxs[i];
    if (!cs && n < RP_MAX_CTX) {
        cs = &rp__eng.ctxs[n];
        memset(cs, 0, sizeof *cs);
        if (rp__det_init(&cs->det, rp__eng.cfg.table_size, rp__eng.cfg.warmup,
                         rp__eng.cfg.min_ops, rp__eng.cfg.max_ops) != 0 ||
            rp__det_init(&cs->sdet, rp__eng.cfg.table_size, rp__eng.cfg.warmup,
                         rp__eng.cfg.min_ops, rp__eng.cfg.max_ops) != 0) {
            rp__det_fini(&cs->det);
            cs = NULL;
        } else {
            rp__det_by_structure(&cs->sdet, rp__eng.cfg.max_variants);
            cs->ctx = ctx;
            pthread_rwlock_init(&cs->gate, NULL);
            rp__lc_ctx_init(&cs->lc, &rp__eng.lc_drv);
            rp__lc_window_init(&cs->win, &cs->lc, NULL);
            atomic_store_explicit(&rp__eng.nctxs, n + 1, memory_order_release);
        }
    }
    if (!cs)
        rp__bound_hit(NULL, RP_BOUND_CONTEXTS);
    pthread_mutex_unlock(&rp__eng.ctxs_lock);
    return cs;
}

static CUstream normalise(CUstream s, int ptsz)
{
    return s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
}

/* The current context's state, cached per thread (rp__tl.cur_*): the
 * legacy and the per-thread stream are the current context's, which the
 * driver is asked for at every call (a context made current where the
 * engine cannot see it must not leave a stale answer), but not looked up
 * again while the stream generation it was found in holds. */
rp_ctxstate *rp__ctx_of_current_slow(CUcontext ctx)
{
    rp__tl.cur_ctx = ctx;
    rp__tl.cur_gen = rp__stream_gen(); /* an engine reset bumps it */
    rp__tl.cur_cs = ctx ? rp__ctx_of(ctx) : NULL;
    return rp__tl.cur_cs;
}

rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
        return rp__ctx_of_current();
    CUcontext ctx = NULL;
    unsigned int gen = rp__stream_gen();
    if (rp__tl.stream == h && rp__tl.gen == gen) {
        if (rp__tl.cs) /* a context's state never changes hands */
            return rp__tl.cs;
        ctx = rp__tl.ctx;
    } else {
        if (rp__eng.drv->cuStreamGetCtx(h, &ctx) != CUDA_SUCCESS)
            return NULL;
        rp__tl.stream = h;
        rp__tl.ctx = ctx;
        rp__tl.gen = gen;
    }
    rp__tl.cs = ctx ? rp__ctx_of(ctx) : NULL;
    return rp__tl.cs;
}

rp_stream *rp__stream_of(rp_ctxstate *cs, CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    int legacy = h == CU_STREAM_LEGACY, perthread = h == CU_STREAM_PER_THREAD;
    pthread_t self = pthread_self();
    rp_stream *last = cs->last_stream;
    if (last && last->used && last->handle == h && (!perthread || pthread_equal(last->tid, self))) {
        if (last->handoff.must_wait)
            rp__handoff_rejoin(last);
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
                rp__handoff_rejoin(st);
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
    if (!legacy && !perthread && rp__eng.drv->cuStreamGetFlags(h, &flags) != CUDA_SUCCESS)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = 1;
    free_slot->cs = cs;
    free_slot->handle = h;
    free_slot->tid = self;
    free_slot->ctx = cs->ctx;
    free_slot->legacy = legacy;
    free_slot->blocking = legacy || perthread || !(flags & CU_STREAM_NON_BLOCKING);
    cs->nblocking += free_slot->blocking;
    cs->nlegacy += free_slot->legacy;
    free_slot->trace.epoch = ++cs->trace_clock;
    return free_slot;
}

int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions)
{
    rp_ctxstate *cs = rp__ctx_at(i);
    if (!cs)
        return 0;
    int locked = rp__ctx_lock_for_report(cs);
    if (locked < 0) {
        memset(out, 0, sizeof *out);
        *evictions = 0;
        return 1;
    }
    *out = cs->counters;
    *evictions = cs->det.evictions;
    if (locked)
        unlock(cs);
    return 1;
}

size_t rp__engine_shape_snapshot(size_t i, struct rp__diff *out, size_t max)
{
    rp_ctxstate *cs = rp__ctx_at(i);
    if (!cs)
        return 0;
    int locked = rp__ctx_lock_for_report(cs);
    size_t n = 0;
    if (locked < 0)
        return 0;
    for (uint64_t k = 0; k < cs->nshapes && k < RP_CTX_SHAPES && n < max; k++)
        out[n++] = cs->shapes[(cs->nshapes - 1 - k) % RP_CTX_SHAPES];
    if (locked)
        unlock(cs);
    return n;
}

size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max)
{
    size_t n = rp__retired_snapshot(out, max);
    for (size_t c = 0; rp__ctx_at(c); c++) {
        rp_ctxstate *cs = &rp__eng.ctxs[c];
        int locked = rp__ctx_lock_for_report(cs);
        if (locked < 0)
            continue;
        for (size_t i = 0; i < cs->nseqs && n < max; i++)
            rp__seq_info(cs->seqs[i], &out[n++]);
        if (locked)
            unlock(cs);
    }
    return n;
}

/* ---- the per-thread stream of another thread ----------------------------------
 *
 * The per-thread stream of another thread (docs/engine.md,
 * "Threads and the per-thread stream"): it cannot be named from here, so
 * when another thread's boundary must resolve work deferred on it, that
 * work is issued on the context's private stream, after an event recorded
 * on the owner's stream when the deferral began; the owner's stream waits
 * for it before the owner's next operation, the legacy stream at once.
 * Nothing here waits on the host for that work (it may sit behind the
 * owner's cuStreamWaitValue32): a wait still pending when the engine steps
 * aside for the program's capture is made on the device at the owner's
 * next call. Runs under the context's lock. */


/* Whether the owner must wait, kept with the engine's count of such waits
 * (rp__eng.rejoins: rp__aside looks at it). */
static void set_must_wait(rp_stream *st, int v)
{
    if (st->handoff.must_wait != v)
        atomic_fetch_add(&rp__eng.rejoins, v ? 1 : -1);
    st->handoff.must_wait = v;
}

/* The owner of a per-thread stream is back: if another thread resolved its
 * deferred work, its stream first waits for that work. */
CUresult rp__handoff_rejoin(rp_stream *st)
{
    if (!st->handoff.must_wait || rp__handoff_foreign(st))
        return CUDA_SUCCESS;
    set_must_wait(st, 0);
    CUresult rc = rp__eng.drv->cuStreamWaitEvent(st->handle, st->handoff.done_ev, 0);
    if (rc != CUDA_SUCCESS)
        rc = rp__eng.drv->cuEventSynchronize(st->handoff.done_ev);
    return rc;
}

/* For a program capture's begin: a pending rejoin of another thread's
 * per-thread stream whose hand-off is complete needs nothing more. One that
 * is not stays pending, and is never waited for on the host here: that work
 * may sit behind the owner's cuStreamWaitValue32, which the capturing
 * thread releases only after its capture (a review found the hang). The
 * owner's stream waits on the device at its next call instead, also while
 * the engine steps aside (rp__aside_rejoin). */
void rp__handoff_settle(rp_stream *st)
{
    if (!st->used || !st->handoff.must_wait || !rp__handoff_foreign(st))
        return;
    if (rp__eng.drv->cuEventQuery(st->handoff.done_ev) == CUDA_SUCCESS)
        set_must_wait(st, 0);
}

void rp__handoff_forget(rp_stream *st)
{
    set_must_wait(st, 0);
}

void rp__aside_rejoin(void)
{
    static RP_TLS int inside; /* the calls below must not come back here */
    if (inside)
        return;
    inside = 1;
    rp_ctxstate *cs = rp__ctx_of_current();
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
            if (rp__eng.drv->cuStreamIsCapturing &&
                rp__eng.drv->cuStreamIsCapturing(CU_STREAM_PER_THREAD, &cap) == CUDA_SUCCESS &&
                cap == CU_STREAM_CAPTURE_STATUS_NONE)
                rp__handoff_rejoin(st);
        }
        unlock(cs);
    }
    inside = 0;
}

/* At the start of a deferral on a per-thread stream, mark the point another
 * thread's resolution must wait for (see rp_stream). Returns 0, or -1 when
 * the mark cannot be made: then the stream must not defer, since another
 * thread could not resolve its work. */
int rp__handoff_mark_start(rp_stream *st)
{
    if (st->handle != CU_STREAM_PER_THREAD)
        return 0;
    st->handoff.start_recorded = 0;
    if (!st->handoff.start_ev && rp__eng.drv->cuEventCreate(&st->handoff.start_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        st->handoff.start_ev = NULL;
    if (!st->handoff.done_ev && rp__eng.drv->cuEventCreate(&st->handoff.done_ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        st->handoff.done_ev = NULL;
    if (st->handoff.start_ev && st->handoff.done_ev && rp__eng.drv->cuEventRecord(st->handoff.start_ev, st->handle) == CUDA_SUCCESS)
        st->handoff.start_recorded = 1;
    return st->handoff.start_recorded ? 0 : -1;
}

/* Where this thread can issue another thread's per-thread stream's
 * deferred work: the private stream, made to wait for what the owner had
 * issued before the deferral began. NULL: nowhere (the work stays deferred
 * until its owner's next call). */
CUstream rp__handoff_private(rp_stream *st)
{
    CUstream p = rp__private_stream(st->cs);
    if (!p || NEVER(!st->handoff.start_recorded))
        return NULL; /* no private stream could be made: left to the owner's next call
                        (a per-thread stream defers only after its mark) */
    /* If the device-side wait cannot be set up, the host waits instead:
     * slower, same order. */
    if (rp__eng.drv->cuStreamWaitEvent(p, st->handoff.start_ev, 0) != CUDA_SUCCESS)
        rp__eng.drv->cuEventSynchronize(st->handoff.start_ev);
    return p;
}

/* Work resolved on the private stream for another thread's per-thread
 * stream: nothing the driver would have ordered after it may overtake it.
 * The owner's stream waits at the owner's next call (only the owner can
 * name it), and the legacy stream waits now, since it waits for every
 * blocking stream, the per-thread ones included (and the other blocking
 * streams wait for the legacy stream's work in turn). If the marks cannot
 * be made, the host waits for the work now. */
void rp__handoff_done(rp_stream *st, CUstream target)
{
    if (rp__eng.drv->cuEventRecord(st->handoff.done_ev, target) == CUDA_SUCCESS) {
        set_must_wait(st, 1);
        if (rp__eng.drv->cuStreamWaitEvent(CU_STREAM_LEGACY, st->handoff.done_ev, 0) != CUDA_SUCCESS)
            rp__eng.drv->cuEventSynchronize(st->handoff.done_ev);
    } else {
        rp__eng.drv->cuStreamSynchronize(target);
    }
}
