/* period.c - the period of a stream's op shapes (period.h). */
#include "period.h"

#include "alloc.h"

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

int rp__period_init(rp_period *p, unsigned int min_repeats, uint64_t min_len, uint64_t span)
{
    memset(p, 0, sizeof *p);
    p->min_repeats = min_repeats ? min_repeats : 1;
    p->min_len = min_len;
    p->span = span;
    p->ring = rp__calloc(RP_PERIOD_RING, sizeof *p->ring);
    p->head = rp__calloc(RP_PERIOD_HEAD, sizeof *p->head);
    p->count = rp__calloc(RP_PERIOD_HEAD, sizeof *p->count);
    if (!p->ring || !p->head || !p->count) {
        rp__period_fini(p);
        return -1;
    }
    for (int i = 0; i < RP_PERIOD_SLOTS; i++)
        p->slot[i].need = UINT64_MAX; /* no distance yet */
    return 0;
}

void rp__period_fini(rp_period *p)
{
    free(p->ring);
    free(p->head);
    free(p->count);
    memset(p, 0, sizeof *p);
}

/* The op remembered at position q, or NULL if it was not observed (or has
 * left the ring). */
static const struct rp_period_op *at(const rp_period *p, uint64_t q)
{
    const struct rp_period_op *o = &p->ring[q & RING_MASK];
    return o->pos1 == q + 1 ? o : NULL;
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

/* The run at which distance d qualifies as the period: `min_repeats`
 * whole periods, and at least RP_PERIOD_MIN_RUN ops (UINT64_MAX: shorter
 * than min_len, or no distance: never). */
static uint64_t need_for(const rp_period *p, uint64_t d)
{
    if (!d || d < p->min_len)
        return UINT64_MAX;
    uint64_t need = d * p->min_repeats;
    return need < RP_PERIOD_MIN_RUN ? RP_PERIOD_MIN_RUN : need;
}

/* Track distance c (proposed by the hash head for this window and the one
 * before: its last RP_PERIOD_WINDOW + 1 ops equal those c before):
 * in a free slot, or in place of the one with the shortest run. */
static void track(rp_period *p, uint64_t c, unsigned int *qual)
{
    int victim = 0;
#pragma GCC unroll 4
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        if (p->slot[i].d == c)
            return;
        if (!p->slot[i].d || p->slot[i].run < p->slot[victim].run)
            victim = i;
    }
    p->slot[victim].d = c;
    p->slot[victim].run = RP_PERIOD_WINDOW + 1; /* two windows matched at c */
    p->slot[victim].need = need_for(p, c);
    *qual &= ~(1u << victim); /* its run starts again */
    p->decided = 0;
}

/* A window's hash from its keys (already spread 64-bit hashes): a
 * polynomial, cheap, only ever a proposal checked op by op. */
static inline uint64_t window_hash(const uint64_t *last, uint64_t key)
{
    const uint64_t M = 0x9e3779b97f4a7c15ull;
    uint64_t h = last[0];
    for (unsigned int i = 1; i < RP_PERIOD_WINDOW - 1; i++)
        h = h * M + last[i];
    h = h * M + key;
    return h ^ (h >> 29);
}

/* Accept the longest distance over which a whole repetition (or
 * `min_repeats` of them), and at least RP_PERIOD_MIN_RUN ops, matched:
 * shapes drawn at random from a few kernels match at short distances now
 * and then, never for that long. A period that is matching keeps its
 * place against shorter ones; one that stopped matching gives way. A
 * multiple of a period that matches matches too, and says nothing more: it
 * is proposed when ops went unobserved (replayed) between two occurrences
 * of a window. The longest that is not a multiple of another wins. Returns
 * 1 when the accepted period changed. */
