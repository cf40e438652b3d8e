/* test_mutants.c — the self-test's mutants stay real faults (harness/backends/mutants.c), the
 * reference quantizer / layout backends stay right (harness/backends/quantizers.c), and the
 * fingerprint names what a quantizer does (contracts §2).
 *
 * Every mutant gets a hand-picked case where it must be wrong, checked here directly against
 * the oracles (ref/a4w4_gemm.h, a4w4_quantize, the closed-form layout maps), never through
 * the runner whose verdicts selftest relies on; and, where its fault is conditional, a case
 * where it must be right, so that a mutant cannot decay into plain garbage (which anything
 * would catch) without a test failing. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "registry.h"
#include "gen.h"
#include "invariance_measure.h"
#include "mutants.h"
#include "quantizers.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static const a4w4_backend_type *mut(const char *name)
{
    const a4w4_backend_type *t = a4w4_mutant_find(name);
    cr_assert_not_null(t, "mutant %s is not registered", name);
    return t;
}

/* A generated case, every output (full sample). */
typedef struct {
    a4w4_case c;
    a4w4_sample s;
    a4w4_case_data d;
} gcase;

static void gen(gcase *g, size_t M, size_t N, size_t K, const char *regime, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    snprintf(g->c.name, sizeof g->c.name, "tm_%zu_%zu_%zu_%s", M, N, K, regime);
    g->c.M = M;
    g->c.N = N;
    g->c.K = K;
    g->c.seed = seed;
    snprintf(g->c.regime_text, sizeof g->c.regime_text, "%s", regime);
    cr_assert_eq(a4w4_regime_parse(regime, &g->c.regime, &g->c.mode), 0);
    cr_assert_eq(a4w4_sample_make(M, N, K, seed, g->c.name, 1, &g->s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&g->c, &g->s, &g->d), A4W4_OK);
}

static void gfree(gcase *g)
{
    a4w4_case_data_free(&g->d);
    a4w4_sample_free(&g->s);
}

/* Run GEMM type t on g (outputs poisoned first) into y [M, N]; returns the status. */
static int run_gemm(const a4w4_backend_type *t, gcase *g, uint16_t *y)
{
    char why[256] = "";
    for (size_t k = 0; k < g->c.M * g->c.N; k++)
        y[k] = A4W4_POISON_BF16;
    a4w4_run_args a = {.c = &g->c, .d = &g->d, .s = &g->s, .y = y, .why = why, .whylen = sizeof why};
    return t->run(NULL, &a);
}

/* The ordered(S) oracle of g into y. */
static void oracle(gcase *g, unsigned S, uint16_t *y)
{
    const a4w4_case_data *d = &g->d;
    size_t nb = d->K / 32;
    for (size_t m = 0; m < d->M; m++)
        for (size_t n = 0; n < d->N; n++) {
            a4w4_dot_operands op = {d->a_fp4.data + m * d->K / 2, d->a_scale.data + m * nb,
                                    d->w_fp4.data + n * d->K / 2, d->w_scale.data + n * nb,
                                    d->K};
            y[m * d->N + n] = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, S));
        }
}

static int same(uint16_t a, uint16_t b)
{
    int an = (a & 0x7FFF) > 0x7F80, bn = (b & 0x7FFF) > 0x7F80;
    return a == b || (an && bn && a != A4W4_POISON_BF16 && b != A4W4_POISON_BF16);
}

/* Outputs of y that differ from the oracle: total, and within rows [r0, r1). */
static size_t diff_rows(const uint16_t *y, const uint16_t *o, size_t M, size_t N, size_t r0,
                        size_t r1)
{
    size_t c = 0;
    for (size_t m = r0; m < r1 && m < M; m++)
        for (size_t n = 0; n < N; n++)
            c += !same(y[m * N + n], o[m * N + n]);
    return c;
}

/* Mutant `name` on case (M, N, K, regime, seed) vs ordered(S): differing outputs in
 * rows [r0, r1) and in all rows. */
static void gemm_diff(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      uint64_t seed, unsigned S, size_t r0, size_t r1, size_t *in_range,
                      size_t *total)
{
    gcase g;
    gen(&g, M, N, K, regime, seed);
    uint16_t *y = malloc(M * N * 2), *o = malloc(M * N * 2);
    cr_assert(y && o);
    cr_assert_eq(run_gemm(mut(name), &g, y), A4W4_OK, "%s on %s", name, g.c.name);
    oracle(&g, S, o);
    *in_range = diff_rows(y, o, M, N, r0, r1);
    *total = diff_rows(y, o, M, N, 0, M);
    cr_assert(a4w4_case_guards_intact(&g.d, &(const char *){NULL}), "%s wrote out of bounds",
              name);
    free(y);
    free(o);
    gfree(&g);
}

/* ---- GEMM mutants -------------------------------------------------------------------------- */

Test(gemm_mutants, drop_kblock_wrong_on_k_tail_right_otherwise)
{
    size_t a, t;
    gemm_diff("mut-drop-kblock", 8, 48, 320, "exact", 3, 1, 0, 8, &a, &t);
    cr_expect_gt(t, 8 * 48 / 2, "K=320: the last block must be missing nearly everywhere (%zu)", t);
    gemm_diff("mut-drop-kblock", 8, 48, 512, "exact", 3, 1, 0, 8, &a, &t);
    cr_expect_eq(t, 0, "K=512 (K %% 256 == 0) must be right, %zu outputs differ", t);
}

