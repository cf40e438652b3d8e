/* a4w4_judge_math.h — the arithmetic of the GPU judge, per output (ref/gpu only).
 *
 * __host__ __device__, so tests/gpu/a4w4_judge_emu.hip runs every line of it on the CPU against
 * the plain C oracles. Written from contracts §1 and §4 alone, independently of gpu/.
 *
 * Block dot d: the exact integer dot of one 32-element block in units of (2a)(2b): twice an
 * E2M1 value is an integer in {0, ±1, ±2, ±3, ±4, ±6, ±8, ±12}, |d| <= 4608 (contracts §4).
 * Block exponent e = sa + sb in 0..508 (neither scale 0xFF): the block's value is
 * d * 2^(e - 256).
 *
 * ordered(S) (contracts §4.1): value = RNE_fp32(d * 2^(e - 256)), taken as the fp32 rounding of
 * the double d * 2^(e - 256) (exact in double: 13 bits, exponent >= -256), added in fp32.
 *
 * exact (contracts §4.1): a4w4j_win, a streaming fixed-point window per output. top is the
 * largest e seen on a nonzero block; the window's quantum is 2^(top - W - 256) with W = 96, so
 * every block with e >= top - W adds d << (e - top + W) exactly into the int128 acc
 * (|acc| < 2^16 blocks * 4608 * 2^96 < 2^126 for K <= 2^21). A block below the window adds
 * |d| * 2^(e - 256) to tail, an upper bound (rounded up) of what the window has not got; when
 * top grows by k the acc is shifted right by k and the dropped remainder (when nonzero) adds
 * 2^(quantum + k) to tail. So exact = acc * 2^(top - W - 256) + delta, |delta| <= tail; tail
 * is 0 whenever every block lies within W bits of the largest one (every regime but the wide
 * ones), and then the window is the exact sum, rounded exactly from the integer. With a tail
 * (a4w4j_win_round) the exact value lies within acc +- ceil(tail / quantum) quanta; RNE is
 * monotonic, so when both ends round to the same fp32 and the same bf16, that is the
 * rounding of the exact sum (a zero sum gives +0). Otherwise the output is handed to the
 * plain C oracle (a4w4_dot_exact): "uncertain". NaN: any block with scale 0xFF. */
#ifndef A4W4_JUDGE_MATH_H
#define A4W4_JUDGE_MATH_H

#include <stdint.h>
#include <string.h>

#include "a4w4_judge_port.h"

#ifndef A4W4J_WIN
#define A4W4J_WIN 96 /* overridable for the tail path's emulation test */
#endif
#define A4W4J_MAX_BLOCKS (1L << 16) /* K <= 2^21: the window's int128 bound above */

/* ---- bit views -------------------------------------------------------------------------- */
A4W4J_HD float a4w4j_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

A4W4J_HD uint32_t a4w4j_u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

