/* The one list of driver entry points reprise knows.
 *
 * RP_ENTRIES lists the entry points reprise interposes. Each line
 * X(name, params, args, role) names an exported driver symbol exactly as
 * libcuda.so.1 (13.0) exports it, with the prototype cuda.h gives that symbol
 * when __CUDA_API_VERSION_INTERNAL is defined (old unversioned names keep
 * their v1 signatures), the argument names to forward, and what the entry
 * means to the capture engine, as a triple (KIND, STREAM_ARG, N):
 *   FWD             forwarded as it is (lookups, capture-status queries)
 *   GLOBAL          a global boundary: everything deferred, in every
 *                   context, is resolved first (the default: any call the
 *                   engine does not understand)
 *   STREAM          a stream-scoped boundary on argument STREAM_ARG, a
 *                   _ptsz variant when N is 1: that stream's work, and the
 *                   work of the streams implicitly ordered with it, first
 *   CAPTURE         a call the engine records and may defer (hooks.c has a
 *                   hand-written hook for each)
 *   STREAM_DESTROY  the stream's record goes with it
 *   CTX_SYNC        a global boundary that also waits out capture windows
 *   BEGIN_CAPTURE, END_CAPTURE  the program's own stream capture
 *   TEARDOWN        resolves and forgets every context's graphs and streams
 *                   (N = 1: a context may die with it)
 *   NOTE_KERNEL     forwarded, and the CUkernel it returns remembered
 *   QUERY           cuStreamQuery (hooks.c): a stream-scoped boundary, and a
 *                   side stream of a fork/join replay whose only pending
 *                   work is its wait for that replay's graph, now done,
 *                   answers idle (as it would have eagerly)
 *   EVENT           an event's creation, destruction or query (event.c):
 *                   which events can be recorded and waited on inside a
 *                   sequence, what is deferred of one that goes, and what
 *                   a query of one answers without a boundary
 * RP_HELPERS lists, in the same form (role HELPER), the entry points the
 * engine calls itself without interposing them; N is 1 for one the engine
 * can do without (a driver older than the entry: what needs it is not done).
 *
 * Generated from the two lists: the driver table (shim.h, both lists), the
 * exported wrappers (interpose.c), the dlsym and cuGetProcAddress routing
 * (route.c), the per-entry call counters (stats.c), the linker version
 * script (exports.map.c), all from RP_ENTRIES; the engine's hooks and their
 * installation (hooks.c) from the roles.
 *
 * The file has no include guard and no includes on purpose: the version
 * script is generated from it by the preprocessor alone.  Adding an entry is
 * one line here; a wrong signature fails to compile in interpose.c, which
 * includes cuda.h and defines every wrapper with the listed prototype. */

/* Signatures shared by several variants of one family. */
#define RP_SIG_LAUNCH_KERNEL                                                    \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,                \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,     \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,     \
     void **kernelParams, void **extra)
#define RP_ARGS_LAUNCH_KERNEL                                                   \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,          \
     sharedMemBytes, hStream, kernelParams, extra)
#define RP_SIG_LAUNCH_COOP                                                      \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY,                \
     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,     \
     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,     \
     void **kernelParams)
#define RP_ARGS_LAUNCH_COOP                                                     \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,          \
     sharedMemBytes, hStream, kernelParams)
#define RP_SIG_CAPTURE_INFO_V2                                                  \
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out,                \
     cuuint64_t *id_out, CUgraph *graph_out,                                    \
     const CUgraphNode **dependencies_out, size_t *numDependencies_out)
#define RP_ARGS_CAPTURE_INFO_V2                                                 \
    (hStream, captureStatus_out, id_out, graph_out, dependencies_out,           \
     numDependencies_out)
#define RP_SIG_CAPTURE_INFO_V3                                                  \
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out,                \
     cuuint64_t *id_out, CUgraph *graph_out,                                    \
     const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,\
     size_t *numDependencies_out)
