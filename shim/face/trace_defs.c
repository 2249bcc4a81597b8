/* trace_defs.c - what the trace's records name, as small ids: threads,
 * entries, contexts, streams, events, modules, functions (with their
 * parameter layout), and memory as (id, offset) from the allocations the
 * trace saw, or from one cuMemGetAddressRange of an address it did not see
 * allocated; pageable host addresses get an id each. Each is defined by a
 * record the first time it is seen (docs/trace.md, "Definitions"); and the
 * header of every call record. All under the writer's lock. */
#include "trace_defs.h"
#include "alloc.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define W rp__tr_W

/* ---- a map from handles to small ids -------------------------------------- */

void rp__tr_map_del(struct tr_map *m, uint64_t k)
{
    if (!m->cap)
        return;
    for (uint32_t i = rp__tr_map_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k) {
            m->keys[i] = TR_MAP_TOMB;
            return;
        }
        if (m->keys[i] == TR_MAP_EMPTY)
            return;
    }
}

bool rp__tr_map_put(struct tr_map *m, uint64_t k, uint32_t v)
{
    if ((m->used + 1) * 2 > m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = rp__calloc(nc, sizeof *nk);
        uint32_t *nv = rp__calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            rp__tr_nomem();
            return false;
        }
        uint32_t used = 0;
        for (uint32_t i = 0; i < m->cap; i++) {
            if (m->keys[i] == TR_MAP_EMPTY || m->keys[i] == TR_MAP_TOMB)
                continue;
            uint32_t j = rp__tr_map_slot(m->keys[i], nc);
            while (nk[j] != TR_MAP_EMPTY)
                j = (j + 1) & (nc - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
            used++;
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
        m->used = used;
    }
    uint32_t i = rp__tr_map_slot(k, m->cap), tomb = UINT32_MAX;
    for (;; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            break;
        if (m->keys[i] == TR_MAP_TOMB && tomb == UINT32_MAX)
            tomb = i;
        if (m->keys[i] == TR_MAP_EMPTY) {
            if (tomb != UINT32_MAX)
                i = tomb;
            else
                m->used++;
            break;
        }
    }
    m->keys[i] = k;
    m->vals[i] = v + 1;
    return true;
}

/* ---- definitions --------------------------------------------------------------- */

static uint32_t thread_id(void)
{
    if (rp__tr_my_tid)
        return rp__tr_my_tid;
    uint32_t id = ++W.next_tid;
    unsigned char *p = rp__tr_rec_begin(24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, (uint64_t)syscall(SYS_gettid));
        rp__tr_rec_end(RP_TR_THREAD, p);
    }
    rp__tr_my_tid = id;
    rp__tr_my_last = W.t0;
    pthread_setspecific(W.exit_key, (void *)1);
    return id;
}

static uint32_t entry_id(enum rp__entry e)
{
    if (W.entry_id[e])
        return W.entry_id[e] - 1;
    uint32_t id = W.next_entry++;
    const char *name = rp__entry_names[e];
    size_t n = strlen(name);
    unsigned char *p = rp__tr_rec_begin(n + 24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, rp__tr_families[e]);
        p = rp__tr_put_str(p, name, n);
        rp__tr_rec_end(RP_TR_ENTRY, p);
    }
    W.entry_id[e] = id + 1;
    return id;
}

static uint32_t device_of(CUcontext c)
{
    CUdevice d = 0;
    if (W.ctx_device_v2 && W.ctx_device_v2(&d, c) == CUDA_SUCCESS)
        return (uint32_t)d;
    CUcontext cur = NULL;
    if (W.ctx_device && W.real->cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c &&
        W.ctx_device(&d) == CUDA_SUCCESS)
        return (uint32_t)d;
    return 0;
}

