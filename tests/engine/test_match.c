/* test_match.c - the matcher (shim/engine/match) on hand-built sequences
 * and streams, against the fake driver (fakedrv.c): what it defers, what it
 * replays and what it flushes, in which order; which sequences it keeps
 * from going (pins), and when its fast path may begin a match (the hint).
 * Each test starts from a fresh engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakedrv.h"

static rp_ctxstate *cs;
static rp_stream *st;
static CUdeviceptr buf = 0x4000;
static int32_t count = 64;

/* The detector entries of the hand-built sequences (the detector owns them
 * in the engine; here the test does). */
#define MAX_SEQS 16
static rp_det_entry entries[MAX_SEQS];
static size_t nentries;

/* A cuLaunchKernelEx configuration of the test's geometry on `s`, with
 * programmatic stream serialization on (`pss` 1), off (0), or without
 * attributes (-1); `a` holds the attribute. */
static CUlaunchConfig ex_config(CUstream s, int pss, CUlaunchAttribute *a)
{
    memset(a, 0, sizeof *a);
    a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a->value.programmaticStreamSerializationAllowed = pss;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 32, c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = pss < 0 ? NULL : a;
    c.numAttrs = pss < 0 ? 0 : 1;
    return c;
}

/* A record of a launch of kernel k on `s`, as the recorder makes it:
 * through cuLaunchKernel (`pss` -2), or through cuLaunchKernelEx with
 * ex_config's attributes. */
static void record_as(rp_op *op, int k, CUstream s, int pss)
{
    unsigned int grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    void *args[] = {&buf, &count};
    enum rp__eager_reason why;
    CUlaunchAttribute a;
    CUlaunchConfig c = ex_config(s, pss, &a);
    assert_int_equal(rp__rec_kernel(cs, op, K(k), grid, block, 0, args, NULL,
                                    pss == -2 ? NULL : &c, &why),
                     0);
    op->ctx = cs->ctx;
    op->stream = s;
    op->entry = pss == -2 ? RP_E_cuLaunchKernel : RP_E_cuLaunchKernelEx;
    rp__op_keys(op);
}

/* A sequence of the kernels `ks` (0-terminated) on `home`, launched as
 * record_as says for each `pss` (NULL: all through cuLaunchKernel), with an
 * executable the fake driver launches as a graph of that many ops. */
static rp_seq *make_seq_as(const int *ks, const int *pss, CUstream home)
{
    size_t n = 0;
    while (ks[n])
        n++;
    rp_det_entry *e = &entries[nentries++];
    memset(e, 0, sizeof *e);
    e->n = n;
    e->ops = calloc(n, sizeof *e->ops);
    e->id = (unsigned int)nentries;
    e->state = RP_DET_CAPTURED;
    for (size_t i = 0; i < n; i++)
        record_as(&e->ops[i], ks[i], home, pss ? pss[i] : -2);
    rp_seq *s = calloc(1, sizeof *s);
    s->det = e;
    s->cs = cs;
    s->ctx = cs->ctx;
    s->home = home;
    s->id = e->id;
    graph_ops[ngraphs] = (int)n;
    s->exec = (CUgraphExec)(uintptr_t)++ngraphs;
    s->lay = calloc(n, sizeof *s->lay);
    s->ex.nodes = calloc(n, sizeof *s->ex.nodes);
    for (size_t i = 0; i < n; i++) {
        s->lay[i] = rp__rec_layout(cs, &e->ops[i]);
        s->ex.nodes[i] = (CUgraphNode)(uintptr_t)(0x500 + i); /* as fakedrv names them */
    }
    assert_int_equal(rp__seqs_add(cs, s), 0);
    return s;
}

static rp_seq *make_seq(const int *ks, CUstream home)
{
    return make_seq_as(ks, NULL, home);
}

/* A sequence of two launches, k1 then k2, on the stream, whose k2 takes
 * `c` as its count: an exact variant (or, with `updates`, a sequence with
 * k2's count volatile, which matches whatever count a k2 has). */
static rp_seq *make_counted(int32_t c, int updates)
{
    int32_t keep = count;
    rp_seq *s = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    count = c;
    rp__op_free(&s->det->ops[1]);
    record_as(&s->det->ops[1], 2, S_NONBLOCK, -2);
    count = keep;
    if (updates) {
        s->vmask = calloc(2, sizeof *s->vmask);
        s->vmask[1] = 1ull << 1; /* k2's count */
    }
    return s;
}

/* Forget what the stream holds without resolving it (its records freed,
 * its candidates unpinned). */
static void drop_held(void)
{
    for (size_t i = 0; i < st->match.ndef; i++)
        rp__op_free(&st->match.def[i]);
    st->match.ndef = 0;
    rp__match_cancel(st);
}

/* Offer launch k to the matcher of the stream, as rp__defer does: what the
 * matcher said. */
static enum rp_offer offer_as(int k, int pss)
{
    rp_op op;
    record_as(&op, k, st->handle, pss);
    enum rp_offer v = rp__match_join_or_offer(st, &op);
    if (v == RP_OFFER_MATCHES)
        return rp__match_defer(st, &op);
    rp__op_free(&op);
    return v;
}

static enum rp_offer offer(int k)
{
    return offer_as(k, -2);
}

static struct rp_resolved resolve_on(CUstream target)
{
    struct rp_resolved r;
    rp__match_resolve(st, target, &r);
    for (size_t i = 0; i < r.nflushed; i++)
        rp__op_free(&r.flushed[i]); /* learning would take them */
    return r;
}

static struct rp_resolved resolve(void)
{
    return resolve_on(st->handle);
}

static int group_setup(void **state)
{
    (void)state;
    build_fake();
    core = fake;
    const struct rp__engine_config cfg = {.warmup = 2, .max_variants = 4, .cost.max_updates = 64,
                                          .min_ops = 2, .max_ops = 4096, .max_graphs = 256,
                                          .max_staging = 1u << 20, .max_seq_bytes = 1u << 20,
                                          .table_size = 64, .parts = 1};
    return rp__engine_install(&core, &fake, &cfg);
}

static int setup(void **state)
{
    (void)state;
    rp__engine_reset();
    current = (CUcontext)0x10100;
    log_[0] = '\0';
    ngraphs = 0;
    nentries = 0;
    memset(node_off, 0, sizeof node_off);
    node_enables = 0;
    fail_node_enable = 0;
    cs = rp__ctx_of(current);
    st = rp__stream_of(cs, S_NONBLOCK, 0);
    return cs && st ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rp__engine_reset();
    for (size_t i = 0; i < nentries; i++) {
        for (size_t k = 0; k < entries[i].n; k++)
            rp__op_free(&entries[i].ops[k]);
        free(entries[i].ops);
    }
    return 0;
}

/* Without this the whole point is lost: a run of ops equal to a sequence's
 * must reach the driver as one graph launch, and nothing else. */
