/* test_gen.c — case generation: determinism, per-row independence, regime properties, and
 * the tile-aware sample (harness/gen/gen.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "gen.h"
#include "test_util.h"

static void full_sample(const a4w4_case *c, a4w4_sample *s)
{
    cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 1, s), 0);
}

Test(gen, same_seed_and_name_give_the_same_bytes)
{
    a4w4_case c = tu_case("det", 5, 64, 512, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 42);
    a4w4_sample s;
    full_sample(&c, &s);
    a4w4_case_data d1, d2;
    cr_assert_eq(a4w4_case_generate(&c, &s, &d1), 0);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d2), 0);
    cr_expect_eq(memcmp(d1.a_fp4.data, d2.a_fp4.data, d1.a_fp4.len), 0);
    cr_expect_eq(memcmp(d1.w_scale.data, d2.w_scale.data, d1.w_scale.len), 0);
    /* another seed or another name changes the data */
    a4w4_case c2 = tu_case("det", 5, 64, 512, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 43), c3 = tu_case("det2", 5, 64, 512, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 42);
    a4w4_case_data d3, d4;
    cr_assert_eq(a4w4_case_generate(&c2, &s, &d3), 0);
    cr_assert_eq(a4w4_case_generate(&c3, &s, &d4), 0);
    cr_expect_neq(memcmp(d1.w_fp4.data, d3.w_fp4.data, d1.w_fp4.len), 0);
    cr_expect_neq(memcmp(d1.w_fp4.data, d4.w_fp4.data, d1.w_fp4.len), 0);
    a4w4_case_data_free(&d1);
    a4w4_case_data_free(&d2);
    a4w4_case_data_free(&d3);
    a4w4_case_data_free(&d4);
    a4w4_sample_free(&s);
}

Test(gen, a_row_does_not_depend_on_which_rows_are_generated)
{
    /* M*N*K above the full-check threshold: the sample generates only some rows, and those
     * must equal the same rows of a full generation */
    a4w4_case c = tu_case("rows", 300, 1024, 512, A4W4_REGIME_NORMAL, A4W4_ROUND_UP, 9);
    a4w4_sample sf, ss;
    full_sample(&c, &sf);
    cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 0, &ss), 0);
    cr_assert(!ss.full, "expected a sampled case");
    a4w4_case_data df, ds;
    cr_assert_eq(a4w4_case_generate(&c, &sf, &df), 0);
    cr_assert_eq(a4w4_case_generate(&c, &ss, &ds), 0);
    for (size_t i = 0; i < ss.nrows; i++) {
        size_t m = ss.rows[i];
        cr_expect_eq(memcmp(df.a_fp4.data + m * 256, ds.a_fp4.data + m * 256, 256), 0, "row %zu", m);
        cr_expect_eq(memcmp(df.a_scale.data + m * 16, ds.a_scale.data + m * 16, 16), 0, "row %zu", m);
    }
    for (size_t j = 0; j < ss.ncols; j++) {
        size_t n = ss.cols[j];
        cr_expect_eq(memcmp(df.w_fp4.data + n * 256, ds.w_fp4.data + n * 256, 256), 0, "col %zu", n);
        /* the preshuffled bytes of a sampled row sit where the closed form puts them */
        for (size_t kb = 0; kb < 256; kb += 37)
            cr_expect_eq(ds.w_fp4_shuffled.data[a4w4_preshuffle_index(c.N, c.K, n, kb)],
                         df.w_fp4.data[n * 256 + kb]);
    }
    a4w4_case_data_free(&df);
    a4w4_case_data_free(&ds);
    a4w4_sample_free(&sf);
    a4w4_sample_free(&ss);
}

