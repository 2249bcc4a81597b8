/* edges - the edges of a process's life under a replaying shim. Each mode
 * repeats a short launch sequence on a created stream (so a shim captures
 * and replays it) and then:
 *   exit       leaves the last sequence half issued and calls exit() without
 *              synchronizing: the work must still reach the driver (the
 *              integration test compares the driver's counts of what ran);
 *   fork       forks; the child computes on the host only and exits, and
 *              must leave the parent's CUDA state and report alone; the
 *              parent goes on replaying;
 *   reopen     dlopen()s libcuda.so.1 itself, resolves cuLaunchKernel and
 *              cuStreamSynchronize through it, dlclose()s it, opens it again,
 *              and keeps launching through the new pointers;
 *   capturing  captures its own graph on a second stream in a second thread,
 *              24 times over, while the main thread keeps launching, then
 *              launches the last one.
 * Prints checksums of the results.
 * Usage: edges MODULE ITERS [exit|fork|reopen|capturing]   (default exit) */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "appcommon.h"

#define N 512

static CUcontext g_ctx;
static CUfunction f_axpy, f_scale;
static CUdeviceptr g_x, g_y, g_z;

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
typedef CUresult (*sync_fn)(CUstream);

static void step(launch_fn launch, CUstream s, CUdeviceptr y, CUdeviceptr x)
{
    int32_t n = N;
    float a = 0.25f, decay = 0.75f, dt = 0.5f;
    uint32_t iter = 1;
    void *axpy_args[] = { &y, &x, &a, &n };
    void *scale_args[] = { &y, &n, &decay, &dt, &iter };
    CUresult r = launch(f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL);
    if (r == CUDA_SUCCESS)
        r = launch(f_scale, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, scale_args, NULL);
    if (r != CUDA_SUCCESS)
        app_fail("cuLaunchKernel", (int)r);
}

/* Captures its own graph several times over, each while the main thread
 * keeps launching (a begin that lands between two deferred launches of the
 * main thread is the case that matters); keeps the last executable. */
#define CAPTURE_ROUNDS 24

