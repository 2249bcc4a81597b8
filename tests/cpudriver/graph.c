/* graph.c - graphs (built by capture), their node getters, executable
 * graphs (instantiate, launch, upload, per-node updates, whole-graph
 * update). An executable owns deep copies of its nodes' work and their
 * dependencies (a plan); a launch runs them as one op on the launch
 * stream's worker, each node after its dependencies, in the order
 * CPUCUDA_GRAPH_ORDER chooses among the nodes that are ready, independent
 * ones on more than one thread; a queued launch keeps the plan it was
 * launched with. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cc_plan {
    int refs;              /* the executable's and each queued launch's */
    size_t n;
    cc_work *w;            /* in creation order, which is a topological order */
    /* Node i's dependencies are dep[dep_at[i] .. dep_at[i+1]), its
     * successors succ[succ_at[i] .. succ_at[i+1]) (indices into w). */
    size_t *dep_at, *dep, *succ_at, *succ;
    bool chain;            /* only one topological order: nothing to choose */
    bool *off;             /* per node: disabled (cuGraphNodeSetEnabled), run as an
                              empty node, with no device time */
};

/* Which allocation a memory operand of a memset or copy node lies in: its
 * kind and context (kind 0: no allocation, i.e. pageable host memory). An
 * update must keep it: "allocated from the same contexts as the original",
 * "the same kind of allocation ... the same context association" (driver
 * API, cuGraphExecMemcpyNodeSetParams / cuGraphExecMemsetNodeSetParams). */
typedef struct cc_opnd {
    int kind;
    cc_ctx *ctx;
} cc_opnd;

struct cc_exec {
    int refs;
    bool dead;
    unsigned long long flags;
    cc_ctx *ctx;
    size_t n;
    cc_plan *plan;         /* what the next launch runs */
    /* Which node of the graph it was *instantiated* from each one is: the
     * handles cuGraphExec*NodeSetParams accepts, also after
     * cuGraphExecUpdate (observed on an H200, driver 580.159.04). */
    unsigned long long *src;
    size_t **deps;         /* dependency indices, for update checks */
    size_t *ndeps;
    bool *freed_in_graph;  /* MEM_ALLOC nodes whose memory a MEM_FREE node frees */
    bool *alloc_in_graph;  /* MEM_FREE nodes of memory a MEM_ALLOC node allocates */
    cc_opnd *odst, *osrc;  /* memset/copy nodes' operands at instantiation */
    cc_stream *last;       /* the previous launch: the next is ordered after it */
    unsigned long long last_seq;
    size_t hint;           /* where exec_index found a node last */
};

CUresult cc__graph_new(cc_graph **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cc__graph_add(cc_graph *g, cc_work *w, cc_node *const *deps, size_t ndeps, cc_node **out)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 16;
        cc_node **nn = realloc(g->nodes, nc * sizeof *nn);
        if (!nn) return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nn;
        g->cap = nc;
    }
    cc_node *n = calloc(1, sizeof *n);
    cc_node **d = ndeps ? malloc(ndeps * sizeof *d) : NULL;
    if (!n || (ndeps && !d)) {
        free(n);
        free(d);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (ndeps) memcpy(d, deps, ndeps * sizeof *d);
    n->g = g;
    n->id = ++cc__g.next_id;
    n->idx = g->n;
    n->w = *w;
    memset(w, 0, sizeof *w);
    n->deps = d;
    n->ndeps = ndeps;
    g->nodes[g->n++] = n;
    cc__handle_add(n, CC_K_NODE);
    *out = n;
    return CUDA_SUCCESS;
}

void cc__graph_free(cc_graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        cc_node *n = g->nodes[i];
        cc__handle_del(n);
        cc__work_free(&n->w);
        free(n->deps);
        free(n);
    }
    cc__handle_del(g);
    free(g->nodes);
    free(g);
}

static cc_graph *graph_get(CUgraph h) { return cc__handle_is(h, CC_K_GRAPH) ? (cc_graph *)h : NULL; }
static cc_node *node_get(CUgraphNode h) { return cc__handle_is(h, CC_K_NODE) ? (cc_node *)h : NULL; }
static cc_exec *exec_get(CUgraphExec h)
{
    cc_exec *x = (cc_exec *)h;
    return cc__handle_is(x, CC_K_EXEC) && !x->dead ? x : NULL;
}

#define LOCKED_INIT()                          \
    CUresult r = cc__check_init();             \
    if (r) return r;                           \
    cc__lock()

CC_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    CC_ENTER(cuGraphCreate);
    if (!phGraph || flags) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_graph *g;
    r = cc__graph_new(&g);
    if (!r) {
        cc__handle_add(g, CC_K_GRAPH);
        *phGraph = (CUgraph)g;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
    CC_ENTER(cuGraphDestroy);
    LOCKED_INIT();
    cc_graph *g = graph_get(hGraph);
    if (!g) r = CUDA_ERROR_INVALID_VALUE;
    else cc__graph_free(g);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    CC_ENTER(cuGraphGetNodes);
    if (!numNodes) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_graph *g = graph_get(hGraph);
    if (!g) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if (nodes) {
        for (size_t i = 0; i < *numNodes; i++) nodes[i] = i < g->n ? (CUgraphNode)g->nodes[i] : NULL;
        if (*numNodes > g->n) *numNodes = g->n;
    } else {
        *numNodes = g->n;
    }
    cc__unlock();
    return r;
}

static CUgraphNodeType node_type(enum cc_work_kind k)
{
    switch (k) {
    case CC_W_KERNEL: return CU_GRAPH_NODE_TYPE_KERNEL;
    case CC_W_COPY: return CU_GRAPH_NODE_TYPE_MEMCPY;
    case CC_W_MEMSET: return CU_GRAPH_NODE_TYPE_MEMSET;
    case CC_W_HOST: return CU_GRAPH_NODE_TYPE_HOST;
    case CC_W_EVENT_RECORD: return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    case CC_W_WAIT_EVENT: return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    case CC_W_MEM_ALLOC: return CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    case CC_W_MEM_FREE: return CU_GRAPH_NODE_TYPE_MEM_FREE;
    default: return CU_GRAPH_NODE_TYPE_EMPTY;
    }
}

CC_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    CC_ENTER(cuGraphNodeGetType);
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_node *n = node_get(hNode);
    if (!n) r = CUDA_ERROR_INVALID_VALUE;
    else *type = node_type(n->w.kind);
    cc__unlock();
    return r;
}

