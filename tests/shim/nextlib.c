/* Two copies of one tiny library for the RTLD_NEXT test: built as
 * libnext_a.so (NEXT_VALUE 1) and libnext_b.so (NEXT_VALUE 2), linked in
 * that order.  From inside libnext_a, dlsym(RTLD_NEXT, "next_value") must
 * find libnext_b's: glibc resolves RTLD_NEXT relative to the caller, and the
 * shim's dlsym override must keep the caller the caller. */
#include <dlfcn.h>

__attribute__((visibility("default"))) int next_value(void)
{
    return NEXT_VALUE;
}

#if NEXT_VALUE == 1
__attribute__((visibility("default"))) int next_value_after_a(void)
{
    int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "next_value");
    return f ? f() : -1;
}
#endif
