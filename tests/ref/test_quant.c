/* test_quant.c — contracts §2 per-1x32 quantization: the scale code of every mode at hand-worked
 * amax values (zero, ties, saturation, fp32 subnormal amax, FLT_MAX, NaN/Inf), amax values
 * that separate each pair of modes, element codes of whole blocks worked by hand, bf16/fp16
 * input equal to its fp32 widening, shuffle=1 equal to the §3.3 layout of the row-major
 * scales with 0x7F pads, dequantization, and argument errors.
 * (The golden bundle q1_quant_modes.safetensors is checked elsewhere.) */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "test_util.h"

/* ---- helpers --------------------------------------------------------------------------- */

static float F(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t B(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static tu_rng rng = {0x13198A2E03707344ull}; /* splitmix64 */


static uint8_t nib(const uint8_t *row, size_t k)
{
    return (k & 1) ? (uint8_t)(row[k / 2] >> 4) : (uint8_t)(row[k / 2] & 15);
}

/* Quantize one 32-element fp32 row (M=1, K=32) in `mode`; returns the scale, codes out. */
static uint8_t quant1(const float x[32], a4w4_scale_mode mode, uint8_t codes[32])
{
    uint8_t fp4[16], sc = 0xEE;
    int rc = a4w4_quantize(x, A4W4_IN_F32, 1, 32, mode, 0, fp4, &sc);
    cr_assert_eq(rc, A4W4_OK);
    for (int k = 0; k < 32; k++)
        codes[k] = nib(fp4, (size_t)k);
    return sc;
}

/* ---- scale codes by hand (contracts §2 step 2) ------------------------------------------------
 * Each row: amax, then the expected code for round_up, round_down, ceil, even, with the
 * arithmetic in the comment. round_up: t = amax/6 (fp32 RNE), field(t) + (mantissa != 0);
 * round_down: field(amax/4); ceil: field(amax/4) + (mantissa != 0);
 * even: u = (bits(amax) + 0x00200000) & 0xFF800000, field(float(u)/4). */
typedef struct {
    uint32_t amax_bits;
    uint8_t up, down, ceil, even;
    const char *why;
} scale_row;

static const scale_row scale_rows[] = {
    /* 0: every mode gives 0 */
    {0x00000000u, 0, 0, 0, 0, "amax=0 -> 0"},
    /* 6 (0x40C00000): up t=1.0 field 127 no mantissa -> 127; down t=1.5 -> 127;
     * ceil t=1.5 -> 127+1=128; even 0x40C00000+0x200000=0x40E00000 &mask=0x40800000=4 -> /4
     * =1 -> 127 */
    {0x40C00000u, 127, 127, 128, 127, "amax=6"},
    /* 6.5 (0x40D00000): up t=1.0833 -> 127+1=128; down t=1.625 -> 127; ceil -> 128;
     * even 0x40D00000+0x200000=0x40F00000 &mask=0x40800000=4 -> 1 -> 127 */
    {0x40D00000u, 128, 127, 128, 127, "amax=6.5"},
    /* 7 (0x40E00000): up t=1.1667 -> 128; down t=1.75 -> 127; ceil -> 128;
     * even 0x40E00000+0x200000=0x41000000=8.0 -> /4=2.0 -> 128 */
    {0x40E00000u, 128, 127, 128, 128, "amax=7"},
    /* just below 7 (0x40DFFFFF): even 0x40DFFFFF+0x200000=0x40FFFFFF &mask=0x40800000=4 -> 127;
     * up t=1.1666 -> 128; down t=1.7499 -> 127; ceil 128 */
    {0x40DFFFFFu, 128, 127, 128, 127, "amax=7-ulp"},
    /* 8 (0x41000000): up t=1.333 -> 127+1=128; down t=2.0 -> 128; ceil 2.0 exact -> 128;
     * even 0x41200000 &mask=0x41000000=8 -> 2 -> 128 */
    {0x41000000u, 128, 128, 128, 128, "amax=8"},
    /* 4 (0x40800000): up t=0.6667 field 126 +1 -> 127; down t=1 -> 127; ceil 1 exact -> 127;
     * even 0x40A00000 &mask=0x40800000=4 -> 1 -> 127 */
    {0x40800000u, 127, 127, 127, 127, "amax=4"},
    /* 3 (0x40400000): up t=0.5 exact -> 126; down t=0.75 field 126 -> 126; ceil -> 127;
     * even 0x40600000 &mask=0x40000000=2 -> 0.5 -> 126 */
    {0x40400000u, 126, 126, 127, 126, "amax=3"},
    /* 12 (0x41400000): up t=2 exact -> 128; down t=3 -> 128; ceil 3 -> 129;
     * even 0x41600000 &mask=0x41000000=8 -> 2 -> 128 */
    {0x41400000u, 128, 128, 129, 128, "amax=12"},
    /* 1 (0x3F800000): up t=1/6=1.333*2^-3 field 124 +1 -> 125; down t=0.25 -> 125;
     * ceil 0.25 exact -> 125; even 0x3FA00000 &mask=1.0 -> 0.25 -> 125 */
    {0x3F800000u, 125, 125, 125, 125, "amax=1"},
    /* 0.75 (0x3F400000): up t=0.125 exact -> 124; down t=0.1875=1.5*2^-3 -> 124;
     * ceil -> 125; even 0x3F600000 &mask=0x3F000000=0.5 -> 0.125 -> 124 */
    {0x3F400000u, 124, 124, 125, 124, "amax=0.75"},
    /* 1792 = 1.75*2^10 (0x44E00000): up t=298.67 field 135 +1 -> 136; down t=448=1.75*2^8
     * -> 135; ceil -> 136; even 0x44E00000+0x200000=0x45000000=2048 -> 512 -> 136 */
    {0x44E00000u, 136, 135, 136, 136, "amax=1792"},
    /* 1.5*2^127 (0x7F400000): up t=2^125 exact -> 252; down t=1.5*2^125 -> 252; ceil 253;
     * even 0x7F600000 &mask=0x7F000000=2^127 -> 2^125 -> 252 */
    {0x7F400000u, 252, 252, 253, 252, "amax=1.5*2^127"},
    /* 0x7F5FFFFF: even +0x200000=0x7F7FFFFF &mask=0x7F000000 -> 2^125 -> 252 (the largest
     * amax whose even code stays below the Inf edge); up t=0x7F5FFFFF/6 in [2^125,2^126)
     * -> 252+1=253; down t in [2^125, 2^126) -> 252; ceil -> 253 */
    {0x7F5FFFFFu, 253, 252, 253, 252, "amax=0x7F5FFFFF"},
    /* FLT_TRUE_MIN (2^-149): up t=2^-149/6 < half quantum -> 0 -> 0; down t=2^-151 -> 0
     * -> 0; ceil same 0; even 0x00000001+0x200000=0x00200001 &mask=0 -> 0 -> 0 */
    {0x00000001u, 0, 0, 0, 0, "amax=2^-149"},
    /* 2^-146 (0x00000008): up t=(8/6)*2^-149 -> rounds to 2^-149 (0x00000001): field 0,
     * mantissa set -> 1; down t=2^-148 (0x00000002) field 0 -> 0; ceil -> 0+1=1;
     * even 0x00200008 &mask=0 -> 0 -> 0 */
    {0x00000008u, 1, 0, 1, 0, "amax=2^-146 (subnormal)"},
    /* 1.5*2^-125 (0x01400000, normal): up t=2^-127=0x00400000 subnormal, field 0, mantissa
     * set -> 1; down t=1.5*2^-127=0x00600000 -> 0; ceil -> 1; even 0x01600000 &mask=
     * 0x01000000=2^-125 -> 2^-127 -> field 0 -> 0 */
    {0x01400000u, 1, 0, 1, 0, "amax=1.5*2^-125"},
    /* 2^-124 (0x01800000): up t=2^-124/6=1.333*2^-127 subnormal -> 0+1=1; down t=2^-126
     * =0x00800000 -> 1; ceil exact -> 1; even 0x01A00000 &mask=0x01800000 -> 2^-126 -> 1 */
    {0x01800000u, 1, 1, 1, 1, "amax=2^-124"},
    /* just below 2^-124 (0x017FFFFF = 2^-124-2^-148): down t=2^-126-2^-150 is a tie between
     * 0x007FFFFF (odd) and 0x00800000 (even) -> 2^-126, field 1 -> 1; ceil t exact 2^-126
     * -> 1; up t subnormal -> 0+1 = 1; even 0x019FFFFF &mask=0x01800000 -> 2^-126 -> 1 */
    {0x017FFFFFu, 1, 1, 1, 1, "amax=2^-124-ulp (subnormal tie in amax/4)"},
    /* 0x017FFFFE = 2^-124-2^-147: down t=2^-126-2^-149=0x007FFFFF exact, field 0 -> 0;
     * ceil 0+1 -> 1; up t subnormal -> 1; even 0x019FFFFE &mask=0x01800000 -> 2^-126 -> 1 */
    {0x017FFFFEu, 1, 0, 1, 1, "amax=2^-124-2ulp"},
    /* 0x00600000 (subnormal amax 1.5*2^-127): even +0x200000=0x00800000=2^-126 -> /4 =
     * 2^-128 subnormal -> 0; up t=2^-128 subnormal 0x00200000 -> 1; down t=1.5*2^-129
     * -> 0; ceil -> 1 */
    {0x00600000u, 1, 0, 1, 0, "amax=1.5*2^-127"},
};

static void check_scale_row(const scale_row *r)
{
    float amax = F(r->amax_bits);
    uint8_t want[4] = {r->up, r->down, r->ceil, r->even};
    for (int m = 0; m < 4; m++) {
        uint8_t got = a4w4_scale_code(amax, (a4w4_scale_mode)m);
        cr_expect_eq(got, want[m], "%s (0x%08X), mode %s: got %u want %u", r->why, r->amax_bits,
                     a4w4_scale_mode_name((a4w4_scale_mode)m), got, want[m]);
    }
}

Test(scale_code, hand_worked_table)
{
    for (size_t i = 0; i < sizeof scale_rows / sizeof scale_rows[0]; i++)
        check_scale_row(&scale_rows[i]);
}

Test(scale_code, flt_max_round_up_down_ceil)
{
    /* FLT_MAX = 0x7F7FFFFF = (2-2^-23)*2^127.
     * round_up: t = FLT_MAX/6 = 1.333*2^125 -> field 252, mantissa set -> 253.
     * round_down: t = FLT_MAX/4 = 0x7E7FFFFF -> field 252.
     * ceil: same t, mantissa set -> 253. */
    cr_expect_eq(a4w4_scale_code(FLT_MAX, A4W4_ROUND_UP), 253);
    cr_expect_eq(a4w4_scale_code(FLT_MAX, A4W4_ROUND_DOWN), 252);
    cr_expect_eq(a4w4_scale_code(FLT_MAX, A4W4_CEIL), 253);
}

/* Even at the top of the range. bits(FLT_MAX)+0x00200000 = 0x7F9FFFFF, &0xFF800000 =
 * 0x7F800000 = +Inf: the formula's intermediate overflows for every amax >= 0x7F600000
 * (1.75*2^127). AITER's Triton quantizer (the implementation contracts §2 names for this mode)
 * computes floor(log2(Inf)) - 2 = Inf, clamps to 127 and stores 127+127 = 254. A finite
 * block must not get the NaN scale 0xFF (that would turn every GEMM output reading it into
 * NaN although the input has no NaN/Inf). Expected: 254. */
Test(scale_code, even_top_of_range_follows_the_spec_formula)
{
    /* contracts §2 even, literally (AITER's torch reference f32_to_mx_e8m0_scale): amax=FLT_MAX
     * (0x7F7FFFFF) + 0x00200000 = 0x7F9FFFFF, masked 0x7F800000 = +Inf, Inf/4 = Inf, field
     * 0xFF. The same for every amax >= 0x7F600000 (1.75*2^127). AITER's Triton fused
     * quantizer computes floor(log2(u)) - 2 clamped to 127 instead and stores 254 there: the
     * two AITER paths disagree at this edge (docs/findings.md, "The contracts, the public code and the golden data"). The oracle
     * keeps the formula the golden bundles were made with; just below the edge both agree. */
    cr_expect_eq(a4w4_scale_code(FLT_MAX, A4W4_EVEN), 0xFF);
    cr_expect_eq(a4w4_scale_code(F(0x7F600000u), A4W4_EVEN), 0xFF);
    /* 0x7F5FFFFF + 0x00200000 = 0x7F7FFFFF -> 0x7F000000 = 2^127 -> /4 = 2^125 -> 252 */
    cr_expect_eq(a4w4_scale_code(F(0x7F5FFFFFu), A4W4_EVEN), 252);
}

Test(scale_code, nan_inf_amax_is_ff_every_mode)
{
    for (int m = 0; m < 4; m++) {
        cr_expect_eq(a4w4_scale_code(INFINITY, (a4w4_scale_mode)m), 0xFF);
        cr_expect_eq(a4w4_scale_code(F(0x7FC00000u), (a4w4_scale_mode)m), 0xFF);
        cr_expect_eq(a4w4_scale_code(F(0x7F800001u), (a4w4_scale_mode)m), 0xFF);
    }
}

Test(scale_code, separating_amax_values)
{
    /* Each pair of modes differs at one of these (see the table above):
     * up/down: 6.5 (128 vs 127); up/ceil: 6 (127 vs 128); up/even: 6.5 (128 vs 127);
     * down/ceil: 6 (127 vs 128); down/even: 7 (127 vs 128); ceil/even: 6 (128 vs 127).
     * No single amax gives four different codes: every mode's code lies in
     * {floor(log2 amax)-2, floor(log2 amax)-1} + 127. */
    struct {
        int m1, m2;
        float amax;
    } pairs[] = {{A4W4_ROUND_UP, A4W4_ROUND_DOWN, 6.5f}, {A4W4_ROUND_UP, A4W4_CEIL, 6.0f},
                 {A4W4_ROUND_UP, A4W4_EVEN, 6.5f},       {A4W4_ROUND_DOWN, A4W4_CEIL, 6.0f},
                 {A4W4_ROUND_DOWN, A4W4_EVEN, 7.0f},     {A4W4_CEIL, A4W4_EVEN, 6.0f}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        cr_expect_neq(a4w4_scale_code(pairs[i].amax, (a4w4_scale_mode)pairs[i].m1),
                      a4w4_scale_code(pairs[i].amax, (a4w4_scale_mode)pairs[i].m2),
                      "modes %d and %d agree at %g", pairs[i].m1, pairs[i].m2,
                      (double)pairs[i].amax);
}

Test(scale_code, independent_formula_over_random_amax)
{
    /* Independent implementation of the four formulas with exponent arithmetic in
     * integers (no fp32 division for even; division for up/down/ceil recomputed from
     * double and rounded to fp32 once, which is the fp32 RNE quotient). Covers normal and
     * subnormal amax; skips amax >= 0x7F600000 where even's intermediate overflows (see
     * even_top_of_range_follows_the_spec_formula). */
    for (int i = 0; i < 300000; i++) {
        uint32_t u = (uint32_t)(tu_splitmix64(&rng) & 0x7FFFFFFFu);
        if (u >= 0x7F600000u)
            continue;
        float amax = F(u);
        if (amax == 0.0f)
            continue;
        uint32_t t6 = B((float)((double)amax / 6.0)), t4 = B((float)((double)amax / 4.0));
        uint8_t up = (uint8_t)((t6 >> 23) + ((t6 & 0x7FFFFF) != 0));
        uint8_t down = (uint8_t)(t4 >> 23);
        uint8_t ceil_ = (uint8_t)((t4 >> 23) + ((t4 & 0x7FFFFF) != 0));
        /* even: float(u') with u' a power of two (or 0); code = max(0, log2(u') - 2 + 127)
         * via the exponent field: the field of u'/4 is field(u') - 2 when that is >= 1,
         * else the quotient is subnormal (field 0). */
        uint32_t ue = (u + 0x00200000u) & 0xFF800000u;
        int fe = (int)(ue >> 23);
        uint8_t even = (uint8_t)(fe - 2 >= 1 ? fe - 2 : 0);
        cr_assert_eq(a4w4_scale_code(amax, A4W4_ROUND_UP), up, "up 0x%08X", u);
        cr_assert_eq(a4w4_scale_code(amax, A4W4_ROUND_DOWN), down, "down 0x%08X", u);
        cr_assert_eq(a4w4_scale_code(amax, A4W4_CEIL), ceil_, "ceil 0x%08X", u);
        cr_assert_eq(a4w4_scale_code(amax, A4W4_EVEN), even, "even 0x%08X", u);
    }
}

Test(scale_code, mode_names_round_trip)
{
    const char *names[4] = {"round_up", "round_down", "ceil", "even"};
    for (int m = 0; m < 4; m++) {
        cr_expect_str_eq(a4w4_scale_mode_name((a4w4_scale_mode)m), names[m]);
        cr_expect_eq(a4w4_scale_mode_parse(names[m]), m);
    }
    cr_expect_eq(a4w4_scale_mode_parse("nearest"), -1);
    cr_expect_eq(a4w4_scale_mode_parse(NULL), -1);
}

/* ---- whole blocks through a4w4_quantize --------------------------------------------------- */

Test(quantize, zero_block_every_mode)
{
    float x[32] = {0};
    uint8_t codes[32];
    for (int m = 0; m < 4; m++) {
        uint8_t s = quant1(x, (a4w4_scale_mode)m, codes);
        cr_expect_eq(s, 0, "mode %d: zero block scale %u", m, s);
        for (int k = 0; k < 32; k++)
            cr_expect_eq(codes[k], 0, "mode %d k %d", m, k);
    }
}

Test(quantize, negative_zero_block_every_mode)
{
    /* All -0: amax = 0 -> scale 0; q = -0 / 2^-127 = -0 -> code 8. Mixed +0/-0 too. */
    float x[32];
    uint8_t codes[32];
    for (int k = 0; k < 32; k++)
        x[k] = (k % 3) ? -0.0f : 0.0f;
    for (int m = 0; m < 4; m++) {
        uint8_t s = quant1(x, (a4w4_scale_mode)m, codes);
        cr_expect_eq(s, 0);
        for (int k = 0; k < 32; k++)
            cr_expect_eq(codes[k], (k % 3) ? 8 : 0, "mode %d k %d code %u", m, k, codes[k]);
    }
}

/* A block with amax 6 whose elements hit every tie. Scales by hand:
 * round_up 127 (scale 1), round_down 127 (1), ceil 128 (2), even 127 (1). */
static const float tie_block[32] = {6.0f,  3.0f,   1.5f,  -0.0f, -0.1f, 0.75f, 0.25f, -5.0f,
                                    1.25f, -1.75f, 2.5f,  3.5f,  -3.5f, 5.0f,  0.5f,  -0.25f,
                                    4.0f,  -6.0f,  0.74f, 0.76f, 2.4f,  2.6f,  -1e-30f, 0.0f,
                                    5.9f,  -4.5f,  1.0f,  -1.0f, 0.3f,  -0.3f, 1.7f,  0.2f};

Test(quantize, tie_block_scale_1)
{
    /* scale 1 (code 127): q = x. Code by code (RNE on {0,.5,1,1.5,2,3,4,6}, sign kept):
     * 6->7, 3->5, 1.5->3, -0->8, -0.1->8, 0.75 tie->2 (1.0), 0.25 tie->0, -5 tie->-4=14,
     * 1.25 tie->2, -1.75 tie->-2=12, 2.5 tie->4, 3.5 tie->6, -3.5->14, 5 tie->6, 0.5->1,
     * -0.25 tie->8, 4->6, -6->15, 0.74->1, 0.76->2, 2.4->4, 2.6->5, -1e-30->8, 0->0,
     * 5.9->7, -4.5->14, 1->2, -1->10, 0.3->1, -0.3->9, 1.7->3, 0.2->0 */
    static const uint8_t want[32] = {7, 5, 3,  8, 8,  2, 0, 14, 2, 12, 4, 6,  14, 6, 1, 8,
                                     6, 15, 1, 2, 4,  5, 8, 0,  7, 14, 2, 10, 1,  9, 3, 0};
    const a4w4_scale_mode modes[3] = {A4W4_ROUND_UP, A4W4_ROUND_DOWN, A4W4_EVEN};
    for (int i = 0; i < 3; i++) {
        uint8_t codes[32];
        uint8_t s = quant1(tie_block, modes[i], codes);
        cr_expect_eq(s, 127, "mode %d scale %u", modes[i], s);
        for (int k = 0; k < 32; k++)
            cr_expect_eq(codes[k], want[k], "mode %d k %d (x=%g): %u want %u", modes[i], k,
                         (double)tie_block[k], codes[k], want[k]);
    }
}

Test(quantize, tie_block_ceil_scale_2)
{
    /* ceil: amax 6 -> t=1.5 -> 128 (scale 2); q = x/2:
     * 3->5, 1.5->3, 0.75 tie->2, -0->8, -0.05->8, 0.375->1, 0.125->0, -2.5 tie->12,
     * 0.625->1, -0.875->10, 1.25 tie->2, 1.75 tie->4, -1.75->12, 2.5 tie->4, 0.25 tie->0,
     * -0.125->8, 2->4, -3->13, 0.37->1, 0.38->1, 1.2->2, 1.3->3, -5e-31->8, 0->0,
     * 2.95->5, -2.25->12, 0.5->1, -0.5->9, 0.15->0, -0.15->8, 0.85->2, 0.1->0 */
    static const uint8_t want[32] = {5, 3, 2,  8, 8,  1, 0, 12, 1, 10, 2, 4,  12, 4, 0, 8,
                                     4, 13, 1, 1, 2,  3, 8, 0,  5, 12, 1, 9,  0,  8, 2, 0};
    uint8_t codes[32];
    uint8_t s = quant1(tie_block, A4W4_CEIL, codes);
    cr_expect_eq(s, 128);
    for (int k = 0; k < 32; k++)
        cr_expect_eq(codes[k], want[k], "k %d (x/2=%g): %u want %u", k,
                     (double)tie_block[k] / 2, codes[k], want[k]);
}

Test(quantize, saturation_round_down)
{
    /* amax 7.99: round_down t=1.9975 -> 127 (scale 1): 7.99 saturates -> 7, -7 -> 15,
     * 6.5 -> 7, 5.01 -> 7. Even for the same block: 7.99 -> 0x40FFAE14+0x200000 carries ->
     * 8 -> 128 (scale 2): 7.99/2=3.995 -> 6, -3.5 tie -> 14, 3.25 -> 5, 2.505 -> 5. */
    float x[32] = {7.99f, -7.0f, 6.5f, 5.01f};
    uint8_t codes[32];
    uint8_t s = quant1(x, A4W4_ROUND_DOWN, codes);
    cr_expect_eq(s, 127);
    cr_expect_eq(codes[0], 7);
    cr_expect_eq(codes[1], 15);
    cr_expect_eq(codes[2], 7);
    cr_expect_eq(codes[3], 7);
    for (int k = 4; k < 32; k++)
        cr_expect_eq(codes[k], 0);
    s = quant1(x, A4W4_EVEN, codes);
    cr_expect_eq(s, 128);
    cr_expect_eq(codes[0], 6);
    cr_expect_eq(codes[1], 14);
    cr_expect_eq(codes[2], 5);
    cr_expect_eq(codes[3], 5);
}

Test(quantize, flt_max_block)
{
    /* round_up: s=253 (2^126): FLT_MAX/2^126 = 3.99999976 -> 4 (code 6); -2^126 -> -1 (10).
     * round_down: s=252 (2^125): 7.9999995 -> saturate 7; -2^126/2^125=-2 -> 12.
     * ceil: s=253 -> as round_up. */
    float x[32] = {FLT_MAX, -0x1p126f};
    uint8_t codes[32];
    uint8_t s = quant1(x, A4W4_ROUND_UP, codes);
    cr_expect_eq(s, 253);
    cr_expect_eq(codes[0], 6);
    cr_expect_eq(codes[1], 10);
    s = quant1(x, A4W4_ROUND_DOWN, codes);
    cr_expect_eq(s, 252);
    cr_expect_eq(codes[0], 7);
    cr_expect_eq(codes[1], 12);
    s = quant1(x, A4W4_CEIL, codes);
    cr_expect_eq(s, 253);
    cr_expect_eq(codes[0], 6);
    cr_expect_eq(codes[1], 10);
}

Test(quantize, flt_max_block_even_gets_the_nan_scale)
{
    /* Even mode at amax = FLT_MAX: the contracts §2 formula gives scale 0xFF (see
     * even_top_of_range_follows_the_spec_formula), so the block reads as NaN; the other
     * modes keep it finite: round_up t = FLT_MAX/6 ~ 1.33*2^125 -> field 125+127 = 252,
     * mantissa set -> 253, scale 2^126. */
    float x[32] = {FLT_MAX, -0x1p126f};
    uint8_t codes[32];
    cr_expect_eq(quant1(x, A4W4_EVEN, codes), 0xFF);
    cr_expect_eq(quant1(x, A4W4_ROUND_UP, codes), 253);
    /* q = FLT_MAX / 2^126 = 3.99999976 -> 4.0 (code 6); -2^126 / 2^126 = -1 -> code 10 */
    cr_expect_eq(codes[0], 6);
    cr_expect_eq(codes[1], 10);
}

Test(quantize, subnormal_amax_block)
{
    /* fp32 subnormal amax: x = {2^-127, 2^-128, -2^-129, 3*2^-130}, amax 2^-127
     * (0x00400000). round_down: t=2^-129 subnormal -> s=0, scale 2^-127: q = 1, 0.5, -0.25,
     * 0.375 -> codes 2, 1, 8 (-0.25 tie -> -0), 1 (0.375 -> 0.5).
     * round_up: t=2^-127/6 subnormal, mantissa set -> s=1, scale 2^-126: q = 0.5, 0.25,
     * -0.125, 0.1875 -> codes 1, 0 (tie -> 0), 8, 0.
     * ceil: t=2^-129 (0x00100000) field 0 mantissa set -> 1: same codes as round_up.
     * even: 0x00400000+0x200000=0x00600000 &mask=0 -> 0 -> s=0: same as round_down. */
    float x[32] = {0x1p-127f, 0x1p-128f, -0x1p-129f, 3 * 0x1p-130f};
    uint8_t codes[32];
    static const uint8_t want_down[4] = {2, 1, 8, 1}, want_up[4] = {1, 0, 8, 0};
    const a4w4_scale_mode modes[4] = {A4W4_ROUND_UP, A4W4_ROUND_DOWN, A4W4_CEIL, A4W4_EVEN};
    const uint8_t want_s[4] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
        uint8_t s = quant1(x, modes[i], codes);
        cr_expect_eq(s, want_s[i], "mode %d scale %u want %u", modes[i], s, want_s[i]);
        const uint8_t *w = want_s[i] ? want_up : want_down;
        for (int k = 0; k < 4; k++)
            cr_expect_eq(codes[k], w[k], "mode %d k %d: %u want %u", modes[i], k, codes[k], w[k]);
        for (int k = 4; k < 32; k++)
            cr_expect_eq(codes[k], 0);
    }
}

Test(quantize, nan_and_inf_blocks_get_ff_other_blocks_unaffected)
{
    /* Row of 4 blocks: block 0 has a NaN, block 1 +Inf, block 2 -Inf, block 3 amax 6.
     * Blocks 0..2 -> 0xFF whatever the mode; block 3 -> its own code (up 127, down 127,
     * ceil 128, even 127) with codes {6->7, -3->13}. Also a NaN hidden behind a larger
     * finite element must still mark the block. */
    float x[128] = {0};
    x[5] = F(0x7FC00000u);
    x[0] = 100.0f; /* larger finite value first */
    x[32 + 31] = INFINITY;
    x[64 + 7] = -INFINITY;
    x[96] = 6.0f;
    x[97] = -3.0f;
    const uint8_t want3[4] = {127, 127, 128, 127};
    for (int m = 0; m < 4; m++) {
        uint8_t fp4[64], sc[4];
        cr_assert_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 128, (a4w4_scale_mode)m, 0, fp4, sc),
                     A4W4_OK);
        cr_expect_eq(sc[0], 0xFF, "mode %d NaN block", m);
        cr_expect_eq(sc[1], 0xFF, "mode %d +Inf block", m);
        cr_expect_eq(sc[2], 0xFF, "mode %d -Inf block", m);
        cr_expect_eq(sc[3], want3[m], "mode %d finite block %u", m, sc[3]);
        if (m != A4W4_CEIL) {
            cr_expect_eq(nib(fp4 + 48, 0), 7);
            cr_expect_eq(nib(fp4 + 48, 1), 13);
        }
    }
}

