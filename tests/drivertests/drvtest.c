/* drvtest.c - helpers shared by the CPU-driver tests (see drvtest.h). They
 * fail the running cmocka test on any unexpected driver result, and remember
 * what each test allocated so the teardown can leave a clean driver behind
 * even when a test stops half-way (an open gate or capture would otherwise
 * poison every later test in the same process). */
#include "drvtest.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

CUdevice drv_dev;
CUcontext drv_ctx;
static CUmodule module;

#define TRACK_MAX 256
static void *pinned[TRACK_MAX];
static size_t npinned;
static CUdeviceptr dmem[TRACK_MAX];
static size_t ndmem;
static CUstream streams[TRACK_MAX];
static size_t nstreams;
static CUevent events[TRACK_MAX];
static size_t nevents;
static int *gates[TRACK_MAX];
static size_t ngates;
static CUgraph graphs[TRACK_MAX];
static size_t ngraphs;
static CUgraphExec execs[TRACK_MAX];
static size_t nexecs;

const char *drv_err(CUresult r)
{
    const char *s = NULL;
    if (cuGetErrorName && cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "(no name)";
}

void drv_init(void)
{
    if (!cuInit)
        fail_msg("the driver does not export cuInit");
    if (!drv_ctx) {
        CU_OK(cuInit(0));
        CU_OK(cuDeviceGet(&drv_dev, 0));
        CU_OK(cuDevicePrimaryCtxRetain(&drv_ctx, drv_dev));
    }
    CU_OK(cuCtxSetCurrent(drv_ctx));
}

CUresult drv_thread_ctx(void)
{
    return cuCtxSetCurrent(drv_ctx);
}

CUmodule drv_module(void)
{
    drv_init();
    if (!module)
        CU_OK(cuModuleLoad(&module, DRV_KERNELS_PATH));
    return module;
}

CUfunction drv_fn(const char *name)
{
    CUfunction f = NULL;
    CUresult r = cuModuleGetFunction(&f, drv_module(), name);
    if (r != CUDA_SUCCESS || !f)
        fail_msg("cuModuleGetFunction(%s) returned %d %s", name, (int)r, drv_err(r));
    return f;
}

static void track(void **arr, size_t *n, void *p)
{
    if (*n < TRACK_MAX)
        arr[(*n)++] = p;
}

void *drv_pinned(size_t bytes)
{
    void *p = NULL;
    drv_init();
    CU_OK(cuMemAllocHost(&p, bytes));
    assert_non_null(p);
    memset(p, 0, bytes);
    track(pinned, &npinned, p);
    return p;
}

CUdeviceptr drv_dalloc(size_t bytes)
{
    CUdeviceptr d = 0;
    drv_init();
    CU_OK(cuMemAlloc(&d, bytes));
    assert_true(d != 0);
    CU_OK(cuMemsetD8(d, 0, bytes));
    CU_OK(cuCtxSynchronize());
    if (ndmem < TRACK_MAX)
        dmem[ndmem++] = d;
    return d;
}

CUstream drv_stream(unsigned flags)
{
    CUstream s = NULL;
    drv_init();
    CU_OK(cuStreamCreate(&s, flags));
    assert_non_null(s);
    track((void **)streams, &nstreams, s);
    return s;
}

CUevent drv_event(void)
{
    CUevent e = NULL;
    drv_init();
    CU_OK(cuEventCreate(&e, CU_EVENT_DEFAULT));
    track((void **)events, &nevents, e);
    return e;
}

void drv_track_graph(CUgraph g)
{
    if (g)
        track((void **)graphs, &ngraphs, g);
}

void drv_track_exec(CUgraphExec e)
{
    if (e)
        track((void **)execs, &nexecs, e);
}

unsigned *drv_log_new(void)
{
    return drv_pinned(DRV_LOG_CAP * sizeof(unsigned));
}

int *drv_gate_new(void)
{
    int *g = drv_pinned(sizeof(int));
    track((void **)gates, &ngates, g);
    return g;
}

void drv_gate_open(int *gate)
{
    __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
}

struct opener {
    int *gate;
    unsigned ms;
};

/* Openers still to fire: the teardown waits for them before freeing gates. */
static int openers_live;

static void *opener_main(void *arg)
{
    struct opener o = *(struct opener *)arg;
    free(arg);
    drv_sleep_ms(o.ms);
    drv_gate_open(o.gate);
    __atomic_fetch_sub(&openers_live, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

void drv_gate_open_after(int *gate, unsigned ms)
{
    struct opener *o = malloc(sizeof *o);
    assert_non_null(o);
    o->gate = gate;
    o->ms = ms;
    pthread_t t;
    __atomic_fetch_add(&openers_live, 1, __ATOMIC_ACQ_REL);
    assert_int_equal(pthread_create(&t, NULL, opener_main, o), 0);
    pthread_detach(t);
}

CUresult drv_launch_record(CUstream s, unsigned *log, unsigned tag)
{
    CUdeviceptr l = drv_dp(log);
    void *args[] = {&l, &tag};
    return cuLaunchKernel(drv_fn("drv_record"), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

CUresult drv_launch_gate(CUstream s, int *gate, unsigned *log, unsigned tag)
{
    CUdeviceptr g = drv_dp(gate), l = drv_dp(log);
    void *args[] = {&g, &l, &tag};
    return cuLaunchKernel(drv_fn("drv_gate"), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

CUresult drv_launch_set(CUstream s, CUdeviceptr p, int v)
{
    void *args[] = {&p, &v};
    return cuLaunchKernel(drv_fn("drv_set"), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

CUresult drv_launch_add(CUstream s, CUdeviceptr p, int v, unsigned n)
{
    void *args[] = {&p, &v, &n};
    unsigned blocks = (n + 31) / 32;
    return cuLaunchKernel(drv_fn("drv_add"), blocks ? blocks : 1, 1, 1, 32, 1, 1, 0, s, args,
                          NULL);
}

unsigned drv_log_count(const unsigned *log)
{
    return __atomic_load_n(&log[0], __ATOMIC_ACQUIRE);
}

void drv_assert_log(const unsigned *log, unsigned n, ...)
{
    unsigned want[DRV_LOG_CAP];
    va_list ap;
    va_start(ap, n);
    for (unsigned i = 0; i < n && i < DRV_LOG_CAP; i++)
        want[i] = va_arg(ap, unsigned);
    va_end(ap);
    unsigned have = drv_log_count(log);
    int ok = have == n;
    for (unsigned i = 0; ok && i < n; i++)
        ok = __atomic_load_n(&log[i + 1], __ATOMIC_ACQUIRE) == want[i];
    if (ok)
        return;
    char buf[512];
    size_t off = 0;
    off += (size_t)snprintf(buf + off, sizeof buf - off, "order log: got %u [", have);
    for (unsigned i = 0; i < have && i + 1 < DRV_LOG_CAP && off < sizeof buf - 32; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, " %#x", log[i + 1]);
    off += (size_t)snprintf(buf + off, sizeof buf - off, " ], want %u [", n);
    for (unsigned i = 0; i < n && off < sizeof buf - 32; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, " %#x", want[i]);
    snprintf(buf + off, sizeof buf - off, " ] (0x8000.... = gate timed out)");
    fail_msg("%s", buf);
}

int drv_read_int(CUdeviceptr p)
{
    int v = 0;
    CU_OK(cuMemcpyDtoH(&v, p, sizeof v));
    return v;
}

unsigned long long drv_counter(const char *name)
{
    if (!cpucuda_counter)
        fail_msg("the driver does not export cpucuda_counter");
    return cpucuda_counter(name);
}

void drv_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void drv_in_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

int drv_run_self(const char *mode, const char *const *env)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execl("/proc/self/exe", "/proc/self/exe", mode, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

int drv_teardown(void **state)
{
    (void)state;
    if (!drv_ctx || !cuCtxSetCurrent)
        return 0;
    cuCtxSetCurrent(drv_ctx);
    for (size_t i = 0; i < ngates; i++)
        drv_gate_open(gates[i]);
    ngates = 0;
    while (__atomic_load_n(&openers_live, __ATOMIC_ACQUIRE) > 0)
        drv_sleep_ms(1);
    if (cpucuda_faults_set)
        cpucuda_faults_set("");
    for (size_t i = 0; i < nstreams; i++) {
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
        if (cuStreamIsCapturing && cuStreamIsCapturing(streams[i], &st) == CUDA_SUCCESS &&
            st != CU_STREAM_CAPTURE_STATUS_NONE) {
            CUgraph g = NULL;
            cuStreamEndCapture(streams[i], &g);
            if (g)
                cuGraphDestroy(g);
        }
    }
    if (cuThreadExchangeStreamCaptureMode) {
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
        cuThreadExchangeStreamCaptureMode(&m);
    }
    cuCtxSynchronize();
    for (size_t i = 0; i < nexecs; i++)
        cuGraphExecDestroy(execs[i]);
    nexecs = 0;
    for (size_t i = 0; i < ngraphs; i++)
        cuGraphDestroy(graphs[i]);
    ngraphs = 0;
    for (size_t i = 0; i < nevents; i++)
        cuEventDestroy(events[i]);
    nevents = 0;
    for (size_t i = 0; i < nstreams; i++)
        cuStreamDestroy(streams[i]);
    nstreams = 0;
    for (size_t i = 0; i < ndmem; i++)
        cuMemFree(dmem[i]);
    ndmem = 0;
    for (size_t i = 0; i < npinned; i++)
        cuMemFreeHost(pinned[i]);
    npinned = 0;
    return 0;
}
