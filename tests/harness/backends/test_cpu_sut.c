/* test_cpu_sut.c — the tiled CPU systems under test (harness/backends/cpu_sut.c) against the
 * plain per-output form they replaced (tests/plain/cpu_sut_plain.h), bit for bit: random
 * shapes across the 32-column tile and the 16/32/256 layout boundaries, whole outputs and
 * row/column subsets, scales from the middle of the E8M0 range, across all of it (fp32
 * overflow, underflow, subnormal block values) and with 0xFF (NaN) blocks (contracts §4.1
 * ordered(1), §3 layouts). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "casefile.h"
#include "cpu_sut.h"
#include "gen.h"
#include "plain/cpu_sut_plain.h"
#include "test_util.h"

static uint64_t rs = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* scale_mode 0: 119..135; 1: 0..254; 2: 0..24 (block values far below 2^-126); 3: mode 1
 * plus about one 0xFF in 64. */
static uint8_t draw_scale(int scale_mode)
{
    switch (scale_mode) {
    case 0: return (uint8_t)(119 + rnd() % 17);
    case 1: return (uint8_t)(rnd() % 255);
    case 2: return (uint8_t)(rnd() % 25);
    default: return rnd() % 64 == 0 ? 0xFF : (uint8_t)(rnd() % 255);
    }
}

static void fill(uint8_t *p, size_t n, int scale_mode, int is_scale)
{
    for (size_t i = 0; i < n; i++)
        p[i] = is_scale ? draw_scale(scale_mode) : (uint8_t)rnd();
}

static size_t *draw_list(size_t len, size_t count)
{
    size_t *v = malloc(count * sizeof *v);
    for (size_t i = 0; i < count; i++)
        v[i] = (size_t)(rnd() % len);
    return v;
}

/* One shape, one scale mode, whole output and one random subset: fast == plain, both SUTs. */
static void check_shape(size_t M, size_t N, size_t K, int scale_mode, size_t nr, size_t nc)
{
    size_t nb = K / 32, K2 = K / 2;
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    uint8_t *a = malloc(M * K2), *as = malloc(M * nb), *w = malloc(N * K2), *ws = malloc(N * nb);
    uint8_t *ash = malloc(prow * pcol), *wsh = malloc(N * K2), *wsz = malloc(N * nb);
    fill(a, M * K2, scale_mode, 0);
    fill(w, N * K2, scale_mode, 0);
    fill(as, M * nb, scale_mode, 1);
    fill(ws, N * nb, scale_mode, 1);
    int asm_ok = a4w4_preshuffle_supported(N, K) && a4w4_scale_swizzle_supported(2, N, nb);
    cr_assert_eq(a4w4_act_scale_shuffle(as, M, nb, 0x7F, 0x7F, ash), A4W4_OK);
    if (asm_ok) {
        cr_assert_eq(a4w4_preshuffle(w, N, K, wsh), A4W4_OK);
        cr_assert_eq(a4w4_scale_swizzle(ws, N, nb, wsz), A4W4_OK);
    }
    size_t *rows = draw_list(M, nr), *cols = draw_list(N, nc);
    size_t cap = (M * N > nr * nc ? M * N : nr * nc);
    uint16_t *y1 = malloc(cap * 2), *y2 = malloc(cap * 2);
    for (int sub = 0; sub < 2; sub++) {
        const size_t *R = sub ? rows : NULL, *C = sub ? cols : NULL;
        size_t cnt = sub ? nr * nc : M * N;
        memset(y1, 0xA5, cap * 2);
        memset(y2, 0x5A, cap * 2);
        cr_assert_eq(a4w4_cpu_fallback_gemm(a, as, w, ws, M, N, K, R, nr, C, nc, y1), A4W4_OK);
        cr_assert_eq(plain_cpu_fallback_gemm(a, as, w, ws, M, N, K, R, nr, C, nc, y2), A4W4_OK);
        cr_assert_eq(memcmp(y1, y2, cnt * 2), 0, "fallback M=%zu N=%zu K=%zu mode %d sub %d", M,
                     N, K, scale_mode, sub);
        if (!asm_ok)
            continue;
        memset(y1, 0xA5, cap * 2);
        memset(y2, 0x5A, cap * 2);
        cr_assert_eq(a4w4_cpu_asm_gemm(a, ash, wsh, wsz, M, N, K, R, nr, C, nc, y1), A4W4_OK);
        cr_assert_eq(plain_cpu_asm_gemm(a, ash, wsh, wsz, M, N, K, R, nr, C, nc, y2), A4W4_OK);
        cr_assert_eq(memcmp(y1, y2, cnt * 2), 0, "asm M=%zu N=%zu K=%zu mode %d sub %d", M, N, K,
                     scale_mode, sub);
    }
    free(a), free(as), free(w), free(ws), free(ash), free(wsh), free(wsz);
    free(rows), free(cols), free(y1), free(y2);
}

