/* held.h - what a sequence's executables hold and the values of the
 * occurrence about to be replayed, read, compared and hashed alike by the
 * node updates (exec.c) and by the choice among executables (contents.c).
 * The values come from the matcher's view of the deferred occurrence
 * (rp_vals). Runs under the context's lock. */
#ifndef REPRISE_HELD_H
#define REPRISE_HELD_H

#include "seq.h"

#include <string.h>

/* Where the fast path keeps the values of op k of `s` it deferred unwritten
 * (the stream's arena, at the op's place: match.h, rp__arena_of). */
static inline const uint8_t *arena_at(const rp_vals *v, const rp_seq *s, size_t k)
{
    return v->arena + s->match.poff[k];
}

/* A deferred kernel's values: the record naming its function (with its
 * parameter size), its geometry (7 unsigned ints, as in a record) and its
 * parameter bytes: its record's, or, when the fast path deferred it
 * unwritten, the sequence's op (the fast path matches only the sequence's
 * own function) and the arena's values. */
static inline void kernel_values_of(const rp_vals *v, const uint64_t *own, const rp_seq *s,
                                    size_t k, const rp_op **f, const unsigned int **g,
                                    const uint8_t **p)
{
    if (rp__vals_borrowed(v, own, k)) {
        const uint8_t *a = arena_at(v, s, k);
        *f = &s->det->ops[k];
        *g = (const unsigned int *)(const void *)a;
        *p = a + RP_ARENA_GEOMETRY;
    } else {
        *f = &v->def[k];
        *g = v->def[k].grid;
        *p = v->def[k].params;
    }
}

static inline void kernel_values(const rp_vals *v, const rp_seq *s, size_t k, const rp_op **f,
                                 const unsigned int **g, const uint8_t **p)
{
    kernel_values_of(v, v->own, s, k, f, g, p);
}

/* A deferred memset's or copy's values: its record's, or, when the fast
 * path deferred it unwritten (rp__match_offer), the sequence's op with the
 * arena's values, made in `tmp`. */
static inline const rp_op *other_values_of(const rp_vals *v, const uint64_t *own,
                                           const rp_seq *s, size_t k, rp_op *tmp)
{
    if (!rp__vals_borrowed(v, own, k))
        return &v->def[k];
    *tmp = s->det->ops[k];
    rp__arena_get_other(arena_at(v, s, k), tmp);
    return tmp;
}
static inline const rp_op *other_values(const rp_vals *v, const rp_seq *s, size_t k, rp_op *tmp)
{
    return other_values_of(v, v->own, s, k, tmp);
}

/* The version (versions.c) of what held record k, a kernel's, holds: kept
 * in the record, found the first time it is asked for (a fresh executable
 * holds the sequence's values; an op that became volatile since). */
static inline uint64_t held_ver(rp_seq *s, rp_op *held, size_t k)
{
    rp_op *h = &held[k];
    if (!h->ver)
        h->ver = rp__ver_of(s, k, h, h->grid, h->params);
    return h->ver;
}

/* The first entry of the list at op `lo` or after it. */
static inline const struct rp_vol *vols_from(const struct rp_vols *l, size_t lo)
{
    const struct rp_vol *e = l->e, *end = l->e + l->n;
    while (e < end && e->k < lo)
        e++;
    return e;
}

/* Whether held record `h` of a kernel told by its bytes (RP_VOL_SMALL)
 * holds these values: function, geometry and parameter bytes. */
static inline int small_held(const rp_op *h, const rp_op *f, const unsigned int *g,
                             const uint8_t *p)
{
    return !rp__op_other_func(h, f) && rp__geometry_same(h->grid, g) &&
           rp__bytes_same(h->params, p, h->param_bytes);
}

/* Whether held record `h` of a kernel told by version holds these values
 * when the occurrence's have no number (no hash needs one, or the lookup
 * failed): compared as a version is (versions.c, same). */
static inline int held_equal(const rp_op *h, const rp_op *f, const unsigned int *g,
                             const uint8_t *p)
{
    return !rp__op_other_func(h, f) && rp__geometry_same(h->grid, g) &&
           (!h->param_bytes || !memcmp(h->params, p, h->param_bytes));
}

/* Whether the executable holds op k's deferred values already (op k has
 * volatile fields). For a kernel (of the sequence's node, like the held
 * record), its function, geometry and parameter bytes decide: the two
 * are the same version (the occurrence's found by rp__exec_prepare), or,
 * for a small block, equal. */
static inline __attribute__((always_inline)) int
held_same_of(rp_op *held, const rp_vals *v, const uint64_t *own, rp_seq *s, size_t k, uint32_t how)
{
    const rp_op *h = &held[k];
    if (how == RP_VOL_OTHER) {
        rp_op tmp;
        return rp__op_same_content(h, other_values_of(v, own, s, k, &tmp));
    }
    if (how == RP_VOL_VER && s->ex.occ_ver[k])
        return s->ex.occ_ver[k] == held_ver(s, held, k);
    const rp_op *f;
    const unsigned int *g;
    const uint8_t *p;
    kernel_values_of(v, own, s, k, &f, &g, &p);
    return how == RP_VOL_VER ? held_equal(h, f, g, p) : small_held(h, f, g, p);
}
static inline int held_same_in(rp_op *held, const rp_vals *v, rp_seq *s, size_t k,
                               uint32_t how)
{
    return held_same_of(held, v, v->own, s, k, how);
}
static inline int held_same(const rp_vals *v, rp_seq *s, const struct rp_vol *e)
{
    return held_same_of(s->ex.held, v, v->own, s, e->k, e->how);
}

