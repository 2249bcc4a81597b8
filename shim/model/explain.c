/* explain.c - the bounds by name, what each eager reason means, and the
 * summary's suggestions (explain.h).
 * Every suggestion says what the counters show and one thing to try; none
 * is made when the counters cannot back it (say, the number of contents a
 * sequence with updates cycles among is not counted, so no value of
 * REPRISE_MAX_VARIANTS is suggested). */
#include "explain.h"

#include <stdio.h>
#include <string.h>

const struct rp__bound_info rp__bounds[RP_BOUND_COUNT] = {
    [RP_BOUND_OPS] = {"max_ops", "REPRISE_MAX_OPS",
        "a stream queued more ops than that without a synchronization or other boundary; "
        "such a run is never captured",
        "if one step of the loop issues more ops than that, raise --max-ops above the step's "
        "length; a loop that never synchronizes is cut into steps only where its ops repeat "
        "with a period (no_period counts the ops of runs where none was found; "
        "reprise help reasons)"},
    [RP_BOUND_GRAPHS] = {"max_graphs", "REPRISE_MAX_GRAPHS",
        "every graph of a context was in use, so a new sequence stayed eager",
        "raise --max-graphs"},
    [RP_BOUND_STAGING] = {"max_staging", "REPRISE_MAX_STAGING",
        "the pinned staging for host-to-device copies in graphs was used up, so a sequence "
        "with such copies stayed eager",
        "raise --max-staging (bytes, K/M/G)"},
    [RP_BOUND_SEQ_BYTES] = {"max_seq_bytes", "REPRISE_MAX_SEQ_BYTES",
        "a run of ops carried more kernel parameter bytes than that; it was not learnt",
        "raise --max-seq-bytes (bytes, K/M/G)"},
    [RP_BOUND_UPDATES] = {"max_updates", "REPRISE_MAX_UPDATES",
        "a replay would have updated more graph nodes than that; it ran eagerly instead",
        "raise --max-updates up to the sequence's length (updating every node was still "
        "2-5x cheaper than launching eagerly on an H200)"},
    [RP_BOUND_STREAMS] = {"streams", NULL,
        "more than 128 streams in a context: the work of the others ran eagerly",
        "reuse streams (the limit is fixed)"},
    [RP_BOUND_CONTEXTS] = {"contexts", NULL,
        "more than 16 contexts: the work of the others ran eagerly",
        "nothing to set: the limit is fixed"},
    [RP_BOUND_TABLE] = {"param_layouts", NULL,
        "more than 1024 distinct kernels in a context: the launches of the others ran eagerly",
        "nothing to set: the limit is fixed"},
    [RP_BOUND_MEMORY] = {"memory", NULL,
        "the engine ran out of host memory: the work concerned ran eagerly",
        "free host memory"},
    [RP_BOUND_EVENTS] = {"events", NULL,
        "more than 3072 live events: records and waits of the others were boundaries",
        "destroy events no longer used (the limit is fixed)"},
    [RP_BOUND_FORK_JOIN] = {"fork_join", NULL,
        "a repeated run of ops spread over more than 9 streams or recorded more than 16 "
        "events: it ran eagerly",
        "nothing to set: the limits are fixed"},
};

/* One entry per eager reason of the engine (rp__eager_reason_names; a test
 * checks that none is missing), in the same order: what the program did, or
 * what the engine was doing, when ops of that reason ran one by one. */
const struct rp__reason_info rp__reasons[RP_REASONS] = {
    {"warming_up", "their sequence had not yet been seen --warmup times with the same "
                   "content, or this was the occurrence that got captured"},
    {"not_capturable", "calls reprise does not capture (they run as they come)"},
    {"segment_too_short", "fewer than --min-ops ops came between two synchronizations"},
    {"diverged", "held back while they matched a graph, then issued one by one when the "
                 "program went another way (or a captured sequence that ran eagerly)"},
    {"capture_failed", "their sequence's last capture failed: it waits before trying again"},
    {"backing_off", "their sequence waits longer before a capture: its graphs were replaced "
                    "or evicted before they paid off, a bound stopped its last capture, or "
                    "its graph was given up after a failed launch or update"},
    {"bound_hit", "a limit was reached (--max-ops, --max-graphs, the sequence table, "
                  "memory): the summary's \"bound hit\" lines say which"},
    {"program_capturing", "issued while the program was capturing a graph of its own: "
                          "reprise steps aside"},
    {"no_param_layout", "the kernel's parameter layout could not be read from the driver"},
    {"excluded_by_rule", "the kernel is kept out by --exclude or --include"},
    {"no_period", "a stream with no synchronization queued more than --max-ops ops before a "
                  "repeating step was found in it"},
    {"resting", "their stream had brought no replay in its last --patience ops and rested "
                "from learning for a while"},
};

