/* policy.c - the capture policy (DESIGN.md §5): whether a segment that
 * ends is captured, as an exact variant or with volatile fields updated
 * before each replay (or widens the sequence with updates that serves it);
 * what a capture may take over (an executable of a shape that changed for
 * good) or must make room for (the least recently used sequences no stream
 * matches against, within REPRISE_MAX_GRAPHS and REPRISE_MAX_STAGING);
 * streams whose captures keep being replaced back off; sequences whose
 * launch failed are given up. Runs under the context's lock. */
#include "learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stream is matching against `s` (the matcher pins it): it must stay. */
static int seq_in_use(const rp_seq *s)
{
    return s->pins > 0;
}

/* Drop sequence number `i` of the context (its report line is kept). With
 * `wasted`, it was replaced or evicted before it paid off: its stream backs
 * off (the warmup of its next captures doubles). */
static void drop_seq(rp_ctxstate *cs, size_t i, int wasted)
{
    rp_seq *s = rp__seqs_remove(cs, i);
    rp__seq_retire(s);
    if (wasted && s->replays < 2) {
        for (size_t k = 0; k < cs->nstreams; k++) {
            rp_stream *st = &cs->streams[k];
            if (st->used && st->handle == s->home && st->learn.churn < 10) {
                st->learn.churn++;
                cs->counters.backoffs++;
                break;
            }
        }
    }
    rp__det_forget_graph(&cs->det, s->det);
    rp__seq_destroy(s);
    cs->counters.graphs_dropped++;
}

/* The least recently used sequence of the context that no stream is
 * matching against (SIZE_MAX: every one is in use). */
static size_t lru_victim(const rp_ctxstate *cs)
{
    size_t victim = SIZE_MAX;
    for (size_t i = 0; i < cs->nseqs; i++) {
        if (!seq_in_use(cs->seqs[i]) &&
            (victim == SIZE_MAX || cs->seqs[i]->last_use < cs->seqs[victim]->last_use))
            victim = i;
    }
    return victim;
}

static int at_graph_bound(const rp_ctxstate *cs)
{
    return cs->nseqs + cs->nalts >= rp__eng.cfg.max_graphs;
}

/* Make room for one more graph in the context (its sequences' executables
 * counted, the ones beside their own too: rp_seq.alt): drop the least
 * recently used sequences that no stream is matching against. Returns 0, or
 * -1 when every sequence is in use (the capture is skipped: a bound hit). */
static int make_room(rp_ctxstate *cs)
{
    while (at_graph_bound(cs)) {
        size_t victim = lru_victim(cs);
        if (victim == SIZE_MAX)
            return -1;
        cs->counters.evictions++;
        drop_seq(cs, victim, 1);
    }
    return 0;
}

/* A stream whose captures keep being replaced before they pay off backs
 * off: its segments need warmup x 2^churn occurrences before a capture. */
int rp__learn_backing_off(const rp_stream *st, const rp_det_entry *e)
{
    return st->learn.churn && e->seen < ((uint64_t)rp__eng.cfg.warmup << st->learn.churn);
}

/* Whether the new capture of `e` may take sequence `s`'s executable over
 * (cuGraphExecUpdate_v2): a sequence of the same stream with the same
 * number and kinds of ops but another structure (a shape changed in a way
 * no node update can follow), alive and not being matched. */
