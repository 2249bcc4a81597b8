/* drv_update_rules.c - what an executable graph's node may change, by
 * cuGraphExec{Kernel,Memset,Memcpy}NodeSetParams and cuGraphExecUpdate, as
 * the driver API reference states it (cuda.h of CUDA 13.0, the comments
 * above those functions; each test quotes the passage it follows). What the
 * reference allows takes effect for later launches and not for a launch
 * already queued; what it forbids returns CUDA_ERROR_INVALID_VALUE (910 with
 * a reason for a whole-graph update) and changes nothing. Where the
 * reference leaves the answer open the CPU driver refuses, and the test says
 * "unverified on a GPU". The shim sets grids, extents and addresses on
 * executables it replays (issue 17): a CPU driver that allowed more than a
 * GPU would hide failures a GPU shows; one that allowed less would hide
 * replays a GPU can do. */
#include "drvtest.h"

#include <string.h>

#pragma weak cuGraphExecMemsetNodeSetParams
#pragma weak cuGraphExecKernelNodeSetParams
#pragma weak cuMemsetD2D32Async
#pragma weak cuMemcpy2DAsync_v2

#define TAG_GATE 1u

static CUgraphExec instantiate(CUgraph g)
{
    CUgraphExec e = NULL;
    CU_OK(cuGraphInstantiate(&e, g, 0));
    drv_track_exec(e);
    return e;
}

static CUgraph end_capture(CUstream s)
{
    CUgraph g = NULL;
    CU_OK(cuStreamEndCapture(s, &g));
    assert_non_null(g);
    drv_track_graph(g);
    return g;
}

/* The graph's only node. */
static CUgraphNode only_node(CUgraph g)
{
    CUgraphNode n[2];
    size_t count = 2;
    CU_OK(cuGraphGetNodes(g, n, &count));
    assert_int_equal(count, 1);
    return n[0];
}

static void run(CUgraphExec e, CUstream s)
{
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
}

static void read_ints(int *h, CUdeviceptr p, size_t n) { CU_OK(cuMemcpyDtoH(h, p, n * sizeof(int))); }

/* A created context holding its own device memory and kernel module; the
 * primary context is made current again. Destroyed by ctx2_end. */
struct ctx2 {
    CUcontext c;
    CUdeviceptr mem;
    CUfunction set;
};

static struct ctx2 ctx2_new(void)
{
    struct ctx2 o;
    CUmodule m;
    CU_OK(cuCtxCreate_v4(&o.c, NULL, 0, drv_dev));
    CU_OK(cuMemAlloc(&o.mem, 64));
    CU_OK(cuModuleLoad(&m, DRV_KERNELS_PATH));
    CU_OK(cuModuleGetFunction(&o.set, m, "drv_set"));
    CU_OK(cuCtxSetCurrent(drv_ctx));
    return o;
}

static void ctx2_end(struct ctx2 *o) { CU_OK(cuCtxDestroy_v2(o->c)); }

/* ---- kernel nodes ---------------------------------------------------------- */

/* Captures drv_dims(out) with the given grid and block. */
static CUgraph capture_dims(CUstream s, CUdeviceptr out, unsigned gx, unsigned bx)
{
    void *args[] = {&out};
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuLaunchKernel(drv_fn("drv_dims"), gx, 1, 1, bx, 1, 1, 0, s, args, NULL));
    return end_capture(s);
}

static CUDA_KERNEL_NODE_PARAMS kparams(CUfunction f, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                                       unsigned shmem, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = gx, p.gridDimY = gy, p.gridDimZ = 1;
    p.blockDimX = bx, p.blockDimY = by, p.blockDimZ = 1;
    p.sharedMemBytes = shmem;
    p.kernelParams = args;
    return p;
}

/* "All nodeParams fields may change, but the following restrictions apply to
 * func updates: The owning context of the function cannot change."
 * (cuGraphExecKernelNodeSetParams). The grid and block dimensions change,
 * and the next launch runs with them: a decode step's growing grid is set
 * on the executable, not captured again. */
