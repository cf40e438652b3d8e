/* layer.c — the SGLang W4A4 MXFP4 linear layer over a backend pair, and the `layers` checks
 * (see layer.h; contracts §6). Prints nothing. */
#include "layer.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "fsutil.h"
#include "backend.h"
#include "check.h"
#include "gen.h"

const char *a4w4_layer_strerror(int status)
{
    switch (status) {
    case A4W4_LAYER_EREJECT: return "the layer policy rejects this input (contracts §6.5)";
    case A4W4_LAYER_ESTATE: return "the layer is not processed, or already processed";
    case A4W4_LAYER_EBACKEND: return "a backend-pair kernel failed";
    default: return a4w4_status_str(status);
    }
}

/* ---- the once-per-process warning ------------------------------------------------------ */

static atomic_uint g_warn_count;
static char g_warn_msg[sizeof(((a4w4_policy_result *)0)->message)];
static a4w4_layer_warn_fn g_warn_fn;
static void *g_warn_user;

void a4w4_layer_set_warn_handler(a4w4_layer_warn_fn fn, void *user)
{
    g_warn_fn = fn;
    g_warn_user = user;
}

unsigned a4w4_layer_warn_count(void)
{
    return atomic_load(&g_warn_count);
}

const char *a4w4_layer_warning(void)
{
    return g_warn_msg;
}

void a4w4_layer_warn_reset(void)
{
    atomic_store(&g_warn_count, 0);
    g_warn_msg[0] = '\0';
}

/* 1 when this call emitted the process's warning. */
static int warn_once(const char *msg)
{
    unsigned zero = 0;
    if (!atomic_compare_exchange_strong(&g_warn_count, &zero, 1u))
        return 0;
    snprintf(g_warn_msg, sizeof g_warn_msg, "%s", msg);
    if (g_warn_fn)
        g_warn_fn(g_warn_msg, g_warn_user);
    return 1;
}

/* ---- the bias rule --------------------------------------------------------------------- */

uint16_t a4w4_layer_bias_add(uint16_t y, uint16_t b)
{
    /* fp32 add of two exactly widened bf16 values, then RNE to bf16 (torch's bf16 add). */
    float s = a4w4_bf16_to_f32(y) + a4w4_bf16_to_f32(b);
    return a4w4_f32_to_bf16(s);
}

/* ---- the layer ------------------------------------------------------------------------- */

#define ERR(L, ...) snprintf((L)->error, sizeof (L)->error, __VA_ARGS__)

int a4w4_layer_init(a4w4_layer *L, const a4w4_layer_ops *ops, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t N, size_t K)
{
    if (!L)
        return A4W4_EINVAL;
    memset(L, 0, sizeof *L);
    if (!ops || !w_fp4 || !w_scale) {
        ERR(L, "layer: ops, w_fp4 and w_scale must not be NULL");
        return A4W4_EINVAL;
    }
    if (!N || !K || K % 32) {
        ERR(L, "layer: weight [N=%zu, K=%zu]: N and K must be >= 1 and K a multiple of 32", N,
            K);
        return A4W4_EINVAL;
    }
    L->ops = ops;
    L->N = N;
    L->K = K;
    L->asm_mode = A4W4_ROUND_UP;
    L->fallback_mode = A4W4_EVEN;
    L->w_fp4 = malloc(N * K / 2);
    L->w_scale = malloc(N * K / 32);
    if (!L->w_fp4 || !L->w_scale) {
        a4w4_layer_free(L);
        ERR(L, "layer: weight [N=%zu, K=%zu]: out of memory", N, K);
        return A4W4_ENOMEM;
    }
    memcpy(L->w_fp4, w_fp4, N * K / 2);
    memcpy(L->w_scale, w_scale, N * K / 32);
    return A4W4_OK;
}

void a4w4_layer_free(a4w4_layer *L)
{
    if (!L)
        return;
    free(L->w_fp4);
    free(L->w_scale);
    L->w_fp4 = NULL;
    L->w_scale = NULL;
}

int a4w4_layer_process_after_load(a4w4_layer *L, int flag_on, const char *gfx)
{
    if (!L)
        return A4W4_EINVAL;
    if (!gfx) {
        ERR(L, "process_after_load: gfx must not be NULL");
        return A4W4_EINVAL;
    }
    if (L->processed) {
        ERR(L, "process_after_load: the layer is already processed (its weight is re-laid at "
               "most once, contracts §6.4)");
        return A4W4_LAYER_ESTATE;
    }
    size_t N = L->N, K = L->K;
    a4w4_policy_result r;
    int rc = a4w4_policy_decide(flag_on, gfx, N, 2, N, K / 32, A4W4_INPUT_TENSOR_2D, 0, &r);
    if (rc) {
        ERR(L, "process_after_load: the policy refused flag=%d gfx='%s' N=%zu", flag_on, gfx, N);
        return A4W4_EINVAL;
    }
    if (r.layer_asm) {
        uint8_t *ws = malloc(N * K / 32), *wf = malloc(N * K / 2);
        if (!ws || !wf) {
            free(ws);
            free(wf);
            ERR(L, "process_after_load: out of memory for the re-laid weight [%zu, %zu]", N, K);
            return A4W4_ENOMEM;
        }
        L->swizzles++;
        rc = L->ops->swizzle_weight_scale(L->ops->ctx, L->w_scale, N, K / 32, ws);
        if (!rc) {
            L->preshuffles++;
            rc = L->ops->preshuffle_weight(L->ops->ctx, L->w_fp4, N, K, wf);
        }
        if (rc) {
            free(ws);
            free(wf);
            ERR(L, "process_after_load: %s: weight [%zu, %zu] layout kernel failed: %s",
                L->ops->name, N, K, a4w4_layer_strerror(rc));
            return A4W4_LAYER_EBACKEND;
        }
        free(L->w_scale);
        free(L->w_fp4);
        L->w_scale = ws;
        L->w_fp4 = wf;
        L->on_asm = 1;
    } else if (r.warn_once) {
        L->warned = warn_once(r.message);
    }
    L->decision = r;
    L->flag_on = flag_on;
    snprintf(L->gfx, sizeof L->gfx, "%s", gfx);
    L->processed = 1;
    return A4W4_OK;
}

