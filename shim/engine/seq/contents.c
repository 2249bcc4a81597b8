/* contents.c - an executable per content that comes back (buffers in
 * rotation), so that their replays update nothing (docs/engine.md,
 * "Contents that come back"): the hash of a content, and the choice of
 * the executable a replay runs on. Runs under the context's lock. */
#include "held.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The hash of a content no other has (one with an RP_VOL_FRESH kernel; never 0). */
static inline uint64_t content_unique(void)
{
    uint64_t h = rp__fin(ver_hash(RP_HASH_SEED, 0));
    return h ? h : 1;
}

/* The hash of the values of `s`'s volatile ops: those deferred on `st`
 * (held NULL), or those `held` records (never 0). */
uint64_t rp__content_hash(const rp_vals *v, rp_seq *s, rp_op *held)
{
    uint64_t h = RP_HASH_SEED;
    const struct rp_vols *l = s->ex.vols;
    if (s->ex.nfresh)
        return content_unique(); /* what hashing every op would give */
    for (const struct rp_vol *e = l->e, *end = l->e + l->n; e < end; e++) {
        size_t k = e->k;
        if (e->how == RP_VOL_OTHER) {
            rp_op tmp;
            h = op_values_hash(h, held ? &held[k] : other_values(v, s, k, &tmp));
        } else if (e->how == RP_VOL_VER) {
            h = ver_hash(h, held ? held_ver(s, held, k) : s->ex.occ_ver[k]);
        } else if (e->how == RP_VOL_FRESH) {
            h = ver_hash(h, 0); /* a value no other content has */
        } else if (held) {
            h = small_hash(h, e, held[k].grid, held[k].params, held[k].param_bytes);
        } else {
            const rp_op *f;
            const unsigned int *g;
            const uint8_t *p;
            kernel_values(v, s, k, &f, &g, &p);
            h = small_hash(h, e, g, p, f->param_bytes);
        }
    }
    h = rp__fin(h);
    return h ? h : 1;
}

/* Whether a fresh executable, holding the values the graph was captured
 * with, would be replayed: every volatile node updated, as the costs allow
 * (apply_updates). If not, making one would only make the replay eager. */
static int fresh_pays(const rp_seq *s)
{
    return rp__updates_pay(s->cs, s->det->n, s->ex.vols->n);
}

/* Whether a new executable of the sequence's graph could have its volatile
 * nodes updated. Instantiated now, its memset and copy nodes hold the
 * operands of the occurrence the graph was captured from, and the driver
 * takes those as "the original" against which every later update of such a
 * node is checked: cuGraphExecMemcpyNodeSetParams, "The source and
 * destination memory in copyParams must be allocated from the same contexts
 * as the original source and destination memory" (INVALID_VALUE "if the
 * memory operands' mappings changed"); cuGraphExecMemsetNodeSetParams, "The
 * new destination pointer in memsetParams must be to the same kind of
 * allocation as the original destination pointer and have the same context
 * association" (driver API reference, 13.0). An operand freed since the
 * capture lies in no allocation at all, so no update of that node can meet
 * the rule (the CPU driver refuses every one: tests/cpudriver/graph.c,
 * copy_update_ok and memset_update_ok; issue 34, finding 2, where a last
 * part's new executable was refused so). So once the program has freed
 * memory since the capture (any free, unregister or unmap:
 * rp__frees), no executable is made for a sequence with a volatile memset
 * or copy; its replays keep updating the one it has, instantiated while its
 * operands were live. A kernel's arguments are bytes the driver does not
 * check: kernels alone keep their executables per content. */
static int captured_memory_live(const rp_seq *s)
{
    if (rp__frees() == s->ex.frees_at)
        return 1;
    const struct rp_vols *l = s->ex.vols;
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].how == RP_VOL_OTHER)
            return 0;
    return 1;
}

/* Before a replay with updates (returns the hash of its content): run it
 * on the executable that holds its content already, when one of the
 * sequence's does (a rotation of buffers
 * comes back to the same arguments), or on a new one made for it when the
 * content came back within the last RP_SEQ_RECENT replays and the sequence
 * has fewer than REPRISE_MAX_VARIANTS executables (and the context fewer
 * than REPRISE_MAX_GRAPHS). The one chosen becomes `exec`/`held`; the
 * updates (apply_updates) then bring it to the content, none when it holds
 * it. A content that never comes back (a counter) adds nothing: one
 * executable, updated. Hashes only choose: what an executable holds is
 * compared value by value before any replay. Not for a sequence whose
 * executable was taken over (its node handles are another graph's), a
 * fork/join one, or one with staging. `h`: the content's hash, found with
 * its versions (exec.c, scan_full) while every hash was current; 0: not
 * yet. */
uint64_t rp__choose_exec(const rp_vals *v, rp_seq *s, uint64_t h)
{
    if (!rp__hashes_current(s)) {
        /* The first time, or fields became volatile since: every hash
         * covers them now. */
        s->ex.hashed_widened = s->ex.widened;
        s->ex.held_hash = rp__content_hash(v, s, s->ex.held);
        for (unsigned int j = 0; j < s->ex.nalt; j++)
            s->ex.alt_hash[j] = rp__content_hash(v, s, s->ex.alt_held[j]);
        memset(s->ex.recent, 0, sizeof s->ex.recent);
    }
    if (!h)
        h = rp__content_hash(v, s, NULL);
    return rp__choose_exec_known(v, s, h);
}

uint64_t rp__choose_exec_new(const rp_vals *v, rp_seq *s, uint64_t h)
{
    rp_ctxstate *cs = s->cs;
    unsigned int j = s->ex.nalt;
    if (s->ex.nalt == RP_SEQ_ALTS || 1 + s->ex.nalt >= rp__eng.cfg.max_variants ||
        cs->nseqs + cs->nalts >= rp__eng.cfg.max_graphs || !fresh_pays(s) ||
        !captured_memory_live(s))
        return h; /* `exec` is updated */
    rp_op *held;
    CUgraphExec x = rp__exec_alt(s, &held);
    if (!x)
        return h;
    s->ex.alt[j] = x;
    s->ex.alt_held[j] = held;
    s->ex.alt_hash[j] = rp__content_hash(v, s, held);
    s->ex.alt_on[j] = (struct rp_exec_on){0, 0}; /* fresh: every node enabled */
    s->ex.nalt++;
    cs->nalts++;
    cs->counters.variant_execs++;
    rp__swap_in(s, j);
    return h;
}

/* Before a part [lo, hi) of an occurrence (its later values unknown): the
 * executable, of those the sequence has, that needs the fewest updates for
 * the part's ops (a rotation's content that came back: none). */
void rp__choose_exec_for_part(const rp_vals *v, rp_seq *s, size_t lo, size_t hi)
{
    const struct rp_vols *l = s->ex.vols;
    const struct rp_vol *from = vols_from(l, lo), *end = l->e + l->n, *e;
    size_t best = 0;
    for (e = from; e < end && e->k < hi; e++)
        best += !held_same(v, s, e);
    unsigned int pick = RP_SEQ_ALTS;
    for (unsigned int j = 0; best && j < s->ex.nalt; j++) {
        size_t need = 0;
        for (e = from; e < end && e->k < hi && need < best; e++)
            need += !held_same_in(s->ex.alt_held[j], v, s, e->k, e->how);
        if (need < best)
            best = need, pick = j;
    }
    if (pick != RP_SEQ_ALTS)
        rp__swap_in(s, pick);
}
