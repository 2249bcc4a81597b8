/* oprecord.h - the op record: what the engine keeps of one capturable call
 * (DESIGN.md §1, §3). A record has a structure key (everything but kernel
 * parameter bytes and addresses/values) and a content key (everything that
 * must be equal for a graph to stand in for the call). Keys only narrow a
 * search; equality is always decided by an exact comparison. The bytes a
 * host-to-device copy from pageable memory carries are payload, not content:
 * the driver reads them at the call, so they are staged at call time and
 * copied into the graph's staging before a replay. From pinned memory the
 * driver reads when the copy executes: the source address is content, and
 * the copy reads the program's memory then (DESIGN.md §2.3). */
#ifndef REPRISE_OPRECORD_H
#define REPRISE_OPRECORD_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL
#endif
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum rp_op_kind {
    RP_OP_KERNEL = 1,
    RP_OP_HTOD,   /* async host-to-device copy (staged at the call unless pinned) */
    RP_OP_DTOD,   /* device-to-device copy (sync or async form) */
    RP_OP_DTOH,   /* async device-to-host copy into pinned memory */
    RP_OP_MEMSET, /* 1-D memset of device memory, element 1, 2 or 4 bytes */
    RP_OP_EVREC,  /* cuEventRecord of a program event (no timing) on a created stream */
    RP_OP_EVWAIT, /* cuStreamWaitEvent of a created stream on such an event */
} rp_op_kind;
#define RP_OP_KINDS 8 /* kinds and index 0 (not capturable), for per-kind counts */

/* 1 for the event ops: they order streams, and make no graph node. */
static inline int rp__op_is_event(int kind)
{
    return kind == RP_OP_EVREC || kind == RP_OP_EVWAIT;
}

/* The variant of the entry point, kept so that a replay or a flush issues the
 * same kind of call the program made (a 0 stream means the per-thread stream
 * in _ptsz entry points). */
enum {
    RP_OPF_PTSZ = 1u << 0,        /* came through a _ptsz/_ptds entry point */
    RP_OPF_KERNEL_HANDLE = 1u << 1, /* `func` is a CUkernel, not a CUfunction */
    RP_OPF_HOST_PINNED = 1u << 2, /* HtoD: the source is pinned, read at execution */
};

typedef struct rp_op {
    rp_op_kind kind;
    uint32_t flags;
    uint16_t entry;         /* the entry point the program called (enum rp__entry);
                             * a flush re-issues through it, not part of the keys */
    uint8_t borrowed;       /* params (and data, attrs) belong to another record,
                             * a sequence's: this one frees nothing (a matched
                             * op deferred without a copy, replay.c) */
    uint8_t nattrs;         /* kernel: launch attributes (cuLaunchKernelEx), structure */
    /* What the keys hash in place of handles, so that the same program
     * gets the same keys, cuts and decisions in every run (pointer values
     * change from run to run): the stream's and the kernel's numbers in
     * their context, in order of first sight (0: not known). Handles are
     * still what comparisons compare. */
    uint16_t sid;           /* the stream's number (the coordinator's) */
    uint16_t fid;           /* kernel: its function's number (the recorder's; the
                             * last number stands for every later one) */
    CUcontext ctx;
    CUstream stream;        /* as the program named it */
    CUevent ev;             /* event ops: the program's event (structure) */
    /* kernel */
    CUfunction func;
    unsigned int grid[3], block[3], shmem;
    uint32_t param_bytes;   /* size of the packed parameter buffer */
    uint8_t *params;        /* packed like the `extra` buffer; padding zeroed */
    CUlaunchAttribute *attrs; /* nattrs of them, each with only its own value
                               * member set (the rest zeroed) */
    /* copies and memsets */
    CUdeviceptr dst, src;
    void *host;             /* DtoH: pinned destination; HtoD: program source (compared
                             * when pinned: it is read at execution) */
    size_t bytes;           /* copy size; for a memset, the element count */
    unsigned int value;     /* memset value; an event call's flags (always 0 in an op) */
    unsigned int elem;      /* memset element size: 1, 2 or 4 */
    uint8_t *data;          /* staged HtoD: the bytes copied at the call (payload) */
    /* keys, filled by rp__op_keys */
    uint64_t skey, ckey;
    uint64_t ver;           /* an executable's record of what its node holds: the
                             * number of that value among those its sequence's op
                             * has taken (the engine's seq/versions.c; 0: none yet) */
    uint64_t opno;          /* its position among its stream's capturable ops */
    /* Event ops: which event, not by handle but by role. A framework makes a
     * fresh event for each step (PyTorch's wait_stream), so a handle is not
     * structure; the pattern is: which ops name the same event. `eser`
     * tells events apart (a handle destroyed and given out again is another
     * event); `erole` is the order in which the event first appears among
     * the event ops of the list the op is in (a sequence, an occurrence
     * being matched, a segment), from 1: two lists whose roles are equal op
     * by op name their events alike, whatever the handles. */
    uint32_t eser;          /* the event's serial number (0: not known) */
    uint32_t erole;         /* its role in its list (rp__op_roles) */
} rp_op;

