/* events.c - what the engine knows of the program's events: the flags and
 * context each was created with (only an event created through the engine,
 * without timing and not for other processes, is recorded and waited on
 * inside a sequence: hooks.c), and which trace last recorded or waited on
 * it, so that a stream waiting on it joins that trace and anything else
 * that names it resolves that trace first. One table for the process,
 * under its own lock (events are process-wide handles; the trace it names
 * is checked under its context's lock). Open addressing; a destroyed
 * event's slot is a tombstone until the table is rebuilt. The table lives
 * in the engine instance (rp__eng), so that a test's reset empties it. */
#include "rec.h"

#include <stdlib.h>
#include <string.h>

#define EV_SLOTS RP_EV_SLOTS /* a power of two; at most 3/4 of it in use */
#define TOMB ((CUevent)(uintptr_t)1)

/* The table is the engine instance's (engine.h). */
typedef struct rp_ev_slot ev_slot;
#define slots (rp__eng.ev_slots)
#define used (rp__eng.ev_used)
#define ev_lock (rp__eng.ev_lock)

static size_t hash(CUevent e)
{
    uint64_t h = rp__hash_u64(RP_HASH_SEED, (uint64_t)(uintptr_t)e);
    return (size_t)h & (EV_SLOTS - 1);
}

/* The slot of `e`, or NULL. */
static ev_slot *find(CUevent e)
{
    for (size_t i = hash(e), n = 0; n < EV_SLOTS; i = (i + 1) & (EV_SLOTS - 1), n++) {
        if (slots[i].e == e)
            return &slots[i];
        if (!slots[i].e)
            return NULL;
    }
    return NULL;
}

/* Rebuild the table without its tombstones. */
static void rebuild(void)
{
    static ev_slot old[EV_SLOTS];
    memcpy(old, slots, sizeof slots);
    memset(slots, 0, sizeof slots);
    used = 0;
    for (size_t k = 0; k < EV_SLOTS; k++) {
        if (!old[k].e || old[k].e == TOMB)
            continue;
        size_t i = hash(old[k].e);
        while (slots[i].e)
            i = (i + 1) & (EV_SLOTS - 1);
        slots[i] = old[k];
        used++;
    }
}

void rp__ev_created(CUevent e, unsigned int flags, CUcontext ctx)
{
    if (!e || e == TOMB)
        return;
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    if (!s) {
        if (used >= EV_SLOTS / 4 * 3)
            rebuild();
        if (used < EV_SLOTS / 4 * 3) {
            size_t i = hash(e);
            while (slots[i].e && slots[i].e != TOMB)
                i = (i + 1) & (EV_SLOTS - 1);
            if (!slots[i].e)
                used++;
            s = &slots[i];
        } else {
            /* Full of live events: this one stays unknown, so every
             * record and wait of it is a boundary (as for any event the
             * engine did not see created). */
            rp__bound_hit(NULL, RP_BOUND_EVENTS);
        }
    }
    if (s) {
        memset(s, 0, sizeof *s);
        s->e = e;
        s->info.flags = flags;
        s->info.ctx = ctx;
        if (++rp__eng.ev_serial == 0)
            rp__eng.ev_serial = 1;
        s->info.serial = rp__eng.ev_serial;
    }
    pthread_mutex_unlock(&ev_lock);
}

void rp__ev_destroyed(CUevent e)
{
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    if (s) {
        memset(s, 0, sizeof *s);
        s->e = TOMB;
    }
    pthread_mutex_unlock(&ev_lock);
}

int rp__ev_get(CUevent e, rp_evinfo *out)
{
    if (!e || e == TOMB)
        return 0;
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    if (s)
        *out = s->info;
    pthread_mutex_unlock(&ev_lock);
    return s != NULL;
}

unsigned int rp__ev_polled(CUevent e)
{
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    unsigned int n = s ? s->info.held_polls++ : 0;
    pthread_mutex_unlock(&ev_lock);
    return n;
}

int rp__ev_touched(CUevent e, rp_ctxstate *cs, rp_stream *home)
{
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    int ok = !s || !s->info.live_cs || s->info.live_cs == cs;
    if (s && ok) {
        s->info.live_cs = cs;
        s->info.live_home = home;
        s->info.live_epoch = home->trace.epoch;
        s->info.held_polls = 0;
    }
    pthread_mutex_unlock(&ev_lock);
    return ok;
}

void rp__ev_settled(CUevent e, const rp_evinfo *i)
{
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    if (s && s->info.live_cs == i->live_cs && s->info.live_home == i->live_home &&
        s->info.live_epoch == i->live_epoch) {
        s->info.live_cs = NULL;
        s->info.live_home = NULL;
        s->info.live_epoch = 0;
    }
    pthread_mutex_unlock(&ev_lock);
}

void rp__ev_rerecorded(CUevent e, uint64_t gen, CUstream home)
{
    pthread_mutex_lock(&ev_lock);
    ev_slot *s = find(e);
    if (s) {
        s->info.after_gen = gen;
        s->info.after_home = home;
    }
    pthread_mutex_unlock(&ev_lock);
}

void rp__ev_forget_all(void)
{
    pthread_mutex_lock(&ev_lock);
    memset(slots, 0, sizeof slots);
    used = 0;
    rp__eng.ev_serial = 0;
    pthread_mutex_unlock(&ev_lock);
}
