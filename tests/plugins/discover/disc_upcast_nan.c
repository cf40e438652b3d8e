/* disc_upcast_nan.c — a kernel with a known order and a defect no order explains (contracts
 * §4.4 step 7): the 32-blocks are added in descending K (tree(order=desc), as gt_desc.c), but
 * like a GEMM on operands dequantized to bf16 first, an element whose value E2M1 * 2^(s-127)
 * reaches 2^128 (bf16's overflow: s = 254 with |value| >= 2, s = 253 with |value| >= 4) turns
 * into inf, and inf times the other operand's zeros and infinities of both signs make NaN: the
 * output is NaN (0x7FFF) whenever an element of its row of A or of W overflows. The exact dot
 * stays finite there (the wide regimes pair large scales on one side with small ones on the
 * other), so every order gives a finite value: `discover` must accept tree(order=desc) and
 * count those outputs as defects. Declares ordered(1). Built from gt/gt_kernel.h. */
#define GT_NAME "disc-upcast-nan"
#define GT_CONTRACT "ordered(1)"
#include "gt_kernel.h"

/* 1 when an element of the row overflows bf16 once scaled: |twice value| >= 2^(256 - s). */
static int upcast_overflows(const uint8_t *row, const uint8_t *scale, size_t K)
{
    for (size_t k = 0; k < K; k++) {
        unsigned s = scale[k / 32];
        int t = gt_elem(row, k);
        if (s >= 253 && (t < 0 ? -t : t) >= (1 << (256 - s)))
            return 1;
    }
    return 0;
}

static uint16_t gt_dot(const gt_output *o)
{
    if (upcast_overflows(o->a, o->sa, o->K) || upcast_overflows(o->w, o->sw, o->K))
        return 0x7FFF;
    float total = 0.0f;
    for (size_t b = o->K / 32; b-- > 0;)
        total += gt_leaf(o, b * 32, 32);
    return gt_bf16_rne(total);
}