#define RP_MAX_ATTRS 8 /* launch attributes kept per kernel record */

/* A kernel's parameter layout (cuFuncGetParamInfo): parameter i lies at
 * off[i], size[i] in the packed buffer. */
#define RP_MAX_PARAMS 128
typedef struct rp_param_layout {
    uint32_t n, total;
    uint32_t off[RP_MAX_PARAMS], size[RP_MAX_PARAMS];
} rp_param_layout;

/* Volatile fields of a record, as a bit mask: for a kernel, bit i is
 * parameter i (parameters RP_VOL_MAX_PARAMS and up cannot be volatile) and
 * the three geometry bits; for a copy, the address bits and its size; for a
 * memset, the destination and the value. A record's identity (its
 * structure, rp__op_same_structure) is what an executable graph's node
 * cannot be changed to (the driver's rules for cuGraphExec*NodeSetParams,
 * docs/engine.md): everything else may be volatile. */
#define RP_VOL_MAX_PARAMS 60
#define RP_VOL_PARAMS ((1ull << RP_VOL_MAX_PARAMS) - 1) /* a kernel mask's parameter bits */
#define RP_VOL_DST 1ull
#define RP_VOL_SRC 2ull   /* DtoD: source; DtoH: source; HtoD: unused */
#define RP_VOL_HOST 4ull  /* DtoH: the pinned destination; HtoD: the pinned source */
#define RP_VOL_VALUE 2ull /* memset */
#define RP_VOL_GRID (1ull << 60)  /* kernel: grid dimensions */
#define RP_VOL_BLOCK (1ull << 61) /* kernel: block dimensions */
#define RP_VOL_SHMEM (1ull << 62) /* kernel: dynamic shared memory bytes */
#define RP_VOL_BYTES (1ull << 60) /* copy: its size (never a staged one's) */
/* kernel: its function, and with it the parameters, in the new function's
 * layout. "All nodeParams fields may change, but [...] the owning context
 * of the function cannot change" (cuGraphExecKernelNodeSetParams, CUDA
 * 12/13): a kernel that switches with a pointer's alignment or a length
 * (vectorized or unrolled elementwise kernels, softmax per power of two,
 * another gemv) is a node update, not another structure. An op whose
 * function differs from the sequence's matches whatever its geometry and
 * parameters: the update sets every field of the node from it. */
#define RP_VOL_FUNC (1ull << 63)

/* 1 when `op` is a host-to-device copy whose bytes are staged at the call
 * (a pageable source); a pinned source is read by the copy when it runs. */
static inline int rp__op_staged(const rp_op *op)
{
    return op->kind == RP_OP_HTOD && !(op->flags & RP_OPF_HOST_PINNED);
}

/* 1 when the host address is part of the op's content: a device-to-host
 * copy's pinned destination, a pinned host-to-device source. */
static inline int rp__op_host_is_content(const rp_op *op)
{
    return op->kind == RP_OP_DTOH || (op->kind == RP_OP_HTOD && (op->flags & RP_OPF_HOST_PINNED));
}

/* The kind's name for logs and traces ("kernel", "htod copy", ...). */
const char *rp__op_kind_name(rp_op_kind kind);

/* 64-bit hash of `n` bytes, continuing from `h` (start with RP_HASH_SEED),
 * and of one word: a multiply-xorshift mix per 8-byte word, fast on the
 * short buffers of kernel parameters, and only ever used to narrow a
 * search. The word's inline: a segment's key takes one per op. */
