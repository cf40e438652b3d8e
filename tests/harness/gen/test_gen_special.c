/* test_gen_special.c — the generator's former blind spots (harness/gen/gen_special.h):
 * the sign of a zero output under the oracles (contracts §4.1, values worked out by hand),
 * the tiny regime's fp32 subnormal block values and outputs, the zero-sign rows, and what the
 * pre-merge set must contain (every E8M0 code, each layout rule at several M). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_quant.h"
#include "casefile.h"
#include "gen.h"

/* One output's operands built by hand: K = 64 (two blocks), all scales sc. */
typedef struct {
    uint8_t a[32], w[32], sa[2], sw[2];
} hand;

static a4w4_dot_operands ops(hand *h, uint8_t a_byte, uint8_t w_byte, uint8_t sc)
{
    memset(h->a, a_byte, sizeof h->a);
    memset(h->w, w_byte, sizeof h->w);
    h->sa[0] = h->sa[1] = h->sw[0] = h->sw[1] = sc;
    return (a4w4_dot_operands){h->a, h->sa, h->w, h->sw, 64};
}

static void expect_zero_bits(const a4w4_dot_operands *op, uint16_t bf16_want, uint32_t f32_want,
                             const char *what)
{
    uint16_t b = 0x1234;
    float f = 1.0f;
    a4w4_dot_exact(op, &b, &f);
    cr_expect_eq(b, bf16_want, "%s: exact bf16 0x%04x, want 0x%04x", what, b, bf16_want);
    cr_expect_eq(a4w4_f32_bits(f), f32_want, "%s: exact f32 0x%08x", what, a4w4_f32_bits(f));
    for (unsigned S = 1; S <= 2; S++) {
        float o = a4w4_dot_ordered(op, S);
        cr_expect_eq(a4w4_f32_bits(o), f32_want, "%s: ordered(%u) 0x%08x", what, S,
                     a4w4_f32_bits(o));
    }
}

Test(zero_sign, all_minus_zero_and_mixed_zero_outputs_are_plus_zero)
{
    hand h;
    /* -0 (code 8) times +1 (code 2): every one of the 64 terms is -0; +0.0 start: +0 */
    a4w4_dot_operands op = ops(&h, 0x88, 0x22, 127);
    expect_zero_bits(&op, 0x0000, 0x00000000u, "all -0 terms");
    /* -0 times -1: every term +0 */
    op = ops(&h, 0x88, 0xAA, 127);
    expect_zero_bits(&op, 0x0000, 0x00000000u, "all +0 terms");
    /* +0 and -0 alternating against +1: mixed zeros */
    op = ops(&h, 0x80, 0x22, 127);
    expect_zero_bits(&op, 0x0000, 0x00000000u, "mixed zero terms");
    /* -0 times +0 (codes 8 and 0): -0 terms at the smallest scale */
    op = ops(&h, 0x88, 0x00, 1);
    expect_zero_bits(&op, 0x0000, 0x00000000u, "-0 x +0 terms");
}

Test(zero_sign, a_negative_sum_below_bf16_range_is_minus_zero)
{
    /* the only -0 the contracts allow: a negative nonzero sum that rounds to zero. One term
     * (-0.5)(+0.5) at sa = sb = 60: -1 * 2^(120-256) = -2^-136, an fp32 subnormal
     * (2^13 units of 2^-149: bits 0x80002000) and below half the smallest bf16 subnormal
     * 2^-133, so bf16 -0 (0x8000) */
    hand h;
    a4w4_dot_operands op = ops(&h, 0x00, 0x00, 60);
    h.a[0] = 0x09; /* element 0: code 9 = -0.5 */
    h.w[0] = 0x01; /* element 0: code 1 = +0.5 */
    uint16_t b;
    float f;
    a4w4_dot_exact(&op, &b, &f);
    cr_expect_eq(b, 0x8000, "exact bf16 0x%04x", b);
    cr_expect_eq(a4w4_f32_bits(f), 0x80002000u, "exact f32 0x%08x", a4w4_f32_bits(f));
    float o = a4w4_dot_ordered(&op, 1);
    cr_expect_eq(a4w4_f32_bits(o), 0x80002000u, "ordered f32 0x%08x", a4w4_f32_bits(o));
    cr_expect_eq(a4w4_f32_to_bf16(o), 0x8000);
}

Test(subnormal, ordered_keeps_fp32_subnormal_block_values)
{
    /* two blocks of 32 terms (+1)(+1) = 4 quarter units each at sa = sb = 60:
     * block = 32*4 * 2^(120-256) = 2^-129 (subnormal), total 2^-128 = bits 0x00200000; a
     * flushing kernel gives 0. bf16 of 2^-128: 0x0020 */
    hand h;
    a4w4_dot_operands op = ops(&h, 0x22, 0x22, 60);
    float o = a4w4_dot_ordered(&op, 1);
    cr_expect_eq(a4w4_f32_bits(o), 0x00200000u, "ordered f32 0x%08x", a4w4_f32_bits(o));
    uint16_t b;
    a4w4_dot_exact(&op, &b, NULL);
    cr_expect_eq(b, 0x0020, "exact bf16 0x%04x", b);
}

