/* copy.c - the hooks of copies and memsets: asynchronous host-to-device
 * copies (pageable sources staged at the call, pinned ones read when the
 * copy runs), device-to-host copies into pinned memory, device-to-device
 * copies and memsets of device memory, in their sync and async forms;
 * anything else of theirs is a boundary. */
#include "hooks.h"

#include <string.h>

#define R (rp__eng.drv)
#define MAX_STAGE_OP (4u << 20) /* a larger pageable host-to-device copy runs eagerly */

/* Asynchronous host-to-device copy. From pageable memory the driver reads
 * the bytes at the call: a deferred copy keeps a copy of them, and its graph
 * reads them from staging. From pinned memory the driver reads when the copy
 * runs (earlier work on the stream may fill the buffer): the copy is
 * captured reading the program's own buffer, whose address is content. */
static CUresult htod_async(CUdeviceptr d, const void *h, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(CUdeviceptr, const void *, size_t, CUstream) =
        ptsz ? R->cuMemcpyHtoDAsync_v2_ptsz : R->cuMemcpyHtoDAsync_v2;
    if (rp__aside()) {
        rp__aside_op(s, ptsz, RP_OP_HTOD);
        return real(d, h, n, s);
    }
    int pinned = n && rp__rec_is_pinned(h);
    if (n == 0 || !h || (!pinned && n > MAX_STAGE_OP)) {
        rp__note_issue();
        CUresult pre_ = rp__not_capturable(s, ptsz);
        return rp__issued_after(pre_, real(d, h, n, s));
    }
    rp_ctxstate *cs;
    rp_op op = {.kind = RP_OP_HTOD, .dst = d, .host = (void *)h, .bytes = n,
                .flags = pinned ? RP_OPF_HOST_PINNED : 0,
                .entry = ptsz ? RP_E_cuMemcpyHtoDAsync_v2_ptsz : RP_E_cuMemcpyHtoDAsync_v2};
    rp_stream *st;
    CUresult pre;
    if (rp__capturable(s, ptsz, &op, NULL, &cs, &st, &pre))
        return pre;
    if (!pinned)
        op.host = NULL; /* the program's pageable buffer: not kept past the call */
    return rp__eager_done(cs, st, &op, pre, real(d, h, n, s));
}

CUresult CUDAAPI rp__hook_cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                                 size_t ByteCount, CUstream hStream)
{
    return htod_async(dstDevice, srcHost, ByteCount, hStream, 0);
}

CUresult CUDAAPI rp__hook_cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                                      size_t ByteCount, CUstream hStream)
{
    return htod_async(dstDevice, srcHost, ByteCount, hStream, 1);
}

/* Asynchronous device-to-host copy: captured into pinned memory only; into
 * pageable memory it synchronises the host, so it is a global boundary. */
static CUresult dtoh_async(void *h, CUdeviceptr d, size_t n, CUstream s, int ptsz)
{
    CUresult (*real)(void *, CUdeviceptr, size_t, CUstream) =
        ptsz ? R->cuMemcpyDtoHAsync_v2_ptsz : R->cuMemcpyDtoHAsync_v2;
    if (rp__aside()) {
        rp__aside_op(s, ptsz, RP_OP_DTOH);
        return real(h, d, n, s);
    }
    if (!n || !rp__rec_is_pinned(h)) {
        rp__note_issue();
        CUresult pre_ = rp__boundary_global();
        return rp__issued_after(pre_, real(h, d, n, s));
    }
    rp_ctxstate *cs;
    rp_op op = {.kind = RP_OP_DTOH, .host = h, .src = d, .bytes = n,
                .entry = ptsz ? RP_E_cuMemcpyDtoHAsync_v2_ptsz : RP_E_cuMemcpyDtoHAsync_v2};
    rp_stream *st;
    CUresult pre;
    if (rp__capturable(s, ptsz, &op, NULL, &cs, &st, &pre))
        return pre;
    return rp__eager_done(cs, st, &op, pre, real(h, d, n, s));
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
                                                 size_t ByteCount, CUstream hStream)
{
    return dtoh_async(dstHost, srcDevice, ByteCount, hStream, 0);
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
                                                      size_t ByteCount, CUstream hStream)
{
    return dtoh_async(dstHost, srcDevice, ByteCount, hStream, 1);
}

/* Device-to-device copies and memsets of device memory, asynchronous and
 * synchronous forms (neither synchronises the host; the synchronous forms
 * run on the legacy stream, the per-thread stream for _ptds): recorded, and
 * issued eagerly through the entry the program called (rp__rec_issue_entry
 * knows every capturable copy and memset entry); or, the next op of the
 * run the matcher's fast path holds, deferred without a record
 * (rp__joins_call: a training step's zeroed gradients, a decoder's cache
 * copies). */
static inline rp_op record_of(const rp_call_other *c, CUstream s)
{
    return (rp_op){.kind = c->kind, .dst = c->dst, .src = c->src, .bytes = c->bytes,
                   .value = c->value, .elem = c->elem, .stream = s, .entry = c->entry};
}

