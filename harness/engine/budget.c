/* budget.c — the whole-run budget at the run's own rates (see budget.h): calibration on a
 * small case at the start of a run, then the plan of which cases get every output checked. */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "gen.h"
#include "integrity.h"
#include "runner.h"
#include "runner_internal.h"
#include "sample_oracles.h"

/* The calibration case: normal regime, 64 x 512 x 4096 (2^27 MACs): above the oracles' one-thread
 * limit (so they run on all cores, as on a real case) and small enough for an unoptimized build
 * (a few seconds there). */
static void calibration_case(a4w4_case *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "budget-calibration");
    c->M = 64;
    c->N = 512;
    c->K = 4096;
    c->regime = A4W4_REGIME_NORMAL;
    c->mode = A4W4_ROUND_UP;
    c->seed = 1;
    snprintf(c->regime_text, sizeof c->regime_text, "normal");
}

/* The outputs of a first, small timing of each backend: CAL_ROWS x CAL_COLS of the calibration
 * case (2^20 MACs), and how long that call may take before the backend is rated by it alone. */
#define CAL_ROWS 4
#define CAL_COLS 64
#define CAL_SMALL_S 0.05

/* Seconds of one call of backend b on sample s of the calibration data (its outputs between
 * poisoned guards as the runner's, engine/integrity.h: a backend that writes past them
 * corrupts nothing here; the runner's own calls find and report it). */
static int time_call(const a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                     const a4w4_sample *s, double *sec, char *why, size_t whylen,
                     a4w4_out_buf *keep)
{
    a4w4_out_buf y;
    if (a4w4_out_alloc(&y, s->full ? c->M : s->nrows, s->full ? c->N : s->ncols))
        return A4W4_ENOMEM;
    a4w4_out_poison(&y);
    a4w4_run_args a = {.c = c, .d = d, .s = s, .y = y.y, .why = why, .whylen = whylen,
                       .y_before = y.before, .y_after = y.after};
    double t0 = a4w4_now();
    int rc = b->type->run(b->ctx, &a);
    *sec = a4w4_now() - t0;
    if (keep)
        *keep = y;
    else
        a4w4_out_free(&y);
    return rc;
}

/* Judge the outputs y of the calibration's first call of backend bi on sample s of case c
 * (data d) under the contract b holds c to, into rt (statecheck.h reports it). */
static void judge_calibration(const a4w4_backend *b, size_t bi, const a4w4_case *c,
                              const a4w4_case_data *d, const a4w4_sample *s,
                              const uint16_t *y, a4w4_rates *rt)
{
    a4w4_contract own;
    const a4w4_contract *k = run_case_contract(b, c, &own, NULL, 0);
    a4w4_oracles o;
    a4w4_comparison cmp;
    a4w4_judge_grid g = run_grid_of(s);
    if (!k || a4w4_oracles_compute(d, s, &o))
        return;
    if (!a4w4_judge_contract(&cmp, &g, k, &o, y, NULL)) {
        rt->cal_judged[bi] = 1;
        rt->cal_bound[bi] = cmp.has_bound;
        rt->cal_checked[bi] = cmp.checked;
        rt->cal_mismatches[bi] = cmp.mismatches;
    }
    a4w4_oracles_free(&o);
}

/* Seconds per MAC of backend b on the calibration data (full: its every output). First one
 * call on a CAL_ROWS x CAL_COLS sample: a backend slower than CAL_SMALL_S there (a
 * ground-truth kernel, an isolated plugin's process start) is rated by that call, so that
 * its calibration stays short; the others by the faster of two calls over the whole case. */
static int rate_backend(const a4w4_backend *b, size_t bi, const a4w4_case *c,
                        const a4w4_case_data *d, const a4w4_sample *full, a4w4_rates *rt,
                        char *err, size_t errlen)
{
    double *s_per_mac = &rt->run_s_per_mac[bi];
    size_t rows[CAL_ROWS], cols[CAL_COLS];
    for (size_t i = 0; i < CAL_ROWS; i++)
        rows[i] = i * (c->M / CAL_ROWS);
    for (size_t j = 0; j < CAL_COLS; j++)
        cols[j] = j * (c->N / CAL_COLS);
    const a4w4_sample small = {rows, CAL_ROWS, cols, CAL_COLS, 0};
    const double k = (double)c->K;
    char why[512] = "";
    double sec = 0, best = 1e30;
    a4w4_out_buf y = {0};
    int judge = b->type->run_sequence != NULL; /* a plugin's first call: judged (statecheck.h) */
    int rc = time_call(b, c, d, &small, &sec, why, sizeof why, judge ? &y : NULL);
    if (judge && rc == A4W4_OK)
        judge_calibration(b, bi, c, d, &small, y.y, rt);
    if (judge)
        a4w4_out_free(&y);
    *s_per_mac = sec / (CAL_ROWS * CAL_COLS * k);
    for (int rep = 0; rep < 2 && rc == A4W4_OK && sec < CAL_SMALL_S; rep++) {
        rc = time_call(b, c, d, full, &sec, why, sizeof why, NULL);
        best = sec < best ? sec : best;
        *s_per_mac = best / ((double)c->M * (double)c->N * k);
    }
    if (rc == A4W4_EUNSUPPORTED) { /* n/a on this shape: its runs cost nothing measurable */
        *s_per_mac = 0;
        rc = A4W4_OK;
    }
    if (rc != A4W4_OK)
        snprintf(err, errlen, "calibrating %s: %s", b->name, why[0] ? why : a4w4_status_str(rc));
    return rc;
}

