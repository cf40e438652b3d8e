/* runner.c — see runner.h. */
#include "runner.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "annotate.h"
#include "check.h"
#include "devjudge.h"
#include "fsutil.h"
#include "gen.h"
#include "safetensors.h"
#include "sample_oracles.h"
#include "verify_capture.h"

#define MAX_RECORDED A4W4_ENTRY_MAX_FIRST

/* Backends whose type is not thread_safe (GPU backends: one device, the HIP backends' per-case
 * device cache) are entered one call at a time, whatever the callers' threading (hazards
 * --jobs runs cases on several threads). Thread-safe backends and the oracles stay parallel. */
static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER;

static void enter(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_lock(&serial_mu);
}

static void leave(const a4w4_backend *b)
{
    if (!b->type->thread_safe)
        pthread_mutex_unlock(&serial_mu);
}

static int call_run(const a4w4_backend *b, const a4w4_run_args *a)
{
    enter(b);
    int rc = b->type->run(b->ctx, a);
    leave(b);
    return rc;
}

static size_t row_at(const a4w4_sample *s, size_t i) { return s->full ? i : s->rows[i]; }
static size_t col_at(const a4w4_sample *s, size_t j) { return s->full ? j : s->cols[j]; }

static int bf16_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

typedef struct {
    size_t checked, mismatches, unwritten;
    unsigned max_ulp;
    /* bounded(S) only: the largest |got - exact| / bound, and the bound in bf16 ULPs of
     * the exact value (median, largest) over the outputs compared within a bound */
    int has_bound;
    double bound_use, bound_ulp_median, bound_ulp_max;
    size_t nrec;
    struct {
        size_t row, col;
        uint16_t got, expected;
    } rec[MAX_RECORDED];
} comparison;

static void record(comparison *c, const a4w4_sample *s, size_t k, uint16_t got, uint16_t exp)
{
    unsigned d = a4w4_bf16_ulp_distance(got, exp);
    if (d > c->max_ulp)
        c->max_ulp = d;
    if (c->nrec < MAX_RECORDED) {
        c->rec[c->nrec].row = row_at(s, k / s->ncols);
        c->rec[c->nrec].col = col_at(s, k % s->ncols);
        c->rec[c->nrec].got = got;
        c->rec[c->nrec].expected = exp;
        c->nrec++;
    }
    c->mismatches++;
}

/* Bit-exact comparison (NaN == NaN; the poison counts as unwritten, not as NaN). */
static void compare_exact(comparison *c, const a4w4_sample *s, const uint16_t *got,
                          const uint16_t *exp, size_t n)
{
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16) {
            c->unwritten++;
            record(c, s, k, got[k], exp[k]);
            continue;
        }
        if (got[k] == exp[k] || (bf16_nan(got[k]) && bf16_nan(exp[k])))
            continue;
        record(c, s, k, got[k], exp[k]);
    }
}

/* One bf16 ULP at |x| (2^-133 below the normal range). */
static double bf16_ulp_at(double x)
{
    x = fabs(x);
    return x < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(x) - 7);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bound's use and size over the outputs compared within it (ulps[0..k)). */
static void bound_stats(comparison *c, double *ulps, size_t k)
{
    c->has_bound = 1;
    if (!ulps || !k)
        return;
    qsort(ulps, k, sizeof *ulps, cmp_double);
    c->bound_ulp_max = ulps[k - 1];
    c->bound_ulp_median = k % 2 ? ulps[k / 2] : 0.5 * (ulps[k / 2 - 1] + ulps[k / 2]);
}

/* bounded(S) (contracts §4.1 "bounded"): output k passes when |got - e| <= B[k] + 2^-24 |e|
 * + 2^-149, with e = RNE_fp32(exact) (|exact - e| <= 2^-24 |e| + 2^-150) and B the
 * per-output bound of a4w4_oracles_bound. NaN must meet NaN, Inf the same Inf. */
static void compare_bounded(comparison *c, const a4w4_sample *s, const uint16_t *got,
                            const uint16_t *exact, const float *exact_f32, const double *B,
                            size_t n)
{
    memset(c, 0, sizeof *c);
    double *ulps = malloc((n ? n : 1) * sizeof *ulps);
    size_t k_ulps = 0;
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16) {
            c->unwritten++;
            record(c, s, k, got[k], exact[k]);
            continue;
        }
        int gn = bf16_nan(got[k]), en = isnan(exact_f32[k]);
        if (gn || en) {
            if (!(gn && en))
                record(c, s, k, got[k], exact[k]);
            continue;
        }
        double g = a4w4_bf16_to_f32(got[k]), e = exact_f32[k];
        if (isinf(e) || isinf(g) || isnan(B[k])) {
            if (g != e)
                record(c, s, k, got[k], exact[k]);
            continue;
        }
        double tol = B[k] + 0x1p-24 * fabs(e) + 0x1p-149, use = fabs(g - e) / tol;
        if (use > c->bound_use)
            c->bound_use = use;
        if (ulps)
            ulps[k_ulps++] = tol / bf16_ulp_at(e);
        if (use > 1.0)
            record(c, s, k, got[k], exact[k]);
        else if (got[k] != exact[k]) { /* within the bound: report the distance only */
            unsigned d = a4w4_bf16_ulp_distance(got[k], exact[k]);
            if (d > c->max_ulp)
                c->max_ulp = d;
        }
    }
    bound_stats(c, ulps, k_ulps);
    free(ulps);
}

/* na: 1 not applicable, 2 skipped (the backend has no result for the case). */
static a4w4_verdict verdict_of(int fail, int na)
{
    return na == 2 ? A4W4_VERDICT_SKIP
           : na    ? A4W4_VERDICT_NA
           : fail  ? A4W4_VERDICT_FAIL
                   : A4W4_VERDICT_PASS;
}

