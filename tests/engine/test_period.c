/* test_period.c - the period detector (shim/model/period.c) on op shape streams
 * made up here: a shape is a small integer standing for an op's structure
 * key. Each test states a rule of finding the step in a stream that no host
 * boundary delimits (DESIGN.md §8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "period.h"

/* A shape key: spread over 64 bits, as real keys are. */
static uint64_t key(unsigned int shape)
{
    uint64_t z = shape * 0x9E3779B97F4A7C15ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 27);
}

/* Feed `n` ops of the repeating pattern `pat` (length `len`), starting at
 * position `*pos` with the pattern's element `phase`. */
static void feed_pattern(rp_period *p, uint64_t *pos, const unsigned int *pat, size_t len,
                         size_t phase, size_t n)
{
    for (size_t i = 0; i < n; i++, (*pos)++)
        rp__period_feed(p, *pos, key(pat[(phase + i) % len]), key(pat[(phase + i) % len]));
}

/* The next value of a fixed-seed pseudo-random sequence (an LCG). */
static uint64_t lcg(uint64_t *x)
{
    return *x = *x * 6364136223846793005ull + 1442695040888963407ull;
}

/* A shape drawn from `n` at random. */
static unsigned int draw(uint64_t *x, unsigned int n)
{
    return (unsigned int)(lcg(x) >> 33) % n;
}

/* One step of varying length: a prefix of 8 shapes, then one of three
 * tails of 4, 5 or 6 drawn at random (`nosync diverge`). */
static void feed_varying_step(rp_period *p, uint64_t *pos, uint64_t *x)
{
    for (unsigned int i = 0; i < 8; i++)
        rp__period_feed(p, (*pos)++, key(i), key(i));
    unsigned int t = draw(x, 3);
    for (unsigned int i = 0; i < 4 + t; i++)
        rp__period_feed(p, (*pos)++, key(100 + 10 * t + i), key(100 + 10 * t + i));
}

/* The offset within the pattern at which the detector cuts (a step
 * starts), or -1 if it cuts nowhere in one period from `pos`. */
static long cut_offset(rp_period *p, uint64_t pos, size_t len, size_t phase)
{
    for (size_t i = 0; i < len; i++)
        if (rp__period_cut_before(p, pos + i, 0))
            return (long)((phase + i) % len);
    return -1;
}

static const unsigned int step8[] = {1, 2, 3, 4, 5, 6, 7, 8};

/* A fixed step is found once a whole repetition (and 16 ops) matched; if
 * not, a loop that never synchronizes is never replayed. */
static void a_fixed_step_is_found_after_a_whole_repetition(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 8, 0, 8);
    assert_int_equal(p.d, 0); /* one occurrence proves nothing */
    feed_pattern(&p, &pos, step8, 8, 0, 24);
    assert_int_equal(p.d, 8);
    rp__period_fini(&p);
}

/* The step starts at the same op whatever op the stream began with; if it
 * moved with the start, graphs learnt in one run would be cut differently
 * in the next, and a stream's steps would not line up with its graphs. */
static void the_cut_does_not_depend_on_where_the_stream_began(void **state)
{
    (void)state;
    long first = -2;
    for (size_t phase = 0; phase < 8; phase++) {
        rp_period p;
        assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
        uint64_t pos = 0;
        feed_pattern(&p, &pos, step8, 8, phase, 40);
        assert_int_equal(p.d, 8);
        long off = cut_offset(&p, pos, 8, (phase + 40) % 8);
        assert_true(off >= 0);
        if (first == -2)
            first = off;
        assert_int_equal(off, first);
        rp__period_fini(&p);
    }
}

/* Shapes drawn at random from a few kernels match at short distances now
 * and then, never for long: no period is accepted; if one were, a stream
 * that never repeats would be cut up and captured for nothing. */
static void random_shapes_from_few_kernels_give_no_period(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t x = 12345;
    for (uint64_t pos = 0; pos < 20000; pos++) {
        { uint64_t k = key(draw(&x, 6)); rp__period_feed(&p, pos, k, k); }
        assert_int_equal(p.d, 0);
    }
    rp__period_fini(&p);
}

/* A layer repeated inside the step, then a different tail: the step's
 * period wins over the layer's; if the inner one stayed, every step would
 * diverge at its tail. */
static void the_longest_stable_period_wins_over_an_inner_one(void **state)
{
    (void)state;
    static const unsigned int nested[] = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 7, 8, 9, 10};
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, nested, 16, 0, 16 * 8);
    assert_int_equal(p.d, 16);
    rp__period_fini(&p);
}

/* Two patterns of 5 and 7 ops alternating are one step of 12. */
static void interleaved_patterns_are_one_step(void **state)
{
    (void)state;
    static const unsigned int both[] = {1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 16, 17};
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, both, 12, 0, 12 * 6);
    assert_int_equal(p.d, 12);
    rp__period_fini(&p);
}

