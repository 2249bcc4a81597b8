/* play.c - the player's run (`reprise replay`, docs/trace.md "Replaying"):
 * a first pass over the whole trace (a damaged trace is not replayed at
 * all; every function, the sizes of the pageable buffers and which value
 * waits a recorded write releases are known before the first call), the
 * driver loaded, every job played (play_threads.c), and the summary line. */
#include "play.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define P pl__P

/* ---- the first pass: what the replay needs to know in advance ------------------------------- */

static void first_pass(void)
{
    struct rt_rec rec;
    int rc;
    size_t nwcap = 0;
    for (;;) {
        P.at = P.r.pos;
        if ((rc = rt_next(&P.r, &rec)) != 1)
            break;
        if (rec.tag != RP_TR_CALL)
            continue;
        const struct rt_call *k = &rec.call;
        if (!P.main_tid)
            P.main_tid = k->tid;
        if (P.r.nmems > P.nfirst) {
            size_t n = P.nfirst;
            PL_GROW(P.pageable_size, n, P.r.nmems);
            n = P.nfirst;
            PL_GROW(P.written_by_device, n, P.r.nmems);
            P.nfirst = n;
        }
        switch (k->family) {
        case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
        case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
            if (k->src.space == RP_TS_PAGEABLE && k->bytes > P.pageable_size[k->src.id])
                P.pageable_size[k->src.id] = k->bytes;
            if (k->dst.space == RP_TS_PAGEABLE && k->bytes > P.pageable_size[k->dst.id])
                P.pageable_size[k->dst.id] = k->bytes;
            if (k->dst.space == RP_TS_HOST)
                P.written_by_device[k->dst.id] = true;
            break;
        case RP_TRF_HOSTFN:
            P.any_hostfn = true;
            break;
        case RP_TRF_HOST_ALLOC:
            if (k->mem && (k->flags & CU_MEMHOSTALLOC_DEVICEMAP))
                P.written_by_device[k->mem] = true;
            break;
        case RP_TRF_HOST_REGISTER:
            if (k->mem && (k->flags & CU_MEMHOSTREGISTER_DEVICEMAP))
                P.written_by_device[k->mem] = true;
            break;
        case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64:
            PL_GROW(P.value_writes, nwcap, P.nvalue_writes);
            P.value_writes[P.nvalue_writes++] = (struct pl_write){k->dst, k->value};
            break;
        default:
            break;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "reprise replay: %s\n", P.r.err);
        exit(1);
    }
    size_t n = P.nfirst;
    PL_GROW(P.pageable_size, n, P.r.nmems);
    n = P.nfirst;
    PL_GROW(P.written_by_device, n, P.r.nmems);
    P.nfirst = n;
    pl_write_ptx();
    rt_rewind(&P.r);
}

/* ---- the run ---------------------------------------------------------------------------------- */

static void summary(uint64_t took)
{
    char recorded[160];
    rt_format_ns(recorded, sizeof recorded, rt_duration(&P.r));
    if (P.o.jitter) {
        size_t n = strlen(recorded);
        snprintf(recorded + n, sizeof recorded - n, ", jittered: seed %" PRIu64 ", scale %g",
                 P.o.jitter_seed, P.o.jitter_scale);
    }
    fprintf(stderr,
            "reprise replay: %s: %" PRIu64 " calls on %zu threads in %.3f s (recorded %s%s)%s: "
            "%" PRIu64 " issued, %" PRIu64 " not; %" PRIu64 " results differed from the program's, "
            "%" PRIu64 " query answers\n",
            P.o.file, P.calls, pl_threads(), (double)took / 1e9, recorded,
            P.r.ended ? "" : ", not closed", P.o.in_shim ? " under the shim" : "", P.issued,
            P.not_issued, P.differed, P.answers_differed);
    for (int w = 0; w < W_N; w++) {
        if (!P.why[w])
            continue;
        fprintf(stderr, "  not issued, %s: %" PRIu64, pl_why_names[w], P.why[w]);
        const char *sep = " (";
        int shown = 0;
        for (size_t i = 0; w == W_GENERIC && i < P.nentries && shown < 6; i++)
            if (P.entries[i].skipped && P.entries[i].name) {
                fprintf(stderr, "%s%s %" PRIu64, sep, P.entries[i].name, P.entries[i].skipped);
                sep = ", ";
                shown++;
            }
        fprintf(stderr, "%s\n", shown ? (shown == 6 ? ", ...)" : ")") : "");
    }
}

int pl_run(const struct pl_options *o)
{
    P.o = *o;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    P.host_limit = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
    if (rt_open(&P.r, o->file) != 0) {
        fprintf(stderr, "reprise replay: %s\n", P.r.err);
        return 1;
    }
    first_pass();
    P.drv = dlopen(o->driver, RTLD_NOW | RTLD_LOCAL);
    if (!P.drv) {
        fprintf(stderr, "reprise replay: cannot load the driver %s: %s\n", o->driver, dlerror());
        return 1;
    }
    P.ctx_current = (CUresult (CUDAAPI *)(CUcontext *))pl_sym("cuCtxGetCurrent");
    P.primary_retain = (CUresult (CUDAAPI *)(CUcontext *, CUdevice))pl_sym("cuDevicePrimaryCtxRetain");
    P.stream_create = (CUresult (CUDAAPI *)(CUstream *, unsigned int, int))pl_sym("cuStreamCreateWithPriority");
    P.module_load = (CUresult (CUDAAPI *)(CUmodule *, const void *))pl_sym("cuModuleLoadData");
    P.library_load = (CUresult (CUDAAPI *)(CUlibrary *, const void *, CUjit_option *, void **, unsigned int,
                                           CUlibraryOption *, void **, unsigned int))pl_sym("cuLibraryLoadData");
    P.get_function = (CUresult (CUDAAPI *)(CUfunction *, CUmodule, const char *))pl_sym("cuModuleGetFunction");
    P.get_kernel = (CUresult (CUDAAPI *)(CUkernel *, CUlibrary, const char *))pl_sym("cuLibraryGetKernel");
    P.push = (CUresult (CUDAAPI *)(CUcontext))pl_sym("cuCtxPushCurrent_v2");
    P.pop = (CUresult (CUDAAPI *)(CUcontext *))pl_sym("cuCtxPopCurrent_v2");
    P.init = (CUresult (CUDAAPI *)(unsigned int))pl_sym("cuInit");
    P.alloc = (CUresult (CUDAAPI *)(CUdeviceptr *, size_t))pl_sym("cuMemAlloc_v2");
    P.alloc_host = (CUresult (CUDAAPI *)(void **, size_t))pl_sym("cuMemAllocHost_v2");
    P.event_create = (CUresult (CUDAAPI *)(CUevent *, unsigned int))pl_sym("cuEventCreate");
    P.fidelity_own = (void (*)(int))pl_sym("cpucuda_fidelity_own");
    P.fidelity_alias = (void (*)(unsigned long long, unsigned long long, unsigned long long))pl_sym(
        "cpucuda_fidelity_alias");

    P.t0 = pl_now_ns();
    pl_play();
    int rc = pl_order_rc();
    if (rc < 0)
        fprintf(stderr, "reprise replay: %s; replayed what came before it\n", P.r.err);
    else if (!P.r.ended)
        fprintf(stderr, "reprise replay: %s\n", P.r.notice);
    summary(pl_now_ns() - P.t0);
    rt_close(&P.r);
    if (rc < 0)
        return 1;
    return P.o.strict && P.differed ? 3 : 0;
}
