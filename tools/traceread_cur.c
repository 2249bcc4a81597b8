/* traceread_cur.c - what the reader's files share (traceread_cur.h): the
 * one-line failure naming the byte, the memory the tables hold within the
 * trace's budget, strings, and the rule that ids come in order. */
#include "traceread_cur.h"

#include <stdarg.h>

int rt__fail(struct rt_reader *r, size_t at, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "%.100s: byte %zu: %s", r->path, at, what);
    r->pos = r->size + 1; /* every later rt_next fails */
    return -1;
}

/* ---- memory within the trace's budget ---------------------------------------------- */

void *rt__alloc(struct cur *c, void *p, size_t old, size_t n)
{
    struct rt_reader *r = c->r;
    if (c->bad)
        return NULL;
    if (n > old && n - old > r->limit - r->held) {
        char m[200];
        snprintf(m, sizeof m, "the trace asks the reader for %zu bytes more than the %zu its "
                              "size justifies (damaged or crafted)",
                 n - old - (r->limit - r->held), r->limit);
        rt__cfail(c, m);
        return NULL;
    }
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        rt__cfail(c, "out of memory");
        return NULL;
    }
    if (n > old)
        memset((char *)q + old, 0, n - old);
    r->held = r->held - old + n;
    return q;
}

void rt__free(struct rt_reader *r, void *p, size_t n)
{
    if (p)
        r->held -= n < r->held ? n : r->held;
    free(p);
}

char *rt__str(struct cur *c, const char *what)
{
    uint64_t n = rt__v(c, what);
    if (!c->bad && n > RT_MAX_NAME) {
        rt__cfail(c, "a string longer than 65536 bytes");
        return NULL;
    }
    const unsigned char *b = rt__bytes(c, n, what);
    if (!b)
        return NULL;
    char *s = rt__alloc(c, NULL, 0, n + 1);
    if (s)
        memcpy(s, b, n);
    return s;
}

bool rt__id_fits(struct cur *c, uint64_t id, const char *what)
{
    if (c->bad)
        return false;
    if (id > c->r->records + RP_TSTREAM_FIRST) {
        char m[200];
        snprintf(m, sizeof m, "%s id %llu, above what the %llu records before it can have "
                              "defined",
                 what, (unsigned long long)id, (unsigned long long)c->r->records);
        rt__cfail(c, m);
        return false;
    }
    return true;
}

bool rt__new_id(struct cur *c, void **tab, size_t *n, size_t elem, uint64_t id, const char *what)
{
    if (!rt__id_fits(c, id, what))
        return false;
    if (id < *n)
        return true;
    size_t nn = *n ? *n : 16;
    while (nn <= id)
        nn *= 2;
    void *t = rt__alloc(c, *tab, *n * elem, nn * elem);
    if (!t)
        return false;
    *tab = t;
    *n = nn;
    return true;
}

