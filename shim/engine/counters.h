/* counters.h - what the engine counts for the report, per context: one
 * record of uint64_t counters (the report sums contexts member by member),
 * written under the context's lock by every layer of the engine and read
 * by the report's snapshots (report/stats.c). Included by engine.h; the
 * counting functions are counters.c's (engine.h). */
#ifndef REPRISE_COUNTERS_H
#define REPRISE_COUNTERS_H

#include <stdint.h>

#include "explain.h"
#include "oprecord.h"
#include "cost.h"

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
    uint64_t idle_parts;         /* ... of those, launched as a part of its graph,
                                    the occurrence's match going on */
    uint64_t part_launches;      /* graph launches of a part of a sequence's ops
                                    (the others' nodes disabled) */
    uint64_t node_toggles;       /* nodes enabled or disabled for those */
    uint64_t periods_found;      /* periods accepted on streams without boundaries */
    uint64_t period_cuts;        /* segments ended by a period cut (a step or chunk start) */
    uint64_t rests;              /* times a stream stopped learning for a while (no replay paid) */
    uint64_t cost_samples[RP_COST_KINDS]; /* calls timed for the cost model, by kind */
    uint64_t cost_ns[RP_COST_KINDS];      /* ... and their total time */
    uint64_t beyond_max_updates; /* replays with more than REPRISE_MAX_UPDATES updates (costs allowed) */
    uint64_t landmarks_found;    /* streams with no period cut after a run of ops that comes back */
    uint64_t variant_execs;      /* executables added to a sequence with updates for a content that came back */
    uint64_t variant_exec_hits;  /* replays run by such an executable, holding their content already */
    uint64_t version_lookups;    /* values looked up among a kernel's versions (seq/versions.c) */
    uint64_t variants_passed_over; /* exact variants dropped: occurrences kept diverging from
                                      them where a sequence with updates served */
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
    uint64_t new_shapes;         /* segments whose structure had not been seen before */
    uint64_t new_shape_ops;      /* ... their ops that ran eagerly warming up */
    uint64_t widened_in_match;   /* of `widenings`, fields taken as volatile while an
                                    occurrence was matched (no eager step for them) */
    uint64_t event_node_updates; /* event wait nodes set to an occurrence's event */
    uint64_t func_forms;         /* functions a sequence's kernel was taken to switch to
                                    (rp_seq.forms) */
    uint64_t func_updates;       /* kernel nodes set to another function (RP_VOL_FUNC) */
    uint64_t func_updates_refused; /* ... refused by the driver (kernels' functions are
                                      structure again from then on: rp__func_fixed) */
    uint64_t programmatic_serialization_dropped; /* launches issued into a capture window
                                                    (or on the private stream) without the
                                                    programmatic stream serialization they
                                                    asked for: fully serialized */
};

#endif
