/* learn.c - learning what repeats (DESIGN.md §5): each stream's segment of
 * eagerly executed ops since its last boundary, counted by the detectors
 * when it ends (by content, for exact repeats; by structure, for repeats
 * whose arguments change); the capture policy (warmup, variants or updates,
 * back-off, bounds); and the context's table of sequences with graphs, kept
 * within REPRISE_MAX_GRAPHS by least recent use. Runs under the context's
 * lock. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

void rp__seg_clear(rp_stream *st)
{
    for (size_t i = 0; i < st->learn.nseg; i++)
        rp__op_free(&st->learn.seg[i]);
    st->learn.nseg = 0;
    st->learn.overflow = 0;
    st->learn.diverged = 0;
}

/* Why the ops of a segment that outgrew REPRISE_MAX_OPS ran eagerly: no
 * period was found on a stream that is looking for one, or the bound. */
static enum rp__eager_reason overflow_reason(const rp_stream *st)
{
    return st->learn.per && !rp__period_cuts(st->learn.per) ? RP_EAGER_NO_PERIOD : RP_EAGER_BOUND;
}

/* A segment this long with no boundary in sight: the stream starts looking
 * for its period (DESIGN.md §8). Loops that synchronize every few ops never
 * pay for it. */
#define WATCH_AFTER 16

static void watch_period(rp_stream *st, const rp_op *op)
{
    if (!st->learn.per && st->learn.nseg >= WATCH_AFTER) {
        unsigned int repeats = rp__eng_cfg.warmup > 1 ? rp__eng_cfg.warmup - 1 : 1;
        st->learn.per = rp__malloc(sizeof *st->learn.per);
        if (st->learn.per && rp__period_init(st->learn.per, repeats, rp__eng_cfg.min_ops) != 0) {
            free(st->learn.per);
            st->learn.per = NULL;
        }
        if (!st->learn.per)
            rp__bound_hit(st->cs, RP_BOUND_MEMORY);
    }
    if (st->learn.per) {
        uint64_t landmarks = st->learn.per->lfound;
        int changed = rp__period_feed(st->learn.per, op->opno, op->skey);
        if (st->learn.per->lfound != landmarks) {
            st->cs->counters.landmarks_found++;
            static _Atomic unsigned int lm_logged;
            if (atomic_fetch_add(&lm_logged, 1) < 8)
                rp__info("stream %p has no single period, but a run of ops that comes back "
                         "every %llu to %llu ops with no boundary: its steps are cut after it",
                         (void *)st->handle, (unsigned long long)st->learn.per->lgmin,
                         (unsigned long long)st->learn.per->lgap);
        }
        if (changed && st->learn.per->d) {
            st->cs->counters.periods_found++;
            st->learn.per_align = st->trace.nmembers > 0;
            static _Atomic unsigned int logged;
            if (atomic_fetch_add(&logged, 1) < 8)
                rp__info("stream %p repeats every %llu ops with no boundary: its steps are "
                         "captured from there, in chunks of at most %zu ops",
                         (void *)st->handle, (unsigned long long)st->learn.per->d, rp__eng_cfg.max_held);
        }
    }
}

/* End the segment of `st` at every point its period cuts inside it, each
 * piece counted as a segment of its own: when the period is first found,
 * the segment already holds several steps, and they count towards the
 * warmup at once instead of being learnt again. */
static void seg_end_at_cuts(rp_stream *st)
{
    if (st->learn.overflow) { /* records were dropped: it cannot be cut up */
        rp__seg_end(st);
        return;
    }
    rp_op *all = st->learn.seg;
    size_t n = st->learn.nseg, start = 0, diverged = st->learn.diverged;
    for (size_t i = 1; i <= n; i++) {
        if (i < n && !rp__period_cut_before(st->learn.per, all[i].opno, rp__eng_cfg.max_held))
            continue;
        st->learn.seg = all + start;
        st->learn.nseg = i - start;
        /* Flushed ops are not told apart within a segment: counted first. */
        st->learn.diverged = diverged < st->learn.nseg ? diverged : st->learn.nseg;
        diverged -= st->learn.diverged;
        rp__seg_end(st); /* frees the piece's records */
        st->learn.cut_by_period = 1;
        start = i;
    }
    st->learn.seg = all;
    st->learn.nseg = 0;
    st->learn.diverged = 0;
}

