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

#endif
