/* hooks.c - the coordinator's common paths, and the hooks generated from
 * the roles in entries.h: every interposed entry gets the hook its role
 * names. A capturable call is recorded (rec/) and offered to the matcher,
 * deferred or issued eagerly and learnt; a boundary resolves what it must
 * first (a stream's work and the work ordered with it, or every
 * context's); the program's own captures make the engine step aside; a
 * teardown forgets graphs and streams. Capturable calls have their hooks
 * written out (launch.c, copy.c, event.c), as do the boundaries with a
 * behaviour of their own (below). Everything reaches the driver through
 * the table the engine was installed with (rp__eng.drv). */
#include "hooks.h"

#include <string.h>

#define R (rp__eng.drv)

/* ---- the common paths ------------------------------------------------------- */

/* A global boundary: everything deferred, in every context, is resolved. */
CUresult rp__boundary_global(void)
{
    return rp__resolve_every_ctx(RP_THEN_NOTHING);
}

static int global_entry_issues(enum rp__entry e)
{
    return e != RP_E_cuEventQuery && e != RP_E_cuEventSynchronize;
}

/* Whether an entry gives memory back (addresses recorded before it may name
 * freed memory afterwards: learn.c captures from a later occurrence then). */
static int global_entry_frees(enum rp__entry e)
{
    switch (e) {
    case RP_E_cuMemFree: case RP_E_cuMemFree_v2: case RP_E_cuMemFreeHost:
    case RP_E_cuMemFreeAsync: case RP_E_cuMemFreeAsync_ptsz: case RP_E_cuMemHostUnregister:
    case RP_E_cuMemRelease: case RP_E_cuMemUnmap: case RP_E_cuMemPoolTrimTo:
        return 1;
    default:
        return 0;
    }
}

/* A stream-scoped boundary on `s`: that stream's segment and those of the
 * streams ordered with it end. */
CUresult rp__boundary_stream(CUstream s, int ptsz)
{
    /* While an event record is deferred anywhere, the call may name that
     * event without the engine seeing it (a graph's event node): global. */
    if (rp__ev_any_deferred())
        return rp__boundary_global();
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return rp__boundary_global();
    rp_stream *st = rp__stream_of(cs, s, ptsz);
    CUresult rc = st ? rp__end_ordered(st, RP_ORDERED_AND_SELF) : rp__resolve_ctx(cs);
    rp__hook_unlock(cs);
    return rc;
}

/* Whether a stream-scoped entry may put work on its stream (a synchronize
 * or a query does not: the fork/join replays' bookkeeping, rp__issued). A
 * global one too (an event's synchronize or query does not). */
static int stream_entry_issues(enum rp__entry e)
{
    return e != RP_E_cuStreamSynchronize && e != RP_E_cuStreamSynchronize_ptsz &&
           e != RP_E_cuStreamQuery && e != RP_E_cuStreamQuery_ptsz;
}

/* An op the program issues while it captures goes straight to the driver;
 * it is still counted, as eager for that reason, so that the report's
 * shares cover all of the program's work. */
void rp__aside_op(CUstream s, int ptsz, rp_op_kind kind)
{
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return;
    cs->counters.ops_seen[kind]++;
    rp__count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
    rp__hook_unlock(cs);
}

/* A call on stream `s` that the engine does not capture, for reason `why`
 * (cs locked): it ends that stream's segment and those ordered with it. */
CUresult rp__not_capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz,
                                      enum rp__eager_reason why)
{
    cs->counters.ops_seen[0]++;
    rp__count_eager(cs, why, 1);
    rp_stream *st = rp__stream_of(cs, s, ptsz);
    /* As boundary_stream, for the context: a launch's event attribute may
     * name an event whose record is deferred. */
    if (!st || rp__ev_any_deferred())
        return rp__resolve_ctx(cs);
    return rp__end_ordered(st, RP_ORDERED_AND_SELF);
}

