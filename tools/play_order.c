/* play_order.c - the calls in the order they are replayed. Records come in
 * the order calls returned; with --order entered they are replayed in the
 * order calls began (their `seq`), which is the order the engine met them
 * (a boundary acts as its call begins; the program's end of a capture, which
 * the engine acts on as it returns, is placed then by the recorder). The two differ only where calls of
 * several threads overlapped, so a small buffer of decoded calls, each a
 * deep copy (the reader's parameter state moves on), restores it.
 * Definitions are taken in as they are read, under the player's state lock
 * (the reader's tables and the player's grow with them). */
#include "play.h"

#include <stdlib.h>
#include <string.h>

#define P pl__P

static struct pl_job **heap;
static size_t nheap, capheap;
static uint64_t next_seq;
static bool reader_done;
static int read_rc = 1;
static uint64_t returned; /* the order records come in */
static uint64_t *thread_ns; /* per recorded thread: when its latest call read began */
static size_t nthread_ns;

int pl_order_rc(void)
{
    return read_rc;
}

static void heap_push(struct pl_job *j)
{
    if (nheap == capheap) {
        capheap = capheap ? capheap * 2 : 256;
        struct pl_job **h = realloc(heap, capheap * sizeof *heap);
        if (!h)
            pl_stop("out of memory for %zu calls read ahead", capheap);
        heap = h;
    }
    size_t i = nheap++;
    while (i && heap[(i - 1) / 2]->seq > j->seq) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = j;
}

static struct pl_job *heap_pop(void)
{
    struct pl_job *top = heap[0], *last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheap)
            break;
        if (c + 1 < nheap && heap[c + 1]->seq < heap[c]->seq)
            c++;
        if (heap[c]->seq >= last->seq)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap)
        heap[i] = last;
    return top;
}

/* A job holding its own copy of what call rec points into: the function's
 * parameter bytes, the copy's recorded contents (both in the file), the
 * launch attributes. */
static struct pl_job *copy_call(const struct rt_rec *rec, uint64_t seq)
{
    const struct rt_call *k = &rec->call;
    size_t psize = k->params && k->func < P.r.nfuncs ? P.r.funcs[k->func].psize : 0;
    size_t dbytes = k->data ? (size_t)k->bytes : 0;
    size_t nattrs = k->nattrs < 16 ? k->nattrs : 16;
    size_t abytes = nattrs * sizeof(struct rt_attr);
    struct pl_job *j = calloc(1, sizeof *j);
    unsigned char *own = malloc(psize + dbytes + abytes + 1);
    if (!j || !own)
        pl_stop("out of memory for a call of %zu bytes", psize + dbytes + abytes);
    j->seq = seq;
    j->offset = rec->offset;
    j->tid = k->tid;
    j->call = *k;
    /* A thread's calls come in its own order: their dts add up to when
     * each began. */
    PL_GROW(thread_ns, nthread_ns, k->tid);
    thread_ns[k->tid] += k->dt_ns;
    j->start_ns = thread_ns[k->tid];
    j->own = own;
    if (k->params) {
        memcpy(own, k->params, psize);
        j->call.params = own;
    }
    if (k->data) {
        memcpy(own + psize, k->data, dbytes);
        j->call.data = own + psize;
    }
    if (nattrs) {
        memcpy(own + psize + dbytes, k->attrs, abytes);
        j->call.attrs = (const struct rt_attr *)(own + psize + dbytes);
        j->call.nattrs = (unsigned)nattrs;
    }
    return j;
}

void pl_job_free(struct pl_job *j)
{
    if (j) {
        free(j->own);
        free(j);
    }
}

/* The next job: a gap in the numbers (calls the trace did not keep: after
 * it stopped, say) is skipped once the buffer holds 4096 calls ahead, or
 * at the end. */
static struct pl_job *next_locked(void)
{
    for (;;) {
        if (nheap && (heap[0]->seq <= next_seq || reader_done || nheap > 4096)) {
            struct pl_job *j = heap_pop();
            next_seq = j->seq + 1;
            return j;
        }
        if (reader_done)
            return NULL;
        struct rt_rec rec;
        P.at = P.r.pos;
        P.at_entry = NULL;
        read_rc = rt_next(&P.r, &rec);
        if (read_rc <= 0) {
            reader_done = true;
            continue;
        }
        switch (rec.tag) {
        case RP_TR_ENTRY:
            pl_entry_defined(rec.id);
            break;
        case RP_TR_CALL:
            P.calls++;
            heap_push(copy_call(&rec, P.o.entry_order ? rec.call.seq : returned++));
            break;
        case RP_TR_THREAD_EXIT: {
            struct pl_job *j = calloc(1, sizeof *j);
            if (!j)
                pl_stop("out of memory");
            j->seq = P.o.entry_order ? rec.seq : returned++;
            j->offset = rec.offset;
            j->exit = true;
            j->tid = rec.id;
            heap_push(j);
            break;
        }
        default:
            break;
        }
    }
}

struct pl_job *pl_next_job(void)
{
    pthread_mutex_lock(&pl__state_mu);
    struct pl_job *j = next_locked();
    pthread_mutex_unlock(&pl__state_mu);
    return j;
}