uint32_t rp__tr_ctx(CUcontext c, bool valid)
{
    if (!c)
        return 0;
    uint32_t v = rp__tr_map_get(&W.ctxs, (uint64_t)(uintptr_t)c);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_ctx;
    rp__tr_map_put(&W.ctxs, (uint64_t)(uintptr_t)c, id);
    uint32_t dev = valid ? device_of(c) : 0;
    rp__tr_ctx_info(id, dev, valid);
    unsigned char *p = rp__tr_rec_begin(24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, dev);
        p = rp_tv_put(p, valid ? RP_TC_PRIMARY : 0);
        rp__tr_rec_end(RP_TR_CTX, p);
    }
    return id;
}

uint32_t rp__tr_stream_new(CUstream s, bool valid)
{
    uint64_t key = (uint64_t)(uintptr_t)s;
    uint32_t v = rp__tr_map_get(&W.streams, key);
    if (v) {
        W.last_stream_key = key;
        return W.last_stream_id = v - 1;
    }
    uint32_t id = RP_TSTREAM_FIRST + W.next_stream++;
    rp__tr_map_put(&W.streams, (uint64_t)(uintptr_t)s, id);
    CUcontext c = NULL;
    unsigned int flags = 0;
    int prio = 0;
    uint32_t cid = 0;
    if (valid) {
        if (W.real->cuStreamGetCtx && W.real->cuStreamGetCtx(s, &c) == CUDA_SUCCESS)
            cid = rp__tr_ctx(c, true);
        if (W.real->cuStreamGetFlags)
            W.real->cuStreamGetFlags(s, &flags);
        if (W.stream_priority)
            W.stream_priority(s, &prio);
    }
    rp__tr_own(TR_OWN_STREAM, id, cid);
    unsigned char *p = rp__tr_rec_begin(40);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, cid);
        p = rp_tv_put(p, flags);
        p = rp_tv_put(p, rp_tv_zigzag(prio));
        rp__tr_rec_end(RP_TR_STREAM, p);
    }
    return id;
}

uint32_t rp__tr_event(CUevent e)
{
    if (!e)
        return 0;
    uint32_t v = rp__tr_map_get(&W.events, (uint64_t)(uintptr_t)e);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_event;
    rp__tr_map_put(&W.events, (uint64_t)(uintptr_t)e, id);
    rp__tr_own(TR_OWN_EVENT, id, rp__tr_ctx_current());
    unsigned char *p = rp__tr_rec_begin(12);
    if (p) {
        p = rp_tv_put(p, id);
        rp__tr_rec_end(RP_TR_EVENT, p);
    }
    return id;
}

uint32_t rp__tr_module(const void *m, unsigned kind)
{
    if (!m)
        return 0;
    uint64_t key = (uint64_t)(uintptr_t)m;
    uint32_t v = rp__tr_map_get(&W.modules, key);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_module;
    rp__tr_map_put(&W.modules, key, id);
    /* A module is loaded into the current context (which is what a lookup
     * of one of its functions sees); a library into none. */
    rp__tr_own(TR_OWN_MODULE, id, kind == 0 ? rp__tr_ctx_current() : 0);
    unsigned char *p = rp__tr_rec_begin(12);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, kind);
        rp__tr_rec_end(RP_TR_MODULE, p);
    }
    return id;
}

/* A CUfunction's or CUkernel's parameter layout, walked to INVALID_VALUE as
 * the driver documents (12.4+). Returns false when it cannot be read. */
