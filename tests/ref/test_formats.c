/* test_formats.c — contracts §1 element and scale formats: E2M1 decode/encode (every code,
 * every tie, both neighbours of every tie, saturation, signed zero), E8M0 decode, fp32 ->
 * bf16 RNE (ties of both parities, NaN, Inf, overflow, subnormals), bf16/fp16 -> fp32
 * widening, fp4x2 packing. Every expected value is written by hand or comes from an
 * independent formula in this file (never from the code under test). */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "a4w4_formats.h"
#include "test_util.h"

/* ---- helpers (independent of the code under test) ------------------------------------ */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static tu_rng rng = {0x243F6A8885A308D3ull}; /* splitmix64 */

/* E2M1 values by code, written from the contracts §1 table. */
static const double e2m1_table[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                      -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

/* Independent E2M1 RNE: pick the grid magnitude nearest |x| (in double, exact for fp32
 * inputs); at an exact tie pick the one with mantissa bit 0 (even code); saturate to 6;
 * sign from the sign bit. */
static uint8_t e2m1_brute(float x)
{
    uint8_t sign = (bits_of(x) >> 31) ? 8 : 0;
    double a = fabs((double)x);
    if (a >= 6.0)
        return (uint8_t)(sign | 7);
    int best = 0;
    double bestd = INFINITY;
    for (int c = 0; c < 8; c++) {
        double d = fabs(a - e2m1_table[c]);
        if (d < bestd || (d == bestd && (c & 1) == 0 && (best & 1) == 1)) {
            best = c;
            bestd = d;
        }
    }
    return (uint8_t)(sign | best);
}

/* ---- E2M1 decode ----------------------------------------------------------------------- */

Test(e2m1, decode_all_16_codes)
{
    /* Hand table: codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; 8..15 negatives; 8 = -0. */
    static const uint32_t expect_bits[16] = {
        0x00000000u, 0x3F000000u, 0x3F800000u, 0x3FC00000u, 0x40000000u, 0x40400000u,
        0x40800000u, 0x40C00000u, 0x80000000u, 0xBF000000u, 0xBF800000u, 0xBFC00000u,
        0xC0000000u, 0xC0400000u, 0xC0800000u, 0xC0C00000u};
    for (unsigned c = 0; c < 16; c++) {
        float v = a4w4_e2m1_to_f32((uint8_t)c);
        cr_expect_eq(bits_of(v), expect_bits[c], "code %u -> bits 0x%08X, want 0x%08X", c,
                     bits_of(v), expect_bits[c]);
    }
}

Test(e2m1, decode_ignores_high_nibble)
{
    /* Only the low 4 bits are the code. 0xF7 -> code 7 = 6.0; 0x18 -> code 8 = -0. */
    cr_expect_eq(bits_of(a4w4_e2m1_to_f32(0xF7)), 0x40C00000u);
    cr_expect_eq(bits_of(a4w4_e2m1_to_f32(0x18)), 0x80000000u);
    cr_expect_eq(a4w4_e2m1_to_int2x(0xA3), 3);
}

Test(e2m1, int2x_all_16_codes)
{
    /* Twice the value: {0,1,2,3,4,6,8,12} and negatives; code 8 (-0) -> 0. */
    static const int expect[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    for (unsigned c = 0; c < 16; c++)
        cr_expect_eq(a4w4_e2m1_to_int2x((uint8_t)c), expect[c], "code %u -> %d, want %d", c,
                     a4w4_e2m1_to_int2x((uint8_t)c), expect[c]);
}

/* ---- E2M1 encode ----------------------------------------------------------------------- */

Test(e2m1, encode_exact_grid_points)
{
    /* Every grid value encodes to its own code, including -0 -> 8 and +0 -> 0. */
    static const float vals[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    for (unsigned c = 0; c < 16; c++)
        cr_expect_eq(a4w4_f32_to_e2m1(vals[c]), c, "%g -> %u, want %u", (double)vals[c],
                     a4w4_f32_to_e2m1(vals[c]), c);
}

/* Ties of the E2M1 grid and the even neighbour each must go to:
 * 0.25: 0 (code 0, m=0) vs 0.5 (code 1, m=1)  -> 0
 * 0.75: 0.5 (code 1, m=1) vs 1.0 (code 2, m=0) -> 2
 * 1.25: 1.0 (2) vs 1.5 (3)                     -> 2
 * 1.75: 1.5 (3) vs 2.0 (4)                     -> 4
 * 2.5 : 2.0 (4) vs 3.0 (5)                     -> 4
 * 3.5 : 3.0 (5) vs 4.0 (6)                     -> 6
 * 5.0 : 4.0 (6) vs 6.0 (7)                     -> 6 */
static const float tie_val[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
static const uint8_t tie_code[7] = {0, 2, 2, 4, 4, 6, 6};
/* Just below a tie -> the lower neighbour, just above -> the upper one. */
static const uint8_t tie_lo[7] = {0, 1, 2, 3, 4, 5, 6};
static const uint8_t tie_hi[7] = {1, 2, 3, 4, 5, 6, 7};

Test(e2m1, encode_ties_to_even_both_signs)
{
    for (int i = 0; i < 7; i++) {
        uint8_t p = a4w4_f32_to_e2m1(tie_val[i]);
        uint8_t n = a4w4_f32_to_e2m1(-tie_val[i]);
        cr_expect_eq(p, tie_code[i], "+%g -> %u, want %u", (double)tie_val[i], p, tie_code[i]);
        cr_expect_eq(n, (uint8_t)(8 | tie_code[i]), "-%g -> %u, want %u", (double)tie_val[i], n,
                     8 | tie_code[i]);
    }
}

Test(e2m1, encode_neighbours_of_ties)
{
    for (int i = 0; i < 7; i++) {
        float below = nextafterf(tie_val[i], 0.0f);
        float above = nextafterf(tie_val[i], INFINITY);
        cr_expect_eq(a4w4_f32_to_e2m1(below), tie_lo[i], "below %g -> %u, want %u",
                     (double)tie_val[i], a4w4_f32_to_e2m1(below), tie_lo[i]);
        cr_expect_eq(a4w4_f32_to_e2m1(above), tie_hi[i], "above %g -> %u, want %u",
                     (double)tie_val[i], a4w4_f32_to_e2m1(above), tie_hi[i]);
        cr_expect_eq(a4w4_f32_to_e2m1(-below), (uint8_t)(8 | tie_lo[i]), "-below %g",
                     (double)tie_val[i]);
        cr_expect_eq(a4w4_f32_to_e2m1(-above), (uint8_t)(8 | tie_hi[i]), "-above %g",
                     (double)tie_val[i]);
    }
}

Test(e2m1, encode_saturation)
{
    const float big[] = {6.0f, nextafterf(6.0f, INFINITY), 6.5f, 7.0f, 8.0f, 1e30f, FLT_MAX,
                         INFINITY};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        cr_expect_eq(a4w4_f32_to_e2m1(big[i]), 7, "%g -> %u, want 7", (double)big[i],
                     a4w4_f32_to_e2m1(big[i]));
        cr_expect_eq(a4w4_f32_to_e2m1(-big[i]), 15, "-%g -> %u, want 15", (double)big[i],
                     a4w4_f32_to_e2m1(-big[i]));
    }
    /* just below 6 but above the 5.0 tie -> 6.0 */
    cr_expect_eq(a4w4_f32_to_e2m1(nextafterf(6.0f, 0.0f)), 7);
}

Test(e2m1, encode_signed_zero_and_underflow)
{
    cr_expect_eq(a4w4_f32_to_e2m1(0.0f), 0);
    cr_expect_eq(a4w4_f32_to_e2m1(-0.0f), 8, "-0 must keep its sign (code 8)");
    /* Negative values that round to zero keep the sign: code 8. */
    const float tiny[] = {FLT_TRUE_MIN, FLT_MIN, 1e-30f, 0.1f, 0.2f, 0.25f};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        cr_expect_eq(a4w4_f32_to_e2m1(tiny[i]), 0, "%g -> %u, want 0", (double)tiny[i],
                     a4w4_f32_to_e2m1(tiny[i]));
        cr_expect_eq(a4w4_f32_to_e2m1(-tiny[i]), 8, "-%g -> %u, want 8", (double)tiny[i],
                     a4w4_f32_to_e2m1(-tiny[i]));
    }
}

Test(e2m1, encode_nan_code_documented)
{
    /* Header: NaN -> 7 | sign (unspecified by the contracts, but documented). */
    cr_expect_eq(a4w4_f32_to_e2m1(float_of(0x7FC00000u)) & 7, 7);
    cr_expect_eq(a4w4_f32_to_e2m1(float_of(0xFFC00000u)), 15);
}

Test(e2m1, encode_matches_brute_force_nearest_even)
{
    /* Random fp32 values concentrated on [0, 8] plus the full bit space, against the
     * independent nearest-with-even-tiebreak search. */
    for (int i = 0; i < 200000; i++) {
        uint64_t r = tu_splitmix64(&rng);
        float x;
        if (i & 1) {
            x = (float)((double)(r >> 40) / (double)(1u << 24) * 8.0); /* [0, 8) grid-ish */
            if (r & 1)
                x = -x;
        } else {
            x = float_of((uint32_t)r);
            if (isnan(x))
                continue;
        }
        uint8_t got = a4w4_f32_to_e2m1(x), want = e2m1_brute(x);
        cr_assert_eq(got, want, "x=%a (0x%08X): got %u want %u", (double)x, bits_of(x), got,
                     want);
    }
    /* All multiples of 1/64 in [-7, 7] (hits every tie and every grid point exactly). */
    for (int j = -448; j <= 448; j++) {
        float x = (float)j / 64.0f;
        cr_assert_eq(a4w4_f32_to_e2m1(x), e2m1_brute(x), "x=%g", (double)x);
    }
}

/* ---- E8M0 ------------------------------------------------------------------------------ */

Test(e8m0, decode_special_codes)
{
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(0)), 0x00400000u, "code 0 -> 2^-127 (0x00400000)");
    cr_expect(isnan(a4w4_e8m0_to_f32(0xFF)), "code 0xFF -> NaN");
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(127)), 0x3F800000u, "127 -> 1.0");
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(254)), 0x7F000000u, "254 -> 2^127");
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(1)), 0x00800000u, "1 -> 2^-126 (FLT_MIN)");
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(128)), 0x40000000u, "128 -> 2.0");
    cr_expect_eq(bits_of(a4w4_e8m0_to_f32(126)), 0x3F000000u, "126 -> 0.5");
}

