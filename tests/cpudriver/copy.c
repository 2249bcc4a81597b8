/* copy.c - copies and memsets in every form. Each becomes one COPY/MEMSET
 * op on a stream (or a node when that stream captures); the forms differ
 * only in which stream they use and how long the host waits, per the
 * driver's "API synchronization behavior". */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum sync_kind { ASYNC, SYNC };

/* The largest pitch a copy or memset accepts (CU_DEVICE_ATTRIBUTE_MAX_PITCH). */
#define CC_MAX_PITCH 2147483647u

/* The bytes a strided footprint spans: (h-1)*pitch + w, or 0 on overflow
 * (callers check w and h are non-zero first). */
static size_t footprint(size_t w, size_t h, size_t pitch)
{
    if (h > 1 && pitch > (SIZE_MAX - w) / (h - 1)) return 0;
    return (h - 1) * pitch + w;
}

/* One copy of h rows of w bytes (h = 1: a plain copy of w bytes; the
 * pitches are then unused). dst_dev/src_dev say which sides are device
 * memory; for SYNC, hs is ignored and the legacy (pt=false) or per-thread
 * stream is used. Device footprints must lie inside one live allocation
 * (INVALID_VALUE). Nothing is queued on failure. */
static CUresult copy_rows(void *dst, bool dst_dev, size_t dpitch, const void *src, bool src_dev,
                          size_t spitch, size_t w, size_t h, CUstream hs, bool pt, enum sync_kind sk)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if (h <= 1) {
        h = 1;
        dpitch = spitch = w;
    }
    size_t dext = w ? footprint(w, h, dpitch) : 0, sext = w ? footprint(w, h, spitch) : 0;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(sk == SYNC ? NULL : hs, pt, &s);
    if (!r && w && (!dext || !sext)) r = CUDA_ERROR_INVALID_VALUE;
    if (!r && w && dst_dev) r = cc__mem_check_dev((CUdeviceptr)(uintptr_t)dst, dext);
    if (!r && w && src_dev) r = cc__mem_check_dev((CUdeviceptr)(uintptr_t)src, sext);
    if (!r && w && ((!dst_dev && !dst) || (!src_dev && !src))) r = CUDA_ERROR_INVALID_VALUE;
    if (r || w == 0) {
        cc__unlock();
        return r;
    }
    bool host_src = !src_dev, host_dst = !dst_dev;
    bool src_pinned = host_src && cc__mem_is_pinned(src, sext);
    bool dst_pinned = host_dst && cc__mem_is_pinned(dst, dext);

    /* A synchronous copy involving the host cannot be captured. */
    if (s->cap && sk == SYNC && (host_src || host_dst)) {
        cc__capture_invalidate(s->cap, "synchronous host copy in a capturing stream");
        cc__unlock();
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    cc_work wk = {.kind = CC_W_COPY, .ctx = s->ctx};
    wk.u.c.dst = dst;
    wk.u.c.src = src;
    wk.u.c.n = w;
    wk.u.c.h = h;
    wk.u.c.dpitch = dpitch;
    wk.u.c.spitch = spitch;
    wk.u.c.dt = dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    wk.u.c.st = src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    /* Pageable source bytes are read at the call (the program may reuse its
     * buffer when we return). Pinned (allocated or registered) ones are not:
     * the copy reads them when it runs, in stream order, as a GPU's DMA does.
     * Not in capture: a captured copy re-reads the host address at every
     * launch, as the real driver's does. */
    if (host_src && !src_pinned && !s->cap) {
        if (w > SIZE_MAX / h || !(wk.u.c.stage = malloc(w * h))) {
            cc__unlock();
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (size_t row = 0; row < h; row++)
            memcpy(wk.u.c.stage + row * w, (const unsigned char *)src + row * spitch, w);
    }
    bool captured;
    unsigned long long seq = 0;
    r = cc__stream_op(s, &wk, &captured, &seq);
    if (!r && !captured) {
        bool wait;
        if (sk == SYNC) wait = host_dst || (host_src && src_pinned);
        else wait = host_dst && !dst_pinned; /* async to pageable memory */
        if (wait) {
            cc__stream_ref(s);
            cc__wait(s, seq);
            cc__stream_unref(s);
        }
    }
    cc__unlock();
    return r;
}

static CUresult copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n, CUstream hs, bool pt,
                     enum sync_kind sk)
{
    CUresult r = copy_rows(dst, dst_dev, n, src, src_dev, n, n, 1, hs, pt, sk);
    if (!r) cc__fid_copy((uintptr_t)dst, (uintptr_t)src, n, dst_dev && !src_dev);
    return r;
}

