/* test_sample_oracles.c — the runner's oracles over a sample (harness/engine/sample_oracles.h,
 * contracts §4.1): the fast whole-matrix oracles on the gathered sub-problem give, at every
 * sampled output, the plain per-output oracles' bits (atomic(3)'s split values included), and
 * the exact-regime count equals the count of outputs a4w4_exact_regime() proves, on every
 * generated regime and on crafted operands that straddle each of the prover's limits. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_atomic.h"
#include "a4w4_gemm.h"
#include "gen.h"
#include "sample_oracles.h"
#include "test_util.h"

static a4w4_dot_operands op_at(const a4w4_case_data *d, size_t m, size_t n)
{
    size_t nb = d->K / 32;
    a4w4_dot_operands op = {d->a_fp4.data + m * (d->K / 2), d->a_scale.data + m * nb,
                            d->w_fp4.data + n * (d->K / 2), d->w_scale.data + n * nb, d->K};
    return op;
}

/* Every oracle value of o (and ordered(S) for S in 2..4) against the plain per-output
 * oracles at the sample's outputs; returns how many outputs the prover holds for. */
static size_t expect_plain(const a4w4_case_data *d, const a4w4_sample *s, a4w4_oracles *o,
                           const char *what)
{
    size_t proven = 0;
    const uint16_t *split[5] = {NULL, NULL, a4w4_oracles_ordered(o, 2),
                                a4w4_oracles_ordered(o, 3), a4w4_oracles_ordered(o, 4)};
    const double *T = a4w4_oracles_sum_abs(o);
    cr_assert(split[2] && split[3] && split[4] && T);
    unsigned na = 0;
    const uint16_t *ain = NULL, *aq = a4w4_oracles_atomic(o, 3, &na, &ain);
    cr_assert(aq && ain);
    cr_assert_eq(na, a4w4_split_count(d->K, 3));
    cr_assert_eq(a4w4_oracles_ordered(o, 1), o->ordered1);
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            size_t m = s->full ? i : s->rows[i], n = s->full ? j : s->cols[j];
            size_t k = i * s->ncols + j;
            a4w4_dot_operands op = op_at(d, m, n);
            uint16_t eb;
            float ef;
            a4w4_dot_exact(&op, &eb, &ef);
            cr_assert_eq(o->exact[k], eb, "%s: exact (%zu, %zu)", what, m, n);
            cr_assert_eq(a4w4_f32_bits(o->exact_f32[k]), a4w4_f32_bits(ef), "%s: exact fp32",
                         what);
            cr_assert_eq(o->ordered1[k], a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)),
                         "%s: ordered(1) (%zu, %zu)", what, m, n);
            for (unsigned S = 2; S <= 4; S++)
                cr_assert_eq(split[S][k], a4w4_f32_to_bf16(a4w4_dot_ordered(&op, S)),
                             "%s: ordered(%u)", what, S);
            uint16_t q[A4W4_ATOMIC_SPLIT_MAX] = {0};
            cr_assert_eq(a4w4_dot_atomic_splits(&op, 3, q), na);
            cr_assert(!memcmp(q, aq + k * 3, 3 * sizeof *q), "%s: atomic(3) split values "
                      "(%zu, %zu)", what, m, n);
            cr_assert_eq(ain[k], a4w4_atomic_fold(q, NULL, na), "%s: atomic(3) in order", what);
            proven += (size_t)a4w4_exact_regime(&op);
        }
    return proven;
}

static void check_case(const a4w4_case *c, int force_full)
{
    a4w4_sample s;
    a4w4_case_data d;
    a4w4_oracles o;
    cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, force_full, &s), 0);
    cr_assert_eq(a4w4_case_generate(c, &s, &d), 0);
    cr_assert_eq(a4w4_oracles_compute(&d, &s, &o), 0);
    cr_assert_eq(o.count, s.nrows * s.ncols);
    size_t proven = expect_plain(&d, &s, &o, c->name);
    cr_expect_eq(o.proven, proven, "%s: proven %zu, the per-output prover %zu", c->name,
                 o.proven, proven);
    a4w4_oracles_free(&o);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}

