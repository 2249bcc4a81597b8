/* replay.c - a sequence's replay: one graph launch in place of its
 * deferred ops (DESIGN.md §1, §2): the staging its graph reads refilled
 * once the previous launch has read it, its volatile nodes brought to the
 * occurrence's values (exec.c), a fork/join one only once what its ops
 * depended on is done, and its streams and events left as the step left
 * them (forkjoin.c). The matcher decides what to replay; what follows a
 * replay for learning is the coordinator's. Runs under the context's lock. */
#include "seq.h"

#include <string.h>

const char *const rp__replay_step_names[] = {
    [RP_STEP_LAUNCH] = "graph launch",
    [RP_STEP_WAIT] = "asking about the previous launch",
    [RP_STEP_UPDATE] = "graph node update",
    [RP_STEP_ORDER] = "asking whether its other streams are idle",
    [RP_STEP_STAGING] = "the previous launch still reading its staging",
    [RP_STEP_ENABLE] = "enabling or disabling graph nodes for a part",
};

CUresult rp__seq_replay(rp_stream *st, rp_seq *s, CUstream target, const rp_vals *v,
                        size_t lo, size_t hi, uint64_t gen, enum rp_replay_step *what,
                        CUresult *after_err)
{
    const struct rp__driver *D = rp__eng.drv;
    rp_ctxstate *cs = st->cs;
    *what = RP_STEP_LAUNCH;
    size_t n = s->det->n;
    int whole = !lo && hi == n;
    if (NEVER(!whole && (!rp__exec_parts(s) || (hi < n && hi > rp__exec_part_limit(s)))))
        return CUDA_ERROR_NOT_SUPPORTED; /* rp__match_part asks rp__exec_parts first */
    if (s->fj.multi) { /* first: nothing below is done for a replay not made */
        CUresult rc = rp__fj_ready(st, s, v, target, gen,
                                   whole ? RP_FJ_WHOLE : hi < n ? RP_FJ_HEAD : RP_FJ_TAIL);
        if (rc != CUDA_SUCCESS) {
            *what = RP_STEP_ORDER;
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
                *what = rc == CUDA_ERROR_NOT_READY ? RP_STEP_STAGING : RP_STEP_WAIT;
                return rc;
            }
            s->done_pending = 0;
        }
        /* Staged copies are recorded, never borrowed: their records hold
         * the bytes. */
        for (size_t i = lo; i < hi; i++)
            if (s->stage_of[i] != SIZE_MAX)
                memcpy(s->sealed.staging[s->stage_of[i]].ptr, v->def[i].data, v->def[i].bytes);
    }
    /* An exact sequence whose nodes are all enabled (the steady state of a
     * loop) has nothing to prepare. */
    if (s->vmask || !whole || s->ex.on.head || s->ex.on.tail) {
        CUresult rc = rp__exec_prepare(s, v, lo, hi);
        if (rc != CUDA_SUCCESS) {
            *what = RP_STEP_UPDATE;
            return rc;
        }
        rc = rp__exec_range(s, lo, hi);
        if (rc != CUDA_SUCCESS) {
            *what = RP_STEP_ENABLE;
            return rc;
        }
    }
    if (s->fj.nhwait) {
        CUresult rc = hi == n ? rp__fj_before(s, v) : rp__fj_before_part(s, v, hi);
        if (rc != CUDA_SUCCESS) {
            *what = RP_STEP_UPDATE;
            return rc;
        }
    }
    /* One graph launch of a whole occurrence in 8 is timed for the cost
     * model. */
    uint64_t t0 = whole && rp__eng.cfg.cost.model && !(s->replays & 7) ? rp__cost_now() : 0;
    CUresult rc = (s->det->ops[0].flags & RP_OPF_PTSZ) && target == st->handle
                      ? D->cuGraphLaunch_ptsz(s->exec, target)
                      : D->cuGraphLaunch(s->exec, target);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (t0)
        rp__cost_note(cs, RP_COST_LAUNCH, rp__cost_now() - t0, 1);
    /* Right after the graph, before a fork/join step's shadow: the home
     * stream's last op must be the step's last (a program that synchronizes
     * its last event and asks whether the stream is idle hears yes, as
     * eagerly; a fuzzed program found the done record queued after it). */
    if (s->sealed.nstaging && D->cuEventRecord(s->done, target) == CUDA_SUCCESS)
        s->done_pending = 1;
    if (s->fj.multi && hi == n) {
        /* The graph ran: an error here is the program's to see, not a
         * reason to run the ops again. (A part before the end ran home
         * nodes only: the side streams and events are the rest's.) */
        CUresult arc = rp__fj_after(st, s, v, target, gen + 1);
        if (arc != CUDA_SUCCESS)
            *after_err = arc;
    }
    cs->counters.ops_replayed += hi - lo;
    if (!whole)
        cs->counters.part_launches++;
    if (hi == n) { /* the occurrence's last part, or all of it */
        s->replays++;
        s->ex.too_many = 0;
        cs->counters.replays++;
    }
    return CUDA_SUCCESS;
}
