/* traceinfo.c - `reprise trace info FILE`: what a trace holds, as text: the
 * header, calls by entry, launches by kernel (with the bytes the format
 * spends on them), threads, streams, host memory kinds of copies, the host
 * gaps' distribution and the duration. It reads the trace once with the
 * checked reader (traceread.c): a damaged trace is reported with the byte
 * offset of the damage, after what could be read before it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "traceread.h"

struct count {
    const char *name;
    uint64_t n, bytes, param_bytes, psize;
};

static int by_count(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void grow_counts(struct count **c, size_t *n, size_t want)
{
    if (want < *n)
        return;
    size_t nn = *n ? *n : 64;
    while (nn <= want)
        nn *= 2;
    struct count *t = realloc(*c, nn * sizeof *t);
    if (!t) {
        fprintf(stderr, "reprise trace info: out of memory\n");
        exit(1);
    }
    memset(t + *n, 0, (nn - *n) * sizeof *t);
    *c = t;
    *n = nn;
}

static void print_ns(const char *label, uint64_t ns)
{
    char t[64];
    rt_format_ns(t, sizeof t, ns);
    printf("%s%s", label, t);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: reprise trace info FILE\n"
               "Print what a trace recorded with REPRISE_TRACE (reprise --trace) holds: its\n"
               "header, calls by entry point, launches by kernel, threads, streams, the host\n"
               "gaps between calls and the duration. Exit status 1 if it cannot be read.\n");
}

int rp_trace_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "info") != 0) {
        usage(stderr);
        return 2;
    }
    struct rt_reader r;
    if (rt_open(&r, argv[2]) != 0) {
        fprintf(stderr, "reprise trace info: %s\n", r.err);
        rt_close(&r);
        return 1;
    }
    printf("trace %s: format version %u, recorded by reprise %s\n", argv[2], r.version,
           r.reprise_version ? r.reprise_version : "?");
    printf("  command:");
    for (size_t i = 0; r.command && i < r.command_len; i += strlen(r.command + i) + 1)
        printf(" %s", r.command + i);
    printf("\n  pid %" PRIu64 " on %s, driver %s (version %" PRIu64 ")%s\n", r.pid,
           r.host ? r.host : "?", r.driver_path ? r.driver_path : "?", r.driver_version,
           r.flags & RP_TF_DATA ? ", host-to-device contents recorded" : "");

    struct count *entries = NULL, *kernels = NULL, *threads = NULL, *streams = NULL;
    size_t nent = 0, nker = 0, nthr = 0, nstr = 0;
    uint64_t *gaps = NULL;
    size_t ngaps = 0, capgaps = 0;
    uint64_t *tlast_dur = NULL;
    size_t ntlast = 0;
    uint64_t launches = 0, launch_bytes = 0, launch_param_bytes = 0, launch_psize = 0;
    uint64_t copies_by_kind[7] = {0}; /* pageable, pinned, device, unknown, mapped, registered */
    uint64_t total_bytes_defs = 0;
    uint64_t exits = 0;
    bool ended = false;
    struct rt_rec rec;
    int rc;
    while ((rc = rt_next(&r, &rec)) == 1) {
        uint64_t size = r.pos - rec.offset;
        if (rec.tag == RP_TR_END) {
            ended = true;
            continue;
        }
        if (rec.tag == RP_TR_THREAD_EXIT) {
            exits++;
            continue;
        }
        if (rec.tag != RP_TR_CALL) {
            total_bytes_defs += size;
            continue;
        }
        const struct rt_call *k = &rec.call;
        grow_counts(&entries, &nent, k->entry);
        entries[k->entry].name = r.entries[k->entry].name;
        entries[k->entry].n++;
        entries[k->entry].bytes += size;
        grow_counts(&threads, &nthr, k->tid);
        threads[k->tid].n++;
        if (k->tid >= ntlast) {
            size_t nn = ntlast ? ntlast : 16;
            while (nn <= k->tid)
                nn *= 2;
            uint64_t *t = realloc(tlast_dur, nn * sizeof *t);
            if (!t) {
                fprintf(stderr, "reprise trace info: out of memory\n");
                return 1;
            }
            memset(t + ntlast, 0, (nn - ntlast) * sizeof *t);
            tlast_dur = t, ntlast = nn;
        }
        /* The host gap: from the end of the thread's previous call (its
         * start plus its duration, where recorded) to this call's start. */
        if (threads[k->tid].n > 1) {
            uint64_t gap = k->dt_ns > tlast_dur[k->tid] ? k->dt_ns - tlast_dur[k->tid] : 0;
            if (ngaps == capgaps) {
                capgaps = capgaps ? capgaps * 2 : 1024;
                uint64_t *g = realloc(gaps, capgaps * sizeof *g);
                if (!g) {
                    fprintf(stderr, "reprise trace info: out of memory\n");
                    return 1;
                }
                gaps = g;
            }
            gaps[ngaps++] = gap;
        }
        tlast_dur[k->tid] = k->dur_ns;
        if (k->stream >= RP_TSTREAM_FIRST || k->family == RP_TRF_LAUNCH ||
            k->family == RP_TRF_LAUNCH_EX || k->family == RP_TRF_LAUNCH_COOP) {
            grow_counts(&streams, &nstr, k->stream);
            streams[k->stream].n++;
        }
        switch (k->family) {
        case RP_TRF_LAUNCH:
        case RP_TRF_LAUNCH_COOP:
        case RP_TRF_LAUNCH_EX: {
            launches++;
            launch_bytes += size;
            launch_param_bytes += k->param_bytes;
            grow_counts(&kernels, &nker, k->func);
            const struct rt_func *f = k->func ? &r.funcs[k->func] : NULL;
            kernels[k->func].name = f ? f->name : "(no function)";
            kernels[k->func].n++;
            kernels[k->func].bytes += size;
            kernels[k->func].param_bytes += k->param_bytes;
            kernels[k->func].psize += f ? f->psize : 0;
            launch_psize += f ? f->psize : 0;
            break;
        }
        case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
        case RP_TRF_COPY: case RP_TRF_COPY_ASYNC: {
            const struct rt_addr *h = k->family == RP_TRF_DTOH || k->family == RP_TRF_DTOH_ASYNC
                                          ? &k->dst : &k->src;
            if (h->space == RP_TS_PAGEABLE)
                copies_by_kind[0]++;
            else if (h->space == RP_TS_HOST) {
                unsigned kind = h->id < r.nmems ? r.mems[h->id].kind : RP_TH_PINNED;
                copies_by_kind[kind == RP_TH_MAPPED ? 4 : kind == RP_TH_PINNED ? 1 : 5]++;
            }
            else if (h->space == RP_TS_DEVICE)
                copies_by_kind[2]++;
            else
                copies_by_kind[3]++;
            break;
        }
        case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_PEER: case RP_TRF_PEER_ASYNC:
            copies_by_kind[2]++;
            break;
        default:
            break;
        }
    }
    printf("  devices:");
    for (size_t i = 0; i < r.ndevices; i++)
        printf("%s %u: %s (compute %u.%u, %.1f GiB)", i ? "," : "", r.devices[i].ordinal,
               r.devices[i].name, r.devices[i].major, r.devices[i].minor,
               (double)r.devices[i].bytes / (1024.0 * 1024 * 1024));
    printf("%s\n", r.ndevices ? "" : " none recorded (no cuInit succeeded)");
    printf("  %" PRIu64 " records, %" PRIu64 " calls, %zu bytes (%" PRIu64 " in definitions)\n",
           r.records, r.calls, r.pos <= r.size ? r.pos : r.size, total_bytes_defs);
    print_ns("  duration ", rt_duration(&r));
    printf("%s\n", ended ? "" : " (from the calls: the trace has no END record)");
    if (rc < 0)
        printf("  damaged: what follows is what came before the damage\n");
    else if (!ended)
        printf("  not closed: %s\n", r.notice);

    if (nent)
        qsort(entries, nent, sizeof *entries, by_count);
    printf("\ncalls by entry point:\n");
    for (size_t i = 0; i < nent && entries[i].n; i++)
        printf("  %10" PRIu64 "  %-36s %8.1f bytes each\n", entries[i].n, entries[i].name,
               (double)entries[i].bytes / (double)entries[i].n);

    if (launches) {
        printf("\nlaunches: %" PRIu64 ", %.1f bytes each besides their parameters (%.1f bytes of "
               "parameters recorded for %.1f bytes passed)\n",
               launches, (double)(launch_bytes - launch_param_bytes) / (double)launches,
               (double)launch_param_bytes / (double)launches, (double)launch_psize / (double)launches);
        qsort(kernels, nker, sizeof *kernels, by_count);
        printf("launches by kernel:\n");
        for (size_t i = 0; i < nker && kernels[i].n; i++) {
            char name[128];
            rp__name_short(kernels[i].name ? kernels[i].name : "?", name, sizeof name, 48);
            printf("  %10" PRIu64 "  %-48s %6.1f bytes + %.1f of %.0f parameter bytes\n",
                   kernels[i].n, name,
                   (double)(kernels[i].bytes - kernels[i].param_bytes) / (double)kernels[i].n,
                   (double)kernels[i].param_bytes / (double)kernels[i].n,
                   (double)kernels[i].psize / (double)kernels[i].n);
        }
    }
    uint64_t copies = 0;
    for (int i = 0; i < 7; i++)
        copies += copies_by_kind[i];
    if (copies)
        printf("\ncopies: %" PRIu64 " (host memory pageable %" PRIu64 ", pinned %" PRIu64
               ", mapped %" PRIu64 ", registered %" PRIu64 "; device to device %" PRIu64
               "; memory the trace does not know %" PRIu64 ")\n",
               copies, copies_by_kind[0], copies_by_kind[1], copies_by_kind[4], copies_by_kind[5],
               copies_by_kind[2], copies_by_kind[3]);

    size_t ndef = 0;
    for (size_t t = 1; t < r.nthreads; t++)
        ndef += r.threads[t] != 0;
    printf("\nthreads: %zu", ndef);
    size_t nt = 0;
    for (size_t t = 1; t < nthr; t++)
        nt += threads[t].n != 0;
    printf(" (%zu made calls, %" PRIu64 " exits recorded)\n", nt, exits);
    for (size_t t = 1; t < nthr && t < r.nthreads; t++)
        if (threads[t].n)
            printf("  thread %zu (OS tid %" PRIu64 "): %" PRIu64 " calls\n", t, r.threads[t],
                   threads[t].n);
    printf("streams:\n");
    for (size_t s = 0; s < nstr; s++) {
        if (!streams[s].n)
            continue;
        if (s < RP_TSTREAM_FIRST)
            printf("  %-10s %" PRIu64 " ops\n",
                   s == RP_TSTREAM_NULL ? "0" : s == RP_TSTREAM_LEGACY ? "legacy" : "per-thread",
                   streams[s].n);
        else
            printf("  stream %-3zu context %u, flags %" PRIu64 ", priority %" PRId64 ": %" PRIu64 " ops\n",
                   s, r.streams[s].ctx, r.streams[s].flags, r.streams[s].prio, streams[s].n);
    }
    if (ngaps) {
        qsort(gaps, ngaps, sizeof *gaps, cmp_u64);
        static const uint64_t edges[] = {1000, 10000, 100000, 1000000, 10000000};
        static const char *const labels[] = {"< 1 us", "1-10 us", "10-100 us", "0.1-1 ms",
                                             "1-10 ms", ">= 10 ms"};
        uint64_t hist[6] = {0};
        for (size_t i = 0; i < ngaps; i++) {
            int b = 0;
            while (b < 5 && gaps[i] >= edges[b])
                b++;
            hist[b]++;
        }
        printf("host gaps between a thread's calls (%zu):", ngaps);
        print_ns(" median ", gaps[ngaps / 2]);
        print_ns(", p90 ", gaps[ngaps * 9 / 10]);
        print_ns(", p99 ", gaps[ngaps * 99 / 100]);
        print_ns(", max ", gaps[ngaps - 1]);
        printf("\n");
        for (int b = 0; b < 6; b++)
            if (hist[b])
                printf("  %-10s %10" PRIu64 "  %5.1f%%\n", labels[b], hist[b],
                       100.0 * (double)hist[b] / (double)ngaps);
    }
    free(entries);
    free(kernels);
    free(threads);
    free(streams);
    free(gaps);
    free(tlast_dur);
    if (rc < 0)
        fprintf(stderr, "reprise trace info: %s\n", r.err);
    rt_close(&r);
    return rc < 0 ? 1 : 0;
}
