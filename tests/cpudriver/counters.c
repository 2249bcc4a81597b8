/* counters.c - what reached the driver: the counters, the per-entry call
 * counts, fault injection (CPUCUDA_FAULTS / cpucuda_faults_set), the
 * CPUCUDA_STATS report written at exit, the debug log, the order graph
 * launches run their nodes in (CPUCUDA_GRAPH_ORDER / CPUCUDA_GRAPH_WORKERS,
 * cpucuda_graph_order_set / cpucuda_graph_workers_set), and the global
 * state. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct cc_global cc__g = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .progress = PTHREAD_COND_INITIALIZER,
    .next_id = 1,
    .order = CC_ORDER_RANDOM, /* its seed: the process's, chosen at load */
    .workers = 2,
};

const char *const cc__entry_names[CC_E__COUNT] = {
#define CC_ENTRY(name, base, ver, pt) #name,
#include "entries.h"
#undef CC_ENTRY
};

static const char *const counter_names[CC_C__COUNT] = {
#define X(id, str) str,
    CC_COUNTERS(X)
#undef X
};

static _Atomic unsigned long long counters[CC_C__COUNT];
static _Atomic unsigned long long calls[CC_E__COUNT];

/* Fault rules, one per entry, packed so a check is one atomic load:
 * bits 0-31 N (0 = no rule), bits 32-62 the code, bit 63 "N+". Calls are
 * numbered separately from the call counters so that installing a list
 * restarts the numbering (a test sets "cuX:1" and means its next call). */
static _Atomic unsigned long long rules[CC_E__COUNT];
static _Atomic unsigned long long fault_calls[CC_E__COUNT];
static _Atomic unsigned long long fired;
static int log_on;

void cc__lock(void) { pthread_mutex_lock(&cc__g.mu); }
void cc__unlock(void) { pthread_mutex_unlock(&cc__g.mu); }

unsigned long long cc__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

CUresult cc__check_init(void)
{
    cc__lock();
    bool ok = cc__g.initialized;
    cc__unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

void cc__log(const char *fmt, ...)
{
    if (!log_on) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    int saved = errno;
    ssize_t w = write(2, "cpucuda: ", 9);
    w = write(2, buf, (size_t)n);
    (void)w;
    errno = saved;
}

void cc__count(enum cc_counter c)
{
    atomic_fetch_add_explicit(&counters[c], 1, memory_order_relaxed);
}

int cc__enter(enum cc_entry e)
{
    cc__tl_entry = e;
    atomic_fetch_add_explicit(&calls[e], 1, memory_order_relaxed);
    unsigned long long r = atomic_load_explicit(&rules[e], memory_order_relaxed);
    if (!r) return -1;
    unsigned long long n = atomic_fetch_add(&fault_calls[e], 1) + 1;
    unsigned long long at = r & 0xffffffffULL;
    bool plus = (r >> 63) != 0;
    if (n == at || (plus && n > at)) {
        atomic_fetch_add(&fired, 1);
        cc__count(CC_C_FAULTS_FIRED);
        int code = (int)((r >> 32) & 0x7fffffffULL);
        cc__log("fault: %s call %llu fails with %d", cc__entry_names[e], n, code);
        return code;
    }
    return -1;
}

static int entry_index(const char *name, size_t len)
{
    for (int i = 0; i < CC_E__COUNT; i++)
        if (strlen(cc__entry_names[i]) == len && !memcmp(cc__entry_names[i], name, len))
            return i;
    return -1;
}

/* Parses one "entry:N[+][:code]" into *idx and *rule; returns NULL or why not. */
static const char *parse_one(const char *s, size_t len, int *idx, unsigned long long *rule)
{
    const char *colon = memchr(s, ':', len);
    if (!colon) return "expected entry:N";
    *idx = entry_index(s, (size_t)(colon - s));
    if (*idx < 0) return "unknown entry point";
    const char *p = colon + 1, *end = s + len;
    unsigned long long n = 0, code = 999;
    bool plus = false;
    if (p == end || *p < '0' || *p > '9') return "N must be a decimal number";
    while (p < end && *p >= '0' && *p <= '9') {
        n = n * 10 + (unsigned)(*p++ - '0');
        if (n > 0xffffffffULL) return "N too large";
    }
    if (n == 0) return "N counts from 1";
    if (p < end && *p == '+') { plus = true; p++; }
    if (p < end) {
        if (*p++ != ':') return "expected ':code' after N";
        if (p == end) return "empty code";
        code = 0;
        while (p < end) {
            if (*p < '0' || *p > '9') return "code must be a decimal CUresult";
            code = code * 10 + (unsigned)(*p++ - '0');
            if (code > 0x7fffffffULL) return "code too large";
        }
    }
    *rule = n | (code << 32) | (plus ? 1ULL << 63 : 0);
    return NULL;
}

int cpucuda_faults_set(const char *spec) CC_EXPORT;
int cpucuda_faults_set(const char *spec)
{
    unsigned long long nr[CC_E__COUNT] = {0};
    const char *why = NULL;
    const char *s = spec ? spec : "";
    while (*s && !why) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        int idx;
        unsigned long long r;
        if (len == 0) why = "empty spec";
        else if (!(why = parse_one(s, len, &idx, &r))) nr[idx] = r;
        s += len + (comma ? 1 : 0);
        if (comma && !*s) why = "empty spec";
    }
    for (int i = 0; i < CC_E__COUNT; i++) {
        atomic_store(&rules[i], why ? 0 : nr[i]);
        atomic_store(&fault_calls[i], 0);
    }
    atomic_store(&fired, 0);
    if (why) {
        fprintf(stderr, "cpucuda: bad CPUCUDA_FAULTS '%s': %s; no faults injected\n",
                spec ? spec : "", why);
        return -1;
    }
    return 0;
}