Test(quantize, multi_row_layout)
{
    /* M=3, K=64: row r block b has amax (r*2+b+1) placed at element 31-b. round_down:
     * amax 1 -> t .25 -> 125; 2 -> .5 -> 126; 3 -> .75 -> 126; 4 -> 1 -> 127; 5 -> 1.25
     * -> 127; 6 -> 1.5 -> 127. */
    float x[3 * 64] = {0};
    for (int r = 0; r < 3; r++)
        for (int b = 0; b < 2; b++)
            x[r * 64 + b * 32 + 31 - b] = (float)(r * 2 + b + 1);
    uint8_t fp4[3 * 32], sc[3 * 2];
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_F32, 3, 64, A4W4_ROUND_DOWN, 0, fp4, sc), A4W4_OK);
    const uint8_t want_s[6] = {125, 126, 126, 127, 127, 127};
    /* codes: 1/0.25... q = amax/scale: 1/0.25=4 -> 6; 2/.5=4 -> 6; 3/.5=6 -> 7; 4/1 -> 6;
     * 5/1 -> tie -> 6; 6/1 -> 7 */
    const uint8_t want_c[6] = {6, 6, 7, 6, 6, 7};
    for (int i = 0; i < 6; i++) {
        int r = i / 2, b = i % 2;
        cr_expect_eq(sc[i], want_s[i], "scale r%d b%d", r, b);
        cr_expect_eq(nib(fp4 + r * 32, (size_t)(b * 32 + 31 - b)), want_c[i], "code r%d b%d",
                     r, b);
    }
}

