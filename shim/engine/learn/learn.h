/* learn.h - the learning layer of the engine (DESIGN.md §5, §8): each
 * stream's segment of eagerly executed ops since its last boundary, counted
 * by the detectors when it ends (by content, for exact repeats; by
 * structure, for repeats whose arguments change); the period of streams
 * without boundaries; rest for streams whose learning does not pay
 * (learn.c); and the capture policy: warmup, variants or updates, back-off,
 * the graphs a context keeps (policy.c). It calls the sequence layer to
 * capture; what it cannot do itself (resolve a stream before a cut) it
 * reports to the coordinator, which calls back down. Runs under the
 * context's lock. */
#ifndef REPRISE_LEARN_H
#define REPRISE_LEARN_H

#include "seq.h"

/* ---- learn.c: segments, periods, rest -------------------------------------- */

/* Append an eagerly executed op to the stream's segment (the record moves
 * into it; `op` is zeroed). `pending` is the reason it counts under if the
 * segment is never captured. */
void rp__seg_append(rp_stream *st, rp_op *op, enum rp__eager_reason pending);
/* The segment of `st` ends: count it, and capture it if the detector asks. */
void rp__seg_end(rp_stream *st);
/* Forget the segment of `st` without counting it (its stream goes). */
void rp__seg_clear(rp_stream *st);
/* The next capturable op of `st` gets its position. Returns 1 when the
 * stream's period says a step or chunk starts at it: the caller then
 * resolves what `st` holds deferred (it began before the cut and cannot be
 * this step's graph) and calls rp__learn_cut; 0 otherwise. */
int rp__learn_next(rp_stream *st, rp_op *op);
/* Make the steps of the stream's period start at position `pos` (where a
 * sequence being matched began): a cut the period would make inside a
 * match that goes on. No effect without a period (a landmark cuts where it
 * comes). */
void rp__learn_realign(rp_stream *st, uint64_t pos);
/* The cut rp__learn_next announced: the segment learnt so far ends at
 * every step it holds, and the next one begins at a step or chunk. */
void rp__learn_cut(rp_stream *st);
/* The cut rp__learn_cuts_next announced, taken before an op the matcher's
 * fast path defers, on a stream that learnt nothing and holds nothing
 * since the last: what rp__learn_next and rp__learn_cut would do (the op's
 * position is the fast path's). */
void rp__learn_cut_empty(rp_stream *st);
/* 1 when rp__learn_next would cut before the stream's next op (no effect
 * but deciding a period's step when a cut comes). Inline, it answers the
 * ops between a period's cuts (every launch asks). */
int rp__learn_cuts_next_slow(rp_stream *st);
static inline int rp__learn_cuts_next(rp_stream *st)
{
    const rp_period *p = st->learn.per;
    if (RP_LIKELY(!p || !rp__period_cuts(p) || st->opno < st->learn.nocut_until ||
                  rp__period_no_cut_at(p, st->opno, rp__eng.cfg.max_held)))
        return 0;
    return rp__learn_cuts_next_slow(st);
}
/* A replay on `st`: its learning paid off (it does not rest). */
static inline void rp__learn_paid(rp_stream *st)
{
    st->learn.paid_opno = st->opno;
    st->learn.rest_level = 0;
}
/* 1 while `st` rests from learning: its eager ops are not recorded. */
static inline int rp__learn_resting(const rp_stream *st)
{
    return st->learn.rest_until > st->opno;
}
/* A host boundary on `st` (before its segment ends): a stream cut by its
 * period whose boundaries fall twice in a row at the same op inside its
 * step has its steps start after them from then on. */
void rp__learn_boundary(rp_stream *st);
/* Release what learning keeps for a stream (its segment's records, its
 * period detector). */
void rp__learn_stream_free(rp_stream *st);
/* What a resolution of `st` did, for learning: a replay (`replayed`, or
 * NULL) pays the stream's learning off (after four, the sequence has proved
 * itself: its back-off and its entry's failures are forgotten); it, or parts
 * of the occurrence launched before (`parted`), end the segment before it
 * (the ops around a graph launch are not contiguous), and the `n` flushed
 * records at `flushed` join the segment (each moves into it). */
void rp__learn_resolved(rp_stream *st, rp_seq *replayed, int parted, rp_op *flushed, size_t n);

/* ---- policy.c: what is captured, and what is kept ----------------------------- */

/* The segment that just ended on `st` was asked for (by-content entry `e`)
 * or learnt by structure: capture it, an exact variant, or with updates, as
 * the policy says (learn.c's rp__seg_end calls these; `variant_content`:
 * an exact variant has the segment's content). */
int rp__learn_backing_off(const rp_stream *st, const rp_det_entry *e);
int rp__learn_volatile(rp_stream *st, int variant_content);
int rp__learn_capture(rp_ctxstate *cs, rp_detector *d, rp_det_entry *e, const uint64_t *vmask,
                      int by_period, CUstream home);
/* Drop, once no stream matches against them, the sequences whose launch or
 * update failed (their segments back off), and the exact variants passed
 * over again and again for a sequence with updates (policy.c). */
void rp__learn_sweep(rp_ctxstate *cs);
/* Destroy every sequence of the context (a teardown; their report lines
 * are kept). */
void rp__learn_forget_seqs(rp_ctxstate *cs);

#endif
