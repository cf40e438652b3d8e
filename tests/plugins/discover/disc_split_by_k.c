/* disc_split_by_k.c — a kernel whose split-K depends on K, as cuBLAS's does: three splits of
 * k_per_split = round_up(ceil(K / 3), 64) elements (K = 1024: [0,384) [384,768) [768,1024);
 * K = 2048: [0,704) [704,1408) [1408,2048)), each an ascending fp32 RNE chain of block values
 * from +0, the split values added in order, RNE to bf16. Its contract differs per K
 * (tree(split=0/384/768) at K = 1024, tree(split=0/704/1408) at 2048; contracts §4.2), so
 * `discover` must write one `when` rule per shape. Declares ordered(3) (a different split).
 * Built from gt/gt_kernel.h. */
#define GT_NAME "disc-split-by-k"
#define GT_CONTRACT "ordered(3)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t per = ((o->K + 2) / 3 + 63) / 64 * 64;
    float total = 0.0f;
    for (size_t k0 = 0; k0 < o->K; k0 += per) {
        float part = 0.0f;
        for (size_t k = k0; k < k0 + per && k < o->K; k += 32)
            part += gt_leaf(o, k, 32);
        total += part;
    }
    return gt_bf16_rne(total);
}