CUresult rp__not_capturable(CUstream s, int ptsz)
{
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return rp__boundary_global();
    CUresult rc = rp__not_capturable_locked(cs, s, ptsz, RP_EAGER_NOT_CAPTURABLE);
    rp__hook_unlock(cs);
    return rc;
}

/* The fields of a capturable op's record that name its stream `st` of cs. */
static inline void op_on_stream(const rp_ctxstate *cs, const rp_stream *st, int ptsz, rp_op *op)
{
    op->ctx = cs->ctx;
    op->stream = st->handle;
    op->sid = (uint16_t)(st - cs->streams + 1); /* its slot: the order streams were met */
    if (ptsz)
        op->flags |= RP_OPF_PTSZ;
}

/* The stream such an op may join on (rp__joins_recorded): found the fast way,
 * joined no other's trace, holding a run it may join (rp__match_joinable),
 * with no cut before its next op and no capture of the program's
 * beginning; else NULL. */
static inline __attribute__((always_inline)) rp_stream *join_stream(rp_ctxstate *cs, CUstream s,
                                                                   int ptsz)
{
    rp_stream *st = rp__stream_fast(cs, s, ptsz);
    if (!st || st->trace.owner || !rp__match_joinable(st) || rp__program_capture_pending() ||
        rp__learn_cuts_next(st))
        return NULL;
    return st;
}

/* An op of `kind` joined the run (`v`: DEFERRED or COMPLETE): counted,
 * given its position, ordered with the other streams, the sequence
 * replayed when complete. Unlocks cs. */
static inline CUresult joined(rp_ctxstate *cs, rp_stream *st, rp_op_kind kind, enum rp_offer v)
{
    cs->counters.ops_seen[kind]++;
    st->opno++; /* its position (rp__learn_next): the borrowed run's */
    CUresult pre = rp__end_ordered_others(st);
    CUresult out = rp__first_error(pre, rp__deferred(st, v));
    rp__hook_unlock(cs);
    return out;
}

/* A memset or copy that is the next op of the run the matcher's fast path
 * holds borrowed (a loop's steady state: a training step's zeroed
 * gradients, a decoder's cache copies), or a recorded launch that the run's
 * one candidate keeps as its next op (rp__match_kept: a kernel chosen by
 * alignment or length, another form of the op), on a stream found the fast way that
 * joined no other's trace, with no cut before it and no capture of the
 * program's beginning: deferred as rp__capturable_locked, rp__next_op and
 * rp__defer defer it (rp__match_join, the count, the op's position, the
 * ordering with other streams, the replay when it completes the sequence),
 * as launch.c's fast path defers a launch. Returns 1 when deferred (cs
 * unlocked, *out its result), 0 when nothing was done. rp__joins_call does
 * the same for a memset or device-to-device copy that has no record yet. */
int rp__joins_recorded(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op, CUresult *out)
{
    rp_stream *st = join_stream(cs, s, ptsz);
    if (!st)
        return 0;
    rp_op_kind kind = op->kind;
    /* What op_on_stream sets is put back when it does not join: the record
     * stays the call's, for its caller to keep (rp__capturable). */
    CUcontext ctx = op->ctx;
    CUstream stream = op->stream;
    uint16_t sid = op->sid;
    uint32_t flags = op->flags;
    op_on_stream(cs, st, ptsz, op);
    enum rp_offer v = kind == RP_OP_KERNEL ? rp__match_kept(st, op) : rp__match_join(st, op);
    if (v == RP_OFFER_EAGER) {
        op->ctx = ctx, op->stream = stream, op->sid = sid, op->flags = flags;
        return 0;
    }
    *out = joined(cs, st, kind, v);
    return 1;
}

