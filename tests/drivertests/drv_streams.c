/* drv_streams.c - asynchrony and ordering of the CPU driver's streams: a
 * launch returns before its kernel runs, the legacy stream's implicit
 * synchronization with blocking streams (and not with non-blocking ones), the
 * per-thread stream, events, and the host-synchronization rules of the
 * synchronous and asynchronous copies and memsets.
 *
 * "Has not run yet" is shown with a gate kernel that holds its stream until
 * the host opens it (it gives up after 3 s, marking its log entry, so a driver
 * that wrongly waits fails instead of hanging). Positive assertions never
 * depend on timing; short sleeps only give a wrongly eager driver time to
 * show itself. One test runs a child with CPUCUDA_DELAY_US. */
#include "drvtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_A 1u
#define TAG_B 2u

/* A launch returns before the kernel has run: the work waits on its stream
 * (cuStreamQuery says NOT_READY) and runs after. A driver that ran kernels
 * inside cuLaunchKernel would hide every missing synchronization. */
static void a_launch_returns_before_the_kernel_has_run(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(drv_launch_record(s, log, TAG_B));
    assert_int_equal(drv_log_count(log), 0);
    CU_IS(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuStreamQuery(s));
    drv_assert_log(log, 2, TAG_A, TAG_B);
}

/* Child of the CPUCUDA_DELAY_US test: exit 0 when each step behaves. */
static int child_delay(void)
{
    if (cuInit(0) != CUDA_SUCCESS)
        return 10;
    CUcontext c;
    if (cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS || cuCtxSetCurrent(c) != CUDA_SUCCESS)
        return 11;
    CUmodule m;
    CUfunction f;
    if (cuModuleLoad(&m, DRV_KERNELS_PATH) != CUDA_SUCCESS ||
        cuModuleGetFunction(&f, m, "drv_set") != CUDA_SUCCESS)
        return 12;
    CUstream s;
    int *v = NULL;
    if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        cuMemAllocHost((void **)&v, sizeof(int)) != CUDA_SUCCESS)
        return 13;
    *v = 0;
    CUdeviceptr p = drv_dp(v);
    int val = 42;
    void *args[] = {&p, &val};
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS)
        return 14;
    if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != 0) {
        fprintf(stderr, "child: the kernel had already run when cuLaunchKernel returned\n");
        return 15;
    }
    CUresult q = cuStreamQuery(s);
    if (q != CUDA_ERROR_NOT_READY) {
        fprintf(stderr, "child: cuStreamQuery of pending work returned %d\n", (int)q);
        return 16;
    }
    if (cuStreamSynchronize(s) != CUDA_SUCCESS)
        return 17;
    if (*v != 42) {
        fprintf(stderr, "child: after cuStreamSynchronize the value is %d, not 42\n", *v);
        return 18;
    }
    if (cuStreamQuery(s) != CUDA_SUCCESS)
        return 19;
    return 0;
}

/* With CPUCUDA_DELAY_US the worker sleeps before each op, so a program that
 * reads a result without synchronizing gets the old value, and the right one
 * after cuStreamSynchronize: the driver makes missing synchronization visible
 * instead of papering over it. */
static void with_a_worker_delay_a_missing_synchronize_reads_the_old_value(void **state)
{
    (void)state;
    const char *env[] = {"CPUCUDA_DELAY_US=100000", NULL};
    assert_int_equal(drv_run_self("child-delay", env), 0);
}

/* Launches TAG_A behind a closed gate on `first`, then TAG_B on `second`;
 * asserts TAG_B has not run while the gate is closed, then the order A, B. */
static void expect_second_waits(CUstream first, CUstream second, CUstream event_stream)
{
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUevent e = drv_event();
    CU_OK(drv_launch_gate(first, gate, log, TAG_A));
    CU_OK(drv_launch_record(second, log, TAG_B));
    CU_OK(cuEventRecord(e, event_stream));
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 0);
    CU_IS(CUDA_ERROR_NOT_READY, cuEventQuery(e));
    drv_gate_open(gate);
    CU_OK(cuEventSynchronize(e));
    drv_assert_log(log, 2, TAG_A, TAG_B);
    CU_OK(cuCtxSynchronize());
}

/* Launches TAG_A behind a closed gate on `first`, then TAG_B on `second`;
 * asserts `second` completes while the gate is still closed. */
static void expect_second_does_not_wait(CUstream first, CUstream second, CUstream sync_stream)
{
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(first, gate, log, TAG_A));
    CU_OK(drv_launch_record(second, log, TAG_B));
    CU_OK(cuStreamSynchronize(sync_stream));
    drv_assert_log(log, 1, TAG_B);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
    drv_assert_log(log, 2, TAG_B, TAG_A);
}

