/* engine.h - internal interfaces of the capture engine (DESIGN.md §1-§5),
 * in data-path order: hooks.c (the entry points, generated from the roles in
 * entries.h) records a call (recorder.c) and offers it to the matcher
 * (replay.c); streams.c knows contexts and streams, their implicit ordering
 * and boundaries, and resolves what is deferred (replay or flush) on behalf
 * of whoever must; learn.c keeps each stream's learning segment, asks the
 * detector (detector.c) and captures (capture.c, under the lifecycle rules
 * of lifecycle.c); engstats.c keeps the report lines. Every module reaches
 * the driver only through the table the engine was installed with (cs->drv),
 * never through a global table or dlsym, so unit tests hand it fakes. State
 * is per context, under that context's lock. */
#ifndef REPRISE_ENGINE_H
#define REPRISE_ENGINE_H

#include "core.h"

#include <pthread.h>

#include "detector.h"
#include "explain.h"
#include "lifecycle.h"
#include "oprecord.h"
#include "period.h"

/* Engine settings, from the options table. */
struct rp__engine_config {
    unsigned int warmup;   /* REPRISE_WARMUP */
    unsigned int max_variants; /* REPRISE_MAX_VARIANTS */
    size_t max_updates;    /* REPRISE_MAX_UPDATES */
    size_t min_ops;        /* REPRISE_MIN_OPS */
    size_t max_ops;        /* REPRISE_MAX_OPS */
    size_t max_held;       /* REPRISE_MAX_HELD: chunk length of a step found by its period */
    uint64_t patience;     /* REPRISE_PATIENCE: ops without a replay before a stream rests (0: never) */
    unsigned int idle_us;  /* REPRISE_IDLE_US: held work issued after this long without a call (0: never) */
    size_t max_graphs;     /* REPRISE_MAX_GRAPHS: sequences with a graph, per context */
    uint64_t max_staging;  /* REPRISE_MAX_STAGING: live staging bytes per context */
    uint64_t max_seq_bytes;/* REPRISE_MAX_SEQ_BYTES: parameter bytes per sequence */
    size_t table_size;     /* detector slots */
    int cost_model;        /* REPRISE_COSTS not off: past max_updates, measured costs decide */
    int costs_pinned;      /* REPRISE_COSTS=E,U,L: these costs, not measured ones */
    uint64_t cost_ns[3];   /* ... in ns, by enum rp_cost_kind */
};

extern struct rp__engine_config rp__eng_cfg;

/* What the cost model measures (cost.c). */
enum rp_cost_kind { RP_COST_EAGER, RP_COST_UPDATE, RP_COST_LAUNCH, RP_COST_KINDS };

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
    RP_EAGER_NO_PERIOD,      /* no boundary and no period: its segment outgrew REPRISE_MAX_OPS */
    RP_EAGER_RESTING,        /* its stream was resting from learning (nothing it learnt paid) */
    RP_EAGER_REASON_COUNT
};
extern const char *const rp__eager_reason_names[RP_EAGER_REASON_COUNT];

#define RP_FJ_STREAMS 8  /* streams besides its home a sequence may run ops on */
#define RP_FJ_EVENTS 16  /* program events a sequence may record */

/* A sequence: a segment with an executable graph. */
struct rp_ctxstate;

/* A sequence's kernel op as the matcher's fast path compares a launch
 * with it (match.h), made once at capture: what a launch must name, and
 * its arguments' values when every one is 4 or 8 bytes (at most
 * RP_FAST_PARAMS of them); otherwise the layout is walked
 * (rp__op_is_launch). `f` NULL: not a kernel the fast path can
 * match (no layout, launch attributes). */
#define RP_FAST_PARAMS 32
typedef struct rp_fast {
    CUfunction f;
    CUstream stream;
    uint32_t tag;           /* rp__fast_tag(entry, ptsz) of the call recorded */
    uint32_t nparams;
    unsigned int geometry[7]; /* grid, block, shared memory bytes */
    uint32_t words;         /* 1: every parameter is a word, valued in `vals` */
    uint32_t size4;         /* bit i: parameter i is 4 bytes (else 8) */
    const uint64_t *vals;   /* the parameters' values */
} rp_fast;

static inline uint32_t rp__fast_tag(unsigned int entry, int ptsz)
{
    return entry | (uint32_t)!!ptsz << 16;
}

