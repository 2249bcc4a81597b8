/* work.c - what one unit of work does when it runs, shared by queued ops and
 * graph nodes: run a kernel block by block, copy, set, call a host function,
 * record an event, free stream-ordered memory, run a graph (graph.c: its
 * nodes may run on helper threads of the stream's worker, two at a time). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void run_kernel(cc_work *w)
{
    const cpuk_kernel *k = w->u.k.f->k;
    cpuk_block b = {.gridDim = w->u.k.grid, .blockDim = w->u.k.block,
                    .shared_bytes = w->u.k.shmem};
    /* Shared memory is undefined at block entry on a GPU: fill it with a
     * pattern so a kernel that reads before writing gets garbage. */
    unsigned char *sh = w->u.k.shmem ? malloc(w->u.k.shmem) : NULL;
    if (w->u.k.shmem && !sh) abort(); /* cannot report an error from a worker */
    b.shared = sh;
    for (unsigned z = 0; z < b.gridDim.z; z++)
        for (unsigned y = 0; y < b.gridDim.y; y++)
            for (unsigned x = 0; x < b.gridDim.x; x++) {
                b.blockIdx = (cpuk_dim3){x, y, z};
                if (sh) memset(sh, 0xA5, w->u.k.shmem);
                k->fn(&b, w->u.k.argv);
            }
    free(sh);
}

static void run_memset(cc_work *w)
{
    for (size_t row = 0; row < w->u.m.h; row++) {
        unsigned char *p = (unsigned char *)(uintptr_t)w->u.m.dst + row * w->u.m.pitch;
        switch (w->u.m.esz) {
        case 1: memset(p, (int)(w->u.m.value & 0xff), w->u.m.w); break;
        case 2: for (size_t i = 0; i < w->u.m.w; i++) ((uint16_t *)p)[i] = (uint16_t)w->u.m.value; break;
        default: for (size_t i = 0; i < w->u.m.w; i++) ((uint32_t *)p)[i] = w->u.m.value; break;
        }
    }
}

/* Row by row for a 2-D copy; staged rows are packed (pitch = width). */
static void run_copy(cc_work *w)
{
    size_t n = w->u.c.n, h = w->u.c.h > 1 ? w->u.c.h : 1;
    if (!n) return;
    for (size_t row = 0; row < h; row++) {
        const unsigned char *src = w->u.c.stage ? w->u.c.stage + row * n
                                                : (const unsigned char *)w->u.c.src + row * w->u.c.spitch;
        memmove((unsigned char *)w->u.c.dst + row * w->u.c.dpitch, src, n);
    }
}

/* Whether the value at the wait's address meets its condition now. */
static bool wait_value_met(const cc_work *w)
{
    uint64_t v = w->u.mo.v, cur;
    if (w->u.mo.is64) {
        cur = __atomic_load_n((const uint64_t *)(uintptr_t)w->u.mo.p, __ATOMIC_ACQUIRE);
    } else {
        cur = __atomic_load_n((const uint32_t *)(uintptr_t)w->u.mo.p, __ATOMIC_ACQUIRE);
        v = (uint32_t)v;
    }
    switch (w->u.mo.cond) {
    case CU_STREAM_WAIT_VALUE_GEQ: /* cyclic: the signed difference */
        return w->u.mo.is64 ? (int64_t)(cur - v) >= 0 : (int32_t)(uint32_t)(cur - v) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return cur == v;
    case CU_STREAM_WAIT_VALUE_AND: return (cur & v) != 0;
    default: /* NOR */ return w->u.mo.is64 ? ~(cur | v) != 0 : (uint32_t)~(cur | v) != 0;
    }
}

/* Holds the worker until the condition holds. The value may be written by
 * another stream (its op's completion broadcasts progress) or by the host
 * (no signal: poll every millisecond). */
static void run_wait_value(const cc_work *w)
{
    while (!wait_value_met(w)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        cc__lock();
        pthread_cond_timedwait(&cc__g.progress, &cc__g.mu, &ts);
        cc__unlock();
    }
}

