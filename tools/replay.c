/* replay.c - `reprise replay FILE`: the player. It issues a trace's stream of
 * driver calls again, against a driver (the CPU driver, or a GPU's), with
 * the program's threads in the recorded order and, by default, the host
 * gaps as recorded; with --shim, under libreprise.so (REPRISE=1).
 *
 * Each recorded call is issued through the entry point the program called
 * (dlsym of its exported name on the driver: under the shim, its wrapper),
 * with handles and addresses translated to the player's own: streams,
 * events, contexts and graphs it creates as the trace did; device and
 * pinned memory it allocates with the recorded sizes; a buffer of its own
 * for each pageable host address. Kernels are empty kernels of the same name
 * and parameter layout, from PTX text the player writes (loaded with
 * cuModuleLoadData / cuLibraryLoadData); parameter bytes are passed verbatim
 * (an empty kernel dereferences nothing). Host functions do nothing; a value
 * wait that no recorded write can release is released at once. What is not
 * replayed (lookups, queries of attributes, entries of the GENERIC family)
 * is counted by entry and said at the end.
 *
 * Calls run one at a time, in the order they returned (or began:
 * --order entered): a call on another thread is handed to that thread with
 * the baton; a call that may wait hands the baton on first, so that the
 * other threads go on meanwhile, where the next call began (as recorded)
 * before it returned. Calls were recorded when they returned, so
 * whatever one thread waited for another thread to do comes before it: the
 * player never waits on work that comes later. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "entries.h"
#include "replay.h"
#include "traceread.h"

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

typedef CUresult (*caller_fn)(void *, const uint64_t *);
static const struct {
    const char *name;
    caller_fn call;
} callers[] = {
#define X(name, params, args, role) {#name, call_##name},
    RP_ENTRIES(X)
#undef X
};

/* ---- the player's state ------------------------------------------------------ */

struct pctx { CUcontext c; bool primary, retained; uint32_t device; };
struct pmem { uint64_t base; uint64_t size; bool host_pinned, registered, allocated; void *owned; };
struct pmod { void *h; bool loaded; CUcontext ctx; };
struct pentry { void *fn; caller_fn call; const char *name; uint64_t skipped; };

static struct {
    struct rt_reader r;
    void *drv;
    bool timing;
    bool strict;
    bool entry_order; /* --order entered */
    uint64_t t0; /* the player's start (ns) */
    /* translations, by trace id */
    struct pctx *ctxs; size_t nctxs;
    CUstream *streams; size_t nstreams;
    CUevent *events; size_t nevents;
    void **funcs; size_t nfuncs;
    struct pmod *mods; size_t nmods;
    struct pmod lib0, mod0; /* functions whose module the trace does not know */
    /* PTX text per module (by kind: modules, libraries), written by the
     * first pass, which has seen every function */
    char **ptx[2]; size_t nptx[2];
    struct pmem *mems; size_t nmems;
    CUgraph *graphs; size_t ngraphs;
    CUgraphExec *execs; size_t nexecs;
    struct pentry *entries; size_t nentries;
    /* from the first pass */
    uint64_t *pageable_size;      /* by memory id */
    bool *written_by_device;      /* host memory ids a copy or mapping may fill */
    bool any_hostfn;
    struct rt_addr *value_writes; size_t nvalue_writes;
    int primary_refs[64];
    /* release words for value waits (pinned, allocated at the first one) */
    uint32_t *release;
    size_t nrelease;
    /* counts */
    uint64_t issued, not_issued, differed, answers_differed, calls;
    uint64_t why[8];
    /* driver entries the player uses on its own (not interposed) */
    CUresult (CUDAAPI *ctx_current)(CUcontext *);
    CUresult (CUDAAPI *primary_retain)(CUcontext *, CUdevice);
    CUresult (CUDAAPI *stream_create)(CUstream *, unsigned int, int);
    CUresult (CUDAAPI *module_load)(CUmodule *, const void *);
    CUresult (CUDAAPI *library_load)(CUlibrary *, const void *, CUjit_option *, void **, unsigned int,
                                     CUlibraryOption *, void **, unsigned int);
    CUresult (CUDAAPI *get_function)(CUfunction *, CUmodule, const char *);
    CUresult (CUDAAPI *get_kernel)(CUkernel *, CUlibrary, const char *);
    CUresult (CUDAAPI *push)(CUcontext);
    CUresult (CUDAAPI *pop)(CUcontext *);
    CUresult (CUDAAPI *init)(unsigned int);
    CUresult (CUDAAPI *alloc)(CUdeviceptr *, size_t);
    CUresult (CUDAAPI *alloc_host)(void **, size_t);
    CUresult (CUDAAPI *event_create)(CUevent *, unsigned int);
    bool inited;
} P;

enum why {
    W_GENERIC,     /* the family is not replayed */
    W_MISSING,     /* the driver lacks the entry */
    W_ADDRESS,     /* an address the trace knows no memory for */
    W_FUNCTION,    /* a function the player cannot make */
    W_GRAPH,       /* an executable or graph the trace did not see made */
    W_POOL,        /* memory pools are not recorded */
    W_FAILED_DEP,  /* something it needs failed to replay */
    W_N
};
static const char *const why_names[W_N] = {
    "not replayed by design (lookups, attributes, other calls)", "missing in the driver",
    "addresses of memory the trace does not know", "functions without a parameter layout or PTX",
    "graphs the trace did not see made", "memory pools", "what they need failed to replay"};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "reprise replay: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *grow_(void *p, size_t *n, size_t elem, size_t want)
{
    if (want < *n)
        return p;
    size_t nn = *n ? *n : 16;
    while (nn <= want)
        nn *= 2;
    void *t = realloc(p, nn * elem);
    if (!t)
        die("out of memory");
    memset((char *)t + *n * elem, 0, (nn - *n) * elem);
    *n = nn;
    return t;
}
#define GROW(tab, n, want) ((tab) = grow_((tab), &(n), sizeof *(tab), (want)))

static void *sym(const char *name)
{
    return dlsym(P.drv, name);
}

/* ---- what the player makes on its own --------------------------------------------- */

static void ensure_init(void)
{
    if (!P.inited && P.init)
        P.init(0);
    P.inited = true;
}

static CUcontext ctx_of(uint32_t id)
{
    if (!id)
        return NULL;
    GROW(P.ctxs, P.nctxs, id);
    struct pctx *c = &P.ctxs[id];
    if (c->c && (!c->primary || c->retained))
        return c->c;
    const struct rt_ctx *d = id < P.r.nctxs ? &P.r.ctxs[id] : NULL;
    if (d && (d->flags & RP_TC_PRIMARY) && P.primary_retain) {
        ensure_init();
        CUcontext h = NULL;
        if (P.primary_retain(&h, (CUdevice)d->device) == CUDA_SUCCESS) {
            *c = (struct pctx){h, true, true, d->device};
            if (d->device < 64)
                P.primary_refs[d->device]++;
        }
    }
    return c->c;
}

/* Runs f with context c current on this thread, pushing it if another is:
 * the player's own creations (a stream first used after its context was
 * left) go where the program made them. */
static CUcontext current(void)
{
    CUcontext c = NULL;
    if (P.ctx_current)
        P.ctx_current(&c);
    return c;
}