static void a_kernel_nodes_grid_and_block_may_change_and_the_next_launch_uses_them(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr out = drv_dalloc(64 * sizeof(int));
    CUgraph g = capture_dims(s, out, 2, 4);
    CUgraphExec e = instantiate(g);
    void *args[] = {&out};
    CUDA_KERNEL_NODE_PARAMS p = kparams(drv_fn("drv_dims"), 3, 2, 8, 2, 0, args);
    CU_OK(cuGraphExecKernelNodeSetParams(e, only_node(g), &p));
    run(e, s);
    int h[8];
    read_ints(h, out, 8);
    int want[8] = {3, 2, 1, 8, 2, 1, 6, 6 * 16};
    assert_memory_equal(h, want, sizeof want);
}

/* The dynamic shared memory is one of "All nodeParams fields" too: each
 * block of the next launch gets the new size (drv_shared reports it). */
static void a_kernel_nodes_dynamic_shared_memory_may_change(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr out = drv_dalloc(16 * sizeof(int));
    void *args[] = {&out};
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuLaunchKernel(drv_fn("drv_shared"), 1, 1, 1, 4, 1, 1, 16, s, args, NULL));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    CUDA_KERNEL_NODE_PARAMS p = kparams(drv_fn("drv_shared"), 2, 1, 8, 1, 4096, args);
    CU_OK(cuGraphExecKernelNodeSetParams(e, only_node(g), &p));
    run(e, s);
    int h[4];
    read_ints(h, out, 4);
    /* sums of tx + block over 8 threads: 28 and 36; then the shared bytes */
    int want[4] = {28, 36, 4096, 4096};
    assert_memory_equal(h, want, sizeof want);
}

/* The function itself may change to another of the same context ("All
 * nodeParams fields may change"; only its owning context is restricted). */
static void a_kernel_nodes_function_may_change_to_another_of_its_context(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = drv_dalloc(sizeof(int));
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, p, 5));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    int v = 3;
    unsigned n = 1;
    void *args[] = {&p, &v, &n};
    CUDA_KERNEL_NODE_PARAMS kp = kparams(drv_fn("drv_add"), 1, 1, 1, 1, 0, args);
    CU_OK(cuGraphExecKernelNodeSetParams(e, only_node(g), &kp));
    run(e, s);
    run(e, s);
    assert_int_equal(drv_read_int(p), 6);
}

/* "The owning context of the function cannot change." A function of a
 * module loaded in another context gets INVALID_VALUE and the executable
 * keeps what it had. */
static void a_kernel_node_set_to_a_function_of_another_context_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    struct ctx2 o = ctx2_new();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = drv_dalloc(sizeof(int));
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, p, 5));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    int v = 9;
    void *args[] = {&p, &v};
    CUDA_KERNEL_NODE_PARAMS kp = kparams(o.set, 1, 1, 1, 1, 0, args);
    unsigned long long updates = drv_counter("graph.exec_updates");
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecKernelNodeSetParams(e, only_node(g), &kp));
    assert_int_equal(drv_counter("graph.exec_updates"), updates);
    run(e, s);
    assert_int_equal(drv_read_int(p), 5);
    ctx2_end(&o);
}

/* The same through a CUkernel: CUDA_KERNEL_NODE_PARAMS_v2's `ctx` names
 * the context it runs in; another context than the node's is a change of
 * owning context: INVALID_VALUE, nothing changed. Its own context (or NULL,
 * "the current context should be used") is accepted. */
