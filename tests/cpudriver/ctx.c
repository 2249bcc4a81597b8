/* ctx.c - initialisation, the devices (one, or two with CPUCUDA_DEVICES=2:
 * the same CPU behind two ordinals, each with its own primary context, so
 * that a program can alternate between two devices' contexts), and
 * contexts: the primary contexts,
 * created contexts and the per-thread stack of current contexts. A context
 * owns its streams (the legacy stream among them) and its allocations. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CC_CTX_STACK 64
static __thread cc_ctx *tl_stack[CC_CTX_STACK];
static __thread int tl_depth;

static cc_ctx primary[CC_MAX_DEVICES];
static unsigned primary_flags[CC_MAX_DEVICES];

static bool dev_ok(CUdevice dev)
{
    return dev >= 0 && dev < cc__g.ndev;
}

bool cc__ctx_ok(cc_ctx *c)
{
    return c && cc__handle_is(c, CC_K_CTX) && c->active;
}

CUresult cc__ctx_current(cc_ctx **out)
{
    cc_ctx *c = tl_depth ? tl_stack[tl_depth - 1] : NULL;
    if (!cc__ctx_ok(c)) return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

/* Waits until every stream of c has run what was submitted to it. cc__wait
 * drops the lock, and meanwhile another thread may destroy a stream and its
 * worker unlink and free it: so hold a reference across each wait and walk
 * the list again from its head afterwards. */
void cc__ctx_drain(cc_ctx *c)
{
restart:
    for (cc_stream *s = c->streams; s; s = s->next_in_ctx) {
        if (s->completed >= s->submitted)
            continue;
        cc__stream_ref(s);
        cc__wait(s, s->submitted);
        cc__stream_unref(s);
        goto restart;
    }
}

void cc__device_drain(void)
{
    for (cc_ctx *c = cc__g.ctxs; c; c = c->next)
        if (c->active) cc__ctx_drain(c);
}

/* Makes c usable: its legacy stream and worker. OUT_OF_MEMORY leaves c inactive. */
static CUresult ctx_activate(cc_ctx *c, unsigned flags)
{
    c->id = cc__g.next_id++;
    c->flags = flags;
    c->streams = NULL;
    c->legacy = cc__stream_new(c, CC_S_LEGACY, 0);
    if (!c->legacy) return CUDA_ERROR_OUT_OF_MEMORY;
    c->active = true;
    return CUDA_SUCCESS;
}

/* Tears down what c owns, after its work completed: streams stop, memory is
 * released (pointers into it become invalid, as on a GPU). */
static void ctx_teardown(cc_ctx *c)
{
    cc__ctx_drain(c);
    for (cc_capture *cap = cc__g.captures; cap; cap = cap->next)
        if (cap->ctx == c) cc__capture_invalidate(cap, "context destroyed");
    cc_stream *s = c->streams;
    c->streams = NULL;
    c->legacy = NULL;
    while (s) {
        cc_stream *n = s->next_in_ctx;
        /* Destroyed ones are retiring already. A created stream leaves the
         * registry here: its memory is freed when its worker exits, and a
         * stale entry would shadow whatever object is allocated there next. */
        if (!s->dead) {
            if (s->kind == CC_S_USER) cc__handle_del(s);
            cc__stream_retire(s);
        }
        s = n;
    }
    cc__mem_release_ctx(c);
    c->active = false;
}

CC_EXPORT CUresult cuInit(unsigned int Flags)
{
    CC_ENTER(cuInit);
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (cc__forked_child()) return CUDA_ERROR_NOT_INITIALIZED; /* see counters.c */
    cc__lock();
    if (!cc__g.initialized) {
        const char *nd = getenv("CPUCUDA_DEVICES");
        cc__g.ndev = nd && !strcmp(nd, "2") ? 2 : 1;
        if (nd && strcmp(nd, "1") && strcmp(nd, "2"))
            fprintf(stderr, "cpucuda: CPUCUDA_DEVICES=%s: want 1 or 2; one device\n", nd);
        for (int d = 0; d < cc__g.ndev; d++) {
            primary[d].primary = true;
            primary[d].dev = d;
            cc__handle_add(&primary[d], CC_K_CTX);
            primary[d].next = cc__g.ctxs;
            cc__g.ctxs = &primary[d];
        }
        cc__g.initialized = true;
    }
    cc__unlock();
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    CC_ENTER(cuDriverGetVersion);
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CC_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

#define INIT_OR_RETURN()                                   \
    do {                                                   \
        CUresult r_ = cc__check_init();                    \
        if (r_) return r_;                                 \
    } while (0)

CC_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CC_ENTER(cuDeviceGet);
    INIT_OR_RETURN();
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDeviceGetCount(int *count)
{
    CC_ENTER(cuDeviceGetCount);
    INIT_OR_RETURN();
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = cc__g.ndev;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CC_ENTER(cuDeviceGetName);
    INIT_OR_RETURN();
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (cc__g.ndev > 1) snprintf(name, (size_t)len, "cpucuda CPU device %d", dev);
    else snprintf(name, (size_t)len, "%s", "cpucuda CPU device");
    return CUDA_SUCCESS;
}

#define CC_TOTAL_MEM (80ULL << 30)

CC_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    CC_ENTER(cuDeviceGetAttribute);
    INIT_OR_RETURN();
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if ((int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    int v = 0;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = 2; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = 52428800; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: v = 1; break;
    default: v = 0; break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    CC_ENTER(cuDeviceTotalMem);
    INIT_OR_RETURN();
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = 0xffffffffu; /* the v1 ABI cannot say 80 GiB */
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CC_ENTER(cuDeviceTotalMem_v2);
    INIT_OR_RETURN();
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)CC_TOTAL_MEM;
    return CUDA_SUCCESS;
}

/* ---- primary context ---------------------------------------------------- */

static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
    INIT_OR_RETURN();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    cc__lock();
    CUresult r = CUDA_SUCCESS;
    cc_ctx *p = &primary[dev];
    if (!p->active) r = ctx_activate(p, primary_flags[dev]);
    if (!r) {
        p->primary_refs++;
        *pctx = (CUcontext)p;
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CC_ENTER(cuDevicePrimaryCtxRetain);
    return primary_retain(pctx, dev);
}

static CUresult primary_release(CUdevice dev)
{
    INIT_OR_RETURN();
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    cc__lock();
    CUresult r = CUDA_SUCCESS;
    cc_ctx *p = &primary[dev];
    if (!p->active || p->primary_refs <= 0) r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--p->primary_refs == 0) ctx_teardown(p);
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    CC_ENTER(cuDevicePrimaryCtxRelease);
    return primary_release(dev);
}