static int plain_kind(a4w4_input_kind k)
{
    return k == A4W4_INPUT_TENSOR_2D || k == A4W4_INPUT_TENSOR_3D;
}

/* Rows and K of an input; 0 rows when a dimension is zero or B*S overflows. */
static void input_mk(const a4w4_layer_input *in, size_t *M, size_t *K)
{
    if (in->kind == A4W4_INPUT_TENSOR_3D) {
        size_t B = in->dims[0], S = in->dims[1];
        *M = (B && S && B <= SIZE_MAX / S) ? B * S : 0;
        *K = in->dims[2];
    } else {
        *M = in->dims[0];
        *K = in->dims[1];
    }
}

size_t a4w4_layer_out_elems(const a4w4_layer *L, const a4w4_layer_input *in)
{
    if (!L || !in)
        return 0;
    size_t M, K;
    input_mk(in, &M, &K);
    if (in->kind == A4W4_INPUT_TUPLE5)
        return M * in->D * (in->S1 + in->S3) + M * in->D * in->S2;
    return M * L->N;
}

static const char *kind_text(const a4w4_layer_input *in, char *buf, size_t len)
{
    switch (in->kind) {
    case A4W4_INPUT_TENSOR_2D: return "2-D activation";
    case A4W4_INPUT_TENSOR_3D: return "3-D activation";
    case A4W4_INPUT_TUPLE2: return "2-tuple";
    case A4W4_INPUT_TUPLE3: return "3-tuple";
    case A4W4_INPUT_TUPLE5: return "5-tuple";
    default: snprintf(buf, len, "%d-tuple", in->tuple_len); return buf;
    }
}

/* Shape and pointer rules of an input the policy let through (contracts §6.5 table in layer.h). */
static int validate(a4w4_layer *L, const a4w4_layer_input *in, const uint16_t *bias, size_t M,
                    size_t K)
{
    char kb[32];
    const char *what = kind_text(in, kb, sizeof kb);
    if (in->kind == A4W4_INPUT_TUPLE_OTHER) {
        ERR(L, "apply: %s input on a Triton-path layer: SGLang takes (x, x_s), (x, x_s, y) or "
               "(x, y, S1, S2, out_dtype) only (contracts §6.5)", what);
        return A4W4_EINVAL;
    }
    if (!M) {
        ERR(L, "apply: %s [%zu, %zu%s]: every dimension must be >= 1", what, in->dims[0],
            in->dims[1], in->kind == A4W4_INPUT_TENSOR_3D ? ", ..." : "");
        return A4W4_EINVAL;
    }
    if (M > SIZE_MAX / 4 / (L->N > K ? L->N : K)) {
        ERR(L, "apply: %s with M=%zu rows is too large for N=%zu, K=%zu", what, M, L->N, K);
        return A4W4_EINVAL;
    }
    if (K != L->K) {
        ERR(L, "apply: %s has K=%zu, the layer's weight has K=%zu", what, K, L->K);
        return A4W4_EINVAL;
    }
    int needs_x = plain_kind(in->kind) || in->kind == A4W4_INPUT_TUPLE5 ||
                  (in->kind == A4W4_INPUT_TUPLE3 && !in->x_scale);
    if (needs_x) {
        if (!in->x) {
            ERR(L, "apply: %s: x must not be NULL", what);
            return A4W4_EINVAL;
        }
        if (in->dtype != A4W4_IN_BF16 && in->dtype != A4W4_IN_F32) {
            ERR(L, "apply: %s: activation dtype must be bf16 or fp32", what);
            return A4W4_EINVAL;
        }
    } else if (!in->x_fp4 || !in->x_scale) {
        ERR(L, "apply: %s: x_fp4 [M, K/2] and x_scale [M, K/32] must not be NULL", what);
        return A4W4_EINVAL;
    }
    if (in->kind == A4W4_INPUT_TUPLE5) {
        if (bias) {
            ERR(L, "%s", A4W4_LAYER_MSG_TUPLE5_BIAS);
            return A4W4_EINVAL;
        }
        if (!in->D || !in->S1 || !in->S2 || in->D > L->N || in->S1 > L->N || in->S2 > L->N ||
            in->S3 > L->N * 1024 ||
            in->D * (in->S1 + in->S2) != L->N || (in->S3 && !in->cat_y)) {
            ERR(L, "apply: 5-tuple: N=%zu must equal D*(S1+S2) = %zu*(%zu+%zu) with D, S1, S2 "
                   ">= 1, S3 <= 1024*N, and y [M, D, S3=%zu] given when S3 > 0",
                L->N, in->D, in->S1, in->S2, in->S3);
            return A4W4_EINVAL;
        }
    }
    return A4W4_OK;
}

