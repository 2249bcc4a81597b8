/* play_launch.c - a recorded launch's arguments, as the player issues it:
 * the function the player made of the recorded name and layout
 * (play_make.c), the recorded geometry, stream and attributes, and the
 * recorded parameter bytes verbatim in the recorded form: kernelParams (one
 * pointer per parameter the player's PTX declares, its padding parameters
 * included, each into the bytes at the recorded offset) or an `extra`
 * buffer. An empty kernel dereferences nothing, so pointers in the
 * parameters need no translation. Under state_mu (play_issue.c). */
#include "play.h"

#include <stdlib.h>
#include <string.h>

#define P pl__P

void pl_launch_args(const struct rt_call *k, uint64_t *a, struct pl_launch *L, struct pl_iss *st)
{
    static void **kp;
    static size_t kpcap;
    static unsigned char *zeros;
    static size_t nzeros;
    void *f = pl_func_of(k->func, st);
    const struct rt_func *rf = k->func && k->func < P.r.nfuncs ? &P.r.funcs[k->func] : NULL;
    size_t psize = rf ? rf->psize : 0;
    size_t need = psize > k->extra_size ? psize : (size_t)k->extra_size;
    if (k->form == RP_TLFORM_EXTRA && k->extra_size > psize && k->extra_size > 65536) {
        /* An `extra` buffer larger than any parameter buffer: not made. */
        pl_refuse(st, W_FUNCTION);
        return;
    }
    if (need + 8 > nzeros) {
        free(zeros);
        nzeros = need + 4096;
        zeros = calloc(1, nzeros);
        if (!zeros)
            pl_stop("out of memory for %zu bytes of kernel parameters", nzeros);
    }
    unsigned char *pbuf = k->params ? (unsigned char *)k->params : zeros;
    uint32_t np = rf ? rf->nparams : 0;
    if (2 * (size_t)np + 1 > kpcap) {
        kpcap = 2 * (size_t)np + 64;
        free(kp);
        kp = malloc(kpcap * sizeof *kp);
        if (!kp)
            pl_stop("out of memory for %u kernel parameters", np);
    }
    /* The same placement as the PTX's (play_make.c, ptx_for). */
    size_t nk = 0, end = 0;
    for (uint32_t p = 0; p < np; p++) {
        size_t off = rf->off[p], size = rf->size[p] ? rf->size[p] : 1, align = 1;
        if (off < end)
            off = end;
        for (size_t al = 4096; al >= 1; al /= 2)
            if (off % al == 0 && ((end + al - 1) & ~(al - 1)) == off) {
                align = al;
                break;
            }
        if (((end + align - 1) & ~(align - 1)) != off)
            kp[nk++] = zeros;
        kp[nk++] = off < psize ? pbuf + off : zeros;
        end = off + size;
    }
    if (!nk)
        kp[nk++] = zeros; /* a kernelParams array must exist where one was passed */
    void **params = NULL, **ex = NULL;
    L->extra_size = k->form == RP_TLFORM_EXTRA ? (size_t)k->extra_size : psize;
    switch (k->form) {
    case RP_TLFORM_PARAMS: params = kp; break;
    case RP_TLFORM_PARAMS_END:
        params = kp;
        L->extra[0] = CU_LAUNCH_PARAM_END;
        ex = L->extra;
        break;
    case RP_TLFORM_EXTRA:
    case RP_TLFORM_BOTH:
        L->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
        L->extra[1] = pbuf;
        L->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
        L->extra[3] = &L->extra_size;
        L->extra[4] = CU_LAUNCH_PARAM_END;
        ex = L->extra;
        params = k->form == RP_TLFORM_BOTH ? kp : NULL;
        break;
    default: break;
    }
    CUstream s = pl_stream_of(k->stream, st);
    if (k->family == RP_TRF_LAUNCH_EX) {
        CUlaunchConfig *cfg = &L->cfg;
        memset(cfg, 0, sizeof *cfg);
        cfg->gridDimX = k->grid[0], cfg->gridDimY = k->grid[1], cfg->gridDimZ = k->grid[2];
        cfg->blockDimX = k->block[0], cfg->blockDimY = k->block[1], cfg->blockDimZ = k->block[2];
        cfg->sharedMemBytes = k->shmem;
        cfg->hStream = s;
        unsigned na = k->nattrs < 16 ? k->nattrs : 16;
        for (unsigned i = 0; i < na; i++) {
            memset(&L->attrs[i], 0, sizeof L->attrs[i]);
            L->attrs[i].id = (CUlaunchAttributeID)k->attrs[i].id;
            memcpy(&L->attrs[i].value, k->attrs[i].value, sizeof L->attrs[i].value);
        }
        cfg->attrs = na ? L->attrs : NULL;
        cfg->numAttrs = na;
        a[0] = k->form == RP_TLFORM_NO_CONFIG ? 0 : (uint64_t)(uintptr_t)cfg;
        a[1] = (uint64_t)(uintptr_t)f;
        a[2] = (uint64_t)(uintptr_t)params;
        a[3] = (uint64_t)(uintptr_t)ex;
    } else {
        a[0] = (uint64_t)(uintptr_t)f;
        for (int i = 0; i < 3; i++) {
            a[1 + i] = k->grid[i];
            a[4 + i] = k->block[i];
        }
        a[7] = k->shmem;
        a[8] = (uint64_t)(uintptr_t)s;
        a[9] = (uint64_t)(uintptr_t)params;
        a[10] = (uint64_t)(uintptr_t)ex;
    }
    if (k->func && !f && !st->live_ok && st->why == W_FUNCTION)
        st->ok = true; /* the program's launch failed too: issued with no function */
}

