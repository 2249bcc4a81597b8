/* statsfile.c - a stats file read for the report, the page and explain
 * (statsfile.h). A file of another schema version, or JSON that is not a
 * stats file at all, is refused with a line saying which; keys a file
 * lacks (an older file) read as 0, or as not known where 0 would mislead. */
#include "statsfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reprise.h"

/* How a process is named: host:pid, and its rank when the launcher set
 * one (a file older than "rank_from" shows a rank other than 0). */
static void process_name(const jval *root, char *out, size_t n)
{
    const jval *from = jget(root, "rank_from");
    const char *rank = jstr(root, "rank");
    int show_rank = from ? jstr(root, "rank_from")[0] != '\0' : strcmp(rank, "0") != 0;
    if (show_rank && rank[0])
        snprintf(out, n, "%s:%.0f rank %s", jstr(root, "host"), jnum(root, "pid"), rank);
    else
        snprintf(out, n, "%s:%.0f", jstr(root, "host"), jnum(root, "pid"));
}

/* The command line, its words joined by spaces (cut to fit). */
static void command_line(const jval *root, char *out, size_t n)
{
    const jval *argv = jget(root, "argv");
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; argv && argv->kind == J_ARR && i < argv->n && w + 1 < n; i++) {
        const jval *a = argv->items[i];
        if (a->kind != J_STR)
            continue;
        int r = snprintf(out + w, n - w, "%s%s", w ? " " : "", a->str);
        w = r < 0 ? w : w + (size_t)r < n ? w + (size_t)r : n - 1;
    }
}

/* The unsigned value of a difference's "had" or "got": a number, or a hex
 * string (handles, addresses, parameter bytes). */
static unsigned long long diff_value(const jval *v)
{
    if (!v)
        return 0;
    if (v->kind == J_NUM)
        return v->num > 0 ? (unsigned long long)v->num : 0;
    return v->kind == J_STR ? strtoull(v->str, NULL, 0) : 0;
}

/* A difference of the file (docs/stats.md, "Differences"). */
static void read_diff(const jval *o, struct rp__diff *d)
{
    memset(d, 0, sizeof *d);
    d->op = (unsigned)jnum(o, "op");
    for (int w = 0; w < RP_DIV_WHY_COUNT; w++)
        if (!strcmp(jstr(o, "why"), rp__div_why_keys[w]))
            d->why = w;
    const jval *e = jget(o, "ended"), *st = jget(o, "structure");
    d->ended = e && e->kind == J_BOOL && e->num;
    d->structure = st && st->kind == J_BOOL && st->num;
    snprintf(d->kind, sizeof d->kind, "%s", jstr(o, "kind"));
    snprintf(d->kernel, sizeof d->kernel, "%s", jstr(o, "kernel"));
    int f = rp__field_from_key(jstr(o, "field"), &d->index);
    d->field = f < 0 ? RP_FIELD_NONE : f;
    if (d->field == RP_FIELD_PARAM) {
        d->index = (unsigned)jnum(o, "index");
        d->at = (unsigned)jnum(o, "at");
    }
    if (d->field == RP_FIELD_FUNCTION) {
        snprintf(d->kernel, sizeof d->kernel, "%s", jstr(o, "had"));
        snprintf(d->got_kernel, sizeof d->got_kernel, "%s", jstr(o, "got"));
    } else if (d->field == RP_FIELD_KIND) {
        snprintf(d->kind, sizeof d->kind, "%s", jstr(o, "had"));
        snprintf(d->got_kind, sizeof d->got_kind, "%s", jstr(o, "got"));
    } else {
        d->had = diff_value(jget(o, "had"));
        d->got = diff_value(jget(o, "got"));
    }
}

/* The elements of array `key` of `o` (0 when absent). */
static size_t array_len(const jval *o, const char *key)
{
    const jval *a = jget(o, key);
    return a && a->kind == J_ARR ? a->n : 0;
}

