/* drvtest.h - what the CPU-driver tests share: checked-call macros, the
 * primary context, the test kernels, gates (a kernel that holds its stream
 * until the host opens it), order logs, cleanup between tests and re-running
 * the test binary as a child process with a different environment.
 *
 * Every driver entry point the tests use is referenced weakly, so a driver
 * that lacks one still links: the tests that call it fail (cmocka reports the
 * SIGSEGV of the NULL call) and the others run. */
#ifndef DRVTEST_H
#define DRVTEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cuda.h>

#include "cpucuda.h"

/* Variants cuda.h declares only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);

#pragma weak cuInit
#pragma weak cuDriverGetVersion
#pragma weak cuDeviceGet
#pragma weak cuDeviceGetCount
#pragma weak cuDevicePrimaryCtxRetain
#pragma weak cuDevicePrimaryCtxRelease_v2
#pragma weak cuCtxCreate_v4
#pragma weak cuCtxDestroy_v2
#pragma weak cuCtxPushCurrent_v2
#pragma weak cuCtxPopCurrent_v2
#pragma weak cuCtxSetCurrent
#pragma weak cuCtxGetCurrent
#pragma weak cuCtxSynchronize
#pragma weak cuCtxSynchronize_v2
#pragma weak cuMemAlloc_v2
#pragma weak cuMemFree_v2
#pragma weak cuMemAllocHost_v2
#pragma weak cuMemHostAlloc
#pragma weak cuMemFreeHost
#pragma weak cuMemcpyHtoD_v2
#pragma weak cuMemcpyDtoH_v2
#pragma weak cuMemcpyDtoD_v2
#pragma weak cuMemcpyHtoDAsync_v2
#pragma weak cuMemcpyDtoHAsync_v2
#pragma weak cuMemcpyDtoDAsync_v2
#pragma weak cuMemsetD32_v2
#pragma weak cuMemsetD8_v2
#pragma weak cuMemsetD32Async
#pragma weak cuMemcpyDtoH_v2_ptds
#pragma weak cuMemsetD32_v2_ptds
#pragma weak cuMemAllocAsync
#pragma weak cuMemFreeAsync
#pragma weak cuPointerGetAttribute
#pragma weak cuStreamCreate
#pragma weak cuStreamDestroy_v2
#pragma weak cuStreamSynchronize
#pragma weak cuStreamSynchronize_ptsz
#pragma weak cuStreamQuery
#pragma weak cuStreamQuery_ptsz
#pragma weak cuStreamWaitEvent
#pragma weak cuEventCreate
#pragma weak cuEventDestroy_v2
#pragma weak cuEventRecord
#pragma weak cuEventQuery
#pragma weak cuEventSynchronize
#pragma weak cuLaunchKernel
#pragma weak cuLaunchKernel_ptsz
#pragma weak cuLaunchKernelEx
#pragma weak cuLaunchHostFunc
#pragma weak cuModuleLoad
#pragma weak cuModuleUnload
#pragma weak cuModuleGetFunction
#pragma weak cuFuncGetParamInfo
#pragma weak cuFuncGetName
#pragma weak cuLibraryLoadFromFile
#pragma weak cuLibraryUnload
#pragma weak cuLibraryGetKernel
#pragma weak cuKernelGetFunction
#pragma weak cuKernelGetParamInfo
#pragma weak cuStreamBeginCapture_v2
#pragma weak cuStreamEndCapture
#pragma weak cuStreamIsCapturing
#pragma weak cuStreamGetCaptureInfo_v3
#pragma weak cuThreadExchangeStreamCaptureMode
#pragma weak cuGraphGetNodes
#pragma weak cuGraphNodeGetType
#pragma weak cuGraphInstantiateWithFlags
#pragma weak cuGraphLaunch
#pragma weak cuGraphExecDestroy
#pragma weak cuGraphDestroy
#pragma weak cuGraphKernelNodeGetParams_v2
#pragma weak cuGraphExecKernelNodeSetParams_v2
#pragma weak cuGraphExecMemcpyNodeSetParams
#pragma weak cuGraphNodeSetEnabled
#pragma weak cuGraphNodeGetEnabled
#pragma weak cuGraphExecUpdate_v2
#pragma weak cuGetProcAddress_v2
#pragma weak cuGetExportTable
#pragma weak cuGetErrorName
#pragma weak cuGetErrorString
#pragma weak cpucuda_counter
#pragma weak cpucuda_faults_set
#pragma weak cpucuda_faults_fired
#pragma weak cpucuda_counters_reset

/* Order logs, as drvkernels.c writes them: [0] = entries, [1..] = tags. */
#define DRV_LOG_CAP 64u
#define DRV_GATE_TIMEOUT_FLAG 0x80000000u

