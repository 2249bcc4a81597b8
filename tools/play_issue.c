/* play_issue.c - one recorded call, issued again: through the entry point
 * the program called (dlsym of its exported name on the driver: under the
 * shim, its wrapper), with the trace's ids and addresses translated to the
 * player's objects (play_make.c). A call whose objects the player cannot
 * have (a context the trace tore down, memory beyond what it has, a
 * function without a layout) is not issued and counted by why; the player
 * never passes the driver a handle it knows is dead or a host range beyond
 * its own buffers. What the call made is kept under its trace id. */
#include "play.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"

#define P pl__P

/* ---- typed callers: any entry of entries.h from an array of words --------- */

#define RPL_DECL(x) x;
#define RPL_SET(x) memcpy(&x, rpl_a_++, sizeof x);
#define RPL_BODY(params, ...)                                                   \
    __VA_OPT__(RP_TFE(RPL_DECL, RP_TEXPAND params) RP_TFE(RPL_SET, __VA_ARGS__)) \
    return ((CUresult(CUDAAPI *) params)rpl_fn_)(__VA_ARGS__);
#define X(name, params, args, role)                                             \
    static CUresult call_##name(void *rpl_fn_, const uint64_t *rpl_a_)          \
    {                                                                           \
        (void)rpl_a_;                                                           \
        RPL_BODY(params, RP_TEXPAND args)                                       \
    }
RP_ENTRIES(X)
#undef X

static const struct {
    const char *name;
    pl_caller call;
} callers[] = {
#define X(name, params, args, role) {#name, call_##name},
    RP_ENTRIES(X)
#undef X
};

void pl_entry_defined(uint32_t id)
{
    PL_GROW(P.entries, P.nentries, id);
    struct pl_entry *e = &P.entries[id];
    e->name = P.r.entries[id].name;
    e->fn = NULL;
    e->call = NULL;
    for (size_t i = 0; i < sizeof callers / sizeof callers[0]; i++)
        if (!strcmp(callers[i].name, e->name)) {
            e->call = callers[i].call;
            e->fn = pl_sym(e->name);
        }
}

bool pl_may_wait(unsigned fam)
{
    switch (fam) {
    case RP_TRF_STREAM_SYNC: case RP_TRF_CTX_SYNC: case RP_TRF_CTX_SYNC_V2: case RP_TRF_EVENT_SYNC:
    case RP_TRF_HTOD: case RP_TRF_DTOH: case RP_TRF_COPY: case RP_TRF_PEER:
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_HOST_UNREGISTER:
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD: case RP_TRF_CTX_DESTROY:
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        return true;
    default:
        return false;
    }
}

static void noop_host_function(void *data)
{
    (void)data;
}

/* A word for a release slot: a value that meets the wait's condition. */
static uint32_t *release_slot(uint64_t value, uint64_t flags, struct pl_iss *st)
{
    if (!P.release) {
        P.nrelease = 1024;
        void *p = NULL;
        if (P.fidelity_own)
            P.fidelity_own(1); /* not the program's call */
        CUresult r = P.alloc_host ? P.alloc_host(&p, P.nrelease * 8) : CUDA_ERROR_NOT_FOUND;
        if (P.fidelity_own)
            P.fidelity_own(0);
        if (r != CUDA_SUCCESS) {
            pl_refuse(st, W_FAILED_DEP);
            return NULL;
        }
        P.release = p;
        P.release_ctx = pl_current();
    }
    uint32_t *w = P.release + 2 * (P.next_release++ % (P.nrelease / 2));
    uint64_t v = value;
    switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_AND: v = value ? value : 1; break;
    case CU_STREAM_WAIT_VALUE_NOR: v = 0; break;
    default: break; /* GEQ, EQ: the value itself */
    }
    memcpy(w, &v, 8);
    return w;
}

