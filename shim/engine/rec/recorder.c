/* recorder.c - turns an intercepted launch into an op record: the kernel's
 * parameter layout (cuFuncGetParamInfo / cuKernelGetParamInfo, cached per
 * handle), the parameter bytes packed like an `extra` buffer with padding
 * zeroed (so equal arguments give equal bytes), and the CUkernel handles the
 * program obtained from cuLibraryGetKernel (no driver call tells the two
 * handle kinds apart). Also re-issues a record through the real driver.
 * Layouts are cached per context, under that context's lock; the set of
 * CUkernel handles is process-wide: written under its own mutex, read
 * without a lock (slots only ever go from empty to a handle). */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYOUT_SLOTS 1024 /* a power of two */
#define KERNEL_SLOTS RP_KERNEL_SLOTS

typedef struct layout {
    const void *handle;   /* NULL: free slot */
    int ok;               /* 0: the layout cannot be read */
    int excluded;         /* REPRISE_EXCLUDE / REPRISE_INCLUDE keep it out */
    uint16_t ord;         /* its number in the context, in order of first sight
                             (rp_op.fid; the last number is shared past it) */
    int max_threads;      /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 0 not asked yet, -1
                             cannot be asked (it never changes for a function) */
    rp_param_layout p;
    char name[256];         /* C++ names are long: room for most mangled ones */
} layout;

/* The set of CUkernel handles is the engine instance's (engine.h). */
#define kernels (rp__eng.kernels)
#define nkernels (rp__eng.nkernels)
#define kernels_lock (rp__eng.kernels_lock)

static size_t slot_of(const void *p, size_t mask)
{
    uint64_t h = rp__hash_u64(RP_HASH_SEED, (uint64_t)(uintptr_t)p);
    return (size_t)h & mask;
}

/* Remember a CUkernel handle. Past KERNEL_SLOTS/2 handles the set is full:
 * launches of a kernel not in it are then taken for CUfunctions, whose
 * parameter query fails on a CUkernel, so they run eagerly (never wrongly). */
void rp__rec_note_kernel(CUkernel k)
{
    if (!k)
        return;
    pthread_mutex_lock(&kernels_lock);
    size_t i = slot_of(k, KERNEL_SLOTS - 1);
    const void *cur;
    while ((cur = atomic_load(&kernels[i])) && cur != k)
        i = (i + 1) & (KERNEL_SLOTS - 1);
    if (!cur && nkernels < KERNEL_SLOTS / 2) {
        atomic_store(&kernels[i], (const void *)k);
        nkernels++;
    }
    pthread_mutex_unlock(&kernels_lock);
}

static int is_kernel_handle(const void *f)
{
    size_t i = slot_of(f, KERNEL_SLOTS - 1);
    const void *cur;
    while ((cur = atomic_load_explicit(&kernels[i], memory_order_acquire))) {
        if (cur == f)
            return 1;
        i = (i + 1) & (KERNEL_SLOTS - 1);
    }
    return 0;
}

/* Read a function's layout by walking parameter indices until the driver
 * says INVALID_VALUE (there is no count call). Anything else, or more than
 * RP_MAX_PARAMS parameters, leaves the layout unreadable. */
static void read_layout(layout *L, const void *f, int kernel)
{
    const struct rp__driver *D = rp__eng.drv;
    memset(L, 0, sizeof *L);
    L->handle = f;
    CUresult (*info)(const void *, size_t, size_t *, size_t *) =
        kernel ? (CUresult(*)(const void *, size_t, size_t *, size_t *))D->cuKernelGetParamInfo
               : (CUresult(*)(const void *, size_t, size_t *, size_t *))D->cuFuncGetParamInfo;
    if (!info)
        return;
    for (size_t i = 0;; i++) {
        size_t off = 0, size = 0;
        CUresult rc = info(f, i, &off, &size);
        if (rc == CUDA_ERROR_INVALID_VALUE)
            break;
        if (rc != CUDA_SUCCESS || i >= RP_MAX_PARAMS || off + size > (1u << 16))
            return;
        L->p.off[i] = (uint32_t)off;
        L->p.size[i] = (uint32_t)size;
        if (off + size > L->p.total)
            L->p.total = (uint32_t)(off + size);
        L->p.n = (uint32_t)i + 1;
    }
    const char *name = NULL;
    if (kernel)
        D->cuKernelGetName(&name, (CUkernel)f);
    else
        D->cuFuncGetName(&name, (CUfunction)f);
    if (name)
        snprintf(L->name, sizeof L->name, "%s", name);
    L->excluded = !rp__option_kernel_allowed(L->name);
    if (L->excluded)
        rp__info("kernel %s is kept out of graphs by REPRISE_EXCLUDE/REPRISE_INCLUDE", L->name);
    L->ok = 1;
}