Test(sample_oracles, every_generated_regime_matches_the_plain_oracles_in_full)
{
    static const struct {
        a4w4_regime r;
        a4w4_scale_mode mode;
    } regimes[] = {{A4W4_REGIME_EXACT, A4W4_ROUND_UP},     {A4W4_REGIME_NORMAL, A4W4_ROUND_UP},
                   {A4W4_REGIME_NORMAL, A4W4_ROUND_DOWN},
                   {A4W4_REGIME_WIDE, A4W4_ROUND_UP},     {A4W4_REGIME_SPECIAL, A4W4_ROUND_UP},
                   {A4W4_REGIME_CODE0, A4W4_ROUND_UP},    {A4W4_REGIME_TINY, A4W4_ROUND_UP},
                   {A4W4_REGIME_RANGE, A4W4_ROUND_UP}};
    static const size_t shapes[][3] = {{1, 1, 32}, {5, 37, 256}, {33, 16, 512}, {17, 65, 1024}};
    for (size_t r = 0; r < sizeof regimes / sizeof *regimes; r++)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            char name[64];
            snprintf(name, sizeof name, "so_r%zu_s%zu", r, i);
            a4w4_case c = tu_case(name, shapes[i][0], shapes[i][1], shapes[i][2], regimes[r].r,
                             regimes[r].mode, 100 + r * 10 + i);
            check_case(&c, 1);
        }
}

Test(sample_oracles, a_sampled_case_gathers_its_rows_and_columns)
{
    /* above the full-check threshold: the sample is a subset, the sub-problem a gather */
    static const a4w4_regime rs[] = {A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE, A4W4_REGIME_SPECIAL,
                                     A4W4_REGIME_EXACT, A4W4_REGIME_RANGE};
    for (size_t i = 0; i < sizeof rs / sizeof *rs; i++) {
        char name[64];
        snprintf(name, sizeof name, "so_sampled_%zu", i);
        a4w4_case c = tu_case(name, 300, 1100, 512, rs[i], A4W4_ROUND_UP, 7 + i);
        a4w4_sample s;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 0, &s), 0);
        cr_assert(!s.full, "expected a sampled case");
        a4w4_sample_free(&s);
        check_case(&c, 0);
    }
}

/* ---- crafted operands at the prover's limits ------------------------------------------- */

static tu_rng g_rng = {0x5A3D1E0F2B4C6A87ull};

static unsigned below(unsigned n) { return tu_splitmix64_below(&g_rng, n); }

/* One row of codes and scales: scales base + [0, spread], codes nonzero with probability
 * dens/8 (random magnitude and sign), now and then a NaN scale or an all-zero block. */
static void craft_row(uint8_t *fp4, uint8_t *sc, size_t K, unsigned base, unsigned spread,
                      unsigned dens)
{
    size_t nb = K / 32;
    for (size_t b = 0; b < nb; b++) {
        unsigned s = base + below(spread + 1);
        sc[b] = (uint8_t)(s > 254 ? 254 : s);
        if (below(400) == 0)
            sc[b] = 0xFF;
    }
    for (size_t k = 0; k < K; k++) {
        uint8_t code = below(8) < dens ? (uint8_t)(1 + below(7)) | (uint8_t)(below(2) << 3) : 0;
        if (below(5) == 0)
            code = (uint8_t)(below(2) << 3); /* +0 or -0 */
        a4w4_fp4_set(fp4, k, code);
    }
}

/* Bases near the prover's limits: quantum 2^-149 (sa + sb = 107), 2^24 quanta at 2^128
 * (sa + sb = 360), overflow of a dequantized element (scale 253, 254), and the middle. */
static unsigned craft_base(void)
{
    static const unsigned bases[] = {0, 40, 50, 57, 60, 100, 120, 127, 170, 180, 185, 230, 250};
    return bases[below(sizeof bases / sizeof *bases)];
}

static void craft_operand(uint8_t *fp4, uint8_t *sc, size_t rows, size_t K)
{
    static const unsigned spreads[] = {0, 3, 8, 14, 20, 23, 24, 30, 60};
    for (size_t r = 0; r < rows; r++)
        craft_row(fp4 + r * (K / 2), sc + r * (K / 32), K, craft_base(),
                  spreads[below(sizeof spreads / sizeof *spreads)], 1 + below(8));
}