static a4w4_case mk_tiny(size_t M, size_t N, size_t K, uint64_t seed)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "tiny_%zu_%zu_%zu", M, N, K);
    c.M = M;
    c.N = N;
    c.K = K;
    c.seed = seed;
    cr_assert_eq(a4w4_regime_parse("tiny", &c.regime, &c.mode), 0);
    snprintf(c.regime_text, sizeof c.regime_text, "tiny");
    return c;
}

Test(subnormal, tiny_regime_reaches_the_fp32_subnormal_range_inside_the_exact_regime)
{
    a4w4_case c = mk_tiny(9, 64, 1024, 11);
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), 0);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
    size_t nb = c.K / 32, sub_blocks = 0, sub_out = 0, normal_with_sub = 0;
    for (size_t m = 0; m < c.M; m++)
        for (size_t n = 0; n < c.N; n++) {
            a4w4_dot_operands op = {d.a_fp4.data + m * c.K / 2, d.a_scale.data + m * nb,
                                    d.w_fp4.data + n * c.K / 2, d.w_scale.data + n * nb, c.K};
            cr_expect(a4w4_exact_regime(&op), "output (%zu, %zu) not proven exact", m, n);
            size_t sub_here = 0;
            for (size_t b = 0; b < nb; b++) {
                a4w4_dot_operands one = {op.a_fp4 + b * 16, op.a_scale + b, op.w_fp4 + b * 16,
                                         op.w_scale + b, 32};
                float v = fabsf(a4w4_dot_ordered(&one, 1));
                sub_here += v > 0 && v < FLT_MIN;
            }
            sub_blocks += sub_here;
            uint16_t bf;
            float f;
            a4w4_dot_exact(&op, &bf, &f);
            if (fabsf(f) > 0 && fabsf(f) < FLT_MIN && (bf & 0x7FFF) != 0)
                sub_out++; /* subnormal fp32, nonzero in bf16: a flush shows */
            normal_with_sub += fabsf(f) >= FLT_MIN && sub_here > 0;
        }
    cr_expect_gt(sub_blocks, 1000, "subnormal block values: %zu", sub_blocks);
    cr_expect_gt(sub_out, 20, "outputs subnormal in fp32 and nonzero in bf16: %zu", sub_out);
    cr_expect_gt(normal_with_sub, 20, "normal outputs summing subnormal blocks: %zu",
                 normal_with_sub);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}

Test(zero_sign, tiny_and_special_regimes_hold_zero_sign_rows)
{
    static const char *const regimes[] = {"tiny", "special"};
    for (int r = 0; r < 2; r++) {
        a4w4_case c = mk_tiny(7, 48, 512, 5);
        cr_assert_eq(a4w4_regime_parse(regimes[r], &c.regime, &c.mode), 0);
        a4w4_sample s;
        a4w4_case_data d;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), 0);
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        size_t K2 = c.K / 2, nb = c.K / 32;
        for (size_t i = 0; i < K2; i++) {
            cr_expect_eq(d.a_fp4.data[6 * K2 + i], 0x88, "%s: A row M-1 all -0", regimes[r]);
            cr_expect_eq(d.a_fp4.data[5 * K2 + i], 0x80, "%s: A row M-2 +0/-0", regimes[r]);
            cr_expect_eq(d.w_fp4.data[i] & 0x88, 0, "%s: W row 0 has no sign bit", regimes[r]);
            cr_expect_eq(d.w_fp4.data[47 * K2 + i], 0x88, "%s: W row N-1 all -0", regimes[r]);
        }
        /* the outputs summing only zeros: +0 (0x0000) under exact and ordered(1) */
        size_t at[4][2] = {{6, 0}, {5, 0}, {6, 47}, {0, 47}};
        for (int k = 0; k < 4; k++) {
            size_t m = at[k][0], n = at[k][1];
            a4w4_dot_operands op = {d.a_fp4.data + m * K2, d.a_scale.data + m * nb,
                                    d.w_fp4.data + n * K2, d.w_scale.data + n * nb, c.K};
            uint16_t bf;
            a4w4_dot_exact(&op, &bf, NULL);
            cr_expect_eq(bf, 0x0000, "%s (%zu, %zu): exact 0x%04x", regimes[r], m, n, bf);
            cr_expect_eq(a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)), 0x0000);
        }
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
}

/* ---- the pre-merge set: the CPU gate holds every class of input ------------------------------ */

