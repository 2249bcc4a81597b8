/* match.h - the matcher layer of the engine (DESIGN.md §1, §2): once
 * sequences have graphs, a stream's ops that match a sequence's from its
 * first on are deferred op by op; a complete match is replayed (seq/), a
 * divergence flushes the deferred ops eagerly, in order. It says what it
 * did (rp_resolved); the coordinator decides what follows. Its fast path
 * is here, inline in the launch hooks: it runs for every launch of a
 * loop's steady state, and a call with its frame weighed on each (the rest
 * is match.c, the images it compares with fast.c, the ops that join the
 * held run before the general path with join.c). */
#ifndef REPRISE_MATCH_H
#define REPRISE_MATCH_H

#include "seq.h"

/* A sequence's kernel op as the matcher's fast path compares a launch
 * with it (match.h), made once the matcher first meets the sequence
 * (fast.c): what a launch must name, and the parameters it must carry,
 * each compared once from the program's kernelParams: a 4- or 8-byte one
 * with its value kept here, a larger one with the sequence's bytes
 * (memcmp). For a sequence with updates, the parameters of the op's mask
 * (`vm`) are left out (made again when the mask grows). `f` NULL: not a
 * kernel the fast path can match (no layout, launch attributes). */
typedef struct rp_fast_cmp {
    uint16_t idx;           /* the parameter */
    uint16_t size;          /* its bytes: 4 or 8 compared with `val`, else ... */
    uint32_t off;           /* ... with the sequence's block at `off` */
    uint64_t val;
} rp_fast_cmp;
typedef struct rp_fast {
    CUfunction f;
    CUstream stream;
    uint32_t tag;           /* rp__fast_tag(entry, ptsz) of the call recorded */
    uint32_t nparams;       /* the kernel's parameters */
    unsigned int geometry[7]; /* grid, block, shared memory bytes */
    uint32_t ncmp;          /* the parameters compared: the 8-byte ones first, */
    uint32_t n8, n4;        /* ... n8 of them, then n4 4-byte ones, then the rest; */
    uint32_t nvol;          /* after them, those of `vm` (fast.c copies them, in order) */
    rp_fast_cmp *cmp;       /* room for all nparams */
    uint64_t vm;            /* the mask they leave out */
    /* An exact op whose parameters are all 4 or 8 bytes (at most
     * RP_FAST_PARAMS of them) is compared in one loop instead: */
    uint32_t words;         /* 1: so, valued in `vals` */
    uint32_t size4;         /* bit i: parameter i is 4 bytes (else 8) */
    const uint64_t *vals;   /* the parameters' values, in order */
} rp_fast;
#define RP_FAST_PARAMS 32

static inline uint32_t rp__fast_tag(unsigned int entry, int ptsz)
{
    return entry | (uint32_t)!!ptsz << 16;
}


enum rp_offer {
    RP_OFFER_EAGER,    /* no sequence can start with it: issue it now */
    RP_OFFER_MATCHES,  /* candidates can take it: rp__match_defer it */
    RP_OFFER_RESOLVE,  /* what is pending cannot take it: resolve, then offer again */
    RP_OFFER_DEFERRED, /* (rp__match_defer; rp__match_offer for a memset or copy
                          joining the fast path's run) deferred: the record
                          belongs to the stream (or was let go) */
    RP_OFFER_COMPLETE, /* (the same) deferred, and a sequence matched in full */
};
/* Offer a recorded capturable op to the matcher of `st`: narrows the
 * candidates (or, with nothing pending, finds them). An event op gets its
 * role in the occurrence first (rp_op.erole). A memset or copy that may
 * join the fast path's held run is offered to it first
 * (rp__match_join_or_offer). */
enum rp_offer rp__match_offer(rp_stream *st, rp_op *op);
/* What rp__defer offers a recorded op (join.c): to the run held borrowed
 * first (rp__match_join), then to rp__match_offer; so that match.c calls
 * nothing of join.c. */