static void a_run_equal_to_a_sequence_is_replayed_in_its_place(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_string_equal(log_, ""); /* held */
    assert_int_equal(offer(2), RP_OFFER_COMPLETE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, s);
    assert_int_equal(r.nflushed, 0);
    assert_string_equal(log_, "graph2@N");
    assert_int_equal(s->replays, 1);
}

/* A divergence must issue what was held, in the program's order, before
 * the op that diverged: never dropped, never reordered. */
static void a_divergence_flushes_the_held_ops_in_their_order(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(offer(2), RP_OFFER_DEFERRED);
    assert_int_equal(offer(4), RP_OFFER_RESOLVE); /* k4 is no op of it */
    struct rp_resolved r = resolve();
    assert_null(r.replayed);
    assert_int_equal(r.nflushed, 2);
    assert_string_equal(log_, "k1@N k2@N");
    assert_int_equal(s->divergences, 1);
    assert_string_equal(s->div_why, "another operation");
    /* For the report: where, what field, both values (both kernels), and
     * that the held ops then ran eagerly. */
    assert_int_equal(s->ndivs, 1);
    assert_int_equal(s->divs[0].op, 2);
    assert_int_equal(s->divs[0].why, RP_DIV_OTHER_OP);
    assert_int_equal(s->divs[0].d.field, RP_FIELD_FUNCTION);
    assert_int_equal(s->divs[0].d.had, (uintptr_t)K(3));
    assert_int_equal(s->divs[0].d.got, (uintptr_t)K(4));
    assert_non_null(s->divs[0].got_name);
    assert_true(s->divs[0].ended);
    assert_int_equal(s->flushes, 1);
    assert_int_equal(s->flushed_ops, 2);
    struct rp__seq_info info;
    rp__seq_info(s, &info);
    assert_int_equal(info.ndivs, 1);
    assert_int_equal(info.divs[0].field, RP_FIELD_FUNCTION);
    assert_string_equal(info.divs[0].kind, "kernel");
    assert_string_equal(info.divs[0].got_kernel, s->divs[0].got_name);
}

/* A run that another sequence goes on to take diverged from the ones it
 * left, but ran no op eagerly for them: the report must not blame them
 * (issue 37: "diverged 276 against occurrences 23"). */
static void a_divergence_another_sequence_takes_sends_nothing_eager(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){1, 2, 4, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(offer(2), RP_OFFER_DEFERRED);
    assert_int_equal(offer(4), RP_OFFER_COMPLETE); /* a left, b goes on to its end */
    assert_int_equal(a->divergences, 1);
    assert_int_equal(a->flushes, 0);
    assert_false(a->divs[0].ended);
    resolve();
    assert_int_equal(b->replays, 1);
    assert_int_equal(a->flushes, 0);
    assert_int_equal(b->divergences, 0);
}

/* A shorter sequence that matched in full must still be replayed when a
 * longer one that also matched so far diverges; and between equals, an
 * exact sequence beats one that needs updates. */
static void the_longest_complete_candidate_is_replayed(void **state)
{
    (void)state;
    rp_seq *shorter = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(offer(2), RP_OFFER_DEFERRED); /* the longer one still matches */
    assert_int_equal(offer(5), RP_OFFER_RESOLVE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, shorter);
    assert_int_equal(r.nflushed, 0);
    assert_string_equal(log_, "graph2@N");
}

/* A sequence may not go while a stream matches against it: the fast path
 * borrows its records. The matcher counts those streams (pins). */
static void a_sequence_is_pinned_while_a_stream_matches_against_it(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){1, 4, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(a->pins, 1);
    assert_int_equal(b->pins, 1);
    assert_int_equal(offer(2), RP_OFFER_DEFERRED); /* b dropped out */
    assert_int_equal(a->pins, 1);
    assert_int_equal(b->pins, 0);
    resolve();
    assert_int_equal(a->pins, 0);
}

/* A launch (through cuLaunchKernel, the test's geometry) of kernel k. */
static rp_launch launch_of(int k)
{
    static void *args[] = {&buf, &count};
    rp_launch l = {K(k), {1, 1, 1}, {32, 1, 1}, 0, S_NONBLOCK, args, NULL, NULL, 0};
    return l;
}

/* The fast path defers a launch equal to the one candidate's next op with
 * no record, and begins a match from the sequence last replayed on the
 * stream (its hint) only while no sequence went since: the hint may name
 * the one that went. */
static void the_fast_path_follows_the_one_candidate_and_its_hint_dies_with_any_sequence(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    rp_seq *other = make_seq((const int[]){7, 8, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    assert_ptr_equal(st->match.borrowed_seq, s);
    assert_ptr_equal(resolve().replayed, s);
    assert_ptr_equal(st->match.hint, s);
    rp_launch l1 = launch_of(1);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, l1, RP_E_cuLaunchKernel), RP_OFFER_DEFERRED);
    resolve(); /* flushed: k1 alone */
    rp__seq_destroy(rp__seqs_remove(cs, other == cs->seqs[0] ? 0 : 1));
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, l1, RP_E_cuLaunchKernel), RP_OFFER_EAGER);
}

/* A step that begins with another kernel than the sequence last replayed
 * (decoding's steps take turns) is begun by the fast path too, as
 * rp__match_offer would begin it (first_several: every sequence of the
 * stream that begins with the kernel); a kernel no sequence begins with
 * is the general path's, nothing done. If not, every step but a repeated
 * one begins with a record and the candidates' search. */
static void the_fast_path_begins_a_step_of_another_sequence_than_the_last(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){7, 8, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    assert_ptr_equal(resolve().replayed, a);
    assert_int_equal(offer(7), RP_OFFER_DEFERRED); /* b's first offer: its images made */
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(8), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    assert_ptr_equal(resolve().replayed, b);
    assert_ptr_equal(st->match.hint, b);
    for (int round = 0; round < 2; round++) { /* a after b, b after a */
        rp_seq *next = round ? b : a;
        int k = round ? 7 : 1;
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(k), RP_E_cuLaunchKernel),
                         RP_OFFER_DEFERRED);
        assert_ptr_equal(st->match.borrowed_seq, next);
        assert_int_equal(st->match.ncand, 1);
        assert_ptr_equal(st->match.cand[0], next);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(k + 1), RP_E_cuLaunchKernel),
                         RP_OFFER_COMPLETE);
        assert_ptr_equal(resolve().replayed, next);
    }
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(5), RP_E_cuLaunchKernel),
                     RP_OFFER_EAGER);
    assert_int_equal(st->match.ndef, 0);
    assert_int_equal(st->match.ncand, 0);
    assert_string_equal(log_, "graph2@N graph2@N graph2@N graph2@N");
    assert_int_equal(a->pins + b->pins, 0);
}