/* Free slot L takes function `f`, met for the first time: its layout read.
 * Out of line, so that finding a layout, at every recorded launch, saves
 * no registers for it. */
static __attribute__((noinline)) layout *layout_new(rp_ctxstate *cs, layout *L, const void *f,
                                                    int kernel)
{
    read_layout(L, f, kernel);
    if (cs->nfuncs < UINT16_MAX)
        cs->nfuncs++;
    L->ord = (uint16_t)cs->nfuncs;
    if (!L->ok) {
        const char *n = L->name[0] ? L->name : "?";
        rp__info("kernel %p (%s): parameter layout unreadable; its launches run eagerly", f, n);
    }
    return L;
}

static layout *layout_of(rp_ctxstate *cs, const void *f, int kernel)
{
    if (!cs->layouts) {
        cs->layouts = rp__calloc(LAYOUT_SLOTS, sizeof(layout));
        if (!cs->layouts) {
            rp__bound_hit(cs, RP_BOUND_MEMORY);
            return NULL;
        }
    }
    layout *layouts = cs->layouts;
    size_t i = slot_of(f, LAYOUT_SLOTS - 1);
    for (size_t probes = 0; probes < LAYOUT_SLOTS; probes++) {
        layout *L = &layouts[i];
        if (L->handle == f)
            return L;
        if (!L->handle)
            return layout_new(cs, L, f, kernel);
        i = (i + 1) & (LAYOUT_SLOTS - 1);
    }
    rp__bound_hit(cs, RP_BOUND_TABLE);
    return NULL;
}

/* Launch attributes a graph's kernel node keeps (cuda.h: "valid for graph
 * nodes"), and programmatic stream serialization, which a capture leaves
 * out (rp__attr_left_out_of_graphs), copied with only their own value
 * member (so that equal attributes compare equal bytewise); IGNORE entries
 * are dropped. Returns how many were kept, or -1 for one a graph cannot
 * carry (counted by id: the launch is a boundary) or too many. A value of
 * 0 is kept like any other: the attribute is part of the op's structure
 * whatever it says. */
static int keep_attrs(rp_ctxstate *cs, const CUlaunchConfig *cfg, CUlaunchAttribute *out)
{
    int n = 0;
    if (cfg && cfg->numAttrs && !cfg->attrs) {
        cs->counters.attr_boundaries[0]++; /* the driver's INVALID_VALUE, eagerly */
        return -1;
    }
    for (unsigned int i = 0; cfg && i < cfg->numAttrs; i++) {
        const CUlaunchAttribute *a = &cfg->attrs[i];
        CUlaunchAttribute k;
        memset(&k, 0, sizeof k);
        k.id = a->id;
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
            continue;
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
            /* Field by field: the struct's padding is the program's. */
            k.value.accessPolicyWindow.base_ptr = a->value.accessPolicyWindow.base_ptr;
            k.value.accessPolicyWindow.num_bytes = a->value.accessPolicyWindow.num_bytes;
            k.value.accessPolicyWindow.hitRatio = a->value.accessPolicyWindow.hitRatio;
            k.value.accessPolicyWindow.hitProp = a->value.accessPolicyWindow.hitProp;
            k.value.accessPolicyWindow.missProp = a->value.accessPolicyWindow.missProp;
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            k.value.cooperative = a->value.cooperative;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            k.value.clusterDim.x = a->value.clusterDim.x;
            k.value.clusterDim.y = a->value.clusterDim.y;
            k.value.clusterDim.z = a->value.clusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            k.value.clusterSchedulingPolicyPreference = a->value.clusterSchedulingPolicyPreference;
            break;
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
            k.value.priority = a->value.priority;
            break;
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
            k.value.memSyncDomainMap = a->value.memSyncDomainMap;
            break;
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
            k.value.memSyncDomain = a->value.memSyncDomain;
            break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
            k.value.programmaticStreamSerializationAllowed =
                a->value.programmaticStreamSerializationAllowed;
            break;
        default:
            cs->counters.attr_boundaries[(unsigned int)a->id < RP_ATTR_IDS ? a->id : 0]++;
            return -1;
        }
        if (n == RP_MAX_ATTRS) {
            cs->counters.attr_boundaries[0]++;
            return -1;
        }
        out[n++] = k;
    }
    return n;
}

