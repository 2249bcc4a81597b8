/* play_make.c - what the player makes for the trace's ids: contexts (a
 * primary context retained where the program retained it outside the
 * trace), streams with their flags and priority in their context, events,
 * modules of empty kernels from PTX text the player writes (one module per
 * recorded module, each kernel with the recorded name and parameter
 * layout), functions, and memory: device allocations the trace saw used
 * before it saw them allocated, a buffer of the player's own for each
 * pageable host address. Each object remembers the context it lives in; a
 * context's teardown ends them (pl_ctx_gone), and a later use of one is not
 * issued rather than given a dead handle. Under state_mu (play_issue.c). */
#include "play.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define P pl__P

void pl_ensure_init(void)
{
    if (!P.inited && P.init)
        P.init(0);
    P.inited = true;
}

CUcontext pl_current(void)
{
    CUcontext c = NULL;
    if (P.ctx_current)
        P.ctx_current(&c);
    return c;
}

CUcontext pl_ctx_of(uint32_t id, struct pl_iss *st)
{
    if (!id)
        return NULL;
    PL_GROW(P.ctxs, P.nctxs, id);
    struct pl_ctx *c = &P.ctxs[id];
    if (c->gone) {
        pl_refuse(st, W_GONE);
        return NULL;
    }
    if (c->c && (!c->primary || c->retained))
        return c->c;
    const struct rt_ctx *d = id < P.r.nctxs ? &P.r.ctxs[id] : NULL;
    if (d && d->defined && (d->flags & RP_TC_PRIMARY) && P.primary_retain) {
        pl_ensure_init();
        CUcontext h = NULL;
        if (P.primary_retain(&h, (CUdevice)d->device) == CUDA_SUCCESS) {
            *c = (struct pl_ctx){h, true, true, false, d->device};
            if (d->device < 64)
                P.primary_refs[d->device]++;
        }
    }
    return c->c;
}

/* Makes something in context want (pushed where another is current):
 * the player's own creations go where the program made them. */
static bool push_for(CUcontext want)
{
    return want && want != pl_current() && P.push && P.push(want) == CUDA_SUCCESS;
}

static void pop_after(bool pushed)
{
    CUcontext popped;
    if (pushed)
        P.pop(&popped);
}

CUstream pl_stream_of(uint32_t id, struct pl_iss *st)
{
    if (id == RP_TSTREAM_NULL)
        return NULL;
    if (id == RP_TSTREAM_LEGACY)
        return CU_STREAM_LEGACY;
    if (id == RP_TSTREAM_PER_THREAD)
        return CU_STREAM_PER_THREAD;
    PL_GROW(P.streams, P.nstreams, id);
    struct pl_obj *o = &P.streams[id];
    if (o->h)
        return o->h;
    if (o->gone || id >= P.r.nstreams || !P.r.streams[id].defined) {
        pl_refuse(st, W_GONE);
        return NULL;
    }
    const struct rt_stream *d = &P.r.streams[id];
    if (!d->ctx && !st->live_ok) {
        /* The recorder could not ask the driver about it (no context): a
         * handle that was not a stream, in a call that failed. */
        pl_refuse(st, W_GONE);
        return NULL;
    }
    CUcontext want = pl_ctx_of(d->ctx, st);
    if (!st->ok)
        return NULL;
    bool pushed = push_for(want);
    CUcontext in = pl_current();
    CUstream s = NULL;
    if (!P.stream_create ||
        P.stream_create(&s, (unsigned)d->flags, (int)d->prio) != CUDA_SUCCESS)
        s = NULL;
    pop_after(pushed);
    if (!s) {
        pl_refuse(st, W_FAILED_DEP);
        return NULL;
    }
    *o = (struct pl_obj){s, in, false};
    return s;
}

