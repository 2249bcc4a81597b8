/* engine.c - the capture engine's front: installs itself into the core
 * table, tells contexts and streams apart, keeps each stream's learning
 * segment, and decides boundaries (DESIGN.md §2.2, §3). A capturable call is
 * recorded and offered to the matcher (replay.c); if not deferred it runs
 * eagerly and joins its stream's segment. A boundary resolves what is
 * deferred (replay or flush), ends the segment, and hands it to the
 * detector, which may ask for a capture (capture.c).
 *
 * All state lives per context (rp_ctxstate) under that context's lock, so
 * the driver sees each context's operations in the program's order and
 * contexts (devices) never contend. Finding a call's context takes no lock:
 * the current context, or the stream's, cached per thread.
 *
 * Boundaries come in two scopes. Stream-scoped ones (stream sync/query,
 * event record, stream wait, host functions, graph launches, a call on a
 * stream the engine does not capture) end the segment of that stream and of
 * the streams it is implicitly ordered with (the legacy stream and the
 * blocking streams of its context). Every other interposed call the engine
 * does not capture is global: it resolves and ends every stream's segment in
 * every context first. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CTX 16
#define MAX_STAGE_OP (4u << 20) /* a larger host-to-device copy runs eagerly */

struct rp__aux rp__aux;
struct rp__engine_config rp__eng_cfg = {2, 4, 64, 2, 4096, 256, 64u << 20, 1u << 20, 1024};

/* Context states: append-only, published by `nctxs` (release), created
 * under ctxs_lock. */
static rp_ctxstate ctxs[MAX_CTX];
static _Atomic size_t nctxs;
static pthread_mutex_t ctxs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Captures the program itself has open: while any is, the engine steps
 * aside entirely (DESIGN.md §2.5). prog_pending counts those being begun
 * as well: from the moment a begin starts, nothing new is deferred and no
 * capture window opens, so that the engine can be emptied before the
 * program's capture starts and stay empty while it steps aside. */
static _Atomic int prog_captures;
static _Atomic int prog_pending;
static _Atomic int exit_hook_armed;

/* Per-thread cache of the last created stream's context. A destroyed
 * stream's handle may come back for another context: every destroy bumps
 * the generation and so empties every thread's cache. */
static _Atomic unsigned int stream_gen;
static RP_TLS CUstream tl_stream;
static RP_TLS CUcontext tl_ctx;
static RP_TLS unsigned int tl_gen;

const char *const rp__eager_reason_names[RP_EAGER_REASON_COUNT] = {
    [RP_EAGER_WARMING_UP] = "warming_up",
    [RP_EAGER_NOT_CAPTURABLE] = "not_capturable",
    [RP_EAGER_SHORT] = "segment_too_short",
    [RP_EAGER_DIVERGED] = "diverged",
    [RP_EAGER_CAPTURE_FAILED] = "capture_failed",
    [RP_EAGER_BOUND] = "bound_hit",
    [RP_EAGER_PROGRAM_CAPTURE] = "program_capturing",
    [RP_EAGER_NO_LAYOUT] = "no_param_layout",
    [RP_EAGER_EXCLUDED] = "excluded_by_rule",
};

static inline void lock(rp_ctxstate *cs) { pthread_mutex_lock(&cs->lock); }
static inline void unlock(rp_ctxstate *cs) { pthread_mutex_unlock(&cs->lock); }

/* ---- contexts and streams ------------------------------------------------ */

/* The state of context `ctx`, created on first use. NULL when MAX_CTX
 * contexts are tracked or memory runs out: that context's work then runs
 * eagerly (a bound hit, counted). */
static rp_ctxstate *ctxstate_of(CUcontext ctx)
{
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (ctxs[i].ctx == ctx)
            return &ctxs[i];
    pthread_mutex_lock(&ctxs_lock);
    n = atomic_load_explicit(&nctxs, memory_order_relaxed);
    rp_ctxstate *cs = NULL;
    for (size_t i = 0; i < n && !cs; i++)
        if (ctxs[i].ctx == ctx)
            cs = &ctxs[i];
    if (!cs && n < MAX_CTX) {
        cs = &ctxs[n];
        memset(cs, 0, sizeof *cs);
        if (rp__det_init(&cs->det, rp__eng_cfg.table_size, rp__eng_cfg.warmup,
                         rp__eng_cfg.min_ops, rp__eng_cfg.max_ops) != 0 ||
            rp__det_init(&cs->sdet, rp__eng_cfg.table_size, rp__eng_cfg.warmup,
                         rp__eng_cfg.min_ops, rp__eng_cfg.max_ops) != 0) {
            rp__det_fini(&cs->det);
            cs = NULL;
        } else {
            rp__det_by_structure(&cs->sdet, rp__eng_cfg.max_variants);
            cs->ctx = ctx;
            pthread_mutex_init(&cs->lock, NULL);
            pthread_rwlock_init(&cs->gate, NULL);
            rp__lc_ctx_init(&cs->lc, &rp__lc_drv);
            rp__lc_window_init(&cs->win, &cs->lc, NULL);
            atomic_store_explicit(&nctxs, n + 1, memory_order_release);
        }
    }
    if (!cs)
        rp__bound_hit(NULL, RP_BOUND_CONTEXTS);
    pthread_mutex_unlock(&ctxs_lock);
    return cs;
}

static CUstream normalise(CUstream s, int ptsz)
{
    return s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
}

/* The context of the work on stream `s`: the current one for the legacy and
 * the per-thread stream, the stream's own otherwise. NULL if the driver
 * cannot say (the call then runs eagerly and the driver gives its error). */