static void a_kernel_node_set_to_a_cukernel_in_another_context_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    struct ctx2 o = ctx2_new();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr p = drv_dalloc(sizeof(int));
    CUlibrary lib;
    CUkernel k;
    CU_OK(cuLibraryLoadFromFile(&lib, DRV_KERNELS_PATH, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetKernel(&k, lib, "drv_set"));
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, p, 5));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    int v = 9;
    void *args[] = {&p, &v};
    CUDA_KERNEL_NODE_PARAMS_v2 kp;
    memset(&kp, 0, sizeof kp);
    kp.kern = k;
    kp.ctx = o.c;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecKernelNodeSetParams_v2(e, only_node(g), &kp));
    run(e, s);
    assert_int_equal(drv_read_int(p), 5);
    kp.ctx = NULL;
    CU_OK(cuGraphExecKernelNodeSetParams_v2(e, only_node(g), &kp));
    run(e, s);
    assert_int_equal(drv_read_int(p), 9);
    ctx2_end(&o);
    CU_OK(cuLibraryUnload(lib));
}

/* A launch queued before the grid changes runs with the grid it was launched
 * with: "Already enqueued or running launches of hGraphExec are not affected
 * by this call." */
static void a_launch_queued_before_a_grid_change_keeps_its_grid(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr out = drv_dalloc(64 * sizeof(int));
    CUdeviceptr snap = drv_dalloc(8 * sizeof(int));
    CUgraph g = capture_dims(s, out, 2, 4);
    CUgraphExec e = instantiate(g);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_GATE));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuMemcpyDtoDAsync(snap, out, 8 * sizeof(int), s));
    CU_OK(cuMemsetD32Async(out, 0, 64, s));
    void *args[] = {&out};
    CUDA_KERNEL_NODE_PARAMS p = kparams(drv_fn("drv_dims"), 5, 1, 2, 1, 0, args);
    CU_OK(cuGraphExecKernelNodeSetParams(e, only_node(g), &p));
    CU_OK(cuGraphLaunch(e, s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_GATE);
    int h[8];
    read_ints(h, snap, 8);
    int first[8] = {2, 1, 1, 4, 1, 1, 2, 8};
    assert_memory_equal(h, first, sizeof first);
    read_ints(h, out, 8);
    int second[8] = {5, 1, 1, 2, 1, 1, 5, 10};
    assert_memory_equal(h, second, sizeof second);
}

/* ---- memset nodes ---------------------------------------------------------- */

static CUDA_MEMSET_NODE_PARAMS mparams(CUdeviceptr dst, unsigned value, unsigned esz, size_t w, size_t h,
                                       size_t pitch)
{
    CUDA_MEMSET_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.dst = dst;
    p.value = value;
    p.elementSize = esz;
    p.width = w;
    p.height = h;
    p.pitch = pitch;
    return p;
}

/* A 1-D memset of 4 words at dst, captured. */
static CUgraph capture_memset(CUstream s, CUdeviceptr dst)
{
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemsetD32Async(dst, 1, 4, s));
    return end_capture(s);
}

/* "Both the value and pointer address may be updated" provided the new
 * destination is "the same kind of allocation as the original destination
 * pointer and [has] the same context association"
 * (cuGraphExecMemsetNodeSetParams). */
static void a_memsets_value_and_address_may_change_within_its_context(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr a = drv_dalloc(4 * sizeof(int)), b = drv_dalloc(8 * sizeof(int));
    CUgraph g = capture_memset(s, a);
    CUgraphExec e = instantiate(g);
    CUDA_MEMSET_NODE_PARAMS p = mparams(b + 4 * sizeof(int), 7, 4, 4, 1, 0);
    CU_OK(cuGraphExecMemsetNodeSetParams(e, only_node(g), &p, drv_ctx));
    run(e, s);
    int h[8];
    read_ints(h, b, 8);
    int want[8] = {0, 0, 0, 0, 7, 7, 7, 7};
    assert_memory_equal(h, want, sizeof want);
    assert_int_equal(drv_read_int(a), 0);
}

/* "For 1d memsets, changes in height are explicitly rejected and other
 * changes are opportunistically allowed if the resulting work maps onto the
 * work resources already allocated for the node." Which work maps is not
 * said; the stricter reading refuses a new width or element size too
 * (unverified on a GPU). A new height is refused in every reading. Each
 * refusal changes nothing. */
