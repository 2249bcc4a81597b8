/* test_learn.c - the learner (shim/engine/learn) with a stub in place of
 * the sequence layer: what it asks to capture, when, with which fields
 * volatile, and what it does of a capture that fails; the cut a period
 * makes in a stream without boundaries; rest when learning does not pay.
 * Built from learn/, the engine's records, the model and the core only:
 * the stubs below are everything the learner needs from the layers under
 * it that capture (seq/) and record (rec/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "learn.h"

#define K(n) ((CUfunction)(uintptr_t)(0x100 + (n)))
#define S ((CUstream)0x2000)

/* ---- the stubbed layers below ------------------------------------------------------- */

static struct {
    int captures, fail;
    const uint64_t *vmask;  /* of the last capture (copied) */
    uint64_t mask[8];
    size_t n;
    rp_seq *reuse;          /* the executable the last capture was to take over */
} cap;

rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse,
                    CUstream home)
{
    cap.reuse = reuse;
    cap.captures++;
    cap.n = e->n;
    cap.vmask = vmask;
    for (size_t i = 0; vmask && i < e->n && i < 8; i++)
        cap.mask[i] = vmask[i];
    if (cap.fail)
        return NULL;
    rp_seq *s = calloc(1, sizeof *s);
    s->det = e;
    s->cs = cs;
    s->ctx = cs->ctx;
    s->home = home;
    s->exec = (CUgraphExec)(uintptr_t)0x77;
    s->id = e->id;
    if (reuse) /* its executable moves to the new sequence, as capture.c's take_over does */
        reuse->exec = NULL;
    if (vmask) {
        s->vmask = calloc(e->n, sizeof *s->vmask);
        memcpy(s->vmask, vmask, e->n * sizeof *s->vmask);
    }
    return s;
}

void rp__seq_destroy(rp_seq *s)
{
    if (s)
        free(s->vmask);
    free(s);
}

void rp__seq_retire(const rp_seq *s)
{
    (void)s;
}

int rp__seqs_add(rp_ctxstate *cs, rp_seq *s)
{
    if (cs->nseqs == cs->capseqs) {
        cs->capseqs = cs->capseqs ? 2 * cs->capseqs : 8;
        cs->seqs = realloc(cs->seqs, cs->capseqs * sizeof *cs->seqs);
    }
    cs->seqs[cs->nseqs++] = s;
    return 0;
}

rp_seq *rp__seqs_remove(rp_ctxstate *cs, size_t i)
{
    rp_seq *s = cs->seqs[i];
    cs->seqs[i] = cs->seqs[--cs->nseqs];
    cs->seqs_gone++;
    return s;
}

int rp__seq_add_form(rp_seq *s, size_t k, CUfunction f)
{
    if (rp__seq_form_known(s, k, f))
        return 0;
    if (s->nforms == RP_SEQ_FORMS)
        return -1;
    s->forms[s->nforms++] = (struct rp_form){(uint32_t)k, f};
    return 0;
}

int rp__ops_rooted(const rp_op *ops, size_t n, size_t start, CUstream home)
{
    (void)ops, (void)n, (void)start, (void)home;
    return 0;
}

/* Every kernel takes (u64 pointer, i32 count): 12 bytes. */
static const rp_param_layout layout = {2, 12, {0, 8}, {8, 4}};
const rp_param_layout *rp__rec_layout(rp_ctxstate *cs, const rp_op *op)
{
    (void)cs;
    return op->kind == RP_OP_KERNEL ? &layout : NULL;
}

/* Kernels 5 to 8 have names: two variants of one operation, two unrelated
 * operations. */
const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op)
{
    static const char *const names[] = {"add_i64_vec4", "add_i64_vec2", "axpy", "stencil3"};
    (void)cs;
    uintptr_t k = (uintptr_t)op->func - 0x100;
    return k >= 5 && k <= 8 ? names[k - 5] : "k";
}

_Atomic int rp__nvtx_on = 0;

void rp__nvtx_push_on(const char *fmt, ...)
{
    (void)fmt;
}

void rp__nvtx_pop_on(void) {}

/* ---- the learner's world: one context, one stream ------------------------------------- */

static rp_ctxstate cs;
static rp_stream st;
static rp_lc_driver lc_drv;

