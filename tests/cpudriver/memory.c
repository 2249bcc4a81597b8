/* memory.c - device and pinned host memory. Device pointers are host
 * addresses (256-byte aligned) recorded in a range table, so every copy, set
 * and launch can check that a device range lies inside one live allocation,
 * and cuPointerGetAttribute can tell device, pinned and pageable apart. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CC_TOTAL_MEM (80ULL << 30)
#define CC_ALIGN 256

static cc_alloc *tab;   /* sorted by base; entries move on insert/remove */
static size_t ntab, captab;
static unsigned long long in_use;

static size_t lower(uintptr_t p) /* first entry with base > p */
{
    size_t lo = 0, hi = ntab;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tab[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

cc_alloc *cc__mem_find(uintptr_t p)
{
    size_t i = lower(p);
    if (!i) return NULL;
    cc_alloc *a = &tab[i - 1];
    return p < a->base + a->size ? a : NULL;
}

CUresult cc__mem_add(uintptr_t base, size_t size, enum cc_mem_kind k, cc_ctx *ctx,
                     bool mapped32, cc_alloc **out)
{
    return cc__mem_add_sized(base, size, size, k, ctx, mapped32, out);
}

CUresult cc__mem_add_sized(uintptr_t base, size_t size, size_t mapped, enum cc_mem_kind k, cc_ctx *ctx,
                           bool mapped32, cc_alloc **out)
{
    if (ntab == captab) {
        size_t nc = captab ? captab * 2 : 64;
        cc_alloc *nt = realloc(tab, nc * sizeof *nt);
        if (!nt) return CUDA_ERROR_OUT_OF_MEMORY;
        tab = nt;
        captab = nc;
    }
    size_t i = lower(base);
    memmove(&tab[i + 1], &tab[i], (ntab - i) * sizeof *tab);
    tab[i] = (cc_alloc){.base = base, .size = size, .mapped = mapped, .kind = k, .ctx = ctx,
                        .live = k != CC_M_GRAPH, .mapped32 = mapped32};
    ntab++;
    in_use += mapped;
    cc__fid_alloc(&tab[i]); /* its number, when the calling entry allocates for the program */
    if (out) *out = &tab[i];
    return CUDA_SUCCESS;
}

void cc__mem_release(uintptr_t base)
{
    cc_alloc *a = cc__mem_find(base);
    if (!a || a->base != base) return;
    if (a->registered) { /* the program's own memory: only the entry goes */ }
    else if (a->mapped32) munmap((void *)a->base, a->mapped);
    else free((void *)a->base);
    in_use -= a->mapped;
    size_t i = (size_t)(a - tab);
    memmove(&tab[i], &tab[i + 1], (ntab - i - 1) * sizeof *tab);
    ntab--;
}

void cc__mem_release_ctx(cc_ctx *c)
{
    for (size_t i = ntab; i-- > 0;)
        if (tab[i].ctx == c && tab[i].kind != CC_M_GRAPH) cc__mem_release(tab[i].base);
}

CUresult cc__mem_check_dev(CUdeviceptr p, size_t n)
{
    cc_alloc *a = cc__mem_find((uintptr_t)p);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    if (a->kind == CC_M_HOST || (a->kind == CC_M_DEVICE && a->freeing))
        return CUDA_ERROR_INVALID_VALUE;
    if (!cc__ctx_ok(a->ctx)) return CUDA_ERROR_INVALID_VALUE;
    if (n > a->base + a->size - (uintptr_t)p) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

bool cc__mem_is_pinned(const void *p, size_t n)
{
    cc_alloc *a = cc__mem_find((uintptr_t)p);
    return a && a->kind == CC_M_HOST && n <= a->base + a->size - (uintptr_t)p;
}

CUresult cc__mem_check_dev_or_pinned(CUdeviceptr p, size_t n)
{
    if (cc__mem_is_pinned((const void *)(uintptr_t)p, n)) return CUDA_SUCCESS;
    return cc__mem_check_dev(p, n);
}

/* True when [p, p+n) overlaps any entry of the table (n > 0). */
static cc_alloc *overlapping(uintptr_t p, size_t n)
{
    size_t i = lower(p); /* tab[i-1] may contain p; tab[i] starts after p */
    if (i && tab[i - 1].base + tab[i - 1].size > p) return &tab[i - 1];
    if (i < ntab && tab[i].base < p + n) return &tab[i];
    return NULL;
}

/* Allocates size bytes of device memory in the current context. The v1 ABI
 * gets memory below 4 GiB so its 32-bit pointers hold it. */
static CUresult mem_alloc(uintptr_t *out, size_t size, bool v1)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!out || size == 0) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) r = cc__capture_unsafe_call();
    size_t rounded = (size + CC_ALIGN - 1) / CC_ALIGN * CC_ALIGN;
    if (!r && (rounded < size || in_use + rounded > CC_TOTAL_MEM)) r = CUDA_ERROR_OUT_OF_MEMORY;
    void *p = NULL;
    if (!r) {
        if (v1) {
            p = mmap(NULL, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
            if (p == MAP_FAILED) p = NULL;
        } else {
            p = aligned_alloc(CC_ALIGN, rounded);
            /* Device memory starts as garbage, the same garbage every run
             * (as shared memory does): a replay that reads memory nothing
             * wrote gives the same digest each time. */
            if (p) memset(p, 0xA5, rounded);
        }
        if (!p) r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!r) {
        r = cc__mem_add_sized((uintptr_t)p, size, rounded, CC_M_DEVICE, c, v1, NULL);
        if (r) {
            if (v1) munmap(p, rounded);
            else free(p);
        } else {
            *out = (uintptr_t)p;
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    CC_ENTER(cuMemAlloc);
    uintptr_t p = 0;
    CUresult r = mem_alloc(dptr ? &p : NULL, bytesize, true);
    if (!r) *dptr = (CUdeviceptr_v1)p;
    return r;
}

CC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    CC_ENTER(cuMemAlloc_v2);
    uintptr_t p = 0;
    CUresult r = mem_alloc(dptr ? &p : NULL, bytesize, false);
    if (!r) *dptr = (CUdeviceptr)p;
    return r;
}

/* Frees device memory after the device has drained (as the real cuMemFree
 * does). INVALID_VALUE for anything but the base of a live allocation. */
static CUresult mem_free(uintptr_t p)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!p) return CUDA_SUCCESS;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) r = cc__capture_unsafe_call();
    cc_alloc *a = r ? NULL : cc__mem_find(p);
    if (!r && (!a || a->base != p || a->kind == CC_M_HOST || a->freeing)) r = CUDA_ERROR_INVALID_VALUE;
    if (!r && a->kind == CC_M_GRAPH && !a->live) r = CUDA_ERROR_INVALID_VALUE;
    if (!r) {
        cc__device_drain();
        a = cc__mem_find(p); /* the table may have moved while we waited */
        if (!a) r = CUDA_ERROR_INVALID_VALUE;
        else cc__fid_free(p);
        if (a && a->kind == CC_M_GRAPH) a->live = false;
        else if (a) cc__mem_release(p);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
    CC_ENTER(cuMemFree);
    return mem_free(dptr);
}