static int may_take_over(const rp_det_entry *e, const rp_seq *s, CUstream home)
{
    const rp_det_entry *o = s->det;
    if (o == e || o->n != e->n || s->home != home || s->fj.multi || !s->exec || s->broken ||
        seq_in_use(s))
        return 0;
    /* Kernels with launch attributes must carry the same ones: an
     * executable update is not known to change a node's attributes
     * (docs/engine.md, "What is captured"). Memsets must keep their width
     * and element size: cuGraphExecUpdate allows a 1-D memset's dimensions
     * to change only "if the resulting operation ... map[s] onto the work
     * resources already allocated for the node", which a program cannot
     * know, so the stricter reading, as for a node update (the CPU driver
     * refuses it; until issue 34 such an update was asked and refused). */
    size_t k = 0, same = 0;
    for (; k < e->n && o->ops[k].kind == e->ops[k].kind && rp__op_same_attrs(&o->ops[k], &e->ops[k]);
         k++) {
        int same_k = rp__op_same_structure(&o->ops[k], &e->ops[k]);
        if (e->ops[k].kind == RP_OP_MEMSET && !same_k)
            return 0;
        same += same_k;
    }
    /* Of the same structure it is another content of the same shape (a
     * variant, or the sequence with updates that serves them), not a
     * shape that changed. */
    return k == e->n && same < e->n;
}

/* An executable the new capture of `e` takes over, or NULL. A shape that
 * changed may come back (a decode loop's length buckets, a phase that
 * returns), so the old shape's sequence is kept, chosen again at once when
 * it does, while the context has room for one more graph. Only at
 * REPRISE_MAX_GRAPHS, where the least recently used sequence goes anyway,
 * is its executable taken over when it may be (an executable update is
 * cheaper than an instantiation), rather than destroyed. */
static rp_seq *reusable(rp_ctxstate *cs, const rp_det_entry *e, CUstream home)
{
    if (!at_graph_bound(cs))
        return NULL;
    /* A fork/join graph is never updated to another: the update pairs
     * nodes in an order only a single chain makes op order. */
    for (size_t k = 0; k < e->n; k++)
        if (e->ops[k].stream != home || rp__op_is_event(e->ops[k].kind))
            return NULL;
    size_t v = lru_victim(cs);
    return v != SIZE_MAX && may_take_over(e, cs->seqs[v], home) ? cs->seqs[v] : NULL;
}

/* Whether capturing `e` would take the context's pinned staging past
 * REPRISE_MAX_STAGING: the staging of live graphs, the pool's (blocks no
 * graph owns, kept for reuse: lifecycle.c) and what would be allocated new. */
static int staging_over(rp_ctxstate *cs, const rp_det_entry *e)
{
    uint64_t staging = 0;
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++)
        if (rp__op_staged(&e->ops[i]))
            staging += e->ops[i].bytes, n++;
    uint64_t have = cs->counters.staging_live_bytes + cs->lc.pool_bytes;
    if (!staging || have + staging <= rp__eng.cfg.max_staging)
        return 0;
    /* Over at first sight: the pool may serve some of it. */
    size_t *sizes = rp__calloc(n, sizeof *sizes);
    if (!sizes)
        return 1;
    n = 0;
    for (size_t i = 0; i < e->n; i++)
        if (rp__op_staged(&e->ops[i]))
            sizes[n++] = e->ops[i].bytes;
    uint64_t fresh = rp__lc_new_bytes(&cs->lc, sizes, n);
    free(sizes);
    return have + fresh > rp__eng.cfg.max_staging;
}

/* The name of the first kernel of entry `e` ("" if it has none). */
static const char *first_kernel_name(rp_ctxstate *cs, const rp_det_entry *e)
{
    for (size_t k = 0; k < e->n; k++)
        if (e->ops[k].kind == RP_OP_KERNEL)
            return rp__rec_kernel_name(cs, &e->ops[k]);
    return "";
}

/* Capture detector entry `e` of table `d` (with volatile fields `vmask`, or
 * NULL for an exact-content sequence). Returns 0, or -1 when a bound
 * stopped it (the failure is counted either way). */