static int setup(void **state)
{
    (void)state;
    memset(&cap, 0, sizeof cap);
    memset(&cs, 0, sizeof cs);
    memset(&st, 0, sizeof st);
    rp__eng.cfg = (struct rp__engine_config){.warmup = 2, .max_variants = 4, .min_ops = 2,
                                             .max_ops = 4096, .max_held = 64, .max_graphs = 256,
                                             .max_staging = 1u << 20, .max_seq_bytes = 1u << 20,
                                             .table_size = 64, .patience = 0,
                                             .cost = {.max_updates = 64}};
    cs.ctx = (CUcontext)0x10100;
    assert_int_equal(rp__det_init(&cs.det, 64, 2, 2, 4096), 0);
    assert_int_equal(rp__det_init(&cs.sdet, 64, 2, 2, 4096), 0);
    rp__det_by_structure(&cs.sdet, 4);
    pthread_rwlock_init(&cs.gate, NULL);
    rp__lc_ctx_init(&cs.lc, &lc_drv);
    st.used = 1;
    st.cs = &cs;
    st.handle = S;
    st.ctx = cs.ctx;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rp__learn_forget_seqs(&cs);
    rp__learn_stream_free(&st);
    rp__det_fini(&cs.det);
    rp__det_fini(&cs.sdet);
    free(cs.seqs);
    pthread_rwlock_destroy(&cs.gate);
    return 0;
}

/* A launch of kernel k with `count` as its second argument, as the
 * coordinator hands an eager op to learning: positioned, then appended
 * (`why`: RP_EAGER_DIVERGED for an op deferred, then flushed). */
static void eager_as(int k, int32_t count, enum rp__eager_reason why)
{
    rp_op op;
    memset(&op, 0, sizeof op);
    op.kind = RP_OP_KERNEL;
    op.ctx = cs.ctx;
    op.stream = S;
    op.entry = RP_E_cuLaunchKernel;
    op.func = K(k);
    op.fid = (uint16_t)(k + 1); /* as the recorder and the coordinator number them */
    op.sid = 1;
    op.grid[0] = op.grid[1] = op.grid[2] = 1;
    op.block[0] = 32, op.block[1] = op.block[2] = 1;
    op.param_bytes = 12;
    op.params = rp__params_alloc(12);
    uint64_t p = 0x4000;
    memset(op.params, 0, 12);
    memcpy(op.params, &p, 8);
    memcpy(op.params + 8, &count, 4);
    if (rp__learn_next(&st, &op))
        rp__learn_cut(&st);
    rp__seg_append(&st, &op, why);
}

static void eager(int k, int32_t count)
{
    eager_as(k, count, RP_EAGER_WARMING_UP);
}

/* One segment: kernels k1, k2 with counts c1, c2; its first op deferred
 * and flushed when `diverged` (it matched some sequence's first op). */
static void segment2(int k1, int32_t c1, int k2, int32_t c2, int diverged)
{
    eager_as(k1, c1, diverged ? RP_EAGER_DIVERGED : RP_EAGER_WARMING_UP);
    eager(k2, c2);
    rp__seg_end(&st);
}

/* The detectors with another warmup (setup's are made with 2). */
static void warmup_is(unsigned int w)
{
    rp__eng.cfg.warmup = w;
    rp__det_fini(&cs.det);
    rp__det_fini(&cs.sdet);
    assert_int_equal(rp__det_init(&cs.det, 64, w, 2, 4096), 0);
    assert_int_equal(rp__det_init(&cs.sdet, 64, w, 2, 4096), 0);
    rp__det_by_structure(&cs.sdet, 4);
}

/* A step seen REPRISE_WARMUP times with identical content is worth a graph:
 * without this nothing is ever replayed; with a capture at every
 * occurrence, graphs pile up. */
static void a_segment_seen_warmup_times_is_captured_once_as_an_exact_variant(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        eager(1, 64);
        eager(2, 64);
        rp__seg_end(&st);
    }
    assert_int_equal(cap.captures, 1);
    assert_null(cap.vmask);
    assert_int_equal(cap.n, 2);
    assert_int_equal(cs.nseqs, 1);
    assert_int_equal(cs.counters.graphs_captured, 1);
}

/* A structure whose contents keep changing (a counter) is captured once,
 * with the field that changed volatile, not as one variant per content. */
