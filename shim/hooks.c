/* hooks.c - the capture engine's entry points, one per interposed entry,
 * each doing what its role in entries.h says: a capturable call is recorded
 * (recorder.c) and offered to the matcher, deferred or issued eagerly and
 * learnt (streams.c); a boundary resolves what it must first (a stream's
 * work and the work ordered with it, or every context's); the program's own
 * captures make the engine step aside; a teardown forgets graphs and
 * streams. Boundaries, teardowns and the program's captures are generated
 * from the roles; capturable calls have their hooks written out below.
 * Everything reaches the driver through the table the engine was installed
 * with (`R`). */
#include "engine.h"
#include "match.h"

#include <string.h>

#define MAX_STAGE_OP (4u << 20) /* a larger pageable host-to-device copy runs eagerly */

static const struct rp__driver *R;

static inline __attribute__((always_inline)) void lock(rp_ctxstate *cs) { rp__lock(&cs->lock); }
static inline __attribute__((always_inline)) void unlock(rp_ctxstate *cs)
{
    rp__unlock(&cs->lock);
}

/* The state of the context stream `s` belongs to, locked (NULL: none). The
 * thread's cache may still name the context of a stream destroyed just now
 * whose handle came back for another context: a destroy bumps the
 * generation under the old context's lock, so the generation seen once the
 * lock is held settles it (the look-up is made again). */
static inline __attribute__((always_inline)) rp_ctxstate *lock_ctx_of_stream(CUstream s, int ptsz)
{
    for (;;) {
        rp_ctxstate *cs = rp__ctx_of_stream(s, ptsz);
        if (!cs)
            return NULL;
        lock(cs);
        if (RP_LIKELY(!rp__stream_is_created(s) ||
                      rp__tl_gen == atomic_load_explicit(&rp__stream_gen, memory_order_acquire)))
            return cs;
        unlock(cs);
    }
}

/* ---- the common paths ------------------------------------------------------- */

/* The error of a flush forced before a call wins over the call's own
 * (DESIGN.md §2.4). */
static inline CUresult first_error(CUresult pre, CUresult rc)
{
    return pre != CUDA_SUCCESS ? pre : rc;
}

/* Run `boundary`, then `call`, and return the first error. The boundary
 * runs in a statement of its own: the order in which C evaluates a call's
 * arguments is unspecified, and the boundary must come before the call
 * (the fault sweep once caught a reordering from exactly that). */
#define AFTER(boundary, call) AFTER_ISSUING(boundary, call, 1)
/* The same, for a call that puts work on a stream when `issues`: the count
 * of such calls (rp__issued) goes up once the call is made (a resolution
 * before it could take the stream for idle-or-ours, and stamp it so, with
 * this call's work still to come: replay.c, fj_ready), and before it too
 * (no resolution of another thread while the call runs takes the stream
 * for unchanged). */
#define AFTER_ISSUING(boundary, call, issues)                                                   \
    do {                                                                                        \
        if (issues)                                                                             \
            rp__note_issue();                                                                   \
        CUresult pre_ = (boundary);                                                             \
        CUresult rc_ = (call);                                                                  \
        if (issues)                                                                             \
            rp__note_issue();                                                                   \
        return first_error(pre_, rc_);                                                          \
    } while (0)

/* A global boundary: everything deferred, in every context, is resolved. */
static CUresult boundary_global(void)
{
    return rp__resolve_every_ctx(NULL, 0);
}

static int global_entry_issues(enum rp__entry e)
{
    return e != RP_E_cuEventQuery && e != RP_E_cuEventSynchronize;
}

/* A stream-scoped boundary on `s`: that stream's segment and those of the
 * streams ordered with it end. */
static CUresult boundary_stream(CUstream s, int ptsz)
{
    /* While an event record is deferred anywhere, the call may name that
     * event without the engine seeing it (a graph's event node): global. */
    if (atomic_load_explicit(&rp__ev_deferred, memory_order_relaxed) > 0)
        return boundary_global();
    rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return boundary_global();
    rp_stream *st = rp__stream_of(cs, s, ptsz);
    CUresult rc = st ? rp__end_ordered(st, 1) : rp__resolve_ctx(cs);
    unlock(cs);
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
static void aside_op(CUstream s, int ptsz, rp_op_kind kind)
{
    rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return;
    cs->st.ops_seen[kind]++;
    rp__count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
    unlock(cs);
}

/* A call on stream `s` that the engine does not capture, for reason `why`
 * (cs locked): it ends that stream's segment and those ordered with it. */
static CUresult not_capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz,
                                      enum rp__eager_reason why)
{
    cs->st.ops_seen[0]++;
    rp__count_eager(cs, why, 1);
    rp_stream *st = rp__stream_of(cs, s, ptsz);
    /* As boundary_stream, for the context: a launch's event attribute may
     * name an event whose record is deferred. */
    if (!st || atomic_load_explicit(&rp__ev_deferred, memory_order_relaxed) > 0)
        return rp__resolve_ctx(cs);
    return rp__end_ordered(st, 1);
}

