/* a4w4_gemm_fast_kernels.h — the kernel table behind a4w4_gemm_fast.h (internal to ref/ and
 * its tests; contracts §4, §4.1).
 *
 * The fast oracles compute C[i][j] = sum_k X[i][k] * Y[j][k] where X is the operand with more
 * rows (broadcast side) and Y the other (packed side); C is y or its transpose. Both are exact
 * or fixed-order per output, so the choice never changes a bit.
 *
 * Y is packed once into panels of A4W4_FAST_NR rows ("lanes"); a panel is nb block records
 * of A4W4_FAST_BLOCK_BYTES, 64-byte aligned:
 *   bytes [0, 512)    int8  y[(ks * 16 + lane) * 4 + t] = 2 * e2m1(Y[lane][b*32 + ks*4 + t])
 *   bytes [512, 576)  int32 ncorr[lane] = -12 * sum_k y over the block (offset correction)
 *   bytes [576, 640)  int32 ey[lane]    = the lane's scale code (sanitized, see below)
 * X rows are decoded to u8 x[k] = 2 * e2m1(X[k]) + 12 in [0, 24], so that
 * sum_k x[k] * y[k] + ncorr = sum_k 2X * 2Y, the block's exact dot in units of 2^(ex+ey-256)
 * (vpdpbusd multiplies unsigned by signed bytes); the AMX path decodes X to signed bytes
 * 2 * e2m1 and multiplies signed by signed (tdpbssd), without the correction.
 *
 * Sanitized scale codes: a block that is all ±0 on its side, or has scale 0xFF, holds the
 * smallest code of the row's other blocks: its dot is 0 or its output is NaN anyway, and every
 * shift stays in the tile's proven range. An X row with no nonzero finite block holds 0, a Y
 * lane without one the panel's smallest lane code. NaN rows and lanes are tracked apart. */
#ifndef A4W4_GEMM_FAST_KERNELS_H
#define A4W4_GEMM_FAST_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_gemm_fast.h"

#define A4W4_FAST_NR 16
#define A4W4_FAST_BLOCK_BYTES 640
#define A4W4_FAST_NCORR_OFF 512
#define A4W4_FAST_EY_OFF 576
#define A4W4_FAST_X_OFFSET 12 /* added to each decoded X element */
#define A4W4_FAST_LIMBS 16    /* general path: limb q holds terms with (ex + ey) >> 5 == q */
#define A4W4_FAST_MAX_MR 16

/* One tile: mr rows of X (decoded) against one Y panel, over all nb blocks. */
typedef struct {
    const uint8_t *x;     /* [mr][ldx] decoded X rows (load_x) */
    size_t ldx;           /* bytes between X rows (>= K) */
    const uint8_t *ex;    /* [mr][lde] sanitized X scale codes, block b of row r at r*lde + b,
                           * readable 3 bytes past the last */
    size_t lde;           /* >= nb */
    const uint8_t *panel; /* nb block records */
    size_t nb;            /* blocks (K / 32) */
    const uint8_t *pf;    /* bytes the kernel may prefetch while it runs (NULL: none) */
    size_t pf_len;
    int32_t e_lo, e_hi;   /* bounds of ex[r][b] + ey[b][l] over every row (padding rows
                           * included), lane and block of the tile */
} a4w4_fast_tile;

