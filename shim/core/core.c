/* core.c - the tables every wrapper reads, and the flags that say how to
 * use them: the real driver (rp__real), what an enabled wrapper calls
 * (rp__core: the real entries with the engine's hooks and the
 * cuGetProcAddress hooks put in by init.c), whether reprise is enabled,
 * whether a driver was loaded, and the calls and lookups the face counted. Data only: this file calls nothing, so every
 * part of the shim may read it without tying itself to the rest. */
#include "core.h"

/* The exported name of each entry of the list (entries.h). */
const char *const rp__entry_names[RP_DRIVER_COUNT] = {
#define X(name, params, args, role) [RP_E_##name] = #name,
    RP_ENTRIES(X)
    RP_HELPERS(X)
#undef X
};

_Atomic int rp__state = RP_INIT_NONE;
bool rp__enabled;
bool rp__trace_alone;
struct rp__driver rp__real;
struct rp__driver rp__core;
RP_TLS int rp__depth;
bool rp__loaded;

/* Calls per exported name, and lookups, counted by the face (interpose.c,
 * procaddr.c; the report reads them). */
_Atomic uint64_t rp__calls[RP_E_COUNT];
_Atomic uint64_t rp__lookups;
_Atomic uint64_t rp__lookups_wrapped;
_Atomic unsigned char rp__handed_out[RP_E_COUNT];

bool rp__driver_loaded(void)
{
    return rp__loaded;
}

CUresult rp__missing(enum rp__entry id)
{
    if (!rp__loaded)
        return id == RP_E_cuInit ? CUDA_ERROR_NO_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
    /* The driver exists but lacks this entry: a program linked against it
     * would not have started, and its cuGetProcAddress would have given no
     * pointer.  Only callers that bound to our symbol get here. */
    return CUDA_ERROR_NOT_FOUND;
}
