/* engine.h - the capture engine's shared records (DESIGN.md §1-§5), as
 * SQLite's sqliteInt.h is its own: the settings, the counters, the records
 * of sequences, streams and contexts, and the one engine instance that
 * holds every piece of state (rp__eng) with a reset for tests. Each layer
 * above owns its fields as a sub-structure of the records (st->learn,
 * st->match, s->ex, s->fj ...) and has a header of its own, top to bottom:
 * coord.h (the coordinator: hooks, contexts and streams, ordering, the
 * per-thread hand-off, the program's captures, the idle watch), learn.h
 * and match.h (learning what repeats; matching and replaying), seq.h
 * (sequences, capture windows, executables and updates, fork/join), rec.h
 * (op records from calls, the program's events); calls go one way, down
 * (docs/ARCHITECTURE.md; scripts/layers.sh checks it). Every module reaches
 * the driver only through the table the engine was installed with
 * (rp__eng.drv), never through a global table or dlsym, so unit tests hand
 * it fakes. State is per context, under that context's lock. */
#ifndef REPRISE_ENGINE_H
#define REPRISE_ENGINE_H

#include "core.h"

#include <pthread.h>

#include "cost.h"
#include "counters.h"
#include "detector.h"
#include "explain.h"
#include "lifecycle.h"
#include "lock.h"
#include "oprecord.h"
#include "period.h"

/* Engine settings, from the options table. */
struct rp__engine_config {
    unsigned int warmup;   /* REPRISE_WARMUP */
    unsigned int max_variants; /* REPRISE_MAX_VARIANTS */
    size_t min_ops;        /* REPRISE_MIN_OPS */
    size_t max_ops;        /* REPRISE_MAX_OPS */
    size_t max_held;       /* REPRISE_MAX_HELD: chunk length of a step found by its period */
    uint64_t patience;     /* REPRISE_PATIENCE: ops without a replay before a stream rests (0: never) */
    unsigned int idle_us;  /* REPRISE_IDLE_US: held work issued after this long without a call (0: never) */
    int parts;             /* REPRISE_PARTS: ... as a part of its graph, the match going on */
    size_t max_graphs;     /* REPRISE_MAX_GRAPHS: sequences with a graph, per context */
    uint64_t max_staging;  /* REPRISE_MAX_STAGING: live staging bytes per context */
    uint64_t max_seq_bytes;/* REPRISE_MAX_SEQ_BYTES: parameter bytes per sequence */
    size_t table_size;     /* detector slots */
    rp_cost_cfg cost;      /* REPRISE_MAX_UPDATES, REPRISE_COSTS (model/cost.h) */
};

/* The bounds (enum rp__bound) are in explain.h, with what each means. */
/* Count a bound hit in `cs` (NULL: no context, counted for the process)
 * and say so once per bound (counters.c). */
struct rp_ctxstate;
void rp__bound_hit(struct rp_ctxstate *cs, enum rp__bound b);
/* Bounds hit with no context to count them in (the context table was full). */
uint64_t rp__bound_hits_without_context(enum rp__bound b);

/* Why an op ran eagerly (enum rp__eager_reason) is explain.h's, with the
 * reasons' names and what each means (rp__reasons). */

#define RP_FJ_STREAMS 8  /* streams besides its home a sequence may run ops on */
#define RP_FJ_EVENTS 16  /* program events a sequence may record */

/* A sequence: a segment with an executable graph. */
struct rp_ctxstate;
struct rp_fast;

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
    unsigned int passed_over; /* exact only: occurrences since its last replay that
                               diverged from it on arguments while a sequence with
                               updates went on matching (the matcher's count) */
    uint64_t last_use;
    unsigned int id;
    int broken;             /* its launch failed: no longer offered, dropped later */
    int by_period;          /* its segment was delimited by the stream's period, not a boundary */
    size_t div_op;          /* the last divergence: index of the op that differed */
    const char *div_why;    /* ... and why (NULL: none yet) */
    /* Its last divergences for the report, written only when one happens
     * (match.c, diverged): where, the field and its two values, and the
     * occurrence's kernel name for a kernel that switched (the recorder's,
     * which lives as long as the context). The newest is at
     * (ndivs - 1) % RP_SEQ_DIVS. */