/* ---- bf16 / fp16 inputs equal their fp32 widening ----------------------------------------- */

static float widen_fp16(uint16_t h)
{
    unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = e ? ldexp(1024.0 + m, (int)e - 25) : ldexp((double)m, -24);
    return (float)(s ? -v : v);
}

static void check_widened(a4w4_in_dtype dt)
{
    enum { M = 9, K = 256 };
    uint16_t *h = tu_xmalloc(sizeof(uint16_t) * M * K);
    float *f = tu_xmalloc(sizeof(float) * M * K);
    for (int i = 0; i < M * K; i++) {
        uint64_t r = tu_splitmix64(&rng);
        uint16_t v = (uint16_t)r;
        int row = i / K;
        if (row < 7) {
            /* keep the exponent in a band so blocks are not dominated by one element;
             * rows 0..6 use different bands (incl. subnormals for row 0) */
            unsigned ebits = dt == A4W4_IN_BF16 ? 7 : 10;
            unsigned emask = dt == A4W4_IN_BF16 ? 0x7F80 : 0x7C00;
            unsigned band = (unsigned)row * (dt == A4W4_IN_BF16 ? 36 : 4);
            unsigned e = band + (unsigned)((r >> 20) % 6);
            v = (uint16_t)((v & ~emask) | ((e << ebits) & emask));
        }
        if (row == 8 && (r >> 40) % 50 == 0)
            v = dt == A4W4_IN_BF16 ? 0x7FC0 : 0x7E00; /* some NaN blocks */
        h[i] = v;
        f[i] = dt == A4W4_IN_BF16 ? F((uint32_t)v << 16) : widen_fp16(v);
    }
    for (int m = 0; m < 4; m++) {
        uint8_t fa[M * K / 2], fb[M * K / 2], sa[M * K / 32], sb[M * K / 32];
        cr_assert_eq(a4w4_quantize(h, dt, M, K, (a4w4_scale_mode)m, 0, fa, sa), A4W4_OK);
        cr_assert_eq(a4w4_quantize(f, A4W4_IN_F32, M, K, (a4w4_scale_mode)m, 0, fb, sb), A4W4_OK);
        for (int i = 0; i < M * K / 32; i++) {
            cr_assert_eq(sa[i], sb[i], "dtype %d mode %d block %d: %u vs %u", dt, m, i, sa[i],
                         sb[i]);
            if (sa[i] == 0xFF)
                continue; /* element codes unspecified */
            cr_assert(!memcmp(fa + i * 16, fb + i * 16, 16), "dtype %d mode %d block %d codes",
                      dt, m, i);
        }
    }
    free(h);
    free(f);
}

