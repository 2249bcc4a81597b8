/* fakedrv.c - a table of fake driver entry points for the engine's unit
 * tests (test_engine, test_match): no CPU driver, no threads. The fakes write
 * every call that does work into a log ("k1@S" a launch of kernel 1 on
 * stream S, "k1@S+pss" one through cuLaunchKernelEx with programmatic
 * stream serialization on, "+pss0" with it off, "graph2@S" a launch of a
 * 2-op graph, "m@S" a memset, "sync@S", "alloc", ...),
 * and a call issued while a capture is open on the private stream goes into
 * the captured graph instead. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fakedrv.h"



char log_[8192];
CUcontext current;
int capturing;        /* a capture is open on S_PRIVATE */
int captured_ops;     /* ops in the graph being captured */
int captured_attrs;   /* launch attributes the captured launches carried */
int graph_ops[64];    /* per graph handle (1-based): its op count */
unsigned char node_off[64][64]; /* per executable (its handle - 1), per op: disabled */
int node_enables;
int fail_node_enable;
int ngraphs;
int fail_graph_launch;

void note(const char *fmt, ...)
{
    char w[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w, sizeof w, fmt, ap);
    va_end(ap);
    size_t n = strlen(log_);
    snprintf(log_ + n, sizeof log_ - n, "%s%s", n ? " " : "", w);
}

