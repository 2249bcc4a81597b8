/* event.c - the hooks of events (docs/engine.md, "Fork and join"): a record
 * or wait that can be an op of its stream's trace is recorded, deferred and
 * replayed like a launch (a wait may make its stream join another's trace);
 * any other is a boundary, after the trace that holds its event ended.
 * Events are noted at creation (their flags and context) and settled
 * before they are destroyed. */
#include "hooks.h"

#include <string.h>

#define R (rp__eng.drv)

/* The call the program made, with its flags, through the entry it called
 * (rp__rec_issue_entry knows every event entry). */
static CUresult event_call(enum rp__entry entry, CUevent e, CUstream s, unsigned int flags)
{
    rp_op op = {.ev = e, .stream = s, .value = flags, .entry = (uint16_t)entry};
    return rp__rec_issue_entry(&op);
}

/* The trace that last recorded or waited on an event ends (resolved: its
 * deferred record or wait is issued), if it is still live, and the event is
 * held by no trace any more. Nothing locked. */
static CUresult settle_event(CUevent e, const rp_evinfo *i, const char *why)
{
    rp_ctxstate *cs = i->live_cs;
    rp__hook_lock(cs);
    CUresult rc = CUDA_SUCCESS;
    if (rp__ev_live_in(i, cs)) {
        cs->counters.event_settles++;
        static _Atomic unsigned int logged;
        if (atomic_fetch_add(&logged, 1) < 4)
            rp__info("an event recorded or waited on in stream %p's run of ops is %s: that run "
                     "ends there (a graph spans one context, and replays only created streams)",
                     (void *)i->live_home->handle, why);
        rc = rp__end_trace(i->live_home);
    }
    rp__hook_unlock(cs);
    rp__ev_settled(e, i);
    return rc;
}

/* cuEventRecord and cuStreamWaitEvent (docs/engine.md, "Fork and join").
 * On a created stream or the legacy stream (PyTorch's default stream: its
 * wait_stream records and waits there), with no flags, of an event created
 * through the engine without timing and not for other processes, in the
 * stream's context, the call is an op of the stream's trace: recorded,
 * deferred and replayed like a launch. A wait on an event live in another
 * trace of the context (recorded or waited on there since that trace's
 * last host boundary) makes a created stream join that trace; a record of
 * it ends that trace first, and so does a wait of the legacy stream, which
 * joins no other (the home of a run it takes part in is its own: the
 * implicit orders of the legacy stream are its home's in a replay). Any
 * other record or wait is a stream boundary, as before, after the trace
 * that holds the event (any context) has ended. */
