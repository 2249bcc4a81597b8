/* flush.c - nothing lost when a run is long or ends by a signal: a thread of
 * the shim rewrites the stats file every REPRISE_STATS_EVERY seconds while
 * the program is active, and writes the final report (the stats file and
 * the summary) when SIGTERM, SIGINT or SIGHUP arrives and the program has not
 * claimed that signal; then the signal takes its default course, so the
 * process ends as it would have, by the same signal.
 *
 * A signal handler may not take locks or allocate, and writing the report
 * does both (the engine's context locks, stdio-free but not
 * async-signal-safe code), so the handler only wakes the thread (sem_post)
 * and waits, sleeping in steps, at most RP_SIGNAL_WAIT_MS for it to be
 * done: a report that cannot be made in that time (the thread waits on a
 * lock the interrupted thread holds) is given up, and the previous periodic
 * one stays (every write is atomic: stats.c).  Then the handler puts the
 * default action back and raises the signal again, which is delivered,
 * fatally, as the handler returns.  No file descriptor is used: a program
 * may close every descriptor and open its own under the same numbers. */
#include "flush.h"

#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* How long a signal waits for its report: far more than one takes (a few
 * ms), short enough that a stuck one does not keep a dying program. */
#define RP_SIGNAL_WAIT_MS 3000

static const int watched[] = {SIGTERM, SIGINT, SIGHUP};
#define N_WATCHED (sizeof watched / sizeof watched[0])

static sem_t wake;               /* handler -> thread: a signal came */
static _Atomic int signalled;    /* which, 0 for none */
static _Atomic int report_done;  /* thread -> handler: its report is written */
static pid_t owner;              /* the process whose handlers these are */
static _Atomic int final_started;

void rp__report_final(bool at_exit)
{
    if (atomic_exchange(&final_started, 1))
        return; /* the other of exit and signal came first */
    rp__stats_write(true);
    /* For the allocation sweep (tests/faults/alloc_sweep.sh): how many
     * allocations there were, and how many were failed on purpose. */
    if (at_exit && getenv("REPRISE_FAULT_ALLOC"))
        rp__warn("%llu allocations, %llu failed on purpose (REPRISE_FAULT_ALLOC)",
                 (unsigned long long)rp__alloc_calls(), (unsigned long long)rp__alloc_faults());
    if (rp__enabled && !rp__trace_alone && rp__option(RP_OPTION_SUMMARY).b)
        rp__summary_write(2);
}

/* Async-signal-safe: sem_post, nanosleep, getpid, sigaction and raise
 * only. */
static void on_signal(int sig)
{
    int saved = errno;
    /* A forked child inherits the handler but not the thread: it only
     * dies. */
    if (getpid() == owner) {
        atomic_store(&signalled, sig);
        if (sem_post(&wake) == 0) {
            struct timespec step = {0, 1000000};
            for (int ms = 0; ms < RP_SIGNAL_WAIT_MS && !atomic_load(&report_done); ms++)
                nanosleep(&step, NULL);
        }
    }
    struct sigaction dfl;
    dfl.sa_handler = SIG_DFL;
    dfl.sa_flags = 0;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Blocked while its handler runs: delivered, with the default action,
     * as this returns. */
    raise(sig);
    errno = saved;
}

/* What the program has done so far, to tell an active program from an idle
 * one: the driver calls counted (relaxed: a hint, not a count). */
static uint64_t activity(void)
{
    uint64_t n = 0;
    for (int i = 0; i < RP_E_COUNT; i++)
        n += atomic_load_explicit(&rp__calls[i], memory_order_relaxed);
    return n;
}

static void *flush_main(void *unused)
{
    (void)unused;
    /* Never the thread a process signal is delivered to: its handler would
     * wait for this very thread. */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    unsigned long long every = rp__option(RP_OPTION_STATS_EVERY).count;
    bool periodic = every > 0 && rp__option(RP_OPTION_STATS).path[0] != '\0';
    uint64_t seen = activity();
    for (;;) {
        int r;
        if (periodic) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += (time_t)every;
            r = sem_timedwait(&wake, &until);
        } else {
            r = sem_wait(&wake);
        }
        if (r == 0 && atomic_load(&signalled)) {
            rp__report_final(false);
            atomic_store(&report_done, 1);
            continue; /* the process is ending */
        }
        if (r != 0 && errno == ETIMEDOUT) {
            uint64_t now = activity();
            if (now != seen) {
                seen = now;
                rp__stats_write(false);
            }
        }
    }
    return NULL;
}

void rp__flush_start(void)
{
    bool stats = rp__option(RP_OPTION_STATS).path[0] != '\0';
    if (!stats && !rp__option(RP_OPTION_SUMMARY).b)
        return; /* no report asked for */
    if (sem_init(&wake, 0, 0) != 0)
        return;
    owner = getpid();
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, flush_main, NULL);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        errno = rc;
        rp__info("no report thread (%m): the report is written at exit only");
        return;
    }
    /* Only signals the program has not claimed: one it handles or ignores
     * stays its own (a Python program's SIGINT, nohup's SIGHUP). */
    for (size_t i = 0; i < N_WATCHED; i++) {
        struct sigaction old, ours;
        if (sigaction(watched[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        ours.sa_handler = on_signal;
        ours.sa_flags = SA_RESTART;
        sigemptyset(&ours.sa_mask);
        sigaction(watched[i], &ours, NULL);
    }
}

void rp__flush_forked(void)
{
    /* The child's report is not the parent's, and it has no thread to make
     * one: what is still our handler goes back to the default. */
    for (size_t i = 0; i < N_WATCHED; i++) {
        struct sigaction cur;
        if (sigaction(watched[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == on_signal) {
            cur.sa_handler = SIG_DFL;
            sigaction(watched[i], &cur, NULL);
        }
    }
}
