/* test_engine.c - the capture engine against a table of fake driver entry
 * points: no CPU driver, no threads, no LD_PRELOAD. The fakes write every
 * call that does work into a log ("k1@S" a launch of kernel 1 on stream S,
 * "graph@S" a graph launch, "m@S" a memset, "sync@S", "alloc", ...), and a call issued
 * while a capture is open on the private stream goes into the captured
 * graph instead. Each test drives the engine's hooks (the core table it
 * installed itself into) and checks the log: what reached the driver, in
 * which order, and when. Each test begins with a fresh engine
 * (rp__engine_reset), so that the state of one test cannot leak into the
 * next; the list runs three times in one process to hold the reset to it
 * (before the engine had one, each test took a context of its own, and the
 * 17th silently went eager). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fakedrv.h"

static int group_setup(void **state)
{
    (void)state;
    build_fake();
    core = fake;
    const struct rp__engine_config cfg = {.warmup = 2, .max_variants = 4, .cost.max_updates = 64,
                                          .min_ops = 2, .max_ops = 4096, .max_graphs = 256,
                                          .max_staging = 1u << 20, .max_seq_bytes = 1u << 20,
                                          .table_size = 64};
    return rp__engine_install(&core, &fake, &cfg);
}

/* A fresh engine, a clean log; the same context every time. */
static int setup(void **state)
{
    (void)state;
    rp__engine_reset();
    current = (CUcontext)0x10100;
    log_[0] = '\0';
    fail_graph_launch = 0;
    return 0;
}

/* The test's streams are destroyed after it, as a program would before
 * their handles could name streams of another context. */
static int teardown(void **state)
{
    (void)state;
    core.cuStreamDestroy_v2(S_BLOCKING);
    core.cuStreamDestroy_v2(S_NONBLOCK);
    return 0;
}

static CUdeviceptr buf = 0x4000;
static int32_t count = 64;

static void launch(int k, CUstream s)
{
    void *args[] = {&buf, &count};
    assert_int_equal(core.cuLaunchKernel(K(k), 1, 1, 1, 32, 1, 1, 0, s, args, NULL), CUDA_SUCCESS);
}

/* Launch kernel k on `s` through cuLaunchKernelEx with programmatic
 * stream serialization `pss` (1 on, 0 present but off, -1 no attribute). */
static void launch_ex(int k, CUstream s, int pss)
{
    void *args[] = {&buf, &count};
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = pss;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 32, c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = pss < 0 ? NULL : &a;
    c.numAttrs = pss < 0 ? 0 : 1;
    assert_int_equal(core.cuLaunchKernelEx(&c, K(k), args, NULL), CUDA_SUCCESS);
}

/* How many launches the engine issued without the programmatic stream
 * serialization they asked for (the stats' programmatic_serialization_dropped). */
static uint64_t pss_dropped(void)
{
    return rp__ctx_of(current)->counters.programmatic_serialization_dropped;
}

static void sync_(CUstream s)
{
    assert_int_equal(core.cuStreamSynchronize(s), CUDA_SUCCESS);
}

/* Learn the step k1 k2 on `s` (two occurrences: captured at the second). */
static void learn_step(CUstream s)
{
    for (int i = 0; i < 2; i++) {
        launch(1, s);
        launch(2, s);
        sync_(s);
    }
    log_[0] = '\0';
}

/* ---- the tests ---------------------------------------------------------------- */

/* A sequence seen twice (the warmup) runs as one graph launch the third
 * time; if not, reprise never replays anything. */
static void a_repeated_sequence_is_replayed_as_one_graph_launch(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    assert_string_equal(log_, ""); /* deferred: it may be the start of the step */
    launch(2, S_BLOCKING);
    assert_string_equal(log_, "graph2@B"); /* launched as soon as it is complete */
    sync_(S_BLOCKING);
    assert_string_equal(log_, "graph2@B sync@B");
}

/* A divergence issues the deferred ops eagerly, in the program's order,
 * before the op that diverged; if not, work is reordered or lost. */
static void a_divergence_flushes_the_deferred_ops_in_order(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    launch(3, S_BLOCKING);
    assert_string_equal(log_, "k1@B k3@B");
}

/* A boundary on the legacy stream resolves the deferred work of the
 * blocking streams (the driver orders them); if not, the legacy stream's
 * work overtakes it. */
