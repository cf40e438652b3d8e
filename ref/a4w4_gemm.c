/* a4w4_gemm.c — exact, ordered(S) and OpenBLAS GEMM oracles (contracts §4, §4.1). */
#include "a4w4_gemm.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "a4w4_quant.h"

/* ---- block dot products --------------------------------------------------------------
 * A byte of fp4x2 holds two elements; pair_dot[a][w] = lo(a)*lo(w) + hi(a)*hi(w) in units
 * of twice the E2M1 values (|.| <= 2*144), pair_abs the same with |products|. A 32-block
 * is 16 bytes, so its exact integer dot is 16 table lookups (|sum| <= 4608). */
static int16_t pair_dot[256][256];
static uint16_t pair_abs[256][256];
static once_flag tables_once = ONCE_FLAG_INIT;

static void build_tables(void)
{
    for (int a = 0; a < 256; a++) {
        int alo = a4w4_e2m1_to_int2x((uint8_t)(a & 15)), ahi = a4w4_e2m1_to_int2x((uint8_t)(a >> 4));
        for (int w = 0; w < 256; w++) {
            int wlo = a4w4_e2m1_to_int2x((uint8_t)(w & 15)), whi = a4w4_e2m1_to_int2x((uint8_t)(w >> 4));
            pair_dot[a][w] = (int16_t)(alo * wlo + ahi * whi);
            pair_abs[a][w] = (uint16_t)(abs(alo * wlo) + abs(ahi * whi));
        }
    }
}

static void init_tables(void)
{
    call_once(&tables_once, build_tables);
}

/* Exact integer dot of one 32-block: sum of (2a)(2b); the block's value is
 * isum * 2^(sa + sb - 256). */
static int block_isum(const uint8_t *a, const uint8_t *w)
{
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += pair_dot[a[i]][w[i]];
    return s;
}

static unsigned block_iabs(const uint8_t *a, const uint8_t *w)
{
    unsigned s = 0;
    for (int i = 0; i < 16; i++)
        s += pair_abs[a[i]][w[i]];
    return s;
}

/* ---- exact: wide integer accumulator ---------------------------------------------------
 * total = sum_b isum_b * 2^(e_b), e_b = sa + sb in 0..508; the value is total * 2^-256.
 * Limbs are 32-bit digits held in int64 with lazy carries: one add contributes at most
 * 4608 * 2^31 < 2^44, so 2^18 adds fit before a limb could overflow; we normalise every
 * 4096 blocks. 20 limbs = 640 bits cover 508 + 13 + 19 (K up to 2^24) bits plus sign. */
#define BIG_LIMBS 20

typedef struct {
    int64_t d[BIG_LIMBS];
} bigacc;

static void big_add_shifted(bigacc *b, int64_t v, unsigned e)
{
    b->d[e / 32] += v * ((int64_t)1 << (e % 32));
}

static void big_normalise(bigacc *b)
{
    for (int i = 0; i < BIG_LIMBS - 1; i++) {
        int64_t low = b->d[i] & 0xFFFFFFFFLL;
        int64_t carry = (b->d[i] - low) / 4294967296LL; /* exact: a multiple of 2^32 */
        b->d[i] = low;
        b->d[i + 1] += carry;
    }
}

static int big_bit(const bigacc *b, int pos)
{
    if (pos < 0)
        return 0;
    return (int)((b->d[pos / 32] >> (pos % 32)) & 1);
}

/* 1 when any bit strictly below pos is set. */
static int big_any_below(const bigacc *b, int pos)
{
    if (pos <= 0)
        return 0;
    int limb = pos / 32;
    for (int i = 0; i < limb; i++)
        if (b->d[i])
            return 1;
    return (b->d[limb] & ((1LL << (pos % 32)) - 1)) != 0;
}

/* Round |value| = mag * 2^-256 (mag normalised, non-negative) to a binary format with p
 * significand bits (p <= 53) and smallest normal exponent emin, without an upper limit;
 * returns the rounded magnitude as a double (exact: below 2^(541-256)). RNE. */
static double big_round_bits(const bigacc *mag, int p, int emin)
{
    int top = -1;
    for (int i = BIG_LIMBS - 1; i >= 0 && top < 0; i--)
        if (mag->d[i])
            for (int j = 31; j >= 0; j--)
                if ((mag->d[i] >> j) & 1) {
                    top = i * 32 + j;
                    break;
                }
    if (top < 0)
        return 0.0;
    int E = top - 256;                  /* 2^E <= value < 2^(E+1) */
    int qe = (E < emin ? emin : E) - (p - 1); /* exponent of the quantum (ulp) */
    int qb = qe + 256;                  /* bit position of the quantum in mag */
    uint64_t m = 0;
    if (qb <= 0) {
        for (int i = top; i >= 0; i--)
            m = (m << 1) | (uint64_t)big_bit(mag, i);
        m <<= -qb;
    } else {
        for (int i = top; i >= qb; i--)
            m = (m << 1) | (uint64_t)big_bit(mag, i);
        int half = big_bit(mag, qb - 1);
        int sticky = big_any_below(mag, qb - 1);
        if (half && (sticky || (m & 1)))
            m++;
    }
    return ldexp((double)m, qe); /* exact: m < 2^(p+1) */
}

