/* drv_faults.c - the CPU driver's test interface: fault injection
 * (cpucuda_faults_set and CPUCUDA_FAULTS: the Nth call of an entry fails with
 * a code and has no side effect), the counters (call.<entry> per exported
 * variant, eager work, synchronizations, reset) and the CPUCUDA_STATS file
 * written at exit. The shim's failure-path tests and its "ran as a graph"
 * assertions are only as good as these. */
#include "drvtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void faults(const char *spec)
{
    if (!cpucuda_faults_set)
        fail_msg("the driver does not export cpucuda_faults_set");
    if (cpucuda_faults_set(spec) != 0)
        fail_msg("cpucuda_faults_set(\"%s\") rejected a valid spec", spec);
}

/* "entry:N" fails only the Nth call (counted from the set), with 999, and
 * that call does nothing: no kernel runs and launch.eager does not move,
 * though call.<entry> counts it. Earlier and later calls work. Without this
 * the shim's handling of a failed launch could not be tested at all. */
static void a_fault_fails_only_the_nth_call_and_that_call_does_nothing(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    unsigned long long fired = drv_counter("faults.fired");
    faults("cuLaunchKernel:2");
    assert_int_equal(cpucuda_faults_fired(), 0);
    CU_OK(drv_launch_set(NULL, drv_dp(v), 1));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 1);
    unsigned long long eager = drv_counter("launch.eager");
    unsigned long long calls = drv_counter("call.cuLaunchKernel");
    CU_IS(CUDA_ERROR_UNKNOWN, drv_launch_set(NULL, drv_dp(v), 2));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 1);
    assert_int_equal(drv_counter("launch.eager"), eager);
    assert_int_equal(drv_counter("call.cuLaunchKernel"), calls + 1);
    assert_int_equal(cpucuda_faults_fired(), 1);
    assert_int_equal(drv_counter("faults.fired"), fired + 1);
    CU_OK(drv_launch_set(NULL, drv_dp(v), 3));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 3);
    assert_int_equal(cpucuda_faults_fired(), 1);
}

/* "entry:N+" fails every call from the Nth on. */
static void a_plus_fault_fails_every_call_from_the_nth(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    faults("cuMemsetD32_v2:2+");
    CU_OK(cuMemsetD32(d, 1, 1));
    for (int i = 0; i < 3; i++)
        CU_IS(CUDA_ERROR_UNKNOWN, cuMemsetD32(d, 5, 1));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_read_int(d), 1);
    assert_int_equal(cpucuda_faults_fired(), 3);
    faults("");
    CU_OK(cuMemsetD32(d, 6, 1));
    assert_int_equal(drv_read_int(d), 6);
}

/* "entry:N:code" returns that code, and the failed call leaves its
 * out-parameters untouched (no side effect). */
static void a_fault_with_a_code_returns_that_code_and_writes_no_out_parameter(void **state)
{
    (void)state;
    drv_init();
    faults("cuMemAlloc_v2:1:2,cuStreamCreate:1:801");
    CUdeviceptr p = 0x1234;
    CU_IS(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&p, 64));
    assert_true(p == 0x1234);
    CUstream s = (CUstream)(uintptr_t)0x5678;
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuStreamCreate(&s, 0));
    assert_ptr_equal(s, (CUstream)(uintptr_t)0x5678);
    assert_int_equal(cpucuda_faults_fired(), 2);
    CU_OK(cuMemAlloc(&p, 64));
    CU_OK(cuMemFree(p));
}

/* A fault on one exported variant leaves the others alone: faults are per
 * exported name, as the shim sees the entry points. */