static CUresult kernel_params(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_node *n = node_get(hNode);
    if (!n || n->w.kind != CC_W_KERNEL) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        const cc_work *w = &n->w;
        memset(p, 0, sizeof *p);
        p->func = w->u.k.kern ? (CUfunction)w->u.k.kern : (CUfunction)w->u.k.f;
        p->kern = (CUkernel)w->u.k.kern;
        p->ctx = (CUcontext)w->ctx;
        p->gridDimX = w->u.k.grid.x;
        p->gridDimY = w->u.k.grid.y;
        p->gridDimZ = w->u.k.grid.z;
        p->blockDimX = w->u.k.block.x;
        p->blockDimY = w->u.k.block.y;
        p->blockDimZ = w->u.k.block.z;
        p->sharedMemBytes = w->u.k.shmem;
        p->kernelParams = w->u.k.argv; /* points into the node's own copy */
        p->extra = NULL;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CC_ENTER(cuGraphKernelNodeGetParams);
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    CUresult r = kernel_params(hNode, &p);
    if (!r) memcpy(nodeParams, &p, sizeof *nodeParams); /* v1 is v2's prefix */
    return r;
}

CC_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    CC_ENTER(cuGraphKernelNodeGetParams_v2);
    return kernel_params(hNode, nodeParams);
}

CC_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *p)
{
    CC_ENTER(cuGraphMemcpyNodeGetParams);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_node *n = node_get(hNode);
    if (!n || n->w.kind != CC_W_COPY) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        memset(p, 0, sizeof *p);
        p->srcMemoryType = n->w.u.c.st;
        p->dstMemoryType = n->w.u.c.dt;
        if (n->w.u.c.st == CU_MEMORYTYPE_DEVICE) p->srcDevice = (CUdeviceptr)(uintptr_t)n->w.u.c.src;
        else p->srcHost = n->w.u.c.src;
        if (n->w.u.c.dt == CU_MEMORYTYPE_DEVICE) p->dstDevice = (CUdeviceptr)(uintptr_t)n->w.u.c.dst;
        else p->dstHost = n->w.u.c.dst;
        p->WidthInBytes = n->w.u.c.n;
        p->Height = 1;
        p->Depth = 1;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *p)
{
    CC_ENTER(cuGraphMemsetNodeGetParams);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_node *n = node_get(hNode);
    if (!n || n->w.kind != CC_W_MEMSET) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        p->dst = n->w.u.m.dst;
        p->pitch = n->w.u.m.pitch;
        p->value = n->w.u.m.value;
        p->elementSize = n->w.u.m.esz;
        p->width = n->w.u.m.w;
        p->height = n->w.u.m.h;
    }
    cc__unlock();
    return r;
}

/* ---- executable graphs --------------------------------------------------- */

void cc__plan_unref(cc_plan *p)
{
    if (--p->refs > 0) return;
    for (size_t i = 0; i < p->n; i++) cc__work_free(&p->w[i]);
    free(p->w);
    free(p->dep_at);
    free(p->dep);
    free(p->succ_at);
    free(p->succ);
    free(p->off);
    free(p);
}

/* Whether the plan's nodes have one topological order only: Kahn's
 * algorithm finds exactly one ready node at every step. */
static bool plan_is_chain(const cc_plan *p, size_t *left)
{
    size_t ready = SIZE_MAX, nready = 0;
    for (size_t i = 0; i < p->n; i++) {
        left[i] = p->dep_at[i + 1] - p->dep_at[i];
        if (!left[i]) {
            ready = i;
            nready++;
        }
    }
    for (size_t done = 0; done < p->n; done++) {
        if (nready != 1) return false;
        size_t i = ready;
        nready = 0;
        for (size_t k = p->succ_at[i]; k < p->succ_at[i + 1]; k++)
            if (--left[p->succ[k]] == 0) {
                ready = p->succ[k];
                nready++;
            }
    }
    return true;
}

/* Fills the plan's dependencies and successors: from graph nodes when
 * `nodes`, else from plan `from`. -1 when memory runs out. */
static int plan_edges(cc_plan *p, cc_node *const *nodes, const cc_plan *from)
{
    size_t n = p->n, e = 0;
    for (size_t i = 0; i < n; i++) e += nodes ? nodes[i]->ndeps : from->dep_at[i + 1] - from->dep_at[i];
    p->dep_at = calloc(n + 1, sizeof *p->dep_at);
    p->succ_at = calloc(n + 2, sizeof *p->succ_at);
    p->dep = malloc((e ? e : 1) * sizeof *p->dep);
    p->succ = malloc((e ? e : 1) * sizeof *p->succ);
    size_t *left = malloc((n ? n : 1) * sizeof *left);
    if (!p->dep_at || !p->succ_at || !p->dep || !p->succ || !left) {
        free(left);
        return -1;
    }
    e = 0;
    for (size_t i = 0; i < n; i++) {
        p->dep_at[i] = e;
        if (nodes) {
            for (size_t j = 0; j < nodes[i]->ndeps; j++) p->dep[e++] = nodes[i]->deps[j]->idx;
        } else {
            for (size_t k = from->dep_at[i]; k < from->dep_at[i + 1]; k++) p->dep[e++] = from->dep[k];
        }
    }
    p->dep_at[n] = e;
    /* Successors: count into succ_at[d + 2], prefix-sum, then place. */
    for (size_t k = 0; k < e; k++) p->succ_at[p->dep[k] + 2]++;
    for (size_t i = 2; i < n + 2; i++) p->succ_at[i] += p->succ_at[i - 1];
    for (size_t i = 0; i < n; i++)
        for (size_t k = p->dep_at[i]; k < p->dep_at[i + 1]; k++) p->succ[p->succ_at[p->dep[k] + 1]++] = i;
    p->chain = plan_is_chain(p, left);
    free(left);
    return 0;
}

/* A plan holding deep copies of n works and their edges, from graph nodes
 * when `nodes`, else from plan `from`. NULL when memory runs out (nothing
 * left allocated). */
static cc_plan *plan_new(size_t n, cc_node *const *nodes, const cc_plan *from)
{
    cc_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->refs = 1;
    p->w = calloc(n ? n : 1, sizeof *p->w);
    p->off = calloc(n ? n : 1, sizeof *p->off);
    if (!p->w || !p->off) {
        free(p->w);
        free(p->off);
        free(p);
        return NULL;
    }
    if (from) memcpy(p->off, from->off, n * sizeof *p->off);
    for (; p->n < n; p->n++)
        if (cc__work_copy(&p->w[p->n], nodes ? &nodes[p->n]->w : &from->w[p->n])) {
            cc__plan_unref(p);
            return NULL;
        }
    if (plan_edges(p, nodes, from)) {
        cc__plan_unref(p);
        return NULL;
    }
    return p;
}

