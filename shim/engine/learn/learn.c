/* learn.c - learning what repeats (DESIGN.md §5, §8): each stream's
 * segment of eagerly executed ops since its last boundary, fed op by op to
 * the stream's period detector once it runs long, and counted by the
 * detectors when it ends (the policy, policy.c, decides what is captured);
 * the cuts a period makes in a stream without boundaries; and rest, for a
 * stream whose learning never pays. Runs under the context's lock. */
#include "learn.h"


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
        unsigned int repeats = rp__eng.cfg.warmup > 1 ? rp__eng.cfg.warmup - 1 : 1;
        st->learn.per = rp__malloc(sizeof *st->learn.per);
        /* A step may be a multiple of the shapes' period, up to half a
         * chunk: decided from 2 x that many ops, by the first cut. */
        if (st->learn.per && rp__period_init(st->learn.per, repeats, rp__eng.cfg.min_ops,
                                             rp__eng.cfg.max_held / 2) != 0) {
            free(st->learn.per);
            st->learn.per = NULL;
        }
        if (!st->learn.per)
            rp__bound_hit(st->cs, RP_BOUND_MEMORY);
    }
    if (st->learn.per) {
        uint64_t landmarks = st->learn.per->lfound;
        st->learn.nocut_until = 0; /* the period may change */
        rp__period_feed(st->learn.per, op->opno, op->skey, op->ckey);
        if (st->learn.per->lfound != landmarks) {
            st->cs->counters.landmarks_found++;
            static _Atomic unsigned int lm_logged;
            if (atomic_fetch_add(&lm_logged, 1) < 8)
                rp__info("stream %p has no single period, but a run of ops that comes back "
                         "every %llu to %llu ops with no boundary: its steps are cut after it",
                         (void *)st->handle, (unsigned long long)st->learn.per->lgmin,
                         (unsigned long long)st->learn.per->lgap);
        }
        /* A step decided (by the feed, or by a cut that could not wait:
         * rp__period_cut_due): counted once. */
        int changed = st->learn.per->settled != st->learn.per_steps;
        st->learn.per_steps = st->learn.per->settled;
        if (changed && st->learn.per->step) {
            st->cs->counters.periods_found++;
            st->learn.per_align = st->trace.nmembers > 0;
            if (!st->learn.per_align && st->learn.boundary_opno && !st->learn.per->lfound) {
                /* A period of a stream that had a host boundary before:
                 * a loop begins after its setup's synchronization, and a
                 * step that ends at a boundary starts after it, so its
                 * steps start there, d apart, rather than where winnowing
                 * put them (the first time, and every time a period is
                 * found again: a period lost and found at each step of a
                 * synchronized loop would otherwise be cut at another
                 * place each time). Not where a landmark already cut the
                 * stream: its steps were learnt where it cut. A boundary
                 * at another place in the step realigns them at once
                 * (rp__learn_boundary). */
                rp__period_align(st->learn.per, st->learn.boundary_opno);
                st->learn.baligned = st->learn.per->settled + 1;
            }
            static _Atomic unsigned int logged;
            if (atomic_fetch_add(&logged, 1) < 8)
                rp__info("stream %p repeats every %llu ops with no boundary (its op shapes every "
                         "%llu): its steps are captured from there, in chunks of at most %zu ops",
                         (void *)st->handle, (unsigned long long)st->learn.per->step,
                         (unsigned long long)st->learn.per->d, rp__eng.cfg.max_held);
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
        if (i < n && !rp__period_cut_before(st->learn.per, all[i].opno, rp__eng.cfg.max_held))
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

/* 1 when `a` and `b` are within half of each other (the larger at most
 * 1.5 times the smaller, as a landmark's band). */
static int near(uint64_t a, uint64_t b)
{
    return a && b && 2 * (a > b ? a : b) <= 3 * (a > b ? b : a);
}

/* Whether the stream's host boundaries delimit its steps, so that nothing
 * but the next boundary should end the segment since the last one: the
 * latest gaps between them recur (each near the one before it, or the one
 * before that: a step that synchronizes twice, as Hugging Face generate()
 * does with its stop check), the segment is not yet longer than the
 * longest of them (an eighth more), and the step its period found fits
 * none of them a whole number of times, give or take the few ops of a
 * read-back (it is an inner repetition, a layer of the step; a loop that
 * synchronizes every few steps has gaps that are whole steps, which its
 * period cuts, aligned at each boundary). A step that ends at a host
 * boundary is cut there, and only there: period cuts inside it fell at
 * places that moved with the period the stream showed at the time. */
static int boundaries_are_steps(const rp_stream *st, uint64_t *until)
{
    const uint64_t *g = st->learn.bgap;
    if (st->learn.nbgap < 3 || !(near(g[0], g[1]) || near(g[0], g[2])))
        return 0;
    uint64_t longest = 0;
    for (unsigned int i = 0; i < st->learn.nbgap; i++)
        longest = g[i] > longest ? g[i] : longest;
    if (st->opno - st->learn.boundary_opno > longest + longest / 8)
        return 0;
    /* The same answer up to this op, all else equal. */
    *until = st->learn.boundary_opno + longest + longest / 8 + 1;
    const rp_period *p = st->learn.per;
    uint64_t step = p->d ? rp__period_step(p) : 0;
    if (!step)
        return 1; /* a landmark's steps vary in length: the boundaries do not */
    uint64_t slack = step / 4 < 4 ? step / 4 : 4;
    for (int i = 0; i < 2; i++)
        if (g[i] >= 2 * step && g[i] % step <= slack)
            return 0;
    return 1;
}

int rp__learn_cuts_next_slow(rp_stream *st)
{
    /* Host boundaries, where the program has them at least every
     * REPRISE_MAX_HELD ops (and every other period), delimit the steps as
     * they are: the period cuts only a stream that has gone longer than
     * that without one, or whose boundaries do not delimit its steps
     * (boundaries_are_steps). Where the answer is no for the ops up to some
     * op whatever they are, that op is kept (nocut_until), for the inline
     * rp__learn_cuts_next to answer them. */
    uint64_t until = 0;
    if (!st->learn.per || !rp__period_cuts(st->learn.per))
        return 0;
    if (boundaries_are_steps(st, &until)) {
        st->learn.nocut_until = until;
        return 0;
    }
    uint64_t quiet = 2 * rp__period_step(st->learn.per);
    if (quiet < rp__eng.cfg.max_held)
        quiet = rp__eng.cfg.max_held;
    if (st->opno - st->learn.boundary_opno < quiet) {
        st->learn.nocut_until = st->learn.boundary_opno + quiet;
        return 0;
    }
    return rp__period_cut_due(st->learn.per, st->opno, rp__eng.cfg.max_held);
}

int rp__learn_next(rp_stream *st, rp_op *op)
{
    int cut = rp__learn_cuts_next(st);
    op->opno = st->opno++;
    if (cut) {
        rp__period_cut_taken(st->learn.per);
        st->learn.nocut_until = 0;
    }
    return cut;
}

void rp__learn_realign(rp_stream *st, uint64_t pos)
{
    if (st->learn.per && st->learn.per->step)
        rp__period_align(st->learn.per, pos);
}

void rp__learn_cut(rp_stream *st)
{
    if (st->learn.nseg) {
        st->cs->counters.period_cuts++;
        seg_end_at_cuts(st);
    }
    st->learn.cut_by_period = 1; /* the next segment begins at a step or chunk */
}

void rp__learn_cut_empty(rp_stream *st)
{
    if (NEVER(st->learn.nseg))
        return;
    rp__period_cut_taken(st->learn.per);
    st->learn.nocut_until = 0;
    st->learn.cut_by_period = 1; /* as rp__learn_cut */
}

void rp__learn_boundary(rp_stream *st)
{
    st->learn.nocut_until = 0; /* the caller moves boundary_opno too */
    uint64_t gap = st->opno - st->learn.boundary_opno;
    if (gap) {
        memmove(st->learn.bgap + 1, st->learn.bgap, 3 * sizeof st->learn.bgap[0]);
        st->learn.bgap[0] = gap;
        if (st->learn.nbgap < 4)
            st->learn.nbgap++;
    }
    rp_period *p = st->learn.per;
    if (!p || !p->step)
        return;
    uint64_t d = p->step, at = (st->opno % d + d - p->base % d) % d;
    if (!at)
        return;
    /* A host boundary inside a step: the steps start after it from now on,
     * at once and every time (a loop that synchronizes every few steps,
     * after the same op; a read-back that came at another place). Where
     * the program synchronizes is the program's, the same in every run: a
     * step cut by it at another place would be learnt again as two pieces,
     * and each boundary that moved the steps' start would have done so for
     * good. */
    st->learn.baligned = p->settled + 1;
    rp__period_align(p, st->opno);
    static _Atomic unsigned int logged;
    if (atomic_fetch_add(&logged, 1) < 4)
        rp__info("stream %p: a host boundary fell %llu ops into its %llu-op step; its "
                 "steps start after it from now on", (void *)st->handle,
                 (unsigned long long)at, (unsigned long long)d);
}

/* Drop the stream's period detector (its history). */
static void period_free(rp_stream *st)
{
    st->learn.nocut_until = 0;
    if (st->learn.per) {
        rp__period_fini(st->learn.per);
        free(st->learn.per);
        st->learn.per = NULL;
        st->learn.per_steps = 0;
    }
}

void rp__learn_stream_free(rp_stream *st)
{
    rp__seg_clear(st);
    free(st->learn.seg);
    period_free(st);
    memset(&st->learn, 0, sizeof st->learn);
}

/* How long a stream may learn without a replay before it rests: the
 * option, or longer where its own steps need it (a capture takes warmup
 * occurrences, more while it backs off, and the replay comes one or two
 * occurrences later). */
static uint64_t patience_of(const rp_stream *st)
{
    uint64_t steps = ((uint64_t)rp__eng.cfg.warmup << st->learn.churn) + 3;
    uint64_t own = steps * st->learn.longest_seg;
    return own > rp__eng.cfg.patience ? own : rp__eng.cfg.patience;
}

/* Learning that never pays stops costing (DESIGN.md §5): a stream with no
 * replay in patience_of() ops rests for as long (twice as long the next
 * time it rests without a replay in between, up to 8 times): its eager ops
 * are issued without being recorded, keyed or fed to the period detector.
 * Then it learns again from scratch. Returns 1 if it rests from now on. */
static int maybe_rest(rp_stream *st)
{
    if (!rp__eng.cfg.patience || st->opno - st->learn.paid_opno < patience_of(st))
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
    period_free(st); /* its period history goes stale */
    return 1;
}

/* A fork/join run's period was just accepted: its steps start where a step
 * is rooted, if some start makes it so (a step cut inside a side stream's
 * part would depend on the step before, and its graph could be launched
 * only when that side stream is idle: replay.c, fj_ready). Each start is
 * tried on the ops that follow it in the stream, a whole period of them
 * (events are told apart by serial: a framework's fresh event each step is
 * recorded in one period and waited on in the next, so the two periods'
 * ops are needed, not one turned round). Needs the last two periods' ops
 * recorded in a row; tried again with each op until then. */
static void align_fork_join(rp_stream *st)
{
    uint64_t d = st->learn.per->step;
    if (!d || 2 * d > st->learn.nseg)
        return;
    const rp_op *ops = &st->learn.seg[st->learn.nseg - 2 * d];
    if (ops[2 * d - 1].opno - ops[0].opno != 2 * d - 1)
        return;
    st->learn.per_align = 0;
    st->learn.nocut_until = 0;
    /* Of the rooted starts, the one whose step waits on the fewest events
     * recorded outside it (a replay needs those complete, or known to be);
     * of those, the one a whole number of steps after the stream's last
     * host boundary, if it is one: a loop begins after its setup's
     * synchronization, and a step that ends at a read-back starts after
     * it (as watch_period aligns a stream's own period). Otherwise the
     * first in the window, whose place depends only on the op at which the
     * period was accepted: a step PyTorch's `wait_stream` forks at its top
     * (record on the main stream, the side stream waits) and joins in its
     * middle is rooted at its top and at its join alike, and a step cut at
     * the join meets the loop's read-back two ops in, every time. */
    size_t best = SIZE_MAX, best_ext = SIZE_MAX;
    int best_at_boundary = 0;
    uint64_t b = st->learn.boundary_opno;
    for (size_t j = 0; j < d; j++) {
        if (ops[j].stream != st->handle || !rp__ops_rooted(ops + j, d, 0, st->handle))
            continue;
        size_t ext = 0;
        for (size_t k = j; k < j + d; k++) {
            if (ops[k].kind != RP_OP_EVWAIT)
                continue;
            size_t r = j;
            while (r < k && !(ops[r].kind == RP_OP_EVREC && ops[r].eser == ops[k].eser))
                r++;
            ext += r == k;
        }
        int at_boundary = b && ops[j].opno >= b && (ops[j].opno - b) % d == 0;
        if (ext < best_ext || (ext == best_ext && at_boundary && !best_at_boundary))
            best = j, best_ext = ext, best_at_boundary = at_boundary;
    }
    if (best != SIZE_MAX)
        rp__period_align(st->learn.per, ops[best].opno);
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
    if (st->learn.overflow || (rp__eng.cfg.max_ops && st->learn.nseg >= rp__eng.cfg.max_ops)) {
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
    if (st->learn.per_align && st->learn.per && st->learn.per->step)
        align_fork_join(st);
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
    if (st->learn.overflow || param_bytes > rp__eng.cfg.max_seq_bytes) {
        rp__bound_hit(cs, st->learn.overflow ? RP_BOUND_OPS : RP_BOUND_SEQ_BYTES);
        rp__count_eager(cs, st->learn.overflow ? overflow_reason(st) : RP_EAGER_BOUND, rest);
        rp__seg_clear(st);
        st->learn.cut_by_period = 0;
        return;
    }
    /* The records' keys were computed when they were recorded; their
     * events' roles are numbered in the segment now (a piece of one that
     * a period cut numbers its own). */
    rp__op_roles(st->learn.seg, st->learn.nseg);
    rp_det_entry *e = NULL;
    enum rp__eager_reason why = RP_EAGER_WARMING_UP;
    st->learn.shape_new = 0; /* rp__learn_volatile says */
    rp_det_verdict verdict = rp__det_observe(&cs->det, st->learn.seg, st->learn.nseg, &e);
    int served = 0;
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
    default:
        /* Its structure is counted first, whatever its content's verdict:
         * when the structure's contents keep changing (more than
         * REPRISE_MAX_VARIANTS of them, or a new one every time), one
         * graph with updates serves them all, rather than one more exact
         * variant; so does one that exists already, widened if this
         * occurrence differs in a field it does not update yet. The
         * widening must not wait for the content's own verdict: with a
         * warmup of 1, or while the stream backs off, a content's entry
         * is never WARMING, and a sequence with updates that is never
         * widened diverges on the same field for ever. With a warmup of 1
         * this is also the only place contents are compared: every
         * segment is an exact capture candidate at once. */
        served = rp__learn_volatile(st, verdict == RP_DET_HAS_GRAPH);
        break;
    }
    switch (verdict) {
    case RP_DET_BACKING_OFF:
        why = e->capture_failed ? RP_EAGER_CAPTURE_FAILED : RP_EAGER_BACKING_OFF;
        break;
    case RP_DET_HAS_GRAPH:
        why = RP_EAGER_DIVERGED;
        break;
    case RP_DET_CAPTURE:
        if (served)
            break; /* no exact variant beside a sequence with updates */
        if (rp__learn_backing_off(st, e))
            why = RP_EAGER_BACKING_OFF; /* no capture failed: its graphs did not pay */
        else if (rp__learn_capture(cs, &cs->det, e, NULL, st->learn.cut_by_period, st->handle) != 0)
            why = RP_EAGER_BOUND;
        break;
    default:
        break;
    }
    rp__count_eager(cs, why, rest);
    if (why == RP_EAGER_WARMING_UP && st->learn.shape_new)
        cs->counters.new_shape_ops += rest; /* the report tells these apart */
    rp__trace("segment of %zu ops from op %llu on stream %p ends (%s): %llu ops %s, %llu diverged",
              st->learn.nseg, (unsigned long long)st->learn.seg[0].opno, (void *)st->handle,
              st->learn.cut_by_period ? "period cut" : "boundary", (unsigned long long)rest,
              rp__reasons[why].key, (unsigned long long)diverged);
    rp__seg_clear(st);
    st->learn.cut_by_period = 0;
    rp__learn_sweep(cs);
}

/* Sequence `s` was just replayed on `st`: the stream's learning paid off,
 * and after four replays the sequence has proved itself (its back-off and
 * its entry's failures are forgotten). */
static void replayed_paid(rp_stream *st, rp_seq *s)
{
    rp__learn_paid(st);
    s->passed_over = 0; /* its content came back: a variant still */
    if (s->replays == 4) {
        st->learn.churn = 0; /* it paid off: the stream has stabilised */
        rp__det_paid_off(s->det); /* its entry: in the by-content or by-structure table */
    }
    s->last_use = st->cs->det.clock;
}

void rp__learn_resolved(rp_stream *st, rp_seq *replayed, int parted, rp_op *flushed, size_t n)
{
    if (replayed)
        replayed_paid(st, replayed);
    if (replayed || parted) {
        /* A step or chunk found by the period ends where the next begins.
         * (Read first: ending the segment may capture, and a capture may
         * take the replayed sequence's executable over and drop it.) An
         * occurrence of which only parts were launched ends the segment
         * before it as one replayed in full does. */
        int by_period = replayed && replayed->by_period;
        /* A stream that replays every step ends no segment of ops: the
         * exact variants a sequence with updates passes over are swept
         * every 16 of its replays too. */
        int sweep = replayed && replayed->vmask && replayed->replays % 16 == 0;
        rp__seg_end(st); /* the ops before the graph launch end a segment */
        st->learn.cut_by_period = by_period;
        if (sweep)
            rp__learn_sweep(st->cs);
    }
    for (size_t i = 0; i < n; i++)
        rp__seg_append(st, &flushed[i], RP_EAGER_DIVERGED);
}