int a4w4_layer_apply(a4w4_layer *L, const a4w4_layer_input *in, const uint16_t *bias,
                     uint16_t *out)
{
    if (!L)
        return A4W4_EINVAL;
    L->error[0] = '\0';
    if (!in || !out) {
        ERR(L, "apply: input and out must not be NULL");
        return A4W4_EINVAL;
    }
    if (!L->processed) {
        ERR(L, "apply: the layer is not processed: call a4w4_layer_process_after_load first "
               "(contracts §6)");
        return A4W4_LAYER_ESTATE;
    }
    const size_t N = L->N;
    a4w4_policy_result r;
    if (a4w4_policy_decide(L->flag_on, L->gfx, N, 2, N, L->K / 32, in->kind, in->tuple_len,
                           &r)) {
        ERR(L, "apply: input kind %d (tuple length %d) is not a known input form", (int)in->kind,
            in->tuple_len);
        return A4W4_EINVAL;
    }
    L->last = r;
    if (r.decision == A4W4_DECIDE_REJECT) {
        snprintf(L->error, sizeof L->error, "%s", r.message);
        return A4W4_LAYER_EREJECT;
    }
    size_t M, K;
    input_mk(in, &M, &K);
    int rc = validate(L, in, bias, M, K);
    if (rc)
        return rc;

    const a4w4_layer_ops *ops = L->ops;
    const size_t nb = K / 32;
    uint16_t *y = malloc(M * N * sizeof *y);
    uint8_t *a_fp4 = NULL, *a_scale = NULL;
    const uint8_t *use_fp4 = in->x_fp4, *use_scale = in->x_scale;
    const char *step = "";
    rc = A4W4_OK;
    if (!y)
        goto nomem;
    int quantize = plain_kind(in->kind) || in->kind == A4W4_INPUT_TUPLE5 ||
                   (in->kind == A4W4_INPUT_TUPLE3 && !in->x_scale);
    if (L->on_asm) {
        /* contracts §6.5: quantize with shuffle=True, or re-lay a 2-tuple's scale (§3.3). */
        size_t sbytes = a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(nb);
        a_scale = malloc(sbytes ? sbytes : 1);
        if (!a_scale)
            goto nomem;
        if (quantize) {
            a_fp4 = malloc(M * K / 2);
            if (!a_fp4)
                goto nomem;
            step = "quantize";
            rc = ops->quantize(ops->ctx, in->x, in->dtype, M, K, L->asm_mode, 1, a_fp4, a_scale);
            use_fp4 = a_fp4;
        } else {
            step = "act_scale_relayout";
            rc = ops->act_scale_relayout(ops->ctx, in->x_scale, M, nb,
                                         A4W4_ACT_SCALE_FILL_DEFAULT,
                                         A4W4_ACT_SCALE_FILL_DEFAULT, a_scale);
        }
        if (!rc) {
            step = "gemm_asm";
            rc = ops->gemm_asm(ops->ctx, use_fp4, a_scale, L->w_fp4, L->w_scale, M, N, K, y);
        }
    } else {
        if (quantize) {
            a_fp4 = malloc(M * K / 2);
            a_scale = malloc(M * nb);
            if (!a_fp4 || !a_scale)
                goto nomem;
            step = "quantize";
            rc = ops->quantize(ops->ctx, in->x, in->dtype, M, K, L->fallback_mode, 0, a_fp4,
                               a_scale);
            use_fp4 = a_fp4;
            use_scale = a_scale;
        }
        if (!rc) {
            step = "gemm_fallback";
            rc = ops->gemm_fallback(ops->ctx, use_fp4, use_scale, L->w_fp4, L->w_scale, M, N, K,
                                    y);
        }
    }
    if (rc) {
        ERR(L, "apply: %s: %s [M=%zu, N=%zu, K=%zu] failed: %s", ops->name, step, M, N, K,
            a4w4_layer_strerror(rc));
        rc = A4W4_LAYER_EBACKEND;
        goto out;
    }
    if (bias)
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++)
                y[m * N + n] = a4w4_layer_bias_add(y[m * N + n], bias[n]);
    if (in->kind == A4W4_INPUT_TUPLE5) {
        /* c = y viewed [M, D, S1+S2]; c1 = cat(c[..., :S1], cat_y) ; c2 = c[..., S1:] */
        const size_t D = in->D, S1 = in->S1, S2 = in->S2, S3 = in->S3, W1 = S1 + S3;
        uint16_t *c1 = out, *c2 = out + M * D * W1;
        for (size_t m = 0; m < M; m++)
            for (size_t d = 0; d < D; d++) {
                const uint16_t *row = y + m * N + d * (S1 + S2);
                memcpy(c1 + (m * D + d) * W1, row, S1 * sizeof *y);
                if (S3)
                    memcpy(c1 + (m * D + d) * W1 + S1, in->cat_y + (m * D + d) * S3,
                           S3 * sizeof *y);
                memcpy(c2 + (m * D + d) * S2, row + S1, S2 * sizeof *y);
            }
        L->out_ndim = 3;
        L->out_dims[0] = M;
        L->out_dims[1] = D;
        L->out_dims[2] = W1;
    } else {
        memcpy(out, y, M * N * sizeof *y);
        if (in->kind == A4W4_INPUT_TENSOR_3D) {
            L->out_ndim = 3;
            L->out_dims[0] = in->dims[0];
            L->out_dims[1] = in->dims[1];
            L->out_dims[2] = N;
        } else {
            L->out_ndim = 2;
            L->out_dims[0] = M;
            L->out_dims[1] = N;
            L->out_dims[2] = 0;
        }
    }
    goto out;
