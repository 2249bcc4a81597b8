/* replay.h - the `reprise replay` and `reprise trace` subcommands
 * (replay.c, traceinfo.c). */
#ifndef REPRISE_REPLAY_H
#define REPRISE_REPLAY_H

/* argv[0] is "replay"; `library` finds libreprise.so (NULL when it cannot)
 * for --shim. Returns the exit status (replay.c's usage says which). */
int rp_replay_main(int argc, char **argv, const char *(*library)(void));

/* argv[0] is "trace", argv[1] "info": prints what a trace holds. Returns 0,
 * 1 when the trace cannot be read (after what came before the damage), 2 on
 * a usage error. */
int rp_trace_main(int argc, char **argv);

#endif