static CUresult event_op(rp_op_kind kind, CUevent e, CUstream s, unsigned int flags,
                         enum rp__entry entry, int ptsz)
{
    if (rp__aside()) {
        rp__aside_op(s, ptsz, kind);
        return event_call(entry, e, s, flags);
    }
    CUresult pre = CUDA_SUCCESS;
    rp_ctxstate *cs = NULL;
    rp_stream *st = NULL;
    rp_evinfo info;
    /* Rounds: another context's thread may take the event between our
     * look and our claim (rp__ev_touched); after a few, a global boundary. */
    for (int round = 0;; round++) {
        int known = rp__ev_get(e, &info);
        rp_ctxstate *scs = rp__ctx_of_stream(s, ptsz);
        int legacy = s == CU_STREAM_LEGACY || (!s && !ptsz);
        int op_ok = round < 4 && known && !flags && (rp__stream_is_created(s) || legacy) && scs &&
                    (info.flags & CU_EVENT_DISABLE_TIMING) &&
                    !(info.flags & CU_EVENT_INTERPROCESS) &&
                    (kind == RP_OP_EVWAIT || info.ctx == scs->ctx);
        if (known && info.live_cs && (!op_ok || info.live_cs != scs))
            pre = rp__first_error(pre, settle_event(e, &info,
                                                scs && info.live_cs != scs
                                                    ? "used by a stream of another context"
                                                    : "recorded or waited on where it cannot "
                                                      "join the run (the legacy or per-thread "
                                                      "stream, or with flags)"));
        if (!op_ok) {
            rp__note_issue();
            CUresult pre_ = rp__first_error(pre, round < 4 ? rp__boundary_stream(s, ptsz) : rp__boundary_global());
            return rp__issued_after(pre_, event_call(entry, e, s, flags));
        }
        cs = rp__lock_ctx_of_stream(s, ptsz);
        if (cs != scs) { /* the stream went meanwhile (a program racing its destroy) */
            if (cs)
                rp__hook_unlock(cs);
            rp__note_issue();
            CUresult pre_ = rp__first_error(pre, rp__boundary_stream(s, ptsz));
            return rp__issued_after(pre_, event_call(entry, e, s, flags));
        }
        st = rp__stream_of(cs, s, ptsz);
        if (!st)
            break;
        if (rp__ev_get(e, &info) && rp__ev_live_in(&info, cs) &&
            info.live_home != rp__home(st)) {
            /* A wait joins the event's trace, unless the stream is already
             * part of a run of its own (one it joined, or its own with ops
             * or streams that joined it): then that run goes on, and the
             * event's trace ends (its record issued), as for a record
             * elsewhere. */
            rp_stream *h = rp__home(st);
            if (kind == RP_OP_EVWAIT && !st->legacy && !st->trace.owner && !h->trace.nmembers &&
                !h->learn.nseg && !h->match.ndef)
                pre = rp__first_error(pre, rp__join_trace(st, info.live_home));
            else
                pre = rp__first_error(pre, rp__end_trace(info.live_home));
        }
        if (rp__ev_touched(e, cs, rp__home(st)))
            break;
        rp__hook_unlock(cs); /* held by another context's trace now: settled next round */
    }
    if (st && kind == RP_OP_EVWAIT && info.ctx != cs->ctx) {
        /* Its record and this wait cannot be one graph: a capture spans one
         * context. The wait is an op of this stream's run all the same. */
        cs->counters.cross_context_waits++;
        static _Atomic unsigned int logged;
        if (atomic_fetch_add(&logged, 1) < 4)
            rp__info("stream %p waits on an event of another context: the work on both sides "
                     "is replayed in its own context, never as one graph", (void *)s);
    }
    rp_op op = {.kind = kind, .ev = e, .entry = (uint16_t)entry, .eser = info.serial};
    CUresult out;
    if (rp__capturable_locked(cs, s, ptsz, &op, &st, &out))
        return rp__first_error(pre, out);
    return rp__eager_done(cs, st, &op, rp__first_error(pre, out), event_call(entry, e, s, flags));
}

CUresult CUDAAPI rp__hook_cuEventRecord(CUevent hEvent, CUstream hStream)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, 0, RP_E_cuEventRecord, 0);
}

CUresult CUDAAPI rp__hook_cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, 0, RP_E_cuEventRecord_ptsz, 1);
}

CUresult CUDAAPI rp__hook_cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                   unsigned int flags)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, flags, RP_E_cuEventRecordWithFlags, 0);
}

CUresult CUDAAPI rp__hook_cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
                                                        unsigned int flags)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, flags, RP_E_cuEventRecordWithFlags_ptsz, 1);
}

CUresult CUDAAPI rp__hook_cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return event_op(RP_OP_EVWAIT, hEvent, hStream, Flags, RP_E_cuStreamWaitEvent, 0);
}

CUresult CUDAAPI rp__hook_cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
                                                   unsigned int Flags)
{
    return event_op(RP_OP_EVWAIT, hEvent, hStream, Flags, RP_E_cuStreamWaitEvent_ptsz, 1);
}

/* Events are noted at creation (their flags and context decide whether
 * they can be ops); one destroyed while a trace holds it is settled first
 * (its deferred record issued while the handle is valid). */
