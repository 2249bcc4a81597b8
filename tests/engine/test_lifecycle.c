/* test_lifecycle.c - one test per rule of the capture lifecycle
 * (DESIGN.md §4, shim/model/lifecycle.c), against a fake driver that keeps count of
 * what is live (captures, graphs, pinned blocks) and of every call made at a
 * moment the real driver would have refused or that would break a capture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"

/* ---- the fake driver ---------------------------------------------------- */

typedef struct fake_graph {
    size_t n;
    CUgraphNodeType types[4];
} fake_graph;

static struct {
    int capturing;               /* a capture is open on the stream */
    int live_graphs;
    int live_blocks;
    int alloc_or_free_while_capturing;
    int end_calls;
    CUresult fail_begin, fail_end;
    int fail_alloc_at;           /* fail the Nth host allocation */
    int allocs;
    int next_graph_has_mem_node;
    pthread_t capture_thread;
    int wrong_thread_refuses;    /* end from another thread: 908, stays open */
    int end_fails_keeping_open;  /* the next N ends fail and leave it open */
    int event_ready;             /* the fake event's record has completed */
    int events_destroyed;
} fk;

static CUresult fk_begin(CUstream s, CUstreamCaptureMode m)
{
    (void)s; (void)m;
    if (fk.fail_begin)
        return fk.fail_begin;
    fk.capturing = 1;
    fk.capture_thread = pthread_self();
    return CUDA_SUCCESS;
}

static CUresult fk_end(CUstream s, CUgraph *g)
{
    (void)s;
    fk.end_calls++;
    *g = NULL;
    if (!fk.capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (fk.wrong_thread_refuses && !pthread_equal(fk.capture_thread, pthread_self()))
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    if (fk.end_fails_keeping_open > 0) {
        fk.end_fails_keeping_open--;
        return CUDA_ERROR_UNKNOWN;
    }
    fk.capturing = 0;
    if (fk.fail_end)
        return fk.fail_end;
    fake_graph *fg = calloc(1, sizeof *fg);
    fg->n = 2;
    fg->types[0] = CU_GRAPH_NODE_TYPE_KERNEL;
    fg->types[1] = fk.next_graph_has_mem_node ? CU_GRAPH_NODE_TYPE_MEM_ALLOC
                                              : CU_GRAPH_NODE_TYPE_MEMCPY;
    fk.live_graphs++;
    *g = (CUgraph)fg;
    return CUDA_SUCCESS;
}

static CUresult fk_graph_destroy(CUgraph g)
{
    free(g);
    fk.live_graphs--;
    return CUDA_SUCCESS;
}

static CUresult fk_get_nodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    fake_graph *fg = (fake_graph *)g;
    if (nodes)
        for (size_t i = 0; i < fg->n && i < *n; i++)
            nodes[i] = (CUgraphNode)&fg->types[i];
    *n = fg->n;
    return CUDA_SUCCESS;
}

static CUresult fk_node_type(CUgraphNode node, CUgraphNodeType *t)
{
    *t = *(CUgraphNodeType *)node;
    return CUDA_SUCCESS;
}

static CUresult fk_host_alloc(void **p, size_t bytes, unsigned int flags)
{
    (void)flags;
    if (fk.capturing)
        fk.alloc_or_free_while_capturing++;
    if (++fk.allocs == fk.fail_alloc_at)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = malloc(bytes);
    fk.live_blocks++;
    return CUDA_SUCCESS;
}

static CUresult fk_host_free(void *p)
{
    if (fk.capturing)
        fk.alloc_or_free_while_capturing++;
    free(p);
    fk.live_blocks--;
    return CUDA_SUCCESS;
}

/* The fake has no way to wait: a call that waited for a launch would have
 * to ask event_query in a loop, and the tests would spin. */