typedef struct rp_seq {
    rp_det_entry *det;      /* the detector's entry: holds the recorded ops */
    struct rp_ctxstate *cs;
    CUcontext ctx;
    CUstream home;          /* the stream whose trace it is: replayed only there */
    CUgraphExec exec;
    rp_lc_sealed sealed;    /* graph + staging, released together */
    CUgraph origin;         /* when exec was taken over by an exec update: the
                               graph it was instantiated from, whose nodes name
                               its nodes (`ex.nodes`); destroyed after exec */
    size_t *stage_of;       /* per op: staging index (HtoD ops), else SIZE_MAX */
    CUevent done;           /* recorded after each launch that reads staging */
    int done_pending;
    uint64_t replays;
    uint64_t divergences;
    uint64_t last_use;
    unsigned int id;
    int broken;             /* its launch failed: no longer offered, dropped later */
    int by_period;          /* its segment was delimited by the stream's period, not a boundary */
    size_t div_op;          /* the last divergence: index of the op that differed */
    const char *div_why;    /* ... and why (NULL: none yet) */
    uint64_t captured_at;   /* the occurrence at which it was captured */
    /* Sequences with volatile fields (NULL vmask: an exact-content one). */
    uint64_t *vmask;        /* per op: the fields updated before a replay */
    const rp_param_layout **lay; /* per op: a kernel's layout (else NULL), for
                               matching a launch without recording it first;
                               NULL if it could not be allocated */
    /* Its executables and what they hold (seq/exec.c). */
    struct rp_seq_exec {
        CUgraphNode *nodes; /* per op: the node that names it in exec, one of
                               the graph exec was instantiated from (`origin`
                               if set, else sealed.graph); NULL if unknown */
        rp_op *held;        /* per op: the values the executable holds now */
        /* Executables beside `exec` for contents that come back (buffers in
         * rotation): instantiated from sealed.graph, each holding its own
         * values. A replay runs the one that holds its content, with no
         * update; the others wait. */
#define RP_SEQ_ALTS 15
        unsigned int nalt;
        CUgraphExec alt[RP_SEQ_ALTS];
        rp_op *alt_held[RP_SEQ_ALTS];
        uint64_t alt_hash[RP_SEQ_ALTS];
        uint64_t held_hash; /* the hash of what exec holds (0: not known) */
        uint64_t hashed_widened; /* `widened` when the hashes were taken */
#define RP_SEQ_RECENT 16
        uint64_t recent[RP_SEQ_RECENT]; /* the contents of its last replays, hashed */
        unsigned int recent_at;
        uint64_t updates;   /* node updates applied */
        uint64_t widened;   /* fields found volatile after the capture */
        unsigned int too_many; /* replays skipped in a row for too many updates */
    } ex;
    /* The matcher's images of its kernels (match/). */
    struct rp_seq_match {
        struct rp_fast *fast; /* per op, for the fast path (NULL: none) */
        uint64_t *fvals;    /* the values rp_fast.vals point to */
        uint32_t *poff;     /* with vmask: per op, where a matched launch's
                               parameters go in the stream's arena */
        size_t ptotal;      /* ... and the arena's size for this sequence */
    } match;
    int first_unique;       /* no other sequence of its home begins with its first
                               op's kernel: the fast path may begin a match
                               (reckoned by the sequence table, seq/) */
    /* Fork/join (a sequence with event ops or ops of other streams; seq/forkjoin.c). */
    struct rp_seq_fj {
        int multi;          /* it has event ops or other streams' ops */
        int rooted;         /* its first event record is on its home, and each other
                               stream's first op waits on an event recorded in it:
                               all its work comes after the home stream's earlier work */
        unsigned int nside; /* the other streams it runs ops on ... */
        CUstream side[RP_FJ_STREAMS]; /* ...: idle before a replay, waiting after */
        CUevent side_first[RP_FJ_STREAMS]; /* the event each one's first op waits on (or NULL) */
        size_t nexts;       /* the events it waits on recorded outside it: */
        CUevent *exts;      /* complete (or known to be) before a replay */
        /* After a replay, its event ops again, in its order, without its
         * work (fj_after): every record, and every wait on an event recorded
         * earlier in it by another stream. The program's streams and events
         * then stand as they would have after the step eagerly: each event
         * last recorded where the step last recorded it, after what came
         * before it there, each stream's last op its last event op. */
        struct rp_fj_shadow {
            CUstream stream;
            CUevent ev;
            int record;     /* 1: a record, 0: a wait */
        } *shadow;
        size_t nshadow;
    } fj;
} rp_seq;


#define RP_MAX_CANDIDATES 8

#define RP_ARENA_GEOMETRY 32 /* an op's place in the matcher's arena: its geometry
                              * (28 bytes), then its parameters, a multiple of 8 bytes */

/* One stream as the engine sees it. Each layer's fields are its own
 * sub-structure: a grep for `->learn.`, `->match.`, `->fj.` shows who reaches
 * into whose state. */
