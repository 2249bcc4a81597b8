/* Internal interfaces of libreprise.so, shared by the files of shim/.
 *
 * The data path, in file order: interpose.c (the exported wrappers) calls the
 * core table (core.c holds it) when reprise is enabled, or the real table
 * directly when it is not; dlsym.c and procaddr.c route lookups to the
 * wrappers through route.c; driver.c finds the real driver and fills the real
 * table; init.c runs all of it once and installs the capture engine
 * (engine.h) into the core table; options.c, log.c and stats.c are the
 * configuration and the report.  Internal names carry the `rp__` prefix;
 * nothing here is exported (-fvisibility=hidden). rp__enabled is set once by
 * init, and cleared in a forked child. */
#ifndef RP_SHIM_H
#define RP_SHIM_H

/* Every declaration in cuda.h, including the v1 and per-thread variants that
 * the wrappers must match. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "check.h"
#include "entries.h"
#include "options.h"

#define RP_EXPORT __attribute__((visibility("default")))
#define RP_LIKELY(x) __builtin_expect(!!(x), 1)
#define RP_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Thread-locals are initial-exec: the shim is preloaded (static TLS is
 * reserved for it), and the general-dynamic model would call __tls_get_addr,
 * which may allocate, on a wrapper's path. */
/* For code on dlsym's path before the name is known to be ours: a sanitizer
 * runtime looks up its interceptors with dlsym before its shadow memory
 * exists, and instrumented code would fault there. */
#define RP_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))
#define RP_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- the entry list (entries.h) ---------------------------------------- */

/* Interposed entries first (RP_E_COUNT of them: wrappers, routes, counters
 * exist for these only), then the engine's helpers (RP_DRIVER_COUNT in all:
 * the driver table holds both). */
enum rp__entry {
#define X(name, params, args, role) RP_E_##name,
    RP_ENTRIES(X)
    RP_E_COUNT,
    RP_E_HELPERS_ = RP_E_COUNT - 1,
    RP_HELPERS(X)
#undef X
    RP_DRIVER_COUNT
};

/* A table of driver entry points, one member per listed entry, each with the
 * exact prototype.  The same type serves for the real driver, for the core
 * the wrappers call, and for unit-test fakes.  A NULL member means "this
 * driver does not have it". */
struct rp__driver {
#define X(name, params, args, role) CUresult(CUDAAPI *name) params;
    RP_ENTRIES(X)
    RP_HELPERS(X)
#undef X
};

/* The exported name of entry `id` (helpers included). */
extern const char *const rp__entry_names[RP_DRIVER_COUNT];
/* Our exported wrapper of entry `id` (interpose.c). */
extern void *const rp__wrappers[RP_E_COUNT];

/* Read or write member `id` of a table as a plain pointer. */
void *rp__driver_get(const struct rp__driver *d, enum rp__entry id);
void rp__driver_set(struct rp__driver *d, enum rp__entry id, void *fn);

/* ---- init.c: the once-only initialisation ------------------------------- */

enum rp__init_state { RP_INIT_NONE, RP_INIT_RUNNING, RP_INIT_READY };

extern _Atomic int rp__state;
/* Set before rp__state becomes READY and never changed afterwards. */
extern bool rp__enabled;
/* True when the wrappers are on for a trace alone (REPRISE_TRACE set,
 * REPRISE off, docs/trace.md): the report then says the shim is not
 * enabled and has no engine keys. Set by init. */
extern bool rp__trace_alone;
/* The real driver, and what an enabled wrapper calls (core.c). */
extern struct rp__driver rp__real;
extern struct rp__driver rp__core;
/* Whether a driver was loaded (core.c; set by init). */
extern bool rp__loaded;
/* Nonzero while this thread runs inside the core or inside init: calls that
 * come back into a wrapper from there go straight to the driver. */
extern RP_TLS int rp__depth;

/* The result a wrapper returns when the real entry point is missing: cuInit
 * CUDA_ERROR_NO_DEVICE and the others CUDA_ERROR_NOT_INITIALIZED when no
 * driver could be loaded; CUDA_ERROR_NOT_FOUND when the driver is loaded but
 * does not export this entry.  Out-parameters are left untouched. */
