/* test_gen_range.c — the `range` regime (harness/gen/gen_range.h): every output of a
 * generated case against the bits worked out by hand for its kind, variant and sign under the
 * exact and ordered(1) contracts (contracts §4.3), the NaN rows, and the scale codes the regime
 * promises (E8M0 254 and 255 on both sides, sa + sb from 255 to 508 on blocks with finite
 * values, below 105 on blocks with representable ones). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "casefile.h"
#include "gen.h"
#include "gen_range.h"

typedef struct {
    a4w4_case c;
    a4w4_sample s;
    a4w4_case_data d;
} rcase;

static void gen_range(rcase *r, size_t M, size_t N, size_t K, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    snprintf(r->c.name, sizeof r->c.name, "range_%zu_%zu_%zu", M, N, K);
    r->c.M = M;
    r->c.N = N;
    r->c.K = K;
    r->c.seed = seed;
    cr_assert_eq(a4w4_regime_parse("range", &r->c.regime, &r->c.mode), 0);
    snprintf(r->c.regime_text, sizeof r->c.regime_text, "range");
    cr_assert_eq(a4w4_sample_make(M, N, K, seed, r->c.name, 1, &r->s), 0);
    cr_assert_eq(a4w4_case_generate(&r->c, &r->s, &r->d), 0);
}

static void rfree(rcase *r)
{
    a4w4_case_data_free(&r->d);
    a4w4_sample_free(&r->s);
}

static a4w4_dot_operands op_of(const rcase *r, size_t m, size_t n)
{
    size_t K = r->c.K, nb = K / 32;
    a4w4_dot_operands op = {r->d.a_fp4.data + m * K / 2, r->d.a_scale.data + m * nb,
                            r->d.w_fp4.data + n * K / 2, r->d.w_scale.data + n * nb, K};
    return op;
}

static int nan16(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

/* The bits by hand (gen_range.h), positive rows; NAN16 marks "any NaN". Kind 2 is seeded data:
 * checked apart. */
#define NAN16 0xFFFF
static const uint16_t want_exact[4][8] = {
    {0x7F80, 0x7F7F, 0x7F80, 0x7F7F, 0x7F7F, 0x7F80, 0x7F7F, 0x7F80},
    {0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFEC0},
    {0},
    {0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0000, 0x0001}};
static const uint16_t want_ordered[4][8] = {
    {0x7F80, 0x7F7F, 0x7F80, 0x7F80, 0x7F7F, 0x7F80, NAN16, 0x7F80},
    {0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFF00, 0xFEC0},
    {0},
    {0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0000, 0x0000, 0x0001}};

static void expect_bits(uint16_t got, uint16_t want, int neg, const char *what, size_t m, size_t n)
{
    if (want == NAN16) {
        cr_expect(nan16(got), "%s (%zu, %zu): 0x%04x, want NaN", what, m, n, got);
        return;
    }
    uint16_t w = neg ? (uint16_t)(want ^ 0x8000) : want;
    cr_expect_eq(got, w, "%s (%zu, %zu): 0x%04x, want 0x%04x", what, m, n, got, w);
}

Test(range_regime, every_output_has_the_bits_worked_out_by_hand)
{
    rcase r;
    gen_range(&r, 17, 24, 1024, 5001);
    for (size_t m = 0; m < r.c.M; m++)
        for (size_t n = 0; n < r.c.N; n++) {
            a4w4_dot_operands op = op_of(&r, m, n);
            uint16_t e;
            a4w4_dot_exact(&op, &e, NULL);
            uint16_t o = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1));
            size_t kind = m % 4, v = n % 8;
            int neg = (int)(m / 4 % 2);
            if (m == r.d.nan_a_row || n == r.d.nan_w_row) {
                cr_expect(nan16(e) && nan16(o), "(%zu, %zu) reads an E8M0 255: NaN", m, n);
                continue;
            }
            if (kind == 2) { /* seeded: finite, the same under both, well inside the range */
                float f = a4w4_bf16_to_f32(e);
                cr_expect(e == o && fabsf(f) < 0x1p20f, "(%zu, %zu): 0x%04x 0x%04x", m, n, e, o);
                continue;
            }
            expect_bits(e, want_exact[kind][v], neg, "exact", m, n);
            expect_bits(o, want_ordered[kind][v], neg, "ordered(1)", m, n);
        }
    cr_expect_eq(r.d.nan_a_row, 8);
    cr_expect_eq(r.d.nan_w_row, 8);
    rfree(&r);
}

