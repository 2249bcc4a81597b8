/* test_events.c - the table of the program's events (shim/engine/rec/events.c): what
 * the engine knows of each event decides whether its records and waits can
 * be ops of a run, and which run must end before anything else names it
 * (docs/engine.md, "Fork and join"). Each test states one rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rec.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_events_are_known_with_their_flags),
        cmocka_unit_test(test_a_reused_handle_starts_afresh),
        cmocka_unit_test(test_an_event_is_live_in_a_run_until_its_boundary),
        cmocka_unit_test(test_another_contexts_run_must_settle_it_first),
        cmocka_unit_test(test_a_replays_record_is_remembered),
        cmocka_unit_test(test_a_full_table_leaves_the_rest_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