static rp_ctxstate *ctx_of_stream(CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    CUcontext ctx = NULL;
    if (h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if (rp__aux.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
            return NULL;
    } else {
        unsigned int gen = atomic_load_explicit(&stream_gen, memory_order_acquire);
        if (tl_stream == h && tl_gen == gen) {
            ctx = tl_ctx;
        } else {
            if (rp__aux.cuStreamGetCtx(h, &ctx) != CUDA_SUCCESS)
                return NULL;
            tl_stream = h;
            tl_ctx = ctx;
            tl_gen = gen;
        }
    }
    return ctx ? ctxstate_of(ctx) : NULL;
}

static rp_ctxstate *ctx_current(void)
{
    CUcontext ctx = NULL;
    if (rp__aux.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    return ctxstate_of(ctx);
}

/* The engine's state for stream `s` of context `cs` as named in an entry
 * point (`ptsz`: a _ptsz/_ptds one, where 0 is the per-thread stream). The
 * per-thread stream is one per thread. NULL when the table is full or the
 * stream's flags cannot be read: the call then runs eagerly. */
static rp_stream *stream_of(rp_ctxstate *cs, CUstream s, int ptsz)
{
    CUstream h = normalise(s, ptsz);
    int legacy = h == CU_STREAM_LEGACY, perthread = h == CU_STREAM_PER_THREAD;
    pthread_t self = pthread_self();
    rp_stream *free_slot = NULL;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (!st->used) {
            if (!free_slot)
                free_slot = st;
            continue;
        }
        if (st->handle == h && (!perthread || pthread_equal(st->tid, self))) {
            /* The owner is back: if another thread resolved its deferred
             * work, its stream first waits for it. */
            if (st->must_wait)
                rp__stream_rejoin(st);
            return st;
        }
    }
    if (!free_slot && cs->nstreams < RP_MAX_STREAMS)
        free_slot = &cs->streams[cs->nstreams++];
    if (!free_slot) {
        rp__bound_hit(cs, RP_BOUND_STREAMS);
        return NULL;
    }
    unsigned int flags = 0;
    if (!legacy && !perthread && rp__aux.cuStreamGetFlags(h, &flags) != CUDA_SUCCESS)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = 1;
    free_slot->cs = cs;
    free_slot->handle = h;
    free_slot->tid = self;
    free_slot->ctx = cs->ctx;
    free_slot->legacy = legacy;
    free_slot->blocking = legacy || perthread || !(flags & CU_STREAM_NON_BLOCKING);
    return free_slot;
}

/* Implicit ordering (DESIGN.md §2.2): the legacy stream and the blocking
 * streams of one context order each other; non-blocking streams do not. */
static int ordered(const rp_stream *a, const rp_stream *b)
{
    if (a == b)
        return 1;
    return (a->legacy && b->blocking) || (b->legacy && a->blocking);
}

static void count_eager(rp_ctxstate *cs, enum rp__eager_reason why, uint64_t n)
{
    cs->st.ops_eager[why] += n;
}

static void seg_clear(rp_stream *st);

/* Release a stream's state (its deferred work was resolved or is being
 * abandoned with its context). */
static void stream_free(rp_stream *st)
{
    seg_clear(st);
    for (size_t i = 0; i < st->ndef; i++)
        rp__op_free(&st->def[i]);
    free(st->seg);
    free(st->def);
    if (st->start_ev)
        rp__aux.cuEventDestroy_v2(st->start_ev);
    if (st->handoff_ev)
        rp__aux.cuEventDestroy_v2(st->handoff_ev);
    memset(st, 0, sizeof *st);
}

static void seg_clear(rp_stream *st)
{
    for (size_t i = 0; i < st->nseg; i++)
        rp__op_free(&st->seg[i]);
    st->nseg = 0;
    st->seg_overflow = 0;
    st->seg_diverged = 0;
}

void rp__seg_append(rp_stream *st, rp_op *op, enum rp__eager_reason pending)
{
    if (pending == RP_EAGER_DIVERGED)
        st->seg_diverged++;
    if (st->seg_overflow || (rp__eng_cfg.max_ops && st->nseg >= rp__eng_cfg.max_ops)) {
        st->seg_overflow = 1;
        count_eager(st->cs, pending == RP_EAGER_DIVERGED ? pending : RP_EAGER_BOUND, 1);
        if (pending == RP_EAGER_DIVERGED)
            st->seg_diverged--;
        rp__op_free(op);
        return;
    }
    if (st->nseg == st->capseg) {
        size_t cap = st->capseg ? 2 * st->capseg : 32;
        rp_op *n = realloc(st->seg, cap * sizeof *n);
        if (!n) {
            st->seg_overflow = 1;
            count_eager(st->cs, RP_EAGER_BOUND, 1);
            rp__op_free(op);
            return;
        }
        st->seg = n;
        st->capseg = cap;
    }
    /* Keys only for what the detector will see: a deferred op that is
     * replayed never needs them. */
    rp__op_keys(op);
    st->seg[st->nseg++] = *op;
    memset(op, 0, sizeof *op);
}

/* A forked child must not touch the parent's CUDA state (the driver does
 * not survive fork): from the fork on, the child's wrappers only forward,
 * and nothing deferred in the parent is resolved from the child. */
static _Atomic int forked_child;

static void in_forked_child(void)
{
    atomic_store(&forked_child, 1);
    rp__enabled = false;
}

bool rp__engine_in_forked_child(void)
{
    return atomic_load(&forked_child) != 0;
}

/* At exit, work still deferred reaches the driver (DESIGN.md §2.2). */
static void exit_hook(void)
{
    if (!atomic_load(&forked_child))
        rp__engine_resolve_all();
}

/* ---- report lines of sequences ------------------------------------------- */

/* Sequences whose graph was dropped keep their line in the report. */
#define MAX_RETIRED 64
static struct rp__seq_info retired[MAX_RETIRED];
static size_t nretired;
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;

/* Append " word" to the fixed buffer `b` unless it is there already (cut
 * when full). */
static void append(char *b, size_t size, const char *word)
{
    size_t n = strlen(b), w = strlen(word);
    for (const char *p = b; (p = strstr(p, word)); p += w)
        if ((p == b || p[-1] == ' ') && (p[w] == ' ' || p[w] == '\0'))
            return;
    if (n + 1 < size)
        snprintf(b + n, size - n, "%s%s", n ? " " : "", word);
}

/* The volatile fields of a sequence, named for the report: a kernel's
 * parameter as name#index, a copy's or memset's field as op<k>.<field>. */
static void describe_volatile(const rp_seq *s, char *b, size_t size)
{
    b[0] = '\0';
    for (size_t k = 0; s->vmask && k < s->det->n; k++) {
        uint64_t m = s->vmask[k];
        const rp_op *op = &s->det->ops[k];
        char w[96];
        for (unsigned int i = 0; m && i < 64; i++) {
            if (!(m >> i & 1))
                continue;
            if (op->kind == RP_OP_KERNEL) {
                snprintf(w, sizeof w, "%s#%u", rp__rec_kernel_name(s->cs, op), i);
            } else {
                uint64_t bit = 1ull << i;
                const char *f = bit == RP_VOL_DST ? "dst"
                                : bit == RP_VOL_HOST ? "host"
                                : op->kind == RP_OP_MEMSET ? "value" : "src";
                snprintf(w, sizeof w, "op%zu.%s", k, f);
            }
            append(b, size, w);
        }
    }
}

static void seq_info(const rp_seq *s, struct rp__seq_info *o)
{
    o->id = s->id;
    o->ops = s->det->n;
    o->occurrences = s->det->seen + s->replays;
    o->replays = s->replays;
    o->divergences = s->divergences;
    o->updates = s->updates;
    o->captured_at = s->captured_at;
    o->first_kernels[0] = '\0';
    for (size_t k = 0, named = 0; k < s->det->n && named < 3; k++) {
        if (s->det->ops[k].kind != RP_OP_KERNEL)
            continue;
        size_t n = strlen(o->first_kernels);
        snprintf(o->first_kernels + n, sizeof o->first_kernels - n, "%s%s", named ? "," : "",
                 rp__rec_kernel_name(s->cs, &s->det->ops[k]));
        named++;
    }
    o->first_kernel[0] = '\0';
    o->div_op = s->div_op;
    o->div_why = s->div_why;
    o->div_kernel[0] = '\0';
    if (s->div_why && s->div_op < s->det->n)
        snprintf(o->div_kernel, sizeof o->div_kernel, "%s",
                 rp__rec_kernel_name(s->cs, &s->det->ops[s->div_op]));
    for (size_t k = 0; k < s->det->n; k++) {
        if (s->det->ops[k].kind == RP_OP_KERNEL) {
            snprintf(o->first_kernel, sizeof o->first_kernel, "%s",
                     rp__rec_kernel_name(s->cs, &s->det->ops[k]));
            break;
        }
    }
    describe_volatile(s, o->volatile_fields, sizeof o->volatile_fields);
    o->variants = 1;
    const rp_ctxstate *cs = s->cs;
    for (size_t i = 0; i < cs->nseqs; i++) {
        const rp_seq *t = cs->seqs[i];
        if (t == s || t->det->n != s->det->n)
            continue;
        size_t k = 0;
        while (k < s->det->n && rp__op_same_structure(&t->det->ops[k], &s->det->ops[k]))
            k++;
        o->variants += k == s->det->n;
    }
}

void rp__seq_retire(const rp_seq *s)
{
    pthread_mutex_lock(&retired_lock);
    if (nretired == MAX_RETIRED) {
        memmove(retired, retired + 1, (MAX_RETIRED - 1) * sizeof retired[0]);
        nretired--;
    }
    seq_info(s, &retired[nretired++]);
    pthread_mutex_unlock(&retired_lock);
}

/* ---- segments, detection, capture ---------------------------------------- */

static int seq_in_use(const rp_ctxstate *cs, const rp_seq *s)
{
    for (size_t k = 0; k < cs->nstreams; k++) {
        const rp_stream *st = &cs->streams[k];
        if (!st->used || !st->ndef)
            continue;
        if (st->complete == s)
            return 1;
        for (size_t c = 0; c < st->ncand; c++)
            if (st->cand[c] == s)
                return 1;
    }
    return 0;
}

/* Drop sequence number `i` of the context (its report line is kept). With
 * `wasted`, it was replaced or evicted before it paid off: its stream backs
 * off (the warmup of its next captures doubles). */
static void drop_seq(rp_ctxstate *cs, size_t i, int wasted)
{
    rp_seq *s = cs->seqs[i];
    cs->seqs[i] = cs->seqs[--cs->nseqs];
    rp__seq_retire(s);
    if (wasted && s->replays < 2) {
        for (size_t k = 0; k < cs->nstreams; k++) {
            rp_stream *st = &cs->streams[k];
            if (st->used && st->handle == s->det->ops[0].stream && st->churn < 10) {
                st->churn++;
                cs->st.backoffs++;
                break;
            }
        }
    }
    rp__det_forget_graph(&cs->det, s->det);
    rp__seq_destroy(s);
    cs->st.graphs_dropped++;
}

/* Make room for one more graph in the context: drop the least recently used
 * sequence that no stream is matching against. Returns 0, or -1 when every
 * sequence is in use (the capture is skipped: a bound hit). */
static int make_room(rp_ctxstate *cs)
{
    if (cs->nseqs < rp__eng_cfg.max_graphs)
        return 0;
    size_t victim = SIZE_MAX;
    for (size_t i = 0; i < cs->nseqs; i++) {
        if (!seq_in_use(cs, cs->seqs[i]) && (victim == SIZE_MAX || cs->seqs[i]->last_use < cs->seqs[victim]->last_use))
            victim = i;
    }
    if (victim == SIZE_MAX)
        return -1;
    cs->st.evictions++;
    drop_seq(cs, victim, 1);
    return 0;
}

/* A stream whose captures keep being replaced before they pay off backs
 * off: its segments need warmup x 2^churn occurrences before a capture. */
static int backing_off(const rp_stream *st, const rp_det_entry *e)
{
    return st->churn && e->seen < ((uint64_t)rp__eng_cfg.warmup << st->churn);
}

/* An executable the new capture of `e` may take over: a sequence of the
 * same stream with the same number and kinds of ops, not being matched, and
 * not replayed for longer than a new shape takes to be learnt (so it is not
 * a variant still in use). NULL if none. */
static rp_seq *reusable(rp_ctxstate *cs, const rp_det_entry *e)
{
    uint64_t stale = (uint64_t)rp__eng_cfg.warmup + rp__eng_cfg.max_variants;
    stale = stale > 1 ? stale - 1 : 1;
    for (size_t i = 0; i < cs->nseqs; i++) {
        rp_seq *s = cs->seqs[i];
        const rp_det_entry *o = s->det;
        if (o == e || o->n != e->n || o->ops[0].stream != e->ops[0].stream || !s->exec ||
            s->broken || cs->det.clock - s->last_use < stale || seq_in_use(cs, s))
            continue;
        size_t k = 0;
        while (k < e->n && o->ops[k].kind == e->ops[k].kind)
            k++;
        if (k == e->n)
            return s;
    }
    return NULL;
}

/* Capture detector entry `e` of table `d` (with volatile fields `vmask`, or
 * NULL for an exact-content sequence). Returns 0, or -1 when a bound
 * stopped it (the failure is counted either way). */
static int capture_segment(rp_ctxstate *cs, rp_detector *d, rp_det_entry *e, const uint64_t *vmask)
{
    rp_seq *reuse = reusable(cs, e);
    if (!reuse && make_room(cs) != 0) {
        rp__bound_hit(cs, RP_BOUND_GRAPHS);
        rp__det_capture_failed(d, e);
        return -1;
    }
    uint64_t staging = 0;
    for (size_t i = 0; i < e->n; i++)
        if (rp__op_staged(&e->ops[i]))
            staging += e->ops[i].bytes;
    if (staging && cs->st.staging_live_bytes + staging > rp__eng_cfg.max_staging) {
        rp__bound_hit(cs, RP_BOUND_STAGING);
        rp__det_capture_failed(d, e);
        return -1;
    }
    pthread_rwlock_wrlock(&cs->gate);
    rp__nvtx_push("reprise: capture sequence %u (%zu ops)", e->id, e->n);
    rp_seq *s = atomic_load(&prog_pending) ? NULL : rp__capture(cs, e, vmask, reuse);
    rp__nvtx_pop();
    pthread_rwlock_unlock(&cs->gate);
    if (reuse && !reuse->exec) {
        /* Its executable now runs the new sequence. */
        for (size_t i = 0; i < cs->nseqs; i++)
            if (cs->seqs[i] == reuse) {
                drop_seq(cs, i, 1);
                break;
            }
    }
    if (!s) {
        rp__det_capture_failed(d, e);
        cs->st.capture_failures++;
        return 0;
    }
    rp__det_captured(d, e);
    s->captured_at = e->seen;
    s->last_use = cs->det.clock;
    rp__seqs_add(cs, s);
    cs->st.graphs_captured++;
    if (vmask)
        cs->st.volatile_captures++;
    static _Atomic unsigned int captures_logged;
    if (atomic_fetch_add(&captures_logged, 1) < 16)
        rp__info("captured sequence %u: %zu ops, first kernel %s%s", s->id, e->n,
                 rp__rec_kernel_name(cs, &e->ops[0]), vmask ? ", with volatile arguments" : "");
    if (!atomic_exchange(&exit_hook_armed, 1)) {
        /* Registered after the driver's own exit handlers (cuInit has run by
         * now), so it runs before them. */
        atexit(exit_hook);
    }
    return 0;
}

/* The fields in which segment `ops` differs from the entry's first
 * occurrence, op by op, into `mask`. Returns 1 if some field differs and
 * every difference can be updated on a graph, else 0. */
static int volatile_fields(rp_ctxstate *cs, const rp_det_entry *e, const rp_op *ops, uint64_t *mask)
{
    int any = 0;
    for (size_t i = 0; i < e->n; i++) {
        int ok;
        mask[i] = rp__op_diff(&e->ops[i], &ops[i], rp__rec_layout(cs, &e->ops[i]), &ok);
        if (!ok)
            return 0;
        any |= mask[i] != 0;
    }
    return any;
}

/* A segment's structure is counted too: if it keeps repeating with more
 * distinct contents than REPRISE_MAX_VARIANTS, capture it once with the
 * differing fields volatile (updated before each replay); if that sequence
 * exists already, the fields that differ now become volatile too, so that
 * the next occurrence matches. Returns 1 when a capture with volatile
 * fields was made (or tried) from this segment, else 0. */
static int learn_volatile(rp_stream *st)
{
    rp_ctxstate *cs = st->cs;
    rp_det_entry *e = NULL;
    rp_det_verdict v = rp__det_observe(&cs->sdet, st->seg, st->nseg, &e);
    if (v != RP_DET_CAPTURE && v != RP_DET_HAS_GRAPH)
        return 0;
    uint64_t *mask = calloc(e->n, sizeof *mask);
    if (!mask) {
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        return 0;
    }
    size_t nvol = 0;
    int ok = volatile_fields(cs, e, st->seg, mask);
    for (size_t k = 0; ok && k < e->n; k++)
        nvol += mask[k] != 0;
    if (ok && v == RP_DET_CAPTURE && nvol > rp__eng_cfg.max_updates) {
        /* Every replay would update more nodes than allowed: a graph would
         * never run. Not captured; retried after a back-off. */
        rp__bound_hit(cs, RP_BOUND_UPDATES);
        ok = 0;
    }
    int captured = 0;
    if (!ok) {
        if (v == RP_DET_CAPTURE)
            rp__det_capture_failed(&cs->sdet, e);
    } else if (v == RP_DET_CAPTURE) {
        capture_segment(cs, &cs->sdet, e, mask);
        captured = 1;
    } else {
        for (size_t i = 0; i < cs->nseqs; i++) {
            rp_seq *s = cs->seqs[i];
            if (s->det != e || !s->vmask)
                continue;
            size_t now_volatile = 0;
            for (size_t k = 0; k < e->n; k++) {
                uint64_t add = mask[k] & ~s->vmask[k];
                if (add) {
                    s->vmask[k] |= add;
                    s->widened++;
                    cs->st.widenings++;
                }
                now_volatile += s->vmask[k] != 0;
            }
            if (now_volatile > rp__eng_cfg.max_updates)
                s->broken = 1; /* could never replay any more: dropped, backs off */
        }
    }
    free(mask);
    return captured;
}

/* Sequences whose launch or update failed are dropped once no stream is
 * matching against them; their segment backs off before it is tried again. */
static void sweep_broken(rp_ctxstate *cs)
{
    for (size_t i = 0; i < cs->nseqs;) {
        rp_seq *s = cs->seqs[i];
        if (!s->broken || seq_in_use(cs, s)) {
            i++;
            continue;
        }
        rp_det_entry *e = s->det;
        static _Atomic unsigned int drops_logged;
        if (atomic_fetch_add(&drops_logged, 1) < 8)
            rp__info("sequence %u given up after %llu replays (a launch or update failed, or "
                     "replays kept needing too many updates); it backs off before a new capture",
                     s->id, (unsigned long long)s->replays);
        drop_seq(cs, i, 0);
        rp__det_capture_failed(&cs->det, e);
    }
}

/* The segment of `st` ends: count it, and capture it if the detector asks. */
static void observe(rp_stream *st)
{
    rp_ctxstate *cs = st->cs;
    if (st->nseg == 0) {
        seg_clear(st);
        return;
    }
    cs->st.segments++;
    uint64_t diverged = st->seg_diverged, rest = st->nseg - st->seg_diverged;
    count_eager(cs, RP_EAGER_DIVERGED, diverged);
    uint64_t param_bytes = 0;
    for (size_t i = 0; i < st->nseg; i++)
        param_bytes += st->seg[i].param_bytes;
    if (st->seg_overflow || param_bytes > rp__eng_cfg.max_seq_bytes) {
        rp__bound_hit(cs, st->seg_overflow ? RP_BOUND_OPS : RP_BOUND_SEQ_BYTES);
        count_eager(cs, RP_EAGER_BOUND, rest);
        seg_clear(st);
        return;
    }
    /* The records' keys were computed when they were recorded. */
    rp_det_entry *e = NULL;
    enum rp__eager_reason why = RP_EAGER_WARMING_UP;
    rp_det_verdict verdict = rp__det_observe(&cs->det, st->seg, st->nseg, &e);
    switch (verdict) {
    case RP_DET_TOO_SHORT:
        why = RP_EAGER_SHORT;
        break;
    case RP_DET_TOO_LONG:
        rp__bound_hit(cs, RP_BOUND_OPS);
        why = RP_EAGER_BOUND;
        break;
    case RP_DET_NO_MEMORY:
        rp__bound_hit(cs, RP_BOUND_MEMORY);
        why = RP_EAGER_BOUND;
        break;
    case RP_DET_WARMING:
        break;
    case RP_DET_BACKING_OFF:
        why = RP_EAGER_CAPTURE_FAILED;
        break;
    case RP_DET_HAS_GRAPH:
        why = RP_EAGER_DIVERGED;
        break;
    case RP_DET_CAPTURE:
        /* Its structure is counted first: when the structure's contents
         * keep changing (more than REPRISE_MAX_VARIANTS of them), one graph
         * with updates serves them all, rather than one more exact variant.
         * With a warmup of 1 this is the only place contents are compared:
         * every segment is an exact capture candidate at once. */
        if (backing_off(st, e))
            why = RP_EAGER_CAPTURE_FAILED;
        else if (!learn_volatile(st) && capture_segment(cs, &cs->det, e, NULL) != 0)
            why = RP_EAGER_BOUND;
        break;
    }
    if (verdict == RP_DET_WARMING)
        learn_volatile(st);
    count_eager(cs, why, rest);
    seg_clear(st);
    sweep_broken(cs);
}

void rp__seg_cut(rp_stream *st)
{
    observe(st);
}

/* Resolve and end the segment of one stream. */
static CUresult end_segment(rp_stream *st)
{
    CUresult rc = rp__match_resolve(st);
    observe(st);
    return rc;
}

/* End the segments of every stream implicitly ordered with `st` (itself
 * included when `self`). Returns the first flush error. */
static CUresult end_ordered(rp_stream *st, int self)
{
    rp_ctxstate *cs = st->cs;
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used || (!o->nseg && !o->ndef) || (o == st && !self) || !ordered(o, st))
            continue;
        CUresult rc = end_segment(o);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    return first;
}

