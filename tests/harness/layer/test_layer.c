/* test_layer.c — SGLang's W4A4 MXFP4 linear layer (contracts §6) over the CPU backend pair,
 * one test per branch. Every expectation comes from the oracles (ref quantize, the ordered(1)
 * GEMM oracle, the policy oracle, ref layouts) or from hand-computed constants, never from what
 * the layer just computed; the last tests break the pair on purpose and require the `layers`
 * checker to notice. Criterion runs each test in its own process, so the once-per-process
 * warning starts fresh in each. */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_policy.h"
#include "a4w4_quant.h"
#include "backend.h"
#include "gen.h"
#include "layer.h"
#include "layer_pairs.h"

/* ---- a pair that counts its kernel calls (independent of the checker's own wrapper) ---- */

typedef struct {
    a4w4_layer_ops ops;
    unsigned quantize, relayout, preshuffle, swizzle, gemm_asm, gemm_fallback;
    int fault; /* see fault_* below */
} test_pair;

enum {
    FAULT_NONE = 0,
    FAULT_GEMM_ASM_BIT,        /* gemm_asm flips the low bit of output (1, 3) */
    FAULT_QUANT_NO_SHUFFLE,    /* quantize writes the row-major scale when asked to shuffle */
    FAULT_PRESHUFFLE_IDENTITY, /* preshuffle_weight copies the weight unchanged */
    FAULT_RELAYOUT_ROWMAJOR,   /* act_scale_relayout copies row-major bytes */
    FAULT_FALLBACK_BIT,        /* gemm_fallback flips the low bit of output (0, 0) */
    FAULT_QUANT_ROUND_UP       /* the fallback path quantized in round_up instead of even */
};

static int t_quantize(void *ctx, const void *x, a4w4_in_dtype dt, size_t M, size_t K,
                      a4w4_scale_mode mode, int shuffle, uint8_t *xf, uint8_t *xs)
{
    test_pair *p = ctx;
    p->quantize++;
    if (p->fault == FAULT_QUANT_ROUND_UP && !shuffle)
        mode = A4W4_ROUND_UP;
    if (p->fault == FAULT_QUANT_NO_SHUFFLE && shuffle) {
        size_t bytes = a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(K / 32);
        memset(xs, 0x7F, bytes);
        return a4w4_quantize(x, dt, M, K, mode, 0, xf, xs);
    }
    return a4w4_quantize(x, dt, M, K, mode, shuffle, xf, xs);
}

static int t_relayout(void *ctx, const uint8_t *s, size_t M, size_t cols, uint8_t rf, uint8_t cf,
                      uint8_t *dst)
{
    test_pair *p = ctx;
    p->relayout++;
    if (p->fault == FAULT_RELAYOUT_ROWMAJOR) {
        memset(dst, 0x7F, a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(cols));
        memcpy(dst, s, M * cols);
        return A4W4_OK;
    }
    return a4w4_act_scale_shuffle(s, M, cols, rf, cf, dst);
}

static int t_preshuffle(void *ctx, const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    test_pair *p = ctx;
    p->preshuffle++;
    if (p->fault == FAULT_PRESHUFFLE_IDENTITY) {
        memcpy(dst, w, N * K / 2);
        return A4W4_OK;
    }
    return a4w4_preshuffle(w, N, K, dst);
}

static int t_swizzle(void *ctx, const uint8_t *s, size_t rows, size_t cols, uint8_t *dst)
{
    test_pair *p = ctx;
    p->swizzle++;
    return a4w4_scale_swizzle(s, rows, cols, dst);
}

static int t_gemm_asm(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                      const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    test_pair *p = ctx;
    p->gemm_asm++;
    int rc = a4w4_layer_ops_cpu.gemm_asm(NULL, a, as, w, ws, M, N, K, y);
    if (!rc && p->fault == FAULT_GEMM_ASM_BIT && M > 1 && N > 3)
        y[1 * N + 3] ^= 1;
    return rc;
}

static int t_gemm_fallback(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                           const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    test_pair *p = ctx;
    p->gemm_fallback++;
    int rc = a4w4_layer_ops_cpu.gemm_fallback(NULL, a, as, w, ws, M, N, K, y);
    if (!rc && p->fault == FAULT_FALLBACK_BIT)
        y[0] ^= 1;
    return rc;
}

static void pair_init(test_pair *p, int fault)
{
    memset(p, 0, sizeof *p);
    p->ops = a4w4_layer_ops_cpu;
    p->ops.name = "test";
    p->ops.ctx = p;
    p->ops.quantize = t_quantize;
    p->ops.act_scale_relayout = t_relayout;
    p->ops.preshuffle_weight = t_preshuffle;
    p->ops.swizzle_weight_scale = t_swizzle;
    p->ops.gemm_asm = t_gemm_asm;
    p->ops.gemm_fallback = t_gemm_fallback;
    p->fault = fault;
}

/* ---- data and oracles -------------------------------------------------------------------- */

static uint8_t *w_fp4, *w_scale;
static size_t gN, gK;

static void make_weight(size_t N, size_t K, uint64_t seed)
{
    a4w4_rng r;
    a4w4_rng_init(&r, seed, "test_layer_w", 0);
    free(w_fp4);
    free(w_scale);
    w_fp4 = malloc(N * K / 2);
    w_scale = malloc(N * K / 32);
    for (size_t i = 0; i < N * K / 2; i++)
        w_fp4[i] = (uint8_t)a4w4_rng_next(&r);
    for (size_t i = 0; i < N * K / 32; i++)
        w_scale[i] = (uint8_t)(119 + a4w4_rng_next(&r) % 8);
    gN = N;
    gK = K;
}