CUresult rp__missing(enum rp__entry id);
/* Whether a real driver was installed (false after a failed load). */
bool rp__driver_loaded(void);

/* ---- route.c: names and pointers to wrappers ---------------------------- */

/* The entry exported under exactly `name`, or -1.  Only names of the list
 * match: "cuLaunchKernelX", "cudnnCreate" and "cu" do not. */
RP_NO_SANITIZE int rp__entry_by_name(const char *name);

/* Real pointer -> entry, for one real-entry table. */
struct rp__route {
    struct rp__route_entry {
        const void *real;
        int id;
    } by_ptr[RP_E_COUNT];
    size_t n;
};
/* Build the map of `real`'s non-NULL members, sorted by address.  When two
 * entries share one address (an alias in the driver), the first in list
 * order wins: both wrappers would forward to the same function. */
void rp__route_build(struct rp__route *r, const struct rp__driver *real);
/* The entry whose real pointer is `p`, or -1. */
int rp__route_find(const struct rp__route *r, const void *p);

extern struct rp__route rp__routes;

/* ---- procaddr.c: the cuGetProcAddress hooks ------------------------------ */

/* Call `real`'s resolver, then replace the pointer it returns by our wrapper
 * when `routes` knows it (pointer identity); anything else is returned as the
 * driver gave it.  The CUresult and *symbolStatus are the driver's. */
