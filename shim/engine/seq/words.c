/* words.c - the volatile parameters of a sequence's kernels, read by the
 * words that change. A framework passes a kernel one parameter of hundreds
 * of bytes (PyTorch's functor and offset calculators, the addresses of a
 * list of tensors), of which a step changes a few words: its data pointers.
 * The parameter is volatile (any value matches, its node is updated), but
 * reading all of it, for each launch, each content hash and each
 * comparison with what an executable holds, costs more than the graph
 * saves. So, per kernel op of a sequence with updates, the 16-byte chunks
 * of its volatile parameters that have been seen to differ from the
 * sequence's own values are kept (its W chunks, which only grow), with the
 * stretches between them (runs). A launch or a record is compared with the
 * sequence on the runs (a difference there adds chunks to W), so that every
 * value the engine keeps for the op equals the sequence's outside W: what
 * an executable holds and what an occurrence carries are then told apart,
 * and hashed, by their W chunks. When W grows past a quarter of the chunks
 * the op's volatile parameters are read whole from then on.
 *
 * The hash of an op's volatile parameters is a sum of one term per chunk
 * (a 128-bit product of its two words, each mixed with its position,
 * folded: wyhash's mum), the same function of the bytes whatever W is and
 * whether the op is read whole: the terms of the sequence's values outside
 * W are summed once (`base`). Hashes only ever propose; what an executable
 * holds is compared value by value. Runs under the context's lock. */
#include "seq.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 16 /* bytes */

