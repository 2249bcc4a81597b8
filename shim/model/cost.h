/* cost.h - the cost model (DESIGN.md §5, docs/engine.md "What a replay with
 * updates must beat"): what an eager launch, a node update and a graph
 * launch cost on this machine, from samples of calls the engine makes anyway,
 * and the choice made with them: whether replaying n ops with k node
 * updates costs less than issuing the n ops eagerly. Pure: the caller owns
 * the state (one rp_costs per context, under its lock) and the settings. */
#ifndef REPRISE_COST_H
#define REPRISE_COST_H

#include <stddef.h>
#include <stdint.h>

enum rp_cost_kind { RP_COST_EAGER, RP_COST_UPDATE, RP_COST_LAUNCH, RP_COST_KINDS };

/* The settings (REPRISE_MAX_UPDATES, REPRISE_COSTS). */
typedef struct rp_cost_cfg {
    size_t max_updates;    /* a replay may always update this many nodes */
    int model;             /* REPRISE_COSTS not off: past max_updates, costs decide */
    int pinned;            /* REPRISE_COSTS=E,U,L: these costs, not measured ones */
    uint64_t ns[RP_COST_KINDS];
} rp_cost_cfg;

/* Measured means, per kind, in ns. */
typedef struct rp_costs {
    uint64_t avg[RP_COST_KINDS];
    uint32_t n[RP_COST_KINDS]; /* samples taken, up to 16 (then a moving mean) */
    uint32_t tick;             /* eager launches seen, to time one in 32 */
} rp_costs;

/* The monotonic clock, in ns. */
uint64_t rp__cost_now(void);
/* `count` calls of `kind` took `ns` in all. */
void rp__cost_sample(rp_costs *c, enum rp_cost_kind kind, uint64_t ns, uint64_t count);
/* 1 when a replay of `n` ops with `k` node updates may run: k within
 * max_updates, or, past it, k updates and a graph launch expected to cost
 * less than n eager launches. */
int rp__cost_updates_pay(const rp_costs *c, const rp_cost_cfg *cfg, size_t n, size_t k);
/* Read REPRISE_COSTS ("measure", "off" or "E,U,L" ns) into cfg (its
 * max_updates untouched). Returns 0, or -1 (said in one line, measuring)
 * when malformed. */
int rp__cost_parse(const char *s, rp_cost_cfg *cfg);
/* Whether this eager launch is one the model times (one in 32). */
static inline int rp__cost_time_this(rp_costs *c, const rp_cost_cfg *cfg)
{
    return cfg->model && !cfg->pinned && !(++c->tick & 31);
}

#endif
