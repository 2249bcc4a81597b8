/* drv_trace.c - what the CPU driver gives `reprise replay` (issue 29): PTX
 * text loaded as modules and libraries of empty kernels with PTX's
 * parameter layout, cuMemGetAddressRange, and the digest of everything it
 * executed, with what the digest sees and what it cannot. */
#include "drvtest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#pragma weak cuModuleLoadData
#pragma weak cuModuleLoadDataEx
#pragma weak cuLibraryLoadData
#pragma weak cuMemGetAddressRange_v2
#pragma weak cpucuda_digest
#pragma weak cpucuda_digest_reset

static const char ptx[] =
    "// a module the player would write\n"
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    "\n.visible .entry k_struct(\n"
    "  .param .u64 a,\n"
    "  .param .align 8 .b8 s[24],   /* 8..32 */\n"
    "  .param .u32 n,\n"
    "  .param .u8 c,\n"
    "  .param .u64 .ptr .global .align 16 p\n"
    ")\n.maxntid 256, 1, 1\n{\n  ret;\n}\n"
    ".visible .entry k_none()\n{\n  { ret; }\n}\n"
    ".extern .entry k_decl(.param .u32 x);\n";

static void params_are(CUfunction f, size_t n, const size_t *off, const size_t *size)
{
    for (size_t i = 0; i < n; i++) {
        size_t o = 99, s = 99;
        CU_OK(cuFuncGetParamInfo(f, i, &o, &s));
        if (o != off[i] || s != size[i])
            fail_msg("parameter %zu at %zu size %zu, expected %zu size %zu", i, o, s, off[i], size[i]);
    }
    size_t o, s;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, n, &o, &s));
}

/* The layout is PTX's: each parameter at the previous one's end rounded up
 * to its alignment (.align, else its type's size; a .ptr's .align is the
 * pointee's). A replay passes the recorded bytes at the recorded offsets:
 * with another layout its launches would fail or carry other bytes. */
static void a_ptx_module_has_its_entries_with_ptxs_parameter_layout(void **state)
{
    (void)state;
    drv_init();
    CUmodule m;
    CU_OK(cuModuleLoadData(&m, ptx));
    CUfunction f, g;
    CU_OK(cuModuleGetFunction(&f, m, "k_struct"));
    const size_t off[] = {0, 8, 32, 36, 40}, size[] = {8, 24, 4, 1, 8};
    params_are(f, 5, off, size);
    const char *name = NULL;
    CU_OK(cuFuncGetName(&name, f));
    assert_string_equal(name, "k_struct");
    CU_OK(cuModuleGetFunction(&g, m, "k_none"));
    params_are(g, 0, NULL, NULL);
    /* A declaration without a body is no kernel of this module. */
    CU_IS(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&g, m, "k_decl"));
    CU_OK(cuModuleUnload(m));
}

/* A PTX kernel has no C version: it runs, as an empty kernel, and changes
 * nothing; its launch is checked like any other (the parameter buffer's
 * size with an extra buffer, the geometry). */
static void a_ptx_kernel_runs_as_an_empty_kernel_checked_like_any(void **state)
{
    (void)state;
    drv_init();
    CUmodule m;
    CU_OK(cuModuleLoadDataEx(&m, ptx, 0, NULL, NULL));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, m, "k_struct"));
    CUdeviceptr x = drv_dalloc(64);
    CU_OK(drv_launch_set(NULL, x, 7));
    CU_OK(cuCtxSynchronize());
    unsigned char buf[48];
    memset(buf, 0x11, sizeof buf);
    size_t sz = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     CU_LAUNCH_PARAM_END};
    unsigned long long before = drv_counter("launch.eager");
    CU_OK(cuLaunchKernel(f, 64, 2, 1, 256, 1, 1, 1024, NULL, NULL, extra));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_counter("launch.eager"), before + 1);
    assert_int_equal(drv_read_int(x), 7);
    sz = 40; /* the buffer must be the whole parameter buffer */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuModuleUnload(m));
}