Test(gen, exact_regime_is_proven_for_every_output)
{
    size_t Ks[] = {32, 512, 16384, 49920};
    for (size_t t = 0; t < 4; t++) {
        a4w4_case c = tu_case("ex", 3, 32, Ks[t], A4W4_REGIME_EXACT, A4W4_ROUND_UP, 5 + t);
        a4w4_sample s;
        full_sample(&c, &s);
        a4w4_case_data d;
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        size_t nb = c.K / 32;
        for (size_t m = 0; m < c.M; m++)
            for (size_t n = 0; n < c.N; n++) {
                a4w4_dot_operands op = {d.a_fp4.data + m * c.K / 2, d.a_scale.data + m * nb,
                                        d.w_fp4.data + n * c.K / 2, d.w_scale.data + n * nb, c.K};
                cr_expect(a4w4_exact_regime(&op), "K=%zu output (%zu,%zu) not proven", c.K, m, n);
            }
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
}

Test(gen, normal_regime_activations_are_valid_quantizations)
{
    /* every A block's scale is what the mode computes from the dequantized block's amax range:
     * round_up keeps |x| / 2^(s-127) <= 6, so some code in each nonzero block is >= 4 (|v|>=2)
     * or the block saturates; and no scale is 0xFF */
    a4w4_case c = tu_case("nq", 4, 32, 1024, A4W4_REGIME_NORMAL, A4W4_ROUND_UP, 77);
    a4w4_sample s;
    full_sample(&c, &s);
    a4w4_case_data d;
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
    for (size_t b = 0; b < c.M * c.K / 32; b++) {
        cr_expect_neq(d.a_scale.data[b], 0xFF);
        int maxmag = 0;
        for (size_t k = 0; k < 32; k++) {
            int v = abs(a4w4_e2m1_to_int2x(a4w4_fp4_get(d.a_fp4.data + b * 16, k)));
            maxmag = v > maxmag ? v : maxmag;
        }
        /* round_up: amax/2^(s-127) in (3, 6] -> the largest code is 3, 4 or 6 (2x: 6, 8, 12) */
        cr_expect_geq(maxmag, 6, "block %zu largest |2v| %d", b, maxmag);
    }
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}

Test(gen, wide_code0_and_special_regimes_have_their_properties)
{
    a4w4_sample s;
    a4w4_case_data d;
    a4w4_case w = tu_case("wide", 8, 64, 2048, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 3);
    full_sample(&w, &s);
    cr_assert_eq(a4w4_case_generate(&w, &s, &d), 0);
    unsigned lo = 255, hi = 0;
    for (size_t i = 0; i < d.w_scale.len; i++) {
        lo = d.w_scale.data[i] < lo ? d.w_scale.data[i] : lo;
        hi = d.w_scale.data[i] > hi ? d.w_scale.data[i] : hi;
    }
    cr_expect_eq(lo, 1);
    cr_expect_eq(hi, 254);
    cr_expect_eq(d.code0, 0);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);

    a4w4_case z = tu_case("code0", 8, 64, 2048, A4W4_REGIME_CODE0, A4W4_ROUND_UP, 3);
    full_sample(&z, &s);
    cr_assert_eq(a4w4_case_generate(&z, &s, &d), 0);
    cr_expect_eq(d.code0, 1);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);

    a4w4_case sp = tu_case("special", 6, 32, 512, A4W4_REGIME_SPECIAL, A4W4_ROUND_UP, 3);
    full_sample(&sp, &s);
    cr_assert_eq(a4w4_case_generate(&sp, &s, &d), 0);
    cr_expect_eq(d.nan_a_row, 3);
    cr_expect_eq(d.nan_w_row, 5);
    size_t nb = 16;
    int nan_a = 0, nan_w = 0;
    for (size_t b = 0; b < nb; b++) {
        nan_a += d.a_scale.data[3 * nb + b] == 0xFF;
        nan_w += d.w_scale.data[5 * nb + b] == 0xFF;
    }
    cr_expect_eq(nan_a, 1);
    cr_expect_eq(nan_w, 1);
    for (int i = 0; i < 16; i++) {
        cr_expect_eq(d.a_fp4.data[i], 0x00);                       /* all +0 block */
        cr_expect_eq(d.a_fp4.data[5 * 256 + 15 * 16 + i], 0x88);   /* all -0, last row/block */
    }
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}

