/* check.h - defensive branches, marked (core; every layer may use them). */
#ifndef RP_CHECK_H
#define RP_CHECK_H

#include <assert.h>

/* Defensive branches, marked as SQLite marks them: NEVER(x) is a condition
 * the code guards against but believes cannot hold, ALWAYS(x) one it
 * believes always holds. Debug builds (the sanitizer pass of
 * scripts/test.sh) assert the belief; release builds test the condition
 * and take the defensive branch, so a belief proved wrong costs the
 * optimisation, never the result. Not for what a failing driver or
 * allocation can cause (those are tested by the fault sweeps). */
#ifdef NDEBUG
#define NEVER(x) (x)
#define ALWAYS(x) (x)
#else
#define NEVER(x) ((x) ? (assert(!"NEVER: " #x), 1) : 0)
#define ALWAYS(x) ((x) ? 1 : (assert(!"ALWAYS: " #x), 0))
#endif

/* HOLDS(x): a belief the code relies on with no defensive branch, where
 * testing it would cost what the code saves on the hot path (an invariant
 * kept by every writer of some state, that lets a test of that state be
 * left out). Debug builds assert it; release builds do not evaluate it,
 * so a belief proved wrong would cost the result: each use names the
 * writers that keep it, and the suite runs under a debug build. */
#define HOLDS(x) assert(x)

#endif
