/* test_criteria.c — the peers' tolerance criteria (harness/engine/criteria.c): every row of
 * the table on a hand-made output just inside its threshold and one just outside, and its
 * NaN rule (the values are worked out by hand in the comments, not by the code under test);
 * and the self-test's table of which criterion misses which mutant. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "casefile.h"
#include "criteria.h"
#include "mutants.h"
#include "registry.h"
#include "selftest.h"

#define NMAX 16384

static float ref[NMAX];
static uint16_t got[NMAX];

/* n outputs: reference r everywhere, output r in bf16 everywhere. */
static void fill(size_t n, float r)
{
    for (size_t k = 0; k < n; k++) {
        ref[k] = r;
        got[k] = a4w4_f32_to_bf16(r);
    }
}

static a4w4_crit_verdict eval(const char *id, size_t n, const float *reference)
{
    const a4w4_criterion *c = a4w4_criterion_find(id);
    cr_assert(c, "no criterion %s", id);
    a4w4_crit_result r;
    a4w4_criterion_eval(c, got, reference, n, "no unquantized operands", &r);
    return r.verdict;
}

static const uint16_t BF16_NAN = 0x7FC0;

/* AITER: |d| <= 0.01 + 0.01*|ref|; at most 5 % of elements over passes. */
Test(criteria, aiter_checkallclose_passes_five_percent_over_and_fails_six)
{
    fill(100, 1.0f);
    for (int k = 0; k < 5; k++)
        got[k] = a4w4_f32_to_bf16(1.5f); /* |d| = 0.5 > 0.02 */
    cr_expect_eq(eval("aiter-checkallclose", 100, ref), A4W4_CRIT_PASS);
    got[5] = a4w4_f32_to_bf16(1.5f);
    cr_expect_eq(eval("aiter-checkallclose", 100, ref), A4W4_CRIT_FAIL);
}

Test(criteria, aiter_checkallclose_counts_nan_as_one_element_over)
{
    fill(100, 1.0f);
    for (int k = 0; k < 5; k++)
        got[k] = BF16_NAN;
    cr_expect_eq(eval("aiter-checkallclose", 100, ref), A4W4_CRIT_PASS);
    got[5] = BF16_NAN;
    cr_expect_eq(eval("aiter-checkallclose", 100, ref), A4W4_CRIT_FAIL);
}

Test(criteria, aiter_checkallclose_tolerance_edge)
{
    fill(1, 1.0f);
    got[0] = a4w4_f32_to_bf16(1.0156250f); /* |d| = 2^-6 = 0.015625 <= 0.02 */
    cr_expect_eq(eval("aiter-checkallclose", 1, ref), A4W4_CRIT_PASS);
    got[0] = a4w4_f32_to_bf16(1.0234375f); /* |d| = 0.0234375 > 0.02: 100 % over */
    cr_expect_eq(eval("aiter-checkallclose", 1, ref), A4W4_CRIT_FAIL);
}

/* torch bf16 defaults: |d| <= 1e-5 + 0.016*|ref| on every element; NaN never close. */
Test(criteria, torch_assert_close_bf16_edge_and_nan)
{
    fill(4, 1.0f);
    got[2] = a4w4_f32_to_bf16(1.015625f); /* 0.015625 <= 0.01601 */
    cr_expect_eq(eval("torch-assert-close-bf16", 4, ref), A4W4_CRIT_PASS);
    got[2] = a4w4_f32_to_bf16(1.0234375f); /* 0.0234375 > 0.01601 */
    cr_expect_eq(eval("torch-assert-close-bf16", 4, ref), A4W4_CRIT_FAIL);
    fill(4, 1.0f);
    ref[1] = NAN;
    got[1] = BF16_NAN; /* equal_nan False: NaN against NaN fails */
    cr_expect_eq(eval("torch-assert-close-bf16", 4, ref), A4W4_CRIT_FAIL);
}

/* TransformerEngine: NaN -> 0 on both sides, then |d| <= 8e-3 + 8e-3*|ref|. */
Test(criteria, te_nvfp4_gemm_edge_and_nan_zeroed)
{
    fill(4, 1.0f);
    got[0] = a4w4_f32_to_bf16(1.015625f); /* 0.015625 <= 0.016 */
    cr_expect_eq(eval("te-nvfp4-gemm", 4, ref), A4W4_CRIT_PASS);
    got[0] = a4w4_f32_to_bf16(1.0234375f); /* 0.0234375 > 0.016 */
    cr_expect_eq(eval("te-nvfp4-gemm", 4, ref), A4W4_CRIT_FAIL);
    fill(4, 0.0f);
    got[3] = BF16_NAN; /* NaN output where 0 is expected: zeroed, passes */
    cr_expect_eq(eval("te-nvfp4-gemm", 4, ref), A4W4_CRIT_PASS);
    fill(4, 1.0f);
    got[3] = BF16_NAN; /* NaN where 1 is expected: 0 against 1 fails */
    cr_expect_eq(eval("te-nvfp4-gemm", 4, ref), A4W4_CRIT_FAIL);
}

