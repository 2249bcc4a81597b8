/* json.h - a small JSON reader for the stats files (json.c): the `reprise`
 * command's report, page and explain read with it. */
#ifndef REPRISE_JSON_H
#define REPRISE_JSON_H

#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
    jkind kind;
    double num;           /* J_NUM, J_BOOL (1 true) */
    char *str;            /* J_STR */
    struct jval **items;  /* J_ARR, J_OBJ (values) */
    char **keys;          /* J_OBJ */
    size_t n;
} jval;

/* The value in file `path`, or NULL with a one-line reason in err: "cannot
 * read X: ..." or "X: read error" (*not_json 0), or "not JSON: expected a
 * value at byte 12" (*not_json 1). */
jval *jload(const char *path, char *err, size_t errlen, int *not_json);
void jfree(jval *v);
/* Member `key` of object `o` (NULL if `o` is not an object or has none). */
const jval *jget(const jval *o, const char *key);
/* Member `key` as a number (0 when absent or not a number). */
double jnum(const jval *o, const char *key);
/* Member `key` as a string ("" when absent or not a string). */
const char *jstr(const jval *o, const char *key);

#endif