int rp__learn_cuts_next(const rp_stream *st)
{
    /* Host boundaries, where the program has them at least every
     * REPRISE_MAX_HELD ops (and every other period), delimit the steps as
     * they are: the period cuts only a stream that has gone longer than
     * that without one. */
    if (!st->learn.per || !rp__period_cuts(st->learn.per))
        return 0;
    uint64_t quiet = 2 * rp__period_step(st->learn.per);
    if (quiet < rp__eng_cfg.max_held)
        quiet = rp__eng_cfg.max_held;
    return st->opno - st->learn.boundary_opno >= quiet &&
           rp__period_cut_due(st->learn.per, st->opno, rp__eng_cfg.max_held);
}

CUresult rp__learn_next(rp_stream *st, rp_op *op)
{
    int cut = rp__learn_cuts_next(st);
    op->opno = st->opno++;
    if (!cut)
        return CUDA_SUCCESS;
    rp__period_cut_taken(st->learn.per);
    /* What is deferred began before the cut: it cannot be this step's
     * graph. It is resolved (replayed if complete, else flushed) first. */
    CUresult rc = st->match.ndef ? rp__resolve_stream(st) : CUDA_SUCCESS;
    if (st->learn.nseg) {
        st->cs->counters.period_cuts++;
        seg_end_at_cuts(st);
    }
    st->learn.cut_by_period = 1; /* the next segment begins at a step or chunk */
    return rc;
}

void rp__learn_stream_free(rp_stream *st)
{
    if (st->learn.per) {
        rp__period_fini(st->learn.per);
        free(st->learn.per);
        st->learn.per = NULL;
    }
}

/* How long a stream may learn without a replay before it rests: the
 * option, or longer where its own steps need it (a capture takes warmup
 * occurrences, more while it backs off, and the replay comes one or two
 * occurrences later). */
static uint64_t patience_of(const rp_stream *st)
{
    uint64_t steps = ((uint64_t)rp__eng_cfg.warmup << st->learn.churn) + 3;
    uint64_t own = steps * st->learn.longest_seg;
    return own > rp__eng_cfg.patience ? own : rp__eng_cfg.patience;
}

/* Learning that never pays stops costing (DESIGN.md §5): a stream with no
 * replay in patience_of() ops rests for as long (twice as long the next
 * time it rests without a replay in between, up to 8 times): its eager ops
 * are issued without being recorded, keyed or fed to the period detector.
 * Then it learns again from scratch. Returns 1 if it rests from now on. */
static int maybe_rest(rp_stream *st)
{
    if (!rp__eng_cfg.patience || st->opno - st->learn.paid_opno < patience_of(st))
        return 0;
    uint64_t span = patience_of(st) << st->learn.rest_level;
    if (st->learn.rest_level < 3)
        st->learn.rest_level++;
    st->learn.rest_until = st->opno + span;
    st->learn.paid_opno = st->learn.rest_until;
    st->cs->counters.rests++;
    static _Atomic unsigned int logged;
    if (atomic_fetch_add(&logged, 1) < 4)
        rp__info("stream %p: no replay in its last %llu ops; it stops learning for %llu ops "
                 "(REPRISE_PATIENCE)", (void *)st->handle,
                 (unsigned long long)patience_of(st), (unsigned long long)span);
    rp__seg_end(st); /* what it learnt so far still counts */
    rp__learn_stream_free(st); /* its period history goes stale */
    return 1;
}

int rp__ops_rooted(const rp_op *ops, size_t n, size_t start, CUstream home)
{
    CUevent recs[RP_FJ_EVENTS];
    CUstream seen[RP_FJ_STREAMS];
    size_t nrec = 0, nseen = 0;
    for (size_t k = 0; k < n; k++) {
        const rp_op *op = &ops[(start + k) % n];
        if (op->stream != home) {
            size_t m = 0;
            while (m < nseen && seen[m] != op->stream)
                m++;
            if (m == nseen) {
                size_t r = 0;
                while (op->kind == RP_OP_EVWAIT && r < nrec && recs[r] != op->ev)
                    r++;
                if (nseen == RP_FJ_STREAMS || op->kind != RP_OP_EVWAIT || r == nrec)
                    return 0;
                seen[nseen++] = op->stream;
            }
        }
        if (op->kind == RP_OP_EVREC) {
            size_t r = 0;
            while (r < nrec && recs[r] != op->ev)
                r++;
            if (r == nrec) { /* the events, each once */
                if ((!nrec && op->stream != home) || nrec == RP_FJ_EVENTS)
                    return 0;
                recs[nrec++] = op->ev;
            }
        }
    }
    return nseen > 0;
}

