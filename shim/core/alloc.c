/* alloc.c - the shim's allocation seam (alloc.h): libc's allocator, with a
 * test's fault at the Nth call. Counting costs one relaxed load unless a
 * fault (or counting) is armed. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static _Atomic int armed;           /* 1: count (and maybe fail) every call */
static _Atomic uint64_t calls, faults;
static uint64_t fail_nth;           /* 0: count only */
static int fail_persistent;
static _Atomic int said;

/* Whether this call is the one (or one of those) to fail. */
static int fault_now(void)
{
    if (RP_LIKELY(!atomic_load_explicit(&armed, memory_order_relaxed)))
        return 0;
    uint64_t k = atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1;
    if (!fail_nth || k < fail_nth || (k > fail_nth && !fail_persistent))
        return 0;
    atomic_fetch_add_explicit(&faults, 1, memory_order_relaxed);
    return 1;
}

static void *failed(size_t n)
{
    if (!atomic_exchange(&said, 1))
        rp__warn("out of memory (an allocation of %zu bytes failed): the work it was for runs "
                 "eagerly", n);
    return NULL;
}

void *rp__malloc(size_t n)
{
    void *p = fault_now() ? NULL : malloc(n);
    return p ? p : failed(n);
}

void *rp__calloc(size_t n, size_t size)
{
    void *p = fault_now() ? NULL : calloc(n, size);
    return p ? p : failed(n * size);
}

void *rp__realloc(void *p, size_t n)
{
    void *q = fault_now() ? NULL : realloc(p, n);
    return q ? q : failed(n);
}

void rp__alloc_fail_at(uint64_t nth, int persistent)
{
    atomic_store(&armed, 0);
    atomic_store(&calls, 0);
    atomic_store(&faults, 0);
    atomic_store(&said, 0);
    fail_nth = nth;
    fail_persistent = persistent;
    atomic_store(&armed, 1);
}

uint64_t rp__alloc_calls(void)
{
    return atomic_load(&calls);
}

uint64_t rp__alloc_faults(void)
{
    return atomic_load(&faults);
}

int rp__alloc_faults_from_env(void)
{
    const char *v = getenv("REPRISE_FAULT_ALLOC");
    if (!v || !*v)
        return 0;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    int persistent = end && *end == '+';
    if (end == v || (*end && strcmp(end, "+") != 0) || v[0] == '-') {
        rp__warn("REPRISE_FAULT_ALLOC='%s' is not N or N+ (a count); no allocation fault armed", v);
        return -1;
    }
    rp__alloc_fail_at(n, persistent);
    return 0;
}
