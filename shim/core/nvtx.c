/* nvtx.c - NVTX ranges around what the engine does (REPRISE_NVTX=1), so that
 * capture windows, replays and flushes show in Nsight Systems next to the
 * program's kernels. NVTX3 is header-only (it finds the tool that collects
 * the ranges at run time); without REPRISE_NVTX nothing is called. */
#include "core.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

/* NVTX's loader looks up the tool's entry points with dlsym, which inside
 * the shim names our own exported override: it has nothing to route there,
 * so it goes to the real dlsym directly (driver.c). */
#define dlsym(h, n) rp__dlsym_real()((h), (n))
#include <nvtx3/nvToolsExt.h>

static int on = -1;

static int nvtx_on(void)
{
    if (on < 0)
        on = rp__option(RP_OPTION_NVTX).b;
    return on;
}

void rp__nvtx_push(const char *fmt, ...)
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

void rp__nvtx_pop(void)
{
    if (nvtx_on())
        nvtxRangePop();
}
