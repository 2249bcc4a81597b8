/* alloc.h - the one seam every allocation of the shim goes through, so that
 * a test can fail the Nth one (as the CPU driver's CPUCUDA_FAULTS fails its
 * Nth driver call; SQLite's fault-injecting malloc does the same). Each
 * returns what the libc call would, or NULL: at a fault, and when the libc
 * call fails. On failure nothing is allocated and, for rp__realloc, `p` is
 * left as it was. Whatever fails, the first failure is said once on stderr
 * (the work it was for runs eagerly: every caller's failure contract). free()
 * needs no seam. */
#ifndef RP_ALLOC_H
#define RP_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *rp__malloc(size_t n);
void *rp__calloc(size_t n, size_t size);
void *rp__realloc(void *p, size_t n);

/* Fail the allocation numbered `nth` (1: the next one), or every one from
 * it on when `persistent`; 0 disarms. Counting starts again from here.
 * REPRISE_FAULT_ALLOC=N[+] (read at init, docs/RELIABILITY.md) does the
 * same for a whole run; N = 0 only counts. */
void rp__alloc_fail_at(uint64_t nth, int persistent);
/* Allocations counted since the last rp__alloc_fail_at, and how many of
 * them were failed on purpose. */
uint64_t rp__alloc_calls(void);
uint64_t rp__alloc_faults(void);
/* Parse REPRISE_FAULT_ALLOC (once, from init). Returns 0, or -1 after one
 * line naming the bad value (no fault armed). */
int rp__alloc_faults_from_env(void);

#endif