/* cosine of (1, x) with (1, 0) is 1/sqrt(1 + x^2): above 0.97 for x < 0.2506. */
Test(criteria, cosine_edge_on_both_references)
{
    fill(2, 1.0f);
    ref[1] = 0.0f;
    got[1] = a4w4_f32_to_bf16(0.25f); /* 0.970143 */
    cr_expect_eq(eval("cosine-dequant", 2, ref), A4W4_CRIT_PASS);
    cr_expect_eq(eval("flashinfer-cosine", 2, ref), A4W4_CRIT_PASS);
    got[1] = a4w4_f32_to_bf16(0.25390625f); /* 0.969234 */
    cr_expect_eq(eval("cosine-dequant", 2, ref), A4W4_CRIT_FAIL);
    cr_expect_eq(eval("flashinfer-cosine", 2, ref), A4W4_CRIT_FAIL);
    got[1] = BF16_NAN;
    cr_expect_eq(eval("cosine-dequant", 2, ref), A4W4_CRIT_FAIL);
}

Test(criteria, flashinfer_cosine_is_na_without_unquantized_operands)
{
    fill(2, 1.0f);
    const a4w4_criterion *c = a4w4_criterion_find("flashinfer-cosine");
    a4w4_crit_result r;
    a4w4_criterion_eval(c, got, NULL, 2, "no unquantized operands in this run", &r);
    cr_expect_eq(r.verdict, A4W4_CRIT_NA);
    cr_expect(strstr(r.text, "n/a (no unquantized operands in this run)"), "%s", r.text);
}

/* SQNR = 20 log10(||ref|| / ||d||) with one element off by 2^-7 among n ones:
 * n = 16384: 20 log10(128 * 128) = 84.3 dB passes; n = 4096: 20 log10(64 * 128) = 78.3 fails. */
Test(criteria, torchao_sqnr_edge_and_nan)
{
    fill(16384, 1.0f);
    got[7] = a4w4_f32_to_bf16(1.0078125f);
    cr_expect_eq(eval("torchao-mx-sqnr", 16384, ref), A4W4_CRIT_PASS);
    cr_expect_eq(eval("torchao-mx-sqnr", 4096, ref), A4W4_CRIT_FAIL);
    fill(8, 1.0f); /* equal: infinite SQNR */
    cr_expect_eq(eval("torchao-mx-sqnr", 8, ref), A4W4_CRIT_PASS);
    got[0] = BF16_NAN;
    cr_expect_eq(eval("torchao-mx-sqnr", 8, ref), A4W4_CRIT_FAIL);
}

/* hipBLASLt unit_check: 4 fp32 ULPs of the widened values; the reference is rounded to bf16
 * first, so bf16 outputs must be equal; -0 equals +0; NaN must meet NaN. */
Test(criteria, hipblaslt_unit_check_edge)
{
    fill(2, 1.0f);
    cr_expect_eq(eval("hipblaslt-unit-check", 2, ref), A4W4_CRIT_PASS);
    got[0] = a4w4_f32_to_bf16(1.0078125f); /* one bf16 ULP = 65536 fp32 ULPs */
    cr_expect_eq(eval("hipblaslt-unit-check", 2, ref), A4W4_CRIT_FAIL);
    fill(2, 0.0f);
    got[1] = 0x8000; /* -0 against +0 */
    cr_expect_eq(eval("hipblaslt-unit-check", 2, ref), A4W4_CRIT_PASS);
    ref[0] = NAN;
    cr_expect_eq(eval("hipblaslt-unit-check", 2, ref), A4W4_CRIT_FAIL);
    got[0] = BF16_NAN;
    cr_expect_eq(eval("hipblaslt-unit-check", 2, ref), A4W4_CRIT_PASS);
}

Test(criteria, hipblaslt_unit_check_four_fp32_ulps_of_an_unrounded_reference)
{
    a4w4_criterion c = *a4w4_criterion_find("hipblaslt-unit-check");
    c.ref_bf16 = 0; /* the threshold itself, on an fp32 reference */
    uint32_t one = 0x3F800000u, u4 = one + 4, u5 = one + 5;
    memcpy(&ref[0], &u4, 4);
    got[0] = a4w4_f32_to_bf16(1.0f);
    a4w4_crit_result r;
    a4w4_criterion_eval(&c, got, ref, 1, NULL, &r);
    cr_expect_eq(r.verdict, A4W4_CRIT_PASS);
    memcpy(&ref[0], &u5, 4);
    a4w4_criterion_eval(&c, got, ref, 1, NULL, &r);
    cr_expect_eq(r.verdict, A4W4_CRIT_FAIL);
}

