/* event.c - events: a record is an op that marks a stream position (and
 * takes a timestamp when it runs); query, synchronize and stream waits look
 * at that position. Records and waits in a capturing stream are handed to
 * capture.c. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void cc__event_ref(cc_event *e) { e->refs++; }

void cc__event_unref(cc_event *e)
{
    if (--e->refs > 0) return;
    if (e->rs) cc__stream_unref(e->rs);
    free(e->cap_nodes);
    free(e);
}

/* The live event a handle names, or NULL (lock held). */
static cc_event *event_get(CUevent h)
{
    cc_event *e = (cc_event *)h;
    return cc__handle_is(e, CC_K_EVENT) && !e->dead ? e : NULL;
}

/* 907 while e was last recorded in a capture that is still open. */
static bool in_open_capture(cc_event *e)
{
    return e->cap && cc__capture_live(e->cap, e->cap_id);
}

CC_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    CC_ENTER(cuEventCreate);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
    if (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) {
        cc_event *e = calloc(1, sizeof *e);
        if (!e) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            e->flags = Flags;
            e->refs = 1;
            cc__handle_add(e, CC_K_EVENT);
            *phEvent = (CUevent)e;
        }
    }
    cc__unlock();
    return r;
}

static CUresult event_destroy(CUevent h)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_event *e = event_get(h);
    if (!e) {
        r = CUDA_ERROR_INVALID_HANDLE;
    } else {
        /* Pending records and waits keep their reference: destroying an
         * event with work outstanding is legal and completes normally. */
        e->dead = true;
        cc__handle_del(e);
        cc__event_unref(e);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuEventDestroy(CUevent hEvent)
{
    CC_ENTER(cuEventDestroy);
    return event_destroy(hEvent);
}

CC_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    CC_ENTER(cuEventDestroy_v2);
    return event_destroy(hEvent);
}

static CUresult event_record(CUevent h, CUstream hs, bool pt, unsigned flags)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_event *e = event_get(h);
    cc_stream *s = NULL;
    if (!e) r = CUDA_ERROR_INVALID_HANDLE;
    if (!r) r = cc__stream_get(hs, pt, &s);
    if (!r && s->cap) {
        bool handled = false;
        r = cc__capture_event_record(s, e, flags, &handled);
        cc__unlock();
        return r;
    }
    if (!r) r = cc__legacy_use(s);
    if (!r) {
        cc_work w = {.kind = CC_W_EVENT_RECORD, .ctx = s->ctx};
        w.u.e.ev = e;
        w.u.e.gen = e->gen + 1;
        cc__event_ref(e);
        unsigned long long seq;
        r = cc__submit(s, &w, NULL, 0, &seq);
        if (r) {
            cc__work_free(&w);
        } else {
            e->gen++;
            cc__stream_ref(s);
            if (e->rs) cc__stream_unref(e->rs);
            e->rs = s;
            e->rseq = seq;
            e->recorded = true;
            e->cap = NULL;
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    CC_ENTER(cuEventRecord);
    return event_record(hEvent, hStream, false, 0);
}

CC_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    CC_ENTER(cuEventRecord_ptsz);
    return event_record(hEvent, hStream, true, 0);
}

CC_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    CC_ENTER(cuEventRecordWithFlags);
    return event_record(hEvent, hStream, false, flags);
}

CC_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    CC_ENTER(cuEventRecordWithFlags_ptsz);
    return event_record(hEvent, hStream, true, flags);
}

static bool event_done(cc_event *e)
{
    return !e->recorded || !e->rs || e->rs->completed >= e->rseq;
}

CC_EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    CC_ENTER(cuEventQuery);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_event *e = event_get(hEvent);
    if (!e) r = CUDA_ERROR_INVALID_HANDLE;
    else if (in_open_capture(e)) r = CUDA_ERROR_CAPTURED_EVENT;
    else if (!event_done(e)) r = CUDA_ERROR_NOT_READY;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    CC_ENTER(cuEventSynchronize);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_event *e = event_get(hEvent);
    if (!e) r = CUDA_ERROR_INVALID_HANDLE;
    else if (in_open_capture(e)) r = CUDA_ERROR_CAPTURED_EVENT;
    if (!r) {
        cc__count(CC_C_SYNC_EVENT);
        if (e->recorded && e->rs) {
            cc__event_ref(e);
            cc_stream *s = e->rs;
            unsigned long long seq = e->rseq;
            cc__stream_ref(s);
            cc__wait(s, seq);
            cc__stream_unref(s);
            cc__event_unref(e);
        }
    }
    cc__unlock();
    return r;
}

static CUresult elapsed(float *ms, CUevent hs, CUevent he)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_event *a = event_get(hs), *b = event_get(he);
    if (!a || !b) r = CUDA_ERROR_INVALID_HANDLE;
    else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) r = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->recorded || !b->recorded) r = CUDA_ERROR_INVALID_HANDLE;
    else if (in_open_capture(a) || in_open_capture(b)) r = CUDA_ERROR_CAPTURED_EVENT;
    else if (!event_done(a) || !event_done(b) || a->done_gen < a->gen || b->done_gen < b->gen)
        r = CUDA_ERROR_NOT_READY;
    else *ms = (float)((double)((long long)b->time_ns - (long long)a->time_ns) / 1e6);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CC_ENTER(cuEventElapsedTime);
    return elapsed(pMilliseconds, hStart, hEnd);
}

CC_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CC_ENTER(cuEventElapsedTime_v2);
    return elapsed(pMilliseconds, hStart, hEnd);
}

static CUresult stream_wait_event(CUstream hs, bool pt, CUevent he, unsigned flags)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_event *e = event_get(he);
    cc_stream *s = NULL;
    if (!e) r = CUDA_ERROR_INVALID_HANDLE;
    if (!r) r = cc__stream_get(hs, pt, &s);
    if (!r) {
        bool handled = false;
        r = cc__capture_event_wait(s, e, flags, &handled);
        if (!r && !handled) {
            r = cc__legacy_use(s);
            if (!r && e->recorded && e->rs && !e->cap) {
                cc_work w = {.kind = CC_W_NOP, .ctx = s->ctx};
                cc_fence f = {e->rs, e->rseq};
                r = cc__submit(s, &w, &f, 1, NULL);
            }
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    CC_ENTER(cuStreamWaitEvent);
    return stream_wait_event(hStream, false, hEvent, Flags);
}

CC_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    CC_ENTER(cuStreamWaitEvent_ptsz);
    return stream_wait_event(hStream, true, hEvent, Flags);
}
