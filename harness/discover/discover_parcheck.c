/* discover_parcheck.c — a parallel loop over outputs (discover_fit.h): items taken from a
 * shared counter by up to 64 threads, misses counted, the first one kept, defects counted and
 * listed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "discover_fit.h"
#include "grow.h"

typedef struct {
    check_fn fn;
    const void *ctx;
    size_t total;
    int stop_early;
    atomic_size_t next, bad;
    atomic_int stop;
    pthread_mutex_t mu;
    miss first;
    size_t first_k;
    int has_first;
    atomic_size_t ndefects;
    size_t defect_budget; /* stop_early: stop once more defects than this are seen */
    defect_list *defects; /* NULL: not kept */
    size_t vcase;         /* the case the defects belong to */
} pjob;

static void keep_defect(pjob *j, size_t m, size_t n, uint16_t got, uint16_t exp, int why)
{
    defect_list *L = j->defects;
    if (!L)
        return;
    pthread_mutex_lock(&j->mu);
    if (L->n < MAX_DEFECTS_LISTED && !A4W4_GROW(L->v, L->n + 1, L->cap, 64))
        L->v[L->n++] = (defect){j->vcase, m, n, got, exp, why};
    pthread_mutex_unlock(&j->mu);
}

/* Take items one at a time from the shared counter until none is left (or, stop_early, a
 * failure was seen); keep the failure with the smallest (row, col). */
static void *pworker(void *arg)
{
    pjob *j = arg;
    for (;;) {
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->total || (j->stop_early && atomic_load(&j->stop)))
            break;
        size_t m = 0, n = 0;
        uint16_t got = 0, exp = 0;
        int why = 0, c = j->fn(j->ctx, k, &m, &n, &got, &exp, &why);
        if (c == CHECK_PREDICTED)
            continue;
        if (c == CHECK_DEFECT) {
            if (atomic_fetch_add(&j->ndefects, 1) + 1 > j->defect_budget && j->stop_early)
                atomic_store(&j->stop, 1);
            keep_defect(j, m, n, got, exp, why);
            continue;
        }
        atomic_fetch_add(&j->bad, 1);
        atomic_store(&j->stop, 1);
        pthread_mutex_lock(&j->mu);
        if (!j->has_first || m < j->first.row || (m == j->first.row && n < j->first.col)) {
            j->first = (miss){m, n, got, exp};
            j->first_k = k;
            j->has_first = 1;
        }
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

/* Misses of fn over items 0 .. total-1 on up to `threads` threads (stop_early: counting may
 * stop at the first miss, or past budget defects); the first miss (smallest row, col) into
 * *first and *first_k. Defects are counted into *ndefects (may be NULL when fn gives none)
 * and kept in dl (may be NULL) as case vcase's. */
size_t dc_par_check(check_fn fn, const void *ctx, size_t total, int threads, int stop_early,
                        miss *first, size_t *first_k, int *has, size_t *ndefects,
                        size_t budget, defect_list *dl, size_t vcase)
{
    pjob j = {.fn = fn, .ctx = ctx, .total = total, .stop_early = stop_early, .defects = dl,
              .vcase = vcase, .defect_budget = budget};
    atomic_init(&j.next, 0);
    atomic_init(&j.bad, 0);
    atomic_init(&j.stop, 0);
    atomic_init(&j.ndefects, 0);
    pthread_mutex_init(&j.mu, NULL);
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < threads && i < 64 && (size_t)i < total; i++)
        if (!pthread_create(&th[started], NULL, pworker, &j))
            started++;
    pworker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&j.mu);
    if (first)
        *first = j.first;
    if (first_k)
        *first_k = j.first_k;
    *has = j.has_first;
    if (ndefects)
        *ndefects = atomic_load(&j.ndefects);
    return atomic_load(&j.bad);
}
