/* seqs.c - a context's table of sequences (the ones with a graph), and
 * their report lines, kept after a sequence is dropped. Which sequences are
 * kept, and for how long, is the capture policy's (learn/policy.c); this
 * file only adds, removes and describes them. Runs under the context's
 * lock. */
#include "seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which sequences are the only ones of their home stream to begin with
 * their first op's kernel, one the matcher's fast path can take: for those
 * the fast path may begin a match itself (match.h), the general path
 * finding no other candidate; and the kernels any sequence may begin with
 * (its first op's function and its known forms: rp_ctxstate.first_kernel_bits).
 * Reckoned again whenever a sequence comes or goes, or its first op gets
 * a form; a sequence marked broken since only leaves fewer candidates. */
static void first_unique_update(rp_ctxstate *cs)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        const rp_op *a = &s->det->ops[0];
        if (a->kind == RP_OP_KERNEL)
            bits |= rp__kernel_bit(a->func);
        for (unsigned int f = 0; f < s->nforms; f++)
            if (!s->forms[f].k)
                bits |= rp__kernel_bit(s->forms[f].f);
        const rp_param_layout *L = s->lay ? s->lay[0] : NULL;
        int unique = a->kind == RP_OP_KERNEL && L && !a->nattrs && L->total == a->param_bytes &&
                     !s->fj.multi;
        for (size_t j = 0; unique && j < cs->nseqs; j++) {
            const rp_seq *t = cs->seqs[j];
            const rp_op *b = &t->det->ops[0];
            if (t != s && t->home == s->home && b->kind == RP_OP_KERNEL &&
                rp__seq_form_known(t, 0, a->func))
                unique = 0;
        }
        s->first_unique = unique;
    }
    cs->first_kernel_bits = bits;
}

/* Whether kernel op k's values are told by their version (versions.c):
 * a parameter block larger than a few words, or one that may be another
 * function's. A small one is compared and hashed as it is. */
static int by_version(const rp_seq *s, size_t k)
{
    return (s->vmask[k] & RP_VOL_FUNC) || s->det->ops[k].param_bytes > RP_VER_SMALL;
}

/* What a content's hash covers of op k, a kernel with a small block
 * (RP_VOL_SMALL, whose function is the sequence's: by_version): the words
 * of its block that hold a parameter of its mask, and its geometry when
 * the mask names any of it (rp_vol.hwords, hgeom). Without the sequence's
 * layouts (memory ran out when they were read), all of it. */
static void small_plan(const rp_seq *s, size_t k, struct rp_vol *e)
{
    uint64_t m = s->vmask[k];
    const rp_param_layout *L = s->lay ? s->lay[k] : NULL;
    uint32_t bytes = s->det->ops[k].param_bytes, words = 0;
    e->hgeom = (m & (RP_VOL_GRID | RP_VOL_BLOCK | RP_VOL_SHMEM)) != 0;
    if (!L || L->total != bytes || bytes > RP_VER_SMALL) {
        e->hgeom = 1;
        words = bytes ? (1u << ((bytes + 7) / 8)) - 1 : 0;
    } else {
        for (uint64_t pm = m & RP_VOL_PARAMS; pm; pm &= pm - 1) {
            uint32_t i = (uint32_t)__builtin_ctzll(pm);
            if (i >= L->n)
                break;
            if (L->size[i]) /* words off / 8 to (off + size - 1) / 8 */
                words |= (2u << (L->off[i] + L->size[i] - 1) / 8) - (1u << L->off[i] / 8);
        }
    }
    e->hwords = (uint8_t)words;
}

/* Whether the sequence's count of unversioned entries is their number in
 * its list (kept where an entry goes so and back: versions.c). */
static inline int fresh_counted(const rp_seq *s, const struct rp_vols *l)
{
    uint32_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->e[i].how == RP_VOL_FRESH;
    return n == s->ex.nfresh;
}

