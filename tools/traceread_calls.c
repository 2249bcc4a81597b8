/* traceread_calls.c - the trace's calls (docs/trace.md, "Calls"): the call
 * header (entry, thread, time, order, result, duration), then the family's
 * payload, every id it names checked against what the trace defined, and
 * launches decoded against the function's last launch, which the reader
 * keeps as the writer does (zeros before the first). Each thread's clock
 * is kept, so that a trace without an END record still says how long it
 * lasted (rt_duration). */
#include "traceread_cur.h"

/* Fails the cursor: `what` id x, which `by` did not define. */
static void undefined(struct cur *c, const char *what, uint64_t x, const char *by)
{
    char m[160];
    snprintf(m, sizeof m, "%s id %llu, which %s defined", what, (unsigned long long)x, by);
    rt__cfail(c, m);
}

static uint32_t stream_ref(struct cur *c)
{
    uint64_t s = rt__v(c, "a stream id");
    if (!c->bad && s >= RP_TSTREAM_FIRST && (s >= c->r->nstreams || !c->r->streams[s].defined))
        undefined(c, "stream", s, "no STREAM record");
    return (uint32_t)s;
}

static uint32_t ctx_ref(struct cur *c)
{
    uint64_t x = rt__v(c, "a context id");
    if (!c->bad && x && (x >= c->r->nctxs || !c->r->ctxs[x].defined))
        undefined(c, "context", x, "nothing");
    return (uint32_t)x;
}

static uint32_t event_ref(struct cur *c)
{
    uint64_t x = rt__v(c, "an event id");
    if (!c->bad && x > c->r->nevents)
        undefined(c, "event", x, "nothing");
    return (uint32_t)x;
}

static uint32_t module_ref(struct cur *c)
{
    uint64_t x = rt__v(c, "a module id");
    if (!c->bad && x && (x >= c->r->nmodules || !c->r->modules[x].defined))
        undefined(c, "module", x, "no MODULE record");
    return (uint32_t)x;
}

/* An executable or graph a call names: 0 (one the recorder did not see
 * made), or one a call made. */
static uint32_t made_ref(struct cur *c, size_t made, const char *what)
{
    uint64_t x = rt__v(c, what);
    if (!c->bad && x > made) {
        char m[160];
        snprintf(m, sizeof m, "%s %llu, which no call made", what, (unsigned long long)x);
        rt__cfail(c, m);
    }
    return (uint32_t)x;
}

/* An executable or graph a call makes: the next id (0: the call failed). */
static uint32_t made_new(struct cur *c, size_t *made, const char *what)
{
    uint64_t x = rt__v(c, what);
    if (x && rt__id_fits(c, x, what) && x > *made)
        *made = x;
    return (uint32_t)x;
}

static struct rt_func *func_ref(struct cur *c, uint32_t *id)
{
    uint64_t x = rt__v(c, "a function id");
    *id = (uint32_t)x;
    if (c->bad || !x)
        return NULL;
    if (x >= c->r->nfuncs || !c->r->funcs[x].defined) {
        undefined(c, "function", x, "no FUNC record");
        return NULL;
    }
    return &c->r->funcs[x];
}

static struct rt_addr addr(struct cur *c, const char *what)
{
    struct rt_addr a = {0, 0, 0};
    uint64_t x = rt__v(c, what);
    if (c->bad)
        return a;
    a.space = (unsigned)(x & 3);
    a.id = (uint32_t)(x >> 2);
    if (a.space != RP_TS_PAGEABLE)
        a.off = rt__v(c, "an address offset");
    if (c->bad)
        return a;
    if (a.space == RP_TS_RAW ? a.id != 0
                             : (a.id >= c->r->nmems || !c->r->mems[a.id].defined ||
                                c->r->mems[a.id].space != a.space)) {
        char m[160];
        snprintf(m, sizeof m, "%s names memory id %u of space %u, which nothing defined", what,
                 a.id, a.space);
        rt__cfail(c, m);
    }
    return a;
}