typedef struct rp_stream {
    int used;
    struct rp_ctxstate *cs;
    CUstream handle;        /* normalised: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a created handle */
    pthread_t tid;          /* the owning thread, for the per-thread stream */
    CUcontext ctx;
    int legacy, blocking;
    uint64_t opno;          /* the position its next capturable op gets */
    uint64_t idle_seen;     /* opno when the idle watch last looked (coord/idle.c) */
    /* Learning (learn/): the segment being learnt, eager ops since the last
     * boundary; its period; and when learning stops paying. */
    struct rp_stream_learn {
        rp_op *seg;
        size_t nseg, capseg;
        int overflow;       /* records were dropped: it outgrew REPRISE_MAX_OPS or memory */
        size_t diverged;    /* ops of the segment that were flushed after a divergence */
        unsigned int churn; /* back-off level: warmup x 2^churn for new captures */
        uint64_t boundary_opno; /* opno at the stream's last host boundary */
        /* With no replay for a while, the stream rests until rest_until
         * (nothing recorded, nothing learnt), for longer each time it rests
         * again in vain. */
        uint64_t paid_opno; /* opno at its last replay, or when its last rest ended */
        uint64_t rest_until;
        unsigned int rest_level;
        size_t longest_seg; /* its longest segment so far */
        /* Finding the step without boundaries: once a segment outgrows
         * REPRISE_MAX_HELD the stream's op shapes feed a period detector
         * (allocated then), whose cuts end segments where a step (or a
         * chunk of it) starts. */
        rp_period *per;
        int cut_by_period;  /* the segment being learnt began at a period cut */
        int per_align;      /* a period was just accepted on a fork/join run: where
                               its steps start is chosen once a period is learnt */
    } learn;
    /* The matcher (match/): ops deferred while they match candidate sequences. */
    struct rp_stream_match {
        rp_op *def;
        size_t ndef, capdef;
        rp_seq *cand[RP_MAX_CANDIDATES];
        size_t ncand;
        rp_seq *complete;   /* longest candidate fully matched so far */
        /* The fast path defers matched launches without writing them down:
         * when `borrowed_seq` is set, def[borrowed_from..ndef) are its ops,
         * borrowed, at positions borrowed_opno, borrowed_opno + 1, ...
         * (written out before anything else reads def; room for the whole
         * sequence is made beforehand). */
        rp_seq *borrowed_seq;
        size_t borrowed_from;
        uint64_t borrowed_opno;
        rp_seq *hint;       /* the sequence replayed last here (cleared when it goes) */
        /* The fast path's launches with volatile fields are deferred with
         * their parameters here (the ops borrow them: a flush copies them),
         * at the sequence's offsets (rp_seq.match.poff): every op so deferred
         * is of the one candidate, so nothing points in here when it grows. */
        uint8_t *arena;
        size_t arena_cap;
        size_t *upd, capupd; /* a replay's nodes to update */
    } match;
    /* The per-thread stream of another thread cannot be named from here:
     * its deferred work, resolved by another thread, goes to the context's
     * private stream after `start_ev` (recorded on the owner's stream when
     * the deferral began), and the owner's stream then waits for `done_ev`
     * before its next operation (coord/handoff.c). */
    struct rp_stream_handoff {
        CUevent start_ev, done_ev;
        int start_recorded, must_wait;
    } handoff;
    /* Its trace (coord/): a created stream that waited on an event recorded
     * (or waited on) in another stream's trace since that stream's last host
     * boundary joins it: its ops go into that trace (`owner`'s segment and
     * deferred list) until then. `epoch` names the trace: a new value,
     * unique in the context, at each host boundary of the stream. */
    struct rp_stream_trace {
        struct rp_stream *owner;
        unsigned int nmembers; /* streams that joined this one's trace */
        uint64_t epoch;
    } trace;
    /* Fork/join replays (seq/forkjoin.c). */
    struct rp_stream_fj {
        /* Set after a fork/join replay made this stream wait for its graph
         * on `after_home`: the value rp__issued will have if nothing else
         * reaches any stream meanwhile. While it does, this stream's last
         * work is that replay's, which the home stream is ordered after. */
        uint64_t after_gen;
        CUstream after_home;
        CUevent tail_ev;    /* the home stream after a flush: its last op recorded this */
    } fj;
} rp_stream;

#define RP_ATTR_IDS 17 /* launch attribute ids counted in the stats (CUDA 13: 0-16) */

/* Only uint64_t members: the report sums contexts member by member. */
struct rp__engine_stats {
    uint64_t ops_seen[RP_OP_KINDS]; /* by rp_op_kind (index 0: not capturable) */
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
    uint64_t idle_flushes;       /* held work issued because its stream went quiet */
    uint64_t periods_found;      /* periods accepted on streams without boundaries */
    uint64_t period_cuts;        /* segments ended by a period cut (a step or chunk start) */
    uint64_t rests;              /* times a stream stopped learning for a while (no replay paid) */
    uint64_t cost_samples[RP_COST_KINDS]; /* calls timed for the cost model, by kind */
    uint64_t cost_ns[RP_COST_KINDS];      /* ... and their total time */
    uint64_t beyond_max_updates; /* replays with more than REPRISE_MAX_UPDATES updates (costs allowed) */
    uint64_t landmarks_found;    /* streams with no period cut after a run of ops that comes back */
    uint64_t variant_execs;      /* executables added to a sequence with updates for a content that came back */
    uint64_t variant_exec_hits;  /* replays run by such an executable, holding their content already */
    uint64_t fork_joins;         /* graphs captured with more than one stream */
    uint64_t stream_joins;       /* streams that joined another's trace by a wait */
    uint64_t fork_joins_busy;    /* fork/join replays not made: streams busy (then eager) */
    uint64_t staging_busy;       /* replays not made: the previous launch still reading
                                    its staging (then eager) */
    uint64_t cross_context_waits;/* waits on an event of another context (never one graph) */
    uint64_t event_settles;      /* traces ended because a call named their event and
                                    could not join them (another context, a destroy...) */
    uint64_t attr_boundaries[RP_ATTR_IDS]; /* launches kept eager for an attribute, by id
                                             (0: more than RP_MAX_ATTRS, or an unknown id) */
};

#define RP_MAX_STREAMS 128  /* per context */
#define RP_FUNC_CACHE 64    /* functions whose layout is cached per context (a power of two) */

/* Measured costs, per context (cost.c): the mean of each kind in ns. */
typedef struct rp_costs {
    uint64_t avg[RP_COST_KINDS];
    uint32_t n[RP_COST_KINDS]; /* samples taken, up to 16 (then a moving mean) */
    uint32_t tick;             /* eager launches seen, to time one in 32 */
} rp_costs;