static void a_fault_on_one_variant_leaves_the_other_variants_alone(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 4;
    void *args[] = {&p, &val};
    CUfunction f = drv_fn("drv_set");
    faults("cuLaunchKernel_ptsz:1");
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    val = 5;
    CU_IS(CUDA_ERROR_UNKNOWN, cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(*v, 4);
}

/* Call numbering restarts when the fault list is set: "entry:1" fails the
 * next call even after earlier calls of the entry. */
static void fault_numbering_starts_when_the_list_is_set(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    CU_OK(cuMemsetD32(d, 1, 1));
    CU_OK(cuMemsetD32(d, 2, 1));
    faults("cuMemsetD32_v2:1");
    CU_IS(CUDA_ERROR_UNKNOWN, cuMemsetD32(d, 3, 1));
    CU_OK(cuMemsetD32(d, 4, 1));
    assert_int_equal(drv_read_int(d), 4);
}

/* An empty spec clears the faults. */
static void an_empty_fault_spec_clears_the_faults(void **state)
{
    (void)state;
    drv_init();
    faults("cuMemAlloc_v2:1+");
    faults("");
    CUdeviceptr p = 0;
    CU_OK(cuMemAlloc(&p, 64));
    CU_OK(cuMemFree(p));
    assert_int_equal(cpucuda_faults_fired(), 0);
}

/* A malformed spec is rejected with -1 and leaves no faults behind. A typo
 * that silently injected nothing would make a failure-path test pass
 * without testing anything. */
static void a_malformed_fault_spec_is_rejected_and_leaves_no_faults(void **state)
{
    (void)state;
    drv_init();
    static const char *const bad[] = {
        "cuLaunchKernel",        "cuLaunchKernel:",      "cuLaunchKernel:0",
        "cuLaunchKernel:x",      ":2",                   "cuLaunchKernel:2:",
        "cuLaunchKernel:2:abc",  "cuLaunchKernel:2++",   "cuLaunchKernel:-1",
        "cuLaunchKernel:2,,cuInit:1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        faults("cuMemAlloc_v2:1+");
        int r = cpucuda_faults_set(bad[i]);
        if (r != -1)
            fail_msg("cpucuda_faults_set(\"%s\") returned %d, expected -1", bad[i], r);
        CUdeviceptr p = 0;
        CU_OK(cuMemAlloc(&p, 64));
        CU_OK(cuMemFree(p));
    }
}

/* A spec naming no exported entry is rejected too (stricter reading: a
 * misspelt entry would otherwise inject nothing, silently). */
static void a_fault_spec_naming_an_unknown_entry_is_rejected(void **state)
{
    (void)state;
    drv_init();
    assert_int_equal(cpucuda_faults_set("cuNoSuchEntry:1"), -1);
    assert_int_equal(cpucuda_faults_set("cuLaunchKernel:1,cuMemAlloc:1,cuLaunchKernal:1"), -1);
}

/* Child of the CPUCUDA_FAULTS test: exit 0 when each call behaves. */
static int child_faults(void)
{
    CUcontext c;
    CUmodule m;
    CUfunction f;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 10;
    if (cuModuleLoad(&m, DRV_KERNELS_PATH) || cuModuleGetFunction(&f, m, "drv_set"))
        return 11;
    CUdeviceptr p[3] = {0, 0, 0};
    if (cuMemAlloc(&p[0], 64) != CUDA_SUCCESS)
        return 12;
    CUresult r = cuMemAlloc(&p[1], 64);
    if (r != CUDA_ERROR_OUT_OF_MEMORY || p[1] != 0) {
        fprintf(stderr, "child: the 2nd cuMemAlloc returned %d\n", (int)r);
        return 13;
    }
    if (cuMemAlloc(&p[2], 64) != CUDA_SUCCESS)
        return 14;
    int val = 1;
    void *args[] = {&p[0], &val};
    r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    if (r != CUDA_ERROR_UNKNOWN) {
        fprintf(stderr, "child: the 1st cuLaunchKernel returned %d\n", (int)r);
        return 15;
    }
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS)
        return 16;
    if (cuCtxSynchronize() != CUDA_SUCCESS)
        return 17;
    if (cpucuda_faults_fired() != 2 || cpucuda_counter("faults.fired") != 2) {
        fprintf(stderr, "child: faults fired %llu, counter %llu\n", cpucuda_faults_fired(),
                cpucuda_counter("faults.fired"));
        return 18;
    }
    return 0;
}

/* CPUCUDA_FAULTS injects the same faults into an unmodified process (a
 * comma-separated list, with codes): the integration tests rely on it. */
