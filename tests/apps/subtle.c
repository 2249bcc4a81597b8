/* subtle - loops whose occurrences differ in one small detail a shim could
 * overlook, each turning such a mistake into a wrong checksum. Every mode
 * runs on a created blocking stream s:
 *   lastbyte  scale_add_scalar's last argument alternates between two values
 *             that differ only in their most significant byte (the last
 *             byte of the kernel's parameter buffer)
 *   lastrare  the same difference, now rare and not first: a fold, then
 *             scale_add_scalar with one last argument, except every tenth
 *             step with the other (the loop is matching a graph of the
 *             usual step when the rare one comes)
 *   gridy     jacobi2d's grid alternates between covering every row and
 *             covering the first rows only (the Y dimension alone changes)
 *   memset    a 32-bit memset whose value alternates, folded into a result
 *   event     a step copies a result into pinned memory and records an
 *             event on the legacy stream, which waits for s (a blocking
 *             stream); the host waits for the event and reads the pinned
 *             memory, with no other synchronization. Every third step
 *             stops one launch short of the usual step before the event.
 *   staging   a host-to-device copy from pageable memory whose bytes change
 *             every step, then a kernel, then an event recorded on s (no
 *             host wait), so that one step's copy is issued while the
 *             previous step's work may still be queued; s is synchronized
 *             every 8 steps
 *   held      the same copy and kernel, queued each step behind a
 *             cuStreamWaitValue32 that the next step's cuStreamWriteValue32
 *             (on another stream) releases: a replay must not make the host
 *             wait for the previous step's graph to read its staging (it
 *             waits on the next step's call)
 *   stagedlast  a step whose last op is a host-to-device copy from
 *             pageable memory (its bytes changing every step), read by the
 *             next step's first kernel; s is synchronized every step
 *   stagingorder  a kernel reading the last step's copy, a long kernel
 *             (over 2^19 floats), then the pageable copy, and a timing
 *             event recorded on s (a boundary, no host wait); the host
 *             then synchronizes the previous step's event only and works
 *             0.5 ms (a pause), so each step is issued while the one before
 *             still runs its long kernel, before its copy
 *   pairs     two scale_add_scalar launches (on x, then on z), each with
 *             its decay drawn every step from three values (fixed seed),
 *             then the fold: contents keep changing and come back, so one
 *             graph with updates gets an executable per content that comes
 *             back; a new executable holds the values it was captured
 *             with, so one swapped in must bring its own record of what its
 *             nodes hold, or a node equal in the last step and this one
 *             goes un-updated
 *   tail      a reduction (reduce_sum_u64, then reduce_finalize_u64, read
 *             back every step) whose parameter block is two pointers and a
 *             32-bit count (20 bytes: not a multiple of 8), the count alone
 *             changing every step, and whose dynamic shared memory changes
 *             between two sizes every other step (1 KiB, 1 KiB, 2 KiB,
 *             2 KiB, ...): what a trace's launch records carry against the
 *             function's last launch (issue 34, class b)
 *   twins     two steps alike in their kernels but for the last: a fold,
 *             scale_add_scalar, the fold again, then scale_add_scalar on z
 *             (step A, its last argument 3) or the fold once more (step
 *             B, its last argument 5), alternating; at steps 30 and 31
 *             one of each mix (A's argument with B's last kernel, and the
 *             reverse). Both are candidates for the steps' first ops, and
 *             the one a mix ends like must not be taken for it: its graph
 *             holds the other argument (the matcher's fast path for
 *             several candidates, issue 36)
 *   smemrare  a step whose scalar changes every step (a graph with updates)
 *             and whose second kernel adds its launch's dynamic shared
 *             memory size to a word read back at the end: 256 bytes,
 *             except every tenth step 512, all else alike (a launch whose
 *             shared memory is not its op's must not be taken for it)
 *   legacyorder  three launches on the legacy stream that write x, then
 *             three on s (a blocking stream) that read it into z, with no
 *             event between them: s's work is ordered after the legacy
 *             stream's by the driver alone (DESIGN.md §2.2), so an engine
 *             that holds the legacy stream's step while s's launches go
 *             ahead gives z from the step before's x; s is synchronized
 *             every fourth step
 *   joinrare  a launch, then a 32-bit memset and a device-to-device copy
 *             that join the run the matcher holds (issue 36), then the
 *             folds of what they wrote: the memset's value differs every
 *             seventh step, the copy's source every fifth (a memset or
 *             copy that differs from the step's op must not be taken for
 *             it, whether its record is made or not)
 *   joinpastend  the same step, its memset's value fixed and its
 *             destination taking two buffers in turn (a volatile field);
 *             every eleventh step the destination lies half past the end
 *             of its buffer: the CPU driver refuses the memset
 *             (INVALID_VALUE, folded into the reads), so a deferred one
 *             answered CUDA_SUCCESS shows. CPU driver only: the real
 *             driver may not check the range (tests/cpudriver/README.md,
 *             "Strictness"); the GPU script does not run it
 *   joinfirst  a step that begins with a 32-bit memset (nothing held: the
 *             general path finds its candidates), then a device-to-device
 *             copy into two buffers in turn (a volatile field) that joins
 *             the run the general path wrote down (issue 36), then a
 *             scale and two folds of what they wrote: the memset's value differs
 *             every seventh step, the copy's source every fifth
 * Usage: subtle MODULE ITERS
 *        [lastbyte|lastrare|gridy|memset|event|staging|held|stagedlast|stagingorder|pairs|tail|twins|
 *         smemrare|legacyorder|joinrare|joinpastend|joinfirst]
 * (default lastbyte) */
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "appcommon.h"

