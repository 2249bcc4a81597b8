/* versions.c - the values a kernel op of a sequence with updates has
 * taken, each kept once and numbered (its versions). A framework passes a
 * kernel one parameter of hundreds or thousands of bytes (PyTorch's functor
 * and offset calculators, a batched copy's list of tensors) and changes it
 * at every step; reading it in the shim's code to hash it, and again to
 * compare it with what each executable holds, cost more than the graph
 * saved. Instead an occurrence's values (function, geometry, parameter
 * block) are compared, once, with the versions the op has taken (memcmp),
 * proposed by a hash of a few of their words (a small block: all of them;
 * a larger one: the words where two of its versions were found to differ,
 * learnt when their hashes met), and given the number of the one they
 * equal, or of a new one: what an executable holds is then told apart by
 * its version's number (rp_op.ver of its held record), and a content is
 * hashed from the numbers of its ops' versions (exec.c, contents.c). Both are exact: a
 * number names one value for as long as anything may compare with it: the
 * versions held by an executable, and those of the last RP_SEQ_RECENT
 * replays (whose content hashes a replay compares with, to tell a content
 * that came back), are never reused; another may be. A value has one
 * version, so a value found again the replay after it was last seen, or
 * two replays after (two buffers taking turns), is compared first with
 * the slot it was found in then, without the hash (rp__ver_again). Runs
 * under the context's lock. */
#include "seq.h"

#include <stdlib.h>
#include <string.h>

RP_TLS uint64_t rp__ver_none;

#define RP_VER_MAX 64   /* versions an op keeps at most (at most 2 * RP_SEQ_ALTS + 2 are pinned) */
#define RP_VER_PROBES 4 /* words of a larger block its proposal hash reads */

/* A version: the function and parameter size, the geometry, then the
 * parameter block. */
struct rp_ver {
    uint64_t seen;          /* the sequence's clock when last found, or made */
    CUfunction func;
    uint32_t bytes, cap;
    unsigned int g[7];
    uint8_t *params;
};

#define RP_VER_INDEX 128 /* places of the index by hash (twice RP_VER_MAX) */

struct rp_vtab {
    uint32_t n, cap, hand;  /* slots made, allocated; where the next reuse looks first */
    uint64_t next_id;
    uint64_t *id;           /* per slot: the version's number (0: free) ... */
    uint64_t *key;          /* ... and its proposal hash */
    struct rp_ver *v;
    uint32_t probe[RP_VER_PROBES]; /* offsets of the words a larger block's hash reads */
    uint32_t nprobe;
    uint32_t fit; /* the least size of a block that holds every probe's word */
    uint32_t hit[2]; /* the slot found at the last even and odd clock (rp__ver_again) */
    /* The slots in use by hash: open addressing, each place a slot + 1 (0:
     * empty), probed linearly from the hash's low bits. */
    uint8_t index[RP_VER_INDEX];
};

static uint32_t home_of(uint64_t key)
{
    return (uint32_t)(key ^ key >> 29) & (RP_VER_INDEX - 1);
}

static void index_add(struct rp_vtab *t, uint32_t slot)
{
    uint32_t i = home_of(t->key[slot]);
    while (t->index[i])
        i = (i + 1) & (RP_VER_INDEX - 1);
    t->index[i] = (uint8_t)(slot + 1);
}

/* Slot `slot` (its key still set) leaves the index: the places after it
 * in its run move back where their probe would reach them. */
static void index_remove(struct rp_vtab *t, uint32_t slot)
{
    uint32_t i = home_of(t->key[slot]);
    while (t->index[i] != slot + 1) {
        if (NEVER(!t->index[i]))
            return;
        i = (i + 1) & (RP_VER_INDEX - 1);
    }
    uint32_t hole = i;
    for (;;) {
        i = (i + 1) & (RP_VER_INDEX - 1);
        if (!t->index[i])
            break;
        uint32_t home = home_of(t->key[t->index[i] - 1]);
        if ((i > hole && (home <= hole || home > i)) || (i < hole && home <= hole && home > i)) {
            t->index[hole] = t->index[i];
            hole = i;
        }
    }
    t->index[hole] = 0;
}

int rp__ver_init(rp_seq *s)
{
    if (s->vt)
        return 0;
    s->vt = rp__calloc(s->det->n, sizeof *s->vt);
    s->ex.occ_ver = rp__calloc(s->det->n, sizeof *s->ex.occ_ver);
    if (!s->vt || !s->ex.occ_ver) {
        rp__ver_free(s);
        return -1;
    }
    return 0;
}

void rp__ver_free(rp_seq *s)
{
    for (size_t k = 0; s->vt && s->det && k < s->det->n; k++) {
        struct rp_vtab *t = &s->vt[k];
        for (uint32_t i = 0; i < t->n; i++)
            free(t->v[i].params);
        free(t->v);
        free(t->id);
        free(t->key);
    }
    free(s->vt);
    free(s->ex.occ_ver);
    s->vt = NULL;
    s->ex.occ_ver = NULL;
}

