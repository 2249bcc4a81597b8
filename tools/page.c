/* page.c - `reprise report --html OUT.html`: the report as one
 * self-contained page, readable at a glance: what ran as graphs and what
 * it saved, a bar of all ops with a legend in the page's own type, why the
 * rest ran eagerly (the report's sentences, each reason's meaning with
 * it), the bounds hit and advice (each process's too, when several files
 * are merged), the processes by command line, and the sequences with the
 * text report's columns. XHTML, so that an XML parser checks the page and
 * its inline SVG together (tests/integration/report_check.sh); a real
 * browser checks what a reader sees (tests/integration/page_check.sh). */
#include "page.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "names.h"

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

/* Green for replayed; no other green, so eager reasons never pass for it. */
static const char *const colors[] = {"#4c9a2a", "#d95f02", "#7570b3", "#e7298a", "#e6ab02",
                                     "#a6761d", "#666666", "#1f78b4", "#b15928", "#999999"};

static const char *reason_color(int r)
{
    return colors[1 + r % 9];
}

static void head(FILE *f)
{
    fprintf(f, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">"
               "<head><meta charset=\"utf-8\"/>"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>"
               "<title>reprise report</title><style>"
               "body{font-family:sans-serif;font-size:16px;line-height:1.45;color:#222;"
               "max-width:1100px;margin:1.5em auto;padding:0 1em}"
               "h1{font-size:1.7em;margin:0.4em 0}h2{font-size:1.3em;margin:1.4em 0 0.5em}"
               "p.lead{font-size:1.1em}"
               "table{border-collapse:collapse;font-size:14px;max-width:100%%}"
               "td,th{padding:3px 6px;text-align:right;vertical-align:top}"
               "th{border-bottom:1px solid #888}td.l,th.l{text-align:left}"
               "td.k{min-width:7em;max-width:240px;overflow-wrap:break-word}"
               "td.w{min-width:8em;max-width:300px;overflow-wrap:break-word;text-align:left}"
               "ul.legend{list-style:none;padding:0}ul.legend li,ul.why li{margin:0.35em 0}"
               ".sw{display:inline-block;width:0.9em;height:0.9em;margin-right:0.45em;"
               "vertical-align:-0.1em;border-radius:2px}"
               ".key{color:#555;font-family:monospace;font-size:15px}"
               ".note{color:#555;font-size:15px}.wide{overflow-x:auto}"
               "</style></head><body>\n<h1>reprise report</h1>\n");
}

/* "1 graph", "2 graphs" */
static const char *plural(double n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static void lead(FILE *f, const rp_stats_file *files, int n, const struct rp__run_fact *a)
{
    char ops[32], rep[32], launches[32], up[32];
    rp__count_text(a->ops, ops, sizeof ops);
    rp__count_text(a->replayed, rep, sizeof rep);
    rp__count_text(a->replays, launches, sizeof launches);
    rp__count_text(a->updates, up, sizeof up);
    fprintf(f, "<p class=\"lead\">%s capturable %s, %s replayed as graphs (%.1f%%) in %s graph "
               "%s; %.0f %s captured, %s node %s; %d %s.</p>\n",
            ops, plural(a->ops, "op", "ops"), rep, a->ops ? 100.0 * a->replayed / a->ops : 0.0,
            launches, plural(a->replays, "launch", "launches"), a->graphs,
            plural(a->graphs, "graph", "graphs"), up, plural(a->updates, "update", "updates"), n,
            plural(n, "process", "processes"));
    if (n == 1) {
        fprintf(f, "<p>Process ");
        esc(f, files[0].name);
        if (files[0].command[0]) {
            fprintf(f, ": <code>");
            esc(f, files[0].command);
            fprintf(f, "</code>");
        }
        if (files[0].fact.wall_s > 0)
            fprintf(f, ", %.2f s of wall time", files[0].fact.wall_s);
        fprintf(f, ".</p>\n");
    }
    char saved[RP_LINE_LEN];
    if (rp__explain_saved(a, saved, sizeof saved)) {
        fprintf(f, "<h2>What it saved</h2>\n<p>");
        esc(f, saved);
        fprintf(f, ".</p>\n");
    }
}

/* One bar for all ops (replayed, then eager by reason), its legend in the
 * page's type, and the reasons' sentences. */
static void chart(FILE *f, const struct rp__run_fact *a)
{
    if (a->ops <= 0)
        return;
    fprintf(f, "<h2>All operations</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
               "height=\"28\" viewBox=\"0 0 1000 28\" preserveAspectRatio=\"none\" role=\"img\" "
               "aria-label=\"operations replayed and eager\">\n");
    double x = 0, scale = 1000 / a->ops;
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.2f\" height=\"28\" fill=\"%s\"><title>replayed: "
               "%.0f</title></rect>\n", a->replayed * scale, colors[0], a->replayed);
    x = a->replayed * scale;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        double w = a->eager[r] * scale;
        if (w <= 0)
            continue;
        fprintf(f, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"28\" fill=\"%s\"><title>%s: "
                   "%.0f</title></rect>\n", x, w, reason_color(r), rp__reasons[r].key, a->eager[r]);
        x += w;
    }
    fprintf(f, "</svg>\n<ul class=\"legend\">\n<li><span class=\"sw\" style=\"background:%s\">"
               "</span>replayed as graphs: %.0f %s (%.1f%%)</li>\n", colors[0], a->replayed,
            plural(a->replayed, "op", "ops"), 100.0 * a->replayed / a->ops);
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        if (a->eager[r] <= 0)
            continue; /* the legend names what happened */
        fprintf(f, "<li><span class=\"sw\" style=\"background:%s\"></span>eager, "
                   "<span class=\"key\">%s</span>: %.0f %s (%.1f%%): ", reason_color(r),
                rp__reasons[r].key, a->eager[r], plural(a->eager[r], "op", "ops"),
                100.0 * a->eager[r] / a->ops);
        esc(f, rp__reasons[r].meaning);
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul>\n");
    struct rp__line why[RP_EAGER_REASON_COUNT];
    int nw = rp__explain_eager(a, why, RP_EAGER_REASON_COUNT);
    for (int k = 0; k < nw; k++) {
        fprintf(f, "%s<li><span class=\"sw\" style=\"background:%s\"></span>",
                k ? "" : "<h2>Why the rest ran eagerly</h2>\n<ul class=\"why\">\n",
                reason_color(why[k].reason));
        esc(f, why[k].text);
        fprintf(f, ".</li>\n%s", k == nw - 1 ? "</ul>\n" : "");
    }
}

