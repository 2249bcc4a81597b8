/* streams.c - the orderings the driver implies between streams (DESIGN.md
 * §2.2), boundaries (a stream's, those of the streams implicitly ordered
 * with it, or every context's), traces that streams join through events
 * (fork/join), the resolution of deferred work on behalf of whoever must,
 * with what follows it for learning, the deferral protocol, and teardown.
 * Runs under the lock of the context concerned. */
#include "streams.h"

#include <stdlib.h>
#include <string.h>

static inline void lock(rp_ctxstate *cs) { rp__lock(&cs->lock); }
static inline void unlock(rp_ctxstate *cs) { rp__unlock(&cs->lock); }

/* Implicit ordering (DESIGN.md §2.2): the legacy stream and the blocking
 * streams of one context order each other; non-blocking streams do not. */
static int ordered(const rp_stream *a, const rp_stream *b)
{
    if (a == b)
        return 1;
    return (a->legacy && b->blocking) || (b->legacy && a->blocking);
}

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

void rp__stream_free(rp_stream *st)
{
    if (st->used) {
        st->cs->nblocking -= st->blocking;
        st->cs->nlegacy -= st->legacy;
    }
    rp__handoff_forget(st);
    rp__learn_stream_free(st);
    release_members(st);
    if (st->trace.owner && st->trace.owner->used && st->trace.owner->trace.nmembers)
        st->trace.owner->trace.nmembers--;
    rp__match_stream_free(st);
    if (st->handoff.start_ev)
        rp__eng.drv->cuEventDestroy_v2(st->handoff.start_ev);
    if (st->handoff.done_ev)
        rp__eng.drv->cuEventDestroy_v2(st->handoff.done_ev);
    memset(st, 0, sizeof *st);
}

CUresult rp__resolve_stream(rp_stream *st)
{
    const struct rp__driver *D = rp__eng.drv;
    if (st->match.ndef == 0)
        return CUDA_SUCCESS;
    rp_ctxstate *cs = st->cs;
    CUstream target = rp__handoff_target(st);
    if (!target)
        return CUDA_SUCCESS; /* no private stream: left to the owner's next call */
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
        rp__handoff_done(st, target);
    if (pushed) {
        CUcontext popped;
        D->cuCtxPopCurrent_v2(&popped);
    }
    rp__learn_resolved(st, r.replayed, r.parted, r.flushed, r.nflushed);
    return r.err;
}

CUresult rp__next_op(rp_stream *home, rp_op *op)
{
    if (!rp__learn_next(home, op))
        return CUDA_SUCCESS;
    if (home->match.ndef && home->match.ncand && !home->trace.nmembers) {
        /* A sequence learnt before is being matched across the place the
         * period would cut: it is recognised wherever it starts (a read-back
         * or a boundary that moved the steps' start, a second request that
         * starts them at another op). The match goes on, and the steps
         * start where it started (its ops are this stream's, in a row). */
        rp__learn_realign(home, op->opno - home->match.ndef);
        return CUDA_SUCCESS;
    }
    /* What is deferred began before the cut: it cannot be this step's
     * graph. It is resolved (replayed if complete, else flushed) first. */
    CUresult rc = home->match.ndef ? rp__resolve_stream(home) : CUDA_SUCCESS;
    rp__learn_cut(home);
    return rc;
}