enum rp_offer rp__match_join_or_offer(rp_stream *st, rp_op *op);
/* The memset or copy `op` (its stream's fields set, given its position)
 * offered to the run the fast path holds borrowed before rp__match_offer
 * (never to a written-down run: the op has its position): DEFERRED or
 * COMPLETE when it joined (its record let go: it owns nothing), EAGER
 * when it does not (nothing done). join.c. */
enum rp_offer rp__match_join(rp_stream *st, rp_op *op);
/* What the comparison of a memset's or copy's call with op k of `s`
 * (join.c, call_match) found when every field matched but a volatile
 * operand's memory was not live, as the driver answered: the op at
 * position `opno` of its stream, these operands (`s` NULL: nothing). The
 * general path that then takes the same op on the same thread (its record:
 * rp__match_join, narrow) takes that answer (rp__seq_match's would be no)
 * instead of asking the driver again. */
struct rp_match_dead {
    const rp_seq *s;
    size_t k;
    uint64_t opno;
    rp_op_kind kind;
    CUdeviceptr dst, src;
    size_t bytes;
    unsigned int elem;
};
extern RP_TLS struct rp_match_dead rp__match_dead;
/* Whether op `k` of sequence `s` can stand for `op`: exactly equal, or
 * equal outside the fields declared volatile, with values the driver
 * would accept at the call (a kernel's geometry within its function's
 * limits, a copy's or memset's operands in live memory). */
int rp__seq_match(const rp_seq *s, size_t k, const rp_op *op);
/* The recorded launch `op` (its stream's fields set, not given its
 * position yet) when the one candidate of the run `st` holds keeps it as
 * its next op (rp__seq_match: exactly, or outside its volatile fields; a launch
 * of another known form of a volatile function, which no image of the fast
 * path compares, is the common case): deferred as the general path defers
 * it (rp__match_offer writes the borrowed run down, narrow() keeps the
 * candidate, rp__match_defer defers the record at the stream's position
 * and completes the candidate at its last op; where the run is borrowed
 * from the candidate, the record takes its op's place among the borrowed
 * ones instead, nothing written down: rp_stream.match.own): DEFERRED or
 * COMPLETE (the record moved into the stream), or EAGER: nothing done
 * (another candidate count, the candidate would go or be widened, memory). */
enum rp_offer rp__match_kept(rp_stream *st, rp_op *op);
/* Whether `st` holds a run a memset or copy may join before the op is
 * given its position (rp__learn_next; hooks.c, join_stream): one the fast
 * path holds borrowed, or one the general path wrote down (or recorded)
 * with one candidate left, which lends its records from the joining op on
 * (rp__match_join, rp__match_join_call). rp__match_offer, which comes
 * after, offers a join to a borrowed run only. */
static inline int rp__match_joinable(const rp_stream *st)
{
    return st->match.borrowed_seq || (st->match.ndef && st->match.ncand == 1);
}
/* A memset's or a device-to-device copy's call, with the fields a record
 * of it on stream `stream` (its record's handle) would have: what
 * rp__match_join_call compares without making the record. */
typedef struct rp_call_other {
    rp_op_kind kind;  /* RP_OP_MEMSET or RP_OP_DTOD */
    uint16_t entry;   /* enum rp__entry */
    uint32_t flags;   /* RP_OPF_PTSZ or 0 */
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr dst, src; /* src: a copy's */
    size_t bytes;
    unsigned int value, elem; /* a memset's */
} rp_call_other;
/* rp__match_join for the memset or device-to-device copy `c`, unrecorded:
 * the same answer and the same values kept as for its record. */
enum rp_offer rp__match_join_call(rp_stream *st, const rp_call_other *c);
/* The kinds of op rp__match_join may take: memsets, device-to-device
 * copies, device-to-host copies (into pinned memory). */
static inline int rp__match_joins_kind(rp_op_kind kind)
{
    return kind == RP_OP_MEMSET || kind == RP_OP_DTOD || kind == RP_OP_DTOH;
}
/* Defer `op` after rp__match_offer said MATCHES: DEFERRED, COMPLETE (resolve
 * now), or RESOLVE when it cannot be kept (memory; the op is left to the
 * caller, to issue eagerly after resolving). */
