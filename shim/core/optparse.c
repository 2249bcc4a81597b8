/* optparse.c - the values of the options table (options.h), parsed the same
 * way by the shim (options.c: the environment and a config file, where an
 * invalid value is warned about and replaced by the default) and by the
 * `reprise` command (tools/: a flag or a config file named by --config,
 * where it is an error before the program starts).  Pure: no state, no
 * allocation, no logging, nothing of the shim but options.h, so that the
 * command links it without the rest. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct rp__option_desc rp__option_descs[RP_OPTION_COUNT] = {
#define X(id, env, kind, def, cli, metavar, desc, lo, hi) \
    [RP_OPTION_##id] = {env, def, cli, metavar, desc, kind, lo, hi},
    RP_OPTIONS(X)
#undef X
};

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "on", "yes", "true"};
    static const char *const no[] = {"0", "off", "no", "false"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return *out = true, true;
        if (strcasecmp(s, no[i]) == 0)
            return *out = false, true;
    }
    return false;
}

static bool parse_level(const char *s, int *out)
{
    for (int i = 0; i < (int)(sizeof level_names / sizeof level_names[0]); i++)
        if (strcasecmp(s, level_names[i]) == 0)
            return *out = i, true;
    return false;
}

/* A count: decimal digits, then at most one of K, M, G (x1024, any case),
 * within lo..hi. */
static bool parse_count(const char *s, unsigned long long lo, unsigned long long hi,
                        unsigned long long *out)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    unsigned int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || (shift && v > (~0ull >> shift)))
        return false;
    v <<= shift;
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int rp__option_costs(const char *s, unsigned long long ns[3])
{
    if (!strcmp(s, "measure"))
        return 0;
    if (!strcmp(s, "off"))
        return 1;
    unsigned long long v[3];
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        v[i] = strtoull(p, &end, 10);
        if (errno || *end != (i < 2 ? ',' : '\0'))
            return -1;
        p = end + 1;
    }
    if (v[0] == 0)
        return -1;
    memcpy(ns, v, sizeof v);
    return 2;
}

bool rp__option_parse_value(int id, const char *s, union rp__option_value *out)
{
    const struct rp__option_desc *d = &rp__option_descs[id];
    switch (d->kind) {
    case RP_OPT_BOOL:
        return parse_bool(s, &out->b);
    case RP_OPT_LEVEL:
        return parse_level(s, &out->level);
    case RP_OPT_COUNT:
        return parse_count(s, d->lo, d->hi, &out->count);
    case RP_OPT_COSTS: {
        unsigned long long ns[3];
        if (rp__option_costs(s, ns) < 0)
            return false;
        out->path = s;
        return true;
    }
    case RP_OPT_PATH:
        if (strlen(s) >= PATH_MAX)
            return false;
        out->path = s;
        return true;
    }
    return false; /* every kind returns above */
}

/* A count as a person writes it: 1048576 as 1M, 1000000 as it is. */
static void fmt_count(unsigned long long v, char *out, size_t n)
{
    static const char suffix[] = "KMG";
    int k = -1;
    while (k < 2 && v >= 1024 && v % 1024 == 0)
        v /= 1024, k++;
    if (k >= 0)
        snprintf(out, n, "%llu%c", v, suffix[k]);
    else
        snprintf(out, n, "%llu", v);
}

const char *rp__option_accepts(int id, char *out, size_t n)
{
    const struct rp__option_desc *d = &rp__option_descs[id];
    char lo[24], hi[24];
    switch (d->kind) {
    case RP_OPT_BOOL:
        snprintf(out, n, "0 or 1, or off/on, no/yes, false/true");
        break;
    case RP_OPT_LEVEL:
        snprintf(out, n, "error, warn, info, debug or trace");
        break;
    case RP_OPT_COUNT:
        fmt_count(d->lo, lo, sizeof lo);
        fmt_count(d->hi, hi, sizeof hi);
        snprintf(out, n, "a count in %s..%s; K, M and G multiply by 1024", lo, hi);
        break;
    case RP_OPT_COSTS:
        snprintf(out, n, "measure, off, or E,U,L: the ns of an eager launch (above 0), a "
                         "node update and a graph launch");
        break;
    case RP_OPT_PATH:
        snprintf(out, n, "a name of at most %d bytes", PATH_MAX - 1);
        break;
    }
    return out;
}

int rp__option_by_key(const char *key)
{
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const char *env = rp__option_descs[id].env;
        if (strncmp(env, "REPRISE_", 8) == 0 && strcasecmp(env + 8, key) == 0)
            return id;
    }
    return -1;
}

const char *rp__option_key(int id, char *out, size_t n)
{
    const char *env = rp__option_descs[id].env;
    snprintf(out, n, "%s", strncmp(env, "REPRISE_", 8) == 0 ? env + 8 : env);
    for (char *c = out; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return out;
}

int rp__option_by_flag(const char *flag)
{
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        if (rp__option_descs[id].cli && strcmp(rp__option_descs[id].cli, flag) == 0)
            return id;
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

enum rp__conf_line rp__config_line(char *line, int *id, char **value,
                                   union rp__option_value *v, char *why, size_t n)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *s = trim(line);
    if (!*s)
        return RP_CONF_BLANK;
    char *eq = strchr(s, '=');
    if (!eq) {
        snprintf(why, n, "malformed line (expected key = value)");
        return RP_CONF_BAD_LINE;
    }
    *eq = '\0';
    char *key = trim(s);
    *value = trim(eq + 1);
    *id = rp__option_by_key(key);
    if (*id < 0 || *id == RP_OPTION_CONFIG) {
        snprintf(why, n, "unknown key '%s' (reprise help config lists the keys)", key);
        return RP_CONF_BAD_LINE;
    }
    char accepts[160];
    rp__option_accepts(*id, accepts, sizeof accepts);
    if (!**value) {
        snprintf(why, n, "no value for '%s' (expected %s)", key, accepts);
        return RP_CONF_BAD_VALUE;
    }
    if (!rp__option_parse_value(*id, *value, v)) {
        snprintf(why, n, "invalid value '%s' for %s (expected %s)", *value, key, accepts);
        return RP_CONF_BAD_VALUE;
    }
    return RP_CONF_SET;
}
