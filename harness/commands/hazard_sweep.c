/* hazard_sweep.c — see hazard_sweep.h. */
#include "hazard_sweep.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "fsutil.h"
#include "runner.h"

const char *const a4w4_hz_class_name[A4W4_HZ_NCLS] = {"fail", "exposed", "order_dependent",
                                                      "fenced", "ok"};
const char a4w4_hz_class_symbol[A4W4_HZ_NCLS] = {'X', '!', '~', 'f', '.'};
const char *const a4w4_hz_class_meaning[A4W4_HZ_NCLS] = {
    "a backend (or the oracle's cross-check) failed this cell",
    "ASM layer (policy) and a kernel whose tile does not fit N can win",
    "ASM layer, every possible winner fits N, but more than one can win (walk order decides)",
    "the policy keeps Triton on a cell whose routing is hazardous (several possible winners, or "
    "one that does not fit N)",
    "no hazard: tuned, or one possible winner that fits N on the ASM path, or Triton without a "
    "hazard"};
const char *const a4w4_hz_verdict_name[4] = {"pass", "fail", "n/a", "skip"};

typedef struct {
    a4w4_hazard_sweep *sw;
    size_t next, ndone;
    int nfail;
    a4w4_runner runner;
    pthread_mutex_t mu;
    int io_error;
    a4w4_hazard_progress cb;
    void *ctx;
    char err[512];
} work;

/* First mismatch and note of a failing runner entry, one line. */
static void entry_reason(const a4w4_entry_result *e, char *buf, size_t len)
{
    const a4w4_mismatch *fm = e->nfirst ? &e->first[0] : NULL;
    size_t u = (size_t)snprintf(buf, len, "%s: ", e->backend);
    if (fm && u < len) {
        char got[16], exp[16];
        a4w4_mismatch_hex(fm->got, fm->elem_bytes, got);
        a4w4_mismatch_hex(fm->expected, fm->elem_bytes, exp);
        u += (size_t)snprintf(buf + u, len - u, "%zu mismatches, first at (%zu, %zu): got %s "
                              "expected %s", e->mismatches, fm->row, fm->col, got, exp);
    }
    if (e->note[0] && u < len)
        snprintf(buf + u, len - u, "%s%.*s", fm ? "; " : "", (int)(len - u), e->note);
}

/* The verdicts of a cell's entries into cl (the oracle's apart). */
static void cell_verdicts(a4w4_hazard_cell *cl, const a4w4_entry_list *el, const a4w4_runner *rn)
{
    for (size_t k = 0; k < el->n; k++) {
        const a4w4_entry_result *e = &el->items[k];
        int vv = e->verdict == A4W4_VERDICT_PASS ? A4W4_HZ_PASS
               : e->verdict == A4W4_VERDICT_FAIL ? A4W4_HZ_VFAIL
               : e->verdict == A4W4_VERDICT_NA ? A4W4_HZ_NA : A4W4_HZ_SKIP;
        if (vv == A4W4_HZ_VFAIL && !cl->first_fail[0])
            entry_reason(e, cl->first_fail, sizeof cl->first_fail);
        if (!strcmp(e->backend, "oracle")) {
            cl->oracle_fail |= vv == A4W4_HZ_VFAIL;
            continue;
        }
        for (size_t b = 0; b < rn->nbackends; b++)
            if (!strcmp(rn->backends[b].name, e->backend))
                cl->v[b] = (unsigned char)vv;
    }
}