Test(gemm_mutants, rows_small_n_row0_right_rows_1_on_wrong)
{
    size_t row0, t;
    gemm_diff("mut-rows-small-n", 33, 64, 512, "exact", 5, 1, 0, 1, &row0, &t);
    cr_expect_eq(row0, 0, "row 0 must be right (%zu differ)", row0);
    cr_expect_gt(t, 32 * 64 / 2, "rows 1..32 must be wrong (%zu of %d differ)", t, 32 * 64);
    gemm_diff("mut-rows-small-n", 33, 256, 512, "exact", 5, 1, 0, 33, &row0, &t);
    cr_expect_eq(t, 0, "N=256 (> 128) must be right, %zu differ", t);
    gemm_diff("mut-rows-small-n", 65, 64, 256, "exact", 5, 1, 0, 65, &row0, &t);
    cr_expect_eq(t, 0, "M=65 (> 64) must be right, %zu differ", t);
}

Test(gemm_mutants, splitk_bf16_differs_from_ordered2)
{
    size_t a, t;
    gemm_diff("mut-splitk-bf16", 33, 64, 512, "exact", 7, 2, 0, 33, &a, &t);
    cr_expect_gt(t, 0, "bf16 partials must differ from ordered(2) somewhere");
    /* one split (K = 256): nothing to add in bf16 but the rounding of the only partial */
    gemm_diff("mut-splitk-bf16", 33, 64, 256, "exact", 7, 2, 0, 33, &a, &t);
    cr_expect_eq(t, 0, "K=256 has one split: must equal ordered(2) (%zu differ)", t);
}

/* The bound the bounded contract used before the per-output bound (T = sum |terms| of the
 * output, nb = K/32): kept here only to show what it let through. */
static double old_bounded_tolerance(double T, size_t nb, unsigned S)
{
    return (2.0 * (double)nb * 0x1p-24 + (2.0 * S + 1.0) * 0x1p-8) * T * (1.0 + 0x1p-6) +
           (S + 2.0) * 0x1p-133;
}

static double sum_abs_terms(const a4w4_dot_operands *op)
{
    double t = 0;
    for (size_t k = 0; k < op->K; k++)
        t += fabs((double)a4w4_e2m1_to_int2x(a4w4_fp4_get(op->a_fp4, k)) *
                  a4w4_e2m1_to_int2x(a4w4_fp4_get(op->w_fp4, k))) *
             ldexp(1.0, (int)op->a_scale[k / 32] + (int)op->w_scale[k / 32] - 256);
    return t;
}

Test(gemm_mutants, bounded_drop_block_outside_the_per_output_bound_at_k16384)
{
    size_t M = 4, N = 32, K = 16384, nb = K / 32, beyond = 0, beyond_old = 0, even_bad = 0;
    gcase g;
    gen(&g, M, N, K, "normal", 41);
    uint16_t y[4 * 32];
    cr_assert_eq(run_gemm(mut("mut-bounded-drop-block"), &g, y), A4W4_OK);
    const a4w4_case_data *d = &g.d;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = {d->a_fp4.data + m * K / 2, d->a_scale.data + m * nb,
                                    d->w_fp4.data + n * K / 2, d->w_scale.data + n * nb, K};
            float e;
            a4w4_dot_exact(&op, NULL, &e);
            double dist = fabs((double)a4w4_bf16_to_f32(y[m * N + n]) - e);
            double tol = a4w4_dot_bounded_bound(&op, 4) + 0x1p-24 * fabs(e) + 0x1p-149;
            if (getenv("A4W4_TEST_VERBOSE"))
                fprintf(stderr, "bdrop (%zu,%zu) dist/bound %.3f old %.5f\n", m, n, dist / tol,
                        dist / (old_bounded_tolerance(sum_abs_terms(&op), nb, 4) +
                                0x1p-24 * fabs(e)));
            if ((n / 16) % 2) {
                beyond += dist > tol;
                beyond_old += dist > old_bounded_tolerance(sum_abs_terms(&op), nb, 4) +
                                         0x1p-24 * fabs(e);
            } else
                even_bad += dist > tol;
        }
    cr_expect_eq(even_bad, 0, "even sub-tiles keep every block: within the bound");
    /* a block is a small share of a 512-block sum: it shows where its value is large
     * against the output's own partials (on this seed 10 of the 64) */
    cr_expect_geq(beyond, 4, "the missing block must leave the bound on some odd sub-tile "
                  "output (%zu of %zu)", beyond, M * 16);
    cr_expect_eq(beyond_old, 0, "the old bound let the dropped block through (%zu)", beyond_old);
    gfree(&g);
}

Test(gemm_mutants, tail_unwritten_leaves_the_partial_tile)
{
    gcase g;
    gen(&g, 33, 64, 256, "exact", 9);
    uint16_t y[33 * 64];
    cr_assert_eq(run_gemm(mut("mut-tail-unwritten"), &g, y), A4W4_OK);
    size_t poison = 0;
    for (size_t k = 0; k < 33 * 64; k++)
        poison += y[k] == A4W4_POISON_BF16;
    cr_expect_eq(poison, 64, "row 32 (the partial tile) must stay unwritten: %zu poisoned", poison);
    gfree(&g);
    size_t a, t;
    gemm_diff("mut-tail-unwritten", 64, 64, 256, "exact", 9, 1, 0, 64, &a, &t);
    cr_expect_eq(t, 0, "M=64 (whole tiles) must be right, %zu differ", t);
}

