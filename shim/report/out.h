/* out.h - the report's writer (out.c): a fixed buffer written with
 * write(2), which remembers the first failure, and JSON pieces on it. At
 * exit the driver and stdio may be shut down: nothing here allocates or
 * uses stdio streams. */
#ifndef REPRISE_OUT_H
#define REPRISE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct out {
    int fd;
    bool ok;     /* false from the first failed write on */
    size_t n;
    char buf[4096];
};

/* Start writing to `fd`. */
void rp__out_begin(struct out *o, int fd);
/* Write what is buffered (o->ok false if a write fails). */
void rp__out_flush(struct out *o);
void rp__out_str(struct out *o, const char *s);
void rp__out_u64(struct out *o, uint64_t v);
/* A JSON string: quotes, backslashes and control characters escaped. */
void rp__out_json_str(struct out *o, const char *s);
/* `sep` "key": v */
void rp__out_key_u64(struct out *o, const char *sep, const char *key, uint64_t v);
/* `sep` "key": "s" */
void rp__out_key_str(struct out *o, const char *sep, const char *key, const char *s);
/* `sep` "key": part / whole with 4 decimals (0 when whole is 0). */
void rp__out_ratio(struct out *o, const char *sep, const char *key, uint64_t part,
                   uint64_t whole);

#endif