CC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CC_ENTER(cuDevicePrimaryCtxRelease_v2);
    return primary_release(dev);
}

static CUresult primary_reset(CUdevice dev)
{
    INIT_OR_RETURN();
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    cc__lock();
    if (primary[dev].active) {
        ctx_teardown(&primary[dev]);
        primary[dev].primary_refs = 0;
    }
    primary_flags[dev] = 0;
    cc__unlock();
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    CC_ENTER(cuDevicePrimaryCtxReset);
    return primary_reset(dev);
}

CC_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CC_ENTER(cuDevicePrimaryCtxReset_v2);
    return primary_reset(dev);
}

CC_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CC_ENTER(cuDevicePrimaryCtxGetState);
    INIT_OR_RETURN();
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    cc__lock();
    *flags = primary_flags[dev];
    *active = primary[dev].active;
    cc__unlock();
    return CUDA_SUCCESS;
}

#define CC_CTX_FLAGS_VALID 0x3fu /* sched mask | map host | lmem resize */

static CUresult primary_set_flags(CUdevice dev, unsigned flags)
{
    INIT_OR_RETURN();
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~CC_CTX_FLAGS_VALID) return CUDA_ERROR_INVALID_VALUE;
    cc__lock();
    primary_flags[dev] = flags;
    if (primary[dev].active) primary[dev].flags = flags;
    cc__unlock();
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    CC_ENTER(cuDevicePrimaryCtxSetFlags);
    return primary_set_flags(dev, flags);
}

CC_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CC_ENTER(cuDevicePrimaryCtxSetFlags_v2);
    return primary_set_flags(dev, flags);
}

/* ---- created contexts and the current-context stack --------------------- */

/* Creates a context and pushes it on this thread's stack. */
static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    INIT_OR_RETURN();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~CC_CTX_FLAGS_VALID) return CUDA_ERROR_INVALID_VALUE;
    if (tl_depth == CC_CTX_STACK) return CUDA_ERROR_OUT_OF_MEMORY;
    cc_ctx *c = calloc(1, sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    cc__lock();
    c->dev = dev;
    CUresult r = ctx_activate(c, flags);
    if (r) {
        cc__unlock();
        free(c);
        return r;
    }
    cc__handle_add(c, CC_K_CTX);
    c->next = cc__g.ctxs;
    cc__g.ctxs = c;
    tl_stack[tl_depth++] = c;
    *pctx = (CUcontext)c;
    cc__unlock();
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CC_ENTER(cuCtxCreate);
    return ctx_create(pctx, flags, dev);
}

CC_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CC_ENTER(cuCtxCreate_v2);
    return ctx_create(pctx, flags, dev);
}

CC_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                  unsigned int flags, CUdevice dev)
{
    CC_ENTER(cuCtxCreate_v3);
    if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
    if (numParams > 0) return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return ctx_create(pctx, flags, dev);
}

CC_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                  unsigned int flags, CUdevice dev)
{
    CC_ENTER(cuCtxCreate_v4);
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams))
        return CUDA_ERROR_NOT_SUPPORTED;
    return ctx_create(pctx, flags, dev);
}

/* Destroys a created context; it is removed from this thread's stack if
 * current. INVALID_CONTEXT for the primary context or a stale handle. */