int rp__joins_call(CUstream s, int ptsz, rp_call_other *c, rp_ctxstate **pcs, CUresult *out)
{
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, ptsz);
    *pcs = cs;
    rp_stream *st = cs ? join_stream(cs, s, ptsz) : NULL;
    if (!st)
        return 0;
    c->ctx = cs->ctx; /* as op_on_stream would set them in its record */
    c->stream = st->handle;
    c->flags = ptsz ? RP_OPF_PTSZ : 0;
    enum rp_offer v = rp__match_join_call(st, c);
    if (v == RP_OFFER_EAGER)
        return 0;
    *out = joined(cs, st, c->kind, v);
    return 1;
}

/* A capturable call whose record is `op` (kind fields set), with cs locked.
 * Returns 1 when the engine deferred it (*out is the call's result; cs is
 * unlocked), or 0 when the caller must now issue it eagerly, cs still
 * locked, and then call eager_done. */
int rp__capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op,
                             rp_stream **pst, CUresult *out)
{
    *out = CUDA_SUCCESS;
    rp_stream *st = rp__stream_of(cs, s, ptsz);
    *pst = st;
    if (!st) {
        *out = rp__resolve_ctx(cs);
        rp__op_free(op);
        return 0;
    }
    /* A stream that joined another's trace (fork/join) learns and defers
     * there; the ordering with other streams is its own. */
    rp_stream *home = rp__home(st);
    cs->counters.ops_seen[op->kind]++;
    op_on_stream(cs, st, ptsz, op);
    if (rp__program_capture_pending()) {
        /* The program is beginning a capture: nothing more is deferred
         * (what the stream holds goes first). */
        *out = rp__end_ordered(st, RP_ORDERED_AND_SELF);
        rp__count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
        *pst = NULL; /* nor learnt */
        return 0;
    }
    CUresult pre = rp__end_ordered_others(st);
    pre = rp__first_error(pre, rp__next_op(home, op));
    CUresult err = CUDA_SUCCESS;
    rp_op_kind kind = op->kind; /* the record moves into the stream when deferred */
    *pst = home;
    if (rp__defer(home, op, &err)) {
        rp__trace("%s on stream %p: deferred (%zu deferred now)", rp__op_kind_name(kind),
                  (void *)st->handle, home->match.ndef);
        rp__hook_unlock(cs);
        *out = rp__first_error(pre, err);
        return 1;
    }
    rp__trace("%s on stream %p: eager", rp__op_kind_name(kind), (void *)st->handle);
    *out = rp__first_error(pre, err);
    return 0;
}

int rp__capturable(CUstream s, int ptsz, rp_op *op, rp_op *keep, rp_ctxstate **pcs,
                   rp_stream **pst, CUresult *out)
{
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, ptsz);
    *pcs = cs;
    *pst = NULL;
    if (cs && rp__match_joins_kind(op->kind) && rp__joins_recorded(cs, s, ptsz, op, out))
        return 1;
    return rp__capturable_in(cs, s, ptsz, op, keep, pst, out);
}

int rp__capturable_in(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op, rp_op *keep,
                      rp_stream **pst, CUresult *out)
{
    *pst = NULL;
    if (keep)
        *keep = *op;
    if (!cs) {
        rp__op_free(op);
        *out = rp__boundary_global();
        return 0;
    }
    return rp__capturable_locked(cs, s, ptsz, op, pst, out);
}

/* After the eager call of a capturable op: it joins its stream's segment
 * (a failed call joins nothing). Unlocks cs. */
CUresult rp__eager_done(rp_ctxstate *cs, rp_stream *st, rp_op *op, CUresult pre, CUresult rc)
{
    uint64_t was = rp__note_issue();
    if (cs) {
        if (st && rc == CUDA_SUCCESS) {
            rp__fj_eager(cs, op, was);
            rp__seg_append(st, op, RP_EAGER_WARMING_UP);
        } else {
            rp__op_free(op);
        }
        rp__hook_unlock(cs);
    }
    return rp__first_error(pre, rc);
}

/* ---- boundaries with their own behaviour --------------------------------------- */

/* cuStreamQuery: a stream-scoped boundary. After a fork/join replay, a
 * side stream's last op is its last event op of the step (seq/forkjoin.c,
 * rp__fj_after), so it is idle exactly when eagerly it would be. */