Test(gemm_mutants, read_past_a_nan_on_odd_m_only)
{
    size_t last, t;
    gemm_diff("mut-read-past-a", 33, 64, 256, "exact", 11, 1, 32, 33, &last, &t);
    cr_expect_eq(last, 64, "row M-1 reads row M (guard 0xFF): all of it NaN (%zu differ)", last);
    cr_expect_eq(t, last, "only row M-1 may differ (%zu vs %zu)", t, last);
    gemm_diff("mut-read-past-a", 32, 64, 256, "exact", 11, 1, 0, 32, &last, &t);
    cr_expect_eq(t, 0, "even M must be right, %zu differ", t);
}

Test(gemm_mutants, e8m0_code0_wrong_only_where_code0)
{
    size_t a, t;
    gemm_diff("mut-e8m0-code0", 16, 64, 256, "code0", 7014, 1, 0, 16, &a, &t);
    cr_expect_gt(t, 0, "code0 case: reading 2^-126 must change some output");
    gemm_diff("mut-e8m0-code0", 16, 64, 256, "wide", 7014, 1, 0, 16, &a, &t);
    cr_expect_eq(t, 0, "wide scales (codes >= 1): must be right, %zu differ", t);
}

Test(gemm_mutants, flush_subnormal_wrong_only_in_the_subnormal_range)
{
    size_t a, t;
    gemm_diff("mut-flush-subnormal", 9, 64, 512, "tiny", 7010, 1, 0, 9, &a, &t);
    cr_expect_gt(t, 9 * 64 / 4, "tiny regime: flushing must change many outputs (%zu)", t);
    gemm_diff("mut-flush-subnormal", 9, 64, 512, "wide", 7010, 1, 0, 9, &a, &t);
    cr_expect_eq(t, 0, "wide scales (no subnormal block or total): must be right, %zu differ", t);
}

Test(gemm_mutants, zero_sign_wrong_only_on_the_all_minus_zero_output)
{
    /* tiny and special data: A row M-1 all -0 against W row 0 without negative values is the
     * one output summing only -0 terms; the mutant gives -0 (0x8000) there, +0 is due */
    static const char *const regimes[] = {"tiny", "special"};
    for (int r = 0; r < 2; r++) {
        size_t last, t;
        gemm_diff("mut-zero-sign", 9, 64, 512, regimes[r], 7010, 1, 8, 9, &last, &t);
        cr_expect_eq(last, 1, "%s: output (8, 0) must be -0 (%zu differ in row 8)", regimes[r],
                     last);
        cr_expect_eq(t, 1, "%s: nothing else may differ (%zu)", regimes[r], t);
    }
    size_t a, t;
    gemm_diff("mut-zero-sign", 9, 64, 512, "wide", 7010, 1, 0, 9, &a, &t);
    cr_expect_eq(t, 0, "wide data (no all -0 output): must be right, %zu differ", t);
}

Test(gemm_mutants, bf16_saturate_wrong_exactly_where_ordered_overflows)
{
    /* range data (kind 0 rows 0 and 4: totals at and past bf16's largest finite value): the
     * mutant gives +-0x7F7F where ordered(1) gives +-Inf, and is right everywhere else */
    gcase g;
    gen(&g, 16, 64, 1024, "range", 5001);
    uint16_t *y = malloc(16 * 64 * 2), *o = malloc(16 * 64 * 2);
    cr_assert(y && o);
    cr_assert_eq(run_gemm(mut("mut-bf16-saturate"), &g, y), A4W4_OK);
    oracle(&g, 1, o);
    size_t inf = 0, wrong = 0, other = 0;
    for (size_t k = 0; k < 16 * 64; k++) {
        int is_inf = (o[k] & 0x7FFF) == 0x7F80;
        inf += (size_t)is_inf;
        wrong += is_inf && y[k] == ((o[k] & 0x8000) | 0x7F7F);
        other += !is_inf && !same(y[k], o[k]);
    }
    cr_expect_gt(inf, 50, "range data must hold +-Inf outputs (%zu)", inf);
    cr_expect_eq(wrong, inf, "every Inf must come out +-0x7F7F (%zu of %zu)", wrong, inf);
    cr_expect_eq(other, 0, "finite outputs must be right (%zu differ)", other);
    free(y);
    free(o);
    gfree(&g);
    size_t a, t;
    gemm_diff("mut-bf16-saturate", 16, 64, 1024, "wide", 5001, 1, 0, 16, &a, &t);
    cr_expect_eq(t, 0, "wide data (no overflow): must be right, %zu differ", t);
}

