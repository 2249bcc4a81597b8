/* launch.c - the hooks of kernel launches (cuLaunchKernel, cuLaunchKernelEx,
 * plain and _ptsz): a launch that is the next op of the one sequence its
 * stream is matching is deferred by the matcher's inline fast path without
 * being recorded (a loop's steady state); any other is recorded and offered
 * like any capturable call. */
#include "hooks.h"

#include <string.h>

#define R (rp__eng.drv)

static CUresult launch_issue(const rp_launch *l)
{
    if (l->cfg)
        return (l->ptsz ? R->cuLaunchKernelEx_ptsz : R->cuLaunchKernelEx)(l->cfg, l->f, l->kp,
                                                                          l->extra);
    return (l->ptsz ? R->cuLaunchKernel_ptsz : R->cuLaunchKernel)(
        l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
        l->shmem, l->s, l->kp, l->extra);
}

/* Issue a launch eagerly (cs locked), timing one in 32 for the cost model
 * (cost.c). */
static CUresult launch_issue_timed(rp_ctxstate *cs, const rp_launch *l)
{
    if (!rp__cost_time_this(&cs->costs, &rp__eng.cfg.cost))
        return launch_issue(l);
    uint64_t t0 = rp__cost_now();
    CUresult rc = launch_issue(l);
    rp__cost_note(cs, RP_COST_EAGER, rp__cost_now() - t0, 1);
    return rc;
}

/* A launch that is exactly the next op of the one sequence its stream is
 * matching (a loop's steady state) is deferred without being recorded: the
 * sequence's record stands for it (replay.c, rp__match_launch). What
 * capturable_locked does for a deferred op is done here too: the count, the
 * boundary of the streams ordered with it, and the replay when it completes
 * the sequence. Returns 1 when deferred (cs unlocked, *out its result), 0
 * when nothing was done. */
static inline __attribute__((always_inline)) int
launch_matched_in(rp_ctxstate *cs, rp_stream *own, rp_stream *st, rp_launch l,
                  enum rp__entry entry, CUresult *out)
{
    if ((!st->match.ndef && !st->match.hint) || rp__program_capture_pending())
        return 0;
    if (RP_UNLIKELY(rp__learn_cuts_next(st))) {
        /* A period's cut before it: taken here when the stream has learnt
         * and holds nothing since the last (a loop's steady state, each
         * step replayed), as rp__next_op would take it; else the cut ends
         * what the stream learnt or holds, the general way. */
        if (st->match.ndef || st->learn.nseg)
            return 0;
        rp__learn_cut_empty(st);
    }
    enum rp_offer v = rp__match_launch(st, own->handle, l, entry);
    if (v == RP_OFFER_EAGER)
        return 0;
    cs->counters.ops_seen[RP_OP_KERNEL]++;
    CUresult pre = rp__end_ordered_others(own);
    pre = rp__first_error(pre, rp__deferred(st, v));
    rp__hook_unlock(cs);
    *out = pre;
    return 1;
}

/* The same for a stream that joined another's trace (fork/join): matched
 * there. Out of line, so that the common case keeps one stream. */
static __attribute__((noinline)) int launch_matched_joined(rp_ctxstate *cs, rp_stream *own,
                                                           const rp_launch *l,
                                                           enum rp__entry entry, CUresult *out)
{
    return launch_matched_in(cs, own, own->trace.owner, *l, entry, out);
}

static inline __attribute__((always_inline)) int launch_matched(rp_ctxstate *cs, rp_launch l,
                                                                enum rp__entry entry,
                                                                CUresult *out)
{
    rp_stream *st = rp__stream_fast(cs, l.s, l.ptsz);
    if (!st)
        return 0;
    if (RP_UNLIKELY(st->trace.owner)) {
        rp_launch copy = l; /* in memory here only */
        return launch_matched_joined(cs, st, &copy, entry, out);
    }
    return launch_matched_in(cs, st, st, l, entry, out);
}

/* A launch recorded and offered like any capturable call (cs locked).
 * Kept out of line: its record's stack frame would weigh on every matched
 * launch. */
static __attribute__((noinline)) CUresult launch_recorded(rp_ctxstate *cs, const rp_launch *l,
                                                          enum rp__entry entry)
{
    /* A stream resting from learning (learn.c) with nothing to match
     * against issues its launches unexamined: what capturable_locked and
     * eager_done would do for an eager op, less the record. */
    rp_stream *st = rp__stream_fast(cs, l->s, l->ptsz);
    if (st && !st->trace.owner && !st->trace.nmembers && rp__learn_resting(st) && !cs->nseqs && !st->match.ndef &&
        !rp__program_capture_pending()) {
        cs->counters.ops_seen[RP_OP_KERNEL]++;
        CUresult pre = rp__end_ordered_others(st);
        st->opno++;
        rp__note_issue();
        CUresult rc = launch_issue_timed(cs, l);
        if (rc == CUDA_SUCCESS) /* as eager_done: a failed call is not counted */
            rp__count_eager(cs, RP_EAGER_RESTING, 1);
        rp__hook_unlock(cs);
        return rp__first_error(pre, rc);
    }
    rp_op op;
    enum rp__eager_reason why = RP_EAGER_NOT_CAPTURABLE;
    if (rp__rec_kernel(cs, &op, l->f, l->grid, l->block, l->shmem, l->kp, l->extra, l->cfg,
                       &why) != 0) {
        CUresult pre = rp__not_capturable_locked(cs, l->s, l->ptsz, why);
        rp__hook_unlock(cs);
        /* A launch attribute may record an event another context's run
         * holds a deferred wait on: every context first. */
        if (rp__ev_any_deferred())
            pre = rp__first_error(pre, rp__boundary_global());
        rp__note_issue();
        return rp__issued_after(pre, launch_issue(l));
    }
    op.entry = (uint16_t)entry;
    CUresult pre;
    if (st && st->match.ndef && st->match.ncand == 1 &&
        rp__joins_recorded(cs, l->s, l->ptsz, &op, &pre))
        return pre; /* the held run's one candidate keeps it (found fast: asked again there) */
    if (rp__capturable_locked(cs, l->s, l->ptsz, &op, &st, &pre))
        return pre;
    return rp__eager_done(cs, st, &op, pre, launch_issue_timed(cs, l));
}