enum rp_offer rp__match_defer(rp_stream *st, rp_op *op);
/* The matcher's fast path (rp__match_launch, below, inline in the launch
 * hook) calls these out of line: */
/* Room for `want` deferred records; 0, or -1 if memory runs out. */
int rp__def_reserve(rp_stream *st, size_t want);
/* The same, the common case (room made already) tested inline: 1 when
 * there is room for every op of `s`, 0 when memory runs out. */
static inline __attribute__((always_inline)) int rp__def_room_for(rp_stream *st,
                                                                  const rp_seq *s)
{
    return s->det->n <= st->match.capdef || rp__def_reserve(st, s->det->n) == 0;
}
/* Op k of `s`, a sequence with volatile fields there, stands for launch
 * `l`: equal outside them; its values are kept in the stream's arena
 * (rp_stream.match.arena). 1, or 0 (nothing done). */
int rp__match_masked(rp_stream *st, rp_seq *s, size_t k, const rp_launch *l);
/* rp__masked_at's parameters: a launch's (`kp`) compared as op k's image
 * `fo` of `s` compares them, outside the op's volatile ones, which are
 * then copied to the arena (which holds `s`'s values). 1, or 0 (nothing
 * written). */
int rp__masked_params(rp_stream *st, const rp_seq *s, size_t k, const rp_fast *fo, void **kp);
/* The fast path at op k > 0 with several candidates: when the general
 * path's narrow() would keep every one (its op k is launch `l`, or, decided
 * from the launch, takes it as another known form or with fields taken as
 * volatile for the occurrence, noted as narrow() notes them) and none ends
 * with it, deferred as a borrowed record of one whose op k is the launch
 * (rp_stream.match.borrowed_seq, written down when anything else reads the
 * records; a change of lender writes the run lent so far down first):
 * DEFERRED. Otherwise EAGER, and nothing was done but, at most, that
 * write-down, which the general path makes first anyway (the caller
 * records the launch and offers it, which narrows the candidates as
 * usual). */
enum rp_offer rp__match_several(rp_stream *st, CUstream h, const rp_launch *l,
                                enum rp__entry entry);
/* The fast path for the first op of a match (match.h): the sequence last
 * replayed on the stream, when no other of its home begins with its first
 * op's kernel (rp_seq.first_unique: rp__match_offer would find it alone);
 * else the sequences rp__match_offer would find, each compared by its
 * image (several beginning with the kernel, or the launch's kernel not the
 * last one's: steps that take turns), unless no sequence begins with it
 * (rp_ctxstate.first_kernel_bits). Only on a stream that replayed since no
 * sequence went (its hint), and not on a per-thread stream: a match there
 * begins by recording where (coord/handoff.c, mark_start). */
enum rp_offer rp__match_first(rp_stream *st, CUstream h, const rp_launch *l,
                              enum rp__entry entry);

/* Whether an op `st` holds names the event of serial `eser`: 2 when the
 * last such op is a record (the event's state is held: a query must not
 * see the driver's), 1 when only waits do, 0 when none does. */
int rp__match_holds_event(const rp_stream *st, uint32_t eser);
/* The program destroys event `e`, which an op `st` holds names: its
 * destroy waits for `st`'s next resolution (rp__match_resolve issues it
 * after the op). Returns 0, or -1 when no more can wait (nothing done:
 * the caller resolves first). */
int rp__match_defer_destroy(rp_stream *st, CUevent e);
/* Write down the ops the fast path deferred as records borrowed from
 * their sequence (rp_stream.match.borrowed_seq; none: nothing done). */
void rp__match_write_down(rp_stream *st);
/* Forget the candidates rp__match_offer found (nothing deferred yet). */
void rp__match_cancel(rp_stream *st);
/* Sequence `s`, whose first op the stream's first held op matches, becomes
 * a candidate as rp__match_offer makes it one (those without updates kept
 * in front, cand[0 .. *nexact); a full list gives one of them up for a
 * sequence with updates). */