#define RP_SEQ_DIVS 4
    struct rp_seq_div {
        uint32_t op;
        uint8_t why;        /* enum rp__div_why */
        uint8_t ended;      /* the held ops then ran eagerly: no candidate was left */
        rp_op_delta d;
        const char *got_name;
    } divs[RP_SEQ_DIVS];
    uint64_t ndivs;
    uint64_t flushes;       /* divergences after which the held ops ran eagerly */
    uint64_t flushed_ops;   /* ... the ops held then */
    uint64_t captured_at;   /* the occurrence at which it was captured */
    uint64_t skey;          /* the key of its structure (rp__det_key by structure), set
                               by learning when it is captured */
    /* Sequences with volatile fields (NULL vmask: an exact-content one). */
    uint64_t *vmask;        /* per op: the fields updated before a replay */
    const rp_param_layout **lay; /* per op: a kernel's layout (else NULL), for
                               matching a launch without recording it first;
                               NULL if it could not be allocated */
    struct rp_vtab *vt;     /* per op: the values it has taken (seq/versions.c;
                               NULL: none kept yet) */
    /* Its executables and what they hold (seq/exec.c, seq/contents.c). */
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
        uint64_t frees_at;  /* rp__frees() when sealed.graph was captured: its
                               memset and copy nodes name that occurrence's
                               memory, which a later free may have freed */
        /* The nodes each executable has enabled, `exec`'s and each alternate's: ops
         * [head, n - tail); all (0, 0) but after a part ran (seq/parts.c, rp__exec_range). */
        struct rp_exec_on {
            uint32_t head, tail;
        } on, alt_on[RP_SEQ_ALTS];
        unsigned int too_many; /* replays skipped in a row for too many updates */
        uint64_t *occ_ver;  /* per op: the occurrence's version (seq/versions.c) */
        struct rp_vols *vols; /* its volatile ops, listed (seq/exec.c; NULL: not yet) */
        uint32_t nfresh;    /* entries of `vols` RP_VOL_FRESH now (seq/versions.c) */
        uint64_t vclock;    /* occurrences prepared for a replay in full (the versions'
                               clock: in step with recent_at where a replay chooses) */
    } ex;
    /* The matcher's images of its kernels (match/). */
    struct rp_seq_match {
        void *block;        /* the one allocation holding what follows (NULL: not
                               made yet, or memory ran out) */
        int tried;          /* made, or tried: not again */
        struct rp_fast *fast; /* per op, for the fast path (NULL: none) */
        uint32_t *poff;     /* with vmask: per op, where a matched launch's
                               parameters go in the stream's arena */
        size_t ptotal;      /* ... and the arena's size for this sequence */
        uint64_t gen;       /* with poff: a number no other sequence has had, naming
                               its values in a stream's arena (rp_stream.match.arena.gen) */
    } match;
    int first_unique;       /* no other sequence of its home begins with its first
                               op's kernel (nor has it among its forms at op 0):
                               the fast path may begin a match (reckoned by the
                               sequence table, seq/) */
    /* The other functions its kernels were seen with where their function
     * is volatile (RP_VOL_FUNC): the forms a kernel switches between (an
     * elementwise kernel vectorized or unrolled by its pointers' alignment,
     * a softmax per length bucket). An op matches with its own function or
     * one of these: at op 0 only so (a sequence whose first kernel matched
     * any function would begin a match at every launch); past it a new one
     * is taken while matching (match.c, widen) or by the learner. */