#define RP_HASH_SEED 0x9e3779b97f4a7c15ull
uint64_t rp__hash_bytes(uint64_t h, const void *p, size_t n);
static inline uint64_t rp__hash_u64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* A cheap hash for what is hashed on every op (the op keys, a replay's
 * content): one rotate, xor and multiply per 8-byte word (rp__acc,
 * rp__acc_bytes), and one avalanche at the end (rp__fin, the finaliser of
 * MurmurHash3). Well spread once finalised; only ever a proposal. */
static inline uint64_t rp__acc(uint64_t h, uint64_t w)
{
    return (((h << 5) | (h >> 59)) ^ w) * 0x517cc1b727220a95ull;
}

static inline uint64_t rp__acc_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (; n >= 32; b += 32, n -= 32) { /* the same words, four a turn of the loop */
        uint64_t w0, w1, w2, w3; /* each its own load (one 32-byte copy went through the stack) */
        memcpy(&w0, b, 8), memcpy(&w1, b + 8, 8), memcpy(&w2, b + 16, 8), memcpy(&w3, b + 24, 8);
        h = rp__acc(rp__acc(rp__acc(rp__acc(h, w0), w1), w2), w3);
    }
    for (; n >= 8; b += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = rp__acc(h, w);
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        h = rp__acc(h, w ^ ((uint64_t)n << 56));
    }
    return h;
}