static void contents_that_keep_changing_are_captured_with_the_changing_field_volatile(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        eager(1, 64 + i);
        eager(2, 64);
        rp__seg_end(&st);
    }
    assert_int_equal(cap.captures, 1);
    assert_non_null(cap.vmask);
    assert_int_equal(cap.mask[0], 1ull << 1); /* k1's second argument */
    assert_int_equal(cap.mask[1], 0);
    assert_int_equal(cs.counters.volatile_captures, 1);
}

/* A capture that fails must cost a back-off, not a capture attempt at
 * every occurrence (an instantiation is milliseconds on a GPU). */
static void a_failed_capture_backs_its_segment_off(void **state)
{
    (void)state;
    cap.fail = 1;
    for (int i = 0; i < 3; i++) {
        eager(1, 64);
        eager(2, 64);
        rp__seg_end(&st);
    }
    assert_int_equal(cap.captures, 1);
    assert_int_equal(cs.counters.capture_failures, 1);
    assert_true(cs.counters.ops_eager[RP_EAGER_CAPTURE_FAILED] >= 2);
}

/* A segment shorter than REPRISE_MIN_OPS is never worth a graph. */
static void a_segment_shorter_than_min_ops_is_never_captured(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        eager(1, 64);
        rp__seg_end(&st);
    }
    assert_int_equal(cap.captures, 0);
    assert_int_equal(cs.counters.ops_eager[RP_EAGER_SHORT], 4);
}

/* A stream that never synchronizes is cut where its step starts, once its
 * period is found (DESIGN.md §8): the steps are captured without any
 * boundary. */
static void a_stream_without_boundaries_is_cut_at_its_period_and_its_steps_captured(void **state)
{
    (void)state;
    for (int i = 0; i < 60; i++)
        for (int k = 1; k <= 4; k++)
            eager(k, 64 + k);
    assert_true(cs.counters.periods_found >= 1);
    assert_true(cs.counters.period_cuts >= 1);
    assert_true(cap.captures >= 1);
    assert_int_equal(cap.n % 4, 0);
}

/* A host boundary, as the coordinator ends a stream's segment at one. */
static void boundary(void)
{
    rp__learn_boundary(&st);
    st.learn.boundary_opno = st.opno;
    rp__seg_end(&st);
}

/* Ops of the 4-op step k1..k4, at least one, until the next op's position
 * is `phase` ops into a step of the detector (0: a step's start). */
static void eager_until_phase(uint64_t phase)
{
    rp_period *p = st.learn.per;
    static int k = 0;
    do
        eager(1 + k++ % 4, 64);
    while ((st.opno % 4 + 4 - p->base % 4) % 4 != phase);
}

/* A loop that synchronizes every few steps after the same op: once its
 * period is known, its steps start after the boundary (which then cuts no
 * step in two), at once and every time (a boundary that moved, a
 * read-back at another place); one at a step's start changes nothing. If
 * a moved boundary waited to fall at the same op twice, each move would
 * shift the steps for good until then. */
static void host_boundaries_inside_the_step_make_the_steps_start_after_them(void **state)
{
    (void)state;
    for (int i = 0; i < 60; i++)
        for (int k = 1; k <= 4; k++)
            eager(k, 64 + k);
    rp_period *p = st.learn.per;
    assert_non_null(p);
    assert_int_equal(p->d, 4);
    eager_until_phase(2);
    uint64_t at = st.opno;
    assert_false(rp__period_cut_before(p, at, 0));
    boundary(); /* aligned at once */
    assert_true(rp__period_cut_before(p, at, 0));
    assert_true(rp__period_cut_before(p, at + 4, 0));
    eager_until_phase(1);
    at = st.opno;
    assert_false(rp__period_cut_before(p, at, 0));
    boundary(); /* moved: aligned there at once */
    assert_true(rp__period_cut_before(p, at, 0));
    assert_true(rp__period_cut_before(p, at + 8, 0));
    eager_until_phase(0);
    uint64_t base = p->base;
    boundary(); /* at a start: nothing changes */
    assert_int_equal(p->base, base);
}

/* The first period of a stream with a host boundary before it: its steps
 * start after the boundary (a loop begins after its setup's
 * synchronization), whatever op winnowing would have picked. */