nomem:
    ERR(L, "apply: out of memory for M=%zu N=%zu K=%zu", M, N, K);
    rc = A4W4_ENOMEM;
out:
    free(y);
    free(a_fp4);
    free(a_scale);
    return rc;
}

/* ---- checking -------------------------------------------------------------------------- */

uint16_t a4w4_layer_oracle_bias_add(uint16_t y, uint16_t b)
{
    double s = (double)a4w4_bf16_to_f32(y) + (double)a4w4_bf16_to_f32(b);
    if (isnan(s))
        return 0x7FC0;
    if (isinf(s))
        return s > 0 ? 0x7F80 : 0xFF80;
    if (s == 0.0) /* the sign IEEE addition gives: -0 only for -0 + -0 */
        return signbit(s) ? 0x8000 : 0x0000;
    /* RNE to 8 significant bits with bf16's subnormal quantum 2^-133 */
    int e;
    (void)frexp(s, &e);              /* |s| = f * 2^e, 0.5 <= f < 1 */
    int q = e - 8 < -133 ? -133 : e - 8; /* quantum exponent */
    double r = nearbyint(ldexp(s, -q)); /* default rounding mode: to nearest, ties to even */
    double v = ldexp(r, q);
    if (fabs(v) >= 0x1p128)
        return v > 0 ? 0x7F80 : 0xFF80;
    float f = (float)v; /* exact: at most 8 significant bits, in range */
    uint32_t u = a4w4_f32_bits(f);
    return (uint16_t)(u >> 16);
}

size_t a4w4_layer_matrix(size_t qwen_n, a4w4_layer_group *groups, size_t max)
{
    static const char *const gfxs[] = {"gfx950", "gfx942", "gfx1100"};
    const size_t Ns[] = {128, 144, qwen_n}, Ks[] = {256, 288};
    size_t n = 0;
    for (int f = 1; f >= 0; f--)
        for (size_t g = 0; g < 3; g++)
            for (size_t i = 0; i < 3; i++)
                for (size_t k = 0; k < 2; k++) {
                    if (n < max) {
                        a4w4_layer_group *G = &groups[n];
                        G->flag_on = f;
                        G->gfx = gfxs[g];
                        G->N = Ns[i];
                        G->K = Ks[k];
                        G->B = 2;
                        G->S = 3;
                        G->seed = 8;
                    }
                    n++;
                }
    return n < max ? n : max;
}

/* The pair wrapped so every kernel call is counted (the checks never trust the layer's own
 * counters). */
typedef struct {
    a4w4_layer_ops ops;
    const a4w4_layer_ops *inner;
    unsigned quantize, relayout, preshuffle, swizzle, gemm_asm, gemm_fallback;
} counting_ops;

static int cnt_quantize(void *ctx, const void *x, a4w4_in_dtype dtype, size_t M, size_t K,
                        a4w4_scale_mode mode, int shuffle, uint8_t *x_fp4, uint8_t *x_scale)
{
    counting_ops *c = ctx;
    c->quantize++;
    return c->inner->quantize(c->inner->ctx, x, dtype, M, K, mode, shuffle, x_fp4, x_scale);
}

static int cnt_relayout(void *ctx, const uint8_t *s, size_t M, size_t cols, uint8_t rf,
                        uint8_t cf, uint8_t *dst)
{
    counting_ops *c = ctx;
    c->relayout++;
    return c->inner->act_scale_relayout(c->inner->ctx, s, M, cols, rf, cf, dst);
}

static int cnt_preshuffle(void *ctx, const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    counting_ops *c = ctx;
    c->preshuffle++;
    return c->inner->preshuffle_weight(c->inner->ctx, w, N, K, dst);
}

static int cnt_swizzle(void *ctx, const uint8_t *s, size_t rows, size_t cols, uint8_t *dst)
{
    counting_ops *c = ctx;
    c->swizzle++;
    return c->inner->swizzle_weight_scale(c->inner->ctx, s, rows, cols, dst);
}

static int cnt_gemm_asm(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                        const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    counting_ops *c = ctx;
    c->gemm_asm++;
    return c->inner->gemm_asm(c->inner->ctx, a, as, w, ws, M, N, K, y);
}

static int cnt_gemm_fallback(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                             const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    counting_ops *c = ctx;
    c->gemm_fallback++;
    return c->inner->gemm_fallback(c->inner->ctx, a, as, w, ws, M, N, K, y);
}

static void counting_wrap(counting_ops *c, const a4w4_layer_ops *inner)
{
    memset(c, 0, sizeof *c);
    c->inner = inner;
    c->ops = *inner;
    c->ops.ctx = c;
    c->ops.quantize = cnt_quantize;
    c->ops.act_scale_relayout = cnt_relayout;
    c->ops.preshuffle_weight = cnt_preshuffle;
    c->ops.swizzle_weight_scale = cnt_swizzle;
    c->ops.gemm_asm = cnt_gemm_asm;
    c->ops.gemm_fallback = cnt_gemm_fallback;
}

static double unit(a4w4_rng *r) /* uniform in [-1, 1) on a 2^-10 grid */
{
    return ((double)(a4w4_rng_next(r) % 2048) - 1024.0) / 1024.0;
}