int rp__defer(rp_stream *st, rp_op *op, CUresult *err)
{
    *err = CUDA_SUCCESS;
    enum rp_offer v = st->match.borrowed_seq ? rp__match_join_or_offer(st, op)
                                             : rp__match_offer(st, op);
    if (v == RP_OFFER_DEFERRED || v == RP_OFFER_COMPLETE) { /* it joined the fast path's run */
        *err = rp__deferred(st, v);
        return 1;
    }
    if (v == RP_OFFER_RESOLVE) {
        *err = rp__resolve_stream(st);
        v = rp__match_offer(st, op);
    }
    if (v == RP_OFFER_MATCHES && st->match.ndef == 0 && rp__handoff_mark_start(st) != 0) {
        rp__match_cancel(st); /* eagerly: see rp__handoff_mark_start */
        v = RP_OFFER_EAGER;
    }
    if (v != RP_OFFER_MATCHES)
        return 0;
    v = rp__match_defer(st, op);
    if (v == RP_OFFER_RESOLVE) { /* it could not be kept: eagerly, after what is pending */
        CUresult rc = rp__resolve_stream(st);
        if (*err == CUDA_SUCCESS)
            *err = rc;
        return 0;
    }
    CUresult rc = rp__deferred(st, v);
    if (*err == CUDA_SUCCESS)
        *err = rc;
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
    rp__learn_boundary(st);
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

int rp__stream_counts_wrong(const rp_ctxstate *cs)
{
    uint32_t nb = 0, nl = 0;
    for (size_t i = 0; i < cs->nstreams; i++) {
        nb += cs->streams[i].used && cs->streams[i].blocking;
        nl += cs->streams[i].used && cs->streams[i].legacy;
    }
    return nb != cs->nblocking || nl != cs->nlegacy;
}

CUresult rp__end_ordered(rp_stream *st, enum rp_ordered which)
{
    rp_ctxstate *cs = st->cs;
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used || (o == st && which == RP_ORDERED_OTHERS) || !ordered(o, st))
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
            rp__handoff_rejoin(&cs->streams[i]); /* only the owner's own */
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used)
            continue;
        CUresult rc = end_segment(o);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    rp__learn_sweep(cs);
    return first;
}

CUresult rp__resolve_every_ctx(enum rp_then then)
{
    CUresult first = CUDA_SUCCESS;
    size_t n = atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        rp_ctxstate *cs = &rp__eng.ctxs[i];
        lock(cs);
        CUresult rc = rp__resolve_ctx(cs);
        switch (then) {
        case RP_THEN_NOTHING:
            break;
        case RP_THEN_SETTLE:
            for (size_t j = 0; j < cs->nstreams; j++)
                rp__handoff_settle(&cs->streams[j]);
            break;
        case RP_THEN_FORGET:
            rp__forget_ctx(cs, RP_CTX_STAYS);
            break;
        case RP_THEN_FORGET_CTX_DIES:
            rp__forget_ctx(cs, RP_CTX_DIES);
            break;
        }
        unlock(cs);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    return first;
}

size_t rp__gates_hold(void)
{
    size_t n = atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        pthread_rwlock_rdlock(&rp__eng.ctxs[i].gate);
    return n;
}

void rp__gates_release(size_t n)
{
    for (size_t i = n; i-- > 0;)
        pthread_rwlock_unlock(&rp__eng.ctxs[i].gate);
}

void rp__forget_ctx(rp_ctxstate *cs, enum rp_teardown how)
{
    rp__resolve_ctx(cs);
    rp__learn_forget_seqs(cs);
    rp__rec_reset(cs);
    /* Another thread's per-thread stream whose work was just resolved for it
     * keeps its record, and with it the wait its owner's next call must make
     * (the handle names no other stream later; its event outlives the
     * private stream it was recorded on). Every other record goes. */
    size_t kept = 0;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handoff.must_wait && rp__handoff_foreign(st)) {
            rp__seg_clear(st);
            if (kept != i) {
                cs->streams[kept] = *st;
                memset(st, 0, sizeof *st);
            }
            kept++;
        } else {
            rp__stream_free(st);
        }
    }
    cs->nstreams = kept;
    memset(&cs->fjc, 0, sizeof cs->fjc); /* its stream records moved or went */
    if (how == RP_CTX_DIES && cs->priv) {
        rp__eng.drv->cuStreamDestroy_v2(cs->priv);
        cs->priv = NULL;
        cs->win.stream = NULL;
    }
    if (how == RP_CTX_DIES)
        rp__fj_release(cs);
    atomic_fetch_add(&rp__eng.stream_gen, 1);
}

CUresult rp__stream_destroyed_locked(rp_ctxstate *cs, CUstream h)
{
    CUresult pre = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handle == h) {
            pre = rp__end_ordered(st, RP_ORDERED_AND_SELF);
            rp__stream_free(st);
        }
    }
    return pre;
}

void rp__streams_changed(void)
{
    atomic_fetch_add(&rp__eng.stream_gen, 1);
}

void rp__forget_stream(CUstream h)
{
    size_t n = atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        lock(&rp__eng.ctxs[i]);
        rp__stream_destroyed_locked(&rp__eng.ctxs[i], h); /* nothing is deferred: no call made */
        unlock(&rp__eng.ctxs[i]);
    }
    rp__streams_changed();
}
