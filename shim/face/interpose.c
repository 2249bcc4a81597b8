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

/* A call to the real driver where the wrapper goes no further: a tail
 * call, except for an entry point with more than six arguments (passed on
 * the stack too), where GCC's tail call loads every stack argument into a
 * saved register at the wrapper's entry and stores it back before the
 * jump, on every path, the enabled one included (about 20 instructions a
 * launch): there it is a plain call. RP_WRAP_KIND names the kind of an
 * argument list: SMALL (six or fewer, `()` among them) or BIG. */
#define RP_WRAP_KIND(...)                                                       \
    RP_WRAP_KIND_(__VA_ARGS__, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, BIG, SMALL, SMALL,  \
                  SMALL, SMALL, SMALL, SMALL)
#define RP_WRAP_KIND_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, \
                      kind, ...)                                                \
    kind
#define RP_PASS_TAIL(fn, args) return fn args;
#define RP_PASS_CALL(fn, args)                                                  \
    {                                                                           \
        CUresult rp_r_ = fn args;                                               \
        __asm__("" : "+r"(rp_r_)); /* no tail call */                           \
        return rp_r_;                                                           \
    }

/* The real entry point present: the call counted and run by the core's
 * entry, or, when the shim is disabled or the call comes back from inside
 * the core, passed on to the real driver (by PASS). */
#define RP_WRAP_ON(name, args, PASS)                                            \
    if (!rp__enabled || rp__depth)                                              \
        PASS(rp__real.name, args)                                               \
    rp__count(RP_E_##name);                                                     \
    rp__depth++;                                                                \
    CUresult rp_result_ = rp__core.name args;                                   \
    rp__depth--;                                                                \
    return rp_result_;
/* What a wrapper does once the shim is initialised (or while it is, on
 * the initialising thread). */
#define RP_WRAP_READY(name, args)                                               \
    if (RP_UNLIKELY(rp__real.name == NULL))                                     \
        return rp__missing(RP_E_##name);                                        \
    RP_WRAP_ON(name, args, RP_PASS_TAIL)
/* What a wrapper does, from the first call on: the first calls (before the
 * shim is initialised) go out of line, to rp__first_, so that the wrapper
 * keeps no argument across a call of its own. */
#define RP_WRAP_ANY(name, args)                                                 \
    if (RP_UNLIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) !=   \
                    RP_INIT_READY))                                             \
        return rp__first_##name args;                                           \
    RP_WRAP_READY(name, args)

#define RP_WRAP_FIRST(name, params, args)                                       \
    static __attribute__((noinline, cold)) CUresult rp__first_##name params     \
    {                                                                           \
        rp__init_slow();                                                        \
        RP_WRAP_READY(name, args)                                               \
    }
#define RP_WRAP_SMALL(name, params, args)                                       \
    RP_WRAP_FIRST(name, params, args)                                           \
    RP_EXPORT CUresult CUDAAPI name params                                      \
    {                                                                           \
        RP_WRAP_ANY(name, args)                                                 \
    }
/* A BIG one: the enabled and disabled paths inline, by plain calls; the
 * rest (not initialised, no real entry point) out of line. */
#define RP_WRAP_BIG(name, params, args)                                         \
    RP_WRAP_FIRST(name, params, args)                                           \
    static __attribute__((noinline, cold)) CUresult rp__other_##name params     \
    {                                                                           \
        RP_WRAP_ANY(name, args)                                                 \
    }                                                                           \
    RP_EXPORT CUresult CUDAAPI name params                                      \
    {                                                                           \
        if (RP_LIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) ==  \
                          RP_INIT_READY &&                                      \
                      rp__real.name)) {                                         \
            RP_WRAP_ON(name, args, RP_PASS_CALL)                                \
        }                                                                       \
        RP_PASS_CALL(rp__other_##name, args)                                    \
    }
#define X(name, params, args, role) RP_WRAP_(RP_WRAP_KIND args, name, params, args)
#define RP_WRAP_(kind, name, params, args) RP_WRAP__(kind, name, params, args)
#define RP_WRAP__(kind, name, params, args) RP_WRAP_##kind(name, params, args)
RP_ENTRIES(X)
#undef X

/* Function pointers stored as data pointers: POSIX (dlsym) requires the two
 * to convert losslessly, and every consumer of this table hands out void *. */
void *const rp__wrappers[RP_E_COUNT] = {
#define X(name, params, args, role) [RP_E_##name] = (void *)&name,
    RP_ENTRIES(X)
#undef X
};