const struct rp_vols *rp__seq_vols(rp_seq *s)
{
    struct rp_vols *l = s->ex.vols;
    if (RP_LIKELY(l && l->widened == s->ex.widened)) {
        HOLDS(fresh_counted(s, l)); /* no op of a content is hashed while it is not 0 (held.h) */
        return l;
    }
    size_t n = s->det->n, m = 0, nptrs = 0, nk = 0;
    for (size_t k = 0; k < n; k++) {
        m += s->vmask[k] != 0;
        if (s->vmask[k] && s->det->ops[k].kind == RP_OP_KERNEL && s->lay && s->lay[k])
            nptrs += s->lay[k]->n, nk++;
    }
    _Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v2) % sizeof(void *) == 0,
                   "a node's parameters, then pointers: both aligned");
    struct rp_vols *nl = rp__malloc(sizeof *nl + m * sizeof nl->e[0] +
                                    nk * sizeof(CUDA_KERNEL_NODE_PARAMS_v2) + nptrs * sizeof(void *));
    if (!nl)
        return NULL;
    uint8_t *pool = (uint8_t *)&nl->e[m];
    nl->widened = s->ex.widened;
    nl->n = 0;
    nl->nkernels = nl->nfunc = 0;
    s->ex.nfresh = 0;
    const struct rp_vol *was = l ? l->e : NULL, *was_end = l ? l->e + l->n : NULL;
    for (size_t k = 0; k < n; k++) {
        int kernel = s->det->ops[k].kind == RP_OP_KERNEL;
        nl->nkernels += kernel;
        nl->nfunc += (s->vmask[k] & RP_VOL_FUNC) != 0;
        if (!s->vmask[k])
            continue;
        uint32_t how = !kernel ? RP_VOL_OTHER : by_version(s, k) ? RP_VOL_VER : RP_VOL_SMALL;
        CUDA_KERNEL_NODE_PARAMS_v2 *np = NULL;
        if (kernel && s->lay && s->lay[k]) {
            np = (CUDA_KERNEL_NODE_PARAMS_v2 *)(void *)pool;
            pool += sizeof *np + s->lay[k]->n * sizeof(void *);
        }
        struct rp_vol *e = &nl->e[nl->n++];
        *e = (struct rp_vol){.k = (uint32_t)k, .how = (uint8_t)how, .np = np};
        if (how == RP_VOL_SMALL)
            small_plan(s, k, e);
        while (was && was < was_end && was->k < k)
            was++;
        if (how == RP_VOL_VER && was && was < was_end && was->k == k &&
            (was->how == RP_VOL_VER || was->how == RP_VOL_FRESH)) {
            /* Told by version before too: what its lookups learnt stays
             * (another op's mask grew), unversioned ones included. */
            e->how = was->how;
            e->fresh = was->fresh, e->again = was->again, e->half = was->half;
            e->at = was->at;
            s->ex.nfresh += e->how == RP_VOL_FRESH;
        }
    }
    free(l);
    s->ex.vols = nl;
    return nl;
}

int rp__seq_add_form(rp_seq *s, size_t k, CUfunction f)
{
    if (rp__seq_form_known(s, k, f))
        return 0;
    if (s->nforms == RP_SEQ_FORMS)
        return -1;
    s->forms[s->nforms++] = (struct rp_form){(uint32_t)k, f};
    if (!k) /* another sequence's first op may no longer be the only one */
        first_unique_update(s->cs);
    return 0;
}

rp_seq *rp__seqs_remove(rp_ctxstate *cs, size_t i)
{
    rp_seq *s = cs->seqs[i];
    cs->seqs[i] = cs->seqs[--cs->nseqs];
    cs->seqs_gone++;
    first_unique_update(cs);
    return s;
}

int rp__seqs_add(rp_ctxstate *cs, rp_seq *s)
{
    if (cs->nseqs == cs->capseqs) {
        size_t cap = cs->capseqs ? 2 * cs->capseqs : 16;
        rp_seq **n = rp__realloc(cs->seqs, cap * sizeof *n);
        if (!n) {
            rp__seq_destroy(s);
            rp__bound_hit(cs, RP_BOUND_MEMORY);
            return -1;
        }
        cs->seqs = n;
        cs->capseqs = cap;
    }
    cs->seqs[cs->nseqs++] = s;
    first_unique_update(cs);
    return 0;
}

/* Append " word" to the fixed buffer `b` unless it is there already (cut
 * when full). */
static void append(char *b, size_t size, const char *word)
{
    size_t n = strlen(b), w = strlen(word);
    for (const char *p = b; (p = strstr(p, word)); p += w)
        if ((p == b || p[-1] == ' ') && (p[w] == ' ' || p[w] == '\0'))
            return;
    if (n + 1 < size)
        snprintf(b + n, size - n, "%s%s", n ? " " : "", word);
}

