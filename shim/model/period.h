/* period.h - finding the step of a stream that no host boundary delimits
 * (DESIGN.md §8): the period of its op shapes, from hash-head match finding
 * (a table from a hash of the last few op shape keys to where that run last
 * occurred proposes a distance per op), a few tracked distances with run
 * lengths, a period accepted once a whole repetition matched and the
 * longest such preferred, and a cut that does not move with where the
 * stream began (the op of the period whose window hash is smallest). It
 * only proposes where segments end: the matcher still compares every op in
 * full before any graph stands in for it. Pure: no driver, no lock (the
 * engine holds the context's lock). */
#ifndef REPRISE_PERIOD_H
#define REPRISE_PERIOD_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"

#define RP_PERIOD_RING 8192u   /* op shapes remembered per stream (a power of two) */
#define RP_PERIOD_HEAD 4096u   /* hash-head slots (a power of two) */
#define RP_PERIOD_WINDOW 4u    /* ops hashed together to propose a distance */
#define RP_PERIOD_SLOTS 4      /* distances tracked at once */
#define RP_PERIOD_MIN_RUN 16u  /* ops that must match in a row before any period counts */
#define RP_LANDMARK_GAPS 4u    /* gaps in a row within the band before a landmark counts */
#define RP_LANDMARK_DECAY 4096u /* ops fed between halvings of the window counts
                                  (a power of two; counts stay below twice it) */

typedef struct rp_period {
    struct rp_period_op {
        uint64_t pos1;         /* the op's position on its stream + 1 (0: none: the
                                  ring is born zeroed, touched only where ops go) */
        uint64_t key;          /* its shape key */
        uint64_t ckey;         /* its content key (which step of several it belongs to) */
        uint64_t win;          /* hash of the window ending at it (0: incomplete) */
    } *ring;
    uint64_t *head;            /* window hash -> last position + 1 (0: none) */
    struct {
        uint64_t d, run;       /* a distance, and how many ops in a row matched at it */
        uint64_t need;         /* the run at which it qualifies as the period (0: never) */
    } slot[RP_PERIOD_SLOTS];
    uint64_t last[RP_PERIOD_WINDOW - 1]; /* the keys of the ops just before (oldest first) */
    uint64_t last_pos;         /* position of the last op observed + 1 (0: none) */
    uint64_t prop, prop_pos;   /* the hash head's last proposal, and its op's position + 1 */
    unsigned int known;        /* ops observed in a row up to it, at most RP_PERIOD_WINDOW - 1 */
    unsigned int qual;         /* slots that qualified at the last decision (bit i: slot i) */
    int decided;               /* qual, misses and d unchanged since the last decision */
    unsigned int min_repeats;  /* rp__period_init's */
    uint64_t min_len;
    uint64_t span;             /* the longest step a multiple of d may make (0: d) */
    uint64_t d;                /* the accepted period of the shapes (0: none) */
    uint64_t step;             /* the step the stream is cut at: d, or the multiple of d
                                  over which the most ops' contents come back (groups of
                                  the same shapes whose contents differ within the step);
                                  0 while it is being decided, or with no period */
    uint64_t base;             /* a position where a step starts, when step is set */
    uint64_t misses;           /* mismatches at distance d since it last matched */
    /* A landmark: when no period holds, a window of shapes that comes back
     * at nearly the same distance every time (a step whose tail varies in
     * length: LLM sampling, an occasional extra op) marks where steps
     * start; segments are cut after it. */
    uint16_t *count;           /* per hash-head slot: occurrences (halved every
                                  RP_LANDMARK_DECAY ops fed) */
    uint64_t lcand, lcand_pos; /* the most frequent window (its hash), and where it
                                  last ended */
    uint64_t lcand_fed;        /* `fed` then (a gap with ops not fed between is not known) */
    unsigned int lcand_count;  /* its count */
    unsigned int lrun;         /* its latest gaps in a row within the band */
    uint64_t gmin, gmax;       /* ... their smallest and largest */
    uint64_t landmark;         /* the accepted landmark's window hash (0: none) */
    uint64_t lgmin, lgap;      /* the smallest and largest gaps it was accepted with: when
                                  they differ, no period is accepted while it holds (the
                                  step's length varies: a period found is a run of equal
                                  steps, and ends with it) */
    uint64_t lmiss;            /* ops fed since it last came */
    uint64_t lm_seen, lm_cut;  /* the position after its last occurrence, and that position
                                  when the stream was last cut for it: a cut is due while
                                  they differ (its last op may have been fed late: held
                                  for a match, then flushed) */
    uint64_t fed;              /* ops it followed, for the decay and gaps */
    uint64_t lfound;           /* landmarks accepted so far (stats) */
    uint64_t cut_from, cut_next, cut_chunk; /* rp__period_cut_before's last answer: the
                                  first cut at or after cut_from is cut_next
                                  (for chunks of cut_chunk; cut_next 0: none known) */
    uint64_t found;            /* periods accepted so far (stats) */
    uint64_t refined;          /* steps decided longer than their period (stats) */
    uint64_t settled;          /* steps decided so far (stats) */
    uint64_t dropped;          /* periods given up (stats) */
} rp_period;