#define DEV(p) ((void *)(uintptr_t)(p))

/* Unified addressing: a side is device memory when the table says so. */
static bool is_dev(CUdeviceptr p)
{
    cc__lock();
    cc_alloc *a = cc__mem_find((uintptr_t)p);
    bool d = a && a->kind != CC_M_HOST;
    cc__unlock();
    return d;
}

CC_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    CC_ENTER(cuMemcpy);
    return copy(DEV(dst), is_dev(dst), DEV(src), is_dev(src), ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    CC_ENTER(cuMemcpy_ptds);
    return copy(DEV(dst), is_dev(dst), DEV(src), is_dev(src), ByteCount, NULL, true, SYNC);
}

CC_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    CC_ENTER(cuMemcpyAsync);
    return copy(DEV(dst), is_dev(dst), DEV(src), is_dev(src), ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    CC_ENTER(cuMemcpyAsync_ptsz);
    return copy(DEV(dst), is_dev(dst), DEV(src), is_dev(src), ByteCount, hStream, true, ASYNC);
}

/* Host to device. */
CC_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    CC_ENTER(cuMemcpyHtoD);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    CC_ENTER(cuMemcpyHtoD_v2);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    CC_ENTER(cuMemcpyHtoD_v2_ptds);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, NULL, true, SYNC);
}

CC_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,
                                     CUstream hStream)
{
    CC_ENTER(cuMemcpyHtoDAsync);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                        CUstream hStream)
{
    CC_ENTER(cuMemcpyHtoDAsync_v2);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                             CUstream hStream)
{
    CC_ENTER(cuMemcpyHtoDAsync_v2_ptsz);
    return copy(DEV(dstDevice), true, srcHost, false, ByteCount, hStream, true, ASYNC);
}

/* Device to host. */
CC_EXPORT CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    CC_ENTER(cuMemcpyDtoH);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    CC_ENTER(cuMemcpyDtoH_v2);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    CC_ENTER(cuMemcpyDtoH_v2_ptds);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, NULL, true, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                     CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoHAsync);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                        CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoHAsync_v2);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                             CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoHAsync_v2_ptsz);
    return copy(dstHost, false, DEV(srcDevice), true, ByteCount, hStream, true, ASYNC);
}

/* Device to device. */
CC_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    CC_ENTER(cuMemcpyDtoD);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    CC_ENTER(cuMemcpyDtoD_v2);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    CC_ENTER(cuMemcpyDtoD_v2_ptds);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL, true, SYNC);
}

CC_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                     CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoDAsync);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                        CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoDAsync_v2);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                             CUstream hStream)
{
    CC_ENTER(cuMemcpyDtoDAsync_v2_ptsz);
    return copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream, true, ASYNC);
}

/* Peer copies: one device, so the contexts only need to be live. */
static CUresult peer_ctx_ok(CUcontext a, CUcontext b)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    bool ok = cc__ctx_ok((cc_ctx *)a) && cc__ctx_ok((cc_ctx *)b);
    cc__unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CC_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                CUcontext srcContext, size_t ByteCount)
{
    CC_ENTER(cuMemcpyPeer);
    CUresult r = peer_ctx_ok(dstContext, srcContext);
    return r ? r : copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL, false, SYNC);
}

CC_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                     CUcontext srcContext, size_t ByteCount)
{
    CC_ENTER(cuMemcpyPeer_ptds);
    CUresult r = peer_ctx_ok(dstContext, srcContext);
    return r ? r : copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, NULL, true, SYNC);
}