Test(e8m0, decode_all_codes_are_powers_of_two)
{
    for (int c = 0; c < 255; c++) {
        double want = ldexp(1.0, c - 127);
        float got = a4w4_e8m0_to_f32((uint8_t)c);
        cr_expect_eq((double)got, want, "code %d -> %a, want %a", c, (double)got, want);
    }
}

/* ---- fp32 -> bf16 ---------------------------------------------------------------------- */

static uint16_t to_bf16(uint32_t u)
{
    return a4w4_f32_to_bf16(float_of(u));
}

Test(bf16, rne_normals_and_ties)
{
    cr_expect_eq(to_bf16(0x3F800000u), 0x3F80); /* 1.0 exact */
    /* tie, kept half even: 0x3F80|8000 -> lsb 0 stays */
    cr_expect_eq(to_bf16(0x3F808000u), 0x3F80, "1+2^-8 tie -> even 0x3F80");
    /* tie, odd half: 0x3F81|8000 -> 0x3F82 */
    cr_expect_eq(to_bf16(0x3F818000u), 0x3F82, "tie with odd lsb rounds up");
    cr_expect_eq(to_bf16(0x3F807FFFu), 0x3F80, "below tie rounds down");
    cr_expect_eq(to_bf16(0x3F808001u), 0x3F81, "above tie rounds up");
    cr_expect_eq(to_bf16(0x3F817FFFu), 0x3F81);
    cr_expect_eq(to_bf16(0xBF808000u), 0xBF80, "negative tie, even");
    cr_expect_eq(to_bf16(0xBF818000u), 0xBF82, "negative tie, odd -> away");
    cr_expect_eq(to_bf16(0xBF808001u), 0xBF81);
    /* mantissa carry into the exponent: 0x3FFF8000 (tie, lsb 1) -> 0x4000 */
    cr_expect_eq(to_bf16(0x3FFF8000u), 0x4000);
    cr_expect_eq(to_bf16(0x3FFFFFFFu), 0x4000);
}