static bool read_layout(struct tr_func *f, const void *h, bool kernel)
{
    CUresult (CUDAAPI *info)(void *, size_t, size_t *, size_t *) =
        kernel ? (void *)W.real->cuKernelGetParamInfo : (void *)W.real->cuFuncGetParamInfo;
    if (!info)
        return false;
    size_t n = 0, cap = 0;
    uint32_t *off = NULL, *size = NULL;
    for (;;) {
        size_t o, s;
        CUresult r = info((void *)h, n, &o, &s);
        if (r == CUDA_ERROR_INVALID_VALUE)
            break;
        if (r != CUDA_SUCCESS || n >= 4096 || o > 65536 || s > 65536) {
            free(off);
            free(size);
            return false;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            uint32_t *no = rp__realloc(off, cap * sizeof *no), *ns;
            if (no)
                off = no;
            ns = no ? rp__realloc(size, cap * sizeof *ns) : NULL;
            if (!no || !ns) {
                free(off);
                free(size);
                rp__tr_nomem();
                return false;
            }
            size = ns;
        }
        off[n] = (uint32_t)o;
        size[n] = (uint32_t)s;
        if (o + s > f->psize)
            f->psize = o + s;
        n++;
    }
    f->nparams = (uint32_t)n;
    f->off = off;
    f->size = size;
    f->layout = true;
    /* Parameters that tile the buffer in order need no zeroed padding. */
    size_t end = 0;
    f->dense = true;
    for (size_t i = 0; i < n; i++) {
        if (off[i] != end)
            f->dense = false;
        end = off[i] + size[i];
    }
    return true;
}

struct tr_func *rp__tr_func_new(const void *h, unsigned kind, uint32_t parent, const char *name,
                                bool valid)
{
    uint32_t v = rp__tr_map_get(&W.funcs, (uint64_t)(uintptr_t)h);
    if (v) {
        W.last_fn_key = h;
        return W.last_fn = W.fn[v - 1];
    }
    if (W.nfn == W.capfn) {
        size_t nc = W.capfn ? W.capfn * 2 : 64;
        struct tr_func **nf = rp__realloc(W.fn, nc * sizeof *nf);
        if (!nf) {
            rp__tr_nomem();
            return NULL;
        }
        W.fn = nf;
        W.capfn = nc;
    }
    struct tr_func *f = rp__calloc(1, sizeof *f);
    if (!f) {
        rp__tr_nomem();
        return NULL;
    }
    f->id = (uint32_t)W.nfn + 1;
    f->module = parent;
    const char *nm = name;
    if (valid) {
        /* A launch names a CUfunction or a CUkernel cast to one. */
        bool as_kernel = kind == 1;
        if (!nm && !as_kernel && W.real->cuFuncGetName &&
            W.real->cuFuncGetName(&nm, (CUfunction)h) != CUDA_SUCCESS)
            nm = NULL;
        if (!nm && W.real->cuKernelGetName &&
            W.real->cuKernelGetName(&nm, (CUkernel)h) == CUDA_SUCCESS && kind == 0) {
            as_kernel = true;
            kind = 1;
        }
        if (!read_layout(f, h, as_kernel) && !as_kernel)
            read_layout(f, h, true);
        if (kind == 0 && !parent && W.func_module) {
            CUmodule m = NULL;
            if (W.func_module(&m, (CUfunction)h) == CUDA_SUCCESS)
                f->module = rp__tr_module(m, 0);
        }
    }
    /* Its context: its module's; a CUkernel has none; the CUfunction of a
     * CUkernel is the current context's. */
    f->ctx = kind == 0 ? rp__tr_owner(TR_OWN_MODULE, f->module)
             : kind == 2 ? rp__tr_ctx_current()
                         : 0;
    if (f->psize) {
        f->last = rp__calloc(1, f->psize);
        if (!f->last) {
            free(f->off);
            free(f->size);
            free(f);
            rp__tr_nomem();
            return NULL;
        }
    }
    W.fn[W.nfn++] = f;
    rp__tr_map_put(&W.funcs, (uint64_t)(uintptr_t)h, f->id - 1);
    size_t nlen = nm ? strnlen(nm, 4096) : 0;
    unsigned char *p = rp__tr_rec_begin(48 + nlen + 10 * (size_t)f->nparams);
    if (p) {
        p = rp_tv_put(p, f->id);
        p = rp_tv_put(p, f->module);
        p = rp_tv_put(p, kind | (f->layout ? 0 : 4));
        p = rp__tr_put_str(p, nm ? nm : "", nlen);
        p = rp_tv_put(p, f->nparams);
        for (uint32_t i = 0; i < f->nparams; i++) {
            p = rp_tv_put(p, f->off[i]);
            p = rp_tv_put(p, f->size[i]);
        }
        rp__tr_rec_end(RP_TR_FUNC, p);
    }
    return f;
}