static void a_1d_memsets_width_element_size_or_height_change_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr a = drv_dalloc(16 * sizeof(int));
    CUgraph g = capture_memset(s, a);
    CUgraphExec e = instantiate(g);
    CUgraphNode n = only_node(g);
    unsigned long long updates = drv_counter("graph.exec_updates");
    CUDA_MEMSET_NODE_PARAMS wider = mparams(a, 7, 4, 8, 1, 0);
    CUDA_MEMSET_NODE_PARAMS narrower = mparams(a, 7, 4, 2, 1, 0);
    CUDA_MEMSET_NODE_PARAMS bytes = mparams(a, 7, 1, 16, 1, 0);
    CUDA_MEMSET_NODE_PARAMS rows = mparams(a, 7, 4, 4, 2, 4 * sizeof(int));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &wider, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &narrower, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &bytes, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &rows, drv_ctx));
    assert_int_equal(drv_counter("graph.exec_updates"), updates);
    run(e, s);
    int h[8];
    read_ints(h, a, 8);
    int want[8] = {1, 1, 1, 1, 0, 0, 0, 0};
    assert_memory_equal(h, want, sizeof want);
}

/* "Zero sized operations are not supported." */
static void a_zero_sized_memset_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr a = drv_dalloc(4 * sizeof(int));
    CUgraph g = capture_memset(s, a);
    CUgraphExec e = instantiate(g);
    CUDA_MEMSET_NODE_PARAMS p = mparams(a, 7, 4, 0, 1, 0);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, only_node(g), &p, drv_ctx));
    run(e, s);
    assert_int_equal(drv_read_int(a), 1);
}

/* The new destination must have "the same context association ... as the
 * original destination pointer": memory of another context gets
 * INVALID_VALUE, and so does naming another context to run the node in
 * (the stricter reading of "Context on which to run the node"; unverified
 * on a GPU). */
static void a_memset_into_another_contexts_memory_or_run_in_another_context_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    struct ctx2 o = ctx2_new();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr a = drv_dalloc(4 * sizeof(int)), b = drv_dalloc(4 * sizeof(int));
    CUgraph g = capture_memset(s, a);
    CUgraphExec e = instantiate(g);
    CUDA_MEMSET_NODE_PARAMS other = mparams(o.mem, 7, 4, 4, 1, 0);
    CUDA_MEMSET_NODE_PARAMS mine = mparams(b, 7, 4, 4, 1, 0);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, only_node(g), &other, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, only_node(g), &mine, o.c));
    run(e, s);
    assert_int_equal(drv_read_int(a), 1);
    assert_int_equal(drv_read_int(b), 0);
    ctx2_end(&o);
}

/* "for 2d memsets, all dimension changes are rejected", while "Both the
 * value and pointer address may be updated". */
static void a_2d_memsets_address_and_value_may_change_but_not_its_dimensions(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    size_t pitch = 4 * sizeof(int);
    CUdeviceptr a = drv_dalloc(8 * sizeof(int)), b = drv_dalloc(8 * sizeof(int));
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemsetD2D32Async(a, pitch, 1, 2, 2, s));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    CUgraphNode n = only_node(g);
    CUDA_MEMSET_NODE_PARAMS wider = mparams(b, 5, 4, 3, 2, pitch);
    CUDA_MEMSET_NODE_PARAMS taller = mparams(b, 5, 4, 2, 1, pitch);
    CUDA_MEMSET_NODE_PARAMS pitched = mparams(b, 5, 4, 2, 2, 2 * pitch);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &wider, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &taller, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemsetNodeSetParams(e, n, &pitched, drv_ctx));
    CUDA_MEMSET_NODE_PARAMS moved = mparams(b, 5, 4, 2, 2, pitch);
    CU_OK(cuGraphExecMemsetNodeSetParams(e, n, &moved, drv_ctx));
    run(e, s);
    int h[8];
    read_ints(h, b, 8);
    int want[8] = {5, 5, 0, 0, 5, 5, 0, 0};
    assert_memory_equal(h, want, sizeof want);
    assert_int_equal(drv_read_int(a), 0);
}