CC_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    CC_ENTER(cuMemFree_v2);
    return mem_free((uintptr_t)dptr);
}

/* Stream-ordered allocation. Outside capture the memory exists from the
 * call on; in capture it becomes a MEM_ALLOC node whose address is reserved
 * for the graph and is live only between a launch and its free. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream hs, bool pt)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!dptr || size == 0) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(hs, pt, &s);
    if (!r && !s->cap) r = cc__legacy_use(s);
    if (!r && s->cap && s->cap->invalid) r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (r) {
        cc__unlock();
        return r;
    }
    size_t rounded = (size + CC_ALIGN - 1) / CC_ALIGN * CC_ALIGN;
    void *p = rounded >= size && in_use + rounded <= CC_TOTAL_MEM ? aligned_alloc(CC_ALIGN, rounded) : NULL;
    if (p) memset(p, 0xA5, rounded); /* reproducible garbage, as in mem_alloc */
    if (!p) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (!r) r = cc__mem_add_sized((uintptr_t)p, size, rounded, s->cap ? CC_M_GRAPH : CC_M_DEVICE, s->ctx, false, NULL);
    else p = NULL;
    if (r) {
        free(p);
    } else if (s->cap) {
        cc_work w = {.kind = CC_W_MEM_ALLOC, .ctx = s->ctx};
        w.u.a.p = (CUdeviceptr)(uintptr_t)p;
        w.u.a.n = size;
        bool cap;
        r = cc__capture_add(s, &w, &cap, NULL);
        if (r) cc__mem_release((uintptr_t)p);
    }
    if (!r) *dptr = (CUdeviceptr)(uintptr_t)p;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    CC_ENTER(cuMemAllocAsync);
    return alloc_async(dptr, bytesize, hStream, false);
}

