/* The `reprise` command: run a program with libreprise.so preloaded.
 *
 *   reprise [options] [--] program [args...]
 *
 * It prepends the library to LD_PRELOAD (keeping what was there), sets
 * REPRISE=1 and one REPRISE_* variable per option given, and execs the
 * program.  The options come from the shim's option table (shim/core/options.h),
 * so an option with a command-line name there is accepted here too.  Exit
 * status: the program's; 2 for a usage error; 127 when the program cannot be
 * run; 1 when libreprise.so cannot be found. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "replay.h"
#include "report.h"
#include "reprise.h"

struct cli_option {
    const char *flag;    /* "--stats" */
    const char *env;     /* "REPRISE_STATS" */
    const char *metavar; /* "FILE" */
    const char *desc;
};

static const struct cli_option cli_options[] = {
#define X(id, env, kind, def, cli, metavar, desc, lo, hi) {cli, env, metavar, desc},
    RP_OPTIONS(X)
#undef X
};
#define N_OPTIONS (sizeof cli_options / sizeof cli_options[0])

static void usage(FILE *f)
{
    fprintf(f,
            "usage: reprise [options] [--] program [args...]\n"
            "       reprise report [--html OUT.html] STATS.json...\n"
            "       reprise replay FILE [--shim | --no-shim] [--timing recorded|none] [--order returned|entered]\n"
            "                           [--driver PATH] [--stats FILE] [--strict]\n"
            "       reprise trace info FILE\n"
            "Run program with libreprise.so preloaded and enabled (REPRISE=1); or\n"
            "summarise stats files (one per process or rank, named host:pid and rank)\n"
            "as text and, with --html, as a page with a chart: what ran as graphs,\n"
            "why the rest did not, each bound hit by its option, and advice.\n"
            "C++ kernel names are shown demangled.\n"
            "With --trace FILE the program's driver calls are recorded; `reprise replay`\n"
            "issues them again (empty kernels, the recorded threads, order and host gaps)\n"
            "with or without the shim, and `reprise trace info` says what a trace holds\n"
            "(see reprise replay --help).\n"
            "\n"
            "options:\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (cli_options[i].flag == NULL)
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", cli_options[i].flag, cli_options[i].metavar ? " " : "",
                 cli_options[i].metavar ? cli_options[i].metavar : "");
        fprintf(f, "  %-20s %s (sets %s)\n", left, cli_options[i].desc, cli_options[i].env);
    }
    fprintf(f, "  %-20s %s\n", "-h, --help", "print this help and exit");
    fprintf(f, "  %-20s %s\n", "-V, --version", "print the version and exit");
    fprintf(f, "\nExit status: the program's; 2 on a usage error; 127 if the program "
               "cannot be run.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "reprise: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see reprise --help)\n");
    return 2;
}

/* Find libreprise.so next to this command: bin/../lib in the build tree and
 * in most installs, the configured relative libdir (lib64, lib/<triplet>),
 * then the configured absolute libdir.  Returns false if none exists. */
static bool find_library(char *out, size_t size);

/* The library's path for `reprise replay --shim`, NULL when not found. */
static const char *library_path(void)
{
    static char lib[PATH_MAX];
    return find_library(lib, sizeof lib) ? lib : NULL;
}

static bool find_library(char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        const char *rel[] = {"../lib", RP_BIN_TO_LIBDIR};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char candidate[PATH_MAX];
            if (snprintf(candidate, sizeof candidate, "%s/%s/libreprise.so", exe, rel[i]) >=
                (int)sizeof candidate)
                continue;
            if (access(candidate, R_OK) == 0 && realpath(candidate, out) != NULL)
                return true;
        }
    }
    if (snprintf(out, size, "%s/libreprise.so", RP_INSTALL_LIBDIR) < (int)size &&
        access(out, R_OK) == 0)
        return true;
    return false;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "report") == 0)
        return rp_report_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "explain") == 0)
        return rp_explain_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "replay") == 0)
        return rp_replay_main(argc - 1, argv + 1, library_path);
    if (argc > 1 && strcmp(argv[1], "trace") == 0)
        return rp_trace_main(argc - 1, argv + 1);
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
            usage(stdout);
            return 0;
        }
        if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
            printf("reprise %s (stats schema %d)\n", REPRISE_VERSION, REPRISE_STATS_VERSION);
            return 0;
        }
        const struct cli_option *opt = NULL;
        const char *value = NULL;
        for (size_t k = 0; k < N_OPTIONS && opt == NULL; k++) {
            const char *flag = cli_options[k].flag;
            if (flag == NULL)
                continue;
            size_t len = strlen(flag);
            if (strncmp(arg, flag, len) != 0)
                continue;
            if (arg[len] == '\0')
                opt = &cli_options[k];
            else if (arg[len] == '=')
                opt = &cli_options[k], value = arg + len + 1;
        }
        if (opt == NULL)
            return usage_error("unknown option '%s'", arg);
        if (value == NULL && opt->metavar == NULL)
            value = "1"; /* a flag (--trace-data) */
        if (value == NULL) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a value", arg);
            value = argv[++i];
        }
        if (setenv(opt->env, value, 1) != 0) {
            fprintf(stderr, "reprise: cannot set %s: %s\n", opt->env, strerror(errno));
            return 1;
        }
    }
    if (i >= argc)
        return usage_error("no program to run%s", "");
    /* Under the command, the summary is on unless asked otherwise. */
    setenv("REPRISE_SUMMARY", "1", 0);

    char lib[PATH_MAX];
    if (!find_library(lib, sizeof lib)) {
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
    if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("REPRISE", "1", 1) != 0) {
        fprintf(stderr, "reprise: cannot set the environment: %s\n", strerror(errno));
        return 1;
    }
    free(preload);

    execvp(argv[i], &argv[i]);
    fprintf(stderr, "reprise: cannot run '%s': %s\n", argv[i], strerror(errno));
    return 127;
}
