/* Stats: the counters, and the JSON report written at exit, at a signal and
 * every few seconds while the program runs (docs/stats.md), always whole.
 *
 * Counters are relaxed atomics bumped by enabled wrappers only: disabled,
 * the shim counts nothing, so the report then says "enabled": false with no
 * calls.  The report is written with write(2) through a fixed buffer
 * (out.h) and reads nothing but our own counters and /proc/self, because
 * at exit the driver and stdio may already be shut down. The summary
 * printed at exit is summary.c's. */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "facts.h"
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
uint64_t rp__report_limit(int b)
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

uint64_t rp__report_ops(const struct rp__engine_stats *e)
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
    uint64_t seen = rp__report_ops(e), eager = 0;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++)
        eager += e->ops_eager[r];
    rp__out_str(o, indent);
    rp__out_str(o, "\"ops_seen\": {");
    const char *s2 = "";
    for (int k = 0; k < RP_OP_KINDS; k++) {
        rp__out_key_u64(o, s2, kinds[k], e->ops_seen[k]);
        s2 = ", ";
    }
    rp__out_str(o, "}");
    rp__out_key_u64(o, sep, "ops_total", seen);
    rp__out_key_u64(o, sep, "ops_replayed", e->ops_replayed);
    rp__out_ratio(o, sep, "replayed_share", e->ops_replayed, seen);
    rp__out_key_u64(o, sep, "ops_eager_total", eager);
    rp__out_str(o, sep);
    rp__out_str(o, "\"ops_eager\": {");
    s2 = "";
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        rp__out_key_u64(o, s2, rp__reasons[r].key, e->ops_eager[r]);
        s2 = ", ";
    }
    rp__out_str(o, "}");
    rp__out_key_u64(o, sep, "segments", e->segments);
    rp__out_key_u64(o, sep, "new_shapes", e->new_shapes);
    rp__out_key_u64(o, sep, "new_shape_ops", e->new_shape_ops);
    rp__out_key_u64(o, sep, "graphs_captured", e->graphs_captured);
    rp__out_key_u64(o, sep, "capture_failures", e->capture_failures);
    rp__out_key_u64(o, sep, "graphs_dropped", e->graphs_dropped);
    rp__out_key_u64(o, sep, "replays", e->replays);
    rp__out_key_u64(o, sep, "replay_failures", e->replay_failures);
    rp__out_key_u64(o, sep, "divergences", e->divergences);
    rp__out_key_u64(o, sep, "bound_hits", e->bound_hits);
    rp__out_str(o, sep);
    rp__out_str(o, "\"bound_hits_by\": {");
    for (int b = 0; b < RP_BOUND_COUNT; b++)
        rp__out_key_u64(o, b ? ", " : "", rp__bounds[b].key, e->bound_hits_by[b]);
    rp__out_str(o, "}");
    rp__out_key_u64(o, sep, "detector_evictions", evictions);
    rp__out_key_u64(o, sep, "capture_us", e->capture_ns / 1000);
    rp__out_key_u64(o, sep, "instantiate_us", e->instantiate_ns / 1000);
    rp__out_key_u64(o, sep, "staging_bytes", e->staging_bytes);
    rp__out_key_u64(o, sep, "volatile_captures", e->volatile_captures);
    rp__out_key_u64(o, sep, "updates", e->updates);
    rp__out_ratio(o, sep, "updates_per_replay", e->updates, e->replays);
    rp__out_key_u64(o, sep, "update_failures", e->update_failures);
    rp__out_key_u64(o, sep, "too_many_updates", e->too_many_updates);
    rp__out_key_u64(o, sep, "widenings", e->widenings);
    rp__out_key_u64(o, sep, "widened_in_match", e->widened_in_match);
    rp__out_key_u64(o, sep, "event_node_updates", e->event_node_updates);
    rp__out_key_u64(o, sep, "func_forms", e->func_forms);
    rp__out_key_u64(o, sep, "func_updates", e->func_updates);
    rp__out_key_u64(o, sep, "func_updates_refused", e->func_updates_refused);
    rp__out_key_u64(o, sep, "instantiates", e->instantiates);
    rp__out_key_u64(o, sep, "exec_updates", e->exec_updates);
    rp__out_key_u64(o, sep, "exec_update_refused", e->exec_update_refused);
    rp__out_key_u64(o, sep, "evictions", e->evictions);
    rp__out_key_u64(o, sep, "backoffs", e->backoffs);
    rp__out_key_u64(o, sep, "idle_flushes", e->idle_flushes);
    rp__out_key_u64(o, sep, "idle_parts", e->idle_parts);
    rp__out_key_u64(o, sep, "part_launches", e->part_launches);
    rp__out_key_u64(o, sep, "node_toggles", e->node_toggles);
    rp__out_key_u64(o, sep, "periods_found", e->periods_found);
    rp__out_key_u64(o, sep, "period_cuts", e->period_cuts);
    rp__out_key_u64(o, sep, "landmarks_found", e->landmarks_found);
    rp__out_key_u64(o, sep, "rests", e->rests);
    rp__out_key_u64(o, sep, "beyond_max_updates", e->beyond_max_updates);
    rp__out_key_u64(o, sep, "variant_execs", e->variant_execs);
    rp__out_key_u64(o, sep, "variant_exec_hits", e->variant_exec_hits);
    rp__out_key_u64(o, sep, "version_lookups", e->version_lookups);
    rp__out_key_u64(o, sep, "variants_passed_over", e->variants_passed_over);
    rp__out_key_u64(o, sep, "fork_joins", e->fork_joins);
    rp__out_key_u64(o, sep, "stream_joins", e->stream_joins);
    rp__out_key_u64(o, sep, "fork_joins_busy", e->fork_joins_busy);
    rp__out_key_u64(o, sep, "staging_busy", e->staging_busy);
    rp__out_key_u64(o, sep, "event_settles", e->event_settles);
    rp__out_key_u64(o, sep, "cross_context_waits", e->cross_context_waits);
    /* Launches kept eager for a launch attribute a graph cannot carry. */
    static const char *const attr_names[] = {
        "other", "access_policy_window", "cooperative", "synchronization_policy",
        "cluster_dimension", "cluster_scheduling_policy_preference",
        "programmatic_stream_serialization", "programmatic_event", "priority",
        "mem_sync_domain_map", "mem_sync_domain", "preferred_cluster_dimension",
        "launch_completion_event", "device_updatable_kernel_node",
        "preferred_shared_memory_carveout", "id_15", "nvlink_util_centric_scheduling"};
    rp__out_str(o, sep);
    rp__out_str(o, "\"attr_boundaries\": {");
    for (size_t a = 0; a < sizeof attr_names / sizeof attr_names[0]; a++)
        rp__out_key_u64(o, a ? ", " : "", attr_names[a], e->attr_boundaries[a]);
    rp__out_str(o, "}");
    rp__out_key_u64(o, sep, "programmatic_serialization_dropped", e->programmatic_serialization_dropped);
    rp__out_str(o, sep);
    rp__out_str(o, "\"costs_ns\": {");
    static const char *const cost_names[RP_COST_KINDS] = {"eager_launch", "node_update",
                                                          "graph_launch"};
    for (int k = 0; k < RP_COST_KINDS; k++)
        rp__out_key_u64(o, k ? ", " : "", cost_names[k],
                    e->cost_samples[k] ? e->cost_ns[k] / e->cost_samples[k] : 0);
    rp__out_str(o, "}");
    rp__out_str(o, sep);
    rp__out_str(o, "\"cost_samples\": {");
    for (int k = 0; k < RP_COST_KINDS; k++)
        rp__out_key_u64(o, k ? ", " : "", cost_names[k], e->cost_samples[k]);
    rp__out_str(o, "}");
    rp__out_key_u64(o, sep, "staging_live_bytes", e->staging_live_bytes);
    rp__out_str(o, sep);
    rp__out_key_u64(o, "\"graph_nodes\": {", "kernel", e->nodes_kernel);
    rp__out_key_u64(o, ", ", "memcpy", e->nodes_memcpy);
    rp__out_key_u64(o, ", ", "memset", e->nodes_memset);
    rp__out_key_u64(o, ", ", "other", e->nodes_other);
    rp__out_str(o, "}");
}