/* Activation [M, K]: blocks of 32 with magnitudes 2^-6..2^6 times an amplitude in [1, 2) (so
 * round_up and even pick different scales for some blocks), one all-zero block, and values off
 * the bf16 grid for fp32 (bf16 rounds them). */
static void gen_activation(uint64_t seed, const char *name, uint64_t stream, size_t M, size_t K,
                           a4w4_in_dtype dtype, void *x)
{
    a4w4_rng r;
    a4w4_rng_init(&r, seed, name, stream);
    for (size_t m = 0; m < M; m++)
        for (size_t b = 0; b < K / 32; b++) {
            int e = (int)(a4w4_rng_next(&r) % 13) - 6;
            /* amplitude in [1, 2): amax mantissas spread, so the scale modes disagree */
            double amp = 1.0 + (double)(a4w4_rng_next(&r) % 1024) / 1024.0;
            int zero = m == 0 && b == 1;
            for (size_t k = b * 32; k < b * 32 + 32; k++) {
                float v = zero ? 0.0f : (float)ldexp(unit(&r) * amp + unit(&r) * 1e-3, e);
                if (dtype == A4W4_IN_BF16)
                    ((uint16_t *)x)[m * K + k] = a4w4_f32_to_bf16(v);
                else
                    ((float *)x)[m * K + k] = v;
            }
        }
}

static void gen_bf16(uint64_t seed, const char *name, uint64_t stream, size_t n, int emin,
                     int emax, uint16_t *v)
{
    a4w4_rng r;
    a4w4_rng_init(&r, seed, name, stream);
    for (size_t i = 0; i < n; i++) {
        int e = emin + (int)(a4w4_rng_next(&r) % (uint64_t)(emax - emin + 1));
        v[i] = a4w4_f32_to_bf16((float)ldexp(unit(&r), e));
    }
}

/* S of "ordered(S)" (>= 1), 0 for "exact", -1 for a contract with no bit-exact oracle. */
static int contract_split(const char *c)
{
    unsigned s;
    char tail;
    if (!strcmp(c, "exact"))
        return 0;
    if (sscanf(c, "ordered(%u%c", &s, &tail) == 2 && tail == ')' && s >= 1)
        return (int)s;
    return -1;
}

static const char *const kind_names[] = {"2d", "3d", "tuple2", "tuple3", "tuple5"};
static const a4w4_input_kind kind_order[] = {A4W4_INPUT_TENSOR_2D, A4W4_INPUT_TENSOR_3D,
                                             A4W4_INPUT_TUPLE2, A4W4_INPUT_TUPLE3,
                                             A4W4_INPUT_TUPLE5};

#define OUT_GUARD 64 /* poisoned elements after every output buffer */

typedef struct { /* per activation (bias present -> bf16, absent -> fp32) */
    void *x;
    uint8_t *x_fp4, *x_scale;   /* ref quantization, row-major, in the path's mode */
    uint16_t *y_ref;            /* oracle [M, N] before bias */
    uint16_t *y_2d;             /* the layer's 2-D output of this activation (NULL: failed) */
} activation;

