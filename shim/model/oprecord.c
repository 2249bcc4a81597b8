/* oprecord.c - keys, exact comparison and ownership of op records. */
#include "oprecord.h"

#include "alloc.h"
#include "check.h"
#include "explain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *rp__op_kind_name(rp_op_kind kind)
{
    static const char *const names[] = {[RP_OP_KERNEL] = "kernel", [RP_OP_HTOD] = "htod copy",
                                        [RP_OP_DTOD] = "dtod copy", [RP_OP_DTOH] = "dtoh copy",
                                        [RP_OP_MEMSET] = "memset", [RP_OP_EVREC] = "event record",
                                        [RP_OP_EVWAIT] = "event wait"};
    return (unsigned int)kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "?";
}

uint64_t rp__hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = rp__hash_u64(h, w);
        b += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, b, n);
        h = rp__hash_u64(h, w ^ ((uint64_t)n << 56));
    }
    return h;
}

/* Whether a copy's size is part of its identity: a staged copy's graph
 * reads staging of the captured size, and an empty copy's node cannot be
 * set to a non-empty one or back ("zero-length operations are not
 * supported"). */
static int copy_size_is_identity(const rp_op *op)
{
    return rp__op_staged(op) || op->bytes == 0;
}

/* The keys are computed for every op a stream learns: the cheap hash of
 * oprecord.h (rp__acc, rp__acc_bytes, rp__fin). */
void rp__op_keys(rp_op *op)
{
    uint64_t h = RP_HASH_SEED;
    /* The context is not hashed: each context has tables of its own. */
    h = rp__acc(h, (uint64_t)op->kind | (uint64_t)op->flags << 8 | (uint64_t)op->sid << 32);
    switch (op->kind) {
    case RP_OP_KERNEL:
        h = rp__acc(h, op->fid);
        if (op->nattrs)
            h = rp__acc_bytes(h, op->attrs, op->nattrs * sizeof *op->attrs);
        h = rp__acc(h, op->param_bytes);
        op->skey = rp__fin(h);
        /* grid[3], block[3], shmem: seven consecutive unsigned ints */
        h = rp__acc_bytes(h, op->grid, 7 * sizeof(unsigned int));
        op->ckey = rp__fin(rp__acc_bytes(h, op->params, op->param_bytes));
        break;
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        /* By kind and stream: which event is a role in its list (erole,
         * compared exactly), not a handle. */
        op->skey = op->ckey = rp__fin(h);
        break;
    case RP_OP_MEMSET:
        h = rp__acc(h, (uint64_t)op->bytes);
        h = rp__acc(h, op->elem);
        op->skey = rp__fin(h);
        op->ckey = rp__fin(rp__acc(rp__acc(h, op->dst), op->value));
        break;
    default: /* copies */
        op->skey =
            rp__fin(rp__acc(h, copy_size_is_identity(op) ? (uint64_t)op->bytes : UINT64_MAX));
        h = rp__acc(h, (uint64_t)op->bytes);
        h = rp__acc(h, op->dst);
        h = rp__acc(h, op->src);
        if (rp__op_host_is_content(op))
            h = rp__acc(h, (uint64_t)(uintptr_t)op->host);
        op->ckey = rp__fin(h);
        break;
    }
}

int rp__op_same_structure(const rp_op *a, const rp_op *b)
{
    if (a->kind != b->kind || a->flags != b->flags || a->ctx != b->ctx ||
        a->stream != b->stream)
        return 0;
    switch (a->kind) {
    case RP_OP_KERNEL:
        return a->func == b->func && a->param_bytes == b->param_bytes && rp__op_same_attrs(a, b);
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        return a->erole == b->erole;
    case RP_OP_MEMSET:
        /* The strict reading of the driver's rule: a 1-D memset node's
         * width may change only "opportunistically" (docs/engine.md). */
        return a->bytes == b->bytes && a->elem == b->elem;
    default:
        return copy_size_is_identity(a) == copy_size_is_identity(b) &&
               (!copy_size_is_identity(a) || a->bytes == b->bytes);
    }
}