/* A fork/join run's period was just accepted: its steps start where a step
 * is rooted, if some start makes it so (a step cut inside a side stream's
 * part would depend on the step before, and its graph could be launched
 * only when that side stream is idle: replay.c, fj_ready). Needs the last
 * period's ops recorded in a row; tried again with each op until then. */
static void align_fork_join(rp_stream *st)
{
    uint64_t d = st->learn.per->d;
    if (!d || d > st->learn.nseg)
        return;
    const rp_op *ops = &st->learn.seg[st->learn.nseg - d];
    if (ops[d - 1].opno - ops[0].opno != d - 1)
        return;
    st->learn.per_align = 0;
    for (size_t j = 0; j < d; j++) {
        if (ops[j].stream == st->handle && rp__ops_rooted(ops, d, j, st->handle)) {
            rp__period_align(st->learn.per, ops[j].opno);
            return;
        }
    }
}

void rp__seg_append(rp_stream *st, rp_op *op, enum rp__eager_reason pending)
{
    if (pending != RP_EAGER_DIVERGED && (rp__learn_resting(st) || maybe_rest(st))) {
        rp__count_eager(st->cs, RP_EAGER_RESTING, 1);
        rp__op_free(op);
        return;
    }
    /* Keys only for what the detectors will see: a deferred op that is
     * replayed never needs them. */
    rp__op_keys(op);
    watch_period(st, op);
    if (pending == RP_EAGER_DIVERGED)
        st->learn.diverged++;
    if (st->learn.overflow || (rp__eng_cfg.max_ops && st->learn.nseg >= rp__eng_cfg.max_ops)) {
        st->learn.overflow = 1;
        rp__count_eager(st->cs, pending == RP_EAGER_DIVERGED ? pending : overflow_reason(st), 1);
        if (pending == RP_EAGER_DIVERGED)
            st->learn.diverged--;
        rp__op_free(op);
        return;
    }
    if (st->learn.nseg == st->learn.capseg) {
        size_t cap = st->learn.capseg ? 2 * st->learn.capseg : 32;
        rp_op *n = rp__realloc(st->learn.seg, cap * sizeof *n);
        if (!n) {
            st->learn.overflow = 1;
            rp__count_eager(st->cs, RP_EAGER_BOUND, 1);
            rp__op_free(op);
            return;
        }
        st->learn.seg = n;
        st->learn.capseg = cap;
    }
    st->learn.seg[st->learn.nseg++] = *op;
    memset(op, 0, sizeof *op);
    if (st->learn.per_align && st->learn.per && st->learn.per->d)
        align_fork_join(st);
}


/* ---- segments, detection, capture ---------------------------------------- */

static int seq_in_use(const rp_ctxstate *cs, const rp_seq *s)
{
    for (size_t k = 0; k < cs->nstreams; k++) {
        const rp_stream *st = &cs->streams[k];
        if (!st->used || !st->match.ndef)
            continue;
        if (st->match.complete == s)
            return 1;
        for (size_t c = 0; c < st->match.ncand; c++)
            if (st->match.cand[c] == s)
                return 1;
    }
    return 0;
}

/* Which sequences are the only ones of their home stream to begin with
 * their first op's kernel: for those the matcher's fast path may begin a
 * match itself (match.h), rp__match_offer finding no other candidate.
 * Reckoned again whenever a sequence comes or goes; a sequence marked
 * broken since only leaves fewer candidates. */
static void first_unique_update(rp_ctxstate *cs)
{
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        const rp_op *a = &s->det->ops[0];
        int unique = s->match.fast && s->match.fast[0].f && !s->fj.multi;
        for (size_t j = 0; unique && j < cs->nseqs; j++) {
            const rp_seq *t = cs->seqs[j];
            const rp_op *b = &t->det->ops[0];
            if (t != s && t->home == s->home && b->kind == RP_OP_KERNEL && b->func == a->func)
                unique = 0;
        }
        s->first_unique = unique;
    }
}

/* No stream's hint names `s` any more (every stream's, for NULL). */
static void hints_forget(rp_ctxstate *cs, const rp_seq *s)
{
    for (size_t k = 0; k < cs->nstreams; k++)
        if (!s || cs->streams[k].match.hint == s)
            cs->streams[k].match.hint = NULL;
}