/* A library of PTX: CUkernels with the same layouts, context-independent. */
static void a_ptx_library_gives_kernels_with_the_same_layouts(void **state)
{
    (void)state;
    drv_init();
    CUlibrary l;
    CU_OK(cuLibraryLoadData(&l, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CU_OK(cuLibraryGetKernel(&k, l, "k_struct"));
    size_t o, s;
    CU_OK(cuKernelGetParamInfo(k, 1, &o, &s));
    assert_int_equal(o, 8);
    assert_int_equal(s, 24);
    CU_OK(cuKernelGetParamInfo(k, 4, &o, &s));
    assert_int_equal(o, 40);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(k, 5, &o, &s));
    CUfunction f;
    CU_OK(cuKernelGetFunction(&f, k));
    unsigned char buf[48] = {0};
    size_t sz = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuLibraryUnload(l));
}

/* Text that is not PTX this driver understands is INVALID_PTX, a binary
 * image (a cubin's ELF, a fatbin) NOT_SUPPORTED: the driver cannot run
 * code it has no C version of and says which. Nothing is loaded either way. */
static void malformed_ptx_is_invalid_ptx_and_a_binary_image_not_supported(void **state)
{
    (void)state;
    drv_init();
    CUmodule m = NULL;
    static const char *const bad[] = {
        ".entry k(.param .u32 a) { ret; }",                        /* no .version */
        ".version 7.0\n.entry k(.param .u32 a { ret; }",            /* no ) */
        ".version 7.0\n.entry k(.param .u33 a) { ret; }",           /* no type */
        ".version 7.0\n.entry k(.param .align 3 .b8 a[4]) { ret; }", /* align 3 */
        ".version 7.0\n.entry k(.param .b8 a[]) { ret; }",          /* no size */
        ".version 7.0\n.entry k() { ret; }\n.entry k() { ret; }",   /* two of one name */
        ".version 7.0\n.entry k() { ret; ",                         /* no end */
        ".version 7.0\n/* unterminated",
        "hello",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CUresult r = cuModuleLoadData(&m, bad[i]);
        if (r != CUDA_ERROR_INVALID_PTX)
            fail_msg("PTX %zu (%s) gave %d, expected INVALID_PTX", i, bad[i], (int)r);
    }
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuModuleLoadData(&m, elf));
    static const unsigned char fatbin[] = {0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0};
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuModuleLoadData(&m, fatbin));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&m, NULL));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(NULL, ptx));
}

/* cuMemGetAddressRange answers for device memory, interior addresses
 * included (what the recorder asks about an address it did not see
 * allocated); pinned host and freed memory are NOT_FOUND (strict:
 * unverified on a GPU for pinned memory). */
static void the_address_range_of_device_memory_is_its_allocation(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(1000), base = 0;
    size_t size = 0;
    CU_OK(cuMemGetAddressRange_v2(&base, &size, d + 517));
    assert_true(base == d);
    assert_int_equal(size, 1000);
    CU_OK(cuMemGetAddressRange_v2(NULL, &size, d));
    CU_OK(cuMemGetAddressRange_v2(&base, NULL, d + 999));
    CU_IS(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange_v2(&base, &size, d + 1000));
    void *h = drv_pinned(64);
    CU_IS(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange_v2(&base, &size, drv_dp(h)));
    CUdeviceptr g;
    CU_OK(cuMemAlloc_v2(&g, 64));
    CU_OK(cuMemFree_v2(g));
    CU_IS(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange_v2(&base, &size, g));
}

/* ---- the digest ------------------------------------------------------------ */

struct dg { unsigned long long v[2], ops; };

static struct dg digest(void)
{
    struct dg d;
    CU_OK(cuCtxSynchronize());
    cpucuda_digest(d.v, &d.ops);
    return d;
}

