/* trace.c - the trace writer (REPRISE_TRACE): one writer per process, records
 * in the order the calls returned, into a shared mapping of the file.
 *
 * Every record is written under one lock, which gives the trace its global
 * order and lets each record be encoded against the state the previous ones
 * left (the last launch of each function, the ids of handles), as a reader
 * decodes it. The file is mapped MAP_SHARED: what is written is in the page
 * cache at once, so a process that crashes leaves every record it completed.
 * A record's tag byte is stored last (release), so a record cut short by a
 * crash has tag 0 and a reader stops there. At exit the file is cut to its
 * length and ends with an END record.
 *
 * Handles become small ids, defined by a record the first time they are
 * seen (a stream by its context, flags and priority; a function by its name
 * and parameter layout); device and pinned host memory become (id, offset)
 * from the allocations the trace saw, or from one cuMemGetAddressRange of an
 * address it did not see allocated; pageable host addresses get an id each.
 * The format is docs/trace.md; tracefmt.h has its constants. */
#include "core.h"
#include "alloc.h"
#include "trace.h"
#include "tracefmt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TR_TSC 1
#endif

#include "reprise.h"

_Atomic bool rp__tr_live;
_Atomic uint64_t rp__tr_seq;

/* ---- time ------------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC costs a third of clock_gettime here (21 ns against 70 ns on the
 * development VM, docs/BENCHMARKS.md), and a call pays one read. Ticks are
 * turned into ns with a factor measured over 2 ms at open (an invariant TSC
 * is assumed: every x86-64 CPU of the last decade has one). */
uint64_t rp__tr_ticks(void)
{
#ifdef TR_TSC
    return __rdtsc();
#else
    return mono_ns();
#endif
}

static uint64_t ns_mul = 1ull << 32; /* ns per tick, 32.32 fixed point */

static void calibrate(void)
{
#ifdef TR_TSC
    uint64_t m0 = mono_ns(), t0 = rp__tr_ticks(), m1, t1;
    do {
        m1 = mono_ns();
        t1 = rp__tr_ticks();
    } while (m1 - m0 < 2000000);
    if (t1 > t0)
        ns_mul = (uint64_t)(((unsigned __int128)(m1 - m0) << 32) / (t1 - t0));
#endif
}

static uint64_t ticks_ns(uint64_t d)
{
    return (uint64_t)(((unsigned __int128)d * ns_mul) >> 32);
}

/* ---- a map from handles to small ids -------------------------------------- */

#define MAP_EMPTY 0ull
#define MAP_TOMB (~0ull)

struct map {
    uint64_t *keys;
    uint32_t *vals;
    uint32_t cap, used; /* used counts tombstones too */
};

static uint32_t map_slot(uint64_t k, uint32_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k & (cap - 1);
}

/* The id of key k + 1, or 0 when absent. */
static uint32_t map_get(const struct map *m, uint64_t k)
{
    if (!m->cap)
        return 0;
    for (uint32_t i = map_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            return m->vals[i];
        if (m->keys[i] == MAP_EMPTY)
            return 0;
    }
}

static void map_del(struct map *m, uint64_t k)
{
    if (!m->cap)
        return;
    for (uint32_t i = map_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k) {
            m->keys[i] = MAP_TOMB;
            return;
        }
        if (m->keys[i] == MAP_EMPTY)
            return;
    }
}

/* Sets k to v (v + 1 is stored: 0 means absent). Returns false, the map
 * unchanged, when memory runs out. */
