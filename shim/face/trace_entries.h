/* What a trace records of each interposed entry point, named once.
 *
 * RP_TRACE_FAMILIES(F) lists the record families of the trace format
 * (docs/trace.md): F(NAME, number, arity), the number being what a trace
 * stores in its entry definitions (stable across versions of the format),
 * the arity the number of arguments every entry of the family takes, in the
 * order the family's payload and replay use them.
 *
 * RP_TRACE_ENTRIES(E) maps entries of shim/core/entries.h (RP_ENTRIES) to a
 * family: E(name, FAMILY). The entries of a family take the same arguments in
 * the same order (entries.h's argument lists), so one encoder (trace.c, trace_enc.c)
 * and one player routine (tools/replay.c) serve each family; an entry not
 * listed is GENERIC: its call, thread, time and result are recorded and it is
 * not replayed. Old unversioned entries (v1, 32-bit sizes and addresses) share
 * the family of their _v2 form except where an out-parameter's width differs
 * (the _V1 families).
 *
 * No include guard and no includes: the shim (trace.c) and the tools
 * (tools/traceread.c, replay.c) both expand it. */

#define RP_TRACE_FAMILIES(F)                                                    \
    F(GENERIC, 0, 0)                                                            \
    F(LAUNCH, 1, 11)          /* f, grid xyz, block xyz, shmem, stream, params, extra */ \
    F(LAUNCH_COOP, 2, 10)     /* the same without extra */                     \
    F(LAUNCH_EX, 3, 4)        /* config, f, params, extra */                   \
    F(HOSTFN, 4, 3)           /* stream, fn, data */                           \
    F(HTOD, 5, 3)             /* dst, src, bytes */                            \
    F(HTOD_ASYNC, 6, 4)       /* dst, src, bytes, stream */                    \
    F(DTOH, 7, 3)                                                               \
    F(DTOH_ASYNC, 8, 4)                                                         \
    F(DTOD, 9, 3)                                                               \
    F(DTOD_ASYNC, 10, 4)                                                        \
    F(COPY, 11, 3)            /* unified addresses: dst, src, bytes */         \
    F(COPY_ASYNC, 12, 4)                                                        \
    F(PEER, 13, 5)            /* dst, dst ctx, src, src ctx, bytes */          \
    F(PEER_ASYNC, 14, 6)                                                        \
    F(MEMSET8, 15, 3)         /* dst, value, count */                          \
    F(MEMSET16, 16, 3)                                                          \
    F(MEMSET32, 17, 3)                                                          \
    F(MEMSET8_ASYNC, 18, 4)   /* dst, value, count, stream */                  \
    F(MEMSET16_ASYNC, 19, 4)                                                    \
    F(MEMSET32_ASYNC, 20, 4)                                                    \
    F(MEMSET2D8, 21, 5)       /* dst, pitch, value, width, height */           \
    F(MEMSET2D16, 22, 5)                                                        \
    F(MEMSET2D32, 23, 5)                                                        \
    F(MEMSET2D8_ASYNC, 24, 6)                                                   \
    F(MEMSET2D16_ASYNC, 25, 6)                                                  \
    F(MEMSET2D32_ASYNC, 26, 6)                                                  \
    F(STREAM_SYNC, 31, 1)     /* stream */                                     \
    F(STREAM_QUERY, 32, 1)                                                      \
    F(CTX_SYNC, 33, 0)                                                          \
    F(CTX_SYNC_V2, 34, 1)     /* ctx */                                        \
    F(EVENT_SYNC, 35, 1)      /* event */                                      \
    F(EVENT_QUERY, 36, 1)                                                       \
    F(EVENT_CREATE, 37, 2)    /* out event, flags */                           \
    F(EVENT_DESTROY, 38, 1)                                                     \
    F(EVENT_RECORD, 39, 2)    /* event, stream */                              \
    F(EVENT_RECORD_FLAGS, 40, 3)                                                \
    F(WAIT_EVENT, 41, 3)      /* stream, event, flags */                       \
    F(BEGIN_CAPTURE, 42, 1)   /* stream */                                     \
    F(BEGIN_CAPTURE_MODE, 43, 2) /* stream, mode */                            \
    F(END_CAPTURE, 44, 2)     /* stream, out graph */                          \
    F(IS_CAPTURING, 45, 2)    /* stream, out status */                         \
    F(ALLOC_V1, 46, 2)        /* out 32-bit address, bytes */                  \
    F(ALLOC, 47, 2)           /* out address, bytes */                         \
    F(ALLOC_PITCH_V1, 48, 5)  /* out address, out pitch, width, height, element */ \
    F(ALLOC_PITCH, 49, 5)                                                       \
    F(ALLOC_MANAGED, 50, 3)   /* out address, bytes, flags */                  \
    F(ALLOC_HOST, 51, 2)      /* out pointer, bytes */                         \
    F(HOST_ALLOC, 52, 3)      /* out pointer, bytes, flags */                  \
    F(ALLOC_ASYNC, 53, 3)     /* out address, bytes, stream */                 \
    F(ALLOC_POOL_ASYNC, 54, 4) /* out address, bytes, pool, stream */          \
    F(FREE, 55, 1)            /* address */                                    \
    F(FREE_HOST, 56, 1)       /* pointer */                                    \
    F(FREE_ASYNC, 57, 2)      /* address, stream */                            \
    F(HOST_REGISTER, 58, 3)   /* pointer, bytes, flags */                      \
    F(HOST_UNREGISTER, 59, 1)                                                   \
    F(CTX_CREATE, 60, 3)      /* out ctx, flags, device */                     \
    F(CTX_CREATE_V3, 61, 5)   /* out ctx, affinity params, count, flags, device */ \
    F(CTX_CREATE_V4, 62, 4)   /* out ctx, create params, flags, device */      \
    F(CTX_DESTROY, 63, 1)                                                       \
    F(CTX_SET, 64, 1)                                                           \
    F(CTX_PUSH, 65, 1)                                                          \
    F(CTX_POP, 66, 1)         /* out ctx */                                    \
    F(PRIMARY_RELEASE, 67, 1) /* device */                                     \
    F(PRIMARY_RESET, 68, 1)                                                     \
    F(GET_FUNCTION, 69, 3)    /* out function, module, name */                 \
    F(LIBRARY_GET_KERNEL, 70, 3) /* out kernel, library, name */               \
    F(KERNEL_GET_FUNCTION, 71, 2) /* out function, kernel */                   \
    F(MODULE_UNLOAD, 72, 1)                                                     \
    F(LIBRARY_UNLOAD, 73, 1)                                                    \
    F(STREAM_DESTROY, 74, 1)                                                    \
    F(GRAPH_LAUNCH, 75, 2)    /* exec, stream */                               \
    F(GRAPH_UPLOAD, 76, 2)                                                      \
    F(GRAPH_INSTANTIATE, 77, 3) /* out exec, graph, flags */                   \
    F(GRAPH_EXEC_UPDATE, 78, 3) /* exec, graph, out info */                    \
    F(WAIT_VALUE32, 79, 4)    /* stream, address, value, flags */              \
    F(WAIT_VALUE64, 80, 4)                                                      \
    F(WRITE_VALUE32, 81, 4)                                                     \
    F(WRITE_VALUE64, 82, 4)

