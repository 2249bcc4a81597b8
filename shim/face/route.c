/* Routing: which lookups are answered with our wrappers.
 *
 * Two maps, both generated from entries.h.  By name, for dlsym: only an
 * exact exported name of the list routes, so "cudnnCreate", "cuLaunchKernelX"
 * or "cuDriverGetVersion" never do.  By pointer, for cuGetProcAddress: the
 * driver's resolver decides which ABI version and which legacy/per-thread
 * variant a (name, version, flags) query means, and we only translate the
 * pointer it chose into the wrapper of the exported symbol it is; guessing
 * from the name is how interposers ended up calling cuCtxCreate_v3 with the
 * v1 signature. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

struct rp__route rp__routes;

/* The entries by name, in strcmp order, for a binary search: made once,
 * by the first lookup that finds it not made (no allocation: dlsym runs
 * inside other libraries' init code); a lookup meanwhile scans the list. */
static short by_name[RP_E_COUNT];
static _Atomic int by_name_state; /* 0: not made, 1: being made, 2: made */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(rp__entry_names[*(const short *)a], rp__entry_names[*(const short *)b]);
}

RP_NO_SANITIZE static void make_by_name(void)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&by_name_state, &none, 1))
        return;
    for (int i = 0; i < RP_E_COUNT; i++)
        by_name[i] = (short)i;
    qsort(by_name, RP_E_COUNT, sizeof by_name[0], cmp_names);
    atomic_store_explicit(&by_name_state, 2, memory_order_release);
}

RP_NO_SANITIZE int rp__entry_by_name(const char *name)
{
    /* Cheap rejection first: dlsym runs this for every symbol a process
     * looks up, and almost none are driver entry points. */
    if (name == NULL || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
        return -1;
    if (atomic_load_explicit(&by_name_state, memory_order_acquire) != 2)
        make_by_name();
    if (atomic_load_explicit(&by_name_state, memory_order_acquire) != 2) {
        for (int i = 0; i < RP_E_COUNT; i++) /* being made by another thread */
            if (strcmp(rp__entry_names[i], name) == 0)
                return i;
        return -1;
    }
    size_t lo = 0, hi = RP_E_COUNT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rp__entry_names[by_name[mid]], name);
        if (c == 0)
            return by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Sort order of the route map: by address, then (aliases) by entry. */
static int cmp_route(const void *a, const void *b)
{
    const struct rp__route_entry *x = a, *y = b;
    if ((uintptr_t)x->real != (uintptr_t)y->real)
        return (uintptr_t)x->real < (uintptr_t)y->real ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

void rp__route_build(struct rp__route *r, const struct rp__driver *real)
{
    r->n = 0;
    for (int id = 0; id < RP_E_COUNT; id++) {
        const void *p = rp__driver_get(real, (enum rp__entry)id);
        if (p != NULL)
            r->by_ptr[r->n++] = (struct rp__route_entry){p, id};
    }
    qsort(r->by_ptr, r->n, sizeof r->by_ptr[0], cmp_route);
    /* An alias (two names, one address): the earlier entry answers for
     * both, since either wrapper would forward to the same function. */
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!k || r->by_ptr[k - 1].real != r->by_ptr[i].real)
            r->by_ptr[k++] = r->by_ptr[i];
    r->n = k;
}

int rp__route_find(const struct rp__route *r, const void *p)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uintptr_t m = (uintptr_t)r->by_ptr[mid].real;
        if (m == (uintptr_t)p)
            return r->by_ptr[mid].id;
        if (m < (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
