/* a4w4_gemm_fast_round.c — correct rounding (RNE) of the fast exact oracle's integer sums to
 * bf16 and fp32, the same results as a4w4_dot_exact's (contracts §4.1 "exact"): overflow to
 * ±Inf, subnormal results in the fp32 exponent range, the sign of the exact sum kept on a
 * result that rounds to zero, +0 for an exact zero sum. */
#include <math.h>
#include <string.h>

#include "a4w4_gemm_fast_kernels.h"

/* 2^e as a double, -1022 <= e <= 1023. */
static double pow2d(int e)
{
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* RNE of mag * 2^e (mag != 0) to p significant bits with the fp32 exponent range (emin -126,
 * overflow at 2^128); the rounded magnitude as float, Inf on overflow. */
static float round_mag(uint64_t mag, int e, int p)
{
    int top = 63 - __builtin_clzll(mag);
    int E = top + e; /* 2^E <= value < 2^(E+1) */
    int qe = (E < -126 ? -126 : E) - (p - 1);
    int sh = qe - e; /* bit position of the quantum in mag */
    uint64_t m;
    if (sh <= 0) {
        m = mag << -sh; /* exact: m < 2^p */
    } else if (sh > 64) {
        return 0.0f; /* value < 2^(e+64) <= half a quantum */
    } else {
        uint64_t half = 1ull << (sh - 1);
        uint64_t rem = sh == 64 ? mag : mag & ((half << 1) - 1);
        m = sh == 64 ? 0 : mag >> sh;
        if (rem > half || (rem == half && (m & 1)))
            m++;
    }
    double v = (double)m * pow2d(qe); /* exact: m <= 2^p, qe in double range */
    if (v >= 0x1p128)
        return INFINITY;
    return (float)v; /* exact: v is representable in the target format */
}

static uint16_t bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static void round_slow(uint64_t mag, int neg, int e, uint16_t *bf16, float *f32)
{
    float r24 = round_mag(mag, e, 24), r8 = round_mag(mag, e, 8);
    *f32 = neg ? -r24 : r24;
    *bf16 = bf16_bits(neg ? -r8 : r8);
}

void a4w4_fast_round_i64(int64_t T, int e, uint16_t *bf16, float *f32)
{
    if (T == 0) {
        *f32 = 0.0f;
        *bf16 = 0;
        return;
    }
    uint64_t mag = T < 0 ? 0 - (uint64_t)T : (uint64_t)T;
    if (mag >= (1ull << 53) || e < -1000 || e > 900) {
        round_slow(mag, T < 0, e, bf16, f32);
        return;
    }
    /* v is exact; (float)v is the one RNE to fp32. bf16 from f is the RNE of v unless f is a
     * bf16 midpoint that v is not (rounding to fp32 never crosses a bf16 midpoint, which is
     * an fp32 value): then round v itself. */
    double v = (double)T * pow2d(e);
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    *f32 = f;
    if ((double)f != v && (u & 0xFFFFu) == 0x8000u) {
        float r8 = round_mag(mag, e, 8);
        *bf16 = bf16_bits(T < 0 ? -r8 : r8);
    } else {
        *bf16 = a4w4_f32_to_bf16(f);
    }
}

/* ---- multi-limb sums ------------------------------------------------------------------
 * 32-bit digits in int64 with lazy carries, the representation of a4w4_dot_exact. Only the
 * digits from the lowest nonzero limb up to three above the highest are touched: each limb is
 * below 2^62, so the carries out of the top limb die within two digits and the third holds
 * the sign. */
#define DIGITS 21

/* Carries through d[lo .. top-1] into d[top]: digits lo..top-1 end in [0, 2^32). */
static void normalise(int64_t *d, int lo, int top)
{
    for (int i = lo; i < top; i++) {
        int64_t low = d[i] & 0xFFFFFFFFLL;
        int64_t carry = (d[i] - low) / 4294967296LL; /* exact: a multiple of 2^32 */
        d[i] = low;
        d[i + 1] += carry;
    }
}

/* The 64 bits of the non-negative normalised digits at positions [pos, pos + 64), with every
 * set bit below pos (down to digit lo) folded into bit 0 (a sticky bit, far below any
 * rounding position). */
static uint64_t window64(const int64_t *d, int lo, int pos)
{
    int w = pos / 32, sh = pos % 32;
    uint64_t low = (uint64_t)d[w] | ((uint64_t)d[w + 1] << 32);
    uint64_t hi = w + 2 < DIGITS ? (uint64_t)d[w + 2] : 0;
    uint64_t mag = (low >> sh) | (sh ? hi << (64 - sh) : 0);
    int sticky = (d[w] & ((1LL << sh) - 1)) != 0;
    for (int i = lo; i < w && !sticky; i++)
        sticky = d[i] != 0;
    return mag | (uint64_t)sticky;
}

void a4w4_fast_round_limbs(const int64_t *limbs, size_t stride, uint16_t *bf16, float *f32)
{
    int64_t d[DIGITS + 1];
    int lo = -1, hi = -1;
    for (int q = 0; q < A4W4_FAST_LIMBS; q++) {
        d[q] = limbs[q * stride];
        if (d[q]) {
            lo = lo < 0 ? q : lo;
            hi = q;
        }
    }
    if (lo < 0) {
        *f32 = 0.0f;
        *bf16 = 0;
        return;
    }
    int top = hi + 3;
    for (int i = A4W4_FAST_LIMBS; i <= top; i++)
        d[i] = 0;
    normalise(d, lo, top);
    int neg = d[top] < 0;
    if (neg) {
        for (int i = lo; i <= top; i++)
            d[i] = -d[i];
        normalise(d, lo, top);
    }
    int td = top;
    while (td >= lo && d[td] == 0)
        td--;
    if (td < lo) {
        *f32 = 0.0f;
        *bf16 = 0;
        return;
    }
    int tb = td * 32 + (31 - __builtin_clz((unsigned)d[td]));
    int pos = tb < 63 ? 0 : tb - 63; /* digits below lo are zero limbs */
    round_slow(window64(d, lo, pos), neg, pos - 256, bf16, f32);
}

void a4w4_fast_round_window_tile(unsigned mr, const int64_t *acc, const int32_t *xe,
                                 const int32_t *ye, uint16_t *bf16, float *f32)
{
    for (unsigned r = 0; r < mr; r++)
        for (unsigned l = 0; l < A4W4_FAST_NR; l++) {
            unsigned i = r * A4W4_FAST_NR + l;
            a4w4_fast_round_i64(acc[i], xe[r] + ye[l], &bf16[i], &f32[i]);
        }
}

void a4w4_fast_round_general_tile(unsigned mr, const int64_t *limbs, uint16_t *bf16, float *f32)
{
    for (unsigned r = 0; r < mr; r++)
        for (unsigned l = 0; l < A4W4_FAST_NR; l++)
            a4w4_fast_round_limbs(limbs + (r * A4W4_FAST_LIMBS) * A4W4_FAST_NR + l, A4W4_FAST_NR,
                                  &bf16[r * A4W4_FAST_NR + l], &f32[r * A4W4_FAST_NR + l]);
}
