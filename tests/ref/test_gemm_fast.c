/* test_gemm_fast.c — the fast exact and ordered(S) oracles (ref/a4w4_gemm_fast.h) equal the
 * plain ones (ref/a4w4_gemm.h) bit for bit, bf16 and fp32, on every regime of contracts §4.1:
 * exact-regime data, normal data quantized from bf16 in each scale mode, wide scales (finite
 * sums and sums overflowing to Inf), special blocks (all +0, all -0, saturating ±6, NaN
 * scales), E8M0 code 0, outputs in the fp32/bf16 subnormal range, rows of -0 terms, rounding
 * ties built by hand; on shapes at every tile and pad boundary, S in 1..8, every instruction
 * set this machine runs (forced through the ISA argument) and 1 and 2 threads.
 *
 * Every pair goes through one helper, mismatches(); a mutant fast oracle (a kernel table whose
 * entries drop the last block) goes through the same helper and must be caught. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_gemm_fast_kernels.h"
#include "a4w4_quant.h"
#include "test_util.h"

/* ---- operands and a deterministic generator --------------------------------------------- */

static uint64_t rng_state = 0x5DEECE66D1234567ull;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rnd(unsigned n)
{
    return (unsigned)(rng_next() % n);
}

static double uniform01(void)
{
    return (double)(rng_next() >> 11) * 0x1p-53;
}

typedef struct {
    size_t M, N, K;
    uint8_t *a, *as, *w, *ws; /* [M,K/2] [M,K/32] [N,K/2] [N,K/32] */
} operands;


static operands ops_new(size_t M, size_t N, size_t K)
{
    operands o = {
        M, N, K, tu_xmalloc(M * K / 2), tu_xmalloc(M * K / 32), tu_xmalloc(N * K / 2), tu_xmalloc(N * K / 32)};
    return o;
}

static void ops_free(operands *o)
{
    free(o->a);
    free(o->as);
    free(o->w);
    free(o->ws);
}

/* Random codes with magnitude codes 0..maxcode and random signs. */
static void fill_codes(uint8_t *fp4, size_t bytes, unsigned maxcode)
{
    for (size_t i = 0; i < bytes; i++) {
        unsigned lo = rnd(maxcode + 1) | (rnd(2) << 3), hi = rnd(maxcode + 1) | (rnd(2) << 3);
        fp4[i] = (uint8_t)(lo | (hi << 4));
    }
}

static void fill_scales(uint8_t *s, size_t n, unsigned lo, unsigned hi)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)(lo + rnd(hi - lo + 1));
}

/* Exact regime (contracts §4.1): small codes, scales 127..129. */
static void fill_exact(operands *o)
{
    fill_codes(o->a, o->M * o->K / 2, 7);
    fill_codes(o->w, o->N * o->K / 2, 7);
    fill_scales(o->as, o->M * o->K / 32, 127, 129);
    fill_scales(o->ws, o->N * o->K / 32, 127, 129);
}

/* Both operands quantized per 1x32 (contracts §2) from bf16 values ~ N(0, 1) * 2^(row's
 * exponent in -4..4), in one scale mode. */
static void quantize_rows(uint8_t *fp4, uint8_t *scale, size_t rows, size_t K, a4w4_scale_mode mode)
{
    uint16_t *x = tu_xmalloc(rows * K * sizeof *x);
    for (size_t r = 0; r < rows; r++) {
        double mul = ldexp(1.0, (int)rnd(9) - 4);
        for (size_t k = 0; k < K; k++) {
            double u1 = uniform01(), u2 = uniform01();
            double g = sqrt(-2.0 * log(u1 > 0 ? u1 : 0x1p-53)) * cos(6.283185307179586 * u2);
            x[r * K + k] = a4w4_f32_to_bf16((float)(g * mul));
        }
    }
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_BF16, rows, K, mode, 0, fp4, scale), A4W4_OK);
    free(x);
}

static void fill_normal(operands *o, a4w4_scale_mode mode)
{
    quantize_rows(o->a, o->as, o->M, o->K, mode);
    quantize_rows(o->w, o->ws, o->N, o->K, mode);
}

/* Wide scales over codes 1..254. finite: per block column a centre c with A near c and W near
 * 255 - c (one block in 16 moved by up to ±50), so products stay near 2^0 and sums finite;
 * otherwise uniform codes on both sides, so products reach 2^252 and sums overflow to Inf. */
static int clamp_code(int c, int lo)
{
    return c < lo ? lo : c > 254 ? 254 : c;
}