static CUresult not_capturable(CUstream s, int ptsz)
{
    rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
    if (!cs)
        return boundary_global();
    CUresult rc = not_capturable_locked(cs, s, ptsz, RP_EAGER_NOT_CAPTURABLE);
    unlock(cs);
    return rc;
}

/* A capturable call whose record is `op` (kind fields set), with cs locked.
 * Returns 1 when the engine deferred it (*out is the call's result; cs is
 * unlocked), or 0 when the caller must now issue it eagerly, cs still
 * locked, and then call eager_done. */
static int capturable_locked(rp_ctxstate *cs, CUstream s, int ptsz, rp_op *op,
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
    cs->st.ops_seen[op->kind]++;
    op->ctx = cs->ctx;
    op->stream = st->handle;
    if (ptsz)
        op->flags |= RP_OPF_PTSZ;
    if (rp__program_capture_pending()) {
        /* The program is beginning a capture: nothing more is deferred
         * (what the stream holds goes first). */
        *out = rp__end_ordered(st, 1);
        rp__count_eager(cs, RP_EAGER_PROGRAM_CAPTURE, 1);
        *pst = NULL; /* nor learnt */
        return 0;
    }
    CUresult pre = rp__end_ordered_others(st);
    CUresult cut = rp__learn_next(home, op);
    pre = first_error(pre, cut);
    CUresult err = CUDA_SUCCESS;
    rp_op_kind kind = op->kind; /* the record moves into the stream when deferred */
    *pst = home;
    if (rp__defer(home, op, &err)) {
        rp__trace("%s on stream %p: deferred (%zu deferred now)", rp__op_kind_name(kind),
                  (void *)st->handle, home->ndef);
        unlock(cs);
        *out = first_error(pre, err);
        return 1;
    }
    rp__trace("%s on stream %p: eager", rp__op_kind_name(kind), (void *)st->handle);
    *out = first_error(pre, err);
    return 0;
}

/* The same, for a call whose context is not known yet. Returns 1 (deferred;
 * nothing locked), or 0 with *pcs locked (or NULL: a plain eager call). */
static int capturable(CUstream s, int ptsz, rp_op *op, rp_ctxstate **pcs, rp_stream **pst,
                      CUresult *out)
{
    rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
    *pcs = cs;
    *pst = NULL;
    if (!cs) {
        rp__op_free(op);
        *out = boundary_global();
        return 0;
    }
    return capturable_locked(cs, s, ptsz, op, pst, out);
}

/* After the eager call of a capturable op: it joins its stream's segment
 * (a failed call joins nothing). Unlocks cs. */
static CUresult eager_done(rp_ctxstate *cs, rp_stream *st, rp_op *op, CUresult pre, CUresult rc)
{
    rp__note_issue();
    if (cs) {
        if (st && rc == CUDA_SUCCESS)
            rp__seg_append(st, op, RP_EAGER_WARMING_UP);
        else
            rp__op_free(op);
        unlock(cs);
    }
    return first_error(pre, rc);
}

/* ---- kernel launches ------------------------------------------------------------ */

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
    if (!rp__cost_time_this(cs))
        return launch_issue(l);
    uint64_t t0 = rp__cost_now();
    CUresult rc = launch_issue(l);
    rp__cost_sample(cs, RP_COST_EAGER, rp__cost_now() - t0, 1);
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
    if ((!st->ndef && !st->hint) || rp__program_capture_pending() ||
        (st->per && rp__period_cuts(st->per) && rp__learn_cuts_next(st)))
        return 0;
    enum rp_offer v = rp__match_launch(st, own->handle, l, entry);
    if (v == RP_OFFER_EAGER)
        return 0;
    cs->st.ops_seen[RP_OP_KERNEL]++;
    CUresult pre = rp__end_ordered_others(own);
    if (v == RP_OFFER_COMPLETE)
        pre = first_error(pre, rp__resolve_stream(st));
    unlock(cs);
    *out = pre;
    return 1;
}

/* The same for a stream that joined another's trace (fork/join): matched
 * there. Out of line, so that the common case keeps one stream. */
static __attribute__((noinline)) int launch_matched_joined(rp_ctxstate *cs, rp_stream *own,
                                                           const rp_launch *l,
                                                           enum rp__entry entry, CUresult *out)
{
    return launch_matched_in(cs, own, own->owner, *l, entry, out);
}

