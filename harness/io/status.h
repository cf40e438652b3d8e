/* status.h — what a harness library call (io/, engine/, backends/) reports to its caller.
 *
 * One enum for every room, so a status means the same thing wherever it comes from. Library
 * code returns these and never an exit code; only harness/cli turns a status into the process's
 * exit code (a4w4_exit_code in cli/cli_util.c, README "Exit codes").
 *
 * Beside it, and not to be confused with it:
 *   - ref/'s a4w4_status (A4W4_OK = 0, A4W4_EINVAL, A4W4_EUNSUPPORTED, A4W4_ENOMEM: zero or
 *     negative) is what the oracles, the layout functions and a backend's run/layouts/quantize
 *     hooks return about one computation;
 *   - safetensors.h's dtypes A4W4_DT_U8, A4W4_DT_BF16, ... are tensor element types.
 * The values here are positive (A4W4_ST_OK = 0 = A4W4_OK) and none equals an exit code, so a
 * status returned as an exit code unmapped shows at once. */
#ifndef A4W4_STATUS_H
#define A4W4_STATUS_H

typedef enum {
    A4W4_ST_OK = 0,         /* done; every check it made passed */
    A4W4_ST_MISMATCH = 101, /* done; at least one check failed (bits differ) */
    A4W4_ST_BADINPUT = 102, /* malformed input, an impossible shape, a bad name or argument */
    A4W4_ST_NA = 103,       /* not applicable: nothing was checked (a verdict, not an error) */
    A4W4_ST_NOGPU = 104,    /* a GPU was needed and none is usable here */
    A4W4_ST_IO = 105,       /* a file could not be read or written */
    A4W4_ST_NOMEM = 106     /* out of memory */
} a4w4_hstatus;

/* "ok", "mismatch", "bad input", "not applicable", "no GPU", "I/O error", "out of memory";
 * "unknown status" for any other value (static storage). */
static inline const char *a4w4_hstatus_name(int st)
{
    switch (st) {
    case A4W4_ST_OK: return "ok";
    case A4W4_ST_MISMATCH: return "mismatch";
    case A4W4_ST_BADINPUT: return "bad input";
    case A4W4_ST_NA: return "not applicable";
    case A4W4_ST_NOGPU: return "no GPU";
    case A4W4_ST_IO: return "I/O error";
    case A4W4_ST_NOMEM: return "out of memory";
    default: return "unknown status";
    }
}

#endif
