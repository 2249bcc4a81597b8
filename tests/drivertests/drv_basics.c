/* drv_basics.c - the CPU driver's initialisation, device, contexts, memory,
 * pointer attributes, modules, libraries and kernel launches (argument
 * passing, launch-configuration checks, blocks and shared memory). The first
 * test runs before anything calls cuInit, so keep it first. */
#include "drvtest.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Before cuInit every call that needs the driver state fails with
 * NOT_INITIALIZED; only version and error-name queries work. If the CPU
 * driver were lenient, a program that forgets cuInit would pass here and fail
 * on a GPU. */
static void every_call_before_cuInit_fails_with_not_initialized(void **state)
{
    (void)state;
    int n = -1;
    CUdevice d;
    CUcontext c = (CUcontext)0x1234;
    CUdeviceptr p = 0;
    CUstream s;
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGet(&d, 0));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuCtxGetCurrent(&c));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuMemAlloc(&p, 64));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuStreamCreate(&s, 0));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuDevicePrimaryCtxRetain(&c, 0));
    CU_IS(CUDA_ERROR_NOT_INITIALIZED, cuCtxSynchronize());
}

/* cuDriverGetVersion answers before cuInit (the CUDA runtime calls it
 * first) and claims at least 13.0, or the 13000 lookups cuGetProcAddress
 * serves would be "newer than the driver". */
static void cuDriverGetVersion_works_before_cuInit_and_claims_13_0(void **state)
{
    (void)state;
    int v = 0;
    CU_OK(cuDriverGetVersion(&v));
    assert_true(v >= 13000);
}

/* There is exactly one device by default, ordinal 0; ordinal 1 is
 * INVALID_DEVICE. A driver with more (or fewer) devices would let
 * multi-device code paths be tested that no single-GPU run can reproduce;
 * a second device is asked for explicitly (CPUCUDA_DEVICES=2,
 * drv_devices.c). */
static void there_is_exactly_one_device(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    int n = 0;
    CUdevice d = -1;
    CU_OK(cuDeviceGetCount(&n));
    assert_int_equal(n, 1);
    CU_OK(cuDeviceGet(&d, 0));
    assert_int_equal(d, 0);
    CU_IS(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, 1));
}

/* Retaining the primary context twice gives the same context, and making it
 * current makes cuCtxGetCurrent return it. Otherwise code mixing runtime-style
 * primary contexts would see two different contexts. */
static void the_primary_context_is_the_same_on_every_retain(void **state)
{
    (void)state;
    drv_init();
    CUcontext a = NULL, b = NULL, cur = NULL;
    CU_OK(cuDevicePrimaryCtxRetain(&a, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&b, 0));
    assert_non_null(a);
    assert_ptr_equal(a, b);
    CU_OK(cuCtxSetCurrent(a));
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, a);
    CU_OK(cuDevicePrimaryCtxRelease(0));
    CU_OK(cuDevicePrimaryCtxRelease(0));
}

/* cuCtxCreate pushes the new context on the thread's stack; pop returns it
 * and restores the previous one; push makes a context current again. A wrong
 * stack would run work in the wrong context after a library pops its own. */
static void created_contexts_are_pushed_and_popped_on_a_per_thread_stack(void **state)
{
    (void)state;
    drv_init();
    CUcontext c = NULL, cur = NULL, popped = NULL;
    CU_OK(cuCtxCreate(&c, NULL, 0, drv_dev));
    assert_non_null(c);
    assert_ptr_not_equal(c, drv_ctx);
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, c);
    CU_OK(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, drv_ctx);
    CU_OK(cuCtxPushCurrent(c));
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, c);
    CU_OK(cuCtxPopCurrent(&popped));
    assert_ptr_equal(popped, c);
    CU_OK(cuCtxDestroy(c));
    CU_OK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, drv_ctx);
}

struct no_ctx_result {
    CUresult get, alloc, stream, pop;
    CUcontext cur;
};