static bool map_put(struct map *m, uint64_t k, uint32_t v)
{
    if ((m->used + 1) * 2 > m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = rp__calloc(nc, sizeof *nk);
        uint32_t *nv = rp__calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        uint32_t used = 0;
        for (uint32_t i = 0; i < m->cap; i++) {
            if (m->keys[i] == MAP_EMPTY || m->keys[i] == MAP_TOMB)
                continue;
            uint32_t j = map_slot(m->keys[i], nc);
            while (nk[j] != MAP_EMPTY)
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
    uint32_t i = map_slot(k, m->cap), tomb = UINT32_MAX;
    for (;; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            break;
        if (m->keys[i] == MAP_TOMB && tomb == UINT32_MAX)
            tomb = i;
        if (m->keys[i] == MAP_EMPTY) {
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

/* ---- the writer's state ------------------------------------------------------ */

/* A function the trace defined: its layout, and what its last launch had
 * (the next launch records only what changed). */
struct tr_func {
    uint32_t id;
    uint32_t module;
    bool layout;           /* the parameter layout was read */
    bool dense;            /* its parameters tile [0, psize) in order: no padding */
    uint32_t nparams;
    uint32_t *off, *size;
    size_t psize;          /* parameter buffer bytes: max offset + size */
    unsigned grid[3], block[3], shmem;
    unsigned char *last;   /* psize bytes of the last launch's parameters */
    unsigned char *attrs;  /* the last cuLaunchKernelEx attributes, encoded */
    size_t nattrs_bytes;
};

/* A memory range the trace knows: an allocation it saw, or one it looked up. */
struct tr_range {
    uintptr_t base;
    size_t size;
    uint32_t id;
    unsigned char space; /* RP_TS_DEVICE or RP_TS_HOST */
};

static struct {
    _Atomic int mu; /* the writer's lock (lock_writer) */
    bool open;
    bool data;
    int fd;
    unsigned char *map;
    size_t cap, len;
    uint64_t t0;
    uint64_t records, calls;
    uint32_t last_tid;
    uint64_t last_seq; /* the place of the previous record's call (order of entry) */
    uint32_t next_tid, next_entry, next_stream, next_event, next_ctx, next_module;
    uint32_t next_mem, next_graph, next_exec;
    uint32_t entry_id[RP_E_COUNT]; /* trace id + 1 */
    struct map streams, events, ctxs, modules, funcs, graphs, execs, pageable;
    struct tr_func **fn;
    size_t nfn, capfn;
    struct tr_range *rg;
    size_t nrg, caprg;
    unsigned char *scratch;
    size_t capscratch;
    bool devices_done;
    pthread_key_t exit_key;
    const struct rp__driver *real;
    /* driver entries the recorder asks that the engine does not use */
    CUresult (CUDAAPI *stream_priority)(CUstream, int *);
    CUresult (CUDAAPI *ctx_device)(CUdevice *);
    CUresult (CUDAAPI *ctx_device_v2)(CUdevice *, CUcontext);
    CUresult (CUDAAPI *addr_range)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (CUDAAPI *driver_version)(int *);
    CUresult (CUDAAPI *device_count)(int *);
    CUresult (CUDAAPI *device_get)(CUdevice *, int);
    CUresult (CUDAAPI *device_name)(char *, int, CUdevice);
    CUresult (CUDAAPI *device_attr)(int *, CUdevice_attribute, CUdevice);
    CUresult (CUDAAPI *device_mem)(size_t *, CUdevice);
    CUresult (CUDAAPI *func_module)(CUmodule *, CUfunction);
    CUresult (CUDAAPI *primary_state)(CUdevice, unsigned int *, int *);
    /* the last handles looked up, the common case of a loop */
    uint64_t last_stream_key;
    uint32_t last_stream_id;
    const void *last_fn_key;
    struct tr_func *last_fn;
} W = {.fd = -1};

/* One writer at a time. A test-and-set lock, not a mutex: held for a few
 * hundred instructions, uncontended it costs two atomic operations (a
 * mutex's lock and unlock cost about a hundred instructions more, a third
 * of what recording a launch costs); contended it yields, so that a holder
 * that was preempted gets the core back (machines with more threads than
 * cores). */
static void lock_writer(void)
{
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&W.mu, memory_order_relaxed) &&
            !atomic_exchange_explicit(&W.mu, 1, memory_order_acquire))
            return;
        if (spins >= 64)
            sched_yield();
#ifdef TR_TSC
        else
            __builtin_ia32_pause();
#endif
    }
}

static void unlock_writer(void)
{
    atomic_store_explicit(&W.mu, 0, memory_order_release);
}

static const unsigned char families[RP_E_COUNT] = {
#define E(name, fam) [RP_E_##name] = RP_TRF_##fam,
    RP_TRACE_ENTRIES(E)
#undef E
};

static RP_TLS uint32_t my_tid;
static RP_TLS uint64_t my_last; /* ticks at this thread's last call */

/* ---- the file ------------------------------------------------------------------ */

/* Stops recording for good: the trace stays valid up to its last record. */
static void stop(const char *why)
{
    if (W.open)
        rp__warn("trace: %s; recording stops here (the trace holds what came before)", why);
    atomic_store(&rp__tr_live, false);
    W.open = false;
}

/* Room for `need` more bytes, growing the file and its mapping. The file is
 * given real blocks (fallocate) before the mapping reaches them: a write
 * into a hole of a full disk would raise SIGBUS in the program. */
static bool reserve(size_t need)
{
    if (W.len + need <= W.cap)
        return true;
    size_t step = W.cap < (64u << 20) ? W.cap : (64u << 20);
    size_t ncap = W.cap + (step > need ? step : need + step);
    int e = posix_fallocate(W.fd, (off_t)W.cap, (off_t)(ncap - W.cap));
    if (e == EOPNOTSUPP || e == EINVAL)
        e = ftruncate(W.fd, (off_t)ncap) == 0 ? 0 : errno;
    if (e) {
        errno = e;
        stop("the trace file cannot grow (%m)");
        return false;
    }
    void *p = mremap(W.map, W.cap, ncap, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
        stop("the trace file's mapping cannot grow");
        return false;
    }
    W.map = p;
    W.cap = ncap;
    return true;
}

/* A record: rec_begin gives where its body goes (room for `bound` bytes),
 * rec_end closes it at `end` and commits its tag. Between the two nothing
 * else may write. rec_begin returns NULL once recording stopped. */
static unsigned char *rec_begin(size_t bound)
{
    if (!W.open || !reserve(bound + 12))
        return NULL;
    return W.map + W.len + 2;
}

/* The sum of n bytes mod 256, eight at a time: each byte lane of a word
 * added into a 16-bit lane (two accumulators, even and odd bytes), folded
 * once at the end; lanes cannot overflow below 256 words a batch. */
static unsigned byte_sum(const unsigned char *p, size_t n)
{
    uint64_t acc = 0, total = 0;
    size_t batch = 0;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        acc += (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
        p += 8;
        n -= 8;
        if (++batch == 128) {
            for (int i = 0; i < 4; i++)
                total += (acc >> (16 * i)) & 0xffff;
            acc = 0;
            batch = 0;
        }
    }
    for (int i = 0; i < 4; i++)
        total += (acc >> (16 * i)) & 0xffff;
    while (n--)
        total += *p++;
    return (unsigned)total;
}

static void rec_end(unsigned char tag, unsigned char *end)
{
    unsigned char *rec = W.map + W.len;
    size_t n = (size_t)(end - (rec + 2));
    size_t k = rp_tv_size(n);
    if (k > 1)
        memmove(rec + 1 + k, rec + 2, n);
    rp_tv_put(rec + 1, n);
    /* The check byte: the sum of every byte of the record, tag included
     * (tracefmt.h): any one byte changed shows. */
    rec[1 + k + n] = (unsigned char)(tag + byte_sum(rec + 1, k + n));
    __atomic_store_n(rec, tag, __ATOMIC_RELEASE);
    W.len += 1 + k + n + 1;
    W.records++;
}

static unsigned char *put_str(unsigned char *p, const char *s, size_t n)
{
    p = rp_tv_put(p, n);
    memcpy(p, s, n);
    return p + n;
}

/* ---- definitions --------------------------------------------------------------- */

static uint32_t thread_id(void)
{
    if (my_tid)
        return my_tid;
    uint32_t id = ++W.next_tid;
    unsigned char *p = rec_begin(24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, (uint64_t)syscall(SYS_gettid));
        rec_end(RP_TR_THREAD, p);
    }
    my_tid = id;
    my_last = W.t0;
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
    unsigned char *p = rec_begin(n + 24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, families[e]);
        p = put_str(p, name, n);
        rec_end(RP_TR_ENTRY, p);
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

/* The id of context c; a context not seen created is defined here (a
 * primary context: retained outside the interposed calls). `valid`: the
 * handle may be asked about (the call that named it succeeded). */
static uint32_t ctx_id(CUcontext c, bool valid)
{
    if (!c)
        return 0;
    uint32_t v = map_get(&W.ctxs, (uint64_t)(uintptr_t)c);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_ctx;
    map_put(&W.ctxs, (uint64_t)(uintptr_t)c, id);
    unsigned char *p = rec_begin(24);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, valid ? device_of(c) : 0);
        p = rp_tv_put(p, valid ? RP_TC_PRIMARY : 0);
        rec_end(RP_TR_CTX, p);
    }
    return id;
}

static uint32_t stream_id(CUstream s, bool valid)
{
    if (s == NULL)
        return RP_TSTREAM_NULL;
    if (s == CU_STREAM_LEGACY)
        return RP_TSTREAM_LEGACY;
    if (s == CU_STREAM_PER_THREAD)
        return RP_TSTREAM_PER_THREAD;
    uint64_t key = (uint64_t)(uintptr_t)s;
    if (key == W.last_stream_key)
        return W.last_stream_id;
    uint32_t v = map_get(&W.streams, key);
    if (v) {
        W.last_stream_key = key;
        return W.last_stream_id = v - 1;
    }
    uint32_t id = RP_TSTREAM_FIRST + W.next_stream++;
    map_put(&W.streams, (uint64_t)(uintptr_t)s, id);
    CUcontext c = NULL;
    unsigned int flags = 0;
    int prio = 0;
    uint32_t cid = 0;
    if (valid) {
        if (W.real->cuStreamGetCtx && W.real->cuStreamGetCtx(s, &c) == CUDA_SUCCESS)
            cid = ctx_id(c, true);
        if (W.real->cuStreamGetFlags)
            W.real->cuStreamGetFlags(s, &flags);
        if (W.stream_priority)
            W.stream_priority(s, &prio);
    }
    unsigned char *p = rec_begin(40);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, cid);
        p = rp_tv_put(p, flags);
        p = rp_tv_put(p, rp_tv_zigzag(prio));
        rec_end(RP_TR_STREAM, p);
    }
    return id;
}

static uint32_t event_id(CUevent e)
{
    if (!e)
        return 0;
    uint32_t v = map_get(&W.events, (uint64_t)(uintptr_t)e);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_event;
    map_put(&W.events, (uint64_t)(uintptr_t)e, id);
    unsigned char *p = rec_begin(12);
    if (p) {
        p = rp_tv_put(p, id);
        rec_end(RP_TR_EVENT, p);
    }
    return id;
}

static uint32_t module_id(const void *m, unsigned kind)
{
    if (!m)
        return 0;
    uint64_t key = (uint64_t)(uintptr_t)m;
    uint32_t v = map_get(&W.modules, key);
    if (v)
        return v - 1;
    uint32_t id = ++W.next_module;
    map_put(&W.modules, key, id);
    unsigned char *p = rec_begin(12);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, kind);
        rec_end(RP_TR_MODULE, p);
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