static CUresult resolve_all_locked(rp_ctxstate *cs)
{
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++)
        if (cs->streams[i].used && cs->streams[i].must_wait)
            rp__stream_rejoin(&cs->streams[i]); /* only the owner's own */
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *o = &cs->streams[i];
        if (!o->used || (!o->nseg && !o->ndef))
            continue;
        CUresult rc = end_segment(o);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    sweep_broken(cs);
    return first;
}

/* A global boundary: resolve and end everything, context by context. */
/* Resolve every context, each under its lock, then run `then` (if any) on
 * it before unlocking. Returns the first error. */
static CUresult resolve_every_ctx(void (*then)(rp_ctxstate *, int), int arg)
{
    CUresult first = CUDA_SUCCESS;
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        lock(&ctxs[i]);
        CUresult rc = resolve_all_locked(&ctxs[i]);
        if (then)
            then(&ctxs[i], arg);
        unlock(&ctxs[i]);
        if (first == CUDA_SUCCESS)
            first = rc;
    }
    return first;
}

static CUresult boundary_global(void)
{
    return resolve_every_ctx(NULL, 0);
}

/* Every context's gate, held for reading: no capture window of ours opens
 * (or is open) until gates_release. Returns how many were taken (a context
 * created meanwhile is not among them). */
static size_t gates_hold(void)
{
    size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        pthread_rwlock_rdlock(&ctxs[i].gate);
    return n;
}

