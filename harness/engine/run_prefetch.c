/* run_prefetch.c — a4w4_runner.prefetch (runner.h, runner_internal.h): the next cases'
 * operands and host oracles prepared on host threads while the current case runs its
 * backends. Up to `depth` cases at once, each on a thread of its own, in the run's order; the
 * threads never touch the run's stage table or the device. Each preparation is pure in its
 * case (run_prep_case), so the results are the same bytes at any depth. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner_internal.h"

typedef struct { /* on the heap: its thread holds it while the queue moves */
    const a4w4_case *c;
    const a4w4_runner *r;
    pthread_t th;
    int running;    /* th is filling prep */
    double bytes;   /* run_prep_bytes of c */
    case_prep prep; /* the one taken is the caller's until the next take */
} job;

struct a4w4_prefetch {
    unsigned depth;
    const a4w4_case *next[A4W4_PREFETCH_MAX]; /* the cases to prepare after the current one */
    size_t nnext;
    job *q[A4W4_PREFETCH_MAX]; /* started, in the run's order */
    size_t nq;
    job *taken; /* the caller's prep, freed (the job) at the next take */
    double cap;       /* host bytes the cases beyond the first may hold together */
};

struct a4w4_prefetch *a4w4_prefetch_new(unsigned depth)
{
    struct a4w4_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->depth = depth < 1 ? 1 : depth > A4W4_PREFETCH_MAX ? A4W4_PREFETCH_MAX : depth;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    p->cap = pages > 0 && page > 0 ? (double)pages * (double)page / 8 : 0;
    return p;
}

unsigned a4w4_prefetch_default_depth(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 8 ? 3 : 1;
}

unsigned a4w4_prefetch_depth(const struct a4w4_prefetch *p)
{
    return p->depth;
}

void a4w4_prefetch_next(struct a4w4_prefetch *p, const a4w4_case *const *next, size_t n)
{
    if (!p)
        return;
    p->nnext = n < p->depth ? n : p->depth;
    for (size_t i = 0; i < p->nnext; i++)
        p->next[i] = next[i];
}

/* Wait for job j's thread: *j->prep is then filled. */
static void join(job *j)
{
    if (j->running) {
        pthread_join(j->th, NULL);
        j->running = 0;
    }
}

/* Job i waited for, its preparation freed, the queue closed over it. */
static void drop(struct a4w4_prefetch *p, size_t i)
{
    join(p->q[i]);
    run_prep_free(&p->q[i]->prep);
    free(p->q[i]);
    memmove(&p->q[i], &p->q[i + 1], (p->nq - i - 1) * sizeof p->q[0]);
    p->nq--;
}

void a4w4_prefetch_free(struct a4w4_prefetch *p)
{
    if (!p)
        return;
    while (p->nq)
        drop(p, 0);
    free(p->taken);
    free(p);
}

case_prep *run_prefetch_take(const a4w4_runner *r, const a4w4_case *c)
{
    struct a4w4_prefetch *p = r->prefetch;
    if (!p)
        return NULL;
    free(p->taken); /* the caller has freed its contents (run_prep_free) */
    p->taken = NULL;
    size_t i = 0;
    while (i < p->nq && p->q[i]->c != c)
        i++;
    if (i == p->nq) /* not prepared: what was prepared ahead of it is kept for its turn */
        return NULL;
    while (i > 0) { /* cases prepared but passed over (a stray prepared ahead) */
        drop(p, 0);
        i--;
    }
    job *j = p->q[0];
    join(j);
    memmove(&p->q[0], &p->q[1], (p->nq - 1) * sizeof p->q[0]);
    p->nq--;
    if (j->prep.st == A4W4_ST_OK)
        return &(p->taken = j)->prep;
    run_prep_free(&j->prep);
    free(j);
    return NULL;
}

static void *prepare(void *arg)
{
    job *j = arg;
    run_prep_case(j->r, j->c, &j->prep);
    return NULL;
}

/* 1 when case c is queued. */
static int queued(const struct a4w4_prefetch *p, const a4w4_case *c)
{
    for (size_t i = 0; i < p->nq; i++)
        if (p->q[i]->c == c)
            return 1;
    return 0;
}

void run_prefetch_start(const a4w4_runner *r)
{
    struct a4w4_prefetch *p = r->prefetch;
    if (!p)
        return;
    /* a queued case no longer among the next ones (a resumed or sharded run's order) */
    for (size_t i = 0; i < p->nq;) {
        int wanted = 0;
        for (size_t k = 0; k < p->nnext; k++)
            wanted |= p->q[i]->c == p->next[k];
        if (wanted)
            i++;
        else
            drop(p, i);
    }
    double held = 0;
    for (size_t i = 0; i < p->nq; i++)
        held += p->q[i]->bytes;
    for (size_t k = 0; k < p->nnext && p->nq < p->depth; k++) {
        const a4w4_case *c = p->next[k];
        if (queued(p, c))
            continue;
        const double b = run_prep_bytes(r, c);
        if (p->nq && held + b > p->cap)
            break; /* the first is always prepared ahead; the others within the cap */
        job *j = calloc(1, sizeof *j);
        if (!j)
            break;
        j->c = c;
        j->r = r;
        j->bytes = b;
        j->running = 1;
        if (pthread_create(&j->th, NULL, prepare, j)) {
            free(j); /* the case prepares itself when its turn comes */
            break;
        }
        p->q[p->nq++] = j;
        held += b;
    }
    p->nnext = 0;
}