static bool is_query(unsigned fam)
{
    return fam == RP_TRF_STREAM_QUERY || fam == RP_TRF_EVENT_QUERY || fam == RP_TRF_IS_CAPTURING;
}

static bool copy_async(unsigned fam)
{
    return fam == RP_TRF_HTOD_ASYNC || fam == RP_TRF_DTOH_ASYNC || fam == RP_TRF_DTOD_ASYNC ||
           fam == RP_TRF_COPY_ASYNC || fam == RP_TRF_PEER_ASYNC;
}

/* Whether a word holding `have` meets a value wait for `want` (its
 * condition in flags' low bits; 32-bit waits compare the low words). */
static bool satisfies(uint64_t have, uint64_t want, uint64_t flags, bool wide)
{
    if (!wide)
        have = (uint32_t)have, want = (uint32_t)want;
    switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_EQ: return have == want;
    case CU_STREAM_WAIT_VALUE_AND: return (have & want) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return wide ? ~(have | want) != 0 : (uint32_t)~(have | want) != 0;
    default: /* GEQ: a cyclic comparison, as the driver documents */
        return wide ? (int64_t)(have - want) >= 0 : (int32_t)(uint32_t)(have - want) >= 0;
    }
}

static bool same_addr(const struct rt_addr *a, const struct rt_addr *b)
{
    return a->space == b->space && a->id == b->id && a->off == b->off;
}

/* ---- the arguments of every other family ----------------------------------------------------- */

/* Out-parameters and what the arguments point into. */
struct outs {
    CUdeviceptr dptr;
    CUdeviceptr_v1 dptr32;
    size_t pitch;
    unsigned int pitch32;
    void *ptr, *store[1];
    CUcontext ctx;
    CUevent ev;
    CUgraph graph;
    CUgraphExec exec;
    CUstreamCaptureStatus status;
    CUgraphExecUpdateResultInfo info;
    size_t owned_len;
    struct pl_launch launch;
};

/* The bytes a memset writes from its address (UINT64_MAX: more than any
 * memory holds). */
static uint64_t memset_extent(const struct rt_call *k)
{
    uint64_t elem = 1ull << ((k->family - RP_TRF_MEMSET8) % 3), rows, w, e;
    if (k->family < RP_TRF_MEMSET2D8)
        return __builtin_mul_overflow(k->bytes, elem, &e) ? UINT64_MAX : e;
    if (!k->height || !k->width)
        return 0;
    if (__builtin_mul_overflow(k->height - 1, k->pitch, &rows) ||
        __builtin_mul_overflow(k->width, elem, &w) || __builtin_add_overflow(rows, w, &e))
        return UINT64_MAX;
    return e;
}

/* The arguments of call k in a[], its out-parameters in o; st refused
 * (with why) where it cannot be issued. */
