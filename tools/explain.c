/* explain.c - `reprise explain STATS.json...`: where a run's eager ops
 * went, in the program's terms: by reason, each with its cause in a
 * sentence (shim/model/explain.h); the runs whose structure was new and
 * what changed in them; then sequence by sequence, where its occurrences
 * went (replayed, eager before its graph, held and issued one by one after
 * diverging) and where the runs that diverged from it went another way:
 * the op, its kernel demangled, the field and its two values. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "statsfile.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: reprise explain [-h | --help] STATS.json...\n"
            "Says where the eager ops of a run went, from its stats file (reprise --stats):\n"
            "  - by reason (warming_up, diverged...), each with its cause in a sentence and\n"
            "    its share of all ops;\n"
            "  - the runs of ops whose structure was new, and what changed in them (the op,\n"
            "    the field and its two values);\n"
            "  - per sequence (a run of ops captured as a graph), most eager ops first: its\n"
            "    occurrences replayed, run eagerly before its graph, or held and issued one\n"
            "    by one after diverging; its last divergences (\"op 17 softmax<..., 5> ->\n"
            "    <..., 6>\", \"op 3 gemv: grid.x 3 -> 4\"); what is updated before a replay;\n"
            "  - advice, where the cause says something would help.\n"
            "Several files are explained one after the other. Kernel names are demangled.\n"
            "Exit status: 0; 1 if a file cannot be read or is not a stats file; 2 on a usage\n"
            "error.\n");
}

/* The sequences' order: most eager ops first (before their graph, with it,
 * or held and flushed after diverging). */
static double eager_ops(const struct rp__seq_fact *s)
{
    double occ_eager = s->occurrences - s->replays;
    return (occ_eager > 0 ? occ_eager : 0) * s->ops + (s->flushed_ops > 0 ? s->flushed_ops : 0);
}

static int by_eager(const void *a, const void *b)
{
    double x = eager_ops(*(const struct rp__seq_fact *const *)a);
    double y = eager_ops(*(const struct rp__seq_fact *const *)b);
    return x < y ? 1 : x > y ? -1 : 0;
}

static int explain_one(const rp_stats_file *s)
{
    const struct rp__run_fact *f = &s->fact;
    char who[700], line[RP_LINE_LEN];
    rp_stats_label(s, who, sizeof who, 100);
    if (!s->engine) {
        rp_stats_no_engine_text(s, line, sizeof line);
        printf("%s: %s\n", who, line);
        return 0;
    }
    rp_stats_totals_text(f, line, sizeof line);
    printf("%s\n  %s\n", who, line);
    if (rp__explain_saved(f, line, sizeof line))
        printf("  saved: %s\n", line);
    struct rp__line why[RP_EAGER_REASON_COUNT];
    int nw = rp__explain_eager(f, why, RP_EAGER_REASON_COUNT);
    printf("\nWhere the eager ops went (%.0f of %.0f ops):\n", f->ops - f->replayed, f->ops);
    if (!nw)
        printf("  nowhere: every op ran as part of a graph\n");
    for (int k = 0; k < nw; k++)
        printf("  [%s] %s\n", rp__reasons[why[k].reason].key, why[k].text);
    if (f->nshapes) {
        printf("\nRuns whose structure was new (%.0f of %.0f runs of ops), newest first, each "
               "against the run before it on its stream:\n", f->new_shapes, f->segments);
        for (unsigned k = 0; k < f->nshapes; k++) {
            rp__diff_describe(&f->shapes[k], line, sizeof line);
            printf("  %s\n", line);
        }
    }
    if (f->nseqs) {
        const struct rp__seq_fact **order = malloc(f->nseqs * sizeof *order);
        if (!order) {
            fprintf(stderr, "reprise explain: out of memory\n");
            return 1;
        }
        for (size_t k = 0; k < f->nseqs; k++)
            order[k] = &f->seqs[k];
        qsort(order, f->nseqs, sizeof *order, by_eager);
        printf("\nSequences (runs of ops captured as graphs), most eager ops first:\n");
        for (size_t k = 0; k < f->nseqs; k++) {
            struct rp__line l[4];
            int m = rp__explain_seq(order[k], l, 4);
            for (int i = 0; i < m; i++)
                printf("%s%s\n", i ? "      " : "  ", l[i].text);
        }
        free(order);
    } else {
        printf("\nNo sequence was captured.\n");
    }
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = rp__advice(f, advice);
    for (int k = 0; k < na; k++)
        printf("%sadvice: %s\n", k ? "" : "\n", advice[k]);
    return 0;
}

int rp_explain_main(int argc, char **argv)
{
    int nfiles = 0, status = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "reprise explain: unknown option '%s' (see reprise explain --help)\n",
                    argv[i]);
            return 2;
        }
    }
    for (int i = 1; i < argc; i++) {
        rp_stats_file s;
        if (rp_stats_read(&s, argv[i], "reprise explain") != 0) {
            status = 1;
            continue;
        }
        if (nfiles++)
            printf("\n");
        if (explain_one(&s) != 0)
            status = 1;
        rp_stats_free(&s);
    }
    if (!nfiles && !status) {
        fprintf(stderr, "reprise explain: no stats file given (see reprise explain --help)\n");
        return 2;
    }
    return status;
}