Test(gemm_mutants, scale_f32_first_wrong_on_range_data_right_inside_fp32)
{
    size_t row1, row3, t;
    /* kind 1 (row 1): sa + sb >= 382 in every output (2^127 at 383, zero dots at 384..508):
     * Inf or NaN for a finite total; kind 3 (row 3): the block at sa + sb <= 104 is lost in
     * variants 0, 1, 2, 3 and 7 (0x0000 for 0x0001), right in 4, 5 and 6 */
    gemm_diff("mut-scale-f32-first", 9, 16, 1024, "range", 5001, 1, 1, 2, &row1, &t);
    cr_expect_eq(row1, 15, "row 1 (kind 1) must be wrong but in the NaN column (%zu)", row1);
    gemm_diff("mut-scale-f32-first", 9, 16, 1024, "range", 5001, 1, 3, 4, &row3, &t);
    cr_expect_eq(row3, 9, "row 3 (kind 3): 5 of columns 0-7, 4 of 9-15 (8 is NaN): %zu", row3);
    static const char *const inside[] = {"wide", "tiny", "code0", "special"};
    for (int r = 0; r < 4; r++) {
        gemm_diff("mut-scale-f32-first", 16, 64, 1024, inside[r], 5001, 1, 0, 16, &row1, &t);
        cr_expect_eq(t, 0, "%s (combined scales inside fp32): must be right, %zu differ",
                     inside[r], t);
    }
}

Test(gemm_mutants, bucket_rows64_wrong_from_row_64_only_for_m_in_65_to_128)
{
    size_t hi, t;
    gemm_diff("mut-bucket-rows64", 65, 64, 256, "normal", 21, 1, 64, 65, &hi, &t);
    cr_expect_gt(hi, 32, "M=65: row 64 reads row 0's scales (%zu of 64 differ)", hi);
    cr_expect_eq(t, hi, "rows 0..63 must be right (%zu vs %zu)", t, hi);
    gemm_diff("mut-bucket-rows64", 128, 64, 256, "wide", 21, 1, 64, 128, &hi, &t);
    cr_expect_gt(hi, 64 * 32, "M=128: rows 64..127 wrong (%zu)", hi);
    gemm_diff("mut-bucket-rows64", 64, 64, 256, "normal", 21, 1, 0, 64, &hi, &t);
    cr_expect_eq(t, 0, "M=64 (the bucket below): must be right, %zu differ", t);
    gemm_diff("mut-bucket-rows64", 129, 64, 256, "normal", 21, 1, 0, 129, &hi, &t);
    cr_expect_eq(t, 0, "M=129 (the bucket above): must be right, %zu differ", t);
}

/* The mutant on rows {0, M-1} x columns {0, N-1} of an M x N x 256 case (only those rows are
 * generated): outputs that differ from ordered(1), of 4. */
static size_t persist_diff(size_t M, size_t N)
{
    size_t rows[2] = {0, M - 1}, cols[2] = {0, N - 1};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "persist_%zu_%zu", M, N);
    c.M = M;
    c.N = N;
    c.K = 256;
    c.seed = 31;
    cr_assert_eq(a4w4_regime_parse("normal", &c.regime, &c.mode), 0);
    snprintf(c.regime_text, sizeof c.regime_text, "normal");
    a4w4_sample s = {rows, 2, cols, 2, 0};
    a4w4_case_data d;
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    uint16_t y[4] = {A4W4_POISON_BF16, A4W4_POISON_BF16, A4W4_POISON_BF16, A4W4_POISON_BF16};
    char why[256] = "";
    a4w4_run_args a = {.c = &c, .d = &d, .s = &s, .y = y, .why = why, .whylen = sizeof why};
    cr_assert_eq(mut("mut-persistent-skip")->run(NULL, &a), A4W4_OK, "%s", why);
    size_t diff = 0, nb = c.K / 32;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            a4w4_dot_operands op = {d.a_fp4.data + rows[i] * c.K / 2, d.a_scale.data + rows[i] * nb,
                                    d.w_fp4.data + cols[j] * c.K / 2, d.w_scale.data + cols[j] * nb,
                                    c.K};
            diff += !same(y[i * 2 + j], a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)));
        }
    a4w4_case_data_free(&d);
    return diff;
}

Test(gemm_mutants, persistent_skip_wrong_from_tile_256_on)
{
    /* 17 x 16 tiles of 256x256: row 4096 is in tiles 256..271, row 0 in tiles 0..15 */
    cr_expect_eq(persist_diff(4097, 4096), 2, "M=4097, N=4096: the last row's two outputs");
    /* 16 x 16 = 256 tiles: one round, right everywhere */
    cr_expect_eq(persist_diff(4096, 4096), 0, "M=4096, N=4096 (256 tiles): must be right");
}

/* Pad mutants: right with the default pad 0x7F, wrong once the harness refills the pad rows
 * with the value the mutant is named after, right again on whole tiles. */
static void pad_case(const char *name, uint8_t fill, size_t M, size_t *at_default,
                     size_t *at_fill)
{
    gcase g;
    gen(&g, M, 64, 512, "exact", 13);
    uint16_t *y = malloc(M * 64 * 2), *o = malloc(M * 64 * 2);
    cr_assert(y && o);
    oracle(&g, 1, o);
    cr_assert_eq(run_gemm(mut(name), &g, y), A4W4_OK);
    *at_default = diff_rows(y, o, M, 64, 0, M);
    a4w4_case_refill(&g.d, fill, A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_GUARD_FILL);
    cr_assert_eq(run_gemm(mut(name), &g, y), A4W4_OK);
    *at_fill = diff_rows(y, o, M, 64, 0, M);
    free(y);
    free(o);
    gfree(&g);
}

