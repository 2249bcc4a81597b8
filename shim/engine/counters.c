/* engstats.c - the engine's settings, and what it counts for the report:
 * why ops ran eagerly (the reason names), the bounds it hit (each said once
 * in the log), and a report line per sequence, kept after its graph is
 * dropped. stats.c writes them out. The bottom of the engine: it calls
 * nothing above it but the recorder, for kernel names. */
#include "engine.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set once by rp__engine_install, before any hook runs. */
struct rp__engine_config rp__eng_cfg;

const char *const rp__eager_reason_names[RP_EAGER_REASON_COUNT] = {
    [RP_EAGER_WARMING_UP] = "warming_up",
    [RP_EAGER_NOT_CAPTURABLE] = "not_capturable",
    [RP_EAGER_SHORT] = "segment_too_short",
    [RP_EAGER_DIVERGED] = "diverged",
    [RP_EAGER_CAPTURE_FAILED] = "capture_failed",
    [RP_EAGER_BOUND] = "bound_hit",
    [RP_EAGER_PROGRAM_CAPTURE] = "program_capturing",
    [RP_EAGER_NO_LAYOUT] = "no_param_layout",
    [RP_EAGER_EXCLUDED] = "excluded_by_rule",
    [RP_EAGER_NO_PERIOD] = "no_period",
    [RP_EAGER_RESTING] = "resting",
};

/* ---- bound hits ------------------------------------------------------------ */

/* Hits with no context to count them in (the context table was full). */
static _Atomic uint64_t hits_without_context[RP_BOUND_COUNT];

void rp__bound_hit(rp_ctxstate *cs, enum rp__bound b)
{
    static _Atomic unsigned char logged[RP_BOUND_COUNT];
    if (cs) {
        cs->counters.bound_hits++;
        cs->counters.bound_hits_by[b]++;
    } else {
        atomic_fetch_add_explicit(&hits_without_context[b], 1, memory_order_relaxed);
    }
    if (!atomic_exchange(&logged[b], 1)) {
        char what[256];
        rp__bound_describe((int)b, 0, what, sizeof what);
        rp__info("bound hit: %s (counted in the report's bound_hits_by.%s)", what,
                 rp__bounds[b].key);
    }
}

uint64_t rp__bound_hits_without_context(enum rp__bound b)
{
    return atomic_load_explicit(&hits_without_context[b], memory_order_relaxed);
}

/* ---- report lines of sequences ------------------------------------------- */

/* Append " word" to the fixed buffer `b` unless it is there already (cut
 * when full). */
static void append(char *b, size_t size, const char *word)
{
    size_t n = strlen(b), w = strlen(word);
    for (const char *p = b; (p = strstr(p, word)); p += w)
        if ((p == b || p[-1] == ' ') && (p[w] == ' ' || p[w] == '\0'))
            return;
    if (n + 1 < size)
        snprintf(b + n, size - n, "%s%s", n ? " " : "", word);
}

/* The volatile fields of a sequence, named for the report: a kernel's
 * parameter as name#index and its geometry as name.grid, name.block,
 * name.shmem; a copy's or memset's field as op<k>.<field>. */
static void describe_volatile(const rp_seq *s, char *b, size_t size)
{
    b[0] = '\0';
    for (size_t k = 0; s->vmask && k < s->det->n; k++) {
        uint64_t m = s->vmask[k];
        const rp_op *op = &s->det->ops[k];
        char w[96];
        for (unsigned int i = 0; m && i < 64; i++) {
            uint64_t bit = 1ull << i;
            if (!(m & bit))
                continue;
            if (op->kind == RP_OP_KERNEL) {
                const char *name = rp__rec_kernel_name(s->cs, op);
                if (i < RP_VOL_MAX_PARAMS)
                    snprintf(w, sizeof w, "%s#%u", name, i);
                else
                    snprintf(w, sizeof w, "%s.%s", name,
                             bit == RP_VOL_GRID ? "grid" : bit == RP_VOL_BLOCK ? "block" : "shmem");
            } else {
                const char *f = bit == RP_VOL_DST ? "dst"
                                : bit == RP_VOL_HOST ? "host"
                                : bit == RP_VOL_BYTES ? "bytes"
                                : op->kind == RP_OP_MEMSET ? "value" : "src";
                snprintf(w, sizeof w, "op%zu.%s", k, f);
            }
            append(b, size, w);
        }
    }
}