static void gates_release(size_t n)
{
    for (size_t i = n; i-- > 0;)
        pthread_rwlock_unlock(&ctxs[i].gate);
}

CUresult rp__engine_resolve_all(void)
{
    return boundary_global();
}

/* Forget every graph and every stream of a context (its teardown, a module
 * unload): their handles may be reused for something else. With
 * `ctx_dies`, the private stream goes too (it dies with the context). */
static void forget_all_locked(rp_ctxstate *cs, int ctx_dies)
{
    resolve_all_locked(cs);
    rp__seqs_drop_all(cs);
    rp__rec_reset(cs);
    /* Another thread's per-thread stream whose work was just resolved for it
     * keeps its record, and with it the wait its owner's next call must make
     * (the handle names no other stream later; its event outlives the
     * private stream it was recorded on). Every other record goes. */
    size_t kept = 0;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->must_wait && rp__stream_is_foreign(st)) {
            seg_clear(st);
            if (kept != i) {
                cs->streams[kept] = *st;
                memset(st, 0, sizeof *st);
            }
            kept++;
        } else {
            stream_free(st);
        }
    }
    cs->nstreams = kept;
    if (ctx_dies && cs->priv) {
        rp__aux.cuStreamDestroy_v2(cs->priv);
        cs->priv = NULL;
        cs->win.stream = NULL;
    }
    atomic_fetch_add(&stream_gen, 1);
}

/* ---- the common paths ------------------------------------------------------- */

static inline int stepping_aside(void)
{
    return atomic_load_explicit(&prog_captures, memory_order_acquire) > 0;
}

/* An op the program issues while it captures goes straight to the driver;
 * it is still counted, as eager for that reason, so that the report's
 * shares cover all of the program's work. */
static void aside_op(CUstream s, int ptsz, rp_op_kind kind)
{
    rp_ctxstate *cs = ctx_of_stream(s, ptsz);
    if (!cs)
        return;
    lock(cs);
    cs->st.ops_seen[kind]++;
    count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
    unlock(cs);
}

/* The error of a flush forced before a call wins over the call's own
 * (DESIGN.md §2.4). Callers compute `pre` in a statement of its own: the
 * order in which C evaluates a call's arguments is unspecified, and the
 * boundary must run before the call. */
static inline CUresult first_error(CUresult pre, CUresult rc)
{
    return pre != CUDA_SUCCESS ? pre : rc;
}

/* A stream-scoped boundary on `s`: resolve and end that stream's segment and
 * those ordered with it. */
static CUresult boundary_stream(CUstream s, int ptsz)
{
    rp_ctxstate *cs = ctx_of_stream(s, ptsz);
    if (!cs)
        return boundary_global();
    lock(cs);
    rp_stream *st = stream_of(cs, s, ptsz);
    CUresult rc = st ? end_ordered(st, 1) : resolve_all_locked(cs);
    unlock(cs);
    return rc;
}

/* A call on stream `s` that the engine does not capture, for reason `why`;
 * called with cs locked. */
static CUresult not_capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz,
                                      enum rp__eager_reason why)
{
    cs->st.ops_seen[0]++;
    count_eager(cs, why, 1);
    rp_stream *st = stream_of(cs, s, ptsz);
    return st ? end_ordered(st, 1) : resolve_all_locked(cs);
}

static CUresult not_capturable(CUstream s, int ptsz)
{
    rp_ctxstate *cs = ctx_of_stream(s, ptsz);
    if (!cs)
        return boundary_global();
    lock(cs);
    CUresult rc = not_capturable_locked(cs, s, ptsz, RP_EAGER_NOT_CAPTURABLE);
    unlock(cs);
    return rc;
}