A4W4J_HD double a4w4j_d(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

A4W4J_HD uint64_t a4w4j_du(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* 2^e as a double, -1022 <= e <= 1023 */
A4W4J_HD double a4w4j_pow2d(int e) { return a4w4j_d((uint64_t)(e + 1023) << 52); }

/* The next double above x (x itself for NaN and +Inf). */
A4W4J_HD double a4w4j_next_up(double x)
{
    const uint64_t u = a4w4j_du(x);
    if (x != x || u == 0x7FF0000000000000ull)
        return x;
    if ((u & 0x7FFFFFFFFFFFFFFFull) == 0)
        return a4w4j_d(1); /* +-0 -> the smallest subnormal */
    return a4w4j_d(u >> 63 ? u - 1 : u + 1);
}

/* a + b rounded up, and a - b rounded down: the RNE sum corrected by its exact error
 * (TwoSum, Knuth: exact under round-to-nearest without overflow). */
A4W4J_HD double a4w4j_dadd_ru(double a, double b)
{
    const double s = J_DADD(a, b), bb = J_DADD(s, -a);
    const double err = J_DADD(J_DADD(a, -J_DADD(s, -bb)), J_DADD(b, -bb));
    return err > 0.0 ? a4w4j_next_up(s) : s;
}

A4W4J_HD double a4w4j_dsub_rd(double a, double b) { return -a4w4j_dadd_ru(-a, b); }

/* ---- E2M1 ------------------------------------------------------------------------------ */
/* Twice the E2M1 value of code c as int8 bits, from the format (contracts §1): exponent field
 * x = bits 1-2 (bias 1), mantissa m = bit 0, sign bit 3; x = 0 is the subnormal m * 0.5, so
 * twice the value is m, else (2 + m) << (x - 1): 0 1 2 3 4 6 8 12. */
A4W4J_HD uint32_t a4w4j_twice(uint32_t c)
{
    /* the 8 magnitudes of that rule, one byte each: 0 1 2 3 4 6 8 12 */
    const int v = (int)((0x0C08060403020100ull >> ((c & 7u) * 8u)) & 0xFFu);
    return (uint32_t)(uint8_t)(int8_t)((c & 8u) ? -v : v);
}

/* |twice| of code c */
A4W4J_HD uint32_t a4w4j_twice_abs(uint32_t c) { return a4w4j_twice(c & 7u); }

/* 16 fp4x2 bytes (element 2i in the low nibble) -> 32 int8 in element order, 8 words; abs
 * drops the signs. */
A4W4J_HD void a4w4j_decode16(const uint8_t *src, uint32_t *dst, int abs_codes)
{
    for (int w = 0; w < 8; w++) {
        uint32_t v = 0;
        for (int j = 0; j < 2; j++) {
            const uint32_t byte = src[w * 2 + j];
            const uint32_t lo = abs_codes ? a4w4j_twice_abs(byte & 15u) : a4w4j_twice(byte & 15u);
            const uint32_t hi = abs_codes ? a4w4j_twice_abs(byte >> 4) : a4w4j_twice(byte >> 4);
            v |= (lo | (hi << 8)) << (16 * j);
        }
        dst[w] = v;
    }
}

/* The same decode four codes at a time by byte permutes, for the device: bytes of
 * a4w4j_perm(x, y, s) are bytes (s >> 4n) & 7 of the pair (x bytes 0-3, y bytes 4-7), the
 * NVIDIA prmt / __byte_perm rule (PTX ISA, prmt default mode with the selectors' bit 3 clear).
 * src: 4 words of fp4x2 bytes (16 bytes); dst as a4w4j_decode16's, dabs its magnitudes. */
A4W4J_HD uint32_t a4w4j_perm(uint32_t x, uint32_t y, uint32_t s)
{
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, y, s);
#else
    const uint64_t xy = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int n = 0; n < 4; n++)
        r |= (uint32_t)((xy >> (8 * ((s >> (4 * n)) & 7u))) & 0xFFu) << (8 * n);
    return r;
#endif
}

A4W4J_HD void a4w4j_decode16_perm(const uint32_t *src, uint32_t *dst, uint32_t *dabs)
{
    for (int w = 0; w < 8; w++) {
        const uint32_t h = (src[w / 2] >> (16 * (w % 2))) & 0xFFFFu; /* 4 codes, element order */
        const uint32_t mag = a4w4j_perm(0x03020100u, 0x0C080604u, h & 0x7777u); /* 0 1 2 3 4 6 8 12 */
        const uint32_t neg = a4w4j_perm(0xFDFEFF00u, 0xF4F8FAFCu, h & 0x7777u); /* their negatives */
        const uint32_t sgn = a4w4j_perm(0x0000FF00u, 0u, (h >> 3) & 0x1111u); /* 0xFF: sign set */
        dst[w] = (mag & ~sgn) | (neg & sgn);
        dabs[w] = mag;
    }
}

/* ---- ordered(S) block value ---------------------------------------------------------------- */
A4W4J_HD float a4w4j_block_value(int d, unsigned sa, unsigned sb)
{
    if (sa == 0xFFu || sb == 0xFFu)
        return a4w4j_f(0x7FC00000u);
    return J_D2F(J_DMUL((double)d, a4w4j_pow2d((int)(sa + sb) - 256)));
}

