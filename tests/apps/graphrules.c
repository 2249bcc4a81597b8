/* graphrules - the rules for executable graphs that the engine relies on
 * since issue 35, asked of whatever driver runs this program; the GPU
 * script (tests/gpu/run.sh) compares a GPU's answers with the CPU driver's,
 * line by line. Each line says what was asked and what the driver did:
 *   funcupdate  a graph captured from one add_i64_vec4 launch is
 *               instantiated; its kernel node is then set
 *               (cuGraphExecKernelNodeSetParams_v2) to add_i64_unrolled,
 *               another function of the same context with another parameter
 *               layout, writing elsewhere: is that accepted, and does the
 *               next launch compute with the new function and parameters?
 *               (the engine sets a switched kernel's function so: "Kernels
 *               that switch", docs/engine.md)
 *   waitnode    a graph captured as [a wait with CU_EVENT_WAIT_EXTERNAL on
 *               event E0, never recorded; axpy y += x] (the engine's wait
 *               node for a home stream's wait on an outside event): launched
 *               as it is, does it wait for nothing? Then its node is set to
 *               E1 (cuGraphExecEventWaitNodeSetEvent); E1 is recorded on a
 *               stream held by cuStreamWaitValue32 behind the kernel that
 *               fills x; the graph is launched; E1 is recorded again on an
 *               idle stream. Does the launch wait for the record E1 had when
 *               it was launched (still waiting 200 ms later, until the host
 *               releases the held stream), and does it read x as filled?
 * Every line is printed whatever the answer (a refusal is printed with its
 * error name), so that two drivers' outputs can be compared, then a
 * checksum of what the graphs computed; the exit status is 0 unless a call
 * the rule does not ask about fails. ITERS: launches of the updated graph
 * of funcupdate.
 * Usage: graphrules MODULE ITERS [funcupdate|waitnode|all] */
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "appcommon.h"

#define N 64

static uint64_t sum = 1469598103934665603ull; /* what the graphs computed */
static long iters = 1;

static const char *err_name(CUresult r)
{
    const char *s = NULL;
    if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
        s = "an unknown error";
    return s;
}

/* The one node of `g` of type `type`. */
static CUgraphNode node_of(CUgraph g, CUgraphNodeType type)
{
    CUgraphNode nodes[8];
    size_t n = 8;
    CK(cuGraphGetNodes, (g, nodes, &n));
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        CK(cuGraphNodeGetType, (nodes[i], &t));
        if (t == type)
            return nodes[i];
    }
    app_die("the captured graph lacks the node asked for");
    return NULL;
}

static void funcupdate(CUmodule mod)
{
    CUfunction vec4 = app_function(mod, "add_i64_vec4");
    CUfunction unrolled = app_function(mod, "add_i64_unrolled");
    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b, out, out2;
    size_t bytes = N * sizeof(int64_t);
    int64_t ha[N], hb[N], got[N];
    for (int i = 0; i < N; i++)
        ha[i] = 1000 + i, hb[i] = 7 * i;
    CK(cuMemAlloc, (&a, bytes));
    CK(cuMemAlloc, (&b, bytes));
    CK(cuMemAlloc, (&out, bytes));
    CK(cuMemAlloc, (&out2, bytes));
    CK(cuMemcpyHtoD, (a, ha, bytes));
    CK(cuMemcpyHtoD, (b, hb, bytes));
    CK(cuMemsetD8, (out, 0, bytes));
    CK(cuMemsetD8, (out2, 0, bytes));
    /* A memset of device memory may still run, on the legacy stream, when
     * the call returns: the non-blocking stream below does not wait for it. */
    CK(cuCtxSynchronize, ());
    int32_t n = N;
    void *args[] = { &out, &a, &b, &n };
    CUgraph g;
    CUgraphExec x;
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuLaunchKernel, (vec4, 1, 1, 1, TK_BLOCK, 1, 1, 0, s, args, NULL));
    CK(cuStreamEndCapture, (s, &g));
    CK(cuGraphInstantiate, (&x, g, 0));
    CUgraphNode k = node_of(g, CU_GRAPH_NODE_TYPE_KERNEL);
    tk_strides3 st = { { 1, 1, 1 } };
    void *args2[] = { &n, &out2, &a, &b, &st };
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    memset(&p, 0, sizeof p);
    p.func = unrolled;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = TK_BLOCK, p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args2;
    CUresult r = cuGraphExecKernelNodeSetParams_v2(x, k, &p);
    for (long i = 0; i < iters; i++)
        CK(cuGraphLaunch, (x, s));
    CK(cuStreamSynchronize, (s));
    CK(cuMemcpyDtoH, (got, out2, bytes));
    sum = app_hash(sum, got, bytes);
    int computed = 1;
    for (int i = 0; i < N; i++)
        computed &= got[i] == ha[i] + hb[i];
    printf("funcupdate: a kernel node set to another function of its context (another "
           "parameter layout): %s; the next launch computes with it: %s\n",
           r == CUDA_SUCCESS ? "accepted" : err_name(r), computed ? "yes" : "no");
    CK(cuGraphExecDestroy, (x));
    CK(cuGraphDestroy, (g));
    CK(cuMemFree, (a));
    CK(cuMemFree, (b));
    CK(cuMemFree, (out));
    CK(cuMemFree, (out2));
    CK(cuStreamDestroy, (s));
}

