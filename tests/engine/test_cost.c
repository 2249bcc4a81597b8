/* test_cost.c - the cost model's decision (cost.c): a replay with k node
 * updates may run when k is within REPRISE_MAX_UPDATES, or past it when k
 * updates and a graph launch are expected to cost less than the n eager
 * launches, with costs pinned, measured, or from the priors. The engine
 * counts the samples for the report (rp__cost_note): test_engine checks it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cost.h"
#include "core.h"

static int errors;

void rp__log(int level, const char *fmt, ...)
{
    (void)fmt;
    if (level == RP_LOG_ERROR)
        errors++;
}

static rp_costs c;
static rp_cost_cfg cfg;

static int setup(void **state)
{
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    memset(&c, 0, sizeof c);
    cfg.max_updates = 4;
    cfg.model = 1;
    errors = 0;
    return 0;
}

static void feed(enum rp_cost_kind kind, uint64_t ns, int times)
{
    for (int i = 0; i < times; i++)
        rp__cost_sample(&c, kind, ns, 1);
}

static void within_max_updates_always_pays(void **state)
{
    (void)state;
    cfg.model = 0;
    assert_true(rp__cost_updates_pay(&c, &cfg, 2, 4));
    assert_false(rp__cost_updates_pay(&c, &cfg, 100, 5)); /* off: a strict cap */
    cfg.model = 1;
    feed(RP_COST_UPDATE, 1000000, 16); /* updates dear: still allowed up to the cap */
    assert_true(rp__cost_updates_pay(&c, &cfg, 2, 4));
}

static void pinned_costs_decide_past_max_updates(void **state)
{
    (void)state;
    cfg.pinned = 1;
    cfg.ns[RP_COST_EAGER] = 1000;
    cfg.ns[RP_COST_UPDATE] = 100;
    cfg.ns[RP_COST_LAUNCH] = 2000;
    assert_true(rp__cost_updates_pay(&c, &cfg, 100, 80));   /* 10,000 < 100,000 */
    cfg.ns[RP_COST_UPDATE] = 2000;
    assert_false(rp__cost_updates_pay(&c, &cfg, 100, 80));  /* 162,000 > 100,000 */
    feed(RP_COST_UPDATE, 1, 16);                       /* pinned: samples do not count */
    assert_false(rp__cost_updates_pay(&c, &cfg, 100, 80));
}

static void priors_before_samples_are_the_h200_proportions(void **state)
{
    (void)state;
    cfg.max_updates = 1;
    /* eager 3.5 us, update 0.7 us, graph launch 7 us */
    assert_true(rp__cost_updates_pay(&c, &cfg, 100, 100));  /* 77 us < 350 us */
    assert_true(rp__cost_updates_pay(&c, &cfg, 10, 10));    /* 14 us < 35 us */
    assert_false(rp__cost_updates_pay(&c, &cfg, 2, 2));     /* 8.4 us > 7 us */
    /* Measured eager launches rescale the priors of the others. */
    feed(RP_COST_EAGER, 100, 16);                      /* update 20 ns, launch 200 ns */
    assert_true(rp__cost_updates_pay(&c, &cfg, 100, 100));  /* 2,200 < 10,000 */
    assert_false(rp__cost_updates_pay(&c, &cfg, 2, 2));     /* 240 > 200 */
}

static void measured_costs_replace_the_priors(void **state)
{
    (void)state;
    feed(RP_COST_EAGER, 100, 16);
    feed(RP_COST_UPDATE, 500, 16);
    feed(RP_COST_LAUNCH, 200, 16);
    assert_false(rp__cost_updates_pay(&c, &cfg, 100, 100)); /* 50,200 > 10,000 */
    assert_true(rp__cost_updates_pay(&c, &cfg, 100, 5));    /* 2,700 < 10,000 */
    /* Fewer than 8 samples: not trusted yet. */
    memset(&c, 0, sizeof c);
    feed(RP_COST_UPDATE, 1000000, 7);
    assert_true(rp__cost_updates_pay(&c, &cfg, 100, 100));  /* priors: 77 us < 350 us */
}

static void the_mean_moves_a_sixteenth_after_sixteen_samples(void **state)
{
    (void)state;
    feed(RP_COST_UPDATE, 160, 16);
    assert_int_equal(c.avg[RP_COST_UPDATE], 160);
    rp__cost_sample(&c, RP_COST_UPDATE, 480, 1);
    assert_int_equal(c.avg[RP_COST_UPDATE], 180);
    rp__cost_sample(&c, RP_COST_UPDATE, 800, 4); /* 4 calls in 800 ns: 200 each */
    assert_int_equal(c.avg[RP_COST_UPDATE], 181);
}

static void reprise_costs_values(void **state)
{
    (void)state;
    rp_cost_cfg pc;
    memset(&pc, 0, sizeof pc);
    assert_int_equal(rp__cost_parse("measure", &pc), 0);
    assert_true(pc.model && !pc.pinned);
    assert_int_equal(rp__cost_parse("", &pc), 0);
    assert_true(pc.model && !pc.pinned);
    assert_int_equal(rp__cost_parse("off", &pc), 0);
    assert_false(pc.model);
    assert_int_equal(rp__cost_parse("3500,600,7000", &pc), 0);
    assert_true(pc.model && pc.pinned);
    assert_int_equal(pc.ns[RP_COST_EAGER], 3500);
    assert_int_equal(pc.ns[RP_COST_UPDATE], 600);
    assert_int_equal(pc.ns[RP_COST_LAUNCH], 7000);
    static const char *const bad[] = {"cheap", "1,2", "1,2,3,4", "0,1,1", "1,2,3x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errors = 0;
        assert_int_equal(rp__cost_parse(bad[i], &pc), -1);
        assert_int_equal(errors, 1);
        assert_true(pc.model && !pc.pinned); /* measuring instead */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(within_max_updates_always_pays, setup),
        cmocka_unit_test_setup(pinned_costs_decide_past_max_updates, setup),
        cmocka_unit_test_setup(priors_before_samples_are_the_h200_proportions, setup),
        cmocka_unit_test_setup(measured_costs_replace_the_priors, setup),
        cmocka_unit_test_setup(the_mean_moves_a_sixteenth_after_sixteen_samples, setup),
        cmocka_unit_test_setup(reprise_costs_values, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
