/* explain.h - what the stats mean for the person who ran the program, in
 * plain words: the reasons an op ran eagerly (the stats file's names, a
 * one-line meaning each, and sentences computed from the cause), the
 * engine's bounds (each named by the option or fixed limit that sets it,
 * what hitting it means, what to do), the differences that made a run of
 * ops diverge from a sequence or come as a new structure, what replaying
 * saved, and up to three suggestions. Shared by the shim (its log and its
 * summary at exit) and the `reprise` command (report, page, explain,
 * help), which fill the same facts (struct rp__run_fact) from the engine or
 * from a stats file; so it depends on nothing else of the shim. */
#ifndef REPRISE_EXPLAIN_H
#define REPRISE_EXPLAIN_H

#include <stddef.h>

/* ---- why an op ran eagerly --------------------------------------------------- */

enum rp__eager_reason {
    RP_EAGER_WARMING_UP,     /* its segment had not been seen warmup times yet */
    RP_EAGER_NOT_CAPTURABLE, /* a call the engine does not capture */
    RP_EAGER_SHORT,          /* its segment was shorter than REPRISE_MIN_OPS */
    RP_EAGER_DIVERGED,       /* deferred, then the sequence diverged: flushed */
    RP_EAGER_CAPTURE_FAILED, /* its segment's last capture failed (backing off) */
    RP_EAGER_BACKING_OFF,    /* waiting before a capture, no capture having failed: its
                                stream's graphs were replaced before they paid off, or its
                                segment's last capture was stopped by a bound or its graph
                                given up */
    RP_EAGER_BOUND,          /* a bound was hit (ops, graphs, table, memory) */
    RP_EAGER_PROGRAM_CAPTURE,/* the program was capturing itself */
    RP_EAGER_NO_LAYOUT,      /* the kernel's parameter layout cannot be read */
    RP_EAGER_EXCLUDED,       /* the kernel is kept out by REPRISE_EXCLUDE/INCLUDE */
    RP_EAGER_NO_PERIOD,      /* no boundary and no period: its segment outgrew REPRISE_MAX_OPS */
    RP_EAGER_RESTING,        /* its stream was resting from learning (nothing it learnt paid) */
    RP_EAGER_REASON_COUNT
};

/* One table serves the stats file (key), `reprise help reasons` (key and
 * meaning), the summary, `reprise report`, its page and `reprise explain`
 * (the sentences of explain.c, computed from the cause). */
struct rp__reason_info {
    const char *key;     /* the stats file's name: "warming_up" */
    const char *meaning; /* one line: what it means */
    const char *more;    /* what reprise does about it, in a sentence or two */
};
extern const struct rp__reason_info rp__reasons[RP_EAGER_REASON_COUNT];

/* The reason whose key is `key`, or -1. */
int rp__reason_index(const char *key);

/* ---- the bounds ------------------------------------------------------------------ */

/* The bounds; hitting one is counted (bound_hits, and per bound in
 * bound_hits_by) and logged once. */
enum rp__bound {
    RP_BOUND_OPS, RP_BOUND_GRAPHS, RP_BOUND_STAGING, RP_BOUND_SEQ_BYTES, RP_BOUND_UPDATES,
    RP_BOUND_STREAMS, RP_BOUND_CONTEXTS, RP_BOUND_TABLE, RP_BOUND_MEMORY, RP_BOUND_EVENTS,
    RP_BOUND_FORK_JOIN, RP_BOUND_COUNT
};

struct rp__bound_info {
    const char *key;     /* its key in the stats file's bound_hits_by and limits */
    const char *option;  /* the option that sets it, or NULL for a fixed limit */
    const char *what;    /* what a hit means, after "the limit is N: " */
    const char *todo;    /* what the user can do */
};
extern const struct rp__bound_info rp__bounds[RP_BOUND_COUNT];

/* One line naming bound `b`, its limit and what a hit means, e.g.
 * "REPRISE_MAX_OPS (4096): a stream queued more ops than that without a
 * synchronization or other boundary". `limit` 0: unknown, not printed. */
void rp__bound_describe(int b, unsigned long long limit, char *out, size_t n);

/* ---- differences: where a run of ops went another way -------------------------- */

