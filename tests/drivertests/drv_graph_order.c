/* drv_graph_order.c - the order a graph launch runs its nodes in
 * (CPUCUDA_GRAPH_ORDER, CPUCUDA_GRAPH_WORKERS, cpucuda_graph_order_set /
 * cpucuda_graph_workers_set): every order is a topological order (a node
 * never runs before its dependencies: a chain, a diamond, a wider graph);
 * reverse and random orders differ from creation order where nodes are
 * independent; a seed repeats its order; independent nodes run at the same
 * time on two workers; a graph captured without an edge between a writer
 * and its reader gives a wrong result under reverse (always) and under
 * random (for some seeds), the right one under creation; a launch keeps the
 * order it was launched with; node counters stay exact; the default is
 * random with a seed the stats report; a malformed value gets one line. */
#include "drvtest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#pragma weak cpucuda_graph_order_set
#pragma weak cpucuda_graph_workers_set

#define MAXN 8

/* Sets the order and the workers of later launches; fails the test if the
 * driver refuses them. */
static void order(const char *spec, unsigned workers)
{
    if (!cpucuda_graph_order_set || !cpucuda_graph_workers_set)
        fail_msg("the driver does not export cpucuda_graph_order_set / cpucuda_graph_workers_set");
    if (cpucuda_graph_order_set(spec) != 0)
        fail_msg("cpucuda_graph_order_set(\"%s\") refused", spec);
    if (cpucuda_graph_workers_set(workers) != 0)
        fail_msg("cpucuda_graph_workers_set(%u) refused", workers);
}

/* Per-test teardown: the default order again, then the shared teardown. */
static int teardown(void **state)
{
    if (cpucuda_graph_order_set)
        cpucuda_graph_order_set(NULL);
    if (cpucuda_graph_workers_set)
        cpucuda_graph_workers_set(2);
    return drv_teardown(state);
}

#define TEST(f) cmocka_unit_test_teardown(f, teardown)

static CUgraphExec instantiate(CUgraph g)
{
    CUgraphExec e = NULL;
    CU_OK(cuGraphInstantiate(&e, g, 0));
    assert_non_null(e);
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

/* A graph of n independent nodes (no edges), node k recording tag k + 1
 * into `log`: captured on n side streams forked from the empty start of a
 * capture on `s` and joined back. */
static CUgraphExec independent_nodes(CUstream s, unsigned *log, unsigned n)
{
    CUstream side[MAXN];
    CUevent fork = drv_event(), join[MAXN];
    for (unsigned k = 0; k < n; k++) {
        side[k] = drv_stream(CU_STREAM_NON_BLOCKING);
        join[k] = drv_event();
    }
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(fork, s));
    for (unsigned k = 0; k < n; k++) {
        CU_OK(cuStreamWaitEvent(side[k], fork, 0));
        CU_OK(drv_launch_record(side[k], log, k + 1));
        CU_OK(cuEventRecord(join[k], side[k]));
        CU_OK(cuStreamWaitEvent(s, join[k], 0));
    }
    CUgraph g = end_capture(s);
    CUgraphNode nodes[MAXN];
    size_t count = MAXN;
    CU_OK(cuGraphGetNodes(g, nodes, &count));
    assert_int_equal(count, n);
    return instantiate(g);
}

/* Launches e on s once, with the log cleared, and waits; the log's tags
 * into out[0..n). */
static void launch_and_read(CUgraphExec e, CUstream s, unsigned *log, unsigned n, unsigned *out)
{
    memset(log, 0, DRV_LOG_CAP * sizeof *log);
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_log_count(log), n);
    for (unsigned k = 0; k < n; k++)
        out[k] = log[k + 1];
}

/* The orders every order test runs under: each policy, random with several
 * seeds, one worker and two. */
static const char *const specs[] = {"creation", "reverse", "random",   "random:1", "random:2",
                                    "random:3", "random:4", "random:5", "random:6", "random:77"};
#define NSPECS (sizeof specs / sizeof specs[0])

