/* errmsg.h — a formatter for a caller's error buffer: "<where>: <message>" (or just the
 * message), always one line (line breaks become spaces), truncated to the buffer. Library code
 * writes one line into err either through it or with snprintf(err, errlen, ...) directly, as
 * most older code does; the line's shape is the same either way. */
#ifndef A4W4_ERRMSG_H
#define A4W4_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Format into err[errlen] (nothing when err is NULL or errlen 0): "where: " when where is not
 * NULL, then the printf-style message; line breaks become spaces. Returns status, so a
 * failing function can `return a4w4_errmsg(err, errlen, A4W4_ST_BADINPUT, path, ...)`. */
int a4w4_errmsg(char *err, size_t errlen, int status, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The same with a va_list. */
int a4w4_verrmsg(char *err, size_t errlen, int status, const char *where, const char *fmt,
                 va_list ap) __attribute__((format(printf, 5, 0)));

#endif