static CUresult stream_query(CUresult (*real)(CUstream), CUstream s, int ptsz)
{
    if (rp__aside())
        return real(s);
    CUresult pre = rp__boundary_stream(s, ptsz);
    return rp__first_error(pre, real(s));
}

CUresult CUDAAPI rp__hook_cuStreamQuery(CUstream hStream)
{
    return stream_query(R->cuStreamQuery, hStream, 0);
}

CUresult CUDAAPI rp__hook_cuStreamQuery_ptsz(CUstream hStream)
{
    return stream_query(R->cuStreamQuery_ptsz, hStream, 1);
}

/* A destroyed stream's handle may come back for a new stream with other
 * flags or another context: its record goes with it, after its deferred
 * work was resolved (destroying a stream does not wait for its work, but
 * work issued before the destroy still runs). While the program captures
 * nothing is deferred, but the record still goes. */
static CUresult stream_destroy(CUresult (*real)(CUstream), CUstream s)
{
    if (!rp__stream_is_created(s))
        return real(s);
    if (rp__aside()) {
        CUresult rc = real(s);
        if (rc == CUDA_SUCCESS)
            rp__forget_stream(s);
        return rc;
    }
    rp_ctxstate *cs = rp__lock_ctx_of_stream(s, 0);
    if (!cs) {
        rp__note_issue();
        CUresult pre_ = rp__boundary_global();
        return rp__issued_after(pre_, real(s));
    }
    CUresult pre = rp__stream_destroyed_locked(cs, s);
    CUresult rc = real(s);
    rp__streams_changed();
    rp__hook_unlock(cs);
    return rp__first_error(pre, rc);
}

/* cuCtxSynchronize from another thread would invalidate an open capture
 * window of ours in that context: it waits on the context's gate while it
 * runs. */
static CUresult ctx_sync(rp_ctxstate *cs, CUresult (*real)(CUcontext), CUcontext c)
{
    CUresult pre = rp__boundary_global();
    if (cs)
        pthread_rwlock_rdlock(&cs->gate);
    CUresult rc = real(c);
    if (cs)
        pthread_rwlock_unlock(&cs->gate);
    if (cs && rc == CUDA_SUCCESS) {
        /* The device was idle a moment ago: the only time the engine frees
         * pinned staging (a free may wait for the device: lifecycle.c). */
        rp__hook_lock(cs);
        rp__lc_trim(&cs->lc);
        rp__hook_unlock(cs);
    }
    return rp__first_error(pre, rc);
}

static CUresult CUDAAPI sync_v1(CUcontext c)
{
    (void)c;
    return R->cuCtxSynchronize();
}

CUresult CUDAAPI rp__hook_cuCtxSynchronize(void)
{
    if (rp__aside())
        return R->cuCtxSynchronize();
    return ctx_sync(rp__ctx_of_current(), sync_v1, NULL);
}

CUresult CUDAAPI rp__hook_cuCtxSynchronize_v2(CUcontext ctx)
{
    if (rp__aside())
        return R->cuCtxSynchronize_v2(ctx);
    return ctx_sync(ctx ? rp__ctx_of(ctx) : rp__ctx_of_current(), R->cuCtxSynchronize_v2, ctx);
}

CUresult CUDAAPI rp__hook_cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
                                               const char *name)
{
    CUresult rc = R->cuLibraryGetKernel(pKernel, library, name);
    if (rc == CUDA_SUCCESS && pKernel)
        rp__rec_note_kernel(*pKernel);
    return rc;
}

/* Teardown of what graphs refer to (contexts, modules, libraries): every
 * context's graphs and streams are forgotten first, while the handles still
 * live (which context a module or a device's primary context is, is not
 * known here: all are forgotten, at the cost of a new warmup). The call runs
 * holding every context's gate, so that no capture window opens meanwhile. */