/* The counters and settings of engine object `e` (missing ones 0). */
static void read_counts(const jval *e, struct rp__run_fact *f)
{
    const jval *r = jget(e, "ops_eager");
    for (size_t i = 0; r && r->kind == J_OBJ && i < r->n; i++) {
        int k = rp__reason_index(r->keys[i]);
        if (k >= 0 && r->items[i]->kind == J_NUM)
            f->eager[k] = r->items[i]->num;
    }
    const jval *by = jget(e, "bound_hits_by"), *lim = jget(e, "limits");
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        f->hits[b] = jnum(by, rp__bounds[b].key);
        f->limits[b] = jnum(lim, rp__bounds[b].key);
    }
    const jval *costs = jget(e, "costs_ns"), *attrs = jget(e, "attr_boundaries");
    f->cost_eager_ns = jnum(costs, "eager_launch");
    f->cost_update_ns = jnum(costs, "node_update");
    f->cost_launch_ns = jnum(costs, "graph_launch");
    for (size_t i = 0; attrs && attrs->kind == J_OBJ && i < attrs->n; i++)
        f->attr_boundaries += attrs->items[i]->kind == J_NUM ? attrs->items[i]->num : 0;
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
#define K(k, m) {k, offsetof(struct rp__run_fact, m)}
        K("ops_total", ops), K("ops_replayed", replayed), K("replays", replays),
        K("part_launches", part_launches), K("graphs_captured", graphs), K("updates", updates),
        K("segments", segments), K("divergences", divergences),
        K("program_captures", program_captures), K("too_many_updates", too_many_updates),
        K("capture_failures", capture_failures), K("backoffs", backoffs),
        K("evictions", evictions), K("graphs_dropped", graphs_dropped), K("rests", rests),
        K("widenings", widenings), K("new_shapes", new_shapes),
        K("new_shape_ops", new_shape_ops),
#undef K
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        *(double *)(void *)((char *)f + keys[i].off) = jnum(e, keys[i].key);
    const jval *set = jget(e, "settings");
    f->warmup = jnum(set, "warmup");
    f->min_ops = jnum(set, "min_ops");
}

/* The facts of one file: counts, shape changes, sequences. Returns 0, or
 * -1 when memory runs out. */
static int read_facts(rp_stats_file *s)
{
    struct rp__run_fact *f = &s->fact;
    const jval *e = s->engine;
    memset(f, 0, sizeof *f);
    f->wall_s = jnum(s->root, "wall_s");
    f->processes = 1;
    if (!e)
        return 0;
    read_counts(e, f);
    const jval *shapes = jget(e, "shape_changes"), *seqs = jget(e, "sequences");
    size_t nshapes = array_len(e, "shape_changes"), nseqs = array_len(e, "sequences");
    size_t ndivs = 0, nvols = 0;
    for (size_t i = 0; i < nseqs; i++) {
        ndivs += array_len(seqs->items[i], "divergences_last");
        nvols += array_len(seqs->items[i], "volatile_fields");
    }
    s->shapes = calloc(nshapes + 1, sizeof *s->shapes);
    s->seqs = calloc(nseqs + 1, sizeof *s->seqs);
    s->divs = calloc(ndivs + 1, sizeof *s->divs);
    s->vols = calloc(nvols + 1, sizeof *s->vols);
    if (!s->shapes || !s->seqs || !s->divs || !s->vols)
        return -1;
    for (size_t i = 0; i < nshapes; i++)
        read_diff(shapes->items[i], &s->shapes[i]);
    f->shapes = s->shapes;
    f->nshapes = (unsigned)nshapes;
    ndivs = nvols = 0;
    for (size_t i = 0; i < nseqs; i++) {
        const jval *q = seqs->items[i];
        struct rp__seq_fact *x = &s->seqs[i];
        x->id = (unsigned)jnum(q, "id");
        x->ops = jnum(q, "ops");
        x->occurrences = jnum(q, "occurrences");
        x->replays = jnum(q, "replays");
        x->captured_at = jnum(q, "captured_at");
        x->updates = jnum(q, "updates");
        x->divergences = jnum(q, "divergences");
        x->flushes = jget(q, "flushes") ? jnum(q, "flushes") : -1;
        x->flushed_ops = jget(q, "flushed_ops") ? jnum(q, "flushed_ops") : -1;
        x->by_period = !strcmp(jstr(q, "found_by"), "period");
        x->first_kernel = jstr(q, "first_kernel");
        const jval *d = jget(q, "divergences_last"), *v = jget(q, "volatile_fields");
        x->divs = s->divs + ndivs;
        for (size_t k = 0; k < array_len(q, "divergences_last"); k++)
            read_diff(d->items[k], &s->divs[ndivs++]);
        x->ndivs = (unsigned)(s->divs + ndivs - x->divs);
        x->vols = s->vols + nvols;
        for (size_t k = 0; k < array_len(q, "volatile_fields"); k++) {
            const jval *o = v->items[k];
            struct rp__vol_fact *y = &s->vols[nvols++];
            unsigned idx;
            int fld = rp__field_from_key(jstr(o, "field"), &idx);
            y->op = (unsigned)jnum(o, "op");
            y->field = fld < 0 ? RP_FIELD_NONE : fld;
            y->index = fld == RP_FIELD_PARAM ? (unsigned)jnum(o, "index") : idx;
            y->kind = jstr(o, "kind");
            y->kernel = jstr(o, "kernel");
        }
        x->nvols = (unsigned)(s->vols + nvols - x->vols);
    }
    f->seqs = s->seqs;
    f->nseqs = nseqs;
    return 0;
}

