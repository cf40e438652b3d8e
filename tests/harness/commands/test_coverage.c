/* test_coverage.c — the coverage model (harness/commands/coverage.h, backends/fault_classes.h)
 * and the pre-merge set against it: every padded-M bucket of the tuned tables shipped under
 * cases/aiter/ (found by globbing the directory, buckets derived by a4w4_m_buckets, contracts
 * §5.1), every tile_M and tile_N of the shipped kernel table (§5.3), every regime edge and grid,
 * and every CPU mutant's fault class has a pre-merge case; and an item whose case is taken
 * away is reported uncovered. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "coverage.h"
#include "fault_classes.h"
#include "mutants.h"

static a4w4_case *read_set(const char *rel, size_t *n)
{
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", A4W4_SOURCE_DIR, rel);
    a4w4_case *cases = NULL;
    cr_assert_eq(a4w4_casefile_read(path, &cases, n, err, sizeof err), A4W4_ST_OK, "%s", err);
    return cases;
}

/* The M values of every shipped tuned table (cases/aiter/ *_tuned_gemm.csv). */
static int *shipped_m(size_t *nm, size_t *ntables)
{
    char pat[4096], err[512] = "";
    snprintf(pat, sizeof pat, "%s/cases/aiter/*_tuned_gemm.csv", A4W4_SOURCE_DIR);
    glob_t g;
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no tuned table under cases/aiter/");
    int *m = NULL;
    cr_assert_eq(a4w4_tuned_m_values((const char *const *)g.gl_pathv, g.gl_pathc, &m, nm, err,
                                     sizeof err), A4W4_ST_OK, "%s", err);
    *ntables = g.gl_pathc;
    globfree(&g);
    return m;
}

static void shipped_kernels(a4w4_kernel_table *kt)
{
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv",
             A4W4_SOURCE_DIR);
    memset(kt, 0, sizeof *kt);
    cr_assert_eq(a4w4_kernels_load(kt, path, NULL, err, sizeof err), A4W4_OK, "%s", err);
}

static void expect_all_covered(const a4w4_coverage *cov)
{
    for (size_t i = 0; i < cov->n; i++)
        cr_expect_gt(cov->items[i].ncases, 0, "no pre-merge case exercises %s %s [%s]",
                     cov->items[i].group, cov->items[i].what, cov->items[i].rule);
}

Test(premerge_coverage, every_bucket_of_the_shipped_tuned_tables_has_a_case)
{
    size_t n, nm, ntables;
    a4w4_case *cases = read_set("cases/premerge.csv", &n);
    int *m = shipped_m(&nm, &ntables);
    cr_expect_geq(ntables, 2, "both shipped tuned tables");
    a4w4_coverage cov = {0};
    cr_assert_eq(a4w4_coverage_buckets(&cov, cases, n, m, nm), A4W4_ST_OK);
    cr_expect_geq(cov.n, 90, "buckets derived: %zu", cov.n);
    expect_all_covered(&cov);
    a4w4_coverage_free(&cov);
    free(m);
    free(cases);
}

Test(premerge_coverage, every_tile_regime_edge_and_grid_has_a_case)
{
    size_t n;
    a4w4_case *cases = read_set("cases/premerge.csv", &n);
    a4w4_kernel_table kt;
    shipped_kernels(&kt);
    a4w4_coverage cov = {0};
    cr_assert_eq(a4w4_coverage_tiles(&cov, cases, n, &kt), A4W4_ST_OK);
    cr_expect_eq(cov.n, 16, "8 tile_M and 8 tile_N in the gfx950 table (%zu)", cov.n);
    cr_assert_eq(a4w4_coverage_edges(&cov, cases, n), A4W4_ST_OK);
    expect_all_covered(&cov);
    a4w4_coverage_free(&cov);
    a4w4_kernels_free(&kt);
    free(cases);
}

Test(premerge_coverage, every_cpu_mutant_has_a_fault_class_with_a_case)
{
    size_t n, nmt;
    a4w4_case *cases = read_set("cases/premerge.csv", &n);
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nmt);
    for (size_t i = 0; i < nmt; i++) {
        if (mt[i]->gpu)
            continue;
        const a4w4_fault_class *fc = a4w4_fault_class_find(mt[i]->name);
        cr_expect_not_null(fc, "mutant %s has no fault class (fault_classes.c)", mt[i]->name);
        if (!fc)
            continue;
        size_t hit = 0;
        for (size_t c = 0; c < n; c++)
            hit += (size_t)fc->exposes(&cases[c], NULL);
        cr_expect_gt(hit, 0, "no pre-merge case exercises %s [%s]", mt[i]->name, fc->rule);
    }
    free(cases);
}

