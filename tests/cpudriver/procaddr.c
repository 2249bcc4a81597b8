/* procaddr.c - cuGetProcAddress (v1 and v2) and cuGetExportTable. Names
 * resolve like the real driver's: by base name, the requested CUDA version
 * (the newest ABI variant introduced at or before it) and the flags (the
 * per-thread variant where one exists). The table is entries.h; pointers come
 * from dlsym on the driver's own handle, so a preloaded shim that overrides
 * dlsym still gives us our own functions. */
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

typedef struct { const char *name, *base; int ver; int pt; } pa_row;

static const pa_row rows[] = {
#define CC_ENTRY(name, base, ver, pt) {#name, #base, ver, pt},
#include "entries.h"
#undef CC_ENTRY
    /* From 12.0, "cuGraphInstantiate" is the WithFlags ABI (cuda.h maps the
     * name to cuGraphInstantiateWithFlags). */
    {"cuGraphInstantiateWithFlags", "cuGraphInstantiate", 12000, 0},
};

static void *self_handle(void)
{
    static void *h;
    if (!h) {
        Dl_info info;
        if (dladdr((void *)&self_handle, &info) && info.dli_fname)
            h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    }
    return h;
}

/* Picks the row for (symbol, version, flags). Returns the status. */
static CUdriverProcAddressQueryResult pick(const char *symbol, int ver, cuuint64_t flags, const pa_row **out)
{
    bool known = false;
    const pa_row *best = NULL, *best_pt = NULL;
    bool want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const pa_row *r = &rows[i];
        if (strcmp(r->base, symbol)) continue;
        known = true;
        if (r->ver > ver) continue;
        if (r->pt) {
            if (want_pt && (!best_pt || r->ver > best_pt->ver)) best_pt = r;
        } else if (!best || r->ver > best->ver) {
            best = r;
        }
    }
    if (!known) return CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *out = best_pt ? best_pt : best;
    return *out ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
}

/* Works before cuInit. Per the 13.0 header: CUDA_SUCCESS with *pfn = NULL
 * when nothing matches (the status says why); INVALID_VALUE for a NULL
 * symbol/pfn, bad flags, or a version newer than this driver. */
static CUresult resolve(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    if (ver > CC_DRIVER_VERSION) return CUDA_ERROR_INVALID_VALUE;
    const pa_row *r = NULL;
    CUdriverProcAddressQueryResult st = pick(symbol, ver, flags, &r);
    if (st == CU_GET_PROC_ADDRESS_SUCCESS) {
        void *h = self_handle();
        *pfn = h ? dlsym(h, r->name) : NULL;
        if (!*pfn) st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    if (status) *status = st;
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    CC_ENTER(cuGetProcAddress);
    return resolve(symbol, pfn, cudaVersion, flags, NULL);
}

CC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
    CC_ENTER(cuGetProcAddress_v2);
    return resolve(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CC_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    CC_ENTER(cuGetExportTable);
    (void)pExportTableId;
    if (ppExportTable) *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED; /* the runtime's private tables */
}