/* The hash term of the chunk at `pos` of a block, valued (a, b). */
static inline uint64_t term(uint32_t pos, uint64_t a, uint64_t b)
{
    uint64_t p = (uint64_t)pos + 1;
    __uint128_t m = (__uint128_t)(a ^ p * 0x9e3779b97f4a7c15ull) * (b ^ p * 0xd6e8feb86659fd93ull);
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* The term of the `len` bytes (1 to 16) at `q`, at `pos`. */
static inline uint64_t term_at(uint32_t pos, const uint8_t *q, uint32_t len)
{
    uint64_t w[2] = {0, 0};
    if (len == CHUNK)
        memcpy(w, q, CHUNK);
    else if (len == 8)
        memcpy(w, q, 8);
    else
        for (uint32_t i = 0; i < len; i++)
            w[i / 8] |= (uint64_t)q[i] << (8 * (i % 8));
    return term(pos, w[0], w[1]);
}

/* The length of the chunk at `at` of a parameter of `size` bytes. */
static inline uint32_t chunk_len(uint32_t size, uint32_t at)
{
    return size - at > CHUNK ? CHUNK : size - at;
}

/* Whether the `len` bytes at `a` and `b` are equal (a chunk: inline). */
static inline int chunk_same(const uint8_t *a, const uint8_t *b, uint32_t len)
{
    if (len == CHUNK) {
        uint64_t x[2], y[2];
        memcpy(x, a, CHUNK), memcpy(y, b, CHUNK);
        return !((x[0] ^ y[0]) | (x[1] ^ y[1]));
    }
    return !memcmp(a, b, len);
}

/* The layout by which op k's volatile parameters are read, or NULL when
 * its block is read as a whole (rp__vw_get). */
static const rp_param_layout *layout_for(const rp_seq *s, size_t k)
{
    const rp_op *op = &s->det->ops[k];
    uint64_t m = s->vmask[k];
    if (op->kind != RP_OP_KERNEL || (m & RP_VOL_FUNC) || !(m & RP_VW_PARAMS))
        return NULL;
    const rp_param_layout *L = s->lay ? s->lay[k] : rp__rec_layout(s->cs, op);
    return L && L->total == op->param_bytes ? L : NULL;
}

/* Whether `pos` is one of the n sorted positions at `wpos`. */
static int among(const uint32_t *wpos, uint32_t n, uint32_t pos)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (wpos[mid] == pos)
            return 1;
        if (wpos[mid] < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Op k is read whole from now on (W outgrew its use, or memory ran out). */
static void whole(rp_seq *s, size_t k, const rp_param_layout *L, uint64_t m)
{
    rp_vw_op *o = &s->vw[k];
    free(o->w);
    *o = (rp_vw_op){.vm = m, .whole = 1, .L = L};
}

/* Make op k's plan for mask `m` and the W chunks at `wpos` (n positions,
 * sorted here, each a chunk of a volatile parameter); whole when they are
 * more than a quarter of the chunks, or memory runs out. */
static void build(rp_seq *s, size_t k, const rp_param_layout *L, uint64_t m, uint32_t *wpos,
                  uint32_t n)
{
    const uint8_t *seqp = s->det->ops[k].params;
    qsort(wpos, n, sizeof *wpos, cmp_u32);
    uint32_t nparams = 0, nchunks = 0;
    for (uint64_t pm = m & RP_VW_PARAMS; pm; pm &= pm - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(pm);
        if (i >= L->n)
            break;
        nparams++;
        nchunks += (L->size[i] + CHUNK - 1) / CHUNK;
    }
    /* Each W chunk may split a run in two; each parameter starts one. */
    rp_vw_chunk *w = 4 * n > nchunks ? NULL : rp__malloc((2 * (size_t)n + nparams + 1) * sizeof *w);
    if (!w) {
        whole(s, k, L, m);
        return;
    }
    rp_vw_chunk *runs = w + n;
    uint32_t nw = 0, nruns = 0;
    uint64_t base = 0;
    for (uint64_t pm = m & RP_VW_PARAMS; pm; pm &= pm - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(pm);
        if (i >= L->n)
            break;
        rp_vw_chunk *run = NULL;
        for (uint32_t at = 0; at < L->size[i]; at += CHUNK) {
            uint32_t pos = L->off[i] + at, len = chunk_len(L->size[i], at);
            if (among(wpos, n, pos)) {
                w[nw++] = (rp_vw_chunk){pos, at, (uint16_t)i, (uint16_t)len};
                run = NULL;
                continue;
            }
            base += term_at(pos, seqp + pos, len);
            if (run) {
                run->len = (uint16_t)(run->len + len);
            } else {
                run = &runs[nruns++];
                *run = (rp_vw_chunk){pos, at, (uint16_t)i, (uint16_t)len};
            }
        }
    }
    rp_vw_op *o = &s->vw[k];
    free(o->w);
    *o = (rp_vw_op){.vm = m, .base = base, .nw = nw, .nruns = nruns, .w = w, .runs = runs, .L = L};
}

const rp_vw_op *rp__vw_get(rp_seq *s, size_t k)
{
    uint64_t m = s->vmask[k];
    if (s->vw && s->vw[k].vm == m && m)
        return &s->vw[k]; /* made for this mask (a NULL answer is never kept) */
    const rp_param_layout *L = layout_for(s, k);
    if (!L)
        return NULL;
    /* Made with the mask (capture.c); a sequence made otherwise gets them
     * here. Without memory, the block is read whole as the caller would
     * without a plan: exact still, only slower. */
    if (!s->vw && !(s->vw = rp__calloc(s->det->n, sizeof *s->vw)))
        return NULL;
    rp_vw_op *o = &s->vw[k];
    if (o->whole) {
        o->vm = m;
        return o;
    }
    /* First made, or parameters became volatile since: W as it was. */
    uint32_t *wpos = rp__malloc((o->nw + 1) * sizeof *wpos);
    if (!wpos) {
        whole(s, k, L, m);
        return o;
    }
    for (uint32_t i = 0; i < o->nw; i++)
        wpos[i] = o->w[i].pos;
    build(s, k, L, m, wpos, o->nw);
    free(wpos);
    return o;
}

/* Add the chunks of `params` (laid out as the sequence's block, or, when
 * `kp` is set, the launch's kernelParams) whose values differ from the
 * sequence's on o's runs to W. */
static void grow(rp_seq *s, size_t k, const uint8_t *params, void **kp)
{
    rp_vw_op *o = &s->vw[k];
    const uint8_t *seqp = s->det->ops[k].params;
    uint32_t cap = o->nw, n = 0;
    for (uint32_t r = 0; r < o->nruns; r++)
        cap += (o->runs[r].len + CHUNK - 1) / CHUNK;
    uint32_t *wpos = rp__malloc((cap + 1) * sizeof *wpos);
    if (!wpos) {
        whole(s, k, o->L, s->vmask[k]);
        return;
    }
    for (uint32_t r = 0; r < o->nruns; r++) {
        const rp_vw_chunk *run = &o->runs[r];
        const uint8_t *p = kp ? (const uint8_t *)kp[run->param] + run->at : params + run->pos;
        for (uint32_t at = 0; at < run->len; at += CHUNK)
            if (!chunk_same(p + at, seqp + run->pos + at, chunk_len(run->len, at)))
                wpos[n++] = run->pos + at;
    }
    for (uint32_t a = 0; a < o->nw; a++)
        wpos[n++] = o->w[a].pos;
    if (n != o->nw)
        build(s, k, o->L, s->vmask[k], wpos, n);
    free(wpos);
}

const rp_vw_op *rp__vw_check_launch(rp_seq *s, size_t k, void **kp)
{
    const rp_vw_op *o = rp__vw_plan(s, k);
    if (!o || o->whole)
        return o;
    const uint8_t *seqp = s->det->ops[k].params;
    for (uint32_t r = 0; r < o->nruns; r++) {
        const rp_vw_chunk *run = &o->runs[r];
        const uint8_t *got = (const uint8_t *)kp[run->param] + run->at;
        if (run->len <= CHUNK ? !chunk_same(got, seqp + run->pos, run->len)
                              : memcmp(got, seqp + run->pos, run->len) != 0) {
            grow(s, k, NULL, kp);
            return &s->vw[k];
        }
    }
    return o;
}

uint64_t rp__vw_take(const rp_seq *s, size_t k, const rp_vw_op *o, void **kp, uint8_t *params)
{
    if (o->whole) {
        const rp_param_layout *L = o->L;
        for (uint64_t pm = s->vmask[k] & RP_VW_PARAMS; pm; pm &= pm - 1) {
            uint32_t i = (uint32_t)__builtin_ctzll(pm);
            if (i >= L->n)
                break;
            rp__param_copy(params + L->off[i], kp[i], L->size[i]);
        }
        return rp__vw_hash(s, k, o, params);
    }
    uint64_t h = o->base;
    for (uint32_t i = 0; i < o->nw; i++) {
        const rp_vw_chunk *c = &o->w[i];
        const uint8_t *from = (const uint8_t *)kp[c->param] + c->at;
        if (RP_LIKELY(c->len == CHUNK)) {
            uint64_t w[2];
            memcpy(w, from, CHUNK);
            memcpy(params + c->pos, w, CHUNK);
            h += term(c->pos, w[0], w[1]);
        } else {
            memcpy(params + c->pos, from, c->len);
            h += term_at(c->pos, from, c->len);
        }
    }
    return h;
}

void rp__vw_note_block(rp_seq *s, size_t k, const uint8_t *params)
{
    const rp_vw_op *o = rp__vw_plan(s, k);
    if (!o || o->whole)
        return;
    for (uint32_t r = 0; r < o->nruns; r++) {
        const rp_vw_chunk *run = &o->runs[r];
        if (memcmp(params + run->pos, s->det->ops[k].params + run->pos, run->len)) {
            grow(s, k, params, NULL);
            return;
        }
    }
}

uint64_t rp__vw_hash(const rp_seq *s, size_t k, const rp_vw_op *o, const uint8_t *params)
{
    uint64_t h = o->base;
    if (!o->whole) {
        for (uint32_t i = 0; i < o->nw; i++)
            h += term_at(o->w[i].pos, params + o->w[i].pos, o->w[i].len);
        return h;
    }
    const rp_param_layout *L = o->L;
    for (uint64_t pm = s->vmask[k] & RP_VW_PARAMS; pm; pm &= pm - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(pm);
        if (i >= L->n)
            break;
        const uint8_t *p = params + L->off[i];
        uint32_t at = 0, size = L->size[i];
        for (; at + CHUNK <= size; at += CHUNK) {
            uint64_t w[2];
            memcpy(w, p + at, CHUNK);
            h += term(L->off[i] + at, w[0], w[1]);
        }
        if (at < size)
            h += term_at(L->off[i] + at, p + at, size - at);
    }
    return h;
}

int rp__vw_same(const rp_seq *s, size_t k, const rp_vw_op *o, const uint8_t *a,
                const uint8_t *b)
{
    if (!o->whole) {
        for (uint32_t i = 0; i < o->nw; i++)
            if (!chunk_same(a + o->w[i].pos, b + o->w[i].pos, o->w[i].len))
                return 0;
        return 1;
    }
    const rp_param_layout *L = o->L;
    for (uint64_t pm = s->vmask[k] & RP_VW_PARAMS; pm; pm &= pm - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(pm);
        if (i >= L->n)
            break;
        if (memcmp(a + L->off[i], b + L->off[i], L->size[i]))
            return 0;
    }
    return 1;
}

void rp__vw_free(rp_seq *s)
{
    for (size_t k = 0; s->vw && k < s->det->n; k++)
        free(s->vw[k].w);
    free(s->vw);
    s->vw = NULL;
}
