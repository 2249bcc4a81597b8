/* lifecycle.c - the capture lifecycle rules of DESIGN.md §4, one function per
 * transition and per rule. The state of a window moves only
 * NoCapture -> Prepare -> Capture -> NoCapture; every rejected transition
 * returns CUDA_ERROR_ILLEGAL_STATE and changes nothing. */
#include "lifecycle.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

void rp__lc_ctx_init(rp_lc_ctx *c, const rp_lc_driver *drv)
{
    memset(c, 0, sizeof *c);
    c->drv = drv;
}

void rp__lc_window_init(rp_lc_window *w, rp_lc_ctx *c, CUstream stream)
{
    memset(w, 0, sizeof *w);
    w->ctx = c;
    w->stream = stream;
    w->state = RP_LC_NO_CAPTURE;
    w->failure = CUDA_SUCCESS;
}

/* The pool's blocks whose `busy` event is `e` are free to reuse now: the
 * event goes (the pool owned it). */
static void pool_unbusy(rp_lc_ctx *c, CUevent e)
{
    for (size_t i = 0; i < c->npool; i++)
        if (c->pool[i].busy == e)
            c->pool[i].busy = NULL;
    c->drv->event_destroy(e);
}

/* Whether pooled block i may be reused (or freed) now: not busy, or its
 * event complete. Asks the driver, never waits. */
static int pool_ready(rp_lc_ctx *c, size_t i)
{
    CUevent e = c->pool[i].busy;
    if (!e)
        return 1;
    CUresult rc = c->drv->event_query(e);
    if (rc == CUDA_ERROR_NOT_READY)
        return 0;
    /* Complete, or an error: an error of the event (a sticky context error,
     * a destroyed context) means no launch reads the block any more. */
    pool_unbusy(c, e);
    return 1;
}

/* Rule: releasing staging makes no driver call that could wait: the block
 * goes to the context's pool (busy until `busy` completes, when given), for
 * a later prepare, and is freed only by rp__lc_trim. If the pool cannot
 * grow, the block is leaked and counted rather than freed at a bad moment. */
static void staging_free_block(rp_lc_ctx *c, void *p, size_t bytes, CUevent busy)
{
    if (!p)
        return;
    if (c->npool == c->cappool) {
        size_t cap = c->cappool ? 2 * c->cappool : 16;
        rp_lc_pooled *d = rp__realloc(c->pool, cap * sizeof *d);
        if (!d) {
            c->leaked++;
            return;
        }
        c->pool = d;
        c->cappool = cap;
    }
    c->pool[c->npool++] = (rp_lc_pooled){p, bytes, busy};
    c->pool_bytes += bytes;
}

/* Release staging blocks `st[0..n)` to the pool (busy until `busy`, which
 * the pool then owns; NULL: free to reuse at once). */
static void staging_release(rp_lc_ctx *c, rp_staging *st, size_t n, CUevent busy)
{
    int pooled = 0;
    for (size_t i = 0; i < n; i++) {
        size_t before = c->npool;
        staging_free_block(c, st[i].ptr, st[i].bytes, busy);
        pooled |= c->npool != before;
    }
    if (busy && !pooled)
        c->drv->event_destroy(busy);
    free(st);
}

/* The pooled block to reuse for `bytes`: the smallest ready one that holds
 * them and is at most twice as large (a larger one would waste pinned
 * memory a bigger copy could use), or SIZE_MAX. */
static size_t pool_fit(rp_lc_ctx *c, size_t bytes)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < c->npool; i++) {
        size_t b = c->pool[i].bytes;
        if (b < bytes || b / 2 > bytes || (best != SIZE_MAX && b >= c->pool[best].bytes))
            continue;
        if (pool_ready(c, i))
            best = i;
    }
    return best;
}

/* Take pooled block i out of the pool. */
static void *pool_take(rp_lc_ctx *c, size_t i, size_t *bytes)
{
    void *p = c->pool[i].ptr;
    *bytes = c->pool[i].bytes;
    c->pool_bytes -= *bytes;
    c->pool[i] = c->pool[--c->npool];
    return p;
}

/* How many bytes of new pinned memory a prepare for these copies would
 * allocate, the pool's ready blocks used first (the engine's staging bound
 * counts the pool too: live + pooled + new). */
size_t rp__lc_new_bytes(rp_lc_ctx *c, const size_t *stage_bytes, size_t n)
{
    size_t total = 0;
    unsigned char *taken = c->npool ? rp__calloc(c->npool, 1) : NULL;
    for (size_t k = 0; k < n; k++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; taken && i < c->npool; i++) {
            size_t b = c->pool[i].bytes;
            if (taken[i] || b < stage_bytes[k] || b / 2 > stage_bytes[k] ||
                (best != SIZE_MAX && b >= c->pool[best].bytes))
                continue;
            if (pool_ready(c, i))
                best = i;
        }
        if (best != SIZE_MAX)
            taken[best] = 1;
        else
            total += stage_bytes[k];
    }
    free(taken);
    return total;
}