CUresult CUDAAPI rp__hook_cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    CUresult rc = R->cuEventCreate(phEvent, Flags);
    CUcontext ctx = NULL;
    if (rc == CUDA_SUCCESS && phEvent && R->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS)
        rp__ev_created(*phEvent, Flags, ctx);
    return rc;
}

/* A destroyed event ends nothing (a framework destroys the fresh event of
 * each wait_stream right after its record and wait): where an op the trace
 * holds names it, its destroy waits for that op to be issued (the stream's
 * next resolution: rp__match_defer_destroy), else it goes to the driver at
 * once. Either way the program's handle is gone: the engine forgets the
 * event now (a handle given out again is another event: rp_evinfo.serial).
 * Only where no more destroys can wait is the trace resolved first, as
 * before. */
static CUresult event_destroy(CUresult (*real)(CUevent), CUevent e)
{
    rp_evinfo info;
    CUresult pre = CUDA_SUCCESS;
    if (!rp__stepping_aside() && rp__ev_get(e, &info) && info.live_cs) {
        rp_ctxstate *cs = info.live_cs;
        rp__hook_lock(cs);
        int deferred = rp__ev_live_in(&info, cs) &&
                       rp__match_holds_event(info.live_home, info.serial) &&
                       rp__match_defer_destroy(info.live_home, e) == 0;
        rp__hook_unlock(cs);
        if (deferred) {
            rp__ev_destroyed(e);
            return CUDA_SUCCESS;
        }
        if (rp__match_holds_event(info.live_home, info.serial))
            pre = settle_event(e, &info, "destroyed");
        else
            rp__ev_settled(e, &info);
    }
    /* Its handle may come back for a new event: what a replay knew of the
     * old one's last record (fj_ready's after_gen) goes with its entry in
     * the event table (rp__ev_destroyed; a new event's entry starts empty).
     * Nothing reaches a stream: the streams a replay left clean stay so. */
    CUresult rc = real(e);
    if (rc == CUDA_SUCCESS)
        rp__ev_destroyed(e);
    return rp__first_error(pre, rc);
}

/* cuEventQuery: where no op held by a trace records the event last (its
 * last record reached the driver), the driver answers, and nothing
 * deferred anywhere is resolved (PyTorch's caching allocator polls the
 * events of its blocks at every allocation). Where a held op records it,
 * the work it covers has not even been issued: not ready, which is true;
 * the program that keeps asking (a host spinning on the event) gets the
 * driver's answer after RP_HELD_POLLS such answers in a row, its trace
 * resolved first. An event the engine does not know: a global boundary,
 * as any call it does not understand. */
#define RP_HELD_POLLS 32
static CUresult event_query(CUevent e)
{
    rp_evinfo info;
    if (rp__aside())
        return R->cuEventQuery(e);
    if (!rp__ev_get(e, &info))
        return rp__first_error(rp__boundary_global(), R->cuEventQuery(e));
    if (info.live_cs) {
        rp_ctxstate *cs = info.live_cs;
        rp__hook_lock(cs);
        int held = rp__ev_live_in(&info, cs) &&
                   rp__match_holds_event(info.live_home, info.serial) == 2;
        CUresult pre = CUDA_SUCCESS;
        if (held && rp__ev_polled(e) < RP_HELD_POLLS) {
            rp__hook_unlock(cs);
            return CUDA_ERROR_NOT_READY;
        }
        if (held)
            pre = rp__end_trace(info.live_home);
        rp__hook_unlock(cs);
        if (held)
            return rp__first_error(pre, R->cuEventQuery(e));
    }
    return R->cuEventQuery(e);
}

CUresult CUDAAPI rp__hook_cuEventQuery(CUevent hEvent)
{
    return event_query(hEvent);
}

CUresult CUDAAPI rp__hook_cuEventDestroy(CUevent hEvent)
{
    return event_destroy(R->cuEventDestroy, hEvent);
}

CUresult CUDAAPI rp__hook_cuEventDestroy_v2(CUevent hEvent)
{
    return event_destroy(R->cuEventDestroy_v2, hEvent);
}