CC_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    CC_ENTER(cuMemAllocAsync_ptsz);
    return alloc_async(dptr, bytesize, hStream, true);
}

/* Stream-ordered free. In capture only graph allocations may be freed (a
 * MEM_FREE node); outside, the memory is unusable from the call on and
 * released when the op runs. */
static CUresult free_async(CUdeviceptr p, CUstream hs, bool pt)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(hs, pt, &s);
    cc_alloc *a = r ? NULL : cc__mem_find((uintptr_t)p);
    if (!r && (!a || a->base != (uintptr_t)p || a->kind == CC_M_HOST || a->freeing))
        r = CUDA_ERROR_INVALID_VALUE;
    if (!r && s->cap) {
        if (a->kind != CC_M_GRAPH) {
            r = CUDA_ERROR_INVALID_VALUE;
        } else {
            cc_work w = {.kind = CC_W_MEM_FREE, .ctx = s->ctx};
            w.u.a.p = p;
            bool cap;
            r = cc__capture_add(s, &w, &cap, NULL);
        }
    } else if (!r) {
        if (a->kind == CC_M_GRAPH && !a->live) r = CUDA_ERROR_INVALID_VALUE;
        if (!r) r = cc__legacy_use(s);
        if (!r) {
            cc_work w = {.kind = a->kind == CC_M_GRAPH ? CC_W_NOP : CC_W_MEM_FREE, .ctx = s->ctx};
            w.u.a.p = p;
            if (a->kind == CC_M_GRAPH) a->live = false;
            else a->freeing = true;
            r = cc__submit(s, &w, NULL, 0, NULL);
        }
    }
    if (!r) cc__fid_free((uintptr_t)p);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    CC_ENTER(cuMemFreeAsync);
    return free_async(dptr, hStream, false);
}

CC_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    CC_ENTER(cuMemFreeAsync_ptsz);
    return free_async(dptr, hStream, true);
}

static CUresult get_info(size_t *fr, size_t *total)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!fr || !total) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) {
        *total = (size_t)CC_TOTAL_MEM;
        *fr = (size_t)(CC_TOTAL_MEM - in_use);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemGetInfo(unsigned int *free_, unsigned int *total)
{
    CC_ENTER(cuMemGetInfo);
    size_t f, t;
    CUresult r = get_info(free_ ? &f : NULL, total ? &t : NULL);
    if (!r) {
        *free_ = f > 0xffffffffu ? 0xffffffffu : (unsigned)f;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned)t;
    }
    return r;
}

CC_EXPORT CUresult cuMemGetInfo_v2(size_t *free_, size_t *total)
{
    CC_ENTER(cuMemGetInfo_v2);
    return get_info(free_, total);
}

