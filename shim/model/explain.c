/* explain.c - the tables of explain.h (the eager reasons, the bounds, the
 * fields of a difference) and the summary's suggestions. Every suggestion
 * says what the counters show and one thing to try; none is made when the
 * counters cannot back it (say, the number of contents a sequence with
 * updates cycles among is not counted, so no value of REPRISE_MAX_VARIANTS
 * is suggested). */
#include "explain.h"

#include <stdio.h>
#include <string.h>

const struct rp__reason_info rp__reasons[RP_EAGER_REASON_COUNT] = {
    [RP_EAGER_WARMING_UP] = {"warming_up",
        "their run of ops had not yet come back REPRISE_WARMUP times, or was the occurrence "
        "being captured",
        "a run of ops between synchronizations is captured once it has come back "
        "REPRISE_WARMUP times; until then, and for work that never comes back (setup, a "
        "structure that changes every time), ops run eagerly"},
    [RP_EAGER_NOT_CAPTURABLE] = {"not_capturable",
        "launches or copies reprise cannot record (a launch attribute it does not know, an "
        "`extra` buffer it cannot read, a zero-byte copy...)",
        "they run as the program issued them"},
    [RP_EAGER_SHORT] = {"segment_too_short",
        "their run of ops between two synchronizations was shorter than REPRISE_MIN_OPS",
        "a graph launch does not pay for so few ops"},
    [RP_EAGER_DIVERGED] = {"diverged",
        "they were held while they matched a captured sequence, then issued one by one when "
        "the run went another way (or a captured sequence ran eagerly)",
        "a run that goes another way than every sequence it began like is issued as the "
        "program made it, in order; what changed is learnt for the next time"},
    [RP_EAGER_CAPTURE_FAILED] = {"capture_failed",
        "their run's last capture failed; reprise waits longer before trying again",
        "REPRISE_LOG=info gives the driver's error"},
    [RP_EAGER_BACKING_OFF] = {"backing_off",
        "their run waits longer before a capture: its stream's graphs were replaced before "
        "they paid off, a bound stopped its last capture, or its graph was given up",
        "the wait doubles each time, so that learning that does not pay stops costing"},
    [RP_EAGER_BOUND] = {"bound_hit",
        "a bound (REPRISE_MAX_OPS, REPRISE_MAX_GRAPHS, a table, memory) kept reprise from "
        "learning or replaying them",
        "each bound hit is named below with its option and limit"},
    [RP_EAGER_PROGRAM_CAPTURE] = {"program_capturing",
        "the program was making a stream capture of its own; reprise steps aside meanwhile",
        "the program's own graphs are left alone"},
    [RP_EAGER_NO_LAYOUT] = {"no_param_layout",
        "the driver would not give the kernel's parameter layout (cuFuncGetParamInfo needs a "
        "CUDA 12.4 driver or newer)",
        "without it a launch cannot be recorded"},
    [RP_EAGER_EXCLUDED] = {"excluded_by_rule",
        "the kernel is kept out by REPRISE_EXCLUDE or REPRISE_INCLUDE",
        "as the rules asked"},
    [RP_EAGER_NO_PERIOD] = {"no_period",
        "a stream with no synchronization ran more than REPRISE_MAX_OPS ops before reprise "
        "found the period its ops repeat with",
        "such a stream is cut into steps only where its ops repeat"},
    [RP_EAGER_RESTING] = {"resting",
        "their stream was resting from learning: nothing it learnt had been replayed in its "
        "last REPRISE_PATIENCE ops",
        "resting caps what learning costs where nothing comes back"},
};

int rp__reason_index(const char *key)
{
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++)
        if (!strcmp(rp__reasons[r].key, key))
            return r;
    return -1;
}

const char *const rp__div_why_keys[RP_DIV_WHY_COUNT] = {
    [RP_DIV_SHAPE] = "new_structure",
    [RP_DIV_OTHER_OP] = "another_operation",
    [RP_DIV_OTHER_VALUES] = "other_values",
    [RP_DIV_BOUNDARY] = "boundary",
};

static const char *const field_keys[RP_FIELD_COUNT] = {
    [RP_FIELD_NONE] = "none", [RP_FIELD_LENGTH] = "length", [RP_FIELD_KIND] = "kind",
    [RP_FIELD_ENTRY] = "entry", [RP_FIELD_CONTEXT] = "context", [RP_FIELD_STREAM] = "stream",
    [RP_FIELD_EVENT] = "event", [RP_FIELD_FUNCTION] = "function",
    [RP_FIELD_ATTRS] = "attributes", [RP_FIELD_GRID] = "grid", [RP_FIELD_BLOCK] = "block",
    [RP_FIELD_SHMEM] = "shmem", [RP_FIELD_PARAM] = "param", [RP_FIELD_DST] = "dst",
    [RP_FIELD_SRC] = "src", [RP_FIELD_HOST] = "host", [RP_FIELD_BYTES] = "bytes",
    [RP_FIELD_WIDTH] = "width", [RP_FIELD_ELEM] = "element_size", [RP_FIELD_VALUE] = "value",
};

const char *rp__field_key(int field, unsigned index)
{
    static const char *const dims[2][3] = {{"grid.x", "grid.y", "grid.z"},
                                           {"block.x", "block.y", "block.z"}};
    if ((field == RP_FIELD_GRID || field == RP_FIELD_BLOCK) && index < 3)
        return dims[field == RP_FIELD_BLOCK][index];
    return field >= 0 && field < RP_FIELD_COUNT ? field_keys[field] : "?";
}

int rp__field_from_key(const char *key, unsigned *index)
{
    *index = 0;
    for (int f = 0; f < RP_FIELD_COUNT; f++) {
        if (!strcmp(field_keys[f], key)) {
            if (f == RP_FIELD_GRID || f == RP_FIELD_BLOCK)
                *index = RP_DIM_ALL;
            return f;
        }
        size_t n = strlen(field_keys[f]);
        if ((f == RP_FIELD_GRID || f == RP_FIELD_BLOCK) && !strncmp(key, field_keys[f], n) &&
            key[n] == '.' && key[n + 1] >= 'x' && key[n + 1] <= 'z' && !key[n + 2]) {
            *index = (unsigned)(key[n + 1] - 'x');
            return f;
        }
    }
    return -1;
}

const struct rp__bound_info rp__bounds[RP_BOUND_COUNT] = {
    [RP_BOUND_OPS] = {"max_ops", "REPRISE_MAX_OPS",
        "a stream queued more ops than that without a synchronization or other boundary; "
        "such a run is never captured",
        "if one step of the loop issues more ops than that, raise --max-ops above the step's "
        "length; a loop that never synchronizes is cut into steps only where its ops repeat "
        "with a period (no_period counts the ops of runs where none was found; "
        "`reprise help reasons`)"},
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