/* The field of an op in which two runs differ (rp__op_delta, oprecord.h). */
enum rp__field {
    RP_FIELD_NONE,     /* no op differed: a boundary came before the sequence's end */
    RP_FIELD_LENGTH,   /* the number of ops (had, got) */
    RP_FIELD_KIND,     /* another kind of op (names: kind and got_kind) */
    RP_FIELD_ENTRY,    /* another variant of the entry point (_ptsz, CUkernel, pinned) */
    RP_FIELD_CONTEXT,
    RP_FIELD_STREAM,
    RP_FIELD_EVENT,
    RP_FIELD_FUNCTION, /* a kernel's function: the names are kernel and got_kernel */
    RP_FIELD_ATTRS,    /* a kernel's launch attributes (their counts) */
    RP_FIELD_GRID,     /* index: the dimension, 0-2 (RP_DIM_ALL: the whole grid) */
    RP_FIELD_BLOCK,    /* index: the dimension, 0-2 (RP_DIM_ALL: the whole block) */
    RP_FIELD_SHMEM,
    RP_FIELD_PARAM,    /* index: the parameter; at: the byte offset of the 8 bytes shown */
    RP_FIELD_DST,
    RP_FIELD_SRC,
    RP_FIELD_HOST,
    RP_FIELD_BYTES,    /* a copy's size */
    RP_FIELD_WIDTH,    /* a memset's width, in elements */
    RP_FIELD_ELEM,     /* a memset's element size */
    RP_FIELD_VALUE,    /* a memset's value */
    RP_FIELD_COUNT
};

#define RP_DIM_ALL 3 /* a grid or block as a whole (a volatile field) */

/* The field's name in the stats file: "grid.x", "param", "width"... (`index`
 * names a grid's or block's dimension; RP_DIM_ALL: "grid", "block"). */
const char *rp__field_key(int field, unsigned index);
/* The field whose stats name is `key` (and its dimension in *index), or -1. */
int rp__field_from_key(const char *key, unsigned *index);

enum rp__div_why {
    RP_DIV_SHAPE,        /* not a divergence: a run whose structure was new, against the
                            stream's run before it */
    RP_DIV_OTHER_OP,     /* another operation (kernel, copy kind, structure) */
    RP_DIV_OTHER_VALUES, /* the same operation, other arguments, geometry or addresses */
    RP_DIV_BOUNDARY,     /* a boundary came before the sequence ended */
    RP_DIV_WHY_COUNT
};
/* Their names in the stats file ("another_operation"...). */
extern const char *const rp__div_why_keys[RP_DIV_WHY_COUNT];

#define RP_NAME_LEN 256 /* a kernel's name as the stats file keeps it */

/* One difference: op `op` of what the sequence (or the stream's run
 * before) had, against what the occurrence brought. */
struct rp__diff {
    int why;                  /* enum rp__div_why */
    int field;                /* enum rp__field */
    int structure;            /* 1 when no node update can follow it: a new structure */
    int ended;                /* a divergence after which the held ops ran eagerly (no
                                 other sequence took the run) */
    unsigned op;              /* the op's index in the sequence or run, from 0 */
    unsigned index, at;       /* see enum rp__field */
    unsigned long long had, got;
    char kind[16];            /* the op's kind ("kernel", "memset", ...; "" for none) */
    char got_kind[16];        /* RP_FIELD_KIND: the occurrence's */
    char kernel[RP_NAME_LEN]; /* the kernel at that op, as the driver names it ("" if none) */
    char got_kernel[RP_NAME_LEN]; /* RP_FIELD_FUNCTION, RP_FIELD_KIND: the occurrence's */
};

/* "op 17 softmax_warp_forward<float, float, float, 5> -> <..., 6>", "op 3
 * gemv_n_small: grid.x 3 -> 4", "op 2 (memset): width 2048 -> 2176", "a
 * boundary at op 5 of 7": names demangled, a second name shortened to what
 * differs from the first. */
void rp__diff_describe(const struct rp__diff *d, char *out, size_t n);

/* ---- the facts the sentences are computed from ------------------------------------ */

/* A field updated before each replay of a sequence. */
struct rp__vol_fact {
    unsigned op;
    int field;                /* enum rp__field; RP_FIELD_GRID etc. for the whole geometry */
    unsigned index;           /* RP_FIELD_PARAM: the parameter */
    const char *kind;         /* the op's kind */
    const char *kernel;       /* "" for a copy or memset */
};

