/* Initialisation: once, lazily, from whichever call comes first.
 *
 * The first call may come from anywhere: a program's main, the runtime's
 * cuGetProcAddress before cuInit, a dlsym, or another library's constructor
 * that runs before ours.  So there is no work in a constructor, only an
 * atomic state machine NONE -> RUNNING -> READY: the thread that wins the
 * NONE -> RUNNING exchange parses the options, loads the driver and builds the
 * tables; other threads wait for READY.  pthread_once is not used because the
 * initialising thread re-enters (loading the driver runs its constructors,
 * which may call dlsym or a cu* symbol), and a recursive pthread_once call
 * deadlocks; a thread-local flag lets that thread through instead. */
#include "core.h"
#include "flush.h"
#include "init.h"
#include "trace.h"

#include "coord.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reprise.h"

static RP_TLS bool initialising;

/* A forked child must not touch the parent's CUDA state (the driver does
 * not survive fork): from the fork on, the child's wrappers only forward. */
static bool engine_on, tracing;

static void in_forked_child(void)
{
    rp__flush_forked();
    rp__enabled = false;
    if (engine_on)
        rp__engine_forked();
    if (tracing)
        rp__trace_forked();
}

static void install(const struct rp__driver *real, bool enabled, bool loaded, bool engine,
                    bool trace)
{
    /* Publish order: tables first, then the flags, then READY with release,
     * so a wrapper that sees READY (acquire) sees the rest. */
    rp__real = *real;
    rp__route_build(&rp__routes, &rp__real);
    /* The core forwards, except the resolver pair, which must hand out our
     * wrappers (a missing resolver stays missing: the wrapper checks the
     * real member before it reaches the core), and what the engine hooks. */
    rp__core = rp__real;
    if (rp__real.cuGetProcAddress)
        rp__core.cuGetProcAddress = rp__procaddr_hook_v1;
    if (rp__real.cuGetProcAddress_v2)
        rp__core.cuGetProcAddress_v2 = rp__procaddr_hook_v2;
    engine_on = engine && rp__engine_setup(&rp__core, &rp__real) == 0;
    /* The recorder goes in front of the engine: it sees each call as the
     * program made it. Recording needs the wrappers even with the engine
     * off, so it enables them (they then count calls and call the core). */
    tracing = trace && rp__trace_setup(&rp__core, &rp__real);
    if (engine_on || tracing)
        pthread_atfork(NULL, NULL, in_forked_child);
    rp__trace_alone = tracing && !enabled;
    rp__enabled = enabled || tracing;
    rp__loaded = loaded;
    atomic_store_explicit(&rp__state, RP_INIT_READY, memory_order_release);
}

void rp__install(const struct rp__driver *real, bool enabled)
{
    install(real, enabled, true, false, false);
}

void rp__init_slow(void)
{
    if (initialising)
        return; /* re-entered from our own init: let the call through */
    int saved_errno = errno;
    int expected = RP_INIT_NONE;
    if (atomic_compare_exchange_strong_explicit(&rp__state, &expected, RP_INIT_RUNNING,
                                                memory_order_acq_rel, memory_order_acquire)) {
        initialising = true;
        rp__options_parse();
        rp__alloc_faults_from_env();
        rp__options_log();
        struct rp__driver real;
        bool ok = rp__driver_load(&real);
        install(&real, rp__option(RP_OPTION_ENABLE).b, ok, ok && rp__option(RP_OPTION_ENABLE).b,
                ok && rp__option(RP_OPTION_TRACE).path[0] != '\0');
        if (ok && rp__enabled)
            rp__info("enabled (version %s)", REPRISE_VERSION);
        if (engine_on)
            rp__flush_start();
        initialising = false;
    } else {
        /* Another thread initialises.  It does not wait for us, so spinning
         * cannot deadlock unless this thread holds a lock that thread needs:
         * the dynamic loader's, when this call comes from a constructor run by
         * another thread's dlopen while the winner is loading the driver.
         * That case is documented (docs/interposition.md). */
        while (atomic_load_explicit(&rp__state, memory_order_acquire) != RP_INIT_READY)
            sched_yield();
    }
    errno = saved_errno;
}

/* Under the `reprise` command, the program it runs (which keeps the
 * command's pid, REPRISE_RUN_PID) says so when it made no driver call at
 * all, in its stats file and in a line: otherwise its stats file would be
 * missing with no word why.  Its child processes, and a program whose
 * report another process wrote (the same file name), say nothing. */
static void say_no_cuda(void)
{
    const char *run = getenv("REPRISE_RUN_PID");
    if (run == NULL || strtol(run, NULL, 10) != (long)getpid())
        return;
    rp__options_parse();
    if (!rp__option(RP_OPTION_ENABLE).b)
        return;
    const char *pattern = rp__option(RP_OPTION_STATS).path;
    char path[PATH_MAX];
    if (pattern[0] && rp__stats_path(pattern, path, sizeof path)) {
        /* A report that says so ("calls": {}, no engine): a line alone may
         * go nowhere (coreutils close stderr before the destructors run). */
        if (access(path, F_OK) != 0 && rp__stats_write(true))
            rp__warn("%s made no CUDA driver call: nothing to capture (%s says so)",
                     program_invocation_short_name, path);
    } else if (rp__option(RP_OPTION_SUMMARY).b) {
        rp__warn("%s made no CUDA driver call: nothing to capture",
                 program_invocation_short_name);
    }
}

/* The report is written by a destructor, which runs at exit() (and never at
 * _exit or on a crash; a signal the program has not claimed writes it too,
 * flush.c).  It reads only our counters: the driver may already be torn
 * down.  A process that never reached the shim writes nothing, so that the
 * many children of a preloaded shell script do not each leave a file. */
__attribute__((destructor)) static void rp__fini(void)
{
    if (atomic_load_explicit(&rp__state, memory_order_acquire) != RP_INIT_READY) {
        if (atomic_load_explicit(&rp__state, memory_order_acquire) == RP_INIT_NONE)
            say_no_cuda();
        return;
    }
    if (rp__engine_in_forked_child())
        return;
    if (tracing) {
        if (!rp__enabled)
            return; /* a forked child: the trace and the report are the parent's */
        rp__trace_close();
    }
    rp__report_final(true);
}
