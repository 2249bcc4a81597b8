/* trace_hooks.c - the recording hooks, one per entry of entries.h, and their
 * installation in front of the core table (docs/trace.md).
 *
 * Each hook takes the call's place in the order calls began (one atomic
 * counter; the program's end of a capture as it returns), tells the recorder a context's destroy is beginning
 * (rp__tr_before), calls what the core held before it (the engine's hook, the
 * cuGetProcAddress hook or the driver), then hands the recorder the entry,
 * the result, the time the call began, its place and its arguments as
 * words. The hook
 * adds nothing to what the program sees: the result and every out-parameter
 * are the callee's. Generated: a new entry of entries.h gets its hook with no
 * line written here; what the trace records of it is its family
 * (trace_entries.h). */
#include "core.h"
#include "trace.h"
#include "tracefmt.h"

struct rp__driver rp__tr_next;

/* `, word` for each argument; the array begins with a 0 so that an entry
 * with no argument still has one. */
#define TR_WORD(x) , rp__tr_word(&(x), sizeof(char[sizeof(x) <= 8 ? 1 : -1]) * sizeof(x))

/* A call's place in the order calls began: the order the engine met them
 * in, since it acts on a call as the call begins. But for the program's end
 * of its own capture, which the engine acts on as the call returns (it steps
 * aside until the driver has ended the capture): that call takes its place
 * as it returns, so that a call another thread made while the end was in
 * the driver (stepped aside) comes before it in a replay too
 * (docs/trace.md, "What a replay does not reproduce"). */
static inline uint64_t tr_place(void)
{
    return atomic_fetch_add_explicit(&rp__tr_seq, 1, memory_order_relaxed);
}

static inline int tr_placed_at_return(enum rp__entry e)
{
    return e == RP_E_cuStreamEndCapture || e == RP_E_cuStreamEndCapture_ptsz;
}

#define X(name, params, args, role)                                             \
    static CUresult CUDAAPI tr_##name params                                    \
    {                                                                           \
        if (RP_UNLIKELY(!atomic_load_explicit(&rp__tr_live, memory_order_relaxed))) \
            return rp__tr_next.name args;                                       \
        uint64_t t0_ = rp__tr_ticks();                                          \
        uint64_t q_ = tr_placed_at_return(RP_E_##name) ? 0 : tr_place();        \
        const uint64_t a_[] = {0 RP_TFE_LIST(TR_WORD, args)};                   \
        rp__tr_before(RP_E_##name, a_ + 1);                                     \
        CUresult r_ = rp__tr_next.name args;                                    \
        if (tr_placed_at_return(RP_E_##name))                                   \
            q_ = tr_place();                                                    \
        rp__tr_record(RP_E_##name, r_, t0_, q_, a_ + 1);                        \
        return r_;                                                              \
    }
RP_ENTRIES(X)
#undef X

void rp__tr_install(struct rp__driver *core)
{
    rp__tr_next = *core;
#define X(name, params, args, role)                                             \
    if (core->name)                                                             \
        core->name = tr_##name;
    RP_ENTRIES(X)
#undef X
}
