/* detector.h - counts segments by content in a bounded table and says when
 * one has been seen often enough to capture (DESIGN.md §5). A segment is
 * identified by a hash of its ops' content keys and confirmed by an exact
 * comparison with the first occurrence kept in the table. A segment whose
 * capture failed is not tried again for an exponentially growing number of
 * occurrences. Not thread-safe: the engine holds the context's lock. */
#ifndef REPRISE_DETECTOR_H
#define REPRISE_DETECTOR_H

#include "oprecord.h"

typedef enum rp_det_state {
    RP_DET_COUNTING = 0,
    RP_DET_CAPTURED,   /* a graph exists for it (the matcher owns the graph) */
} rp_det_state;

#define RP_DET_MAX_DISTINCT 16

typedef struct rp_det_entry {
    uint64_t key;        /* 0: slot free */
    size_t n;
    rp_op *ops;          /* the first occurrence, owned */
    uint64_t seen;       /* occurrences */
    uint64_t retry_at;   /* occurrence from which a capture may be tried again */
    unsigned int failures;
    int capture_failed;  /* the last back-off came from a failed capture (not from a
                            bound or a graph given up: rp__det_held_off) */
    rp_det_state state;
    uint64_t last_use;   /* detector clock, for LRU eviction */
    unsigned int id;     /* stable sequence id for stats */
    /* By-structure tables only: the distinct contents seen (their segment
     * content keys), up to RP_DET_MAX_DISTINCT; ndistinct goes one past it
     * when more were seen. `fresh` counts the latest occurrences in a row
     * whose content had not been seen before (contents that keep changing,
     * as a growing shape's do, against ones that come back). */
    uint64_t contents[RP_DET_MAX_DISTINCT];
    unsigned int ndistinct;
    unsigned int fresh;
    /* By-structure tables only: the latest occurrences in a row that ran
     * eagerly after diverging from an exact variant of the structure
     * (rp__det_diverging). */
    unsigned int diverging;
    /* By-structure tables only: per op, the fields in which occurrences so
     * far differed from the first (a volatile mask, kept by the engine,
     * which knows kernel layouts; an occurrence that differed where no mask
     * can say is left out). */
    uint64_t *differs;
    uint64_t stamp;      /* the caller's (0 in a new entry; the engine: 1 + how many
                            frees the program had made when the entry was made) */
} rp_det_entry;

typedef enum rp_det_verdict {
    RP_DET_TOO_SHORT,    /* fewer than min_ops: never captured */
    RP_DET_TOO_LONG,     /* more than max_ops: never captured */
    RP_DET_WARMING,      /* counted; not yet seen warmup times */
    RP_DET_CAPTURE,      /* capture it now (then call captured or failed) */
    RP_DET_BACKING_OFF,  /* its last capture failed; waiting */
    RP_DET_HAS_GRAPH,    /* already captured */
    RP_DET_NO_MEMORY,    /* could not keep a copy; counted as a bound hit */
} rp_det_verdict;

typedef struct rp_detector {
    /* 0: segments are the same when their content is (exact repeats).
     * 1: when their structure is; a capture is asked for once more than
     * `min_distinct` different contents were seen (fewer alternating
     * contents are left to the by-content table, one graph each), or once
     * the latest warmup + 1 occurrences (at least 2) each brought a content
     * never seen before, whatever `min_distinct` is: contents that keep
     * changing would never become exact variants. */
    int by_structure;
    unsigned int min_distinct;
    rp_det_entry *slots;
    size_t cap;
    /* The slots by key: open addressing over `index_mask` + 1 places (a
     * power of two, at least twice `cap`), each a slot's number + 1 (0:
     * empty), probed linearly from the key's low bits. An occurrence finds
     * its entry in a few probes where a scan of every slot cost thousands
     * of instructions an observe. */
    uint32_t *index;
    size_t index_mask;
    size_t free_from;    /* no slot below this one is free */
    size_t used_to;      /* no slot from this one on was ever keyed (a scan stops here) */
    unsigned int warmup;
    size_t min_ops, max_ops;
    uint64_t clock;
    unsigned int next_id;
    uint64_t evictions;  /* entries dropped to make room */
    uint64_t collisions; /* same hash, different content */
} rp_detector;

/* Set up a table of `cap` slots. Returns 0, or -1 if it cannot be
 * allocated (the detector is then empty and every observe says NO_MEMORY). */
int rp__det_init(rp_detector *d, size_t cap, unsigned int warmup, size_t min_ops,
                 size_t max_ops);
void rp__det_fini(rp_detector *d);
/* Make `d` a by-structure table (see rp_detector). */
void rp__det_by_structure(rp_detector *d, unsigned int min_distinct);
/* The segment key of `n` ops (their keys must be filled): by content, or by
 * structure when `structure`. */
uint64_t rp__det_key(const rp_op *ops, size_t n, int structure);
/* Count one occurrence of the segment `ops[0..n)`. *entry receives its slot
 * (NULL for TOO_SHORT, TOO_LONG and NO_MEMORY). */
rp_det_verdict rp__det_observe(rp_detector *d, const rp_op *ops, size_t n,
                               rp_det_entry **entry);
/* The occurrence just observed in by-structure entry `e` (verdict `v`)
 * had diverged from an exact variant of its structure, on its contents
 * (`diverged`), or ran eagerly with none to diverge from. When the latest
 * warmup + 1 occurrences (at least 2) each diverged so, the variants do
 * not serve the structure's contents (a counter whose value comes back a
 * few times within a step, then never): the capture with updates is asked
 * for as for contents that keep changing. Returns `v`, or RP_DET_CAPTURE
 * (RP_DET_BACKING_OFF while a failure's back-off lasts) in place of
 * RP_DET_WARMING. */
rp_det_verdict rp__det_diverging(rp_detector *d, rp_det_entry *e, rp_det_verdict v,
                                 int diverged);
/* Make the latest occurrence `ops[0..n)` (of the same structure) the one
 * the entry keeps, before a capture with volatile fields: its addresses are
 * live, where the first occurrence's may have been freed since (a step that
 * frees and allocates its buffers every time). Returns 0, or -1 (the entry
 * unchanged) when memory runs out or the entry keeps no copy. */
int rp__det_refresh(rp_det_entry *e, const rp_op *ops, size_t n);
/* The capture asked for succeeded: the segment now has a graph. */
void rp__det_captured(rp_detector *d, rp_det_entry *e);
/* Its graph has been replayed often enough: forget past failures. */
void rp__det_paid_off(rp_det_entry *e);
/* The capture failed: back off for warmup * 2^failures occurrences. */
void rp__det_capture_failed(rp_detector *d, rp_det_entry *e);
/* The same back-off, no capture having failed: a bound stopped the
 * capture, or the graph was given up (its launch failed, or its replays
 * kept needing too many updates). Only the reason differs (capture_failed
 * is 0): the engine counts the ops of the wait apart. */
void rp__det_held_off(rp_detector *d, rp_det_entry *e);
/* The graph of a segment was dropped (evicted or invalid): count it again
 * from zero. */
void rp__det_forget_graph(rp_detector *d, rp_det_entry *e);

#endif
