/* Unit tests of why.c and explain.c: the sentences of the summary, the
 * report, its page and `reprise explain` say the cause the facts show, for
 * known facts (the stats of a loop whose memset grows every iteration, of a
 * decode loop whose kernels switch, of the demo); advice comes only where
 * the cause says something helps; what replaying saved is counted from the
 * measured costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "explain.h"

#define SOFTMAX5 "_Z20softmax_warp_forwardIfffLi5EEvv" /* softmax_warp_forward<float, float, float, 5>() */
#define SOFTMAX6 "_Z20softmax_warp_forwardIfffLi6EEvv"

static void contains(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("\"%s\" does not say \"%s\"", text, want);
}

static void lacks(const char *text, const char *unwanted)
{
    if (strstr(text, unwanted))
        fail_msg("\"%s\" says \"%s\"", text, unwanted);
}

/* A difference of a run against the one before it. */
static struct rp__diff shape(unsigned op, int field, const char *kind, unsigned long long had,
                             unsigned long long got)
{
    struct rp__diff d;
    memset(&d, 0, sizeof d);
    d.why = RP_DIV_SHAPE;
    d.structure = 1;
    d.op = op;
    d.field = field;
    d.had = had;
    d.got = got;
    snprintf(d.kind, sizeof d.kind, "%s", kind);
    return d;
}

/* `phases MODULE 60 4 grid`'s stats: the memset's width, and the grid,
 * grow every iteration; nothing repeats. */
static struct rp__diff grid_shapes[4];
static struct rp__run_fact grid_loop(void)
{
    struct rp__run_fact f;
    memset(&f, 0, sizeof f);
    f.ops = 363;
    f.eager[RP_EAGER_WARMING_UP] = 363;
    f.segments = 61;
    f.new_shapes = 61;
    f.new_shape_ops = 363;
    f.warmup = 2;
    for (unsigned i = 0; i < 4; i++)
        grid_shapes[i] = shape(1, RP_FIELD_WIDTH, "memset", 7552 - 128 * i, 7680 - 128 * i);
    f.shapes = grid_shapes;
    f.nshapes = 4;
    return f;
}

/* Issue 37: such a loop was reported as "363 warming_up" and advised "a
 * longer run, or a lower --warmup" (neither helps): the sentence must name
 * what grows, why no graph can follow it, and advise only the fix that
 * helps. */
static void a_loop_whose_memset_grows_every_iteration_is_said_so_without_warmup_advice(void **state)
{
    (void)state;
    struct rp__run_fact f = grid_loop();
    struct rp__line l[RP_EAGER_REASON_COUNT];
    assert_int_equal(rp__explain_eager(&f, l, RP_EAGER_REASON_COUNT), 1);
    contains(l[0].text, "363 ops (100.0%) ran eagerly because the width of op 1 (a memset) grows "
                        "every time (the last time 7552 -> 7680 elements)");
    contains(l[0].text, "61 of 61 runs of ops had a structure not seen before");
    contains(l[0].text, "a memset's width is part of a graph's structure");
    lacks(l[0].text, "warmup");
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    assert_int_equal(rp__advice(&f, advice), 1);
    contains(advice[0], "with one width (its largest)");
    lacks(advice[0], "--warmup");
    /* A changing grid alone is content: the same loop with a fixed memset
     * replays (no shape changes): no advice then. */
    f.nshapes = 0, f.new_shapes = 2, f.new_shape_ops = 12, f.replayed = 300;
    f.eager[RP_EAGER_WARMING_UP] = 63;
    assert_int_equal(rp__explain_eager(&f, l, RP_EAGER_REASON_COUNT), 1);
    contains(l[0].text, "while reprise learnt");
    assert_int_equal(rp__advice(&f, advice), 0);
}

/* A run too short for its warmup is the one case where a lower --warmup
 * helps: something came back, not often enough. */
static void a_run_too_short_for_its_warmup_is_advised_a_lower_warmup(void **state)
{
    (void)state;
    struct rp__run_fact f;
    memset(&f, 0, sizeof f);
    f.ops = 24, f.eager[RP_EAGER_WARMING_UP] = 24;
    f.segments = 4, f.new_shapes = 3, f.new_shape_ops = 17, f.warmup = 4;
    struct rp__line l[RP_EAGER_REASON_COUNT];
    rp__explain_eager(&f, l, RP_EAGER_REASON_COUNT);
    contains(l[0].text, "no run of ops came back REPRISE_WARMUP (4) times");
    char advice[RP_ADVICE_MAX][RP_ADVICE_LEN];
    assert_int_equal(rp__advice(&f, advice), 1);
    contains(advice[0], "1 run of ops came back, but not REPRISE_WARMUP (4) times");
    contains(advice[0], "a lower --warmup");
    /* Nothing came back at all: no setting helps, none is advised. */
    f.new_shapes = 4;
    assert_int_equal(rp__advice(&f, advice), 0);
}

/* A kernel that switched, as the engine saw it: both names demangled, the
 * second only where it differs; a grid's dimension with its two values. */
