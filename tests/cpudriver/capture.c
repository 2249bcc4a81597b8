/* capture.c - stream capture, strictly: begin/end, cross-stream capture
 * through events, the capture modes' unsafe-call rule, and every misuse that
 * invalidates a capture (sync/query of a capturing stream, legacy-stream use,
 * context sync, isolation). A captured op becomes a graph node whose
 * dependencies are the capturing stream's current dependency set. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __thread CUstreamCaptureMode tl_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

void cc__capture_invalidate(cc_capture *cap, const char *why)
{
    if (cap->invalid) return;
    cap->invalid = true;
    cc__count(CC_C_CAPTURE_INVALIDATED);
    cc__log("capture %llu invalidated: %s", cap->id, why);
}

bool cc__capture_live(cc_capture *cap, unsigned long long id)
{
    for (cc_capture *c = cc__g.captures; c; c = c->next)
        if (c == cap && c->id == id) return true;
    return false;
}

/* Replaces s's dependency set. OUT_OF_MEMORY leaves it unchanged. */
static CUresult set_deps(cc_stream *s, cc_node *const *n, size_t k)
{
    if (k > s->capdeps) {
        cc_node **nd = realloc(s->cap_deps, k * sizeof *nd);
        if (!nd) return CUDA_ERROR_OUT_OF_MEMORY;
        s->cap_deps = nd;
        s->capdeps = k;
    }
    if (k) memmove(s->cap_deps, n, k * sizeof *n);
    s->ndeps = k;
    return CUDA_SUCCESS;
}