/* Where tag t sits in out[0..n), or fails. */
static unsigned pos(const unsigned *out, unsigned n, unsigned t)
{
    for (unsigned k = 0; k < n; k++)
        if (out[k] == t)
            return k;
    fail_msg("tag %u did not run", t);
    return 0;
}

/* A chain (one stream's captured kernels) has one order: every policy runs
 * it as captured, on one worker or two. */
static void every_order_runs_a_chain_in_its_only_order(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (unsigned k = 1; k <= 5; k++)
        CU_OK(drv_launch_record(s, log, k));
    CUgraphExec e = instantiate(end_capture(s));
    for (size_t i = 0; i < NSPECS; i++)
        for (unsigned w = 1; w <= 2; w++) {
            order(specs[i], w);
            memset(log, 0, DRV_LOG_CAP * sizeof *log);
            CU_OK(cuGraphLaunch(e, s));
            CU_OK(cuStreamSynchronize(s));
            drv_assert_log(log, 5, 1u, 2u, 3u, 4u, 5u);
        }
}

/* A host node that takes a while (0.5 ms) and then appends its tag: a
 * node that started before its dependency finished shows in the log. */
struct slow {
    unsigned *log;
    unsigned tag;
};

static void CUDA_CB slow_record(void *arg)
{
    const struct slow *a = arg;
    struct timespec ts = {0, 500000};
    nanosleep(&ts, NULL);
    unsigned i = __atomic_fetch_add(&a->log[0], 1u, __ATOMIC_ACQ_REL);
    if (i + 1 < DRV_LOG_CAP)
        __atomic_store_n(&a->log[i + 1], a->tag, __ATOMIC_RELEASE);
}

/* A diamond and a wider graph: under every order, on one worker or two,
 * each node runs after each of its dependencies have finished. The graph,
 * from a capture over three streams (tags; 1, 3, 5 and 7 slow host nodes,
 * the others kernels):
 *   1 -> 2 -> 3 --\
 *   1 -> 4 -------+-> (after 5 and 3) 6 -> (after 4) 7
 *   1 -> 5 ------/
 * i.e. 2<-1, 3<-2, 4<-1, 5<-1, 6<-{5,3}, 7<-{6,4}. */
