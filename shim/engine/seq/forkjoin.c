/* forkjoin.c - what a fork/join sequence needs besides a single stream's
 * (docs/engine.md, "Fork and join"): its capture plan (which private side
 * stream and event stands for each of the program's), the private streams
 * and events themselves, the fork into and the join out of the window;
 * before a replay, whether what its ops depended on eagerly is done or
 * known to need nothing more; after it, the step's event ops again without
 * their work, so that the program's streams and events stand as the step
 * left them; and what a flush leaves known about the streams for the next
 * replay. Runs under the context's lock. */
#include "seq.h"

#include <stdlib.h>
#include <string.h>

int rp__ops_rooted(const rp_op *ops, size_t n, size_t start, CUstream home)
{
    uint32_t recs[RP_FJ_EVENTS]; /* the events (serials) recorded so far */
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
                while (op->kind == RP_OP_EVWAIT && r < nrec && recs[r] != op->eser)
                    r++;
                if (nseen == RP_FJ_STREAMS || op->kind != RP_OP_EVWAIT || r == nrec)
                    return 0;
                seen[nseen++] = op->stream;
            }
        }
        if (op->kind == RP_OP_EVREC) {
            size_t r = 0;
            while (r < nrec && recs[r] != op->eser)
                r++;
            if (r == nrec) { /* the events, each once */
                if ((!nrec && op->stream != home) || nrec == RP_FJ_EVENTS)
                    return 0;
                recs[nrec++] = op->eser;
            }
        }
    }
    return nseen > 0;
}

/* 1 when op i's event is recorded by a later op of the sequence. */
static int recorded_later(const rp_det_entry *e, size_t i)
{
    for (size_t k = i + 1; k < e->n; k++)
        if (e->ops[k].kind == RP_OP_EVREC && e->ops[k].erole == e->ops[i].erole)
            return 1;
    return 0;
}

void rp__fj_plan_free(rp_fj_plan *p)
{
    free(p->on);
    free(p->evx);
}

/* Map the sequence's streams and events; note on `s` what its replays
 * need (other streams, events to record again, events to wait on). Returns
 * 0, 1 when it runs on more streams or records more events than the
 * private ones (a bound), or -1 when memory runs out. */
int rp__fj_plan(rp_seq *s, const rp_det_entry *e, rp_fj_plan *p)
{
    memset(p, 0, sizeof *p);
    p->on = rp__calloc(e->n, 1);
    p->evx = rp__calloc(e->n, sizeof *p->evx);
    s->fj.exts = rp__calloc(e->n, sizeof *s->fj.exts);
    s->fj.shadow = rp__calloc(e->n, sizeof *s->fj.shadow);
    s->fj.hwait = rp__calloc(e->n, sizeof *s->fj.hwait);
    s->fj.hwait_ev = rp__calloc(e->n, sizeof *s->fj.hwait_ev);
    if (!p->on || !p->evx || !s->fj.exts || !s->fj.shadow || !s->fj.hwait || !s->fj.hwait_ev)
        return -1;
    CUstream last_rec_on[RP_FJ_EVENTS]; /* where each event was last recorded so far */
    for (size_t i = 0; i < e->n; i++) {
        const rp_op *op = &e->ops[i];
        p->evx[i] = RP_FJ_OUTSIDE;
        if (op->stream != s->home) {
            unsigned int k = 0;
            while (k < s->fj.nside && s->fj.side[k] != op->stream)
                k++;
            if (k == s->fj.nside) {
                if (s->fj.nside == RP_FJ_STREAMS)
                    return 1;
                s->fj.side_first[s->fj.nside] = op->kind == RP_OP_EVWAIT ? i : SIZE_MAX;
                s->fj.side[s->fj.nside++] = op->stream;
            }
            p->on[i] = (unsigned char)(k + 1);
        }
        if (!rp__op_is_event(op->kind))
            continue;
        size_t j = 0;
        while (j < p->nev && p->prog_role[j] != op->erole)
            j++;
        if (op->kind == RP_OP_EVREC) {
            if (j == p->nev) {
                if (p->nev == RP_FJ_EVENTS)
                    return 1;
                p->prog_role[p->nev++] = op->erole;
            }
            p->evx[i] = j;
            last_rec_on[j] = op->stream;
            s->fj.shadow[s->fj.nshadow++] = (struct rp_fj_shadow){op->stream, i, 1};
        } else if (j < p->nev) {
            p->evx[i] = j; /* recorded earlier in the sequence: an edge */
            if (last_rec_on[j] != op->stream) /* on its own stream: nothing to wait for */
                s->fj.shadow[s->fj.nshadow++] = (struct rp_fj_shadow){op->stream, i, 0};
        } else if (op->stream == s->home && rp__eng.drv->cuGraphExecEventWaitNodeSetEvent &&
                   !recorded_later(e, i)) {
            /* The home stream's wait on an event from outside: a wait node,
             * set to each occurrence's event (not where the sequence records
             * the event itself later: its node would be set before the
             * record it must not see). */
            p->evx[i] = RP_FJ_WAIT_NODE;
            s->fj.hwait_ev[s->fj.nhwait] = NULL; /* set at the first replay */
            s->fj.hwait[s->fj.nhwait++] = i;
        } else {
            size_t k = 0;
            while (k < s->fj.nexts && e->ops[s->fj.exts[k]].erole != op->erole)
                k++;
            if (k == s->fj.nexts)
                s->fj.exts[s->fj.nexts++] = i;
        }
    }
    s->fj.rooted = rp__ops_rooted(e->ops, e->n, 0, s->home);
    return 0;
}