static void args(const struct rt_call *k, uint64_t *a, struct outs *o, struct pl_iss *st)
{
    unsigned fam = k->family;
    switch (fam) {
    case RP_TRF_GENERIC: /* cuInit, the one issued */
        break;
    case RP_TRF_LAUNCH: case RP_TRF_LAUNCH_COOP: case RP_TRF_LAUNCH_EX:
        pl_launch_args(k, a, &o->launch, st);
        break;
    case RP_TRF_HOSTFN:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[1] = (uint64_t)(uintptr_t)noop_host_function;
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC: {
        bool peer = fam == RP_TRF_PEER || fam == RP_TRF_PEER_ASYNC;
        uint64_t d = 0, s = 0;
        if (pl_mem_span(&k->dst, k->bytes, &d, st) && pl_mem_span(&k->src, k->bytes, &s, st) &&
            k->data && k->src.space != RP_TS_RAW &&
            (k->src.space == RP_TS_PAGEABLE ||
             (k->src.space == RP_TS_HOST && !P.any_hostfn &&
              !(k->src.id < P.nfirst && P.written_by_device[k->src.id]))))
            /* Recorded contents: into a pageable buffer always; into pinned
             * memory only where nothing on the device side can have filled
             * it (no copy into it, not mapped, no host function in the
             * trace), since the driver reads pinned memory when the copy
             * runs. pl_mem_span checked the span. */
            memcpy((void *)(uintptr_t)s, k->data, k->bytes);
        a[0] = d;
        if (peer) {
            a[1] = (uint64_t)(uintptr_t)pl_ctx_of(k->ctx, st);
            a[2] = s;
            a[3] = (uint64_t)(uintptr_t)pl_ctx_of(k->ctx2, st);
            a[4] = k->bytes;
            if (fam == RP_TRF_PEER_ASYNC)
                a[5] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        } else {
            a[1] = s;
            a[2] = k->bytes;
            if (copy_async(fam))
                a[3] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        }
        break;
    }
    case RP_TRF_MEMSET8: case RP_TRF_MEMSET16: case RP_TRF_MEMSET32:
    case RP_TRF_MEMSET8_ASYNC: case RP_TRF_MEMSET16_ASYNC: case RP_TRF_MEMSET32_ASYNC:
    case RP_TRF_MEMSET2D8: case RP_TRF_MEMSET2D16: case RP_TRF_MEMSET2D32:
    case RP_TRF_MEMSET2D8_ASYNC: case RP_TRF_MEMSET2D16_ASYNC: case RP_TRF_MEMSET2D32_ASYNC: {
        bool two = fam >= RP_TRF_MEMSET2D8;
        bool async = (fam >= RP_TRF_MEMSET8_ASYNC && fam <= RP_TRF_MEMSET32_ASYNC) ||
                     fam >= RP_TRF_MEMSET2D8_ASYNC;
        pl_mem_span(&k->dst, memset_extent(k), &a[0], st);
        if (two) {
            a[1] = k->pitch, a[2] = k->value, a[3] = k->width, a[4] = k->height;
            if (async)
                a[5] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        } else {
            a[1] = k->value, a[2] = k->bytes;
            if (async)
                a[3] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        }
        break;
    }
    case RP_TRF_ALLOC_V1:
        a[0] = (uint64_t)(uintptr_t)&o->dptr32, a[1] = k->bytes;
        break;
    case RP_TRF_ALLOC:
        a[0] = (uint64_t)(uintptr_t)&o->dptr, a[1] = k->bytes;
        break;
    case RP_TRF_ALLOC_PITCH_V1:
        a[0] = (uint64_t)(uintptr_t)&o->dptr32, a[1] = (uint64_t)(uintptr_t)&o->pitch32;
        a[2] = k->width, a[3] = k->height, a[4] = k->elem;
        break;
    case RP_TRF_ALLOC_PITCH:
        a[0] = (uint64_t)(uintptr_t)&o->dptr, a[1] = (uint64_t)(uintptr_t)&o->pitch;
        a[2] = k->width, a[3] = k->height, a[4] = k->elem;
        break;
    case RP_TRF_ALLOC_MANAGED:
        a[0] = (uint64_t)(uintptr_t)&o->dptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    case RP_TRF_ALLOC_HOST: case RP_TRF_HOST_ALLOC:
        /* The player zeroes pinned memory it gets: never more than the
         * machine holds. */
        if (k->bytes > P.host_limit)
            pl_refuse(st, W_HOST);
        a[0] = (uint64_t)(uintptr_t)&o->ptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    case RP_TRF_ALLOC_ASYNC:
        a[0] = (uint64_t)(uintptr_t)&o->dptr, a[1] = k->bytes;
        a[2] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        break;
    case RP_TRF_ALLOC_POOL_ASYNC:
        pl_refuse(st, W_POOL);
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_FREE_ASYNC: case RP_TRF_HOST_UNREGISTER:
        pl_mem_span(&k->dst, 0, &a[0], st);
        if (fam == RP_TRF_FREE_ASYNC)
            a[1] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        break;
    case RP_TRF_HOST_REGISTER:
        /* The player's own page-aligned buffer, registered as recorded. */
        if (k->bytes > P.host_limit) {
            pl_refuse(st, W_HOST);
            break;
        }
        o->ptr = pl_host_buffer(k->bytes, &o->owned_len);
        if (!o->ptr)
            pl_stop("cannot make a buffer of %" PRIu64 " bytes to register", k->bytes);
        a[0] = (uint64_t)(uintptr_t)o->ptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    case RP_TRF_STREAM_SYNC: case RP_TRF_STREAM_QUERY: case RP_TRF_STREAM_DESTROY:
    case RP_TRF_BEGIN_CAPTURE:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        break;
    case RP_TRF_CTX_SYNC:
        break;
    case RP_TRF_CTX_SYNC_V2: case RP_TRF_CTX_DESTROY: case RP_TRF_CTX_SET: case RP_TRF_CTX_PUSH:
        a[0] = (uint64_t)(uintptr_t)pl_ctx_of(k->ctx, st);
        break;
    case RP_TRF_EVENT_SYNC: case RP_TRF_EVENT_QUERY: case RP_TRF_EVENT_DESTROY:
        a[0] = (uint64_t)(uintptr_t)pl_event_of(k->event, st);
        break;
    case RP_TRF_EVENT_CREATE:
        a[0] = (uint64_t)(uintptr_t)&o->ev, a[1] = k->flags;
        break;
    case RP_TRF_EVENT_RECORD: case RP_TRF_EVENT_RECORD_FLAGS:
        a[0] = (uint64_t)(uintptr_t)pl_event_of(k->event, st);
        a[1] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[2] = k->flags;
        break;
    case RP_TRF_WAIT_EVENT:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[1] = (uint64_t)(uintptr_t)pl_event_of(k->event, st);
        a[2] = k->flags;
        break;
    case RP_TRF_BEGIN_CAPTURE_MODE:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[1] = k->value;
        break;
    case RP_TRF_END_CAPTURE:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[1] = (uint64_t)(uintptr_t)&o->graph;
        break;
    case RP_TRF_IS_CAPTURING:
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        a[1] = (uint64_t)(uintptr_t)&o->status;
        break;
    case RP_TRF_GRAPH_LAUNCH: case RP_TRF_GRAPH_UPLOAD:
    case RP_TRF_GRAPH_INSTANTIATE: case RP_TRF_GRAPH_EXEC_UPDATE: {
        bool x = fam != RP_TRF_GRAPH_INSTANTIATE, g = fam >= RP_TRF_GRAPH_INSTANTIATE;
        void *exec = NULL, *graph = NULL;
        if (x) {
            PL_GROW(P.execs, P.nexecs, k->exec);
            exec = P.execs[k->exec].h;
            if (!exec && P.execs[k->exec].gone)
                pl_refuse(st, W_GONE);
        }
        if (g) {
            PL_GROW(P.graphs, P.ngraphs, k->graph);
            graph = P.graphs[k->graph].h;
        }
        if (((x && !exec) || (g && !graph)) && st->live_ok)
            pl_refuse(st, W_GRAPH);
        if (fam == RP_TRF_GRAPH_INSTANTIATE) {
            a[0] = (uint64_t)(uintptr_t)&o->exec, a[1] = (uint64_t)(uintptr_t)graph;
            a[2] = k->flags;
        } else if (fam == RP_TRF_GRAPH_EXEC_UPDATE) {
            a[0] = (uint64_t)(uintptr_t)exec, a[1] = (uint64_t)(uintptr_t)graph;
            a[2] = (uint64_t)(uintptr_t)&o->info;
        } else {
            a[0] = (uint64_t)(uintptr_t)exec;
            a[1] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        }
        break;
    }
    case RP_TRF_CTX_CREATE:
        a[0] = (uint64_t)(uintptr_t)&o->ctx, a[1] = k->flags, a[2] = k->device;
        break;
    case RP_TRF_CTX_CREATE_V3: /* affinity parameters are not recorded */
        a[0] = (uint64_t)(uintptr_t)&o->ctx, a[1] = 0, a[2] = 0, a[3] = k->flags, a[4] = k->device;
        break;
    case RP_TRF_CTX_CREATE_V4: /* nor creation parameters */
        a[0] = (uint64_t)(uintptr_t)&o->ctx, a[1] = 0, a[2] = k->flags, a[3] = k->device;
        break;
    case RP_TRF_CTX_POP:
        a[0] = (uint64_t)(uintptr_t)&o->ctx;
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        a[0] = k->device;
        /* The program retained the primary context outside the trace; the
         * player retained it when it first used it. A release the player
         * holds no reference for is preceded by one, so that it tears
         * down as the program's did; so is one after which the
         * recording's context stayed active (the program held other
         * references, retained where the trace does not see). */
        if (fam == RP_TRF_PRIMARY_RELEASE && k->device < 64 && st->live_ok && P.primary_retain) {
            int want = k->answer ? 2 : 1;
            while (P.primary_refs[k->device] < want) {
                CUcontext c;
                if (P.primary_retain(&c, (CUdevice)k->device) != CUDA_SUCCESS)
                    break;
                P.primary_refs[k->device]++;
            }
        }
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL: {
        /* Function id 0: the recorder could not keep the function (its
         * memory ran out); the lookup is not replayed. */
        const struct rt_func *rf = k->func && k->func < P.r.nfuncs ? &P.r.funcs[k->func] : NULL;
        unsigned kind = fam == RP_TRF_LIBRARY_GET_KERNEL;
        struct pl_mod *m = rf && rf->layout ? pl_module_of(k->module, kind) : NULL;
        if (m && m->gone)
            pl_refuse(st, W_GONE);
        else if (!m || !m->h)
            pl_refuse(st, W_FUNCTION);
        a[0] = (uint64_t)(uintptr_t)o->store;
        a[1] = (uint64_t)(uintptr_t)(m ? m->h : NULL);
        a[2] = (uint64_t)(uintptr_t)(rf ? rf->name : NULL);
        break;
    }
    case RP_TRF_KERNEL_GET_FUNCTION:
        a[0] = (uint64_t)(uintptr_t)o->store;
        a[1] = (uint64_t)(uintptr_t)pl_func_of(k->module, st);
        break;
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD: {
        PL_GROW(P.mods, P.nmods, k->module);
        struct pl_mod *m = &P.mods[k->module];
        if (!m->loaded || !m->h) /* never loaded here: nothing to unload */
            pl_refuse(st, m->gone ? W_GONE : W_FUNCTION);
        a[0] = (uint64_t)(uintptr_t)m->h;
        break;
    }
    case RP_TRF_WAIT_VALUE32: case RP_TRF_WAIT_VALUE64:
    case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64: {
        a[0] = (uint64_t)(uintptr_t)pl_stream_of(k->stream, st);
        bool wait = fam == RP_TRF_WAIT_VALUE32 || fam == RP_TRF_WAIT_VALUE64;
        bool released = wait;
        for (size_t i = 0; wait && i < P.nvalue_writes; i++)
            if (same_addr(&P.value_writes[i].at, &k->dst) &&
                satisfies(P.value_writes[i].value, k->value, k->flags, fam == RP_TRF_WAIT_VALUE64))
                released = false;
        if (released)
            /* No recorded write can satisfy it (the host or a kernel did),
             * and a wait nothing satisfies would hold its stream for good:
             * it waits on a word of the player's that already does. */
            a[1] = (uint64_t)(uintptr_t)release_slot(k->value, k->flags, st);
        else
            pl_mem_span(&k->dst, fam == RP_TRF_WAIT_VALUE64 || fam == RP_TRF_WRITE_VALUE64 ? 8 : 4,
                        &a[1], st);
        a[2] = k->value, a[3] = k->flags;
        break;
    }
    default:
        pl_refuse(st, W_GENERIC);
        break;
    }
}