static void *no_ctx_thread(void *arg)
{
    struct no_ctx_result *r = arg;
    CUdeviceptr p = 0;
    CUstream s = NULL;
    CUcontext c = (CUcontext)0x1;
    r->cur = (CUcontext)0x1;
    r->get = cuCtxGetCurrent(&r->cur);
    r->alloc = cuMemAlloc(&p, 64);
    r->stream = cuStreamCreate(&s, 0);
    r->pop = cuCtxPopCurrent(&c);
    return NULL;
}

/* A new thread has no current context: cuCtxGetCurrent gives NULL, and calls
 * that need one fail with INVALID_CONTEXT (popping an empty stack too). A
 * driver with a process-wide current context would hide the classic bug of
 * forgetting cuCtxSetCurrent in a worker thread. */
static void a_thread_without_a_current_context_gets_invalid_context(void **state)
{
    (void)state;
    drv_init();
    struct no_ctx_result r;
    drv_in_thread(no_ctx_thread, &r);
    CU_IS(CUDA_SUCCESS, r.get);
    assert_null(r.cur);
    CU_IS(CUDA_ERROR_INVALID_CONTEXT, r.alloc);
    CU_IS(CUDA_ERROR_INVALID_CONTEXT, r.stream);
    CU_IS(CUDA_ERROR_INVALID_CONTEXT, r.pop);
}

/* Bytes copied to the device and back are the same bytes. */
static void a_copy_to_the_device_and_back_preserves_the_bytes(void **state)
{
    (void)state;
    drv_init();
    unsigned char in[1000], out[1000];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    memset(out, 0, sizeof out);
    CUdeviceptr d = drv_dalloc(sizeof in);
    CU_OK(cuMemcpyHtoD(d, in, sizeof in));
    CU_OK(cuMemcpyDtoH(out, d, sizeof out));
    assert_memory_equal(in, out, sizeof in);
}

/* cuMemAlloc memory is DEVICE memory, also at an interior address. The shim
 * decides how to stage copies by this attribute; a wrong answer would send
 * device pointers down the host path. */
static void device_memory_has_memory_type_device_including_interior_pointers(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(256);
    CUmemorytype t = 0;
    CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
    assert_int_equal(t, CU_MEMORYTYPE_DEVICE);
    t = 0;
    CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 100));
    assert_int_equal(t, CU_MEMORYTYPE_DEVICE);
}

/* Pinned host memory (cuMemAllocHost, cuMemHostAlloc) is HOST memory, also at
 * an interior address. Otherwise pinned buffers would be treated as pageable
 * (or as device memory) by code that asks. */
static void pinned_host_memory_has_memory_type_host_including_interior_pointers(void **state)
{
    (void)state;
    drv_init();
    char *a = drv_pinned(256);
    CUmemorytype t = 0;
    CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(a)));
    assert_int_equal(t, CU_MEMORYTYPE_HOST);
    t = 0;
    CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(a + 200)));
    assert_int_equal(t, CU_MEMORYTYPE_HOST);

    void *b = NULL;
    CU_OK(cuMemHostAlloc(&b, 128, 0));
    t = 0;
    CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp((char *)b + 64));
    CU_OK(cuMemFreeHost(b));
    CU_IS(CUDA_SUCCESS, r);
    assert_int_equal(t, CU_MEMORYTYPE_HOST);
}

/* Plain malloc memory is unknown to the driver: INVALID_VALUE, as on a GPU.
 * A driver that called it HOST would make pageable copies look pinned. */
static void malloc_memory_has_no_memory_type(void **state)
{
    (void)state;
    drv_init();
    char *m = malloc(256);
    assert_non_null(m);
    CUmemorytype t = 0;
    CUresult r = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(m + 8));
    free(m);
    CU_IS(CUDA_ERROR_INVALID_VALUE, r);
}

