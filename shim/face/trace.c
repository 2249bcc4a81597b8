/* trace.c - the trace recorder (REPRISE_TRACE): one writer per process,
 * records in the order the calls returned, into a shared mapping of the file
 * (trace_file.c).
 *
 * Every record is written under one lock, which gives the trace its global
 * order and lets each record be encoded against the state the previous ones
 * left (the last launch of each function, the ids of handles), as a reader
 * decodes it. Handles become small ids, defined by a record the first time
 * they are seen (trace_defs.c); launches and memory operations are encoded
 * by trace_enc.c, the other calls here. The format is docs/trace.md;
 * tracefmt.h has its constants. */
#include "trace.h"
#include "trace_enc.h"

#include <errno.h>
#include <limits.h>

#define W rp__tr_W

/* ---- the other calls ------------------------------------------------------------ */

static void enc_generic(struct tr_call *c)
{
    if (c->e == RP_E_cuInit && c->ok && !W.devices_done)
        rp__tr_record_devices();
    rp__tr_call_end(rp__tr_call_begin(c, 0));
}

/* Syncs and queries: their object, and (in the header) their answer and how
 * long they took. */
static void enc_sync(struct tr_call *c, const uint64_t *a)
{
    uint32_t id = 0;
    switch (c->fam) {
    case RP_TRF_STREAM_SYNC:
    case RP_TRF_STREAM_QUERY:
        id = rp__tr_stream((CUstream)(uintptr_t)a[0], c->ok || c->r == CUDA_ERROR_NOT_READY);
        break;
    case RP_TRF_CTX_SYNC_V2:
        id = rp__tr_ctx((CUcontext)(uintptr_t)a[0], c->ok);
        break;
    case RP_TRF_EVENT_SYNC:
    case RP_TRF_EVENT_QUERY:
        id = rp__tr_event((CUevent)(uintptr_t)a[0]);
        break;
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 16);
    if (!p)
        return;
    if (c->fam != RP_TRF_CTX_SYNC)
        p = rp_tv_put(p, id);
    rp__tr_call_end(p);
}

static void enc_event(struct tr_call *c, const uint64_t *a)
{
    uint32_t ev = 0, sid = 0;
    uint64_t flags = 0;
    switch (c->fam) {
    case RP_TRF_EVENT_CREATE:
        if (c->ok) {
            CUevent e = *(CUevent *)(uintptr_t)a[0];
            ev = ++W.next_event;
            rp__tr_map_put(&W.events, (uint64_t)(uintptr_t)e, ev);
            rp__tr_own(TR_OWN_EVENT, ev, rp__tr_ctx_current());
        }
        flags = a[1];
        break;
    case RP_TRF_EVENT_DESTROY:
        ev = rp__tr_event((CUevent)(uintptr_t)a[0]);
        if (c->ok)
            rp__tr_map_del(&W.events, a[0]);
        break;
    case RP_TRF_EVENT_RECORD:
    case RP_TRF_EVENT_RECORD_FLAGS:
        ev = rp__tr_event((CUevent)(uintptr_t)a[0]);
        sid = rp__tr_stream((CUstream)(uintptr_t)a[1], c->ok);
        flags = c->fam == RP_TRF_EVENT_RECORD_FLAGS ? a[2] : 0;
        break;
    case RP_TRF_WAIT_EVENT:
        sid = rp__tr_stream((CUstream)(uintptr_t)a[0], c->ok);
        ev = rp__tr_event((CUevent)(uintptr_t)a[1]);
        flags = a[2];
        break;
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 32);
    if (!p)
        return;
    p = rp_tv_put(p, ev);
    if (c->fam != RP_TRF_EVENT_CREATE && c->fam != RP_TRF_EVENT_DESTROY)
        p = rp_tv_put(p, sid);
    if (c->fam == RP_TRF_EVENT_CREATE || c->fam == RP_TRF_EVENT_RECORD_FLAGS ||
        c->fam == RP_TRF_WAIT_EVENT)
        p = rp_tv_put(p, flags);
    rp__tr_call_end(p);
}

