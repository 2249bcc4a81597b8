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

#include <string.h>

struct rp__route rp__routes;

RP_NO_SANITIZE int rp__entry_by_name(const char *name)
{
    /* Cheap rejection first: dlsym runs this for every symbol a process
     * looks up, and almost none are driver entry points. */
    if (name == NULL || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
        return -1;
    /* A linear scan of ~130 names: only cu[A-Z]* lookups get here, and those
     * are a handful per process (the runtime makes exactly one). */
    for (int i = 0; i < RP_E_COUNT; i++)
        if (strcmp(rp__entry_names[i], name) == 0)
            return i;
    return -1;
}

void rp__route_build(struct rp__route *r, const struct rp__driver *real)
{
    r->n = 0;
    for (int id = 0; id < RP_E_COUNT; id++) {
        const void *p = rp__driver_get(real, (enum rp__entry)id);
        if (p == NULL)
            continue;
        /* An alias (two names, one address): the earlier entry answers for
         * both, since either wrapper would forward to the same function. */
        if (rp__route_find(r, p) >= 0)
            continue;
        /* Insertion sort: no allocation, ~130 entries, once. */
        size_t j = r->n;
        while (j > 0 && (uintptr_t)r->by_ptr[j - 1].real > (uintptr_t)p) {
            r->by_ptr[j] = r->by_ptr[j - 1];
            j--;
        }
        r->by_ptr[j].real = p;
        r->by_ptr[j].id = id;
        r->n++;
    }
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
