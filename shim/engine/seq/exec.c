/* exec.c - a sequence's executables and what they hold: node updates that
 * bring an executable to an occurrence's values (DESIGN.md §5: volatile
 * fields set on the executable before a launch), and, for contents that
 * come back (buffers in rotation), an executable per content, so that
 * their replays update nothing (docs/engine.md, "Contents that come
 * back"). The values come from the matcher's view of the deferred
 * occurrence (rp_vals). Runs under the context's lock. */
#include "seq.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Set op `k`'s node of the executable to the values of `op` (same structure,
 * volatile fields changed: arguments, addresses, values, a kernel's grid,
 * block and shared memory, a copy's size). The node is named by s->ex.nodes[k], a node of the
 * graph the executable was instantiated from, also when it was since updated
 * to another graph (the driver accepts no other handle: capture.c,
 * take_over). Returns the driver's answer. */
static CUresult update_kernel(rp_seq *s, struct rp_vol *e, const rp_op *op, const unsigned int *g,
                              const uint8_t *params)
{
    size_t k = e->k;
    CUDA_KERNEL_NODE_PARAMS_v2 *np = e->np;
    /* `op` names the function (the sequence's own op, or the deferred one
     * when it switched: RP_VOL_FUNC), whose layout lays the bytes out. */
    int own = op->func == s->det->ops[k].func;
    if (RP_LIKELY(own && np && params && e->pbase == params)) {
        /* The node's parameters made for this block: every field but the
         * geometry is the same (the function's and its handle kind, the
         * pointers into the block). Never for no block (a kernel without
         * parameters): pbase is NULL too before any is made. */
        memcpy(&np->gridDimX, g, 7 * sizeof(unsigned int));
        return rp__eng.drv->cuGraphExecKernelNodeSetParams_v2(s->exec, s->ex.nodes[k], np);
    }
    rp_ctxstate *cs = s->cs;
    const rp_param_layout *L = own && s->lay && s->lay[k] ? s->lay[k] : rp__rec_layout(cs, op);
    if (NEVER(!L || L->total != op->param_bytes))
        return CUDA_ERROR_INVALID_VALUE; /* a volatile kernel has a layout */
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    void *ptrs[RP_MAX_PARAMS], **kp = ptrs;
    if (own && np) /* made once for this block, kept for the next update from it */
        kp = (void **)(np + 1);
    else
        np = &p;
    for (uint32_t i = 0; i < L->n; i++)
        kp[i] = (void *)(params + L->off[i]);
    /* Every field set once (no clearing first); the geometry copied as
     * the seven consecutive words it is in both. */
    _Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes) ==
                       offsetof(CUDA_KERNEL_NODE_PARAMS_v2, gridDimX) + 6 * sizeof(unsigned int),
                   "a kernel node's geometry is seven consecutive unsigned ints");
    int handle = (op->flags & RP_OPF_KERNEL_HANDLE) != 0;
    np->func = handle ? NULL : op->func;
    memcpy(&np->gridDimX, g, 7 * sizeof(unsigned int));
    np->kernelParams = L->n ? kp : NULL;
    np->extra = NULL;
    np->kern = handle ? (CUkernel)op->func : NULL;
    np->ctx = handle ? cs->ctx : NULL;
    if (np != &p)
        e->pbase = params;
    return rp__eng.drv->cuGraphExecKernelNodeSetParams_v2(s->exec, s->ex.nodes[k], np);
}

