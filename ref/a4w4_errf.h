/* a4w4_errf.h — ref's one way to fill a caller's error buffer (ref/ includes nothing above
 * itself; the harness has io/errmsg.h). */
#ifndef A4W4_ERRF_H
#define A4W4_ERRF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int errf(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Format one line into err (when err and errlen are non-zero) and return status. */
static inline int errf(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

#endif
