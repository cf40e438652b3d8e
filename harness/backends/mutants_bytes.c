/* mutants_bytes.c — the selftest's mutants of bytes (mutants.h, mutants.c's table): layout
 * transforms and quantizers with one fault each, judged on the bytes they write (contracts §2,
 * §3). Like the GEMM mutants they reuse ref's building blocks apart from the injected fault. */
#include "mutants_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"

/* ---- activation-scale shuffle with the unpadded column stride (the AITER PR #2900 class) -------
 * Layout bytes. The quantizer fills the padded [rows256(M), cols8(K/32)] tensor's pad cells in
 * the right places (contracts §3.3), but writes the valid scales with the row-group stride of
 * the unpadded column count, floor((K/32) / 8) groups of 8 columns instead of ceil: right when
 * (K/32) % 8 == 0, and right for the first 32-row group always (its stride term is 0); every
 * later group lands 256 bytes per group too early, over its neighbour's cells. Caught by the
 * layout bytes on a case with (K/32) % 8 != 0 and M > 32. */
static size_t act_index_unpadded(size_t nb, size_t r, size_t c)
{
    size_t d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16, d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
    return ((((d0 * (nb / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1; /* nb / 8: the fault */
}

static int layouts_stride(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                          uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    (void)why;
    (void)whylen;
    size_t nb = nblk(d), M = d->M;
    int rc = A4W4_OK;
    if (wsh)
        rc = a4w4_preshuffle(d->w_fp4.data, d->N, d->K, wsh);
    if (rc == A4W4_OK && wsw)
        rc = a4w4_scale_swizzle(d->w_scale.data, d->N, nb, wsw);
    if (rc != A4W4_OK || !ash)
        return rc;
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    for (size_t r = 0; r < prow; r++) /* the pad cells, where they belong */
        for (size_t c = 0; c < pcol; c++)
            if (r >= M || c >= nb)
                ash[a4w4_act_scale_shuffle_index(M, nb, r, c)] = c >= nb ? d->col_fill : d->row_fill;
    for (size_t r = 0; r < M; r++)
        for (size_t c = 0; c < nb; c++)
            ash[act_index_unpadded(nb, r, c)] = d->a_scale.data[r * nb + c];
    return A4W4_OK;
}

/* ---- quantizer mutants ------------------------------------------------------------------------ */

typedef struct {
    int mode_for[A4W4_SCALE_MODE_COUNT]; /* scale mode actually used for each asked mode */
    int trunc;                           /* E2M1 by truncation toward zero instead of RNE */
    int nibble_swap;                     /* element 2i in the high nibble */
} quant_fault;

/* E2M1 code of q by truncation toward zero (the largest grid magnitude <= |q|, saturating at
 * 6), sign kept as RNE keeps it (negative -> sign bit, also for zero). */
static uint8_t e2m1_trunc(float q)
{
    static const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    uint8_t sign = signbit(q) ? 8 : 0;
    float a = fabsf(q);
    if (a != a)
        return (uint8_t)(7 | sign);
    uint8_t c = 0;
    for (uint8_t i = 0; i < 8; i++)
        if (grid[i] <= a)
            c = i;
    return (uint8_t)(c | sign);
}

/* Quantize bf16 x [rows, K] per 1x32 (contracts §2) with the faults of f; fp4 [rows, K/2] and
 * row-major scale [rows, K/32]. NaN/Inf blocks get scale 0xFF and codes 0. */
static int quant_faulty(const quant_fault *f, const uint16_t *x, size_t rows, size_t K, int mode,
                        uint8_t *fp4, uint8_t *scale, char *why, size_t whylen)
{
    if (mode < 0 || mode >= A4W4_SCALE_MODE_COUNT || K % 32) {
        snprintf(why, whylen, "mode %d or K %zu out of range", mode, K);
        return A4W4_EINVAL;
    }
    size_t nb = K / 32;
    for (size_t r = 0; r < rows; r++)
        for (size_t b = 0; b < nb; b++) {
            float v[32], amax = 0.0f;
            int special = 0;
            for (size_t k = 0; k < 32; k++) {
                v[k] = a4w4_bf16_to_f32(x[r * K + b * 32 + k]);
                if (isnan(v[k]) || isinf(v[k]))
                    special = 1;
                else if (fabsf(v[k]) > amax)
                    amax = fabsf(v[k]);
            }
            uint8_t s = special ? 0xFF : a4w4_scale_code(amax, (a4w4_scale_mode)f->mode_for[mode]);
            scale[r * nb + b] = s;
            uint8_t *out = fp4 + r * (K / 2) + b * 16;
            memset(out, 0, 16);
            if (special)
                continue;
            float sc = a4w4_e8m0_to_f32(s);
            for (size_t k = 0; k < 32; k++) {
                uint8_t c = f->trunc ? e2m1_trunc(v[k] / sc) : a4w4_f32_to_e2m1(v[k] / sc);
                a4w4_fp4_set(out, f->nibble_swap ? k ^ 1 : k, c);
            }
        }
    return A4W4_OK;
}

#define SAME_MODES {0, 1, 2, 3}
#define QUANT_MUTANT(fn, ...)                                                                 \
    static int fn(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4, \
                  uint8_t *scale, char *why, size_t whylen)                                   \
    {                                                                                         \
        (void)ctx;                                                                            \
        static const quant_fault f = __VA_ARGS__;                                             \
        return quant_faulty(&f, x, rows, K, mode, fp4, scale, why, whylen);                   \
    }

/* Nibble order swapped: the packer puts element 2i in the high nibble (the fp4x2 rule of docs/contracts.md
 * §1 is low nibble first). Codes and scales are otherwise right. */
QUANT_MUTANT(q_nibble, {SAME_MODES, 0, 1})
/* E2M1 by truncation toward zero (a float-to-int style conversion) instead of RNE. */
QUANT_MUTANT(q_trunc, {SAME_MODES, 1, 0})
/* Wrong scale mode, each only when asked for one mode (contracts §2 step 2), the others right:
 *   round_up asked -> ceil       the RoundUp formula with Ceil's divisor (amax/4, not amax/6);
 *   round_down asked -> round_up the mode argument ignored for round_down: AITER's default;
 *   ceil asked -> round_down     Ceil without its bump (exponent field only);
 *   even asked -> round_down     Even without its + 0x00200000 carry (bits masked directly). */
QUANT_MUTANT(q_mode_ru, {{A4W4_CEIL, 1, 2, 3}, 0, 0})
QUANT_MUTANT(q_mode_rd, {{0, A4W4_ROUND_UP, 2, 3}, 0, 0})
QUANT_MUTANT(q_mode_ce, {{0, 1, A4W4_ROUND_DOWN, 3}, 0, 0})
QUANT_MUTANT(q_mode_ev, {{0, 1, 2, A4W4_ROUND_DOWN}, 0, 0})

/* ---- layout mutants --------------------------------------------------------------------------- */

/* Weight preshuffle with k1 and n1 swapped: view (N/16, 16, Kb/32, 2, 16) permuted
 * (0, 2, 1, 3, 4) instead of contracts §3.1's (0, 2, 3, 1, 4): each 16-byte run still holds 16
 * consecutive K bytes of one row, but the two K halves of a 32-byte group are interleaved
 * per row instead of per 16-row block. */
static void preshuffle_k1n1(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    size_t Kb = K / 2;
    for (size_t n = 0; n < N; n++)
        for (size_t kb = 0; kb < Kb; kb++) {
            size_t n0 = n / 16, n1 = n % 16, k0 = kb / 32, k1 = (kb % 32) / 16, k2 = kb % 16;
            dst[(((n0 * (Kb / 32) + k0) * 16 + n1) * 2 + k1) * 16 + k2] = w[n * Kb + kb];
        }
}

/* Scale swizzle with axes d1 and d4 swapped: view (rows/32, 2, 16, cols/8, 2, 4) permuted
 * (0, 3, 5, 2, 1, 4) instead of contracts §3.2's (0, 3, 5, 2, 4, 1). Both axes have extent 2, so
 * the shape and every tile boundary stay right; only the two inner pairs trade places. Used
 * for the weight-scale swizzle and the activation-scale shuffle alike (one shared helper). */
static void swizzle_d1d4(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16;
            size_t d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
            dst[((((d0 * (cols / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d1) * 2 + d4] =
                src[r * cols + c];
        }
}

static int layouts_k1n1(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                        uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    (void)why;
    (void)whylen;
    size_t nb = nblk(d);
    int rc = A4W4_OK;
    if (wsh)
        preshuffle_k1n1(d->w_fp4.data, d->N, d->K, wsh);
    if (wsw)
        rc = a4w4_scale_swizzle(d->w_scale.data, d->N, nb, wsw);
    if (rc == A4W4_OK && ash)
        rc = a4w4_act_scale_shuffle(d->a_scale.data, d->M, nb, d->row_fill, d->col_fill, ash);
    return rc;
}

static int layouts_d1d4(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,
                        uint8_t *ash, char *why, size_t whylen)
{
    (void)ctx;
    size_t nb = nblk(d);
    int rc = A4W4_OK;
    if (wsh)
        rc = a4w4_preshuffle(d->w_fp4.data, d->N, d->K, wsh);
    if (wsw)
        swizzle_d1d4(d->w_scale.data, d->N, nb, wsw);
    if (rc == A4W4_OK && ash) {
        size_t prow = a4w4_act_scale_padded_rows(d->M), pcol = a4w4_act_scale_padded_cols(nb);
        uint8_t *pad = malloc(prow * pcol);
        if (!pad) {
            snprintf(why, whylen, "out of memory for a %zux%zu pad", prow, pcol);
            return A4W4_ENOMEM;
        }
        for (size_t r = 0; r < prow; r++)
            for (size_t c = 0; c < pcol; c++)
                pad[r * pcol + c] = c >= nb ? d->col_fill : r >= d->M ? d->row_fill
                                                                     : d->a_scale.data[r * nb + c];
        swizzle_d1d4(pad, prow, pcol, ash);
        free(pad);
    }
    return rc;
}

#define BYTES_MUTANT(var, nm, desc, field, fn)                                                 \
    const a4w4_backend_type var = {.name = nm, .what = desc, .contract = "bytes",              \
                                   .thread_safe = 1, .field = fn}

BYTES_MUTANT(a4w4_mut_k1n1, "mut-preshuffle-k1n1",
             "weight preshuffle with k1 and n1 swapped (layout bytes)", layouts, layouts_k1n1);
BYTES_MUTANT(a4w4_mut_d1d4, "mut-swizzle-d1d4",
             "scale swizzle with permutation axes d1 and d4 swapped (layout bytes)", layouts,
             layouts_d1d4);
BYTES_MUTANT(a4w4_mut_nibble, "mut-nibble-swap",
             "quantizer packs element 2i in the high nibble (quantizer bytes)", quantize,
             q_nibble);
BYTES_MUTANT(a4w4_mut_mode_ru, "mut-mode-round_up",
             "asked for round_up, quantizes in ceil (quantizer bytes)", quantize, q_mode_ru);
BYTES_MUTANT(a4w4_mut_mode_rd, "mut-mode-round_down",
             "asked for round_down, quantizes in round_up (quantizer bytes)", quantize,
             q_mode_rd);
BYTES_MUTANT(a4w4_mut_mode_ce, "mut-mode-ceil",
             "asked for ceil, quantizes in round_down (quantizer bytes)", quantize, q_mode_ce);
BYTES_MUTANT(a4w4_mut_mode_ev, "mut-mode-even",
             "asked for even, quantizes in round_down (quantizer bytes)", quantize, q_mode_ev);
BYTES_MUTANT(a4w4_mut_trunc, "mut-e2m1-trunc",
             "E2M1 rounding by truncation instead of RNE (quantizer bytes)", quantize,
             q_trunc);
BYTES_MUTANT(a4w4_mut_stride, "mut-act-scale-stride",
             "activation-scale shuffle written with the unpadded column stride (layout bytes, "
             "(K/32) % 8 != 0 and M > 32)", layouts, layouts_stride);