/* Append printf-style text to a note buffer (truncating at its end). */
static void note_add(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_add(char *note, size_t size, const char *fmt, ...)
{
    size_t L = strlen(note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + L, size - L, fmt, ap);
    va_end(ap);
}

static void case_identity(a4w4_entry_result *e, const a4w4_case *c, a4w4_entry_kind kind,
                          const char *backend, const char *contract)
{
    a4w4_entry_identity(e, kind, c->name, c->M, c->N, c->K, c->regime_text,
                        (unsigned long long)c->seed, backend, contract);
    e->has_tags = 1;
    snprintf(e->tags, sizeof e->tags, "%s", c->tags);
}

static void put_comparison(a4w4_entry_result *e, const comparison *cmp, const a4w4_sample *s,
                           double ms, size_t proven, a4w4_verdict verdict)
{
    e->checked = cmp->checked;
    e->sampled = !s->full;
    e->verdict = verdict;
    e->mismatches = cmp->mismatches;
    e->unwritten = cmp->unwritten;
    e->max_ulp = cmp->max_ulp;
    e->has_bound = cmp->has_bound;
    e->bound_use = cmp->bound_use;
    e->bound_ulp_median = cmp->bound_ulp_median;
    e->bound_ulp_max = cmp->bound_ulp_max;
    e->nfirst = cmp->nrec;
    for (size_t i = 0; i < cmp->nrec; i++) {
        a4w4_mismatch *m = &e->first[i];
        snprintf(m->tensor, sizeof m->tensor, "y");
        m->row = cmp->rec[i].row;
        m->col = cmp->rec[i].col;
        m->got = cmp->rec[i].got;
        m->expected = cmp->rec[i].expected;
        m->elem_bytes = 2;
    }
    e->time_ms = ms;
    e->exact_regime_outputs = proven;
}

/* The oracle's own entry: ordered(1) == exact wherever the prover holds for the whole
 * sample, and in the special regime NaN exactly in the outputs reading a NaN block. */
static int oracle_entry(const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                        const a4w4_oracles *o, a4w4_entry_result *e)
{
    comparison cmp;
    int na = o->proven != o->count;
    char note[256] = "";
    if (!na)
        compare_exact(&cmp, s, o->ordered1, o->exact, o->count);
    else {
        memset(&cmp, 0, sizeof cmp);
        cmp.checked = o->count;
        snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                 "reference there, not a verdict", o->count - o->proven, o->count);
    }
    int fail = cmp.mismatches != 0;
    if (c->regime == A4W4_REGIME_SPECIAL) {
        size_t wrong = 0, nans = 0;
        for (size_t i = 0; i < s->nrows; i++)
            for (size_t j = 0; j < s->ncols; j++) {
                int dep = row_at(s, i) == d->nan_a_row || col_at(s, j) == d->nan_w_row;
                int isnan_ = bf16_nan(o->ordered1[i * s->ncols + j]) &&
                             bf16_nan(o->exact[i * s->ncols + j]);
                nans += (size_t)isnan_;
                wrong += (size_t)(dep != isnan_);
            }
        note_add(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                 "dependent set", note[0] ? "; " : "", nans, wrong);
        fail |= wrong != 0;
        na = 0;
    }
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    put_comparison(e, &cmp, s, 0, o->proven, verdict_of(fail, na && !fail));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* One pad-dependence variant: the fills under test. */
typedef struct {
    uint8_t row_fill, col_fill, guard;
    const char *what;
} variant;

/* What run_backend carries between its steps. */
typedef struct {
    a4w4_backend *b;
    a4w4_case_data *d;
    const a4w4_sample *s;
    a4w4_oracles *o;
    uint16_t *y, *y2;  /* the baseline outputs and a variant's */
    size_t n;          /* outputs in the sample */
    a4w4_run_args args;
    char why[512];
    comparison cmp;    /* the baseline against the contract's oracle */
    /* device path (engine/devjudge.h): every output judged on the device; y holds the
     * backend's outputs at the sample, re-judged against the C oracles into host_cmp */
    const a4w4_devjudge *dev;
    comparison host_cmp;
} gemm_run;

static int is_bounded(const a4w4_backend *b) { return !strncmp(b->contract, "bounded", 7); }

/* The device's comparison over every output as the runner's. */
static void from_devcmp(comparison *c, const a4w4_devcmp *d)
{
    memset(c, 0, sizeof *c);
    c->checked = d->checked;
    c->mismatches = d->mismatches;
    c->unwritten = d->unwritten;
    c->max_ulp = d->max_ulp;
    c->has_bound = d->has_bound;
    c->bound_use = d->bound_use;
    c->bound_ulp_max = d->bound_ulp_max;
    c->nrec = d->nrec < MAX_RECORDED ? d->nrec : MAX_RECORDED;
    for (size_t i = 0; i < c->nrec; i++) {
        c->rec[i].row = d->rec[i].row;
        c->rec[i].col = d->rec[i].col;
        c->rec[i].got = d->rec[i].got;
        c->rec[i].expected = d->rec[i].expected;
    }
}

/* The device path's baseline: the backend on every output, compared on the device; its
 * outputs at the sample come back in g->y. */
static int run_baseline_dev(gemm_run *g, a4w4_entry_result *e)
{
    a4w4_devcmp dc;
    int brc = A4W4_OK;
    for (size_t k = 0; k < g->n; k++)
        g->y[k] = A4W4_POISON_BF16;
    if (g->dev->run(g->dev->self, g->b, &g->args, 0, &brc, &dc, g->why, sizeof g->why))
        return brc == A4W4_OK ? A4W4_EINVAL : brc;
    e->run_ms = dc.run_ms;
    e->has_run = 1;
    if (brc == A4W4_OK) {
        from_devcmp(&g->cmp, &dc);
        e->has_y_hash = dc.has_y_hash;
        e->y_hash = dc.y_hash;
    }
    return brc;
}

/* Poison y, run the backend once and record run_ms, and the outputs' hash when it ran. */
static int run_baseline(gemm_run *g, a4w4_entry_result *e)
{
    if (g->dev)
        return run_baseline_dev(g, e);
    for (size_t k = 0; k < g->n; k++)
        g->y[k] = A4W4_POISON_BF16;
    double t0 = (a4w4_now() * 1e3);
    int rc = call_run(g->b, &g->args);
    e->run_ms = (a4w4_now() * 1e3) - t0;
    e->has_run = 1;
    if (rc == A4W4_OK) { /* FNV-1a 64 of the checked outputs, for `compare` (changed bits) */
        unsigned long long h = 0xCBF29CE484222325ull;
        for (size_t k = 0; k < g->n; k++) {
            h = (h ^ (g->y[k] & 0xFFu)) * 0x100000001B3ull;
            h = (h ^ (g->y[k] >> 8)) * 0x100000001B3ull;
        }
        e->has_y_hash = 1;
        e->y_hash = h;
    }
    return rc;
}

/* The guard zones, then the baseline against the oracle of the backend's contract into
 * g->cmp. Returns 1 when the entry fails, 0 when it passes so far, -1 when the oracle's
 * outputs could not be computed (out of memory: the entry fails, nothing more is checked). */
static int check_baseline(gemm_run *g, a4w4_entry_result *e)
{
    const a4w4_case_data *d = g->d;
    int fail = 0;
    const char *which;
    if (!a4w4_case_guards_intact(d, &which)) {
        fail = 1;
        snprintf(e->note, sizeof e->note, "wrote out of bounds: the guard zone after %s "
                 "changed; ", which);
    }
    comparison devc = g->cmp; /* device path: the device's comparison over every output */
    if (is_bounded(g->b)) {
        const double *B = a4w4_oracles_bound(g->o, g->b->split);
        if (!B)
            return -1;
        compare_bounded(&g->cmp, g->s, g->y, g->o->exact, g->o->exact_f32, B, g->n);
        if (g->cmp.mismatches)
            note_add(e->note, sizeof e->note, "outside the %s bound: largest distance %.3g "
                     "times the bound; ", g->b->contract, g->cmp.bound_use);
    } else if (!strcmp(g->b->contract, "exact")) {
        compare_exact(&g->cmp, g->s, g->y, g->o->exact, g->n);
    } else {
        const uint16_t *exp = a4w4_oracles_ordered(g->o, g->b->split);
        if (!exp)
            return -1;
        compare_exact(&g->cmp, g->s, g->y, exp, g->n);
    }
    if (g->dev) { /* the sample, re-judged by the C oracles, must agree with the device */
        g->host_cmp = g->cmp;
        g->cmp = devc;
        if (g->host_cmp.mismatches > g->cmp.mismatches) {
            fail = 1;
            note_add(e->note, sizeof e->note, "the device judge counted %zu mismatches, the C "
                     "oracles %zu on the %zu sampled outputs alone; ", g->cmp.mismatches,
                     g->host_cmp.mismatches, g->n);
        }
        g->cmp.bound_ulp_median = g->host_cmp.bound_ulp_median; /* over the sample */
    }
    fail |= g->cmp.mismatches != 0;
    if (g->cmp.unwritten)
        note_add(e->note, sizeof e->note, "%zu outputs never written (poison 0x%04x left); ",
                 g->cmp.unwritten, A4W4_POISON_BF16);
    return fail;
}

/* Outputs of variant v that change against the baseline (all when the run fails; a crash or
 * a timeout is also named in e's note and aborted). */
static size_t variant_changes(gemm_run *g, const variant *v, a4w4_entry_result *e)
{
    a4w4_case_refill(g->d, v->row_fill, v->col_fill, v->guard);
    for (size_t k = 0; k < g->n; k++)
        g->y2[k] = A4W4_POISON_BF16;
    g->args.y = g->y2;
    if (g->dev) { /* every output, compared with the baseline on the device */
        a4w4_devcmp dc;
        int brc = A4W4_OK;
        int bad = g->dev->run(g->dev->self, g->b, &g->args, 1, &brc, &dc, g->why,
                              sizeof g->why);
        g->args.y = g->y;
        return bad || brc != A4W4_OK ? g->d->M * g->d->N : dc.mismatches;
    }
    int rc2 = call_run(g->b, &g->args);
    g->args.y = g->y;
    if (rc2 == A4W4_RUN_CRASHED || rc2 == A4W4_RUN_TIMEOUT) {
        snprintf(e->aborted, sizeof e->aborted, "%s",
                 rc2 == A4W4_RUN_CRASHED ? "crashed" : "timed out");
        note_add(e->note, sizeof e->note, "%s (variant %s); ", g->why, v->what);
    }
    if (rc2 != A4W4_OK)
        return g->n;
    size_t diff = 0;
    if (is_bounded(g->b)) {
        /* the reduction order of a bounded kernel varies run to run: a variant only
         * counts when it leaves the bound the baseline kept */
        comparison c2;
        compare_bounded(&c2, g->s, g->y2, g->o->exact, g->o->exact_f32,
                        a4w4_oracles_bound(g->o, g->b->split), g->n);
        diff = c2.mismatches > g->cmp.mismatches ? c2.mismatches - g->cmp.mismatches : 0;
    } else {
        for (size_t k = 0; k < g->n; k++)
            diff += g->y2[k] != g->y[k];
    }
    return diff;
}

size_t a4w4_pad_variant_count(size_t M, size_t K)
{
    const size_t nb = K / 32;
    if (a4w4_act_scale_padded_cols(nb) != nb || K % 256)
        return 5;
    return a4w4_act_scale_padded_rows(M) != M ? 2 : 0;
}

/* contracts §3.3: valid outputs must not depend on the pad fills or on bytes past K. Runs the
 * variants (a4w4_pad_variant_count: 2 with row pads, 5 with column pads or K % 256 != 0, none
 * when no pad exists: the fills would give byte-identical inputs, and the entry's note says
 * so) and restores the default fills. On the device there are no guard zones past the
 * buffers: the garbage variant is left out there with a note. Returns 1 when some variant
 * changed outputs (pad_dependent names them). */
static int check_pad_variants(gemm_run *g, a4w4_entry_result *e)
{
    static const variant vs[] = {{0xFF, 0x7F, A4W4_GUARD_FILL, "row pad 0xFF"},
                                 {0x00, 0x7F, A4W4_GUARD_FILL, "row pad 0x00"},
                                 {0x7F, 0x00, A4W4_GUARD_FILL, "column pad 0x00"},
                                 {0x7F, 0xFF, A4W4_GUARD_FILL, "column pad 0xFF"},
                                 {0x7F, 0x7F, 0x5A, "garbage 0x5A past the buffers' ends"}};
    size_t nv = a4w4_pad_variant_count(g->d->M, g->d->K);
    if (!nv) {
        note_add(e->note, sizeof e->note, "pad variants not run: M %% 256 == 0 and (K/32) %% 8 "
                 "== 0, so no pad row or column exists and every fill gives the same bytes "
                 "(contracts §3.3); ");
        return 0;
    }
    if (g->dev && nv == 5) { /* device buffers have no guard zones to fill */
        nv = 4;
        note_add(e->note, sizeof e->note, "the garbage-past-the-buffers variant is not run on "
                 "the device (no guard zones there); ");
    }
    char *dep = e->pad_dependent;
    for (size_t v = 0; v < nv; v++) {
        size_t diff = variant_changes(g, &vs[v], e);
        if (diff)
            note_add(dep, sizeof e->pad_dependent, "%s%s (%zu outputs change)",
                     dep[0] ? ", " : "", vs[v].what, diff);
    }
    a4w4_case_refill(g->d, A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_ACT_SCALE_FILL_DEFAULT,
                     A4W4_GUARD_FILL);
    e->pad_variants = nv;
    if (!dep[0])
        return 0;
    note_add(e->note, sizeof e->note, "pad-dependent: valid outputs change with %s; it needs "
             "row fill 0x7F, column fill 0x7F and nothing past K; ", dep);
    return 1;
}

/* Run the backend, check its outputs, fill the entry. Returns 1 when it fails. */
static int gemm_checks(gemm_run *g, a4w4_entry_result *e, int *na)
{
    int rc = run_baseline(g, e);
    if (rc == A4W4_RUN_SKIP) {
        *na = 2;
        snprintf(e->note, sizeof e->note, "skipped: %s", g->why[0] ? g->why : "no result");
        return 0;
    }
    if (rc == A4W4_RUN_REFUSED) {
        e->refused = 1;
        snprintf(e->note, sizeof e->note, "refused: %s", g->why);
        return 1;
    }
    if (rc == A4W4_EUNSUPPORTED) {
        *na = 1;
        snprintf(e->note, sizeof e->note, "%s",
                 g->why[0] ? g->why : "not applicable to this shape");
        return 0;
    }
    if (rc == A4W4_RUN_CRASHED || rc == A4W4_RUN_TIMEOUT) {
        snprintf(e->aborted, sizeof e->aborted, "%s",
                 rc == A4W4_RUN_CRASHED ? "crashed" : "timed out");
        snprintf(e->note, sizeof e->note, "%s", g->why);
        return 1;
    }
    if (rc != A4W4_OK) {
        snprintf(e->note, sizeof e->note, "backend error: %s",
                 g->why[0] ? g->why : a4w4_status_str(rc));
        return 1;
    }
    int fail = check_baseline(g, e);
    if (fail < 0)
        return 1;
    if (g->b->asm_layout && g->d->a_scale_shuffled.data)
        fail |= check_pad_variants(g, e);
    return fail;
}

static int run_backend(a4w4_backend *b, const a4w4_case *c, a4w4_case_data *d,
                       const a4w4_sample *s, a4w4_oracles *o, const a4w4_run_identity *id,
                       const a4w4_devjudge *dev, const a4w4_devoracle *dor,
                       a4w4_entry_result *e)
{
    gemm_run g;
    memset(&g, 0, sizeof g);
    g.dev = dev && b->type->run_device ? dev : NULL;
    g.b = b;
    g.d = d;
    g.s = s;
    g.o = o;
    g.n = o->count;
    g.y = malloc(g.n * 2);
    g.y2 = malloc(g.n * 2);
    g.args = (a4w4_run_args){c, d, s, g.y, g.why, sizeof g.why, id};
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, b->name, b->contract);
    int fail = 1, na = 0;
    if (!g.y || !g.y2)
        snprintf(e->note, sizeof e->note, "out of memory for %zu outputs", g.n);
    else
        fail = gemm_checks(&g, e, &na);
    static const a4w4_sample all = {.full = 1};
    put_comparison(e, &g.cmp, g.dev ? &all : s, e->has_run ? e->run_ms : NAN,
                   g.dev && dor ? dor->proven : o->proven,
                   verdict_of(fail, na));
    if (d->code0) {
        e->ambiguous = 1;
        note_add(e->note, sizeof e->note, "E8M0 code 0 present: read as 2^-127 (OCP, AITER "
                 "torch); one host driver documents 2^-126 (contracts §1)");
    }
    size_t L = strlen(e->note);
    while (L && (e->note[L - 1] == ' ' || e->note[L - 1] == ';'))
        e->note[--L] = 0;
    free(g.y);
    free(g.y2);
    return fail;
}

