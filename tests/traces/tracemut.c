/* tracemut.c - damages a trace on purpose, for the bad-input tests
 * (badinput.sh): the reader must answer every damaged trace with a one-line
 * error naming the byte offset, never a crash.
 *
 *   tracemut IN OUT cut N        the first N bytes
 *   tracemut IN OUT flip N       byte N with its lowest bit flipped
 *   tracemut IN OUT version V    format version V (the header's check byte fixed)
 *   tracemut IN OUT entry        the first call names entry id 127, which no
 *                                ENTRY record defines (its check byte fixed)
 *   tracemut IN OUT family       the first ENTRY record's family is 126, which
 *                                no family is (its check byte fixed)
 *   tracemut IN OUT fixsums      every check byte made right (the header's and
 *                                each record's up to the first unfinished or
 *                                cut one): a damaged or crafted trace whose
 *                                bytes then reach the decoding behind them
 *   tracemut IN OUT bomb N       IN's header, then N functions each of a 128 KiB
 *                                parameter buffer, each launched once with its
 *                                parameters "as last time" (zeros): a few bytes
 *                                a function that would make a reader hold
 *                                128 KiB for each (all check bytes right)
 *   tracemut IN size             prints the file's size
 * Exit status 0, 2 on a usage error or when the trace has no such record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefmt.h"

static unsigned char *buf;
static size_t size;

static void load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(size + 1);
    if (!buf || fread(buf, 1, size, f) != size) {
        fprintf(stderr, "tracemut: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
}

static void save(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "tracemut: cannot write %s\n", path);
        exit(2);
    }
}

static size_t first_record(void)
{
    uint32_t hlen = (uint32_t)buf[12] | (uint32_t)buf[13] << 8 | (uint32_t)buf[14] << 16 |
                    (uint32_t)buf[15] << 24;
    return RP_TRACE_PREAMBLE + hlen;
}

/* The first record with tag `tag`: its offset, body and body length. */
static size_t find(unsigned tag, const unsigned char **body, uint64_t *len)
{
    size_t pos = first_record();
    while (pos < size) {
        const unsigned char *p = buf + pos + 1;
        if (rp_tv_get(&p, buf + size, len) != 0)
            break;
        if (buf[pos] == tag) {
            *body = p;
            return pos;
        }
        pos = (size_t)(p - buf) + *len + 1;
    }
    fprintf(stderr, "tracemut: no record of tag %u\n", tag);
    exit(2);
}

/* Appends a record of tag `tag` and body b[0..n) at *at, its check byte
 * right. */
static void put_record(unsigned char *out, size_t *at, unsigned tag, const unsigned char *b, size_t n)
{
    size_t start = *at;
    unsigned char *p = out + start;
    *p++ = (unsigned char)tag;
    p = rp_tv_put(p, n);
    memcpy(p, b, n);
    p += n;
    unsigned sum = 0;
    for (const unsigned char *q = out + start; q < p; q++)
        sum += *q;
    *p++ = (unsigned char)sum;
    *at = (size_t)(p - out);
}

