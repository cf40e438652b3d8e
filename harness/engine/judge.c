/* judge.c — the one judgement (see judge.h). */
#include "judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_atomic.h"
#include "a4w4_formats.h"
#include "backend.h"

static size_t row_at(const a4w4_judge_grid *g, size_t i) { return g->rows ? g->rows[i] : i; }
static size_t col_at(const a4w4_judge_grid *g, size_t j) { return g->cols ? g->cols[j] : j; }

/* Output k mismatched: its distance, its place among the first ones, its mark. */
static void record(a4w4_comparison *c, const a4w4_judge_grid *g, size_t k, uint16_t got,
                   uint16_t exp)
{
    unsigned d = a4w4_bf16_ulp_distance(got, exp);
    if (d > c->max_ulp)
        c->max_ulp = d;
    if (c->nrec < A4W4_JUDGE_MAX_RECORDED) {
        c->rec[c->nrec].row = row_at(g, k / g->ncols);
        c->rec[c->nrec].col = col_at(g, k % g->ncols);
        c->rec[c->nrec].got = got;
        c->rec[c->nrec].expected = exp;
        c->nrec++;
    }
    if (c->mism)
        c->mism[k] = 1;
    c->mismatches++;
}

void a4w4_judge_start(a4w4_comparison *c, uint8_t *mism, size_t n)
{
    memset(c, 0, sizeof *c);
    c->mism = mism;
    if (mism)
        memset(mism, 0, n);
}

/* 1 when got is the poison and counts as never written under rule. */
static int unwritten(uint16_t got, uint16_t exp, a4w4_poison_rule rule)
{
    return rule != A4W4_POISON_IGNORED && got == A4W4_POISON_BF16 &&
           !(rule == A4W4_POISON_UNLESS_EXPECTED && exp == A4W4_POISON_BF16);
}

static int same_bits(uint16_t a, uint16_t b)
{
    return a == b || (a4w4_bf16_is_nan(a) && a4w4_bf16_is_nan(b));
}

void a4w4_judge_exact(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                      const uint16_t *expected, size_t n, a4w4_poison_rule rule, uint8_t *mism)
{
    a4w4_judge_start(c, mism, n);
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (unwritten(got[k], expected[k], rule)) {
            c->unwritten++;
            record(c, g, k, got[k], expected[k]);
        } else if (!same_bits(got[k], expected[k])) {
            record(c, g, k, got[k], expected[k]);
        }
    }
}

/* 1 when no summation order of output k's terms, in any rounding, can leave fp32's finite
 * range: no NaN scale is read and the sum of |terms| is below 2^126. */
static int finite_in_any_order(const a4w4_oracles *o, size_t k)
{
    return o->abs_sum[k] < 0x1p126f;
}

void a4w4_judge_exact_regime(a4w4_comparison *c, const a4w4_judge_grid *g,
                             const uint16_t *got, const a4w4_oracles *o, uint8_t *mism)
{
    a4w4_judge_start(c, mism, o->count);
    for (size_t k = 0; k < o->count; k++) {
        if (got[k] == A4W4_POISON_BF16) {
            c->checked++;
            c->unwritten++;
            record(c, g, k, got[k], o->exact[k]);
            continue;
        }
        if (!o->in_regime[k] && !isnan(o->exact_f32[k])) {
            c->not_judged++;
            if ((got[k] & 0x7F80) == 0x7F80 && finite_in_any_order(o, k)) {
                c->not_finite++;
                c->checked++;
                record(c, g, k, got[k], o->exact[k]);
            }
            continue;
        }
        c->checked++;
        if (!same_bits(got[k], o->exact[k]))
            record(c, g, k, got[k], o->exact[k]);
    }
}

/* One bf16 ULP at |x| (2^-133 below the normal range). */
static double bf16_ulp_at(double x)
{
    x = fabs(x);
    return x < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(x) - 7);
}

/* The i-th smallest of v[0..n) (i < n; no NaN), v reordered: quickselect, linear on average
 * (a case's every output is judged, so a sort would cost n log n). */
