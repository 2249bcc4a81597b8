/* drv_devices.c - the CPU driver's second device (CPUCUDA_DEVICES=2, set
 * by this test's ctest entry): two ordinals, each with its own primary
 * context; what belongs to one device's context is refused in the other's,
 * as a GPU refuses it, so that a shim that mixed up two devices' contexts
 * fails here and not only on a machine with two GPUs. */
#include "drvtest.h"

#include <string.h>

static void two_devices_each_with_its_own_primary_context(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    int n = 0;
    CU_OK(cuDeviceGetCount(&n));
    assert_int_equal(n, 2);
    CUdevice d0 = -1, d1 = -1;
    CU_OK(cuDeviceGet(&d0, 0));
    CU_OK(cuDeviceGet(&d1, 1));
    assert_int_equal(d0, 0);
    assert_int_equal(d1, 1);
    CU_IS(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d1, 2));
    char a[64], b[64];
    CU_OK(cuDeviceGetName(a, sizeof a, 0));
    CU_OK(cuDeviceGetName(b, sizeof b, 1));
    assert_string_not_equal(a, b);
    CUcontext c0, c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    assert_ptr_not_equal(c0, c1);
    CUdevice got = -1;
    CU_OK(cuCtxSetCurrent(c1));
    CU_OK(cuCtxGetDevice(&got));
    assert_int_equal(got, 1);
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 256));
    int ordinal = -1;
    CU_OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    assert_int_equal(ordinal, 1);
    CU_OK(cuCtxSetCurrent(c0));
    CU_OK(cuCtxGetDevice(&got));
    assert_int_equal(got, 0);
    CU_OK(cuMemFree(p));
    CU_OK(cuDevicePrimaryCtxRelease(1));
    CU_OK(cuDevicePrimaryCtxRelease(0));
}

/* A function of a module loaded in device 0's context cannot be launched on
 * a stream of device 1's context. */
static void a_kernel_of_one_device_cannot_run_on_the_other_devices_stream(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    CUcontext c0, c1;
    CU_OK(cuDevicePrimaryCtxRetain(&c0, 0));
    CU_OK(cuDevicePrimaryCtxRetain(&c1, 1));
    CU_OK(cuCtxSetCurrent(c0));
    CUmodule m0;
    CU_OK(cuModuleLoad(&m0, DRV_KERNELS_PATH));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, m0, "drv_set"));
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 64));
    CU_OK(cuCtxSetCurrent(c1));
    CUstream s1;
    CU_OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    int v = 7;
    void *args[] = {&p, &v};
    CU_IS(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s1, args, NULL));
    CU_OK(cuStreamDestroy(s1));
    CU_OK(cuCtxSetCurrent(c0));
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemFree(p));
    CU_OK(cuModuleUnload(m0));
    CU_OK(cuDevicePrimaryCtxRelease(1));
    CU_OK(cuDevicePrimaryCtxRelease(0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_devices_each_with_its_own_primary_context),
        cmocka_unit_test(a_kernel_of_one_device_cannot_run_on_the_other_devices_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
