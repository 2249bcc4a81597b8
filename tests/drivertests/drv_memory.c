/* drv_memory.c - host memory the device reads and writes in stream order, and
 * the entry points programs use inside loops beyond plain copies: pinned
 * memory read and written when an async copy runs (not at the call),
 * registered memory (cuMemHostRegister), 2-D copies and memsets, and the
 * stream memory operations (cuStreamWriteValue / cuStreamWaitValue).
 *
 * "Has not run yet" is shown with a gate kernel holding its stream, as in
 * drv_streams.c: positive assertions never depend on timing. */
#include "drvtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h maps these names to their newest ABI; the tests call the older
 * ABIs by their exported names too. */
#undef cuMemHostRegister
#undef cuStreamWriteValue32
#undef cuStreamWaitValue32
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult CUDAAPI cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                      size_t Height);
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                        size_t Height, CUstream hStream);
CUresult CUDAAPI cuStreamWaitValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                             unsigned int flags);

#define TAG_A 1u
#define TAG_B 2u

static int *page_buf(size_t bytes)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 4096, bytes), 0);
    memset(p, 0, bytes);
    return p;
}

/* ---- pinned memory is read and written when the copy runs ---------------- */

/* A device-to-host copy into pinned memory followed, on the same stream, by
 * a host-to-device copy from it (a bounce buffer) carries the device's bytes:
 * the second copy reads the buffer when it runs, after the first wrote it. A
 * driver that read pinned sources at the call would deliver the stale bytes,
 * and one that wrote pinned destinations at the call would change the buffer
 * before the stream got there. */
static void a_bounce_through_pinned_memory_on_one_stream_carries_the_device_bytes(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    int *pin = drv_pinned(16 * sizeof(int));
    CUdeviceptr a = drv_dalloc(16 * sizeof(int)), b = drv_dalloc(16 * sizeof(int));
    int init[16];
    for (int i = 0; i < 16; i++) {
        init[i] = 100 + i;
        pin[i] = -1;
    }
    CU_OK(cuMemcpyHtoD(a, init, sizeof init));
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuMemcpyDtoHAsync(pin, a, sizeof init, s));
    CU_OK(cuMemcpyHtoDAsync(b, pin, sizeof init, s));
    drv_sleep_ms(10);
    for (int i = 0; i < 16; i++)
        assert_int_equal(pin[i], -1); /* not written before the copy runs */
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    int back[16];
    CU_OK(cuMemcpyDtoH(back, b, sizeof back));
    for (int i = 0; i < 16; i++)
        assert_int_equal(back[i], 100 + i);
}

static void fill_pinned(void *arg)
{
    int *p = arg;
    for (int i = 0; i < 16; i++)
        p[i] = 500 + i;
}

/* A host function that fills pinned memory, then a host-to-device copy from
 * it on the same stream: the copy sees what the function wrote. */
static void a_host_function_filling_pinned_memory_is_seen_by_a_later_async_copy(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_DEFAULT);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    int *pin = drv_pinned(16 * sizeof(int));
    CUdeviceptr d = drv_dalloc(16 * sizeof(int));
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuLaunchHostFunc(s, fill_pinned, pin));
    CU_OK(cuMemcpyHtoDAsync(d, pin, 16 * sizeof(int), s));
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    int back[16];
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    for (int i = 0; i < 16; i++)
        assert_int_equal(back[i], 500 + i);
}

/* ---- registered memory ----------------------------------------------------- */

/* Registered memory is pinned: cuPointerGetAttribute says HOST (interior
 * pointers too) and an async copy from it reads it when it runs; once
 * unregistered it is pageable again (no memory type; async copies stage it
 * at the call). */
static void registered_memory_is_pinned_until_it_is_unregistered(void **state)
{
    (void)state;
    drv_init();
    int *buf = page_buf(8192);
    unsigned t = 0;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(buf)));
    CU_OK(cuMemHostRegister_v2(buf, 8192, 0));
    CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(buf + 100)));
    assert_int_equal(t, CU_MEMORYTYPE_HOST);

    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(sizeof(int));
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    buf[0] = 5;
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuMemcpyHtoDAsync(d, buf, sizeof(int), s));
    buf[0] = 7;
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(d), 7);

    CU_OK(cuMemHostUnregister(buf));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, drv_dp(buf)));
    int *gate2 = drv_gate_new();
    buf[0] = 8;
    CU_OK(drv_launch_gate(s, gate2, log, TAG_B));
    CU_OK(cuMemcpyHtoDAsync(d, buf, sizeof(int), s));
    buf[0] = 9;
    drv_gate_open(gate2);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(d), 8);
    free(buf);
}

