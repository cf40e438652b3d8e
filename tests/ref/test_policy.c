/* test_policy.c — contracts §6: SGLang's per-layer ASM/Triton decision, one test per branch, the
 * order of the checks, and the 3-/5-tuple rejection message (tuple length and the flag). */
#include <criterion/criterion.h>

#include <string.h>

#include "a4w4_policy.h"

static a4w4_policy_result r;

/* A layer with N output features and K inputs: weight scale [N, K/32]. */
static int decide(int flag, const char *gfx, size_t N, size_t K, a4w4_input_kind kind)
{
    return a4w4_policy_decide(flag, gfx, N, 2, N, K / 32, kind, 0, &r);
}

static void expect(a4w4_decision d, a4w4_policy_reason reason)
{
    cr_assert_eq(r.decision, d, "decision %s, message: %s", a4w4_decision_name(r.decision),
                 r.message);
    cr_assert_eq(r.reason, reason, "reason %s, message: %s", a4w4_policy_reason_name(r.reason),
                 r.message);
    cr_assert_gt(strlen(r.message), 10);
}

Test(policy, flag_off_keeps_triton)
{
    cr_assert_eq(decide(0, "gfx950", 5120, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_FLAG_OFF);
    cr_assert_not(r.warn_once);
    cr_assert_not(r.layer_asm);
    cr_assert(strstr(r.message, A4W4_POLICY_FLAG), "%s", r.message);
    /* off means off for every input, tuples included: no rejection on the Triton path */
    cr_assert_eq(decide(0, "gfx950", 5120, 5120, A4W4_INPUT_TUPLE3), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_FLAG_OFF);
}

Test(policy, not_gfx95x_keeps_triton)
{
    const char *archs[] = {"gfx942", "gfx90a", "gfx95", "gfx9500", "gfx1250"};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        cr_assert_eq(decide(1, archs[i], 5120, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
        expect(A4W4_DECIDE_TRITON, A4W4_REASON_NOT_GFX95X);
    }
    cr_assert_eq(decide(1, "gfx955", 5120, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_ASM, A4W4_REASON_ASM_QUANTIZE);
}

Test(policy, unsupported_weight_scale_warns_once_and_keeps_triton)
{
    /* rows % 32 != 0 (N = 48) */
    cr_assert_eq(decide(1, "gfx950", 48, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SCALE_UNSUPPORTED);
    cr_assert(r.warn_once);
    cr_assert(strstr(r.message, "[48, 160]"), "%s", r.message);
    /* cols % 8 != 0 (K = 320 -> 10 scale columns) */
    cr_assert_eq(decide(1, "gfx950", 5120, 320, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SCALE_UNSUPPORTED);
    /* not 2-D */
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 5120, 3, 5120, 160, A4W4_INPUT_TENSOR_2D, 0, &r),
                 A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SCALE_UNSUPPORTED);
    cr_assert(strstr(r.message, "3 dims"), "%s", r.message);
}

Test(policy, small_n_warns_once_and_keeps_triton)
{
    cr_assert_eq(decide(1, "gfx950", 128, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SMALL_N);
    cr_assert(r.warn_once);
    cr_assert(strstr(r.message, "N 128 <= 128"), "%s", r.message);
    cr_assert_eq(decide(1, "gfx950", 32, 5120, A4W4_INPUT_TUPLE5), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SMALL_N);
    /* N = 160 passes the fence */
    cr_assert_eq(decide(1, "gfx950", 160, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_ASM, A4W4_REASON_ASM_QUANTIZE);
}

Test(policy, scale_check_comes_before_the_n_fence)
{
    /* N = 96 is <= 128 and the scale [96, 10] is unsupported (10 % 8): step 2 reports first */
    cr_assert_eq(decide(1, "gfx950", 96, 320, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_SCALE_UNSUPPORTED);
    /* and the flag check comes before both */
    cr_assert_eq(decide(0, "gfx950", 96, 320, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_TRITON, A4W4_REASON_FLAG_OFF);
}

Test(policy, marked_layer_takes_plain_activations)
{
    cr_assert_eq(decide(1, "gfx950", 5120, 5120, A4W4_INPUT_TENSOR_2D), A4W4_OK);
    expect(A4W4_DECIDE_ASM, A4W4_REASON_ASM_QUANTIZE);
    cr_assert(r.layer_asm);
    cr_assert(strstr(r.message, "shuffle=True"), "%s", r.message);
    cr_assert_eq(decide(1, "gfx950", 5120, 5120, A4W4_INPUT_TENSOR_3D), A4W4_OK);
    expect(A4W4_DECIDE_ASM, A4W4_REASON_ASM_FLATTEN);
    cr_assert(strstr(r.message, "[B*S, K]"), "%s", r.message);
}

Test(policy, two_tuple_takes_the_scale_relayout)
{
    cr_assert_eq(decide(1, "gfx950", 5120, 5120, A4W4_INPUT_TUPLE2), A4W4_OK);
    expect(A4W4_DECIDE_ASM, A4W4_REASON_ASM_RELAYOUT);
    cr_assert(strstr(r.message, "contracts §3.3"), "%s", r.message);
}

Test(policy, three_and_five_tuples_are_rejected_naming_length_and_flag)
{
    cr_assert_eq(decide(1, "gfx950", 5120, 5120, A4W4_INPUT_TUPLE3), A4W4_OK);
    expect(A4W4_DECIDE_REJECT, A4W4_REASON_REJECT_TUPLE3);
    cr_assert(r.layer_asm);
    cr_assert(strstr(r.message, "3-tuple"), "%s", r.message);
    cr_assert(strstr(r.message, "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM"), "%s", r.message);
    cr_assert_eq(decide(1, "gfx950", 5120, 5120, A4W4_INPUT_TUPLE5), A4W4_OK);
    expect(A4W4_DECIDE_REJECT, A4W4_REASON_REJECT_TUPLE5);
    cr_assert(strstr(r.message, "5-tuple"), "%s", r.message);
    cr_assert(strstr(r.message, "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM"), "%s", r.message);
}

Test(policy, other_tuples_are_rejected_too)
{
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 5120, 2, 5120, 160, A4W4_INPUT_TUPLE_OTHER, 4, &r),
                 A4W4_OK);
    expect(A4W4_DECIDE_REJECT, A4W4_REASON_REJECT_TUPLE);
    cr_assert(strstr(r.message, "4-tuple"), "%s", r.message);
    cr_assert(strstr(r.message, A4W4_POLICY_FLAG), "%s", r.message);
}

Test(policy, bad_arguments)
{
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 0, 2, 0, 8, A4W4_INPUT_TENSOR_2D, 0, &r),
                 A4W4_EINVAL);
    cr_assert_eq(a4w4_policy_decide(1, NULL, 256, 2, 256, 8, A4W4_INPUT_TENSOR_2D, 0, &r),
                 A4W4_EINVAL);
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 256, 2, 256, 8, A4W4_INPUT_TENSOR_2D, 0, NULL),
                 A4W4_EINVAL);
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 256, 2, 256, 8, A4W4_INPUT_TUPLE_OTHER, 3, &r),
                 A4W4_EINVAL);
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", 256, 2, 256, 8, (a4w4_input_kind)42, 0, &r),
                 A4W4_EINVAL);
}

