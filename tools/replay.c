/* replay.c - the `reprise replay FILE` command: its options, and with
 * --shim the player run again under libreprise.so (REPRISE=1); the player
 * itself is play*.c (play.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "play.h"
#include "replay.h"

/* --jitter SEED[,SCALE]: a decimal seed, and a scale above 0 (at most
 * 100). False after one line on stderr. */
static bool parse_jitter(const char *val, struct pl_options *po)
{
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(val, &end, 10);
    bool ok = !errno && end != val && val[0] != '-';
    double scale = 1.0;
    if (ok && *end == ',') {
        const char *s = end + 1;
        errno = 0;
        scale = strtod(s, &end);
        ok = !errno && end != s && scale > 0 && scale <= 100;
    }
    if (!ok || *end) {
        fprintf(stderr, "reprise replay: --jitter takes SEED[,SCALE] (a decimal seed, a scale above "
                        "0 and at most 100, 1 by default), not '%s'\n", val);
        return false;
    }
    po->jitter = true;
    po->jitter_seed = seed;
    po->jitter_scale = scale;
    return true;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "reprise replay: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

/* ---- the command -------------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: reprise replay FILE [--shim | --no-shim] [--timing recorded|none]\n"
            "                           [--jitter SEED[,SCALE]] [--max-gap MS]\n"
            "                           [--driver PATH] [--stats FILE] [--strict]\n"
            "                           [--order returned|entered]\n"
            "Issue a trace's driver calls again (a trace recorded with REPRISE_TRACE or\n"
            "reprise --trace): the program's threads in the recorded order, its kernels as\n"
            "empty kernels of the same names and parameter layouts, copies and memsets to\n"
            "memory of the recorded sizes.\n"
            "  --shim            under libreprise.so (REPRISE=1): what the engine makes of\n"
            "                    the stream\n"
            "  --no-shim         against the driver alone (the default)\n"
            "  --timing recorded the host time between a thread's calls as recorded (the\n"
            "                    default);\n"
            "           none     as fast as the calls go\n"
            "  --jitter SEED[,SCALE]\n"
            "                    the recorded timing perturbed, the same for the same SEED:\n"
            "                    each host gap times a factor drawn log-uniformly between\n"
            "                    1/(1+SCALE) and 1+SCALE (SCALE 1 by default), and before\n"
            "                    2%% of the calls a pause of 0.1-5 ms, as a preempted thread\n"
            "                    sees\n"
            "  --max-gap MS      no host gap longer than MS milliseconds (long idle times\n"
            "                    of the program shortened; the engine sees the host quiet\n"
            "                    either way)\n"
            "  --driver PATH     the driver library (default libcuda.so.1)\n"
            "  --stats FILE      with --shim: the shim's JSON report (REPRISE_STATS),\n"
            "                    checked before the replay\n"
            "  --order returned  calls of several threads in the order they returned (the\n"
            "                    default: a call that waited comes after what it waited for);\n"
            "          entered   in the order they began\n"
            "  --strict          exit 3 when a replayed call's result differs from the\n"
            "                    program's (queries, whose answers depend on timing,\n"
            "                    excepted)\n"
            "Exit status: 0; 1 when the trace cannot be read or the driver loaded; 2 on a\n"
            "usage error (an output path that cannot be written included); 3 with --strict\n"
            "as above.\n");
}

int rp_replay_main(int argc, char **argv, const char *(*library)(void))
{
    const char *file = NULL, *driver = "libcuda.so.1", *stats = NULL;
    bool shim = false, timing_none = false;
    struct pl_options po = {.timing = true};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(o, "--shim")) {
            shim = true;
        } else if (!strcmp(o, "--no-shim")) {
            shim = false;
        } else if (!strcmp(o, "--in-shim")) {
            po.in_shim = true; /* internal: the re-executed player under the shim */
        } else if (!strcmp(o, "--strict")) {
            po.strict = true;
        } else if (!strcmp(o, "--timing") || !strcmp(o, "--driver") || !strcmp(o, "--stats") ||
                   !strcmp(o, "--order") || !strcmp(o, "--jitter") || !strcmp(o, "--max-gap")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "reprise replay: option '%s' needs a value (see reprise replay --help)\n", o);
                return 2;
            }
            const char *val = argv[++i];
            if (!strcmp(o, "--driver")) {
                driver = val;
            } else if (!strcmp(o, "--jitter")) {
                if (!parse_jitter(val, &po))
                    return 2;
            } else if (!strcmp(o, "--max-gap")) {
                char *end;
                errno = 0;
                double ms = strtod(val, &end);
                if (errno || end == val || *end || !(ms > 0) || ms > 3.6e6) {
                    fprintf(stderr, "reprise replay: --max-gap takes milliseconds above 0 (at most "
                                    "an hour), not '%s'\n", val);
                    return 2;
                }
                po.max_gap_ns = (uint64_t)(ms * 1e6);
            } else if (!strcmp(o, "--stats")) {
                stats = val;
            } else if (!strcmp(o, "--order")) {
                if (strcmp(val, "returned") && strcmp(val, "entered")) {
                    fprintf(stderr, "reprise replay: --order takes returned or entered, not '%s'\n", val);
                    return 2;
                }
                po.entry_order = !strcmp(val, "entered");
            } else if (!strcmp(val, "recorded") || !strcmp(val, "none")) {
                po.timing = !strcmp(val, "recorded");
                timing_none = !po.timing;
            } else {
                fprintf(stderr, "reprise replay: --timing takes recorded or none, not '%s'\n", val);
                return 2;
            }
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "reprise replay: unknown option '%s' (see reprise replay --help)\n", o);
            return 2;
        } else if (!file) {
            file = o;
        } else {
            fprintf(stderr, "reprise replay: one trace at a time ('%s' and '%s')\n", file, o);
            return 2;
        }
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    if ((po.jitter || po.max_gap_ns) && timing_none) {
        fprintf(stderr, "reprise replay: %s changes the recorded timing: it needs --timing recorded\n",
                po.jitter ? "--jitter" : "--max-gap");
        return 2;
    }
    if (stats && !shim && !po.in_shim) {
        fprintf(stderr, "reprise replay: --stats is the shim's report: it needs --shim\n");
        return 2;
    }
    char why[PATH_MAX + 64];
    if (stats && !po.in_shim && !rp_cli_output_ok(stats, why, sizeof why)) {
        /* Before the replay, not after it. */
        fprintf(stderr, "reprise replay: --stats %s: %s\n", stats, why);
        return 2;
    }
    if (shim && !po.in_shim) {
        /* The shim must be preloaded from the start: run the player again
         * under it. */
        const char *lib = library();
        if (!lib)
            return fail("cannot find libreprise.so next to this command");
        const char *old = getenv("LD_PRELOAD");
        size_t need = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
        char *preload = malloc(need);
        if (!preload)
            return fail("out of memory");
        snprintf(preload, need, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
        /* The summary at exit, as a run under `reprise` prints it (unless
         * REPRISE_SUMMARY says otherwise). */
        if (setenv("LD_PRELOAD", preload, 1) || setenv("REPRISE", "1", 1) ||
            setenv("REPRISE_DRIVER", driver, 1) || (stats && setenv("REPRISE_STATS", stats, 1)) ||
            setenv("REPRISE_SUMMARY", "1", 0))
            return fail("cannot set the environment: %s", strerror(errno));
        free(preload);
        char **nargv = calloc((size_t)argc + 3, sizeof *nargv);
        if (!nargv)
            return fail("out of memory");
        int j = 0;
        nargv[j++] = "reprise";
        nargv[j++] = "replay";
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--shim") != 0)
                nargv[j++] = argv[i];
        nargv[j++] = "--in-shim";
        execv("/proc/self/exe", nargv);
        return fail("cannot run the player under the shim: %s", strerror(errno));
    }
    po.file = file;
    po.driver = driver;
    return pl_run(&po);
}
