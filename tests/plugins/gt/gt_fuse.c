/* gt_fuse.c — ground truth: blocks fused GT_FUSE at a time with one rounding. The running
 * fp32 total and the next GT_FUSE 32-block values (each the exact dot times its scales,
 * rounded once to fp32; fewer in the last group) are summed exactly and the sum is rounded
 * once to fp32 by RNE, the way a fused multi-term adder with a wide accumulator does; the
 * total starts at +0.0 and is rounded to bf16 by RNE at the end. Built with -DGT_FUSE=2 and
 * -DGT_FUSE=4: contracts tree(fuse=2) and tree(fuse=4) (docs/contracts.md §4.2). */
#include <stdint.h>

#ifndef GT_FUSE
#error "build with -DGT_FUSE=2 or -DGT_FUSE=4"
#endif
#if GT_FUSE == 2
#define GT_NAME "gt-fuse2"
#define GT_CONTRACT "tree(fuse=2)"
#else
#define GT_NAME "gt-fuse4"
#define GT_CONTRACT "tree(fuse=4)"
#endif
#include "gt_kernel.h"

/* An exact sum of fp32 values: a fixed-point integer whose bit 0 is worth 2^-149 (the fp32
 * subnormal step), ten 32-bit limbs kept in int64 so carries can wait. A finite fp32 is an
 * integer below 2^24 shifted left by at most 253 bits: a handful of them fit in 320 bits. */
#define NLIMB 10
typedef struct {
    int64_t l[NLIMB];
} exact_sum;

static void es_add(exact_sum *s, float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t e = (u >> 23) & 0xFFu;
    uint64_t m = u & 0x7FFFFFu;
    unsigned off = 0;
    if (e) {
        m |= 0x800000u;
        off = e - 1; /* the LSB of a normal number is worth 2^(e - 150) = 2^(e - 1) units */
    }
    uint64_t v = m << (off % 32);
    int64_t lo = (int64_t)(v & 0xFFFFFFFFu), hi = (int64_t)(v >> 32);
    s->l[off / 32] += (u >> 31) ? -lo : lo;
    s->l[off / 32 + 1] += (u >> 31) ? -hi : hi;
}

/* Carry every limb into [0, 2^32), the sign into the top limb. */
static void es_carry(exact_sum *s)
{
    for (int i = 0; i < NLIMB - 1; i++) {
        int64_t c = s->l[i] >> 32; /* floor division by 2^32 (arithmetic shift) */
        s->l[i] -= c * 4294967296;
        s->l[i + 1] += c;
    }
}

static int es_bit(const exact_sum *s, int i)
{
    return (int)((s->l[i / 32] >> (i % 32)) & 1);
}

/* 1 when a bit below position i is set. */
static int es_any_below(const exact_sum *s, int i)
{
    for (int k = 0; k < i / 32; k++)
        if (s->l[k])
            return 1;
    return i % 32 && (s->l[i / 32] & ((1ll << (i % 32)) - 1));
}

/* The sum rounded once to fp32, RNE (an exactly zero sum is +0; overflow gives Inf). */
static float es_round(exact_sum *s)
{
    es_carry(s);
    int neg = s->l[NLIMB - 1] < 0;
    if (neg) {
        for (int i = 0; i < NLIMB; i++)
            s->l[i] = -s->l[i];
        es_carry(s);
    }
    int h = NLIMB * 32 - 1;
    while (h >= 0 && !es_bit(s, h))
        h--;
    if (h < 0)
        return 0.0f;
    int shift = h < 24 ? 0 : h - 23;
    uint64_t keep = 0;
    for (int i = h; i >= shift; i--)
        keep = keep << 1 | (uint64_t)es_bit(s, i);
    if (shift && es_bit(s, shift - 1) && (es_any_below(s, shift - 1) || (keep & 1)))
        keep++;
    float r = (float)ldexp((double)keep, shift - 149); /* exact, or Inf past FLT_MAX */
    return neg ? -r : r;
}

/* One fused node: the exact sum of in[0..n) rounded once to fp32 by RNE. A sum whose terms
 * span at most 50 bits is exact in double and is rounded once by the cast; wider spreads go
 * through the exact fixed-point sum. Inf or NaN terms: IEEE's answer. */
static float fused_node(const float *in, size_t n)
{
    int hi = -1000, lo = 1000, finite = 1;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(in[i]))
            finite = 0;
        else if (in[i] != 0.0f) {
            int e = ilogbf(in[i]);
            int lsb = e - 23 < -149 ? -149 : e - 23;
            hi = e > hi ? e : hi;
            lo = lsb < lo ? lsb : lo;
        }
    }
    if (!finite || hi - lo <= 49) {
        double d = 0.0;
        for (size_t i = 0; i < n; i++)
            d += in[i];
        return (float)d;
    }
    exact_sum s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < n; i++)
        es_add(&s, in[i]);
    return es_round(&s);
}

static uint16_t gt_dot(const gt_output *o)
{
    size_t nb = o->K / 32;
    float acc = 0.0f;
    for (size_t b0 = 0; b0 < nb; b0 += GT_FUSE) {
        float in[GT_FUSE + 1];
        size_t n = 0;
        in[n++] = acc;
        for (size_t b = b0; b < b0 + GT_FUSE && b < nb; b++)
            in[n++] = gt_leaf(o, b * 32, 32);
        acc = fused_node(in, n);
    }
    return gt_bf16_rne(acc);
}