void rp__seq_info(const rp_seq *s, struct rp__seq_info *o)
{
    o->id = s->id;
    o->ops = s->det->n;
    o->occurrences = s->det->seen + s->replays;
    o->replays = s->replays;
    o->divergences = s->divergences;
    o->updates = s->ex.updates;
    o->captured_at = s->captured_at;
    o->by_period = s->by_period;
    o->first_kernels[0] = '\0';
    for (size_t k = 0, named = 0; k < s->det->n && named < 3; k++) {
        if (s->det->ops[k].kind != RP_OP_KERNEL)
            continue;
        size_t n = strlen(o->first_kernels);
        snprintf(o->first_kernels + n, sizeof o->first_kernels - n, "%s%s", named ? "," : "",
                 rp__rec_kernel_name(s->cs, &s->det->ops[k]));
        named++;
    }
    o->first_kernel[0] = '\0';
    o->div_op = s->div_op;
    o->div_why = s->div_why;
    o->div_kernel[0] = '\0';
    if (s->div_why && s->div_op < s->det->n)
        snprintf(o->div_kernel, sizeof o->div_kernel, "%s",
                 rp__rec_kernel_name(s->cs, &s->det->ops[s->div_op]));
    for (size_t k = 0; k < s->det->n; k++) {
        if (s->det->ops[k].kind == RP_OP_KERNEL) {
            snprintf(o->first_kernel, sizeof o->first_kernel, "%s",
                     rp__rec_kernel_name(s->cs, &s->det->ops[k]));
            break;
        }
    }
    describe_volatile(s, o->volatile_fields, sizeof o->volatile_fields);
    o->variants = 1;
    const rp_ctxstate *cs = s->cs;
    for (size_t i = 0; i < cs->nseqs; i++) {
        const rp_seq *t = cs->seqs[i];
        if (t == s || t->det->n != s->det->n)
            continue;
        size_t k = 0;
        while (k < s->det->n && rp__op_same_structure(&t->det->ops[k], &s->det->ops[k]))
            k++;
        o->variants += k == s->det->n;
    }
}

/* Sequences whose graph was dropped keep their line in the report. */
#define MAX_RETIRED 64
static struct rp__seq_info retired[MAX_RETIRED];
static size_t nretired;
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;

void rp__seq_retire(const rp_seq *s)
{
    pthread_mutex_lock(&retired_lock);
    if (nretired == MAX_RETIRED) {
        memmove(retired, retired + 1, (MAX_RETIRED - 1) * sizeof retired[0]);
        nretired--;
    }
    rp__seq_info(s, &retired[nretired++]);
    pthread_mutex_unlock(&retired_lock);
}

int rp__lock_for_report(pthread_mutex_t *m)
{
    for (int i = 0; i < 100; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int rp__ctx_lock_for_report(rp_ctxstate *cs)
{
    for (int i = 0; i < 100; i++) {
        if (rp__trylock(&cs->lock))
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* The program's errno is left as it was (a futex call sets it to EAGAIN or
 * EINTR under contention; the program's own calls never see the shim's). */
void rp__lock_wait(rp_lock *l)
{
    /* Mark it contended, and sleep while somebody else holds it (the
     * classic three-state futex lock). */
    int saved = errno;
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    errno = saved;
}

void rp__lock_wake(rp_lock *l)
{
    int saved = errno;
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

size_t rp__retired_snapshot(struct rp__seq_info *out, size_t max)
{
    int locked = rp__lock_for_report(&retired_lock);
    size_t n = 0;
    for (size_t i = 0; i < nretired && n < max; i++)
        out[n++] = retired[i];
    if (locked)
        pthread_mutex_unlock(&retired_lock);
    return n;
}
