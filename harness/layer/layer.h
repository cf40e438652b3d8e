/* layer.h — SGLang's Quark W4A4 MXFP4 linear layer end to end (contracts §6), in C, over a
 * pluggable backend pair, and the checks `a4w4check layers` runs on it.
 *
 * A layer holds one weight (w_fp4 [N, K/2] fp4x2, w_scale [N, K/32] E8M0, both row-major as
 * loaded, like torch.nn.Linear). After load, a4w4_layer_process_after_load() asks the policy
 * oracle (ref/a4w4_policy.h) once: on the ASM path it swizzles the weight scale (contracts §3.2)
 * and preshuffles the weight (§3.1) with the pair's layout kernels, exactly once, and keeps
 * only the re-laid copies (SGLang replaces the parameters); a layer kept on the fallback
 * (Triton) path keeps the row-major weight. a4w4_layer_apply() then adapts each activation:
 *
 *   input (a4w4_layer_input)      ASM layer                            fallback layer
 *   2-D x [M, K]                   quantize (shuffle) -> gemm_asm       quantize -> gemm_fallback
 *   3-D x [B, S, K]                flattened to [B*S, K], as 2-D; out is [B, S, N]
 *   2-tuple (x_fp4, x_scale)       scale re-laid (§3.3) -> gemm_asm     gemm_fallback as is
 *   3-tuple (x, x_scale, y)        rejected (policy message)            x_scale NULL: quantize x
 *                                                                       (the pre-quant kernel's
 *                                                                       job) -> gemm_fallback;
 *                                                                       else as the 2-tuple
 *   5-tuple (x, y, S1, S2, dtype)  rejected (policy message)            quantize -> gemm_fallback
 *                                                                       -> split + cat (below);
 *                                                                       a bias is refused
 *   other tuple lengths            rejected (policy message)            error (SGLang asserts)
 *
 * Fallback layers take the 3- and 5-tuples because contracts §6.5 rejects them only on a marked
 * layer and the policy oracle decides "triton" for every input of an unmarked layer; what
 * they compute follows SGLang's Triton path (QuarkW4A4MXFP4.apply_weights): (x, None, y) is
 * gemm_afp4wfp4_pre_quant (quantize inside the GEMM, write y), (x_fp4, x_scale, y) is
 * gemm_afp4wfp4 into y, and (x, y, S1, S2, out_dtype) is fused_gemm_afp4wfp4_split_cat. Here
 * `out` plays y's role. Tuple operands are 2-D ([M, ...]).
 *
 * Quantization modes (contracts §2): the ASM path quantizes with per_1x32_f4_quant (default
 * round_up); the Triton path with dynamic_mxfp4_quant, whose scale rule is the `even` formula
 * (contracts §2 "AITER's Triton fused quantizer computes the same code"). Both are layer fields.
 *
 * Bias (bf16 [N], optional) is added after the GEMM as SGLang's `y = y + bias` on bf16
 * tensors does it: each output y (bf16) and bias[n] (bf16) are widened to fp32 exactly, added
 * in fp32 (one RNE rounding), and the sum is rounded to bf16 by RNE. That is torch's bf16
 * add (it computes in float, its opmath type, and rounds once to bf16), and it equals the
 * correctly rounded bf16 of the exact sum: rounding first to 24 bits and then to 8 is
 * innocuous because 24 >= 2*8 + 2 (double rounding of +), and bf16 and fp32 share the
 * exponent range (no overflow or underflow difference). NaN in, NaN out; +0 + -0 = +0.
 *
 * Library code: prints nothing. The fallback warning (policy reasons scale_unsupported and
 * small_n) is emitted once per process through a handler (a4w4_layer_set_warn_handler) and
 * stored (a4w4_layer_warning); the CLI prints it. */
#ifndef A4W4_LAYER_H
#define A4W4_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_policy.h"
#include "a4w4_quant.h"
#include "criteria.h"
#include "status.h"