void rp__match_take(rp_stream *st, rp_seq *s, size_t *nexact);
/* The stream's record goes (or its context's teardown forgets it): the
 * sequences it matched against are its no longer (rp_seq.pins). Frees
 * what the matcher keeps for it. */
void rp__match_stream_free(rp_stream *st);
/* What rp__match_resolve did. */
struct rp_resolved {
    rp_seq *replayed;   /* the sequence launched in place of the first ops, or NULL */
    int parted;         /* a part of the occurrence had been launched already
                           (rp__match_part), whether or not the rest was */
    rp_op *flushed;     /* the ops issued eagerly after it, whose records the
                           caller takes (until the stream's next op) ... */
    size_t nflushed;    /* ... and how many */
    CUresult err;       /* the first error of a flushed call */
};
/* Resolve what is deferred on `st`, issuing on `target` (its own stream, or
 * the private stream for another thread's per-thread stream): launch the
 * longest complete match, issue the rest eagerly in order. Afterwards
 * nothing is deferred and the flushed records wait (out->flushed) for the
 * caller to hand them to learning (rp__learn_resolved). The bookkeeping of
 * a replay for learning is the caller's too (rp__learn_resolved). */
void rp__match_resolve(rp_stream *st, CUstream target, struct rp_resolved *out);
/* A quiet spot in the middle of an occurrence (the idle watch): launch what
 * `st` holds of it on `target` (its own stream) as a part of the graph of
 * the candidate that takes it (the one replayed most, when several still
 * match: the others are dropped), the other nodes disabled, and keep
 * matching the rest against that candidate alone. Returns 1 when it was
 * launched (nothing is held now), 0 when it cannot be (no candidate whose
 * graph runs parts, a per-thread stream resolved for its owner, a launch
 * not made or failed): the caller resolves the stream as before. */
int rp__match_part(rp_stream *st, CUstream target);
/* ---- widen.c: within the matcher ------------------------------------------------ */

/* Whether a memset's or a copy's device operands (of `kind`: dst, src,
 * bytes, a memset's element size) that differ from the sequence's op
 * `want` (volatile ones) lie in live device memory. The driver checks
 * them at the call: eagerly, a copy from an address nothing was allocated
 * at fails there (CUDA_ERROR_INVALID_VALUE). Deferred, the call would be
 * answered CUDA_SUCCESS, and the node update to it refused later
 * ("allocated from the same contexts as the original", issue 34), its
 * error returned by whichever call forced the flush. Not the sequence's
 * then: it diverges, and the driver answers the call. Taken by
 * rp__match_values_ok for a record, and by join.c's call_match for an
 * unrecorded memset or copy. */
static inline int rp__operands_live(const rp_op *want, rp_op_kind kind, CUdeviceptr dst,
                                    CUdeviceptr src, size_t bytes, unsigned int elem)
{
    if (kind == RP_OP_MEMSET)
        return dst == want->dst || rp__rec_device_range_ok(dst, bytes * elem);
    int resized = bytes != want->bytes;
    if (kind != RP_OP_DTOH && (resized || dst != want->dst) && !rp__rec_device_range_ok(dst, bytes))
        return 0;
    return kind == RP_OP_HTOD || (!resized && src == want->src) ||
           rp__rec_device_range_ok(src, bytes);
}
/* Whether the driver would accept `op`'s values, where they differ from
 * those of the sequence's op `want` standing for it. */
int rp__match_values_ok(rp_ctxstate *cs, const rp_op *want, const rp_op *op);
/* Whether candidate `s` may take the fields its op k differs from `op` in
 * as volatile for this occurrence (noted in st->match.wid). */
int rp__widen(rp_stream *st, rp_seq *s, size_t k, const rp_op *op);
/* Whether candidate `s` may be widened at op k at all (a sequence with
 * updates, past its first op, not a fork/join one). */