Test(gemm_mutants, pad_ff_reads_the_row_pad)
{
    size_t d0, d1;
    pad_case("mut-pad-ff", 0xFF, 33, &d0, &d1);
    cr_expect_eq(d0, 0, "pad 0x7F: must be right (%zu differ)", d0);
    cr_expect_eq(d1, 64, "pad 0xFF: row 32 (partial tile) must turn NaN (%zu differ)", d1);
    pad_case("mut-pad-ff", 0x00, 33, &d0, &d1);
    cr_expect_eq(d1, 0, "pad 0x00: must be right (%zu differ)", d1);
    pad_case("mut-pad-ff", 0xFF, 64, &d0, &d1);
    cr_expect_eq(d1, 0, "M=64 has no pad row in a valid tile: must be right (%zu differ)", d1);
}

Test(gemm_mutants, pad_00_reads_the_row_pad)
{
    size_t d0, d1;
    pad_case("mut-pad-00", 0x00, 33, &d0, &d1);
    cr_expect_eq(d0, 0, "pad 0x7F: must be right (%zu differ)", d0);
    cr_expect_eq(d1, 64, "pad 0x00: row 32 must lose its blocks (%zu differ)", d1);
    pad_case("mut-pad-00", 0xFF, 33, &d0, &d1);
    cr_expect_eq(d1, 0, "pad 0xFF: must be right (%zu differ)", d1);
}

Test(gemm_mutants, asm_based_mutants_are_na_without_layouts)
{
    const char *asm_based[] = {"mut-pad-ff", "mut-pad-00", "mut-rows-small-n", "mut-tail-unwritten"};
    gcase g;
    gen(&g, 8, 48, 320, "exact", 1);
    uint16_t y[8 * 48];
    for (size_t i = 0; i < 4; i++) {
        const a4w4_backend_type *t = mut(asm_based[i]);
        cr_expect(t->asm_layout, "%s reads the ASM layouts: the runner must run its pad variants",
                  asm_based[i]);
        cr_expect_eq(run_gemm(t, &g, y), A4W4_EUNSUPPORTED, "%s on N=48 K=320", asm_based[i]);
    }
    gfree(&g);
}

/* ---- quantizer mutants --------------------------------------------------------------------- */

/* bf16 activations: N(0, 1)-like values from a fixed LCG, plus one block of E2M1 ties. */
static void activations(uint16_t *x, size_t n)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) * 0x1p-53;
        x[i] = a4w4_f32_to_bf16((float)((u - 0.5) * 7.0 * (1 + (i / 32) % 5)));
    }
    static const float ties[8] = {4.0f, 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, -2.5f};
    for (size_t k = 0; k < 32; k++)
        x[k] = a4w4_f32_to_bf16(ties[k % 8]);
}

#define QR 4
#define QK 512

/* Quantizer type t in mode vs a4w4_quantize: differing fp4 bytes and scale bytes. */
static void quant_diff(const a4w4_backend_type *t, int mode, size_t *dfp4, size_t *dsc)
{
    static uint16_t x[QR * QK];
    static uint8_t q[QR * QK / 2], s[QR * QK / 32], rq[QR * QK / 2], rs[QR * QK / 32];
    activations(x, QR * QK);
    char why[256] = "";
    cr_assert_eq(t->quantize(NULL, x, QR, QK, mode, q, s, why, sizeof why), A4W4_OK, "%s: %s",
                 t->name, why);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_BF16, QR, QK, (a4w4_scale_mode)mode, 0, rq, rs),
                 A4W4_OK);
    *dfp4 = *dsc = 0;
    for (size_t i = 0; i < sizeof q; i++)
        *dfp4 += q[i] != rq[i];
    for (size_t i = 0; i < sizeof s; i++)
        *dsc += s[i] != rs[i];
}

Test(quant_mutants, wrong_mode_only_in_its_mode)
{
    const char *names[4] = {"mut-mode-round_up", "mut-mode-round_down", "mut-mode-ceil",
                            "mut-mode-even"};
    for (int m = 0; m < 4; m++)
        for (int asked = 0; asked < 4; asked++) {
            size_t df, ds;
            quant_diff(mut(names[m]), asked, &df, &ds);
            if (asked == m)
                cr_expect_gt(ds, 0, "%s asked %s: scales must differ", names[m],
                             a4w4_scale_mode_name((a4w4_scale_mode)asked));
            else
                cr_expect(df == 0 && ds == 0, "%s asked %s: must be right (%zu fp4, %zu scales)",
                          names[m], a4w4_scale_mode_name((a4w4_scale_mode)asked), df, ds);
        }
}

Test(quant_mutants, trunc_and_nibble_swap_wrong_codes_right_scales)
{
    const char *names[2] = {"mut-e2m1-trunc", "mut-nibble-swap"};
    for (int i = 0; i < 2; i++)
        for (int mode = 0; mode < 4; mode++) {
            size_t df, ds;
            quant_diff(mut(names[i]), mode, &df, &ds);
            cr_expect_gt(df, 0, "%s mode %d: codes must differ", names[i], mode);
            cr_expect_eq(ds, 0, "%s mode %d: scales must be right (%zu differ)", names[i], mode,
                         ds);
        }
}