static void fail(a4w4_layer_case_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(a4w4_layer_case_result *r, const char *fmt, ...)
{
    if (!r->pass)
        return; /* keep the first failure */
    r->pass = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

int a4w4_layer_check_group(const a4w4_layer_ops *pair, const a4w4_layer_group *g,
                           a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP], char *err,
                           size_t errlen)
{
    if (!pair || !g || !g->gfx || !res || !g->N || !g->K || g->K % 32 || !g->B || !g->S) {
        snprintf(err, errlen, "layers: group needs a pair, gfx, N >= 1, K a multiple of 32, "
                              "B and S >= 1");
        return A4W4_EINVAL;
    }
    const size_t N = g->N, K = g->K, nb = K / 32, M = g->B * g->S;
    const int S = contract_split(pair->contract);
    char gname[64];
    snprintf(gname, sizeof gname, "%s_%s_n%zu_k%zu", g->flag_on ? "on" : "off", g->gfx, N, K);

    /* the 5-tuple's split: N = D*(S1+S2) */
    const size_t D = N % 4 == 0 ? 4 : 1, S2 = N / D / 3 ? N / D / 3 : 1, S1 = N / D - S2,
                 S3 = 8;
    const size_t out5 = M * D * (S1 + S3) + M * D * S2, outmax = (out5 > M * N ? out5 : M * N);

    /* the loaded weight and its layouts */
    uint8_t *w = malloc(N * K / 2), *ws = malloc(N * nb), *w_sh = NULL, *ws_sw = NULL;
    uint16_t *bias = malloc(N * sizeof *bias), *cat_y = malloc(M * D * S3 * sizeof *cat_y);
    uint16_t *out = malloc((outmax + OUT_GUARD) * sizeof *out);
    uint16_t *expect = malloc(outmax * sizeof *expect);
    activation act[2] = {{0}, {0}};
    int rc = 0;
    a4w4_layer L;
    memset(&L, 0, sizeof L);
    if (!w || !ws || !bias || !cat_y || !out || !expect)
        goto nomem;
    {
        a4w4_rng r;
        a4w4_rng_init(&r, g->seed, gname, 1);
        for (size_t i = 0; i < N * K / 2; i++)
            w[i] = (uint8_t)a4w4_rng_next(&r);
        for (size_t i = 0; i < N * nb; i++)
            ws[i] = (uint8_t)(118 + a4w4_rng_next(&r) % 10);
    }
    gen_bf16(g->seed, gname, 2, N, -3, 6, bias);
    bias[0] = 0x8000; /* -0 */
    if (N > 1)
        bias[1] = 0x0000;
    gen_bf16(g->seed, gname, 3, M * D * S3, -2, 2, cat_y);

    /* the oracle's view of the layer */
    a4w4_policy_result layer_expect;
    a4w4_policy_decide(g->flag_on, g->gfx, N, 2, N, nb, A4W4_INPUT_TENSOR_2D, 0, &layer_expect);
    const int expect_asm = layer_expect.layer_asm;
    const a4w4_scale_mode mode = expect_asm ? A4W4_ROUND_UP : A4W4_EVEN;
    if (expect_asm) {
        w_sh = malloc(N * K / 2);
        ws_sw = malloc(N * nb);
        if (!w_sh || !ws_sw)
            goto nomem;
        if (a4w4_preshuffle(w, N, K, w_sh) || a4w4_scale_swizzle(ws, N, nb, ws_sw)) {
            snprintf(err, errlen, "layers: %s: the policy marked a layer whose layouts do not "
                                  "exist", gname);
            rc = A4W4_EINVAL;
            goto out;
        }
    }
    for (int a = 0; a < 2; a++) { /* a = 1: the bias cases' bf16 activation */
        activation *A = &act[a];
        a4w4_in_dtype dt = a ? A4W4_IN_BF16 : A4W4_IN_F32;
        A->x = malloc(M * K * (a ? 2 : 4));
        A->x_fp4 = malloc(M * K / 2);
        A->x_scale = malloc(M * nb);
        A->y_ref = malloc(M * N * sizeof *A->y_ref);
        if (!A->x || !A->x_fp4 || !A->x_scale || !A->y_ref)
            goto nomem;
        gen_activation(g->seed, gname, 10 + (uint64_t)a, M, K, dt, A->x);
        int q = a4w4_quantize(A->x, dt, M, K, mode, 0, A->x_fp4, A->x_scale);
        int gq = q ? q
               : S > 0 ? a4w4_gemm_ordered(A->x_fp4, A->x_scale, w, ws, M, N, K, (unsigned)S,
                                           A->y_ref, NULL)
               : S == 0 ? a4w4_gemm_exact(A->x_fp4, A->x_scale, w, ws, M, N, K, A->y_ref, NULL)
                        : 0;
        if (gq) {
            snprintf(err, errlen, "layers: %s: oracle failed: %s", gname, a4w4_status_str(gq));
            rc = gq;
            goto out;
        }
    }

    /* the layer under test, through the counting wrapper */
    counting_ops C;
    counting_wrap(&C, pair);
    int init_rc = a4w4_layer_init(&L, &C.ops, w, ws, N, K);
    int proc_rc = init_rc ? init_rc : a4w4_layer_process_after_load(&L, g->flag_on, g->gfx);
    char proc_err[400];
    snprintf(proc_err, sizeof proc_err, "%s", L.error);
    unsigned pre_after_load = C.preshuffle, sw_after_load = C.swizzle;
    /* processing again must be refused and must not re-lay anything */
    int again_rc = proc_rc ? 0 : a4w4_layer_process_after_load(&L, g->flag_on, g->gfx);
    int again_ok = proc_rc || (again_rc == A4W4_LAYER_ESTATE && C.preshuffle == pre_after_load &&
                               C.swizzle == sw_after_load);

    for (size_t ci = 0; ci < A4W4_LAYER_CASES_PER_GROUP; ci++) {
        const a4w4_input_kind kind = kind_order[ci / 2];
        const int with_bias = (int)(ci % 2);
        activation *A = &act[with_bias];
        a4w4_layer_case_result *R = &res[ci];
        memset(R, 0, sizeof *R);
        R->pass = 1;
        snprintf(R->name, sizeof R->name, "%s_%s_%s", gname, kind_names[ci / 2],
                 with_bias ? "bias" : "nobias");
        R->flag_on = g->flag_on;
        snprintf(R->gfx, sizeof R->gfx, "%s", g->gfx);
        R->M = M;
        R->N = N;
        R->K = K;
        R->kind = kind;
        R->bias = with_bias;
        R->dtype = with_bias ? A4W4_IN_BF16 : A4W4_IN_F32;
        a4w4_policy_decide(g->flag_on, g->gfx, N, 2, N, nb, kind, 0, &R->expected);
        R->layer_decision = L.decision.decision;

        if (proc_rc) {
            fail(R, "the layer could not be set up: %s (status %d)", proc_err, proc_rc);
            continue;
        }
        /* the input */
        a4w4_layer_input in;
        memset(&in, 0, sizeof in);
        in.kind = kind;
        in.dtype = R->dtype;
        in.dims[0] = M;
        in.dims[1] = K;
        switch (kind) {
        case A4W4_INPUT_TENSOR_3D:
            in.dims[0] = g->B;
            in.dims[1] = g->S;
            in.dims[2] = K;
            /* fall through */
        case A4W4_INPUT_TENSOR_2D:
        case A4W4_INPUT_TUPLE3: /* (x, None, y): the pre-quant (atomic epilogue) form */
            in.x = A->x;
            break;
        case A4W4_INPUT_TUPLE2:
            in.x_fp4 = A->x_fp4;
            in.x_scale = A->x_scale;
            break;
        case A4W4_INPUT_TUPLE5:
            in.x = A->x;
            in.cat_y = cat_y;
            in.D = D;
            in.S1 = S1;
            in.S2 = S2;
            in.S3 = S3;
            break;
        default: break;
        }
        const int reject = R->expected.decision == A4W4_DECIDE_REJECT;
        const int refuse = !reject && kind == A4W4_INPUT_TUPLE5 && with_bias;
        const size_t n_out = kind == A4W4_INPUT_TUPLE5 ? out5 : M * N;
        for (size_t i = 0; i < n_out + OUT_GUARD; i++)
            out[i] = A4W4_POISON_BF16;
        counting_ops before = C;
        double t0 = a4w4_now();
        R->status = a4w4_layer_apply(&L, &in, with_bias ? bias : NULL, out);
        R->time_ms = (a4w4_now() - t0) * 1e3;
        R->got = L.last;

        /* 1. decision and reason: the policy oracle's */
        if (L.decision.decision != layer_expect.decision ||
            L.decision.reason != layer_expect.reason || L.on_asm != expect_asm)
            fail(R, "layer decision %s/%s, the policy oracle says %s/%s",
                 a4w4_decision_name(L.decision.decision),
                 a4w4_policy_reason_name(L.decision.reason),
                 a4w4_decision_name(layer_expect.decision),
                 a4w4_policy_reason_name(layer_expect.reason));
        if (R->got.decision != R->expected.decision || R->got.reason != R->expected.reason ||
            strcmp(R->got.message, R->expected.message))
            fail(R, "input decision %s/%s, the policy oracle says %s/%s",
                 a4w4_decision_name(R->got.decision), a4w4_policy_reason_name(R->got.reason),
                 a4w4_decision_name(R->expected.decision),
                 a4w4_policy_reason_name(R->expected.reason));

        /* 2. outputs */
        size_t guard_bad = 0;
        for (size_t i = n_out; i < n_out + OUT_GUARD; i++)
            guard_bad += out[i] != A4W4_POISON_BF16;
        if (guard_bad)
            fail(R, "%zu elements written past the output's %zu", guard_bad, n_out);
        if (reject || refuse) {
            const char *want = reject ? R->expected.message : A4W4_LAYER_MSG_TUPLE5_BIAS;
            int want_rc = reject ? A4W4_LAYER_EREJECT : A4W4_EINVAL;
            size_t touched = 0;
            for (size_t i = 0; i < n_out; i++)
                touched += out[i] != A4W4_POISON_BF16;
            R->checked_outputs = n_out;
            R->mismatches = touched;
            if (R->status != want_rc)
                fail(R, "%s input returned status %d (%s), expected %d", reject ? "rejected"
                     : "refused", R->status, a4w4_layer_strerror(R->status), want_rc);
            else if (strcmp(L.error, want))
                fail(R, "error text '%s', documented '%s'", L.error, want);
            if (touched)
                fail(R, "a refused input changed %zu of %zu output elements", touched, n_out);
            if (C.quantize != before.quantize || C.relayout != before.relayout ||
                C.gemm_asm != before.gemm_asm || C.gemm_fallback != before.gemm_fallback)
                fail(R, "a refused input ran pair kernels (quantize %u, relayout %u, gemm_asm "
                        "%u, gemm_fallback %u)", C.quantize - before.quantize,
                     C.relayout - before.relayout, C.gemm_asm - before.gemm_asm,
                     C.gemm_fallback - before.gemm_fallback);
            if (R->pass)
                snprintf(R->note, sizeof R->note, "%s: %.380s", reject ? "rejected" : "refused",
                         L.error);
        } else {
            R->computed = 1;
            if (S < 0)
                fail(R, "contract '%s' of pair %s has no bit-exact oracle", pair->contract,
                     pair->name);
            /* expected outputs: oracle [M, N] + bias by the correctly rounded sum */
            uint16_t *e = expect;
            if (kind == A4W4_INPUT_TUPLE5) {
                /* gather c1 [M, D, S1+S3] and c2 [M, D, S2] from the oracle product */
                size_t W1 = S1 + S3, n1 = M * D * W1;
                for (size_t i = 0; i < n1; i++) {
                    size_t m = i / (D * W1), d = i / W1 % D, j = i % W1;
                    e[i] = j < S1 ? A->y_ref[m * N + d * (S1 + S2) + j]
                                  : cat_y[(m * D + d) * S3 + (j - S1)];
                }
                for (size_t i = 0; i < M * D * S2; i++) {
                    size_t m = i / (D * S2), d = i / S2 % D, j = i % S2;
                    e[n1 + i] = A->y_ref[m * N + d * (S1 + S2) + S1 + j];
                }
            } else {
                for (size_t i = 0; i < M * N; i++)
                    e[i] = with_bias ? a4w4_layer_oracle_bias_add(A->y_ref[i], bias[i % N])
                                     : A->y_ref[i];
            }
            if (R->status != A4W4_OK)
                fail(R, "apply returned status %d: %s", R->status, L.error);
            for (size_t i = 0; i < n_out; i++) {
                uint16_t gv = out[i], ev = e[i];
                int gnan = (gv & 0x7FFF) > 0x7F80, enan = (ev & 0x7FFF) > 0x7F80;
                R->checked_outputs++;
                if (gv == A4W4_POISON_BF16 && ev != A4W4_POISON_BF16)
                    R->unwritten++;
                if (gv == ev || (gnan && enan && gv != A4W4_POISON_BF16))
                    continue;
                if (!R->mismatches++) {
                    R->first_index = i;
                    R->first_got = gv;
                    R->first_expected = ev;
                }
                unsigned d = a4w4_bf16_ulp_distance(gv, ev);
                if (d > R->max_ulp)
                    R->max_ulp = d;
            }
            if (R->unwritten)
                fail(R, "%zu of %zu outputs never written", R->unwritten, n_out);
            if (R->mismatches)
                fail(R, "%zu of %zu outputs differ from the oracle path (ref quantize %s -> %s "
                        "-> bias); first at %zu: got 0x%04x expected 0x%04x",
                     R->mismatches, n_out, a4w4_scale_mode_name(mode), pair->contract,
                     R->first_index, R->first_got, R->first_expected);
            /* the path taken is the decided one */
            int q = plain_kind(kind) || kind == A4W4_INPUT_TUPLE3 || kind == A4W4_INPUT_TUPLE5;
            unsigned dq = C.quantize - before.quantize, dr = C.relayout - before.relayout,
                     da = C.gemm_asm - before.gemm_asm, df = C.gemm_fallback - before.gemm_fallback;
            unsigned eq = (unsigned)q, er = (unsigned)(expect_asm && !q),
                     ea = (unsigned)expect_asm, ef = (unsigned)!expect_asm;
            if (dq != eq || dr != er || da != ea || df != ef)
                fail(R, "kernel calls quantize %u relayout %u gemm_asm %u gemm_fallback %u, the "
                        "%s path needs %u %u %u %u", dq, dr, da, df,
                     expect_asm ? "ASM" : "fallback", eq, er, ea, ef);
            if (kind == A4W4_INPUT_TENSOR_3D &&
                (L.out_ndim != 3 || L.out_dims[0] != g->B || L.out_dims[1] != g->S ||
                 L.out_dims[2] != N))
                fail(R, "3-D output shape [%zu, %zu, %zu] (ndim %d), expected [%zu, %zu, %zu]",
                     L.out_dims[0], L.out_dims[1], L.out_dims[2], L.out_ndim, g->B, g->S, N);
            /* the same activation through another input form gives the same bits */
            if (kind == A4W4_INPUT_TENSOR_2D) {
                free(A->y_2d);
                A->y_2d = NULL;
                if (R->status == A4W4_OK && (A->y_2d = malloc(M * N * sizeof *out)))
                    memcpy(A->y_2d, out, M * N * sizeof *out);
            } else if (kind == A4W4_INPUT_TENSOR_3D || kind == A4W4_INPUT_TUPLE2) {
                if (!A->y_2d)
                    fail(R, "no 2-D output of the same activation to compare with");
                else if (memcmp(A->y_2d, out, M * N * sizeof *out))
                    fail(R, "%s output differs from the 2-D output of the same activation",
                         kind == A4W4_INPUT_TUPLE2 ? "2-tuple" : "3-D");
            }
            if (R->pass)
                snprintf(R->note, sizeof R->note, "%zu outputs bit-exact vs ref quantize (%s) "
                         "-> %s oracle%s%s", n_out, a4w4_scale_mode_name(mode), pair->contract,
                         with_bias ? " -> bias" : "",
                         kind == A4W4_INPUT_TUPLE2 ? "; == the 2-D output"
                         : kind == A4W4_INPUT_TENSOR_3D ? "; == the 2-D output, shape [B, S, N]"
                         : kind == A4W4_INPUT_TUPLE5 ? "; split + cat" : "");
        }

        /* 3. the weight: re-laid exactly once on ASM, never on fallback */
        R->preshuffles = C.preshuffle;
        R->swizzles = C.swizzle;
        unsigned want = (unsigned)expect_asm;
        if (C.preshuffle != want || C.swizzle != want || L.preshuffles != want ||
            L.swizzles != want)
            fail(R, "weight re-laid %u (preshuffle) / %u (swizzle) times through the pair, the "
                    "layer counts %u / %u; expected %u", C.preshuffle, C.swizzle,
                 L.preshuffles, L.swizzles, want);
        if (!again_ok)
            fail(R, "a second process_after_load returned %d and re-laid the weight", again_rc);
        if (memcmp(L.w_fp4, expect_asm ? w_sh : w, N * K / 2) ||
            memcmp(L.w_scale, expect_asm ? ws_sw : ws, N * nb))
            fail(R, "the layer's weight is not the %s of the loaded one",
                 expect_asm ? "contracts §3.1/3.2 layout" : "unchanged copy");
        /* 4. the warning: once per process */
        if (layer_expect.warn_once &&
            (a4w4_layer_warn_count() != 1 || !a4w4_layer_warning()[0]))
            fail(R, "a warn-once layer left %u process warnings", a4w4_layer_warn_count());
    }
    goto out;
nomem:
    snprintf(err, errlen, "layers: %s: out of memory", gname);
    rc = A4W4_ENOMEM;
out:
    a4w4_layer_free(&L);
    for (int a = 0; a < 2; a++) {
        free(act[a].x);
        free(act[a].x_fp4);
        free(act[a].x_scale);
        free(act[a].y_ref);
        free(act[a].y_2d);
    }
    free(w);
    free(ws);
    free(w_sh);
    free(ws_sw);
    free(bias);
    free(cat_y);
    free(out);
    free(expect);
    if (rc)
        return rc;
    int fails = 0;
    for (size_t ci = 0; ci < A4W4_LAYER_CASES_PER_GROUP; ci++)
        fails += !res[ci].pass;
    return fails;
}