unsigned long long cpucuda_faults_fired(void) CC_EXPORT;
unsigned long long cpucuda_faults_fired(void) { return atomic_load(&fired); }

unsigned long long cpucuda_counter(const char *name) CC_EXPORT;
unsigned long long cpucuda_counter(const char *name)
{
    if (!name) return 0;
    if (!strncmp(name, "call.", 5)) {
        int i = entry_index(name + 5, strlen(name + 5));
        return i < 0 ? 0 : atomic_load(&calls[i]);
    }
    for (int i = 0; i < CC_C__COUNT; i++)
        if (!strcmp(counter_names[i], name)) return atomic_load(&counters[i]);
    return 0;
}

void cpucuda_counters_reset(void) CC_EXPORT;
void cpucuda_counters_reset(void)
{
    for (int i = 0; i < CC_C__COUNT; i++) atomic_store(&counters[i], 0);
    for (int i = 0; i < CC_E__COUNT; i++) atomic_store(&calls[i], 0);
}

/* ---- the graph order ------------------------------------------------------
 * The CPU driver exists for tests, and a test must not pass because a graph
 * missing a dependency edge happens to run its nodes in the order they were
 * created (capture order, a valid eager order): by default a launch runs
 * its ready nodes in a seeded pseudo-random order, on two threads. The seed
 * is the process's own unless the spec names one; CPUCUDA_STATS and the log
 * report it, so that a failing run can be repeated. */
#define DEFAULT_WORKERS 2u

/* The seed "random" without one means: chosen at load from the pid and the
 * time, 32 bits (a number every JSON reader keeps exact). */
static unsigned long long process_seed;

static unsigned long long mix64(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Parses "creation", "reverse", "random" or "random:SEED" (SEED decimal,
 * 0 to 2^64-1). Returns NULL and sets *o and *seed (the process's seed for
 * plain "random", 0 for the others), or why not. */
static const char *parse_order(const char *s, enum cc_order *o, unsigned long long *seed)
{
    *seed = 0;
    if (!strcmp(s, "creation")) {
        *o = CC_ORDER_CREATION;
        return NULL;
    }
    if (!strcmp(s, "reverse")) {
        *o = CC_ORDER_REVERSE;
        return NULL;
    }
    if (strncmp(s, "random", 6) != 0 || (s[6] && s[6] != ':'))
        return "want creation, reverse, random or random:SEED";
    *o = CC_ORDER_RANDOM;
    if (!s[6]) {
        *seed = process_seed;
        return NULL;
    }
    const char *p = s + 7;
    if (!*p) return "empty SEED";
    unsigned long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return "SEED must be a decimal number";
        unsigned d = (unsigned)(*p - '0');
        if (v > (~0ULL - d) / 10) return "SEED too large";
        v = v * 10 + d;
    }
    *seed = v;
    return NULL;
}