static void enc_capture(struct tr_call *c, const uint64_t *a)
{
    uint32_t sid = rp__tr_stream((CUstream)(uintptr_t)a[0], c->ok);
    uint64_t extra = 0;
    if (c->fam == RP_TRF_BEGIN_CAPTURE_MODE) {
        extra = a[1];
    } else if (c->fam == RP_TRF_END_CAPTURE) {
        CUgraph g = a[1] ? *(CUgraph *)(uintptr_t)a[1] : NULL;
        if (c->ok && g) {
            extra = ++W.next_graph;
            rp__tr_map_put(&W.graphs, (uint64_t)(uintptr_t)g, (uint32_t)extra);
        }
    } else if (c->fam == RP_TRF_IS_CAPTURING) {
        if (c->ok && a[1])
            extra = (uint64_t)*(CUstreamCaptureStatus *)(uintptr_t)a[1];
    }
    unsigned char *p = rp__tr_call_begin(c, 32);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    if (c->fam != RP_TRF_BEGIN_CAPTURE)
        p = rp_tv_put(p, extra);
    rp__tr_call_end(p);
}

static uint32_t graph_id(CUgraph g)
{
    uint32_t v = g ? rp__tr_map_get(&W.graphs, (uint64_t)(uintptr_t)g) : 0;
    return v ? v - 1 : 0;
}

static uint32_t exec_id(CUgraphExec x)
{
    uint32_t v = x ? rp__tr_map_get(&W.execs, (uint64_t)(uintptr_t)x) : 0;
    return v ? v - 1 : 0;
}

static void enc_graph(struct tr_call *c, const uint64_t *a)
{
    uint32_t x = 0, g = 0, sid = 0;
    uint64_t flags = 0;
    switch (c->fam) {
    case RP_TRF_GRAPH_LAUNCH:
    case RP_TRF_GRAPH_UPLOAD:
        x = exec_id((CUgraphExec)(uintptr_t)a[0]);
        sid = rp__tr_stream((CUstream)(uintptr_t)a[1], c->ok);
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        g = graph_id((CUgraph)(uintptr_t)a[1]);
        flags = a[2];
        if (c->ok) {
            CUgraphExec e = *(CUgraphExec *)(uintptr_t)a[0];
            x = ++W.next_exec;
            rp__tr_map_put(&W.execs, (uint64_t)(uintptr_t)e, x);
            rp__tr_own(TR_OWN_EXEC, x, rp__tr_ctx_current());
        }
        break;
    case RP_TRF_GRAPH_EXEC_UPDATE:
        x = exec_id((CUgraphExec)(uintptr_t)a[0]);
        g = graph_id((CUgraph)(uintptr_t)a[1]);
        break;
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 32);
    if (!p)
        return;
    p = rp_tv_put(p, x);
    if (c->fam == RP_TRF_GRAPH_LAUNCH || c->fam == RP_TRF_GRAPH_UPLOAD) {
        p = rp_tv_put(p, sid);
    } else {
        p = rp_tv_put(p, g);
        if (c->fam == RP_TRF_GRAPH_INSTANTIATE)
            p = rp_tv_put(p, flags);
    }
    rp__tr_call_end(p);
}

/* A context's destroy on this thread whose context the recorder forgot as
 * the call began (rp__tr_before): its id then, for the record. */
static _Thread_local uint32_t tr_dying;
static _Thread_local bool tr_dying_set;

void rp__tr_before(enum rp__entry e, const uint64_t *a)
{
    if (RP_LIKELY(rp__tr_families[e] != RP_TRF_CTX_DESTROY))
        return;
    tr_dying_set = false;
    int saved = errno;
    rp__tr_lock();
    uint32_t v = W.open ? rp__tr_map_get(&W.ctxs, a[0]) : 0;
    if (v) {
        /* The driver gives the context's handles back during the call, and
         * another thread may be handed them for objects of its own before
         * this call returns and is recorded: were they still mapped then,
         * that thread's calls would be recorded against this context's
         * dead objects (a launch on a stream of a context the replay has
         * not destroyed yet: CUDA_ERROR_INVALID_HANDLE). So they are
         * forgotten now. A destroy that then fails leaves its context's
         * live objects to be defined again at their next sight. */
        tr_dying = v - 1;
        tr_dying_set = true;
        rp__tr_ctx_gone(tr_dying);
        rp__tr_map_del(&W.ctxs, a[0]);
    }
    rp__tr_unlock();
    errno = saved;
}