#define RP_SEQ_FORMS 16
    struct rp_form {
        uint32_t k;
        CUfunction f;
    } forms[RP_SEQ_FORMS];
    unsigned int nforms;
    unsigned int pins;      /* streams whose candidates or complete match it is
                               (the matcher's count): while any, it stays */
    /* Fork/join (a sequence with event ops or ops of other streams; seq/forkjoin.c). */
    struct rp_seq_fj {
        int multi;          /* it has event ops or other streams' ops */
        int rooted;         /* its first event record is on its home, and each other
                               stream's first op waits on an event recorded in it:
                               all its work comes after the home stream's earlier work */
        unsigned int nside; /* the other streams it runs ops on ... */
        CUstream side[RP_FJ_STREAMS]; /* ...: idle before a replay, waiting after */
        /* Events are named by the op that names them (an index into its
         * ops): each occurrence brings its own handles (rp_op.erole), and
         * a replay reads them from the occurrence's records. */
        size_t side_first[RP_FJ_STREAMS]; /* the op each one's first op is, when it
                               waits on an event (else SIZE_MAX) */
        size_t nexts;       /* the events it waits on recorded outside it (the
                               first wait on each): */
        size_t *exts;       /* complete (or known to be) before a replay */
        /* Its home stream's waits on events recorded outside it (PyTorch's
         * main.wait_stream(side) each step, a fresh event each time): an
         * event wait node each, in its place in the graph, set to the
         * occurrence's event before a replay (cuGraphExecEventWaitNodeSetEvent):
         * the graph waits where the home stream waited eagerly, for what it
         * waited for, and nothing needs to be complete before the launch.
         * (Waits of other streams stay among `exts`: their ops' wait in a
         * graph would hold the home stream's later work too.) */
        size_t nhwait;
        size_t *hwait;      /* their ops */
        CUevent *hwait_ev;  /* the event each node waits on now */
        /* After a replay, its event ops again, in its order, without its
         * work (fj_after): every record, and every wait on an event recorded
         * earlier in it by another stream. The program's streams and events
         * then stand as they would have after the step eagerly: each event
         * last recorded where the step last recorded it, after what came
         * before it there, each stream's last op its last event op. */
        struct rp_fj_shadow {
            CUstream stream;
            size_t at;      /* the op: its event is the occurrence's */
            int record;     /* 1: a record, 0: a wait */
        } *shadow;
        size_t nshadow;
    } fj;
} rp_seq;

#define RP_MAX_CANDIDATES 8
#define RP_ARENA_GEOMETRY 32 /* an op's place in the matcher's arena: its geometry
                              * (28 bytes), then its parameters, a multiple of 8 bytes */
