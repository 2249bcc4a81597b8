/* test_engine.c - the capture engine against a table of fake driver entry
 * points: no CPU driver, no threads, no LD_PRELOAD. The fakes write every
 * call that does work into a log ("k1@S" a launch of kernel 1 on stream S,
 * "graph@S" a graph launch, "sync@S", "alloc", ...), and a call issued
 * while a capture is open on the private stream goes into the captured
 * graph instead. Each test drives the engine's hooks (the core table it
 * installed itself into) and checks the log: what reached the driver, in
 * which order, and when. Each test uses a context of its own, so the
 * engine's state of one test cannot leak into the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "coord.h"

/* ---- the fake driver --------------------------------------------------------- */

#define S_BLOCKING ((CUstream)0x1000)    /* a created blocking stream */
#define S_NONBLOCK ((CUstream)0x2000)    /* a created non-blocking stream */
#define S_PRIVATE ((CUstream)0x3000)     /* what cuStreamCreate hands the engine */
#define K(n) ((CUfunction)(uintptr_t)(0x100 + (n)))

static char log_[8192];
static CUcontext current;
static int capturing;        /* a capture is open on S_PRIVATE */
static int captured_ops;     /* ops in the graph being captured */
static int graph_ops[64];    /* per graph handle (1-based): its op count */
static int ngraphs;
static int fail_graph_launch;

static void note(const char *fmt, ...)
{
    char w[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w, sizeof w, fmt, ap);
    va_end(ap);
    size_t n = strlen(log_);
    snprintf(log_ + n, sizeof log_ - n, "%s%s", n ? " " : "", w);
}

