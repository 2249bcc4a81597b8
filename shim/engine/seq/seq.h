/* seq.h - the sequence layer of the engine: a sequence is a segment with an
 * executable graph. The table of a context's sequences (seqs.c), capture
 * windows that make them (capture.c, under the lifecycle rules of
 * model/lifecycle.c), their executables and the updates that bring one to
 * an occurrence's values (exec.c), their replay (replay.c), and what
 * fork/join sequences need besides (forkjoin.c). Above it: learning and
 * matching, which decide when to capture and what to replay; below it: the
 * recorder, the engine's records, the model, the core. */
#ifndef REPRISE_SEQ_H
#define REPRISE_SEQ_H

#include "rec.h"

/* ---- seqs.c: the table and the report lines ------------------------------- */

/* Add a sequence to its context's list, which owns it from then on.
 * Returns 0, or -1 when the list cannot grow: `s` is destroyed (its caller
 * must not touch it) and its ops stay eager. */
int rp__seqs_add(rp_ctxstate *cs, rp_seq *s);
/* Take sequence number `i` out of its context's list (the caller destroys
 * it); a stream's hint of any sequence is void from then on. */
rp_seq *rp__seqs_remove(rp_ctxstate *cs, size_t i);
/* The report line of sequence `s` (cs locked). */
void rp__seq_info(const rp_seq *s, struct rp__seq_info *o);
/* Keep the report line of a sequence whose graph is being dropped. */
void rp__seq_retire(const rp_seq *s);

/* ---- capture.c: capture windows ---------------------------------------------- */

/* Capture detector entry `e` into a new sequence (with volatile fields
 * `vmask`, or NULL for an exact-content one). Returns it, or NULL (the
 * reason counted and logged once). `reuse`, when not NULL, is a sequence
 * whose executable may be updated to the new graph (cuGraphExecUpdate_v2)
 * instead of instantiating a new one; on success its executable moves to
 * the new sequence (reuse->exec becomes NULL), with the graph it was
 * instantiated from and that graph's node handles (see `origin`), and the
 * caller drops `reuse`. `home` is the stream whose trace `e` was learnt
 * on: the sequence is replayed there; its ops on other streams and its
 * event ops make it a fork/join sequence, captured with private side
 * streams and events (never taking an executable over, nor taken over). */
rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse,
                    CUstream home);
/* Destroy a sequence. Nothing here waits: its last launch may sit behind a
 * wait the host releases later; the staging that launch reads goes to the
 * pool (model/lifecycle.c), busy until it has been read. */
void rp__seq_destroy(rp_seq *s);
/* The context's private stream, created on first use (NULL if it cannot be). */
CUstream rp__private_stream(rp_ctxstate *cs);
/* The lifecycle's view of a driver table. */
void rp__lc_driver_from(rp_lc_driver *lc, const struct rp__driver *drv);

/* Another executable of the graph of `s` (a sequence choosing among
 * executables: exec.c), instantiated and uploaded in its context, with the
 * values it holds (*held); NULL (and *held NULL) when it cannot be made. */
CUgraphExec rp__exec_alt(rp_seq *s, rp_op **held);

/* ---- exec.c: executables and updates ------------------------------------------ */

/* An occurrence's deferred values, as the matcher holds them: its records
 * (`def`, those written down), and the ops of `borrowed` from op `from` on,
 * deferred by the fast path (launches, and memsets and device-to-device
 * copies joining them) with their values in `arena`. */
typedef struct rp_vals {
    const rp_op *def;
    const rp_seq *borrowed;
    size_t from;
    const uint8_t *arena;
    /* The records among the borrowed ones, a bit each (NULL: none;
     * rp_stream.match.ownbits). */
    const uint64_t *own;
} rp_vals;
/* Whether op k of the occurrence is one the fast path deferred unwritten
 * (its values the borrowed sequence's op and the arena's), not a record;
 * `own` is v->own, passed apart so that a caller that knows it NULL
 * (exec.c) has the test of its bit left out. */
static inline int rp__vals_own(const uint64_t *own, size_t k)
{
    return own && k < RP_OWN_SPAN && (own[k / 64] >> (k % 64) & 1);
}
static inline int rp__vals_borrowed(const rp_vals *v, const uint64_t *own, size_t k)
{
    return v->borrowed && k >= v->from && !rp__vals_own(own, k);
}
/* A memset's or a copy's values in the arena, at its op's place
 * (RP_ARENA_GEOMETRY bytes): its device operands, size, and a memset's
 * value or a device-to-host copy's (pinned) destination. `d` has its kind. */
