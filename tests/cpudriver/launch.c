/* launch.c - kernel launches: validation as strict as the real driver's,
 * the parameter bytes copied at the call (kernelParams or an `extra`
 * buffer), and the launch queued as one op (or captured as a node). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define CC_MAX_SHARED 49152u /* without the opt-in attribute, which we lack */

CUresult cc__kernel_work(CUfunction f, cpuk_dim3 g, cpuk_dim3 b, unsigned shmem, void **params,
                         void **extra, cc_work *w)
{
    cc_func *fn;
    cc_kern *kern;
    CUresult r = cc__func_resolve(f, &fn, &kern);
    if (r) return r;
    if (!g.x || !g.y || !g.z || g.x > 2147483647u || g.y > 65535u || g.z > 65535u) return CUDA_ERROR_INVALID_VALUE;
    if (!b.x || !b.y || !b.z || b.x > 1024u || b.y > 1024u || b.z > 64u) return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned long long)b.x * b.y * b.z > 1024u) return CUDA_ERROR_INVALID_VALUE;
    if (shmem > CC_MAX_SHARED) return CUDA_ERROR_INVALID_VALUE;
    /* With kernelParams, an `extra` that carries nothing (ends at once) is
     * ignored and the kernelParams are used; one that carries anything is
     * INVALID_VALUE (both observed on an H200, driver 580.159.04). */
    if (params && extra && extra[0] == CU_LAUNCH_PARAM_END) extra = NULL;
    if (params && extra) return CUDA_ERROR_INVALID_VALUE;
    const cpuk_kernel *k = fn->k;
    size_t argsz = cc__kernel_argsize(k);
    const void *buf = NULL;
    if (extra) {
        /* Pairs BUFFER_POINTER/BUFFER_SIZE, ended by END or NULL; the size
         * must be exactly the kernel's parameter buffer. */
        const void *p = NULL;
        size_t *sz = NULL;
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END && extra[i] != NULL; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) p = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) sz = extra[i + 1];
            else return CUDA_ERROR_INVALID_VALUE;
        }
        if (!p || !sz || *sz != argsz) return CUDA_ERROR_INVALID_VALUE;
        buf = p;
    } else if (k->nparams && !params) {
        return CUDA_ERROR_INVALID_VALUE;
    } else if (params) {
        for (unsigned i = 0; i < k->nparams; i++)
            if (!params[i]) return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned char *args = argsz ? malloc(argsz) : NULL;
    void **argv = k->nparams ? calloc(k->nparams, sizeof *argv) : NULL;
    if ((argsz && !args) || (k->nparams && !argv)) {
        free(args);
        free(argv);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (argsz) memset(args, 0, argsz);
    if (buf) memcpy(args, buf, argsz);
    for (unsigned i = 0; i < k->nparams; i++) {
        if (!buf) memcpy(args + k->params[i].offset, params[i], k->params[i].size);
        argv[i] = args + k->params[i].offset;
    }
    memset(w, 0, sizeof *w);
    w->kind = CC_W_KERNEL;
    w->u.k.f = fn;
    w->u.k.kern = kern;
    w->u.k.grid = g;
    w->u.k.block = b;
    w->u.k.shmem = shmem;
    w->u.k.args = args;
    w->u.k.argsz = argsz;
    w->u.k.argv = argv;
    return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, cpuk_dim3 g, cpuk_dim3 b, unsigned shmem, CUstream hs, bool pt,
                       void **params, void **extra, bool cooperative, unsigned attrs)
{
    CUresult r = cc__check_init();
    if (r) return r;
    cc__lock();
    cc_stream *s;
    cc_work w;
    r = cc__stream_get(hs, pt, &s);
    /* Programmatic stream serialization in a capture: the real driver is
     * documented to make it a programmatic edge (unverified); this driver
     * has no such edges, and refuses it as it refuses stream memory
     * operations, so that nothing tested here relies on it. */
    if (!r && (attrs & 1u << CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) && s->cap) {
        cc__capture_invalidate(s->cap, "programmatic stream serialization in a capture");
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (!r) r = cc__kernel_work(f, g, b, shmem, params, extra, &w);
    if (!r) {
        w.ctx = s->ctx;
        /* A module's function belongs to the module's context. */
        if (w.u.k.f->mod && w.u.k.f->mod->ctx != s->ctx) r = CUDA_ERROR_INVALID_HANDLE;
        unsigned threads = b.x * b.y * b.z;
        unsigned per_sm = 2048 / threads;
        if (per_sm > 32) per_sm = 32;
        if (!r && cooperative && (unsigned long long)g.x * g.y * g.z > 132ULL * per_sm)
            r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        w.u.k.attrs = attrs | (cooperative ? 1u << CU_LAUNCH_ATTRIBUTE_COOPERATIVE : 0u);
        if (r) {
            cc__work_free(&w);
        } else {
            cc_fid fid;
            cc__fid_launch(&w, &fid); /* before the op owns the work */
            r = cc__stream_op(s, &w, NULL, NULL);
            if (!r) cc__fid_add(&fid);
        }
    }
    cc__unlock();
    return r;
}

#define DIM3(x, y, z) ((cpuk_dim3){(x), (y), (z)})

CC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                  unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    CC_ENTER(cuLaunchKernel);
    return launch(f, DIM3(gridDimX, gridDimY, gridDimZ), DIM3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                  hStream, false, kernelParams, extra, false, 0);
}

CC_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                       void **kernelParams, void **extra)
{
    CC_ENTER(cuLaunchKernel_ptsz);
    return launch(f, DIM3(gridDimX, gridDimY, gridDimZ), DIM3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                  hStream, true, kernelParams, extra, false, 0);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                             void **kernelParams)
{
    CC_ENTER(cuLaunchCooperativeKernel);
    return launch(f, DIM3(gridDimX, gridDimY, gridDimZ), DIM3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                  hStream, false, kernelParams, NULL, true, 0);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                  unsigned int gridDimZ, unsigned int blockDimX,
                                                  unsigned int blockDimY, unsigned int blockDimZ,
                                                  unsigned int sharedMemBytes, CUstream hStream,
                                                  void **kernelParams)
{
    CC_ENTER(cuLaunchCooperativeKernel_ptsz);
    return launch(f, DIM3(gridDimX, gridDimY, gridDimZ), DIM3(blockDimX, blockDimY, blockDimZ), sharedMemBytes,
                  hStream, true, kernelParams, NULL, true, 0);
}