/* One instruction-set path (a BLIS-style context). Outputs of a tile are [mr][16] row-major.
 *  load_x:        one X row: K/2 fp4x2 bytes -> K bytes (2 * e2m1 + 12, or 2 * e2m1 for
 *                 AMX) at out, and its sanitized codes, range and flags exactly as
 *                 a4w4_fast_scan_row. x_zero is the byte of a zero element (padding rows).
 *  exact_window:  acc[r][l] = sum_b dot(r,l,b) * 2^(ex[r][b] + xoff[r] + ey[b][l] + yoff[l]),
 *                 where the caller proved every shift of a nonzero term in [0, 18] and that
 *                 `group` consecutive terms sum below 2^31 in magnitude (int32 partial sums,
 *                 flushed to int64 every group); shifts of zero terms may be out of range.
 *  exact_general: limbs[r][q][l] += dot(r,l,b) * 2^((e & 31)) for q = e >> 5,
 *                 e = ex[r][b] + ey[b][l] (0..508), limbs zeroed first; any input, nb <= 2^18.
 *  ordered:       total[r][l] = ordered(S) fp32 sum (contracts §4.1): per split of
 *                 per_blocks blocks, part = +0.0 + v_b in ascending b, v_b the block value
 *                 dot * 2^(e - 256) rounded once to fp32; total = +0.0 + parts in order.
 *  blocks:        v[(b - b0) * mr * 16 + r * 16 + l] = the block value of output (r, l) for
 *                 b0 <= b < b1 <= nb: dot * 2^(e - 256) rounded once to fp32 (RNE, gradual
 *                 underflow, overflow to ±inf; a zero dot gives +0, a negative one that
 *                 rounds to zero -0): the leaves of a tree with leaf=32 (contracts §4.2).
 *  round_window:  bf16[r][l], f32[r][l] = RNE of acc[r][l] * 2^(xe[r] + ye[l]) (|acc| <
 *                 2^53, -256 <= xe[r] + ye[l] <= 252), as a4w4_fast_round_i64.
 *  round_general: bf16[r][l], f32[r][l] = RNE of the limbs of output (r, l) in the
 *                 exact_general layout, as a4w4_fast_round_limbs. */
typedef struct {
    const char *name;
    unsigned mr; /* rows of X per tile, <= A4W4_FAST_MAX_MR */
    uint8_t x_zero;
    unsigned (*load_x)(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                       uint8_t *code, int32_t *lo, int32_t *hi);
    void (*exact_window)(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc);
    void (*exact_general)(const a4w4_fast_tile *t, int64_t *limbs);
    void (*ordered)(const a4w4_fast_tile *t, size_t per_blocks, float *total);
    void (*blocks)(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v);
    void (*round_window)(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32);
    void (*round_general)(const int64_t *limbs, uint16_t *bf16, float *f32);
} a4w4_fast_kernels;

/* Per-ISA tables; NULL when the build lacks the path (other compilers or architectures). */
const a4w4_fast_kernels *a4w4_fast_kernels_amx(void);
const a4w4_fast_kernels *a4w4_fast_kernels_avx512vnni(void);
const a4w4_fast_kernels *a4w4_fast_kernels_avxvnni(void);
const a4w4_fast_kernels *a4w4_fast_kernels_avx2(void);
const a4w4_fast_kernels *a4w4_fast_kernels_portable(void);

/* 1 when Linux lets this process use the AMX tile data state (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XTILEDATA, requested on the first call), 0 otherwise or where the
 * build has no AMX path. */
int a4w4_fast_amx_permitted(void);

/* The table for a path (AUTO resolved first), or NULL when a4w4_fast_isa_supported(isa)
 * is 0. */
const a4w4_fast_kernels *a4w4_fast_kernels_for(a4w4_fast_isa isa);

/* The fast driver with an explicit table (tests hand it wrapped tables, e.g. a mutant).
 * ordered == 0: exact; else ordered(S). Arguments, outputs and errors as
 * a4w4_gemm_exact_fast_ex / a4w4_gemm_ordered_fast_ex; stats may be NULL. */
int a4w4_gemm_fast_run(const a4w4_fast_kernels *k, int ordered, unsigned S, const uint8_t *a_fp4,
                       const uint8_t *a_scale, const uint8_t *w_fp4, const uint8_t *w_scale,
                       size_t M, size_t N, size_t K, uint16_t *y_bf16, float *y_f32,
                       unsigned threads, a4w4_fast_stats *stats);

/* The fast driver for a tree contract (contracts §4.2) with an explicit table: tree must be
 * a4w4_tree_fast_eligible and apply to K; otherwise as a4w4_gemm_fast_run. */
int a4w4_gemm_fast_run_tree(const a4w4_fast_kernels *k, const a4w4_tree *tree,
                            const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                            float *y_f32, unsigned threads, a4w4_fast_stats *stats);

/* ---- the tree reducer (a4w4_tree_fast.c) ---------------------------------------------- */

