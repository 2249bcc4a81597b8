/* match.c - the matcher: once sequences have graphs, a stream's ops that
 * match a sequence's ops from its first one on are deferred, op by op; a
 * complete match is replayed with one cuGraphLaunch; a divergence flushes
 * the deferred ops eagerly, in order (DESIGN.md §1, §2). Deferral delays; it
 * never reorders, drops or duplicates. The matcher only matches, launches
 * (seq/replay.c) and flushes: it says what it did, and its caller
 * (coord/streams.c) decides where the work goes and hands what ran to
 * learning. A sequence stays while a stream matches against it: the
 * matcher counts those streams in its pins. Runs under the lock of the
 * stream's context. */
#include "match.h"

#include <stdlib.h>
#include <string.h>

/* Issue one recorded op of `st` eagerly (a flush): as the program called
 * it (on its own stream: `st`'s, or that of a stream that joined its trace)
 * when `st`'s own stream is the target, else the async form on `target`
 * (another thread's per-thread stream, which no other stream joins). */
static CUresult issue_eager(const rp_stream *st, const rp_op *op, CUstream target)
{
    if (target == st->handle)
        return rp__rec_issue_as_called(st->cs, op);
    return rp__rec_issue(st->cs, op, target, op->data);
}

/* Room for `want` deferred records (see match.h). */
int rp__def_reserve(rp_stream *st, size_t want)
{
    if (want <= st->match.capdef)
        return 0;
    size_t cap = st->match.capdef ? 2 * st->match.capdef : 16;
    while (cap < want)
        cap *= 2;
    rp_op *n = rp__realloc(st->match.def, cap * sizeof *n);
    if (!n)
        return -1;
    st->match.def = n;
    st->match.capdef = cap;
    return 0;
}

static int def_room(rp_stream *st)
{
    return rp__def_reserve(st, st->match.ndef + 1);
}

/* Write down the ops the fast path deferred without a record: the
 * sequence's, borrowed, with, for a sequence with volatile fields, the
 * values of the launch, memset or copy (in the arena; a launch's
 * parameters stay there, borrowed: a flush copies them). */
static void write_down(rp_stream *st)
{
    rp__match_write_down(st);
}

void rp__match_write_down(rp_stream *st)
{
    rp_seq *s = st->match.borrowed_seq;
    if (!s)
        return;
    st->match.borrowed_seq = NULL;
    unsigned int j = 0; /* the records among them (in order) are written already */
    for (size_t i = st->match.borrowed_from; i < st->match.ndef; i++) {
        rp_op *d = &st->match.def[i];
        if (j < st->match.nown && st->match.own[j] == i) {
            j++;
            continue;
        }
        *d = s->det->ops[i];
        d->borrowed = 1;
        d->opno = st->match.borrowed_opno + (i - st->match.borrowed_from);
        if (s->vmask && d->kind != RP_OP_KERNEL) { /* rp__match_offer kept it there */
            rp__arena_get_other(rp__arena_of(st, s, i), d);
        } else if (s->vmask) { /* every launch of it was kept there (match.h) */
            const uint8_t *a = rp__arena_of(st, s, i);
            memcpy(d->grid, a, 7 * sizeof(unsigned int));
            d->params = d->param_bytes ? (uint8_t *)a + RP_ARENA_GEOMETRY : NULL;
            st->match.arena.held = 1; /* until the stream holds nothing */
        }
    }
    HOLDS(j == st->match.nown);
    rp__match_own_clear(st);
}

/* Free the records among the borrowed ops that a replay (or a part) issued
 * (below `done`); the rest stay, for the write-down that follows to keep
 * as they are (it clears the list), or, none left, the list is cleared. */
static __attribute__((noinline)) void own_free_done(rp_stream *st, size_t done)
{
    for (unsigned int j = 0; j < st->match.nown; j++)
        if (st->match.own[j] < done)
            rp__op_free(&st->match.def[st->match.own[j]]);
    if (done >= st->match.ndef)
        rp__match_own_clear(st);
}

/* Keep the record of a deferred op, with the bytes of a host-to-device copy
 * from pageable memory copied now: the driver reads them at the call, and
 * the program may reuse its buffer as soon as the call returns. A pinned
 * source is not copied: the driver reads it when the copy runs, after the
 * earlier work of the stream that may fill it (DESIGN.md §2.3). Returns 0,
 * or -1 if memory runs out (the op then runs eagerly). */