static inline uint64_t rp__fin(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* Number the roles of the event ops among ops[0..n) (rp_op.erole): the
 * order in which each event (by serial number) first appears, from 1.
 * Events past the 64th distinct one share role 64 + 1 (they then compare
 * equal by role only where their serials' order agrees: never wrongly
 * merged, as the serial of each occurrence is what a replay uses). */
void rp__op_roles(rp_op *ops, size_t n);
/* The role an event op with serial `eser` takes after ops[0..n) (whose
 * roles are numbered): that of the first op naming the same event, or the
 * next one. */
uint32_t rp__op_role_after(const rp_op *ops, size_t n, uint32_t eser);

/* Compute op->skey and op->ckey from the fields, the stream and the
 * function by their numbers (sid, fid), never by handle: the keys, and
 * whatever is chosen from them (a period's cut, a landmark), are the same
 * in every run of the same program. Only the detectors and the period use
 * them (to find a segment, to propose a distance); comparisons never do. */
void rp__op_keys(rp_op *op);
/* 1 when the two records have the same structure: what a graph node
 * captured from one cannot be updated away from to stand for the other
 * (kind, entry flags, context, stream, function and parameter size; a
 * memset's size and element size; a staged copy's size; whether a copy is
 * empty). Grid, block, dynamic shared memory and other copy sizes are not
 * structure: they are set on the executable like arguments. */
int rp__op_same_structure(const rp_op *a, const rp_op *b);
/* 1 when a graph node captured from `a` may be set to stand for `b`:
 * their structure but for a kernel's function (and so its parameter size),
 * which a node update may change (RP_VOL_FUNC): the same kind, entry flags
 * (a CUfunction stays one, a CUkernel one), context, stream and launch
 * attributes. The same as rp__op_same_structure for other ops. */
int rp__op_same_node(const rp_op *a, const rp_op *b);
/* 1 when the two records (of the same structure) have the same geometry:
 * a kernel's grid, block and dynamic shared memory; a copy's size. */
int rp__op_same_geometry(const rp_op *a, const rp_op *b);
/* 1 when a graph captured from `a` computes exactly what `b` asks for:
 * same structure and geometry, same parameter bytes, same addresses and
 * values. */
int rp__op_same_content(const rp_op *a, const rp_op *b);
/* The fields in which two records of the same node (rp__op_same_node)
 * differ, as a volatile mask (`L`, `Lb`: the kernels' layouts, `a`'s and
 * `b`'s; `Lb` is read only when the functions differ). Returns 0 when they
 * are equal, and sets *ok to 0 when they differ somewhere a mask cannot say
 * (a parameter from RP_VOL_MAX_PARAMS on, padding, anything of a kernel
 * whose layout is unknown or whose graph node carries launch attributes:
 * its node is not set; another function where either layout is unknown).
 * Two kernels of different functions differ in RP_VOL_FUNC and their
 * geometry; their parameters are not compared (the update sets them all). */
uint64_t rp__op_diff(const rp_op *a, const rp_op *b, const rp_param_layout *L,
                     const rp_param_layout *Lb, int *ok);
/* The geometry bits (RP_VOL_GRID, _BLOCK, _SHMEM) in which two kernel
 * records differ. */
uint64_t rp__op_geometry_diff(const rp_op *a, const rp_op *b);
/* The first field in which record `got` differs from record `want`: what
 * the report says of a divergence or of a structure seen for the first time
 * (explain.h). Structure is compared before content, in the order of the
 * record; `L` is `want`'s layout (a kernel's parameters are then named by
 * index; without it, field RP_FIELD_PARAM with index RP_DELTA_NO_LAYOUT and
 * the first 8 differing bytes). Never called on the matching path: only
 * when a difference is already known. Returns 1 and fills *d when they
 * differ, 0 when they have the same content. */
#define RP_DELTA_NO_LAYOUT 255
typedef struct rp_op_delta {
    uint8_t field;     /* enum rp__field */
    uint8_t index;     /* grid/block: the dimension; param: its index */
    uint8_t structure; /* 1: no node update can follow it */
    uint16_t at;       /* param: the byte offset of the 8 bytes in had/got */
    uint64_t had, got; /* handles and addresses as integers; the first 8 bytes of a parameter */
} rp_op_delta;
int rp__op_delta(const rp_op *want, const rp_op *got, const rp_param_layout *L, rp_op_delta *d);
/* 1 when `b` may stand in `a`'s place with the fields in `mask` updated:
 * the same node and every field outside the mask exactly equal; with
 * RP_VOL_FUNC in the mask, a kernel of another function matches whatever
 * its geometry and parameters. */
int rp__op_match_masked(const rp_op *a, const rp_op *b, uint64_t mask, const rp_param_layout *L);
/* 1 when two kernel records name different functions (so that their
 * parameters lie in different layouts). */
static inline int rp__op_other_func(const rp_op *a, const rp_op *b)
{
    return a->func != b->func || a->param_bytes != b->param_bytes;
}

/* 1 for a launch attribute a kernel is recorded with and compared by, but
 * issued without in a capture window (rp__rec_issue): programmatic stream
 * serialization. cuda.h marks it "valid for launches", not for graph nodes;
 * a node without it waits for the whole of the node before it, an order
 * stricter than the programmatic one that computes the same (a kernel that
 * uses the overlap must wait for its predecessor's results with
 * cudaGridDependencySynchronize, which then returns at once). Whether the
 * driver's capture would make it a programmatic edge instead is not
 * verified (docs/engine.md, "What is captured"). */
static inline int rp__attr_left_out_of_graphs(CUlaunchAttributeID id)
{
    return id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
}

/* How many of a kernel record's launch attributes its graph node carries
 * (all but those rp__attr_left_out_of_graphs names). */
static inline unsigned int rp__op_node_attrs(const rp_op *op)
{
    unsigned int n = 0;
    for (unsigned int i = 0; i < op->nattrs; i++)
        n += !rp__attr_left_out_of_graphs(op->attrs[i].id);
    return n;
}

/* 1 when two records carry the same launch attributes (none, for ops
 * other than kernels launched with some). */
static inline int rp__op_same_attrs(const rp_op *a, const rp_op *b)
{
    return a->nattrs == b->nattrs &&
           (!a->nattrs || !memcmp(a->attrs, b->attrs, a->nattrs * sizeof *a->attrs));
}

/* Copy one kernel parameter of `size` bytes: most are words, copied
 * without a memcpy call (this runs for every launch recorded). */
static inline __attribute__((always_inline)) void rp__param_copy(uint8_t *dst, const void *src,
                                                                 size_t size)
{
    switch (size) {
    case 8:
        memcpy(dst, src, 8);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    default:
        memcpy(dst, src, size);
    }
}

/* 1 when the 28 bytes of two geometries (grid[3], block[3], shared memory
 * bytes, in this order, as in the record) are equal: three words and a
 * half, compared at once (a memcmp call of 28 bytes is not inlined at
 * -O2). */
_Static_assert(offsetof(rp_op, block) == offsetof(rp_op, grid) + 3 * sizeof(unsigned int) &&
                   offsetof(rp_op, shmem) == offsetof(rp_op, block) + 3 * sizeof(unsigned int),
               "a kernel record's geometry is seven consecutive unsigned ints");
static inline __attribute__((always_inline)) int rp__geometry_same(const unsigned int *ga, const unsigned int *gb)
{
    /* (scalars, not arrays: GCC copied arrays to the stack first) */
    const uint8_t *pa = (const uint8_t *)ga, *pb = (const uint8_t *)gb;
    uint64_t a0, a1, a2, b0, b1, b2;
    uint32_t a3, b3;
    memcpy(&a0, pa, 8), memcpy(&a1, pa + 8, 8), memcpy(&a2, pa + 16, 8), memcpy(&a3, pa + 24, 4);
    memcpy(&b0, pb, 8), memcpy(&b1, pb + 8, 8), memcpy(&b2, pb + 16, 8), memcpy(&b3, pb + 24, 4);
    return !((a0 ^ b0) | (a1 ^ b1) | (a2 ^ b2) | (a3 ^ b3));
}

/* 1 when geometry `g` (7 words, as in a record) is within the limits the
 * driver checks of every launch at the call (CUDA_ERROR_INVALID_VALUE): a
 * grid of 1 to 2^31-1 x 65535 x 65535 and a block of 1 to 1024 x 1024 x
 * 64, at most 1024 threads, on every device the 13.0 driver supports (the
 * CUDA Programming Guide's technical specifications; the CPU driver checks
 * the same). A launch outside them is never a sequence's, whatever its
 * volatile fields: deferred, it would be answered CUDA_SUCCESS and its node
 * update refused later (issue 34: a grid of 0 in a loop whose grid changes
 * every step). Each function's own limits (threads its registers allow,
 * dynamic shared memory) are the engine's to ask (match.c). */
static inline int rp__geometry_valid(const unsigned int *g)
{
    if (!g[0] || !g[1] || !g[2] || g[0] > 2147483647u || g[1] > 65535u || g[2] > 65535u)
        return 0;
    if (!g[3] || !g[4] || !g[5] || g[3] > 1024u || g[4] > 1024u || g[5] > 64u)
        return 0;
    return (uint64_t)g[3] * g[4] * g[5] <= 1024u;
}

/* 1 when geometry `g` asks no more threads a block and no more dynamic
 * shared memory than `want` (both 7 words): what the driver accepted of
 * `want` it accepts of `g` (its function's own limits hold). */
static inline int rp__geometry_within(const unsigned int *want, const unsigned int *g)
{
    return (uint64_t)g[3] * g[4] * g[5] <= (uint64_t)want[3] * want[4] * want[5] && g[6] <= want[6];
}

/* The offset of the first 8-byte word in which `n` bytes at `a` and `b`
 * differ (of the last, shorter, piece where only it does); `n` when they
 * are equal. */
static inline size_t rp__bytes_differ_at(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8), memcpy(&y, b + i, 8);
        if (x != y)
            return i;
    }
    return i == n || !memcmp(a + i, b + i, n - i) ? n : i;
}

/* 1 when `n` bytes at `a` and `b` are equal: compared as words, the rest
 * with memcmp (a replay with updates asks this of every node). */
static inline int rp__bytes_same(const uint8_t *a, const uint8_t *b, size_t n)
{
    return rp__bytes_differ_at(a, b, n) == n;
}

/* Parameter buffers: blocks of up to RP_PARAM_BLOCK bytes come from a
 * per-thread free list (a launch's parameters are allocated and freed on
 * the hot path of every op), larger ones from malloc. rp__params_alloc
 * returns memory zeroed over its first `bytes` (all that is used) or NULL;
 * rp__params_free takes the same size. */
#define RP_PARAM_BLOCK 128
uint8_t *rp__params_alloc(size_t bytes);
void rp__params_free(uint8_t *p, size_t bytes);

/* Deep copy of `src` into `dst` (params and data duplicated). Returns 0, or
 * -1 on allocation failure with `dst` zeroed (nothing to free). */
int rp__op_copy(rp_op *dst, const rp_op *src);
/* Free what a record owns (nothing when it is borrowed) and zero it. */
void rp__op_free(rp_op *op);

#endif
