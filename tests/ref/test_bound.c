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

/* One output of K = 1024 (32 blocks): tu_row (test_util.h). */

static a4w4_bounded_limits limits(tu_row *r, unsigned S)
{
    a4w4_dot_operands op = {r->a, r->as, r->w, r->ws, 1024};
    a4w4_bounded_limits l;
    cr_assert_eq(a4w4_dot_bounded_limits(&op, S, &l), 0);
    cr_expect_eq(l.bound, a4w4_dot_bounded_bound(&op, S), "the bound is the same number");
    return l;
}

Test(bounded_limits, ordinary_values_allow_no_infinity)
{
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 4, 0, 127, 127); /* 4 units at e = 254: 1.0 */
    tu_row_block(&r, 20, 3, 1, 127, 120); /* -3 * 2^-9 */
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
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 255, 0, 254, 122);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, ldexp(255.0, 120));
    cr_expect(!l.inf_pos && !l.inf_neg, "255*2^120: no Inf (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, the_bf16_rounding_boundary_allows_the_infinity_of_its_sign)
{
    /* 511 * 2^119 = 2^128 - 2^119 (255 units at e = 376, 1 at e = 375): RNE to bf16 is +Inf */
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 255, 0, 254, 122);
    tu_row_block(&r, 1, 1, 0, 254, 121);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, ldexp(511.0, 119));
    cr_expect(l.inf_pos && !l.inf_neg, "+Inf only (%d %d)", l.inf_pos, l.inf_neg);
    /* negated: -Inf only */
    tu_row_init(&r);
    tu_row_block(&r, 0, 255, 1, 254, 122);
    tu_row_block(&r, 1, 1, 1, 254, 121);
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
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 255, 0, 254, 122);
    tu_row_block(&r, 8, 255, 0, 254, 122);
    a4w4_bounded_limits l = limits(&r, 4);
    cr_expect_eq(l.exact, ldexp(510.0, 120));
    cr_expect(l.bound > ldexp(1.0, 122) && l.bound < ldexp(1.0, 124), "bound %a", l.bound);
    cr_expect(l.inf_pos && !l.inf_neg, "+Inf only (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, opposite_fp32_overflows_allow_nan)
{
    /* +2^128 and -2^128 blocks (2 units at e = 383 each) in one split: each block value is
     * Inf in fp32, so the split total can be +Inf, -Inf or NaN, while exact is 1.0 */
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 2, 0, 254, 129);
    tu_row_block(&r, 1, 2, 1, 254, 129);
    tu_row_block(&r, 2, 4, 0, 127, 127);
    a4w4_bounded_limits l = limits(&r, 1);
    cr_expect_eq(l.exact, 1.0);
    cr_expect(l.inf_pos && l.inf_neg, "both (%d %d)", l.inf_pos, l.inf_neg);
}

Test(bounded_limits, nan_scale_has_no_limits)
{
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 4, 0, 127, 127);
    r.ws[5] = 0xFF;
    a4w4_dot_operands op = {r.a, r.as, r.w, r.ws, 1024};
    a4w4_bounded_limits l;
    cr_expect_eq(a4w4_dot_bounded_limits(&op, 2, &l), 1);
    cr_expect(isnan(l.bound) && isnan(l.exact) && !l.inf_pos && !l.inf_neg);
    cr_expect(isnan(a4w4_dot_bounded_bound(&op, 2)));
}

/* ---- the fast form, held equal to the plain one (a4w4_bound_fast.c) ------------------------ */

/* What a random problem's operands look like: the scale and code patterns where the fast
 * form's shortcuts could part from the plain one (digit carries, a sticky bit, the Inf
 * thresholds, cancellation to an exact zero, subnormal-size partials, NaN scales). */
enum { R_NARROW, R_WIDE, R_HIGH, R_LOW, R_CANCEL, R_SPARSE, R_NAN, R_COUNT };

static uint8_t rand_scale(tu_rng *r, int regime)
{
    switch (regime) {
    case R_WIDE: return (uint8_t)tu_xorshift64_below(r, 255);           /* 0..254 */
    case R_HIGH: return (uint8_t)(240 + tu_xorshift64_below(r, 15));    /* products past fp32 */
    case R_LOW: return (uint8_t)tu_xorshift64_below(r, 12);             /* far below fp32 */
    case R_NAN: return tu_xorshift64_below(r, 64) ? (uint8_t)(120 + tu_xorshift64_below(r, 16))
                                                  : 0xFF;
    default: return (uint8_t)(118 + tu_xorshift64_below(r, 20));
    }
}