static inline int rp__widen_may(const rp_seq *s, size_t k)
{
    return s->vmask && k && !s->fj.multi;
}
/* rp__widen's decision, for `op` (a kernel's function, flags and geometry
 * are read) that is op k's node (rp__op_same_node) and differs from it in
 * `diff` (rp__op_diff, which said `ok`): 1 and *w made (not noted), or 0.
 * Shared by rp__widen and the fast path, which reads the difference from
 * the launch (fast.c). */
int rp__widen_take(const rp_stream *st, rp_seq *s, size_t k, const rp_op *op, uint64_t diff,
                   int ok, struct rp_widen *w);
/* `s` is launched for the occurrence: what it took becomes its own
 * (nothing to do, and no call, when no candidate took anything). */
void rp__widen_commit_taken(rp_stream *st, rp_seq *s);
static inline void rp__widen_commit(rp_stream *st, rp_seq *s)
{
    if (st->match.nwid)
        rp__widen_commit_taken(st, s);
}
/* `s` left the candidates: what it took is forgotten. */
void rp__widen_drop(rp_stream *st, const rp_seq *s);

/* ---- fast.c -------------------------------------------------------------------- */
/* Where the fast path put the values of the op it deferred as op k of `s`,
 * a sequence with volatile fields (rp_stream.match.arena): a launch's
 * geometry and parameters, a memset's or copy's operands. */
static inline uint8_t *rp__arena_of(const rp_stream *st, const rp_seq *s, size_t k)
{
    return st->match.arena.p + s->match.poff[k];
}
/* Whether the stream's arena holds `s`'s values (fast.c, arena_room). */
static inline int rp__arena_holds(const struct rp_arena *a, const rp_seq *s)
{
    return a->gen == s->match.gen && a->ops == s->det->ops && a->cap >= s->match.ptotal;
}
/* The stream's spare arenas (rp_stream.match.spare). */
#define RP_SPARES (sizeof ((rp_stream *)0)->match.spare / sizeof ((rp_stream *)0)->match.spare[0])
/* Room in the stream's arena for `s`, filled with its values (0), or -1:
 * memory ran out, or records written down point in and it would have to
 * grow or be filled for `s`, nor a spare take its place (rp_arena.held). */
int rp__arena_room(rp_stream *st, const rp_seq *s);
/* Make the fast path's images of `s`'s kernels, once (at its first offer):
 * without memory, none, and every launch of it takes the general path. */
void rp__match_adopt(rp_seq *s);
/* Make op k's image compare what its mask (now `vm`) leaves (a sequence
 * with updates whose mask grew). */
void rp__fast_remask(rp_seq *s, size_t k, uint64_t vm);


/* 1 when the launch's arguments (kernelParams) are those the image
 * compares (the sequence's block `seqp` for larger ones). Inline where a
 * launch with volatile fields is compared (match.c); out of line for the
 * exact ops the image's one loop does not compare (fast.c). */
static inline __attribute__((always_inline)) int rp__fast_params_in(const rp_fast *fo, void **kp,
                                                                    const uint8_t *seqp)
{
    if (fo->nparams && !kp)
        return 0;
    const rp_fast_cmp *c = fo->cmp, *e8 = c + fo->n8, *e4 = e8 + fo->n4, *e = c + fo->ncmp;
    for (; c < e8; c++) {
        uint64_t v;
        memcpy(&v, kp[c->idx], 8);
        if (v != c->val)
            return 0;
    }
    for (; c < e4; c++) {
        uint32_t v;
        memcpy(&v, kp[c->idx], 4);
        if (v != (uint32_t)c->val)
            return 0;
    }
    for (; c < e; c++)
        if (memcmp(kp[c->idx], seqp + c->off, c->size))
            return 0;
    return 1;
}
int rp__fast_params(const rp_fast *fo, void **kp, const uint8_t *seqp);