/* The volatile fields of a sequence, named for the report: a kernel's
 * parameter as name#index, its geometry as name.grid, name.block,
 * name.shmem, its function as name.function; a copy's or memset's field as op<k>.<field>. */
static void describe_volatile(const rp_seq *s, char *b, size_t size)
{
    b[0] = '\0';
    for (size_t k = 0; s->vmask && k < s->det->n; k++) {
        uint64_t m = s->vmask[k];
        const rp_op *op = &s->det->ops[k];
        char w[96];
        const char *name = m && op->kind == RP_OP_KERNEL ? rp__rec_kernel_name(s->cs, op) : NULL;
        for (uint64_t left = m; left; left &= left - 1) { /* its fields, lowest bit first */
            unsigned int i = (unsigned int)__builtin_ctzll(left);
            uint64_t bit = 1ull << i;
            if (op->kind == RP_OP_KERNEL) {
                if (i < RP_VOL_MAX_PARAMS)
                    snprintf(w, sizeof w, "%s#%u", name, i);
                else
                    snprintf(w, sizeof w, "%s.%s", name,
                             bit == RP_VOL_GRID    ? "grid"
                             : bit == RP_VOL_BLOCK ? "block"
                             : bit == RP_VOL_SHMEM ? "shmem"
                                                   : "function");
            } else {
                const char *f = bit == RP_VOL_DST ? "dst"
                                : bit == RP_VOL_HOST ? "host"
                                : bit == RP_VOL_BYTES ? "bytes"
                                : op->kind == RP_OP_MEMSET ? "value" : "src";
                snprintf(w, sizeof w, "op%zu.%s", k, f);
            }
            append(b, size, w);
        }
    }
}

/* The index of kernel name `name` in the line's names, added if new (-1:
 * no room). */
static int vol_name(struct rp__seq_info *o, const char *name, unsigned int *nnames)
{
    for (unsigned int i = 0; i < *nnames; i++)
        if (!strcmp(o->vol_names[i], name))
            return (int)i;
    if (*nnames == RP_INFO_NAMES)
        return -1;
    snprintf(o->vol_names[*nnames], sizeof o->vol_names[0], "%s", name);
    return (int)(*nnames)++;
}

/* The volatile fields as structured entries (a tool reads these; the
 * `volatile` sentence above is cut when long). */
static void list_volatile(const rp_seq *s, struct rp__seq_info *o)
{
    unsigned int nnames = 0;
    o->nvols = 0;
    o->vols_cut = 0;
    for (size_t k = 0; s->vmask && k < s->det->n; k++) {
        const rp_op *op = &s->det->ops[k];
        int name = -1; /* the kernel's name's index, found at its first field */
        for (uint64_t left = s->vmask[k]; left; left &= left - 1) { /* lowest bit first */
            unsigned int i = (unsigned int)__builtin_ctzll(left);
            uint64_t bit = 1ull << i;
            if (o->nvols == RP_INFO_VOLS) {
                o->vols_cut = 1;
                return;
            }
            struct rp__info_vol *v = &o->vols[o->nvols++];
            v->op = (uint32_t)k;
            v->kind = (uint8_t)op->kind;
            v->index = 0;
            v->name = -1;
            if (op->kind == RP_OP_KERNEL) {
                if (name < 0)
                    name = vol_name(o, rp__rec_kernel_name(s->cs, op), &nnames);
                v->name = (int8_t)name;
                v->field = i < RP_VOL_MAX_PARAMS ? RP_FIELD_PARAM
                           : bit == RP_VOL_GRID  ? RP_FIELD_GRID
                           : bit == RP_VOL_BLOCK ? RP_FIELD_BLOCK
                           : bit == RP_VOL_SHMEM ? RP_FIELD_SHMEM
                                                 : RP_FIELD_FUNCTION;
                v->index = (uint8_t)(i < RP_VOL_MAX_PARAMS ? i : RP_DIM_ALL);
            } else {
                v->field = bit == RP_VOL_DST     ? RP_FIELD_DST
                           : bit == RP_VOL_HOST  ? RP_FIELD_HOST
                           : bit == RP_VOL_BYTES ? RP_FIELD_BYTES
                           : op->kind == RP_OP_MEMSET ? RP_FIELD_VALUE
                                                      : RP_FIELD_SRC;
            }
        }
    }
}

