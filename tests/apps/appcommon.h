/* appcommon.h - the few helpers every test program shares: the error check
 * that prints `error: <call> failed: <code> <name>` and exits 1, argument
 * parsing, the host-side hash, and the `checksum <name> <hex>` line. Header
 * only, so each program stays one C file that runs unchanged on a GPU. */
#ifndef APPCOMMON_H
#define APPCOMMON_H

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "testkernels.h"

/* How a program names a CUresult: cuGetErrorName where it links the driver;
 * runtime_like resolves its own and defines APP_ERROR_NAME before this. */
#ifndef APP_ERROR_NAME
#define APP_ERROR_NAME(r, out) cuGetErrorName((r), (out))
#endif

/* Print the failed call, its code and the code's name, then exit 1. Output
 * goes to stdout, with the checksums, so a run that fails is compared too. */
static inline void app_fail(const char *call, int code)
{
    const char *name = NULL;
#ifndef APP_NO_ERROR_NAME
    if (APP_ERROR_NAME((CUresult)code, &name) != CUDA_SUCCESS || name == NULL)
        name = "?";
#else
    name = "?";
#endif
    if (strncmp(call, "p_cu", 4) == 0)   /* runtime_like's function pointers */
        call += 2;
    printf("error: %s failed: %d %s\n", call, code, name);
    fflush(stdout);
    exit(1);
}

/* CK(cuMemAlloc, (&d, n)): calls the function, which cuda.h may map to a
 * versioned name, and reports the name the program wrote. */
#define CK(fn, args)                                       \
    do {                                                   \
        CUresult ck_r_ = fn args;                          \
        if (ck_r_ != CUDA_SUCCESS)                         \
            app_fail(#fn, (int)ck_r_);                     \
    } while (0)

/* A program-level failure that is not a driver call. */
static inline void app_die(const char *what)
{
    printf("error: %s\n", what);
    fflush(stdout);
    exit(1);
}

/* argv[i] as a positive integer, or dflt when absent. */
static inline long app_arg(int argc, char **argv, int i, long dflt, long lo, long hi)
{
    if (argc <= i)
        return dflt;
    char *end = NULL;
    long v = strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
        printf("error: bad argument %d: %s (want %ld..%ld)\n", i, argv[i], lo, hi);
        exit(2);
    }
    return v;
}

static inline void app_usage(int argc, char **argv, const char *more)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODULE ITERS%s%s\n", argc > 0 ? argv[0] : "app",
                more[0] ? " " : "", more);
        exit(2);
    }
}

/* Fold bytes into a running 64-bit hash (order-dependent). */
static inline uint64_t app_hash(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = tk_mix64(h ^ p[i]);
    return h;
}

static inline uint64_t app_hash_u64(uint64_t h, uint64_t v)
{
    return tk_mix64(h ^ tk_mix64(v));
}

static inline uint32_t app_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline void app_checksum(const char *name, uint64_t v)
{
    printf("checksum %s %016" PRIx64 "\n", name, v);
    fflush(stdout);
}

/* The set-up most programs share, each call checked as CK does: the driver
 * initialised, device 0's primary context retained and made current, and
 * MODULE loaded; app_close undoes it. */
static inline void app_open(const char *module, CUdevice *dev, CUcontext *ctx, CUmodule *mod)
{
    CK(cuInit, (0));
    CK(cuDeviceGet, (dev, 0));
    CK(cuDevicePrimaryCtxRetain, (ctx, *dev));
    CK(cuCtxSetCurrent, (*ctx));
    CK(cuModuleLoad, (mod, module));
}

static inline CUfunction app_function(CUmodule mod, const char *name)
{
    CUfunction f;
    CK(cuModuleGetFunction, (&f, mod, name));
    return f;
}

static inline void app_close(CUdevice dev, CUmodule mod)
{
    CK(cuModuleUnload, (mod));
    CK(cuDevicePrimaryCtxRelease, (dev));
}

/* A phase the threads of a program agree on: one thread waits until another
 * has reached a point (app_phase_set(n) there, app_phase_wait(n) here), so
 * that the order of the calls that matter is the same on every run. */
struct app_phase {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int now;
};

static inline struct app_phase *app_phase(void)
{
    static struct app_phase p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    return &p;
}

static inline void app_phase_set(int n)
{
    struct app_phase *p = app_phase();
    pthread_mutex_lock(&p->mu);
    p->now = n;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static inline void app_phase_wait(int n)
{
    struct app_phase *p = app_phase();
    pthread_mutex_lock(&p->mu);
    while (p->now < n)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* A watchdog for a program that a wrong shim would hang (one that makes the
 * host wait for work only the program's later calls release): after
 * `seconds` it prints `error: hung: <what> ...` on stdout and exits 3 at
 * once, running no exit handlers (a shim's would wait too), so that the
 * test fails in seconds instead of at its timeout. `seconds` is far longer
 * than the program runs. Returns only if the thread could be started. */
struct app_watch {
    const char *what;
    int seconds;
};

static inline struct app_watch *app_watch(void)
{
    static struct app_watch w;
    return &w;
}

static inline void *app_watchdog_main(void *unused)
{
    (void)unused;
    struct app_watch *w = app_watch();
    struct timespec t = {w->seconds, 0};
    while (nanosleep(&t, &t) != 0)
        ;
    printf("error: hung: %s did not finish in %d s\n", w->what, w->seconds);
    fflush(stdout);
    _exit(3);
    return NULL;
}

static inline void app_watchdog(const char *what, int seconds)
{
    pthread_t t;
    app_watch()->what = what;
    app_watch()->seconds = seconds;
    if (pthread_create(&t, NULL, app_watchdog_main, NULL) != 0)
        app_die("pthread_create failed (watchdog)");
    pthread_detach(t);
}

/* A fixed-seed generator (splitmix64): the same sequence on every run, so
 * that what a program draws from it (which buffers, which host gaps) is the
 * same with and without a shim. */
static inline uint64_t app_rand(uint64_t *state)
{
    *state += 0x9E3779B97F4A7C15ull;
    return tk_mix64(*state);
}

/* A number drawn uniformly (up to the modulo's bias) from [lo, hi]. */
static inline long app_rand_in(uint64_t *state, long lo, long hi)
{
    return lo + (long)(app_rand(state) % (uint64_t)(hi - lo + 1));
}

/* Host time without a driver call: spins on the monotonic clock for `us`
 * microseconds, as an interpreter's or a framework's host code between two
 * launches does. What the device does meanwhile never changes a result; only
 * a shim that waits for the host's next call would notice the time. */
static inline void app_spin_us(long us)
{
    struct timespec t0, t;
    if (us <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000L < us);
}

/* Blocks for n elements at TK_BLOCK threads, capped (kernels grid-stride). */
static inline unsigned int app_blocks(long n)
{
    long b = (n + (long)TK_BLOCK - 1) / (long)TK_BLOCK;
    if (b < 1)
        b = 1;
    if (b > 64)
        b = 64;
    return (unsigned int)b;
}

#endif