/* ---- status codes (beside ref's a4w4_status: 0 ok, -1 EINVAL, -2 EUNSUPPORTED, -3 ENOMEM) */
enum {
    A4W4_LAYER_EREJECT = -10, /* the policy rejects this input on this layer (contracts §6.5) */
    A4W4_LAYER_ESTATE = -11,  /* apply before process_after_load, or processed twice */
    A4W4_LAYER_EBACKEND = -12 /* a backend-pair operation failed (its status in the message) */
};

/* One short sentence per status (layer or ref codes; static storage). */
const char *a4w4_layer_strerror(int status);

/* The text of the one refusal that is not the policy's: a bias with a 5-tuple on a fallback
 * layer. SGLang computes `y = y + bias` on the 5-tuple's cat input y (or fails to broadcast)
 * and returns the split outputs without it, so the bias never reaches the outputs; the layer
 * refuses instead of dropping it silently. */
#define A4W4_LAYER_MSG_TUPLE5_BIAS                                                            \
    "bias with a 5-tuple (split + cat) input: SGLang adds it to the cat input y, not to the " \
    "outputs; refused, nothing computed (contracts §6.5)"

/* ---- the backend pair ------------------------------------------------------------------ */

/* The kernels one layer runs on: the activation quantizer, the three layouts and the two
 * GEMMs. Every function gets ctx first and returns A4W4_OK (0) or a negative status; host
 * pointers throughout (a GPU pair copies in and out, like a4w4_gpu.h's host forms). Shapes
 * and layouts as in ref/ and harness/backends/cpu_sut.h; the pairs themselves (cpu, hip) are
 * defined in harness/backends/ (layer_pairs.h) and handed to the functions below:
 *   quantize              x [M, K] (dtype bf16 or fp32) -> x_fp4 [M, K/2] and x_scale:
 *                         shuffle == 0: [M, K/32] row-major; shuffle != 0: contracts §3.3,
 *                         a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(K/32)
 *                         bytes, pads 0x7F (SGLang). contracts §2.
 *   act_scale_relayout    x_scale [M, cols] row-major -> contracts §3.3 shuffled, pad rows
 *                         row_fill, pad columns col_fill.
 *   preshuffle_weight     w [N, K/2] -> contracts §3.1 (N*K/2 bytes).
 *   swizzle_weight_scale  [rows, cols] -> contracts §3.2 (rows*cols bytes).
 *   gemm_asm              y [M, N] bf16 = A W^T from a_fp4 [M, K/2], a_scale_shuffled
 *                         (§3.3), w_fp4_shuffled (§3.1), w_scale_swizzled (§3.2).
 *   gemm_fallback         the same from row-major operands (Triton gemm_afp4wfp4's role).
 * contract: the accumulation contract both GEMMs keep (contracts §4.1): "ordered(S)" or "exact"
 * are checked bit for bit; anything else cannot be checked bit-exactly. */
typedef struct a4w4_layer_ops {
    const char *name;     /* "cpu"; `a4w4check layers --backend NAME` */
    const char *what;     /* one line */
    const char *contract; /* "ordered(1)" */
    void *ctx;            /* passed to every function */
    /* 0 when usable here, else fills why and returns nonzero. NULL: always usable. */
    int (*available)(char *why, size_t whylen);
    int (*quantize)(void *ctx, const void *x, a4w4_in_dtype dtype, size_t M, size_t K,
                    a4w4_scale_mode mode, int shuffle, uint8_t *x_fp4, uint8_t *x_scale);
    int (*act_scale_relayout)(void *ctx, const uint8_t *x_scale, size_t M, size_t cols,
                              uint8_t row_fill, uint8_t col_fill, uint8_t *dst);
    int (*preshuffle_weight)(void *ctx, const uint8_t *w_fp4, size_t N, size_t K, uint8_t *dst);
    int (*swizzle_weight_scale)(void *ctx, const uint8_t *w_scale, size_t rows, size_t cols,
                                uint8_t *dst);
    int (*gemm_asm)(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                    const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                    size_t N, size_t K, uint16_t *y);
    int (*gemm_fallback)(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale,
                         const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                         size_t K, uint16_t *y);
} a4w4_layer_ops;