static void rd_launch(struct cur *c, struct rt_call *k)
{
    struct rt_reader *r = c->r;
    struct rt_func *f = func_ref(c, &k->func);
    k->stream = stream_ref(c);
    unsigned lf = rt__byte(c, "the launch's flags");
    k->form = lf >> RP_TLF_FORM_SHIFT;
    k->coding = (lf >> RP_TLF_PARAMS_SHIFT) & 3;
    if (c->bad)
        return;
    if (k->form > RP_TLFORM_NO_CONFIG) {
        rt__cfail(c, "a launch form above 5");
        return;
    }
    if (k->family == RP_TRF_LAUNCH_EX) {
        unsigned xf = rt__byte(c, "cuLaunchKernelEx's flags");
        if (xf & RP_TLX_ATTRS_SAME) {
            if (!f) {
                rt__cfail(c, "attributes 'as last time' for a launch with no function");
                return;
            }
            /* The list as the function's last launch gave it, checked
             * then (at most 16 attributes of at most 64 bytes). */
            const unsigned char *q = f->attrs, *e = q ? q + f->attrs_len : q;
            uint64_t n = 0, x;
            if (q && rp_tv_get(&q, e, &n) != 0)
                n = 0;
            k->nattrs = n <= 16 ? (unsigned)n : 16;
            for (unsigned i = 0; i < k->nattrs; i++) {
                uint64_t len = 0;
                memset(r->attrs[i].value, 0, 64);
                if (rp_tv_get(&q, e, &x) != 0 || rp_tv_get(&q, e, &len) != 0 || len > 64 ||
                    (uint64_t)(e - q) < len) {
                    k->nattrs = i;
                    break;
                }
                r->attrs[i].id = (uint32_t)x;
                memcpy(r->attrs[i].value, q, len);
                q += len;
            }
        } else {
            const unsigned char *start = c->p;
            uint64_t n = rt__v(c, "the number of launch attributes");
            if (!c->bad && n > 16) {
                rt__cfail(c, "more than 16 launch attributes");
                return;
            }
            k->nattrs = (unsigned)n;
            for (unsigned i = 0; i < n && !c->bad; i++) {
                r->attrs[i].id = (uint32_t)rt__v(c, "a launch attribute's id");
                uint64_t len = rt__v(c, "a launch attribute's size");
                if (!c->bad && len > 64) {
                    rt__cfail(c, "a launch attribute value above 64 bytes");
                    return;
                }
                const unsigned char *b = rt__bytes(c, len, "a launch attribute's value");
                if (b) {
                    memset(r->attrs[i].value, 0, 64);
                    memcpy(r->attrs[i].value, b, len);
                }
            }
            if (c->bad)
                return;
            if (f) {
                size_t len = (size_t)(c->p - start);
                unsigned char *na = rt__alloc(c, f->attrs, f->attrs_len, len);
                if (!na)
                    return;
                memcpy(na, start, len);
                f->attrs = na;
                f->attrs_len = len;
            }
        }
        k->attrs = r->attrs;
    }
    static const unsigned zero[3];
    const unsigned *g = f ? f->grid : zero, *b = f ? f->block : zero;
    if (!f && (lf & 7) != 7) {
        rt__cfail(c, "a launch with no function that does not give its geometry");
        return;
    }
    for (int i = 0; i < 3; i++)
        k->grid[i] = lf & RP_TLF_GRID ? (unsigned)rt__v(c, "the grid") : g[i];
    for (int i = 0; i < 3; i++)
        k->block[i] = lf & RP_TLF_BLOCK ? (unsigned)rt__v(c, "the block") : b[i];
    k->shmem = lf & RP_TLF_SHMEM ? (unsigned)rt__v(c, "the dynamic shared memory")
                                 : (f ? f->shmem : 0);
    if (k->form == RP_TLFORM_EXTRA)
        k->extra_size = rt__v(c, "the extra buffer's size");
    if (c->bad)
        return;
    if (f) {
        memcpy(f->grid, k->grid, sizeof k->grid);
        memcpy(f->block, k->block, sizeof k->block);
        f->shmem = k->shmem;
    }
    if (k->coding == RP_TLP_NONE)
        return;
    if (!f || !f->layout) {
        rt__cfail(c, "parameters for a function whose layout the trace does not have");
        return;
    }
    /* The parameter buffer, zeros until a launch gives it bytes, is made at
     * the function's first launch with parameters. */
    if (!f->params && !(f->params = rt__alloc(c, NULL, 0, f->psize)))
        return;
    size_t n = f->psize, words = (n + 7) / 8;
    const unsigned char *pstart = c->p;
    if (k->coding == RP_TLP_FULL) {
        const unsigned char *q = rt__bytes(c, n, "the parameters");
        if (q)
            memcpy(f->params, q, n);
    } else if (k->coding == RP_TLP_DELTA) {
        const unsigned char *mask = rt__bytes(c, (words + 7) / 8, "the parameters' mask");
        if (!mask)
            return;
        if (words % 8 && (mask[words / 8] >> (words % 8))) {
            rt__cfail(c, "a parameter mask naming words beyond the parameters");
            return;
        }
        for (size_t w = 0; w < words && !c->bad; w++) {
            if (!(mask[w / 8] & (1u << (w % 8))))
                continue;
            size_t o = w * 8, len = n - o < 8 ? n - o : 8;
            const unsigned char *q = rt__bytes(c, len, "a changed parameter word");
            if (q)
                memcpy(f->params + o, q, len);
        }
    }
    k->param_bytes = (uint64_t)(c->p - pstart);
    k->params = f->params;
}