/* Finish a byte-comparison entry (layout and quantizer backends) from its checks. */
static int byte_entry(const a4w4_case *c, const a4w4_backend *b, const a4w4_sample *s,
                      const a4w4_check *chk, int nchk, double ms, const char *na_why,
                      a4w4_entry_result *e)
{
    a4w4_check total;
    memset(&total, 0, sizeof total);
    total.elem_bytes = 1;
    snprintf(total.subject, sizeof total.subject, "bytes");
    total.verdict = na_why ? A4W4_CHECK_NA : A4W4_CHECK_PASS;
    for (int i = 0; i < nchk; i++) {
        total.checked += chk[i].checked;
        if (chk[i].verdict == A4W4_CHECK_FAIL) {
            if (total.verdict != A4W4_CHECK_FAIL) {
                size_t checked = total.checked;
                total = chk[i];
                total.checked = checked;
            } else
                total.mismatches += chk[i].mismatches;
        }
    }
    if (na_why)
        snprintf(total.note, sizeof total.note, "%s", na_why);
    case_identity(e, c, A4W4_ENTRY_BYTES, b->name, b->contract);
    a4w4_entry_set_check(e, &total);
    e->sampled = !s->full;
    e->time_ms = ms;
    return total.verdict == A4W4_CHECK_FAIL;
}

