/* test_events.c - the table of the program's events (shim/engine/rec/events.c): what
 * the engine knows of each event decides whether its records and waits can
 * be ops of a run, and which run must end before anything else names it
 * (docs/engine.md, "Fork and join"); and what eager event ops tell of the
 * streams a fork/join replay may run on (rp__fj_eager). Each test states
 * one rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rec.h"
#include "seq.h"

/* The table counts a full table as a bound hit, with no context. */
static uint64_t event_bound_hits(void)
{
    return rp__bound_hits_without_context(RP_BOUND_EVENTS);
}

static CUevent ev(uintptr_t i) { return (CUevent)(0x10000 + 64 * i); }

/* An event created through the engine is known with its flags and
 * context; one it never saw created is not (its records and waits stay
 * boundaries). */
static void test_created_events_are_known_with_their_flags(void **state)
{
    (void)state;
    rp_evinfo i;
    assert_int_equal(rp__ev_get(ev(1), &i), 0);
    rp__ev_created(ev(1), CU_EVENT_DISABLE_TIMING, (CUcontext)0x77);
    assert_int_equal(rp__ev_get(ev(1), &i), 1);
    assert_int_equal(i.flags, CU_EVENT_DISABLE_TIMING);
    assert_ptr_equal(i.ctx, (CUcontext)0x77);
    assert_null(i.live_cs);
    rp__ev_destroyed(ev(1));
    assert_int_equal(rp__ev_get(ev(1), &i), 0);
}

/* A handle that comes back for a new event starts afresh: the old event's
 * run and flags are not the new one's. */
static void test_a_reused_handle_starts_afresh(void **state)
{
    (void)state;
    rp_ctxstate cs;
    rp_stream home;
    memset(&cs, 0, sizeof cs);
    memset(&home, 0, sizeof home);
    home.used = 1;
    home.trace.epoch = 5;
    rp__ev_created(ev(2), CU_EVENT_DISABLE_TIMING, NULL);
    assert_int_equal(rp__ev_touched(ev(2), &cs, &home), 1);
    rp__ev_destroyed(ev(2));
    rp__ev_created(ev(2), 0, NULL);
    rp_evinfo i;
    assert_int_equal(rp__ev_get(ev(2), &i), 1);
    assert_int_equal(i.flags, 0);
    assert_null(i.live_cs);
    rp__ev_destroyed(ev(2));
}

/* The run that last recorded or waited on an event holds it while that
 * run's stream keeps the epoch it had then; a host boundary on that stream
 * (a new epoch) lets it go. */
static void test_an_event_is_live_in_a_run_until_its_boundary(void **state)
{
    (void)state;
    rp_ctxstate cs, other;
    rp_stream home;
    memset(&cs, 0, sizeof cs);
    memset(&other, 0, sizeof other);
    memset(&home, 0, sizeof home);
    home.used = 1;
    home.trace.epoch = 9;
    rp__ev_created(ev(3), CU_EVENT_DISABLE_TIMING, NULL);
    assert_int_equal(rp__ev_touched(ev(3), &cs, &home), 1);
    rp_evinfo i;
    assert_int_equal(rp__ev_get(ev(3), &i), 1);
    assert_true(rp__ev_live_in(&i, &cs));
    assert_false(rp__ev_live_in(&i, &other));
    home.trace.epoch = 10; /* the stream's host boundary */
    assert_false(rp__ev_live_in(&i, &cs));
    home.trace.epoch = 9;
    home.used = 0; /* the stream went */
    assert_false(rp__ev_live_in(&i, &cs));
    rp__ev_destroyed(ev(3));
}

/* An event held by one context's run is not taken by another context's
 * run: that run must be settled first (the claim fails, nothing changes);
 * once settled, the event is held by none, and the other run may take it.
 * A settle of a run that no longer holds it changes nothing. */
static void test_another_contexts_run_must_settle_it_first(void **state)
{
    (void)state;
    rp_ctxstate a, b;
    rp_stream ha, hb;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&ha, 0, sizeof ha);
    memset(&hb, 0, sizeof hb);
    ha.used = hb.used = 1;
    ha.trace.epoch = 1;
    hb.trace.epoch = 2;
    rp__ev_created(ev(4), CU_EVENT_DISABLE_TIMING, NULL);
    assert_int_equal(rp__ev_touched(ev(4), &a, &ha), 1);
    assert_int_equal(rp__ev_touched(ev(4), &b, &hb), 0);
    rp_evinfo held;
    assert_int_equal(rp__ev_get(ev(4), &held), 1);
    assert_ptr_equal(held.live_cs, &a);
    /* A stale settle (another run's view) leaves it alone. */
    rp_evinfo stale = held;
    stale.live_epoch = 99;
    rp__ev_settled(ev(4), &stale);
    rp_evinfo now;
    assert_int_equal(rp__ev_get(ev(4), &now), 1);
    assert_ptr_equal(now.live_cs, &a);
    rp__ev_settled(ev(4), &held);
    assert_int_equal(rp__ev_get(ev(4), &now), 1);
    assert_null(now.live_cs);
    assert_int_equal(rp__ev_touched(ev(4), &b, &hb), 1);
    /* The same context's runs pass it on to each other. */
    assert_int_equal(rp__ev_touched(ev(4), &b, &hb), 1);
    rp__ev_destroyed(ev(4));
}