static inline __attribute__((always_inline)) int launch_matched(rp_ctxstate *cs, rp_launch l,
                                                                enum rp__entry entry,
                                                                CUresult *out)
{
    rp_stream *st = rp__stream_fast(cs, l.s, l.ptsz);
    if (!st)
        return 0;
    if (RP_UNLIKELY(st->owner)) {
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
    if (st && !st->owner && !st->nmembers && rp__learn_resting(st) && !cs->nseqs && !st->ndef &&
        !rp__program_capture_pending()) {
        cs->st.ops_seen[RP_OP_KERNEL]++;
        CUresult pre = rp__end_ordered_others(st);
        st->opno++;
        rp__note_issue();
        CUresult rc = launch_issue_timed(cs, l);
        if (rc == CUDA_SUCCESS) /* as eager_done: a failed call is not counted */
            rp__count_eager(cs, RP_EAGER_RESTING, 1);
        unlock(cs);
        return first_error(pre, rc);
    }
    rp_op op;
    enum rp__eager_reason why = RP_EAGER_NOT_CAPTURABLE;
    if (rp__rec_kernel(cs, &op, l->f, l->grid, l->block, l->shmem, l->kp, l->extra, l->cfg,
                       &why) != 0) {
        CUresult pre = not_capturable_locked(cs, l->s, l->ptsz, why);
        unlock(cs);
        /* A launch attribute may record an event another context's run
         * holds a deferred wait on: every context first. */
        if (atomic_load_explicit(&rp__ev_deferred, memory_order_relaxed) > 0)
            pre = first_error(pre, boundary_global());
        AFTER(pre, launch_issue(l));
    }
    op.entry = (uint16_t)entry;
    CUresult pre;
    if (capturable_locked(cs, l->s, l->ptsz, &op, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, launch_issue_timed(cs, l));
}

/* A launch through any launch entry point. */
static CUresult launch(const rp_launch *l, enum rp__entry entry)
{
    if (rp__stepping_aside()) {
        aside_op(l->s, l->ptsz, RP_OP_KERNEL);
        return launch_issue(l);
    }
    rp_ctxstate *cs = lock_ctx_of_stream(l->s, l->ptsz);
    if (!cs)
        AFTER(boundary_global(), launch_issue(l));
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

/* A plain launch (cuLaunchKernel[_ptsz]): a matched one is deferred by
 * inline code that keeps the launch in registers. */
static inline __attribute__((always_inline)) CUresult
plain_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
             unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **kp,
             void **extra, int ptsz)
{
    rp_launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s, kp, extra, NULL, ptsz};
    enum rp__entry entry = ptsz ? RP_E_cuLaunchKernel_ptsz : RP_E_cuLaunchKernel;
    if (RP_LIKELY(!rp__stepping_aside())) {
        rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
        if (cs) {
            CUresult matched;
            if (RP_LIKELY(launch_matched(cs, l, entry, &matched)))
                return matched;
            return plain_launch_slow(cs, f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra, ptsz);
        }
    }
    return plain_launch_slow(NULL, f, gx, gy, gz, bx, by, bz, shmem, s, kp, extra, ptsz);
}

static CUresult CUDAAPI eng_cuLaunchKernel RP_SIG_LAUNCH_KERNEL
{
    return plain_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                        sharedMemBytes, hStream, kernelParams, extra, 0);
}

static CUresult CUDAAPI eng_cuLaunchKernel_ptsz RP_SIG_LAUNCH_KERNEL
{
    return plain_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                        sharedMemBytes, hStream, kernelParams, extra, 1);
}

/* cuLaunchKernelEx: captured with the attributes a graph's kernel node
 * keeps (recorder.c); a launch with any other attribute is a boundary. */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra,
                          int ptsz)
{
    rp_launch l = {f, {0, 0, 0}, {0, 0, 0}, 0, NULL, kp, extra, c, ptsz};
    if (!c)
        return launch_issue(&l); /* the driver's error, as the program would get it */
    l.grid[0] = c->gridDimX, l.grid[1] = c->gridDimY, l.grid[2] = c->gridDimZ;
    l.block[0] = c->blockDimX, l.block[1] = c->blockDimY, l.block[2] = c->blockDimZ;
    l.shmem = c->sharedMemBytes;
    l.s = c->hStream;
    return launch(&l, ptsz ? RP_E_cuLaunchKernelEx_ptsz : RP_E_cuLaunchKernelEx);
}

static CUresult CUDAAPI eng_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                             void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 0);
}

static CUresult CUDAAPI eng_cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                                  void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 1);
}

/* ---- copies and memsets --------------------------------------------------------- */

/* Asynchronous host-to-device copy. From pageable memory the driver reads
 * the bytes at the call: a deferred copy keeps a copy of them, and its graph
 * reads them from staging. From pinned memory the driver reads when the copy
 * runs (earlier work on the stream may fill the buffer): the copy is
 * captured reading the program's own buffer, whose address is content. */