Test(gen, guard_zones_hold_the_nan_scale_and_detect_writes)
{
    a4w4_case c = tu_case("g", 2, 32, 256, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 1);
    a4w4_sample s;
    full_sample(&c, &s);
    a4w4_case_data d;
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
    const char *which = NULL;
    cr_expect(a4w4_case_guards_intact(&d, &which));
    cr_expect_eq(d.a_scale.data[d.a_scale.len], 0xFF);
    cr_expect_eq(d.a_scale.data[-1], 0xFF);
    d.w_scale_swizzled.data[d.w_scale_swizzled.len + 100] = 0;
    cr_expect(!a4w4_case_guards_intact(&d, &which));
    cr_expect_str_eq(which, "w_scale_swizzled");
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}

Test(sample, covers_tile_boundaries_first_last_and_is_deterministic)
{
    a4w4_sample s, t;
    cr_assert_eq(a4w4_sample_make(300, 5120, 5120, 11, "smp", 0, &s), 0);
    cr_assert_eq(a4w4_sample_make(300, 5120, 5120, 11, "smp", 0, &t), 0);
    cr_assert(!s.full);
    cr_expect_eq(s.nrows, t.nrows);
    cr_expect_eq(memcmp(s.cols, t.cols, s.ncols * sizeof *s.cols), 0);
    /* rows: M = 300 has 18 multiples of 16: every one, +-1 */
    int has[300] = {0};
    for (size_t i = 0; i < s.nrows; i++)
        has[s.rows[i]] = 1;
    cr_expect(has[0] && has[299]);
    for (size_t m = 16; m < 300; m += 16)
        cr_expect(has[m - 1] && has[m], "row boundary %zu", m);
    for (size_t i = 1; i < s.nrows; i++)
        cr_expect_lt(s.rows[i - 1], s.rows[i]);
    /* columns: N = 5120 has 19 multiples of 256: every one, +-1 */
    int *hc = calloc(5120, sizeof *hc);
    for (size_t j = 0; j < s.ncols; j++)
        hc[s.cols[j]] = 1;
    for (size_t n = 256; n < 5120; n += 256)
        cr_expect(hc[n - 1] && hc[n], "col boundary %zu", n);
    cr_expect(hc[0] && hc[5119]);
    free(hc);
    a4w4_sample_free(&s);
    a4w4_sample_free(&t);
    /* small cases are full */
    cr_assert_eq(a4w4_sample_make(16, 1024, 4096, 1, "x", 0, &s), 0);
    cr_expect(s.full);
    a4w4_sample_free(&s);
}