static void first_period_after(int setup_ops)
{
    enum { STEP = 17 }; /* an MLP's forward: long enough to be found as a period first */
    for (int i = 0; i < setup_ops; i++)
        eager(99, 64); /* setup: another kernel */
    boundary();
    uint64_t at = st.opno;
    for (int i = 0; i < 20; i++) {
        for (int k = 1; k <= STEP; k++)
            eager(k, 64 + k);
    }
    rp_period *p = st.learn.per;
    assert_non_null(p);
    assert_int_equal(p->step, STEP);
    for (uint64_t q = at + STEP * 30; q < at + STEP * 31; q++)
        assert_int_equal(rp__period_cut_before(p, q, 0), q == at + STEP * 30);
}
static void a_first_period_after_one_setup_op_starts_its_steps_after_the_boundary(void **state)
{
    (void)state;
    first_period_after(1);
}
static void a_first_period_after_two_setup_ops_starts_its_steps_after_the_boundary(void **state)
{
    (void)state;
    first_period_after(2);
}

/* A stream whose learning brings no replay stops paying for it: it rests,
 * its ops unrecorded, and learns again afterwards. */
static void a_stream_whose_learning_never_pays_rests(void **state)
{
    (void)state;
    rp__eng.cfg.patience = 64;
    for (int i = 0; i < 100; i++) {
        eager(1 + i, 64); /* every segment another kernel: nothing repeats */
        eager(200 + i, 64);
        rp__seg_end(&st);
    }
    assert_true(cs.counters.rests >= 1);
    assert_true(cs.counters.ops_eager[RP_EAGER_RESTING] > 0);
    assert_int_equal(cap.captures, 0);
}

/* A stream whose graphs were replaced before they paid off waits longer
 * before its next capture; no capture failed, and the report must not say
 * one did (issue 28: 6-12 ops capture_failed with capture_failures 0). */
static void the_ops_of_a_stream_backing_off_are_not_counted_as_failed_captures(void **state)
{
    (void)state;
    st.learn.churn = 1; /* its captures need warmup x 2 occurrences */
    for (int i = 0; i < 3; i++)
        segment2(1, 64, 2, 64, 0);
    assert_int_equal(cap.captures, 0);
    assert_int_equal(cs.counters.ops_eager[RP_EAGER_BACKING_OFF], 4); /* 2nd, 3rd */
    assert_int_equal(cs.counters.ops_eager[RP_EAGER_CAPTURE_FAILED], 0);
    segment2(1, 64, 2, 64, 0); /* the 4th: captured */
    assert_int_equal(cap.captures, 1);
}

/* With a warmup of 1 every new content is a capture candidate at once, and
 * while the stream backs off such a candidate waits: the sequence with
 * updates of its structure must still be widened to a field that changed,
 * or it diverges on that field for ever (issue 28: REPRISE_WARMUP=1 on a
 * decode loop, 0% replayed). */
static void a_sequence_with_updates_is_widened_while_its_stream_backs_off(void **state)
{
    (void)state;
    warmup_is(1);
    segment2(1, 64, 2, 64, 0); /* an exact variant at once */
    segment2(1, 65, 2, 64, 0); /* a second new content: with updates (k1's count) */
    assert_int_equal(cap.captures, 2);
    assert_non_null(cap.vmask);
    assert_int_equal(cap.mask[0], 1ull << 1);
    assert_int_equal(cap.mask[1], 0);
    st.learn.churn = 2;
    segment2(1, 66, 2, 99, 0); /* k2's count changes too */
    assert_int_equal(cs.counters.widenings, 1);
    rp_seq *v = NULL;
    for (size_t i = 0; i < cs.nseqs; i++)
        if (cs.seqs[i]->vmask)
            v = cs.seqs[i];
    assert_non_null(v);
    assert_int_equal(v->vmask[1], 1ull << 1);
    assert_int_equal(cap.captures, 2);
}

/* Issue 28's counter whose groups repeat within a step: each value is seen
 * twice, so it becomes an exact variant and no run of new contents ever
 * comes. The occurrences that diverge from the variants (flushed, then
 * eager) warmup + 1 times in a row switch the structure to one graph with
 * updates; before, the switch waited for REPRISE_MAX_VARIANTS values,
 * replaying half the occurrences meanwhile. */
