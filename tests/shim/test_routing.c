/* Unit tests of the shim's routing, against a table of fake driver entry
 * points: which pointer cuGetProcAddress hands out, which names dlsym
 * routes, what the wrappers forward and count, and the report's keys.
 * The fakes are generated from entries.h, so every listed entry is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "init.h"

/* ---- the fake driver ------------------------------------------------------ */

static int last_called = -1;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define X(name, params, args, role)                                             \
    static CUresult CUDAAPI fake_##name params                                  \
    {                                                                           \
        last_called = RP_E_##name;                                              \
        return CUDA_SUCCESS;                                                    \
    }
RP_ENTRIES(X)
#undef X
/* A driver function reprise does not interpose. */
static CUresult CUDAAPI fake_unlisted(int *v)
{
    return CUDA_ERROR_INVALID_VALUE;
}
#pragma GCC diagnostic pop

static struct rp__driver fakes;

/* Which variant the fake driver returns for (name, version, flags), like
 * the real one: the highest ABI version not above the one asked for. */
static const struct {
    const char *name;
    int version;
    bool per_thread;
    enum rp__entry id;
} variants[] = {
    {"cuLaunchKernel", 4000, false, RP_E_cuLaunchKernel},
    {"cuLaunchKernel", 7000, true, RP_E_cuLaunchKernel_ptsz},
    {"cuMemcpyHtoD", 2000, false, RP_E_cuMemcpyHtoD},
    {"cuMemcpyHtoD", 3020, false, RP_E_cuMemcpyHtoD_v2},
    {"cuMemcpyHtoD", 7000, true, RP_E_cuMemcpyHtoD_v2_ptds},
    {"cuStreamBeginCapture", 10000, false, RP_E_cuStreamBeginCapture},
    {"cuStreamBeginCapture", 10000, true, RP_E_cuStreamBeginCapture_ptsz},
    {"cuStreamBeginCapture", 10010, false, RP_E_cuStreamBeginCapture_v2},
    {"cuStreamBeginCapture", 10010, true, RP_E_cuStreamBeginCapture_v2_ptsz},
    {"cuCtxSynchronize", 2000, false, RP_E_cuCtxSynchronize},
    {"cuCtxSynchronize", 13000, false, RP_E_cuCtxSynchronize_v2},
    {"cuInit", 2000, false, RP_E_cuInit},
};

static int resolver_calls;

static CUresult CUDAAPI fake_resolver_v2(const char *symbol, void **pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
    resolver_calls++;
    bool pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    void *p = NULL;
    bool known = false;
    if (strcmp(symbol, "cuGetProcAddress") == 0) {
        known = true;
        p = version >= 12000 ? rp__driver_get(&fakes, RP_E_cuGetProcAddress_v2)
                             : rp__driver_get(&fakes, RP_E_cuGetProcAddress);
    } else if (strcmp(symbol, "cuDriverGetVersion") == 0) {
        known = true;
        p = (void *)fake_unlisted;
    } else {
        int best = -1;
        for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
            if (strcmp(variants[i].name, symbol) != 0)
                continue;
            known = true;
            if (variants[i].per_thread == pt && variants[i].version <= version &&
                (best < 0 || variants[i].version > variants[best].version))
                best = (int)i;
        }
        if (best >= 0)
            p = rp__driver_get(&fakes, variants[best].id);
    }
    *pfn = p;
    if (st)
        *st = p ? CU_GET_PROC_ADDRESS_SUCCESS
                : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

static CUresult CUDAAPI fake_resolver_v1(const char *symbol, void **pfn, int version,
                                         cuuint64_t flags)
{
    return fake_resolver_v2(symbol, pfn, version, flags, NULL);
}

static int setup_enabled(void **state)
{
    (void)state;
#define X(name, params, args, role) fakes.name = fake_##name;
    RP_ENTRIES(X)
#undef X
    fakes.cuGetProcAddress = fake_resolver_v1;
    fakes.cuGetProcAddress_v2 = fake_resolver_v2;
    rp__install(&fakes, true);
    rp__stats_reset();
    last_called = -1;
    resolver_calls = 0;
    return 0;
}

static int setup_disabled(void **state)
{
    setup_enabled(state);
    rp__install(&fakes, false);
    return 0;
}

/* Query the fake driver through our cuGetProcAddress_v2 wrapper. */
static void *lookup(const char *name, int version, cuuint64_t flags)
{
    void *p = (void *)&p;
    CUdriverProcAddressQueryResult st;
    assert_int_equal(cuGetProcAddress_v2(name, &p, version, flags, &st), CUDA_SUCCESS);
    return p;
}

