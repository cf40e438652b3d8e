/* a4w4_layout.h — the three byte layouts the ASM path consumes (contracts §3), each with its
 * inverse, in two independent forms: closed-form index maps (used by oracles, CPU
 * emulation and tests alike) and a generic view/permute engine (shape + permutation ->
 * strides) that tests hold equal to the closed forms.
 *
 * All layouts are pure byte permutations of U8 tensors; dst and src never alias. */
#ifndef A4W4_LAYOUT_H
#define A4W4_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_formats.h"

/* ---- 3.1 weight preshuffle, shuffle_weight(w, layout=(16,16)) ------------------------ */

/* 1 when the packed weight [N, K/2] can be preshuffled: N % 16 == 0, (K/2) % 32 == 0
 * (so K % 64 == 0), N >= 1, K >= 1. contracts §3.1. */
int a4w4_preshuffle_supported(size_t N, size_t K);

/* Destination byte offset of source byte (n, kb) of the packed weight, kb in [0, K/2).
 * Closed form of contracts §3.1; caller guarantees support. */
size_t a4w4_preshuffle_index(size_t N, size_t K, size_t n, size_t kb);

/* w [N, K/2] row-major -> dst [N*K/2] preshuffled. A4W4_EUNSUPPORTED when the rule fails,
 * A4W4_EINVAL on a NULL pointer. */
int a4w4_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst);
/* Inverse: preshuffled bytes -> w [N, K/2] row-major. Same error returns. */
int a4w4_unpreshuffle(const uint8_t *src, size_t N, size_t K, uint8_t *w);

/* ---- 3.2 weight-scale swizzle, _swizzle_asm_fp4_scale ------------------------------- */

/* 1 when a 2-D E8M0 tensor [rows, cols] can be swizzled: rows % 32 == 0, cols % 8 == 0,
 * both >= 1 (_asm_fp4_scale_swizzle_supported). ndim != 2 is unsupported. contracts §3.2. */
int a4w4_scale_swizzle_supported(int ndim, size_t rows, size_t cols);

/* Destination offset of source element (r, c) of [rows, cols]; caller guarantees support. */
size_t a4w4_scale_swizzle_index(size_t rows, size_t cols, size_t r, size_t c);

/* [rows, cols] row-major -> swizzled [rows*cols]. A4W4_EUNSUPPORTED when the rule fails,
 * A4W4_EINVAL on a NULL pointer. */
int a4w4_scale_swizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst);
/* Inverse: swizzled [rows*cols] -> [rows, cols] row-major. Same error returns. */
int a4w4_scale_unswizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst);

/* ---- 3.3 activation-scale pad + shuffle (_shuffle_asm_fp4_act_scale, shuffle_scale) -- */

/* The SGLang fill (E8M0 1.0) used for both axes by default and by every golden bundle. */
#define A4W4_ACT_SCALE_FILL_DEFAULT 0x7F

/* Padded shape of an activation scale [M, K/32]: rows round up to 256, cols to 8
 * (0 stays 0; 0 is also returned when the rounded value would overflow size_t). */
size_t a4w4_act_scale_padded_rows(size_t M);
size_t a4w4_act_scale_padded_cols(size_t cols);

/* Offset of element (r, c) of the padded [prow, pcol] tensor in the shuffled buffer
 * (= a4w4_scale_swizzle_index over the padded shape). */
size_t a4w4_act_scale_shuffle_index(size_t M, size_t cols, size_t r, size_t c);

/* x_scale [M, cols] row-major -> dst [prow * pcol] shuffled; pad rows (r >= M) filled with
 * row_fill, pad columns (c >= cols, any row) with col_fill. The corner cells (r >= M and
 * c >= cols) therefore take col_fill: a pad column is uniform from top to bottom, and the
 * column fill is the one a K-tail-reading kernel sees. A4W4_EINVAL when M or cols is 0 or
 * a pointer is NULL. contracts §3.3. */
int a4w4_act_scale_shuffle(const uint8_t *src, size_t M, size_t cols, uint8_t row_fill,
                           uint8_t col_fill, uint8_t *dst);
/* Inverse: shuffled buffer [prow * pcol] -> the valid [M, cols] row-major entries (pad
 * dropped). A4W4_EINVAL when M or cols is 0 or a pointer is NULL. */
int a4w4_act_scale_unshuffle(const uint8_t *src, size_t M, size_t cols, uint8_t *dst);

/* ---- generic view/permute engine -------------------------------------------------- */

#define A4W4_VIEW_MAX_DIMS 8

/* Treat src (contiguous, element size elem bytes) as a row-major view of `shape` (ndim
 * dims), permute its axes by `perm` (dst axis i = src axis perm[i], torch's permute),
 * and write the result contiguously to dst. Computed from strides only; independent of
 * the closed forms. Any elem >= 1 works (1, 2, 4 and 8 are the fast paths); a zero extent
 * writes nothing. A4W4_EINVAL on ndim outside 1..8, perm not a permutation, elem 0, a NULL
 * pointer, or a total size that overflows size_t. */
int a4w4_view_permute(const void *src, size_t elem, int ndim, const size_t *shape,
                      const int *perm, void *dst);

/* The three layouts through the engine (contracts §3 "As a view" lines); same shapes, fills
 * (corner cells take col_fill) and error returns as the closed forms above, plus
 * A4W4_ENOMEM when the act-scale pad buffer cannot be allocated. Preshuffle: view
 * (N/16, 16, Kb/32, 2, 16) permuted (0, 2, 3, 1, 4); swizzle: view (rows/32, 2, 16,
 * cols/8, 2, 4) permuted (0, 3, 5, 2, 4, 1); act scale: pad, then the swizzle view over
 * the padded shape. */
int a4w4_preshuffle_view(const uint8_t *w, size_t N, size_t K, uint8_t *dst);
int a4w4_scale_swizzle_view(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst);
int a4w4_act_scale_shuffle_view(const uint8_t *src, size_t M, size_t cols, uint8_t row_fill,
                                uint8_t col_fill, uint8_t *dst);

#endif
