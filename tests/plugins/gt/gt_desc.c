/* gt_desc.c — ground truth: the 32-blocks of K added in descending K order, each block's exact
 * dot times its scales rounded once to fp32, into an fp32 total from +0.0 with RNE adds, then
 * RNE to bf16. Contract tree(order=desc) (docs/contracts.md §4.2). */
#define GT_NAME "gt-desc"
#define GT_CONTRACT "tree(order=desc)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    float total = 0.0f;
    for (size_t b = o->K / 32; b-- > 0;)
        total += gt_leaf(o, b * 32, 32);
    return gt_bf16_rne(total);
}
