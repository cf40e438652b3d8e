/* disc_split_falls.c — a kernel whose split count falls as K grows: P parts of
 * round_up(ceil(K/P), 64) elements, P = 3 below K 1024 and 2 from it (K = 544: [0,192)
 * [192,384) [384,544); K = 1024: [0,512) [512,1024); K = 2048: [0,1024) [1024,2048)), each an
 * ascending fp32 RNE chain of block values from +0, the split values added in order, RNE to
 * bf16. The split count as a function of K (contracts §4.4) assumes a count that never falls
 * as K grows, so `discover` must refuse that rule, say why, and write one `when` rule per
 * probed shape. Declares ordered(1) (a different split). Built from gt/gt_kernel.h. */
#define GT_NAME "disc-split-falls"
#define GT_CONTRACT "ordered(1)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t P = o->K >= 1024 ? 2 : 3, per = ((o->K + P - 1) / P + 63) / 64 * 64;
    float total = 0.0f;
    for (size_t k0 = 0; k0 < o->K; k0 += per) {
        float part = 0.0f;
        for (size_t k = k0; k < k0 + per && k < o->K; k += 32)
            part += gt_leaf(o, k, 32);
        total += part;
    }
    return gt_bf16_rne(total);
}