static inline void rp__arena_put_words(uint8_t *a, CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                       uint64_t last)
{
    uint64_t w[4] = {dst, src, bytes, last};
    memcpy(a, w, sizeof w);
}
static inline void rp__arena_put_other(uint8_t *a, const rp_op *op)
{
    rp__arena_put_words(a, op->dst, op->src, op->bytes,
                        op->kind == RP_OP_DTOH ? (uint64_t)(uintptr_t)op->host : op->value);
}
static inline void rp__arena_get_other(const uint8_t *a, rp_op *d)
{
    uint64_t w[4];
    memcpy(w, a, sizeof w);
    d->dst = w[0];
    d->src = w[1];
    d->bytes = (size_t)w[2];
    if (d->kind == RP_OP_DTOH)
        d->host = (void *)(uintptr_t)w[3];
    else
        d->value = (unsigned int)w[3];
}
/* Before a launch of ops [lo, hi) of a sequence (all of them, 0 and n, but
 * for a part of an occurrence: rp__match_part): for one with volatile
 * fields, run it on the executable that holds its content already, or one
 * made for a content that comes back (only once every value is known: hi
 * == n; a part before runs on the one that holds most of its values), and
 * update the nodes of [lo, hi) whose values differ. Returns CUDA_SUCCESS,
 * CUDA_ERROR_NOT_READY when more updates would be needed than pay (nothing
 * changed), or the driver's error (the executable may then hold a mix: the
 * caller drops the sequence). */
CUresult rp__exec_prepare(rp_seq *s, const rp_vals *v, size_t lo, size_t hi);

/* ---- parts.c: an executable run for a part ---------------------------------- */
/* Nodes: how many must be enabled or disabled for `exec` to run ops
 * [lo, hi) only (rp_seq.ex.on); and doing it (cuGraphNodeSetEnabled: a
 * disabled node runs as an empty one, for the launches made after). Returns
 * CUDA_SUCCESS, or the driver's error: the executable is then a mix, the
 * sequence broken (never launched again). */
size_t rp__exec_toggles(const rp_seq *s, size_t lo, size_t hi);
CUresult rp__exec_range(rp_seq *s, size_t lo, size_t hi);
/* Whether parts of `s` can be launched: the driver enables and disables
 * nodes and every op's node is known. */
int rp__exec_parts(const rp_seq *s);
/* How many of `s`'s first ops a part may end at most: all of them (n) for
 * one stream (its event ops included: a record stays held, so that a call
 * naming its event resolves the occurrence first, and is made again after
 * the last part; a wait on an outside event is its node, set for the part
 * that holds it); for a fork/join sequence over several streams, its first
 * ops on its home stream before any event op or op of another stream (a
 * part of it runs only home-stream nodes: its side streams, events and
 * waits stay the rest's). */
size_t rp__exec_part_limit(const rp_seq *s);

/* ---- versions.c: the values an op has taken ------------------------------- */
/* The count that numbers values no other has (held.h, ver_hash: the hash
 * of a content with a kernel of no version), one per thread. */
extern RP_TLS uint64_t rp__ver_none;

/* A kernel whose parameter block is at most this many bytes is compared
 * and hashed as it is, not by version (exec.c). */
#define RP_VER_SMALL 64

/* Make the tables (a sequence with updates, before its first replay):
 * 0, or -1 when memory runs out (nothing made). */
int rp__ver_init(rp_seq *s);
/* The number of the version of op k whose values are these: the function
 * and parameter size of `f`, the geometry `g` (7 unsigned ints), the
 * parameter block `p`; a new one if none is equal (seen at the sequence's
 * clock, ex.vclock). Never 0, but when memory runs out or every version
 * must be kept (then the values equal none: updated). */
uint64_t rp__ver_of(rp_seq *s, size_t k, const rp_op *f, const unsigned int *g,
                    const uint8_t *p);
struct rp_vol;
/* rp__ver_of for entry `e` of the sequence's list (scan_full), at the
 * sequence's clock, noting in e->again whether the values were found
 * again the clock after they were last seen (a value kept from step to
 * step) or the one after that (two buffers taking turns, once both came
 * back: e->half); where it says so, rp__ver_again instead, which looks
 * first in the slot found so many clocks ago: the same answer, compared
 * in full, without the hash. */
uint64_t rp__ver_find(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                      const uint8_t *p);
uint64_t rp__ver_again(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                       const uint8_t *p);
/* Free the tables (the sequence's destruction). */
void rp__ver_free(rp_seq *s);

