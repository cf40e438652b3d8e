/* test_isolate.c — a call in a forked child with a deadline (harness/engine/isolate.c): a
 * normal child's output arrives through shared memory; a child that dies of SIGSEGV or
 * SIGABRT, exits 3, or sleeps past the deadline is reported as such (and a timed-out child is
 * really gone); plus the plugin backend's deadline rule (backends/registry.h). */
#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"
#include "registry.h"

/* ASan/UBSan builds: the sanitizer's SEGV handler reports and exits with ASAN_OPTIONS'
 * exitcode instead of dying of the signal. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

typedef struct {
    pid_t pid;
    int out[64];
} shared_box;

static int child_writes(void *v)
{
    shared_box *b = v;
    for (int i = 0; i < 64; i++)
        b->out[i] = i * i + 7;
    return 0;
}

static int child_segv(void *v)
{
    (void)v;
    raise(SIGSEGV);
    return 0;
}

static int child_abort(void *v)
{
    (void)v;
    abort();
}

static int child_exit3(void *v)
{
    (void)v;
    return 3;
}

static int child_sleeps(void *v)
{
    shared_box *b = v;
    b->pid = getpid();
    struct timespec t = {30, 0};
    nanosleep(&t, NULL);
    b->out[0] = 1; /* never reached when killed */
    return 0;
}

static int child_naps(void *v)
{
    shared_box *b = v;
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
    b->out[0] = 42;
    return 0;
}

static shared_box *box(void)
{
    shared_box *b = a4w4_shared_alloc(sizeof *b);
    cr_assert_not_null(b);
    return b;
}

Test(isolate, a_normal_childs_output_arrives)
{
    shared_box *b = box();
    char why[160];
    cr_assert_eq(a4w4_isolate_run(child_writes, b, 10, why, sizeof why), A4W4_ISO_OK, "%s", why);
    cr_assert_str_empty(why);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(b->out[i], i * i + 7, "out[%d] = %d", i, b->out[i]);
    a4w4_shared_free(b, sizeof *b);
}

Test(isolate, sigsegv_is_a_crash_named_by_its_signal)
{
    char why[160];
    a4w4_iso_status st = a4w4_isolate_run(child_segv, NULL, 10, why, sizeof why);
    if (SANITIZED && st == A4W4_ISO_EXITED) {
        cr_assert(strstr(why, "exited "), "%s", why);
        return;
    }
    cr_assert_eq(st, A4W4_ISO_CRASHED, "status %d: %s", (int)st, why);
    cr_assert_str_eq(why, "SIGSEGV (signal 11)");
}

Test(isolate, sigabrt_is_a_crash_named_by_its_signal)
{
    char why[160];
    a4w4_iso_status st = a4w4_isolate_run(child_abort, NULL, 10, why, sizeof why);
    cr_assert_eq(st, A4W4_ISO_CRASHED, "status %d: %s", (int)st, why);
    cr_assert_str_eq(why, "SIGABRT (signal 6)");
}

Test(isolate, a_nonzero_exit_is_reported_with_its_status)
{
    char why[160];
    cr_assert_eq(a4w4_isolate_run(child_exit3, NULL, 10, why, sizeof why), A4W4_ISO_EXITED);
    cr_assert_str_eq(why, "exited 3");
}

Test(isolate, past_the_deadline_the_child_is_killed_and_reaped)
{
    shared_box *b = box();
    char why[160];
    cr_assert_eq(a4w4_isolate_run(child_sleeps, b, 0.2, why, sizeof why), A4W4_ISO_TIMEOUT,
                 "%s", why);
    cr_assert_str_eq(why, "timed out after 0.2 s");
    cr_assert_gt(b->pid, 0);
    cr_assert_eq(b->out[0], 0, "the child ran on past its deadline");
    errno = 0;
    cr_assert_eq(kill(b->pid, 0), -1, "child %d still exists", (int)b->pid);
    cr_assert_eq(errno, ESRCH);
    a4w4_shared_free(b, sizeof *b);
}

Test(isolate, no_deadline_waits_for_the_child)
{
    shared_box *b = box();
    char why[160];
    cr_assert_eq(a4w4_isolate_run(child_naps, b, 0, why, sizeof why), A4W4_ISO_OK, "%s", why);
    cr_assert_eq(b->out[0], 42);
    a4w4_shared_free(b, sizeof *b);
}

Test(isolate, the_plugin_deadline_scales_with_the_calls_work)
{
    a4w4_plugin_isolation(1, -1);
    cr_assert_float_eq(a4w4_plugin_timeout(1, 32, 64), 60.0 + 2048e-9, 1e-9);
    cr_assert_float_eq(a4w4_plugin_timeout(4096, 4096, 16384), 60.0 + 274.877906944, 1e-6);
    a4w4_plugin_isolation(1, 2);
    cr_assert_float_eq(a4w4_plugin_timeout(4096, 4096, 16384), 2.0, 0);
    a4w4_plugin_isolation(1, 0);
    cr_assert_float_eq(a4w4_plugin_timeout(4096, 4096, 16384), 0.0, 0);
    a4w4_plugin_isolation(1, -1);
}
