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
} cap;

rp_seq *rp__capture(rp_ctxstate *cs, rp_det_entry *e, const uint64_t *vmask, rp_seq *reuse,
                    CUstream home)
{
    (void)reuse;
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

const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op)
{
    (void)cs, (void)op;
    return "k";
}

void rp__nvtx_push(const char *fmt, ...)
{
    (void)fmt;
}

void rp__nvtx_pop(void) {}

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
 * coordinator hands an eager op to learning: positioned, then appended. */
static void eager(int k, int32_t count)
{
    rp_op op;
    memset(&op, 0, sizeof op);
    op.kind = RP_OP_KERNEL;
    op.ctx = cs.ctx;
    op.stream = S;
    op.entry = RP_E_cuLaunchKernel;
    op.func = K(k);
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
    rp__seg_append(&st, &op, RP_EAGER_WARMING_UP);
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
 * step in two); a boundary that moves realigns them only once it falls at
 * the same op twice in a row; one at a step's start changes nothing. */
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
    boundary(); /* the first for this period: aligned at once */
    assert_true(rp__period_cut_before(p, at, 0));
    assert_true(rp__period_cut_before(p, at + 4, 0));
    eager_until_phase(1);
    at = st.opno;
    boundary(); /* moved: not yet */
    assert_false(rp__period_cut_before(p, at, 0));
    eager_until_phase(0);
    boundary(); /* at a start: nothing, and the count starts again */
    eager_until_phase(1);
    boundary();
    eager_until_phase(1);
    at = st.opno;
    boundary(); /* twice in a row at the same op */
    assert_true(rp__period_cut_before(p, at, 0));
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
        T(host_boundaries_inside_the_step_make_the_steps_start_after_them),
    };
#undef T
    return cmocka_run_group_tests_name("learner", tests, NULL, NULL);
}
