/* init.h - the once-only initialisation (init.c), as the face sees it: the
 * wrappers and the dlsym hook make sure the shim is initialised before they
 * look at its tables. Only the face includes this: everything below it is
 * installed by init and never calls back up. */
#ifndef RP_INIT_H
#define RP_INIT_H

#include "core.h"

/* Initialise once, from whichever thread calls first.  Returns with the state
 * READY, except when called again by the thread that is initialising (from a
 * constructor the driver's dlopen runs, say): then it returns at once and the
 * caller sees whatever is filled in so far (the real table may be empty). */
void rp__init_slow(void);
static inline void rp__ensure_init(void)
{
    if (RP_UNLIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) != RP_INIT_READY))
        rp__init_slow();
}

/* Install `real` as the driver and build everything derived from it (routes,
 * core table) with reprise enabled or not, then mark the state READY.  Used
 * by rp__init_slow after loading the driver, and by unit tests with a table
 * of fakes instead (no dlopen, no environment). */
void rp__install(const struct rp__driver *real, bool enabled);

/* ---- flush.c: the report while the program runs and at a signal ---------- */

/* With the engine on and a report asked for (REPRISE_STATS or
 * REPRISE_SUMMARY): start the thread that rewrites the stats file every
 * REPRISE_STATS_EVERY seconds of activity, and give SIGTERM, SIGINT and
 * SIGHUP, where the program has not claimed them, a handler that has the
 * thread write the final report before the signal takes its default
 * course.  Where a pipe or the thread cannot be made, nothing is installed:
 * the report is still written at exit. */
void rp__flush_start(void);
/* The final report (the stats file, then the summary), once per process:
 * at exit (`at_exit`) or at a signal, whichever comes first. */
void rp__report_final(bool at_exit);
/* In a forked child: the handlers still ours go back to the default. */
void rp__flush_forked(void);

#endif
