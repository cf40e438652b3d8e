/* gt_kernel.h — the plumbing shared by the ground-truth kernels of tests/plugins/gt/: plugin
 * ABI glue (harness/backends/a4w4_plugin.h), E2M1 decoding, the leaf values, the bf16
 * rounding. Each gt_<order>.c is one GEMM with a known accumulation order (its contract text,
 * docs/contracts.md §4.2); this header holds no ordering at all.
 *
 * A kernel file defines GT_NAME and GT_CONTRACT, includes this header, and defines
 *     static uint16_t gt_dot(const gt_output *o);
 * the bf16 bits of one output from its two operand rows. The glue validates the call, decodes
 * each output's rows and writes y. Built with -DGT_MISDECLARED the library declares
 * "ordered(1)" instead of GT_CONTRACT (the same kernel lying about its order: the harness must
 * catch it). Like ref_plugin.c, nothing here comes from ref/ or harness/: only the ABI header,
 * so no kernel reuses the judge it is tested against. Build with -ffp-contract=off
 * -frounding-math (the round-toward-zero kernels change the rounding mode). */
#ifndef GT_KERNEL_H
#define GT_KERNEL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_plugin.h"

#if !defined(GT_NAME) || !defined(GT_CONTRACT)
#error "define GT_NAME and GT_CONTRACT before including gt_kernel.h"
#endif

#define GT_NAN_BF16 0x7FC0u

/* One output's operands: row m of A and row n of W, K elements, K/32 scales each, the same
 * rows decoded (twice each element's E2M1 value, decoded once per row and call: the kernels'
 * dots run over these), and a scratch of K/16 floats the kernel may use (leaf values). */
typedef struct {
    const uint8_t *a, *w;   /* K/2 fp4x2 bytes each */
    const int8_t *da, *dw;  /* K twice-values each (gt_elem of every k) */
    const uint8_t *sa, *sw; /* K/32 E8M0 each */
    size_t K;
    float *scratch;         /* K/16 floats */
    size_t M;               /* the call's M (a kernel whose order follows M's bucket) */
} gt_output;

static uint16_t gt_dot(const gt_output *o);

/* Twice the E2M1 value of a 4-bit code (contracts §1): sign bit 3, exponent bits 2..1 (bias
 * 1), mantissa bit 0. */
static int gt_e2m1_twice(unsigned code)
{
    unsigned e = (code >> 1) & 3u, m = code & 1u;
    int mag = e == 0 ? (int)m : (int)((2u + m) << (e - 1));
    return (code & 8u) ? -mag : mag;
}

/* Element k of a packed fp4x2 row, as twice its value. */
__attribute__((unused)) static int gt_elem(const uint8_t *row, size_t k)
{
    return gt_e2m1_twice(k % 2 ? row[k / 2] >> 4 : row[k / 2] & 15u);
}

/* 2^e for -256 <= e <= 254, exactly (a normal double built from its exponent bits; ldexp's
 * call cost more than the block's dot). */
__attribute__((unused)) static double gt_pow2(int e)
{
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The value of elements [k0, k0 + len) of one block (k0 and len inside one 32-block): the
 * exact dot times both block scales, rounded once to fp32 RNE. The dot is an integer below
 * 2^13 in units of 2^(sa+sw-256) (products of twice-values are 4 * a * b), so the double is
 * exact and the cast rounds once. */
__attribute__((unused)) static float gt_leaf(const gt_output *o, size_t k0, size_t len)
{
    int dot = 0; /* |dot| <= 32 * 12 * 12 */
    for (size_t k = k0; k < k0 + len; k++)
        dot += o->da[k] * o->dw[k];
    size_t b = k0 / 32;
    return (float)((double)dot * gt_pow2((int)o->sa[b] + (int)o->sw[b] - 256));
}

/* The rows idx[0..n) (0..n when idx is NULL) of a packed fp4x2 operand of K columns,
 * decoded to twice-values: out[i * K + k] = gt_elem(row idx[i], k). */
static void gt_decode_rows(const uint8_t *x, const size_t *idx, size_t n, size_t K, int8_t *out)
{
    int8_t lut[16];
    for (unsigned c = 0; c < 16; c++)
        lut[c] = (int8_t)gt_e2m1_twice(c);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *row = x + (idx ? idx[i] : i) * (K / 2);
        for (size_t k = 0; k < K / 2; k++) {
            out[i * K + 2 * k] = lut[row[k] & 15u];
            out[i * K + 2 * k + 1] = lut[row[k] >> 4];
        }
    }
}