/* kind: 0 a module's CUfunction, 1 a CUkernel, 2 the CUfunction of a
 * CUkernel (parent: that kernel's func id). */
static struct tr_func *func_of(const void *h, unsigned kind, uint32_t parent, const char *name,
                               bool valid)
{
    if (!h)
        return NULL;
    if (h == W.last_fn_key)
        return W.last_fn;
    uint32_t v = map_get(&W.funcs, (uint64_t)(uintptr_t)h);
    if (v) {
        W.last_fn_key = h;
        return W.last_fn = W.fn[v - 1];
    }
    if (W.nfn == W.capfn) {
        size_t nc = W.capfn ? W.capfn * 2 : 64;
        struct tr_func **nf = rp__realloc(W.fn, nc * sizeof *nf);
        if (!nf)
            return NULL;
        W.fn = nf;
        W.capfn = nc;
    }
    struct tr_func *f = rp__calloc(1, sizeof *f);
    if (!f)
        return NULL;
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
                f->module = module_id(m, 0);
        }
    }
    if (f->psize) {
        f->last = rp__calloc(1, f->psize);
        if (!f->last) {
            free(f->off);
            free(f->size);
            free(f);
            return NULL;
        }
    }
    W.fn[W.nfn++] = f;
    map_put(&W.funcs, (uint64_t)(uintptr_t)h, f->id - 1);
    size_t nlen = nm ? strnlen(nm, 4096) : 0;
    unsigned char *p = rec_begin(48 + nlen + 10 * (size_t)f->nparams);
    if (p) {
        p = rp_tv_put(p, f->id);
        p = rp_tv_put(p, f->module);
        p = rp_tv_put(p, kind | (f->layout ? 0 : 4));
        p = put_str(p, nm ? nm : "", nlen);
        p = rp_tv_put(p, f->nparams);
        for (uint32_t i = 0; i < f->nparams; i++) {
            p = rp_tv_put(p, f->off[i]);
            p = rp_tv_put(p, f->size[i]);
        }
        rec_end(RP_TR_FUNC, p);
    }
    return f;
}

static void func_forget(const void *h)
{
    map_del(&W.funcs, (uint64_t)(uintptr_t)h);
    if (W.last_fn_key == h)
        W.last_fn_key = NULL;
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

static void range_del(uintptr_t base)
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
static uint32_t range_add(uintptr_t base, size_t size, unsigned char space)
{
    uint32_t id = ++W.next_mem;
    if (!size)
        size = 1;
    for (;;) {
        size_t i = range_lower(base + size - 1);
        if (!i || W.rg[i - 1].base + W.rg[i - 1].size <= base)
            break;
        range_del(W.rg[i - 1].base);
    }
    if (W.nrg == W.caprg) {
        size_t nc = W.caprg ? W.caprg * 2 : 64;
        struct tr_range *n = rp__realloc(W.rg, nc * sizeof *n);
        if (!n)
            return id; /* unknown from now on: later uses are looked up again */
        W.rg = n;
        W.caprg = nc;
    }
    size_t i = range_lower(base);
    memmove(&W.rg[i + 1], &W.rg[i], (W.nrg - i) * sizeof *W.rg);
    W.rg[i] = (struct tr_range){base, size, id, space};
    W.nrg++;
    return id;
}

static void mem_def(uint32_t id, unsigned space, size_t bytes, uint32_t ctx)
{
    unsigned char *p = rec_begin(40);
    if (p) {
        p = rp_tv_put(p, id);
        p = rp_tv_put(p, space);
        p = rp_tv_put(p, bytes);
        p = rp_tv_put(p, ctx);
        rec_end(RP_TR_MEM, p);
    }
}

/* How an address is written (tracefmt.h, "Addresses"). */
struct tr_addr {
    uint32_t id;
    unsigned char space;
    uint64_t off; /* the offset, or the raw address */
};

enum addr_kind { A_DEVICE, A_HOST, A_UNIFIED };

/* Where address a lies. A device address the trace has not seen allocated is
 * looked up once (cuMemGetAddressRange) when the call succeeded, and its
 * allocation recorded; a host address outside every pinned range is
 * pageable, one id per distinct address. */
static struct tr_addr addr_of(uint64_t a, enum addr_kind kind, bool valid)
{
    struct tr_addr out = {0, RP_TS_RAW, a};
    if (!a)
        return out;
    struct tr_range *r = range_find((uintptr_t)a);
    if (r)
        return (struct tr_addr){r->id, r->space, a - r->base};
    if (!valid)
        return out;
    if (kind != A_HOST && W.addr_range) {
        CUdeviceptr base = 0;
        size_t size = 0;
        if (W.addr_range(&base, &size, (CUdeviceptr)a) == CUDA_SUCCESS && size) {
            CUcontext c = NULL;
            uint32_t cid = 0;
            if (W.real->cuPointerGetAttribute &&
                W.real->cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)a) ==
                    CUDA_SUCCESS)
                cid = ctx_id(c, true);
            uint32_t id = range_add((uintptr_t)base, size, RP_TS_DEVICE);
            mem_def(id, RP_TS_DEVICE, size, cid);
            return (struct tr_addr){id, RP_TS_DEVICE, a - base};
        }
    }
    if (kind == A_DEVICE)
        return out;
    uint32_t v = map_get(&W.pageable, a);
    if (v)
        return (struct tr_addr){v - 1, RP_TS_PAGEABLE, 0};
    uint32_t id = ++W.next_mem;
    map_put(&W.pageable, a, id);
    mem_def(id, RP_TS_PAGEABLE, 0, 0);
    return (struct tr_addr){id, RP_TS_PAGEABLE, 0};
}

static unsigned char *put_addr(unsigned char *p, struct tr_addr a)
{
    p = rp_tv_put(p, (uint64_t)a.id << 2 | a.space);
    if (a.space != RP_TS_PAGEABLE)
        p = rp_tv_put(p, a.off);
    return p;
}

/* ---- calls ------------------------------------------------------------------------ */

struct call {
    enum rp__entry e;
    unsigned fam;
    CUresult r;
    uint64_t t0;
    uint64_t dur; /* ticks; written when nonzero */
    bool ok;      /* r == CUDA_SUCCESS */
    uint64_t seq; /* its place in the order calls began */
};

/* The call record's header; the caller appends the payload and ends it. */
static unsigned char *call_begin(const struct call *c, size_t payload)
{
    uint32_t tid = thread_id();
    uint32_t eid = entry_id(c->e);
    unsigned char *p = rec_begin(payload + 48);
    if (!p)
        return NULL;
    unsigned flags = (tid == W.last_tid ? RP_TCF_SAME_THREAD : 0) |
                     (c->r ? RP_TCF_RESULT : 0) | (c->dur ? RP_TCF_DURATION : 0);
    *p++ = (unsigned char)flags;
    p = rp_tv_put(p, eid);
    if (tid != W.last_tid)
        p = rp_tv_put(p, tid);
    uint64_t dt = c->t0 > my_last ? ticks_ns(c->t0 - my_last) : 0;
    my_last = c->t0;
    p = rp_tv_put(p, dt);
    /* Where the call began against where the previous record's call did:
     * +1 (a 0 here) unless calls overlapped. */
    p = rp_tv_put(p, rp_tv_zigzag((int64_t)(c->seq - W.last_seq - 1)));
    W.last_seq = c->seq;
    if (c->r)
        p = rp_tv_put(p, (uint64_t)c->r);
    if (c->dur)
        p = rp_tv_put(p, ticks_ns(c->dur));
    W.last_tid = tid;
    W.calls++;
    return p;
}

