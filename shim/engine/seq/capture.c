/* capture.c - turns a segment seen often enough into an executable graph:
 * re-issues its recorded ops on the context's private non-blocking stream
 * inside a capture window (lifecycle.c), seals and checks the graph, and
 * instantiates it. The program's own calls are never inside the window: the
 * engine lock is held throughout, and the calls that could invalidate a
 * capture from another thread (cuCtxSynchronize) wait on the capture gate.
 * Any failure leaves the program's work untouched (it already ran eagerly)
 * and only costs a back-off. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void rp__lc_driver_from(rp_lc_driver *lc, const struct rp__driver *drv)
{
    lc->begin_capture = drv->cuStreamBeginCapture_v2;
    lc->end_capture = drv->cuStreamEndCapture;
    lc->graph_destroy = drv->cuGraphDestroy;
    lc->graph_get_nodes = drv->cuGraphGetNodes;
    lc->node_get_type = drv->cuGraphNodeGetType;
    lc->host_alloc = drv->cuMemHostAlloc;
    lc->host_free = drv->cuMemFreeHost;
    lc->event_query = drv->cuEventQuery;
    lc->event_destroy = drv->cuEventDestroy_v2;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Free a record of the values an executable holds (n ops; those never
 * filled are zeroed and own nothing). */
static void held_free(rp_op *held, size_t n)
{
    for (size_t i = 0; held && i < n; i++)
        rp__op_free(&held[i]);
    free(held);
}

/* The values a fresh executable of `e`'s graph holds: its records, without
 * payload (the staging holds it). NULL when memory runs out. */
static rp_op *held_values(const rp_det_entry *e)
{
    rp_op *held = rp__calloc(e->n, sizeof *held);
    for (size_t i = 0; held && i < e->n; i++) {
        if (rp__op_copy(&held[i], &e->ops[i]) != 0) {
            held_free(held, e->n);
            return NULL;
        }
        free(held[i].data);
        held[i].data = NULL;
    }
    return held;
}

void rp__seq_destroy(rp_seq *s)
{
    if (!s)
        return;
    rp_ctxstate *cs = s->cs;
    const struct rp__driver *D = cs->drv;
    /* Nothing here waits: the last launch may sit behind a wait the host
     * releases only after this call returns (cuStreamWaitValue32). An
     * executable destroyed in flight is freed by the driver once it
     * completes; the staging that launch reads goes to the pool, busy until
     * `done` (which the pool then owns) completes. */
    CUevent busy = NULL;
    if (s->done && s->done_pending && D->cuEventQuery(s->done) == CUDA_ERROR_NOT_READY)
        busy = s->done;
    else if (s->done)
        D->cuEventDestroy_v2(s->done);
    if (s->exec)
        D->cuGraphExecDestroy(s->exec);
    if (s->origin)
        D->cuGraphDestroy(s->origin);
    if (cs) {
        for (size_t i = 0; i < s->sealed.nstaging; i++)
            cs->counters.staging_live_bytes -= s->sealed.staging[i].bytes;
        rp__lc_sealed_release_after(&cs->lc, &s->sealed, busy);
    } else if (busy) {
        D->cuEventDestroy_v2(busy);
    }
    size_t n = s->det ? s->det->n : 0;
    held_free(s->ex.held, n);
    for (unsigned int j = 0; j < s->ex.nalt; j++) {
        D->cuGraphExecDestroy(s->ex.alt[j]);
        held_free(s->ex.alt_held[j], n);
    }
    if (cs)
        cs->nalts -= s->ex.nalt;
    free(s->fj.shadow);
    free(s->fj.exts);
    free(s->lay);
    free(s->match.fast);
    free(s->match.fvals);
    free(s->match.poff);
    free(s->ex.nodes);
    free(s->vmask);
    free(s->stage_of);
    free(s);
}

/* The matcher's images of the sequence's kernels (rp_fast), from their
 * records and layouts (s->lay). Without memory, none: the fast path then
 * runs nothing, and every launch is recorded and matched as any op. */