static void *capture_thread(void *arg)
{
    CUgraphExec *exec = arg;
    CUstream s2;
    CK(cuCtxSetCurrent, (g_ctx));
    CK(cuStreamCreate, (&s2, CU_STREAM_NON_BLOCKING));
    for (int round = 0; round < CAPTURE_ROUNDS; round++) {
        CUgraph g;
        CK(cuStreamBeginCapture, (s2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        for (int i = 0; i < 4; i++) {
            step(cuLaunchKernel, s2, g_z, g_z);
            usleep(round % 4 == 0 ? 1000 : 50); /* the main thread works meanwhile */
        }
        CK(cuStreamEndCapture, (s2, &g));
        if (round > 0)
            CK(cuGraphExecDestroy, (*exec));
        CK(cuGraphInstantiate, (exec, g, 0));
        CK(cuGraphDestroy, (g));
        usleep(100);
    }
    CK(cuStreamDestroy, (s2));
    return NULL;
}

static uint64_t read_sum(CUdeviceptr p)
{
    float h[N];
    CK(cuMemcpyDtoH, (h, p, sizeof h));
    return app_hash(0x65646765ull, h, sizeof h);
}

int main(int argc, char **argv)
{
    app_usage(argc, argv, "exit|fork|reopen|capturing");
    long iters = app_arg(argc, argv, 2, 20, 1, 1000000);
    const char *mode = argc > 3 ? argv[3] : "exit";
    CUdevice dev;
    CUmodule mod;
    CUfunction f_iota;
    CUstream s;
    app_open(argv[1], &dev, &g_ctx, &mod);
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc, (&g_x, N * sizeof(float)));
    CK(cuMemAlloc, (&g_y, N * sizeof(float)));
    CK(cuMemAlloc, (&g_z, N * sizeof(float)));
    int32_t n = N;
    float sc = 0.01f, base = 1.0f;
    void *iota_args[] = { &g_x, &n, &sc, &base };
    CK(cuLaunchKernel, (f_iota, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));
    CK(cuMemsetD32Async, (g_y, 0, N, s));
    CK(cuMemsetD32Async, (g_z, 0x3f800000u, N, s));
    CK(cuStreamSynchronize, (s));

    if (!strcmp(mode, "exit")) {
        for (long it = 0; it < iters; it++) {
            step(cuLaunchKernel, s, g_y, g_x);
            CK(cuStreamSynchronize, (s));
        }
        app_checksum("edges-before-exit", read_sum(g_y));
        fflush(stdout);
        int32_t n2 = N;
        float a = 0.25f;
        void *axpy_args[] = { &g_y, &g_x, &a, &n2 };
        CK(cuLaunchKernel, (f_axpy, app_blocks(N), 1, 1, TK_BLOCK, 1, 1, 0, s, axpy_args, NULL));
        exit(0); /* no synchronize: the launch above must still reach the driver */
    } else if (!strcmp(mode, "fork")) {
        for (long it = 0; it < iters; it++) {
            step(cuLaunchKernel, s, g_y, g_x);
            CK(cuStreamSynchronize, (s));
            if (it == iters / 2) {
                fflush(stdout);
                pid_t pid = fork();
                if (pid == 0) {
                    uint64_t h = 0;
                    for (int i = 0; i < 1000; i++)
                        h = app_hash_u64(h, (uint64_t)i);
                    /* Host work only: CUDA is not fork-safe. The child exits
                     * through exit(), its atexit handlers (the shim's among
                     * them) included; except under AddressSanitizer, whose
                     * leak check at exit locks its allocator, which another
                     * thread of the parent (a driver worker freeing work) may
                     * have held at the fork: the child then waits for ever
                     * (seen on 2026-11-30, 3 runs in 20 under load). */
#if defined(__SANITIZE_ADDRESS__)
                    _exit(h == 0 ? 1 : 0);
#else
                    exit(h == 0 ? 1 : 0);
#endif
                }
                int status = 0;
                if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
                    WEXITSTATUS(status) != 0)
                    app_die("the forked child failed");
            }
        }
        app_checksum("edges-fork", read_sum(g_y));
    } else if (!strcmp(mode, "reopen")) {
        for (int round = 0; round < 2; round++) {
            void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
            if (!h)
                app_die("dlopen(libcuda.so.1) failed");
            launch_fn launch = (launch_fn)dlsym(h, "cuLaunchKernel");
            sync_fn sync = (sync_fn)dlsym(h, "cuStreamSynchronize");
            if (!launch || !sync)
                app_die("dlsym of the driver failed");
            for (long it = 0; it < iters; it++) {
                step(launch, s, g_y, g_x);
                CUresult r = sync(s);
                if (r != CUDA_SUCCESS)
                    app_fail("cuStreamSynchronize", (int)r);
            }
            dlclose(h);
        }
        app_checksum("edges-reopen", read_sum(g_y));
    } else if (!strcmp(mode, "capturing")) {
        CUgraphExec exec;
        pthread_t t;
        if (pthread_create(&t, NULL, capture_thread, &exec) != 0)
            app_die("pthread_create failed");
        for (long it = 0; it < iters; it++) {
            step(cuLaunchKernel, s, g_y, g_x);
            CK(cuStreamSynchronize, (s));
        }
        pthread_join(t, NULL);
        for (long it = 0; it < 3; it++)
            CK(cuGraphLaunch, (exec, s));
        CK(cuStreamSynchronize, (s));
        CK(cuGraphExecDestroy, (exec));
        app_checksum("edges-capturing-y", read_sum(g_y));
        app_checksum("edges-capturing-z", read_sum(g_z));
    } else {
        app_die("the third argument must be exit, fork, reopen or capturing");
    }
    CK(cuMemFree, (g_x));
    CK(cuMemFree, (g_y));
    CK(cuMemFree, (g_z));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
