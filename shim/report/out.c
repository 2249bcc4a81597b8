/* out.c - the report's writer (out.h). */
#include "out.h"

#include <stdio.h>
#include <unistd.h>

void rp__out_begin(struct out *o, int fd)
{
    o->fd = fd;
    o->ok = true;
    o->n = 0;
}

void rp__out_flush(struct out *o)
{
    size_t done = 0;
    while (o->ok && done < o->n) {
        ssize_t w = write(o->fd, o->buf + done, o->n - done);
        if (w <= 0)
            o->ok = false;
        else
            done += (size_t)w;
    }
    o->n = 0;
}

void rp__out_str(struct out *o, const char *s)
{
    for (; *s; s++) {
        if (o->n == sizeof o->buf)
            rp__out_flush(o);
        o->buf[o->n++] = *s;
    }
}

void rp__out_u64(struct out *o, uint64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    rp__out_str(o, tmp);
}

void rp__out_json_str(struct out *o, const char *s)
{
    rp__out_str(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\', tmp[1] = (char)c, tmp[2] = 0;
        } else if (c < 0x20) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
        } else {
            tmp[0] = (char)c, tmp[1] = 0;
        }
        rp__out_str(o, tmp);
    }
    rp__out_str(o, "\"");
}

void rp__out_key_u64(struct out *o, const char *sep, const char *key, uint64_t v)
{
    rp__out_str(o, sep);
    rp__out_json_str(o, key);
    rp__out_str(o, ": ");
    rp__out_u64(o, v);
}

void rp__out_key_str(struct out *o, const char *sep, const char *key, const char *s)
{
    rp__out_str(o, sep);
    rp__out_json_str(o, key);
    rp__out_str(o, ": ");
    rp__out_json_str(o, s);
}

void rp__out_ratio(struct out *o, const char *sep, const char *key, uint64_t part,
                   uint64_t whole)
{
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%.4f", whole ? (double)part / (double)whole : 0.0);
    rp__out_str(o, sep);
    rp__out_json_str(o, key);
    rp__out_str(o, ": ");
    rp__out_str(o, tmp);
}
