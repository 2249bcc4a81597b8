/* trace_file.c - the trace writer's file: its lock and state, its clock,
 * the framing of records, the header, and opening and closing (docs/trace.md).
 *
 * The file is mapped MAP_SHARED: what is written is in the page cache at
 * once, so a process that crashes leaves every record it completed. A
 * record's tag byte is stored last (release), so a record cut short by a
 * crash has tag 0 and a reader stops there. At exit the file is cut to its
 * length and ends with an END record. */
#include "trace_file.h"
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef TR_TSC
#include <x86intrin.h>
#endif

#include "reprise.h"

#define W rp__tr_W

struct tr_writer rp__tr_W = {.fd = -1};
_Atomic bool rp__tr_live;
_Atomic uint64_t rp__tr_seq;

const unsigned char rp__tr_families[RP_E_COUNT] = {
#define E(name, fam) [RP_E_##name] = RP_TRF_##fam,
    RP_TRACE_ENTRIES(E)
#undef E
};

RP_TLS uint32_t rp__tr_my_tid;
RP_TLS uint64_t rp__tr_my_last;

/* ---- time ------------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC costs a third of clock_gettime here (21 ns against 70 ns on the
 * development VM, docs/BENCHMARKS.md), and a call pays one read. Ticks are
 * turned into ns with a factor measured over 2 ms at open (an invariant TSC
 * is assumed: every x86-64 CPU of the last decade has one). */
uint64_t rp__tr_ticks(void)
{
#ifdef TR_TSC
    return __rdtsc();
#else
    return mono_ns();
#endif
}

uint64_t rp__tr_ns_mul = 1ull << 32; /* ns per tick, 32.32 fixed point */

static void calibrate(void)
{
#ifdef TR_TSC
    uint64_t m0 = mono_ns(), t0 = rp__tr_ticks(), m1, t1;
    do {
        m1 = mono_ns();
        t1 = rp__tr_ticks();
    } while (m1 - m0 < 2000000);
    if (t1 > t0)
        rp__tr_ns_mul = (uint64_t)(((unsigned __int128)(m1 - m0) << 32) / (t1 - t0));
#endif
}

/* ---- the file ------------------------------------------------------------------ */

void rp__tr_stop(const char *why)
{
    if (W.open)
        rp__warn("trace: %s; recording stops here (the trace holds what came before)", why);
    atomic_store(&rp__tr_live, false);
    W.open = false;
}

/* Room for `need` more bytes, growing the file and its mapping. The file is
 * given real blocks (fallocate) before the mapping reaches them: a write
 * into a hole of a full disk would raise SIGBUS in the program. */
void rp__tr_nomem(void)
{
    rp__tr_stop("the recorder ran out of memory");
}

bool rp__tr_reserve(size_t need)
{
    if (W.len + need <= W.cap)
        return true;
    size_t step = W.cap < (64u << 20) ? W.cap : (64u << 20);
    size_t ncap = W.cap + (step > need ? step : need + step);
    int e = posix_fallocate(W.fd, (off_t)W.cap, (off_t)(ncap - W.cap));
    if (e == EOPNOTSUPP || e == EINVAL)
        e = ftruncate(W.fd, (off_t)ncap) == 0 ? 0 : errno;
    if (e) {
        errno = e;
        rp__tr_stop("the trace file cannot grow (%m)");
        return false;
    }
    void *p = mremap(W.map, W.cap, ncap, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
        rp__tr_stop("the trace file's mapping cannot grow");
        return false;
    }
    W.map = p;
    W.cap = ncap;
    return true;
}

/* The sum of n bytes mod 256, eight at a time: the even and the odd bytes
 * of each word added into four 16-bit lanes, so a lane gains at most
 * 2 x 255 = 510 a word and holds 128 words (65,280) but not 129 (a lane
 * overflowing would carry into the next and change the sum): the lanes
 * are folded into the total every 128 words, and at the end.
 * tests/traces/recording.sh records 64 KiB of 0xff (highbytes) to hold
 * this to it. */
static unsigned byte_sum(const unsigned char *p, size_t n)
{
    uint64_t acc = 0, total = 0;
    size_t batch = 0;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        acc += (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
        p += 8;
        n -= 8;
        if (++batch == 128) {
            for (int i = 0; i < 4; i++)
                total += (acc >> (16 * i)) & 0xffff;
            acc = 0;
            batch = 0;
        }
    }
    for (int i = 0; i < 4; i++)
        total += (acc >> (16 * i)) & 0xffff;
    while (n--)
        total += *p++;
    return (unsigned)total;
}

