/* digest.c - the oracle: a digest of everything the driver executed, so that
 * two runs that should have done the same work (a trace replayed without and
 * with the shim, say) can be compared by one value.
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
 * README.md ("The digest"). */
#include "internal.h"

#include <stdatomic.h>
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