static bool same(struct dg a, struct dg b)
{
    return a.v[0] == b.v[0] && a.v[1] == b.v[1] && a.ops == b.ops;
}

/* A small program: x and y set by kernels, a memset of z, a copy y -> z,
 * the bytes of z read back. `variant` changes one thing. */
enum variant { V_BASE, V_DROP, V_DUP, V_SWAP, V_PARAM, V_GRID, V_VALUE };
static CUdeviceptr x_, y_, z_;

/* The same buffers every time: a kernel's parameters (pointers included)
 * are part of what the digest hashes. */
static struct dg program(enum variant v)
{
    CUdeviceptr x = x_, y = y_, z = z_;
    CU_OK(cuMemsetD32_v2(x, 0, 16));
    CU_OK(cuMemsetD32_v2(y, 0, 16));
    CU_OK(cuMemsetD32_v2(z, 0, 16));
    CU_OK(cuCtxSynchronize());
    cpucuda_digest_reset();
    int host[16];
    CU_OK(drv_launch_set(NULL, x, v == V_PARAM ? 6 : 5));
    CU_OK(drv_launch_add(NULL, y, 3, v == V_GRID ? 33 : 16));
    if (v == V_SWAP) { /* the copy before the memset: z ends with other bytes */
        CU_OK(cuMemcpyDtoD_v2(z, y, 64));
        CU_OK(cuMemsetD32_v2(z, 9, 8));
    } else {
        CU_OK(cuMemsetD32_v2(z, v == V_VALUE ? 8 : 9, 8));
        if (v != V_DROP)
            CU_OK(cuMemcpyDtoD_v2(z, y, 32));
        if (v == V_DUP)
            CU_OK(cuMemcpyDtoD_v2(z, y, 32));
    }
    CU_OK(cuMemcpyDtoH_v2(host, z, 64));
    return digest();
}

/* The digest changes when an op is dropped or duplicated, when ops are
 * reordered so that the bytes a copy moves change, and when an op runs with
 * other contents (a parameter byte, the grid, a memset's value): the cases
 * a replay that loses, repeats, misorders or alters work would show. */
static void the_digest_sees_a_dropped_duplicated_reordered_or_changed_op(void **state)
{
    (void)state;
    drv_init();
    x_ = drv_dalloc(64), y_ = drv_dalloc(64), z_ = drv_dalloc(64);
    struct dg base = program(V_BASE), again = program(V_BASE);
    assert_true(same(base, again)); /* the same work, the same digest */
    assert_int_equal(base.ops, 5); /* two kernels, a memset, two copies */
    static const char *const names[] = {"", "dropped", "duplicated", "reordered", "parameter",
                                        "grid", "memset value"};
    for (int v = V_DROP; v <= V_VALUE; v++) {
        struct dg d = program((enum variant)v);
        if (same(base, d))
            fail_msg("the digest did not change with an op %s", names[v]);
    }
}

/* The same work as the nodes of a captured graph gives the eager run's
 * digest (the shim runs a sequence as a graph), and so does independent
 * work on two streams issued in the other order. */
