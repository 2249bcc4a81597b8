/* The one list of driver entry points reprise interposes.
 *
 * Each X(name, params, args) line names an exported driver symbol exactly as
 * libcuda.so.1 (13.0) exports it, with the prototype cuda.h gives that symbol
 * when __CUDA_API_VERSION_INTERNAL is defined (old unversioned names keep
 * their v1 signatures), and the argument names to forward.  Everything that
 * knows a symbol name is generated from this list: the real-entry table
 * (shim.h), the exported wrappers (interpose.c), the dlsym and
 * cuGetProcAddress routing (route.c), the per-entry call counters (stats.c)
 * and the linker version script (exports.map.c).
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

#define RP_ENTRIES(X)                                                                              \
    /* initialisation and the runtime's resolver */                                                \
    X(cuInit, (unsigned int Flags), (Flags))                                                       \
    X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags),       \
      (symbol, pfn, cudaVersion, flags))                                                           \
    X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,     \
                            CUdriverProcAddressQueryResult *symbolStatus),                         \
      (symbol, pfn, cudaVersion, flags, symbolStatus))                                             \
    /* launches */                                                                                 \
    X(cuLaunchKernel, RP_SIG_LAUNCH_KERNEL, RP_ARGS_LAUNCH_KERNEL)                                 \
    X(cuLaunchKernel_ptsz, RP_SIG_LAUNCH_KERNEL, RP_ARGS_LAUNCH_KERNEL)                            \
    X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams,          \
                         void **extra), (config, f, kernelParams, extra))                          \
    X(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **kernelParams,     \
                              void **extra), (config, f, kernelParams, extra))                     \
    X(cuLaunchCooperativeKernel, RP_SIG_LAUNCH_COOP, RP_ARGS_LAUNCH_COOP)                          \
    X(cuLaunchCooperativeKernel_ptsz, RP_SIG_LAUNCH_COOP, RP_ARGS_LAUNCH_COOP)                     \
    X(cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData), (hStream, fn, userData))  \
    X(cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData),                      \
      (hStream, fn, userData))                                                                     \
    /* copies */                                                                                   \
    X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))       \
    X(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))  \
    X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),       \
      (dst, src, ByteCount, hStream))                                                              \
    X(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),  \
      (dst, src, ByteCount, hStream))                                                              \
    X(cuMemcpyHtoD, (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount),       \
      (dstDevice, srcHost, ByteCount))                                                             \
    X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),             \
      (dstDevice, srcHost, ByteCount))                                                             \
    X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),        \
      (dstDevice, srcHost, ByteCount))                                                             \
    X(cuMemcpyDtoH, (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount),             \
      (dstHost, srcDevice, ByteCount))                                                             \
    X(cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),                   \
      (dstHost, srcDevice, ByteCount))                                                             \
    X(cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),              \
      (dstHost, srcDevice, ByteCount))                                                             \
    X(cuMemcpyDtoD, (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice, unsigned int ByteCount),  \
      (dstDevice, srcDevice, ByteCount))                                                           \
    X(cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),           \
      (dstDevice, srcDevice, ByteCount))                                                           \
    X(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),      \
      (dstDevice, srcDevice, ByteCount))                                                           \
    X(cuMemcpyHtoDAsync, (CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,   \
                          CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))             \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,         \
                             CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))          \
    X(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,    \
                                  CUstream hStream), (dstDevice, srcHost, ByteCount, hStream))     \
    X(cuMemcpyDtoHAsync, (void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount,         \
                          CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))             \
    X(cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,               \
                             CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))          \
    X(cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,          \
                                  CUstream hStream), (dstHost, srcDevice, ByteCount, hStream))     \
    X(cuMemcpyDtoDAsync, (CUdeviceptr_v1 dstDevice, CUdeviceptr_v1 srcDevice,                      \
                          unsigned int ByteCount, CUstream hStream),                               \
      (dstDevice, srcDevice, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,       \
                             CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream))        \
    X(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,  \
                                  CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream))   \
    X(cuMemcpyPeer, RP_SIG_PEER, RP_ARGS_PEER)                                                     \
    X(cuMemcpyPeer_ptds, RP_SIG_PEER, RP_ARGS_PEER)                                                \
    X(cuMemcpyPeerAsync, RP_SIG_PEER_ASYNC, RP_ARGS_PEER_ASYNC)                                    \
    X(cuMemcpyPeerAsync_ptsz, RP_SIG_PEER_ASYNC, RP_ARGS_PEER_ASYNC)                               \
    /* memsets */                                                                                  \
    X(cuMemsetD8, (CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N), (dstDevice, uc, N))\
    X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N))      \
    X(cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N)) \
    X(cuMemsetD16, (CUdeviceptr_v1 dstDevice, unsigned short us, unsigned int N),                  \
      (dstDevice, us, N))                                                                          \
    X(cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N))    \
    X(cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N),                   \
      (dstDevice, us, N))                                                                          \
    X(cuMemsetD32, (CUdeviceptr_v1 dstDevice, unsigned int ui, unsigned int N), (dstDevice, ui, N))\
    X(cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N))      \
    X(cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N)) \
    X(cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),      \
      (dstDevice, uc, N, hStream))                                                                 \
    X(cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), \
      (dstDevice, uc, N, hStream))                                                                 \
    X(cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream),    \
      (dstDevice, us, N, hStream))                                                                 \
    X(cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N,                  \
                              CUstream hStream), (dstDevice, us, N, hStream))                      \
    X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream),      \
      (dstDevice, ui, N, hStream))                                                                 \
    X(cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), \
      (dstDevice, ui, N, hStream))                                                                 \
    /* synchronisation and ordering */                                                             \
    X(cuStreamSynchronize, (CUstream hStream), (hStream))                                          \
    X(cuStreamSynchronize_ptsz, (CUstream hStream), (hStream))                                     \
    X(cuStreamQuery, (CUstream hStream), (hStream))                                                \
    X(cuStreamQuery_ptsz, (CUstream hStream), (hStream))                                           \
    X(cuCtxSynchronize, (void), ())                                                                \
    X(cuCtxSynchronize_v2, (CUcontext ctx), (ctx))                                                 \
    X(cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream))                        \
    X(cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), (hEvent, hStream))                   \
    X(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags),              \
      (hEvent, hStream, flags))                                                                    \
    X(cuEventRecordWithFlags_ptsz, (CUevent hEvent, CUstream hStream, unsigned int flags),         \
      (hEvent, hStream, flags))                                                                    \
    X(cuEventSynchronize, (CUevent hEvent), (hEvent))                                              \
    X(cuEventQuery, (CUevent hEvent), (hEvent))                                                    \
    X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags),                   \
      (hStream, hEvent, Flags))                                                                    \
    X(cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags),              \
      (hStream, hEvent, Flags))                                                                    \
    /* the program's own stream capture */                                                         \
    X(cuStreamBeginCapture, (CUstream hStream), (hStream))                                         \
    X(cuStreamBeginCapture_ptsz, (CUstream hStream), (hStream))                                    \
    X(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))      \
    X(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode)) \
    X(cuStreamBeginCaptureToGraph, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH)              \
    X(cuStreamBeginCaptureToGraph_ptsz, RP_SIG_CAPTURE_TO_GRAPH, RP_ARGS_CAPTURE_TO_GRAPH)         \
    X(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph))                \
    X(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph))           \
    X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus),               \
      (hStream, captureStatus))                                                                    \
    X(cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus),          \
      (hStream, captureStatus))                                                                    \
    X(cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out,         \
                               cuuint64_t *id_out), (hStream, captureStatus_out, id_out))          \
    X(cuStreamGetCaptureInfo_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out,    \
                                    cuuint64_t *id_out), (hStream, captureStatus_out, id_out))     \
    X(cuStreamGetCaptureInfo_v2, RP_SIG_CAPTURE_INFO_V2, RP_ARGS_CAPTURE_INFO_V2)                  \
    X(cuStreamGetCaptureInfo_v2_ptsz, RP_SIG_CAPTURE_INFO_V2, RP_ARGS_CAPTURE_INFO_V2)             \
    X(cuStreamGetCaptureInfo_v3, RP_SIG_CAPTURE_INFO_V3, RP_ARGS_CAPTURE_INFO_V3)                  \
    X(cuStreamGetCaptureInfo_v3_ptsz, RP_SIG_CAPTURE_INFO_V3, RP_ARGS_CAPTURE_INFO_V3)             \
    /* memory */                                                                                   \
    X(cuMemAlloc, (CUdeviceptr_v1 *dptr, unsigned int bytesize), (dptr, bytesize))                 \
    X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize))                       \
    X(cuMemAllocPitch, (CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,     \
                        unsigned int Height, unsigned int ElementSizeBytes),                       \
      (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))                                      \
    X(cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,  \
                           unsigned int ElementSizeBytes),                                         \
      (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))                                      \
    X(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags),                 \
      (dptr, bytesize, flags))                                                                     \
    X(cuMemAllocHost, (void **pp, unsigned int bytesize), (pp, bytesize))                          \
    X(cuMemAllocHost_v2, (void **pp, size_t bytesize), (pp, bytesize))                             \
    X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags))     \
    X(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream),                     \
      (dptr, bytesize, hStream))                                                                   \
    X(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream),                \
      (dptr, bytesize, hStream))                                                                   \
    X(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,             \
                                CUstream hStream), (dptr, bytesize, pool, hStream))                \
    X(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,        \
                                     CUstream hStream), (dptr, bytesize, pool, hStream))           \
    X(cuMemFree, (CUdeviceptr_v1 dptr), (dptr))                                                    \
    X(cuMemFree_v2, (CUdeviceptr dptr), (dptr))                                                    \
    X(cuMemFreeHost, (void *p), (p))                                                               \
    X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))                       \
    X(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))                  \
    /* lifetimes of contexts, modules and libraries */                                             \
    X(cuCtxDestroy, (CUcontext ctx), (ctx))                                                        \
    X(cuCtxDestroy_v2, (CUcontext ctx), (ctx))                                                     \
    X(cuCtxSetCurrent, (CUcontext ctx), (ctx))                                                     \
    X(cuCtxPushCurrent, (CUcontext ctx), (ctx))                                                    \
    X(cuCtxPushCurrent_v2, (CUcontext ctx), (ctx))                                                 \
    X(cuCtxPopCurrent, (CUcontext *pctx), (pctx))                                                  \
    X(cuCtxPopCurrent_v2, (CUcontext *pctx), (pctx))                                               \
    X(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev))                                            \
    X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev))                                         \
    X(cuDevicePrimaryCtxReset, (CUdevice dev), (dev))                                              \
    X(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev))                                           \
    X(cuModuleUnload, (CUmodule hmod), (hmod))                                                     \
    X(cuLibraryUnload, (CUlibrary library), (library))                                             \
    /* Calls that change the current context, or what later launches see (a   \
     * deferred launch is issued after them, so it must be resolved first),   \
     * or that order a whole context's work. */                                \
    X(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev)) \
    X(cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev)) \
    X(cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev), (pctx, paramsArray, numParams, flags, dev)) \
    X(cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev), (pctx, ctxCreateParams, flags, dev)) \
    X(cuCtxAttach, (CUcontext *pctx, unsigned int flags), (pctx, flags)) \
    X(cuCtxDetach, (CUcontext ctx), (ctx)) \
    X(cuCtxRecordEvent, (CUcontext hCtx, CUevent hEvent), (hCtx, hEvent)) \
    X(cuCtxWaitEvent, (CUcontext hCtx, CUevent hEvent), (hCtx, hEvent)) \
    X(cuGreenCtxRecordEvent, (CUgreenCtx hCtx, CUevent hEvent), (hCtx, hEvent)) \
    X(cuGreenCtxWaitEvent, (CUgreenCtx hCtx, CUevent hEvent), (hCtx, hEvent)) \
    X(cuCtxSetLimit, (CUlimit limit, size_t value), (limit, value)) \
    X(cuCtxSetCacheConfig, (CUfunc_cache config), (config)) \
    X(cuCtxSetSharedMemConfig, (CUsharedconfig config), (config)) \
    X(cuCtxSetFlags, (unsigned int flags), (flags)) \
    X(cuCtxEnablePeerAccess, (CUcontext peerContext, unsigned int Flags), (peerContext, Flags)) \
    X(cuCtxDisablePeerAccess, (CUcontext peerContext), (peerContext)) \
    X(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value), (hfunc, attrib, value)) \
    X(cuFuncSetCacheConfig, (CUfunction hfunc, CUfunc_cache config), (hfunc, config)) \
    X(cuFuncSetSharedMemConfig, (CUfunction hfunc, CUsharedconfig config), (hfunc, config)) \
    X(cuKernelSetAttribute, (CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev), (attrib, val, kernel, dev)) \
    X(cuKernelSetCacheConfig, (CUkernel kernel, CUfunc_cache config, CUdevice dev), (kernel, config, dev)) \
    X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count), (ptr, size, desc, count)) \
    X(cuLaunchCooperativeKernelMultiDevice, (CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices, unsigned int flags), (launchParamsList, numDevices, flags)) \
    X(cuCheckpointProcessLock, (int pid, CUcheckpointLockArgs *args), (pid, args)) \
    X(cuCheckpointProcessCheckpoint, (int pid, CUcheckpointCheckpointArgs *args), (pid, args)) \
    /* Destroying what a deferred kernel may use (objects passed by handle). */ \
    X(cuTexObjectDestroy, (CUtexObject texObject), (texObject)) \
    X(cuSurfObjectDestroy, (CUsurfObject surfObject), (surfObject)) \
    X(cuArrayDestroy, (CUarray hArray), (hArray)) \
    X(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray), (hMipmappedArray)) \
    X(cuDestroyExternalMemory, (CUexternalMemory extMem), (extMem)) \
    X(cuDestroyExternalSemaphore, (CUexternalSemaphore extSem), (extSem)) \
    X(cuGraphicsUnregisterResource, (CUgraphicsResource resource), (resource)) \
    /* function and kernel handles */                                                              \
    X(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name),                   \
      (hfunc, hmod, name))                                                                         \
    X(cuLibraryGetKernel, (CUkernel *pKernel, CUlibrary library, const char *name),                \
      (pKernel, library, name))                                                                    \
    X(cuKernelGetFunction, (CUfunction *pFunc, CUkernel kernel), (pFunc, kernel))                \
    /* Everything else that orders work on a stream or touches memory the     \
     * device may be using: the capture engine cannot capture these, so they  \
     * must be seen to end segments (an unseen call on a stream with deferred  \
     * work would overtake it). Signatures generated from cuda.h. */           \
    X(cuCtxResetPersistingL2Cache, (void), ()) \
    X(cuGraphLaunch, (CUgraphExec hGraph, CUstream hStream), (hGraph, hStream)) \
    X(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream)) \
    X(cuGraphUpload, (CUgraphExec hGraph, CUstream hStream), (hGraph, hStream)) \
    X(cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream)) \
    X(cuGraphicsMapResources, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream)) \
    X(cuGraphicsMapResources_ptsz, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream)) \
    X(cuGraphicsUnmapResources, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream)) \
    X(cuGraphicsUnmapResources_ptsz, (unsigned int count, CUgraphicsResource *resources, CUstream hStream), (count, resources, hStream)) \
    X(cuLaunch, (CUfunction f), (f)) \
    X(cuLaunchGrid, (CUfunction f, int grid_width, int grid_height), (f, grid_width, grid_height)) \
    X(cuLaunchGridAsync, (CUfunction f, int grid_width, int grid_height, CUstream hStream), (f, grid_width, grid_height, hStream)) \
    X(cuMemBatchDecompressAsync, (CUmemDecompressParams *paramsArray, size_t count, unsigned int flags, size_t *errorIndex, CUstream stream), (paramsArray, count, flags, errorIndex, stream)) \
    X(cuMemBatchDecompressAsync_ptsz, (CUmemDecompressParams *paramsArray, size_t count, unsigned int flags, size_t *errorIndex, CUstream stream), (paramsArray, count, flags, errorIndex, stream)) \
    X(cuMemDiscardAndPrefetchBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream)) \
    X(cuMemDiscardAndPrefetchBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream)) \
    X(cuMemDiscardBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, flags, hStream)) \
    X(cuMemDiscardBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, flags, hStream)) \
    X(cuMemHostRegister, (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags)) \
    X(cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags)) \
    X(cuMemHostUnregister, (void *p), (p)) \
    X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags), (ptr, size, offset, handle, flags)) \
    X(cuMemMapArrayAsync, (CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream), (mapInfoList, count, hStream)) \
    X(cuMemMapArrayAsync_ptsz, (CUarrayMapInfo *mapInfoList, unsigned int count, CUstream hStream), (mapInfoList, count, hStream)) \
    X(cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep), (pool, minBytesToKeep)) \
    X(cuMemPrefetchAsync, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream), (devPtr, count, dstDevice, hStream)) \
    X(cuMemPrefetchAsync_ptsz, (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream), (devPtr, count, dstDevice, hStream)) \
    X(cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream), (devPtr, count, location, flags, hStream)) \
    X(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream), (devPtr, count, location, flags, hStream)) \
    X(cuMemPrefetchBatchAsync, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream)) \
    X(cuMemPrefetchBatchAsync_ptsz, (CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags, CUstream hStream), (dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream)) \
    X(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle)) \
    X(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size)) \
    X(cuMemcpy2D, (const CUDA_MEMCPY2D_v1 *pCopy), (pCopy)) \
    X(cuMemcpy2DAsync, (const CUDA_MEMCPY2D_v1 *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy2DUnaligned, (const CUDA_MEMCPY2D_v1 *pCopy), (pCopy)) \
    X(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy)) \
    X(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy)) \
    X(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *pCopy), (pCopy)) \
    X(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy)) \
    X(cuMemcpy3D, (const CUDA_MEMCPY3D_v1 *pCopy), (pCopy)) \
    X(cuMemcpy3DAsync, (const CUDA_MEMCPY3D_v1 *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy3DBatchAsync, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream)) \
    X(cuMemcpy3DBatchAsync_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream)) \
    X(cuMemcpy3DBatchAsync_v2, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream)) \
    X(cuMemcpy3DBatchAsync_v2_ptsz, (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream), (numOps, opList, flags, hStream)) \
    X(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy)) \
    X(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream)) \
    X(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy)) \
    X(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *pCopy), (pCopy)) \
    X(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *pCopy), (pCopy)) \
    X(cuMemcpyAtoA, (CUarray dstArray, unsigned int dstOffset, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoA_v2, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoD, (CUdeviceptr_v1 dstDevice, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstDevice, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoD_v2, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoH, (void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount), (dstHost, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoHAsync, (void *dstHost, CUarray srcArray, unsigned int srcOffset, unsigned int ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream)) \
    X(cuMemcpyAtoHAsync_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream)) \
    X(cuMemcpyAtoHAsync_v2_ptsz, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream)) \
    X(cuMemcpyAtoH_v2, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount)) \
    X(cuMemcpyBatchAsync, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream)) \
    X(cuMemcpyBatchAsync_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream)) \
    X(cuMemcpyBatchAsync_v2, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream)) \
    X(cuMemcpyBatchAsync_v2_ptsz, (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream), (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream)) \
    X(cuMemcpyDtoA, (CUarray dstArray, unsigned int dstOffset, CUdeviceptr_v1 srcDevice, unsigned int ByteCount), (dstArray, dstOffset, srcDevice, ByteCount)) \
    X(cuMemcpyDtoA_v2, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount)) \
    X(cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount)) \
    X(cuMemcpyHtoA, (CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount), (dstArray, dstOffset, srcHost, ByteCount)) \
    X(cuMemcpyHtoAAsync, (CUarray dstArray, unsigned int dstOffset, const void *srcHost, unsigned int ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream)) \
    X(cuMemcpyHtoAAsync_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream)) \
    X(cuMemcpyHtoAAsync_v2_ptsz, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream)) \
    X(cuMemcpyHtoA_v2, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount)) \
    X(cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount)) \
    X(cuMemsetD2D16, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned short us, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, us, Width, Height)) \
    X(cuMemsetD2D16Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream)) \
    X(cuMemsetD2D16Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream)) \
    X(cuMemsetD2D16_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height)) \
    X(cuMemsetD2D16_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height)) \
    X(cuMemsetD2D32, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned int ui, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, ui, Width, Height)) \
    X(cuMemsetD2D32Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream)) \
    X(cuMemsetD2D32Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream)) \
    X(cuMemsetD2D32_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height)) \
    X(cuMemsetD2D32_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height)) \
    X(cuMemsetD2D8, (CUdeviceptr_v1 dstDevice, unsigned int dstPitch, unsigned char uc, unsigned int Width, unsigned int Height), (dstDevice, dstPitch, uc, Width, Height)) \
    X(cuMemsetD2D8Async, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream)) \
    X(cuMemsetD2D8Async_ptsz, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream)) \
    X(cuMemsetD2D8_v2, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height)) \
    X(cuMemsetD2D8_v2_ptds, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height)) \
    X(cuSignalExternalSemaphoresAsync, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream)) \
    X(cuSignalExternalSemaphoresAsync_ptsz, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream)) \
    X(cuStreamAddCallback, (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), (hStream, callback, userData, flags)) \
    X(cuStreamAddCallback_ptsz, (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags), (hStream, callback, userData, flags)) \
    X(cuStreamAttachMemAsync, (CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags), (hStream, dptr, length, flags)) \
    X(cuStreamAttachMemAsync_ptsz, (CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags), (hStream, dptr, length, flags)) \
    X(cuStreamBatchMemOp, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags)) \
    X(cuStreamBatchMemOp_ptsz, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags)) \
    X(cuStreamBatchMemOp_v2, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags)) \
    X(cuStreamBatchMemOp_v2_ptsz, (CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray, unsigned int flags), (stream, count, paramArray, flags)) \
    X(cuStreamCopyAttributes, (CUstream dstStream, CUstream srcStream), (dstStream, srcStream)) \
    X(cuStreamCopyAttributes_ptsz, (CUstream dst, CUstream src), (dst, src)) \
    X(cuStreamDestroy, (CUstream hStream), (hStream)) \
    X(cuStreamDestroy_v2, (CUstream hStream), (hStream)) \
    X(cuStreamSetAttribute, (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *param), (hStream, attr, param)) \
    X(cuStreamSetAttribute_ptsz, (CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue *value), (hStream, attr, value)) \
    X(cuStreamUpdateCaptureDependencies, (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags), (hStream, dependencies, numDependencies, flags)) \
    X(cuStreamUpdateCaptureDependencies_ptsz, (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags), (hStream, dependencies, numDependencies, flags)) \
    X(cuStreamUpdateCaptureDependencies_v2, (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags), (hStream, dependencies, dependencyData, numDependencies, flags)) \
    X(cuStreamUpdateCaptureDependencies_v2_ptsz, (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags), (hStream, dependencies, dependencyData, numDependencies, flags)) \
    X(cuStreamWaitValue32, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue32_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue32_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue64, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue64_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue64_v2, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWaitValue64_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue32, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue32_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue32_v2, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue32_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue64, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue64_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue64_v2, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuStreamWriteValue64_v2_ptsz, (CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags), (stream, addr, value, flags)) \
    X(cuWaitExternalSemaphoresAsync, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream)) \
    X(cuWaitExternalSemaphoresAsync_ptsz, (const CUexternalSemaphore *extSemArray, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray, unsigned int numExtSems, CUstream stream), (extSemArray, paramsArray, numExtSems, stream))