/* Create event *x unless it exists or an earlier creation failed (*rc). */
static void fj_event_create(CUevent *x, CUresult *rc)
{
    if (*rc == CUDA_SUCCESS && !*x &&
        (*rc = rp__eng.drv->cuEventCreate(x, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
        *x = NULL;
}

CUresult rp__fj_prepare(rp_ctxstate *cs, const rp_seq *s, size_t nev)
{
    struct rp_fj *f = &cs->fj;
    CUresult rc = CUDA_SUCCESS;
    fj_event_create(&f->fork, &rc);
    fj_event_create(&f->post, &rc);
    if (s->fj.nhwait)
        fj_event_create(&f->none, &rc);
    for (unsigned int i = 0; i < s->fj.nside; i++) {
        if (rc == CUDA_SUCCESS && !f->side[i] &&
            (rc = rp__eng.drv->cuStreamCreate(&f->side[i], CU_STREAM_NON_BLOCKING)) !=
                CUDA_SUCCESS)
            f->side[i] = NULL;
        fj_event_create(&f->join[i], &rc);
    }
    for (size_t j = 0; j < nev; j++)
        fj_event_create(&f->ev[j], &rc);
    return rc;
}

void rp__fj_release(rp_ctxstate *cs)
{
    const struct rp__driver *D = rp__eng.drv;
    struct rp_fj *f = &cs->fj;
    CUevent *evs[] = {&f->fork, &f->post, &f->none};
    for (size_t i = 0; i < 3; i++)
        if (*evs[i])
            D->cuEventDestroy_v2(*evs[i]);
    for (size_t i = 0; i < RP_FJ_STREAMS; i++) {
        if (f->side[i])
            D->cuStreamDestroy_v2(f->side[i]);
        if (f->join[i])
            D->cuEventDestroy_v2(f->join[i]);
    }
    for (size_t j = 0; j < RP_FJ_EVENTS; j++)
        if (f->ev[j])
            D->cuEventDestroy_v2(f->ev[j]);
    memset(f, 0, sizeof *f);
}

/* The private stream op i runs on in the window. */
CUstream rp__fj_window_stream(rp_ctxstate *cs, const rp_fj_plan *p, size_t i)
{
    return p->on && p->on[i] ? cs->fj.side[p->on[i] - 1] : cs->priv;
}

/* In the window, right after it begins: every private side stream joins the
 * capture, forked from its start (so none runs outside it, whatever its
 * first op is). */
CUresult rp__fj_fork(rp_ctxstate *cs, const rp_seq *s)
{
    const struct rp__driver *D = rp__eng.drv;
    CUresult rc = s->fj.nside ? D->cuEventRecord(cs->fj.fork, cs->priv) : CUDA_SUCCESS;
    for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++)
        rc = D->cuStreamWaitEvent(cs->fj.side[i], cs->fj.fork, 0);
    return rc;
}

/* ... and before it ends: every side stream joins the private stream back. */
CUresult rp__fj_join(rp_ctxstate *cs, const rp_seq *s)
{
    const struct rp__driver *D = rp__eng.drv;
    CUresult rc = CUDA_SUCCESS;
    for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++) {
        rc = D->cuEventRecord(cs->fj.join[i], cs->fj.side[i]);
        if (rc == CUDA_SUCCESS)
            rc = D->cuStreamWaitEvent(cs->priv, cs->fj.join[i], 0);
    }
    return rc;
}

/* An event op in the window: the private event that stands for the
 * program's; a wait on an event recorded outside the sequence is left out. */
CUresult rp__fj_event_op(rp_ctxstate *cs, const rp_op *op, CUstream on, size_t evx)
{
    if (evx == RP_FJ_OUTSIDE)
        return CUDA_SUCCESS;
    if (evx == RP_FJ_WAIT_NODE) /* a node, set to the program's event before each replay */
        return rp__eng.drv->cuStreamWaitEvent(on, cs->fj.none, CU_EVENT_WAIT_EXTERNAL);
    if (op->kind == RP_OP_EVREC)
        return rp__eng.drv->cuEventRecord(cs->fj.ev[evx], on);
    return rp__eng.drv->cuStreamWaitEvent(on, cs->fj.ev[evx], 0);
}

/* A stream stamped clean for a replay on `target` by an earlier replay or
 * flush, with nothing issued anywhere since (rp__issued is still `gen`). */
static int fj_clean(const rp_stream *x, uint64_t gen, CUstream target)
{
    return x && x->fj.after_gen == gen && x->fj.after_home == target;
}

/* Before a fork/join sequence's launch on `target`: what it must come
 * after is done already, or known to need nothing more to be done. Its
 * side streams' ops depend, eagerly, on their streams' earlier work, and
 * its ops after a wait on an event recorded outside it on that event; a
 * graph can only wait for such things as a whole, which could hold up the
 * home stream's ops behind work the program means to release only once
 * those ops are done (a side stream blocked on a value the host writes
 * after synchronizing the home stream). So the graph waits for nothing.
 * Each stream it runs ops on must be idle, or stamped (fj_clean) with
 * nothing issued anywhere since (rp__issued): by an earlier replay of ours
 * on `target` that made it wait for its graph (that graph needed nothing
 * more to finish), or by a flush after which `target` waited on its last
 * record (`target` is after its work already). The home stream is among
 * them because the side streams wait for the whole graph afterwards
 * (fj_after), unless the sequence is rooted (rp_seq), or every side
 * stream's first op waits on the record the home stream's flushed work
 * ended with: then the side streams' ops came after the home stream's
 * earlier work eagerly too. Each event it waits on recorded outside it
 * must be complete, or last recorded by such a replay on `target` or as
 * the home stream's flushed work's last op. Otherwise its ops run eagerly,
 * as the program issued them (CUDA_ERROR_NOT_READY). A side stream whose
 * blocking flag differs from the home stream's never replays: the legacy
 * stream would order its ops otherwise. `gen`: rp__issued when the
 * resolution began. */
CUresult rp__fj_ready(rp_stream *st, const rp_seq *s, const rp_vals *v, CUstream target,
                      uint64_t gen, int part)
{
    rp_ctxstate *cs = st->cs;
    const struct rp__driver *D = rp__eng.drv;
    CUresult rc = CUDA_SUCCESS;
    /* The home stream: its work before the graph comes before the side
     * streams' ops eagerly too when the sequence is rooted, or when that
     * work ends with a record every side stream's first op waits on; or it
     * is a graph of ours, which needs nothing more to finish. */
    int home_ok = !s->fj.nside || s->fj.rooted || part == RP_FJ_TAIL;
    if (!home_ok && fj_clean(st, gen, target)) {
        home_ok = 1;
        for (unsigned int i = 0; st->fj.tail_ev && i < s->fj.nside; i++)
            home_ok &= s->fj.side_first[i] != SIZE_MAX &&
                       v->def[s->fj.side_first[i]].ev == st->fj.tail_ev;
    }
    if (!home_ok)
        rc = D->cuStreamQuery(target);
    if (rc != CUDA_SUCCESS)
        rp__trace("fork/join sequence %u not replayed: its home stream is busy", s->id);
    if (part == RP_FJ_HEAD)
        return rc; /* home-stream nodes only */
    for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++) {
        rp_stream *x = rp__stream_find(cs, s->fj.side[i]);
        /* A side stream's ops wait, eagerly, for the legacy stream's work
         * before them when it is a blocking stream, and only then; in the
         * graph they wait as the home stream's launch does: the two must
         * agree, but where the home is the legacy stream itself. Its graph
         * waits for the legacy stream's work and every blocking stream's,
         * and a non-blocking side stream's ops in it do too: a stricter
         * order than eagerly (it waited only for what its events said),
         * the same results; the side stream itself must be idle or known
         * clean before the launch, as any side stream. */
        if (!x || (x->blocking != st->blocking && !st->legacy))
            rc = CUDA_ERROR_NOT_READY;
        else if (!fj_clean(x, gen, target))
            rc = D->cuStreamQuery(s->fj.side[i]);
        if (rc != CUDA_SUCCESS)
            rp__trace("fork/join sequence %u not replayed: side stream %p is busy (gen %llu, its %llu, home %p/%p)", s->id,
                      (void *)s->fj.side[i], (unsigned long long)gen, x ? (unsigned long long)x->fj.after_gen : 0ull, x ? (void*)x->fj.after_home : NULL, (void*)target);
    }
    for (size_t i = 0; i < s->fj.nexts && rc == CUDA_SUCCESS; i++) {
        rp_evinfo ei;
        CUevent ev = v->def[s->fj.exts[i]].ev; /* the occurrence's */
        /* Recorded last by the home stream (its flushed work ended with
         * this record): the home stream is after it already. */
        if (fj_clean(st, gen, target) && st->fj.tail_ev == ev)
            continue;
        if (!rp__ev_get(ev, &ei) || ei.after_gen != gen || ei.after_home != target)
            rc = D->cuEventQuery(ev);
        if (rc != CUDA_SUCCESS)
            rp__trace("fork/join sequence %u not replayed: event %p it waits on is not complete",
                      s->id, (void *)ev);
    }
    return rc;
}

