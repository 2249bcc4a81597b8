/* trace.h - the trace recorder (REPRISE_TRACE, docs/trace.md), as the face
 * sees it. The recorder sits in front of the core table: every call an
 * enabled wrapper makes reaches a recording hook first (trace_hooks.c,
 * generated from entries.h), which calls what the core held before (the
 * engine's hook or the driver) and then writes one record of the call as the
 * program made it. Disabled (REPRISE_TRACE unset) nothing of it is installed
 * and no wrapper pays for it. */
#ifndef RP_TRACE_H
#define RP_TRACE_H

#include "core.h"

/* Open the trace REPRISE_TRACE names (%p, %h, %r expanded as for the stats)
 * and install the recording hooks in front of every member of `core`, which
 * they call through. `real` is the driver, which the recorder asks about
 * handles and addresses it has not seen. Returns true when recording; on
 * failure (the file cannot be created, another process is writing it)
 * returns false after one warning line, `core` untouched. Called once, by
 * init, before the tables are published. */
bool rp__trace_setup(struct rp__driver *core, const struct rp__driver *real);

/* In a child of fork(): stop recording at once. The child shares the
 * parent's file mapping and must never write to it. */
void rp__trace_forked(void);

/* At exit: the END record, the file cut to its length, closed. Calls made
 * afterwards (other destructors) are forwarded and not recorded. */
void rp__trace_close(void);

/* ---- between trace.c and trace_hooks.c ------------------------------------ */

/* Whether the hooks record (false after close, in a forked child, or once
 * the file could not grow). */
extern _Atomic bool rp__tr_live;
/* What the hooks call through: the core table as it was before them. */
extern struct rp__driver rp__tr_next;
/* A timestamp in the recorder's ticks (the TSC on x86-64, else ns). */
uint64_t rp__tr_ticks(void);
/* The calls' order of entry: each hook takes the next number as it begins.
 * Records are written in the order calls return; a reader can restore the
 * order they began in (docs/trace.md, "Order"). */
extern _Atomic uint64_t rp__tr_seq;
/* Record one call of entry `id` that returned `r`, begun at tick `t0` as the
 * `seq`-th call (rp__tr_seq), with its arguments as 64-bit words in entries.h's order (pointers and integers
 * widened, by-value structs of up to 8 bytes copied). Never fails: a call the
 * recorder cannot describe is recorded as GENERIC. */
void rp__tr_record(enum rp__entry id, CUresult r, uint64_t t0, uint64_t seq, const uint64_t *a);

/* Before a call of entry `id` (arguments as for rp__tr_record) goes on:
 * a context's destroy is recorded as having begun. */
void rp__tr_before(enum rp__entry id, const uint64_t *a);

/* Put the hooks in front of every non-NULL member of core (trace_hooks.c). */
void rp__tr_install(struct rp__driver *core);

/* An argument as a word: the bytes of its value, zero-extended. */
static inline uint64_t rp__tr_word(const void *p, size_t n)
{
    uint64_t w = 0;
    __builtin_memcpy(&w, p, n < sizeof w ? n : sizeof w);
    return w;
}

#endif /* RP_TRACE_H */
