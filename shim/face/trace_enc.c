/* trace_enc.c - the records of launches, copies, memsets, allocations and
 * frees (docs/trace.md, "Calls"): a launch against its function's last one
 * (parameters as a delta of 8-byte words), addresses as memory ids and
 * offsets. Under the writer's lock. */
#include "trace_enc.h"
#include "alloc.h"

#include <stdlib.h>

#define W rp__tr_W

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
        if (!n) {
            rp__tr_nomem();
            return false;
        }
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
void rp__tr_enc_launch(struct tr_call *c, const uint64_t *a)
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
    struct tr_func *f = rp__tr_func(fh, 0, 0, NULL, c->ok);
    uint32_t sid = rp__tr_stream(s, c->ok);
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
    unsigned char *p = rp__tr_call_begin(c, bound);
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
            /* Kept as the reader will keep them, or recording stops:
             * the next launch is encoded against them. */
            unsigned char *na = rp__realloc(f->attrs, nattr);
            if (na) {
                memcpy(na, attrs, nattr);
                f->attrs = na;
                f->nattrs_bytes = nattr;
            } else {
                rp__tr_nomem();
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
    rp__tr_call_end(p);
}

/* Copies: the two addresses, the size, the stream, and with
 * REPRISE_TRACE_DATA the bytes a host-to-device copy reads. */
void rp__tr_enc_copy(struct tr_call *c, const uint64_t *a)
{
    unsigned fam = c->fam;
    bool peer = fam == RP_TRF_PEER || fam == RP_TRF_PEER_ASYNC;
    uint64_t dst = a[0], src = peer ? a[2] : a[1], n = peer ? a[4] : a[2];
    bool async = fam == RP_TRF_HTOD_ASYNC || fam == RP_TRF_DTOH_ASYNC ||
                 fam == RP_TRF_DTOD_ASYNC || fam == RP_TRF_COPY_ASYNC || fam == RP_TRF_PEER_ASYNC;
    CUstream s = async ? (CUstream)(uintptr_t)a[peer ? 5 : 3] : NULL;
    enum tr_addr_kind dk = TR_A_DEVICE, sk = TR_A_DEVICE;
    if (fam == RP_TRF_HTOD || fam == RP_TRF_HTOD_ASYNC)
        sk = TR_A_HOST;
    else if (fam == RP_TRF_DTOH || fam == RP_TRF_DTOH_ASYNC)
        dk = TR_A_HOST;
    else if (fam == RP_TRF_COPY || fam == RP_TRF_COPY_ASYNC)
        dk = sk = TR_A_UNIFIED;
    struct tr_addr da = rp__tr_addr(dst, dk, c->ok), sa = rp__tr_addr(src, sk, c->ok);
    uint32_t sid = async ? rp__tr_stream(s, c->ok) : 0;
    uint32_t dc = peer ? rp__tr_ctx((CUcontext)(uintptr_t)a[1], c->ok) : 0;
    uint32_t sc = peer ? rp__tr_ctx((CUcontext)(uintptr_t)a[3], c->ok) : 0;
    bool data = W.data && c->ok && sk != TR_A_DEVICE && n &&
                (sa.space == RP_TS_HOST || sa.space == RP_TS_PAGEABLE) && n <= (1ull << 32);
    unsigned char *p = rp__tr_call_begin(c, 96 + (data ? n : 0));
    if (!p)
        return;
    *p++ = data ? RP_TCOPY_DATA : 0;
    p = rp__tr_put_addr(p, da);
    p = rp__tr_put_addr(p, sa);
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
    rp__tr_call_end(p);
}

void rp__tr_enc_memset(struct tr_call *c, const uint64_t *a)
{
    unsigned fam = c->fam;
    bool two = fam >= RP_TRF_MEMSET2D8 && fam <= RP_TRF_MEMSET2D32_ASYNC;
    bool async = (fam >= RP_TRF_MEMSET8_ASYNC && fam <= RP_TRF_MEMSET32_ASYNC) ||
                 fam >= RP_TRF_MEMSET2D8_ASYNC;
    struct tr_addr da = rp__tr_addr(a[0], TR_A_DEVICE, c->ok);
    uint32_t sid = async ? rp__tr_stream((CUstream)(uintptr_t)a[two ? 5 : 3], c->ok) : 0;
    unsigned char *p = rp__tr_call_begin(c, 80);
    if (!p)
        return;
    p = rp__tr_put_addr(p, da);
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
    rp__tr_call_end(p);
}

/* An allocation: its id (0 when it failed), its size and what else the call
 * said; the range is known from now on. */
void rp__tr_enc_alloc(struct tr_call *c, const uint64_t *a)
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
        sid = rp__tr_stream((CUstream)(uintptr_t)a[2], c->ok);
    if (fam == RP_TRF_ALLOC_POOL_ASYNC)
        sid = rp__tr_stream((CUstream)(uintptr_t)a[3], c->ok);
    uint32_t id =
        c->ok && base ? rp__tr_range_add((uintptr_t)base, bytes, space, rp__tr_ctx_current()) : 0;
    unsigned char *p = rp__tr_call_begin(c, 80);
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
    if (id)
        p = rp_tv_put(p, base); /* RP_TF_ADDRS */
    rp__tr_call_end(p);
}

void rp__tr_enc_free(struct tr_call *c, const uint64_t *a)
{
    bool host = c->fam == RP_TRF_FREE_HOST || c->fam == RP_TRF_HOST_UNREGISTER;
    struct tr_addr da = rp__tr_addr(a[0], host ? TR_A_HOST : TR_A_DEVICE, false);
    uint32_t sid = c->fam == RP_TRF_FREE_ASYNC ? rp__tr_stream((CUstream)(uintptr_t)a[1], c->ok) : 0;
    if (c->ok && (da.space == RP_TS_DEVICE || da.space == RP_TS_HOST) && da.off == 0)
        rp__tr_range_del((uintptr_t)a[0]);
    unsigned char *p = rp__tr_call_begin(c, 48);
    if (!p)
        return;
    p = rp__tr_put_addr(p, da);
    if (c->fam == RP_TRF_FREE_ASYNC)
        p = rp_tv_put(p, sid);
    rp__tr_call_end(p);
}

void rp__tr_enc_register(struct tr_call *c, const uint64_t *a)
{
    uint32_t id =
        c->ok && a[0] ? rp__tr_range_add((uintptr_t)a[0], a[1], RP_TS_HOST, rp__tr_ctx_current()) : 0;
    unsigned char *p = rp__tr_call_begin(c, 48);
    if (!p)
        return;
    p = rp_tv_put(p, id);
    p = rp_tv_put(p, a[1]);
    p = rp_tv_put(p, a[2]);
    if (id)
        p = rp_tv_put(p, a[0]); /* RP_TF_ADDRS */
    rp__tr_call_end(p);
}