static CUresult fk_event_query(CUevent e)
{
    (void)e;
    return fk.event_ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult fk_event_destroy(CUevent e)
{
    (void)e;
    fk.events_destroyed++;
    return CUDA_SUCCESS;
}

static const rp_lc_driver fake = {
    fk_begin, fk_end, fk_graph_destroy, fk_get_nodes, fk_node_type,
    fk_host_alloc, fk_host_free, fk_event_query, fk_event_destroy,
};

static rp_lc_ctx ctx;
static rp_lc_window win;
static const size_t two_copies[2] = {64, 128};
#define STREAM ((CUstream)0x1234)

static int setup(void **state)
{
    (void)state;
    memset(&fk, 0, sizeof fk);
    rp__lc_ctx_init(&ctx, &fake);
    rp__lc_window_init(&win, &ctx, STREAM);
    return 0;
}

/* Pinned blocks a window or a graph holds: those allocated and not in the
 * pool (released staging waits there for reuse, lifecycle.c). */
static int held(void)
{
    return fk.live_blocks - (int)ctx.npool;
}

static int teardown(void **state)
{
    (void)state;
    rp__lc_abort(&win);
    rp__lc_ctx_fini(&ctx);
    return 0;
}

/* Without this order a stream could record without staging or seal twice. */
static void transitions_follow_nocapture_prepare_capture_nocapture(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(win.state, RP_LC_PREPARE);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    assert_int_equal(win.state, RP_LC_CAPTURE);
    assert_true(fk.capturing);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_SUCCESS);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_false(fk.capturing);
    assert_non_null(s.graph);
    assert_int_equal(s.nstaging, 2);
    rp__lc_sealed_release(&ctx, &s);
}

/* Out of order, a begin without staging or an end of nothing would reach the
 * driver; each must be refused before it does. */
static void any_other_order_is_rejected(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(fk.end_calls, 0);
}

/* A rejected transition that touched state would leave a window half-moved:
 * staging leaked, a counter off by one, a capture the engine thinks closed. */
static void a_rejected_transition_changes_nothing(void **state)
{
    (void)state;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_SUCCESS);
    rp_lc_window before = win;
    rp_lc_ctx ctx_before = ctx;
    int blocks = fk.live_blocks, ends = fk.end_calls;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_ILLEGAL_STATE);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_ERROR_ILLEGAL_STATE);
    assert_memory_equal(&before, &win, sizeof win);
    assert_memory_equal(&ctx_before, &ctx, sizeof ctx);
    assert_int_equal(fk.live_blocks, blocks);
    assert_int_equal(fk.end_calls, ends);
    assert_true(fk.capturing);
}

/* A failed allocation in prepare must not leave half the staging behind. */
static void a_failed_prepare_frees_what_it_allocated_and_changes_nothing(void **state)
{
    (void)state;
    fk.fail_alloc_at = 2;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(held(), 0);
    assert_null(win.staging);
}

/* Abort from Prepare: a window that never opened must give back its staging
 * and leave the stream free for the next capture. */
static void abort_recovers_a_window_that_never_opened_from_prepare(void **state)
{
    (void)state;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(held(), 2);
    rp__lc_abort(&win);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(held(), 0);
    assert_int_equal(fk.end_calls, 0);
    assert_int_equal(ctx.recording, 0);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
}

/* Abort from Capture when the driver refused to open the capture: the state
 * had moved first, so the failure path must move it back and not count the
 * context as recording for ever (which would block all staging). */
static void abort_recovers_a_window_that_never_opened_from_capture(void **state)
{
    (void)state;
    fk.fail_begin = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED),
                     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(ctx.recording, 0);
    assert_int_equal(held(), 0);
    assert_int_equal(fk.end_calls, 0); /* nothing was open to close */
    fk.fail_begin = CUDA_SUCCESS;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
}

/* Abort of an open window must close the driver's capture too, or the
 * private stream stays wedged in capture mode. */
static void abort_of_an_open_window_closes_the_driver_capture(void **state)
{
    (void)state;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    rp__lc_abort(&win);
    assert_false(fk.capturing);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
    assert_int_equal(ctx.recording, 0);
}

/* If the failure or count of an aborted window leaked into the next one, a
 * good capture would be refused, or a bad one sealed. */
static void a_new_capture_starts_from_an_empty_recording(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_ERROR_INVALID_VALUE);
    rp__lc_abort(&win);
    static const size_t one[1] = {32};
    assert_int_equal(rp__lc_prepare(&win, one, 1), CUDA_SUCCESS);
    assert_int_equal(win.issued, 0);
    assert_int_equal(win.failure, CUDA_SUCCESS);
    assert_int_equal(win.nstaging, 1);
    assert_int_equal(held(), 1);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_SUCCESS);
    assert_int_equal(s.nstaging, 1);
    rp__lc_sealed_release(&ctx, &s);
}

