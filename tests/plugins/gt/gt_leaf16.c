/* gt_leaf16.c — ground truth: K in 16-element half-block steps. Each half block's exact dot
 * times its block's two scales is rounded once to fp32, and the half blocks are added in
 * ascending K order into an fp32 total from +0.0 (RNE adds), then RNE to bf16. Contract
 * tree(leaf=16) (docs/contracts.md §4.2). */
#define GT_NAME "gt-leaf16"
#define GT_CONTRACT "tree(leaf=16)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    float total = 0.0f;
    for (size_t k = 0; k < o->K; k += 16)
        total += gt_leaf(o, k, 16);
    return gt_bf16_rne(total);
}