/* The fast path compares no launch attributes: it must take no launch
 * that carries some, and no op recorded with some. Otherwise a launch with
 * programmatic stream serialization would be replayed by a graph learnt
 * without it, or the reverse (the attribute is part of the structure);
 * through cuLaunchKernelEx without attributes everything else is equal. */
static void the_fast_path_takes_no_launch_or_op_with_launch_attributes(void **state)
{
    (void)state;
    rp_seq *with = make_seq_as((const int[]){1, 2, 0}, (const int[]){-1, 1}, S_NONBLOCK);
    rp_seq *without = make_seq_as((const int[]){3, 4, 0}, (const int[]){-1, -1}, S_NONBLOCK);
    CUlaunchAttribute a;
    CUlaunchConfig none = ex_config(S_NONBLOCK, -1, &a);
    rp_launch l = {K(2), {1, 1, 1}, {32, 1, 1}, 0, S_NONBLOCK, (void *[]){&buf, &count}, NULL,
                   &none, 0};
    rp_op op;
    record_as(&op, 1, S_NONBLOCK, -1);
    assert_int_equal(rp__match_join_or_offer(st, &op), RP_OFFER_MATCHES);
    assert_int_equal(rp__match_defer(st, &op), RP_OFFER_DEFERRED);
    assert_int_equal(st->match.ncand, 1);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, l, RP_E_cuLaunchKernelEx), RP_OFFER_EAGER);
    assert_null(st->match.borrowed_seq);
    resolve();
    assert_int_equal(with->replays, 0);

    CUlaunchAttribute b;
    CUlaunchConfig on = ex_config(S_NONBLOCK, 1, &b);
    l.f = K(4);
    l.cfg = &on;
    record_as(&op, 3, S_NONBLOCK, -1);
    assert_int_equal(rp__match_join_or_offer(st, &op), RP_OFFER_MATCHES);
    assert_int_equal(rp__match_defer(st, &op), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, l, RP_E_cuLaunchKernelEx), RP_OFFER_EAGER);
    assert_null(st->match.borrowed_seq);
    /* Its own launch, without attributes, the fast path does take. */
    l.cfg = &none;
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, l, RP_E_cuLaunchKernelEx), RP_OFFER_COMPLETE);
    assert_ptr_equal(st->match.borrowed_seq, without);
    assert_ptr_equal(resolve().replayed, without);
}

/* A flush issues a launch with programmatic stream serialization as the
 * program did on its own stream, and without the attribute on the private
 * stream (another thread's per-thread stream resolved there: its
 * predecessor there is not the program's, so the stricter order), counting
 * that drop. Issued with it there, it could overlap work the program
 * never ordered it after. */
static void a_flush_onto_the_private_stream_leaves_programmatic_serialization_out(void **state)
{
    (void)state;
    make_seq_as((const int[]){1, 2, 3, 0}, (const int[]){-1, 1, -1}, S_NONBLOCK);
    assert_int_equal(offer_as(1, -1), RP_OFFER_DEFERRED);
    assert_int_equal(offer_as(2, 1), RP_OFFER_DEFERRED);
    assert_int_equal(resolve().nflushed, 2);
    assert_string_equal(log_, "k1@N k2@N+pss");
    assert_int_equal(cs->counters.programmatic_serialization_dropped, 0);
    log_[0] = '\0';
    assert_int_equal(offer_as(1, -1), RP_OFFER_DEFERRED);
    assert_int_equal(offer_as(2, 1), RP_OFFER_DEFERRED);
    assert_int_equal(resolve_on(S_PRIVATE).nflushed, 2);
    assert_string_equal(log_, "k1@priv k2@priv");
    assert_int_equal(cs->counters.programmatic_serialization_dropped, 1);
}

/* A sequence is replayed only on the stream whose trace it was learnt on. */
static void a_sequence_of_another_stream_is_no_candidate(void **state)
{
    (void)state;
    make_seq((const int[]){1, 2, 0}, S_BLOCKING);
    assert_int_equal(offer(1), RP_OFFER_EAGER);
    assert_int_equal(st->match.ndef, 0);
}

/* A quiet spot in the middle of an occurrence (the idle watch): what is
 * held goes as a part of the graph, the other nodes disabled, and the rest,
 * when it comes, as the rest of the same graph; each op runs once, in
 * order, and the next whole occurrence runs every node again. */
static void a_quiet_spot_launches_what_is_held_as_a_part_and_the_rest_completes_the_graph(
    void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(offer(2), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_part(st, st->handle), 1);
    assert_string_equal(log_, "graph3@N(0,1)");
    assert_int_equal(node_enables, 1); /* op 2's node off */
    assert_int_equal(st->match.launched, 2);
    assert_int_equal(rp__match_part(st, st->handle), 0); /* nothing more held */
    assert_int_equal(offer(3), RP_OFFER_COMPLETE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, s);
    assert_int_equal(r.parted, 1);
    assert_int_equal(r.nflushed, 0);
    assert_string_equal(log_, "graph3@N(0,1) graph3@N(2)");
    assert_int_equal(s->replays, 1); /* one occurrence */
    assert_int_equal(cs->counters.part_launches, 2);
    assert_int_equal(cs->counters.ops_replayed, 3);
    assert_int_equal(st->match.launched, 0);
    log_[0] = '\0';
    offer(1), offer(2);
    assert_int_equal(offer(3), RP_OFFER_COMPLETE);
    r = resolve();
    assert_int_equal(r.parted, 0);
    assert_string_equal(log_, "graph3@N");
    assert_int_equal(node_enables, 1 + 3 + 2); /* 0,1 off, 2 on; then 0,1 on */
}

/* Two quiet spots in one occurrence: three parts, each op once. */
static void two_quiet_spots_launch_three_parts(void **state)
{
    (void)state;
    make_seq((const int[]){1, 2, 3, 4, 0}, S_NONBLOCK);
    offer(1);
    assert_int_equal(rp__match_part(st, st->handle), 1);
    offer(2), offer(3);
    assert_int_equal(rp__match_part(st, st->handle), 1);
    assert_int_equal(offer(4), RP_OFFER_COMPLETE);
    resolve();
    assert_string_equal(log_, "graph4@N(0) graph4@N(1,2) graph4@N(3)");
}

/* After a part, a divergence issues only what was held since, eagerly, in
 * order: the part's ops ran already, and must not run again. */
static void a_divergence_after_a_part_flushes_only_what_was_held_since(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 4, 0}, S_NONBLOCK);
    offer(1);
    assert_int_equal(rp__match_part(st, st->handle), 1);
    offer(2);
    assert_int_equal(offer(5), RP_OFFER_RESOLVE);
    struct rp_resolved r = resolve();
    assert_null(r.replayed);
    assert_int_equal(r.parted, 1);
    assert_int_equal(r.nflushed, 1);
    assert_string_equal(log_, "graph4@N(0) k2@N");
    assert_int_equal(s->replays, 0);
    assert_int_equal(s->divergences, 1);
}