Test(gen, refill_equals_a_whole_shuffle_with_the_new_fills)
{
    /* a4w4_case_refill rewrites only the pad cells: the result must be the whole contracts
     * §3.3 shuffle with the new fills, on pad rows, pad columns and both; M at a 32-row group's
     * start (32), inside one (1, 33, 300) and past 256 (257, 300): the pad is written by
     * groups, by rows and by cells */
    static const size_t shapes[][2] = {{257, 288}, {33, 256}, {256, 320}, {5, 32},
                                       {32, 512}, {300, 288}, {1, 8192}};
    static const uint8_t fills[][2] = {{0xFF, 0x7F}, {0x00, 0x7F}, {0x7F, 0x00}, {0x7F, 0xFF},
                                       {0x11, 0x22}, {0x7F, 0x7F}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        a4w4_case c = tu_case("refill", shapes[i][0], 32, shapes[i][1], A4W4_REGIME_WIDE, A4W4_ROUND_UP, 9 + i);
        a4w4_sample s;
        full_sample(&c, &s);
        a4w4_case_data d;
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        size_t nb = c.K / 32, len = d.a_scale_shuffled.len;
        uint8_t *want = malloc(len);
        for (size_t f = 0; f < 6; f++) {
            a4w4_case_refill(&d, fills[f][0], fills[f][1], 0x5A);
            cr_assert_eq(a4w4_act_scale_shuffle(d.a_scale.data, c.M, nb, fills[f][0],
                                                fills[f][1], want), A4W4_OK);
            cr_expect_eq(memcmp(d.a_scale_shuffled.data, want, len), 0,
                         "M %zu K %zu fills 0x%02x 0x%02x", c.M, c.K, fills[f][0], fills[f][1]);
        }
        free(want);
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
}

Test(gen, swizzled_weight_scales_equal_a_whole_swizzle)
{
    /* the swizzle is made 32-row group by group (on all cores from 2^22 scales): the bytes
     * must be the whole contracts §3.2 swizzle's, below and above that size */
    static const size_t shapes[][2] = {{64, 256}, {4096, 32768}};
    for (size_t i = 0; i < 2; i++) {
        a4w4_case c = tu_case("swz", 1, shapes[i][0], shapes[i][1], A4W4_REGIME_WIDE,
                              A4W4_ROUND_UP, 31 + i);
        a4w4_sample s;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 0, &s), 0);
        a4w4_case_data d;
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        size_t nb = c.K / 32;
        uint8_t *want = malloc(c.N * nb);
        cr_assert(want && d.w_scale_swizzled.data);
        cr_assert_eq(a4w4_scale_swizzle(d.w_scale.data, c.N, nb, want), A4W4_OK);
        cr_expect_eq(memcmp(d.w_scale_swizzled.data, want, c.N * nb), 0, "N %zu K %zu", c.N,
                     c.K);
        free(want);
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
}

/* 1 when every A4W4_SAMPLE_TILE-tile of an axis of length len has an index in v[0..n). */
static int every_tile(const size_t *v, size_t n, size_t len)
{
    size_t tiles = (len + A4W4_SAMPLE_TILE - 1) / A4W4_SAMPLE_TILE, seen = 0, last = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (v[i] / A4W4_SAMPLE_TILE != last) {
            last = v[i] / A4W4_SAMPLE_TILE;
            seen++;
        }
    return seen == tiles;
}

Test(sample, huge_shapes_stay_within_the_work_cap_but_keep_every_tile_index)
{
    a4w4_sample s;
    /* 16 x 3717 tiles of 256: the kept indices alone (first, last, one per tile) are all that
     * is left, a little above the cap; every tile index on both axes is there */
    cr_assert_eq(a4w4_sample_make(4096, 951552, 4352, 1, "huge", 0, &s), 0);
    cr_expect_leq(s.nrows, 2 + 16);
    cr_expect_leq(s.ncols, 2 + 3717);
    cr_expect(every_tile(s.rows, s.nrows, 4096) && every_tile(s.cols, s.ncols, 951552));
    cr_expect_eq(s.rows[0], 0);
    cr_expect_eq(s.rows[s.nrows - 1], 4095);
    cr_expect_eq(s.cols[s.ncols - 1], 951551);
    a4w4_sample_free(&s);
    /* a grid of 33 x 32 tiles (1056, past 1024) at K = 16384: within the cap, every tile */
    cr_assert_eq(a4w4_sample_make(8193, 8192, 16384, 2, "grid", 0, &s), 0);
    cr_expect_leq((unsigned long long)s.nrows * s.ncols * (16384 / 32), A4W4_SAMPLE_BLOCK_DOTS);
    cr_expect(every_tile(s.rows, s.nrows, 8193) && every_tile(s.cols, s.ncols, 8192));
    a4w4_sample_free(&s);
}