/* A range that overlaps a registered one, or memory the driver allocated
 * pinned, is already registered; device memory cannot be registered. */
static void registering_registered_or_pinned_memory_fails_with_already_registered(void **state)
{
    (void)state;
    drv_init();
    char *buf = (char *)page_buf(3 * 4096);
    CU_OK(cuMemHostRegister_v2(buf + 4096, 4096, 0));
    CU_IS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister_v2(buf + 4096, 4096, 0));
    CU_IS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister_v2(buf, 3 * 4096, 0));
    CU_IS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister_v2(buf + 8000, 100, 0));
    CU_OK(cuMemHostRegister_v2(buf, 4096, 0)); /* adjacent, not overlapping */
    void *pin = drv_pinned(256);
    CU_IS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister_v2(pin, 256, 0));
    CUdeviceptr d = drv_dalloc(256);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister_v2((void *)(uintptr_t)d, 256, 0));
    CU_OK(cuMemHostUnregister(buf));
    CU_OK(cuMemHostUnregister(buf + 4096));
    free(buf);
}

/* Only the base of a registered range unregisters; pageable memory, an
 * interior pointer, driver-allocated pinned memory and a range already
 * unregistered are NOT_REGISTERED; cuMemFreeHost refuses registered memory. */
static void unregistering_what_was_not_registered_fails_with_not_registered(void **state)
{
    (void)state;
    drv_init();
    char *buf = (char *)page_buf(8192);
    CU_IS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf));
    CU_OK(cuMemHostRegister_v2(buf, 8192, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    CU_IS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf + 64));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(buf));
    void *pin = drv_pinned(64);
    CU_IS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(pin));
    CU_OK(cuMemHostUnregister(buf));
    CU_IS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf));
    free(buf);
}

/* Flags and arguments: NULL or empty ranges and unknown flags are
 * INVALID_VALUE; READ_ONLY (the device does not report support) and
 * IOMEMORY are NOT_SUPPORTED; the 4.0 ABI (cuMemHostRegister) wants page
 * alignment, the 6.5 one (_v2) does not. */
static void host_register_checks_its_flags_and_the_v1_abi_wants_pages(void **state)
{
    (void)state;
    drv_init();
    char *buf = (char *)page_buf(8192);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister_v2(NULL, 64, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister_v2(buf, 0, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister_v2(buf, 64, 0x10));
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuMemHostRegister_v2(buf, 64, CU_MEMHOSTREGISTER_READ_ONLY));
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuMemHostRegister_v2(buf, 64, CU_MEMHOSTREGISTER_IOMEMORY));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(buf + 64, 4096, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemHostRegister(buf, 100, 0));
    CU_OK(cuMemHostRegister(buf, 4096, 0));
    CU_OK(cuMemHostUnregister(buf));
    CU_OK(cuMemHostRegister_v2(buf + 64, 100, 0));
    CU_OK(cuMemHostUnregister(buf + 64));
    free(buf);
}

/* ---- 2-D copies ------------------------------------------------------------ */

static CUDA_MEMCPY2D htod2d(CUdeviceptr d, size_t dpitch, const void *h, size_t spitch, size_t w, size_t rows)
{
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = h;
    c.srcPitch = spitch;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = dpitch;
    c.WidthInBytes = w;
    c.Height = rows;
    return c;
}

/* A 2-D copy moves each row to its place at the destination pitch and
 * leaves the padding between rows alone, in every ABI and direction. */