#define RP_OWN_MAX 8         /* records of their own in a borrowed run, below op ... */
#define RP_OWN_SPAN 256      /* ... (rp_stream.match.own) */

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
        uint64_t bgap[4];   /* ops between its latest host boundaries (those with
                               ops between them), the latest first */
        unsigned int nbgap; /* ... how many are known */
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
        uint64_t per_steps; /* the steps its period detector had decided when last
                               counted (rp_period.settled) */
        uint64_t baligned;  /* the steps its detector had decided (rp_period.settled)
                               when its steps were last made to start at a boundary
                               (+ 1; 0: never) */
        uint64_t nocut_until; /* no period cut before this op (rp__learn_cuts_next's
                               hint; 0: none), until what it depends on changes
                               (a boundary, the period fed, a cut: learn.c clears it) */
        /* For the report: the by-structure entry of its last segment (valid
         * while that slot still has `prev_shape_id`), and whether the
         * segment being ended had a structure not seen before. */
        const rp_det_entry *prev_shape;
        unsigned int prev_shape_id;
        int shape_new;
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
         * sequence is made beforehand), but for `nown` records of their own
         * (rp__match_kept: another known form of a volatile function), at
         * own[0..nown) in order, a bit each in `ownbits` (`ownp` points
         * to it then, else NULL). */
        rp_seq *borrowed_seq;
        size_t borrowed_from;
        uint64_t borrowed_opno;
        uint32_t own[RP_OWN_MAX], nown;
        uint64_t ownbits[RP_OWN_SPAN / 64];
        const uint64_t *ownp;
        rp_seq *hint;       /* the sequence replayed last here, while hint_gone is
                               its context's seqs_gone (no sequence went since) */
        uint64_t hint_gone;
        /* The fast path's launches with volatile fields keep their values in
         * the arena (borrowed: a flush copies them) at the borrowed sequence's
         * offsets (rp_seq.match.poff), filled from the records (ops) of the
         * sequence numbered gen (rp_seq.match.gen; 0: none): a launch writes
         * its geometry and volatile parameters only. While records written
         * down point in (held), another sequence takes a spare that is free. */
        struct rp_arena {
            uint8_t *p;
            size_t cap, held;
            uint64_t gen;
            const rp_op *ops; /* its entry's (a new copy replaces them) */
        } arena, spare[3];
        /* def[0..launched) have been launched already, as a part of the
         * one candidate's graph (a quiet spot: rp__match_part); the rest of
         * the occurrence, when it completes, is launched as the rest of
         * that graph. 0: nothing of the occurrence issued yet. */
        size_t launched;
        /* Fields a candidate with updates took as volatile at op `k` of
         * this occurrence, where it differed from the sequence only in
         * what a node update can carry (match.c, widen): given to the
         * sequence when it is launched (a part, or the whole), dropped
         * with the candidate or when the occurrence is resolved otherwise,
         * so that a step that goes another way widens nothing. */
        /* Events the program destroyed while an op it holds names them
         * (match.c, rp__match_defer_destroy): destroyed once that op is
         * issued (a replay's shadow or a flush), with the stream's next
         * resolution. A destroy is asynchronous ("resources will be
         * released asynchronously"): the program sees no difference. */
        CUevent dtor[RP_FJ_EVENTS];
        unsigned int ndtor;
#define RP_MAX_WIDEN 16
        struct rp_widen {
            rp_seq *s;
            uint32_t k;
            uint64_t bits;
            CUfunction form; /* a function op k takes that `s` did not know (or NULL) */
        } wid[RP_MAX_WIDEN];
        unsigned int nwid;
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

#define RP_MAX_STREAMS 128  /* per context */
#define RP_FUNC_CACHE 64    /* functions whose layout is cached per context (a power of two) */

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
    uint32_t nblocking, nlegacy; /* slots in use of blocking, legacy streams */
    rp_stream *last_stream; /* the slot rp__stream_of found last (checked before use) */
    rp_seq **seqs;          /* sequences with a graph */
    size_t nseqs, capseqs;
    uint64_t seqs_gone;     /* sequences dropped: a stream's hint is good while it stays */
    uint64_t first_kernel_bits; /* kernels a sequence's first op may be (its function, its
                                   forms): a bit each (rp__kernel_bit; with first_unique) */
    size_t nalts;           /* their executables beside their own (rp_seq.alt) */
    rp_detector det;        /* by content: exact repeats, one graph each */
    rp_detector sdet;       /* by structure: repeats whose arguments change */
    struct rp__engine_stats counters;
    void *layouts;          /* recorder.c's parameter-layout cache */
    uint32_t nfuncs;        /* ... the functions it numbered (rp_op.fid) */
    struct rp_func_cache {  /* ... and a direct-mapped cache in front of it */
        const void *func;
        void *layout;       /* its slot in `layouts` (NULL: none) */
        int is_kernel;      /* the handle is a CUkernel */
    } fcache[RP_FUNC_CACHE];
    rp_costs costs;         /* measured (model/cost.h) */
    size_t *upd, capupd;    /* a replay's nodes to update (seq/exec.c) */
    uint64_t trace_clock;      /* the last trace name given (rp_stream.trace.epoch) */
    /* For the report: the last segments whose structure was new, each
     * against its stream's segment before (learn/policy.c); the newest at
     * (nshapes - 1) % RP_CTX_SHAPES. */