static void the_CPUCUDA_FAULTS_variable_fails_the_named_calls_of_a_new_process(void **state)
{
    (void)state;
    const char *env[] = {"CPUCUDA_FAULTS=cuMemAlloc_v2:2:2,cuLaunchKernel:1", NULL};
    assert_int_equal(drv_run_self("child-faults", env), 0);
}

/* call.<entry> counts each exported variant separately, failed calls
 * included; launch.eager counts only the launches that ran. */
static void call_counters_count_each_exported_variant_separately_failures_included(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    CUdeviceptr p = drv_dp(v);
    int val = 1;
    void *args[] = {&p, &val};
    CUfunction f = drv_fn("drv_set");
    unsigned long long plain = drv_counter("call.cuLaunchKernel");
    unsigned long long ptsz = drv_counter("call.cuLaunchKernel_ptsz");
    unsigned long long eager = drv_counter("launch.eager");
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_counter("call.cuLaunchKernel"), plain + 2);
    assert_int_equal(drv_counter("call.cuLaunchKernel_ptsz"), ptsz + 1);
    assert_int_equal(drv_counter("launch.eager"), eager + 2);
}

static void CUDA_CB host_noop(void *arg)
{
    (void)arg;
}

/* Eager copies, memsets and host functions, and each kind of synchronize,
 * have their own counters. */
static void eager_work_and_synchronizations_are_counted_by_kind(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUevent e = drv_event();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    int *h = drv_pinned(sizeof(int));
    unsigned long long copies = drv_counter("copy.eager"), sets = drv_counter("memset.eager");
    unsigned long long hosts = drv_counter("hostfunc.eager");
    CU_OK(cuMemsetD32Async(d, 3, 1, s));
    CU_OK(cuMemcpyDtoHAsync(h, d, sizeof(int), s));
    CU_OK(cuLaunchHostFunc(s, host_noop, NULL));
    CU_OK(cuMemcpyHtoDAsync(d, h, sizeof(int), s));
    CU_OK(cuEventRecord(e, s));
    unsigned long long ss = drv_counter("sync.stream");
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_counter("sync.stream"), ss + 1);
    unsigned long long se = drv_counter("sync.event");
    CU_OK(cuEventSynchronize(e));
    assert_int_equal(drv_counter("sync.event"), se + 1);
    unsigned long long sc = drv_counter("sync.ctx");
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_counter("sync.ctx"), sc + 1);
    assert_int_equal(drv_counter("copy.eager"), copies + 2);
    assert_int_equal(drv_counter("memset.eager"), sets + 1);
    assert_int_equal(drv_counter("hostfunc.eager"), hosts + 1);
    assert_int_equal(*h, 3);
}

/* cpucuda_counters_reset zeroes every counter, call.* included; unknown
 * counter names read 0. */
static void resetting_the_counters_zeroes_every_counter(void **state)
{
    (void)state;
    drv_init();
    int *v = drv_pinned(sizeof(int));
    CU_OK(drv_launch_set(NULL, drv_dp(v), 1));
    CU_OK(cuCtxSynchronize());
    assert_true(drv_counter("launch.eager") > 0);
    cpucuda_counters_reset();
    assert_int_equal(drv_counter("launch.eager"), 0);
    assert_int_equal(drv_counter("call.cuLaunchKernel"), 0);
    assert_int_equal(drv_counter("sync.ctx"), 0);
    CU_OK(drv_launch_set(NULL, drv_dp(v), 2));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_counter("launch.eager"), 1);
    assert_int_equal(drv_counter("call.cuLaunchKernel"), 1);
    assert_int_equal(drv_counter("no.such.counter"), 0);
}

/* Child of the CPUCUDA_STATS test: one launch and one copy, then exit. */
static int child_stats(void)
{
    CUcontext c;
    CUmodule m;
    CUfunction f;
    int *v;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c))
        return 10;
    if (cuModuleLoad(&m, DRV_KERNELS_PATH) || cuModuleGetFunction(&f, m, "drv_set"))
        return 11;
    if (cuMemAllocHost((void **)&v, sizeof(int)))
        return 12;
    CUdeviceptr p = drv_dp(v);
    int val = 1;
    void *args[] = {&p, &val};
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) || cuCtxSynchronize())
        return 13;
    return 0;
}

