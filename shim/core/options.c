/* Options: the environment and REPRISE_CONFIG's file, parsed once into the
 * table of options.h (each value by optparse.c, as the command parses its
 * flags).
 *
 * Values are copied into static buffers (no allocation, and a later setenv by
 * the program cannot pull a string from under us).  An invalid value gets one
 * warning line naming the variable (or the file and line), the value, what
 * is accepted and the default used: set by hand, a preload must never stop
 * a program. */
#include "core.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reprise.h"

#define descs rp__option_descs

static union rp__option_value values[RP_OPTION_COUNT];
static char paths[RP_OPTION_COUNT][PATH_MAX];
static bool parsed;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

/* Parse `s` as option `id` into values[id] (a path copied into its
 * buffer).  Returns false, leaving values[id] untouched, if `s` is not a
 * valid value. */
static bool parse_one(int id, const char *s)
{
    union rp__option_value v;
    memset(&v, 0, sizeof v); /* whole, whatever member the kind fills */
    if (!rp__option_parse_value(id, s, &v))
        return false;
    if (descs[id].kind == RP_OPT_PATH || descs[id].kind == RP_OPT_COSTS) {
        memmove(paths[id], s, strlen(s) + 1); /* fits: the parse checked */
        v.path = paths[id];
    }
    values[id] = v;
    return true;
}

void rp__options_reset(void)
{
    parsed = false;
}

/* The default of option `id`, as a message shows it. */
static const char *default_text(int id)
{
    return descs[id].def[0] ? descs[id].def : "(unset)";
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
    char accepts[160];
    rp__warn("invalid %s=%s (expected %s); using the default %s", descs[id].env, s,
             rp__option_accepts(id, accepts, sizeof accepts), default_text(id));
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Append `glob` to the comma-separated list of option `id`.  Returns false,
 * the list unchanged, when it would not fit. */
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
 * every option at its default.  (The `reprise` command refuses such a file
 * before the program starts instead.) */
static void read_config(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        rp__error("cannot read the config file %s: %m; using the defaults", path);
        return;
    }
    char buf[1024], why[320];
    int line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        int id = -1;
        char *value = NULL;
        union rp__option_value v;
        enum rp__conf_line kind = rp__config_line(buf, &id, &value, &v, why, sizeof why);
        if (kind == RP_CONF_BLANK)
            continue;
        if (kind == RP_CONF_BAD_LINE) {
            rp__error("%s:%d: %s; ignored", path, line, why);
            continue;
        }
        const char *env = getenv(descs[id].env);
        if (env && env[0])
            continue; /* the environment wins */
        if (kind == RP_CONF_BAD_VALUE) {
            parse_one(id, descs[id].def);
            rp__error("%s:%d: %s; using the default %s", path, line, why, default_text(id));
        } else if (id == RP_OPTION_EXCLUDE || id == RP_OPTION_INCLUDE) {
            if (!append_glob(id, value))
                rp__error("%s:%d: the %s list is too long; '%s' ignored", path, line,
                          descs[id].env + 8, value);
        } else {
            parse_one(id, value);
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
        case RP_OPT_COSTS:
            rp__debug("option %s=%s", descs[id].env, values[id].path);
            break;
        case RP_OPT_COUNT:
            rp__debug("option %s=%llu", descs[id].env, values[id].count);
            break;
        }
    }
}
