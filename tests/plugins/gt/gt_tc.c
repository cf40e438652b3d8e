/* gt_tc.c — ground truth: a tensor-core-like fused node with 3 extra bits. Blocks are fused 4
 * at a time: the running fp32 total and the next four 32-block values (exact dot times scales,
 * rounded once to fp32 by RNE; fewer in the last group) are aligned to the exponent e_max of
 * the largest of them, each truncated toward zero to a multiple of q = 2^(e_max - 26) (27
 * significant bits: fp32's 24 and 3 more), summed exactly in an integer, and the sum is
 * rounded once to fp32 toward zero (overflow: the largest finite fp32). The total starts at
 * +0.0 and is rounded to bf16 by RNE at the end. Contract tree(fuse=4,prec=27,round=rz)
 * (docs/contracts.md §4.2): the adder Fasi, Higham, Mikaitis and Pranesh measured on NVIDIA
 * tensor cores (alignment to the largest term, truncation, no rounding bits) with three more
 * bits than fp32. Needs -frounding-math. */
#include <fenv.h>
#include <stdint.h>

#define GT_NAME "gt-tc27"
#define GT_CONTRACT "tree(fuse=4,prec=27,round=rz)"
#include "gt_kernel.h"

#define PREC 27

static float tc_node(const float *in, size_t n)
{
    float amax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(in[i])) { /* Inf or NaN terms: IEEE's answer */
            float r = 0.0f;
            for (size_t k = 0; k < n; k++)
                r += in[k];
            return r;
        }
        amax = fabsf(in[i]) > amax ? fabsf(in[i]) : amax;
    }
    if (amax == 0.0f)
        return 0.0f;
    int qe = ilogbf(amax) - (PREC - 1);
    int64_t units = 0; /* |each term| < 2^PREC units of q: five fit easily */
    for (size_t i = 0; i < n; i++)
        units += (int64_t)trunc(ldexp((double)in[i], -qe));
    double exact = ldexp((double)units, qe); /* exact: below 2^30 units */
    fesetround(FE_TOWARDZERO);
    volatile float r = (float)exact;
    fesetround(FE_TONEAREST);
    return r;
}

static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    float acc = 0.0f;
    for (size_t b0 = 0; b0 < nb; b0 += 4) {
        float in[5];
        size_t n = 0;
        in[n++] = acc;
        for (size_t b = b0; b < b0 + 4 && b < nb; b++)
            in[n++] = gt_leaf(o, b * 32, 32);
        acc = tc_node(in, n);
    }
    return gt_bf16_rne(acc);
}
