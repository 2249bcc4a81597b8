/* The cuGetProcAddress hooks: how the CUDA runtime reaches our wrappers.
 *
 * The runtime dlopens libcuda.so.1, asks dlsym for cuGetProcAddress_v2 once,
 * then resolves ~440 entry points through the pointer it gets for
 * ("cuGetProcAddress", 12000), before it calls cuInit.  So the hook asks the
 * real resolver first and maps the pointer it returns to our wrapper by
 * pointer identity: the driver alone decides which ABI version and which
 * legacy/per-thread variant a query means.  The self-lookup needs no special
 * case: the driver answers with its own cuGetProcAddress (4 arguments, below
 * 12000) or cuGetProcAddress_v2 (5 arguments, from 12000), both are in the
 * list, and the map turns them into our wrapper of the same arity, through
 * which every later lookup then comes.  symbolStatus and the CUresult are the
 * driver's; a pointer we do not interpose is handed out untouched. */
#include "core.h"


void *rp__procaddr_map(const struct rp__route *routes, void *p)
{
    if (p == NULL)
        return NULL;
    int id = rp__route_find(routes, p);
    if (id < 0)
        return p;
    atomic_fetch_add_explicit(&rp__lookups_wrapped, 1, memory_order_relaxed);
    atomic_store_explicit(&rp__handed_out[id], 1, memory_order_relaxed);
    return rp__wrappers[id];
}

CUresult rp__procaddr_v1(const struct rp__driver *real, const struct rp__route *routes,
                         const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    CUresult r = real->cuGetProcAddress(symbol, pfn, cudaVersion, flags);
    atomic_fetch_add_explicit(&rp__lookups, 1, memory_order_relaxed);
    if (r == CUDA_SUCCESS && pfn != NULL)
        *pfn = rp__procaddr_map(routes, *pfn);
    return r;
}

CUresult rp__procaddr_v2(const struct rp__driver *real, const struct rp__route *routes,
                         const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *symbolStatus)
{
    CUresult r = real->cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    atomic_fetch_add_explicit(&rp__lookups, 1, memory_order_relaxed);
    if (r == CUDA_SUCCESS && pfn != NULL)
        *pfn = rp__procaddr_map(routes, *pfn);
    return r;
}

CUresult CUDAAPI rp__procaddr_hook_v1(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags)
{
    return rp__procaddr_v1(&rp__real, &rp__routes, symbol, pfn, cudaVersion, flags);
}

CUresult CUDAAPI rp__procaddr_hook_v2(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *symbolStatus)
{
    return rp__procaddr_v2(&rp__real, &rp__routes, symbol, pfn, cudaVersion, flags,
                           symbolStatus);
}