static void fill_wide(operands *o, int finite, int lo)
{
    size_t nb = o->K / 32;
    fill_codes(o->a, o->M * o->K / 2, 7);
    fill_codes(o->w, o->N * o->K / 2, 7);
    int *centre = tu_xmalloc(nb * sizeof *centre);
    for (size_t b = 0; b < nb; b++)
        centre[b] = 1 + (int)rnd(254);
    for (int side = 0; side < 2; side++) {
        size_t rows = side ? o->N : o->M;
        uint8_t *s = side ? o->ws : o->as;
        for (size_t i = 0; i < rows * nb; i++) {
            int d = (int)rnd(17) - 8 + (rnd(16) == 0 ? (int)rnd(101) - 50 : 0);
            int c = side ? 255 - centre[i % nb] : centre[i % nb];
            s[i] = (uint8_t)(finite ? clamp_code(c + d, lo) : clamp_code(1 + (int)rnd(254), lo));
        }
    }
    free(centre);
}

/* Scales low enough that outputs fall in the fp32 and bf16 subnormal ranges (block values
 * 2^(sa+sb-256) * dot from about 2^-176 up to 2^-120). narrow: spreads of 3 per side. */
static void fill_subnormal(operands *o, int narrow)
{
    fill_codes(o->a, o->M * o->K / 2, 7);
    fill_codes(o->w, o->N * o->K / 2, 7);
    fill_scales(o->as, o->M * o->K / 32, narrow ? 60 : 40, narrow ? 63 : 62);
    fill_scales(o->ws, o->N * o->K / 32, narrow ? 59 : 40, narrow ? 62 : 62);
}

/* One block of a row set to a byte pattern (0x00 all +0, 0x88 all -0, 0x77 / 0xFF ±6). */
static void set_block(uint8_t *fp4, size_t K, size_t row, size_t b, uint8_t byte)
{
    memset(fp4 + row * (K / 2) + b * 16, byte, 16);
}

/* On top of exact-regime data: all +0, all -0 and saturating ±6 blocks at random places,
 * whole rows of -0, and NaN-scale blocks on both sides. */
static void fill_special(operands *o)
{
    size_t nb = o->K / 32;
    static const uint8_t pats[4] = {0x00, 0x88, 0x77, 0xFF};
    fill_exact(o);
    for (size_t i = 0; i < (o->M + o->N) * nb / 8 + 1; i++) {
        int side = (int)rnd(2);
        size_t rows = side ? o->N : o->M;
        set_block(side ? o->w : o->a, o->K, rnd((unsigned)rows), rnd((unsigned)nb), pats[rnd(4)]);
    }
    memset(o->a + (o->M - 1) * (o->K / 2), 0x88, o->K / 2); /* a row of -0 */
    memset(o->w + (o->N / 2) * (o->K / 2), 0x88, o->K / 2);
    o->as[rnd((unsigned)(o->M * nb))] = 0xFF;
    o->ws[rnd((unsigned)(o->N * nb))] = 0xFF;
    if (o->M > 3)
        o->as[3 * nb + nb / 2] = 0xFF;
}

/* E8M0 code 0 (contracts §1: 2^-127) in A facing 254 in W, on wide data. */
static void fill_code0(operands *o)
{
    size_t nb = o->K / 32;
    fill_wide(o, 1, 0);
    for (size_t m = 0; m < o->M; m++)
        o->as[m * nb + (m % nb)] = 0;
    for (size_t n = 0; n < o->N; n++)
        o->ws[n * nb + (n % nb)] = 254;
}

/* ---- the one comparison ------------------------------------------------------------------ */

typedef struct {
    uint16_t *bf16;
    float *f32;
} result;

static result result_new(size_t n)
{
    result r = {tu_xmalloc(n * sizeof(uint16_t)), tu_xmalloc(n * sizeof(float))};
    memset(r.bf16, 0xA5, n * sizeof(uint16_t));
    memset(r.f32, 0xA5, n * sizeof(float));
    return r;
}

static void result_free(result *r)
{
    free(r->bf16);
    free(r->f32);
}

static result plain_result(const operands *o, int ordered, unsigned S)
{
    result r = result_new(o->M * o->N);
    int rc = ordered
                 ? a4w4_gemm_ordered(o->a, o->as, o->w, o->ws, o->M, o->N, o->K, S, r.bf16, r.f32)
                 : a4w4_gemm_exact(o->a, o->as, o->w, o->ws, o->M, o->N, o->K, r.bf16, r.f32);
    cr_assert_eq(rc, A4W4_OK);
    return r;
}

/* Outputs where the fast oracle with table k (threads) differs from the plain result in bf16
 * or fp32 bits; *first gets the index of the first (when any). */
static size_t mismatches(const operands *o, const a4w4_fast_kernels *k, int ordered, unsigned S,
                         unsigned threads, const result *plain, size_t *first)
{
    size_t n = o->M * o->N, bad = 0;
    result f = result_new(n);
    int rc = a4w4_gemm_fast_run(k, ordered, S, o->a, o->as, o->w, o->ws, o->M, o->N, o->K, f.bf16,
                                f.f32, threads, NULL);
    cr_assert_eq(rc, A4W4_OK, "fast oracle (%s) returned %d", k->name, rc);
    for (size_t i = 0; i < n; i++)
        if (f.bf16[i] != plain->bf16[i] || memcmp(&f.f32[i], &plain->f32[i], sizeof(float))) {
            if (!bad)
                *first = i;
            bad++;
        }
    result_free(&f);
    return bad;
}

