/* report.c - `reprise report FILE... [--html OUT.html]`: reads one or more
 * stats files (docs/stats.md; one per process or rank) and prints the
 * summary a person reads in ten seconds, a line per rank when there are
 * several, and a table of the sequences; with --html, also a self-contained
 * page with inline SVG bars. Holds a small JSON reader for our own reports. */
#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explain.h"
#include "names.h"

/* ---- a small JSON reader ------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
    jkind kind;
    double num;
    char *str;            /* J_STR */
    struct jval **items;  /* J_ARR, J_OBJ (values) */
    char **keys;          /* J_OBJ */
    size_t n;
} jval;

typedef struct {
    const char *p;
    const char *err;
} jparser;

static void jskip(jparser *j)
{
    while (isspace((unsigned char)*j->p))
        j->p++;
}

static jval *jnew(jkind k)
{
    jval *v = calloc(1, sizeof *v);
    if (v)
        v->kind = k;
    return v;
}

static void jfree(jval *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static jval *jparse_value(jparser *j, int depth);

static char *jparse_string(jparser *j)
{
    if (*j->p != '"') {
        j->err = "expected a string";
        return NULL;
    }
    j->p++;
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    while (s && *j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            char e = *j->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': /* \u00XX only: our reports escape control bytes so */
                if (j->p[0] && j->p[1] && j->p[2] && j->p[3]) {
                    char hex[5] = {j->p[0], j->p[1], j->p[2], j->p[3], 0};
                    c = (char)strtol(hex, NULL, 16);
                    j->p += 4;
                } else {
                    j->err = "bad \\u escape";
                }
                break;
            case '"': case '\\': case '/': c = e; break;
            default: j->err = "bad escape"; break;
            }
        }
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
        }
        if (s)
            s[n++] = c;
    }
    if (!s || *j->p != '"' || j->err) {
        if (!j->err)
            j->err = s ? "unterminated string" : "out of memory";
        free(s);
        return NULL;
    }
    j->p++;
    s[n] = '\0';
    return s;
}

static int jpush(jval *v, jval *item, char *key)
{
    jval **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items)
        return -1;
    v->items = items;
    if (v->kind == J_OBJ) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys)
            return -1;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

static jval *jparse_container(jparser *j, int depth, jkind kind)
{
    char close = kind == J_OBJ ? '}' : ']';
    jval *v = jnew(kind);
    j->p++;
    jskip(j);
    if (*j->p == close) {
        j->p++;
        return v;
    }
    while (v && !j->err) {
        jskip(j);
        char *key = NULL;
        if (kind == J_OBJ) {
            key = jparse_string(j);
            if (!key)
                break;
            jskip(j);
            if (*j->p != ':') {
                j->err = "expected ':'";
                free(key);
                break;
            }
            j->p++;
        }
        jval *item = jparse_value(j, depth + 1);
        if (!item || jpush(v, item, key) != 0) {
            jfree(item);
            free(key);
            if (!j->err)
                j->err = "out of memory";
            break;
        }
        jskip(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == close) {
            j->p++;
            return v;
        }
        j->err = kind == J_OBJ ? "expected ',' or '}'" : "expected ',' or ']'";
    }
    jfree(v);
    return NULL;
}

static jval *jparse_value(jparser *j, int depth)
{
    jskip(j);
    if (depth > 64) {
        j->err = "nested too deeply";
        return NULL;
    }
    if (*j->p == '{')
        return jparse_container(j, depth, J_OBJ);
    if (*j->p == '[')
        return jparse_container(j, depth, J_ARR);
    if (*j->p == '"') {
        char *s = jparse_string(j);
        jval *v = s ? jnew(J_STR) : NULL;
        if (v)
            v->str = s;
        else
            free(s);
        return v;
    }
    if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
        jval *v = jnew(J_BOOL);
        if (v)
            v->num = *j->p == 't';
        j->p += *j->p == 't' ? 4 : 5;
        return v;
    }
    if (!strncmp(j->p, "null", 4)) {
        j->p += 4;
        return jnew(J_NULL);
    }
    char *end;
    errno = 0;
    double d = strtod(j->p, &end);
    if (end == j->p || errno) {
        j->err = "expected a value";
        return NULL;
    }
    j->p = end;
    jval *v = jnew(J_NUM);
    if (v)
        v->num = d;
    return v;
}