CC_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                     CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    CC_ENTER(cuMemcpyPeerAsync);
    CUresult r = peer_ctx_ok(dstContext, srcContext);
    return r ? r : copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream, false, ASYNC);
}

CC_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                          CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    CC_ENTER(cuMemcpyPeerAsync_ptsz);
    CUresult r = peer_ctx_ok(dstContext, srcContext);
    return r ? r : copy(DEV(dstDevice), true, DEV(srcDevice), true, ByteCount, hStream, true, ASYNC);
}

/* ---- memsets: never block the host (the sync forms are ordered on the
 * legacy or per-thread stream) ---------------------------------------------- */

/* Sets h rows of w elements of esz bytes, rows pitch bytes apart (h = 1: w
 * elements in a row; the pitch is then unused, as documented). dst and a
 * used pitch must be esz-aligned and the pitch at least a row; the
 * footprint must lie inside one live device allocation. */
static CUresult memset_rows(CUdeviceptr dst, size_t pitch, unsigned value, unsigned esz, size_t w, size_t h,
                            CUstream hs, bool pt, enum sync_kind sk)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if ((uintptr_t)dst % esz) return CUDA_ERROR_INVALID_VALUE;
    if (w > SIZE_MAX / esz) return CUDA_ERROR_INVALID_VALUE;
    if (h <= 1) {
        h = 1;
        pitch = w * esz;
    } else if (pitch % esz || pitch < w * esz || pitch > CC_MAX_PITCH) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(sk == SYNC ? NULL : hs, pt, &s);
    if (!r && w) {
        size_t ext = footprint(w * esz, h, pitch);
        r = ext ? cc__mem_check_dev(dst, ext) : CUDA_ERROR_INVALID_VALUE;
    }
    if (!r && w) {
        cc_work wk = {.kind = CC_W_MEMSET, .ctx = s->ctx};
        wk.u.m.dst = dst;
        wk.u.m.value = value;
        wk.u.m.esz = esz;
        wk.u.m.w = w;
        wk.u.m.h = h;
        wk.u.m.pitch = pitch;
        r = cc__stream_op(s, &wk, NULL, NULL);
    }
    if (!r) cc__fid_memset(dst, pitch, value, esz, w, h);
    cc__unlock();
    return r;
}

static CUresult memset_op(CUdeviceptr dst, unsigned value, unsigned esz, size_t n, CUstream hs, bool pt,
                          enum sync_kind sk)
{
    return memset_rows(dst, 0, value, esz, n, 1, hs, pt, sk);
}

