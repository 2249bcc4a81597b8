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
 * launch): there it is a plain call. */
#define RP_NARGS(...) RP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define RP_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define RP_PASS_CALL(fn, args)                                                  \
    {                                                                           \
        CUresult rp_r_ = fn args;                                               \
        __asm__("" : "+r"(rp_r_)); /* no tail call */                           \
        return rp_r_;                                                           \
    }
#define RP_WRAP_1 RP_WRAP_SMALL
#define RP_WRAP_2 RP_WRAP_SMALL
#define RP_WRAP_3 RP_WRAP_SMALL
#define RP_WRAP_4 RP_WRAP_SMALL
#define RP_WRAP_5 RP_WRAP_SMALL
#define RP_WRAP_6 RP_WRAP_SMALL
#define RP_WRAP_7 RP_WRAP_BIG
#define RP_WRAP_8 RP_WRAP_BIG
#define RP_WRAP_9 RP_WRAP_BIG
#define RP_WRAP_10 RP_WRAP_BIG
#define RP_WRAP_11 RP_WRAP_BIG
#define RP_WRAP_12 RP_WRAP_BIG
#define RP_WRAP_13 RP_WRAP_BIG
#define RP_WRAP_14 RP_WRAP_BIG
#define RP_WRAP_15 RP_WRAP_BIG
#define RP_WRAP_16 RP_WRAP_BIG

/* What a wrapper does once the shim is initialised. */
#define RP_WRAP_READY(name, args)                                               \
    if (RP_UNLIKELY(rp__real.name == NULL))                                     \
        return rp__missing(RP_E_##name);                                        \
    if (!rp__enabled || rp__depth)                                              \
        return rp__real.name args;                                              \
    rp__count(RP_E_##name);                                                     \
    rp__depth++;                                                                \
    CUresult rp_result_ = rp__core.name args;                                   \
    rp__depth--;                                                                \
    return rp_result_;

/* The first calls (before the shim is initialised, or while it is, from
 * the initialising thread) go out of line: the wrapper then keeps no
 * argument across a call of its own. */
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
        if (RP_UNLIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) != \
                        RP_INIT_READY))                                         \
            return rp__first_##name args;                                       \
        RP_WRAP_READY(name, args)                                               \
    }
#define RP_WRAP_BIG(name, params, args)                                         \
    RP_WRAP_FIRST(name, params, args)                                           \
    static __attribute__((noinline, cold)) CUresult rp__other_##name params     \
    {                                                                           \
        if (RP_UNLIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) != \
                        RP_INIT_READY))                                         \
            return rp__first_##name args;                                       \
        RP_WRAP_READY(name, args)                                               \
    }                                                                           \
    RP_EXPORT CUresult CUDAAPI name params                                      \
    {                                                                           \
        if (RP_LIKELY(atomic_load_explicit(&rp__state, memory_order_acquire) ==  \
                          RP_INIT_READY &&                                      \
                      rp__real.name)) {                                         \
            if (!rp__enabled || rp__depth)                                      \
                RP_PASS_CALL(rp__real.name, args)                               \
            rp__count(RP_E_##name);                                             \
            rp__depth++;                                                        \
            CUresult rp_result_ = rp__core.name args;                           \
            rp__depth--;                                                        \
            return rp_result_;                                                  \
        }                                                                       \
        RP_PASS_CALL(rp__other_##name, args)                                    \
    }
#define X(name, params, args, role) RP_WRAP_(RP_NARGS args, name, params, args)
#define RP_WRAP_(n, name, params, args) RP_WRAP__(n, name, params, args)
#define RP_WRAP__(n, name, params, args) RP_WRAP_##n(name, params, args)
RP_ENTRIES(X)
#undef X

/* Function pointers stored as data pointers: POSIX (dlsym) requires the two
 * to convert losslessly, and every consumer of this table hands out void *. */
void *const rp__wrappers[RP_E_COUNT] = {
#define X(name, params, args, role) [RP_E_##name] = (void *)&name,
    RP_ENTRIES(X)
#undef X
};