/* After it: the other streams' later work waits for the graph, and the
 * program's events and streams are left as the step left them eagerly. The
 * graph's own events are private, so the sequence's event ops are issued
 * again without its work (rp_seq.shadow): each side stream first waits for
 * the graph (cs->fj.post, recorded on `target` right after it), then every
 * record and wait comes again on its own stream, in the step's order. So an
 * event completes no earlier than eagerly, in the order of its last record
 * (an event recorded twice in the step stands where its second record
 * stood); once an event is complete, every stream whose last op of the step
 * came before it is idle, as eagerly (its last op is its last event op of
 * the step, or its wait for the graph); and a later wait waits for the
 * graph. If that cannot be done, the host waits for the graph. `gen`: what
 * rp__issued will be once this resolution is over if nothing else is
 * issued meanwhile (the streams, and the events recorded on `target`, are
 * then clean for the next replay: fj_ready). Returns the first error. */
CUresult rp__fj_before(rp_seq *s, const rp_vals *v)
{
    return rp__fj_before_part(s, v, s->det->n);
}

CUresult rp__fj_before_part(rp_seq *s, const rp_vals *v, size_t hi)
{
    for (size_t i = 0; i < s->fj.nhwait; i++) {
        CUevent ev = s->fj.hwait[i] < hi ? v->def[s->fj.hwait[i]].ev : s->cs->fj.none;
        if (s->fj.hwait_ev[i] == ev)
            continue;
        CUresult rc = rp__eng.drv->cuGraphExecEventWaitNodeSetEvent(
            s->exec, s->ex.nodes[s->fj.hwait[i]], ev);
        if (rc != CUDA_SUCCESS)
            return rc;
        s->fj.hwait_ev[i] = ev;
        if (ev != s->cs->fj.none)
            s->cs->counters.event_node_updates++;
    }
    return CUDA_SUCCESS;
}