/* Attributes we can honour (all are hints or no-ops on one CPU worker, or
 * a trivial 1x1x1 cluster); anything else is NOT_SUPPORTED. Those a kernel
 * carries are kept with its work (eager or captured into a node) and
 * counted when it runs (kernel.attr.*), so that a test can tell an
 * attribute that reached the kernel from one that was dropped.
 * Programmatic stream serialization (non-zero) is honoured eagerly by
 * running the kernel after the whole of its predecessor, which the
 * attribute allows ("opportunistically"); in a capture it is refused
 * (launch()). */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra, bool pt)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (c->numAttrs && !c->attrs) return CUDA_ERROR_INVALID_VALUE;
    bool coop = false;
    unsigned attrs = 0;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            break;
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
            if (a->value.programmaticStreamSerializationAllowed)
                attrs |= 1u << CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            break;
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
            if (a->value.priority) attrs |= 1u << CU_LAUNCH_ATTRIBUTE_PRIORITY;
            break;
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
            if (a->value.memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT)
                attrs |= 1u << CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            coop = a->value.cooperative != 0;
            break;
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            if (a->value.clusterDim.x != 1 || a->value.clusterDim.y != 1 || a->value.clusterDim.z != 1)
                return CUDA_ERROR_NOT_SUPPORTED;
            attrs |= 1u << CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            break;
        default:
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    return launch(f, DIM3(c->gridDimX, c->gridDimY, c->gridDimZ), DIM3(c->blockDimX, c->blockDimY, c->blockDimZ),
                  c->sharedMemBytes, c->hStream, pt, params, extra, coop, attrs);
}

CC_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    CC_ENTER(cuLaunchKernelEx);
    return launch_ex(config, f, kernelParams, extra, false);
}

CC_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                         void **extra)
{
    CC_ENTER(cuLaunchKernelEx_ptsz);
    return launch_ex(config, f, kernelParams, extra, true);
}