Test(policy, names_and_kind_parsing)
{
    cr_assert_str_eq(a4w4_decision_name(A4W4_DECIDE_ASM), "asm");
    cr_assert_str_eq(a4w4_decision_name(A4W4_DECIDE_TRITON), "triton");
    cr_assert_str_eq(a4w4_decision_name(A4W4_DECIDE_REJECT), "reject");
    cr_assert_str_eq(a4w4_policy_reason_name(A4W4_REASON_SMALL_N), "small_n");
    cr_assert_str_eq(a4w4_policy_reason_name(A4W4_REASON_REJECT_TUPLE5), "reject_tuple5");
    a4w4_input_kind k;
    int len;
    cr_assert_eq(a4w4_input_kind_parse("2d", &k, &len), A4W4_OK);
    cr_assert_eq(k, A4W4_INPUT_TENSOR_2D);
    cr_assert_eq(a4w4_input_kind_parse("tuple3", &k, &len), A4W4_OK);
    cr_assert_eq(k, A4W4_INPUT_TUPLE3);
    cr_assert_eq(a4w4_input_kind_parse("tuple7", &k, &len), A4W4_OK);
    cr_assert_eq(k, A4W4_INPUT_TUPLE_OTHER);
    cr_assert_eq(len, 7);
    cr_assert_eq(a4w4_input_kind_parse("tuple", &k, &len), A4W4_EINVAL);
    cr_assert_eq(a4w4_input_kind_parse("tuple0", &k, &len), A4W4_EINVAL);
    cr_assert_eq(a4w4_input_kind_parse("4d", &k, &len), A4W4_EINVAL);
}
