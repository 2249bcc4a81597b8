/* Stats: the counters, and the JSON report written at exit, at a signal and
 * every few seconds while the program runs (docs/stats.md), always whole.
 *
 * Counters are relaxed atomics bumped by enabled wrappers only: disabled,
 * the shim counts nothing, so the report then says "enabled": false with no
 * calls.  The report is written with write(2) through a fixed buffer and
 * reads nothing but our own counters, because at exit the driver and stdio
 * may already be shut down. */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coord.h"
#include "explain.h"
#include "names.h"
#include "reprise.h"

void rp__stats_reset(void)
{
    for (int i = 0; i < RP_E_COUNT; i++) {
        atomic_store(&rp__calls[i], 0);
        atomic_store(&rp__handed_out[i], 0);
    }
    atomic_store(&rp__lookups, 0);
    atomic_store(&rp__lookups_wrapped, 0);
}

/* The limit each bound stands at (0 for the fixed ones, whose description
 * says it). */
static uint64_t bound_limit(int b)
{
    switch (b) {
    case RP_BOUND_OPS: return rp__eng.cfg.max_ops;
    case RP_BOUND_GRAPHS: return rp__eng.cfg.max_graphs;
    case RP_BOUND_STAGING: return rp__eng.cfg.max_staging;
    case RP_BOUND_SEQ_BYTES: return rp__eng.cfg.max_seq_bytes;
    case RP_BOUND_UPDATES: return rp__eng.cfg.cost.max_updates;
    default: return 0;
    }
}

/* The variables a rank is read from, the first set wins (%r). */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                                        "RANK"};

/* The variable the rank came from, "" when none is set. */
static const char *rank_variable(void)
{
    for (size_t k = 0; k < sizeof rank_vars / sizeof rank_vars[0]; k++) {
        const char *r = getenv(rank_vars[k]);
        if (r && r[0])
            return rank_vars[k];
    }
    return "";
}

/* ---- a buffered writer that remembers the first failure ------------------ */

struct out {
    int fd;
    bool ok;
    size_t n;
    char buf[4096];
};

static void out_flush(struct out *o)
{
    size_t done = 0;
    while (o->ok && done < o->n) {
        ssize_t w = write(o->fd, o->buf + done, o->n - done);
        if (w <= 0)
            o->ok = false;
        else
            done += (size_t)w;
    }
    o->n = 0;
}

static void out_str(struct out *o, const char *s)
{
    for (; *s; s++) {
        if (o->n == sizeof o->buf)
            out_flush(o);
        o->buf[o->n++] = *s;
    }
}

static void out_u64(struct out *o, uint64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    out_str(o, tmp);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void out_json_str(struct out *o, const char *s)
{
    out_str(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\', tmp[1] = (char)c, tmp[2] = 0;
        } else if (c < 0x20) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
        } else {
            tmp[0] = (char)c, tmp[1] = 0;
        }
        out_str(o, tmp);
    }
    out_str(o, "\"");
}

/* Entry ids sorted by exported name, for a stable, diffable report. */
static void sorted_ids(int ids[RP_E_COUNT])
{
    for (int i = 0; i < RP_E_COUNT; i++) {
        int j = i;
        while (j > 0 && strcmp(rp__entry_names[ids[j - 1]], rp__entry_names[i]) > 0) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = i;
    }
}

static void out_key_u64(struct out *o, const char *sep, const char *key, uint64_t v)
{
    out_str(o, sep);
    out_json_str(o, key);
    out_str(o, ": ");
    out_u64(o, v);
}

static void out_ratio(struct out *o, const char *sep, const char *key, uint64_t part,
                      uint64_t whole)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.4f", whole ? (double)part / (double)whole : 0.0);
    out_str(o, sep);
    out_json_str(o, key);
    out_str(o, ": ");
    out_str(o, tmp);
}

static uint64_t ops_total(const struct rp__engine_stats *e)
{
    uint64_t seen = 0;
    for (int k = 0; k < RP_OP_KINDS; k++)
        seen += e->ops_seen[k];
    return seen;
}

