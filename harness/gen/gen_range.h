/* gen_range.h — the generator's `range` regime: outputs at the edges of the fp32 and bf16
 * ranges (contracts §4.3). Internal to gen/ (used by gen.c; the tests and the coverage
 * report read the layout below).
 *
 * K is cut into segments of A4W4_RANGE_SEGMENT_BLOCKS 32-blocks (256 elements). Segment k < 4
 * belongs to kind k; an A row m has kind m % 4 and sign (m / 4) % 2 (1: every element of its
 * segment negated), its elements are zero outside its own segment (those blocks carry seeded
 * scales 1..254, so their zero dot products meet every sa + sb up to 508; 1..8 in kind 3 rows,
 * which show the bottom edge alone), and inside it a fixed pattern per kind. A W row n has
 * variant n % 8 and, in every segment, the data of that kind and variant. Output (m, n)
 * therefore reads only segment kind(m): its value is built from the kind, the variant and the
 * sign. With sa + sb = s, a block's value is d * 2^(s - 256), d the exact integer dot of
 * doubled E2M1 values (contracts §4).
 *
 *   kind 0, bf16 overflow: A 0.5 at scale 254. v4: 255 * 2^120 (bf16's largest finite value,
 *     0x7F7F); v0: 511 * 2^119 (the rounding boundary: RNE ties to even, +Inf); v1 and v2: that
 *     boundary -/+ 2^104 (0x7F7F / Inf); v3: the boundary - 2^102 (exact 0x7F7F, while ordered's
 *     fp32 total rounds onto the boundary: Inf); v5: 510 * 2^120 (past fp32: a partial sum
 *     overflows); v6: 255 * 2^120 + 2^128 - 2^128 with the two 2^128 blocks overflowing fp32 on
 *     their own (exact 0x7F7F, ordered +Inf + -Inf = NaN); v7: one block of 1.5 * 2^128 (Inf).
 *   kind 1, combined scale past fp32 with finite block values: A 0.5 at 254; blocks 2^127 at
 *     s = 383, -2^126 and -3 * 2^126 at s = 382, dot products 0 (+x, -x element pairs) at 4 values
 *     of s per variant over 384..508, and 2^(s - 256) at s = 255 + 18 v (255..381). Every output
 *     is -2^127 + 2^(s - 256): finite, while 2^(s - 254) is beyond fp32 in 6 of its blocks.
 *   kind 2, E8M0 254 with elements past fp32 when dequantized alone: blocks 0-3 A 6.0 at 254
 *     (6 * 2^127 is beyond fp32) against seeded W codes at 1..8; blocks 4-7 A 0.5 at 1..4 against
 *     W +-6.0 at 254. Outputs near 2^12, finite.
 *   kind 3, combined scale below fp32's subnormals: 2^-134 (the bf16 rounding midpoint between
 *     0 and 2^-133) plus one block at s <= 104, where 2^(s - 254) is below 2^-149 (RNE: 0) but
 *     the block value d * 2^(s - 256) >= 2^-149: v0 (s 104), v1 (100), v2 (96), v3 (94), v7 (103)
 *     round up to 2^-133 (0x0001); v4 (s 105, the combined scale representable) likewise; v5
 *     adds d = 12 at s = 2 (exact 0x0001, ordered: the block rounds to 0 in fp32, 0x0000); v6
 *     subtracts (0x0000). Negated rows give 0x8001 where these give 0x0001, and -0 (0x8000)
 *     where they give 0x0000.
 *
 * Blocks of a W row outside the four segments (and a K tail) hold seeded codes and scales against
 * A's zeros. A row 8 and W row 8 (gen.c nan_blocks; the last row when fewer)
 * carry E8M0 255 in one block: their outputs must be NaN. A case needs M >= 9, N >= 9 and
 * K >= 1024 to hold every kind, variant and sign; smaller cases hold the first ones. */
#ifndef A4W4_GEN_RANGE_H
#define A4W4_GEN_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"

#define A4W4_RANGE_KINDS 4
#define A4W4_RANGE_VARIANTS 8
#define A4W4_RANGE_SEGMENT_BLOCKS 8

/* Row `row` of A (w_side 0) or of W (w_side 1) of range case c: K/2 code bytes and K/32
 * scales, as laid out above (seeded by c->seed, c->name, side and row). */
void a4w4_range_row(const a4w4_case *c, int w_side, size_t row, uint8_t *fp4, uint8_t *scale);

#endif
