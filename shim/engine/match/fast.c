/* fast.c - the images the matcher's fast path (match.h) compares a launch
 * with: per kernel op of a sequence, what a launch must name, and its
 * arguments' values when every one is 4 or 8 bytes; and, for a sequence
 * with volatile fields, where each matched launch's values go in the
 * stream's arena. Made once, when the matcher first meets the sequence.
 * Then the fast path's out-of-line parts: the arena, a launch compared
 * outside its op's volatile fields, the first op of a match, and several
 * candidates matched at once. */
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
     * compared by its own loop, rp__fast_params); a fourth lists those of
     * the mask (arena_params_in). */
    for (int pass = 0; pass < 4; pass++) {
        for (uint32_t j = 0; j < L->n; j++) {
            uint32_t size = L->size[j];
            if (((j < RP_VOL_MAX_PARAMS && (vm >> j & 1)) != (pass == 3)) ||
                (pass == 0   ? size != 8
                 : pass == 1 ? size != 4
                             : pass == 2 && (size == 4 || size == 8)))
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
        else if (pass == 2)
            f->ncmp = n;
    }
    f->nvol = n - f->ncmp;
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

/* The fast path at op k of a candidate with volatile fields (op k's may be
 * none): the launch must equal the sequence's op outside them (as
 * rp__op_match_masked says of records), compared by its image (fast.c)
 * (masked_same: nothing written). For the borrowed sequence, its geometry
 * and volatile parameters then go to the stream's arena, which holds the
 * sequence's bytes (padding zeroed) everywhere else (arena_fill): the
 * update, or, if it is flushed, its record's values (write_down)
 * (match_masked). Return 0 when it does not match. */
static inline __attribute__((always_inline)) int masked_same(const rp_stream *st, rp_seq *s,
                                                              size_t k, const rp_launch *l)
{
    const rp_op *want = &s->det->ops[k];
    uint64_t m = s->vmask[k];
    rp_fast *fo = &s->match.fast[k]; /* the caller saw its function */
    if (RP_UNLIKELY(fo->vm != m))
        rp__fast_remask(s, k, m);
    if (!(m & (RP_VOL_GRID | RP_VOL_BLOCK | RP_VOL_SHMEM))) {
        if (!rp__geometry_same(want->grid, l->grid))
            return 0;
    } else {
        for (int i = 0; i < 3; i++)
            if ((!(m & RP_VOL_GRID) && want->grid[i] != l->grid[i]) ||
                (!(m & RP_VOL_BLOCK) && want->block[i] != l->block[i]))
                return 0;
        if (!(m & RP_VOL_SHMEM) && want->shmem != l->shmem)
            return 0;
        if (!rp__geometry_valid(l->grid) ||
            (!rp__geometry_within(want->grid, l->grid) && !rp__rec_launch_fits(st->cs, want, want, l->grid)))
            return 0;
    }
    return rp__fast_params_in(fo, l->kp, want->params);
}

/* Op k's volatile parameters copied to the arena (which holds the
 * sequence's values elsewhere: a parameter widened while the launch is
 * deferred was equal to the sequence's). */
static inline __attribute__((always_inline)) void arena_params_in(rp_stream *st, const rp_seq *s,
                                                                  size_t k, const rp_fast *fo,
                                                                  void **kp)
{
    uint8_t *params = rp__arena_of(st, s, k) + RP_ARENA_GEOMETRY;
    for (const rp_fast_cmp *c = fo->cmp + fo->ncmp, *e = c + fo->nvol; c < e; c++)
        rp__param_copy(params + c->off, kp[c->idx], c->size);
}

int rp__masked_params(rp_stream *st, const rp_seq *s, size_t k, const rp_fast *fo, void **kp)
{
    if (!rp__fast_params_in(fo, kp, s->det->ops[k].params))
        return 0;
    arena_params_in(st, s, k, fo, kp);
    return 1;
}

static int match_masked(rp_stream *st, rp_seq *s, size_t k, const rp_launch *l)
{
    if (!masked_same(st, s, k, l))
        return 0;
    memcpy(rp__arena_of(st, s, k), l->grid, 7 * sizeof(unsigned int));
    arena_params_in(st, s, k, &s->match.fast[k], l->kp); /* its image made to the mask */
    return 1;
}

/* Fill the arena with the values of `s`'s ops (their geometry and
 * parameter bytes; a memset's or copy's operands), when they are not there
 * already (arena_room): then a matched launch writes only what may differ
 * (match_masked). */
static __attribute__((noinline)) void arena_fill(rp_stream *st, const rp_seq *s)
{
    const rp_det_entry *e = s->det;
    for (size_t k = 0; k < e->n; k++) {
        uint8_t *a = rp__arena_of(st, s, k);
        if (e->ops[k].kind != RP_OP_KERNEL) {
            rp__arena_put_other(a, &e->ops[k]);
            continue;
        }
        memcpy(a, e->ops[k].grid, 7 * sizeof(unsigned int));
        if (e->ops[k].param_bytes)
            memcpy(a + RP_ARENA_GEOMETRY, e->ops[k].params, e->ops[k].param_bytes);
    }
    st->match.arena.gen = s->match.gen;
    st->match.arena.ops = e->ops;
}

static void arena_swap(rp_stream *st, size_t j)
{
    struct rp_arena a = st->match.arena;
    st->match.arena = st->match.spare[j];
    st->match.spare[j] = a;
}

/* The arena made ready for `s`, which it does not hold (arena_room): a
 * spare that holds `s`'s values already, or, if records written down
 * point into the arena, a spare they do not point into (-1 when they
 * point into every one); then grown and filled as needed. What the others
 * hold stays, marked with its sequence: a stream whose steps take turns
 * between sequences fills none again. */
static __attribute__((noinline)) int arena_ready(rp_stream *st, const rp_seq *s)
{
    struct rp_arena *a = &st->match.arena;
    size_t j = 0;
    while (j < RP_SPARES && (st->match.spare[j].held || !rp__arena_holds(&st->match.spare[j], s)))
        j++;
    if (j == RP_SPARES && a->held) {
        j = 0;
        while (j < RP_SPARES && st->match.spare[j].held)
            j++;
        if (j == RP_SPARES)
            return -1; /* records written down point into every one: the general path */
    }
    if (j < RP_SPARES)
        arena_swap(st, j);
    if (a->cap < s->match.ptotal) {
        uint8_t *p = rp__realloc(a->p, s->match.ptotal);
        if (!p)
            return -1;
        a->p = p;
        a->cap = s->match.ptotal;
    }
    if (a->gen != s->match.gen || a->ops != s->det->ops)
        arena_fill(st, s);
    return 0;
}

/* Room in the stream's arena for sequence `s`, filled with its values (0,
 * or -1 if memory runs out, or if records written down point into every
 * arena and none holds `s`'s values). Only the borrowed sequence's ops
 * point in (rp_stream), and none yet when it is too small for it. */
static inline __attribute__((always_inline)) int arena_room(rp_stream *st, const rp_seq *s)
{
    if (RP_LIKELY(rp__arena_holds(&st->match.arena, s)))
        return 0;
    return arena_ready(st, s);
}

/* Whether candidate `s`'s op k, whose image is `fo`, is launch `l` (the
 * whole of an exact one, the rest outside the volatile fields): nothing is
 * written. */
static inline __attribute__((always_inline)) int cand_same(const rp_stream *st, rp_seq *s,
                                                            const rp_fast *fo, size_t k,
                                                            const rp_launch *l)
{
    return s->vmask ? masked_same(st, s, k, l) : rp__fast_same(fo, *l, s, k);
}

/* Whether candidate `s`'s op k is launch `l`, its values then kept in the
 * arena for a sequence with volatile fields (rp__match_masked). */
static inline __attribute__((always_inline)) int lends(rp_stream *st, rp_seq *s, size_t k,
                                                        const rp_launch *l)
{
    return s->vmask ? rp__match_masked(st, s, k, l) : rp__fast_same(&s->match.fast[k], *l, s, k);
}

/* The first op of a match where the hint's first kernel begins other
 * sequences of the stream too (decoding steps of several lengths): the
 * sequences rp__match_offer would find, each compared by its image, become
 * the candidates in its order (rp__match_take), and the launch is deferred
 * as a borrowed record of the first, as rp__match_several goes on. EAGER
 * (nothing done but the arena's values, which a launch overwrites) where
 * the general path could decide otherwise than the images say: a sequence
 * whose first op has no image for this launch (not adopted yet, another
 * stream or entry point, or another known form of a kernel whose function
 * is volatile); or where the general path would go another way: a matching
 * sequence that would end with this op, more candidates than the list
 * holds. */
static __attribute__((noinline)) enum rp_offer first_several(rp_stream *st, CUstream h,
                                                            const rp_launch *l,
                                                            enum rp__entry entry)
{
    rp_ctxstate *cs = st->cs;
    uint32_t tag = rp__fast_tag(entry, l->ptsz);
    rp_seq *found[RP_MAX_CANDIDATES], *b = NULL;
    size_t n = 0;
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        if (s->broken || s->ctx != cs->ctx || s->home != st->handle)
            continue;
        const rp_op *want = &s->det->ops[0];
        if (want->kind != RP_OP_KERNEL ||
            (want->func != l->f && !(s->vmask && (s->vmask[0] & RP_VOL_FUNC))))
            continue; /* another op or another kernel: its structure differs */
        const rp_fast *fo = rp__fast_image(s, 0, l->f, h, tag);
        if (!fo && want->func != l->f && !rp__seq_form_known(s, 0, l->f))
            continue; /* a form it was not seen with: rp__seq_match says no (op 0 is never widened) */
        if (!fo)
            return RP_OFFER_EAGER;
        if (!cand_same(st, s, fo, 0, l))
            continue;
        /* One that would complete here, one more than the list holds: the
         * general path's. (A fork/join one is taken: the fork/join code
         * reads only event ops of the held list, which are never borrowed.) */
        if (s->det->n < 2 || n == RP_MAX_CANDIDATES)
            return RP_OFFER_EAGER;
        found[n++] = s;
        if (!b || (b->vmask && !s->vmask)) /* cand[0]: the first without updates */
            b = s;
    }
    if (!b || (b->vmask && !rp__match_masked(st, b, 0, l)) || rp__borrow(st, b, 0) != 0)
        return RP_OFFER_EAGER;
    rp__match_cancel(st);
    size_t nexact = 0;
    for (size_t i = 0; i < n; i++)
        rp__match_take(st, found[i], &nexact);
    if (NEVER(st->match.cand[0] != b)) {
        st->match.borrowed_seq = NULL;
        rp__match_cancel(st);
        return RP_OFFER_EAGER;
    }
    st->opno++;
    st->match.ndef = 1;
    return RP_OFFER_DEFERRED;
}

