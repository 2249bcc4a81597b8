/* drv_graph_updates.c - which node handles cuGraphExec*NodeSetParams
 * accepts, before and after cuGraphExecUpdate, and what a launch already in
 * flight runs when a node is set; and nodes disabled and enabled again
 * (cuGraphNodeSetEnabled), which the shim does to launch a part of a
 * sequence's graph at a quiet spot (docs/engine.md). The rules were observed on an H200 (driver
 * 580.159.04, CUDA 13.0; see shared/CUDA-FACTS.md): only nodes of the graph
 * the executable was instantiated from are accepted, also after an update;
 * kernel nodes were probed there, memset and memcpy nodes are held to the
 * same rule here. The shim updates replayed graphs node by node, so a CPU
 * driver that accepted other handles would hide failures a GPU shows.
 *
 * Every test uses one three-node graph shape: a kernel that sets an int, a
 * memset of an int, a copy of an int (in that creation order). */
#include "drvtest.h"

#include <string.h>

#pragma weak cuGraphExecMemsetNodeSetParams

#define TAG_GATE 1u

/* The three ints the graph writes and the two sources its copy reads. */
struct target {
    CUdeviceptr k, m, c;   /* written by the kernel, memset and copy nodes */
    CUdeviceptr one, two;  /* copy sources: 11 and 22 */
};

static struct target target_new(void)
{
    struct target t;
    t.k = drv_dalloc(sizeof(int));
    t.m = drv_dalloc(sizeof(int));
    t.c = drv_dalloc(sizeof(int));
    t.one = drv_dalloc(sizeof(int));
    t.two = drv_dalloc(sizeof(int));
    CU_OK(cuMemsetD32(t.one, 11, 1));
    CU_OK(cuMemsetD32(t.two, 22, 1));
    CU_OK(cuCtxSynchronize());
    return t;
}

/* Captures kernel (*k = kv), memset (*m = mv), copy (*c = *src) on s. */
static CUgraph capture_graph(CUstream s, const struct target *t, int kv, unsigned mv, CUdeviceptr src)
{
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, t->k, kv));
    CU_OK(cuMemsetD32Async(t->m, mv, 1, s));
    CU_OK(cuMemcpyDtoDAsync(t->c, src, sizeof(int), s));
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

/* The graph's nodes in creation order: kernel, memset, copy. */
static void nodes_of(CUgraph g, CUgraphNode n[3])
{
    size_t count = 3;
    CU_OK(cuGraphGetNodes(g, n, &count));
    assert_int_equal(count, 3);
}

static CUresult set_kernel(CUgraphExec e, CUgraphNode node, CUdeviceptr p, int v)
{
    void *args[] = {&p, &v};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = drv_fn("drv_set");
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    return cuGraphExecKernelNodeSetParams(e, node, &kp);
}

static CUresult set_memset(CUgraphExec e, CUgraphNode node, CUdeviceptr p, unsigned v)
{
    CUDA_MEMSET_NODE_PARAMS mp;
    memset(&mp, 0, sizeof mp);
    mp.dst = p;
    mp.value = v;
    mp.elementSize = 4;
    mp.width = 1;
    mp.height = 1;
    return cuGraphExecMemsetNodeSetParams(e, node, &mp, drv_ctx);
}

static CUresult set_copy(CUgraphExec e, CUgraphNode node, CUdeviceptr dst, CUdeviceptr src)
{
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.srcDevice = src;
    cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    cp.dstDevice = dst;
    cp.WidthInBytes = sizeof(int);
    cp.Height = 1;
    cp.Depth = 1;
    return cuGraphExecMemcpyNodeSetParams(e, node, &cp, drv_ctx);
}

/* Launches e on s, waits, and checks the three ints. */
static void launch_expect(CUgraphExec e, CUstream s, const struct target *t, int k, int m, int c)
{
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(t->k), k);
    assert_int_equal(drv_read_int(t->m), m);
    assert_int_equal(drv_read_int(t->c), c);
}

/* After cuGraphExecUpdate(e, g2), the nodes of g1 (the graph e was
 * instantiated from) still set e's kernel, memset and copy nodes, and the
 * next launch runs with what they set. Observed on an H200, driver
 * 580.159.04 (kernel nodes). The shim updates an executable it took over
 * by an exec update through these handles. */