static const jval *jget(const jval *o, const char *key)
{
    if (!o || o->kind != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->items[i];
    return NULL;
}

static double jnum(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_NUM ? v->num : 0.0;
}

static const char *jstr(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_STR ? v->str : "";
}

/* ---- the report ---------------------------------------------------------- */

typedef struct run {
    const char *path;
    jval *root;
    const jval *engine;
} run;

static jval *load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "reprise report: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(buf, cap *= 2);
            if (!t) {
                free(buf);
                buf = NULL;
            }
            buf = t;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "reprise report: %s: out of memory\n", path);
        return NULL;
    }
    buf[n] = '\0';
    jparser j = {buf, NULL};
    jval *v = jparse_value(&j, 0);
    if (v) {
        jskip(&j);
        if (*j.p)
            j.err = "text after the report";
    }
    if (j.err || !v || v->kind != J_OBJ) {
        fprintf(stderr, "reprise report: %s: not a reprise stats file (%s at byte %ld)\n", path,
                j.err ? j.err : "not an object", (long)(j.p - buf));
        jfree(v);
        v = NULL;
    } else if (!jget(v, "version") || !jget(v, "reprise_version")) {
        fprintf(stderr, "reprise report: %s: not a reprise stats file (a JSON object without "
                        "the \"version\" and \"reprise_version\" keys a stats file opens with)\n",
                path);
        jfree(v);
        v = NULL;
    } else if (jnum(v, "version") != 1) {
        fprintf(stderr, "reprise report: %s: stats schema version %g, this report reads 1\n",
                path, jnum(v, "version"));
        jfree(v);
        v = NULL;
    }
    free(buf);
    return v;
}

#define NREASONS 16

typedef struct totals {
    double ops, replayed, eager, replays, graphs, updates, bound_hits;
    double hits[RP_BOUND_COUNT], limits[RP_BOUND_COUNT];
    double program_captures, too_many_updates;
    char reasons[NREASONS][40];
    double reason_ops[NREASONS];
    int nreasons;
} totals;

static void add_run(totals *t, const jval *e)
{
    t->ops += jnum(e, "ops_total");
    t->replayed += jnum(e, "ops_replayed");
    t->eager += jnum(e, "ops_eager_total");
    t->replays += jnum(e, "replays");
    t->graphs += jnum(e, "graphs_captured");
    t->updates += jnum(e, "updates");
    t->bound_hits += jnum(e, "bound_hits");
    t->program_captures += jnum(e, "program_captures");
    t->too_many_updates += jnum(e, "too_many_updates");
    const jval *by = jget(e, "bound_hits_by"), *lim = jget(e, "limits");
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        double hits = jnum(by, rp__bounds[b].key);
        t->hits[b] += hits;
        /* Processes may be run with different limits: name the largest
         * among those that hit the bound. */
        if (hits > 0 && jnum(lim, rp__bounds[b].key) > t->limits[b])
            t->limits[b] = jnum(lim, rp__bounds[b].key);
    }
    const jval *r = jget(e, "ops_eager");
    for (size_t i = 0; r && r->kind == J_OBJ && i < r->n; i++) {
        int k = 0;
        while (k < t->nreasons && strcmp(t->reasons[k], r->keys[i]))
            k++;
        if (k == t->nreasons) {
            if (k == NREASONS)
                continue;
            snprintf(t->reasons[k], sizeof t->reasons[k], "%s", r->keys[i]);
            t->nreasons++;
        }
        t->reason_ops[k] += r->items[i]->kind == J_NUM ? r->items[i]->num : 0;
    }
}