void rp__op_roles(rp_op *ops, size_t n)
{
    uint32_t seen[64];
    uint32_t nseen = 0;
    for (size_t i = 0; i < n; i++) {
        rp_op *op = &ops[i];
        if (!rp__op_is_event(op->kind))
            continue;
        uint32_t r = 0;
        while (r < nseen && seen[r] != op->eser)
            r++;
        if (r == nseen && nseen < 64)
            seen[nseen++] = op->eser;
        op->erole = r + 1;
    }
}

uint32_t rp__op_role_after(const rp_op *ops, size_t n, uint32_t eser)
{
    uint32_t roles = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rp__op_is_event(ops[i].kind))
            continue;
        if (ops[i].eser == eser)
            return ops[i].erole;
        roles = ops[i].erole > roles ? ops[i].erole : roles;
    }
    return roles < 65 ? roles + 1 : 65;
}

int rp__op_same_node(const rp_op *a, const rp_op *b)
{
    if (a->kind != RP_OP_KERNEL)
        return rp__op_same_structure(a, b);
    return a->kind == b->kind && a->flags == b->flags && a->ctx == b->ctx &&
           a->stream == b->stream && rp__op_same_attrs(a, b);
}

int rp__op_same_geometry(const rp_op *a, const rp_op *b)
{
    switch (a->kind) {
    case RP_OP_KERNEL:
        return !memcmp(a->grid, b->grid, sizeof a->grid) &&
               !memcmp(a->block, b->block, sizeof a->block) && a->shmem == b->shmem;
    case RP_OP_MEMSET:
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        return 1; /* its size is structure; an event op has none */
    default:
        return a->bytes == b->bytes;
    }
}

int rp__op_same_content(const rp_op *a, const rp_op *b)
{
    /* No key shortcut: a record's keys are computed only when it joins a
     * learnt segment, and comparing the fields is as cheap. */
    if (!rp__op_same_structure(a, b) || !rp__op_same_geometry(a, b))
        return 0;
    switch (a->kind) {
    case RP_OP_KERNEL:
        return a->param_bytes == 0 || !memcmp(a->params, b->params, a->param_bytes);
    case RP_OP_MEMSET:
        return a->dst == b->dst && a->value == b->value;
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        return 1; /* the event is structure */
    default: /* copies: a staged HtoD's source bytes are payload, not content */
        return a->dst == b->dst && a->src == b->src &&
               (!rp__op_host_is_content(a) || a->host == b->host);
    }
}

/* A free block's first bytes link it to the next one. Blocks freed by
 * another thread join that thread's list. A list holds at most
 * FREE_BLOCKS_MAX blocks (the rest go back to malloc), and a thread's list
 * is freed when the thread exits (a pthread key's destructor), so a program
 * that keeps starting threads does not leak. */
#define FREE_BLOCKS_MAX 512
static __thread __attribute__((tls_model("initial-exec"))) uint8_t *free_blocks;
static __thread __attribute__((tls_model("initial-exec"))) unsigned int nfree_blocks;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void free_list_at_exit(void *unused)
{
    (void)unused;
    while (free_blocks) {
        uint8_t *p = free_blocks;
        memcpy(&free_blocks, p, sizeof free_blocks);
        free(p);
    }
    nfree_blocks = 0;
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, free_list_at_exit);
}

uint8_t *rp__params_alloc(size_t bytes)
{
    if (bytes > RP_PARAM_BLOCK)
        return rp__calloc(1, bytes);
    uint8_t *p = free_blocks;
    if (p) {
        memcpy(&free_blocks, p, sizeof free_blocks);
        nfree_blocks--;
        memset(p, 0, bytes); /* zeroed as far as it is used */
        return p;
    }
    return rp__calloc(1, RP_PARAM_BLOCK);
}