/* The general way, with its record (cs locked, or NULL). Out of line: the
 * records' stack frame would weigh on every op that joins. */
static __attribute__((noinline)) CUresult device_op_recorded(rp_ctxstate *cs,
                                                             const rp_call_other *c, CUstream s,
                                                             int ptsz)
{
    rp_op op = record_of(c, s), copy; /* the call as made: the record may move into the stream */
    rp_stream *st;
    CUresult pre;
    if (rp__capturable_in(cs, s, ptsz, &op, &copy, &st, &pre))
        return pre;
    return rp__eager_done(cs, st, &op, pre, rp__rec_issue_entry(&copy));
}

/* One issued as called: the engine steps aside (`aside`), or it has no
 * bytes (not capturable). Out of line, as device_op_recorded. */
static __attribute__((noinline)) CUresult device_op_plain(const rp_call_other *c, CUstream s,
                                                          int ptsz, int aside)
{
    rp_op op = record_of(c, s);
    if (aside) {
        rp__aside_op(s, ptsz, c->kind);
        return rp__rec_issue_entry(&op);
    }
    rp__note_issue();
    CUresult pre_ = rp__not_capturable(s, ptsz);
    return rp__issued_after(pre_, rp__rec_issue_entry(&op));
}

static CUresult device_op(rp_call_other *c, CUstream s, int ptsz)
{
    int aside = rp__aside();
    if (aside || c->bytes == 0)
        return device_op_plain(c, s, ptsz, aside);
    rp_ctxstate *cs;
    CUresult pre;
    if (rp__joins_call(s, ptsz, c, &cs, &pre))
        return pre;
    return device_op_recorded(cs, c, s, ptsz);
}

static CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, enum rp__entry e,
                     int ptsz)
{
    rp_call_other c = {.kind = RP_OP_DTOD, .entry = (uint16_t)e, .dst = dst, .src = src,
                       .bytes = n};
    return device_op(&c, s, ptsz);
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                 size_t ByteCount, CUstream hStream)
{
    return dtod(dstDevice, srcDevice, ByteCount, hStream, RP_E_cuMemcpyDtoDAsync_v2, 0);
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                      size_t ByteCount, CUstream hStream)
{
    return dtod(dstDevice, srcDevice, ByteCount, hStream, RP_E_cuMemcpyDtoDAsync_v2_ptsz, 1);
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                            size_t ByteCount)
{
    return dtod(dstDevice, srcDevice, ByteCount, NULL, RP_E_cuMemcpyDtoD_v2, 0);
}

CUresult CUDAAPI rp__hook_cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                 size_t ByteCount)
{
    return dtod(dstDevice, srcDevice, ByteCount, NULL, RP_E_cuMemcpyDtoD_v2_ptds, 1);
}

/* A memset of host memory synchronises the host: a global boundary. */
static CUresult memset_op(CUdeviceptr d, unsigned int v, size_t n, unsigned int elem, CUstream s,
                          enum rp__entry e, int ptsz)
{
    rp_call_other c = {.kind = RP_OP_MEMSET, .entry = (uint16_t)e, .dst = d, .bytes = n,
                       .value = v, .elem = elem};
    if (!rp__aside()) {
        unsigned int type = 0;
        if (!n || R->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d) !=
                      CUDA_SUCCESS || type != CU_MEMORYTYPE_DEVICE)
            {
                rp_op op = record_of(&c, s);
                rp__note_issue();
                CUresult pre_ = rp__boundary_global();
                return rp__issued_after(pre_, rp__rec_issue_entry(&op));
            }
    }
    return device_op(&c, s, ptsz);
}

/* Every width in every form: the value widens to unsigned int in the
 * record, and rp__rec_issue_as_called narrows it back by the entry. */
#define MEMSET_HOOKS(bits, type)                                                                \
    CUresult CUDAAPI rp__hook_cuMemsetD##bits##_v2(CUdeviceptr d, type v, size_t n)           \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, NULL, RP_E_cuMemsetD##bits##_v2, 0);                \
    }                                                                                           \
    CUresult CUDAAPI rp__hook_cuMemsetD##bits##_v2_ptds(CUdeviceptr d, type v, size_t n)      \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, NULL, RP_E_cuMemsetD##bits##_v2_ptds, 1);           \
    }                                                                                           \
    CUresult CUDAAPI rp__hook_cuMemsetD##bits##Async(CUdeviceptr d, type v, size_t n,         \
                                                       CUstream s)                              \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, s, RP_E_cuMemsetD##bits##Async, 0);                 \
    }                                                                                           \
    CUresult CUDAAPI rp__hook_cuMemsetD##bits##Async_ptsz(CUdeviceptr d, type v, size_t n,    \
                                                            CUstream s)                         \
    {                                                                                           \
        return memset_op(d, v, n, bits / 8, s, RP_E_cuMemsetD##bits##Async_ptsz, 1);            \
    }
MEMSET_HOOKS(8, unsigned char)
MEMSET_HOOKS(16, unsigned short)
MEMSET_HOOKS(32, unsigned int)
