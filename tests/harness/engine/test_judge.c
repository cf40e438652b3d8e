/* test_judge.c — the one judgement (engine/judge.h): the bit-for-bit, exact-regime and
 * bounded(S) comparisons on hand-built arrays, the poison rules, where a mismatch is
 * recorded, the E8M0 code-0 outcomes (contracts §1) and the entry verdict's precedence.
 * Every expected value is derived by hand from the contract, not by the code under test. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "a4w4_formats.h"
#include "backend.h"
#include "judge.h"

#define B_ONE 0x3F80u   /* 1.0 */
#define B_TWO 0x4000u   /* 2.0 */
#define B_QNAN 0x7FC0u  /* a NaN */
#define B_NNAN 0xFFC1u  /* another NaN (sign and payload differ) */

Test(judge, bf16_nan_test_is_exponent_all_ones_and_mantissa_nonzero)
{
    cr_assert(a4w4_bf16_is_nan(0x7FC0u) && a4w4_bf16_is_nan(0xFF81u) && a4w4_bf16_is_nan(0x7F81u));
    cr_assert(!a4w4_bf16_is_nan(0x7F80u) && !a4w4_bf16_is_nan(0xFF80u)); /* +-Inf */
    cr_assert(!a4w4_bf16_is_nan(0x7F7Fu) && !a4w4_bf16_is_nan(0x0000u) && !a4w4_bf16_is_nan(0x8000u));
}

Test(judge, exact_counts_nan_against_nan_equal_and_signed_zeros_apart)
{
    const uint16_t got[4] = {B_ONE, B_QNAN, 0x8000u, 0x3F81u};
    const uint16_t exp[4] = {B_ONE, B_NNAN, 0x0000u, B_ONE};
    a4w4_judge_grid g = {2, NULL, NULL};
    a4w4_comparison c;
    uint8_t mism[4] = {9, 9, 9, 9};
    a4w4_judge_exact(&c, &g, got, exp, 4, A4W4_POISON_UNWRITTEN, mism);
    cr_assert_eq(c.checked, 4);
    cr_assert_eq(c.mismatches, 2);
    cr_assert_eq(c.unwritten, 0);
    cr_assert_eq(c.max_ulp, 1); /* -0 and +0 one apart; 0x3F81 one above 1.0 */
    cr_assert_eq(c.nrec, 2);
    cr_assert(c.rec[0].row == 1 && c.rec[0].col == 0 && c.rec[0].got == 0x8000u);
    cr_assert(c.rec[1].row == 1 && c.rec[1].col == 1 && c.rec[1].expected == B_ONE);
    cr_assert(mism[0] == 0 && mism[1] == 0 && mism[2] == 1 && mism[3] == 1);
}

Test(judge, a_mismatch_is_recorded_at_the_case_row_and_column_of_the_sample)
{
    const size_t rows[2] = {5, 40}, cols[3] = {0, 7, 63};
    const uint16_t got[6] = {B_ONE, B_ONE, B_ONE, B_ONE, B_ONE, B_TWO};
    const uint16_t exp[6] = {B_ONE, B_ONE, B_ONE, B_ONE, B_ONE, B_ONE};
    a4w4_judge_grid g = {3, rows, cols};
    a4w4_comparison c;
    a4w4_judge_exact(&c, &g, got, exp, 6, A4W4_POISON_UNWRITTEN, NULL);
    cr_assert_eq(c.nrec, 1);
    cr_assert(c.rec[0].row == 40 && c.rec[0].col == 63);
    cr_assert_eq(c.max_ulp, 0x4000u - 0x3F80u);
}

Test(judge, only_the_first_mismatches_are_recorded_and_all_are_counted)
{
    enum { n = 3 * A4W4_JUDGE_MAX_RECORDED };
    uint16_t got[n], exp[n];
    for (size_t k = 0; k < n; k++)
        got[k] = B_TWO, exp[k] = B_ONE;
    a4w4_judge_grid g = {n, NULL, NULL};
    a4w4_comparison c;
    a4w4_judge_exact(&c, &g, got, exp, n, A4W4_POISON_IGNORED, NULL);
    cr_assert_eq(c.mismatches, n);
    cr_assert_eq(c.nrec, A4W4_JUDGE_MAX_RECORDED);
    cr_assert_eq(c.rec[A4W4_JUDGE_MAX_RECORDED - 1].col, A4W4_JUDGE_MAX_RECORDED - 1);
}

