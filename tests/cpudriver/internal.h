/* internal.h - the CPU driver's private types and the seams between its files.
 * Every exported entry point is named once in entries.h; everything else the
 * files share (objects, the global lock, the work queue, capture) is here.
 * Internal non-static names carry the double prefix cc__. */
#ifndef CPUCUDA_INTERNAL_H
#define CPUCUDA_INTERNAL_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpucuda.h"
#include "cpukernel.h"

#define CC_EXPORT __attribute__((visibility("default")))
#define CC_DRIVER_VERSION 13000

/* ---- entry points, counters, faults (counters.c) ------------------------- */
enum cc_entry {
#define CC_ENTRY(name, base, ver, pt) CC_E_##name,
#include "entries.h"
#undef CC_ENTRY
    CC_E__COUNT
};

#define CC_COUNTERS(X)                                                       \
    X(LAUNCH_EAGER, "launch.eager") X(LAUNCH_GRAPH, "launch.graph")          \
    X(NODE_KERNEL, "node.kernel") X(NODE_MEMCPY, "node.memcpy")              \
    X(NODE_MEMSET, "node.memset") X(NODE_HOST, "node.host")                  \
    X(NODE_EVENT_RECORD, "node.event_record")                                \
    X(NODE_WAIT_EVENT, "node.wait_event") X(NODE_MEM_ALLOC, "node.mem_alloc")\
    X(NODE_MEM_FREE, "node.mem_free") X(NODE_EMPTY, "node.empty")            \
    X(COPY_EAGER, "copy.eager") X(MEMSET_EAGER, "memset.eager")              \
    X(HOSTFUNC_EAGER, "hostfunc.eager") X(SYNC_STREAM, "sync.stream")        \
    X(SYNC_CTX, "sync.ctx") X(SYNC_EVENT, "sync.event")                      \
    X(CAPTURE_BEGUN, "capture.begun") X(CAPTURE_ENDED, "capture.ended")      \
    X(CAPTURE_INVALIDATED, "capture.invalidated")                            \
    X(GRAPH_INSTANTIATED, "graph.instantiated")                              \
    X(GRAPH_EXEC_UPDATES, "graph.exec_updates") X(FAULTS_FIRED, "faults.fired") \
    X(GRAPH_NODE_ENABLE_SETS, "graph.node_enable_sets")                      \
    X(NODE_DISABLED, "node.disabled")                                        \
    X(KERNEL_COOPERATIVE, "kernel.attr.cooperative")                         \
    X(KERNEL_PRIORITY, "kernel.attr.priority")                               \
    X(KERNEL_SYNC_DOMAIN, "kernel.attr.mem_sync_domain")                     \
    X(KERNEL_CLUSTER, "kernel.attr.cluster_dimension")                       \
    X(KERNEL_PSS, "kernel.attr.programmatic_stream_serialization")

enum cc_counter {
#define X(id, str) CC_C_##id,
    CC_COUNTERS(X)
#undef X
    CC_C__COUNT
};

extern const char *const cc__entry_names[CC_E__COUNT];
void cc__count(enum cc_counter c);
/* Counts the call and applies an injected fault. Returns the CUresult the
 * call must fail with (before doing anything), or -1 to proceed. */
