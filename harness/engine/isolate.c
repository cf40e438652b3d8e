/* isolate.c — a call in a forked child with a deadline (see isolate.h). */
#define _GNU_SOURCE
#include "isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

void *a4w4_shared_alloc(size_t bytes)
{
    if (!bytes)
        return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void a4w4_shared_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A descriptor that becomes readable when pid exits (Linux pidfd), or -1 (then the caller
 * polls waitpid). Opened in the parent after the fork, so no other child inherits it. */
static int pid_fd(pid_t pid)
{
#if defined(__linux__) && defined(SYS_pidfd_open)
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Sleep until fd is readable or `left` seconds pass (fd < 0: a short nap, at most left). */
static void wait_a_little(int fd, double left, double *nap)
{
#if defined(__linux__)
    if (fd >= 0) {
        struct pollfd p = {fd, POLLIN, 0};
        double ms = left < 0 ? -1 : left * 1e3 + 1;
        poll(&p, 1, ms < 0 ? -1 : ms > 1e9 ? 1000000000 : (int)ms);
        return;
    }
#endif
    double s = left >= 0 && left < *nap ? left : *nap;
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
    if (*nap < 0.01)
        *nap *= 2; /* 50 us doubling to 10 ms: quick children cost little */
}

/* Wait for pid until deadline (<= 0: none). Returns 1 with *status when it exited, 0 when
 * the deadline passed, -1 when waitpid failed (errno). */
static int wait_deadline(pid_t pid, double deadline, int *status)
{
    int fd = pid_fd(pid);
    double nap = 5e-5;
    int r = -1;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) {
            r = 1;
            break;
        }
        if (w < 0 && errno != EINTR)
            break;
        double left = deadline > 0 ? deadline - now_s() : -1;
        if (deadline > 0 && left <= 0) {
            r = 0;
            break;
        }
        wait_a_little(fd, left, &nap);
    }
    if (fd >= 0)
        close(fd);
    return r;
}

static void signal_text(int sig, char *why, size_t whylen)
{
    const char *abbrev = sigabbrev_np(sig);
    snprintf(why, whylen, "SIG%s (signal %d)", abbrev ? abbrev : "?", sig);
}

a4w4_iso_status a4w4_isolate_run(int (*fn)(void *), void *arg, double timeout_s, char *why,
                                 size_t whylen)
{
    why[0] = '\0';
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "fork failed: %s", strerror(errno));
        return A4W4_ISO_ERROR;
    }
    if (pid == 0) {
        setpgid(0, 0); /* the call's own process group: its helpers go with it */
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan keeps running a hung kernel */
#endif
        _exit(fn(arg) & 0xFF);
    }
    setpgid(pid, pid); /* also here: the group exists before either side goes on */
    int st = 0, r = wait_deadline(pid, deadline, &st);
    if (r == 0) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        snprintf(why, whylen, "timed out after %g s", timeout_s);
        return A4W4_ISO_TIMEOUT;
    }
    if (r < 0) {
        snprintf(why, whylen, "waitpid failed: %s", strerror(errno));
        kill(-pid, SIGKILL);
        return A4W4_ISO_ERROR;
    }
    /* The call is over: a helper it forked (still in its group) would hold this process's
     * stdout and stderr, so `$(a4w4check ...)` waited for it; it goes now. */
    kill(-pid, SIGKILL);
    if (WIFSIGNALED(st)) {
        signal_text(WTERMSIG(st), why, whylen);
        return A4W4_ISO_CRASHED;
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code == 0)
        return A4W4_ISO_OK;
    /* 86 and 87: the exit codes ci/test.sh gives UBSan and ASan after their report */
    snprintf(why, whylen, "exited %d%s", code,
             code == 86 || code == 87 ? " (sanitizer report?)" : "");
    return A4W4_ISO_EXITED;
}
