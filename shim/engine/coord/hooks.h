/* hooks.h - what the coordinator's hook files share (hooks.c, launch.c,
 * copy.c, event.c, install.c): one hook per interposed entry whose role in
 * entries.h is not FWD (rp__hook_<name>), and the common paths every hook
 * takes: a boundary before a call, a capturable call recorded and offered
 * to the matcher, an eager call learnt. Private to coord/. */
#ifndef REPRISE_HOOKS_H
#define REPRISE_HOOKS_H

#include "coord.h"

/* ---- the hooks, one per entry with a role (installed by install.c) ---------------- */

#define RP_UNPACK(...) __VA_ARGS__
#define RP_HOOK_DECL(name, params, args, role) RP_HOOK_DECL_(name, params, RP_UNPACK role)
#define RP_HOOK_DECL_(...) RP_HOOK_DECL__(__VA_ARGS__)
#define RP_HOOK_DECL__(name, params, kind, arg, n) RP_HOOK_DECL_##kind(name, params)
#define RP_HOOK_DECL_FWD(name, params)
#define RP_HOOK_DECL_ANY(name, params) CUresult CUDAAPI rp__hook_##name params;
#define RP_HOOK_DECL_GLOBAL RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_STREAM RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_CAPTURE RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_STREAM_DESTROY RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_CTX_SYNC RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_BEGIN_CAPTURE RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_END_CAPTURE RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_TEARDOWN RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_NOTE_KERNEL RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_EVENT RP_HOOK_DECL_ANY
#define RP_HOOK_DECL_QUERY RP_HOOK_DECL_ANY
RP_ENTRIES(RP_HOOK_DECL)

/* ---- the common paths (hooks.c) ------------------------------------------------------ */

static inline __attribute__((always_inline)) void rp__hook_lock(rp_ctxstate *cs)
{
    rp__lock(&cs->lock);
}
static inline __attribute__((always_inline)) void rp__hook_unlock(rp_ctxstate *cs)
{
    rp__unlock(&cs->lock);
}

/* The state of the context stream `s` belongs to, locked (NULL: none). The
 * thread's cache may still name the context of a stream destroyed just now
 * whose handle came back for another context: a destroy bumps the
 * generation under the old context's lock, so the generation seen once the
 * lock is held settles it (the look-up is made again). */
static inline __attribute__((always_inline)) rp_ctxstate *rp__lock_ctx_of_stream(CUstream s,
                                                                                int ptsz)
{
    for (;;) {
        rp_ctxstate *cs = rp__ctx_of_stream(s, ptsz);
        if (!cs)
            return NULL;
        rp__hook_lock(cs);
        if (RP_LIKELY(!rp__stream_is_created(s) || rp__tl.gen == rp__stream_gen()))
            return cs;
        rp__hook_unlock(cs);
    }
}

/* The error of a flush forced before a call wins over the call's own
 * (DESIGN.md §2.4). */
static inline CUresult rp__first_error(CUresult pre, CUresult rc)
{
    return pre != CUDA_SUCCESS ? pre : rc;
}

/* A call that puts work on a stream, made after its boundary: the count of
 * such calls (rp__note_issue) goes up before the boundary (no resolution of
 * another thread while the call runs takes the stream for unchanged) and
 * again once the call is made (a resolution before it could take the
 * stream for idle-or-ours, and stamp it so, with this call's work still to
 * come: seq/forkjoin.c). The boundary runs in a statement of its own,
 * before: the order in which C evaluates a call's arguments is unspecified
 * (the fault sweep once caught a reordering from exactly that). Use:
 *     rp__note_issue();
 *     CUresult pre = <boundary>;
 *     return rp__issued_after(pre, <call>); */
static inline CUresult rp__issued_after(CUresult pre, CUresult rc)
{
    rp__note_issue();
    return rp__first_error(pre, rc);
}

/* A global boundary: everything deferred, in every context, is resolved. */
CUresult rp__boundary_global(void);
/* A stream-scoped boundary on `s`: that stream's segment and those of the
 * streams ordered with it end. */
CUresult rp__boundary_stream(CUstream s, int ptsz);
/* An op the program issues while it captures goes straight to the driver;
 * it is still counted, as eager for that reason. */
void rp__aside_op(CUstream s, int ptsz, rp_op_kind kind);
/* A call on stream `s` that the engine does not capture, for reason `why`
 * (cs locked): it ends that stream's segment and those ordered with it. */
CUresult rp__not_capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz,
                                   enum rp__eager_reason why);
CUresult rp__not_capturable(CUstream s, int ptsz);
/* A capturable call whose record is `op` (kind fields set), with cs locked.
 * Returns 1 when the engine deferred it (*out is the call's result; cs is
 * unlocked), or 0 when the caller must now issue it eagerly, cs still
 * locked, and then call rp__eager_done. */
int rp__capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op, rp_stream **pst,
                          CUresult *out);
/* The same, for a call whose context is not known yet. Returns 1 (deferred;
 * nothing locked), or 0 with *pcs locked (or NULL: a plain eager call).
 * With `keep`, the record as the call made it is copied there first,
 * unless it is deferred on the way in (a memset or copy joining the run
 * the matcher's fast path holds borrowed): the general path may move it
 * into the stream, or free it. */
int rp__capturable(CUstream s, int ptsz, rp_op *op, rp_op *keep, rp_ctxstate **pcs,
                   rp_stream **pst, CUresult *out);
/* rp__capturable after its context was locked (`cs`, or NULL: a plain
 * eager call) and no memset or copy joined the fast path's run. */
int rp__capturable_in(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op, rp_op *keep,
                      rp_stream **pst, CUresult *out);
/* The recorded op `op` (cs locked) deferred before the general path: a
 * memset or copy joining the run the matcher's fast path holds
 * (rp__match_join), or a launch that the run's one candidate keeps as its
 * next op (rp__match_kept), with what rp__capturable_locked would give it
 * (the count, its position, the ordering with other streams, the replay
 * when it completes the sequence): 1 when deferred (cs unlocked, *out its
 * result), 0 when nothing was done. */
int rp__joins_recorded(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op, CUresult *out);
/* A memset or device-to-device copy `c` (its kind, entry and values; the
 * rest is set here) joining the run the matcher's fast path holds
 * borrowed, without its record (rp__match_join_call): 1 when deferred (cs
 * unlocked, *out its result); else 0 with *pcs its context locked (or
 * NULL), for rp__capturable_in with its record. */
int rp__joins_call(CUstream s, int ptsz, rp_call_other *c, rp_ctxstate **pcs, CUresult *out);
/* After the eager call of a capturable op: it joins its stream's segment
 * (a failed call joins nothing). Unlocks cs. */
CUresult rp__eager_done(rp_ctxstate *cs, rp_stream *st, rp_op *op, CUresult pre, CUresult rc);
#endif