/* The same with the fp32 exponent range (emin -126, overflow at 2^128): the rounded magnitude
 * as float, Inf on overflow. */
static float big_round(const bigacc *mag, int p)
{
    double v = big_round_bits(mag, p, -126);
    if (v >= 0x1p128)
        return INFINITY;
    return (float)v; /* exact: v is representable in the target format */
}

/* The exact sum of op into *acc as a magnitude with its sign in *neg. Returns 1 (acc unset)
 * when a block has scale 0xFF. */
static int exact_sum(const a4w4_dot_operands *op, bigacc *acc, int *neg)
{
    init_tables();
    size_t nb = op->K / 32;
    memset(acc, 0, sizeof *acc);
    for (size_t b = 0; b < nb; b++) {
        uint8_t sa = op->a_scale[b], sb = op->w_scale[b];
        if (sa == 0xFF || sb == 0xFF)
            return 1;
        int isum = block_isum(op->a_fp4 + b * 16, op->w_fp4 + b * 16);
        if (isum)
            big_add_shifted(acc, isum, (unsigned)sa + sb);
        if ((b & 4095) == 4095)
            big_normalise(acc);
    }
    big_normalise(acc);
    *neg = acc->d[BIG_LIMBS - 1] < 0;
    if (*neg) {
        for (int i = 0; i < BIG_LIMBS; i++)
            acc->d[i] = -acc->d[i];
        big_normalise(acc);
    }
    return 0;
}

double a4w4_dot_exact_f64(const a4w4_dot_operands *op)
{
    bigacc acc;
    int neg;
    if (exact_sum(op, &acc, &neg))
        return NAN;
    double r = big_round_bits(&acc, 53, -1022);
    return neg ? -r : r;
}

void a4w4_dot_exact(const a4w4_dot_operands *op, uint16_t *bf16, float *f32)
{
    bigacc acc;
    int neg;
    if (exact_sum(op, &acc, &neg)) {
        if (bf16)
            *bf16 = 0x7FC0;
        if (f32)
            *f32 = a4w4_f32_from_bits(0x7FC00000u);
        return;
    }
    if (f32) {
        float r = big_round(&acc, 24);
        *f32 = neg ? -r : r;
    }
    if (bf16) {
        float r = big_round(&acc, 8);
        *bf16 = (uint16_t)(a4w4_f32_bits(neg ? -r : r) >> 16);
    }
}

/* ---- ordered(S) ------------------------------------------------------------------------ */

size_t a4w4_split_k_per_split(size_t K, unsigned S)
{
    if (S < 1)
        S = 1;
    size_t per = (K + S - 1) / S;
    per = (per + 255) / 256 * 256;
    return per < 256 ? 256 : per;
}

unsigned a4w4_split_count(size_t K, unsigned S)
{
    size_t per = a4w4_split_k_per_split(K, S);
    return (unsigned)((K + per - 1) / per);
}

/* One block's value: isum * 2^(sa+sb-256), rounded once to fp32 (the double is exact). */
static float block_value(int isum, unsigned e)
{
    return (float)ldexp((double)isum, (int)e - 256);
}

float a4w4_dot_ordered(const a4w4_dot_operands *op, unsigned S)
{
    init_tables();
    size_t nb = op->K / 32;
    size_t per_blocks = a4w4_split_k_per_split(op->K, S) / 32;
    float total = 0.0f;
    for (size_t b0 = 0; b0 < nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < nb ? b0 + per_blocks : nb;
        float part = 0.0f;
        for (size_t b = b0; b < b1; b++) {
            uint8_t sa = op->a_scale[b], sb = op->w_scale[b];
            if (sa == 0xFF || sb == 0xFF)
                return a4w4_f32_from_bits(0x7FC00000u);
            part += block_value(block_isum(op->a_fp4 + b * 16, op->w_fp4 + b * 16),
                                (unsigned)sa + sb);
        }
        total += part;
    }
    return total;
}

/* ---- exact-regime prover --------------------------------------------------------------- */