#define N 1024
#define NX 30 /* jacobi2d interior: (NX+2) x (NX+2) cells, 16x16 blocks */
#define NBIG (1 << 19) /* stagingorder's long kernel */

int main(int argc, char **argv)
{
    app_usage(argc, argv, "[lastbyte|lastrare|gridy|memset|event|staging|held|stagedlast|"
                          "stagingorder|pairs|tail|twins|smemrare|legacyorder|joinrare|"
                          "joinpastend|joinfirst]");
    long iters = app_arg(argc, argv, 2, 0, 0, 100000000);
    const char *mode = argc > 3 ? argv[3] : "lastbyte";
    int lastbyte = !strcmp(mode, "lastbyte"), lastrare = !strcmp(mode, "lastrare"),
        gridy = !strcmp(mode, "gridy"),
        memset_ = !strcmp(mode, "memset"), event = !strcmp(mode, "event"),
        staging = !strcmp(mode, "staging"), held = !strcmp(mode, "held"),
        stagedlast = !strcmp(mode, "stagedlast"), stagingorder = !strcmp(mode, "stagingorder"),
        pairs = !strcmp(mode, "pairs"), tail = !strcmp(mode, "tail"),
        twins = !strcmp(mode, "twins"), smemrare = !strcmp(mode, "smemrare"),
        legacyorder = !strcmp(mode, "legacyorder"), joinrare = !strcmp(mode, "joinrare"),
        pastend = !strcmp(mode, "joinpastend"), joinfirst = !strcmp(mode, "joinfirst");
    if (!lastbyte && !lastrare && !gridy && !memset_ && !event && !staging && !held &&
        !stagedlast && !stagingorder && !pairs && !tail && !twins && !smemrare && !legacyorder &&
        !joinrare && !pastend && !joinfirst)
        app_die("the third argument must be lastbyte, lastrare, gridy, memset, event, staging, "
                "held, stagedlast, stagingorder, pairs, tail, twins, smemrare, legacyorder, "
                "joinrare, joinpastend or joinfirst");

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f_scale, f_axpy, f_iota, f_jacobi, f_reduce, f_finalize, f_smem;
    app_open(argv[1], &dev, &ctx, &mod);
    f_reduce = app_function(mod, "reduce_sum_u64");
    f_finalize = app_function(mod, "reduce_finalize_u64");
    f_scale = app_function(mod, "scale_add_scalar");
    f_axpy = app_function(mod, "axpy");
    f_iota = app_function(mod, "iota_f32");
    f_jacobi = app_function(mod, "jacobi2d");
    f_smem = app_function(mod, "smem_size_add");

    CUstream s;
    CK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    CUevent ev;
    CK(cuEventCreate, (&ev, CU_EVENT_DISABLE_TIMING));
    size_t bytes = N * sizeof(float);
    CUdeviceptr x, y, z, m, m2;
    CK(cuMemAlloc, (&x, bytes));
    CK(cuMemAlloc, (&y, bytes));
    CK(cuMemAlloc, (&z, bytes));
    CK(cuMemAlloc, (&m, bytes));
    CK(cuMemAlloc, (&m2, bytes));
    float *pinned;
    CK(cuMemHostAlloc, ((void **)&pinned, bytes, 0));
    float *pageable = malloc(bytes);
    if (pageable == NULL)
        app_die("out of host memory");

    int32_t n = N;
    unsigned int grid = app_blocks(N);
    float s1 = 0.01f, b1 = 1.0f, zero = 0.0f, quarter = 0.25f;
    void *ix[] = { &x, &n, &s1, &b1 };
    void *iz[] = { &z, &n, &quarter, &zero };
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, ix, NULL));
    CK(cuLaunchKernel, (f_iota, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, iz, NULL));
    CK(cuStreamSynchronize, (s));

    /* jacobi2d over (NX+2)^2 cells with pitch NX+2, from x (read as a
     * field) into y, then y copied back into x. */
    tk_grid2d g = { NX, NX, NX + 2, 0.2f };
    int32_t fixed = 1;
    void *jac_args[] = { &y, &x, &z, &fixed, &g };

    float decay = 0.75f, dt = 0.5f, half = 0.5f;
    uint32_t iter = 3;
    void *scale_x[] = { &x, &n, &decay, &dt, &iter };
    void *scale_z[] = { &z, &n, &decay, &dt, &iter };
    float decay2 = 0.75f;
    void *scale_z2[] = { &z, &n, &decay2, &dt, &iter };
    void *fold_x[] = { &z, &x, &half, &n };  /* z += x/2 */
    void *fold_y[] = { &z, &y, &half, &n };  /* z += y/2 */
    void *fold_m[] = { &z, &m, &half, &n };  /* z += m/2 */
    CUdeviceptr mt = m; /* joinrare's memset destination */
    void *fold_mt[] = { &z, &mt, &half, &n };
    CUdeviceptr yt = y; /* joinfirst's copy destination */
    void *fold_yt[] = { &z, &yt, &half, &n };
    uint64_t reads = 0x7375627400000000ull;
    CUstream w = NULL;
    CUdeviceptr flag = 0;
    if (held) {
        CK(cuStreamCreate, (&w, CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc, (&flag, sizeof(uint32_t)));
        CK(cuMemsetD32, (flag, 0, 1));
        CK(cuCtxSynchronize, ());
    }
    CUdeviceptr big = 0;
    CUevent tev[2] = {NULL, NULL};
    int32_t nbig = NBIG;
    void *scale_big[] = { &big, &nbig, &decay, &dt, &iter };
    if (stagedlast || stagingorder) { /* y is read before the first copy */
        CK(cuMemsetD32, (y, 0, N));
        CK(cuCtxSynchronize, ());
    }
    if (stagingorder) {
        CK(cuMemAlloc, (&big, NBIG * sizeof(float)));
        CK(cuMemsetD32, (big, 0, NBIG));
        CK(cuEventCreate, (&tev[0], CU_EVENT_DEFAULT)); /* timing events: boundaries */
        CK(cuEventCreate, (&tev[1], CU_EVENT_DEFAULT));
        CK(cuCtxSynchronize, ());
    }
    uint64_t draw = 0x7061697273ull;
    int32_t rn = N, nparts = (int32_t)grid;
    void *reduce_args[] = { &m, &x, &rn };           /* partials in m, x as 32-bit words */
    void *finalize_args[] = { &y, &m, &nparts };     /* the sum in y */
    void *smem_args[] = { &m };                      /* a 64-bit sum in m */
    if (smemrare) {
        CK(cuMemsetD32, (m, 0, 2));
        CK(cuCtxSynchronize, ());
    }
    for (long it = 0; it < iters; it++) {
        if (tail) {
            rn = N - (int32_t)(it % 5) * 7;
            unsigned int shmem = TK_BLOCK * (unsigned int)sizeof(uint64_t) * (1u + (unsigned)(it / 2 % 2));
            CK(cuLaunchKernel, (f_reduce, grid, 1, 1, TK_BLOCK, 1, 1, shmem, s, reduce_args, NULL));
            CK(cuLaunchKernel, (f_finalize, 1, 1, 1, 1, 1, 1, 0, s, finalize_args, NULL));
            CK(cuMemcpyDtoHAsync, (pinned, y, sizeof(uint64_t), s));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuStreamSynchronize, (s));
            reads = app_hash(reads, pinned, sizeof(uint64_t));
        } else if (pairs) {
            static const float decays[3] = { 0.75f, 0.5f, 0.875f };
            decay = decays[app_rand_in(&draw, 0, 2)];
            decay2 = decays[app_rand_in(&draw, 0, 2)];
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z2, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (twins) {
            int b = it == 30 ? 0 : it == 31 ? 1 : (int)(it & 1); /* B's argument */
            int b_end = it == 30 ? 1 : it == 31 ? 0 : b;          /* B's last kernel */
            iter = b ? 5u : 3u;
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            if (b_end)
                CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            else
                CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (legacyorder) {
            iter = 3u + (uint32_t)(it % 4); /* every step's x differs */
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY, fold_x, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, CU_STREAM_LEGACY, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            if (it % 4 == 3)
                CK(cuStreamSynchronize, (s));
        } else if (lastbyte) {
            iter = (it & 1) ? 3u : 3u + (1u << 24);
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (smemrare) {
            iter = (uint32_t)it;
            unsigned int shmem = it % 10 == 9 ? 512u : 256u;
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_smem, 1, 1, 1, 1, 1, 1, shmem, s, smem_args, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (lastrare) {
            iter = it % 10 == 9 ? 3u + (1u << 24) : 3u;
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (gridy) {
            unsigned int gy = (it & 1) ? 1u : 2u; /* 2 x 16 rows cover all 32 */
            CK(cuLaunchKernel, (f_jacobi, 2, gy, 1, 16, 16, 1, 0, s, jac_args, NULL));
            CK(cuMemcpyDtoDAsync, (x, y, (size_t)(NX + 2) * (NX + 2) * sizeof(float), s));
            CK(cuStreamSynchronize, (s));
        } else if (joinrare || pastend) {
            unsigned int v = joinrare && it % 7 == 6 ? 0x40000000u : 0x3f800000u; /* 2.0f, 1.0f */
            mt = pastend && it % 2 ? m2 : m;
            CUdeviceptr to = pastend && it % 11 == 10 ? mt + bytes / 2 : mt; /* half past the end */
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CUresult r = cuMemsetD32Async(to, v, N, s);
            reads = app_hash(reads, &r, sizeof r);
            CK(cuMemcpyDtoDAsync, (y, joinrare && it % 5 == 4 ? z : x, bytes, s));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_mt, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_y, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (joinfirst) {
            unsigned int v = it % 7 == 6 ? 0x40000000u : 0x3f800000u; /* 2.0f, 1.0f */
            yt = it % 2 ? m2 : y;
            CK(cuMemsetD32Async, (m, v, N, s));
            CK(cuMemcpyDtoDAsync, (yt, it % 5 == 4 ? z : x, bytes, s));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_m, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_yt, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (memset_) {
            unsigned int v = (it & 1) ? 0x3f800000u : 0x40000000u; /* 1.0f, 2.0f */
            CK(cuMemsetD32Async, (m, v, N, s));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_m, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z, NULL));
            CK(cuStreamSynchronize, (s));
        } else if (event) {
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_x, NULL));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_x, NULL));
            CK(cuMemcpyDtoHAsync, (pinned, z, bytes, s));
            if (it % 3 != 2)
                CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z, NULL));
            CK(cuEventRecord, (ev, CU_STREAM_LEGACY));
            CK(cuEventSynchronize, (ev));
            reads = app_hash(reads, pinned, bytes);
        } else if (held) {
            CK(cuStreamWaitValue32, (s, flag, (cuuint32_t)(it + 1), CU_STREAM_WAIT_VALUE_GEQ));
            for (int i = 0; i < N; i++)
                pageable[i] = (float)((it * 7 + i) % 13) * 0.25f;
            CK(cuMemcpyHtoDAsync, (y, pageable, bytes, s));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_y, NULL));
            CK(cuStreamWriteValue32, (w, flag, (cuuint32_t)it, 0)); /* the last step's wait */
        } else if (stagedlast) {
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_y, NULL));
            CK(cuLaunchKernel, (f_scale, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, scale_z, NULL));
            for (int i = 0; i < N; i++)
                pageable[i] = (float)((it * 3 + i) % 17) * 0.125f;
            CK(cuMemcpyHtoDAsync, (y, pageable, bytes, s)); /* read by the next step */
            CK(cuStreamSynchronize, (s));
        } else if (stagingorder) {
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_y, NULL));
            CK(cuLaunchKernel, (f_scale, app_blocks(NBIG), 1, 1, TK_BLOCK, 1, 1, 0, s, scale_big,
                                NULL));
            for (int i = 0; i < N; i++)
                pageable[i] = (float)((it * 5 + i) % 19) * 0.125f;
            CK(cuMemcpyHtoDAsync, (y, pageable, bytes, s)); /* runs after the long kernel */
            CK(cuEventRecord, (tev[it & 1], s));
            if (it > 0) { /* the previous step is done; this one may still run */
                CK(cuEventSynchronize, (tev[(it - 1) & 1]));
                struct timespec host_work = {0, 500 * 1000}; /* shorter than the long kernel */
                nanosleep(&host_work, NULL);
            }
        } else {
            for (int i = 0; i < N; i++)
                pageable[i] = (float)((it * 5 + i) % 11) * 0.25f;
            CK(cuMemcpyHtoDAsync, (y, pageable, bytes, s));
            CK(cuLaunchKernel, (f_axpy, grid, 1, 1, TK_BLOCK, 1, 1, 0, s, fold_y, NULL));
            CK(cuEventRecord, (ev, s));
            if ((it + 1) % 8 == 0)
                CK(cuStreamSynchronize, (s));
        }
    }
    if (held)
        CK(cuStreamWriteValue32, (w, flag, (cuuint32_t)iters + 1, 0));
    CK(cuStreamSynchronize, (s));

    float h[N];
    CK(cuMemcpyDtoH, (h, z, bytes));
    app_checksum("subtle-z", app_hash(0x7375627ull, h, bytes));
    CK(cuMemcpyDtoH, (h, x, bytes));
    app_checksum("subtle-x", app_hash(0x78ull, h, bytes));
    if (smemrare) {
        uint64_t acc;
        CK(cuMemcpyDtoH, (&acc, m, sizeof acc));
        reads = app_hash(reads, &acc, sizeof acc);
    }
    app_checksum("subtle-reads", reads);

    free(pageable);
    CK(cuMemFreeHost, (pinned));
    CK(cuMemFree, (x));
    CK(cuMemFree, (y));
    CK(cuMemFree, (z));
    CK(cuMemFree, (m));
    CK(cuMemFree, (m2));
    CK(cuEventDestroy, (ev));
    if (held) {
        CK(cuMemFree, (flag));
        CK(cuStreamDestroy, (w));
    }
    if (stagingorder) {
        CK(cuMemFree, (big));
        CK(cuEventDestroy, (tev[0]));
        CK(cuEventDestroy, (tev[1]));
    }
    CK(cuStreamDestroy, (s));
    app_close(dev, mod);
    return 0;
}
