/* isolate.h — run a piece of outside code (a plugin's query, init, gemm) in a forked child
 * process with a deadline, so that a crash or a hang becomes a reported outcome of that one
 * call instead of the end of the harness (contracts §4.1: a verdict covers every item; an
 * item whose kernel crashed is a failure, never a missing row).
 *
 * Data goes in through the child's copy-on-write view of the parent's memory and comes back
 * through a4w4_shared_alloc buffers (MAP_SHARED | MAP_ANONYMOUS), mapped before the fork. The
 * child runs fn only: no OpenMP region, no stdio flush, no atexit handler of the parent
 * (it leaves through _exit). */
#ifndef A4W4_ISOLATE_H
#define A4W4_ISOLATE_H

#include <stddef.h>

/* How an isolated call ended. */
typedef enum {
    A4W4_ISO_OK = 0,      /* fn returned 0 and the child exited 0 */
    A4W4_ISO_CRASHED = 1, /* the child died of a signal (why: "SIGSEGV (signal 11)") */
    A4W4_ISO_TIMEOUT = 2, /* the deadline passed; the child was killed (SIGKILL) and reaped */
    A4W4_ISO_EXITED = 3,  /* the child exited nonzero (fn's return, an exit() in outside code,
                             or a sanitizer's exit code after its report) */
    A4W4_ISO_ERROR = 4    /* fork or wait failed here (why says which); fn may not have run */
} a4w4_iso_status;

/* bytes of zeroed memory shared with children forked later (page-rounded mapping); NULL
 * when bytes is 0 or the mapping fails. Release with a4w4_shared_free(p, bytes). */
void *a4w4_shared_alloc(size_t bytes);
void a4w4_shared_free(void *p, size_t bytes);

/* Fork; in the child run fn(arg) and _exit with its return (0..255). The parent waits at
 * most timeout_s seconds of CLOCK_MONOTONIC (<= 0: no deadline), then SIGKILLs and reaps the
 * child. The child leads its own process group; the whole group is SIGKILLed when the child
 * exits or times out, so a helper process fn forked neither outlives the call nor keeps this
 * process's stdout open. Returns the outcome; why (always written, "" for OK) says it in one line:
 * "SIGSEGV (signal 11)", "timed out after 2 s", "exited 3", "exited 87 (sanitizer
 * report?)" (86 too), or the failed call. Thread-safe (several threads may each run a child).
 * While a child runs, SIGTERM, SIGINT and SIGHUP to this process (one it ignores stays
 * ignored) SIGKILL every running child's process group, then take their old action (the
 * child itself starts with the old actions); the child is SIGKILLed when this process dies
 * (Linux: PR_SET_PDEATHSIG, also when the parent died before it was set). */
a4w4_iso_status a4w4_isolate_run(int (*fn)(void *), void *arg, double timeout_s, char *why,
                                 size_t whylen);

/* Run `/bin/sh -c cmd` (an outside runner, contracts §4.4) as a4w4_isolate_run runs fn: its
 * own process group, killed with everything it started when sh exits, at the deadline
 * (timeout_s seconds; <= 0: none) or when this process is told to stop. Returns sh's exit
 * status (0..255; 127: sh could not start), 128 + N when it died of signal N, 124 when the
 * deadline passed, -1 when it could not be run (why: the failed call). */
int a4w4_isolate_command(const char *cmd, double timeout_s, char *why, size_t whylen);

#endif
