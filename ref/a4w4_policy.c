/* a4w4_policy.c — SGLang's per-layer ASM/Triton decision and tuple-input rejection (contracts §6). */
#include "a4w4_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"

const char *a4w4_decision_name(a4w4_decision d)
{
    switch (d) {
    case A4W4_DECIDE_ASM: return "asm";
    case A4W4_DECIDE_TRITON: return "triton";
    case A4W4_DECIDE_REJECT: return "reject";
    }
    return "unknown";
}

const char *a4w4_policy_reason_name(a4w4_policy_reason r)
{
    switch (r) {
    case A4W4_REASON_FLAG_OFF: return "flag_off";
    case A4W4_REASON_NOT_GFX95X: return "not_gfx95x";
    case A4W4_REASON_SCALE_UNSUPPORTED: return "scale_unsupported";
    case A4W4_REASON_SMALL_N: return "small_n";
    case A4W4_REASON_ASM_QUANTIZE: return "asm_quantize";
    case A4W4_REASON_ASM_FLATTEN: return "asm_flatten";
    case A4W4_REASON_ASM_RELAYOUT: return "asm_relayout";
    case A4W4_REASON_REJECT_TUPLE3: return "reject_tuple3";
    case A4W4_REASON_REJECT_TUPLE5: return "reject_tuple5";
    case A4W4_REASON_REJECT_TUPLE: return "reject_tuple";
    }
    return "unknown";
}

int a4w4_input_kind_parse(const char *s, a4w4_input_kind *kind, int *tuple_len)
{
    if (!s || !kind || !tuple_len)
        return A4W4_EINVAL;
    *tuple_len = 0;
    if (!strcmp(s, "2d")) {
        *kind = A4W4_INPUT_TENSOR_2D;
        return A4W4_OK;
    }
    if (!strcmp(s, "3d")) {
        *kind = A4W4_INPUT_TENSOR_3D;
        return A4W4_OK;
    }
    if (strncmp(s, "tuple", 5) != 0 || s[5] < '1' || s[5] > '9')
        return A4W4_EINVAL;
    char *end = NULL;
    long n = strtol(s + 5, &end, 10);
    if (*end || n < 1 || n > 1000)
        return A4W4_EINVAL;
    *tuple_len = (int)n;
    *kind = n == 2 ? A4W4_INPUT_TUPLE2
          : n == 3 ? A4W4_INPUT_TUPLE3
          : n == 5 ? A4W4_INPUT_TUPLE5 : A4W4_INPUT_TUPLE_OTHER;
    return A4W4_OK;
}

static int is_gfx95x(const char *gfx)
{
    return strncmp(gfx, "gfx95", 5) == 0 && gfx[5] != '\0' && gfx[6] == '\0';
}

static void set(a4w4_policy_result *o, a4w4_decision d, a4w4_policy_reason r, int warn,
                int layer_asm)
{
    o->decision = d;
    o->reason = r;
    o->warn_once = warn;
    o->layer_asm = layer_asm;
}