static const char *kind_name(rp_op_kind k)
{
    static const char *const names[] = {"?", "kernel", "htod copy", "dtod copy", "dtoh copy",
                                        "memset"};
    return (unsigned int)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* A capturable call whose record is `op` (kind fields set), with cs locked.
 * Returns 1 when the engine deferred it (*out is the call's result; cs is
 * unlocked), or 0 when the caller must now issue it eagerly, cs still
 * locked, and then call eager_done. */
static int capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op,
                             rp_stream **pst, CUresult *out)
{
    *out = CUDA_SUCCESS;
    rp_stream *st = stream_of(cs, s, ptsz);
    *pst = st;
    if (!st) {
        *out = resolve_all_locked(cs);
        rp__op_free(op);
        return 0;
    }
    cs->st.ops_seen[op->kind]++;
    op->ctx = cs->ctx;
    op->stream = st->handle;
    if (ptsz)
        op->flags |= RP_OPF_PTSZ;
    if (atomic_load(&prog_pending)) {
        /* The program is beginning a capture: nothing more is deferred
         * (what the stream holds goes first). */
        *out = end_ordered(st, 1);
        count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
        *pst = NULL; /* nor learnt */
        return 0;
    }
    CUresult pre = end_ordered(st, 0);
    CUresult err = CUDA_SUCCESS;
    rp_op_kind kind = op->kind; /* the record moves into the stream when deferred */
    if (rp__match_offer(st, op, &err)) {
        rp__trace("%s on stream %p: deferred (%zu deferred now)", kind_name(kind),
                  (void *)st->handle, st->ndef);
        unlock(cs);
        *out = first_error(pre, err);
        return 1;
    }
    rp__trace("%s on stream %p: eager", kind_name(op->kind), (void *)st->handle);
    *out = first_error(pre, err);
    return 0;
}

/* The same, for a call whose context is not known yet. Returns 1 (deferred;
 * nothing locked), or 0 with *pcs locked (or NULL: a plain eager call). */
static int capturable(CUstream s, int ptsz, rp_op *op, rp_ctxstate **pcs, rp_stream **pst,
                      CUresult *out)
{
    rp_ctxstate *cs = ctx_of_stream(s, ptsz);
    *pcs = cs;
    *pst = NULL;
    if (!cs) {
        rp__op_free(op);
        *out = boundary_global();
        return 0;
    }
    lock(cs);
    return capturable_locked(cs, s, ptsz, op, pst, out);
}

/* After the eager call of a capturable op: it joins its stream's segment
 * (a failed call joins nothing). Unlocks cs. */
static CUresult eager_done(rp_ctxstate *cs, rp_stream *st, rp_op *op, CUresult pre, CUresult rc)
{
    if (cs) {
        if (st && rc == CUDA_SUCCESS)
            rp__seg_append(st, op, RP_EAGER_WARMING_UP);
        else
            rp__op_free(op);
        unlock(cs);
    }
    return first_error(pre, rc);
}

/* ---- capturable entry points ------------------------------------------------ */

#define R rp__real

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                       CUstream s, void **kp, void **extra, int ptsz)
{
    CUresult (*real)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                     unsigned int, unsigned int, unsigned int, CUstream, void **, void **) =
        ptsz ? R.cuLaunchKernel_ptsz : R.cuLaunchKernel;
#define LAUNCH_REAL() real(f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra)
    if (stepping_aside()) {
        aside_op(s, ptsz, RP_OP_KERNEL);
        return LAUNCH_REAL();
    }
    rp_ctxstate *cs = ctx_of_stream(s, ptsz);
    if (!cs)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = boundary_global();
            return first_error(pre_, LAUNCH_REAL());
        }
    rp_op op;
    enum rp__eager_reason why = RP_EAGER_NOT_CAPTURABLE;
    const unsigned int grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    lock(cs);
    if (rp__rec_kernel(cs, &op, f, grid, block, shmem, kp, extra, &why) != 0) {
        CUresult pre = not_capturable_locked(cs, s, ptsz, why);
        unlock(cs);
        return first_error(pre, LAUNCH_REAL());
    }
    op.entry = ptsz ? RP_E_cuLaunchKernel_ptsz : RP_E_cuLaunchKernel;
    rp_stream *st;
    CUresult pre;
    if (capturable_locked(cs, s, ptsz, &op, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, LAUNCH_REAL());
#undef LAUNCH_REAL
}

static CUresult CUDAAPI eng_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                           unsigned int gz, unsigned int bx, unsigned int by,
                                           unsigned int bz, unsigned int shmem, CUstream s,
                                           void **kp, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra, 0);
}

static CUresult CUDAAPI eng_cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                                unsigned int gz, unsigned int bx,
                                                unsigned int by, unsigned int bz,
                                                unsigned int shmem, CUstream s, void **kp,
                                                void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra, 1);
}

/* cuLaunchKernelEx: captured when it carries no attributes (an attribute
 * we do not reproduce could change what the kernel does). */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra,
                          int ptsz)
{
    CUresult (*real)(const CUlaunchConfig *, CUfunction, void **, void **) =
        ptsz ? R.cuLaunchKernelEx_ptsz : R.cuLaunchKernelEx;
    if (!c)
        return real(c, f, kp, extra);
    if (stepping_aside()) {
        aside_op(c->hStream, ptsz, RP_OP_KERNEL);
        return real(c, f, kp, extra);
    }
    if (c->numAttrs != 0)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = not_capturable(c->hStream, ptsz);
            return first_error(pre_, real(c, f, kp, extra));
        }
    rp_ctxstate *cs = ctx_of_stream(c->hStream, ptsz);
    if (!cs)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = boundary_global();
            return first_error(pre_, real(c, f, kp, extra));
        }
    rp_op op;
    enum rp__eager_reason why = RP_EAGER_NOT_CAPTURABLE;
    const unsigned int grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const unsigned int block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    lock(cs);
    if (rp__rec_kernel(cs, &op, f, grid, block, c->sharedMemBytes, kp, extra, &why) != 0) {
        CUresult pre = not_capturable_locked(cs, c->hStream, ptsz, why);
        unlock(cs);
        return first_error(pre, real(c, f, kp, extra));
    }
    op.entry = ptsz ? RP_E_cuLaunchKernelEx_ptsz : RP_E_cuLaunchKernelEx;
    rp_stream *st;
    CUresult pre;
    if (capturable_locked(cs, c->hStream, ptsz, &op, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, real(c, f, kp, extra));
}

static CUresult CUDAAPI eng_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kp,
                                             void **extra)
{
    return launch_ex(c, f, kp, extra, 0);
}

static CUresult CUDAAPI eng_cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f,
                                                  void **kp, void **extra)
{
    return launch_ex(c, f, kp, extra, 1);
}

/* Asynchronous host-to-device copy. From pageable memory the driver reads
 * the bytes at the call: a deferred copy keeps a copy of them, and its graph
 * reads them from staging. From pinned memory the driver reads when the copy
 * runs (earlier work on the stream may fill the buffer): the copy is
 * captured reading the program's own buffer, whose address is content. */
static CUresult htod_async(CUdeviceptr d, const void *h, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(CUdeviceptr, const void *, size_t, CUstream) =
        ptsz ? R.cuMemcpyHtoDAsync_v2_ptsz : R.cuMemcpyHtoDAsync_v2;
    if (stepping_aside()) {
        aside_op(s, ptsz, RP_OP_HTOD);
        return real(d, h, n, s);
    }
    int pinned = n && h && rp__rec_is_pinned(h);
    if (n == 0 || !h || (!pinned && n > MAX_STAGE_OP))
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = not_capturable(s, ptsz);
            return first_error(pre_, real(d, h, n, s));
        }
    rp_op op = {.kind = RP_OP_HTOD, .dst = d, .host = (void *)h, .bytes = n,
                .flags = pinned ? RP_OPF_HOST_PINNED : 0,
                .entry = ptsz ? RP_E_cuMemcpyHtoDAsync_v2_ptsz : RP_E_cuMemcpyHtoDAsync_v2};
    rp_ctxstate *cs;
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    if (!pinned)
        op.host = NULL; /* the program's pageable buffer: not kept past the call */
    return eager_done(cs, st, &op, pre, real(d, h, n, s));
}

static CUresult CUDAAPI eng_cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    return htod_async(d, h, n, s, 0);
}

static CUresult CUDAAPI eng_cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *h, size_t n,
                                                      CUstream s)
{
    return htod_async(d, h, n, s, 1);
}

/* Asynchronous device-to-host copy: captured into pinned memory only; into
 * pageable memory it synchronises the host, so it is a global boundary. */
