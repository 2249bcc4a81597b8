/* traceread.c - the trace reader: the header, then records one at a time,
 * decoded against the same state the writer (shim/face/trace*.c) encoded them
 * with. Every read is bounds-checked; anything unexpected ends reading with
 * one line naming the byte offset and what was expected (traceread.h). */
#include "traceread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds on what a trace may ask a reader to hold: beyond them the trace
 * is taken for corrupt rather than allocated for. */
#define MAX_ID (1u << 24)
#define MAX_NAME 65536
#define MAX_PARAMS 4096
#define MAX_PSIZE (1u << 20)

const char *rt_family_name(unsigned family)
{
    switch (family) {
#define F(name, num, arity) case num: return #name;
        RP_TRACE_FAMILIES(F)
#undef F
    default:
        return "?";
    }
}

static bool family_known(uint64_t f)
{
    switch (f) {
#define F(name, num, arity) case num:
        RP_TRACE_FAMILIES(F)
#undef F
        return true;
    default:
        return false;
    }
}

/* A cursor over one record's body (or the header). */
struct cur {
    struct rt_reader *r;
    const unsigned char *p, *end;
    bool bad;
};

static int fail(struct rt_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct rt_reader *r, size_t at, const char *fmt, ...)
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

static size_t at(const struct cur *c)
{
    return (size_t)(c->p - c->r->buf);
}

/* The first failure of a cursor is the one reported. */
static void cfail(struct cur *c, const char *what)
{
    if (!c->bad)
        fail(c->r, at(c), "%s", what);
    c->bad = true;
    c->p = c->end;
}

static uint64_t v(struct cur *c, const char *what)
{
    uint64_t x = 0;
    if (c->bad)
        return 0;
    if (rp_tv_get(&c->p, c->end, &x) != 0) {
        char m[160];
        snprintf(m, sizeof m, "expected %s (a varint), %s", what,
                 c->p >= c->end ? "found the record's end" : "found a malformed varint");
        cfail(c, m);
        return 0;
    }
    return x;
}

static unsigned byte(struct cur *c, const char *what)
{
    if (c->bad)
        return 0;
    if (c->p >= c->end) {
        char m[160];
        snprintf(m, sizeof m, "expected %s (a byte), found the record's end", what);
        cfail(c, m);
        return 0;
    }
    return *c->p++;
}

static const unsigned char *bytes(struct cur *c, uint64_t n, const char *what)
{
    if (c->bad)
        return NULL;
    if ((uint64_t)(c->end - c->p) < n) {
        char m[200];
        snprintf(m, sizeof m, "expected %llu bytes of %s, found %zu before the record's end",
                 (unsigned long long)n, what, (size_t)(c->end - c->p));
        cfail(c, m);
        return NULL;
    }
    const unsigned char *q = c->p;
    c->p += n;
    return q;
}

static char *str(struct cur *c, const char *what)
{
    uint64_t n = v(c, what);
    if (!c->bad && n > MAX_NAME) {
        cfail(c, "a string longer than 65536 bytes");
        return NULL;
    }
    const unsigned char *b = bytes(c, n, what);
    if (!b)
        return NULL;
    char *s = malloc(n + 1);
    if (!s) {
        cfail(c, "out of memory");
        return NULL;
    }
    memcpy(s, b, n);
    s[n] = 0;
    return s;
}

/* Grow a table to hold index id (zeroed). */
static bool grow(struct cur *c, void **tab, size_t *n, size_t elem, uint64_t id, const char *what)
{
    if (id >= MAX_ID) {
        char m[160];
        snprintf(m, sizeof m, "%s id %llu out of range (at most %u)", what, (unsigned long long)id,
                 MAX_ID - 1);
        cfail(c, m);
        return false;
    }
    if (id < *n)
        return true;
    size_t nn = *n ? *n : 16;
    while (nn <= id)
        nn *= 2;
    void *t = realloc(*tab, nn * elem);
    if (!t) {
        cfail(c, "out of memory");
        return false;
    }
    memset((char *)t + *n * elem, 0, (nn - *n) * elem);
    *tab = t;
    *n = nn;
    return true;
}

#define GROW(c, tab, n, id, what) grow(c, (void **)&(tab), &(n), sizeof *(tab), id, what)

/* ---- the header ------------------------------------------------------------------- */