/* Word i of seven consecutive geometry words (read as bytes, as
 * rp__geometry_same reads them: a record's grid, block and shared memory
 * are three fields). */
static inline unsigned int rp__geometry_word(const unsigned int *geometry, int i)
{
    unsigned int w;
    memcpy(&w, (const unsigned char *)geometry + i * sizeof w, sizeof w);
    return w;
}
/* 1 when launch `l`'s geometry is `geometry`'s seven words (grid, block,
 * shared memory: an image's, or a record's from its grid on). The launch
 * is taken by value, and its fields read one by one, so that it need not
 * be made in memory (the caller's inline code keeps it in registers). */
static inline __attribute__((always_inline)) int rp__launch_geometry_same(const unsigned int *geometry,
                                                                          rp_launch l)
{
    const unsigned int *g = geometry;
    return !((rp__geometry_word(g, 0) ^ l.grid[0]) | (rp__geometry_word(g, 1) ^ l.grid[1]) |
             (rp__geometry_word(g, 2) ^ l.grid[2]) | (rp__geometry_word(g, 3) ^ l.block[0]) |
             (rp__geometry_word(g, 4) ^ l.block[1]) | (rp__geometry_word(g, 5) ^ l.block[2]) |
             (rp__geometry_word(g, 6) ^ l.shmem));
}

/* 1 when the launch's geometry and arguments are those of the image (the
 * launch by value: rp__launch_geometry_same). */
static inline __attribute__((always_inline)) int rp__fast_same(const rp_fast *fo, rp_launch l,
                                                               const rp_seq *s, size_t k)
{
    if (!rp__launch_geometry_same(fo->geometry, l))
        return 0;
    if (RP_UNLIKELY(!fo->words))
        return rp__fast_params(fo, l.kp, s->det->ops[k].params);
    if (fo->nparams && !l.kp)
        return 0;
    for (uint32_t i = 0; i < fo->nparams; i++) {
        uint64_t v;
        if (fo->size4 >> i & 1) {
            uint32_t u;
            memcpy(&u, l.kp[i], 4);
            v = u;
        } else {
            memcpy(&v, l.kp[i], 8);
        }
        if (v != fo->vals[i])
            return 0;
    }
    return 1;
}

/* The image of op k of `s` (not broken) when a launch of `f` on the stream
 * whose record's handle is `h`, through the call `tag` says
 * (rp__fast_tag), may be that op; else NULL. */
static inline __attribute__((always_inline)) const rp_fast *
rp__fast_image(const rp_seq *s, size_t k, CUfunction f, CUstream h, uint32_t tag)
{
    const rp_fast *fo = s->match.fast ? &s->match.fast[k] : NULL;
    return fo && fo->f == f && fo->stream == h && fo->tag == tag && !s->broken ? fo : NULL;
}

/* No record among the borrowed ones any more. */
static inline void rp__match_own_clear(rp_stream *st)
{
    for (unsigned int j = 0; j < st->match.nown; j++)
        st->match.ownbits[st->match.own[j] / 64] = 0;
    st->match.nown = 0;
    st->match.ownp = NULL;
}
/* The records among the borrowed ones, for rp_vals (NULL: none; never
 * any without a borrowed run: each way it ends clears them). */
static inline const uint64_t *rp__match_ownbits(const rp_stream *st)
{
    return st->match.ownp;
}
/* `s` lends the stream its records from op k on (rp_stream.match.borrowed_seq),
 * unless one lends already; room for the rest of its ops is made now:
 * writing them down later must not fail. 0, or -1 (nothing done). */
static inline __attribute__((always_inline)) int rp__borrow(rp_stream *st, rp_seq *s, size_t k)
{
    if (st->match.borrowed_seq)
        return 0;
    if (!rp__def_room_for(st, s))
        return -1;
    st->match.borrowed_seq = s;
    st->match.borrowed_from = k;
    HOLDS(!st->match.nown); /* cleared when the last run borrowed ended */
    st->match.borrowed_opno = st->opno;
    return 0;
}