#define RP_CTX_SHAPES 4
    struct rp__diff shapes[RP_CTX_SHAPES];
    uint64_t nshapes;
    /* What captures and replays of fork/join sequences use, created at the
     * first capture that needs them: private side streams and events
     * standing for the program's in the capture, and the events that fork
     * them from and join them to the private stream, and order the side
     * streams after a replay (post). */
    struct rp_fj {
        CUstream side[RP_FJ_STREAMS];
        CUevent ev[RP_FJ_EVENTS];
        CUevent fork, join[RP_FJ_STREAMS], post;
        CUevent none;       /* never recorded: what a wait node of a capture waits on
                               until a replay sets it to the program's event (the
                               occurrence captured may have destroyed its own) */
    } fj;
    /* Streams stamped clean for a fork/join replay, carried over eager ops
     * on other streams; streams whose last eager op records an event
     * (seq/forkjoin.c, rp__fj_eager). */
#define RP_FJ_CARRY 8
    struct rp_fj_carry {
        rp_stream *s[RP_FJ_CARRY];
        unsigned int n, nt;
        struct { rp_stream *st; CUevent ev; uint64_t gen; } t[RP_FJ_CARRY];
    } fjc;
} rp_ctxstate;

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

/* A sequence's report line (the stats' `sequences`; seq/seqs.c fills it). */
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
    /* Its last divergences, newest first (rp_seq.divs with names), and the
     * runs they sent eagerly. */
    struct rp__diff divs[RP_SEQ_DIVS];
    unsigned int ndivs;
    uint64_t flushes, flushed_ops;
    /* Its volatile fields, one entry per field (a kernel's geometry as one
     * of grid, block, shmem); a kernel's name is vol_names[name] (-1: none
     * kept, more than RP_INFO_NAMES kernels). */
#define RP_INFO_VOLS 32
#define RP_INFO_NAMES 8
    struct rp__info_vol {
        uint32_t op;
        uint8_t field, index, kind;
        int8_t name;
    } vols[RP_INFO_VOLS];
    unsigned int nvols;
    int vols_cut;           /* more fields than RP_INFO_VOLS */
    char vol_names[RP_INFO_NAMES][RP_NAME_LEN];
};

/* ---- the engine instance ------------------------------------------------------ */

#define RP_MAX_CTX 16       /* contexts the engine tracks */
#define RP_EV_SLOTS 4096    /* the event table's slots (a power of two; 3/4 usable) */
#define RP_KERNEL_SLOTS 1024 /* CUkernel handles remembered (half usable) */
#define RP_MAX_RETIRED 64   /* report lines of dropped sequences kept */

/* What the engine knows of an event: its flags and context at creation, and
 * the trace that last recorded or waited on it (live while that trace's
 * stream has the same trace.epoch; check under that context's lock). */
typedef struct rp_evinfo {
    unsigned int flags;
    uint32_t serial;        /* its number among the events created (never 0): a
                               handle destroyed and given out again is another
                               event (rp_op.eser) */
    CUcontext ctx;
    struct rp_ctxstate *live_cs;
    rp_stream *live_home;
    uint64_t live_epoch;
    unsigned int held_polls;/* queries answered "not ready" while a trace held its
                               record, in a row (coord/event.c) */
    uint64_t after_gen;     /* its last record was a replay's, on after_home, if */
    CUstream after_home;    /* rp__issued is still after_gen (see rp_stream) */
} rp_evinfo;

/* All of the engine's state: the driver table and settings it was installed
 * with, the contexts, the process-wide tables (events, CUkernel handles),
 * the counters that order work across contexts, the program's captures,
 * and the report lines of dropped sequences. One instance, rp__eng;
 * rp__engine_reset (coord.h) gives a test a fresh one. The per-thread
 * caches of coord/ are emptied by the stream generation it bumps. */
