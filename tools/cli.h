/* cli.h - what the files of the `reprise` command share: its subcommands
 * (reprise.c), their help and the help topics (help.c), running a program
 * under the shim (run.c) and as a guard's child (guard.c), and the checks
 * they all make of the paths they are given (cli.c). */
#ifndef REPRISE_CLI_H
#define REPRISE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- reprise.c: the subcommands ------------------------------------------ */

struct rp_subcommand {
    const char *name;     /* "report", "trace info" */
    const char *synopsis; /* what follows "reprise NAME " on its usage line */
    const char *summary;  /* one line: what it does */
    const char *help;     /* the rest of its --help; NULL: it prints its own */
    int (*main)(int argc, char **argv);
};
extern const struct rp_subcommand rp_subcommands[];
extern const size_t rp_n_subcommands;

/* ---- help.c: --help, `reprise help [TOPIC]` and the man page -------------- */

/* The running of a program: `reprise --help`. */
void rp_help_run(FILE *f);
/* A subcommand's --help: its usage line, then its help text. */
void rp_help_subcommand(FILE *f, const struct rp_subcommand *s);
/* `reprise help [TOPIC]` (argv[0] is "help"); `--man` prints the man page. */
int rp_help_main(int argc, char **argv);

/* ---- run.c: reprise [options] [--] program [args...] ---------------------- */

/* Checks every option, sets the environment and runs the program (execs it,
 * or with --min-replayed runs it as a child, guard.c).  Returns only on an
 * error: 2 a usage error (an invalid option, config file or output path),
 * 1 the library cannot be found, 127 the program cannot be run. */
int rp_run_main(int argc, char **argv);

/* ---- guard.c: --min-replayed ---------------------------------------------- */

/* Runs `argv` as a child (signals forwarded), then reads the stats files
 * the run left under `pattern` (%p, %h, %r: any) and checks that at least
 * `share` of their ops ran as graphs.  Returns the exit status: the
 * program's when it failed (a program killed by a signal kills this process
 * by the same signal), 3 when the share is lower or no stats file was left,
 * 0 otherwise; 127 when the program cannot be run.  `tmpdir`, when not
 * NULL, is a folder of the guard's own, removed with its files at the end. */
int rp_guard_run(char **argv, double share, const char *pattern, const char *tmpdir);

/* Parses a share: "0.9" or "90%" (0 to 1).  Returns false when it is not. */
bool rp_guard_share(const char *s, double *share);

/* ---- cli.c: paths ---------------------------------------------------------- */

/* Whether an output file may be written at `pattern` (a stats, trace or
 * page path; %p, %h and %r are left as they are and only the folder before
 * the first of them is checked): its folder exists and may be written in
 * (a report is written beside it and renamed over it), and it is not a
 * folder itself.  Returns true, or false with what is wrong in why[n]. */
bool rp_cli_output_ok(const char *pattern, char *why, size_t n);

/* libreprise.so next to this command (bin/../lib, the configured relative
 * libdir, then the configured absolute one), resolved; NULL when none. */
const char *rp_cli_library(void);

/* The CPU driver's folder when this command runs from a build tree
 * (bin/../cpudriver/libcuda.so.1 exists), resolved; NULL otherwise. */
const char *rp_cli_cpudriver_dir(void);

/* When `program` (a command name or path, as execvp takes it) is an ELF file
 * that needs libcuda.so.1 and the loader cannot find one, prints one line
 * saying so and what to set; otherwise nothing. */
void rp_cli_driver_hint(const char *program);

#endif
