/* trace_file.h - the trace writer's state, its lock, its clock and its
 * records (trace_file.c), which the recorder's other files (trace_defs.c,
 * trace_enc.c, trace.c) share. Everything here runs under the writer's lock
 * (rp__tr_lock) unless it says otherwise. */
#ifndef RP_TRACE_FILE_H
#define RP_TRACE_FILE_H

#include "core.h"
#include "tracefmt.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define TR_TSC 1
#endif

/* A map from handles to small ids (trace_defs.c): open addressing, keys 0
 * (empty) and ~0 (removed) reserved. */
struct tr_map {
    uint64_t *keys;
    uint32_t *vals;
    uint32_t cap, used; /* used counts tombstones too */
};

/* A function the trace defined: its layout, and what its last launch had
 * (the next launch records only what changed). */
struct tr_func {
    uint32_t id;
    uint32_t module;
    bool layout;           /* the parameter layout was read */
    bool dense;            /* its parameters tile [0, psize) in order: no padding */
    uint32_t nparams;
    uint32_t *off, *size;
    size_t psize;          /* parameter buffer bytes: max offset + size */
    unsigned grid[3], block[3], shmem;
    unsigned char *last;   /* psize bytes of the last launch's parameters */
    unsigned char *attrs;  /* the last cuLaunchKernelEx attributes, encoded */
    size_t nattrs_bytes;
    uint32_t ctx;          /* the context it belongs to (trace id; 0: none, a CUkernel) */
};

/* A memory range the trace knows: an allocation it saw, or one it looked up. */
struct tr_range {
    uintptr_t base;
    size_t size;
    uint32_t id;
    unsigned char space; /* RP_TS_DEVICE or RP_TS_HOST */
    uint32_t ctx;        /* the context it was allocated in (trace id; 0: unknown) */
};

/* Handles a context owns, by kind (trace_own.c): its teardown ends them,
 * and the driver may hand their values out again for new objects. */
enum tr_own { TR_OWN_STREAM, TR_OWN_EVENT, TR_OWN_MODULE, TR_OWN_EXEC, TR_OWN_N };

/* The owning context (trace id) of each handle of a kind, by the handle's
 * trace id. */
struct tr_owners {
    uint32_t *ctx;
    size_t cap;
};

/* What the recorder knows of a context, by its trace id. */
struct tr_ctxinfo {
    uint32_t device;
    bool primary;
};

/* The writer: one a process (trace_file.c). */
struct tr_writer {
    _Atomic int mu; /* the writer's lock (rp__tr_lock) */
    bool open;
    bool forked; /* in a child of fork(): the parent's file, never touched */
    bool data;
    int fd;
    unsigned char *map;
    size_t cap, len;
    uint64_t t0;
    uint64_t records, calls;
    uint32_t last_tid;
    uint64_t last_seq; /* the place of the previous record's call (order of entry) */
    uint32_t next_tid, next_entry, next_stream, next_event, next_ctx, next_module;
    uint32_t next_mem, next_graph, next_exec;
    uint32_t entry_id[RP_E_COUNT]; /* trace id + 1 */
    struct tr_map streams, events, ctxs, modules, funcs, graphs, execs, pageable;
    struct tr_func **fn;
    size_t nfn, capfn;
    struct tr_range *rg;
    size_t nrg, caprg;
    struct tr_owners own[TR_OWN_N];
    struct tr_ctxinfo *ctxinfo;
    size_t capctxinfo;
    unsigned char *scratch;
    size_t capscratch;
    bool devices_done;
    pthread_key_t exit_key;
    const struct rp__driver *real;
    /* driver entries the recorder asks that the engine does not use */
    CUresult (CUDAAPI *stream_priority)(CUstream, int *);
    CUresult (CUDAAPI *ctx_device)(CUdevice *);
    CUresult (CUDAAPI *ctx_device_v2)(CUdevice *, CUcontext);
    CUresult (CUDAAPI *addr_range)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (CUDAAPI *driver_version)(int *);
    CUresult (CUDAAPI *device_count)(int *);
    CUresult (CUDAAPI *device_get)(CUdevice *, int);
    CUresult (CUDAAPI *device_name)(char *, int, CUdevice);
    CUresult (CUDAAPI *device_attr)(int *, CUdevice_attribute, CUdevice);
    CUresult (CUDAAPI *device_mem)(size_t *, CUdevice);
    CUresult (CUDAAPI *func_module)(CUmodule *, CUfunction);
    CUresult (CUDAAPI *primary_state)(CUdevice, unsigned int *, int *);
    /* the last handles looked up, the common case of a loop */
    uint64_t last_stream_key;
    uint32_t last_stream_id;
    const void *last_fn_key;
    struct tr_func *last_fn;
};

