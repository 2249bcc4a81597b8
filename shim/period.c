/* period.c - the period of a stream's op shapes (period.h). */
#include "period.h"

#include <stdlib.h>
#include <string.h>

#define RING_MASK (RP_PERIOD_RING - 1)
#define HEAD_MASK (RP_PERIOD_HEAD - 1)

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

int rp__period_init(rp_period *p)
{
    memset(p, 0, sizeof *p);
    p->ring = malloc(RP_PERIOD_RING * sizeof *p->ring);
    p->head = calloc(RP_PERIOD_HEAD, sizeof *p->head);
    if (!p->ring || !p->head) {
        rp__period_fini(p);
        return -1;
    }
    for (size_t i = 0; i < RP_PERIOD_RING; i++)
        p->ring[i].pos = UINT64_MAX;
    return 0;
}

void rp__period_fini(rp_period *p)
{
    free(p->ring);
    free(p->head);
    memset(p, 0, sizeof *p);
}

/* The op remembered at position q, or NULL if it was not observed (or has
 * left the ring). */
static const struct rp_period_op *at(const rp_period *p, uint64_t q)
{
    const struct rp_period_op *o = &p->ring[q & RING_MASK];
    return o->pos == q ? o : NULL;
}

/* Where a step starts, for period d seen up to `pos`: the start of the
 * window whose hash is smallest among the last d. The same op wins in every
 * period, so the cut does not depend on where the stream began. */
static uint64_t winnow(const rp_period *p, uint64_t pos, uint64_t d)
{
    uint64_t best = UINT64_MAX, at_pos = pos;
    for (uint64_t q = pos + 1 - d; q <= pos; q++) {
        const struct rp_period_op *o = at(p, q);
        if (o && o->win && o->win < best) {
            best = o->win;
            at_pos = q;
        }
    }
    return at_pos + 1 - RP_PERIOD_WINDOW;
}

/* Track distance c (proposed by the hash head, its window already equal):
 * in a free slot, or in place of the one with the shortest run. */
static void track(rp_period *p, uint64_t c)
{
    int victim = 0;
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        if (p->slot[i].d == c)
            return;
        if (p->slot[i].run < p->slot[victim].run)
            victim = i;
    }
    p->slot[victim].d = c;
    p->slot[victim].run = RP_PERIOD_WINDOW;
}

int rp__period_feed(rp_period *p, uint64_t pos, uint64_t key, unsigned int min_repeats,
                    uint64_t min_len)
{
    if (!p->ring)
        return 0;
    /* The window of the last RP_PERIOD_WINDOW shapes ending here. */
    uint64_t win = mix(0x9e3779b97f4a7c15ull, key);
    for (uint64_t i = 1; i < RP_PERIOD_WINDOW && win; i++) {
        const struct rp_period_op *o = pos >= i ? at(p, pos - i) : NULL;
        win = o ? mix(win, o->key) : 0;
    }
    struct rp_period_op *e = &p->ring[pos & RING_MASK];
    e->pos = pos;
    e->key = key;
    e->win = win | (win != 0); /* 0 means "incomplete" */
    /* Every tracked distance: one more op in a row matching, or none. */
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        uint64_t d = p->slot[i].d;
        const struct rp_period_op *o = d && pos >= d ? at(p, pos - d) : NULL;
        if (o)
            p->slot[i].run = o->key == key ? p->slot[i].run + 1 : 0;
    }
    if (p->d) {
        const struct rp_period_op *o = pos >= p->d ? at(p, pos - p->d) : NULL;
        if (o)
            p->misses = o->key == key ? 0 : p->misses + 1;
    }
    /* The hash head proposes the distance to where this window last was. */
    if (e->win) {
        uint64_t *h = &p->head[e->win & HEAD_MASK];
        if (*h) {
            uint64_t prev = *h - 1;
            const struct rp_period_op *o = at(p, prev);
            if (o && o->win == e->win && pos - prev < RP_PERIOD_RING / 2)
                track(p, pos - prev);
        }
        *h = pos + 1;
    }
    /* Accept the longest distance over which a whole repetition (or
     * `min_repeats` of them), and at least RP_PERIOD_MIN_RUN ops, matched:
     * shapes drawn at random from a few kernels match at short distances
     * now and then, never for that long. A period that is matching keeps
     * its place against shorter ones; one that stopped matching gives way. */
    uint64_t ok[RP_PERIOD_SLOTS];
    int nok = 0;
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        uint64_t d = p->slot[i].d, need = d * (min_repeats ? min_repeats : 1);
        if (need < RP_PERIOD_MIN_RUN)
            need = RP_PERIOD_MIN_RUN;
        if (d && d >= min_len && p->slot[i].run >= need)
            ok[nok++] = d;
    }
    /* A multiple of a period that matches matches too, and says nothing
     * more: it is proposed when ops went unobserved (replayed) between two
     * occurrences of a window. The longest that is not a multiple of
     * another wins. */
    uint64_t best = 0;
    for (int i = 0; i < nok; i++) {
        int multiple = 0;
        for (int j = 0; j < nok && !multiple; j++)
            multiple = ok[j] < ok[i] && ok[i] % ok[j] == 0;
        if (!multiple && ok[i] > best)
            best = ok[i];
    }
    int changed = 0;
    if (best && best != p->d && (!p->d || best > p->d || p->misses)) {
        p->d = best;
        p->base = winnow(p, pos, best);
        p->misses = 0;
        p->found++;
        changed = 1;
    } else if (p->d && p->misses >= p->d) {
        /* A whole period without the step coming back: it is over. */
        p->d = 0;
        p->misses = 0;
        p->dropped++;
        changed = 1;
    }
    return changed;
}

int rp__period_cut_before(const rp_period *p, uint64_t pos, uint64_t chunk)
{
    if (!p->d || pos < p->base)
        return 0;
    uint64_t off = (pos - p->base) % p->d;
    return off == 0 || (chunk && off % chunk == 0);
}