static void call_end(unsigned char *p)
{
    if (p)
        rec_end(RP_TR_CALL, p);
}

static void record_devices(void)
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
        unsigned char *p = rec_begin(nl + 48);
        if (!p)
            return;
        p = rp_tv_put(p, (uint64_t)i);
        p = put_str(p, name, nl);
        p = rp_tv_put(p, (uint64_t)major);
        p = rp_tv_put(p, (uint64_t)minor);
        p = rp_tv_put(p, mem);
        rec_end(RP_TR_DEVICE, p);
    }
}

static void enc_generic(struct call *c)
{
    if (c->e == RP_E_cuInit && c->ok && !W.devices_done)
        record_devices();
    call_end(call_begin(c, 0));
}

/* The parameter bytes of a launch into W.scratch (f->psize bytes), from
 * kernelParams by the layout or from an extra buffer of exactly that size.
 * Returns false when they cannot be read safely: no layout, or a failed
 * call (its pointers may be anything). */
static bool gather(const struct tr_func *f, bool ok, void **params, const void *buf)
{
    if (!f || !f->layout || !ok)
        return false;
    if (W.capscratch < f->psize) {
        unsigned char *n = rp__realloc(W.scratch, f->psize);
        if (!n)
            return false;
        W.scratch = n;
        W.capscratch = f->psize;
    }
    if (buf) {
        memcpy(W.scratch, buf, f->psize);
        return true;
    }
    if (!f->dense)
        memset(W.scratch, 0, f->psize); /* padding: zeros, the same every launch */
    for (uint32_t i = 0; i < f->nparams; i++) {
        unsigned char *d = W.scratch + f->off[i];
        switch (f->size[i]) { /* the common sizes as single moves */
        case 8: memcpy(d, params[i], 8); break;
        case 4: memcpy(d, params[i], 4); break;
        default: memcpy(d, params[i], f->size[i]); break;
        }
    }
    return true;
}

/* The parameters against the function's last launch: the same, a delta
 * (a bit per 8-byte word, then the words that changed), or in full. */
static unsigned char *put_params(unsigned char *p, struct tr_func *f, unsigned *coding)
{
    size_t n = f->psize, nw = (n + 7) / 8;
    const unsigned char *now = W.scratch;
    unsigned char *last = f->last;
    unsigned char *mask = p;
    size_t mbytes = (nw + 7) / 8, changed = 0;
    p += mbytes;
    unsigned bits = 0;
    /* Word by word (8-byte loads; the last word may be shorter); the mask a
     * byte at a time as it fills. */
    for (size_t w = 0; w < nw; w++) {
        size_t o = 8 * w;
        if (o + 8 <= n) {
            uint64_t a, b;
            memcpy(&a, now + o, 8);
            memcpy(&b, last + o, 8);
            if (a != b) {
                bits |= 1u << (w % 8);
                memcpy(p, &a, 8);
                memcpy(last + o, &a, 8);
                p += 8;
                changed++;
            }
        } else if (memcmp(now + o, last + o, n - o)) {
            bits |= 1u << (w % 8);
            memcpy(p, now + o, n - o);
            memcpy(last + o, now + o, n - o);
            p += n - o;
            changed++;
        }
        if (w % 8 == 7 || w + 1 == nw) {
            mask[w / 8] = (unsigned char)bits;
            bits = 0;
        }
    }
    if (!changed) {
        *coding = RP_TLP_SAME;
        return mask;
    }
    if (mbytes + changed * 8 < n) {
        *coding = RP_TLP_DELTA;
        return p;
    }
    *coding = RP_TLP_FULL; /* no smaller as a delta: in full (last is now) */
    memcpy(mask, now, n);
    return mask + n;
}

/* What an `extra` array carries: its buffer and size, whether it only ends,
 * and whether it is well formed (only the three keys; at most 16 pairs). */
struct extra_info {
    const void *buf;
    size_t size;
    bool empty, ok;
};

static struct extra_info read_extra(void **extra)
{
    struct extra_info x = {NULL, 0, false, true};
    if (!extra)
        return x;
    if (extra[0] == CU_LAUNCH_PARAM_END) {
        x.empty = true;
        return x;
    }
    const size_t *sz = NULL;
    for (size_t i = 0; i < 32 && extra[i] != CU_LAUNCH_PARAM_END && extra[i] != NULL; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            x.buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            sz = extra[i + 1];
        else
            x.ok = false;
    }
    if (sz)
        x.size = *sz;
    if (!x.buf || !sz)
        x.ok = false;
    return x;
}

static unsigned char *put_u3(unsigned char *p, const unsigned v[3])
{
    for (int i = 0; i < 3; i++)
        p = rp_tv_put(p, v[i]);
    return p;
}

/* Launches: cuLaunchKernel[_ptsz], cuLaunchCooperativeKernel[_ptsz] and
 * cuLaunchKernelEx[_ptsz] (docs/trace.md, "Launches"). */
