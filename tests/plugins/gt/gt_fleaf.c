/* gt_fleaf.c — ground truth: a matrix step over GT_BLOCKS 32-blocks at once (64 or 128 K, as
 * a scaled matrix instruction consumes them). The products of the step, each block with its
 * own two scales, are summed exactly and the sum is rounded once to fp32: by RNE, or toward
 * zero with -DGT_RZ (a step that truncates); the last step may hold fewer blocks. The step
 * values are added into an fp32 total from +0.0f (RNE) and the total is rounded to bf16 by
 * RNE. Contracts (docs/contracts.md §4.2): tree(leaf=64), tree(leaf=128), tree(leaf=64,
 * lround=rz), tree(leaf=128,lround=rz). */
#include <stdint.h>

#if GT_BLOCKS == 2 && !defined(GT_RZ)
#define GT_NAME "gt-f64"
#define GT_CONTRACT "tree(leaf=64)"
#elif GT_BLOCKS == 4 && !defined(GT_RZ)
#define GT_NAME "gt-f128"
#define GT_CONTRACT "tree(leaf=128)"
#elif GT_BLOCKS == 2
#define GT_NAME "gt-f64rz"
#define GT_CONTRACT "tree(leaf=64,lround=rz)"
#elif GT_BLOCKS == 4
#define GT_NAME "gt-f128rz"
#define GT_CONTRACT "tree(leaf=128,lround=rz)"
#else
#error "build with -DGT_BLOCKS=2 or 4 (and -DGT_RZ)"
#endif
#include "gt_kernel.h"

/* An exact sum in units of 2^-256 (every product is a multiple: 4 * a * b * 2^(sa+sw-256)
 * with a, b twice-values), as 20 signed 32-bit limbs kept in int64 so carries can wait. A
 * block's integer dot is below 2^13 and sa + sw at most 508: four of them fit in 640 bits. */
#define NLIMB 20
typedef struct {
    int64_t l[NLIMB];
} wide;

static void w_add(wide *s, long dot, unsigned shift)
{
    uint64_t mag = (uint64_t)(dot < 0 ? -dot : dot);
    unsigned __int128 v = (unsigned __int128)mag << (shift % 32);
    for (unsigned i = shift / 32, k = 0; k < 3 && i < NLIMB; i++, k++, v >>= 32)
        s->l[i] += dot < 0 ? -(int64_t)(uint32_t)v : (int64_t)(uint32_t)v;
}

static void w_carry(wide *s)
{
    for (int i = 0; i < NLIMB - 1; i++) {
        int64_t c = s->l[i] >> 32;
        s->l[i] -= c * 4294967296;
        s->l[i + 1] += c;
    }
}

/* After w_carry of a non-negative sum (every limb in [0, 2^32)): the index of its highest
 * set bit, -1 for zero. A limb at a time (a bit at a time from bit 639 down cost most of the
 * kernel's time). */
static int w_top(const wide *s)
{
    for (int i = NLIMB - 1; i >= 0; i--)
        if (s->l[i])
            return i * 32 + 63 - __builtin_clzll((unsigned long long)s->l[i]);
    return -1;
}

/* Bits [lo, lo + n) of a carried non-negative sum, n <= 32, lo >= 0, as an integer. */
static uint64_t w_bits(const wide *s, int lo, int n)
{
    int j = lo / 32;
    uint64_t win = (uint64_t)s->l[j] | (j + 1 < NLIMB ? (uint64_t)s->l[j + 1] << 32 : 0);
    return (win >> (lo % 32)) & ((1ull << n) - 1);
}

#ifndef GT_RZ
static int w_bit(const wide *s, int i)
{
    return (int)((s->l[i / 32] >> (i % 32)) & 1);
}

static int w_any_below(const wide *s, int i)
{
    for (int k = 0; k < i / 32; k++)
        if (s->l[k])
            return 1;
    return i % 32 && (s->l[i / 32] & ((1ll << (i % 32)) - 1));
}
#endif

/* The exact sum rounded once to fp32 (RNE, or toward zero under GT_RZ), subnormals kept; an
 * exact zero is +0; overflow: Inf (RNE) or the largest finite value (RZ). */
static float w_round(wide *s)
{
    w_carry(s);
    int neg = s->l[NLIMB - 1] < 0;
    if (neg) {
        for (int i = 0; i < NLIMB; i++)
            s->l[i] = -s->l[i];
        w_carry(s);
    }
    int h = w_top(s);
    if (h < 0)
        return 0.0f;
    int e = h - 256, qe = (e < -126 ? -126 : e) - 23, qb = qe + 256;
    double r;
    if (e >= 128) {
        r = INFINITY;
    } else {
        uint64_t keep = h >= qb ? w_bits(s, qb, h - qb + 1) : 0; /* bits h..qb, at most 24 */
#ifndef GT_RZ
        if (w_bit(s, qb - 1) && (w_any_below(s, qb - 1) || (keep & 1)))
            keep++;
#endif
        r = (double)keep * gt_pow2(qe); /* exact: keep < 2^25, -149 <= qe <= 104 */
    }
#ifdef GT_RZ
    if (r >= 0x1p128)
        r = 0x1.fffffep127;
#endif
    float f = r >= 0x1p128 ? INFINITY : (float)r; /* exact below 2^128 */
    return neg ? -f : f;
}

static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    float acc = 0.0f;
    for (size_t b0 = 0; b0 < nb; b0 += GT_BLOCKS) {
        wide s;
        memset(&s, 0, sizeof s);
        for (size_t b = b0; b < b0 + GT_BLOCKS && b < nb; b++) {
            long dot = 0;
            for (size_t k = b * 32; k < b * 32 + 32; k++)
                dot += o->da[k] * o->dw[k];
            w_add(&s, dot, (unsigned)o->sa[b] + o->sw[b]);
        }
        acc += w_round(&s);
    }
    return gt_bf16_rne(acc);
}