static void after_an_exec_update_the_instantiated_graphs_nodes_set_the_executable(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g1 = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g1);
    CUgraph g2 = capture_graph(s, &t, 2, 2, t.two);
    CU_OK(cuGraphExecUpdate(e, g2, NULL));
    launch_expect(e, s, &t, 2, 2, 22);

    CUgraphNode n1[3];
    nodes_of(g1, n1);
    CU_OK(set_kernel(e, n1[0], t.k, 5));
    CU_OK(set_memset(e, n1[1], t.m, 5));
    CU_OK(set_copy(e, n1[2], t.c, t.one));
    launch_expect(e, s, &t, 5, 5, 11);
}

/* After cuGraphExecUpdate(e, g2), a node of g2 gets INVALID_VALUE from
 * cuGraphExec{Kernel,Memset,Memcpy}NodeSetParams and the executable keeps
 * what it had. Observed on an H200, driver 580.159.04 (kernel nodes; the
 * CPU driver used to accept g2's nodes and refuse g1's, the opposite). */
static void after_an_exec_update_a_node_of_the_new_graph_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraphExec e = instantiate(capture_graph(s, &t, 1, 1, t.one));
    CUgraph g2 = capture_graph(s, &t, 2, 2, t.two);
    CU_OK(cuGraphExecUpdate(e, g2, NULL));

    CUgraphNode n2[3];
    nodes_of(g2, n2);
    unsigned long long updates = drv_counter("graph.exec_updates");
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_kernel(e, n2[0], t.k, 7));
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_memset(e, n2[1], t.m, 7));
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_copy(e, n2[2], t.c, t.one));
    assert_int_equal(drv_counter("graph.exec_updates"), updates);
    launch_expect(e, s, &t, 2, 2, 22);
}

/* The instantiated graph's nodes stay the handles of an executable across
 * several updates (the shim's executables go through one update per shape
 * change). This follows from the observed rule; two updates in a row were
 * not probed on the GPU. */
static void the_instantiated_graphs_nodes_stay_valid_across_repeated_exec_updates(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g1 = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g1);
    CUgraph g2 = capture_graph(s, &t, 2, 2, t.two);
    CUgraph g3 = capture_graph(s, &t, 3, 3, t.one);
    CU_OK(cuGraphExecUpdate(e, g2, NULL));
    CU_OK(cuGraphExecUpdate(e, g3, NULL));
    launch_expect(e, s, &t, 3, 3, 11);

    CUgraphNode n1[3], n2[3];
    nodes_of(g1, n1);
    nodes_of(g2, n2);
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_kernel(e, n2[0], t.k, 9));
    CU_OK(set_kernel(e, n1[0], t.k, 4));
    CU_OK(set_memset(e, n1[1], t.m, 4));
    CU_OK(set_copy(e, n1[2], t.c, t.two));
    launch_expect(e, s, &t, 4, 4, 22);
}

/* A node of a graph unrelated to the executable gets INVALID_VALUE, the
 * executable is unchanged and still launches. Observed on an H200, driver
 * 580.159.04 (kernel nodes). */
static void a_node_of_an_unrelated_graph_gets_invalid_value_and_the_executable_still_launches(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraphExec e = instantiate(capture_graph(s, &t, 1, 1, t.one));
    CUgraph other = capture_graph(s, &t, 8, 8, t.two);

    CUgraphNode no[3];
    nodes_of(other, no);
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_kernel(e, no[0], t.k, 6));
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_memset(e, no[1], t.m, 6));
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_copy(e, no[2], t.c, t.two));
    launch_expect(e, s, &t, 1, 1, 11);
}

/* Setting the nodes of an executable whose earlier launch has not run yet
 * (held behind a gate on its stream) is accepted at once, and each launch
 * runs with the parameters it was launched with. Observed on an H200, driver
 * 580.159.04. A driver that waited for the launch would hold the host as a
 * GPU does not (here the gate would time out and the log say so). */
static void setting_nodes_while_a_launch_is_in_flight_is_accepted_and_each_launch_keeps_its_parameters(
    void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g);
    CUgraphNode n[3];
    nodes_of(g, n);
    CUdeviceptr snap = drv_dalloc(3 * sizeof(int));
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();

    CU_OK(drv_launch_gate(s, gate, log, TAG_GATE));
    CU_OK(cuGraphLaunch(e, s));
    /* What the first launch wrote, copied before the second launch runs. */
    CU_OK(cuMemcpyDtoDAsync(snap, t.k, sizeof(int), s));
    CU_OK(cuMemcpyDtoDAsync(snap + sizeof(int), t.m, sizeof(int), s));
    CU_OK(cuMemcpyDtoDAsync(snap + 2 * sizeof(int), t.c, sizeof(int), s));
    CU_OK(set_kernel(e, n[0], t.k, 2));
    CU_OK(set_memset(e, n[1], t.m, 2));
    CU_OK(set_copy(e, n[2], t.c, t.two));
    CU_OK(cuGraphLaunch(e, s));
    assert_int_equal(drv_log_count(log), 0); /* nothing has run yet */
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_GATE);
    assert_int_equal(drv_read_int(snap), 1);
    assert_int_equal(drv_read_int(snap + sizeof(int)), 1);
    assert_int_equal(drv_read_int(snap + 2 * sizeof(int)), 11);
    assert_int_equal(drv_read_int(t.k), 2);
    assert_int_equal(drv_read_int(t.m), 2);
    assert_int_equal(drv_read_int(t.c), 22);
}