static void every_order_runs_each_node_after_its_dependencies(void **state)
{
    (void)state;
    drv_init();
    CUstream s0 = drv_stream(CU_STREAM_NON_BLOCKING), s1 = drv_stream(CU_STREAM_NON_BLOCKING),
             s2 = drv_stream(CU_STREAM_NON_BLOCKING);
    CUevent e0 = drv_event(), e1 = drv_event(), e2 = drv_event();
    unsigned *log = drv_log_new();
    static struct slow slow[8];
    for (unsigned t = 0; t < 8; t++)
        slow[t] = (struct slow){log, t};
    CU_OK(cuStreamBeginCapture(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuLaunchHostFunc(s0, slow_record, &slow[1]));
    CU_OK(cuEventRecord(e0, s0));
    CU_OK(cuStreamWaitEvent(s1, e0, 0));
    CU_OK(drv_launch_record(s1, log, 2));
    CU_OK(cuLaunchHostFunc(s1, slow_record, &slow[3]));
    CU_OK(cuEventRecord(e1, s1));
    CU_OK(cuStreamWaitEvent(s2, e0, 0));
    CU_OK(drv_launch_record(s2, log, 4));
    CU_OK(cuEventRecord(e2, s2));
    CU_OK(cuLaunchHostFunc(s0, slow_record, &slow[5]));
    CU_OK(cuStreamWaitEvent(s0, e1, 0));
    CU_OK(drv_launch_record(s0, log, 6));
    CU_OK(cuStreamWaitEvent(s0, e2, 0));
    CU_OK(cuLaunchHostFunc(s0, slow_record, &slow[7]));
    CUgraphExec e = instantiate(end_capture(s0));
    static const unsigned edges[][2] = {{1, 2}, {2, 3}, {1, 4}, {1, 5}, {5, 6}, {3, 6}, {6, 7}, {4, 7}};
    for (size_t i = 0; i < NSPECS; i++)
        for (unsigned w = 1; w <= 2; w++) {
            order(specs[i], w);
            for (int rep = 0; rep < 3; rep++) {
                unsigned out[7];
                launch_and_read(e, s0, log, 7, out);
                for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
                    if (pos(out, 7, edges[k][0]) > pos(out, 7, edges[k][1]))
                        fail_msg("%s, %u workers: tag %u ran before its dependency %u "
                                 "(order %u %u %u %u %u %u %u)", specs[i], w, edges[k][1], edges[k][0],
                                 out[0], out[1], out[2], out[3], out[4], out[5], out[6]);
            }
        }
}

/* Independent nodes: creation runs them as created; reverse, the one
 * created last first (deterministic on one worker). */
static void reverse_runs_independent_nodes_created_last_first(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CUgraphExec e = independent_nodes(s, log, 4);
    unsigned out[4];
    order("creation", 2);
    launch_and_read(e, s, log, 4, out);
    drv_assert_log(log, 4, 1u, 2u, 3u, 4u);
    order("reverse", 1);
    for (int rep = 0; rep < 3; rep++) {
        launch_and_read(e, s, log, 4, out);
        drv_assert_log(log, 4, 4u, 3u, 2u, 1u);
    }
}

/* Random orders: over several seeds, independent nodes run in more than one
 * order, not only creation order; setting the same seed again repeats the
 * same orders, launch after launch (on one worker, where the order is what
 * runs). */
static void random_orders_differ_from_creation_order_and_a_seed_repeats_them(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    const unsigned n = 6;
    CUgraphExec e = independent_nodes(s, log, n);
    unsigned first[3][MAXN], again[MAXN];
    int not_creation = 0, distinct = 0;
    unsigned prev[MAXN] = {0};
    for (unsigned seed = 1; seed <= 16; seed++) {
        char spec[32];
        snprintf(spec, sizeof spec, "random:%u", seed);
        order(spec, 1);
        unsigned out[MAXN];
        launch_and_read(e, s, log, n, out);
        int creation = 1;
        for (unsigned k = 0; k < n; k++)
            creation &= out[k] == k + 1;
        not_creation += !creation;
        distinct += seed > 1 && memcmp(out, prev, sizeof out) != 0;
        memcpy(prev, out, sizeof prev);
    }
    if (not_creation == 0 || distinct == 0)
        fail_msg("16 seeds ran %d orders other than creation order, %d changes between seeds", not_creation,
                 distinct);
    order("random:12345", 1);
    for (int l = 0; l < 3; l++)
        launch_and_read(e, s, log, n, first[l]);
    order("random:12345", 1);
    for (int l = 0; l < 3; l++) {
        launch_and_read(e, s, log, n, again);
        if (memcmp(again, first[l], n * sizeof *again) != 0)
            fail_msg("launch %d after setting random:12345 again ran another order", l + 1);
    }
}

/* On two workers, independent nodes run at the same time: the node created
 * second waits on a gate that the node created first opens. Reverse takes
 * the waiting node first; only a second thread running the other node
 * while it waits lets it pass (one thread at a time: the gate times out
 * after 3 s and the tag says so). */
static void independent_nodes_run_at_the_same_time_on_two_workers(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING), a = drv_stream(CU_STREAM_NON_BLOCKING),
             b = drv_stream(CU_STREAM_NON_BLOCKING);
    CUevent fork = drv_event(), ja = drv_event(), jb = drv_event();
    unsigned *log = drv_log_new();
    int *gate = drv_gate_new();
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(fork, s));
    CU_OK(cuStreamWaitEvent(a, fork, 0));
    CU_OK(drv_launch_set(a, drv_dp(gate), 1));
    CU_OK(cuEventRecord(ja, a));
    CU_OK(cuStreamWaitEvent(b, fork, 0));
    CU_OK(drv_launch_gate(b, gate, log, 9));
    CU_OK(cuEventRecord(jb, b));
    CU_OK(cuStreamWaitEvent(s, ja, 0));
    CU_OK(cuStreamWaitEvent(s, jb, 0));
    CUgraphExec e = instantiate(end_capture(s));
    order("reverse", 2);
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, 9u);
}