static CUresult dtoh_async(void *h, CUdeviceptr d, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(void *, CUdeviceptr, size_t, CUstream) =
        ptsz ? R.cuMemcpyDtoHAsync_v2_ptsz : R.cuMemcpyDtoHAsync_v2;
    if (stepping_aside()) {
        aside_op(s, ptsz, RP_OP_DTOH);
        return real(h, d, n, s);
    }
    int pinned = n && rp__rec_is_pinned(h);
    if (!pinned) {
        CUresult pre = boundary_global();
        return first_error(pre, real(h, d, n, s));
    }
    rp_op op = {.kind = RP_OP_DTOH, .host = h, .src = d, .bytes = n,
                .entry = ptsz ? RP_E_cuMemcpyDtoHAsync_v2_ptsz : RP_E_cuMemcpyDtoHAsync_v2};
    rp_ctxstate *cs;
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, real(h, d, n, s));
}

static CUresult CUDAAPI eng_cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    return dtoh_async(h, d, n, s, 0);
}

static CUresult CUDAAPI eng_cuMemcpyDtoHAsync_v2_ptsz(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    return dtoh_async(h, d, n, s, 1);
}

/* Device-to-device copies, asynchronous and synchronous forms: neither
 * synchronises the host. The synchronous forms run on the legacy stream
 * (the per-thread stream for _ptds). */
static CUresult dtod_common(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, int ptsz,
                            CUresult (*real_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream),
                            CUresult (*real_sync)(CUdeviceptr, CUdeviceptr, size_t))
{
#define DTOD_REAL() (real_sync ? real_sync(dst, src, n) : real_async(dst, src, n, s))
    if (stepping_aside()) {
        aside_op(s, ptsz, RP_OP_DTOD);
        return DTOD_REAL();
    }
    if (n == 0)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = not_capturable(s, ptsz);
            return first_error(pre_, DTOD_REAL());
        }
    rp_op op = {.kind = RP_OP_DTOD, .dst = dst, .src = src, .bytes = n,
                .entry = real_sync ? (ptsz ? RP_E_cuMemcpyDtoD_v2_ptds : RP_E_cuMemcpyDtoD_v2)
                                   : (ptsz ? RP_E_cuMemcpyDtoDAsync_v2_ptsz : RP_E_cuMemcpyDtoDAsync_v2)};
    rp_ctxstate *cs;
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, DTOD_REAL());
#undef DTOD_REAL
}

static CUresult CUDAAPI eng_cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s_, size_t n, CUstream s)
{
    return dtod_common(d, s_, n, s, 0, R.cuMemcpyDtoDAsync_v2, NULL);
}

static CUresult CUDAAPI eng_cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s_, size_t n,
                                                      CUstream s)
{
    return dtod_common(d, s_, n, s, 1, R.cuMemcpyDtoDAsync_v2_ptsz, NULL);
}

static CUresult CUDAAPI eng_cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s_, size_t n)
{
    return dtod_common(d, s_, n, NULL, 0, NULL, R.cuMemcpyDtoD_v2);
}

static CUresult CUDAAPI eng_cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s_, size_t n)
{
    return dtod_common(d, s_, n, NULL, 1, NULL, R.cuMemcpyDtoD_v2_ptds);
}

/* Memsets of device memory (a memset of host memory synchronises: global
 * boundary). */
static CUresult memset_common(CUdeviceptr d, unsigned int v, size_t n, unsigned int elem,
                              CUstream s, int ptsz, CUresult (*issue)(CUdeviceptr, unsigned int,
                                                                       size_t, CUstream, void *),
                              void *real, enum rp__entry entry)
{
    if (stepping_aside()) {
        aside_op(s, ptsz, RP_OP_MEMSET);
        return issue(d, v, n, s, real);
    }
    unsigned int type = 0;
    int device = n && rp__aux.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) ==
                          CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE;
    if (!device)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = boundary_global();
            return first_error(pre_, issue(d, v, n, s, real));
        }
    rp_op op = {.kind = RP_OP_MEMSET, .dst = d, .value = v, .bytes = n, .elem = elem,
                .entry = (uint16_t)entry};
    rp_ctxstate *cs;
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, issue(d, v, n, s, real));
}