/* A replay's record of the event is remembered (generation and stream),
 * for the next replay to know it need not wait for it. */
static void test_a_replays_record_is_remembered(void **state)
{
    (void)state;
    rp__ev_created(ev(5), CU_EVENT_DISABLE_TIMING, NULL);
    rp__ev_rerecorded(ev(5), 42, (CUstream)0x99);
    rp_evinfo i;
    assert_int_equal(rp__ev_get(ev(5), &i), 1);
    assert_int_equal(i.after_gen, 42);
    assert_ptr_equal(i.after_home, (CUstream)0x99);
    rp__ev_destroyed(ev(5));
}

/* The table holds 3,072 live events; more are unknown (a bound hit, said
 * once), and destroying events makes room again (tombstones are rebuilt
 * away). */
static void test_a_full_table_leaves_the_rest_unknown(void **state)
{
    (void)state;
    uint64_t before = event_bound_hits();
    for (uintptr_t k = 0; k < 3072; k++)
        rp__ev_created(ev(100 + k), CU_EVENT_DISABLE_TIMING, NULL);
    rp_evinfo i;
    assert_int_equal(rp__ev_get(ev(100), &i), 1);
    assert_int_equal(rp__ev_get(ev(100 + 3071), &i), 1);
    rp__ev_created(ev(100 + 3072), CU_EVENT_DISABLE_TIMING, NULL);
    assert_int_equal(rp__ev_get(ev(100 + 3072), &i), 0);
    assert_int_equal(event_bound_hits(), before + 1);
    for (uintptr_t k = 0; k < 3072; k++)
        rp__ev_destroyed(ev(100 + k));
    for (uintptr_t k = 0; k < 3072; k++)
        rp__ev_created(ev(10000 + k), CU_EVENT_DISABLE_TIMING, NULL);
    assert_int_equal(rp__ev_get(ev(10000 + 3071), &i), 1);
    assert_int_equal(event_bound_hits(), before + 1);
    for (uintptr_t k = 0; k < 3072; k++)
        rp__ev_destroyed(ev(10000 + k));
}

/* ---- stamps of streams clean for a fork/join replay (rp__fj_eager) ----- */

/* A context with a main stream and two side streams, none stamped; the
 * context struct is large, so it is static. */
static rp_ctxstate fj_cs;
static rp_stream *fj_main, *fj_side, *fj_other;
#define FJ_MAIN ((CUstream)0x5100)
#define FJ_SIDE ((CUstream)0x5200)
#define FJ_OTHER ((CUstream)0x5300)

static void fj_setup(void)
{
    memset(&fj_cs, 0, sizeof fj_cs);
    CUstream h[3] = {FJ_MAIN, FJ_SIDE, FJ_OTHER};
    for (int i = 0; i < 3; i++) {
        fj_cs.streams[i].used = 1;
        fj_cs.streams[i].handle = h[i];
        fj_cs.streams[i].cs = &fj_cs;
    }
    fj_cs.nstreams = 3;
    fj_main = &fj_cs.streams[0], fj_side = &fj_cs.streams[1], fj_other = &fj_cs.streams[2];
}

/* One op issued eagerly when rp__issued was `was`. */
static void fj_issue(rp_op_kind kind, CUstream on, CUevent e, uint64_t was)
{
    rp_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.stream = on;
    op.ev = e;
    op.sid = (uint16_t)(rp__stream_find(&fj_cs, on) - fj_cs.streams + 1); /* as coord/ numbers it */
    rp__fj_eager(&fj_cs, &op, was);
}

static int fj_clean_for(const rp_stream *x, uint64_t gen, CUstream home)
{
    return x->fj.after_gen == gen && x->fj.after_home == home;
}

/* PyTorch's main.wait_stream(side) between eager steps: the side stream's
 * last op is the record the main stream then waits on, so the side
 * stream is clean for a replay on the main stream, and stays so while
 * only the main stream gets work. */
