/* program.h - the program's own captures, fork and exit (program.c).
 * Part of coord.h, the coordinator's header */
#ifndef REPRISE_PROGRAM_H
#define REPRISE_PROGRAM_H

#include "engine.h"

/* ---- program.c: the program's own captures, fork and exit ---------------------- */

CUresult rp__program_capture_prepare(void);
void rp__program_capture_begun(CUresult rc);
void rp__program_capture_ended(CUresult rc);
uint64_t rp__engine_program_captures(void);
/* Resolve deferred work everywhere and end every segment (exit). */
CUresult rp__engine_resolve_all(void);
/* At the first deferral: deferred work reaches the driver at exit. */
void rp__arm_exit_hook(void);

/* In a child of fork(): the parent's deferred work and report are the
 * parent's; the engine resolves nothing from the child (rp__engine_forked
 * says so, rp__engine_in_forked_child asks). */
void rp__engine_forked(void);
bool rp__engine_in_forked_child(void);

#endif