Test(sample_oracles, the_exact_regime_count_holds_at_every_limit_of_the_prover)
{
    static const size_t shapes[][3] = {{24, 40, 64}, {16, 48, 512}, {7, 33, 2048}, {40, 9, 4096}};
    size_t total = 0, total_proven = 0;
    for (int round = 0; round < 6; round++)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            size_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
            uint8_t *a = calloc(M, K / 2), *as = calloc(M, K / 32), *w = calloc(N, K / 2),
                    *ws = calloc(N, K / 32);
            cr_assert(a && as && w && ws);
            craft_operand(a, as, M, K);
            craft_operand(w, ws, N, K);
            a4w4_case_data d;
            cr_assert_eq(a4w4_case_data_load(a, as, w, ws, M, N, K, &d), 0);
            a4w4_sample s = {.full = 1, .nrows = M, .ncols = N};
            a4w4_oracles o;
            cr_assert_eq(a4w4_oracles_compute(&d, &s, &o), 0);
            char what[64];
            snprintf(what, sizeof what, "crafted round %d shape %zu", round, i);
            size_t proven = expect_plain(&d, &s, &o, what);
            cr_expect_eq(o.proven, proven, "%s: proven %zu, the per-output prover %zu", what,
                         o.proven, proven);
            total += o.count;
            total_proven += proven;
            a4w4_oracles_free(&o);
            a4w4_case_data_free(&d);
            free(a);
            free(as);
            free(w);
            free(ws);
        }
    /* the crafted data is on both sides of the prover, not all one way */
    cr_expect_gt(total_proven, total / 10, "%zu of %zu proven", total_proven, total);
    cr_expect_lt(total_proven, total - total / 10, "%zu of %zu proven", total_proven, total);
}

/* ---- single outputs on each side of each limit ----------------------------------------- */

#define LK 768 /* 24 blocks */

/* Element 0 of block b holds 1.0 (doubled: 2) with scale s. */
static void one_at(uint8_t *fp4, uint8_t *sc, size_t b, size_t elem, unsigned s)
{
    a4w4_fp4_set(fp4, b * 32 + elem, 2);
    sc[b] = (uint8_t)s;
}

/* The count of the 1 x 1 sub-problem (row a of A, row w of W), held to the per-output prover. */
static size_t count_one(const uint8_t *a, const uint8_t *as, const uint8_t *w, const uint8_t *ws)
{
    a4w4_sub_problem p = {a, as, w, ws, 1, 1, LK, NULL};
    a4w4_dot_operands op = {a, as, w, ws, LK};
    size_t n;
    cr_assert_eq(a4w4_exact_regime_count(&p, &n), 0);
    cr_assert_eq(n, (size_t)a4w4_exact_regime(&op));
    return n;
}

Test(sample_oracles, units_of_exactly_2_to_the_24_are_outside_and_one_quantum_less_inside)
{
    /* blocks 0..22 with term 4 quanta at shifts 0, 0, 1, ..., 21: 4 (1 + 1 + 2 + ... + 2^21)
     * = 2^24 quanta; without block 0, 2^24 - 4 */
    uint8_t a[4][LK / 2] = {{0}}, as[4][LK / 32], w[LK / 2] = {0}, ws[LK / 32];
    memset(as, 100, sizeof as);
    memset(ws, 127, sizeof ws);
    for (size_t b = 0; b < 23; b++) {
        unsigned shift = b == 0 ? 0 : (unsigned)b - 1;
        for (int r = 0; r < 4; r++)
            if (b || r % 2 == 0)
                one_at(a[r], as[r], b, 0, 100 + shift);
        one_at(w, ws, b, 0, 127);
    }
    /* rows 2 and 3: a nonzero element of A in block 23 at a lower scale where W has none, so
     * the row bounds alone cannot decide and emin comes from the block masks */
    one_at(a[2], as[2], 23, 5, 95);
    one_at(a[3], as[3], 23, 5, 95);
    cr_expect_eq(count_one(a[0], as[0], w, ws), 0, "2^24 quanta");
    cr_expect_eq(count_one(a[1], as[1], w, ws), 1, "2^24 - 4 quanta");
    cr_expect_eq(count_one(a[2], as[2], w, ws), 0, "2^24 quanta, emin from the masks");
    cr_expect_eq(count_one(a[3], as[3], w, ws), 1, "2^24 - 4 quanta, emin from the masks");
}

