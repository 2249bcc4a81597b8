/* errors.c - cuGetErrorName / cuGetErrorString for every code the driver
 * returns (and the common ones around them). Both work before cuInit. */
#include "internal.h"

#include <stddef.h>

#define CC_ERRORS(X)                                                                     \
    X(CUDA_SUCCESS, "no error")                                                          \
    X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                      \
    X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                         \
    X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                \
    X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                  \
    X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                        \
    X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                               \
    X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                        \
    X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                              \
    X(CUDA_ERROR_FILE_NOT_FOUND, "file not found")                                       \
    X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                              \
    X(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state")\
    X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                    \
    X(CUDA_ERROR_NOT_READY, "device not ready")                                          \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch")  \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, "unsupported execution affinity")            \
    X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                               \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture") \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences") \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not initiated in this stream")   \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work")          \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream") \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread") \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
    X(CUDA_ERROR_UNKNOWN, "unknown error")

static const struct { CUresult code; const char *name, *text; } errors[] = {
#define X(code, text) {code, #code, text},
    CC_ERRORS(X)
#undef X
};

static const void *lookup(CUresult e, bool name)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) return name ? errors[i].name : errors[i].text;
    return NULL;
}

CC_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    CC_ENTER(cuGetErrorName);
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = lookup(error, true);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CC_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    CC_ENTER(cuGetErrorString);
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    *pStr = lookup(error, false);
    return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