/* ---- memcpy nodes ---------------------------------------------------------- */

static CUDA_MEMCPY3D dtod(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = src;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = dst;
    p.WidthInBytes = n;
    p.Height = 1;
    p.Depth = 1;
    return p;
}

/* A 1-D copy of one int, src -> dst, captured. */
static CUgraph capture_copy(CUstream s, CUdeviceptr dst, CUdeviceptr src)
{
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemcpyDtoDAsync(dst, src, sizeof(int), s));
    return end_capture(s);
}

/* "Updates the work represented by hNode in hGraphExec as though hNode had
 * contained copyParams at instantiation" with the operands "allocated from
 * the same contexts" and "1-dimensional" (cuGraphExecMemcpyNodeSetParams):
 * the extent and both addresses may change, and a launch already queued
 * keeps the one-int copy it was launched with. A decode step's copy that
 * grows with the context is set, not captured again. */
static void a_1d_copys_extent_and_addresses_may_change_and_a_queued_launch_keeps_its_own(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr src = drv_dalloc(8 * sizeof(int)), dst = drv_dalloc(8 * sizeof(int));
    CUdeviceptr src2 = drv_dalloc(8 * sizeof(int)), dst2 = drv_dalloc(8 * sizeof(int));
    int init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CU_OK(cuMemcpyHtoD(src, init, sizeof init));
    CU_OK(cuMemcpyHtoD(src2, init, sizeof init));
    /* The legacy stream's writes may still be running: no non-blocking
     * stream waits for them. */
    CU_OK(cuCtxSynchronize());
    CUgraph g = capture_copy(s, dst, src);
    CUgraphExec e = instantiate(g);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_GATE));
    CU_OK(cuGraphLaunch(e, s));
    CUDA_MEMCPY3D p = dtod(dst2 + sizeof(int), src2 + sizeof(int), 6 * sizeof(int));
    CU_OK(cuGraphExecMemcpyNodeSetParams(e, only_node(g), &p, drv_ctx));
    CU_OK(cuGraphLaunch(e, s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_GATE);
    int h[8];
    read_ints(h, dst, 8);
    int first[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(h, first, sizeof first);
    read_ints(h, dst2, 8);
    int second[8] = {0, 2, 3, 4, 5, 6, 7, 0};
    assert_memory_equal(h, second, sizeof second);
}

/* "Zero-length operations are not supported"; a multidimensional new copy
 * and a changed memory type ("Changing either the source or destination
 * memory type ... is not supported", cuGraphExecUpdate) get INVALID_VALUE
 * as well, and none changes anything. */
static void a_zero_length_2d_or_retyped_copy_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr src = drv_dalloc(8 * sizeof(int)), dst = drv_dalloc(8 * sizeof(int));
    CU_OK(cuMemsetD32(src, 4, 8));
    /* The legacy stream's writes may still be running: no non-blocking
     * stream waits for them. */
    CU_OK(cuCtxSynchronize());
    CUgraph g = capture_copy(s, dst, src);
    CUgraphExec e = instantiate(g);
    CUgraphNode n = only_node(g);
    int *pinned = drv_pinned(sizeof(int));
    CUDA_MEMCPY3D zero = dtod(dst, src, 0);
    CUDA_MEMCPY3D rows = dtod(dst, src, sizeof(int));
    rows.Height = 2;
    rows.srcPitch = rows.dstPitch = 4 * sizeof(int);
    CUDA_MEMCPY3D retyped = dtod(dst, 0, sizeof(int));
    retyped.srcMemoryType = CU_MEMORYTYPE_HOST;
    retyped.srcHost = pinned;
    unsigned long long updates = drv_counter("graph.exec_updates");
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(e, n, &zero, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(e, n, &rows, drv_ctx));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(e, n, &retyped, drv_ctx));
    assert_int_equal(drv_counter("graph.exec_updates"), updates);
    run(e, s);
    int h[2];
    read_ints(h, dst, 2);
    assert_int_equal(h[0], 4);
    assert_int_equal(h[1], 0);
}