static void fix_check(size_t rec, const unsigned char *body, uint64_t len)
{
    unsigned sum = 0;
    for (const unsigned char *q = buf + rec; q < body + len; q++)
        sum += *q;
    buf[(body - buf) + len] = (unsigned char)sum;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[2], "size")) {
        load(argv[1]);
        printf("%zu\n", size);
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: tracemut IN OUT cut N|flip N|version V|entry|family|fixsums\n");
        return 2;
    }
    load(argv[1]);
    const char *mode = argv[3];
    size_t n = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
    const unsigned char *body;
    uint64_t len;
    if (!strcmp(mode, "cut")) {
        save(argv[2], n < size ? n : size);
    } else if (!strcmp(mode, "flip")) {
        if (n >= size)
            return 2;
        buf[n] ^= 1;
        save(argv[2], size);
    } else if (!strcmp(mode, "version")) {
        for (int i = 0; i < 4; i++)
            buf[8 + i] = (unsigned char)(n >> (8 * i));
        size_t end = first_record() - 1;
        unsigned sum = 0;
        for (size_t i = 0; i < end; i++)
            sum += buf[i];
        buf[end] = (unsigned char)sum;
        save(argv[2], size);
    } else if (!strcmp(mode, "entry")) {
        size_t rec = find(RP_TR_CALL, &body, &len);
        if (len < 2 || body[1] >= 0x80)
            return 2;
        ((unsigned char *)body)[1] = 127;
        fix_check(rec, body, len);
        save(argv[2], size);
    } else if (!strcmp(mode, "family")) {
        size_t rec = find(RP_TR_ENTRY, &body, &len);
        if (len < 2 || body[0] >= 0x80 || body[1] >= 0x80)
            return 2;
        ((unsigned char *)body)[1] = 126;
        fix_check(rec, body, len);
        save(argv[2], size);
    } else if (!strcmp(mode, "bomb")) {
        size_t at = first_record();
        if (at > size || n > 1000000)
            return 2;
        unsigned char *out = malloc(at + 64 + 48 * n), b[64], *p;
        if (!out)
            return 2;
        memcpy(out, buf, at);
        static const char name[] = "cuLaunchKernel";
        p = rp_tv_put(b, 0);
        p = rp_tv_put(p, RP_TRF_LAUNCH);
        p = rp_tv_put(p, sizeof name - 1);
        memcpy(p, name, sizeof name - 1);
        put_record(out, &at, RP_TR_ENTRY, b, (size_t)(p + sizeof name - 1 - b));
        p = rp_tv_put(rp_tv_put(b, 1), 1);
        put_record(out, &at, RP_TR_THREAD, b, (size_t)(p - b));
        p = rp_tv_put(rp_tv_put(b, 1), 0);
        put_record(out, &at, RP_TR_MODULE, b, (size_t)(p - b));
        for (size_t i = 1; i <= n; i++) {
            /* id, module 1, kind 0, name "k", one parameter: 1 byte at 128 KiB - 1 */
            p = rp_tv_put(b, i);
            p = rp_tv_put(p, 1);
            p = rp_tv_put(p, 0);
            p = rp_tv_put(p, 1);
            *p++ = 'k';
            p = rp_tv_put(p, 1);
            p = rp_tv_put(p, (128u << 10) - 1);
            p = rp_tv_put(p, 1);
            put_record(out, &at, RP_TR_FUNC, b, (size_t)(p - b));
            /* a launch of it: the thread (named once), entry 0, no time, the
             * next place; the function, stream NULL, its parameters "as last
             * time" (launch flags 0) */
            p = b;
            *p++ = i == 1 ? 0 : RP_TCF_SAME_THREAD;
            p = rp_tv_put(p, 0);
            if (i == 1)
                p = rp_tv_put(p, 1);
            p = rp_tv_put(p, 0);
            p = rp_tv_put(p, 0);
            p = rp_tv_put(p, i);
            p = rp_tv_put(p, RP_TSTREAM_NULL);
            *p++ = 0;
            put_record(out, &at, RP_TR_CALL, b, (size_t)(p - b));
        }
        free(buf);
        buf = out;
        save(argv[2], at);
    } else if (!strcmp(mode, "fixsums")) {
        if (size < RP_TRACE_PREAMBLE || first_record() > size)
            return 2;
        unsigned sum = 0;
        for (size_t i = 0; i + 1 < first_record(); i++)
            sum += buf[i];
        buf[first_record() - 1] = (unsigned char)sum;
        for (size_t pos = first_record(); pos < size && buf[pos];) {
            const unsigned char *p = buf + pos + 1;
            if (rp_tv_get(&p, buf + size, &len) != 0 || (uint64_t)(buf + size - p) <= len)
                break;
            fix_check(pos, p, len);
            pos = (size_t)(p - buf) + len + 1;
        }
        save(argv[2], size);
    } else {
        fprintf(stderr, "tracemut: unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}
