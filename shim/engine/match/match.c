/* replay.c - the matcher: once sequences have graphs, a stream's ops that
 * match a sequence's ops from its first one on are deferred, op by op; a
 * complete match is replayed with one cuGraphLaunch; a divergence flushes
 * the deferred ops eagerly, in order (DESIGN.md §1, §2). Deferral delays; it
 * never reorders, drops or duplicates. The matcher only matches, launches
 * and flushes: it says what it did, and its caller (streams.c) decides
 * where the work goes and hands what ran eagerly to learning. Runs under
 * the lock of the stream's context. */
#include "engine.h"
#include "match.h"

#include <stdlib.h>
#include <string.h>

/* Issue one recorded op of `st` eagerly (a flush): as the program called
 * it (on its own stream: `st`'s, or that of a stream that joined its trace)
 * when `st`'s own stream is the target, else the async form on `target`
 * (another thread's per-thread stream, which no other stream joins). */
static CUresult issue_eager(const rp_stream *st, const rp_op *op, CUstream target)
{
    if (target == st->handle)
        return rp__rec_issue_as_called(st->cs, op);
    return rp__rec_issue(st->cs, op, target, op->data);
}

/* Keep the record of a deferred op, with the bytes of a host-to-device copy
 * from pageable memory copied now: the driver reads them at the call, and
 * the program may reuse its buffer as soon as the call returns. A pinned
 * source is not copied: the driver reads it when the copy runs, after the
 * earlier work of the stream that may fill it (DESIGN.md §2.3). Returns 0,
 * or -1 if memory runs out (the op then runs eagerly). */
int rp__def_reserve(rp_stream *st, size_t want)
{
    if (want <= st->match.capdef)
        return 0;
    size_t cap = st->match.capdef ? 2 * st->match.capdef : 16;
    while (cap < want)
        cap *= 2;
    rp_op *n = rp__realloc(st->match.def, cap * sizeof *n);
    if (!n)
        return -1;
    st->match.def = n;
    st->match.capdef = cap;
    return 0;
}

static int def_room(rp_stream *st)
{
    return rp__def_reserve(st, st->match.ndef + 1);
}

/* Where the fast path put the geometry and the parameters of the launch
 * it deferred as op k of `s`, a sequence with volatile fields
 * (rp_stream.match.arena). */
static uint8_t *arena_of(const rp_stream *st, const rp_seq *s, size_t k)
{
    return st->match.arena + s->match.poff[k];
}

/* Write down the ops the fast path deferred without a record: the
 * sequence's, borrowed, with, for a sequence with volatile fields, the
 * values of the launch (in the arena, also borrowed: a flush copies them). */
static void write_down(rp_stream *st)
{
    rp_seq *s = st->match.borrowed_seq;
    if (!s)
        return;
    st->match.borrowed_seq = NULL;
    for (size_t i = st->match.borrowed_from; i < st->match.ndef; i++) {
        rp_op *d = &st->match.def[i];
        *d = s->det->ops[i];
        d->borrowed = 1;
        d->opno = st->match.borrowed_opno + (i - st->match.borrowed_from);
        if (s->vmask) { /* every launch of it was kept there (match.h) */
            const uint8_t *a = arena_of(st, s, i);
            memcpy(d->grid, a, 7 * sizeof(unsigned int));
            d->params = d->param_bytes ? (uint8_t *)a + RP_ARENA_GEOMETRY : NULL;
        }
    }
}

static int defer_push(rp_stream *st, rp_op *op)
{
    if (rp__op_staged(op) && op->bytes) {
        op->data = rp__malloc(op->bytes);
        if (!op->data)
            return -1;
        memcpy(op->data, op->host, op->bytes);
    }
    if (def_room(st) != 0) {
        free(op->data);
        op->data = NULL;
        return -1;
    }
    if (rp__op_is_event(op->kind))
        atomic_fetch_add(&rp__ev_deferred, 1);
    st->match.def[st->match.ndef++] = *op;
    memset(op, 0, sizeof *op);
    return 0;
}

static void diverged(rp_seq *s, size_t at, const char *why)
{
    s->divergences++;
    s->div_op = at;
    s->div_why = why;
}

/* Whether op `k` of sequence `s` can stand for `op`: exactly equal, or
 * equal outside the fields declared volatile. */
static int seq_match(const rp_seq *s, size_t k, const rp_op *op)
{
    const rp_op *want = &s->det->ops[k];
    if (!s->vmask || !s->vmask[k])
        return rp__op_same_content(want, op);
    return rp__op_match_masked(want, op, s->vmask[k],
                               s->lay ? s->lay[k] : rp__rec_layout(s->cs, want));
}

/* Set op `k`'s node of the executable to the values of `op` (same structure,
 * volatile fields changed: arguments, addresses, values, a kernel's grid,
 * block and shared memory, a copy's size). The node is named by s->ex.nodes[k], a node of the
 * graph the executable was instantiated from, also when it was since updated
 * to another graph (the driver accepts no other handle: capture.c,
 * take_over). Returns the driver's answer. */