/* A context's lock: one futex word (0 free, 1 held, 2 held with waiters).
 * Every call on a context takes it; uncontended it costs a compare-exchange
 * and an exchange, a fifth of a glibc mutex's instructions. */
typedef struct rp_lock {
    _Atomic int v;
} rp_lock;
void rp__lock_wait(rp_lock *l); /* contended: sleeps until it holds the lock */
void rp__lock_wake(rp_lock *l); /* released with waiters: wakes one */
static inline __attribute__((always_inline)) int rp__trylock(rp_lock *l)
{
    int free_ = 0;
    return atomic_compare_exchange_strong_explicit(&l->v, &free_, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}
static inline __attribute__((always_inline)) void rp__lock(rp_lock *l)
{
    if (RP_UNLIKELY(!rp__trylock(l)))
        rp__lock_wait(l);
}
static inline __attribute__((always_inline)) void rp__unlock(rp_lock *l)
{
    if (RP_UNLIKELY(atomic_exchange_explicit(&l->v, 0, memory_order_release) != 1))
        rp__lock_wake(l);
}

/* Per-context engine state: everything a call on one context touches, under
 * that context's lock, so contexts (devices) never contend. */
typedef struct rp_ctxstate {
    CUcontext ctx;
    rp_lock lock;
    pthread_rwlock_t gate;  /* writers: capture windows; readers: cuCtxSynchronize, teardown */
    CUstream priv;          /* the private capture stream (non-blocking) */
    rp_lc_ctx lc;
    rp_lc_window win;
    rp_stream streams[RP_MAX_STREAMS];
    size_t nstreams;        /* slots in use are all below this index */
    rp_stream *last_stream; /* the slot rp__stream_of found last (checked before use) */
    rp_seq **seqs;          /* sequences with a graph */
    size_t nseqs, capseqs;
    size_t nalts;           /* their executables beside their own (rp_seq.alt) */
    rp_detector det;        /* by content: exact repeats, one graph each */
    rp_detector sdet;       /* by structure: repeats whose arguments change */
    struct rp__engine_stats counters;
    void *layouts;          /* recorder.c's parameter-layout cache */
    struct rp_func_cache {  /* ... and a direct-mapped cache in front of it */
        const void *func;
        void *layout;       /* its slot in `layouts` (NULL: none) */
        int is_kernel;      /* the handle is a CUkernel */
    } fcache[RP_FUNC_CACHE];
    const struct rp__driver *drv; /* the table the engine was installed with */
    rp_costs costs;
    uint64_t trace_clock;      /* the last trace name given (rp_stream.trace.epoch) */
    /* What captures and replays of fork/join sequences use, created at the
     * first capture that needs them: private side streams and events
     * standing for the program's in the capture, and the events that fork
     * them from and join them to the private stream, and order the side
     * streams after a replay (post). */
    struct rp_fj {
        CUstream side[RP_FJ_STREAMS];
        CUevent ev[RP_FJ_EVENTS];
        CUevent fork, join[RP_FJ_STREAMS], post;
    } fj;
} rp_ctxstate;

/* ---- hooks.c: the entry points --------------------------------------------- */

/* A launch as the program made it: through cuLaunchKernel (cfg NULL) or
 * cuLaunchKernelEx (cfg), plain or _ptsz. */
typedef struct rp_launch {
    CUfunction f;
    unsigned int grid[3], block[3], shmem;
    CUstream s;
    void **kp, **extra;
    const CUlaunchConfig *cfg;
    int ptsz;
} rp_launch;
_Static_assert(offsetof(rp_launch, block) == offsetof(rp_launch, grid) + 3 * sizeof(unsigned int) &&
                   offsetof(rp_launch, shmem) == offsetof(rp_launch, block) + 3 * sizeof(unsigned int),
               "a launch's geometry is seven consecutive unsigned ints, as in a record");

/* Install the engine into `core`, calling the driver through `drv` (which
 * must outlive the engine), configured by `cfg`: every interposed entry
 * gets the hook its role in entries.h names. Returns 0, or -1 (one line
 * logged, `core` left forwarding) when `drv` lacks an entry point the
 * engine needs. */
int rp__engine_install(struct rp__driver *core, const struct rp__driver *drv,
                       const struct rp__engine_config *cfg);

/* ---- streams.c: contexts, streams, boundaries, resolution ------------------ */

/* The driver table every context of the engine calls through. */
void rp__streams_setup(const struct rp__driver *drv);

/* The state of context `ctx`, created on first use; NULL when MAX contexts
 * are tracked or memory runs out (a bound hit: that work runs eagerly). */
rp_ctxstate *rp__ctx_of(CUcontext ctx);
/* The context whose work stream `s` (as named in an entry point; `ptsz`:
 * a _ptsz/_ptds one) carries; NULL if the driver cannot say. */
rp_ctxstate *rp__ctx_of_stream_slow(CUstream s, int ptsz);
/* Each thread caches the last created stream it named and its context's
 * state; a destroyed stream bumps the generation (its handle may come back
 * for another context). */
/* A stream the program created (not the legacy or the per-thread stream,
 * named through the current context): the only kind the per-thread and
 * per-context caches below hold. */
static inline int rp__stream_is_created(CUstream s)
{
    return s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}
extern _Atomic unsigned int rp__stream_gen;
extern RP_TLS CUstream rp__tl_stream;
extern RP_TLS unsigned int rp__tl_gen;
extern RP_TLS struct rp_ctxstate *rp__tl_cs;
static inline rp_ctxstate *rp__ctx_of_stream(CUstream s, int ptsz)
{
    if (RP_LIKELY(s == rp__tl_stream && rp__tl_cs && rp__stream_is_created(s) &&
                  rp__tl_gen == atomic_load_explicit(&rp__stream_gen, memory_order_acquire)))
        return rp__tl_cs;
    return rp__ctx_of_stream_slow(s, ptsz);
}
/* The current context's state, or NULL. */
rp_ctxstate *rp__ctx_current(void);
/* Context number `i` in the order the engine met them, NULL past the last. */
rp_ctxstate *rp__ctx_at(size_t i);
/* The engine's record of stream `s` of `cs` (cs locked); NULL when the
 * table is full or the stream's flags cannot be read (the call then runs
 * eagerly). The per-thread stream is one per thread; its owner coming back
 * first waits for work another thread resolved for it. */
rp_stream *rp__stream_of(rp_ctxstate *cs, CUstream s, int ptsz);
/* The same, first trying the stream found last (a created stream's record
 * with no wait pending; cs locked). */
static inline rp_stream *rp__stream_fast(rp_ctxstate *cs, CUstream s, int ptsz)
{
    rp_stream *st = cs->last_stream;
    if (RP_LIKELY(st && rp__stream_is_created(s) && st->handle == s && st->used &&
                  !st->handoff.must_wait))
        return st;
    return rp__stream_of(cs, s, ptsz);
}
/* Resolve and end the segments of every stream implicitly ordered with `st`
 * (itself included when `self`). Returns the first flush error. */
CUresult rp__end_ordered(rp_stream *st, int self);
/* The same for the streams ordered with `st`, itself left out, at the cost
 * of one test when it is the context's only stream (every capturable op
 * does this). */
static inline __attribute__((always_inline)) CUresult rp__end_ordered_others(rp_stream *st)
{
    return st->cs->nstreams > 1 ? rp__end_ordered(st, 0) : CUDA_SUCCESS;
}
/* The stream whose trace `st`'s ops join (itself, or the stream it joined). */
static inline rp_stream *rp__home(rp_stream *st)
{
    return st->trace.owner ? st->trace.owner : st;
}
/* A host boundary on the trace of `home` (cs locked): what it holds is
 * resolved, its segment ends, the streams that joined it leave. */
CUresult rp__end_trace(rp_stream *home);
/* `st` joins the trace of `home` (cs locked): what it holds of its own, or
 * of the trace it was in, is resolved and ends first. Returns the first
 * flush error. */
CUresult rp__join_trace(rp_stream *st, rp_stream *home);
/* Bumped whenever work may reach a stream (a call issued eagerly, a
 * boundary, a flush or replay, the end of a program's capture): a
 * fork/join replay's side stream whose fj.after_gen still matches has had
 * nothing issued on it since that replay's own wait. */
extern _Atomic uint64_t rp__issued;
static inline void rp__note_issue(void)
{
    atomic_fetch_add_explicit(&rp__issued, 1, memory_order_relaxed);
}
/* Bumped by every call that gives memory back (a free, an unregister, an
 * unmap): a segment learnt before one may name freed addresses. */
extern _Atomic uint64_t rp__frees;
static inline void rp__note_free(void)
{
    atomic_fetch_add_explicit(&rp__frees, 1, memory_order_relaxed);
}
/* Deferred event records and waits, all contexts: while there are any, a
 * stream boundary is global (a call may name the event without the engine
 * knowing, as a graph's event node does: a record the wait must not see,
 * or the wait a record must come before). */
extern _Atomic long rp__ev_deferred;
/* Resolve and end every stream's segment of `cs` (cs locked). */
CUresult rp__resolve_ctx(rp_ctxstate *cs);
/* Resolve what `st` holds deferred (replay or flush), on its own stream or,
 * for another thread's per-thread stream, on the private stream with every
 * ordering the driver would have given it; the learner gets what ran. */
CUresult rp__resolve_stream(rp_stream *st);
/* Offer a recorded capturable op to the matcher of `st` (cs locked),
 * resolving what is pending first where it cannot take the op, and at once
 * when the op completes a sequence. Returns 1 when the op was deferred (the
 * record moved into the stream), 0 when the caller must issue it eagerly
 * now (what was pending has been resolved). *err: a flush's first error. */
int rp__defer(rp_stream *st, rp_op *op, CUresult *err);
/* A global boundary: every context resolved, each under its lock, then
 * `then(cs, arg)` if given. Returns the first error. */
CUresult rp__resolve_every_ctx(void (*then)(rp_ctxstate *, int), int arg);
/* Every context's capture gate held for reading (no capture window opens
 * until rp__gates_release); returns how many were taken. */
size_t rp__gates_hold(void);
void rp__gates_release(size_t n);
/* Forget every graph and stream of `cs` (a teardown); with `ctx_dies`, the
 * private stream goes too. */
void rp__forget_ctx(rp_ctxstate *cs, int ctx_dies);
/* The created stream `h` of `cs` is being destroyed (cs locked): its
 * deferred work and that of the streams ordered with it are resolved, and
 * its record goes. Returns the first flush error. */
CUresult rp__stream_destroyed_locked(rp_ctxstate *cs, CUstream h);
/* Drop every context's record of the created stream `h`, destroyed while
 * the engine stepped aside (nothing of it is deferred). */
void rp__forget_stream(CUstream h);
/* A stream handle may now name another stream (empties every thread's
 * stream-to-context cache). */
void rp__streams_changed(void);
/* The program's own captures (DESIGN.md §2.5): while one is open the engine
 * steps aside; from the start of a begin nothing new is deferred. */
extern _Atomic int rp__prog_captures, rp__prog_pending;
static inline int rp__stepping_aside(void)
{
    return atomic_load_explicit(&rp__prog_captures, memory_order_acquire) > 0;
}
static inline int rp__program_capture_pending(void)
{
    return atomic_load(&rp__prog_pending) != 0;
}
/* A call about to go straight to the driver while the engine steps aside:
 * the calling thread's per-thread stream first waits for work another
 * thread resolved for it, if any (rp__rejoins: how many such waits are
 * pending; see streams.c, settle). Nothing locked on entry. */
extern _Atomic int rp__rejoins;
void rp__aside_rejoin(void);
static inline int rp__aside(void)
{
    if (RP_LIKELY(!rp__stepping_aside()))
        return 0;
    if (RP_UNLIKELY(atomic_load_explicit(&rp__rejoins, memory_order_relaxed) > 0))
        rp__aside_rejoin();
    return 1;
}
CUresult rp__program_capture_prepare(void);
void rp__program_capture_begun(CUresult rc);
void rp__program_capture_ended(CUresult rc);
uint64_t rp__engine_program_captures(void);
/* Resolve deferred work everywhere and end every segment (exit). */
CUresult rp__engine_resolve_all(void);
/* At the first capture: make sure deferred work reaches the driver at exit. */
void rp__arm_exit_hook(void);
/* ---- idle.c --------------------------------------------------------------------- */
/* A deferral began: the idle watch (REPRISE_IDLE_US) makes sure it does not
 * wait on the host's idle time. */
void rp__idle_watch(void);
/* In a child of fork(): the parent's deferred work and report are the
 * parent's; the child resolves nothing. */
void rp__engine_forked(void);
bool rp__engine_in_forked_child(void);
/* From the exit hook on: nothing may call the driver any more. */
bool rp__engine_exiting(void);
/* A copy of context number `i`'s counters, taken under its lock if that can
 * be had within a moment (at exit another thread may hold it for ever).
 * Returns 0 past the last context. */
int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions);
/* Copy up to `max` report lines of sequences (dropped ones first). */
struct rp__seq_info;
size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max);