Test(bf16, signed_zero_inf_overflow)
{
    cr_expect_eq(to_bf16(0x00000000u), 0x0000);
    cr_expect_eq(to_bf16(0x80000000u), 0x8000, "-0 stays -0");
    cr_expect_eq(to_bf16(0x7F800000u), 0x7F80, "+Inf");
    cr_expect_eq(to_bf16(0xFF800000u), 0xFF80, "-Inf");
    /* bf16 max is 0x7F7F = (2-2^-7)*2^127; the halfway point to 2^128 is 0x7F7F8000 */
    cr_expect_eq(to_bf16(0x7F7F7FFFu), 0x7F7F, "just below the top tie stays finite");
    cr_expect_eq(to_bf16(0x7F7F8000u), 0x7F80, "top tie: odd lsb -> rounds to Inf");
    cr_expect_eq(to_bf16(0x7F7FFFFFu), 0x7F80, "FLT_MAX -> Inf");
    cr_expect_eq(to_bf16(0xFF7FFFFFu), 0xFF80, "-FLT_MAX -> -Inf");
    cr_expect_eq(to_bf16(0x7F7E8000u), 0x7F7E, "tie with even lsb below the top stays");
}

Test(bf16, nan_stays_quiet_nan)
{
    static const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                                    0x7FA00000u, 0x7F80FFFFu, 0x7F808000u, 0x7FFFFFFFu,
                                    0xFFFFFFFFu, 0x7F807FFFu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        uint16_t h = to_bf16(nans[i]);
        cr_expect((h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0, "0x%08X -> 0x%04X is not NaN",
                  nans[i], h);
        cr_expect(h & 0x0040, "0x%08X -> 0x%04X is not a quiet NaN", nans[i], h);
        cr_expect_eq(h & 0x8000, (nans[i] >> 16) & 0x8000, "0x%08X -> 0x%04X lost the sign",
                     nans[i], h);
    }
    cr_expect_eq(to_bf16(0x7FC00000u), 0x7FC0);
}

