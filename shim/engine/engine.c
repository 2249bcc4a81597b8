/* engine.c - the one engine instance (engine.h): every piece of the
 * engine's state, in one place, so that a test can start from a fresh one
 * (rp__engine_reset, coord/install.c). And the one look-up every layer may
 * make in it: a stream's record, found without making one. */
#include "engine.h"

#include <pthread.h>

struct rp_engine rp__eng = {
    .ctxs_lock = PTHREAD_MUTEX_INITIALIZER,
    .retired_lock = PTHREAD_MUTEX_INITIALIZER,
    .ev_lock = PTHREAD_MUTEX_INITIALIZER,
    .kernels_lock = PTHREAD_MUTEX_INITIALIZER,
    .idle = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER},
};

rp_stream *rp__stream_find(rp_ctxstate *cs, CUstream h)
{
    int perthread = h == CU_STREAM_PER_THREAD;
    pthread_t self = pthread_self();
    for (size_t i = 0; i < cs->nstreams; i++) {
        rp_stream *st = &cs->streams[i];
        if (st->used && st->handle == h && (!perthread || pthread_equal(st->tid, self)))
            return st;
    }
    return NULL;
}