void rp__report_add(struct rp__engine_stats *sum, const struct rp__engine_stats *e)
{
    uint64_t *d = (uint64_t *)sum;
    const uint64_t *x = (const uint64_t *)e;
    for (size_t i = 0; i < sizeof *e / sizeof(uint64_t); i++)
        d[i] += x[i];
}

/* Bound hits that no context counted belong to the process's totals. */
void rp__report_add_contextless(struct rp__engine_stats *sum)
{
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        uint64_t n = rp__bound_hits_without_context((enum rp__bound)b);
        sum->bound_hits += n;
        sum->bound_hits_by[b] += n;
    }
}

const struct rp__seq_info *rp__report_seqs(size_t *n)
{
    static struct rp__seq_info seqs[64]; /* about 6 KiB each: one buffer for both reports */
    *n = rp__engine_seq_snapshot(seqs, sizeof seqs / sizeof seqs[0]);
    return seqs;
}

/* A difference's values: a number for sizes, counts and dimensions; a
 * string for names (a kernel's function, an op's kind), and hex strings
 * for handles, addresses and values a double cannot hold exactly. */
static void write_value(struct out *o, const struct rp__diff *d, int got)
{
    char tmp[32];
    unsigned long long v = got ? d->got : d->had;
    switch (d->field) {
    case RP_FIELD_FUNCTION:
        rp__out_json_str(o, got ? d->got_kernel : d->kernel);
        return;
    case RP_FIELD_KIND:
        rp__out_json_str(o, got ? d->got_kind : d->kind);
        return;
    case RP_FIELD_LENGTH: case RP_FIELD_GRID: case RP_FIELD_BLOCK: case RP_FIELD_SHMEM:
    case RP_FIELD_BYTES: case RP_FIELD_WIDTH: case RP_FIELD_ELEM: case RP_FIELD_ATTRS:
        snprintf(tmp, sizeof tmp, "%llu", v);
        rp__out_str(o, tmp);
        return;
    default:
        snprintf(tmp, sizeof tmp, "0x%llx", v);
        rp__out_json_str(o, tmp);
        return;
    }
}

