/* The core: the table an enabled wrapper calls, between interposition and the
 * real driver.
 *
 * Today every entry forwards to the real driver, except the cuGetProcAddress
 * pair, which must hand out our wrappers (procaddr.c).  This is the seam the
 * capture engine plugs into: it replaces the members for the calls it
 * records, and reaches the driver only through the real-entry table it is
 * given, so unit tests can run it on a table of fakes. */
#include "shim.h"

static CUresult CUDAAPI core_get_proc_address(const char *symbol, void **pfn, int cudaVersion,
                                              cuuint64_t flags)
{
    return rp__procaddr_v1(&rp__real, &rp__routes, symbol, pfn, cudaVersion, flags);
}

static CUresult CUDAAPI core_get_proc_address_v2(const char *symbol, void **pfn, int cudaVersion,
                                                 cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbolStatus)
{
    return rp__procaddr_v2(&rp__real, &rp__routes, symbol, pfn, cudaVersion, flags,
                           symbolStatus);
}

void rp__core_build(struct rp__driver *core, const struct rp__driver *real)
{
    *core = *real;
    /* Keep a missing resolver missing: the wrapper checks the real member
     * before it ever reaches the core. */
    if (real->cuGetProcAddress)
        core->cuGetProcAddress = core_get_proc_address;
    if (real->cuGetProcAddress_v2)
        core->cuGetProcAddress_v2 = core_get_proc_address_v2;
}