int cc__enter(enum cc_entry e);
void cc__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The first statement of every exported entry point. */
#define CC_ENTER(name)                                                       \
    do {                                                                     \
        int cc_fault_ = cc__enter(CC_E_##name);                              \
        if (cc_fault_ >= 0) return (CUresult)cc_fault_;                      \
    } while (0)

/* ---- global state -------------------------------------------------------- */
typedef struct cc_ctx cc_ctx;
typedef struct cc_stream cc_stream;
typedef struct cc_event cc_event;
typedef struct cc_module cc_module;
typedef struct cc_func cc_func;
typedef struct cc_lib cc_lib;
typedef struct cc_kern cc_kern;
typedef struct cc_graph cc_graph;
typedef struct cc_node cc_node;
typedef struct cc_exec cc_exec;
typedef struct cc_plan cc_plan;
typedef struct cc_capture cc_capture;

/* The order a graph launch runs its ready nodes in (graph.c). CREATION:
 * one at a time, as created; REVERSE: the ready node created last first;
 * RANDOM: a seeded pseudo-random ready node. */
enum cc_order { CC_ORDER_CREATION, CC_ORDER_REVERSE, CC_ORDER_RANDOM };
#define CC_MAX_WORKERS 8

/* One mutex guards all driver state; `progress` is broadcast whenever any
 * queued op completes, so every wait (host or worker) is a predicate loop on
 * it. Kernels, copies and host functions run outside the lock. */
struct cc_global {
    pthread_mutex_t mu;
    pthread_cond_t progress;
    bool initialized;
    int ndev;               /* devices: CPUCUDA_DEVICES (1 or 2, default 1), read at cuInit */
    unsigned delay_us;
    unsigned end_capture_us; /* CPUCUDA_END_CAPTURE_US: what a capture's end takes */
    bool no_func_update;    /* CPUCUDA_NO_FUNC_UPDATE: kernel node updates keep the function */
    unsigned long long next_id;
    cc_ctx *ctxs;           /* every live context, primary included */
    cc_ctx *retired;        /* destroyed contexts, kept (never reused: see ctx_destroy) */
    cc_capture *captures;   /* every capture not yet ended */
    /* How graph launches run their nodes (CPUCUDA_GRAPH_ORDER,
     * CPUCUDA_GRAPH_WORKERS, cpucuda_graph_order_set / _workers_set): read
     * under the lock by each launch, which keeps what it was launched with. */
    enum cc_order order;
    unsigned long long order_seed;  /* RANDOM: the seed the spec named or the process chose */
    unsigned workers;               /* threads a launch may run its nodes on (1..CC_MAX_WORKERS) */
    unsigned long long launches;    /* graph launches since the order was set: each one's number */
};
extern struct cc_global cc__g;
void cc__lock(void);
void cc__unlock(void);
/* NOT_INITIALIZED before cuInit (and in a child forked after it); call
 * without the lock. */
CUresult cc__check_init(void);
/* True in a child forked after cuInit: the driver is unusable there. */
bool cc__forked_child(void);
unsigned long long cc__now_ns(void);

/* ---- handle registry (handles.c): which pointers are live objects -------- */
enum cc_kind {
    CC_K_CTX = 1, CC_K_STREAM, CC_K_EVENT, CC_K_MODULE, CC_K_FUNC, CC_K_LIB,
    CC_K_KERNEL, CC_K_GRAPH, CC_K_NODE, CC_K_EXEC
};
void cc__handle_add(const void *p, enum cc_kind k);
void cc__handle_del(const void *p);
bool cc__handle_is(const void *p, enum cc_kind k);

/* ---- contexts (ctx.c) ---------------------------------------------------- */
#define CC_MAX_DEVICES 2 /* CPUCUDA_DEVICES=2 gives a second device */
struct cc_ctx {
    unsigned long long id;
    int dev;                /* the device's ordinal */
    unsigned flags;
    bool primary, active;
    int primary_refs;
    cc_stream *legacy;
    cc_stream *streams;     /* every stream of the context, legacy included */
    cc_ctx *next;
};
/* The calling thread's current context, checked live: INVALID_CONTEXT when
 * there is none or it was destroyed. Call with the lock held. */
CUresult cc__ctx_current(cc_ctx **out);
bool cc__ctx_ok(cc_ctx *c);
/* Waits for all work queued on every stream of c (lock held). */
void cc__ctx_drain(cc_ctx *c);
void cc__device_drain(void);

/* ---- work items: what a queued op or a graph node does (work.c) ---------- */
enum cc_work_kind {
    CC_W_KERNEL = 1, CC_W_COPY, CC_W_MEMSET, CC_W_HOST, CC_W_EVENT_RECORD,
    CC_W_WAIT_EVENT, CC_W_MEM_ALLOC, CC_W_MEM_FREE, CC_W_EMPTY, CC_W_GRAPH,
    CC_W_NOP, CC_W_WRITE_VALUE, CC_W_WAIT_VALUE
};
typedef struct cc_work {
    enum cc_work_kind kind;
    cc_ctx *ctx;
    union {
        struct {
            cc_func *f;
            cc_kern *kern;      /* set when launched through a CUkernel */
            cpuk_dim3 grid, block;
            unsigned shmem;
            unsigned char *args; /* owned copy of the parameter buffer */
            size_t argsz;
            void **argv;         /* owned: pointers into args, one per param */
            unsigned attrs;      /* launch attributes in effect (bit: CUlaunchAttributeID),
                                    counted when the kernel runs, eagerly or as a node */
        } k;
        struct {
            void *dst;
            const void *src;
            size_t n;             /* bytes per row (the whole copy when h <= 1) */
            CUmemorytype dt, st;
            unsigned char *stage; /* owned staging of pageable source bytes, rows packed */
            size_t h;             /* rows of a 2-D copy; 0 or 1 for a 1-D copy */
            size_t dpitch, spitch;
        } c;
        struct { CUdeviceptr dst; size_t pitch; unsigned value, esz; size_t w, h; } m;
        struct { CUhostFn fn; void *data; } h;
        /* an event's record or wait; a graph's external wait node holds,
         * in a launch's own copy of the plan, the record it waits for,
         * fixed at the launch (rs NULL: none, or not yet launched) */
        struct { cc_event *ev; unsigned long long gen; cc_stream *rs; unsigned long long rseq; } e;
        struct { CUdeviceptr p; size_t n; } a;
        /* a launch holds the node work it was launched with, and the order
         * its nodes run in: the policy, its own seed (RANDOM: from the
         * order's seed and the launch's number), the workers it may use */
        struct { cc_plan *p; enum cc_order order; unsigned workers; unsigned long long seed; } g;
        /* stream memory operations: a 32- or 64-bit write, or a wait until
         * the value at p meets the CU_STREAM_WAIT_VALUE_* condition */
        struct { CUdeviceptr p; uint64_t v; unsigned cond; bool is64; } mo;
    } u;
} cc_work;
/* Runs w on the calling (worker) thread, without the lock. */
void cc__work_run(cc_work *w, bool in_graph);
/* Frees what w owns; deep-copies src into dst (dst's old content ignored).
 * cc__work_copy returns CUDA_ERROR_OUT_OF_MEMORY and leaves dst empty. */
void cc__work_free(cc_work *w);
CUresult cc__work_copy(cc_work *dst, const cc_work *src);
/* The digest (digest.c): adds what a kernel, copy or memset that has just
 * run did (anything else is ignored); the "digest" member of CPUCUDA_STATS. */
void cc__digest_work(const cc_work *w);
#include <stdio.h>
void cc__digest_json(FILE *f);
/* The fidelity digest (digest.c): the calls of the families a trace
 * records in full, as they reached the driver, on the calling thread's
 * chain; the "fidelity" member of CPUCUDA_STATS. cc__tl_entry is the entry
 * the calling thread is in (cc__enter). A launch is hashed before it is
 * queued (cc__fid_launch, lock held) and added once it was
 * (cc__fid_add); the others add themselves when they succeeded
 * (cc__fid_copy takes the lock, the others run under it). Calls a thread
 * makes between cpucuda_fidelity_own(1) and (0) (a player's own) are not
 * in it, and its allocations then get no number. */
extern __thread enum cc_entry cc__tl_entry;
typedef struct cc_fid { uint64_t h[2]; bool set; } cc_fid;
typedef struct cc_alloc cc_alloc;
void cc__fid_launch(const cc_work *w, cc_fid *f);
void cc__fid_add(const cc_fid *f);
void cc__fid_copy(uintptr_t dst, uintptr_t src, size_t n, bool h2d);
void cc__fid_memset(uintptr_t dst, size_t pitch, unsigned value, unsigned esz, size_t w, size_t h);
void cc__fid_alloc(cc_alloc *a);
void cc__fid_free(uintptr_t p);
void cc__fid_json(FILE *f);

/* ---- streams and the queue (stream.c) ------------------------------------ */
enum cc_stream_kind { CC_S_LEGACY, CC_S_PER_THREAD, CC_S_USER };
typedef struct cc_fence { cc_stream *s; unsigned long long seq; } cc_fence;
typedef struct cc_op {
    struct cc_op *next;
    cc_work w;
    cc_fence *fences;
    size_t nfences;
} cc_op;

struct cc_stream {
    unsigned long long id;
    cc_ctx *ctx;
    enum cc_stream_kind kind;
    unsigned flags;
    int prio;
    pthread_t owner;        /* the host thread of a per-thread stream */
    bool dead;              /* destroyed by the program */
    bool dying;             /* the worker should exit once drained */
    int refs;
    cc_op *head, *tail;
    unsigned long long submitted, completed;
    pthread_cond_t work;
    cc_stream *next_in_ctx;
    /* capture state (capture.c) */
    cc_capture *cap;
    cc_node **cap_deps;
    size_t ndeps, capdeps;
};
/* The stream a handle names in this call. per_thread: a 0 handle means the
 * per-thread stream (the _ptsz/_ptds entry points). Lock held. Fails with
 * INVALID_CONTEXT (no current context) or INVALID_HANDLE. */
CUresult cc__stream_get(CUstream h, bool per_thread, cc_stream **out);
cc_stream *cc__stream_new(cc_ctx *c, enum cc_stream_kind k, unsigned flags);
void cc__stream_ref(cc_stream *s);
void cc__stream_unref(cc_stream *s);
/* Stops s: marks it dead and lets the worker exit once drained. */
void cc__stream_retire(cc_stream *s);
bool cc__stream_blocking(const cc_stream *s);
/* Queues w on s (taking ownership of what w owns) with the legacy-stream
 * fences plus extra. Returns the op's sequence number; OUT_OF_MEMORY leaves w
 * owned by the caller. Lock held. */
CUresult cc__submit(cc_stream *s, cc_work *w, const cc_fence *extra,
                    size_t nextra, unsigned long long *seq);
/* Sends w to s: a graph node when s captures (*captured set), else queued
 * after the legacy-stream check. Takes ownership of w in every case (freed
 * on failure). Lock held. */
CUresult cc__stream_op(cc_stream *s, cc_work *w, bool *captured,
                       unsigned long long *seq);
/* Blocks until s has completed op seq (lock held, released while waiting). */
void cc__wait(cc_stream *s, unsigned long long seq);
/* The legacy-stream rule under capture: using the legacy stream while a
 * blocking stream of its context captures fails with 906 and invalidates
 * those captures. Lock held. */
CUresult cc__legacy_use(cc_stream *s);

/* ---- events (event.c) ----------------------------------------------------- */
struct cc_event {
    unsigned flags;
    int refs;
    bool dead;
    bool recorded;
    unsigned long long gen;     /* bumped by every record */
    unsigned long long done_gen;
    cc_stream *rs;              /* stream and position of the last record */
    unsigned long long rseq;
    unsigned long long time_ns;
    cc_capture *cap;            /* last recorded into this capture */
    unsigned long long cap_id;
    cc_node **cap_nodes;
    size_t ncap;
};
void cc__event_unref(cc_event *e);
void cc__event_ref(cc_event *e);

/* ---- memory (memory.c) ---------------------------------------------------- */
enum cc_mem_kind { CC_M_DEVICE = 1, CC_M_HOST, CC_M_GRAPH };
typedef struct cc_alloc {
    uintptr_t base;
    size_t size;     /* as requested: range checks are exact, not rounded */
    size_t mapped;   /* as allocated (rounded) */
    enum cc_mem_kind kind;
    cc_ctx *ctx;
    bool live;       /* GRAPH: between its alloc node's launch and free */
    bool freeing;    /* freed by cuMemFreeAsync, released when that runs */
    bool mapped32;   /* from cuMemAlloc (v1): mmap'ed below 4 GiB */
    bool registered; /* HOST: the program's memory, cuMemHostRegister'ed (never freed here) */
    unsigned flags;
    uint64_t fid;    /* its number in the fidelity digest (0: none) */
} cc_alloc;
/* The allocation containing p, or NULL (lock held). */
cc_alloc *cc__mem_find(uintptr_t p);
/* INVALID_VALUE unless [p, p+n) lies inside one device allocation that may
 * be used now (lock held). */
CUresult cc__mem_check_dev(CUdeviceptr p, size_t n);
/* True when [p, p+n) lies inside one pinned host allocation (allocated by
 * the driver or registered). */
bool cc__mem_is_pinned(const void *p, size_t n);
/* INVALID_VALUE unless [p, p+n) lies inside one device allocation that may be
 * used now, or inside one pinned host allocation (device-accessible through
 * unified addressing): what a stream memory operation may touch. */
CUresult cc__mem_check_dev_or_pinned(CUdeviceptr p, size_t n);
CUresult cc__mem_add(uintptr_t base, size_t size, enum cc_mem_kind k,
                     cc_ctx *ctx, bool mapped32, cc_alloc **out);
CUresult cc__mem_add_sized(uintptr_t base, size_t size, size_t mapped, enum cc_mem_kind k,
                           cc_ctx *ctx, bool mapped32, cc_alloc **out);
/* Releases an allocation's memory and its table entry. */
void cc__mem_release(uintptr_t base);
void cc__mem_release_ctx(cc_ctx *c);
/* Unsafe-call rule of capture modes (capture.c): 900 and invalidates the
 * captures that forbid an allocation/free now. Lock held. */
CUresult cc__capture_unsafe_call(void);

/* ---- modules and kernels (module.c) --------------------------------------- */
struct cc_module {
    void *dl;
    const cpuk_kernel *table;
    cc_func *funcs;
    size_t nfuncs;
    cc_ctx *ctx;
    cc_lib *lib;    /* set when the module belongs to a library */
};
struct cc_func {
    cc_module *mod;
    const cpuk_kernel *k;
};
struct cc_lib {
    void *dl;
    const cpuk_kernel *table;
    cc_kern *kerns;
    size_t nkerns;
};
struct cc_kern {
    cc_lib *lib;
    const cpuk_kernel *k;
    cc_func *fn;    /* its CUfunction (libraries are context-independent here) */
};
/* Resolves a launchable handle: a CUfunction, or a CUkernel cast to one.
 * INVALID_HANDLE otherwise. Lock held. */
CUresult cc__func_resolve(CUfunction f, cc_func **fn, cc_kern **kern);
size_t cc__kernel_argsize(const cpuk_kernel *k);

/* ---- launches (launch.c) -------------------------------------------------- */
/* Validates a launch and builds its work item (owning a copy of the
 * parameters). INVALID_HANDLE / INVALID_VALUE, nothing allocated on failure. */
CUresult cc__kernel_work(CUfunction f, cpuk_dim3 grid, cpuk_dim3 block,
                         unsigned shmem, void **params, void **extra,
                         cc_work *w);

/* ---- capture (capture.c) --------------------------------------------------- */
struct cc_capture {
    unsigned long long id;
    cc_graph *g;
    CUstreamCaptureMode mode;
    pthread_t thread;
    cc_stream *origin;
    cc_ctx *ctx;
    bool invalid;
    cc_capture *next;
};
/* If s is capturing, adds w as a graph node (taking ownership) and returns
 * SUCCESS with *captured = true; 901 if the capture is invalidated. If s is
 * not capturing, *captured = false and w is untouched. Lock held. */
CUresult cc__capture_add(cc_stream *s, cc_work *w, bool *captured,
                         cc_node **node);
void cc__capture_invalidate(cc_capture *cap, const char *why);
bool cc__capture_live(cc_capture *cap, unsigned long long id);
/* 900 + invalidate when any stream of c captures (cuCtxSynchronize). */
CUresult cc__capture_ctx_sync(cc_ctx *c);
/* Any stream access that must not touch a capturing stream: 900 +
 * invalidate if s captures. */
CUresult cc__capture_forbid(cc_stream *s);
/* Event record / wait while s captures (capture.c). */
CUresult cc__capture_event_record(cc_stream *s, cc_event *e, unsigned flags,
                                  bool *handled);
CUresult cc__capture_event_wait(cc_stream *s, cc_event *e, unsigned flags,
                                bool *handled);

/* ---- graphs (graph.c) ----------------------------------------------------- */
struct cc_node {
    cc_graph *g;
    unsigned long long id; /* unique for the process: an executable names its
                              nodes by id, so a freed node's address reused by
                              a new node does not alias it */
    size_t idx;          /* creation order: pairs nodes in exec update */
    cc_work w;
    cc_node **deps;
    size_t ndeps;
    /* what the getters hand out: the exec-independent views */
    void **kparams_view;
    CUDA_MEMCPY3D copy_view;
};
struct cc_graph {
    cc_node **nodes;
    size_t n, cap;
};
CUresult cc__graph_new(cc_graph **out);
/* Adds a node owning w (deep ownership moves). OUT_OF_MEMORY: w untouched. */
CUresult cc__graph_add(cc_graph *g, cc_work *w, cc_node *const *deps,
                       size_t ndeps, cc_node **out);
void cc__graph_free(cc_graph *g);
/* What one launch of an executable runs: its nodes' work and their
 * dependencies. Shared by reference between the executable and its queued
 * launches; changed only while the executable holds the sole reference
 * (lock held). */
void cc__plan_unref(cc_plan *p);
/* Runs graph-launch work w (CC_W_GRAPH) on the calling stream worker,
 * without the lock: every node once, each after all its dependencies, in
 * the order w says (graph.c, "the order a launch runs its nodes in"), on
 * the worker and up to w->u.g.workers - 1 helper threads of this worker.
 * Never fails: without memory or threads it runs the nodes one at a time
 * in creation order (logged). */
void cc__plan_run(const cc_work *w);
/* Stops and joins the calling stream worker's graph helpers (graph.c),
 * before the worker exits. The helpers are idle then: they never take the
 * global lock while idle, so the caller may hold it. */
void cc__graph_thread_end(void);
/* The graph order now as a spec a program can set again
 * ("random:12345"), into buf (lock held). */
void cc__order_spec(char *buf, size_t n);

#endif
