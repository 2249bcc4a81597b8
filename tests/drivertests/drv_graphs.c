/* drv_graphs.c - executable graphs on the CPU driver: a launched graph runs
 * its nodes in order and is counted as graph work (node.*, launch.graph), not
 * as eager work; repeated launches; changing a kernel or memcpy node of an
 * executable graph; cuGraphExecUpdate with the same and with a different
 * topology; reading a captured kernel node's parameters; and the ordering of
 * a graph launch after earlier work on its stream and after earlier launches
 * of the same executable graph; with CPUCUDA_DELAY_US, each graph node costs
 * the delay an eager op costs. */
#include "drvtest.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define TAG_A 1u
#define TAG_B 2u

static void capture_begin(CUstream s)
{
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

static CUgraph capture_end(CUstream s)
{
    CUgraph g = NULL;
    CU_OK(cuStreamEndCapture(s, &g));
    assert_non_null(g);
    drv_track_graph(g);
    return g;
}

static CUgraphExec instantiate(CUgraph g)
{
    CUgraphExec e = NULL;
    CU_OK(cuGraphInstantiate(&e, g, 0));
    assert_non_null(e);
    drv_track_exec(e);
    return e;
}

/* The only node of `g` (the graph must have exactly one). */
static CUgraphNode only_node(CUgraph g)
{
    CUgraphNode n[4];
    size_t count = 4;
    CU_OK(cuGraphGetNodes(g, n, &count));
    assert_int_equal(count, 1);
    return n[0];
}

static void CUDA_CB host_count(void *arg)
{
    __atomic_fetch_add((int *)arg, 1, __ATOMIC_ACQ_REL);
}

struct counts {
    unsigned long long v[14];
};
static const char *const counter_names[14] = {
    "launch.eager", "launch.graph",  "node.kernel",    "node.memset",   "node.memcpy",
    "node.host",    "memset.eager", "copy.eager",     "hostfunc.eager", "graph.instantiated",
    "capture.begun", "capture.ended", "capture.invalidated", "graph.exec_updates"};

static struct counts snapshot(void)
{
    struct counts c;
    for (int i = 0; i < 14; i++)
        c.v[i] = drv_counter(counter_names[i]);
    return c;
}

/* Every counter must have moved by exactly the given deltas (in the order of
 * counter_names). */
static void expect_deltas(const struct counts *before, const unsigned long long *delta)
{
    struct counts now = snapshot();
    for (int i = 0; i < 14; i++)
        if (now.v[i] - before->v[i] != delta[i])
            fail_msg("counter %s moved by %llu, expected %llu", counter_names[i],
                     now.v[i] - before->v[i], delta[i]);
}

/* A launched graph runs its nodes (kernel, memset, memcpy, kernel, host
 * function) in capture order; the driver counts them as graph nodes and one
 * graph launch, and counts no eager work. Tests of the shim assert "this ran
 * as a graph" with these counters, so they must not mix the two. */
static void a_launched_graph_runs_its_nodes_in_order_and_counts_them_as_graph_work(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CUdeviceptr a = drv_dalloc(sizeof(int)), b = drv_dalloc(sizeof(int));
    int *hosts = drv_pinned(sizeof(int));
    struct counts c0 = snapshot();

    capture_begin(s);
    CU_OK(drv_launch_record(s, log, TAG_A));
    CU_OK(cuMemsetD32Async(a, 7, 1, s));
    CU_OK(cuMemcpyDtoDAsync(b, a, sizeof(int), s));
    CU_OK(drv_launch_record(s, log, TAG_B));
    CU_OK(cuLaunchHostFunc(s, host_count, hosts));
    CUgraph g = capture_end(s);
    CUgraphExec e = instantiate(g);
    const unsigned long long after_build[14] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0};
    expect_deltas(&c0, after_build);
    assert_int_equal(drv_log_count(log), 0);

    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 2, TAG_A, TAG_B);
    assert_int_equal(*hosts, 1);
    const unsigned long long after_launch[14] = {0, 1, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0};
    expect_deltas(&c0, after_launch);
    assert_int_equal(drv_read_int(b), 7); /* an eager copy: after the counter check */
}