/* A layout backend: its contracts §3 layouts of d against ref's, byte for byte. */
static int run_layout_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                              const a4w4_sample *s, a4w4_entry_result *e)
{
    const a4w4_guarded *ref[3] = {&d->w_fp4_shuffled, &d->w_scale_swizzled, &d->a_scale_shuffled};
    static const char *const names[3] = {"w_fp4_shuffled", "w_scale_swizzled", "a_scale_shuffled"};
    uint8_t *got[3] = {NULL, NULL, NULL};
    a4w4_check chk[3];
    int n = 0, fail = 0;
    char why[512] = "";
    for (int i = 0; i < 3; i++)
        if (ref[i]->data && !(got[i] = malloc(ref[i]->len))) {
            fail = 1;
            snprintf(why, sizeof why, "out of memory");
        } else if (got[i])
            memset(got[i], 0xA5, ref[i]->len);
    double t0 = a4w4_now() * 1e3;
    enter(b);
    int rc = fail ? A4W4_ENOMEM
                  : b->type->layouts(b->ctx, d, got[0], got[1], got[2], why, sizeof why);
    leave(b);
    double ms = a4w4_now() * 1e3 - t0;
    if (rc == A4W4_OK)
        for (int i = 0; i < 3; i++)
            if (got[i])
                a4w4_check_bytes(&chk[n++], names[i], got[i], ref[i]->data, 1, ref[i]->len, NULL);
    if (rc != A4W4_OK && rc != A4W4_EUNSUPPORTED) {
        a4w4_check_na(&chk[n], "layouts", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = A4W4_CHECK_FAIL;
    }
    fail = byte_entry(c, b, s, chk, n, ms, rc == A4W4_EUNSUPPORTED ? why : NULL, e);
    for (int i = 0; i < 3; i++)
        free(got[i]);
    return fail;
}

/* The buffers of a quantizer check: the sampled activation rows and ref's codes and scales. */
typedef struct {
    uint16_t *x;
    uint8_t *q, *sc, *rq, *rs, *skip;
} quant_bufs;

static int quant_bufs_alloc(quant_bufs *qb, size_t rows, size_t K)
{
    size_t nb = K / 32;
    qb->x = malloc(rows * K * 2);
    qb->q = malloc(rows * K / 2);
    qb->sc = malloc(rows * nb);
    qb->rq = malloc(rows * K / 2);
    qb->rs = malloc(rows * nb);
    qb->skip = calloc(rows * K / 2, 1);
    return qb->x && qb->q && qb->sc && qb->rq && qb->rs && qb->skip;
}

static void quant_bufs_free(quant_bufs *qb)
{
    free(qb->x);
    free(qb->q);
    free(qb->sc);
    free(qb->rq);
    free(qb->rs);
    free(qb->skip);
}

/* Copy the sampled rows of d's activations and of ref's quantization (NaN blocks' codes
 * skipped); poison the backend's output buffers. */
static void quant_inputs(quant_bufs *qb, const a4w4_case_data *d, const a4w4_sample *s)
{
    size_t K = d->K, nb = K / 32, rows = s->nrows;
    for (size_t i = 0; i < rows; i++) {
        size_t m = row_at(s, i);
        memcpy(qb->x + i * K, d->x + m * K, K * 2);
        memcpy(qb->rq + i * K / 2, d->a_fp4.data + m * K / 2, K / 2);
        memcpy(qb->rs + i * nb, d->a_scale.data + m * nb, nb);
        for (size_t kb = 0; kb < K / 2; kb++)
            qb->skip[i * K / 2 + kb] = qb->rs[i * nb + kb / 16] == 0xFF;
    }
    memset(qb->q, 0xA5, rows * K / 2);
    memset(qb->sc, 0xA5, rows * nb);
}

/* Quantize through the backend and compare; fills chk, returns their count. */
static int quant_compare(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                         const a4w4_sample *s, quant_bufs *qb, a4w4_check *chk, double *ms)
{
    size_t K = d->K, nb = K / 32, rows = s->nrows;
    char why[512] = "";
    int n = 0;
    quant_inputs(qb, d, s);
    double t0 = a4w4_now() * 1e3;
    enter(b);
    int rc = b->type->quantize(b->ctx, qb->x, rows, K, (int)c->mode, qb->q, qb->sc, why,
                               sizeof why);
    leave(b);
    *ms = a4w4_now() * 1e3 - t0;
    if (rc != A4W4_OK) {
        a4w4_check_na(&chk[n], "quantize", why[0] ? why : a4w4_status_str(rc));
        chk[n++].verdict = rc == A4W4_EUNSUPPORTED ? A4W4_CHECK_NA : A4W4_CHECK_FAIL;
        return n;
    }
    a4w4_check_bytes(&chk[n++], "a_fp4", qb->q, qb->rq, rows, K / 2, qb->skip);
    a4w4_check_bytes(&chk[n++], "a_scale", qb->sc, qb->rs, rows, nb, NULL);
    if (!s->full) /* report real row numbers */
        for (int i = 0; i < n; i++)
            if (chk[i].mismatches)
                chk[i].first_row = s->rows[chk[i].first_row];
    return n;
}

/* A quantizer backend: the activation rows of a normal-regime case, quantized in the case's
 * mode, against ref's codes (NaN blocks' codes skipped) and scales. */
static int run_quant_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                             const a4w4_sample *s, a4w4_entry_result *e)
{
    if (!d->x)
        return byte_entry(c, b, s, NULL, 0, 0,
                          "quantizer backends run on normal-regime cases (bf16 activations)", e);
    quant_bufs qb;
    a4w4_check chk[2];
    int n = 0;
    double ms = 0;
    if (!quant_bufs_alloc(&qb, s->nrows, d->K)) {
        a4w4_check_na(&chk[n], "quantize", "out of memory");
        chk[n++].verdict = A4W4_CHECK_FAIL;
    } else {
        n = quant_compare(b, c, d, s, &qb, chk, &ms);
    }
    int fail = byte_entry(c, b, s, chk, n, ms, NULL, e);
    quant_bufs_free(&qb);
    return fail;
}