static int defer_push(rp_stream *st, rp_op *op)
{
    if (rp__op_staged(op) && op->bytes) {
        op->data = rp__malloc(op->bytes);
        if (!op->data)
            return -1;
        memcpy(op->data, op->host, op->bytes);
    }
    if (def_room(st) != 0) {
        free(op->data);
        op->data = NULL;
        return -1;
    }
    if (rp__op_is_event(op->kind))
        rp__ev_deferred_add(1);
    st->match.def[st->match.ndef++] = *op;
    memset(op, 0, sizeof *op);
    return 0;
}

/* The stream no longer matches against any of its candidates or its
 * complete match: they are unpinned, and what they took as volatile for
 * the occurrence is forgotten. */
static void unpin_all(rp_stream *st)
{
    for (size_t i = 0; i < st->match.ncand; i++)
        st->match.cand[i]->pins--;
    if (st->match.complete)
        st->match.complete->pins--;
    st->match.ncand = 0;
    st->match.complete = NULL;
    st->match.nwid = 0;
}

/* The destroys that waited for the ops of this resolution, now issued. */
static void destroy_deferred(rp_stream *st)
{
    for (unsigned int i = 0; i < st->match.ndtor; i++)
        rp__eng.drv->cuEventDestroy_v2(st->match.dtor[i]);
    st->match.ndtor = 0;
}

/* Sequence `s` stopped matching at its op `at`: `got` came there instead
 * (NULL: a boundary came first). Counted, and kept for the report (the
 * field that differed and its two values): work done only when a
 * divergence happens, never on a match. */
static void diverged(rp_seq *s, size_t at, const char *why, enum rp__div_why w,
                     const rp_op *got)
{
    s->divergences++;
    s->div_op = at;
    s->div_why = why;
    struct rp_seq_div *d = &s->divs[s->ndivs++ % RP_SEQ_DIVS];
    memset(d, 0, sizeof *d);
    d->op = (uint32_t)at;
    d->why = (uint8_t)w;
    if (got && at < s->det->n) {
        const rp_op *want = &s->det->ops[at];
        rp__op_delta(want, got, s->lay ? s->lay[at] : rp__rec_layout(s->cs, want), &d->d);
        if (d->d.field == RP_FIELD_FUNCTION || d->d.field == RP_FIELD_KIND)
            d->got_name = rp__rec_kernel_name(s->cs, got);
    }
}

/* The run held for `s` went eagerly after its divergence at op `held`
 * (no other candidate took it). */
static void diverged_eagerly(rp_seq *s, size_t held)
{
    s->flushes++;
    s->flushed_ops += held;
    if (s->ndivs)
        s->divs[(s->ndivs - 1) % RP_SEQ_DIVS].ended = 1;
}

int rp__seq_match(const rp_seq *s, size_t k, const rp_op *op)
{
    const rp_op *want = &s->det->ops[k];
    if (!s->vmask || !s->vmask[k])
        return rp__op_same_content(want, op);
    if ((s->vmask[k] & RP_VOL_FUNC) && op->kind == RP_OP_KERNEL &&
        !rp__seq_form_known(s, k, op->func))
        return 0; /* a function it was not seen with: only widen() takes it */
    return rp__op_match_masked(want, op, s->vmask[k],
                               s->lay ? s->lay[k] : rp__rec_layout(s->cs, want)) &&
           rp__match_values_ok(s->cs, want, op);
}

/* The answer rp__match_join_call found (join.c, call_match): see
 * struct rp_match_dead. */
RP_TLS struct rp_match_dead rp__match_dead;

/* rp__seq_match for op `op` (a record given its position) on `st`, with what
 * call_match found of it taken (rp__match_dead). */
int rp__seq_match_op(const rp_stream *st, const rp_seq *s, size_t k, const rp_op *op)
{
    const struct rp_match_dead *d = &rp__match_dead;
    if (RP_UNLIKELY(d->s == s) && d->k == k && d->opno == op->opno && d->kind == op->kind &&
        d->dst == op->dst && d->src == op->src && d->bytes == op->bytes && d->elem == op->elem &&
        st->opno == op->opno + 1) {
#ifndef NDEBUG
        HOLDS(!rp__seq_match(s, k, op)); /* (asking the driver again) */
#endif
        return 0;
    }
    return rp__seq_match(s, k, op);
}