/* ---- cuGetProcAddress: pointer identity ----------------------------------- */

/* If one real pointer mapped to another entry's wrapper, a call would be
 * forwarded to the wrong driver function, with the wrong signature. */
static void each_real_pointer_maps_to_the_wrapper_of_the_same_entry(void **state)
{
    (void)state;
    for (int id = 0; id < RP_E_COUNT; id++) {
        void *real = rp__driver_get(&fakes, (enum rp__entry)id);
        assert_ptr_equal(rp__procaddr_map(&rp__routes, real), rp__wrappers[id]);
    }
    assert_ptr_equal(rp__wrappers[RP_E_cuLaunchKernel_ptsz], (void *)&cuLaunchKernel_ptsz);
    assert_ptr_equal(rp__wrappers[RP_E_cuMemcpyHtoD], (void *)&cuMemcpyHtoD);
}

/* The runtime resolves everything through the pointer it gets for
 * ("cuGetProcAddress", 11030): a 5-argument wrapper there would read a
 * garbage symbolStatus pointer. */
static void the_self_lookup_below_12000_gets_the_four_argument_wrapper(void **state)
{
    (void)state;
    assert_ptr_equal(lookup("cuGetProcAddress", 11030, 0), (void *)&cuGetProcAddress);
}

/* ...and from 12000 the 5-argument one, or symbolStatus would never be
 * filled; every later lookup comes through it, so it must be ours. */
static void the_self_lookup_from_12000_gets_the_five_argument_wrapper(void **state)
{
    (void)state;
    assert_ptr_equal(lookup("cuGetProcAddress", 12000, 0), (void *)&cuGetProcAddress_v2);
    assert_ptr_equal(lookup("cuGetProcAddress", 13000, 0), (void *)&cuGetProcAddress_v2);
}

/* A 0 stream means the legacy stream in cuLaunchKernel and the per-thread
 * stream in cuLaunchKernel_ptsz: mixing them up changes the program's
 * ordering.  Only the driver's answer decides, never the name asked for. */
static void per_thread_and_versioned_variants_map_by_identity(void **state)
{
    (void)state;
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    assert_ptr_equal(lookup("cuLaunchKernel", 4000, 0), (void *)&cuLaunchKernel);
    assert_ptr_equal(lookup("cuLaunchKernel", 7000, PT), (void *)&cuLaunchKernel_ptsz);
    assert_ptr_equal(lookup("cuMemcpyHtoD", 2000, 0), (void *)&cuMemcpyHtoD);
    assert_ptr_equal(lookup("cuMemcpyHtoD", 3020, 0), (void *)&cuMemcpyHtoD_v2);
    assert_ptr_equal(lookup("cuMemcpyHtoD", 7000, PT), (void *)&cuMemcpyHtoD_v2_ptds);
    assert_ptr_equal(lookup("cuStreamBeginCapture", 10000, 0), (void *)&cuStreamBeginCapture);
    assert_ptr_equal(lookup("cuStreamBeginCapture", 10010, 0),
                     (void *)&cuStreamBeginCapture_v2);
    assert_ptr_equal(lookup("cuStreamBeginCapture", 10010, PT),
                     (void *)&cuStreamBeginCapture_v2_ptsz);
    assert_ptr_equal(lookup("cuCtxSynchronize", 12000, 0), (void *)&cuCtxSynchronize);
    assert_ptr_equal(lookup("cuCtxSynchronize", 13000, 0), (void *)&cuCtxSynchronize_v2);
}

/* A function we do not interpose must reach the program as the driver's own
 * pointer: wrapping it would need a wrapper we do not have. */
static void a_pointer_we_do_not_interpose_is_handed_out_untouched(void **state)
{
    (void)state;
    assert_ptr_equal(lookup("cuDriverGetVersion", 2020, 0), (void *)fake_unlisted);
    assert_int_equal(rp__route_find(&rp__routes, (void *)fake_unlisted), -1);
}

/* The runtime reads symbolStatus to tell "too old a driver" from "no such
 * symbol"; the shim must not turn one into the other. */
static void symbol_status_and_result_are_exactly_the_drivers(void **state)
{
    (void)state;
    void *p = (void *)&p;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
    assert_int_equal(cuGetProcAddress_v2("cuLaunchKernel", &p, 3000, 0, &st), CUDA_SUCCESS);
    assert_null(p);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    p = (void *)&p;
    assert_int_equal(cuGetProcAddress_v2("cudnnCreate", &p, 12000, 0, &st), CUDA_SUCCESS);
    assert_null(p);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_int_equal(resolver_calls, 2);
}

