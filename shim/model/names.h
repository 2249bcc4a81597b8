/* names.h - kernel names as a person reads them: a C++ kernel's mangled
 * name demangled by the C++ runtime's own demangler (__cxa_demangle, looked
 * up at run time, so that nothing links libstdc++), and shortened to fit a
 * table's column. Shared by the shim's summary and `reprise report`
 * (tools/), which is why it depends on nothing else of the shim. The stats
 * file keeps the raw names. */
#ifndef REPRISE_NAMES_H
#define REPRISE_NAMES_H

#include <stddef.h>

/* Write the demangled form of `raw` to `out` (`n` bytes, n > 0). Returns 1
 * when `raw` was demangled; 0 when it was copied as it is (not a mangled
 * C++ name, no demangler in the process or in libstdc++.so.6, or the
 * demangler refused it). `out` is always a string, cut to fit. */
int rp__name_demangle(const char *raw, char *out, size_t n);

/* A form of `raw` at most `width` characters long (width >= 8, n > width)
 * for a table: demangled, then without the return type and the parameter
 * list; if still too long, template arguments become "<...>"; then leading
 * namespaces and classes are dropped; then the end is cut and marked
 * "...". A name that fits is left whole. */
void rp__name_short(const char *raw, char *out, size_t n, size_t width);

/* Two kernels' names as "A -> B", for a kernel that switched: A as
 * rp__name_short gives it, B shortened to where it differs from A
 * ("softmax_warp_forward<float, float, float, 5> -> <..., 6>"); names
 * with nothing in common but a prefix are both given whole. */
void rp__name_pair(const char *a, const char *b, char *out, size_t n, size_t width);

#endif
