/* The exported dlsym: asks rp__dlsym_route (dlsym.c), and forwards anything
 * it does not route to the real dlsym as if we were not there.
 *
 * "As if we were not there" matters for RTLD_NEXT: glibc resolves it
 * relative to the object that called dlsym, found from the return address.
 * A C function that calls the real dlsym makes libreprise the caller, and a
 * preloaded tool asking dlsym(RTLD_NEXT, "malloc") after us would then get
 * its own malloc back.  So on x86-64 and AArch64 dlsym is a few instructions
 * of assembly that call the router with the return address and, when it
 * declines, *jump* to the real dlsym with the original arguments and return
 * address intact.  Elsewhere a C fallback forwards with a call (RTLD_NEXT
 * then resolves relative to libreprise; documented). */
#include "core.h"

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".p2align 4\n"
        "dlsym:\n"
        ".cfi_startproc\n"
#if defined(__CET__)
        "endbr64\n"
#endif
        "pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "subq $8, %rsp\n" /* 16-byte alignment for the call */
        ".cfi_adjust_cfa_offset 8\n"
        "movq 24(%rsp), %rdx\n" /* caller = our return address */
        "call rp__dlsym_route\n"
        "addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "testq %rax, %rax\n"
        "jz 1f\n"
        "ret\n"
        "1:\n"
        "jmpq *rp__dlsym_next(%rip)\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        ".p2align 4\n"
        "dlsym:\n"
        ".cfi_startproc\n"
#if defined(__ARM_FEATURE_BTI_DEFAULT)
        "bti c\n"
#endif
        "stp x29, x30, [sp, #-32]!\n"
        ".cfi_def_cfa_offset 32\n"
        ".cfi_offset 29, -32\n"
        ".cfi_offset 30, -24\n"
        "mov x29, sp\n"
        "stp x0, x1, [sp, #16]\n"
        "mov x2, x30\n" /* caller = our return address */
        "bl rp__dlsym_route\n"
        "cbz x0, 1f\n"
        "ldp x29, x30, [sp], #32\n"
        ".cfi_remember_state\n"
        ".cfi_restore 29\n"
        ".cfi_restore 30\n"
        ".cfi_def_cfa_offset 0\n"
        "ret\n"
        "1:\n"
        ".cfi_restore_state\n"
        "ldp x0, x1, [sp, #16]\n"
        "ldp x29, x30, [sp], #32\n"
        ".cfi_restore 29\n"
        ".cfi_restore 30\n"
        ".cfi_def_cfa_offset 0\n"
        "adrp x16, rp__dlsym_next\n"
        "ldr x16, [x16, #:lo12:rp__dlsym_next]\n"
        "br x16\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
#else
RP_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
{
    void *w = rp__dlsym_route(handle, name, __builtin_return_address(0));
    if (w != NULL)
        return w;
    return atomic_load_explicit(&rp__dlsym_next, memory_order_acquire)(handle, name);
}
#endif
