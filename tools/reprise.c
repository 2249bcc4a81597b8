/* The `reprise` command: runs a program with libreprise.so preloaded
 * (run.c), and its subcommands on what such a run leaves:
 *
 *   reprise [options] [--] program [args...]
 *   reprise report | explain | replay | trace info | help ...
 *
 * A first argument that names a subcommand runs it (a program of that name
 * runs after `--`); every subcommand answers -h and --help with its usage
 * line and what it does, the same text `reprise help NAME` prints. */
#include <string.h>

#include "cli.h"
#include "replay.h"
#include "report.h"

static int replay_main(int argc, char **argv)
{
    return rp_replay_main(argc, argv, rp_cli_library);
}

const struct rp_subcommand rp_subcommands[] = {
    {"report", "[-o|--html OUT.html] STATS.json...",
     "summarise stats files (one per process or rank) as text, and as a page with -o",
     "Reads the stats files of a run (reprise --stats; one per process or rank, named\n"
     "host:pid and rank) and prints what ran as graphs, why the rest did not (reprise\n"
     "help reasons), each bound hit by its option, advice, and the sequences captured.\n"
     "C++ kernel names are shown demangled.\n"
     "  -o, --html OUT.html  also write a self-contained page with charts (checked\n"
     "                       before the files are read)\n"
     "Exit status: 0; 1 when a file cannot be read or written; 2 on a usage error.\n",
     rp_report_main},
    {"explain", "STATS.json...",
     "say where a run's eager ops went, sequence by sequence (reprise explain --help)",
     NULL, rp_explain_main},
    {"replay", "FILE [options]",
     "issue a trace's driver calls again, with or without the shim (reprise replay --help)",
     NULL, replay_main},
    {"trace info", "FILE",
     "print what a trace recorded with --trace holds",
     "Prints what a trace recorded with REPRISE_TRACE (reprise --trace) holds: its\n"
     "header, calls by entry point, launches by kernel, threads, streams, the host\n"
     "gaps between calls and the duration. A damaged or cut trace is read up to its\n"
     "last complete record.\n"
     "Exit status: 0; 1 when the trace cannot be read; 2 on a usage error.\n",
     rp_trace_main},
    {"help", "[TOPIC | --man]",
     "print help on a topic: options, config, environment, reasons, or a subcommand",
     "Prints help on TOPIC: options (reprise --help), config (the config file and its\n"
     "keys), environment (the REPRISE_* variables), reasons (what each reason for ops\n"
     "run eagerly means), exit (exit statuses), or a subcommand (its --help). With no\n"
     "topic, the commands and the topics. --man prints all of it as the man page\n"
     "reprise(1).\n",
     rp_help_main},
};
const size_t rp_n_subcommands = sizeof rp_subcommands / sizeof rp_subcommands[0];

static bool is_help(const char *a)
{
    return !strcmp(a, "-h") || !strcmp(a, "--help");
}

int main(int argc, char **argv)
{
    for (size_t k = 0; argc > 1 && k < rp_n_subcommands; k++) {
        const struct rp_subcommand *s = &rp_subcommands[k];
        /* "trace info": the first word names the subcommand. */
        size_t word = strcspn(s->name, " ");
        if (strncmp(argv[1], s->name, word) != 0 || argv[1][word] != '\0')
            continue;
        for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
            if (s->help && is_help(argv[i])) {
                rp_help_subcommand(stdout, s);
                return 0;
            }
        return s->main(argc - 1, argv + 1);
    }
    return rp_run_main(argc, argv);
}