int rp__rec_kernel(rp_ctxstate *cs, rp_op *op, CUfunction f, const unsigned int grid[3],
                   const unsigned int block[3], unsigned int shmem, void **kernelParams,
                   void **extra, const CUlaunchConfig *cfg, enum rp__eager_reason *why)
{
    CUlaunchAttribute attrs[RP_MAX_ATTRS];
    int nattrs = keep_attrs(cs, cfg, attrs);
    if (nattrs < 0) {
        *why = RP_EAGER_NOT_CAPTURABLE;
        return -1;
    }
    /* A small direct-mapped cache of functions and their layouts: a loop
     * launches a few kernels over and over, and each full look-up hashes
     * the handle twice. */
    struct rp_func_cache *fc = &cs->fcache[((uintptr_t)f >> 4) & (RP_FUNC_CACHE - 1)];
    int kernel;
    layout *L;
    if (fc->func == (const void *)f && fc->layout) {
        L = fc->layout;
        kernel = fc->is_kernel;
    } else {
        kernel = is_kernel_handle(f);
        L = layout_of(cs, f, kernel);
        fc->func = f;
        fc->layout = L;
        fc->is_kernel = kernel;
    }
    if (!L) {
        *why = RP_EAGER_BOUND;
        return -1;
    }
    if (!L->ok) {
        *why = RP_EAGER_NO_LAYOUT;
        return -1;
    }
    if (L->excluded) {
        *why = RP_EAGER_EXCLUDED;
        return -1;
    }
    /* Exactly one of kernelParams/extra, as the driver demands; anything
     * else runs eagerly so that the driver gives its own error. */
    const void *buf = NULL;
    size_t bufsize = 0;
    if (extra) {
        if (kernelParams) {
            *why = RP_EAGER_NOT_CAPTURABLE;
            return -1;
        }
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                bufsize = extra[i + 1] ? *(size_t *)extra[i + 1] : 0;
            else {
                *why = RP_EAGER_NOT_CAPTURABLE;
                return -1;
            }
        }
        if (!buf || bufsize != L->p.total) {
            *why = RP_EAGER_NOT_CAPTURABLE;
            return -1;
        }
    } else if (L->p.n && !kernelParams) {
        *why = RP_EAGER_NOT_CAPTURABLE;
        return -1;
    }
    uint8_t *params = NULL;
    if (L->p.total) {
        params = rp__params_alloc(L->p.total);
        if (!params) {
            *why = RP_EAGER_BOUND;
            return -1;
        }
        for (uint32_t i = 0; i < L->p.n; i++) {
            const void *src = buf ? (const uint8_t *)buf + L->p.off[i] : kernelParams[i];
            rp__param_copy(params + L->p.off[i], src, L->p.size[i]);
        }
    }
    CUlaunchAttribute *kept = NULL;
    if (nattrs) {
        kept = rp__malloc((size_t)nattrs * sizeof *kept);
        if (!kept) {
            rp__params_free(params, L->p.total);
            *why = RP_EAGER_BOUND;
            return -1;
        }
        memcpy(kept, attrs, (size_t)nattrs * sizeof *kept);
    }
    memset(op, 0, sizeof *op);
    op->nattrs = (uint8_t)nattrs;
    op->attrs = kept;
    op->kind = RP_OP_KERNEL;
    op->flags = kernel ? RP_OPF_KERNEL_HANDLE : 0;
    op->func = f;
    op->fid = L->ord;
    memcpy(op->grid, grid, sizeof op->grid);
    memcpy(op->block, block, sizeof op->block);
    op->shmem = shmem;
    op->param_bytes = L->p.total;
    op->params = params;
    return 0;
}