/* ---- learn.c: segments, detection, capture policy, the sequence table ------ */

/* Append an eagerly executed op to the stream's segment (the record moves
 * into it; `op` is zeroed). `pending` is the reason it counts under if the
 * segment is never captured. */
void rp__seg_append(rp_stream *st, rp_op *op, enum rp__eager_reason pending);
/* The segment of `st` ends: count it, and capture it if the detector asks. */
void rp__seg_end(rp_stream *st);
/* Forget the segment of `st` without counting it (its stream goes). */
void rp__seg_clear(rp_stream *st);
/* The next capturable op of `st` gets its position; if the stream's period
 * says a step or chunk starts at it, what is deferred is resolved and the
 * segment learnt so far ends first. Returns the first error of a flush. */
CUresult rp__learn_next(rp_stream *st, rp_op *op);
/* A replay on `st`: its learning paid off (it does not rest). */
static inline void rp__learn_paid(rp_stream *st)
{
    st->learn.paid_opno = st->opno;
    st->learn.rest_level = 0;
}
/* 1 while `st` rests from learning: its eager ops are not recorded. */
static inline int rp__learn_resting(const rp_stream *st)
{
    return st->learn.rest_until > st->opno;
}
/* 1 when rp__learn_next would cut before the stream's next op (no effect). */
int rp__learn_cuts_next(const rp_stream *st);
/* Whether the `n` ops at `ops`, taken from op `start` on (and round), are a
 * rooted fork/join step (rp_seq.rooted): ops on another stream than `home`,
 * the first event record on `home`, and every other stream's first op a
 * wait on an event recorded before it in the step. Used where a sequence is
 * captured (capture.c) and to choose where a period's steps start. */