/* A layout or quantizer backend judged on the device: its bytes over the whole case. */
static int run_bytes_dev(const a4w4_devjudge *dev, a4w4_backend *b, const a4w4_case *c,
                         const a4w4_case_data *d, a4w4_entry_result *e)
{
    static const char *const lay[3] = {"w_fp4_shuffled", "w_scale_swizzled", "a_scale_shuffled"};
    static const char *const qnt[2] = {"a_fp4", "a_scale"};
    static const a4w4_sample all = {.full = 1};
    a4w4_devcmp dc;
    char why[512] = "";
    int brc = A4W4_OK, quant = b->type->quantize_device != NULL;
    double t0 = a4w4_now() * 1e3;
    int bad = quant ? dev->quantize(dev->self, b, c, d, &brc, &dc, why, sizeof why)
                    : dev->layouts(dev->self, b, d, &brc, &dc, why, sizeof why);
    double ms = a4w4_now() * 1e3 - t0;
    a4w4_check chk;
    memset(&chk, 0, sizeof chk);
    chk.elem_bytes = 1;
    if (brc == A4W4_EUNSUPPORTED)
        return byte_entry(c, b, &all, NULL, 0, ms, why[0] ? why : "not applicable", e);
    if (bad || brc != A4W4_OK) {
        a4w4_check_na(&chk, quant ? "quantize" : "layouts", why[0] ? why : a4w4_status_str(brc));
        chk.verdict = A4W4_CHECK_FAIL;
    } else {
        const size_t which = dc.nrec ? dc.rec[0].col : 0;
        snprintf(chk.subject, sizeof chk.subject, "%s", quant ? qnt[which % 2] : lay[which % 3]);
        chk.checked = dc.checked;
        chk.mismatches = dc.mismatches;
        chk.verdict = dc.mismatches ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
        chk.first_row = dc.nrec ? dc.rec[0].row : 0;
        chk.got = dc.nrec ? dc.rec[0].got : 0;
        chk.expected = dc.nrec ? dc.rec[0].expected : 0;
    }
    return byte_entry(c, b, &all, &chk, 1, ms, NULL, e);
}

/* Entries for every backend of r on case c (after the oracle's). dev: the device judge of
 * this case (NULL: everything on the host sample), dor: its oracle facts. */
static a4w4_hstatus run_backends(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                                 const a4w4_sample *s, a4w4_oracles *o,
                                 const a4w4_devjudge *dev, const a4w4_devoracle *dor,
                                 a4w4_entry_list *out)
{
    for (size_t i = 0; i < r->nbackends; i++) {
        a4w4_backend *b = &r->backends[i];
        if (!b->type->run && !b->type->layouts && !b->type->quantize)
            continue;
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (!e)
            return A4W4_ST_NOMEM;
        int on_dev = dev && b->type->run_device;
        if (b->type->run)
            run_backend(b, c, d, s, o, r->id, dev, dor, e);
        else if (dev && ((b->type->layouts && b->type->layouts_device) ||
                         (b->type->quantize && b->type->quantize_device && d->x)))
            run_bytes_dev(dev, b, c, d, e), on_dev = 1;
        else if (b->type->layouts)
            run_layout_backend(b, c, d, s, e);
        else
            run_quant_backend(b, c, d, s, e);
        if (r->stages && e->verdict != A4W4_VERDICT_NA && e->verdict != A4W4_VERDICT_SKIP) {
            if (on_dev)
                r->stages->outputs_device += (double)e->checked;
            else
                r->stages->outputs_host += (double)e->checked;
        }
    }
    return A4W4_ST_OK;
}

/* ---- the device judge's case ------------------------------------------------------------- */

/* 1 when some selected backend has a device form. */
static int wants_device(const a4w4_runner *r)
{
    for (size_t i = 0; r->dev && i < r->nbackends; i++) {
        const a4w4_backend_type *t = r->backends[i].type;
        if (t->run_device || t->layouts_device || t->quantize_device)
            return 1;
    }
    return 0;
}

/* What the case's device backends need of the judge. */
static a4w4_devneeds needs_of(const a4w4_runner *r)
{
    a4w4_devneeds n = {0, 0};
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type->run_device)
            continue;
        if (is_bounded(b))
            n.bounded_s = b->split;
        else if (b->split > 1)
            n.ordered_s = b->split;
    }
    return n;
}

/* Sampled outputs whose bounded(S) bound the C oracle recomputes per case: at most
 * RECHECK_BOUNDS, and no more than RECHECK_BOUND_ELEMS elements of K in all (the plain bound
 * costs some 10 ns per element: the whole sample of a large case would take seconds), at
 * least 4; on all cores. */
#define RECHECK_BOUNDS 256
#define RECHECK_BOUND_ELEMS ((size_t)1 << 21)

/* The first index in 0..n where the judge's bound and the C bound (recomputed for every
 * (n / RECHECK_BOUNDS)-th output of the sample) differ as doubles; n when none. */
static size_t recheck_bounds(const a4w4_oracles *o, unsigned S, const double *jb, size_t *checked)
{
    const a4w4_sub_problem *p = &o->p;
    size_t want = RECHECK_BOUND_ELEMS / p->K;
    want = want < 4 ? 4 : want > RECHECK_BOUNDS ? RECHECK_BOUNDS : want;
    const size_t n = o->count, step = n > want ? n / want : 1;
    const size_t nb = p->K / 32, rb = p->K / 2;
    size_t first = n, count = (n + step - 1) / step;
#pragma omp parallel for schedule(dynamic, 1) reduction(min : first) \
    if ((double)count * (double)p->K >= 0x1p22)
    for (size_t t = 0; t < count; t++) {
        const size_t k = t * step, i = k / p->N, j = k % p->N;
        a4w4_dot_operands op = {p->a + i * rb, p->as + i * nb, p->w + j * rb, p->ws + j * nb, p->K};
        const double b = a4w4_dot_bounded_bound(&op, S);
        if (memcmp(&b, &jb[k], sizeof b) && !(isnan(b) && isnan(jb[k])) && k < first)
            first = k;
    }
    *checked = count;
    return first;
}

/* Values of the judge at the sample against the C oracles, bit for bit: the judge judged.
 * ordered(1), exact (bf16 and fp32) and ordered(S) on every sampled output, the bounded bound
 * on RECHECK_BOUNDS of them; the judge's bounds at the sample then serve the host's own
 * comparison of bounded backends (installed in o). Appends to note; returns the mismatches. */
