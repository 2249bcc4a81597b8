/* cpucuda.h - the test interface of the CPU driver (libcuda.so.1 under
 * tests/): counters of what reached the driver, in-process fault injection
 * and the order graph launches run their nodes in. See README.md for the
 * counter names, the fault spec and the graph orders. */
#ifndef CPUCUDA_H
#define CPUCUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* The value of a counter ("launch.eager", "call.cuLaunchKernel_ptsz", ...);
 * 0 for an unknown name. */
unsigned long long cpucuda_counter(const char *name);

/* Replaces the fault list with spec ("entry:N[+][:code][,...]", "" clears)
 * and restarts the per-entry call numbering faults count by. Returns 0, or -1
 * for a malformed spec (one line on stderr; the list is then empty). */
int cpucuda_faults_set(const char *spec);

/* Faults fired since the last cpucuda_faults_set (or process start). */
unsigned long long cpucuda_faults_fired(void);

/* Zeroes every counter, call.* included (not the fault numbering). */
void cpucuda_counters_reset(void);

/* The digest of everything executed so far (README.md, "The digest"): its
 * two 64-bit halves, and the number of kernels, copies and memsets in it.
 * Either pointer may be NULL. */
void cpucuda_digest(unsigned long long value[2], unsigned long long *ops);

/* Starts the digest afresh (value 0, no ops). */
void cpucuda_digest_reset(void);

/* Calls the calling thread makes from cpucuda_fidelity_own(1) to (0) are
 * its own, not the program's: they are left out of the fidelity digest
 * (README.md, "The fidelity digest"), and memory they allocate gets no
 * number in it. A player's own streams, modules and memory. */
void cpucuda_fidelity_own(int on);

/* A player's: memory the recording process had at [live, live + size) is
 * at `base` here. Kernel parameters hold the recording process's pointers
 * verbatim; once any such range is given, the fidelity digest finds the
 * allocation a parameter points into through these ranges only. A range
 * replaces older ones it overlaps. */
void cpucuda_fidelity_alias(unsigned long long live, unsigned long long size,
                            unsigned long long base);

/* Sets the order later graph launches run their ready nodes in, as
 * CPUCUDA_GRAPH_ORDER does: "creation", "reverse", "random" (the process's
 * seed) or "random:SEED"; NULL or "" is the default, "random". Restarts the
 * launch numbering a random order's per-launch seeds are drawn by, so the
 * same spec and the same launches give the same order again. A launch
 * already queued keeps its order. Returns 0, or -1 for a malformed spec
 * (one line on stderr naming it; the order is unchanged). */
int cpucuda_graph_order_set(const char *spec);

/* Sets how many threads a later graph launch may run independent nodes on
 * (1 to 8; CPUCUDA_GRAPH_WORKERS, default 2). Returns 0, or -1 for any
 * other value (one line on stderr; unchanged). */
int cpucuda_graph_workers_set(unsigned n);

#ifdef __cplusplus
}
#endif

#endif
