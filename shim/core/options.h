/* The options table: every setting reprise reads, named once.
 *
 * RP_OPTIONS(X) lists X(id, env, kind, default, cli, metavar, description,
 * lo, hi): the environment variable, how its value is parsed, the default used
 * when it is unset or invalid, the range a count must lie in (lo..hi; 0, 0 for
 * other kinds), the `reprise` command's option that sets it (NULL when
 * the command has none) and the one-line description printed by
 * `reprise --help` and at REPRISE_LOG=debug (a NULL metavar: the command's
 * option is a flag that sets the variable to 1).  The shim (options.c) and the
 * command (tools/reprise.c) are both generated from this list, so a new option
 * is one line here.  Values are parsed by optparse.c, which the command
 * builds too, so that both accept exactly the same.  No includes but the
 * standard ones: the command uses it without cuda.h. */
#ifndef RP_OPTIONS_H
#define RP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* How an option's value is parsed. */
enum rp_option_kind {
    RP_OPT_BOOL,   /* 1/on/yes/true or 0/off/no/false, any case */
    RP_OPT_PATH,   /* any non-empty string, at most PATH_MAX-1 bytes */
    RP_OPT_LEVEL,  /* error|warn|info|debug */
    RP_OPT_COUNT,  /* an unsigned integer in lo..hi, with an optional K, M or G (x1024^n) */
    RP_OPT_COSTS,  /* measure, off, or E,U,L: three counts of ns (E > 0) */
};

#define RP_OPTIONS(X)                                                                    \
    X(ENABLE, "REPRISE", RP_OPT_BOOL, "0", NULL, NULL,                                  \
      "activate reprise (unset or off: every call is forwarded untouched)", 0, 0)       \
    X(CONFIG, "REPRISE_CONFIG", RP_OPT_PATH, "", "--config", "FILE",                    \
      "read options from FILE (key = value lines); the environment wins", 0, 0)         \
    X(STATS, "REPRISE_STATS", RP_OPT_PATH, "", "--stats", "FILE",                       \
      "write the JSON report to FILE at exit (%p pid, %h host, %r MPI/launcher rank)", 0, 0) \
    X(STATS_EVERY, "REPRISE_STATS_EVERY", RP_OPT_COUNT, "5", "--stats-every", "S",       \
      "while the program runs, also rewrite the report every S seconds of activity (0: at exit and at a signal only)", 0, 86400) \
    X(SUMMARY, "REPRISE_SUMMARY", RP_OPT_BOOL, "0", "--summary", "0|1",                  \
      "print a few lines on what reprise did at exit (on by default under `reprise`)", 0, 0) \
    X(LOG, "REPRISE_LOG", RP_OPT_LEVEL, "warn", "--log", "LEVEL",                       \
      "log verbosity on stderr: error, warn, info, debug, or trace (a line per op)", 0, 0) \
    X(DRIVER, "REPRISE_DRIVER", RP_OPT_PATH, "libcuda.so.1", "--driver", "PATH",        \
      "the CUDA driver library to forward to", 0, 0)                                    \
    X(TRACE, "REPRISE_TRACE", RP_OPT_PATH, "", "--trace", "FILE",                       \
      "record every driver call to FILE (%p pid, %h host, %r rank), with the engine on or off; replay it with `reprise replay`", 0, 0) \
    X(TRACE_DATA, "REPRISE_TRACE_DATA", RP_OPT_BOOL, "0", "--trace-data", NULL,         \
      "with REPRISE_TRACE: record the bytes host-to-device copies read too (by default a trace holds no program data)", 0, 0) \
    X(NVTX, "REPRISE_NVTX", RP_OPT_BOOL, "0", "--nvtx", "0|1",                           \
      "mark captures, replays and flushes with NVTX ranges (Nsight Systems)", 0, 0)      \
    X(EXCLUDE, "REPRISE_EXCLUDE", RP_OPT_PATH, "", "--exclude", "GLOBS",                \
      "never capture kernels whose names match these comma-separated globs", 0, 0)      \
    X(INCLUDE, "REPRISE_INCLUDE", RP_OPT_PATH, "", "--include", "GLOBS",                \
      "capture only kernels whose names match these comma-separated globs", 0, 0)       \
    X(WARMUP, "REPRISE_WARMUP", RP_OPT_COUNT, "2", "--warmup", "N",                     \
      "capture a sequence once it has been seen N times with identical content", 1, 1000000) \
    X(MIN_OPS, "REPRISE_MIN_OPS", RP_OPT_COUNT, "2", "--min-ops", "N",                  \
      "never capture a sequence of fewer than N ops", 1, 1000000)                       \
    X(MAX_OPS, "REPRISE_MAX_OPS", RP_OPT_COUNT, "4096", "--max-ops", "N",               \
      "never capture a sequence of more than N ops (a bound: hits are counted)", 1, 1048576) \
    X(MAX_HELD, "REPRISE_MAX_HELD", RP_OPT_COUNT, "64", "--max-held", "N",               \
      "a step found in a stream without host boundaries is captured in chunks of at most N ops", 1, 1048576) \
    X(IDLE_US, "REPRISE_IDLE_US", RP_OPT_COUNT, "100", "--idle-us", "US",                \
      "work held back for a graph is issued when its stream has had no call for US microseconds (0: never)", 0, 1000000) \
    X(PARTS, "REPRISE_PARTS", RP_OPT_BOOL, "1", "--parts", "0|1",                        \
      "at a quiet spot inside a step, launch what is held as a part of its graph and keep matching the rest (0: issue it eagerly, and the spot ends the segment)", 0, 0) \
    X(PATIENCE, "REPRISE_PATIENCE", RP_OPT_COUNT, "16384", "--patience", "N",           \
      "a stream whose last N ops (at least warmup+3 of its longest segment) brought no replay stops recording for a while (0: never)", 0, 1073741824) \
    X(MAX_GRAPHS, "REPRISE_MAX_GRAPHS", RP_OPT_COUNT, "256", "--max-graphs", "N",       \
      "keep at most N captured graphs (least recently used dropped first)", 1, 65536)   \
    X(MAX_VARIANTS, "REPRISE_MAX_VARIANTS", RP_OPT_COUNT, "16", "--max-variants", "N",   \
      "keep up to N graphs (or executables of a graph with updates) for contents of one structure that come back; past N, or when new ones keep coming, one graph updated per replay", 0, 64) \
    X(MAX_UPDATES, "REPRISE_MAX_UPDATES", RP_OPT_COUNT, "64", "--max-updates", "N",     \
      "a replay may always update up to N graph nodes; more only where REPRISE_COSTS says it pays", 0, 1048576) \
    X(COSTS, "REPRISE_COSTS", RP_OPT_COSTS, "measure", "--costs", "measure|off|E,U,L",  \
      "past REPRISE_MAX_UPDATES, replay where k node updates and a graph launch cost less than the eager launches, with costs measured here (measure), never (off), or these ns", 0, 0) \
    X(MAX_STAGING, "REPRISE_MAX_STAGING", RP_OPT_COUNT, "64M", "--max-staging", "BYTES", \
      "pinned staging for host-to-device copies in graphs, per context", 0, 1ull << 40) \
    X(MAX_SEQ_BYTES, "REPRISE_MAX_SEQ_BYTES", RP_OPT_COUNT, "1M", "--max-seq-bytes", "BYTES", \
      "kernel parameter bytes kept per sequence; a longer one is not learnt", 0, 1ull << 32) \
    X(TABLE, "REPRISE_TABLE", RP_OPT_COUNT, "1024", "--table", "N",                     \
      "slots of the table that counts sequences seen (least recently used evicted)", 16, 1048576)

