/* progress.c — the progress lines of run and hazards (progress.h). */
#include <stdio.h>
#include <unistd.h>

#include "fsutil.h"
#include "progress.h"

void a4w4_progress_start(a4w4_progress *p, const char *cmd, int quiet, int last_is_start)
{
    p->cmd = cmd;
    p->tty = isatty(2);
    p->quiet = quiet;
    p->t0 = a4w4_now();
    p->last = last_is_start ? p->t0 : 0;
}

void a4w4_progress_item(a4w4_progress *p, size_t done, size_t total, int fails, const char *what,
                        int final)
{
    if (p->quiet)
        return;
    double now = a4w4_now(), el = now - p->t0;
    double eta = done ? el / (double)done * (double)(total - done) : 0;
    if (p->tty) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs  %s", done, total,
                fails, el, eta, what);
        if (final)
            fputc('\n', stderr);
    } else if (final || now - p->last >= 5.0 || done == 1) {
        fprintf(stderr, "a4w4check %s: [%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs; %s\n",
                p->cmd, done, total, fails, el, eta, what);
        p->last = now;
    }
    fflush(stderr);
}

void a4w4_progress_count(a4w4_progress *p, size_t done, size_t total, int fails)
{
    double now = a4w4_now();
    if (p->quiet || !(now - p->last >= 5.0 || done == total))
        return;
    double el = now - p->t0;
    fprintf(stderr, "%sa4w4check %s: [%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs%s",
            p->tty ? "\r\033[K" : "", p->cmd, done, total, fails, el,
            el / (double)done * (double)(total - done), p->tty && done < total ? "" : "\n");
    fflush(stderr);
    p->last = now;
}
