/* gt_rz.c — ground truth: round-toward-zero accumulation. The 32-block values are rounded to
 * fp32 by RNE (the leaf rule), then added in ascending K into an fp32 total from +0.0 with
 * every add rounded toward zero (the FPU's FE_TOWARDZERO mode: an overflowing add gives the
 * largest finite fp32); the total is rounded to bf16 by RNE. Contract tree(round=rz)
 * (docs/contracts.md §4.2). Needs -frounding-math. */
#include <fenv.h>

#define GT_NAME "gt-rz"
#define GT_CONTRACT "tree(round=rz)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    for (size_t b = 0; b < nb; b++) /* leaves first, in the default (RNE) mode */
        o->scratch[b] = gt_leaf(o, b * 32, 32);
    volatile float total = 0.0f;
    fesetround(FE_TOWARDZERO);
    for (size_t b = 0; b < nb; b++)
        total += o->scratch[b];
    fesetround(FE_TONEAREST);
    return gt_bf16_rne(total);
}