enum rp__option_id {
#define X(id, env, kind, def, cli, metavar, desc, lo, hi) RP_OPTION_##id,
    RP_OPTIONS(X)
#undef X
    RP_OPTION_COUNT
};

/* Log levels, in increasing verbosity (REPRISE_LOG). */
enum rp__log_level { RP_LOG_ERROR, RP_LOG_WARN, RP_LOG_INFO, RP_LOG_DEBUG, RP_LOG_TRACE };

/* ---- optparse.c: values parsed the same way by the shim and the command -- */

/* One option of the table. */
struct rp__option_desc {
    const char *env, *def, *cli, *metavar, *desc;
    enum rp_option_kind kind;
    unsigned long long lo, hi;
};
extern const struct rp__option_desc rp__option_descs[RP_OPTION_COUNT];

union rp__option_value {
    bool b;
    int level;
    const char *path; /* "" when unset; also a cost setting, as given */
    unsigned long long count;
};

/* Parse `s` as a value of option `id` into *out (a path or a cost setting:
 * `s` itself, not copied).  Returns false, leaving *out untouched, when `s`
 * is not a value the option accepts. */
bool rp__option_parse_value(int id, const char *s, union rp__option_value *out);

/* What option `id` accepts, for a message ("a count in 1..1M (K, M, G:
 * x1024)"), into out[n]; returns out. */
const char *rp__option_accepts(int id, char *out, size_t n);

/* The option a config file's key names (its variable without REPRISE_, in
 * any case: "warmup", "MAX_OPS"), or the command's flag names ("--warmup");
 * -1 if none. */
int rp__option_by_key(const char *key);
int rp__option_by_flag(const char *flag);
/* Option `id`'s config-file key ("max_ops"), into out[n]; returns out. */
const char *rp__option_key(int id, char *out, size_t n);

/* A REPRISE_COSTS value: 0 measure, 1 off, 2 pinned to ns[] (eager launch,
 * node update, graph launch).  Returns -1, ns[] untouched, when `s` is none
 * of measure, off or E,U,L with E > 0. */
int rp__option_costs(const char *s, unsigned long long ns[3]);

/* One line of a config file (`key = value`, `#` starts a comment), split in
 * place.  Returns RP_CONF_BLANK for a line with nothing on it;
 * RP_CONF_SET with *id and *value set and parsed into *v; RP_CONF_BAD_VALUE
 * with *id set when the key is known but its value is missing or invalid;
 * RP_CONF_BAD_LINE for a malformed line or an unknown key.  For the last
 * two, why[n] says what was wrong and what is accepted. */
enum rp__conf_line { RP_CONF_BLANK, RP_CONF_SET, RP_CONF_BAD_VALUE, RP_CONF_BAD_LINE };
enum rp__conf_line rp__config_line(char *line, int *id, char **value,
                                   union rp__option_value *v, char *why, size_t n);

#endif /* RP_OPTIONS_H */
