/* drv_procaddr.c - how the CPU driver is found and named: cuGetProcAddress
 * (v1 and _v2) resolving base names to the ABI variant for a CUDA version and
 * to the per-thread variants (the exact lookups the CUDA runtime makes, which
 * the shim intercepts), its "not found" and "version not sufficient" answers,
 * cuGetExportTable, and the error names and strings. Nothing here calls
 * cuInit: the runtime resolves entry points before it. */
#include "drvtest.h"

#include <dlfcn.h>
#include <string.h>

typedef CUresult (*proc_v1_fn)(const char *, void **, int, cuuint64_t);

static void *driver_handle(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    return h;
}

/* The exported symbol `name`, as dlsym on the driver gives it. */
static void *exported(const char *name)
{
    void *h = driver_handle();
    void *p = dlsym(h, name);
    dlclose(h);
    if (!p)
        fail_msg("the driver does not export %s", name);
    return p;
}

struct lookup {
    const char *symbol;
    int version;
    cuuint64_t flags;
    const char *want;
};

/* Each lookup the CUDA runtime makes resolves to the exported variant of
 * that ABI version and stream flavour, before cuInit. A wrong variant means a
 * call through the wrong signature (the cuCtxCreate_v3 trap of interposers),
 * or per-thread programs silently using the legacy stream. */
static void cuGetProcAddress_resolves_each_lookup_to_its_abi_variant_before_cuInit(void **state)
{
    (void)state;
    static const struct lookup table[] = {
        {"cuInit", 2000, 0, "cuInit"},
        {"cuMemcpyHtoD", 3020, 0, "cuMemcpyHtoD_v2"},
        {"cuMemcpyHtoD", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemcpyHtoD", 7000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoD_v2"},
        {"cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2"},
        {"cuLaunchKernel", 4000, 0, "cuLaunchKernel"},
        {"cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz"},
        {"cuLaunchKernel", 7000, 0, "cuLaunchKernel"},
        {"cuMemcpyHtoDAsync", 3020, 0, "cuMemcpyHtoDAsync_v2"},
        {"cuMemcpyHtoDAsync", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuMemcpyHtoDAsync_v2_ptsz"},
        {"cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture"},
        {"cuStreamBeginCapture", 10000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuStreamBeginCapture_ptsz"},
        {"cuStreamBeginCapture", 10010, 0, "cuStreamBeginCapture_v2"},
        {"cuStreamBeginCapture", 10010, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuStreamBeginCapture_v2_ptsz"},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
        {"cuCtxSynchronize", 2000, 0, "cuCtxSynchronize"},
        {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2"},
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
        {"cuStreamGetCaptureInfo", 12030, 0, "cuStreamGetCaptureInfo_v3"},
        {"cuGraphExecUpdate", 12000, 0, "cuGraphExecUpdate_v2"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct lookup *l = &table[i];
        void *p = NULL;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
        CUresult r = cuGetProcAddress(l->symbol, &p, l->version, l->flags, &st);
        void *want = exported(l->want);
        if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || p != want)
            fail_msg("cuGetProcAddress(%s, %d, flags %llu) returned %d, status %d, %p; "
                     "expected %s at %p",
                     l->symbol, l->version, (unsigned long long)l->flags, (int)r, (int)st, p,
                     l->want, want);
    }
}

/* cuGetProcAddress v1 (11.3-11.8 signature) gives the same answers, and the
 * symbolStatus pointer of _v2 is optional (the runtime passes NULL). */
static void the_v1_resolver_and_a_null_status_give_the_same_answers(void **state)
{
    (void)state;
    proc_v1_fn v1 = (proc_v1_fn)exported("cuGetProcAddress");
    void *p = NULL;
    CU_OK(v1("cuLaunchKernel", &p, 11030, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    assert_ptr_equal(p, exported("cuLaunchKernel_ptsz"));
    p = NULL;
    CU_OK(cuGetProcAddress("cuMemcpyHtoD", &p, 12000, 0, NULL));
    assert_ptr_equal(p, exported("cuMemcpyHtoD_v2"));
}

/* An unknown symbol gives CUDA_SUCCESS, a NULL pointer and SYMBOL_NOT_FOUND
 * (the documented contract): the runtime probes for optional entry points. */
static void an_unknown_symbol_resolves_to_null_with_symbol_not_found(void **state)
{
    (void)state;
    void *p = (void *)0x1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CU_OK(cuGetProcAddress("cuNoSuchEntryPoint", &p, 12000, 0, &st));
    assert_null(p);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

/* A version older than the one that introduced the symbol gives NULL and
 * VERSION_NOT_SUFFICIENT (not SYMBOL_NOT_FOUND). */
static void a_version_before_the_symbol_existed_gives_version_not_sufficient(void **state)
{
    (void)state;
    void *p = (void *)0x1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CU_OK(cuGetProcAddress("cuMemAllocAsync", &p, 11000, 0, &st));
    assert_null(p);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    p = (void *)0x1;
    CU_OK(cuGetProcAddress("cuGetProcAddress", &p, 11020, 0, &st));
    assert_null(p);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

/* A version newer than the driver's is INVALID_VALUE (documented). */
static void a_version_newer_than_the_driver_is_invalid_value(void **state)
{
    (void)state;
    int drv = 0;
    CU_OK(cuDriverGetVersion(&drv));
    void *p = NULL;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress("cuInit", &p, drv + 1000, 0, NULL));
}

/* cuGetExportTable is NOT_SUPPORTED: the CPU driver has no private tables,
 * and must say so rather than hand out a table the runtime would call into. */
static void cuGetExportTable_is_not_supported(void **state)
{
    (void)state;
    const void *t = NULL;
    CUuuid id;
    memset(&id, 0x42, sizeof id);
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuGetExportTable(&t, &id));
}

/* cuGetErrorName/String name known codes like the real driver, and refuse
 * unknown ones with INVALID_VALUE and a NULL string. The shim's logs print
 * these names. */
static void error_names_and_strings_match_the_real_driver(void **state)
{
    (void)state;
    const char *s = NULL;
    CU_OK(cuGetErrorName(CUDA_SUCCESS, &s));
    assert_string_equal(s, "CUDA_SUCCESS");
    CU_OK(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "CUDA_ERROR_INVALID_VALUE");
    CU_OK(cuGetErrorName(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, &s));
    assert_string_equal(s, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
    CU_OK(cuGetErrorName(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, &s));
    assert_string_equal(s, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE");
    CU_OK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
    assert_string_equal(s, "invalid argument");
    CU_OK(cuGetErrorString(CUDA_ERROR_NOT_READY, &s));
    assert_string_equal(s, "device not ready");
    s = "x";
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)12345, &s));
    assert_null(s);
    s = "x";
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuGetErrorString((CUresult)12345, &s));
    assert_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuGetProcAddress_resolves_each_lookup_to_its_abi_variant_before_cuInit),
        cmocka_unit_test(the_v1_resolver_and_a_null_status_give_the_same_answers),
        cmocka_unit_test(an_unknown_symbol_resolves_to_null_with_symbol_not_found),
        cmocka_unit_test(a_version_before_the_symbol_existed_gives_version_not_sufficient),
        cmocka_unit_test(a_version_newer_than_the_driver_is_invalid_value),
        cmocka_unit_test(cuGetExportTable_is_not_supported),
        cmocka_unit_test(error_names_and_strings_match_the_real_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