int rp__learn_capture(rp_ctxstate *cs, rp_detector *d, rp_det_entry *e, const uint64_t *vmask,
                      int by_period, CUstream home)
{
    rp_seq *reuse = reusable(cs, e, home);
    if (!reuse && make_room(cs) != 0) {
        rp__bound_hit(cs, RP_BOUND_GRAPHS);
        rp__det_held_off(d, e);
        return -1;
    }
    if (staging_over(cs, e)) {
        rp__bound_hit(cs, RP_BOUND_STAGING);
        rp__det_held_off(d, e);
        return -1;
    }
    pthread_rwlock_wrlock(&cs->gate);
    rp__nvtx_push("reprise: capture (%zu ops)", e->n);
    rp_seq *s = rp__program_capture_pending() ? NULL : rp__capture(cs, e, vmask, reuse, home);
    rp__nvtx_pop();
    pthread_rwlock_unlock(&cs->gate);
    if (reuse && !reuse->exec) {
        /* Its executable now runs the new sequence. */
        for (size_t i = 0; i < cs->nseqs; i++)
            if (cs->seqs[i] == reuse) {
                drop_seq(cs, i, 1);
                break;
            }
    }
    if (!s) {
        rp__det_capture_failed(d, e);
        cs->counters.capture_failures++;
        return 0;
    }
    s->captured_at = e->seen;
    s->skey = rp__det_key(e->ops, e->n, 1);
    s->by_period = by_period;
    s->last_use = cs->det.clock;
    /* Numbered as captured, from 1 in the process (the report's "sequence
     * 1" is the first graph captured). */
    s->id = atomic_fetch_add(&rp__eng.seq_ids, 1) + 1;
    unsigned int id = s->id;
    if (rp__seqs_add(cs, s) != 0) { /* s is gone: its ops stay eager */
        rp__det_capture_failed(d, e);
        cs->counters.capture_failures++;
        return 0;
    }
    rp__det_captured(d, e);
    cs->counters.graphs_captured++;
    if (vmask)
        cs->counters.volatile_captures++;
    static _Atomic unsigned int captures_logged;
    if (atomic_fetch_add(&captures_logged, 1) < 16)
        rp__info("captured sequence %u: %zu ops, %s%s%s", id, e->n,
                 first_kernel_name(cs, e)[0] ? "first kernel " : "no kernel",
                 first_kernel_name(cs, e), vmask ? ", with volatile arguments" : "");
    return 0;
}

/* The fields in which segment `ops` differs from the entry's first
 * occurrence, op by op, into `mask`. Returns 1 if some field differs and
 * every difference can be updated on a graph, else 0. */
static int volatile_fields(rp_ctxstate *cs, const rp_det_entry *e, const rp_op *ops, uint64_t *mask)
{
    int any = 0;
    for (size_t i = 0; i < e->n; i++) {
        int ok;
        mask[i] = rp__op_diff(&e->ops[i], &ops[i], rp__rec_layout(cs, &e->ops[i]),
                              rp__rec_layout(cs, &ops[i]), &ok);
        if (!ok)
            return 0;
        any |= mask[i] != 0;
    }
    return any;
}

/* Whether an exact variant of by-structure entry `e`'s structure, learnt on
 * `st`, exists: an occurrence of the structure that ran eagerly with a
 * content no variant has then went another way than the variants, on its
 * contents. */
static int has_variant(const rp_ctxstate *cs, const rp_stream *st, const rp_det_entry *e)
{
    for (size_t i = 0; i < cs->nseqs; i++) {
        const rp_seq *s = cs->seqs[i];
        if (!s->vmask && s->skey == e->key && s->det->n == e->n && s->home == st->handle)
            return 1;
    }
    return 0;
}

/* Whether two kernels' parameters lie alike (a parameter index names the
 * same bytes in both). */
static int same_layout(const rp_param_layout *a, const rp_param_layout *b)
{
    if (!a || !b || a->n != b->n || a->total != b->total)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->off[i] != b->off[i] || a->size[i] != b->size[i])
            return 0;
    return 1;
}

