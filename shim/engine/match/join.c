/* join.c - memsets and copies that join the run a stream holds without
 * their record (or with it, before the general path's rp__match_offer:
 * rp__match_join_or_offer), and launches the run's one candidate keeps, each
 * deferred before the general path (issue 36): decided as rp__seq_match
 * decides for the record, only where the general path would keep the
 * candidate and hold the op (and let go, of several, those it would let
 * go as another node's); else nothing is done and the general path takes
 * the op (match.c). Runs under the lock of the stream's context. */
#include "match.h"

#include <string.h>

/* Whether op k of `s` (not broken) is the memset or device-to-device copy
 * `c`: rp__seq_match's answer for its record, field by field. Equal outside
 * the op's mask (its structure, then, for a memset, its destination and
 * value, for a copy, its operands and size: rp__op_match_masked, which is
 * rp__op_same_content for an empty mask), and, where the mask is not
 * empty, its device operands in live memory (rp__match_values_ok). A copy
 * recorded with a size that is structure (staged, or of no bytes) is not
 * one of any size the call can have. */
static inline __attribute__((always_inline)) int call_match(const rp_stream *st, const rp_seq *s,
                                                          size_t k, const rp_call_other *c)
{
    const rp_op *w = &s->det->ops[k];
    uint64_t m = s->vmask ? s->vmask[k] : 0;
    if (w->kind != c->kind || w->flags != c->flags || w->ctx != c->ctx || w->stream != c->stream)
        return 0;
    if (c->kind == RP_OP_MEMSET) {
        if (w->bytes != c->bytes || w->elem != c->elem ||
            !((m & RP_VOL_DST) || w->dst == c->dst) || !((m & RP_VOL_VALUE) || w->value == c->value))
            return 0;
    } else if (rp__op_staged(w) || !w->bytes || !((m & RP_VOL_DST) || w->dst == c->dst) ||
               !((m & RP_VOL_SRC) || w->src == c->src) ||
               !((m & RP_VOL_BYTES) || w->bytes == c->bytes)) {
        return 0;
    }
    if (!m || rp__operands_live(w, c->kind, c->dst, c->src, c->bytes, c->elem))
        return 1;
    rp__match_dead =
        (struct rp_match_dead){s, k, st->opno, c->kind, c->dst, c->src, c->bytes, c->elem};
    return 0;
}

/* The record of `c` (debug builds: call_match is checked against rp__seq_match). */
static inline rp_op call_record(const rp_call_other *c)
{
    return (rp_op){.kind = c->kind, .entry = c->entry, .flags = c->flags, .ctx = c->ctx,
                   .stream = c->stream, .dst = c->dst, .src = c->src, .bytes = c->bytes,
                   .value = c->value, .elem = c->elem};
}

/* With several candidates (rp__join_candidate's `b` borrowed), 1 when
 * narrow() would let every one but `b` go, each op k there being another
 * node than the op (rp__op_same_node: neither rp__seq_match nor a widening
 * takes it; a step's variant with a kernel where the op is a copy), then
 * `b` alone left (it may complete: note_complete, as with one): each a
 * bit of *drop, by its place in the list (rp__match_drop); else 0 (a
 * broken one, or one whose op k is the op's node: narrow() may keep or
 * widen it), and the general path decides. */
static int join_several(const rp_stream *st, const rp_seq *b, size_t k, const rp_op *op,
                        const rp_call_other *c, uint32_t *drop)
{
    size_t nc = st->match.ncand;
    int found = 0;
    rp_op rec;
    if (!op) {
        rec = call_record(c);
        op = &rec;
    }
    for (size_t i = 0; i < nc; i++) {
        const rp_seq *s = st->match.cand[i];
        if (s->broken || NEVER(k >= s->det->n)) /* (complete ones left the list) */
            return 0;
        if (s == b) {
            found = 1;
        } else if (!rp__op_same_node(&s->det->ops[k], op)) {
            HOLDS(!rp__seq_match(s, k, op));
            *drop |= 1u << i;
        } else {
            return 0;
        }
    }
    return !NEVER(!found); /* the borrowed one is a candidate */
}

/* The same, 1 at once (*drop 0) with one candidate. */
static inline int join_others(const rp_stream *st, const rp_seq *b, size_t k, const rp_op *op,
                              const rp_call_other *c, uint32_t *drop)
{
    *drop = 0;
    return RP_LIKELY(st->match.ncand == 1) || join_several(st, b, k, op, c, drop);
}