#define RP_ARGS_CAPTURE_INFO_V3                                                 \
    (hStream, captureStatus_out, id_out, graph_out, dependencies_out,           \
     edgeData_out, numDependencies_out)
#define RP_SIG_CAPTURE_TO_GRAPH                                                 \
    (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,         \
     const CUgraphEdgeData *dependencyData, size_t numDependencies,             \
     CUstreamCaptureMode mode)
#define RP_ARGS_CAPTURE_TO_GRAPH                                                \
    (hStream, hGraph, dependencies, dependencyData, numDependencies, mode)
#define RP_SIG_PEER                                                             \
    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,        \
     CUcontext srcContext, size_t ByteCount)
#define RP_SIG_PEER_ASYNC                                                       \
    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,        \
     CUcontext srcContext, size_t ByteCount, CUstream hStream)
#define RP_ARGS_PEER (dstDevice, dstContext, srcDevice, srcContext, ByteCount)
#define RP_ARGS_PEER_ASYNC                                                      \
    (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream)

#define RP_ENTRIES(X) \
    /* initialisation and the runtime's resolver */ \
    X(cuInit, (unsigned int Flags), (Flags), (FWD, _, 0)) \
    X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags), \
      (symbol, pfn, cudaVersion, flags), (FWD, _, 0)) \
    X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, \
                            CUdriverProcAddressQueryResult *symbolStatus), \
      (symbol, pfn, cudaVersion, flags, symbolStatus), (FWD, _, 0)) \
    /* launches */ \
    X(cuLaunchKernel, RP_SIG_LAUNCH_KERNEL, RP_ARGS_LAUNCH_KERNEL, (CAPTURE, _, 0)) \
    X(cuLaunchKernel_ptsz, RP_SIG_LAUNCH_KERNEL, RP_ARGS_LAUNCH_KERNEL, (CAPTURE, _, 0)) \
    X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, \
                         void **extra), (config, f, kernelParams, extra), (CAPTURE, _, 0)) \
    X(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, \
                              void **extra), (config, f, kernelParams, extra), (CAPTURE, _, 0)) \
    X(cuLaunchCooperativeKernel, RP_SIG_LAUNCH_COOP, RP_ARGS_LAUNCH_COOP, (GLOBAL, _, 0)) \
    X(cuLaunchCooperativeKernel_ptsz, RP_SIG_LAUNCH_COOP, RP_ARGS_LAUNCH_COOP, (GLOBAL, _, 0)) \
    X(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData), (hStream, fn, userData), (STREAM, hStream, 0)) \
    X(cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData), \
      (hStream, fn, userData), (STREAM, hStream, 1)) \
    /* copies */ \
    X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), \
      (dst, src, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), \
      (dst, src, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoD, (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount), \
      (dstDevice, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), \
      (dstDevice, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount), \
      (dstDevice, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoH, (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount), \
      (dstHost, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), \
      (dstHost, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount), \
      (dstHost, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoD, (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount), \
      (dstDevice, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), \
      (dstDevice, srcDevice, ByteCount), (CAPTURE, _, 0)) \
    X(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), \
      (dstDevice, srcDevice, ByteCount), (CAPTURE, _, 0)) \
    X(cuMemcpyHtoDAsync, (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount, \
                          CUstream hStream), (dstDevice, srcHost, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, \
                             CUstream hStream), (dstDevice, srcHost, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, \
                                  CUstream hStream), (dstDevice, srcHost, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyDtoHAsync, (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount, \
                          CUstream hStream), (dstHost, srcDevice, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, \
                             CUstream hStream), (dstHost, srcDevice, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, \
                                  CUstream hStream), (dstHost, srcDevice, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyDtoDAsync, (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, \
                          unsigned int ByteCount, CUstream hStream), \
      (dstDevice, srcDevice, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, \
                             CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, \
                                  CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream), (CAPTURE, _, 0)) \
    X(cuMemcpyPeer, RP_SIG_PEER, RP_ARGS_PEER, (GLOBAL, _, 0)) \
    X(cuMemcpyPeer_ptds, RP_SIG_PEER, RP_ARGS_PEER, (GLOBAL, _, 0)) \
    X(cuMemcpyPeerAsync, RP_SIG_PEER_ASYNC, RP_ARGS_PEER_ASYNC, (GLOBAL, _, 0)) \
    X(cuMemcpyPeerAsync_ptsz, RP_SIG_PEER_ASYNC, RP_ARGS_PEER_ASYNC, (GLOBAL, _, 0)) \
    /* memsets */ \
    X(cuMemsetD8, (CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N), (dstDevice, uc, N), (GLOBAL, _, 0)) \
    X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N), (CAPTURE, _, 0)) \
    X(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N), (CAPTURE, _, 0)) \
    X(cuMemsetD16, (CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N), \
      (dstDevice, us, N), (GLOBAL, _, 0)) \
    X(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N), (CAPTURE, _, 0)) \
    X(cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N), \
      (dstDevice, us, N), (CAPTURE, _, 0)) \
    X(cuMemsetD32, (CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N), (dstDevice, ui, N), (GLOBAL, _, 0)) \
    X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N), (CAPTURE, _, 0)) \
    X(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N), (CAPTURE, _, 0)) \
    X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), \
      (dstDevice, uc, N, hStream), (CAPTURE, _, 0)) \
    X(cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), \
      (dstDevice, uc, N, hStream), (CAPTURE, _, 0)) \
    X(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), \
      (dstDevice, us, N, hStream), (CAPTURE, _, 0)) \
    X(cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, \
                              CUstream hStream), (dstDevice, us, N, hStream), (CAPTURE, _, 0)) \
    X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), \
      (dstDevice, ui, N, hStream), (CAPTURE, _, 0)) \
    X(cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), \
      (dstDevice, ui, N, hStream), (CAPTURE, _, 0)) \
    /* synchronisation and ordering */ \
    X(cuStreamSynchronize, (CUstream hStream), (hStream), (STREAM, hStream, 0)) \
    X(cuStreamSynchronize_ptsz, (CUstream hStream), (hStream), (STREAM, hStream, 1)) \
    X(cuStreamQuery, (CUstream hStream), (hStream), (QUERY, _, 0)) \
    X(cuStreamQuery_ptsz, (CUstream hStream), (hStream), (QUERY, _, 0)) \
    X(cuCtxSynchronize, (void), (), (CTX_SYNC, _, 0)) \
    X(cuCtxSynchronize_v2, (CUcontext ctx), (ctx), (CTX_SYNC, _, 0)) \
    X(cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream), (CAPTURE, _, 0)) \
    X(cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), (hEvent, hStream), (CAPTURE, _, 0)) \
    X(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags), \
      (hEvent, hStream, flags), (CAPTURE, _, 0)) \
    X(cuEventRecordWithFlags_ptsz, (CUevent hEvent, CUstream hStream, unsigned int flags), \
      (hEvent, hStream, flags), (CAPTURE, _, 0)) \
    X(cuEventCreate, (CUevent *phEvent, unsigned int Flags), (phEvent, Flags), (EVENT, _, 0)) \
    X(cuEventDestroy, (CUevent hEvent), (hEvent), (EVENT, _, 0)) \
    X(cuEventDestroy_v2, (CUevent hEvent), (hEvent), (EVENT, _, 0)) \
    X(cuEventSynchronize, (CUevent hEvent), (hEvent), (GLOBAL, _, 0)) \
    X(cuEventQuery, (CUevent hEvent), (hEvent), (EVENT, _, 0)) \
    X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags), \
      (hStream, hEvent, Flags), (CAPTURE, _, 0)) \
    X(cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags), \
      (hStream, hEvent, Flags), (CAPTURE, _, 0)) \
    /* the program's own stream capture */ \
    X(cuStreamBeginCapture, (CUstream hStream), (hStream), (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamBeginCapture_ptsz, (CUstream hStream), (hStream), (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamBeginCaptureToGraph, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH, (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamBeginCaptureToGraph_ptsz, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH, (BEGIN_CAPTURE, _, 0)) \
    X(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph), (END_CAPTURE, _, 0)) \
    X(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph), (END_CAPTURE, _, 0)) \
    X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus), \
      (hStream, captureStatus), (FWD, _, 0)) \
    X(cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus), \
      (hStream, captureStatus), (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, \
                               cuuint64_t *id_out), (hStream, captureStatus_out, id_out), (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, \
                                    cuuint64_t *id_out), (hStream, captureStatus_out, id_out), (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo_v2, RP_SIG_CAPTURE_INFO_V2, RP_ARGS_CAPTURE_INFO_V2, (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo_v2_ptsz, RP_SIG_CAPTURE_INFO_V2, RP_ARGS_CAPTURE_INFO_V2, (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo_v3, RP_SIG_CAPTURE_INFO_V3, RP_ARGS_CAPTURE_INFO_V3, (FWD, _, 0)) \
    X(cuStreamGetCaptureInfo_v3_ptsz, RP_SIG_CAPTURE_INFO_V3, RP_ARGS_CAPTURE_INFO_V3, (FWD, _, 0)) \
    /* memory */ \
    X(cuMemAlloc, (CUdeviceptr_v1 *dptr, unsigned int bytesize), (dptr, bytesize), (GLOBAL, _, 0)) \
    X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize), (GLOBAL, _, 0)) \
    X(cuMemAllocPitch, (CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes, \
                        unsigned int Height, unsigned int ElementSizeBytes), \
      (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes), (GLOBAL, _, 0)) \
    X(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height, \
                           unsigned int ElementSizeBytes), \
      (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes), (GLOBAL, _, 0)) \
    X(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags), \
      (dptr, bytesize, flags), (GLOBAL, _, 0)) \
    X(cuMemAllocHost, (void **pp, unsigned int bytesize), (pp, bytesize), (GLOBAL, _, 0)) \
    X(cuMemAllocHost_v2, (void **pp, size_t bytesize), (pp, bytesize), (GLOBAL, _, 0)) \
    X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags), (GLOBAL, _, 0)) \
    X(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), \
      (dptr, bytesize, hStream), (GLOBAL, _, 0)) \
    X(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), \
      (dptr, bytesize, hStream), (GLOBAL, _, 0)) \
    X(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, \
                                CUstream hStream), (dptr, bytesize, pool, hStream), (GLOBAL, _, 0)) \
    X(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, \
                                     CUstream hStream), (dptr, bytesize, pool, hStream), (GLOBAL, _, 0)) \
    X(cuMemFree, (CUdeviceptr_v1 dptr), (dptr), (GLOBAL, _, 0)) \
    X(cuMemFree_v2, (CUdeviceptr dptr), (dptr), (GLOBAL, _, 0)) \
    X(cuMemFreeHost, (void *p), (p), (GLOBAL, _, 0)) \
    X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), (GLOBAL, _, 0)) \
    X(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), (GLOBAL, _, 0)) \
    /* lifetimes of contexts, modules and libraries */ \
    X(cuCtxDestroy, (CUcontext ctx), (ctx), (TEARDOWN, _, 1)) \
    X(cuCtxDestroy_v2, (CUcontext ctx), (ctx), (TEARDOWN, _, 1)) \
    X(cuCtxSetCurrent, (CUcontext ctx), (ctx), (GLOBAL, _, 0)) \
    X(cuCtxPushCurrent, (CUcontext ctx), (ctx), (GLOBAL, _, 0)) \
    X(cuCtxPushCurrent_v2, (CUcontext ctx), (ctx), (GLOBAL, _, 0)) \
    X(cuCtxPopCurrent, (CUcontext *pctx), (pctx), (GLOBAL, _, 0)) \
    X(cuCtxPopCurrent_v2, (CUcontext *pctx), (pctx), (GLOBAL, _, 0)) \
    X(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev), (TEARDOWN, _, 1)) \
    X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev), (TEARDOWN, _, 1)) \
    X(cuDevicePrimaryCtxReset, (CUdevice dev), (dev), (TEARDOWN, _, 1)) \
    X(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev), (TEARDOWN, _, 1)) \
    X(cuModuleUnload, (CUmodule hmod), (hmod), (TEARDOWN, _, 0)) \
    X(cuLibraryUnload, (CUlibrary library), (library), (TEARDOWN, _, 0)) \
    /* Calls that change the current context, or what later launches see (a \
     * deferred launch is issued after them, so it must be resolved first), \
     * or that order a whole context's work. */ \
    X(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev), (GLOBAL, _, 0)) \
    X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev), (GLOBAL, _, 0)) \
    X(cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev), (pctx, paramsArray, numParams, flags, dev), (GLOBAL, _, 0)) \
    X(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev), (pctx, ctxCreateParams, flags, dev), (GLOBAL, _, 0)) \
    X(cuCtxAttach, (CUcontext *pctx, unsigned int flags), (pctx, flags), (GLOBAL, _, 0)) \
    X(cuCtxDetach, (CUcontext ctx), (ctx), (TEARDOWN, _, 1)) \
    X(cuCtxRecordEvent, (CUcontext hCtx, CUevent hEvent), (hCtx, hEvent), (GLOBAL, _, 0)) \
    X(cuCtxWaitEvent, (CUcontext hCtx, CUevent hEvent), (hCtx, hEvent), (GLOBAL, _, 0)) \
    X(cuGreenCtxRecordEvent, (CUgreenCtx hCtx, CUevent hEvent), (hCtx, hEvent), (GLOBAL, _, 0)) \
    X(cuGreenCtxWaitEvent, (CUgreenCtx hCtx, CUevent hEvent), (hCtx, hEvent), (GLOBAL, _, 0)) \
    X(cuCtxSetLimit, (CUlimit limit, size_t value), (limit, value), (GLOBAL, _, 0)) \
    X(cuCtxSetCacheConfig, (CUfunc_cache config), (config), (GLOBAL, _, 0)) \
    X(cuCtxSetSharedMemConfig, (CUsharedconfig config), (config), (GLOBAL, _, 0)) \
    X(cuCtxSetFlags, (unsigned int flags), (flags), (GLOBAL, _, 0)) \
    X(cuCtxEnablePeerAccess, (CUcontext peerContext, unsigned int Flags), (peerContext, Flags), (GLOBAL, _, 0)) \
    X(cuCtxDisablePeerAccess, (CUcontext peerContext), (peerContext), (GLOBAL, _, 0)) \
    X(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value), (hfunc, attrib, value), (GLOBAL, _, 0)) \
    X(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), (hfunc, config), (GLOBAL, _, 0)) \
    X(cuFuncSetSharedMemConfig, (CUfunction hfunc, CUsharedconfig config), (hfunc, config), (GLOBAL, _, 0)) \
    X(cuKernelSetAttribute, (CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev), (attrib, val, kernel, dev), (GLOBAL, _, 0)) \
    X(cuKernelSetCacheConfig, (CUkernel kernel, CUfunc_cache config, CUdevice dev), (kernel, config, dev), (GLOBAL, _, 0)) \
    X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count), (ptr, size, desc, count), (GLOBAL, _, 0)) \
    X(cuLaunchCooperativeKernelMultiDevice, (CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices, unsigned int flags), (launchParamsList, numDevices, flags), (GLOBAL, _, 0)) \
    X(cuCheckpointProcessLock, (int pid, CUcheckpointLockArgs *args), (pid, args), (GLOBAL, _, 0)) \
    X(cuCheckpointProcessCheckpoint, (int pid, CUcheckpointCheckpointArgs *args), (pid, args), (GLOBAL, _, 0)) \
    /* Destroying what a deferred kernel may use (objects passed by handle). */ \
    X(cuTexObjectDestroy, (CUtexObject texObject), (texObject), (GLOBAL, _, 0)) \
    X(cuSurfObjectDestroy, (CUsurfObject surfObject), (surfObject), (GLOBAL, _, 0)) \
    X(cuArrayDestroy, (CUarray hArray), (hArray), (GLOBAL, _, 0)) \
    X(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray), (hMipmappedArray), (GLOBAL, _, 0)) \
    X(cuDestroyExternalMemory, (CUexternalMemory extMem), (extMem), (GLOBAL, _, 0)) \
    X(cuDestroyExternalSemaphore, (CUexternalSemaphore extSem), (extSem), (GLOBAL, _, 0)) \
    X(cuGraphicsUnregisterResource, (CUgraphicsResource resource), (resource), (GLOBAL, _, 0)) \
    /* function and kernel handles */ \
    X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name), \
      (hfunc, hmod, name), (FWD, _, 0)) \
    X(cuLibraryGetKernel, (CUkernel *pKernel, CUlibrary library, const char *name), \
      (pKernel, library, name), (NOTE_KERNEL, _, 0)) \
    X(cuKernelGetFunction, (CUfunction *pFunc, CUkernel kernel), (pFunc, kernel), (FWD, _, 0)) \
    /* The program's own executable graphs: forwarded as they are, interposed \
     * so that a trace (REPRISE_TRACE) knows which graph an executable runs. \
     * The engine instantiates and updates its own graphs through these too \
     * (hooks.c requires them). */ \
    X(cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags), \
      (phGraphExec, hGraph, flags), (FWD, _, 0)) \
    X(cuGraphExecUpdate_v2, (CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo), \
      (hGraphExec, hGraph, resultInfo), (FWD, _, 0)) \
    /* Everything else that orders work on a stream or touches memory the \
     * device may be using: the capture engine cannot capture these, so they \
     * must be seen to end segments (an unseen call on a stream with deferred \
     * work would overtake it). Signatures generated from cuda.h. */ \
    X(cuCtxResetPersistingL2Cache, (void), (), (GLOBAL, _, 0)) \
    X(cuGraphLaunch, (CUgraphExec hGraph, CUstream hStream), (hGraph, hStream), (STREAM, hStream, 0)) \
    X(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream), (STREAM, hStream, 1)) \
    X(cuGraphUpload, (CUgraphExec hGraph, CUstream hStream), (hGraph, hStream), (GLOBAL, _, 0)) \
    X(cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream), (GLOBAL, _, 0)) \
    X(cuGraphicsMapResources, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream), (GLOBAL, _, 0)) \
    X(cuGraphicsMapResources_ptsz, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream), (GLOBAL, _, 0)) \
    X(cuGraphicsUnmapResources, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream), (GLOBAL, _, 0)) \
    X(cuGraphicsUnmapResources_ptsz, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream), (GLOBAL, _, 0)) \
    X(cuLaunch, (CUfunction f), (f), (GLOBAL, _, 0)) \
    X(cuLaunchGrid, (CUfunction f, int grid_width, int grid_height), (f, grid_width, grid_height), (GLOBAL, _, 0)) \
    X(cuLaunchGridAsync, (CUfunction f, int grid_width, int grid_height, CUstream hStream), (f, grid_width, grid_height, hStream), (GLOBAL, _, 0)) \
    X(cuMemBatchDecompressAsync, (CUmemDecompressParams *paramsArray, size_t count, unsigned int flags, size_t *errorIndex, CUstream stream), (paramsArray, count, flags, errorIndex, stream), (GLOBAL, _, 0)) \
    X(cuMemBatchDecompressAsync_ptsz, (CUmemDecompressParams *paramsArray, size_t count, unsigned int flags, size_t *errorIndex, CUstream stream), (paramsArray, count, flags, errorIndex, stream), (GLOBAL, _, 0)) \
    X(cuMemDiscardAndPrefetchBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemDiscardAndPrefetchBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemDiscardBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemDiscardBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemHostRegister, (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags), (GLOBAL, _, 0)) \
    X(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags), (GLOBAL, _, 0)) \
    X(cuMemHostUnregister, (void *p), (p), (GLOBAL, _, 0)) \
    X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags), (ptr, size, offset, handle, flags), (GLOBAL, _, 0)) \
    X(cuMemMapArrayAsync, (CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream), (mapInfoList, count, hStream), (GLOBAL, _, 0)) \
    X(cuMemMapArrayAsync_ptsz, (CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream), (mapInfoList, count, hStream), (GLOBAL, _, 0)) \
    X(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep), (pool, minBytesToKeep), (GLOBAL, _, 0)) \
    X(cuMemPrefetchAsync, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream), (devPtr, count, dstDevice, hStream), (GLOBAL, _, 0)) \
    X(cuMemPrefetchAsync_ptsz, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream), (devPtr, count, dstDevice, hStream), (GLOBAL, _, 0)) \
    X(cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream), (devPtr, count, location, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream), (devPtr, count, location, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemPrefetchBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemPrefetchBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle), (GLOBAL, _, 0)) \
    X(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size), (GLOBAL, _, 0)) \
    X(cuMemcpy2D, (const CUDA_MEMCPY2D_v1 *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy2DAsync, (const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy2DUnaligned, (const CUDA_MEMCPY2D_v1 *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy3D, (const CUDA_MEMCPY3D_v1 *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy3DAsync, (const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *pCopy), (pCopy), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoA, (CUarray dstArray, unsigned int dstOffset, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoA_v2, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoD, (CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstDevice, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoD_v2, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoH, (void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstHost, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoHAsync, (void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoHAsync_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoHAsync_v2_ptsz, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoH_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyBatchAsync, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyBatchAsync_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyBatchAsync_v2_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoA, (CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice, unsigned int ByteCount), (dstArray, dstOffset, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoA_v2, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoA, (CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount), (dstArray, dstOffset, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoAAsync, (CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoAAsync_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoAAsync_v2_ptsz, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoA_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount), (GLOBAL, _, 0)) \
    X(cuMemsetD2D16, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, us, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D16Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D16Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D16_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D16_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D32, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, ui, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D32Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D32Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D32_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D32_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D8, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, uc, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D8Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream), (GLOBAL, _, 0)) \
    X(cuMemsetD2D8_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height), (GLOBAL, _, 0)) \
    X(cuMemsetD2D8_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height), (GLOBAL, _, 0)) \
    X(cuSignalExternalSemaphoresAsync, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream), (GLOBAL, _, 0)) \
    X(cuSignalExternalSemaphoresAsync_ptsz, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream), (GLOBAL, _, 0)) \
    X(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), (hStream, callback, userData, flags), (GLOBAL, _, 0)) \
    X(cuStreamAddCallback_ptsz, (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), (hStream, callback, userData, flags), (GLOBAL, _, 0)) \
    X(cuStreamAttachMemAsync, (CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags), (hStream, dptr, length, flags), (GLOBAL, _, 0)) \
    X(cuStreamAttachMemAsync_ptsz, (CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags), (hStream, dptr, length, flags), (GLOBAL, _, 0)) \
    X(cuStreamBatchMemOp, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags), (GLOBAL, _, 0)) \
    X(cuStreamBatchMemOp_ptsz, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags), (GLOBAL, _, 0)) \
    X(cuStreamBatchMemOp_v2, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags), (GLOBAL, _, 0)) \
    X(cuStreamBatchMemOp_v2_ptsz, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags), (GLOBAL, _, 0)) \
    X(cuStreamCopyAttributes, (CUstream dstStream, CUstream srcStream), (dstStream, srcStream), (GLOBAL, _, 0)) \
    X(cuStreamCopyAttributes_ptsz, (CUstream dst, CUstream src), (dst, src), (GLOBAL, _, 0)) \
    X(cuStreamDestroy, (CUstream hStream), (hStream), (STREAM_DESTROY, hStream, 0)) \
    X(cuStreamDestroy_v2, (CUstream hStream), (hStream), (STREAM_DESTROY, hStream, 0)) \
    X(cuStreamSetAttribute, (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *param), (hStream, attr, param), (GLOBAL, _, 0)) \
    X(cuStreamSetAttribute_ptsz, (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value), (hStream, attr, value), (GLOBAL, _, 0)) \
    X(cuStreamUpdateCaptureDependencies, (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags), (hStream, dependencies, numDependencies, flags), (GLOBAL, _, 0)) \
    X(cuStreamUpdateCaptureDependencies_ptsz, (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags), (hStream, dependencies, numDependencies, flags), (GLOBAL, _, 0)) \
    X(cuStreamUpdateCaptureDependencies_v2, (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags), (hStream, dependencies, dependencyData, numDependencies, flags), (GLOBAL, _, 0)) \
    X(cuStreamUpdateCaptureDependencies_v2_ptsz, (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags), (hStream, dependencies, dependencyData, numDependencies, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue32, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue32_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue32_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue64, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue64_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue64_v2, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWaitValue64_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue32, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue32_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue32_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue64, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue64_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue64_v2, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuStreamWriteValue64_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags), (GLOBAL, _, 0)) \
    X(cuWaitExternalSemaphoresAsync, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream), (GLOBAL, _, 0)) \
    X(cuWaitExternalSemaphoresAsync_ptsz, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream), (GLOBAL, _, 0))