const char *rp__reason_means(const char *name)
{
    for (int i = 0; i < RP_REASONS; i++)
        if (strcmp(rp__reasons[i].name, name) == 0)
            return rp__reasons[i].means;
    return NULL;
}

void rp__bound_describe(int b, unsigned long long limit, char *out, size_t n)
{
    const struct rp__bound_info *i = &rp__bounds[b];
    if (i->option && limit)
        snprintf(out, n, "%s (%llu): %s", i->option, limit, i->what);
    else if (i->option)
        snprintf(out, n, "%s: %s", i->option, i->what);
    else
        snprintf(out, n, "%s", i->what);
}

struct cand {
    double weight; /* ops concerned, for the order */
    char text[RP_ADVICE_LEN];
};

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

int rp__advice(const struct rp__advice_in *in, char out[RP_ADVICE_MAX][RP_ADVICE_LEN])
{
    struct cand c[RP_BOUND_COUNT + 4];
    int nc = 0, nbounds = 0;
    for (int b = 0; b < RP_BOUND_COUNT; b++)
        nbounds += in->hits[b] > 0;
    /* A bound hit: the ops it sent eager are known when it is the only bound
     * hit (ops_eager.bound_hit is not split by bound). */
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (in->hits[b] <= 0)
            continue;
        const char *name = rp__bounds[b].option ? rp__bounds[b].option : "a fixed bound";
        if (nbounds == 1 && in->eager_bound > 0)
            snprintf(c[nc].text, sizeof c[nc].text, "%s (hit %.0f time%s) sent %.0f ops "
                     "(%.1f%%) eager: %s", name, in->hits[b], in->hits[b] == 1 ? "" : "s",
                     in->eager_bound, pct(in->eager_bound, in->ops), rp__bounds[b].todo);
        else
            snprintf(c[nc].text, sizeof c[nc].text, "%s was hit %.0f time%s: %s", name,
                     in->hits[b], in->hits[b] == 1 ? "" : "s", rp__bounds[b].todo);
        c[nc++].weight = nbounds == 1 ? in->eager_bound : in->hits[b];
    }
    if (in->program_captures > 0) {
        snprintf(c[nc].text, sizeof c[nc].text,
                 "the program made %.0f stream capture%s of its own; reprise stepped aside "
                 "meanwhile (%.0f ops): where the program's own graphs already cover its loop, "
                 "reprise adds nothing, and it can run without it",
                 in->program_captures, in->program_captures == 1 ? "" : "s", in->eager_program);
        c[nc++].weight = in->eager_program > 0 ? in->eager_program : 1;
    }
    if (in->eager_no_layout > 0 && pct(in->eager_no_layout, in->ops) >= 1.0) {
        snprintf(c[nc].text, sizeof c[nc].text,
                 "%.0f ops (%.1f%%) were launches of kernels whose parameter layout the driver "
                 "would not give (cuFuncGetParamInfo needs a CUDA 12.4 driver or newer); "
                 "REPRISE_LOG=info names the kernels",
                 in->eager_no_layout, pct(in->eager_no_layout, in->ops));
        c[nc++].weight = in->eager_no_layout;
    }
    if (in->too_many_updates > 0 && in->hits[RP_BOUND_UPDATES] <= 0) {
        snprintf(c[nc].text, sizeof c[nc].text,
                 "%.0f replays were skipped because they needed more than REPRISE_MAX_UPDATES "
                 "node updates: %s", in->too_many_updates, rp__bounds[RP_BOUND_UPDATES].todo);
        c[nc++].weight = in->too_many_updates;
    }
    if (in->replayed <= 0 && in->eager_warming > 0 && pct(in->eager_warming, in->ops) >= 50.0) {
        snprintf(c[nc].text, sizeof c[nc].text,
                 "nothing was replayed and %.0f ops (%.1f%%) were still warming up: no run of "
                 "ops between synchronizations came back REPRISE_WARMUP times with the same "
                 "shape; a longer run, or a lower --warmup, may let it",
                 in->eager_warming, pct(in->eager_warming, in->ops));
        c[nc++].weight = in->eager_warming;
    }
    /* Most work concerned first (a stable insertion sort: few entries). */
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0 && c[j].weight > c[j - 1].weight; j--) {
            struct cand t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    int n = nc < RP_ADVICE_MAX ? nc : RP_ADVICE_MAX;
    for (int i = 0; i < n; i++)
        snprintf(out[i], RP_ADVICE_LEN, "%s", c[i].text);
    return n;
}