/* Primary context c of `device` was released to nothing or reset: its
 * objects are gone; it is retained again at its next use. */
static void primary_gone(uint64_t device)
{
    for (size_t i = 0; i < P.nctxs; i++)
        if (P.ctxs[i].primary && P.ctxs[i].device == device && P.ctxs[i].c) {
            pl_ctx_gone(P.ctxs[i].c);
            P.ctxs[i].retained = false;
        }
}

/* What successful call k made, kept under its trace id; what it ended,
 * forgotten. */
static void took(const struct rt_call *k, const uint64_t *a, const struct outs *o)
{
    unsigned fam = k->family;
    switch (fam) {
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_HOST:
    case RP_TRF_HOST_ALLOC: case RP_TRF_HOST_REGISTER: {
        if (!k->mem)
            break;
        bool host = fam == RP_TRF_ALLOC_HOST || fam == RP_TRF_HOST_ALLOC;
        uint64_t base = fam == RP_TRF_ALLOC_V1 || fam == RP_TRF_ALLOC_PITCH_V1 ? o->dptr32
                        : host || fam == RP_TRF_HOST_REGISTER        ? (uint64_t)(uintptr_t)o->ptr
                                                                     : o->dptr;
        PL_GROW(P.mems, P.nmems, k->mem);
        bool reg = fam == RP_TRF_HOST_REGISTER;
        P.mems[k->mem] = (struct pl_mem){base, k->bytes, pl_current(), true, false,
                                         reg ? o->ptr : NULL, reg ? o->owned_len : 0};
        pl_live_at(k->base, k->bytes, base);
        /* The player's pinned memory starts as zeros, every run: a copy
         * from it moves the same bytes with and without the shim. */
        if (host && o->ptr && k->bytes)
            memset(o->ptr, 0, k->bytes);
        break;
    }
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_FREE_ASYNC: case RP_TRF_HOST_UNREGISTER:
        /* Freed: the recorder names memory at that address by a new id. */
        if (k->dst.space != RP_TS_RAW && k->dst.off == 0 && k->dst.id < P.nmems)
            P.mems[k->dst.id].gone = true, P.mems[k->dst.id].allocated = false;
        break;
    case RP_TRF_EVENT_CREATE:
        PL_GROW(P.events, P.nevents, k->event);
        P.events[k->event] = (struct pl_obj){o->ev, pl_current(), false};
        break;
    case RP_TRF_END_CAPTURE:
        PL_GROW(P.graphs, P.ngraphs, k->graph);
        P.graphs[k->graph] = (struct pl_obj){o->graph, NULL, false};
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        PL_GROW(P.execs, P.nexecs, k->exec);
        P.execs[k->exec] = (struct pl_obj){o->exec, pl_current(), false};
        break;
    case RP_TRF_CTX_CREATE: case RP_TRF_CTX_CREATE_V3: case RP_TRF_CTX_CREATE_V4:
        PL_GROW(P.ctxs, P.nctxs, k->ctx);
        P.ctxs[k->ctx] = (struct pl_ctx){o->ctx, false, false, false, (uint32_t)k->device};
        break;
    case RP_TRF_CTX_DESTROY:
        /* Everything made in it went with it. */
        pl_ctx_gone((CUcontext)(uintptr_t)a[0]);
        if (k->ctx && k->ctx < P.nctxs && !P.ctxs[k->ctx].primary)
            P.ctxs[k->ctx] = (struct pl_ctx){NULL, false, false, true, 0};
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        if (k->device < 64) {
            if (fam == RP_TRF_PRIMARY_RELEASE && P.primary_refs[k->device] > 0)
                P.primary_refs[k->device]--;
            if (fam == RP_TRF_PRIMARY_RESET || P.primary_refs[k->device] == 0)
                primary_gone(k->device);
        }
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL: case RP_TRF_KERNEL_GET_FUNCTION:
        if (!k->func)
            break;
        PL_GROW(P.funcs, P.nfuncs, k->func);
        /* A module's function lives in its context; a library's kernel in
         * none; a kernel's CUfunction in the current one. */
        P.funcs[k->func] = (struct pl_obj){
            o->store[0],
            fam == RP_TRF_GET_FUNCTION ? pl_module_of(k->module, 0)->ctx
            : fam == RP_TRF_KERNEL_GET_FUNCTION              ? pl_current()
                                                             : NULL,
            false};
        break;
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD:
        P.mods[k->module] = (struct pl_mod){NULL, true, true, NULL};
        for (size_t i = 1; i < P.r.nfuncs && i < P.nfuncs; i++)
            if (P.r.funcs[i].defined && P.r.funcs[i].module == k->module &&
                P.r.funcs[i].kind == (fam == RP_TRF_LIBRARY_UNLOAD ? 1u : 0u))
                P.funcs[i] = (struct pl_obj){NULL, NULL, true};
        break;
    case RP_TRF_STREAM_DESTROY:
        if (k->stream >= RP_TSTREAM_FIRST && k->stream < P.nstreams)
            P.streams[k->stream] = (struct pl_obj){NULL, NULL, true};
        break;
    case RP_TRF_EVENT_DESTROY:
        if (k->event && k->event < P.nevents)
            P.events[k->event] = (struct pl_obj){NULL, NULL, true};
        break;
    default:
        break;
    }
}