static void a_2d_copy_moves_each_row_and_leaves_the_padding(void **state)
{
    (void)state;
    drv_init();
    unsigned char host[4][10], back[4 * 16];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 10; c++)
            host[r][c] = (unsigned char)(r * 16 + c);
    CUdeviceptr d = drv_dalloc(4 * 16);
    CU_OK(cuMemsetD8(d, 0xEE, 4 * 16));
    CUDA_MEMCPY2D c = htod2d(d, 16, host, 10, 8, 4);
    c.srcXInBytes = 2; /* columns 2..9 of each host row */
    CU_OK(cuMemcpy2D(&c));
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    for (int r = 0; r < 4; r++)
        for (int x = 0; x < 16; x++)
            assert_int_equal(back[r * 16 + x], x < 8 ? (unsigned char)(r * 16 + x + 2) : 0xEE);

    /* device to host through the unified type, into rows 1..2 of a host tile */
    unsigned char tile[4][8];
    memset(tile, 0, sizeof tile);
    CUDA_MEMCPY2D u;
    memset(&u, 0, sizeof u);
    u.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    u.srcDevice = d;
    u.srcPitch = 16;
    u.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    u.dstDevice = drv_dp(tile);
    u.dstY = 1;
    u.dstPitch = 8;
    u.WidthInBytes = 8;
    u.Height = 2;
    CU_OK(cuMemcpy2DUnaligned(&u));
    for (int x = 0; x < 8; x++) {
        assert_int_equal(tile[0][x], 0);
        assert_int_equal(tile[1][x], (unsigned char)(x + 2));
        assert_int_equal(tile[2][x], (unsigned char)(16 + x + 2));
        assert_int_equal(tile[3][x], 0);
    }
}

/* CUDA_MEMCPY2D validation: a used pitch smaller than X + width, a pitch
 * above MAX_PITCH, a device footprint past its allocation, an array side
 * (no arrays exist here) and an unknown memory type are INVALID_VALUE. */
static void a_2d_copy_with_a_bad_pitch_or_footprint_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    unsigned char host[64];
    memset(host, 1, sizeof host);
    CUdeviceptr d = drv_dalloc(64);
    int maxp = 0;
    CU_OK(cuDeviceGetAttribute(&maxp, CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0));
    assert_int_equal(maxp, 2147483647);
    CUDA_MEMCPY2D c = htod2d(d, 16, host, 8, 16, 4); /* source pitch 8 < width 16 */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = htod2d(d, 16, host, 16, 12, 4);
    c.dstXInBytes = 8; /* 8 + 12 > 16 */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = htod2d(d, 16, host, 16, 16, 5); /* 5 rows of 16: 80 bytes > 64 */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = htod2d(d, (size_t)maxp + 1, host, 16, 16, 2);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = htod2d(d, 16, host, 16, 16, 4);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c.dstMemoryType = (CUmemorytype)9;
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    c = htod2d(d, 16, host, 16, 16, 4);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = (const void *)(uintptr_t)d; /* device memory named as host */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(NULL));
    c = htod2d(d, 16, host, 16, 16, 4);
    CU_OK(cuMemcpy2D(&c));
}

/* An async 2-D copy from pageable memory takes the rows at the call; from
 * pinned memory it reads them when it runs. */
static void an_async_2d_copy_stages_pageable_rows_and_reads_pinned_rows_when_it_runs(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    CUdeviceptr d = drv_dalloc(2 * 16);
    unsigned char *page = malloc(2 * 8);
    unsigned char *pin = drv_pinned(2 * 8);
    assert_non_null(page);
    memset(page, 3, 16);
    memset(pin, 3, 16);

    int *gate = drv_gate_new();
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CUDA_MEMCPY2D c = htod2d(d, 16, page, 8, 8, 2);
    CU_OK(cuMemcpy2DAsync(&c, s));
    memset(page, 4, 16);
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    unsigned char back[32];
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    assert_int_equal(back[0], 3);
    assert_int_equal(back[16 + 7], 3);

    int *gate2 = drv_gate_new();
    CU_OK(drv_launch_gate(s, gate2, log, TAG_B));
    c = htod2d(d, 16, pin, 8, 8, 2);
    CU_OK(cuMemcpy2DAsync_v2(&c, s));
    memset(pin, 5, 16);
    drv_gate_open(gate2);
    CU_OK(cuStreamSynchronize(s));
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    assert_int_equal(back[0], 5);
    assert_int_equal(back[16 + 7], 5);
    free(page);
}

/* Captured, an async 2-D copy and an async 2-D memset are one MEMCPY and one
 * MEMSET node, and the graph does both; a synchronous 2-D copy involving the
 * host cannot be captured (900, the capture invalidated). */