Test(quant_mutants, ref_quant_equals_a4w4_quantize)
{
    for (int mode = 0; mode < 4; mode++) {
        size_t df, ds;
        quant_diff(&a4w4_quantizer_ref, mode, &df, &ds);
        cr_expect(df == 0 && ds == 0, "ref-quant mode %d: %zu fp4, %zu scale bytes differ", mode,
                  df, ds);
    }
}

/* ---- layout mutants ------------------------------------------------------------------------- */

static void layout_diff(const a4w4_backend_type *t, size_t M, size_t N, size_t K, size_t diff[3])
{
    gcase g;
    gen(&g, M, N, K, "wide", 21);
    const a4w4_guarded *ref[3] = {&g.d.w_fp4_shuffled, &g.d.w_scale_swizzled,
                                  &g.d.a_scale_shuffled};
    uint8_t *got[3];
    for (int i = 0; i < 3; i++) {
        cr_assert_not_null(ref[i]->data);
        got[i] = malloc(ref[i]->len);
        cr_assert_not_null(got[i]);
    }
    char why[256] = "";
    cr_assert_eq(t->layouts(NULL, &g.d, got[0], got[1], got[2], why, sizeof why), A4W4_OK,
                 "%s: %s", t->name, why);
    for (int i = 0; i < 3; i++) {
        diff[i] = 0;
        for (size_t k = 0; k < ref[i]->len; k++)
            diff[i] += got[i][k] != ref[i]->data[k];
        free(got[i]);
    }
    gfree(&g);
}

Test(layout_mutants, preshuffle_k1n1_only_the_weight)
{
    size_t d[3];
    layout_diff(mut("mut-preshuffle-k1n1"), 33, 64, 512, d);
    cr_expect_gt(d[0], 64 * 256 / 2, "w_fp4_shuffled must be mostly wrong (%zu)", d[0]);
    cr_expect(d[1] == 0 && d[2] == 0, "scales must be right (%zu, %zu)", d[1], d[2]);
}

Test(layout_mutants, swizzle_d1d4_both_scale_layouts)
{
    size_t d[3];
    layout_diff(mut("mut-swizzle-d1d4"), 33, 64, 512, d);
    cr_expect_eq(d[0], 0, "the weight preshuffle must be right (%zu)", d[0]);
    cr_expect_gt(d[1], 0, "w_scale_swizzled must differ");
    cr_expect_gt(d[2], 0, "a_scale_shuffled must differ");
}

/* Bytes of the activation-scale shuffle that type t gets wrong on (M, 48, K). */
static size_t act_shuffle_diff(const a4w4_backend_type *t, size_t M, size_t K)
{
    gcase g;
    gen(&g, M, 48, K, "exact", 23);
    const a4w4_guarded *ref = &g.d.a_scale_shuffled;
    uint8_t *got = malloc(ref->len), *wsh = NULL;
    cr_assert_not_null(got);
    if (g.d.w_fp4_shuffled.data)
        cr_assert_not_null(wsh = malloc(g.d.w_fp4_shuffled.len));
    char why[256] = "";
    cr_assert_eq(t->layouts(NULL, &g.d, wsh, NULL, got, why, sizeof why), A4W4_OK, "%s", why);
    size_t diff = 0;
    for (size_t k = 0; k < ref->len; k++)
        diff += got[k] != ref->data[k];
    free(got);
    free(wsh);
    gfree(&g);
    return diff;
}

Test(layout_mutants, act_scale_stride_wrong_past_the_first_row_group_when_cols_are_padded)
{
    const a4w4_backend_type *t = mut("mut-act-scale-stride");
    cr_expect_gt(act_shuffle_diff(t, 40, 288), 0, "(K/32) %% 8 = 1, M = 40: group 1 misplaced");
    cr_expect_gt(act_shuffle_diff(t, 200, 1344), 0, "(K/32) %% 8 = 2, M = 200");
    size_t d = act_shuffle_diff(t, 32, 288);
    cr_expect_eq(d, 0, "M = 32 has one row group: must be right (%zu differ)", d);
    d = act_shuffle_diff(t, 200, 512);
    cr_expect_eq(d, 0, "(K/32) %% 8 == 0: nothing padded, must be right (%zu differ)", d);
}

Test(layout_mutants, ref_layout_equals_closed_forms)
{
    size_t d[3];
    layout_diff(&a4w4_layout_ref, 33, 64, 512, d);
    cr_expect(d[0] == 0 && d[1] == 0 && d[2] == 0, "ref-layout: %zu, %zu, %zu bytes differ", d[0],
              d[1], d[2]);
    layout_diff(&a4w4_layout_ref, 300, 96, 768, d);
    cr_expect(d[0] == 0 && d[1] == 0 && d[2] == 0, "ref-layout M=300: %zu, %zu, %zu", d[0], d[1],
              d[2]);
}

/* ---- the table -------------------------------------------------------------------------------- */

