/* test_versions.c - the numbered values a volatile kernel op takes
 * (shim/engine/seq/versions.c): a number names one value exactly, whatever
 * the proposal hash says, and is never given to another value while an
 * executable holds it or a recent replay had it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "seq.h"

#define BIG 512 /* bytes: a block its hash reads at probes only */

static rp_det_entry entry;
static rp_op ops[2];
static uint64_t vmask[2];
static rp_seq seq;
static uint8_t seq_params[2][BIG];

static int setup(void **state)
{
    (void)state;
    memset(&seq, 0, sizeof seq);
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < 2; k++) {
        ops[k].kind = RP_OP_KERNEL;
        ops[k].func = (CUfunction)(uintptr_t)(0x100 + k);
        ops[k].param_bytes = k ? 16 : BIG;
        ops[k].params = seq_params[k];
        ops[k].grid[0] = ops[k].block[0] = 1;
        vmask[k] = 1; /* parameter 0 volatile */
    }
    entry.n = 2;
    entry.ops = ops;
    seq.det = &entry;
    seq.vmask = vmask;
    seq.ex.held = calloc(2, sizeof *seq.ex.held);
    return seq.ex.held ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rp__ver_free(&seq);
    free(seq.ex.held);
    return 0;
}

/* The version of op k's values `p` (the sequence's function and geometry). */
static uint64_t ver(size_t k, const uint8_t *p, uint64_t clock)
{
    return rp__ver_of(&seq, k, &ops[k], ops[k].grid, p, clock);
}

/* A block of op 0 that differs from the others only at byte `at`. */
static void block(uint8_t *b, size_t at, uint8_t v)
{
    memset(b, 0x5a, BIG);
    b[at] = v;
}

/* Values deep in a large block, which the first proposal hash does not
 * read: told apart by comparing, then by the word it learnt to read. */
static void equal_values_share_a_number_and_others_never_do(void **state)
{
    (void)state;
    uint8_t a[BIG], b[BIG], c[BIG];
    block(a, 300, 1);
    block(b, 300, 2);
    block(c, 17, 9);
    uint64_t va = ver(0, a, 1), vb = ver(0, b, 1), vc = ver(0, c, 1);
    assert_true(va && vb && vc);
    assert_true(va != vb && vb != vc && va != vc);
    uint8_t a2[BIG];
    memcpy(a2, a, BIG);
    assert_int_equal(ver(0, a2, 2), va);
    assert_int_equal(ver(0, b, 2), vb);
    assert_int_equal(ver(0, c, 2), vc);
    /* Another geometry is another value, with the same block. */
    unsigned int g[7] = {2, 1, 1, 1, 1, 1, 0};
    uint64_t vg = rp__ver_of(&seq, 0, &ops[0], g, a, 2);
    assert_true(vg && vg != va);
    /* A small block is hashed whole. */
    uint8_t s1[16] = {1}, s2[16] = {2};
    uint64_t v1 = ver(1, s1, 2), v2 = ver(1, s2, 2);
    assert_true(v1 && v2 && v1 != v2);
    assert_int_equal(ver(1, s1, 3), v1);
}

/* A number held by an executable, or seen in the last RP_SEQ_RECENT
 * replays, keeps naming its value however many others come; one neither
 * held nor recent may be given up (its value, coming back, gets a new
 * number, never one still in use). */
static void held_and_recent_numbers_are_never_given_to_another_value(void **state)
{
    (void)state;
    uint8_t held[BIG], old[BIG], b[BIG];
    block(held, 40, 1);
    block(old, 40, 2);
    uint64_t vh = ver(0, held, 1), vo = ver(0, old, 1);
    seq.ex.held[0].ver = vh; /* an executable holds it */
    uint64_t seen[200];
    for (uint64_t clock = 2; clock < 200; clock++) {
        block(b, 40, 3);
        memcpy(b + 100, &clock, sizeof clock); /* a new value every replay */
        seen[clock] = ver(0, b, clock);
        assert_true(seen[clock] != vh && seen[clock] != vo);
        /* The values of the last RP_SEQ_RECENT replays keep their numbers. */
        for (uint64_t c = clock > RP_SEQ_RECENT + 2 ? clock - RP_SEQ_RECENT : 2; c < clock; c++) {
            block(b, 40, 3);
            memcpy(b + 100, &c, sizeof c);
            assert_int_equal(ver(0, b, clock), seen[c]);
        }
    }
    assert_int_equal(ver(0, held, 200), vh);
    uint64_t back = ver(0, old, 200); /* long unseen, not held: a number of its own */
    assert_true(back && back != vh);
    for (uint64_t c = 200 - RP_SEQ_RECENT; c < 200; c++)
        assert_true(back != seen[c]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(equal_values_share_a_number_and_others_never_do, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(held_and_recent_numbers_are_never_given_to_another_value,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