int rp__ops_rooted(const rp_op *ops, size_t n, size_t start, CUstream home);
/* Release what learning keeps for a stream (its period detector). */
void rp__learn_stream_free(rp_stream *st);
/* What a resolution of `st` did, for learning: a replay ends the segment
 * before it (the ops around a graph launch are not contiguous), and the
 * flushed ops (left in st->match.def[0..nflushed)) join the segment. */
struct rp_resolved;
void rp__learn_resolved(rp_stream *st, const struct rp_resolved *r);
/* Add a sequence to its context's list, which owns it from then on.
 * Returns 0, or -1 when the list cannot grow: `s` is destroyed (its caller
 * must not touch it) and its ops stay eager. */
int rp__seqs_add(rp_ctxstate *cs, rp_seq *s);
/* Destroy every sequence of the context (their report lines are kept). */
void rp__seqs_drop_all(rp_ctxstate *cs);
/* Drop sequences whose launch or update failed, once no stream matches
 * against them; their segments back off. */
void rp__sweep_broken(rp_ctxstate *cs);

/* ---- replay.c: the matcher -------------------------------------------------- */

enum rp_offer {
    RP_OFFER_EAGER,    /* no sequence can start with it: issue it now */
    RP_OFFER_MATCHES,  /* candidates can take it: rp__match_defer it */
    RP_OFFER_RESOLVE,  /* what is pending cannot take it: resolve, then offer again */
    RP_OFFER_DEFERRED, /* (rp__match_defer) deferred: the record belongs to the stream */
    RP_OFFER_COMPLETE, /* (rp__match_defer) deferred, and a sequence matched in full */
};
/* Offer a recorded capturable op to the matcher of `st`: narrows the
 * candidates (or, with nothing pending, finds them). */