/* Free the pool's ready blocks (the engine calls it right after the
 * program's own context synchronize returned: the device has just been
 * idle, so a free that waits for it will not hang). Never while a window of
 * the context records: a free there could break the capture. */
void rp__lc_trim(rp_lc_ctx *c)
{
    if (c->recording > 0)
        return;
    for (size_t i = 0; i < c->npool;) {
        if (!pool_ready(c, i)) {
            i++;
            continue;
        }
        size_t bytes;
        void *p = pool_take(c, i, &bytes);
        c->drv->host_free(p);
    }
}

/* One fewer window records. */
static void recording_done(rp_lc_ctx *c)
{
    if (c->recording > 0)
        c->recording--;
}

/* Drops the staging a window armed (it never reached a graph). */
static void window_drop_staging(rp_lc_window *w)
{
    staging_release(w->ctx, w->staging, w->nstaging, NULL);
    w->staging = NULL;
    w->nstaging = 0;
}

/* Closes the driver's capture if it is open, whatever it answers, and
 * destroys any graph it hands back: an aborted or abandoned window leaves
 * nothing behind in the driver. */
static void window_close_driver(rp_lc_window *w)
{
    if (!w->open)
        return;
    CUgraph g = NULL;
    CUresult rc = w->ctx->drv->end_capture(w->stream, &g);
    if (g)
        w->ctx->drv->graph_destroy(g);
    /* Closed unless the driver refused the end (a wrong thread, or a
     * failure that left it open): then a later abort tries again. */
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_ILLEGAL_STATE ||
        rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        w->open = 0;
}

/* prepare (NoCapture -> Prepare): arms staging for every recorded copy now,
 * because nothing may be allocated once the window records. Fails with
 * CUDA_ERROR_ILLEGAL_STATE if this window is prepared or recording, or if
 * another window of the context records (no staging is allocated then);
 * with the driver's error if an allocation fails. On failure the window and
 * the context are unchanged (what was allocated is freed again). A new
 * capture starts from an empty recording: count, failure and staging reset. */
CUresult rp__lc_prepare(rp_lc_window *w, const size_t *stage_bytes, size_t n)
{
    if (w->state != RP_LC_NO_CAPTURE || w->open || w->ctx->recording > 0)
        return CUDA_ERROR_ILLEGAL_STATE;
    rp_staging *st = NULL;
    if (n) {
        st = rp__calloc(n, sizeof *st);
        if (!st)
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        if (stage_bytes[i] == 0)
            continue;
        size_t k = pool_fit(w->ctx, stage_bytes[i]);
        if (k != SIZE_MAX) {
            st[i].ptr = pool_take(w->ctx, k, &st[i].bytes);
            continue;
        }
        CUresult rc = w->ctx->drv->host_alloc(&st[i].ptr, stage_bytes[i], 0);
        if (rc != CUDA_SUCCESS) {
            st[i].ptr = NULL;
            staging_release(w->ctx, st, n, NULL); /* back to the pool */
            return rc;
        }
        st[i].bytes = stage_bytes[i];
    }
    window_drop_staging(w);
    w->staging = st;
    w->nstaging = n;
    w->issued = 0;
    w->failure = CUDA_SUCCESS;
    w->state = RP_LC_PREPARE;
    return CUDA_SUCCESS;
}

/* begin (Prepare -> Capture): the state moves before the driver's capture
 * opens, so that every path out of here (a failed open included) finds a
 * window to close. Fails with CUDA_ERROR_ILLEGAL_STATE unprepared or while
 * recording (nothing changes); if the driver refuses to open the capture the
 * window is aborted back to NoCapture and the driver's error returned. */
CUresult rp__lc_begin(rp_lc_window *w, CUstreamCaptureMode mode)
{
    if (w->state != RP_LC_PREPARE)
        return CUDA_ERROR_ILLEGAL_STATE;
    w->state = RP_LC_CAPTURE;
    w->owner = pthread_self();
    w->ctx->recording++;
    CUresult rc = w->ctx->drv->begin_capture(w->stream, mode);
    if (rc != CUDA_SUCCESS) {
        rp__lc_abort(w);
        w->failure = rc;
        return rc;
    }
    w->open = 1;
    return CUDA_SUCCESS;
}

/* Rule: a failure inside the window dooms it. The first failure is kept
 * (later ones are consequences of it); the window stays open so that end
 * still closes the driver's capture. Ignored outside Capture. */
void rp__lc_note_issued(rp_lc_window *w, CUresult rc)
{
    if (w->state != RP_LC_CAPTURE)
        return;
    w->issued++;
    if (rc != CUDA_SUCCESS && w->failure == CUDA_SUCCESS)
        w->failure = rc;
}

/* Rule: a sealed graph with memory alloc/free nodes is refused: a graph
 * holding an allocation could not be relaunched. Returns CUDA_SUCCESS when
 * the graph has none, CUDA_ERROR_NOT_SUPPORTED when it has one, or the
 * driver's error if the graph cannot be inspected (then it is refused too). */