/* Several candidates still match at the quiet spot: the one replayed most
 * takes the part, and either may take the rest: the other completes with
 * the next op, and its graph runs the ops after the part (its nodes before
 * them disabled). If only the one that took the part could, a quiet spot
 * before the op that tells two sequences apart (a generate() step that
 * begins as two forms do) would cut every occurrence of the other. */
static void at_a_quiet_spot_the_candidate_replayed_most_takes_the_part_and_any_the_rest(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){1, 2, 4, 0}, S_NONBLOCK);
    b->replays = 5;
    offer(1), offer(2);
    assert_int_equal(a->pins, 1);
    assert_int_equal(rp__match_part(st, st->handle), 1);
    assert_int_equal(a->pins, 1); /* still a candidate */
    assert_int_equal(b->pins, 1);
    assert_int_equal(offer(3), RP_OFFER_COMPLETE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, a);
    assert_int_equal(r.nflushed, 0); /* ops 0-1 ran as b's part, op 2 as a's rest */
    assert_string_equal(log_, "graph3@N(0,1) graph3@N(2)");
    assert_int_equal(a->replays, 1);
    assert_int_equal(b->replays, 5); /* a part is no replay of its own */
}

/* No part where none can be made: a fork/join sequence over several
 * streams past its home stream's first ops, parts turned off, a driver that refuses to disable
 * a node (the sequence is broken: its executable may hold a mix). Nothing
 * reaches the driver; the caller resolves as before. */
static void no_part_is_launched_where_the_graph_cannot_run_one(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    offer(1);
    /* A fork/join over two streams whose first op is another stream's (or
     * an event op): a part runs home-stream nodes only, before any other. */
    CUstream home_op = s->det->ops[0].stream;
    s->fj.multi = 1;
    s->fj.nside = 1;
    s->det->ops[0].stream = (CUstream)0x9999;
    assert_int_equal(rp__match_part(st, st->handle), 0);
    s->det->ops[0].stream = home_op;
    s->fj.multi = 0;
    s->fj.nside = 0;
    rp__eng.cfg.parts = 0;
    assert_int_equal(rp__match_part(st, st->handle), 0);
    rp__eng.cfg.parts = 1;
    assert_int_equal(rp__match_part(st, (CUstream)0x7777), 0); /* another target */
    assert_string_equal(log_, "");
    fail_node_enable = 1;
    assert_int_equal(rp__match_part(st, st->handle), 0);
    assert_true(s->broken);
    assert_string_equal(log_, "");
    struct rp_resolved r = resolve();
    assert_int_equal(r.parted, 0);
    assert_string_equal(log_, "k1@N");
}

/* Exact variants whose first ops are alike (a counter past the first op,
 * one variant per value) must not fill the candidates so that the sequence
 * with updates, which serves every value, is never one: then every later
 * occurrence diverges and nothing is replayed (issue 28: 16 variants, 0
 * replays of the graph with updates in 2,360 occurrences). */
static void a_sequence_with_updates_is_a_candidate_however_many_exact_variants_begin_alike(void **state)
{
    (void)state;
    for (int32_t c = 0; c < RP_MAX_CANDIDATES + 2; c++)
        make_counted(100 + c, 0);
    rp_seq *v = make_counted(0, 1);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    int found = 0;
    for (size_t i = 0; i < st->match.ncand; i++)
        found |= st->match.cand[i] == v;
    assert_true(found);
    assert_int_equal(v->pins, 1);
    count = 555; /* a value no exact variant has */
    assert_int_equal(offer(2), RP_OFFER_COMPLETE);
    count = 64;
    assert_ptr_equal(st->match.complete, v);
    size_t pinned = 0; /* the ones that gave their place were unpinned */
    for (size_t i = 0; i < cs->nseqs; i++)
        pinned += cs->seqs[i]->pins;
    assert_int_equal(pinned, 1);
    drop_held();
}

/* An exact variant that an occurrence leaves on its arguments while a
 * sequence with updates goes on matching was passed over: the count the
 * policy drops it on (learn/policy.c). Without it the variant stays a
 * candidate of every occurrence, diverging for ever. Left for another
 * operation, or with no sequence with updates matching, it was not. */
static void an_exact_variant_left_for_a_sequence_with_updates_is_counted_passed_over(void **state)
{
    (void)state;
    rp_seq *x = make_counted(100, 0);
    rp_seq *v = make_counted(0, 1);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    count = 200;
    assert_int_equal(offer(2), RP_OFFER_COMPLETE);
    count = 64;
    assert_ptr_equal(st->match.complete, v);
    assert_int_equal(x->passed_over, 1);
    assert_int_equal(x->divergences, 1);
    drop_held(); /* not replayed here: v has no executable values to update */
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    /* Another operation (launched with an attribute: another node, which
     * no update makes of k2's): nobody matches. */
    assert_int_equal(offer_as(3, 1), RP_OFFER_RESOLVE);
    resolve();
    assert_int_equal(x->passed_over, 1);
}

/* Several candidates alike so far (a generate() step's sequences that part
 * only late): the fast path follows them all with no record, borrowing one
 * candidate's ops, as long as every candidate's next op is the launch and
 * none ends with it; where one leaves, the general path writes the
 * borrowed ops down and narrows as ever, and the one left goes on. */
static void several_candidates_alike_so_far_are_followed_without_records(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 3, 4, 5, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){1, 2, 3, 6, 7, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(st->match.ncand, 2);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(3), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(st->match.ndef, 3);
    assert_int_equal(st->match.ncand, 2);
    assert_non_null(st->match.borrowed_seq);
    assert_int_equal(st->match.borrowed_from, 1);
    /* k6 is a's op no longer: not the fast path's, nothing done. */
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(6), RP_E_cuLaunchKernel),
                     RP_OFFER_EAGER);
    assert_int_equal(st->match.ndef, 3);
    assert_int_equal(offer(6), RP_OFFER_DEFERRED); /* the general path: a leaves */
    assert_null(st->match.borrowed_seq); /* written down */
    assert_int_equal(st->match.ncand, 1);
    assert_ptr_equal(st->match.cand[0], b);
    for (size_t i = 0; i < 3; i++) /* written down as launched */
        assert_ptr_equal(st->match.def[i].func, K(i + 1));
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(7), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, b);
    assert_int_equal(r.nflushed, 0);
    assert_string_equal(log_, "graph5@N"); /* b's 5 ops */
    assert_int_equal(a->divergences, 1);
    assert_int_equal(a->pins, 0);
    assert_int_equal(b->pins, 0);
}

/* What the fast path held for several candidates is flushed, when they
 * all diverge, as the program launched it: in order, every op once. */
