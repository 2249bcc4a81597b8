/* contexts.c - what the engine knows of contexts and streams: a context's
 * state, made on first use (RP_MAX_CTX of them, in the engine instance),
 * found from a stream through a per-thread cache; and a context's stream
 * records, made on first use, the per-thread stream one per thread.
 * Finding a call's context takes no lock: the current context, or the
 * stream's, cached per thread. Snapshots of both for the report. */
#include "coord.h"

#include <stdlib.h>
#include <string.h>

/* Per-thread cache of the last looked-up stream's context. A destroyed
 * stream's handle may come back for another context: every destroy bumps
 * the generation and so empties every thread's cache. */
RP_TLS CUstream rp__tl_stream;
static RP_TLS CUcontext tl_ctx;
RP_TLS rp_ctxstate *rp__tl_cs; /* tl_ctx's state, once looked up */
RP_TLS unsigned int rp__tl_gen;

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

rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    CUcontext ctx = NULL;
    if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if (rp__eng.drv->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
            return NULL;
    } else {
        unsigned int gen = rp__stream_gen();
        if (rp__tl_stream == h && rp__tl_gen == gen) {
            if (rp__tl_cs) /* a context's state never changes hands */
                return rp__tl_cs;
            ctx = tl_ctx;
        } else {
            if (rp__eng.drv->cuStreamGetCtx(h, &ctx) != CUDA_SUCCESS)
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
    if (rp__eng.drv->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    return rp__ctx_of(ctx);
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
    free_slot->trace.epoch = ++cs->trace_clock;
    return free_slot;
}

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
        rp_ctxstate *cs = &rp__eng.ctxs[c];
        int locked = rp__ctx_lock_for_report(cs);
        for (size_t i = 0; i < cs->nseqs && n < max; i++)
            rp__seq_info(cs->seqs[i], &out[n++]);
        if (locked)
            unlock(cs);
    }
    return n;
}
