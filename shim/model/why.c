/* why.c - causes in plain words (explain.h): a difference described, one
 * sentence per eager reason computed from what the facts show of its cause
 * (the runs whose structure was new, the divergences the sequences kept,
 * the counters), a sequence's story, and advice only where the cause says
 * that something would help: a setting when a setting is the cause, the
 * program's shape when that is; nothing drawn from a reason's name alone. */
#include "explain.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "names.h"

/* snprintf, through vsnprintf: a sentence cut to its buffer is meant (the
 * buffers are sized for the sentences), not a mistake to warn about. */
__attribute__((format(printf, 3, 4))) static int fmt(char *out, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int r = vsnprintf(out, n, f, ap);
    va_end(ap);
    return r;
}

/* Append to the sentence in `out` (cut to its buffer). */
__attribute__((format(printf, 3, 4))) static void cat(char *out, size_t n, const char *f, ...)
{
    size_t len = strlen(out);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, f);
    vsnprintf(out + len, n - len, f, ap);
    va_end(ap);
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* "363 ops (100.0%)" */
static void share(double ops, double total, char *out, size_t n)
{
    char c[32];
    rp__count_text(ops, c, sizeof c);
    fmt(out, n, "%s op%s (%.1f%%)", c, ops == 1 ? "" : "s", pct(ops, total));
}

/* A setting's value, or nothing when the file did not say it. */
static void setting(const char *name, double v, char *out, size_t n)
{
    if (v > 0)
        fmt(out, n, "%s (%.0f)", name, v);
    else
        fmt(out, n, "%s", name);
}

/* A value as a sentence shows it: sizes and counts in decimal, handles and
 * addresses in hex, a parameter or memset value in decimal while small. */
static void value_text(int field, unsigned long long v, char *out, size_t n)
{
    switch (field) {
    case RP_FIELD_LENGTH: case RP_FIELD_GRID: case RP_FIELD_BLOCK: case RP_FIELD_SHMEM:
    case RP_FIELD_BYTES: case RP_FIELD_WIDTH: case RP_FIELD_ELEM: case RP_FIELD_ATTRS:
        fmt(out, n, "%llu", v);
        return;
    case RP_FIELD_PARAM: case RP_FIELD_VALUE:
        if (v < 1000000) {
            fmt(out, n, "%llu", v);
            return;
        }
        break;
    default:
        break;
    }
    fmt(out, n, "0x%llx", v);
}

/* The unit of a field's values, after them ("" for none). */
static const char *unit(int field)
{
    switch (field) {
    case RP_FIELD_BYTES: case RP_FIELD_SHMEM: case RP_FIELD_ELEM: return " bytes";
    case RP_FIELD_WIDTH: return " elements";
    case RP_FIELD_LENGTH: return " ops";
    default: return "";
    }
}

/* What op k of a difference is: "gemv_n_small", "a memset". */
static void op_what(const struct rp__diff *d, char *out, size_t n)
{
    if (d->kernel[0])
        rp__name_short(d->kernel, out, n, 48);
    else
        fmt(out, n, "a %s", d->kind[0] ? d->kind : "copy or memset");
}

/* The field in words: "grid.x", "parameter 3", "width (elements)". */
static void field_words(int field, unsigned index, unsigned at, char *out, size_t n)
{
    switch (field) {
    case RP_FIELD_PARAM:
        if (index == 255)
            fmt(out, n, "parameter bytes at offset %u", at);
        else if (at)
            fmt(out, n, "parameter %u (bytes %u-%u)", index, at, at + 7);
        else
            fmt(out, n, "parameter %u", index);
        return;
    case RP_FIELD_DST: fmt(out, n, "destination"); return;
    case RP_FIELD_SRC: fmt(out, n, "source"); return;
    case RP_FIELD_HOST: fmt(out, n, "host address"); return;
    case RP_FIELD_BYTES: fmt(out, n, "size"); return;
    case RP_FIELD_WIDTH: fmt(out, n, "width"); return;
    case RP_FIELD_ELEM: fmt(out, n, "element size"); return;
    case RP_FIELD_SHMEM: fmt(out, n, "dynamic shared memory"); return;
    case RP_FIELD_ENTRY: fmt(out, n, "entry point variant"); return;
    case RP_FIELD_ATTRS: fmt(out, n, "launch attributes"); return;
    default: fmt(out, n, "%s", rp__field_key(field, index)); return;
    }
}