void cc__work_run(cc_work *w, bool in_graph)
{
    switch (w->kind) {
    case CC_W_KERNEL:
        run_kernel(w);
        cc__count(in_graph ? CC_C_NODE_KERNEL : CC_C_LAUNCH_EAGER);
        if (w->u.k.attrs & (1u << CU_LAUNCH_ATTRIBUTE_COOPERATIVE)) cc__count(CC_C_KERNEL_COOPERATIVE);
        if (w->u.k.attrs & (1u << CU_LAUNCH_ATTRIBUTE_PRIORITY)) cc__count(CC_C_KERNEL_PRIORITY);
        if (w->u.k.attrs & (1u << CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN)) cc__count(CC_C_KERNEL_SYNC_DOMAIN);
        if (w->u.k.attrs & (1u << CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)) cc__count(CC_C_KERNEL_CLUSTER);
        if (w->u.k.attrs & (1u << CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)) cc__count(CC_C_KERNEL_PSS);
        break;
    case CC_W_COPY:
        run_copy(w);
        cc__count(in_graph ? CC_C_NODE_MEMCPY : CC_C_COPY_EAGER);
        break;
    case CC_W_MEMSET:
        run_memset(w);
        cc__count(in_graph ? CC_C_NODE_MEMSET : CC_C_MEMSET_EAGER);
        break;
    case CC_W_HOST:
        w->u.h.fn(w->u.h.data);
        cc__count(in_graph ? CC_C_NODE_HOST : CC_C_HOSTFUNC_EAGER);
        break;
    case CC_W_EVENT_RECORD: {
        unsigned long long t = cc__now_ns();
        cc__lock();
        cc_event *e = w->u.e.ev;
        if (in_graph || e->gen == w->u.e.gen) e->time_ns = t;
        if (!in_graph && w->u.e.gen > e->done_gen) e->done_gen = w->u.e.gen;
        cc__unlock();
        if (in_graph) cc__count(CC_C_NODE_EVENT_RECORD);
        break;
    }
    case CC_W_WAIT_EVENT:
        if (in_graph) {
            /* A graph's external wait: for the record the event had when
             * the graph was launched (graph.c, graph_launch), as a stream
             * wait waits for the one it had when it was issued; a later
             * record of the event is not waited for. */
            cc__lock();
            if (w->u.e.rs) cc__wait(w->u.e.rs, w->u.e.rseq);
            cc__unlock();
            cc__count(CC_C_NODE_WAIT_EVENT);
        }
        break;
    case CC_W_MEM_ALLOC:
        if (in_graph) cc__count(CC_C_NODE_MEM_ALLOC);
        break;
    case CC_W_MEM_FREE:
        if (in_graph) {
            cc__count(CC_C_NODE_MEM_FREE);
        } else {
            cc__lock();
            cc_alloc *a = cc__mem_find((uintptr_t)w->u.a.p);
            if (a && a->kind == CC_M_DEVICE && a->freeing) cc__mem_release(a->base);
            cc__unlock();
        }
        break;
    case CC_W_EMPTY:
        if (in_graph) cc__count(CC_C_NODE_EMPTY);
        break;
    case CC_W_GRAPH:
        cc__plan_run(w);
        cc__count(CC_C_LAUNCH_GRAPH);
        break;
    case CC_W_NOP:
        break;
    case CC_W_WRITE_VALUE:
        if (w->u.mo.is64) __atomic_store_n((uint64_t *)(uintptr_t)w->u.mo.p, w->u.mo.v, __ATOMIC_SEQ_CST);
        else __atomic_store_n((uint32_t *)(uintptr_t)w->u.mo.p, (uint32_t)w->u.mo.v, __ATOMIC_SEQ_CST);
        break;
    case CC_W_WAIT_VALUE:
        run_wait_value(w);
        break;
    }
    cc__digest_work(w); /* the oracle (digest.c): kernels, copies, memsets */
}

void cc__work_free(cc_work *w)
{
    switch (w->kind) {
    case CC_W_KERNEL:
        free(w->u.k.args);
        free(w->u.k.argv);
        break;
    case CC_W_COPY:
        free(w->u.c.stage);
        break;
    case CC_W_EVENT_RECORD:
    case CC_W_WAIT_EVENT:
        if (w->u.e.ev) cc__event_unref(w->u.e.ev);
        if (w->u.e.rs) cc__stream_unref(w->u.e.rs);
        break;
    case CC_W_GRAPH:
        if (w->u.g.p) cc__plan_unref(w->u.g.p);
        break;
    default:
        break;
    }
    memset(w, 0, sizeof *w);
}

CUresult cc__work_copy(cc_work *dst, const cc_work *src)
{
    *dst = *src;
    switch (src->kind) {
    case CC_W_KERNEL: {
        const cpuk_kernel *k = src->u.k.f->k;
        dst->u.k.args = NULL;
        dst->u.k.argv = NULL;
        if (src->u.k.argsz) {
            dst->u.k.args = malloc(src->u.k.argsz);
            if (!dst->u.k.args) goto oom;
            memcpy(dst->u.k.args, src->u.k.args, src->u.k.argsz);
        }
        if (k->nparams) {
            dst->u.k.argv = calloc(k->nparams, sizeof(void *));
            if (!dst->u.k.argv) { free(dst->u.k.args); goto oom; }
            for (unsigned i = 0; i < k->nparams; i++)
                dst->u.k.argv[i] = dst->u.k.args + k->params[i].offset;
        }
        break;
    }
    case CC_W_COPY:
        if (src->u.c.stage) {
            size_t bytes = src->u.c.n * (src->u.c.h > 1 ? src->u.c.h : 1);
            dst->u.c.stage = malloc(bytes);
            if (!dst->u.c.stage) goto oom;
            memcpy(dst->u.c.stage, src->u.c.stage, bytes);
        }
        break;
    case CC_W_EVENT_RECORD:
    case CC_W_WAIT_EVENT:
        if (src->u.e.ev) cc__event_ref(src->u.e.ev);
        if (src->u.e.rs) cc__stream_ref(src->u.e.rs);
        break;
    case CC_W_GRAPH:
        break; /* graphs never hold graph-launch work */
    default:
        break;
    }
    return CUDA_SUCCESS;
oom:
    memset(dst, 0, sizeof *dst);
    return CUDA_ERROR_OUT_OF_MEMORY;
}