CUresult rp__fj_after(rp_stream *st, const rp_seq *s, const rp_vals *v, CUstream target,
                      uint64_t gen)
{
    rp_ctxstate *cs = st->cs;
    const struct rp__driver *D = rp__eng.drv;
    CUresult rc = CUDA_SUCCESS;
    if (s->fj.nside) {
        rc = D->cuEventRecord(cs->fj.post, target);
        for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++)
            rc = D->cuStreamWaitEvent(s->fj.side[i], cs->fj.post, 0);
    }
    size_t k = 0;
    /* The occurrence's events, as the program named them this time. */
#define SHADOW_EV(o) (v->def[(o)->at].ev)
    for (; k < s->fj.nshadow && rc == CUDA_SUCCESS; k++) {
        const struct rp_fj_shadow *o = &s->fj.shadow[k];
        rc = o->record ? D->cuEventRecord(SHADOW_EV(o), o->stream)
                       : D->cuStreamWaitEvent(o->stream, SHADOW_EV(o), 0);
    }
    if (rc != CUDA_SUCCESS) {
        /* The host waits for the graph; the events not recorded again yet
         * are recorded on `target`, complete once it is (none may complete
         * before its step's work). */
        CUresult src = D->cuStreamSynchronize(target);
        for (size_t j = k; j < s->fj.nshadow; j++)
            if (s->fj.shadow[j].record)
                D->cuEventRecord(SHADOW_EV(&s->fj.shadow[j]), target);
        (void)src;
        return rc;
    }
    /* Events recorded again on `target` come before the next replay there. */
    for (size_t j = 0; j < s->fj.nshadow; j++)
        if (s->fj.shadow[j].record && s->fj.shadow[j].stream == target)
            rp__ev_rerecorded(SHADOW_EV(&s->fj.shadow[j]), gen, target);
