/* traceread_defs.c - the trace's definitions (docs/trace.md, "Records"):
 * entries, threads, contexts, streams, modules, functions with their
 * parameter layouts, memory, devices and events, each taken into the
 * reader's tables under the id it defines. Ids are given in order, one
 * record each (rt__new_id holds them to it), counts are bounded by the
 * bytes they take, and a function's parameter buffer is made at its first
 * launch with parameters (traceread_calls.c), so no definition makes the
 * reader hold more than its bytes justify. */
#include "traceread_cur.h"

static bool family_known(uint64_t f)
{
    switch (f) {
#define F(name, num, arity) case num:
        RP_TRACE_FAMILIES(F)
#undef F
        return true;
    default:
        return false;
    }
}

static void free_str(struct rt_reader *r, char *s)
{
    if (s)
        rt__free(r, s, strlen(s) + 1);
}

void rt__def_mem(struct cur *c, uint64_t id, unsigned space, uint64_t bytes, uint32_t ctx,
                 uint64_t base)
{
    if (!id || !RT_NEW_ID(c, c->r->mems, c->r->nmems, id, "a memory"))
        return;
    c->r->mems[id] = (struct rt_mem){true, space, bytes, ctx, RP_TH_PINNED, base};
}

static void rd_entry(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    uint64_t id = rt__v(c, "an entry id");
    uint64_t fam = rt__v(c, "the entry's family");
    char *name = rt__str(c, "the entry's name");
    if (c->bad) {
        free_str(r, name);
        return;
    }
    if (!family_known(fam)) {
        char m[200], shown[65];
        /* The name as one line of text, whatever bytes the trace holds. */
        size_t i = 0;
        for (; name[i] && i < sizeof shown - 1; i++)
            shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
        shown[i] = 0;
        snprintf(m, sizeof m, "entry '%s' of family %llu, which this reprise does not know",
                 shown, (unsigned long long)fam);
        free_str(r, name);
        rt__cfail(c, m);
        return;
    }
    if (!RT_NEW_ID(c, r->entries, r->nentries, id, "an entry")) {
        free_str(r, name);
        return;
    }
    free_str(r, r->entries[id].name);
    r->entries[id].name = name;
    r->entries[id].family = (unsigned)fam;
    out->id = (uint32_t)id;
}

static void rd_func(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    uint64_t id = rt__v(c, "a function id");
    uint64_t mod = rt__v(c, "the function's module");
    uint64_t kind = rt__v(c, "the function's kind");
    char *name = rt__str(c, "the function's name");
    uint64_t np = rt__v(c, "the number of parameters");
    /* Each parameter takes at least two bytes (its offset and size). */
    if (!c->bad && (id == 0 || kind > 6 || np > RT_MAX_PARAMS || np > rt__left(c) / 2))
        rt__cfail(c, id == 0        ? "function id 0"
                     : kind > 6     ? "a function kind above 6"
                     : np > RT_MAX_PARAMS ? "more than 4096 parameters"
                                    : "more parameters than the record has bytes for");
    if (c->bad || !RT_NEW_ID(c, r->funcs, r->nfuncs, id, "a function")) {
        free_str(r, name);
        return;
    }
    struct rt_func *f = &r->funcs[id];
    if (f->defined) {
        free_str(r, name);
        rt__cfail(c, "a function id defined twice");
        return;
    }
    f->name = name;
    f->module = (uint32_t)mod;
    f->kind = (unsigned)(kind & 3);
    f->layout = !(kind & 4);
    f->nparams = (uint32_t)np;
    f->psize = 0;
    f->off = rt__alloc(c, NULL, 0, (np ? np : 1) * sizeof *f->off);
    f->size = rt__alloc(c, NULL, 0, (np ? np : 1) * sizeof *f->size);
    if (c->bad)
        return;
    for (uint64_t i = 0; i < np && !c->bad; i++) {
        uint64_t o = rt__v(c, "a parameter's offset"), s = rt__v(c, "a parameter's size");
        if (!c->bad && (o > RT_MAX_PSIZE || s > RT_MAX_PSIZE || o + s > RT_MAX_PSIZE))
            rt__cfail(c, "a parameter beyond 128 KiB");
        f->off[i] = (uint32_t)o;
        f->size[i] = (uint32_t)s;
        if (o + s > f->psize)
            f->psize = o + s;
    }
    if (c->bad)
        return;
    f->defined = true;
    out->id = (uint32_t)id;
}

