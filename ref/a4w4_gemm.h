/* a4w4_gemm.h — GEMM oracles for y[m][n] = sum_k A[m][k] * B[n][k] (contracts §4).
 *
 * Operands (all row-major): a_fp4 [M, K/2] and a_scale [M, K/32] (activation),
 * w_fp4 [N, K/2] and w_scale [N, K/32] (weight, N-major like torch.nn.Linear).
 * Outputs are bf16 bits [M, N] (and fp32 where asked). K must be a multiple of 32.
 * Any scale code 0..254 is allowed on both sides; a block with scale 0xFF (NaN) makes
 * every output reading it NaN (bf16 0x7FC0, fp32 0x7FC00000).
 *
 * The three accumulation contracts of contracts §4.1:
 *   exact      — RNE of the exact sum (wide integer accumulator, no floating point).
 *   ordered(S) — per 32-block exact dot, times both scales rounded once to fp32, blocks
 *                added in ascending K into an fp32 total from +0.0; S-way split-K: splits
 *                accumulate their contiguous ranges so and split totals are added in split
 *                order; RNE to bf16.
 *   sgemm      — OpenBLAS cblas_sgemm on dequantized fp32 operands, RNE to bf16; equals
 *                exact wherever a4w4_exact_regime() proves it. */
#ifndef A4W4_GEMM_H
#define A4W4_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_formats.h"

/* One output's operands: a row of A and a row of W with their scales. */
typedef struct {
    const uint8_t *a_fp4;   /* K/2 bytes */
    const uint8_t *a_scale; /* K/32 codes */
    const uint8_t *w_fp4;   /* K/2 bytes */
    const uint8_t *w_scale; /* K/32 codes */
    size_t K;
} a4w4_dot_operands;

/* Exact dot: sets *bf16 (RNE) and *f32 (RNE) of the exact sum; either may be NULL.
 * Overflow rounds to ±Inf by RNE; results below the subnormal range round to ±0 (sign of
 * the exact sum; an exact zero sum is +0). contracts §4.1 "exact". */
void a4w4_dot_exact(const a4w4_dot_operands *op, uint16_t *bf16, float *f32);

/* The exact sum of op rounded once to double (RNE; an exact zero sum is +0): finite for every
 * input (|sum| < 2^285), NaN when a block has scale 0xFF. The bounded(S) comparison measures
 * distances from it where the sum is past fp32 (contracts §4.3). */
double a4w4_dot_exact_f64(const a4w4_dot_operands *op);

/* Split-K ranges for ordered(S) (contracts §5 split-K): k_per_split = round_up(ceil(K / S), 256)
 * elements (at least 256), split j covers [j*k_per_split, min(K, (j+1)*k_per_split)); the
 * number of non-empty splits ceil(K / k_per_split) may be below S. */
size_t a4w4_split_k_per_split(size_t K, unsigned S);
unsigned a4w4_split_count(size_t K, unsigned S);

/* ordered(S) dot as fp32 (before the bf16 rounding). S >= 1. contracts §4.1. */
float a4w4_dot_ordered(const a4w4_dot_operands *op, unsigned S);

/* Exact-regime prover for one output (contracts §4.1): returns 1 when no scale is 0xFF, the
 * smallest term quantum q = 2^(sa+sb-256) over blocks with nonzero terms is >= 2^-149, and
 * sum |terms| < 2^24 q (so every fp32 partial sum in any order is exact and finite);
 * 0 otherwise. An output with no nonzero term is in the regime. */
int a4w4_exact_regime(const a4w4_dot_operands *op);

/* Whole-matrix forms. y_bf16 [M, N] required, y_f32 [M, N] optional (NULL).
 * A4W4_EINVAL on K % 32 != 0, M or N or K == 0, NULL pointers. */
int a4w4_gemm_exact(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                    float *y_f32);
int a4w4_gemm_ordered(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                      const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                      uint16_t *y_bf16, float *y_f32);

/* OpenBLAS path: dequantize both operands, cblas_sgemm (A x W^T), RNE to bf16.
 * regime [M, N] optional: per output 1 when a4w4_exact_regime proves sgemm == exact.
 * A4W4_ENOMEM when the fp32 operands cannot be allocated. */
int a4w4_gemm_sgemm(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                    const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                    uint8_t *regime);

#endif