/* An executable graph can be launched again and again; each launch runs it
 * once more. */
static void a_graph_can_be_launched_repeatedly(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(64 * sizeof(int));
    capture_begin(s);
    CU_OK(drv_launch_add(s, d, 1, 64));
    CUgraphExec e = instantiate(capture_end(s));
    unsigned long long graphs = drv_counter("launch.graph"), kernels = drv_counter("node.kernel");
    for (int i = 0; i < 5; i++)
        CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_counter("launch.graph"), graphs + 5);
    assert_int_equal(drv_counter("node.kernel"), kernels + 5);
    int out[64];
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    for (int i = 0; i < 64; i++)
        assert_int_equal(out[i], 5);
}

/* cuGraphKernelNodeGetParams returns the captured kernel, shape and argument
 * values (copied at capture: changing the host variables after the launch
 * does not change them). The shim reads recorded launches back this way. */
static void a_kernel_node_returns_the_captured_parameters(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(256 * sizeof(int));
    CUfunction f = drv_fn("drv_add");
    CUdeviceptr p = d;
    int v = 4;
    unsigned n = 200;
    void *args[] = {&p, &v, &n};
    capture_begin(s);
    CU_OK(cuLaunchKernel(f, 7, 1, 1, 32, 1, 1, 16, s, args, NULL));
    v = 99;
    n = 1;
    CUgraph g = capture_end(s);
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    CU_OK(cuGraphKernelNodeGetParams(only_node(g), &kp));
    assert_ptr_equal(kp.func, f);
    assert_int_equal(kp.gridDimX, 7);
    assert_int_equal(kp.gridDimY, 1);
    assert_int_equal(kp.gridDimZ, 1);
    assert_int_equal(kp.blockDimX, 32);
    assert_int_equal(kp.blockDimY, 1);
    assert_int_equal(kp.blockDimZ, 1);
    assert_int_equal(kp.sharedMemBytes, 16);
    assert_non_null(kp.kernelParams);
    assert_true(*(CUdeviceptr *)kp.kernelParams[0] == d);
    assert_int_equal(*(int *)kp.kernelParams[1], 4);
    assert_int_equal(*(unsigned *)kp.kernelParams[2], 200);
}

/* cuGraphExecKernelNodeSetParams changes the arguments of the next launch
 * of the executable graph, not the graph it came from. */
static void setting_a_kernel_node_of_an_executable_graph_changes_the_next_launch(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *v = drv_pinned(sizeof(int));
    capture_begin(s);
    CU_OK(drv_launch_set(s, drv_dp(v), 1));
    CUgraph g = capture_end(s);
    CUgraphExec e = instantiate(g);
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*v, 1);

    CUgraphNode node = only_node(g);
    CUdeviceptr p = drv_dp(v);
    int val = 2;
    void *args[] = {&p, &val};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = drv_fn("drv_set");
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CU_OK(cuGraphExecKernelNodeSetParams(e, node, &kp));
    val = 3; /* copied by the call */
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*v, 2);

    CUDA_KERNEL_NODE_PARAMS back;
    memset(&back, 0, sizeof back);
    CU_OK(cuGraphKernelNodeGetParams(node, &back));
    assert_int_equal(*(int *)back.kernelParams[1], 1);
}

/* cuGraphExecMemcpyNodeSetParams changes the source of the next launch's
 * copy. */
