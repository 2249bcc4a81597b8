/* traceread.c - the trace reader: the file, its header, and the records'
 * framing (tag, length, check byte), each record's body decoded against the
 * same state the writer (shim/face/trace*.c) encoded it with by
 * traceread_defs.c (definitions) and traceread_calls.c (calls). Every read
 * is bounds-checked (traceread_cur.c); anything unexpected ends reading
 * with one line naming the byte offset and what was expected (traceread.h);
 * the memory the tables hold is bounded by the file's size (rt__alloc). */
#include "traceread_cur.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    free(r->tclock);
    r->tclock = NULL, r->ntclock = 0;
    r->span_ns = r->end_ns = 0;
    r->ngraphs = r->nexecs = 0;
    r->held = 0;
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
        return rt__fail(r, 0, "expected the trace's %d-byte preamble, the file has %zu bytes",
                    RP_TRACE_PREAMBLE, r->size);
    if (memcmp(r->buf, RP_TRACE_MAGIC, RP_TRACE_MAGIC_LEN) != 0)
        return rt__fail(r, 0, "not a reprise trace (expected the magic \"RPTRACE\\n\")");
    r->version = le32(r->buf + 8);
    if (r->version != RP_TRACE_VERSION)
        return rt__fail(r, 8, "trace format version %u; this reprise reads version %d",
                    r->version, RP_TRACE_VERSION);
    uint32_t hlen = le32(r->buf + 12);
    if (hlen > r->size - RP_TRACE_PREAMBLE)
        return rt__fail(r, 12, "a header of %u bytes runs past the end of the file (%zu bytes)", hlen,
                    r->size);
    if (hlen == 0)
        return rt__fail(r, 12, "a header of 0 bytes (expected its fields and a check byte)");
    unsigned sum = 0;
    for (size_t i = 0; i < RP_TRACE_PREAMBLE + hlen - 1; i++)
        sum += r->buf[i];
#ifdef RT_FUZZ_NO_CHECK
    sum = r->buf[RP_TRACE_PREAMBLE + hlen - 1];
#endif
    if ((unsigned char)sum != r->buf[RP_TRACE_PREAMBLE + hlen - 1])
        return rt__fail(r, RP_TRACE_PREAMBLE + hlen - 1,
                    "the header's check byte is %u, its bytes sum to %u (the header is damaged)",
                    r->buf[RP_TRACE_PREAMBLE + hlen - 1], sum & 0xff);
    struct cur c = {r, r->buf + RP_TRACE_PREAMBLE, r->buf + RP_TRACE_PREAMBLE + hlen - 1, false};
    while (!c.bad && c.p < c.end) {
        unsigned key = rt__byte(&c, "a header key");
        uint64_t n = rt__v(&c, "a header field's length");
        const unsigned char *b = rt__bytes(&c, n, "a header field");
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
                return rt__fail(r, rt__at(&f), "out of memory");
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
            r->pid = rt__v(&f, "the pid");
            break;
        case RP_TK_START_NS:
            r->start_ns = rt__v(&f, "the start time");
            break;
        case RP_TK_DRIVER_VERSION:
            r->driver_version = rt__v(&f, "the driver version");
            break;
        case RP_TK_FLAGS:
            r->flags = rt__v(&f, "the flags");
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

/* What the tables may hold for a file of `size` bytes: 16 MiB, and 64
 * bytes a byte of the file (its functions' parameter buffers, the tables
 * of its ids); what no trace of that size can need. */
static size_t budget(size_t size)
{
    size_t floor = (size_t)16 << 20;
    return size > (SIZE_MAX - floor) / 64 ? SIZE_MAX : floor + 64 * size;
}

int rt_open_mem(struct rt_reader *r, const unsigned char *buf, size_t size, const char *name)
{
    init_reader(r, name);
    r->buf = buf;
    r->size = size;
    r->limit = budget(size);
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
    r->limit = budget(r->size);
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

void rt_format_ns(char *buf, size_t size, uint64_t ns)
{
    if (ns >= 1000000000ull)
        snprintf(buf, size, "%.3f s", (double)ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
    else
        snprintf(buf, size, "%.1f us", (double)ns / 1e3);
}

uint64_t rt_duration(const struct rt_reader *r)
{
    return r->ended ? r->end_ns : r->span_ns;
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
    uint64_t len = rt__v(&c, "the record's length");
    if (c.bad)
        return -1;
    if (tag == RP_TR_NONE) {
        /* A record never completed (the tag is written last): only zeros
         * may follow its body, the file's unwritten tail. */
        const unsigned char *q = c.p + ((uint64_t)(c.end - c.p) <= len ? (size_t)(c.end - c.p) : len + 1);
        for (; q < c.end; q++)
            if (*q)
                return rt__fail(r, (size_t)(q - r->buf),
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
        return rt__fail(r, start, "a record of %llu bytes and its check byte run past the end of the "
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
            return rt__fail(r, (size_t)(c.end - r->buf),
                        "the check byte of the record at byte %zu is %u, its bytes sum to %u "
                        "(the trace is damaged)",
                        start, *c.end, sum & 0xff);
    }
#endif
    out->tag = tag;
    switch (tag) {
    case RP_TR_ENTRY: case RP_TR_THREAD: case RP_TR_CTX: case RP_TR_STREAM: case RP_TR_MODULE:
    case RP_TR_FUNC: case RP_TR_MEM: case RP_TR_DEVICE: case RP_TR_EVENT:
        rt__def(&c, out);
        break;
    case RP_TR_CALL:
        rt__call(&c, out);
        break;
    case RP_TR_THREAD_EXIT: {
        uint64_t t = rt__v(&c, "the thread id");
        out->ns = rt__v(&c, "the time since its last call");
        out->seq = r->last_seq + 1 + (uint64_t)rp_tv_unzigzag(rt__v(&c, "the exit's place in the order of entry"));
        r->last_seq = out->seq;
        if (!c.bad && (t == 0 || t >= r->nthreads || !r->threads[t]))
            rt__cfail(&c, "the exit of a thread no THREAD record defined");
        out->id = (uint32_t)t;
        break;
    }
    case RP_TR_END:
        out->records = rt__v(&c, "the number of records");
        out->calls = rt__v(&c, "the number of calls");
        out->ns = rt__v(&c, "the trace's duration");
        r->end_ns = out->ns;
        if (!c.bad && (out->records != r->records + 1 || out->calls != r->calls)) {
            char m[200];
            snprintf(m, sizeof m, "END counts %llu records and %llu calls, the trace has %llu and %llu",
                     (unsigned long long)out->records, (unsigned long long)out->calls,
                     (unsigned long long)r->records + 1, (unsigned long long)r->calls);
            rt__cfail(&c, m);
        }
        break;
    default:
        return rt__fail(r, start, "unknown record tag %u (expected 1-9 or 16-18)", tag);
    }
    if (c.bad)
        return -1;
    if (c.p != c.end)
        return rt__fail(r, (size_t)(c.p - r->buf), "%zu bytes left in a record of tag %u after its fields",
                    (size_t)(c.end - c.p), tag);
    r->pos = (size_t)(c.end - r->buf) + 1;
    r->records++;
    if (tag == RP_TR_END) {
        if (r->pos != r->size)
            return rt__fail(r, r->pos, "%zu bytes after the END record", r->size - r->pos);
        r->ended = true;
    }
    return 1;
}
