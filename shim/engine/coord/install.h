/* install.h - installing the engine and resetting it (install.c). Part
 * of coord.h, the coordinator's header */
#ifndef REPRISE_INSTALL_H
#define REPRISE_INSTALL_H

#include "engine.h"

/* ---- install.c ------------------------------------------------------------------ */

/* Install the engine into `core`, calling the driver through `drv` (which
 * must outlive the engine), configured by `cfg`: every interposed entry
 * gets the hook its role in entries.h names. Returns 0, or -1 (one line
 * logged, `core` left forwarding) when `drv` lacks an entry point the
 * engine needs. */
int rp__engine_install(struct rp__driver *core, const struct rp__driver *drv,
                       const struct rp__engine_config *cfg);
/* Forget everything the engine holds, as if it had just been installed
 * (tests: every context, stream, sequence, event and report line goes;
 * graphs and events are destroyed through the installed table). Nothing
 * may be deferred, and no other thread may be inside the engine. */
void rp__engine_reset(void);
/* Install the engine into `core` with the options' settings (face/init.c). */
int rp__engine_setup(struct rp__driver *core, const struct rp__driver *real);

#endif