/* The proposal hash of values: the function and the block (a small one
 * whole, a larger one at the probes). Not the geometry, which seldom
 * changes: versions that differ only there are told apart by comparing.
 * (Inline: called apart, it cost every lookup a call's moves and spills,
 * 1-4 instructions an op on the PyTorch traces.) */
static inline __attribute__((always_inline)) uint64_t
key_of(const struct rp_vtab *t, CUfunction func, uint32_t bytes, const uint8_t *p)
{
    uint64_t h = rp__acc(RP_HASH_SEED, (uint64_t)(uintptr_t)func);
    if (bytes <= RP_VER_SMALL)
        return rp__acc_bytes(h, p, bytes);
    uint32_t np = t->nprobe;
    if (RP_LIKELY(bytes >= t->fit)) { /* every probe read: the loop below, unrolled */
        _Static_assert(RP_VER_PROBES == 4, "four probes unrolled");
        uint64_t w;
        if (np > 0)
            memcpy(&w, p + t->probe[0], 8), h = rp__acc(h, w);
        if (np > 1)
            memcpy(&w, p + t->probe[1], 8), h = rp__acc(h, w);
        if (np > 2)
            memcpy(&w, p + t->probe[2], 8), h = rp__acc(h, w);
        if (np > 3)
            memcpy(&w, p + t->probe[3], 8), h = rp__acc(h, w);
        return h;
    }
    for (uint32_t i = 0; i < np; i++) {
        if (t->probe[i] + 8 > bytes)
            continue;
        uint64_t w;
        memcpy(&w, p + t->probe[i], 8);
        h = rp__acc(h, w);
    }
    return h;
}

/* Whether version `v` holds these values. */
static int same(const struct rp_ver *v, CUfunction func, uint32_t bytes, const unsigned int *g,
                const uint8_t *p)
{
    return v->func == func && v->bytes == bytes && !memcmp(v->g, g, sizeof v->g) &&
           (!bytes || !memcmp(v->params, p, bytes));
}

/* Two versions' hashes met on blocks of `bytes` bytes that differ: the
 * first word where they do becomes a probe (if there is room), and every
 * version's hash is taken again. */
static void learn_probe(struct rp_vtab *t, uint32_t bytes, const uint8_t *a, const uint8_t *b)
{
    if (t->nprobe == RP_VER_PROBES)
        return;
    uint32_t off = 0;
    while (off + 8 <= bytes && !memcmp(a + off, b + off, 8))
        off += 8;
    if (off + 8 > bytes)
        return; /* only the last few bytes differ: no word to read */
    for (uint32_t i = 0; i < t->nprobe; i++)
        if (t->probe[i] == off)
            return;
    t->probe[t->nprobe++] = off;
    if (t->fit < off + 8)
        t->fit = off + 8;
    memset(t->index, 0, sizeof t->index);
    for (uint32_t i = 0; i < t->n; i++) {
        if (!t->id[i])
            continue;
        t->key[i] = key_of(t, t->v[i].func, t->v[i].bytes, t->v[i].params);
        index_add(t, i);
    }
}

/* Whether version `id` of op k is held by one of the sequence's
 * executables (it must keep its number). */
static int pinned(const rp_seq *s, size_t k, uint64_t id)
{
    if (s->ex.held && s->ex.held[k].ver == id)
        return 1;
    for (unsigned int j = 0; j < s->ex.nalt; j++)
        if (s->ex.alt_held[j] && s->ex.alt_held[j][k].ver == id)
            return 1;
    return 0;
}

/* A slot for a new version of op k at `clock`: a free one, one neither
 * pinned nor seen in the last RP_SEQ_RECENT replays (looked for from the
 * hand on), or a new one; -1 when memory runs out or every slot must be
 * kept. */
static int slot_for(rp_seq *s, size_t k, uint64_t clock)
{
    struct rp_vtab *t = &s->vt[k];
    if (t->n < t->cap)
        return (int)t->n++; /* room made already */
    for (uint32_t c = 0, i = t->hand; c < t->n; c++, i = i + 1 == t->n ? 0 : i + 1) {
        if (!t->id[i] || (t->v[i].seen + RP_SEQ_RECENT + 1 <= clock && !pinned(s, k, t->id[i]))) {
            t->hand = i + 1 == t->n ? 0 : i + 1;
            return (int)i;
        }
    }
    if (t->n == t->cap) {
        if (t->cap == RP_VER_MAX)
            return -1;
        uint32_t cap = t->cap ? 2 * t->cap : 4;
        struct rp_ver *nv = rp__realloc(t->v, cap * sizeof *nv);
        if (nv)
            t->v = nv;
        uint64_t *ni = nv ? rp__realloc(t->id, cap * sizeof *ni) : NULL;
        if (ni)
            t->id = ni;
        uint64_t *nk = ni ? rp__realloc(t->key, cap * sizeof *nk) : NULL;
        if (!nk)
            return -1; /* what grew is kept, unused */
        t->key = nk;
        memset(t->v + t->cap, 0, (cap - t->cap) * sizeof *t->v);
        memset(t->id + t->cap, 0, (cap - t->cap) * sizeof *t->id);
        t->cap = cap;
    }
    return (int)t->n++;
}

