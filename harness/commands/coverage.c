/* coverage.c — see coverage.h. */
#include "coverage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "gen_range.h"
#include "grow.h"

a4w4_hstatus a4w4_coverage_add(a4w4_coverage *cov, const char *group, const char *what,
                               const char *rule, const a4w4_case *cases, size_t ncases,
                               a4w4_case_rule r, const void *arg)
{
    if (A4W4_GROW(cov->items, cov->n + 1, cov->cap, 64))
        return A4W4_ST_NOMEM;
    a4w4_cov_item *it = &cov->items[cov->n];
    memset(it, 0, sizeof *it);
    snprintf(it->group, sizeof it->group, "%s", group);
    snprintf(it->what, sizeof it->what, "%s", what);
    snprintf(it->rule, sizeof it->rule, "%s", rule);
    if (ncases && !(it->cases = malloc(ncases * sizeof *it->cases)))
        return A4W4_ST_NOMEM;
    for (size_t i = 0; i < ncases; i++)
        if (r(&cases[i], arg))
            it->cases[it->ncases++] = i;
    cov->n++;
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_tuned_m_values(const char *const *paths, size_t npaths, int **m, size_t *nm,
                                 char *err, size_t errlen)
{
    *m = NULL;
    *nm = 0;
    for (size_t p = 0; p < npaths; p++) {
        a4w4_tuned_table t;
        memset(&t, 0, sizeof t);
        int rc = a4w4_tuned_load(&t, paths[p], err, errlen);
        if (rc != A4W4_OK) {
            free(*m);
            *m = NULL;
            *nm = 0;
            return rc == A4W4_ENOMEM ? A4W4_ST_NOMEM : A4W4_ST_BADINPUT;
        }
        int *grown = realloc(*m, (*nm + t.n + 1) * sizeof *grown);
        if (!grown) {
            a4w4_tuned_free(&t);
            free(*m);
            *m = NULL;
            *nm = 0;
            return A4W4_ST_NOMEM;
        }
        *m = grown;
        for (size_t i = 0; i < t.n; i++)
            (*m)[(*nm)++] = t.rows[i].M;
        a4w4_tuned_free(&t);
    }
    return A4W4_ST_OK;
}

/* ---- buckets and tiles --------------------------------------------------------------------- */

static int in_bucket_edge(const a4w4_case *c, const void *arg)
{
    const a4w4_m_bucket *b = arg;
    return c->M == (size_t)b->lo && (b->n_rule == 0 || (b->n_rule > 0) == (c->N > 4096));
}

a4w4_hstatus a4w4_coverage_buckets(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases,
                                   const int *m, size_t nm)
{
    size_t nb = a4w4_m_buckets(m, nm, NULL, 0);
    a4w4_m_bucket *b = malloc((nb ? nb : 1) * sizeof *b);
    if (!b)
        return A4W4_ST_NOMEM;
    a4w4_m_buckets(m, nm, b, nb);
    a4w4_hstatus st = A4W4_ST_OK;
    for (size_t i = 0; i < nb && st == A4W4_ST_OK; i++) {
        char what[160], rule[96], hi[24];
        if (b[i].hi == A4W4_DIM_MAX)
            snprintf(hi, sizeof hi, "...");
        else
            snprintf(hi, sizeof hi, "%d", b[i].hi);
        snprintf(what, sizeof what, "M' %d by %s: M %d..%s%s", b[i].m_tuned,
                 b[i].gl < 0 ? "M itself" : b[i].gl ? "getPaddedM gl 1" : "getPaddedM gl 0",
                 b[i].lo, hi, b[i].n_rule > 0 ? ", N > 4096" : b[i].n_rule < 0 ? ", N <= 4096" : "");
        snprintf(rule, sizeof rule, "M == %d%s", b[i].lo,
                 b[i].n_rule > 0 ? ", N > 4096" : b[i].n_rule < 0 ? ", N <= 4096" : "");
        st = a4w4_coverage_add(cov, "bucket", what, rule, cases, ncases, in_bucket_edge, &b[i]);
    }
    free(b);
    return st;
}

static int past_tile_m(const a4w4_case *c, const void *arg)
{
    size_t t = *(const size_t *)arg;
    return c->M > t && c->M % t == 1;
}

static int past_tile_n(const a4w4_case *c, const void *arg)
{
    size_t t = *(const size_t *)arg;
    return c->N > t && c->N % t != 0 && c->N % t <= 32;
}

/* The distinct values of tile_M (axis 0) or tile_N (axis 1) of kt, ascending. */
static size_t distinct_tiles(const a4w4_kernel_table *kt, int axis, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++) {
        size_t v = (size_t)(axis ? kt->rows[i].tile_n : kt->rows[i].tile_m), j = 0;
        while (j < n && out[j] != v)
            j++;
        if (j == n)
            out[n++] = v;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            size_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

a4w4_hstatus a4w4_coverage_tiles(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases,
                                 const a4w4_kernel_table *kt)
{
    size_t t[A4W4_MAX_KERNELS];
    for (int axis = 0; axis < 2; axis++) {
        size_t n = distinct_tiles(kt, axis, t);
        for (size_t i = 0; i < n; i++) {
            char what[160], rule[96];
            snprintf(what, sizeof what, "tile_%s %zu", axis ? "N" : "M", t[i]);
            if (axis)
                snprintf(rule, sizeof rule, "N > %zu, 0 < N %% %zu <= 32", t[i], t[i]);
            else
                snprintf(rule, sizeof rule, "M > %zu, M %% %zu == 1", t[i], t[i]);
            a4w4_hstatus st = a4w4_coverage_add(cov, axis ? "tile_N" : "tile_M", what, rule,
                                                cases, ncases, axis ? past_tile_n : past_tile_m,
                                                &t[i]);
            if (st != A4W4_ST_OK)
                return st;
        }
    }
    return A4W4_ST_OK;
}

/* ---- regime edges and grids ------------------------------------------------------------------- */

/* A range case holding kind k (its segment, and rows of both signs) with every variant. */
static int range_kind(const a4w4_case *c, const void *arg)
{
    size_t k = *(const size_t *)arg;
    return c->regime == A4W4_REGIME_RANGE && c->K >= (k + 1) * 32 * A4W4_RANGE_SEGMENT_BLOCKS &&
           c->M > k + A4W4_RANGE_KINDS && c->N >= A4W4_RANGE_VARIANTS;
}

static int nan_both(const a4w4_case *c, const void *arg)
{
    (void)arg;
    return c->regime == A4W4_REGIME_RANGE || c->regime == A4W4_REGIME_SPECIAL;
}

static int subnormal(const a4w4_case *c, const void *arg)
{
    static const size_t kind3 = 3;
    (void)arg;
    return c->regime == A4W4_REGIME_TINY || range_kind(c, &kind3);
}

static int zero_sign(const a4w4_case *c, const void *arg)
{
    (void)arg;
    return (c->regime == A4W4_REGIME_SPECIAL || c->regime == A4W4_REGIME_TINY) && c->M >= 2;
}

static int code0(const a4w4_case *c, const void *arg)
{
    (void)arg;
    return c->regime == A4W4_REGIME_CODE0;
}

static int grid_past(const a4w4_case *c, const void *arg)
{
    size_t t = A4W4_SAMPLE_TILE;
    return ((c->M + t - 1) / t) * ((c->N + t - 1) / t) > *(const size_t *)arg;
}

a4w4_hstatus a4w4_coverage_edges(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases)
{
    static const size_t kinds[A4W4_RANGE_KINDS] = {0, 1, 2, 3};
    static const char *const kind_what[A4W4_RANGE_KINDS] = {
        "bf16 overflow: totals at, below and past 511*2^119 (the max-finite rounding "
        "boundary) and past fp32, both signs",
        "combined scale 2^(sa+sb-254) past fp32 (sa+sb 382..508) with finite block values",
        "E8M0 254 with elements past fp32 when dequantized alone, in A and in W",
        "combined scale below fp32's subnormals (sa+sb <= 104) with representable block "
        "values"};
    static const size_t grids[2] = {256, 1024};
    a4w4_hstatus st = A4W4_ST_OK;
    for (size_t k = 0; k < A4W4_RANGE_KINDS && st == A4W4_ST_OK; k++) {
        char rule[96];
        snprintf(rule, sizeof rule, "range, K >= %zu, M >= %zu, N >= %d", (k + 1) * 256,
                 k + A4W4_RANGE_KINDS + 1, A4W4_RANGE_VARIANTS);
        st = a4w4_coverage_add(cov, "edge", kind_what[k], rule, cases, ncases, range_kind,
                               &kinds[k]);
    }
    struct {
        const char *what, *rule;
        a4w4_case_rule r;
    } more[] = {
        {"E8M0 255 (NaN) in A and in W", "range or special", nan_both},
        {"fp32 subnormal block values and outputs", "tiny, or range with kind 3", subnormal},
        {"zero-sign rows: outputs of only -0 and of mixed zeros", "special or tiny, M >= 2",
         zero_sign},
        {"E8M0 code 0 (2^-127, ambiguous)", "code0", code0},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0] && st == A4W4_ST_OK; i++)
        st = a4w4_coverage_add(cov, "edge", more[i].what, more[i].rule, cases, ncases,
                               more[i].r, NULL);
    for (size_t i = 0; i < 2 && st == A4W4_ST_OK; i++) {
        char what[160], rule[96];
        snprintf(what, sizeof what, "output grid past %zu tiles of 256x256", grids[i]);
        snprintf(rule, sizeof rule, "ceil(M/256) * ceil(N/256) > %zu", grids[i]);
        st = a4w4_coverage_add(cov, "grid", what, rule, cases, ncases, grid_past, &grids[i]);
    }
    return st;
}

size_t a4w4_coverage_uncovered(const a4w4_coverage *cov)
{
    size_t n = 0;
    for (size_t i = 0; i < cov->n; i++)
        n += cov->items[i].ncases == 0;
    return n;
}

void a4w4_coverage_free(a4w4_coverage *cov)
{
    for (size_t i = 0; i < cov->n; i++)
        free(cov->items[i].cases);
    free(cov->items);
    memset(cov, 0, sizeof *cov);
}