static int decide(rp_period *p, uint64_t pos, unsigned int qual)
{
    uint64_t best = 0;
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        if (!(qual >> i & 1))
            continue;
        uint64_t d = p->slot[i].d;
        int multiple = 0;
        for (int j = 0; j < RP_PERIOD_SLOTS && !multiple; j++)
            multiple = (qual >> j & 1) && p->slot[j].d < d && d % p->slot[j].d == 0;
        if (!multiple && d > best)
            best = d;
    }
    if (p->landmark && p->lgmin < p->lgap)
        best = 0; /* steps of varying length: the landmark cuts them */
    if (best && best != p->d && (!p->d || best > p->d || p->misses)) {
        p->d = best;
        p->step = 0; /* decided by settle_step */
        p->base = winnow(p, pos, best);
        p->cut_next = 0;
        p->misses = 0;
        p->found++;
        return 1;
    }
    if (p->d && p->misses >= p->d) {
        /* A whole period without the step coming back: it is over. */
        p->d = 0;
        p->step = 0;
        p->misses = 0;
        p->cut_next = 0;
        p->dropped++;
        return 1;
    }
    return 0;
}

/* Whether the ops at q and q - lag were both observed with equal contents. */
static int same_content_at(const rp_period *p, uint64_t q, uint64_t lag)
{
    const struct rp_period_op *a = at(p, q), *b = q >= lag ? at(p, q - lag) : NULL;
    return a && b && a->ckey == b->ckey;
}

/* The window of ops over which the contents at every lag are compared: half
 * the span (at least a period), so that a step is decided from span + span
 * / 2 ops, before the first cut of a stream without boundaries (after
 * REPRISE_MAX_HELD = 2 x span ops). */
static uint64_t refine_window(const rp_period *p)
{
    return p->span / 2 > p->d ? p->span / 2 : p->d;
}

/* The step of the period d, from the last w + m_max d ops (w: the window),
 * all of the same shapes d apart: the multiple m d whose ops' contents
 * equal those m d before most often over the last w ops, 1 unless a longer
 * one does strictly better (shapes find the period, contents choose:
 * DESIGN.md §8). The step starts at the one of its m starts d apart whose
 * steps differ least often from the step before (a counter that changes
 * once a step then changes in one of them, not in two). */
static void refine(rp_period *p, uint64_t pos, uint64_t m_max, uint64_t w)
{
    uint64_t d = p->d, best_m = 1, best = 0;
    for (uint64_t m = 1; m <= m_max; m++) {
        uint64_t same = 0;
        for (uint64_t q = pos + 1 - w; q <= pos; q++)
            same += (uint64_t)same_content_at(p, q, m * d);
        if (m == 1 || same > best)
            best = same, best_m = m;
    }
    uint64_t L = best_m * d, base = p->base;
    if (best_m > 1) {
        /* Whole steps of the ops each compared with the one a step before,
         * for every start. */
        uint64_t lo = pos + 1 - (w + m_max * d - L), fewest = UINT64_MAX;
        for (uint64_t k = 0; k < best_m; k++) {
            uint64_t start = p->base + k * d;
            uint64_t s = lo + (start % L + L - lo % L) % L, differ = 0;
            for (; s + L - 1 <= pos; s += L) {
                int same = 1;
                for (uint64_t q = s; q < s + L && same; q++)
                    same = same_content_at(p, q, L);
                differ += (uint64_t)!same;
            }
            if (differ < fewest)
                fewest = differ, base = start;
        }
    }
    p->step = L;
    p->base = base;
    p->cut_next = 0;
    p->settled++;
    if (best_m > 1)
        p->refined++;
}

/* The step is the period itself. */
static void step_is_period(rp_period *p)
{
    p->step = p->d;
    p->settled++;
}

/* How many ops in a row have matched at distance d (0: it is not tracked). */
static uint64_t run_at(const rp_period *p, uint64_t d)
{
    for (int i = 0; i < RP_PERIOD_SLOTS; i++)
        if (p->slot[i].d == d)
            return p->slot[i].run;
    return 0;
}