static void a_divergence_of_several_candidates_flushes_what_the_fast_path_held(void **state)
{
    (void)state;
    rp_seq *a = make_seq((const int[]){1, 2, 3, 9, 0}, S_NONBLOCK);
    rp_seq *b = make_seq((const int[]){1, 2, 3, 8, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(3), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(offer(5), RP_OFFER_RESOLVE);
    struct rp_resolved r = resolve();
    assert_null(r.replayed);
    assert_int_equal(r.nflushed, 3);
    assert_string_equal(log_, "k1@N k2@N k3@N");
    assert_int_equal(a->pins + b->pins, 0);
    assert_int_equal(a->flushes + b->flushes, 2);
}

/* A candidate that ends with the launch is the general path's (the
 * longest complete one wins: note_complete); the longer one then goes on
 * alone on the fast path, and when it completes too, the shorter one that
 * completed first is let go (its pin: a sequence pinned for ever is never
 * evicted). */
static void a_shorter_candidate_completing_leaves_the_longer_to_the_fast_path(void **state)
{
    (void)state;
    rp_seq *shorter = make_seq((const int[]){1, 2, 3, 0}, S_NONBLOCK);
    rp_seq *longer = make_seq((const int[]){1, 2, 3, 4, 5, 0}, S_NONBLOCK);
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(3), RP_E_cuLaunchKernel),
                     RP_OFFER_EAGER); /* the shorter one would end with it */
    assert_int_equal(offer(3), RP_OFFER_DEFERRED);
    assert_ptr_equal(st->match.complete, shorter);
    assert_int_equal(st->match.ncand, 1);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(4), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(5), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    assert_ptr_equal(st->match.complete, longer);
    assert_int_equal(shorter->pins, 0);
    assert_ptr_equal(resolve().replayed, longer);
    assert_int_equal(longer->pins, 0);
    assert_string_equal(log_, "graph5@N");
}

/* A memset of the test's buffer on `s`, recorded as called through `entry`. */
static void memset_as(rp_op *op, CUstream s, enum rp__entry entry)
{
    memset(op, 0, sizeof *op);
    op->kind = RP_OP_MEMSET;
    op->dst = buf;
    op->value = 7;
    op->elem = 4;
    op->bytes = 16;
    op->ctx = cs->ctx;
    op->stream = s;
    op->entry = (uint16_t)entry;
    rp__op_keys(op);
}

/* A memset that is the one candidate's next op joins the launches the fast
 * path holds borrowed (issue 36: no record deferred, nothing written down),
 * the run going on to its replay; but only through the entry point the
 * sequence's memset was recorded from, the one a flush would issue it
 * through. On the legacy stream a synchronous memset and its asynchronous
 * form compare alike: the other form takes the general path, which keeps
 * the program's record. */
static void a_memset_joins_the_held_run_only_through_the_sequences_entry_point(void **state)
{
    (void)state;
    st = rp__stream_of(cs, NULL, 0); /* the legacy stream */
    rp_seq *s = make_seq((const int[]){1, 2, 9, 3, 0}, st->handle);
    rp__op_free(&s->det->ops[2]);
    memset_as(&s->det->ops[2], st->handle, RP_E_cuMemsetD32Async);
    s->lay[2] = NULL;
    rp_launch l2 = launch_of(2), l3 = launch_of(3);
    l2.s = l3.s = NULL;
    for (int round = 0; round < 2; round++) {
        rp_op k1, ms;
        record_as(&k1, 1, st->handle, -2);
        assert_int_equal(rp__match_join_or_offer(st, &k1), RP_OFFER_MATCHES);
        assert_int_equal(rp__match_defer(st, &k1), RP_OFFER_DEFERRED);
        assert_int_equal(rp__match_launch(st, st->handle, l2, RP_E_cuLaunchKernel), RP_OFFER_DEFERRED);
        assert_ptr_equal(st->match.borrowed_seq, s);
        memset_as(&ms, st->handle, round ? RP_E_cuMemsetD32_v2 : RP_E_cuMemsetD32Async);
        if (!round) {
            assert_int_equal(rp__match_join_or_offer(st, &ms), RP_OFFER_DEFERRED); /* joined */
            assert_ptr_equal(st->match.borrowed_seq, s);
            assert_int_equal(st->match.borrowed_from, 1);
        } else {
            assert_int_equal(rp__match_join_or_offer(st, &ms), RP_OFFER_MATCHES); /* written down */
            assert_null(st->match.borrowed_seq);
            assert_int_equal(rp__match_defer(st, &ms), RP_OFFER_DEFERRED);
            assert_int_equal(st->match.def[2].entry, RP_E_cuMemsetD32_v2);
        }
        assert_int_equal(st->match.ndef, 3);
        assert_int_equal(rp__match_launch(st, st->handle, l3, RP_E_cuLaunchKernel), RP_OFFER_COMPLETE);
        struct rp_resolved r = resolve();
        assert_ptr_equal(r.replayed, s);
        assert_int_equal(r.nflushed, 0);
    }
    assert_int_equal(s->replays, 2);
    assert_string_equal(log_, "graph4@L graph4@L");
}

/* A read-back (device to pinned host memory) that is the one candidate's
 * last op joins the held run and completes it: the run replays at once,
 * nothing written down or flushed, as the general path would have it. */
static void a_read_back_at_the_end_of_a_held_run_completes_it(void **state)
{
    (void)state;
    static float pinned[4];
    rp_seq *s = make_seq((const int[]){1, 2, 9, 0}, S_NONBLOCK);
    rp_op *d = &s->det->ops[2];
    rp__op_free(d);
    memset(d, 0, sizeof *d);
    d->kind = RP_OP_DTOH;
    d->src = buf;
    d->host = pinned;
    d->bytes = sizeof pinned;
    d->ctx = cs->ctx;
    d->stream = S_NONBLOCK;
    d->entry = RP_E_cuMemcpyDtoHAsync_v2;
    rp__op_keys(d);
    s->lay[2] = NULL;
    rp_op back = *d;
    assert_int_equal(offer(1), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_ptr_equal(st->match.borrowed_seq, s);
    assert_int_equal(rp__match_join_or_offer(st, &back), RP_OFFER_COMPLETE);
    assert_ptr_equal(st->match.complete, s);
    assert_int_equal(st->match.ncand, 0);
    assert_ptr_equal(st->match.borrowed_seq, s); /* nothing written down */
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, s);
    assert_int_equal(r.nflushed, 0);
    assert_string_equal(log_, "graph3@N");
    assert_int_equal(s->pins, 0);
}

/* Op k of `s`, a kernel until now, made the test's memset (recorded
 * through cuMemsetD32Async on the nonblocking stream). */
static void memset_at(rp_seq *s, size_t k)
{
    rp__op_free(&s->det->ops[k]);
    memset_as(&s->det->ops[k], S_NONBLOCK, RP_E_cuMemsetD32Async);
    s->lay[k] = NULL;
}

/* The launch of k5 completes what the stream holds: replayed as `s`'s
 * graph, nothing flushed. */