Test(bf16, subnormals)
{
    /* bf16 subnormal quantum = fp32 bit 16 (2^-133). */
    cr_expect_eq(to_bf16(0x00000001u), 0x0000, "2^-149 -> 0");
    cr_expect_eq(to_bf16(0x00008000u), 0x0000, "half quantum, tie -> even 0");
    cr_expect_eq(to_bf16(0x00008001u), 0x0001, "above half quantum -> 1");
    cr_expect_eq(to_bf16(0x00018000u), 0x0002, "1.5 quanta, tie -> even 2");
    cr_expect_eq(to_bf16(0x00010000u), 0x0001, "exact min bf16 subnormal");
    cr_expect_eq(to_bf16(0x007F8000u), 0x0080, "tie at the subnormal top rounds to FLT_MIN");
    cr_expect_eq(to_bf16(0x007FFFFFu), 0x0080);
    cr_expect_eq(to_bf16(0x007F7FFFu), 0x007F);
    cr_expect_eq(to_bf16(0x80008001u), 0x8001, "negative subnormal");
    cr_expect_eq(to_bf16(0x80008000u), 0x8000, "negative tiny tie -> -0");
}

Test(bf16, exhaustive_against_independent_rounding)
{
    /* Every 257th fp32 pattern plus a slice around every tie: independent RNE written
     * with double arithmetic: round |x| to 8 significant bits (or the subnormal quantum
     * 2^-133) by comparing the remainder to half a quantum. */
    for (uint64_t u64 = 0; u64 <= 0xFFFFFFFFull; u64 += 257) {
        uint32_t u = (uint32_t)u64;
        float x = float_of(u);
        uint16_t got = a4w4_f32_to_bf16(x);
        if (isnan(x))
            continue;
        double a = fabs((double)x);
        uint16_t want;
        if (isinf(x)) {
            want = 0x7F80;
        } else if (a == 0.0) {
            want = 0;
        } else {
            int e;
            frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
            int qe = (e - 1 < -126 ? -126 : e - 1) - 7;
            double q = ldexp(1.0, qe);
            double m = floor(a / q), rem = a - m * q; /* exact in double */
            if (rem > q / 2 || (rem == q / 2 && fmod(m, 2.0) == 1.0))
                m += 1.0;
            double r = m * q;
            if (r >= 0x1p128) {
                want = 0x7F80;
            } else {
                float rf = (float)r;
                want = (uint16_t)(bits_of(rf) >> 16);
            }
        }
        want |= (uint16_t)((u >> 16) & 0x8000);
        if (got != want)
            cr_assert_fail("0x%08X -> 0x%04X, want 0x%04X", u, got, want);
    }
}

/* ---- bf16 / fp16 -> fp32 --------------------------------------------------------------- */

Test(widen, bf16_to_f32)
{
    cr_expect_eq(bits_of(a4w4_bf16_to_f32(0x3F80)), 0x3F800000u);
    cr_expect_eq(bits_of(a4w4_bf16_to_f32(0xC040)), 0xC0400000u); /* -3.0 */
    cr_expect_eq((double)a4w4_bf16_to_f32(0x0001), ldexp(1.0, -133), "min subnormal 2^-133");
    cr_expect_eq((double)a4w4_bf16_to_f32(0x007F), 127.0 * ldexp(1.0, -133));
    cr_expect_eq(bits_of(a4w4_bf16_to_f32(0x7F80)), 0x7F800000u);
    cr_expect_eq(bits_of(a4w4_bf16_to_f32(0xFF80)), 0xFF800000u);
    cr_expect(isnan(a4w4_bf16_to_f32(0x7FC0)));
    cr_expect(isnan(a4w4_bf16_to_f32(0x7F81)));
    cr_expect(isnan(a4w4_bf16_to_f32(0xFFC0)));
    cr_expect_eq(bits_of(a4w4_bf16_to_f32(0x8000)), 0x80000000u, "-0");
    cr_expect_eq((double)a4w4_bf16_to_f32(0x7F7F), 255.0 * ldexp(1.0, 120), "bf16 max");
}

