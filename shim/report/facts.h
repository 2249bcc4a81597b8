/* facts.h - the engine's state as the report reads it, shared by the stats
 * file (stats.c) and the summary at exit (summary.c). */
#ifndef REPRISE_FACTS_H
#define REPRISE_FACTS_H

#include "coord.h"
#include "explain.h"
#include "out.h"

/* The limit bound `b` stands at (0 for the fixed ones, whose description
 * says it). */
uint64_t rp__report_limit(int b);
/* The capturable ops counted in `e` (the sum of ops_seen). */
uint64_t rp__report_ops(const struct rp__engine_stats *e);
/* Add context counters `e` to `sum`, member by member. */
void rp__report_add(struct rp__engine_stats *sum, const struct rp__engine_stats *e);
/* Add the bound hits no context counted (the process's own). */
void rp__report_add_contextless(struct rp__engine_stats *sum);
/* The report lines of the sequences (dropped ones first), in a buffer of
 * the report's that the next call overwrites; *n gets how many. */
const struct rp__seq_info *rp__report_seqs(size_t *n);
/* Seconds since the process started (0 when /proc cannot say). */
double rp__report_wall_s(void);

#endif