CUresult rp__procaddr_v1(const struct rp__driver *real, const struct rp__route *routes,
                         const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult rp__procaddr_v2(const struct rp__driver *real, const struct rp__route *routes,
                         const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *symbolStatus);
/* The pointer to hand out for a real pointer `p` (our wrapper, or `p`). */
void *rp__procaddr_map(const struct rp__route *routes, void *p);
/* The core's resolver pair: rp__procaddr_v1/v2 on rp__real and rp__routes. */
CUresult CUDAAPI rp__procaddr_hook_v1(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags);
CUresult CUDAAPI rp__procaddr_hook_v2(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *symbolStatus);

/* ---- driver.c: the real driver ------------------------------------------ */

/* The real dlsym (dlvsym(RTLD_NEXT, "dlsym", GLIBC_2.34 or 2.2.5)); never
 * NULL: a stub returning NULL stands in if neither version exists. */
typedef void *(*rp__dlsym_fn)(void *, const char *);
RP_NO_SANITIZE rp__dlsym_fn rp__dlsym_real(void);
/* Where rp__dlsym_real() keeps it; the exported dlsym (dlsym_export.c) jumps
 * through it after rp__dlsym_route has run, which always resolves it. */
extern _Atomic(rp__dlsym_fn) rp__dlsym_next;

/* Load the driver named by REPRISE_DRIVER (reusing a loaded one) and resolve
 * every listed entry (interposed and helper) into `out`.  On failure returns false, prints one line on
 * stderr, and leaves `out` all NULL. */
bool rp__driver_load(struct rp__driver *out);
/* What dlopen said when rp__driver_load failed; "" when it did not. */
const char *rp__driver_load_error(void);
/* The driver handle we loaded (NULL if none). */
extern void *rp__driver_handle;
/* Whether `addr` lies in the driver's mapped segments (computed at load). */
bool rp__driver_contains(const void *addr);
/* Whether `handle` is the driver: the one we loaded, or any object whose
 * file name starts with "libcuda.so". */
bool rp__is_driver_handle(void *handle);

/* ---- dlsym.c: the dlsym routing decision -------------------------------- */

/* Our wrapper for dlsym(handle, name) called from `caller`, or NULL when the
 * lookup must go to the real dlsym untouched.  Never allocates or logs. */
RP_NO_SANITIZE void *rp__dlsym_route(void *handle, const char *name, const void *caller);

/* ---- options.c ----------------------------------------------------------- */

/* Parse the environment once (later calls do nothing).  Invalid values are
 * warned about, one line each, and replaced by the default. */
void rp__options_parse(void);
/* Forget the parsed values (unit tests). */
void rp__options_reset(void);
union rp__option_value rp__option(enum rp__option_id id);
/* Whether a kernel of this name may be captured (REPRISE_EXCLUDE and
 * REPRISE_INCLUDE globs, from the environment or the config file). */
bool rp__option_kernel_allowed(const char *name);
/* Print the version and every option's effective value (debug level). */
void rp__options_log(void);

/* ---- nvtx.c: ranges for Nsight Systems (REPRISE_NVTX) -------------------- */
/* Whether ranges are on: -1 until the option is read (by the first push or
 * pop), then 0 or 1; tested inline, so that a replay with NVTX off pays a
 * load, not two calls. */
extern _Atomic int rp__nvtx_on;
void rp__nvtx_push_on(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rp__nvtx_pop_on(void);
#define rp__nvtx_push(...)                                                       \
    do {                                                                         \
        if (atomic_load_explicit(&rp__nvtx_on, memory_order_relaxed))           \
            rp__nvtx_push_on(__VA_ARGS__);                                       \
    } while (0)
#define rp__nvtx_pop()                                                           \
    do {                                                                         \
        if (atomic_load_explicit(&rp__nvtx_on, memory_order_relaxed))           \
            rp__nvtx_pop_on();                                                   \
    } while (0)

/* ---- log.c --------------------------------------------------------------- */

extern int rp__log_level;
/* One line "reprise: <message>\n" on stderr, if `level` is enabled.  Fixed
 * buffer (longer messages are cut), no allocation, no recursion; errno is
 * preserved. */
void rp__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define rp__error(...) rp__log(RP_LOG_ERROR, __VA_ARGS__)
#define rp__warn(...) rp__log(RP_LOG_WARN, __VA_ARGS__)
#define rp__info(...) rp__log(RP_LOG_INFO, __VA_ARGS__)
#define rp__debug(...) rp__log(RP_LOG_DEBUG, __VA_ARGS__)
/* A line per op: checked before the call, so that it costs one compare
 * unless REPRISE_LOG=trace. */
#define rp__trace(...)                                                          \
    do {                                                                        \
        if (RP_UNLIKELY(rp__log_level >= RP_LOG_TRACE))                         \
            rp__log(RP_LOG_TRACE, __VA_ARGS__);                                 \
    } while (0)

/* ---- stats.c ------------------------------------------------------------- */

/* Calls per exported name, counted by enabled wrappers (relaxed atomics). */
extern _Atomic uint64_t rp__calls[RP_E_COUNT];
/* cuGetProcAddress lookups answered, and answered with one of our wrappers. */
extern _Atomic uint64_t rp__lookups;
extern _Atomic uint64_t rp__lookups_wrapped;
/* Nonzero for each entry whose wrapper cuGetProcAddress handed out. */
extern _Atomic unsigned char rp__handed_out[RP_E_COUNT];

static inline void rp__count(enum rp__entry id)
{
    atomic_fetch_add_explicit(&rp__calls[id], 1, memory_order_relaxed);
}
void rp__stats_reset(void);
/* Write the report as JSON to the file descriptor `fd`.  Returns false if a
 * write failed (the file may then be partial). */
bool rp__stats_write_fd(int fd);
/* Expand `%p` (pid), `%h` (host), `%r` (rank) and `%%` in `pattern` into `out`.  Returns false, with
 * `out` unspecified, if the result does not fit. */
bool rp__stats_path(const char *pattern, char *out, size_t size);
/* Write the few-line summary (REPRISE_SUMMARY) to `fd`. */
void rp__summary_write(int fd);
/* Write the report to REPRISE_STATS, if set, atomically (a temporary file
 * renamed over it: a reader finds the previous report or this one, never a
 * part).  `final`: at exit or at a signal; nothing is written after it.
 * Not final (the program runs on), it takes only locks that are free: when
 * one stayed busy, nothing is written this time (the next period tries
 * again), never counters read while another thread changes them.
 * Safe from any thread (writes are serialised).  Returns false, with one
 * warning (once for the periodic ones), when it could not be written. */
bool rp__stats_write(bool final);

#endif /* RP_SHIM_H */