static void occurrences_that_keep_diverging_from_exact_variants_switch_to_updates(void **state)
{
    (void)state;
    segment2(1, 64, 2, 1, 0);
    segment2(1, 64, 2, 1, 0); /* an exact variant */
    assert_int_equal(cap.captures, 1);
    assert_null(cap.vmask);
    segment2(1, 64, 2, 2, 1); /* the next value, diverged from it */
    segment2(1, 64, 2, 2, 1); /* seen twice: one more exact variant */
    assert_int_equal(cap.captures, 2);
    assert_null(cap.vmask);
    segment2(1, 64, 2, 3, 1); /* the third in a row: with updates */
    assert_int_equal(cap.captures, 3);
    assert_non_null(cap.vmask);
    assert_int_equal(cap.mask[0], 0);
    assert_int_equal(cap.mask[1], 1ull << 1);
    segment2(1, 64, 2, 3, 1); /* served by it: no exact variant beside */
    assert_int_equal(cap.captures, 3);
}

/* An exact variant that the matcher saw passed over (occurrences left it on
 * its arguments while a sequence with updates went on matching) more than
 * warmup + 1 times since its last replay is no variant any more: dropped,
 * without a back-off of the stream (it paid, or its content moved on). */
static void an_exact_variant_passed_over_again_and_again_is_dropped(void **state)
{
    (void)state;
    segment2(1, 64, 2, 1, 0);
    segment2(1, 64, 2, 1, 0);
    assert_int_equal(cs.nseqs, 1);
    rp_seq *x = cs.seqs[0];
    x->passed_over = rp__eng.cfg.warmup + 1; /* not more: it stays */
    rp__learn_sweep(&cs);
    assert_int_equal(cs.nseqs, 1);
    rp_stream *pst = &st;
    rp__learn_resolved(pst, x, 0, NULL, 0); /* its content came back: replayed */
    assert_int_equal(x->passed_over, 0);
    x->passed_over = rp__eng.cfg.warmup + 2;
    x->pins = 1; /* a stream matches against it: not now */
    rp__learn_sweep(&cs);
    assert_int_equal(cs.nseqs, 1);
    x->pins = 0;
    rp__learn_sweep(&cs);
    assert_int_equal(cs.nseqs, 0);
    assert_int_equal(cs.counters.variants_passed_over, 1);
    assert_int_equal(cs.counters.backoffs, 0);
    assert_int_equal(st.learn.churn, 0);
}

/* A structure that is a sequence with updates with one kernel switched (a
 * decode loop's softmax specialised by length, an elementwise kernel
 * vectorized by alignment) is that sequence's, its kernel's other function
 * a form of its own and a field its node is set to (RP_VOL_FUNC): no new
 * capture, one graph for every form. Learnt from scratch each form cost
 * warmup occurrences eager and a graph of its own. One that differs in more
 * than a quarter of its ops is learnt as any other. */
static void a_sequence_with_updates_whose_kernel_switches_takes_it_as_a_form(void **state)
{
    (void)state;
    for (int32_t i = 0; i < 3; i++)
        segment2(1, 64 + i, 2, 64, 0);
    assert_int_equal(cap.captures, 1);
    assert_int_equal(cap.mask[0], 1ull << 1);
    rp_seq *s = cs.seqs[0];
    segment2(3, 70, 4, 64, 0); /* both kernels other: not its new shape */
    assert_int_equal(cap.captures, 1);
    assert_int_equal(s->nforms, 0);
    segment2(1, 71, 5, 64, 0); /* k2 switched to k5 */
    assert_int_equal(cap.captures, 1);
    assert_int_equal(cs.nseqs, 1);
    assert_true(s->vmask[1] & RP_VOL_FUNC);
    assert_int_equal(s->nforms, 1);
    assert_true(rp__seq_form_known(s, 1, K(5)));
    assert_int_equal(cs.counters.func_forms, 1);
}

/* Where the driver refused a function update (rp__func_fixed), a kernel's
 * function is structure again: the switched shape is captured at once with
 * the sequence's volatile fields, as before function updates; the old
 * shape is kept, it may come back. */
static void with_functions_fixed_a_switched_kernel_is_captured_at_once(void **state)
{
    (void)state;
    atomic_store(&rp__eng.func_fixed, 1);
    for (int32_t i = 0; i < 3; i++)
        segment2(1, 64 + i, 2, 64, 0);
    assert_int_equal(cap.captures, 1);
    segment2(1, 71, 5, 64, 0); /* k2 switched to k5 */
    assert_int_equal(cap.captures, 2);
    assert_non_null(cap.vmask);
    assert_int_equal(cap.mask[0], 1ull << 1);
    assert_int_equal(cap.mask[1], 0);
    assert_null(cap.reuse);
    assert_int_equal(cs.nseqs, 2);
    atomic_store(&rp__eng.func_fixed, 0);
}

