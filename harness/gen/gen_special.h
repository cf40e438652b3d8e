/* gen_special.h — the generator's data for the fp32 subnormal range and the sign of zero
 * (contracts §4.1): the `tiny` regime's scale shift (the zero-sign rows and NaN blocks are
 * gen.c's). Internal to gen/ (used by gen.c). */
#ifndef A4W4_GEN_SPECIAL_H
#define A4W4_GEN_SPECIAL_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"

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

#endif