/* The counters of one context, or of all summed: `indent` before each key. */
static void write_counters(struct out *o, const struct rp__engine_stats *e, uint64_t evictions,
                           const char *indent)
{
    static const char *const kinds[RP_OP_KINDS] = {"not_capturable", "kernel", "htod", "dtod",
                                                   "dtoh", "memset", "event_record", "event_wait"};
    char sep[16];
    snprintf(sep, sizeof sep, ",\n%s", indent);
    uint64_t seen = ops_total(e), eager = 0;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++)
        eager += e->ops_eager[r];
    out_str(o, indent);
    out_str(o, "\"ops_seen\": {");
    const char *s2 = "";
    for (int k = 0; k < RP_OP_KINDS; k++) {
        out_key_u64(o, s2, kinds[k], e->ops_seen[k]);
        s2 = ", ";
    }
    out_str(o, "}");
    out_key_u64(o, sep, "ops_total", seen);
    out_key_u64(o, sep, "ops_replayed", e->ops_replayed);
    out_ratio(o, sep, "replayed_share", e->ops_replayed, seen);
    out_key_u64(o, sep, "ops_eager_total", eager);
    out_str(o, sep);
    out_str(o, "\"ops_eager\": {");
    s2 = "";
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        out_key_u64(o, s2, rp__eager_reason_names[r], e->ops_eager[r]);
        s2 = ", ";
    }
    out_str(o, "}");
    out_key_u64(o, sep, "segments", e->segments);
    out_key_u64(o, sep, "graphs_captured", e->graphs_captured);
    out_key_u64(o, sep, "capture_failures", e->capture_failures);
    out_key_u64(o, sep, "graphs_dropped", e->graphs_dropped);
    out_key_u64(o, sep, "replays", e->replays);
    out_key_u64(o, sep, "replay_failures", e->replay_failures);
    out_key_u64(o, sep, "divergences", e->divergences);
    out_key_u64(o, sep, "bound_hits", e->bound_hits);
    out_str(o, sep);
    out_str(o, "\"bound_hits_by\": {");
    for (int b = 0; b < RP_BOUND_COUNT; b++)
        out_key_u64(o, b ? ", " : "", rp__bounds[b].key, e->bound_hits_by[b]);
    out_str(o, "}");
    out_key_u64(o, sep, "detector_evictions", evictions);
    out_key_u64(o, sep, "capture_us", e->capture_ns / 1000);
    out_key_u64(o, sep, "instantiate_us", e->instantiate_ns / 1000);
    out_key_u64(o, sep, "staging_bytes", e->staging_bytes);
    out_key_u64(o, sep, "volatile_captures", e->volatile_captures);
    out_key_u64(o, sep, "updates", e->updates);
    out_ratio(o, sep, "updates_per_replay", e->updates, e->replays);
    out_key_u64(o, sep, "update_failures", e->update_failures);
    out_key_u64(o, sep, "too_many_updates", e->too_many_updates);
    out_key_u64(o, sep, "widenings", e->widenings);
    out_key_u64(o, sep, "instantiates", e->instantiates);
    out_key_u64(o, sep, "exec_updates", e->exec_updates);
    out_key_u64(o, sep, "exec_update_refused", e->exec_update_refused);
    out_key_u64(o, sep, "evictions", e->evictions);
    out_key_u64(o, sep, "backoffs", e->backoffs);
    out_key_u64(o, sep, "idle_flushes", e->idle_flushes);
    out_key_u64(o, sep, "idle_parts", e->idle_parts);
    out_key_u64(o, sep, "part_launches", e->part_launches);
    out_key_u64(o, sep, "node_toggles", e->node_toggles);
    out_key_u64(o, sep, "periods_found", e->periods_found);
    out_key_u64(o, sep, "period_cuts", e->period_cuts);
    out_key_u64(o, sep, "landmarks_found", e->landmarks_found);
    out_key_u64(o, sep, "rests", e->rests);
    out_key_u64(o, sep, "beyond_max_updates", e->beyond_max_updates);
    out_key_u64(o, sep, "variant_execs", e->variant_execs);
    out_key_u64(o, sep, "variant_exec_hits", e->variant_exec_hits);
    out_key_u64(o, sep, "variants_passed_over", e->variants_passed_over);
    out_key_u64(o, sep, "fork_joins", e->fork_joins);
    out_key_u64(o, sep, "stream_joins", e->stream_joins);
    out_key_u64(o, sep, "fork_joins_busy", e->fork_joins_busy);
    out_key_u64(o, sep, "staging_busy", e->staging_busy);
    out_key_u64(o, sep, "event_settles", e->event_settles);
    out_key_u64(o, sep, "cross_context_waits", e->cross_context_waits);
    /* Launches kept eager for a launch attribute a graph cannot carry. */
    static const char *const attr_names[] = {
        "other", "access_policy_window", "cooperative", "synchronization_policy",
        "cluster_dimension", "cluster_scheduling_policy_preference",
        "programmatic_stream_serialization", "programmatic_event", "priority",
        "mem_sync_domain_map", "mem_sync_domain", "preferred_cluster_dimension",
        "launch_completion_event", "device_updatable_kernel_node",
        "preferred_shared_memory_carveout", "id_15", "nvlink_util_centric_scheduling"};
    out_str(o, sep);
    out_str(o, "\"attr_boundaries\": {");
    for (size_t a = 0; a < sizeof attr_names / sizeof attr_names[0]; a++)
        out_key_u64(o, a ? ", " : "", attr_names[a], e->attr_boundaries[a]);
    out_str(o, "}");
    out_key_u64(o, sep, "programmatic_serialization_dropped", e->programmatic_serialization_dropped);
    out_str(o, sep);
    out_str(o, "\"costs_ns\": {");
    static const char *const cost_names[RP_COST_KINDS] = {"eager_launch", "node_update",
                                                          "graph_launch"};
    for (int k = 0; k < RP_COST_KINDS; k++)
        out_key_u64(o, k ? ", " : "", cost_names[k],
                    e->cost_samples[k] ? e->cost_ns[k] / e->cost_samples[k] : 0);
    out_str(o, "}");
    out_str(o, sep);
    out_str(o, "\"cost_samples\": {");
    for (int k = 0; k < RP_COST_KINDS; k++)
        out_key_u64(o, k ? ", " : "", cost_names[k], e->cost_samples[k]);
    out_str(o, "}");
    out_key_u64(o, sep, "staging_live_bytes", e->staging_live_bytes);
    out_str(o, sep);
    out_key_u64(o, "\"graph_nodes\": {", "kernel", e->nodes_kernel);
    out_key_u64(o, ", ", "memcpy", e->nodes_memcpy);
    out_key_u64(o, ", ", "memset", e->nodes_memset);
    out_key_u64(o, ", ", "other", e->nodes_other);
    out_str(o, "}");
}

