/* progress.h — progress lines on stderr for the long commands (run, hazards): a live line on
 * a terminal, plain lines at most every 5 s otherwise. */
#ifndef A4W4_PROGRESS_H
#define A4W4_PROGRESS_H

#include <stddef.h>

typedef struct {
    const char *cmd; /* "run": lines read "a4w4check run: [done/total] ..." */
    int tty, quiet;  /* stderr is a terminal; quiet: print nothing */
    double t0, last; /* start and last line, a4w4_now() seconds */
} a4w4_progress;

/* Start the clock; last is the start too when last_is_start, else 0 (a first line at once). */
void a4w4_progress_start(a4w4_progress *p, const char *cmd, int quiet, int last_is_start);

/* After item `what` (run): "[done/total] F failing, Es elapsed, ETA Ts; what" — on a terminal
 * one live line (ended by final), else a line for the first item, the final call and at most
 * every 5 s between. */
void a4w4_progress_item(a4w4_progress *p, size_t done, size_t total, int fails, const char *what,
                        int final);

/* After each cell (hazards; call under the caller's lock): "[done/total] F failing, Es
 * elapsed, ETA Ts", at most every 5 s and when done == total. */
void a4w4_progress_count(a4w4_progress *p, size_t done, size_t total, int fails);

#endif