/* The same for cuGraphExecUpdate: a launch queued before the update runs
 * the old graph's parameters, the next one the new graph's. (The in-flight
 * rule was observed for node updates; whole-graph updates are held to it.) */
static void an_exec_update_while_a_launch_is_in_flight_leaves_that_launch_its_parameters(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraphExec e = instantiate(capture_graph(s, &t, 1, 1, t.one));
    CUgraph g2 = capture_graph(s, &t, 2, 2, t.two);
    CUdeviceptr snap = drv_dalloc(sizeof(int));
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();

    CU_OK(drv_launch_gate(s, gate, log, TAG_GATE));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuMemcpyDtoDAsync(snap, t.c, sizeof(int), s));
    CU_OK(cuGraphExecUpdate(e, g2, NULL));
    CU_OK(cuGraphLaunch(e, s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_GATE);
    assert_int_equal(drv_read_int(snap), 11);
    assert_int_equal(drv_read_int(t.c), 22);
}

/* Destroying the graph an executable was instantiated from leaves the
 * executable working, but its node handles are gone: setting a node through
 * one gets INVALID_VALUE (the stricter reading; unverified on a GPU). The
 * shim keeps that graph alive for as long as it updates the executable. */
static void a_node_of_a_destroyed_graph_gets_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g;
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, t.k, 1));
    CU_OK(cuStreamEndCapture(s, &g));
    CUgraphExec e = instantiate(g);
    CUgraphNode n[1];
    size_t count = 1;
    CU_OK(cuGraphGetNodes(g, n, &count));
    CU_OK(cuGraphDestroy(g));
    CU_IS(CUDA_ERROR_INVALID_VALUE, set_kernel(e, n[0], t.k, 3));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(t.k), 1);
}

/* The enabled state of node i of e, as the driver reports it. */
static unsigned enabled(CUgraphExec e, CUgraphNode n)
{
    unsigned on = 7;
    CU_OK(cuGraphNodeGetEnabled(e, n, &on));
    return on;
}

/* "Disabled nodes are functionally equivalent to empty nodes until they are
 * reenabled. Existing node parameters are not affected" (driver API
 * reference, cuGraphNodeSetEnabled): a launch with the kernel and the copy
 * disabled runs the memset alone; enabled again, they run with the
 * parameters they had, and a parameter set while disabled is kept. */
static void a_disabled_node_runs_as_an_empty_node_until_it_is_enabled_again(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g);
    CUgraphNode n[3];
    nodes_of(g, n);
    assert_int_equal(enabled(e, n[0]), 1);
    CU_OK(cuGraphNodeSetEnabled(e, n[0], 0));
    CU_OK(cuGraphNodeSetEnabled(e, n[2], 0));
    assert_int_equal(enabled(e, n[0]), 0);
    assert_int_equal(enabled(e, n[1]), 1);
    CU_OK(set_kernel(e, n[0], t.k, 5)); /* set while disabled */
    launch_expect(e, s, &t, 0, 1, 0);
    CU_OK(cuGraphNodeSetEnabled(e, n[0], 1));
    CU_OK(cuGraphNodeSetEnabled(e, n[2], 1));
    CU_OK(cuGraphNodeSetEnabled(e, n[1], 0));
    CU_OK(cuMemsetD32(t.m, 9, 1));
    CU_OK(cuCtxSynchronize());
    launch_expect(e, s, &t, 5, 9, 11);
}

/* "The modifications only affect future launches of hGraphExec. Already
 * enqueued or running launches of hGraphExec are not affected": a launch
 * queued behind a gate runs the node disabled after it was queued, the
 * next launch does not. */
