/* idle.c - the idle watch: work held back for a graph must not wait on the
 * host's idle time (docs/engine.md, "Held work and the host's idle time"). */
#include "idle.h"

#include "program.h"
#include "streams.h"

#include <time.h>

/* Work held back because it may still become a graph must not wait on the
 * host's idle time: a program that queues half a step, works on the host
 * for milliseconds without a driver call, then queues the rest would
 * otherwise lose the overlap it has eagerly. A thread, started at the first
 * deferral, looks every REPRISE_IDLE_US while anything is held: a stream
 * still holding work and with no new op since the last look has gone
 * quiet; what it holds of an occurrence is launched as a part of the
 * graph, the rest to come as the rest of it (rp__match_part), or, where
 * that cannot be, its work is resolved (replayed if complete, else issued)
 * and its segment ends there, so that the quiet spot splits the step in two
 * graphs from then on (each launched as soon as its last op comes). */
/* Its state is the engine instance's (rp__eng.idle). */
#define idle_mu (rp__eng.idle.mu)
#define idle_cv (rp__eng.idle.cv)
#define idle_started (rp__eng.idle.started)
#define idle_wanted (rp__eng.idle.wanted)
#define looking (rp__eng.idle.looking)

/* One look at every context; returns 1 while anything is still held. */
static int idle_look(void)
{
    int held = 0;
    rp_ctxstate *cs;
    for (size_t c = 0; (cs = rp__ctx_at(c)); c++) {
        rp__lock(&cs->lock);
        if (rp__engine_exiting() || rp__engine_in_forked_child()) {
            rp__unlock(&cs->lock);
            return 0;
        }
        for (size_t i = 0; i < cs->nstreams; i++) {
            rp_stream *st = &cs->streams[i];
            if (!st->used || st->match.ndef <= st->match.launched) {
                continue; /* nothing held */
            }
            if (st->idle_seen != st->opno || rp__stepping_aside()) {
                st->idle_seen = st->opno;
                held = 1;
                continue;
            }
            /* This thread has no context of its own: the stream's goes
             * current for the resolution and a capture it may lead to. If
             * it cannot, the work stays held (its stream's next call, or
             * the next look, resolves it): issued with no context current,
             * a legacy or per-thread stream's work would be lost. */
            CUcontext popped;
            if (rp__eng.drv->cuCtxPushCurrent_v2(cs->ctx) != CUDA_SUCCESS) {
                held = 1;
                continue;
            }
            cs->counters.idle_flushes++;
            /* What is held of an occurrence goes as a part of its graph,
             * and the match goes on: a step whose quiet spots move keeps
             * its graph. Where that cannot be, what is held is resolved
             * (replayed if complete, else issued) and the quiet spot ends
             * the segment: the pieces are learnt as sequences of their own. */
            if (!rp__handoff_foreign(st) && rp__match_part(st, st->handle)) {
                cs->counters.idle_parts++;
            } else {
                rp__resolve_stream(st);
                rp__seg_end(st);
            }
            rp__eng.drv->cuCtxPopCurrent_v2(&popped);
        }
        rp__unlock(&cs->lock);
    }
    return held;
}

static void *idle_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&idle_mu);
    for (;;) {
        while (!idle_wanted)
            pthread_cond_wait(&idle_cv, &idle_mu);
        idle_wanted = 0;
        pthread_mutex_unlock(&idle_mu);
        int held = 1;
        while (held && !rp__engine_in_forked_child()) {
            struct timespec ts = {0, (long)rp__eng.cfg.idle_us * 1000};
            nanosleep(&ts, NULL);
            held = idle_look();
            if (!held) {
                /* Going to sleep: a deferral from now on wakes the watch.
                 * One begun before it saw `looking` set is seen by one more
                 * look (it deferred under its context's lock, which the
                 * look takes). */
                atomic_store(&looking, 0);
                held = idle_look();
                if (held)
                    atomic_store(&looking, 1);
            }
        }
        pthread_mutex_lock(&idle_mu);
    }
    return NULL;
}

void rp__idle_watch(void)
{
    /* While the watch is looking anyway (a loop that replays steadily), a
     * deferral costs one load here, not a lock and a signal. */
    if (!rp__eng.cfg.idle_us || atomic_load(&looking))
        return;
    pthread_mutex_lock(&idle_mu);
    atomic_store(&looking, 1);
    if (!idle_started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        idle_started = pthread_create(&t, &a, idle_main, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy(&a);
    }
    idle_wanted = 1;
    pthread_cond_signal(&idle_cv);
    pthread_mutex_unlock(&idle_mu);
}

void rp__deferral_began(void)
{
    rp__idle_watch();
    rp__arm_exit_hook();
}
