/* lock.h - the context lock (engine.h's rp_ctxstate.lock): the primitive
 * itself, apart from the records it guards; its slow paths are in
 * counters.c. */
#ifndef REPRISE_LOCK_H
#define REPRISE_LOCK_H

#include "core.h"

#include <stdatomic.h>

/* A context's lock: one futex word (0 free, 1 held, 2 held with waiters).
 * Every call on a context takes it; uncontended it costs a compare-exchange
 * and an exchange, a fifth of a glibc mutex's instructions. */
typedef struct rp_lock {
    _Atomic int v;
} rp_lock;
void rp__lock_wait(rp_lock *l); /* contended: sleeps until it holds the lock */
void rp__lock_wake(rp_lock *l); /* released with waiters: wakes one */
static inline __attribute__((always_inline)) int rp__trylock(rp_lock *l)
{
    int free_ = 0;
    return atomic_compare_exchange_strong_explicit(&l->v, &free_, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}
static inline __attribute__((always_inline)) void rp__lock(rp_lock *l)
{
    if (RP_UNLIKELY(!rp__trylock(l)))
        rp__lock_wait(l);
}
static inline __attribute__((always_inline)) void rp__unlock(rp_lock *l)
{
    if (RP_UNLIKELY(atomic_exchange_explicit(&l->v, 0, memory_order_release) != 1))
        rp__lock_wake(l);
}

#endif