#undef SHADOW_EV
    if (s->fj.nside) {
        rp__fj_stamp(cs, st, gen, target);
        st->fj.tail_ev = NULL; /* its work ends with a graph of ours */
        for (unsigned int i = 0; i < s->fj.nside; i++) {
            rp_stream *x = rp__stream_find(cs, s->fj.side[i]);
            if (x)
                rp__fj_stamp(cs, x, gen, target);
        }
    }
    return CUDA_SUCCESS;
}

void rp__fj_stamp(rp_ctxstate *cs, rp_stream *x, uint64_t gen, CUstream home)
{
    struct rp_fj_carry *c = &cs->fjc;
    x->fj.after_gen = gen;
    x->fj.after_home = home;
    for (unsigned int i = 0; i < c->n; i++)
        if (c->s[i] == x)
            return;
    /* Full: the oldest goes (its stamp holds, uncarried: conservative). */
    if (c->n == RP_FJ_CARRY)
        memmove(c->s, c->s + 1, --c->n * sizeof c->s[0]);
    c->s[c->n++] = x;
}

void rp__fj_eager(rp_ctxstate *cs, const rp_op *op, uint64_t was)
{
    struct rp_fj_carry *c = &cs->fjc;
    int evop = op->kind == RP_OP_EVREC || op->kind == RP_OP_EVWAIT;
    if (!c->n && !c->nt && !evop)
        return; /* nothing to carry or to stamp */
    /* Streams told apart by record, not handle (each thread's per-thread
     * stream has the same one): the op's, whose slot the coordinator
     * numbered it by as it recorded it (rp_op.sid), under the same lock. */
    rp_stream *on = NEVER(!op->sid || op->sid > cs->nstreams) ? NULL : &cs->streams[op->sid - 1];
    if (on && NEVER(!on->used || on->handle != op->stream))
        on = NULL; /* nothing is concluded */
    uint64_t now = was + 1;
    /* Nothing but this op reached any stream since `was`: the stamps at
     * `was` of every other stream still hold (a stream's last work is
     * what it was; an op on the legacy stream adds nothing to a blocking
     * stream's, nor the reverse). Those that lapsed leave the list. */
    unsigned int k = 0;
    for (unsigned int i = 0; i < c->n; i++) {
        rp_stream *x = c->s[i];
        if (on && x != on && x->fj.after_gen == was) {
            x->fj.after_gen = now;
            c->s[k++] = x;
        }
    }
    c->n = k;
    /* The streams whose last op records an event, likewise; a record of
     * the same event elsewhere makes theirs no longer its latest. */
    k = 0;
    for (unsigned int i = 0; i < c->nt; i++) {
        if (!on || c->t[i].st == on || c->t[i].gen != was ||
            (op->kind == RP_OP_EVREC && c->t[i].ev == op->ev))
            continue;
        c->t[k] = c->t[i];
        c->t[k++].gen = now;
    }
    c->nt = k;
    if (!on)
        return;
    if (op->kind == RP_OP_EVWAIT) {
        /* A stream whose last op records this event, with nothing on it
         * since: all of its work comes before this stream's end. */
        for (unsigned int i = 0; i < c->nt; i++)
            if (c->t[i].ev == op->ev)
                rp__fj_stamp(cs, c->t[i].st, now, op->stream);
    } else if (op->kind == RP_OP_EVREC) {
        if (c->nt == RP_FJ_CARRY) /* full: the oldest goes */
            memmove(c->t, c->t + 1, --c->nt * sizeof c->t[0]);
        c->t[c->nt].st = on;
        c->t[c->nt].ev = op->ev;
        c->t[c->nt++].gen = now;
    }
}