/* What is known of one sequence (a stats file's `sequences` entry). */
struct rp__seq_fact {
    const char *who;          /* its process, when several are merged (else NULL) */
    unsigned id;
    double ops, occurrences, replays, captured_at, updates;
    double divergences;       /* runs that began like it and went another way */
    double flushes, flushed_ops; /* ... of those, runs that then ran eagerly, and their ops
                                    (-1: not known, an older file) */
    int by_period;
    const char *first_kernel; /* raw, "" for a sequence of copies */
    const struct rp__diff *divs; /* its last divergences, newest first */
    unsigned ndivs;
    const struct rp__vol_fact *vols;
    unsigned nvols;
};

/* What is known of a process, or of several summed. Counters missing from
 * an older file are 0; settings not known are 0. */
struct rp__run_fact {
    double ops, replayed, replays, part_launches, graphs, updates, segments, divergences;
    double eager[RP_EAGER_REASON_COUNT];
    double hits[RP_BOUND_COUNT], limits[RP_BOUND_COUNT];
    double program_captures, too_many_updates, capture_failures, backoffs, evictions;
    double graphs_dropped, rests, widenings, attr_boundaries;
    double new_shapes;        /* runs whose structure had not been seen before */
    double new_shape_ops;     /* ... their ops that ran eagerly, warming up */
    double warmup, min_ops;   /* REPRISE_WARMUP, REPRISE_MIN_OPS */
    double cost_eager_ns, cost_update_ns, cost_launch_ns; /* measured means, 0 if not */
    double wall_s;            /* the process's wall time (summed over processes), 0 if not known */
    double processes;         /* how many processes are summed (0 or 1: one) */
    const struct rp__diff *shapes; /* the last runs whose structure was new, newest first */
    unsigned nshapes;
    /* Summed over processes (merged 1), whether runs kept coming with new
     * structures is decided per process (rp__shapes_change of each):
     * `changing` says if one did, its shapes first. Else (0) it is decided
     * from the counts above. */
    int merged, changing;
    const struct rp__seq_fact *seqs;
    size_t nseqs;
};

/* Add `b`'s counters to `a` (not its arrays: the caller joins those); `a`
 * is then merged, and changing if `b` is. */
void rp__run_fact_add(struct rp__run_fact *a, const struct rp__run_fact *b);

/* Whether the ops that warmed up did so mostly because runs kept coming
 * with structures not seen before (not a loop's first occurrence, setup
 * and end, new once each). */
int rp__shapes_change(const struct rp__run_fact *f);

/* ---- sentences ------------------------------------------------------------------------ */

#define RP_LINE_LEN 720

struct rp__line {
    double weight;            /* ops concerned, for the order */
    int reason;               /* enum rp__eager_reason, or -1 */
    char text[RP_LINE_LEN];
};

/* One sentence per reason that sent ops eagerly, most ops first: its share,
 * and why, from the cause the facts show ("363 ops (100.0%) ran eagerly
 * because op 1, a memset, grows its width every time (...)"). Returns how
 * many (at most `max`). */
int rp__explain_eager(const struct rp__run_fact *f, struct rp__line *out, int max);

/* What replaying saved, from the costs measured in the run: "driver launches
 * 1,403 -> 221; host launch time about 4.1 ms less (an eager launch 3.5 us,
 * a graph launch 9.8 us, a node update 0.4 us, as measured)". Returns 0
 * (out empty) when nothing was replayed. */
int rp__explain_saved(const struct rp__run_fact *f, char *out, size_t n);

/* Sentences about one sequence for `reprise explain` and the report:
 * where its occurrences went (eager before its graph, replayed, held and
 * flushed after diverging), why runs diverged from it, what is updated.
 * Returns how many lines. */
int rp__explain_seq(const struct rp__seq_fact *s, struct rp__line *out, int max);

/* `n` with thousands separated: "1,403". */
void rp__count_text(double n, char *out, size_t size);

#define RP_ADVICE_MAX 3
#define RP_ADVICE_LEN RP_LINE_LEN

/* Up to RP_ADVICE_MAX suggestions into out[], most work concerned first;
 * returns how many. Each is one sentence, without a prefix or newline, and
 * only where the cause the facts show says that something would help. */
int rp__advice(const struct rp__run_fact *f, char out[RP_ADVICE_MAX][RP_ADVICE_LEN]);

#endif
