/* engine.h - internal interfaces of the capture engine (DESIGN.md §1-§5):
 * the recorder turns intercepted calls into op records (recorder.c), the
 * engine keeps per-stream segments and decides boundaries (engine.c), the
 * capture module turns a segment into an executable graph under the
 * lifecycle rules (capture.c), and the matcher defers, replays or flushes
 * (replay.c). Everything here runs under the engine lock, and reaches the
 * driver only through the real-entry table and the auxiliary table below. */
#ifndef REPRISE_ENGINE_H
#define REPRISE_ENGINE_H

#include "shim.h"

#include <pthread.h>

#include "detector.h"
#include "explain.h"
#include "lifecycle.h"
#include "oprecord.h"

/* Driver entry points the engine calls but does not interpose. */
#define RP_AUX_ENTRIES(X)                                                                    \
    X(cuGraphInstantiateWithFlags, (CUgraphExec * e, CUgraph g, unsigned long long flags))   \
    X(cuGraphLaunch, (CUgraphExec e, CUstream s))                                            \
    X(cuGraphLaunch_ptsz, (CUgraphExec e, CUstream s))                                       \
    X(cuGraphExecDestroy, (CUgraphExec e))                                                   \
    X(cuGraphDestroy, (CUgraph g))                                                           \
    X(cuGraphGetNodes, (CUgraph g, CUgraphNode * nodes, size_t * n))                         \
    X(cuGraphNodeGetType, (CUgraphNode n, CUgraphNodeType * t))                              \
    X(cuStreamCreate, (CUstream * s, unsigned int flags))                                    \
    X(cuStreamGetCtx, (CUstream s, CUcontext * c))                                           \
    X(cuStreamGetFlags, (CUstream s, unsigned int *flags))                                   \
    X(cuEventCreate, (CUevent * e, unsigned int flags))                                      \
    X(cuEventDestroy_v2, (CUevent e))                                                        \
    X(cuEventSynchronize, (CUevent e))                                                       \
    X(cuEventRecord, (CUevent e, CUstream s))                                                \
    X(cuPointerGetAttribute, (void *data, CUpointer_attribute a, CUdeviceptr p))             \
    X(cuFuncGetParamInfo, (CUfunction f, size_t i, size_t * off, size_t * size))             \
    X(cuKernelGetParamInfo, (CUkernel k, size_t i, size_t * off, size_t * size))             \
    X(cuFuncGetName, (const char **name, CUfunction f))                                      \
    X(cuKernelGetName, (const char **name, CUkernel k))                                      \
    X(cuCtxGetCurrent, (CUcontext * c))                                                      \
    X(cuLaunchKernel, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,      \
                       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, \
                       CUstream s, void **params, void **extra))                             \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *h, size_t n, CUstream s))            \
    X(cuMemcpyDtoHAsync_v2, (void *h, CUdeviceptr d, size_t n, CUstream s))                  \
    X(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s_, size_t n, CUstream s))           \
    X(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream s))               \
    X(cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream s))             \
    X(cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream s))               \
    X(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode mode))                       \
    X(cuStreamEndCapture, (CUstream s, CUgraph * g))                                         \
    X(cuMemHostAlloc, (void **p, size_t n, unsigned int flags))                              \
    X(cuMemFreeHost, (void *p))                                                              \
    X(cuStreamDestroy_v2, (CUstream s))                                                      \
    X(cuGraphUpload, (CUgraphExec e, CUstream s))                                            \
    X(cuStreamGetCaptureInfo_v2, (CUstream s, CUstreamCaptureStatus * st, cuuint64_t * id,   \
                                  CUgraph * g, const CUgraphNode **deps, size_t *ndeps))     \
    X(cuGraphExecKernelNodeSetParams_v2,                                                     \
      (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v2 *p))                   \
    X(cuGraphExecMemcpyNodeSetParams,                                                        \
      (CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p, CUcontext c))                   \
    X(cuGraphExecMemsetNodeSetParams,                                                        \
      (CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c))         \
    X(cuGraphExecUpdate_v2, (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo * info)) \
    X(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int flags))                        \
    X(cuCtxPushCurrent_v2, (CUcontext c))                                                    \
    X(cuCtxPopCurrent_v2, (CUcontext * c))                                                   \
    X(cuStreamSynchronize, (CUstream s))

struct rp__aux {
#define X(name, params) CUresult(CUDAAPI *name) params;
    RP_AUX_ENTRIES(X)
#undef X
};