static void last_launch_replays(rp_seq *s)
{
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(5), RP_E_cuLaunchKernel),
                     RP_OFFER_COMPLETE);
    struct rp_resolved r = resolve();
    assert_ptr_equal(r.replayed, s);
    assert_int_equal(r.nflushed, 0);
}

/* Several candidates part where one's op is no kernel at all (a step's
 * variant with a memset where the others launch): the launch lets it go
 * on the fast path as narrow() lets it go ("another operation", a
 * divergence noted, unpinned), nothing written down while the one that
 * goes was not the lender; where it was, the run lent so far is written
 * down and the one whose op the launch is lends from there on. */
static void a_candidate_whose_op_is_no_kernel_is_let_go_by_the_launch_on_the_fast_path(void **state)
{
    (void)state;
    for (int lender_goes = 0; lender_goes < 2; lender_goes++) {
        rp_seq *first = make_seq((const int[]){1, 2, 4, 5, 0}, S_NONBLOCK);
        rp_seq *other = make_seq((const int[]){1, 2, 4, 5, 0}, S_NONBLOCK);
        rp_seq *goes = lender_goes ? first : other, *stays = lender_goes ? other : first;
        memset_at(goes, 2);
        assert_int_equal(offer(1), RP_OFFER_DEFERRED);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                         RP_OFFER_DEFERRED);
        assert_int_equal(st->match.ncand, 2);
        assert_ptr_equal(st->match.borrowed_seq, first);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(4), RP_E_cuLaunchKernel),
                         RP_OFFER_DEFERRED);
        assert_int_equal(st->match.ncand, 1);
        assert_ptr_equal(st->match.cand[0], stays);
        assert_ptr_equal(st->match.borrowed_seq, stays);
        assert_int_equal(st->match.borrowed_from, lender_goes ? 2 : 1);
        assert_int_equal(goes->divergences, 1);
        assert_int_equal(goes->divs[0].why, RP_DIV_OTHER_OP);
        assert_int_equal(goes->divs[0].op, 2);
        assert_int_equal(goes->pins, 0);
        last_launch_replays(stays);
        assert_int_equal(stays->pins, 0);
        goes->broken = stays->broken = 1; /* out of the next round's way */
    }
    assert_string_equal(log_, "graph4@N graph4@N");
}

/* A memset that one of several candidates has where the others launch
 * joins the run held borrowed from it, the others let go as narrow() lets
 * them go, nothing written down: with its record (rp__match_join) or
 * without one (rp__match_join_call, as the memset hooks ask); a memset
 * that another candidate has too (the same node, other values: narrow()
 * may keep or widen it) is the general path's, which writes the run down
 * first. */
static void a_memset_joins_a_run_of_several_candidates_where_the_others_launch(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        int other_memset = round == 2, unrecorded = round == 1;
        rp_seq *s = make_seq((const int[]){1, 2, 4, 5, 0}, S_NONBLOCK);
        rp_seq *o = make_seq((const int[]){1, 2, 4, 5, 0}, S_NONBLOCK);
        memset_at(s, 2);
        if (other_memset) {
            memset_at(o, 2);
            o->det->ops[2].dst = buf + 64;
        }
        assert_int_equal(offer(1), RP_OFFER_DEFERRED);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                         RP_OFFER_DEFERRED);
        assert_ptr_equal(st->match.borrowed_seq, s);
        rp_op ms;
        memset_as(&ms, S_NONBLOCK, RP_E_cuMemsetD32Async);
        ms.opno = st->opno;
        if (unrecorded) {
            rp_call_other c = {.kind = RP_OP_MEMSET, .entry = RP_E_cuMemsetD32Async, .flags = 0,
                               .ctx = cs->ctx, .stream = S_NONBLOCK, .dst = ms.dst,
                               .value = ms.value, .elem = ms.elem, .bytes = ms.bytes};
            assert_int_equal(rp__match_join_call(st, &c), RP_OFFER_DEFERRED); /* joined */
            rp__op_free(&ms);
        } else if (!other_memset) {
            assert_int_equal(rp__match_join_or_offer(st, &ms), RP_OFFER_DEFERRED); /* joined */
        }
        if (!other_memset) {
            assert_ptr_equal(st->match.borrowed_seq, s);
            assert_int_equal(st->match.borrowed_from, 1);
            assert_int_equal(o->divergences, 1);
            assert_int_equal(o->divs[0].why, RP_DIV_OTHER_OP);
        } else {
            assert_int_equal(rp__match_join_or_offer(st, &ms), RP_OFFER_MATCHES);
            assert_null(st->match.borrowed_seq); /* written down */
            assert_int_equal(rp__match_defer(st, &ms), RP_OFFER_DEFERRED);
            assert_int_equal(o->divs[0].why, RP_DIV_OTHER_VALUES);
        }
        assert_int_equal(st->match.ndef, 3);
        assert_int_equal(st->match.ncand, 1);
        assert_int_equal(o->pins, 0);
        last_launch_replays(s);
        s->broken = o->broken = 1; /* out of the next round's way */
    }
    assert_string_equal(log_, "graph4@N graph4@N graph4@N");
}

/* The fake's answer for a function's limits (left out of its table but
 * where a test sets it: the others take every other function's launch as
 * not fitting). */
static CUresult f_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}

/* With nothing held, a launch of a kernel no sequence's first op is, nor
 * may be (a form of a first op whose function is volatile), finds no
 * candidate at once (rp_ctxstate.first_kernel_bits: the eager launches
 * between steps are not compared with every sequence); a kernel that
 * became a first op's form is a candidate's first op from then on. */
static void only_a_launch_a_sequence_may_begin_with_finds_candidates(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 0}, S_NONBLOCK);
    assert_int_equal(offer(3), RP_OFFER_EAGER);
    assert_int_equal(st->match.ncand, 0);
    s->vmask = calloc(2, sizeof *s->vmask);
    s->vmask[0] = RP_VOL_FUNC;
    assert_int_equal(rp__seq_add_form(s, 0, K(3)), 0);
    fake.cuFuncGetAttribute = f_func_attr; /* another form's limits: asked of its function */
    enum rp_offer v = offer(3);
    fake.cuFuncGetAttribute = NULL;
    assert_int_equal(v, RP_OFFER_DEFERRED);
    assert_int_equal(st->match.ncand, 1);
    assert_ptr_equal(st->match.cand[0], s);
    drop_held();
}

/* A launch the fast path cannot compare (another known form of its op's
 * volatile function: a kernel chosen by alignment) that the run's one
 * candidate keeps is deferred before the general path (rp__match_kept):
 * its record takes its place among the ops the run holds borrowed
 * (rp_stream.match.own; nothing written down, first session of
 * 2026-12-08), at the stream's position, the candidate's next launch
 * borrowed as before, and the run complete at the candidate's last op;
 * written down, the record stays as it is, and flushed, it is issued in
 * its place. A kernel that is no form of the op is not kept, nothing done
 * (the general path decides: the candidate goes). */