static void reset_tables(struct rt_reader *r)
{
    for (size_t i = 0; i < r->nentries; i++)
        free(r->entries[i].name);
    for (size_t i = 0; i < r->nfuncs; i++) {
        free(r->funcs[i].name);
        free(r->funcs[i].off);
        free(r->funcs[i].size);
        free(r->funcs[i].params);
        free(r->funcs[i].attrs);
    }
    free(r->entries);
    free(r->threads);
    free(r->ctxs);
    free(r->streams);
    free(r->modules);
    free(r->funcs);
    free(r->mems);
    r->entries = NULL, r->nentries = 0;
    r->threads = NULL, r->nthreads = 0;
    r->ctxs = NULL, r->nctxs = 0;
    r->streams = NULL, r->nstreams = 0;
    r->modules = NULL, r->nmodules = 0;
    r->funcs = NULL, r->nfuncs = 0;
    r->mems = NULL, r->nmems = 0;
    r->nevents = 0;
    r->ndevices = 0;
    r->records = r->calls = 0;
    r->last_tid = 0;
    r->last_seq = (uint64_t)-1;
    r->ended = false;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int parse_header(struct rt_reader *r)
{
    if (r->size < RP_TRACE_PREAMBLE)
        return fail(r, 0, "expected the trace's %d-byte preamble, the file has %zu bytes",
                    RP_TRACE_PREAMBLE, r->size);
    if (memcmp(r->buf, RP_TRACE_MAGIC, RP_TRACE_MAGIC_LEN) != 0)
        return fail(r, 0, "not a reprise trace (expected the magic \"RPTRACE\\n\")");
    r->version = le32(r->buf + 8);
    if (r->version != RP_TRACE_VERSION)
        return fail(r, 8, "trace format version %u; this reprise reads version %d",
                    r->version, RP_TRACE_VERSION);
    uint32_t hlen = le32(r->buf + 12);
    if (hlen > r->size - RP_TRACE_PREAMBLE)
        return fail(r, 12, "a header of %u bytes runs past the end of the file (%zu bytes)", hlen,
                    r->size);
    if (hlen == 0)
        return fail(r, 12, "a header of 0 bytes (expected its fields and a check byte)");
    unsigned sum = 0;
    for (size_t i = 0; i < RP_TRACE_PREAMBLE + hlen - 1; i++)
        sum += r->buf[i];
#ifdef RT_FUZZ_NO_CHECK
    sum = r->buf[RP_TRACE_PREAMBLE + hlen - 1];
#endif
    if ((unsigned char)sum != r->buf[RP_TRACE_PREAMBLE + hlen - 1])
        return fail(r, RP_TRACE_PREAMBLE + hlen - 1,
                    "the header's check byte is %u, its bytes sum to %u (the header is damaged)",
                    r->buf[RP_TRACE_PREAMBLE + hlen - 1], sum & 0xff);
    struct cur c = {r, r->buf + RP_TRACE_PREAMBLE, r->buf + RP_TRACE_PREAMBLE + hlen - 1, false};
    while (!c.bad && c.p < c.end) {
        unsigned key = byte(&c, "a header key");
        uint64_t n = v(&c, "a header field's length");
        const unsigned char *b = bytes(&c, n, "a header field");
        if (!b)
            break;
        struct cur f = {r, b, b + n, false};
        switch (key) {
        case RP_TK_REPRISE_VERSION:
        case RP_TK_HOST:
        case RP_TK_DRIVER_PATH:
        case RP_TK_COMMAND: {
            char *s = malloc(n + 1);
            if (!s)
                return fail(r, at(&f), "out of memory");
            memcpy(s, b, n);
            s[n] = 0;
            char **dst = key == RP_TK_REPRISE_VERSION ? &r->reprise_version
                         : key == RP_TK_HOST          ? &r->host
                         : key == RP_TK_DRIVER_PATH   ? &r->driver_path
                                                      : &r->command;
            free(*dst);
            *dst = s;
            if (key == RP_TK_COMMAND)
                r->command_len = n;
            break;
        }
        case RP_TK_PID:
            r->pid = v(&f, "the pid");
            break;
        case RP_TK_START_NS:
            r->start_ns = v(&f, "the start time");
            break;
        case RP_TK_DRIVER_VERSION:
            r->driver_version = v(&f, "the driver version");
            break;
        case RP_TK_FLAGS:
            r->flags = v(&f, "the flags");
            break;
        default:
            break; /* a field added within this version: skipped */
        }
        if (f.bad)
            return -1;
    }
    if (c.bad)
        return -1;
    r->first = r->pos = RP_TRACE_PREAMBLE + hlen;
    r->last_seq = (uint64_t)-1;
    return 0;
}

static void init_reader(struct rt_reader *r, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", name);
}

int rt_open_mem(struct rt_reader *r, const unsigned char *buf, size_t size, const char *name)
{
    init_reader(r, name);
    r->buf = buf;
    r->size = size;
    return parse_header(r);
}

int rt_open(struct rt_reader *r, const char *path)
{
    init_reader(r, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(r->err, sizeof r->err, "%.200s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(r->err, sizeof r->err, "%.200s: not a regular file", path);
        close(fd);
        return -1;
    }
    r->size = (size_t)st.st_size;
    if (r->size) {
        void *m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            snprintf(r->err, sizeof r->err, "%.200s: cannot map: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        r->buf = m;
        r->mapped = true;
    }
    close(fd);
    return parse_header(r);
}

void rt_rewind(struct rt_reader *r)
{
    reset_tables(r);
    r->pos = r->first;
    r->err[0] = 0;
    r->notice[0] = 0;
}

void rt_close(struct rt_reader *r)
{
    reset_tables(r);
    if (r->mapped && r->buf)
        munmap((void *)r->buf, r->size);
    free(r->reprise_version);
    free(r->host);
    free(r->driver_path);
    free(r->command);
    memset(r, 0, sizeof *r);
}

/* ---- checks of ids a record names ---------------------------------------------------- */

static uint32_t stream_ref(struct cur *c)
{
    uint64_t s = v(c, "a stream id");
    if (c->bad || s < RP_TSTREAM_FIRST)
        return (uint32_t)s;
    if (s >= c->r->nstreams || !c->r->streams[s].defined) {
        char m[128];
        snprintf(m, sizeof m, "stream id %llu, which no STREAM record defined",
                 (unsigned long long)s);
        cfail(c, m);
    }
    return (uint32_t)s;
}

static uint32_t ctx_ref(struct cur *c)
{
    uint64_t x = v(c, "a context id");
    if (!c->bad && x && (x >= c->r->nctxs || !c->r->ctxs[x].defined)) {
        char m[128];
        snprintf(m, sizeof m, "context id %llu, which nothing defined", (unsigned long long)x);
        cfail(c, m);
    }
    return (uint32_t)x;
}

static uint32_t event_ref(struct cur *c)
{
    uint64_t x = v(c, "an event id");
    if (!c->bad && x > c->r->nevents) {
        char m[128];
        snprintf(m, sizeof m, "event id %llu, which nothing defined", (unsigned long long)x);
        cfail(c, m);
    }
    return (uint32_t)x;
}

static uint32_t module_ref(struct cur *c)
{
    uint64_t x = v(c, "a module id");
    if (!c->bad && x && (x >= c->r->nmodules || !c->r->modules[x].defined)) {
        char m[128];
        snprintf(m, sizeof m, "module id %llu, which no MODULE record defined",
                 (unsigned long long)x);
        cfail(c, m);
    }
    return (uint32_t)x;
}

static struct rt_func *func_ref(struct cur *c, uint32_t *id)
{
    uint64_t x = v(c, "a function id");
    *id = (uint32_t)x;
    if (c->bad || !x)
        return NULL;
    if (x >= c->r->nfuncs || !c->r->funcs[x].defined) {
        char m[128];
        snprintf(m, sizeof m, "function id %llu, which no FUNC record defined",
                 (unsigned long long)x);
        cfail(c, m);
        return NULL;
    }
    return &c->r->funcs[x];
}

static struct rt_addr addr(struct cur *c, const char *what)
{
    struct rt_addr a = {0, 0, 0};
    uint64_t x = v(c, what);
    if (c->bad)
        return a;
    a.space = (unsigned)(x & 3);
    a.id = (uint32_t)(x >> 2);
    if (a.space != RP_TS_PAGEABLE)
        a.off = v(c, "an address offset");
    if (c->bad)
        return a;
    if (a.space == RP_TS_RAW ? a.id != 0
                             : (a.id >= c->r->nmems || !c->r->mems[a.id].defined ||
                                c->r->mems[a.id].space != a.space)) {
        char m[160];
        snprintf(m, sizeof m, "%s names memory id %u of space %u, which nothing defined", what,
                 a.id, a.space);
        cfail(c, m);
    }
    return a;
}

static void def_mem(struct cur *c, uint64_t id, unsigned space, uint64_t bytes, uint32_t ctx)
{
    if (!id)
        return;
    if (!GROW(c, c->r->mems, c->r->nmems, id, "memory"))
        return;
    c->r->mems[id] = (struct rt_mem){true, space, bytes, ctx, RP_TH_PINNED};
}

/* ---- definitions ------------------------------------------------------------------------ */

static void rd_entry(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    uint64_t id = v(c, "an entry id");
    uint64_t fam = v(c, "the entry's family");
    char *name = str(c, "the entry's name");
    if (c->bad) {
        free(name);
        return;
    }
    if (!family_known(fam)) {
        char m[200], shown[65];
        /* The name as one line of text, whatever bytes the trace holds. */
        size_t i = 0;
        for (; name[i] && i < sizeof shown - 1; i++)
            shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
        shown[i] = 0;
        snprintf(m, sizeof m, "entry '%s' of family %llu, which this reprise does not know",
                 shown, (unsigned long long)fam);
        free(name);
        cfail(c, m);
        return;
    }
    if (!GROW(c, r->entries, r->nentries, id, "entry")) {
        free(name);
        return;
    }
    free(r->entries[id].name);
    r->entries[id].name = name;
    r->entries[id].family = (unsigned)fam;
    out->id = (uint32_t)id;
}

static void rd_func(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    uint64_t id = v(c, "a function id");
    uint64_t mod = v(c, "the function's module");
    uint64_t kind = v(c, "the function's kind");
    char *name = str(c, "the function's name");
    uint64_t np = v(c, "the number of parameters");
    if (!c->bad && (id == 0 || kind > 6 || np > MAX_PARAMS))
        cfail(c, id == 0 ? "function id 0" : kind > 6 ? "a function kind above 6"
                                                      : "more than 4096 parameters");
    if (c->bad || !GROW(c, r->funcs, r->nfuncs, id, "function")) {
        free(name);
        return;
    }
    struct rt_func *f = &r->funcs[id];
    if (f->defined) {
        free(name);
        cfail(c, "a function id defined twice");
        return;
    }
    f->name = name;
    f->module = (uint32_t)mod;
    f->kind = (unsigned)(kind & 3);
    f->layout = !(kind & 4);
    f->nparams = (uint32_t)np;
    f->off = calloc(np ? np : 1, sizeof *f->off);
    f->size = calloc(np ? np : 1, sizeof *f->size);
    if (!f->off || !f->size) {
        cfail(c, "out of memory");
        return;
    }
    for (uint64_t i = 0; i < np && !c->bad; i++) {
        uint64_t o = v(c, "a parameter's offset"), s = v(c, "a parameter's size");
        if (!c->bad && (o > MAX_PSIZE || s > MAX_PSIZE || o + s > MAX_PSIZE))
            cfail(c, "a parameter beyond 1 MiB");
        f->off[i] = (uint32_t)o;
        f->size[i] = (uint32_t)s;
        if (o + s > f->psize)
            f->psize = o + s;
    }
    if (c->bad)
        return;
    f->params = calloc(f->psize ? f->psize : 1, 1);
    if (!f->params) {
        cfail(c, "out of memory");
        return;
    }
    f->defined = true;
    out->id = (uint32_t)id;
}

static void rd_def(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    switch (out->tag) {
    case RP_TR_ENTRY:
        rd_entry(c, out);
        break;
    case RP_TR_THREAD: {
        uint64_t id = v(c, "a thread id"), os = v(c, "the OS thread id");
        if (!c->bad && id == 0)
            cfail(c, "thread id 0");
        if (!c->bad && GROW(c, r->threads, r->nthreads, id, "thread"))
            r->threads[id] = os ? os : 1;
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_CTX: {
        uint64_t id = v(c, "a context id"), dev = v(c, "the context's device");
        uint64_t fl = v(c, "the context's flags");
        if (!c->bad && id == 0)
            cfail(c, "context id 0");
        if (!c->bad && GROW(c, r->ctxs, r->nctxs, id, "context"))
            r->ctxs[id] = (struct rt_ctx){true, (uint32_t)dev, fl};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_STREAM: {
        uint64_t id = v(c, "a stream id");
        uint32_t ctx = ctx_ref(c);
        uint64_t fl = v(c, "the stream's flags"), pr = v(c, "the stream's priority");
        if (!c->bad && id < RP_TSTREAM_FIRST)
            cfail(c, "a STREAM record for a reserved stream id (0, 1 or 2)");
        if (!c->bad && GROW(c, r->streams, r->nstreams, id, "stream"))
            r->streams[id] = (struct rt_stream){true, ctx, fl, rp_tv_unzigzag(pr)};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_MODULE: {
        uint64_t id = v(c, "a module id"), kind = v(c, "the module's kind");
        if (!c->bad && (id == 0 || kind > 1))
            cfail(c, id == 0 ? "module id 0" : "a module kind above 1");
        if (!c->bad && GROW(c, r->modules, r->nmodules, id, "module"))
            r->modules[id] = (struct rt_module){true, (unsigned)kind};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_FUNC:
        rd_func(c, out);
        break;
    case RP_TR_MEM: {
        uint64_t id = v(c, "a memory id"), space = v(c, "the memory's space");
        uint64_t b = v(c, "the memory's size");
        uint32_t ctx = ctx_ref(c);
        if (!c->bad && (id == 0 || space == RP_TS_RAW || space > RP_TS_PAGEABLE))
            cfail(c, id == 0 ? "memory id 0" : "a memory space other than 1, 2 or 3");
        if (!c->bad)
            def_mem(c, id, (unsigned)space, b, ctx);
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_DEVICE: {
        uint64_t ord = v(c, "a device ordinal");
        char *name = str(c, "the device's name");
        uint64_t maj = v(c, "the compute capability"), min = v(c, "the compute capability");
        uint64_t mem = v(c, "the device's memory");
        if (!c->bad && r->ndevices < sizeof r->devices / sizeof r->devices[0]) {
            struct rt_device *d = &r->devices[r->ndevices++];
            d->ordinal = (uint32_t)ord;
            snprintf(d->name, sizeof d->name, "%s", name ? name : "");
            d->major = (unsigned)maj, d->minor = (unsigned)min, d->bytes = mem;
        }
        free(name);
        out->id = (uint32_t)ord;
        break;
    }
    case RP_TR_EVENT: {
        uint64_t id = v(c, "an event id");
        if (!c->bad && (id == 0 || id >= MAX_ID))
            cfail(c, "an event id of 0 or out of range");
        if (!c->bad && id > r->nevents)
            r->nevents = id;
        out->id = (uint32_t)id;
        break;
    }
    default:
        break;
    }
}

/* ---- calls -------------------------------------------------------------------------------- */

static void rd_launch(struct cur *c, struct rt_call *k)
{
    struct rt_reader *r = c->r;
    struct rt_func *f = func_ref(c, &k->func);
    k->stream = stream_ref(c);
    unsigned lf = byte(c, "the launch's flags");
    k->form = lf >> RP_TLF_FORM_SHIFT;
    k->coding = (lf >> RP_TLF_PARAMS_SHIFT) & 3;
    if (c->bad)
        return;
    if (k->form > RP_TLFORM_NO_CONFIG) {
        cfail(c, "a launch form above 5");
        return;
    }
    if (k->family == RP_TRF_LAUNCH_EX) {
        unsigned xf = byte(c, "cuLaunchKernelEx's flags");
        if (xf & RP_TLX_ATTRS_SAME) {
            if (!f) {
                cfail(c, "attributes 'as last time' for a launch with no function");
                return;
            }
            const unsigned char *q = f->attrs;
            struct cur a = {r, q, q ? q + f->attrs_len : q, false};
            k->nattrs = (unsigned)(q && f->attrs_len ? v(&a, "") : 0);
            for (unsigned i = 0; i < k->nattrs && i < 16; i++) {
                r->attrs[i].id = (uint32_t)v(&a, "");
                uint64_t len = v(&a, "");
                memset(r->attrs[i].value, 0, 64);
                memcpy(r->attrs[i].value, bytes(&a, len, ""), len);
            }
        } else {
            const unsigned char *start = c->p;
            uint64_t n = v(c, "the number of launch attributes");
            if (!c->bad && n > 16) {
                cfail(c, "more than 16 launch attributes");
                return;
            }
            k->nattrs = (unsigned)n;
            for (unsigned i = 0; i < n && !c->bad; i++) {
                r->attrs[i].id = (uint32_t)v(c, "a launch attribute's id");
                uint64_t len = v(c, "a launch attribute's size");
                if (!c->bad && len > 64) {
                    cfail(c, "a launch attribute value above 64 bytes");
                    return;
                }
                const unsigned char *b = bytes(c, len, "a launch attribute's value");
                if (b) {
                    memset(r->attrs[i].value, 0, 64);
                    memcpy(r->attrs[i].value, b, len);
                }
            }
            if (c->bad)
                return;
            if (f) {
                size_t len = (size_t)(c->p - start);
                unsigned char *na = realloc(f->attrs, len ? len : 1);
                if (!na) {
                    cfail(c, "out of memory");
                    return;
                }
                memcpy(na, start, len);
                f->attrs = na;
                f->attrs_len = len;
            }
        }
        k->attrs = r->attrs;
    }
    static const unsigned zero[3];
    const unsigned *g = f ? f->grid : zero, *b = f ? f->block : zero;
    if (!f && (lf & 7) != 7) {
        cfail(c, "a launch with no function that does not give its geometry");
        return;
    }
    for (int i = 0; i < 3; i++)
        k->grid[i] = lf & RP_TLF_GRID ? (unsigned)v(c, "the grid") : g[i];
    for (int i = 0; i < 3; i++)
        k->block[i] = lf & RP_TLF_BLOCK ? (unsigned)v(c, "the block") : b[i];
    k->shmem = lf & RP_TLF_SHMEM ? (unsigned)v(c, "the dynamic shared memory")
                                 : (f ? f->shmem : 0);
    if (k->form == RP_TLFORM_EXTRA)
        k->extra_size = v(c, "the extra buffer's size");
    if (c->bad)
        return;
    if (f) {
        memcpy(f->grid, k->grid, sizeof k->grid);
        memcpy(f->block, k->block, sizeof k->block);
        f->shmem = k->shmem;
    }
    if (k->coding == RP_TLP_NONE)
        return;
    if (!f || !f->layout) {
        cfail(c, "parameters for a function whose layout the trace does not have");
        return;
    }
    size_t n = f->psize, words = (n + 7) / 8;
    const unsigned char *pstart = c->p;
    if (k->coding == RP_TLP_FULL) {
        const unsigned char *q = bytes(c, n, "the parameters");
        if (q)
            memcpy(f->params, q, n);
    } else if (k->coding == RP_TLP_DELTA) {
        const unsigned char *mask = bytes(c, (words + 7) / 8, "the parameters' mask");
        if (!mask)
            return;
        if (words % 8 && (mask[words / 8] >> (words % 8))) {
            cfail(c, "a parameter mask naming words beyond the parameters");
            return;
        }
        for (size_t w = 0; w < words && !c->bad; w++) {
            if (!(mask[w / 8] & (1u << (w % 8))))
                continue;
            size_t o = w * 8, len = n - o < 8 ? n - o : 8;
            const unsigned char *q = bytes(c, len, "a changed parameter word");
            if (q)
                memcpy(f->params + o, q, len);
        }
    }
    k->param_bytes = (uint64_t)(c->p - pstart);
    k->params = f->params;
}

static bool async_copy(unsigned fam)
{
    return fam == RP_TRF_HTOD_ASYNC || fam == RP_TRF_DTOH_ASYNC || fam == RP_TRF_DTOD_ASYNC ||
           fam == RP_TRF_COPY_ASYNC || fam == RP_TRF_PEER_ASYNC;
}

static void rd_copy(struct cur *c, struct rt_call *k)
{
    unsigned cf = byte(c, "the copy's flags");
    k->dst = addr(c, "the destination");
    k->src = addr(c, "the source");
    k->bytes = v(c, "the copy's size");
    if (async_copy(k->family))
        k->stream = stream_ref(c);
    if (k->family == RP_TRF_PEER || k->family == RP_TRF_PEER_ASYNC) {
        k->ctx = ctx_ref(c);
        k->ctx2 = ctx_ref(c);
    }
    if (!c->bad && (cf & RP_TCOPY_DATA))
        k->data = bytes(c, k->bytes, "the copy's data");
}

static void rd_memset(struct cur *c, struct rt_call *k)
{
    unsigned fam = k->family;
    bool two = fam >= RP_TRF_MEMSET2D8 && fam <= RP_TRF_MEMSET2D32_ASYNC;
    bool async = (fam >= RP_TRF_MEMSET8_ASYNC && fam <= RP_TRF_MEMSET32_ASYNC) ||
                 fam >= RP_TRF_MEMSET2D8_ASYNC;
    k->dst = addr(c, "the memset's destination");
    if (two) {
        k->pitch = v(c, "the pitch");
        k->value = v(c, "the value");
        k->width = v(c, "the width");
        k->height = v(c, "the height");
    } else {
        k->value = v(c, "the value");
        k->bytes = v(c, "the count");
    }
    if (async)
        k->stream = stream_ref(c);
}

static void rd_alloc(struct cur *c, struct rt_call *k)
{
    uint64_t id = v(c, "the allocation's memory id");
    k->bytes = v(c, "the allocation's size");
    k->mem = (uint32_t)id;
    unsigned space = RP_TS_DEVICE;
    switch (k->family) {
    case RP_TRF_ALLOC_PITCH_V1:
    case RP_TRF_ALLOC_PITCH:
        k->width = v(c, "the width");
        k->height = v(c, "the height");
        k->elem = v(c, "the element size");
        k->pitch = v(c, "the pitch");
        break;
    case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_MANAGED:
        k->flags = v(c, "the flags");
        break;
    case RP_TRF_ALLOC_ASYNC:
    case RP_TRF_ALLOC_POOL_ASYNC:
        k->stream = stream_ref(c);
        break;
    default:
        break;
    }
    if (k->family == RP_TRF_ALLOC_HOST || k->family == RP_TRF_HOST_ALLOC)
        space = RP_TS_HOST;
    if (!c->bad && id) {
        def_mem(c, id, space, k->bytes, 0);
        if (!c->bad && k->family == RP_TRF_HOST_ALLOC && (k->flags & 2 /* DEVICEMAP */))
            c->r->mems[id].kind = RP_TH_MAPPED;
    }
}

static void rd_call(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    struct rt_call *k = &out->call;
    memset(k, 0, sizeof *k);
    unsigned fl = byte(c, "the call's flags");
    uint64_t e = v(c, "the call's entry id");
    if (c->bad)
        return;
    if (fl & ~7u) {
        cfail(c, "call flags above 7");
        return;
    }
    if (e >= r->nentries || !r->entries[e].name) {
        char m[128];
        snprintf(m, sizeof m, "a call of entry id %llu, which no ENTRY record defined",
                 (unsigned long long)e);
        cfail(c, m);
        return;
    }
    k->entry = (uint32_t)e;
    k->family = r->entries[e].family;
    if (fl & RP_TCF_SAME_THREAD) {
        if (!r->last_tid) {
            cfail(c, "'the same thread' on the first call");
            return;
        }
        k->tid = r->last_tid;
    } else {
        uint64_t t = v(c, "the call's thread id");
        if (!c->bad && (t == 0 || t >= r->nthreads || !r->threads[t])) {
            cfail(c, "a thread id no THREAD record defined");
            return;
        }
        k->tid = (uint32_t)t;
    }
    r->last_tid = k->tid;
    k->dt_ns = v(c, "the time since the thread's last call");
    k->seq = r->last_seq + 1 + (uint64_t)rp_tv_unzigzag(v(c, "the call's place in the order of entry"));
    r->last_seq = k->seq;
    if (fl & RP_TCF_RESULT)
        k->result = (int64_t)v(c, "the call's result");
    if (fl & RP_TCF_DURATION)
        k->dur_ns = v(c, "the call's duration");
    if (c->bad)
        return;
    unsigned fam = k->family;
    switch (fam) {
    case RP_TRF_LAUNCH:
    case RP_TRF_LAUNCH_COOP:
    case RP_TRF_LAUNCH_EX:
        rd_launch(c, k);
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC:
        rd_copy(c, k);
        break;
    case RP_TRF_MEMSET8: case RP_TRF_MEMSET16: case RP_TRF_MEMSET32:
    case RP_TRF_MEMSET8_ASYNC: case RP_TRF_MEMSET16_ASYNC: case RP_TRF_MEMSET32_ASYNC:
    case RP_TRF_MEMSET2D8: case RP_TRF_MEMSET2D16: case RP_TRF_MEMSET2D32:
    case RP_TRF_MEMSET2D8_ASYNC: case RP_TRF_MEMSET2D16_ASYNC: case RP_TRF_MEMSET2D32_ASYNC:
        rd_memset(c, k);
        break;
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_HOST: case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_POOL_ASYNC:
        rd_alloc(c, k);
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_HOST_UNREGISTER:
        k->dst = addr(c, "the address freed");
        break;
    case RP_TRF_FREE_ASYNC:
        k->dst = addr(c, "the address freed");
        k->stream = stream_ref(c);
        break;
    case RP_TRF_HOST_REGISTER: {
        uint64_t id = v(c, "the registration's memory id");
        k->bytes = v(c, "the registered size");
        k->flags = v(c, "the registration's flags");
        k->mem = (uint32_t)id;
        if (!c->bad && id) {
            def_mem(c, id, RP_TS_HOST, k->bytes, 0);
            if (!c->bad)
                c->r->mems[id].kind = k->flags & 2 /* DEVICEMAP */ ? RP_TH_REGISTERED_MAPPED
                                                                  : RP_TH_REGISTERED;
        }
        break;
    }
    case RP_TRF_STREAM_SYNC: case RP_TRF_STREAM_QUERY:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_CTX_SYNC_V2:
        k->ctx = ctx_ref(c);
        break;
    case RP_TRF_EVENT_SYNC: case RP_TRF_EVENT_QUERY: case RP_TRF_EVENT_DESTROY:
        k->event = event_ref(c);
        break;
    case RP_TRF_EVENT_CREATE: {
        uint64_t id = v(c, "the new event's id");
        k->flags = v(c, "the event's flags");
        if (!c->bad && id >= MAX_ID)
            cfail(c, "an event id out of range");
        if (!c->bad && id > r->nevents)
            r->nevents = id;
        k->event = (uint32_t)id;
        break;
    }
    case RP_TRF_EVENT_RECORD: case RP_TRF_EVENT_RECORD_FLAGS:
        k->event = event_ref(c);
        k->stream = stream_ref(c);
        if (fam == RP_TRF_EVENT_RECORD_FLAGS)
            k->flags = v(c, "the record's flags");
        break;
    case RP_TRF_WAIT_EVENT:
        k->event = event_ref(c);
        k->stream = stream_ref(c);
        k->flags = v(c, "the wait's flags");
        break;
    case RP_TRF_BEGIN_CAPTURE:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_BEGIN_CAPTURE_MODE:
        k->stream = stream_ref(c);
        k->value = v(c, "the capture mode");
        break;
    case RP_TRF_END_CAPTURE:
        k->stream = stream_ref(c);
        k->graph = (uint32_t)v(c, "the graph's id");
        break;
    case RP_TRF_IS_CAPTURING:
        k->stream = stream_ref(c);
        k->answer = v(c, "the capture status");
        break;
    case RP_TRF_GRAPH_LAUNCH: case RP_TRF_GRAPH_UPLOAD:
        k->exec = (uint32_t)v(c, "an executable graph's id");
        k->stream = stream_ref(c);
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        k->exec = (uint32_t)v(c, "the executable's id");
        k->graph = (uint32_t)v(c, "the graph's id");
        k->flags = v(c, "the instantiation flags");
        break;
    case RP_TRF_GRAPH_EXEC_UPDATE:
        k->exec = (uint32_t)v(c, "the executable's id");
        k->graph = (uint32_t)v(c, "the graph's id");
        break;
    case RP_TRF_CTX_CREATE: case RP_TRF_CTX_CREATE_V3: case RP_TRF_CTX_CREATE_V4: {
        uint64_t id = v(c, "the new context's id");
        k->flags = v(c, "the context's flags");
        k->device = v(c, "the context's device");
        k->ctx = (uint32_t)id;
        if (!c->bad && id && GROW(c, r->ctxs, r->nctxs, id, "context"))
            r->ctxs[id] = (struct rt_ctx){true, (uint32_t)k->device, 0};
        break;
    }
    case RP_TRF_CTX_DESTROY: case RP_TRF_CTX_SET: case RP_TRF_CTX_PUSH: case RP_TRF_CTX_POP:
        k->ctx = ctx_ref(c);
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        k->device = v(c, "the device");
        k->answer = v(c, "whether the primary context stayed active");
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL:
        func_ref(c, &k->func);
        k->module = module_ref(c);
        break;
    case RP_TRF_KERNEL_GET_FUNCTION: {
        func_ref(c, &k->func);
        uint32_t kid;
        func_ref(c, &kid);
        k->module = kid;
        break;
    }
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD:
        k->module = module_ref(c);
        break;
    case RP_TRF_STREAM_DESTROY: case RP_TRF_HOSTFN:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_WAIT_VALUE32: case RP_TRF_WAIT_VALUE64:
    case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64:
        k->stream = stream_ref(c);
        k->dst = addr(c, "the value's address");
        k->value = v(c, "the value");
        k->flags = v(c, "the flags");
        break;
    default:
        break; /* GENERIC: the header says it all */
    }
    r->calls++;
}

int rt_next(struct rt_reader *r, struct rt_rec *out)
{
    if (r->pos > r->size)
        return -1;
    if (r->ended)
        return 0;
    memset(out, 0, sizeof *out);
    size_t start = r->pos;
    if (start == r->size) {
        r->pos = r->size;
        snprintf(r->notice, sizeof r->notice,
                 "%.100s: byte %zu: the trace ends without its END record (the process did not "
                 "exit normally, recording stopped early, or the file was cut): read up to "
                 "its last complete record",
                 r->path, start);
        return 0;
    }
    out->offset = start;
    unsigned tag = r->buf[start];
    struct cur c = {r, r->buf + start + 1, r->buf + r->size, false};
    uint64_t len = v(&c, "the record's length");
    if (c.bad)
        return -1;
    if (tag == RP_TR_NONE) {
        /* A record never completed (the tag is written last): only zeros
         * may follow its body, the file's unwritten tail. */
        const unsigned char *q = c.p + ((uint64_t)(c.end - c.p) <= len ? (size_t)(c.end - c.p) : len + 1);
        for (; q < c.end; q++)
            if (*q)
                return fail(r, (size_t)(q - r->buf),
                            "data after an unfinished record at byte %zu (the trace is damaged)",
                            start);
        r->pos = r->size;
        snprintf(r->notice, sizeof r->notice,
                 "%.100s: byte %zu: an unfinished record, then nothing (the process did not exit "
                 "normally): read up to its last complete record",
                 r->path, start);
        return 0;
    }
    if ((uint64_t)(c.end - c.p) <= len)
        return fail(r, start, "a record of %llu bytes and its check byte run past the end of the "
                              "file (%zu bytes): truncated",
                    (unsigned long long)len, r->size);
    c.end = c.p + len;
    /* The fuzzer (tests/fuzz/trace_fuzz.c) builds this with RT_FUZZ_NO_CHECK
     * so that its inputs reach the decoding behind the check byte. */
#ifndef RT_FUZZ_NO_CHECK
    {
        unsigned sum = 0;
        for (const unsigned char *q = r->buf + start; q < c.end; q++)
            sum += *q;
        if ((unsigned char)sum != *c.end)
            return fail(r, (size_t)(c.end - r->buf),
                        "the check byte of the record at byte %zu is %u, its bytes sum to %u "
                        "(the trace is damaged)",
                        start, *c.end, sum & 0xff);
    }
#endif
    out->tag = tag;
    switch (tag) {
    case RP_TR_ENTRY: case RP_TR_THREAD: case RP_TR_CTX: case RP_TR_STREAM: case RP_TR_MODULE:
    case RP_TR_FUNC: case RP_TR_MEM: case RP_TR_DEVICE: case RP_TR_EVENT:
        rd_def(&c, out);
        break;
    case RP_TR_CALL:
        rd_call(&c, out);
        break;
    case RP_TR_THREAD_EXIT: {
        uint64_t t = v(&c, "the thread id");
        out->ns = v(&c, "the time since its last call");
        out->seq = r->last_seq + 1 + (uint64_t)rp_tv_unzigzag(v(&c, "the exit's place in the order of entry"));
        r->last_seq = out->seq;
        if (!c.bad && (t == 0 || t >= r->nthreads || !r->threads[t]))
            cfail(&c, "the exit of a thread no THREAD record defined");
        out->id = (uint32_t)t;
        break;
    }
    case RP_TR_END:
        out->records = v(&c, "the number of records");
        out->calls = v(&c, "the number of calls");
        out->ns = v(&c, "the trace's duration");
        if (!c.bad && (out->records != r->records + 1 || out->calls != r->calls)) {
            char m[200];
            snprintf(m, sizeof m, "END counts %llu records and %llu calls, the trace has %llu and %llu",
                     (unsigned long long)out->records, (unsigned long long)out->calls,
                     (unsigned long long)r->records + 1, (unsigned long long)r->calls);
            cfail(&c, m);
        }
        break;
    default:
        return fail(r, start, "unknown record tag %u (expected 1-9 or 16-18)", tag);
    }
    if (c.bad)
        return -1;
    if (c.p != c.end)
        return fail(r, (size_t)(c.p - r->buf), "%zu bytes left in a record of tag %u after its fields",
                    (size_t)(c.end - c.p), tag);
    r->pos = (size_t)(c.end - r->buf) + 1;
    r->records++;
    if (tag == RP_TR_END) {
        if (r->pos != r->size)
            return fail(r, r->pos, "%zu bytes after the END record", r->size - r->pos);
        r->ended = true;
    }
    return 1;
}