static CUresult update_kernel(rp_seq *s, size_t k, const unsigned int *g, const uint8_t *params)
{
    rp_ctxstate *cs = s->cs;
    const rp_op *op = &s->det->ops[k];
    void *ptrs[RP_MAX_PARAMS], **kp = NULL;
    const rp_param_layout *L = s->lay ? s->lay[k] : rp__rec_layout(cs, op);
    if (!L)
        return CUDA_ERROR_INVALID_VALUE; /* NEVER: a volatile kernel has a layout */
    for (uint32_t i = 0; i < L->n; i++)
        ptrs[i] = (void *)(params + L->off[i]);
    if (L->n)
        kp = ptrs;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    if (op->flags & RP_OPF_KERNEL_HANDLE) {
        p.kern = (CUkernel)op->func;
        p.ctx = cs->ctx;
    } else {
        p.func = op->func;
    }
    p.gridDimX = g[0], p.gridDimY = g[1], p.gridDimZ = g[2];
    p.blockDimX = g[3], p.blockDimY = g[4], p.blockDimZ = g[5];
    p.sharedMemBytes = g[6];
    p.kernelParams = kp;
    return cs->drv->cuGraphExecKernelNodeSetParams_v2(s->exec, s->ex.nodes[k], &p);
}

/* The same for a memset or a copy, from its deferred record. */
static CUresult update_node(rp_seq *s, size_t k, const rp_op *op)
{
    rp_ctxstate *cs = s->cs;
    switch (op->kind) {
    case RP_OP_KERNEL: /* NEVER: update_kernel */
        return CUDA_ERROR_INVALID_VALUE;
    case RP_OP_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        p.dst = op->dst;
        p.value = op->value;
        p.elementSize = op->elem;
        p.width = op->bytes;
        p.height = 1;
        return cs->drv->cuGraphExecMemsetNodeSetParams(s->exec, s->ex.nodes[k], &p, cs->ctx);
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
        return cs->drv->cuGraphExecMemcpyNodeSetParams(s->exec, s->ex.nodes[k], &p, cs->ctx);
    }
    }
}

/* A deferred kernel's geometry (7 unsigned ints, as in a record) and
 * parameter bytes: its record's, or, when the fast path deferred it
 * unwritten, the arena's. */
static inline void kernel_values(const rp_stream *st, const rp_seq *s, size_t k,
                                 const unsigned int **g, const uint8_t **p)
{
    if (st->match.borrowed_seq && k >= st->match.borrowed_from) {
        const uint8_t *a = arena_of(st, s, k);
        *g = (const unsigned int *)(const void *)a;
        *p = a + RP_ARENA_GEOMETRY;
    } else {
        *g = st->match.def[k].grid;
        *p = st->match.def[k].params;
    }
}

/* Whether the executable holds op k's deferred values already. For a
 * kernel (of the sequence's structure, like the held record), its
 * geometry and parameter bytes decide. */
static inline int held_same(const rp_stream *st, const rp_seq *s, size_t k)
{
    const rp_op *h = &s->ex.held[k];
    if (h->kind != RP_OP_KERNEL)
        return rp__op_same_content(h, &st->match.def[k]); /* never the fast path's */
    const unsigned int *g;
    const uint8_t *p;
    kernel_values(st, s, k, &g, &p);
    return rp__geometry_same(h->grid, g) && rp__bytes_same(h->params, p, h->param_bytes);
}

/* The hash of an op's values (a kernel's geometry and parameter bytes; a
 * copy's or memset's addresses, size and value): only ever a proposal,
 * checked value by value (held_same). */
static inline uint64_t kernel_values_hash(uint64_t h, const unsigned int *g, const uint8_t *p,
                                          size_t param_bytes)
{
    h = rp__acc_bytes(h, g, 7 * sizeof(unsigned int));
    return rp__acc_bytes(h, p, param_bytes);
}

static inline uint64_t op_values_hash(uint64_t h, const rp_op *op)
{
    if (op->kind == RP_OP_KERNEL)
        return kernel_values_hash(h, op->grid, op->params, op->param_bytes);
    h = rp__acc(h, op->dst);
    h = rp__acc(h, op->src);
    h = rp__acc(h, (uint64_t)(uintptr_t)op->host);
    h = rp__acc(h, op->bytes);
    return rp__acc(h, op->value);
}

/* The hash of the values of `s`'s volatile ops: those deferred on `st`
 * (held NULL), or those `held` records (never 0). */