/* fast == plain on every path this machine runs, 1 and 2 threads; returns the paths run. The
 * instrumented build (A4W4_TEST_REDUCED) runs 2 threads on the path AUTO resolves to only: the
 * threading is the driver's (a4w4_gemm_fast.c), the same for every path. */
static int check_all_paths(const operands *o, int ordered, unsigned S, const char *what)
{
    result plain = plain_result(o, ordered, S);
    int paths = 0;
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        const a4w4_fast_kernels *k = a4w4_fast_kernels_for((a4w4_fast_isa)isa);
        if (!k)
            continue;
        paths++;
        unsigned maxth = A4W4_SWEEP_STRIDE == 1 ||
                                 isa == (int)a4w4_fast_isa_resolve(A4W4_FAST_AUTO)
                             ? 2
                             : 1;
        for (unsigned threads = 1; threads <= maxth; threads++) {
            size_t first = 0, bad = mismatches(o, k, ordered, S, threads, &plain, &first);
            cr_assert_eq(bad, 0,
                         "%s %s(S=%u) %zux%zux%zu on %s, %u thread(s): %zu outputs differ, first "
                         "at (%zu, %zu)",
                         what, ordered ? "ordered" : "exact", S, o->M, o->N, o->K, k->name, threads,
                         bad, first / o->N, first % o->N);
        }
    }
    result_free(&plain);
    return paths;
}

/* exact and ordered(S) for S = 1..8 on the same operands. */
static void check_exact_and_every_split(const operands *o, const char *what)
{
    check_all_paths(o, 0, 1, what);
    for (unsigned S = 1; S <= 8; S++)
        check_all_paths(o, 1, S, what);
}

/* ---- regimes ------------------------------------------------------------------------------ */

Test(fast_paths, portable_always_and_the_best_path_the_cpu_has_for_auto)
{
    cr_assert(a4w4_fast_isa_supported(A4W4_FAST_AUTO));
    cr_assert(a4w4_fast_isa_supported(A4W4_FAST_PORTABLE));
    cr_assert_not_null(a4w4_fast_kernels_for(A4W4_FAST_AUTO));
    __builtin_cpu_init();
    if (a4w4_fast_isa_supported(A4W4_FAST_AMX))
        cr_assert_eq(a4w4_fast_isa_resolve(A4W4_FAST_AUTO), A4W4_FAST_AMX);
    else if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
        cr_assert_eq(a4w4_fast_isa_resolve(A4W4_FAST_AUTO), A4W4_FAST_AVX512VNNI);
    for (int isa = 0; isa < A4W4_FAST_ISA_COUNT; isa++)
        cr_log_info("path %s: %s", a4w4_fast_isa_name((a4w4_fast_isa)isa),
                    a4w4_fast_isa_supported((a4w4_fast_isa)isa) ? "runs here" : "not here");
    cr_assert_null(a4w4_fast_isa_name((a4w4_fast_isa)A4W4_FAST_ISA_COUNT));
}

Test(fast_regimes, exact_regime)
{
    operands o = ops_new(33, 80, 2304);
    fill_exact(&o);
    check_exact_and_every_split(&o, "exact-regime");
    ops_free(&o);
}

Test(fast_regimes, normal_in_each_scale_mode)
{
    for (int mode = 0; mode < A4W4_SCALE_MODE_COUNT; mode++) {
        operands o = ops_new(17, 48, 2304);
        fill_normal(&o, (a4w4_scale_mode)mode);
        check_exact_and_every_split(&o, a4w4_scale_mode_name((a4w4_scale_mode)mode));
        ops_free(&o);
    }
}

Test(fast_regimes, wide_scales_finite_sums)
{
    operands o = ops_new(31, 33, 8192);
    fill_wide(&o, 1, 1);
    check_exact_and_every_split(&o, "wide finite");
    ops_free(&o);
}

Test(fast_regimes, wide_scales_overflowing_to_inf)
{
    operands o = ops_new(16, 48, 2304);
    fill_wide(&o, 0, 1);
    check_exact_and_every_split(&o, "wide overflowing");
    result r = plain_result(&o, 0, 1);
    size_t inf = 0;
    for (size_t i = 0; i < o.M * o.N; i++)
        inf += (r.bf16[i] & 0x7FFF) == 0x7F80;
    cr_assert_gt(inf, 0, "the data must overflow somewhere");
    result_free(&r);
    ops_free(&o);
}

Test(fast_regimes, special_blocks_nan_zero_negzero_saturating)
{
    operands o = ops_new(17, 33, 2304);
    fill_special(&o);
    check_exact_and_every_split(&o, "special");
    ops_free(&o);
}