/* bf16 [M, K] activations, blocks of magnitude 2^-4..2^4 times an amplitude in [1, 2) */
static uint16_t *make_x_bf16(size_t M, size_t K, uint64_t seed)
{
    a4w4_rng r;
    a4w4_rng_init(&r, seed, "test_layer_x", 0);
    uint16_t *x = malloc(M * K * sizeof *x);
    for (size_t i = 0; i < M * K; i++) {
        int e = (int)((i / 32 * 7 + seed) % 9) - 4;
        double amp = 1.0 + (double)((i / 32 * 2654435761u + seed) % 97) / 97.0; /* [1, 2) */
        double u = ((double)(a4w4_rng_next(&r) % 4001) - 2000.0) / 1000.0 * amp;
        x[i] = a4w4_f32_to_bf16((float)(u * (e >= 0 ? (double)(1 << e) : 1.0 / (1 << -e))));
    }
    return x;
}

static uint16_t *make_bias(size_t N)
{
    a4w4_rng r;
    a4w4_rng_init(&r, 5, "test_layer_bias", 0);
    uint16_t *b = malloc(N * sizeof *b);
    for (size_t i = 0; i < N; i++)
        b[i] = a4w4_f32_to_bf16((float)(((double)(a4w4_rng_next(&r) % 2001) - 1000.0) / 37.0));
    return b;
}

/* ref quantize (row-major, mode) -> ordered(1) oracle -> bias (correctly rounded sum) */
static uint16_t *oracle(const void *x, a4w4_in_dtype dt, size_t M, a4w4_scale_mode mode,
                        const uint16_t *bias)
{
    uint8_t *af = malloc(M * gK / 2), *as = malloc(M * gK / 32);
    uint16_t *y = malloc(M * gN * sizeof *y);
    cr_assert_eq(a4w4_quantize(x, dt, M, gK, mode, 0, af, as), A4W4_OK);
    cr_assert_eq(a4w4_gemm_ordered(af, as, w_fp4, w_scale, M, gN, gK, 1, y, NULL), A4W4_OK);
    if (bias)
        for (size_t i = 0; i < M * gN; i++)
            y[i] = a4w4_layer_oracle_bias_add(y[i], bias[i % gN]);
    free(af);
    free(as);
    return y;
}

static uint16_t *poisoned(size_t n)
{
    uint16_t *o = malloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        o[i] = A4W4_POISON_BF16;
    return o;
}

static void assert_bits(const uint16_t *got, const uint16_t *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s: output %zu: got 0x%04x expected 0x%04x", what, i,
                     got[i], want[i]);
}

static void assert_untouched(const uint16_t *o, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(o[i], A4W4_POISON_BF16, "output %zu was written (0x%04x)", i, o[i]);
}

static a4w4_layer_input in2d(const void *x, a4w4_in_dtype dt, size_t M)
{
    a4w4_layer_input in;
    memset(&in, 0, sizeof in);
    in.kind = A4W4_INPUT_TENSOR_2D;
    in.dims[0] = M;
    in.dims[1] = gK;
    in.dtype = dt;
    in.x = x;
    return in;
}

static a4w4_layer L;
static test_pair P;

static void setup_layer(int fault, size_t N, size_t K, int flag, const char *gfx)
{
    make_weight(N, K, 3);
    pair_init(&P, fault);
    cr_assert_eq(a4w4_layer_init(&L, &P.ops, w_fp4, w_scale, N, K), A4W4_OK, "%s", L.error);
    cr_assert_eq(a4w4_layer_process_after_load(&L, flag, gfx), A4W4_OK, "%s", L.error);
}

/* ---- the bias rule ------------------------------------------------------------------------ */

