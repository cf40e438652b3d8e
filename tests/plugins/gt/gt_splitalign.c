/* gt_splitalign.c — ground truth: split-K in S = 3 parts aligned to A = 64 elements, the
 * pattern cuBLAS's split-K keeps (contracts §4.4): each part round_up(ceil(K/3), 64) elements
 * from 0, the last one ending at K (a part that would start at or past K is not there). Inside
 * each part the 32-block values (exact dot times scales, rounded once to fp32) are added in
 * ascending K into an fp32 total from +0.0; the part totals are then added in order into an
 * fp32 sum from +0.0 (RNE adds), and that is rounded to bf16 by RNE. It declares
 * tree(split=3,align=64) (docs/contracts.md §4.2 rule 1): at K 1152 the parts start at 0, 384,
 * 768; at K 608 at 0, 256, 512; at K 960 at 0, 320, 640 — no split=S of §4.1 (parts rounded
 * to 256) and no fixed boundaries give all three. */
#define GT_NAME "gt-split3a64"
#define GT_CONTRACT "tree(split=3,align=64)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t per = ((o->K + 2) / 3 + 63) / 64 * 64;
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