/* A4W4_BUDGET_RATES_SCALE=F (0 < F, tests only): every measured seconds-per-unit rate times F,
 * the calibration made 1/F times optimistic, as on a machine busier during the run than at its
 * start: the tests of the budget's hold (docs/cli/run.md "Sampling and the budget"). */
static void scale_rates(a4w4_rates *rt)
{
    const char *v = getenv("A4W4_BUDGET_RATES_SCALE");
    double f = v && *v ? strtod(v, NULL) : 0;
    if (!(f > 0))
        return;
    rt->gen_s_per_element *= f;
    rt->oracle_s_per_mac *= f;
    for (size_t i = 0; i < 64; i++)
        rt->run_s_per_mac[i] *= f;
}

int a4w4_budget_calibrate(const a4w4_runner *r, a4w4_rates *rt, char *err, size_t errlen)
{
    a4w4_case c;
    a4w4_sample s;
    a4w4_case_data d;
    a4w4_oracles o;
    memset(rt, 0, sizeof *rt);
    calibration_case(&c);
    const double macs = (double)c.M * (double)c.N * (double)c.K, t_start = a4w4_now();
    if (a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s)) {
        snprintf(err, errlen, "calibration: out of memory");
        return A4W4_ENOMEM;
    }
    double t0 = a4w4_now();
    int rc = a4w4_case_generate(&c, &s, &d);
    rt->gen_s_per_element = (a4w4_now() - t0) / (((double)c.M + (double)c.N) * (double)c.K);
    if (rc == A4W4_OK) {
        double best = 1e30;
        for (int rep = 0; rep < 2 && rc == A4W4_OK; rep++) {
            t0 = a4w4_now();
            rc = a4w4_oracles_compute(&d, &s, &o);
            double t = a4w4_now() - t0;
            best = t < best ? t : best;
            a4w4_oracles_free(&o);
        }
        rt->oracle_s_per_mac = best / macs;
        if (rc != A4W4_OK)
            snprintf(err, errlen, "calibration: out of memory for the oracles");
    } else {
        snprintf(err, errlen, "calibration: out of memory generating its case");
    }
    for (size_t i = 0; i < r->nbackends && i < 64 && rc == A4W4_OK; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type->run || (r->dev && b->type->run_device) || b->type->full_outputs)
            continue; /* judged on the device, or outputs computed elsewhere */
        rc = rate_backend(b, i, &c, &d, &s, rt, err, errlen);
    }
    if (rc == A4W4_OK || d.a_fp4.data)
        a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    rt->calibrate_s = a4w4_now() - t_start;
    scale_rates(rt);
    return rc;
}

typedef struct {
    double est;
    size_t idx;
} costed;

static int by_cost(const void *a, const void *b)
{
    const costed *x = a, *y = b;
    return x->est < y->est ? -1 : x->est > y->est ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}

int a4w4_budget_plan_make(const a4w4_runner *r, const a4w4_case *cases, size_t n,
                          const uint8_t *mine, double budget_s, a4w4_budget_plan *p)
{
    memset(p, 0, sizeof *p);
    p->cases = cases;
    p->ncases = n;
    p->budget_s = budget_s;
    p->full = calloc(n ? n : 1, 1);
    p->held = calloc(n ? n : 1, 1);
    p->est_s = calloc(n ? n : 1, sizeof *p->est_s);
    costed *order = malloc((n ? n : 1) * sizeof *order);
    if (!p->full || !p->held || !p->est_s || !order) {
        free(order);
        a4w4_budget_plan_free(p);
        return A4W4_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int dev = a4w4_judged_on_device(r, &cases[i]); /* no host check to buy */
        p->est_s[i] = dev ? 0 : a4w4_full_check_seconds(r, &cases[i]);
        p->ndevice += dev && (!mine || mine[i]);
        if (!dev && (!mine || mine[i]))
            order[k++] = (costed){p->est_s[i], i};
    }
    qsort(order, k, sizeof *order, by_cost); /* the cheapest first: most cases in full */
    for (size_t j = 0; j < k; j++) {
        if (p->planned_s + order[j].est <= budget_s) {
            p->full[order[j].idx] = 1;
            p->planned_s += order[j].est;
            p->nfull++;
        } else {
            p->nsampled++;
        }
    }
    free(order);
    return A4W4_OK;
}

void a4w4_budget_plan_free(a4w4_budget_plan *p)
{
    free(p->full);
    free(p->held);
    free(p->est_s);
    p->full = NULL;
    p->held = NULL;
    p->est_s = NULL;
}

void a4w4_budget_hold(a4w4_budget_plan *p, const a4w4_case *c)
{
    long k = a4w4_budget_plan_index(p, c);
    if (k < 0 || p->held[k])
        return;
    p->held[k] = A4W4_HELD_KEPT;
    if (!p->full[k])
        return;
    /* the cases checked in full so far, against their estimates: never below 1 (a faster
     * machine than calibrated buys nothing the plan did not) */
    double ratio = p->spent_est_s > 0 && p->spent_s > p->spent_est_s
                       ? p->spent_s / p->spent_est_s : 1.0;
    if (p->spent_s + p->est_s[k] * ratio > p->budget_s) {
        p->held[k] = A4W4_HELD_BACK;
        p->full[k] = 0;
        p->nfull--;
        p->nsampled++;
        p->nheld++;
    }
}

void a4w4_budget_spent(a4w4_budget_plan *p, const a4w4_case *c, double seconds)
{
    long k = a4w4_budget_plan_index(p, c);
    if (k < 0 || !p->full[k])
        return;
    p->spent_s += seconds;
    p->spent_est_s += p->est_s[k];
}