/* One difference as a JSON object (docs/stats.md, "Differences"). */
static void write_diff(struct out *o, const struct rp__diff *d)
{
    rp__out_key_u64(o, "{", "op", d->op);
    rp__out_key_str(o, ", ", "why", rp__div_why_keys[d->why]);
    rp__out_str(o, d->ended ? ", \"ended\": true" : ", \"ended\": false");
    rp__out_key_str(o, ", ", "kind", d->kind);
    rp__out_key_str(o, ", ", "kernel", d->kernel);
    rp__out_key_str(o, ", ", "field", rp__field_key(d->field, d->index));
    rp__out_key_u64(o, ", ", "index", d->index);
    rp__out_key_u64(o, ", ", "at", d->at);
    rp__out_str(o, d->structure ? ", \"structure\": true" : ", \"structure\": false");
    if (d->field != RP_FIELD_NONE) {
        rp__out_str(o, ", \"had\": ");
        write_value(o, d, 0);
        rp__out_str(o, ", \"got\": ");
        write_value(o, d, 1);
    }
    rp__out_str(o, "}");
}

/* One line of `sequences`. */
static void write_seq(struct out *o, const struct rp__seq_info *q)
{
    rp__out_key_u64(o, "{", "id", q->id);
    rp__out_key_u64(o, ", ", "ops", q->ops);
    rp__out_key_str(o, ", ", "first_kernel", q->first_kernel);
    rp__out_key_str(o, ", ", "first_kernels", q->first_kernels);
    rp__out_key_u64(o, ", ", "occurrences", q->occurrences);
    rp__out_key_u64(o, ", ", "captured_at", q->captured_at);
    rp__out_key_u64(o, ", ", "replays", q->replays);
    rp__out_key_u64(o, ", ", "ops_replayed", q->replays * q->ops);
    rp__out_key_u64(o, ", ", "divergences", q->divergences);
    rp__out_key_u64(o, ", ", "flushes", q->flushes);
    rp__out_key_u64(o, ", ", "flushed_ops", q->flushed_ops);
    rp__out_key_u64(o, ", ", "updates", q->updates);
    rp__out_key_u64(o, ", ", "variants", q->variants);
    rp__out_str(o, q->by_period ? ", \"found_by\": \"period\"" : ", \"found_by\": \"boundary\"");
    rp__out_key_str(o, ", ", "volatile", q->volatile_fields);
    rp__out_str(o, ", \"volatile_fields\": [");
    for (unsigned int i = 0; i < q->nvols; i++) {
        const struct rp__info_vol *v = &q->vols[i];
        rp__out_key_u64(o, i ? ", {" : "{", "op", v->op);
        rp__out_key_str(o, ", ", "kind", rp__op_kind_name((rp_op_kind)v->kind));
        rp__out_key_str(o, ", ", "kernel", v->name >= 0 ? q->vol_names[v->name] : "");
        rp__out_key_str(o, ", ", "field", rp__field_key(v->field, v->index));
        if (v->field == RP_FIELD_PARAM)
            rp__out_key_u64(o, ", ", "index", v->index);
        rp__out_str(o, "}");
    }
    rp__out_str(o, q->vols_cut ? "], \"volatile_fields_cut\": true" : "], \"volatile_fields_cut\": false");
    if (q->div_why) {
        rp__out_key_u64(o, ", \"last_divergence\": {", "op", q->div_op);
        rp__out_key_str(o, ", ", "kernel", q->div_kernel);
        rp__out_key_str(o, ", ", "reason", q->div_why);
        rp__out_str(o, "}");
    }
    rp__out_str(o, ", \"divergences_last\": [");
    for (unsigned int i = 0; i < q->ndivs; i++) {
        rp__out_str(o, i ? ", " : "");
        write_diff(o, &q->divs[i]);
    }
    rp__out_str(o, "]}");
}