static bool async_copy(unsigned fam)
{
    return fam == RP_TRF_HTOD_ASYNC || fam == RP_TRF_DTOH_ASYNC || fam == RP_TRF_DTOD_ASYNC ||
           fam == RP_TRF_COPY_ASYNC || fam == RP_TRF_PEER_ASYNC;
}

static void rd_copy(struct cur *c, struct rt_call *k)
{
    unsigned cf = rt__byte(c, "the copy's flags");
    k->dst = addr(c, "the destination");
    k->src = addr(c, "the source");
    k->bytes = rt__v(c, "the copy's size");
    if (async_copy(k->family))
        k->stream = stream_ref(c);
    if (k->family == RP_TRF_PEER || k->family == RP_TRF_PEER_ASYNC) {
        k->ctx = ctx_ref(c);
        k->ctx2 = ctx_ref(c);
    }
    if (!c->bad && (cf & RP_TCOPY_DATA))
        k->data = rt__bytes(c, k->bytes, "the copy's data");
}

static void rd_memset(struct cur *c, struct rt_call *k)
{
    unsigned fam = k->family;
    bool two = fam >= RP_TRF_MEMSET2D8 && fam <= RP_TRF_MEMSET2D32_ASYNC;
    bool async = (fam >= RP_TRF_MEMSET8_ASYNC && fam <= RP_TRF_MEMSET32_ASYNC) ||
                 fam >= RP_TRF_MEMSET2D8_ASYNC;
    k->dst = addr(c, "the memset's destination");
    if (two) {
        k->pitch = rt__v(c, "the pitch");
        k->value = rt__v(c, "the value");
        k->width = rt__v(c, "the width");
        k->height = rt__v(c, "the height");
    } else {
        k->value = rt__v(c, "the value");
        k->bytes = rt__v(c, "the count");
    }
    if (async)
        k->stream = stream_ref(c);
}

static void rd_alloc(struct cur *c, struct rt_call *k)
{
    uint64_t id = rt__v(c, "the allocation's memory id");
    k->bytes = rt__v(c, "the allocation's size");
    k->mem = (uint32_t)id;
    unsigned space = RP_TS_DEVICE;
    switch (k->family) {
    case RP_TRF_ALLOC_PITCH_V1:
    case RP_TRF_ALLOC_PITCH:
        k->width = rt__v(c, "the width");
        k->height = rt__v(c, "the height");
        k->elem = rt__v(c, "the element size");
        k->pitch = rt__v(c, "the pitch");
        break;
    case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_MANAGED:
        k->flags = rt__v(c, "the flags");
        break;
    case RP_TRF_ALLOC_ASYNC:
    case RP_TRF_ALLOC_POOL_ASYNC:
        k->stream = stream_ref(c);
        break;
    default:
        break;
    }
    if (k->family == RP_TRF_ALLOC_HOST || k->family == RP_TRF_HOST_ALLOC)
        space = RP_TS_HOST;
    if (id && (c->r->flags & RP_TF_ADDRS))
        k->base = rt__v(c, "the allocation's address");
    if (!c->bad && id) {
        rt__def_mem(c, id, space, k->bytes, 0, k->base);
        if (!c->bad && k->family == RP_TRF_HOST_ALLOC && (k->flags & 2 /* DEVICEMAP */))
            c->r->mems[id].kind = RP_TH_MAPPED;
    }
}