/* The table form of the code generator and the run-wise preshuffle equal the plain forms
 * (tests/plain/gen_plain.h, ref's a4w4_preshuffle) on every generated byte: exact regime with
 * maxcode 7 (spread 3 and 1), 6, 5, 4 and 3 (codes and scales), wide, code0 and normal (codes of W; of A
 * too where A is not quantized), full and sampled generation. */
#include "plain/gen_plain.h"

static void expect_rows_plain(const a4w4_case *c, const a4w4_case_data *d, const uint8_t *need_a,
                              const uint8_t *need_w)
{
    size_t K2 = c->K / 2, nb = c->K / 32;
    int exact = c->regime == A4W4_REGIME_EXACT;
    uint8_t *fp4 = malloc(K2), *sc = malloc(nb);
    for (int t = 1; t <= 2; t++) {
        size_t rows = t == 1 ? c->M : c->N;
        if (t == 1 && c->regime == A4W4_REGIME_NORMAL)
            continue; /* A is quantized from x there: not this generator */
        for (size_t r = 0; r < rows; r++) {
            if (!(t == 1 ? need_a : need_w)[r])
                continue;
            plain_row(c, t, r, exact, fp4, sc);
            const a4w4_guarded *g = t == 1 ? &d->a_fp4 : &d->w_fp4;
            const a4w4_guarded *gs = t == 1 ? &d->a_scale : &d->w_scale;
            cr_assert_eq(memcmp(g->data + r * K2, fp4, K2), 0, "%s tensor %d row %zu codes",
                         c->name, t, r);
            if (exact)
                cr_assert_eq(memcmp(gs->data + r * nb, sc, nb), 0, "%s tensor %d row %zu scales",
                             c->name, t, r);
        }
    }
    free(fp4);
    free(sc);
}

static void expect_preshuffle_plain(const a4w4_case_data *d, const uint8_t *need_w)
{
    size_t K2 = d->K / 2;
    uint8_t *ref = malloc(d->N * K2);
    cr_assert_eq(a4w4_preshuffle(d->w_fp4.data, d->N, d->K, ref), A4W4_OK);
    for (size_t n0 = 0; n0 < d->N / 16; n0++) { /* a 16-row group sits in 16*K2 bytes */
        int any = 0;
        for (size_t n = n0 * 16; n < n0 * 16 + 16; n++)
            any |= need_w[n];
        if (any)
            cr_assert_eq(memcmp(d->w_fp4_shuffled.data + n0 * 16 * K2, ref + n0 * 16 * K2,
                                16 * K2), 0, "preshuffle group %zu", n0);
    }
    free(ref);
}

Test(gen, table_codes_and_runwise_preshuffle_equal_the_plain_forms)
{
    const a4w4_case cases[] = {
        tu_case("p_exact_mc7_s3", 17, 64, 256, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 11),
        tu_case("p_exact_mc7_s1", 3, 32, 16384, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 12),
        tu_case("p_exact_mc6_s0", 2, 16, 131072, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 13),
        tu_case("p_exact_mc5_s0", 1, 16, 262144, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 19),
        tu_case("p_exact_mc4_s0", 1, 16, 524288, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 20),
        tu_case("p_exact_mc3_s0", 1, 16, 1048576, A4W4_REGIME_EXACT, A4W4_ROUND_UP, 21),
        tu_case("p_wide", 33, 96, 512, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 14),
        tu_case("p_code0", 5, 48, 768, A4W4_REGIME_CODE0, A4W4_ROUND_UP, 15),
        tu_case("p_normal", 4, 64, 1024, A4W4_REGIME_NORMAL, A4W4_ROUND_UP, 16),
        tu_case("p_special", 9, 32, 256, A4W4_REGIME_SPECIAL, A4W4_ROUND_UP, 17),
        tu_case("p_sampled", 300, 1024, 2048, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 18), /* above 2^26 MACs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const a4w4_case *c = &cases[i];
        a4w4_sample s;
        cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &s), 0);
        uint8_t *need_a = calloc(c->M, 1), *need_w = calloc(c->N, 1);
        for (size_t r = 0; r < (s.full ? c->M : s.nrows); r++)
            need_a[s.full ? r : s.rows[r]] = 1;
        for (size_t j = 0; j < (s.full ? c->N : s.ncols); j++)
            need_w[s.full ? j : s.cols[j]] = 1;
        a4w4_case_data d;
        cr_assert_eq(a4w4_case_generate(c, &s, &d), 0);
        if (c->regime != A4W4_REGIME_SPECIAL) /* special overwrites some blocks afterwards */
            expect_rows_plain(c, &d, need_a, need_w);
        if (d.w_fp4_shuffled.data)
            expect_preshuffle_plain(&d, need_w);
        a4w4_case_data_free(&d);
        free(need_a);
        free(need_w);
        a4w4_sample_free(&s);
    }
    cr_assert_eq(cases[10].M * cases[10].N * cases[10].K > A4W4_FULL_CHECK_MACS, 1);
}