void rp__match_resolve(rp_stream *st, CUstream target, struct rp_resolved *out)
{
    out->replayed = NULL;
    out->flushed = NULL;
    out->nflushed = 0;
    out->parted = 0;
    out->err = CUDA_SUCCESS;
    if (st->match.ndef == 0) {
        unpin_all(st); /* candidates found for an op that was not deferred */
        destroy_deferred(st);
        return;
    }
    /* Ops the fast path deferred are written down only if they are flushed
     * (they are kernels: the replay reads no record of theirs), or if
     * another sequence than the one they were borrowed from completed (a
     * match of several candidates: rp__match_several). */
    if (st->match.borrowed_seq && st->match.complete && st->match.borrowed_seq != st->match.complete)
        write_down(st);
    size_t written = st->match.borrowed_seq ? st->match.borrowed_from : st->match.ndef;
    rp_ctxstate *cs = st->cs;
    uint64_t gen = rp__issued();
    for (size_t i = 0; i < written; i++) /* every event op leaves the list below */
        if (rp__op_is_event(st->match.def[i].kind))
            rp__ev_deferred_add(-1);
    /* What a part launch issued already (rp__match_part) is done: the rest
     * is the graph's last part, or flushed. */
    size_t done = st->match.launched;
    out->parted = done != 0;
    st->match.launched = 0;
    rp_seq *c = st->match.complete;
    if (c) {
        rp__trace("replay sequence %u (%zu ops from op %zu) on stream %p", c->id, c->det->n,
                  done, (void *)target);
        rp__nvtx_push("reprise: replay sequence %u", c->id);
        enum rp_replay_step failed = RP_STEP_LAUNCH;
        CUresult after_err = CUDA_SUCCESS;
        rp_vals v = {st->match.def,     st->match.borrowed_seq, st->match.borrowed_from,
                     st->match.arena.p, rp__match_ownbits(st)};
        rp__widen_commit(st, c);
        CUresult rc = rp__seq_replay(st, c, target, &v, done, c->det->n, gen, &failed, &after_err);
        if (after_err != CUDA_SUCCESS)
            out->err = after_err;
        rp__nvtx_pop();
        if (rc == CUDA_SUCCESS) {
            done = c->det->n;
            out->replayed = c;
            if (st->handle != CU_STREAM_PER_THREAD) { /* see rp__match_first */
                st->match.hint = c;
                st->match.hint_gone = cs->seqs_gone;
            }
        } else if (rc == CUDA_ERROR_NOT_READY && failed == RP_STEP_ORDER) {
            /* A fork/join sequence whose streams are busy: eagerly this
             * time, the graph stays. */
            cs->counters.fork_joins_busy++;
        } else if (rc == CUDA_ERROR_NOT_READY && failed == RP_STEP_STAGING) {
            cs->counters.staging_busy++; /* likewise */
        } else if (rc == CUDA_ERROR_NOT_READY) {
            /* The graph stays while next time may need fewer updates; when
             * it keeps needing too many it goes, and its shape backs off
             * (not for the rest of an occurrence cut by a quiet spot: the
             * executable chosen for its first part may hold another
             * content). */
            cs->counters.too_many_updates++;
            if (!out->parted && ++c->ex.too_many >= 3)
                c->broken = 1;
        } else {
            /* A replay runs every recorded op or none: the ops go eagerly
             * below, and the graph is not offered again. A node update the
             * driver refuses as invalid is one of its rules (new memory
             * from another context, say), not a failure: said at info. */
            static unsigned int logged;
            int refused = rc == CUDA_ERROR_INVALID_VALUE && failed == RP_STEP_UPDATE;
            if (logged++ < 8)
                rp__log(refused ? RP_LOG_INFO : RP_LOG_WARN,
                        "%s %s (CUresult %d); the sequence's ops ran eagerly and its graph was "
                        "dropped", rp__replay_step_names[failed],
                        refused ? "refused by the driver" : "failed", (int)rc);
            c->broken = 1;
            cs->counters.replay_failures++;
        }
    }
    if (done < st->match.ndef || (out->parted && !out->replayed)) {
        /* (Also an occurrence of which parts ran, cut short.) */
        cs->counters.divergences++;
        /* Candidates still matching when a boundary came: the program
         * stopped before their end. */
        for (size_t i = 0; i < st->match.ncand; i++) {
            diverged(st->match.cand[i], st->match.ndef, "a boundary came before the sequence ended",
                     RP_DIV_BOUNDARY, NULL);
            if (!out->replayed)
                diverged_eagerly(st->match.cand[i], st->match.ndef - done);
        }
    }
    for (size_t i = 0; i < done && i < written; i++)
        if (!st->match.def[i].borrowed) /* a borrowed one owns nothing */
            rp__op_free(&st->match.def[i]);
    if (RP_UNLIKELY(st->match.nown))
        own_free_done(st, done); /* records among the borrowed ones */
    if (done < st->match.ndef)
        write_down(st);
    st->match.borrowed_seq = NULL;
    if (done < st->match.ndef) {
        rp__trace("flush %zu deferred ops on stream %p", st->match.ndef - done, (void *)target);
        rp__nvtx_push("reprise: flush %zu ops", st->match.ndef - done);
    }
    size_t kept = 0;
    rp_fj_tails tails;
    rp__fj_track_begin(&tails, target == st->handle);
    for (size_t i = done; i < st->match.ndef; i++) {
        rp_op *op = &st->match.def[i];
        CUresult rc = issue_eager(st, op, target);
        if (rc != CUDA_SUCCESS) {
            if (out->err == CUDA_SUCCESS)
                out->err = rc;
            rp__op_free(op);
            tails.on = 0;
            continue;
        }
        rp__fj_track(st, &tails, op);
        if (op->borrowed) {
            /* Learning keeps it past the sequence it was borrowed from. */
            rp_op own;
            if (rp__op_copy(&own, op) != 0) {
                rp__bound_hit(cs, RP_BOUND_MEMORY);
                rp__count_eager(cs, RP_EAGER_BOUND, 1);
                rp__op_free(op);
                continue;
            }
            *op = own;
        }
        free(op->data); /* payload: not part of what is learnt */
        op->data = NULL;
        st->match.def[kept++] = *op;
    }
    if (done < st->match.ndef)
        rp__nvtx_pop();
    /* Work reached streams: once for the resolution (what rp__fj_after
     * expects), once more for ops flushed, which may be a side stream's. */
    rp__note_issue();
    if (done < st->match.ndef) {
        rp__note_issue();
        rp__fj_tracked(st, &tails, gen + 2);
    }
    out->flushed = st->match.def;
    out->nflushed = kept;
    st->match.ndef = 0;
    st->match.arena.held = 0; /* the flushed records own their values */
    for (size_t j = 0; j < RP_SPARES; j++)
        st->match.spare[j].held = 0;
    unpin_all(st);
    destroy_deferred(st);
}