Test(fast_regimes, e8m0_code0)
{
    operands o = ops_new(15, 31, 2304);
    fill_code0(&o);
    check_exact_and_every_split(&o, "code0");
    ops_free(&o);
}

Test(fast_regimes, outputs_in_the_subnormal_ranges)
{
    for (int narrow = 0; narrow <= 1; narrow++) {
        operands o = ops_new(16, 33, 288);
        fill_subnormal(&o, narrow);
        check_exact_and_every_split(&o, narrow ? "subnormal narrow" : "subnormal wide");
        result r = plain_result(&o, 0, 1);
        size_t sub = 0;
        for (size_t i = 0; i < o.M * o.N; i++)
            sub += (r.bf16[i] & 0x7F80) == 0 && (r.bf16[i] & 0x7F) != 0;
        cr_assert_gt(sub, 0, "some outputs must be bf16 subnormals");
        result_free(&r);
        ops_free(&o);
    }
}

Test(fast_regimes, rows_of_negative_zero_terms_give_plus_zero)
{
    operands o = ops_new(17, 17, 96);
    fill_exact(&o);
    memset(o.a, 0x88, o.K / 2);                 /* A row 0: all -0 */
    memset(o.w + 2 * (o.K / 2), 0x88, o.K / 2); /* W row 2: all -0 */
    memset(o.a + 5 * (o.K / 2), 0x80, o.K / 2); /* A row 5: +0 and -0 */
    check_exact_and_every_split(&o, "-0 rows");
    result r = plain_result(&o, 0, 1);
    for (size_t n = 0; n < o.N; n++)
        cr_assert_eq(r.bf16[n], 0, "an all -0 row sums to +0 (contracts §4.1 exact)");
    result_free(&r);
    ops_free(&o);
}

/* ---- rounding ties built by hand ----------------------------------------------------------
 * Row 0 of A holds, at scale 127 everywhere: block 0 one element 2x = 1, block 1 28 elements
 * 2x = 12 and one 2x = 8 (dot 4096 = 2^12 against the same in W), block 2 one element 2x = 4
 * (dot 16). W row n has the same codes with block scales (100, 100 + d, 100 + d) and block 0
 * kept or zeroed, so the exact sum is 2^(12+d) + 2^(4+d) [+ 1] units of 2^(227-256): a bf16
 * midpoint, plus a sticky 1 when block 0 is kept. d = 18 is the widest window the fast oracle
 * takes; d = 40 needs its multi-limb path; d = 100 puts the sticky unit more than 64 bits below
 * the top bit. With the sticky unit fp32 rounds the value onto
 * the midpoint, so bf16 must be rounded from the exact sum, not from fp32. */
static void tie_row(uint8_t *fp4, size_t K, int keep_sticky, int neg)
{
    memset(fp4, 0, K / 2);
    uint8_t sign = neg ? 8 : 0;
    if (keep_sticky)
        a4w4_fp4_set(fp4, 0, (uint8_t)(1 | sign));
    for (size_t k = 0; k < 28; k++)
        a4w4_fp4_set(fp4, 32 + k, (uint8_t)(7 | sign));
    a4w4_fp4_set(fp4, 32 + 28, (uint8_t)(6 | sign));
    a4w4_fp4_set(fp4, 64, (uint8_t)(4 | sign));
}

Test(fast_hand, bf16_midpoints_with_and_without_sticky_in_window_and_limbs)
{
    static const int spread[3] = {18, 40, 100}; /* window; limbs; sticky beyond 64 bits */
    for (int c = 0; c < 3; c++) {
        operands o = ops_new(2, 2, 96);
        tie_row(o.a, o.K, 1, 0);
        tie_row(o.a + o.K / 2, o.K, 1, 1); /* row 1: the negatives */
        memset(o.as, 127, 2 * 3);
        for (size_t n = 0; n < 2; n++) { /* column 0 with the sticky unit, column 1 without */
            uint8_t sc[3] = {100, (uint8_t)(100 + spread[c]), (uint8_t)(100 + spread[c])};
            tie_row(o.w + n * (o.K / 2), o.K, n == 0, 0);
            memcpy(o.ws + n * 3, sc, 3);
        }
        check_exact_and_every_split(&o, "ties");
        result r = plain_result(&o, 0, 1);
        cr_assert_eq(r.bf16[0], r.bf16[1] + 1, "spread %d: sticky rounds up", spread[c]);
        cr_assert_eq(r.bf16[2], r.bf16[3] + 1, "spread %d: negative", spread[c]);
        if (c == 0) {
            /* 2 + 2^-7 + 2^-29 -> bf16 2 + 2^-6 (0x4001) though fp32 rounds it to the
             * midpoint 2 + 2^-7; the exact tie 2 + 2^-7 -> even 0x4000 */
            cr_assert_eq(r.bf16[0], 0x4001);
            cr_assert_eq(r.bf16[1], 0x4000);
            cr_assert_eq(r.bf16[2], 0xC001);
            a4w4_fast_stats st;
            cr_assert_eq(a4w4_gemm_exact_fast_ex(o.a, o.as, o.w, o.ws, 2, 2, 96, r.bf16, r.f32,
                                                 1, A4W4_FAST_AUTO, &st), 0);
            cr_assert_eq(st.window, 4, "a spread of 18 takes the window");
        }
        result_free(&r);
        ops_free(&o);
    }
}