static void a_launch_of_another_form_the_one_candidate_keeps_is_deferred_before_the_general_path(
    void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 4, 0}, S_NONBLOCK);
    s->vmask = calloc(4, sizeof *s->vmask);
    s->vmask[2] = RP_VOL_FUNC;
    assert_int_equal(rp__seq_add_form(s, 2, K(5)), 0);
    struct rp__driver was = fake;
    fake.cuFuncGetAttribute = f_func_attr;
    st->opno = 40;
    for (int flushed = 0; flushed < 2; flushed++) {
        uint64_t at = st->opno;
        rp_op first;
        record_as(&first, 1, S_NONBLOCK, -2);
        first.opno = st->opno++; /* as rp__learn_next gives it */
        assert_int_equal(rp__match_join_or_offer(st, &first), RP_OFFER_MATCHES);
        assert_int_equal(rp__match_defer(st, &first), RP_OFFER_DEFERRED);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                         RP_OFFER_DEFERRED);
        assert_ptr_equal(st->match.borrowed_seq, s); /* op 1 borrowed */
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(5), RP_E_cuLaunchKernel),
                         RP_OFFER_EAGER); /* no image compares another form */
        rp_op other, form;
        record_as(&other, 6, S_NONBLOCK, -2);
        assert_int_equal(rp__match_kept(st, &other), RP_OFFER_EAGER);
        assert_int_equal(st->match.ndef, 2);
        assert_ptr_equal(st->match.borrowed_seq, s); /* nothing done */
        rp__op_free(&other);
        record_as(&form, 5, S_NONBLOCK, -2);
        assert_int_equal(rp__match_kept(st, &form), RP_OFFER_DEFERRED);
        st->opno++; /* as the caller counts it (hooks.c, joined) */
        assert_int_equal(st->match.ndef, 3);
        assert_ptr_equal(st->match.borrowed_seq, s); /* still borrowed ... */
        assert_int_equal(st->match.borrowed_from, 1);
        assert_int_equal(st->match.nown, 1); /* ... but op 2, a record */
        assert_ptr_equal(st->match.def[2].func, K(5));
        assert_int_equal(st->match.def[2].opno, at + 2);
        if (flushed) {
            /* Another kernel: the candidate goes, what is held is issued in
             * its order, the form as launched. */
            log_[0] = '\0';
            assert_int_equal(offer(6), RP_OFFER_RESOLVE);
            struct rp_resolved r = resolve();
            assert_null(r.replayed);
            assert_int_equal(r.nflushed, 3);
            assert_string_equal(log_, "k1@N k2@N k5@N");
            for (size_t w = 0; w < RP_OWN_SPAN / 64; w++) /* none left for the next run */
                assert_int_equal(st->match.ownbits[w], 0);
            break;
        }
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(4), RP_E_cuLaunchKernel),
                         RP_OFFER_COMPLETE);
        assert_ptr_equal(st->match.complete, s);
        rp__match_write_down(st); /* records of every held op, for drop_held */
        assert_int_equal(st->match.nown, 0);
        assert_int_equal(st->match.ownbits[0], 0);
        assert_ptr_equal(st->match.def[1].func, K(2));
        assert_ptr_equal(st->match.def[2].func, K(5)); /* the record, as it was */
        assert_ptr_equal(st->match.def[3].func, K(4));
        for (int i = 0; i < 4; i++)
            assert_int_equal(st->match.def[i].opno, at + (uint64_t)i);
        drop_held();
        assert_int_equal(s->pins, 0);
    }
    fake = was;
    assert_int_equal(s->pins, 0);
}

/* The fake's node update of a kernel: logged as "setN=kK" (op N of the
 * graph, kernel K). */
static CUresult CUDAAPI f_kernel_set(CUgraphExec x, CUgraphNode n,
                                     const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    (void)x;
    size_t len = strlen(log_);
    snprintf(log_ + len, sizeof log_ - len, "%sset%u=k%u", len ? " " : "",
             (unsigned int)((uintptr_t)n - 0x500), (unsigned int)((uintptr_t)p->func - 0x100));
    return CUDA_SUCCESS;
}

/* A run of `s` (1 2 3 4, op 2's function volatile) held with op 2 launched
 * as its form k5: the record of its own among the borrowed ops; with
 * `part`, the ops held so far launched as a part (a quiet spot). */
static void hold_with_a_form(rp_seq *s, int part)
{
    rp_op first, form;
    record_as(&first, 1, S_NONBLOCK, -2);
    first.opno = st->opno++;
    assert_int_equal(rp__match_join_or_offer(st, &first), RP_OFFER_MATCHES);
    assert_int_equal(rp__match_defer(st, &first), RP_OFFER_DEFERRED);
    assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(2), RP_E_cuLaunchKernel),
                     RP_OFFER_DEFERRED);
    assert_ptr_equal(st->match.borrowed_seq, s);
    record_as(&form, 5, S_NONBLOCK, -2);
    assert_int_equal(rp__match_kept(st, &form), RP_OFFER_DEFERRED);
    assert_null(form.params); /* moved into the stream */
    st->opno++;
    assert_int_equal(st->match.nown, 1);
    if (part)
        assert_int_equal(rp__match_part(st, st->handle), 1);
}

/* A run holding a record of its own among its borrowed ops (a kept form)
 * is replayed with that op's node set to the form, whole or after a part;
 * flushed after a part, the rest is issued as held; freed with the stream
 * while held, whole or after a part, its record goes with it (the
 * sanitizer pass sees a leak or a double free). */
static void a_run_holding_a_kept_form_is_replayed_flushed_and_freed_with_it(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 2, 3, 4, 0}, S_NONBLOCK);
    s->vmask = calloc(4, sizeof *s->vmask);
    s->vmask[2] = RP_VOL_FUNC;
    s->ex.held = calloc(4, sizeof *s->ex.held); /* the executable holds the sequence's values */
    for (int i = 0; i < 4; i++)
        assert_int_equal(rp__op_copy(&s->ex.held[i], &s->det->ops[i]), 0);
    assert_int_equal(rp__seq_add_form(s, 2, K(5)), 0);
    struct rp__driver was = fake;
    fake.cuFuncGetAttribute = f_func_attr;
    fake.cuGraphExecKernelNodeSetParams_v2 = f_kernel_set;
    const char *want[2] = {"set2=k5 graph4@N", "set2=k5 graph4@N(0,1,2) graph4@N(3)"};
    for (int part = 0; part < 2; part++) {
        rp__op_free(&s->ex.held[2]); /* back to the sequence's own function */
        assert_int_equal(rp__op_copy(&s->ex.held[2], &s->det->ops[2]), 0);
        log_[0] = '\0';
        hold_with_a_form(s, part);
        assert_int_equal(rp__match_launch(st, S_NONBLOCK, launch_of(4), RP_E_cuLaunchKernel),
                         RP_OFFER_COMPLETE);
        struct rp_resolved r = resolve();
        assert_ptr_equal(r.replayed, s);
        assert_int_equal(r.nflushed, 0);
        assert_int_equal(st->match.nown, 0);
        assert_string_equal(log_, want[part]); /* the node set to the form first */
        assert_ptr_equal(s->ex.held[2].func, K(5));
    }
    log_[0] = '\0';
    hold_with_a_form(s, 1);
    size_t parted = strlen(log_);
    assert_int_equal(offer(6), RP_OFFER_RESOLVE); /* the candidate goes: the rest flushed */
    struct rp_resolved r = resolve();
    assert_null(r.replayed);
    assert_int_equal(st->match.nown, 0);
    assert_string_equal(log_ + parted, ""); /* nothing held since the part */
    for (int part = 0; part < 2; part++) {
        hold_with_a_form(s, part);
        rp__match_stream_free(st);
        st = rp__stream_of(cs, S_NONBLOCK, 0);
        assert_non_null(st);
    }
    fake = was;
}

