/* gen_special.h — the generator's data for the fp32 subnormal range and the sign of zero
 * (contracts §4.1): the `tiny` regime's scale shift and the zero-sign rows. Internal to the
 * engine (used by gen.c). */
#ifndef A4W4_GEN_SPECIAL_H
#define A4W4_GEN_SPECIAL_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"

/* Lowest and highest shift the tiny regime takes off one side's scale codes. A row of A is
 * lowered by ta in [A4W4_TINY_SHIFT_LO, A4W4_TINY_SHIFT_HI], a row of W by tw in the same
 * range, so an output's block exponents sa + sb sit at 254 + spread - ta - tw: 2^(sa+sb-256)
 * from 2^-148 (the smallest product quantum, still >= 2^-149: exact in fp32) up to about
 * 2^-124. Nonzero block values then lie in 2^-148..2^-111 (most subnormal) and outputs on
 * both sides of 2^-126. */
#define A4W4_TINY_SHIFT_LO 64
#define A4W4_TINY_SHIFT_HI 73

/* Tiny regime: lower the exact-regime scale codes scale[0..nb) of one row (row `row` of A,
 * or of W when w_side) by that row's shift (seeded by c->seed, c->name, side and row; the
 * same row always gets the same shift). Codes stay >= 1, so the exact-regime prover still
 * holds (contracts §4.1: smallest quantum >= 2^-149). */
void a4w4_tiny_shift(const a4w4_case *c, int w_side, size_t row, uint8_t *scale, size_t nb);

/* The NaN blocks of the special and range regimes: A row min(a_row, M-1) gets scale 0xFF in
 * block K/64 and W row min(w_row, N-1) in block (K/32 - 1)/3, on generated rows only (need_a,
 * need_w); d->nan_a_row and d->nan_w_row name them (SIZE_MAX when that row is not generated).
 * Every output reading one must be NaN (contracts §4). */
void a4w4_nan_blocks(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                     const uint8_t *need_w, size_t a_row, size_t w_row);

/* Zero-sign rows (contracts §4.1, "the sign of a zero output"), for the special and tiny
 * regimes, on generated rows only (need_a [M], need_w [N] flag them), after the regime's data:
 *   - A row M-1 (when M >= 2): every element -0 (code 8);
 *   - A row M-2 (when M >= 3): +0 and -0 alternating (bytes 0x80);
 *   - W row 0: its codes' sign bits cleared (every value >= +0), so output (M-1, 0) sums
 *     only -0 terms and (M-2, 0) mixed zeros;
 *   - W row N-1 (when N >= 2 and it is not the special regime's NaN row): every element -0,
 *     so column N-1 sums mixed zeros against random A rows and only +0 against row M-1.
 * Every such output is +0 under exact and ordered(S). Rows 0 and M-1, 0 and N-1 are in every
 * output sample (gen.h), so sampled cases check them too. */
void a4w4_zero_sign_rows(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                         const uint8_t *need_w);

#endif