Test(cpu_sut, tiled_form_equals_plain_form_at_tile_and_layout_boundaries)
{
    static const size_t Ms[] = {1, 2, 15, 16, 17, 31, 32, 33, 64, 255, 257};
    static const size_t Ns[] = {32, 64, 96, 160, 256};
    static const size_t Ks[] = {256, 512, 768};
    static const size_t subs[] = {1, 31, 32, 33, 65};
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++)
            for (int mode = 0; mode < 4; mode++) {
                if (tu_sweep_skip(i + j + (size_t)mode))
                    continue;
                size_t K = Ks[(i + j + (size_t)mode) % 3];
                size_t nr = subs[(i + (size_t)mode) % 5], nc = subs[(j + 2 * (size_t)mode) % 5];
                check_shape(Ms[i], Ns[j], K, mode, nr, nc);
            }
}

Test(cpu_sut, fallback_equals_plain_on_shapes_without_asm_layouts)
{
    /* N not a multiple of 16/32, K not a multiple of 64 or 256: only the fallback runs */
    static const size_t shapes[][3] = {{3, 1, 32}, {5, 7, 96}, {33, 45, 160}, {2, 33, 224}, {1, 100, 32}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int mode = 0; mode < 4; mode++)
            check_shape(shapes[s][0], shapes[s][1], shapes[s][2], mode, 3, 33);
}

Test(cpu_sut, an_index_out_of_range_is_einval_and_leaves_y_untouched)
{
    uint8_t a[16] = {0}, as[1] = {127}, w[16] = {0}, ws[1] = {127};
    size_t rows[2] = {0, 1}, cols[1] = {0};
    uint16_t y[2] = {0x1234, 0x1234};
    cr_expect_eq(a4w4_cpu_fallback_gemm(a, as, w, ws, 1, 1, 32, rows, 2, cols, 1, y),
                 A4W4_EINVAL);
    cr_expect_eq(y[0], 0x1234);
    cr_expect_eq(y[1], 0x1234);
}

/* The range regime (contracts §4.3: totals at and past bf16's largest value, combined scales
 * beyond fp32 at both ends, E8M0 254 and 255 on both sides): both systems equal ordered(1)
 * bit for bit, +-Inf, NaN (0x7FC0 for a 0xFF block, any NaN for +Inf + -Inf) and -0 included. */
Test(cpu_sut, both_systems_equal_ordered1_at_the_edges_of_the_range)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "sut_range");
    c.M = 33;
    c.N = 64;
    c.K = 1280;
    c.seed = 77;
    cr_assert_eq(a4w4_regime_parse("range", &c.regime, &c.mode), 0);
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), 0);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
    size_t nb = c.K / 32, n = c.M * c.N, inf = 0, nan = 0;
    uint16_t *ya = malloc(n * 2), *yf = malloc(n * 2);
    cr_assert_eq(a4w4_cpu_asm_gemm(d.a_fp4.data, d.a_scale_shuffled.data, d.w_fp4_shuffled.data,
                                   d.w_scale_swizzled.data, c.M, c.N, c.K, NULL, 0, NULL, 0, ya),
                 A4W4_OK);
    cr_assert_eq(a4w4_cpu_fallback_gemm(d.a_fp4.data, d.a_scale.data, d.w_fp4.data,
                                        d.w_scale.data, c.M, c.N, c.K, NULL, 0, NULL, 0, yf),
                 A4W4_OK);
    for (size_t m = 0; m < c.M; m++)
        for (size_t j = 0; j < c.N; j++) {
            a4w4_dot_operands op = {d.a_fp4.data + m * c.K / 2, d.a_scale.data + m * nb,
                                    d.w_fp4.data + j * c.K / 2, d.w_scale.data + j * nb, c.K};
            uint16_t o = a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1));
            int on = (o & 0x7FFF) > 0x7F80;
            inf += (o & 0x7FFF) == 0x7F80;
            nan += (size_t)on;
            uint16_t got[2] = {ya[m * c.N + j], yf[m * c.N + j]};
            for (int k = 0; k < 2; k++)
                cr_assert(got[k] == o || (on && (got[k] & 0x7FFF) > 0x7F80),
                          "%s (%zu, %zu): 0x%04x, ordered(1) 0x%04x", k ? "fallback" : "asm", m,
                          j, got[k], o);
        }
    cr_expect_gt(inf, 20, "Inf outputs: %zu", inf);
    cr_expect_gt(nan, c.N, "NaN outputs: %zu", nan);
    free(ya);
    free(yf);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
}