static size_t recheck(const a4w4_devjudge *dev, const a4w4_devneeds *need, const a4w4_sample *s,
                      a4w4_oracles *o, char *note, size_t notelen)
{
    const size_t n = o->count;
    a4w4_devsample js = {malloc(n * 2), malloc(n * 2), need->ordered_s ? malloc(n * 2) : NULL,
                         malloc(n * 4), need->bounded_s ? malloc((n ? n : 1) * 8) : NULL};
    const uint16_t *cs = need->ordered_s ? a4w4_oracles_ordered(o, need->ordered_s) : NULL;
    char why[256] = "";
    size_t bad = 0, first = SIZE_MAX, nbounds = 0;
    const char *what = "";
    if (!js.ordered1 || !js.exact || !js.exact_f32 || (need->ordered_s && (!js.ordered_s || !cs)) ||
        (need->bounded_s && !js.bound) || dev->sample(dev->self, s, &js, why, sizeof why)) {
        note_add(note, notelen, "%sthe C oracles' re-check of the GPU judge failed to run: %s",
                 note[0] ? "; " : "", why[0] ? why : "out of memory");
        bad = 1;
    } else {
        for (size_t k = 0; k < n; k++) {
            uint32_t jf, cf;
            memcpy(&jf, &js.exact_f32[k], 4);
            memcpy(&cf, &o->exact_f32[k], 4);
            const char *w = !(js.ordered1[k] == o->ordered1[k] ||
                              (bf16_nan(js.ordered1[k]) && bf16_nan(o->ordered1[k])))
                                ? "ordered(1)"
                            : !(js.exact[k] == o->exact[k] ||
                                (bf16_nan(js.exact[k]) && bf16_nan(o->exact[k])))
                                ? "exact"
                            : !(jf == cf || (isnan(js.exact_f32[k]) && isnan(o->exact_f32[k])))
                                ? "exact fp32"
                            : cs && !(js.ordered_s[k] == cs[k] ||
                                      (bf16_nan(js.ordered_s[k]) && bf16_nan(cs[k])))
                                ? "ordered(S)"
                                : NULL;
            if (w && first == SIZE_MAX) {
                first = k;
                what = w;
            }
            bad += w != NULL;
        }
        if (need->bounded_s) {
            const size_t kb = recheck_bounds(o, need->bounded_s, js.bound, &nbounds);
            if (kb < n) {
                bad++;
                if (first == SIZE_MAX || kb < first) {
                    first = kb;
                    what = "the bounded bound";
                }
            }
        }
        if (bad)
            note_add(note, notelen, "%sTHE GPU JUDGE DISAGREES WITH THE C ORACLES on %zu of %zu "
                     "sampled outputs (first: %s at (%zu, %zu))", note[0] ? "; " : "", bad, n,
                     what, row_at(s, first / s->ncols), col_at(s, first % s->ncols));
        else if (need->bounded_s && o->nbound < 8) { /* the judge's bounds, re-checked above */
            o->bound[o->nbound].S = need->bounded_s;
            o->bound[o->nbound++].b = js.bound;
            js.bound = NULL;
            note_add(note, notelen, "%sbounded(%u) bounds of %zu sampled outputs recomputed by "
                     "the C oracle", note[0] ? "; " : "", need->bounded_s, nbounds);
        }
    }
    free(js.ordered1);
    free(js.exact);
    free(js.ordered_s);
    free(js.exact_f32);
    free(js.bound);
    return bad;
}

/* The oracle's entry on the device: ordered(1) == exact on every output the prover holds for,
 * the special regime's NaN set over every output, and the C oracles' re-check of the judge on
 * the sample. *dor receives the judge's facts. Returns 1 when it fails. */
static int oracle_entry_dev(const a4w4_devjudge *dev, const a4w4_devneeds *need,
                            const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                            a4w4_oracles *o, a4w4_devoracle *dor, a4w4_entry_result *e)
{
    static const a4w4_sample all = {.full = 1};
    char note[512] = "", why[256] = "";
    comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    int fail = 0, na = 0;
    if (dev->oracle(dev->self, d, c->regime == A4W4_REGIME_SPECIAL, dor, why, sizeof why)) {
        snprintf(note, sizeof note, "the GPU judge failed: %s", why);
        fail = 1;
    } else {
        from_devcmp(&cmp, &dor->ord_vs_exact);
        cmp.checked = dor->outputs;
        fail = cmp.mismatches != 0;
        na = dor->proven != dor->outputs;
        if (na)
            snprintf(note, sizeof note, "%zu of %zu outputs outside the exact regime: exact is a "
                     "reference there, not a verdict", dor->outputs - dor->proven, dor->outputs);
        if (c->regime == A4W4_REGIME_SPECIAL) {
            note_add(note, sizeof note, "%sspecial blocks: %zu NaN outputs, %zu outside the "
                     "dependent set", note[0] ? "; " : "", dor->nans, dor->nan_wrong);
            fail |= dor->nan_wrong != 0;
            na = 0;
        }
        note_add(note, sizeof note, "%sGPU judge: every output; %zu sampled outputs re-checked "
                 "by the C oracles%s", note[0] ? "; " : "", o->count,
                 dor->uncertain ? "" : "");
        if (dor->uncertain)
            note_add(note, sizeof note, "; %zu outputs rounded by the plain C oracle",
                     dor->uncertain);
        if (recheck(dev, need, s, o, note, sizeof note))
            fail = 1, na = 0;
    }
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, "oracle", "ordered(1) == exact");
    put_comparison(e, &cmp, &all, dor->judge_ms, dor->proven, verdict_of(fail, na && !fail));
    snprintf(e->note, sizeof e->note, "%s", note);
    return fail;
}

/* 1 when a selected backend judges every output (a4w4_backend_type.full_outputs). */
static int wants_full(const a4w4_runner *r)
{
    for (size_t i = 0; i < r->nbackends; i++)
        if (r->backends[i].type->full_outputs)
            return 1;
    return 0;
}

double a4w4_full_check_seconds(const a4w4_runner *r, const a4w4_case *c)
{
    const a4w4_rates *rt = r->rates;
    double macs = (double)c->M * (double)c->N * (double)c->K;
    double per_mac = rt ? rt->oracle_s_per_mac : A4W4_COST_ORACLE_S_PER_MAC;
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type || !b->type->run || (r->dev && b->type->run_device))
            continue; /* judged on the device: no host work beyond the sample */
        double runs = 1 + (b->asm_layout ? (double)a4w4_pad_variant_count(c->M, c->K) : 0);
        per_mac += runs * (rt && i < 64 ? rt->run_s_per_mac[i]
                           : b->type->gpu ? A4W4_COST_GPU_RUN_S_PER_MAC
                                          : A4W4_COST_CPU_RUN_S_PER_MAC);
    }
    return macs * per_mac + ((double)c->M + (double)c->N) * (double)c->K *
                                (rt ? rt->gen_s_per_element : A4W4_COST_GEN_S_PER_ELEMENT);
}

/* The plan's index of case c, or -1 (not one of its cases). */
static long plan_index(const a4w4_budget_plan *p, const a4w4_case *c)
{
    return p && c >= p->cases && c < p->cases + p->ncases ? (long)(c - p->cases) : -1;
}

/* 1 when every output of c is to be checked on the host: --full, a backend that judges every
 * output (a4w4_backend_type.full_outputs), or a full check the budget buys. */
static int check_all(const a4w4_runner *r, const a4w4_case *c)
{
    if (r->full || wants_full(r))
        return 1;
    long k = plan_index(r->plan, c);
    if (k >= 0)
        return r->plan->full[k];
    return r->budget_s > 0 && a4w4_full_check_seconds(r, c) <= r->budget_s;
}

/* The oracle entry's note on a case sampled under a budget: what was sampled and why. */
static void note_sampled(const a4w4_runner *r, const a4w4_case *c, const a4w4_sample *s,
                         a4w4_entry_result *e)
{
    long k = plan_index(r->plan, c);
    if (s->full || (k < 0 && r->budget_s <= 0))
        return;
    if (k >= 0)
        note_add(e->note, sizeof e->note, "%ssampled on the host: %zu of %zu outputs (a full "
                 "host check is estimated at %.1f s at this run's measured rates; the run's "
                 "budget of %g s went to the %zu cheaper cases checked in full)",
                 e->note[0] ? "; " : "", s->nrows * s->ncols, c->M * c->N, r->plan->est_s[k],
                 r->plan->budget_s, r->plan->nfull);
    else
        note_add(e->note, sizeof e->note, "%ssampled: %zu of %zu outputs checked (a full check "
                 "is estimated at %.1f s, above the budget of %g s)", e->note[0] ? "; " : "",
                 s->nrows * s->ncols, c->M * c->N, a4w4_full_check_seconds(r, c), r->budget_s);
}