/* The ops of a sequence with updates whose mask is not empty, in order, and
 * how each one's values are told apart (exec.c): the loops of a replay's
 * preparation go over these alone; with its counts of kernels and of
 * kernels whose function is volatile (the matcher's widening). Made again
 * when the mask grew (ex.widened): rp__seq_vols. */
enum rp_vol_how {
    RP_VOL_OTHER = 0, /* a memset or copy: its operands */
    RP_VOL_SMALL = 1, /* a kernel with a small block (RP_VER_SMALL): its bytes */
    RP_VOL_VER = 2,   /* a kernel told by the version of its values */
    /* A kernel told by version whose values were new at more than
     * RP_SEQ_RECENT lookups in a row (rp_vol.fresh; a decoder's, whose
     * activations move at every step): taken to stay new, none is looked
     * up; its bytes are compared with what the executable holds, as
     * RP_VOL_SMALL's, and its version is none (0: a content no other
     * has). Told by version again once a value comes back: the one the
     * executable holds, or one that a lookup made every RP_SEQ_RECENT
     * clocks finds (rp__fresh_lookup, versions.c). A rotation of up to
     * RP_SEQ_RECENT buffers never goes so; one that begins after a run of
     * new values is found late (docs/engine.md). */
    RP_VOL_FRESH = 3,
};
struct rp_vols {
    uint64_t widened; /* ex.widened when made */
    uint32_t nkernels, nfunc; /* its kernels; those whose mask has RP_VOL_FUNC */
    size_t n;
    struct rp_vol {
        uint32_t k;
        uint8_t how;         /* enum rp_vol_how */
        uint8_t fresh;       /* RP_VOL_VER: lookups in a row that made a version */
        uint8_t again, half; /* RP_VOL_VER: rp__ver_find's notes (0: none) */
        uint32_t at; /* RP_VOL_FRESH: the word its values last differed in from the held ones */
        /* RP_VOL_SMALL: what a content's hash covers of it (held.h,
         * small_hash): the 8-byte words of its block that hold a volatile
         * parameter (bit w: bytes 8w to 8w+7, the last one's as many as
         * there are), and its geometry when a geometry field is volatile.
         * The rest is the sequence's own in every content (its op matched
         * it exactly) and would add nothing. */
        uint8_t hwords, hgeom;
        /* A kernel's node update (exec.c, update_kernel): the node's
         * parameters as the driver takes them, its own function's (np),
         * naming its arguments by pointer (np->kernelParams, the `n`
         * pointers after np: its layout's) into the block at `pbase` (the
         * stream's arena, every replay's), made at the first update from
         * that block; then an update from it changes only the geometry.
         * NULL `pbase`: not made yet; NULL `np`: made at each update. */
        const uint8_t *pbase;
        CUDA_KERNEL_NODE_PARAMS_v2 *np;
    } e[];
};

/* ---- versions.c: values that stay new (RP_VOL_FRESH) ---------------------------- */

/* small_held (held.h) for entry `e` (RP_VOL_FRESH), whose values differ
 * from the held record `h`'s at nearly every replay, most often in the
 * same word (an activation's address, deep in a large block): that word
 * is compared first, and noted again where they differ elsewhere. 1 when
 * the values (`f`'s function, geometry `g`, block `p`) are the held ones. */
static inline int rp__fresh_same(struct rp_vol *e, const rp_op *h, const rp_op *f,
                                 const unsigned int *g, const uint8_t *p)
{
    if (rp__op_other_func(h, f) || !rp__geometry_same(h->grid, g))
        return 0;
    size_t n = h->param_bytes, at = e->at;
    if (at + 8 <= n) {
        uint64_t x, y;
        memcpy(&x, h->params + at, 8), memcpy(&y, p + at, 8);
        if (x != y)
            return 0;
    }
    size_t d = rp__bytes_differ_at(h->params, p, n);
    if (d == n)
        return 1;
    e->at = (uint32_t)d;
    return 0;
}

_Static_assert((RP_SEQ_RECENT & (RP_SEQ_RECENT - 1)) == 0, "a clock in RP_SEQ_RECENT: one mask");
/* Whether RP_VOL_FRESH entries are looked up at this replay anyway: at one
 * of every RP_SEQ_RECENT clocks. */
static inline int rp__fresh_clock(const rp_seq *s)
{
    return !(s->ex.vclock & (RP_SEQ_RECENT - 1));
}

/* Entry `e` (RP_VOL_FRESH) looked up by version (its values made one if
 * new): a value that came back (found), or one equal to the held values
 * (`same`), makes it RP_VOL_VER again, with the occurrence's version as
 * its number (the executable's is found when next asked for: held.h,
 * held_ver); a new one leaves it as it was (version 0). */