/* Rows of A [M] and W [N] of K elements in the given regime. */
static void rand_problem(tu_rng *r, int regime, size_t M, size_t N, size_t K, uint8_t *a,
                         uint8_t *as, uint8_t *w, uint8_t *ws)
{
    size_t rb = K / 2, nb = K / 32;
    for (size_t i = 0; i < M * rb; i++)
        a[i] = (uint8_t)tu_xorshift64(r);
    for (size_t i = 0; i < N * rb; i++)
        w[i] = (uint8_t)tu_xorshift64(r);
    for (size_t i = 0; i < M * nb; i++)
        as[i] = rand_scale(r, regime);
    for (size_t i = 0; i < N * nb; i++)
        ws[i] = rand_scale(r, regime);
    if (regime == R_SPARSE) /* most blocks zero on one side */
        for (size_t i = 0; i < M * nb; i++)
            if (tu_xorshift64_below(r, 8))
                memset(a + i * 16, 0, 16);
    if (regime == R_CANCEL && N >= 2) /* W row 1 is row 0 with every sign flipped, on half K */
        for (size_t i = 0; i < rb; i++)
            w[rb + i] = i < rb / 2 ? w[i] ^ 0x88 : w[i];
}

static void expect_same_limits(const a4w4_bounded_limits *f, const a4w4_bounded_limits *p,
                               const char *what)
{
    cr_assert(!memcmp(&f->bound, &p->bound, sizeof p->bound) &&
                  !memcmp(&f->exact, &p->exact, sizeof p->exact) && f->inf_pos == p->inf_pos &&
                  f->inf_neg == p->inf_neg,
              "%s: fast bound %a exact %a inf %d/%d, plain %a %a %d/%d", what, f->bound,
              f->exact, f->inf_pos, f->inf_neg, p->bound, p->exact, p->inf_pos, p->inf_neg);
}

Test(bounded_limits_fast, equals_the_plain_form_on_random_shapes_regimes_and_splits)
{
    static const unsigned splits[] = {1, 2, 3, 4, 7, 8, 16, 64, 65536};
    tu_rng r;
    tu_xorshift64_seed(&r, 0xB0D5);
    size_t outputs = 0;
    for (size_t t = 0; t < 240; t++) {
        int regime = (int)(t % R_COUNT);
        size_t M = 1 + tu_xorshift64_below(&r, 3), N = 2 + tu_xorshift64_below(&r, 3);
        size_t K = 32 * (1 + tu_xorshift64_below(&r, t % 5 ? 96 : 600)); /* odd counts too */
        unsigned S = splits[tu_xorshift64_below(&r, sizeof splits / sizeof splits[0])];
        uint8_t *a = malloc(M * K / 2), *as = malloc(M * K / 32), *w = malloc(N * K / 2),
                *ws = malloc(N * K / 32);
        a4w4_bounded_limits *out = malloc(M * N * sizeof *out),
                            *out2 = malloc(M * N * sizeof *out);
        cr_assert(a && as && w && ws && out && out2);
        rand_problem(&r, regime, M, N, K, a, as, w, ws);
        if (tu_sweep_skip(t))
            goto next;
        /* the AVX2 path (where the CPU has it), threaded or not, and the portable one */
        cr_assert_eq(a4w4_gemm_bounded_limits_fast(a, as, w, ws, M, N, K, S, out, t % 2 ? 0 : 1),
                     0);
        cr_assert_eq(a4w4_gemm_bounded_limits_fast_ex(a, as, w, ws, M, N, K, S, out2, 1, 0), 0);
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                a4w4_dot_operands op = {a + i * K / 2, as + i * K / 32, w + j * K / 2,
                                        ws + j * K / 32, K};
                a4w4_bounded_limits p, f;
                int rp = a4w4_dot_bounded_limits(&op, S, &p);
                cr_expect_eq(a4w4_dot_bounded_limits_fast(&op, S, &f), rp);
                char what[128];
                snprintf(what, sizeof what, "case %zu regime %d (%zu, %zu) K %zu S %u", t,
                         regime, i, j, K, S);
                expect_same_limits(&f, &p, what);
                expect_same_limits(&out[i * N + j], &p, what);
                expect_same_limits(&out2[i * N + j], &p, what);
                outputs++;
            }
    next:
        free(a), free(as), free(w), free(ws), free(out), free(out2);
    }
    cr_expect_gt(outputs, 100, "outputs compared: %zu", outputs);
}