/* Drop sequence number `i` of the context (its report line is kept). With
 * `wasted`, it was replaced or evicted before it paid off: its stream backs
 * off (the warmup of its next captures doubles). */
static void drop_seq(rp_ctxstate *cs, size_t i, int wasted)
{
    rp_seq *s = cs->seqs[i];
    cs->seqs[i] = cs->seqs[--cs->nseqs];
    hints_forget(cs, s);
    first_unique_update(cs);
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

/* Make room for one more graph in the context (its sequences' executables
 * counted, the ones beside their own too: rp_seq.alt): drop the least
 * recently used sequences that no stream is matching against. Returns 0, or
 * -1 when every sequence is in use (the capture is skipped: a bound hit). */
static int make_room(rp_ctxstate *cs)
{
    while (cs->nseqs + cs->nalts >= rp__eng_cfg.max_graphs) {
        size_t victim = SIZE_MAX;
        for (size_t i = 0; i < cs->nseqs; i++) {
            if (!seq_in_use(cs, cs->seqs[i]) &&
                (victim == SIZE_MAX || cs->seqs[i]->last_use < cs->seqs[victim]->last_use))
                victim = i;
        }
        if (victim == SIZE_MAX)
            return -1;
        cs->counters.evictions++;
        drop_seq(cs, victim, 1);
    }
    return 0;
}

/* A stream whose captures keep being replaced before they pay off backs
 * off: its segments need warmup x 2^churn occurrences before a capture. */
static int backing_off(const rp_stream *st, const rp_det_entry *e)
{
    return st->learn.churn && e->seen < ((uint64_t)rp__eng_cfg.warmup << st->learn.churn);
}

/* An executable the new capture of `e` may take over: a sequence of the
 * same stream with the same number and kinds of ops but another structure
 * (the shape changed in a way no node update can follow), not being matched, and
 * not replayed for longer than a new shape takes to be learnt (so it is not
 * a variant still in use): as exact variants, warmup + max_variants
 * occurrences at most; with updates (`vmask`), warmup + 1 (its contents
 * kept changing). NULL if none. */
static rp_seq *reusable(rp_ctxstate *cs, const rp_det_entry *e, const uint64_t *vmask,
                       CUstream home)
{
    uint64_t stale = vmask ? (uint64_t)rp__eng_cfg.warmup + 1
                           : (uint64_t)rp__eng_cfg.warmup + rp__eng_cfg.max_variants;
    stale = stale > 1 ? stale - 1 : 1;
    /* A fork/join graph is never updated to another: the update pairs
     * nodes in an order only a single chain makes op order. */
    for (size_t k = 0; k < e->n; k++)
        if (e->ops[k].stream != home || rp__op_is_event(e->ops[k].kind))
            return NULL;
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        const rp_det_entry *o = s->det;
        if (o == e || o->n != e->n || s->home != home || s->fj.multi || !s->exec ||
            s->broken || cs->det.clock - s->last_use < stale || seq_in_use(cs, s))
            continue;
        /* Kernels with launch attributes must carry the same ones: an
         * executable update is not known to change a node's attributes
         * (docs/engine.md, "What is captured"). */
        size_t k = 0, same = 0;
        for (; k < e->n && o->ops[k].kind == e->ops[k].kind && rp__op_same_attrs(&o->ops[k], &e->ops[k]);
             k++)
            same += rp__op_same_structure(&o->ops[k], &e->ops[k]);
        /* Of the same structure it is another content of the same shape
         * (a variant, or the sequence with updates that serves them), not
         * a shape that changed for good. */
        if (k == e->n && same < e->n)
            return s;
    }
    return NULL;
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
    if (!staging || have + staging <= rp__eng_cfg.max_staging)
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
    return have + fresh > rp__eng_cfg.max_staging;
}

/* Capture detector entry `e` of table `d` (with volatile fields `vmask`, or
 * NULL for an exact-content sequence). Returns 0, or -1 when a bound
 * stopped it (the failure is counted either way). */