/* The shape of the bug this order exists for: a graph whose reader does
 * not depend on its writer. Captured: the writer (gate := 42, a kernel) on
 * the origin stream, the reader (a device-to-device copy of it) on a side
 * stream forked before the writer, so no edge joins them. With `edge`, the
 * side stream waits on an event recorded after the writer: the edge. */
static CUgraphExec writer_and_reader(CUstream s, CUdeviceptr src, CUdeviceptr dst, int edge)
{
    CUstream side = drv_stream(CU_STREAM_NON_BLOCKING);
    CUevent fork = drv_event(), written = drv_event(), join = drv_event();
    CU_OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(cuEventRecord(fork, s));
    CU_OK(cuStreamWaitEvent(side, fork, 0));
    CU_OK(drv_launch_set(s, src, 42));
    if (edge) {
        CU_OK(cuEventRecord(written, s));
        CU_OK(cuStreamWaitEvent(side, written, 0));
    }
    CU_OK(cuMemcpyDtoDAsync(dst, src, sizeof(int), side));
    CU_OK(cuEventRecord(join, side));
    CU_OK(cuStreamWaitEvent(s, join, 0));
    return instantiate(end_capture(s));
}

/* What the reader copied in one launch, from a writer that found 0. */
static int read_after_launch(CUgraphExec e, CUstream s, CUdeviceptr src, CUdeviceptr dst)
{
    CU_OK(cuMemsetD32(src, 0, 1));
    CU_OK(cuMemsetD32(dst, 7, 1));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    return drv_read_int(dst);
}

/* Creation order hides the missing edge (the writer was captured first);
 * reverse runs the reader first, always: the copy reads 0, not 42. With the
 * edge, every order reads 42. One worker: what runs is the order itself. */
static void a_graph_missing_an_edge_gives_a_wrong_result_under_reverse(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr src = drv_dalloc(sizeof(int)), dst = drv_dalloc(sizeof(int));
    CUgraphExec missing = writer_and_reader(s, src, dst, 0);
    CUgraphExec whole = writer_and_reader(s, src, dst, 1);
    order("creation", 1);
    assert_int_equal(read_after_launch(missing, s, src, dst), 42);
    order("reverse", 1);
    for (int rep = 0; rep < 5; rep++) {
        assert_int_equal(read_after_launch(missing, s, src, dst), 0);
        assert_int_equal(read_after_launch(whole, s, src, dst), 42);
    }
}

/* Under random orders the missing edge shows for some seeds and not for
 * others (two independent nodes: either may go first); with the edge, no
 * seed gives a wrong result. */
static void a_graph_missing_an_edge_gives_a_wrong_result_under_random_for_some_seeds(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr src = drv_dalloc(sizeof(int)), dst = drv_dalloc(sizeof(int));
    CUgraphExec missing = writer_and_reader(s, src, dst, 0);
    CUgraphExec whole = writer_and_reader(s, src, dst, 1);
    int wrong = 0;
    for (unsigned seed = 1; seed <= 32; seed++) {
        char spec[32];
        snprintf(spec, sizeof spec, "random:%u", seed);
        order(spec, 1);
        int v = read_after_launch(missing, s, src, dst);
        if (v != 42 && v != 0)
            fail_msg("the reader copied %d: neither before nor after the writer", v);
        wrong += v == 0;
        assert_int_equal(read_after_launch(whole, s, src, dst), 42);
    }
    if (wrong == 0 || wrong == 32)
        fail_msg("32 seeds gave %d wrong results: the order did not depend on the seed", wrong);
}

/* A queued launch keeps the order it was launched with: launched under
 * reverse behind a gate, it still runs reversed after the order is set to
 * creation. */
static void a_queued_launch_keeps_the_order_it_was_launched_with(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new(), *glog = drv_log_new();
    int *gate = drv_gate_new();
    CUgraphExec e = independent_nodes(s, log, 3);
    order("reverse", 1);
    CU_OK(drv_launch_gate(s, gate, glog, 1));
    CU_OK(cuGraphLaunch(e, s));
    order("creation", 1);
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 3, 3u, 2u, 1u);
}