void rp_stats_free(rp_stats_file *s)
{
    jfree(s->root);
    free(s->shapes);
    free(s->seqs);
    free(s->divs);
    free(s->vols);
    memset(s, 0, sizeof *s);
}

int rp_stats_read(rp_stats_file *s, const char *path, const char *who)
{
    char err[600];
    memset(s, 0, sizeof *s);
    int not_json;
    jval *root = jload(path, err, sizeof err, &not_json);
    if (!root) {
        if (not_json)
            fprintf(stderr, "%s: %s: not a reprise stats file (%s)\n", who, path, err);
        else
            fprintf(stderr, "%s: %s\n", who, err);
        return 1;
    }
    const jval *ver = jget(root, "version");
    if (root->kind != J_OBJ || !ver || ver->kind != J_NUM || !jget(root, "reprise_version")) {
        /* JSON, but not ours: say so, not "schema version 0". */
        fprintf(stderr, "%s: %s: not a reprise stats file (%s)\n", who, path,
                root->kind != J_OBJ ? "not a JSON object"
                : !ver              ? "it has no \"version\" key"
                : ver->kind != J_NUM ? "its \"version\" is not a number"
                                     : "it has no \"reprise_version\" key");
        jfree(root);
        return 1;
    }
    if (ver->num != REPRISE_STATS_VERSION) {
        fprintf(stderr, "%s: %s: stats schema version %g, this reprise reads version %d (a "
                "newer or older reprise wrote it)\n", who, path, ver->num, REPRISE_STATS_VERSION);
        jfree(root);
        return 1;
    }
    s->path = path;
    s->root = root;
    s->engine = jget(root, "engine");
    process_name(root, s->name, sizeof s->name);
    command_line(root, s->command, sizeof s->command);
    const jval *argv = jget(root, "argv");
    const char *prog = argv && argv->kind == J_ARR && argv->n && argv->items[0]->kind == J_STR
                           ? argv->items[0]->str : "";
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    snprintf(s->label, sizeof s->label, "%.60s%s%s", base, base[0] ? " " : "", s->name);
    if (read_facts(s) != 0) {
        fprintf(stderr, "%s: %s: out of memory\n", who, path);
        rp_stats_free(s);
        return 1;
    }
    return 0;
}