/* Two names at one address (an alias in the driver) must still route, to
 * the first entry of the list: either wrapper reaches the same function. */
static void an_aliased_real_pointer_routes_to_the_first_listed_entry(void **state)
{
    (void)state;
    struct rp__driver d = fakes;
    d.cuCtxDestroy_v2 = d.cuCtxDestroy;
    struct rp__route r;
    rp__route_build(&r, &d);
    assert_int_equal(rp__route_find(&r, (void *)fakes.cuCtxDestroy), RP_E_cuCtxDestroy);
    assert_int_equal(rp__route_find(&r, (void *)fakes.cuCtxDestroy_v2), -1);
    assert_int_equal(r.n, RP_E_COUNT - 1);
}

/* ---- names: dlsym routing -------------------------------------------------- */

/* Matching by prefix routed cudnnCreate into a driver shim and recursed;
 * only the exact exported names of the list are ours. */
static void only_exact_listed_names_are_routed_by_name(void **state)
{
    (void)state;
    assert_int_equal(rp__entry_by_name("cuLaunchKernel"), RP_E_cuLaunchKernel);
    assert_int_equal(rp__entry_by_name("cuMemcpyHtoD_v2_ptds"), RP_E_cuMemcpyHtoD_v2_ptds);
    assert_int_equal(rp__entry_by_name("cudnnCreate"), -1);
    assert_int_equal(rp__entry_by_name("cuLaunchKernelX"), -1);
    assert_int_equal(rp__entry_by_name("cuLaunchKerne"), -1);
    assert_int_equal(rp__entry_by_name("cuDriverGetVersion"), -1);
    assert_int_equal(rp__entry_by_name("cu"), -1);
    assert_int_equal(rp__entry_by_name(""), -1);
    assert_int_equal(rp__entry_by_name(NULL), -1);
}

static void dlsym_routes_listed_names_for_the_default_handles_only(void **state)
{
    (void)state;
    assert_ptr_equal(rp__dlsym_route(RTLD_DEFAULT, "cuLaunchKernel", NULL),
                     (void *)&cuLaunchKernel);
    assert_ptr_equal(rp__dlsym_route(RTLD_NEXT, "cuMemFree_v2", NULL), (void *)&cuMemFree_v2);
    assert_null(rp__dlsym_route(RTLD_DEFAULT, "cudnnCreate", NULL));
    assert_null(rp__dlsym_route(RTLD_DEFAULT, "printf", NULL));
    /* The main program's handle is not the driver. */
    void *main_handle = dlopen(NULL, RTLD_NOW);
    assert_non_null(main_handle);
    assert_null(rp__dlsym_route(main_handle, "cuLaunchKernel", NULL));
}

/* Disabled, the shim must not put itself between the runtime and the driver. */
static void dlsym_and_cuGetProcAddress_hand_out_real_pointers_when_disabled(void **state)
{
    (void)state;
    assert_null(rp__dlsym_route(RTLD_DEFAULT, "cuLaunchKernel", NULL));
    assert_ptr_equal(lookup("cuLaunchKernel", 7000, 2), (void *)fakes.cuLaunchKernel_ptsz);
    assert_int_equal(atomic_load(&rp__lookups), 0);
}

/* ---- wrappers: forwarding and counting ------------------------------------ */

static void a_wrapper_forwards_to_its_real_entry_and_counts_its_exported_name(void **state)
{
    (void)state;
    assert_int_equal(cuLaunchKernel_ptsz(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
                     CUDA_SUCCESS);
    assert_int_equal(last_called, RP_E_cuLaunchKernel_ptsz);
    assert_int_equal(cuMemcpyHtoD(0, NULL, 0), CUDA_SUCCESS);
    assert_int_equal(last_called, RP_E_cuMemcpyHtoD);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&rp__calls[RP_E_cuLaunchKernel_ptsz]), 1);
    assert_int_equal(atomic_load(&rp__calls[RP_E_cuLaunchKernel]), 0);
    assert_int_equal(atomic_load(&rp__calls[RP_E_cuMemcpyHtoD]), 1);
    assert_int_equal(atomic_load(&rp__calls[RP_E_cuCtxSynchronize]), 1);
}

/* Disabled is invisible: forwarded, and not even counted. */
static void a_disabled_wrapper_forwards_without_counting(void **state)
{
    (void)state;
    assert_int_equal(cuStreamSynchronize_ptsz(NULL), CUDA_SUCCESS);
    assert_int_equal(last_called, RP_E_cuStreamSynchronize_ptsz);
    assert_int_equal(atomic_load(&rp__calls[RP_E_cuStreamSynchronize_ptsz]), 0);
}

