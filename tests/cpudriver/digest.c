/* digest.c - the oracles: a digest of everything the driver executed, so that
 * two runs that should have done the same work (a trace replayed without and
 * with the shim, say) can be compared by one value; and the fidelity digest
 * of what reached the driver, call by call (below), so that a program's run
 * and the replay of its trace can be.
 *
 * Every kernel, copy and memset that runs, eagerly or as a graph node, adds a
 * hash of what it did to two 64-bit sums (two independent hashes, so that a
 * collision needs both to agree): a kernel its name, grid, block, dynamic
 * shared memory and parameter bytes; a copy its extent and the bytes it moved
 * (read back from the destination once it ran); a memset its element size,
 * value, width and height. The sums are a commutative combination, so the
 * digest does not depend on the order in which independent work ran (graph
 * nodes in any topological order, streams interleaved), which differs with
 * and without the shim; an order that changes data does change it, through
 * the bytes the later copies move. What it detects and what it cannot is in
 * README.md ("The digest").
 *
 * The fidelity digest (README.md, "The fidelity digest") hashes the calls of
 * the families a trace records in full (launches, 1-D copies, memsets,
 * allocations and frees) as they reach the driver, each thread's in its
 * order into a chain of its own, the chains summed: the entry point, the
 * kernel's name, geometry, dynamic shared memory and parameter bytes with
 * every word that points into an allocation as that allocation's number
 * and the offset, copies' and memsets' addresses (allocation and offset),
 * sizes and values, and with CPUCUDA_FIDELITY_DATA=1 the bytes of
 * host-to-device copies from pageable memory. An allocation's number is
 * its thread's chain at the allocation with its size: the same in two
 * runs that made the same calls, whatever the order of other threads. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic unsigned long long lane[2];
static _Atomic unsigned long long counts[4]; /* ops, kernels, copies, memsets */
static _Atomic unsigned long long moved;     /* bytes copied */

static const uint64_t seeds[2] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
static const uint64_t mults[2] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full};

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t fin(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

typedef struct { uint64_t h[2]; } dg;

static void dg_word(dg *d, uint64_t w)
{
    for (int i = 0; i < 2; i++) {
        d->h[i] ^= w;
        d->h[i] *= mults[i];
        d->h[i] ^= d->h[i] >> 29;
    }
}

/* Bytes, 8 at a time; the tail padded with its length so that "ab" and
 * "ab\0" differ. */
static void dg_bytes(dg *d, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        dg_word(d, w);
        b += 8;
        n -= 8;
    }
    uint64_t w = (uint64_t)n << 56;
    if (n)
        memcpy(&w, b, n); /* b may be NULL with n 0: a kernel with no parameters */
    dg_word(d, w);
}

static void dg_add(const dg *d, int kind)
{
    for (int i = 0; i < 2; i++) atomic_fetch_add_explicit(&lane[i], fin(d->h[i]), memory_order_relaxed);
    atomic_fetch_add_explicit(&counts[0], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&counts[kind], 1, memory_order_relaxed);
}

void cc__digest_work(const cc_work *w)
{
    dg d = {{seeds[0], seeds[1]}};
    switch (w->kind) {
    case CC_W_KERNEL: {
        const char *name = w->u.k.f->k->name;
        dg_word(&d, 'K');
        dg_bytes(&d, name, strlen(name));
        dg_word(&d, (uint64_t)w->u.k.grid.x << 32 | w->u.k.grid.y);
        dg_word(&d, (uint64_t)w->u.k.grid.z << 32 | w->u.k.block.x);
        dg_word(&d, (uint64_t)w->u.k.block.y << 32 | w->u.k.block.z);
        dg_word(&d, w->u.k.shmem);
        dg_bytes(&d, w->u.k.args, w->u.k.argsz);
        dg_add(&d, 1);
        break;
    }
    case CC_W_COPY: {
        size_t n = w->u.c.n, h = w->u.c.h > 1 ? w->u.c.h : 1;
        dg_word(&d, 'C');
        dg_word(&d, n);
        dg_word(&d, h);
        for (size_t row = 0; row < h && n; row++)
            dg_bytes(&d, (const unsigned char *)w->u.c.dst + row * w->u.c.dpitch, n);
        atomic_fetch_add_explicit(&moved, (unsigned long long)(n * h), memory_order_relaxed);
        dg_add(&d, 2);
        break;
    }
    case CC_W_MEMSET:
        dg_word(&d, 'M');
        dg_word(&d, (uint64_t)w->u.m.esz << 32 | w->u.m.value);
        dg_word(&d, w->u.m.w);
        dg_word(&d, w->u.m.h);
        dg_add(&d, 3);
        break;
    default:
        break; /* host functions, events, waits, memory nodes: not in the digest */
    }
}