/* A copy that runs past the end of an allocation, or touches a freed one,
 * fails with INVALID_VALUE and copies nothing. Without this an out-of-bounds
 * bug in the shim's staging would silently corrupt memory instead of failing. */
static void a_copy_outside_a_live_allocation_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    int host[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CUdeviceptr d = drv_dalloc(4 * sizeof(int));
    CUdeviceptr d2 = drv_dalloc(4 * sizeof(int));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d, host, 8 * sizeof(int)));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host, d + 12, 8));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoD(d2, d + 8, 4 * sizeof(int)));
    assert_int_equal(host[0], 1);
    assert_int_equal(drv_read_int(d), 0);

    CUdeviceptr f = 0;
    CU_OK(cuMemAlloc(&f, 64));
    CU_OK(cuMemFree(f));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host, f, 16));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(f, host, 16));
}

/* cuModuleLoad of a C kernel module gives its kernels by name. */
static void a_loaded_module_gives_its_kernels_by_name(void **state)
{
    (void)state;
    drv_init();
    CUmodule m = NULL;
    CUfunction f = NULL;
    CU_OK(cuModuleLoad(&m, DRV_KERNELS_PATH));
    assert_non_null(m);
    CU_OK(cuModuleGetFunction(&f, m, "drv_set"));
    assert_non_null(f);
    CU_OK(cuModuleUnload(m));
}

/* An unknown kernel name is NOT_FOUND (500), as on a GPU; a driver that
 * returned something else would break code that probes for optional kernels. */
static void an_unknown_kernel_name_is_not_found(void **state)
{
    (void)state;
    CUfunction f = NULL;
    CU_IS(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, drv_module(), "drv_no_such_kernel"));
}

/* Loading a module file that does not exist fails with FILE_NOT_FOUND. */
static void loading_a_missing_module_file_fails_with_file_not_found(void **state)
{
    (void)state;
    drv_init();
    CUmodule m = NULL;
    CU_IS(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, "/nonexistent/drv_no_module.so"));
}

/* cuFuncGetParamInfo gives each parameter's offset and size in order and
 * ends with INVALID_VALUE one past the last: the shim walks it to copy
 * arguments, so a wrong layout or a missing end would corrupt recordings. */
static void param_info_walks_every_parameter_and_ends_with_invalid_value(void **state)
{
    (void)state;
    CUfunction f = drv_fn("drv_mixed");
    const size_t want[4][2] = {{0, 1}, {8, 8}, {16, 2}, {24, 8}};
    for (size_t i = 0; i < 4; i++) {
        size_t off = 99, size = 99;
        CU_OK(cuFuncGetParamInfo(f, i, &off, &size));
        assert_int_equal(off, want[i][0]);
        assert_int_equal(size, want[i][1]);
    }
    size_t off = 0, size = 0;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 4, &off, &size));
}

/* cuFuncGetName returns the kernel's name (the shim's logs and keys use it). */
static void cuFuncGetName_returns_the_kernel_name(void **state)
{
    (void)state;
    const char *name = NULL;
    CU_OK(cuFuncGetName(&name, drv_fn("drv_record")));
    assert_non_null(name);
    assert_string_equal(name, "drv_record");
}

/* A kernel from cuLibraryLoadFromFile has the same parameter layout, converts
 * to a function, and launches when the CUkernel itself is cast to CUfunction
 * (12.0+). A driver that accepted only CUfunction handles would break
 * programs using the library API. */