/* A shape that changed in its structure (here a kernel's function, with
 * functions structure: rp__func_fixed) may come back (length buckets,
 * phases): kept while the context has room, so that it is replayed at
 * once when it does. At REPRISE_MAX_GRAPHS the least recently used
 * sequence goes anyway: the new shape takes its executable over when it
 * may (an exec update, cheaper than an instantiation), instead of
 * destroying it. */
static void an_old_shape_is_kept_with_room_and_taken_over_at_the_bound(void **state)
{
    (void)state;
    atomic_store(&rp__eng.func_fixed, 1);
    for (int32_t i = 0; i < 3; i++)
        segment2(1, 64 + i, 2, 64, 0);
    segment2(1, 70, 5, 64, 0);
    assert_int_equal(cs.nseqs, 2);
    assert_null(cap.reuse);
    rp_seq *oldest = cs.seqs[0];
    rp__eng.cfg.max_graphs = 2;
    segment2(1, 71, 6, 64, 0); /* a third shape, at the bound */
    assert_int_equal(cap.captures, 3);
    assert_ptr_equal(cap.reuse, oldest);
    assert_int_equal(cs.nseqs, 2);
    assert_int_equal(cs.counters.evictions, 0);
    atomic_store(&rp__eng.func_fixed, 0);
}

/* Two structures of one stream that differ only in one kernel's function,
 * each seen once, count together when the two kernels are variants of one
 * operation by their names (add_i64_vec4, add_i64_vec2: a framework picks
 * one by its pointers' alignment): captured at the second, the first's
 * function its form. Two of unrelated names (axpy, stencil3) are two steps,
 * each with its warmup: a random tail of kernels would otherwise be taken
 * for forms of one step (nosync diverge lost 4 points, nosync late all of
 * its replays, before the names were asked). */
static void structures_that_differ_in_kernels_of_alike_names_count_together(void **state)
{
    (void)state;
    for (int alike = 1; alike >= 0; alike--) {
        int a = alike ? 5 : 7, b = alike ? 6 : 8;
        unsigned int before = cap.captures;
        eager(a, 64), eager(2, 64), eager(2, 64), eager(2, 64);
        rp__seg_end(&st);
        eager(b, 64), eager(2, 64), eager(2, 64), eager(2, 64);
        rp__seg_end(&st);
        assert_int_equal(cap.captures - before, alike ? 1 : 0);
        if (alike) {
            assert_non_null(cap.vmask);
            assert_true(cap.mask[0] & RP_VOL_FUNC);
            assert_int_equal(cs.counters.func_forms, 1);
        }
        rp__learn_forget_seqs(&cs);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(a_segment_seen_warmup_times_is_captured_once_as_an_exact_variant),
        T(contents_that_keep_changing_are_captured_with_the_changing_field_volatile),
        T(a_failed_capture_backs_its_segment_off),
        T(a_segment_shorter_than_min_ops_is_never_captured),
        T(a_stream_without_boundaries_is_cut_at_its_period_and_its_steps_captured),
        T(a_stream_whose_learning_never_pays_rests),
        T(the_ops_of_a_stream_backing_off_are_not_counted_as_failed_captures),
        T(a_sequence_with_updates_is_widened_while_its_stream_backs_off),
        T(structures_that_differ_in_kernels_of_alike_names_count_together),
        T(occurrences_that_keep_diverging_from_exact_variants_switch_to_updates),
        T(an_exact_variant_passed_over_again_and_again_is_dropped),
        T(a_sequence_with_updates_whose_kernel_switches_takes_it_as_a_form),
        T(with_functions_fixed_a_switched_kernel_is_captured_at_once),
        T(an_old_shape_is_kept_with_room_and_taken_over_at_the_bound),
        T(host_boundaries_inside_the_step_make_the_steps_start_after_them),
        T(a_first_period_after_one_setup_op_starts_its_steps_after_the_boundary),
        T(a_first_period_after_two_setup_ops_starts_its_steps_after_the_boundary),
    };
#undef T
    return cmocka_run_group_tests_name("learner", tests, NULL, NULL);
}
