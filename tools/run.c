/* run.c - `reprise [options] [--] program [args...]`: run a program with
 * libreprise.so preloaded and enabled.
 *
 * Every option is checked before the program starts, because a mistake
 * found at exit costs the whole run: a flag's value, and every line of a
 * config file named by --config, are parsed as the shim parses them
 * (optparse.c), and the first invalid one is an error (exit 2, one line
 * naming the flag or the file and line, what was wrong, what is accepted);
 * the stats and trace files must be writable.  A REPRISE_* variable set by
 * hand keeps the shim's rule instead (warned about once, naming the
 * variable, and replaced by the default): only what was typed here is
 * refused.  Then the library is prepended to LD_PRELOAD (keeping what was
 * there), REPRISE=1 and one variable per option are set, and the program is
 * exec'd (it keeps this pid: REPRISE_RUN_PID tells it that it is the
 * program the command ran), or with --min-replayed run as a child
 * (guard.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "reprise.h"

/* Where an option's value came from, for the messages and the rules. */
enum origin { UNSET, BY_HAND, FROM_CONFIG, FROM_FLAG };

struct setting {
    enum origin from;
    const char *value;
    char where[PATH_MAX + 32]; /* "--stats", "FILE:LINE" or "REPRISE_STATS" */
    char copy[PATH_MAX];       /* the value, when it came from the config file */
};

static int usage_error(const char *what)
{
    fprintf(stderr, "reprise: %s (see reprise --help)\n", what);
    return 2;
}

/* An invalid value given as a flag or in the config file: one line. */
static int invalid(const char *where, int id, const char *value)
{
    char accepts[200];
    fprintf(stderr, "reprise: %s: invalid value '%s' (expected %s)\n", where, value,
            rp__option_accepts(id, accepts, sizeof accepts));
    return 2;
}

/* Every line of the config file `path`, checked; what it sets (where the
 * flags did not) goes into set[].  Returns 0, or 2 after one line per
 * problem. */
static int check_config(const char *path, struct setting set[RP_OPTION_COUNT])
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "reprise: --config %s: cannot read it (%s)\n", path, strerror(errno));
        return 2;
    }
    char buf[1024], why[320];
    int line = 0, rc = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        int id = -1;
        char *value = NULL;
        union rp__option_value v;
        switch (rp__config_line(buf, &id, &value, &v, why, sizeof why)) {
        case RP_CONF_BLANK:
            break;
        case RP_CONF_BAD_LINE:
        case RP_CONF_BAD_VALUE:
            fprintf(stderr, "reprise: %s:%d: %s\n", path, line, why);
            rc = 2;
            break;
        case RP_CONF_SET:
            if (set[id].from <= FROM_CONFIG) { /* the last line wins, as in the shim */
                set[id].from = FROM_CONFIG;
                snprintf(set[id].copy, sizeof set[id].copy, "%s", value);
                set[id].value = set[id].copy;
                snprintf(set[id].where, sizeof set[id].where, "%s:%d", path, line);
            }
            break;
        }
    }
    fclose(f);
    return rc;
}

/* The variables set by hand: an invalid one is warned about and replaced
 * by the default the shim would use, here rather than in every process of
 * the program (the summary's default being on under the command). */
static void check_by_hand(struct setting set[RP_OPTION_COUNT])
{
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const struct rp__option_desc *d = &rp__option_descs[id];
        const char *s = getenv(d->env);
        if (!s || !s[0] || set[id].from == FROM_FLAG || id == RP_OPTION_ENABLE)
            continue;
        set[id].from = BY_HAND;
        set[id].value = s;
        snprintf(set[id].where, sizeof set[id].where, "%s", d->env);
        union rp__option_value v;
        if (rp__option_parse_value(id, s, &v))
            continue;
        const char *def = id == RP_OPTION_SUMMARY ? "1" : d->def;
        char accepts[200];
        fprintf(stderr, "reprise: invalid %s=%s (expected %s); using the default %s\n", d->env,
                s, rp__option_accepts(id, accepts, sizeof accepts), def[0] ? def : "(unset)");
        if (def[0])
            setenv(d->env, def, 1);
        else
            unsetenv(d->env);
        set[id].from = UNSET;
    }
}

/* The stats and trace files: a bad one typed here is an error, one set by
 * hand a warning (the run goes on, as the shim would let it). */
static int check_outputs(struct setting set[RP_OPTION_COUNT])
{
    static const int outputs[] = {RP_OPTION_STATS, RP_OPTION_TRACE};
    int rc = 0;
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        struct setting *s = &set[outputs[i]];
        char why[PATH_MAX + 64];
        if (s->from == UNSET || rp_cli_output_ok(s->value, why, sizeof why))
            continue;
        if (s->from == BY_HAND) {
            fprintf(stderr, "reprise: %s=%s: %s: that file will not be written\n", s->where,
                    s->value, why);
        } else if (s->from == FROM_CONFIG) {
            char key[40];
            fprintf(stderr, "reprise: %s: %s = %s: %s\n", s->where,
                    rp__option_key(outputs[i], key, sizeof key), s->value, why);
            rc = 2;
        } else {
            fprintf(stderr, "reprise: %s %s: %s\n", s->where, s->value, why);
            rc = 2;
        }
    }
    return rc;
}