Test(sample_oracles, the_quantum_range_limits_and_zero_rows)
{
    uint8_t a[LK / 2] = {0}, as[LK / 32], w[3][LK / 2] = {{0}}, ws[3][LK / 32], z[LK / 2] = {0};
    memset(as, 181, sizeof as);
    memset(ws, 1, sizeof ws);
    one_at(a, as, 0, 0, 181);
    one_at(w[0], ws[0], 0, 0, 180); /* sa + sb = 361: 2^24 quanta reach 2^129 */
    one_at(w[1], ws[1], 0, 0, 179); /* 360: 2^24 quanta at 2^128 exactly */
    cr_expect_eq(count_one(a, as, w[0], ws[0]), 0, "emin 361");
    cr_expect_eq(count_one(a, as, w[1], ws[1]), 1, "emin 360");
    uint8_t bs[LK / 32];
    memset(bs, 53, sizeof bs);
    one_at(w[2], bs, 0, 0, 53); /* 181 + 53 = 234 */
    memset(as, 54, sizeof as);  /* 54 + 53 = 107: quantum 2^-149 */
    cr_expect_eq(count_one(a, as, w[2], bs), 1, "emin 107");
    memset(as, 53, sizeof as); /* 106: quantum 2^-150 */
    cr_expect_eq(count_one(a, as, w[2], bs), 0, "emin 106");
    /* a row of zero codes: every term is zero whatever the scales */
    cr_expect_eq(count_one(z, as, w[2], bs), 1, "zero row of A");
    cr_expect_eq(count_one(a, as, z, bs), 1, "zero row of W");
}

/* contracts §1: the oracles under the other reading of E8M0 code 0 (2^-126) are the plain
 * oracles of the operands with every scale byte 0x00 set to 0x01, at every sampled output, for
 * a sampled and a full sample; and they differ from the 2^-127 reading's somewhere (the code0
 * regime puts code 0 where it changes outputs), so the comparison sees the reading. */
Test(sample_oracles, the_code0_alternative_is_the_plain_oracles_of_code_0_read_as_2_to_the_126)
{
    for (int full = 0; full <= 1; full++) {
        a4w4_case c = tu_case(full ? "so_code0_full" : "so_code0", full ? 40 : 300,
                              full ? 70 : 1100, 512, A4W4_REGIME_CODE0, A4W4_ROUND_UP, 91);
        a4w4_sample s;
        a4w4_case_data d, ad;
        a4w4_oracles o, alt;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, full, &s), 0);
        cr_assert_eq(s.full, full);
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        cr_assert(d.code0, "the code0 regime holds E8M0 code 0");
        size_t na = c.M * (c.K / 32), nw = c.N * (c.K / 32);
        uint8_t *as = malloc(na), *ws = malloc(nw);
        cr_assert(as && ws);
        for (size_t i = 0; i < na; i++)
            as[i] = d.a_scale.data[i] ? d.a_scale.data[i] : 0x01;
        for (size_t i = 0; i < nw; i++)
            ws[i] = d.w_scale.data[i] ? d.w_scale.data[i] : 0x01;
        cr_assert_eq(a4w4_case_data_load(d.a_fp4.data, as, d.w_fp4.data, ws, c.M, c.N, c.K, &ad),
                     0);
        cr_assert_eq(a4w4_oracles_compute(&d, &s, &o), 0);
        cr_assert_eq(a4w4_oracles_compute_code0_alt(&d, &s, &alt), 0);
        cr_assert_eq(alt.count, s.nrows * s.ncols);
        size_t proven = expect_plain(&ad, &s, &alt, c.name);
        cr_expect_eq(alt.proven, proven, "%s: proven %zu, the per-output prover %zu", c.name,
                     alt.proven, proven);
        size_t differ = 0;
        for (size_t k = 0; k < o.count; k++)
            differ += o.exact[k] != alt.exact[k];
        cr_expect_gt(differ, 0, "%s: the two readings give the same outputs", c.name);
        cr_expect_eq(d.a_scale.data[c.seed % (c.K / 32)], 0, "the case's own scales untouched");
        a4w4_oracles_free(&alt);
        a4w4_oracles_free(&o);
        free(as);
        free(ws);
        a4w4_case_data_free(&ad);
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
}