Test(table, every_mutant_is_tested_here_and_none_is_a_default_backend)
{
    static const char *const tested[] = {
        "mut-preshuffle-k1n1", "mut-swizzle-d1d4", "mut-pad-ff", "mut-pad-00",
        "mut-nibble-swap", "mut-e8m0-code0", "mut-mode-round_up", "mut-mode-round_down",
        "mut-mode-ceil", "mut-mode-even", "mut-e2m1-trunc", "mut-drop-kblock",
        "mut-rows-small-n", "mut-splitk-bf16", "mut-tail-unwritten", "mut-read-past-a",
        "mut-bounded-drop-block", "mut-flush-subnormal", "mut-zero-sign",
        "mut-act-scale-stride", "mut-bf16-saturate", "mut-scale-f32-first",
        "mut-bucket-rows64", "mut-persistent-skip", "mut-batch-splitk"};
    size_t n, nb;
    const a4w4_backend_type *const *t = a4w4_mutant_types(&n);
    const a4w4_backend_type *const *b = a4w4_backend_types(&nb);
    size_t ncpu = 0;
    for (size_t i = 0; i < n; i++)
        ncpu += !t[i]->gpu;
    /* GPU mutants (mut-hip-*, GPU builds) are tested on a GPU by `selftest --gpu` */
    cr_expect_eq(ncpu, sizeof tested / sizeof tested[0], "a mutant without a unit test here?");
    for (size_t i = 0; i < n; i++) {
        if (t[i]->gpu) {
            cr_expect(t[i]->available != NULL, "GPU mutant %s needs .available", t[i]->name);
            continue;
        }
        int found = 0;
        for (size_t j = 0; j < sizeof tested / sizeof tested[0]; j++)
            found |= !strcmp(t[i]->name, tested[j]);
        cr_expect(found, "mutant %s has no unit test in test_mutants.c", t[i]->name);
        cr_expect(!!t[i]->run + !!t[i]->quantize + !!t[i]->layouts == 1,
                  "%s must be exactly one kind (run, quantize or layouts)", t[i]->name);
        for (size_t j = 0; j < nb; j++)
            cr_expect(strcmp(b[j]->name, t[i]->name) && b[j] != t[i],
                      "mutant %s is in the default backend table", t[i]->name);
    }
    a4w4_backend bk;
    char err[256];
    cr_expect_neq(a4w4_backend_open("mut-pad-ff", &bk, err, sizeof err), 0,
                  "run --backend must not find mutants");
    cr_assert_eq(a4w4_backend_open_type(mut("mut-splitk-bf16"), NULL, &bk, err, sizeof err), 0, "%s",
                 err);
    cr_expect_str_eq(bk.contract, "ordered(2)");
    cr_expect_eq(bk.split, 2);
    a4w4_backend_close(&bk);
}

/* ---- fingerprint ---------------------------------------------------------------------------- */

static a4w4_fingerprint fingerprint(const a4w4_backend_type *t, int mode)
{
    a4w4_backend b;
    char err[256];
    cr_assert_eq(a4w4_backend_open_type(t, NULL, &b, err, sizeof err), 0, "%s", err);
    a4w4_fingerprint fp;
    cr_assert_eq(a4w4_fingerprint_quantizer(&b, mode, &fp, err, sizeof err), A4W4_OK, "%s", err);
    a4w4_backend_close(&b);
    return fp;
}

Test(fingerprint, ref_in_each_mode_names_that_mode)
{
    for (int m = 0; m < 4; m++) {
        a4w4_fingerprint fp = fingerprint(&a4w4_quantizer_ref, m);
        cr_expect_eq(fp.mode, m, "asked %s: %s", a4w4_scale_mode_name((a4w4_scale_mode)m),
                     fp.summary);
        cr_expect_eq(fp.rounding, A4W4_E2M1_RNE, "%s", fp.summary);
        cr_expect(a4w4_fingerprint_conforms(&fp), "%s", fp.summary);
        char want[64];
        snprintf(want, sizeof want, "%s + RNE", a4w4_scale_mode_name((a4w4_scale_mode)m));
        cr_expect_str_eq(fp.summary, want);
        /* every other mode disagrees on at least one probe: the probes separate them */
        for (int o = 0; o < 4; o++)
            if (o != m)
                cr_expect_lt(fp.scale_match[o], fp.nscale, "probes do not separate %s from %s",
                             a4w4_scale_mode_name((a4w4_scale_mode)m),
                             a4w4_scale_mode_name((a4w4_scale_mode)o));
    }
}