/* How `ops` (a new occurrence) differs from `base`, n ops of one stream
 * (base's volatile fields `bmask`, NULL: none), as a shape that changed in
 * place: the same kinds and launch attributes op by op, the fields that
 * differ where both have the same structure (into mask[k], with bmask[k]),
 * and the ops of another structure counted (*other), those among them
 * that are the same node with another function (*funcs: a node update
 * sets it, RP_VOL_FUNC, both layouts known) and the kernels (*kernels).
 * Returns 1 when they compare so (mask filled), 0 when they differ where
 * no update can follow (another kind, other attributes, a field no mask
 * can say). */
static int shape_delta(rp_ctxstate *cs, const rp_op *base, const uint64_t *bmask,
                       const rp_op *ops, size_t n, uint64_t *mask, size_t *other, size_t *funcs,
                       size_t *kernels)
{
    *other = *funcs = *kernels = 0;
    for (size_t k = 0; k < n; k++) {
        const rp_op *a = &base[k], *b = &ops[k];
        uint64_t have = bmask ? bmask[k] : 0;
        if (a->kind != b->kind || !rp__op_same_attrs(a, b))
            return 0;
        *kernels += a->kind == RP_OP_KERNEL;
        int ok = 1;
        if (rp__op_same_structure(a, b)) {
            mask[k] = have | rp__op_diff(a, b, rp__rec_layout(cs, a), rp__rec_layout(cs, b), &ok);
            if (!ok)
                return 0;
            continue;
        }
        (*other)++;
        uint64_t d = rp__op_same_node(a, b) && !rp__func_fixed()
                         ? rp__op_diff(a, b, rp__rec_layout(cs, a), rp__rec_layout(cs, b), &ok)
                         : 0;
        if ((d & RP_VOL_FUNC) && ok) {
            (*funcs)++; /* the same node, another function: a form */
            mask[k] = have | d;
            continue;
        }
        mask[k] = have;
        if (a->kind == RP_OP_KERNEL && !same_layout(rp__rec_layout(cs, a), rp__rec_layout(cs, b)))
            mask[k] &= RP_VOL_GRID | RP_VOL_BLOCK | RP_VOL_SHMEM;
    }
    return 1;
}

/* At most a quarter of n ops of another structure (at least one), and
 * of `kernels` kernels at most a quarter (at least one) with their
 * function volatile in `mask`: a shape that changed in place, not another
 * step that happens to have as many ops. */
static int near_shape(size_t n, size_t other, size_t kernels, const uint64_t *mask)
{
    size_t fv = 0;
    for (size_t j = 0; j < n; j++)
        fv += (mask[j] & RP_VOL_FUNC) != 0;
    return other && 4 * other <= (n > 4 ? n : 4) && fv <= (kernels / 4 > 1 ? kernels / 4 : 1);
}

/* Sequence `s` takes occurrence `ops`'s functions as forms of its kernels
 * and `mask`'s fields as volatile, in place. */
static void widen_in_place(rp_ctxstate *cs, rp_seq *s, const rp_op *ops, const uint64_t *mask)
{
    for (size_t j = 0; j < s->det->n; j++) {
        if (rp__op_other_func(&s->det->ops[j], &ops[j]) && rp__seq_add_form(s, j, ops[j].func) == 0)
            cs->counters.func_forms++;
        uint64_t add = mask[j] & ~s->vmask[j];
        if (add) {
            s->vmask[j] |= add;
            s->ex.widened++;
            cs->counters.widenings++;
        }
    }
}

/* A structure (entry `e`, occurrence `ops`) may be a sequence with updates
 * whose shape changed in place (shape_delta, near_shape: a kernel
 * specialised by size that switches as a decode loop's cache grows,
 * another gemv picked at some lengths, an elementwise kernel vectorized or
 * not by its pointers' alignment). When every op of another structure is
 * the same node with another function, that sequence takes them as forms
 * of its own, and the fields its other ops differ in, in place (*in_place
 * set): the occurrences of the new shape are its from now on, with no
 * graph of their own (kernels that come round in a cycle of forms, one
 * graph). Otherwise, seen for the first time (`first`), it is captured at
 * once with that sequence's volatile fields and those in which it differs
 * from it (into `mask`; for an op of another structure, a kernel's
 * parameters only where both layouts agree) rather than learnt from
 * scratch (issue 28: each length bucket cost REPRISE_WARMUP + 1 tokens
 * eager). Returns how many ops got volatile fields (0: no such sequence,
 * it updates nothing, or they differ where no node update can follow). */