/* The accepted period's step, once its ops allow: at once where no
 * multiple fits in `span`; after a run of w + m_max d ops at d otherwise
 * (the step d where the run broke first). */
static void settle_step(rp_period *p, uint64_t pos)
{
    uint64_t d = p->d, m_max = p->span / d;
    if (m_max <= 1) {
        step_is_period(p);
        return;
    }
    uint64_t run = run_at(p, d), w = refine_window(p);
    if (run >= w + m_max * d && pos + 1 >= w + m_max * d)
        refine(p, pos, m_max, w);
    else if (!run || p->misses)
        step_is_period(p);
}

void rp__period_settle(rp_period *p, uint64_t pos)
{
    if (!p->d || p->step)
        return;
    /* The multiples the ops matched so far allow, each compared over at
     * least a period (and at most the window). */
    uint64_t d = p->d, run = run_at(p, d), m_max = p->span / d;
    if (run > pos + 1)
        run = pos + 1;
    while (m_max > 1 && run < (m_max + 1) * d)
        m_max--;
    uint64_t w = m_max > 1 ? run - m_max * d : 0;
    if (w > refine_window(p))
        w = refine_window(p);
    if (m_max > 1)
        refine(p, pos, m_max, w);
    else
        step_is_period(p);
}

/* The hash of the 2 * RP_PERIOD_WINDOW ops ending at q, from the two
 * windows kept in the ring (0: not all of them were observed). A landmark
 * is such a longer window: a step often repeats a shorter one inside it
 * (the same kernels twice), which would come back twice a step. */
static uint64_t win2(const rp_period *p, uint64_t q)
{
    const struct rp_period_op *a = at(p, q);
    const struct rp_period_op *b = q >= RP_PERIOD_WINDOW ? at(p, q - RP_PERIOD_WINDOW) : NULL;
    if (!a || !b || !a->win || !b->win)
        return 0;
    uint64_t h = a->win * 0x9e3779b97f4a7c15ull ^ b->win;
    h ^= h >> 31;
    return h ? h : 1;
}

/* The window `win` ended at `pos`: count it (its slot of the count table),
 * follow the most frequent window, and accept it as the landmark once
 * RP_LANDMARK_GAPS gaps in a row between its occurrences lay within a band
 * (the largest at most 1.5 times the smallest): shapes drawn at random recur
 * at gaps that spread far more. Returns 1 when a landmark was accepted. */
static inline int landmark_feed(rp_period *p, uint64_t pos, uint64_t win)
{
    uint16_t *c = &p->count[win & HEAD_MASK];
    (*c)++; /* at most 2 * RP_LANDMARK_DECAY: halved that often */
    if (win == p->landmark && pos + 1 - p->lm_seen >= (p->lgmin + 1) / 2) {
        /* It came (not again within half its shortest gap: a run of one
         * shape would be a cut on every op): a cut is due after it. */
        p->lmiss = 0;
        p->lm_seen = pos + 1;
    }
    if (win != p->lcand) {
        /* A clearly more frequent window takes over (a margin, so that the
         * windows of a common prefix, equally frequent, do not take turns). */
        if (*c > p->lcand_count + 2) {
            p->lcand = win;
            p->lcand_pos = pos;
            p->lcand_fed = p->fed;
            p->lcand_count = *c;
            p->lrun = 0;
        }
        return 0;
    }
    p->lcand_count = *c;
    uint64_t gap = pos - p->lcand_pos, fed = p->fed - p->lcand_fed;
    p->lcand_pos = pos;
    p->lcand_fed = p->fed;
    if (fed != gap)
        return 0; /* ops between were not fed (replayed): the gap says nothing */
    if (gap < RP_PERIOD_WINDOW || gap >= RP_PERIOD_RING / 4) {
        p->lrun = 0;
        return 0;
    }
    uint64_t lo = p->lrun && p->gmin < gap ? p->gmin : gap;
    uint64_t hi = p->lrun && p->gmax > gap ? p->gmax : gap;
    if (p->lrun && 2 * hi > 3 * lo) { /* out of the band: it starts again */
        p->lrun = 0;
        lo = hi = gap;
    }
    p->gmin = lo;
    p->gmax = hi;
    if (++p->lrun < RP_LANDMARK_GAPS)
        return 0;
    if (p->landmark == win) {
        /* Accepted already: its band follows the latest gaps (a landmark
         * whose steps became equal no longer holds periods off). */
        p->lgmin = p->gmin;
        p->lgap = p->gmax;
        return 0;
    }
    p->landmark = win;
    p->lgmin = p->gmin;
    p->lgap = p->gmax;
    p->lmiss = 0;
    p->lm_seen = p->lm_cut = pos + 1; /* the first cut comes after its next occurrence */
    p->cut_next = 0;
    p->decided = 0; /* which periods are allowed changed */
    p->lfound++;
    if (p->d && p->lgmin < p->lgap) { /* steps of varying length: not a period */
        p->d = 0;
        p->step = 0;
        p->misses = 0;
        p->dropped++;
    }
    return 1;
}

