/* streams.h - the coordinator's orderings, boundaries, resolution and
 * deferral protocol (streams.c). Part of coord.h, the coordinator's header */
#ifndef REPRISE_STREAMS_H
#define REPRISE_STREAMS_H

#include "contexts.h"
#include "idle.h"
#include "learn.h"
#include "match.h"

/* ---- streams.c: ordering, boundaries, resolution, teardown ----------------------- */

/* Which streams a boundary on `st` ends: those implicitly ordered with it,
 * and itself or not. */
enum rp_ordered { RP_ORDERED_AND_SELF, RP_ORDERED_OTHERS };
/* Resolve and end the segments of the streams implicitly ordered with
 * `st` (and of `st`, as `which` says). Returns the first flush error. */
CUresult rp__end_ordered(rp_stream *st, enum rp_ordered which);
/* Whether the context's counts of its blocking and legacy stream records
 * (nblocking, nlegacy: kept by rp__stream_of, which makes a record, and
 * rp__stream_free, which ends one) differ from the records. */
int rp__stream_counts_wrong(const rp_ctxstate *cs);
/* The same for the streams ordered with `st`, itself left out (every
 * capturable op does this), at the cost of a test when none is: the legacy
 * stream orders the blocking ones, a blocking one the legacy stream, a
 * non-blocking one none (the context's counts say which it has: HOLDS). */
static inline __attribute__((always_inline)) CUresult rp__end_ordered_others(rp_stream *st)
{
    const rp_ctxstate *cs = st->cs;
    HOLDS(!rp__stream_counts_wrong(cs));
    int any = cs->nstreams > 1 && (st->legacy ? cs->nblocking > 1 : st->blocking && cs->nlegacy);
    return any ? rp__end_ordered(st, RP_ORDERED_OTHERS) : CUDA_SUCCESS;
}
/* The stream whose trace `st`'s ops join (itself, or the stream it joined). */
static inline rp_stream *rp__home(rp_stream *st)
{
    return st->trace.owner ? st->trace.owner : st;
}
/* A host boundary on the trace of `home` (cs locked): what it holds is
 * resolved, its segment ends, the streams that joined it leave. */
CUresult rp__end_trace(rp_stream *home);
/* `st` joins the trace of `home` (cs locked): what it holds of its own, or
 * of the trace it was in, is resolved and ends first. Returns the first
 * flush error. */
CUresult rp__join_trace(rp_stream *st, rp_stream *home);
/* Resolve and end every stream's segment of `cs` (cs locked). */
CUresult rp__resolve_ctx(rp_ctxstate *cs);
/* Resolve what `st` holds deferred (replay or flush), on its own stream or,
 * for another thread's per-thread stream, on the private stream with every
 * ordering the driver would have given it; learning gets what ran. */
CUresult rp__resolve_stream(rp_stream *st);
/* The next capturable op of the trace of `home` gets its position; where
 * the stream's period cuts before it, what is deferred is resolved and the
 * segment learnt so far ends first. Returns the first error of a flush. */
CUresult rp__next_op(rp_stream *home, rp_op *op);
/* The deferral protocol, after the matcher took an op of `st` (its fast
 * path and rp__defer alike; `v` what it said): the first op held (of an
 * occurrence, or since a part of it was launched) starts the idle watch and arms the exit hook (rp__deferral_began); a complete
 * match is resolved at once. Returns the first error (cs locked). */
static inline __attribute__((always_inline)) CUresult rp__deferred(rp_stream *st,
                                                                  enum rp_offer v)
{
    if (st->match.ndef == st->match.launched + 1) /* the first op held since nothing was */
        rp__deferral_began();
    return v == RP_OFFER_COMPLETE ? rp__resolve_stream(st) : CUDA_SUCCESS;
}

/* Offer a recorded capturable op to the matcher of `st` (cs locked),
 * resolving what is pending first where it cannot take the op, and at once
 * when the op completes a sequence. Returns 1 when the op was deferred (the
 * record moved into the stream), 0 when the caller must issue it eagerly
 * now (what was pending has been resolved). *err: a flush's first error. */
int rp__defer(rp_stream *st, rp_op *op, CUresult *err);
/* What follows a global boundary's resolution of each context, under its
 * lock (rp__resolve_every_ctx). */
enum rp_then {
    RP_THEN_NOTHING,
    RP_THEN_SETTLE,        /* hand-offs the program's capture must not leave pending */
    RP_THEN_FORGET,        /* a teardown: graphs and streams forgotten */
    RP_THEN_FORGET_CTX_DIES, /* ... and the context may die with it */
};
/* A global boundary: every context resolved, each under its lock, then
 * `then`. Returns the first error. */
CUresult rp__resolve_every_ctx(enum rp_then then);
/* Every context's capture gate held for reading (no capture window opens
 * until rp__gates_release); returns how many were taken. */
size_t rp__gates_hold(void);
void rp__gates_release(size_t n);
/* Forget every graph and stream of `cs` (a teardown; cs locked); when the
 * context dies, its private streams go too. */
enum rp_teardown { RP_CTX_STAYS, RP_CTX_DIES };
void rp__forget_ctx(rp_ctxstate *cs, enum rp_teardown how);
/* The created stream `h` of `cs` is being destroyed (cs locked): its
 * deferred work and that of the streams ordered with it are resolved, and
 * its record goes. Returns the first flush error. */
CUresult rp__stream_destroyed_locked(rp_ctxstate *cs, CUstream h);
/* Drop every context's record of the created stream `h`, destroyed while
 * the engine stepped aside (nothing of it is deferred). */
void rp__forget_stream(CUstream h);
/* A stream handle may now name another stream (empties every thread's
 * stream-to-context cache). */
void rp__streams_changed(void);
/* Release a stream record's state (its deferred work was resolved or is
 * being abandoned with its context). */
void rp__stream_free(rp_stream *st);

#endif
