/* trace_enc.h - the records of launches and of memory operations
 * (trace_enc.c). Each writes the record of call c, whose arguments are `a`
 * (64-bit words in entries.h's order); under the writer's lock. */
#ifndef RP_TRACE_ENC_H
#define RP_TRACE_ENC_H

#include "trace_defs.h"

/* cuLaunchKernel[_ptsz], cuLaunchCooperativeKernel[_ptsz], cuLaunchKernelEx[_ptsz] */
void rp__tr_enc_launch(struct tr_call *c, const uint64_t *a);
/* the 1-D copies, synchronous and async, peer included */
void rp__tr_enc_copy(struct tr_call *c, const uint64_t *a);
/* cuMemsetD8/16/32 and the 2-D forms, synchronous and async */
void rp__tr_enc_memset(struct tr_call *c, const uint64_t *a);
/* device, pitched, managed, pinned host and stream-ordered allocations */
void rp__tr_enc_alloc(struct tr_call *c, const uint64_t *a);
/* frees and cuMemHostUnregister */
void rp__tr_enc_free(struct tr_call *c, const uint64_t *a);
/* cuMemHostRegister */
void rp__tr_enc_register(struct tr_call *c, const uint64_t *a);

#endif /* RP_TRACE_ENC_H */