static size_t inherited_fields(rp_ctxstate *cs, const rp_stream *st, const rp_det_entry *e,
                               const rp_op *ops, uint64_t *mask, uint64_t *t, int first,
                               int *in_place)
{
    *in_place = 0;
    for (size_t k = 0; k < e->n; k++)
        if (ops[k].stream != st->handle || rp__op_is_event(ops[k].kind))
            return 0; /* fork/join: never learnt but from its occurrences */
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        const rp_det_entry *o = s->det;
        size_t other, funcs, kernels, nvol = 0, forms = 0;
        if (!s->vmask || s->broken || s->fj.multi || s->home != st->handle || o->n != e->n ||
            !shape_delta(cs, o->ops, s->vmask, ops, e->n, t, &other, &funcs, &kernels))
            continue;
        for (size_t j = 0; j < e->n; j++) {
            nvol += t[j] != 0;
            forms += rp__op_other_func(&o->ops[j], &ops[j]) && !rp__seq_form_known(s, j, ops[j].func);
        }
        if (nvol && near_shape(e->n, other, kernels, t)) {
            if (funcs == other && s->nforms + forms <= RP_SEQ_FORMS &&
                rp__updates_pay(cs, e->n, nvol)) {
                widen_in_place(cs, s, ops, t); /* its own shape, another form */
                *in_place = 1;
                return nvol;
            }
            if (first) {
                memcpy(mask, t, e->n * sizeof *mask);
                return nvol;
            }
        }
    }
    return 0;
}

/* Whether two kernels' names say they are variants of one operation, as a
 * framework picks among them (PyTorch's vectorized_elementwise_kernel<4,
 * F> or <2, F>, softmax_warp_forward<..., 5> or <..., 6>, cuBLAS's gemv
 * kernels by size, add_i64_vec4 or add_i64_unrolled): the names, as the
 * driver gives them (mangled), share at their two ends at least half of
 * the longer one. Two kernels of unrelated names (axpy, stencil3) are two
 * operations, whatever their layouts: a step whose kernel is one or the
 * other is another step, not a form of it. */
static int names_alike(const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y), p = 0, q = 0;
    if (!nx || !ny || !strcmp(x, "?") || !strcmp(y, "?"))
        return 0;
    while (p < nx && p < ny && x[p] == y[p])
        p++;
    while (q < nx - p && q < ny - p && x[nx - 1 - q] == y[ny - 1 - q])
        q++;
    return 2 * (p + q) >= (nx > ny ? nx : ny);
}

/* Whether every op in which `a` and `b` differ in function is a pair of
 * kernels whose names are alike (names_alike). */
static int forms_alike(rp_ctxstate *cs, const rp_op *a, const rp_op *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (rp__op_other_func(&a[k], &b[k]) &&
            !names_alike(rp__rec_kernel_name(cs, &a[k]), rp__rec_kernel_name(cs, &b[k])))
            return 0;
    return 1;
}

/* A structure seen for the first time (entry `e`, occurrence `ops`) whose
 * ops differ from those of another structure counted on the stream (no
 * graph yet) only in some kernels' functions, as two forms of one step
 * (shape_delta, near_shape, every op of another structure the same node),
 * and their differing kernels' names alike (forms_alike: variants of one
 * operation, not a step of other kernels that happens to be as long):
 * their occurrences count together. When they reach the warmup, `e` is
 * captured at once from this occurrence, the differing kernels' functions
 * volatile (the other's a form of its own: rp__learn_capture adds them)
 * with every field either entry saw change (into `mask`). Returns the
 * other entry, or NULL. */