/* A4W4_ST_BADINPUT with err = the first refusal's note when an entry of first.. refused its
 * result (another matrix's outputs), else A4W4_ST_OK. */
static a4w4_hstatus refusals(const a4w4_entry_list *out, size_t first, char *err, size_t errlen)
{
    for (size_t i = first; i < out->n; i++)
        if (out->items[i].refused) {
            snprintf(err, errlen, "%s: %s", out->items[i].backend, out->items[i].note);
            return A4W4_ST_BADINPUT;
        }
    return A4W4_ST_OK;
}

/* The static dispatch facts of c on entries first.. of out (contracts §5, §6; optional). */
static void annotate_entries(const a4w4_case *c, a4w4_entry_list *out, size_t first)
{
    a4w4_dispatch_facts f;
    if (a4w4_dispatch_facts_of(c, &f))
        return;
    for (size_t i = first; i < out->n; i++)
        out->items[i].dispatch = f;
}

/* Bytes a4w4_case_generate allocates for c: the operands, their scales, the ASM layouts the
 * shape allows and, in the normal regime, the bf16 activations. */
static double case_bytes(const a4w4_case *c)
{
    double M = (double)c->M, N = (double)c->N, K = (double)c->K, nb = K / 32;
    double b = (M + N) * (K / 2 + nb) + (double)a4w4_act_scale_padded_rows(c->M) *
                                             (double)a4w4_act_scale_padded_cols(c->K / 32);
    if (a4w4_preshuffle_supported(c->N, c->K))
        b += N * K / 2;
    if (a4w4_scale_swizzle_supported(2, c->N, c->K / 32))
        b += N * nb;
    return c->regime == A4W4_REGIME_NORMAL ? b + 2 * M * K : b;
}

a4w4_hstatus a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out,
                           char *err, size_t errlen)
{
    a4w4_sample s;
    a4w4_case_data d;
    a4w4_oracles o;
    memset(&o, 0, sizeof o);
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, check_all(r, c), &s) != A4W4_OK) {
        snprintf(err, errlen, "case %s: out of memory sampling", c->name);
        return A4W4_ST_NOMEM;
    }
    /* a device judge checks every output: every row exists on the host too */
    const int use_dev = wants_device(r);
    a4w4_stage_times *T = r->stages;
    double t0 = a4w4_now();
    int grc = use_dev ? a4w4_case_generate_all(c, &s, &d) : a4w4_case_generate(c, &s, &d);
    if (T)
        T->generate_s += a4w4_now() - t0;
    if (grc != A4W4_OK) {
        snprintf(err, errlen, "case %s: M=%zu N=%zu K=%zu is too large for this machine: needs "
                 "%.1f GB for its operands and their layouts (cannot allocate them)", c->name,
                 c->M, c->N, c->K, case_bytes(c) / 1e9);
        a4w4_sample_free(&s);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus st = A4W4_ST_NOMEM;
    a4w4_entry_result *e = NULL;
    const a4w4_devjudge *dev = NULL;
    a4w4_devneeds need = needs_of(r);
    a4w4_devoracle dor;
    char dwhy[256] = "";
    memset(&dor, 0, sizeof dor);
    t0 = a4w4_now();
    if (use_dev && !r->dev->open(r->dev->self, c, &d, &need, dwhy, sizeof dwhy))
        dev = r->dev;
    double t1 = a4w4_now();
    int orc = a4w4_oracles_compute(&d, &s, &o);
    if (T) {
        T->judge_s += t1 - t0;
        T->host_oracle_s += a4w4_now() - t1;
    }
    if (orc != 0)
        snprintf(err, errlen, "case %s: out of memory for the oracles", c->name);
    else if (!(e = a4w4_entry_list_add(out)))
        snprintf(err, errlen, "case %s: out of memory for the results", c->name);
    else {
        size_t first = out->n - 1;
        t0 = a4w4_now();
        if (dev)
            oracle_entry_dev(dev, &need, c, &d, &s, &o, &dor, e);
        else
            oracle_entry(c, &d, &s, &o, e);
        if (T)
            T->judge_s += a4w4_now() - t0;
        if (use_dev && !dev) /* the GPU judge could not take the case: all on the host */
            note_add(e->note, sizeof e->note, "%sjudged on the host: %s", e->note[0] ? "; " : "",
                     dwhy);
        note_sampled(r, c, &s, e);
        t0 = a4w4_now();
        st = run_backends(r, c, &d, &s, &o, dev, dev ? &dor : NULL, out);
        if (T)
            T->kernels_s += a4w4_now() - t0;
        annotate_entries(c, out, first);
        if (st != A4W4_ST_OK)
            snprintf(err, errlen, "case %s: out of memory for the results", c->name);
        else
            st = refusals(out, first, err, errlen);
    }
    if (dev)
        dev->close(dev->self);
    a4w4_oracles_free(&o);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return st;
}

/* The system under test whose check this is ("<name> vs y_ordered"), or NULL. */
static const a4w4_bundle_sut *sut_of(const a4w4_check *c, const a4w4_bundle_sut *suts,
                                     size_t nsuts)
{
    for (size_t i = 0; i < nsuts; i++) {
        size_t L = strlen(suts[i].name);
        if (!strncmp(c->subject, suts[i].name, L) && c->subject[L] == ' ')
            return &suts[i];
    }
    return NULL;
}

static int selected(const a4w4_runner *r, const char *name)
{
    for (size_t j = 0; j < r->nbackends; j++)
        if (!strcmp(r->backends[j].name, name))
            return 1;
    return 0;
}

/* Identity of a golden entry: "golden/<file name without .safetensors>". */
static void golden_identity(a4w4_entry_result *e, const char *path, const size_t dims[3],
                            const char *backend, const char *contract, double ms)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[128];
    size_t L = strlen(base);
    snprintf(name, sizeof name, "golden/%.*s", (int)(L > 12 ? L - 12 : L), base);
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, name, dims[0], dims[1], dims[2], "golden", 0,
                        backend, contract);
    e->sampled = 0;
    e->time_ms = ms;
}

/* The oracle's golden check: every tensor check that is no system under test's, folded
 * (first failure kept, checked summed), or the bad-input error. */
static void golden_oracle(const a4w4_check_list *checks, const a4w4_bundle_sut *suts,
                          size_t nsuts, a4w4_hstatus rc, const char *err, const char *path,
                          a4w4_check *oracle)
{
    memset(oracle, 0, sizeof *oracle);
    snprintf(oracle->subject, sizeof oracle->subject, "bundle tensors");
    oracle->verdict = rc == A4W4_ST_BADINPUT ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (rc == A4W4_ST_BADINPUT)
        snprintf(oracle->note, sizeof oracle->note, "bad input: %.140s", err);
    size_t ntensor = 0;
    for (size_t i = 0; i < checks->n; i++) {
        const a4w4_check *c = &checks->items[i];
        if (sut_of(c, suts, nsuts))
            continue;
        ntensor++;
        oracle->checked += c->checked;
        if (c->verdict == A4W4_CHECK_FAIL && oracle->verdict != A4W4_CHECK_FAIL) {
            size_t checked = oracle->checked;
            *oracle = *c;
            oracle->checked = checked;
        }
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!oracle->note[0])
        snprintf(oracle->note, sizeof oracle->note, "%zu tensor checks (a4w4check verify %s)",
                 ntensor, base);
}

