/* disc_split_by_k.c — a kernel whose split-K depends on K, as cuBLAS's does: P parts of
 * k_per_split = round_up(ceil(K / P), 64) elements, P = 3 from K 1024 on and 2 below (K = 544:
 * [0,320) [320,544); K = 1024: [0,384) [384,768) [768,1024); K = 2048: [0,704) [704,1408)
 * [1408,2048)), each an ascending fp32 RNE chain of block values from +0, the split values
 * added in order, RNE to bf16. No one tree(split=P,align=A) gives every K (P changes with K),
 * nor do tiles or fixed boundaries: `discover` must read the split count as a function of K
 * (contracts §4.4), `when K<=992:` two parts, three above. Declares ordered(3) (a different
 * split). Built from gt/gt_kernel.h. */
#define GT_NAME "disc-split-by-k"
#define GT_CONTRACT "ordered(3)"
#include "gt_kernel.h"

static uint16_t gt_dot(const gt_output *o)
{
    size_t P = o->K >= 1024 ? 3 : 2, per = ((o->K + P - 1) / P + 63) / 64 * 64;
    float total = 0.0f;
    for (size_t k0 = 0; k0 < o->K; k0 += per) {
        float part = 0.0f;
        for (size_t k = k0; k < k0 + per && k < o->K; k += 32)
            part += gt_leaf(o, k, 32);
        total += part;
    }
    return gt_bf16_rne(total);
}
