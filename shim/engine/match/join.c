/* join.c - memsets and copies that join the run a stream holds without
 * their record, and recorded launches the run's one candidate keeps, each
 * deferred before the general path (issue 36): decided as rp__seq_match
 * decides for the record, only where the general path would keep the
 * candidate and hold the op; else nothing is done and the general path
 * takes the op (match.c). Runs under the lock of the stream's context. */
#include "match.h"

/* Whether op k of `s` (not broken) is the memset or device-to-device copy
 * `c`: rp__seq_match's answer for its record, field by field. Equal outside
 * the op's mask (its structure, then, for a memset, its destination and
 * value, for a copy, its operands and size: rp__op_match_masked, which is
 * rp__op_same_content for an empty mask), and, where the mask is not
 * empty, its device operands in live memory (rp__match_values_ok). A copy
 * recorded with a size that is structure (staged, or of no bytes) is not
 * one of any size the call can have. */
static int call_match(const rp_stream *st, const rp_seq *s, size_t k, const rp_call_other *c)
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
    if (!same || !rp__join_room(st, b, k))
        return RP_OFFER_EAGER;
    if (b->vmask)
        rp__arena_put_words(rp__arena_of(st, b, k), c->dst, c->src, c->bytes, c->value);
    return rp__joined_at(st, b, k);
}

enum rp_offer rp__match_kept(rp_stream *st, rp_op *op)
{
    size_t k = st->match.ndef;
    rp_seq *s = st->match.ncand == 1 ? st->match.cand[0] : NULL;
    if (!k || !s || s->broken || op->kind != RP_OP_KERNEL || !rp__seq_match(s, k, op) ||
        !rp__def_room_for(st, s))
        return RP_OFFER_EAGER;
    rp__match_write_down(st); /* what rp__match_offer does first */
    op->opno = st->opno; /* its position, as rp__learn_next gives it (the caller counts it) */
    enum rp_offer v = rp__match_defer(st, op); /* as narrow() keeps `s` */
    HOLDS(v == RP_OFFER_DEFERRED || v == RP_OFFER_COMPLETE); /* room made: nothing staged */
    return v;
}