a4w4_hstatus a4w4_run_capture(const char *path, a4w4_entry_list *out, char *err, size_t errlen)
{
    a4w4_st_file f;
    a4w4_check_list checks = {0};
    size_t dims[3] = {0, 0, 0};
    double t0 = a4w4_now() * 1e3;
    if (a4w4_st_load(path, &f, err, errlen) != A4W4_ST_OK)
        return A4W4_ST_BADINPUT;
    a4w4_hstatus rc = a4w4_verify_capture(&f, path, &checks, dims, err, errlen);
    double ms = a4w4_now() * 1e3 - t0;
    const char *op = a4w4_st_meta(&f, "op"), *contract = a4w4_st_meta(&f, "contract");
    char backend[160], name[160];
    snprintf(backend, sizeof backend, "capture:%s", op ? op : "?");
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(name, sizeof name, "capture/%.*s", (int)(strlen(base) - 12), base);
    a4w4_check bad_input;
    if (rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM) {
        memset(&bad_input, 0, sizeof bad_input);
        bad_input.verdict = A4W4_CHECK_FAIL;
        snprintf(bad_input.subject, sizeof bad_input.subject, "capture bundle");
        snprintf(bad_input.note, sizeof bad_input.note, "bad input: %s", err);
    }
    size_t n = rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM ? 1 : checks.n;
    for (size_t i = 0; i < n; i++) {
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (!e) {
            rc = A4W4_ST_NOMEM;
            snprintf(err, errlen, "%s: out of memory for the results", path);
            break;
        }
        a4w4_entry_identity(e, A4W4_ENTRY_BYTES, name, dims[0], dims[1], dims[2], "capture", 0,
                            backend, contract && *contract ? contract : "n/a");
        a4w4_entry_set_check(e, n == checks.n ? &checks.items[i] : &bad_input);
        e->time_ms = ms;
    }
    a4w4_check_list_free(&checks);
    a4w4_st_free(&f);
    return rc == A4W4_ST_MISMATCH ? A4W4_ST_OK : rc;
}

/* 1 when backend b is one of the systems under test bundle verification already ran. */
static int is_sut(const a4w4_backend *b, const a4w4_bundle_sut *suts, size_t nsuts)
{
    for (size_t i = 0; i < nsuts; i++)
        if (!strcmp(suts[i].name, b->name))
            return 1;
    return 0;
}

/* The row-major operands of a loaded case bundle, as case data. 0, or -1 (a tensor missing
 * or of the wrong shape: bundle verification has reported it). */
static int golden_data(const a4w4_st_file *f, const size_t dims[3], a4w4_case_data *d)
{
    static const char *const names[4] = {"a_fp4", "a_scale", "w_fp4", "w_scale"};
    size_t M = dims[0], N = dims[1], K = dims[2];
    const size_t want[4][2] = {{M, K / 2}, {M, K / 32}, {N, K / 2}, {N, K / 32}};
    const uint8_t *t[4];
    for (int i = 0; i < 4; i++) {
        const a4w4_st_tensor *x = a4w4_st_find(f, names[i]);
        size_t rows, cols;
        if (!x || a4w4_st_packed_2d(x, &rows, &cols) || rows != want[i][0] || cols != want[i][1])
            return -1;
        t[i] = x->data;
    }
    return a4w4_case_data_load(t[0], t[1], t[2], t[3], M, N, K, d) == A4W4_OK ? 0 : -1;
}

/* Golden bundle path through every selected backend with a GEMM (plugins, bundles, HIP)
 * other than the systems under test bundle verification ran: its operands as a case, every
 * output compared with the oracle of the backend's contract. NOMEM, else OK. */
static a4w4_hstatus golden_backends(const a4w4_runner *r, const a4w4_bundle_sut *suts,
                                    size_t nsuts, const char *path, const size_t dims[3],
                                    a4w4_entry_list *out)
{
    size_t want = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        want += r->backends[i].type && r->backends[i].type->run &&
                !is_sut(&r->backends[i], suts, nsuts);
    a4w4_st_file f;
    if (!want || !dims[0] || a4w4_st_load(path, &f, NULL, 0))
        return A4W4_ST_OK;
    a4w4_case c = {.M = dims[0], .N = dims[1], .K = dims[2], .regime = A4W4_REGIME_EXACT};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(c.name, sizeof c.name, "golden/%.*s", (int)(strlen(base) - 12), base);
    snprintf(c.regime_text, sizeof c.regime_text, "golden");
    snprintf(c.tags, sizeof c.tags, "golden");
    a4w4_sample s = {0};
    a4w4_case_data d;
    a4w4_oracles o;
    memset(&o, 0, sizeof o);
    a4w4_hstatus st = A4W4_ST_OK;
    if (a4w4_sample_make(c.M, c.N, c.K, 0, c.name, 1, &s) != A4W4_OK)
        st = A4W4_ST_NOMEM;
    else if (golden_data(&f, dims, &d) == 0) {
        st = a4w4_oracles_compute(&d, &s, &o) ? A4W4_ST_NOMEM : A4W4_ST_OK;
        for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
            a4w4_backend *b = &r->backends[i];
            a4w4_entry_result *e;
            if (!b->type || !b->type->run || is_sut(b, suts, nsuts))
                continue;
            if (!(e = a4w4_entry_list_add(out)))
                st = A4W4_ST_NOMEM;
            else
                run_backend(b, &c, &d, &s, &o, r->id, NULL, NULL, e);
        }
        a4w4_oracles_free(&o);
        a4w4_case_data_free(&d);
    }
    a4w4_sample_free(&s);
    a4w4_st_free(&f);
    return st;
}

a4w4_hstatus a4w4_run_golden(const a4w4_runner *r, const a4w4_bundle_sut *suts, size_t nsuts,
                             const char *path, a4w4_entry_list *out, char *err, size_t errlen)
{
    a4w4_check_list checks = {0};
    double t0 = (a4w4_now() * 1e3);
    size_t dims[3] = {0, 0, 0};
    a4w4_hstatus rc = a4w4_verify_bundle(path, suts, nsuts, &checks, dims, err, errlen);
    double ms = (a4w4_now() * 1e3) - t0;
    a4w4_hstatus st = rc == A4W4_ST_BADINPUT ? A4W4_ST_BADINPUT : A4W4_ST_OK;
    a4w4_entry_result *e;
    for (size_t i = 0; i < checks.n && st != A4W4_ST_NOMEM; i++) {
        const a4w4_bundle_sut *sut = sut_of(&checks.items[i], suts, nsuts);
        if (!sut || !selected(r, sut->name))
            continue;
        if (!(e = a4w4_entry_list_add(out))) {
            st = A4W4_ST_NOMEM;
            break;
        }
        golden_identity(e, path, dims, sut->name, "ordered(1)", ms);
        a4w4_entry_set_check(e, &checks.items[i]);
    }
    if (st != A4W4_ST_NOMEM && (e = a4w4_entry_list_add(out))) {
        a4w4_check oracle;
        golden_oracle(&checks, suts, nsuts, rc, err, path, &oracle);
        golden_identity(e, path, dims, "oracle", "bit-exact tensors", ms);
        a4w4_entry_set_check(e, &oracle);
    } else {
        st = A4W4_ST_NOMEM;
    }
    if (st == A4W4_ST_OK && rc != A4W4_ST_BADINPUT)
        st = golden_backends(r, suts, nsuts, path, dims, out);
    if (st == A4W4_ST_NOMEM)
        snprintf(err, errlen, "%s: out of memory for the results", path);
    a4w4_check_list_free(&checks);
    return st;
}