void rp__diff_describe(const struct rp__diff *d, char *out, size_t n)
{
    char what[64], fw[64], a[32], b[32];
    switch (d->field) {
    case RP_FIELD_NONE:
        fmt(out, n, "the program ended the run (a synchronization or another boundary) before "
            "op %u", d->op);
        return;
    case RP_FIELD_LENGTH:
        fmt(out, n, "the number of ops %llu -> %llu", d->had, d->got);
        return;
    case RP_FIELD_KIND:
        fmt(out, n, "op %u: a %s -> a %s", d->op, d->kind[0] ? d->kind : "?",
                 d->got_kind[0] ? d->got_kind : "?");
        return;
    case RP_FIELD_FUNCTION:
        if (d->kernel[0] && d->got_kernel[0]) {
            char pair[2 * RP_NAME_LEN];
            rp__name_pair(d->kernel, d->got_kernel, pair, sizeof pair, 60);
            fmt(out, n, "op %u %s", d->op, pair);
        } else {
            fmt(out, n, "op %u: another kernel", d->op);
        }
        return;
    default:
        op_what(d, what, sizeof what);
        field_words(d->field, d->index, d->at, fw, sizeof fw);
        value_text(d->field, d->had, a, sizeof a);
        value_text(d->field, d->got, b, sizeof b);
        fmt(out, n, d->kernel[0] ? "op %u %s: %s %s -> %s%s" : "op %u (%s): %s %s -> %s%s", d->op,
            what, fw, a, b, unit(d->field));
        return;
    }
}

/* How many of the newest differences (newest first) are at the newest's op
 * and field, of the same op (its kind, and its kernel but where the kernel
 * is what changes). */
static unsigned same_place(const struct rp__diff *d, unsigned n)
{
    unsigned k = n ? 1 : 0;
    while (k < n && d[k].op == d[0].op && d[k].field == d[0].field &&
           d[k].index == d[0].index && !strcmp(d[k].kind, d[0].kind) &&
           (d[0].field == RP_FIELD_FUNCTION || !strcmp(d[k].kernel, d[0].kernel)))
        k++;
    return k;
}

/* 1 when a numeric field grows every time (newest first: each newer value
 * above the one before it), -1 when it shrinks, 0 otherwise. */
static int trend(const struct rp__diff *d, unsigned n)
{
    switch (d[0].field) {
    case RP_FIELD_LENGTH: case RP_FIELD_GRID: case RP_FIELD_BLOCK: case RP_FIELD_SHMEM:
    case RP_FIELD_BYTES: case RP_FIELD_WIDTH: case RP_FIELD_PARAM: case RP_FIELD_VALUE:
        break;
    default:
        return 0;
    }
    int up = 1, down = 1;
    for (unsigned i = 0; i < n; i++) {
        up &= d[i].got > d[i].had;
        down &= d[i].got < d[i].had;
        if (i + 1 < n) {
            up &= d[i].got > d[i + 1].got;
            down &= d[i].got < d[i + 1].got;
        }
    }
    return up ? 1 : down ? -1 : 0;
}

/* What keeps changing, as a sentence's subject and verb: "the width of op
 * 1 (a memset) grows every time (the last time 2176 -> 2304)". */