static void fast_setup(rp_seq *s, const rp_det_entry *e)
{
    size_t nvals = 0;
    if (!s->lay || !(s->match.fast = rp__calloc(e->n, sizeof *s->match.fast)))
        return;
    for (size_t i = 0; i < e->n; i++)
        if (s->lay[i])
            nvals += s->lay[i]->n;
    if (nvals && !(s->match.fvals = rp__malloc(nvals * sizeof *s->match.fvals))) {
        free(s->match.fast);
        s->match.fast = NULL;
        return;
    }
    nvals = 0;
    for (size_t i = 0; i < e->n; i++) {
        const rp_op *op = &e->ops[i];
        const rp_param_layout *L = s->lay[i];
        rp_fast *f = &s->match.fast[i];
        if (op->kind != RP_OP_KERNEL || !L || op->nattrs || L->total != op->param_bytes)
            continue; /* f->f NULL: never matched by the fast path */
        f->f = op->func;
        f->stream = op->stream;
        f->tag = rp__fast_tag(op->entry, op->flags & RP_OPF_PTSZ);
        f->nparams = L->n;
        memcpy(f->geometry, op->grid, sizeof f->geometry);
        int words = L->n <= RP_FAST_PARAMS;
        for (uint32_t j = 0; words && j < L->n; j++)
            words = L->size[j] == 4 || L->size[j] == 8;
        if (!words)
            continue; /* the layout is walked */
        for (uint32_t j = 0; j < L->n; j++) {
            uint64_t v = 0;
            if (L->size[j] == 4) {
                uint32_t u;
                memcpy(&u, op->params + L->off[j], 4);
                v = u;
                f->size4 |= 1u << j;
            } else {
                memcpy(&v, op->params + L->off[j], 8);
            }
            s->match.fvals[nvals + j] = v;
        }
        f->words = 1;
        f->vals = s->match.fvals + nvals;
        nvals += L->n;
    }
}

static void log_failure_once(const char *what, CUresult rc)
{
    static unsigned int logged;
    if (logged++ < 8)
        rp__info("capture failed at %s (CUresult %d); the sequence runs eagerly and is retried later",
                 what, (int)rc);
}

/* Set up what a sequence with volatile fields needs besides its nodes
 * (s->ex.nodes, filled in the window): its mask and a copy of the values the
 * executable will hold. Returns 0, or -1 when memory runs out. */
static int volatile_setup(rp_seq *s, const rp_det_entry *e, const uint64_t *vmask)
{
    s->vmask = rp__malloc(e->n * sizeof *s->vmask);
    s->ex.held = held_values(e);
    if (!s->vmask || !s->ex.nodes || !s->ex.held)
        return -1;
    memcpy(s->vmask, vmask, e->n * sizeof *s->vmask);
    return 0;
}

CUgraphExec rp__seq_alt_exec(rp_seq *s, rp_op **held)
{
    rp_ctxstate *cs = s->cs;
    CUgraphExec x = NULL;
    /* Instantiated in the sequence's context, as its first executable was
     * (rp__capture): a replay resolved from a thread where another context
     * is current makes none. */
    CUcontext cur = NULL;
    *held = NULL;
    if (cs->drv->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cs->ctx)
        return NULL;
    uint64_t t0 = now_ns();
    *held = held_values(s->det);
    if (!*held)
        return NULL;
    CUresult rc = cs->drv->cuGraphInstantiateWithFlags(&x, s->sealed.graph, 0);
    if (rc == CUDA_SUCCESS) {
        cs->counters.instantiates++;
        rc = cs->drv->cuGraphUpload(x, cs->priv);
        if (rc != CUDA_SUCCESS) {
            cs->drv->cuGraphExecDestroy(x);
            x = NULL;
        }
    } else {
        x = NULL;
    }
    cs->counters.instantiate_ns += now_ns() - t0;
    if (!x) {
        static unsigned int logged;
        if (logged++ < 4)
            rp__info("another executable of sequence %u could not be made (CUresult %d); "
                     "its replays keep updating the one it has", s->id, (int)rc);
        held_free(*held, s->det->n);
        *held = NULL;
    }
    return x;
}

/* The node the op just issued into the window on `stream` became: the
 * stream's only dependency in the capture. */
static CUresult node_of_last(rp_ctxstate *cs, CUstream stream, CUgraphNode *out)
{
    CUstreamCaptureStatus st;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    CUresult rc = cs->drv->cuStreamGetCaptureInfo_v2(stream, &st, NULL, NULL, &deps, &ndeps);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || ndeps != 1 || !deps)
        return CUDA_ERROR_NOT_SUPPORTED;
    *out = deps[0];
    return CUDA_SUCCESS;
}