Test(layer, bias_add_rounds_like_torch_bf16_add)
{
    /* {y, b, expected}: hand-computed RNE of the exact sum */
    static const uint16_t cases[][3] = {
        {0x3F80, 0x3B80, 0x3F80}, /* 1 + 2^-8: a tie, to even (1.0) */
        {0x3F81, 0x3B80, 0x3F82}, /* (1+2^-7) + 2^-8: a tie, to even (1+2^-6) */
        {0x3F80, 0x3B81, 0x3F81}, /* 1 + 2^-8 + 2^-15: above the tie, up */
        {0xBF80, 0xBB80, 0xBF80}, /* negative tie, to even */
        {0x4040, 0xC040, 0x0000}, /* 3 + -3 = +0 */
        {0x8000, 0x8000, 0x8000}, /* -0 + -0 = -0 */
        {0x0000, 0x8000, 0x0000}, /* +0 + -0 = +0 */
        {0x0001, 0x0001, 0x0002}, /* subnormals: 2^-133 + 2^-133 */
        {0x7F7F, 0x3F80, 0x7F7F}, /* max + 1 = max */
        {0x7F7F, 0x7B00, 0x7F80}, /* max + half an ulp: the tie rounds to even = Inf */
        {0x7F7F, 0x7F7F, 0x7F80}, /* overflow */
        {0x7F80, 0x3F80, 0x7F80}, /* Inf + 1 */
        {0x4B80, 0x3F80, 0x4B80}, /* 2^24 + 1: lost */
        {0x4380, 0x3F80, 0x4380}, /* 256 + 1: a tie between 256 and 258, to even (256) */
        {0x4381, 0x3F80, 0x4382}, /* 258 + 1: a tie between 258 and 260, to even (260) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t y = cases[i][0], b = cases[i][1], want = cases[i][2];
        cr_assert_eq(a4w4_layer_bias_add(y, b), want, "layer rule 0x%04x + 0x%04x = 0x%04x, "
                     "expected 0x%04x", y, b, a4w4_layer_bias_add(y, b), want);
        cr_assert_eq(a4w4_layer_oracle_bias_add(y, b), want, "oracle 0x%04x + 0x%04x = 0x%04x, "
                     "expected 0x%04x", y, b, a4w4_layer_oracle_bias_add(y, b), want);
    }
    /* NaN in, NaN out; Inf - Inf is NaN */
    cr_assert_gt(a4w4_layer_bias_add(0x7FC0, 0x3F80) & 0x7FFF, 0x7F80);
    cr_assert_gt(a4w4_layer_bias_add(0x7F80, 0xFF80) & 0x7FFF, 0x7F80);
    cr_assert_eq(a4w4_layer_oracle_bias_add(0x7F80, 0xFF80), 0x7FC0);
}

Test(layer, bias_rule_equals_the_correctly_rounded_sum_on_random_pairs)
{
    /* fp32-then-bf16 (the layer) against double-then-RNE (the oracle): 24 >= 2*8+2 makes the
     * double rounding innocuous; check it on 2^20 random pairs of close and far exponents */
    a4w4_rng r;
    a4w4_rng_init(&r, 1, "bias_pairs", 0);
    for (int i = 0; i < 1 << 20; i++) {
        uint64_t v = a4w4_rng_next(&r);
        uint16_t y = (uint16_t)v, b = (uint16_t)(v >> 16);
        if (i & 1) { /* near y: exponents within 12 of each other, either sign */
            int e = (int)((y >> 7) & 0xFF) + (int)((v >> 32) % 25) - 12;
            e = e < 0 ? 0 : e > 255 ? 255 : e;
            b = (uint16_t)((b & 0x807F) | ((unsigned)e << 7));
        }
        uint16_t a = a4w4_layer_bias_add(y, b), o = a4w4_layer_oracle_bias_add(y, b);
        int an = (a & 0x7FFF) > 0x7F80, on = (o & 0x7FFF) > 0x7F80;
        cr_assert(a == o || (an && on), "0x%04x + 0x%04x: layer 0x%04x oracle 0x%04x", y, b, a,
                  o);
    }
}

/* ---- process_after_load ------------------------------------------------------------------- */

Test(layer, asm_layer_relays_the_weight_exactly_once)
{
    setup_layer(FAULT_NONE, 256, 256, 1, "gfx950");
    a4w4_policy_result want;
    a4w4_policy_decide(1, "gfx950", 256, 2, 256, 8, A4W4_INPUT_TENSOR_2D, 0, &want);
    cr_assert_eq(want.decision, A4W4_DECIDE_ASM);
    cr_assert_eq(L.decision.decision, want.decision);
    cr_assert_eq(L.decision.reason, want.reason);
    cr_assert(L.on_asm);
    cr_assert_eq(P.preshuffle, 1);
    cr_assert_eq(P.swizzle, 1);
    /* the weight now holds the contracts §3.1 / 3.2 layouts of the loaded one */
    uint8_t *sh = malloc(256 * 128), *sw = malloc(256 * 8);
    cr_assert_eq(a4w4_preshuffle(w_fp4, 256, 256, sh), A4W4_OK);
    cr_assert_eq(a4w4_scale_swizzle(w_scale, 256, 8, sw), A4W4_OK);
    cr_assert_eq(memcmp(L.w_fp4, sh, 256 * 128), 0);
    cr_assert_eq(memcmp(L.w_scale, sw, 256 * 8), 0);
    /* a second processing is refused; several applies re-lay nothing */
    cr_assert_eq(a4w4_layer_process_after_load(&L, 1, "gfx950"), A4W4_LAYER_ESTATE);
    cr_assert(strstr(L.error, "already processed"), "%s", L.error);
    uint16_t *x = make_x_bf16(3, 256, 1), *out = poisoned(3 * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, 3);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
    cr_assert_eq(P.preshuffle, 1);
    cr_assert_eq(P.swizzle, 1);
    cr_assert_eq(P.gemm_asm, 4);
    cr_assert_eq(P.gemm_fallback, 0);
    cr_assert_eq(memcmp(L.w_fp4, sh, 256 * 128), 0);
    cr_assert_eq(a4w4_layer_warn_count(), 0);
    free(sh);
    free(sw);
    free(x);
    free(out);
    a4w4_layer_free(&L);
}

Test(layer, flag_off_and_other_devices_keep_the_fallback_without_warning)
{
    static const struct {
        int flag;
        const char *gfx;
        a4w4_policy_reason reason;
    } t[] = {{0, "gfx950", A4W4_REASON_FLAG_OFF},
             {0, "gfx942", A4W4_REASON_FLAG_OFF},
             {1, "gfx942", A4W4_REASON_NOT_GFX95X},
             {1, "gfx1100", A4W4_REASON_NOT_GFX95X}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        setup_layer(FAULT_NONE, 256, 256, t[i].flag, t[i].gfx);
        cr_assert_eq(L.decision.decision, A4W4_DECIDE_TRITON);
        cr_assert_eq(L.decision.reason, t[i].reason, "%s: reason %s", t[i].gfx,
                     a4w4_policy_reason_name(L.decision.reason));
        cr_assert_not(L.on_asm);
        cr_assert_eq(P.preshuffle + P.swizzle, 0);
        cr_assert_eq(memcmp(L.w_fp4, w_fp4, 256 * 128), 0);
        cr_assert_eq(memcmp(L.w_scale, w_scale, 256 * 8), 0);
        uint16_t *x = make_x_bf16(5, 256, 2), *out = poisoned(5 * 256);
        a4w4_layer_input in = in2d(x, A4W4_IN_BF16, 5);
        cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
        cr_assert_eq(P.gemm_fallback, 1);
        cr_assert_eq(P.gemm_asm, 0);
        uint16_t *want = oracle(x, A4W4_IN_BF16, 5, A4W4_EVEN, NULL);
        assert_bits(out, want, 5 * 256, t[i].gfx);
        free(x);
        free(out);
        free(want);
        a4w4_layer_free(&L);
    }
    cr_assert_eq(a4w4_layer_warn_count(), 0, "flag off / not gfx95x must not warn");
}

static unsigned handler_calls;
static char handler_msg[400];
static void count_warning(const char *m, void *user)
{
    cr_assert_eq(user, &handler_calls);
    handler_calls++;
    snprintf(handler_msg, sizeof handler_msg, "%s", m);
}

Test(layer, fallback_warning_is_emitted_once_per_process)
{
    a4w4_layer_set_warn_handler(count_warning, &handler_calls);
    /* N = 144: weight scale [144, 8] not swizzle-supported (contracts §6.2) */
    setup_layer(FAULT_NONE, 144, 256, 1, "gfx950");
    a4w4_policy_result want;
    a4w4_policy_decide(1, "gfx950", 144, 2, 144, 8, A4W4_INPUT_TENSOR_2D, 0, &want);
    cr_assert_eq(L.decision.reason, A4W4_REASON_SCALE_UNSUPPORTED);
    cr_assert(want.warn_once);
    cr_assert_eq(handler_calls, 1);
    cr_assert_str_eq(handler_msg, want.message);
    cr_assert_str_eq(a4w4_layer_warning(), want.message);
    cr_assert(L.warned);
    cr_assert_eq(P.preshuffle + P.swizzle, 0);
    a4w4_layer_free(&L);
    /* N = 128: the small-N fence (contracts §6.3): warns too, but the process already did */
    setup_layer(FAULT_NONE, 128, 256, 1, "gfx950");
    cr_assert_eq(L.decision.reason, A4W4_REASON_SMALL_N);
    cr_assert(L.decision.warn_once);
    cr_assert_eq(handler_calls, 1, "warned %u times", handler_calls);
    cr_assert_not(L.warned);
    cr_assert_eq(a4w4_layer_warn_count(), 1);
    a4w4_layer_free(&L);
    /* a new process (reset) warns again */
    a4w4_layer_warn_reset();
    setup_layer(FAULT_NONE, 128, 256, 1, "gfx950");
    cr_assert_eq(handler_calls, 2);
    cr_assert(strstr(handler_msg, "N 128 <= 128"), "%s", handler_msg);
    a4w4_layer_free(&L);
    a4w4_layer_set_warn_handler(NULL, NULL);
}

/* ---- apply on an ASM layer ---------------------------------------------------------------- */

Test(layer, asm_2d_is_bit_exact_against_the_oracle_path_with_and_without_bias)
{
    /* M = 40 crosses a 32-row group of the activation-scale shuffle; K/32 = 16 */
    setup_layer(FAULT_NONE, 256, 512, 1, "gfx950");
    const size_t M = 40;
    uint16_t *x = make_x_bf16(M, 512, 4), *bias = make_bias(256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
    for (int b = 0; b < 2; b++) {
        uint16_t *out = poisoned(M * 256 + 16);
        cr_assert_eq(a4w4_layer_apply(&L, &in, b ? bias : NULL, out), A4W4_OK, "%s", L.error);
        cr_assert_eq(L.last.decision, A4W4_DECIDE_ASM);
        cr_assert_eq(L.last.reason, A4W4_REASON_ASM_QUANTIZE);
        cr_assert_eq(L.out_ndim, 2);
        uint16_t *want = oracle(x, A4W4_IN_BF16, M, A4W4_ROUND_UP, b ? bias : NULL);
        assert_bits(out, want, M * 256, b ? "2-D + bias" : "2-D");
        assert_untouched(out + M * 256, 16);
        free(out);
        free(want);
    }
    cr_assert_eq(P.quantize, 2);
    cr_assert_eq(P.gemm_asm, 2);
    free(x);
    free(bias);
    a4w4_layer_free(&L);
}

Test(layer, asm_fp32_activation_is_quantized_from_fp32)
{
    setup_layer(FAULT_NONE, 256, 256, 1, "gfx955");
    const size_t M = 7;
    float *x = malloc(M * 256 * sizeof *x);
    for (size_t i = 0; i < M * 256; i++)
        x[i] = (float)((double)((i * 2654435761u) % 10007) / 1234.567 - 4.0);
    uint16_t *out = poisoned(M * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_F32, M);
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
    uint16_t *want = oracle(x, A4W4_IN_F32, M, A4W4_ROUND_UP, NULL);
    assert_bits(out, want, M * 256, "fp32 2-D");
    free(x);
    free(out);
    free(want);
    a4w4_layer_free(&L);
}

Test(layer, asm_3d_is_flattened_and_reshaped_back)
{
    setup_layer(FAULT_NONE, 256, 256, 1, "gfx950");
    const size_t B = 5, S = 7, M = B * S;
    uint16_t *x = make_x_bf16(M, 256, 6), *bias = make_bias(256), *out = poisoned(M * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
    in.kind = A4W4_INPUT_TENSOR_3D;
    in.dims[0] = B;
    in.dims[1] = S;
    in.dims[2] = 256;
    cr_assert_eq(a4w4_layer_apply(&L, &in, bias, out), A4W4_OK, "%s", L.error);
    cr_assert_eq(L.last.reason, A4W4_REASON_ASM_FLATTEN);
    cr_assert_eq(L.out_ndim, 3);
    cr_assert_eq(L.out_dims[0], B);
    cr_assert_eq(L.out_dims[1], S);
    cr_assert_eq(L.out_dims[2], 256);
    uint16_t *want = oracle(x, A4W4_IN_BF16, M, A4W4_ROUND_UP, bias);
    assert_bits(out, want, M * 256, "3-D");
    free(x);
    free(bias);
    free(out);
    free(want);
    a4w4_layer_free(&L);
}

Test(layer, asm_2tuple_gets_its_scale_relaid_and_equals_the_plain_path)
{
    setup_layer(FAULT_NONE, 256, 256, 1, "gfx950");
    const size_t M = 33;
    uint16_t *x = make_x_bf16(M, 256, 8), *bias = make_bias(256);
    uint8_t *xf = malloc(M * 128), *xs = malloc(M * 8);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_BF16, M, 256, A4W4_ROUND_UP, 0, xf, xs), A4W4_OK);
    uint16_t *plain = poisoned(M * 256), *tup = poisoned(M * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
    cr_assert_eq(a4w4_layer_apply(&L, &in, bias, plain), A4W4_OK, "%s", L.error);
    a4w4_layer_input t;
    memset(&t, 0, sizeof t);
    t.kind = A4W4_INPUT_TUPLE2;
    t.dims[0] = M;
    t.dims[1] = 256;
    t.x_fp4 = xf;
    t.x_scale = xs;
    unsigned q0 = P.quantize;
    cr_assert_eq(a4w4_layer_apply(&L, &t, bias, tup), A4W4_OK, "%s", L.error);
    cr_assert_eq(L.last.reason, A4W4_REASON_ASM_RELAYOUT);
    cr_assert_eq(P.relayout, 1);
    cr_assert_eq(P.quantize, q0, "a 2-tuple is used as is, not quantized again");
    assert_bits(tup, plain, M * 256, "2-tuple vs plain");
    uint16_t *want = oracle(x, A4W4_IN_BF16, M, A4W4_ROUND_UP, bias);
    assert_bits(tup, want, M * 256, "2-tuple vs oracle");
    free(x);
    free(bias);
    free(xf);
    free(xs);
    free(plain);
    free(tup);
    free(want);
    a4w4_layer_free(&L);
}

Test(layer, asm_rejects_3_5_and_other_tuples_with_the_policy_message)
{
    setup_layer(FAULT_NONE, 256, 256, 1, "gfx950");
    const size_t M = 4;
    uint16_t *x = make_x_bf16(M, 256, 9), *bias = make_bias(256), cat[4 * 4 * 8] = {0};
    uint8_t xf[4 * 128] = {0}, xs[4 * 8] = {0};
    static const struct {
        a4w4_input_kind kind;
        int len;
        const char *needle;
    } t[] = {{A4W4_INPUT_TUPLE3, 3, "3-tuple"},
             {A4W4_INPUT_TUPLE5, 5, "5-tuple"},
             {A4W4_INPUT_TUPLE_OTHER, 4, "4-tuple"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (int b = 0; b < 2; b++) {
            a4w4_layer_input in;
            memset(&in, 0, sizeof in);
            in.kind = t[i].kind;
            in.tuple_len = t[i].kind == A4W4_INPUT_TUPLE_OTHER ? t[i].len : 0;
            in.dims[0] = M;
            in.dims[1] = 256;
            in.dtype = A4W4_IN_BF16;
            in.x = x;
            in.x_fp4 = xf;
            in.x_scale = xs;
            in.cat_y = cat;
            in.D = 4;
            in.S1 = 40;
            in.S2 = 24;
            in.S3 = 8;
            a4w4_policy_result want;
            a4w4_policy_decide(1, "gfx950", 256, 2, 256, 8, t[i].kind, in.tuple_len, &want);
            cr_assert_eq(want.decision, A4W4_DECIDE_REJECT);
            uint16_t *out = poisoned(M * 256 + 64);
            unsigned calls = P.quantize + P.relayout + P.gemm_asm + P.gemm_fallback;
            cr_assert_eq(a4w4_layer_apply(&L, &in, b ? bias : NULL, out), A4W4_LAYER_EREJECT);
            cr_assert_str_eq(L.error, want.message);
            cr_assert(strstr(L.error, t[i].needle), "%s", L.error);
            cr_assert(strstr(L.error, "unset SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM"), "%s", L.error);
            cr_assert_eq(L.last.decision, A4W4_DECIDE_REJECT);
            cr_assert_eq(L.last.reason, want.reason);
            assert_untouched(out, M * 256 + 64);
            cr_assert_eq(P.quantize + P.relayout + P.gemm_asm + P.gemm_fallback, calls,
                         "a rejected input ran a kernel");
            free(out);
        }
    /* the layer keeps working afterwards */
    uint16_t *out = poisoned(M * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
    cr_assert_eq(P.preshuffle, 1);
    free(x);
    free(bias);
    free(out);
    a4w4_layer_free(&L);
}

/* ---- apply on a fallback layer ------------------------------------------------------------ */

Test(layer, fallback_takes_3_and_5_tuples_on_the_triton_path)
{
    /* N = 144 (not a multiple of 32): kept on Triton; the policy says triton for tuples */
    setup_layer(FAULT_NONE, 144, 256, 1, "gfx950");
    const size_t M = 6, N = 144, D = 4, S1 = 20, S2 = 16, S3 = 5;
    uint16_t *x = make_x_bf16(M, 256, 10), *bias = make_bias(N);
    uint16_t *want = oracle(x, A4W4_IN_BF16, M, A4W4_EVEN, NULL);
    uint16_t *want_b = oracle(x, A4W4_IN_BF16, M, A4W4_EVEN, bias);
    a4w4_policy_result pol;
    /* 3-tuple (x, None, y): the pre-quant form quantizes x (Triton's even rule) */
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
    in.kind = A4W4_INPUT_TUPLE3;
    uint16_t *out = poisoned(M * N);
    cr_assert_eq(a4w4_layer_apply(&L, &in, bias, out), A4W4_OK, "%s", L.error);
    a4w4_policy_decide(1, "gfx950", N, 2, N, 8, A4W4_INPUT_TUPLE3, 0, &pol);
    cr_assert_eq(L.last.decision, A4W4_DECIDE_TRITON);
    cr_assert_eq(L.last.reason, pol.reason);
    assert_bits(out, want_b, M * N, "3-tuple pre-quant");
    /* 3-tuple (x_fp4, x_scale, y): pre-quantized */
    uint8_t *xf = malloc(M * 128), *xs = malloc(M * 8);
    cr_assert_eq(a4w4_quantize(x, A4W4_IN_BF16, M, 256, A4W4_EVEN, 0, xf, xs), A4W4_OK);
    in.x = NULL;
    in.x_fp4 = xf;
    in.x_scale = xs;
    free(out);
    out = poisoned(M * N);
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
    assert_bits(out, want, M * N, "3-tuple pre-quantized");
    /* 5-tuple (x, y, S1, S2, dtype): split + cat, gathered here from the oracle */
    uint16_t cat[6 * 4 * 5];
    for (size_t i = 0; i < sizeof cat / sizeof cat[0]; i++)
        cat[i] = (uint16_t)(0x3F00 + i);
    a4w4_layer_input t5 = in2d(x, A4W4_IN_BF16, M);
    t5.kind = A4W4_INPUT_TUPLE5;
    t5.cat_y = cat;
    t5.D = D;
    t5.S1 = S1;
    t5.S2 = S2;
    t5.S3 = S3;
    size_t n5 = a4w4_layer_out_elems(&L, &t5);
    cr_assert_eq(n5, M * D * (S1 + S3) + M * D * S2);
    free(out);
    out = poisoned(n5 + 8);
    cr_assert_eq(a4w4_layer_apply(&L, &t5, NULL, out), A4W4_OK, "%s", L.error);
    for (size_t m = 0; m < M; m++)
        for (size_t d = 0; d < D; d++) {
            for (size_t j = 0; j < S1 + S3; j++) {
                uint16_t e = j < S1 ? want[m * N + d * 36 + j] : cat[(m * D + d) * S3 + j - S1];
                cr_assert_eq(out[(m * D + d) * (S1 + S3) + j], e, "c1[%zu][%zu][%zu]", m, d, j);
            }
            for (size_t j = 0; j < S2; j++)
                cr_assert_eq(out[M * D * (S1 + S3) + (m * D + d) * S2 + j],
                             want[m * N + d * 36 + S1 + j], "c2[%zu][%zu][%zu]", m, d, j);
        }
    assert_untouched(out + n5, 8);
    /* a bias with a 5-tuple would never reach the outputs in SGLang: refused */
    free(out);
    out = poisoned(n5);
    unsigned calls = P.quantize + P.gemm_fallback;
    cr_assert_eq(a4w4_layer_apply(&L, &t5, bias, out), A4W4_EINVAL);
    cr_assert_str_eq(L.error, A4W4_LAYER_MSG_TUPLE5_BIAS);
    assert_untouched(out, n5);
    cr_assert_eq(P.quantize + P.gemm_fallback, calls);
    /* N != D*(S1+S2) */
    t5.S1 = 21;
    cr_assert_eq(a4w4_layer_apply(&L, &t5, NULL, out), A4W4_EINVAL);
    cr_assert(strstr(L.error, "D*(S1+S2)"), "%s", L.error);
    assert_untouched(out, n5);
    /* other tuple lengths: SGLang's Triton path asserts (policy: triton) */
    a4w4_layer_input t4 = in2d(x, A4W4_IN_BF16, M);
    t4.kind = A4W4_INPUT_TUPLE_OTHER;
    t4.tuple_len = 4;
    cr_assert_eq(a4w4_layer_apply(&L, &t4, NULL, out), A4W4_EINVAL);
    cr_assert(strstr(L.error, "4-tuple"), "%s", L.error);
    cr_assert_eq(L.last.decision, A4W4_DECIDE_TRITON);
    assert_untouched(out, n5);
    cr_assert_eq(P.gemm_asm, 0);
    free(x);
    free(bias);
    free(want);
    free(want_b);
    free(xf);
    free(xs);
    free(out);
    a4w4_layer_free(&L);
}

Test(layer, each_path_quantizes_in_its_own_mode)
{
    /* the ASM path quantizes with round_up (per_1x32_f4_quant), the Triton path with the even
     * rule (dynamic_mxfp4_quant); the data make the two modes differ */
    const size_t M = 8;
    make_weight(256, 256, 3);
    uint16_t *x = make_x_bf16(M, 256, 11);
    uint16_t *up = oracle(x, A4W4_IN_BF16, M, A4W4_ROUND_UP, NULL);
    uint16_t *ev = oracle(x, A4W4_IN_BF16, M, A4W4_EVEN, NULL);
    cr_assert_neq(memcmp(up, ev, M * 256 * 2), 0, "test data must tell the modes apart");
    static const struct {
        int flag;
        const char *gfx;
    } t[] = {{1, "gfx950"}, {0, "gfx950"}};
    for (int i = 0; i < 2; i++) {
        setup_layer(FAULT_NONE, 256, 256, t[i].flag, t[i].gfx);
        uint16_t *out = poisoned(M * 256);
        a4w4_layer_input in = in2d(x, A4W4_IN_BF16, M);
        cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_OK, "%s", L.error);
        assert_bits(out, L.on_asm ? up : ev, M * 256, L.on_asm ? "asm" : "fallback");
        free(out);
        a4w4_layer_free(&L);
    }
    free(x);
    free(up);
    free(ev);
}

Test(layer, bad_inputs_and_state_are_refused_with_the_output_untouched)
{
    make_weight(256, 256, 3);
    pair_init(&P, FAULT_NONE);
    cr_assert_eq(a4w4_layer_init(&L, &P.ops, w_fp4, w_scale, 256, 100), A4W4_EINVAL);
    cr_assert(strstr(L.error, "K=100"), "%s", L.error);
    cr_assert_eq(a4w4_layer_init(&L, &P.ops, w_fp4, w_scale, 256, 256), A4W4_OK);
    uint16_t *x = make_x_bf16(2, 256, 12), *out = poisoned(2 * 256);
    a4w4_layer_input in = in2d(x, A4W4_IN_BF16, 2);
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_LAYER_ESTATE);
    cr_assert(strstr(L.error, "process_after_load"), "%s", L.error);
    cr_assert_eq(a4w4_layer_process_after_load(&L, 1, "gfx950"), A4W4_OK);
    in.dims[1] = 512;
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_EINVAL);
    cr_assert(strstr(L.error, "K=512") && strstr(L.error, "K=256"), "%s", L.error);
    in.dims[1] = 256;
    in.dtype = A4W4_IN_FP16;
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_EINVAL);
    cr_assert(strstr(L.error, "bf16 or fp32"), "%s", L.error);
    in.dtype = A4W4_IN_BF16;
    in.x = NULL;
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_EINVAL);
    in.x = x;
    in.dims[0] = 0;
    cr_assert_eq(a4w4_layer_apply(&L, &in, NULL, out), A4W4_EINVAL);
    assert_untouched(out, 2 * 256);
    cr_assert_eq(P.quantize + P.gemm_asm, 0);
    free(x);
    free(out);
    a4w4_layer_free(&L);
}