static void *worker(void *arg)
{
    work *w = arg;
    a4w4_hazard_sweep *sw = w->sw;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        size_t i = w->next < sw->n && !w->io_error ? w->next++ : sw->n;
        pthread_mutex_unlock(&w->mu);
        if (i >= sw->n)
            return NULL;
        a4w4_hazard_cell *cl = &sw->cells[i];
        a4w4_entry_list el = {0};
        char err[512];
        a4w4_hstatus rs = a4w4_run_case(&w->runner, cl->c, &el, err, sizeof err);
        if (rs == A4W4_ST_OK && !(cl->entries = a4w4_entry_list_json(&el))) {
            rs = A4W4_ST_NOMEM;
            snprintf(err, sizeof err, "case %s: out of memory for the results", cl->c->name);
        }
        int f = rs == A4W4_ST_OK ? (int)a4w4_entry_list_failures(&el) : -1;
        if (f >= 0)
            cell_verdicts(cl, &el, &w->runner);
        a4w4_entry_list_free(&el);
        pthread_mutex_lock(&w->mu);
        if (f < 0) {
            w->io_error = 1;
            snprintf(w->err, sizeof w->err, "%s", err);
        }
        cl->done = 1;
        w->ndone++;
        w->nfail += f > 0;
        if (w->cb)
            w->cb(w->ctx, w->ndone, sw->n, w->nfail);
        pthread_mutex_unlock(&w->mu);
    }
}

int a4w4_hazard_cell_cmp(const void *a, const void *b)
{
    const a4w4_case *x = ((const a4w4_hazard_cell *)a)->c, *y = ((const a4w4_hazard_cell *)b)->c;
    if (x->K != y->K)
        return x->K < y->K ? -1 : 1;
    if (x->N != y->N)
        return x->N < y->N ? -1 : 1;
    if (x->M != y->M)
        return x->M < y->M ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted distinct values of one axis (0 M, 1 N, 2 K) over the cells; malloc'ed. */
static size_t *axis(const a4w4_hazard_cell *cells, size_t n, int which, size_t *count)
{
    size_t *v = malloc((n ? n : 1) * sizeof *v), k = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = which == 0 ? cells[i].c->M : which == 1 ? cells[i].c->N : cells[i].c->K;
    qsort(v, n, sizeof *v, size_cmp);
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1])
            v[k++] = v[i];
    *count = k;
    return v;
}

cJSON *a4w4_kernel_set_json(const a4w4_kernel_table *kt, const unsigned char *set)
{
    cJSON *a = cJSON_CreateArray();
    int idx[A4W4_MAX_KERNELS];
    size_t n = a4w4_kernel_set_by_tile(kt, set, idx);
    for (size_t i = 0; i < n; i++) {
        char lab[64];
        a4w4_kernel_label(kt, idx[i], lab, sizeof lab);
        cJSON_AddItemToArray(a, cJSON_CreateString(lab));
    }
    return a;
}

/* The route facts of ch into cell cl. */
static void cell_route(a4w4_hazard_cell *cl, const a4w4_kernel_table *kt,
                       const a4w4_dispatch_chain *ch)
{
    const a4w4_route *r = &ch->route;
    cl->source = r->source;
    snprintf(cl->kernel, sizeof cl->kernel, "%s", r->kernel ? r->kernel : "");
    if (r->kernel_index >= 0)
        a4w4_kernel_label(kt, r->kernel_index, cl->label, sizeof cl->label);
    else
        snprintf(cl->label, sizeof cl->label, "%s", r->is_asm ? "?" : "ck");
    cl->tile_m = r->tile_m;
    cl->tile_n = r->tile_n;
    cl->kernel_fits = r->tile_m ? !(r->fit & A4W4_FIT_N_MASK) : 1;
    for (size_t i = 0; i < r->ncand_any; i++) {
        cl->nwin++;
        if (r->cand_any[i] < 0)
            continue;
        cl->win[r->cand_any[i]] = 1;
        if (r->cand_fit[i] & A4W4_FIT_N_MASK) {
            cl->nofit[r->cand_any[i]] = 1;
            cl->nnofit++;
        }
    }
    cl->pol = ch->policy;
    cl->hz = ch->hazard;
    cl->bugs = ch->bugs;
}