void rp__fresh_lookup(rp_seq *s, struct rp_vol *e, const rp_op *f, const unsigned int *g,
                      const uint8_t *p, int same);

/* The list of `s` (a sequence with updates), made again if its mask grew
 * since; NULL when memory runs out. */
const struct rp_vols *rp__seq_vols(rp_seq *s);

/* ---- seqs.c: forms --------------------------------------------------------------- */

/* The bit of rp_ctxstate.first_kernel_bits that stands for kernel `f`. */
static inline uint64_t rp__kernel_bit(CUfunction f)
{
    return 1ull << ((uint64_t)(uintptr_t)f * 0x9e3779b97f4a7c15ull >> 58);
}
/* 1 when op k of `s` may be a launch of `f`: its own function, or a form
 * it was seen with where its function is volatile (rp_seq.forms). */
static inline int rp__seq_form_known(const rp_seq *s, size_t k, CUfunction f)
{
    if (s->det->ops[k].func == f)
        return 1;
    for (unsigned int i = 0; i < s->nforms; i++)
        if (s->forms[i].k == k && s->forms[i].f == f)
            return 1;
    return 0;
}
/* Add `f` to the forms of op k of `s` (its function volatile). Returns 0,
 * or -1 when its table is full (nothing changed). */
int rp__seq_add_form(rp_seq *s, size_t k, CUfunction f);

/* ---- replay.c ------------------------------------------------------------------ */

/* What a replay that was not made failed at. */
enum rp_replay_step { RP_STEP_LAUNCH, RP_STEP_WAIT, RP_STEP_UPDATE, RP_STEP_ORDER,
                      RP_STEP_STAGING, RP_STEP_ENABLE };
extern const char *const rp__replay_step_names[];
/* Launch ops [lo, hi) of `s` on `target` in place of its ops deferred on
 * `st` (values `v`; 0 and n: a replay, the whole occurrence; else a part of
 * it, the graph with the other ops' nodes disabled, which rp__exec_parts
 * allows): its staging refilled once the previous launch has read it, its
 * volatile nodes updated, a fork/join one only once what its ops depend on
 * is done. Returns CUDA_SUCCESS, or why nothing was launched (*what: the
 * step; CUDA_ERROR_NOT_READY for a launch not made now: busy streams,
 * staging still read, too many updates). *after_err: an error of the
 * bookkeeping after a launch that ran (the program's to see). `gen`:
 * rp__issued when the resolution began. */
CUresult rp__seq_replay(rp_stream *st, rp_seq *s, CUstream target, const rp_vals *v,
                        size_t lo, size_t hi, uint64_t gen, enum rp_replay_step *what,
                        CUresult *after_err);

/* ---- forkjoin.c ------------------------------------------------------------------ */

/* Whether the `n` ops at `ops`, taken from op `start` on (and round), are a
 * rooted fork/join step (rp_seq.fj.rooted): ops on another stream than
 * `home`, the first event record on `home`, and every other stream's first
 * op a wait on an event recorded before it in the step. */
int rp__ops_rooted(const rp_op *ops, size_t n, size_t start, CUstream home);
/* How a sequence's ops map onto a capture: op i runs on private stream
 * `on[i]` (0: the context's private stream, standing for the sequence's
 * home; i > 0: fj.side[i - 1]), and an event op names private event
 * `evx[i]` (fj.ev[...], standing for the program's event), or none
 * (SIZE_MAX) for a wait on an event recorded outside the sequence: the
 * capture leaves it out, and the replay requires it before. */
typedef struct rp_fj_plan {
    unsigned char *on;
    size_t *evx;
    uint32_t prog_role[RP_FJ_EVENTS]; /* the program's events (roles), by private index */
    size_t nev;
} rp_fj_plan;
/* Map the sequence's streams and events; note on `s` what its replays need
 * (other streams, the event ops of its shadow, events to wait on). Returns
 * 0, 1 when it runs on more streams or records more events than the
 * private ones (a bound), or -1 when memory runs out. */
int rp__fj_plan(rp_seq *s, const rp_det_entry *e, rp_fj_plan *p);
void rp__fj_plan_free(rp_fj_plan *p);
/* The private streams and events the capture and replays of `s` use,
 * created before the window (nothing is created inside it). */