static CUstream stream_of(uint32_t id, bool *ok)
{
    if (id == RP_TSTREAM_NULL)
        return NULL;
    if (id == RP_TSTREAM_LEGACY)
        return CU_STREAM_LEGACY;
    if (id == RP_TSTREAM_PER_THREAD)
        return CU_STREAM_PER_THREAD;
    GROW(P.streams, P.nstreams, id);
    if (P.streams[id])
        return P.streams[id];
    const struct rt_stream *d = &P.r.streams[id];
    CUcontext want = ctx_of(d->ctx), cur = current();
    bool pushed = want && want != cur && P.push && P.push(want) == CUDA_SUCCESS;
    CUstream s = NULL;
    if (!P.stream_create ||
        P.stream_create(&s, (unsigned)d->flags, (int)d->prio) != CUDA_SUCCESS)
        s = NULL;
    if (pushed) {
        CUcontext popped;
        P.pop(&popped);
    }
    if (!s)
        *ok = false;
    P.streams[id] = s;
    return s;
}

static CUevent event_of(uint32_t id, bool *ok)
{
    if (!id)
        return NULL;
    GROW(P.events, P.nevents, id);
    if (!P.events[id] && P.event_create) {
        /* An event the trace saw used before it saw it made. */
        if (P.event_create(&P.events[id], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
            P.events[id] = NULL;
    }
    if (!P.events[id])
        *ok = false;
    return P.events[id];
}

/* The PTX text of an empty kernel per function of module `mod` (kind 0 for
 * a module, 1 for a library; mod 0: the functions of no known module). Each
 * parameter is an array of bytes at the recorded offset: its alignment is
 * the largest power of two that places it there; where none does (a gap
 * wider than any alignment explains) a padding parameter fills the gap, and
 * kernelParams get a pointer for it (pad_before[i] says how many). */
static char *ptx_for(uint32_t mod, unsigned kind)
{
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    if (!s)
        die("out of memory");
#define EMIT(...)                                                               \
    do {                                                                        \
        for (;;) {                                                              \
            int k_ = snprintf(s + n, cap - n, __VA_ARGS__);                     \
            if (k_ >= 0 && (size_t)k_ < cap - n) {                              \
                n += (size_t)k_;                                                \
                break;                                                          \
            }                                                                   \
            cap *= 2;                                                           \
            char *t_ = realloc(s, cap);                                         \
            if (!t_)                                                            \
                die("out of memory");                                           \
            s = t_;                                                             \
        }                                                                       \
    } while (0)
    EMIT("// reprise replay: empty kernels with the recorded parameter layouts\n"
         ".version 7.0\n.target sm_50\n.address_size 64\n");
    for (size_t i = 1; i < P.r.nfuncs; i++) {
        const struct rt_func *f = &P.r.funcs[i];
        if (!f->defined || f->kind != kind || f->module != mod || !f->layout || !f->name[0])
            continue;
        bool dup = false;
        for (size_t j = 1; j < i && !dup; j++) {
            const struct rt_func *g = &P.r.funcs[j];
            dup = g->defined && g->kind == kind && g->module == mod && g->layout &&
                  !strcmp(g->name, f->name);
        }
        if (dup)
            continue;
        EMIT("\n.visible .entry %s(", f->name);
        size_t end = 0, pads = 0;
        for (uint32_t p = 0; p < f->nparams; p++) {
            size_t off = f->off[p], size = f->size[p] ? f->size[p] : 1, align = 1;
            if (off < end)
                off = end; /* overlapping layouts cannot be declared: packed */
            for (size_t a = 4096; a >= 1; a /= 2)
                if (off % a == 0 && ((end + a - 1) & ~(a - 1)) == off) {
                    align = a;
                    break;
                }
            if (((end + align - 1) & ~(align - 1)) != off) {
                EMIT("%s\n  .param .b8 pad%zu[%zu]", p || pads ? "," : "", pads, off - end);
                pads++;
                end = off;
                align = 1;
            }
            EMIT("%s\n  .param .align %zu .b8 p%u[%zu]", p || pads ? "," : "", align, p, size);
            end = off + size;
        }
        EMIT("\n)\n{\n  ret;\n}\n");
    }
#undef EMIT
    return s;
}

static struct pmod *module_of(uint32_t mod, unsigned kind)
{
    struct pmod *m;
    if (mod == 0) {
        m = kind ? &P.lib0 : &P.mod0;
    } else {
        GROW(P.mods, P.nmods, mod);
        m = &P.mods[mod];
    }
    if (m->loaded)
        return m;
    char *ptx = mod < P.nptx[kind] ? P.ptx[kind][mod] : NULL;
    if (!ptx)
        ptx = "// no kernel\n.version 7.0\n.target sm_50\n.address_size 64\n";
    CUresult r = kind ? (P.library_load ? P.library_load((CUlibrary *)&m->h, ptx, NULL, NULL, 0, NULL,
                                                         NULL, 0)
                                        : CUDA_ERROR_NOT_FOUND)
                      : (P.module_load ? P.module_load((CUmodule *)&m->h, ptx) : CUDA_ERROR_NOT_FOUND);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "reprise replay: the driver refused the PTX of %s %u (error %d); "
                        "its kernels are not launched\n",
                kind ? "library" : "module", mod, (int)r);
        m->h = NULL;
    }
    m->loaded = true;
    m->ctx = current();
    return m;
}

/* The player's handle for function id (a CUfunction, or a CUkernel), made
 * from its module's PTX the first time it is needed. */
static void *func_of(uint32_t id, bool *ok)
{
    if (!id)
        return NULL;
    GROW(P.funcs, P.nfuncs, id);
    if (P.funcs[id])
        return P.funcs[id];
    const struct rt_func *f = &P.r.funcs[id];
    void *h = NULL;
    if (f->layout && f->kind == 0) {
        struct pmod *m = module_of(f->module, 0);
        if (m->h && P.get_function)
            P.get_function((CUfunction *)&h, m->h, f->name);
    } else if (f->layout && f->kind == 1) {
        struct pmod *m = module_of(f->module, 1);
        if (m->h && P.get_kernel)
            P.get_kernel((CUkernel *)&h, m->h, f->name);
    }
    if (!h) {
        P.why[W_FUNCTION]++;
        *ok = false;
    }
    P.funcs[id] = h;
    return h;
}

/* A host address for memory id of space HOST, DEVICE or PAGEABLE, plus off. */
static bool mem_addr(const struct rt_addr *a, uint64_t *out, bool live_ok)
{
    if (a->space == RP_TS_RAW) {
        *out = a->off;
        /* An address of no memory the trace knows: passed as it is only
         * where the program's call failed too (an error to reproduce). */
        return a->off == 0 || !live_ok;
    }
    GROW(P.mems, P.nmems, a->id);
    struct pmem *m = &P.mems[a->id];
    if (!m->allocated) {
        const struct rt_mem *d = &P.r.mems[a->id];
        if (d->space == RP_TS_PAGEABLE) {
            uint64_t size = P.pageable_size[a->id] ? P.pageable_size[a->id] : 1;
            m->owned = calloc(1, size);
            if (!m->owned)
                die("out of memory for a pageable buffer of %" PRIu64 " bytes", size);
            m->base = (uint64_t)(uintptr_t)m->owned;
            m->size = size;
            m->allocated = true;
        } else if (d->space == RP_TS_DEVICE && P.alloc) {
            /* Memory the trace saw used before it saw it allocated (a
             * MEM record): allocated once, in its context. */
            CUcontext want = ctx_of(d->ctx), cur = current();
            bool pushed = want && want != cur && P.push && P.push(want) == CUDA_SUCCESS;
            CUdeviceptr p = 0;
            if (P.alloc(&p, d->bytes ? d->bytes : 1) == CUDA_SUCCESS) {
                m->base = p;
                m->size = d->bytes;
                m->allocated = true;
            }
            if (pushed) {
                CUcontext popped;
                P.pop(&popped);
            }
        }
        if (!m->allocated)
            return false;
    }
    if (!m->base)
        return false;
    *out = m->base + a->off;
    return true;
}

