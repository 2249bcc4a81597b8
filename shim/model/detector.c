/* detector.c - the bounded table of segments seen and the warmup/back-off
 * decision. */
#include "detector.h"

#include "alloc.h"
#include "check.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int rp__det_init(rp_detector *d, size_t cap, unsigned int warmup, size_t min_ops,
                 size_t max_ops)
{
    memset(d, 0, sizeof *d);
    d->warmup = warmup ? warmup : 1;
    d->min_ops = min_ops;
    d->max_ops = max_ops;
    d->cap = cap ? cap : 1;
    size_t places = 2;
    while (places < 2 * d->cap)
        places *= 2;
    d->slots = rp__calloc(d->cap, sizeof *d->slots);
    d->index = rp__calloc(places, sizeof *d->index);
    if (!d->slots || !d->index) {
        free(d->slots);
        free(d->index);
        memset(d, 0, sizeof *d);
        return -1;
    }
    d->index_mask = places - 1;
    return 0;
}

/* Where key `key`'s probe begins in the index. */
static size_t index_home(const rp_detector *d, uint64_t key)
{
    return (size_t)(key ^ key >> 32) & d->index_mask;
}

/* Slot `e` (its key set) joins the index. */
static void index_add(rp_detector *d, const rp_det_entry *e)
{
    size_t i = index_home(d, e->key);
    while (d->index[i])
        i = (i + 1) & d->index_mask;
    d->index[i] = (uint32_t)(e - d->slots) + 1;
}

/* Slot `e` (its key still set) leaves the index: the places after it in
 * its run move back where their probe would reach them (no tombstones). */
static void index_remove(rp_detector *d, const rp_det_entry *e)
{
    size_t i = index_home(d, e->key);
    uint32_t mine = (uint32_t)(e - d->slots) + 1;
    while (d->index[i] != mine) {
        if (NEVER(!d->index[i]))
            return;
        i = (i + 1) & d->index_mask;
    }
    size_t hole = i;
    for (;;) {
        i = (i + 1) & d->index_mask;
        if (!d->index[i])
            break;
        size_t home = index_home(d, d->slots[d->index[i] - 1].key);
        /* It may fill the hole when its home is not in (hole, i]. */
        if ((i > hole && (home <= hole || home > i)) || (i < hole && home <= hole && home > i)) {
            d->index[hole] = d->index[i];
            hole = i;
        }
    }
    d->index[hole] = 0;
}

static void slot_clear(rp_det_entry *e)
{
    free(e->ops); /* the records' bytes lie in the same block (keep_copy) */
    free(e->differs);
    memset(e, 0, sizeof *e);
}

void rp__det_fini(rp_detector *d)
{
    for (size_t i = 0; i < d->cap && d->slots; i++)
        slot_clear(&d->slots[i]);
    free(d->slots);
    free(d->index);
    memset(d, 0, sizeof *d);
}

void rp__det_by_structure(rp_detector *d, unsigned int min_distinct)
{
    d->by_structure = 1;
    d->min_distinct = min_distinct;
}

uint64_t rp__det_key(const rp_op *ops, size_t n, int structure)
{
    uint64_t h = rp__hash_u64(RP_HASH_SEED, n);
    for (size_t i = 0; i < n; i++)
        h = rp__hash_u64(h, structure ? ops[i].skey : ops[i].ckey);
    return h ? h : 1; /* 0 marks a free slot */
}

static int same_segment(const rp_detector *d, const rp_det_entry *e, const rp_op *ops, size_t n)
{
    if (e->n != n)
        return 0;
    if (!e->ops)
        return 1; /* a by-content entry before its capture: the key decides */
    for (size_t i = 0; i < n; i++)
        if (d->by_structure ? !rp__op_same_structure(&e->ops[i], &ops[i])
                            : !rp__op_same_content(&e->ops[i], &ops[i]))
            return 0;
    return 1;
}

/* Keep a copy of the segment in the entry: the records and every byte they
 * own (parameters, staged payload, launch attributes) in one block, so that keeping a segment
 * costs one allocation and a copy, not two allocations an op (learning a
 * stream that never repeats pays this for every segment). Returns 0, or -1
 * (entry left without a copy) when memory runs out. */
static size_t pad16(size_t n) { return (n + 15) & ~(size_t)15; }