static void a_library_kernel_launches_when_cast_to_a_function(void **state)
{
    (void)state;
    drv_init();
    CUlibrary lib = NULL;
    CUkernel k = NULL;
    CUfunction f = NULL;
    CU_OK(cuLibraryLoadFromFile(&lib, DRV_KERNELS_PATH, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetKernel(&k, lib, "drv_set"));
    assert_non_null(k);
    size_t off = 9, size = 9;
    CU_OK(cuKernelGetParamInfo(k, 0, &off, &size));
    assert_int_equal(off, 0);
    assert_int_equal(size, 8);
    CU_OK(cuKernelGetParamInfo(k, 1, &off, &size));
    assert_int_equal(off, 8);
    assert_int_equal(size, 4);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuKernelGetParamInfo(k, 2, &off, &size));
    CU_OK(cuKernelGetFunction(&f, k));
    assert_non_null(f);
    const char *name = NULL;
    CU_OK(cuFuncGetName(&name, f));
    assert_string_equal(name, "drv_set");

    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 17;
    void *args[] = {&p, &val};
    CU_OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 17);
    val = 18;
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 18);
    CU_OK(cuLibraryUnload(lib));
}

/* Checks a launch is refused with INVALID_VALUE and runs nothing. */
static void expect_refused_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shmem)
{
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 5;
    void *args[] = {&p, &val};
    unsigned long long before = drv_counter("launch.eager");
    CUresult r = cuLaunchKernel(drv_fn("drv_set"), gx, gy, gz, bx, by, bz, shmem, NULL, args, NULL);
    if (r != CUDA_ERROR_INVALID_VALUE)
        fail_msg("launch grid (%u,%u,%u) block (%u,%u,%u) shared %u returned %d %s, expected "
                 "CUDA_ERROR_INVALID_VALUE",
                 gx, gy, gz, bx, by, bz, shmem, (int)r, drv_err(r));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 0);
    assert_int_equal(drv_counter("launch.eager"), before);
}

/* A grid or block dimension of 0 is INVALID_VALUE and nothing runs. A lenient
 * driver would run zero blocks and report success where a GPU fails. */
static void a_launch_with_a_zero_dimension_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    expect_refused_launch(0, 1, 1, 1, 1, 1, 0);
    expect_refused_launch(1, 0, 1, 1, 1, 1, 0);
    expect_refused_launch(1, 1, 0, 1, 1, 1, 0);
    expect_refused_launch(1, 1, 1, 0, 1, 1, 0);
    expect_refused_launch(1, 1, 1, 1, 0, 1, 0);
    expect_refused_launch(1, 1, 1, 1, 1, 0, 0);
}

/* More than 1024 threads per block, or a block dimension over its limit
 * (x, y 1024; z 64), is INVALID_VALUE: the GPU's limits. */
static void a_launch_with_too_many_threads_per_block_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    expect_refused_launch(1, 1, 1, 1025, 1, 1, 0);
    expect_refused_launch(1, 1, 1, 32, 32, 2, 0);
    expect_refused_launch(1, 1, 1, 1, 1, 65, 0);
}

/* Dynamic shared memory over 48 KiB (without the opt-in attribute) is
 * INVALID_VALUE; exactly 48 KiB launches. A driver with no limit would let a
 * program pass here that fails to launch on an H200. */
static void a_launch_with_too_much_shared_memory_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    expect_refused_launch(1, 1, 1, 1, 1, 1, 48 * 1024 + 1);
    expect_refused_launch(1, 1, 1, 1, 1, 1, 1u << 20);
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 6;
    void *args[] = {&p, &val};
    CU_OK(cuLaunchKernel(drv_fn("drv_set"), 1, 1, 1, 1, 1, 1, 48 * 1024, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 6);
}

/* kernelParams with an `extra` that carries a buffer are INVALID_VALUE and
 * nothing runs (observed on an H200, driver 580.159.04). A driver that ran
 * one of the two would let a program that fails on a GPU pass here. */
static void a_launch_with_params_and_an_extra_buffer_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 5;
    void *args[] = {&p, &val};
    unsigned char buf[16];
    memcpy(buf, &p, 8);
    memcpy(buf + 8, &val, 4);
    size_t size = 12;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CU_IS(CUDA_ERROR_INVALID_VALUE,
          cuLaunchKernel(drv_fn("drv_set"), 1, 1, 1, 1, 1, 1, 0, NULL, args, extra));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 0);
}