/* ---- the layer ------------------------------------------------------------------------- */

typedef struct {
    const a4w4_layer_ops *ops;
    size_t N, K;
    a4w4_scale_mode asm_mode;      /* quantizer mode on the ASM path (default round_up) */
    a4w4_scale_mode fallback_mode; /* on the fallback path (default even: Triton's rule) */
    /* The weight: row-major as loaded; after process_after_load on the ASM path, the
     * preshuffled weight (§3.1) and swizzled scale (§3.2) replace them. */
    uint8_t *w_fp4;   /* N*K/2 bytes */
    uint8_t *w_scale; /* N*K/32 bytes */
    int processed;    /* process_after_load succeeded */
    int flag_on;      /* as given to process_after_load */
    char gfx[32];
    int on_asm;                /* the policy marked the layer (weights re-laid) */
    a4w4_policy_result decision; /* the layer's decision: the policy's answer for a 2-D input
                                  * (asm/asm_quantize on a marked layer; triton + reason else) */
    unsigned preshuffles, swizzles; /* layout kernel calls made on the weight (0 or 1 each) */
    int warned;                /* this layer's processing emitted the process-wide warning */
    a4w4_policy_result last;   /* the policy's answer for the last apply call's input */
    size_t out_dims[3];        /* the last successful apply's output shape */
    int out_ndim;              /* 2 ([M, N]), 3 ([B, S, N]); 5-tuple: 3 ([M, D, S1+S3], then
                                * [M, D, S2] follows) */
    char error[400];           /* one line naming the input and the rule of the last error */
} a4w4_layer;

/* Set up a layer over `ops` with a copy of the loaded weight: w_fp4 [N, K/2] fp4x2, w_scale
 * [N, K/32] E8M0, both row-major. Modes default to round_up (ASM) and even (fallback).
 * Errors: A4W4_EINVAL (NULL pointer, N == 0, K == 0 or K % 32 != 0; L->error set when L is
 * not NULL), A4W4_ENOMEM. */
int a4w4_layer_init(a4w4_layer *L, const a4w4_layer_ops *ops, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t N, size_t K);
/* Release the layer's buffers (L may be NULL or partly set up). */
void a4w4_layer_free(a4w4_layer *L);

/* SGLang's process_weights_after_loading (contracts §6 steps 1–4): decides the layer's path with
 * a4w4_policy_decide(flag_on, gfx, N, 2, N, K/32, 2-D input) and records it in L->decision.
 * On the ASM path: ops->swizzle_weight_scale and ops->preshuffle_weight, once each, into new
 * buffers that replace the row-major ones. When the policy says "warn once" (scale
 * unsupported, N <= 128) and no layer of this process has warned yet, the warning (the
 * policy's message) goes to the handler and is stored; L->warned = 1.
 * Errors: A4W4_EINVAL (NULL L or gfx), A4W4_LAYER_ESTATE (already processed: the weight is
 * never re-laid twice), A4W4_LAYER_EBACKEND (a layout kernel failed; the layer stays
 * unprocessed with its row-major weight), A4W4_ENOMEM. */
int a4w4_layer_process_after_load(a4w4_layer *L, int flag_on, const char *gfx);

/* One activation given to apply. dims: 2-D and tuples {M, K, -}; 3-D {B, S, K}. */
typedef struct {
    a4w4_input_kind kind;
    int tuple_len;          /* A4W4_INPUT_TUPLE_OTHER only: the tuple's length */
    size_t dims[3];
    a4w4_in_dtype dtype;    /* of x: A4W4_IN_BF16 (bf16 bits) or A4W4_IN_F32 */
    const void *x;          /* 2-D, 3-D; 3-tuple pre-quant form; 5-tuple: [M, K] row-major */
    const uint8_t *x_fp4;   /* 2-tuple; 3-tuple pre-quantized form: [M, K/2] */
    const uint8_t *x_scale; /* 2-tuple; 3-tuple pre-quantized form (NULL: pre-quant form):
                             * [M, K/32] row-major E8M0 */
    const uint16_t *cat_y;  /* 5-tuple: y [M, D, S3] bf16, concatenated after the first S1 */
    size_t D, S1, S2, S3;   /* 5-tuple: N == D * (S1 + S2), S3 may be 0 */
} a4w4_layer_input;