enum rp_offer rp__match_first(rp_stream *st, CUstream h, const rp_launch *l,
                              enum rp__entry entry)
{
    rp_seq *s = st->match.hint; /* never a per-thread stream's (rp__match_resolve) */
    if (!s || st->match.hint_gone != st->cs->seqs_gone || st->handle == CU_STREAM_PER_THREAD)
        return RP_OFFER_EAGER; /* none, or a sequence went since: it may be this one */
    if (s->det->ops[0].func != l->f) /* another step than the last begins (decoding's take turns) */
        return st->cs->first_kernel_bits & rp__kernel_bit(l->f) ? first_several(st, h, l, entry)
                                                             : RP_OFFER_EAGER;
    if (!s->first_unique) /* the hint's kernel: a step's first op as the last one began */
        return first_several(st, h, l, entry);
    return rp__match_at(st, s, 0, h, *l, entry);
}

int rp__match_masked(rp_stream *st, rp_seq *s, size_t k, const rp_launch *l)
{
    return s->match.poff && arena_room(st, s) == 0 && match_masked(st, s, k, l);
}

/* A candidate `s` whose op k > 0 is not the launch as its image says
 * (masked_same, or no image for the launch's function), decided from the
 * launch as the general path's narrow() decides from its record:
 * KEPT, as rp__seq_match keeps an op whose volatile function takes another of
 * its known forms; WIDENED, *w made as rp__widen would take the fields the
 * launch differs in (rp__widen_take; rp__op_diff's difference read from
 * the launch, with the same layouts); or 0, the general path's to decide
 * (the candidate may go, which needs the launch's record). Only where the
 * launch would be recorded as the op's node: the same stream, entry point
 * and handle kind, no attribute (an image's op has none, nor has a launch
 * the fast path takes), and, for another function, one whose layout the
 * context has read (recording it reads nothing new). A fork/join sequence,
 * which only the learner widens, is left to the general path even where
 * rp__seq_match would keep it. */