/* Legacy-stream work (stream 0 in a plain entry point) waits for earlier work
 * on blocking streams. Without it, programs relying on the default stream to
 * serialize with their own streams would race only on a GPU. */
static void legacy_stream_work_waits_for_earlier_blocking_stream_work(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_DEFAULT);
    expect_second_waits(s, NULL, NULL);
}

/* Blocking-stream work waits for earlier legacy-stream work (the other half
 * of the legacy rule). */
static void blocking_stream_work_waits_for_earlier_legacy_stream_work(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_DEFAULT);
    expect_second_waits(CU_STREAM_LEGACY, s, s);
}

/* Non-blocking streams take no part: their work does not wait for legacy
 * work, and legacy work does not wait for theirs. A driver that serialized
 * everything would hide races that show on a GPU. */
static void non_blocking_streams_and_the_legacy_stream_do_not_wait_for_each_other(void **state)
{
    (void)state;
    drv_init();
    CUstream nb = drv_stream(CU_STREAM_NON_BLOCKING);
    expect_second_does_not_wait(CU_STREAM_LEGACY, nb, nb);
    expect_second_does_not_wait(nb, CU_STREAM_LEGACY, CU_STREAM_LEGACY);
}

/* Two blocking streams do not wait for each other: only the legacy stream
 * synchronizes implicitly. */
static void blocking_streams_do_not_wait_for_each_other(void **state)
{
    (void)state;
    drv_init();
    CUstream a = drv_stream(CU_STREAM_DEFAULT);
    CUstream b = drv_stream(CU_STREAM_DEFAULT);
    expect_second_does_not_wait(a, b, b);
}

/* The per-thread default stream is an ordinary blocking stream: it waits for
 * legacy work and legacy work waits for it. */
static void the_per_thread_stream_is_a_blocking_stream(void **state)
{
    (void)state;
    drv_init();
    expect_second_waits(CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, CU_STREAM_PER_THREAD);
    expect_second_waits(CU_STREAM_PER_THREAD, CU_STREAM_LEGACY, CU_STREAM_LEGACY);
}

/* Stream 0 in a _ptsz entry point is the per-thread stream, not the legacy
 * one: it does not wait for another blocking stream, where legacy work would.
 * A driver that read 0 as legacy everywhere would serialize programs built
 * with --default-stream per-thread. */
static void a_zero_stream_in_a_ptsz_entry_point_is_the_per_thread_stream(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_DEFAULT);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CUdeviceptr l = drv_dp(log);
    unsigned tag = TAG_B;
    void *args[] = {&l, &tag};
    CU_OK(cuLaunchKernel_ptsz(drv_fn("drv_record"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(cuStreamSynchronize_ptsz(NULL));
    drv_assert_log(log, 1, TAG_B);
    CU_OK(cuStreamQuery(CU_STREAM_PER_THREAD));
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
    drv_assert_log(log, 2, TAG_B, TAG_A);
}

struct other_thread_args {
    unsigned *log;
    CUresult launch, sync;
};

static void *per_thread_stream_of_another_thread(void *arg)
{
    struct other_thread_args *a = arg;
    a->launch = drv_thread_ctx();
    if (a->launch == CUDA_SUCCESS)
        a->launch = drv_launch_record(CU_STREAM_PER_THREAD, a->log, TAG_B);
    a->sync = cuStreamSynchronize(CU_STREAM_PER_THREAD);
    return NULL;
}

/* Each thread has its own per-thread stream: another thread's per-thread work
 * does not wait behind this thread's. */
static void each_thread_has_its_own_per_thread_stream(void **state)
{
    (void)state;
    drv_init();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(CU_STREAM_PER_THREAD, gate, log, TAG_A));
    struct other_thread_args a = {log, CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN};
    drv_in_thread(per_thread_stream_of_another_thread, &a);
    CU_OK(a.launch);
    CU_OK(a.sync);
    drv_assert_log(log, 1, TAG_B);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
}

/* cuStreamWaitEvent makes one stream wait for an event recorded in another. */
static void a_stream_waits_for_an_event_recorded_in_another(void **state)
{
    (void)state;
    drv_init();
    CUstream a = drv_stream(CU_STREAM_NON_BLOCKING);
    CUstream b = drv_stream(CU_STREAM_NON_BLOCKING);
    CUevent between = drv_event(), done = drv_event();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(a, gate, log, TAG_A));
    CU_OK(cuEventRecord(between, a));
    CU_OK(cuStreamWaitEvent(b, between, 0));
    CU_OK(drv_launch_record(b, log, TAG_B));
    CU_OK(cuEventRecord(done, b));
    drv_sleep_ms(20);
    CU_IS(CUDA_ERROR_NOT_READY, cuEventQuery(done));
    CU_IS(CUDA_ERROR_NOT_READY, cuStreamQuery(b));
    drv_gate_open(gate);
    CU_OK(cuEventSynchronize(done));
    CU_OK(cuEventQuery(done));
    drv_assert_log(log, 2, TAG_A, TAG_B);
}