static CUresult htod_async(CUdeviceptr d, const void *h, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(CUdeviceptr, const void *, size_t, CUstream) =
        ptsz ? R->cuMemcpyHtoDAsync_v2_ptsz : R->cuMemcpyHtoDAsync_v2;
    if (rp__stepping_aside()) {
        aside_op(s, ptsz, RP_OP_HTOD);
        return real(d, h, n, s);
    }
    int pinned = n && rp__rec_is_pinned(R, h);
    if (n == 0 || !h || (!pinned && n > MAX_STAGE_OP))
        AFTER(not_capturable(s, ptsz), real(d, h, n, s));
    rp_ctxstate *cs;
    rp_op op = {.kind = RP_OP_HTOD, .dst = d, .host = (void *)h, .bytes = n,
                .flags = pinned ? RP_OPF_HOST_PINNED : 0,
                .entry = ptsz ? RP_E_cuMemcpyHtoDAsync_v2_ptsz : RP_E_cuMemcpyHtoDAsync_v2};
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    if (!pinned)
        op.host = NULL; /* the program's pageable buffer: not kept past the call */
    return eager_done(cs, st, &op, pre, real(d, h, n, s));
}

static CUresult CUDAAPI eng_cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                                 size_t ByteCount, CUstream hStream)
{
    return htod_async(dstDevice, srcHost, ByteCount, hStream, 0);
}

static CUresult CUDAAPI eng_cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                                      size_t ByteCount, CUstream hStream)
{
    return htod_async(dstDevice, srcHost, ByteCount, hStream, 1);
}

/* Asynchronous device-to-host copy: captured into pinned memory only; into
 * pageable memory it synchronises the host, so it is a global boundary. */
static CUresult dtoh_async(void *h, CUdeviceptr d, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(void *, CUdeviceptr, size_t, CUstream) =
        ptsz ? R->cuMemcpyDtoHAsync_v2_ptsz : R->cuMemcpyDtoHAsync_v2;
    if (rp__stepping_aside()) {
        aside_op(s, ptsz, RP_OP_DTOH);
        return real(h, d, n, s);
    }
    if (!n || !rp__rec_is_pinned(R, h))
        AFTER(boundary_global(), real(h, d, n, s));
    rp_ctxstate *cs;
    rp_op op = {.kind = RP_OP_DTOH, .host = h, .src = d, .bytes = n,
                .entry = ptsz ? RP_E_cuMemcpyDtoHAsync_v2_ptsz : RP_E_cuMemcpyDtoHAsync_v2};
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, &op, &cs, &st, &pre))
        return pre;
    return eager_done(cs, st, &op, pre, real(h, d, n, s));
}

static CUresult CUDAAPI eng_cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
                                                 size_t ByteCount, CUstream hStream)
{
    return dtoh_async(dstHost, srcDevice, ByteCount, hStream, 0);
}

static CUresult CUDAAPI eng_cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
                                                      size_t ByteCount, CUstream hStream)
{
    return dtoh_async(dstHost, srcDevice, ByteCount, hStream, 1);
}

/* Device-to-device copies and memsets of device memory, asynchronous and
 * synchronous forms (neither synchronises the host; the synchronous forms
 * run on the legacy stream, the per-thread stream for _ptds): recorded, and
 * issued eagerly through the entry the program called (rp__rec_issue_entry
 * knows every capturable copy and memset entry). */
static CUresult device_op(rp_op *op, CUstream s, int ptsz)
{
    rp_op_kind kind = op->kind;
    if (rp__stepping_aside()) {
        aside_op(s, ptsz, kind);
        return rp__rec_issue_entry(R, op);
    }
    if (op->bytes == 0)
        AFTER(not_capturable(s, ptsz), rp__rec_issue_entry(R, op));
    rp_op copy = *op; /* the record may move into the stream */
    rp_ctxstate *cs;
    rp_stream *st;
    CUresult pre;
    if (capturable(s, ptsz, op, &cs, &st, &pre))
        return pre;
    return eager_done(cs, st, op, pre, rp__rec_issue_entry(R, &copy));
}

static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, enum rp__entry e,
                     int ptsz)
{
    rp_op op = {.kind = RP_OP_DTOD, .dst = dst, .src = src, .bytes = n, .stream = s,
                .entry = (uint16_t)e};
    return device_op(&op, s, ptsz);
}

static CUresult CUDAAPI eng_cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                 size_t ByteCount, CUstream hStream)
{
    return dtod(dstDevice, srcDevice, ByteCount, hStream, RP_E_cuMemcpyDtoDAsync_v2, 0);
}

static CUresult CUDAAPI eng_cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                      size_t ByteCount, CUstream hStream)
{
    return dtod(dstDevice, srcDevice, ByteCount, hStream, RP_E_cuMemcpyDtoDAsync_v2_ptsz, 1);
}

static CUresult CUDAAPI eng_cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                            size_t ByteCount)
{
    return dtod(dstDevice, srcDevice, ByteCount, NULL, RP_E_cuMemcpyDtoD_v2, 0);
}