/* A step whose length changes for good: the new period replaces the old
 * one; if the old one stayed, the stream would be cut at the wrong places
 * for ever. */
static void a_new_step_length_replaces_the_old_period(void **state)
{
    (void)state;
    static const unsigned int step10[] = {1, 2, 3, 4, 5, 6, 21, 22, 23, 24};
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 6, 0, 60);
    assert_int_equal(p.d, 6);
    feed_pattern(&p, &pos, step10, 10, 0, 100);
    assert_int_equal(p.d, 10);
    rp__period_fini(&p);
}

/* Ops not observed (replayed, say) are unknown, never taken for matches:
 * a stream observed in patches finds no period it has not seen repeat. */
static void unobserved_ops_are_never_taken_for_matches(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    /* One op observed in every 8: no two observed ops are ever a period apart. */
    for (uint64_t pos = 0; pos < 4000; pos += 8)
        rp__period_feed(&p, pos, key((unsigned int)(pos / 8)), key((unsigned int)(pos / 8)));
    assert_int_equal(p.d, 0);
    rp__period_fini(&p);
}

/* A step longer than the chunk is cut at the step's start and every chunk
 * within it; if not, a long step would be held back whole. */
static void a_long_step_is_cut_into_chunks(void **state)
{
    (void)state;
    unsigned int big[100];
    for (unsigned int i = 0; i < 100; i++)
        big[i] = i + 1;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, big, 100, 0, 300);
    assert_int_equal(p.d, 100);
    int cuts = 0;
    for (uint64_t q = pos; q < pos + 100; q++)
        cuts += rp__period_cut_before(&p, q, 32);
    assert_int_equal(cuts, 4); /* at 0, 32, 64 and 96 within the step */
    rp__period_fini(&p);
}

/* Ops that were replayed are not observed: a window then last occurred a
 * multiple of the period ago, and that multiple matches too. If it won as
 * the longer period, a step of 4 ops would be cut into steps of 8 or 12 as
 * soon as the first graphs replay, and learnt again. */
static void a_multiple_of_the_period_does_not_replace_it(void **state)
{
    (void)state;
    static const unsigned int step4[] = {1, 2, 3, 4};
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step4, 4, 0, 40);
    assert_int_equal(p.d, 4);
    for (int i = 0; i < 40; i++) {
        pos += 4; /* a step replayed: not observed */
        feed_pattern(&p, &pos, step4, 4, 0, 4);
        pos += i % 3 == 0 ? 8 : 0; /* sometimes two */
    }
    assert_int_equal(p.d, 4);
    rp__period_fini(&p);
}

/* A step that one odd op breaks (a divergence) is tracked again from the
 * next whole windows that match, and cut where it was: a distance whose run
 * breaks gives up its slot (shapes at random would otherwise keep every
 * slot busy), and the hash head proposes it again. If it were not, a loop
 * with an occasional odd op would lose its graphs for good. */
static void a_step_broken_by_an_odd_op_is_found_again_where_it_was(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 8, 0, 32);
    assert_int_equal(p.d, 8);
    long cut = cut_offset(&p, pos, 8, 0);
    assert_true(cut >= 0);
    for (int odd = 0; odd < 8; odd++) {
        feed_pattern(&p, &pos, step8, 8, 0, (size_t)odd);
        rp__period_feed(&p, pos, key(100 + (unsigned int)odd), 0); /* in place of one */
        pos++;
        feed_pattern(&p, &pos, step8, 8, (size_t)odd + 1, 8 - (size_t)odd - 1);
        feed_pattern(&p, &pos, step8, 8, 0, 16); /* two whole periods */
        assert_int_equal(p.d, 8);
        assert_int_equal(cut_offset(&p, pos, 8, 0), cut);
    }
    rp__period_fini(&p);
}

/* Where the cuts are is arithmetic on the period, its base and the chunk;
 * the detector keeps the next cut so that most positions are answered
 * without a division. Whatever the order of the questions, the answers are
 * the arithmetic's. */
static void cuts_are_where_the_arithmetic_puts_them(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t x = 777;
    for (int round = 0; round < 200; round++) {
        lcg(&x);
        p.d = p.step = 1 + (x >> 33) % 40;
        p.base = (x >> 20) % 50;
        rp__period_align(&p, p.base); /* forgets the kept cut */
        uint64_t chunk = (x >> 10) % 3 == 0 ? 0 : 1 + (x >> 40) % 20;
        uint64_t pos = 0;
        for (int i = 0; i < 300; i++) {
            lcg(&x);
            /* mostly forwards, one step at a time, sometimes a jump either way */
            if ((x >> 60) == 0)
                pos = (x >> 30) % 400;
            else
                pos += (x >> 58) & 1;
            int want = pos >= p.base && ((pos - p.base) % p.step == 0 ||
                                         (chunk && (pos - p.base) % p.step % chunk == 0));
            assert_int_equal(rp__period_cut_before(&p, pos, chunk), want);
            if ((x >> 55) % 16 == 0) /* another chunk now and then */
                chunk = chunk ? 0 : 8;
        }
    }
    rp__period_fini(&p);
}

