/* widen.c - what the matcher takes from an occurrence that a graph with
 * updates can carry (match.c): the values the driver would accept at the
 * call (rp__match_values_ok), and fields taken as volatile while an
 * occurrence is matched (rp__widen, committed when its sequence is
 * launched, dropped when it leaves the candidates). Runs under the lock of
 * the stream's context. */
#include "match.h"

/* Whether the driver would accept `op`'s values at the call, where they
 * differ from the sequence's op `want` that stands for it (its volatile
 * fields, or a field widened for the occurrence): a kernel's geometry
 * within its function's limits (another function's own), a copy's or
 * memset's device operands in live memory. Deferred, a call the driver
 * would refuse would be answered CUDA_SUCCESS and its error returned by
 * whichever call forced the flush (issue 34). */
int rp__match_values_ok(rp_ctxstate *cs, const rp_op *want, const rp_op *op)
{
    if (op->kind == RP_OP_KERNEL) {
        if (!rp__geometry_valid(op->grid)) /* within every device's limits */
            return 0;
        if (op->func != want->func) /* another form: its own function's limits */
            return rp__rec_launch_fits(cs, op, NULL, op->grid);
        return rp__geometry_same(want->grid, op->grid) || rp__rec_launch_fits(cs, want, want, op->grid);
    }
    return rp__op_is_event(op->kind) ||
           rp__operands_live(want, op->kind, op->dst, op->src, op->bytes, op->elem);
}

/* Forget what candidate `s` took as volatile for the occurrence (it left
 * the list: it may go before the stream resolves). */
void rp__widen_drop(rp_stream *st, const rp_seq *s)
{
    unsigned int j = 0;
    for (unsigned int i = 0; i < st->match.nwid; i++)
        if (st->match.wid[i].s != s)
            st->match.wid[j++] = st->match.wid[i];
    st->match.nwid = j;
}

/* `s` is about to be launched for this occurrence (a part of it, or the
 * whole): the fields it took as volatile on the way become its own, so
 * that the updates bring its nodes to the occurrence's values. */
void rp__widen_commit_taken(rp_stream *st, rp_seq *s)
{
    for (unsigned int i = 0; i < st->match.nwid; i++) {
        struct rp_widen *w = &st->match.wid[i];
        if (w->s != s)
            continue;
        if (w->form && rp__seq_add_form(s, w->k, w->form) == 0)
            st->cs->counters.func_forms++;
        if ((s->vmask[w->k] & w->bits) == w->bits)
            continue;
        s->vmask[w->k] |= w->bits;
        s->ex.widened++;
        st->cs->counters.widenings++;
        st->cs->counters.widened_in_match++;
    }
    rp__widen_drop(st, s);
}

/* Kernels of `s` whose function is volatile, with those the stream's
 * pending widenings add. */
static size_t func_volatile(const rp_stream *st, rp_seq *s, size_t *kernels)
{
    size_t fv = 0;
    *kernels = 0;
    const struct rp_vols *l = rp__seq_vols(s); /* counted once per mask */
    if (l) {
        *kernels = l->nkernels;
        fv = l->nfunc;
    } else { /* out of memory: counted here */
        for (size_t k = 0; k < s->det->n; k++) {
            *kernels += s->det->ops[k].kind == RP_OP_KERNEL;
            fv += (s->vmask[k] & RP_VOL_FUNC) != 0;
        }
    }
    for (unsigned int i = 0; i < st->match.nwid; i++)
        fv += st->match.wid[i].s == s && (st->match.wid[i].bits & RP_VOL_FUNC) &&
              !(s->vmask[st->match.wid[i].k] & RP_VOL_FUNC);
    return fv;
}

/* Whether candidate `s`, a sequence with updates whose op k differs from
 * `op`, may take the fields they differ in as volatile for this
 * occurrence (and, once launched, for good): the widening the learner
 * would make after an eager step (policy.c), made while matching, so that
 * the step costs nothing. Only where a node update carries the difference
 * (the same node: rp__op_same_node; rp__op_diff says every field can be
 * set), past the first op (a sequence that matched any first op of its
 * kind would start a match at every one), and, for a kernel whose function
 * differs, while at most a quarter of the sequence's kernels (at least
 * one) switch: a step whose kernels are mostly others is another step,
 * learnt as such. A fork/join sequence is widened only by the learner. */
int rp__widen(rp_stream *st, rp_seq *s, size_t k, const rp_op *op)
{
    const rp_op *want = &s->det->ops[k];
    if (!rp__widen_may(s, k) || st->match.nwid == RP_MAX_WIDEN || !rp__op_same_node(want, op))
        return 0;
    rp_ctxstate *cs = s->cs;
    int ok;
    const rp_param_layout *L = s->lay ? s->lay[k] : rp__rec_layout(cs, want);
    uint64_t diff = rp__op_diff(want, op, L, rp__rec_layout(cs, op), &ok);
    struct rp_widen w;
    if (!rp__widen_take(st, s, k, op, diff, ok, &w))
        return 0;
    st->match.wid[st->match.nwid++] = w;
    return 1;
}

int rp__widen_take(const rp_stream *st, rp_seq *s, size_t k, const rp_op *op, uint64_t diff,
                   int ok, struct rp_widen *w)
{
    const rp_op *want = &s->det->ops[k];
    rp_ctxstate *cs = s->cs;
    uint64_t bits = diff & ~s->vmask[k];
    CUfunction form = (diff & RP_VOL_FUNC) && !rp__seq_form_known(s, k, op->func) ? op->func : NULL;
    if (!ok || (!bits && !form) || !rp__match_values_ok(cs, want, op))
        return 0;
    if (form) {
        size_t kernels, fv = func_volatile(st, s, &kernels), forms = s->nforms;
        for (unsigned int i = 0; i < st->match.nwid; i++)
            forms += st->match.wid[i].s == s && st->match.wid[i].form;
        if (rp__func_fixed() || forms == RP_SEQ_FORMS ||
            ((bits & RP_VOL_FUNC) && fv + 1 > (kernels / 4 > 1 ? kernels / 4 : 1)))
            return 0;
    }
    *w = (struct rp_widen){s, (uint32_t)k, bits, form};
    return 1;
}