#define MEMSET_PAIR(bits, type)                                                                 \
    static CUresult issue_sync_##bits(CUdeviceptr d, unsigned int v, size_t n, CUstream s,      \
                                      void *real)                                               \
    {                                                                                           \
        (void)s;                                                                                \
        return ((CUresult(*)(CUdeviceptr, type, size_t))real)(d, (type)v, n);                   \
    }                                                                                           \
    static CUresult issue_async_##bits(CUdeviceptr d, unsigned int v, size_t n, CUstream s,     \
                                       void *real)                                              \
    {                                                                                           \
        return ((CUresult(*)(CUdeviceptr, type, size_t, CUstream))real)(d, (type)v, n, s);      \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##_v2(CUdeviceptr d, type v, size_t n)           \
    {                                                                                           \
        return memset_common(d, v, n, bits / 8, NULL, 0, issue_sync_##bits,                     \
                             (void *)R.cuMemsetD##bits##_v2, RP_E_cuMemsetD##bits##_v2);        \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##_v2_ptds(CUdeviceptr d, type v, size_t n)      \
    {                                                                                           \
        return memset_common(d, v, n, bits / 8, NULL, 1, issue_sync_##bits,                     \
                             (void *)R.cuMemsetD##bits##_v2_ptds,                               \
                             RP_E_cuMemsetD##bits##_v2_ptds);                                   \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##Async(CUdeviceptr d, type v, size_t n,         \
                                                       CUstream s)                              \
    {                                                                                           \
        return memset_common(d, v, n, bits / 8, s, 0, issue_async_##bits,                       \
                             (void *)R.cuMemsetD##bits##Async, RP_E_cuMemsetD##bits##Async);    \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##Async_ptsz(CUdeviceptr d, type v, size_t n,    \
                                                            CUstream s)                         \
    {                                                                                           \
        return memset_common(d, v, n, bits / 8, s, 1, issue_async_##bits,                       \
                             (void *)R.cuMemsetD##bits##Async_ptsz,                             \
                             RP_E_cuMemsetD##bits##Async_ptsz);                                 \
    }
MEMSET_PAIR(8, unsigned char)
MEMSET_PAIR(16, unsigned short)
MEMSET_PAIR(32, unsigned int)

/* ---- stream-scoped boundaries ---------------------------------------------- */

#define STREAM_BOUNDARY(name, ptsz, sig, args, streamarg)                                       \
    static CUresult CUDAAPI eng_##name sig                                                      \
    {                                                                                           \
        if (stepping_aside())                                                                   \
            return R.name args;                                                                 \
        CUresult pre = boundary_stream(streamarg, ptsz);                                        \
        return first_error(pre, R.name args);                                                   \
    }

STREAM_BOUNDARY(cuStreamSynchronize, 0, (CUstream s), (s), s)
STREAM_BOUNDARY(cuStreamSynchronize_ptsz, 1, (CUstream s), (s), s)
STREAM_BOUNDARY(cuStreamQuery, 0, (CUstream s), (s), s)
STREAM_BOUNDARY(cuStreamQuery_ptsz, 1, (CUstream s), (s), s)
STREAM_BOUNDARY(cuEventRecord, 0, (CUevent e, CUstream s), (e, s), s)
STREAM_BOUNDARY(cuEventRecord_ptsz, 1, (CUevent e, CUstream s), (e, s), s)
STREAM_BOUNDARY(cuEventRecordWithFlags, 0, (CUevent e, CUstream s, unsigned int f), (e, s, f), s)
STREAM_BOUNDARY(cuEventRecordWithFlags_ptsz, 1, (CUevent e, CUstream s, unsigned int f), (e, s, f), s)
STREAM_BOUNDARY(cuStreamWaitEvent, 0, (CUstream s, CUevent e, unsigned int f), (s, e, f), s)
STREAM_BOUNDARY(cuStreamWaitEvent_ptsz, 1, (CUstream s, CUevent e, unsigned int f), (s, e, f), s)
STREAM_BOUNDARY(cuLaunchHostFunc, 0, (CUstream s, CUhostFn fn, void *u), (s, fn, u), s)
STREAM_BOUNDARY(cuLaunchHostFunc_ptsz, 1, (CUstream s, CUhostFn fn, void *u), (s, fn, u), s)
STREAM_BOUNDARY(cuGraphLaunch, 0, (CUgraphExec g, CUstream s), (g, s), s)
STREAM_BOUNDARY(cuGraphLaunch_ptsz, 1, (CUgraphExec g, CUstream s), (g, s), s)

/* Drop the records of the stream whose handle is `h` (with cs locked). */
static void forget_stream(rp_ctxstate *cs, CUstream h)
{
    for (size_t i = 0; i < cs->nstreams; i++)
        if (cs->streams[i].used && cs->streams[i].handle == h)
            stream_free(&cs->streams[i]);
    atomic_fetch_add(&stream_gen, 1);
}

/* A destroyed stream's handle may come back for a new stream with other
 * flags or another context: its state goes with it, after its deferred work
 * was resolved (destroying a stream does not wait for its work, but work
 * issued before the destroy still runs). */
static CUresult stream_destroy(CUstream s, CUresult (*real)(CUstream))
{
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return real(s);
    if (stepping_aside()) {
        /* Nothing is deferred while the program captures, but the record
         * (its flags, its segment) must not outlive the stream: the handle
         * may come back for a stream of another kind. */
        CUresult rc = real(s);
        size_t n = atomic_load_explicit(&nctxs, memory_order_acquire);
        for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
            lock(&ctxs[i]);
            forget_stream(&ctxs[i], s);
            unlock(&ctxs[i]);
        }
        return rc;
    }
    rp_ctxstate *cs = ctx_of_stream(s, 0);
    if (!cs)
        {
            /* The boundary first: C leaves the order of arguments open. */
            CUresult pre_ = boundary_global();
            return first_error(pre_, real(s));
        }
    lock(cs);
    CUresult pre = CUDA_SUCCESS;
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handle == s) {
            pre = end_ordered(st, 1);
            stream_free(st);
        }
    }
    CUresult rc = real(s);
    atomic_fetch_add(&stream_gen, 1);
    unlock(cs);
    return first_error(pre, rc);
}

static CUresult CUDAAPI eng_cuStreamDestroy(CUstream s)
{
    return stream_destroy(s, R.cuStreamDestroy);
}

static CUresult CUDAAPI eng_cuStreamDestroy_v2(CUstream s)
{
    return stream_destroy(s, R.cuStreamDestroy_v2);
}

/* ---- global boundaries with side effects ------------------------------------ */

/* cuCtxSynchronize from another thread would invalidate an open capture
 * window of ours in that context: it waits on the context's gate while it
 * runs. */
static CUresult ctx_sync(rp_ctxstate *cs, CUresult (*real)(CUcontext), CUcontext c)
{
    CUresult pre = boundary_global();
    if (cs)
        pthread_rwlock_rdlock(&cs->gate);
    CUresult rc = real(c);
    if (cs)
        pthread_rwlock_unlock(&cs->gate);
    return first_error(pre, rc);
}

static CUresult CUDAAPI sync_v1(CUcontext c)
{
    (void)c;
    return R.cuCtxSynchronize();
}

static CUresult CUDAAPI eng_cuCtxSynchronize(void)
{
    if (stepping_aside())
        return R.cuCtxSynchronize();
    return ctx_sync(ctx_current(), sync_v1, NULL);
}

static CUresult CUDAAPI eng_cuCtxSynchronize_v2(CUcontext c)
{
    if (stepping_aside())
        return R.cuCtxSynchronize_v2(c);
    return ctx_sync(c ? ctxstate_of(c) : ctx_current(), R.cuCtxSynchronize_v2, c);
}

/* The program begins its own capture: no new deferrals from here on,
 * everything deferred is resolved, and work another thread resolved for a
 * per-thread stream is waited for (its owner's next calls go straight to
 * the driver and could not wait on the device). The program's begin then
 * runs while no capture window of ours is open (the gates), and the engine
 * steps aside until the capture ends (DESIGN.md §2.5). */
static _Atomic uint64_t prog_captures_total;

static void settle_streams(rp_ctxstate *cs, int unused)
{
    (void)unused;
    for (size_t j = 0; j < cs->nstreams; j++)
        rp__stream_settle(&cs->streams[j]);
}

static CUresult prog_capture_prepare(void)
{
    atomic_fetch_add(&prog_pending, 1);
    if (stepping_aside())
        return CUDA_SUCCESS; /* already empty */
    return resolve_every_ctx(settle_streams, 0);
}

static void prog_capture_begun(CUresult rc)
{
    if (rc == CUDA_SUCCESS) {
        atomic_fetch_add(&prog_captures, 1);
        atomic_fetch_add(&prog_captures_total, 1);
    } else {
        atomic_fetch_sub(&prog_pending, 1);
    }
}

uint64_t rp__engine_program_captures(void)
{
    return atomic_load(&prog_captures_total);
}

static void prog_capture_ended(CUresult rc)
{
    /* 908 (wrong thread) and ILLEGAL_STATE (not capturing) leave things as
     * they were; any other outcome closed the capture. */
    if (rc != CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD && rc != CUDA_ERROR_ILLEGAL_STATE &&
        atomic_load(&prog_captures) > 0) {
        atomic_fetch_sub(&prog_captures, 1);
        atomic_fetch_sub(&prog_pending, 1);
    }
}

#define BEGIN_CAPTURE(name, sig, args)                                                          \
    static CUresult CUDAAPI eng_##name sig                                                      \
    {                                                                                           \
        CUresult pre = prog_capture_prepare();                                                  \
        size_t held = gates_hold();                                                             \
        CUresult rc = R.name args;                                                              \
        gates_release(held);                                                                    \
        prog_capture_begun(rc);                                                                 \
        return first_error(pre, rc);                                                            \
    }
BEGIN_CAPTURE(cuStreamBeginCapture, (CUstream s), (s))
BEGIN_CAPTURE(cuStreamBeginCapture_ptsz, (CUstream s), (s))
BEGIN_CAPTURE(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode m), (s, m))
BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, (CUstream s, CUstreamCaptureMode m), (s, m))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH)
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph_ptsz, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH)

static CUresult CUDAAPI eng_cuStreamEndCapture(CUstream s, CUgraph *g)
{
    CUresult rc = R.cuStreamEndCapture(s, g);
    prog_capture_ended(rc);
    return rc;
}

static CUresult CUDAAPI eng_cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    CUresult rc = R.cuStreamEndCapture_ptsz(s, g);
    prog_capture_ended(rc);
    return rc;
}

static CUresult CUDAAPI eng_cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    CUresult rc = R.cuLibraryGetKernel(k, lib, name);
    if (rc == CUDA_SUCCESS && k)
        rp__rec_note_kernel(*k);
    return rc;
}

/* Teardown of what graphs refer to (contexts, modules, libraries): every
 * context's graphs and streams are forgotten first, while the handles still
 * live (which context a module or a device's primary context is, is not
 * known here: all are forgotten, at the cost of a new warmup). The call runs
 * holding every context's gate, so that no capture window opens meanwhile. */
static CUresult teardown_pre(int ctx_dies, size_t *held)
{
    CUresult first = resolve_every_ctx(forget_all_locked, ctx_dies);
    *held = gates_hold();
    return first;
}

#define TEARDOWN(name, sig, args, ctx_dies)                                                     \
    static CUresult CUDAAPI eng_##name sig                                                      \
    {                                                                                           \
        if (stepping_aside())                                                                   \
            return R.name args;                                                                 \
        size_t held;                                                                            \
        CUresult pre = teardown_pre(ctx_dies, &held);                                           \
        CUresult rc = R.name args;                                                              \
        gates_release(held);                                                                    \
        return first_error(pre, rc);                                                            \
    }
TEARDOWN(cuCtxDestroy, (CUcontext c), (c), 1)
TEARDOWN(cuCtxDestroy_v2, (CUcontext c), (c), 1)
TEARDOWN(cuCtxDetach, (CUcontext c), (c), 1)
TEARDOWN(cuDevicePrimaryCtxRelease, (CUdevice d), (d), 1)
TEARDOWN(cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d), 1)
TEARDOWN(cuDevicePrimaryCtxReset, (CUdevice d), (d), 1)
TEARDOWN(cuDevicePrimaryCtxReset_v2, (CUdevice d), (d), 1)
TEARDOWN(cuModuleUnload, (CUmodule m), (m), 0)
TEARDOWN(cuLibraryUnload, (CUlibrary l), (l), 0)

/* ---- everything else: global boundaries, generated ------------------------ */