/* Slot i holds the values looked up at `clock`: seen then, the slot found
 * at that clock (hit), its version's number returned. */
static inline uint64_t found(struct rp_vtab *t, uint32_t i, uint64_t clock)
{
    if (t->v[i].seen < clock)
        t->v[i].seen = clock;
    t->hit[clock & 1] = i;
    return t->id[i];
}

uint64_t rp__ver_find(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                      const uint8_t *p)
{
    size_t k = e->k;
    uint64_t clock = s->ex.vclock;
    if (!s->vt && rp__ver_init(s) != 0)
        return 0;
    struct rp_vtab *t = &s->vt[k];
    uint32_t bytes = f->param_bytes;
    uint64_t key = key_of(t, f->func, bytes, p);
    s->cs->counters.version_lookups++;
    int met = -1; /* a version whose hash met these values' */
    for (uint32_t x = home_of(key); t->index[x]; x = (x + 1) & (RP_VER_INDEX - 1)) {
        uint32_t i = t->index[x] - 1u;
        if (t->key[i] != key)
            continue;
        if (same(&t->v[i], f->func, bytes, g, p)) {
            /* Found again the clock after it was last seen (kept from
             * step to step), or the one after that: two buffers taking
             * turns, once the other one came back too. */
            uint64_t was = t->v[i].seen;
            uint8_t back = was + 1 == clock ? 1 : was + 2 == clock ? 2 : 0;
            e->again = back == 2 && !e->half ? 0 : back;
            e->half = back == 2;
            e->fresh = 0;
            return found(t, i, clock);
        }
        met = (int)i;
    }
    struct rp_vols *l = s->ex.vols; /* `e` is its entry: rp__ver_of's never counts so far */
    if (RP_UNLIKELY(++e->fresh > RP_SEQ_RECENT) && !NEVER(!l || e < l->e || e >= l->e + l->n)) {
        /* new at more than RP_SEQ_RECENT lookups in a row: none from the
         * next replay on (RP_VOL_FRESH, exec.c) */
        e->how = RP_VOL_FRESH;
        s->ex.nfresh++;
        e->fresh = RP_SEQ_RECENT;
        e->again = e->half = 0;
        e->at = 0;
    }
    if (met >= 0 && bytes > RP_VER_SMALL && t->v[met].bytes == bytes) {
        learn_probe(t, bytes, t->v[met].params, p);
        key = key_of(t, f->func, bytes, p);
    }
    int i = slot_for(s, k, clock);
    if (i < 0)
        return 0;
    if (t->id[i]) { /* a version reused */
        index_remove(t, (uint32_t)i);
        t->id[i] = 0;
    }
    struct rp_ver *v = &t->v[i];
    if (v->cap < bytes) {
        uint8_t *np = rp__realloc(v->params, bytes);
        if (!np)
            return 0;
        v->params = np;
        v->cap = bytes;
    }
    t->id[i] = ++t->next_id;
    t->key[i] = key;
    index_add(t, (uint32_t)i);
    v->seen = clock;
    v->func = f->func;
    v->bytes = bytes;
    memcpy(v->g, g, sizeof v->g);
    if (bytes)
        memcpy(v->params, p, bytes);
    return t->id[i];
}

uint64_t rp__ver_of(rp_seq *s, size_t k, const rp_op *f, const unsigned int *g,
                    const uint8_t *p)
{
    struct rp_vol e = {.k = (uint32_t)k};
    return rp__ver_find(s, &e, f, g, p);
}

uint64_t rp__ver_again(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                       const uint8_t *p)
{
    uint64_t clock = s->ex.vclock;
    struct rp_vtab *t = &s->vt[e->k];
    /* The slot found `again` clocks ago (a value kept from step to step,
     * two buffers taking turns), compared in full: a slot in use holding
     * these values is their version (a value has one), the answer the
     * hash would give; else the hash's answer. */
    uint32_t i = t->hit[(clock - e->again) & 1];
    if (i < t->n && t->id[i] && same(&t->v[i], f->func, f->param_bytes, g, p))
        return found(t, i, clock);
    e->again = 0;
    return rp__ver_find(s, e, f, g, p);
}

void rp__fresh_lookup(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                      const uint8_t *p, int same)
{
    e->fresh = 0;
    uint64_t id = rp__ver_find(s, e, f, g, p);
    if (!same && e->fresh)
        return; /* new */
    e->how = RP_VOL_VER;
    s->ex.nfresh--;
    e->fresh = e->again = e->half = 0;
    s->ex.occ_ver[e->k] = id;
}