static double nth_smallest(double *v, size_t n, size_t i)
{
    long long lo = 0, hi = (long long)n - 1;
    const long long want = (long long)i;
    while (lo < hi) {
        const double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        const double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        long long l = lo, r = hi;
        while (l <= r) { /* Hoare: v[lo..r] <= pivot <= v[l..hi], pivot between */
            while (v[l] < pivot)
                l++;
            while (v[r] > pivot)
                r--;
            if (l <= r) {
                const double t = v[l];
                v[l++] = v[r];
                v[r--] = t;
            }
        }
        if (want <= r)
            hi = r;
        else if (want >= l)
            lo = l;
        else
            return v[want];
    }
    return v[want];
}

/* The bound's use and size over the outputs compared within it (ulps[0..k), reordered). */
static void bound_stats(a4w4_comparison *c, double *ulps, size_t k)
{
    c->has_bound = 1;
    if (!ulps || !k)
        return;
    double max = ulps[0];
    for (size_t i = 1; i < k; i++)
        max = ulps[i] > max ? ulps[i] : max;
    c->bound_ulp_max = max;
    const double hi = nth_smallest(ulps, k, k / 2);
    c->bound_ulp_median = k % 2 ? hi : 0.5 * (nth_smallest(ulps, k, k / 2 - 1) + hi);
}

/* One output under bounded(S): 1 when it passes. *use: |got - e| / tolerance (-1 when not
 * measured), *ulps: the tolerance in bf16 ULPs of e (-1 likewise), *vacuous: 1 when the
 * tolerance admits 0 for a finite nonzero e, 0 when not, -1 neither. */
static int bounded_ok(const a4w4_bounded_limits *L, uint16_t got, double *use, double *ulps,
                      int *vacuous)
{
    double e = L->exact, tol = L->bound + 0x1p-24 * fabs(e) + 0x1p-149;
    *use = *ulps = -1;
    *vacuous = isfinite(tol) && e != 0 ? fabs(e) <= tol : -1;
    if (isnan(L->bound))
        return a4w4_bf16_is_nan(got);
    double v = a4w4_bf16_to_f32(got);
    if (a4w4_bf16_is_nan(got))
        return L->inf_pos && L->inf_neg;
    if (isinf(v))
        return v > 0 ? L->inf_pos : L->inf_neg;
    *use = fabs(v - e) / tol;
    *ulps = tol / bf16_ulp_at(e);
    return *use <= 1.0;
}

void a4w4_judge_bounded(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                        const uint16_t *exact, const a4w4_bounded_limits *L, size_t n,
                        uint8_t *mism)
{
    a4w4_judge_start(c, mism, n);
    double *ulps = malloc((n ? n : 1) * sizeof *ulps);
    size_t k_ulps = 0;
    for (size_t k = 0; k < n; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16) {
            c->unwritten++;
            record(c, g, k, got[k], exact[k]);
            continue;
        }
        double use, ulp;
        int vac;
        int ok = bounded_ok(&L[k], got[k], &use, &ulp, &vac);
        c->bound_weighed += vac >= 0;
        c->bound_vacuous += vac > 0;
        if (use > c->bound_use)
            c->bound_use = use;
        if (ulps && ulp >= 0)
            ulps[k_ulps++] = ulp;
        if (!ok)
            record(c, g, k, got[k], exact[k]);
        else if (got[k] != exact[k] && !a4w4_bf16_is_nan(got[k])) { /* within: distance only */
            unsigned d = a4w4_bf16_ulp_distance(got[k], exact[k]);
            if (d > c->max_ulp)
                c->max_ulp = d;
        }
    }
    bound_stats(c, ulps, k_ulps);
    free(ulps);
}

void a4w4_judge_atomic(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                       const uint16_t *q, unsigned S, unsigned n, const uint16_t *in_order,
                       size_t count, uint8_t *mism)
{
    a4w4_judge_start(c, mism, count);
    for (size_t k = 0; k < count; k++) {
        c->checked++;
        if (got[k] == A4W4_POISON_BF16)
            c->unwritten++;
        if (got[k] == A4W4_POISON_BF16 || !a4w4_atomic_member(q + k * S, n, got[k]))
            record(c, g, k, got[k], in_order[k]);
    }
}

