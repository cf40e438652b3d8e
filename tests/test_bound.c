/* test_bound.c — the bounded(S) model's limits (ref/a4w4_bound.h; contracts §4.1 "bounded",
 * §4.3) on outputs built by hand: where a bf16-atomic split-K result may be +-Inf or NaN, and
 * the exact value in double that finite results are measured from. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "test_util.h"

/* One output of K = 1024 (32 blocks), every scale 127 and every code 0 to start with. */
typedef struct {
    uint8_t a[512], as[32], w[512], ws[32];
} row;

static void init(row *r)
{
    memset(r, 0, sizeof *r);
    memset(r->as, 127, sizeof r->as);
    memset(r->ws, 127, sizeof r->ws);
}

/* Block b gets `units` (0..384) units of 2^(sa+sw-256) with sign neg (tu_units_block). */
static void block(row *r, size_t b, unsigned units, int neg, uint8_t sa, uint8_t sw)
{
    tu_units_block(r->a + b * 16, r->w + b * 16, units, neg);
    r->as[b] = sa;
    r->ws[b] = sw;
}

static a4w4_bounded_limits limits(row *r, unsigned S)
{
    a4w4_dot_operands op = {r->a, r->as, r->w, r->ws, 1024};
    a4w4_bounded_limits l;
    cr_assert_eq(a4w4_dot_bounded_limits(&op, S, &l), 0);
    cr_expect_eq(l.bound, a4w4_dot_bounded_bound(&op, S), "the bound is the same number");
    return l;
}

Test(bounded_limits, ordinary_values_allow_no_infinity)
{
    row r;
    init(&r);
    block(&r, 0, 4, 0, 127, 127); /* 4 units at e = 254: 1.0 */
    block(&r, 20, 3, 1, 127, 120); /* -3 * 2^-9 */
    a4w4_bounded_limits l = limits(&r, 4);
    cr_expect_eq(l.exact, 1.0 - 3 * 0x1p-9);
    cr_expect(!l.inf_pos && !l.inf_neg, "1 - 3*2^-9 cannot overflow (%d %d)", l.inf_pos,
              l.inf_neg);
    cr_expect(l.bound > 0 && l.bound < 0x1p-5, "bound %a", l.bound);
}

Test(bounded_limits, bf16_largest_finite_in_one_split_stays_finite)
{
    /* 255 * 2^120 (255 units at e = 376) in one split: the fp32 total is within 8 * 2^-24 of
     * it (< 2^108 off), below bf16's threshold 511 * 2^119: its bf16 is 0x7F7F, and the only
     * add (into +0) is exact. No Inf. */
    row r;
    init(&r);
    block(&r, 0, 255, 0, 254, 122);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, ldexp(255.0, 120));
    cr_expect(!l.inf_pos && !l.inf_neg, "255*2^120: no Inf (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, the_bf16_rounding_boundary_allows_the_infinity_of_its_sign)
{
    /* 511 * 2^119 = 2^128 - 2^119 (255 units at e = 376, 1 at e = 375): RNE to bf16 is +Inf */
    row r;
    init(&r);
    block(&r, 0, 255, 0, 254, 122);
    block(&r, 1, 1, 0, 254, 121);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, ldexp(511.0, 119));
    cr_expect(l.inf_pos && !l.inf_neg, "+Inf only (%d %d)", l.inf_pos, l.inf_neg);
    /* negated: -Inf only */
    init(&r);
    block(&r, 0, 255, 1, 254, 122);
    block(&r, 1, 1, 1, 254, 121);
    l = limits(&r, 1);
    cr_expect_eq(l.exact, -ldexp(511.0, 119));
    cr_expect(!l.inf_pos && l.inf_neg, "-Inf only (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, a_sum_past_fp32_is_measured_in_double)
{
    /* S = 4 (4 splits of 8 blocks), 255 * 2^120 in splits 0 and 1: exact 510 * 2^120, past
     * fp32 (fp32's RNE of it is Inf); each split total is finite, their atomic sum overflows:
     * +Inf allowed, and a finite result is measured from 510 * 2^120, not from Inf. The bound:
     * two bf16 roundings of ~2^128 (2^120 each) and three atomic adds of v * Q+ ~ 2^121 each,
     * about 2^123: finite */
    row r;
    init(&r);
    block(&r, 0, 255, 0, 254, 122);
    block(&r, 8, 255, 0, 254, 122);
    a4w4_bounded_limits l = limits(&r, 4);
    cr_expect_eq(l.exact, ldexp(510.0, 120));
    cr_expect(l.bound > ldexp(1.0, 122) && l.bound < ldexp(1.0, 124), "bound %a", l.bound);
    cr_expect(l.inf_pos && !l.inf_neg, "+Inf only (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, opposite_fp32_overflows_allow_nan)
{
    /* +2^128 and -2^128 blocks (2 units at e = 383 each) in one split: each block value is
     * Inf in fp32, so the split total can be +Inf, -Inf or NaN, while exact is 1.0 */
    row r;
    init(&r);
    block(&r, 0, 2, 0, 254, 129);
    block(&r, 1, 2, 1, 254, 129);
    block(&r, 2, 4, 0, 127, 127);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, 1.0);
    cr_expect(l.inf_pos && l.inf_neg, "both (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, nan_scale_has_no_limits)
{
    row r;
    init(&r);
    block(&r, 0, 4, 0, 127, 127);
    r.ws[5] = 0xFF;
    a4w4_dot_operands op = {r.a, r.as, r.w, r.ws, 1024};
    a4w4_bounded_limits l;
    cr_expect_eq(a4w4_dot_bounded_limits(&op, 2, &l), 1);
    cr_expect(isnan(l.bound) && isnan(l.exact) && !l.inf_pos && !l.inf_neg);
    cr_expect(isnan(a4w4_dot_bounded_bound(&op, 2)));
}
