/* trace_own.c - what each context owns, as the recorder knows it: the
 * streams, events, modules (with their functions), executable graphs and
 * memory made in it. A context's teardown (cuCtxDestroy, the primary
 * context's last release or its reset) ends them all, and the driver may
 * then hand the same handle values out for new objects of another context
 * (issue 34: threads that each create a context, work in it and destroy it
 * while the others work). A handle the recorder still mapped would name
 * the new object by the dead one's id, and a replay would issue the new
 * object's calls against a stream, module or allocation of a context it
 * destroyed. So the teardown forgets them: the next sight of such a handle
 * defines a new id. All under the writer's lock. */
#include "trace_defs.h"
#include "alloc.h"

#include <stdlib.h>

#define W rp__tr_W

uint32_t rp__tr_ctx_current(void)
{
    CUcontext c = NULL;
    if (!W.real->cuCtxGetCurrent || W.real->cuCtxGetCurrent(&c) != CUDA_SUCCESS)
        return 0;
    return rp__tr_ctx(c, true);
}

/* Grows t to hold index id (zeroed); false (recording stopped) when memory
 * runs out. */
static bool reach(void **t, size_t *cap, size_t elem, uint32_t id)
{
    if (id < *cap)
        return true;
    size_t nc = *cap ? *cap : 64;
    while (nc <= id)
        nc *= 2;
    void *n = rp__realloc(*t, nc * elem);
    if (!n) {
        rp__tr_nomem();
        return false;
    }
    memset((char *)n + *cap * elem, 0, (nc - *cap) * elem);
    *t = n;
    *cap = nc;
    return true;
}

void rp__tr_own(enum tr_own kind, uint32_t id, uint32_t ctx)
{
    struct tr_owners *o = &W.own[kind];
    if (id && reach((void **)&o->ctx, &o->cap, sizeof *o->ctx, id))
        o->ctx[id] = ctx;
}

void rp__tr_ctx_info(uint32_t id, uint32_t device, bool primary)
{
    if (id && reach((void **)&W.ctxinfo, &W.capctxinfo, sizeof *W.ctxinfo, id))
        W.ctxinfo[id] = (struct tr_ctxinfo){device, primary};
}

uint32_t rp__tr_owner(enum tr_own kind, uint32_t id)
{
    const struct tr_owners *o = &W.own[kind];
    return id < o->cap ? o->ctx[id] : 0;
}

/* Drops every key of map m whose id context ctx owns. */
static void forget_owned(struct tr_map *m, enum tr_own kind, uint32_t ctx)
{
    for (uint32_t i = 0; i < m->cap; i++) {
        uint64_t k = m->keys[i];
        if (k != TR_MAP_EMPTY && k != TR_MAP_TOMB && rp__tr_owner(kind, m->vals[i] - 1) == ctx)
            m->keys[i] = TR_MAP_TOMB;
    }
}

void rp__tr_ctx_gone(uint32_t ctx)
{
    if (!ctx)
        return;
    forget_owned(&W.streams, TR_OWN_STREAM, ctx);
    forget_owned(&W.events, TR_OWN_EVENT, ctx);
    forget_owned(&W.modules, TR_OWN_MODULE, ctx);
    forget_owned(&W.execs, TR_OWN_EXEC, ctx);
    /* Its modules' functions and its CUfunctions of library kernels. */
    for (uint32_t i = 0; i < W.funcs.cap; i++) {
        uint64_t k = W.funcs.keys[i];
        if (k != TR_MAP_EMPTY && k != TR_MAP_TOMB && W.fn[W.funcs.vals[i] - 1]->ctx == ctx)
            rp__tr_func_forget((const void *)(uintptr_t)k);
    }
    size_t j = 0;
    for (size_t i = 0; i < W.nrg; i++)
        if (W.rg[i].ctx != ctx)
            W.rg[j++] = W.rg[i];
    W.nrg = j;
    W.last_stream_key = 0;
    W.last_fn_key = NULL;
}

void rp__tr_primary_gone(uint32_t device)
{
    for (uint32_t id = 1; id < W.capctxinfo; id++)
        if (W.ctxinfo[id].primary && W.ctxinfo[id].device == device)
            rp__tr_ctx_gone(id);
}