/* ---- shapes ------------------------------------------------------------------------------ */

static const size_t shape_m[] = {1, 2, 15, 16, 17, 31, 32, 33, 255, 256, 257};
static const size_t shape_n[] = {1, 2, 8, 15, 16, 17, 31, 32, 33, 48, 80, 255, 256, 257};
static const size_t shape_k[] = {32, 64, 96, 256, 288, 2304, 8192};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

Test(fast_shapes, every_tile_and_pad_boundary_of_m_and_n, .timeout = 300)
{
    for (size_t i = 0; i < COUNT(shape_m); i++)
        for (size_t j = 0; j < COUNT(shape_n); j++) {
            if (tu_sweep_skip(i + j))
                continue;
            size_t kk = (i * 3 + j) % COUNT(shape_k);
            while (kk > 0 && shape_m[i] * shape_n[j] * shape_k[kk] > ((size_t)1 << 21))
                kk--;
            operands o = ops_new(shape_m[i], shape_n[j], shape_k[kk]);
            if ((i + j) % 2)
                fill_wide(&o, 1, 1);
            else
                fill_special(&o);
            check_all_paths(&o, 0, 1, (i + j) % 2 ? "shape wide" : "shape special");
            check_all_paths(&o, 1, 1 + (unsigned)(i + j) % 8, "shape");
            ops_free(&o);
        }
}

/* More packed panels than one chunk (1 MiB: six panels of K = 8192) with a small X: X is
 * decoded once for all chunks (a4w4_gemm_fast.c), its last tile padded (122 rows). */
Test(fast_shapes, more_than_one_chunk_of_panels_with_x_decoded_once)
{
    operands o = ops_new(122, 100, 8192);
    fill_special(&o);
    check_all_paths(&o, 0, 1, "x decoded once");
    check_all_paths(&o, 1, 2, "x decoded once");
    ops_free(&o);
}

Test(fast_shapes, every_k_boundary)
{
    for (size_t kk = 0; kk < COUNT(shape_k); kk++)
        for (int wide = 0; wide <= 1; wide++) {
            operands o = ops_new(17, 33, shape_k[kk]);
            if (wide)
                fill_wide(&o, 1, 1);
            else
                fill_special(&o);
            check_all_paths(&o, 0, 1, wide ? "K wide" : "K special");
            check_all_paths(&o, 1, 1 + (unsigned)kk, "K");
            ops_free(&o);
        }
}

/* ---- X rows: every path's load_x equals the portable decode and scan ------------------- */

/* One X row of nb blocks: random codes, some blocks all +0 or all -0, some NaN scales, some
 * blocks with a single nonzero element; kind 1: no nonzero block, kind 2: every scale NaN. */
static void fill_x_row(uint8_t *fp4, uint8_t *scale, size_t nb, int kind)
{
    fill_codes(fp4, nb * 16, 7);
    fill_scales(scale, nb, 1, 254);
    for (size_t b = 0; b < nb; b++) {
        unsigned pick = kind == 1 ? rnd(2) : rnd(8);
        if (pick < 2) /* all +0 or all -0 */
            memset(fp4 + b * 16, pick ? 0x88 : 0x00, 16);
        else if (pick == 2) /* one nonzero element, at a random place */
            memset(fp4 + b * 16, 0x88, 16), fp4[b * 16 + rnd(16)] = (uint8_t)(rnd(2) ? 0x1 : 0x90);
        if (kind == 2 || rnd(16) == 0)
            scale[b] = 0xFF;
    }
}

/* The 256-bit paths decode and scan 32 blocks at a time (a4w4_gemm_fast_x86.h), the rest
 * block by block: K of 1..3 blocks, one whole 32, 32 plus a tail, several. */
