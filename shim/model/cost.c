/* cost.c - what an eager launch, a node update and a graph launch cost on
 * the machine the program runs on, measured on calls the engine makes
 * anyway (a sample of the eager launches it forwards, the updates it
 * applies, the graph launches it replays), and the choice made with them
 * (DESIGN.md §5, docs/engine.md "What a replay with updates must beat"):
 * whether replaying n ops with k node updates costs less than issuing the
 * n ops eagerly. Pure: the caller keeps the state, under its lock. */
#include "cost.h"

#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Before enough samples: an eager launch as on an H200 (CUDA-FACTS.md:
 * 3.2-3.7 us), and the others in the proportions observed there, to the
 * eager launch measured here when it is: a node update 0.25-0.7 us (the
 * upper end taken), a graph launch as two eager launches (its fixed part;
 * conservative). */
#define PRIOR_EAGER_NS 3500u
#define TRUSTED 8u /* samples before a measurement replaces its prior */

uint64_t rp__cost_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void rp__cost_sample(rp_costs *c, enum rp_cost_kind kind, uint64_t ns, uint64_t count)
{
    if (!count)
        return;
    uint64_t per = ns / count;
    /* A running mean over the first samples, then an exponentially
     * weighted one (1/16): the machine's state may change (clocks, load). */
    if (c->n[kind] < 16) {
        c->n[kind]++;
        c->avg[kind] += ((int64_t)per - (int64_t)c->avg[kind]) / (int64_t)c->n[kind];
    } else {
        c->avg[kind] += ((int64_t)per - (int64_t)c->avg[kind]) / 16;
    }
}

/* The cost of one `kind`, in ns: pinned (REPRISE_COSTS), measured, or the
 * prior. */
static uint64_t cost_of(const rp_costs *c, const rp_cost_cfg *cfg, enum rp_cost_kind kind)
{
    if (cfg->pinned)
        return cfg->ns[kind];
    if (c->n[kind] >= TRUSTED)
        return c->avg[kind];
    uint64_t eager = c->n[RP_COST_EAGER] >= TRUSTED ? c->avg[RP_COST_EAGER] : PRIOR_EAGER_NS;
    switch (kind) {
    case RP_COST_UPDATE:
        return eager * 7 / 35; /* 0.7 us against 3.5 */
    case RP_COST_LAUNCH:
        return 2 * eager;
    default:
        return eager;
    }
}

int rp__cost_updates_pay(const rp_costs *c, const rp_cost_cfg *cfg, size_t n, size_t k)
{
    if (k <= cfg->max_updates)
        return 1;
    if (!cfg->model)
        return 0;
    uint64_t replay =
        (uint64_t)k * cost_of(c, cfg, RP_COST_UPDATE) + cost_of(c, cfg, RP_COST_LAUNCH);
    return replay < (uint64_t)n * cost_of(c, cfg, RP_COST_EAGER);
}

int rp__cost_parse(const char *s, rp_cost_cfg *cfg)
{
    cfg->model = 1;
    cfg->pinned = 0;
    if (!s || !s[0])
        return 0;
    unsigned long long ns[3];
    switch (rp__option_costs(s, ns)) {
    case 0:
        return 0;
    case 1:
        cfg->model = 0;
        return 0;
    case 2:
        cfg->pinned = 1;
        cfg->ns[RP_COST_EAGER] = ns[0];
        cfg->ns[RP_COST_UPDATE] = ns[1];
        cfg->ns[RP_COST_LAUNCH] = ns[2];
        return 0;
    default:
        /* The options refuse such a value before it gets here: a caller
         * other than the options (a test) hears of it. */
        rp__error("REPRISE_COSTS=%s: want measure, off, or EAGER,UPDATE,LAUNCH in ns "
                  "(EAGER > 0); measuring instead", s);
        return -1;
    }
}