/* A tree and its splits over K: starts[0..nsplits] (a4w4_tree_splits). */
typedef struct {
    const a4w4_tree *t;
    const size_t *starts;
    size_t nsplits;
} a4w4_fast_tree_plan;

/* Per-thread scratch of the reducer for tiles of mr rows; NULL when out of memory. */
typedef struct a4w4_fast_tree_scratch a4w4_fast_tree_scratch;
a4w4_fast_tree_scratch *a4w4_fast_tree_scratch_new(unsigned mr);
void a4w4_fast_tree_scratch_free(a4w4_fast_tree_scratch *s);

/* The accumulator values acc[r * 16 + l] of the tile's outputs under plan's tree (one
 * a4w4_tree_fast_eligible takes) from kt->blocks (leaf=32) or the tile's decoded operands, as
 * a4w4_dot_tree computes them; redo[r * 16 + l] = 1 where a fused node of prec=0 or a fused
 * leaf could not be decided in doubles (the caller recomputes those outputs with a4w4_dot_tree). NaN-scale rows
 * and lanes are the caller's to override. contracts §4.2. */
void a4w4_fast_tree_tile(const a4w4_fast_kernels *kt, const a4w4_fast_tile *tile,
                         const a4w4_fast_tree_plan *plan, a4w4_fast_tree_scratch *sc, float *acc,
                         uint8_t *redo);

/* ---- shared pieces (a4w4_gemm_fast_pack.c, a4w4_gemm_fast_round.c) ------------------- */

/* Scan one row's scales: code[b] = sanitized code, *lo / *hi the smallest / largest code
 * over blocks with a nonzero element and a finite scale (both 0 when none); returns bit 0 =
 * the row has such a block, bit 1 = the row has a NaN-scale block. code[b] for all-zero and
 * NaN blocks is *lo. */
unsigned a4w4_fast_scan_row(const uint8_t *fp4, const uint8_t *scale, size_t nb, uint8_t *code,
                            int32_t *lo, int32_t *hi);

/* Portable load_x: decode one X row (2 * e2m1 + 12 per element), then a4w4_fast_scan_row. */
unsigned a4w4_fast_load_x_portable(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                                   uint8_t *code, int32_t *lo, int32_t *hi);

/* Pack nrows rows of Y (nrows <= 16, missing lanes zero; fp4 [nrows, K/2], scale
 * [nrows, K/32]) into one panel of K/32 records; codes is scratch of K/32 bytes. lane_lo[l]
 * is lane l's smallest code (a4w4_fast_scan_row's *lo), *spread the largest hi - lo over the
 * lanes; lanes without a nonzero finite block (and missing ones) hold the smallest lane_lo of
 * the others in ey and lane_lo. Returns the lane masks: bits 0..15 lanes with a nonzero finite
 * block, bits 16..31 lanes with a NaN-scale block. */
uint32_t a4w4_fast_pack_panel(const uint8_t *fp4, const uint8_t *scale, size_t K, size_t nrows,
                              uint8_t *panel, uint8_t *codes, int32_t *lane_lo, int32_t *spread);

/* RNE of T * 2^e (|T| < 2^63) to bf16 bits and fp32; an exact zero gives +0. */
void a4w4_fast_round_i64(int64_t T, int e, uint16_t *bf16, float *f32);

/* a4w4_fast_round_i64 / a4w4_fast_round_limbs over a tile of mr rows x 16 lanes (the
 * round_window / round_general contracts above, scalar). */
void a4w4_fast_round_window_tile(unsigned mr, const int64_t *acc, const int32_t *xe,
                                 const int32_t *ye, uint16_t *bf16, float *f32);
void a4w4_fast_round_general_tile(unsigned mr, const int64_t *limbs, uint16_t *bf16, float *f32);

/* RNE of sum_q limbs[q * stride] * 2^(32q - 256), q < A4W4_FAST_LIMBS (each |limb| < 2^62),
 * to bf16 bits and fp32; an exact zero gives +0. */
void a4w4_fast_round_limbs(const int64_t *limbs, size_t stride, uint16_t *bf16, float *f32);

#endif