/* ---- the `layers` checker ------------------------------------------------------------------ */

static int run_matrix(const a4w4_layer_ops *ops, size_t qwen_n, size_t *rejected,
                      size_t *refused, size_t *asm_cases, size_t *ncases)
{
    a4w4_layer_group g[64];
    size_t n = a4w4_layer_matrix(qwen_n, g, 64);
    cr_assert_eq(n, 36);
    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP];
    int fails = 0;
    *rejected = *refused = *asm_cases = *ncases = 0;
    for (size_t i = 0; i < n; i++) {
        char err[256];
        int f;
        cr_assert_eq(a4w4_layer_check_group(ops, &g[i], res, &f, err, sizeof err), A4W4_ST_OK,
                     "%s", err);
        fails += f;
        for (size_t c = 0; c < A4W4_LAYER_CASES_PER_GROUP; c++) {
            (*ncases)++;
            *rejected += res[c].expected.decision == A4W4_DECIDE_REJECT;
            *refused += !res[c].computed && res[c].expected.decision != A4W4_DECIDE_REJECT;
            *asm_cases += res[c].expected.decision == A4W4_DECIDE_ASM;
            if (!res[c].pass && ops == &a4w4_layer_ops_cpu)
                cr_log_error("%s: %s", res[c].name, res[c].note);
        }
    }
    return fails;
}