void cc__digest_json(FILE *f)
{
    fprintf(f, "\"digest\":{\"value\":\"%016llx%016llx\",\"ops\":%llu,\"kernels\":%llu,"
               "\"copies\":%llu,\"memsets\":%llu,\"copy_bytes\":%llu}",
            atomic_load(&lane[0]), atomic_load(&lane[1]), atomic_load(&counts[0]),
            atomic_load(&counts[1]), atomic_load(&counts[2]), atomic_load(&counts[3]),
            atomic_load(&moved));
}

void cpucuda_digest(unsigned long long value[2], unsigned long long *ops) CC_EXPORT;
void cpucuda_digest(unsigned long long value[2], unsigned long long *ops)
{
    if (value) {
        value[0] = atomic_load(&lane[0]);
        value[1] = atomic_load(&lane[1]);
    }
    if (ops) *ops = atomic_load(&counts[0]);
}

void cpucuda_digest_reset(void) CC_EXPORT;
void cpucuda_digest_reset(void)
{
    for (int i = 0; i < 2; i++) atomic_store(&lane[i], 0);
    for (int i = 0; i < 4; i++) atomic_store(&counts[i], 0);
    atomic_store(&moved, 0);
}

/* ---- the fidelity digest ----------------------------------------------------------- */

__thread enum cc_entry cc__tl_entry;
static __thread uint64_t tl_chain[2];
static __thread bool tl_own;
static _Atomic unsigned long long flane[2];
static _Atomic unsigned long long fcalls;
static int with_data = -1; /* CPUCUDA_FIDELITY_DATA, read once */

static bool fid_on(void)
{
    return !tl_own && cc__tl_entry != 0;
}

static void fid_begin(dg *d, char kind)
{
    const char *e = cc__entry_names[cc__tl_entry];
    d->h[0] = seeds[0], d->h[1] = seeds[1];
    dg_word(d, (uint64_t)(unsigned char)kind);
    dg_bytes(d, e, strlen(e));
}

/* Address p as the fidelity digest names it: the allocation it lies in
 * (its number) and the offset; memory of no allocation (pageable host
 * memory, a raw value) as a mark alone, since its address differs between
 * processes. Lock held. */
static void fid_addr(dg *d, uintptr_t p)
{
    cc_alloc *a = cc__mem_find(p);
    if (a && a->fid) {
        dg_word(d, a->fid);
        dg_word(d, p - a->base);
    } else {
        dg_word(d, a ? 'A' : 'H');
    }
}