#define MEMSETS(bits, T)                                                                   \
    CC_EXPORT CUresult cuMemsetD##bits(CUdeviceptr_v1 d, T v, unsigned int n)              \
    {                                                                                      \
        CC_ENTER(cuMemsetD##bits);                                                         \
        return memset_op(d, v, bits / 8, n, NULL, false, SYNC);                            \
    }                                                                                      \
    CC_EXPORT CUresult cuMemsetD##bits##_v2(CUdeviceptr d, T v, size_t n)                  \
    {                                                                                      \
        CC_ENTER(cuMemsetD##bits##_v2);                                                    \
        return memset_op(d, v, bits / 8, n, NULL, false, SYNC);                            \
    }                                                                                      \
    CC_EXPORT CUresult cuMemsetD##bits##_v2_ptds(CUdeviceptr d, T v, size_t n)             \
    {                                                                                      \
        CC_ENTER(cuMemsetD##bits##_v2_ptds);                                               \
        return memset_op(d, v, bits / 8, n, NULL, true, SYNC);                             \
    }                                                                                      \
    CC_EXPORT CUresult cuMemsetD##bits##Async(CUdeviceptr d, T v, size_t n, CUstream s)    \
    {                                                                                      \
        CC_ENTER(cuMemsetD##bits##Async);                                                  \
        return memset_op(d, v, bits / 8, n, s, false, ASYNC);                              \
    }                                                                                      \
    CC_EXPORT CUresult cuMemsetD##bits##Async_ptsz(CUdeviceptr d, T v, size_t n, CUstream s) \
    {                                                                                      \
        CC_ENTER(cuMemsetD##bits##Async_ptsz);                                             \
        return memset_op(d, v, bits / 8, n, s, true, ASYNC);                               \
    }

MEMSETS(8, unsigned char)
MEMSETS(16, unsigned short)
MEMSETS(32, unsigned int)

#define MEMSETS2D(bits, T)                                                                           \
    CC_EXPORT CUresult cuMemsetD2D##bits(CUdeviceptr_v1 d, unsigned int pitch, T v, unsigned int w,   \
                                         unsigned int h)                                             \
    {                                                                                                \
        CC_ENTER(cuMemsetD2D##bits);                                                                 \
        return memset_rows(d, pitch, v, bits / 8, w, h, NULL, false, SYNC);                          \
    }                                                                                                \
    CC_EXPORT CUresult cuMemsetD2D##bits##_v2(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h)   \
    {                                                                                                \
        CC_ENTER(cuMemsetD2D##bits##_v2);                                                            \
        return memset_rows(d, pitch, v, bits / 8, w, h, NULL, false, SYNC);                          \
    }                                                                                                \
    CC_EXPORT CUresult cuMemsetD2D##bits##_v2_ptds(CUdeviceptr d, size_t pitch, T v, size_t w,        \
                                                   size_t h)                                         \
    {                                                                                                \
        CC_ENTER(cuMemsetD2D##bits##_v2_ptds);                                                       \
        return memset_rows(d, pitch, v, bits / 8, w, h, NULL, true, SYNC);                           \
    }                                                                                                \
    CC_EXPORT CUresult cuMemsetD2D##bits##Async(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, \
                                                CUstream s)                                          \
    {                                                                                                \
        CC_ENTER(cuMemsetD2D##bits##Async);                                                          \
        return memset_rows(d, pitch, v, bits / 8, w, h, s, false, ASYNC);                            \
    }                                                                                                \
    CC_EXPORT CUresult cuMemsetD2D##bits##Async_ptsz(CUdeviceptr d, size_t pitch, T v, size_t w,      \
                                                     size_t h, CUstream s)                           \
    {                                                                                                \
        CC_ENTER(cuMemsetD2D##bits##Async_ptsz);                                                     \
        return memset_rows(d, pitch, v, bits / 8, w, h, s, true, ASYNC);                             \
    }

MEMSETS2D(8, unsigned char)
MEMSETS2D(16, unsigned short)
MEMSETS2D(32, unsigned int)

/* ---- 2-D copies ------------------------------------------------------------ */

/* One side of a CUDA_MEMCPY2D, whichever ABI it came in. */
typedef struct {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray array;
    size_t x, y, pitch;
} side2d;

/* Resolves a side to an address and whether it is device memory. HOST must
 * not name device memory, DEVICE must (checked with the footprint later),
 * UNIFIED goes by the table. Arrays do not exist in this driver, so any
 * array handle is invalid: INVALID_VALUE, as is an unknown memory type. A
 * used pitch (Height > 1) must hold the row at its X offset and not exceed
 * MAX_PITCH. The start address is base + y*pitch + x. */
static CUresult side_resolve(const side2d *sd, size_t w, size_t h, const void **addr, bool *dev)
{
    uintptr_t base;
    switch (sd->type) {
    case CU_MEMORYTYPE_HOST:
        base = (uintptr_t)sd->host;
        *dev = false;
        break;
    case CU_MEMORYTYPE_DEVICE:
        base = (uintptr_t)sd->dev;
        *dev = true;
        break;
    case CU_MEMORYTYPE_UNIFIED: {
        base = (uintptr_t)sd->dev;
        cc__lock();
        cc_alloc *a = cc__mem_find(base);
        *dev = a && a->kind != CC_M_HOST;
        cc__unlock();
        break;
    }
    default: /* CU_MEMORYTYPE_ARRAY and anything unknown */
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (h > 1 && (sd->pitch < sd->x || sd->pitch - sd->x < w || sd->pitch > CC_MAX_PITCH))
        return CUDA_ERROR_INVALID_VALUE;
    if (!*dev) {
        cc__lock();
        cc_alloc *a = cc__mem_find(base);
        bool bad = a && a->kind != CC_M_HOST;
        cc__unlock();
        if (bad) return CUDA_ERROR_INVALID_VALUE;
    }
    if (sd->pitch && sd->y > (SIZE_MAX - sd->x) / sd->pitch) return CUDA_ERROR_INVALID_VALUE;
    *addr = (const void *)(base + sd->y * sd->pitch + sd->x);
    return CUDA_SUCCESS;
}

#define SIDES_FROM(p)                                                                                 \
    side2d src = {(p)->srcMemoryType, (p)->srcHost, (CUdeviceptr)(p)->srcDevice, (p)->srcArray,        \
                  (p)->srcXInBytes, (p)->srcY, (p)->srcPitch};                                        \
    side2d dst = {(p)->dstMemoryType, (p)->dstHost, (CUdeviceptr)(p)->dstDevice, (p)->dstArray,        \
                  (p)->dstXInBytes, (p)->dstY, (p)->dstPitch};                                        \
    size_t w = (p)->WidthInBytes, h = (p)->Height

static CUresult copy2d(const side2d *src, const side2d *dst, size_t w, size_t h, CUstream hs, bool pt,
                       enum sync_kind sk)
{
    CUresult r = cc__check_init();
    if (r) return r;
    const void *sa, *da;
    bool sdev, ddev;
    r = side_resolve(src, w, h, &sa, &sdev);
    if (!r) r = side_resolve(dst, w, h, &da, &ddev);
    if (r) return r;
    if (h == 0) w = 0; /* nothing to copy; the stream is still checked */
    return copy_rows((void *)(uintptr_t)da, ddev, dst->pitch, sa, sdev, src->pitch, w, h, hs, pt, sk);
}

/* cuMemcpy2D and cuMemcpy2DUnaligned take the same path: the real
 * cuMemcpy2D "may fail" for device pitches cuMemAllocPitch did not compute,
 * and this driver has no such rule to apply (unverified which fail). */
#define COPY2D_ENTRY(name, T, pt, sk)                                                                 \
    CC_EXPORT CUresult name(const T *pCopy)                                                           \
    {                                                                                                 \
        CC_ENTER(name);                                                                               \
        if (!pCopy) return CUDA_ERROR_INVALID_VALUE;                                                  \
        SIDES_FROM(pCopy);                                                                            \
        return copy2d(&src, &dst, w, h, NULL, pt, sk);                                                \
    }
#define COPY2D_ASYNC_ENTRY(name, T, pt)                                                               \
    CC_EXPORT CUresult name(const T *pCopy, CUstream hStream)                                         \
    {                                                                                                 \
        CC_ENTER(name);                                                                               \
        if (!pCopy) return CUDA_ERROR_INVALID_VALUE;                                                  \
        SIDES_FROM(pCopy);                                                                            \
        return copy2d(&src, &dst, w, h, hStream, pt, ASYNC);                                          \
    }

COPY2D_ENTRY(cuMemcpy2D, CUDA_MEMCPY2D_v1, false, SYNC)
COPY2D_ENTRY(cuMemcpy2D_v2, CUDA_MEMCPY2D, false, SYNC)
COPY2D_ENTRY(cuMemcpy2D_v2_ptds, CUDA_MEMCPY2D, true, SYNC)
COPY2D_ENTRY(cuMemcpy2DUnaligned, CUDA_MEMCPY2D_v1, false, SYNC)
COPY2D_ENTRY(cuMemcpy2DUnaligned_v2, CUDA_MEMCPY2D, false, SYNC)
COPY2D_ENTRY(cuMemcpy2DUnaligned_v2_ptds, CUDA_MEMCPY2D, true, SYNC)
COPY2D_ASYNC_ENTRY(cuMemcpy2DAsync, CUDA_MEMCPY2D_v1, false)
COPY2D_ASYNC_ENTRY(cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, false)
COPY2D_ASYNC_ENTRY(cuMemcpy2DAsync_v2_ptsz, CUDA_MEMCPY2D, true)