static void change_phrase(const struct rp__diff *d, int tr, char *out, size_t n)
{
    const char *verb = tr > 0 ? "grows" : tr < 0 ? "shrinks" : "changes";
    char what[64], fw[64], a[32], b[32];
    value_text(d->field, d->had, a, sizeof a);
    value_text(d->field, d->got, b, sizeof b);
    switch (d->field) {
    case RP_FIELD_LENGTH:
        fmt(out, n, "the number of ops in a run %s every time (the last time %s -> %s)",
                 verb, a, b);
        return;
    case RP_FIELD_FUNCTION: {
        char pair[2 * RP_NAME_LEN];
        if (d->kernel[0] && d->got_kernel[0])
            rp__name_pair(d->kernel, d->got_kernel, pair, sizeof pair, 60);
        else
            fmt(pair, sizeof pair, "another kernel");
        fmt(out, n, "the kernel of op %u switches every time (the last time %s)", d->op,
                 pair);
        return;
    }
    case RP_FIELD_KIND:
        fmt(out, n, "op %u is another kind of operation every time (the last time a %s -> "
                 "a %s)", d->op, d->kind, d->got_kind);
        return;
    case RP_FIELD_STREAM: case RP_FIELD_EVENT: case RP_FIELD_CONTEXT:
        op_what(d, what, sizeof what);
        fmt(out, n, "op %u (%s) is on another %s every time", d->op, what,
                 rp__field_key(d->field, 0));
        return;
    default:
        op_what(d, what, sizeof what);
        field_words(d->field, d->index, d->at, fw, sizeof fw);
        fmt(out, n, "the %s of op %u (%s) %s every time (the last time %s -> %s%s)", fw,
                 d->op, what, verb, a, b, unit(d->field));
        return;
    }
}

/* Why no graph update can follow a change of this field. */
static const char *why_structure(const struct rp__diff *d)
{
    switch (d->field) {
    case RP_FIELD_WIDTH: case RP_FIELD_ELEM:
        return "a memset's width is part of a graph's structure (the driver allows changing "
               "it only \"opportunistically\")";
    case RP_FIELD_FUNCTION:
        return "a kernel that switches function is set on its graph node only for up to a "
               "quarter of a run's kernels, a few functions each, where its node carries no "
               "launch attribute and the driver accepts it";
    case RP_FIELD_BYTES:
        return "a copy from pageable memory is staged at the size it was captured with (and an "
               "empty copy makes no node)";
    case RP_FIELD_STREAM:
        return "the stream of each op is part of a graph's structure";
    case RP_FIELD_EVENT:
        return "which ops of a run name the same event is part of its structure (not the "
               "handles: a fresh event each time is the same run)";
    default:
        return "no graph update can follow that";
    }
}

/* The sequence whose divergences sent the most ops eager (most flushed
 * ops; where a file does not say, most divergences), or NULL. */
static const struct rp__seq_fact *most_flushed(const struct rp__run_fact *f)
{
    const struct rp__seq_fact *best = NULL;
    for (size_t i = 0; i < f->nseqs; i++) {
        const struct rp__seq_fact *s = &f->seqs[i];
        double w = s->flushed_ops >= 0 ? s->flushed_ops : s->divergences;
        double bw = !best ? -1 : best->flushed_ops >= 0 ? best->flushed_ops : best->divergences;
        if (s->ndivs && w > bw)
            best = s;
    }
    return best;
}

/* Of a sequence's divergences, the newest after which ops ran eagerly, or
 * the newest. */
static const struct rp__diff *telling_div(const struct rp__seq_fact *s)
{
    for (unsigned i = 0; i < s->ndivs; i++)
        if (s->divs[i].ended)
            return &s->divs[i];
    return s->ndivs ? &s->divs[0] : NULL;
}

/* What kind of divergence `d` is, in parentheses after it ("" for a
 * boundary, which its description says). */
static const char *div_class(const struct rp__diff *d)
{
    switch (d->why) {
    case RP_DIV_BOUNDARY:
        return "";
    case RP_DIV_OTHER_VALUES:
        return " (the same operation with other values, which its graph did not update: a "
               "field that keeps changing becomes an update)";
    default:
        return " (another operation there: a structure learnt on its own)";
    }
}