enum { CAND_OUT, CAND_KEPT, CAND_WIDENED };
static int cand_from_launch(const rp_stream *st, rp_seq *s, size_t k, const rp_launch *l,
                            CUstream h, uint32_t tag, struct rp_widen *w)
{
    const rp_fast *fo = s->match.fast ? &s->match.fast[k] : NULL;
    if (!rp__widen_may(s, k) || !fo || !fo->f || fo->stream != h || fo->tag != tag || s->broken ||
        s->det->n <= k + 1)
        return CAND_OUT;
    const rp_op *want = &s->det->ops[k];
    const rp_param_layout *L = s->lay[k]; /* an image: laid out, no attribute */
    rp_op got;
    memset(&got, 0, sizeof got);
    got.kind = RP_OP_KERNEL;
    got.flags = want->flags; /* entry point (the tag) and handle kind: the same */
    got.ctx = want->ctx;
    got.stream = want->stream; /* the image's */
    got.func = l->f;
    got.param_bytes = want->param_bytes;
    memcpy(got.grid, l->grid, 7 * sizeof(unsigned int));
    uint64_t diff = rp__op_geometry_diff(want, &got);
    if (l->f != fo->f) {
        int kernel;
        const rp_param_layout *Lb = rp__rec_layout_known(s->cs, l->f, &kernel);
        if (!Lb || kernel != !!(want->flags & RP_OPF_KERNEL_HANDLE))
            return CAND_OUT;
        got.param_bytes = Lb->total;
        /* rp__seq_match: a known form of a volatile function stands for it
         * whatever its values, where the driver takes its geometry. */
        if ((s->vmask[k] & RP_VOL_FUNC) && rp__seq_form_known(s, k, l->f))
            return rp__match_values_ok(s->cs, want, &got) ? CAND_KEPT : CAND_OUT;
        diff |= RP_VOL_FUNC; /* rp__op_diff: both laid out, no attribute */
    } else {
        if (L->n && !l->kp)
            return CAND_OUT;
        for (uint32_t i = 0; i < L->n; i++) {
            if (!memcmp(want->params + L->off[i], l->kp[i], L->size[i]))
                continue;
            if (i >= RP_VOL_MAX_PARAMS)
                return CAND_OUT;
            diff |= 1ull << i;
        }
    }
    return rp__widen_take(st, s, k, &got, diff, 1, w) ? CAND_WIDENED : CAND_OUT;
}