static CUresult ctx_destroy(CUcontext ctx)
{
    INIT_OR_RETURN();
    cc_ctx *c = (cc_ctx *)ctx;
    cc__lock();
    if (!cc__ctx_ok(c) || c->primary) {
        cc__unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    ctx_teardown(c);
    cc__handle_del(c);
    for (cc_ctx **pp = &cc__g.ctxs; *pp; pp = &(*pp)->next)
        if (*pp == c) { *pp = c->next; break; }
    /* The object itself is kept (never reused): other threads may still
     * hold it as current, and the registry then answers INVALID_CONTEXT.
     * Kept on a list, so that it is not a leak either. */
    c->next = cc__g.retired;
    cc__g.retired = c;
    if (tl_depth && tl_stack[tl_depth - 1] == c) tl_depth--;
    cc__unlock();
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
    CC_ENTER(cuCtxDestroy);
    return ctx_destroy(ctx);
}

CC_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CC_ENTER(cuCtxDestroy_v2);
    return ctx_destroy(ctx);
}

CC_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CC_ENTER(cuCtxSetCurrent);
    INIT_OR_RETURN();
    cc_ctx *c = (cc_ctx *)ctx;
    cc__lock();
    bool ok = !c || cc__handle_is(c, CC_K_CTX);
    cc__unlock();
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    if (!c) {
        if (tl_depth) tl_depth--;
    } else if (tl_depth) {
        tl_stack[tl_depth - 1] = c;
    } else {
        tl_stack[tl_depth++] = c;
    }
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CC_ENTER(cuCtxGetCurrent);
    INIT_OR_RETURN();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = tl_depth ? (CUcontext)tl_stack[tl_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

static CUresult ctx_push(CUcontext ctx)
{
    INIT_OR_RETURN();
    cc_ctx *c = (cc_ctx *)ctx;
    cc__lock();
    bool ok = cc__ctx_ok(c);
    cc__unlock();
    if (!ok) return CUDA_ERROR_INVALID_CONTEXT;
    if (tl_depth == CC_CTX_STACK) return CUDA_ERROR_OUT_OF_MEMORY;
    tl_stack[tl_depth++] = c;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    CC_ENTER(cuCtxPushCurrent);
    return ctx_push(ctx);
}

CC_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CC_ENTER(cuCtxPushCurrent_v2);
    return ctx_push(ctx);
}

static CUresult ctx_pop(CUcontext *pctx)
{
    INIT_OR_RETURN();
    if (!tl_depth) return CUDA_ERROR_INVALID_CONTEXT;
    cc_ctx *c = tl_stack[--tl_depth];
    if (pctx) *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    CC_ENTER(cuCtxPopCurrent);
    return ctx_pop(pctx);
}

CC_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CC_ENTER(cuCtxPopCurrent_v2);
    return ctx_pop(pctx);
}

/* The context a call names: ctx, or the current one when ctx is NULL. */
static CUresult ctx_named(CUcontext ctx, cc_ctx **out)
{
    if (!ctx) return cc__ctx_current(out);
    if (!cc__ctx_ok((cc_ctx *)ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *out = (cc_ctx *)ctx;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    CC_ENTER(cuCtxGetDevice);
    INIT_OR_RETURN();
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    cc_ctx *c;
    cc__lock();
    CUresult r = cc__ctx_current(&c);
    if (!r) *device = c->dev;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    CC_ENTER(cuCtxGetDevice_v2);
    INIT_OR_RETURN();
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    cc_ctx *c;
    cc__lock();
    CUresult r = ctx_named(ctx, &c);
    if (!r) *device = c->dev;
    cc__unlock();
    return r;
}

/* Waits for all work of the context; 900 and invalidation while a stream of
 * it captures (the real driver refuses to synchronize a capture). */
static CUresult ctx_sync(CUcontext ctx)
{
    INIT_OR_RETURN();
    cc_ctx *c;
    cc__lock();
    CUresult r = ctx_named(ctx, &c);
    if (!r) r = cc__capture_ctx_sync(c);
    if (!r) {
        cc__count(CC_C_SYNC_CTX);
        cc__ctx_drain(c);
    }
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuCtxSynchronize(void)
{
    CC_ENTER(cuCtxSynchronize);
    return ctx_sync(NULL);
}

CC_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    CC_ENTER(cuCtxSynchronize_v2);
    return ctx_sync(ctx);
}

CC_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    CC_ENTER(cuCtxGetApiVersion);
    INIT_OR_RETURN();
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    cc_ctx *c;
    cc__lock();
    CUresult r = ctx_named(ctx, &c);
    cc__unlock();
    if (!r) *version = 3020;
    return r;
}

CC_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
    CC_ENTER(cuCtxGetFlags);
    INIT_OR_RETURN();
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    cc_ctx *c;
    cc__lock();
    CUresult r = cc__ctx_current(&c);
    if (!r) *flags = c->flags;
    cc__unlock();
    return r;
}

CC_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    CC_ENTER(cuCtxGetId);
    INIT_OR_RETURN();
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    cc_ctx *c;
    cc__lock();
    CUresult r = ctx_named(ctx, &c);
    if (!r) *ctxId = c->id;
    cc__unlock();
    return r;
}
