/* gen.h — deterministic case data from (seed, case name): operands per input regime, the
 * ASM layouts derived from them, and the tile-aware output sample. */
#ifndef A4W4_GEN_H
#define A4W4_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"

typedef struct {
    size_t M, N, K;
    uint8_t *a_fp4, *a_scale;  /* [M, K/2], [M, K/32] row-major */
    uint8_t *w_fp4, *w_scale;  /* [N, K/2], [N, K/32] row-major */
    /* ASM layouts (SPEC §3); NULL when the shape does not allow them */
    uint8_t *a_scale_shuffled; /* padded [rows256(M), cols8(K/32)], fill 0x7F/0x7F */
    uint8_t *w_fp4_shuffled;   /* N % 16 == 0 and K % 64 == 0 */
    uint8_t *w_scale_swizzled; /* N % 32 == 0 and (K/32) % 8 == 0 */
} a4w4_case_data;

/* Tile-aware output sample: rows[nrows] x cols[ncols] (sorted, distinct). full = 1 when the
 * sample is every output. */
typedef struct {
    size_t *rows, nrows, *cols, ncols;
    int full;
} a4w4_sample;

/* splitmix64 stream seeded by (seed, name, stream id). */
typedef struct {
    uint64_t s;
} a4w4_rng;
void a4w4_rng_init(a4w4_rng *r, uint64_t seed, const char *name, uint64_t stream);
uint64_t a4w4_rng_next(a4w4_rng *r);

/* Generate the operands of case c. Returns 0, or A4W4_ENOMEM. */
int a4w4_case_generate(const a4w4_case *c, a4w4_case_data *d);
void a4w4_case_data_free(a4w4_case_data *d);

/* Outputs above this many MACs (M*N*K) are sampled unless full is forced. */
#define A4W4_FULL_CHECK_MACS (1ull << 26)

/* The sample for an M x N output: every row/column on a 16-, 32- or 256-boundary (the index
 * before and after it), the first and last, plus 8 seeded random ones per axis; or all when
 * M*N*K <= A4W4_FULL_CHECK_MACS or force_full. 0 or A4W4_ENOMEM. */
int a4w4_sample_make(size_t M, size_t N, size_t K, uint64_t seed, const char *name,
                     int force_full, a4w4_sample *s);
void a4w4_sample_free(a4w4_sample *s);

#endif