/* Run on two workers, a graph's nodes are each counted once: node.kernel
 * and launch.graph move by exactly what ran. */
static void node_counters_stay_exact_when_nodes_run_on_two_workers(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CUgraphExec e = independent_nodes(s, log, 6);
    order("random", 2);
    unsigned long long k0 = drv_counter("node.kernel"), g0 = drv_counter("launch.graph");
    for (int i = 0; i < 40; i++)
        CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_counter("node.kernel") - k0, 240);
    assert_int_equal(drv_counter("launch.graph") - g0, 40);
}

/* ---- the environment, in child processes ---------------------------------- */

#define DELAY_US 20000
#define DELAY_NODES 6

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Child: cuInit, and (with CPUCUDA_DELAY_US) a graph of DELAY_NODES
 * independent nodes that must take at least one delay per node on one
 * worker and per two nodes on two. Exit 0 when it does. */
static int child_order(int delay)
{
    CUcontext c;
    CUmodule m;
    CUfunction f;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 10;
    if (!delay)
        return 0;
    if (cuModuleLoad(&m, DRV_KERNELS_PATH) || cuModuleGetFunction(&f, m, "drv_set"))
        return 11;
    CUstream s, side[DELAY_NODES];
    CUevent fork, join[DELAY_NODES];
    int *v = NULL;
    if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuEventCreate(&fork, 0) ||
        cuMemAllocHost((void **)&v, DELAY_NODES * sizeof(int)))
        return 12;
    if (cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) || cuEventRecord(fork, s))
        return 13;
    for (int k = 0; k < DELAY_NODES; k++) {
        CUdeviceptr p = drv_dp(v + k);
        int val = k;
        void *args[] = {&p, &val};
        if (cuStreamCreate(&side[k], CU_STREAM_NON_BLOCKING) || cuEventCreate(&join[k], 0) ||
            cuStreamWaitEvent(side[k], fork, 0) || cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, side[k], args, NULL) ||
            cuEventRecord(join[k], side[k]) || cuStreamWaitEvent(s, join[k], 0))
            return 14;
    }
    CUgraph g;
    CUgraphExec e;
    if (cuStreamEndCapture(s, &g) || cuGraphInstantiate(&e, g, 0))
        return 15;
    for (unsigned w = 1; w <= 2; w++) {
        if (cpucuda_graph_workers_set(w))
            return 16;
        double t0 = now_ms();
        if (cuGraphLaunch(e, s) || cuStreamSynchronize(s))
            return 17;
        double took = now_ms() - t0, floor = (DELAY_NODES / w) * DELAY_US / 1e3;
        if (took < floor) {
            fprintf(stderr, "child: %d independent nodes on %u workers took %.1f ms, under %.1f ms\n",
                    DELAY_NODES, w, took, floor);
            return 18;
        }
    }
    return 0;
}

/* Runs a child with env (NULL-terminated) and CPUCUDA_STATS to a file; its
 * stderr and its stats file (compacted: no whitespace outside strings)
 * into the returned buffers (freed by the caller). Fails unless it exits 0. */
static void run_child(const char *mode, const char *const *env, char **err, char **stats)
{
    char spath[64], epath[64], senv[96];
    snprintf(spath, sizeof spath, "/tmp/drv_order_stats_%d.json", (int)getpid());
    snprintf(epath, sizeof epath, "/tmp/drv_order_err_%d.txt", (int)getpid());
    snprintf(senv, sizeof senv, "CPUCUDA_STATS=%s", spath);
    const char *all[8];
    size_t n = 0;
    for (; env[n] && n < 6; n++)
        all[n] = env[n];
    all[n++] = senv;
    all[n] = NULL;
    unlink(spath);
    fflush(stderr);
    int saved = dup(2), fd = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int rc = drv_run_self(mode, all);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *bufs[2] = {NULL, NULL};
    const char *paths[2] = {epath, spath};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "r");
        char *b = calloc(1, 8192);
        assert_non_null(b);
        size_t len = 0;
        int in_str = 0, c;
        while (f && (c = fgetc(f)) != EOF && len < 8191) {
            if (i == 1 && c == '"')
                in_str = !in_str;
            if (i == 1 && !in_str && (c == ' ' || c == '\n' || c == '\t'))
                continue;
            b[len++] = (char)c;
        }
        if (f)
            fclose(f);
        unlink(paths[i]);
        bufs[i] = b;
    }
    *err = bufs[0];
    *stats = bufs[1];
    if (rc != 0)
        fail_msg("child %s exited %d; stderr: %s", mode, rc, *err);
}