Test(fast_load_x, every_path_equals_the_portable_decode_and_scan)
{
    static const size_t nbs[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 97, 160};
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        const a4w4_fast_kernels *k = a4w4_fast_kernels_for((a4w4_fast_isa)isa);
        if (!k)
            continue;
        for (size_t i = 0; i < COUNT(nbs); i++)
            for (int kind = 0; kind < 3; kind++) {
                size_t nb = nbs[i], K = nb * 32;
                uint8_t *fp4 = tu_xmalloc(K / 2), *scale = tu_xmalloc(nb);
                uint8_t *x = tu_xmalloc(K), *xp = tu_xmalloc(K), *c = tu_xmalloc(nb), *cp = tu_xmalloc(nb);
                fill_x_row(fp4, scale, nb, kind);
                int32_t lo, hi, lop, hip;
                unsigned f = k->load_x(fp4, scale, K, x, c, &lo, &hi);
                unsigned fp = a4w4_fast_load_x_portable(fp4, scale, K, xp, cp, &lop, &hip);
                cr_assert_eq(f, fp, "%s nb=%zu kind %d: flags %u, portable %u", k->name, nb, kind,
                             f, fp);
                cr_assert(lo == lop && hi == hip, "%s nb=%zu kind %d: codes [%d, %d], portable "
                          "[%d, %d]", k->name, nb, kind, lo, hi, lop, hip);
                cr_assert_arr_eq(c, cp, nb, "%s nb=%zu kind %d: block codes differ", k->name, nb,
                                 kind);
                if (k->x_zero == A4W4_FAST_X_OFFSET) /* AMX decodes to 2 * e2m1, no offset */
                    cr_assert_arr_eq(x, xp, K, "%s nb=%zu kind %d: decoded bytes differ",
                                     k->name, nb, kind);
                free(fp4), free(scale), free(x), free(xp), free(c), free(cp);
            }
    }
}

/* C = y^T (W has more rows) is written four lanes at a time by 4x4 transposes where a tile
 * has four valid rows (a4w4_gemm_fast.c): full and partial panels of lanes, the last X tile of
 * one to three rows, bf16 alone (no fp32 output) and both. */
Test(fast_shapes, transposed_outputs_with_and_without_fp32)
{
    static const size_t ns[] = {37, 38, 39, 40};
    for (size_t i = 0; i < COUNT(ns); i++) {
        operands o = ops_new(23, ns[i], 64);
        fill_special(&o);
        result plain = plain_result(&o, 0, 1);
        for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
            if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
                continue;
            for (int with_f32 = 0; with_f32 <= 1; with_f32++) {
                result f = result_new(o.M * o.N);
                cr_assert_eq(a4w4_gemm_exact_fast_ex(o.a, o.as, o.w, o.ws, o.M, o.N, o.K, f.bf16,
                                                     with_f32 ? f.f32 : NULL, 1,
                                                     (a4w4_fast_isa)isa, NULL),
                             A4W4_OK);
                cr_assert_arr_eq(f.bf16, plain.bf16, o.M * o.N * sizeof *f.bf16,
                                 "%s N=%zu: bf16 differs", a4w4_fast_isa_name((a4w4_fast_isa)isa),
                                 ns[i]);
                if (with_f32)
                    cr_assert_arr_eq(f.f32, plain.f32, o.M * o.N * sizeof *f.f32,
                                     "%s N=%zu: fp32 differs",
                                     a4w4_fast_isa_name((a4w4_fast_isa)isa), ns[i]);
                result_free(&f);
            }
        }
        result_free(&plain);
        ops_free(&o);
    }
}

/* ---- the comparison catches a wrong fast oracle ------------------------------------------ */

static const a4w4_fast_kernels *mutant_of;

static a4w4_fast_tile without_last_block(const a4w4_fast_tile *t)
{
    a4w4_fast_tile u = *t;
    if (u.nb > 1)
        u.nb--;
    return u;
}

static void mutant_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                          size_t group, int64_t *acc)
{
    a4w4_fast_tile u = without_last_block(t);
    mutant_of->exact_window(&u, xoff, yoff, group, acc);
}

static void mutant_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    a4w4_fast_tile u = without_last_block(t);
    mutant_of->exact_general(&u, limbs);
}

static void mutant_ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    a4w4_fast_tile u = without_last_block(t);
    mutant_of->ordered(&u, per_blocks, total);
}

Test(fast_mutant, dropping_the_last_block_is_caught_on_every_path)
{
    for (int wide = 0; wide <= 1; wide++) {
        operands o = ops_new(16, 48, 288);
        if (wide)
            fill_wide(&o, 1, 1);
        else
            fill_exact(&o);
        for (int ordered = 0; ordered <= 1; ordered++) {
            result plain = plain_result(&o, ordered, 2);
            for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
                const a4w4_fast_kernels *k = a4w4_fast_kernels_for((a4w4_fast_isa)isa);
                if (!k)
                    continue;
                a4w4_fast_kernels mutant = *k;
                mutant_of = k;
                mutant.name = "mutant";
                mutant.exact_window = mutant_window;
                mutant.exact_general = mutant_general;
                mutant.ordered = mutant_ordered;
                size_t first = 0;
                cr_assert_eq(mismatches(&o, k, ordered, 2, 2, &plain, &first), 0);
                size_t bad = mismatches(&o, &mutant, ordered, 2, 2, &plain, &first);
                cr_assert_gt(bad, o.M * o.N / 2, "mutant of %s (%s, %s) caught on %zu outputs",
                             k->name, wide ? "wide" : "exact-regime", ordered ? "ordered" : "exact",
                             bad);
            }
            result_free(&plain);
        }
        ops_free(&o);
    }
}