enum rp_offer rp__match_offer(rp_stream *st, const rp_op *op);
/* Defer `op` after rp__match_offer said MATCHES: DEFERRED, COMPLETE (resolve
 * now), or RESOLVE when it cannot be kept (memory; the op is left to the
 * caller, to issue eagerly after resolving). */
enum rp_offer rp__match_defer(rp_stream *st, rp_op *op);
/* The matcher's fast path: match.h (rp__match_launch, inline in the
 * launch hook); what it calls out of line: */
/* Room for `want` deferred records; 0, or -1 if memory runs out. */
int rp__def_reserve(rp_stream *st, size_t want);
/* Op k of `s`, a sequence with volatile fields there, stands for launch
 * `l`: equal outside them; its values are kept in the stream's arena
 * (rp_stream.match.arena). 1, or 0 (nothing done). */
int rp__match_masked(rp_stream *st, const rp_seq *s, size_t k, const rp_launch *l);
/* The fast path for the first op of a match (match.h): the sequence last
 * replayed on the stream, when no other of its home begins with its first
 * op's kernel (rp_seq.first_unique: rp__match_offer would find it alone).
 * Not on a per-thread stream: a match there begins by recording where
 * (streams.c, mark_start). */
enum rp_offer rp__match_first(rp_stream *st, CUstream h, const rp_launch *l,
                              enum rp__entry entry);

/* Forget the candidates rp__match_offer found (nothing deferred yet). */
void rp__match_cancel(rp_stream *st);
/* What rp__match_resolve did. */
struct rp_resolved {
    rp_seq *replayed;   /* the sequence launched in place of the first ops, or NULL */
    size_t nflushed;    /* ops issued eagerly after it, left in st->match.def[0..nflushed) */
    CUresult err;       /* the first error of a flushed call */
};
/* Resolve what is deferred on `st`, issuing on `target` (its own stream, or
 * the private stream for another thread's per-thread stream): launch the
 * longest complete match, issue the rest eagerly in order. Afterwards
 * nothing is deferred and the flushed records wait in st->match.def for the
 * caller to hand them to learning (rp__learn_resolved). */
void rp__match_resolve(rp_stream *st, CUstream target, struct rp_resolved *out);

/* ---- capture.c: capture windows and staging --------------------------------- */
/* Capture detector entry `e` into a new sequence (with volatile fields
 * `vmask`, or NULL for an exact-content one). Returns it, or NULL (the
 * reason counted and logged once). `reuse`, when not NULL, is a sequence
 * whose executable may be updated to the new graph (cuGraphExecUpdate_v2)
 * instead of instantiating a new one; on success its executable moves to
 * the new sequence (reuse->exec becomes NULL), with the graph it was
 * instantiated from and that graph's node handles (see `origin`), and the
 * caller drops `reuse`. `home` is the stream whose trace `e` was learnt
 * on: the sequence is replayed there; its ops on other streams and its
 * event ops make it a fork/join sequence, captured with private side
 * streams and events (never taking an executable over, nor taken over). */
rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse,
                    CUstream home);
/* Destroy the context's fork/join streams and events (its teardown). */
void rp__fj_release(rp_ctxstate *cs);
void rp__seq_destroy(rp_seq *s);
/* Another executable of sequence `s`'s graph (s->sealed.graph, whose nodes
 * s->ex.nodes name: not for a sequence whose executable was taken over),
 * uploaded, and in *held the values it holds. NULL (logged once) if the
 * driver or memory refuses. */
CUgraphExec rp__seq_alt_exec(rp_seq *s, rp_op **held);
/* The context's private stream, created on first use (NULL if it cannot be). */
CUstream rp__private_stream(rp_ctxstate *cs);
/* The lifecycle's view of a driver table. */
void rp__lc_driver_from(rp_lc_driver *lc, const struct rp__driver *drv);

/* ---- recorder.c ------------------------------------------------------------- */
/* Remember that `k` is a CUkernel (from cuLibraryGetKernel). */
void rp__rec_note_kernel(CUkernel k);
/* Fill `op` for a kernel launch (`cfg`: cuLaunchKernelEx's, for its
 * attributes; NULL for cuLaunchKernel); the parameter bytes go to `op->params`
 * (the caller owns the record). Returns 0, or -1 with *why set when the
 * launch cannot be recorded (op untouched). */
int rp__rec_kernel(rp_ctxstate *cs, rp_op *op, CUfunction f, const unsigned int grid[3],
                   const unsigned int block[3], unsigned int shmem, void **kernelParams,
                   void **extra, const CUlaunchConfig *cfg, enum rp__eager_reason *why);
/* The kernelParams array of a kernel record: ptrs[i] points at parameter i
 * in its packed bytes; *kp is ptrs, or NULL for a kernel without parameters.
 * Returns 0, or -1 if the kernel's layout is unknown. */
