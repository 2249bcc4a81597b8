/* statsfile.h - a stats file (docs/stats.md) as `reprise report`, its page
 * and `reprise explain` read it (statsfile.c): checked to be a stats file
 * of a schema this command reads, its process named, and the facts the
 * sentences are computed from (shim/model/explain.h), for one file or for
 * several summed. */
#ifndef REPRISE_STATSFILE_H
#define REPRISE_STATSFILE_H

#include "explain.h"
#include "json.h"

typedef struct rp_stats_file {
    const char *path;
    jval *root;
    const jval *engine;      /* NULL: reprise was not enabled in that process */
    char name[160];          /* "host:pid", with " rank R" when a launcher set one */
    char label[200];         /* for tables: its program and name, "heat vm:4242" */
    char command[512];       /* its command line, "" when the file has none */
    struct rp__run_fact fact;
    /* What fact's arrays point into (owned). */
    struct rp__diff *shapes;
    struct rp__seq_fact *seqs;
    struct rp__diff *divs;
    struct rp__vol_fact *vols;
} rp_stats_file;

/* Read stats file `path` into *s. Returns 0, or 1 after one line on stderr
 * that begins with `who` ("reprise report: x.json: not a reprise stats
 * file (...)"), *s then holding nothing to free. */
int rp_stats_read(rp_stats_file *s, const char *path, const char *who);
void rp_stats_free(rp_stats_file *s);

/* The facts of files[0..n) summed (those where reprise was enabled): counts
 * added, arrays joined, each sequence's `who` its process when n > 1. The
 * arrays are allocated: rp_stats_merged_free frees them. Returns 0, or -1
 * when memory runs out. */
int rp_stats_merge(const rp_stats_file *files, int n, struct rp__run_fact *all);
void rp_stats_merged_free(struct rp__run_fact *all);

/* Why a file holds no engine (s->engine NULL), as a clause: "reprise was
 * not enabled in that process", "the CUDA driver libcuda.so.1 could not be
 * loaded (...): nothing was captured", "the program made no CUDA driver
 * call: nothing to capture". */
void rp_stats_no_engine_text(const rp_stats_file *s, char *out, size_t n);

/* "1403 capturable ops, 1379 replayed (98.3%) in 197 graph launches; 1
 * graph captured, 0 updates" */
void rp_stats_totals_text(const struct rp__run_fact *f, char *out, size_t n);
/* A process as the report names it: "host:pid (command line)", the command
 * cut to `width` characters. */
void rp_stats_label(const rp_stats_file *s, char *out, size_t n, size_t width);
/* A sequence's volatile fields in words ("op 2 (a dtod copy) destination,
 * size; op 5 (gemv_n_large) parameter 1"), "" when it has none. */
void rp_stats_vols_text(const struct rp__seq_fact *s, char *out, size_t n);

/* Keep in own[0..n) the advice that all[0..nall) does not hold already
 * (a process's own advice beside the advice for all); returns how many. */
int rp_stats_advice_new(char own[][RP_ADVICE_LEN], int n, char all[][RP_ADVICE_LEN], int nall);

#endif