static rp_det_entry *form_family(rp_ctxstate *cs, const rp_stream *st, const rp_det_entry *e,
                                 const rp_op *ops, uint64_t *mask, uint64_t *t)
{
    for (size_t k = 0; k < e->n; k++)
        if (ops[k].stream != st->handle || rp__op_is_event(ops[k].kind))
            return NULL;
    rp_detector *d = &cs->sdet;
    for (size_t i = 0; i < d->used_to; i++) {
        rp_det_entry *f = &d->slots[i];
        size_t other, funcs, kernels;
        if (f == e || !f->key || f->n != e->n || !f->ops || !f->differs ||
            f->state == RP_DET_CAPTURED || f->ops[0].stream != st->handle ||
            f->seen + 1 < rp__eng.cfg.warmup)
            continue;
        if (shape_delta(cs, f->ops, f->differs, ops, e->n, t, &other, &funcs, &kernels) &&
            funcs == other && near_shape(e->n, other, kernels, t) &&
            forms_alike(cs, f->ops, ops, e->n)) {
            memcpy(mask, t, e->n * sizeof *mask);
            return f;
        }
    }
    return NULL;
}

/* Segment `ops` of `st` came with a structure not seen before (entry `e`):
 * counted, and, for the report, where it differs from the stream's
 * segment before it (the first op whose structure differs, or the number
 * of ops). Only when a structure is new: a loop that repeats pays nothing. */
static void note_new_shape(rp_stream *st, const rp_det_entry *e)
{
    rp_ctxstate *cs = st->cs;
    const rp_det_entry *p = st->learn.prev_shape;
    cs->counters.new_shapes++;
    if (!p || !p->key || p->id != st->learn.prev_shape_id || p == e || !p->ops)
        return;
    const rp_op *ops = st->learn.seg;
    size_t n = st->learn.nseg < p->n ? st->learn.nseg : p->n, k = 0;
    while (k < n && rp__op_same_structure(&p->ops[k], &ops[k]))
        k++;
    struct rp__diff *d = &cs->shapes[cs->nshapes++ % RP_CTX_SHAPES];
    memset(d, 0, sizeof *d);
    d->why = RP_DIV_SHAPE;
    d->structure = 1;
    d->op = (unsigned int)k;
    rp_op_delta delta;
    if (k == n || !rp__op_delta(&p->ops[k], &ops[k], rp__rec_layout(cs, &p->ops[k]), &delta)) {
        d->field = RP_FIELD_LENGTH;
        d->had = p->n;
        d->got = st->learn.nseg;
        return;
    }
    d->field = delta.field;
    d->index = delta.index;
    d->at = delta.at;
    d->had = delta.had;
    d->got = delta.got;
    d->structure = delta.structure;
    snprintf(d->kind, sizeof d->kind, "%s", rp__op_kind_name(p->ops[k].kind));
    snprintf(d->kernel, sizeof d->kernel, "%s", rp__rec_kernel_name(cs, &p->ops[k]));
    if (d->field == RP_FIELD_KIND)
        snprintf(d->got_kind, sizeof d->got_kind, "%s", rp__op_kind_name(ops[k].kind));
    if (d->field == RP_FIELD_FUNCTION || d->field == RP_FIELD_KIND)
        snprintf(d->got_kernel, sizeof d->got_kernel, "%s", rp__rec_kernel_name(cs, &ops[k]));
}

/* A segment's structure is counted too. Each occurrence's differences from
 * the first join the entry's `differs`, so that a capture with volatile
 * fields starts with every field seen changing, not only those of one
 * pair. If the structure keeps repeating with more distinct contents than
 * REPRISE_MAX_VARIANTS, or with contents that keep changing (detector.h),
 * capture it once with the differing fields volatile (updated before each
 * replay); if that sequence exists already, the fields that differ now
 * become volatile too, so that the next occurrence matches. Returns 1 when
 * a capture with volatile fields was made (or tried) from this segment, or
 * such a sequence exists and serves it (widened if need be), else 0: no
 * exact variant is captured beside a sequence with updates. */
