/* report.c - `reprise report FILE... [-o|--html OUT.html]`: reads one or more
 * stats files (docs/stats.md; one per process or rank, statsfile.c) and
 * prints what a person reads in a minute: a line per process when there
 * are several, what replaying saved, why the rest ran eagerly and what to
 * do, in sentences computed from the cause (shim/model/explain.h), and a
 * table of the sequences; with --html, the same as a page (page.c). */
#include "report.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explain.h"
#include "names.h"
#include "page.h"
#include "statsfile.h"

static void print_text(const rp_stats_file *files, int n, const struct rp__run_fact *all)
{
    char line[RP_LINE_LEN];
    int engines = 0;
    for (int i = 0; i < n; i++) {
        if (!files[i].engine) {
            rp_stats_no_engine_text(&files[i], line, sizeof line);
            printf("%s: %s\n", files[i].path, line);
            continue;
        }
        engines++;
        if (n > 1) {
            char who[700];
            rp_stats_label(&files[i], who, sizeof who, 60);
            rp_stats_totals_text(&files[i].fact, line, sizeof line);
            printf("%s: %s\n", who, line);
        }
    }
    if (!engines)
        return; /* nothing ran under the engine: no totals, no table */
    rp_stats_totals_text(all, line, sizeof line);
    printf("%s%s\n", n > 1 ? "all: " : "", line);
    if (rp__explain_saved(all, line, sizeof line))
        printf("saved: %s\n", line);
    struct rp__line why[RP_EAGER_REASON_COUNT];
    int nw = rp__explain_eager(all, why, RP_EAGER_REASON_COUNT);
    for (int k = 0; k < nw; k++)
        printf("%s\n", why[k].text);
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (all->hits[b] <= 0)
            continue;
        char what[256];
        rp__bound_describe(b, (unsigned long long)all->limits[b], what, sizeof what);
        printf("bound hit %.0f time%s: %s\n", all->hits[b], all->hits[b] == 1 ? "" : "s", what);
    }
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = rp__advice(all, advice);
    for (int k = 0; k < na; k++)
        printf("advice: %s\n", advice[k]);
    /* Merged, each process's own advice too (a process at 0% among others
     * at 99% has advice the sum hides), but what was said for all. */
    for (int i = 0; n > 1 && i < n; i++) {
        if (!files[i].engine)
            continue;
        char own[RP_ADVICE_MAX][RP_ADVICE_LEN];
        int np = rp_stats_advice_new(own, rp__advice(&files[i].fact, own), advice, na);
        for (int k = 0; k < np; k++)
            printf("advice for %s: %s\n", files[i].label, own[k]);
    }
    if (!all->nseqs)
        return;
    /* The process column is as wide as its longest name. */
    int pw = 7;
    for (size_t k = 0; k < all->nseqs; k++)
        if (all->seqs[k].who && (int)strlen(all->seqs[k].who) > pw)
            pw = (int)strlen(all->seqs[k].who);
    printf("\n%-*s %5s %5s  %-32s %11s %8s %8s %6s %8s  %s\n", pw, "process", "seq", "ops",
           "first kernel", "occurrences", "replays", "diverged", "eager", "updates",
           "updated before each replay");
    for (size_t k = 0; k < all->nseqs; k++) {
        const struct rp__seq_fact *s = &all->seqs[k];
        char kernel[64], vols[RP_LINE_LEN], eager[16];
        if (s->first_kernel[0])
            rp__name_short(s->first_kernel, kernel, sizeof kernel, 32);
        else
            snprintf(kernel, sizeof kernel, "(copies and memsets)");
        rp_stats_vols_text(s, vols, sizeof vols);
        if (s->flushes >= 0)
            snprintf(eager, sizeof eager, "%.0f", s->flushes);
        else
            snprintf(eager, sizeof eager, "?");
        printf("%-*s %5u %5.0f  %-32s %11.0f %8.0f %8.0f %6s %8.0f  %s\n", pw,
               s->who ? s->who : files[0].name, s->id, s->ops, kernel, s->occurrences,
               s->replays, s->divergences, eager, s->updates, vols);
    }
    printf("(diverged: runs that began like the sequence and went another way, most of them "
           "on as another sequence; eager: of those, the runs whose held ops then ran eagerly. "
           "`reprise explain FILE` says why, sequence by sequence.)\n");
}

int rp_report_main(int argc, char **argv)
{
    const char *html = NULL;
    rp_stats_file *files = calloc((size_t)argc, sizeof *files);
    int n = 0, status = 0;
    if (!files)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--html") || !strcmp(argv[i], "-o")) {
            char why[PATH_MAX + 64];
            if (i + 1 >= argc) {
                fprintf(stderr, "reprise report: %s needs a file name (see reprise report "
                                "--help)\n", argv[i]);
                free(files);
                return 2;
            }
            html = argv[++i];
            if (!rp_cli_output_ok(html, why, sizeof why)) { /* before the work, not after */
                fprintf(stderr, "reprise report: %s %s: %s\n", argv[i - 1], html, why);
                free(files);
                return 2;
            }
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "reprise report: unknown option '%s' (see reprise report --help)\n",
                    argv[i]);
            free(files);
            return 2;
        }
        if (rp_stats_read(&files[n], argv[i], "reprise report") != 0) {
            status = 1;
            continue;
        }
        n++;
    }
    if (n == 0) {
        if (status == 0)
            fprintf(stderr, "reprise report: no stats file given (see reprise report --help)\n");
        free(files);
        return status ? 1 : 2;
    }
    struct rp__run_fact all;
    if (rp_stats_merge(files, n, &all) != 0) {
        fprintf(stderr, "reprise report: out of memory\n");
        status = 1;
    } else {
        print_text(files, n, &all);
        if (html && rp_page_write(html, files, n, &all) != 0)
            status = 1;
        rp_stats_merged_free(&all);
    }
    for (int i = 0; i < n; i++)
        rp_stats_free(&files[i]);
    free(files);
    return status;
}

bool rp_report_add_share(const char *path, double *ops, double *replayed)
{
    rp_stats_file f;
    if (rp_stats_read(&f, path, "reprise") != 0)
        return false;
    *ops += jnum(f.root, "ops");
    *replayed += jnum(f.root, "replayed_ops");
    rp_stats_free(&f);
    return true;
}