int a4w4_policy_decide(int flag_on, const char *gfx, size_t N, int scale_ndim, size_t scale_rows,
                       size_t scale_cols, a4w4_input_kind kind, int tuple_len,
                       a4w4_policy_result *out)
{
    if (!out || !gfx || N < 1 || (int)kind < (int)A4W4_INPUT_TENSOR_2D ||
        (int)kind > (int)A4W4_INPUT_TUPLE_OTHER)
        return A4W4_EINVAL;
    if (kind == A4W4_INPUT_TUPLE_OTHER &&
        (tuple_len < 1 || tuple_len == 2 || tuple_len == 3 || tuple_len == 5))
        return A4W4_EINVAL;
    memset(out, 0, sizeof *out);
    char *m = out->message;
    size_t ml = sizeof out->message;

    /* Step 1: opt-in flag and device. */
    if (!flag_on) {
        set(out, A4W4_DECIDE_TRITON, A4W4_REASON_FLAG_OFF, 0, 0);
        snprintf(m, ml, "%s is off: Triton gemm_afp4wfp4 path (contracts §6.1)", A4W4_POLICY_FLAG);
        return A4W4_OK;
    }
    if (!is_gfx95x(gfx)) {
        set(out, A4W4_DECIDE_TRITON, A4W4_REASON_NOT_GFX95X, 0, 0);
        snprintf(m, ml, "device %s is not gfx95x: Triton gemm_afp4wfp4 path (contracts §6.1)", gfx);
        return A4W4_OK;
    }
    /* Step 2: weight-scale swizzle support (contracts §3.2). */
    if (!a4w4_scale_swizzle_supported(scale_ndim, scale_rows, scale_cols)) {
        set(out, A4W4_DECIDE_TRITON, A4W4_REASON_SCALE_UNSUPPORTED, 1, 0);
        if (scale_ndim == 2)
            snprintf(m, ml,
                     "weight scale [%zu, %zu] is not swizzle-supported (rows %% 32 == 0 and cols "
                     "%% 8 == 0 needed): warn once, this layer keeps Triton (contracts §6.2)",
                     scale_rows, scale_cols);
        else
            snprintf(m, ml,
                     "weight scale has %d dims, the swizzle needs 2: warn once, this layer keeps "
                     "Triton (contracts §6.2)",
                     scale_ndim);
        return A4W4_OK;
    }
    /* Step 3: the N <= 128 fence. */
    if (N <= 128) {
        set(out, A4W4_DECIDE_TRITON, A4W4_REASON_SMALL_N, 1, 0);
        snprintf(m, ml,
                 "N %zu <= 128: warn once, this layer keeps Triton (the untuned ASM heuristic "
                 "returned wrong rows for N <= 128, contracts §6.3)",
                 N);
        return A4W4_OK;
    }
    /* Step 4: the layer is marked; step 5: the per-call input. */
    switch (kind) {
    case A4W4_INPUT_TENSOR_2D:
        set(out, A4W4_DECIDE_ASM, A4W4_REASON_ASM_QUANTIZE, 0, 1);
        snprintf(m, ml,
                 "ASM layer: activation [M, K] quantized (per_1x32, shuffle=True) -> "
                 "gemm_a4w4(bpreshuffle=True) (contracts §6.5)");
        break;
    case A4W4_INPUT_TENSOR_3D:
        set(out, A4W4_DECIDE_ASM, A4W4_REASON_ASM_FLATTEN, 0, 1);
        snprintf(m, ml,
                 "ASM layer: activation [B, S, K] flattened to [B*S, K], quantized, "
                 "gemm_a4w4(bpreshuffle=True), reshaped back (contracts §6.5)");
        break;
    case A4W4_INPUT_TUPLE2:
        set(out, A4W4_DECIDE_ASM, A4W4_REASON_ASM_RELAYOUT, 0, 1);
        snprintf(m, ml,
                 "ASM layer: pre-quantized 2-tuple (x_fp4, x_scale); the row-major scale is "
                 "padded and shuffled (contracts §3.3), x_fp4 used as is (contracts §6.5)");
        break;
    case A4W4_INPUT_TUPLE3:
    case A4W4_INPUT_TUPLE5: {
        int len = kind == A4W4_INPUT_TUPLE3 ? 3 : 5;
        set(out, A4W4_DECIDE_REJECT,
            len == 3 ? A4W4_REASON_REJECT_TUPLE3 : A4W4_REASON_REJECT_TUPLE5, 0, 1);
        snprintf(m, ml,
                 "pre-quantized %d-tuple input (%s epilogue) is not supported on an AITER ASM "
                 "FP4 GEMM layer (weights already preshuffled, no per-call fallback); unset %s "
                 "to use the Triton path (contracts §6.5)",
                 len, len == 3 ? "atomic pre-quant" : "split + cat", A4W4_POLICY_FLAG);
        break;
    }
    case A4W4_INPUT_TUPLE_OTHER:
        set(out, A4W4_DECIDE_REJECT, A4W4_REASON_REJECT_TUPLE, 0, 1);
        snprintf(m, ml,
                 "%d-tuple input is not a known activation form on an AITER ASM FP4 GEMM layer "
                 "(weights already preshuffled, no per-call fallback); unset %s to use the "
                 "Triton path (contracts §6.5)",
                 tuple_len, A4W4_POLICY_FLAG);
        break;
    }
    return A4W4_OK;
}