/* Page-locked host memory: tracked so copies know it is pinned. */
static CUresult host_alloc(void **pp, size_t size, unsigned flags)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!pp || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) r = cc__capture_unsafe_call();
    size_t rounded = (size + 4095) / 4096 * 4096;
    void *p = NULL;
    if (!r && (rounded < size || !(p = aligned_alloc(4096, rounded)))) r = CUDA_ERROR_OUT_OF_MEMORY;
    if (!r) {
        cc_alloc *a;
        r = cc__mem_add_sized((uintptr_t)p, size, rounded, CC_M_HOST, c, false, &a);
        if (r) free(p);
        else {
            a->flags = flags;
            *pp = p;
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    CC_ENTER(cuMemHostAlloc);
    return host_alloc(pp, bytesize, Flags);
}

CC_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
    CC_ENTER(cuMemAllocHost);
    return host_alloc(pp, bytesize, 0);
}

CC_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    CC_ENTER(cuMemAllocHost_v2);
    return host_alloc(pp, bytesize, 0);
}

CC_EXPORT CUresult cuMemFreeHost(void *p)
{
    CC_ENTER(cuMemFreeHost);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    r = cc__capture_unsafe_call();
    cc_alloc *a = r ? NULL : cc__mem_find((uintptr_t)p);
    if (!r && (!a || a->base != (uintptr_t)p || a->kind != CC_M_HOST || a->registered))
        r = CUDA_ERROR_INVALID_VALUE;
    if (!r) {
        /* Pending async copies may still read or write it. */
        cc__device_drain();
        cc__fid_free((uintptr_t)p);
        cc__mem_release((uintptr_t)p);
    }
    cc__unlock();
    return r;
}

/* Registers the program's memory [p, p+size) as pinned: copies then treat
 * it as page-locked (async copies read and write it when they run) and
 * cuPointerGetAttribute says HOST. v1 (the 4.0 ABI) also demands what the
 * 4.0 documentation did: p and size aligned to the 4 KiB page. A range that
 * overlaps registered or driver-allocated host memory:
 * HOST_MEMORY_ALREADY_REGISTERED; one that overlaps device memory:
 * INVALID_VALUE. READ_ONLY needs READ_ONLY_HOST_REGISTER_SUPPORTED (0 here)
 * and IOMEMORY needs I/O memory: both NOT_SUPPORTED. Registration and
 * unregistration follow the capture-mode rule of allocations (strict:
 * unverified on a GPU). Nothing changes on failure. */
static CUresult host_register(void *p, size_t size, unsigned flags, bool v1)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!p || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                            CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY))
        return CUDA_ERROR_INVALID_VALUE;
    if (v1 && (((uintptr_t)p % 4096) || (size % 4096))) return CUDA_ERROR_INVALID_VALUE;
    if ((uintptr_t)p + size < (uintptr_t)p) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r && (flags & (CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)))
        r = CUDA_ERROR_NOT_SUPPORTED;
    if (!r) r = cc__capture_unsafe_call();
    if (!r) {
        cc_alloc *o = overlapping((uintptr_t)p, size);
        if (o) r = o->kind == CC_M_HOST ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : CUDA_ERROR_INVALID_VALUE;
    }
    if (!r) {
        cc_alloc *a;
        r = cc__mem_add_sized((uintptr_t)p, size, 0, CC_M_HOST, c, false, &a);
        if (!r) {
            a->registered = true;
            a->flags = flags;
        }
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    CC_ENTER(cuMemHostRegister);
    return host_register(p, bytesize, Flags, true);
}

CC_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    CC_ENTER(cuMemHostRegister_v2);
    return host_register(p, bytesize, Flags, false);
}

/* Unregisters the range registered at exactly p, after the device has
 * drained (queued async copies may still read or write it; as cuMemFreeHost).
 * Anything else - an interior pointer, driver-allocated pinned memory,
 * pageable memory - is HOST_MEMORY_NOT_REGISTERED. */