static void a_legacy_boundary_resolves_the_blocking_streams_first(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    sync_(CU_STREAM_LEGACY);
    assert_string_equal(log_, "k1@B sync@L");
}

/* Non-blocking streams are independent lanes: a legacy boundary leaves
 * their deferred work deferred (the program must order them itself); if
 * it did not, nothing would be wrong but matches would break needlessly. */
static void a_legacy_boundary_leaves_non_blocking_streams_deferred(void **state)
{
    (void)state;
    learn_step(S_NONBLOCK);
    launch(1, S_NONBLOCK);
    sync_(CU_STREAM_LEGACY);
    assert_string_equal(log_, "sync@L");
    launch(2, S_NONBLOCK);
    assert_string_equal(log_, "sync@L graph2@N");
}

/* A global boundary (an allocation) resolves every stream before the
 * call; if not, the call could observe or free memory deferred work uses. */
static void a_global_boundary_resolves_every_stream_before_the_call(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    learn_step(S_NONBLOCK);
    launch(1, S_BLOCKING);
    launch(1, S_NONBLOCK);
    CUdeviceptr p;
    assert_int_equal(core.cuMemAlloc_v2(&p, 16), CUDA_SUCCESS);
    assert_string_equal(log_, "k1@B k1@N alloc");
}

/* A graph launch the driver refuses leaves the ops to run eagerly (a
 * replay runs every op or none); if not, the work is lost. */
static void a_failed_graph_launch_runs_the_ops_eagerly(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    fail_graph_launch = 1;
    launch(1, S_BLOCKING);
    launch(2, S_BLOCKING);
    assert_string_equal(log_, "k1@B k2@B");
    fail_graph_launch = 0;
    /* The graph was dropped: the next occurrence runs eagerly too. */
    launch(1, S_BLOCKING);
    launch(2, S_BLOCKING);
    sync_(S_BLOCKING);
    assert_string_equal(log_, "k1@B k2@B k1@B k2@B sync@B");
}

/* Ops of a segment too short to capture (REPRISE_MIN_OPS) never wait; if
 * they did, a one-launch loop would be held back for nothing. */
static void a_single_launch_between_boundaries_is_never_deferred(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        launch(1, S_BLOCKING);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "k1@B sync@B k1@B sync@B k1@B sync@B k1@B sync@B");
}

/* A launch with programmatic stream serialization (cuBLASLt's) is an op
 * like any other: the step k1 k2+pss is learnt, captured with k2 issued
 * into the window without the attribute (a graph node waits for the whole
 * of the node before it: stricter, the same results), counted once, and
 * replayed as one graph. If it were a boundary, every step would be cut in
 * two; if the window passed the attribute, a strict driver would refuse
 * the capture (the CPU driver does). */
static void a_launch_with_programmatic_serialization_is_captured_and_replayed_without_it(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        launch(1, S_BLOCKING);
        launch_ex(2, S_BLOCKING, 1);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "k1@B k2@B+pss sync@B k1@B k2@B+pss sync@B");
    assert_int_equal(ngraphs > 0 ? graph_ops[ngraphs - 1] : 0, 2);
    assert_int_equal(captured_attrs, 0);
    assert_int_equal(pss_dropped(), 1);
    log_[0] = '\0';
    for (int i = 0; i < 3; i++) {
        launch(1, S_BLOCKING);
        launch_ex(2, S_BLOCKING, 1);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "graph2@B sync@B graph2@B sync@B graph2@B sync@B");
    assert_int_equal(pss_dropped(), 1); /* counted per launch issued without it, at capture */
}

/* The attribute present but 0 asks for nothing: the launch is captured and
 * replayed the same way, and nothing is counted as dropped. */
static void programmatic_serialization_off_is_captured_and_not_counted(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        launch(1, S_BLOCKING);
        launch_ex(2, S_BLOCKING, 0);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "k1@B k2@B+pss0 sync@B k1@B k2@B+pss0 sync@B graph2@B sync@B");
    assert_int_equal(captured_attrs, 0);
    assert_int_equal(pss_dropped(), 0);
}