static void enc_launch(struct call *c, const uint64_t *a)
{
    const CUlaunchConfig *cfg = NULL;
    CUfunction fh;
    unsigned grid[3] = {0}, block[3] = {0}, shmem = 0;
    CUstream s;
    void **params, **extra;
    if (c->fam == RP_TRF_LAUNCH_EX) {
        cfg = (const CUlaunchConfig *)(uintptr_t)a[0];
        fh = (CUfunction)(uintptr_t)a[1];
        params = (void **)(uintptr_t)a[2];
        extra = (void **)(uintptr_t)a[3];
        if (cfg) {
            grid[0] = cfg->gridDimX, grid[1] = cfg->gridDimY, grid[2] = cfg->gridDimZ;
            block[0] = cfg->blockDimX, block[1] = cfg->blockDimY, block[2] = cfg->blockDimZ;
            shmem = cfg->sharedMemBytes;
            s = cfg->hStream;
        } else {
            s = NULL;
        }
    } else {
        fh = (CUfunction)(uintptr_t)a[0];
        for (int i = 0; i < 3; i++) {
            grid[i] = (unsigned)a[1 + i];
            block[i] = (unsigned)a[4 + i];
        }
        shmem = (unsigned)a[7];
        s = (CUstream)(uintptr_t)a[8];
        params = (void **)(uintptr_t)a[9];
        extra = c->fam == RP_TRF_LAUNCH ? (void **)(uintptr_t)a[10] : NULL;
    }
    struct tr_func *f = func_of(fh, 0, 0, NULL, c->ok);
    uint32_t sid = stream_id(s, c->ok);
    struct extra_info x = c->ok ? read_extra(extra) : (struct extra_info){0};
    unsigned form;
    if (c->fam == RP_TRF_LAUNCH_EX && !cfg)
        form = RP_TLFORM_NO_CONFIG;
    else if (params && extra && !(c->ok && x.empty))
        form = c->ok ? RP_TLFORM_PARAMS : RP_TLFORM_BOTH;
    else if (params && extra)
        form = RP_TLFORM_PARAMS_END;
    else if (params)
        form = RP_TLFORM_PARAMS;
    else if (extra)
        form = RP_TLFORM_EXTRA;
    else
        form = RP_TLFORM_NONE;
    bool have = false;
    if (form == RP_TLFORM_PARAMS || form == RP_TLFORM_PARAMS_END)
        have = gather(f, c->ok, params, NULL);
    else if (form == RP_TLFORM_EXTRA && x.ok && f && x.size == f->psize)
        have = gather(f, c->ok, NULL, x.buf);

    /* cuLaunchKernelEx's attributes, encoded, against the last ones. */
    unsigned char attrs[1280];
    size_t nattr = 0;
    bool attrs_same = false;
    if (c->fam == RP_TRF_LAUNCH_EX) {
        unsigned char *q = attrs;
        unsigned na = cfg && cfg->numAttrs <= 16 && (cfg->attrs || !cfg->numAttrs) ? cfg->numAttrs : 0;
        q = rp_tv_put(q, na);
        for (unsigned i = 0; i < na; i++) {
            const CUlaunchAttribute *at = &cfg->attrs[i];
            const unsigned char *v = (const unsigned char *)&at->value;
            size_t len = sizeof at->value;
            while (len && !v[len - 1])
                len--;
            q = rp_tv_put(q, (uint64_t)at->id);
            q = rp_tv_put(q, len);
            memcpy(q, v, len);
            q += len;
        }
        nattr = (size_t)(q - attrs);
        attrs_same = f && f->attrs && f->nattrs_bytes == nattr && !memcmp(f->attrs, attrs, nattr);
    }

    size_t bound = 96 + nattr + (f ? f->psize + f->psize / 8 + 2 : 0);
    unsigned char *p = call_begin(c, bound);
    if (!p)
        return;
    p = rp_tv_put(p, f ? f->id : 0);
    p = rp_tv_put(p, sid);
    unsigned char *lf = p++;
    unsigned flags = form << RP_TLF_FORM_SHIFT;
    if (c->fam == RP_TRF_LAUNCH_EX) {
        *p++ = attrs_same ? RP_TLX_ATTRS_SAME : 0;
        if (!attrs_same) {
            memcpy(p, attrs, nattr);
            p += nattr;
        }
        if (f && !attrs_same) {
            unsigned char *na = rp__realloc(f->attrs, nattr);
            if (na) {
                memcpy(na, attrs, nattr);
                f->attrs = na;
                f->nattrs_bytes = nattr;
            }
        }
    }
    /* Against the function's last launch (zeros before the first): a
     * reader keeps the same state. Without a function, in full. */
    if (!f || grid[0] != f->grid[0] || grid[1] != f->grid[1] || grid[2] != f->grid[2]) {
        flags |= RP_TLF_GRID;
        p = put_u3(p, grid);
    }
    if (!f || block[0] != f->block[0] || block[1] != f->block[1] || block[2] != f->block[2]) {
        flags |= RP_TLF_BLOCK;
        p = put_u3(p, block);
    }
    if (!f || shmem != f->shmem) {
        flags |= RP_TLF_SHMEM;
        p = rp_tv_put(p, shmem);
    }
    if (form == RP_TLFORM_EXTRA)
        p = rp_tv_put(p, x.size);
    unsigned coding = RP_TLP_NONE;
    if (have)
        p = put_params(p, f, &coding);
    flags |= coding << RP_TLF_PARAMS_SHIFT;
    *lf = (unsigned char)flags;
    if (f) {
        memcpy(f->grid, grid, sizeof grid);
        memcpy(f->block, block, sizeof block);
        f->shmem = shmem;
    }
    call_end(p);
}

/* Copies: the two addresses, the size, the stream, and with
 * REPRISE_TRACE_DATA the bytes a host-to-device copy reads. */
static void enc_copy(struct call *c, const uint64_t *a)
{
    unsigned fam = c->fam;
    bool peer = fam == RP_TRF_PEER || fam == RP_TRF_PEER_ASYNC;
    uint64_t dst = a[0], src = peer ? a[2] : a[1], n = peer ? a[4] : a[2];
    bool async = fam == RP_TRF_HTOD_ASYNC || fam == RP_TRF_DTOH_ASYNC ||
                 fam == RP_TRF_DTOD_ASYNC || fam == RP_TRF_COPY_ASYNC || fam == RP_TRF_PEER_ASYNC;
    CUstream s = async ? (CUstream)(uintptr_t)a[peer ? 5 : 3] : NULL;
    enum addr_kind dk = A_DEVICE, sk = A_DEVICE;
    if (fam == RP_TRF_HTOD || fam == RP_TRF_HTOD_ASYNC)
        sk = A_HOST;
    else if (fam == RP_TRF_DTOH || fam == RP_TRF_DTOH_ASYNC)
        dk = A_HOST;
    else if (fam == RP_TRF_COPY || fam == RP_TRF_COPY_ASYNC)
        dk = sk = A_UNIFIED;
    struct tr_addr da = addr_of(dst, dk, c->ok), sa = addr_of(src, sk, c->ok);
    uint32_t sid = async ? stream_id(s, c->ok) : 0;
    uint32_t dc = peer ? ctx_id((CUcontext)(uintptr_t)a[1], c->ok) : 0;
    uint32_t sc = peer ? ctx_id((CUcontext)(uintptr_t)a[3], c->ok) : 0;
    bool data = W.data && c->ok && sk != A_DEVICE && n &&
                (sa.space == RP_TS_HOST || sa.space == RP_TS_PAGEABLE) && n <= (1ull << 32);
    unsigned char *p = call_begin(c, 96 + (data ? n : 0));
    if (!p)
        return;
    *p++ = data ? RP_TCOPY_DATA : 0;
    p = put_addr(p, da);
    p = put_addr(p, sa);
    p = rp_tv_put(p, n);
    if (async)
        p = rp_tv_put(p, sid);
    if (peer) {
        p = rp_tv_put(p, dc);
        p = rp_tv_put(p, sc);
    }
    if (data) {
        memcpy(p, (const void *)(uintptr_t)src, n);
        p += n;
    }
    call_end(p);
}

static void enc_memset(struct call *c, const uint64_t *a)
{
    unsigned fam = c->fam;
    bool two = fam >= RP_TRF_MEMSET2D8 && fam <= RP_TRF_MEMSET2D32_ASYNC;
    bool async = (fam >= RP_TRF_MEMSET8_ASYNC && fam <= RP_TRF_MEMSET32_ASYNC) ||
                 fam >= RP_TRF_MEMSET2D8_ASYNC;
    struct tr_addr da = addr_of(a[0], A_DEVICE, c->ok);
    uint32_t sid = async ? stream_id((CUstream)(uintptr_t)a[two ? 5 : 3], c->ok) : 0;
    unsigned char *p = call_begin(c, 80);
    if (!p)
        return;
    p = put_addr(p, da);
    if (two) {
        p = rp_tv_put(p, a[1]); /* pitch */
        p = rp_tv_put(p, a[2]); /* value */
        p = rp_tv_put(p, a[3]); /* width */
        p = rp_tv_put(p, a[4]); /* height */
    } else {
        p = rp_tv_put(p, a[1]);
        p = rp_tv_put(p, a[2]);
    }
    if (async)
        p = rp_tv_put(p, sid);
    call_end(p);
}

/* An allocation: its id (0 when it failed), its size and what else the call
 * said; the range is known from now on. */