/* 1 when every element of the block dequantizes to a finite fp32 value. */
static int block_finite(const uint8_t *fp4, uint8_t s)
{
    if (s < 253)
        return 1; /* |v| <= 6 * 2^125 < 2^128 */
    for (size_t k = 0; k < 32; k++) {
        double v = fabs((double)a4w4_e2m1_to_f32(a4w4_fp4_get(fp4, k))) * ldexp(1.0, (int)s - 127);
        if (v > FLT_MAX)
            return 0;
    }
    return 1;
}

int a4w4_exact_regime(const a4w4_dot_operands *op)
{
    init_tables();
    size_t nb = op->K / 32;
    unsigned emin = 1000;
    for (size_t b = 0; b < nb; b++) {
        uint8_t sa = op->a_scale[b], sb = op->w_scale[b];
        if (sa == 0xFF || sb == 0xFF)
            return 0;
        if (!block_finite(op->a_fp4 + b * 16, sa) || !block_finite(op->w_fp4 + b * 16, sb))
            return 0;
        if (block_iabs(op->a_fp4 + b * 16, op->w_fp4 + b * 16) && (unsigned)sa + sb < emin)
            emin = (unsigned)sa + sb;
    }
    if (emin == 1000)
        return 1; /* every term is zero */
    /* quantum 2^(emin-256) must be >= 2^-149 and 2^24 quanta below 2^128 */
    if ((int)emin - 256 < -149 || (int)emin - 256 + 24 > 128)
        return 0;
    uint64_t units = 0; /* sum |terms| in quanta */
    for (size_t b = 0; b < nb; b++) {
        unsigned ab = block_iabs(op->a_fp4 + b * 16, op->w_fp4 + b * 16);
        if (!ab)
            continue;
        unsigned d = (unsigned)op->a_scale[b] + op->w_scale[b] - emin;
        if (d >= 24)
            return 0;
        units += (uint64_t)ab << d;
        if (units >= (1ull << 24))
            return 0;
    }
    return 1;
}

/* ---- whole-matrix forms ---------------------------------------------------------------- */

static int check_args(const void *a, const void *as, const void *w, const void *ws, size_t M,
                      size_t N, size_t K, const void *y)
{
    return a && as && w && ws && y && M && N && K && K % 32 == 0;
}

static a4w4_dot_operands operands(const uint8_t *a_fp4, const uint8_t *a_scale,
                                  const uint8_t *w_fp4, const uint8_t *w_scale, size_t K,
                                  size_t m, size_t n)
{
    a4w4_dot_operands op = {a_fp4 + m * (K / 2), a_scale + m * (K / 32), w_fp4 + n * (K / 2),
                            w_scale + n * (K / 32), K};
    return op;
}

int a4w4_gemm_exact(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                    float *y_f32)
{
    if (!check_args(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16))
        return A4W4_EINVAL;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = operands(a_fp4, a_scale, w_fp4, w_scale, K, m, n);
            a4w4_dot_exact(&op, &y_bf16[m * N + n], y_f32 ? &y_f32[m * N + n] : NULL);
        }
    return A4W4_OK;
}

int a4w4_gemm_ordered(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                      const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                      uint16_t *y_bf16, float *y_f32)
{
    if (!check_args(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16) || S < 1)
        return A4W4_EINVAL;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            a4w4_dot_operands op = operands(a_fp4, a_scale, w_fp4, w_scale, K, m, n);
            float v = a4w4_dot_ordered(&op, S);
            y_bf16[m * N + n] = a4w4_f32_to_bf16(v);
            if (y_f32)
                y_f32[m * N + n] = v;
        }
    return A4W4_OK;
}

int a4w4_gemm_sgemm(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                    uint8_t *regime)
{
    if (!check_args(a_fp4, a_scale, w_fp4, w_scale, M, N, K, y_bf16))
        return A4W4_EINVAL;
    float *A = malloc(M * K * sizeof *A), *W = malloc(N * K * sizeof *W),
          *C = malloc(M * N * sizeof *C);
    if (!A || !W || !C) {
        free(A);
        free(W);
        free(C);
        return A4W4_ENOMEM;
    }
    a4w4_dequantize(a_fp4, a_scale, M, K, A);
    a4w4_dequantize(w_fp4, w_scale, N, K, W);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0f, A, (int)K,
                W, (int)K, 0.0f, C, (int)N);
    for (size_t i = 0; i < M * N; i++)
        y_bf16[i] = a4w4_f32_to_bf16(C[i]);
    if (regime)
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++) {
                a4w4_dot_operands op = operands(a_fp4, a_scale, w_fp4, w_scale, K, m, n);
                regime[m * N + n] = (uint8_t)a4w4_exact_regime(&op);
            }
    free(A);
    free(W);
    free(C);
    return A4W4_OK;
}