enum rp_offer rp__match_join_call(rp_stream *st, const rp_call_other *c)
{
    size_t k = st->match.ndef;
    rp_seq *b = rp__join_candidate(st, c->entry);
    rp__match_dead.s = NULL; /* only the last call's answer is taken */
    if (!b)
        return RP_OFFER_EAGER;
    int same = call_match(st, b, k, c);
#ifndef NDEBUG /* (asking the driver about a volatile operand's memory twice) */
    rp_op rec = call_record(c);
    HOLDS(same == rp__seq_match(b, k, &rec));
#endif
    uint32_t drop;
    if (!same || !join_others(st, b, k, NULL, c, &drop) || !rp__join_room(st, b, k))
        return RP_OFFER_EAGER;
    if (drop) {
        rp_op got = call_record(c);
        rp__match_drop(st, drop, &got);
    }
    if (b->vmask)
        rp__arena_put_words(rp__arena_of(st, b, k), c->dst, c->src, c->bytes, c->value);
    return rp__joined_at(st, b, k);
}

/* A memset, a device-to-device copy or a device-to-host copy into pinned
 * memory that is the next op of the one candidate whose launches the stream
 * holds borrowed (the fast path's run; or of the borrowed one of several,
 * each other let go as join_several says), or of the one candidate
 * left of a run the general path wrote down (rp__match_joinable): the general path
 * would keep the candidate (rp__seq_match; narrow) and defer the record,
 * completing the candidate at its last op (note_complete); here it joins
 * the borrowed run instead (no write-down of the launches before it; the
 * candidate of a written-down run lends its records from this op on, as
 * the fast path's next launch would make it lend them), its values, for a
 * sequence with updates, in the arena (also an exact one's: its op may be
 * widened while it is held, as a launch's). Only through the entry point
 * the sequence's op was recorded from, which a flush issues it through (the
 * general path keeps the program's: a synchronous memset and its
 * asynchronous form on the legacy stream compare alike). DEFERRED or
 * COMPLETE as rp__match_defer would say (the record let go: it owns
 * nothing), or EAGER: not so, nothing done. A training step's zeroed
 * gradients, a decoder's cache copies, a step's read-back at its end. */
enum rp_offer rp__match_join(rp_stream *st, rp_op *op)
{
    size_t k = st->match.ndef;
    rp_seq *b = rp__match_joins_kind(op->kind) ? rp__join_candidate(st, op->entry) : NULL;
    uint32_t drop;
    if (!b || !rp__seq_match_op(st, b, k, op) || !join_others(st, b, k, op, NULL, &drop) ||
        !rp__join_room(st, b, k))
        return RP_OFFER_EAGER;
    if (drop)
        rp__match_drop(st, drop, op);
    if (b->vmask)
        rp__arena_put_other(rp__arena_of(st, b, k), op);
    /* Its record is let go: a memset's or copy's owns nothing (no
     * parameters, attributes or staged bytes). */
    HOLDS(!op->params && !op->attrs && !op->data);
    return rp__joined_at(st, b, k);
}

enum rp_offer rp__match_join_or_offer(rp_stream *st, rp_op *op)
{
    enum rp_offer v = st->match.borrowed_seq ? rp__match_join(st, op) : RP_OFFER_EAGER;
    return v != RP_OFFER_EAGER ? v : rp__match_offer(st, op);
}

enum rp_offer rp__match_kept(rp_stream *st, rp_op *op)
{
    size_t k = st->match.ndef;
    rp_seq *s = st->match.ncand == 1 ? st->match.cand[0] : NULL;
    if (!k || !s || s->broken || op->kind != RP_OP_KERNEL || !rp__seq_match(s, k, op) ||
        !rp__def_room_for(st, s))
        return RP_OFFER_EAGER;
    op->opno = st->opno; /* its position, as rp__learn_next gives it (the caller counts it) */
    if (st->match.borrowed_seq == s && st->match.nown < RP_OWN_MAX && k < RP_OWN_SPAN) {
        /* The run stays borrowed: the record takes op k's place among the
         * borrowed ones (rp_stream.match.own; room made by rp__borrow), as
         * rp__match_defer would keep it after writing the run down. */
        st->match.def[k] = *op;
        memset(op, 0, sizeof *op); /* moved, as defer_push moves it */
        st->match.own[st->match.nown++] = (uint32_t)k;
        st->match.ownbits[k / 64] |= 1ull << (k % 64);
        st->match.ownp = st->match.ownbits;
        return rp__joined_at(st, s, k);
    }
    rp__match_write_down(st); /* what rp__match_offer does first */
    enum rp_offer v = rp__match_defer(st, op); /* as narrow() keeps `s` */
    HOLDS(v == RP_OFFER_DEFERRED || v == RP_OFFER_COMPLETE); /* room made: nothing staged */
    return v;
}
