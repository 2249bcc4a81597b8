/* idle.h - the idle watch (idle.c). Part of coord.h, the
 * coordinator's header */
#ifndef REPRISE_IDLE_H
#define REPRISE_IDLE_H

#include "engine.h"

/* ---- idle.c ------------------------------------------------------------------------ */

/* A deferral began: the idle watch (REPRISE_IDLE_US) makes sure it does not
 * wait on the host's idle time. */
void rp__idle_watch(void);

/* A deferral began (a stream's first op held): the idle watch makes sure
 * it does not wait on the host's idle time, and the exit hook that sees
 * every deferred op reach the driver at exit is armed. */
void rp__deferral_began(void);

#endif