static void *end_from_other_thread(void *arg)
{
    rp_lc_sealed *s = arg;
    return (void *)(intptr_t)rp__lc_end(&win, s);
}

/* A window ended by a thread that did not open it cannot be trusted to hold
 * the owner's ops: it is closed as abandoned and its graph discarded. */
static void ending_a_window_you_do_not_own_abandons_it(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    pthread_t t;
    void *ret;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(pthread_create(&t, NULL, end_from_other_thread, &s), 0);
    pthread_join(t, &ret);
    assert_int_equal((CUresult)(intptr_t)ret, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    assert_null(s.graph);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
    assert_int_equal(ctx.recording, 0);
}

/* If the driver refuses an end from the wrong thread the capture is still
 * open; the owner's abort must still be able to close it. */
static void an_abandoned_window_the_driver_kept_open_is_closed_by_abort(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    pthread_t t;
    void *ret;
    fk.wrong_thread_refuses = 1;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
    assert_int_equal(pthread_create(&t, NULL, end_from_other_thread, &s), 0);
    pthread_join(t, &ret);
    assert_int_equal((CUresult)(intptr_t)ret, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_true(fk.capturing);
    rp__lc_abort(&win);
    assert_false(fk.capturing);
    assert_int_equal(fk.live_graphs, 0);
}

/* A window in which an op failed holds an incomplete graph; sealing it would
 * replay the wrong work. The first failure is the cause worth reporting. */
static void a_doomed_window_refuses_to_seal_and_keeps_its_first_failure(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_SUCCESS);
    rp__lc_note_issued(&win, CUDA_ERROR_INVALID_VALUE);
    rp__lc_note_issued(&win, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(win.failure, CUDA_ERROR_INVALID_VALUE);
    assert_null(s.graph);
    assert_false(fk.capturing);        /* the driver capture was still closed */
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
}

/* A driver that fails an end without closing the capture would leave the
 * private stream in capture mode, and the program's next cuCtxSynchronize
 * would fail with 900: end closes it with a second end. */
static void a_failed_end_does_not_leave_the_stream_in_capture_mode(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    fk.end_fails_keeping_open = 1;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_UNKNOWN);
    assert_false(fk.capturing);
    assert_null(s.graph);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
    assert_int_equal(ctx.recording, 0);
}

/* If the second end fails too, the window must stay marked open (the next
 * prepare refuses), and a later abort that succeeds must close it. */
static void a_window_the_driver_will_not_close_stays_open_until_an_abort_closes_it(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    fk.end_fails_keeping_open = 2;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_UNKNOWN);
    assert_true(fk.capturing);
    assert_true(win.open);
    assert_int_equal(win.state, RP_LC_NO_CAPTURE);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_ILLEGAL_STATE);
    rp__lc_abort(&win);
    assert_false(fk.capturing);
    assert_false(win.open);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
}

/* A graph holding an allocation cannot be relaunched; sealing it would fail
 * on the second replay instead of at capture. */
static void a_sealed_graph_with_memory_nodes_is_refused(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    fk.next_graph_has_mem_node = 1;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_ERROR_NOT_SUPPORTED);
    assert_null(s.graph);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
}

/* Allocating or freeing pinned memory while a capture records can
 * invalidate it (global mode) or synchronise under it. Two windows of one
 * context: while the second records, the first's graph is released; its
 * staging goes to the pool with no driver call, a trim frees nothing while
 * the recording lasts, and prepare refuses. */
static void while_any_stream_of_a_context_records_no_staging_is_allocated_or_freed(void **state)
{
    (void)state;
    rp_lc_window other;
    rp_lc_sealed s = {0}, s2 = {0};
    rp__lc_window_init(&other, &ctx, (CUstream)0x5678);
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_SUCCESS);

    assert_int_equal(rp__lc_prepare(&other, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&other, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    /* no allocation for a new window while `other` records */
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_ERROR_ILLEGAL_STATE);
    int blocks = fk.live_blocks;
    rp__lc_sealed_release(&ctx, &s);        /* to the pool: no driver call */
    rp__lc_trim(&ctx);                      /* refused while `other` records */
    assert_int_equal(fk.live_blocks, blocks);
    assert_int_equal(fk.alloc_or_free_while_capturing, 0);
    assert_int_equal(rp__lc_end(&other, &s2), CUDA_SUCCESS);
    rp__lc_sealed_release(&ctx, &s2);
    assert_int_equal(held(), 0);
    rp__lc_trim(&ctx);                      /* none records: freed */
    assert_int_equal(fk.live_blocks, 0);
    assert_int_equal(fk.alloc_or_free_while_capturing, 0);
}