static uint64_t content_hash(const rp_stream *st, const rp_seq *s, const rp_op *held)
{
    uint64_t h = RP_HASH_SEED;
    for (size_t k = 0; k < s->det->n; k++) {
        if (!s->vmask[k])
            continue;
        if (held) {
            h = op_values_hash(h, &held[k]);
        } else if (s->det->ops[k].kind == RP_OP_KERNEL) {
            const unsigned int *g;
            const uint8_t *p;
            kernel_values(st, s, k, &g, &p);
            h = kernel_values_hash(h, g, p, s->det->ops[k].param_bytes);
        } else {
            h = op_values_hash(h, &st->match.def[k]);
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
    size_t nvol = 0;
    for (size_t k = 0; k < s->det->n; k++)
        nvol += s->vmask[k] != 0;
    return rp__cost_updates_pay(s->cs, s->det->n, nvol);
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
static uint64_t choose_exec(rp_stream *st, rp_seq *s)
{
    rp_ctxstate *cs = st->cs;
    if (s->ex.hashed_widened != s->ex.widened || !s->ex.held_hash) {
        /* The first time, or fields became volatile since: every hash
         * covers them now. */
        s->ex.hashed_widened = s->ex.widened;
        s->ex.held_hash = content_hash(st, s, s->ex.held);
        for (unsigned int j = 0; j < s->ex.nalt; j++)
            s->ex.alt_hash[j] = content_hash(st, s, s->ex.alt_held[j]);
        memset(s->ex.recent, 0, sizeof s->ex.recent);
    }
    uint64_t h = content_hash(st, s, NULL);
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
        if (!came_back || s->ex.nalt == RP_SEQ_ALTS || 1 + s->ex.nalt >= rp__eng_cfg.max_variants ||
            cs->nseqs + cs->nalts >= rp__eng_cfg.max_graphs || !fresh_pays(s))
            return h; /* `exec` is updated */
        rp_op *held;
        CUgraphExec x = rp__seq_alt_exec(s, &held);
        if (!x)
            return h;
        s->ex.alt[j] = x;
        s->ex.alt_held[j] = held;
        s->ex.alt_hash[j] = content_hash(st, s, held);
        s->ex.nalt++;
        cs->nalts++;
        cs->counters.variant_execs++;
    } else {
        cs->counters.variant_exec_hits++;
    }
    /* Swap it in: `exec` and its values wait among the others. */
    CUgraphExec x = s->exec;
    rp_op *held = s->ex.held;
    uint64_t hh = s->ex.held_hash;
    s->exec = s->ex.alt[j], s->ex.held = s->ex.alt_held[j], s->ex.held_hash = s->ex.alt_hash[j];
    s->ex.alt[j] = x, s->ex.alt_held[j] = held, s->ex.alt_hash[j] = hh;
    return h;
}

/* Room for n indices in the stream's list of nodes to update (0, or -1). */
static int upd_room(rp_stream *st, size_t n)
{
    if (n <= st->match.capupd)
        return 0;
    size_t *u = rp__realloc(st->match.upd, n * sizeof *u);
    if (!u)
        return -1;
    st->match.upd = u;
    st->match.capupd = n;
    return 0;
}

/* Bring the executable's volatile fields to this occurrence's values: only
 * the nodes whose values differ from what the executable holds now. Returns
 * CUDA_SUCCESS, the driver's error (the executable may then hold a mix: the
 * sequence is dropped by the caller), or CUDA_ERROR_NOT_READY when more
 * than REPRISE_MAX_UPDATES nodes would change (nothing updated: eager is
 * cheaper). */
static CUresult apply_updates(rp_stream *st, rp_seq *s)
{
    size_t n = s->det->n, need = 0;
    if (upd_room(st, n) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t k = 0; k < n; k++)
        if (s->vmask[k] && !held_same(st, s, k))
            st->match.upd[need++] = k;
    if (!rp__cost_updates_pay(st->cs, n, need)) {
        rp__bound_hit(st->cs, RP_BOUND_UPDATES);
        return CUDA_ERROR_NOT_READY;
    }
    if (need > rp__eng_cfg.max_updates)
        st->cs->counters.beyond_max_updates++;
    uint64_t t0 = need && rp__eng_cfg.cost_model ? rp__cost_now() : 0;
    for (size_t j = 0; j < need; j++) {
        size_t k = st->match.upd[j];
        rp_op *h = &s->ex.held[k];
        CUresult rc;
        /* The executable then holds every field of the deferred op; the
         * held record keeps its own parameter block (same size:
         * structure) and no payload. */
        if (h->kind == RP_OP_KERNEL) {
            const unsigned int *g;
            const uint8_t *p;
            kernel_values(st, s, k, &g, &p);
            rc = update_kernel(s, k, g, p);
            if (rc == CUDA_SUCCESS) {
                /* Only its geometry and parameters differ (structure). */
                memcpy(h->grid, g, 7 * sizeof(unsigned int));
                if (h->param_bytes)
                    memcpy(h->params, p, h->param_bytes);
            }
        } else {
            const rp_op *op = &st->match.def[k];
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
            st->cs->counters.update_failures++;
            return rc;
        }
        s->ex.updates++;
        st->cs->counters.updates++;
    }
    if (t0)
        rp__cost_sample(st->cs, RP_COST_UPDATE, rp__cost_now() - t0, need);
    return CUDA_SUCCESS;
}

/* Launch `s` in place of the first s->det->n deferred ops. The staging the
 * graph reads is refilled with this occurrence's bytes, after the previous
 * launch of the graph has finished reading it. Returns the driver's error
 * (nothing launched; *what is the step that failed) or CUDA_SUCCESS. */
enum replay_step { STEP_LAUNCH, STEP_WAIT, STEP_UPDATE, STEP_ORDER, STEP_STAGING };
static const char *const step_names[] = {"graph launch", "asking about the previous launch",
                                         "graph node update",
                                         "asking whether its other streams are idle",
                                         "the previous launch still reading its staging"};

/* Before a fork/join sequence's launch on `target`: what it must come
 * after is done already, or known to need nothing more to be done. Its
 * side streams' ops depend, eagerly, on their streams' earlier work, and
 * its ops after a wait on an event recorded outside it on that event; a
 * graph can only wait for such things as a whole, which could hold up the
 * home stream's ops behind work the program means to release only once
 * those ops are done (a side stream blocked on a value the host writes
 * after synchronizing the home stream). So the graph waits for nothing.
 * Each stream it runs ops on must be idle, or stamped (fj_clean) with
 * nothing issued anywhere since (rp__issued): by an earlier replay of ours
 * on `target` that made it wait for its graph (that graph needed nothing
 * more to finish), or by a flush after which `target` waited on its last
 * record (`target` is after its work already). The home stream is among
 * them because the side streams wait for the whole graph afterwards
 * (fj_after), unless the sequence is rooted (rp_seq), or every side
 * stream's first op waits on the record the home stream's flushed work
 * ended with: then the side streams' ops came after the home stream's
 * earlier work eagerly too. Each event it waits on recorded outside it
 * must be complete, or last recorded by such a replay on `target` or as
 * the home stream's flushed work's last op. Otherwise its ops run eagerly,
 * as the program issued them (CUDA_ERROR_NOT_READY). A side stream whose
 * blocking flag differs from the home stream's never replays: the legacy
 * stream would order its ops otherwise. `gen`: rp__issued when the
 * resolution began. */
static int fj_clean(const rp_stream *x, uint64_t gen, CUstream target)
{
    return x && x->fj.after_gen == gen && x->fj.after_home == target;
}

static CUresult fj_ready(rp_stream *st, const rp_seq *s, CUstream target, uint64_t gen)
{
    rp_ctxstate *cs = st->cs;
    const struct rp__driver *D = cs->drv;
    CUresult rc = CUDA_SUCCESS;
    /* The home stream: its work before the graph comes before the side
     * streams' ops eagerly too when the sequence is rooted, or when that
     * work ends with a record every side stream's first op waits on; or it
     * is a graph of ours, which needs nothing more to finish. */
    int home_ok = !s->fj.nside || s->fj.rooted;
    if (!home_ok && fj_clean(st, gen, target)) {
        home_ok = 1;
        for (unsigned int i = 0; st->fj.tail_ev && i < s->fj.nside; i++)
            home_ok &= s->fj.side_first[i] == st->fj.tail_ev;
    }
    if (!home_ok)
        rc = D->cuStreamQuery(target);
    for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++) {
        rp_stream *x = rp__stream_of(cs, s->fj.side[i], 0);
        /* A side stream's ops wait, eagerly, for the legacy stream's work
         * before them when it is a blocking stream, and only then; in the
         * graph they wait as the home stream's launch does: the two must
         * agree. */
        if (!x || x->blocking != st->blocking)
            rc = CUDA_ERROR_NOT_READY;
        else if (!fj_clean(x, gen, target))
            rc = D->cuStreamQuery(s->fj.side[i]);
    }
    for (size_t i = 0; i < s->fj.nexts && rc == CUDA_SUCCESS; i++) {
        rp_evinfo ei;
        /* Recorded last by the home stream (its flushed work ended with
         * this record): the home stream is after it already. */
        if (fj_clean(st, gen, target) && st->fj.tail_ev == s->fj.exts[i])
            continue;
        if (!rp__ev_get(s->fj.exts[i], &ei) || ei.after_gen != gen || ei.after_home != target)
            rc = D->cuEventQuery(s->fj.exts[i]);
    }
    return rc;
}

/* After it: the other streams' later work waits for the graph, and the
 * program's events and streams are left as the step left them eagerly. The
 * graph's own events are private, so the sequence's event ops are issued
 * again without its work (rp_seq.shadow): each side stream first waits for
 * the graph (cs->fj.post, recorded on `target` right after it), then every
 * record and wait comes again on its own stream, in the step's order. So an
 * event completes no earlier than eagerly, in the order of its last record
 * (an event recorded twice in the step stands where its second record
 * stood); once an event is complete, every stream whose last op of the step
 * came before it is idle, as eagerly (its last op is its last event op of
 * the step, or its wait for the graph); and a later wait waits for the
 * graph. If that cannot be done, the host waits for the graph. `gen`: what
 * rp__issued will be once this resolution is over if nothing else is
 * issued meanwhile (the streams, and the events recorded on `target`, are
 * then clean for the next replay: fj_ready). Returns the first error. */
static CUresult fj_after(rp_stream *st, const rp_seq *s, CUstream target, uint64_t gen)
{
    rp_ctxstate *cs = st->cs;
    const struct rp__driver *D = cs->drv;
    CUresult rc = CUDA_SUCCESS;
    if (s->fj.nside) {
        rc = D->cuEventRecord(cs->fj.post, target);
        for (unsigned int i = 0; i < s->fj.nside && rc == CUDA_SUCCESS; i++)
            rc = D->cuStreamWaitEvent(s->fj.side[i], cs->fj.post, 0);
    }
    size_t k = 0;
    for (; k < s->fj.nshadow && rc == CUDA_SUCCESS; k++) {
        const struct rp_fj_shadow *o = &s->fj.shadow[k];
        rc = o->record ? D->cuEventRecord(o->ev, o->stream) : D->cuStreamWaitEvent(o->stream, o->ev, 0);
    }
    if (rc != CUDA_SUCCESS) {
        /* The host waits for the graph; the events not recorded again yet
         * are recorded on `target`, complete once it is (none may complete
         * before its step's work). */
        CUresult src = D->cuStreamSynchronize(target);
        for (size_t j = k; j < s->fj.nshadow; j++)
            if (s->fj.shadow[j].record)
                D->cuEventRecord(s->fj.shadow[j].ev, target);
        (void)src;
        return rc;
    }
    /* Events recorded again on `target` come before the next replay there. */
    for (size_t j = 0; j < s->fj.nshadow; j++)
        if (s->fj.shadow[j].record && s->fj.shadow[j].stream == target)
            rp__ev_rerecorded(s->fj.shadow[j].ev, gen, target);
    if (s->fj.nside) {
        st->fj.after_gen = gen;
        st->fj.after_home = target;
        st->fj.tail_ev = NULL; /* its work ends with a graph of ours */
        for (unsigned int i = 0; i < s->fj.nside; i++) {
            rp_stream *x = rp__stream_of(cs, s->fj.side[i], 0);
            if (x) {
                x->fj.after_gen = gen;
                x->fj.after_home = target;
            }
        }
    }
    return CUDA_SUCCESS;
}

static CUresult replay(rp_stream *st, rp_seq *s, CUstream target, enum replay_step *what,
                       CUresult *after_err, uint64_t gen)
{
    const struct rp__driver *D = st->cs->drv;
    *what = STEP_LAUNCH;
    size_t n = s->det->n;
    if (s->fj.multi) { /* first: nothing below is done for a replay not made */
        CUresult rc = fj_ready(st, s, target, gen);
        if (rc != CUDA_SUCCESS) {
            *what = STEP_ORDER;
            return rc;
        }
    }
    if (s->sealed.nstaging) {
        /* The previous launch must have read the staging before it is
         * refilled. The host does not wait for it: that launch may sit
         * behind work the program releases only after this call returns
         * (a cuStreamWaitValue32 on the stream, released by the next
         * cuStreamWriteValue32). Still reading: eagerly this time. */
        if (s->done_pending) {
            CUresult rc = D->cuEventQuery(s->done);
            if (rc != CUDA_SUCCESS) {
                *what = rc == CUDA_ERROR_NOT_READY ? STEP_STAGING : STEP_WAIT;
                return rc;
            }
            s->done_pending = 0;
        }
        for (size_t i = 0; i < n; i++)
            if (s->stage_of[i] != SIZE_MAX)
                memcpy(s->sealed.staging[s->stage_of[i]].ptr, st->match.def[i].data, st->match.def[i].bytes);
    }
    if (s->vmask) {
        uint64_t h = rp__eng_cfg.max_variants > 1 && !s->origin && !s->fj.multi &&
                             !s->sealed.nstaging
                         ? choose_exec(st, s)
                         : 0;
        CUresult rc = apply_updates(st, s);
        if (rc != CUDA_SUCCESS) {
            *what = STEP_UPDATE;
            return rc;
        }
        if (h)
            s->ex.held_hash = h; /* it holds this content now */
    }
    /* One graph launch in 8 is timed for the cost model. */
    uint64_t t0 = rp__eng_cfg.cost_model && !(s->replays & 7) ? rp__cost_now() : 0;
    CUresult rc = (s->det->ops[0].flags & RP_OPF_PTSZ) && target == st->handle
                      ? D->cuGraphLaunch_ptsz(s->exec, target)
                      : D->cuGraphLaunch(s->exec, target);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (t0)
        rp__cost_sample(st->cs, RP_COST_LAUNCH, rp__cost_now() - t0, 1);
    if (s->fj.multi) {
        /* The graph ran: an error here is the program's to see, not a
         * reason to run the ops again. */
        CUresult arc = fj_after(st, s, target, gen + 1);
        if (arc != CUDA_SUCCESS)
            *after_err = arc;
    }
    if (s->sealed.nstaging && D->cuEventRecord(s->done, target) == CUDA_SUCCESS)
        s->done_pending = 1;
    s->replays++;
    s->ex.too_many = 0;
    rp__learn_paid(st);
    if (s->replays == 4) {
        st->learn.churn = 0; /* it paid off: the stream has stabilised */
        rp__det_paid_off(s->det); /* its entry: in the by-content or by-structure table */
    }
    s->last_use = st->cs->det.clock;
    st->cs->counters.replays++;
    st->cs->counters.ops_replayed += n;
    return CUDA_SUCCESS;
}

/* What a flush left last on each other stream of a trace (fj_track). */
struct fj_tail {
    CUstream h;
    CUevent rec;    /* its last op recorded this event (the event's latest record) */
    int joined;     /* ... and the home stream waited on it since */
};

/* Follow a flushed op `op` of `st`'s trace. Returns 0 when the streams are
 * too many to follow (nothing is concluded then). */
static int fj_track(const rp_stream *st, struct fj_tail *t, size_t *n, struct fj_tail *home,
                    const rp_op *op)
{
    if (op->kind == RP_OP_EVREC) { /* a record elsewhere is no longer the latest */
        for (size_t k = 0; k < *n; k++)
            if (t[k].rec == op->ev && t[k].h != op->stream)
                t[k].rec = NULL, t[k].joined = 0;
        if (home->rec == op->ev && op->stream != st->handle)
            home->rec = NULL;
    }
    if (op->stream == st->handle) {
        if (op->kind == RP_OP_EVWAIT)
            for (size_t k = 0; k < *n; k++)
                if (t[k].rec == op->ev)
                    t[k].joined = 1;
        home->joined = 1; /* it had ops */
        home->rec = op->kind == RP_OP_EVREC ? op->ev : NULL;
        return 1;
    }
    size_t k = 0;
    while (k < *n && t[k].h != op->stream)
        k++;
    if (k == *n) {
        if (*n == RP_FJ_STREAMS)
            return 0;
        t[(*n)++].h = op->stream;
    }
    t[k].rec = op->kind == RP_OP_EVREC ? op->ev : NULL;
    t[k].joined = 0;
    return 1;
}

void rp__match_resolve(rp_stream *st, CUstream target, struct rp_resolved *out)
{
    out->replayed = NULL;
    out->nflushed = 0;
    out->err = CUDA_SUCCESS;
    if (st->match.ndef == 0)
        return;
    /* Ops the fast path deferred are written down only if they are flushed
     * (they are kernels: the replay reads no record of theirs). */
    size_t written = st->match.borrowed_seq ? st->match.borrowed_from : st->match.ndef;
    rp_ctxstate *cs = st->cs;
    uint64_t gen = atomic_load_explicit(&rp__issued, memory_order_relaxed);
    for (size_t i = 0; i < written; i++) /* every event op leaves the list below */
        if (rp__op_is_event(st->match.def[i].kind))
            atomic_fetch_sub(&rp__ev_deferred, 1);
    size_t done = 0;
    rp_seq *c = st->match.complete;
    if (c) {
        rp__trace("replay sequence %u (%zu ops) on stream %p", c->id, c->det->n,
                  (void *)target);
        rp__nvtx_push("reprise: replay sequence %u", c->id);
        enum replay_step failed = STEP_LAUNCH;
        CUresult after_err = CUDA_SUCCESS;
        CUresult rc = replay(st, c, target, &failed, &after_err, gen);
        if (after_err != CUDA_SUCCESS)
            out->err = after_err;
        rp__nvtx_pop();
        if (rc == CUDA_SUCCESS) {
            done = c->det->n;
            out->replayed = c;
            if (st->handle != CU_STREAM_PER_THREAD) /* see rp__match_first */
                st->match.hint = c;
        } else if (rc == CUDA_ERROR_NOT_READY && failed == STEP_ORDER) {
            /* A fork/join sequence whose streams are busy: eagerly this
             * time, the graph stays. */
            cs->counters.fork_joins_busy++;
        } else if (rc == CUDA_ERROR_NOT_READY && failed == STEP_STAGING) {
            cs->counters.staging_busy++; /* likewise */
        } else if (rc == CUDA_ERROR_NOT_READY) {
            /* The graph stays while next time may need fewer updates; when
             * it keeps needing too many it goes, and its shape backs off. */
            cs->counters.too_many_updates++;
            if (++c->ex.too_many >= 3)
                c->broken = 1;
        } else {
            /* A replay runs every recorded op or none: the ops go eagerly
             * below, and the graph is not offered again. A node update the
             * driver refuses as invalid is one of its rules (new memory
             * from another context, say), not a failure: said at info. */
            static unsigned int logged;
            int refused = rc == CUDA_ERROR_INVALID_VALUE && failed == STEP_UPDATE;
            if (logged++ < 8)
                rp__log(refused ? RP_LOG_INFO : RP_LOG_WARN,
                        "%s %s (CUresult %d); the sequence's ops ran eagerly and its graph was "
                        "dropped", step_names[failed], refused ? "refused by the driver" : "failed",
                        (int)rc);
            c->broken = 1;
            cs->counters.replay_failures++;
        }
    }
    if (done < st->match.ndef) {
        cs->counters.divergences++;
        /* Candidates still matching when a boundary came: the program
         * stopped before their end. */
        for (size_t i = 0; i < st->match.ncand; i++)
            diverged(st->match.cand[i], st->match.ndef, "a boundary came before the sequence ended");
    }
    for (size_t i = 0; i < done && i < written; i++)
        if (!st->match.def[i].borrowed) /* a borrowed one owns nothing */
            rp__op_free(&st->match.def[i]);
    if (done < st->match.ndef)
        write_down(st);
    st->match.borrowed_seq = NULL;
    if (done < st->match.ndef) {
        rp__trace("flush %zu deferred ops on stream %p", st->match.ndef - done, (void *)target);
        rp__nvtx_push("reprise: flush %zu ops", st->match.ndef - done);
    }
    size_t kept = 0;
    struct fj_tail tails[RP_FJ_STREAMS], hometail = {NULL, NULL, 0};
    size_t ntails = 0;
    int track = target == st->handle;
    for (size_t i = done; i < st->match.ndef; i++) {
        rp_op *op = &st->match.def[i];
        CUresult rc = issue_eager(st, op, target);
        if (rc != CUDA_SUCCESS) {
            if (out->err == CUDA_SUCCESS)
                out->err = rc;
            rp__op_free(op);
            track = 0;
            continue;
        }
        if (track)
            track = fj_track(st, tails, &ntails, &hometail, op);
        if (op->borrowed) {
            /* Learning keeps it past the sequence it was borrowed from. */
            rp_op own;
            if (rp__op_copy(&own, op) != 0) {
                rp__bound_hit(cs, RP_BOUND_MEMORY);
                rp__count_eager(cs, RP_EAGER_BOUND, 1);
                rp__op_free(op);
                continue;
            }
            *op = own;
        }
        free(op->data); /* payload: not part of what is learnt */
        op->data = NULL;
        st->match.def[kept++] = *op;
    }
    if (done < st->match.ndef)
        rp__nvtx_pop();
    /* Work reached streams: once for the resolution (what fj_after expects),
     * once more for ops flushed, which may be a side stream's. */
    rp__note_issue();
    if (done < st->match.ndef) {
        rp__note_issue();
        /* A side stream whose last flushed op was a record the home stream
         * then waited on has all its work ordered before the home stream's
         * end: as clean for the next replay as after one (fj_ready). */
        for (size_t i = 0; track && i < ntails; i++) {
            rp_stream *x = tails[i].joined ? rp__stream_of(cs, tails[i].h, 0) : NULL;
            if (x) {
                x->fj.after_gen = gen + 2;
                x->fj.after_home = st->handle;
            }
        }
        /* The home stream's flushed work ending with a record: a sequence
         * whose side streams all begin by waiting on it may be replayed
         * next (fj_ready). */
        if (track && hometail.joined && hometail.rec) {
            st->fj.after_gen = gen + 2;
            st->fj.after_home = st->handle;
            st->fj.tail_ev = hometail.rec;
        }
    }
    out->nflushed = kept;
    st->match.ndef = kept;
    st->match.ncand = 0;
    st->match.complete = NULL;
}

/* Drop the candidates that cannot match the op at position st->match.ndef, noting
 * why for the report. */
static void narrow(rp_stream *st, const rp_op *op)
{
    size_t k = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (s->det->n <= st->match.ndef) /* NEVER: complete candidates left the list */
            continue;
        const rp_op *want = &s->det->ops[st->match.ndef];
        if (!s->broken && seq_match(s, st->match.ndef, op))
            st->match.cand[k++] = s;
        else if (!s->broken)
            diverged(s, st->match.ndef, rp__op_same_structure(want, op)
                                      ? "same operation, other arguments, geometry or addresses"
                                      : "another operation");
    }
    st->match.ncand = k;
}