void rp__tr_func_forget(const void *h)
{
    rp__tr_map_del(&W.funcs, (uint64_t)(uintptr_t)h);
    if (W.last_fn_key == h)
        W.last_fn_key = NULL;
}

void rp__tr_module_forget_functions(uint32_t mid)
{
    for (uint32_t i = 0; i < W.funcs.cap; i++) {
        uint64_t k = W.funcs.keys[i];
        if (k != TR_MAP_EMPTY && k != TR_MAP_TOMB && W.fn[W.funcs.vals[i] - 1]->module == mid)
            rp__tr_func_forget((const void *)(uintptr_t)k);
    }
}

/* ---- memory --------------------------------------------------------------------- */

static size_t range_lower(uintptr_t a) /* first range with base > a */
{
    size_t lo = 0, hi = W.nrg;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (W.rg[mid].base <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct tr_range *range_find(uintptr_t a)
{
    size_t i = range_lower(a);
    if (!i)
        return NULL;
    struct tr_range *r = &W.rg[i - 1];
    return a - r->base < r->size ? r : NULL;
}

void rp__tr_range_del(uintptr_t base)
{
    struct tr_range *r = range_find(base);
    if (!r || r->base != base)
        return;
    size_t i = (size_t)(r - W.rg);
    memmove(&W.rg[i], &W.rg[i + 1], (W.nrg - i - 1) * sizeof *W.rg);
    W.nrg--;
}

/* A new memory id for [base, base + size) in `space`; an older range it
 * overlaps (memory freed outside the calls the trace sees) is dropped. */
uint32_t rp__tr_range_add(uintptr_t base, size_t size, unsigned char space, uint32_t ctx)
{
    uint32_t id = ++W.next_mem;
    if (!size)
        size = 1;
    for (;;) {
        size_t i = range_lower(base + size - 1);
        if (!i || W.rg[i - 1].base + W.rg[i - 1].size <= base)
            break;
        rp__tr_range_del(W.rg[i - 1].base);
    }
    if (W.nrg == W.caprg) {
        size_t nc = W.caprg ? W.caprg * 2 : 64;
        struct tr_range *n = rp__realloc(W.rg, nc * sizeof *n);
        if (!n) {
            rp__tr_nomem();
            return id;
        }
        W.rg = n;
        W.caprg = nc;
    }
    size_t i = range_lower(base);
    memmove(&W.rg[i + 1], &W.rg[i], (W.nrg - i) * sizeof *W.rg);
    W.rg[i] = (struct tr_range){base, size, id, space, ctx};
    W.nrg++;
    return id;
}

static void mem_def(uint32_t id, unsigned space, size_t bytes, uint32_t ctx, uint64_t base)
{
    unsigned char *p = rp__tr_rec_begin(40);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, space);
        p = rp_tv_put(p, bytes);
        p = rp_tv_put(p, ctx);
        p = rp_tv_put(p, base); /* RP_TF_ADDRS */
        rp__tr_rec_end(RP_TR_MEM, p);
    }
}

/* Where address a lies. A device address the trace has not seen allocated is
 * looked up once (cuMemGetAddressRange) when the call succeeded, and its
 * allocation recorded; a host address outside every pinned range is
 * pageable, one id per distinct address. */
