/* json.c - a small JSON reader for the stats files (json.h): UTF-8 text as
 * it is, \u escapes of one byte (what our writer makes of control bytes),
 * numbers as doubles, nesting to 64 levels. */
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    const char *err;
} jparser;

static void jskip(jparser *j)
{
    while (isspace((unsigned char)*j->p))
        j->p++;
}

static jval *jnew(jkind k)
{
    jval *v = calloc(1, sizeof *v);
    if (v)
        v->kind = k;
    return v;
}

void jfree(jval *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static jval *jparse_value(jparser *j, int depth);

static char *jparse_string(jparser *j)
{
    if (*j->p != '"') {
        j->err = "expected a string";
        return NULL;
    }
    j->p++;
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    while (s && *j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            char e = *j->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': /* \u00XX only: our reports escape control bytes so */
                if (j->p[0] && j->p[1] && j->p[2] && j->p[3]) {
                    char hex[5] = {j->p[0], j->p[1], j->p[2], j->p[3], 0};
                    c = (char)strtol(hex, NULL, 16);
                    j->p += 4;
                } else {
                    j->err = "bad \\u escape";
                }
                break;
            case '"': case '\\': case '/': c = e; break;
            default: j->err = "bad escape"; break;
            }
        }
        if (n + 2 > cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
        }
        if (s)
            s[n++] = c;
    }
    if (!s || *j->p != '"' || j->err) {
        if (!j->err)
            j->err = s ? "unterminated string" : "out of memory";
        free(s);
        return NULL;
    }
    j->p++;
    s[n] = '\0';
    return s;
}

static int jpush(jval *v, jval *item, char *key)
{
    jval **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items)
        return -1;
    v->items = items;
    if (v->kind == J_OBJ) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys)
            return -1;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

static jval *jparse_container(jparser *j, int depth, jkind kind)
{
    char close = kind == J_OBJ ? '}' : ']';
    jval *v = jnew(kind);
    j->p++;
    jskip(j);
    if (*j->p == close) {
        j->p++;
        return v;
    }
    while (v && !j->err) {
        jskip(j);
        char *key = NULL;
        if (kind == J_OBJ) {
            key = jparse_string(j);
            if (!key)
                break;
            jskip(j);
            if (*j->p != ':') {
                j->err = "expected ':'";
                free(key);
                break;
            }
            j->p++;
        }
        jval *item = jparse_value(j, depth + 1);
        if (!item || jpush(v, item, key) != 0) {
            jfree(item);
            free(key);
            if (!j->err)
                j->err = "out of memory";
            break;
        }
        jskip(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == close) {
            j->p++;
            return v;
        }
        j->err = kind == J_OBJ ? "expected ',' or '}'" : "expected ',' or ']'";
    }
    jfree(v);
    return NULL;
}

static jval *jparse_value(jparser *j, int depth)
{
    jskip(j);
    if (depth > 64) {
        j->err = "nested too deeply";
        return NULL;
    }
    if (*j->p == '{')
        return jparse_container(j, depth, J_OBJ);
    if (*j->p == '[')
        return jparse_container(j, depth, J_ARR);
    if (*j->p == '"') {
        char *s = jparse_string(j);
        jval *v = s ? jnew(J_STR) : NULL;
        if (v)
            v->str = s;
        else
            free(s);
        return v;
    }
    if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
        jval *v = jnew(J_BOOL);
        if (v)
            v->num = *j->p == 't';
        j->p += *j->p == 't' ? 4 : 5;
        return v;
    }
    if (!strncmp(j->p, "null", 4)) {
        j->p += 4;
        return jnew(J_NULL);
    }
    char *end;
    errno = 0;
    double d = strtod(j->p, &end);
    if (end == j->p || errno) {
        j->err = "expected a value";
        return NULL;
    }
    j->p = end;
    jval *v = jnew(J_NUM);
    if (v)
        v->num = d;
    return v;
}

const jval *jget(const jval *o, const char *key)
{
    if (!o || o->kind != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->items[i];
    return NULL;
}

double jnum(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_NUM ? v->num : 0.0;
}

const char *jstr(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_STR ? v->str : "";
}

jval *jload(const char *path, char *err, size_t errlen, int *not_json)
{
    *not_json = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(buf, cap *= 2);
            if (!t)
                free(buf);
            buf = t;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    jparser j = {buf, NULL};
    jval *v = jparse_value(&j, 0);
    if (v) {
        jskip(&j);
        if (*j.p)
            j.err = "text after the value";
    }
    if (j.err || !v) {
        snprintf(err, errlen, "not JSON: %s at byte %ld", j.err ? j.err : "no value",
                 (long)(j.p - buf));
        *not_json = 1;
        jfree(v);
        v = NULL;
    }
    free(buf);
    return v;
}