Test(quantize, bf16_input_equals_fp32_widening)
{
    check_widened(A4W4_IN_BF16);
}

Test(quantize, fp16_input_equals_fp32_widening)
{
    check_widened(A4W4_IN_FP16);
}

Test(quantize, fp16_subnormal_and_specials)
{
    /* fp16 block {0x0001 (2^-24), 0x8002 (-2^-23), 0x0000...}: amax 2^-23.
     * round_down: t = 2^-25 -> field 102; scale 2^-25: q = 2 -> 4, -4 -> 14.
     * fp16 0x7C00 (+Inf) in the second block -> 0xFF. */
    uint16_t h[64] = {0x0001, 0x8002};
    h[40] = 0x7C00;
    uint8_t fp4[32], sc[2];
    cr_assert_eq(a4w4_quantize(h, A4W4_IN_FP16, 1, 64, A4W4_ROUND_DOWN, 0, fp4, sc), A4W4_OK);
    cr_expect_eq(sc[0], 102);
    cr_expect_eq(nib(fp4, 0), 4);
    cr_expect_eq(nib(fp4, 1), 14);
    cr_expect_eq(sc[1], 0xFF);
}

/* ---- shuffle=1 ---------------------------------------------------------------------------- */

static void check_shuffle(size_t M, size_t K, a4w4_scale_mode mode)
{
    size_t nb = K / 32;
    float *x = tu_xmalloc(sizeof(float) * M * K);
    for (size_t i = 0; i < M * K; i++)
        x[i] = ldexpf((float)((int)(tu_splitmix64(&rng) % 2001) - 1000),
                      (int)(tu_splitmix64(&rng) % 60) - 30);
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    /* hand: rows round up to 256, cols to 8 */
    cr_assert_eq(prow, (M + 255) / 256 * 256);
    cr_assert_eq(pcol, (nb + 7) / 8 * 8);
    uint8_t *f1 = tu_xmalloc(M * K / 2), *f2 = tu_xmalloc(M * K / 2), *rm = tu_xmalloc(M * nb);
    uint8_t *sh = tu_xmalloc(prow * pcol), *ref = tu_xmalloc(prow * pcol);
    memset(sh, 0xA5, prow * pcol);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_F32, M, K, mode, 0, f1, rm), A4W4_OK);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_F32, M, K, mode, 1, f2, sh), A4W4_OK);
    cr_assert(!memcmp(f1, f2, M * K / 2), "fp4 differs between shuffle=0 and shuffle=1");
    cr_assert_eq(a4w4_act_scale_shuffle(rm, M, nb, 0x7F, 0x7F, ref), A4W4_OK);
    cr_assert(!memcmp(sh, ref, prow * pcol), "shuffled scales differ (M=%zu K=%zu)", M, K);
    /* Every cell by the index map: valid cells hold the row-major scale, pads 0x7F. */
    for (size_t r = 0; r < prow; r++)
        for (size_t c = 0; c < pcol; c++) {
            uint8_t want = (r < M && c < nb) ? rm[r * nb + c] : 0x7F;
            size_t at = a4w4_act_scale_shuffle_index(M, nb, r, c);
            cr_assert_lt(at, prow * pcol);
            cr_assert_eq(sh[at], want, "cell (%zu,%zu) -> %u want %u", r, c, sh[at], want);
        }
    free(x);
    free(f1);
    free(f2);
    free(rm);
    free(sh);
    free(ref);
}