static int capture_segment(rp_ctxstate *cs, rp_detector *d, rp_det_entry *e, const uint64_t *vmask,
                           int by_period, CUstream home)
{
    rp_seq *reuse = reusable(cs, e, vmask, home);
    if (!reuse && make_room(cs) != 0) {
        rp__bound_hit(cs, RP_BOUND_GRAPHS);
        rp__det_capture_failed(d, e);
        return -1;
    }
    if (staging_over(cs, e)) {
        rp__bound_hit(cs, RP_BOUND_STAGING);
        rp__det_capture_failed(d, e);
        return -1;
    }
    pthread_rwlock_wrlock(&cs->gate);
    rp__nvtx_push("reprise: capture sequence %u (%zu ops)", e->id, e->n);
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
    s->by_period = by_period;
    s->last_use = cs->det.clock;
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
        rp__info("captured sequence %u: %zu ops, first kernel %s%s", id, e->n,
                 rp__rec_kernel_name(cs, &e->ops[0]), vmask ? ", with volatile arguments" : "");
    rp__arm_exit_hook();
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
        mask[i] = rp__op_diff(&e->ops[i], &ops[i], rp__rec_layout(cs, &e->ops[i]), &ok);
        if (!ok)
            return 0;
        any |= mask[i] != 0;
    }
    return any;
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
static int learn_volatile(rp_stream *st)
{
    rp_ctxstate *cs = st->cs;
    rp_det_entry *e = NULL;
    rp_det_verdict v = rp__det_observe(&cs->sdet, st->learn.seg, st->learn.nseg, &e);
    if (e && !e->stamp) /* a new entry: it keeps this occurrence */
        e->stamp = atomic_load_explicit(&rp__frees, memory_order_relaxed) + 1;
    if (!e || !e->differs || e->n != st->learn.nseg)
        return 0;
    uint64_t *mask = rp__calloc(e->n, sizeof *mask);
    if (!mask) {
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        return 0;
    }
    int ok = volatile_fields(cs, e, st->learn.seg, mask);
    size_t nvol = 0;
    for (size_t k = 0; ok && k < e->n; k++) {
        e->differs[k] |= mask[k];
        nvol += e->differs[k] != 0;
    }
    int served = 0;
    if (v == RP_DET_CAPTURE && (!ok || !rp__cost_updates_pay(cs, e->n, nvol))) {
        /* Not captured; retried after a back-off. With too many volatile
         * nodes, every replay would update more than allowed (or more than
         * pays, cost.c): a graph would never run. */
        if (ok)
            rp__bound_hit(cs, RP_BOUND_UPDATES);
        rp__det_capture_failed(&cs->sdet, e);
    } else if (ok && v == RP_DET_CAPTURE) {
        /* When the program has freed memory since the first occurrence,
         * its addresses may name freed memory: captured from this one
         * (every field that differed stays volatile). */
        if (e->stamp != atomic_load_explicit(&rp__frees, memory_order_relaxed) + 1)
            rp__det_refresh(e, st->learn.seg, st->learn.nseg);
        capture_segment(cs, &cs->sdet, e, e->differs, st->learn.cut_by_period, st->handle);
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
            if (!rp__cost_updates_pay(cs, e->n, now_volatile))
                s->broken = 1; /* could never replay any more: dropped, backs off */
            /* It serves this content from now on: no exact variant beside. */
            served |= !s->broken;
        }
    }
    free(mask);
    return served;
}

/* Sequences whose launch or update failed are dropped once no stream is
 * matching against them; their segment backs off before it is tried again. */
void rp__sweep_broken(rp_ctxstate *cs)
{
    for (size_t i = 0; i < cs->nseqs;) {
        rp_seq *s = cs->seqs[i];
        if (!s->broken || seq_in_use(cs, s)) {
            i++;
            continue;
        }
        rp_det_entry *e = s->det;
        static _Atomic unsigned int drops_logged;
        if (atomic_fetch_add(&drops_logged, 1) < 8)
            rp__info("sequence %u given up after %llu replays (a launch or update failed, or "
                     "replays kept needing too many updates); it backs off before a new capture",
                     s->id, (unsigned long long)s->replays);
        drop_seq(cs, i, 0);
        rp__det_capture_failed(&cs->det, e);
    }
}