CUresult cc__capture_add(cc_stream *s, cc_work *w, bool *captured, cc_node **out)
{
    *captured = s->cap != NULL;
    if (!s->cap) return CUDA_SUCCESS;
    if (s->cap->invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    cc_node *n;
    CUresult r = cc__graph_add(s->cap->g, w, s->cap_deps, s->ndeps, &n);
    if (r) return r;
    r = set_deps(s, &n, 1);
    if (out) *out = n;
    return r;
}

CUresult cc__capture_forbid(cc_stream *s)
{
    if (!s->cap) return CUDA_SUCCESS;
    cc__capture_invalidate(s->cap, "synchronize or query of a capturing stream");
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult cc__capture_ctx_sync(cc_ctx *c)
{
    CUresult r = CUDA_SUCCESS;
    for (cc_capture *cap = cc__g.captures; cap; cap = cap->next)
        if (cap->ctx == c) {
            cc__capture_invalidate(cap, "context synchronize during capture");
            r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    return r;
}

/* The modes' rule for potentially unsafe calls (allocation, free):
 * forbidden when this thread's mode is not RELAXED and it has a capture of
 * its own not begun RELAXED, or when its mode is GLOBAL and another thread
 * runs a GLOBAL capture. The captures that forbid it are invalidated. */
CUresult cc__capture_unsafe_call(void)
{
    if (tl_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    pthread_t me = pthread_self();
    for (cc_capture *cap = cc__g.captures; cap; cap = cap->next) {
        if (cap->mode == CU_STREAM_CAPTURE_MODE_RELAXED) continue;
        bool mine = pthread_equal(cap->thread, me);
        if (mine || (tl_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && cap->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            cc__capture_invalidate(cap, "potentially unsafe call (allocation/free) during capture");
            r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return r;
}

CUresult cc__capture_event_record(cc_stream *s, cc_event *e, unsigned flags, bool *handled)
{
    *handled = true;
    if (s->cap->invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (flags & CU_EVENT_RECORD_EXTERNAL) {
        cc_work w = {.kind = CC_W_EVENT_RECORD, .ctx = s->ctx};
        w.u.e.ev = e;
        cc__event_ref(e);
        bool cap;
        CUresult r = cc__capture_add(s, &w, &cap, NULL);
        if (r) {
            cc__work_free(&w);
            return r;
        }
    }
    cc_node **copy = s->ndeps ? malloc(s->ndeps * sizeof *copy) : NULL;
    if (s->ndeps && !copy) return CUDA_ERROR_OUT_OF_MEMORY;
    if (s->ndeps) memcpy(copy, s->cap_deps, s->ndeps * sizeof *copy);
    free(e->cap_nodes);
    e->cap_nodes = copy;
    e->ncap = s->ndeps;
    e->cap = s->cap;
    e->cap_id = s->cap->id;
    return CUDA_SUCCESS;
}

CUresult cc__capture_event_wait(cc_stream *s, cc_event *e, unsigned flags, bool *handled)
{
    bool e_live = e->cap && cc__capture_live(e->cap, e->cap_id);
    *handled = false;
    if (s->cap) {
        *handled = true;
        if (s->cap->invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        if (flags & CU_EVENT_WAIT_EXTERNAL) {
            cc_work w = {.kind = CC_W_WAIT_EVENT, .ctx = s->ctx};
            w.u.e.ev = e;
            cc__event_ref(e);
            bool cap;
            CUresult r = cc__capture_add(s, &w, &cap, NULL);
            if (r) cc__work_free(&w);
            return r;
        }
        if (e_live && e->cap == s->cap) {
            /* Join: the union of both dependency sets. */
            size_t n = s->ndeps;
            cc_node **u = malloc((n + e->ncap + 1) * sizeof *u);
            if (!u) return CUDA_ERROR_OUT_OF_MEMORY;
            if (n) memcpy(u, s->cap_deps, n * sizeof *u);
            for (size_t i = 0; i < e->ncap; i++) {
                bool dup = false;
                for (size_t j = 0; j < n && !dup; j++) dup = u[j] == e->cap_nodes[i];
                if (!dup) u[n++] = e->cap_nodes[i];
            }
            CUresult r = set_deps(s, u, n);
            free(u);
            return r;
        }
        if (e_live) {
            cc__capture_invalidate(s->cap, "wait would merge two captures");
            return CUDA_ERROR_STREAM_CAPTURE_MERGE;
        }
        cc__capture_invalidate(s->cap, "wait on an event from outside the capture");
        return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
    if (!e_live) return CUDA_SUCCESS;
    *handled = true;
    if (e->cap->invalid) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (s->kind == CC_S_LEGACY) {
        cc__capture_invalidate(e->cap, "the legacy stream cannot join a capture");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->ctx != e->cap->ctx) {
        cc__capture_invalidate(e->cap, "a stream of another context cannot join");
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    /* Fork: s joins the capture, depending on what the event saw. */
    CUresult r = set_deps(s, e->cap_nodes, e->ncap);
    if (!r) s->cap = e->cap;
    return r;
}

/* ---- entry points -------------------------------------------------------- */

static CUresult begin(CUstream hs, bool pt, CUstreamCaptureMode mode)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(hs, pt, &s);
    if (!r && s->kind == CC_S_LEGACY) r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (!r && s->cap) r = CUDA_ERROR_ILLEGAL_STATE;
    cc_capture *cap = NULL;
    if (!r) {
        cap = calloc(1, sizeof *cap);
        if (!cap || cc__graph_new(&cap->g)) {
            free(cap);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (!r) {
        cap->id = cc__g.next_id++;
        cap->mode = mode;
        cap->thread = pthread_self();
        cap->origin = s;
        cap->ctx = s->ctx;
        cap->next = cc__g.captures;
        cc__g.captures = cap;
        s->cap = cap;
        s->ndeps = 0;
        cc__count(CC_C_CAPTURE_BEGUN);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamBeginCapture(CUstream hStream)
{
    CC_ENTER(cuStreamBeginCapture);
    return begin(hStream, false, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CC_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    CC_ENTER(cuStreamBeginCapture_ptsz);
    return begin(hStream, true, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    CC_ENTER(cuStreamBeginCapture_v2);
    return begin(hStream, false, mode);
}

CC_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    CC_ENTER(cuStreamBeginCapture_v2_ptsz);
    return begin(hStream, true, mode);
}

/* Every node that origin's dependency set depends on must include every
 * other participating stream's last nodes, or those streams are unjoined. */
static bool all_joined(cc_capture *cap)
{
    cc_graph *g = cap->g;
    bool *seen = calloc(g->n ? g->n : 1, sizeof *seen);
    cc_node **stack = malloc((g->n ? g->n : 1) * sizeof *stack);
    bool ok = seen && stack;
    size_t sp = 0;
    for (size_t i = 0; ok && i < cap->origin->ndeps; i++) {
        cc_node *n = cap->origin->cap_deps[i];
        if (!seen[n->idx]) { seen[n->idx] = true; stack[sp++] = n; }
    }
    while (ok && sp) {
        cc_node *n = stack[--sp];
        for (size_t i = 0; i < n->ndeps; i++)
            if (!seen[n->deps[i]->idx]) { seen[n->deps[i]->idx] = true; stack[sp++] = n->deps[i]; }
    }
    for (cc_stream *s = cap->ctx->streams; ok && s; s = s->next_in_ctx)
        if (s->cap == cap && s != cap->origin)
            for (size_t i = 0; i < s->ndeps; i++)
                if (!seen[s->cap_deps[i]->idx]) ok = false;
    free(seen);
    free(stack);
    return ok;
}

/* Ends the capture: every participating stream stops capturing and the
 * capture object goes away. Returns the graph, or NULL (destroyed). */
static cc_graph *finish(cc_capture *cap, bool keep)
{
    for (cc_stream *s = cap->ctx->streams; s; s = s->next_in_ctx)
        if (s->cap == cap) {
            s->cap = NULL;
            s->ndeps = 0;
        }
    for (cc_capture **pp = &cc__g.captures; *pp; pp = &(*pp)->next)
        if (*pp == cap) { *pp = cap->next; break; }
    cc_graph *g = cap->g;
    free(cap);
    if (keep) return g;
    cc__graph_free(g);
    return NULL;
}

static CUresult end(CUstream hs, bool pt, CUgraph *phGraph)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    /* A real driver's end builds the graph, which takes time for a large
     * one: CPUCUDA_END_CAPTURE_US makes every end take that long, while
     * other threads' calls go on (set at load, before any thread). */
    if (cc__g.end_capture_us) usleep(cc__g.end_capture_us);
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(hs, pt, &s);
    cc_capture *cap = r ? NULL : s->cap;
    if (!r && !cap) r = CUDA_ERROR_ILLEGAL_STATE;
    if (!r && cap->origin != s) {
        cc__capture_invalidate(cap, "ended on a stream that did not begin it");
        r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (!r && cap->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(cap->thread, pthread_self()))
        r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    if (!r) {
        if (cap->invalid) {
            finish(cap, false);
            *phGraph = NULL;
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else if (!all_joined(cap)) {
            cc__capture_invalidate(cap, "a forked stream was not joined");
            finish(cap, false);
            *phGraph = NULL;
            r = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
        } else {
            cc_graph *g = finish(cap, true);
            cc__handle_add(g, CC_K_GRAPH);
            *phGraph = (CUgraph)g;
            cc__count(CC_C_CAPTURE_ENDED);
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    CC_ENTER(cuStreamEndCapture);
    return end(hStream, false, phGraph);
}

CC_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    CC_ENTER(cuStreamEndCapture_ptsz);
    return end(hStream, true, phGraph);
}

/* Status of s; 906 when asking the legacy stream while a blocking stream
 * captures (the question itself is an implicit-sync use). */
static CUresult status_of(CUstream hs, bool pt, CUstreamCaptureStatus *st, cc_stream **out)
{
    CUresult r = cc__stream_get(hs, pt, out);
    if (r) return r;
    cc_stream *s = *out;
    if (s->kind == CC_S_LEGACY)
        for (cc_stream *b = s->ctx->streams; b; b = b->next_in_ctx)
            if (b->cap && cc__stream_blocking(b)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    *st = !s->cap ? CU_STREAM_CAPTURE_STATUS_NONE
          : s->cap->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

static CUresult is_capturing(CUstream hs, bool pt, CUstreamCaptureStatus *st)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_stream *s;
    r = status_of(hs, pt, st, &s);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    CC_ENTER(cuStreamIsCapturing);
    return is_capturing(hStream, false, captureStatus);
}

CC_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    CC_ENTER(cuStreamIsCapturing_ptsz);
    return is_capturing(hStream, true, captureStatus);
}

/* The dependency array handed out stays valid until the next call that
 * changes the stream's capture state, as documented for the real driver. */
static CUresult capture_info(CUstream hs, bool pt, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_stream *s;
    r = status_of(hs, pt, st, &s);
    if (!r) {
        bool active = *st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id && active) *id = s->cap->id;
        if (g) *g = active ? (CUgraph)s->cap->g : NULL;
        if (deps) *deps = active ? (const CUgraphNode *)s->cap_deps : NULL;
        if (edges) *edges = NULL; /* all edges are default edges */
        if (ndeps) *ndeps = active ? s->ndeps : 0;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                          cuuint64_t *id_out)
{
    CC_ENTER(cuStreamGetCaptureInfo);
    return capture_info(hStream, false, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CC_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out)
{
    CC_ENTER(cuStreamGetCaptureInfo_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CC_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out, CUgraph *graph_out,
                                             const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
    CC_ENTER(cuStreamGetCaptureInfo_v2);
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                        numDependencies_out);
}

CC_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  size_t *numDependencies_out)
{
    CC_ENTER(cuStreamGetCaptureInfo_v2_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                        numDependencies_out);
}

CC_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out, CUgraph *graph_out,
                                             const CUgraphNode **dependencies_out,
                                             const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    CC_ENTER(cuStreamGetCaptureInfo_v3);
    return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}

CC_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  const CUgraphEdgeData **edgeData_out,
                                                  size_t *numDependencies_out)
{
    CC_ENTER(cuStreamGetCaptureInfo_v3_ptsz);
    return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out);
}

CC_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CC_ENTER(cuThreadExchangeStreamCaptureMode);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode m = *mode;
    if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        m != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = tl_mode;
    tl_mode = m;
    return CUDA_SUCCESS;
}
