/* a4w4_atomic.h — the atomic(S) contract's plain oracle (contracts §4.1 "atomic(S)"): per
 * output, the bf16 split values (each split's ordered(S) fp32 total rounded to bf16 by RNE),
 * then the set of the results of every order of their bf16 atomic adds into +0, and
 * membership of a kernel's output in that set.
 *
 * Operands are those of a4w4_gemm.h. Nothing here prints or allocates. */
#ifndef A4W4_ATOMIC_H
#define A4W4_ATOMIC_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_gemm.h"

/* The largest S of atomic(S): S! orders are enumerated per output (720 at 6), never sampled
 * (contracts §4.1 "atomic(S)"). */
#define A4W4_ATOMIC_SPLIT_MAX 6u

/* The split values of one output under atomic(S) (contracts §4.1): split j covers ordered(S)'s
 * range (a4w4_split_k_per_split), its blocks (each rounded once to fp32) added in ascending K
 * into an fp32 total from +0.0, the total rounded to bf16 by RNE, into q[j]. q holds at least
 * S entries. Returns the number of non-empty splits n' (a4w4_split_count(K, S), <= S); a block
 * with scale 0xFF makes every q[j] NaN (0x7FC0). 0 when S is 0 or above
 * A4W4_ATOMIC_SPLIT_MAX. */
unsigned a4w4_dot_atomic_splits(const a4w4_dot_operands *op, unsigned S, uint16_t *q);

/* One bf16 atomic add: the exact sum of bf16 values acc and q rounded once to bf16 by RNE
 * (computed as the fp32 sum rounded to bf16: fp32's 24 bits are at least 2 * 8 + 2, so the
 * double rounding equals one rounding, contracts §4.1 "atomic(S)"). NaN gives 0x7FC0. */
uint16_t a4w4_atomic_add(uint16_t acc, uint16_t q);

/* The result of adding q[perm[0]], q[perm[1]], ... q[perm[n-1]] into +0 with
 * a4w4_atomic_add; perm NULL: split order. */
uint16_t a4w4_atomic_fold(const uint16_t *q, const unsigned *perm, unsigned n);

/* 1 when got equals (bit for bit; two NaNs equal) the result of at least one of the n! orders
 * of q[0..n) (n <= A4W4_ATOMIC_SPLIT_MAX), every order enumerated; else 0. */
int a4w4_atomic_member(const uint16_t *q, unsigned n, uint16_t got);

/* The number of distinct results over the n! orders of q[0..n) (NaNs counted once), at most
 * n!; their bits into out[] when out is not NULL (720 entries suffice). */
unsigned a4w4_atomic_results(const uint16_t *q, unsigned n, uint16_t *out);

/* Whole matrix: q [M * N * S], output (m, n)'s split values at q[(m * N + n) * S ..], the
 * unused tail of each (j >= n') set to 0; *nsplit (may be NULL) receives n'. A4W4_EINVAL on
 * NULL pointers, K % 32 != 0, M, N or K == 0, or S outside 1 .. A4W4_ATOMIC_SPLIT_MAX. */
int a4w4_gemm_atomic_splits(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                            uint16_t *q, unsigned *nsplit);

#endif