/* The value of "graph_order" in a compacted stats file, into out. */
static void stats_order(const char *stats, char *out, size_t n)
{
    const char *at = strstr(stats, "\"graph_order\":\"");
    if (!at)
        fail_msg("the stats file has no graph_order: %.400s", stats);
    at += strlen("\"graph_order\":\"");
    size_t k = 0;
    while (at[k] && at[k] != '"' && k + 1 < n) {
        out[k] = at[k];
        k++;
    }
    out[k] = 0;
}

/* With CPUCUDA_GRAPH_ORDER unset (empty), graphs run in a random order with
 * a seed of the process's own: the stats file says which, two processes
 * get different seeds, and CPUCUDA_LOG=1 names it on stderr, as a spec
 * that repeats it. A spec given is reported as given. */
static void the_default_order_is_random_with_a_seed_the_stats_and_the_log_report(void **state)
{
    (void)state;
    char *err, *stats, o1[48], o2[48];
    const char *env[] = {"CPUCUDA_GRAPH_ORDER=", "CPUCUDA_GRAPH_WORKERS=", "CPUCUDA_LOG=1", NULL};
    run_child("child-order", env, &err, &stats);
    stats_order(stats, o1, sizeof o1);
    if (strncmp(o1, "random:", 7) != 0 || !strstr(stats, "\"graph_workers\":2"))
        fail_msg("default graph order %s (want random:SEED), stats: %.300s", o1, stats);
    char line[96];
    snprintf(line, sizeof line, "cpucuda: graph order %s, 2 workers", o1);
    if (!strstr(err, line))
        fail_msg("CPUCUDA_LOG=1 did not say \"%s\": %s", line, err);
    free(err);
    free(stats);
    run_child("child-order", env, &err, &stats);
    stats_order(stats, o2, sizeof o2);
    if (!strcmp(o1, o2))
        fail_msg("two processes both ran graphs in %s", o1);
    free(err);
    free(stats);
    const char *given[] = {"CPUCUDA_GRAPH_ORDER=random:4242", "CPUCUDA_GRAPH_WORKERS=3", NULL};
    run_child("child-order", given, &err, &stats);
    stats_order(stats, o1, sizeof o1);
    assert_string_equal(o1, "random:4242");
    assert_non_null(strstr(stats, "\"graph_workers\":3"));
    free(err);
    free(stats);
    const char *rev[] = {"CPUCUDA_GRAPH_ORDER=reverse", NULL};
    run_child("child-order", rev, &err, &stats);
    stats_order(stats, o1, sizeof o1);
    assert_string_equal(o1, "reverse");
    free(err);
    free(stats);
}

/* A malformed CPUCUDA_GRAPH_ORDER or CPUCUDA_GRAPH_WORKERS gets one line
 * naming it and what is used instead (random with the process's seed, 2
 * workers), and that is what the stats report. */