/* ---- bf16 ------------------------------------------------------------------------------- */
/* RNE of fp32 to bf16 bits; NaN -> 0x7FC0 */
A4W4J_HD uint32_t a4w4j_bf16_of_f32(float f)
{
    uint32_t u = a4w4j_u(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

/* ---- atomic(S) (contracts §4.1 "atomic(S)") -------------------------------------------------
 * An output is the bf16 sum, from +0, of its n' <= 6 split values (each the split's fp32 total,
 * blocks ascending from +0.0, rounded to bf16) in any order, each add rounded once to bf16. */
#define A4W4J_ATOMIC_MAX 6

/* One add: bf16 acc + bf16 q rounded to bf16, computed as the fp32 sum rounded to bf16 (24 >=
 * 2 * 8 + 2 bits: the same as one rounding of the exact sum, contracts §4.1). */
A4W4J_HD uint32_t a4w4j_atomic_add(uint32_t acc, uint32_t q)
{
    return a4w4j_bf16_of_f32(J_FADD(a4w4j_f(acc << 16), a4w4j_f(q << 16)));
}

/* The adds of v[0..n) in that order into +0. */
A4W4J_HD uint32_t a4w4j_atomic_fold(const uint32_t *v, int n)
{
    uint32_t acc = 0u;
    for (int i = 0; i < n; i++)
        acc = a4w4j_atomic_add(acc, v[i]);
    return acc;
}

A4W4J_HD int a4w4j_bf16_same(uint32_t a, uint32_t b)
{
    return a == b || ((a & 0x7FFFu) > 0x7F80u && (b & 0x7FFFu) > 0x7F80u);
}

/* 1 when bf16 got is the result of one of the n! orders (n <= A4W4J_ATOMIC_MAX) of the split
 * values q[0..n), every one visited (Heap's algorithm, iterative: each step one swap). */
A4W4J_HD int a4w4j_atomic_member(const uint32_t *q, int n, uint32_t got)
{
    uint32_t v[A4W4J_ATOMIC_MAX];
    int c[A4W4J_ATOMIC_MAX];
    for (int i = 0; i < n; i++) {
        v[i] = q[i];
        c[i] = 0;
    }
    if (a4w4j_bf16_same(a4w4j_atomic_fold(v, n), got))
        return 1;
    for (int i = 1; i < n;) {
        if (c[i] < i) {
            const int j = i % 2 ? c[i] : 0;
            const uint32_t t = v[j];
            v[j] = v[i];
            v[i] = t;
            if (a4w4j_bf16_same(a4w4j_atomic_fold(v, n), got))
                return 1;
            c[i]++;
            i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return 0;
}

/* ---- the exact window ----------------------------------------------------------------------- */
typedef struct {
    __int128 acc;
    int top;     /* largest e of a nonzero block so far; -1: none */
    int nan;
    double tail; /* >= 0: bound of what the window has not got (units of 1, i.e. the value) */
} a4w4j_win;

A4W4J_HD void a4w4j_win_init(a4w4j_win *w)
{
    w->acc = 0;
    w->top = -1;
    w->nan = 0;
    w->tail = 0.0;
}

/* Add one block: d its exact dot, sa and sb its scales. */
A4W4J_HD void a4w4j_win_add(a4w4j_win *w, int d, unsigned sa, unsigned sb)
{
    if (sa == 0xFFu || sb == 0xFFu) {
        w->nan = 1;
        return;
    }
    if (d == 0)
        return;
    const int e = (int)(sa + sb);
    if (w->top < 0) {
        w->top = e;
    } else if (e > w->top) {
        const int k = e - w->top;
        const int qe = w->top - A4W4J_WIN - 256; /* the old quantum's exponent */
        if (k >= 127) {
            if (w->acc != 0)
                w->tail = a4w4j_dadd_ru(w->tail, a4w4j_pow2d(qe + 127) * 2.0);
            w->acc = 0;
        } else {
            const __int128 q = w->acc >> k; /* floor */
            if ((q << k) != w->acc)
                w->tail = a4w4j_dadd_ru(w->tail, a4w4j_pow2d(qe + k));
            w->acc = q;
        }
        w->top = e;
    }
    const int s = e - (w->top - A4W4J_WIN);
    if (s >= 0) /* d * 2^s, s <= 96: a shift of the two's complement bits */
        w->acc += (__int128)((unsigned __int128)(__int128)d << s);
    else
        w->tail = a4w4j_dadd_ru(w->tail, (double)(d < 0 ? -d : d) * a4w4j_pow2d(e - 256));
}

/* Significant bits of a 128-bit magnitude (0 for 0). */
A4W4J_HD int a4w4j_bits128(unsigned __int128 v)
{
    const uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;
#ifdef A4W4J_DEVICE_PASS
    return hi ? 128 - __clzll((long long)hi) : lo ? 64 - __clzll((long long)lo) : 0;
#else
    return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
#endif
}

/* RNE of v = acc * 2^x to p significant bits in fp32's exponent range (subnormals down to
 * 2^-149 for p = 24, 2^-133 for p = 8; 2^128 and beyond overflow to Inf), exactly, from the
 * integer: the rounded value as a float (exactly representable), the sign of v kept on a
 * result that rounds to zero, +0 for v = 0. |acc| < 2^127, -352 <= x <= 252 (the window's
 * quantum, or the fixed-base path's 2^(base - 256) with base <= 508). */
A4W4J_HD float a4w4j_round_i128(__int128 acc, int x, int p)
{
    if (acc == 0)
        return 0.0f;
    const int neg = acc < 0;
    const unsigned __int128 mag = neg ? (unsigned __int128)0 - (unsigned __int128)acc
                                      : (unsigned __int128)acc;
    const int E = a4w4j_bits128(mag) - 1 + x; /* 2^E <= |v| < 2^(E+1) */
    const int q = (E < -126 ? -126 : E) - (p - 1); /* exponent of the quantum */
    const int sh = q - x;                          /* bits of mag below the quantum */
    unsigned long long m;
    if (sh <= 0) {
        m = (unsigned long long)(mag << -sh); /* exact, < 2^p */
    } else if (sh >= 128) {
        m = 0; /* |v| < 2^127 quanta... below half a quantum */
    } else {
        const unsigned __int128 hi = mag >> sh, rem = mag - (hi << sh);
        const unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
        m = (unsigned long long)hi + ((rem > half || (rem == half && (hi & 1u))) ? 1u : 0u);
    }
    const double v = (double)m * a4w4j_pow2d(q); /* exact: m <= 2^p, -149 <= q <= 281 */
    const float f = v >= a4w4j_pow2d(128) ? a4w4j_f(0x7F800000u) : (float)v;
    return neg ? -f : f;
}

/* The ends of the window's interval in quanta of 2^x: acc -+ ceil(tail / quantum). 0 when the
 * tail is too large to say. */
A4W4J_HD int a4w4j_win_ends(const a4w4j_win *w, int x, __int128 *lo, __int128 *hi)
{
    *lo = *hi = w->acc;
    if (w->tail > 0.0) {
        const double tq = w->tail * a4w4j_pow2d(-x); /* exact scaling: the tail in quanta */
        if (!(tq < 0x1p100))
            return 0;
        const unsigned long long top = (unsigned long long)(tq * 0x1p-50);
        const double low = tq - (double)top * 0x1p50; /* exact split of tq */
        __int128 T = ((__int128)top << 50) + (__int128)(unsigned long long)low;
        if ((double)(unsigned long long)low != low)
            T += 1; /* ceil */
        *lo -= T;
        *hi += T;
    }
    return 1;
}

/* acc * 2^x rounded to the nearest double, ties to even (the exact sums here are never below
 * 2^-258, so never subnormal: the quantum is 2^(E - 52)). */
A4W4J_HD double a4w4j_round_i128_d(__int128 acc, int x)
{
    if (acc == 0)
        return 0.0;
    const int neg = acc < 0;
    const unsigned __int128 mag = neg ? (unsigned __int128)0 - (unsigned __int128)acc
                                      : (unsigned __int128)acc;
    const int E = a4w4j_bits128(mag) - 1 + x;
    const int q = (E < -1022 ? -1022 : E) - 52, sh = q - x;
    unsigned long long m;
    if (sh <= 0) {
        m = (unsigned long long)(mag << -sh); /* exact, < 2^53 */
    } else if (sh >= 128) {
        m = 0;
    } else {
        const unsigned __int128 hi = mag >> sh, rem = mag - (hi << sh);
        const unsigned __int128 half = (unsigned __int128)1 << (sh - 1);
        m = (unsigned long long)hi + ((rem > half || (rem == half && (hi & 1u))) ? 1u : 0u);
    }
    const double v = J_DMUL((double)m, a4w4j_pow2d(q)); /* exact: m <= 2^53 */
    return neg ? -v : v;
}

/* The window rounded to the nearest double (the bounded(S) bound's split partial p_s, as
 * ref/a4w4_bound.c takes it from a4w4_dot_exact_f64): 1 with *d set when certain (no tail, or
 * both ends of acc +- tail round alike), 0 when not. */
A4W4J_HD int a4w4j_win_round_d(const a4w4j_win *w, double *d)
{
    if (w->nan)
        return 0;
    if (w->top < 0) {
        *d = 0.0;
        return 1;
    }
    const int x = w->top - A4W4J_WIN - 256;
    __int128 lo, hi;
    if (!a4w4j_win_ends(w, x, &lo, &hi))
        return 0;
    const double dlo = a4w4j_round_i128_d(lo, x), dhi = a4w4j_round_i128_d(hi, x);
    if (a4w4j_du(dlo) != a4w4j_du(dhi))
        return 0;
    *d = dlo;
    return 1;
}

/* Round the window: 1 with *bf16 / *f32 set when the rounding is certain, 0 when it is not
 * (the caller asks the plain oracle). Without a tail the window is the exact sum: rounded from
 * the integer, always certain. With a tail t the exact sum lies in acc +- T quanta, T =
 * ceil(t / quantum): certain when both ends round to the same fp32 and bf16 (RNE is
 * monotonic). NaN gives bf16 0x7FC0 and fp32 0x7FC00000. */
A4W4J_HD int a4w4j_win_round(const a4w4j_win *w, uint32_t *bf16, float *f32)
{
    if (w->nan) {
        *bf16 = 0x7FC0u;
        *f32 = a4w4j_f(0x7FC00000u);
        return 1;
    }
    if (w->top < 0) {
        *bf16 = 0;
        *f32 = 0.0f;
        return 1;
    }
    const int x = w->top - A4W4J_WIN - 256; /* the quantum's exponent */
    __int128 lo, hi;
    if (!a4w4j_win_ends(w, x, &lo, &hi))
        return 0;
    const float flo = a4w4j_round_i128(lo, x, 24), fhi = a4w4j_round_i128(hi, x, 24);
    const float blo = a4w4j_round_i128(lo, x, 8), bhi = a4w4j_round_i128(hi, x, 8);
    if (a4w4j_u(flo) != a4w4j_u(fhi) || a4w4j_u(blo) != a4w4j_u(bhi))
        return 0;
    *f32 = flo;
    *bf16 = a4w4j_u(blo) >> 16;
    return 1;
}

/* ---- the exact-regime prover's facts ----------------------------------------------------- */
/* Per output: emin = the smallest e over blocks with a nonzero product (iabs > 0), and T =
 * sum of iabs * 2^(e - 256) in double: exact while the true sum is below 2^24 quanta of
 * 2^(emin - 256), and at or above 2^(emin - 232) whenever the true sum is (rounding of a sum
 * of non-negative terms is monotonic), so T < 2^(emin - 232) decides contracts §4.1's
 * "sum |terms| < 2^24 units of the smallest term quantum" exactly. */
typedef struct {
    int emin; /* 1000: no block with a nonzero product */
    double T;
} a4w4j_prove;

A4W4J_HD void a4w4j_prove_init(a4w4j_prove *p)
{
    p->emin = 1000;
    p->T = 0.0;
}

A4W4J_HD void a4w4j_prove_add(a4w4j_prove *p, int iabs, unsigned sa, unsigned sb)
{
    if (iabs == 0 || sa == 0xFFu || sb == 0xFFu)
        return;
    const int e = (int)(sa + sb);
    p->emin = e < p->emin ? e : p->emin;
    p->T = J_DADD(p->T, (double)iabs * a4w4j_pow2d(e - 256));
}

/* Row facts: bit 0 "ok" (no scale 0xFF and every element dequantizes to a finite fp32
 * value), bit 1 "some nonzero code". */
#define A4W4J_ROW_OK 1u
#define A4W4J_ROW_NONZERO 2u

/* The output is in the exact regime (contracts §4.1; the C prover's a4w4_exact_regime). */
A4W4J_HD int a4w4j_proven(unsigned fa, unsigned fw, const a4w4j_prove *p)
{
    if (!(fa & A4W4J_ROW_OK) || !(fw & A4W4J_ROW_OK))
        return 0;
    if (!(fa & A4W4J_ROW_NONZERO) || !(fw & A4W4J_ROW_NONZERO) || p->emin == 1000)
        return 1;
    if (p->emin - 256 < -149 || p->emin - 232 > 128)
        return 0;
    return p->T < a4w4j_pow2d(p->emin - 232);
}

/* Facts of one row of K/32 blocks (codes fp4 [K/2], scales sc [K/32]). */
A4W4J_HD unsigned a4w4j_row_facts(const uint8_t *fp4, const uint8_t *sc, long long nb)
{
    unsigned ok = A4W4J_ROW_OK, nz = 0;
    for (long long b = 0; b < nb; b++) {
        const unsigned s = sc[b];
        unsigned maxmag = 0;
        for (int i = 0; i < 16; i++) {
            const unsigned byte = fp4[b * 16 + i];
            const unsigned lo = byte & 7u, hi = (byte >> 4) & 7u;
            maxmag = lo > maxmag ? lo : maxmag;
            maxmag = hi > maxmag ? hi : maxmag;
        }
        nz |= maxmag ? A4W4J_ROW_NONZERO : 0u;
        /* 0xFF, or a value beyond FLT_MAX: |v| * 2^(s - 127) with |v| = 2 (code 4) reaches 2^128
         * at s = 254, |v| = 4 (code 6) at s = 253; s <= 252 never overflows (6 * 2^125) */
        if (s == 0xFFu || (s == 254u && maxmag >= 4u) || (s == 253u && maxmag >= 6u))
            ok = 0;
    }
    return ok | nz;
}

/* ---- bounded(S): the facts of one split (the C bound's a4w4_dot_split_facts) ---------------- */
#define A4W4J_U32 0x1p-24
#define A4W4J_V16 (0x1p-8 + 0x1p-23)
#define A4W4J_H_UNDER 0x1p-126

#define A4W4J_OVER_F32 (0x1p128 - 0x1p103)
#define A4W4J_OVER_BF16 (0x1p128 - 0x1p119)
#define A4W4J_OVER_MARGIN (1.0 + 0x1p-20)
/* a4w4j_bound_infs bits: +Inf allowed, -Inf allowed (a4w4_bounded_limits inf_pos, inf_neg) */
#define A4W4J_INF_POS 1u
#define A4W4J_INF_NEG 2u

typedef struct {
    double dsum, qpos, qneg;
    int n;
    unsigned over; /* bits 0/1: an fp32 rounding in a split can overflow up/down; 2/3: the
                      bf16 rounding of a split total can (a4w4_bound_acc's f32_*, q_*) */
} a4w4j_bound_acc;

A4W4J_HD void a4w4j_bound_init(a4w4j_bound_acc *a)
{
    a->dsum = a->qpos = a->qneg = 0.0;
    a->n = 0;
    a->over = 0;
}

/* Add split facts: p = the split's exact partial rounded to the nearest double, tpos / tneg =
 * its double sums of the positive and negative terms (ascending blocks), blocks = its block
 * count. The same operations, in the same order, as ref/a4w4_bound.c's a4w4_dot_split_facts
 * and acc_add, so the bound is the same double. */
A4W4J_HD void a4w4j_bound_add(a4w4j_bound_acc *a, double p, double tpos, double tneg,
                              long long blocks)
{
    const double n = (double)blocks;
    const double grow = J_DADD(1.0, J_DMUL(J_DMUL(32.0, n), 0x1p-52));
    const double tp = J_DMUL(tpos, grow), tn = J_DMUL(tneg, grow);
    const double t = J_DADD(tp, tn);
    const double g = J_DDIV(J_DMUL(n, A4W4J_U32), J_DADD(1.0, -J_DMUL(n, A4W4J_U32)));
    const double e = J_DADD(J_DMUL(g, t), J_DMUL(J_DMUL(4.0, n), A4W4J_H_UNDER));
    const double pd = p, pabs = pd < 0 ? -pd : pd;
    const double pabsx = J_DADD(J_DMUL(pabs, J_DADD(1.0, A4W4J_U32)), 0x1p-149);
    const double d = J_DADD(J_DADD(e, J_DMUL(A4W4J_V16, J_DADD(pabsx, e))), A4W4J_H_UNDER);
    const double slack = J_DADD(J_DADD(J_DMUL(A4W4J_U32, pabs), 0x1p-149), d);
    a->dsum = J_DADD(a->dsum, d);
    const double up = J_DADD(pd, slack), dn = J_DADD(slack, -pd);
    a->qpos = J_DADD(a->qpos, up > 0.0 ? up : 0.0);
    a->qneg = J_DADD(a->qneg, dn > 0.0 ? dn : 0.0);
    const double pe = J_DADD(J_DADD(J_DMUL(A4W4J_U32, pabs), 0x1p-149), e);
    a->over |= (J_DMUL(J_DADD(tp, e), A4W4J_OVER_MARGIN) >= A4W4J_OVER_F32 ? 1u : 0u) |
               (J_DMUL(J_DADD(tn, e), A4W4J_OVER_MARGIN) >= A4W4J_OVER_F32 ? 2u : 0u) |
               (J_DMUL(J_DADD(pd, pe), A4W4J_OVER_MARGIN) >= A4W4J_OVER_BF16 ? 4u : 0u) |
               (J_DMUL(J_DADD(pe, -pd), A4W4J_OVER_MARGIN) >= A4W4J_OVER_BF16 ? 8u : 0u);
    a->n++;
}

/* The atomic stage's accumulated error |e_n'| (ref/a4w4_bound.c's acc_atomic). */
A4W4J_HD double a4w4j_bound_atomic(const a4w4j_bound_acc *a)
{
    const double w = a->qpos > a->qneg ? a->qpos : a->qneg;
    const double step = J_DADD(J_DMUL(A4W4J_V16, w), A4W4J_H_UNDER);
    double grow = 1.0, e = 0.0;
    for (int i = 0; i + 1 < a->n; i++) {
        e = J_DADD(e, J_DMUL(grow, step));
        grow = J_DMUL(grow, J_DADD(1.0, A4W4J_V16));
    }
    return e;
}

/* Where ±Inf is allowed (A4W4J_INF_* bits; ref/a4w4_bound.c's a4w4_bound_acc_limits). */
A4W4J_HD unsigned a4w4j_bound_infs(const a4w4j_bound_acc *a)
{
    const double at = a4w4j_bound_atomic(a);
    const int adds = a->n >= 2; /* the first add into +0 is exact */
    const int up = (a->over & 5u) ||
                   (adds && J_DMUL(J_DADD(a->qpos, at), A4W4J_OVER_MARGIN) >= A4W4J_OVER_BF16);
    const int dn = (a->over & 10u) ||
                   (adds && J_DMUL(J_DADD(a->qneg, at), A4W4J_OVER_MARGIN) >= A4W4J_OVER_BF16);
    return (up ? A4W4J_INF_POS : 0u) | (dn ? A4W4J_INF_NEG : 0u);
}

/* The bound B (ref/a4w4_bound.c's acc_bound). */
A4W4J_HD double a4w4j_bound_final(const a4w4j_bound_acc *a)
{
    return J_DMUL(J_DADD(a->dsum, a4w4j_bound_atomic(a)), J_DADD(1.0, 0x1p-40));
}

/* ---- exact, the prover and bounded(S) on a fixed base (contracts §4, §4.1) ------------------
 * The fast form of the exact pass, for outputs whose blocks' exponents lie in a narrow range.
 * Row span facts (a4w4j_row_span): lo = the smallest scale of the row's blocks that hold a
 * nonzero code (0 when none), span = the largest such scale minus lo, A4W4J_SPAN_NAN when any
 * scale of the row is 0xFF (every output reading the row is NaN, contracts §2). Every block
 * with a nonzero product has e = sa + sb in [base, base + span_a + span_w], base = lo_a + lo_w,
 * so an output whose spans add up to at most a4w4j_fix_limit(nb) sums its blocks exactly as
 * integers in units of 2^(base - 256): acc = sum of d << (e - base), tacc = sum of |products|
 * << (e - base), both below nb * 4608 * 2^limit <= 2^53. Then:
 *   exact value   acc * 2^(base - 256), rounded once from the integer (a4w4j_round_i128): the
 *                 window's result whenever the window is certain (both are the exact sum);
 *   prover        T < 2^(emin - 232) <=> tacc < 2^(emin - base + 24), exactly (the double T
 *                 of a4w4j_prove decides the same, see there);
 *   bounded(S)    per split, the difference of acc and tacc at its ends gives its exact
 *                 partial (rounded once to double, as a4w4j_win_round_d) and its sums of
 *                 positive and negative terms, (tacc + acc) / 2 and (tacc - acc) / 2: below
 *                 2^53 units, so every partial sum of a4w4_bound.c's ascending double sums is
 *                 exact and the doubles are those sums, bit for bit.
 * Outputs outside the limit take the window (a4w4j_win) instead. */
#define A4W4J_SPAN_NAN 255u

/* lo and span of one row of nb blocks (codes fp4 [nb * 16], scales sc [nb]). */
A4W4J_HD void a4w4j_row_span(const uint8_t *fp4, const uint8_t *sc, long long nb, uint8_t *lo,
                             uint8_t *span)
{
    unsigned mn = 255, mx = 0, ff = 0;
    for (long long b = 0; b < nb; b++) {
        const unsigned s = sc[b];
        unsigned nz = 0;
        for (int i = 0; i < 16; i++)
            nz |= fp4[b * 16 + i] & 0x77u;
        ff |= s == 0xFFu;
        if (nz && s != 0xFFu) {
            mn = s < mn ? s : mn;
            mx = s > mx ? s : mx;
        }
    }
    *lo = (uint8_t)(mn == 255 ? 0 : mn);
    *span = (uint8_t)(ff ? A4W4J_SPAN_NAN : mn == 255 ? 0 : mx - mn);
}

/* The largest span_a + span_w the fixed base takes for nb blocks: nb * 4608 * 2^limit <= 2^53
 * (-1 when not even 0 fits, nb > 2^40). */
A4W4J_HD int a4w4j_fix_limit(long long nb)
{
    int r = -1;
    while (r < 60 && ((unsigned long long)nb * 4608ull << (r + 1)) <= (1ull << 53))
        r++;
    return r;
}

/* The output (spans sa, sw) takes the fixed base: a NaN row, or spans within the limit. */
A4W4J_HD int a4w4j_fix_takes(unsigned sa, unsigned sw, int limit)
{
    return sa == A4W4J_SPAN_NAN || sw == A4W4J_SPAN_NAN || (int)(sa + sw) <= limit;
}

typedef struct {
    unsigned long long acc, tacc; /* two's complement sums of d and |products| << (e - base) */
    int emin;                     /* the smallest e of a block with a nonzero product; 1000 */
} a4w4j_fix;

A4W4J_HD void a4w4j_fix_init(a4w4j_fix *f)
{
    f->acc = f->tacc = 0;
    f->emin = 1000;
}

/* Add one block: d its dot, iabs its sum of |products|, e = sa + sb, base the output's. A
 * block with iabs = 0 (d = 0 too) adds nothing, whatever its e; in a NaN row the sums are
 * never read. */
A4W4J_HD void a4w4j_fix_add(a4w4j_fix *f, int d, int iabs, int e, int base)
{
    const unsigned sh = (unsigned)(e - base) & 63u;
    f->acc += (unsigned long long)(long long)d << sh;
    f->tacc += (unsigned long long)(long long)iabs << sh;
    f->emin = iabs && e < f->emin ? e : f->emin;
}

/* The narrow form: outputs whose spans add up to at most A4W4J_NARROW_SPAN sum up to
 * A4W4J_NARROW_BLOCKS blocks in 32 bits (4 * 4608 * 2^16 < 2^31) before adding them to the
 * 64-bit sums (a4w4j_fix_flush): the same integers, one 64-bit add per 4 blocks. */
#define A4W4J_NARROW_SPAN 16
#define A4W4J_NARROW_BLOCKS 4

typedef struct {
    uint32_t acc, tacc; /* two's complement, as a4w4j_fix's */
} a4w4j_fix32;

A4W4J_HD void a4w4j_fix32_add(a4w4j_fix *f, a4w4j_fix32 *l, int d, int iabs, int e, int base)
{
    const unsigned sh = (unsigned)(e - base) & 31u;
    l->acc += (uint32_t)d << sh;
    l->tacc += (uint32_t)iabs << sh;
    f->emin = iabs && e < f->emin ? e : f->emin;
}

A4W4J_HD void a4w4j_fix_flush(a4w4j_fix *f, a4w4j_fix32 *l)
{
    f->acc += (unsigned long long)(long long)(int32_t)l->acc;
    f->tacc += (unsigned long long)l->tacc;
    l->acc = l->tacc = 0;
}

/* The exact value's bf16 and fp32 (the window's a4w4j_win_round, always certain here). */
A4W4J_HD void a4w4j_fix_round(const a4w4j_fix *f, int base, uint32_t *bf16, float *f32)
{
    const __int128 v = (long long)f->acc;
    *f32 = a4w4j_round_i128(v, base - 256, 24);
    *bf16 = a4w4j_u(a4w4j_round_i128(v, base - 256, 8)) >> 16;
}

/* The exact value rounded once to double (a4w4j_win_round_d). */
A4W4J_HD double a4w4j_fix_round_d(const a4w4j_fix *f, int base)
{
    return a4w4j_round_i128_d((long long)f->acc, base - 256);
}

/* a4w4j_proven on the fixed base. */
A4W4J_HD int a4w4j_fix_proven(unsigned fa, unsigned fw, const a4w4j_fix *f, int base)
{
    if (!(fa & A4W4J_ROW_OK) || !(fw & A4W4J_ROW_OK))
        return 0;
    if (!(fa & A4W4J_ROW_NONZERO) || !(fw & A4W4J_ROW_NONZERO) || f->emin == 1000)
        return 1;
    if (f->emin - 256 < -149 || f->emin - 232 > 128)
        return 0;
    const int k = f->emin - base + 24; /* >= 24 */
    return k >= 63 || (long long)f->tacc < (1ll << k);
}

/* Close a split: f now, at its start f0, blocks its block count; its facts into the bound as
 * a4w4j_bound_add takes them from the window and the double sums. */
A4W4J_HD void a4w4j_fix_split(a4w4j_bound_acc *b, const a4w4j_fix *f, const a4w4j_fix *f0,
                              int base, long long blocks)
{
    const long long sp = (long long)(f->acc - f0->acc), st = (long long)(f->tacc - f0->tacc);
    const double q = a4w4j_pow2d(base - 256);
    const double p = a4w4j_round_i128_d(sp, base - 256);
    a4w4j_bound_add(b, p, J_DMUL((double)((st + sp) / 2), q), J_DMUL((double)((st - sp) / 2), q),
                    blocks);
}

#endif