void pl_issue(const struct rt_call *k, uint64_t offset)
{
    pthread_mutex_lock(&pl__state_mu);
    unsigned fam = k->family;
    struct pl_entry *e = &P.entries[k->entry];
    P.at = offset;
    P.at_entry = e->name;
    struct pl_iss st = {true, W_FAILED_DEP, k->result == CUDA_SUCCESS};
    uint64_t a[16] = {0};
    struct outs o;
    memset(&o, 0, sizeof o);
    if (fam == RP_TRF_GENERIC && strcmp(e->name, "cuInit") != 0)
        pl_refuse(&st, W_GENERIC);
    else if (!e->fn)
        pl_refuse(&st, W_MISSING);
    if (st.ok) {
        if (fam != RP_TRF_GENERIC)
            pl_ensure_init();
        args(k, a, &o, &st);
    }
    if (!st.ok) {
        e->skipped++;
        P.why[st.why]++;
        P.not_issued++;
        pthread_mutex_unlock(&pl__state_mu);
        return;
    }
    pl_caller call = e->call;
    void *fn = e->fn;
    pthread_mutex_unlock(&pl__state_mu);
    CUresult r = call(fn, a);
    pthread_mutex_lock(&pl__state_mu);
    e = &P.entries[k->entry]; /* the table may have grown meanwhile */
    P.issued++;
    if (fam == RP_TRF_GENERIC && r == CUDA_SUCCESS) { /* cuInit */
        P.inited = true;
        int n = 0;
        CUresult (CUDAAPI *count)(int *) = (CUresult (CUDAAPI *)(int *))pl_sym("cuDeviceGetCount");
        if (count && count(&n) == CUDA_SUCCESS && (size_t)n < P.r.ndevices)
            fprintf(stderr, "reprise replay: the trace used %zu devices, this driver has %d: "
                            "calls on the others fail\n", P.r.ndevices, n);
    }
    if ((int64_t)r != k->result) {
        if (is_query(fam)) {
            P.answers_differed++;
        } else {
            P.differed++;
            if (P.differed <= 5)
                fprintf(stderr, "reprise replay: %s returned %d, the program's call %" PRId64 "\n",
                        e->name, (int)r, k->result);
        }
    }
    if (r == CUDA_SUCCESS)
        took(k, a, &o);
    pthread_mutex_unlock(&pl__state_mu);
}