/* One op observed at `pos` (in the ring), for the landmark: counted, and
 * its longer window followed. Returns 1 when the landmark changed. */
static int landmark_op(rp_period *p, uint64_t pos)
{
    int changed = 0;
    if (p->landmark && ++p->lmiss > 4 * p->lgap) {
        p->landmark = 0; /* not seen for four of its longest gaps */
        p->cut_next = 0;
        p->decided = 0; /* periods are allowed again */
        changed = 1;
    }
    if ((++p->fed & (RP_LANDMARK_DECAY - 1)) == 0) { /* the counts fade */
        for (size_t i = 0; i < RP_PERIOD_HEAD; i++)
            p->count[i] >>= 1;
        p->lcand_count >>= 1;
    }
    uint64_t w2 = win2(p, pos);
    if (w2)
        changed |= landmark_feed(p, pos, w2);
    return changed;
}

/* The first period found: the landmark follows the ops observed before
 * too, from the ring, as if it had been looked for from the start. */
static int landmark_catch_up(rp_period *p, uint64_t pos)
{
    int changed = 0;
    uint64_t from = pos >= RP_PERIOD_RING / 2 ? pos - RP_PERIOD_RING / 2 : 0;
    for (uint64_t q = from; q <= pos; q++)
        if (at(p, q))
            changed |= landmark_op(p, q);
    return changed;
}

