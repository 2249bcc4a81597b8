/* play_threads.c - the player's threads: one per recorded thread, the
 * recorded main thread (the first to call) being the process's own.
 * Whoever holds the baton takes the next job: a call of its own it issues;
 * a job of another thread goes to that thread with the baton (one switch,
 * no dispatcher in between). A call that may wait (a synchronize, a
 * synchronous copy, a free, a teardown) hands the baton on before it is
 * issued, so that other threads go on meanwhile as they did in the
 * program. A thread's exit makes that thread return, and the main thread
 * joins it before the next job. With recorded timing each thread waits
 * out the host time the program spent before each call (host_gap),
 * perturbed from a seed with --jitter. */
#include "play.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#define P pl__P

struct player {
    uint32_t tid;
    pthread_t th;
    bool started, done, baton, quit;
    struct pl_job *job; /* handed over with the baton */
    pthread_cond_t cv;
    uint64_t last_end;  /* when its previous call returned here (ns; 0: none yet) */
    uint64_t last_dur;  /* how long that call took in the recording (0 when not recorded) */
    uint64_t rng;       /* --jitter: this thread's draws, from the seed and its id */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* Each player is allocated on its own and never moves: its thread holds a
 * pointer to it while the table of them grows. */
static struct player **players;
static size_t nplayers;
static bool finished;
static uint32_t pending_join; /* a thread that returned on its own exit */

size_t pl_threads(void)
{
    size_t n = 0;
    for (size_t t = 0; t < nplayers; t++)
        n += players[t] && players[t]->tid != 0;
    return n;
}

/* Waits out the host time the program spent before this call (recorded
 * timing): from the end of the thread's previous call, the time between
 * that call's end and this one's start in the recording (dt less the
 * previous call's duration, where the trace has it: syncs and other calls
 * that may wait). The time a thread spent blocked in a call is not waited
 * out again: other threads went on meanwhile, and they do here too. A
 * thread's first call comes its recorded time after the trace's start. */
/* A draw in [0, 1) from the thread's generator (splitmix64). */
static double draw(struct player *p)
{
    uint64_t z = (p->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* --jitter SEED[,SCALE] (docs/trace.md, "Timing as a test"): the gap
 * multiplied by a factor drawn log-uniformly between 1/(1 + SCALE) and
 * 1 + SCALE; and before 2% of the calls, a pause drawn log-uniformly
 * between 0.1 and 5 ms, as a thread preempted by the system would see.
 * Each recorded thread draws from its own generator, seeded by the seed
 * and its id, so that the same seed perturbs the same calls the same way
 * whatever the interleaving. */
static uint64_t jittered(struct player *p, uint64_t gap)
{
    double span = log(1.0 + P.o.jitter_scale);
    double g = (double)gap * exp((2.0 * draw(p) - 1.0) * span);
    if (draw(p) < 0.02)
        g += 1e5 * exp(draw(p) * log(50.0)); /* 0.1 to 5 ms */
    return (uint64_t)g;
}

static void host_gap(struct player *p, uint64_t dt)
{
    if (!P.o.timing)
        return;
    uint64_t gap = dt > p->last_dur ? dt - p->last_dur : 0;
    if (P.o.max_gap_ns && gap > P.o.max_gap_ns)
        gap = P.o.max_gap_ns;
    if (P.o.jitter)
        gap = jittered(p, gap);
    uint64_t target = (p->last_end ? p->last_end : P.t0) + gap, t;
    while ((t = pl_now_ns()) < target) {
        uint64_t left = target - t;
        if (left > 200000) {
            struct timespec ts = {0, (long)(left - 100000)};
            nanosleep(&ts, NULL);
        }
    }
}

static void run_call(struct player *p, const struct pl_job *j)
{
    host_gap(p, j->call.dt_ns);
    pl_issue(&j->call, j->offset);
    p->last_end = pl_now_ns();
    p->last_dur = j->call.dur_ns;
}

static struct player *player_of(uint32_t tid)
{
    if (tid >= nplayers)
        PL_GROW(players, nplayers, tid);
    if (!players[tid]) {
        struct player *p = calloc(1, sizeof *p);
        if (!p || pthread_cond_init(&p->cv, NULL) != 0)
            pl_stop("out of memory for the player of thread %u", tid);
        p->tid = tid;
        p->rng = P.o.jitter_seed ^ ((uint64_t)tid * 0xd1b54a32d192ed03ull);
        players[tid] = p;
    }
    return players[tid];
}

static void *player_main(void *arg);

/* Gives job j and the baton to its thread (mu held). */
static void hand(struct pl_job *j)
{
    struct player *u = player_of(j->tid);
    if (u->done || (j->exit && (u->tid == P.main_tid || !u->started))) {
        /* An exit of a thread that never called, or of the main thread;
         * a call after its thread's exit (not in a trace this recorder
         * writes): the main thread takes it. */
        if (u->done && !j->exit)
            fprintf(stderr, "reprise replay: a call of thread %u after its exit; issued by the main thread\n",
                    u->tid);
        if (j->exit) {
            pl_job_free(j);
            j = NULL;
        }
        u = player_of(P.main_tid);
    }
    if (!u->started) {
        u->started = true;
        if (pthread_create(&u->th, NULL, player_main, u) != 0) {
            if (j) /* the record of the call it was to play */
                P.at = j->offset, P.at_entry = NULL;
            pl_stop("cannot start a thread to play recorded thread %u", u->tid);
        }
    }
    u->job = j;
    u->baton = true;
    pthread_cond_signal(&u->cv);
}

/* The end of the jobs: the main thread finishes (joins the others). */
static void to_main_at_end(struct player *me)
{
    finished = true;
    if (me->tid == P.main_tid)
        return;
    struct player *m = player_of(P.main_tid);
    m->baton = true;
    pthread_cond_signal(&m->cv);
}

/* Runs jobs while `me` holds the baton (mu held; released while a call is
 * issued). Returns once the baton went elsewhere. */
static void baton_run(struct player *me)
{
    for (;;) {
        struct pl_job *j = me->job;
        me->job = NULL;
        if (!j)
            j = pl_next_job();
        if (!j) {
            to_main_at_end(me);
            return;
        }
        if (j->tid != me->tid || (j->exit && me->tid == P.main_tid)) {
            hand(j);
            return;
        }
        if (j->exit) { /* my own: the main thread joins me and goes on */
            pl_job_free(j);
            me->quit = true;
            pending_join = me->tid;
            struct player *m = player_of(P.main_tid);
            m->baton = true;
            pthread_cond_signal(&m->cv);
            return;
        }
        if (pl_may_wait(j->call.family)) {
            /* Other threads go on meanwhile only where the next call began,
             * in the recording, before this one returned: one that began
             * later may depend on what this call did (a thread released
             * once a context was). */
            struct pl_job *n = pl_next_job();
            if (n && n->tid != me->tid && !n->exit &&
                n->start_ns < j->start_ns + j->call.dur_ns) {
                hand(n);
                pthread_mutex_unlock(&mu);
                run_call(me, j);
                pthread_mutex_lock(&mu);
                pl_job_free(j);
                return;
            }
            me->job = n;
            if (!n)
                finished = true;
        }
        pthread_mutex_unlock(&mu);
        run_call(me, j);
        pthread_mutex_lock(&mu);
        pl_job_free(j);
        if (finished && !me->job) {
            to_main_at_end(me);
            return;
        }
    }
}

static void *player_main(void *arg)
{
    struct player *p = arg;
    pthread_mutex_lock(&mu);
    while (!p->quit) {
        while (!p->baton && !p->quit)
            pthread_cond_wait(&p->cv, &mu);
        if (p->baton && !finished) {
            p->baton = false;
            baton_run(p);
        } else if (finished) {
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

void pl_play(void)
{
    pthread_mutex_lock(&mu);
    if (!P.main_tid)
        P.main_tid = 1;
    struct player *m = player_of(P.main_tid);
    m->started = true;
    m->baton = true;
    for (;;) {
        if (!m->baton) {
            if (finished)
                break;
            pthread_cond_wait(&m->cv, &mu);
            continue;
        }
        m->baton = false;
        if (pending_join) {
            struct player *x = players[pending_join];
            pending_join = 0;
            pthread_mutex_unlock(&mu);
            pthread_join(x->th, NULL);
            pthread_mutex_lock(&mu);
            x->done = true;
        }
        if (finished && !m->job)
            break;
        baton_run(m);
    }
    /* Every call is issued; the threads still running (blocked calls of
     * theirs included) finish and are joined. */
    for (size_t t = 0; t < nplayers; t++) {
        struct player *x = players[t];
        if (!x || !x->started || x->done || x == m)
            continue;
        x->quit = true;
        pthread_cond_signal(&x->cv);
        pthread_mutex_unlock(&mu);
        pthread_join(x->th, NULL);
        pthread_mutex_lock(&mu);
        x->done = true;
    }
    pthread_mutex_unlock(&mu);
}