static void add_counters(struct rp__engine_stats *sum, const struct rp__engine_stats *e)
{
    uint64_t *d = (uint64_t *)sum;
    const uint64_t *x = (const uint64_t *)e;
    for (size_t i = 0; i < sizeof *e / sizeof(uint64_t); i++)
        d[i] += x[i];
}

/* Bound hits that no context counted belong to the process's totals. */
static void add_contextless_hits(struct rp__engine_stats *sum)
{
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        uint64_t n = rp__bound_hits_without_context((enum rp__bound)b);
        sum->bound_hits += n;
        sum->bound_hits_by[b] += n;
    }
}

/* The capture engine's sections (docs/stats.md): top-level totals, then
 * "engine" with the sums, one entry per context and one per sequence. */
static void write_engine(struct out *o)
{
    static struct rp__seq_info seqs[64];
    static struct rp__engine_stats per[16];
    static uint64_t per_ev[16];
    struct rp__engine_stats sum;
    memset(&sum, 0, sizeof sum);
    uint64_t sum_ev = 0;
    size_t nctx = 0;
    while (nctx < 16 && rp__engine_stats_snapshot(nctx, &per[nctx], &per_ev[nctx])) {
        add_counters(&sum, &per[nctx]);
        sum_ev += per_ev[nctx];
        nctx++;
    }
    add_contextless_hits(&sum);
    out_key_u64(o, ",\n  ", "ops", ops_total(&sum));
    out_key_u64(o, ",\n  ", "replayed_ops", sum.ops_replayed);
    out_ratio(o, ",\n  ", "replayed_share", sum.ops_replayed, ops_total(&sum));
    out_str(o, ",\n  \"engine\": {\n");
    write_counters(o, &sum, sum_ev, "    ");
    out_key_u64(o, ",\n    ", "program_captures", rp__engine_program_captures());
    out_str(o, ",\n    \"limits\": {");
    for (int b = 0, n = 0; b < RP_BOUND_COUNT; b++)
        if (rp__bounds[b].option)
            out_key_u64(o, n++ ? ", " : "", rp__bounds[b].key, bound_limit(b));
    out_str(o, "}");
    out_str(o, ",\n    \"contexts\": [");
    for (size_t c = 0; c < nctx; c++) {
        out_str(o, c ? ", {\n" : "{\n");
        out_key_u64(o, "      ", "index", c);
        out_str(o, ",\n");
        write_counters(o, &per[c], per_ev[c], "      ");
        out_str(o, "\n    }");
    }
    out_str(o, "],\n    \"sequences\": [");
    size_t n = rp__engine_seq_snapshot(seqs, sizeof seqs / sizeof seqs[0]);
    const char *sep = "\n      ";
    for (size_t i = 0; i < n; i++) {
        out_str(o, sep);
        out_key_u64(o, "{", "id", seqs[i].id);
        out_key_u64(o, ", ", "ops", seqs[i].ops);
        out_str(o, ", \"first_kernel\": ");
        out_json_str(o, seqs[i].first_kernel);
        out_str(o, ", \"first_kernels\": ");
        out_json_str(o, seqs[i].first_kernels);
        out_key_u64(o, ", ", "occurrences", seqs[i].occurrences);
        out_key_u64(o, ", ", "captured_at", seqs[i].captured_at);
        out_key_u64(o, ", ", "replays", seqs[i].replays);
        out_key_u64(o, ", ", "ops_replayed", seqs[i].replays * seqs[i].ops);
        out_key_u64(o, ", ", "divergences", seqs[i].divergences);
        out_key_u64(o, ", ", "updates", seqs[i].updates);
        out_key_u64(o, ", ", "variants", seqs[i].variants);
        out_str(o, seqs[i].by_period ? ", \"found_by\": \"period\"" : ", \"found_by\": \"boundary\"");
        out_str(o, ", \"volatile\": ");
        out_json_str(o, seqs[i].volatile_fields);
        if (seqs[i].div_why) {
            out_key_u64(o, ", \"last_divergence\": {", "op", seqs[i].div_op);
            out_str(o, ", \"kernel\": ");
            out_json_str(o, seqs[i].div_kernel);
            out_str(o, ", \"reason\": ");
            out_json_str(o, seqs[i].div_why);
            out_str(o, "}");
        }
        out_str(o, "}");
        sep = ",\n      ";
    }
    out_str(o, n ? "\n    ]\n  }" : "]\n  }");
}

