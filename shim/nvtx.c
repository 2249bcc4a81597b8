/* nvtx.c - NVTX ranges around what the engine does (REPRISE_NVTX=1), so that
 * capture windows, replays and flushes show in Nsight Systems next to the
 * program's kernels. NVTX3 is header-only (it finds the tool that collects
 * the ranges at run time); without REPRISE_NVTX nothing is called. */
#include "shim.h"

#include <stdarg.h>
#include <stdio.h>

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