/* The cases of the set but those named in drop[]. */
static size_t without(const a4w4_case *cases, size_t n, const char *const *drop, size_t ndrop,
                      a4w4_case *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int gone = 0;
        for (size_t j = 0; j < ndrop; j++)
            gone |= !strcmp(cases[i].name, drop[j]);
        if (!gone)
            out[k++] = cases[i];
    }
    return k;
}

Test(premerge_coverage, a_bucket_without_its_case_is_uncovered)
{
    /* the only cases with M = 65 (the 64 < M <= 128 bucket's edge), M = 4097 and M = 8193 at
     * N > 4096: taken away, their buckets have no case left */
    static const char *const drop[] = {"b_m65_n256_k256", "g_m4097_n4096_k1280",
                                       "g_m8193_n16384_k256"};
    size_t n, nm, ntables;
    a4w4_case *cases = read_set("cases/premerge.csv", &n);
    a4w4_case *rest = malloc(n * sizeof *rest);
    cr_assert_not_null(rest);
    size_t k = without(cases, n, drop, 3, rest);
    cr_assert_eq(k, n - 3);
    int *m = shipped_m(&nm, &ntables);
    a4w4_coverage cov = {0};
    cr_assert_eq(a4w4_coverage_buckets(&cov, rest, k, m, nm), A4W4_ST_OK);
    size_t none = 0;
    for (size_t i = 0; i < cov.n; i++)
        if (!cov.items[i].ncases) {
            none++;
            cr_expect(strstr(cov.items[i].rule, "M == 65") ||
                          strstr(cov.items[i].rule, "M == 4097") ||
                          strstr(cov.items[i].rule, "M == 8193, N > 4096"),
                      "unexpectedly uncovered: %s [%s]", cov.items[i].what, cov.items[i].rule);
        }
    /* M = 65: the tuned value 65 itself and gl 1 of 128; M = 4097: gl 0 of 4224 and gl 1 of
     * 8192; M = 8193 at N > 4096: the cap */
    cr_expect_eq(none, 5, "uncovered buckets: %zu", none);
    cr_expect_eq(a4w4_coverage_uncovered(&cov), none);
    a4w4_coverage_free(&cov);
    free(m);
    free(rest);
    free(cases);
}

Test(premerge_coverage, the_real_shapes_alone_reach_no_range_edge_nor_large_grid)
{
    /* the set's first 66 cases (the real (N, K) pairs x M): the regime edges of the range
     * regime and the grids past 256 and 1,024 tiles are uncovered there, as they were before
     * the range and grid sections */
    size_t n;
    a4w4_case *cases = read_set("cases/premerge.csv", &n);
    cr_assert_geq(n, 66);
    a4w4_coverage cov = {0};
    cr_assert_eq(a4w4_coverage_edges(&cov, cases, 66), A4W4_ST_OK);
    size_t range_none = 0, grid_none = 0;
    for (size_t i = 0; i < cov.n; i++) {
        const a4w4_cov_item *it = &cov.items[i];
        range_none += !it->ncases && strstr(it->rule, "range") != NULL;
        grid_none += !it->ncases && !strcmp(it->group, "grid");
    }
    /* the range regime's four kinds, and E8M0 255 and fp32 subnormals (whose other cases,
     * special and tiny, come later in the set too) */
    cr_expect_eq(range_none, 6, "edges naming the range regime uncovered: %zu", range_none);
    cr_expect_eq(grid_none, 2, "grids uncovered: %zu", grid_none);
    a4w4_coverage_free(&cov);
    free(cases);
}

static int m_is(const a4w4_case *c, const void *arg)
{
    return c->M == (size_t)*(const int *)arg;
}

/* Items past the first allocation (64) keep their order, names and cases. */
Test(coverage_add, two_hundred_items_keep_their_order_and_cases)
{
    a4w4_case cases[3];
    memset(cases, 0, sizeof cases);
    cases[0].M = 1;
    cases[1].M = 2;
    cases[2].M = 1;
    a4w4_coverage cov;
    memset(&cov, 0, sizeof cov);
    for (int i = 0; i < 200; i++) {
        char what[32];
        snprintf(what, sizeof what, "item %d", i);
        int m = 1 + i % 3; /* M 3: no case */
        cr_assert_eq(a4w4_coverage_add(&cov, "edge", what, "M", cases, 3, m_is, &m), A4W4_ST_OK);
    }
    cr_assert_eq(cov.n, 200u);
    for (size_t i = 0; i < cov.n; i++) {
        char what[32];
        snprintf(what, sizeof what, "item %zu", i);
        cr_expect_str_eq(cov.items[i].what, what);
        cr_expect_eq(cov.items[i].ncases, i % 3 == 0 ? 2u : i % 3 == 1 ? 1u : 0u, "item %zu", i);
        if (i % 3 == 0)
            cr_expect(cov.items[i].cases[0] == 0 && cov.items[i].cases[1] == 2);
    }
    cr_expect_eq(a4w4_coverage_uncovered(&cov), 66u);
    a4w4_coverage_free(&cov);
}
