/* program.c - the program's own captures (DESIGN.md §2.5; docs/engine.md,
 * "The program's own captures"): from the first instruction of a begin
 * nothing new is deferred, everything deferred is resolved, and while the
 * capture is open the engine steps aside. And the process's edges: a
 * forked child touches none of the parent's CUDA state; at exit, work
 * still deferred reaches the driver. */
#include "program.h"

#include "streams.h"

#include <stdlib.h>

/* The program begins its own capture: no new deferrals from here on,
 * everything deferred is resolved, and work another thread resolved for a
 * per-thread stream is waited for (its owner's next calls go straight to
 * the driver and could not wait on the device). */
CUresult rp__program_capture_prepare(void)
{
    atomic_fetch_add(&rp__eng.prog_pending, 1);
    rp__note_issue();
    if (rp__stepping_aside())
        return CUDA_SUCCESS; /* already empty */
    return rp__resolve_every_ctx(RP_THEN_SETTLE);
}

void rp__program_capture_begun(CUresult rc)
{
    if (rc == CUDA_SUCCESS) {
        atomic_fetch_add(&rp__eng.prog_captures, 1);
        atomic_fetch_add(&rp__eng.prog_captures_total, 1);
    } else {
        atomic_fetch_sub(&rp__eng.prog_pending, 1);
    }
}

void rp__program_capture_ended(CUresult rc)
{
    rp__note_issue(); /* calls made while the engine stepped aside */
    /* 908 (wrong thread) and ILLEGAL_STATE (not capturing) leave things as
     * they were; any other outcome closed the capture. */
    if (rc != CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD && rc != CUDA_ERROR_ILLEGAL_STATE &&
        atomic_load(&rp__eng.prog_captures) > 0) {
        atomic_fetch_sub(&rp__eng.prog_captures, 1);
        atomic_fetch_sub(&rp__eng.prog_pending, 1);
    }
}

uint64_t rp__engine_program_captures(void)
{
    return atomic_load(&rp__eng.prog_captures_total);
}

void rp__engine_forked(void)
{
    atomic_store(&rp__eng.forked_child, 1);
}

bool rp__engine_in_forked_child(void)
{
    return atomic_load(&rp__eng.forked_child) != 0;
}

static void exit_hook(void)
{
    atomic_store(&rp__eng.exiting, 1);
    if (!atomic_load(&rp__eng.forked_child))
        rp__engine_resolve_all();
}

void rp__arm_exit_hook(void)
{
    /* Registered at the first deferral, after the driver's own exit
     * handlers (cuInit has run by then), so it runs before them. */
    if (!atomic_load_explicit(&rp__eng.exit_armed, memory_order_relaxed) &&
        !atomic_exchange(&rp__eng.exit_armed, 1))
        atexit(exit_hook);
}

CUresult rp__engine_resolve_all(void)
{
    return rp__resolve_every_ctx(RP_THEN_NOTHING);
}