struct rp_engine {
    const struct rp__driver *drv; /* the table the engine was installed with */
    rp_lc_driver lc_drv;          /* the lifecycle's view of it */
    struct rp__engine_config cfg;
    rp_ctxstate ctxs[RP_MAX_CTX]; /* append-only, published by nctxs (release) */
    _Atomic size_t nctxs;
    pthread_mutex_t ctxs_lock;    /* contexts are created under it */
    _Atomic unsigned int stream_gen; /* bumped when a stream handle may name another */
    _Atomic uint64_t issued;      /* rp__note_issue */
    _Atomic uint64_t frees;       /* rp__note_free */
    _Atomic long ev_deferred;     /* event records and waits deferred, all contexts */
    _Atomic int rejoins;          /* per-thread streams whose owner must wait (coord) */
    _Atomic int prog_captures;    /* the program's captures open: the engine steps aside */
    _Atomic int prog_pending;     /* ... and being begun: nothing new is deferred */
    _Atomic uint64_t prog_captures_total;
    _Atomic int forked_child;     /* in a child of fork(): touch nothing */
    _Atomic int exiting;          /* from the exit hook on: call no driver */
    _Atomic int exit_armed;
    _Atomic int func_fixed;       /* the driver refused a kernel node's function update */
    _Atomic uint64_t hits_without_context[RP_BOUND_COUNT];
    _Atomic unsigned int seq_ids; /* sequences numbered as captured, from 1 */
    /* Report lines of sequences whose graph was dropped. */
    struct rp__seq_info retired[RP_MAX_RETIRED];
    size_t nretired;
    pthread_mutex_t retired_lock;
    /* The program's events (rec/events.c): open addressing, a destroyed
     * event's slot a tombstone until the table is rebuilt. */
    struct rp_ev_slot {
        CUevent e;
        rp_evinfo info;
    } ev_slots[RP_EV_SLOTS];
    size_t ev_used;               /* live entries and tombstones */
    uint32_t ev_serial;           /* the events created so far (rp_evinfo.serial) */
    pthread_mutex_t ev_lock;
    /* CUkernel handles the program obtained (rec/recorder.c): written under
     * kernels_lock, read without (slots only go from empty to a handle). */
    _Atomic(const void *) kernels[RP_KERNEL_SLOTS];
    size_t nkernels;
    pthread_mutex_t kernels_lock;
    /* The idle watch (coord/idle.c): a thread, started at the first deferral. */
    struct rp_idle {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int started, wanted;
        _Atomic int looking;      /* the watch is awake and will look again */
    } idle;
};
extern struct rp_engine rp__eng;

/* Context number `i` in the order the engine met them, NULL past the last. */
static inline rp_ctxstate *rp__ctx_at(size_t i)
{
    return i < atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire) ? &rp__eng.ctxs[i]
                                                                          : NULL;
}
/* The engine's record of stream `h` (normalised: the legacy stream, this
 * thread's per-thread stream, or a created handle) in `cs`, locked; NULL if
 * it has none. Makes none and calls nothing (coord's rp__stream_of does). */
rp_stream *rp__stream_find(rp_ctxstate *cs, CUstream h);
/* A stream the program created (not the legacy or the per-thread stream,
 * named through the current context). */
static inline int rp__stream_is_created(CUstream s)
{
    return s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}

/* Bumped whenever work may reach a stream (a call issued eagerly, a
 * boundary, a flush or replay, the end of a program's capture): a
 * fork/join replay's side stream whose fj.after_gen still matches has had
 * nothing issued on it since that replay's own wait. */