/* a4w4_case_generate_dev leaves the preshuffled weight unwritten (no device form reads the
 * host's copy) and a4w4_case_wsh_complete writes it as a4w4_case_generate_all does: every
 * other buffer and, once completed, every byte equal, for a sampled and a full case. */
Test(gen, deferred_preshuffle_completes_to_the_generate_all_bytes)
{
    const a4w4_case cases[] = {
        tu_case("d_sampled", 300, 1024, 2048, A4W4_REGIME_WIDE, A4W4_ROUND_UP, 31),
        tu_case("d_full", 33, 64, 512, A4W4_REGIME_NORMAL, A4W4_ROUND_UP, 32),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const a4w4_case *c = &cases[i];
        a4w4_sample s;
        a4w4_case_data all, dev;
        cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &s), 0);
        cr_assert_eq(s.full, i == 1);
        cr_assert_eq(a4w4_case_generate_all(c, &s, &all), 0);
        cr_assert_eq(a4w4_case_generate_dev(c, &s, &dev), 0);
        const size_t len = c->N * c->K / 2;
        cr_assert_eq(dev.wsh_deferred, 1);
        cr_assert_eq(all.wsh_deferred, 0);
        cr_assert_eq(dev.w_fp4_shuffled.len, len);
        size_t nonzero = 0;
        for (size_t k = 0; k < len; k++)
            nonzero += dev.w_fp4_shuffled.data[k] != 0;
        cr_assert_eq(nonzero, 0, "%s: the deferred preshuffle was written", c->name);
        cr_assert_eq(memcmp(all.a_fp4.data, dev.a_fp4.data, all.a_fp4.len), 0);
        cr_assert_eq(memcmp(all.w_fp4.data, dev.w_fp4.data, all.w_fp4.len), 0);
        cr_assert_eq(memcmp(all.w_scale_swizzled.data, dev.w_scale_swizzled.data,
                            all.w_scale_swizzled.len), 0);
        cr_assert_eq(memcmp(all.a_scale_shuffled.data, dev.a_scale_shuffled.data,
                            all.a_scale_shuffled.len), 0);
        unsigned v = dev.version;
        a4w4_case_wsh_complete(&dev, &s);
        cr_assert_eq(dev.wsh_deferred, 0);
        cr_assert_eq(dev.version, v + 1, "device copies must see the new bytes");
        cr_assert_eq(memcmp(all.w_fp4_shuffled.data, dev.w_fp4_shuffled.data, len), 0,
                     "%s: the completed preshuffle differs from generate_all's", c->name);
        cr_assert(a4w4_case_guards_intact(&dev, &(const char *){NULL}));
        a4w4_case_wsh_complete(&dev, &s); /* nothing deferred: nothing changes */
        cr_assert_eq(dev.version, v + 1);
        a4w4_case_data_free(&all);
        a4w4_case_data_free(&dev);
        a4w4_sample_free(&s);
    }
}
