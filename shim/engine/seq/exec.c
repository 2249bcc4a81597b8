/* exec.c - a sequence's executables and what they hold: node updates that
 * bring an executable to an occurrence's values (DESIGN.md §5: volatile
 * fields set on the executable before a launch), on the executable
 * chosen for its content (contents.c). The values come from the matcher's
 * view of the deferred occurrence (rp_vals, read as held.h reads them).
 * Runs under the context's lock. */
#include "held.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Set op `k`'s node of the executable to the values of `op` (same structure,
 * volatile fields changed: arguments, addresses, values, a kernel's grid,
 * block and shared memory, a copy's size). The node is named by s->ex.nodes[k], a node of the
 * graph the executable was instantiated from, also when it was since updated
 * to another graph (the driver accepts no other handle: capture.c,
 * take_over). Returns the driver's answer. */
/* The update of a node whose parameters `np` (rp_vol.np) were made for the
 * block its values lie in: every field but the geometry `g` is the same
 * (the function's and its handle kind, the pointers into the block). */
static inline __attribute__((always_inline)) CUresult
update_geometry(rp_seq *s, size_t k, CUDA_KERNEL_NODE_PARAMS_v2 *np, const unsigned int *g)
{
    memcpy(&np->gridDimX, g, 7 * sizeof(unsigned int));
    return rp__eng.drv->cuGraphExecKernelNodeSetParams_v2(s->exec, s->ex.nodes[k], np);
}