struct tr_addr rp__tr_addr(uint64_t a, enum tr_addr_kind kind, bool valid)
{
    struct tr_addr out = {0, RP_TS_RAW, a};
    if (!a)
        return out;
    struct tr_range *r = range_find((uintptr_t)a);
    if (r)
        return (struct tr_addr){r->id, r->space, a - r->base};
    if (!valid)
        return out;
    if (kind != TR_A_HOST && W.addr_range) {
        CUdeviceptr base = 0;
        size_t size = 0;
        if (W.addr_range(&base, &size, (CUdeviceptr)a) == CUDA_SUCCESS && size) {
            CUcontext c = NULL;
            uint32_t cid = 0;
            if (W.real->cuPointerGetAttribute &&
                W.real->cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)a) ==
                    CUDA_SUCCESS)
                cid = rp__tr_ctx(c, true);
            uint32_t id = rp__tr_range_add((uintptr_t)base, size, RP_TS_DEVICE, cid);
            mem_def(id, RP_TS_DEVICE, size, cid, base);
            return (struct tr_addr){id, RP_TS_DEVICE, a - base};
        }
    }
    if (kind == TR_A_DEVICE)
        return out;
    uint32_t v = rp__tr_map_get(&W.pageable, a);
    if (v)
        return (struct tr_addr){v - 1, RP_TS_PAGEABLE, 0};
    uint32_t id = ++W.next_mem;
    rp__tr_map_put(&W.pageable, a, id);
    mem_def(id, RP_TS_PAGEABLE, 0, 0, a);
    return (struct tr_addr){id, RP_TS_PAGEABLE, 0};
}

/* ---- calls ------------------------------------------------------------------------ */

unsigned char *rp__tr_call_begin(const struct tr_call *c, size_t payload)
{
    uint32_t tid = thread_id();
    uint32_t eid = entry_id(c->e);
    unsigned char *p = rp__tr_rec_begin(payload + 48);
    if (!p)
        return NULL;
    unsigned flags = (tid == W.last_tid ? RP_TCF_SAME_THREAD : 0) |
                     (c->r ? RP_TCF_RESULT : 0) | (c->dur ? RP_TCF_DURATION : 0);
    *p++ = (unsigned char)flags;
    p = rp_tv_put(p, eid);
    if (tid != W.last_tid)
        p = rp_tv_put(p, tid);
    uint64_t dt = c->t0 > rp__tr_my_last ? rp__tr_ns(c->t0 - rp__tr_my_last) : 0;
    rp__tr_my_last = c->t0;
    p = rp_tv_put(p, dt);
    /* Where the call began against where the previous record's call did:
     * +1 (a 0 here) unless calls overlapped. */
    p = rp_tv_put(p, rp_tv_zigzag((int64_t)(c->seq - W.last_seq - 1)));
    W.last_seq = c->seq;
    if (c->r)
        p = rp_tv_put(p, (uint64_t)c->r);
    if (c->dur)
        p = rp_tv_put(p, rp__tr_ns(c->dur));
    W.last_tid = tid;
    W.calls++;
    return p;
}

void rp__tr_record_devices(void)
{
    W.devices_done = true;
    int n = 0;
    if (!W.device_count || W.device_count(&n) != CUDA_SUCCESS)
        return;
    for (int i = 0; i < n && i < 64; i++) {
        CUdevice d;
        char name[256] = "";
        int major = 0, minor = 0;
        size_t mem = 0;
        if (!W.device_get || W.device_get(&d, i) != CUDA_SUCCESS)
            continue;
        if (W.device_name)
            W.device_name(name, sizeof name - 1, d);
        if (W.device_attr) {
            W.device_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            W.device_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        }
        if (W.device_mem)
            W.device_mem(&mem, d);
        size_t nl = strnlen(name, sizeof name - 1);
        unsigned char *p = rp__tr_rec_begin(nl + 48);
        if (!p)
            return;
        p = rp_tv_put(p, (uint64_t)i);
        p = rp__tr_put_str(p, name, nl);
        p = rp_tv_put(p, (uint64_t)major);
        p = rp_tv_put(p, (uint64_t)minor);
        p = rp_tv_put(p, mem);
        rp__tr_rec_end(RP_TR_DEVICE, p);
    }
}