static void a_difference_names_the_op_its_kernel_the_field_and_both_values(void **state)
{
    (void)state;
    char out[RP_LINE_LEN];
    struct rp__diff d = shape(17, RP_FIELD_FUNCTION, "kernel", 0x100, 0x200);
    d.why = RP_DIV_OTHER_OP;
    snprintf(d.kernel, sizeof d.kernel, SOFTMAX5);
    snprintf(d.got_kernel, sizeof d.got_kernel, SOFTMAX6);
    rp__diff_describe(&d, out, sizeof out);
    assert_string_equal(out, "op 17 softmax_warp_forward<float, float, float, 5> -> <..., 6>");
    d = shape(3, RP_FIELD_GRID, "kernel", 3, 4);
    snprintf(d.kernel, sizeof d.kernel, "gemv_n_small");
    rp__diff_describe(&d, out, sizeof out);
    assert_string_equal(out, "op 3 gemv_n_small: grid.x 3 -> 4");
    d = shape(2, RP_FIELD_BYTES, "dtod copy", 4096, 8192);
    rp__diff_describe(&d, out, sizeof out);
    assert_string_equal(out, "op 2 (a dtod copy): size 4096 -> 8192 bytes");
    d = shape(5, RP_FIELD_PARAM, "kernel", 0x7f0000001000ull, 0x7f0000002000ull);
    d.index = 1;
    snprintf(d.kernel, sizeof d.kernel, "axpy");
    rp__diff_describe(&d, out, sizeof out);
    assert_string_equal(out, "op 5 axpy: parameter 1 0x7f0000001000 -> 0x7f0000002000");
    d = shape(0, RP_FIELD_FUNCTION, "kernel", 1, 2);
    snprintf(d.kernel, sizeof d.kernel, "softmax_32");
    snprintf(d.got_kernel, sizeof d.got_kernel, "softmax_64");
    rp__diff_describe(&d, out, sizeof out);
    assert_string_equal(out, "op 0 softmax_32 -> softmax_64");
}

/* The sequence whose runs went eagerly after leaving it explains the
 * diverged ops, with where they left it; its story separates the runs that
 * ran eagerly from those another sequence took (issue 37: "diverged 276
 * against occurrences 23 puzzles"). */
static void diverged_ops_are_explained_by_the_sequence_they_left(void **state)
{
    (void)state;
    struct rp__diff divs[2];
    divs[0] = shape(7, RP_FIELD_FUNCTION, "kernel", 1, 2);
    divs[0].why = RP_DIV_OTHER_OP, divs[0].ended = 1, divs[0].structure = 1;
    snprintf(divs[0].kernel, sizeof divs[0].kernel, "gemv_n_small");
    snprintf(divs[0].got_kernel, sizeof divs[0].got_kernel, "gemv_n_large");
    divs[1] = divs[0];
    struct rp__vol_fact vols[2] = {{2, RP_FIELD_DST, 0, "dtod copy", ""},
                                   {5, RP_FIELD_PARAM, 1, "kernel", "gemv_n_small"}};
    struct rp__seq_fact s = {NULL, 2, 17, 23, 20, 2, 105, 276, 12, 96, 0, "gemv_n_small",
                             divs, 2, vols, 2};
    struct rp__run_fact f;
    memset(&f, 0, sizeof f);
    f.ops = 1000, f.replayed = 900, f.eager[RP_EAGER_DIVERGED] = 96, f.seqs = &s, f.nseqs = 1;
    struct rp__line l[RP_EAGER_REASON_COUNT];
    rp__explain_eager(&f, l, RP_EAGER_REASON_COUNT);
    contains(l[0].text, "96 ops (9.6%) ran eagerly after diverging: they were held while they "
                        "matched sequence 2 (17 ops from gemv_n_small)");
    contains(l[0].text, "the last time: op 7 gemv_n_small -> gemv_n_large (another operation");
    struct rp__line sl[4];
    int n = rp__explain_seq(&s, sl, 4);
    assert_int_equal(n, 4);
    contains(sl[0].text, "sequence 2: 17 ops from gemv_n_small; 23 occurrences: 20 replayed, 2 "
                         "ran eagerly before its graph");
    contains(sl[0].text, "1 ran eagerly with its graph there");
    contains(sl[1].text, "276 runs began like it and went another way; 12 of them then ran "
                         "eagerly (96 ops held, then issued one by one), the others went on as "
                         "another sequence");
    contains(sl[2].text, "before that: op 7 gemv_n_small -> gemv_n_large");
    contains(sl[3].text, "updated before each replay: op 2 (a dtod copy) destination; op 5 "
                         "(gemv_n_small) parameter 1");
}

/* Issue 37: "launches 1,403 -> 221", from the counts; host time only from
 * costs measured, never from a guess, and not when they cannot be right. */