void rp__tr_rec_end(unsigned char tag, unsigned char *end)
{
    unsigned char *rec = W.map + W.len;
    size_t n = (size_t)(end - (rec + 2));
    size_t k = rp_tv_size(n);
    if (k > 1)
        memmove(rec + 1 + k, rec + 2, n);
    rp_tv_put(rec + 1, n);
    /* The check byte: the sum of every byte of the record, tag included
     * (tracefmt.h): any one byte changed shows. */
    rec[1 + k + n] = (unsigned char)(tag + byte_sum(rec + 1, k + n));
    __atomic_store_n(rec, tag, __ATOMIC_RELEASE);
    W.len += 1 + k + n + 1;
    W.records++;
}

/* ---- threads, the header, open and close ---------------------------------------------- */

static void thread_exit(void *unused)
{
    (void)unused;
    if (!atomic_load(&rp__tr_live) || !rp__tr_my_tid)
        return;
    uint64_t t = rp__tr_ticks();
    uint64_t q = atomic_fetch_add_explicit(&rp__tr_seq, 1, memory_order_relaxed);
    rp__tr_lock();
    unsigned char *p = rp__tr_rec_begin(32);
    if (p) {
        p = rp_tv_put(p, rp__tr_my_tid);
        p = rp_tv_put(p, t > rp__tr_my_last ? rp__tr_ns(t - rp__tr_my_last) : 0);
        p = rp_tv_put(p, rp_tv_zigzag((int64_t)(q - W.last_seq - 1)));
        W.last_seq = q;
        rp__tr_rec_end(RP_TR_THREAD_EXIT, p);
    }
    rp__tr_unlock();
}

static void *sym(const char *name)
{
    return rp__driver_handle ? rp__dlsym_real()(rp__driver_handle, name) : NULL;
}

static unsigned char *hdr_field(unsigned char *p, unsigned key, const void *v, size_t n)
{
    *p++ = (unsigned char)key;
    p = rp_tv_put(p, n);
    memcpy(p, v, n);
    return p + n;
}

static unsigned char *hdr_varint(unsigned char *p, unsigned key, uint64_t v)
{
    unsigned char b[10];
    return hdr_field(p, key, b, (size_t)(rp_tv_put(b, v) - b));
}