void cc__order_spec(char *buf, size_t n)
{
    if (cc__g.order == CC_ORDER_CREATION) snprintf(buf, n, "creation");
    else if (cc__g.order == CC_ORDER_REVERSE) snprintf(buf, n, "reverse");
    else snprintf(buf, n, "random:%llu", cc__g.order_seed);
}

int cpucuda_graph_order_set(const char *spec) CC_EXPORT;
int cpucuda_graph_order_set(const char *spec)
{
    enum cc_order o = CC_ORDER_RANDOM;
    unsigned long long seed = process_seed;
    const char *why = spec && *spec ? parse_order(spec, &o, &seed) : NULL;
    cc__lock();
    if (why) {
        char now[48];
        cc__order_spec(now, sizeof now);
        cc__unlock();
        fprintf(stderr, "cpucuda: bad graph order '%s': %s; keeping %s\n", spec, why, now);
        return -1;
    }
    cc__g.order = o;
    cc__g.order_seed = seed;
    cc__g.launches = 0;
    cc__unlock();
    return 0;
}

int cpucuda_graph_workers_set(unsigned n) CC_EXPORT;
int cpucuda_graph_workers_set(unsigned n)
{
    cc__lock();
    unsigned now = cc__g.workers;
    if (n >= 1 && n <= CC_MAX_WORKERS) cc__g.workers = n;
    cc__unlock();
    if (n >= 1 && n <= CC_MAX_WORKERS) return 0;
    fprintf(stderr, "cpucuda: bad graph workers %u: want 1 to %d; keeping %u\n", n, CC_MAX_WORKERS, now);
    return -1;
}

/* At load (no other thread exists yet): the process's seed, then the
 * environment. A malformed value gets one line naming it and what is used
 * instead. */
static void order_load(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    process_seed = mix64(((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_sec * 1000000000ULL ^
                         (unsigned long long)ts.tv_nsec) & 0xffffffffULL;
    cc__g.order_seed = process_seed;
    const char *o = getenv("CPUCUDA_GRAPH_ORDER");
    if (o && *o) {
        enum cc_order ord;
        unsigned long long seed;
        const char *why = parse_order(o, &ord, &seed);
        if (why) {
            fprintf(stderr, "cpucuda: bad CPUCUDA_GRAPH_ORDER '%s': %s; using random:%llu\n", o, why,
                    process_seed);
        } else {
            cc__g.order = ord;
            cc__g.order_seed = seed;
        }
    }
    const char *w = getenv("CPUCUDA_GRAPH_WORKERS");
    if (w && *w) {
        char *end;
        unsigned long v = strtoul(w, &end, 10);
        if (*end || *w < '0' || *w > '9' || v < 1 || v > CC_MAX_WORKERS)
            fprintf(stderr, "cpucuda: bad CPUCUDA_GRAPH_WORKERS '%s': want 1 to %d; using %u\n", w,
                    CC_MAX_WORKERS, DEFAULT_WORKERS);
        else
            cc__g.workers = (unsigned)v;
    }
    char spec[48];
    cc__order_spec(spec, sizeof spec);
    cc__log("graph order %s, %u workers (CPUCUDA_GRAPH_ORDER=%s repeats it)", spec, cc__g.workers, spec);
}

/* Writes the CPUCUDA_STATS report; %p in the path becomes the pid. */
static void write_stats(void)
{
    const char *tmpl = getenv("CPUCUDA_STATS");
    if (!tmpl || !*tmpl) return;
    char path[4096];
    size_t o = 0;
    for (const char *p = tmpl; *p && o < sizeof path - 32; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)getpid());
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cpucuda: cannot write CPUCUDA_STATS '%s': %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "{\"cpucuda_version\":1,\"counters\":{");
    const char *sep = "";
    /* Every counter, zero included: stable keys for whoever reads this. */
    for (int i = 0; i < CC_C__COUNT; i++) {
        unsigned long long v = atomic_load(&counters[i]);
        fprintf(f, "%s\"%s\":%llu", sep, counter_names[i], v);
        sep = ",";
    }
    fprintf(f, "},\"calls\":{");
    sep = "";
    for (int i = 0; i < CC_E__COUNT; i++) {
        unsigned long long v = atomic_load(&calls[i]);
        if (!v) continue;
        fprintf(f, "%s\"%s\":%llu", sep, cc__entry_names[i], v);
        sep = ",";
    }
    /* The order graph launches ran their nodes in, as a spec that repeats
     * it (CPUCUDA_GRAPH_ORDER), and the threads they could use. */
    char spec[48];
    cc__lock();
    cc__order_spec(spec, sizeof spec);
    unsigned workers = cc__g.workers;
    cc__unlock();
    fprintf(f, "},\"graph_order\":\"%s\",\"graph_workers\":%u,", spec, workers);
    cc__digest_json(f);
    fputc(',', f);
    cc__fid_json(f);
    fprintf(f, "}\n");
    fclose(f);
}

