/* trace_defs.h - the ids the trace's records name, and the header of a call
 * record (trace_defs.c). Under the writer's lock. */
#ifndef RP_TRACE_DEFS_H
#define RP_TRACE_DEFS_H

#include "trace_file.h"

/* ---- maps from handles to small ids ------------------------------------------ */

#define TR_MAP_EMPTY 0ull
#define TR_MAP_TOMB (~0ull)

static inline uint32_t rp__tr_map_slot(uint64_t k, uint32_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k & (cap - 1);
}

/* The id of key k + 1, or 0 when absent. */
static inline uint32_t rp__tr_map_get(const struct tr_map *m, uint64_t k)
{
    if (!m->cap)
        return 0;
    for (uint32_t i = rp__tr_map_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            return m->vals[i];
        if (m->keys[i] == TR_MAP_EMPTY)
            return 0;
    }
}

/* Sets k to v (v + 1 is stored: 0 means absent). Returns false, the map
 * unchanged, when memory runs out. */
bool rp__tr_map_put(struct tr_map *m, uint64_t k, uint32_t v);
void rp__tr_map_del(struct tr_map *m, uint64_t k);

/* ---- handles ------------------------------------------------------------------ */

/* The id of context c; a context not seen created is defined here (a
 * primary context: retained outside the interposed calls). `valid` (here
 * and below): the handle may be asked about (the call that named it
 * succeeded). */
uint32_t rp__tr_ctx(CUcontext c, bool valid);

/* The id of stream s, defined (context, flags, priority) when new. */
uint32_t rp__tr_stream_new(CUstream s, bool valid);
static inline uint32_t rp__tr_stream(CUstream s, bool valid)
{
    if (s == NULL)
        return RP_TSTREAM_NULL;
    if (s == CU_STREAM_LEGACY)
        return RP_TSTREAM_LEGACY;
    if (s == CU_STREAM_PER_THREAD)
        return RP_TSTREAM_PER_THREAD;
    if ((uint64_t)(uintptr_t)s == rp__tr_W.last_stream_key)
        return rp__tr_W.last_stream_id;
    return rp__tr_stream_new(s, valid);
}

uint32_t rp__tr_event(CUevent e);
/* kind: 0 a module, 1 a library. */
uint32_t rp__tr_module(const void *m, unsigned kind);

/* The function of handle h, defined (name, parameter layout) when new.
 * kind: 0 a module's CUfunction, 1 a CUkernel, 2 the CUfunction of a
 * CUkernel (parent: that kernel's func id). NULL when h is or memory ran
 * out. */
struct tr_func *rp__tr_func_new(const void *h, unsigned kind, uint32_t parent, const char *name,
                                bool valid);
static inline struct tr_func *rp__tr_func(const void *h, unsigned kind, uint32_t parent,
                                          const char *name, bool valid)
{
    if (!h)
        return NULL;
    if (h == rp__tr_W.last_fn_key)
        return rp__tr_W.last_fn;
    return rp__tr_func_new(h, kind, parent, name, valid);
}
/* Forgets handle h (its module was unloaded: the handle may come back). */
void rp__tr_func_forget(const void *h);
/* Forgets every function of module `mid` (unloaded). */
void rp__tr_module_forget_functions(uint32_t mid);

/* ---- what a context owns (trace_own.c) ----------------------------------------- */

/* The id of the calling thread's current context (defined when new); 0
 * when there is none. */
uint32_t rp__tr_ctx_current(void);
/* Handle `id` of `kind` belongs to context `ctx` (0: to none). On a failed
 * allocation recording stops (rp__tr_nomem) and nothing else changes. */
void rp__tr_own(enum tr_own kind, uint32_t id, uint32_t ctx);
/* The context handle `id` of `kind` belongs to; 0 when none or unknown. */
uint32_t rp__tr_owner(enum tr_own kind, uint32_t id);
/* Context `id` is on device `device`, a primary context or not (the same
 * failure contract as rp__tr_own). */
void rp__tr_ctx_info(uint32_t id, uint32_t device, bool primary);
/* Context `ctx` was torn down: every handle it owned (streams, events,
 * modules, their functions, executables, memory ranges) is forgotten, so
 * that the driver's handing the same value out again defines a new id. */
void rp__tr_ctx_gone(uint32_t ctx);
/* The same for the primary context of `device` (released to nothing, or
 * reset); the context keeps its id, since its handle stays the same. */
void rp__tr_primary_gone(uint32_t device);

/* ---- memory -------------------------------------------------------------------- */

/* A new memory id for [base, base + size) in `space`, allocated in context
 * `ctx` (trace id; 0: unknown); an older range it overlaps (memory freed
 * outside the calls the trace sees) is dropped. */
uint32_t rp__tr_range_add(uintptr_t base, size_t size, unsigned char space, uint32_t ctx);
void rp__tr_range_del(uintptr_t base);

/* How an address is written (tracefmt.h, "Addresses"). */
struct tr_addr {
    uint32_t id;
    unsigned char space;
    uint64_t off; /* the offset, or the raw address */
};

enum tr_addr_kind { TR_A_DEVICE, TR_A_HOST, TR_A_UNIFIED };

/* Where address a lies (trace_defs.c). */
struct tr_addr rp__tr_addr(uint64_t a, enum tr_addr_kind kind, bool valid);

static inline unsigned char *rp__tr_put_addr(unsigned char *p, struct tr_addr a)
{
    p = rp_tv_put(p, (uint64_t)a.id << 2 | a.space);
    if (a.space != RP_TS_PAGEABLE)
        p = rp_tv_put(p, a.off);
    return p;
}

/* ---- calls ---------------------------------------------------------------------- */

struct tr_call {
    enum rp__entry e;
    unsigned fam;
    CUresult r;
    uint64_t t0;
    uint64_t dur; /* ticks; written when nonzero */
    bool ok;      /* r == CUDA_SUCCESS */
    uint64_t seq; /* its place in the order calls began */
};

/* The call record's header (its thread and entry defined first when new);
 * the caller appends `payload` bytes at most and ends it. NULL once
 * recording stopped. */
unsigned char *rp__tr_call_begin(const struct tr_call *c, size_t payload);

static inline void rp__tr_call_end(unsigned char *p)
{
    if (p)
        rp__tr_rec_end(RP_TR_CALL, p);
}

/* The DEVICE records (after cuInit). */
void rp__tr_record_devices(void);

#endif /* RP_TRACE_DEFS_H */