CC_EXPORT CUresult cuMemHostUnregister(void *p)
{
    CC_ENTER(cuMemHostUnregister);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    if (!r) r = cc__capture_unsafe_call();
    cc_alloc *a = r ? NULL : cc__mem_find((uintptr_t)p);
    if (!r && (!a || !a->registered || a->base != (uintptr_t)p)) r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    if (!r) {
        cc__device_drain();
        cc__fid_free((uintptr_t)p);
        cc__mem_release((uintptr_t)p);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    CC_ENTER(cuPointerGetAttribute);
    CUresult r = cc__check_init();
    if (r) return r;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_alloc *a = cc__mem_find((uintptr_t)ptr);
    if (!a || (a->kind == CC_M_DEVICE && a->freeing)) {
        r = CUDA_ERROR_INVALID_VALUE; /* pageable host memory, or nothing */
    } else {
        switch (attribute) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned int *)data = a->kind == CC_M_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
            break;
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            *(CUcontext *)data = (CUcontext)a->ctx;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
            *(CUdeviceptr *)data = ptr;
            break;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
            if (a->kind == CC_M_HOST) *(void **)data = (void *)(uintptr_t)ptr;
            else r = CUDA_ERROR_INVALID_VALUE;
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED:
            *(int *)data = 0;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *(int *)data = a->ctx ? a->ctx->dev : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data = (CUdeviceptr)a->base;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *)data = a->size;
            break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *)data = (unsigned long long)a->base;
            break;
        default:
            r = CUDA_ERROR_INVALID_VALUE;
            break;
        }
    }
    cc__unlock();
    return r;
}

/* The device address of mapped pinned memory. Strict: only memory allocated
 * with CU_MEMHOSTALLOC_DEVICEMAP, Flags must be 0 (the documented contract),
 * and a pointer inside the allocation maps to the same offset. One device
 * that can use host pointers: the address is the host address, as the
 * documentation says it is when every visible device can. */
static CUresult host_get_device_pointer(CUdeviceptr *pd, void *p, unsigned int flags)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (!pd || !p || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_ctx *c;
    r = cc__ctx_current(&c);
    cc_alloc *a = r ? NULL : cc__mem_find((uintptr_t)p);
    if (!r && (!a || a->kind != CC_M_HOST || !(a->flags & CU_MEMHOSTALLOC_DEVICEMAP)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (!r) *pd = (CUdeviceptr)(uintptr_t)p;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuMemHostGetDevicePointer(unsigned int *pd, void *p, unsigned int Flags)
{
    CC_ENTER(cuMemHostGetDevicePointer);
    CUdeviceptr d = 0;
    CUresult r = host_get_device_pointer(&d, p, Flags);
    if (!r && d > 0xffffffffu) r = CUDA_ERROR_INVALID_VALUE; /* v1: 32-bit pointers only */
    if (!r) *pd = (unsigned int)d;
    return r;
}

CC_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pd, void *p, unsigned int Flags)
{
    CC_ENTER(cuMemHostGetDevicePointer_v2);
    return host_get_device_pointer(pd, p, Flags);
}

/* The device allocation holding dptr: its base and requested size (either
 * out-parameter may be NULL, as the reference allows). Pinned host memory
 * and addresses in no live device allocation (freed, freeing, a graph
 * allocation outside its launch) give CUDA_ERROR_NOT_FOUND, the reference's
 * code for an address it does not know (the stricter reading: whether the
 * real driver answers for pinned host memory is unverified); nothing is
 * written then. The trace recorder asks this once for an address it has not
 * seen allocated. */
CC_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    CC_ENTER(cuMemGetAddressRange_v2);
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_alloc *a = cc__mem_find((uintptr_t)dptr);
    bool usable = a && !a->freeing &&
                  (a->kind == CC_M_DEVICE || (a->kind == CC_M_GRAPH && a->live));
    if (!usable) {
        r = CUDA_ERROR_NOT_FOUND;
    } else {
        if (pbase) *pbase = (CUdeviceptr)a->base;
        if (psize) *psize = a->size;
    }
    cc__unlock();
    return r;
}