Test(widen, fp16_to_f32_hand_values)
{
    cr_expect_eq((double)a4w4_fp16_to_f32(0x3C00), 1.0);
    cr_expect_eq((double)a4w4_fp16_to_f32(0xC000), -2.0);
    cr_expect_eq((double)a4w4_fp16_to_f32(0x3555), 1365.0 / 4096.0); /* 0x3555 = 0.33325195 */
    cr_expect_eq((double)a4w4_fp16_to_f32(0x0001), ldexp(1.0, -24), "fp16 0x0001 = 2^-24");
    cr_expect_eq((double)a4w4_fp16_to_f32(0x8001), -ldexp(1.0, -24));
    cr_expect_eq((double)a4w4_fp16_to_f32(0x0002), ldexp(1.0, -23));
    cr_expect_eq((double)a4w4_fp16_to_f32(0x0200), ldexp(1.0, -15));
    cr_expect_eq((double)a4w4_fp16_to_f32(0x03FF), 1023.0 * ldexp(1.0, -24), "max subnormal");
    cr_expect_eq((double)a4w4_fp16_to_f32(0x0400), ldexp(1.0, -14), "min normal");
    cr_expect_eq((double)a4w4_fp16_to_f32(0x7BFF), 65504.0, "fp16 max");
    cr_expect_eq(bits_of(a4w4_fp16_to_f32(0x7C00)), 0x7F800000u, "+Inf");
    cr_expect_eq(bits_of(a4w4_fp16_to_f32(0xFC00)), 0xFF800000u, "-Inf");
    cr_expect(isnan(a4w4_fp16_to_f32(0x7E00)));
    cr_expect(isnan(a4w4_fp16_to_f32(0x7C01)), "signalling NaN must stay NaN, not Inf");
    cr_expect(isnan(a4w4_fp16_to_f32(0xFE00)));
    cr_expect_eq(bits_of(a4w4_fp16_to_f32(0x8000)), 0x80000000u, "-0");
    cr_expect_eq(bits_of(a4w4_fp16_to_f32(0x0000)), 0x00000000u, "+0");
}

Test(widen, fp16_to_f32_all_65536_codes)
{
    /* Independent formula: (-1)^s * (e ? (1024+m) * 2^(e-25) : m * 2^-24), e=31 special. */
    for (uint32_t h = 0; h < 65536; h++) {
        unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
        float got = a4w4_fp16_to_f32((uint16_t)h);
        if (e == 31) {
            if (m == 0)
                cr_assert(isinf(got) && (signbit(got) != 0) == (s != 0), "0x%04X", h);
            else
                cr_assert(isnan(got), "0x%04X -> %a not NaN", h, (double)got);
            continue;
        }
        double v = e ? ldexp(1024.0 + m, (int)e - 25) : ldexp((double)m, -24);
        if (s)
            v = -v;
        cr_assert_eq((double)got, v, "0x%04X -> %a, want %a", h, (double)got, v);
        cr_assert_eq(signbit(got) != 0, s != 0, "0x%04X sign", h);
    }
}

/* ---- fp4x2 packing ---------------------------------------------------------------------- */

Test(fp4x2, low_nibble_is_even_element)
{
    uint8_t row[2] = {0x21, 0xF8};
    cr_expect_eq(a4w4_fp4_get(row, 0), 0x1);
    cr_expect_eq(a4w4_fp4_get(row, 1), 0x2);
    cr_expect_eq(a4w4_fp4_get(row, 2), 0x8);
    cr_expect_eq(a4w4_fp4_get(row, 3), 0xF);
    a4w4_fp4_set(row, 1, 0x7);
    cr_expect_eq(row[0], 0x71, "set of an odd element keeps the low nibble");
    a4w4_fp4_set(row, 2, 0xAB); /* only the low 4 bits of the code are stored */
    cr_expect_eq(row[1], 0xFB, "set of an even element keeps the high nibble");
}

Test(misc, status_strings_and_bit_views)
{
    cr_expect_not_null(a4w4_status_str(A4W4_OK));
    cr_expect_not_null(a4w4_status_str(A4W4_EINVAL));
    cr_expect_not_null(a4w4_status_str(12345));
    cr_expect_eq(a4w4_f32_bits(-2.0f), 0xC0000000u);
    cr_expect_eq((double)a4w4_f32_from_bits(0x3FC00000u), 1.5);
}