/* `s`, the stream's only candidate, matched in full: it is the complete
 * match, the longest (a shorter one that completed earlier is let go:
 * note_complete keeps only the longest). */
static inline __attribute__((always_inline)) enum rp_offer rp__complete_alone(rp_stream *st,
                                                                               rp_seq *s)
{
    if (RP_UNLIKELY(st->match.complete != NULL))
        st->match.complete->pins--;
    st->match.complete = s;
    st->match.ncand = 0;
    return RP_OFFER_COMPLETE;
}

/* rp__match_masked for op k of the stream's only candidate, whose image
 * is `fo`, and launch `l` (by value: see rp__fast_same), in its common
 * case inline: the op's mask names no geometry, its image compares what
 * the mask leaves already, and the arena holds the sequence's values. The
 * same comparison and the same values written as rp__match_masked's
 * (masked_same, match_masked); any other case is rp__match_masked's. */
static inline __attribute__((always_inline)) int rp__masked_at(rp_stream *st, rp_seq *s, size_t k,
                                                               const rp_fast *fo, rp_launch l)
{
    uint64_t m = s->vmask[k];
    if (RP_UNLIKELY((m & (RP_VOL_GRID | RP_VOL_BLOCK | RP_VOL_SHMEM)) || fo->vm != m ||
                    !s->match.poff || !rp__arena_holds(&st->match.arena, s))) {
        rp_launch copy = l; /* in memory here only */
        return rp__match_masked(st, s, k, &copy);
    }
    if (!rp__launch_geometry_same(s->det->ops[k].grid, l))
        return 0;
    if (!rp__masked_params(st, s, k, fo, l.kp))
        return 0;
    unsigned int *a = (unsigned int *)(void *)rp__arena_of(st, s, k);
    a[0] = l.grid[0], a[1] = l.grid[1], a[2] = l.grid[2];
    a[3] = l.block[0], a[4] = l.block[1], a[5] = l.block[2], a[6] = l.shmem;
    return 1;
}

/* Op k of `s` stands for launch `l` (`s` the stream's only candidate, or,
 * at k = 0, the one rp__match_first chose): deferred as rp__match_launch
 * says. */
static inline __attribute__((always_inline)) enum rp_offer
rp__match_at(rp_stream *st, rp_seq *s, size_t k, CUstream h, rp_launch l, enum rp__entry entry)
{
    size_t n = s->det->n;
    const rp_fast *fo = rp__fast_image(s, k, l.f, h, rp__fast_tag(entry, l.ptsz));
    if (!fo)
        return RP_OFFER_EAGER;
    if (RP_UNLIKELY(s->vmask)) {
        /* Every launch of a sequence with updates keeps its values in the
         * arena, also one matched exactly: its op's mask may be widened
         * while it is deferred (another thread's per-thread stream learns
         * the same structure), and the arena is then what it is read from. */
        if (!rp__masked_at(st, s, k, fo, l))
            return RP_OFFER_EAGER;
    } else if (!rp__fast_same(fo, l, s, k)) {
        return RP_OFFER_EAGER;
    }
    if (rp__borrow(st, s, k) != 0)
        return RP_OFFER_EAGER;
    if (!k) { /* as rp__match_offer begins a match (nothing was held) */
        st->match.cand[0] = s;
        st->match.ncand = 1;
        st->match.complete = NULL;
        s->pins++;
    }
    st->opno++;
    /* Complete after op k: `s`, the only candidate, is the longest
     * (match.c, note_complete). */
    if ((st->match.ndef = k + 1) < n)
        return RP_OFFER_DEFERRED;
    return rp__complete_alone(st, s);
}