static void the_digest_is_the_same_for_the_same_work_as_graph_nodes_or_on_other_streams(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr x = drv_dalloc(64), y = drv_dalloc(64);
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING), t = drv_stream(CU_STREAM_NON_BLOCKING);
    int host[24];
    cpucuda_digest_reset();
    CU_OK(drv_launch_add(s, x, 4, 16));
    CU_OK(cuMemsetD32Async(y, 2, 16, s));
    CU_OK(cuMemcpyDtoDAsync_v2(y, x, 32, s));
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemcpyDtoH_v2(host, y, 64));
    struct dg eager = digest();

    /* Captured, then launched once. */
    CU_OK(cuMemsetD32_v2(x, 0, 16));
    CU_OK(cuCtxSynchronize());
    CUgraph g;
    CUgraphExec e;
    CU_OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_OK(drv_launch_add(s, x, 4, 16));
    CU_OK(cuMemsetD32Async(y, 2, 16, s));
    CU_OK(cuMemcpyDtoDAsync_v2(y, x, 32, s));
    CU_OK(cuStreamEndCapture(s, &g));
    drv_track_graph(g);
    CU_OK(cuGraphInstantiateWithFlags(&e, g, 0));
    drv_track_exec(e);
    cpucuda_digest_reset();
    CU_OK(cuGraphLaunch(e, s));
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemcpyDtoH_v2(host, y, 64));
    assert_true(same(eager, digest()));

    /* Two independent lanes, issued in either order. */
    struct dg lanes[2];
    for (int order = 0; order < 2; order++) {
        CU_OK(cuMemsetD32_v2(x, 0, 16));
        CU_OK(cuMemsetD32_v2(y, 0, 16));
        CU_OK(cuCtxSynchronize());
        cpucuda_digest_reset();
        if (order) {
            CU_OK(drv_launch_add(t, y, 2, 16));
            CU_OK(drv_launch_add(s, x, 1, 16));
        } else {
            CU_OK(drv_launch_add(s, x, 1, 16));
            CU_OK(drv_launch_add(t, y, 2, 16));
        }
        CU_OK(cuMemcpyDtoHAsync_v2(host, x, 64, s));
        CU_OK(cuStreamSynchronize(s));
        CU_OK(cuMemcpyDtoHAsync_v2(host + 8, y, 32, t));
        lanes[order] = digest();
    }
    assert_true(same(lanes[0], lanes[1]));
}

/* What it cannot see: two kernels swapped on a stream when neither changes
 * data a later copy moves (a replay's empty kernels change none), and an op
 * sent to another address of the same size (addresses differ between runs,
 * so they are not hashed). This test states the limit: if it fails, the
 * documentation (README.md, "The digest") must change with it. */
static void the_digest_does_not_see_a_swap_that_changes_no_data(void **state)
{
    (void)state;
    drv_init();
    CUmodule m;
    CU_OK(cuModuleLoadData(&m, ptx));
    CUfunction a, b;
    CU_OK(cuModuleGetFunction(&a, m, "k_struct"));
    CU_OK(cuModuleGetFunction(&b, m, "k_none"));
    unsigned char buf[48] = {0};
    size_t sz = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     CU_LAUNCH_PARAM_END};
    struct dg d[2];
    for (int order = 0; order < 2; order++) {
        cpucuda_digest_reset();
        if (order) {
            CU_OK(cuLaunchKernel(b, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
            CU_OK(cuLaunchKernel(a, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
        } else {
            CU_OK(cuLaunchKernel(a, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
            CU_OK(cuLaunchKernel(b, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        }
        d[order] = digest();
    }
    assert_true(same(d[0], d[1]));
    CUdeviceptr x = drv_dalloc(64), y = drv_dalloc(64);
    cpucuda_digest_reset();
    CU_OK(cuMemsetD32_v2(x, 1, 16));
    struct dg one = digest();
    cpucuda_digest_reset();
    CU_OK(cuMemsetD32_v2(y, 1, 16));
    assert_true(same(one, digest()));
    CU_OK(cuModuleUnload(m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_ptx_module_has_its_entries_with_ptxs_parameter_layout),
        DRV_TEST(a_ptx_kernel_runs_as_an_empty_kernel_checked_like_any),
        DRV_TEST(a_ptx_library_gives_kernels_with_the_same_layouts),
        DRV_TEST(malformed_ptx_is_invalid_ptx_and_a_binary_image_not_supported),
        DRV_TEST(the_address_range_of_device_memory_is_its_allocation),
        DRV_TEST(the_digest_sees_a_dropped_duplicated_reordered_or_changed_op),
        DRV_TEST(the_digest_is_the_same_for_the_same_work_as_graph_nodes_or_on_other_streams),
        DRV_TEST(the_digest_does_not_see_a_swap_that_changes_no_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