/* norm_check: ||d|| / ||ref|| < 0.1; 100 ones have norm 10, so one element off by d passes
 * for d < 1. */
Test(criteria, hipblaslt_norm_check_edge)
{
    fill(100, 1.0f);
    got[3] = a4w4_f32_to_bf16(1.9921875f); /* 0.09921875 */
    cr_expect_eq(eval("hipblaslt-norm-check", 100, ref), A4W4_CRIT_PASS);
    got[3] = a4w4_f32_to_bf16(2.0f); /* exactly 0.1: not below */
    cr_expect_eq(eval("hipblaslt-norm-check", 100, ref), A4W4_CRIT_FAIL);
}

/* benchdnn matmul: threshold 0 (value equality, -0 == +0, NaN meets NaN); more than 90 % of
 * zero reference values make the comparison MISTRUSTED. */
Test(criteria, onednn_benchdnn_equality_and_zero_trust)
{
    fill(100, 1.0f);
    got[0] = 0x8000;
    ref[0] = 0.0f;
    cr_expect_eq(eval("onednn-benchdnn-matmul", 100, ref), A4W4_CRIT_PASS);
    got[1] = a4w4_f32_to_bf16(1.0078125f);
    cr_expect_eq(eval("onednn-benchdnn-matmul", 100, ref), A4W4_CRIT_FAIL);
    fill(100, 0.0f);
    for (int k = 0; k < 10; k++) {
        ref[k] = 2.0f;
        got[k] = a4w4_f32_to_bf16(2.0f);
    }
    cr_expect_eq(eval("onednn-benchdnn-matmul", 100, ref), A4W4_CRIT_PASS); /* 90 % zeros */
    ref[9] = 0.0f;
    got[9] = 0;
    cr_expect_eq(eval("onednn-benchdnn-matmul", 100, ref), A4W4_CRIT_MISTRUSTED);
}

Test(criteria, every_row_names_its_source_and_a_unique_id)
{
    size_t n;
    const a4w4_criterion *c = a4w4_criteria(&n);
    cr_assert(n >= 8 && n <= A4W4_CRITERIA_MAX);
    for (size_t i = 0; i < n; i++) {
        cr_expect(c[i].source && strchr(c[i].source, '/'), "%s", c[i].id);
        for (size_t j = 0; j < i; j++)
            cr_expect_neq(strcmp(c[i].id, c[j].id), 0);
    }
}

Test(criteria, report_line_reads_as_the_issue_asks)
{
    fill(1000, 1.0f);
    got[0] = a4w4_f32_to_bf16(1.0078125f); /* rel 0.78 %, within 0.02 */
    const a4w4_criterion *c = a4w4_criterion_find("aiter-checkallclose");
    a4w4_crit_result r;
    a4w4_criterion_eval(c, got, ref, 1000, NULL, &r);
    cr_expect_str_eq(r.text, "AITER checkAllclose: PASS (max rel 0.781 %, 0 % of elements "
                             "over, 0 of 1000)");
    cr_expect(a4w4_criteria_would_ship(&r, 1));
}

/* The self-test's mutants x criteria table (commands/selftest.h): a bf16-partials split-K is
 * missed by AITER's checkAllclose (few elements off, all within 5 %), a dropped K block is
 * caught, a layout mutant has no GEMM outputs to judge. */

Test(criteria, the_selftest_table_says_which_criterion_misses_which_mutant)
{
    static a4w4_selftest t;
    memset(&t, 0, sizeof t);
    const char *names[] = {"mut-splitk-bf16", "mut-drop-kblock", "mut-preshuffle-k1n1"};
    char err[512];
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(a4w4_backend_open_type(a4w4_mutant_find(names[i]), NULL, &t.ms[t.nm++].b,
                                            err, sizeof err), 0, "%s", err);
    a4w4_case *cs;
    size_t n;
    cr_assert_eq(a4w4_casefile_read(A4W4_SOURCE_DIR "/cases/selftest.csv", &cs, &n, err,
                                    sizeof err), A4W4_ST_OK, "%s", err);
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(a4w4_selftest_run_case(&t, &cs[k], NULL, NULL, err, sizeof err), A4W4_ST_OK,
                     "%s", err);
    size_t aiter = 0, nc;
    const a4w4_criterion *c = a4w4_criteria(&nc);
    while (strcmp(c[aiter].id, "aiter-checkallclose"))
        aiter++;
    size_t unit = 0;
    while (strcmp(c[unit].id, "hipblaslt-unit-check"))
        unit++;
    cr_expect_str_eq(a4w4_selftest_criterion_cell(&t.ms[0], aiter), "missed");
    cr_expect_str_eq(a4w4_selftest_criterion_cell(&t.ms[0], unit), "caught");
    cr_expect_str_eq(a4w4_selftest_criterion_cell(&t.ms[1], aiter), "caught");
    cr_expect_str_eq(a4w4_selftest_criterion_cell(&t.ms[2], aiter), "bytes");
    for (size_t i = 0; i < t.nm; i++)
        a4w4_backend_close(&t.ms[i].b);
    free(cs);
}