/* Output elements (bf16) apply writes for this input: M*N (3-D: B*S*N); 5-tuple:
 * M*D*(S1+S3) + M*D*S2 (c1 [M, D, S1+S3] then c2 [M, D, S2]). 0 for a kind with no output. */
size_t a4w4_layer_out_elems(const a4w4_layer *L, const a4w4_layer_input *in);

/* SGLang's apply_weights (contracts §6 step 5) for one input; see the table at the top.
 * bias: bf16 [N] or NULL, added after the GEMM (rule at the top). out: bf16,
 * a4w4_layer_out_elems() elements, row-major: [M, N]; 3-D input [B, S, N]; 5-tuple c1 then
 * c2 with c = the [M, N] product viewed [M, D, S1+S2], c1 = cat(c[..., :S1], y, dim=-1),
 * c2 = c[..., S1:]. out is written only on success (computed aside, then copied).
 * L->last gets the policy's answer for this input in every case where the policy is asked.
 * Errors (L->error names the input and the rule; out untouched, nothing computed):
 *   A4W4_LAYER_EREJECT  3-, 5- or other tuple on an ASM layer: L->error is exactly the policy
 *                       oracle's message (it names the tuple length and the flag to unset);
 *   A4W4_LAYER_ESTATE   not processed;
 *   A4W4_EINVAL         NULL pointers, a shape that disagrees with the layer (K, N == D*(S1+
 *                       S2)), dtype not bf16/fp32, a zero dimension, a tuple length SGLang's
 *                       Triton path refuses (not 2, 3, 5) on a fallback layer, a bias with a
 *                       5-tuple (A4W4_LAYER_MSG_TUPLE5_BIAS);
 *   A4W4_LAYER_EBACKEND a pair operation failed; A4W4_ENOMEM. */
int a4w4_layer_apply(a4w4_layer *L, const a4w4_layer_input *in, const uint16_t *bias,
                     uint16_t *out);

/* ---- the once-per-process fallback warning --------------------------------------------- */

typedef void (*a4w4_layer_warn_fn)(const char *message, void *user);
/* Where the warning goes (NULL: only stored). Process-global. */
void a4w4_layer_set_warn_handler(a4w4_layer_warn_fn fn, void *user);
/* Warnings emitted in this process so far (0 or 1) and the stored text ("" before). */
unsigned a4w4_layer_warn_count(void);
const char *a4w4_layer_warning(void);
/* Forget the warning (a new "process" for tests and repeated matrix runs). */
void a4w4_layer_warn_reset(void);

/* ---- the bias rule, as a function ------------------------------------------------------ */

/* bf16 y + bf16 b as SGLang's bf16 add (rule at the top), bits in, bits out. */
uint16_t a4w4_layer_bias_add(uint16_t y, uint16_t b);

/* ---- checking: the `layers` matrix ----------------------------------------------------- */

/* One layer of the matrix (flag, gfx, N, K) and the activation rows its cases use: 2-D and
 * tuple inputs are [M, K] with M = B*S; the 3-D input is the same rows viewed [B, S, K]. */
typedef struct {
    int flag_on;
    const char *gfx;
    size_t N, K, B, S;
    uint64_t seed;
} a4w4_layer_group;