static inline __attribute__((always_inline)) CUresult
update_kernel(rp_seq *s, struct rp_vol *e, const rp_op *op, const unsigned int *g,
              const uint8_t *params)
{
    size_t k = e->k;
    CUDA_KERNEL_NODE_PARAMS_v2 *np = e->np;
    /* `op` names the function (the sequence's own op, or the deferred one
     * when it switched: RP_VOL_FUNC), whose layout lays the bytes out. */
    int own = op->func == s->det->ops[k].func;
    if (RP_LIKELY(own && np && params && e->pbase == params)) {
        /* The node's parameters made for this block. Never for no block
         * (a kernel without parameters): pbase is NULL too before any is
         * made. */
        return update_geometry(s, k, np, g);
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
static inline __attribute__((always_inline)) CUresult update_node(rp_seq *s, size_t k,
                                                                  const rp_op *op)
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

/* Held record `h` of kernel op k, of the function its values are of, made
 * to hold them (its node updated to them): geometry `g`, parameters `p`,
 * and their version's number found for this replay. */
static inline __attribute__((always_inline)) void held_takes(rp_seq *s, rp_op *h, size_t k,
                                                             const unsigned int *g,
                                                             const uint8_t *p)
{
    h->ver = s->ex.occ_ver[k];
    memcpy(h->grid, g, 7 * sizeof(unsigned int));
    if (h->param_bytes)
        memcpy(h->params, p, h->param_bytes);
}

/* Bring the executable's volatile fields of ops [lo, hi) to this
 * occurrence's values: only the nodes whose values differ from what the
 * executable holds now (listed in cs->upd by the caller: `listed` of
 * them; RP_NOT_LISTED: found here). Returns
 * CUDA_SUCCESS, the driver's error (the executable may then hold a mix: the
 * sequence is dropped by the caller), or CUDA_ERROR_NOT_READY when more
 * than REPRISE_MAX_UPDATES nodes would change (nothing updated: eager is
 * cheaper). */
static inline __attribute__((always_inline)) CUresult
apply_updates(const rp_vals *v, const uint64_t *own_recs, rp_seq *s, size_t lo, size_t hi,
              size_t listed)
{
    rp_ctxstate *cs = s->cs;
    size_t n = s->det->n, need = 0;
    if (upd_room(cs, n) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct rp_vols *l = s->ex.vols;
    if (listed != RP_NOT_LISTED)
        need = listed; /* in cs->upd already (scan_full) */
    else
        for (const struct rp_vol *e = vols_from(l, lo), *end = l->e + l->n; e < end && e->k < hi;
             e++)
            if (!held_same_of(s->ex.held, v, own_recs, s, e->k, e->how))
                cs->upd[need++] = (size_t)(e - l->e); /* its entry */
    if (!rp__updates_pay(cs, hi - lo, need)) {
        rp__bound_hit(cs, RP_BOUND_UPDATES);
        return CUDA_ERROR_NOT_READY;
    }
    if (need > rp__eng.cfg.cost.max_updates)
        cs->counters.beyond_max_updates++;
    uint64_t t0 = need && rp__eng.cfg.cost.model ? rp__cost_now() : 0;
    const uint8_t *arena = v->borrowed ? v->arena : NULL;
    for (size_t j = 0; j < need; j++) {
        struct rp_vol *e = &l->e[cs->upd[j]];
        size_t k = e->k;
        rp_op *h = &s->ex.held[k];
        CUresult rc;
        const rp_op *own = &s->det->ops[k];
        /* The executable then holds every field of the deferred op; the
         * held record keeps its own parameter block (same size:
         * structure) and no payload. */
        if (RP_LIKELY(arena && k >= v->from && !rp__vals_own(own_recs, k) &&
                      h->kind == RP_OP_KERNEL && e->np && !rp__op_other_func(h, own) &&
                      e->pbase == arena + s->match.poff[k] + RP_ARENA_GEOMETRY)) {
            /* The common update, in place: the fast path's values (the
             * sequence's function, the held record's), the node's
             * parameters made for this block (update_kernel's first case). */
            const unsigned int *g = (const unsigned int *)(const void *)(arena + s->match.poff[k]);
            rc = update_geometry(s, k, e->np, g);
            if (rc == CUDA_SUCCESS)
                held_takes(s, h, k, g, e->pbase);
        } else if (h->kind == RP_OP_KERNEL) {
            const rp_op *f;
            const unsigned int *g;
            const uint8_t *p;
            kernel_values_of(v, own_recs, s, k, &f, &g, &p);
            /* Another function may take other parameter bytes: the held
             * record's block is made to size first (a failure changes
             * nothing). */
            int other = rp__op_other_func(h, f); /* else the function's fields stay */
            uint8_t *block = h->params;
            if (f->param_bytes != h->param_bytes) {
                block = f->param_bytes ? rp__params_alloc(f->param_bytes) : NULL;
                if (f->param_bytes && !block) {
                    rp__bound_hit(cs, RP_BOUND_MEMORY);
                    return CUDA_ERROR_OUT_OF_MEMORY;
                }
            }
            rc = update_kernel(s, e, f, g, p);
            if (RP_UNLIKELY(other) && rc == CUDA_SUCCESS) {
                if (block != h->params) {
                    rp__params_free(h->params, h->param_bytes);
                    h->params = block;
                }
                cs->counters.func_updates++;
                h->func = f->func;
                h->fid = f->fid;
                h->param_bytes = f->param_bytes;
            } else if (RP_UNLIKELY(other)) {
                if (block != h->params)
                    rp__params_free(block, f->param_bytes);
                rp__func_update_refused(cs, rc);
            }
            if (rc == CUDA_SUCCESS)
                held_takes(s, h, k, g, p);
        } else {
            rp_op tmp;
            const rp_op *op = other_values_of(v, own_recs, s, k, &tmp);
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
static void occurrence_versions(const rp_vals *v, const uint64_t *own_recs, rp_seq *s, size_t hi,
                                int numbered)
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
        kernel_values_of(v, own_recs, s, k, &f, &g, &p);
        if (e->how == RP_VOL_FRESH)
            rp__fresh_lookup(s, e, f, g, p, 0); /* as scan_full does */
        else
            s->ex.occ_ver[k] = rp__ver_of(s, k, f, g, p);
    }
}

/* A whole occurrence's volatile ops in one pass, as occurrence_versions,
 * rp__content_hash (of the occurrence) and apply_updates' comparison with
 * `held` (the executable's) would take them one after the other, each
 * op's values found once: their versions, the content's hash (returned
 * when `hashing`, the sequence choosing among executables; else 0), and,
 * in cs->upd (room made), the entries `held` does not hold (*listed of
 * them; RP_NOT_LISTED when a held version is not known yet: then
 * apply_updates finds them, asking for it, as before). */
static inline __attribute__((always_inline)) uint64_t
scan_full(const rp_vals *v, const uint64_t *own_recs, rp_seq *s, const rp_op *held, int hashing,
          size_t *listed)
{
    struct rp_vols *l = s->ex.vols;
    size_t need = 0, *upd = s->cs->upd;
    int known = 1;
    uint64_t h = RP_HASH_SEED;
    for (size_t i = 0; i < l->n; i++) {
        struct rp_vol *e = &l->e[i];
        size_t k = e->k;
        const rp_op *hk = &held[k];
        int same;
        if (e->how == RP_VOL_OTHER) {
            rp_op tmp;
            const rp_op *op = other_values_of(v, own_recs, s, k, &tmp);
            if (hashing)
                h = op_values_hash(h, op);
            same = rp__op_same_content(hk, op);
        } else {
            const rp_op *f;
            const unsigned int *g;
            const uint8_t *p;
            kernel_values_of(v, own_recs, s, k, &f, &g, &p);
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
            upd[need++] = i;
    }
    *listed = known ? need : RP_NOT_LISTED;
    if (!hashing)
        return 0;
    h = rp__fin(h);
    return h ? h : 1;
}

/* Whether a replay's versions are looked up: for the content's hash alone,
 * which a sequence choosing among executables makes while none of its ops
 * is unversioned (else the content is unique: rp__content_hash). Tested where
 * each call needs it: kept in a variable, GCC laid rp__exec_prepare out
 * with 3-4 instructions an op more on CuPy's groups. */
static inline int numbered(const rp_seq *s, int choosing)
{
    return choosing && !s->ex.nfresh;
}

static inline __attribute__((always_inline)) CUresult
prepare(rp_seq *s, const rp_vals *v, const uint64_t *own_recs, size_t lo, size_t hi)
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
        if (!lo && hi == n && (!choosing || rp__hashes_current(s)) && n <= s->cs->capupd) {
            /* The common case, a whole occurrence: one pass (only with
             * the room made already: apply_updates makes it, after the
             * versions' allocations, an order the fault sweeps see). */
            listed_for = s->ex.held;
            /* (two calls, each inlined with `hashing` known: one call
             * with it unknown cost 1-3 an op) */
            found = numbered(s, choosing) ? scan_full(v, own_recs, s, listed_for, 1, &listed)
                                          : scan_full(v, own_recs, s, listed_for, 0, &listed);
        } else {
            occurrence_versions(v, own_recs, s, hi, numbered(s, choosing));
        }
    }
    /* Only an occurrence's last part knows every value its content hash
     * covers: a part before it runs on the executable that holds most of
     * its values. */
    uint64_t h = 0;
    if (choosing && hi == n)
        h = found ? rp__choose_exec_known(v, s, found) : rp__choose_exec(v, s, 0);
    else if (choosing && s->ex.nalt)
        rp__choose_exec_for_part(v, s, lo, hi);
    if (s->ex.held != listed_for) /* another executable chosen: its own updates */
        listed = RP_NOT_LISTED;
    CUresult rc = s->vmask ? apply_updates(v, own_recs, s, lo, hi, listed) : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS && h && !lo)
        s->ex.held_hash = h; /* it holds this content now */
    else if (rc == CUDA_SUCCESS && choosing && s->ex.held_hash)
        s->ex.held_hash = rp__content_hash(v, s, s->ex.held); /* a part of it */
    return rc;
}

/* With records among the borrowed ops (rp_vals.own): each op's bit asked. */
static __attribute__((noinline)) CUresult prepare_with_records(rp_seq *s, const rp_vals *v,
                                                               size_t lo, size_t hi)
{
    return prepare(s, v, v->own, lo, hi);
}

CUresult rp__exec_prepare(rp_seq *s, const rp_vals *v, size_t lo, size_t hi)
{
    if (RP_UNLIKELY(v->own))
        return prepare_with_records(s, v, lo, hi);
    return prepare(s, v, NULL, lo, hi); /* no op's bit asked */
}
