/* play_base.c - what the player's files share (play.h): its state, the lock
 * over it, the one-line stop, the tables that grow with the trace's ids,
 * the clock and the driver's symbols. */
#include "play.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define P pl__P

pthread_mutex_t pl__state_mu = PTHREAD_MUTEX_INITIALIZER;

struct pl_state pl__P;

const char *const pl_why_names[W_N] = {
    "not replayed by design (lookups, attributes, other calls)",
    "missing in the driver",
    "addresses of memory the trace does not know, or ranges beyond it",
    "functions without a parameter layout or PTX",
    "graphs the trace did not see made",
    "memory pools",
    "what they need failed to replay",
    "objects of a context the trace tore down, or handles that were never valid",
    "host buffers larger than this machine's memory",
};

void pl_stop(const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* The form the reader's errors have ("FILE: byte N: ..."), the record
     * named by where it begins and, for a call, its entry point. */
    if (P.at_entry)
        fprintf(stderr, "reprise replay: %s: byte %" PRIu64 ": a call of %s: %s; the replay stopped there\n",
                P.o.file, P.at, P.at_entry, what);
    else
        fprintf(stderr, "reprise replay: %s: byte %" PRIu64 ": %s; the replay stopped there\n",
                P.o.file, P.at, what);
    fflush(stderr);
    /* Player threads may be inside the driver: no exit handlers. */
    _exit(1);
}

void *pl_grow(void *tab, size_t *n, size_t elem, size_t want)
{
    if (want < *n)
        return tab;
    size_t nn = *n ? *n : 16;
    while (nn <= want)
        nn *= 2;
    void *t = realloc(tab, nn * elem);
    if (!t)
        pl_stop("out of memory for a table of %zu entries", nn);
    memset((char *)t + *n * elem, 0, (nn - *n) * elem);
    *n = nn;
    return t;
}

uint64_t pl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void *pl_sym(const char *name)
{
    return dlsym(P.drv, name);
}