static int keep_copy(rp_det_entry *e, const rp_op *ops, size_t n)
{
    size_t bytes = n * sizeof(rp_op);
    for (size_t i = 0; i < n; i++) {
        bytes += pad16(ops[i].param_bytes);
        if (rp__op_staged(&ops[i]) && ops[i].data)
            bytes += pad16(ops[i].bytes);
        bytes += pad16(ops[i].nattrs * sizeof *ops[i].attrs);
    }
    rp_op *c = rp__malloc(bytes);
    if (!c)
        return -1;
    uint8_t *at = (uint8_t *)(c + n);
    for (size_t i = 0; i < n; i++) {
        c[i] = ops[i];
        c[i].params = NULL;
        c[i].data = NULL;
        if (ops[i].params && ops[i].param_bytes) {
            c[i].params = memcpy(at, ops[i].params, ops[i].param_bytes);
            at += pad16(ops[i].param_bytes);
        }
        if (rp__op_staged(&ops[i]) && ops[i].data) {
            c[i].data = memcpy(at, ops[i].data, ops[i].bytes);
            at += pad16(ops[i].bytes);
        }
        c[i].attrs = NULL;
        if (ops[i].nattrs) {
            c[i].attrs = memcpy(at, ops[i].attrs, ops[i].nattrs * sizeof *ops[i].attrs);
            at += pad16(ops[i].nattrs * sizeof *ops[i].attrs);
        }
        c[i].borrowed = 0; /* the block is the entry's: freed as one (slot_clear) */
    }
    e->ops = c;
    return 0;
}

int rp__det_refresh(rp_det_entry *e, const rp_op *ops, size_t n)
{
    if (!e->ops || n != e->n)
        return -1;
    rp_op *old = e->ops;
    if (keep_copy(e, ops, n) != 0) {
        e->ops = old;
        return -1;
    }
    free(old);
    return 0;
}

/* The run of occurrences (new contents, or diverging ones) after which a
 * by-structure entry asks for its capture with updates. */
static unsigned int changing_run(const rp_detector *d)
{
    unsigned int need = d->warmup + 1;
    return need < 2 ? 2 : need;
}

/* Note the content of an occurrence in a by-structure entry. */
static void note_content(rp_det_entry *e, const rp_op *ops, size_t n)
{
    uint64_t c = rp__det_key(ops, n, 0);
    unsigned int kept = e->ndistinct < RP_DET_MAX_DISTINCT ? e->ndistinct : RP_DET_MAX_DISTINCT;
    for (unsigned int i = 0; i < kept; i++) {
        if (e->contents[i] == c) {
            e->fresh = 0;
            return;
        }
    }
    /* Past the table a content counts as new: an undercount of repeats can
     * only ask for the capture with updates sooner. */
    e->fresh++;
    if (e->ndistinct < RP_DET_MAX_DISTINCT)
        e->contents[e->ndistinct] = c;
    if (e->ndistinct <= RP_DET_MAX_DISTINCT)
        e->ndistinct++;
}

/* A by-structure entry's contents keep changing: its latest `warmup`
 * occurrences (at least 2) were each new, as many as an exact repeat
 * needs to be captured. (Until 2026-12-06 it took one more, to tell a
 * rotation of a few buffers from a counter before the capture; since
 * executables per content that comes back (seq/contents.c), a rotation served by
 * the graph with updates replays without updates once its contents have
 * come back, and waiting cost every structure whose pointers rotate, a
 * framework's every step, one more occurrence run eagerly.) */
static int keeps_changing(const rp_detector *d, const rp_det_entry *e)
{
    return e->fresh >= (d->warmup < 2 ? 2 : d->warmup);
}

/* A slot for a new segment: the first free one, else the least recently
 * used one that has no graph (a graph's entry leaves only through
 * forget_graph). */
static rp_det_entry *slot_for_new(rp_detector *d)
{
    for (; d->free_from < d->cap; d->free_from++)
        if (!d->slots[d->free_from].key)
            return &d->slots[d->free_from];
    rp_det_entry *victim = NULL;
    for (size_t i = 0; i < d->cap; i++) {
        rp_det_entry *e = &d->slots[i];
        if (e->state != RP_DET_CAPTURED && (!victim || e->last_use < victim->last_use))
            victim = e;
    }
    if (victim) {
        index_remove(d, victim);
        slot_clear(victim);
        d->evictions++;
        /* Free until the caller keys it (a failure leaves it free). */
        d->free_from = (size_t)(victim - d->slots);
    }
    return victim;
}