static void print_totals(FILE *f, const char *who, const totals *t)
{
    fprintf(f, "%s%.0f capturable ops, %.0f replayed (%.1f%%) in %.0f graph launches; "
               "%.0f graph%s captured, %.0f updates\n",
            who, t->ops, t->replayed, t->ops ? 100.0 * t->replayed / t->ops : 0.0, t->replays,
            t->graphs, t->graphs == 1 ? "" : "s", t->updates);
}

/* The k largest eager reasons, as indices into t (-1 past the last). */
static void top_reasons(const totals *t, int *top, int k)
{
    for (int i = 0; i < k; i++)
        top[i] = -1;
    for (int r = 0; r < t->nreasons; r++) {
        if (t->reason_ops[r] <= 0)
            continue;
        for (int i = 0; i < k; i++) {
            if (top[i] < 0 || t->reason_ops[r] > t->reason_ops[top[i]]) {
                for (int m = k - 1; m > i; m--)
                    top[m] = top[m - 1];
                top[i] = r;
                break;
            }
        }
    }
}

/* The eager ops of reason `name` (0 if none). */
static double reason_ops(const totals *t, const char *name)
{
    for (int r = 0; r < t->nreasons; r++)
        if (!strcmp(t->reasons[r], name))
            return t->reason_ops[r];
    return 0;
}

/* The suggestions for totals `t` (explain.h); returns how many. */
static int advise(const totals *t, char out[RP_ADVICE_MAX][RP_ADVICE_LEN])
{
    struct rp__advice_in in;
    memset(&in, 0, sizeof in);
    in.ops = t->ops;
    in.replayed = t->replayed;
    in.eager_bound = reason_ops(t, "bound_hit");
    in.eager_program = reason_ops(t, "program_capturing");
    in.eager_no_layout = reason_ops(t, "no_param_layout");
    in.eager_warming = reason_ops(t, "warming_up");
    memcpy(in.hits, t->hits, sizeof in.hits);
    memcpy(in.limits, t->limits, sizeof in.limits);
    in.program_captures = t->program_captures;
    in.too_many_updates = t->too_many_updates;
    in.replays = t->replays;
    return rp__advice(&in, out);
}

/* How a process is named: host:pid, and its rank when the launcher set
 * one (a file older than "rank_from" shows a rank other than 0). */
static void process_name(const run *r, char *out, size_t n)
{
    const jval *from = jget(r->root, "rank_from");
    const char *rank = jstr(r->root, "rank");
    int show_rank = from ? jstr(r->root, "rank_from")[0] != '\0' : strcmp(rank, "0") != 0;
    if (show_rank && rank[0])
        snprintf(out, n, "%s:%.0f rank %s", jstr(r->root, "host"), jnum(r->root, "pid"), rank);
    else
        snprintf(out, n, "%s:%.0f", jstr(r->root, "host"), jnum(r->root, "pid"));
}

static void html_escape(FILE *f, const char *s)
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

/* Rows of the chart's legend after "replayed": the reasons that occurred. */
static int legend_rows(const totals *t)
{
    int n = 0;
    for (int r = 0; r < t->nreasons; r++)
        n += t->reason_ops[r] > 0;
    return n;
}