/* ---- public entry points ----------------------------------------------------------------- */

Test(fast_api, default_entry_points_and_stats)
{
    operands o = ops_new(40, 70, 512);
    fill_special(&o);
    for (size_t i = 48 * 16; i < 70 * 16; i += 2)
        o.ws[i] = (uint8_t)(20 + rnd(200)); /* W rows 48.. need the general path */
    result pe = plain_result(&o, 0, 1), po = plain_result(&o, 1, 3);
    result fe = result_new(40 * 70), fo = result_new(40 * 70);
    cr_assert_eq(a4w4_gemm_exact_fast(o.a, o.as, o.w, o.ws, 40, 70, 512, fe.bf16, fe.f32), 0);
    cr_assert_eq(a4w4_gemm_ordered_fast(o.a, o.as, o.w, o.ws, 40, 70, 512, 3, fo.bf16, fo.f32), 0);
    cr_assert_arr_eq(fe.bf16, pe.bf16, 40 * 70 * sizeof(uint16_t));
    cr_assert_arr_eq(fe.f32, pe.f32, 40 * 70 * sizeof(float));
    cr_assert_arr_eq(fo.bf16, po.bf16, 40 * 70 * sizeof(uint16_t));
    cr_assert_arr_eq(fo.f32, po.f32, 40 * 70 * sizeof(float));
    a4w4_fast_stats st;
    memset(fe.bf16, 0, 40 * 70 * sizeof(uint16_t));
    cr_assert_eq(a4w4_gemm_exact_fast_ex(o.a, o.as, o.w, o.ws, 40, 70, 512, fe.bf16, NULL, 3,
                                         A4W4_FAST_PORTABLE, &st),
                 0);
    cr_assert_arr_eq(fe.bf16, pe.bf16, 40 * 70 * sizeof(uint16_t));
    cr_assert_eq(st.window + st.general + st.trivial, 40 * 70);
    cr_assert_gt(st.window, 0);
    cr_assert_gt(st.general, 0);
    cr_assert_eq(st.isa, A4W4_FAST_PORTABLE);
    result_free(&pe);
    result_free(&po);
    result_free(&fe);
    result_free(&fo);
    ops_free(&o);
}

