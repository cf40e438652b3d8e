/* a4w4_policy.h — SGLang's per-layer decision for the Quark W4A4 MXFP4 linear with the
 * opt-in AITER ASM path (contracts §6), as one pure function.
 *
 * Layer decision (once, after weights load), in this order:
 *   1. flag SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM off, or the device not gfx95x -> Triton;
 *   2. weight scale not swizzle-supported (contracts §3.2) -> Triton, warn once;
 *   3. N <= 128 -> Triton, warn once (the untuned ASM heuristic returned wrong rows there);
 *   4. else the layer is marked for ASM (scale swizzled, weight preshuffled).
 * Per call on a marked layer: a 2-D or 3-D activation is quantized (3-D flattened); a
 * pre-quantized 2-tuple gets its scale re-laid (contracts §3.3); a 3- or 5-tuple (or any other
 * tuple) is rejected, since the weights are already preshuffled and there is no per-call
 * fallback. A layer left on Triton takes every input kind on the Triton path. */
#ifndef A4W4_POLICY_H
#define A4W4_POLICY_H

#include <stddef.h>

#include "a4w4_formats.h"

#define A4W4_POLICY_FLAG "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM"

typedef enum {
    A4W4_DECIDE_ASM = 0,
    A4W4_DECIDE_TRITON = 1,
    A4W4_DECIDE_REJECT = 2
} a4w4_decision;

typedef enum {
    A4W4_INPUT_TENSOR_2D = 0, /* plain activation [M, K] */
    A4W4_INPUT_TENSOR_3D,     /* plain activation [B, S, K] */
    A4W4_INPUT_TUPLE2,        /* (x_fp4, x_scale), row-major scale */
    A4W4_INPUT_TUPLE3,        /* atomic pre-quant epilogue */
    A4W4_INPUT_TUPLE5,        /* split + cat epilogue */
    A4W4_INPUT_TUPLE_OTHER    /* a tuple of any other length */
} a4w4_input_kind;

typedef enum {
    A4W4_REASON_FLAG_OFF = 0,      /* triton: the opt-in flag is not set */
    A4W4_REASON_NOT_GFX95X,        /* triton: the device is not gfx95x */
    A4W4_REASON_SCALE_UNSUPPORTED, /* triton, warn once: weight scale not swizzle-supported */
    A4W4_REASON_SMALL_N,           /* triton, warn once: N <= 128 */
    A4W4_REASON_ASM_QUANTIZE,      /* asm: 2-D activation quantized with shuffle=True */
    A4W4_REASON_ASM_FLATTEN,       /* asm: 3-D activation flattened, quantized, reshaped */
    A4W4_REASON_ASM_RELAYOUT,      /* asm: 2-tuple, scale re-laid (contracts §3.3) */
    A4W4_REASON_REJECT_TUPLE3,     /* reject: 3-tuple */
    A4W4_REASON_REJECT_TUPLE5,     /* reject: 5-tuple */
    A4W4_REASON_REJECT_TUPLE       /* reject: tuple of another length */
} a4w4_policy_reason;

typedef struct {
    a4w4_decision decision;
    a4w4_policy_reason reason;
    int warn_once;     /* 1: SGLang logs this once per process (reasons 2 and 3) */
    int layer_asm;     /* 1: the layer is marked for ASM (weights preshuffled) */
    char message[320]; /* one line naming the rule */
} a4w4_policy_result;

/* The decision for one layer and one input (contracts §6).
 * flag_on: SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM set; gfx: device arch ("gfx950"; gfx95x means
 * "gfx95" followed by one more character); N: output features (>= 1); scale_ndim, scale_rows,
 * scale_cols: the weight-scale tensor shape (normally 2, N, K/32; rows and cols are read only
 * when ndim is 2); kind: the input; tuple_len: the tuple's length for
 * A4W4_INPUT_TUPLE_OTHER (ignored otherwise). Uses a4w4_scale_swizzle_supported
 * (a4w4_layout.h) for step 2. Errors: A4W4_EINVAL for NULL out/gfx, N < 1, an unknown kind,
 * or TUPLE_OTHER with tuple_len 2, 3 or 5 or < 1. */
int a4w4_policy_decide(int flag_on, const char *gfx, size_t N, int scale_ndim, size_t scale_rows,
                       size_t scale_cols, a4w4_input_kind kind, int tuple_len,
                       a4w4_policy_result *out);

/* "asm", "triton", "reject". */
const char *a4w4_decision_name(a4w4_decision d);
/* "flag_off", "not_gfx95x", "scale_unsupported", "small_n", "asm_quantize", "asm_flatten",
 * "asm_relayout", "reject_tuple3", "reject_tuple5", "reject_tuple". */
const char *a4w4_policy_reason_name(a4w4_policy_reason r);
/* Parse an input kind name: "2d", "3d", "tuple2", "tuple3", "tuple5", or "tupleN" for any
 * other N >= 1 (sets *tuple_len). Returns A4W4_OK or A4W4_EINVAL. */
int a4w4_input_kind_parse(const char *s, a4w4_input_kind *kind, int *tuple_len);

#endif
