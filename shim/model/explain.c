/* explain.c - the tables of explain.h (the eager reasons, the bounds, the
 * fields of a difference) and the plainer pieces: what replaying saved,
 * counts with separators, facts summed over processes. The sentences about
 * causes are why.c's. */
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

void rp__count_text(double v, char *out, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v < 0 ? -v : v);
    size_t nd = strlen(digits), w = 0;
    if (v < 0 && w + 1 < size)
        out[w++] = '-';
    for (size_t i = 0; i < nd && w + 2 < size; i++) {
        out[w++] = digits[i];
        if ((nd - i - 1) % 3 == 0 && i + 1 < nd)
            out[w++] = ',';
    }
    out[w] = '\0';
}

int rp__shapes_change(const struct rp__run_fact *f)
{
    if (f->merged)
        return f->changing && f->nshapes;
    return f->nshapes && f->new_shapes >= 4 && f->new_shapes * 2 >= f->segments &&
           f->new_shape_ops * 2 >= f->eager[RP_EAGER_WARMING_UP];
}

void rp__run_fact_add(struct rp__run_fact *a, const struct rp__run_fact *b)
{
    a->ops += b->ops, a->replayed += b->replayed, a->replays += b->replays;
    a->part_launches += b->part_launches;
    a->graphs += b->graphs, a->updates += b->updates, a->segments += b->segments;
    a->divergences += b->divergences;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++)
        a->eager[r] += b->eager[r];
    for (int k = 0; k < RP_BOUND_COUNT; k++) {
        a->hits[k] += b->hits[k];
        /* Processes may run with different limits: the largest among those
         * that hit the bound is named. */
        if (b->hits[k] > 0 && b->limits[k] > a->limits[k])
            a->limits[k] = b->limits[k];
    }
    a->program_captures += b->program_captures, a->too_many_updates += b->too_many_updates;
    a->capture_failures += b->capture_failures, a->backoffs += b->backoffs;
    a->evictions += b->evictions, a->graphs_dropped += b->graphs_dropped;
    a->rests += b->rests, a->widenings += b->widenings, a->attr_boundaries += b->attr_boundaries;
    a->new_shapes += b->new_shapes, a->new_shape_ops += b->new_shape_ops;
    /* Settings and costs: the first process's that has them (the costs
     * differ from run to run; a sum of means would mean nothing). */
    if (!a->warmup)
        a->warmup = b->warmup;
    if (!a->min_ops)
        a->min_ops = b->min_ops;
    if (!a->cost_eager_ns && b->cost_eager_ns && b->cost_launch_ns) {
        a->cost_eager_ns = b->cost_eager_ns;
        a->cost_update_ns = b->cost_update_ns;
        a->cost_launch_ns = b->cost_launch_ns;
    }
    a->wall_s += b->wall_s;
    a->processes += b->processes ? b->processes : 1;
    a->changing |= rp__shapes_change(b);
    a->merged = 1;
}

/* A duration in ns as a person reads it: "850 ns", "3.5 us", "4.1 ms", "2.3 s". */
static void duration_text(double ns, char *out, size_t n)
{
    if (ns < 1e3)
        snprintf(out, n, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(out, n, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(out, n, "%.1f ms", ns / 1e6);
    else
        snprintf(out, n, "%.2f s", ns / 1e9);
}

int rp__explain_saved(const struct rp__run_fact *f, char *out, size_t n)
{
    out[0] = '\0';
    if (f->replayed <= 0 || f->ops <= 0)
        return 0;
    /* Every op eagerly is one driver call; replayed, its graph's launches
     * (parts of occurrences launched apart count each: an upper bound). */
    double launches = f->replays + f->part_launches;
    double after = f->ops - f->replayed + launches;
    char before_s[32], after_s[32], rep_s[32], u_s[32];
    rp__count_text(f->ops, before_s, sizeof before_s);
    rp__count_text(after, after_s, sizeof after_s);
    rp__count_text(f->replayed, rep_s, sizeof rep_s);
    rp__count_text(f->updates, u_s, sizeof u_s);
    char r_s[32], p_s[48] = "";
    rp__count_text(f->replays, r_s, sizeof r_s);
    if (f->part_launches > 0) {
        char pl[32];
        rp__count_text(f->part_launches, pl, sizeof pl);
        snprintf(p_s, sizeof p_s, " and %s of parts", pl);
    }
    int w = snprintf(out, n, "driver launches %s -> %s (%s ops in %s graph launch%s%s%s%s%s)",
                     before_s, after_s, rep_s, r_s, f->replays == 1 ? "" : "es", p_s,
                     f->updates > 0 ? ", " : "", f->updates > 0 ? u_s : "",
                     f->updates > 0 ? (f->updates == 1 ? " node update" : " node updates") : "");
    if (w < 0 || (size_t)w >= n)
        return 1;
    if (f->cost_eager_ns <= 0 || f->cost_launch_ns <= 0 ||
        (f->updates > 0 && f->cost_update_ns <= 0)) {
        snprintf(out + w, n - (size_t)w, "; host time not estimated: %s",
                 f->cost_eager_ns <= 0 ? "no eager launch was timed (one in 32 is)"
                                       : "the graph launches or updates were not timed");
        return 1;
    }
    double saved = f->replayed * f->cost_eager_ns - launches * f->cost_launch_ns -
                   f->updates * f->cost_update_ns;
    if (f->wall_s > 0 && (saved < 0 ? -saved : saved) > f->wall_s * 1e9) {
        /* More than the run lasted: the launches timed did more than launch
         * (a driver that runs kernels in the launch call, as the CPU
         * driver does). */
        char e[32];
        duration_text(f->cost_eager_ns, e, sizeof e);
        snprintf(out + w, n - (size_t)w, "; host time not estimated: the launch costs measured "
                 "here (an eager launch %s) add up to more than the run's wall time, as on a "
                 "driver that runs kernels inside the launch call", e);
        return 1;
    }
    char d[32], e[32], l[32], u[32];
    duration_text(saved < 0 ? -saved : saved, d, sizeof d);
    duration_text(f->cost_eager_ns, e, sizeof e);
    duration_text(f->cost_launch_ns, l, sizeof l);
    duration_text(f->cost_update_ns, u, sizeof u);
    w += snprintf(out + w, n - (size_t)w,
                  "; host launch time about %s %s than eagerly (measured here: an eager launch "
                  "%s, a graph launch %s%s%s)", d, saved >= 0 ? "less" : "more", e, l,
                  f->updates > 0 ? ", a node update " : "", f->updates > 0 ? u : "");
    if (f->wall_s > 0 && w > 0 && (size_t)w < n) {
        char ws[32];
        duration_text(f->wall_s * 1e9, ws, sizeof ws);
        snprintf(out + w, n - (size_t)w, ", in %s of wall time%s", ws,
                 f->processes > 1 ? " (all processes)" : "");
    }
    return 1;
}
