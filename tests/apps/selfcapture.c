/* selfcapture - a program that makes its own CUDA graph: it captures a few
 * kernels on a created stream (thread-local mode), instantiates the graph and
 * launches it ITERS times, interleaved with eager kernels and copies on the
 * same stream. It then redoes the same work eagerly on a second set of
 * buffers and requires the same bits. A shim must pass its capture through.
 * Usage: selfcapture MODULE ITERS [N]   (N cells, default 2048) */
#include <cuda.h>

#include "appcommon.h"

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[N]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    int32_t n = (int32_t)app_arg(argc, argv, 3, 2048, 8, 1 << 24);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_stencil, f_axpy, f_scale, f_iota;
    app_open(argv[1], &dev, &ctx, &mod);
    f_stencil = app_function(mod, "stencil3");
    f_axpy = app_function(mod, "axpy");
    f_scale = app_function(mod, "scale_add_scalar");
    f_iota = app_function(mod, "iota_f32");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    size_t bytes = (size_t)n * sizeof(float);
    CUdeviceptr a[2], b[2], c[2];   /* [0]: graph run, [1]: eager reference */
    for (int k = 0; k < 2; k++) {
        CK(cuMemAlloc, (&a[k], bytes));
        CK(cuMemAlloc, (&b[k], bytes));
        CK(cuMemAlloc, (&c[k], bytes));
    }
    float *hprobe;
    CK(cuMemHostAlloc, ((void **)&hprobe, sizeof(float), 0));

    unsigned int grid = app_blocks(n);
    float wl = 0.25f, wc = 0.5f, wr = 0.25f, half = 0.5f, decay = 0.5f;
    float sa = 1.0f / 512.0f, ba = 1.0f, sc = -1.0f / 1024.0f, bc = 2.0f;

    /* One step of the captured work, on buffer set k. */
#define STEP(k)                                                                       \
    do {                                                                              \
        void *st_args[] = { &b[k], &a[k], &n, &wl, &wc, &wr };                        \
        void *ax_args[] = { &a[k], &c[k], &half, &n };                                \
        void *st2_args[] = { &c[k], &b[k], &n, &wl, &wc, &wr };                       \
        CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, st_args, NULL));  \
        CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ax_args, NULL));     \
        CK(cuLaunchKernel, (f_stencil, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, st2_args, NULL)); \
    } while (0)

    /* The eager work between steps: it takes the iteration. */
#define EAGER(k, it)                                                                  \
    do {                                                                              \
        float dt_ = 0.25f;                                                            \
        uint32_t iter_ = (uint32_t)(it);                                              \
        void *sc_args[] = { &a[k], &n, &decay, &dt_, &iter_ };                        \
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, sc_args, NULL));    \
    } while (0)

    for (int k = 0; k < 2; k++) {
        void *ia[] = { &a[k], &n, &sa, &ba };
        void *ic[] = { &c[k], &n, &sc, &bc };
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ia, NULL));
        CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ic, NULL));
    }
    CK(cuStreamSynchronize, (s));

    CUgraph graph;
    CUgraphExec exec;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CK(cuStreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuStreamIsCapturing, (s, &cs));
    if (cs != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        app_die("stream is not capturing after cuStreamBeginCapture");
    STEP(0);
    CK(cuStreamEndCapture, (s, &graph));
    CK(cuStreamIsCapturing, (s, &cs));
    if (cs != CU_STREAM_CAPTURE_STATUS_NONE)
        app_die("stream is still capturing after cuStreamEndCapture");
    size_t nnodes = 0;
    CK(cuGraphGetNodes, (graph, NULL, &nnodes));
    if (nnodes != 3)
        app_die("captured graph does not have 3 nodes");
    CK(cuGraphInstantiate, (&exec, graph, 0));

    uint64_t probes = 0x53454c46ull;
    for (long it = 0; it < iters; it++) {
        EAGER(0, it);
        CK(cuGraphLaunch, (exec, s));
        if (it % 4 == 3) {
            CK(cuMemcpyDtoHAsync, (hprobe, a[0] + sizeof(float) * (CUdeviceptr)(n / 4),
                                   sizeof(float), s));
            CK(cuStreamSynchronize, (s));
            probes = app_hash_u64(probes, app_f32_bits(*hprobe));
        }
    }
    for (long it = 0; it < iters; it++) {
        EAGER(1, it);
        STEP(1);
    }
    CK(cuStreamSynchronize, (s));

    float *h = malloc(2 * bytes);
    if (h == NULL)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, a[0], bytes));
    CK(cuMemcpyDtoH, (h + n, a[1], bytes));
    if (memcmp(h, h + n, bytes) != 0)
        app_die("graph result differs from the eager result");
    CK(cuMemcpyDtoH, (h, c[0], bytes));
    CK(cuMemcpyDtoH, (h + n, c[1], bytes));
    if (memcmp(h, h + n, bytes) != 0)
        app_die("graph result differs from the eager result");

    app_checksum("selfcapture-probes", probes);
    /* h: a of the graph run; h + n: still c of the eager run (== c[0]). */
    CK(cuMemcpyDtoH, (h, a[0], bytes));
    app_checksum("selfcapture-field", app_hash(app_hash(0x5346, h, bytes), h + n, bytes));

    free(h);
    CK(cuGraphExecDestroy, (exec));
    CK(cuGraphDestroy, (graph));
    CK(cuMemFreeHost, (hprobe));
    for (int k = 0; k < 2; k++) {
        CK(cuMemFree, (a[k]));
        CK(cuMemFree, (b[k]));
        CK(cuMemFree, (c[k]));
    }
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
