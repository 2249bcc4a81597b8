/* nvtx.c - NVTX ranges around what the engine does (REPRISE_NVTX=1), so that
 * capture windows, replays and flushes show in Nsight Systems next to the
 * program's kernels. NVTX3 is header-only (it finds the tool that collects
 * the ranges at run time); without REPRISE_NVTX nothing is called. */
#include "core.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* NVTX's loader looks up the tool's entry points with dlsym, which inside
 * the shim names our own exported override: it has nothing to route there,
 * so it goes to the real dlsym directly (driver.c). */
#define dlsym(h, n) rp__dlsym_real()((h), (n))
#include <nvtx3/nvToolsExt.h>

/* Read once, by whichever thread comes first; several may, with the same
 * answer, so relaxed atomics are enough (a plain int was a data race). */
_Atomic int rp__nvtx_on = -1;

static int nvtx_on(void)
{
    int v = atomic_load_explicit(&rp__nvtx_on, memory_order_relaxed);
    if (v < 0) {
        v = rp__option(RP_OPTION_NVTX).b;
        atomic_store_explicit(&rp__nvtx_on, v, memory_order_relaxed);
    }
    return v;
}

void rp__nvtx_push_on(const char *fmt, ...)
{
    if (!nvtx_on())
        return;
    char msg[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    nvtxRangePushA(msg);
}

void rp__nvtx_pop_on(void)
{
    if (nvtx_on())
        nvtxRangePop();
}