bool rp__stats_write_fd(int fd)
{
    static struct out o; /* 4 KiB: static, not on a possibly small stack */
    o.fd = fd;
    o.ok = true;
    o.n = 0;
    int ids[RP_E_COUNT];
    sorted_ids(ids);

    out_str(&o, "{\n  \"version\": ");
    out_u64(&o, REPRISE_STATS_VERSION);
    out_str(&o, ",\n  \"reprise_version\": ");
    out_json_str(&o, REPRISE_VERSION);
    out_str(&o, ",\n  \"pid\": ");
    out_u64(&o, (uint64_t)getpid());
    {
        char host[256], rank[32];
        if (gethostname(host, sizeof host) != 0)
            host[0] = '\0';
        host[sizeof host - 1] = '\0';
        rp__stats_path("%r", rank, sizeof rank);
        out_str(&o, ",\n  \"host\": ");
        out_json_str(&o, host);
        out_str(&o, ",\n  \"rank\": ");
        out_json_str(&o, rank);
        out_str(&o, ",\n  \"rank_from\": ");
        out_json_str(&o, rank_variable());
    }
    out_str(&o, ",\n  \"enabled\": ");
    /* Enabled by REPRISE (the wrappers may be on for a trace alone; a
     * process that made no driver call was never initialised, and says
     * what REPRISE asked); the engine ran only where the driver was loaded. */
    bool ready = atomic_load_explicit(&rp__state, memory_order_acquire) == RP_INIT_READY;
    bool enabled = ready ? rp__enabled && !rp__trace_alone : rp__option(RP_OPTION_ENABLE).b;
    bool engine = enabled && ready && rp__driver_loaded();
    out_str(&o, enabled ? "true" : "false");
    out_str(&o, ",\n  \"driver\": {\"path\": ");
    out_json_str(&o, rp__option(RP_OPTION_DRIVER).path ? rp__option(RP_OPTION_DRIVER).path : "");
    out_str(&o, ", \"loaded\": ");
    out_str(&o, rp__driver_loaded() ? "true" : "false");
    if (rp__driver_load_error()[0]) {
        out_str(&o, ", \"error\": ");
        out_json_str(&o, rp__driver_load_error());
    }
    out_str(&o, "},\n  \"calls\": {");
    const char *sep = "\n    ";
    for (int k = 0; k < RP_E_COUNT; k++) {
        uint64_t n = atomic_load_explicit(&rp__calls[ids[k]], memory_order_relaxed);
        if (n == 0)
            continue;
        out_str(&o, sep);
        out_json_str(&o, rp__entry_names[ids[k]]);
        out_str(&o, ": ");
        out_u64(&o, n);
        sep = ",\n    ";
    }
    out_str(&o, sep[0] == ',' ? "\n  },\n" : "},\n");
    out_str(&o, "  \"proc_address\": {\n    \"lookups\": ");
    out_u64(&o, atomic_load_explicit(&rp__lookups, memory_order_relaxed));
    out_str(&o, ",\n    \"wrapped_lookups\": ");
    out_u64(&o, atomic_load_explicit(&rp__lookups_wrapped, memory_order_relaxed));
    out_str(&o, ",\n    \"wrapped\": [");
    sep = "";
    for (int k = 0; k < RP_E_COUNT; k++) {
        if (!atomic_load_explicit(&rp__handed_out[ids[k]], memory_order_relaxed))
            continue;
        out_str(&o, sep);
        out_json_str(&o, rp__entry_names[ids[k]]);
        sep = ", ";
    }
    out_str(&o, "]\n  }");
    if (engine)
        write_engine(&o);
    out_str(&o, "\n}\n");
    out_flush(&o);
    return o.ok;
}

