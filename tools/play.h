/* play.h - the player of `reprise replay` (docs/trace.md, "Replaying"): what
 * the command gives it and gets back (pl_run), and, for the player's own
 * files, their shared state and the seams between them:
 *   play.c          the run: the first pass, the driver, the summary;
 *   play_make.c     what the player makes for the trace's ids (contexts,
 *                   streams, events, modules and their PTX, functions,
 *                   memory) and forgets when a context is torn down;
 *   play_issue.c    one recorded call, issued through the entry point the
 *                   program called;
 *   play_order.c    the calls in the order they are replayed;
 *   play_threads.c  the player's threads, the baton and the host timing.
 * A trace is never trusted: the player checks every id, size and offset it
 * uses against what it made, never passes the driver a handle it knows is
 * dead, and ends anything it cannot do with one line naming the file, the
 * record and what it could not do (pl_stop), never a crash. */
#ifndef RP_PLAY_H
#define RP_PLAY_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "traceread.h"

/* What `reprise replay` asks for. */
struct pl_options {
    const char *file;   /* the trace */
    const char *driver; /* the driver library */
    bool timing;        /* --timing recorded: the host gaps as recorded (else none) */
    bool entry_order;   /* --order entered */
    bool strict;        /* a differing result exits 3 */
    bool in_shim;       /* under the shim (said in the summary) */
    bool jitter;        /* --jitter SEED[,SCALE]: the recorded gaps perturbed (play_threads.c) */
    uint64_t jitter_seed;
    double jitter_scale;
    uint64_t max_gap_ns; /* --max-gap MS: no host gap longer (0: as recorded) */
};

/* Replays o->file against o->driver and prints the summary on stderr.
 * Returns the exit status: 0; 1 when the trace cannot be read, the driver
 * cannot be loaded or the replay had to stop (one line said why); 3 with
 * o->strict when a replayed call's result differed from the program's. */
int pl_run(const struct pl_options *o);

/* ---- between the player's files --------------------------------------------------------- */

typedef CUresult (*pl_caller)(void *, const uint64_t *);

/* An object the player made for a trace id, and the context it lives in:
 * a context's teardown ends it (gone), and a handle the player knows is
 * dead is never passed to the driver. */
struct pl_obj {
    void *h;
    CUcontext ctx;
    bool gone;
};
struct pl_ctx {
    CUcontext c;
    bool primary, retained;
    bool gone; /* a created context the trace destroyed */
    uint32_t device;
};
struct pl_mem {
    uint64_t base;
    uint64_t size;     /* what the player's calls may touch, from base */
    CUcontext ctx;     /* device and pinned memory: the context it lives in */
    bool allocated;
    bool gone;         /* freed with its context */
    void *owned;       /* a buffer of the player's (pageable, registered) */
    size_t owned_size; /* its mapping's length */
};
struct pl_mod {
    void *h;
    bool loaded, gone;
    CUcontext ctx; /* NULL for a library (context-independent) */
};
struct pl_entry {
    void *fn;
    pl_caller call;
    const char *name;
    uint64_t skipped;
};

/* Why a call was not issued. */
enum pl_why {
    W_GENERIC,    /* the family is not replayed */
    W_MISSING,    /* the driver lacks the entry */
    W_ADDRESS,    /* an address the trace knows no memory for, or a range beyond it */
    W_FUNCTION,   /* a function the player cannot make */
    W_GRAPH,      /* an executable or graph the trace did not see made */
    W_POOL,       /* memory pools are not recorded */
    W_FAILED_DEP, /* something it needs failed to replay */
    W_GONE,       /* an object of a context the trace tore down, or never valid */
    W_HOST,       /* a host buffer larger than this machine's memory */
    W_N
};
extern const char *const pl_why_names[W_N];