static a4w4_case *premerge(size_t *n)
{
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/cases/premerge.csv", A4W4_SOURCE_DIR);
    a4w4_case *cases = NULL;
    cr_assert_eq(a4w4_casefile_read(path, &cases, n, err, sizeof err), 0, "%s", err);
    return cases;
}

Test(premerge, every_e8m0_code_occurs_in_checked_rows)
{
    /* the decode of every scale code 0..254 and of 255 (NaN) is exercised somewhere in the
     * default set: tally the codes of the rows each case's sample generates */
    size_t n;
    a4w4_case *cases = premerge(&n);
    unsigned char seen[256] = {0};
    for (size_t i = 0; i < n; i++) {
        const a4w4_case *c = &cases[i];
        if (c->regime != A4W4_REGIME_WIDE && c->regime != A4W4_REGIME_CODE0 &&
            c->regime != A4W4_REGIME_SPECIAL && c->regime != A4W4_REGIME_TINY)
            continue; /* exact and normal scales sit near 127 */
        a4w4_sample s;
        a4w4_case_data d;
        cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &s), 0);
        cr_assert_eq(a4w4_case_generate(c, &s, &d), 0);
        size_t nb = c->K / 32;
        for (size_t r = 0; r < s.nrows; r++)
            for (size_t b = 0; b < nb; b++)
                seen[d.a_scale.data[(s.full ? r : s.rows[r]) * nb + b]] = 1;
        for (size_t r = 0; r < s.ncols; r++)
            for (size_t b = 0; b < nb; b++)
                seen[d.w_scale.data[(s.full ? r : s.cols[r]) * nb + b]] = 1;
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
    for (int code = 0; code < 256; code++)
        cr_expect(seen[code], "E8M0 code %d occurs in no checked row of the pre-merge set", code);
    free(cases);
}

/* Cases of the set matching a layout rule, and how many distinct M among them. */
static void rule_count(const a4w4_case *cases, size_t n, int (*rule)(const a4w4_case *),
                       size_t *count, size_t *distinct_m)
{
    size_t ms[256], k = 0;
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rule(&cases[i]))
            continue;
        (*count)++;
        size_t j = 0;
        while (j < k && ms[j] != cases[i].M)
            j++;
        if (j == k && k < 256)
            ms[k++] = cases[i].M;
    }
    *distinct_m = k;
}

static int k32_not_mult8_m_gt_32(const a4w4_case *c) { return (c->K / 32) % 8 && c->M > 32; }
static int k32_not_mult8(const a4w4_case *c) { return (c->K / 32) % 8 != 0; }
static int k_not_mult64(const a4w4_case *c) { return c->K % 64 != 0; }
static int n_not_mult16(const a4w4_case *c) { return c->N % 16 != 0; }
static int n_not_mult32(const a4w4_case *c) { return c->N % 32 != 0; }
static int n_le_128(const a4w4_case *c) { return c->N <= 128; }
static int m_not_mult32(const a4w4_case *c) { return c->M % 32 != 0; }
static int m_past_256(const a4w4_case *c) { return c->M > 256; }
static int tiny(const a4w4_case *c) { return c->regime == A4W4_REGIME_TINY; }
static int special_m5(const a4w4_case *c) { return c->regime == A4W4_REGIME_SPECIAL && c->M >= 5; }
static int code0(const a4w4_case *c) { return c->regime == A4W4_REGIME_CODE0; }

Test(premerge, each_layout_rule_and_rare_regime_has_several_cases_at_several_m)
{
    size_t n;
    a4w4_case *cases = premerge(&n);
    struct {
        const char *what;
        int (*rule)(const a4w4_case *);
        size_t min_cases, min_m;
    } rules[] = {
        {"(K/32) % 8 != 0 with M > 32 (activation-scale stride)", k32_not_mult8_m_gt_32, 6, 3},
        {"(K/32) % 8 != 0", k32_not_mult8, 12, 4},
        {"K % 64 != 0", k_not_mult64, 6, 3},
        {"N % 16 != 0", n_not_mult16, 3, 3},
        {"N % 32 != 0", n_not_mult32, 5, 3},
        {"N <= 128", n_le_128, 5, 3},
        {"M % 32 != 0", m_not_mult32, 10, 4},
        {"M > 256", m_past_256, 3, 2},
        {"tiny regime", tiny, 5, 4},
        {"special regime with M >= 5 (zero-sign rows)", special_m5, 4, 3},
        {"code0 regime", code0, 4, 3},
    };
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        size_t count, ms;
        rule_count(cases, n, rules[r].rule, &count, &ms);
        cr_expect(count >= rules[r].min_cases && ms >= rules[r].min_m,
                  "%s: %zu cases at %zu distinct M (want >= %zu at >= %zu)", rules[r].what, count,
                  ms, rules[r].min_cases, rules[r].min_m);
    }
    free(cases);
}
