/* fast.c - the images the matcher's fast path (match.h) compares a launch
 * with: per kernel op of a sequence, what a launch must name, and its
 * arguments' values when every one is 4 or 8 bytes; and, for a sequence
 * with volatile fields, where each matched launch's values go in the
 * stream's arena. Made once, when the matcher first meets the sequence. */
#include "match.h"

#include <stdlib.h>
#include <string.h>

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

int rp__fast_params(const rp_fast *fo, void **kp, const uint8_t *seqp)
{
    return rp__fast_params_in(fo, kp, seqp);
}

/* Fill op k's comparisons: its parameters but those of `vm`. */
static void fill_cmp(rp_seq *s, size_t k, uint64_t vm)
{
    const rp_op *op = &s->det->ops[k];
    const rp_param_layout *L = s->lay[k];
    rp_fast *f = &s->match.fast[k];
    uint32_t n = 0;
    /* Three passes: the 8-byte parameters, the 4-byte ones, the rest (each
     * compared by its own loop, rp__fast_params). */
    for (int pass = 0; pass < 3; pass++) {
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t size = L->size[j];
            if ((j < RP_VOL_MAX_PARAMS && (vm >> j & 1)) ||
                (pass == 0 ? size != 8 : pass == 1 ? size != 4 : size == 4 || size == 8))
                continue;
            rp_fast_cmp *c = &f->cmp[n++];
            *c = (rp_fast_cmp){(uint16_t)j, (uint16_t)size, L->off[j], 0};
            if (size == 8) {
                memcpy(&c->val, op->params + L->off[j], 8);
            } else if (size == 4) {
                uint32_t u;
                memcpy(&u, op->params + L->off[j], 4);
                c->val = u;
            }
        }
        if (pass == 0)
            f->n8 = n;
        else if (pass == 1)
            f->n4 = n - f->n8;
    }
    f->ncmp = n;
    f->vm = vm;
}

void rp__fast_remask(rp_seq *s, size_t k, uint64_t vm)
{
    fill_cmp(s, k, vm);
}

void rp__match_adopt(rp_seq *s)
{
    if (s->match.tried)
        return;
    s->match.tried = 1;
    const rp_det_entry *e = s->det;
    if (!s->lay)
        return; /* every launch takes the general path */
    size_t ncmp = 0;
    for (size_t i = 0; i < e->n; i++)
        if (s->lay[i])
            ncmp += s->lay[i]->n;
    size_t fast_bytes = align8(e->n * sizeof(rp_fast));
    size_t cmp_bytes = ncmp * sizeof(rp_fast_cmp);
    size_t vals_bytes = s->vmask ? 0 : ncmp * sizeof(uint64_t);
    size_t poff_bytes = s->vmask ? e->n * sizeof(uint32_t) : 0;
    uint8_t *block = rp__calloc(1, fast_bytes + cmp_bytes + vals_bytes + poff_bytes);
    if (!block)
        return;
    s->match.block = block;
    s->match.fast = (rp_fast *)(void *)block;
    rp_fast_cmp *cmp = (rp_fast_cmp *)(void *)(block + fast_bytes);
    uint64_t *vals = (uint64_t *)(void *)(block + fast_bytes + cmp_bytes);
    for (size_t i = 0; i < e->n; i++) {
        const rp_op *op = &e->ops[i];
        const rp_param_layout *L = s->lay[i];
        rp_fast *f = &s->match.fast[i];
        if (op->kind != RP_OP_KERNEL || !L || op->nattrs || L->total != op->param_bytes)
            continue; /* f->f NULL: never matched by the fast path */
        f->f = op->func;
        f->stream = op->stream;
        f->tag = rp__fast_tag(op->entry, op->flags & RP_OPF_PTSZ);
        f->nparams = L->n;
        memcpy(f->geometry, op->grid, sizeof f->geometry);
        f->cmp = cmp;
        cmp += L->n;
        fill_cmp(s, i, s->vmask ? s->vmask[i] : 0);
        int words = !s->vmask && L->n <= RP_FAST_PARAMS;
        for (uint32_t j = 0; words && j < L->n; j++)
            words = L->size[j] == 4 || L->size[j] == 8;
        if (!words)
            continue;
        for (uint32_t j = 0; j < L->n; j++) {
            if (L->size[j] == 4) {
                uint32_t u;
                memcpy(&u, op->params + L->off[j], 4);
                vals[j] = u;
                f->size4 |= 1u << j;
            } else {
                memcpy(&vals[j], op->params + L->off[j], 8);
            }
        }
        f->words = 1;
        f->vals = vals;
        vals += L->n;
    }
    if (s->vmask) {
        /* Under the context's lock, but numbers no sequence of any context
         * has had. */
        static _Atomic uint64_t gens;
        s->match.gen = atomic_fetch_add_explicit(&gens, 1, memory_order_relaxed) + 1;
        /* An op's place in the arena: its geometry, then its parameters. */
        s->match.poff = (uint32_t *)(void *)(block + fast_bytes + cmp_bytes + vals_bytes);
        for (size_t i = 0; i < e->n; i++) {
            s->match.poff[i] = (uint32_t)s->match.ptotal;
            s->match.ptotal += RP_ARENA_GEOMETRY + align8(e->ops[i].param_bytes);
        }
    }
}