static void enc_ctx(struct tr_call *c, const uint64_t *a)
{
    uint32_t id = 0;
    uint64_t flags = 0, dev = 0;
    switch (c->fam) {
    case RP_TRF_CTX_CREATE:
    case RP_TRF_CTX_CREATE_V3:
    case RP_TRF_CTX_CREATE_V4:
        if (c->fam == RP_TRF_CTX_CREATE)
            flags = a[1], dev = a[2];
        else if (c->fam == RP_TRF_CTX_CREATE_V3)
            flags = a[3], dev = a[4];
        else
            flags = a[2], dev = a[3];
        if (c->ok) {
            CUcontext n = *(CUcontext *)(uintptr_t)a[0];
            id = ++W.next_ctx;
            rp__tr_map_put(&W.ctxs, (uint64_t)(uintptr_t)n, id);
            rp__tr_ctx_info(id, (uint32_t)dev, false);
        }
        break;
    case RP_TRF_CTX_DESTROY:
        if (tr_dying_set) { /* forgotten as the call began */
            id = tr_dying;
            tr_dying_set = false;
            break;
        }
        id = rp__tr_ctx((CUcontext)(uintptr_t)a[0], false);
        if (c->ok) {
            /* Its handles and its own may come back for other objects. */
            rp__tr_ctx_gone(id);
            rp__tr_map_del(&W.ctxs, a[0]);
        }
        break;
    case RP_TRF_CTX_SET:
    case RP_TRF_CTX_PUSH:
        id = rp__tr_ctx((CUcontext)(uintptr_t)a[0], c->ok);
        break;
    case RP_TRF_CTX_POP:
        if (c->ok && a[0])
            id = rp__tr_ctx(*(CUcontext *)(uintptr_t)a[0], true);
        break;
    case RP_TRF_PRIMARY_RELEASE:
    case RP_TRF_PRIMARY_RESET:
        dev = a[0];
        /* Whether the context lives on: the program may hold more
         * references than the trace saw (retains are not interposed). */
        if (W.primary_state) {
            unsigned int fl = 0;
            int active = 0;
            if (W.primary_state((CUdevice)dev, &fl, &active) == CUDA_SUCCESS)
                flags = active ? 1 : 0;
        }
        /* A context released to nothing, or reset, took its objects with
         * it (the same as a destroy). */
        if (c->ok && (c->fam == RP_TRF_PRIMARY_RESET || !flags))
            rp__tr_primary_gone((uint32_t)dev);
        break;
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 40);
    if (!p)
        return;
    if (c->fam == RP_TRF_PRIMARY_RELEASE || c->fam == RP_TRF_PRIMARY_RESET) {
        p = rp_tv_put(p, dev);
        p = rp_tv_put(p, flags);
    } else {
        p = rp_tv_put(p, id);
        if (c->fam == RP_TRF_CTX_CREATE || c->fam == RP_TRF_CTX_CREATE_V3 ||
            c->fam == RP_TRF_CTX_CREATE_V4) {
            p = rp_tv_put(p, flags);
            p = rp_tv_put(p, dev);
        }
    }
    rp__tr_call_end(p);
}

/* Functions and kernels: the handle a lookup returned, defined (name and
 * layout) the first time; unloads forget their module's functions. */
