/* errmsg.c — see errmsg.h. */
#include "errmsg.h"

#include <stdio.h>

int a4w4_verrmsg(char *err, size_t errlen, int status, const char *where, const char *fmt,
                 va_list ap)
{
    if (!err || !errlen)
        return status;
    int k = where ? snprintf(err, errlen, "%s: ", where) : 0;
    if (k < 0)
        k = 0;
    if ((size_t)k < errlen)
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    for (char *p = err; *p; p++) /* one line, whatever the inputs held */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return status;
}

int a4w4_errmsg(char *err, size_t errlen, int status, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    a4w4_verrmsg(err, errlen, status, where, fmt, ap);
    va_end(ap);
    return status;
}