int rp_stats_merge(const rp_stats_file *files, int n, struct rp__run_fact *all)
{
    memset(all, 0, sizeof *all);
    size_t nshapes = 0, nseqs = 0;
    for (int i = 0; i < n; i++) {
        if (!files[i].engine)
            continue;
        rp__run_fact_add(all, &files[i].fact);
        nshapes += files[i].fact.nshapes;
        nseqs += files[i].fact.nseqs;
    }
    struct rp__diff *shapes = calloc(nshapes + 1, sizeof *shapes);
    struct rp__seq_fact *seqs = calloc(nseqs + 1, sizeof *seqs);
    if (!shapes || !seqs) {
        free(shapes);
        free(seqs);
        return -1;
    }
    nshapes = nseqs = 0;
    /* The shape changes of the process whose runs kept coming with new
     * structures and sent the most ops eagerly so first: the sentences read
     * the first ones as the cause. */
    int first = -1;
    for (int i = 0; i < n; i++)
        if (files[i].engine && rp__shapes_change(&files[i].fact) &&
            (first < 0 || files[i].fact.new_shape_ops > files[first].fact.new_shape_ops))
            first = i;
    for (int j = -1; j < n; j++) {
        int i = j < 0 ? first : j;
        if (i < 0 || (j >= 0 && j == first) || !files[i].engine)
            continue;
        for (unsigned k = 0; k < files[i].fact.nshapes; k++)
            shapes[nshapes++] = files[i].fact.shapes[k];
    }
    for (int i = 0; i < n; i++) {
        const struct rp__run_fact *f = &files[i].fact;
        if (!files[i].engine)
            continue;
        for (size_t k = 0; k < f->nseqs; k++) {
            seqs[nseqs] = f->seqs[k];
            seqs[nseqs++].who = n > 1 ? files[i].label : NULL;
        }
    }
    all->shapes = shapes;
    all->nshapes = (unsigned)nshapes;
    all->seqs = seqs;
    all->nseqs = nseqs;
    return 0;
}

void rp_stats_merged_free(struct rp__run_fact *all)
{
    free((void *)all->shapes);
    free((void *)all->seqs);
    memset(all, 0, sizeof *all);
}

/* "1403 capturable ops, 1379 replayed (98.3%) in 197 graph launches; 1
 * graph captured, 0 updates" */
void rp_stats_no_engine_text(const rp_stats_file *s, char *out, size_t n)
{
    const jval *drv = jget(s->root, "driver");
    const jval *on = jget(s->root, "enabled"), *loaded = jget(drv, "loaded");
    if (!on || on->kind != J_BOOL || !on->num)
        snprintf(out, n, "reprise was not enabled in that process");
    else if (jstr(drv, "error")[0] || !loaded || loaded->kind != J_BOOL || loaded->num)
        snprintf(out, n, "the CUDA driver %s could not be loaded (%s): nothing was captured",
                 jstr(drv, "path"), jstr(drv, "error"));
    else
        snprintf(out, n, "the program made no CUDA driver call: nothing to capture");
}

void rp_stats_totals_text(const struct rp__run_fact *f, char *out, size_t n)
{
    char ops[32], rep[32], launches[32], up[32];
    rp__count_text(f->ops, ops, sizeof ops);
    rp__count_text(f->replayed, rep, sizeof rep);
    rp__count_text(f->replays, launches, sizeof launches);
    rp__count_text(f->updates, up, sizeof up);
    snprintf(out, n, "%s capturable op%s, %s replayed (%.1f%%) in %s graph launch%s; "
             "%.0f graph%s captured, %s update%s", ops, f->ops == 1 ? "" : "s", rep,
             f->ops ? 100.0 * f->replayed / f->ops : 0.0, launches,
             f->replays == 1 ? "" : "es", f->graphs, f->graphs == 1 ? "" : "s", up,
             f->updates == 1 ? "" : "s");
}

/* A process as the report names it: "host:pid (command line)", the
 * command cut to `width`. */
void rp_stats_label(const rp_stats_file *s, char *out, size_t n, size_t width)
{
    if (!s->command[0]) {
        snprintf(out, n, "%s", s->name);
        return;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s", s->command);
    if (strlen(cmd) > width && width > 3)
        strcpy(cmd + width - 3, "...");
    snprintf(out, n, "%s (%s)", s->name, cmd);
}

/* What a sequence's volatile fields are, as the table shows them. */
void rp_stats_vols_text(const struct rp__seq_fact *s, char *out, size_t n)
{
    struct rp__line l[4];
    out[0] = '\0';
    int m = rp__explain_seq(s, l, 4);
    const char *tag = "updated before each replay: ";
    for (int i = 0; i < m; i++)
        if (!strncmp(l[i].text, tag, strlen(tag)))
            snprintf(out, n, "%s", l[i].text + strlen(tag));
}

int rp_stats_advice_new(char own[][RP_ADVICE_LEN], int n, char all[][RP_ADVICE_LEN], int nall)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int said = 0;
        for (int j = 0; j < nall && !said; j++)
            said = !strcmp(own[i], all[j]);
        if (!said && k != i)
            memcpy(own[k], own[i], sizeof own[k]);
        k += !said;
    }
    return k;
}