void rp__params_free(uint8_t *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes > RP_PARAM_BLOCK || nfree_blocks >= FREE_BLOCKS_MAX) {
        free(p);
        return;
    }
    if (!free_blocks) {
        /* The thread's first block: make sure its exit frees the list. */
        pthread_once(&exit_key_once, make_exit_key);
        pthread_setspecific(exit_key, (void *)1);
    }
    memcpy(p, &free_blocks, sizeof free_blocks);
    free_blocks = p;
    nfree_blocks++;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    if (!p || !n)
        return NULL;
    uint8_t *q = rp__malloc(n);
    if (q)
        memcpy(q, p, n);
    return q;
}

int rp__op_copy(rp_op *dst, const rp_op *src)
{
    *dst = *src;
    dst->borrowed = 0;
    dst->params = NULL;
    if (src->params && src->param_bytes) {
        dst->params = rp__params_alloc(src->param_bytes);
        if (dst->params)
            memcpy(dst->params, src->params, src->param_bytes);
    }
    dst->data = rp__op_staged(src) ? dup_bytes(src->data, src->bytes) : NULL;
    dst->attrs = src->nattrs ? (CUlaunchAttribute *)dup_bytes((const uint8_t *)src->attrs,
                                                              src->nattrs * sizeof *src->attrs)
                             : NULL;
    if ((src->params && src->param_bytes && !dst->params) ||
        (rp__op_staged(src) && src->data && src->bytes && !dst->data) ||
        (src->nattrs && !dst->attrs)) {
        rp__params_free(dst->params, src->param_bytes);
        free(dst->data);
        free(dst->attrs);
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    return 0;
}

void rp__op_free(rp_op *op)
{
    if (!op->borrowed) {
        rp__params_free(op->params, op->param_bytes);
        free(op->data);
        free(op->attrs);
    }
    memset(op, 0, sizeof *op);
}

/* A kernel's geometry fields that differ, as volatile bits. */
uint64_t rp__op_geometry_diff(const rp_op *a, const rp_op *b)
{
    uint64_t m = 0;
    if (memcmp(a->grid, b->grid, sizeof a->grid))
        m |= RP_VOL_GRID;
    if (memcmp(a->block, b->block, sizeof a->block))
        m |= RP_VOL_BLOCK;
    if (a->shmem != b->shmem)
        m |= RP_VOL_SHMEM;
    return m;
}

uint64_t rp__op_diff(const rp_op *a, const rp_op *b, const rp_param_layout *L,
                     const rp_param_layout *Lb, int *ok)
{
    uint64_t m = 0;
    *ok = 1;
    switch (a->kind) {
    case RP_OP_KERNEL: {
        m = rp__op_geometry_diff(a, b);
        if (rp__op_other_func(a, b)) {
            /* Another function: the node is set to it, geometry and
             * parameters in its own layout, if both layouts are known and
             * the node carries no attribute (then the attributes are the
             * same in both: rp__op_same_node). */
            if (!L || L->total != a->param_bytes || !Lb || Lb->total != b->param_bytes ||
                rp__op_node_attrs(a))
                *ok = 0;
            return m | RP_VOL_FUNC;
        }
        if (!L || L->total != a->param_bytes || rp__op_node_attrs(a)) {
            /* Without the layout the node cannot be set at all; a kernel
             * whose node carries launch attributes is not set (the node
             * update carries none: whether the driver keeps them is not
             * known). One whose only attribute is left out of graphs
             * (programmatic stream serialization) has a plain node. */
            if (m || (a->param_bytes && memcmp(a->params, b->params, a->param_bytes)))
                *ok = 0;
            return 0;
        }
        /* Padding is zeroed by the recorder, so only parameters can differ. */
        for (uint32_t i = 0; i < L->n; i++) {
            if (!memcmp(a->params + L->off[i], b->params + L->off[i], L->size[i]))
                continue;
            if (i >= RP_VOL_MAX_PARAMS)
                *ok = 0;
            else
                m |= 1ull << i;
        }
        return m;
    }
    case RP_OP_MEMSET:
        if (a->dst != b->dst)
            m |= RP_VOL_DST;
        if (a->value != b->value)
            m |= RP_VOL_VALUE;
        return m;
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        return 0; /* everything is structure */
    default:
        if (a->dst != b->dst)
            m |= RP_VOL_DST;
        if (a->src != b->src)
            m |= RP_VOL_SRC;
        if (rp__op_host_is_content(a) && a->host != b->host)
            m |= RP_VOL_HOST;
        if (a->bytes != b->bytes)
            m |= RP_VOL_BYTES;
        return m;
    }
}

int rp__op_match_masked(const rp_op *a, const rp_op *b, uint64_t mask, const rp_param_layout *L)
{
    if (!mask)
        return rp__op_same_content(a, b);
    if ((mask & RP_VOL_FUNC) && a->kind == RP_OP_KERNEL && rp__op_same_node(a, b) &&
        rp__op_other_func(a, b))
        return 1; /* every field of the node is set from `b` */
    if (!rp__op_same_structure(a, b))
        return 0;
    switch (a->kind) {
    case RP_OP_KERNEL:
        if (NEVER(!L || L->total != a->param_bytes))
            return 0; /* a kernel with a mask was recorded with its layout */
        if (rp__op_geometry_diff(a, b) & ~mask)
            return 0;
        if (!rp__geometry_same(a->grid, b->grid) && !rp__geometry_valid(b->grid))
            return 0;
        for (uint32_t i = 0; i < L->n; i++) {
            if (i < RP_VOL_MAX_PARAMS && (mask >> i & 1))
                continue;
            if (memcmp(a->params + L->off[i], b->params + L->off[i], L->size[i]))
                return 0;
        }
        return 1;
    case RP_OP_MEMSET:
        return ((mask & RP_VOL_DST) || a->dst == b->dst) &&
               ((mask & RP_VOL_VALUE) || a->value == b->value);
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        return 1;
    default:
        return ((mask & RP_VOL_DST) || a->dst == b->dst) &&
               ((mask & RP_VOL_SRC) || a->src == b->src) &&
               ((mask & RP_VOL_BYTES) || a->bytes == b->bytes) &&
               ((mask & RP_VOL_HOST) || !rp__op_host_is_content(a) || a->host == b->host);
    }
}

/* Fill *d with one field's two values; returns 1. */
static int delta(rp_op_delta *d, int field, unsigned int index, int structure, uint64_t had,
                 uint64_t got)
{
    memset(d, 0, sizeof *d);
    d->field = (uint8_t)field;
    d->index = (uint8_t)index;
    d->structure = (uint8_t)structure;
    d->had = had;
    d->got = got;
    return 1;
}

/* The first geometry value (grid, block, shared memory) that differs. */
static int geometry_delta(const rp_op *a, const rp_op *b, rp_op_delta *d)
{
    for (unsigned int i = 0; i < 3; i++)
        if (a->grid[i] != b->grid[i])
            return delta(d, RP_FIELD_GRID, i, 0, a->grid[i], b->grid[i]);
    for (unsigned int i = 0; i < 3; i++)
        if (a->block[i] != b->block[i])
            return delta(d, RP_FIELD_BLOCK, i, 0, a->block[i], b->block[i]);
    if (a->shmem != b->shmem)
        return delta(d, RP_FIELD_SHMEM, 0, 0, a->shmem, b->shmem);
    return 0;
}

/* Up to 8 bytes at `p`, as a little-endian integer. */
static uint64_t word_at(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    memcpy(&v, p, n < 8 ? n : 8);
    return v;
}

/* The first parameter of two kernel records (same function) that differs. */
static int param_delta(const rp_op *a, const rp_op *b, const rp_param_layout *L,
                       rp_op_delta *d)
{
    if (!a->param_bytes || !memcmp(a->params, b->params, a->param_bytes))
        return 0;
    int laid = L && L->total == a->param_bytes;
    uint32_t n = laid ? L->n : 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off = laid ? L->off[i] : 0, size = laid ? L->size[i] : a->param_bytes;
        for (uint32_t at = 0; at < size; at += 8) {
            size_t w = size - at < 8 ? size - at : 8;
            if (!memcmp(a->params + off + at, b->params + off + at, w))
                continue;
            delta(d, RP_FIELD_PARAM, laid && i < RP_DELTA_NO_LAYOUT ? i : RP_DELTA_NO_LAYOUT,
                  0, word_at(a->params + off + at, w), word_at(b->params + off + at, w));
            d->at = (uint16_t)(laid ? at : off + at);
            return 1;
        }
    }
    return 0; /* only padding differs (the recorder zeroes it: not seen) */
}