Test(quantize, shuffle_equals_layout_of_row_major)
{
    check_shuffle(37, 160, A4W4_ROUND_UP); /* nb=5 -> pad cols to 8, rows to 256 */
    check_shuffle(256, 256, A4W4_EVEN);    /* no pad */
    check_shuffle(257, 320, A4W4_CEIL);    /* rows pad to 512, cols 10 -> 16 */
    check_shuffle(1, 32, A4W4_ROUND_DOWN);
}

/* ---- errors ------------------------------------------------------------------------------ */

Test(quantize, argument_errors)
{
    float x[64] = {1.0f};
    uint8_t fp4[32], sc[4096];
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 48, A4W4_ROUND_UP, 0, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 33, A4W4_ROUND_UP, 0, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 16, A4W4_ROUND_UP, 0, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 0, 32, A4W4_ROUND_UP, 0, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 0, A4W4_ROUND_UP, 0, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(NULL, A4W4_IN_F32, 1, 32, A4W4_ROUND_UP, 0, fp4, sc),
                 A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 32, A4W4_ROUND_UP, 0, NULL, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 32, A4W4_ROUND_UP, 0, fp4, NULL), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 32, (a4w4_scale_mode)4, 0, fp4, sc),
                 A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 0, 32, A4W4_ROUND_UP, 1, fp4, sc), A4W4_EINVAL);
    cr_expect_eq(a4w4_quantize(x, A4W4_IN_F32, 2, 32, A4W4_ROUND_UP, 0, fp4, sc), A4W4_OK);
    float out[64];
    cr_expect_eq(a4w4_dequantize(fp4, sc, 1, 48, out), A4W4_EINVAL);
    cr_expect_eq(a4w4_dequantize(NULL, sc, 1, 32, out), A4W4_EINVAL);
    cr_expect_eq(a4w4_dequantize(fp4, NULL, 1, 32, out), A4W4_EINVAL);
    cr_expect_eq(a4w4_dequantize(fp4, sc, 1, 32, NULL), A4W4_EINVAL);
}

