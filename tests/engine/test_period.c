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
        rp__period_feed(p, *pos, key(pat[(phase + i) % len]));
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
        rp__period_feed(p, (*pos)++, key(i));
    unsigned int t = draw(x, 3);
    for (unsigned int i = 0; i < 4 + t; i++)
        rp__period_feed(p, (*pos)++, key(100 + 10 * t + i));
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
        assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
    uint64_t x = 12345;
    for (uint64_t pos = 0; pos < 20000; pos++) {
        rp__period_feed(&p, pos, key(draw(&x, 6)));
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
    /* One op observed in every 8: no two observed ops are ever a period apart. */
    for (uint64_t pos = 0; pos < 4000; pos += 8)
        rp__period_feed(&p, pos, key((unsigned int)(pos / 8)));
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 8, 0, 32);
    assert_int_equal(p.d, 8);
    long cut = cut_offset(&p, pos, 8, 0);
    assert_true(cut >= 0);
    for (int odd = 0; odd < 8; odd++) {
        feed_pattern(&p, &pos, step8, 8, 0, (size_t)odd);
        rp__period_feed(&p, pos++, key(100 + (unsigned int)odd)); /* in place of one */
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
    uint64_t x = 777;
    for (int round = 0; round < 200; round++) {
        lcg(&x);
        p.d = 1 + (x >> 33) % 40;
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
            int want = pos >= p.base && ((pos - p.base) % p.d == 0 ||
                                         (chunk && (pos - p.base) % p.d % chunk == 0));
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
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
    assert_int_equal(rp__period_init(&p, 1, 2), 0);
    uint64_t pos = 0;
    feed_pattern(&p, &pos, step8, 8, 0, 200);
    assert_int_equal(p.d, 8);
    uint64_t x = 5;
    for (int i = 0; i < 20000; i++) {
        rp__period_feed(&p, pos++, key(draw(&x, 6)));
        if (i >= 1000) {
            assert_int_equal(p.landmark, 0);
            assert_int_equal(p.d, 0);
        }
    }
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