/* The error's name for messages ("CUDA_ERROR_INVALID_VALUE"), never NULL. */
const char *drv_err(CUresult r);

/* The call must return CUDA_SUCCESS. */
#define CU_OK(call)                                                                    \
    do {                                                                               \
        CUresult drv_r_ = (call);                                                      \
        if (drv_r_ != CUDA_SUCCESS)                                                    \
            fail_msg("%s returned %d %s", #call, (int)drv_r_, drv_err(drv_r_));        \
    } while (0)

/* The call must return exactly `expected`. */
#define CU_IS(expected, call)                                                          \
    do {                                                                               \
        CUresult drv_r_ = (call);                                                      \
        CUresult drv_e_ = (CUresult)(expected);                                        \
        if (drv_r_ != drv_e_)                                                          \
            fail_msg("%s returned %d %s, expected %d %s", #call, (int)drv_r_,          \
                     drv_err(drv_r_), (int)drv_e_, drv_err(drv_e_));                    \
    } while (0)

extern CUdevice drv_dev;
extern CUcontext drv_ctx;

/* cuInit, then the primary context made current on this thread (idempotent). */
void drv_init(void);
/* Makes the primary context current on a helper thread; its CUresult. */
CUresult drv_thread_ctx(void);

/* A kernel of drvkernels.c by name (the module is loaded once). */
CUfunction drv_fn(const char *name);
CUmodule drv_module(void);

/* Resources freed by drv_teardown (the per-test teardown). */
void *drv_pinned(size_t bytes);          /* cuMemAllocHost, zeroed */
CUdeviceptr drv_dalloc(size_t bytes);    /* cuMemAlloc, zeroed */
CUstream drv_stream(unsigned flags);     /* cuStreamCreate */
CUevent drv_event(void);                 /* cuEventCreate(CU_EVENT_DEFAULT) */
unsigned *drv_log_new(void);             /* pinned order log */
int *drv_gate_new(void);                 /* pinned gate, closed */
void drv_track_graph(CUgraph g);
void drv_track_exec(CUgraphExec e);

/* A pinned pointer as the device sees it (UVA: the same address). */
static inline CUdeviceptr drv_dp(const void *p) { return (CUdeviceptr)(uintptr_t)p; }

void drv_gate_open(int *gate);
/* Opens the gate from another thread after `ms` milliseconds. */
void drv_gate_open_after(int *gate, unsigned ms);

/* Launches on `s` (1 block of 1 thread unless said). */
CUresult drv_launch_record(CUstream s, unsigned *log, unsigned tag);
CUresult drv_launch_gate(CUstream s, int *gate, unsigned *log, unsigned tag);
CUresult drv_launch_set(CUstream s, CUdeviceptr p, int v);
CUresult drv_launch_add(CUstream s, CUdeviceptr p, int v, unsigned n);

/* Entries in a log so far (read with acquire). */
unsigned drv_log_count(const unsigned *log);
/* The log must hold exactly the n tags given, in order. */
void drv_assert_log(const unsigned *log, unsigned n, ...);

/* Reads one int of device memory with a synchronous copy. */
int drv_read_int(CUdeviceptr p);

/* A counter of the driver (0 where cpucuda_counter is missing: then fails). */
unsigned long long drv_counter(const char *name);

void drv_sleep_ms(unsigned ms);

/* Runs `fn(arg)` on a new thread and waits for it. */
void drv_in_thread(void *(*fn)(void *), void *arg);

/* Re-runs this test binary as `<self> mode` with the extra environment
 * entries ("K=V", NULL-terminated); returns its exit status, 128+signal when
 * killed, -1 when it could not be started. */
int drv_run_self(const char *mode, const char *const *env);

/* Per-test teardown: opens every gate, ends leftover captures, resets this
 * thread's capture mode, synchronizes and frees what the test allocated. */
int drv_teardown(void **state);

#define DRV_TEST(f) cmocka_unit_test_teardown(f, drv_teardown)

#endif
