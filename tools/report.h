/* report.h - the `reprise report` subcommand (report.c). */
#ifndef REPRISE_REPORT_H
#define REPRISE_REPORT_H

/* argv[0] is "report"; returns the command's exit status (0 ok, 1 a file
 * could not be read or written, 2 a usage error). */
int rp_report_main(int argc, char **argv);

#endif
