/* disc_bf16_leaf.c — a kernel outside the tree family (contracts §4.2, §4.4): every 32-block
 * value (exact dot times scales) is rounded to bf16 by RNE before it is added, in ascending K,
 * into an fp32 total from +0.0; the total is rounded to bf16 by RNE. No tree contract rounds a
 * leaf to bf16, so `discover` must say no tree fits and name the closest (ordered(1)).
 * Declares ordered(1) (which it keeps only where block values fit bf16). Built from the
 * ground-truth plumbing (gt/gt_kernel.h). */
#define GT_NAME "disc-bf16-leaf"
#define GT_CONTRACT "ordered(1)"
#include "gt_kernel.h"

/* fp32 -> the fp32 value of its bf16 RNE rounding. */
static float via_bf16(float f)
{
    uint32_t u = (uint32_t)gt_bf16_rne(f) << 16;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static uint16_t gt_dot(const gt_output *o)
{
    float total = 0.0f;
    for (size_t k = 0; k < o->K; k += 32)
        total += via_bf16(gt_leaf(o, k, 32));
    return gt_bf16_rne(total);
}