static void note_complete(rp_stream *st)
{
    size_t k = 0;
    for (size_t i = 0; i < st->match.ncand; i++) {
        rp_seq *s = st->match.cand[i];
        if (s->det->n == st->match.ndef) {
            /* The longest wins; between equals, an exact one (no updates). */
            if (!st->match.complete || st->match.complete->det->n < s->det->n ||
                (st->match.complete->vmask && !s->vmask))
                st->match.complete = s;
        } else {
            st->match.cand[k++] = s;
        }
    }
    st->match.ncand = k;
}

enum rp_offer rp__match_offer(rp_stream *st, const rp_op *op)
{
    write_down(st);
    if (st->match.ndef) {
        narrow(st, op);
        /* Divergence (or a complete match followed by an op that no
         * longer sequence extends): what is pending must be resolved
         * first, then the op starts afresh. */
        return st->match.ncand ? RP_OFFER_MATCHES : RP_OFFER_RESOLVE;
    }
    st->match.complete = NULL;
    st->match.ncand = 0;
    for (size_t i = 0; i < st->cs->nseqs && st->match.ncand < RP_MAX_CANDIDATES; i++) {
        rp_seq *s = st->cs->seqs[i];
        if (!s->broken && s->ctx == op->ctx && s->home == st->handle && seq_match(s, 0, op))
            st->match.cand[st->match.ncand++] = s;
    }
    return st->match.ncand ? RP_OFFER_MATCHES : RP_OFFER_EAGER;
}