/* cuCtxSynchronize waits for every stream of the context. */
static void cuCtxSynchronize_waits_for_every_stream(void **state)
{
    (void)state;
    drv_init();
    CUstream a = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(a, gate, log, TAG_A));
    drv_gate_open_after(gate, 30);
    CU_OK(cuCtxSynchronize());
    drv_assert_log(log, 1, TAG_A);
}

static void CUDA_CB host_record(void *arg)
{
    unsigned *log = arg;
    unsigned i = __atomic_fetch_add(&log[0], 1u, __ATOMIC_ACQ_REL);
    log[i + 1] = TAG_B;
}

/* A host function runs in stream order, after the work before it. */
static void a_host_function_runs_in_stream_order(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuLaunchHostFunc(s, host_record, log));
    drv_sleep_ms(10);
    assert_int_equal(drv_log_count(log), 0);
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 2, TAG_A, TAG_B);
}

/* A synchronous host-to-device copy from pageable memory has taken the bytes
 * when it returns, even with the legacy stream busy: the caller may reuse the
 * buffer at once. A driver that kept the pointer would deliver the new bytes. */
static void a_sync_copy_from_pageable_memory_lets_the_buffer_be_reused_at_once(void **state)
{
    (void)state;
    drv_init();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUdeviceptr d = drv_dalloc(64 * sizeof(int));
    int *host = malloc(64 * sizeof(int));
    assert_non_null(host);
    for (int i = 0; i < 64; i++)
        host[i] = 1000 + i;
    CU_OK(drv_launch_gate(CU_STREAM_LEGACY, gate, log, TAG_A));
    drv_gate_open_after(gate, 50); /* in case the copy waits for the stream */
    CUresult r = cuMemcpyHtoD(d, host, 64 * sizeof(int));
    for (int i = 0; i < 64; i++)
        host[i] = -1;
    drv_gate_open(gate);
    int back[64];
    CU_OK(r);
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    free(host);
    for (int i = 0; i < 64; i++)
        assert_int_equal(back[i], 1000 + i);
    drv_assert_log(log, 1, TAG_A);
}

/* An async host-to-device copy from pinned memory reads the buffer when it
 * executes: bytes written after the call but before the copy ran arrive. A
 * driver that snapshotted them at the call would hide use-after-reuse bugs
 * that corrupt data on a GPU. */
static void an_async_copy_from_pinned_memory_reads_the_buffer_when_it_runs(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    int *pin = drv_pinned(sizeof(int));
    CUdeviceptr d = drv_dalloc(sizeof(int));
    *pin = 5;
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuMemcpyHtoDAsync(d, pin, sizeof(int), s));
    *pin = 7;
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(d), 7);
}

/* A synchronous device-to-host copy is complete when it returns, after the
 * earlier legacy work that produced the data. */
static void a_sync_copy_to_the_host_is_complete_when_it_returns(void **state)
{
    (void)state;
    drv_init();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    CU_OK(drv_launch_gate(CU_STREAM_LEGACY, gate, log, TAG_A));
    CU_OK(drv_launch_set(CU_STREAM_LEGACY, d, 42));
    drv_gate_open_after(gate, 30);
    int h = 0;
    CU_OK(cuMemcpyDtoH(&h, d, sizeof h));
    assert_int_equal(h, 42);
}

/* A synchronous device-to-device copy returns without waiting (the gate is
 * still closed) but runs in legacy-stream order, after the kernel before it.
 * A driver that blocked would hide missing synchronization before host reads. */
static void a_sync_device_to_device_copy_does_not_block_but_is_ordered_on_the_legacy_stream(
    void **state)
{
    (void)state;
    drv_init();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUdeviceptr src = drv_dalloc(sizeof(int)), dst = drv_dalloc(sizeof(int));
    CU_OK(drv_launch_gate(CU_STREAM_LEGACY, gate, log, TAG_A));
    CU_OK(drv_launch_set(CU_STREAM_LEGACY, src, 42));
    CU_OK(cuMemcpyDtoD(dst, src, sizeof(int)));
    assert_int_equal(drv_log_count(log), 0);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_read_int(dst), 42);
    drv_assert_log(log, 1, TAG_A);
}

/* A synchronous memset of device memory returns without waiting but runs in
 * legacy-stream order: it overwrites what the kernel before it wrote. */
