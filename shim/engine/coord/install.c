/* install.c - installing the engine into the core table (each interposed
 * entry gets the hook its role in entries.h names), its settings from the
 * options, and its reset for tests. */
#include "hooks.h"

#include <stdlib.h>
#include <string.h>

/* ---- installation ------------------------------------------------------------------- */

#define INSTALL(name, params, args, role) INSTALL_(name, RP_UNPACK role)
#define INSTALL_(...) INSTALL__(__VA_ARGS__)
#define INSTALL__(name, kind, arg, n) INSTALL_##kind(name)
#define INSTALL_FWD(name)
#define INSTALL_HOOK(name)                                                                      \
    if (core->name)                                                                             \
        core->name = rp__hook_##name;
#define INSTALL_GLOBAL INSTALL_HOOK
#define INSTALL_STREAM INSTALL_HOOK
#define INSTALL_CAPTURE INSTALL_HOOK
#define INSTALL_STREAM_DESTROY INSTALL_HOOK
#define INSTALL_CTX_SYNC INSTALL_HOOK
#define INSTALL_BEGIN_CAPTURE INSTALL_HOOK
#define INSTALL_END_CAPTURE INSTALL_HOOK
#define INSTALL_TEARDOWN INSTALL_HOOK
#define INSTALL_NOTE_KERNEL INSTALL_HOOK
#define INSTALL_EVENT INSTALL_HOOK
#define INSTALL_QUERY INSTALL_HOOK

int rp__engine_install(struct rp__driver *core, const struct rp__driver *drv,
                       const struct rp__engine_config *cfg)
{
    /* Every helper, and every capturable entry the engine re-issues
     * through, must be there. */
#define NEED_ROLE(name, kind, arg, optional)                                                 \
    if (!(optional) && !drv->name) {                                                            \
        rp__warn("the driver lacks %s, which the capture engine needs; forwarding only", #name); \
        return -1;                                                                              \
    }
#define NEED_EXPAND(...) __VA_ARGS__
#define NEED_ROLE_OF(name, ...) NEED_ROLE(name, __VA_ARGS__)
#define NEED(name, params, args, role) NEED_ROLE_OF(name, NEED_EXPAND role)
    RP_HELPERS(NEED)
#undef NEED
#undef NEED_ROLE_OF
#undef NEED_EXPAND
#undef NEED_ROLE
    static const enum rp__entry issued[] = {
        RP_E_cuLaunchKernel, RP_E_cuMemcpyHtoDAsync_v2, RP_E_cuMemcpyDtoHAsync_v2,
        RP_E_cuMemcpyDtoDAsync_v2, RP_E_cuMemsetD8Async, RP_E_cuMemsetD16Async,
        RP_E_cuMemsetD32Async, RP_E_cuGraphLaunch, RP_E_cuGraphLaunch_ptsz, RP_E_cuGraphUpload,
        RP_E_cuStreamBeginCapture_v2, RP_E_cuStreamEndCapture, RP_E_cuStreamGetCaptureInfo_v2,
        RP_E_cuEventRecord, RP_E_cuEventSynchronize, RP_E_cuStreamWaitEvent,
        RP_E_cuStreamSynchronize, RP_E_cuStreamDestroy_v2, RP_E_cuMemHostAlloc,
        RP_E_cuMemFreeHost, RP_E_cuCtxPushCurrent_v2, RP_E_cuCtxPopCurrent_v2,
        RP_E_cuEventCreate, RP_E_cuEventDestroy_v2, RP_E_cuEventQuery,
        RP_E_cuGraphInstantiateWithFlags, RP_E_cuGraphExecUpdate_v2};
    for (size_t i = 0; i < sizeof issued / sizeof issued[0]; i++) {
        if (!rp__driver_get(drv, issued[i])) {
            rp__warn("the driver lacks %s, which the capture engine needs; forwarding only",
                     rp__entry_names[issued[i]]);
            return -1;
        }
    }
    rp__eng.drv = drv;
    rp__eng.cfg = *cfg;
    rp__lc_driver_from(&rp__eng.lc_drv, drv);
    RP_ENTRIES(INSTALL)
    return 0;
}

int rp__engine_setup(struct rp__driver *core, const struct rp__driver *real)
{
    struct rp__engine_config cfg = {
        .warmup = (unsigned int)rp__option(RP_OPTION_WARMUP).count,
        .max_variants = (unsigned int)rp__option(RP_OPTION_MAX_VARIANTS).count,
        .min_ops = rp__option(RP_OPTION_MIN_OPS).count,
        .max_ops = rp__option(RP_OPTION_MAX_OPS).count,
        .max_held = rp__option(RP_OPTION_MAX_HELD).count,
        .patience = rp__option(RP_OPTION_PATIENCE).count,
        .idle_us = (unsigned int)rp__option(RP_OPTION_IDLE_US).count,
        .parts = rp__option(RP_OPTION_PARTS).b,
        .max_graphs = rp__option(RP_OPTION_MAX_GRAPHS).count,
        .max_staging = rp__option(RP_OPTION_MAX_STAGING).count,
        .max_seq_bytes = rp__option(RP_OPTION_MAX_SEQ_BYTES).count,
        .table_size = rp__option(RP_OPTION_TABLE).count,
    };
    cfg.cost.max_updates = rp__option(RP_OPTION_MAX_UPDATES).count;
    rp__cost_parse(rp__option(RP_OPTION_COSTS).path, &cfg.cost);
    return rp__engine_install(core, real, &cfg);
}

void rp__engine_reset(void)
{
    size_t n = atomic_load_explicit(&rp__eng.nctxs, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        rp_ctxstate *cs = &rp__eng.ctxs[i];
        rp__forget_ctx(cs, RP_CTX_DIES); /* destroys graphs, streams, private streams */
        for (size_t k = 0; k < cs->nstreams; k++)
            rp__stream_free(&cs->streams[k]); /* those a hand-off kept */
        rp__det_fini(&cs->det);
        rp__det_fini(&cs->sdet);
        rp__lc_ctx_fini(&cs->lc);
        free(cs->seqs);
        free(cs->upd);
        pthread_rwlock_destroy(&cs->gate);
        memset(cs, 0, sizeof *cs);
    }
    atomic_store(&rp__eng.nctxs, 0);
    rp__ev_forget_all();
    rp__rec_forget_kernels();
    pthread_mutex_lock(&rp__eng.retired_lock);
    rp__eng.nretired = 0;
    pthread_mutex_unlock(&rp__eng.retired_lock);
    for (size_t b = 0; b < RP_BOUND_COUNT; b++)
        atomic_store(&rp__eng.hits_without_context[b], 0);
    atomic_store(&rp__eng.issued, 0);
    atomic_store(&rp__eng.frees, 0);
    atomic_store(&rp__eng.ev_deferred, 0);
    atomic_store(&rp__eng.rejoins, 0);
    atomic_store(&rp__eng.prog_captures, 0);
    atomic_store(&rp__eng.prog_pending, 0);
    atomic_store(&rp__eng.prog_captures_total, 0);
    atomic_store(&rp__eng.func_fixed, 0);
    atomic_fetch_add(&rp__eng.stream_gen, 1); /* every thread's cache is stale */
}