/* A program bound to a symbol this driver lacks gets an error, not a jump
 * through NULL. */
static void a_wrapper_whose_real_entry_is_missing_returns_not_found(void **state)
{
    (void)state;
    struct rp__driver d = fakes;
    d.cuMemFree_v2 = NULL;
    rp__install(&d, true);
    assert_int_equal(cuMemFree_v2(0), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(last_called, -1);
}

/* ---- the report ----------------------------------------------------------- */

static char *report(void)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_true(rp__stats_write_fd(fileno(f)));
    static char buf[16384];
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void the_report_counts_calls_lookups_and_wrappers_handed_out(void **state)
{
    (void)state;
    lookup("cuGetProcAddress", 12000, 0);
    lookup("cuLaunchKernel", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    lookup("cuMemcpyHtoD", 3020, 0);
    lookup("cuDriverGetVersion", 2020, 0);
    cuLaunchKernel_ptsz(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    const char *r = report();
    assert_non_null(strstr(r, "\"version\": 1,"));
    assert_non_null(strstr(r, "\"enabled\": true"));
    assert_non_null(strstr(r, "\"cuLaunchKernel_ptsz\": 1"));
    assert_non_null(strstr(r, "\"cuGetProcAddress_v2\": 4"));
    assert_null(strstr(r, "\"cuLaunchKernel\": "));
    assert_non_null(strstr(r, "\"lookups\": 4"));
    assert_non_null(strstr(r, "\"wrapped_lookups\": 3"));
    assert_non_null(strstr(r, "\"wrapped\": [\"cuGetProcAddress_v2\", \"cuLaunchKernel_ptsz\", "
                              "\"cuMemcpyHtoD_v2\"]"));
}

static void a_disabled_report_says_so_and_has_no_calls(void **state)
{
    (void)state;
    cuInit(0);
    const char *r = report();
    assert_non_null(strstr(r, "\"enabled\": false"));
    assert_non_null(strstr(r, "\"calls\": {}"));
    assert_non_null(strstr(r, "\"wrapped\": []"));
}

static void the_report_path_expands_pid_and_percent(void **state)
{
    (void)state;
    char out[64], want[64];
    assert_true(rp__stats_path("r-%p-%%.json", out, sizeof out));
    snprintf(want, sizeof want, "r-%ld-%%.json", (long)getpid());
    assert_string_equal(out, want);
    assert_false(rp__stats_path("a-very-long-name-%p", out, 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(each_real_pointer_maps_to_the_wrapper_of_the_same_entry,
                               setup_enabled),
        cmocka_unit_test_setup(the_self_lookup_below_12000_gets_the_four_argument_wrapper,
                               setup_enabled),
        cmocka_unit_test_setup(the_self_lookup_from_12000_gets_the_five_argument_wrapper,
                               setup_enabled),
        cmocka_unit_test_setup(per_thread_and_versioned_variants_map_by_identity, setup_enabled),
        cmocka_unit_test_setup(a_pointer_we_do_not_interpose_is_handed_out_untouched,
                               setup_enabled),
        cmocka_unit_test_setup(symbol_status_and_result_are_exactly_the_drivers, setup_enabled),
        cmocka_unit_test_setup(an_aliased_real_pointer_routes_to_the_first_listed_entry,
                               setup_enabled),
        cmocka_unit_test(only_exact_listed_names_are_routed_by_name),
        cmocka_unit_test_setup(dlsym_routes_listed_names_for_the_default_handles_only,
                               setup_enabled),
        cmocka_unit_test_setup(dlsym_and_cuGetProcAddress_hand_out_real_pointers_when_disabled,
                               setup_disabled),
        cmocka_unit_test_setup(a_wrapper_forwards_to_its_real_entry_and_counts_its_exported_name,
                               setup_enabled),
        cmocka_unit_test_setup(a_disabled_wrapper_forwards_without_counting, setup_disabled),
        cmocka_unit_test_setup(a_wrapper_whose_real_entry_is_missing_returns_not_found,
                               setup_enabled),
        cmocka_unit_test_setup(the_report_counts_calls_lookups_and_wrappers_handed_out,
                               setup_enabled),
        cmocka_unit_test_setup(a_disabled_report_says_so_and_has_no_calls, setup_disabled),
        cmocka_unit_test(the_report_path_expands_pid_and_percent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