static void enc_module(struct tr_call *c, const uint64_t *a)
{
    uint32_t fid = 0, mid = 0;
    switch (c->fam) {
    case RP_TRF_GET_FUNCTION:
    case RP_TRF_LIBRARY_GET_KERNEL: {
        bool lib = c->fam == RP_TRF_LIBRARY_GET_KERNEL;
        mid = rp__tr_module((const void *)(uintptr_t)a[1], lib ? 1 : 0);
        if (c->ok) {
            const void *h = *(void *const *)(uintptr_t)a[0];
            struct tr_func *f = rp__tr_func(h, lib ? 1 : 0, mid, (const char *)(uintptr_t)a[2], true);
            fid = f ? f->id : 0;
        }
        break;
    }
    case RP_TRF_KERNEL_GET_FUNCTION: {
        struct tr_func *k = rp__tr_func((const void *)(uintptr_t)a[1], 1, 0, NULL, c->ok);
        mid = k ? k->id : 0;
        if (c->ok) {
            const void *h = *(void *const *)(uintptr_t)a[0];
            struct tr_func *f = rp__tr_func(h, 2, mid, NULL, true);
            fid = f ? f->id : 0;
        }
        break;
    }
    case RP_TRF_MODULE_UNLOAD:
    case RP_TRF_LIBRARY_UNLOAD: {
        uint32_t v = rp__tr_map_get(&W.modules, a[0]);
        mid = v ? v - 1 : 0;
        if (c->ok && mid) {
            rp__tr_map_del(&W.modules, a[0]);
            /* Its functions' handles may come back for another module. */
            rp__tr_module_forget_functions(mid);
        }
        break;
    }
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 24);
    if (!p)
        return;
    if (c->fam != RP_TRF_MODULE_UNLOAD && c->fam != RP_TRF_LIBRARY_UNLOAD)
        p = rp_tv_put(p, fid);
    p = rp_tv_put(p, mid);
    rp__tr_call_end(p);
}

static void enc_stream(struct tr_call *c, const uint64_t *a)
{
    uint32_t sid = 0;
    switch (c->fam) {
    case RP_TRF_STREAM_DESTROY:
        sid = rp__tr_stream((CUstream)(uintptr_t)a[0], false);
        if (c->ok) {
            rp__tr_map_del(&W.streams, a[0]);
            if (W.last_stream_key == a[0])
                W.last_stream_key = 0;
        }
        break;
    case RP_TRF_HOSTFN:
        sid = rp__tr_stream((CUstream)(uintptr_t)a[0], c->ok);
        break;
    default:
        break;
    }
    unsigned char *p = rp__tr_call_begin(c, 16);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    rp__tr_call_end(p);
}

static void enc_value(struct tr_call *c, const uint64_t *a)
{
    uint32_t sid = rp__tr_stream((CUstream)(uintptr_t)a[0], c->ok);
    struct tr_addr da = rp__tr_addr(a[1], TR_A_UNIFIED, c->ok);
    unsigned char *p = rp__tr_call_begin(c, 48);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    p = rp__tr_put_addr(p, da);
    p = rp_tv_put(p, a[2]);
    p = rp_tv_put(p, a[3]);
    rp__tr_call_end(p);
}

/* Families whose record carries how long the call took: the ones that may
 * wait. */
static bool timed(unsigned fam)
{
    switch (fam) {
    case RP_TRF_STREAM_SYNC:
    case RP_TRF_CTX_SYNC:
    case RP_TRF_CTX_SYNC_V2:
    case RP_TRF_EVENT_SYNC:
    case RP_TRF_HTOD:
    case RP_TRF_DTOH:
    case RP_TRF_COPY:
    case RP_TRF_PEER:
    case RP_TRF_FREE:
    case RP_TRF_FREE_HOST:
        return true;
    default:
        return false;
    }
}