static void test_an_eager_wait_on_the_last_record_stamps_its_stream(void **state)
{
    (void)state;
    fj_setup();
    fj_issue(RP_OP_KERNEL, FJ_SIDE, NULL, 10);
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 11);
    assert_false(fj_clean_for(fj_side, 12, FJ_MAIN));
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(1), 12);
    assert_true(fj_clean_for(fj_side, 13, FJ_MAIN));
    fj_issue(RP_OP_KERNEL, FJ_MAIN, NULL, 13);
    fj_issue(RP_OP_KERNEL, FJ_OTHER, NULL, 14);
    assert_true(fj_clean_for(fj_side, 15, FJ_MAIN));
    /* Work on the side stream itself ends it. */
    fj_issue(RP_OP_KERNEL, FJ_SIDE, NULL, 15);
    assert_false(fj_clean_for(fj_side, 16, FJ_MAIN));
    fj_issue(RP_OP_KERNEL, FJ_MAIN, NULL, 16);
    assert_false(fj_clean_for(fj_side, 17, FJ_MAIN));
}

/* The side stream had work after its record: the wait on that record
 * leaves its later work unordered, so it is not stamped. */
static void test_work_after_the_record_leaves_the_stream_unstamped(void **state)
{
    (void)state;
    fj_setup();
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 20);
    fj_issue(RP_OP_KERNEL, FJ_SIDE, NULL, 21);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(1), 22);
    assert_false(fj_clean_for(fj_side, 23, FJ_MAIN));
}

/* Anything else issued between (a boundary, another thread's call: the
 * count moved by more than the eager ops seen) ends every stamp, and
 * keeps a record from stamping its stream. */
static void test_an_issue_not_seen_ends_the_stamps(void **state)
{
    (void)state;
    fj_setup();
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 30);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(1), 32); /* 31 was someone else's */
    assert_false(fj_clean_for(fj_side, 33, FJ_MAIN));
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(2), 33);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(2), 34);
    assert_true(fj_clean_for(fj_side, 35, FJ_MAIN));
    fj_issue(RP_OP_KERNEL, FJ_MAIN, NULL, 36); /* 35 was someone else's */
    assert_false(fj_clean_for(fj_side, 37, FJ_MAIN));
    assert_int_equal(fj_side->fj.after_gen, 35);
}

/* A wait on another event, or the record's own stream waiting on it,
 * stamps nothing; a later record of the same event elsewhere is the one
 * a wait stands behind. */
static void test_only_a_wait_on_that_record_from_another_stream_stamps(void **state)
{
    (void)state;
    fj_setup();
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 40);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(2), 41);
    assert_int_equal(fj_side->fj.after_gen, 0);
    fj_issue(RP_OP_EVWAIT, FJ_SIDE, ev(1), 42);
    assert_int_equal(fj_side->fj.after_gen, 0);
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(3), 43);
    fj_issue(RP_OP_EVREC, FJ_OTHER, ev(3), 44);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(3), 45);
    assert_int_equal(fj_side->fj.after_gen, 0);
    assert_true(fj_clean_for(fj_other, 46, FJ_MAIN));
}

/* A join of two side streams (forkjoin's step: each side stream records
 * its event last, the main stream waits on both): both are stamped, each
 * by the wait on its own record; a side stream that then waits itself has
 * a new last op, and a wait on its record stamps it no more. */
static void test_a_join_of_two_side_streams_stamps_both(void **state)
{
    (void)state;
    fj_setup();
    fj_issue(RP_OP_KERNEL, FJ_SIDE, NULL, 50);
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 51);
    fj_issue(RP_OP_KERNEL, FJ_OTHER, NULL, 52);
    fj_issue(RP_OP_EVREC, FJ_OTHER, ev(2), 53);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(1), 54);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(2), 55);
    fj_issue(RP_OP_KERNEL, FJ_MAIN, NULL, 56);
    assert_true(fj_clean_for(fj_side, 57, FJ_MAIN));
    assert_true(fj_clean_for(fj_other, 57, FJ_MAIN));
    fj_setup();
    fj_issue(RP_OP_EVREC, FJ_SIDE, ev(1), 60);
    fj_issue(RP_OP_EVWAIT, FJ_SIDE, ev(3), 61);
    fj_issue(RP_OP_EVWAIT, FJ_MAIN, ev(1), 62);
    assert_int_equal(fj_side->fj.after_gen, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_events_are_known_with_their_flags),
        cmocka_unit_test(test_a_reused_handle_starts_afresh),
        cmocka_unit_test(test_an_event_is_live_in_a_run_until_its_boundary),
        cmocka_unit_test(test_another_contexts_run_must_settle_it_first),
        cmocka_unit_test(test_a_replays_record_is_remembered),
        cmocka_unit_test(test_a_full_table_leaves_the_rest_unknown),
        cmocka_unit_test(test_an_eager_wait_on_the_last_record_stamps_its_stream),
        cmocka_unit_test(test_work_after_the_record_leaves_the_stream_unstamped),
        cmocka_unit_test(test_an_issue_not_seen_ends_the_stamps),
        cmocka_unit_test(test_only_a_wait_on_that_record_from_another_stream_stamps),
        cmocka_unit_test(test_a_join_of_two_side_streams_stamps_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
