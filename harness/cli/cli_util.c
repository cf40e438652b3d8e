/* cli_util.c — the one-line error convention, --help detection and the status -> exit code
 * map every command shares. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "a4w4check.h"

void a4w4_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("a4w4check: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int a4w4_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    }
    return 0;
}

int a4w4_exit_code(int status)
{
    switch (status) {
    case A4W4_ST_OK:
    case A4W4_ST_NA: return A4W4_EXIT_PASS;
    case A4W4_ST_MISMATCH: return A4W4_EXIT_MISMATCH;
    case A4W4_ST_NOGPU: return A4W4_EXIT_NOGPU;
    case A4W4_ST_IO:
    case A4W4_ST_NOMEM: return A4W4_EXIT_IO;
    case A4W4_ST_BADINPUT:
    default: return A4W4_EXIT_BADINPUT;
    }
}