/* The fake's answers about memory for the next test: one allocation of 64
 * bytes at 0x9000, asked `asked` times. */
static int asked;
static CUresult CUDAAPI f_range(void *d, CUpointer_attribute a, CUdeviceptr p)
{
    asked++;
    if (p < 0x9000 || p >= 0x9040)
        return CUDA_ERROR_INVALID_VALUE; /* not allocated */
    if (a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
        *(CUdeviceptr *)d = 0x9000;
    else
        *(size_t *)d = 64;
    return CUDA_SUCCESS;
}

/* A memset that is the next op of the one candidate left of a run the
 * general path wrote down joins it without a record, the candidate then
 * lending its records from it on (issue 36: a decoder's step that begins
 * with a memset); one whose volatile destination lies in no allocation
 * does not, and the general path that then takes its record drops the
 * candidate without asking the driver again what the join asked it. */
static void a_memset_joins_a_written_down_run_and_a_dead_one_is_asked_about_once(void **state)
{
    (void)state;
    rp_seq *s = make_seq((const int[]){1, 9, 3, 0}, S_NONBLOCK);
    rp__op_free(&s->det->ops[1]);
    memset_as(&s->det->ops[1], S_NONBLOCK, RP_E_cuMemsetD32Async);
    s->lay[1] = NULL;
    s->vmask = calloc(3, sizeof *s->vmask);
    s->vmask[1] = RP_VOL_DST;
    struct rp__driver was = fake;
    fake.cuPointerGetAttribute = f_range;
    for (int round = 0; round < 2; round++) {
        CUdeviceptr to = round ? 0x7000 : 0x9000;
        assert_int_equal(offer(1), RP_OFFER_DEFERRED); /* the general path: written down */
        assert_null(st->match.borrowed_seq);
        rp_call_other c = {.kind = RP_OP_MEMSET, .entry = RP_E_cuMemsetD32Async, .flags = 0,
                           .ctx = cs->ctx, .stream = S_NONBLOCK, .dst = to, .value = 7,
                           .elem = 4, .bytes = 16};
        asked = 0;
        st->opno = 100 + (uint64_t)round;
        enum rp_offer v = rp__match_join_call(st, &c);
#ifdef NDEBUG /* (a Debug build asks again, to check the answer) */
        assert_int_equal(asked, round ? 1 : 2); /* the range's start (and size) */
#endif
        if (!round) {
            assert_int_equal(v, RP_OFFER_DEFERRED);
            assert_ptr_equal(st->match.borrowed_seq, s);
            assert_int_equal(st->match.borrowed_from, 1);
            assert_int_equal(st->match.borrowed_opno, 100);
            assert_int_equal(st->match.ndef, 2);
            rp__match_write_down(st);
            assert_int_equal(st->match.def[1].dst, 0x9000);
            drop_held();
            continue;
        }
        assert_int_equal(v, RP_OFFER_EAGER);
        assert_int_equal(st->match.ndef, 1);
        assert_null(st->match.borrowed_seq);
        rp_op ms;
        memset_as(&ms, S_NONBLOCK, RP_E_cuMemsetD32Async);
        ms.dst = to;
        ms.opno = st->opno++; /* its position, as rp__learn_next gives it */
        assert_int_equal(rp__match_join_or_offer(st, &ms), RP_OFFER_RESOLVE); /* the candidate went */
#ifdef NDEBUG
        assert_int_equal(asked, 1); /* not asked again */
#endif
        rp__op_free(&ms);
        drop_held();
    }
    fake = was;
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(a_run_equal_to_a_sequence_is_replayed_in_its_place),
        T(a_divergence_flushes_the_held_ops_in_their_order),
        T(a_divergence_another_sequence_takes_sends_nothing_eager),
        T(the_longest_complete_candidate_is_replayed),
        T(a_sequence_is_pinned_while_a_stream_matches_against_it),
        T(several_candidates_alike_so_far_are_followed_without_records),
        T(a_divergence_of_several_candidates_flushes_what_the_fast_path_held),
        T(a_shorter_candidate_completing_leaves_the_longer_to_the_fast_path),
        T(the_fast_path_follows_the_one_candidate_and_its_hint_dies_with_any_sequence),
        T(the_fast_path_begins_a_step_of_another_sequence_than_the_last),
        T(a_sequence_of_another_stream_is_no_candidate),
        T(the_fast_path_takes_no_launch_or_op_with_launch_attributes),
        T(a_flush_onto_the_private_stream_leaves_programmatic_serialization_out),
        T(a_quiet_spot_launches_what_is_held_as_a_part_and_the_rest_completes_the_graph),
        T(two_quiet_spots_launch_three_parts),
        T(a_divergence_after_a_part_flushes_only_what_was_held_since),
        T(at_a_quiet_spot_the_candidate_replayed_most_takes_the_part_and_any_the_rest),
        T(no_part_is_launched_where_the_graph_cannot_run_one),
        T(a_sequence_with_updates_is_a_candidate_however_many_exact_variants_begin_alike),
        T(an_exact_variant_left_for_a_sequence_with_updates_is_counted_passed_over),
        T(a_memset_joins_the_held_run_only_through_the_sequences_entry_point),
        T(a_read_back_at_the_end_of_a_held_run_completes_it),
        T(a_candidate_whose_op_is_no_kernel_is_let_go_by_the_launch_on_the_fast_path),
        T(a_memset_joins_a_run_of_several_candidates_where_the_others_launch),
        T(only_a_launch_a_sequence_may_begin_with_finds_candidates),
        T(a_launch_of_another_form_the_one_candidate_keeps_is_deferred_before_the_general_path),
        T(a_memset_joins_a_written_down_run_and_a_dead_one_is_asked_about_once),
        T(a_run_holding_a_kept_form_is_replayed_flushed_and_freed_with_it),
    };
#undef T
    return cmocka_run_group_tests_name("matcher", tests, group_setup, NULL);
}