static void disabling_a_node_while_a_launch_is_in_flight_leaves_that_launch_the_node(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g);
    CUgraphNode n[3];
    nodes_of(g, n);
    CUdeviceptr snap = drv_dalloc(sizeof(int));
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();

    CU_OK(drv_launch_gate(s, gate, log, TAG_GATE));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuMemcpyDtoDAsync(snap, t.k, sizeof(int), s));
    CU_OK(drv_launch_set(s, t.k, 0));
    CU_OK(cuGraphNodeSetEnabled(e, n[0], 0));
    CU_OK(cuGraphLaunch(e, s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_GATE);
    assert_int_equal(drv_read_int(snap), 1); /* the first launch ran the kernel */
    assert_int_equal(drv_read_int(t.k), 0);  /* the second did not */
}

static void host_nothing(void *p)
{
    (void)p;
}

/* "Currently only kernel, memset and memcpy nodes are supported", named by
 * a node of the graph the executable was instantiated from (as for the
 * node updates): a host node, a node of an unrelated graph and a NULL out
 * pointer get INVALID_VALUE, the executable unchanged. */
static void only_kernel_memset_and_copy_nodes_of_the_instantiated_graph_can_be_disabled(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(drv_launch_set(s, t.k, 3));
    CU_OK(cuLaunchHostFunc(s, host_nothing, NULL));
    CUgraph g = NULL;
    CU_OK(cuStreamEndCapture(s, &g));
    drv_track_graph(g);
    CUgraphNode n[2];
    size_t count = 2;
    CU_OK(cuGraphGetNodes(g, n, &count));
    assert_int_equal(count, 2);
    CUgraphNodeType type;
    CU_OK(cuGraphNodeGetType(n[1], &type));
    assert_int_equal(type, CU_GRAPH_NODE_TYPE_HOST);
    CUgraphExec e = instantiate(g);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphNodeSetEnabled(e, n[1], 0));
    unsigned on;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphNodeGetEnabled(e, n[1], &on));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphNodeGetEnabled(e, n[0], NULL));
    CUgraph other = capture_graph(s, &t, 4, 4, t.one);
    CUgraphNode o[3];
    nodes_of(other, o);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphNodeSetEnabled(e, o[0], 0));
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(t.k), 3);
}

/* After cuGraphExecUpdate the nodes of the graph the executable was
 * instantiated from still name its nodes for cuGraphNodeSetEnabled, as for
 * the node updates. What an update does to a node disabled before it is
 * not documented: the CPU driver keeps it disabled (unverified); the shim
 * enables every node before it updates an executable, so it depends on
 * neither reading. */
static void after_an_exec_update_the_instantiated_graphs_nodes_enable_and_disable(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    struct target t = target_new();
    CUgraph g1 = capture_graph(s, &t, 1, 1, t.one);
    CUgraphExec e = instantiate(g1);
    CUgraphNode n[3], m[3];
    nodes_of(g1, n);
    CUgraph g2 = capture_graph(s, &t, 2, 2, t.two);
    nodes_of(g2, m);
    CU_OK(cuGraphExecUpdate(e, g2, NULL));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGraphNodeSetEnabled(e, m[1], 0));
    CU_OK(cuGraphNodeSetEnabled(e, n[1], 0));
    CU_OK(cuMemsetD32(t.m, 0, 1));
    CU_OK(cuCtxSynchronize());
    launch_expect(e, s, &t, 2, 0, 22);
    CU_OK(cuGraphExecUpdate(e, g1, NULL));
    assert_int_equal(enabled(e, n[1]), 0);
    CU_OK(cuGraphNodeSetEnabled(e, n[1], 1));
    launch_expect(e, s, &t, 1, 1, 11);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DRV_TEST(after_an_exec_update_the_instantiated_graphs_nodes_set_the_executable),
        DRV_TEST(after_an_exec_update_a_node_of_the_new_graph_gets_invalid_value),
        DRV_TEST(the_instantiated_graphs_nodes_stay_valid_across_repeated_exec_updates),
        DRV_TEST(a_node_of_an_unrelated_graph_gets_invalid_value_and_the_executable_still_launches),
        DRV_TEST(setting_nodes_while_a_launch_is_in_flight_is_accepted_and_each_launch_keeps_its_parameters),
        DRV_TEST(an_exec_update_while_a_launch_is_in_flight_leaves_that_launch_its_parameters),
        DRV_TEST(a_node_of_a_destroyed_graph_gets_invalid_value),
        DRV_TEST(a_disabled_node_runs_as_an_empty_node_until_it_is_enabled_again),
        DRV_TEST(disabling_a_node_while_a_launch_is_in_flight_leaves_that_launch_the_node),
        DRV_TEST(only_kernel_memset_and_copy_nodes_of_the_instantiated_graph_can_be_disabled),
        DRV_TEST(after_an_exec_update_the_instantiated_graphs_nodes_enable_and_disable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
