/* Options: the environment, parsed once into the table of options.h.
 *
 * Values are copied into static buffers (no allocation, and a later setenv by
 * the program cannot pull a string from under us).  An invalid value gets one
 * warning line naming the variable, the value and the default used. */
#include "core.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reprise.h"

struct option_desc {
    const char *env;
    enum rp_option_kind kind;
    const char *def;
    const char *desc;
    unsigned long long lo, hi;
};

static const struct option_desc descs[RP_OPTION_COUNT] = {
#define X(id, env, kind, def, cli, metavar, desc, lo, hi) [RP_OPTION_##id] = {env, kind, def, desc, lo, hi},
    RP_OPTIONS(X)
#undef X
};

static union rp__option_value values[RP_OPTION_COUNT];
static char paths[RP_OPTION_COUNT][PATH_MAX];
static bool parsed;

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

/* Parse `s` as option `id` into values[id].  Returns false, leaving
 * values[id] untouched, if `s` is not a valid value. */
static bool parse_one(int id, const char *s)
{
    switch (descs[id].kind) {
    case RP_OPT_BOOL:
        return parse_bool(s, &values[id].b);
    case RP_OPT_LEVEL:
        return parse_level(s, &values[id].level);
    case RP_OPT_COUNT:
        return parse_count(s, descs[id].lo, descs[id].hi, &values[id].count);
    case RP_OPT_PATH: {
        size_t n = strlen(s);
        if (n >= PATH_MAX)
            return false;
        memcpy(paths[id], s, n + 1);
        values[id].path = paths[id];
        return true;
    }
    }
    return false; /* NEVER */
}

void rp__options_reset(void)
{
    parsed = false;
}

/* Read option `id` from the environment; an invalid value is warned about
 * and replaced by the default. */
static void read_env(int id)
{
    const char *s = getenv(descs[id].env);
    /* An empty string counts as unset: `REPRISE_STATS= prog` is how a shell
     * user clears a variable for one command. */
    if (s == NULL || s[0] == '\0')
        return;
    if (parse_one(id, s))
        return;
    parse_one(id, descs[id].def);
    if (descs[id].kind == RP_OPT_COUNT)
        rp__warn("invalid %s=%s (expected a count in %llu..%llu); using the default %s",
                 descs[id].env, s, descs[id].lo, descs[id].hi, descs[id].def);
    else
        rp__warn("invalid %s=%s; using the default %s", descs[id].env, s,
                 descs[id].def[0] ? descs[id].def : "(unset)");
}

/* The option a config-file key names: the variable's name without the
 * REPRISE_ prefix, in any case ("warmup", "max_ops"). -1 if none. */
static int option_by_key(const char *key)
{
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const char *env = descs[id].env;
        if (strncmp(env, "REPRISE_", 8) == 0 && strcasecmp(env + 8, key) == 0)
            return id;
    }
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

/* Append `glob` to the comma-separated list of option `id`. */
static bool append_glob(int id, const char *glob)
{
    size_t n = strlen(paths[id]), g = strlen(glob);
    if (n + g + 2 > sizeof paths[id])
        return false;
    if (n)
        paths[id][n++] = ',';
    memcpy(paths[id] + n, glob, g + 1);
    values[id].path = paths[id];
    return true;
}

/* Read the config file named by REPRISE_CONFIG: `key = value` lines, `#`
 * starts a comment. A key is an option's variable without REPRISE_
 * ("warmup = 3"); `exclude` and `include` may repeat and add to their list.
 * The environment wins over the file: a key whose variable is set is
 * skipped. Every problem is one line naming the file and the line, and the
 * line is ignored (its option keeps its default); an unreadable file leaves
 * every option at its default. */
static void read_config(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        rp__error("cannot read the config file %s: %m; using the defaults", path);
        return;
    }
    char buf[1024];
    int line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(buf);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            rp__error("%s:%d: malformed line (expected key = value); ignored", path, line);
            continue;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        int id = option_by_key(key);
        if (id < 0 || id == RP_OPTION_CONFIG) {
            rp__error("%s:%d: unknown key '%s'; ignored", path, line, key);
            continue;
        }
        const char *env = getenv(descs[id].env);
        if (env && env[0])
            continue; /* the environment wins */
        if (!*value) {
            rp__error("%s:%d: no value for '%s'; ignored", path, line, key);
            continue;
        }
        if (id == RP_OPTION_EXCLUDE || id == RP_OPTION_INCLUDE) {
            if (!append_glob(id, value))
                rp__error("%s:%d: the %s list is too long; '%s' ignored", path, line, key, value);
            continue;
        }
        if (!parse_one(id, value)) {
            parse_one(id, descs[id].def);
            rp__error("%s:%d: invalid value '%s' for %s; using the default %s", path, line,
                      value, key, descs[id].def[0] ? descs[id].def : "(unset)");
        }
    }
    fclose(f);
}

void rp__options_parse(void)
{
    if (parsed)
        return;
    parsed = true;
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        parse_one(id, descs[id].def); /* valid by construction */
    /* The log level first, so that warnings about the others obey it. */
    rp__log_level = values[RP_OPTION_LOG].level;
    read_env(RP_OPTION_LOG);
    rp__log_level = values[RP_OPTION_LOG].level;
    read_env(RP_OPTION_CONFIG);
    if (values[RP_OPTION_CONFIG].path[0]) {
        read_config(values[RP_OPTION_CONFIG].path);
        rp__log_level = values[RP_OPTION_LOG].level;
    }
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        if (id != RP_OPTION_LOG && id != RP_OPTION_CONFIG)
            read_env(id);
}

/* Whether `list` (comma-separated globs) has a glob matching `name`. */
static bool any_glob(const char *list, const char *name)
{
    char glob[256];
    while (*list) {
        size_t n = strcspn(list, ",");
        if (n < sizeof glob) {
            memcpy(glob, list, n);
            glob[n] = '\0';
            if (fnmatch(trim(glob), name, 0) == 0)
                return true;
        }
        list += n;
        if (*list == ',')
            list++;
    }
    return false;
}

bool rp__option_kernel_allowed(const char *name)
{
    const char *exclude = values[RP_OPTION_EXCLUDE].path;
    const char *include = values[RP_OPTION_INCLUDE].path;
    if (exclude && exclude[0] && any_glob(exclude, name))
        return false;
    if (include && include[0] && !any_glob(include, name))
        return false;
    return true;
}

union rp__option_value rp__option(enum rp__option_id id)
{
    return values[id];
}

void rp__options_log(void)
{
    if (rp__log_level < RP_LOG_DEBUG)
        return;
    rp__debug("version %s (stats schema %d)", REPRISE_VERSION, REPRISE_STATS_VERSION);
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        switch (descs[id].kind) {
        case RP_OPT_BOOL:
            rp__debug("option %s=%s", descs[id].env, values[id].b ? "1" : "0");
            break;
        case RP_OPT_LEVEL:
            rp__debug("option %s=%s", descs[id].env, level_names[values[id].level]);
            break;
        case RP_OPT_PATH:
            rp__debug("option %s=%s", descs[id].env, values[id].path);
            break;
        case RP_OPT_COUNT:
            rp__debug("option %s=%llu", descs[id].env, values[id].count);
            break;
        }
    }
}