static void what_replaying_saved_is_counted_from_the_measured_costs(void **state)
{
    (void)state;
    struct rp__run_fact f;
    memset(&f, 0, sizeof f);
    char out[RP_LINE_LEN];
    f.ops = 1403;
    assert_int_equal(rp__explain_saved(&f, out, sizeof out), 0); /* nothing replayed */
    f.replayed = 1379, f.replays = 197;
    assert_int_equal(rp__explain_saved(&f, out, sizeof out), 1);
    contains(out, "driver launches 1,403 -> 221 (1,379 ops in 197 graph launches)");
    contains(out, "host time not estimated: no eager launch was timed");
    f.cost_eager_ns = 3500, f.cost_launch_ns = 9800, f.wall_s = 2.0;
    rp__explain_saved(&f, out, sizeof out);
    /* 1379 x 3.5 us - 197 x 9.8 us = 2.8956 ms */
    contains(out, "host launch time about 2.9 ms less than eagerly (measured here: an eager "
                  "launch 3.5 us, a graph launch 9.8 us)");
    f.updates = 100;
    rp__explain_saved(&f, out, sizeof out);
    contains(out, "the graph launches or updates were not timed");
    f.cost_update_ns = 500;
    rp__explain_saved(&f, out, sizeof out);
    contains(out, "100 node updates");
    contains(out, "about 2.8 ms less");
    f.wall_s = 0.001; /* more saved than the run lasted: launches that ran kernels */
    rp__explain_saved(&f, out, sizeof out);
    contains(out, "host time not estimated: the launch costs measured here");
    char c[32];
    rp__count_text(1234567, c, sizeof c);
    assert_string_equal(c, "1,234,567");
    rp__count_text(999, c, sizeof c);
    assert_string_equal(c, "999");
}

/* Merged processes: a loop whose shape changes in one process is still
 * said; two ordinary loops summed are not taken for one that changes. */
static void processes_summed_keep_each_ones_cause(void **state)
{
    (void)state;
    struct rp__run_fact heat, all, grid = grid_loop();
    memset(&heat, 0, sizeof heat);
    heat.ops = 213, heat.replayed = 189, heat.replays = 27, heat.graphs = 1;
    heat.eager[RP_EAGER_WARMING_UP] = 24, heat.segments = 4, heat.new_shapes = 3;
    heat.new_shape_ops = 17, heat.warmup = 2;
    static struct rp__diff hs[2];
    hs[0] = shape(0, RP_FIELD_KIND, "htod copy", 0, 0);
    hs[1] = shape(0, RP_FIELD_KIND, "kernel", 0, 0);
    heat.shapes = hs, heat.nshapes = 2;
    memset(&all, 0, sizeof all);
    rp__run_fact_add(&all, &heat);
    rp__run_fact_add(&all, &heat);
    all.shapes = hs, all.nshapes = 2;
    struct rp__line l[RP_EAGER_REASON_COUNT];
    rp__explain_eager(&all, l, RP_EAGER_REASON_COUNT);
    contains(l[0].text, "while reprise learnt");
    rp__run_fact_add(&all, &grid);
    all.shapes = grid_shapes, all.nshapes = 4;
    rp__explain_eager(&all, l, RP_EAGER_REASON_COUNT);
    contains(l[0].text, "the width of op 1 (a memset) grows every time");
    assert_int_equal(all.processes, 3);
}

/* Every reason has its stats name, a meaning and more; the stats names
 * are those of the file (a tool reads them). */
static void every_reason_has_its_name_and_its_meaning(void **state)
{
    (void)state;
    for (int r = 0; r < RP_EAGER_REASON_COUNT; r++) {
        assert_non_null(rp__reasons[r].key);
        assert_true(strlen(rp__reasons[r].meaning) > 20);
        assert_non_null(rp__reasons[r].more);
        assert_int_equal(rp__reason_index(rp__reasons[r].key), r);
    }
    assert_string_equal(rp__reasons[RP_EAGER_WARMING_UP].key, "warming_up");
    assert_int_equal(rp__reason_index("no_such_reason"), -1);
    unsigned idx;
    assert_int_equal(rp__field_from_key("grid.y", &idx), RP_FIELD_GRID);
    assert_int_equal(idx, 1);
    assert_int_equal(rp__field_from_key("grid", &idx), RP_FIELD_GRID);
    assert_int_equal(idx, RP_DIM_ALL);
    assert_string_equal(rp__field_key(RP_FIELD_BLOCK, 2), "block.z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_loop_whose_memset_grows_every_iteration_is_said_so_without_warmup_advice),
        cmocka_unit_test(a_run_too_short_for_its_warmup_is_advised_a_lower_warmup),
        cmocka_unit_test(a_difference_names_the_op_its_kernel_the_field_and_both_values),
        cmocka_unit_test(diverged_ops_are_explained_by_the_sequence_they_left),
        cmocka_unit_test(what_replaying_saved_is_counted_from_the_measured_costs),
        cmocka_unit_test(processes_summed_keep_each_ones_cause),
        cmocka_unit_test(every_reason_has_its_name_and_its_meaning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