/* The fast path at op k of a candidate with volatile fields (op k's may be
 * none): the launch must equal the sequence's op outside them (as
 * rp__op_match_masked says of records). Its geometry and parameters go to
 * the stream's arena (the sequence's bytes, padding zeroed, then the
 * volatile ones): the update, or, if it is flushed, its record's values
 * (write_down). Returns 0 when it does not match. */
static int match_masked(rp_stream *st, const rp_seq *s, size_t k, const rp_launch *l)
{
    const rp_op *want = &s->det->ops[k];
    const rp_param_layout *L = s->lay[k];
    uint64_t m = s->vmask[k];
    if (want->kind != RP_OP_KERNEL || want->func != l->f || !L ||
        L->total != want->param_bytes || (L->n && !l->kp))
        return 0;
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
    }
    if (!rp__params_same(want->params, L, l->kp, m & ((1ull << RP_VOL_MAX_PARAMS) - 1)))
        return 0;
    uint8_t *a = arena_of(st, s, k);
    memcpy(a, l->grid, 7 * sizeof(unsigned int));
    uint8_t *params = a + RP_ARENA_GEOMETRY;
    /* Whole words (the arena's places are too): no memcpy call for a
     * kernel's few parameters. */
    size_t i8 = 0;
    for (; i8 + 8 <= want->param_bytes; i8 += 8)
        memcpy(params + i8, want->params + i8, 8);
    if (i8 < want->param_bytes)
        memcpy(params + i8, want->params + i8, want->param_bytes - i8);
    for (uint32_t i = 0; i < L->n && i < RP_VOL_MAX_PARAMS; i++) {
        if (!(m >> i & 1))
            continue;
        rp__param_copy(params + L->off[i], l->kp[i], L->size[i]);
    }
    return 1;
}