/* The executable's plan, made its own first when a queued launch still
 * holds it: setting a node's parameters while an earlier launch is in
 * flight is accepted, and that launch keeps the parameters it was launched
 * with (observed on an H200, driver 580.159.04). NULL: out of memory, the
 * executable unchanged. Lock held. */
static cc_plan *plan_own(cc_exec *x)
{
    if (x->plan->refs == 1) return x->plan;
    cc_plan *p = plan_new(x->plan->n, NULL, x->plan);
    if (!p) return NULL;
    cc__plan_unref(x->plan);
    x->plan = p;
    return p;
}

/* ---- what an update may change ------------------------------------------
 * The driver API reference (13.0) for cuGraphExec{Kernel,Memset,Memcpy}-
 * NodeSetParams and cuGraphExecUpdate; the same rules serve both, so a
 * whole-graph update allows a node exactly what setting it allows. */

/* The allocation p lies in, as an update compares it. Lock held. */
static cc_opnd opnd_of(uintptr_t p)
{
    cc_alloc *a = cc__mem_find(p);
    return a ? (cc_opnd){(int)a->kind, a->ctx} : (cc_opnd){0, NULL};
}

static bool opnd_same(cc_opnd a, cc_opnd b) { return a.kind == b.kind && a.ctx == b.ctx; }

/* Whether memset work nw may replace ow, whose destination lay in `od` at
 * instantiation. cuGraphExecMemsetNodeSetParams: "Zero sized operations are
 * not supported"; the new destination "must be to the same kind of
 * allocation as the original destination pointer and have the same context
 * association"; "Both the value and pointer address may be updated"; "for
 * 2d memsets, all dimension changes are rejected. For 1d memsets, changes in
 * height are explicitly rejected and other changes are opportunistically
 * allowed if the resulting work maps onto the work resources already
 * allocated for the node". Which work fits those resources is not said, and
 * a program cannot know it, so the stricter reading: a 1-D memset's width
 * and element size may not change either (unverified on a GPU). Lock held. */
static bool memset_update_ok(const cc_work *ow, cc_opnd od, const cc_work *nw)
{
    if (!nw->u.m.w || !nw->u.m.h) return false;
    if (nw->u.m.w != ow->u.m.w || nw->u.m.h != ow->u.m.h || nw->u.m.esz != ow->u.m.esz) return false;
    if (ow->u.m.h > 1 && nw->u.m.pitch != ow->u.m.pitch) return false;
    return opnd_same(opnd_of(nw->u.m.dst), od);
}

/* Whether copy work nw may replace ow, whose operands lay in od / os at
 * instantiation. cuGraphExecMemcpyNodeSetParams: "The source and
 * destination memory ... must be allocated from the same contexts as the
 * original source and destination memory. Both the instantiation-time memory
 * operands and the memory operands in copyParams must be 1-dimensional.
 * Zero-length operations are not supported." cuGraphExecUpdate adds:
 * "Changing either the source or destination memory type ... is not
 * supported." The extent (WidthInBytes) may change: the node is updated "as
 * though hNode had contained copyParams at instantiation". Pageable host
 * memory lies in no allocation: pageable and pinned do not replace each
 * other (the stricter reading of "mappings changed"; unverified). */
static bool copy_update_ok(const cc_work *ow, cc_opnd od, cc_opnd os, const cc_work *nw)
{
    if (ow->u.c.h > 1 || nw->u.c.h > 1 || !nw->u.c.n) return false;
    if (nw->u.c.st != ow->u.c.st || nw->u.c.dt != ow->u.c.dt) return false;
    return opnd_same(opnd_of((uintptr_t)nw->u.c.dst), od) && opnd_same(opnd_of((uintptr_t)nw->u.c.src), os);
}

static bool copy_same(const cc_work *a, const cc_work *b)
{
    return a->u.c.dst == b->u.c.dst && a->u.c.src == b->u.c.src && a->u.c.n == b->u.c.n &&
           a->u.c.st == b->u.c.st && a->u.c.dt == b->u.c.dt && a->u.c.h == b->u.c.h &&
           (a->u.c.h <= 1 || (a->u.c.dpitch == b->u.c.dpitch && a->u.c.spitch == b->u.c.spitch));
}

static bool memset_same(const cc_work *a, const cc_work *b)
{
    return a->u.m.dst == b->u.m.dst && a->u.m.value == b->u.m.value && a->u.m.esz == b->u.m.esz &&
           a->u.m.w == b->u.m.w && a->u.m.h == b->u.m.h && (a->u.m.h <= 1 || a->u.m.pitch == b->u.m.pitch);
}

/* The context a memset or copy update names: ctx, or the current one when
 * NULL. INVALID_CONTEXT for a destroyed or unknown context; INVALID_VALUE
 * when it is not the node's own: the node runs where it was captured (the
 * stricter reading; the reference only calls ctx "Context on which to run
 * the node"; unverified on a GPU). Lock held. */