int rp__learn_volatile(rp_stream *st, int variant_content)
{
    rp_ctxstate *cs = st->cs;
    rp_det_entry *e = NULL;
    rp_det_verdict v = rp__det_observe(&cs->sdet, st->learn.seg, st->learn.nseg, &e);
    if (e && !e->stamp) /* a new entry: it keeps this occurrence */
        e->stamp = rp__frees() + 1;
    st->learn.shape_new = e && e->seen == 1;
    if (st->learn.shape_new)
        note_new_shape(st, e);
    st->learn.prev_shape = e;
    st->learn.prev_shape_id = e ? e->id : 0;
    if (!e || !e->differs || e->n != st->learn.nseg)
        return 0;
    /* Occurrences that keep diverging from the structure's exact variants
     * (eager, with a content none of them has: deferred and flushed, or
     * not even deferred when what differs is its first op) ask for the
     * graph with updates (detector.h). */
    v = rp__det_diverging(&cs->sdet, e, v, !variant_content && has_variant(cs, st, e));
    /* mask, and a scratch mask of as many ops after it (what another
     * sequence's shape would make volatile, kept only where it serves). */
    uint64_t *mask = rp__calloc(2 * e->n, sizeof *mask);
    if (!mask) {
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        return 0;
    }
    uint64_t *scratch = mask + e->n;
    int ok = volatile_fields(cs, e, st->learn.seg, mask);
    int in_place = 0;
    if ((v == RP_DET_WARMING || v == RP_DET_CAPTURE) && !rp__learn_backing_off(st, e) &&
        inherited_fields(cs, st, e, st->learn.seg, mask, scratch,
                         v == RP_DET_WARMING && e->seen == 1, &in_place)) {
        if (in_place) { /* another form of a known sequence's kernels: its own now */
            free(mask);
            return 1;
        }
        v = RP_DET_CAPTURE; /* a known sequence's new shape: captured now */
        ok = 1;             /* its first occurrence: nothing differs yet */
    }
    rp_det_entry *fam = NULL;
    if (!in_place && v == RP_DET_WARMING && e->seen == 1 && !rp__learn_backing_off(st, e) &&
        (fam = form_family(cs, st, e, st->learn.seg, mask, scratch))) {
        v = RP_DET_CAPTURE; /* another form of a step counted already: the two warmed up */
        ok = 1;
    }
    size_t nvol = 0;
    for (size_t k = 0; ok && k < e->n; k++) {
        e->differs[k] |= mask[k];
        nvol += e->differs[k] != 0;
    }
    int served = 0;
    if (v == RP_DET_CAPTURE && rp__learn_backing_off(st, e)) {
        /* The stream backs off: not yet (its content's verdict says why). */
    } else if (v == RP_DET_CAPTURE && (!ok || !rp__updates_pay(cs, e->n, nvol))) {
        /* Not captured; retried after a back-off. With too many volatile
         * nodes, every replay would update more than allowed (or more than
         * pays, cost.c): a graph would never run. */
        if (ok)
            rp__bound_hit(cs, RP_BOUND_UPDATES);
        rp__det_held_off(&cs->sdet, e);
    } else if (ok && v == RP_DET_CAPTURE) {
        /* When the program has freed memory since the first occurrence,
         * its addresses may name freed memory: captured from this one
         * (every field that differed stays volatile). */
        if (e->stamp != rp__frees() + 1)
            rp__det_refresh(e, st->learn.seg, st->learn.nseg);
        rp__learn_capture(cs, &cs->sdet, e, e->differs, st->learn.cut_by_period, st->handle);
        for (size_t i = 0; fam && i < cs->nseqs; i++) /* the family's functions: its forms */
            if (cs->seqs[i]->det == e)
                for (size_t k = 0; k < e->n; k++)
                    if (rp__op_other_func(&e->ops[k], &fam->ops[k]) &&
                        rp__seq_add_form(cs->seqs[i], k, fam->ops[k].func) == 0)
                        cs->counters.func_forms++;
        served = 1;
    } else if (ok && v == RP_DET_HAS_GRAPH) {
        for (size_t i = 0; i < cs->nseqs; i++) {
            rp_seq *s = cs->seqs[i];
            if (s->det != e || !s->vmask)
                continue;
            size_t now_volatile = 0;
            for (size_t k = 0; k < e->n; k++) {
                uint64_t add = e->differs[k] & ~s->vmask[k];
                if (add) {
                    s->vmask[k] |= add;
                    s->ex.widened++;
                    cs->counters.widenings++;
                }
                now_volatile += s->vmask[k] != 0;
            }
            if (!rp__updates_pay(cs, e->n, now_volatile))
                s->broken = 1; /* could never replay any more: dropped, backs off */
            /* It serves this content from now on: no exact variant beside. */
            served |= !s->broken;
        }
    }
    free(mask);
    return served;
}