/* The hash of an op's values: a kernel's by the number of its values'
 * version (0, none: a value no other content has), or, for a small block,
 * by what its mask may change of them (small_hash); a copy's or memset's
 * addresses, size and value. Only ever a proposal, checked value by value
 * (held_same). */
static inline uint64_t ver_hash(uint64_t h, uint64_t id)
{
    return rp__acc(h, id ? id : (1ull << 63) | ++rp__ver_none);
}

/* A kernel's with a small block (entry `e`, RP_VOL_SMALL), of `bytes`
 * parameter bytes: the words and geometry its mask may change
 * (rp_vol.hwords, hgeom); its function and the rest of its values are the
 * sequence's in every content (matched exactly) and would add nothing. */
static inline __attribute__((always_inline)) uint64_t
small_hash(uint64_t h, const struct rp_vol *e, const unsigned int *g, const uint8_t *p,
           uint32_t bytes)
{
    if (e->hgeom)
        h = rp__acc_bytes(h, g, 7 * sizeof(unsigned int));
    for (unsigned int m = e->hwords; m; m &= m - 1) {
        uint32_t at = 8 * (uint32_t)__builtin_ctz(m);
        if (RP_LIKELY(bytes - at >= 8)) {
            uint64_t w;
            memcpy(&w, p + at, 8);
            h = rp__acc(h, w);
        } else {
            h = rp__acc_bytes(h, p + at, bytes - at);
        }
    }
    return h;
}

static inline uint64_t op_values_hash(uint64_t h, const rp_op *op)
{
    h = rp__acc(h, op->dst);
    h = rp__acc(h, op->src);
    h = rp__acc(h, (uint64_t)(uintptr_t)op->host);
    h = rp__acc(h, op->bytes);
    return rp__acc(h, op->value);
}

/* Whether every hash of the sequence's executables covers its volatile
 * fields as they are now (none became volatile since they were made). */
static inline int rp__hashes_current(const rp_seq *s)
{
    return s->ex.hashed_widened == s->ex.widened && s->ex.held_hash;
}

/* ---- contents.c: an executable per content that comes back ---------------------- */
/* The hash of the values of `s`'s volatile ops: those deferred (`v`, held
 * NULL), or those `held` records (never 0). */
uint64_t rp__content_hash(const rp_vals *v, rp_seq *s, rp_op *held);
/* Before a whole occurrence's replay: the executable to run it on, made
 * `exec` (returns the content's hash; `h`: found already, or 0). */
uint64_t rp__choose_exec(const rp_vals *v, rp_seq *s, uint64_t h);
/* The same when the content came back and none of the executables holds
 * it: a new one for it, where the bounds allow. */
uint64_t rp__choose_exec_new(const rp_vals *v, rp_seq *s, uint64_t h);
/* Before a part [lo, hi): the executable needing the fewest updates. */
void rp__choose_exec_for_part(const rp_vals *v, rp_seq *s, size_t lo, size_t hi);

/* Alternate j becomes `exec`: `exec` and its values wait among the others. */
static inline void rp__swap_in(rp_seq *s, unsigned int j)
{
    CUgraphExec x = s->exec;
    rp_op *held = s->ex.held;
    uint64_t hh = s->ex.held_hash;
    struct rp_exec_on on = s->ex.on;
    s->exec = s->ex.alt[j], s->ex.held = s->ex.alt_held[j], s->ex.held_hash = s->ex.alt_hash[j];
    s->ex.on = s->ex.alt_on[j];
    s->ex.alt[j] = x, s->ex.alt_held[j] = held, s->ex.alt_hash[j] = hh;
    s->ex.alt_on[j] = on;
}

/* rp__choose_exec with every hash current and the content's hash `h`
 * known (not 0), inline where a replay's one pass found it (exec.c): the
 * executable that holds the content, or a new one when it came back
 * within the last RP_SEQ_RECENT replays (rp__choose_exec_new), else
 * `exec`, updated. */
static inline __attribute__((always_inline)) uint64_t
rp__choose_exec_known(const rp_vals *v, rp_seq *s, uint64_t h)
{
    int came_back = 0;
    for (unsigned int i = 0; i < RP_SEQ_RECENT; i++)
        came_back |= s->ex.recent[i] == h;
    s->ex.recent[s->ex.recent_at++ % RP_SEQ_RECENT] = h;
    if (h == s->ex.held_hash)
        return h;
    unsigned int j = 0;
    while (j < s->ex.nalt && s->ex.alt_hash[j] != h)
        j++;
    if (j == s->ex.nalt)
        return came_back ? rp__choose_exec_new(v, s, h) : h;
    s->cs->counters.variant_exec_hits++;
    rp__swap_in(s, j);
    return h;
}

#endif