CUresult rp__fj_prepare(rp_ctxstate *cs, const rp_seq *s, size_t nev);
/* Destroy the context's fork/join streams and events (its teardown). */
void rp__fj_release(rp_ctxstate *cs);
/* The private stream op i runs on in the window. */
CUstream rp__fj_window_stream(rp_ctxstate *cs, const rp_fj_plan *p, size_t i);
/* In the window: every private side stream joins the capture right after
 * it begins (rp__fj_fork), and joins the private stream back before it ends
 * (rp__fj_join); an event op becomes the private event's (rp__fj_event_op). */
CUresult rp__fj_fork(rp_ctxstate *cs, const rp_seq *s);
CUresult rp__fj_join(rp_ctxstate *cs, const rp_seq *s);
CUresult rp__fj_event_op(rp_ctxstate *cs, const rp_op *op, CUstream on, size_t evx);
/* Before a fork/join replay on `target`: CUDA_SUCCESS when what its ops
 * depended on eagerly is done or known to need nothing more (else
 * CUDA_ERROR_NOT_READY, or the driver's error). After it: the streams and
 * events as the step left them (its shadow). `gen` as for rp__seq_replay;
 * rp__fj_after's is what rp__issued will be once the resolution is over. */
/* `part`: RP_FJ_WHOLE, a replay; RP_FJ_HEAD, a part before the end (its
 * nodes the home stream's only: what the home stream's earlier work is,
 * alone, is asked); RP_FJ_TAIL, the rest after such a part (the home
 * stream was asked then, and has had nothing but our launches since: the
 * side streams and outside events are asked). */
enum { RP_FJ_WHOLE, RP_FJ_HEAD, RP_FJ_TAIL };
CUresult rp__fj_ready(rp_stream *st, const rp_seq *s, const rp_vals *v, CUstream target,
                      uint64_t gen, int part);
CUresult rp__fj_after(rp_stream *st, const rp_seq *s, const rp_vals *v, CUstream target,
                      uint64_t gen);
/* Right before its launch: its home stream's wait nodes on outside events
 * (rp_seq.fj.hwait) set to the occurrence's events. Returns the driver's
 * error (nothing launched then; the nodes hold what they were set to). */
CUresult rp__fj_before(rp_seq *s, const rp_vals *v);
/* Before a part of it, ops [.., hi): its wait nodes within the part set to
 * the occurrence's events, those after it to the context's private event
 * that is never recorded (they wait for nothing in this launch; the event
 * they held may be destroyed since). */
CUresult rp__fj_before_part(rp_seq *s, const rp_vals *v, size_t hi);
/* How an event op of a fork/join plan (rp_fj_plan.evx) is issued in the
 * capture window: RP_FJ_OUTSIDE, a wait on an event recorded outside the
 * sequence, left out; RP_FJ_WAIT_NODE, the home stream's such wait, an
 * event wait node on the program's event; else the private event. */
#define RP_FJ_OUTSIDE SIZE_MAX
#define RP_FJ_WAIT_NODE (SIZE_MAX - 1)
/* What a flush of `st`'s trace left last on each of its streams, followed
 * op by op (rp__fj_track), so that the streams it leaves ordered before
 * the home stream's end are known for the next replay (rp__fj_tracked). */
typedef struct rp_fj_tails {
    struct rp_fj_tail {
        CUstream h;
        CUevent rec;        /* its last op recorded this event (the event's latest record) */
        int joined;         /* ... and the home stream waited on it since */
    } t[RP_FJ_STREAMS], home;
    size_t n;
    int on;                 /* 0: too many streams, or a call failed: nothing concluded */
} rp_fj_tails;
/* Stamp stream `x` clean for a fork/join replay on `home` while rp__issued
 * is `gen` (rp_stream.fj), and keep it among those carried over. */
void rp__fj_stamp(rp_ctxstate *cs, rp_stream *x, uint64_t gen, CUstream home);
/* An op issued eagerly, on op->stream; `was`: rp__issued just before that
 * issue counted it (which made it was + 1). A stream stamped clean at
 * `was` other than op's stays clean (nothing reached it); an eager wait on
 * an event whose latest record is the last op of another stream, with
 * nothing issued anywhere but eager ops on other streams since, stamps
 * that stream clean for the waiting one: PyTorch's `wait_stream` between
 * two eager steps, or a join of several side streams, leaves them ordered
 * before the main stream as a flush that ended so does (rp__fj_tracked). */
void rp__fj_eager(rp_ctxstate *cs, const rp_op *op, uint64_t was);
void rp__fj_track_begin(rp_fj_tails *tl, int on);
void rp__fj_track(const rp_stream *st, rp_fj_tails *tl, const rp_op *op);
void rp__fj_tracked(rp_stream *st, const rp_fj_tails *tl, uint64_t gen);

#endif