int rp_run_main(int argc, char **argv)
{
    static struct setting set[RP_OPTION_COUNT];
    const char *min_replayed = NULL;
    double share = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break; /* the program */
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            rp_help_run(stdout);
            return 0;
        }
        if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
            printf("reprise %s (stats schema %d)\n", REPRISE_VERSION, REPRISE_STATS_VERSION);
            return 0;
        }
        /* --flag VALUE, --flag=VALUE; -o is --stats, --min-replayed the guard. */
        char flag[64];
        const char *value = NULL;
        size_t len = strcspn(arg, "=");
        snprintf(flag, sizeof flag, "%.*s", (int)len, arg);
        if (arg[len] == '=')
            value = arg + len + 1;
        int id = strcmp(flag, "-o") == 0 ? RP_OPTION_STATS : rp__option_by_flag(flag);
        bool guard = strcmp(flag, "--min-replayed") == 0;
        if (id < 0 && !guard) {
            char what[128];
            snprintf(what, sizeof what, "unknown option '%.64s'", arg);
            return usage_error(what);
        }
        if (value == NULL && !guard && rp__option_descs[id].metavar == NULL)
            value = "1"; /* a flag (--trace-data) */
        if (value == NULL) {
            if (i + 1 >= argc) {
                char what[128];
                snprintf(what, sizeof what, "option '%s' needs a value", flag);
                return usage_error(what);
            }
            value = argv[++i];
        }
        if (guard) {
            if (!rp_guard_share(value, &share)) {
                fprintf(stderr, "reprise: --min-replayed: invalid value '%s' (expected a share "
                                "from 0 to 1, as 0.9 or 90%%)\n", value);
                return 2;
            }
            min_replayed = value;
            continue;
        }
        union rp__option_value v;
        if (!value[0]) {
            char what[128];
            snprintf(what, sizeof what, "option '%s' needs a value", flag);
            return usage_error(what);
        }
        if (!rp__option_parse_value(id, value, &v))
            return invalid(flag, id, value);
        set[id].from = FROM_FLAG;
        set[id].value = value;
        snprintf(set[id].where, sizeof set[id].where, "%s", flag);
    }
    if (i >= argc)
        return usage_error("no program to run");

    /* The config file of --config, strictly; one set by hand is the shim's
     * to read (and to warn about). */
    if (set[RP_OPTION_CONFIG].from == FROM_FLAG) {
        int rc = check_config(set[RP_OPTION_CONFIG].value, set);
        if (rc)
            return rc;
    }
    check_by_hand(set);
    if (check_outputs(set))
        return 2;
    for (int id = 0; id < RP_OPTION_COUNT; id++)
        if (set[id].from == FROM_FLAG && setenv(rp__option_descs[id].env, set[id].value, 1) != 0) {
            fprintf(stderr, "reprise: cannot set %s: %s\n", rp__option_descs[id].env,
                    strerror(errno));
            return 1;
        }
    /* Under the command, the summary is on unless asked otherwise. */
    setenv("REPRISE_SUMMARY", "1", 0);

    const char *lib = rp_cli_library();
    if (!lib) {
        fprintf(stderr, "reprise: cannot find libreprise.so next to this command "
                        "(bin/../lib) or in " RP_INSTALL_LIBDIR "\n");
        return 1;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(need);
    if (preload == NULL) {
        fprintf(stderr, "reprise: out of memory\n");
        return 1;
    }
    snprintf(preload, need, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("REPRISE", "1", 1) != 0 ||
        setenv("REPRISE_RUN_PID", pid, 1) != 0) {
        fprintf(stderr, "reprise: cannot set the environment: %s\n", strerror(errno));
        return 1;
    }
    free(preload);
    rp_cli_driver_hint(argv[i]);

    if (min_replayed) {
        /* The stats files are what the guard reads: without --stats, files
         * of its own, one per process, in a folder of its own. */
        static char tmpdir[PATH_MAX], pattern[PATH_MAX + 32];
        const char *stats = getenv("REPRISE_STATS");
        const char *own = NULL;
        if (!stats || !stats[0]) {
            const char *t = getenv("TMPDIR");
            snprintf(tmpdir, sizeof tmpdir, "%s/reprise-guard-XXXXXX", t && t[0] ? t : "/tmp");
            if (!mkdtemp(tmpdir)) {
                fprintf(stderr, "reprise: --min-replayed: cannot make a folder for the stats "
                                "files (%s): %s\n", tmpdir, strerror(errno));
                return 1;
            }
            snprintf(pattern, sizeof pattern, "%s/stats-%%p.json", tmpdir);
            setenv("REPRISE_STATS", pattern, 1);
            stats = pattern;
            own = tmpdir;
        }
        return rp_guard_run(&argv[i], share, stats, own);
    }
    execvp(argv[i], &argv[i]);
    fprintf(stderr, "reprise: cannot run '%s': %s\n", argv[i], strerror(errno));
    return 127;
}