Test(range_regime, scale_codes_reach_both_ends_on_both_sides)
{
    rcase r;
    gen_range(&r, 17, 24, 1280, 7);
    size_t nb = r.c.K / 32;
    int a254 = 0, w254 = 0, a255 = 0, w255 = 0;
    for (size_t i = 0; i < r.c.M * nb; i++) {
        a254 |= r.d.a_scale.data[i] == 254;
        a255 |= r.d.a_scale.data[i] == 255;
    }
    for (size_t i = 0; i < r.c.N * nb; i++) {
        w254 |= r.d.w_scale.data[i] == 254;
        w255 |= r.d.w_scale.data[i] == 255;
    }
    cr_expect(a254 && w254 && a255 && w255, "E8M0 254/255: A %d %d, W %d %d", a254, a255, w254,
              w255);
    /* sa + sb over 255..508 on blocks of kind-1 outputs (values finite: a zero dot where
     * 2^(sa+sb-256) >= 2^128), and <= 104 with a nonzero dot on kind-3 outputs */
    unsigned char hi[509] = {0};
    int low_nonzero = 0;
    for (size_t m = 1; m < r.c.M; m += 4)
        for (size_t n = 0; n < r.c.N; n++)
            for (size_t b = 8; b < 16; b++) {
                unsigned s = (unsigned)r.d.a_scale.data[m * nb + b] + r.d.w_scale.data[n * nb + b];
                if (s >= 255 && s <= 508)
                    hi[s] = 1;
            }
    for (size_t n = 0; n < r.c.N; n++) {
        unsigned s = (unsigned)r.d.a_scale.data[3 * nb + 25] + r.d.w_scale.data[n * nb + 25];
        a4w4_dot_operands one = {r.d.a_fp4.data + 3 * r.c.K / 2 + 25 * 16,
                                 r.d.a_scale.data + 3 * nb + 25,
                                 r.d.w_fp4.data + n * r.c.K / 2 + 25 * 16,
                                 r.d.w_scale.data + n * nb + 25, 32};
        float f;
        a4w4_dot_exact(&one, NULL, &f);
        low_nonzero += s <= 104 && f != 0.0f;
    }
    size_t distinct = 0, past = 0;
    for (unsigned s = 255; s <= 508; s++) {
        distinct += hi[s];
        past += hi[s] && s >= 382;
    }
    cr_expect_geq(distinct, 40, "kind 1: %zu distinct sa + sb in 255..508", distinct);
    cr_expect_geq(past, 30, "kind 1: %zu distinct sa + sb >= 382", past);
    cr_expect(hi[382] && hi[383] && hi[508], "382, 383 and 508 must occur");
    cr_expect_geq(low_nonzero, 5, "kind 3: blocks at sa + sb <= 104 with a value (%d)",
                  low_nonzero);
    rfree(&r);
}

Test(range_regime, small_k_keeps_the_first_kinds_and_a_k_tail_is_free)
{
    /* K = 288: one segment (kind 0) and one free block; kind 1..3 rows are all zero */
    rcase r;
    gen_range(&r, 9, 9, 288, 3);
    a4w4_dot_operands op = op_of(&r, 0, 0);
    uint16_t e;
    a4w4_dot_exact(&op, &e, NULL);
    cr_expect_eq(e, 0x7F80, "kind 0 variant 0 at K = 288: 0x%04x", e);
    op = op_of(&r, 1, 3);
    a4w4_dot_exact(&op, &e, NULL);
    cr_expect_eq(e, 0x0000, "kind 1 without its segment: +0 (0x%04x)", e);
    rfree(&r);
}
