/* summary.c - the summary printed at exit (REPRISE_SUMMARY): what ran as
 * graphs, what that saved, why the rest ran eagerly, the sequences that
 * replayed most, the bounds hit and advice, in sentences (explain.h)
 * computed from the same facts `reprise report` reads from a stats file.
 * Written with write(2) (out.h): stdio may be shut down at exit. */
#include "core.h"

#include <stdio.h>
#include <string.h>

#include "facts.h"

/* The engine's counters summed over every context. */
static struct rp__engine_stats engine_totals(void)
{
    struct rp__engine_stats sum, one;
    uint64_t ev;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; rp__engine_stats_snapshot(i, &one, &ev); i++)
        rp__report_add(&sum, &one);
    rp__report_add_contextless(&sum);
    return sum;
}

/* The facts of the sentences for this process (explain.h); the arrays are
 * static, valid until the next call. */
static void engine_facts(const struct rp__engine_stats *e, struct rp__run_fact *f)
{
    static struct rp__diff shapes[RP_CTX_SHAPES * 4];
    static struct rp__seq_fact seqs[64];
    static struct rp__vol_fact vols[64][RP_INFO_VOLS];
    memset(f, 0, sizeof *f);
    f->ops = (double)rp__report_ops(e);
    f->replayed = (double)e->ops_replayed;
    f->replays = (double)e->replays;
    f->part_launches = (double)e->part_launches;
    f->graphs = (double)e->graphs_captured;
    f->updates = (double)e->updates;
    f->segments = (double)e->segments;
    f->divergences = (double)e->divergences;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++)
        f->eager[r] = (double)e->ops_eager[r];
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        f->hits[b] = (double)e->bound_hits_by[b];
        f->limits[b] = (double)rp__report_limit(b);
    }
    f->program_captures = (double)rp__engine_program_captures();
    f->too_many_updates = (double)e->too_many_updates;
    f->capture_failures = (double)e->capture_failures;
    f->backoffs = (double)e->backoffs;
    f->evictions = (double)e->evictions;
    f->graphs_dropped = (double)e->graphs_dropped;
    f->rests = (double)e->rests;
    f->widenings = (double)e->widenings;
    f->new_shapes = (double)e->new_shapes;
    f->new_shape_ops = (double)e->new_shape_ops;
    f->warmup = rp__eng.cfg.warmup;
    f->min_ops = (double)rp__eng.cfg.min_ops;
    if (e->cost_samples[RP_COST_EAGER])
        f->cost_eager_ns = (double)e->cost_ns[RP_COST_EAGER] / (double)e->cost_samples[RP_COST_EAGER];
    if (e->cost_samples[RP_COST_UPDATE])
        f->cost_update_ns = (double)e->cost_ns[RP_COST_UPDATE] / (double)e->cost_samples[RP_COST_UPDATE];
    if (e->cost_samples[RP_COST_LAUNCH])
        f->cost_launch_ns = (double)e->cost_ns[RP_COST_LAUNCH] / (double)e->cost_samples[RP_COST_LAUNCH];
    f->wall_s = rp__report_wall_s();
    f->processes = 1;
    size_t ns = 0;
    for (size_t c = 0; rp__ctx_at(c) && ns < sizeof shapes / sizeof shapes[0]; c++)
        ns += rp__engine_shape_snapshot(c, shapes + ns, sizeof shapes / sizeof shapes[0] - ns);
    f->shapes = shapes;
    f->nshapes = (unsigned int)ns;
    size_t n;
    const struct rp__seq_info *q = rp__report_seqs(&n);
    for (size_t i = 0; i < n; i++) {
        struct rp__seq_fact *s = &seqs[i];
        memset(s, 0, sizeof *s);
        s->id = q[i].id;
        s->ops = (double)q[i].ops;
        s->occurrences = (double)q[i].occurrences;
        s->replays = (double)q[i].replays;
        s->captured_at = (double)q[i].captured_at;
        s->updates = (double)q[i].updates;
        s->divergences = (double)q[i].divergences;
        s->flushes = (double)q[i].flushes;
        s->flushed_ops = (double)q[i].flushed_ops;
        s->by_period = q[i].by_period;
        s->first_kernel = q[i].first_kernel;
        s->divs = q[i].divs;
        s->ndivs = q[i].ndivs;
        for (unsigned int k = 0; k < q[i].nvols; k++) {
            const struct rp__info_vol *v = &q[i].vols[k];
            vols[i][k] = (struct rp__vol_fact){v->op, v->field, v->index,
                                               rp__op_kind_name((rp_op_kind)v->kind),
                                               v->name >= 0 ? q[i].vol_names[v->name] : ""};
        }
        s->vols = vols[i];
        s->nvols = q[i].nvols;
    }
    f->seqs = seqs;
    f->nseqs = n;
}

