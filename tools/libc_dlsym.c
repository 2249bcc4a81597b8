/* libc_dlsym.c - the dlsym names.c looks the demangler up with, outside the
 * shim: libc's own (inside the shim, driver.c gives it the real dlsym rather
 * than the shim's exported override). Linked into the reprise command and
 * the unit tests of names.c. */
#include <dlfcn.h>

void *(*rp__dlsym_real(void))(void *, const char *);
void *(*rp__dlsym_real(void))(void *, const char *)
{
    return dlsym;
}