static void setting_a_memcpy_node_of_an_executable_graph_changes_the_next_launch(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr one = drv_dalloc(sizeof(int)), two = drv_dalloc(sizeof(int));
    CUdeviceptr dst = drv_dalloc(sizeof(int));
    CU_OK(cuMemsetD32(one, 11, 1));
    CU_OK(cuMemsetD32(two, 22, 1));
    CU_OK(cuCtxSynchronize());
    capture_begin(s);
    CU_OK(cuMemcpyDtoDAsync(dst, one, sizeof(int), s));
    CUgraph g = capture_end(s);
    CUgraphNode node = only_node(g);
    CUgraphNodeType t;
    CU_OK(cuGraphNodeGetType(node, &t));
    assert_int_equal(t, CU_GRAPH_NODE_TYPE_MEMCPY);
    CUgraphExec e = instantiate(g);
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(dst), 11);

    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.srcDevice = two;
    cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.dstDevice = dst;
    cp.WidthInBytes = sizeof(int);
    cp.Height = 1;
    cp.Depth = 1;
    CU_OK(cuGraphExecMemcpyNodeSetParams(e, node, &cp, drv_ctx));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(dst), 22);
}

/* cuGraphExecUpdate from a graph of the same topology succeeds and the next
 * launch uses the new graph's arguments. */
static void updating_an_executable_graph_from_the_same_topology_succeeds(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *v = drv_pinned(sizeof(int));
    capture_begin(s);
    CU_OK(drv_launch_set(s, drv_dp(v), 1));
    CUgraphExec e = instantiate(capture_end(s));
    capture_begin(s);
    CU_OK(drv_launch_set(s, drv_dp(v), 2));
    CUgraph g2 = capture_end(s);
    unsigned long long updates = drv_counter("graph.exec_updates");
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0xff, sizeof info);
    CU_OK(cuGraphExecUpdate(e, g2, &info));
    assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    assert_int_equal(drv_counter("graph.exec_updates"), updates + 1);
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*v, 2);
}

/* cuGraphExecUpdate from a graph with a different topology fails with 910
 * GRAPH_EXEC_UPDATE_FAILURE and says TOPOLOGY_CHANGED. A driver that accepted
 * it would let the shim skip a re-instantiation a GPU requires. */
static void updating_an_executable_graph_from_a_different_topology_fails_with_910(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *v = drv_pinned(sizeof(int));
    capture_begin(s);
    CU_OK(drv_launch_set(s, drv_dp(v), 1));
    CUgraphExec e = instantiate(capture_end(s));
    capture_begin(s);
    CU_OK(drv_launch_set(s, drv_dp(v), 2));
    CU_OK(drv_launch_set(s, drv_dp(v), 3));
    CUgraph g2 = capture_end(s);
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CU_IS(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cuGraphExecUpdate(e, g2, &info));
    assert_int_equal(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
}

/* A graph launch runs after earlier work on its stream. */
static void a_graph_launch_is_ordered_after_earlier_work_on_its_stream(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUstream cap = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUevent ev = drv_event();
    capture_begin(cap);
    CU_OK(drv_launch_record(cap, log, TAG_B));
    CUgraphExec e = instantiate(capture_end(cap));
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuEventRecord(ev, s));
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 0);
    CU_IS(CUDA_ERROR_NOT_READY, cuEventQuery(ev));
    drv_gate_open(gate);
    CU_OK(cuEventSynchronize(ev));
    drv_assert_log(log, 2, TAG_A, TAG_B);
}