/* The same for a memset or a copy, from its deferred record. */
static CUresult update_node(rp_seq *s, size_t k, const rp_op *op)
{
    rp_ctxstate *cs = s->cs;
    switch (op->kind) {
    case RP_OP_KERNEL:
        (void)NEVER(1); /* kernels are update_kernel's */
        return CUDA_ERROR_INVALID_VALUE;
    case RP_OP_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        p.dst = op->dst;
        p.value = op->value;
        p.elementSize = op->elem;
        p.width = op->bytes;
        p.height = 1;
        return rp__eng.drv->cuGraphExecMemsetNodeSetParams(s->exec, s->ex.nodes[k], &p, cs->ctx);
    }
    default: {
        CUDA_MEMCPY3D p;
        memset(&p, 0, sizeof p);
        p.WidthInBytes = op->bytes;
        p.Height = 1;
        p.Depth = 1;
        if (op->kind == RP_OP_HTOD) {
            p.srcMemoryType = CU_MEMORYTYPE_HOST;
            p.srcHost = rp__op_staged(op) ? s->sealed.staging[s->stage_of[k]].ptr : op->host;
        } else {
            p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            p.srcDevice = op->src;
        }
        if (op->kind == RP_OP_DTOH) {
            p.dstMemoryType = CU_MEMORYTYPE_HOST;
            p.dstHost = op->host;
        } else {
            p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
            p.dstDevice = op->dst;
        }
        return rp__eng.drv->cuGraphExecMemcpyNodeSetParams(s->exec, s->ex.nodes[k], &p, cs->ctx);
    }
    }
}

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
static inline void kernel_values(const rp_vals *v, const rp_seq *s, size_t k, const rp_op **f,
                                 const unsigned int **g, const uint8_t **p)
{
    if (v->borrowed && k >= v->from) {
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

/* A deferred memset's or copy's values: its record's, or, when the fast
 * path deferred it unwritten (rp__match_offer), the sequence's op with the
 * arena's values, made in `tmp`. */
static inline const rp_op *other_values(const rp_vals *v, const rp_seq *s, size_t k, rp_op *tmp)
{
    if (!(v->borrowed && k >= v->from))
        return &v->def[k];
    *tmp = s->det->ops[k];
    rp__arena_get_other(arena_at(v, s, k), tmp);
    return tmp;
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
static inline int held_same_in(rp_op *held, const rp_vals *v, rp_seq *s, size_t k,
                               uint32_t how)
{
    const rp_op *h = &held[k];
    if (how == RP_VOL_OTHER) {
        rp_op tmp;
        return rp__op_same_content(h, other_values(v, s, k, &tmp));
    }
    if (how == RP_VOL_VER && s->ex.occ_ver[k])
        return s->ex.occ_ver[k] == held_ver(s, held, k);
    const rp_op *f;
    const unsigned int *g;
    const uint8_t *p;
    kernel_values(v, s, k, &f, &g, &p);
    return how == RP_VOL_VER ? held_equal(h, f, g, p) : small_held(h, f, g, p);
}

static inline int held_same(const rp_vals *v, rp_seq *s, const struct rp_vol *e)
{
    return held_same_in(s->ex.held, v, s, e->k, e->how);
}

/* The hash of an op's values: a kernel's by the number of its values'
 * version (0, none: a value no other content has), or, for a small block,
 * by what its mask may change of them (small_hash); a copy's or memset's
 * addresses, size and value. Only ever a proposal, checked value by value
 * (held_same). */
static inline uint64_t ver_hash(uint64_t h, uint64_t id)
{
    static _Thread_local uint64_t none;
    return rp__acc(h, id ? id : (1ull << 63) | ++none);
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

/* The hash of a content no other has (one with an RP_VOL_FRESH kernel; never 0). */
static inline uint64_t content_unique(void)
{
    uint64_t h = rp__fin(ver_hash(RP_HASH_SEED, 0));
    return h ? h : 1;
}

/* The hash of the values of `s`'s volatile ops: those deferred on `st`
 * (held NULL), or those `held` records (never 0). */
static uint64_t content_hash(const rp_vals *v, rp_seq *s, rp_op *held)
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

/* Alternate j becomes `exec`: `exec` and its values wait among the others. */
static void swap_in(rp_seq *s, unsigned int j)
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
 * fork/join one, or one with staging. */
static int hashes_current(const rp_seq *s)
{
    return s->ex.hashed_widened == s->ex.widened && s->ex.held_hash;
}

/* (`h`: the content's hash, found with its versions (scan_full) while
 * every hash was current; 0: not yet.) */
static uint64_t choose_exec(const rp_vals *v, rp_seq *s, uint64_t h)
{
    rp_ctxstate *cs = s->cs;
    if (!hashes_current(s)) {
        /* The first time, or fields became volatile since: every hash
         * covers them now. */
        s->ex.hashed_widened = s->ex.widened;
        s->ex.held_hash = content_hash(v, s, s->ex.held);
        for (unsigned int j = 0; j < s->ex.nalt; j++)
            s->ex.alt_hash[j] = content_hash(v, s, s->ex.alt_held[j]);
        memset(s->ex.recent, 0, sizeof s->ex.recent);
    }
    if (!h)
        h = content_hash(v, s, NULL);
    int came_back = 0;
    for (unsigned int i = 0; i < RP_SEQ_RECENT; i++)
        came_back |= s->ex.recent[i] == h;
    s->ex.recent[s->ex.recent_at++ % RP_SEQ_RECENT] = h;
    if (h == s->ex.held_hash)
        return h;
    unsigned int j = 0;
    while (j < s->ex.nalt && s->ex.alt_hash[j] != h)
        j++;
    if (j == s->ex.nalt) {
        if (!came_back || s->ex.nalt == RP_SEQ_ALTS || 1 + s->ex.nalt >= rp__eng.cfg.max_variants ||
            cs->nseqs + cs->nalts >= rp__eng.cfg.max_graphs || !fresh_pays(s) ||
            !captured_memory_live(s))
            return h; /* `exec` is updated */
        rp_op *held;
        CUgraphExec x = rp__exec_alt(s, &held);
        if (!x)
            return h;
        s->ex.alt[j] = x;
        s->ex.alt_held[j] = held;
        s->ex.alt_hash[j] = content_hash(v, s, held);
        s->ex.alt_on[j] = (struct rp_exec_on){0, 0}; /* fresh: every node enabled */
        s->ex.nalt++;
        cs->nalts++;
        cs->counters.variant_execs++;
    } else {
        cs->counters.variant_exec_hits++;
    }
    swap_in(s, j);
    return h;
}

/* Before a part [lo, hi) of an occurrence (its later values unknown): the
 * executable, of those the sequence has, that needs the fewest updates for
 * the part's ops (a rotation's content that came back: none). */
static void choose_exec_for_part(const rp_vals *v, rp_seq *s, size_t lo, size_t hi)
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
        swap_in(s, pick);
}

/* Room for n indices in the context's list of nodes to update (0, or -1). */
static int upd_room(rp_ctxstate *cs, size_t n)
{
    if (n <= cs->capupd)
        return 0;
    size_t *u = rp__realloc(cs->upd, n * sizeof *u);
    if (!u)
        return -1;
    cs->upd = u;
    cs->capupd = n;
    return 0;
}

#define RP_NOT_LISTED SIZE_MAX

/* Bring the executable's volatile fields of ops [lo, hi) to this
 * occurrence's values: only the nodes whose values differ from what the
 * executable holds now (listed in cs->upd by the caller: `listed` of
 * them; RP_NOT_LISTED: found here). Returns
 * CUDA_SUCCESS, the driver's error (the executable may then hold a mix: the
 * sequence is dropped by the caller), or CUDA_ERROR_NOT_READY when more
 * than REPRISE_MAX_UPDATES nodes would change (nothing updated: eager is
 * cheaper). */
static CUresult apply_updates(const rp_vals *v, rp_seq *s, size_t lo, size_t hi, size_t listed)
{
    rp_ctxstate *cs = s->cs;
    size_t n = s->det->n, need = 0;
    if (upd_room(cs, n) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct rp_vols *l = s->ex.vols;
    if (listed != RP_NOT_LISTED)
        need = listed; /* in cs->upd already (scan_full) */
    else
        for (const struct rp_vol *e = vols_from(l, lo), *end = l->e + l->n; e < end && e->k < hi; e++)
            if (!held_same(v, s, e))
                cs->upd[need++] = (size_t)(e - l->e); /* its entry */
    if (!rp__updates_pay(cs, hi - lo, need)) {
        rp__bound_hit(cs, RP_BOUND_UPDATES);
        return CUDA_ERROR_NOT_READY;
    }
    if (need > rp__eng.cfg.cost.max_updates)
        cs->counters.beyond_max_updates++;
    uint64_t t0 = need && rp__eng.cfg.cost.model ? rp__cost_now() : 0;
    for (size_t j = 0; j < need; j++) {
        struct rp_vol *e = &l->e[cs->upd[j]];
        size_t k = e->k;
        rp_op *h = &s->ex.held[k];
        CUresult rc;
        /* The executable then holds every field of the deferred op; the
         * held record keeps its own parameter block (same size:
         * structure) and no payload. */
        if (h->kind == RP_OP_KERNEL) {
            const rp_op *f;
            const unsigned int *g;
            const uint8_t *p;
            kernel_values(v, s, k, &f, &g, &p);
            /* Another function may take other parameter bytes: the held
             * record's block is made to size first (a failure changes
             * nothing). */
            uint8_t *block = h->params;
            if (f->param_bytes != h->param_bytes) {
                block = f->param_bytes ? rp__params_alloc(f->param_bytes) : NULL;
                if (f->param_bytes && !block) {
                    rp__bound_hit(cs, RP_BOUND_MEMORY);
                    return CUDA_ERROR_OUT_OF_MEMORY;
                }
            }
            rc = update_kernel(s, e, f, g, p);
            if (rc == CUDA_SUCCESS) {
                if (block != h->params) {
                    rp__params_free(h->params, h->param_bytes);
                    h->params = block;
                }
                if (rp__op_other_func(h, f))
                    cs->counters.func_updates++;
                h->func = f->func;
                h->fid = f->fid;
                h->param_bytes = f->param_bytes;
                h->ver = s->ex.occ_ver[k];
                memcpy(h->grid, g, 7 * sizeof(unsigned int));
                if (h->param_bytes)
                    memcpy(h->params, p, h->param_bytes);
            } else {
                if (block != h->params)
                    rp__params_free(block, f->param_bytes);
                if (rp__op_other_func(h, f))
                    rp__func_update_refused(cs, rc);
            }
        } else {
            rp_op tmp;
            const rp_op *op = other_values(v, s, k, &tmp);
            rc = update_node(s, k, op);
            if (rc == CUDA_SUCCESS) {
                uint8_t *params = h->params;
                *h = *op;
                h->params = params;
                h->data = NULL;
                h->borrowed = 0;
                if (op->param_bytes)
                    memcpy(params, op->params, op->param_bytes);
            }
        }
        if (rc != CUDA_SUCCESS) {
            cs->counters.update_failures++;
            return rc;
        }
        s->ex.updates++;
        cs->counters.updates++;
    }
    if (t0)
        rp__cost_note(cs, RP_COST_UPDATE, rp__cost_now() - t0, need);
    return CUDA_SUCCESS;
}

/* The versions of the occurrence's volatile kernels of ops [0, hi), found
 * once for this replay (or part), for what follows to compare and hash by
 * their numbers; none unless `numbered` (as scan_full without a hash). */
static void occurrence_versions(const rp_vals *v, rp_seq *s, size_t hi, int numbered)
{
    struct rp_vols *l = s->ex.vols;
    int looked = hi == s->det->n && rp__fresh_clock(s); /* the last part, at such a clock */
    for (struct rp_vol *e = l->e, *end = l->e + l->n; e < end && e->k < hi; e++) {
        size_t k = e->k;
        if (e->how == RP_VOL_FRESH) {
            s->ex.occ_ver[k] = 0; /* none: compared by its bytes */
            if (!looked)
                continue;
        } else if (e->how != RP_VOL_VER) {
            continue;
        } else if (!numbered) {
            s->ex.occ_ver[k] = 0;
            continue;
        }
        const rp_op *f;
        const unsigned int *g;
        const uint8_t *p;
        kernel_values(v, s, k, &f, &g, &p);
        if (e->how == RP_VOL_FRESH)
            rp__fresh_lookup(s, e, f, g, p, 0); /* as scan_full does */
        else
            s->ex.occ_ver[k] = rp__ver_of(s, k, f, g, p);
    }
}

/* A whole occurrence's volatile ops in one pass, as occurrence_versions,
 * content_hash (of the occurrence) and apply_updates' comparison with
 * `held` (the executable's) would take them one after the other, each
 * op's values found once: their versions, the content's hash (returned
 * when `hashing`, the sequence choosing among executables; else 0), and,
 * in cs->upd (room made), the entries `held` does not hold (*listed of
 * them; RP_NOT_LISTED when a held version is not known yet: then
 * apply_updates finds them, asking for it, as before). */
static inline __attribute__((always_inline)) uint64_t
scan_full(const rp_vals *v, rp_seq *s, const rp_op *held, int hashing, size_t *listed)
{
    struct rp_vols *l = s->ex.vols;
    size_t need = 0;
    int known = 1;
    uint64_t h = RP_HASH_SEED;
    for (struct rp_vol *e = l->e, *end = l->e + l->n; e < end; e++) {
        size_t k = e->k;
        const rp_op *hk = &held[k];
        int same;
        if (e->how == RP_VOL_OTHER) {
            rp_op tmp;
            const rp_op *op = other_values(v, s, k, &tmp);
            if (hashing)
                h = op_values_hash(h, op);
            same = rp__op_same_content(hk, op);
        } else {
            const rp_op *f;
            const unsigned int *g;
            const uint8_t *p;
            kernel_values(v, s, k, &f, &g, &p);
            if (e->how == RP_VOL_VER && !hashing) {
                /* No hash made (the sequence does not choose among
                 * executables, or its content is unique: an op
                 * unversioned): no number needed, the held record
                 * compared as a version would be (numbered when asked:
                 * held_ver). */
                s->ex.occ_ver[k] = 0;
                same = held_equal(hk, f, g, p);
            } else if (e->how == RP_VOL_VER) {
                uint64_t id = e->again ? rp__ver_again(s, e, f, g, p)
                                       : rp__ver_find(s, e, f, g, p);
                s->ex.occ_ver[k] = id;
                if (hashing)
                    h = ver_hash(h, id);
                known &= hk->ver != 0;
                same = id && id == hk->ver;
            } else if (e->how == RP_VOL_FRESH) {
                s->ex.occ_ver[k] = 0;
                if (hashing)
                    h = ver_hash(h, 0);
                same = rp__fresh_same(e, hk, f, g, p);
                if (RP_UNLIKELY(same || rp__fresh_clock(s)))
                    rp__fresh_lookup(s, e, f, g, p, same);
            } else {
                if (hashing)
                    h = small_hash(h, e, g, p, f->param_bytes);
                same = small_held(hk, f, g, p);
            }
        }
        if (!same)
            s->cs->upd[need++] = (size_t)(e - l->e);
    }
    *listed = known ? need : RP_NOT_LISTED;
    if (!hashing)
        return 0;
    h = rp__fin(h);
    return h ? h : 1;
}

/* Whether a replay's versions are looked up: for the content's hash alone,
 * which a sequence choosing among executables makes while none of its ops
 * is unversioned (else the content is unique: content_hash). Tested where
 * each call needs it: kept in a variable, GCC laid rp__exec_prepare out
 * with 3-4 instructions an op more on CuPy's groups. */
static inline int numbered(const rp_seq *s, int choosing)
{
    return choosing && !s->ex.nfresh;
}

CUresult rp__exec_prepare(rp_seq *s, const rp_vals *v, size_t lo, size_t hi)
{
    size_t n = s->det->n;
    int choosing = s->vmask && rp__eng.cfg.max_variants > 1 && !s->origin && !s->fj.multi &&
                   !s->sealed.nstaging;
    uint64_t found = 0;            /* the content's hash, found with its versions */
    size_t listed = RP_NOT_LISTED; /* the updates `exec` needs, found with them */
    const rp_op *listed_for = NULL;
    if (s->vmask) {
        if ((!s->ex.occ_ver && rp__ver_init(s) != 0) || !rp__seq_vols(s))
            return CUDA_ERROR_OUT_OF_MEMORY;
        if (hi == n)
            s->ex.vclock++; /* an occurrence replayed in full: the versions' clock */
        if (!lo && hi == n && (!choosing || hashes_current(s)) && n <= s->cs->capupd) {
            /* The common case, a whole occurrence: one pass (only with
             * the room made already: apply_updates makes it, after the
             * versions' allocations, an order the fault sweeps see). */
            listed_for = s->ex.held;
            /* (two calls, each inlined with `hashing` known: one call
             * with it unknown cost 1-3 an op) */
            found = numbered(s, choosing) ? scan_full(v, s, listed_for, 1, &listed)
                                          : scan_full(v, s, listed_for, 0, &listed);
        } else {
            occurrence_versions(v, s, hi, numbered(s, choosing));
        }
    }
    /* Only an occurrence's last part knows every value its content hash
     * covers: a part before it runs on the executable that holds most of
     * its values. */
    uint64_t h = 0;
    if (choosing && hi == n)
        h = choose_exec(v, s, found);
    else if (choosing && s->ex.nalt)
        choose_exec_for_part(v, s, lo, hi);
    if (s->ex.held != listed_for) /* another executable chosen: its own updates */
        listed = RP_NOT_LISTED;
    CUresult rc = s->vmask ? apply_updates(v, s, lo, hi, listed) : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS && h && !lo)
        s->ex.held_hash = h; /* it holds this content now */
    else if (rc == CUDA_SUCCESS && choosing && s->ex.held_hash)
        s->ex.held_hash = content_hash(v, s, s->ex.held); /* a part of it */
    return rc;
}