/* The last divergences with names, newest first. */
static void list_divs(const rp_seq *s, struct rp__seq_info *o)
{
    o->flushes = s->flushes;
    o->flushed_ops = s->flushed_ops;
    o->ndivs = 0;
    for (uint64_t i = 0; i < s->ndivs && i < RP_SEQ_DIVS; i++) {
        const struct rp_seq_div *d = &s->divs[(s->ndivs - 1 - i) % RP_SEQ_DIVS];
        struct rp__diff *x = &o->divs[o->ndivs++];
        memset(x, 0, sizeof *x);
        x->why = d->why;
        x->ended = d->ended;
        x->op = d->op;
        x->field = d->why == RP_DIV_BOUNDARY ? RP_FIELD_NONE : d->d.field;
        x->index = d->d.index;
        x->at = d->d.at;
        x->structure = d->d.structure;
        x->had = d->d.had;
        x->got = d->d.got;
        if (d->op < s->det->n) {
            const rp_op *op = &s->det->ops[d->op];
            snprintf(x->kind, sizeof x->kind, "%s", rp__op_kind_name(op->kind));
            snprintf(x->kernel, sizeof x->kernel, "%s", rp__rec_kernel_name(s->cs, op));
        }
        if (x->field == RP_FIELD_KIND)
            snprintf(x->got_kind, sizeof x->got_kind, "%s", rp__op_kind_name((rp_op_kind)d->d.got));
        if (d->got_name)
            snprintf(x->got_kernel, sizeof x->got_kernel, "%s", d->got_name);
    }
}

void rp__seq_info(const rp_seq *s, struct rp__seq_info *o)
{
    o->id = s->id;
    o->ops = s->det->n;
    o->occurrences = s->det->seen + s->replays;
    o->replays = s->replays;
    o->divergences = s->divergences;
    o->updates = s->ex.updates;
    o->captured_at = s->captured_at;
    o->by_period = s->by_period;
    o->first_kernels[0] = '\0';
    for (size_t k = 0, named = 0; k < s->det->n && named < 3; k++) {
        if (s->det->ops[k].kind != RP_OP_KERNEL)
            continue;
        size_t n = strlen(o->first_kernels);
        snprintf(o->first_kernels + n, sizeof o->first_kernels - n, "%s%s", named ? "," : "",
                 rp__rec_kernel_name(s->cs, &s->det->ops[k]));
        named++;
    }
    o->first_kernel[0] = '\0';
    o->div_op = s->div_op;
    o->div_why = s->div_why;
    o->div_kernel[0] = '\0';
    if (s->div_why && s->div_op < s->det->n)
        snprintf(o->div_kernel, sizeof o->div_kernel, "%s",
                 rp__rec_kernel_name(s->cs, &s->det->ops[s->div_op]));
    for (size_t k = 0; k < s->det->n; k++) {
        if (s->det->ops[k].kind == RP_OP_KERNEL) {
            snprintf(o->first_kernel, sizeof o->first_kernel, "%s",
                     rp__rec_kernel_name(s->cs, &s->det->ops[k]));
            break;
        }
    }
    describe_volatile(s, o->volatile_fields, sizeof o->volatile_fields);
    list_volatile(s, o);
    list_divs(s, o);
    o->variants = 1;
    const rp_ctxstate *cs = s->cs;
    for (size_t i = 0; i < cs->nseqs; i++) {
        const rp_seq *t = cs->seqs[i];
        if (t == s || t->det->n != s->det->n)
            continue;
        size_t k = 0;
        while (k < s->det->n && rp__op_same_structure(&t->det->ops[k], &s->det->ops[k]))
            k++;
        o->variants += k == s->det->n;
    }
}

void rp__seq_retire(const rp_seq *s)
{
    pthread_mutex_lock(&rp__eng.retired_lock);
    if (rp__eng.nretired == RP_MAX_RETIRED) {
        memmove(rp__eng.retired, rp__eng.retired + 1,
                (RP_MAX_RETIRED - 1) * sizeof rp__eng.retired[0]);
        rp__eng.nretired--;
    }
    rp__seq_info(s, &rp__eng.retired[rp__eng.nretired++]);
    pthread_mutex_unlock(&rp__eng.retired_lock);
}