/* Engine settings, from the options table. */
struct rp__engine_config {
    unsigned int warmup;   /* REPRISE_WARMUP */
    unsigned int max_variants; /* REPRISE_MAX_VARIANTS */
    size_t max_updates;    /* REPRISE_MAX_UPDATES */
    size_t min_ops;        /* REPRISE_MIN_OPS */
    size_t max_ops;        /* REPRISE_MAX_OPS */
    size_t max_graphs;     /* REPRISE_MAX_GRAPHS: sequences with a graph, per context */
    uint64_t max_staging;  /* REPRISE_MAX_STAGING: live staging bytes per context */
    uint64_t max_seq_bytes;/* REPRISE_MAX_SEQ_BYTES: parameter bytes per sequence */
    size_t table_size;     /* detector slots */
};

/* The bounds (enum rp__bound) are in explain.h, with what each means. */
/* Count a bound hit in `cs` (NULL: no context, counted for the process)
 * and say so once per bound (stats.c). */
struct rp_ctxstate;
void rp__bound_hit(struct rp_ctxstate *cs, enum rp__bound b);

/* Why an op ran eagerly (stats). */
enum rp__eager_reason {
    RP_EAGER_WARMING_UP,     /* its segment had not been seen warmup times yet */
    RP_EAGER_NOT_CAPTURABLE, /* a call the engine does not capture */
    RP_EAGER_SHORT,          /* its segment was shorter than REPRISE_MIN_OPS */
    RP_EAGER_DIVERGED,       /* deferred, then the sequence diverged: flushed */
    RP_EAGER_CAPTURE_FAILED, /* its segment's capture failed (backing off) */
    RP_EAGER_BOUND,          /* a bound was hit (ops, graphs, table, memory) */
    RP_EAGER_PROGRAM_CAPTURE,/* the program was capturing itself */
    RP_EAGER_NO_LAYOUT,      /* the kernel's parameter layout cannot be read */
    RP_EAGER_EXCLUDED,       /* the kernel is kept out by REPRISE_EXCLUDE/INCLUDE */
    RP_EAGER_REASON_COUNT
};
extern const char *const rp__eager_reason_names[RP_EAGER_REASON_COUNT];

/* A sequence: a segment with an executable graph. */
struct rp_ctxstate;

typedef struct rp_seq {
    rp_det_entry *det;      /* the detector's entry: holds the recorded ops */
    struct rp_ctxstate *cs;
    CUcontext ctx;
    CUgraphExec exec;
    rp_lc_sealed sealed;    /* graph + staging, released together */
    CUgraph origin;         /* when exec was taken over by an exec update: the
                               graph it was instantiated from, whose nodes name
                               its nodes (`nodes`); destroyed after exec */
    size_t *stage_of;       /* per op: staging index (HtoD ops), else SIZE_MAX */
    CUevent done;           /* recorded after each launch that reads staging */
    int done_pending;
    uint64_t replays;
    uint64_t divergences;
    uint64_t last_use;
    unsigned int id;
    int broken;             /* its launch failed: no longer offered, dropped later */
    size_t div_op;          /* the last divergence: index of the op that differed */
    const char *div_why;    /* ... and why (NULL: none yet) */
    /* Sequences with volatile fields (NULL vmask: an exact-content one). */
    uint64_t *vmask;        /* per op: the fields updated before a replay */
    CUgraphNode *nodes;     /* per op: the node that names it in exec, one of
                               the graph exec was instantiated from (`origin`
                               if set, else sealed.graph); NULL if unknown */
    rp_op *held;            /* per op: the values the executable holds now */
    uint64_t updates;       /* node updates applied */
    uint64_t widened;       /* fields found volatile after the capture */
    unsigned int too_many;  /* replays skipped in a row for too many updates */
    uint64_t captured_at;   /* the occurrence at which it was captured */
} rp_seq;

#define RP_MAX_CANDIDATES 8

/* One stream as the engine sees it. */
typedef struct rp_stream {
    int used;
    struct rp_ctxstate *cs;
    CUstream handle;        /* normalised: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created handle */
    pthread_t tid;          /* the owning thread, for the per-thread stream */
    CUcontext ctx;
    int legacy, blocking;
    /* the segment being learnt: eager ops since the last boundary */
    rp_op *seg;
    size_t nseg, capseg;
    int seg_overflow;
    size_t seg_diverged;    /* ops of the segment that were flushed after a divergence */
    /* the matcher: ops deferred while they match candidate sequences */
    rp_op *def;
    size_t ndef, capdef;
    rp_seq *cand[RP_MAX_CANDIDATES];
    size_t ncand;
    rp_seq *complete;       /* longest candidate fully matched so far */
    unsigned int churn;     /* back-off level: warmup x 2^churn for new captures */
    /* The per-thread stream of another thread cannot be named from here:
     * its deferred work, resolved by another thread, goes to the context's
     * private stream after `start_ev` (recorded on the owner's stream when
     * the deferral began), and the owner's stream then waits for
     * `handoff_ev` before its next operation. */
    CUevent start_ev, handoff_ev;
    int start_recorded, must_wait;
} rp_stream;