static int write_html(const char *out, run *runs, int nruns, const totals *all)
{
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "reprise report: cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    /* XHTML: well-formed XML, so that a real XML parser checks the page
     * and its inline SVG together (tests/integration/report_check.sh). */
    fprintf(f, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">"
               "<head><meta charset=\"utf-8\"/>"
               "<title>reprise report</title><style>"
               "body{font-family:sans-serif;margin:2em;color:#222}"
               "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}"
               "th{border-bottom:1px solid #888}td.l,th.l{text-align:left}"
               "body{max-width:1140px}td.k{max-width:360px;overflow-wrap:anywhere}"
               "li{margin:0.3em 0}"
               "</style></head><body>\n<h1>reprise report</h1>\n<p>");
    fprintf(f, "%.0f capturable ops, %.0f replayed as graphs (%.1f%%) in %.0f graph launches; "
               "%.0f graphs captured, %.0f node updates; %d process%s.</p>\n",
            all->ops, all->replayed, all->ops ? 100.0 * all->replayed / all->ops : 0.0,
            all->replays, all->graphs, all->updates, nruns, nruns == 1 ? "" : "es");
    /* One bar for all: replayed, then eager by reason. */
    /* Green for replayed; no other green, so eager reasons never pass for it. */
    static const char *const colors[] = {"#4c9a2a", "#d95f02", "#7570b3", "#e7298a", "#e6ab02",
                                         "#a6761d", "#666666", "#1f78b4", "#b15928", "#999999"};
    double w = 600;
    fprintf(f, "<h2>All operations</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" role=\"img\" aria-label=\"operations replayed and eager\">\n",
            (int)w + 220, 30 + 18 * (legend_rows(all) + 1));
    double x = 0, scale = all->ops > 0 ? w / all->ops : 0;
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.1f\" height=\"20\" fill=\"%s\"><title>replayed: "
               "%.0f</title></rect>\n", all->replayed * scale, colors[0], all->replayed);
    x = all->replayed * scale;
    for (int r = 0; r < all->nreasons; r++) {
        double rw = all->reason_ops[r] * scale;
        if (rw <= 0)
            continue;
        fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\" fill=\"%s\"><title>%s: "
                   "%.0f</title></rect>\n", x, rw, colors[(r + 1) % 10], all->reasons[r],
                all->reason_ops[r]);
        x += rw;
    }
    fprintf(f, "<rect x=\"0\" y=\"30\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"14\" "
               "y=\"39\" font-size=\"11\">replayed %.0f</text>\n", colors[0], all->replayed);
    for (int r = 0, row = 0; r < all->nreasons; r++) {
        if (all->reason_ops[r] <= 0)
            continue; /* the legend names what happened */
        fprintf(f, "<rect x=\"0\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"14\" "
                   "y=\"%d\" font-size=\"11\">eager, %s: %.0f</text>\n", 48 + 18 * row,
                colors[(r + 1) % 10], 57 + 18 * row, all->reasons[r], all->reason_ops[r]);
        row++;
    }
    fprintf(f, "</svg>\n");
    /* The bounds hit, by option, and the suggestions. */
    int any_bound = 0;
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (all->hits[b] <= 0)
            continue;
        char what[256];
        rp__bound_describe(b, (unsigned long long)all->limits[b], what, sizeof what);
        fprintf(f, "%s<li>hit %.0f time%s: ", any_bound ? "" : "<h2>Bounds hit</h2>\n<ul>\n",
                all->hits[b], all->hits[b] == 1 ? "" : "s");
        html_escape(f, what);
        fprintf(f, "</li>\n");
        any_bound = 1;
    }
    if (any_bound)
        fprintf(f, "</ul>\n");
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = advise(all, advice);
    for (int k = 0; k < na; k++) {
        fprintf(f, "%s<li>", k ? "" : "<h2>Advice</h2>\n<ul>\n");
        html_escape(f, advice[k]);
        fprintf(f, "</li>\n%s", k == na - 1 ? "</ul>\n" : "");
    }
    if (nruns > 1) {
        fprintf(f, "<h2>Processes</h2>\n<table><tr><th class=\"l\">process</th><th>ops</th>"
                   "<th>replayed</th><th>share</th><th>graph launches</th><th>graphs</th></tr>\n");
        for (int i = 0; i < nruns; i++) {
            if (!runs[i].engine)
                continue;
            totals one;
            memset(&one, 0, sizeof one);
            add_run(&one, runs[i].engine);
            char name[140];
            process_name(&runs[i], name, sizeof name);
            fprintf(f, "<tr><td class=\"l\">");
            html_escape(f, name);
            fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>%.1f%%</td><td>%.0f</td><td>%.0f</td>"
                       "</tr>\n", one.ops, one.replayed,
                    one.ops ? 100.0 * one.replayed / one.ops : 0.0, one.replays, one.graphs);
        }
        fprintf(f, "</table>\n");
    }
    fprintf(f, "<h2>Sequences</h2>\n<table><tr><th class=\"l\">process</th><th>id</th><th>ops</th>"
               "<th class=\"l\">first kernel</th><th>occurrences</th><th>replays</th>"
               "<th>updates</th><th class=\"l\">replayed / eager</th></tr>\n");
    for (int i = 0; i < nruns; i++) {
        const jval *seqs = jget(runs[i].engine, "sequences");
        for (size_t k = 0; seqs && seqs->kind == J_ARR && k < seqs->n; k++) {
            const jval *s = seqs->items[k];
            double occ = jnum(s, "occurrences"), rep = jnum(s, "replays");
            char name[140], kernel[64], full[4096];
            process_name(&runs[i], name, sizeof name);
            fprintf(f, "<tr><td class=\"l\">");
            html_escape(f, name);
            fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td class=\"l k\">", jnum(s, "id"),
                    jnum(s, "ops"));
            /* A short name in the table; the whole one (demangled, then as
             * the stats file has it) in the tooltip. */
            const char *raw = jstr(s, "first_kernel");
            rp__name_short(raw, kernel, sizeof kernel, 48);
            fprintf(f, "<span title=\"");
            if (rp__name_demangle(raw, full, sizeof full)) {
                html_escape(f, full);
                fprintf(f, " &#10;");
            }
            html_escape(f, raw);
            fprintf(f, "\">");
            html_escape(f, kernel);
            fprintf(f, "</span></td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td class=\"l\">"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"12\">"
                       "<rect x=\"0\" y=\"0\" width=\"%.1f\" height=\"12\" fill=\"%s\"/>"
                       "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"12\" fill=\"%s\"/>"
                       "</svg></td></tr>\n",
                    occ, rep, jnum(s, "updates"), occ ? 200 * rep / occ : 0, colors[0],
                    occ ? 200 * rep / occ : 0, occ ? 200 * (occ - rep) / occ : 0, colors[1]);
        }
    }
    fprintf(f, "</table>\n<p>Timestamps are not kept in the stats files: no timeline.</p>\n"
               "</body></html>\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "reprise report: writing %s failed\n", out);
        return 1;
    }
    return 0;
}

