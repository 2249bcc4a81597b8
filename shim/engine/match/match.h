/* match.h - the matcher's fast path (replay.c is the rest of the matcher),
 * inline in the launch hook: it runs for every launch of a loop's steady
 * state, and a call with its frame weighed on each. */
#ifndef REPRISE_MATCH_H
#define REPRISE_MATCH_H

#include "engine.h"

/* 1 when the launch's geometry and arguments are those of the image. The
 * launch is taken by value, and its fields read one by one, so that it
 * need not be made in memory (the caller's inline code keeps it in
 * registers). */
static inline __attribute__((always_inline)) int rp__fast_same(const rp_fast *fo, rp_launch l)
{
    const unsigned int *g = fo->geometry;
    if (((g[0] ^ l.grid[0]) | (g[1] ^ l.grid[1]) | (g[2] ^ l.grid[2]) | (g[3] ^ l.block[0]) |
         (g[4] ^ l.block[1]) | (g[5] ^ l.block[2]) | (g[6] ^ l.shmem)) ||
        (fo->nparams && !l.kp))
        return 0;
    for (uint32_t i = 0; i < fo->nparams; i++) {
        uint64_t v;
        if (fo->size4 >> i & 1) {
            uint32_t u;
            memcpy(&u, l.kp[i], 4);
            v = u;
        } else {
            memcpy(&v, l.kp[i], 8);
        }
        if (v != fo->vals[i])
            return 0;
    }
    return 1;
}

/* Op k of `s` stands for launch `l` (`s` the stream's only candidate, or,
 * at k = 0, the one rp__match_first chose): deferred as rp__match_launch
 * says. */
static inline __attribute__((always_inline)) enum rp_offer
rp__match_at(rp_stream *st, rp_seq *s, size_t k, CUstream h, rp_launch l, enum rp__entry entry)
{
    size_t n = s->det->n;
    const rp_fast *fo = s->match.fast ? &s->match.fast[k] : NULL;
    if (!fo || fo->f != l.f || fo->stream != h || fo->tag != rp__fast_tag(entry, l.ptsz) ||
        s->broken)
        return RP_OFFER_EAGER;
    if (RP_UNLIKELY(s->vmask)) {
        /* Every launch of a sequence with updates keeps its values in the
         * arena, also one matched exactly: its op's mask may be widened
         * while it is deferred (another thread's per-thread stream learns
         * the same structure), and the arena is then what it is read from. */
        rp_launch copy = l; /* in memory here only */
        if (!rp__match_masked(st, s, k, &copy))
            return RP_OFFER_EAGER;
    } else if (RP_LIKELY(fo->words)) {
        if (!rp__fast_same(fo, l))
            return RP_OFFER_EAGER;
    } else {
        rp_launch copy = l;
        if (!rp__op_is_launch(&s->det->ops[k], s->lay[k], copy.f, copy.grid, copy.kp))
            return RP_OFFER_EAGER;
    }
    if (!st->match.borrowed_seq) {
        /* Room for the rest of the sequence now: writing it down later
         * must not fail. */
        if (n > st->match.capdef && rp__def_reserve(st, n) != 0)
            return RP_OFFER_EAGER;
        st->match.borrowed_seq = s;
        st->match.borrowed_from = k;
        st->match.borrowed_opno = st->opno;
    }
    if (!k) { /* as rp__match_offer and rp__defer begin a match */
        st->match.cand[0] = s;
        st->match.ncand = 1;
        st->match.complete = NULL;
        rp__idle_watch();
    }
    st->opno++;
    /* Complete after op k: `s`, the only candidate, is the longest
     * (replay.c, note_complete). */
    if ((st->match.ndef = k + 1) < n)
        return RP_OFFER_DEFERRED;
    st->match.complete = s;
    st->match.ncand = 0;
    return RP_OFFER_COMPLETE;
}

/* For a launch `l` (by value: see rp__fast_same) through `entry` on the
 * stream whose record's handle is `h`, in the trace of `st` (`h`'s, or the
 * one it joined). When `st` holds deferred ops that one sequence alone
 * still matches (or none, and rp__match_first picks one) and `l` is that
 * sequence's next op (exactly, or outside the op's volatile fields, whose
 * values are then kept: rp__match_masked), it is deferred as a borrowed
 * record (the sequence's own: nothing recorded, nothing copied, written
 * down only if something reads it: see rp_stream.match.borrowed_seq) and given its
 * position: DEFERRED, or COMPLETE (resolve now). Otherwise EAGER, and
 * nothing was done (the caller records the launch and offers it as usual).
 * The sequence outlives the borrowed records: it stays the candidate or the
 * complete match until the stream is resolved, and a resolution makes the
 * flushed ones owned. */
static inline __attribute__((always_inline)) enum rp_offer
rp__match_launch(rp_stream *st, CUstream h, rp_launch l, enum rp__entry entry)
{
    if (l.extra || (l.cfg && l.cfg->numAttrs))
        return RP_OFFER_EAGER;
    size_t k = st->match.ndef;
    if (RP_UNLIKELY(!k)) {
        rp_launch copy = l; /* in memory here only */
        return rp__match_first(st, h, &copy, entry);
    }
    if (st->match.ncand != 1)
        return RP_OFFER_EAGER;
    return rp__match_at(st, st->match.cand[0], k, h, l, entry);
}

#endif
