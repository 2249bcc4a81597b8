/* flush.h - the report while the program runs and at a signal (flush.c), as
 * init.c starts it and the exit hook finishes it. */
#ifndef RP_FLUSH_H
#define RP_FLUSH_H

#include <stdbool.h>

/* With the engine on and a report asked for (REPRISE_STATS or
 * REPRISE_SUMMARY): start the thread that rewrites the stats file every
 * REPRISE_STATS_EVERY seconds of activity, and give SIGTERM, SIGINT and
 * SIGHUP, where the program has not claimed them, a handler that has the
 * thread write the final report before the signal takes its default
 * course.  Where a pipe or the thread cannot be made, nothing is installed:
 * the report is still written at exit. */
void rp__flush_start(void);
/* The final report (the stats file, then the summary), once per process:
 * at exit (`at_exit`) or at a signal, whichever comes first. */
void rp__report_final(bool at_exit);
/* In a forked child: the handlers still ours go back to the default. */
void rp__flush_forked(void);

#endif