/* Sum the engine's counters over every context. */
static struct rp__engine_stats engine_totals(void)
{
    struct rp__engine_stats sum, one;
    uint64_t ev;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; rp__engine_stats_snapshot(i, &one, &ev); i++)
        add_counters(&sum, &one);
    add_contextless_hits(&sum);
    return sum;
}

void rp__summary_write(int fd)
{
    static struct out o;
    static struct rp__seq_info seqs[64];
    char line[512];
    o.fd = fd;
    o.ok = true;
    o.n = 0;
    if (!rp__driver_loaded()) {
        /* Not "0 capturable ops": say why nothing could be. */
        snprintf(line, sizeof line,
                 "reprise: nothing captured: the CUDA driver %s could not be loaded (%s), so "
                 "every driver call failed; --driver PATH or LD_LIBRARY_PATH says where one is\n",
                 rp__option(RP_OPTION_DRIVER).path, rp__driver_load_error());
        out_str(&o, line);
        out_flush(&o);
        return;
    }
    struct rp__engine_stats e = engine_totals();
    uint64_t seen = ops_total(&e);
    snprintf(line, sizeof line,
             "reprise: %llu capturable ops, %llu replayed (%.1f%%) in %llu graph launches; "
             "%llu graph%s captured, %llu updates applied\n",
             (unsigned long long)seen, (unsigned long long)e.ops_replayed,
             seen ? 100.0 * (double)e.ops_replayed / (double)seen : 0.0,
             (unsigned long long)e.replays, (unsigned long long)e.graphs_captured,
             e.graphs_captured == 1 ? "" : "s", (unsigned long long)e.updates);
    out_str(&o, line);
    /* The three largest reasons for eager ops. */
    int top[3] = {-1, -1, -1};
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        if (!e.ops_eager[r])
            continue;
        for (int k = 0; k < 3; k++) {
            if (top[k] < 0 || e.ops_eager[r] > e.ops_eager[top[k]]) {
                for (int m = 2; m > k; m--)
                    top[m] = top[m - 1];
                top[k] = r;
                break;
            }
        }
    }
    if (top[0] >= 0) {
        out_str(&o, "reprise: ran eagerly:");
        for (int k = 0; k < 3 && top[k] >= 0; k++) {
            snprintf(line, sizeof line, "%s %llu %s", k ? "," : "",
                     (unsigned long long)e.ops_eager[top[k]], rp__eager_reason_names[top[k]]);
            out_str(&o, line);
        }
        out_str(&o, " (reprise help reasons says what each means)\n");
    }
    size_t n = rp__engine_seq_snapshot(seqs, sizeof seqs / sizeof seqs[0]);
    for (int k = 0; k < 3 && n; k++) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (seqs[i].replays > seqs[best].replays)
                best = i;
        if (!seqs[best].replays)
            break;
        char name[64];
        if (seqs[best].first_kernel[0])
            rp__name_short(seqs[best].first_kernel, name, sizeof name, 48);
        else
            snprintf(name, sizeof name, "a copy or memset");
        snprintf(line, sizeof line,
                 "reprise: sequence %u: %zu ops from %s, %llu of %llu occurrences replayed%s%s\n",
                 seqs[best].id, seqs[best].ops, name, (unsigned long long)seqs[best].replays,
                 (unsigned long long)seqs[best].occurrences,
                 seqs[best].volatile_fields[0] ? ", updating " : "",
                 seqs[best].volatile_fields);
        out_str(&o, line);
        seqs[best] = seqs[--n];
    }
    /* Each bound hit, by the option that sets it. */
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (!e.bound_hits_by[b])
            continue;
        char what[256];
        rp__bound_describe(b, bound_limit(b), what, sizeof what);
        snprintf(line, sizeof line, "reprise: bound hit %llu time%s: %s\n",
                 (unsigned long long)e.bound_hits_by[b], e.bound_hits_by[b] == 1 ? "" : "s",
                 what);
        out_str(&o, line);
    }
    /* At most three suggestions, drawn from the same counters. */
    struct rp__advice_in in;
    memset(&in, 0, sizeof in);
    in.ops = (double)seen;
    in.replayed = (double)e.ops_replayed;
    in.eager_bound = (double)e.ops_eager[RP_EAGER_BOUND];
    in.eager_program = (double)e.ops_eager[RP_EAGER_PROGRAM_CAPTURE];
    in.eager_no_layout = (double)e.ops_eager[RP_EAGER_NO_LAYOUT];
    in.eager_warming = (double)e.ops_eager[RP_EAGER_WARMING_UP];
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        in.hits[b] = (double)e.bound_hits_by[b];
        in.limits[b] = (double)bound_limit(b);
    }
    in.program_captures = (double)rp__engine_program_captures();
    in.too_many_updates = (double)e.too_many_updates;
    in.replays = (double)e.replays;
    static char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = rp__advice(&in, advice);
    for (int k = 0; k < na; k++) {
        out_str(&o, "reprise: advice: ");
        out_str(&o, advice[k]);
        out_str(&o, "\n");
    }
    out_flush(&o);
}

