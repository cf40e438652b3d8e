/* gt_splits.c — ground truth: split-K over three uneven ranges with fixed boundaries at K
 * elements 160 and 1056: [0, 160), [160, 1056), [1056, K) (a range starting at or past K is
 * empty; an empty range's total is +0.0). Inside each range the 32-block values (exact dot
 * times scales, rounded once to fp32) are added in ascending K into an fp32 total from +0.0;
 * the three totals are then added in range order into an fp32 sum from +0.0 (RNE adds), and
 * that is rounded to bf16 by RNE. Contract tree(split=160/1056) (docs/contracts.md §4.2): the
 * boundaries do not depend on K, so one text covers every shape. */
#define GT_NAME "gt-splits"
#define GT_CONTRACT "tree(split=160/1056)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    static const size_t bounds[4] = {0, 160, 1056, (size_t)-1};
    float sum = 0.0f;
    for (int s = 0; s < 3; s++) {
        size_t end = bounds[s + 1] < o->K ? bounds[s + 1] : o->K;
        float part = 0.0f;
        for (size_t k = bounds[s]; k < end; k += 32)
            part += gt_leaf(o, k, 32);
        sum += part;
    }
    return gt_bf16_rne(sum);
}