static CUresult CUDAAPI eng_cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                 size_t ByteCount)
{
    return dtod(dstDevice, srcDevice, ByteCount, NULL, RP_E_cuMemcpyDtoD_v2_ptds, 1);
}

/* A memset of host memory synchronises the host: a global boundary. */
static CUresult memset_op(CUdeviceptr d, unsigned int v, size_t n, unsigned int elem, CUstream s,
                          enum rp__entry e, int ptsz)
{
    rp_op op = {.kind = RP_OP_MEMSET, .dst = d, .value = v, .bytes = n, .elem = elem,
                .stream = s, .entry = (uint16_t)e};
    if (!rp__stepping_aside()) {
        unsigned int type = 0;
        if (!n || R->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) !=
                      CUDA_SUCCESS || type != CU_MEMORYTYPE_DEVICE)
            AFTER(boundary_global(), rp__rec_issue_entry(R, &op));
    }
    return device_op(&op, s, ptsz);
}

/* Every width in every form: the value widens to unsigned int in the
 * record, and rp__rec_issue_as_called narrows it back by the entry. */
#define MEMSET_HOOKS(bits, type)                                                                \
    static CUresult CUDAAPI eng_cuMemsetD##bits##_v2(CUdeviceptr d, type v, size_t n)           \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, NULL, RP_E_cuMemsetD##bits##_v2, 0);                \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##_v2_ptds(CUdeviceptr d, type v, size_t n)      \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, NULL, RP_E_cuMemsetD##bits##_v2_ptds, 1);           \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##Async(CUdeviceptr d, type v, size_t n,         \
                                                       CUstream s)                              \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, s, RP_E_cuMemsetD##bits##Async, 0);                 \
    }                                                                                           \
    static CUresult CUDAAPI eng_cuMemsetD##bits##Async_ptsz(CUdeviceptr d, type v, size_t n,    \
                                                            CUstream s)                         \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, s, RP_E_cuMemsetD##bits##Async_ptsz, 1);            \
    }
MEMSET_HOOKS(8, unsigned char)
MEMSET_HOOKS(16, unsigned short)
MEMSET_HOOKS(32, unsigned int)

/* ---- events: fork/join ------------------------------------------------------------- */

/* The call the program made, with its flags, through the entry it called
 * (rp__rec_issue_entry knows every event entry). */
static CUresult event_call(enum rp__entry entry, CUevent e, CUstream s, unsigned int flags)
{
    rp_op op = {.ev = e, .stream = s, .value = flags, .entry = (uint16_t)entry};
    return rp__rec_issue_entry(R, &op);
}

/* The trace that last recorded or waited on an event ends (resolved: its
 * deferred record or wait is issued), if it is still live, and the event is
 * held by no trace any more. Nothing locked. */
static CUresult settle_event(CUevent e, const rp_evinfo *i, const char *why)
{
    rp_ctxstate *cs = i->live_cs;
    lock(cs);
    CUresult rc = CUDA_SUCCESS;
    if (rp__ev_live_in(i, cs)) {
        cs->st.event_settles++;
        static _Atomic unsigned int logged;
        if (atomic_fetch_add(&logged, 1) < 4)
            rp__info("an event recorded or waited on in stream %p's run of ops is %s: that run "
                     "ends there (a graph spans one context, and replays only created streams)",
                     (void *)i->live_home->handle, why);
        rc = rp__end_trace(i->live_home);
    }
    unlock(cs);
    rp__ev_settled(e, i);
    return rc;
}

/* cuEventRecord and cuStreamWaitEvent (docs/engine.md, "Fork and join").
 * On a created stream, with no flags, of an event created through the
 * engine without timing and not for other processes, in the stream's
 * context, the call is an op of the stream's trace: recorded, deferred and
 * replayed like a launch. A wait on an event live in another trace of the
 * context (recorded or waited on there since that trace's last host
 * boundary) makes the stream join that trace; a record of it ends that
 * trace first. Any other record or wait is a stream boundary, as before,
 * after the trace that holds the event (any context) has ended. */