#define X(name, params, args)                                                                   \
    static CUresult CUDAAPI engb_##name params                                                  \
    {                                                                                           \
        if (stepping_aside())                                                                   \
            return R.name args;                                                                 \
        CUresult pre = boundary_global();                                                       \
        return first_error(pre, R.name args);                                                   \
    }
RP_ENTRIES(X)
#undef X

/* Entries that neither order nor observe the device's work: forwarded as
 * they are (handle lookups, the program's capture-status queries). */
static int plain_forward(enum rp__entry id)
{
    switch (id) {
    case RP_E_cuInit:
    case RP_E_cuGetProcAddress:
    case RP_E_cuGetProcAddress_v2:
    case RP_E_cuModuleGetFunction:
    case RP_E_cuKernelGetFunction:
    case RP_E_cuStreamIsCapturing:
    case RP_E_cuStreamIsCapturing_ptsz:
    case RP_E_cuStreamGetCaptureInfo:
    case RP_E_cuStreamGetCaptureInfo_ptsz:
    case RP_E_cuStreamGetCaptureInfo_v2:
    case RP_E_cuStreamGetCaptureInfo_v2_ptsz:
    case RP_E_cuStreamGetCaptureInfo_v3:
    case RP_E_cuStreamGetCaptureInfo_v3_ptsz:
        return 1;
    default:
        return 0;
    }
}

static void resolve_aux(void)
{
    rp__dlsym_fn sym = rp__dlsym_real();
#define X(name, params) rp__aux.name = rp__driver_handle ? (CUresult(CUDAAPI *) params)sym(rp__driver_handle, #name) : NULL;
    RP_AUX_ENTRIES(X)
#undef X
}

static int aux_complete(void)
{
#define X(name, params) if (!rp__aux.name) return 0;
    RP_AUX_ENTRIES(X)
#undef X
    return 1;
}

void rp__engine_install(struct rp__driver *core, const struct rp__driver *real)
{
    (void)real;
    if (!rp__aux.cuLaunchKernel)
        resolve_aux();
    if (!aux_complete()) {
        rp__warn("the driver lacks entry points the capture engine needs; forwarding only");
        return;
    }
    pthread_atfork(NULL, NULL, in_forked_child);
    rp__lc_drv.begin_capture = rp__aux.cuStreamBeginCapture_v2;
    rp__lc_drv.end_capture = rp__aux.cuStreamEndCapture;
    rp__lc_drv.graph_destroy = rp__aux.cuGraphDestroy;
    rp__lc_drv.graph_get_nodes = rp__aux.cuGraphGetNodes;
    rp__lc_drv.node_get_type = rp__aux.cuGraphNodeGetType;
    rp__lc_drv.host_alloc = rp__aux.cuMemHostAlloc;
    rp__lc_drv.host_free = rp__aux.cuMemFreeHost;
    /* Global boundaries first, for every entry that is interposed... */
#define X(name, params, args)                                                                   \
    if (core->name && !plain_forward(RP_E_##name))                                              \
        core->name = engb_##name;
    RP_ENTRIES(X)
#undef X
    /* ...then the entries with their own behaviour. */
#define SET(name)                                                                               \
    if (core->name)                                                                             \
        core->name = eng_##name;
    SET(cuLaunchKernel) SET(cuLaunchKernel_ptsz) SET(cuLaunchKernelEx) SET(cuLaunchKernelEx_ptsz)
    SET(cuMemcpyHtoDAsync_v2) SET(cuMemcpyHtoDAsync_v2_ptsz)
    SET(cuMemcpyDtoHAsync_v2) SET(cuMemcpyDtoHAsync_v2_ptsz)
    SET(cuMemcpyDtoDAsync_v2) SET(cuMemcpyDtoDAsync_v2_ptsz)
    SET(cuMemcpyDtoD_v2) SET(cuMemcpyDtoD_v2_ptds)
    SET(cuMemsetD8_v2) SET(cuMemsetD8_v2_ptds) SET(cuMemsetD8Async) SET(cuMemsetD8Async_ptsz)
    SET(cuMemsetD16_v2) SET(cuMemsetD16_v2_ptds) SET(cuMemsetD16Async) SET(cuMemsetD16Async_ptsz)
    SET(cuMemsetD32_v2) SET(cuMemsetD32_v2_ptds) SET(cuMemsetD32Async) SET(cuMemsetD32Async_ptsz)
    SET(cuStreamSynchronize) SET(cuStreamSynchronize_ptsz) SET(cuStreamQuery) SET(cuStreamQuery_ptsz)
    SET(cuEventRecord) SET(cuEventRecord_ptsz) SET(cuEventRecordWithFlags) SET(cuEventRecordWithFlags_ptsz)
    SET(cuStreamWaitEvent) SET(cuStreamWaitEvent_ptsz) SET(cuLaunchHostFunc) SET(cuLaunchHostFunc_ptsz)
    SET(cuGraphLaunch) SET(cuGraphLaunch_ptsz) SET(cuStreamDestroy) SET(cuStreamDestroy_v2)
    SET(cuCtxSynchronize) SET(cuCtxSynchronize_v2)
    SET(cuStreamBeginCapture) SET(cuStreamBeginCapture_ptsz) SET(cuStreamBeginCapture_v2)
    SET(cuStreamBeginCapture_v2_ptsz) SET(cuStreamBeginCaptureToGraph) SET(cuStreamBeginCaptureToGraph_ptsz)
    SET(cuStreamEndCapture) SET(cuStreamEndCapture_ptsz)
    SET(cuLibraryGetKernel)
    SET(cuCtxDestroy) SET(cuCtxDestroy_v2) SET(cuCtxDetach) SET(cuDevicePrimaryCtxRelease) SET(cuDevicePrimaryCtxRelease_v2)
    SET(cuDevicePrimaryCtxReset) SET(cuDevicePrimaryCtxReset_v2) SET(cuModuleUnload) SET(cuLibraryUnload)
#undef SET
}

void rp__engine_setup(struct rp__driver *core, const struct rp__driver *real)
{
    rp__eng_cfg.warmup = (unsigned int)rp__option(RP_OPTION_WARMUP).count;
    rp__eng_cfg.max_variants = (unsigned int)rp__option(RP_OPTION_MAX_VARIANTS).count;
    rp__eng_cfg.max_updates = rp__option(RP_OPTION_MAX_UPDATES).count;
    rp__eng_cfg.min_ops = rp__option(RP_OPTION_MIN_OPS).count;
    rp__eng_cfg.max_ops = rp__option(RP_OPTION_MAX_OPS).count;
    rp__eng_cfg.max_graphs = rp__option(RP_OPTION_MAX_GRAPHS).count;
    rp__eng_cfg.max_staging = rp__option(RP_OPTION_MAX_STAGING).count;
    rp__eng_cfg.max_seq_bytes = rp__option(RP_OPTION_MAX_SEQ_BYTES).count;
    rp__eng_cfg.table_size = rp__option(RP_OPTION_TABLE).count;
    rp__engine_install(core, real);
}

/* At exit a thread may still sit in the engine (or have died holding a
 * lock); the report is then written from unlocked, possibly torn counters
 * rather than not at all. */
static int lock_for_report(pthread_mutex_t *m)
{
    for (int i = 0; i < 100; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int rp__engine_stats_snapshot(size_t i, struct rp__engine_stats *out, uint64_t *evictions)
{
    if (i >= atomic_load_explicit(&nctxs, memory_order_acquire))
        return 0;
    rp_ctxstate *cs = &ctxs[i];
    int locked = lock_for_report(&cs->lock);
    *out = cs->st;
    *evictions = cs->det.evictions;
    if (locked)
        unlock(cs);
    return 1;
}

size_t rp__engine_seq_snapshot(struct rp__seq_info *out, size_t max)
{
    size_t n = 0;
    int locked = lock_for_report(&retired_lock);
    for (size_t i = 0; i < nretired && n < max; i++)
        out[n++] = retired[i];
    if (locked)
        pthread_mutex_unlock(&retired_lock);
    size_t nc = atomic_load_explicit(&nctxs, memory_order_acquire);
    for (size_t c = 0; c < nc; c++) {
        rp_ctxstate *cs = &ctxs[c];
        locked = lock_for_report(&cs->lock);
        for (size_t i = 0; i < cs->nseqs && n < max; i++)
            seq_info(cs->seqs[i], &out[n++]);
        if (locked)
            unlock(cs);
    }
    return n;
}