/* Staging freed before its graph would let a replay read freed memory;
 * freed with its graph, it could hang the program (a free of pinned memory
 * may wait for the device, which a wait the host releases later may hold).
 * So it outlives the graph in the pool, where the next prepare takes it
 * without an allocation, and only a trim frees it. */
static void staging_outlives_its_graph_in_the_pool_until_a_trim(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_SUCCESS);
    assert_int_equal(fk.live_graphs, 1);
    assert_int_equal(held(), 2);
    rp__lc_abort(&win); /* the window is done with: staging now belongs to the graph */
    assert_int_equal(held(), 2);
    rp__lc_sealed_release(&ctx, &s);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(held(), 0);
    assert_int_equal(fk.live_blocks, 2); /* pooled, not freed */
    assert_int_equal(rp__lc_new_bytes(&ctx, two_copies, 2), 0);
    int allocs = fk.allocs;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(fk.allocs, allocs); /* reused */
    assert_int_equal(held(), 2);
    rp__lc_abort(&win);
    rp__lc_trim(&ctx);
    assert_int_equal(fk.live_blocks, 0);
}

/* A launch still queued (behind a cuStreamWaitValue32 the host releases
 * later) may read a dropped graph's staging: reusing it would change what
 * that launch copies, waiting for it would hang. The block stays busy until
 * the event recorded after the launch completes, asked and never waited for,
 * and the event is destroyed once. */
static void staging_a_queued_launch_reads_is_reused_only_once_its_event_completes(void **state)
{
    (void)state;
    rp_lc_sealed s = {0};
    CUevent done = (CUevent)0x77;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(rp__lc_begin(&win, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    assert_int_equal(rp__lc_end(&win, &s), CUDA_SUCCESS);
    rp__lc_sealed_release_after(&ctx, &s, done);
    assert_int_equal(fk.live_graphs, 0);
    assert_int_equal(rp__lc_new_bytes(&ctx, two_copies, 2), 64 + 128);
    int allocs = fk.allocs;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(fk.allocs, allocs + 2); /* busy: not taken */
    rp__lc_abort(&win);                      /* these two are free to reuse */
    rp__lc_trim(&ctx);                       /* frees the free ones only */
    assert_int_equal(fk.live_blocks, 2);
    assert_int_equal(fk.events_destroyed, 0);
    fk.event_ready = 1;
    allocs = fk.allocs;
    assert_int_equal(rp__lc_prepare(&win, two_copies, 2), CUDA_SUCCESS);
    assert_int_equal(fk.allocs, allocs);     /* complete now: reused */
    assert_int_equal(fk.events_destroyed, 1);
    rp__lc_abort(&win);
    rp__lc_trim(&ctx);
    assert_int_equal(fk.live_blocks, 0);
    assert_int_equal(fk.events_destroyed, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(transitions_follow_nocapture_prepare_capture_nocapture),
        T(any_other_order_is_rejected),
        T(a_rejected_transition_changes_nothing),
        T(a_failed_prepare_frees_what_it_allocated_and_changes_nothing),
        T(abort_recovers_a_window_that_never_opened_from_prepare),
        T(abort_recovers_a_window_that_never_opened_from_capture),
        T(abort_of_an_open_window_closes_the_driver_capture),
        T(a_new_capture_starts_from_an_empty_recording),
        T(ending_a_window_you_do_not_own_abandons_it),
        T(an_abandoned_window_the_driver_kept_open_is_closed_by_abort),
        T(a_doomed_window_refuses_to_seal_and_keeps_its_first_failure),
        T(a_failed_end_does_not_leave_the_stream_in_capture_mode),
        T(a_window_the_driver_will_not_close_stays_open_until_an_abort_closes_it),
        T(a_sealed_graph_with_memory_nodes_is_refused),
        T(while_any_stream_of_a_context_records_no_staging_is_allocated_or_freed),
        T(staging_outlives_its_graph_in_the_pool_until_a_trim),
        T(staging_a_queued_launch_reads_is_reused_only_once_its_event_completes),
#undef T
    };
    return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