static void in_capture_2d_copies_and_memsets_are_one_node_each(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(4 * 16);
    unsigned char *pin = drv_pinned(4 * 8);
    memset(pin, 7, 32);
    CU_OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CU_OK(cuMemsetD2D8Async(d, 16, 0x11, 16, 4, s));
    CUDA_MEMCPY2D c = htod2d(d, 16, pin, 8, 8, 4);
    CU_OK(cuMemcpy2DAsync(&c, s));
    CUgraph g = NULL;
    CU_OK(cuStreamEndCapture(s, &g));
    drv_track_graph(g);
    CUgraphNode nodes[4];
    size_t n = 4;
    CU_OK(cuGraphGetNodes(g, nodes, &n));
    assert_int_equal(n, 2);
    CUgraphNodeType t0, t1;
    CU_OK(cuGraphNodeGetType(nodes[0], &t0));
    CU_OK(cuGraphNodeGetType(nodes[1], &t1));
    assert_int_equal(t0, CU_GRAPH_NODE_TYPE_MEMSET);
    assert_int_equal(t1, CU_GRAPH_NODE_TYPE_MEMCPY);
    CUgraphExec x = NULL;
    CU_OK(cuGraphInstantiateWithFlags(&x, g, 0));
    drv_track_exec(x);
    memset(pin, 9, 32); /* the graph reads the pinned rows when it runs */
    CU_OK(cuGraphLaunch(x, s));
    CU_OK(cuStreamSynchronize(s));
    unsigned char back[64];
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    for (int r = 0; r < 4; r++)
        for (int x2 = 0; x2 < 16; x2++)
            assert_int_equal(back[r * 16 + x2], x2 < 8 ? 9 : 0x11);

    /* the _ptds form is synchronous on the per-thread stream: capture that */
    CU_OK(cuStreamBeginCapture_v2(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CU_IS(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuMemcpy2D_v2_ptds(&c));
    g = NULL;
    CU_IS(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(CU_STREAM_PER_THREAD, &g));
    assert_null(g);
}

/* ---- 2-D memsets ------------------------------------------------------------ */

/* A 2-D memset sets width elements of each row and leaves the padding; the
 * element sizes 8, 16 and 32 each write their value. */
static void a_2d_memset_sets_each_row_and_leaves_the_padding(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(3 * 32);
    unsigned char back[96];
    CU_OK(cuMemsetD8(d, 0xEE, 96));
    CU_OK(cuMemsetD2D32(d, 32, 0x01020304u, 4, 3)); /* 16 of each 32 bytes */
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    for (int r = 0; r < 3; r++)
        for (int x = 0; x < 32; x++) {
            static const unsigned char le[4] = {4, 3, 2, 1};
            assert_int_equal(back[r * 32 + x], x < 16 ? le[x % 4] : 0xEE);
        }
    CU_OK(cuMemsetD2D16_v2(d, 32, 0xABCD, 2, 3));
    CU_OK(cuMemsetD2D8_v2_ptds(d + 31, 32, 0x77, 1, 2));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(back, d, sizeof back));
    assert_int_equal(back[0], 0xCD);
    assert_int_equal(back[1], 0xAB);
    assert_int_equal(back[4], 4);
    assert_int_equal(back[31], 0x77);
    assert_int_equal(back[63], 0x77);
    assert_int_equal(back[95], 0xEE);
}

/* 2-D memset validation: a used pitch below a row, a misaligned pointer or
 * pitch, and a footprint past the allocation are INVALID_VALUE; with one row
 * the pitch is unused (documented), so any pitch is accepted. */
static void a_2d_memset_with_a_bad_pitch_or_footprint_fails_with_invalid_value(void **state)
{
    (void)state;
    drv_init();
    CUdeviceptr d = drv_dalloc(64);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(d, 8, 1, 4, 2));     /* 16-byte rows, pitch 8 */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D32(d + 2, 16, 1, 2, 2)); /* pointer not 4-aligned */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D16(d, 17, 1, 2, 2));     /* pitch not 2-aligned */
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuMemsetD2D8(d, 16, 1, 16, 5));     /* 80 bytes > 64 */
    CU_OK(cuMemsetD2D8(d, 0, 1, 64, 1));
    CU_OK(cuMemsetD2D8Async_ptsz(d, 16, 2, 16, 4, NULL));
    CU_OK(cuCtxSynchronize());
    assert_int_equal(drv_read_int(d + 60), 0x02020202);
}