static void a_sync_memset_does_not_block_but_is_ordered_on_the_legacy_stream(void **state)
{
    (void)state;
    drv_init();
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    CU_OK(drv_launch_gate(CU_STREAM_LEGACY, gate, log, TAG_A));
    CU_OK(drv_launch_set(CU_STREAM_LEGACY, d, 42));
    CU_OK(cuMemsetD32(d, 7, 1));
    assert_int_equal(drv_log_count(log), 0);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_read_int(d), 7);
    drv_assert_log(log, 1, TAG_A);
}

/* The _ptds synchronous variants use the per-thread stream: they do not wait
 * for another blocking stream's work, where the legacy variants would. */
static void ptds_sync_variants_run_on_the_per_thread_stream(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_DEFAULT);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    CUdeviceptr d = drv_dalloc(sizeof(int));
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuMemsetD32_v2_ptds(d, 9, 1));
    int h = 0;
    CU_OK(cuMemcpyDtoH_v2_ptds(&h, d, sizeof h));
    assert_int_equal(h, 9);
    assert_int_equal(drv_log_count(log), 0);
    drv_gate_open(gate);
    CU_OK(cuCtxSynchronize());
}

/* Synchronizing the legacy stream waits for the work every blocking stream
 * had been given before the call (the legacy stream synchronizes with all
 * blocking streams of its context), but not for non-blocking streams. A
 * driver that waited only for the legacy stream's own queue would let a
 * program read results of a blocking stream too early (unverified on a GPU;
 * see tests/cpudriver/README.md). */
static void synchronizing_the_legacy_stream_waits_for_earlier_blocking_stream_work(void **state)
{
    (void)state;
    drv_init();
    CUstream b = drv_stream(CU_STREAM_DEFAULT), nb = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new(), *nb_gate = drv_gate_new();
    unsigned *log = drv_log_new(), *nb_log = drv_log_new();
    CU_OK(drv_launch_gate(nb, nb_gate, nb_log, TAG_B));
    CU_OK(drv_launch_gate(b, gate, log, TAG_A));
    drv_gate_open_after(gate, 50);
    CU_OK(cuStreamSynchronize(CU_STREAM_LEGACY));
    drv_assert_log(log, 1, TAG_A);
    assert_int_equal(drv_log_count(nb_log), 0);

    /* the same through stream 0, with the per-thread stream as the blocking one */
    int *pt_gate = drv_gate_new();
    CU_OK(drv_launch_gate(CU_STREAM_PER_THREAD, pt_gate, log, TAG_B));
    drv_gate_open_after(pt_gate, 50);
    CU_OK(cuStreamSynchronize(NULL));
    drv_assert_log(log, 2, TAG_A, TAG_B);
    assert_int_equal(drv_log_count(nb_log), 0);
    drv_gate_open(nb_gate);
    CU_OK(cuCtxSynchronize());
    drv_assert_log(nb_log, 1, TAG_B);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "child-delay") == 0)
            return child_delay();
        return 2;
    }
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_launch_returns_before_the_kernel_has_run),
        DRV_TEST(with_a_worker_delay_a_missing_synchronize_reads_the_old_value),
        DRV_TEST(legacy_stream_work_waits_for_earlier_blocking_stream_work),
        DRV_TEST(blocking_stream_work_waits_for_earlier_legacy_stream_work),
        DRV_TEST(non_blocking_streams_and_the_legacy_stream_do_not_wait_for_each_other),
        DRV_TEST(blocking_streams_do_not_wait_for_each_other),
        DRV_TEST(the_per_thread_stream_is_a_blocking_stream),
        DRV_TEST(a_zero_stream_in_a_ptsz_entry_point_is_the_per_thread_stream),
        DRV_TEST(each_thread_has_its_own_per_thread_stream),
        DRV_TEST(a_stream_waits_for_an_event_recorded_in_another),
        DRV_TEST(cuCtxSynchronize_waits_for_every_stream),
        DRV_TEST(synchronizing_the_legacy_stream_waits_for_earlier_blocking_stream_work),
        DRV_TEST(a_host_function_runs_in_stream_order),
        DRV_TEST(a_sync_copy_from_pageable_memory_lets_the_buffer_be_reused_at_once),
        DRV_TEST(an_async_copy_from_pinned_memory_reads_the_buffer_when_it_runs),
        DRV_TEST(a_sync_copy_to_the_host_is_complete_when_it_returns),
        DRV_TEST(a_sync_device_to_device_copy_does_not_block_but_is_ordered_on_the_legacy_stream),
        DRV_TEST(a_sync_memset_does_not_block_but_is_ordered_on_the_legacy_stream),
        DRV_TEST(ptds_sync_variants_run_on_the_per_thread_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