/* The candidates of `drop`, whose op k is not a kernel, let go as narrow()
 * lets them go for the launch's record: another operation, noted with the
 * launch's kind and function (rp__op_delta reads no more of it). */
static __attribute__((noinline)) void drop_for_launch(rp_stream *st, uint32_t drop, CUstream h,
                                                      const rp_launch *l)
{
    rp_op got;
    memset(&got, 0, sizeof got);
    got.kind = RP_OP_KERNEL;
    got.flags = l->ptsz ? RP_OPF_PTSZ : 0;
    got.ctx = st->cs->ctx;
    got.stream = h;
    got.func = l->f;
    rp__match_drop(st, drop, &got);
}

enum rp_offer rp__match_several(rp_stream *st, CUstream h, const rp_launch *l,
                                enum rp__entry entry)
{
    size_t k = st->match.ndef, nc = st->match.ncand;
    rp_seq *b = st->match.borrowed_seq, *alt = NULL;
    uint32_t tag = rp__fast_tag(entry, l->ptsz);
    int b_out = 0;
    unsigned char widened[RP_MAX_CANDIDATES] = {0};
    struct rp_widen wid[RP_MAX_CANDIDATES];
    unsigned int nwid = 0;
    uint32_t drop = 0;
    if (!b)
        b = st->match.cand[0];
    /* Every candidate stays as the general path's narrow() would keep it:
     * its op k is the launch (the exact ones in full, the others outside
     * their volatile fields), or, for one with volatile fields, decided
     * from the launch (cand_from_launch: another known form, or fields it
     * takes as volatile for the occurrence); or it goes as narrow() lets it
     * go, its op k no kernel at all (drop: rp__match_drop); and none ends
     * with it (a candidate that completes is the general path's:
     * note_complete). One
     * whose op k is the launch holds the launch's values: the borrowed one,
     * compared last (its comparison keeps them in the arena), or, where it
     * cannot, the first other (the run borrowed so far is written down
     * first, as the general path would). */
    size_t bi = nc;
    uint32_t decide = 0; /* those decided from the launch (cand_from_launch), once known to pay */
    for (size_t i = 0; i < nc; i++) {
        rp_seq *s = st->match.cand[i];
        const rp_fast *fo = rp__fast_image(s, k, l->f, h, tag);
        if (fo && s->det->n <= k + 1)
            return RP_OFFER_EAGER;
        if (s == b) {
            bi = i;
            if (fo)
                continue;
            b_out = 1;
        } else if (fo && cand_same(st, s, fo, k, l)) {
            if (!alt)
                alt = s;
            continue;
        }
        if (!s->broken && s->det->ops[k].kind != RP_OP_KERNEL)
            drop |= 1u << i; /* another node: narrow() lets it go */
        else
            decide |= 1u << i;
    }
    if (NEVER(bi == nc)) /* the borrowed one leaves the candidates by a write-down */
        return RP_OFFER_EAGER;
    if (!b_out && !lends(st, b, k, l)) {
        b_out = 1;
        decide |= 1u << bi;
    }
    /* Where the borrowed one's op is not the launch and no other's is, the
     * general path's: known before any candidate is decided from the launch
     * (which may ask the driver about a function's limits). */
    if (b_out && !alt)
        return RP_OFFER_EAGER;
    for (size_t i = 0; i < nc; i++) {
        if (!(decide >> i & 1))
            continue;
        int c = cand_from_launch(st, st->match.cand[i], k, l, h, tag, &wid[i]);
        if (c == CAND_OUT)
            return RP_OFFER_EAGER;
        widened[i] = c == CAND_WIDENED;
        nwid += widened[i];
    }
    if (st->match.nwid + nwid > RP_MAX_WIDEN) /* narrow() would drop those past the bound */
        return RP_OFFER_EAGER;
    if (b_out) {
        rp__match_write_down(st); /* what the general path does first */
        b = alt;
        if (!lends(st, b, k, l))
            return RP_OFFER_EAGER;
    }
    if (rp__borrow(st, b, k) != 0)
        return RP_OFFER_EAGER;
    /* In the candidates' order, as narrow() takes them. */
    for (size_t i = 0; i < nc; i++)
        if (widened[i])
            st->match.wid[st->match.nwid++] = wid[i];
    if (drop)
        drop_for_launch(st, drop, h, l);
    st->opno++;
    st->match.ndef = k + 1;
    return RP_OFFER_DEFERRED;
}

int rp__arena_room(rp_stream *st, const rp_seq *s)
{
    return arena_room(st, s);
}
