/* traceread.h - reading a trace (docs/trace.md): the header, then one record
 * at a time, every byte checked. A reader never trusts the file: a truncated
 * or corrupt trace, one of another version, or a record naming an entry, a
 * handle or a family it does not know gives a one-line error naming the byte
 * offset and what was expected there, never a crash (tests/fuzz/trace_fuzz.c
 * holds it to that). Used by `reprise replay` and `reprise trace info`. */
#ifndef RP_TRACEREAD_H
#define RP_TRACEREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracefmt.h"

/* An address as the trace names it (tracefmt.h, "Addresses"). */
struct rt_addr {
    unsigned space; /* RP_TS_* */
    uint32_t id;    /* memory id (DEVICE, HOST, PAGEABLE) */
    uint64_t off;   /* offset into it; the address itself for RAW */
};

struct rt_entry {
    char *name;
    unsigned family;
};

struct rt_func {
    bool defined;
    uint32_t module;   /* module or library id; for kind 2 the kernel's func id */
    unsigned kind;     /* 0 function, 1 CUkernel, 2 function of a CUkernel */
    bool layout;       /* its parameter layout was read when recorded */
    char *name;
    uint32_t nparams;
    uint32_t *off, *size;
    size_t psize;
    /* the state launches are encoded against */
    unsigned grid[3], block[3], shmem;
    unsigned char *params;     /* psize bytes, from its first launch with parameters (zeros) */
    unsigned char *attrs;      /* the last attribute list, as encoded */
    size_t attrs_len;
};

struct rt_stream { bool defined; uint32_t ctx; uint64_t flags; int64_t prio; };
struct rt_ctx { bool defined; uint32_t device; uint64_t flags; };
/* kind: for HOST memory, RP_TH_* from the call that made it (pinned,
 * mapped, registered, registered and mapped). */
/* base: its address in the recording process (0 when the trace has no
 * addresses: RP_TF_ADDRS). */
struct rt_mem { bool defined; unsigned space; uint64_t bytes; uint32_t ctx; unsigned kind; uint64_t base; };
struct rt_module { bool defined; unsigned kind; };
struct rt_device { uint32_t ordinal; char name[256]; unsigned major, minor; uint64_t bytes; };

/* One launch attribute of cuLaunchKernelEx: its id and value bytes. */
struct rt_attr { uint32_t id; unsigned char value[64]; };

/* A decoded call. Pointers stay valid until the next rt_next. */
struct rt_call {
    uint32_t entry;     /* index into rt_reader.entries */
    unsigned family;
    uint32_t tid;
    uint64_t dt_ns;     /* since this thread's previous call began (its first: the trace's start) */
    uint64_t seq;       /* its place in the order the calls began (records are in the order they returned) */
    uint64_t dur_ns;    /* how long it took, for the families that may wait (else 0) */
    int64_t result;     /* the CUresult the program got */
    /* handles, by family */
    uint32_t func, stream, event, ctx, ctx2, module, exec, graph, mem;
    /* launches */
    unsigned grid[3], block[3], shmem, form, coding;
    const unsigned char *params; /* the function's psize bytes (form with parameters) */
    uint64_t param_bytes;        /* bytes the record spent on them (0 for "the same") */
    uint64_t extra_size;
    unsigned nattrs;
    const struct rt_attr *attrs;
    /* copies, memsets, allocations, values */
    struct rt_addr dst, src;
    uint64_t bytes, value, flags, pitch, width, height, elem, device, answer;
    uint64_t base; /* an allocation's address in the recording process (RP_TF_ADDRS; else 0) */
    const unsigned char *data; /* `bytes` bytes a host-to-device copy read, when recorded */
};

/* What rt_next produced. */
struct rt_rec {
    unsigned tag;       /* RP_TR_* */
    uint64_t offset;    /* where the record begins */
    uint32_t id;        /* the id a definition defines; the thread of THREAD_EXIT */
    uint64_t ns;        /* THREAD_EXIT: since the thread's last call; END: since the start */
    uint64_t seq;       /* THREAD_EXIT: its place in the order of entry (as a call's) */
    uint64_t records, calls; /* END */
    struct rt_call call;     /* CALL */
};

struct rt_reader {
    char path[4096];
    const unsigned char *buf;
    size_t size;
    bool mapped;
    size_t pos;          /* the next record */
    size_t first;        /* where records begin */
    bool ended;          /* an END record was read */
    char err[512];
    char notice[512];    /* why reading ended early without an error (no END record) */
    /* the header */
    uint32_t version;
    char *reprise_version, *host, *driver_path;
    char *command;       /* the argv, NUL-separated */
    size_t command_len;
    uint64_t pid, start_ns, driver_version, flags;
    /* the tables the definitions build */
    struct rt_entry *entries; size_t nentries;
    uint64_t *threads; size_t nthreads;            /* OS thread ids, by trace id - 1 */
    struct rt_ctx *ctxs; size_t nctxs;             /* by id (0 unused) */
    struct rt_stream *streams; size_t nstreams;    /* by id */
    struct rt_module *modules; size_t nmodules;
    struct rt_func *funcs; size_t nfuncs;
    struct rt_mem *mems; size_t nmems;
    size_t nevents;                                /* highest event id seen */
    size_t ngraphs, nexecs;                        /* highest graph and executable ids made */
    struct rt_device devices[64]; size_t ndevices;
    uint64_t records, calls;
    struct rt_attr attrs[16];
    unsigned last_tid;
    uint64_t last_seq;
    /* the span of the calls: each thread's time since the start (ns, by
     * thread id), and the latest a call of any ended (a trace without an
     * END record lasted at least that long) */
    uint64_t *tclock; size_t ntclock;
    uint64_t span_ns;
    uint64_t end_ns;     /* the END record's time */
    /* the memory the tables hold, and what the file's size allows them */
    size_t held, limit;
};

/* Reads the file and its header. Returns 0, or -1 with r->err set ("PATH:
 * byte N: expected ..."); r is then empty but may be passed to rt_close.
 * Whatever a trace says, the reader's tables never hold more than 16 MiB
 * plus 64 bytes a byte of the file: a trace that asks for more is damaged
 * or crafted, and reading ends there with an error naming the byte. */
int rt_open(struct rt_reader *r, const char *path);
/* The same over bytes in memory (the fuzzer); buf must outlive r. */
int rt_open_mem(struct rt_reader *r, const unsigned char *buf, size_t size, const char *name);
/* The next record: 1 with *out filled, 0 at the end (an END record, or the
 * end of a trace whose process did not exit: r->ended says which, and
 * r->notice says where, in one line), -1 with r->err on an error (every
 * later call returns -1). */
int rt_next(struct rt_reader *r, struct rt_rec *out);
/* Back to the first record, every table emptied. */
void rt_rewind(struct rt_reader *r);
void rt_close(struct rt_reader *r);

/* How long the trace lasted: its END record's time, or for a trace without
 * one, the latest a call read so far ended. */
uint64_t rt_duration(const struct rt_reader *r);

/* A duration as people read it: "2.019 s", "390.8 us" (s, ms or us). */
void rt_format_ns(char *buf, size_t size, uint64_t ns);

/* Name of a family ("LAUNCH"), "?" for an unknown number. */
const char *rt_family_name(unsigned family);

#endif /* RP_TRACEREAD_H */