Test(judge, the_poison_rules)
{
    const uint16_t P = A4W4_POISON_BF16;
    cr_assert(a4w4_bf16_is_nan(P)); /* why the rules matter: the poison is a NaN */
    const uint16_t got[3] = {P, P, P}, exp[3] = {B_QNAN, P, B_ONE};
    a4w4_judge_grid g = {3, NULL, NULL};
    a4w4_comparison c;
    a4w4_judge_exact(&c, &g, got, exp, 3, A4W4_POISON_IGNORED, NULL); /* NaN == NaN */
    cr_assert(c.mismatches == 1 && c.unwritten == 0 && c.rec[0].col == 2);
    a4w4_judge_exact(&c, &g, got, exp, 3, A4W4_POISON_UNWRITTEN, NULL);
    cr_assert(c.mismatches == 3 && c.unwritten == 3);
    a4w4_judge_exact(&c, &g, got, exp, 3, A4W4_POISON_UNLESS_EXPECTED, NULL);
    cr_assert(c.mismatches == 2 && c.unwritten == 2 && c.rec[0].col == 0 && c.rec[1].col == 2);
    cr_assert_eq(c.max_ulp, UINT_MAX); /* the poison (NaN) against 1.0 */
}

/* Oracles of 4 outputs: 0 and 1 in the exact regime, 2 outside it with a finite sum in any
 * order, 3 outside it with a sum that may overflow fp32. */
static void regime_oracles(a4w4_oracles *o, uint16_t *exact, float *ef, uint8_t *in, float *as)
{
    memset(o, 0, sizeof *o);
    const uint16_t e[4] = {B_ONE, B_TWO, B_ONE, B_ONE};
    const float f[4] = {1, 2, 1, 1}, s[4] = {1, 2, 0x1p100f, 0x1p127f};
    const uint8_t r[4] = {1, 1, 0, 0};
    memcpy(exact, e, sizeof e);
    memcpy(ef, f, sizeof f);
    memcpy(in, r, sizeof r);
    memcpy(as, s, sizeof s);
    o->count = 4;
    o->exact = exact;
    o->exact_f32 = ef;
    o->in_regime = in;
    o->abs_sum = as;
}

Test(judge, exact_judges_the_exact_regime_and_requires_finite_outputs_elsewhere)
{
    uint16_t exact[4];
    float ef[4], as[4];
    uint8_t in[4];
    a4w4_oracles o;
    regime_oracles(&o, exact, ef, in, as);
    a4w4_judge_grid g = {4, NULL, NULL};
    a4w4_comparison c;
    const uint16_t ok[4] = {B_ONE, B_TWO, B_TWO, 0x7F80u}; /* 2: other bits, not judged */
    a4w4_judge_exact_regime(&c, &g, ok, &o, NULL);
    cr_assert(c.checked == 2 && c.mismatches == 0 && c.not_judged == 2 && c.not_finite == 0);
    const uint16_t bad[4] = {B_ONE, B_ONE, 0x7F80u, A4W4_POISON_BF16}; /* 1 wrong, 2 Inf */
    a4w4_judge_exact_regime(&c, &g, bad, &o, NULL);
    cr_assert_eq(c.mismatches, 3);
    cr_assert(c.not_finite == 1 && c.not_judged == 1 && c.unwritten == 1 && c.checked == 4);
}

Test(judge, bounded_measures_each_output_against_its_own_tolerance)
{
    /* e = 2, B = 1: tolerance 1 + 2^-25 + 2^-149; 2.5 uses half of it, 3.5 one and a half.
     * e = 0.5, B = 1: the tolerance admits 0 (vacuous). B NaN: only NaN passes. */
    const a4w4_bounded_limits L[4] = {{1.0, 2.0, 0, 0}, {1.0, 2.0, 0, 0}, {1.0, 0.5, 0, 0},
                                      {NAN, 1.0, 0, 0}};
    const uint16_t exact[4] = {B_TWO, B_TWO, 0x3F00u, B_ONE};
    const uint16_t got[4] = {0x4020u /* 2.5 */, 0x4060u /* 3.5 */, 0x3F00u, B_QNAN};
    a4w4_judge_grid g = {4, NULL, NULL};
    a4w4_comparison c;
    a4w4_judge_bounded(&c, &g, got, exact, L, 4, NULL);
    cr_assert(c.has_bound && c.checked == 4);
    cr_assert_eq(c.mismatches, 1);
    cr_assert_eq(c.rec[0].col, 1);
    cr_assert_float_eq(c.bound_use, 1.5 / (1.0 + 0x1p-23 + 0x1p-149), 1e-12);
    cr_assert(c.bound_weighed == 3 && c.bound_vacuous == 1);
    /* in bf16 ULPs of e: 2^-6 at 2 (64 + a little), 2^-8 at 0.5 (256 + a little) */
    cr_assert_float_eq(c.bound_ulp_max, (1.0 + 0x1p-25) / 0x1p-8, 1e-9);
    cr_assert_float_eq(c.bound_ulp_median, (1.0 + 0x1p-23) / 0x1p-6, 1e-9);
    cr_assert_eq(c.max_ulp, 0x4060u - 0x4000u); /* 2.5's distance counts though it passes */
}