int a4w4_hazard_sweep_route(a4w4_hazard_sweep *sw, const a4w4_tuned_table *tuned,
                            const a4w4_kernel_table *kt, const a4w4_dispatch_setup *s,
                            char *err, size_t errlen)
{
    a4w4_dispatch_chain *ch = malloc(sizeof *ch);
    if (!ch) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < sw->n; i++) {
        const a4w4_case *c = sw->cells[i].c;
        char e[512];
        a4w4_chain_step st = a4w4_dispatch_chain_of(tuned, kt, s, (int)c->M, (int)c->N,
                                                    (int)c->K, ch, e, sizeof e);
        if (st == A4W4_CHAIN_ROUTE)
            snprintf(err, errlen, "%s: route M %zu N %zu K %zu: %s", c->name, c->M, c->N, c->K,
                     e);
        else if (st != A4W4_CHAIN_OK)
            snprintf(err, errlen, "%s: policy N %zu K %zu: %s", c->name, c->N, c->K, e);
        else
            cell_route(&sw->cells[i], kt, ch);
        rc = st == A4W4_CHAIN_OK ? 0 : -1;
    }
    free(ch);
    return rc;
}

/* sw->jobs, or the CPU count when every backend is thread-safe, else 1; at most a job per
 * cell. */
static int job_count(const a4w4_hazard_sweep *sw)
{
    long jobs = sw->jobs;
    if (!jobs) {
        int all_safe = 1; /* the runner serializes the others: more jobs would only wait */
        for (size_t b = 0; b < sw->nbk; b++)
            all_safe &= sw->bk[b].type->thread_safe;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = all_safe && ncpu > 1 ? (ncpu > 64 ? 64 : ncpu) : 1;
    }
    if ((size_t)jobs > sw->n)
        jobs = (long)sw->n;
    return (int)jobs;
}

int a4w4_hazard_sweep_run(a4w4_hazard_sweep *sw, a4w4_hazard_progress cb, void *ctx,
                          char *err, size_t errlen)
{
    sw->jobs = job_count(sw);
    work w;
    memset(&w, 0, sizeof w);
    w.sw = sw;
    w.runner.backends = sw->bk;
    w.runner.nbackends = sw->nbk;
    w.cb = cb;
    w.ctx = ctx;
    double t0 = a4w4_now();
    pthread_mutex_init(&w.mu, NULL);
    pthread_t th[256];
    long started = 0;
    for (long j = 1; j < sw->jobs; j++)
        if (pthread_create(&th[started], NULL, worker, &w) == 0)
            started++;
    worker(&w);
    for (long j = 0; j < started; j++)
        pthread_join(th[j], NULL);
    pthread_mutex_destroy(&w.mu);
    sw->secs = a4w4_now() - t0;
    if (w.io_error) {
        snprintf(err, errlen, "%s", w.err);
        return -1;
    }
    return 0;
}

/* The map class of cl: fail when a backend or the oracle failed, else ref's static class. */
static void classify(a4w4_hazard_cell *cl, size_t nb)
{
    int fail = cl->oracle_fail;
    for (size_t b = 0; b < nb; b++)
        fail |= cl->v[b] == A4W4_HZ_VFAIL;
    /* the static class is ref's (a4w4_hazard_class order); "fail" is the backends' */
    static const int of_ref[] = {A4W4_HZ_OK, A4W4_HZ_EXPOSED, A4W4_HZ_ORDER, A4W4_HZ_FENCED};
    cl->cls = fail ? A4W4_HZ_FAIL : of_ref[cl->hz.cls];
}

int a4w4_hazard_sweep_tally(a4w4_hazard_sweep *sw)
{
    for (size_t i = 0; i < sw->n; i++) {
        classify(&sw->cells[i], sw->nbk);
        sw->ncls[sw->cells[i].cls]++;
        sw->oracle_fail += (size_t)sw->cells[i].oracle_fail;
        for (size_t b = 0; b < sw->nbk; b++)
            sw->vcount[b][sw->cells[i].v[b]]++;
    }
    sw->Ms = axis(sw->cells, sw->n, 0, &sw->nM);
    sw->Ns = axis(sw->cells, sw->n, 1, &sw->nN);
    sw->Ks = axis(sw->cells, sw->n, 2, &sw->nK);
    return sw->Ms && sw->Ns && sw->Ks ? 0 : -1;
}

void a4w4_hazard_sweep_free(a4w4_hazard_sweep *sw)
{
    free(sw->Ms);
    free(sw->Ns);
    free(sw->Ks);
    for (size_t i = 0; sw->cells && i < sw->n; i++)
        cJSON_Delete(sw->cells[i].entries);
}