/* "Both the instantiation-time memory operands and the memory operands in
 * copyParams must be 1-dimensional": a node captured from a 2-D copy
 * cannot be set at all, not even to a 1-D copy. */
static void a_copy_node_instantiated_2d_cannot_be_set(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    size_t pitch = 4 * sizeof(int);
    CUdeviceptr src = drv_dalloc(8 * sizeof(int)), dst = drv_dalloc(8 * sizeof(int));
    CU_OK(cuMemsetD32(src, 3, 8));
    /* The legacy stream's writes may still be running: no non-blocking
     * stream waits for them. */
    CU_OK(cuCtxSynchronize());
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.dstDevice = dst;
    c.srcPitch = c.dstPitch = pitch;
    c.WidthInBytes = 2 * sizeof(int);
    c.Height = 2;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemcpy2DAsync(&c, s));
    CUgraph g = end_capture(s);
    CUgraphExec e = instantiate(g);
    CUDA_MEMCPY3D p = dtod(dst, src, sizeof(int));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(e, only_node(g), &p, drv_ctx));
    run(e, s);
    int h[8];
    read_ints(h, dst, 8);
    int want[8] = {3, 3, 0, 0, 3, 3, 0, 0};
    assert_memory_equal(h, want, sizeof want);
}

/* "The source and destination memory in copyParams must be allocated from
 * the same contexts as the original": memory of another context gets
 * INVALID_VALUE. Pageable host memory, allocated from no context, does not
 * replace pinned memory either (the stricter reading of "the memory
 * operands' mappings changed"; unverified on a GPU). */
static void a_copy_to_another_contexts_memory_or_from_pinned_to_pageable_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    struct ctx2 o = ctx2_new();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr src = drv_dalloc(sizeof(int)), dst = drv_dalloc(sizeof(int));
    CU_OK(cuMemsetD32(src, 6, 1));
    /* The legacy stream's writes may still be running: no non-blocking
     * stream waits for them. */
    CU_OK(cuCtxSynchronize());
    CUgraph g = capture_copy(s, dst, src);
    CUgraphExec e = instantiate(g);
    CUDA_MEMCPY3D other = dtod(o.mem, src, sizeof(int));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(e, only_node(g), &other, drv_ctx));
    ctx2_end(&o);

    int *pinned = drv_pinned(sizeof(int));
    static int pageable;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuMemcpyDtoHAsync(pinned, src, sizeof(int), s));
    CUgraph gh = end_capture(s);
    CUgraphExec eh = instantiate(gh);
    CUDA_MEMCPY3D toh = dtod(0, src, sizeof(int));
    toh.dstMemoryType = CU_MEMORYTYPE_HOST;
    toh.dstHost = &pageable;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphExecMemcpyNodeSetParams(eh, only_node(gh), &toh, drv_ctx));
    int *pinned2 = drv_pinned(sizeof(int));
    toh.dstHost = pinned2;
    CU_OK(cuGraphExecMemcpyNodeSetParams(eh, only_node(gh), &toh, drv_ctx));
    run(e, s);
    run(eh, s);
    assert_int_equal(drv_read_int(dst), 6);
    assert_int_equal(pageable, 0);
    assert_int_equal(*pinned, 0);
    assert_int_equal(*pinned2, 6);
}

/* ---- whole-graph updates --------------------------------------------------- */