const rp_param_layout *rp__rec_layout(rp_ctxstate *cs, const rp_op *op)
{
    if (op->kind != RP_OP_KERNEL)
        return NULL;
    layout *L = layout_of(cs, op->func, (op->flags & RP_OPF_KERNEL_HANDLE) != 0);
    return L && L->ok ? &L->p : NULL;
}

/* Function `f`'s entry of the context's table when it has one (NULL:
 * none; nothing is read from the driver, nothing added). */
static const layout *layout_found(const rp_ctxstate *cs, const void *f)
{
    const layout *layouts = cs->layouts;
    if (!layouts)
        return NULL;
    size_t i = slot_of(f, LAYOUT_SLOTS - 1);
    for (size_t probes = 0; probes < LAYOUT_SLOTS && layouts[i].handle; probes++) {
        if (layouts[i].handle == f)
            return &layouts[i];
        i = (i + 1) & (LAYOUT_SLOTS - 1);
    }
    return NULL;
}

const rp_param_layout *rp__rec_layout_known(rp_ctxstate *cs, CUfunction f, int *kernel)
{
    const layout *L = layout_found(cs, f);
    if (!L || !L->ok || L->excluded)
        return NULL;
    *kernel = is_kernel_handle(f);
    return &L->p;
}

const char *rp__rec_kernel_name(rp_ctxstate *cs, const rp_op *op)
{
    const layout *L = op->kind == RP_OP_KERNEL ? layout_found(cs, op->func) : NULL;
    return L ? L->name : "";
}

int rp__rec_param_ptrs(rp_ctxstate *cs, const rp_op *op, void **ptrs, void ***kp)
{
    layout *L = layout_of(cs, op->func, (op->flags & RP_OPF_KERNEL_HANDLE) != 0);
    if (!L || !L->ok)
        return -1;
    for (uint32_t i = 0; i < L->p.n; i++)
        ptrs[i] = op->params + L->p.off[i];
    *kp = L->p.n ? ptrs : NULL;
    return 0;
}

/* The cuLaunchKernelEx configuration of kernel record `op` on `stream`,
 * with its attributes. */
static void launch_config(const rp_op *op, CUstream stream, CUlaunchConfig *c)
{
    memset(c, 0, sizeof *c);
    c->gridDimX = op->grid[0], c->gridDimY = op->grid[1], c->gridDimZ = op->grid[2];
    c->blockDimX = op->block[0], c->blockDimY = op->block[1], c->blockDimZ = op->block[2];
    c->sharedMemBytes = op->shmem;
    c->hStream = stream;
    c->attrs = op->attrs;
    c->numAttrs = op->nattrs;
}

/* Leave out of `c` (launch_config's for `op`) the attributes a graph
 * leaves out (rp__attr_left_out_of_graphs); `kept` (RP_MAX_ATTRS of them)
 * holds the others. Returns 1 when one of those left out asked for
 * something (programmatic stream serialization not 0), else 0. */
static int leave_out_of_graph(const rp_op *op, CUlaunchConfig *c, CUlaunchAttribute *kept)
{
    unsigned int n = 0;
    int asked = 0;
    for (unsigned int i = 0; i < op->nattrs; i++) {
        const CUlaunchAttribute *a = &op->attrs[i];
        if (!rp__attr_left_out_of_graphs(a->id)) {
            kept[n++] = *a;
            continue;
        }
        if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
            a->value.programmaticStreamSerializationAllowed)
            asked = 1;
    }
    c->attrs = n ? kept : NULL;
    c->numAttrs = n;
    return asked;
}

