/* layer_checks.c — the `layers` checks (see layer.h "checking"; contracts §6): one group of
 * the matrix (a layer: flag, gfx, N, K) through its ten cases (input kind x bias), each compared
 * with the policy oracle, the oracle path (ref quantize -> GEMM oracle -> bias) and the
 * layout oracles, through a wrapper that counts every kernel call of the pair. Prints
 * nothing. */
#include "layer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "check.h"
#include "fsutil.h"
#include "gen.h"
#include "judge.h"

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

/* The pair's contract (contracts §4.1, §4.2) into *c; 1 when it has a bit-exact oracle for
 * K (exact, ordered(S), a tree that applies to K; not bounded(S) or atomic(S), whose answer is
 * a bound or a set), else 0. */
static int contract_oracle(const char *text, size_t K, a4w4_contract *c)
{
    if (a4w4_contract_parse(text, c, NULL, 0) || c->kind == A4W4_CONTRACT_BOUNDED ||
        c->kind == A4W4_CONTRACT_ATOMIC)
        return 0;
    return c->kind != A4W4_CONTRACT_TREE || a4w4_tree_check(&c->tree, K, NULL, 0) == A4W4_OK;
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


/* ---- one group: its data, the oracle's view and the layer under test ------------------- */

typedef struct {
    const a4w4_layer_ops *pair;
    const a4w4_layer_group *g;
    size_t N, K, nb, M;
    a4w4_contract contract;        /* pair->contract parsed */
    int has_oracle;                /* contract_oracle(pair->contract, K) */
    char gname[64];                /* "on_gfx950_n128_k256" */
    size_t D, S1, S2, S3, out5;    /* the 5-tuple's split: N = D*(S1+S2); its output size */
    uint8_t *w, *ws;               /* the loaded weight [N, K/2] and scale [N, K/32] */
    uint8_t *w_sh, *ws_sw;         /* their contracts §3.1/§3.2 layouts (ASM layers) */
    uint16_t *bias, *cat_y;        /* bias [N]; the 5-tuple's y [M, D, S3] */
    uint16_t *out, *expect;        /* the output (+ OUT_GUARD poison) and the oracle's */
    activation act[2];             /* [0]: fp32 (no bias), [1]: bf16 (bias) */
    a4w4_policy_result layer_expect; /* the policy oracle's answer for the layer */
    int expect_asm;
    a4w4_scale_mode mode;          /* the path's quantizer mode */
    counting_ops C;                /* the pair, counted (C.ops.ctx points at C: never moved) */
    a4w4_layer L;
    int proc_rc, again_rc, again_ok;
    char proc_err[400];
} group_run;

static a4w4_hstatus group_setup(group_run *gr, const a4w4_layer_ops *pair,
                                const a4w4_layer_group *g)
{
    memset(gr, 0, sizeof *gr);
    gr->pair = pair;
    gr->g = g;
    size_t N = gr->N = g->N, K = gr->K = g->K, M = gr->M = g->B * g->S;
    gr->nb = K / 32;
    gr->has_oracle = contract_oracle(pair->contract, K, &gr->contract);
    snprintf(gr->gname, sizeof gr->gname, "%s_%s_n%zu_k%zu", g->flag_on ? "on" : "off", g->gfx,
             N, K);
    gr->D = N % 4 == 0 ? 4 : 1;
    gr->S2 = N / gr->D / 3 ? N / gr->D / 3 : 1;
    gr->S1 = N / gr->D - gr->S2;
    gr->S3 = 8;
    gr->out5 = M * gr->D * (gr->S1 + gr->S3) + M * gr->D * gr->S2;
    size_t outmax = gr->out5 > M * N ? gr->out5 : M * N;
    gr->w = malloc(N * K / 2);
    gr->ws = malloc(N * gr->nb);
    gr->bias = malloc(N * sizeof *gr->bias);
    gr->cat_y = malloc(M * gr->D * gr->S3 * sizeof *gr->cat_y);
    gr->out = malloc((outmax + OUT_GUARD) * sizeof *gr->out);
    gr->expect = malloc(outmax * sizeof *gr->expect);
    if (!gr->w || !gr->ws || !gr->bias || !gr->cat_y || !gr->out || !gr->expect)
        return A4W4_ST_NOMEM;
    return A4W4_ST_OK;
}

static void group_free(group_run *gr)
{
    a4w4_layer_free(&gr->L);
    for (int a = 0; a < 2; a++) {
        free(gr->act[a].x);
        free(gr->act[a].x_fp4);
        free(gr->act[a].x_scale);
        free(gr->act[a].y_ref);
        free(gr->act[a].y_2d);
    }
    free(gr->w);
    free(gr->ws);
    free(gr->w_sh);
    free(gr->ws_sw);
    free(gr->bias);
    free(gr->cat_y);
    free(gr->out);
    free(gr->expect);
}

/* The loaded weight (scale codes 118..127), the bias (with -0 and +0) and the 5-tuple's y. */
static void group_data(group_run *gr)
{
    const a4w4_layer_group *g = gr->g;
    size_t N = gr->N;
    a4w4_rng r;
    a4w4_rng_init(&r, g->seed, gr->gname, 1);
    for (size_t i = 0; i < N * gr->K / 2; i++)
        gr->w[i] = (uint8_t)a4w4_rng_next(&r);
    for (size_t i = 0; i < N * gr->nb; i++)
        gr->ws[i] = (uint8_t)(118 + a4w4_rng_next(&r) % 10);
    gen_bf16(g->seed, gr->gname, 2, N, -3, 6, gr->bias);
    gr->bias[0] = 0x8000; /* -0 */
    if (N > 1)
        gr->bias[1] = 0x0000;
    gen_bf16(g->seed, gr->gname, 3, gr->M * gr->D * gr->S3, -2, 2, gr->cat_y);
}

/* Activation a (1: the bias cases' bf16 one), its ref quantization in the path's mode and the
 * oracle product [M, N] before bias. */
static a4w4_hstatus group_activation(group_run *gr, int a, char *err, size_t errlen)
{
    size_t M = gr->M, N = gr->N, K = gr->K;
    activation *A = &gr->act[a];
    a4w4_in_dtype dt = a ? A4W4_IN_BF16 : A4W4_IN_F32;
    A->x = malloc(M * K * (a ? 2 : 4));
    A->x_fp4 = malloc(M * K / 2);
    A->x_scale = malloc(M * gr->nb);
    A->y_ref = malloc(M * N * sizeof *A->y_ref);
    if (!A->x || !A->x_fp4 || !A->x_scale || !A->y_ref)
        return A4W4_ST_NOMEM;
    gen_activation(gr->g->seed, gr->gname, 10 + (uint64_t)a, M, K, dt, A->x);
    int q = a4w4_quantize(A->x, dt, M, K, gr->mode, 0, A->x_fp4, A->x_scale);
    int gq = q ? q
           : gr->has_oracle ? a4w4_gemm_contract(&gr->contract, A->x_fp4, A->x_scale, gr->w,
                                                 gr->ws, M, N, K, A->y_ref, NULL)
                            : 0;
    if (gq) {
        snprintf(err, errlen, "layers: %s: oracle failed: %s", gr->gname, a4w4_status_str(gq));
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

/* The oracle's view of the layer: the policy's decision, the re-laid weight of an ASM layer
 * and both activations' oracle products. */
static a4w4_hstatus group_oracle(group_run *gr, char *err, size_t errlen)
{
    const a4w4_layer_group *g = gr->g;
    size_t N = gr->N, K = gr->K, nb = gr->nb;
    a4w4_policy_decide(g->flag_on, g->gfx, N, 2, N, nb, A4W4_INPUT_TENSOR_2D, 0,
                       &gr->layer_expect);
    gr->expect_asm = gr->layer_expect.layer_asm;
    gr->mode = gr->expect_asm ? A4W4_ROUND_UP : A4W4_EVEN;
    if (gr->expect_asm) {
        gr->w_sh = malloc(N * K / 2);
        gr->ws_sw = malloc(N * nb);
        if (!gr->w_sh || !gr->ws_sw)
            return A4W4_ST_NOMEM;
        if (a4w4_preshuffle(gr->w, N, K, gr->w_sh) ||
            a4w4_scale_swizzle(gr->ws, N, nb, gr->ws_sw)) {
            snprintf(err, errlen, "layers: %s: the policy marked a layer whose layouts do not "
                                  "exist", gr->gname);
            return A4W4_ST_BADINPUT;
        }
    }
    a4w4_hstatus rc = A4W4_ST_OK;
    for (int a = 0; a < 2 && !rc; a++)
        rc = group_activation(gr, a, err, errlen);
    return rc;
}

/* The layer under test over the counted pair: init, process_after_load, and a second
 * process_after_load that must be refused without re-laying anything. */
static void group_layer(group_run *gr)
{
    const a4w4_layer_group *g = gr->g;
    counting_wrap(&gr->C, gr->pair);
    int init_rc = a4w4_layer_init(&gr->L, &gr->C.ops, gr->w, gr->ws, gr->N, gr->K);
    gr->proc_rc = init_rc ? init_rc : a4w4_layer_process_after_load(&gr->L, g->flag_on, g->gfx);
    snprintf(gr->proc_err, sizeof gr->proc_err, "%s", gr->L.error);
    unsigned pre_after_load = gr->C.preshuffle, sw_after_load = gr->C.swizzle;
    gr->again_rc = gr->proc_rc ? 0 : a4w4_layer_process_after_load(&gr->L, g->flag_on, g->gfx);
    gr->again_ok = gr->proc_rc || (gr->again_rc == A4W4_LAYER_ESTATE &&
                                   gr->C.preshuffle == pre_after_load &&
                                   gr->C.swizzle == sw_after_load);
}

/* ---- one case ---------------------------------------------------------------------------- */

/* R's identity and the policy oracle's answer for its input. */
static void case_start(const group_run *gr, size_t ci, a4w4_layer_case_result *R)
{
    const a4w4_layer_group *g = gr->g;
    const int with_bias = (int)(ci % 2);
    memset(R, 0, sizeof *R);
    R->pass = 1;
    snprintf(R->name, sizeof R->name, "%s_%s_%s", gr->gname, kind_names[ci / 2],
             with_bias ? "bias" : "nobias");
    R->flag_on = g->flag_on;
    snprintf(R->gfx, sizeof R->gfx, "%s", g->gfx);
    R->M = gr->M;
    R->N = gr->N;
    R->K = gr->K;
    R->kind = kind_order[ci / 2];
    R->bias = with_bias;
    R->dtype = with_bias ? A4W4_IN_BF16 : A4W4_IN_F32;
    a4w4_policy_decide(g->flag_on, g->gfx, gr->N, 2, gr->N, gr->nb, R->kind, 0, &R->expected);
    R->layer_decision = gr->L.decision.decision;
}

/* The activation A in the form R's kind gives to apply. */
static a4w4_layer_input case_input(const group_run *gr, const a4w4_layer_case_result *R,
                                   const activation *A)
{
    a4w4_layer_input in;
    memset(&in, 0, sizeof in);
    in.kind = R->kind;
    in.dtype = R->dtype;
    in.dims[0] = gr->M;
    in.dims[1] = gr->K;
    switch (R->kind) {
    case A4W4_INPUT_TENSOR_3D:
        in.dims[0] = gr->g->B;
        in.dims[1] = gr->g->S;
        in.dims[2] = gr->K;
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
        in.cat_y = gr->cat_y;
        in.D = gr->D;
        in.S1 = gr->S1;
        in.S2 = gr->S2;
        in.S3 = gr->S3;
        break;
    default: break;
    }
    return in;
}

/* 1. decision and reason: the policy oracle's, for the layer and for this input. */
static void check_decision(const group_run *gr, a4w4_layer_case_result *R)
{
    const a4w4_layer *L = &gr->L;
    const a4w4_policy_result *le = &gr->layer_expect;
    if (L->decision.decision != le->decision || L->decision.reason != le->reason ||
        L->on_asm != gr->expect_asm)
        fail(R, "layer decision %s/%s, the policy oracle says %s/%s",
             a4w4_decision_name(L->decision.decision), a4w4_policy_reason_name(L->decision.reason),
             a4w4_decision_name(le->decision), a4w4_policy_reason_name(le->reason));
    if (R->got.decision != R->expected.decision || R->got.reason != R->expected.reason ||
        strcmp(R->got.message, R->expected.message))
        fail(R, "input decision %s/%s, the policy oracle says %s/%s",
             a4w4_decision_name(R->got.decision), a4w4_policy_reason_name(R->got.reason),
             a4w4_decision_name(R->expected.decision),
             a4w4_policy_reason_name(R->expected.reason));
}

/* 2a. a rejected or refused input: the documented status and text, the output untouched, no
 * pair kernel run. */
static void check_refusal(const group_run *gr, a4w4_layer_case_result *R,
                          const counting_ops *before, size_t n_out, int reject)
{
    const counting_ops *C = &gr->C;
    const char *want = reject ? R->expected.message : A4W4_LAYER_MSG_TUPLE5_BIAS;
    int want_rc = reject ? A4W4_LAYER_EREJECT : A4W4_EINVAL;
    size_t touched = 0;
    for (size_t i = 0; i < n_out; i++)
        touched += gr->out[i] != A4W4_POISON_BF16;
    R->checked_outputs = n_out;
    R->mismatches = touched;
    if (R->status != want_rc)
        fail(R, "%s input returned status %d (%s), expected %d", reject ? "rejected"
             : "refused", R->status, a4w4_layer_strerror(R->status), want_rc);
    else if (strcmp(gr->L.error, want))
        fail(R, "error text '%s', documented '%s'", gr->L.error, want);
    if (touched)
        fail(R, "a refused input changed %zu of %zu output elements", touched, n_out);
    if (C->quantize != before->quantize || C->relayout != before->relayout ||
        C->gemm_asm != before->gemm_asm || C->gemm_fallback != before->gemm_fallback)
        fail(R, "a refused input ran pair kernels (quantize %u, relayout %u, gemm_asm "
                "%u, gemm_fallback %u)", C->quantize - before->quantize,
             C->relayout - before->relayout, C->gemm_asm - before->gemm_asm,
             C->gemm_fallback - before->gemm_fallback);
    if (R->pass)
        snprintf(R->note, sizeof R->note, "%s: %.380s", reject ? "rejected" : "refused",
                 gr->L.error);
}

/* The expected outputs into gr->expect: the oracle product + bias by the correctly rounded sum;
 * for the 5-tuple c1 [M, D, S1+S3] and c2 [M, D, S2] gathered from it. */
static void expected_outputs(group_run *gr, const activation *A, const a4w4_layer_case_result *R)
{
    uint16_t *e = gr->expect;
    size_t M = gr->M, N = gr->N, D = gr->D, S1 = gr->S1, S2 = gr->S2, S3 = gr->S3;
    if (R->kind != A4W4_INPUT_TUPLE5) {
        for (size_t i = 0; i < M * N; i++)
            e[i] = R->bias ? a4w4_layer_oracle_bias_add(A->y_ref[i], gr->bias[i % N])
                           : A->y_ref[i];
        return;
    }
    size_t W1 = S1 + S3, n1 = M * D * W1;
    for (size_t i = 0; i < n1; i++) {
        size_t m = i / (D * W1), d = i / W1 % D, j = i % W1;
        e[i] = j < S1 ? A->y_ref[m * N + d * (S1 + S2) + j]
                      : gr->cat_y[(m * D + d) * S3 + (j - S1)];
    }
    for (size_t i = 0; i < M * D * S2; i++) {
        size_t m = i / (D * S2), d = i / S2 % D, j = i % S2;
        e[n1 + i] = A->y_ref[m * N + d * (S1 + S2) + S1 + j];
    }
}

/* Outputs against gr->expect bit for bit (NaN == NaN; the poison counts as unwritten). */
static void compare_outputs(const group_run *gr, a4w4_layer_case_result *R, size_t n_out)
{
    a4w4_judge_grid grid = {n_out ? n_out : 1, NULL, NULL}; /* one row: col is the index */
    a4w4_comparison j;
    a4w4_judge_exact(&j, &grid, gr->out, gr->expect, n_out, A4W4_POISON_UNLESS_EXPECTED, NULL);
    if (!R->mismatches && j.nrec) {
        R->first_index = j.rec[0].col;
        R->first_got = j.rec[0].got;
        R->first_expected = j.rec[0].expected;
    }
    R->checked_outputs += j.checked;
    R->unwritten += j.unwritten;
    R->mismatches += j.mismatches;
    if (j.max_ulp > R->max_ulp)
        R->max_ulp = j.max_ulp;
    if (R->unwritten)
        fail(R, "%zu of %zu outputs never written", R->unwritten, n_out);
    if (R->mismatches)
        fail(R, "%zu of %zu outputs differ from the oracle path (ref quantize %s -> %s "
                "-> bias); first at %zu: got 0x%04x expected 0x%04x",
             R->mismatches, n_out, a4w4_scale_mode_name(gr->mode), gr->pair->contract,
             R->first_index, R->first_got, R->first_expected);
}

/* The path taken is the decided one: kernel calls of this apply, and the 3-D output shape. */
static void check_path(const group_run *gr, a4w4_layer_case_result *R,
                       const counting_ops *before)
{
    const counting_ops *C = &gr->C;
    a4w4_input_kind kind = R->kind;
    int q = kind == A4W4_INPUT_TENSOR_2D || kind == A4W4_INPUT_TENSOR_3D ||
            kind == A4W4_INPUT_TUPLE3 || kind == A4W4_INPUT_TUPLE5;
    unsigned dq = C->quantize - before->quantize, dr = C->relayout - before->relayout,
             da = C->gemm_asm - before->gemm_asm, df = C->gemm_fallback - before->gemm_fallback;
    unsigned eq = (unsigned)q, er = (unsigned)(gr->expect_asm && !q),
             ea = (unsigned)gr->expect_asm, ef = (unsigned)!gr->expect_asm;
    if (dq != eq || dr != er || da != ea || df != ef)
        fail(R, "kernel calls quantize %u relayout %u gemm_asm %u gemm_fallback %u, the "
                "%s path needs %u %u %u %u", dq, dr, da, df,
             gr->expect_asm ? "ASM" : "fallback", eq, er, ea, ef);
    const a4w4_layer *L = &gr->L;
    const a4w4_layer_group *g = gr->g;
    if (kind == A4W4_INPUT_TENSOR_3D &&
        (L->out_ndim != 3 || L->out_dims[0] != g->B || L->out_dims[1] != g->S ||
         L->out_dims[2] != gr->N))
        fail(R, "3-D output shape [%zu, %zu, %zu] (ndim %d), expected [%zu, %zu, %zu]",
             L->out_dims[0], L->out_dims[1], L->out_dims[2], L->out_ndim, g->B, g->S, gr->N);
}

/* The same activation through another input form gives the same bits: the 2-D output is
 * kept, the 3-D and 2-tuple outputs compared with it. */
static void check_same_as_2d(const group_run *gr, a4w4_layer_case_result *R, activation *A)
{
    size_t bytes = gr->M * gr->N * sizeof *gr->out;
    if (R->kind == A4W4_INPUT_TENSOR_2D) {
        free(A->y_2d);
        A->y_2d = NULL;
        if (R->status == A4W4_OK && (A->y_2d = malloc(bytes)))
            memcpy(A->y_2d, gr->out, bytes);
    } else if (R->kind == A4W4_INPUT_TENSOR_3D || R->kind == A4W4_INPUT_TUPLE2) {
        if (!A->y_2d)
            fail(R, "no 2-D output of the same activation to compare with");
        else if (memcmp(A->y_2d, gr->out, bytes))
            fail(R, "%s output differs from the 2-D output of the same activation",
                 R->kind == A4W4_INPUT_TUPLE2 ? "2-tuple" : "3-D");
    }
}

/* A 2-D input on an ASM layer: the same activation through the pair's fallback path (quantize
 * in the fallback's mode, row-major weight, gemm_fallback, bias), the ASM output against it.
 * Calls the pair directly (not counted: the path checks count the layer's calls only). */
static void flag_parity(const group_run *gr, a4w4_layer_case_result *R, const activation *A)
{
    size_t M = gr->M, N = gr->N, K = gr->K;
    const a4w4_layer_ops *p = gr->pair;
    if (R->kind != A4W4_INPUT_TENSOR_2D || !gr->expect_asm || R->status != A4W4_OK)
        return;
    uint8_t *q = malloc(M * K / 2), *s = malloc(M * gr->nb);
    uint16_t *y = malloc(M * N * sizeof *y);
    if (q && s && y &&
        !p->quantize(p->ctx, A->x, R->bias ? A4W4_IN_BF16 : A4W4_IN_F32, M, K,
                     gr->L.fallback_mode, 0, q, s) &&
        !p->gemm_fallback(p->ctx, q, s, gr->w, gr->ws, M, N, K, y)) {
        for (size_t i = 0; R->bias && i < M * N; i++)
            y[i] = a4w4_layer_oracle_bias_add(y[i], gr->bias[i % N]);
        R->has_parity = !a4w4_parity_diff_of(y, gr->out, M * N, &R->parity);
    }
    free(q);
    free(s);
    free(y);
}

/* 2b. a computed input: outputs, path, shape and the other forms of the same activation. */
static void check_computed(group_run *gr, a4w4_layer_case_result *R, activation *A,
                           const counting_ops *before, size_t n_out)
{
    R->computed = 1;
    if (!gr->has_oracle)
        fail(R, "contract '%s' of pair %s has no bit-exact oracle", gr->pair->contract,
             gr->pair->name);
    expected_outputs(gr, A, R);
    if (R->status != A4W4_OK)
        fail(R, "apply returned status %d: %s", R->status, gr->L.error);
    compare_outputs(gr, R, n_out);
    check_path(gr, R, before);
    check_same_as_2d(gr, R, A);
    flag_parity(gr, R, A);
    if (R->pass)
        snprintf(R->note, sizeof R->note, "%zu outputs bit-exact vs ref quantize (%s) "
                 "-> %s oracle%s%s", n_out, a4w4_scale_mode_name(gr->mode), gr->pair->contract,
                 R->bias ? " -> bias" : "",
                 R->kind == A4W4_INPUT_TUPLE2 ? "; == the 2-D output"
                 : R->kind == A4W4_INPUT_TENSOR_3D ? "; == the 2-D output, shape [B, S, N]"
                 : R->kind == A4W4_INPUT_TUPLE5 ? "; split + cat" : "");
}

/* 3. the weight: re-laid exactly once on ASM, never on fallback; 4. the warning: once per
 * process. */
static void check_weight(const group_run *gr, a4w4_layer_case_result *R)
{
    const counting_ops *C = &gr->C;
    const a4w4_layer *L = &gr->L;
    size_t N = gr->N, K = gr->K;
    R->preshuffles = C->preshuffle;
    R->swizzles = C->swizzle;
    unsigned want = (unsigned)gr->expect_asm;
    if (C->preshuffle != want || C->swizzle != want || L->preshuffles != want ||
        L->swizzles != want)
        fail(R, "weight re-laid %u (preshuffle) / %u (swizzle) times through the pair, the "
                "layer counts %u / %u; expected %u", C->preshuffle, C->swizzle,
             L->preshuffles, L->swizzles, want);
    if (!gr->again_ok)
        fail(R, "a second process_after_load returned %d and re-laid the weight", gr->again_rc);
    if (memcmp(L->w_fp4, gr->expect_asm ? gr->w_sh : gr->w, N * K / 2) ||
        memcmp(L->w_scale, gr->expect_asm ? gr->ws_sw : gr->ws, N * gr->nb))
        fail(R, "the layer's weight is not the %s of the loaded one",
             gr->expect_asm ? "contracts §3.1/3.2 layout" : "unchanged copy");
    if (gr->layer_expect.warn_once &&
        (a4w4_layer_warn_count() != 1 || !a4w4_layer_warning()[0]))
        fail(R, "a warn-once layer left %u process warnings", a4w4_layer_warn_count());
}

/* Case ci of the group: apply its input on a poisoned output, then every check. */
static void check_case(group_run *gr, size_t ci, a4w4_layer_case_result *R)
{
    case_start(gr, ci, R);
    if (gr->proc_rc) {
        fail(R, "the layer could not be set up: %s (status %d)", gr->proc_err, gr->proc_rc);
        return;
    }
    activation *A = &gr->act[R->bias];
    a4w4_layer_input in = case_input(gr, R, A);
    const int reject = R->expected.decision == A4W4_DECIDE_REJECT;
    const int refuse = !reject && R->kind == A4W4_INPUT_TUPLE5 && R->bias;
    const size_t n_out = R->kind == A4W4_INPUT_TUPLE5 ? gr->out5 : gr->M * gr->N;
    for (size_t i = 0; i < n_out + OUT_GUARD; i++)
        gr->out[i] = A4W4_POISON_BF16;
    counting_ops before = gr->C;
    double t0 = a4w4_now();
    R->status = a4w4_layer_apply(&gr->L, &in, R->bias ? gr->bias : NULL, gr->out);
    R->time_ms = (a4w4_now() - t0) * 1e3;
    R->got = gr->L.last;
    check_decision(gr, R);
    size_t guard_bad = 0;
    for (size_t i = n_out; i < n_out + OUT_GUARD; i++)
        guard_bad += gr->out[i] != A4W4_POISON_BF16;
    if (guard_bad)
        fail(R, "%zu elements written past the output's %zu", guard_bad, n_out);
    if (reject || refuse)
        check_refusal(gr, R, &before, n_out, reject);
    else
        check_computed(gr, R, A, &before, n_out);
    check_weight(gr, R);
}

a4w4_hstatus a4w4_layer_check_group(const a4w4_layer_ops *pair, const a4w4_layer_group *g,
                                    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP],
                                    int *fails, char *err, size_t errlen)
{
    if (fails)
        *fails = 0;
    if (!pair || !g || !g->gfx || !res || !g->N || !g->K || g->K % 32 || !g->B || !g->S) {
        snprintf(err, errlen, "layers: group needs a pair, gfx, N >= 1, K a multiple of 32, "
                              "B and S >= 1");
        return A4W4_ST_BADINPUT;
    }
    group_run *gr = malloc(sizeof *gr);
    if (!gr) {
        snprintf(err, errlen, "layers: out of memory");
        return A4W4_ST_NOMEM;
    }
    a4w4_hstatus rc = group_setup(gr, pair, g);
    if (!rc) {
        group_data(gr);
        rc = group_oracle(gr, err, errlen);
    }
    if (rc == A4W4_ST_NOMEM)
        snprintf(err, errlen, "layers: %s: out of memory", gr->gname);
    if (!rc) {
        group_layer(gr);
        for (size_t ci = 0; ci < A4W4_LAYER_CASES_PER_GROUP; ci++) {
            check_case(gr, ci, &res[ci]);
            if (fails)
                *fails += !res[ci].pass;
        }
    }
    group_free(gr);
    free(gr);
    return rc;
}
