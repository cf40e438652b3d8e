/* layer.c — the SGLang W4A4 MXFP4 linear layer over a backend pair (see layer.h; contracts
 * §6); the `layers` checks are in layer_checks.c. Prints nothing. */
#include "layer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"

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

/* Whether apply may run this input at all: the layer processed, the policy's answer (recorded
 * in L->last) not a rejection, the input's shapes and pointers valid; *M and *K its rows and
 * K. A4W4_OK or the status apply returns (L->error set). */
static int apply_admit(a4w4_layer *L, const a4w4_layer_input *in, const uint16_t *bias,
                       size_t *M, size_t *K)
{
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
    input_mk(in, M, K);
    return validate(L, in, bias, *M, *K);
}

/* The activation operands a GEMM reads and the buffers apply allocated for them. */
typedef struct {
    uint8_t *a_fp4, *a_scale; /* allocated here (NULL: none) */
    const char *step;         /* the pair operation running, for the error message */
    int oom;                  /* an allocation failed */
} apply_bufs;

/* The ASM path into y [M, N]: quantize with shuffle=True, or re-lay a 2-tuple's scale
 * (contracts §6.5, §3.3), then gemm_asm. The pair's status. */
static int apply_asm(const a4w4_layer *L, const a4w4_layer_input *in, int quantize, size_t M,
                     size_t K, uint16_t *y, apply_bufs *b)
{
    const a4w4_layer_ops *ops = L->ops;
    const size_t nb = K / 32;
    const uint8_t *use_fp4 = in->x_fp4;
    size_t sbytes = a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(nb);
    int rc;
    b->a_scale = malloc(sbytes ? sbytes : 1);
    b->a_fp4 = quantize && b->a_scale ? malloc(M * K / 2) : NULL;
    if (!b->a_scale || (quantize && !b->a_fp4)) {
        b->oom = 1;
        return A4W4_ENOMEM;
    }
    if (quantize) {
        b->step = "quantize";
        rc = ops->quantize(ops->ctx, in->x, in->dtype, M, K, L->asm_mode, 1, b->a_fp4,
                           b->a_scale);
        use_fp4 = b->a_fp4;
    } else {
        b->step = "act_scale_relayout";
        rc = ops->act_scale_relayout(ops->ctx, in->x_scale, M, nb, A4W4_ACT_SCALE_FILL_DEFAULT,
                                     A4W4_ACT_SCALE_FILL_DEFAULT, b->a_scale);
    }
    if (rc)
        return rc;
    b->step = "gemm_asm";
    return ops->gemm_asm(ops->ctx, use_fp4, b->a_scale, L->w_fp4, L->w_scale, M, L->N, K, y);
}

/* The fallback (Triton) path into y [M, N]: quantize unless the input is quantized, then
 * gemm_fallback on row-major operands. The pair's status. */
static int apply_fallback(const a4w4_layer *L, const a4w4_layer_input *in, int quantize,
                          size_t M, size_t K, uint16_t *y, apply_bufs *b)
{
    const a4w4_layer_ops *ops = L->ops;
    const uint8_t *use_fp4 = in->x_fp4, *use_scale = in->x_scale;
    if (quantize) {
        b->a_fp4 = malloc(M * K / 2);
        b->a_scale = malloc(M * (K / 32));
        if (!b->a_fp4 || !b->a_scale) {
            b->oom = 1;
            return A4W4_ENOMEM;
        }
        b->step = "quantize";
        int rc = ops->quantize(ops->ctx, in->x, in->dtype, M, K, L->fallback_mode, 0, b->a_fp4,
                               b->a_scale);
        if (rc)
            return rc;
        use_fp4 = b->a_fp4;
        use_scale = b->a_scale;
    }
    b->step = "gemm_fallback";
    return ops->gemm_fallback(ops->ctx, use_fp4, use_scale, L->w_fp4, L->w_scale, M, L->N, K, y);
}

/* y [M, N] (bias added) into out as the input's kind returns it, and its shape into L. */
static void apply_output(a4w4_layer *L, const a4w4_layer_input *in, const uint16_t *y,
                         size_t M, uint16_t *out)
{
    const size_t N = L->N;
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
        return;
    }
    memcpy(out, y, M * N * sizeof *y);
    int three = in->kind == A4W4_INPUT_TENSOR_3D;
    L->out_ndim = three ? 3 : 2;
    L->out_dims[0] = three ? in->dims[0] : M;
    L->out_dims[1] = three ? in->dims[1] : N;
    L->out_dims[2] = three ? N : 0;
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
    size_t M, K;
    int rc = apply_admit(L, in, bias, &M, &K);
    if (rc)
        return rc;
    const size_t N = L->N;
    apply_bufs b = {NULL, NULL, "", 0};
    uint16_t *y = malloc(M * N * sizeof *y);
    int quantize = plain_kind(in->kind) || in->kind == A4W4_INPUT_TUPLE5 ||
                   (in->kind == A4W4_INPUT_TUPLE3 && !in->x_scale);
    if (!y)
        b.oom = 1;
    else
        rc = L->on_asm ? apply_asm(L, in, quantize, M, K, y, &b)
                       : apply_fallback(L, in, quantize, M, K, y, &b);
    if (b.oom) {
        ERR(L, "apply: out of memory for M=%zu N=%zu K=%zu", M, N, K);
        rc = A4W4_ENOMEM;
    } else if (rc) {
        ERR(L, "apply: %s: %s [M=%zu, N=%zu, K=%zu] failed: %s", L->ops->name, b.step, M, N, K,
            a4w4_layer_strerror(rc));
        rc = A4W4_LAYER_EBACKEND;
    } else {
        if (bias)
            for (size_t m = 0; m < M; m++)
                for (size_t n = 0; n < N; n++)
                    y[m * N + n] = a4w4_layer_bias_add(y[m * N + n], bias[n]);
        apply_output(L, in, y, M, out);
    }
    free(y);
    free(b.a_fp4);
    free(b.a_scale);
    return rc;
}
