/* capture.c - turns a segment seen often enough into an executable graph:
 * re-issues its recorded ops on the context's private non-blocking stream
 * inside a capture window (lifecycle.c), seals and checks the graph, and
 * instantiates it (another executable of a sequence choosing among them
 * too: rp__exec_alt, with the record of the values it holds). The
 * program's own calls are never inside the window: the engine lock is
 * held throughout, and the calls that could invalidate a capture from
 * another thread (cuCtxSynchronize) wait on the capture gate.
 * Any failure leaves the program's work untouched (it already ran eagerly)
 * and only costs a back-off. */
#include "seq.h"

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

CUgraphExec rp__exec_alt(rp_seq *s, rp_op **held)
{
    rp_ctxstate *cs = s->cs;
    CUgraphExec x = NULL;
    /* Instantiated in the sequence's context, as its first executable was
     * (rp__capture): a replay resolved from a thread where another context
     * is current makes none. */
    CUcontext cur = NULL;
    *held = NULL;
    if (rp__eng.drv->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cs->ctx)
        return NULL;
    uint64_t t0 = now_ns();
    *held = held_values(s->det);
    if (!*held)
        return NULL;
    CUresult rc = rp__eng.drv->cuGraphInstantiateWithFlags(&x, s->sealed.graph, 0);
    if (rc == CUDA_SUCCESS) {
        cs->counters.instantiates++;
        rc = rp__eng.drv->cuGraphUpload(x, cs->priv);
        if (rc != CUDA_SUCCESS) {
            rp__eng.drv->cuGraphExecDestroy(x);
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

void rp__seq_destroy(rp_seq *s)
{
    if (!s)
        return;
    rp_ctxstate *cs = s->cs;
    const struct rp__driver *D = rp__eng.drv;
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
    rp__ver_free(s);
    free(s->ex.vols);
    free(s->fj.hwait);
    free(s->fj.hwait_ev);
    free(s->lay);
    free(s->match.block); /* the matcher's images, one allocation (match/fast.c) */
    free(s->ex.nodes);
    free(s->vmask);
    free(s->stage_of);
    free(s);
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
    if (!s->vmask || !s->ex.nodes || !s->ex.held || rp__ver_init(s) != 0)
        return -1;
    memcpy(s->vmask, vmask, e->n * sizeof *s->vmask);
    return 0;
}

/* The node the op just issued into the window on `stream` became: the
 * stream's only dependency in the capture. */
static CUresult node_of_last(CUstream stream, CUgraphNode *out)
{
    CUstreamCaptureStatus st;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    CUresult rc = rp__eng.drv->cuStreamGetCaptureInfo_v2(stream, &st, NULL, NULL, &deps, &ndeps);
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

CUstream rp__private_stream(rp_ctxstate *cs)
{
    if (!cs->priv && rp__eng.drv->cuStreamCreate(&cs->priv, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        cs->priv = NULL;
    cs->win.stream = cs->priv;
    return cs->priv;
}

/* Count a sealed graph's nodes by type into the context's counters. */
static void count_nodes(rp_ctxstate *cs, CUgraph g)
{
    CUgraphNode nodes[256];
    size_t n = sizeof nodes / sizeof nodes[0];
    if (rp__eng.drv->cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS)
        return;
    if (n > sizeof nodes / sizeof nodes[0])
        n = sizeof nodes / sizeof nodes[0]; /* counted up to 256 nodes a graph */
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        if (rp__eng.drv->cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS)
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
        if (NEVER(e->ops[i].ctx != cs->ctx))
            return NULL; /* segments are per stream, streams per context */
    CUcontext cur = NULL;
    if (rp__eng.drv->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cs->ctx) {
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
    /* Before the window: a free another thread makes during the capture
     * counts as one since (contents.c, captured_memory_live). */
    s->ex.frees_at = rp__frees();
    for (size_t i = 0; i < e->n; i++)
        s->fj.multi |= e->ops[i].stream != home || rp__op_is_event(e->ops[i].kind);
    rp_fj_plan fp;
    memset(&fp, 0, sizeof fp);
    int planned = s->fj.multi ? rp__fj_plan(s, e, &fp) : 0;
    /* Every sequence notes its ops' nodes, volatile or not: a later shape
     * that takes its executable over needs them to update nodes. */
    s->ex.nodes = rp__calloc(e->n, sizeof *s->ex.nodes);
    if (!s->ex.nodes || planned || (vmask && volatile_setup(s, e, vmask) != 0)) {
        free(stage_of);
        free(sizes);
        rp__fj_plan_free(&fp);
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
        rc = rp__eng.drv->cuEventCreate(&s->done, CU_EVENT_DISABLE_TIMING);
    if (rc == CUDA_SUCCESS && s->fj.multi)
        rc = rp__fj_prepare(cs, s, fp.nev);
    if (rc == CUDA_SUCCESS)
        rc = rp__lc_prepare(&cs->win, sizes, nstage);
    free(sizes);
    if (rc != CUDA_SUCCESS) {
        log_failure_once("prepare", rc);
        s->stage_of = stage_of;
        rp__fj_plan_free(&fp);
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
        CUresult frc = s->fj.multi ? rp__fj_fork(cs, s) : CUDA_SUCCESS;
        rp__lc_note_issued(&cs->win, frc);
        for (size_t i = 0; i < e->n && frc == CUDA_SUCCESS; i++) {
            const void *staged = stage_of[i] != SIZE_MAX ? cs->win.staging[stage_of[i]].ptr : NULL;
            CUstream on = rp__fj_window_stream(cs, &fp, i);
            if (rp__op_is_event(e->ops[i].kind)) { /* no node, but a wait on an outside event */
                CUresult erc = rp__fj_event_op(cs, &e->ops[i], on, fp.evx[i]);
                if (erc == CUDA_SUCCESS && fp.evx[i] == RP_FJ_WAIT_NODE &&
                    (!s->ex.nodes || node_of_last(on, &s->ex.nodes[i]) != CUDA_SUCCESS))
                    erc = CUDA_ERROR_NOT_SUPPORTED; /* a node it could not set */
                rp__lc_note_issued(&cs->win, erc);
                continue;
            }
            CUresult irc = rp__rec_issue(cs, &e->ops[i], on, staged);
            if (irc == CUDA_SUCCESS && s->ex.nodes && node_of_last(on, &s->ex.nodes[i]) != CUDA_SUCCESS) {
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
            rp__lc_note_issued(&cs->win, rp__fj_join(cs, s));
        rc = rp__lc_end(&cs->win, &s->sealed);
    }
    rp__fj_plan_free(&fp);
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
    /* An executable that had nodes disabled for a part has them all
     * enabled again first: what an update does to them is not said. */
    if (reuse && reuse->exec && !reuse->fj.multi && !s->fj.multi && (reuse->ex.nodes || !s->vmask) &&
        rp__exec_range(reuse, 0, reuse->det->n) == CUDA_SUCCESS) {
        /* The shape changed for good: an update of the old executable is
         * cheaper than a new one, where the driver accepts it. */
        CUgraphExecUpdateResultInfo info;
        memset(&info, 0, sizeof info);
        rc = rp__eng.drv->cuGraphExecUpdate_v2(reuse->exec, s->sealed.graph, &info);
        if (rc == CUDA_SUCCESS) {
            take_over(s, reuse);
            cs->counters.exec_updates++;
        } else {
            cs->counters.exec_update_refused++;
        }
    }
    if (rc != CUDA_SUCCESS) {
        rc = rp__eng.drv->cuGraphInstantiateWithFlags(&s->exec, s->sealed.graph, 0);
        if (rc == CUDA_SUCCESS)
            cs->counters.instantiates++;
    }
    if (rc != CUDA_SUCCESS)
        s->exec = NULL;
    else
        /* Upload now, on the private stream, so the first replay does not
         * pay for it on the program's stream. */
        rc = rp__eng.drv->cuGraphUpload(s->exec, cs->priv);
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
    /* For the matcher (its fast path, masked comparisons: the images it
     * makes of the ops once it first meets the sequence) and node updates:
     * no look-up per op. Layouts live until the context's teardown, which
     * drops every sequence first. */
    s->lay = rp__calloc(e->n, sizeof *s->lay);
    for (size_t i = 0; s->lay && i < e->n; i++)
        s->lay[i] = rp__rec_layout(cs, &e->ops[i]);
    return s;
}