/* For a launch `l` (by value: see rp__fast_same) through `entry` on the
 * stream whose record's handle is `h`, in the trace of `st` (`h`'s, or the
 * one it joined). When `st` holds deferred ops that one sequence alone
 * still matches (or none, and rp__match_first picks one) and `l` is that
 * sequence's next op (exactly, or outside the op's volatile fields, whose
 * values are then kept: rp__match_masked), it is deferred as a borrowed
 * record (the sequence's own: nothing recorded, nothing copied, written
 * down only if something reads it: see rp_stream.match.borrowed_seq) and given its
 * position: DEFERRED, or COMPLETE (resolve now). Otherwise EAGER, and
 * nothing was done (the caller records the launch and offers it as usual).
 * The sequence outlives the borrowed records: it stays the candidate or the
 * complete match until the stream is resolved, and a resolution makes the
 * flushed ones owned. */
static inline __attribute__((always_inline)) enum rp_offer
rp__match_launch(rp_stream *st, CUstream h, rp_launch l, enum rp__entry entry)
{
    if (l.extra || (l.cfg && l.cfg->numAttrs))
        return RP_OFFER_EAGER;
    size_t k = st->match.ndef;
    if (RP_UNLIKELY(!k)) {
        rp_launch copy = l; /* in memory here only */
        return rp__match_first(st, h, &copy, entry);
    }
    if (RP_UNLIKELY(st->match.ncand != 1)) {
        if (!st->match.ncand)
            return RP_OFFER_EAGER;
        rp_launch copy = l; /* in memory here only */
        return rp__match_several(st, h, &copy, entry);
    }
    return rp__match_at(st, st->match.cand[0], k, h, l, entry);
}

/* ---- join.c, match.c: what joins the held run --------------------------------- */
/* The held run's candidate whose next op (at st->match.ndef) a memset or
 * copy through `entry` may join: the one candidate, lending its records
 * (or, when the run holds none borrowed, lending none yet: a run written
 * down, not an empty one), or, of a run held borrowed with several
 * candidates, the borrowed one (each of the others then asked too:
 * join.c); not broken, not at its end, its op there recorded through that
 * entry; else NULL. */
static inline rp_seq *rp__join_candidate(const rp_stream *st, unsigned int entry)
{
    rp_seq *b = st->match.borrowed_seq;
    size_t k = st->match.ndef, nc = st->match.ncand;
    if (RP_UNLIKELY(!b) && k)
        b = nc == 1 ? st->match.cand[0] : NULL; /* the one candidate, if one (asked next) */
    if (!b || k >= b->det->n || b->broken || entry != b->det->ops[k].entry)
        return NULL;
    return nc > 1 || (nc == 1 && st->match.cand[0] == b) ? b : NULL;
}
/* The candidates of bits `drop` (by their place in the list; none broken)
 * leave it as narrow() lets go one whose op at st->match.ndef is another
 * node than `got`: "another operation", their widenings dropped, unpinned;
 * the others keep their order. `got` is the op's record or one with its
 * kind, entry flags, context, stream and, for a kernel, function: what the
 * divergence notes of another node (rp__op_delta, the kernel's name). */
void rp__match_drop(rp_stream *st, uint32_t drop, const rp_op *got);
/* rp__seq_match, with what call_match found of the op taken (match.c). */
int rp__seq_match_op(const rp_stream *st, const rp_seq *s, size_t k, const rp_op *op);

/* Whether op k of `b` can join (asked after the op matched): the arena can
 * keep its values (it may be filled; none needed without a mask), and `b`
 * lends its records from op k on if it lent none yet (rp__borrow: room for
 * the rest of them made, at the stream's position, which the op's is: the
 * callers that may find the run written down come before the op is given
 * one, rp__match_joinable). */
static inline int rp__join_room(rp_stream *st, rp_seq *b, size_t k)
{
    return (!b->vmask || (b->match.poff && rp__arena_room(st, b) == 0)) && rp__borrow(st, b, k) == 0;
}

/* The op joined as op k of `b`: DEFERRED, or COMPLETE at its last op. */
static inline enum rp_offer rp__joined_at(rp_stream *st, rp_seq *b, size_t k)
{
    if ((st->match.ndef = k + 1) < b->det->n)
        return RP_OFFER_DEFERRED;
    return rp__complete_alone(st, b);
}

#endif