void cc__fid_add(const cc_fid *f)
{
    if (!f->set)
        return;
    for (int i = 0; i < 2; i++) {
        uint64_t old = tl_chain[i], neu = fin((old ^ fin(f->h[i])) * mults[i]);
        tl_chain[i] = neu;
        atomic_fetch_add_explicit(&flane[i], neu - old, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&fcalls, 1, memory_order_relaxed);
}

/* Where a player put the recording process's allocations
 * (cpucuda_fidelity_alias), by their address there; ranges sorted, none
 * overlapping. Under the lock. */
static struct alias { uint64_t live, size, base; } *aliases;
static size_t naliases, capaliases;

static size_t alias_upper(uint64_t a)
{
    size_t lo = 0, hi = naliases;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (aliases[mid].live <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The allocation pointer word v of a kernel's parameters points into: in a
 * player's process (aliases given), through the recording process's
 * addresses, which parameters hold verbatim. Lock held. */
static cc_alloc *param_alloc(uint64_t *v)
{
    if (!naliases)
        return cc__mem_find((uintptr_t)*v);
    size_t i = alias_upper(*v);
    if (!i || *v - aliases[i - 1].live >= aliases[i - 1].size)
        return NULL;
    *v = aliases[i - 1].base + (*v - aliases[i - 1].live);
    return cc__mem_find((uintptr_t)*v);
}

void cpucuda_fidelity_alias(unsigned long long live, unsigned long long size,
                            unsigned long long base) CC_EXPORT;
void cpucuda_fidelity_alias(unsigned long long live, unsigned long long size,
                            unsigned long long base)
{
    if (!size || live + size < live)
        return;
    cc__lock();
    /* Older ranges it overlaps were freed there. */
    for (;;) {
        size_t i = alias_upper(live + size - 1);
        if (!i || aliases[i - 1].live + aliases[i - 1].size <= live)
            break;
        memmove(&aliases[i - 1], &aliases[i], (naliases - i) * sizeof *aliases);
        naliases--;
    }
    if (naliases == capaliases) {
        size_t nc = capaliases ? capaliases * 2 : 64;
        struct alias *t = realloc(aliases, nc * sizeof *t);
        if (!t) {
            cc__unlock();
            return;
        }
        aliases = t;
        capaliases = nc;
    }
    size_t i = alias_upper(live);
    memmove(&aliases[i + 1], &aliases[i], (naliases - i) * sizeof *aliases);
    aliases[i] = (struct alias){live, size, base};
    naliases++;
    cc__unlock();
}

void cc__fid_launch(const cc_work *w, cc_fid *f)
{
    f->set = false;
    if (!fid_on() || w->kind != CC_W_KERNEL)
        return;
    dg d;
    fid_begin(&d, 'L');
    const cpuk_kernel *k = w->u.k.f->k;
    dg_bytes(&d, k->name, strlen(k->name));
    dg_word(&d, (uint64_t)w->u.k.grid.x << 32 | w->u.k.grid.y);
    dg_word(&d, (uint64_t)w->u.k.grid.z << 32 | w->u.k.block.x);
    dg_word(&d, (uint64_t)w->u.k.block.y << 32 | w->u.k.block.z);
    dg_word(&d, w->u.k.shmem);
    /* The parameter bytes, each 8-byte word at an 8-aligned offset within a
     * parameter of 8 bytes or more that points into an allocation hashed
     * as the allocation and the offset. */
    const unsigned char *args = w->u.k.args;
    size_t n = w->u.k.argsz, o = 0;
    while (o < n) {
        bool word = false;
        for (unsigned i = 0; i < k->nparams && !word; i++) {
            const cpuk_param *p = &k->params[i];
            word = p->size >= 8 && o % 8 == 0 && o >= p->offset && o + 8 <= p->offset + p->size;
        }
        uint64_t v = 0;
        cc_alloc *a = NULL;
        if (word) {
            memcpy(&v, args + o, 8);
            a = param_alloc(&v);
        }
        if (a) {
            dg_word(&d, 'P');
            fid_addr(&d, (uintptr_t)v);
            o += 8;
        } else {
            dg_word(&d, args[o]);
            o++;
        }
    }
    for (int i = 0; i < 2; i++) f->h[i] = d.h[i];
    f->set = true;
}

void cc__fid_copy(uintptr_t dst, uintptr_t src, size_t n, bool h2d)
{
    if (!fid_on())
        return;
    if (with_data < 0) {
        const char *e = getenv("CPUCUDA_FIDELITY_DATA");
        with_data = e && !strcmp(e, "1");
    }
    cc__lock();
    dg d;
    fid_begin(&d, 'C');
    fid_addr(&d, dst);
    fid_addr(&d, src);
    dg_word(&d, n);
    /* The bytes a host-to-device copy read from pageable memory (the
     * program's, or the recorded ones the player put there). */
    if (with_data && h2d && n && !cc__mem_find(src))
        dg_bytes(&d, (const void *)src, n);
    cc_fid f = {{d.h[0], d.h[1]}, true};
    cc__fid_add(&f);
    cc__unlock();
}

void cc__fid_memset(uintptr_t dst, size_t pitch, unsigned value, unsigned esz, size_t w, size_t h)
{
    if (!fid_on())
        return;
    dg d;
    fid_begin(&d, 'M');
    fid_addr(&d, dst);
    dg_word(&d, (uint64_t)esz << 32 | value);
    dg_word(&d, w);
    dg_word(&d, h);
    dg_word(&d, h > 1 ? pitch : 0);
    cc_fid f = {{d.h[0], d.h[1]}, true};
    cc__fid_add(&f);
}

/* The entries a trace replays an allocation of (not pools, not graphs). */
static bool alloc_entry(enum cc_entry e)
{
    switch (e) {
    case CC_E_cuMemAlloc: case CC_E_cuMemAlloc_v2: case CC_E_cuMemAllocHost:
    case CC_E_cuMemAllocHost_v2: case CC_E_cuMemHostAlloc: case CC_E_cuMemAllocAsync:
    case CC_E_cuMemAllocAsync_ptsz: case CC_E_cuMemHostRegister: case CC_E_cuMemHostRegister_v2:
        return true;
    default:
        return false;
    }
}

void cc__fid_alloc(cc_alloc *a)
{
    a->fid = 0;
    if (!fid_on() || !alloc_entry(cc__tl_entry) || a->kind == CC_M_GRAPH)
        return;
    dg d;
    fid_begin(&d, 'A');
    dg_word(&d, a->size);
    /* Its number: this thread's chain and the size (never 0: 0 is none). */
    a->fid = fin(tl_chain[0] ^ fin(d.h[0])) | 1;
    cc_fid f = {{d.h[0], d.h[1]}, true};
    cc__fid_add(&f);
}

void cc__fid_free(uintptr_t p)
{
    if (!fid_on())
        return;
    dg d;
    fid_begin(&d, 'F');
    fid_addr(&d, p);
    cc_fid f = {{d.h[0], d.h[1]}, true};
    cc__fid_add(&f);
}

void cc__fid_json(FILE *f)
{
    fprintf(f, "\"fidelity\":{\"value\":\"%016llx%016llx\",\"calls\":%llu}",
            atomic_load(&flane[0]), atomic_load(&flane[1]), atomic_load(&fcalls));
}

void cpucuda_fidelity_own(int on) CC_EXPORT;
void cpucuda_fidelity_own(int on)
{
    tl_own = on != 0;
}