/* A criterion that fails the correct outputs as well is marked, and says so. */
Test(criteria, a_criterion_failing_the_correct_outputs_too_is_marked)
{
    fill(4, 1.0f);
    ref[0] = NAN;
    got[0] = BF16_NAN; /* torch: NaN never equals NaN, so the right answer fails too */
    const a4w4_criterion *c = a4w4_criterion_find("torch-assert-close-bf16");
    a4w4_crit_result r, base;
    a4w4_criterion_eval(c, got, ref, 4, NULL, &base);
    got[1] = a4w4_f32_to_bf16(2.0f);
    a4w4_criterion_eval(c, got, ref, 4, NULL, &r);
    a4w4_criteria_mark(&r, &base, 1);
    cr_expect(r.fails_correct);
    cr_expect(strstr(r.text, "also fails the correct outputs"), "%s", r.text);
}

/* Parity of two paths: bits equal where equal, the ULP distance, and the criteria on the
 * second path with the first as reference (one ULP at 2.0 is 2^-6: within TE's 0.024,
 * not hipBLASLt's equality; AITER counts the NaN pair as one element in three out). */
Test(criteria, parity_of_two_paths_counts_bits_and_judges_the_difference)
{
    uint16_t a[3] = {a4w4_f32_to_bf16(1.0f), a4w4_f32_to_bf16(2.0f), BF16_NAN};
    uint16_t b[3] = {a4w4_f32_to_bf16(1.0f), a4w4_f32_to_bf16(2.015625f), BF16_NAN};
    a4w4_parity_diff d;
    cr_assert_eq(a4w4_parity_diff_of(a, b, 3, &d), 0);
    cr_expect_eq(d.equal, 2);
    cr_expect_eq(d.max_ulp, 1);
    cr_expect_eq(d.nan_vs_number, 0);
    const char *want[][2] = {{"aiter-checkallclose", "FAIL"}, {"hipblaslt-unit-check", "FAIL"},
                             {"te-nvfp4-gemm", "PASS"}, {"flashinfer-cosine", "n/a"}};
    for (size_t w = 0; w < 4; w++)
        for (size_t i = 0; i < d.ntol; i++)
            if (!strcmp(d.tol[i].c->id, want[w][0]))
                cr_expect_str_eq(a4w4_crit_verdict_name(d.tol[i].verdict), want[w][1], "%s",
                                 d.tol[i].text);
    char line[512];
    a4w4_parity_diff_format(&d, line, sizeof line);
    cr_expect(strstr(line, "bit-equal 2 of 3, 1 differ, max 1 ULP; peers on the difference: "
                           "aiter FAIL"), "%s", line);
}

/* A mutant killed by the batch-invariance stage (a split-K that changes with M while declaring
 * ordered(1)) matches its contract on the generated case of that shape, so no criterion has
 * outputs that differ to judge: its row says "invar" under every criterion, never "bytes" (a
 * layout byte check) nor "missed". */
Test(criteria, a_mutant_killed_by_batch_invariance_reads_invar)
{
    static a4w4_selftest t;
    memset(&t, 0, sizeof t);
    char err[512];
    cr_assert_eq(a4w4_backend_open_type(a4w4_mutant_find("mut-batch-splitk"), NULL,
                                        &t.ms[t.nm++].b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a4w4_selftest_invariance(&t, 65, 64, 1024, err, sizeof err), A4W4_ST_OK, "%s",
                 err);
    cr_assert(t.ms[0].killed, "%s", t.ms[0].reason);
    size_t nc;
    a4w4_criteria(&nc);
    for (size_t j = 0; j < nc; j++)
        cr_expect_str_eq(a4w4_selftest_criterion_cell(&t.ms[0], j), "invar");
    a4w4_backend_close(&t.ms[0].b);
}