/* fork(): the child inherits the driver's state but none of its worker
 * threads, and a worker may hold the global lock at that instant (it takes
 * it between ops), so the child's lock could be held by a thread that does
 * not exist there. The prepare handler takes the lock so that no thread holds
 * it across the fork; the parent then releases it, and the child gets a fresh
 * lock and condition. A child forked after cuInit cannot use the driver (its
 * streams have no workers): like the real driver's forked child, every call
 * then fails with CUDA_ERROR_NOT_INITIALIZED (3), cuInit included, and exit
 * neither waits for queued work nor writes CPUCUDA_STATS (it would overwrite
 * the parent's report). A child forked before cuInit is an ordinary process. */
static bool forked_child;

static void fork_prepare(void) { pthread_mutex_lock(&cc__g.mu); }
static void fork_parent(void) { pthread_mutex_unlock(&cc__g.mu); }
static void fork_child(void)
{
    pthread_mutex_init(&cc__g.mu, NULL);
    pthread_cond_init(&cc__g.progress, NULL);
    if (cc__g.initialized) {
        forked_child = true;
        cc__g.initialized = false;
    }
}

bool cc__forked_child(void) { return forked_child; }

/* A time in microseconds from variable `name` (0 to 10 s; unset or empty:
 * 0; anything else is said on stderr and taken as 0). */
static unsigned env_us(const char *name)
{
    const char *d = getenv(name);
    if (!d || !*d)
        return 0;
    char *end;
    unsigned long v = strtoul(d, &end, 10);
    if (*end || v > 10000000UL) {
        fprintf(stderr, "cpucuda: bad %s '%s'; using 0\n", name, d);
        return 0;
    }
    return (unsigned)v;
}

/* Environment is read once at load: the driver has no other init hook that
 * runs before cuGetProcAddress. */
__attribute__((constructor)) static void cc_load(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    const char *l = getenv("CPUCUDA_LOG");
    log_on = l && *l && strcmp(l, "0") != 0;
    cc__g.delay_us = env_us("CPUCUDA_DELAY_US");
    cc__g.end_capture_us = env_us("CPUCUDA_END_CAPTURE_US");
    const char *nf = getenv("CPUCUDA_NO_FUNC_UPDATE");
    cc__g.no_func_update = nf && *nf && strcmp(nf, "0") != 0;
    const char *fs = getenv("CPUCUDA_FAULTS");
    if (fs && *fs) cpucuda_faults_set(fs);
    order_load();
}

/* Work still queued at exit runs before the counters are written, as a real
 * driver's context teardown lets it finish, so that what a program issued
 * just before exit is counted. The wait is bounded (2 s), so that a worker
 * stuck in a host function cannot hang the exit. */
static void drain_for_exit(void)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 2;
    cc__lock();
    for (cc_ctx *c = cc__g.ctxs; c; c = c->next) {
        if (!c->active)
            continue;
    restart:
        for (cc_stream *st = c->streams; st; st = st->next_in_ctx) {
            if (st->completed >= st->submitted)
                continue;
            cc__stream_ref(st);
            int rc = pthread_cond_timedwait(&cc__g.progress, &cc__g.mu, &deadline);
            cc__stream_unref(st);
            if (rc != 0) {
                cc__unlock();
                return;
            }
            goto restart;
        }
    }
    cc__unlock();
}

__attribute__((destructor)) static void cc_unload(void)
{
    if (forked_child) return;
    drain_for_exit();
    write_stats();
}