static CUresult teardown_pre(enum rp_then then, size_t *held)
{
    rp__note_issue();
    CUresult first = rp__resolve_every_ctx(then);
    *held = rp__gates_hold();
    return first;
}

/* ---- hooks generated from the roles (entries.h) --------------------------------- */

#define HOOK(name, params, args, role) HOOK_(name, params, args, RP_UNPACK role)
#define HOOK_(...) HOOK__(__VA_ARGS__)
#define HOOK__(name, params, args, kind, arg, n) HOOK_##kind(name, params, args, arg, n)

#define HOOK_FWD(name, params, args, arg, n)
#define HOOK_CAPTURE(name, params, args, arg, n)     /* written out above */
#define HOOK_CTX_SYNC(name, params, args, arg, n)    /* written out above */
#define HOOK_NOTE_KERNEL(name, params, args, arg, n) /* written out above */
#define HOOK_EVENT(name, params, args, arg, n)       /* written out above */
#define HOOK_QUERY(name, params, args, arg, n)       /* written out above */
#define HOOK_GLOBAL(name, params, args, arg, n)                                                 \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        if (rp__aside())                                                               \
            return R->name args;                                                                \
        if (global_entry_frees(RP_E_##name))                                                    \
            rp__note_free();                                                                    \
        int issues_ = global_entry_issues(RP_E_##name);                                         \
        if (issues_)                                                                            \
            rp__note_issue();                                                                   \
        CUresult pre_ = rp__boundary_global();                                                  \
        CUresult rc_ = R->name args;                                                            \
        if (issues_)                                                                            \
            rp__note_issue();                                                                   \
        return rp__first_error(pre_, rc_);                                                      \
    }
#define HOOK_STREAM(name, params, args, s, ptsz)                                                \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        if (rp__aside())                                                               \
            return R->name args;                                                                \
        int issues_ = stream_entry_issues(RP_E_##name);                                         \
        if (issues_)                                                                            \
            rp__note_issue();                                                                   \
        CUresult pre_ = rp__boundary_stream(s, ptsz);                                           \
        CUresult rc_ = R->name args;                                                            \
        if (issues_)                                                                            \
            rp__note_issue();                                                                   \
        return rp__first_error(pre_, rc_);                                                      \
    }
#define HOOK_STREAM_DESTROY(name, params, args, s, n)                                           \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        return stream_destroy(R->name, s);                                                      \
    }
#define HOOK_TEARDOWN(name, params, args, arg, ctx_dies)                                        \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        if (rp__aside())                                                               \
            return R->name args;                                                                \
        size_t held;                                                                            \
        CUresult pre = teardown_pre(ctx_dies ? RP_THEN_FORGET_CTX_DIES : RP_THEN_FORGET, &held); \
        CUresult rc = R->name args;                                                             \
        rp__gates_release(held);                                                                \
        return rp__first_error(pre, rc);                                                            \
    }
/* The program begins its own capture: nothing new is deferred from its
 * first instruction, everything deferred is resolved, and the begin runs
 * holding every context's gate, so it never starts while a capture window
 * of ours is open; the engine steps aside until the capture ends
 * (DESIGN.md §2.5, docs/engine.md). */
#define HOOK_BEGIN_CAPTURE(name, params, args, arg, n)                                          \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        CUresult pre = rp__program_capture_prepare();                                           \
        size_t held = rp__gates_hold();                                                         \
        CUresult rc = R->name args;                                                             \
        rp__gates_release(held);                                                                \
        rp__program_capture_begun(rc);                                                          \
        return rp__first_error(pre, rc);                                                            \
    }
#define HOOK_END_CAPTURE(name, params, args, arg, n)                                            \
    CUresult CUDAAPI rp__hook_##name params                                                   \
    {                                                                                           \
        CUresult rc = R->name args;                                                             \
        rp__program_capture_ended(rc);                                                          \
        return rc;                                                                              \
    }
RP_ENTRIES(HOOK)

