/* runner.c — see runner.h. */
#include "runner.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_layout.h"
#include "annotate.h"
#include "check.h"
#include "fsutil.h"
#include "gen.h"
#include "safetensors.h"
#include "sample_oracles.h"

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
    size_t not_judged; /* outputs left out: outside the exact regime under exact */
    size_t not_finite; /* of those, NaN or Inf where every order gives a finite sum (also in
                          checked: compared, though not bit for bit) */
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

/* 1 when no summation order of output k's terms, in any rounding, can leave fp32's finite
 * range: no NaN scale is read and the sum of |terms| is below 2^126. */
static int finite_in_any_order(const a4w4_oracles *o, size_t k)
{
    return o->abs_sum[k] < 0x1p126f;
}

/* exact (contracts §4.1): bit for bit where the exact regime is proven, and where the output
 * reads a NaN scale (NaN under every contract, contracts §2); the other outputs are not judged
 * (exact is a reference there, not a verdict), only required to be written and, where every
 * order gives a finite sum, finite (a NaN or Inf there is wrong under any order: a checked
 * mismatch, counted in not_finite, the output still not judged bit for bit). */
static void compare_exact_regime(comparison *c, const a4w4_sample *s, const uint16_t *got,
                                 const a4w4_oracles *o, size_t n)
{
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < n; k++) {
        if (got[k] == A4W4_POISON_BF16) {
            c->checked++;
            c->unwritten++;
            record(c, s, k, got[k], o->exact[k]);
            continue;
        }
        if (!o->in_regime[k] && !isnan(o->exact_f32[k])) {
            c->not_judged++;
            if ((got[k] & 0x7F80) == 0x7F80 && finite_in_any_order(o, k)) {
                c->not_finite++;
                c->checked++;
                record(c, s, k, got[k], o->exact[k]);
            }
            continue;
        }
        c->checked++;
        if (got[k] != o->exact[k] && !(bf16_nan(got[k]) && bf16_nan(o->exact[k])))
            record(c, s, k, got[k], o->exact[k]);
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

/* What the n outputs of an entry were judged by: the compared ones bit for bit or within the
 * bound, the rest not judged (an entry that compared nothing: all of them). */
static void put_judged(a4w4_entry_result *e, const comparison *cmp, size_t n)
{
    e->has_judged = 1;
    e->judged_bit_exact = cmp->has_bound ? 0 : cmp->checked - cmp->not_finite;
    e->judged_in_bound = cmp->has_bound ? cmp->checked : 0;
    e->not_judged = n - e->judged_bit_exact - e->judged_in_bound;
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
    const a4w4_contract *k; /* the contract b keeps on this case (its rule for the shape) */
    a4w4_case_data *d;
    const a4w4_sample *s;
    a4w4_oracles *o;
    uint16_t *y, *y2;  /* the baseline outputs and a variant's */
    size_t n;          /* outputs in the sample */
    a4w4_run_args args;
    char why[512];
    comparison cmp;    /* the baseline against the contract's oracle */
} gemm_run;

static int is_bounded(const gemm_run *g) { return g->k->kind == A4W4_CONTRACT_BOUNDED; }

/* The contract backend b holds case c to (contracts §4.1, §4.2): the first of its rules that
 * matches c's shape; a backend built without rules, its contract text parsed into *own. NULL
 * when none applies, with why ("contract FILE has no rule for M=.. N=.. K=.."). */
static const a4w4_contract *case_contract(const a4w4_backend *b, const a4w4_case *c,
                                          a4w4_contract *own, char *why, size_t whylen)
{
    if (b->contracts.n == 0 && !strcmp(b->contract, A4W4_CONTRACT_UNDECLARED)) {
        /* a capture whose kernel declared no contract: judged as exact is, inside the exact
         * regime only (contracts §4.1), never against a contract it did not declare */
        *own = (a4w4_contract){A4W4_CONTRACT_EXACT, 1, {0}};
        return own;
    }
    if (b->contracts.n == 0)
        return a4w4_contract_parse(b->contract, own, why, whylen) ? NULL : own;
    const a4w4_contract *k = a4w4_contract_set_find(&b->contracts, c->M, c->N, c->K);
    if (!k && why)
        snprintf(why, whylen, "contract %.300s has no rule for M=%zu N=%zu K=%zu",
                 b->contract_source[0] ? b->contract_source : b->contract, c->M, c->N, c->K);
    return k;
}


/* Poison y, run the backend once and record run_ms, and the outputs' hash when it ran. */
static int run_baseline(gemm_run *g, a4w4_entry_result *e)
{
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

/* The note of an entry judged inside the exact regime only: what was left out, and why. */
static void note_not_judged(const gemm_run *g, a4w4_entry_result *e)
{
    size_t left = g->cmp.not_judged;
    if (g->cmp.not_finite)
        note_add(e->note, sizeof e->note, "%zu outputs NaN or Inf where every summation order "
                 "gives a finite value (wrong under any contract); ", g->cmp.not_finite);
    if (strcmp(g->b->contract, "exact"))
        note_add(e->note, sizeof e->note, "no contract declared: judged against exact where "
                 "the exact regime is proven (contracts §4.1), %zu of %zu outputs outside it "
                 "not judged; ", left, g->n);
    else if (left)
        note_add(e->note, sizeof e->note, "%zu of %zu outputs outside the exact regime: not "
                 "judged (exact is a reference there, contracts §4.1); ", left, g->n);
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
    if (is_bounded(g)) {
        const double *B = a4w4_oracles_bound(g->o, g->k->split);
        if (!B)
            return -1;
        compare_bounded(&g->cmp, g->s, g->y, g->o->exact, g->o->exact_f32, B, g->n);
        if (g->cmp.mismatches)
            note_add(e->note, sizeof e->note, "outside the %s bound: largest distance %.3g "
                     "times the bound; ", e->contract, g->cmp.bound_use);
    } else if (g->k->kind == A4W4_CONTRACT_EXACT) {
        compare_exact_regime(&g->cmp, g->s, g->y, g->o, g->n);
        note_not_judged(g, e);
    } else {
        const uint16_t *exp = g->k->kind == A4W4_CONTRACT_TREE
                                  ? a4w4_oracles_tree(g->o, &g->k->tree)
                                  : a4w4_oracles_ordered(g->o, g->k->split);
        if (!exp)
            return -1;
        compare_exact(&g->cmp, g->s, g->y, exp, g->n);
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
    if (is_bounded(g)) {
        /* the reduction order of a bounded kernel varies run to run: a variant only
         * counts when it leaves the bound the baseline kept */
        comparison c2;
        compare_bounded(&c2, g->s, g->y2, g->o->exact, g->o->exact_f32,
                        a4w4_oracles_bound(g->o, g->k->split), g->n);
        diff = c2.mismatches > g->cmp.mismatches ? c2.mismatches - g->cmp.mismatches : 0;
    } else {
        for (size_t k = 0; k < g->n; k++)
            diff += g->y2[k] != g->y[k];
    }
    return diff;
}

/* contracts §3.3: valid outputs must not depend on the pad fills or on bytes past K. Runs the
 * variants (2, or 5 when there are column pads or K % 256 != 0) and restores the default
 * fills. Returns 1 when some variant changed outputs (pad_dependent names them). */
static int check_pad_variants(gemm_run *g, a4w4_entry_result *e)
{
    static const variant vs[] = {{0xFF, 0x7F, A4W4_GUARD_FILL, "row pad 0xFF"},
                                 {0x00, 0x7F, A4W4_GUARD_FILL, "row pad 0x00"},
                                 {0x7F, 0x00, A4W4_GUARD_FILL, "column pad 0x00"},
                                 {0x7F, 0xFF, A4W4_GUARD_FILL, "column pad 0xFF"},
                                 {0x7F, 0x7F, 0x5A, "garbage 0x5A past the buffers' ends"}};
    size_t nb = g->d->K / 32;
    int colpad = a4w4_act_scale_padded_cols(nb) != nb;
    size_t nv = (colpad || g->d->K % 256) ? 5 : 2;
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
    if (!fail && !g->cmp.checked) /* every output outside the exact regime: nothing judged */
        *na = 1;
    return fail;
}

static int run_backend(a4w4_backend *b, const a4w4_case *c, a4w4_case_data *d,
                       const a4w4_sample *s, a4w4_oracles *o, const a4w4_run_identity *id,
                       a4w4_entry_result *e)
{
    gemm_run g;
    memset(&g, 0, sizeof g);
    g.b = b;
    g.d = d;
    g.s = s;
    g.o = o;
    g.n = o->count;
    g.y = malloc(g.n * 2);
    g.y2 = malloc(g.n * 2);
    g.args = (a4w4_run_args){c, d, s, g.y, g.why, sizeof g.why, id};
    a4w4_contract own;
    char ktext[A4W4_CONTRACT_MAX], kwhy[512] = "";
    g.k = case_contract(b, c, &own, kwhy, sizeof kwhy);
    if (!g.k || !strcmp(b->contract, A4W4_CONTRACT_UNDECLARED) ||
        a4w4_contract_format(g.k, ktext, sizeof ktext) < 0)
        snprintf(ktext, sizeof ktext, "%s", b->contract);
    case_identity(e, c, A4W4_ENTRY_OUTPUTS, b->name, ktext);
    int fail = 1, na = 0;
    if (!g.k) { /* not judged: no contract applies to this shape */
        fail = 0;
        na = 1;
        snprintf(e->note, sizeof e->note, "%s", kwhy);
    } else if (g.k->kind == A4W4_CONTRACT_TREE &&
               a4w4_tree_check(&g.k->tree, c->K, kwhy, sizeof kwhy)) {
        snprintf(e->note, sizeof e->note, "contract error for this case: %s (contracts §4.2)",
                 kwhy);
    } else if (!g.y || !g.y2) {
        snprintf(e->note, sizeof e->note, "out of memory for %zu outputs", g.n);
    } else {
        fail = gemm_checks(&g, e, &na);
    }
    put_comparison(e, &g.cmp, s, e->has_run ? e->run_ms : NAN, o->proven, verdict_of(fail, na));
    put_judged(e, &g.cmp, g.n);
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

/* Entries for every backend of r on case c (after the oracle's). */
static a4w4_hstatus run_backends(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                                 const a4w4_sample *s, a4w4_oracles *o, a4w4_entry_list *out)
{
    for (size_t i = 0; i < r->nbackends; i++) {
        a4w4_backend *b = &r->backends[i];
        if (!b->type->run && !b->type->layouts && !b->type->quantize)
            continue;
        a4w4_entry_result *e = a4w4_entry_list_add(out);
        if (!e)
            return A4W4_ST_NOMEM;
        if (b->type->run)
            run_backend(b, c, d, s, o, r->id, e);
        else if (b->type->layouts)
            run_layout_backend(b, c, d, s, e);
        else
            run_quant_backend(b, c, d, s, e);
    }
    return A4W4_ST_OK;
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
    double macs = (double)c->M * (double)c->N * (double)c->K;
    double per_mac = A4W4_COST_ORACLE_S_PER_MAC;
    for (size_t i = 0; i < r->nbackends; i++) {
        const a4w4_backend *b = &r->backends[i];
        if (!b->type || !b->type->run)
            continue;
        double runs = 1 + (b->asm_layout ? (c->K % 256 ? 5 : 2) : 0);
        per_mac += runs * (b->type->gpu ? A4W4_COST_GPU_RUN_S_PER_MAC
                                        : A4W4_COST_CPU_RUN_S_PER_MAC);
        a4w4_contract own;
        const a4w4_contract *k = case_contract(b, c, &own, NULL, 0);
        if (k && k->kind == A4W4_CONTRACT_TREE)
            per_mac += a4w4_tree_fast_eligible(&k->tree)
                           ? A4W4_COST_TREE_FAST_S_PER_MAC
                           : A4W4_COST_TREE_PLAIN_S_PER_LEAF / (double)k->tree.leaf;
    }
    return macs * per_mac + ((double)c->M + (double)c->N) * (double)c->K *
                                A4W4_COST_GEN_S_PER_ELEMENT;
}

/* 1 when every output of c is to be checked: --full, a backend that judges every output
 * (a4w4_backend_type.full_outputs), or a full check within the budget. */
static int check_all(const a4w4_runner *r, const a4w4_case *c)
{
    return r->full || wants_full(r) ||
           (r->budget_s > 0 && a4w4_full_check_seconds(r, c) <= r->budget_s);
}

/* The oracle entry's note on a case sampled under a budget. */
static void note_sampled(const a4w4_runner *r, const a4w4_case *c, const a4w4_sample *s,
                         a4w4_entry_result *e)
{
    if (s->full || r->budget_s <= 0)
        return;
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
    if (a4w4_case_generate(c, &s, &d) != A4W4_OK) {
        snprintf(err, errlen, "case %s: M=%zu N=%zu K=%zu is too large for this machine: needs "
                 "%.1f GB for its operands and their layouts (cannot allocate them)", c->name,
                 c->M, c->N, c->K, case_bytes(c) / 1e9);
        a4w4_sample_free(&s);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus st = A4W4_ST_NOMEM;
    a4w4_entry_result *e = NULL;
    if (a4w4_oracles_compute(&d, &s, &o) != 0)
        snprintf(err, errlen, "case %s: out of memory for the oracles", c->name);
    else if (!(e = a4w4_entry_list_add(out)))
        snprintf(err, errlen, "case %s: out of memory for the results", c->name);
    else {
        size_t first = out->n - 1;
        oracle_entry(c, &d, &s, &o, e);
        note_sampled(r, c, &s, e);
        st = run_backends(r, c, &d, &s, &o, out);
        annotate_entries(c, out, first);
        if (st != A4W4_ST_OK)
            snprintf(err, errlen, "case %s: out of memory for the results", c->name);
        else
            st = refusals(out, first, err, errlen);
    }
    a4w4_oracles_free(&o);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return st;
}

/* ---- outputs computed elsewhere (captures) ------------------------------------------ */

/* The "backend" of a4w4_judge_outputs: hands back the outputs it was given. */
static int run_given(void *ctx, const a4w4_run_args *a)
{
    const uint16_t *y = ctx;
    memcpy(a->y, y, a->s->nrows * a->s->ncols * sizeof *y); /* a full sample: y as given */
    return A4W4_OK;
}

static const a4w4_backend_type given_type = {.name = "given",
                                             .what = "outputs computed elsewhere",
                                             .contract = "exact",
                                             .thread_safe = 1,
                                             .full_outputs = 1,
                                             .run = run_given};

/* S of "ordered(S)" or "bounded(S)" (plain "bounded": 1); 1 for the others. */
static unsigned split_of(const char *contract)
{
    unsigned S = 1;
    if (sscanf(contract, "ordered(%u)", &S) != 1 && sscanf(contract, "bounded(%u)", &S) != 1)
        S = 1;
    return S;
}

a4w4_hstatus a4w4_judge_outputs(const a4w4_judge_input *in, a4w4_entry_result *e)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", in->name);
    snprintf(c.regime_text, sizeof c.regime_text, "%s", in->regime);
    c.M = in->M, c.N = in->N, c.K = in->K;
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &given_type;
    b.ctx = (void *)in->y;
    snprintf(b.name, sizeof b.name, "%s", in->backend);
    snprintf(b.contract, sizeof b.contract, "%s",
             strcmp(in->contract, "bounded") ? in->contract : "bounded(1)");
    b.split = split_of(b.contract);
    a4w4_sample s = {0};
    a4w4_case_data d;
    a4w4_oracles o;
    memset(&o, 0, sizeof o);
    a4w4_hstatus st = A4W4_ST_NOMEM;
    if (a4w4_sample_make(c.M, c.N, c.K, 0, c.name, 1, &s) != A4W4_OK)
        return st;
    if (a4w4_case_data_load(in->a_fp4, in->a_scale, in->w_fp4, in->w_scale, c.M, c.N, c.K,
                            &d) == A4W4_OK) {
        if (a4w4_oracles_compute(&d, &s, &o) == 0) {
            run_backend(&b, &c, &d, &s, &o, NULL, e);
            e->has_tags = 0;
            st = A4W4_ST_OK;
        }
        a4w4_oracles_free(&o);
        a4w4_case_data_free(&d);
    }
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
                run_backend(b, &c, &d, &s, &o, r->id, e);
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
        e->has_judged = 1; /* the system under test's y against y_ordered, bit for bit */
        e->judged_bit_exact = e->verdict == A4W4_VERDICT_NA ? 0 : e->checked;
        e->not_judged = dims[0] * dims[1] - e->judged_bit_exact;
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