/* ---- dequantize ---------------------------------------------------------------------------- */

Test(dequantize, hand_values)
{
    /* Row 0 (scale 0 = 2^-127): codes 1 (0.5) -> 2^-128, 2 -> 2^-127, 15 (-6) -> -6*2^-127,
     *   8 -> -0.
     * Row 1 (scale 254 = 2^127): 3 (1.5) -> 1.5*2^127, 4 (2) -> 2^128 = +Inf, 7 -> +Inf,
     *   14 (-4) -> -Inf.
     * Row 2 (scale 0xFF): any code -> NaN. Row 3 (scale 127): codes as values. */
    uint8_t fp4[4 * 16] = {0}, sc[4] = {0, 254, 0xFF, 127};
    uint8_t codes[4][4] = {{1, 2, 15, 8}, {3, 4, 7, 14}, {0, 1, 8, 7}, {5, 13, 6, 9}};
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            a4w4_fp4_set(fp4 + r * 16, (size_t)k, codes[r][k]);
    float out[4 * 32];
    cr_assert_eq(a4w4_dequantize(fp4, sc, 4, 32, out), A4W4_OK);
    cr_expect_eq((double)out[0], 0x1p-128);
    cr_expect_eq((double)out[1], 0x1p-127);
    cr_expect_eq((double)out[2], -6 * 0x1p-127);
    cr_expect_eq(B(out[3]), 0x80000000u);
    cr_expect_eq((double)out[32], 1.5 * 0x1p127);
    cr_expect(isinf(out[33]) && out[33] > 0);
    cr_expect(isinf(out[34]) && out[34] > 0);
    cr_expect(isinf(out[35]) && out[35] < 0);
    for (int k = 0; k < 32; k++)
        cr_expect(isnan(out[64 + k]), "scale 0xFF element %d not NaN", k);
    cr_expect_eq((double)out[96], 3.0);
    cr_expect_eq((double)out[97], -3.0);
    cr_expect_eq((double)out[98], 4.0);
    cr_expect_eq((double)out[99], -0.5);
    cr_expect_eq(B(out[100]), 0u);
}