/* The header: what the trace was recorded from (docs/trace.md, "Header"). */
static bool write_header(void)
{
    static char cmd[65536];
    size_t ncmd = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k;
        while (ncmd < sizeof cmd && (k = read(fd, cmd + ncmd, sizeof cmd - ncmd)) > 0)
            ncmd += (size_t)k;
        close(fd);
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    int drv = 0;
    if (W.driver_version)
        W.driver_version(&drv);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    const char *dpath = rp__option(RP_OPTION_DRIVER).path;
    size_t need = RP_TRACE_PREAMBLE + ncmd + strlen(host) + strlen(dpath) + 256;
    if (!rp__tr_reserve(need))
        return false;
    unsigned char *h = W.map, *p = h + RP_TRACE_PREAMBLE;
    p = hdr_field(p, RP_TK_REPRISE_VERSION, REPRISE_VERSION, strlen(REPRISE_VERSION));
    p = hdr_field(p, RP_TK_COMMAND, cmd, ncmd);
    p = hdr_varint(p, RP_TK_PID, (uint64_t)getpid());
    p = hdr_field(p, RP_TK_HOST, host, strlen(host));
    p = hdr_varint(p, RP_TK_START_NS, (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    p = hdr_varint(p, RP_TK_DRIVER_VERSION, (uint64_t)(drv > 0 ? drv : 0));
    p = hdr_varint(p, RP_TK_FLAGS, (W.data ? RP_TF_DATA : 0) | RP_TF_ADDRS);
    p = hdr_field(p, RP_TK_DRIVER_PATH, dpath, strlen(dpath));
    uint32_t version = RP_TRACE_VERSION, hlen = (uint32_t)(p + 1 - (h + RP_TRACE_PREAMBLE));
    memcpy(h, RP_TRACE_MAGIC, RP_TRACE_MAGIC_LEN);
    for (int i = 0; i < 4; i++) {
        h[8 + i] = (unsigned char)(version >> (8 * i));
        h[12 + i] = (unsigned char)(hlen >> (8 * i));
    }
    unsigned sum = 0; /* the header's check byte, over everything before it */
    for (unsigned char *q = h; q < p; q++)
        sum += *q;
    *p++ = (unsigned char)sum;
    W.len = (size_t)(p - h);
    return true;
}

bool rp__tr_file_open(const char *path, const struct rp__driver *real)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        rp__warn("cannot create the trace %s: %m; not recording", path);
        return false;
    }
    /* Another process of this command may be writing the same file (a child
     * that exec'd another CUDA program, with no %p in the name): its trace
     * is left alone. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rp__warn("the trace %s is being written by another process (use %%p in REPRISE_TRACE); "
                 "not recording",
                 path);
        close(fd);
        return false;
    }
    size_t cap = 1u << 20;
    if (ftruncate(fd, 0) != 0 || posix_fallocate(fd, 0, (off_t)cap) != 0) {
        if (ftruncate(fd, (off_t)cap) != 0) {
            rp__warn("cannot size the trace %s: %m; not recording", path);
            close(fd);
            return false;
        }
    }
    void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        rp__warn("cannot map the trace %s: %m; not recording", path);
        close(fd);
        return false;
    }
    W.fd = fd;
    W.map = m;
    W.cap = cap;
    W.real = real;
    W.data = rp__option(RP_OPTION_TRACE_DATA).b;
    W.stream_priority = (CUresult (CUDAAPI *)(CUstream, int *))sym("cuStreamGetPriority");
    W.ctx_device = (CUresult (CUDAAPI *)(CUdevice *))sym("cuCtxGetDevice");
    W.ctx_device_v2 = (CUresult (CUDAAPI *)(CUdevice *, CUcontext))sym("cuCtxGetDevice_v2");
    W.addr_range = (CUresult (CUDAAPI *)(CUdeviceptr *, size_t *, CUdeviceptr))sym("cuMemGetAddressRange_v2");
    W.driver_version = (CUresult (CUDAAPI *)(int *))sym("cuDriverGetVersion");
    W.device_count = (CUresult (CUDAAPI *)(int *))sym("cuDeviceGetCount");
    W.device_get = (CUresult (CUDAAPI *)(CUdevice *, int))sym("cuDeviceGet");
    W.device_name = (CUresult (CUDAAPI *)(char *, int, CUdevice))sym("cuDeviceGetName");
    W.device_attr = (CUresult (CUDAAPI *)(int *, CUdevice_attribute, CUdevice))sym("cuDeviceGetAttribute");
    W.device_mem = (CUresult (CUDAAPI *)(size_t *, CUdevice))sym("cuDeviceTotalMem_v2");
    W.func_module = (CUresult (CUDAAPI *)(CUmodule *, CUfunction))sym("cuFuncGetModule");
    W.primary_state = (CUresult (CUDAAPI *)(CUdevice, unsigned int *, int *))sym("cuDevicePrimaryCtxGetState");
    W.open = true;
    if (!write_header()) {
        munmap(W.map, W.cap);
        close(fd);
        W.open = false;
        return false;
    }
    if (pthread_key_create(&W.exit_key, thread_exit) != 0) {
        rp__warn("trace: no thread key; thread exits are not recorded");
    }
    calibrate();
    W.t0 = rp__tr_ticks();
    W.last_seq = (uint64_t)-1; /* the first call is number 0 */
    return true;
}

void rp__tr_file_close(uint64_t t)
{
    if (W.open) {
        unsigned char *p = rp__tr_rec_begin(40);
        if (p) {
            p = rp_tv_put(p, W.records + 1);
            p = rp_tv_put(p, W.calls);
            p = rp_tv_put(p, rp__tr_ns(t - W.t0));
            rp__tr_rec_end(RP_TR_END, p);
        }
        W.open = false;
    }
    if (W.map) {
        munmap(W.map, W.cap);
        W.map = NULL;
        if (ftruncate(W.fd, (off_t)W.len) != 0)
            rp__warn("trace: cannot cut the file to its length: %m");
        close(W.fd);
        W.fd = -1;
    }
}