/* A prefix of 8 shapes, then one of three tails of 4, 5 or 6 (drawn with
 * a fixed seed): no single period; the steps are cut after a landmark, at
 * the same place in every step whatever its tail, once the stream has shown
 * a period (a tail that repeated); periods are not accepted while it holds.
 * If they were cut anywhere else, every step would hold two steps' parts
 * and never repeat. */
static void steps_of_varying_length_are_cut_after_a_landmark(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t x = 99, pos = 0;
    long cut_at = -1;
    int cuts_checked = 0;
    for (int step = 0; step < 400; step++) {
        uint64_t start = pos;
        feed_varying_step(&p, &pos, &x);
        if (step < 200)
            continue;
        assert_true(p.landmark != 0);
        assert_int_equal(p.d, 0);
        /* exactly one cut in the step, at the same offset in the prefix */
        int cuts = 0;
        for (uint64_t q = start; q < pos; q++) {
            if (!rp__period_cut_before(&p, q, 0))
                continue;
            cuts++;
            if (cut_at < 0)
                cut_at = (long)(q - start);
            assert_int_equal((long)(q - start), cut_at);
        }
        assert_int_equal(cuts, 1);
        cuts_checked++;
    }
    assert_int_equal(cuts_checked, 200);
    /* The one window of 8 shapes every step has is the prefix: the cut
     * comes after it, where the tail begins. */
    assert_int_equal(cut_at, 8);
    rp__period_fini(&p);
}

/* Steps of varying length (a landmark), then a fixed step for good: that
 * landmark goes, and the fixed step's period is accepted. (The decision
 * was once skipped as unchanged when the landmark went: the period was
 * never accepted, and the stream never cut again.) */
static void a_fixed_step_after_a_landmark_gets_its_period(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t x = 7, pos = 0;
    for (int step = 0; step < 200; step++)
        feed_varying_step(&p, &pos, &x);
    assert_true(p.landmark != 0);
    static const unsigned int step10[] = {50, 51, 52, 53, 54, 55, 56, 57, 58, 59};
    feed_pattern(&p, &pos, step10, 10, 0, 2000);
    assert_int_equal(p.d, 10);
    /* a landmark of the fixed step may come: its gaps are equal */
    assert_true(!p.landmark || p.lgmin == p.lgap);
    rp__period_fini(&p);
}

/* Once a stream that had a period turns to shapes drawn at random, no
 * landmark is accepted, and one it had goes: their windows come back at
 * gaps that spread far more than the band. If one were accepted, the
 * random ops would be cut into pieces that are learnt for nothing. */
static void random_shapes_after_a_period_give_no_landmark(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 0), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 8, 0, 200);
    assert_int_equal(p.d, 8);
    uint64_t x = 5;
    for (int i = 0; i < 20000; i++) {
        { uint64_t k = key(draw(&x, 6)); rp__period_feed(&p, pos++, k, k); }
        if (i >= 1000) {
            assert_int_equal(p.landmark, 0);
            assert_int_equal(p.d, 0);
        }
    }
    rp__period_fini(&p);
}

/* Issue 28's CuPy-like loop: 8 groups of the same 4 kernels a step, op
 * `op` of the 32 (from the step's start), group g on buffer set g % sets,
 * with a counter in every group's second kernel that changes every step
 * (none when `counter` is 0). Shapes repeat every 4 ops; contents say
 * where steps are. */
static uint64_t groups_content(uint64_t op, unsigned int sets, int counter)
{
    uint64_t step = op / 32, g = op % 32 / 4, k = op % 4;
    uint64_t c = key((unsigned int)(1000 + 10 * (g % sets) + k));
    if (counter && k == 1)
        c ^= key((unsigned int)(50000 + step));
    return c;
}

static void feed_groups(rp_period *p, uint64_t *pos, uint64_t n, unsigned int sets, int counter)
{
    for (uint64_t i = 0; i < n; i++, (*pos)++)
        rp__period_feed(p, *pos, key(1 + (unsigned int)(*pos % 4)),
                        groups_content(*pos, sets, counter));
}

/* With every group on its own buffers the contents repeat only at the
 * step: shapes find the period of a group (4), contents make the step 32.
 * Cut into groups, the step's graph would be 8 graphs, and every group's
 * contents another variant. */
static void groups_whose_contents_differ_make_the_step_the_whole_loop_body(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 32), 0);
    uint64_t pos = 0;
    feed_groups(&p, &pos, 200, 8, 1);
    assert_int_equal(p.d, 4);
    assert_int_equal(p.step, 32);
    assert_int_equal(rp__period_step(&p), 32);
    rp__period_fini(&p);
}