void rp__tr_record(enum rp__entry e, CUresult r, uint64_t t0, uint64_t seq, const uint64_t *a)
{
    int saved = errno;
    struct tr_call c = {e, rp__tr_families[e], r, t0, 0, r == CUDA_SUCCESS, seq};
    if (timed(c.fam)) {
        uint64_t t1 = rp__tr_ticks();
        c.dur = t1 > t0 ? t1 - t0 : 1;
    }
    rp__tr_lock();
    if (!W.open) {
        rp__tr_unlock();
        errno = saved;
        return;
    }
    switch (c.fam) {
    case RP_TRF_LAUNCH:
    case RP_TRF_LAUNCH_COOP:
    case RP_TRF_LAUNCH_EX:
        rp__tr_enc_launch(&c, a);
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC:
        rp__tr_enc_copy(&c, a);
        break;
    case RP_TRF_MEMSET8: case RP_TRF_MEMSET16: case RP_TRF_MEMSET32:
    case RP_TRF_MEMSET8_ASYNC: case RP_TRF_MEMSET16_ASYNC: case RP_TRF_MEMSET32_ASYNC:
    case RP_TRF_MEMSET2D8: case RP_TRF_MEMSET2D16: case RP_TRF_MEMSET2D32:
    case RP_TRF_MEMSET2D8_ASYNC: case RP_TRF_MEMSET2D16_ASYNC: case RP_TRF_MEMSET2D32_ASYNC:
        rp__tr_enc_memset(&c, a);
        break;
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_HOST: case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_POOL_ASYNC:
        rp__tr_enc_alloc(&c, a);
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_FREE_ASYNC: case RP_TRF_HOST_UNREGISTER:
        rp__tr_enc_free(&c, a);
        break;
    case RP_TRF_HOST_REGISTER:
        rp__tr_enc_register(&c, a);
        break;
    case RP_TRF_STREAM_SYNC: case RP_TRF_STREAM_QUERY: case RP_TRF_CTX_SYNC:
    case RP_TRF_CTX_SYNC_V2: case RP_TRF_EVENT_SYNC: case RP_TRF_EVENT_QUERY:
        enc_sync(&c, a);
        break;
    case RP_TRF_EVENT_CREATE: case RP_TRF_EVENT_DESTROY: case RP_TRF_EVENT_RECORD:
    case RP_TRF_EVENT_RECORD_FLAGS: case RP_TRF_WAIT_EVENT:
        enc_event(&c, a);
        break;
    case RP_TRF_BEGIN_CAPTURE: case RP_TRF_BEGIN_CAPTURE_MODE: case RP_TRF_END_CAPTURE:
    case RP_TRF_IS_CAPTURING:
        enc_capture(&c, a);
        break;
    case RP_TRF_GRAPH_LAUNCH: case RP_TRF_GRAPH_UPLOAD: case RP_TRF_GRAPH_INSTANTIATE:
    case RP_TRF_GRAPH_EXEC_UPDATE:
        enc_graph(&c, a);
        break;
    case RP_TRF_CTX_CREATE: case RP_TRF_CTX_CREATE_V3: case RP_TRF_CTX_CREATE_V4:
    case RP_TRF_CTX_DESTROY: case RP_TRF_CTX_SET: case RP_TRF_CTX_PUSH: case RP_TRF_CTX_POP:
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        enc_ctx(&c, a);
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL: case RP_TRF_KERNEL_GET_FUNCTION:
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD:
        enc_module(&c, a);
        break;
    case RP_TRF_STREAM_DESTROY: case RP_TRF_HOSTFN:
        enc_stream(&c, a);
        break;
    case RP_TRF_WAIT_VALUE32: case RP_TRF_WAIT_VALUE64: case RP_TRF_WRITE_VALUE32:
    case RP_TRF_WRITE_VALUE64:
        enc_value(&c, a);
        break;
    default:
        enc_generic(&c);
        break;
    }
    rp__tr_unlock();
    errno = saved;
}

/* ---- open, close, fork ---------------------------------------------------------- */

bool rp__trace_setup(struct rp__driver *core, const struct rp__driver *real)
{
    const char *pattern = rp__option(RP_OPTION_TRACE).path;
    char path[PATH_MAX];
    if (!rp__stats_path(pattern, path, sizeof path)) {
        rp__warn("REPRISE_TRACE=%s: the expanded path is too long; not recording", pattern);
        return false;
    }
    if (!rp__tr_file_open(path, real))
        return false;
    rp__tr_install(core);
    atomic_store(&rp__tr_live, true);
    rp__info("recording the trace %s", path);
    return true;
}

void rp__trace_forked(void)
{
    /* No lock: another thread of the parent may have held it at the fork. */
    atomic_store(&rp__tr_live, false);
    W.open = false;
    W.forked = true;
}

void rp__trace_close(void)
{
    /* After a stop (memory, disk) the file is still cut to its length,
     * without an END record: the reader says the trace ends early. */
    if (W.forked)
        return;
    uint64_t t = rp__tr_ticks();
    rp__tr_lock();
    atomic_store(&rp__tr_live, false);
    rp__tr_file_close(t);
    rp__tr_unlock();
}