/* After cuGraphExecUpdate_v2(reuse->exec, s's graph) succeeded: s takes
 * the executable over. The driver still names the executable's nodes by the
 * handles of the graph it was instantiated from, not by those of the graph
 * it was updated to (observed on an H200, driver 580.159.04: the new graph's
 * nodes get CUDA_ERROR_INVALID_VALUE). So that graph moves with the
 * executable, kept alive for as long as its nodes are used, and s's nodes
 * become its nodes. The update pairs the two graphs' nodes in topological
 * order, which for the shim's graphs (one stream, one chain, each op's node
 * depending on the one before) is op order: op i of s pairs with op i of
 * reuse, whose node handle is reuse->ex.nodes[i]. */
static void take_over(rp_seq *s, rp_seq *reuse)
{
    s->exec = reuse->exec;
    reuse->exec = NULL;
    if (reuse->origin) {
        s->origin = reuse->origin;
        reuse->origin = NULL;
    } else {
        /* The staging stays with reuse: the executable no longer reads it. */
        s->origin = reuse->sealed.graph;
        reuse->sealed.graph = NULL;
    }
    free(s->ex.nodes);
    s->ex.nodes = reuse->ex.nodes;
    reuse->ex.nodes = NULL;
}

/* ---- fork/join ------------------------------------------------------------- */

/* How a sequence's ops map onto the capture: op i runs on private stream
 * `on[i]` (0: the context's private stream, standing for the sequence's
 * home; i > 0: fj.side[i - 1], standing for s->fj.side[i - 1]), and an event
 * op names private event `evx[i]` (fj.ev[...], standing for the program's
 * event), or none (SIZE_MAX) for a wait on an event recorded outside the
 * sequence: the capture leaves it out, and the replay waits before. */
typedef struct fj_plan {
    unsigned char *on;
    size_t *evx;
    CUevent prog_ev[RP_FJ_EVENTS]; /* the program's events, by private index */
    size_t nev;
} fj_plan;

static void plan_free(fj_plan *p)
{
    free(p->on);
    free(p->evx);
}

/* Map the sequence's streams and events; note on `s` what its replays
 * need (other streams, events to record again, events to wait on). Returns
 * 0, 1 when it runs on more streams or records more events than the
 * private ones (a bound), or -1 when memory runs out. */
static int plan(rp_seq *s, const rp_det_entry *e, fj_plan *p)
{
    memset(p, 0, sizeof *p);
    p->on = rp__calloc(e->n, 1);
    p->evx = rp__calloc(e->n, sizeof *p->evx);
    s->fj.exts = rp__calloc(e->n, sizeof *s->fj.exts);
    s->fj.shadow = rp__calloc(e->n, sizeof *s->fj.shadow);
    if (!p->on || !p->evx || !s->fj.exts || !s->fj.shadow)
        return -1;
    CUstream last_rec_on[RP_FJ_EVENTS]; /* where each event was last recorded so far */
    for (size_t i = 0; i < e->n; i++) {
        const rp_op *op = &e->ops[i];
        p->evx[i] = SIZE_MAX;
        if (op->stream != s->home) {
            unsigned int k = 0;
            while (k < s->fj.nside && s->fj.side[k] != op->stream)
                k++;
            if (k == s->fj.nside) {
                if (s->fj.nside == RP_FJ_STREAMS)
                    return 1;
                s->fj.side_first[s->fj.nside] = op->kind == RP_OP_EVWAIT ? op->ev : NULL;
                s->fj.side[s->fj.nside++] = op->stream;
            }
            p->on[i] = (unsigned char)(k + 1);
        }
        if (!rp__op_is_event(op->kind))
            continue;
        size_t j = 0;
        while (j < p->nev && p->prog_ev[j] != op->ev)
            j++;
        if (op->kind == RP_OP_EVREC) {
            if (j == p->nev) {
                if (p->nev == RP_FJ_EVENTS)
                    return 1;
                p->prog_ev[p->nev++] = op->ev;
            }
            p->evx[i] = j;
            last_rec_on[j] = op->stream;
            s->fj.shadow[s->fj.nshadow++] = (struct rp_fj_shadow){op->stream, op->ev, 1};
        } else if (j < p->nev) {
            p->evx[i] = j; /* recorded earlier in the sequence: an edge */
            if (last_rec_on[j] != op->stream) /* on its own stream: nothing to wait for */
                s->fj.shadow[s->fj.nshadow++] = (struct rp_fj_shadow){op->stream, op->ev, 0};
        } else {
            size_t k = 0;
            while (k < s->fj.nexts && s->fj.exts[k] != op->ev)
                k++;
            if (k == s->fj.nexts)
                s->fj.exts[s->fj.nexts++] = op->ev;
        }
    }
    s->fj.rooted = rp__ops_rooted(e->ops, e->n, 0, s->home);
    return 0;
}