/* The sentence for the ops that warmed up, from what the new structures show. */
static void warming_sentence(const struct rp__run_fact *f, const char *sh, char *out, size_t n)
{
    double w = f->eager[RP_EAGER_WARMING_UP];
    char wu[48], ns[32], sg[32];
    setting("REPRISE_WARMUP", f->warmup, wu, sizeof wu);
    rp__count_text(f->new_shapes, ns, sizeof ns);
    rp__count_text(f->segments, sg, sizeof sg);
    int changing = rp__shapes_change(f);
    unsigned same = same_place(f->shapes, f->nshapes);
    if (changing && same >= 3) {
        char what[600];
        change_phrase(&f->shapes[0], trend(f->shapes, same), what, sizeof what);
        fmt(out, n, "%s ran eagerly because %s: %s of %s runs of ops had a structure not "
                 "seen before, and %s; a graph stands in only for a structure that comes back",
                 sh, what, ns, sg, why_structure(&f->shapes[0]));
    } else if (changing) {
        char d[600];
        rp__diff_describe(&f->shapes[0], d, sizeof d);
        fmt(out, n, "%s ran eagerly because runs of ops came with structures not seen before "
                 "(%s of %s runs; the last change: %s): each new structure runs eagerly until "
                 "it has come back %s times", sh, ns, sg, d, wu);
    } else if (f->replayed <= 0 && pct(w, f->ops) >= 50) {
        fmt(out, n, "%s ran eagerly because no run of ops came back %s times: %s runs, %s "
                 "of them of a structure not seen before", sh, wu, sg, ns);
    } else {
        fmt(out, n, "%s ran eagerly while reprise learnt: a run of ops between "
                 "synchronizations runs eagerly until it has come back %s times (the "
                 "occurrence captured included), and so does work that never comes back "
                 "(setup, the last step)", sh, wu);
    }
}

static void diverged_sentence(const struct rp__run_fact *f, const char *sh, char *out, size_t n)
{
    const struct rp__seq_fact *s = most_flushed(f);
    const struct rp__diff *d = s ? telling_div(s) : NULL;
    if (!d) {
        fmt(out, n, "%s ran eagerly because %s", sh, rp__reasons[RP_EAGER_DIVERGED].meaning);
        return;
    }
    char k[64], desc[600];
    if (s->first_kernel[0])
        rp__name_short(s->first_kernel, k, sizeof k, 48);
    else
        fmt(k, sizeof k, "copies and memsets");
    rp__diff_describe(d, desc, sizeof desc);
    fmt(out, n, "%s ran eagerly after diverging: they were held while they matched "
             "sequence %u (%.0f ops from %s), then issued one by one when the run went another "
             "way; the last time: %s%s", sh, s->id, s->ops, k, desc, div_class(d));
}

/* The sentence for reason `r`. */
static void reason_sentence(const struct rp__run_fact *f, int r, char *out, size_t n)
{
    char sh[64], lim[64];
    share(f->eager[r], f->ops, sh, sizeof sh);
    switch (r) {
    case RP_EAGER_WARMING_UP:
        warming_sentence(f, sh, out, n);
        return;
    case RP_EAGER_DIVERGED:
        diverged_sentence(f, sh, out, n);
        return;
    case RP_EAGER_SHORT:
        setting("REPRISE_MIN_OPS", f->min_ops, lim, sizeof lim);
        fmt(out, n, "%s ran eagerly in runs of fewer than %s ops between "
                 "synchronizations: a graph launch does not pay for so few ops", sh, lim);
        return;
    case RP_EAGER_BOUND: {
        fmt(out, n, "%s ran eagerly because a bound was hit:", sh);
        for (int b = 0, k = 0; b < RP_BOUND_COUNT; b++) {
            if (f->hits[b] <= 0)
                continue;
            const char *name = rp__bounds[b].option ? rp__bounds[b].option : rp__bounds[b].key;
            if (f->limits[b] > 0)
                cat(out, n, "%s %s (%.0f)", k ? "," : "", name, f->limits[b]);
            else
                cat(out, n, "%s %s", k ? "," : "", name);
            k++;
        }
        return;
    }
    case RP_EAGER_BACKING_OFF:
        if (f->evictions > 0 || f->backoffs > 0)
            fmt(out, n, "%s ran eagerly while their run waited longer before a capture: "
                     "graphs were replaced before they paid off (%.0f back-off%s, %.0f "
                     "eviction%s to stay within REPRISE_MAX_GRAPHS)", sh, f->backoffs,
                     f->backoffs == 1 ? "" : "s", f->evictions, f->evictions == 1 ? "" : "s");
        else
            fmt(out, n, "%s ran eagerly because %s", sh, rp__reasons[r].meaning);
        return;
    case RP_EAGER_CAPTURE_FAILED:
    case RP_EAGER_RESTING: {
        /* How often it happened, in the sentence's words. */
        int failed = r == RP_EAGER_CAPTURE_FAILED;
        double times = failed ? f->capture_failures : f->rests;
        fmt(out, n, failed ? "%s ran eagerly because the capture of their run failed (%.0f %s) "
                             "and reprise waits longer before trying again; REPRISE_LOG=info "
                             "gives the driver's error"
                           : "%s ran eagerly while their stream rested from learning (%.0f %s): "
                             "nothing it learnt had been replayed in its last REPRISE_PATIENCE "
                             "ops; resting caps what learning costs where nothing comes back",
            sh, times, failed ? (times == 1 ? "failure" : "failures")
                              : (times == 1 ? "time" : "times"));
        return;
    }
    default:
        fmt(out, n, "%s ran eagerly because %s", sh, rp__reasons[r].meaning);
        return;
    }
}

