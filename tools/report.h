/* report.h - the subcommands that read stats files: `reprise report`
 * (report.c, its page page.c) and `reprise explain` (explain.c). */
#ifndef REPRISE_REPORT_H
#define REPRISE_REPORT_H

#include <stdbool.h>

/* argv[0] is "report"; returns the command's exit status (0 ok, 1 a file
 * could not be read or written, 2 a usage error). */
int rp_report_main(int argc, char **argv);

/* argv[0] is "explain"; the same exit statuses. */
int rp_explain_main(int argc, char **argv);

/* Adds the stats file `path`'s ops and the ops of them replayed to *ops
 * and *replayed (--min-replayed).  Returns false, with one line on stderr
 * and nothing added, when it is not a readable stats file. */
bool rp_report_add_share(const char *path, double *ops, double *replayed);

#endif