static inline uint64_t rp__note_issue(void) /* the count before (rp__fj_eager) */
{
    return atomic_fetch_add_explicit(&rp__eng.issued, 1, memory_order_relaxed);
}
static inline uint64_t rp__issued(void)
{
    return atomic_load_explicit(&rp__eng.issued, memory_order_relaxed);
}
/* Bumped by every call that gives memory back (a free, an unregister, an
 * unmap): a segment learnt before one may name freed addresses. */
static inline void rp__note_free(void)
{
    atomic_fetch_add_explicit(&rp__eng.frees, 1, memory_order_relaxed);
}
static inline uint64_t rp__frees(void)
{
    return atomic_load_explicit(&rp__eng.frees, memory_order_relaxed);
}
/* Deferred event records and waits, all contexts: while there are any, a
 * stream boundary is global (a call may name the event without the engine
 * knowing, as a graph's event node does: a record the wait must not see,
 * or the wait a record must come before). */
static inline void rp__ev_deferred_add(long n)
{
    atomic_fetch_add(&rp__eng.ev_deferred, n);
}
static inline int rp__ev_any_deferred(void)
{
    return atomic_load_explicit(&rp__eng.ev_deferred, memory_order_relaxed) > 0;
}
/* The program's own captures (DESIGN.md §2.5): while one is open the engine
 * steps aside; from the start of a begin nothing new is deferred. */
static inline int rp__stepping_aside(void)
{
    return atomic_load_explicit(&rp__eng.prog_captures, memory_order_acquire) > 0;
}
static inline int rp__program_capture_pending(void)
{
    return atomic_load(&rp__eng.prog_pending) != 0;
}
/* In a child of fork(): the parent's deferred work and report are the
 * parent's; the child resolves nothing. From the exit hook on, nothing may
 * call the driver any more. */
static inline bool rp__engine_exiting(void)
{
    return atomic_load(&rp__eng.exiting) != 0;
}

/* ---- counters.c: counting, locks, eager reasons ------------------------------ */

static inline void rp__count_eager(rp_ctxstate *cs, enum rp__eager_reason why, uint64_t n)
{
    cs->counters.ops_eager[why] += n;
}
/* Whether a replay of `n` ops with `k` node updates may run in `cs`
 * (model/cost.h, with the engine's settings). */
static inline int rp__updates_pay(const rp_ctxstate *cs, size_t n, size_t k)
{
    return rp__cost_updates_pay(&cs->costs, &rp__eng.cfg.cost, n, k);
}
/* The driver refused to set a kernel node to another function (rc): the
 * rule CUDA 12/13 documents allows it within a context, older
 * documentation did not (CUDA-FACTS, unverified on a GPU here). Counted,
 * said once, and from then on no sequence takes a kernel's function as a
 * field it may update (rp__func_fixed): a kernel that switches is another
 * structure, as before function updates. */
void rp__func_update_refused(struct rp_ctxstate *cs, CUresult rc);
static inline int rp__func_fixed(void)
{
    return atomic_load_explicit(&rp__eng.func_fixed, memory_order_relaxed) != 0;
}
/* Count `count` calls of `kind` that took `ns`, for the model and the report. */
void rp__cost_note(rp_ctxstate *cs, enum rp_cost_kind kind, uint64_t ns, uint64_t count);
/* Lock `m` if that can be had within a moment (at exit a thread may have
 * died holding it): 1 if locked; 0, and the caller reads as it is; -1 in
 * try-only mode (rp__report_try_only), and the caller reads nothing. */
int rp__lock_for_report(pthread_mutex_t *m);
/* The same for a context's lock. */
int rp__ctx_lock_for_report(rp_ctxstate *cs);
/* On this thread, from now on: with `on`, the report's locks are tried for
 * a few milliseconds and a busy one is skipped (a report written while the
 * program runs); rp__report_missed says whether one was. */
void rp__report_try_only(int on);
int rp__report_missed(void);
/* Copy up to `max` retired report lines into `out`; returns how many. */
size_t rp__retired_snapshot(struct rp__seq_info *out, size_t max);

#endif