int rp__op_delta(const rp_op *a, const rp_op *b, const rp_param_layout *L, rp_op_delta *d)
{
    if (a->kind != b->kind)
        return delta(d, RP_FIELD_KIND, 0, 1, (uint64_t)a->kind, (uint64_t)b->kind);
    if (a->ctx != b->ctx)
        return delta(d, RP_FIELD_CONTEXT, 0, 1, (uintptr_t)a->ctx, (uintptr_t)b->ctx);
    if (a->stream != b->stream)
        return delta(d, RP_FIELD_STREAM, 0, 1, (uintptr_t)a->stream, (uintptr_t)b->stream);
    if (a->flags != b->flags)
        return delta(d, RP_FIELD_ENTRY, 0, 1, a->flags, b->flags);
    switch (a->kind) {
    case RP_OP_KERNEL:
        if (!rp__op_same_attrs(a, b))
            return delta(d, RP_FIELD_ATTRS, 0, 1, a->nattrs, b->nattrs);
        /* Another function on the same node: a node update may set it
         * (RP_VOL_FUNC), so it is not structure. */
        if (rp__op_other_func(a, b))
            return delta(d, RP_FIELD_FUNCTION, 0, rp__op_node_attrs(a) != 0, (uintptr_t)a->func,
                         (uintptr_t)b->func);
        return geometry_delta(a, b, d) || param_delta(a, b, L, d);
    case RP_OP_EVREC:
    case RP_OP_EVWAIT:
        /* Which event, by role (rp_op.erole): handles differ every step
         * where a framework makes a fresh event for each. */
        return a->erole != b->erole &&
               delta(d, RP_FIELD_EVENT, 0, 1, (uintptr_t)a->ev, (uintptr_t)b->ev);
    case RP_OP_MEMSET:
        if (a->elem != b->elem)
            return delta(d, RP_FIELD_ELEM, 0, 1, a->elem, b->elem);
        if (a->bytes != b->bytes)
            return delta(d, RP_FIELD_WIDTH, 0, 1, a->bytes, b->bytes);
        if (a->dst != b->dst)
            return delta(d, RP_FIELD_DST, 0, 0, a->dst, b->dst);
        return a->value != b->value && delta(d, RP_FIELD_VALUE, 0, 0, a->value, b->value);
    default:
        if (a->bytes != b->bytes)
            return delta(d, RP_FIELD_BYTES, 0, copy_size_is_identity(a) || copy_size_is_identity(b),
                         a->bytes, b->bytes);
        if (a->dst != b->dst)
            return delta(d, RP_FIELD_DST, 0, 0, a->dst, b->dst);
        if (a->src != b->src)
            return delta(d, RP_FIELD_SRC, 0, 0, a->src, b->src);
        return rp__op_host_is_content(a) && a->host != b->host &&
               delta(d, RP_FIELD_HOST, 0, 0, (uintptr_t)a->host, (uintptr_t)b->host);
    }
}
