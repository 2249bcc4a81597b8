/* tracefmt.h - the trace file format (docs/trace.md), as the writer
 * (shim/face/trace*.c) and the readers (tools/traceread.c) share it: the magic and
 * version, header keys, record tags, the families of trace_entries.h,
 * the stream and address encodings, and the varint codec. No dependency
 * beyond the C library: the tools include it without cuda.h. */
#ifndef RP_TRACEFMT_H
#define RP_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "trace_entries.h"

/* The first 8 bytes of every trace, then a little-endian u32 version and a
 * u32 length of what follows: the header fields and a check byte, the sum
 * (mod 256) of every byte of the file before it. */
#define RP_TRACE_MAGIC "RPTRACE\n"
#define RP_TRACE_MAGIC_LEN 8
#define RP_TRACE_VERSION 1
#define RP_TRACE_PREAMBLE 16 /* magic, version, header length */

/* Header fields: a key byte, a varint length, that many bytes. Unknown keys
 * are skipped by readers (a field added within a version); strings are not
 * NUL-terminated. */
enum rp_trace_key {
    RP_TK_REPRISE_VERSION = 1, /* string */
    RP_TK_COMMAND = 2,         /* the program's argv, each argument NUL-terminated */
    RP_TK_PID = 3,             /* varint */
    RP_TK_HOST = 4,            /* string */
    RP_TK_START_NS = 5,        /* varint: CLOCK_REALTIME at the trace's start, ns */
    RP_TK_DRIVER_VERSION = 6,  /* varint: cuDriverGetVersion (0 when unknown) */
    RP_TK_FLAGS = 7,           /* varint: RP_TF_* */
    RP_TK_DRIVER_PATH = 8,     /* string: the driver library recorded through */
};
/* Flags: host-to-device contents recorded (REPRISE_TRACE_DATA); every
 * allocation (an allocating call that made memory, a MEM record) ends with
 * its address in the recording process, so that a player can translate the
 * pointers kernel parameters hold (every trace this recorder writes). */
enum { RP_TF_DATA = 1, RP_TF_ADDRS = 2 };

/* Records: a tag byte, a varint length, that many bytes of body, and a
 * check byte: the sum (mod 256) of the tag, the length's and the body's
 * bytes, so that any one byte changed is seen. The tag is written last, so
 * a record whose tag is 0 was never completed: a reader stops there (the
 * trace of a process that did not exit normally). */
enum rp_trace_tag {
    RP_TR_NONE = 0,
    RP_TR_ENTRY = 1,   /* id, family, name: the entry point later calls name by id */
    RP_TR_THREAD = 2,  /* id, the OS thread id */
    RP_TR_CTX = 3,     /* id, device, flags (RP_TC_*): a context first seen in use */
    RP_TR_STREAM = 4,  /* id, ctx id, flags, priority (zigzag) */
    RP_TR_MODULE = 5,  /* id, kind (0 module, 1 library) */
    RP_TR_FUNC = 6,    /* id, module id, kind (0 function, 1 CUkernel), name, nparams, (offset, size)... */
    RP_TR_MEM = 7,     /* id, space (RP_TS_*), bytes, ctx id: memory first seen in use */
    RP_TR_DEVICE = 8,  /* ordinal, name, major, minor, total bytes */
    RP_TR_EVENT = 9,   /* id: an event first seen in use (not created in the trace) */
    RP_TR_CALL = 16,   /* one driver call (docs/trace.md, "Calls") */
    RP_TR_THREAD_EXIT = 17, /* thread id, ns since its last call */
    RP_TR_END = 18,    /* records, calls, ns since the start: the trace was closed */
};
enum { RP_TC_PRIMARY = 1 };

/* Families (trace_entries.h). */
enum rp_trace_family {
#define RP_TRF_ENUM(name, num, arity) RP_TRF_##name = num,
    RP_TRACE_FAMILIES(RP_TRF_ENUM)
#undef RP_TRF_ENUM
    RP_TRF_MAX = 127
};

/* A call's flags byte. */
enum {
    RP_TCF_SAME_THREAD = 1, /* the thread of the previous record: no thread id follows */
    RP_TCF_RESULT = 2,      /* a nonzero CUresult follows */
    RP_TCF_DURATION = 4,    /* the call's duration (ns) follows */
};

/* Streams: these ids are the special handles; created streams get 3 up. */
enum { RP_TSTREAM_NULL = 0, RP_TSTREAM_LEGACY = 1, RP_TSTREAM_PER_THREAD = 2, RP_TSTREAM_FIRST = 3 };

/* Addresses: a varint (id << 2 | space), then for DEVICE and HOST an offset
 * into that memory; RAW is followed by the address itself (one the trace
 * knows no memory for, NULL included); PAGEABLE names a pageable host
 * address (each distinct one its own id: the player gives each a buffer). */
enum rp_trace_space { RP_TS_RAW = 0, RP_TS_DEVICE = 1, RP_TS_HOST = 2, RP_TS_PAGEABLE = 3 };
/* What kind of host memory a HOST id is (the MEM record or the allocating
 * call says): in the top bits of the MEM record's space field. */