static void enc_alloc(struct call *c, const uint64_t *a)
{
    unsigned fam = c->fam;
    uint64_t base = 0, bytes = a[1], flags = 0, pitch = 0;
    unsigned char space = RP_TS_DEVICE;
    uint32_t sid = 0;
    if (c->ok) {
        switch (fam) {
        case RP_TRF_ALLOC_V1:
            base = *(const CUdeviceptr_v1 *)(uintptr_t)a[0];
            break;
        case RP_TRF_ALLOC_PITCH_V1:
            base = *(const CUdeviceptr_v1 *)(uintptr_t)a[0];
            pitch = *(const unsigned int *)(uintptr_t)a[1];
            break;
        case RP_TRF_ALLOC_PITCH:
            base = *(const CUdeviceptr *)(uintptr_t)a[0];
            pitch = *(const size_t *)(uintptr_t)a[1];
            break;
        case RP_TRF_ALLOC_HOST:
        case RP_TRF_HOST_ALLOC:
            base = (uint64_t)(uintptr_t) * (void *const *)(uintptr_t)a[0];
            break;
        default:
            base = *(const CUdeviceptr *)(uintptr_t)a[0];
            break;
        }
    }
    if (fam == RP_TRF_ALLOC_PITCH || fam == RP_TRF_ALLOC_PITCH_V1)
        bytes = pitch * a[3];
    if (fam == RP_TRF_ALLOC_HOST || fam == RP_TRF_HOST_ALLOC) {
        space = RP_TS_HOST;
        flags = fam == RP_TRF_HOST_ALLOC ? a[2] : 0;
    }
    if (fam == RP_TRF_ALLOC_MANAGED)
        flags = a[2];
    if (fam == RP_TRF_ALLOC_ASYNC)
        sid = stream_id((CUstream)(uintptr_t)a[2], c->ok);
    if (fam == RP_TRF_ALLOC_POOL_ASYNC)
        sid = stream_id((CUstream)(uintptr_t)a[3], c->ok);
    uint32_t id = c->ok && base ? range_add((uintptr_t)base, bytes, space) : 0;
    unsigned char *p = call_begin(c, 80);
    if (!p)
        return;
    p = rp_tv_put(p, id);
    p = rp_tv_put(p, bytes);
    switch (fam) {
    case RP_TRF_ALLOC_PITCH_V1:
    case RP_TRF_ALLOC_PITCH:
        p = rp_tv_put(p, a[2]); /* width */
        p = rp_tv_put(p, a[3]); /* height */
        p = rp_tv_put(p, a[4]); /* element bytes */
        p = rp_tv_put(p, pitch);
        break;
    case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_MANAGED:
        p = rp_tv_put(p, flags);
        break;
    case RP_TRF_ALLOC_ASYNC:
    case RP_TRF_ALLOC_POOL_ASYNC:
        p = rp_tv_put(p, sid);
        break;
    default:
        break;
    }
    call_end(p);
}

static void enc_free(struct call *c, const uint64_t *a)
{
    bool host = c->fam == RP_TRF_FREE_HOST || c->fam == RP_TRF_HOST_UNREGISTER;
    struct tr_addr da = addr_of(a[0], host ? A_HOST : A_DEVICE, false);
    uint32_t sid = c->fam == RP_TRF_FREE_ASYNC ? stream_id((CUstream)(uintptr_t)a[1], c->ok) : 0;
    if (c->ok && (da.space == RP_TS_DEVICE || da.space == RP_TS_HOST) && da.off == 0)
        range_del((uintptr_t)a[0]);
    unsigned char *p = call_begin(c, 48);
    if (!p)
        return;
    p = put_addr(p, da);
    if (c->fam == RP_TRF_FREE_ASYNC)
        p = rp_tv_put(p, sid);
    call_end(p);
}

static void enc_register(struct call *c, const uint64_t *a)
{
    uint32_t id = c->ok && a[0] ? range_add((uintptr_t)a[0], a[1], RP_TS_HOST) : 0;
    unsigned char *p = call_begin(c, 48);
    if (!p)
        return;
    p = rp_tv_put(p, id);
    p = rp_tv_put(p, a[1]);
    p = rp_tv_put(p, a[2]);
    call_end(p);
}

/* Syncs and queries: their object, and (in the header) their answer and how
 * long they took. */
static void enc_sync(struct call *c, const uint64_t *a)
{
    uint32_t id = 0;
    switch (c->fam) {
    case RP_TRF_STREAM_SYNC:
    case RP_TRF_STREAM_QUERY:
        id = stream_id((CUstream)(uintptr_t)a[0], c->ok || c->r == CUDA_ERROR_NOT_READY);
        break;
    case RP_TRF_CTX_SYNC_V2:
        id = ctx_id((CUcontext)(uintptr_t)a[0], c->ok);
        break;
    case RP_TRF_EVENT_SYNC:
    case RP_TRF_EVENT_QUERY:
        id = event_id((CUevent)(uintptr_t)a[0]);
        break;
    default:
        break;
    }
    unsigned char *p = call_begin(c, 16);
    if (!p)
        return;
    if (c->fam != RP_TRF_CTX_SYNC)
        p = rp_tv_put(p, id);
    call_end(p);
}

static void enc_event(struct call *c, const uint64_t *a)
{
    uint32_t ev = 0, sid = 0;
    uint64_t flags = 0;
    switch (c->fam) {
    case RP_TRF_EVENT_CREATE:
        if (c->ok) {
            CUevent e = *(CUevent *)(uintptr_t)a[0];
            ev = ++W.next_event;
            map_put(&W.events, (uint64_t)(uintptr_t)e, ev);
        }
        flags = a[1];
        break;
    case RP_TRF_EVENT_DESTROY:
        ev = event_id((CUevent)(uintptr_t)a[0]);
        if (c->ok)
            map_del(&W.events, a[0]);
        break;
    case RP_TRF_EVENT_RECORD:
    case RP_TRF_EVENT_RECORD_FLAGS:
        ev = event_id((CUevent)(uintptr_t)a[0]);
        sid = stream_id((CUstream)(uintptr_t)a[1], c->ok);
        flags = c->fam == RP_TRF_EVENT_RECORD_FLAGS ? a[2] : 0;
        break;
    case RP_TRF_WAIT_EVENT:
        sid = stream_id((CUstream)(uintptr_t)a[0], c->ok);
        ev = event_id((CUevent)(uintptr_t)a[1]);
        flags = a[2];
        break;
    default:
        break;
    }
    unsigned char *p = call_begin(c, 32);
    if (!p)
        return;
    p = rp_tv_put(p, ev);
    if (c->fam != RP_TRF_EVENT_CREATE && c->fam != RP_TRF_EVENT_DESTROY)
        p = rp_tv_put(p, sid);
    if (c->fam == RP_TRF_EVENT_CREATE || c->fam == RP_TRF_EVENT_RECORD_FLAGS ||
        c->fam == RP_TRF_WAIT_EVENT)
        p = rp_tv_put(p, flags);
    call_end(p);
}

static void enc_capture(struct call *c, const uint64_t *a)
{
    uint32_t sid = stream_id((CUstream)(uintptr_t)a[0], c->ok);
    uint64_t extra = 0;
    if (c->fam == RP_TRF_BEGIN_CAPTURE_MODE) {
        extra = a[1];
    } else if (c->fam == RP_TRF_END_CAPTURE) {
        CUgraph g = a[1] ? *(CUgraph *)(uintptr_t)a[1] : NULL;
        if (c->ok && g) {
            extra = ++W.next_graph;
            map_put(&W.graphs, (uint64_t)(uintptr_t)g, (uint32_t)extra);
        }
    } else if (c->fam == RP_TRF_IS_CAPTURING) {
        if (c->ok && a[1])
            extra = (uint64_t)*(CUstreamCaptureStatus *)(uintptr_t)a[1];
    }
    unsigned char *p = call_begin(c, 32);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    if (c->fam != RP_TRF_BEGIN_CAPTURE)
        p = rp_tv_put(p, extra);
    call_end(p);
}

