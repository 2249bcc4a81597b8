/* The exported driver entry points: one wrapper per line of entries.h.
 *
 * This file only forwards.  Every wrapper has the same shape: initialise
 * once; if the real entry point is missing, return the error a program would
 * get without reprise; when reprise is disabled (or the call comes back from
 * inside the core) call the real driver directly, with no counting, no lock
 * and no allocation; otherwise count the call under its exported name and
 * call the core table, which forwards or runs the capture engine's hook for
 * that entry.  The CUresult is returned unchanged.  Each definition repeats the
 * prototype cuda.h declares for that exported name (shim.h defines
 * __CUDA_API_VERSION_INTERNAL), so a signature mismatch does not compile;
 * -Wmissing-prototypes catches a name cuda.h does not declare. */
#include "core.h"
#include "init.h"

#define X(name, params, args, role)                                             \
    RP_EXPORT CUresult CUDAAPI name params                                      \
    {                                                                           \
        rp__ensure_init();                                                      \
        if (RP_UNLIKELY(rp__real.name == NULL))                                 \
            return rp__missing(RP_E_##name);                                    \
        if (!rp__enabled || rp__depth)                                          \
            return rp__real.name args;                                          \
        rp__count(RP_E_##name);                                                 \
        rp__depth++;                                                            \
        CUresult rp_result_ = rp__core.name args;                               \
        rp__depth--;                                                            \
        return rp_result_;                                                      \
    }
RP_ENTRIES(X)
#undef X

/* Function pointers stored as data pointers: POSIX (dlsym) requires the two
 * to convert losslessly, and every consumer of this table hands out void *. */
void *const rp__wrappers[RP_E_COUNT] = {
#define X(name, params, args, role) [RP_E_##name] = (void *)&name,
    RP_ENTRIES(X)
#undef X
};