static CUresult event_op(rp_op_kind kind, CUevent e, CUstream s, unsigned int flags,
                         enum rp__entry entry, int ptsz)
{
    if (rp__stepping_aside()) {
        aside_op(s, ptsz, kind);
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
        int op_ok = round < 4 && known && !flags && rp__stream_is_created(s) && scs &&
                    (info.flags & CU_EVENT_DISABLE_TIMING) &&
                    !(info.flags & CU_EVENT_INTERPROCESS) &&
                    (kind == RP_OP_EVWAIT || info.ctx == scs->ctx);
        if (known && info.live_cs && (!op_ok || info.live_cs != scs))
            pre = first_error(pre, settle_event(e, &info,
                                                scs && info.live_cs != scs
                                                    ? "used by a stream of another context"
                                                    : "recorded or waited on where it cannot "
                                                      "join the run (the legacy or per-thread "
                                                      "stream, or with flags)"));
        if (!op_ok)
            AFTER(first_error(pre, round < 4 ? boundary_stream(s, ptsz) : boundary_global()),
                  event_call(entry, e, s, flags));
        cs = lock_ctx_of_stream(s, ptsz);
        if (cs != scs) { /* NEVER in practice: the stream went meanwhile */
            if (cs)
                unlock(cs);
            AFTER(first_error(pre, boundary_stream(s, ptsz)), event_call(entry, e, s, flags));
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
            if (kind == RP_OP_EVWAIT && !st->owner && !h->nmembers && !h->nseg && !h->ndef)
                pre = first_error(pre, rp__join_trace(st, info.live_home));
            else
                pre = first_error(pre, rp__end_trace(info.live_home));
        }
        if (rp__ev_touched(e, cs, rp__home(st)))
            break;
        unlock(cs); /* held by another context's trace now: settled next round */
    }
    if (st && kind == RP_OP_EVWAIT && info.ctx != cs->ctx) {
        /* Its record and this wait cannot be one graph: a capture spans one
         * context. The wait is an op of this stream's run all the same. */
        cs->st.cross_context_waits++;
        static _Atomic unsigned int logged;
        if (atomic_fetch_add(&logged, 1) < 4)
            rp__info("stream %p waits on an event of another context: the work on both sides "
                     "is replayed in its own context, never as one graph", (void *)s);
    }
    rp_op op = {.kind = kind, .ev = e, .entry = (uint16_t)entry};
    CUresult out;
    if (capturable_locked(cs, s, ptsz, &op, &st, &out))
        return first_error(pre, out);
    return eager_done(cs, st, &op, first_error(pre, out), event_call(entry, e, s, flags));
}

static CUresult CUDAAPI eng_cuEventRecord(CUevent hEvent, CUstream hStream)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, 0, RP_E_cuEventRecord, 0);
}

static CUresult CUDAAPI eng_cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, 0, RP_E_cuEventRecord_ptsz, 1);
}

static CUresult CUDAAPI eng_cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                   unsigned int flags)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, flags, RP_E_cuEventRecordWithFlags, 0);
}

static CUresult CUDAAPI eng_cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
                                                        unsigned int flags)
{
    return event_op(RP_OP_EVREC, hEvent, hStream, flags, RP_E_cuEventRecordWithFlags_ptsz, 1);
}

static CUresult CUDAAPI eng_cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return event_op(RP_OP_EVWAIT, hEvent, hStream, Flags, RP_E_cuStreamWaitEvent, 0);
}

static CUresult CUDAAPI eng_cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
                                                   unsigned int Flags)
{
    return event_op(RP_OP_EVWAIT, hEvent, hStream, Flags, RP_E_cuStreamWaitEvent_ptsz, 1);
}

/* Events are noted at creation (their flags and context decide whether
 * they can be ops); one destroyed while a trace holds it is settled first
 * (its deferred record issued while the handle is valid). */
static CUresult CUDAAPI eng_cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    CUresult rc = R->cuEventCreate(phEvent, Flags);
    CUcontext ctx = NULL;
    if (rc == CUDA_SUCCESS && phEvent && R->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS)
        rp__ev_created(*phEvent, Flags, ctx);
    return rc;
}

static CUresult event_destroy(CUresult (*real)(CUevent), CUevent e)
{
    rp_evinfo info;
    CUresult pre = CUDA_SUCCESS;
    if (!rp__stepping_aside() && rp__ev_get(e, &info) && info.live_cs)
        pre = settle_event(e, &info, "destroyed");
    /* Its handle may come back for a new event: what a replay knew of the
     * old one's last record (fj_ready) must not pass for the new one's. */
    rp__note_issue();
    CUresult rc = real(e);
    if (rc == CUDA_SUCCESS)
        rp__ev_destroyed(e);
    return first_error(pre, rc);
}

static CUresult CUDAAPI eng_cuEventDestroy(CUevent hEvent)
{
    return event_destroy(R->cuEventDestroy, hEvent);
}

static CUresult CUDAAPI eng_cuEventDestroy_v2(CUevent hEvent)
{
    return event_destroy(R->cuEventDestroy_v2, hEvent);
}

/* ---- boundaries with their own behaviour --------------------------------------- */

/* cuStreamQuery: a stream-scoped boundary. A side stream of a fork/join
 * replay holds one more op than it would have eagerly, its wait for the
 * graph (fj_after), and the driver may not have retired that wait yet when
 * the graph is done: the program, having synchronized the home stream
 * past the side stream's last event, would see it busy where eagerly it is
 * idle. While nothing else has been issued since that replay (its stamp,
 * replay.c), the side stream's work is done exactly when the replay's post
 * event is: asked then, the answer is the program's. */