/* An exact variant passed over more often than this since its last replay
 * is not one any more: a variant is a content that comes back within
 * REPRISE_WARMUP + 1 occurrences of its structure (docs/engine.md, "When
 * arguments change"), and each time it was passed over a sequence with
 * updates went on matching an occurrence it could not serve. */
static unsigned int passed_over_limit(void)
{
    return rp__eng.cfg.warmup + 1;
}

/* Sequences whose launch or update failed are dropped once no stream is
 * matching against them; their segment backs off before it is tried again.
 * So are exact variants that occurrences keep diverging from where a
 * sequence with updates serves them (the matcher counts it in
 * `passed_over`): the switch from variants to updates, which would
 * otherwise leave them in every match's candidates, diverging for ever
 * (issue 28: a counter whose groups repeat within the step). Their
 * contents are the sequence with updates' from then on (an executable of
 * their own if they come back: seq/contents.c); not a waste (no back-off of the
 * stream), but their entry waits before an exact capture again. */
void rp__learn_sweep(rp_ctxstate *cs)
{
    for (size_t i = 0; i < cs->nseqs;) {
        rp_seq *s = cs->seqs[i];
        int passed = !s->vmask && s->passed_over > passed_over_limit();
        if ((!s->broken && !passed) || seq_in_use(s)) {
            i++;
            continue;
        }
        rp_det_entry *e = s->det;
        if (passed) {
            cs->counters.variants_passed_over++;
            static _Atomic unsigned int passed_logged;
            if (atomic_fetch_add(&passed_logged, 1) < 4)
                rp__info("exact variant %u dropped after %llu replays: its occurrences kept "
                         "diverging on arguments a sequence with updates serves",
                         s->id, (unsigned long long)s->replays);
        } else {
            static _Atomic unsigned int drops_logged;
            if (atomic_fetch_add(&drops_logged, 1) < 8)
                rp__info("sequence %u given up after %llu replays (a launch or update failed, "
                         "or replays kept needing too many updates); it backs off before a new "
                         "capture", s->id, (unsigned long long)s->replays);
        }
        drop_seq(cs, i, 0);
        rp__det_held_off(&cs->det, e);
    }
}

void rp__learn_forget_seqs(rp_ctxstate *cs)
{
    /* Report lines first: each counts its variants among all the others. */
    for (size_t i = 0; i < cs->nseqs; i++)
        rp__seq_retire(cs->seqs[i]);
    while (cs->nseqs) {
        rp_seq *s = rp__seqs_remove(cs, cs->nseqs - 1);
        rp__det_forget_graph(&cs->det, s->det);
        rp__seq_destroy(s);
        cs->counters.graphs_dropped++;
    }
}