/* Make `p` ready (tables allocated). `min_repeats`: whole periods that
 * must have matched before a period is accepted (at least 1); `min_len`:
 * the shortest period accepted; `span`: the longest step that a multiple
 * of the period may make (0: the step is the period; see
 * rp__period_feed). Returns 0, or -1 when memory runs out (then `p` stays
 * empty and every call below does nothing). */
int rp__period_init(rp_period *p, unsigned int min_repeats, uint64_t min_len, uint64_t span);
void rp__period_fini(rp_period *p);
/* Observe the op at position `pos` (positions increase, gaps allowed: ops
 * not observed are unknown, never taken for matches) with shape key `key`
 * and content key `ckey`. Shapes find the period d; contents choose the
 * step: once span + span / 2 ops have matched at d, the multiple of d (up
 * to span) at which the most ops' contents equal those a step before, d
 * unless a longer one does strictly better (a step of 8 groups of the same
 * 4 kernels, each group on its own buffers, is 32 ops, not 4), starting
 * where its steps differ least from the step before. Returns 1 when the
 * step changed (decided, or none any more). */
int rp__period_feed(rp_period *p, uint64_t pos, uint64_t key, uint64_t ckey);
/* Make the steps of the accepted period start at position `pos` (as at
 * every position d apart), in place of where winnowing put them: the
 * engine knows which start makes a step's ops independent of the step
 * before (a fork/join step, learn.c). No effect without a period. */
static inline void rp__period_align(rp_period *p, uint64_t pos)
{
    if (p->step) {
        p->base = pos;
        p->cut_next = 0;
    }
}
/* 1 when a segment should end before the op at `pos`: a step starts there,
 * or a chunk of at most `chunk` ops within the step does (0: no limit).
 * With no period, where the landmark's window ended just before (no
 * chunks). Asked for every launch of a matched step: the next cut is kept,
 * so that the positions before it are answered without a division. */
int rp__period_cut_before(rp_period *p, uint64_t pos, uint64_t chunk);
/* Decide the step of the accepted period now, from the ops fed so far (the
 * multiples of the period they allow), if rp__period_feed has not yet:
 * the stream is about to be cut. */
void rp__period_settle(rp_period *p, uint64_t pos);
/* 1 when the stream should be cut before the op at `pos`, which is about
 * to join it: a step (or chunk) of the period starts there, or, with a
 * landmark, it came since the last cut (rp__period_cut_taken then). */
static inline int rp__period_cut_due(rp_period *p, uint64_t pos, uint64_t chunk)
{
    if (p->d) {
        if (!p->step) /* decided now, from what was fed so far */
            rp__period_settle(p, pos);
        return rp__period_cut_before(p, pos, chunk);
    }
    return p->landmark && p->lm_seen != p->lm_cut;
}
/* 1 when rp__period_cut_before(p, pos, chunk) would answer 0 from what it
 * answered last (the first cut at or after an earlier position lies past
 * pos), the step decided: nothing to decide, nothing to do. A cut is kept
 * (cut_next, not 0) only with a period and its step decided, from a
 * position at or after base (period.c, keep_next_cut), and every change of
 * d, step or base clears it (rp__period_align, and period.c where each
 * changes): those need no test of their own (HOLDS). */
static inline int rp__period_no_cut_at(const rp_period *p, uint64_t pos, uint64_t chunk)
{
    int none = pos >= p->cut_from && pos < p->cut_next && chunk == p->cut_chunk;
    HOLDS(!none || (p->d && p->step && pos >= p->base));
    return none;
}
static inline void rp__period_cut_taken(rp_period *p)
{
    p->lm_cut = p->lm_seen;
}
/* 1 when the stream has a period or a landmark: it is cut into steps. */
static inline int rp__period_cuts(const rp_period *p)
{
    return p->d || p->landmark;
}
/* The longest step it is cut into: the step (the period while the step is
 * being decided), or the landmark's largest gap. */
static inline uint64_t rp__period_step(const rp_period *p)
{
    return p->d ? (p->step ? p->step : p->d) : p->lgap;
}

#endif