const char *sname(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY ? "L"
           : s == CU_STREAM_PER_THREAD         ? "P"
           : s == S_BLOCKING                   ? "B"
           : s == S_NONBLOCK                   ? "N"
           : s == S_PRIVATE                    ? "priv"
                                               : "?";
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static CUresult CUDAAPI f_ctx_get_current(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_stream_get_ctx(CUstream s, CUcontext *c) { *c = current; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_stream_get_flags(CUstream s, unsigned int *f)
{
    *f = s == S_NONBLOCK || s == S_PRIVATE ? CU_STREAM_NON_BLOCKING : 0;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_stream_create(CUstream *s, unsigned int f) { *s = S_PRIVATE; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_ok_stream(CUstream s) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_stream_sync(CUstream s) { note("sync@%s", sname(s)); return CUDA_SUCCESS; }
static CUresult CUDAAPI f_event_create(CUevent *e, unsigned int f) { *e = (CUevent)0x77; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_event_destroy(CUevent e) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_event_record(CUevent e, CUstream s) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_event_sync(CUevent e) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_wait_event(CUstream s, CUevent e, unsigned int f) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_pointer_attr(void *d, CUpointer_attribute a, CUdeviceptr p)
{
    *(unsigned int *)d = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}
/* Every fake kernel takes (u64 pointer, int n): 12 bytes at offsets 0, 8. */
static CUresult CUDAAPI f_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    if (i >= 2)
        return CUDA_ERROR_INVALID_VALUE;
    *off = i ? 8 : 0;
    *size = i ? 4 : 8;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_kparam_info(CUkernel k, size_t i, size_t *off, size_t *size)
{
    return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_func_name(const char **name, CUfunction f) { *name = "fake"; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_kernel_name(const char **name, CUkernel k) { *name = "fake"; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                 unsigned int bx, unsigned int by, unsigned int bz,
                                 unsigned int shmem, CUstream s, void **kp, void **extra)
{
    if (capturing && s == S_PRIVATE)
        captured_ops++;
    else
        note("k%d@%s", (int)((uintptr_t)f - 0x100), sname(s));
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **extra)
{
    int pss = -1; /* absent */
    for (unsigned int i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            pss = c->attrs[i].value.programmaticStreamSerializationAllowed != 0;
    if (capturing && c->hStream == S_PRIVATE) {
        captured_ops++;
        captured_attrs += (int)c->numAttrs;
    } else {
        note("k%d@%s%s", (int)((uintptr_t)f - 0x100), sname(c->hStream),
             pss < 0 ? "" : pss ? "+pss" : "+pss0");
    }
    return CUDA_SUCCESS;
}
/* A memset ("m@S"), captured like a launch. */
static CUresult CUDAAPI f_memset32(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    if (capturing && s == S_PRIVATE)
        captured_ops++;
    else
        note("m@%s", sname(s));
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_begin_capture(CUstream s, CUstreamCaptureMode m)
{
    capturing = 1;
    captured_ops = 0;
    captured_attrs = 0;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_capture_info(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                       CUgraph *g, const CUgraphNode **deps, size_t *nd)
{
    static CUgraphNode node[64];
    *st = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    node[captured_ops] = (CUgraphNode)(uintptr_t)(0x500 + captured_ops);
    *deps = &node[captured_ops];
    *nd = 1;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_end_capture(CUstream s, CUgraph *g)
{
    capturing = 0;
    graph_ops[ngraphs] = captured_ops;
    *g = (CUgraph)(uintptr_t)++ngraphs;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    size_t have = (size_t)graph_ops[(uintptr_t)g - 1];
    for (size_t i = 0; nodes && i < have && i < *n; i++)
        nodes[i] = (CUgraphNode)(uintptr_t)(0x500 + i);
    *n = have;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_node_type(CUgraphNode n, CUgraphNodeType *t)
{
    *t = CU_GRAPH_NODE_TYPE_KERNEL;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_instantiate(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    *e = (CUgraphExec)g;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_graph_launch(CUgraphExec e, CUstream s)
{
    if (fail_graph_launch)
        return CUDA_ERROR_LAUNCH_FAILED;
    size_t x = (uintptr_t)e - 1, n = (size_t)graph_ops[x], on = 0;
    char ops[256] = "";
    for (size_t i = 0; i < n && i < 64; i++) {
        if (node_off[x][i])
            continue;
        size_t l = strlen(ops);
        snprintf(ops + l, sizeof ops - l, "%s%zu", on++ ? "," : "", i);
    }
    if (on == n)
        note("graph%d@%s", (int)n, sname(s));
    else /* a part: the ops whose nodes are enabled */
        note("graph%d@%s(%s)", (int)n, sname(s), ops);
    return CUDA_SUCCESS;
}
/* Nodes are 0x500 + their op's index (f_capture_info); executables are
 * their graph's handle. */
static CUresult CUDAAPI f_node_enable(CUgraphExec e, CUgraphNode nd, unsigned int on)
{
    size_t x = (uintptr_t)e - 1, i = (uintptr_t)nd - 0x500;
    if (fail_node_enable || x >= 64 || i >= 64)
        return CUDA_ERROR_INVALID_VALUE;
    node_off[x][i] = !on;
    node_enables++;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_graph_upload(CUgraphExec e, CUstream s) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_graph_destroy(CUgraph g) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_exec_destroy(CUgraphExec e) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_mem_alloc(CUdeviceptr *p, size_t n) { note("alloc"); *p = 0x9000; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_ctx_push(CUcontext c) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_ctx_pop(CUcontext *c) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_ctx_sync(void) { note("ctxsync"); return CUDA_SUCCESS; }
static CUresult CUDAAPI f_host_alloc(void **p, size_t n, unsigned int f) { return CUDA_ERROR_OUT_OF_MEMORY; }
static CUresult CUDAAPI f_host_free(void *p) { return CUDA_SUCCESS; }
static CUresult CUDAAPI f_unused(void) { return CUDA_ERROR_NOT_SUPPORTED; }
#pragma GCC diagnostic pop

struct rp__driver fake, core;

void build_fake(void)
{
    memset(&fake, 0, sizeof fake);
    /* Every entry the engine checks for exists; those no test reaches fail. */
#define X(name, params, args, role) fake.name = (CUresult(CUDAAPI *) params)(void *)f_unused;
    RP_ENTRIES(X)
    RP_HELPERS(X)
#undef X
    fake.cuCtxGetCurrent = f_ctx_get_current;
    fake.cuStreamGetCtx = f_stream_get_ctx;
    fake.cuStreamGetFlags = f_stream_get_flags;
    fake.cuStreamCreate = f_stream_create;
    fake.cuStreamSynchronize = f_stream_sync;
    fake.cuStreamDestroy_v2 = f_ok_stream;
    fake.cuEventCreate = f_event_create;
    fake.cuEventDestroy_v2 = f_event_destroy;
    fake.cuEventRecord = f_event_record;
    fake.cuEventSynchronize = f_event_sync;
    fake.cuStreamWaitEvent = f_wait_event;
    fake.cuPointerGetAttribute = f_pointer_attr;
    fake.cuFuncGetParamInfo = f_param_info;
    fake.cuKernelGetParamInfo = f_kparam_info;
    fake.cuFuncGetName = f_func_name;
    fake.cuKernelGetName = f_kernel_name;
    fake.cuLaunchKernel = f_launch;
    fake.cuLaunchKernelEx = f_launch_ex;
    fake.cuMemsetD32Async = f_memset32;
    fake.cuStreamBeginCapture_v2 = f_begin_capture;
    fake.cuStreamGetCaptureInfo_v2 = f_capture_info;
    fake.cuStreamEndCapture = f_end_capture;
    fake.cuGraphGetNodes = f_graph_nodes;
    fake.cuGraphNodeGetType = f_node_type;
    fake.cuGraphInstantiateWithFlags = f_instantiate;
    fake.cuGraphLaunch = f_graph_launch;
    fake.cuGraphNodeSetEnabled = f_node_enable;
    memset(node_off, 0, sizeof node_off);
    node_enables = 0;
    fail_node_enable = 0;
    fake.cuGraphUpload = f_graph_upload;
    fake.cuGraphDestroy = f_graph_destroy;
    fake.cuGraphExecDestroy = f_exec_destroy;
    fake.cuMemAlloc_v2 = f_mem_alloc;
    fake.cuCtxPushCurrent_v2 = f_ctx_push;
    fake.cuCtxPopCurrent_v2 = f_ctx_pop;
    fake.cuCtxSynchronize = f_ctx_sync;
    fake.cuMemHostAlloc = f_host_alloc;
    fake.cuMemFreeHost = f_host_free;
}