bool rp__stats_path(const char *pattern, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char tmp[72];
        const char *piece = tmp;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'h') {
            if (gethostname(tmp, sizeof tmp) != 0)
                snprintf(tmp, sizeof tmp, "unknown-host");
            tmp[sizeof tmp - 1] = '\0';
            p++;
        } else if (p[0] == '%' && p[1] == 'r') {
            /* The rank as MPI and the usual launchers give it; 0 alone. */
            const char *v = rank_variable();
            snprintf(tmp, sizeof tmp, "%s", v[0] ? getenv(v) : "0");
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            tmp[0] = '%', tmp[1] = 0;
            p++;
        } else {
            tmp[0] = *p, tmp[1] = 0;
        }
        size_t len = strlen(piece);
        if (n + len >= size)
            return false;
        memcpy(out + n, piece, len);
        n += len;
    }
    if (n >= size)
        return false;
    out[n] = '\0';
    return true;
}

/* Write the report to `path` through a temporary file beside it, renamed
 * over it: a reader (or a process killed meanwhile) finds the previous
 * complete report or the new one, never a part.  Returns false, with errno
 * set and no temporary file left, when it could not be written. */
static bool write_atomically(const char *path)
{
    char tmp[PATH_MAX + 32];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return false;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    bool ok = rp__stats_write_fd(fd);
    int saved = errno;
    if (close(fd) != 0 && ok)
        ok = false, saved = errno;
    if (ok && rename(tmp, path) != 0)
        ok = false, saved = errno;
    if (!ok) {
        unlink(tmp);
        errno = saved;
    }
    return ok;
}

/* Writes are serialised (the report's buffers are static, and a periodic
 * write may run on the shim's thread while the program exits); none
 * follows the final one. */
static pthread_mutex_t write_mu = PTHREAD_MUTEX_INITIALIZER;
static bool final_written, periodic_warned;

bool rp__stats_write(bool final)
{
    const char *pattern = rp__option(RP_OPTION_STATS).path;
    if (pattern == NULL || pattern[0] == '\0')
        return true;
    pthread_mutex_lock(&write_mu);
    bool ok = true;
    if (!final_written) {
        final_written = final;
        char path[PATH_MAX];
        if (!rp__stats_path(pattern, path, sizeof path)) {
            if (final || !periodic_warned)
                rp__warn("REPRISE_STATS=%s: the expanded path is too long; no report written",
                         pattern);
            periodic_warned = true;
            ok = false;
        } else if (!write_atomically(path)) {
            if (final)
                rp__warn("cannot write the report to %s: %m", path);
            else if (!periodic_warned)
                rp__warn("cannot write the report to %s: %m (tried again at exit)", path);
            periodic_warned = periodic_warned || !final;
            ok = false;
        }
    }
    pthread_mutex_unlock(&write_mu);
    return ok;
}
