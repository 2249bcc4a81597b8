/* copy.c - copies and memsets in every form. Each becomes one COPY/MEMSET
 * op on a stream (or a node when that stream captures); the forms differ
 * only in which stream they use and how long the host waits, per the
 * driver's "API synchronization behavior". */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum sync_kind { ASYNC, SYNC };

/* One copy of n bytes. dst_dev/src_dev say which sides are device memory;
 * for SYNC, hs is ignored and the legacy (pt=false) or per-thread stream is
 * used. Device sides must lie inside one live allocation (INVALID_VALUE). */
static CUresult copy(void *dst, bool dst_dev, const void *src, bool src_dev, size_t n,
                     CUstream hs, bool pt, enum sync_kind sk)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(sk == SYNC ? NULL : hs, pt, &s);
    if (!r && n && dst_dev) r = cc__mem_check_dev((CUdeviceptr)(uintptr_t)dst, n);
    if (!r && n && src_dev) r = cc__mem_check_dev((CUdeviceptr)(uintptr_t)src, n);
    if (!r && n && ((!dst_dev && !dst) || (!src_dev && !src))) r = CUDA_ERROR_INVALID_VALUE;
    if (r || n == 0) {
        cc__unlock();
        return r;
    }
    bool host_src = !src_dev, host_dst = !dst_dev;
    bool src_pinned = host_src && cc__mem_is_pinned(src, n);
    bool dst_pinned = host_dst && cc__mem_is_pinned(dst, n);

    /* A synchronous copy involving the host cannot be captured. */
    if (s->cap && sk == SYNC && (host_src || host_dst)) {
        cc__capture_invalidate(s->cap, "synchronous host copy in a capturing stream");
        cc__unlock();
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    cc_work w = {.kind = CC_W_COPY, .ctx = s->ctx};
    w.u.c.dst = dst;
    w.u.c.src = src;
    w.u.c.n = n;
    w.u.c.dt = dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    w.u.c.st = src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    /* Pageable source bytes are read at the call (the program may reuse its
     * buffer when we return). Not in capture: a captured copy re-reads the
     * host address at every launch, as the real driver's does. */
    if (host_src && !src_pinned && !s->cap) {
        w.u.c.stage = malloc(n);
        if (!w.u.c.stage) {
            cc__unlock();
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(w.u.c.stage, src, n);
    }
    bool captured;
    unsigned long long seq = 0;
    r = cc__stream_op(s, &w, &captured, &seq);
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

static CUresult memset_op(CUdeviceptr dst, unsigned value, unsigned esz, size_t n, CUstream hs, bool pt,
                          enum sync_kind sk)
{
    CUresult r = cc__check_init();
    if (r) return r;
    if ((uintptr_t)dst % esz) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    cc_stream *s;
    r = cc__stream_get(sk == SYNC ? NULL : hs, pt, &s);
    if (!r && n) {
        if (n > SIZE_MAX / esz) r = CUDA_ERROR_INVALID_VALUE;
        else r = cc__mem_check_dev(dst, n * esz);
    }
    if (!r && n) {
        cc_work w = {.kind = CC_W_MEMSET, .ctx = s->ctx};
        w.u.m.dst = dst;
        w.u.m.value = value;
        w.u.m.esz = esz;
        w.u.m.w = n;
        w.u.m.h = 1;
        w.u.m.pitch = n * esz;
        r = cc__stream_op(s, &w, NULL, NULL);
    }
    cc__unlock();
    return r;
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