/* What one case (group x input kind x bias) found. verdict: pass only when every check
 * held: the decision and reason equal the policy oracle's; computed outputs equal the
 * oracle path (ref quantize -> ordered(1)/exact GEMM oracle -> bias by the correctly rounded
 * sum) bit for bit, with nothing left unwritten and nothing written past the output; a
 * 2-tuple's output equals the plain 2-D output of the same activation, a 3-D output the 2-D
 * one; a rejected or refused input returns the documented status and text, leaves the
 * (poisoned) output unchanged and runs no pair kernel; the weight was re-laid exactly once
 * on an ASM layer and never on a fallback layer, however many applies ran, and holds the
 * §3.1/§3.2 layouts of the loaded weight; a warn-once layer leaves one process warning. */
typedef struct {
    char name[96];         /* e.g. "on_gfx950_n5120_k256_tuple2_bias" */
    int flag_on;
    char gfx[16];
    size_t M, N, K;        /* M = B*S */
    a4w4_input_kind kind;
    int bias;
    a4w4_in_dtype dtype;   /* of the plain activation */
    a4w4_policy_result expected; /* the policy oracle's answer for this input */
    a4w4_policy_result got;      /* the layer's record (L->last) */
    a4w4_decision layer_decision;
    int status;            /* apply's return */
    int computed;          /* 1: outputs compared with the oracle; 0: a refusal was checked */
    size_t checked_outputs, mismatches, unwritten;
    size_t first_index;    /* first mismatching output (flat), when mismatches */
    uint16_t first_got, first_expected;
    unsigned max_ulp;
    unsigned preshuffles, swizzles; /* counted through the pair, at the end of the case */
    int pass;
    char note[400];        /* the first failed check, or what was checked */
    double time_ms;
    /* 2-D inputs on an ASM layer: the same activation through the pair's fallback path
     * (quantize even, row-major gemm_fallback, bias) as reference, the ASM output against it:
     * "does flag-on give the bits flag-off gives" (has_parity 0: not such a case) */
    int has_parity;
    a4w4_parity_diff parity;
} a4w4_layer_case_result;

/* The default matrix: flag {on, off} x gfx {gfx950, gfx942, gfx1100} x N x K {256, 288}
 * (K/32 = 8 and 9) with N {128, 144, qwen_n} (<= 128; not a multiple of 32; Qwen3.8-27B's
 * hidden size 5120 by default), B x S = 2 x 3. Writes up to max groups; returns the count
 * (36). Each group has 10 cases: kinds {2-D, 3-D, 2-tuple, 3-tuple, 5-tuple} x bias
 * {absent, present}. */
size_t a4w4_layer_matrix(size_t qwen_n, a4w4_layer_group *groups, size_t max);
#define A4W4_LAYER_CASES_PER_GROUP 10

/* Run one group's 10 cases on pair `ops` (wrapped to count its kernel calls) and fill
 * res[0..9]; *fails (may be NULL) gets the number of failing cases. Data are generated from
 * (seed, flag, gfx, N, K): weights with scale codes 118..127, activations in blocks of
 * different magnitudes (bf16 when the case has a bias, fp32 otherwise), bias bf16. Returns
 * A4W4_ST_OK (verdicts in res), or, when the group could not be run at all (err says why),
 * A4W4_ST_BADINPUT (a bad group; the oracles refused its data) or A4W4_ST_NOMEM. Prints
 * nothing. (layer/layer_checks.c) */
a4w4_hstatus a4w4_layer_check_group(const a4w4_layer_ops *ops, const a4w4_layer_group *g,
                                    a4w4_layer_case_result res[A4W4_LAYER_CASES_PER_GROUP],
                                    int *fails, char *err, size_t errlen);

/* The oracle side of the bias rule, computed apart from a4w4_layer_bias_add: the correctly
 * rounded (RNE) bf16 of the exact sum of two bf16 values, as the double sum rounded to 8
 * significant bits (quantum 2^-133 at most) by nearbyint; the double rounding is innocuous
 * since 53 >= 2*8 + 2. Overflow -> +-Inf, NaN -> 0x7FC0, -0 only for -0 + -0. */
uint16_t a4w4_layer_oracle_bias_add(uint16_t y, uint16_t b);

#endif