Test(dequantize, round_trip_of_grid_values)
{
    /* Values already on the grid (e2m1 * 2^(s-127), s = scale chosen so amax is 6*2^(s-127)
     * or 4*2^(s-127)) come back exactly with round_down / round_up. */
    for (int trial = 0; trial < 200; trial++) {
        int s = 10 + (int)(tu_splitmix64(&rng) % 230);
        float x[32];
        static const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
        for (int k = 0; k < 32; k++) {
            float g = grid[tu_splitmix64(&rng) % 8];
            x[k] = ldexpf((tu_splitmix64(&rng) & 1) ? -g : g, s - 127);
        }
        x[tu_splitmix64(&rng) % 32] = ldexpf(6.0f, s - 127); /* amax = 6 * 2^(s-127) */
        uint8_t fp4[16], sc;
        /* round_up: t = 2^(s-127) exactly -> code s */
        cr_assert_eq(a4w4_quantize(x, A4W4_IN_F32, 1, 32, A4W4_ROUND_UP, 0, fp4, &sc), A4W4_OK);
        cr_assert_eq(sc, s);
        float back[32];
        cr_assert_eq(a4w4_dequantize(fp4, &sc, 1, 32, back), A4W4_OK);
        for (int k = 0; k < 32; k++)
            cr_assert_eq(B(back[k]), B(x[k]), "trial %d k %d: %a vs %a", trial, k,
                         (double)back[k], (double)x[k]);
    }
}