Test(layer, the_matrix_passes_on_the_cpu_pair)
{
    size_t rej, ref, asmc, n;
    /* N_qwen = 256 keeps this fast; the CLI test runs the 5120 matrix */
    int fails = run_matrix(&a4w4_layer_ops_cpu, 256, &rej, &ref, &asmc, &n);
    cr_assert_eq(n, 360);
    cr_assert_eq(fails, 0);
    cr_assert_eq(rej, 4, "one ASM layer (on, gfx950, K=256) x {3-, 5-tuple} x bias");
    cr_assert_eq(asmc, 6, "one ASM layer x {2-D, 3-D, 2-tuple} x bias");
    cr_assert_eq(ref, 35, "every fallback layer refuses its 5-tuple with a bias");
}

static int group_fails(int fault, int flag, const char *gfx, size_t N,
                       a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP])
{
    test_pair tp;
    pair_init(&tp, fault);
    a4w4_layer_group g = {flag, gfx, N, 256, 2, 3, 8};
    char err[256];
    int f;
    cr_assert_eq(a4w4_layer_check_group(&tp.ops, &g, res, &f, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    return f;
}

Test(layer, the_checker_fails_a_broken_pair)
{
    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP];
    cr_assert_eq(group_fails(FAULT_NONE, 1, "gfx950", 256, res), 0, "%s", res[0].note);
    /* one flipped output bit of the ASM GEMM: the computed cases of an ASM layer fail (with a
     * bias the flip can round away, so only the bias-free ones are certain) */
    cr_assert_geq(group_fails(FAULT_GEMM_ASM_BIT, 1, "gfx950", 256, res), 3);
    cr_assert(!res[0].pass && !res[2].pass && !res[4].pass);
    cr_assert(strstr(res[0].note, "differ from the oracle"), "%s", res[0].note);
    cr_assert_eq(res[0].mismatches, 1);
    cr_assert_eq(res[0].first_index, 1 * 256 + 3);
    cr_assert(res[6].pass, "a rejected 3-tuple runs no GEMM: %s", res[6].note);
    /* a quantizer that ignores shuffle=True */
    cr_assert_geq(group_fails(FAULT_QUANT_NO_SHUFFLE, 1, "gfx950", 256, res), 4);
    cr_assert_not(res[0].pass);
    /* a preshuffle that leaves the weight row-major */
    cr_assert_eq(group_fails(FAULT_PRESHUFFLE_IDENTITY, 1, "gfx950", 256, res), 10);
    /* a 2-tuple scale re-layout that keeps the row-major bytes */
    cr_assert_eq(group_fails(FAULT_RELAYOUT_ROWMAJOR, 1, "gfx950", 256, res), 2);
    cr_assert_not(res[4].pass);
    cr_assert(strstr(res[4].note, "differ") || strstr(res[4].note, "2-D output"), "%s",
              res[4].note);
    /* the fallback GEMM broken: every computed case of a fallback layer fails */
    cr_assert_eq(group_fails(FAULT_FALLBACK_BIT, 0, "gfx950", 256, res), 9);
    cr_assert(res[9].pass, "the refused 5-tuple + bias computes nothing: %s", res[9].note);
    /* the fallback quantizing in the ASM path's mode */
    cr_assert_geq(group_fails(FAULT_QUANT_ROUND_UP, 0, "gfx942", 256, res), 1);
    /* a pair whose contract has no bit-exact oracle cannot pass computed cases */
    test_pair tp;
    pair_init(&tp, FAULT_NONE);
    tp.ops.contract = "bounded";
    a4w4_layer_group g = {1, "gfx950", 256, 256, 2, 3, 8};
    char err[256];
    int f;
    cr_assert_eq(a4w4_layer_check_group(&tp.ops, &g, res, &f, err, sizeof err), A4W4_ST_OK);
    cr_assert_eq(f, 6);
    cr_assert(strstr(res[0].note, "no bit-exact oracle"), "%s", res[0].note);
}

Test(layer, pairs_are_listed_and_found)
{
    size_t n;
    const a4w4_layer_ops *const *l = a4w4_layer_ops_list(&n);
    cr_assert_geq(n, 1);
    cr_assert_eq(l[0], &a4w4_layer_ops_cpu);
    cr_assert_eq(a4w4_layer_ops_find("cpu"), &a4w4_layer_ops_cpu);
    cr_assert_null(a4w4_layer_ops_find("nope"));
    cr_assert_str_eq(a4w4_layer_ops_cpu.contract, "ordered(1)");
}

Test(layer, a_group_that_cannot_run_is_a_status_not_a_verdict)
{
    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP];
    char err[256] = "";
    int f = -1;
    a4w4_layer_group bad_k = {1, "gfx950", 256, 250, 2, 3, 8}; /* K % 32 != 0 */
    cr_assert_eq(a4w4_layer_check_group(&a4w4_layer_ops_cpu, &bad_k, res, &f, err, sizeof err),
                 A4W4_ST_BADINPUT);
    cr_expect_eq(f, 0);
    cr_expect(strstr(err, "K a multiple of 32"), "%s", err);
    a4w4_layer_group no_gfx = {1, NULL, 256, 256, 2, 3, 8};
    cr_expect_eq(a4w4_layer_check_group(&a4w4_layer_ops_cpu, &no_gfx, res, NULL, err, sizeof err),
                 A4W4_ST_BADINPUT);
}