int rp__period_feed(rp_period *p, uint64_t pos, uint64_t key, uint64_t ckey)
{
    if (!p->ring)
        return 0;
    /* The window of the last RP_PERIOD_WINDOW shapes ending here, from the
     * keys kept of the ops just before (when they were observed). */
    if (p->last_pos != pos) /* not the op after the last one observed */
        p->known = 0;
    uint64_t win = 0;
    if (p->known == RP_PERIOD_WINDOW - 1) {
        win = window_hash(p->last, key);
        win |= win == 0; /* 0 means "incomplete" */
    }
    for (unsigned int i = 0; i + 1 < RP_PERIOD_WINDOW - 1; i++)
        p->last[i] = p->last[i + 1];
    p->last[RP_PERIOD_WINDOW - 2] = key;
    if (p->known < RP_PERIOD_WINDOW - 1)
        p->known++;
    p->last_pos = pos + 1;
    struct rp_period_op *e = &p->ring[pos & RING_MASK];
    e->pos1 = pos + 1;
    e->key = key;
    e->ckey = ckey;
    e->win = win;
    /* Every tracked distance: one more op in a row matching, or none; and
     * which qualify now. */
    unsigned int qual = 0;
#pragma GCC unroll 4
    for (int i = 0; i < RP_PERIOD_SLOTS; i++) {
        uint64_t d = p->slot[i].d, q = pos - d;
        if (!d)
            continue;
        const struct rp_period_op *o = &p->ring[q & RING_MASK];
        if (pos >= d && o->pos1 == q + 1) {
            if (o->key != key) {
                /* The run broke: the slot is free for the next proposal
                 * (the hash head proposes this distance again once a
                 * whole window matches at it). */
                p->slot[i].d = 0;
                p->slot[i].run = 0;
                p->slot[i].need = UINT64_MAX;
                continue;
            }
            p->slot[i].run++;
        }
        qual |= (unsigned int)(p->slot[i].run >= p->slot[i].need) << i;
    }
    uint64_t misses = p->misses;
    if (p->d) {
        const struct rp_period_op *o = pos >= p->d ? at(p, pos - p->d) : NULL;
        if (o)
            p->misses = o->key == key ? 0 : p->misses + 1;
    }
    /* Landmarks are looked for once the stream has shown a period (a
     * stream that never repeats pays nothing for them): its period may be
     * a run of equal steps among steps of varying length. The ops before
     * are caught up with from the ring then (landmark_catch_up). */
    int changed_landmark = p->found ? landmark_op(p, pos) : 0;
    /* The hash head proposes the distance to where this window last was. */
    if (win) {
        uint64_t *h = &p->head[win & HEAD_MASK];
        if (*h) {
            uint64_t prev = *h - 1;
            const struct rp_period_op *o = at(p, prev);
            if (o && o->win == win && pos - prev < RP_PERIOD_RING / 2) {
                /* Tracked once the window before proposed it too: a
                 * window of shapes drawn at random from a few kernels
                 * recurs at some distance most ops, one op longer rarely
                 * (each proposal would displace a tracked distance). */
                uint64_t c = pos - prev;
                if (p->prop == c && p->prop_pos == pos)
                    track(p, c, &qual);
                p->prop = c;
                p->prop_pos = pos + 1;
            }
        }
        *h = pos + 1;
    }
    /* The decision depends only on which slots qualify, the accepted period
     * and its misses: unchanged, it would decide the same again. */
    uint64_t step = p->step;
    if (!((!qual && !p->d) || (p->decided && qual == p->qual && !p->misses && !misses))) {
        uint64_t found = p->found;
        decide(p, pos, qual);
        p->qual = qual;
        p->decided = 1;
        if (!found && p->found)
            changed_landmark |= landmark_catch_up(p, pos);
    }
    if (p->d && !p->step)
        settle_step(p, pos);
    /* A step decided, or none any more (not while one is being decided). */
    int changed = p->step != step && (p->step || !p->d);
    return changed || (changed_landmark && !p->d);
}

/* Keep the first cut at or after `pos` (at least p->base): a step's start,
 * or a chunk's within the step (offsets that are multiples of chunk). */
static void keep_next_cut(rp_period *p, uint64_t pos, uint64_t chunk)
{
    uint64_t L = p->step;
    uint64_t off = (pos - p->base) % L, next = L;
    if (off == 0)
        next = 0;
    else if (chunk && chunk < L)
        next = (off + chunk - 1) / chunk * chunk;
    if (next > L)
        next = L;
    p->cut_from = pos;
    p->cut_next = pos - off + next;
    p->cut_chunk = chunk;
}

int rp__period_cut_before(rp_period *p, uint64_t pos, uint64_t chunk)
{
    if (!p->d) {
        /* The landmark's window ended at the op before. */
        return p->landmark && pos && win2(p, pos - 1) == p->landmark;
    }
    if (!p->step || pos < p->base)
        return 0; /* its step is being decided */
    if (!p->cut_next || pos < p->cut_from || pos > p->cut_next || chunk != p->cut_chunk)
        keep_next_cut(p, pos, chunk);
    if (pos != p->cut_next)
        return 0;
    /* A cut here: the next one is kept already, so that the ops up to it
     * are answered inline (rp__period_no_cut_at) from the one after this. */
    keep_next_cut(p, pos + 1, chunk);
    return 1;
}