const uint16_t *a4w4_judge_expected(const a4w4_contract *k, a4w4_oracles *o)
{
    const uint16_t *in_order = NULL;
    switch (k->kind) {
    case A4W4_CONTRACT_ATOMIC:
        return a4w4_oracles_atomic(o, k->split, NULL, &in_order) ? in_order : NULL;
    case A4W4_CONTRACT_TREE: return a4w4_oracles_tree(o, &k->tree);
    case A4W4_CONTRACT_ORDERED: return a4w4_oracles_ordered(o, k->split);
    default: return o->exact;
    }
}

int a4w4_judge_contract(a4w4_comparison *c, const a4w4_judge_grid *g, const a4w4_contract *k,
                        a4w4_oracles *o, const uint16_t *got, uint8_t *mism)
{
    if (k->kind == A4W4_CONTRACT_BOUNDED) {
        const a4w4_bounded_limits *L = a4w4_oracles_bound(o, k->split);
        if (!L)
            return -1;
        a4w4_judge_bounded(c, g, got, o->exact, L, o->count, mism);
    } else if (k->kind == A4W4_CONTRACT_ATOMIC) {
        unsigned n = 0;
        const uint16_t *in_order = NULL, *q = a4w4_oracles_atomic(o, k->split, &n, &in_order);
        if (!q)
            return -1;
        a4w4_judge_atomic(c, g, got, q, k->split, n, in_order, o->count, mism);
    } else if (k->kind == A4W4_CONTRACT_EXACT) {
        a4w4_judge_exact_regime(c, g, got, o, mism);
    } else {
        const uint16_t *exp = a4w4_judge_expected(k, o);
        if (!exp)
            return -1;
        a4w4_judge_exact(c, g, got, exp, o->count, A4W4_POISON_UNWRITTEN, mism);
    }
    return 0;
}

/* 1 when exact judges output k of o bit for bit (a4w4_judge_exact_regime). */
static int exact_judges(const a4w4_oracles *o, size_t k)
{
    return o->in_regime[k] || isnan(o->exact_f32[k]);
}

size_t a4w4_judge_readings_differ(const a4w4_contract *k, a4w4_oracles *o, a4w4_oracles *alt)
{
    const uint16_t *a = a4w4_judge_expected(k, o), *b = a4w4_judge_expected(k, alt);
    if (!a || !b)
        return SIZE_MAX;
    int exact = k->kind == A4W4_CONTRACT_EXACT;
    size_t n = 0;
    for (size_t i = 0; i < o->count; i++)
        n += !same_bits(a[i], b[i]) && (!exact || exact_judges(o, i) || exact_judges(alt, i));
    return n;
}

a4w4_code0_outcome a4w4_judge_code0(size_t differ, int policy, size_t ocp_mismatches,
                                    size_t alt_mismatches)
{
    if (!differ)
        return A4W4_CODE0_READINGS_AGREE;
    if (policy == A4W4_CODE0_OCP || policy == A4W4_CODE0_DRIVER)
        return A4W4_CODE0_JUDGED_AS_STATED;
    if (!ocp_mismatches != !alt_mismatches)
        return A4W4_CODE0_JUDGED_AMBIGUOUS;
    return ocp_mismatches ? A4W4_CODE0_MATCHES_NEITHER : A4W4_CODE0_MATCHES_BOTH;
}

a4w4_verdict a4w4_judge_verdict(int failed, a4w4_verdict unjudged, int ambiguous, int vacuous)
{
    if (unjudged == A4W4_VERDICT_SKIP || unjudged == A4W4_VERDICT_NA)
        return unjudged;
    if (failed)
        return A4W4_VERDICT_FAIL;
    if (ambiguous)
        return A4W4_VERDICT_AMBIGUOUS;
    return vacuous ? A4W4_VERDICT_SKIP : A4W4_VERDICT_PASS;
}
