/* explain.h - what the stats mean for the person who ran the program: the
 * engine's bounds, each named by the option (or the fixed limit) that sets
 * it, what hitting it means and what to do; what each reason for eager ops
 * means; and up to three suggestions
 * drawn from the counters. Shared by the shim (its log and summary) and
 * `reprise report` (tools/), so it depends on nothing else of the shim. */
#ifndef REPRISE_EXPLAIN_H
#define REPRISE_EXPLAIN_H

#include <stddef.h>

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

/* What each reason for eager ops means, in plain words (the stats file's
 * ops_eager keys; `reprise help reasons`, the man page, the summary and
 * the report). */
#define RP_REASONS 12
struct rp__reason_info {
    const char *name;  /* the key, e.g. "warming_up" */
    const char *means; /* a clause: "their sequence had not yet been seen ..." */
};
extern const struct rp__reason_info rp__reasons[RP_REASONS];
/* What reason `name` means; NULL for a name this build does not know. */
const char *rp__reason_means(const char *name);

/* What the suggestions are drawn from: the counters summed over contexts
 * (processes, for the report). Missing ones are 0. */
struct rp__advice_in {
    double ops, replayed;
    double eager_bound, eager_program, eager_no_layout, eager_warming;
    double hits[RP_BOUND_COUNT];
    double limits[RP_BOUND_COUNT];
    double program_captures, too_many_updates, replays;
};

#define RP_ADVICE_MAX 3
#define RP_ADVICE_LEN 480

/* Up to RP_ADVICE_MAX suggestions into out[], most work concerned first;
 * returns how many. Each is one sentence, without a prefix or newline. */
int rp__advice(const struct rp__advice_in *in, char out[RP_ADVICE_MAX][RP_ADVICE_LEN]);

#endif