static uint32_t graph_id(CUgraph g)
{
    uint32_t v = g ? map_get(&W.graphs, (uint64_t)(uintptr_t)g) : 0;
    return v ? v - 1 : 0;
}

static uint32_t exec_id(CUgraphExec x)
{
    uint32_t v = x ? map_get(&W.execs, (uint64_t)(uintptr_t)x) : 0;
    return v ? v - 1 : 0;
}

static void enc_graph(struct call *c, const uint64_t *a)
{
    uint32_t x = 0, g = 0, sid = 0;
    uint64_t flags = 0;
    switch (c->fam) {
    case RP_TRF_GRAPH_LAUNCH:
    case RP_TRF_GRAPH_UPLOAD:
        x = exec_id((CUgraphExec)(uintptr_t)a[0]);
        sid = stream_id((CUstream)(uintptr_t)a[1], c->ok);
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        g = graph_id((CUgraph)(uintptr_t)a[1]);
        flags = a[2];
        if (c->ok) {
            CUgraphExec e = *(CUgraphExec *)(uintptr_t)a[0];
            x = ++W.next_exec;
            map_put(&W.execs, (uint64_t)(uintptr_t)e, x);
        }
        break;
    case RP_TRF_GRAPH_EXEC_UPDATE:
        x = exec_id((CUgraphExec)(uintptr_t)a[0]);
        g = graph_id((CUgraph)(uintptr_t)a[1]);
        break;
    default:
        break;
    }
    unsigned char *p = call_begin(c, 32);
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
    call_end(p);
}

static void enc_ctx(struct call *c, const uint64_t *a)
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
            map_put(&W.ctxs, (uint64_t)(uintptr_t)n, id);
        }
        break;
    case RP_TRF_CTX_DESTROY:
        id = ctx_id((CUcontext)(uintptr_t)a[0], false);
        if (c->ok)
            map_del(&W.ctxs, a[0]);
        break;
    case RP_TRF_CTX_SET:
    case RP_TRF_CTX_PUSH:
        id = ctx_id((CUcontext)(uintptr_t)a[0], c->ok);
        break;
    case RP_TRF_CTX_POP:
        if (c->ok && a[0])
            id = ctx_id(*(CUcontext *)(uintptr_t)a[0], true);
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
        break;
    default:
        break;
    }
    unsigned char *p = call_begin(c, 40);
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
    call_end(p);
}

/* Functions and kernels: the handle a lookup returned, defined (name and
 * layout) the first time; unloads forget their module's functions. */
static void enc_module(struct call *c, const uint64_t *a)
{
    uint32_t fid = 0, mid = 0;
    switch (c->fam) {
    case RP_TRF_GET_FUNCTION:
    case RP_TRF_LIBRARY_GET_KERNEL: {
        bool lib = c->fam == RP_TRF_LIBRARY_GET_KERNEL;
        mid = module_id((const void *)(uintptr_t)a[1], lib ? 1 : 0);
        if (c->ok) {
            const void *h = *(void *const *)(uintptr_t)a[0];
            struct tr_func *f = func_of(h, lib ? 1 : 0, mid, (const char *)(uintptr_t)a[2], true);
            fid = f ? f->id : 0;
        }
        break;
    }
    case RP_TRF_KERNEL_GET_FUNCTION: {
        struct tr_func *k = func_of((const void *)(uintptr_t)a[1], 1, 0, NULL, c->ok);
        mid = k ? k->id : 0;
        if (c->ok) {
            const void *h = *(void *const *)(uintptr_t)a[0];
            struct tr_func *f = func_of(h, 2, mid, NULL, true);
            fid = f ? f->id : 0;
        }
        break;
    }
    case RP_TRF_MODULE_UNLOAD:
    case RP_TRF_LIBRARY_UNLOAD: {
        uint32_t v = map_get(&W.modules, a[0]);
        mid = v ? v - 1 : 0;
        if (c->ok && mid) {
            map_del(&W.modules, a[0]);
            /* Its functions' handles may come back for another module. */
            for (uint32_t i = 0; i < W.funcs.cap; i++) {
                uint64_t k = W.funcs.keys[i];
                if (k != MAP_EMPTY && k != MAP_TOMB && W.fn[W.funcs.vals[i] - 1]->module == mid)
                    func_forget((const void *)(uintptr_t)k);
            }
        }
        break;
    }
    default:
        break;
    }
    unsigned char *p = call_begin(c, 24);
    if (!p)
        return;
    if (c->fam != RP_TRF_MODULE_UNLOAD && c->fam != RP_TRF_LIBRARY_UNLOAD)
        p = rp_tv_put(p, fid);
    p = rp_tv_put(p, mid);
    call_end(p);
}

static void enc_stream(struct call *c, const uint64_t *a)
{
    uint32_t sid = 0;
    switch (c->fam) {
    case RP_TRF_STREAM_DESTROY:
        sid = stream_id((CUstream)(uintptr_t)a[0], false);
        if (c->ok) {
            map_del(&W.streams, a[0]);
            if (W.last_stream_key == a[0])
                W.last_stream_key = 0;
        }
        break;
    case RP_TRF_HOSTFN:
        sid = stream_id((CUstream)(uintptr_t)a[0], c->ok);
        break;
    default:
        break;
    }
    unsigned char *p = call_begin(c, 16);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    call_end(p);
}