/* What issuing one call needs to know and says back. */
struct pl_iss {
    bool ok;         /* false: not issued */
    enum pl_why why; /* why, the first reason found */
    bool live_ok;    /* the program's call succeeded */
};
/* Marks st not issuable for `why` (the first reason is kept). */
static inline void pl_refuse(struct pl_iss *st, enum pl_why why)
{
    if (st->ok)
        st->why = why;
    st->ok = false;
}

struct pl_state {
    struct pl_options o;
    struct rt_reader r;
    void *drv;
    uint64_t t0; /* the player's start (ns) */
    /* where the record being issued or read begins, and its entry (pl_stop) */
    uint64_t at;
    const char *at_entry;
    /* translations, by trace id */
    struct pl_ctx *ctxs; size_t nctxs;
    struct pl_obj *streams; size_t nstreams;
    struct pl_obj *events; size_t nevents;
    struct pl_obj *funcs; size_t nfuncs;
    struct pl_mod *mods; size_t nmods;
    struct pl_mod lib0, mod0; /* functions whose module the trace does not know */
    /* PTX text per module (by kind: modules, libraries), written by the
     * first pass, which has seen every function */
    char **ptx[2]; size_t nptx[2];
    struct pl_mem *mems; size_t nmems;
    struct pl_obj *graphs; size_t ngraphs;
    struct pl_obj *execs; size_t nexecs;
    struct pl_entry *entries; size_t nentries;
    /* from the first pass */
    uint32_t main_tid;            /* the recorded thread the process's main thread plays */
    uint64_t *pageable_size;      /* by memory id */
    bool *written_by_device;      /* host memory ids a copy or mapping may fill */
    size_t nfirst;                /* the length of the two above */
    bool any_hostfn;
    /* every recorded value write: where, and the value */
    struct pl_write { struct rt_addr at; uint64_t value; } *value_writes;
    size_t nvalue_writes;
    int primary_refs[64];
    uint64_t host_limit;          /* the largest host buffer the player makes */
    /* release words for value waits (pinned, allocated at the first one) */
    uint32_t *release;
    CUcontext release_ctx;
    size_t nrelease, next_release;
    /* counts */
    uint64_t issued, not_issued, differed, answers_differed, calls;
    uint64_t why[W_N];
    /* driver entries the player uses on its own (not interposed) */
    CUresult (CUDAAPI *ctx_current)(CUcontext *);
    CUresult (CUDAAPI *primary_retain)(CUcontext *, CUdevice);
    CUresult (CUDAAPI *stream_create)(CUstream *, unsigned int, int);
    CUresult (CUDAAPI *module_load)(CUmodule *, const void *);
    CUresult (CUDAAPI *library_load)(CUlibrary *, const void *, CUjit_option *, void **, unsigned int,
                                     CUlibraryOption *, void **, unsigned int);
    CUresult (CUDAAPI *get_function)(CUfunction *, CUmodule, const char *);
    CUresult (CUDAAPI *get_kernel)(CUkernel *, CUlibrary, const char *);
    CUresult (CUDAAPI *push)(CUcontext);
    CUresult (CUDAAPI *pop)(CUcontext *);
    CUresult (CUDAAPI *init)(unsigned int);
    CUresult (CUDAAPI *alloc)(CUdeviceptr *, size_t);
    CUresult (CUDAAPI *alloc_host)(void **, size_t);
    CUresult (CUDAAPI *event_create)(CUevent *, unsigned int);
    /* the CPU driver's (cpucuda.h): the player's own calls, and where the
     * recording process's allocations are now */
    void (*fidelity_own)(int);
    void (*fidelity_alias)(unsigned long long, unsigned long long, unsigned long long);
    bool inited;
};
extern struct pl_state pl__P;
/* The player's tables (pl__P, the reader's included) are touched by one
 * thread at a time: the baton holder, and a thread whose call may wait and
 * which handed the baton on before issuing it (play_threads.c). Both take
 * this lock around what they do with the tables (pl_issue, pl_next_job);
 * the driver call itself runs without it. */
extern pthread_mutex_t pl__state_mu;

