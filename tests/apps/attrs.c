/* attrs - kernels launched through cuLaunchKernelEx with launch attributes
 * (issue 16). Each iteration, on a non-blocking stream: axpy with
 * {cooperative, priority 1}, scale_add_scalar with {memory sync domain
 * remote}, axpy with {an IGNORE entry, a 1x1x1 cluster}, a plain
 * cuLaunchKernel of scale_add_scalar, then a synchronize. The attributes
 * change nothing a CPU kernel computes: the CPU driver counts the kernels
 * that ran with each (kernel.attr.*, eagerly or as graph nodes), so a shim
 * that dropped one from a graph shows in the counts, not in the checksums.
 * Mode `pss` adds an axpy launched with programmatic stream serialization
 * (as cuBLASLt launches some GEMMs): captured with the step, its graph
 * node made without the attribute (the CPU driver refuses it in a
 * capture), so only its eager runs count kernel.attr.programmatic_stream_
 * serialization. `pss0` gives that launch the attribute with the value 0
 * (off). `pssmix` gives it the attribute on even iterations and none on
 * odd ones (through cuLaunchKernelEx without attributes): two structures.
 * `pssscalar` changes its scalar every iteration (a value never seen
 * before: the step is captured with updates). Mode `change` drops the
 * first kernel's priority for good halfway: the same step with other
 * attributes, a new sequence (whose graph must not take the old executable
 * over: an update is not known to carry attributes).
 * Usage: attrs MODULE ITERS [plain|pss|pss0|pssmix|pssscalar|change]
 * (default plain) */
#include <string.h>

#include <cuda.h>

#include "appcommon.h"

#define N 4096

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[plain|pss|pss0|pssmix|pssscalar|change]");
    long iters = app_arg(argc, argv, 2, 0, 1, 100000000);
    const char *mode = argc > 3 ? argv[3] : "plain";
    int pss0 = !strcmp(mode, "pss0"), pssmix = !strcmp(mode, "pssmix");
    int pssscalar = !strcmp(mode, "pssscalar");
    int pss = !strcmp(mode, "pss") || pss0 || pssmix || pssscalar, change = !strcmp(mode, "change");
    if (!pss && !change && strcmp(mode, "plain")) {
        printf("error: bad mode %s (want plain, pss, pss0, pssmix, pssscalar or change)\n", mode);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    app_open(argv[1], &dev, &ctx, &mod);
    CUfunction f_axpy = app_function(mod, "axpy");
    CUfunction f_scale = app_function(mod, "scale_add_scalar");
    CUfunction f_iota = app_function(mod, "iota_f32");
    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, y;
    CK(cuMemAlloc, (&x, N * sizeof(float)));
    CK(cuMemAlloc, (&y, N * sizeof(float)));
    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float start = 0.0f, step = 0.001f;
    void *iota_args[] = { &x, &n, &step, &start };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota_args, NULL));
    void *iota2_args[] = { &y, &n, &step, &step };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iota2_args, NULL));

    float a = 0.25f, b = -0.125f, decay = 0.9375f, dt = 0.5f;
    uint32_t iter = 7;
    void *axpy_xy[] = { &y, &x, &a, &n };
    void *axpy_yx[] = { &x, &y, &b, &n };
    void *scale_x[] = { &x, &n, &decay, &dt, &iter };
    void *scale_y[] = { &y, &n, &decay, &dt, &iter };

    CUlaunchConfig base;
    memset(&base, 0, sizeof base);
    base.gridDimX = grid, base.gridDimY = 1, base.gridDimZ = 1;
    base.blockDimX = TK_BLOCK, base.blockDimY = 1, base.blockDimZ = 1;
    base.hStream = s;

    CUlaunchAttribute coop_prio[2];
    memset(coop_prio, 0, sizeof coop_prio);
    coop_prio[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    coop_prio[0].value.cooperative = 1;
    coop_prio[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    coop_prio[1].value.priority = 1;
    CUlaunchConfig c1 = base;
    c1.attrs = coop_prio, c1.numAttrs = 2;

    CUlaunchAttribute domain;
    memset(&domain, 0, sizeof domain);
    domain.id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
    domain.value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    CUlaunchConfig c2 = base;
    c2.attrs = &domain, c2.numAttrs = 1;

    CUlaunchAttribute cluster[2];
    memset(cluster, 0, sizeof cluster);
    cluster[0].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
    cluster[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster[1].value.clusterDim.x = 1;
    cluster[1].value.clusterDim.y = 1;
    cluster[1].value.clusterDim.z = 1;
    CUlaunchConfig c3 = base;
    c3.attrs = cluster, c3.numAttrs = 2;

    CUlaunchAttribute serial;
    memset(&serial, 0, sizeof serial);
    serial.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    serial.value.programmaticStreamSerializationAllowed = pss0 ? 0 : 1;
    CUlaunchConfig c4 = base;
    c4.attrs = &serial, c4.numAttrs = 1;
    float a4 = a;
    void *axpy_xy4[] = { &y, &x, &a4, &n };

    for (long it = 0; it < iters; it++) {
        if (change && it == iters / 2)
            c1.numAttrs = 1; /* cooperative only, from here on */
        CK(cuLaunchKernelEx, (&c1, f_axpy, axpy_xy, NULL));
        CK(cuLaunchKernelEx, (&c2, f_scale, scale_x, NULL));
        CK(cuLaunchKernelEx, (&c3, f_axpy, axpy_yx, NULL));
        CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_y, NULL));
        if (pss) {
            c4.numAttrs = pssmix && it % 2 ? 0 : 1;
            if (pssscalar)
                a4 = 0.001f * (float)(it + 1);
            CK(cuLaunchKernelEx, (&c4, f_axpy, axpy_xy4, NULL));
        }
        CK(cuStreamSynchronize, (s));
    }
    float *h = malloc(2 * N * sizeof(float));
    if (!h)
        app_die("out of host memory");
    CK(cuMemcpyDtoH, (h, x, N * sizeof(float)));
    CK(cuMemcpyDtoH, (h + N, y, N * sizeof(float)));
    app_checksum("attrs-x", app_hash(0x78, h, N * sizeof(float)));
    app_checksum("attrs-y", app_hash(0x79, h + N, N * sizeof(float)));
    free(h);
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