static void enc_value(struct call *c, const uint64_t *a)
{
    uint32_t sid = stream_id((CUstream)(uintptr_t)a[0], c->ok);
    struct tr_addr da = addr_of(a[1], A_UNIFIED, c->ok);
    unsigned char *p = call_begin(c, 48);
    if (!p)
        return;
    p = rp_tv_put(p, sid);
    p = put_addr(p, da);
    p = rp_tv_put(p, a[2]);
    p = rp_tv_put(p, a[3]);
    call_end(p);
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
    struct call c = {e, families[e], r, t0, 0, r == CUDA_SUCCESS, seq};
    if (timed(c.fam)) {
        uint64_t t1 = rp__tr_ticks();
        c.dur = t1 > t0 ? t1 - t0 : 1;
    }
    lock_writer();
    if (!W.open) {
        unlock_writer();
        errno = saved;
        return;
    }
    switch (c.fam) {
    case RP_TRF_LAUNCH:
    case RP_TRF_LAUNCH_COOP:
    case RP_TRF_LAUNCH_EX:
        enc_launch(&c, a);
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC:
        enc_copy(&c, a);
        break;
    case RP_TRF_MEMSET8: case RP_TRF_MEMSET16: case RP_TRF_MEMSET32:
    case RP_TRF_MEMSET8_ASYNC: case RP_TRF_MEMSET16_ASYNC: case RP_TRF_MEMSET32_ASYNC:
    case RP_TRF_MEMSET2D8: case RP_TRF_MEMSET2D16: case RP_TRF_MEMSET2D32:
    case RP_TRF_MEMSET2D8_ASYNC: case RP_TRF_MEMSET2D16_ASYNC: case RP_TRF_MEMSET2D32_ASYNC:
        enc_memset(&c, a);
        break;
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_HOST: case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_POOL_ASYNC:
        enc_alloc(&c, a);
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_FREE_ASYNC: case RP_TRF_HOST_UNREGISTER:
        enc_free(&c, a);
        break;
    case RP_TRF_HOST_REGISTER:
        enc_register(&c, a);
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
    unlock_writer();
    errno = saved;
}

/* ---- open, close, threads, fork ------------------------------------------------------ */

static void thread_exit(void *unused)
{
    (void)unused;
    if (!atomic_load(&rp__tr_live) || !my_tid)
        return;
    uint64_t t = rp__tr_ticks();
    uint64_t q = atomic_fetch_add_explicit(&rp__tr_seq, 1, memory_order_relaxed);
    lock_writer();
    unsigned char *p = rec_begin(32);
    if (p) {
        p = rp_tv_put(p, my_tid);
        p = rp_tv_put(p, t > my_last ? ticks_ns(t - my_last) : 0);
        p = rp_tv_put(p, rp_tv_zigzag((int64_t)(q - W.last_seq - 1)));
        W.last_seq = q;
        rec_end(RP_TR_THREAD_EXIT, p);
    }
    unlock_writer();
}

static void *sym(const char *name)
{
    return rp__driver_handle ? rp__dlsym_real()(rp__driver_handle, name) : NULL;
}

static unsigned char *hdr_field(unsigned char *p, unsigned key, const void *v, size_t n)
{
    *p++ = (unsigned char)key;
    p = rp_tv_put(p, n);
    memcpy(p, v, n);
    return p + n;
}

static unsigned char *hdr_varint(unsigned char *p, unsigned key, uint64_t v)
{
    unsigned char b[10];
    return hdr_field(p, key, b, (size_t)(rp_tv_put(b, v) - b));
}

/* The header: what the trace was recorded from (docs/trace.md, "Header"). */
static bool write_header(void)
{
    static char cmd[65536];
    size_t ncmd = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k;
        while (ncmd < sizeof cmd && (k = read(fd, cmd + ncmd, sizeof cmd - ncmd)) > 0)
            ncmd += (size_t)k;
        close(fd);
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    int drv = 0;
    if (W.driver_version)
        W.driver_version(&drv);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    const char *dpath = rp__option(RP_OPTION_DRIVER).path;
    size_t need = RP_TRACE_PREAMBLE + ncmd + strlen(host) + strlen(dpath) + 256;
    if (!reserve(need))
        return false;
    unsigned char *h = W.map, *p = h + RP_TRACE_PREAMBLE;
    p = hdr_field(p, RP_TK_REPRISE_VERSION, REPRISE_VERSION, strlen(REPRISE_VERSION));
    p = hdr_field(p, RP_TK_COMMAND, cmd, ncmd);
    p = hdr_varint(p, RP_TK_PID, (uint64_t)getpid());
    p = hdr_field(p, RP_TK_HOST, host, strlen(host));
    p = hdr_varint(p, RP_TK_START_NS, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    p = hdr_varint(p, RP_TK_DRIVER_VERSION, (uint64_t)(drv > 0 ? drv : 0));
    p = hdr_varint(p, RP_TK_FLAGS, W.data ? RP_TF_DATA : 0);
    p = hdr_field(p, RP_TK_DRIVER_PATH, dpath, strlen(dpath));
    uint32_t version = RP_TRACE_VERSION, hlen = (uint32_t)(p + 1 - (h + RP_TRACE_PREAMBLE));
    memcpy(h, RP_TRACE_MAGIC, RP_TRACE_MAGIC_LEN);
    for (int i = 0; i < 4; i++) {
        h[8 + i] = (unsigned char)(version >> (8 * i));
        h[12 + i] = (unsigned char)(hlen >> (8 * i));
    }
    unsigned sum = 0; /* the header's check byte, over everything before it */
    for (unsigned char *q = h; q < p; q++)
        sum += *q;
    *p++ = (unsigned char)sum;
    W.len = (size_t)(p - h);
    return true;
}

bool rp__trace_setup(struct rp__driver *core, const struct rp__driver *real)
{
    const char *pattern = rp__option(RP_OPTION_TRACE).path;
    char path[PATH_MAX];
    if (!rp__stats_path(pattern, path, sizeof path)) {
        rp__warn("REPRISE_TRACE=%s: the expanded path is too long; not recording", pattern);
        return false;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        rp__warn("cannot create the trace %s: %m; not recording", path);
        return false;
    }
    /* Another process of this command may be writing the same file (a child
     * that exec'd another CUDA program, with no %p in the name): its trace
     * is left alone. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rp__warn("the trace %s is being written by another process (use %%p in REPRISE_TRACE); "
                 "not recording",
                 path);
        close(fd);
        return false;
    }
    size_t cap = 1u << 20;
    if (ftruncate(fd, 0) != 0 || posix_fallocate(fd, 0, (off_t)cap) != 0) {
        if (ftruncate(fd, (off_t)cap) != 0) {
            rp__warn("cannot size the trace %s: %m; not recording", path);
            close(fd);
            return false;
        }
    }
    void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        rp__warn("cannot map the trace %s: %m; not recording", path);
        close(fd);
        return false;
    }
    W.fd = fd;
    W.map = m;
    W.cap = cap;
    W.real = real;
    W.data = rp__option(RP_OPTION_TRACE_DATA).b;
    W.stream_priority = (CUresult (CUDAAPI *)(CUstream, int *))sym("cuStreamGetPriority");
    W.ctx_device = (CUresult (CUDAAPI *)(CUdevice *))sym("cuCtxGetDevice");
    W.ctx_device_v2 = (CUresult (CUDAAPI *)(CUdevice *, CUcontext))sym("cuCtxGetDevice_v2");
    W.addr_range = (CUresult (CUDAAPI *)(CUdeviceptr *, size_t *, CUdeviceptr))sym("cuMemGetAddressRange_v2");
    W.driver_version = (CUresult (CUDAAPI *)(int *))sym("cuDriverGetVersion");
    W.device_count = (CUresult (CUDAAPI *)(int *))sym("cuDeviceGetCount");
    W.device_get = (CUresult (CUDAAPI *)(CUdevice *, int))sym("cuDeviceGet");
    W.device_name = (CUresult (CUDAAPI *)(char *, int, CUdevice))sym("cuDeviceGetName");
    W.device_attr = (CUresult (CUDAAPI *)(int *, CUdevice_attribute, CUdevice))sym("cuDeviceGetAttribute");
    W.device_mem = (CUresult (CUDAAPI *)(size_t *, CUdevice))sym("cuDeviceTotalMem_v2");
    W.func_module = (CUresult (CUDAAPI *)(CUmodule *, CUfunction))sym("cuFuncGetModule");
    W.primary_state = (CUresult (CUDAAPI *)(CUdevice, unsigned int *, int *))sym("cuDevicePrimaryCtxGetState");
    W.open = true;
    if (!write_header()) {
        munmap(W.map, W.cap);
        close(fd);
        W.open = false;
        return false;
    }
    if (pthread_key_create(&W.exit_key, thread_exit) != 0) {
        rp__warn("trace: no thread key; thread exits are not recorded");
    }
    calibrate();
    W.t0 = rp__tr_ticks();
    W.last_seq = (uint64_t)-1; /* the first call is number 0 */
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
}

void rp__trace_close(void)
{
    if (!atomic_load(&rp__tr_live) && !W.open)
        return;
    uint64_t t = rp__tr_ticks();
    lock_writer();
    atomic_store(&rp__tr_live, false);
    if (W.open) {
        unsigned char *p = rec_begin(40);
        if (p) {
            p = rp_tv_put(p, W.records + 1);
            p = rp_tv_put(p, W.calls);
            p = rp_tv_put(p, ticks_ns(t - W.t0));
            rec_end(RP_TR_END, p);
        }
        W.open = false;
    }
    if (W.map) {
        munmap(W.map, W.cap);
        W.map = NULL;
        if (ftruncate(W.fd, (off_t)W.len) != 0)
            rp__warn("trace: cannot cut the file to its length: %m");
        close(W.fd);
        W.fd = -1;
    }
    unlock_writer();
}