void rp__fj_track_begin(rp_fj_tails *tl, int on)
{
    /* Only what is read before written: entries past tl->n are set when
     * they are added (a resolution that flushes nothing, a replay's, pays
     * for no more). */
    tl->n = 0;
    tl->home.h = NULL, tl->home.rec = NULL, tl->home.joined = 0;
    tl->on = on;
}

/* Follow a flushed op `op` of `st`'s trace. Past RP_FJ_STREAMS streams
 * nothing is concluded (tl->on goes to 0). */
void rp__fj_track(const rp_stream *st, rp_fj_tails *tl, const rp_op *op)
{
    if (!tl->on)
        return;
    struct rp_fj_tail *t = tl->t, *home = &tl->home;
    if (op->kind == RP_OP_EVREC) { /* a record elsewhere is no longer the latest */
        for (size_t k = 0; k < tl->n; k++)
            if (t[k].rec == op->ev && t[k].h != op->stream)
                t[k].rec = NULL, t[k].joined = 0;
        if (home->rec == op->ev && op->stream != st->handle)
            home->rec = NULL;
    }
    if (op->stream == st->handle) {
        if (op->kind == RP_OP_EVWAIT)
            for (size_t k = 0; k < tl->n; k++)
                if (t[k].rec == op->ev)
                    t[k].joined = 1;
        home->joined = 1; /* it had ops */
        home->rec = op->kind == RP_OP_EVREC ? op->ev : NULL;
        return;
    }
    size_t k = 0;
    while (k < tl->n && t[k].h != op->stream)
        k++;
    if (k == tl->n) {
        if (tl->n == RP_FJ_STREAMS) {
            tl->on = 0;
            return;
        }
        t[tl->n++].h = op->stream;
    }
    t[k].rec = op->kind == RP_OP_EVREC ? op->ev : NULL;
    t[k].joined = 0;
}

void rp__fj_tracked(rp_stream *st, const rp_fj_tails *tl, uint64_t gen)
{
    if (!tl->on)
        return;
    /* A side stream whose last flushed op was a record the home stream
     * then waited on has all its work ordered before the home stream's
     * end: as clean for the next replay as after one (rp__fj_ready). */
    for (size_t i = 0; i < tl->n; i++) {
        rp_stream *x = tl->t[i].joined ? rp__stream_find(st->cs, tl->t[i].h) : NULL;
        if (x)
            rp__fj_stamp(st->cs, x, gen, st->handle);
    }
    /* The home stream's flushed work ending with a record: a sequence
     * whose side streams all begin by waiting on it may be replayed next
     * (rp__fj_ready). */
    if (tl->home.joined && tl->home.rec) {
        rp__fj_stamp(st->cs, st, gen, st->handle);
        st->fj.tail_ev = tl->home.rec;
    }
}