/* Re-issue `op` on `stream`: into a capture window, or on the context's
 * private stream for another thread's per-thread stream. Either way the
 * launch is not the program's own on its own stream, so the attributes a
 * graph leaves out are left out here too: in a window the node is made
 * without them; on the private stream the kernel's predecessor is not the
 * one the program launched it after (a stricter order, as in a graph).
 * Each launch so issued without a programmatic stream serialization it
 * asked for is counted (`programmatic_serialization_dropped`). A kernel
 * goes through kernelParams pointing
 * into the packed bytes; a host-to-device copy from pageable memory reads
 * `staged` (the graph's pinned staging inside a capture window; the
 * record's own copy of the bytes when flushing, which the driver stages at
 * once because it is pageable); one from pinned memory reads the program's
 * buffer, when the copy runs, as the program's own call would have. */
CUresult rp__rec_issue(rp_ctxstate *cs, const rp_op *op, CUstream stream, const void *staged)
{
    const struct rp__driver *D = rp__eng.drv;
    switch (op->kind) {
    case RP_OP_KERNEL: {
        void *ptrs[RP_MAX_PARAMS], **kp;
        if (NEVER(rp__rec_param_ptrs(cs, op, ptrs, &kp) != 0))
            return CUDA_ERROR_INVALID_HANDLE; /* it was recorded with a layout */
        if (op->nattrs) {
            CUlaunchConfig c;
            CUlaunchAttribute kept[RP_MAX_ATTRS];
            launch_config(op, stream, &c);
            int dropped = leave_out_of_graph(op, &c, kept);
            CUresult rc = D->cuLaunchKernelEx(&c, op->func, kp, NULL);
            if (rc == CUDA_SUCCESS && dropped)
                cs->counters.programmatic_serialization_dropped++;
            return rc;
        }
        return D->cuLaunchKernel(op->func, op->grid[0], op->grid[1], op->grid[2],
                                      op->block[0], op->block[1], op->block[2], op->shmem,
                                      stream, kp, NULL);
    }
    case RP_OP_HTOD:
        return D->cuMemcpyHtoDAsync_v2(op->dst, rp__op_staged(op) ? staged : op->host,
                                            op->bytes, stream);
    case RP_OP_DTOH:
        return D->cuMemcpyDtoHAsync_v2(op->host, op->src, op->bytes, stream);
    case RP_OP_DTOD:
        return D->cuMemcpyDtoDAsync_v2(op->dst, op->src, op->bytes, stream);
    case RP_OP_MEMSET:
        if (op->elem == 1)
            return D->cuMemsetD8Async(op->dst, (unsigned char)op->value, op->bytes, stream);
        if (op->elem == 2)
            return D->cuMemsetD16Async(op->dst, (unsigned short)op->value, op->bytes, stream);
        return D->cuMemsetD32Async(op->dst, op->value, op->bytes, stream);
    case RP_OP_EVREC:
        return D->cuEventRecord(op->ev, stream);
    case RP_OP_EVWAIT:
        return D->cuStreamWaitEvent(stream, op->ev, 0);
    }
    (void)NEVER(1); /* every capturable kind is handled above */
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult rp__rec_issue_entry(const rp_op *op)
{
    const struct rp__driver *D = rp__eng.drv;
    CUstream s = op->stream;
    const void *src = rp__op_staged(op) ? op->data : op->host;
    switch ((enum rp__entry)op->entry) {
    case RP_E_cuMemcpyHtoDAsync_v2:
        return D->cuMemcpyHtoDAsync_v2(op->dst, src, op->bytes, s);
    case RP_E_cuMemcpyHtoDAsync_v2_ptsz:
        return D->cuMemcpyHtoDAsync_v2_ptsz(op->dst, src, op->bytes, s);
    case RP_E_cuMemcpyDtoHAsync_v2:
        return D->cuMemcpyDtoHAsync_v2(op->host, op->src, op->bytes, s);
    case RP_E_cuMemcpyDtoHAsync_v2_ptsz:
        return D->cuMemcpyDtoHAsync_v2_ptsz(op->host, op->src, op->bytes, s);
    case RP_E_cuMemcpyDtoDAsync_v2:
        return D->cuMemcpyDtoDAsync_v2(op->dst, op->src, op->bytes, s);
    case RP_E_cuMemcpyDtoDAsync_v2_ptsz:
        return D->cuMemcpyDtoDAsync_v2_ptsz(op->dst, op->src, op->bytes, s);
    case RP_E_cuMemcpyDtoD_v2:
        return D->cuMemcpyDtoD_v2(op->dst, op->src, op->bytes);
    case RP_E_cuMemcpyDtoD_v2_ptds:
        return D->cuMemcpyDtoD_v2_ptds(op->dst, op->src, op->bytes);
    case RP_E_cuMemsetD8_v2:
        return D->cuMemsetD8_v2(op->dst, (unsigned char)op->value, op->bytes);
    case RP_E_cuMemsetD8_v2_ptds:
        return D->cuMemsetD8_v2_ptds(op->dst, (unsigned char)op->value, op->bytes);
    case RP_E_cuMemsetD16_v2:
        return D->cuMemsetD16_v2(op->dst, (unsigned short)op->value, op->bytes);
    case RP_E_cuMemsetD16_v2_ptds:
        return D->cuMemsetD16_v2_ptds(op->dst, (unsigned short)op->value, op->bytes);
    case RP_E_cuMemsetD32_v2:
        return D->cuMemsetD32_v2(op->dst, op->value, op->bytes);
    case RP_E_cuMemsetD32_v2_ptds:
        return D->cuMemsetD32_v2_ptds(op->dst, op->value, op->bytes);
    case RP_E_cuMemsetD8Async:
        return D->cuMemsetD8Async(op->dst, (unsigned char)op->value, op->bytes, s);
    case RP_E_cuMemsetD8Async_ptsz:
        return D->cuMemsetD8Async_ptsz(op->dst, (unsigned char)op->value, op->bytes, s);
    case RP_E_cuMemsetD16Async:
        return D->cuMemsetD16Async(op->dst, (unsigned short)op->value, op->bytes, s);
    case RP_E_cuMemsetD16Async_ptsz:
        return D->cuMemsetD16Async_ptsz(op->dst, (unsigned short)op->value, op->bytes, s);
    case RP_E_cuMemsetD32Async:
        return D->cuMemsetD32Async(op->dst, op->value, op->bytes, s);
    case RP_E_cuMemsetD32Async_ptsz:
        return D->cuMemsetD32Async_ptsz(op->dst, op->value, op->bytes, s);
    /* Event records and waits: `value` holds the call's flags (0 in every
     * record the engine keeps: only calls without flags are ops). */
    case RP_E_cuEventRecord:
        return D->cuEventRecord(op->ev, s);
    case RP_E_cuEventRecord_ptsz:
        return D->cuEventRecord_ptsz(op->ev, s);
    case RP_E_cuEventRecordWithFlags:
        return D->cuEventRecordWithFlags(op->ev, s, op->value);
    case RP_E_cuEventRecordWithFlags_ptsz:
        return D->cuEventRecordWithFlags_ptsz(op->ev, s, op->value);
    case RP_E_cuStreamWaitEvent:
        return D->cuStreamWaitEvent(s, op->ev, op->value);
    case RP_E_cuStreamWaitEvent_ptsz:
        return D->cuStreamWaitEvent_ptsz(s, op->ev, op->value);
    default:
        (void)NEVER(1); /* every capturable copy, memset and event entry is listed above */
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult rp__rec_issue_as_called(rp_ctxstate *cs, const rp_op *op)
{
    const struct rp__driver *D = rp__eng.drv;
    switch ((enum rp__entry)op->entry) {
    case RP_E_cuLaunchKernel:
    case RP_E_cuLaunchKernel_ptsz:
    case RP_E_cuLaunchKernelEx:
    case RP_E_cuLaunchKernelEx_ptsz: {
        void *ptrs[RP_MAX_PARAMS], **kp;
        if (NEVER(rp__rec_param_ptrs(cs, op, ptrs, &kp) != 0))
            return CUDA_ERROR_INVALID_HANDLE; /* it was recorded with a layout */
        if (op->entry == RP_E_cuLaunchKernel || op->entry == RP_E_cuLaunchKernel_ptsz)
            return (op->entry == RP_E_cuLaunchKernel ? D->cuLaunchKernel : D->cuLaunchKernel_ptsz)(
                op->func, op->grid[0], op->grid[1], op->grid[2], op->block[0], op->block[1],
                op->block[2], op->shmem, op->stream, kp, NULL);
        CUlaunchConfig c;
        launch_config(op, op->stream, &c);
        return (op->entry == RP_E_cuLaunchKernelEx ? D->cuLaunchKernelEx : D->cuLaunchKernelEx_ptsz)(
            &c, op->func, kp, NULL);
    }
    default:
        return rp__rec_issue_entry(op);
    }
}

int rp__rec_is_pinned(const void *host)
{
    const struct rp__driver *D = rp__eng.drv;
    unsigned int type = 0;
    if (!host)
        return 0;
    CUresult rc = D->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                           (CUdeviceptr)(uintptr_t)host);
    return rc == CUDA_SUCCESS && type == CU_MEMORYTYPE_HOST;
}

int rp__rec_device_range_ok(CUdeviceptr p, size_t n)
{
    const struct rp__driver *D = rp__eng.drv;
    CUdeviceptr start = 0;
    size_t size = 0;
    if (!p || !n ||
        D->cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) != CUDA_SUCCESS ||
        D->cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) != CUDA_SUCCESS)
        return 0;
    return p >= start && p - start <= size && n <= size - (p - start);
}

