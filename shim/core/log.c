/* Logging: one line per message, "reprise: " first, on stderr.
 *
 * The logger runs inside dlsym, inside init and at exit, so it formats into a
 * fixed stack buffer and writes it with one write(2): no stdio (which locks
 * and may allocate), no allocation, and a thread-local guard so that a
 * message raised while logging is dropped instead of recursing.  Formats are
 * limited to what vsnprintf handles without allocating (%s %d %zu %p ...). */
#include "core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int rp__log_level = RP_LOG_WARN;

static RP_TLS bool logging;

void rp__log(int level, const char *fmt, ...)
{
    if (level > rp__log_level || logging)
        return;
    logging = true;
    int saved_errno = errno;
    char buf[512];
    static const char prefix[] = "reprise: ";
    size_t n = sizeof prefix - 1;
    __builtin_memcpy(buf, prefix, n);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    va_end(ap);
    if (m > 0)
        n += (size_t)m < sizeof buf - n - 1 ? (size_t)m : sizeof buf - n - 2;
    buf[n++] = '\n';
    /* A short or failed write to stderr is not worth reporting anywhere. */
    ssize_t w = write(STDERR_FILENO, buf, n);
    (void)w;
    errno = saved_errno;
    logging = false;
}