Test(bounded_limits_fast, equals_the_plain_form_at_the_edges_of_the_model)
{
    tu_row r;
    struct {
        unsigned units;
        int neg;
        uint8_t sa, sw;
    } blocks[][3] = {
        {{255, 0, 188, 188}, {0, 0, 127, 127}, {0, 0, 127, 127}},     /* 255 * 2^120: finite */
        {{384, 0, 254, 254}, {384, 0, 254, 254}, {1, 1, 0, 0}},      /* past fp32: double */
        {{384, 0, 254, 254}, {384, 1, 254, 254}, {1, 0, 0, 0}},      /* opposite overflows */
        {{1, 0, 0, 0}, {3, 1, 0, 1}, {2, 0, 1, 0}},                   /* 2^-256: below fp32 */
        {{7, 0, 127, 127}, {7, 1, 127, 127}, {0, 0, 127, 127}},       /* an exact zero sum */
        {{1, 0, 254, 254}, {1, 0, 254, 201}, {1, 0, 0, 0}},   /* 2^252 + 2^199 + 2^-256: a tie
                                                                  broken by the sticky bit */
        {{1, 0, 254, 254}, {1, 0, 254, 201}, {0, 0, 0, 0}},   /* the tie itself: to even */
    };
    for (size_t c = 0; c < sizeof blocks / sizeof blocks[0]; c++)
        for (unsigned S = 1; S <= 4; S++) {
            tu_row_init(&r);
            for (size_t b = 0; b < 3; b++)
                tu_row_block(&r, b * 11, blocks[c][b].units, blocks[c][b].neg, blocks[c][b].sa,
                      blocks[c][b].sw);
            a4w4_dot_operands op = {r.a, r.as, r.w, r.ws, 1024};
            a4w4_bounded_limits p, f;
            cr_assert_eq(a4w4_dot_bounded_limits_fast(&op, S, &f),
                         a4w4_dot_bounded_limits(&op, S, &p));
            char what[64];
            snprintf(what, sizeof what, "edge case %zu, S %u", c, S);
            expect_same_limits(&f, &p, what);
        }
}

Test(bounded_limits_fast, refuses_what_the_whole_matrix_form_cannot_take)
{
    uint8_t a[16] = {0}, s[1] = {127};
    a4w4_bounded_limits out[1];
    cr_expect_eq(a4w4_gemm_bounded_limits_fast(a, s, a, s, 1, 1, 48, 1, out, 1), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_bounded_limits_fast(a, s, a, s, 0, 1, 32, 1, out, 1), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_bounded_limits_fast(a, s, a, s, 1, 1, 32, 0, out, 1), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_bounded_limits_fast(a, s, NULL, s, 1, 1, 32, 1, out, 1), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_bounded_limits_fast(a, s, a, s, 1, 1, 32, 1, out, 1), 0);
    cr_expect_eq(out[0].exact, 0.0);
}

Test(bounded_limits_fast, equals_the_plain_form_on_every_thread)
{
    enum { M = 8, N = 12, K = 2048 }; /* 96 outputs: the threaded loop's chunks of 16 */
    static uint8_t a[M * K / 2], as[M * K / 32], w[N * K / 2], ws[N * K / 32];
    static a4w4_bounded_limits out[M * N];
    tu_rng r;
    tu_xorshift64_seed(&r, 0x7EAD5);
    rand_problem(&r, R_WIDE, M, N, K, a, as, w, ws);
    cr_assert_eq(a4w4_gemm_bounded_limits_fast_ex(a, as, w, ws, M, N, K, 3, out, 0, 1), 0);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            a4w4_dot_operands op = {a + i * K / 2, as + i * K / 32, w + j * K / 2,
                                    ws + j * K / 32, K};
            a4w4_bounded_limits p;
            a4w4_dot_bounded_limits(&op, 3, &p);
            char what[64];
            snprintf(what, sizeof what, "output (%zu, %zu)", i, j);
            expect_same_limits(&out[i * N + j], &p, what);
        }
}