int rp__rec_launch_fits(rp_ctxstate *cs, const rp_op *want, const rp_op *launched,
                        const unsigned int *g)
{
    const struct rp__driver *D = rp__eng.drv;
    if (launched && rp__geometry_within(launched->grid, g))
        return 1;
    int kernel = (want->flags & RP_OPF_KERNEL_HANDLE) != 0;
    layout *L = layout_of(cs, want->func, kernel);
    if (!L || !D->cuFuncGetAttribute)
        return 0;
    /* A CUkernel's limits are its function's in the current context (the
     * launch's: a launch names a stream of the current context). */
    CUfunction fn = (CUfunction)want->func;
    unsigned int shmem_had = launched ? launched->shmem : 0;
    int ask_shmem = g[6] > shmem_had; /* no dynamic shared memory never fails */
    if ((L->max_threads == 0 || ask_shmem) && kernel &&
        (!D->cuKernelGetFunction || D->cuKernelGetFunction(&fn, (CUkernel)want->func) != CUDA_SUCCESS))
        return 0;
    if (L->max_threads == 0) {
        int v = 0;
        L->max_threads = D->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) ==
                                 CUDA_SUCCESS && v > 0 ? v : -1;
    }
    if (L->max_threads < 0 || (uint64_t)g[3] * g[4] * g[5] > (uint64_t)L->max_threads)
        return 0;
    if (!ask_shmem)
        return 1;
    /* Asked each time: the program may raise it (cuFuncSetAttribute). */
    int max_shmem = -1;
    return D->cuFuncGetAttribute(&max_shmem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn) ==
               CUDA_SUCCESS && max_shmem >= 0 && g[6] <= (unsigned int)max_shmem;
}

/* Forget the context's layouts (its functions may be unloaded and their
 * handles reused). The CUkernel set stays: a stale entry can only make a
 * reused handle look like a CUkernel, whose parameter query then fails, so
 * that kernel's launches run eagerly, never wrongly. */
void rp__rec_reset(rp_ctxstate *cs)
{
    free(cs->layouts);
    cs->layouts = NULL;
    cs->nfuncs = 0;
    memset(cs->fcache, 0, sizeof cs->fcache);
}

void rp__rec_forget_kernels(void)
{
    pthread_mutex_lock(&kernels_lock);
    for (size_t i = 0; i < KERNEL_SLOTS; i++)
        atomic_store(&kernels[i], NULL);
    nkernels = 0;
    pthread_mutex_unlock(&kernels_lock);
}