/* A graph may be launched on the legacy stream (0). */
static void a_graph_can_be_launched_on_the_legacy_stream(void **state)
{
    (void)state;
    drv_init();
    CUstream cap = drv_stream(CU_STREAM_NON_BLOCKING);
    int *v = drv_pinned(sizeof(int));
    capture_begin(cap);
    CU_OK(drv_launch_set(cap, drv_dp(v), 12));
    CUgraphExec e = instantiate(capture_end(cap));
    CU_OK(cuGraphLaunch(e, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    assert_int_equal(*v, 12);
}

/* Launches of one executable graph are serialized, also across streams:
 * the second launch does not start while the first is held by a gate. */
static void launches_of_one_executable_graph_run_one_at_a_time(void **state)
{
    (void)state;
    drv_init();
    CUstream cap = drv_stream(CU_STREAM_NON_BLOCKING);
    CUstream s1 = drv_stream(CU_STREAM_NON_BLOCKING), s2 = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    capture_begin(cap);
    CU_OK(drv_launch_record(cap, log, TAG_A));
    CU_OK(drv_launch_gate(cap, gate, log, TAG_B));
    CUgraphExec e = instantiate(capture_end(cap));
    CU_OK(cuGraphLaunch(e, s1));
    CU_OK(cuGraphLaunch(e, s2));
    drv_sleep_ms(30);
    assert_true(drv_log_count(log) <= 1);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
    drv_assert_log(log, 4, TAG_A, TAG_B, TAG_A, TAG_B);
}

#define DELAY_NODES 8
#define DELAY_US 20000

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Child of the graph delay test (CPUCUDA_DELAY_US=DELAY_US): DELAY_NODES
 * eager launches and a graph of DELAY_NODES kernel nodes must each take at
 * least DELAY_NODES delays. Exit 0 when they do. */
static int child_graph_delay(void)
{
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUstream s;
    int *v = NULL;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) ||
        cuModuleLoad(&m, DRV_KERNELS_PATH) || cuModuleGetFunction(&f, m, "drv_set") ||
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAllocHost((void **)&v, sizeof(int)))
        return 10;
    CUdeviceptr p = drv_dp(v);
    int val = 1;
    void *args[] = {&p, &val};
    double t0 = now_ms();
    for (int i = 0; i < DELAY_NODES; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL))
            return 11;
    if (cuStreamSynchronize(s))
        return 12;
    double eager = now_ms() - t0;
    CUgraph g;
    CUgraphExec e;
    if (cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))
        return 13;
    for (int i = 0; i < DELAY_NODES; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL))
            return 14;
    if (cuStreamEndCapture(s, &g) || cuGraphInstantiate(&e, g, 0))
        return 15;
    t0 = now_ms();
    if (cuGraphLaunch(e, s) || cuStreamSynchronize(s))
        return 16;
    double graph = now_ms() - t0;
    double floor = DELAY_NODES * DELAY_US / 1e3;
    if (eager < floor || graph < floor) {
        fprintf(stderr, "child: %d eager launches took %.1f ms, a graph of %d nodes %.1f ms; "
                        "each should take at least %.1f ms\n", DELAY_NODES, eager, DELAY_NODES, graph, floor);
        return 17;
    }
    return 0;
}

/* With CPUCUDA_DELAY_US, every node of a launched graph is delayed as an
 * eager op is, so a graph of N nodes costs N delays like N eager launches.
 * If a graph cost one delay, graphs would look far cheaper on the CPU driver
 * than on a GPU, and a shim that holds work back would look harmless. */
static void with_a_worker_delay_each_graph_node_costs_what_an_eager_op_costs(void **state)
{
    (void)state;
    char delay[40];
    snprintf(delay, sizeof delay, "CPUCUDA_DELAY_US=%d", DELAY_US);
    const char *env[] = {delay, NULL};
    assert_int_equal(drv_run_self("child-graph-delay", env), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return strcmp(argv[1], "child-graph-delay") == 0 ? child_graph_delay() : 2;
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_launched_graph_runs_its_nodes_in_order_and_counts_them_as_graph_work),
        DRV_TEST(a_graph_can_be_launched_repeatedly),
        DRV_TEST(a_kernel_node_returns_the_captured_parameters),
        DRV_TEST(setting_a_kernel_node_of_an_executable_graph_changes_the_next_launch),
        DRV_TEST(setting_a_memcpy_node_of_an_executable_graph_changes_the_next_launch),
        DRV_TEST(updating_an_executable_graph_from_the_same_topology_succeeds),
        DRV_TEST(updating_an_executable_graph_from_a_different_topology_fails_with_910),
        DRV_TEST(a_graph_launch_is_ordered_after_earlier_work_on_its_stream),
        DRV_TEST(a_graph_can_be_launched_on_the_legacy_stream),
        DRV_TEST(launches_of_one_executable_graph_run_one_at_a_time),
        DRV_TEST(with_a_worker_delay_each_graph_node_costs_what_an_eager_op_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