Test(judge, bounded_allows_an_infinity_only_where_the_model_overflows_that_way)
{
    const a4w4_bounded_limits L[3] = {{INFINITY, 1.0, 1, 0}, {INFINITY, 1.0, 1, 0},
                                      {INFINITY, 1.0, 1, 1}};
    const uint16_t exact[3] = {B_ONE, B_ONE, B_ONE};
    const uint16_t got[3] = {0x7F80u, 0xFF80u, B_QNAN};
    a4w4_judge_grid g = {3, NULL, NULL};
    a4w4_comparison c;
    a4w4_judge_bounded(&c, &g, got, exact, L, 3, NULL);
    cr_assert_eq(c.mismatches, 1);
    cr_assert_eq(c.rec[0].col, 1);
}

/* atomic(S) (contracts §4.1 "atomic(S)"): membership in each output's set of orders. Output
 * 0's splits 256, 1, 1, 1 give {256, 260} (256 + 1 ties to 256, 258 + 1 to 260); output 1's
 * one split -0 gives +0 only. A mismatch records the split-order result. */
Test(judge, atomic_passes_any_order_and_nothing_else)
{
    const uint16_t q[2 * 4] = {0x4380, 0x3F80, 0x3F80, 0x3F80, 0x8000, 0, 0, 0};
    const uint16_t in_order[2] = {0x4380, 0x0000};
    const a4w4_judge_grid g = {2, NULL, NULL};
    a4w4_comparison c;
    uint8_t mism[2];
    const uint16_t ok[2] = {0x4382, 0x0000};
    a4w4_judge_atomic(&c, &g, ok, q, 4, 4, in_order, 1, mism);
    cr_expect_eq(c.checked, 1);
    cr_expect_eq(c.mismatches, 0, "260 is the order 1, 1, 256, 1's");
    const uint16_t bad[2] = {0x4381, 0x8000};
    uint16_t q2[2 * 4];
    memcpy(q2, q, sizeof q);
    a4w4_judge_atomic(&c, &g, bad, q2, 4, 1, in_order, 2, mism); /* n' = 1: q[0] and q[4] */
    cr_expect_eq(c.mismatches, 2);
    a4w4_judge_atomic(&c, &g, bad, q, 4, 4, in_order, 1, mism);
    cr_expect_eq(c.mismatches, 1, "258 is no order's result");
    cr_expect_eq(c.rec[0].expected, 0x4380, "the split-order result is recorded");
    cr_expect_eq(mism[0], 1);
    const uint16_t poison[1] = {A4W4_POISON_BF16};
    a4w4_judge_atomic(&c, &g, poison, q, 4, 4, in_order, 1, NULL);
    cr_expect_eq(c.unwritten, 1);
    cr_expect_eq(c.mismatches, 1);
}

Test(judge, code0_outcomes)
{
    cr_assert_eq(a4w4_judge_code0(0, A4W4_CODE0_BOTH, 3, 0), A4W4_CODE0_READINGS_AGREE);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_OCP, 3, 0), A4W4_CODE0_JUDGED_AS_STATED);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_DRIVER, 0, 3), A4W4_CODE0_JUDGED_AS_STATED);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_BOTH, 0, 3), A4W4_CODE0_JUDGED_AMBIGUOUS);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_BOTH, 3, 0), A4W4_CODE0_JUDGED_AMBIGUOUS);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_BOTH, 0, 0), A4W4_CODE0_MATCHES_BOTH);
    cr_assert_eq(a4w4_judge_code0(5, A4W4_CODE0_BOTH, 2, 3), A4W4_CODE0_MATCHES_NEITHER);
}

Test(judge, verdict_precedence_unjudged_then_failed_then_ambiguous_then_vacuous)
{
    const a4w4_verdict P = A4W4_VERDICT_PASS;
    cr_assert_eq(a4w4_judge_verdict(1, A4W4_VERDICT_SKIP, 1, 0), A4W4_VERDICT_SKIP);
    cr_assert_eq(a4w4_judge_verdict(1, A4W4_VERDICT_NA, 0, 0), A4W4_VERDICT_NA);
    cr_assert_eq(a4w4_judge_verdict(1, P, 1, 0), A4W4_VERDICT_FAIL);
    cr_assert_eq(a4w4_judge_verdict(0, P, 1, 0), A4W4_VERDICT_AMBIGUOUS);
    cr_assert_eq(a4w4_judge_verdict(0, P, 0, 1), A4W4_VERDICT_SKIP);
    cr_assert_eq(a4w4_judge_verdict(0, P, 0, 0), A4W4_VERDICT_PASS);
}