/* Parity of the two paths (flag on vs the fallback it replaces): a 2-D input on an ASM layer
 * carries the ASM output against the pair's fallback path on the same activation, with the
 * peers' criteria on the difference; round_up and even quantize some blocks differently, so
 * the two paths differ; a fallback layer has no parity to report. */
Test(layer_check, an_asm_layer_reports_parity_with_the_fallback_path)
{
    a4w4_layer_group on = {1, "gfx950", 256, 256, 2, 3, 8}, off = on;
    off.flag_on = 0;
    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP];
    char err[256];
    int f;
    cr_assert_eq(a4w4_layer_check_group(&a4w4_layer_ops_cpu, &on, res, &f, err, sizeof err),
                 A4W4_ST_OK, "%s", err);
    size_t with = 0;
    for (size_t c = 0; c < A4W4_LAYER_CASES_PER_GROUP; c++) {
        cr_expect_eq(res[c].has_parity, res[c].kind == A4W4_INPUT_TENSOR_2D, "%s", res[c].name);
        if (!res[c].has_parity)
            continue;
        with++;
        cr_expect_eq(res[c].parity.n, 6 * 256);
        cr_expect_lt(res[c].parity.equal, res[c].parity.n, "round_up vs even moves outputs");
        cr_expect_gt(res[c].parity.ntol, 0);
    }
    cr_expect_eq(with, 2, "the 2-D input with and without bias");
    cr_assert_eq(a4w4_layer_check_group(&a4w4_layer_ops_cpu, &off, res, &f, err, sizeof err),
                 A4W4_ST_OK, "%s", err);
    for (size_t c = 0; c < A4W4_LAYER_CASES_PER_GROUP; c++)
        cr_expect_not(res[c].has_parity, "%s", res[c].name);
}