int rp__match_part(rp_stream *st, CUstream target)
{
    size_t lo = st->match.launched, hi = st->match.ndef;
    if (hi <= lo || st->match.complete || !st->match.ncand || target != st->handle)
        return 0;
    rp_seq *c = NULL;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (rp__exec_parts(s) && hi <= rp__exec_part_limit(s) && (!c || s->replays > c->replays))
            c = s;
    }
    if (!c)
        return 0;
    if (st->match.borrowed_seq && st->match.borrowed_seq != c)
        write_down(st); /* borrowed from another candidate: c reads records */
    enum rp_replay_step failed = RP_STEP_LAUNCH;
    CUresult after_err = CUDA_SUCCESS;
    rp_vals v = {st->match.def,     st->match.borrowed_seq, st->match.borrowed_from,
                 st->match.arena.p, rp__match_ownbits(st)};
    rp__trace("launch ops %zu-%zu of sequence %u (a quiet spot) on stream %p", lo, hi, c->id,
              (void *)target);
    rp__nvtx_push("reprise: part of sequence %u", c->id);
    rp__widen_commit(st, c);
    CUresult rc = rp__seq_replay(st, c, target, &v, lo, hi, rp__issued(), &failed, &after_err);
    rp__nvtx_pop();
    if (rc != CUDA_SUCCESS) {
        if (rc == CUDA_ERROR_NOT_READY && failed == RP_STEP_STAGING)
            st->cs->counters.staging_busy++;
        else if (rc != CUDA_ERROR_NOT_READY) {
            static unsigned int logged;
            if (logged++ < 8)
                rp__warn("%s failed (CUresult %d) for a part of a sequence; its ops ran "
                         "eagerly and its graph was dropped", rp__replay_step_names[failed],
                         (int)rc);
            c->broken = 1;
            st->cs->counters.replay_failures++;
        }
        return 0; /* nothing launched: the caller flushes what is held */
    }
    rp__note_issue();
    /* The candidates that can launch parts may take the rest of the
     * occurrence: they matched every op so far, so whichever completes
     * launches its ops from `hi` on (its nodes before them disabled), after
     * the part `c` launched for ops `lo` to `hi`. Choosing `c` does not
     * decide the step: a quiet spot before the ops that tell two sequences
     * apart (a generate() step that begins as two forms do) would otherwise
     * cut the occurrence whenever `c` was the other one. Those that cannot
     * launch parts go. */
    size_t k = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (s == c || (rp__exec_parts(s) && hi <= rp__exec_part_limit(s)))
            st->match.cand[k++] = s;
        else
            s->pins--;
    }
    st->match.ncand = k;
    st->match.nwid = 0; /* c's are its own now; the others' went with them */
    st->match.launched = hi;
    return 1;
}