/* A launch through any launch entry point. */
static CUresult launch(const rp_launch *l, enum rp__entry entry)
{
    if (rp__aside()) {
        rp__aside_op(l->s, l->ptsz, RP_OP_KERNEL);
        return launch_issue(l);
    }
    rp_ctxstate *cs = rp__lock_ctx_of_stream(l->s, l->ptsz);
    if (!cs) {
        rp__note_issue();
        CUresult pre_ = rp__boundary_global();
        return rp__issued_after(pre_, launch_issue(l));
    }
    CUresult matched;
    if (launch_matched(cs, *l, entry, &matched))
        return matched;
    return launch_recorded(cs, l, entry);
}

/* A plain launch that the inline fast path did not defer, made in memory
 * here: recorded, with `cs` still locked; or, `cs` NULL (the engine steps
 * aside, or the stream's context is not known), the common way. */
static __attribute__((noinline)) CUresult
plain_launch_slow(rp_ctxstate *cs, CUfunction f, unsigned int gx, unsigned int gy,
                  unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                  unsigned int shmem, CUstream s, void **kp, void **extra, int ptsz)
{
    rp_launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s, kp, extra, NULL, ptsz};
    enum rp__entry entry = ptsz ? RP_E_cuLaunchKernel_ptsz : RP_E_cuLaunchKernel;
    return cs ? launch_recorded(cs, &l, entry) : launch(&l, entry);
}

/* The inline part of every launch hook, the launch in registers: 1 when
 * the fast path deferred it (*out its result); else 0, with *cs the
 * stream's context locked (the launch is then recorded) or NULL (the
 * engine steps aside, or the context is not known: the common way). */
static inline __attribute__((always_inline)) int launch_inline(rp_launch l, enum rp__entry entry,
                                                                rp_ctxstate **cs, CUresult *out)
{
    rp_ctxstate *c = RP_LIKELY(!rp__aside()) ? rp__lock_ctx_of_stream(l.s, l.ptsz) : NULL;
    *cs = c;
    return c && RP_LIKELY(launch_matched(c, l, entry, out));
}

/* A plain launch (cuLaunchKernel[_ptsz]). */
static inline __attribute__((always_inline)) CUresult
plain_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
             unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **kp,
             void **extra, int ptsz)
{
    rp_launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s, kp, extra, NULL, ptsz};
    rp_ctxstate *cs;
    CUresult matched;
    if (RP_LIKELY(launch_inline(l, ptsz ? RP_E_cuLaunchKernel_ptsz : RP_E_cuLaunchKernel, &cs,
                                &matched)))
        return matched;
    return plain_launch_slow(cs, f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra, ptsz);
}

CUresult CUDAAPI rp__hook_cuLaunchKernel RP_SIG_LAUNCH_KERNEL
{
    return plain_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                        sharedMemBytes, hStream, kernelParams, extra, 0);
}

CUresult CUDAAPI rp__hook_cuLaunchKernel_ptsz RP_SIG_LAUNCH_KERNEL
{
    return plain_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                        sharedMemBytes, hStream, kernelParams, extra, 1);
}

/* cuLaunchKernelEx: captured with the attributes a graph's kernel node
 * keeps, and with programmatic stream serialization, which is part of the
 * op's structure but left out of the graph's node (recorder.c); a launch
 * with any other attribute is a boundary. The launch, from the program's
 * configuration `c`: */
static inline __attribute__((always_inline)) rp_launch
ex_launch_of(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra, int ptsz)
{
    return (rp_launch){f, {c->gridDimX, c->gridDimY, c->gridDimZ},
                       {c->blockDimX, c->blockDimY, c->blockDimZ},
                       c->sharedMemBytes, c->hStream, kp, extra, c, ptsz};
}

/* One the inline fast path did not defer (as plain_launch_slow). */
static __attribute__((noinline)) CUresult ex_launch_slow(rp_ctxstate *cs, const CUlaunchConfig *c,
                                                         CUfunction f, void **kp, void **extra,
                                                         int ptsz)
{
    rp_launch l = ex_launch_of(c, f, kp, extra, ptsz);
    enum rp__entry entry = ptsz ? RP_E_cuLaunchKernelEx_ptsz : RP_E_cuLaunchKernelEx;
    return cs ? launch_recorded(cs, &l, entry) : launch(&l, entry);
}

static inline __attribute__((always_inline)) CUresult
launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra, int ptsz)
{
    if (!c) {
        rp_launch l = {f, {0, 0, 0}, {0, 0, 0}, 0, NULL, kp, extra, c, ptsz};
        return launch_issue(&l); /* the driver's error, as the program would get it */
    }
    rp_ctxstate *cs;
    CUresult matched;
    if (RP_LIKELY(launch_inline(ex_launch_of(c, f, kp, extra, ptsz),
                                ptsz ? RP_E_cuLaunchKernelEx_ptsz : RP_E_cuLaunchKernelEx, &cs,
                                &matched)))
        return matched;
    return ex_launch_slow(cs, c, f, kp, extra, ptsz);
}

CUresult CUDAAPI rp__hook_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                             void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 0);
}

CUresult CUDAAPI rp__hook_cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                                  void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 1);
}