#define RP_HELPERS(X) \
    X(cuCtxGetCurrent, (CUcontext *pctx), (pctx), (HELPER, _, 0)) \
    X(cuStreamCreate, (CUstream *phStream, unsigned int Flags), (phStream, Flags), (HELPER, _, 0)) \
    X(cuStreamGetCtx, (CUstream hStream, CUcontext *pctx), (hStream, pctx), (HELPER, _, 0)) \
    X(cuStreamGetFlags, (CUstream hStream, unsigned int *flags), (hStream, flags), (HELPER, _, 0)) \
    X(cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr), (data, attribute, ptr), (HELPER, _, 0)) \
    X(cuFuncGetParamInfo, (CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize), (func, paramIndex, paramOffset, paramSize), (HELPER, _, 0)) \
    X(cuKernelGetParamInfo, (CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize), (kernel, paramIndex, paramOffset, paramSize), (HELPER, _, 0)) \
    X(cuFuncGetName, (const char **name, CUfunction hfunc), (name, hfunc), (HELPER, _, 0)) \
    X(cuKernelGetName, (const char **name, CUkernel hfunc), (name, hfunc), (HELPER, _, 0)) \
    X(cuGraphExecDestroy, (CUgraphExec hGraphExec), (hGraphExec), (HELPER, _, 0)) \
    X(cuGraphDestroy, (CUgraph hGraph), (hGraph), (HELPER, _, 0)) \
    X(cuGraphGetNodes, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes), (hGraph, nodes, numNodes), (HELPER, _, 0)) \
    X(cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType *type), (hNode, type), (HELPER, _, 0)) \
    X(cuGraphExecKernelNodeSetParams_v2, (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams), (hGraphExec, hNode, nodeParams), (HELPER, _, 0)) \
    X(cuGraphExecMemcpyNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams, CUcontext ctx), (hGraphExec, hNode, copyParams, ctx), (HELPER, _, 0)) \
    X(cuGraphExecMemsetNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx), (hGraphExec, hNode, memsetParams, ctx), (HELPER, _, 0)) \
    X(cuGraphNodeSetEnabled, (CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled), (hGraphExec, hNode, isEnabled), (HELPER, _, 1)) \
    X(cuGraphExecEventWaitNodeSetEvent, (CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event), (hGraphExec, hNode, event), (HELPER, _, 1)) \
    X(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc), (pi, attrib, hfunc), (HELPER, _, 1))