CUevent pl_event_of(uint32_t id, struct pl_iss *st)
{
    if (!id)
        return NULL;
    PL_GROW(P.events, P.nevents, id);
    struct pl_obj *o = &P.events[id];
    if (o->h)
        return o->h;
    if (o->gone) {
        pl_refuse(st, W_GONE);
        return NULL;
    }
    /* An event the trace saw used before it saw it made. */
    CUevent e = NULL;
    if (!P.event_create || P.event_create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        e = NULL;
    if (!e) {
        pl_refuse(st, W_FAILED_DEP);
        return NULL;
    }
    *o = (struct pl_obj){e, pl_current(), false};
    return e;
}

/* ---- PTX: empty kernels of the recorded names and layouts ---------------------------------- */

/* Appends printf-formatted text to *s (*n of *cap bytes used). */
static void emit(char **s, size_t *n, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void emit(char **s, size_t *n, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(*s + *n, *cap - *n, fmt, ap);
        va_end(ap);
        if (k < 0)
            pl_stop("cannot write the PTX of a module");
        if ((size_t)k < *cap - *n) {
            *n += (size_t)k;
            return;
        }
        *cap *= 2;
        char *t = realloc(*s, *cap);
        if (!t)
            pl_stop("out of memory for the PTX of a module (%zu bytes)", *cap);
        *s = t;
    }
}

/* The PTX text of an empty kernel per function of module `mod` (kind 0 for
 * a module, 1 for a library; mod 0: the functions of no known module). Each
 * parameter is an array of bytes at the recorded offset: its alignment is
 * the largest power of two that places it there; where none does (a gap
 * wider than any alignment explains) a padding parameter fills the gap, and
 * kernelParams get a pointer for it (play_issue.c places them alike). */
static char *ptx_for(uint32_t mod, unsigned kind)
{
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    if (!s)
        pl_stop("out of memory for the PTX of a module");
    emit(&s, &n, &cap, "// reprise replay: empty kernels with the recorded parameter layouts\n"
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
        emit(&s, &n, &cap, "\n.visible .entry %s(", f->name);
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
                emit(&s, &n, &cap, "%s\n  .param .b8 pad%zu[%zu]", p || pads ? "," : "", pads,
                     off - end);
                pads++;
                end = off;
                align = 1;
            }
            emit(&s, &n, &cap, "%s\n  .param .align %zu .b8 p%u[%zu]", p || pads ? "," : "", align,
                 p, size);
            end = off + size;
        }
        emit(&s, &n, &cap, "\n)\n{\n  ret;\n}\n");
    }
    return s;
}

void pl_write_ptx(void)
{
    for (unsigned kind = 0; kind < 2; kind++) {
        size_t n = P.r.nmodules;
        P.ptx[kind] = calloc(n + 1, sizeof *P.ptx[kind]);
        if (!P.ptx[kind])
            pl_stop("out of memory for %zu modules", n);
        P.nptx[kind] = n + 1;
        for (size_t m = 0; m <= n; m++)
            if (m == 0 || (m < P.r.nmodules && P.r.modules[m].defined && P.r.modules[m].kind == kind))
                P.ptx[kind][m] = ptx_for((uint32_t)m, kind);
    }
}

struct pl_mod *pl_module_of(uint32_t mod, unsigned kind)
{
    struct pl_mod *m;
    if (mod == 0) {
        m = kind ? &P.lib0 : &P.mod0;
    } else {
        PL_GROW(P.mods, P.nmods, mod);
        m = &P.mods[mod];
    }
    if (m->loaded)
        return m;
    char *ptx = mod < P.nptx[kind ? 1 : 0] ? P.ptx[kind ? 1 : 0][mod] : NULL;
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
    /* A module lives in the context it was loaded in; a library in none. */
    m->ctx = kind ? NULL : pl_current();
    return m;
}

void *pl_func_of(uint32_t id, struct pl_iss *st)
{
    if (!id)
        return NULL;
    PL_GROW(P.funcs, P.nfuncs, id);
    struct pl_obj *o = &P.funcs[id];
    if (o->h)
        return o->h;
    if (o->gone || id >= P.r.nfuncs || !P.r.funcs[id].defined) {
        pl_refuse(st, W_GONE);
        return NULL;
    }
    const struct rt_func *f = &P.r.funcs[id];
    void *h = NULL;
    CUcontext ctx = NULL;
    if (f->layout && f->kind <= 1) {
        struct pl_mod *m = pl_module_of(f->module, f->kind);
        if (m->gone) {
            pl_refuse(st, W_GONE);
            return NULL;
        }
        if (m->h && f->kind == 0 && P.get_function)
            P.get_function((CUfunction *)&h, m->h, f->name);
        else if (m->h && f->kind == 1 && P.get_kernel)
            P.get_kernel((CUkernel *)&h, m->h, f->name);
        ctx = m->ctx;
    }
    if (!h) {
        pl_refuse(st, W_FUNCTION);
        return NULL;
    }
    *o = (struct pl_obj){h, ctx, false};
    return h;
}

/* ---- memory --------------------------------------------------------------------------------- */

void *pl_host_buffer(uint64_t size, size_t *len)
{
    size_t n = (size_t)((size + 4095) & ~(uint64_t)4095);
    if (!n)
        n = 4096;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    *len = n;
    return p;
}