static void a_bad_graph_order_in_the_environment_is_named_with_what_is_used_instead(void **state)
{
    (void)state;
    static const char *const bad[] = {"sideways", "random:", "random:12x", "random:99999999999999999999",
                                      "Reverse", "randomly"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char envv[96], *err, *stats, o[48], want[160];
        snprintf(envv, sizeof envv, "CPUCUDA_GRAPH_ORDER=%s", bad[i]);
        const char *env[] = {envv, "CPUCUDA_GRAPH_WORKERS=9", NULL};
        run_child("child-order", env, &err, &stats);
        stats_order(stats, o, sizeof o);
        snprintf(want, sizeof want, "cpucuda: bad CPUCUDA_GRAPH_ORDER '%s': ", bad[i]);
        const char *at = strstr(err, want);
        char tail[64];
        snprintf(tail, sizeof tail, "; using %s\n", o);
        if (strncmp(o, "random:", 7) != 0 || !at || !strstr(at, tail))
            fail_msg("CPUCUDA_GRAPH_ORDER=%s: order %s, stderr: %s", bad[i], o, err);
        if (!strstr(err, "cpucuda: bad CPUCUDA_GRAPH_WORKERS '9': want 1 to 8; using 2\n") ||
            !strstr(stats, "\"graph_workers\":2"))
            fail_msg("CPUCUDA_GRAPH_WORKERS=9: stderr: %s stats: %.300s", err, stats);
        free(err);
        free(stats);
    }
}

/* In the process, a malformed spec is refused with one line naming it and
 * the order kept, and the order it keeps is still the one that runs. */
static void a_bad_graph_order_set_in_the_process_changes_nothing(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CUgraphExec e = independent_nodes(s, log, 3);
    order("reverse", 1);
    char epath[64];
    snprintf(epath, sizeof epath, "/tmp/drv_order_err_%d.txt", (int)getpid());
    fflush(stderr);
    int saved = dup(2), fd = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    int r1 = cpucuda_graph_order_set("sideways"), r2 = cpucuda_graph_workers_set(0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char err[512] = {0};
    FILE *f = fopen(epath, "r");
    assert_non_null(f);
    size_t len = fread(err, 1, sizeof err - 1, f);
    err[len] = 0;
    fclose(f);
    unlink(epath);
    assert_int_equal(r1, -1);
    assert_int_equal(r2, -1);
    if (!strstr(err, "cpucuda: bad graph order 'sideways': want creation, reverse, random or random:SEED; "
                     "keeping reverse\n") ||
        !strstr(err, "cpucuda: bad graph workers 0: want 1 to 8; keeping 1\n"))
        fail_msg("stderr: %s", err);
    unsigned out[3];
    launch_and_read(e, s, log, 3, out);
    drv_assert_log(log, 3, 3u, 2u, 1u);
}

/* With CPUCUDA_DELAY_US, each node still costs one delay: independent
 * nodes on one worker take a delay each, on two workers at least one per
 * two nodes (they overlap, as eager work on two streams does). */
static void with_a_worker_delay_independent_nodes_still_cost_a_delay_each(void **state)
{
    (void)state;
    char *err, *stats, delay[40];
    snprintf(delay, sizeof delay, "CPUCUDA_DELAY_US=%d", DELAY_US);
    const char *env[] = {delay, "CPUCUDA_GRAPH_ORDER=random", NULL};
    run_child("child-order-delay", env, &err, &stats);
    free(err);
    free(stats);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (!strcmp(argv[1], "child-order"))
            return child_order(0);
        if (!strcmp(argv[1], "child-order-delay"))
            return child_order(1);
        return 2;
    }
    const struct CMUnitTest tests[] = {
        TEST(every_order_runs_a_chain_in_its_only_order),
        TEST(every_order_runs_each_node_after_its_dependencies),
        TEST(reverse_runs_independent_nodes_created_last_first),
        TEST(random_orders_differ_from_creation_order_and_a_seed_repeats_them),
        TEST(independent_nodes_run_at_the_same_time_on_two_workers),
        TEST(a_graph_missing_an_edge_gives_a_wrong_result_under_reverse),
        TEST(a_graph_missing_an_edge_gives_a_wrong_result_under_random_for_some_seeds),
        TEST(a_queued_launch_keeps_the_order_it_was_launched_with),
        TEST(node_counters_stay_exact_when_nodes_run_on_two_workers),
        TEST(the_default_order_is_random_with_a_seed_the_stats_and_the_log_report),
        TEST(a_bad_graph_order_in_the_environment_is_named_with_what_is_used_instead),
        TEST(a_bad_graph_order_set_in_the_process_changes_nothing),
        TEST(with_a_worker_delay_independent_nodes_still_cost_a_delay_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