/* ---- stream memory operations ----------------------------------------------- */

/* cuStreamWriteValue32 writes when the stream gets there, not at the call. */
static void a_write_value_lands_in_stream_order(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    int *gate = drv_gate_new();
    unsigned *log = drv_log_new();
    unsigned *flag = drv_pinned(sizeof(unsigned));
    CUdeviceptr d = drv_dalloc(8);
    CU_OK(drv_launch_gate(s, gate, log, TAG_A));
    CU_OK(cuStreamWriteValue32_v2(s, drv_dp(flag), 0xC0FFEEu, 0));
    CU_OK(cuStreamWriteValue64_v2(s, d, 0x1122334455667788ull, 0));
    drv_sleep_ms(10);
    assert_int_equal(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 0);
    drv_gate_open(gate);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(*flag, 0xC0FFEEu);
    unsigned long long v = 0;
    CU_OK(cuMemcpyDtoH(&v, d, sizeof v));
    assert_true(v == 0x1122334455667788ull);
}

/* cuStreamWaitValue32 holds its stream until the condition holds: here the
 * host writes the value; then a second wait is released by another stream's
 * cuStreamWriteValue32. */
static void a_wait_value_holds_its_stream_until_the_value_is_written(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING), t = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *log = drv_log_new();
    unsigned *flag = drv_pinned(sizeof(unsigned));
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(flag), 1, CU_STREAM_WAIT_VALUE_EQ));
    CU_OK(drv_launch_record(s, log, TAG_A));
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 0);
    CU_IS(CUDA_ERROR_NOT_READY, cuStreamQuery(s));
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_A);

    CU_OK(cuStreamWaitValue32(s, drv_dp(flag), 4, CU_STREAM_WAIT_VALUE_AND));
    CU_OK(drv_launch_record(s, log, TAG_B));
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 1);
    CU_OK(cuStreamWriteValue32(t, drv_dp(flag), 6, 0));
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 2, TAG_A, TAG_B);
}

/* The wait conditions as cuda.h defines them: GEQ is cyclic (a signed
 * difference), EQ, AND (any common bit), NOR (a bit set in neither). Each
 * satisfied wait lets the stream through at once. */
static void wait_value_conditions_follow_the_header(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    unsigned *m = drv_pinned(sizeof(unsigned));
    *m = 3;
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(m), 0xFFFFFFF0u, CU_STREAM_WAIT_VALUE_GEQ)); /* 3 - (-16) >= 0 */
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(m), 3, CU_STREAM_WAIT_VALUE_EQ));
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(m), 2, CU_STREAM_WAIT_VALUE_AND));
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(m), 0xFFFFFFF0u, CU_STREAM_WAIT_VALUE_NOR)); /* bit 2 in neither */
    CU_OK(cuStreamSynchronize(s));
    unsigned *log = drv_log_new();
    CU_OK(cuStreamWaitValue32_v2(s, drv_dp(m), 4, CU_STREAM_WAIT_VALUE_GEQ)); /* 3 - 4 < 0 */
    CU_OK(drv_launch_record(s, log, TAG_A));
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 0);
    __atomic_store_n(m, 0x80000005u, __ATOMIC_RELEASE); /* above 4 unsigned, but 0x80000001 < 0: held */
    drv_sleep_ms(20);
    assert_int_equal(drv_log_count(log), 0);
    __atomic_store_n(m, 4, __ATOMIC_RELEASE);
    CU_OK(cuStreamSynchronize(s));
    drv_assert_log(log, 1, TAG_A);
}

/* Arguments: a misaligned address, pageable memory and unknown flags are
 * INVALID_VALUE; NO_MEMORY_BARRIER in the v2 API and the FLUSH wait (the
 * device reports no remote-write flush) are NOT_SUPPORTED. */