/* Memory id `id` is first used here without an allocation the player
 * issued: a pageable buffer of its own, or device memory the trace saw
 * used before it saw it allocated (a MEM record), allocated once in its
 * context. */
static bool first_use(uint32_t id, struct pl_mem *m, struct pl_iss *st)
{
    const struct rt_mem *d = &P.r.mems[id];
    if (d->space == RP_TS_PAGEABLE) {
        uint64_t size = id < P.nfirst && P.pageable_size[id] ? P.pageable_size[id] : 1;
        if (size > P.host_limit) {
            pl_refuse(st, W_HOST);
            return false;
        }
        size_t len = 0;
        void *b = pl_host_buffer(size, &len);
        if (!b)
            pl_stop("cannot make a pageable buffer of %" PRIu64 " bytes", size);
        *m = (struct pl_mem){(uint64_t)(uintptr_t)b, size, NULL, true, false, b, len};
        return true;
    }
    if (d->space == RP_TS_DEVICE && P.alloc) {
        CUcontext want = pl_ctx_of(d->ctx, st);
        if (!st->ok)
            return false;
        bool pushed = push_for(want);
        CUcontext in = pl_current();
        CUdeviceptr p = 0;
        if (P.fidelity_own)
            P.fidelity_own(1); /* not the program's call */
        if (P.alloc(&p, d->bytes ? d->bytes : 1) == CUDA_SUCCESS)
            *m = (struct pl_mem){p, d->bytes, in, true, false, NULL, 0};
        if (P.fidelity_own)
            P.fidelity_own(0);
        pop_after(pushed);
        if (m->allocated)
            pl_live_at(d->base, d->bytes, m->base);
    }
    return m->allocated;
}

bool pl_mem_span(const struct rt_addr *a, uint64_t bytes, uint64_t *out, struct pl_iss *st)
{
    if (a->space == RP_TS_RAW) {
        *out = a->off;
        /* An address of no memory the trace knows: passed as it is only
         * where the program's call failed too (an error to reproduce). */
        if (a->off == 0 || !st->live_ok)
            return true;
        pl_refuse(st, W_ADDRESS);
        return false;
    }
    if (a->id >= P.r.nmems || !P.r.mems[a->id].defined) {
        pl_refuse(st, W_ADDRESS);
        return false;
    }
    PL_GROW(P.mems, P.nmems, a->id);
    struct pl_mem *m = &P.mems[a->id];
    if (m->gone) {
        pl_refuse(st, W_GONE);
        return false;
    }
    if (!m->allocated && !first_use(a->id, m, st)) {
        pl_refuse(st, W_ADDRESS);
        return false;
    }
    /* Never beyond what the player has there: its own buffers, or an
     * allocation the driver made of the recorded size. */
    if (!m->base || a->off > m->size || bytes > m->size - a->off) {
        pl_refuse(st, W_ADDRESS);
        return false;
    }
    *out = m->base + a->off;
    return true;
}

void pl_live_at(uint64_t live, uint64_t size, uint64_t base)
{
    if (P.fidelity_alias && live && base)
        P.fidelity_alias(live, size ? size : 1, base);
}

void pl_ctx_gone(CUcontext c)
{
    if (!c)
        return;
    struct {
        struct pl_obj *t;
        size_t n;
    } objs[] = {{P.streams, P.nstreams}, {P.events, P.nevents}, {P.funcs, P.nfuncs},
                {P.execs, P.nexecs}};
    for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++)
        for (size_t i = 0; i < objs[k].n; i++)
            if (objs[k].t[i].h && objs[k].t[i].ctx == c)
                objs[k].t[i] = (struct pl_obj){NULL, NULL, true};
    for (size_t i = 0; i < P.nmods; i++)
        if (P.mods[i].loaded && P.mods[i].ctx == c)
            P.mods[i] = (struct pl_mod){NULL, true, true, NULL};
    /* The catch-all module is loaded again where it is next needed. */
    if (P.mod0.ctx == c)
        P.mod0 = (struct pl_mod){NULL, false, false, NULL};
    for (size_t i = 0; i < P.nmems; i++)
        if (P.mems[i].allocated && P.mems[i].ctx == c)
            P.mems[i] = (struct pl_mem){0, 0, NULL, false, true, NULL, 0};
    /* The release words went with it: made again at the next wait. */
    if (P.release && P.release_ctx == c)
        P.release = NULL;
}