static CUresult stream_query(CUresult (*real)(CUstream), CUstream s, int ptsz)
{
    if (rp__stepping_aside())
        return real(s);
    CUresult pre = boundary_stream(s, ptsz);
    CUresult rc = real(s);
    if (rc == CUDA_ERROR_NOT_READY && rp__stream_is_created(s)) {
        rp_ctxstate *cs = lock_ctx_of_stream(s, ptsz);
        if (cs) {
            rp_stream *st = rp__stream_of(cs, s, ptsz);
            if (st && st->fj_after_post && st->fj_after_home && !st->ndef && !st->owner &&
                st->fj_after_gen == atomic_load_explicit(&rp__issued, memory_order_relaxed) &&
                cs->fj.post && R->cuEventQuery(cs->fj.post) == CUDA_SUCCESS)
                rc = CUDA_SUCCESS;
            unlock(cs);
        }
    }
    return first_error(pre, rc);
}

static CUresult CUDAAPI eng_cuStreamQuery(CUstream hStream)
{
    return stream_query(R->cuStreamQuery, hStream, 0);
}

static CUresult CUDAAPI eng_cuStreamQuery_ptsz(CUstream hStream)
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
    if (rp__stepping_aside()) {
        CUresult rc = real(s);
        if (rc == CUDA_SUCCESS)
            rp__forget_stream(s);
        return rc;
    }
    rp_ctxstate *cs = lock_ctx_of_stream(s, 0);
    if (!cs)
        AFTER(boundary_global(), real(s));
    CUresult pre = rp__stream_destroyed_locked(cs, s);
    CUresult rc = real(s);
    rp__streams_changed();
    unlock(cs);
    return first_error(pre, rc);
}

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
    return R->cuCtxSynchronize();
}

static CUresult CUDAAPI eng_cuCtxSynchronize(void)
{
    if (rp__stepping_aside())
        return R->cuCtxSynchronize();
    return ctx_sync(rp__ctx_current(), sync_v1, NULL);
}

static CUresult CUDAAPI eng_cuCtxSynchronize_v2(CUcontext ctx)
{
    if (rp__stepping_aside())
        return R->cuCtxSynchronize_v2(ctx);
    return ctx_sync(ctx ? rp__ctx_of(ctx) : rp__ctx_current(), R->cuCtxSynchronize_v2, ctx);
}

static CUresult CUDAAPI eng_cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
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
static CUresult teardown_pre(int ctx_dies, size_t *held)
{
    rp__note_issue();
    CUresult first = rp__resolve_every_ctx(rp__forget_ctx, ctx_dies);
    *held = rp__gates_hold();
    return first;
}

/* ---- hooks generated from the roles (entries.h) --------------------------------- */

#define RP_UNPACK(...) __VA_ARGS__
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
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        if (rp__stepping_aside())                                                               \
            return R->name args;                                                                \
        AFTER_ISSUING(boundary_global(), R->name args, global_entry_issues(RP_E_##name));       \
    }
#define HOOK_STREAM(name, params, args, s, ptsz)                                                \
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        if (rp__stepping_aside())                                                               \
            return R->name args;                                                                \
        AFTER_ISSUING(boundary_stream(s, ptsz), R->name args, stream_entry_issues(RP_E_##name)); \
    }
#define HOOK_STREAM_DESTROY(name, params, args, s, n)                                           \
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        return stream_destroy(R->name, s);                                                      \
    }
#define HOOK_TEARDOWN(name, params, args, arg, ctx_dies)                                        \
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        if (rp__stepping_aside())                                                               \
            return R->name args;                                                                \
        size_t held;                                                                            \
        CUresult pre = teardown_pre(ctx_dies, &held);                                           \
        CUresult rc = R->name args;                                                             \
        rp__gates_release(held);                                                                \
        return first_error(pre, rc);                                                            \
    }
/* The program begins its own capture: nothing new is deferred from its
 * first instruction, everything deferred is resolved, and the begin runs
 * holding every context's gate, so it never starts while a capture window
 * of ours is open; the engine steps aside until the capture ends
 * (DESIGN.md §2.5, docs/engine.md). */
#define HOOK_BEGIN_CAPTURE(name, params, args, arg, n)                                          \
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        CUresult pre = rp__program_capture_prepare();                                           \
        size_t held = rp__gates_hold();                                                         \
        CUresult rc = R->name args;                                                             \
        rp__gates_release(held);                                                                \
        rp__program_capture_begun(rc);                                                          \
        return first_error(pre, rc);                                                            \
    }
#define HOOK_END_CAPTURE(name, params, args, arg, n)                                            \
    static CUresult CUDAAPI eng_##name params                                                   \
    {                                                                                           \
        CUresult rc = R->name args;                                                             \
        rp__program_capture_ended(rc);                                                          \
        return rc;                                                                              \
    }
