/* gt_mbucket.c — ground truth: a kernel whose split-K follows M's padded bucket, as AITER's
 * dispatcher picks a split-K kernel per padded M (docs/contracts.md §5). When getPaddedM(M, N,
 * K, 0) <= 32 (M <= 32: M up to 256 rounds up to a multiple of 16) K is cut into two splits of
 * k_per_split = round_up(ceil(K/2), 256) elements (§4.1's rule; the second may be empty), each
 * summed as ordered(1) sums (32-block values rounded once to fp32, added in ascending K into
 * an fp32 total from +0.0), the two totals then added into an fp32 sum from +0.0; otherwise
 * one split, ordered(1). The fp32 sum is rounded to bf16 by RNE. It declares the rules
 * `when Mpad<=32: ordered(2)` / `when Mpad>32: ordered(1)` (§4.2, the file form). */
#define GT_NAME "gt-mbucket"
#define GT_CONTRACT "when Mpad<=32: ordered(2)\nwhen Mpad>32: ordered(1)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t kps = o->M <= 32 ? ((o->K + 1) / 2 + 255) / 256 * 256 : o->K;
    size_t cut = kps < o->K ? kps : o->K;
    float part0 = 0.0f, part1 = 0.0f, sum = 0.0f;
    for (size_t k = 0; k < cut; k += 32)
        part0 += gt_leaf(o, k, 32);
    for (size_t k = cut; k < o->K; k += 32)
        part1 += gt_leaf(o, k, 32);
    sum += part0;
    if (cut < o->K)
        sum += part1;
    return gt_bf16_rne(sum);
}