/* Candidate `s` leaves the list, its op at st->match.ndef not `op` (of
 * the same structure, `same`, or another operation): its divergence noted
 * unless it is broken, its widenings dropped, unpinned (still alive:
 * sequences go only under this lock, later). */
static void let_go(rp_stream *st, rp_seq *s, const rp_op *op, int same)
{
    rp__widen_drop(st, s);
    if (!s->broken)
        diverged(s, st->match.ndef, same ? "same operation, other arguments, geometry or addresses"
                                         : "another operation",
                 same ? RP_DIV_OTHER_VALUES : RP_DIV_OTHER_OP, op);
    s->pins--;
}

void rp__match_drop(rp_stream *st, uint32_t drop, const rp_op *got)
{
    size_t k = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (drop >> i & 1) {
            HOLDS(!s->broken && !rp__op_same_node(&s->det->ops[st->match.ndef], got));
            let_go(st, s, got, 0);
        } else {
            st->match.cand[k++] = s;
        }
    }
    st->match.ncand = k;
}

/* Drop the candidates that cannot match the op at position st->match.ndef, noting
 * why for the report. */
static void narrow(rp_stream *st, const rp_op *op)
{
    size_t k = 0, nargs = 0, nout = 0;
    rp_seq *args[RP_MAX_CANDIDATES]; /* exact ones that went another way on arguments */
    rp_seq *out[RP_MAX_CANDIDATES];  /* those that diverged here */
    int updates_match = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (NEVER(s->det->n <= st->match.ndef)) { /* complete candidates left the list */
            s->pins--;
            continue;
        }
        const rp_op *want = &s->det->ops[st->match.ndef];
        if (!s->broken &&
            (rp__seq_match_op(st, s, st->match.ndef, op) || rp__widen(st, s, st->match.ndef, op))) {
            st->match.cand[k++] = s;
            updates_match |= s->vmask != NULL;
            continue;
        }
        int same = !s->broken && rp__op_same_structure(want, op);
        let_go(st, s, op, same);
        if (!s->broken) {
            if (same && !s->vmask)
                args[nargs++] = s;
            out[nout++] = s;
        }
    }
    st->match.ncand = k;
    /* No candidate left and no complete match: what was held runs eagerly,
     * for the sequences that diverged here. */
    for (size_t i = 0; !k && !st->match.complete && i < nout; i++)
        diverged_eagerly(out[i], st->match.ndef - st->match.launched);
    /* Where an exact variant diverged on arguments and a sequence with
     * updates still matches, the occurrence has a graph that serves it:
     * the variant was passed over (the policy drops one passed over again
     * and again: learn/policy.c). */
    for (size_t i = 0; updates_match && i < nargs; i++)
        args[i]->passed_over++;
}

static void note_complete(rp_stream *st)
{
    size_t k = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (s->det->n == st->match.ndef) {
            /* The longest wins; between equals, an exact one (no updates). */
            if (!st->match.complete || st->match.complete->det->n < s->det->n ||
                (st->match.complete->vmask && !s->vmask)) {
                if (st->match.complete)
                    st->match.complete->pins--;
                st->match.complete = s;
            } else {
                s->pins--;
            }
        } else {
            st->match.cand[k++] = s;
        }
    }
    st->match.ncand = k;
}

