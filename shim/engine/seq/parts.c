/* parts.c - an executable run for a part of an occurrence: the nodes of
 * the part's ops enabled and the others' disabled (cuGraphNodeSetEnabled),
 * as rp__seq_replay (replay.c) and a capture that reuses an executable
 * (capture.c) ask; and whether a sequence's executable can be run so.
 * Runs under the context's lock. */
#include "seq.h"

size_t rp__exec_toggles(const rp_seq *s, size_t lo, size_t hi)
{
    size_t n = s->det->n, a = s->ex.on.head, b = n - s->ex.on.tail, t = 0;
    if (a == lo && b == hi)
        return 0;
    for (size_t i = 0; i < n; i++)
        t += (i >= lo && i < hi) != (i >= a && i < b);
    return t;
}

CUresult rp__exec_range(rp_seq *s, size_t lo, size_t hi)
{
    rp_ctxstate *cs = s->cs;
    size_t n = s->det->n, a = s->ex.on.head, b = n - s->ex.on.tail;
    if (a == lo && b == hi)
        return CUDA_SUCCESS;
    if (!s->ex.nodes || !rp__eng.drv->cuGraphNodeSetEnabled)
        return CUDA_ERROR_NOT_SUPPORTED; /* never asked: rp__exec_parts said no */
    for (size_t i = 0; i < n; i++) {
        int want = i >= lo && i < hi, have = i >= a && i < b;
        /* An event op has no node, or a wait node (set, not toggled:
         * rp__fj_before_part). */
        if (want == have || rp__op_is_event(s->det->ops[i].kind))
            continue;
        CUresult rc = s->ex.nodes[i]
                          ? rp__eng.drv->cuGraphNodeSetEnabled(s->exec, s->ex.nodes[i], want)
                          : CUDA_ERROR_INVALID_VALUE;
        if (rc != CUDA_SUCCESS) {
            /* The executable now runs a mix no occurrence asks for: it is
             * never launched again (the caller issues the ops eagerly). */
            s->broken = 1;
            return rc;
        }
        cs->counters.node_toggles++;
    }
    s->ex.on.head = (uint32_t)lo;
    s->ex.on.tail = (uint32_t)(n - hi);
    return CUDA_SUCCESS;
}

int rp__exec_parts(const rp_seq *s)
{
    return rp__eng.cfg.parts && rp__eng.drv->cuGraphNodeSetEnabled && s->ex.nodes && s->exec &&
           !s->broken && (!s->fj.nhwait || rp__eng.drv->cuGraphExecEventWaitNodeSetEvent);
}

size_t rp__exec_part_limit(const rp_seq *s)
{
    size_t n = s->det->n, k = 0;
    if (!s->fj.nside)
        return n;
    while (k < n && s->det->ops[k].stream == s->home && !rp__op_is_event(s->det->ops[k].kind))
        k++;
    return k;
}