int rp_report_main(int argc, char **argv)
{
    const char *html = NULL;
    run *runs = calloc((size_t)argc, sizeof *runs);
    int nruns = 0, status = 0;
    if (!runs)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--html") || !strcmp(argv[i], "-o")) {
            char why[PATH_MAX + 64];
            if (i + 1 >= argc) {
                fprintf(stderr, "reprise report: %s needs a file name (see reprise report "
                                "--help)\n", argv[i]);
                free(runs);
                return 2;
            }
            html = argv[++i];
            if (!rp_cli_output_ok(html, why, sizeof why)) { /* before the work, not after */
                fprintf(stderr, "reprise report: %s %s: %s\n", argv[i - 1], html, why);
                free(runs);
                return 2;
            }
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "reprise report: unknown option '%s' (see reprise report --help)\n",
                    argv[i]);
            free(runs);
            return 2;
        }
        jval *root = load(argv[i]);
        if (!root) {
            status = 1;
            continue;
        }
        runs[nruns].path = argv[i];
        runs[nruns].root = root;
        runs[nruns].engine = jget(root, "engine");
        nruns++;
    }
    if (nruns == 0) {
        if (status == 0)
            fprintf(stderr, "reprise report: no stats file given (see reprise report --help)\n");
        free(runs);
        return status ? 1 : 2;
    }
    totals all;
    memset(&all, 0, sizeof all);
    for (int i = 0; i < nruns; i++) {
        if (!runs[i].engine) {
            const jval *drv = jget(runs[i].root, "driver");
            const jval *on = jget(runs[i].root, "enabled"), *loaded = jget(drv, "loaded");
            if (!on || on->kind != J_BOOL || !on->num)
                printf("%s: reprise was not enabled in that process\n", runs[i].path);
            else if (jstr(drv, "error")[0] || !loaded || loaded->kind != J_BOOL || loaded->num)
                printf("%s: the CUDA driver %s could not be loaded (%s): nothing was captured\n",
                       runs[i].path, jstr(drv, "path"), jstr(drv, "error"));
            else
                printf("%s: the program made no CUDA driver call: nothing to capture\n",
                       runs[i].path);
            continue;
        }
        totals one;
        memset(&one, 0, sizeof one);
        add_run(&one, runs[i].engine);
        add_run(&all, runs[i].engine);
        if (nruns > 1) {
            char who[160], name[140];
            process_name(&runs[i], name, sizeof name);
            snprintf(who, sizeof who, "%s: ", name);
            print_totals(stdout, who, &one);
        }
    }
    int engines = 0;
    for (int i = 0; i < nruns; i++)
        engines += runs[i].engine != NULL;
    if (!engines)
        goto page; /* nothing ran under the engine: no totals, no table */
    print_totals(stdout, nruns > 1 ? "all: " : "", &all);
    int top[3];
    top_reasons(&all, top, 3);
    if (top[0] >= 0) {
        printf("ran eagerly:");
        for (int k = 0; k < 3 && top[k] >= 0; k++)
            printf("%s %.0f %s", k ? "," : "", all.reason_ops[top[k]], all.reasons[top[k]]);
        printf(" (reprise help reasons says what each means)\n");
    }
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (all.hits[b] <= 0)
            continue;
        char what[256];
        rp__bound_describe(b, (unsigned long long)all.limits[b], what, sizeof what);
        printf("bound hit %.0f time%s: %s\n", all.hits[b], all.hits[b] == 1 ? "" : "s", what);
    }
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    int na = advise(&all, advice);
    for (int k = 0; k < na; k++)
        printf("advice: %s\n", advice[k]);
    /* The process column is as wide as its longest name. */
    int pw = 7;
    for (int i = 0; i < nruns; i++) {
        char name[140];
        process_name(&runs[i], name, sizeof name);
        if ((int)strlen(name) > pw)
            pw = (int)strlen(name);
    }
    printf("\n%-*s %5s %5s  %-32s %11s %8s %8s %8s  %s\n", pw, "process", "id", "ops",
           "first kernel", "occurrences", "replays", "diverged", "updates",
           "volatile arguments");
    for (int i = 0; i < nruns; i++) {
        const jval *seqs = jget(runs[i].engine, "sequences");
        char name[140];
        process_name(&runs[i], name, sizeof name);
        for (size_t k = 0; seqs && seqs->kind == J_ARR && k < seqs->n; k++) {
            const jval *s = seqs->items[k];
            char kernel[64];
            rp__name_short(jstr(s, "first_kernel"), kernel, sizeof kernel, 32);
            printf("%-*s %5.0f %5.0f  %-32s %11.0f %8.0f %8.0f %8.0f  %s\n", pw, name,
                   jnum(s, "id"), jnum(s, "ops"), kernel, jnum(s, "occurrences"),
                   jnum(s, "replays"), jnum(s, "divergences"), jnum(s, "updates"),
                   jstr(s, "volatile"));
        }
    }
page:
    if (html && write_html(html, runs, nruns, &all) != 0)
        status = 1;
    for (int i = 0; i < nruns; i++)
        jfree(runs[i].root);
    free(runs);
    return status;
}

bool rp_report_add_share(const char *path, double *ops, double *replayed)
{
    jval *root = load(path);
    if (!root)
        return false;
    *ops += jnum(root, "ops");
    *replayed += jnum(root, "replayed_ops");
    jfree(root);
    return true;
}