int rp__rec_param_ptrs(rp_ctxstate *cs, const rp_op *op, void **ptrs, void ***kp);
/* Re-issue a record exactly as the program issued it: the same entry
 * point (sync or async form, _ptsz/_ptds variant), on its own stream. */
CUresult rp__rec_issue_as_called(rp_ctxstate *cs, const rp_op *op);
/* Issue a copy or memset record through the entry the program called
 * (op->entry) on op->stream, with `drv`. */
CUresult rp__rec_issue_entry(const struct rp__driver *drv, const rp_op *op);
/* Re-issue a record on `stream` (async form); a staged host-to-device copy
 * reads `staged`. */
CUresult rp__rec_issue(rp_ctxstate *cs, const rp_op *op, CUstream stream, const void *staged);
/* The parameter layout of a kernel record (NULL for other kinds, or if it
 * cannot be read). Valid until rp__rec_reset of the context. */
const rp_param_layout *rp__rec_layout(rp_ctxstate *cs, const rp_op *op);
/* The kernel name of a record ("" if unknown); for stats. */
const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op);
/* Is `host` pinned (page-locked, registered) memory the driver knows? */
int rp__rec_is_pinned(const struct rp__driver *drv, const void *host);
void rp__rec_reset(rp_ctxstate *cs);

/* ---- events.c: the program's events --------------------------------------- */
/* What the engine knows of an event: its flags and context at creation, and
 * the trace that last recorded or waited on it (live while that trace's
 * stream has the same trace.epoch; check under that context's lock). */
typedef struct rp_evinfo {
    unsigned int flags;
    CUcontext ctx;
    rp_ctxstate *live_cs;
    rp_stream *live_home;
    uint64_t live_epoch;
    uint64_t after_gen;     /* its last record was a replay's, on after_home, if */
    CUstream after_home;    /* rp__issued is still after_gen (see rp_stream) */
} rp_evinfo;
void rp__ev_created(CUevent e, unsigned int flags, CUcontext ctx);
void rp__ev_destroyed(CUevent e);
/* 1 and *out when the event is known (created through the engine). */
int rp__ev_get(CUevent e, rp_evinfo *out);
/* The trace of `home` (in `cs`, locked) records or waits on `e` now: 1, or
 * 0 (nothing changed) when the event is held by another context's trace,
 * which must be settled first (from outside this context's lock). */
int rp__ev_touched(CUevent e, rp_ctxstate *cs, rp_stream *home);
/* The trace `i` names has ended (or was never live): the event is held by
 * none, unless another trace took it meanwhile. */
void rp__ev_settled(CUevent e, const rp_evinfo *i);
/* A fork/join replay on `home` recorded `e` again after its graph. */
void rp__ev_rerecorded(CUevent e, uint64_t gen, CUstream home);
/* 1 when `i` names a live trace of `cs` (cs locked). */
static inline int rp__ev_live_in(const rp_evinfo *i, const rp_ctxstate *cs)
{
    return i->live_cs == cs && i->live_home && i->live_home->used &&
           i->live_home->trace.epoch == i->live_epoch;
}

/* ---- cost.c: the cost model ---------------------------------------------------- */
uint64_t rp__cost_now(void);
/* `count` calls of `kind` took `ns` in all. */
void rp__cost_sample(rp_ctxstate *cs, enum rp_cost_kind kind, uint64_t ns, uint64_t count);
/* 1 when a replay of `n` ops with `k` node updates may run: k within
 * REPRISE_MAX_UPDATES, or, past it, k updates and a graph launch expected
 * to cost less than n eager launches (measured costs; REPRISE_COSTS). */
int rp__cost_updates_pay(const rp_ctxstate *cs, size_t n, size_t k);
/* Read REPRISE_COSTS ("measure", "off" or "E,U,L" ns) into cfg; -1 (said
 * once, measuring) when malformed. */
int rp__cost_parse(const char *s, struct rp__engine_config *cfg);
/* Whether this eager launch is one the cost model times (one in 32). */
static inline int rp__cost_time_this(rp_ctxstate *cs)
{
    return rp__eng_cfg.cost_model && !rp__eng_cfg.costs_pinned && !(++cs->costs.tick & 31);
}

/* ---- engstats.c: settings, counting and the report lines -------------------- */
extern struct rp__engine_config rp__eng_cfg;
static inline void rp__count_eager(rp_ctxstate *cs, enum rp__eager_reason why, uint64_t n)
{
    cs->counters.ops_eager[why] += n;
}
/* Bounds hit with no context to count them in (the context table was full). */
uint64_t rp__bound_hits_without_context(enum rp__bound b);
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
    int by_period;          /* found by the stream's period, not delimited by boundaries */
};
/* The report line of sequence `s` (cs locked). */
void rp__seq_info(const rp_seq *s, struct rp__seq_info *o);
/* Keep the report line of a sequence whose graph is being dropped. */
void rp__seq_retire(const rp_seq *s);
/* Lock `m` if that can be had within a moment (at exit a thread may have
 * died holding it): 1 if locked; 0, and the caller reads as it is. */
int rp__lock_for_report(pthread_mutex_t *m);
/* The same for a context's lock. */
int rp__ctx_lock_for_report(rp_ctxstate *cs);
/* Copy up to `max` retired lines into `out`; returns how many. */
size_t rp__retired_snapshot(struct rp__seq_info *out, size_t max);

#endif