/* kernelParams with an empty `extra` ({CU_LAUNCH_PARAM_END}) launch, with
 * the kernelParams (observed on an H200, driver 580.159.04: CUDA_SUCCESS). A
 * driver that refused it would fail programs (and badinput) that pass on a
 * GPU. */
static void a_launch_with_params_and_an_empty_extra_runs_with_the_params(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 5;
    void *args[] = {&p, &val};
    void *extra[] = {CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(drv_fn("drv_set"), 1, 1, 1, 1, 1, 1, 0, NULL, args, extra));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 5);
}

/* The extra form (one packed buffer at the kernel's offsets) passes the same
 * arguments as kernelParams; a driver that ignored it would break programs
 * built for the extra path. */
static void the_extra_buffer_form_passes_the_packed_arguments(void **state)
{
    (void)state;
    drv_init();
    double *out = drv_pinned(3 * sizeof(double));
    unsigned char buf[32];
    memset(buf, 0, sizeof buf);
    char c = 'q';
    double d = 2.5;
    short s = -7;
    CUdeviceptr o = drv_dp(out);
    memcpy(buf + 0, &c, 1);
    memcpy(buf + 8, &d, 8);
    memcpy(buf + 16, &s, 2);
    memcpy(buf + 24, &o, 8);
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(drv_fn("drv_mixed"), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuCtxSynchronize());
    assert_true(out[0] == 'q');
    assert_true(out[1] == 2.5);
    assert_true(out[2] == -7);

    /* kernelParams form of the same call, for comparison. */
    memset(out, 0, 3 * sizeof(double));
    void *args[] = {&c, &d, &s, &o};
    CU_OK(cuLaunchKernel(drv_fn("drv_mixed"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_true(out[0] == 'q' && out[1] == 2.5 && out[2] == -7);
}

/* Argument bytes are copied at the launch call: changing the host variable
 * right after the launch (the kernel held back by a gate) does not change what
 * the kernel sees. A driver that read them at run time would make every
 * "reuse the argument struct" program nondeterministic. */
static void kernel_arguments_are_copied_at_the_launch_call(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    int *v = drv_pinned(sizeof(int));
    CU_OK(drv_launch_gate(s, gate, log, 1));
    CUdeviceptr p = drv_dp(v);
    int val = 41;
    void *args[] = {&p, &val};
    CU_OK(cuLaunchKernel(drv_fn("drv_set"), 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    val = 99;
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*v, 41);
    drv_assert_log(log, 1, 1u);
}

/* Each block gets its own dynamic shared memory of the requested size. A
 * driver that shared one buffer among concurrently run blocks, or gave the
 * wrong size, would break every reduction kernel. */
static void each_block_gets_its_own_dynamic_shared_memory(void **state)
{
    (void)state;
    drv_init();
    const unsigned grid = 4, block = 64;
    int *out = drv_pinned(2 * grid * sizeof(int));
    CUdeviceptr o = drv_dp(out);
    void *args[] = {&o};
    CU_OK(cuLaunchKernel(drv_fn("drv_shared"), grid, 1, 1, block, 1, 1, block * 4, NULL, args,
                         NULL));
    CU_OK(cuCtxSynchronize());
    for (unsigned b = 0; b < grid; b++) {
        assert_int_equal(out[b], (int)(block * (block - 1) / 2 + block * b));
        assert_int_equal(out[grid + b], (int)(block * 4));
    }
}

/* The kernel is called once per block of a 3-D grid with its block index, the
 * grid and block shape, and loops over every thread of its block. */
static void a_kernel_runs_once_per_block_of_the_grid(void **state)
{
    (void)state;
    drv_init();
    unsigned *out = drv_pinned(64 * sizeof(unsigned));
    CUdeviceptr o = drv_dp(out);
    void *args[] = {&o};
    CU_OK(cuLaunchKernel(drv_fn("drv_dims"), 2, 3, 2, 4, 2, 3, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    const unsigned want[6] = {2, 3, 2, 4, 2, 3};
    for (int i = 0; i < 6; i++)
        assert_int_equal(out[i], want[i]);
    assert_int_equal(out[6], 12);
    assert_int_equal(out[7], 12 * 24);
    for (int i = 0; i < 12; i++)
        assert_int_equal(out[8 + i], 1);
}

/* Child of the primary-reset test: 300 rounds of creating streams that are
 * never destroyed, resetting the primary context (which retires them), and
 * creating and using new objects. The retired streams' memory is reused for
 * the new objects; every call must succeed. Exit 0, or the round and call. */
static int child_reset(void)
{
    CUcontext c;
    if (cuInit(0) != CUDA_SUCCESS)
        return 2;
    for (int round = 0; round < 300; round++) {
        if (cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS || cuCtxSetCurrent(c) != CUDA_SUCCESS)
            return 3;
        CUstream s[4];
        CUevent e[4];
        for (int i = 0; i < 4; i++) {
            CUresult r = cuStreamCreate(&s[i], i % 2 ? CU_STREAM_NON_BLOCKING : 0);
            if (r == CUDA_SUCCESS)
                r = cuEventCreate(&e[i], 0);
            if (r == CUDA_SUCCESS)
                r = cuEventRecord(e[i], s[i]);
            if (r == CUDA_SUCCESS)
                r = cuStreamWaitEvent(s[i], e[i], 0);
            if (r == CUDA_SUCCESS)
                r = cuStreamSynchronize(s[i]);
            if (r == CUDA_SUCCESS)
                r = cuEventSynchronize(e[i]);
            if (r != CUDA_SUCCESS) {
                fprintf(stderr, "child: round %d object %d: %d\n", round, i, (int)r);
                return 4;
            }
        }
        for (int i = 0; i < 4; i++)
            cuEventDestroy(e[i]);
        if (cuDevicePrimaryCtxReset(0) != CUDA_SUCCESS)
            return 5;
    }
    return 0;
}

/* After cuDevicePrimaryCtxReset retired a context's streams, new objects
 * (allocated where the old streams lived) are valid handles. A registry that
 * kept the retired streams' entries answered INVALID_HANDLE for them now and
 * then, depending on where malloc put the new object. Run in a child: the
 * reset frees what other tests hold. */
static void objects_created_after_a_primary_reset_are_never_mistaken_for_retired_streams(void **state)
{
    (void)state;
    assert_int_equal(drv_run_self("child-reset", NULL), 0);
}

static void spin_host_fn(void *arg)
{
    (void)arg;
}

static volatile int fork_stop;

static void *keep_workers_busy(void *arg)
{
    CUstream s = arg;
    while (!fork_stop) {
        for (int i = 0; i < 64; i++)
            cuLaunchHostFunc(s, spin_host_fn, NULL);
        cuStreamSynchronize(s);
    }
    return NULL;
}

/* Child of the fork test: a thread keeps two stream workers taking and
 * releasing the driver's lock while the main thread forks 200 times; each
 * child calls the driver (which must refuse: a child forked after cuInit
 * cannot use it, NOT_INITIALIZED as on a GPU) and exit(), which runs the
 * driver's destructor. A child still alive after 5 s is a deadlock. */
static int child_fork(void)
{
    CUcontext c;
    CUstream s1, s2;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(c) != CUDA_SUCCESS || cuStreamCreate(&s1, 0) != CUDA_SUCCESS ||
        cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return 2;
    pthread_t t1, t2;
    if (pthread_create(&t1, NULL, keep_workers_busy, s1) || pthread_create(&t2, NULL, keep_workers_busy, s2))
        return 3;
    int rc = 0;
    for (int i = 0; i < 200 && !rc; i++) {
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
            rc = 4;
            break;
        }
        if (pid == 0) {
            CUresult r1 = cuCtxSynchronize(), r2 = cuInit(0);
            exit(r1 == CUDA_ERROR_NOT_INITIALIZED && r2 == CUDA_ERROR_NOT_INITIALIZED ? 0 : 7);
        }
        int st = 0;
        pid_t got = 0;
        for (int ms = 0; ms < 5000 && (got = waitpid(pid, &st, WNOHANG)) == 0; ms++)
            drv_sleep_ms(1);
        if (got == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fprintf(stderr, "child: forked child %d still running after 5 s (deadlocked in the driver)\n", i);
            rc = 5;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child: forked child %d ended with status %#x\n", i, st);
            rc = 6;
        }
    }
    fork_stop = 1;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    return rc;
}

/* A child forked while the driver's workers run can exit(): the driver's
 * exit path must not wait on a lock a parent's worker held at the fork. */
static void a_forked_child_exits_without_deadlocking_in_the_driver(void **state)
{
    (void)state;
#ifdef DRV_SANITIZED
    /* Under AddressSanitizer the child hangs in LeakSanitizer's own
     * exit-time leak check, not in the driver: the sanitizer's allocator
     * lock is held by another of the parent's threads at the fork (seen
     * with gdb, 2026-11-30). The plain build runs this test. */
    skip();
#endif
    assert_int_equal(drv_run_self("child-fork", NULL), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "child-reset") == 0)
            return child_reset();
        if (strcmp(argv[1], "child-fork") == 0)
            return child_fork();
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_call_before_cuInit_fails_with_not_initialized),
        cmocka_unit_test(cuDriverGetVersion_works_before_cuInit_and_claims_13_0),
        DRV_TEST(there_is_exactly_one_device),
        DRV_TEST(the_primary_context_is_the_same_on_every_retain),
        DRV_TEST(created_contexts_are_pushed_and_popped_on_a_per_thread_stack),
        DRV_TEST(a_thread_without_a_current_context_gets_invalid_context),
        DRV_TEST(a_copy_to_the_device_and_back_preserves_the_bytes),
        DRV_TEST(device_memory_has_memory_type_device_including_interior_pointers),
        DRV_TEST(pinned_host_memory_has_memory_type_host_including_interior_pointers),
        DRV_TEST(malloc_memory_has_no_memory_type),
        DRV_TEST(a_copy_outside_a_live_allocation_fails_with_invalid_value),
        DRV_TEST(a_loaded_module_gives_its_kernels_by_name),
        DRV_TEST(an_unknown_kernel_name_is_not_found),
        DRV_TEST(loading_a_missing_module_file_fails_with_file_not_found),
        DRV_TEST(param_info_walks_every_parameter_and_ends_with_invalid_value),
        DRV_TEST(cuFuncGetName_returns_the_kernel_name),
        DRV_TEST(a_library_kernel_launches_when_cast_to_a_function),
        DRV_TEST(a_launch_with_a_zero_dimension_fails_with_invalid_value),
        DRV_TEST(a_launch_with_too_many_threads_per_block_fails_with_invalid_value),
        DRV_TEST(a_launch_with_too_much_shared_memory_fails_with_invalid_value),
        DRV_TEST(a_launch_with_params_and_an_extra_buffer_fails_with_invalid_value),
        DRV_TEST(a_launch_with_params_and_an_empty_extra_runs_with_the_params),
        DRV_TEST(the_extra_buffer_form_passes_the_packed_arguments),
        DRV_TEST(kernel_arguments_are_copied_at_the_launch_call),
        DRV_TEST(each_block_gets_its_own_dynamic_shared_memory),
        DRV_TEST(a_kernel_runs_once_per_block_of_the_grid),
        DRV_TEST(objects_created_after_a_primary_reset_are_never_mistaken_for_retired_streams),
        DRV_TEST(a_forked_child_exits_without_deadlocking_in_the_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
