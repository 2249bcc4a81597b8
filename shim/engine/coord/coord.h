/* coord.h - the coordinator, the top of the engine: one hook per
 * interposed entry (hooks*.c, from the roles in entries.h), the contexts
 * and stream records (contexts.c), the orderings the driver implies between
 * streams, boundaries and the resolution of deferred work on behalf of
 * whoever must (streams.c), the per-thread stream's hand-off (handoff.c),
 * the program's own captures, fork and exit (program.c), the idle watch
 * (idle.c), installation and reset (install.c). It asks learning and the
 * matcher what to do with each call and does what they report; nothing
 * below calls back up. State is per context, under that context's lock. */
#ifndef REPRISE_COORD_H
#define REPRISE_COORD_H

#include "learn.h"
#include "match.h"

/* ---- install.c ------------------------------------------------------------------ */

/* Install the engine into `core`, calling the driver through `drv` (which
 * must outlive the engine), configured by `cfg`: every interposed entry
 * gets the hook its role in entries.h names. Returns 0, or -1 (one line
 * logged, `core` left forwarding) when `drv` lacks an entry point the
 * engine needs. */
int rp__engine_install(struct rp__driver *core, const struct rp__driver *drv,
                       const struct rp__engine_config *cfg);
/* Forget everything the engine holds, as if it had just been installed
 * (tests: every context, stream, sequence, event and report line goes;
 * graphs and events are destroyed through the installed table). Nothing
 * may be deferred, and no other thread may be inside the engine. */
void rp__engine_reset(void);

/* ---- contexts.c: contexts and stream records -------------------------------------- */

/* The state of context `ctx`, created on first use; NULL when RP_MAX_CTX
 * contexts are tracked or memory runs out (a bound hit: that work runs
 * eagerly). */
rp_ctxstate *rp__ctx_of(CUcontext ctx);
/* The context whose work stream `s` (as named in an entry point; `ptsz`:
 * a _ptsz/_ptds one) carries; NULL if the driver cannot say. */
rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz);
/* Each thread caches the last created stream it named and its context's
 * state; a stream handle that may name another stream bumps the engine's
 * stream generation, which empties every thread's cache. */
extern RP_TLS CUstream rp__tl_stream;
extern RP_TLS unsigned int rp__tl_gen;
extern RP_TLS struct rp_ctxstate *rp__tl_cs;
static inline unsigned int rp__stream_gen(void)
{
    return atomic_load_explicit(&rp__eng.stream_gen, memory_order_acquire);
}
static inline rp_ctxstate *rp__ctx_of_stream(CUstream s, int ptsz)
{
    if (RP_LIKELY(s == rp__tl_stream && rp__tl_cs && rp__stream_is_created(s) &&
                  rp__tl_gen == rp__stream_gen()))
        return rp__tl_cs;
    return rp__ctx_of_stream_slow(s, ptsz);
}
/* The current context's state, or NULL. */
rp_ctxstate *rp__ctx_current(void);
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
    if (RP_LIKELY(st && rp__stream_is_created(s) && st->handle == s && st->used &&
                  !st->handoff.must_wait))
        return st;
    return rp__stream_of(cs, s, ptsz);
}
/* A copy of context number `i`'s counters, taken under its lock if that can
 * be had within a moment (at exit another thread may hold it for ever).
 * Returns 0 past the last context. */
int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions);
/* Copy up to `max` report lines of sequences (dropped ones first). */
size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max);

/* ---- streams.c: ordering, boundaries, resolution, teardown ----------------------- */

/* Which streams a boundary on `st` ends: those implicitly ordered with it,
 * and itself or not. */
enum rp_ordered { RP_ORDERED_AND_SELF, RP_ORDERED_OTHERS };
/* Resolve and end the segments of the streams implicitly ordered with
 * `st` (and of `st`, as `which` says). Returns the first flush error. */
CUresult rp__end_ordered(rp_stream *st, enum rp_ordered which);
/* The same for the streams ordered with `st`, itself left out, at the cost
 * of one test when it is the context's only stream (every capturable op
 * does this). */
static inline __attribute__((always_inline)) CUresult rp__end_ordered_others(rp_stream *st)
{
    return st->cs->nstreams > 1 ? rp__end_ordered(st, RP_ORDERED_OTHERS) : CUDA_SUCCESS;
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
/* A deferral began on `st` (its first op held): the idle watch makes sure
 * it does not wait on the host's idle time, and the exit hook that every
 * deferred op reaches the driver at exit is armed. */
void rp__deferral_began(void);
/* The deferral protocol, after the matcher took an op of `st` (its fast
 * path and rp__defer alike; `v` what it said): the first op held starts
 * the idle watch and arms the exit hook (rp__deferral_began); a complete
 * match is resolved at once. Returns the first error (cs locked). */
static inline __attribute__((always_inline)) CUresult rp__deferred(rp_stream *st,
                                                                  enum rp_offer v)
{
    if (st->match.ndef == 1)
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

/* ---- handoff.c: the per-thread stream of another thread ------------------------- */

/* The stream is another thread's per-thread stream. */
int rp__handoff_foreign(const rp_stream *st);
/* At the start of a deferral on a per-thread stream, mark the point another
 * thread's resolution must wait for. Returns 0, or -1 when the mark cannot
 * be made: then the stream must not defer (another thread could not
 * resolve its work). */
int rp__handoff_mark_start(rp_stream *st);
/* Where this thread can issue `st`'s deferred work: its own stream, or for
 * another thread's per-thread stream the private stream, made to wait for
 * what the owner had issued before the deferral began (NULL: nowhere). */
CUstream rp__handoff_target(rp_stream *st);
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

/* ---- program.c: the program's own captures, fork and exit ---------------------- */

CUresult rp__program_capture_prepare(void);
void rp__program_capture_begun(CUresult rc);
void rp__program_capture_ended(CUresult rc);
uint64_t rp__engine_program_captures(void);
/* Resolve deferred work everywhere and end every segment (exit). */
CUresult rp__engine_resolve_all(void);
/* At the first deferral: deferred work reaches the driver at exit. */
void rp__arm_exit_hook(void);

/* In a child of fork(): the parent's deferred work and report are the
 * parent's; the engine resolves nothing from the child (rp__engine_forked
 * says so, rp__engine_in_forked_child asks). */
void rp__engine_forked(void);
bool rp__engine_in_forked_child(void);
/* Install the engine into `core` with the options' settings (init.c). */
int rp__engine_setup(struct rp__driver *core, const struct rp__driver *real);

/* ---- idle.c ------------------------------------------------------------------------ */

/* A deferral began: the idle watch (REPRISE_IDLE_US) makes sure it does not
 * wait on the host's idle time. */
void rp__idle_watch(void);

#endif