/* The counters the driver promises (tests/cpudriver/README.md). */
static const char *const all_counters[] = {
    "launch.eager",     "launch.graph",     "node.kernel",   "node.memcpy",
    "node.memset",      "node.host",        "node.event_record", "node.wait_event",
    "node.mem_alloc",   "node.mem_free",    "node.empty",    "copy.eager",
    "memset.eager",     "hostfunc.eager",   "sync.stream",   "sync.ctx",
    "sync.event",       "capture.begun",    "capture.ended", "capture.invalidated",
    "graph.instantiated", "graph.exec_updates", "faults.fired",
};

/* The stats file with whitespace outside strings removed. */
static char *read_compact(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int in_str = 0, c;
    while (buf && (c = fgetc(f)) != EOF) {
        if (c == '"')
            in_str = !in_str;
        if (!in_str && (c == ' ' || c == '\n' || c == '\t' || c == '\r'))
            continue;
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        buf[n++] = (char)c;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

/* CPUCUDA_STATS=path writes, at exit, one JSON object with the version,
 * every counter (zero ones too) and the per-entry call counts. The integration tests read
 * this file to tell graph replays from eager launches. */
static void CPUCUDA_STATS_writes_the_counters_as_json_at_exit(void **state)
{
    (void)state;
    char path[64], envv[96];
    snprintf(path, sizeof path, "/tmp/drv_stats_%d.json", (int)getpid());
    snprintf(envv, sizeof envv, "CPUCUDA_STATS=%s", path);
    unlink(path);
    const char *env[] = {envv, NULL};
    assert_int_equal(drv_run_self("child-stats", env), 0);
    char *j = read_compact(path);
    unlink(path);
    if (!j)
        fail_msg("no stats file at %s", path);
    const char *counters = strstr(j, "\"counters\":{");
    const char *calls = strstr(j, "\"calls\":{");
    int ok = strncmp(j, "{\"cpucuda_version\":1,", 21) == 0 && counters && calls &&
             counters < calls && j[strlen(j) - 1] == '}';
    ok = ok && strstr(counters, "\"launch.eager\":1") && strstr(calls, "\"cuLaunchKernel\":1") &&
         strstr(calls, "\"cuInit\":1");
    if (!ok) {
        print_error("stats file: %.600s\n", j);
        free(j);
        fail_msg("the stats file lacks the version, sections or the counts of what ran");
    }
    /* Stable keys: every counter is present, zero or not, so a reader can
     * index the object without guessing which keys a run happened to touch. */
    for (size_t i = 0; i < sizeof all_counters / sizeof all_counters[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, "\"%s\":", all_counters[i]);
        const char *at = strstr(counters, key);
        if (!at || at > calls) {
            print_error("stats file: %.600s\n", j);
            free(j);
            fail_msg("the stats file's counters lack \"%s\"", all_counters[i]);
        }
    }
    free(j);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "child-faults") == 0)
            return child_faults();
        if (strcmp(argv[1], "child-stats") == 0)
            return child_stats();
        return 2;
    }
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_fault_fails_only_the_nth_call_and_that_call_does_nothing),
        DRV_TEST(a_plus_fault_fails_every_call_from_the_nth),
        DRV_TEST(a_fault_with_a_code_returns_that_code_and_writes_no_out_parameter),
        DRV_TEST(a_fault_on_one_variant_leaves_the_other_variants_alone),
        DRV_TEST(fault_numbering_starts_when_the_list_is_set),
        DRV_TEST(an_empty_fault_spec_clears_the_faults),
        DRV_TEST(a_malformed_fault_spec_is_rejected_and_leaves_no_faults),
        DRV_TEST(a_fault_spec_naming_an_unknown_entry_is_rejected),
        DRV_TEST(the_CPUCUDA_FAULTS_variable_fails_the_named_calls_of_a_new_process),
        DRV_TEST(call_counters_count_each_exported_variant_separately_failures_included),
        DRV_TEST(eager_work_and_synchronizations_are_counted_by_kind),
        DRV_TEST(resetting_the_counters_zeroes_every_counter),
        DRV_TEST(CPUCUDA_STATS_writes_the_counters_as_json_at_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