/* Groups alternating between two buffer sets repeat every 8 ops within the
 * step, the counter changing once a step: the step is 8 (the most contents
 * repeat at that lag), cut so that both groups whose counter changes at a
 * step's start fall into one step, not two (one content per loop step,
 * not two), whatever op the stream began with. */
static void groups_that_repeat_within_the_step_are_cut_where_their_contents_change(void **state)
{
    (void)state;
    for (uint64_t start = 0; start < 8; start++) {
        rp_period p;
        assert_int_equal(rp__period_init(&p, 1, 2, 32), 0);
        uint64_t pos = start;
        feed_groups(&p, &pos, 200, 2, 1);
        assert_int_equal(p.d, 4);
        assert_int_equal(p.step, 8);
        /* The counter changes at ops 1 and 5 of a loop step (the groups
         * 8 ops after the last of the previous step's). */
        uint64_t at1 = 0, at5 = 0;
        for (uint64_t q = pos; q < pos + 64; q++) {
            if (q % 32 == 1)
                at1 = (q - p.base) / p.step;
            if (q % 32 == 5)
                at5 = (q - p.base) / p.step;
        }
        assert_int_equal(at1, at5);
        rp__period_fini(&p);
    }
}

/* Contents that come back every period, or that change in every period
 * alike (a counter in every step), say nothing more: the step stays the
 * period (a longer one would only need more occurrences to learn). */
static void contents_that_repeat_or_change_every_period_keep_the_period(void **state)
{
    (void)state;
    for (int counter = 0; counter <= 1; counter++) {
        rp_period p;
        assert_int_equal(rp__period_init(&p, 1, 2, 32), 0);
        uint64_t pos = 0;
        for (uint64_t i = 0; i < 200; i++, pos++) {
            uint64_t c = key((unsigned int)(100 + pos % 8));
            if (counter && pos % 8 == 3)
                c ^= key((unsigned int)(7000 + pos / 8));
            rp__period_feed(&p, pos, key((unsigned int)(pos % 8)), c);
        }
        assert_int_equal(p.d, 8);
        assert_int_equal(p.step, 8);
        rp__period_fini(&p);
    }
}

/* A stream without boundaries is cut after REPRISE_MAX_HELD ops: its step
 * must be decided by then, from what the ops fed so far allow, or its
 * first segment holds more steps than it needs to. */
static void a_step_is_decided_when_the_stream_is_first_cut(void **state)
{
    (void)state;
    rp_period p;
    assert_int_equal(rp__period_init(&p, 1, 2, 32), 0);
    uint64_t pos = 0;
    feed_groups(&p, &pos, 44, 8, 0);
    assert_int_equal(p.d, 4);
    assert_int_equal(p.step, 0); /* not yet: 48 ops in a row are wanted */
    assert_int_equal(rp__period_cut_before(&p, pos, 64), 0);
    int cut = 0;
    for (uint64_t q = pos; q < pos + 32; q++)
        cut |= rp__period_cut_due(&p, q, 64);
    assert_int_equal(p.step, 32); /* lags up to 32 allowed by the 40 ops matched */
    assert_true(cut);
    rp__period_fini(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_fixed_step_is_found_after_a_whole_repetition),
        cmocka_unit_test(the_cut_does_not_depend_on_where_the_stream_began),
        cmocka_unit_test(random_shapes_from_few_kernels_give_no_period),
        cmocka_unit_test(the_longest_stable_period_wins_over_an_inner_one),
        cmocka_unit_test(interleaved_patterns_are_one_step),
        cmocka_unit_test(a_new_step_length_replaces_the_old_period),
        cmocka_unit_test(unobserved_ops_are_never_taken_for_matches),
        cmocka_unit_test(a_long_step_is_cut_into_chunks),
        cmocka_unit_test(a_multiple_of_the_period_does_not_replace_it),
        cmocka_unit_test(a_step_broken_by_an_odd_op_is_found_again_where_it_was),
        cmocka_unit_test(cuts_are_where_the_arithmetic_puts_them),
        cmocka_unit_test(steps_of_varying_length_are_cut_after_a_landmark),
        cmocka_unit_test(random_shapes_after_a_period_give_no_landmark),
        cmocka_unit_test(a_fixed_step_after_a_landmark_gets_its_period),
        cmocka_unit_test(groups_whose_contents_differ_make_the_step_the_whole_loop_body),
        cmocka_unit_test(groups_that_repeat_within_the_step_are_cut_where_their_contents_change),
        cmocka_unit_test(contents_that_repeat_or_change_every_period_keep_the_period),
        cmocka_unit_test(a_step_is_decided_when_the_stream_is_first_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