/* Room in the stream's arena for sequence `s` (0, or -1 if memory runs
 * out). Only the one candidate's ops point in (rp_stream), and none yet
 * when it is too small for it. */
static int arena_room(rp_stream *st, const rp_seq *s)
{
    if (st->match.arena_cap >= s->match.ptotal)
        return 0;
    uint8_t *a = rp__realloc(st->match.arena, s->match.ptotal);
    if (!a)
        return -1;
    st->match.arena = a;
    st->match.arena_cap = s->match.ptotal;
    return 0;
}

enum rp_offer rp__match_first(rp_stream *st, CUstream h, const rp_launch *l,
                              enum rp__entry entry)
{
    rp_seq *s = st->match.hint; /* never a per-thread stream's (rp__match_resolve) */
    if (!s || !s->first_unique)
        return RP_OFFER_EAGER;
    return rp__match_at(st, s, 0, h, *l, entry);
}

int rp__match_masked(rp_stream *st, const rp_seq *s, size_t k, const rp_launch *l)
{
    return s->match.poff && arena_room(st, s) == 0 && match_masked(st, s, k, l);
}

void rp__match_cancel(rp_stream *st)
{
    st->match.ncand = 0;
    st->match.complete = NULL;
}

enum rp_offer rp__match_defer(rp_stream *st, rp_op *op)
{
    if (defer_push(st, op) != 0) {
        rp__bound_hit(st->cs, RP_BOUND_MEMORY);
        return RP_OFFER_RESOLVE;
    }
    note_complete(st);
    return st->match.ncand == 0 && st->match.complete ? RP_OFFER_COMPLETE : RP_OFFER_DEFERRED;
}