rp_det_verdict rp__det_observe(rp_detector *d, const rp_op *ops, size_t n,
                               rp_det_entry **entry)
{
    *entry = NULL;
    if (n < d->min_ops)
        return RP_DET_TOO_SHORT;
    if (d->max_ops && n > d->max_ops)
        return RP_DET_TOO_LONG;
    if (!d->slots)
        return RP_DET_NO_MEMORY;
    d->clock++;
    uint64_t key = rp__det_key(ops, n, d->by_structure);
    rp_det_entry *e = NULL;
    for (size_t i = index_home(d, key); d->index[i]; i = (i + 1) & d->index_mask) {
        rp_det_entry *o = &d->slots[d->index[i] - 1];
        if (o->key != key)
            continue;
        if (same_segment(d, o, ops, n)) {
            e = o;
            break;
        }
        d->collisions++;
    }
    if (!e) {
        e = slot_for_new(d);
        if (!e)
            return RP_DET_NO_MEMORY; /* every slot holds a graph: a bound hit */
        /* A by-content entry keeps only its key until it is captured: most
         * contents are seen once, and copying every segment would make the
         * learning of loops that never repeat cost a copy per op. Counting
         * by key is safe: a collision can only make a capture come early,
         * and the capture is of the segment the program just issued. A
         * by-structure entry keeps its first occurrence, to tell later
         * which fields differ. */
        if (d->by_structure && keep_copy(e, ops, n) != 0)
            return RP_DET_NO_MEMORY;
        if (d->by_structure && !(e->differs = rp__calloc(n, sizeof *e->differs))) {
            slot_clear(e);
            return RP_DET_NO_MEMORY;
        }
        e->n = n;
        e->key = key;
        e->id = ++d->next_id;
        if ((size_t)(e - d->slots) >= d->used_to)
            d->used_to = (size_t)(e - d->slots) + 1;
        index_add(d, e);
    }
    e->seen++;
    e->last_use = d->clock;
    if (d->by_structure)
        note_content(e, ops, n);
    *entry = e;
    if (e->state == RP_DET_CAPTURED)
        return RP_DET_HAS_GRAPH;
    if (e->seen < d->warmup ||
        (d->by_structure && e->ndistinct <= d->min_distinct && !keeps_changing(d, e)))
        return RP_DET_WARMING;
    if (e->seen < e->retry_at)
        return RP_DET_BACKING_OFF;
    if (!e->ops && keep_copy(e, ops, n) != 0)
        return RP_DET_NO_MEMORY; /* the capture is made from this copy */
    return RP_DET_CAPTURE;
}

rp_det_verdict rp__det_diverging(rp_detector *d, rp_det_entry *e, rp_det_verdict v,
                                 int diverged)
{
    if (!diverged) {
        e->diverging = 0;
        return v;
    }
    if (e->diverging < UINT_MAX)
        e->diverging++;
    if (v != RP_DET_WARMING || !d->by_structure || !e->ops || e->seen < d->warmup ||
        e->diverging < changing_run(d))
        return v;
    return e->seen < e->retry_at ? RP_DET_BACKING_OFF : RP_DET_CAPTURE;
}

/* The failure count is kept: a capture that works but whose graph then
 * fails (and is dropped) must back off further each time. It is cleared by
 * rp__det_paid_off once the graph has proved itself. */
void rp__det_captured(rp_detector *d, rp_det_entry *e)
{
    (void)d;
    e->state = RP_DET_CAPTURED;
}

void rp__det_paid_off(rp_det_entry *e)
{
    e->failures = 0;
}

static void back_off(rp_detector *d, rp_det_entry *e)
{
    unsigned int shift = e->failures < 20 ? e->failures : 20;
    e->failures++;
    e->retry_at = e->seen + ((uint64_t)d->warmup << (shift + 1));
}

void rp__det_capture_failed(rp_detector *d, rp_det_entry *e)
{
    back_off(d, e);
    e->capture_failed = 1;
}

void rp__det_held_off(rp_detector *d, rp_det_entry *e)
{
    back_off(d, e);
    e->capture_failed = 0;
}

void rp__det_forget_graph(rp_detector *d, rp_det_entry *e)
{
    (void)d;
    e->state = RP_DET_COUNTING;
    e->seen = 0;
    e->retry_at = 0;
    e->ndistinct = 0;
    e->fresh = 0;
    e->diverging = 0;
}