/* Only uint64_t members: the report sums contexts member by member. */
struct rp__engine_stats {
    uint64_t ops_seen[6];   /* by rp_op_kind (index 0: not capturable) */
    uint64_t ops_replayed;
    uint64_t ops_eager[RP_EAGER_REASON_COUNT];
    uint64_t segments;
    uint64_t replays;
    uint64_t replay_failures;
    uint64_t divergences;
    uint64_t graphs_captured;
    uint64_t capture_failures;
    uint64_t graphs_dropped;
    uint64_t bound_hits;
    uint64_t bound_hits_by[RP_BOUND_COUNT]; /* the same, per bound (explain.h) */
    uint64_t capture_ns, instantiate_ns;
    uint64_t staging_bytes;
    uint64_t volatile_captures;  /* sequences captured with volatile fields */
    uint64_t updates;            /* node updates applied before replays */
    uint64_t update_failures;    /* updates the driver refused (then eager) */
    uint64_t too_many_updates;   /* replays skipped: more than REPRISE_MAX_UPDATES */
    uint64_t widenings;          /* fields found volatile after a capture */
    uint64_t instantiates;       /* executables instantiated */
    uint64_t exec_updates;       /* executables updated to a new graph instead */
    uint64_t exec_update_refused;/* updates refused by the driver (then instantiated) */
    uint64_t backoffs;           /* times a stream's warmup was lengthened (churn) */
    uint64_t evictions;          /* graphs dropped to stay within REPRISE_MAX_GRAPHS */
    uint64_t staging_live_bytes; /* staging held by live graphs now */
    uint64_t nodes_kernel, nodes_memcpy, nodes_memset, nodes_other; /* in captured graphs */
};

#define RP_MAX_STREAMS 128  /* per context */

/* Per-context engine state: everything a call on one context touches, under
 * that context's lock, so contexts (devices) never contend. */
typedef struct rp_ctxstate {
    CUcontext ctx;
    pthread_mutex_t lock;
    pthread_rwlock_t gate;  /* writers: capture windows; readers: cuCtxSynchronize, teardown */
    CUstream priv;          /* the private capture stream (non-blocking) */
    rp_lc_ctx lc;
    rp_lc_window win;
    rp_stream streams[RP_MAX_STREAMS];
    size_t nstreams;        /* slots in use are all below this index */
    rp_seq **seqs;          /* sequences with a graph */
    size_t nseqs, capseqs;
    rp_detector det;        /* by content: exact repeats, one graph each */
    rp_detector sdet;       /* by structure: repeats whose arguments change */
    struct rp__engine_stats st;
    void *layouts;          /* recorder.c's parameter-layout cache */
} rp_ctxstate;

/* ---- engine.c ------------------------------------------------------------- */
extern struct rp__aux rp__aux;
extern struct rp__engine_config rp__eng_cfg;

/* Install the engine's members into `core` (when reprise is enabled). */
void rp__engine_install(struct rp__driver *core, const struct rp__driver *real);
/* Resolve deferred work everywhere and end every segment (exit, global
 * boundaries). Returns the first error a flushed call returned. */
CUresult rp__engine_resolve_all(void);
/* A copy of the counters of context number `i` (0-based, in the order the
 * engine met them), taken under its lock if that can be had within a moment
 * (at exit another thread may hold it for ever). Returns 0 past the last. */
int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions);
struct rp__seq_info {
    unsigned int id;
    size_t ops;
    uint64_t occurrences, replays, divergences;
    char first_kernel[256];
    size_t div_op;          /* last divergence, when div_why is not NULL */
    const char *div_why;
    char div_kernel[256];
    uint64_t updates;       /* node updates applied before its replays */
    uint64_t captured_at;   /* the occurrence at which it was captured */
    char first_kernels[800];/* the names of its first (up to three) kernels */
    unsigned int variants;  /* sequences with its structure (itself included) */
    char volatile_fields[256]; /* "kernel#param op:field ..." ("" if exact) */
};
/* Captures the program began itself (left alone). */
uint64_t rp__engine_program_captures(void);
/* Keep the report line of a sequence whose graph is being dropped. */
void rp__seq_retire(const rp_seq *s);
/* Copy up to `max` sequences (dropped ones first) with a graph into `out`; returns how many. */
size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max);