/* 1 when a scale of either row is the NaN code 0xFF: the output must be NaN. */
static int gt_reads_nan(const gt_output *o)
{
    for (size_t b = 0; b < o->K / 32; b++)
        if (o->sa[b] == 0xFF || o->sw[b] == 0xFF)
            return 1;
    return 0;
}

/* fp32 -> bf16 bits, round to nearest even (NaN kept quiet). */
static uint16_t gt_bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static int gt_bad(const a4w4_plugin_gemm_args *a, const char *why)
{
    snprintf(a->msg, a->msglen, "%s (M=%zu N=%zu K=%zu)", why, a->M, a->N, a->K);
    return -1;
}

/* The columns of W decoded at a time: GT_WBLOCK rows of W (GT_WBLOCK * K bytes, in cache
 * while every row of A meets them) instead of all of W at once, whose fresh pages each
 * call's child faulted in (docs/testing.md "The test command", its page faults). Every
 * output is the same gt_dot of the same two rows: the block changes the order outputs are
 * computed in, none's value. */
#define GT_WBLOCK 64

/* Outputs y[i][j0 .. j0 + nb) of the call: W's rows cols[j0 ..] decoded into dw, A's rows
 * decoded in da (nrows x K). */
static void gt_block(const a4w4_plugin_gemm_args *a, size_t j0, size_t nb, const int8_t *da,
                     int8_t *dw, float *scratch)
{
    size_t kb = a->K / 32, half = a->K / 2;
    gt_decode_rows(a->cols ? a->w_fp4 : a->w_fp4 + j0 * half, a->cols ? a->cols + j0 : NULL, nb,
                   a->K, dw);
    for (size_t i = 0; i < a->nrows; i++) {
        size_t m = a->rows ? a->rows[i] : i;
        for (size_t j = j0; j < j0 + nb; j++) {
            size_t n = a->cols ? a->cols[j] : j;
            gt_output o = {a->a_fp4 + m * half, a->w_fp4 + n * half, da + i * a->K,
                           dw + (j - j0) * a->K, a->a_scale + m * kb, a->w_scale + n * kb, a->K,
                           scratch, a->M};
            a->y[i * a->ncols + j] = gt_reads_nan(&o) ? GT_NAN_BF16 : gt_dot(&o);
        }
    }
}

static int gt_gemm(void *state, const a4w4_plugin_gemm_args *a)
{
    (void)state;
    if (a->M == 0 || a->N == 0 || a->K == 0 || a->K % 32)
        return gt_bad(a, "need M, N, K >= 1 and K % 32 == 0");
    if (!a->a_fp4 || !a->a_scale || !a->w_fp4 || !a->w_scale || !a->y)
        return gt_bad(a, "a row-major operand or y is NULL");
    for (size_t i = 0; i < a->nrows; i++)
        if ((a->rows ? a->rows[i] : i) >= a->M)
            return gt_bad(a, "an output index is out of range");
    for (size_t j = 0; j < a->ncols; j++)
        if ((a->cols ? a->cols[j] : j) >= a->N)
            return gt_bad(a, "an output index is out of range");
    size_t wb = a->ncols < GT_WBLOCK ? a->ncols : GT_WBLOCK;
    float *scratch = malloc(a->K / 16 * sizeof *scratch);
    int8_t *da = malloc(a->nrows * a->K + 1), *dw = malloc(wb * a->K + 1);
    if (!scratch || !da || !dw) {
        free(scratch), free(da), free(dw);
        return gt_bad(a, "out of memory");
    }
    gt_decode_rows(a->a_fp4, a->rows, a->nrows, a->K, da);
    for (size_t j0 = 0; j0 < a->ncols; j0 += GT_WBLOCK)
        gt_block(a, j0, a->ncols - j0 < GT_WBLOCK ? a->ncols - j0 : GT_WBLOCK, da, dw, scratch);
    free(scratch), free(da), free(dw);
    return 0;
}

/* A kernel file may define GT_GEMM as its own entry point (state kept between calls, then
 * gt_gemm), declared here so that the info struct can name it. */
#ifdef GT_GEMM
static int GT_GEMM(void *state, const a4w4_plugin_gemm_args *a);
#else
#define GT_GEMM gt_gemm
#endif

#ifdef GT_MISDECLARED
static const a4w4_plugin_info gt_info = {A4W4_PLUGIN_ABI_VERSION, GT_NAME " declared ordered(1)",
                                         "ordered(1)", 0, NULL, GT_GEMM, NULL};
#else
static const a4w4_plugin_info gt_info = {A4W4_PLUGIN_ABI_VERSION, GT_NAME, GT_CONTRACT, 0, NULL,
                                         GT_GEMM, NULL};
#endif

A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void)
{
    return &gt_info;
}

#endif
