/* isolate.c — a call in a forked child with a deadline (see isolate.h). */
#define _GNU_SOURCE
#include "isolate.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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

/* ---- stop signals ------------------------------------------------------------------------ */

/* While any call runs, SIGTERM, SIGINT and SIGHUP (`timeout` stopping the harness, a
 * terminal's ^C, a closed session) first SIGKILL the process group of every running call, then
 * take their old action: no child, nor a helper it started, outlives the harness. */
#define MAX_RUNNING 64
static const int stop_sigs[3] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction stop_old[3];
static atomic_int running[MAX_RUNNING]; /* process groups of running calls; 0: free */
static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER;
static int stop_users;

static void on_stop(int sig)
{
    for (int i = 0; i < MAX_RUNNING; i++) {
        int g = atomic_load(&running[i]);
        if (g > 0)
            kill(-(pid_t)g, SIGKILL);
    }
    for (int i = 0; i < 3; i++)
        if (stop_sigs[i] == sig)
            sigaction(sig, &stop_old[i], NULL);
    raise(sig); /* delivered with its old action once this handler returns */
}

/* The first running call installs on_stop (a signal ignored stays ignored), the last one
 * puts the old actions back. */
static void stop_watch(int on)
{
    pthread_mutex_lock(&stop_mu);
    if (on ? stop_users++ == 0 : --stop_users == 0)
        for (int i = 0; i < 3; i++) {
            if (!on) {
                sigaction(stop_sigs[i], &stop_old[i], NULL);
                continue;
            }
            struct sigaction sa = {0};
            sa.sa_handler = on_stop;
            sigemptyset(&sa.sa_mask);
            sigaction(stop_sigs[i], NULL, &stop_old[i]);
            if (stop_old[i].sa_handler != SIG_IGN)
                sigaction(stop_sigs[i], &sa, NULL);
        }
    pthread_mutex_unlock(&stop_mu);
}

/* Slot for process group pid in running[] (-1: none free, the call still runs). */
static int claim(pid_t pid)
{
    for (int i = 0; i < MAX_RUNNING; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&running[i], &free_slot, (int)pid))
            return i;
    }
    return -1;
}

/* ---- the fork ---------------------------------------------------------------------------- */

/* The child's side: its own process group, the stop signals' old actions, death with the
 * parent (also when the parent died before prctl), then fn. */
static void child(int (*fn)(void *), void *arg, pid_t parent, const sigset_t *mask)
{
    setpgid(0, 0); /* the call's own process group: its helpers go with it */
    for (int i = 0; i < 3; i++)
        sigaction(stop_sigs[i], &stop_old[i], NULL);
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphan keeps running a hung kernel */
    if (getppid() != parent)
        _exit(127);
#else
    (void)parent;
#endif
    pthread_sigmask(SIG_SETMASK, mask, NULL);
    _exit(fn(arg) & 0xFF);
}

/* Fork a child running fn(arg) and wait for it until timeout_s (<= 0: none); the child's
 * process group is SIGKILLed when it ends or times out. Returns 1 (exited, *st), 0 (timed
 * out; killed and reaped), -1 (fork or waitpid failed: why). */
static int fork_wait(int (*fn)(void *), void *arg, double timeout_s, int *st, char *why,
                     size_t whylen)
{
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < 3; i++)
        sigaddset(&block, stop_sigs[i]);
    stop_watch(1);
    pthread_sigmask(SIG_BLOCK, &block, &old); /* no stop between the fork and the claim */
    pid_t parent = getpid(), pid = fork();
    if (pid == 0)
        child(fn, arg, parent, &old);
    int slot = -1, r = -1;
    if (pid > 0) {
        setpgid(pid, pid); /* also here: the group exists before either side goes on */
        slot = claim(pid);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0)
        snprintf(why, whylen, "fork failed: %s", strerror(errno));
    else if ((r = wait_deadline(pid, deadline, st)) == 0) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, st, 0) < 0 && errno == EINTR)
            ;
        snprintf(why, whylen, "timed out after %g s", timeout_s);
    } else if (r < 0) {
        snprintf(why, whylen, "waitpid failed: %s", strerror(errno));
    }
    /* The call is over: a helper it forked (still in its group) would hold this process's
     * stdout and stderr, so `$(a4w4check ...)` waited for it; it goes now. */
    if (pid > 0)
        kill(-pid, SIGKILL);
    if (slot >= 0)
        atomic_store(&running[slot], 0);
    stop_watch(0);
    return r;
}

a4w4_iso_status a4w4_isolate_run(int (*fn)(void *), void *arg, double timeout_s, char *why,
                                 size_t whylen)
{
    why[0] = '\0';
    int st = 0, r = fork_wait(fn, arg, timeout_s, &st, why, whylen);
    if (r <= 0)
        return r == 0 ? A4W4_ISO_TIMEOUT : A4W4_ISO_ERROR;
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

static int exec_sh(void *cmd)
{
    execl("/bin/sh", "sh", "-c", (const char *)cmd, (char *)NULL);
    return 127;
}

int a4w4_isolate_command(const char *cmd, double timeout_s, char *why, size_t whylen)
{
    why[0] = '\0';
    fflush(NULL); /* what this process wrote comes before what the command writes */
    int st = 0, r = fork_wait(exec_sh, (void *)cmd, timeout_s, &st, why, whylen);
    if (r <= 0)
        return r == 0 ? 124 : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