RP_ENTRIES(HOOK)

/* ---- installation ------------------------------------------------------------------- */

#define INSTALL(name, params, args, role) INSTALL_(name, RP_UNPACK role)
#define INSTALL_(...) INSTALL__(__VA_ARGS__)
#define INSTALL__(name, kind, arg, n) INSTALL_##kind(name)
#define INSTALL_FWD(name)
#define INSTALL_HOOK(name)                                                                      \
    if (core->name)                                                                             \
        core->name = eng_##name;
#define INSTALL_GLOBAL INSTALL_HOOK
#define INSTALL_STREAM INSTALL_HOOK
#define INSTALL_CAPTURE INSTALL_HOOK
#define INSTALL_STREAM_DESTROY INSTALL_HOOK
#define INSTALL_CTX_SYNC INSTALL_HOOK
#define INSTALL_BEGIN_CAPTURE INSTALL_HOOK
#define INSTALL_END_CAPTURE INSTALL_HOOK
#define INSTALL_TEARDOWN INSTALL_HOOK
#define INSTALL_NOTE_KERNEL INSTALL_HOOK
#define INSTALL_EVENT INSTALL_HOOK
#define INSTALL_QUERY INSTALL_HOOK

int rp__engine_install(struct rp__driver *core, const struct rp__driver *drv,
                       const struct rp__engine_config *cfg)
{
    /* Every helper, and every capturable entry the engine re-issues
     * through, must be there. */
#define NEED(name, params, args, role)                                                          \
    if (!drv->name) {                                                                           \
        rp__warn("the driver lacks %s, which the capture engine needs; forwarding only", #name); \
        return -1;                                                                              \
    }
    RP_HELPERS(NEED)
#undef NEED
    static const enum rp__entry issued[] = {
        RP_E_cuLaunchKernel, RP_E_cuMemcpyHtoDAsync_v2, RP_E_cuMemcpyDtoHAsync_v2,
        RP_E_cuMemcpyDtoDAsync_v2, RP_E_cuMemsetD8Async, RP_E_cuMemsetD16Async,
        RP_E_cuMemsetD32Async, RP_E_cuGraphLaunch, RP_E_cuGraphLaunch_ptsz, RP_E_cuGraphUpload,
        RP_E_cuStreamBeginCapture_v2, RP_E_cuStreamEndCapture, RP_E_cuStreamGetCaptureInfo_v2,
        RP_E_cuEventRecord, RP_E_cuEventSynchronize, RP_E_cuStreamWaitEvent,
        RP_E_cuStreamSynchronize, RP_E_cuStreamDestroy_v2, RP_E_cuMemHostAlloc,
        RP_E_cuMemFreeHost, RP_E_cuCtxPushCurrent_v2, RP_E_cuCtxPopCurrent_v2,
        RP_E_cuEventCreate, RP_E_cuEventDestroy_v2, RP_E_cuGraphInstantiateWithFlags,
        RP_E_cuGraphExecUpdate_v2};
    for (size_t i = 0; i < sizeof issued / sizeof issued[0]; i++) {
        if (!rp__driver_get(drv, issued[i])) {
            rp__warn("the driver lacks %s, which the capture engine needs; forwarding only",
                     rp__entry_names[issued[i]]);
            return -1;
        }
    }
    R = drv;
    rp__eng_cfg = *cfg;
    rp__streams_setup(drv);
    RP_ENTRIES(INSTALL)
    return 0;
}

int rp__engine_setup(struct rp__driver *core, const struct rp__driver *real)
{
    struct rp__engine_config cfg = {
        .warmup = (unsigned int)rp__option(RP_OPTION_WARMUP).count,
        .max_variants = (unsigned int)rp__option(RP_OPTION_MAX_VARIANTS).count,
        .max_updates = rp__option(RP_OPTION_MAX_UPDATES).count,
        .min_ops = rp__option(RP_OPTION_MIN_OPS).count,
        .max_ops = rp__option(RP_OPTION_MAX_OPS).count,
        .max_held = rp__option(RP_OPTION_MAX_HELD).count,
        .patience = rp__option(RP_OPTION_PATIENCE).count,
        .idle_us = (unsigned int)rp__option(RP_OPTION_IDLE_US).count,
        .max_graphs = rp__option(RP_OPTION_MAX_GRAPHS).count,
        .max_staging = rp__option(RP_OPTION_MAX_STAGING).count,
        .max_seq_bytes = rp__option(RP_OPTION_MAX_SEQ_BYTES).count,
        .table_size = rp__option(RP_OPTION_TABLE).count,
    };
    rp__cost_parse(rp__option(RP_OPTION_COSTS).path, &cfg);
    return rp__engine_install(core, real, &cfg);
}