/* The attribute and its value are part of the op's structure, compared
 * exactly: a step learnt with it is never replayed for the launch without
 * it, with it off, or the reverse; each diverges and runs eagerly, as the
 * program issued it. The second op of a match is the matcher's fast path
 * (one candidate left): through cuLaunchKernelEx without attributes the
 * launch has the entry point the op was recorded from, so only the
 * attributes tell them apart, there too. */
static void a_launch_with_programmatic_serialization_never_stands_for_one_without_it(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        launch(1, S_BLOCKING);
        launch_ex(2, S_BLOCKING, 1);
        sync_(S_BLOCKING);
    }
    log_[0] = '\0';
    launch(1, S_BLOCKING);
    launch_ex(2, S_BLOCKING, -1); /* the fast path must not take it */
    assert_string_equal(log_, "k1@B k2@B");
    sync_(S_BLOCKING);
    log_[0] = '\0';
    launch(1, S_BLOCKING);
    launch_ex(2, S_BLOCKING, 0);
    assert_string_equal(log_, "k1@B k2@B+pss0");
    sync_(S_BLOCKING);
    log_[0] = '\0';
    launch(1, S_BLOCKING);
    launch_ex(2, S_BLOCKING, 1); /* still replayed for what it was learnt from */
    assert_string_equal(log_, "graph2@B");
}

static void a_launch_without_programmatic_serialization_never_stands_for_one_with_it(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        launch(1, S_BLOCKING);
        launch_ex(2, S_BLOCKING, -1);
        sync_(S_BLOCKING);
    }
    log_[0] = '\0';
    launch(1, S_BLOCKING);
    launch_ex(2, S_BLOCKING, 1);
    assert_string_equal(log_, "k1@B k2@B+pss");
    sync_(S_BLOCKING);
    log_[0] = '\0';
    launch(1, S_BLOCKING);
    launch_ex(2, S_BLOCKING, -1); /* by the fast path */
    assert_string_equal(log_, "graph2@B");
}

/* A step that begins with the attribute: after a replay, the fast path's
 * hint (the sequence last replayed on the stream) must not begin a match
 * for the first launch without it; with it, the general path replays. */
static void a_step_that_begins_with_programmatic_serialization_is_matched_only_with_it(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        launch_ex(2, S_BLOCKING, 1);
        launch(1, S_BLOCKING);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "k2@B+pss k1@B sync@B k2@B+pss k1@B sync@B graph2@B sync@B");
    log_[0] = '\0';
    launch_ex(2, S_BLOCKING, -1);
    launch(1, S_BLOCKING);
    sync_(S_BLOCKING);
    assert_string_equal(log_, "k2@B k1@B sync@B");
    log_[0] = '\0';
    launch_ex(2, S_BLOCKING, 1);
    launch(1, S_BLOCKING);
    assert_string_equal(log_, "graph2@B");
}

/* A report written while the program runs (the periodic stats file) reads
 * no context whose lock another thread holds: it gives that context up and
 * says so, and its writer drops the report; at exit, after a moment, it
 * reads what is there (a thread may have died holding the lock). If not, a
 * periodic report copies counters while another thread changes them. */
static void a_report_written_while_the_program_runs_skips_a_busy_context(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    rp_ctxstate *cs = rp__ctx_at(0);
    assert_non_null(cs);
    struct rp__engine_stats st;
    uint64_t ev;
    rp__report_try_only(1);
    assert_int_equal(rp__engine_stats_snapshot(0, &st, &ev), 1);
    assert_false(rp__report_missed());
    assert_true(st.segments > 0);
    rp__lock(&cs->lock); /* another thread, in the middle of an operation */
    rp__report_try_only(1);
    assert_int_equal(rp__engine_stats_snapshot(0, &st, &ev), 1);
    assert_true(rp__report_missed());
    assert_int_equal(st.segments, 0); /* nothing read */
    rp__report_try_only(0);
    assert_int_equal(rp__engine_stats_snapshot(0, &st, &ev), 1);
    assert_false(rp__report_missed());
    assert_true(st.segments > 0); /* read as it is, after the moment */
    rp__unlock(&cs->lock);
}

static void memset_(CUstream s)
{
    assert_int_equal(core.cuMemsetD32Async(buf, 7, 16, s), CUDA_SUCCESS);
}

/* One step on S_BLOCKING: k1 k2, a memset, then k3 unless the memset ends
 * it (`last`). */