void rp__seg_end(rp_stream *st)
{
    rp_ctxstate *cs = st->cs;
    if (st->learn.nseg == 0) {
        rp__seg_clear(st);
        st->learn.cut_by_period = 0;
        return;
    }
    cs->counters.segments++;
    if (st->learn.nseg > st->learn.longest_seg)
        st->learn.longest_seg = st->learn.nseg;
    uint64_t diverged = st->learn.diverged, rest = st->learn.nseg - st->learn.diverged;
    rp__count_eager(cs, RP_EAGER_DIVERGED, diverged);
    uint64_t param_bytes = 0;
    for (size_t i = 0; i < st->learn.nseg; i++)
        param_bytes += st->learn.seg[i].param_bytes;
    if (st->learn.overflow || param_bytes > rp__eng_cfg.max_seq_bytes) {
        rp__bound_hit(cs, st->learn.overflow ? RP_BOUND_OPS : RP_BOUND_SEQ_BYTES);
        rp__count_eager(cs, st->learn.overflow ? overflow_reason(st) : RP_EAGER_BOUND, rest);
        rp__seg_clear(st);
        st->learn.cut_by_period = 0;
        return;
    }
    /* The records' keys were computed when they were recorded. */
    rp_det_entry *e = NULL;
    enum rp__eager_reason why = RP_EAGER_WARMING_UP;
    rp_det_verdict verdict = rp__det_observe(&cs->det, st->learn.seg, st->learn.nseg, &e);
    switch (verdict) {
    case RP_DET_TOO_SHORT:
        why = RP_EAGER_SHORT;
        break;
    case RP_DET_TOO_LONG:
        rp__bound_hit(cs, RP_BOUND_OPS);
        why = RP_EAGER_BOUND;
        break;
    case RP_DET_NO_MEMORY:
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        why = RP_EAGER_BOUND;
        break;
    case RP_DET_WARMING:
        break;
    case RP_DET_BACKING_OFF:
        why = RP_EAGER_CAPTURE_FAILED;
        break;
    case RP_DET_HAS_GRAPH:
        why = RP_EAGER_DIVERGED;
        break;
    case RP_DET_CAPTURE:
        /* Its structure is counted first: when the structure's contents
         * keep changing (more than REPRISE_MAX_VARIANTS of them, or a new
         * one every time), one graph with updates serves them all, rather
         * than one more exact variant; so does one that exists already
         * (widened if need be).
         * With a warmup of 1 this is the only place contents are compared:
         * every segment is an exact capture candidate at once. */
        if (backing_off(st, e))
            why = RP_EAGER_CAPTURE_FAILED;
        else if (!learn_volatile(st) &&
                 capture_segment(cs, &cs->det, e, NULL, st->learn.cut_by_period, st->handle) != 0)
            why = RP_EAGER_BOUND;
        break;
    }
    if (verdict == RP_DET_WARMING)
        learn_volatile(st);
    rp__count_eager(cs, why, rest);
    rp__seg_clear(st);
    st->learn.cut_by_period = 0;
    rp__sweep_broken(cs);
}

void rp__learn_resolved(rp_stream *st, const struct rp_resolved *r)
{
    if (r->replayed) {
        /* A step or chunk found by the period ends where the next begins.
         * (Read first: ending the segment may capture, and a capture may
         * take the replayed sequence's executable over and drop it.) */
        int by_period = r->replayed->by_period;
        rp__seg_end(st); /* the ops before the graph launch end a segment */
        st->learn.cut_by_period = by_period;
    }
    for (size_t i = 0; i < r->nflushed; i++)
        rp__seg_append(st, &st->match.def[i], RP_EAGER_DIVERGED);
    st->match.ndef = 0;
}

int rp__seqs_add(rp_ctxstate *cs, rp_seq *s)
{
    if (cs->nseqs == cs->capseqs) {
        size_t cap = cs->capseqs ? 2 * cs->capseqs : 16;
        rp_seq **n = rp__realloc(cs->seqs, cap * sizeof *n);
        if (!n) {
            rp__seq_destroy(s);
            rp__bound_hit(cs, RP_BOUND_MEMORY);
            return -1;
        }
        cs->seqs = n;
        cs->capseqs = cap;
    }
    cs->seqs[cs->nseqs++] = s;
    first_unique_update(cs);
    return 0;
}

void rp__seqs_drop_all(rp_ctxstate *cs)
{
    hints_forget(cs, NULL);
    /* Report lines first: each counts its variants among all the others. */
    for (size_t i = 0; i < cs->nseqs; i++)
        rp__seq_retire(cs->seqs[i]);
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp__det_forget_graph(&cs->det, cs->seqs[i]->det);
        rp__seq_destroy(cs->seqs[i]);
        cs->counters.graphs_dropped++;
    }
    cs->nseqs = 0;
}