extern struct tr_writer rp__tr_W;

/* One writer at a time. A test-and-set lock, not a mutex: held for a few
 * hundred instructions, uncontended it costs two atomic operations (a
 * mutex's lock and unlock cost about a hundred instructions more, a third
 * of what recording a launch costs); contended it yields, so that a holder
 * that was preempted gets the core back (machines with more threads than
 * cores). */
static inline void rp__tr_lock(void)
{
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&rp__tr_W.mu, memory_order_relaxed) &&
            !atomic_exchange_explicit(&rp__tr_W.mu, 1, memory_order_acquire))
            return;
        if (spins >= 64)
            sched_yield();
#ifdef TR_TSC
        else
            __builtin_ia32_pause();
#endif
    }
}

static inline void rp__tr_unlock(void)
{
    atomic_store_explicit(&rp__tr_W.mu, 0, memory_order_release);
}

/* Each entry's family (trace_entries.h). */
extern const unsigned char rp__tr_families[RP_E_COUNT];

/* This thread's trace id (0 before its first record) and the ticks of its
 * last call. */
extern RP_TLS uint32_t rp__tr_my_tid;
extern RP_TLS uint64_t rp__tr_my_last;

/* Ticks to ns: the factor measured at open, 32.32 fixed point. */
extern uint64_t rp__tr_ns_mul;
static inline uint64_t rp__tr_ns(uint64_t d)
{
    return (uint64_t)(((unsigned __int128)d * rp__tr_ns_mul) >> 32);
}

/* Stops recording for good: the trace stays valid up to its last record
 * (the record being written, if any, is still completed). */
void rp__tr_stop(const char *why);

/* An allocation of the recorder failed: recording stops (rp__tr_stop). What
 * the recorder keeps (the ids of handles, each function's last launch) is
 * what later records are encoded against; a trace that went on without it
 * would name one stream by two ids, or encode a launch against parameters
 * the reader does not have. */
void rp__tr_nomem(void);

/* Room for `need` more bytes, growing the file and its mapping; false once
 * recording stopped. */
bool rp__tr_reserve(size_t need);

/* A record: rp__tr_rec_begin gives where its body goes (room for `bound`
 * bytes), rp__tr_rec_end closes it at `end` and commits its tag. Between
 * the two nothing else may write. rp__tr_rec_begin returns NULL once
 * recording stopped. */
static inline unsigned char *rp__tr_rec_begin(size_t bound)
{
    if (!rp__tr_W.open)
        return NULL;
    if (rp__tr_W.len + bound + 12 > rp__tr_W.cap && !rp__tr_reserve(bound + 12))
        return NULL;
    return rp__tr_W.map + rp__tr_W.len + 2;
}
void rp__tr_rec_end(unsigned char tag, unsigned char *end);

static inline unsigned char *rp__tr_put_str(unsigned char *p, const char *s, size_t n)
{
    p = rp_tv_put(p, n);
    memcpy(p, s, n);
    return p + n;
}

/* Opens the trace at `path` (locked, sized, mapped, its header written) and
 * looks up the driver entries the recorder asks about; false after one
 * warning line. Called once, before any record. */
bool rp__tr_file_open(const char *path, const struct rp__driver *real);

/* The END record (the time `t`, in ticks), the file cut to its length and
 * closed. Under the lock. */
void rp__tr_file_close(uint64_t t);

#endif /* RP_TRACE_FILE_H */