/* Ends the replay: one line on stderr naming the file, the record being
 * issued or read (pl__P.at) and what could not be done, then exit status 1
 * at once (_exit: player threads may be inside the driver). */
void pl_stop(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Grows table *tab of *n elements of `elem` bytes to hold index `want`
 * (zeroed); pl_stop when memory runs out. */
void *pl_grow(void *tab, size_t *n, size_t elem, size_t want);
#define PL_GROW(tab, n, want) ((tab) = pl_grow((tab), &(n), sizeof *(tab), (want)))
uint64_t pl_now_ns(void);
void *pl_sym(const char *name);

/* play_make.c: the player's objects for the trace's ids, under
 * pl__state_mu. Each returns the handle, or NULL with st refused (and why)
 * when it cannot be had; none returns a handle of a context that is gone. */
void pl_ensure_init(void);
CUcontext pl_current(void);
CUcontext pl_ctx_of(uint32_t id, struct pl_iss *st);
CUstream pl_stream_of(uint32_t id, struct pl_iss *st);
CUevent pl_event_of(uint32_t id, struct pl_iss *st);
struct pl_mod *pl_module_of(uint32_t mod, unsigned kind);
void *pl_func_of(uint32_t id, struct pl_iss *st);
/* The player's address for a, and that `bytes` from it lie in what the
 * player has there: a device allocation of the recorded size, a pinned or
 * pageable buffer of its own. A raw address (no memory the trace knows) is
 * passed as it is only where the program's call failed too. */
bool pl_mem_span(const struct rt_addr *a, uint64_t bytes, uint64_t *out, struct pl_iss *st);
/* Memory the recording process had at [live, live + size) is at `base`
 * in the player: the CPU driver's fidelity digest is told (kernel
 * parameters hold the recording process's pointers verbatim). */
void pl_live_at(uint64_t live, uint64_t size, uint64_t base);
/* Context c (the player's) was torn down: every object the player made in
 * it is gone. */
void pl_ctx_gone(CUcontext c);
/* A zeroed buffer of the player's own of `size` bytes (its mapping's
 * length in *len), page-aligned, its pages given only when touched; NULL
 * when it cannot be had. */
void *pl_host_buffer(uint64_t size, size_t *len);
/* The PTX of every module (the first pass has seen every function). */
void pl_write_ptx(void);

/* play_launch.c: what a launch's arguments point into, kept until the
 * call returns. */
struct pl_launch {
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[16];
    void *extra[5];
    size_t extra_size;
};
/* Launch k's arguments in a[], pointing into L; st refused (with why)
 * where its function or stream cannot be had. */
void pl_launch_args(const struct rt_call *k, uint64_t *a, struct pl_launch *L, struct pl_iss *st);

/* play_issue.c */
/* Takes in an ENTRY record: the entry's caller and its driver symbol. */
void pl_entry_defined(uint32_t id);
/* Issues call k, whose record begins at byte `offset`, on the calling
 * (player) thread. */
void pl_issue(const struct rt_call *k, uint64_t offset);
/* Whether a call of family fam may wait (a sync, a synchronous copy, a
 * free, a teardown): the next thread may go on meanwhile. */
bool pl_may_wait(unsigned fam);

/* play_order.c: the jobs, in the order they are replayed. */
struct pl_job {
    uint64_t seq;
    uint64_t offset;   /* where its record begins */
    uint64_t start_ns; /* when the call began in the recording, since the trace's start */
    bool exit;         /* a thread's exit, not a call */
    uint32_t tid;
    struct rt_call call;
    unsigned char *own; /* what call's pointers point into */
};
/* The next job, NULL at the end; pl_order_rc says how reading ended. */
struct pl_job *pl_next_job(void);
void pl_job_free(struct pl_job *j);
int pl_order_rc(void);

/* play_threads.c: plays every job, the recorded main thread on the
 * calling thread. */
void pl_play(void);
/* The recorded threads that made calls. */
size_t pl_threads(void);

#endif /* RP_PLAY_H */