static const char *sname(CUstream s)
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
static CUresult CUDAAPI f_begin_capture(CUstream s, CUstreamCaptureMode m)
{
    capturing = 1;
    captured_ops = 0;
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
    note("graph%d@%s", graph_ops[(uintptr_t)e - 1], sname(s));
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

static struct rp__driver fake, core;

static void build_fake(void)
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
    fake.cuStreamBeginCapture_v2 = f_begin_capture;
    fake.cuStreamGetCaptureInfo_v2 = f_capture_info;
    fake.cuStreamEndCapture = f_end_capture;
    fake.cuGraphGetNodes = f_graph_nodes;
    fake.cuGraphNodeGetType = f_node_type;
    fake.cuGraphInstantiateWithFlags = f_instantiate;
    fake.cuGraphLaunch = f_graph_launch;
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

static int group_setup(void **state)
{
    (void)state;
    build_fake();
    core = fake;
    const struct rp__engine_config cfg = {.warmup = 2, .max_variants = 4, .cost.max_updates = 64,
                                          .min_ops = 2, .max_ops = 4096, .max_graphs = 256,
                                          .max_staging = 1u << 20, .max_seq_bytes = 1u << 20,
                                          .table_size = 64};
    return rp__engine_install(&core, &fake, &cfg);
}

/* A context of the test's own, a clean log. */
static int setup(void **state)
{
    static uintptr_t next_ctx = 0x10000;
    (void)state;
    current = (CUcontext)(next_ctx += 0x100);
    log_[0] = '\0';
    fail_graph_launch = 0;
    return 0;
}

/* The test's streams are destroyed after it, as a program would before
 * their handles could name streams of another context. */
static int teardown(void **state)
{
    (void)state;
    core.cuStreamDestroy_v2(S_BLOCKING);
    core.cuStreamDestroy_v2(S_NONBLOCK);
    return 0;
}

static CUdeviceptr buf = 0x4000;
static int32_t count = 64;

static void launch(int k, CUstream s)
{
    void *args[] = {&buf, &count};
    assert_int_equal(core.cuLaunchKernel(K(k), 1, 1, 1, 32, 1, 1, 0, s, args, NULL), CUDA_SUCCESS);
}

static void sync_(CUstream s)
{
    assert_int_equal(core.cuStreamSynchronize(s), CUDA_SUCCESS);
}

/* Learn the step k1 k2 on `s` (two occurrences: captured at the second). */
static void learn_step(CUstream s)
{
    for (int i = 0; i < 2; i++) {
        launch(1, s);
        launch(2, s);
        sync_(s);
    }
    log_[0] = '\0';
}

/* ---- the tests ---------------------------------------------------------------- */

/* A sequence seen twice (the warmup) runs as one graph launch the third
 * time; if not, reprise never replays anything. */
static void a_repeated_sequence_is_replayed_as_one_graph_launch(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    assert_string_equal(log_, ""); /* deferred: it may be the start of the step */
    launch(2, S_BLOCKING);
    assert_string_equal(log_, "graph2@B"); /* launched as soon as it is complete */
    sync_(S_BLOCKING);
    assert_string_equal(log_, "graph2@B sync@B");
}

/* A divergence issues the deferred ops eagerly, in the program's order,
 * before the op that diverged; if not, work is reordered or lost. */
static void a_divergence_flushes_the_deferred_ops_in_order(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    launch(3, S_BLOCKING);
    assert_string_equal(log_, "k1@B k3@B");
}

/* A boundary on the legacy stream resolves the deferred work of the
 * blocking streams (the driver orders them); if not, the legacy stream's
 * work overtakes it. */
static void a_legacy_boundary_resolves_the_blocking_streams_first(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    launch(1, S_BLOCKING);
    sync_(CU_STREAM_LEGACY);
    assert_string_equal(log_, "k1@B sync@L");
}

/* Non-blocking streams are independent lanes: a legacy boundary leaves
 * their deferred work deferred (the program must order them itself); if
 * it did not, nothing would be wrong but matches would break needlessly. */
static void a_legacy_boundary_leaves_non_blocking_streams_deferred(void **state)
{
    (void)state;
    learn_step(S_NONBLOCK);
    launch(1, S_NONBLOCK);
    sync_(CU_STREAM_LEGACY);
    assert_string_equal(log_, "sync@L");
    launch(2, S_NONBLOCK);
    assert_string_equal(log_, "sync@L graph2@N");
}

/* A global boundary (an allocation) resolves every stream before the
 * call; if not, the call could observe or free memory deferred work uses. */
static void a_global_boundary_resolves_every_stream_before_the_call(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    learn_step(S_NONBLOCK);
    launch(1, S_BLOCKING);
    launch(1, S_NONBLOCK);
    CUdeviceptr p;
    assert_int_equal(core.cuMemAlloc_v2(&p, 16), CUDA_SUCCESS);
    assert_string_equal(log_, "k1@B k1@N alloc");
}

/* A graph launch the driver refuses leaves the ops to run eagerly (a
 * replay runs every op or none); if not, the work is lost. */
static void a_failed_graph_launch_runs_the_ops_eagerly(void **state)
{
    (void)state;
    learn_step(S_BLOCKING);
    fail_graph_launch = 1;
    launch(1, S_BLOCKING);
    launch(2, S_BLOCKING);
    assert_string_equal(log_, "k1@B k2@B");
    fail_graph_launch = 0;
    /* The graph was dropped: the next occurrence runs eagerly too. */
    launch(1, S_BLOCKING);
    launch(2, S_BLOCKING);
    sync_(S_BLOCKING);
    assert_string_equal(log_, "k1@B k2@B k1@B k2@B sync@B");
}

/* Ops of a segment too short to capture (REPRISE_MIN_OPS) never wait; if
 * they did, a one-launch loop would be held back for nothing. */
static void a_single_launch_between_boundaries_is_never_deferred(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        launch(1, S_BLOCKING);
        sync_(S_BLOCKING);
    }
    assert_string_equal(log_, "k1@B sync@B k1@B sync@B k1@B sync@B k1@B sync@B");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_repeated_sequence_is_replayed_as_one_graph_launch, setup, teardown),
        cmocka_unit_test_setup_teardown(a_divergence_flushes_the_deferred_ops_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(a_legacy_boundary_resolves_the_blocking_streams_first, setup, teardown),
        cmocka_unit_test_setup_teardown(a_legacy_boundary_leaves_non_blocking_streams_deferred, setup, teardown),
        cmocka_unit_test_setup_teardown(a_global_boundary_resolves_every_stream_before_the_call, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_graph_launch_runs_the_ops_eagerly, setup, teardown),
        cmocka_unit_test_setup_teardown(a_single_launch_between_boundaries_is_never_deferred, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
