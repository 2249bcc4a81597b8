/* lifecycle.h - the capture lifecycle (DESIGN.md §4): the states a capture
 * window moves through and the rules it obeys, one function per transition
 * and per rule. A window re-issues recorded ops on a private stream under
 * stream capture; this module owns its state, its staging and its sealed
 * graph, and calls the driver only through the rp_lc_driver seam, so unit
 * tests hand it fakes. Not thread-safe by itself: the engine serialises
 * calls on one context (it holds the context's lock). */
#ifndef REPRISE_LIFECYCLE_H
#define REPRISE_LIFECYCLE_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL
#endif
#include <cuda.h>
#include <pthread.h>
#include <stddef.h>

typedef enum rp_lc_state {
    RP_LC_NO_CAPTURE = 0,
    RP_LC_PREPARE,
    RP_LC_CAPTURE,
} rp_lc_state;

/* The driver calls a window makes; filled from the real-entry table. */
typedef struct rp_lc_driver {
    CUresult (*begin_capture)(CUstream s, CUstreamCaptureMode mode);
    CUresult (*end_capture)(CUstream s, CUgraph *graph);
    CUresult (*graph_destroy)(CUgraph g);
    CUresult (*graph_get_nodes)(CUgraph g, CUgraphNode *nodes, size_t *n);
    CUresult (*node_get_type)(CUgraphNode n, CUgraphNodeType *type);
    CUresult (*host_alloc)(void **p, size_t bytes, unsigned int flags);
    CUresult (*host_free)(void *p);
    CUresult (*event_query)(CUevent e);
    CUresult (*event_destroy)(CUevent e);
} rp_lc_driver;

/* Pinned memory a recorded host-to-device copy reads from. */
typedef struct rp_staging {
    void *ptr;
    size_t bytes;
} rp_staging;

/* A pinned block no graph owns any more, kept for the next prepare: freeing
 * pinned memory may wait for the whole device (the CPU driver's
 * cuMemFreeHost does; the real one "may"), and the device may be held by a
 * wait the host releases only later (cuStreamWaitValue32): a free could
 * hang the program. `busy`, when set, was recorded after the last launch
 * that reads the block: the block is reused only once it is complete (asked,
 * never waited for). */
typedef struct rp_lc_pooled {
    void *ptr;
    size_t bytes;
    CUevent busy;
} rp_lc_pooled;

/* Per-context lifecycle state: how many windows of the context record now,
 * and the pool of pinned blocks no graph owns. */
typedef struct rp_lc_ctx {
    const rp_lc_driver *drv;
    unsigned int recording;
    rp_lc_pooled *pool;
    size_t npool, cappool;
    size_t pool_bytes;
    unsigned long long leaked; /* blocks that could not even be pooled */
} rp_lc_ctx;

/* A sealed graph and the staging it reads: they live and die together. */
typedef struct rp_lc_sealed {
    CUgraph graph;
    rp_staging *staging;
    size_t nstaging;
} rp_lc_sealed;

typedef struct rp_lc_window {
    rp_lc_ctx *ctx;
    CUstream stream;          /* the private capture stream */
    rp_lc_state state;
    int open;                 /* the driver's capture is open */
    pthread_t owner;          /* the thread that began the capture */
    CUresult failure;         /* first failure inside the window */
    size_t issued;            /* ops issued into the open window */
    rp_staging *staging;      /* armed by prepare */
    size_t nstaging;
} rp_lc_window;

void rp__lc_ctx_init(rp_lc_ctx *c, const rp_lc_driver *drv);
void rp__lc_window_init(rp_lc_window *w, rp_lc_ctx *c, CUstream stream);

CUresult rp__lc_prepare(rp_lc_window *w, const size_t *stage_bytes, size_t n);
CUresult rp__lc_begin(rp_lc_window *w, CUstreamCaptureMode mode);
void rp__lc_note_issued(rp_lc_window *w, CUresult rc);
CUresult rp__lc_end(rp_lc_window *w, rp_lc_sealed *out);
void rp__lc_abort(rp_lc_window *w);
CUresult rp__lc_check_no_memory_nodes(const rp_lc_driver *drv, CUgraph g);
void rp__lc_sealed_release(rp_lc_ctx *c, rp_lc_sealed *s);
void rp__lc_sealed_release_after(rp_lc_ctx *c, rp_lc_sealed *s, CUevent done);
size_t rp__lc_new_bytes(rp_lc_ctx *c, const size_t *stage_bytes, size_t n);
void rp__lc_trim(rp_lc_ctx *c);
void rp__lc_ctx_fini(rp_lc_ctx *c);

#endif