enum rp_trace_host_kind { RP_TH_PINNED = 0, RP_TH_MAPPED = 1, RP_TH_REGISTERED = 2,
                          RP_TH_REGISTERED_MAPPED = 3, RP_TH_MANAGED = 4 };

/* A launch's flags byte (docs/trace.md, "Launches"). */
enum {
    RP_TLF_GRID = 1, RP_TLF_BLOCK = 2, RP_TLF_SHMEM = 4, /* changed since the function's last launch */
    RP_TLF_PARAMS_SHIFT = 3,                             /* 2 bits: RP_TLP_* */
    RP_TLF_FORM_SHIFT = 5,                               /* 3 bits: RP_TLFORM_* */
};
enum { RP_TLP_SAME = 0, RP_TLP_DELTA = 1, RP_TLP_FULL = 2, RP_TLP_NONE = 3 };
enum {
    RP_TLFORM_PARAMS = 0,     /* kernelParams, extra NULL */
    RP_TLFORM_EXTRA = 1,      /* an extra buffer, kernelParams NULL */
    RP_TLFORM_PARAMS_END = 2, /* kernelParams and an extra that only ends */
    RP_TLFORM_NONE = 3,       /* neither */
    RP_TLFORM_BOTH = 4,       /* kernelParams and an extra carrying a buffer (an error) */
    RP_TLFORM_NO_CONFIG = 5,  /* cuLaunchKernelEx with no config (an error) */
};
/* cuLaunchKernelEx's second flags byte. */
enum { RP_TLX_ATTRS_SAME = 1 };

/* A copy's flags byte. */
enum { RP_TCOPY_DATA = 1 };

/* ---- varints: LEB128, at most 10 bytes for 64 bits ---------------------- */

static inline unsigned char *rp_tv_put(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static inline size_t rp_tv_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint64_t rp_tv_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t rp_tv_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Decode one varint from [*p, end). Returns 0 and advances *p, or -1 when
 * the bytes end first or the value does not fit 64 bits (*p unchanged). */
static inline int rp_tv_get(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
    const unsigned char *q = *p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (q >= end)
            return -1;
        unsigned char b = *q++;
        if (shift == 63 && (b & 0x7e))
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* ---- a preprocessor loop over an argument list -----------------------------
 * RP_TFE(m, a, b, c) expands to m(a) m(b) m(c), up to 16 arguments; the
 * recording hooks (shim/face/trace_hooks.c) and the player's typed callers
 * (tools/replay.c) walk entries.h's argument lists with it. */
#define RP_TCAT_(a, b) a##b
#define RP_TCAT(a, b) RP_TCAT_(a, b)
#define RP_TNARG(...) RP_TNARG_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define RP_TNARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define RP_TFE_1(m, x) m(x)
#define RP_TFE_2(m, x, ...) m(x) RP_TFE_1(m, __VA_ARGS__)
#define RP_TFE_3(m, x, ...) m(x) RP_TFE_2(m, __VA_ARGS__)
#define RP_TFE_4(m, x, ...) m(x) RP_TFE_3(m, __VA_ARGS__)
#define RP_TFE_5(m, x, ...) m(x) RP_TFE_4(m, __VA_ARGS__)
#define RP_TFE_6(m, x, ...) m(x) RP_TFE_5(m, __VA_ARGS__)
#define RP_TFE_7(m, x, ...) m(x) RP_TFE_6(m, __VA_ARGS__)
#define RP_TFE_8(m, x, ...) m(x) RP_TFE_7(m, __VA_ARGS__)
#define RP_TFE_9(m, x, ...) m(x) RP_TFE_8(m, __VA_ARGS__)
#define RP_TFE_10(m, x, ...) m(x) RP_TFE_9(m, __VA_ARGS__)
#define RP_TFE_11(m, x, ...) m(x) RP_TFE_10(m, __VA_ARGS__)
#define RP_TFE_12(m, x, ...) m(x) RP_TFE_11(m, __VA_ARGS__)
#define RP_TFE_13(m, x, ...) m(x) RP_TFE_12(m, __VA_ARGS__)
#define RP_TFE_14(m, x, ...) m(x) RP_TFE_13(m, __VA_ARGS__)
#define RP_TFE_15(m, x, ...) m(x) RP_TFE_14(m, __VA_ARGS__)
#define RP_TFE_16(m, x, ...) m(x) RP_TFE_15(m, __VA_ARGS__)
#define RP_TFE(m, ...) RP_TCAT(RP_TFE_, RP_TNARG(__VA_ARGS__))(m, __VA_ARGS__)
/* The same over a parenthesised list that may be empty: RP_TFE_LIST(m, (a, b)). */
#define RP_TEXPAND(...) __VA_ARGS__
#define RP_TFE_LIST(m, list) RP_TFE_LIST_(m, RP_TEXPAND list)
#define RP_TFE_LIST_(m, ...) __VA_OPT__(RP_TFE(m, __VA_ARGS__))

#endif /* RP_TRACEFMT_H */
