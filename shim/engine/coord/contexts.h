/* contexts.h - the coordinator's contexts and stream records (contexts.c):
 * a context's state, a stream's record, the per-thread cache that finds a
 * stream's context, and the hand-off of another thread's per-thread stream.
 * Part of coord.h, the coordinator's header */
#ifndef REPRISE_CONTEXTS_H
#define REPRISE_CONTEXTS_H

#include "seq.h"

/* ---- contexts and stream records ------------------------------------------------ */

/* The state of context `ctx`, created on first use; NULL when RP_MAX_CTX
 * contexts are tracked or memory runs out (a bound hit: that work runs
 * eagerly). */
rp_ctxstate *rp__ctx_of(CUcontext ctx);
/* The context whose work stream `s` (as named in an entry point; `ptsz`:
 * a _ptsz/_ptds one) carries; NULL if the driver cannot say. */
rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz);
/* The state of `ctx`, the current context the driver just named (NULL:
 * none), which the per-thread cache below did not hold: found, and cached. */
rp_ctxstate *rp__ctx_of_current_slow(CUcontext ctx);
/* Each thread caches the last created stream it named, its context and
 * that context's state; a stream handle that may name another stream
 * bumps the engine's stream generation, which empties every thread's
 * cache. The same for the current context (the legacy stream's), asked of
 * the driver at every call: the context it was, its state, the generation.
 * One block, found at one per-thread address by every hook. */
struct rp_tl_ctx {
    CUstream stream;
    unsigned int gen;
    CUcontext ctx;
    struct rp_ctxstate *cs;
    CUcontext cur_ctx;
    struct rp_ctxstate *cur_cs;
    unsigned int cur_gen;
};
extern RP_TLS struct rp_tl_ctx rp__tl;
static inline unsigned int rp__stream_gen(void)
{
    return atomic_load_explicit(&rp__eng.stream_gen, memory_order_acquire);
}
/* The state of the current context (the legacy and the per-thread
 * stream's), which the driver is asked for at every call; NULL when there
 * is none. */
static inline rp_ctxstate *rp__ctx_of_current(void)
{
    CUcontext ctx = NULL;
    if (rp__eng.drv->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return NULL;
    if (RP_LIKELY(ctx && ctx == rp__tl.cur_ctx && rp__tl.cur_cs &&
                  rp__tl.cur_gen == rp__stream_gen()))
        return rp__tl.cur_cs; /* a context's state never changes hands */
    return rp__ctx_of_current_slow(ctx);
}
static inline rp_ctxstate *rp__ctx_of_stream(CUstream s, int ptsz)
{
    if (RP_LIKELY(s == rp__tl.stream && rp__tl.cs && rp__stream_is_created(s) &&
                  rp__tl.gen == rp__stream_gen()))
        return rp__tl.cs;
    return s != CU_STREAM_LEGACY && (s || ptsz) ? rp__ctx_of_stream_slow(s, ptsz)
                                                 : rp__ctx_of_current();
}
/* The engine's record of stream `s` of `cs` (cs locked), made on first use;
 * NULL when the table is full or the stream's flags cannot be read (the
 * call then runs eagerly). The per-thread stream is one per thread; its
 * owner coming back first waits for work another thread resolved for it. */
rp_stream *rp__stream_of(rp_ctxstate *cs, CUstream s, int ptsz);
/* The same, first trying the stream found last (a created stream's record
 * with no wait pending; cs locked). */
static inline rp_stream *rp__stream_fast(rp_ctxstate *cs, CUstream s, int ptsz)
{
    rp_stream *st = cs->last_stream;
    /* A created stream or the legacy stream (one per context); not the
     * per-thread stream, one per thread. */
    if (RP_LIKELY(st && st->used && !st->handoff.must_wait &&
                  (st->handle == s ? s != CU_STREAM_PER_THREAD
                                   : !s && !ptsz && st->handle == CU_STREAM_LEGACY)))
        return st;
    return rp__stream_of(cs, s, ptsz);
}
/* A copy of context number `i`'s counters, taken under its lock if that can
 * be had within a moment (at exit another thread may hold it for ever).
 * Returns 0 past the last context. */
int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions);
/* Copy up to `max` of context `i`'s last segments whose structure was new
 * (newest first); returns how many. */
size_t rp__engine_shape_snapshot(size_t i, struct rp__diff *out, size_t max);
/* Copy up to `max` report lines of sequences (dropped ones first). */
size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max);

/* ---- the per-thread stream of another thread ---------------------------------- */

/* The stream is another thread's per-thread stream. */
static inline int rp__handoff_foreign(const rp_stream *st)
{
    return st->handle == CU_STREAM_PER_THREAD && !pthread_equal(st->tid, pthread_self());
}
/* At the start of a deferral on a per-thread stream, mark the point another
 * thread's resolution must wait for. Returns 0, or -1 when the mark cannot
 * be made: then the stream must not defer (another thread could not
 * resolve its work). */
int rp__handoff_mark_start(rp_stream *st);
/* Where this thread can issue `st`'s deferred work: its own stream, or for
 * another thread's per-thread stream the private stream, made to wait for
 * what the owner had issued before the deferral began (NULL: nowhere). */
CUstream rp__handoff_private(rp_stream *st); /* (the second case) */
static inline CUstream rp__handoff_target(rp_stream *st)
{
    return rp__handoff_foreign(st) ? rp__handoff_private(st) : st->handle;
}
/* Work resolved on the private stream for another thread's per-thread
 * stream: nothing the driver would have ordered after it may overtake it. */
void rp__handoff_done(rp_stream *st, CUstream target);
/* The owner of a per-thread stream is back: if another thread resolved its
 * deferred work, its stream first waits for that work. */
CUresult rp__handoff_rejoin(rp_stream *st);
/* For a program capture's begin: a pending rejoin whose hand-off is
 * complete needs nothing more; one that is not stays pending (never waited
 * for on the host). */
void rp__handoff_settle(rp_stream *st);
/* No wait pending any more (the record goes). */
void rp__handoff_forget(rp_stream *st);
/* A call about to go straight to the driver while the engine steps aside:
 * the calling thread's per-thread stream first waits for work another
 * thread resolved for it, if any (rp__eng.rejoins counts the waits
 * pending). Nothing locked on entry. */
void rp__aside_rejoin(void);
static inline int rp__aside(void)
{
    if (RP_LIKELY(!rp__stepping_aside()))
        return 0;
    if (RP_UNLIKELY(atomic_load_explicit(&rp__eng.rejoins, memory_order_relaxed) > 0))
        rp__aside_rejoin();
    return 1;
}

#endif