/* ---- recorder.c ----------------------------------------------------------- */
/* Remember that `k` is a CUkernel (from cuLibraryGetKernel). */
void rp__rec_note_kernel(CUkernel k);
/* Fill `op` for a kernel launch; the parameter bytes go to `op->params`
 * (malloc'd; the caller owns the record). Returns 0, or an eager reason
 * when the launch cannot be recorded (op untouched). */
int rp__rec_kernel(rp_ctxstate *cs, rp_op *op, CUfunction f, const unsigned int grid[3],
                   const unsigned int block[3], unsigned int shmem, void **kernelParams,
                   void **extra, enum rp__eager_reason *why);
/* The kernelParams array of a kernel record: ptrs[i] points at parameter i
 * in its packed bytes; *kp is ptrs, or NULL for a kernel without parameters.
 * Returns 0, or -1 if the kernel's layout is unknown. */
int rp__rec_param_ptrs(rp_ctxstate *cs, const rp_op *op, void **ptrs, void ***kp);
/* Re-issue a record exactly as the program issued it: the same entry
 * point (sync or async form, _ptsz/_ptds variant), on its own stream. */
CUresult rp__rec_issue_as_called(rp_ctxstate *cs, const rp_op *op);
/* Re-issue a recorded kernel launch on `stream` through the real driver. */
CUresult rp__rec_issue(rp_ctxstate *cs, const rp_op *op, CUstream stream, const void *staged);
/* The parameter layout of a kernel record (NULL for other kinds, or if it
 * cannot be read). Valid until rp__rec_reset of the context. */
const rp_param_layout *rp__rec_layout(rp_ctxstate *cs, const rp_op *op);
/* The kernel name of a record ("" if unknown); for stats. */
const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op);
/* Is `host` pinned (page-locked) memory the driver knows? */
int rp__rec_is_pinned(const void *host);
void rp__rec_reset(rp_ctxstate *cs);

/* ---- capture.c ------------------------------------------------------------ */
/* Capture the segment of detector entry `e` into a new sequence. Returns the
 * sequence, or NULL (the reason counted and logged once). */
/* `reuse`, when not NULL, is a sequence whose executable may be updated
 * to the new graph (cuGraphExecUpdate_v2) instead of instantiating a new
 * one; on success its executable moves to the new sequence (reuse->exec
 * becomes NULL), with the graph it was instantiated from and that graph's
 * node handles (see `origin`), and the caller drops `reuse`. */
rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse);
void rp__seq_destroy(rp_seq *s);
/* The lifecycle's view of the driver (filled once from the aux table). */
extern rp_lc_driver rp__lc_drv;

/* ---- replay.c ------------------------------------------------------------- */
/* Offer a recorded capturable op to the matcher. Returns 1 when the op was
 * deferred (the record now belongs to the stream), 0 when it must run
 * eagerly now (anything deferred before it was resolved first). */
int rp__match_offer(rp_stream *st, rp_op *op, CUresult *err);
/* Resolve what is deferred on `st`: replay a complete match, flush the
 * rest eagerly in order. Returns the first error of a flushed call. Any
 * thread may call it (see rp_stream on the per-thread stream). */
CUresult rp__match_resolve(rp_stream *st);
/* 1 when `st` is another thread's per-thread stream (the calling thread
 * cannot name it: its deferred work is resolved on the private stream). */
int rp__stream_is_foreign(const rp_stream *st);
/* The owner of a per-thread stream is about to use it: if another thread
 * resolved its deferred work, make the stream wait for that work first. */
CUresult rp__stream_rejoin(rp_stream *st);
/* After resolve_all_locked: clears the pending rejoin of another thread's
 * per-thread stream with a host wait (for a program capture's begin, after
 * which the owner's calls go straight to the driver and cannot wait). */
void rp__stream_settle(rp_stream *st);
/* The context's private stream, created on first use (NULL if it cannot
 * be). */
CUstream rp__private_stream(rp_ctxstate *cs);
/* Add a sequence to its context's list (which owns it from now on). */
void rp__seqs_add(rp_ctxstate *cs, rp_seq *s);
/* Destroy every sequence of the context (their report lines are kept). */
void rp__seqs_drop_all(rp_ctxstate *cs);

/* engine.c: the learning segment of a stream. */
/* Append an eagerly executed op to the stream's segment (the record moves
 * into the segment; `op` is zeroed). */
void rp__seg_append(rp_stream *st, rp_op *op, enum rp__eager_reason pending);
/* The ops before a replay are not contiguous with those after it: the
 * segment learnt so far ends here. */
void rp__seg_cut(rp_stream *st);

#endif