/* The capture engine's sections (docs/stats.md): top-level totals, then
 * "engine" with the sums, one entry per context and one per sequence. */
static void write_engine(struct out *o)
{
    static struct rp__engine_stats per[16];
    static uint64_t per_ev[16];
    struct rp__engine_stats sum;
    memset(&sum, 0, sizeof sum);
    uint64_t sum_ev = 0;
    size_t nctx = 0;
    while (nctx < 16 && rp__engine_stats_snapshot(nctx, &per[nctx], &per_ev[nctx])) {
        rp__report_add(&sum, &per[nctx]);
        sum_ev += per_ev[nctx];
        nctx++;
    }
    rp__report_add_contextless(&sum);
    rp__out_key_u64(o, ",\n  ", "ops", rp__report_ops(&sum));
    rp__out_key_u64(o, ",\n  ", "replayed_ops", sum.ops_replayed);
    rp__out_ratio(o, ",\n  ", "replayed_share", sum.ops_replayed, rp__report_ops(&sum));
    rp__out_str(o, ",\n  \"engine\": {\n");
    write_counters(o, &sum, sum_ev, "    ");
    rp__out_key_u64(o, ",\n    ", "program_captures", rp__engine_program_captures());
    rp__out_str(o, ",\n    \"limits\": {");
    for (int b = 0, n = 0; b < RP_BOUND_COUNT; b++)
        if (rp__bounds[b].option)
            rp__out_key_u64(o, n++ ? ", " : "", rp__bounds[b].key, rp__report_limit(b));
    rp__out_str(o, "}");
    rp__out_key_u64(o, ",\n    \"settings\": {", "warmup", rp__eng.cfg.warmup);
    rp__out_key_u64(o, ", ", "min_ops", rp__eng.cfg.min_ops);
    rp__out_str(o, "}");
    rp__out_str(o, ",\n    \"shape_changes\": [");
    static struct rp__diff shapes[RP_CTX_SHAPES];
    for (size_t c = 0, k = 0; c < nctx; c++) {
        size_t ns = rp__engine_shape_snapshot(c, shapes, RP_CTX_SHAPES);
        for (size_t i = 0; i < ns; i++, k++) {
            rp__out_str(o, k ? ",\n      " : "\n      ");
            write_diff(o, &shapes[i]);
        }
    }
    rp__out_str(o, "]");
    rp__out_str(o, ",\n    \"contexts\": [");
    for (size_t c = 0; c < nctx; c++) {
        rp__out_str(o, c ? ", {\n" : "{\n");
        rp__out_key_u64(o, "      ", "index", c);
        rp__out_str(o, ",\n");
        write_counters(o, &per[c], per_ev[c], "      ");
        rp__out_str(o, "\n    }");
    }
    rp__out_str(o, "],\n    \"sequences\": [");
    size_t n;
    const struct rp__seq_info *seqs = rp__report_seqs(&n);
    for (size_t i = 0; i < n; i++) {
        rp__out_str(o, i ? ",\n      " : "\n      ");
        write_seq(o, &seqs[i]);
    }
    rp__out_str(o, n ? "\n    ]\n  }" : "]\n  }");
}