#define RP_TRACE_ENTRIES(E)                                                     \
    E(cuLaunchKernel, LAUNCH)                                                   \
    E(cuLaunchKernel_ptsz, LAUNCH)                                              \
    E(cuLaunchCooperativeKernel, LAUNCH_COOP)                                   \
    E(cuLaunchCooperativeKernel_ptsz, LAUNCH_COOP)                              \
    E(cuLaunchKernelEx, LAUNCH_EX)                                              \
    E(cuLaunchKernelEx_ptsz, LAUNCH_EX)                                         \
    E(cuLaunchHostFunc, HOSTFN)                                                 \
    E(cuLaunchHostFunc_ptsz, HOSTFN)                                            \
    E(cuMemcpy, COPY)                                                           \
    E(cuMemcpy_ptds, COPY)                                                      \
    E(cuMemcpyAsync, COPY_ASYNC)                                                \
    E(cuMemcpyAsync_ptsz, COPY_ASYNC)                                           \
    E(cuMemcpyHtoD, HTOD)                                                       \
    E(cuMemcpyHtoD_v2, HTOD)                                                    \
    E(cuMemcpyHtoD_v2_ptds, HTOD)                                               \
    E(cuMemcpyDtoH, DTOH)                                                       \
    E(cuMemcpyDtoH_v2, DTOH)                                                    \
    E(cuMemcpyDtoH_v2_ptds, DTOH)                                               \
    E(cuMemcpyDtoD, DTOD)                                                       \
    E(cuMemcpyDtoD_v2, DTOD)                                                    \
    E(cuMemcpyDtoD_v2_ptds, DTOD)                                               \
    E(cuMemcpyHtoDAsync, HTOD_ASYNC)                                            \
    E(cuMemcpyHtoDAsync_v2, HTOD_ASYNC)                                         \
    E(cuMemcpyHtoDAsync_v2_ptsz, HTOD_ASYNC)                                    \
    E(cuMemcpyDtoHAsync, DTOH_ASYNC)                                            \
    E(cuMemcpyDtoHAsync_v2, DTOH_ASYNC)                                         \
    E(cuMemcpyDtoHAsync_v2_ptsz, DTOH_ASYNC)                                    \
    E(cuMemcpyDtoDAsync, DTOD_ASYNC)                                            \
    E(cuMemcpyDtoDAsync_v2, DTOD_ASYNC)                                         \
    E(cuMemcpyDtoDAsync_v2_ptsz, DTOD_ASYNC)                                    \
    E(cuMemcpyPeer, PEER)                                                       \
    E(cuMemcpyPeer_ptds, PEER)                                                  \
    E(cuMemcpyPeerAsync, PEER_ASYNC)                                            \
    E(cuMemcpyPeerAsync_ptsz, PEER_ASYNC)                                       \
    E(cuMemsetD8, MEMSET8)                                                      \
    E(cuMemsetD8_v2, MEMSET8)                                                   \
    E(cuMemsetD8_v2_ptds, MEMSET8)                                              \
    E(cuMemsetD16, MEMSET16)                                                    \
    E(cuMemsetD16_v2, MEMSET16)                                                 \
    E(cuMemsetD16_v2_ptds, MEMSET16)                                            \
    E(cuMemsetD32, MEMSET32)                                                    \
    E(cuMemsetD32_v2, MEMSET32)                                                 \
    E(cuMemsetD32_v2_ptds, MEMSET32)                                            \
    E(cuMemsetD8Async, MEMSET8_ASYNC)                                           \
    E(cuMemsetD8Async_ptsz, MEMSET8_ASYNC)                                      \
    E(cuMemsetD16Async, MEMSET16_ASYNC)                                         \
    E(cuMemsetD16Async_ptsz, MEMSET16_ASYNC)                                    \
    E(cuMemsetD32Async, MEMSET32_ASYNC)                                         \
    E(cuMemsetD32Async_ptsz, MEMSET32_ASYNC)                                    \
    E(cuMemsetD2D8, MEMSET2D8)                                                  \
    E(cuMemsetD2D8_v2, MEMSET2D8)                                               \
    E(cuMemsetD2D8_v2_ptds, MEMSET2D8)                                          \
    E(cuMemsetD2D16, MEMSET2D16)                                                \
    E(cuMemsetD2D16_v2, MEMSET2D16)                                             \
    E(cuMemsetD2D16_v2_ptds, MEMSET2D16)                                        \
    E(cuMemsetD2D32, MEMSET2D32)                                                \
    E(cuMemsetD2D32_v2, MEMSET2D32)                                             \
    E(cuMemsetD2D32_v2_ptds, MEMSET2D32)                                        \
    E(cuMemsetD2D8Async, MEMSET2D8_ASYNC)                                       \
    E(cuMemsetD2D8Async_ptsz, MEMSET2D8_ASYNC)                                  \
    E(cuMemsetD2D16Async, MEMSET2D16_ASYNC)                                     \
    E(cuMemsetD2D16Async_ptsz, MEMSET2D16_ASYNC)                                \
    E(cuMemsetD2D32Async, MEMSET2D32_ASYNC)                                     \
    E(cuMemsetD2D32Async_ptsz, MEMSET2D32_ASYNC)                                \
    E(cuStreamSynchronize, STREAM_SYNC)                                         \
    E(cuStreamSynchronize_ptsz, STREAM_SYNC)                                    \
    E(cuStreamQuery, STREAM_QUERY)                                              \
    E(cuStreamQuery_ptsz, STREAM_QUERY)                                         \
    E(cuCtxSynchronize, CTX_SYNC)                                               \
    E(cuCtxSynchronize_v2, CTX_SYNC_V2)                                         \
    E(cuEventSynchronize, EVENT_SYNC)                                           \
    E(cuEventQuery, EVENT_QUERY)                                                \
    E(cuEventCreate, EVENT_CREATE)                                              \
    E(cuEventDestroy, EVENT_DESTROY)                                            \
    E(cuEventDestroy_v2, EVENT_DESTROY)                                         \
    E(cuEventRecord, EVENT_RECORD)                                              \
    E(cuEventRecord_ptsz, EVENT_RECORD)                                         \
    E(cuEventRecordWithFlags, EVENT_RECORD_FLAGS)                               \
    E(cuEventRecordWithFlags_ptsz, EVENT_RECORD_FLAGS)                          \
    E(cuStreamWaitEvent, WAIT_EVENT)                                            \
    E(cuStreamWaitEvent_ptsz, WAIT_EVENT)                                       \
    E(cuStreamBeginCapture, BEGIN_CAPTURE)                                      \
    E(cuStreamBeginCapture_ptsz, BEGIN_CAPTURE)                                 \
    E(cuStreamBeginCapture_v2, BEGIN_CAPTURE_MODE)                              \
    E(cuStreamBeginCapture_v2_ptsz, BEGIN_CAPTURE_MODE)                         \
    E(cuStreamEndCapture, END_CAPTURE)                                          \
    E(cuStreamEndCapture_ptsz, END_CAPTURE)                                     \
    E(cuStreamIsCapturing, IS_CAPTURING)                                        \
    E(cuStreamIsCapturing_ptsz, IS_CAPTURING)                                   \
    E(cuMemAlloc, ALLOC_V1)                                                     \
    E(cuMemAlloc_v2, ALLOC)                                                     \
    E(cuMemAllocPitch, ALLOC_PITCH_V1)                                          \
    E(cuMemAllocPitch_v2, ALLOC_PITCH)                                          \
    E(cuMemAllocManaged, ALLOC_MANAGED)                                         \
    E(cuMemAllocHost, ALLOC_HOST)                                               \
    E(cuMemAllocHost_v2, ALLOC_HOST)                                            \
    E(cuMemHostAlloc, HOST_ALLOC)                                               \
    E(cuMemAllocAsync, ALLOC_ASYNC)                                             \
    E(cuMemAllocAsync_ptsz, ALLOC_ASYNC)                                        \
    E(cuMemAllocFromPoolAsync, ALLOC_POOL_ASYNC)                                \
    E(cuMemAllocFromPoolAsync_ptsz, ALLOC_POOL_ASYNC)                           \
    E(cuMemFree, FREE)                                                          \
    E(cuMemFree_v2, FREE)                                                       \
    E(cuMemFreeHost, FREE_HOST)                                                 \
    E(cuMemFreeAsync, FREE_ASYNC)                                               \
    E(cuMemFreeAsync_ptsz, FREE_ASYNC)                                          \
    E(cuMemHostRegister, HOST_REGISTER)                                         \
    E(cuMemHostRegister_v2, HOST_REGISTER)                                      \
    E(cuMemHostUnregister, HOST_UNREGISTER)                                     \
    E(cuCtxCreate, CTX_CREATE)                                                  \
    E(cuCtxCreate_v2, CTX_CREATE)                                               \
    E(cuCtxCreate_v3, CTX_CREATE_V3)                                            \
    E(cuCtxCreate_v4, CTX_CREATE_V4)                                            \
    E(cuCtxDestroy, CTX_DESTROY)                                                \
    E(cuCtxDestroy_v2, CTX_DESTROY)                                             \
    E(cuCtxSetCurrent, CTX_SET)                                                 \
    E(cuCtxPushCurrent, CTX_PUSH)                                               \
    E(cuCtxPushCurrent_v2, CTX_PUSH)                                            \
    E(cuCtxPopCurrent, CTX_POP)                                                 \
    E(cuCtxPopCurrent_v2, CTX_POP)                                              \
    E(cuDevicePrimaryCtxRelease, PRIMARY_RELEASE)                               \
    E(cuDevicePrimaryCtxRelease_v2, PRIMARY_RELEASE)                            \
    E(cuDevicePrimaryCtxReset, PRIMARY_RESET)                                   \
    E(cuDevicePrimaryCtxReset_v2, PRIMARY_RESET)                                \
    E(cuModuleGetFunction, GET_FUNCTION)                                        \
    E(cuLibraryGetKernel, LIBRARY_GET_KERNEL)                                   \
    E(cuKernelGetFunction, KERNEL_GET_FUNCTION)                                 \
    E(cuModuleUnload, MODULE_UNLOAD)                                            \
    E(cuLibraryUnload, LIBRARY_UNLOAD)                                          \
    E(cuStreamDestroy, STREAM_DESTROY)                                          \
    E(cuStreamDestroy_v2, STREAM_DESTROY)                                       \
    E(cuGraphLaunch, GRAPH_LAUNCH)                                              \
    E(cuGraphLaunch_ptsz, GRAPH_LAUNCH)                                         \
    E(cuGraphUpload, GRAPH_UPLOAD)                                              \
    E(cuGraphUpload_ptsz, GRAPH_UPLOAD)                                         \
    E(cuGraphInstantiateWithFlags, GRAPH_INSTANTIATE)                           \
    E(cuGraphExecUpdate_v2, GRAPH_EXEC_UPDATE)                                  \
    E(cuStreamWaitValue32, WAIT_VALUE32)                                        \
    E(cuStreamWaitValue32_ptsz, WAIT_VALUE32)                                   \
    E(cuStreamWaitValue32_v2, WAIT_VALUE32)                                     \
    E(cuStreamWaitValue32_v2_ptsz, WAIT_VALUE32)                                \
    E(cuStreamWaitValue64, WAIT_VALUE64)                                        \
    E(cuStreamWaitValue64_ptsz, WAIT_VALUE64)                                   \
    E(cuStreamWaitValue64_v2, WAIT_VALUE64)                                     \
    E(cuStreamWaitValue64_v2_ptsz, WAIT_VALUE64)                                \
    E(cuStreamWriteValue32, WRITE_VALUE32)                                      \
    E(cuStreamWriteValue32_ptsz, WRITE_VALUE32)                                 \
    E(cuStreamWriteValue32_v2, WRITE_VALUE32)                                   \
    E(cuStreamWriteValue32_v2_ptsz, WRITE_VALUE32)                              \
    E(cuStreamWriteValue64, WRITE_VALUE64)                                      \
    E(cuStreamWriteValue64_ptsz, WRITE_VALUE64)                                 \
    E(cuStreamWriteValue64_v2, WRITE_VALUE64)                                   \
    E(cuStreamWriteValue64_v2_ptsz, WRITE_VALUE64)