static void bounds_and_advice(FILE *f, const rp_stats_file *files, int n,
                              const struct rp__run_fact *a)
{
    int any = 0;
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (a->hits[b] <= 0)
            continue;
        char what[256];
        rp__bound_describe(b, (unsigned long long)a->limits[b], what, sizeof what);
        fprintf(f, "%s<li>hit %.0f time%s: ", any ? "" : "<h2>Bounds hit</h2>\n<ul>\n",
                a->hits[b], a->hits[b] == 1 ? "" : "s");
        esc(f, what);
        fprintf(f, "</li>\n");
        any = 1;
    }
    if (any)
        fprintf(f, "</ul>\n");
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = rp__advice(a, advice);
    for (int k = 0; k < na; k++) {
        fprintf(f, "%s<li>", k ? "" : "<h2>Advice</h2>\n<ul>\n");
        esc(f, advice[k]);
        fprintf(f, ".</li>\n%s", k == na - 1 ? "</ul>\n" : "");
    }
    /* Merged, each process's own advice (the sum can hide it), but what
     * the advice for all says already. */
    for (int i = 0; n > 1 && i < n; i++) {
        if (!files[i].engine)
            continue;
        char own[RP_ADVICE_MAX][RP_ADVICE_LEN];
        int np = rp__advice(&files[i].fact, own);
        np = rp_stats_advice_new(own, np, advice, na);
        for (int k = 0; k < np; k++) {
            if (!k) {
                fprintf(f, "<h2>Advice for ");
                esc(f, files[i].label);
                fprintf(f, "</h2>\n<ul>\n");
            }
            fprintf(f, "<li>");
            esc(f, own[k]);
            fprintf(f, ".</li>\n%s", k == np - 1 ? "</ul>\n" : "");
        }
    }
}

static void processes(FILE *f, const rp_stats_file *files, int n)
{
    if (n < 2)
        return;
    fprintf(f, "<h2>Processes</h2>\n<div class=\"wide\"><table><tr><th class=\"l\">process</th>"
               "<th class=\"l\">command</th><th>ops</th><th>replayed</th><th>share</th>"
               "<th>graph launches</th><th>graphs</th><th>wall time</th></tr>\n");
    for (int i = 0; i < n; i++) {
        const struct rp__run_fact *o = &files[i].fact;
        fprintf(f, "<tr><td class=\"l\">");
        esc(f, files[i].name);
        fprintf(f, "</td><td class=\"w\"><code>");
        esc(f, files[i].command[0] ? files[i].command : files[i].path);
        if (!files[i].engine) {
            char why[RP_LINE_LEN];
            rp_stats_no_engine_text(&files[i], why, sizeof why);
            fprintf(f, "</code></td><td class=\"l\" colspan=\"6\">");
            esc(f, why);
            fprintf(f, "</td></tr>\n");
            continue;
        }
        fprintf(f, "</code></td><td>%.0f</td><td>%.0f</td><td>%.1f%%</td><td>%.0f</td>"
                   "<td>%.0f</td><td>%.2f s</td></tr>\n", o->ops, o->replayed,
                o->ops ? 100.0 * o->replayed / o->ops : 0.0, o->replays, o->graphs, o->wall_s);
    }
    fprintf(f, "</table></div>\n");
}