/* The private streams and events the capture and replays of `s` use,
 * created before the window (nothing is created inside it). */
static CUresult fj_prepare(rp_ctxstate *cs, const rp_seq *s, size_t nev)
{
    const struct rp__driver *D = cs->drv;
    struct rp_fj *f = &cs->fj;
    CUresult rc = CUDA_SUCCESS;
#define FJ_EVENT(x)                                                                                 if (rc == CUDA_SUCCESS && !(x) && (rc = D->cuEventCreate(&(x), CU_EVENT_DISABLE_TIMING)))           (x) = NULL;
    FJ_EVENT(f->fork)
    FJ_EVENT(f->post)
    for (unsigned int i = 0; i < s->fj.nside; i++) {
        if (rc == CUDA_SUCCESS && !f->side[i] &&
            (rc = D->cuStreamCreate(&f->side[i], CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
            f->side[i] = NULL;
        FJ_EVENT(f->join[i])
    }
    for (size_t j = 0; j < nev; j++)
        FJ_EVENT(f->ev[j])
#undef FJ_EVENT
    return rc;
}

void rp__fj_release(rp_ctxstate *cs)
{
    const struct rp__driver *D = cs->drv;
    struct rp_fj *f = &cs->fj;
    CUevent *evs[] = {&f->fork, &f->post};
    for (size_t i = 0; i < 2; i++)
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
static CUstream window_stream(rp_ctxstate *cs, const fj_plan *p, size_t i)
{
    return p->on && p->on[i] ? cs->fj.side[p->on[i] - 1] : cs->priv;
}

/* In the window, right after it begins: every private side stream joins the
 * capture, forked from its start (so none runs outside it, whatever its
 * first op is). */
static CUresult fj_fork(rp_ctxstate *cs, const rp_seq *s)
{
    const struct rp__driver *D = cs->drv;
    CUresult rc = s->fj.nside ? D->cuEventRecord(cs->fj.fork, cs->priv) : CUDA_SUCCESS;
    for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++)
        rc = D->cuStreamWaitEvent(cs->fj.side[i], cs->fj.fork, 0);
    return rc;
}

/* ... and before it ends: every side stream joins the private stream back. */
static CUresult fj_join(rp_ctxstate *cs, const rp_seq *s)
{
    const struct rp__driver *D = cs->drv;
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
static CUresult fj_event_op(rp_ctxstate *cs, const rp_op *op, CUstream on, size_t evx)
{
    if (evx == SIZE_MAX)
        return CUDA_SUCCESS;
    if (op->kind == RP_OP_EVREC)
        return cs->drv->cuEventRecord(cs->fj.ev[evx], on);
    return cs->drv->cuStreamWaitEvent(on, cs->fj.ev[evx], 0);
}

CUstream rp__private_stream(rp_ctxstate *cs)
{
    if (!cs->priv && cs->drv->cuStreamCreate(&cs->priv, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        cs->priv = NULL;
    cs->win.stream = cs->priv;
    return cs->priv;
}

/* Count a sealed graph's nodes by type into the context's counters. */
static void count_nodes(rp_ctxstate *cs, CUgraph g)
{
    CUgraphNode nodes[256];
    size_t n = sizeof nodes / sizeof nodes[0];
    if (cs->drv->cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS)
        return;
    if (n > sizeof nodes / sizeof nodes[0])
        n = sizeof nodes / sizeof nodes[0]; /* counted up to 256 nodes a graph */
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        if (cs->drv->cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS)
            continue;
        if (t == CU_GRAPH_NODE_TYPE_KERNEL)
            cs->counters.nodes_kernel++;
        else if (t == CU_GRAPH_NODE_TYPE_MEMCPY)
            cs->counters.nodes_memcpy++;
        else if (t == CU_GRAPH_NODE_TYPE_MEMSET)
            cs->counters.nodes_memset++;
        else
            cs->counters.nodes_other++;
    }
}

rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse,
                    CUstream home)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->ops[i].ctx != cs->ctx)
            return NULL; /* NEVER: segments are per stream, streams per context */
    CUcontext cur = NULL;
    if (cs->drv->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cs->ctx) {
        log_failure_once("context not current", CUDA_ERROR_INVALID_CONTEXT);
        return NULL;
    }
    uint64_t t0 = now_ns();
    if (!rp__private_stream(cs)) {
        log_failure_once("private stream creation", CUDA_ERROR_OUT_OF_MEMORY);
        return NULL;
    }
    if (cs->win.open) {
        /* An earlier window the driver would not close: try again now. */
        rp__lc_abort(&cs->win);
        if (cs->win.open) {
            log_failure_once("closing an earlier capture", CUDA_ERROR_ILLEGAL_STATE);
            return NULL;
        }
    }
    rp_seq *s = rp__calloc(1, sizeof *s);
    size_t *stage_of = rp__calloc(e->n, sizeof *stage_of);
    size_t *sizes = rp__calloc(e->n, sizeof *sizes);
    if (!s || !stage_of || !sizes) {
        free(s);
        free(stage_of);
        free(sizes);
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        return NULL;
    }
    s->ctx = cs->ctx;
    s->cs = cs;
    s->det = e;
    s->home = home;
    for (size_t i = 0; i < e->n; i++)
        s->fj.multi |= e->ops[i].stream != home || rp__op_is_event(e->ops[i].kind);
    fj_plan fp;
    memset(&fp, 0, sizeof fp);
    int planned = s->fj.multi ? plan(s, e, &fp) : 0;
    /* Every sequence notes its ops' nodes, volatile or not: a later shape
     * that takes its executable over needs them to update nodes. */
    s->ex.nodes = rp__calloc(e->n, sizeof *s->ex.nodes);
    if (!s->ex.nodes || planned || (vmask && volatile_setup(s, e, vmask) != 0)) {
        free(stage_of);
        free(sizes);
        plan_free(&fp);
        rp__seq_destroy(s);
        rp__bound_hit(cs, planned > 0 ? RP_BOUND_FORK_JOIN : RP_BOUND_MEMORY);
        return NULL;
    }
    size_t nstage = 0;
    for (size_t i = 0; i < e->n; i++) {
        stage_of[i] = SIZE_MAX;
        if (rp__op_staged(&e->ops[i])) {
            stage_of[i] = nstage;
            sizes[nstage++] = e->ops[i].bytes;
        }
    }
    /* The event that tells when a launch has finished reading its staging
     * is created before the window: nothing is allocated inside it. */
    CUresult rc = CUDA_SUCCESS;
    if (nstage)
        rc = cs->drv->cuEventCreate(&s->done, CU_EVENT_DISABLE_TIMING);
    if (rc == CUDA_SUCCESS && s->fj.multi)
        rc = fj_prepare(cs, s, fp.nev);
    if (rc == CUDA_SUCCESS)
        rc = rp__lc_prepare(&cs->win, sizes, nstage);
    free(sizes);
    if (rc != CUDA_SUCCESS) {
        log_failure_once("prepare", rc);
        s->stage_of = stage_of;
        plan_free(&fp);
        rp__seq_destroy(s);
        return NULL;
    }
    /* Staging starts with the bytes of the occurrence being captured. */
    for (size_t i = 0; i < e->n; i++)
        if (stage_of[i] != SIZE_MAX && e->ops[i].data)
            memcpy(cs->win.staging[stage_of[i]].ptr, e->ops[i].data, e->ops[i].bytes);

    /* Relaxed: the window makes no unsafe call, and in relaxed mode a window
     * the driver would not let us close cannot make the program's own
     * allocations fail. */
    rc = rp__lc_begin(&cs->win, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (rc == CUDA_SUCCESS) {
        /* A side stream that did not join the capture would run its ops
         * for real: if the fork fails, nothing is issued. */
        CUresult frc = s->fj.multi ? fj_fork(cs, s) : CUDA_SUCCESS;
        rp__lc_note_issued(&cs->win, frc);
        for (size_t i = 0; i < e->n && frc == CUDA_SUCCESS; i++) {
            const void *staged = stage_of[i] != SIZE_MAX ? cs->win.staging[stage_of[i]].ptr : NULL;
            CUstream on = window_stream(cs, &fp, i);
            if (rp__op_is_event(e->ops[i].kind)) { /* no node */
                rp__lc_note_issued(&cs->win, fj_event_op(cs, &e->ops[i], on, fp.evx[i]));
                continue;
            }
            CUresult irc = rp__rec_issue(cs, &e->ops[i], on, staged);
            if (irc == CUDA_SUCCESS && s->ex.nodes && node_of_last(cs, on, &s->ex.nodes[i]) != CUDA_SUCCESS) {
                /* A sequence that updates nodes cannot do without them;
                 * one that does not only loses them. */
                if (s->vmask)
                    irc = CUDA_ERROR_NOT_SUPPORTED;
                free(s->ex.nodes);
                s->ex.nodes = NULL;
            }
            rp__lc_note_issued(&cs->win, irc);
        }
        if (s->fj.multi && frc == CUDA_SUCCESS)
            rp__lc_note_issued(&cs->win, fj_join(cs, s));
        rc = rp__lc_end(&cs->win, &s->sealed);
    }
    plan_free(&fp);
    s->stage_of = stage_of;
    uint64_t t1 = now_ns();
    cs->counters.capture_ns += t1 - t0;
    if (rc != CUDA_SUCCESS) {
        rp__lc_abort(&cs->win);
        log_failure_once("capture", rc);
        rp__seq_destroy(s);
        return NULL;
    }
    rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    /* A sequence that updates nodes can take over only an executable whose
     * node handles are known. */
    if (reuse && reuse->exec && !reuse->fj.multi && !s->fj.multi && (reuse->ex.nodes || !s->vmask)) {
        /* The shape changed for good: an update of the old executable is
         * cheaper than a new one, where the driver accepts it. */
        CUgraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        rc = cs->drv->cuGraphExecUpdate_v2(reuse->exec, s->sealed.graph, &info);
        if (rc == CUDA_SUCCESS) {
            take_over(s, reuse);
            cs->counters.exec_updates++;
        } else {
            cs->counters.exec_update_refused++;
        }
    }
    if (rc != CUDA_SUCCESS) {
        rc = cs->drv->cuGraphInstantiateWithFlags(&s->exec, s->sealed.graph, 0);
        if (rc == CUDA_SUCCESS)
            cs->counters.instantiates++;
    }
    if (rc != CUDA_SUCCESS)
        s->exec = NULL;
    else
        /* Upload now, on the private stream, so the first replay does not
         * pay for it on the program's stream. */
        rc = cs->drv->cuGraphUpload(s->exec, cs->priv);
    cs->counters.instantiate_ns += now_ns() - t1;
    if (rc != CUDA_SUCCESS) {
        log_failure_once(s->exec ? "upload" : "instantiate", rc);
        rp__seq_destroy(s);
        return NULL;
    }
    count_nodes(cs, s->sealed.graph);
    if (s->fj.nside)
        cs->counters.fork_joins++;
    for (size_t i = 0; i < s->sealed.nstaging; i++) {
        cs->counters.staging_bytes += s->sealed.staging[i].bytes;
        cs->counters.staging_live_bytes += s->sealed.staging[i].bytes;
    }
    s->det = e;
    s->ctx = cs->ctx;
    s->id = e->id;
    /* For the matcher (its fast path, masked comparisons) and node
     * updates: no look-up per op. Layouts live until the context's
     * teardown, which drops every sequence first. */
    s->lay = rp__calloc(e->n, sizeof *s->lay);
    for (size_t i = 0; s->lay && i < e->n; i++)
        s->lay[i] = rp__rec_layout(cs, &e->ops[i]);
    fast_setup(s, e);
    if (s->vmask && s->lay && (s->match.poff = rp__malloc(e->n * sizeof *s->match.poff))) {
        for (size_t i = 0; i < e->n; i++) {
            s->match.poff[i] = (uint32_t)s->match.ptotal;
            s->match.ptotal += RP_ARENA_GEOMETRY + ((e->ops[i].param_bytes + 7u) & ~(size_t)7);
        }
    }
    return s;
}
