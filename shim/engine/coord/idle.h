/* idle.h - the idle watch (idle.c). Part of coord.h, the
 * coordinator's header */
#ifndef REPRISE_IDLE_H
#define REPRISE_IDLE_H

#include "engine.h"
#include "program.h" /* rp__arm_exit_hook */

/* ---- idle.c ------------------------------------------------------------------------ */

/* A deferral began: the idle watch (REPRISE_IDLE_US) makes sure it does not
 * wait on the host's idle time. */
void rp__idle_watch(void);

/* A deferral began (a stream's first op held): the idle watch makes sure
 * it does not wait on the host's idle time, and the exit hook is armed.
 * Inline: a loop that replays steadily begins a deferral every step, and
 * both are set up by then (a load each). */
static inline void rp__deferral_began(void)
{
    if (rp__eng.cfg.idle_us && !atomic_load_explicit(&rp__eng.idle.looking, memory_order_relaxed))
        rp__idle_watch();
    if (!atomic_load_explicit(&rp__eng.exit_armed, memory_order_relaxed))
        rp__arm_exit_hook();
}

#endif