Test(fingerprint, mutants_are_named_for_what_they_do)
{
    static const struct {
        const char *name;
        int asked, mode, rounding, swapped;
    } want[] = {
        {"mut-mode-round_up", A4W4_ROUND_UP, A4W4_CEIL, A4W4_E2M1_RNE, 0},
        {"mut-mode-round_down", A4W4_ROUND_DOWN, A4W4_ROUND_UP, A4W4_E2M1_RNE, 0},
        {"mut-mode-ceil", A4W4_CEIL, A4W4_ROUND_DOWN, A4W4_E2M1_RNE, 0},
        {"mut-mode-even", A4W4_EVEN, A4W4_ROUND_DOWN, A4W4_E2M1_RNE, 0},
        {"mut-e2m1-trunc", A4W4_EVEN, A4W4_EVEN, A4W4_E2M1_TRUNC, 0},
        {"mut-nibble-swap", A4W4_CEIL, A4W4_CEIL, A4W4_E2M1_RNE, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        a4w4_fingerprint fp = fingerprint(mut(want[i].name), want[i].asked);
        cr_expect_eq(fp.mode, want[i].mode, "%s: %s", want[i].name, fp.summary);
        cr_expect_eq(fp.rounding, want[i].rounding, "%s: %s", want[i].name, fp.summary);
        cr_expect_eq(fp.nibbles_swapped, want[i].swapped, "%s: %s", want[i].name, fp.summary);
        cr_expect(!a4w4_fingerprint_conforms(&fp), "%s must not conform", want[i].name);
    }
    a4w4_fingerprint fp = fingerprint(mut("mut-e2m1-trunc"), A4W4_ROUND_UP);
    cr_expect_str_eq(fp.summary, "round_up + truncation");
}

/* Test-local quantizers: round-half-away elements; a constant scale (no mode at all). */
static int q_half_away(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode,
                       uint8_t *fp4, uint8_t *scale, char *why, size_t whylen)
{
    (void)ctx;
    (void)why;
    (void)whylen;
    static const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (size_t r = 0; r < rows; r++)
        for (size_t b = 0; b < K / 32; b++) {
            float amax = 0;
            for (size_t k = 0; k < 32; k++)
                amax = fmaxf(amax, fabsf(a4w4_bf16_to_f32(x[r * K + b * 32 + k])));
            uint8_t s = a4w4_scale_code(amax, (a4w4_scale_mode)mode);
            scale[r * (K / 32) + b] = s;
            for (size_t k = 0; k < 32; k++) {
                float q = a4w4_bf16_to_f32(x[r * K + b * 32 + k]) / a4w4_e8m0_to_f32(s);
                uint8_t c = 0;
                for (uint8_t i = 1; i < 8; i++)
                    if (fabsf(q) >= (grid[i - 1] + grid[i]) / 2)
                        c = i;
                a4w4_fp4_set(fp4 + r * (K / 2) + b * 16, k, (uint8_t)(c | (signbit(q) ? 8 : 0)));
            }
        }
    return A4W4_OK;
}

static int q_const_scale(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode,
                         uint8_t *fp4, uint8_t *scale, char *why, size_t whylen)
{
    int rc = a4w4_quantizer_ref.quantize(ctx, x, rows, K, mode, fp4, scale, why, whylen);
    for (size_t i = 0; i < rows * K / 32; i++)
        scale[i] = 127;
    return rc;
}

Test(fingerprint, half_away_and_no_mode_are_named)
{
    const a4w4_backend_type ha = {.name = "t-half-away", .contract = "bytes",
                                  .quantize = q_half_away};
    const a4w4_backend_type cs = {.name = "t-const", .contract = "bytes",
                                  .quantize = q_const_scale};
    a4w4_fingerprint fp = fingerprint(&ha, A4W4_ROUND_DOWN);
    cr_expect_str_eq(fp.summary, "round_down + round-half-away");
    fp = fingerprint(&cs, A4W4_ROUND_UP);
    cr_expect_eq(fp.mode, -1, "%s", fp.summary);
    cr_expect(!strncmp(fp.summary, "no single mode matches: ", 24), "%s", fp.summary);
}

Test(fingerprint, quantizer_lookup)
{
    char names[512];
    cr_expect_eq(a4w4_quantizer_find("ref", names, sizeof names), &a4w4_quantizer_ref);
    cr_expect_eq(a4w4_quantizer_find("ref-quant", names, sizeof names), &a4w4_quantizer_ref);
    cr_expect_eq(a4w4_quantizer_find("mut-e2m1-trunc", names, sizeof names),
                 mut("mut-e2m1-trunc"));
    cr_expect_null(a4w4_quantizer_find("cpu-asm", names, sizeof names));
    cr_expect_null(a4w4_quantizer_find("mut-pad-ff", names, sizeof names));
    cr_expect(strstr(names, "mut-mode-even") != NULL, "names: %s", names);
}

/* mut-batch-splitk declares ordered(1) and switches to two splits past M = 64: batch-invariant
 * up to M 64, variant at M 65 (rows alone differ from the batch), where its contract predicts
 * invariant; the correct row-major system (the same base, ordered(1) at every M) stays
 * invariant at both, as predicted; a repeat changes nothing for either. */
Test(mutants, batch_splitk_is_variant_past_m64_and_the_control_invariant)
{
    char err[512];
    a4w4_backend mb, cb;
    cr_assert_eq(a4w4_backend_open_type(mut("mut-batch-splitk"), NULL, &mb, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(a4w4_backend_open("cpu-fallback", &cb, err, sizeof err), 0, "%s", err);
    a4w4_inv_measured m;
    cr_assert_eq(a4w4_inv_measure(&mb, 64, 32, 1024, 5, &m, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(m.verdict, A4W4_MEAS_INVARIANT);
    cr_assert(m.agrees);
    cr_assert_eq(a4w4_inv_measure(&mb, 65, 32, 1024, 5, &m, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(m.verdict, A4W4_MEAS_VARIANT);
    cr_assert_eq(m.repeat_diffs, 0);
    cr_assert_eq(m.npositions, 3);
    cr_assert_gt(m.rows, 0);
    cr_assert_eq(m.prediction, A4W4_INV_INVARIANT);
    cr_assert(!m.agrees);
    cr_assert_eq(a4w4_inv_measure(&cb, 65, 32, 1024, 5, &m, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(m.verdict, A4W4_MEAS_INVARIANT);
    cr_assert_eq(m.outputs, (3 + 65) * 32);
    cr_assert(m.agrees);
    a4w4_backend_close(&mb);
    a4w4_backend_close(&cb);
}