void rt__def(struct cur *c, struct rt_rec *out)
{
    struct rt_reader *r = c->r;
    switch (out->tag) {
    case RP_TR_ENTRY:
        rd_entry(c, out);
        break;
    case RP_TR_THREAD: {
        uint64_t id = rt__v(c, "a thread id"), os = rt__v(c, "the OS thread id");
        if (!c->bad && id == 0)
            rt__cfail(c, "thread id 0");
        if (!c->bad && RT_NEW_ID(c, r->threads, r->nthreads, id, "a thread"))
            r->threads[id] = os ? os : 1;
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_CTX: {
        uint64_t id = rt__v(c, "a context id"), dev = rt__v(c, "the context's device");
        uint64_t fl = rt__v(c, "the context's flags");
        if (!c->bad && id == 0)
            rt__cfail(c, "context id 0");
        if (!c->bad && RT_NEW_ID(c, r->ctxs, r->nctxs, id, "a context"))
            r->ctxs[id] = (struct rt_ctx){true, (uint32_t)dev, fl};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_STREAM: {
        uint64_t id = rt__v(c, "a stream id");
        uint64_t ctx = rt__v(c, "a context id");
        uint64_t fl = rt__v(c, "the stream's flags"), pr = rt__v(c, "the stream's priority");
        if (!c->bad && ctx && (ctx >= r->nctxs || !r->ctxs[ctx].defined))
            rt__cfail(c, "a stream of a context nothing defined");
        if (!c->bad && id < RP_TSTREAM_FIRST)
            rt__cfail(c, "a STREAM record for a reserved stream id (0, 1 or 2)");
        if (!c->bad && RT_NEW_ID(c, r->streams, r->nstreams, id, "a stream"))
            r->streams[id] = (struct rt_stream){true, (uint32_t)ctx, fl, rp_tv_unzigzag(pr)};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_MODULE: {
        uint64_t id = rt__v(c, "a module id"), kind = rt__v(c, "the module's kind");
        if (!c->bad && (id == 0 || kind > 1))
            rt__cfail(c, id == 0 ? "module id 0" : "a module kind above 1");
        if (!c->bad && RT_NEW_ID(c, r->modules, r->nmodules, id, "a module"))
            r->modules[id] = (struct rt_module){true, (unsigned)kind};
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_FUNC:
        rd_func(c, out);
        break;
    case RP_TR_MEM: {
        uint64_t id = rt__v(c, "a memory id"), space = rt__v(c, "the memory's space");
        uint64_t b = rt__v(c, "the memory's size");
        uint64_t ctx = rt__v(c, "a context id");
        uint64_t base = r->flags & RP_TF_ADDRS ? rt__v(c, "the memory's address") : 0;
        if (!c->bad && ctx && (ctx >= r->nctxs || !r->ctxs[ctx].defined))
            rt__cfail(c, "memory of a context nothing defined");
        if (!c->bad && (id == 0 || space == RP_TS_RAW || space > RP_TS_PAGEABLE))
            rt__cfail(c, id == 0 ? "memory id 0" : "a memory space other than 1, 2 or 3");
        if (!c->bad)
            rt__def_mem(c, id, (unsigned)space, b, (uint32_t)ctx, base);
        out->id = (uint32_t)id;
        break;
    }
    case RP_TR_DEVICE: {
        uint64_t ord = rt__v(c, "a device ordinal");
        char *name = rt__str(c, "the device's name");
        uint64_t maj = rt__v(c, "the compute capability"), min = rt__v(c, "the compute capability");
        uint64_t mem = rt__v(c, "the device's memory");
        if (!c->bad && r->ndevices < sizeof r->devices / sizeof r->devices[0]) {
            struct rt_device *d = &r->devices[r->ndevices++];
            d->ordinal = (uint32_t)ord;
            snprintf(d->name, sizeof d->name, "%s", name ? name : "");
            d->major = (unsigned)maj, d->minor = (unsigned)min, d->bytes = mem;
        }
        free_str(r, name);
        out->id = (uint32_t)ord;
        break;
    }
    case RP_TR_EVENT: {
        uint64_t id = rt__v(c, "an event id");
        if (!c->bad && id == 0)
            rt__cfail(c, "event id 0");
        if (rt__id_fits(c, id, "an event") && id > r->nevents)
            r->nevents = id;
        out->id = (uint32_t)id;
        break;
    }
    default:
        break;
    }
}
