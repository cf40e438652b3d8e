/* run_prefetch.c — a4w4_runner.prefetch (runner.h, runner_internal.h): the next case's
 * operands and host oracles prepared on a host thread while the current case runs its
 * backends. One slot being filled, one taken; the thread never touches the run's stage table
 * or the device. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

struct a4w4_prefetch {
    const a4w4_case *next; /* the case to prepare after the current one */
    const a4w4_case *todo; /* the case the thread prepares */
    const a4w4_runner *r;
    pthread_t th;
    int running;  /* th is filling prep[fill] */
    int held;     /* prep[fill] holds a prepared (or failed) case */
    int fill;     /* the slot the thread fills; the other is the caller's */
    case_prep prep[2];
};

struct a4w4_prefetch *a4w4_prefetch_new(void)
{
    return calloc(1, sizeof(struct a4w4_prefetch));
}

void a4w4_prefetch_next(struct a4w4_prefetch *p, const a4w4_case *next)
{
    if (p)
        p->next = next;
}

/* Wait for p's thread: prep[fill] is then held. */
static void join(struct a4w4_prefetch *p)
{
    if (p->running) {
        pthread_join(p->th, NULL);
        p->running = 0;
        p->held = 1;
    }
}

void a4w4_prefetch_free(struct a4w4_prefetch *p)
{
    if (!p)
        return;
    join(p);
    if (p->held)
        run_prep_free(&p->prep[p->fill]);
    free(p);
}

case_prep *run_prefetch_take(const a4w4_runner *r, const a4w4_case *c)
{
    struct a4w4_prefetch *p = r->prefetch;
    if (!p)
        return NULL;
    join(p);
    if (!p->held)
        return NULL;
    case_prep *P = &p->prep[p->fill];
    p->held = 0;
    p->fill ^= 1; /* the thread's next slot: the taken one is the caller's until freed */
    if (P->c == c && P->st == A4W4_ST_OK)
        return P;
    run_prep_free(P);
    return NULL;
}

static void *prepare(void *arg)
{
    struct a4w4_prefetch *p = arg;
    run_prep_case(p->r, p->todo, &p->prep[p->fill]);
    return NULL;
}

void run_prefetch_start(const a4w4_runner *r)
{
    struct a4w4_prefetch *p = r->prefetch;
    if (!p || !p->next || p->running || p->held)
        return;
    p->r = r;
    p->todo = p->next;
    if (pthread_create(&p->th, NULL, prepare, p) == 0)
        p->running = 1; /* else: the next case prepares itself when its turn comes */
    p->next = NULL;
}
