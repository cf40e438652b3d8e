/* gt_pairwise.c — ground truth: the 32-block values (exact dot times scales, rounded once to
 * fp32) summed as a pairwise tree: (v0+v1), (v2+v3), ... level by level, each add an fp32 RNE
 * add, an odd last value carried up unchanged; the root is added to +0.0 (the split combine
 * of one split) and rounded to bf16 by RNE. Contract tree(reduce=pairwise) (docs/contracts.md
 * §4.2). */
#define GT_NAME "gt-pairwise"
#define GT_CONTRACT "tree(reduce=pairwise)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t n = o->K / 32;
    float *v = o->scratch;
    for (size_t b = 0; b < n; b++)
        v[b] = gt_leaf(o, b * 32, 32);
    while (n > 1) {
        for (size_t i = 0; i < n / 2; i++)
            v[i] = v[2 * i] + v[2 * i + 1];
        if (n % 2)
            v[n / 2] = v[n - 1];
        n = (n + 1) / 2;
    }
    float total = 0.0f;
    total += v[0];
    return gt_bf16_rne(total);
}