void rt__call(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    struct rt_call *k = &out->call;
    memset(k, 0, sizeof *k);
    unsigned fl = rt__byte(c, "the call's flags");
    uint64_t e = rt__v(c, "the call's entry id");
    if (c->bad)
        return;
    if (fl & ~7u) {
        rt__cfail(c, "call flags above 7");
        return;
    }
    if (e >= r->nentries || !r->entries[e].name) {
        char m[128];
        snprintf(m, sizeof m, "a call of entry id %llu, which no ENTRY record defined",
                 (unsigned long long)e);
        rt__cfail(c, m);
        return;
    }
    k->entry = (uint32_t)e;
    k->family = r->entries[e].family;
    if (fl & RP_TCF_SAME_THREAD) {
        if (!r->last_tid) {
            rt__cfail(c, "'the same thread' on the first call");
            return;
        }
        k->tid = r->last_tid;
    } else {
        uint64_t t = rt__v(c, "the call's thread id");
        if (!c->bad && (t == 0 || t >= r->nthreads || !r->threads[t])) {
            rt__cfail(c, "a thread id no THREAD record defined");
            return;
        }
        k->tid = (uint32_t)t;
    }
    r->last_tid = k->tid;
    k->dt_ns = rt__v(c, "the time since the thread's last call");
    k->seq = r->last_seq + 1 + (uint64_t)rp_tv_unzigzag(rt__v(c, "the call's place in the order of entry"));
    r->last_seq = k->seq;
    if (fl & RP_TCF_RESULT)
        k->result = (int64_t)rt__v(c, "the call's result");
    if (fl & RP_TCF_DURATION)
        k->dur_ns = rt__v(c, "the call's duration");
    if (c->bad)
        return;
    unsigned fam = k->family;
    switch (fam) {
    case RP_TRF_LAUNCH:
    case RP_TRF_LAUNCH_COOP:
    case RP_TRF_LAUNCH_EX:
        rd_launch(c, k);
        break;
    case RP_TRF_HTOD: case RP_TRF_HTOD_ASYNC: case RP_TRF_DTOH: case RP_TRF_DTOH_ASYNC:
    case RP_TRF_DTOD: case RP_TRF_DTOD_ASYNC: case RP_TRF_COPY: case RP_TRF_COPY_ASYNC:
    case RP_TRF_PEER: case RP_TRF_PEER_ASYNC:
        rd_copy(c, k);
        break;
    case RP_TRF_MEMSET8: case RP_TRF_MEMSET16: case RP_TRF_MEMSET32:
    case RP_TRF_MEMSET8_ASYNC: case RP_TRF_MEMSET16_ASYNC: case RP_TRF_MEMSET32_ASYNC:
    case RP_TRF_MEMSET2D8: case RP_TRF_MEMSET2D16: case RP_TRF_MEMSET2D32:
    case RP_TRF_MEMSET2D8_ASYNC: case RP_TRF_MEMSET2D16_ASYNC: case RP_TRF_MEMSET2D32_ASYNC:
        rd_memset(c, k);
        break;
    case RP_TRF_ALLOC_V1: case RP_TRF_ALLOC: case RP_TRF_ALLOC_PITCH_V1: case RP_TRF_ALLOC_PITCH:
    case RP_TRF_ALLOC_MANAGED: case RP_TRF_ALLOC_HOST: case RP_TRF_HOST_ALLOC:
    case RP_TRF_ALLOC_ASYNC: case RP_TRF_ALLOC_POOL_ASYNC:
        rd_alloc(c, k);
        break;
    case RP_TRF_FREE: case RP_TRF_FREE_HOST: case RP_TRF_HOST_UNREGISTER:
        k->dst = addr(c, "the address freed");
        break;
    case RP_TRF_FREE_ASYNC:
        k->dst = addr(c, "the address freed");
        k->stream = stream_ref(c);
        break;
    case RP_TRF_HOST_REGISTER: {
        uint64_t id = rt__v(c, "the registration's memory id");
        k->bytes = rt__v(c, "the registered size");
        k->flags = rt__v(c, "the registration's flags");
        k->mem = (uint32_t)id;
        if (id && (r->flags & RP_TF_ADDRS))
            k->base = rt__v(c, "the registered address");
        if (!c->bad && id) {
            rt__def_mem(c, id, RP_TS_HOST, k->bytes, 0, k->base);
            if (!c->bad)
                c->r->mems[id].kind = k->flags & 2 /* DEVICEMAP */ ? RP_TH_REGISTERED_MAPPED
                                                                  : RP_TH_REGISTERED;
        }
        break;
    }
    case RP_TRF_STREAM_SYNC: case RP_TRF_STREAM_QUERY:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_CTX_SYNC_V2:
        k->ctx = ctx_ref(c);
        break;
    case RP_TRF_EVENT_SYNC: case RP_TRF_EVENT_QUERY: case RP_TRF_EVENT_DESTROY:
        k->event = event_ref(c);
        break;
    case RP_TRF_EVENT_CREATE: {
        uint64_t id = rt__v(c, "the new event's id");
        k->flags = rt__v(c, "the event's flags");
        if (rt__id_fits(c, id, "an event") && id > r->nevents)
            r->nevents = id;
        k->event = (uint32_t)id;
        break;
    }
    case RP_TRF_EVENT_RECORD: case RP_TRF_EVENT_RECORD_FLAGS:
        k->event = event_ref(c);
        k->stream = stream_ref(c);
        if (fam == RP_TRF_EVENT_RECORD_FLAGS)
            k->flags = rt__v(c, "the record's flags");
        break;
    case RP_TRF_WAIT_EVENT:
        k->event = event_ref(c);
        k->stream = stream_ref(c);
        k->flags = rt__v(c, "the wait's flags");
        break;
    case RP_TRF_BEGIN_CAPTURE:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_BEGIN_CAPTURE_MODE:
        k->stream = stream_ref(c);
        k->value = rt__v(c, "the capture mode");
        break;
    case RP_TRF_END_CAPTURE:
        k->stream = stream_ref(c);
        k->graph = made_new(c, &r->ngraphs, "a graph");
        break;
    case RP_TRF_IS_CAPTURING:
        k->stream = stream_ref(c);
        k->answer = rt__v(c, "the capture status");
        break;
    case RP_TRF_GRAPH_LAUNCH: case RP_TRF_GRAPH_UPLOAD:
        k->exec = made_ref(c, r->nexecs, "an executable graph");
        k->stream = stream_ref(c);
        break;
    case RP_TRF_GRAPH_INSTANTIATE:
        k->exec = made_new(c, &r->nexecs, "an executable graph");
        k->graph = made_ref(c, r->ngraphs, "a graph");
        k->flags = rt__v(c, "the instantiation flags");
        break;
    case RP_TRF_GRAPH_EXEC_UPDATE:
        k->exec = made_ref(c, r->nexecs, "an executable graph");
        k->graph = made_ref(c, r->ngraphs, "a graph");
        break;
    case RP_TRF_CTX_CREATE: case RP_TRF_CTX_CREATE_V3: case RP_TRF_CTX_CREATE_V4: {
        uint64_t id = rt__v(c, "the new context's id");
        k->flags = rt__v(c, "the context's flags");
        k->device = rt__v(c, "the context's device");
        k->ctx = (uint32_t)id;
        if (!c->bad && id && RT_NEW_ID(c, r->ctxs, r->nctxs, id, "a context"))
            r->ctxs[id] = (struct rt_ctx){true, (uint32_t)k->device, 0};
        break;
    }
    case RP_TRF_CTX_DESTROY: case RP_TRF_CTX_SET: case RP_TRF_CTX_PUSH: case RP_TRF_CTX_POP:
        k->ctx = ctx_ref(c);
        break;
    case RP_TRF_PRIMARY_RELEASE: case RP_TRF_PRIMARY_RESET:
        k->device = rt__v(c, "the device");
        k->answer = rt__v(c, "whether the primary context stayed active");
        break;
    case RP_TRF_GET_FUNCTION: case RP_TRF_LIBRARY_GET_KERNEL:
        func_ref(c, &k->func);
        k->module = module_ref(c);
        break;
    case RP_TRF_KERNEL_GET_FUNCTION: {
        func_ref(c, &k->func);
        uint32_t kid;
        func_ref(c, &kid);
        k->module = kid;
        break;
    }
    case RP_TRF_MODULE_UNLOAD: case RP_TRF_LIBRARY_UNLOAD:
        k->module = module_ref(c);
        break;
    case RP_TRF_STREAM_DESTROY: case RP_TRF_HOSTFN:
        k->stream = stream_ref(c);
        break;
    case RP_TRF_WAIT_VALUE32: case RP_TRF_WAIT_VALUE64:
    case RP_TRF_WRITE_VALUE32: case RP_TRF_WRITE_VALUE64:
        k->stream = stream_ref(c);
        k->dst = addr(c, "the value's address");
        k->value = rt__v(c, "the value");
        k->flags = rt__v(c, "the flags");
        break;
    default:
        break; /* GENERIC: the header says it all */
    }
    if (c->bad)
        return;
    /* The thread's clock: when this call began, and when it ended. */
    if (k->tid >= r->ntclock) {
        size_t nn = r->ntclock ? r->ntclock : 16;
        while (nn <= k->tid)
            nn *= 2;
        uint64_t *t = rt__alloc(c, r->tclock, r->ntclock * sizeof *t, nn * sizeof *t);
        if (!t)
            return;
        r->tclock = t;
        r->ntclock = nn;
    }
    r->tclock[k->tid] += k->dt_ns;
    if (r->tclock[k->tid] + k->dur_ns > r->span_ns)
        r->span_ns = r->tclock[k->tid] + k->dur_ns;
    r->calls++;
}