static void sequences(FILE *f, int n, const struct rp__run_fact *a)
{
    if (!a->nseqs) /* nothing was captured: no empty table */
        return;
    fprintf(f, "<h2>Sequences</h2>\n<div class=\"wide\"><table><tr>%s<th>seq</th><th>ops</th>"
               "<th class=\"l\">first kernel</th><th>occurrences</th><th>replays</th>"
               "<th>diverged</th><th>eager</th><th>updates</th>"
               "<th class=\"l\">updated before each replay</th>"
               "<th class=\"l\">last divergence</th><th class=\"l\">replayed / eager</th></tr>\n",
            n > 1 ? "<th class=\"l\">process</th>" : "");
    for (size_t k = 0; k < a->nseqs; k++) {
        const struct rp__seq_fact *s = &a->seqs[k];
        char kernel[64], full[4096], vols[RP_LINE_LEN], last[RP_LINE_LEN];
        fprintf(f, "<tr>");
        if (n > 1) {
            fprintf(f, "<td class=\"l\">");
            esc(f, s->who ? s->who : "");
            fprintf(f, "</td>");
        }
        fprintf(f, "<td>%u</td><td>%.0f</td><td class=\"l k\">", s->id, s->ops);
        /* A short name in the table; the whole one (demangled, then as
         * the stats file has it) in the tooltip. */
        const char *raw = s->first_kernel;
        if (raw[0])
            rp__name_short(raw, kernel, sizeof kernel, 48);
        else
            snprintf(kernel, sizeof kernel, "(copies and memsets)");
        fprintf(f, "<span title=\"");
        if (rp__name_demangle(raw, full, sizeof full)) {
            esc(f, full);
            fprintf(f, " &#10;");
        }
        esc(f, raw);
        fprintf(f, "\">");
        esc(f, kernel);
        double occ = s->occurrences, rep = s->replays;
        fprintf(f, "</span></td><td>%.0f</td><td>%.0f</td><td>%.0f</td>", occ, rep,
                s->divergences);
        if (s->flushes >= 0)
            fprintf(f, "<td>%.0f</td>", s->flushes);
        else
            fprintf(f, "<td>?</td>");
        rp_stats_vols_text(s, vols, sizeof vols);
        last[0] = '\0';
        if (s->ndivs)
            rp__diff_describe(&s->divs[0], last, sizeof last);
        fprintf(f, "<td>%.0f</td><td class=\"w\">", s->updates);
        esc(f, vols);
        fprintf(f, "</td><td class=\"w\">");
        esc(f, last);
        fprintf(f, "</td><td class=\"l\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" "
                   "height=\"14\"><rect x=\"0\" y=\"0\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>"
                   "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>"
                   "</svg></td></tr>\n",
                occ ? 100 * rep / occ : 0, colors[0], occ ? 100 * rep / occ : 0,
                occ ? 100 * (occ - rep) / occ : 0, colors[1]);
    }
    fprintf(f, "</table></div>\n<p class=\"note\">seq: the sequence's number, in the order "
               "graphs were captured. occurrences: times the program issued it; replays: of "
               "those, the ones replayed as one graph launch. diverged: runs that began like it "
               "and went another way (most of them on as another sequence); eager: of those, "
               "the runs whose held ops then ran eagerly. <code>reprise explain FILE</code> "
               "tells, sequence by sequence, where its ops went and why.</p>\n");
}

int rp_page_write(const char *out, const rp_stats_file *files, int n,
                  const struct rp__run_fact *all)
{
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "reprise report: cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    head(f);
    lead(f, files, n, all);
    chart(f, all);
    bounds_and_advice(f, files, n, all);
    processes(f, files, n);
    sequences(f, n, all);
    fprintf(f, "<p class=\"note\">Timestamps are not kept in the stats files: no timeline.</p>\n"
               "</body></html>\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "reprise report: writing %s failed\n", out);
        return 1;
    }
    return 0;
}
