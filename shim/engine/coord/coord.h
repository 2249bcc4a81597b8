/* coord.h - the coordinator, the top of the engine: one hook per
 * interposed entry (hooks*.c, from the roles in entries.h), the contexts
 * and stream records (contexts.c), the orderings the driver implies between
 * streams, boundaries and the resolution of deferred work on behalf of
 * whoever must (streams.c), the per-thread stream's hand-off (handoff.c),
 * the program's own captures, fork and exit (program.c), the idle watch
 * (idle.c), installation and reset (install.c). It asks learning and the
 * matcher what to do with each call and does what they report; nothing
 * below calls back up. State is per context, under that context's lock. */
#ifndef REPRISE_COORD_H
#define REPRISE_COORD_H

/* One header a module: each holds the inline functions of its own .c, so
 * that the coordinator's files reach each other only as their calls do. */
#include "contexts.h"
#include "idle.h"
#include "install.h"
#include "program.h"
#include "streams.h"

#endif