static CUresult update_ctx(CUcontext ctx, const cc_work *ow)
{
    cc_ctx *c = (cc_ctx *)ctx;
    if (!c) {
        CUresult r = cc__ctx_current(&c);
        if (r) return r;
    } else if (!cc__ctx_ok(c)) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    return c == ow->ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static void exec_unref(cc_exec *x)
{
    if (--x->refs > 0) return;
    for (size_t i = 0; i < x->n; i++) free(x->deps[i]);
    if (x->plan) cc__plan_unref(x->plan);
    if (x->last) cc__stream_unref(x->last);
    free(x->src);
    free(x->deps);
    free(x->ndeps);
    free(x->freed_in_graph);
    free(x->alloc_in_graph);
    free(x->odst);
    free(x->osrc);
    free(x);
}

/* ---- the order a launch runs its nodes in ----------------------------------
 * A launch first fixes an order of its nodes, a topological one chosen by
 * its policy (`rank`): CREATION is creation order (which capture makes a
 * topological order); REVERSE takes, among the nodes whose dependencies are
 * placed, always the one created last; RANDOM a pseudo-random one, from the
 * launch's seed. Then the nodes run: whichever thread is free takes, among
 * the ready nodes (dependencies complete, not started), the one first in
 * that order, so with one thread they run exactly in that order, and with
 * more, independent nodes run at the same time, as on a GPU. CREATION runs
 * its nodes one at a time on the stream's worker (what this driver did
 * before it had orders). Each node costs the simulated time an eager op
 * costs (CPUCUDA_DELAY_US), slept by the thread that runs it; the worker
 * slept once before this launch, which is the first node's delay. A graph
 * missing an edge then runs its reader before its writer, or both at once,
 * as a GPU may: the wrong result shows. */

/* One launch's scheduling state: on the stream worker's stack; helpers
 * touch it only under their team's mutex while it is the team's run. */
typedef struct cc_run {
    const cc_plan *p;
    size_t *rank;     /* node -> its place in the launch's order */
    size_t *left;     /* node -> dependencies not complete yet */
    size_t *ready;    /* nodes ready and not started */
    size_t nready, ndone;
    unsigned nhelp;   /* helpers that may take part (the launch's workers - 1) */
    unsigned busy;    /* helpers running a node of this run */
    bool delayed;     /* the next node pays its delay (the first one's is paid) */
    unsigned delay;
} cc_run;

/* A stream worker's helper threads, made on its first launch that can use
 * them and stopped when the worker exits (cc__graph_thread_end). */
typedef struct cc_team {
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* a node completed, became ready, or the run changed */
    cc_run *run;          /* the launch being run, or NULL */
    bool quit;
    unsigned n;           /* helpers started */
    pthread_t th[CC_MAX_WORKERS - 1];
} cc_team;

static __thread cc_team *tl_team;

/* splitmix64: the launch's pseudo-random sequence. */
static unsigned long long rng_next(unsigned long long *s)
{
    unsigned long long x = (*s += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The ready nodes again: every node waiting for all its dependencies. */
static void run_reset(cc_run *r)
{
    const cc_plan *p = r->p;
    r->nready = 0;
    for (size_t i = 0; i < p->n; i++) {
        r->left[i] = p->dep_at[i + 1] - p->dep_at[i];
        if (!r->left[i]) r->ready[r->nready++] = i;
    }
}

/* Node i is complete: its successors may become ready. */
static void run_complete(cc_run *r, size_t i)
{
    const cc_plan *p = r->p;
    for (size_t k = p->succ_at[i]; k < p->succ_at[i + 1]; k++)
        if (--r->left[p->succ[k]] == 0) r->ready[r->nready++] = p->succ[k];
    r->ndone++;
}

/* The launch's order (r->rank), by its policy, then the run reset. */
static void run_order(cc_run *r, enum cc_order order, unsigned long long seed)
{
    run_reset(r);
    for (size_t k = 0; r->nready; k++) {
        size_t at = 0;
        if (order == CC_ORDER_RANDOM)
            at = (size_t)(rng_next(&seed) % r->nready);
        else
            for (size_t j = 1; j < r->nready; j++)
                if (order == CC_ORDER_CREATION ? r->ready[j] < r->ready[at] : r->ready[j] > r->ready[at]) at = j;
        size_t i = r->ready[at];
        r->ready[at] = r->ready[--r->nready];
        r->rank[i] = k;
        run_complete(r, i);
    }
    r->ndone = 0;
    run_reset(r);
}

/* Takes the ready node first in the launch's order (one must be ready). */
static size_t run_take(cc_run *r)
{
    size_t at = 0;
    for (size_t j = 1; j < r->nready; j++)
        if (r->rank[r->ready[j]] < r->rank[r->ready[at]]) at = j;
    size_t i = r->ready[at];
    r->ready[at] = r->ready[--r->nready];
    return i;
}

/* Runs node i without the team's mutex (held on entry and on return). */
static void run_node(cc_team *t, cc_run *r, size_t i)
{
    bool off = r->p->off[i];
    bool delay = !off && r->delayed && r->delay;
    if (!off) r->delayed = true;
    pthread_mutex_unlock(&t->mu);
    if (delay) usleep(r->delay);
    if (off) cc__count(CC_C_NODE_DISABLED);
    else cc__work_run(&r->p->w[i], true);
    pthread_mutex_lock(&t->mu);
    run_complete(r, i);
    pthread_cond_broadcast(&t->cv);
}

typedef struct cc_helper_arg {
    cc_team *t;
    unsigned idx;
} cc_helper_arg;

/* A helper: takes ready nodes of its worker's current run while it may
 * take part (its index below the run's nhelp). */
static void *helper_main(void *arg)
{
    cc_helper_arg a = *(cc_helper_arg *)arg;
    free(arg);
    cc_team *t = a.t;
    pthread_mutex_lock(&t->mu);
    while (!t->quit) {
        cc_run *r = t->run;
        if (r && a.idx < r->nhelp && r->nready) {
            r->busy++;
            run_node(t, r, run_take(r));
            r->busy--;
            pthread_cond_broadcast(&t->cv);
        } else {
            pthread_cond_wait(&t->cv, &t->mu);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* The calling worker's team with at least `want` helpers started, or as
 * many as could be (logged); NULL without memory. */
static cc_team *team_get(unsigned want)
{
    cc_team *t = tl_team;
    if (!t) {
        if (!(t = calloc(1, sizeof *t))) return NULL;
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        tl_team = t;
    }
    while (t->n < want) {
        cc_helper_arg *a = malloc(sizeof *a);
        if (a) *a = (cc_helper_arg){t, t->n};
        if (!a || pthread_create(&t->th[t->n], NULL, helper_main, a)) {
            free(a);
            cc__log("graph launch: could not start helper thread %u; running on %u", t->n + 1, t->n + 1);
            break;
        }
        t->n++;
    }
    return t;
}

void cc__graph_thread_end(void)
{
    cc_team *t = tl_team;
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    for (unsigned i = 0; i < t->n; i++) pthread_join(t->th[i], NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
    tl_team = NULL;
}

/* Without scheduling memory: one at a time, in creation order. */
static void run_in_creation_order(const cc_plan *p, unsigned delay)
{
    bool ran = false;
    for (size_t i = 0; i < p->n; i++) {
        if (p->off[i]) { /* an empty node: no work, no device time */
            cc__count(CC_C_NODE_DISABLED);
            continue;
        }
        if (ran && delay) usleep(delay);
        ran = true;
        cc__work_run(&p->w[i], true);
    }
}

void cc__plan_run(const cc_work *w)
{
    const cc_plan *p = w->u.g.p;
    /* delay_us is set before any worker exists. */
    unsigned delay = cc__g.delay_us;
    enum cc_order order = w->u.g.order;
    if (order == CC_ORDER_CREATION || p->chain) {
        run_in_creation_order(p, delay); /* the only order, or the one asked for */
        return;
    }
    cc_run r = {.p = p, .delay = delay};
    size_t m = p->n ? p->n : 1;
    r.rank = malloc(m * sizeof *r.rank);
    r.left = malloc(m * sizeof *r.left);
    r.ready = malloc(m * sizeof *r.ready);
    cc_team *t = r.rank && r.left && r.ready ? team_get(w->u.g.workers - 1) : NULL;
    if (!t) {
        cc__log("graph launch: out of memory for its order; running its nodes in creation order");
        free(r.rank);
        free(r.left);
        free(r.ready);
        run_in_creation_order(p, delay);
        return;
    }
    run_order(&r, order, w->u.g.seed);
    r.nhelp = w->u.g.workers - 1;
    pthread_mutex_lock(&t->mu);
    t->run = &r;
    pthread_cond_broadcast(&t->cv);
    while (r.ndone < p->n) {
        if (r.nready) run_node(t, &r, run_take(&r));
        else pthread_cond_wait(&t->cv, &t->mu);
    }
    while (r.busy) pthread_cond_wait(&t->cv, &t->mu);
    t->run = NULL;
    pthread_mutex_unlock(&t->mu);
    free(r.rank);
    free(r.left);
    free(r.ready);
}

/* Builds an executable from g. OUT_OF_MEMORY / INVALID_VALUE; nothing is
 * left allocated on failure. Lock held. */
static CUresult instantiate(cc_graph *g, unsigned long long flags, cc_exec **out)
{
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) return CUDA_ERROR_NOT_SUPPORTED;
    cc_ctx *c;
    CUresult r = cc__ctx_current(&c);
    if (r) return r;
    cc_exec *x = calloc(1, sizeof *x);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    x->refs = 1;
    x->flags = flags;
    x->ctx = c;
    size_t n = g->n, m = n ? n : 1;
    x->plan = plan_new(n, g->nodes, NULL);
    x->src = calloc(m, sizeof *x->src);
    x->deps = calloc(m, sizeof *x->deps);
    x->ndeps = calloc(m, sizeof *x->ndeps);
    x->freed_in_graph = calloc(m, sizeof(bool));
    x->alloc_in_graph = calloc(m, sizeof(bool));
    x->odst = calloc(m, sizeof *x->odst);
    x->osrc = calloc(m, sizeof *x->osrc);
    if (!x->plan || !x->src || !x->deps || !x->ndeps || !x->freed_in_graph || !x->alloc_in_graph || !x->odst ||
        !x->osrc) {
        exec_unref(x);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++) {
        cc_node *nd = g->nodes[i];
        x->deps[i] = nd->ndeps ? malloc(nd->ndeps * sizeof(size_t)) : NULL;
        if (nd->ndeps && !x->deps[i]) {
            x->n = i; /* what is filled so far */
            exec_unref(x);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        x->n = i + 1;
        x->src[i] = nd->id;
        x->ndeps[i] = nd->ndeps;
        for (size_t j = 0; j < nd->ndeps; j++) x->deps[i][j] = nd->deps[j]->idx;
    }
    const cc_work *w = x->plan->w;
    for (size_t i = 0; i < n; i++) {
        if (w[i].kind == CC_W_MEMSET) {
            x->odst[i] = opnd_of(w[i].u.m.dst);
        } else if (w[i].kind == CC_W_COPY) {
            x->odst[i] = opnd_of((uintptr_t)w[i].u.c.dst);
            x->osrc[i] = opnd_of((uintptr_t)w[i].u.c.src);
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (w[i].kind == CC_W_MEM_ALLOC && w[j].kind == CC_W_MEM_FREE && w[i].u.a.p == w[j].u.a.p) {
                x->freed_in_graph[i] = true;
                x->alloc_in_graph[j] = true;
            }
    cc__handle_add(x, CC_K_EXEC);
    cc__count(CC_C_GRAPH_INSTANTIATED);
    *out = x;
    return CUDA_SUCCESS;
}

static CUresult instantiate_api(CUgraphExec *ph, CUgraph hGraph, unsigned long long flags)
{
    if (!ph) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_graph *g = graph_get(hGraph);
    cc_exec *x = NULL;
    r = g ? instantiate(g, flags, &x) : CUDA_ERROR_INVALID_VALUE;
    if (!r) *ph = (CUgraphExec)x;
    cc__unlock();
    return r;
}

static CUresult instantiate_log(CUgraphExec *ph, CUgraph g, CUgraphNode *err, char *log, size_t logsz)
{
    if (err) *err = NULL;
    if (log && logsz) log[0] = 0;
    return instantiate_api(ph, g, 0);
}

CC_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                      char *logBuffer, size_t bufferSize)
{
    CC_ENTER(cuGraphInstantiate);
    return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CC_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                         char *logBuffer, size_t bufferSize)
{
    CC_ENTER(cuGraphInstantiate_v2);
    return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

CC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    CC_ENTER(cuGraphInstantiateWithFlags);
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) return CUDA_ERROR_INVALID_VALUE; /* params only */
    return instantiate_api(phGraphExec, hGraph, flags);
}

static CUresult instantiate_params(CUgraphExec *ph, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p, bool pt)
{
    if (!p || !ph) return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    LOCKED_INIT();
    if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
        cc_stream *s;
        r = cc__stream_get(p->hUploadStream, pt, &s);
    }
    cc_graph *g = graph_get(hGraph);
    cc_exec *x = NULL;
    if (!r) r = g ? instantiate(g, p->flags, &x) : CUDA_ERROR_INVALID_VALUE;
    if (!r) *ph = (CUgraphExec)x;
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    CC_ENTER(cuGraphInstantiateWithParams);
    return instantiate_params(phGraphExec, hGraph, instantiateParams, false);
}

CC_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    CC_ENTER(cuGraphInstantiateWithParams_ptsz);
    return instantiate_params(phGraphExec, hGraph, instantiateParams, true);
}

CC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CC_ENTER(cuGraphExecDestroy);
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    if (!x) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        /* A pending launch keeps its reference and completes. */
        x->dead = true;
        cc__handle_del(x);
        exec_unref(x);
    }
    cc__unlock();
    return r;
}

/* One instance at a time: a launch is ordered after the previous launch of
 * the same executable, on whichever stream that was. A graph whose
 * allocations are still live from an earlier launch (not freed inside the
 * graph, nor since) cannot be launched again: INVALID_VALUE. */
static CUresult graph_launch(CUgraphExec h, CUstream hs, bool pt)
{
    LOCKED_INIT();
    cc_exec *x = exec_get(h);
    cc_stream *s = NULL;
    if (!x) r = CUDA_ERROR_INVALID_VALUE;
    if (!r) r = cc__stream_get(hs, pt, &s);
    if (!r && s->cap) {
        cc__capture_invalidate(s->cap, "graph launch into a capture (child graphs not supported)");
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!r) r = cc__legacy_use(s);
    const cc_work *xw = x ? x->plan->w : NULL;
    for (size_t i = 0; !r && i < x->n; i++)
        if (xw[i].kind == CC_W_MEM_ALLOC && !x->freed_in_graph[i]) {
            cc_alloc *a = cc__mem_find((uintptr_t)xw[i].u.a.p);
            if (a && a->live && !(x->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) {
                cc__log("graph relaunched while its allocation %p is live", (void *)a->base);
                r = CUDA_ERROR_INVALID_VALUE;
            }
        }
    /* External event waits wait for the record their event has now: the
     * launch runs a copy of the plan holding each (the reading where a
     * later record of the event, once the graph is queued, is not waited
     * for, as a stream's wait is fixed when it is issued; unverified on a
     * GPU, tests/gpu/run.sh). */
    cc_plan *run = x ? x->plan : NULL;
    int waits = 0;
    for (size_t i = 0; !r && i < x->n; i++)
        waits |= xw[i].kind == CC_W_WAIT_EVENT;
    if (!r && waits) {
        run = plan_new(x->plan->n, NULL, x->plan);
        if (!run) r = CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; !r && i < run->n; i++) {
            cc_work *ww = &run->w[i];
            if (ww->kind != CC_W_WAIT_EVENT || !ww->u.e.ev->rs) continue;
            if (ww->u.e.rs) cc__stream_unref(ww->u.e.rs);
            ww->u.e.rs = ww->u.e.ev->rs;
            ww->u.e.rseq = ww->u.e.ev->rseq;
            cc__stream_ref(ww->u.e.rs);
        }
    }
    if (!r) {
        cc_work w = {.kind = CC_W_GRAPH, .ctx = s->ctx};
        w.u.g.p = run;
        /* The order this launch runs in, fixed now: launches numbered from
         * the order's setting give a random order's per-launch seeds, so
         * the same program with the same seed runs the same orders. */
        w.u.g.order = cc__g.order;
        w.u.g.workers = cc__g.workers;
        unsigned long long no = ++cc__g.launches;
        w.u.g.seed = cc__g.order_seed ^ rng_next(&no);
        if (run == x->plan) run->refs++; /* a copy is the launch's own already */
        cc_fence f = {x->last, x->last_seq};
        unsigned long long seq;
        r = cc__submit(s, &w, x->last ? &f : NULL, x->last ? 1 : 0, &seq);
        if (r) {
            cc__plan_unref(run);
        } else {
            cc__stream_ref(s);
            if (x->last) cc__stream_unref(x->last);
            x->last = s;
            x->last_seq = seq;
            for (size_t i = 0; i < x->n; i++) {
                cc_alloc *a = NULL;
                if (xw[i].kind == CC_W_MEM_ALLOC && !x->freed_in_graph[i])
                    if ((a = cc__mem_find((uintptr_t)xw[i].u.a.p))) a->live = true;
                if (xw[i].kind == CC_W_MEM_FREE && !x->alloc_in_graph[i])
                    if ((a = cc__mem_find((uintptr_t)xw[i].u.a.p))) a->live = false;
            }
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    CC_ENTER(cuGraphLaunch);
    return graph_launch(hGraphExec, hStream, false);
}

CC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    CC_ENTER(cuGraphLaunch_ptsz);
    return graph_launch(hGraphExec, hStream, true);
}

static CUresult upload(CUgraphExec h, CUstream hs, bool pt)
{
    LOCKED_INIT();
    cc_stream *s;
    if (!exec_get(h)) r = CUDA_ERROR_INVALID_VALUE;
    if (!r) r = cc__stream_get(hs, pt, &s);
    cc__unlock();
    return r; /* nothing to upload: host memory is the device memory */
}

CC_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    CC_ENTER(cuGraphUpload);
    return upload(hGraphExec, hStream, false);
}

CC_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    CC_ENTER(cuGraphUpload_ptsz);
    return upload(hGraphExec, hStream, true);
}

/* The executable's copy of graph node h, or -1 (INVALID_VALUE for the
 * caller). Only a live node of the graph the executable was instantiated
 * from names one: after cuGraphExecUpdate a node of the new graph gets
 * INVALID_VALUE, and so does a node of an unrelated graph, leaving the
 * executable unchanged (both observed on an H200, driver 580.159.04). A node
 * of a destroyed graph is refused too (stricter; unverified). */
static long exec_index(cc_exec *x, CUgraphNode h)
{
    cc_node *n = node_get(h);
    if (!n) return -1;
    /* Updates usually come node after node: start where the last one was
     * found (the answer is the same; only the look-up is shorter). */
    for (size_t j = 0; j < x->n; j++) {
        size_t i = x->hint + j < x->n ? x->hint + j : x->hint + j - x->n;
        if (x->src[i] == n->id) {
            x->hint = i + 1 < x->n ? i + 1 : 0;
            return (long)i;
        }
    }
    return -1;
}

/* cuGraphExecKernelNodeSetParams[_v2]: "All nodeParams fields may change,
 * but the following restrictions apply to func updates: The owning context
 * of the function cannot change" (the others concern dynamic parallelism
 * and device-side graph calls, which no kernel here makes). So the grid,
 * block, dynamic shared memory, arguments and the function itself may
 * change within the limits of a launch (cc__kernel_work), and only to a
 * function of the node's context: a module's function belongs to the
 * module's context; a CUkernel (func NULL) runs in `ctx`, or the current
 * context when that is NULL. Anything else: INVALID_VALUE (INVALID_CONTEXT
 * for a destroyed ctx), the executable unchanged. With
 * CPUCUDA_NO_FUNC_UPDATE set, a driver of the older reading (CUDA 10's
 * reference: the function may not change) is played: another function
 * than the node's gets INVALID_VALUE, the executable unchanged. */
static CUresult exec_kernel_set(CUgraphExec h, CUgraphNode hn, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_exec *x = exec_get(h);
    long i = x ? exec_index(x, hn) : -1;
    if (i < 0 || x->plan->w[i].kind != CC_W_KERNEL) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        cc_work w;
        cc_plan *pl = NULL;
        cc_ctx *owner = x->plan->w[i].ctx;
        CUfunction f = p->func ? p->func : (CUfunction)p->kern;
        r = cc__kernel_work(f, (cpuk_dim3){p->gridDimX, p->gridDimY, p->gridDimZ},
                            (cpuk_dim3){p->blockDimX, p->blockDimY, p->blockDimZ}, p->sharedMemBytes,
                            p->kernelParams, p->extra, &w);
        if (!r && cc__g.no_func_update && w.u.k.f != x->plan->w[i].u.k.f) {
            cc__work_free(&w);
            r = CUDA_ERROR_INVALID_VALUE;
        }
        if (!r) {
            cc_ctx *c = NULL;
            if (w.u.k.f->mod) {
                c = w.u.k.f->mod->ctx;
            } else if (!p->func) { /* ctx "is ignored if func is set" */
                c = (cc_ctx *)p->ctx;
                if (!c) r = cc__ctx_current(&c);
                else if (!cc__ctx_ok(c)) r = CUDA_ERROR_INVALID_CONTEXT;
            }
            if (!r && c && c != owner) r = CUDA_ERROR_INVALID_VALUE;
            if (r) cc__work_free(&w);
        }
        if (!r && !(pl = plan_own(x))) {
            cc__work_free(&w);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (!r) {
            w.ctx = owner;
            cc__work_free(&pl->w[i]);
            pl->w[i] = w;
            cc__count(CC_C_GRAPH_EXEC_UPDATES);
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CC_ENTER(cuGraphExecKernelNodeSetParams);
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    memcpy(&p, nodeParams, sizeof *nodeParams);
    return exec_kernel_set(hGraphExec, hNode, &p);
}

CC_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    CC_ENTER(cuGraphExecKernelNodeSetParams_v2);
    return exec_kernel_set(hGraphExec, hNode, nodeParams);
}

/* cuGraphExecEventWaitNodeSetEvent / cuGraphExecEventRecordNodeSetEvent:
 * "Sets the event of an event wait [record] node in the given graphExec";
 * cuGraphExecNodeSetParams' table allows it: event wait "unrestricted",
 * event record "event only, context changes are not allowed". A node of
 * another kind or graph, or an event that is not live: INVALID_VALUE, the
 * executable unchanged. Takes effect from the next launch. */
static CUresult exec_event_set(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event,
                               enum cc_work_kind kind)
{
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    long i = x ? exec_index(x, hNode) : -1;
    cc_event *e = (cc_event *)event;
    cc_plan *pl = NULL;
    if (i < 0 || x->plan->w[i].kind != kind || !cc__handle_is(e, CC_K_EVENT) || e->dead)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (!(pl = plan_own(x)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (!r) {
        cc_work *w = &pl->w[i];
        cc__event_ref(e);
        cc__event_unref(w->u.e.ev);
        w->u.e.ev = e;
        cc__count(CC_C_GRAPH_EXEC_UPDATES);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    CUevent event)
{
    CC_ENTER(cuGraphExecEventWaitNodeSetEvent);
    return exec_event_set(hGraphExec, hNode, event, CC_W_WAIT_EVENT);
}

CC_EXPORT CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      CUevent event)
{
    CC_ENTER(cuGraphExecEventRecordNodeSetEvent);
    return exec_event_set(hGraphExec, hNode, event, CC_W_EVENT_RECORD);
}

/* 1-D copies whose operands lie where the instantiated node's did
 * (copy_update_ok); source and destination offsets and arrays are refused
 * too (this driver has no arrays; a 1-D copy names its start directly). A
 * pinned host operand must lie inside its allocation. INVALID_VALUE, the
 * executable unchanged; INVALID_CONTEXT for a destroyed ctx. */
CC_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    CC_ENTER(cuGraphExecMemcpyNodeSetParams);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    long i = x ? exec_index(x, hNode) : -1;
    if (i < 0 || x->plan->w[i].kind != CC_W_COPY) r = CUDA_ERROR_INVALID_VALUE;
    else r = update_ctx(ctx, &x->plan->w[i]);
    if (!r && ((p->Height > 1) || (p->Depth > 1) || p->srcXInBytes || p->srcY || p->srcZ || p->dstXInBytes ||
               p->dstY || p->dstZ || p->srcArray || p->dstArray))
        r = CUDA_ERROR_INVALID_VALUE;
    if (!r) {
        cc_work nw = x->plan->w[i]; /* a view: only the fields compared below are set */
        nw.u.c.src = p->srcMemoryType == CU_MEMORYTYPE_DEVICE ? (const void *)(uintptr_t)p->srcDevice : p->srcHost;
        nw.u.c.dst = p->dstMemoryType == CU_MEMORYTYPE_DEVICE ? (void *)(uintptr_t)p->dstDevice : p->dstHost;
        nw.u.c.st = p->srcMemoryType;
        nw.u.c.dt = p->dstMemoryType;
        nw.u.c.n = p->WidthInBytes;
        nw.u.c.h = 1;
        size_t n = nw.u.c.n;
        if (!copy_update_ok(&x->plan->w[i], x->odst[i], x->osrc[i], &nw) || !nw.u.c.src || !nw.u.c.dst)
            r = CUDA_ERROR_INVALID_VALUE;
        if (!r && p->srcMemoryType == CU_MEMORYTYPE_DEVICE) r = cc__mem_check_dev(p->srcDevice, n);
        if (!r && p->dstMemoryType == CU_MEMORYTYPE_DEVICE) r = cc__mem_check_dev(p->dstDevice, n);
        if (!r && x->osrc[i].kind == CC_M_HOST && !cc__mem_is_pinned(nw.u.c.src, n)) r = CUDA_ERROR_INVALID_VALUE;
        if (!r && x->odst[i].kind == CC_M_HOST && !cc__mem_is_pinned(nw.u.c.dst, n)) r = CUDA_ERROR_INVALID_VALUE;
        cc_plan *pl = NULL;
        if (!r && !(pl = plan_own(x))) r = CUDA_ERROR_OUT_OF_MEMORY;
        if (!r) {
            cc_work *w = &pl->w[i];
            free(w->u.c.stage);
            w->u.c.stage = NULL;
            w->u.c.src = nw.u.c.src;
            w->u.c.dst = nw.u.c.dst;
            w->u.c.n = n;
            w->u.c.h = 1;
            cc__count(CC_C_GRAPH_EXEC_UPDATES);
        }
    }
    cc__unlock();
    return r;
}

/* The destination's allocation kind and context, the dimensions and element
 * size stay; the value and the address may change (memset_update_ok).
 * INVALID_VALUE, the executable unchanged; INVALID_CONTEXT for a destroyed
 * ctx. */
CC_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    CC_ENTER(cuGraphExecMemsetNodeSetParams);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    long i = x ? exec_index(x, hNode) : -1;
    if (i < 0 || x->plan->w[i].kind != CC_W_MEMSET) r = CUDA_ERROR_INVALID_VALUE;
    else r = update_ctx(ctx, &x->plan->w[i]);
    if (!r && p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) r = CUDA_ERROR_INVALID_VALUE;
    else if (!r && (!p->width || !p->height || p->dst % p->elementSize)) r = CUDA_ERROR_INVALID_VALUE;
    else if (!r && p->height > 1 && p->pitch < p->width * p->elementSize) r = CUDA_ERROR_INVALID_VALUE;
    if (!r) {
        size_t pitch = p->height > 1 ? p->pitch : p->width * p->elementSize;
        cc_work nw = x->plan->w[i];
        nw.u.m.dst = p->dst;
        nw.u.m.pitch = pitch;
        nw.u.m.value = p->value;
        nw.u.m.esz = p->elementSize;
        nw.u.m.w = p->width;
        nw.u.m.h = p->height;
        if (!memset_update_ok(&x->plan->w[i], x->odst[i], &nw)) r = CUDA_ERROR_INVALID_VALUE;
        if (!r) r = cc__mem_check_dev(p->dst, (p->height - 1) * pitch + p->width * p->elementSize);
        cc_plan *pl = NULL;
        if (!r && !(pl = plan_own(x))) r = CUDA_ERROR_OUT_OF_MEMORY;
        if (!r) {
            cc_work *w = &pl->w[i];
            w->u.m.dst = p->dst;
            w->u.m.value = p->value;
            cc__count(CC_C_GRAPH_EXEC_UPDATES);
        }
    }
    cc__unlock();
    return r;
}

/* cuGraphNodeSetEnabled: "Disabled nodes are functionally equivalent to
 * empty nodes until they are reenabled. Existing node parameters are not
 * affected"; "The modifications only affect future launches"; "Currently
 * only kernel, memset and memcpy nodes are supported." The node is named
 * as for the node updates (exec_index): one of the graph the executable was
 * instantiated from. Anything else: INVALID_VALUE, the executable
 * unchanged. A queued launch keeps the state it was launched with. */
CC_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
    CC_ENTER(cuGraphNodeSetEnabled);
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    long i = x ? exec_index(x, hNode) : -1;
    enum cc_work_kind k = i >= 0 ? x->plan->w[i].kind : CC_W_HOST;
    if (k != CC_W_KERNEL && k != CC_W_MEMSET && k != CC_W_COPY) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if (x->plan->off[i] != !isEnabled) {
        cc_plan *pl = plan_own(x);
        if (!pl) r = CUDA_ERROR_OUT_OF_MEMORY;
        else pl->off[i] = !isEnabled;
    }
    if (!r) cc__count(CC_C_GRAPH_NODE_ENABLE_SETS);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled)
{
    CC_ENTER(cuGraphNodeGetEnabled);
    if (!isEnabled) return CUDA_ERROR_INVALID_VALUE;
    LOCKED_INIT();
    cc_exec *x = exec_get(hGraphExec);
    long i = x ? exec_index(x, hNode) : -1;
    enum cc_work_kind k = i >= 0 ? x->plan->w[i].kind : CC_W_HOST;
    if (k != CC_W_KERNEL && k != CC_W_MEMSET && k != CC_W_COPY) r = CUDA_ERROR_INVALID_VALUE;
    else *isEnabled = !x->plan->off[i];
    cc__unlock();
    return r;
}

/* Whole-graph update: nodes pair by creation order; the topology, every
 * node's type, a kernel node's context and memory nodes' addresses must
 * match; a memset or copy node that changed must change only as setting it
 * may (memset_update_ok, copy_update_ok: the reference's "Memset and memcpy
 * nodes" limitations say the same), else 910 with the reason. The executable's
 * nodes keep the handles of the graph it was instantiated from (observed on
 * an H200): only its plan changes; queued launches keep theirs. */
static CUresult exec_update(CUgraphExec h, CUgraph hg, CUgraphExecUpdateResultInfo *info)
{
    LOCKED_INIT();
    cc_exec *x = exec_get(h);
    cc_graph *g = graph_get(hg);
    CUgraphExecUpdateResult why = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    CUgraphNode bad = NULL, from = NULL;
    if (!x || !g) {
        r = CUDA_ERROR_INVALID_VALUE;
        why = CU_GRAPH_EXEC_UPDATE_ERROR;
    } else if (g->n != x->n) {
        why = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    } else {
        for (size_t i = 0; i < g->n && !why; i++) {
            cc_node *n = g->nodes[i];
            const cc_work *o = &x->plan->w[i];
            bad = (CUgraphNode)n;
            if (n->w.kind != o->kind) {
                why = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
            } else if (n->ndeps != x->ndeps[i]) {
                why = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
            } else {
                for (size_t j = 0; j < n->ndeps && !why; j++)
                    if (n->deps[j]->idx != x->deps[i][j]) {
                        why = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
                        from = (CUgraphNode)n->deps[j];
                    }
            }
            if (why) break;
            switch (o->kind) {
            case CC_W_KERNEL:
                if (n->w.ctx != o->ctx) why = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
                /* Launch attributes: the real driver refuses a change of
                 * the cooperative one; whether it carries any other over is
                 * not documented, so the stricter reading (unverified):
                 * any change is refused. */
                else if (n->w.u.k.attrs != o->u.k.attrs)
                    why = CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED;
                break;
            case CC_W_COPY:
                if (!copy_same(&n->w, o) && !copy_update_ok(o, x->odst[i], x->osrc[i], &n->w))
                    why = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
                break;
            case CC_W_MEMSET:
                if (!memset_same(&n->w, o) && !memset_update_ok(o, x->odst[i], &n->w))
                    why = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
                break;
            case CC_W_MEM_ALLOC:
            case CC_W_MEM_FREE:
                if (n->w.u.a.p != o->u.a.p || n->w.u.a.n != o->u.a.n)
                    why = CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED;
                break;
            case CC_W_EVENT_RECORD:
            case CC_W_WAIT_EVENT:
                if (n->w.u.e.ev != o->u.e.ev) why = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
                break;
            default:
                break;
            }
        }
        if (!why) {
            bad = NULL;
            cc_plan *p = plan_new(g->n, g->nodes, NULL);
            if (!p) {
                r = CUDA_ERROR_OUT_OF_MEMORY;
                why = CU_GRAPH_EXEC_UPDATE_ERROR;
            } else {
                /* Disabled nodes stay disabled: the reference says nothing
                 * either way; keeping the executable's state is the reading
                 * a caller cannot be surprised by twice (unverified). */
                memcpy(p->off, x->plan->off, g->n * sizeof *p->off);
                cc__plan_unref(x->plan);
                x->plan = p;
                cc__count(CC_C_GRAPH_EXEC_UPDATES);
            }
        }
    }
    if (why && !r) {
        r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        cc__log("graph exec update failed: reason %d", (int)why);
    }
    if (info) {
        info->result = why;
        info->errorNode = why ? bad : NULL;
        info->errorFromNode = why ? from : NULL;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                     CUgraphExecUpdateResult *updateResult_out)
{
    CC_ENTER(cuGraphExecUpdate);
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CUresult r = exec_update(hGraphExec, hGraph, &info);
    if (hErrorNode_out) *hErrorNode_out = info.errorNode;
    if (updateResult_out) *updateResult_out = info.result;
    return r;
}

CC_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                        CUgraphExecUpdateResultInfo *resultInfo)
{
    CC_ENTER(cuGraphExecUpdate_v2);
    return exec_update(hGraphExec, hGraph, resultInfo);
}