/* "reprise: " and the line. */
static void say(struct out *o, const char *prefix, const char *text)
{
    rp__out_str(o, "reprise: ");
    rp__out_str(o, prefix);
    rp__out_str(o, text);
    rp__out_str(o, "\n");
}

void rp__summary_write(int fd)
{
    static struct out o;
    static struct rp__run_fact f;
    static struct rp__line lines[RP_EAGER_REASON_COUNT];
    char line[512];
    rp__out_begin(&o, fd);
    if (!rp__driver_loaded()) {
        /* Not "0 capturable ops": say why nothing could be. */
        snprintf(line, sizeof line,
                 "nothing captured: the CUDA driver %s could not be loaded (%s), so every "
                 "driver call failed; --driver PATH or LD_LIBRARY_PATH says where one is",
                 rp__option(RP_OPTION_DRIVER).path, rp__driver_load_error());
        say(&o, "", line);
        rp__out_flush(&o);
        return;
    }
    struct rp__engine_stats e = engine_totals();
    engine_facts(&e, &f);
    char ops[32], rep[32], launches[32], up[32];
    rp__count_text(f.ops, ops, sizeof ops);
    rp__count_text(f.replayed, rep, sizeof rep);
    rp__count_text(f.replays, launches, sizeof launches);
    rp__count_text(f.updates, up, sizeof up);
    snprintf(line, sizeof line,
             "%s capturable op%s, %s replayed (%.1f%%) in %s graph launch%s; "
             "%llu graph%s captured, %s update%s applied", ops, f.ops == 1 ? "" : "s", rep,
             f.ops ? 100.0 * f.replayed / f.ops : 0.0, launches, f.replays == 1 ? "" : "es",
             (unsigned long long)e.graphs_captured, e.graphs_captured == 1 ? "" : "s", up,
             f.updates == 1 ? "" : "s");
    say(&o, "", line);
    static char text[RP_LINE_LEN];
    if (rp__explain_saved(&f, text, sizeof text))
        say(&o, "saved: ", text);
    int nl = rp__explain_eager(&f, lines, RP_EAGER_REASON_COUNT);
    for (int k = 0; k < nl; k++)
        say(&o, "", lines[k].text);
    /* The three sequences that replayed most: where their occurrences went
     * and what is updated. */
    int shown[64] = {0};
    for (int k = 0; k < 3; k++) {
        size_t best = f.nseqs;
        for (size_t i = 0; i < f.nseqs; i++)
            if (!shown[i] && f.seqs[i].replays > 0 &&
                (best == f.nseqs || f.seqs[i].replays > f.seqs[best].replays))
                best = i;
        if (best == f.nseqs)
            break;
        shown[best] = 1;
        /* Its first line, and why runs that diverged from it ran eagerly
         * (the report and `reprise explain` say the rest). */
        struct rp__line sl[4];
        int m = rp__explain_seq(&f.seqs[best], sl, 4);
        for (int i = 0; i < m; i++)
            if (!i || (sl[i].reason == RP_EAGER_DIVERGED && sl[i].weight > 0))
                say(&o, i ? "  " : "", sl[i].text);
    }
    /* Each bound hit, by the option that sets it. */
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (!e.bound_hits_by[b])
            continue;
        char what[256];
        rp__bound_describe(b, rp__report_limit(b), what, sizeof what);
        snprintf(line, sizeof line, "bound hit %llu time%s: %s",
                 (unsigned long long)e.bound_hits_by[b], e.bound_hits_by[b] == 1 ? "" : "s",
                 what);
        say(&o, "", line);
    }
    static char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = rp__advice(&f, advice);
    for (int k = 0; k < na; k++)
        say(&o, "advice: ", advice[k]);
    rp__out_flush(&o);
}