CUresult rp__lc_check_no_memory_nodes(const rp_lc_driver *drv, CUgraph g)
{
    size_t n = 0;
    CUresult rc = drv->graph_get_nodes(g, NULL, &n);
    if (rc != CUDA_SUCCESS || n == 0)
        return rc;
    CUgraphNode *nodes = rp__calloc(n, sizeof *nodes);
    if (!nodes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    rc = drv->graph_get_nodes(g, nodes, &n);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
        CUgraphNodeType t;
        rc = drv->node_get_type(nodes[i], &t);
        if (rc == CUDA_SUCCESS &&
            (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC || t == CU_GRAPH_NODE_TYPE_MEM_FREE))
            rc = CUDA_ERROR_NOT_SUPPORTED;
    }
    free(nodes);
    return rc;
}

/* end (Capture -> NoCapture): the state moves before sealing, so the stream
 * never stays wedged in capture mode whatever the driver answers. Fails with
 * CUDA_ERROR_ILLEGAL_STATE when nothing records (nothing changes). A window
 * ended by a thread that does not own it is abandoned: its graph discarded,
 * CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD returned. A doomed window refuses
 * to seal and returns its first failure. A graph with memory nodes is
 * refused. On success *out holds the graph and the staging it reads, which
 * from now on live and die together (rp__lc_sealed_release). */
CUresult rp__lc_end(rp_lc_window *w, rp_lc_sealed *out)
{
    if (w->state != RP_LC_CAPTURE)
        return CUDA_ERROR_ILLEGAL_STATE;
    const rp_lc_driver *drv = w->ctx->drv;
    int own = pthread_equal(w->owner, pthread_self());
    w->state = RP_LC_NO_CAPTURE;

    CUgraph g = NULL;
    CUresult rc = drv->end_capture(w->stream, &g);
    int still_open = rc == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    if (rc != CUDA_SUCCESS && !still_open) {
        /* A failed end may have left the capture open; a stream left in
         * capture mode would break the program's next cuCtxSynchronize. One
         * more end closes it, or answers "not capturing" (it was closed).
         * If that fails too the window stays marked open, and the next
         * prepare refuses until an abort manages to close it. */
        CUgraph g2 = NULL;
        CUresult rc2 = drv->end_capture(w->stream, &g2);
        if (g2)
            drv->graph_destroy(g2);
        still_open = rc2 != CUDA_SUCCESS && rc2 != CUDA_ERROR_ILLEGAL_STATE &&
                     rc2 != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    w->open = still_open;
    recording_done(w->ctx);

    CUresult verdict = CUDA_SUCCESS;
    if (!own)
        verdict = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    else if (w->failure != CUDA_SUCCESS)
        verdict = w->failure;
    else if (rc != CUDA_SUCCESS)
        verdict = rc;
    else if (!g)
        verdict = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED; /* NEVER from a sane driver */
    else
        verdict = rp__lc_check_no_memory_nodes(drv, g);

    if (verdict != CUDA_SUCCESS) {
        if (g)
            drv->graph_destroy(g);
        window_drop_staging(w);
        if (w->failure == CUDA_SUCCESS)
            w->failure = verdict;
        w->issued = 0;
        return verdict;
    }
    out->graph = g;
    out->staging = w->staging;
    out->nstaging = w->nstaging;
    w->staging = NULL;
    w->nstaging = 0;
    w->issued = 0;
    return CUDA_SUCCESS;
}

/* abort: back to NoCapture from any state; asserts nothing. Closes the
 * driver's capture if it is open, drops armed staging, and leaves nothing of
 * the window for the next capture. */
void rp__lc_abort(rp_lc_window *w)
{
    window_close_driver(w);
    if (w->state == RP_LC_CAPTURE)
        recording_done(w->ctx);
    w->state = RP_LC_NO_CAPTURE;
    window_drop_staging(w);
    w->issued = 0;
}

/* Rule: the staging a recorded copy reads lives as long as its graph, and
 * as long as the last launch that reads it: the graph goes now, the staging
 * to the pool. rp__lc_sealed_release_after: that launch may still be
 * queued, and `done` (recorded after it; the pool owns it from now on) says
 * when it has read the staging. Neither waits. Safe on an empty record. */
void rp__lc_sealed_release_after(rp_lc_ctx *c, rp_lc_sealed *s, CUevent done)
{
    if (s->graph)
        c->drv->graph_destroy(s->graph);
    staging_release(c, s->staging, s->nstaging, done);
    memset(s, 0, sizeof *s);
}

void rp__lc_sealed_release(rp_lc_ctx *c, rp_lc_sealed *s)
{
    rp__lc_sealed_release_after(c, s, NULL);
}

/* Context teardown: no window of the context records any more; the pool's
 * ready blocks are freed (a teardown waits for the device anyway), busy
 * ones are left to the context's end (its pinned memory goes with it). */
void rp__lc_ctx_fini(rp_lc_ctx *c)
{
    c->recording = 0;
    rp__lc_trim(c);
    for (size_t i = 0; i < c->npool; i++)
        if (c->pool[i].busy)
            pool_unbusy(c, c->pool[i].busy);
    free(c->pool);
    c->pool = NULL;
    c->npool = c->cappool = c->pool_bytes = 0;
}