/* cuGraphExecUpdate allows what setting the nodes allows: a kernel's grid
 * and a 1-D copy's extent change ("The node parameters in the instantiated
 * graph ... with the node parameters in a topologically identical graph");
 * a 1-D memset's new width is refused with PARAMETERS_CHANGED (the stricter
 * reading of "updating dimensions is also allowed, but may fail if the
 * resulting operation doesn't map onto the work resources already allocated
 * for the node"; unverified on a GPU), and the executable keeps what it
 * had. */
static void an_exec_update_may_change_a_grid_and_a_copy_extent_but_not_a_memset_width(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr out = drv_dalloc(64 * sizeof(int));
    CUdeviceptr src = drv_dalloc(8 * sizeof(int)), dst = drv_dalloc(8 * sizeof(int));
    CUdeviceptr m = drv_dalloc(8 * sizeof(int));
    CU_OK(cuMemsetD32(src, 2, 8));
    /* The legacy stream's writes may still be running: no non-blocking
     * stream waits for them. */
    CU_OK(cuCtxSynchronize());
    void *args[] = {&out};
    CUgraph g[3];
    for (int i = 0; i < 3; i++) {
        CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU_OK(cuLaunchKernel(drv_fn("drv_dims"), i == 0 ? 1 : 3, 1, 1, 4, 1, 1, 0, s, args, NULL));
        CU_OK(cuMemcpyDtoDAsync(dst, src, (i == 0 ? 1 : 4) * sizeof(int), s));
        CU_OK(cuMemsetD32Async(m, 9, i == 2 ? 8 : 2, s));
        g[i] = end_capture(s);
    }
    CUgraphExec e = instantiate(g[0]);
    CU_OK(cuGraphExecUpdate_v2(e, g[1], NULL));
    run(e, s);
    int h[8];
    read_ints(h, out, 1);
    assert_int_equal(h[0], 3);
    read_ints(h, dst, 8);
    int copied[8] = {2, 2, 2, 2, 0, 0, 0, 0};
    assert_memory_equal(h, copied, sizeof copied);

    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CU_IS(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cuGraphExecUpdate_v2(e, g[2], &info));
    assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
    CUgraphNode n[3];
    size_t count = 3;
    CU_OK(cuGraphGetNodes(g[2], n, &count));
    assert_ptr_equal(info.errorNode, n[2]);
    run(e, s);
    read_ints(h, m, 8);
    int set[8] = {9, 9, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(h, set, sizeof set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_kernel_nodes_grid_and_block_may_change_and_the_next_launch_uses_them),
        DRV_TEST(a_kernel_nodes_dynamic_shared_memory_may_change),
        DRV_TEST(a_kernel_nodes_function_may_change_to_another_of_its_context),
        DRV_TEST(a_kernel_node_set_to_a_function_of_another_context_gets_invalid_value),
        DRV_TEST(a_kernel_node_set_to_a_cukernel_in_another_context_gets_invalid_value),
        DRV_TEST(a_launch_queued_before_a_grid_change_keeps_its_grid),
        DRV_TEST(a_memsets_value_and_address_may_change_within_its_context),
        DRV_TEST(a_1d_memsets_width_element_size_or_height_change_gets_invalid_value),
        DRV_TEST(a_zero_sized_memset_gets_invalid_value),
        DRV_TEST(a_memset_into_another_contexts_memory_or_run_in_another_context_gets_invalid_value),
        DRV_TEST(a_2d_memsets_address_and_value_may_change_but_not_its_dimensions),
        DRV_TEST(a_1d_copys_extent_and_addresses_may_change_and_a_queued_launch_keeps_its_own),
        DRV_TEST(a_zero_length_2d_or_retyped_copy_gets_invalid_value),
        DRV_TEST(a_copy_node_instantiated_2d_cannot_be_set),
        DRV_TEST(a_copy_to_another_contexts_memory_or_from_pinned_to_pageable_gets_invalid_value),
        DRV_TEST(an_exec_update_may_change_a_grid_and_a_copy_extent_but_not_a_memset_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
