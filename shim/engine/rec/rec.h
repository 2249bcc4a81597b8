/* rec.h - the recorder layer of the engine: op records from the program's
 * calls (recorder.c: a kernel's parameter layout, its bytes packed, the
 * CUkernel handles the program obtained) and their re-issue, and what the
 * engine knows of the program's events (events.c). Below it: the engine's
 * records (engine.h), the model, the core. */
#ifndef REPRISE_REC_H
#define REPRISE_REC_H

#include "engine.h"

/* ---- recorder.c ------------------------------------------------------------- */
/* Remember that `k` is a CUkernel (from cuLibraryGetKernel). */
void rp__rec_note_kernel(CUkernel k);
/* Fill `op` for a kernel launch (`cfg`: cuLaunchKernelEx's, for its
 * attributes; NULL for cuLaunchKernel); the parameter bytes go to `op->params`
 * (the caller owns the record). Returns 0, or -1 with *why set when the
 * launch cannot be recorded (op untouched). */
int rp__rec_kernel(rp_ctxstate *cs, rp_op *op, CUfunction f, const unsigned int grid[3],
                   const unsigned int block[3], unsigned int shmem, void **kernelParams,
                   void **extra, const CUlaunchConfig *cfg, enum rp__eager_reason *why);
/* The kernelParams array of a kernel record: ptrs[i] points at parameter i
 * in its packed bytes; *kp is ptrs, or NULL for a kernel without parameters.
 * Returns 0, or -1 if the kernel's layout is unknown. */
int rp__rec_param_ptrs(rp_ctxstate *cs, const rp_op *op, void **ptrs, void ***kp);
/* Re-issue a record exactly as the program issued it: the same entry
 * point (sync or async form, _ptsz/_ptds variant), on its own stream. */
CUresult rp__rec_issue_as_called(rp_ctxstate *cs, const rp_op *op);
/* Issue a copy, memset or event record through the entry the program
 * called (op->entry) on op->stream. */
CUresult rp__rec_issue_entry(const rp_op *op);
/* Re-issue a record on `stream` (async form; a capture window, or the
 * private stream): a kernel without the launch attributes a graph leaves
 * out (rp__attr_left_out_of_graphs), each one that asked for programmatic
 * stream serialization counted; a staged host-to-device copy reads
 * `staged`. Returns the driver's result. */
CUresult rp__rec_issue(rp_ctxstate *cs, const rp_op *op, CUstream stream, const void *staged);
/* The parameter layout of a kernel record (NULL for other kinds, or if it
 * cannot be read). Valid until rp__rec_reset of the context. */
const rp_param_layout *rp__rec_layout(rp_ctxstate *cs, const rp_op *op);
/* The layout of function `f` when the context has read it already, and
 * its launches are recorded (readable, not excluded); *kernel says whether
 * `f` is a CUkernel (a record's RP_OPF_KERNEL_HANDLE). NULL otherwise: no
 * driver call, nothing added. */
const rp_param_layout *rp__rec_layout_known(rp_ctxstate *cs, CUfunction f, int *kernel);
/* The kernel name of a record ("" if unknown); for stats. */
const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op);
/* Is `host` pinned (page-locked, registered) memory the driver knows? */
int rp__rec_is_pinned(const void *host);
/* Whether [p, p + n) lies inside one live device allocation (1), as the
 * driver requires of a copy's or a memset's device operand at the call;
 * 0 for anything else, a failed query included. Two driver queries. */
int rp__rec_device_range_ok(CUdeviceptr p, size_t n);
/* Whether kernel `want`'s function (a CUfunction, or a CUkernel's function
 * in the current context) accepts geometry `g` (7 words, within
 * rp__geometry_valid's limits) at a launch: at most as many threads and as
 * much dynamic shared memory as `launched` (a launch of that function the
 * driver accepted; NULL: none known, as for a function a sequence switched
 * to), or, beyond, no more than the function's own limits
 * (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, asked once a function: it
 * never changes; _MAX_DYNAMIC_SHARED_SIZE_BYTES, asked each time dynamic
 * shared memory beyond what was launched is asked for, since the program
 * may change it: "If the user-specified dynamic shared memory size is
 * larger than this value, the launch will fail"). 0 when they cannot be
 * asked (a driver without the entry, a failed query). */
int rp__rec_launch_fits(rp_ctxstate *cs, const rp_op *want, const rp_op *launched,
                        const unsigned int *g);
/* Forget the context's parameter layouts (their handles may be reused). */
void rp__rec_reset(rp_ctxstate *cs);
/* Forget every CUkernel handle (the engine's reset, for tests). */
void rp__rec_forget_kernels(void);

/* ---- events.c: the program's events --------------------------------------- */
void rp__ev_created(CUevent e, unsigned int flags, CUcontext ctx);
void rp__ev_destroyed(CUevent e);
/* 1 and *out when the event is known (created through the engine). */
int rp__ev_get(CUevent e, rp_evinfo *out);
/* The trace of `home` (in `cs`, locked) records or waits on `e` now: 1, or
 * 0 (nothing changed) when the event is held by another context's trace,
 * which must be settled first (from outside this context's lock). */
int rp__ev_touched(CUevent e, rp_ctxstate *cs, rp_stream *home);
/* The trace `i` names has ended (or was never live): the event is held by
 * none, unless another trace took it meanwhile. */
void rp__ev_settled(CUevent e, const rp_evinfo *i);
/* One more query of `e` answered "not ready" for a record held by a trace:
 * how many in a row so far (before this one). A record of it starts the
 * count again. */
unsigned int rp__ev_polled(CUevent e);
/* A fork/join replay on `home` recorded `e` again after its graph. */
void rp__ev_rerecorded(CUevent e, uint64_t gen, CUstream home);
/* Forget every event (the engine's reset, for tests). */
void rp__ev_forget_all(void);
/* 1 when `i` names a live trace of `cs` (cs locked). */
static inline int rp__ev_live_in(const rp_evinfo *i, const rp_ctxstate *cs)
{
    return i->live_cs == cs && i->live_home && i->live_home->used &&
           i->live_home->trace.epoch == i->live_epoch;
}

#endif