Test(fast_api, errors_as_the_plain_oracles)
{
    uint8_t a[64] = {0}, s[4] = {127, 127, 127, 127};
    uint16_t y[4];
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 1, 1, 48, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 0, 1, 32, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 1, 0, 32, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 1, 1, 0, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_exact_fast(NULL, s, a, s, 1, 1, 32, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 1, 1, 32, NULL, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_ordered_fast(a, s, a, s, 1, 1, 32, 0, y, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_gemm_fast_run(NULL, 0, 1, a, s, a, s, 1, 1, 32, y, NULL, 1, NULL),
                 A4W4_EUNSUPPORTED);
    cr_assert_eq(a4w4_gemm_exact_fast(a, s, a, s, 1, 1, 32, y, NULL), A4W4_OK);
    cr_assert_eq(y[0], 0);
    for (int isa = 0; isa < A4W4_FAST_ISA_COUNT; isa++)
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            cr_assert_eq(
                a4w4_gemm_exact_fast_ex(a, s, a, s, 1, 1, 32, y, NULL, 1, (a4w4_fast_isa)isa, NULL),
                A4W4_EUNSUPPORTED);
}

/* ---- the window path at both ends of the exponent range ---------------------------------- */

/* Narrow spreads (so the int64 window is proven) with scales near 254 (sums overflow to Inf)
 * and near 0 (sums underflow to ±0 and fp32/bf16 subnormals). */
Test(fast_window, overflow_and_underflow_with_narrow_spreads)
{
    static const unsigned lo[3] = {250, 0, 63};
    for (int c = 0; c < 3; c++) {
        operands o = ops_new(17, 40, 288);
        fill_codes(o.a, o.M * o.K / 2, 7);
        fill_codes(o.w, o.N * o.K / 2, 7);
        fill_scales(o.as, o.M * o.K / 32, lo[c], lo[c] + 4);
        fill_scales(o.ws, o.N * o.K / 32, lo[c], lo[c] + 4);
        check_exact_and_every_split(&o, "narrow extreme scales");
        a4w4_fast_stats st;
        result f = result_new(o.M * o.N);
        cr_assert_eq(a4w4_gemm_exact_fast_ex(o.a, o.as, o.w, o.ws, o.M, o.N, o.K, f.bf16, f.f32, 1,
                                             A4W4_FAST_AUTO, &st),
                     0);
        cr_assert_eq(st.window, o.M * o.N, "spreads of 4 per side take the window");
        result_free(&f);
        ops_free(&o);
    }
}

/* Which exact path each regime takes (the window proof holds for exact-regime and normal
 * data; wide scales need the limbs). Logged, and the expected path asserted. */
Test(fast_window, paths_taken_per_regime)
{
    for (int regime = 0; regime < 5; regime++) {
        static const char *const names[5] = {"exact", "normal", "wide", "special", "code0"};
        operands o = ops_new(64, 96, 2304);
        if (regime == 0)
            fill_exact(&o);
        else if (regime == 1)
            fill_normal(&o, A4W4_ROUND_UP);
        else if (regime == 2)
            fill_wide(&o, 1, 1);
        else if (regime == 3)
            fill_special(&o);
        else
            fill_code0(&o);
        a4w4_fast_stats st;
        result f = result_new(o.M * o.N);
        cr_assert_eq(a4w4_gemm_exact_fast_ex(o.a, o.as, o.w, o.ws, o.M, o.N, o.K, f.bf16, NULL, 1,
                                             A4W4_FAST_AUTO, &st),
                     0);
        cr_log_info("%s: window %zu, general %zu, trivial %zu of %zu outputs", names[regime],
                    st.window, st.general, st.trivial, o.M * o.N);
        if (regime <= 1 || regime == 3)
            cr_assert_eq(st.general, 0, "%s data fits the window", names[regime]);
        else
            cr_assert_eq(st.window, 0, "%s data needs the limbs", names[regime]);
        result_free(&f);
        ops_free(&o);
    }
}

/* ---- block values in fp32 at the ends of their exact range -------------------------------- */

/* A path may compute block values dot * 2^(e - 256) by one fp32 multiply when every e = ex +
 * ey of a tile lies in [130, 383] (a4w4_gemm_fast_avx2_impl.h: 2^(e - 256) is then a normal
 * fp32). Tiles with e at 129 and 130 (values below and at 2^-126, fp32 subnormals below) and
 * at 383 and 384 (values overflowing to Inf; the scale itself not an fp32 at 384), uniform and
 * with one row or lane one code further out, for ordered(1), ordered(3) and the leaf=32 tree
 * (the blocks kernel), with a row of zero dots but one block (+0 whatever its e, so its
 * outputs are ±Inf where the other values overflow), on every path: equal to the plain
 * oracles. */
static void check_tree_leaf32(const operands *o)
{
    a4w4_contract c;
    char err[256];
    cr_assert_eq(a4w4_contract_parse("tree()", &c, err, sizeof err), A4W4_OK, "%s", err);
    size_t n = o->M * o->N;
    result plain = result_new(n), f = result_new(n);
    cr_assert_eq(a4w4_gemm_tree(o->a, o->as, o->w, o->ws, o->M, o->N, o->K, &c.tree, plain.bf16,
                                plain.f32), A4W4_OK);
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            continue;
        cr_assert_eq(a4w4_gemm_tree_fast_ex(o->a, o->as, o->w, o->ws, o->M, o->N, o->K, &c.tree,
                                            f.bf16, f.f32, 1, (a4w4_fast_isa)isa, NULL), A4W4_OK);
        cr_assert_arr_eq(f.bf16, plain.bf16, n * sizeof *f.bf16, "tree() on %s",
                         a4w4_fast_isa_name((a4w4_fast_isa)isa));
        cr_assert_arr_eq(f.f32, plain.f32, n * sizeof *f.f32, "tree() on %s",
                         a4w4_fast_isa_name((a4w4_fast_isa)isa));
    }
    result_free(&plain);
    result_free(&f);
}

Test(fast_fp32_values, both_ends_of_the_exact_fp32_range)
{
    static const int ends[] = {129, 130, 383, 384};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++)
        for (int outlier = 0; outlier < 3; outlier++) {
            int e = ends[i], sa = e / 2, sw = e - e / 2;
            operands o = ops_new(9, 20, 256);
            fill_codes(o.a, o.M * o.K / 2, 7);
            fill_codes(o.w, o.N * o.K / 2, 7);
            memset(o.as, sa, o.M * o.K / 32);
            memset(o.ws, sw, o.N * o.K / 32);
            memset(o.a + 2 * (o.K / 2) + 16, 0, o.K / 2 - 16); /* A row 2: one nonzero block */
            int step = e < 256 ? -1 : 1; /* one code further out */
            if (outlier == 1)
                o.as[3 * (o.K / 32) + 5] = (uint8_t)(sa + step);
            if (outlier == 2)
                o.ws[17 * (o.K / 32) + 2] = (uint8_t)(sw + step);
            char what[64];
            snprintf(what, sizeof what, "e %d, outlier %d", e, outlier);
            check_all_paths(&o, 1, 1, what);
            check_all_paths(&o, 1, 3, what);
            check_tree_leaf32(&o);
            ops_free(&o);
        }
}