int rp__explain_eager(const struct rp__run_fact *f, struct rp__line *out, int max)
{
    int n = 0;
    for (int r = 0; r < RP_EAGER_REASON_COUNT && n < max; r++) {
        if (f->eager[r] <= 0)
            continue;
        out[n].weight = f->eager[r];
        out[n].reason = r;
        reason_sentence(f, r, out[n].text, sizeof out[n].text);
        n++;
    }
    for (int i = 1; i < n; i++) /* most ops first (a stable insertion sort) */
        for (int j = i; j > 0 && out[j].weight > out[j - 1].weight; j--) {
            struct rp__line t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* The volatile fields of a sequence, grouped by op: "op 2 (a dtod copy)
 * destination, source, size; op 5 (gemv_n_large) parameter 1, parameter 3". */
static void vols_text(const struct rp__seq_fact *s, char *out, size_t n)
{
    out[0] = '\0';
    for (unsigned i = 0; i < s->nvols; i++) {
        const struct rp__vol_fact *v = &s->vols[i];
        char fw[64];
        field_words(v->field, v->index, 0, fw, sizeof fw);
        if (v->field == RP_FIELD_BYTES)
            fmt(fw, sizeof fw, "size");
        if (i && s->vols[i - 1].op == v->op) {
            cat(out, n, ", %s", fw);
        } else {
            char what[64];
            if (v->kernel && v->kernel[0])
                rp__name_short(v->kernel, what, sizeof what, 48);
            else
                fmt(what, sizeof what, "a %s", v->kind && v->kind[0] ? v->kind : "copy");
            cat(out, n, "%sop %u (%s) %s", i ? "; " : "", v->op, what, fw);
        }
    }
}

int rp__explain_seq(const struct rp__seq_fact *s, struct rp__line *out, int max)
{
    int n = 0;
    if (max <= 0)
        return 0;
    char k[64], occ[32], rep[32];
    if (s->first_kernel && s->first_kernel[0])
        rp__name_short(s->first_kernel, k, sizeof k, 48);
    else
        fmt(k, sizeof k, "copies and memsets");
    rp__count_text(s->occurrences, occ, sizeof occ);
    rp__count_text(s->replays, rep, sizeof rep);
    double before = s->captured_at, with = s->occurrences - s->replays - s->captured_at;
    fmt(out[n].text, sizeof out[n].text,
                     "sequence %u: %.0f ops from %s%s; %s occurrence%s: %s replayed, %.0f ran "
                     "eagerly before its graph (warming up, the occurrence captured included)",
                     s->id, s->ops, k, s->by_period ? " (a step found by its stream's period)" : "",
                     occ, s->occurrences == 1 ? "" : "s", rep, before);
    if (with > 0)
        cat(out[n].text, sizeof out[n].text, ", %.0f ran eagerly with "
                 "its graph there (busy, too many updates, or cut apart)", with);
    out[n].weight = (before + (with > 0 ? with : 0)) * s->ops;
    out[n++].reason = -1;
    if (s->divergences > 0 && n < max) {
        char dv[32];
        rp__count_text(s->divergences, dv, sizeof dv);
        fmt(out[n].text, sizeof out[n].text, "%s run%s began like it and went another "
                     "way", dv, s->divergences == 1 ? "" : "s");
        if (s->flushes > 0)
            cat(out[n].text, sizeof out[n].text, "; %.0f of them "
                          "then ran eagerly (%.0f ops held, then issued one by one), the others "
                          "went on as another sequence", s->flushes, s->flushed_ops);
        else if (s->flushes == 0)
            cat(out[n].text, sizeof out[n].text, "; none of them "
                          "ran eagerly for it: each went on as another sequence");
        if (s->ndivs) {
            char d[600];
            rp__diff_describe(&s->divs[0], d, sizeof d);
            cat(out[n].text, sizeof out[n].text, "; the last: %s%s", d,
                     div_class(&s->divs[0]));
        }
        out[n].weight = s->flushed_ops > 0 ? s->flushed_ops : 0;
        out[n++].reason = RP_EAGER_DIVERGED;
    }
    if (s->ndivs > 1 && n < max) {
        fmt(out[n].text, sizeof out[n].text, "before that:");
        char prev[600] = "", d[600];
        unsigned times = 0, said = 0;
        for (unsigned i = 1; i <= s->ndivs; i++) {
            if (i < s->ndivs) {
                rp__diff_describe(&s->divs[i], d, sizeof d);
                if (!strcmp(d, prev)) { /* the same again: said once, counted */
                    times++;
                    continue;
                }
            }
            if (prev[0])
                cat(out[n].text, sizeof out[n].text, "%s %s%s", said++ ? ";" : "", prev,
                    times == 2 ? " (twice)" : times > 2 ? " (3 times)" : "");
            if (i < s->ndivs)
                memcpy(prev, d, sizeof prev);
            times = 1;
        }
        out[n].weight = 0;
        out[n++].reason = RP_EAGER_DIVERGED;
    }
    if (s->nvols && n < max) {
        char v[RP_LINE_LEN - 40];
        vols_text(s, v, sizeof v);
        fmt(out[n].text, sizeof out[n].text, "updated before each replay: %s", v);
        out[n].weight = 0;
        out[n++].reason = -1;
    }
    return n;
}

struct cand {
    double weight; /* ops concerned, for the order */
    char text[RP_ADVICE_LEN];
};

/* The advice a structure that changes every time calls for, by the field
 * that changes; 0 when no change to the program is known to help. */
static int shape_advice(const struct rp__diff *d, char *out, size_t n)
{
    switch (d->field) {
    case RP_FIELD_WIDTH:
        fmt(out, n, "the memset at op %u changes its width every time: with one width "
                 "(its largest), its run could be one graph with updates (grids, sizes and "
                 "addresses are updated before a replay; a memset's width is not)", d->op);
        return 1;
    case RP_FIELD_BYTES:
        if (!d->structure)
            return 0;
        fmt(out, n, "the copy at op %u changes its size every time from pageable memory: "
                 "from pinned memory (cuMemHostAlloc, pin_memory()) its size is updated in a "
                 "graph instead", d->op);
        return 1;
    case RP_FIELD_STREAM:
        fmt(out, n, "op %u goes to a new stream every time: with one stream reused, its "
                 "runs can repeat", d->op);
        return 1;
    case RP_FIELD_EVENT:
        fmt(out, n, "op %u uses another event every time: with events reused, its runs "
                 "can repeat", d->op);
        return 1;
    default:
        return 0;
    }
}

int rp__advice(const struct rp__run_fact *f, char out[RP_ADVICE_MAX][RP_ADVICE_LEN])
{
    struct cand c[RP_BOUND_COUNT + 9];
    int nc = 0, nbounds = 0;
    double eb = f->eager[RP_EAGER_BOUND];
    for (int b = 0; b < RP_BOUND_COUNT; b++)
        nbounds += f->hits[b] > 0;
    /* A bound hit: the ops it sent eager are known when it is the only bound
     * hit (ops_eager.bound_hit is not split by bound). */
    for (int b = 0; b < RP_BOUND_COUNT; b++) {
        if (f->hits[b] <= 0)
            continue;
        const char *name = rp__bounds[b].option ? rp__bounds[b].option : "a fixed bound";
        if (nbounds == 1 && eb > 0)
            fmt(c[nc].text, sizeof c[nc].text, "%s (hit %.0f time%s) sent %.0f ops "
                     "(%.1f%%) eager: %s", name, f->hits[b], f->hits[b] == 1 ? "" : "s", eb,
                     pct(eb, f->ops), rp__bounds[b].todo);
        else
            fmt(c[nc].text, sizeof c[nc].text, "%s was hit %.0f time%s: %s", name,
                     f->hits[b], f->hits[b] == 1 ? "" : "s", rp__bounds[b].todo);
        c[nc++].weight = nbounds == 1 ? eb : f->hits[b];
    }
    double ep = f->eager[RP_EAGER_PROGRAM_CAPTURE];
    if (f->program_captures > 0) {
        fmt(c[nc].text, sizeof c[nc].text,
                 "the program made %.0f stream capture%s of its own; reprise stepped aside "
                 "meanwhile (%.0f ops): where the program's own graphs already cover its loop, "
                 "reprise adds nothing, and it can run without it",
                 f->program_captures, f->program_captures == 1 ? "" : "s", ep);
        c[nc++].weight = ep > 0 ? ep : 1;
    }
    double enl = f->eager[RP_EAGER_NO_LAYOUT];
    if (enl > 0 && pct(enl, f->ops) >= 1.0) {
        fmt(c[nc].text, sizeof c[nc].text,
                 "%.0f ops (%.1f%%) were launches of kernels whose parameter layout the driver "
                 "would not give (cuFuncGetParamInfo needs a CUDA 12.4 driver or newer); "
                 "REPRISE_LOG=info names the kernels", enl, pct(enl, f->ops));
        c[nc++].weight = enl;
    }
    if (f->too_many_updates > 0 && f->hits[RP_BOUND_UPDATES] <= 0) {
        fmt(c[nc].text, sizeof c[nc].text,
                 "%.0f replays were skipped because they needed more than REPRISE_MAX_UPDATES "
                 "node updates: %s", f->too_many_updates, rp__bounds[RP_BOUND_UPDATES].todo);
        c[nc++].weight = f->too_many_updates;
    }
    double ew = f->eager[RP_EAGER_WARMING_UP];
    int changing = rp__shapes_change(f);
    if (changing && same_place(f->shapes, f->nshapes) >= 3 &&
        shape_advice(&f->shapes[0], c[nc].text, sizeof c[nc].text))
        c[nc++].weight = f->new_shape_ops;
    /* Runs that came back, but not often enough: the run was too short for
     * the warmup (what repeated is not a new structure each time). */
    double repeats = f->segments - f->new_shapes;
    if (!changing && f->replayed <= 0 && f->graphs <= 0 && repeats > 0 &&
        pct(ew, f->ops) >= 50.0) {
        char wu[48];
        setting("REPRISE_WARMUP", f->warmup, wu, sizeof wu);
        fmt(c[nc].text, sizeof c[nc].text,
                 "nothing was replayed: %.0f run%s of ops came back, but not %s times with "
                 "the same shape; a longer run, or a lower --warmup, lets %s be captured",
                 repeats, repeats == 1 ? "" : "s", wu, repeats == 1 ? "it" : "them");
        c[nc++].weight = ew;
    }
    double es = f->eager[RP_EAGER_SHORT];
    if (pct(es, f->ops) >= 25.0) {
        char mo[48];
        setting("REPRISE_MIN_OPS", f->min_ops, mo, sizeof mo);
        fmt(c[nc].text, sizeof c[nc].text,
                 "%.1f%% of the ops were in runs of fewer than %s ops between synchronizations: "
                 "fewer synchronizations in the loop (each cuStreamSynchronize, or a read-back "
                 "such as .item(), ends a run) give reprise longer runs to capture",
                 pct(es, f->ops), mo);
        c[nc++].weight = es;
    }
    double eo = f->eager[RP_EAGER_BACKING_OFF];
    if (f->evictions > 0 && pct(eo, f->ops) >= 10.0 && f->hits[RP_BOUND_GRAPHS] <= 0) {
        fmt(c[nc].text, sizeof c[nc].text,
                 "%.0f graphs were evicted to stay within REPRISE_MAX_GRAPHS, and their runs "
                 "waited longer before a capture (%.1f%% of the ops): raise --max-graphs",
                 f->evictions, pct(eo, f->ops));
        c[nc++].weight = eo;
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
        fmt(out[i], RP_ADVICE_LEN, "%s", c[i].text);
    return n;
}