enum rp_offer rp__match_offer(rp_stream *st, rp_op *op)
{
    write_down(st);
    if (rp__op_is_event(op->kind)) /* which event it is in this occurrence */
        op->erole = rp__op_role_after(st->match.def, st->match.ndef, op->eser);
    if (st->match.ndef) {
        narrow(st, op);
        /* Divergence (or a complete match followed by an op that no
         * longer sequence extends): what is pending must be resolved
         * first, then the op starts afresh. */
        return st->match.ncand ? RP_OFFER_MATCHES : RP_OFFER_RESOLVE;
    }
    unpin_all(st); /* none, unless candidates found for an op that was not deferred */
    if (op->kind == RP_OP_KERNEL && !(st->cs->first_kernel_bits & rp__kernel_bit(op->func))) {
        /* No sequence's first op is its kernel, nor may be (a form): none
         * would match it (an eager launch between steps). */
#ifndef NDEBUG
        for (size_t i = 0; i < st->cs->nseqs; i++)
            HOLDS(!rp__seq_match(st->cs->seqs[i], 0, op));
#endif
        return RP_OFFER_EAGER;
    }
    size_t nexact = 0; /* the candidates without updates: cand[0 .. nexact) */
    for (size_t i = 0; i < st->cs->nseqs; i++) {
        rp_seq *s = st->cs->seqs[i];
        if (!s->broken && s->ctx == op->ctx && s->home == st->handle && rp__seq_match(s, 0, op))
            rp__match_take(st, s, &nexact);
    }
    return st->match.ncand ? RP_OFFER_MATCHES : RP_OFFER_EAGER;
}

void rp__match_take(rp_stream *st, rp_seq *s, size_t *nexact)
{
    if (st->match.ncand == RP_MAX_CANDIDATES) {
        /* A sequence with updates matches every content of its structure;
         * exact variants that begin alike (a counter past their first op)
         * can fill the list: one of them gives it its place, or the graph
         * that would serve is never chosen. */
        if (!s->vmask || *nexact == 0)
            return;
        rp_seq *out = st->match.cand[--*nexact];
        out->pins--;
        st->match.cand[*nexact] = st->match.cand[--st->match.ncand];
    }
    rp__match_adopt(s);
    s->pins++;
    if (!s->vmask) { /* kept in front of those with updates */
        st->match.cand[st->match.ncand++] = st->match.cand[*nexact];
        st->match.cand[(*nexact)++] = s;
    } else {
        st->match.cand[st->match.ncand++] = s;
    }
}

int rp__match_holds_event(const rp_stream *st, uint32_t eser)
{
    int held = 0;
    size_t written = st->match.borrowed_seq ? st->match.borrowed_from : st->match.ndef;
    for (size_t i = 0; i < written; i++) { /* event ops are always written */
        const rp_op *op = &st->match.def[i];
        if (rp__op_is_event(op->kind) && op->eser == eser)
            held = op->kind == RP_OP_EVREC ? 2 : 1;
    }
    return held;
}

int rp__match_defer_destroy(rp_stream *st, CUevent e)
{
    if (st->match.ndtor == RP_FJ_EVENTS)
        return -1;
    st->match.dtor[st->match.ndtor++] = e;
    return 0;
}

void rp__match_cancel(rp_stream *st)
{
    unpin_all(st);
}

void rp__match_stream_free(rp_stream *st)
{
    unpin_all(st);
    for (size_t i = 0; i < (st->match.borrowed_seq ? st->match.borrowed_from : st->match.ndef); i++) {
        if (rp__op_is_event(st->match.def[i].kind))
            rp__ev_deferred_add(-1);
        rp__op_free(&st->match.def[i]); /* the fast path's unwritten ones own nothing */
    }
    for (unsigned int j = 0; st->match.borrowed_seq && j < st->match.nown; j++)
        rp__op_free(&st->match.def[st->match.own[j]]);
    destroy_deferred(st); /* the ops that named them go with the record */
    free(st->match.def);
    free(st->match.arena.p);
    for (size_t j = 0; j < RP_SPARES; j++)
        free(st->match.spare[j].p);
    memset(&st->match, 0, sizeof st->match);
}

enum rp_offer rp__match_defer(rp_stream *st, rp_op *op)
{
    if (defer_push(st, op) != 0) {
        rp__bound_hit(st->cs, RP_BOUND_MEMORY);
        if (!st->match.ndef)
            unpin_all(st); /* nothing held: no candidate any more */
        return RP_OFFER_RESOLVE;
    }
    note_complete(st);
    return st->match.ncand == 0 && st->match.complete ? RP_OFFER_COMPLETE : RP_OFFER_DEFERRED;
}