/* Whether stream `s` is still busy `ms` milliseconds from now (asked every
 * millisecond, so that a stream done early answers early). */
static int busy_for(CUstream s, int ms)
{
    for (int i = 0; i < ms; i++) {
        CUresult r = cuStreamQuery(s);
        if (r == CUDA_SUCCESS)
            return 0;
        if (r != CUDA_ERROR_NOT_READY)
            app_fail("cuStreamQuery", r);
        struct timespec t = { 0, 1000000 };
        nanosleep(&t, NULL);
    }
    return 1;
}

static void waitnode(CUmodule mod)
{
    CUfunction f_iota = app_function(mod, "iota_f32");
    CUfunction f_axpy = app_function(mod, "axpy");
    CUstream s, held, writer, idle;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&held, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&writer, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate, (&idle, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1;
    CK(cuEventCreate, (&e0, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate, (&e1, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr x, y, flag;
    CK(cuMemAlloc, (&x, N * sizeof(float)));
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    CK(cuMemAlloc, (&flag, sizeof(uint32_t)));
    CK(cuMemsetD32, (x, 0, N));
    CK(cuMemsetD32, (y, 0, N));
    CK(cuMemsetD32, (flag, 0, 1));
    CK(cuCtxSynchronize, ()); /* as in funcupdate */
    int32_t n = N;
    float one = 1.0f, scale = 1.0f, base = 5.0f;
    void *axpy_args[] = { &y, &x, &one, &n };
    void *iota_args[] = { &x, &n, &scale, &base };
    CUgraph g;
    CUgraphExec ex;
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuStreamWaitEvent, (s, e0, CU_EVENT_WAIT_EXTERNAL));
    CK(cuLaunchKernel, (f_axpy, 1, 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL));
    CK(cuStreamEndCapture, (s, &g));
    CK(cuGraphInstantiate, (&ex, g, 0));
    CUgraphNode w = node_of(g, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    /* As captured: a wait on an event never recorded. */
    CK(cuGraphLaunch, (ex, s));
    int never = !busy_for(s, 2000);
    printf("waitnode: a wait node on an event never recorded waits for nothing: %s\n",
           never ? "yes" : "no (still waiting after 2 s)");
    CK(cuCtxSynchronize, ());
    CUresult r = cuGraphExecEventWaitNodeSetEvent(ex, w, e1);
    CK(cuStreamWaitValue32, (held, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuLaunchKernel, (f_iota, 1, 1, 1, TK_BLOCK, 1, 1, 0, held, iota_args, NULL));
    CK(cuEventRecord, (e1, held));
    CK(cuGraphLaunch, (ex, s));
    CK(cuEventRecord, (e1, idle)); /* a later record, complete at once */
    CK(cuStreamSynchronize, (idle));
    int waited = busy_for(s, 200);
    CK(cuStreamWriteValue32, (writer, flag, 1, 0));
    CK(cuCtxSynchronize, ());
    float got[N];
    CK(cuMemcpyDtoH, (got, y, sizeof got));
    sum = app_hash(sum, got, sizeof got);
    int after = 1;
    for (int i = 0; i < N; i++)
        after &= got[i] == (float)i * scale + base; /* 0 + x, x as filled */
    printf("waitnode: set to another event: %s; the launch waits for the record the event "
           "had at the launch, not a later one: %s; it reads what that record covered: %s\n",
           r == CUDA_SUCCESS ? "accepted" : err_name(r), waited ? "yes" : "no", after ? "yes" : "no");
    CK(cuGraphExecDestroy, (ex));
    CK(cuGraphDestroy, (g));
    CK(cuEventDestroy, (e0));
    CK(cuEventDestroy, (e1));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuMemFree, (flag));
    CK(cuStreamDestroy, (s));
    CK(cuStreamDestroy, (held));
    CK(cuStreamDestroy, (writer));
    CK(cuStreamDestroy, (idle));
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[funcupdate|waitnode|all]");
    iters = app_arg(argc, argv, 2, 1, 1, 100000);
    const char *mode = argc > 3 ? argv[3] : "all";
    if (strcmp(mode, "funcupdate") && strcmp(mode, "waitnode") && strcmp(mode, "all"))
        app_die("the mode is funcupdate, waitnode or all");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    if (strcmp(mode, "waitnode"))
        funcupdate(mod);
    if (strcmp(mode, "funcupdate"))
        waitnode(mod);
    app_checksum("graphrules", sum);
    app_close(dev, mod);
    return 0;
}