/* Up to `n` bytes of a /proc file; returns how many were read (0 on
 * failure). */
static size_t read_proc(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t got = 0;
    ssize_t r;
    while (got < n && (r = read(fd, buf + got, n - got)) > 0)
        got += (size_t)r;
    close(fd);
    return got;
}

double rp__report_wall_s(void)
{
    /* The process's start: field 22 of /proc/self/stat, in clock ticks
     * after boot (after the command's name, which may hold anything, in
     * parentheses). */
    char b[1024];
    size_t n = read_proc("/proc/self/stat", b, sizeof b - 1);
    b[n] = '\0';
    const char *p = strrchr(b, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    struct timespec now;
    long tck = sysconf(_SC_CLK_TCK);
    if (!p || tck <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0)
        return 0;
    double start = (double)strtoull(p + 1, NULL, 10) / (double)tck;
    double t = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - start;
    return t > 0 ? t : 0;
}

bool rp__stats_write_fd(int fd)
{
    static struct out o; /* 4 KiB: static, not on a possibly small stack */
    rp__out_begin(&o, fd);
    int ids[RP_E_COUNT];
    sorted_ids(ids);

    rp__out_str(&o, "{\n  \"version\": ");
    rp__out_u64(&o, REPRISE_STATS_VERSION);
    rp__out_str(&o, ",\n  \"reprise_version\": ");
    rp__out_json_str(&o, REPRISE_VERSION);
    rp__out_str(&o, ",\n  \"pid\": ");
    rp__out_u64(&o, (uint64_t)getpid());
    {
        char host[256], rank[32];
        if (gethostname(host, sizeof host) != 0)
            host[0] = '\0';
        host[sizeof host - 1] = '\0';
        rp__stats_path("%r", rank, sizeof rank);
        rp__out_str(&o, ",\n  \"host\": ");
        rp__out_json_str(&o, host);
        rp__out_str(&o, ",\n  \"rank\": ");
        rp__out_json_str(&o, rank);
        rp__out_str(&o, ",\n  \"rank_from\": ");
        rp__out_json_str(&o, rank_variable());
    }
    {
        /* The command line, as the kernel keeps it (at most 4 KiB of it). */
        static char cmd[4096];
        size_t n = read_proc("/proc/self/cmdline", cmd, sizeof cmd - 1);
        cmd[n] = '\0';
        rp__out_str(&o, ",\n  \"argv\": [");
        for (size_t i = 0; i < n; i += strlen(cmd + i) + 1) {
            rp__out_str(&o, i ? ", " : "");
            rp__out_json_str(&o, cmd + i);
        }
        char w[40];
        snprintf(w, sizeof w, "%.3f", rp__report_wall_s());
        rp__out_str(&o, "],\n  \"wall_s\": ");
        rp__out_str(&o, w);
    }
    rp__out_str(&o, ",\n  \"enabled\": ");
    /* Enabled by REPRISE (the wrappers may be on for a trace alone; a
     * process that made no driver call was never initialised, and says
     * what REPRISE asked); the engine ran only where the driver was loaded. */
    bool ready = atomic_load_explicit(&rp__state, memory_order_acquire) == RP_INIT_READY;
    bool enabled = ready ? rp__enabled && !rp__trace_alone : rp__option(RP_OPTION_ENABLE).b;
    bool engine = enabled && ready && rp__driver_loaded();
    rp__out_str(&o, enabled ? "true" : "false");
    rp__out_str(&o, ",\n  \"driver\": {\"path\": ");
    rp__out_json_str(&o, rp__option(RP_OPTION_DRIVER).path ? rp__option(RP_OPTION_DRIVER).path : "");
    rp__out_str(&o, ", \"loaded\": ");
    rp__out_str(&o, rp__driver_loaded() ? "true" : "false");
    if (rp__driver_load_error()[0]) {
        rp__out_str(&o, ", \"error\": ");
        rp__out_json_str(&o, rp__driver_load_error());
    }
    rp__out_str(&o, "},\n  \"calls\": {");
    const char *sep = "\n    ";
    for (int k = 0; k < RP_E_COUNT; k++) {
        uint64_t n = atomic_load_explicit(&rp__calls[ids[k]], memory_order_relaxed);
        if (n == 0)
            continue;
        rp__out_str(&o, sep);
        rp__out_json_str(&o, rp__entry_names[ids[k]]);
        rp__out_str(&o, ": ");
        rp__out_u64(&o, n);
        sep = ",\n    ";
    }
    rp__out_str(&o, sep[0] == ',' ? "\n  },\n" : "},\n");
    rp__out_str(&o, "  \"proc_address\": {\n    \"lookups\": ");
    rp__out_u64(&o, atomic_load_explicit(&rp__lookups, memory_order_relaxed));
    rp__out_str(&o, ",\n    \"wrapped_lookups\": ");
    rp__out_u64(&o, atomic_load_explicit(&rp__lookups_wrapped, memory_order_relaxed));
    rp__out_str(&o, ",\n    \"wrapped\": [");
    sep = "";
    for (int k = 0; k < RP_E_COUNT; k++) {
        if (!atomic_load_explicit(&rp__handed_out[ids[k]], memory_order_relaxed))
            continue;
        rp__out_str(&o, sep);
        rp__out_json_str(&o, rp__entry_names[ids[k]]);
        sep = ", ";
    }
    rp__out_str(&o, "]\n  }");
    if (engine)
        write_engine(&o);
    rp__out_str(&o, "\n}\n");
    rp__out_flush(&o);
    return o.ok;
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
 * set and no temporary file left, when it could not be written. Not
 * `final` (the program runs on), the report takes no lock that is busy
 * (rp__report_try_only): when one was, nothing is written this time and
 * *skipped says so. */
static bool write_atomically(const char *path, bool final, bool *skipped)
{
    *skipped = false;
    char tmp[PATH_MAX + 32];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return false;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    rp__report_try_only(!final);
    bool ok = rp__stats_write_fd(fd);
    int saved = errno;
    *skipped = rp__report_missed();
    rp__report_try_only(0);
    if (close(fd) != 0 && ok)
        ok = false, saved = errno;
    if (*skipped) {
        unlink(tmp);
        return ok;
    }
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
    bool ok = true, skipped = false;
    if (!final_written) {
        final_written = final;
        char path[PATH_MAX];
        if (!rp__stats_path(pattern, path, sizeof path)) {
            if (final || !periodic_warned)
                rp__warn("REPRISE_STATS=%s: the expanded path is too long; no report written",
                         pattern);
            periodic_warned = true;
            ok = false;
        } else if (!write_atomically(path, final, &skipped)) {
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
