/* gt_splitk.c — ground truth: split-K whose part count S changes with K, as cuBLAS's split-K
 * on an H100 does (contracts §4.4, "The split count as a function of K"): S = 1 for
 * K <= 1184, 2 for K <= 1760, 3 for K <= 2592, 4 above (change points at no power of two),
 * each part round_up(ceil(K/S), 64) elements from 0, the last ending at K (a part that would
 * start at or past K is not there). Inside each part the 32-block values (exact dot times
 * scales, rounded once to fp32) are added in ascending K into an fp32 total from +0.0; the
 * part totals are then added in order into an fp32 sum from +0.0 (RNE adds), and that is
 * rounded to bf16 by RNE. It declares the rules of K below (docs/contracts.md §4.2, the file
 * form): at K 1568 the parts start at 0 and 832, at K 2048 at 0, 704, 1408, at K 3072 at 0,
 * 768, 1536, 2304; no one split=S,align=A gives every K. */
#define GT_NAME "gt-splitk"
#define GT_CONTRACT                                                                            \
    "when K<=1184: ordered(1)\nwhen K<=1760: tree(split=2,align=64)\n"                         \
    "when K<=2592: tree(split=3,align=64)\ntree(split=4,align=64)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t S = o->K <= 1184 ? 1 : o->K <= 1760 ? 2 : o->K <= 2592 ? 3 : 4;
    size_t per = ((o->K + S - 1) / S + 63) / 64 * 64;
    float sum = 0.0f;
    for (size_t k0 = 0; k0 < o->K; k0 += per) {
        size_t end = k0 + per < o->K ? k0 + per : o->K;
        float part = 0.0f;
        for (size_t k = k0; k < end; k += 32)
            part += gt_leaf(o, k, 32);
        sum += part;
    }
    return gt_bf16_rne(sum);
}
