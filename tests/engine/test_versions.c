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
static rp_ctxstate ctx; /* its counters */
static uint8_t seq_params[2][BIG];
static struct rp_vols *vols; /* the sequence's list (seq.ex.vols), of ops 0 and 1 */

static int setup(void **state)
{
    (void)state;
    memset(&seq, 0, sizeof seq);
    memset(&ctx, 0, sizeof ctx);
    seq.cs = &ctx;
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
    vols = calloc(1, sizeof *vols + 2 * sizeof vols->e[0]);
    if (!vols)
        return -1;
    vols->n = 2;
    seq.ex.vols = vols;
    return seq.ex.held ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rp__ver_free(&seq);
    free(seq.ex.held);
    free(vols);
    return 0;
}

/* The version of op k's values `p` (the sequence's function and geometry). */
static uint64_t ver(size_t k, const uint8_t *p, uint64_t clock)
{
    seq.ex.vclock = clock;
    return rp__ver_of(&seq, k, &ops[k], ops[k].grid, p);
}

/* The same as the replay's scan asks for it (exec.c, scan_full): through
 * the op's entry, which notes a value found again one or two clocks after
 * it was seen, and where it does, looked for first where it was found. */
#define ent (vols->e)
/* Both entries as a list made new has them (none unversioned). */
static void entries_new(void)
{
    memset(ent, 0, 2 * sizeof ent[0]);
    seq.ex.nfresh = 0;
}
static uint64_t find(size_t k, const uint8_t *p, const unsigned int *g, uint64_t clock)
{
    seq.ex.vclock = clock;
    ent[k].k = (uint32_t)k;
    return ent[k].again ? rp__ver_again(&seq, &ent[k], &ops[k], g, p)
                        : rp__ver_find(&seq, &ent[k], &ops[k], g, p);
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
    seq.ex.vclock = 2;
    uint64_t vg = rp__ver_of(&seq, 0, &ops[0], g, a);
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

/* A value kept from step to step, or two buffers taking turns, is looked
 * for first where it was found one or two clocks before (versions.c,
 * rp__ver_again, as the scan's entry notes: rp_vol.again): still compared
 * in full there, so that a value that differs deep in the block, or in
 * the geometry alone, gets a number of its own. */
static void a_value_found_again_is_still_compared_in_full(void **state)
{
    (void)state;
    entries_new();
    const unsigned int *g0 = ops[0].grid;
    uint8_t a[BIG], a2[BIG], b[BIG], d[BIG], e[BIG];
    block(a, 300, 1);
    memcpy(a2, a, BIG);
    block(b, 300, 2);
    block(d, 300, 1);
    d[BIG - 9] = 7; /* the same as `a` but for a word near the end */
    block(e, 300, 1);
    e[BIG - 1] = 7; /* ... and for its last byte */
    uint64_t va = find(0, a, g0, 1);
    assert_true(va != 0);
    for (uint64_t c = 2; c < 6; c++) /* kept from step to step */
        assert_int_equal(find(0, c & 1 ? a : a2, g0, c), va);
    assert_int_equal(ent[0].again, 1);
    uint64_t vd = find(0, d, g0, 6);
    assert_true(vd && vd != va);
    assert_int_equal(find(0, a, g0, 7), va);
    assert_int_equal(find(0, a, g0, 8), va);
    assert_int_equal(ent[0].again, 1);
    uint64_t ve = find(0, e, g0, 9);
    assert_true(ve && ve != va && ve != vd);
    assert_int_equal(find(0, a, g0, 10), va);
    assert_int_equal(find(0, a, g0, 11), va);
    unsigned int g[7] = {1, 1, 1, 2, 1, 1, 0}; /* another geometry, the same block */
    uint64_t vg = find(0, a, g, 12);
    assert_true(vg && vg != va && vg != vd && vg != ve);
    /* Two buffers taking turns (taken for such once both came back),
     * then a third value like one of them but deep in the block. */
    uint64_t vb = find(0, b, g0, 13);
    assert_true(vb && vb != va);
    assert_int_equal(find(0, a, g0, 14), va);
    assert_int_equal(find(0, b, g0, 15), vb);
    assert_int_equal(ent[0].again, 0); /* one came back: not yet */
    for (uint64_t c = 16; c < 20; c++)
        assert_int_equal(find(0, c & 1 ? b : a, g0, c), c & 1 ? vb : va);
    assert_int_equal(ent[0].again, 2);
    assert_int_equal(find(0, d, g0, 20), vd); /* where `a` was found two clocks ago */
    assert_int_equal(find(0, b, g0, 21), vb);
    assert_int_equal(find(0, a, g0, 22), va);
    assert_int_equal(find(0, b, g0, 23), vb);
    assert_int_equal(find(0, a, g0, 24), va);
    assert_int_equal(ent[0].again, 2);
    assert_int_equal(find(0, e, g0, 25), ve); /* where `b` was */
    /* One value every other clock, a new one between (taken for turns:
     * the slot looked at first is not the new value's). */
    uint8_t n1[BIG], n2[BIG];
    block(n1, 200, 1);
    block(n2, 200, 2);
    assert_int_equal(find(0, a, g0, 26), va);
    uint64_t vn1 = find(0, n1, g0, 27);
    assert_int_equal(find(0, a, g0, 28), va);
    uint64_t vn2 = find(0, n2, g0, 29);
    assert_true(vn1 && vn2 && vn1 != vn2 && vn1 != va && vn2 != va);
    assert_int_equal(ent[0].again, 0);
    /* A value found where it was keeps its number however many new ones
     * come: it was seen (found so), as by its hash. */
    uint8_t nc[BIG];
    for (uint64_t c = 31; c < 31 + 4 * RP_SEQ_RECENT + 8; c++) {
        assert_int_equal(find(0, a, g0, c), va);
        block(nc, 120, 5);
        memcpy(nc + 200, &c, sizeof c);
        uint64_t vc = ver(0, nc, c);
        assert_true(vc && vc != va);
    }
    assert_int_equal(ent[0].again, 1);
    /* The same numbers asked for the plain way. */
    uint64_t now = 31 + 4 * RP_SEQ_RECENT + 8;
    assert_int_equal(ver(0, a, now), va);
    uint64_t vd2 = ver(0, d, now); /* long unseen: its number, or a new one */
    assert_true(vd2 && vd2 != va);
    /* A small block, hashed whole, the same way. */
    uint8_t s1[16] = {1}, s2[16] = {1};
    s2[15] = 2;
    uint64_t v1 = find(1, s1, ops[1].grid, 1);
    assert_int_equal(find(1, s1, ops[1].grid, 2), v1);
    assert_int_equal(find(1, s1, ops[1].grid, 3), v1);
    assert_int_equal(ent[1].again, 1);
    uint64_t v2 = find(1, s2, ops[1].grid, 4);
    assert_true(v2 && v2 != v1);
}

/* An op whose values are new at more than RP_SEQ_RECENT lookups in a row
 * (a decoder's activations) is told by its bytes from then on
 * (RP_VOL_FRESH: exec.c asks no version); values that rotate through as
 * many buffers as the window, each back after RP_SEQ_RECENT replays,
 * never are: a content that comes back within the window is still found. */
static void values_new_at_every_lookup_go_unversioned_and_a_window_of_rotation_does_not(void **state)
{
    (void)state;
    entries_new();
    ent[0].how = RP_VOL_VER;
    uint8_t b[BIG];
    uint64_t c = 1;
    for (; c <= RP_SEQ_RECENT + 1; c++) {
        assert_int_equal(ent[0].how, RP_VOL_VER);
        block(b, 40, 3);
        memcpy(b + 100, &c, sizeof c); /* a new value every replay */
        uint64_t v = find(0, b, ops[0].grid, c);
        assert_true(v != 0);
        assert_int_equal(ent[0].fresh, c <= RP_SEQ_RECENT ? c : RP_SEQ_RECENT);
    }
    assert_int_equal(ent[0].how, RP_VOL_FRESH);
    assert_int_equal(ent[0].again, 0);
    assert_int_equal(ent[0].at, 0);
    assert_int_equal(seq.ex.nfresh, 1); /* the sequence counts it (no content of it is hashed then: held.h) */
    /* Its value found again (the last one, which it was given a version
     * for): told by version again, and counted so. */
    seq.ex.vclock = c;
    rp__fresh_lookup(&seq, &ent[0], &ops[0], ops[0].grid, b, 0);
    assert_int_equal(ent[0].how, RP_VOL_VER);
    assert_int_equal(seq.ex.nfresh, 0);
    assert_true(seq.ex.occ_ver[0] != 0);
    /* RP_SEQ_RECENT buffers in turn: the first comes back at the lookup
     * after the RP_SEQ_RECENT-th, before the entry would go unversioned. */
    entries_new();
    ent[0].how = RP_VOL_VER;
    uint64_t first[RP_SEQ_RECENT];
    for (uint64_t t = 0; t < 6 * RP_SEQ_RECENT; t++, c++) {
        uint64_t which = t % RP_SEQ_RECENT;
        block(b, 40, 4);
        memcpy(b + 100, &which, sizeof which);
        uint64_t v = find(0, b, ops[0].grid, c);
        if (t < RP_SEQ_RECENT)
            first[which] = v;
        else
            assert_int_equal(v, first[which]);
        assert_int_equal(ent[0].how, RP_VOL_VER);
        assert_true(ent[0].fresh <= RP_SEQ_RECENT);
    }
    /* A value found again after new ones starts the count over. */
    entries_new();
    ent[0].how = RP_VOL_VER;
    for (uint64_t t = 0; t < 4 * RP_SEQ_RECENT; t++, c++) {
        block(b, 40, 5);
        uint64_t tag = t % RP_SEQ_RECENT ? 1000 + t : 7; /* 7 every RP_SEQ_RECENT */
        memcpy(b + 100, &tag, sizeof tag);
        (void)find(0, b, ops[0].grid, c);
        assert_int_equal(ent[0].how, RP_VOL_VER);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(equal_values_share_a_number_and_others_never_do, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(held_and_recent_numbers_are_never_given_to_another_value,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_value_found_again_is_still_compared_in_full, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            values_new_at_every_lookup_go_unversioned_and_a_window_of_rotation_does_not, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