static void memset_step(int last)
{
    launch(1, S_BLOCKING);
    launch(2, S_BLOCKING);
    memset_(S_BLOCKING);
    if (!last)
        launch(3, S_BLOCKING);
}

/* Learn that step (two occurrences, each synchronized: captured at the
 * second), the log cleared. */
static void learn_memset_step(int last)
{
    for (int i = 0; i < 2; i++) {
        memset_step(last);
        sync_(S_BLOCKING);
    }
    log_[0] = '\0';
}

/* A memset that is the next op of the launches the fast path holds
 * borrowed joins them (coord/hooks.c, rp__joins_recorded: issue 36) with what the
 * general path would give it: counted among the ops seen, a position among
 * its stream's ops (what the period's cuts count), the run kept borrowed
 * (nothing written down), and the replay when the next launch completes
 * it. The first replay's k1 takes the general path (no hint yet), the
 * later ones the fast path from the step's first op. If not, a step's
 * memsets go uncounted, or the stream's positions slip by one a memset. */
static void a_memset_joins_the_held_run_counted_and_in_its_place(void **state)
{
    (void)state;
    learn_memset_step(0);
    rp_ctxstate *cs = rp__ctx_of(current);
    rp_stream *st = rp__stream_of(cs, S_BLOCKING, 0);
    assert_non_null(st);
    for (int round = 0; round < 3; round++) {
        uint64_t seen = cs->counters.ops_seen[RP_OP_MEMSET], opno = st->opno;
        memset_step(1);
        assert_string_equal(log_, ""); /* held */
        assert_int_equal(st->match.ndef, 3);
        assert_non_null(st->match.borrowed_seq); /* joined: nothing written down */
        assert_int_equal(cs->counters.ops_seen[RP_OP_MEMSET], seen + 1);
        assert_int_equal(st->opno, opno + 3);
        launch(3, S_BLOCKING);
        assert_string_equal(log_, "graph4@B");
        sync_(S_BLOCKING);
        log_[0] = '\0';
    }
}

/* A memset that ends the step completes the held run: replayed at once,
 * as a launch that completes it is (rp__deferred); if not, the step waits
 * for the program's next call, or for the idle watch. */
static void a_memset_that_ends_the_held_run_replays_it_at_once(void **state)
{
    (void)state;
    learn_memset_step(1);
    for (int round = 0; round < 3; round++) {
        memset_step(1);
        assert_string_equal(log_, "graph3@B");
        sync_(S_BLOCKING);
        log_[0] = '\0';
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_repeated_sequence_is_replayed_as_one_graph_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(a_divergence_flushes_the_deferred_ops_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(a_legacy_boundary_resolves_the_blocking_streams_first, setup, teardown),
        cmocka_unit_test_setup_teardown(a_legacy_boundary_leaves_non_blocking_streams_deferred, setup, teardown),
        cmocka_unit_test_setup_teardown(a_global_boundary_resolves_every_stream_before_the_call, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_graph_launch_runs_the_ops_eagerly, setup, teardown),
        cmocka_unit_test_setup_teardown(a_single_launch_between_boundaries_is_never_deferred, setup, teardown),
        cmocka_unit_test_setup_teardown(a_launch_with_programmatic_serialization_is_captured_and_replayed_without_it, setup, teardown),
        cmocka_unit_test_setup_teardown(programmatic_serialization_off_is_captured_and_not_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(a_launch_with_programmatic_serialization_never_stands_for_one_without_it, setup, teardown),
        cmocka_unit_test_setup_teardown(a_launch_without_programmatic_serialization_never_stands_for_one_with_it, setup, teardown),
        cmocka_unit_test_setup_teardown(a_step_that_begins_with_programmatic_serialization_is_matched_only_with_it, setup, teardown),
        cmocka_unit_test_setup_teardown(a_report_written_while_the_program_runs_skips_a_busy_context, setup, teardown),
        cmocka_unit_test_setup_teardown(a_memset_joins_the_held_run_counted_and_in_its_place, setup, teardown),
        cmocka_unit_test_setup_teardown(a_memset_that_ends_the_held_run_replays_it_at_once, setup, teardown),
    };
    int failed = 0;
    for (int round = 0; round < 3; round++)
        failed += cmocka_run_group_tests(tests, group_setup, NULL);
    return failed;
}
