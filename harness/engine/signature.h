/* signature.h — where and how a failing entry's outputs are wrong: a compact mismatch map,
 * built in the engine while the outputs are compared, and its one-line hypothesis (the
 * entry's "signature"), so that reports only render what the map says.
 *
 * The map of a GEMM entry counts its mismatches per checked row and column (runs of rows and
 * of columns, whole rows and columns, tile-aligned stripes), per kind (never written, NaN or
 * Inf where a finite value is due, a finite value where NaN is due, zero where nonzero is
 * due, sign only, one bf16 ULP on a tie or not, other) and, where one 32-block of K explains
 * the difference (the output equals the oracle's without that block, or with it twice), per
 * K block. The signature names the dominant kind, the place (every output, whole rows or
 * columns, the last row, the partial last tile_M rows, every row but row 0, odd or even
 * tile columns, ranges), the K block, and the hints the facts support (E8M0 code 0 present,
 * expected values below 2^-126). Byte entries (layouts, quantizers) get their own signature
 * (a permutation of the right bytes, scale codes off by one, nibbles swapped, codes one step
 * toward zero). Nothing here prints. */
#ifndef A4W4_SIGNATURE_H
#define A4W4_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"

typedef enum {
    A4W4_MK_UNWRITTEN = 0, /* the poison is still there */
    A4W4_MK_NAN,           /* NaN where a finite value is due */
    A4W4_MK_INF,           /* +-Inf where a finite value is due */
    A4W4_MK_NAN_MISSING,   /* a number where NaN is due (a 0xFF scale block ignored) */
    A4W4_MK_INF_MISSING,   /* a finite value where +-Inf is due (saturated: contracts §4.3) */
    A4W4_MK_ZERO,          /* +-0 where a nonzero value is due */
    A4W4_MK_SIGN,          /* the same magnitude, the other sign (-0 for +0 included) */
    A4W4_MK_ULP1_TIE,      /* one bf16 ULP off where the exact value is a tie */
    A4W4_MK_ULP1,          /* one bf16 ULP off elsewhere */
    A4W4_MK_OTHER,         /* anything else */
    A4W4_MK_COUNT
} a4w4_mismatch_kind;

/* "unwritten", "nan", "inf", "nan-missing", "zero", "sign", "ulp1-tie", "ulp1", "values". */
const char *a4w4_mismatch_kind_name(a4w4_mismatch_kind k);

/* The kind of one mismatching output: got and expected bf16 bits (the contract's oracle),
 * exact_f32 the exact value rounded to fp32 (its ties decide ULP1_TIE; NaN when unknown). */
a4w4_mismatch_kind a4w4_mismatch_kind_of(uint16_t got, uint16_t expected, float exact_f32);

/* A run of checked rows (or columns) with mismatches: output indices first..last (the
 * checked ones between them all mismatch somewhere) and the mismatches in them. */
typedef struct {
    size_t first, last, count;
} a4w4_map_range;

#define A4W4_MAP_RANGES 8

typedef struct {
    int has;                       /* 1: built (the entry has mismatches) */
    size_t mismatches;
    size_t rows_hit, cols_hit;     /* checked rows / columns with a mismatch */
    size_t rows_whole, cols_whole; /* ... where every checked output mismatches */
    size_t nrows, ncols;           /* checked rows / columns */
    size_t nrow_ranges, ncol_ranges;
    int rows_more, cols_more;      /* more runs than A4W4_MAP_RANGES */
    a4w4_map_range rows[A4W4_MAP_RANGES], cols[A4W4_MAP_RANGES];
    size_t kinds[A4W4_MK_COUNT];
    size_t tiny_expected;          /* mismatches whose due value is nonzero below 2^-126 */
    size_t neg_zero;               /* mismatches -0 where +0 is due */
    size_t k_tested;               /* mismatches tested for one K block (at most 256) */
    size_t k_hits;                 /* ... explained by block k_block */
    long k_block;                  /* -1: none */
    int k_doubled;                 /* 1: the block counted twice, 0: missing */
    size_t code0;                  /* tested mismatches reading an E8M0 code-0 scale */
    unsigned row_tile, col_tile;   /* tile-aligned stripes: the tile (0: none) */
    int row_parity, col_parity;    /* stripes on every odd (1) or even (2) tile (0: other) */
    unsigned row_partial_tile;     /* the mismatching rows are the partial last tile of M */
    char variant[40];              /* the pad variant whose outputs these are ("": plain) */
} a4w4_mismatch_map;

/* What a4w4_map_build reads: the sample s (outputs in sample order, index i * s->ncols + j
 * is output (row i, column j)), the case's M, N and data d (row-major operands, for the K
 * block and code-0 facts; NULL: none), got and expected bf16 bits, exact_f32 (NULL: no tie
 * facts), and mism[k] nonzero where output k mismatched. */
typedef struct {
    const a4w4_sample *s;
    size_t M, N;
    const a4w4_case_data *d;
    const uint16_t *got, *expected;
    const float *exact_f32;
    const uint8_t *mism;
} a4w4_map_input;

/* Build the map of in into *m (zeroed first; has = 0 when nothing mismatches). 0, or
 * A4W4_ENOMEM (m->has 0). */
int a4w4_map_build(const a4w4_map_input *in, a4w4_mismatch_map *m);

/* The one-line hypothesis of map m of a case with M, N, K into sig and its class (the
 * dominant kind's name, or "mixed") into cls. */
void a4w4_map_signature(const a4w4_mismatch_map *m, size_t M, size_t N, size_t K, char *sig,
                        size_t len, char *cls, size_t clen);

/* The signature of a byte check (a layout or a quantizer's output): tensor names it
 * ("w_fp4_shuffled", "a_scale_shuffled", "a_scale", "a_fp4"); got and expected n bytes;
 * row_bytes the bytes of one 32-row group of a_scale_shuffled (32 * padded columns; 0 for
 * other tensors). Returns 1 and fills sig and cls when something mismatches, else 0. */
int a4w4_bytes_signature(const char *tensor, const uint8_t *got, const uint8_t *expected,
                         size_t n, size_t row_bytes, char *sig, size_t len, char *cls,
                         size_t clen);

#endif
