/* gt_leaf1.c — ground truth: one element at a time, as a BLAS sgemm's fused multiply-add chain
 * over the dequantized operands (each product exact in fp32, so one rounding per add): every
 * element's product times its block's two scales rounded once to fp32, added in ascending K
 * into an fp32 total from +0.0 (RNE adds), then RNE to bf16. Contract tree(leaf=1)
 * (docs/contracts.md §4.2); discover reads one element per node (contracts §4.4 step 6), where
 * the tie-and-tail probe of step 5 tells no precision (tests/cli/discover_rules.sh). */
#define GT_NAME "gt-leaf1"
#define GT_CONTRACT "tree(leaf=1)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    float total = 0.0f;
    for (size_t k = 0; k < o->K; k++)
        total += gt_leaf(o, k, 1);
    return gt_bf16_rne(total);
}
