/* counters.c - what the engine counts for the report, at the bottom of the
 * engine so that every layer may count: why ops ran eagerly (the reasons
 * are explain.h's), the bounds it hit (each said once in the log), the cost model's
 * samples; and the context lock's slow paths. The report lines of
 * sequences are the sequence table's (seq/seqs.c). */
#include "engine.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void rp__bound_hit(rp_ctxstate *cs, enum rp__bound b)
{
    static _Atomic unsigned char logged[RP_BOUND_COUNT];
    if (cs) {
        cs->counters.bound_hits++;
        cs->counters.bound_hits_by[b]++;
    } else {
        atomic_fetch_add_explicit(&rp__eng.hits_without_context[b], 1, memory_order_relaxed);
    }
    if (!atomic_exchange(&logged[b], 1)) {
        char what[256];
        rp__bound_describe((int)b, 0, what, sizeof what);
        rp__info("bound hit: %s (counted in the report's bound_hits_by.%s)", what,
                 rp__bounds[b].key);
    }
}

uint64_t rp__bound_hits_without_context(enum rp__bound b)
{
    return atomic_load_explicit(&rp__eng.hits_without_context[b], memory_order_relaxed);
}

void rp__func_update_refused(rp_ctxstate *cs, CUresult rc)
{
    cs->counters.func_updates_refused++;
    if (!atomic_exchange(&rp__eng.func_fixed, 1))
        rp__warn("the driver refused to set a graph's kernel node to another function "
                 "(CUresult %d): kernels whose function switches are new structure from now on, "
                 "not node updates (counted in func_updates_refused)", (int)rc);
}

void rp__cost_note(rp_ctxstate *cs, enum rp_cost_kind kind, uint64_t ns, uint64_t count)
{
    if (!count)
        return;
    cs->counters.cost_samples[kind] += count;
    cs->counters.cost_ns[kind] += ns;
    rp__cost_sample(&cs->costs, kind, ns, count);
}

/* A report written while the program runs (the periodic stats file) must
 * not read what a lock guards without holding it: in that mode a lock busy
 * for a few milliseconds is given up and the report marked as missing
 * something; its writer drops it and tries again at the next period. At
 * exit (or at a signal that ends the program) a thread may have died
 * holding a lock, and the report reads what is there after 100 ms. */
static RP_TLS int report_try_only, report_missed;

void rp__report_try_only(int on)
{
    report_try_only = on;
    report_missed = 0;
}

int rp__report_missed(void)
{
    return report_missed;
}

static int report_tries(void)
{
    return report_try_only ? 5 : 100;
}

static int report_gave_up(void)
{
    if (!report_try_only)
        return 0;
    report_missed = 1;
    return -1;
}

int rp__lock_for_report(pthread_mutex_t *m)
{
    for (int i = 0, n = report_tries(); i < n; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return report_gave_up();
}

int rp__ctx_lock_for_report(rp_ctxstate *cs)
{
    for (int i = 0, n = report_tries(); i < n; i++) {
        if (rp__trylock(&cs->lock))
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return report_gave_up();
}

/* The program's errno is left as it was (a futex call sets it to EAGAIN or
 * EINTR under contention; the program's own calls never see the shim's). */
void rp__lock_wait(rp_lock *l)
{
    /* Mark it contended, and sleep while somebody else holds it (the
     * classic three-state futex lock). */
    int saved = errno;
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    errno = saved;
}

void rp__lock_wake(rp_lock *l)
{
    int saved = errno;
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

size_t rp__retired_snapshot(struct rp__seq_info *out, size_t max)
{
    int locked = rp__lock_for_report(&rp__eng.retired_lock);
    size_t n = 0;
    if (locked < 0)
        return 0;
    for (size_t i = 0; i < rp__eng.nretired && n < max; i++)
        out[n++] = rp__eng.retired[i];
    if (locked > 0)
        pthread_mutex_unlock(&rp__eng.retired_lock);
    return n;
}
