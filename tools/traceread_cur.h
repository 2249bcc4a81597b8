/* traceread_cur.h - between the reader's files (traceread.c: the file, the
 * header and the records' framing; traceread_defs.c: definitions;
 * traceread_calls.c: calls; traceread_cur.c: what they share): a cursor
 * over one record's body whose every read is bounds-checked, and the
 * reader's memory, which a trace can never make larger than its size
 * justifies (rt__alloc). */
#ifndef RP_TRACEREAD_CUR_H
#define RP_TRACEREAD_CUR_H

#include "traceread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on what a trace may ask a reader to hold: beyond them the trace
 * is taken for corrupt rather than allocated for. A name is at most 64 KiB;
 * a function at most 4096 parameters (the recorder gives up on more) of at
 * most 128 KiB in all (it gives up on an offset or a size above 64 KiB;
 * CUDA's own limit is 32,764 bytes). */
#define RT_MAX_NAME 65536
#define RT_MAX_PARAMS 4096
#define RT_MAX_PSIZE (128u << 10)

/* A cursor over one record's body (or the header). */
struct cur {
    struct rt_reader *r;
    const unsigned char *p, *end;
    bool bad;
};

/* Ends reading with one line naming the byte: every later rt_next fails.
 * Returns -1. */
int rt__fail(struct rt_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline size_t rt__at(const struct cur *c)
{
    return (size_t)(c->p - c->r->buf);
}

/* The first failure of a cursor is the one reported. */
static inline void rt__cfail(struct cur *c, const char *what)
{
    if (!c->bad)
        rt__fail(c->r, rt__at(c), "%s", what);
    c->bad = true;
    c->p = c->end;
}

static inline uint64_t rt__v(struct cur *c, const char *what)
{
    uint64_t x = 0;
    if (c->bad)
        return 0;
    if (rp_tv_get(&c->p, c->end, &x) != 0) {
        char m[160];
        snprintf(m, sizeof m, "expected %s (a varint), %s", what,
                 c->p >= c->end ? "found the record's end" : "found a malformed varint");
        rt__cfail(c, m);
        return 0;
    }
    return x;
}

static inline unsigned rt__byte(struct cur *c, const char *what)
{
    if (c->bad)
        return 0;
    if (c->p >= c->end) {
        char m[160];
        snprintf(m, sizeof m, "expected %s (a byte), found the record's end", what);
        rt__cfail(c, m);
        return 0;
    }
    return *c->p++;
}

static inline const unsigned char *rt__bytes(struct cur *c, uint64_t n, const char *what)
{
    if (c->bad)
        return NULL;
    if ((uint64_t)(c->end - c->p) < n) {
        char m[200];
        snprintf(m, sizeof m, "expected %llu bytes of %s, found %zu before the record's end",
                 (unsigned long long)n, what, (size_t)(c->end - c->p));
        rt__cfail(c, m);
        return NULL;
    }
    const unsigned char *q = c->p;
    c->p += n;
    return q;
}

/* The bytes left in the record: every count a record gives of things that
 * each take at least `each` bytes of it is at most this over `each`. */
static inline size_t rt__left(const struct cur *c)
{
    return (size_t)(c->end - c->p);
}

/* Memory for the reader's tables, within the trace's budget (traceread.c,
 * rt_open: a floor and a multiple of the file's size): `old` bytes at p
 * become `n`. NULL with the cursor failed ("the trace asks for more memory
 * than its size justifies", or out of memory); p is then unchanged. */
void *rt__alloc(struct cur *c, void *p, size_t old, size_t n);
/* Gives back what rt__alloc counted for `n` bytes at p. */
void rt__free(struct rt_reader *r, void *p, size_t n);

/* A string of the record (its length first), NUL-terminated, in memory of
 * the budget; NULL with the cursor failed. */
char *rt__str(struct cur *c, const char *what);

/* An id the record defines: ids are given in order, each by a record of
 * its own, so none exceeds the records read before it by more than the
 * first stream id; the table `tab` of *n elements grows to hold it. */
bool rt__new_id(struct cur *c, void **tab, size_t *n, size_t elem, uint64_t id, const char *what);
#define RT_NEW_ID(c, tab, n, id, what) rt__new_id(c, (void **)&(tab), &(n), sizeof *(tab), id, what)
/* The same check for an id of a kind that has no table (events, graphs,
 * executables): true when it may be defined here. */
bool rt__id_fits(struct cur *c, uint64_t id, const char *what);

/* Definitions (traceread_defs.c): a definition record's body into out. */
void rt__def(struct cur *c, struct rt_rec *out);
/* Memory id `id` defined by an allocation or a MEM record. */
void rt__def_mem(struct cur *c, uint64_t id, unsigned space, uint64_t bytes, uint32_t ctx,
                 uint64_t base);
/* Calls (traceread_calls.c): a CALL record's body into out->call. */
void rt__call(struct cur *c, struct rt_rec *out);

#endif /* RP_TRACEREAD_CUR_H */