static uint32_t main_tid; /* the recorded thread the process's main thread plays */

/* ---- the first pass: what the replay needs to know in advance --------------------------- */

static bool same_addr(const struct rt_addr *a, const struct rt_addr *b)
{
    return a->space == b->space && a->id == b->id && a->off == b->off;
}

static void first_pass(void)
{
    struct rt_rec rec;
    int rc;
    size_t ncap = 0, nwcap = 0;
    while ((rc = rt_next(&P.r, &rec)) == 1) {
        if (rec.tag != RP_TR_CALL)
            continue;
        const struct rt_call *k = &rec.call;
        if (!main_tid)
            main_tid = k->tid;
        size_t need = P.r.nmems;
        if (need > ncap) {
            size_t old = ncap;
            GROW(P.pageable_size, old, need);
            old = ncap;
            GROW(P.written_by_device, old, need);
            ncap = old;
        }
        switch (k->family) {
        case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
        case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
            if (k->src.space == RP_TS_PAGEABLE && k->bytes > P.pageable_size[k->src.id])
                P.pageable_size[k->src.id] = k->bytes;
            if (k->dst.space == RP_TS_PAGEABLE && k->bytes > P.pageable_size[k->dst.id])
                P.pageable_size[k->dst.id] = k->bytes;
            if (k->dst.space == RP_TS_HOST)
                P.written_by_device[k->dst.id] = true;
            break;
        case RP_TRF_HOSTFN:
            P.any_hostfn = true;
            break;
        case RP_TRF_HOST_ALLOC:
            if (k->mem && (k->flags & CU_MEMHOSTALLOC_DEVICEMAP))
                P.written_by_device[k->mem] = true;
            break;
        case RP_TRF_HOST_REGISTER:
            if (k->mem && (k->flags & CU_MEMHOSTREGISTER_DEVICEMAP))
                P.written_by_device[k->mem] = true;
            break;
        case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64: {
            size_t old = nwcap;
            GROW(P.value_writes, old, P.nvalue_writes);
            nwcap = old;
            P.value_writes[P.nvalue_writes++] = k->dst;
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0)
        die("%s", P.r.err);
    size_t old = ncap;
    GROW(P.pageable_size, old, P.r.nmems);
    old = ncap;
    GROW(P.written_by_device, old, P.r.nmems);
    /* Every function is known now: the PTX of each module. */
    for (unsigned kind = 0; kind < 2; kind++) {
        size_t n = P.r.nmodules;
        P.ptx[kind] = calloc(n + 1, sizeof *P.ptx[kind]);
        if (!P.ptx[kind])
            die("out of memory");
        P.nptx[kind] = n + 1;
        for (size_t m = 0; m <= n && m < P.nptx[kind]; m++)
            if (m == 0 || (m < P.r.nmodules && P.r.modules[m].defined && P.r.modules[m].kind == kind))
                P.ptx[kind][m] = ptx_for((uint32_t)m, kind);
    }
    rt_rewind(&P.r);
}

/* ---- issuing one call ------------------------------------------------------------------------ */

static void noop_host_function(void *data)
{
    (void)data;
}

/* A word for a release slot: a value that meets the wait's condition. */
static uint32_t *release_slot(uint64_t value, uint64_t flags, bool *ok)
{
    if (!P.release) {
        P.nrelease = 1024;
        void *p = NULL;
        if (!P.alloc_host || P.alloc_host(&p, P.nrelease * 8) != CUDA_SUCCESS) {
            *ok = false;
            return NULL;
        }
        P.release = p;
    }
    static size_t next;
    uint32_t *w = P.release + 2 * (next++ % (P.nrelease / 2));
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

/* The player's tables (P) are touched by one thread at a time: the baton
 * holder, and a thread whose call may wait and which handed the baton on
 * before issuing it (baton_run). The two take state_mu around what they do
 * with the tables; the driver call itself runs without it. */
static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult call_unlocked(caller_fn call, void *fn, const uint64_t *a)
{
    pthread_mutex_unlock(&state_mu);
    CUresult r = call(fn, a);
    pthread_mutex_lock(&state_mu);
    return r;
}

/* Issues call k on the calling (player) thread; state_mu held. */
static void issue_locked(const struct rt_call *k)
{
    struct pentry *e = &P.entries[k->entry];
    unsigned fam = k->family;
    bool live_ok = k->result == CUDA_SUCCESS;
    bool ok = true;
    uint64_t a[16] = {0};
    enum why why = W_FAILED_DEP;
    /* out-parameters and what they point into */
    CUdeviceptr out_dptr = 0;
    CUdeviceptr_v1 out_dptr32 = 0;
    size_t out_pitch = 0;
    unsigned int out_pitch32 = 0;
    void *out_ptr = NULL, *kp_store[1] = {NULL};
    CUcontext out_ctx = NULL;
    CUevent out_ev = NULL;
    CUgraph out_graph = NULL;
    CUgraphExec out_exec = NULL;
    CUstreamCaptureStatus out_status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraphExecUpdateResultInfo out_info;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[16];
    void *extra[5];
    size_t extra_size = 0;
    static void **kp;
    static size_t kpcap;
    static unsigned char *zeros;
    static size_t nzeros;
    unsigned char *pbuf = NULL;

    if (fam == RP_TRF_GENERIC) {
        if (!strcmp(e->name, "cuInit")) {
            a[0] = 0;
        } else {
            e->skipped++;
            P.why[W_GENERIC]++;
            P.not_issued++;
            return;
        }
    }
    if (!e->fn) {
        e->skipped++;
        P.why[W_MISSING]++;
        P.not_issued++;
        return;
    }
    if (fam != RP_TRF_GENERIC)
        ensure_init();
    switch (fam) {
    case RP_TRF_GENERIC:
        break;
    case RP_TRF_LAUNCH:
    case RP_TRF_LAUNCH_COOP:
    case RP_TRF_LAUNCH_EX: {
        void *f = func_of(k->func, &ok);
        if (!ok)
            why = W_FUNCTION;
        const struct rt_func *rf = k->func ? &P.r.funcs[k->func] : NULL;
        size_t psize = rf ? rf->psize : 0;
        size_t need = psize > k->extra_size ? psize : k->extra_size;
        if (need + 8 > nzeros) {
            free(zeros);
            nzeros = need + 4096;
            zeros = calloc(1, nzeros);
            if (!zeros)
                die("out of memory");
        }
        pbuf = k->params ? (unsigned char *)k->params : zeros;
        uint32_t np = rf ? rf->nparams : 0;
        if (np + 64 > kpcap) {
            kpcap = np + 64;
            kp = realloc(kp, kpcap * sizeof *kp);
            if (!kp)
                die("out of memory");
        }
        /* One pointer per parameter the PTX declares, pads included (they
         * point at zeros): the same placement as ptx_for's. */
        size_t nk = 0, end = 0;
        for (uint32_t p = 0; p < np; p++) {
            size_t off = rf->off[p], size = rf->size[p] ? rf->size[p] : 1, align = 1;
            if (off < end)
                off = end;
            for (size_t al = 4096; al >= 1; al /= 2)
                if (off % al == 0 && ((end + al - 1) & ~(al - 1)) == off) {
                    align = al;
                    break;
                }
            if (((end + align - 1) & ~(align - 1)) != off) {
                if (nk + 2 > kpcap) {
                    kpcap *= 2;
                    kp = realloc(kp, kpcap * sizeof *kp);
                    if (!kp)
                        die("out of memory");
                }
                kp[nk++] = zeros;
            }
            kp[nk++] = off < psize ? pbuf + off : zeros;
            end = off + size;
        }
        if (!nk)
            kp[nk++] = zeros; /* a kernelParams array must exist where one was passed */
        void **params = NULL, **ex = NULL;
        extra_size = k->form == RP_TLFORM_EXTRA ? k->extra_size : psize;
        switch (k->form) {
        case RP_TLFORM_PARAMS: params = kp; break;
        case RP_TLFORM_PARAMS_END:
            params = kp;
            extra[0] = CU_LAUNCH_PARAM_END;
            ex = extra;
            break;
        case RP_TLFORM_EXTRA:
        case RP_TLFORM_BOTH:
            extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
            extra[1] = pbuf;
            extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
            extra[3] = &extra_size;
            extra[4] = CU_LAUNCH_PARAM_END;
            ex = extra;
            params = k->form == RP_TLFORM_BOTH ? kp : NULL;
            break;
        default: break;
        }
        CUstream s = stream_of(k->stream, &ok);
        if (fam == RP_TRF_LAUNCH_EX) {
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDimX = k->grid[0], cfg.gridDimY = k->grid[1], cfg.gridDimZ = k->grid[2];
            cfg.blockDimX = k->block[0], cfg.blockDimY = k->block[1], cfg.blockDimZ = k->block[2];
            cfg.sharedMemBytes = k->shmem;
            cfg.hStream = s;
            for (unsigned i = 0; i < k->nattrs && i < 16; i++) {
                memset(&attrs[i], 0, sizeof attrs[i]);
                attrs[i].id = (CUlaunchAttributeID)k->attrs[i].id;
                memcpy(&attrs[i].value, k->attrs[i].value, sizeof attrs[i].value);
            }
            cfg.attrs = k->nattrs ? attrs : NULL;
            cfg.numAttrs = k->nattrs;
            a[0] = k->form == RP_TLFORM_NO_CONFIG ? 0 : (uint64_t)(uintptr_t)&cfg;
            a[1] = (uint64_t)(uintptr_t)f;
            a[2] = (uint64_t)(uintptr_t)params;
            a[3] = (uint64_t)(uintptr_t)ex;
        } else {
            a[0] = (uint64_t)(uintptr_t)f;
            for (int i = 0; i < 3; i++) {
                a[1 + i] = k->grid[i];
                a[4 + i] = k->block[i];
            }
            a[7] = k->shmem;
            a[8] = (uint64_t)(uintptr_t)s;
            a[9] = (uint64_t)(uintptr_t)params;
            a[10] = (uint64_t)(uintptr_t)ex;
        }
        if (k->func && !f && !live_ok)
            ok = true; /* the program's launch failed too: issue it with no function */
        break;
    }
    case RP_TRF_HOSTFN:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[1] = (uint64_t)(uintptr_t)noop_host_function;
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC: {
        bool peer = fam == RP_TRF_PEER || fam == RP_TRF_PEER_ASYNC;
        uint64_t d = 0, s = 0;
        if (!mem_addr(&k->dst, &d, live_ok) || !mem_addr(&k->src, &s, live_ok)) {
            ok = false;
            why = W_ADDRESS;
        }
        /* Recorded contents: into a pageable buffer always; into pinned
         * memory only where nothing on the device side can have filled it
         * (no copy into it, not mapped, no host function in the trace),
         * since the driver reads pinned memory when the copy runs. */
        if (ok && k->data && (k->src.space == RP_TS_PAGEABLE ||
                              (k->src.space == RP_TS_HOST && !P.any_hostfn &&
                               !P.written_by_device[k->src.id])))
            memcpy((void *)(uintptr_t)s, k->data, k->bytes);
        a[0] = d;
        if (peer) {
            a[1] = (uint64_t)(uintptr_t)ctx_of(k->ctx);
            a[2] = s;
            a[3] = (uint64_t)(uintptr_t)ctx_of(k->ctx2);
            a[4] = k->bytes;
            if (fam == RP_TRF_PEER_ASYNC)
                a[5] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        } else {
            a[1] = s;
            a[2] = k->bytes;
            if (copy_async(fam))
                a[3] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
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
        if (!mem_addr(&k->dst, &a[0], live_ok)) {
            ok = false;
            why = W_ADDRESS;
        }
        if (two) {
            a[1] = k->pitch, a[2] = k->value, a[3] = k->width, a[4] = k->height;
            if (async)
                a[5] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        } else {
            a[1] = k->value, a[2] = k->bytes;
            if (async)
                a[3] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        }
        break;
    }
    case RP_TRF_ALLOC_V1:
        a[0] = (uint64_t)(uintptr_t)&out_dptr32, a[1] = k->bytes;
        break;
    case RP_TRF_ALLOC:
        a[0] = (uint64_t)(uintptr_t)&out_dptr, a[1] = k->bytes;
        break;
    case RP_TRF_ALLOC_PITCH_V1:
        a[0] = (uint64_t)(uintptr_t)&out_dptr32, a[1] = (uint64_t)(uintptr_t)&out_pitch32;
        a[2] = k->width, a[3] = k->height, a[4] = k->elem;
        break;
    case RP_TRF_ALLOC_PITCH:
        a[0] = (uint64_t)(uintptr_t)&out_dptr, a[1] = (uint64_t)(uintptr_t)&out_pitch;
        a[2] = k->width, a[3] = k->height, a[4] = k->elem;
        break;
    case RP_TRF_ALLOC_MANAGED:
        a[0] = (uint64_t)(uintptr_t)&out_dptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    case RP_TRF_ALLOC_HOST:
        a[0] = (uint64_t)(uintptr_t)&out_ptr, a[1] = k->bytes;
        break;
    case RP_TRF_HOST_ALLOC:
        a[0] = (uint64_t)(uintptr_t)&out_ptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    case RP_TRF_ALLOC_ASYNC:
        a[0] = (uint64_t)(uintptr_t)&out_dptr, a[1] = k->bytes;
        a[2] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        break;
    case RP_TRF_ALLOC_POOL_ASYNC:
        ok = false;
        why = W_POOL;
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_FREE_ASYNC: case RP_TRF_HOST_UNREGISTER:
        if (!mem_addr(&k->dst, &a[0], live_ok)) {
            ok = false;
            why = W_ADDRESS;
        }
        if (fam == RP_TRF_FREE_ASYNC)
            a[1] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        break;
    case RP_TRF_HOST_REGISTER: {
        /* The player's own page-aligned buffer, registered as recorded. */
        size_t size = k->bytes ? (k->bytes + 4095) & ~(size_t)4095 : 4096;
        out_ptr = aligned_alloc(4096, size);
        if (!out_ptr)
            die("out of memory for a registered buffer of %zu bytes", size);
        memset(out_ptr, 0, size);
        a[0] = (uint64_t)(uintptr_t)out_ptr, a[1] = k->bytes, a[2] = k->flags;
        break;
    }
    case RP_TRF_STREAM_SYNC: case RP_TRF_STREAM_QUERY:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        break;
    case RP_TRF_CTX_SYNC:
        break;
    case RP_TRF_CTX_SYNC_V2:
        a[0] = (uint64_t)(uintptr_t)ctx_of(k->ctx);
        break;
    case RP_TRF_EVENT_SYNC: case RP_TRF_EVENT_QUERY: case RP_TRF_EVENT_DESTROY:
        a[0] = (uint64_t)(uintptr_t)event_of(k->event, &ok);
        break;
    case RP_TRF_EVENT_CREATE:
        a[0] = (uint64_t)(uintptr_t)&out_ev, a[1] = k->flags;
        break;
    case RP_TRF_EVENT_RECORD: case RP_TRF_EVENT_RECORD_FLAGS:
        a[0] = (uint64_t)(uintptr_t)event_of(k->event, &ok);
        a[1] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[2] = k->flags;
        break;
    case RP_TRF_WAIT_EVENT:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[1] = (uint64_t)(uintptr_t)event_of(k->event, &ok);
        a[2] = k->flags;
        break;
    case RP_TRF_BEGIN_CAPTURE:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        break;
    case RP_TRF_BEGIN_CAPTURE_MODE:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[1] = k->value;
        break;
    case RP_TRF_END_CAPTURE:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[1] = (uint64_t)(uintptr_t)&out_graph;
        break;
    case RP_TRF_IS_CAPTURING:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        a[1] = (uint64_t)(uintptr_t)&out_status;
        break;
    case RP_TRF_GRAPH_LAUNCH: case RP_TRF_GRAPH_UPLOAD:
        GROW(P.execs, P.nexecs, k->exec);
        a[0] = (uint64_t)(uintptr_t)P.execs[k->exec];
        a[1] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        if (!P.execs[k->exec] && live_ok) {
            ok = false;
            why = W_GRAPH;
        }
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        GROW(P.graphs, P.ngraphs, k->graph);
        a[0] = (uint64_t)(uintptr_t)&out_exec;
        a[1] = (uint64_t)(uintptr_t)P.graphs[k->graph];
        a[2] = k->flags;
        if (!P.graphs[k->graph] && live_ok) {
            ok = false;
            why = W_GRAPH;
        }
        break;
    case RP_TRF_GRAPH_EXEC_UPDATE:
        GROW(P.execs, P.nexecs, k->exec);
        GROW(P.graphs, P.ngraphs, k->graph);
        a[0] = (uint64_t)(uintptr_t)P.execs[k->exec];
        a[1] = (uint64_t)(uintptr_t)P.graphs[k->graph];
        a[2] = (uint64_t)(uintptr_t)&out_info;
        if ((!P.execs[k->exec] || !P.graphs[k->graph]) && live_ok) {
            ok = false;
            why = W_GRAPH;
        }
        break;
    case RP_TRF_CTX_CREATE:
        a[0] = (uint64_t)(uintptr_t)&out_ctx, a[1] = k->flags, a[2] = k->device;
        break;
    case RP_TRF_CTX_CREATE_V3: /* affinity parameters are not recorded */
        a[0] = (uint64_t)(uintptr_t)&out_ctx, a[1] = 0, a[2] = 0, a[3] = k->flags, a[4] = k->device;
        break;
    case RP_TRF_CTX_CREATE_V4: /* nor creation parameters */
        a[0] = (uint64_t)(uintptr_t)&out_ctx, a[1] = 0, a[2] = k->flags, a[3] = k->device;
        break;
    case RP_TRF_CTX_DESTROY: case RP_TRF_CTX_SET: case RP_TRF_CTX_PUSH:
        a[0] = (uint64_t)(uintptr_t)ctx_of(k->ctx);
        break;
    case RP_TRF_CTX_POP:
        a[0] = (uint64_t)(uintptr_t)&out_ctx;
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        a[0] = k->device;
        /* The program retained the primary context outside the trace; the
         * player retained it when it first used it. A release the player
         * holds no reference for is preceded by one, so that it tears
         * down as the program's did. */
        /* So does one after which the recording's context stayed active
         * (the program held other references, retained where the trace
         * does not see). */
        if (fam == RP_TRF_PRIMARY_RELEASE && k->device < 64 && live_ok && P.primary_retain) {
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
        const struct rt_func *rf = k->func ? &P.r.funcs[k->func] : NULL;
        unsigned kind = fam == RP_TRF_LIBRARY_GET_KERNEL;
        struct pmod *m = rf && rf->layout ? module_of(k->module, kind) : NULL;
        if (!m || !m->h) {
            ok = false;
            why = W_FUNCTION;
        }
        a[0] = (uint64_t)(uintptr_t)kp_store;
        a[1] = (uint64_t)(uintptr_t)(m ? m->h : NULL);
        a[2] = (uint64_t)(uintptr_t)(rf ? rf->name : NULL);
        break;
    }
    case RP_TRF_KERNEL_GET_FUNCTION:
        a[0] = (uint64_t)(uintptr_t)kp_store;
        a[1] = (uint64_t)(uintptr_t)func_of(k->module, &ok);
        break;
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD: {
        GROW(P.mods, P.nmods, k->module);
        struct pmod *m = &P.mods[k->module];
        if (!m->loaded || !m->h) {
            ok = false; /* never loaded here: nothing to unload */
            why = W_FUNCTION;
        }
        a[0] = (uint64_t)(uintptr_t)m->h;
        break;
    }
    case RP_TRF_STREAM_DESTROY:
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        break;
    case RP_TRF_WAIT_VALUE32: case RP_TRF_WAIT_VALUE64:
    case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64: {
        a[0] = (uint64_t)(uintptr_t)stream_of(k->stream, &ok);
        bool wait = fam == RP_TRF_WAIT_VALUE32 || fam == RP_TRF_WAIT_VALUE64;
        bool released = wait;
        for (size_t i = 0; wait && i < P.nvalue_writes; i++)
            if (same_addr(&P.value_writes[i], &k->dst))
                released = false;
        if (released) {
            /* No recorded write can satisfy it (the host or a kernel did):
             * it waits on a word of the player's that already does. */
            uint32_t *w = release_slot(k->value, k->flags, &ok);
            a[1] = (uint64_t)(uintptr_t)w;
        } else if (!mem_addr(&k->dst, &a[1], live_ok)) {
            ok = false;
            why = W_ADDRESS;
        }
        a[2] = k->value, a[3] = k->flags;
        break;
    }
    default:
        ok = false;
        why = W_GENERIC;
        break;
    }
    if (!ok) {
        e->skipped++;
        P.why[why]++;
        P.not_issued++;
        return;
    }
    CUresult r = call_unlocked(e->call, e->fn, a);
    e = &P.entries[k->entry]; /* the table may have grown meanwhile */
    P.issued++;
    if (fam == RP_TRF_GENERIC && r == CUDA_SUCCESS) { /* cuInit */
        P.inited = true;
        int n = 0;
        CUresult (CUDAAPI *count)(int *) = (CUresult (CUDAAPI *)(int *))sym("cuDeviceGetCount");
        if (count && count(&n) == CUDA_SUCCESS && (size_t)n < P.r.ndevices)
            fprintf(stderr, "reprise replay: the trace used %zu devices, this driver has %d: "
                            "calls on the others fail\n", P.r.ndevices, n);
    }
    if ((int64_t)r != k->result) {
        if (is_query(fam))
            P.answers_differed++;
        else {
            P.differed++;
            if (P.differed <= 5)
                fprintf(stderr, "reprise replay: %s returned %d, the program's call %" PRId64 "\n",
                        e->name, (int)r, k->result);
        }
    }
    if (r != CUDA_SUCCESS)
        return;
    /* What the call made, under the trace's id. */
    switch (fam) {
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_HOST:
    case RP_TRF_HOST_ALLOC: case RP_TRF_HOST_REGISTER:
        if (k->mem) {
            GROW(P.mems, P.nmems, k->mem);
            struct pmem *m = &P.mems[k->mem];
            m->base = fam == RP_TRF_ALLOC_V1 || fam == RP_TRF_ALLOC_PITCH_V1 ? out_dptr32
                      : fam == RP_TRF_ALLOC_HOST || fam == RP_TRF_HOST_ALLOC || fam == RP_TRF_HOST_REGISTER
                          ? (uint64_t)(uintptr_t)out_ptr
                          : out_dptr;
            m->size = k->bytes;
            m->allocated = true;
            /* The player's pinned memory starts as zeros, every run: a
             * copy from it moves the same bytes with and without the shim. */
            if ((fam == RP_TRF_ALLOC_HOST || fam == RP_TRF_HOST_ALLOC) && out_ptr && k->bytes)
                memset(out_ptr, 0, k->bytes);
        }
        break;
    case RP_TRF_EVENT_CREATE:
        GROW(P.events, P.nevents, k->event);
        P.events[k->event] = out_ev;
        break;
    case RP_TRF_END_CAPTURE:
        GROW(P.graphs, P.ngraphs, k->graph);
        P.graphs[k->graph] = out_graph;
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        GROW(P.execs, P.nexecs, k->exec);
        P.execs[k->exec] = out_exec;
        break;
    case RP_TRF_CTX_CREATE: case RP_TRF_CTX_CREATE_V3: case RP_TRF_CTX_CREATE_V4:
        GROW(P.ctxs, P.nctxs, k->ctx);
        P.ctxs[k->ctx] = (struct pctx){out_ctx, false, false, (uint32_t)k->device};
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        if (k->device < 64) {
            if (fam == RP_TRF_PRIMARY_RELEASE && P.primary_refs[k->device] > 0)
                P.primary_refs[k->device]--;
            if (fam == RP_TRF_PRIMARY_RESET || P.primary_refs[k->device] == 0)
                for (size_t i = 0; i < P.nctxs; i++)
                    if (P.ctxs[i].primary && P.ctxs[i].device == k->device)
                        P.ctxs[i].retained = false; /* retained again at its next use */
        }
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL: case RP_TRF_KERNEL_GET_FUNCTION:
        if (!k->func)
            break;
        GROW(P.funcs, P.nfuncs, k->func);
        P.funcs[k->func] = kp_store[0];
        break;
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD:
        P.mods[k->module].h = NULL;
        for (size_t i = 1; i < P.r.nfuncs && i < P.nfuncs; i++)
            if (P.r.funcs[i].defined && P.r.funcs[i].module == k->module &&
                P.r.funcs[i].kind == (fam == RP_TRF_LIBRARY_UNLOAD ? 1u : 0u))
                P.funcs[i] = NULL;
        break;
    case RP_TRF_STREAM_DESTROY:
        P.streams[k->stream] = NULL;
        break;
    case RP_TRF_EVENT_DESTROY:
        P.events[k->event] = NULL;
        break;
    default:
        break;
    }
}

/* ---- the order of entry ----------------------------------------------------------------------------- */

/* Records come in the order calls returned; they are replayed in the order
 * calls began (their `seq`), which is the order the engine met them (a
 * boundary acts as its call begins). The two differ only where calls of
 * several threads overlapped, so a small buffer of decoded calls, each a
 * deep copy (the reader's parameter state moves on), restores it. */
struct job {
    uint64_t seq;
    uint64_t start_ns;      /* when the call began in the recording, since the trace's start */
    bool exit;              /* a thread's exit, not a call */
    uint32_t tid;
    struct rt_call call;
    unsigned char *own;     /* what call's pointers point into */
};

static struct job **heap;
static size_t nheap, capheap;
static uint64_t next_seq;
static bool reader_done;
static int read_rc = 1;
static uint64_t recorded_ns;

static void heap_push(struct job *j)
{
    if (nheap == capheap) {
        capheap = capheap ? capheap * 2 : 256;
        heap = realloc(heap, capheap * sizeof *heap);
        if (!heap)
            die("out of memory");
    }
    size_t i = nheap++;
    while (i && heap[(i - 1) / 2]->seq > j->seq) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = j;
}

static struct job *heap_pop(void)
{
    struct job *top = heap[0], *last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheap)
            break;
        if (c + 1 < nheap && heap[c + 1]->seq < heap[c]->seq)
            c++;
        if (heap[c]->seq >= last->seq)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap)
        heap[i] = last;
    return top;
}

static uint64_t *thread_ns; /* per recorded thread: when its latest call read began */
static size_t nthread_ns;

static struct job *copy_call(const struct rt_rec *rec, uint64_t seq)
{
    const struct rt_call *k = &rec->call;
    size_t psize = k->params && k->func ? P.r.funcs[k->func].psize : 0;
    size_t dbytes = k->data ? (size_t)k->bytes : 0;
    size_t abytes = k->nattrs * sizeof(struct rt_attr);
    struct job *j = calloc(1, sizeof *j);
    unsigned char *own = malloc(psize + dbytes + abytes + 1);
    if (!j || !own)
        die("out of memory");
    j->seq = seq;
    j->tid = k->tid;
    j->call = *k;
    /* A thread's calls come in its own order: their dts add up to when
     * each began. */
    GROW(thread_ns, nthread_ns, k->tid);
    thread_ns[k->tid] += k->dt_ns;
    j->start_ns = thread_ns[k->tid];
    j->own = own;
    if (k->params) {
        memcpy(own, k->params, psize);
        j->call.params = own;
    }
    if (k->data) {
        memcpy(own + psize, k->data, dbytes);
        j->call.data = own + psize;
    }
    if (k->nattrs) {
        memcpy(own + psize + dbytes, k->attrs, abytes);
        j->call.attrs = (const struct rt_attr *)(own + psize + dbytes);
    }
    return j;
}

static void job_free(struct job *j)
{
    if (j) {
        free(j->own);
        free(j);
    }
}

/* The next job in the order of entry, NULL at the end. Definitions are
 * taken in as they are read. A gap in the numbers (calls the trace did not
 * keep: after it stopped, say) is skipped once the buffer holds 4096 calls
 * ahead, or at the end. */
static struct job *next_job_locked(void);
static struct job *next_job(void)
{
    pthread_mutex_lock(&state_mu);
    struct job *j = next_job_locked();
    pthread_mutex_unlock(&state_mu);
    return j;
}

static struct job *next_job_locked(void)
{
    static uint64_t returned; /* the order records come in */
    for (;;) {
        if (nheap && (heap[0]->seq <= next_seq || reader_done || nheap > 4096)) {
            struct job *j = heap_pop();
            next_seq = j->seq + 1;
            return j;
        }
        if (reader_done)
            return NULL;
        struct rt_rec rec;
        read_rc = rt_next(&P.r, &rec);
        if (read_rc <= 0) {
            reader_done = true;
            continue;
        }
        switch (rec.tag) {
        case RP_TR_ENTRY: {
            GROW(P.entries, P.nentries, rec.id);
            struct pentry *e = &P.entries[rec.id];
            e->name = P.r.entries[rec.id].name;
            e->fn = NULL;
            for (size_t i = 0; i < sizeof callers / sizeof callers[0]; i++)
                if (!strcmp(callers[i].name, e->name)) {
                    e->call = callers[i].call;
                    e->fn = sym(e->name);
                }
            break;
        }
        case RP_TR_CALL:
            P.calls++;
            heap_push(copy_call(&rec, P.entry_order ? rec.call.seq : returned++));
            break;
        case RP_TR_THREAD_EXIT: {
            struct job *j = calloc(1, sizeof *j);
            if (!j)
                die("out of memory");
            j->seq = P.entry_order ? rec.seq : returned++;
            j->exit = true;
            j->tid = rec.id;
            heap_push(j);
            break;
        }
        case RP_TR_END:
            recorded_ns = rec.ns;
            break;
        default:
            break;
        }
    }
}

static void issue(const struct rt_call *k)
{
    pthread_mutex_lock(&state_mu);
    issue_locked(k);
    pthread_mutex_unlock(&state_mu);
}

/* ---- threads ------------------------------------------------------------------------------------ */

/* One player thread per recorded thread; the recorded main thread (the
 * first to call) is the process's own. Whoever holds the baton takes the
 * next job: a call of its own it issues; a job of another thread goes to
 * that thread with the baton (one switch, no dispatcher in between). A call
 * that may wait (a synchronize, a synchronous copy, a free) hands the baton
 * on before it is issued, so that other threads go on meanwhile as they did
 * in the program. A thread's exit makes that thread return, and the main
 * thread joins it before the next job. */
struct player {
    uint32_t tid;
    pthread_t th;
    bool started, done, baton, quit;
    struct job *job;    /* handed over with the baton */
    pthread_cond_t cv;
    uint64_t last_end;  /* when its previous call returned here (ns; 0: none yet) */
    uint64_t last_dur;  /* how long that call took in the recording (0 when not recorded) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct player *players;
static size_t nplayers;
static bool finished;
static uint32_t pending_join; /* a thread that returned on its own exit */

/* Waits out the host time the program spent before this call (recorded
 * timing): from the end of the thread's previous call, the time between
 * that call's end and this one's start in the recording (dt less the
 * previous call's duration, where the trace has it: syncs and other calls
 * that may wait). The time a thread spent blocked in a call is not waited
 * out again: other threads went on meanwhile, and they do here too. A
 * thread's first call comes its recorded time after the trace's start. */
static void host_gap(struct player *p, uint64_t dt)
{
    if (!P.timing)
        return;
    uint64_t gap = dt > p->last_dur ? dt - p->last_dur : 0;
    uint64_t target = (p->last_end ? p->last_end : P.t0) + gap, t;
    while ((t = now_ns()) < target) {
        uint64_t left = target - t;
        if (left > 200000) {
            struct timespec ts = {0, (long)(left - 100000)};
            nanosleep(&ts, NULL);
        }
    }
}

static void run_call(struct player *p, const struct rt_call *k)
{
    host_gap(p, k->dt_ns);
    issue(k);
    p->last_end = now_ns();
    p->last_dur = k->dur_ns;
}

static struct player *player_of(uint32_t tid)
{
    if (tid >= nplayers) {
        size_t old = nplayers;
        GROW(players, nplayers, tid);
        for (size_t i = old; i < nplayers; i++)
            pthread_cond_init(&players[i].cv, NULL);
    }
    struct player *p = &players[tid];
    p->tid = tid;
    return p;
}

static void *player_main(void *arg);

/* Gives job j and the baton to its thread (mu held). */
static void hand(struct job *j)
{
    struct player *u = player_of(j->tid);
    if (u->done || (j->exit && (u->tid == main_tid || !u->started))) {
        /* An exit of a thread that never called, or of the main thread;
         * a call after its thread's exit (not in a trace this recorder
         * writes): the main thread takes it. */
        if (u->done && !j->exit)
            fprintf(stderr, "reprise replay: a call of thread %u after its exit; issued by the main thread\n",
                    u->tid);
        if (j->exit) {
            job_free(j);
            j = NULL;
        }
        u = player_of(main_tid);
    }
    if (!u->started) {
        u->started = true;
        if (pthread_create(&u->th, NULL, player_main, u) != 0)
            die("cannot start a player thread");
    }
    u->job = j;
    u->baton = true;
    pthread_cond_signal(&u->cv);
}

static bool may_wait(unsigned fam)
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

/* The end of the jobs: the main thread finishes (joins the others). */
static void to_main_at_end(struct player *me)
{
    finished = true;
    if (me->tid == main_tid)
        return;
    struct player *m = player_of(main_tid);
    m->baton = true;
    pthread_cond_signal(&m->cv);
}

/* Runs jobs while `me` holds the baton (mu held; released while a call is
 * issued). Returns once the baton went elsewhere. */
static void baton_run(struct player *me)
{
    for (;;) {
        struct job *j = me->job;
        me->job = NULL;
        if (!j)
            j = next_job();
        if (!j) {
            to_main_at_end(me);
            return;
        }
        if (j->tid != me->tid || (j->exit && me->tid == main_tid)) {
            hand(j);
            return;
        }
        if (j->exit) { /* my own: the main thread joins me and goes on */
            job_free(j);
            me->quit = true;
            pending_join = me->tid;
            struct player *m = player_of(main_tid);
            m->baton = true;
            pthread_cond_signal(&m->cv);
            return;
        }
        if (may_wait(j->call.family)) {
            /* Other threads go on meanwhile only where the next call began,
             * in the recording, before this one returned: one that began
             * later may depend on what this call did (a thread released
             * once a context was). */
            struct job *n = next_job();
            if (n && n->tid != me->tid && !n->exit &&
                n->start_ns < j->start_ns + j->call.dur_ns) {
                hand(n);
                pthread_mutex_unlock(&mu);
                run_call(me, &j->call);
                pthread_mutex_lock(&mu);
                job_free(j);
                return;
            }
            me->job = n;
            if (!n)
                finished = true;
        }
        pthread_mutex_unlock(&mu);
        run_call(me, &j->call);
        pthread_mutex_lock(&mu);
        job_free(j);
        if (finished && !me->job) {
            to_main_at_end(me);
            return;
        }
    }
}

static void *player_main(void *arg)
{
    struct player *p = arg;
    pthread_mutex_lock(&mu);
    while (!p->quit) {
        while (!p->baton && !p->quit)
            pthread_cond_wait(&p->cv, &mu);
        if (p->baton && !finished) {
            p->baton = false;
            baton_run(p);
        } else if (finished) {
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* The whole replay, from the process's main thread, which plays the
 * recorded main thread (main_tid: the first to call, from the first pass). */
static void play(void)
{
    pthread_mutex_lock(&mu);
    struct player *m = player_of(main_tid ? main_tid : 1);
    m->started = true;
    m->baton = true;
    for (;;) {
        if (!m->baton) {
            if (finished)
                break;
            pthread_cond_wait(&m->cv, &mu);
            continue;
        }
        m->baton = false;
        if (pending_join) {
            struct player *x = &players[pending_join];
            pending_join = 0;
            pthread_mutex_unlock(&mu);
            pthread_join(x->th, NULL);
            pthread_mutex_lock(&mu);
            x->done = true;
        }
        if (finished && !m->job)
            break;
        baton_run(m);
    }
    /* Every call is issued; the threads still running (blocked calls of
     * theirs included) finish and are joined. */
    for (size_t t = 0; t < nplayers; t++) {
        struct player *x = &players[t];
        if (!x->started || x->done || x == m)
            continue;
        x->quit = true;
        pthread_cond_signal(&x->cv);
        pthread_mutex_unlock(&mu);
        pthread_join(x->th, NULL);
        pthread_mutex_lock(&mu);
        x->done = true;
    }
    pthread_mutex_unlock(&mu);
}

/* ---- the command -------------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: reprise replay FILE [--shim | --no-shim] [--timing recorded|none]\n"
            "                           [--driver PATH] [--stats FILE] [--strict]\n"
            "                           [--order returned|entered]\n"
            "Issue a trace's driver calls again (recorded with REPRISE_TRACE, reprise --trace):\n"
            "the program's threads in the recorded order, its kernels as empty kernels of the\n"
            "same names and parameter layouts, copies and memsets to memory of the recorded\n"
            "sizes.\n"
            "  --shim            under libreprise.so (REPRISE=1): what the engine makes of the stream\n"
            "  --no-shim         against the driver alone (the default)\n"
            "  --timing recorded the host time between a thread's calls as recorded (the default);\n"
            "           none     as fast as the calls go\n"
            "  --driver PATH     the driver library (default libcuda.so.1)\n"
            "  --stats FILE      with --shim: the shim's JSON report (REPRISE_STATS)\n"
            "  --order returned  calls of several threads in the order they returned (the default:\n"
            "                    a call that waited comes after what it waited for);\n"
            "          entered   in the order they began\n"
            "  --strict          exit 3 when a replayed call's result differs from the program's\n"
            "                    (queries, whose answers depend on timing, excepted)\n"
            "Exit status: 0; 1 when the trace cannot be read or the driver loaded; 2 on a usage\n"
            "error; 3 with --strict as above.\n");
}

int rp_replay_main(int argc, char **argv, const char *(*library)(void))
{
    const char *file = NULL, *driver = "libcuda.so.1", *stats = NULL;
    bool shim = false, in_shim = false;
    P.timing = true;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--shim")) {
            shim = true;
        } else if (!strcmp(o, "--no-shim")) {
            shim = false;
        } else if (!strcmp(o, "--in-shim")) {
            in_shim = true; /* internal: the re-executed player under the shim */
        } else if (!strcmp(o, "--strict")) {
            P.strict = true;
        } else if (!strcmp(o, "--timing") || !strcmp(o, "--driver") || !strcmp(o, "--stats") ||
                   !strcmp(o, "--order")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "reprise replay: option '%s' needs a value (see reprise replay --help)\n", o);
                return 2;
            }
            const char *val = argv[++i];
            if (!strcmp(o, "--driver")) {
                driver = val;
            } else if (!strcmp(o, "--stats")) {
                stats = val;
            } else if (!strcmp(o, "--order")) {
                if (strcmp(val, "returned") && strcmp(val, "entered")) {
                    fprintf(stderr, "reprise replay: --order takes returned or entered, not '%s'\n", val);
                    return 2;
                }
                P.entry_order = !strcmp(val, "entered");
            } else if (!strcmp(val, "recorded") || !strcmp(val, "none")) {
                P.timing = !strcmp(val, "recorded");
            } else {
                fprintf(stderr, "reprise replay: --timing takes recorded or none, not '%s'\n", val);
                return 2;
            }
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "reprise replay: unknown option '%s' (see reprise replay --help)\n", o);
            return 2;
        } else if (!file) {
            file = o;
        } else {
            fprintf(stderr, "reprise replay: one trace at a time ('%s' and '%s')\n", file, o);
            return 2;
        }
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    if (stats && !shim && !in_shim) {
        fprintf(stderr, "reprise replay: --stats is the shim's report: it needs --shim\n");
        return 2;
    }
    if (shim && !in_shim) {
        /* The shim must be preloaded from the start: run the player again
         * under it. */
        const char *lib = library();
        if (!lib)
            die("cannot find libreprise.so next to this command");
        const char *old = getenv("LD_PRELOAD");
        size_t need = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
        char *preload = malloc(need);
        if (!preload)
            die("out of memory");
        snprintf(preload, need, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
        if (setenv("LD_PRELOAD", preload, 1) || setenv("REPRISE", "1", 1) ||
            setenv("REPRISE_DRIVER", driver, 1) || (stats && setenv("REPRISE_STATS", stats, 1)))
            die("cannot set the environment: %s", strerror(errno));
        free(preload);
        char **nargv = calloc((size_t)argc + 3, sizeof *nargv);
        if (!nargv)
            die("out of memory");
        int j = 0;
        nargv[j++] = "reprise";
        nargv[j++] = "replay";
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--shim") != 0)
                nargv[j++] = argv[i];
        nargv[j++] = "--in-shim";
        execv("/proc/self/exe", nargv);
        die("cannot run the player under the shim: %s", strerror(errno));
    }
    if (rt_open(&P.r, file) != 0)
        die("%s", P.r.err);
    first_pass();
    P.drv = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
    if (!P.drv)
        die("cannot load the driver %s: %s", driver, dlerror());
    P.ctx_current = (CUresult (CUDAAPI *)(CUcontext *))sym("cuCtxGetCurrent");
    P.primary_retain = (CUresult (CUDAAPI *)(CUcontext *, CUdevice))sym("cuDevicePrimaryCtxRetain");
    P.stream_create = (CUresult (CUDAAPI *)(CUstream *, unsigned int, int))sym("cuStreamCreateWithPriority");
    P.module_load = (CUresult (CUDAAPI *)(CUmodule *, const void *))sym("cuModuleLoadData");
    P.library_load = (CUresult (CUDAAPI *)(CUlibrary *, const void *, CUjit_option *, void **, unsigned int,
                                          CUlibraryOption *, void **, unsigned int))sym("cuLibraryLoadData");
    P.get_function = (CUresult (CUDAAPI *)(CUfunction *, CUmodule, const char *))sym("cuModuleGetFunction");
    P.get_kernel = (CUresult (CUDAAPI *)(CUkernel *, CUlibrary, const char *))sym("cuLibraryGetKernel");
    P.push = (CUresult (CUDAAPI *)(CUcontext))sym("cuCtxPushCurrent_v2");
    P.pop = (CUresult (CUDAAPI *)(CUcontext *))sym("cuCtxPopCurrent_v2");
    P.init = (CUresult (CUDAAPI *)(unsigned int))sym("cuInit");
    P.alloc = (CUresult (CUDAAPI *)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2");
    P.alloc_host = (CUresult (CUDAAPI *)(void **, size_t))sym("cuMemAllocHost_v2");
    P.event_create = (CUresult (CUDAAPI *)(CUevent *, unsigned int))sym("cuEventCreate");

    P.t0 = now_ns();
    play();
    int rc = read_rc;
    if (rc < 0)
        fprintf(stderr, "reprise replay: %s; replayed what came before it\n", P.r.err);
    else if (!P.r.ended)
        fprintf(stderr, "reprise replay: %s\n", P.r.notice);
    uint64_t took = now_ns() - P.t0;
    size_t threads = 0;
    for (size_t t = 0; t < nplayers; t++)
        threads += players[t].tid != 0;
    fprintf(stderr,
            "reprise replay: %s: %" PRIu64 " calls on %zu threads in %.3f s (recorded %.3f s%s)%s: "
            "%" PRIu64 " issued, %" PRIu64 " not; %" PRIu64 " results differed from the program's, "
            "%" PRIu64 " query answers\n",
            file, P.calls, threads, (double)took / 1e9, (double)recorded_ns / 1e9,
            P.r.ended ? "" : ", not closed", in_shim ? " under the shim" : "", P.issued,
            P.not_issued, P.differed, P.answers_differed);
    for (int w = 0; w < W_N; w++) {
        if (!P.why[w])
            continue;
        fprintf(stderr, "  not issued, %s: %" PRIu64, why_names[w], P.why[w]);
        const char *sep = " (";
        int shown = 0;
        for (size_t i = 0; w == W_GENERIC && i < P.nentries && shown < 6; i++)
            if (P.entries[i].skipped && P.entries[i].name) {
                fprintf(stderr, "%s%s %" PRIu64, sep, P.entries[i].name, P.entries[i].skipped);
                sep = ", ";
                shown++;
            }
        fprintf(stderr, "%s\n", shown ? (shown == 6 ? ", ...)" : ")") : "");
    }
    rt_close(&P.r);
    if (rc < 0)
        return 1;
    return P.strict && P.differed ? 3 : 0;
}