static void stream_memory_operations_check_their_arguments(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(16);
    unsigned *heap = malloc(16);
    assert_non_null(heap);
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32_v2(s, d + 2, 1, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue64_v2(s, d + 4, 1, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32_v2(s, drv_dp(heap), 1, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32_v2(s, d + 16, 1, 0));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWriteValue32_v2(s, d, 1, 2));
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuStreamWriteValue32_v2(s, d, 1, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
    CU_OK(cuStreamWriteValue32(s, d, 1, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
    CU_IS(CUDA_ERROR_INVALID_VALUE, cuStreamWaitValue32_v2(s, d, 1, 4));
    CU_IS(CUDA_ERROR_NOT_SUPPORTED, cuStreamWaitValue32_v2(s, d, 1, CU_STREAM_WAIT_VALUE_FLUSH));
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(drv_read_int(d), 1);
    free(heap);
}

/* In a capturing stream a stream memory operation is refused with 900 and
 * invalidates the capture (strict: unverified whether the real driver
 * captures it as a batch mem-op node). */
static void a_stream_memory_operation_in_capture_fails_and_invalidates_it(void **state)
{
    (void)state;
    drv_init();
    CUstream s = drv_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = drv_dalloc(16);
    CU_OK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CU_IS(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cuStreamWriteValue32_v2(s, d, 1, 0));
    CUgraph g = NULL;
    CU_IS(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cuStreamEndCapture(s, &g));
    assert_null(g);
}

/* cuGetProcAddress gives the ABI each version asked for: v1 before 11.7,
 * _v2 from it, and the _ptsz variants with the per-thread flag. */
static void the_new_entry_points_resolve_by_version_and_stream_flag(void **state)
{
    (void)state;
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CU_OK(cuGetProcAddress_v2("cuStreamWriteValue32", &p, 13000, 0, &st));
    assert_ptr_equal(p, (void *)cuStreamWriteValue32_v2);
    CU_OK(cuGetProcAddress_v2("cuStreamWriteValue32", &p, 9000, 0, &st));
    assert_ptr_equal(p, (void *)cuStreamWriteValue32);
    CU_OK(cuGetProcAddress_v2("cuStreamWaitValue32", &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    assert_ptr_equal(p, (void *)cuStreamWaitValue32_v2_ptsz);
    CU_OK(cuGetProcAddress_v2("cuMemHostRegister", &p, 13000, 0, &st));
    assert_ptr_equal(p, (void *)cuMemHostRegister_v2);
    CU_OK(cuGetProcAddress_v2("cuMemHostRegister", &p, 5000, 0, &st));
    assert_ptr_equal(p, (void *)cuMemHostRegister);
    CU_OK(cuGetProcAddress_v2("cuMemcpy2D", &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    assert_ptr_equal(p, (void *)cuMemcpy2D_v2_ptds);
    CU_OK(cuGetProcAddress_v2("cuMemsetD2D32Async", &p, 13000, 0, &st));
    assert_ptr_equal(p, (void *)cuMemsetD2D32Async);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        DRV_TEST(a_bounce_through_pinned_memory_on_one_stream_carries_the_device_bytes),
        DRV_TEST(a_host_function_filling_pinned_memory_is_seen_by_a_later_async_copy),
        DRV_TEST(registered_memory_is_pinned_until_it_is_unregistered),
        DRV_TEST(registering_registered_or_pinned_memory_fails_with_already_registered),
        DRV_TEST(unregistering_what_was_not_registered_fails_with_not_registered),
        DRV_TEST(host_register_checks_its_flags_and_the_v1_abi_wants_pages),
        DRV_TEST(a_2d_copy_moves_each_row_and_leaves_the_padding),
        DRV_TEST(a_2d_copy_with_a_bad_pitch_or_footprint_fails_with_invalid_value),
        DRV_TEST(an_async_2d_copy_stages_pageable_rows_and_reads_pinned_rows_when_it_runs),
        DRV_TEST(in_capture_2d_copies_and_memsets_are_one_node_each),
        DRV_TEST(a_2d_memset_sets_each_row_and_leaves_the_padding),
        DRV_TEST(a_2d_memset_with_a_bad_pitch_or_footprint_fails_with_invalid_value),
        DRV_TEST(a_write_value_lands_in_stream_order),
        DRV_TEST(a_wait_value_holds_its_stream_until_the_value_is_written),
        DRV_TEST(wait_value_conditions_follow_the_header),
        DRV_TEST(stream_memory_operations_check_their_arguments),
        DRV_TEST(a_stream_memory_operation_in_capture_fails_and_invalidates_it),
        DRV_TEST(the_new_entry_points_resolve_by_version_and_stream_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
