/* a4w4_quant.h — per-1x32 activation quantization, per_1x32_f4_quant (contracts §2). */
#ifndef A4W4_QUANT_H
#define A4W4_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_formats.h"

/* Scale rounding modes, contracts §2 step 2 (AITER names in brackets). */
typedef enum {
    A4W4_ROUND_UP = 0,   /* [RoundUp]  t = amax/6, exponent field, +1 if mantissa != 0 */
    A4W4_ROUND_DOWN = 1, /* [RoundDown] t = amax/4, exponent field (OCP floor) */
    A4W4_CEIL = 2,       /* [Ceil]     t = amax/4, round_up's bump rule */
    A4W4_EVEN = 3        /* [Even]     bits(amax)+0x00200000 masked, /4, exponent field */
} a4w4_scale_mode;

#define A4W4_SCALE_MODE_COUNT 4

/* "round_up", "round_down", "ceil", "even". */
const char *a4w4_scale_mode_name(a4w4_scale_mode mode);
/* Name -> mode; returns -1 for an unknown name. */
int a4w4_scale_mode_parse(const char *name);

/* Input element types a quantizer accepts; bf16/fp16 are widened to fp32 exactly. */
typedef enum { A4W4_IN_F32 = 0, A4W4_IN_BF16 = 1, A4W4_IN_FP16 = 2 } a4w4_in_dtype;

/* E8M0 scale code of one block from its fp32 amax (>= 0 or NaN/Inf). amax = 0 -> 0;
 * NaN/Inf amax -> 0xFF. contracts §2 step 2. */
uint8_t a4w4_scale_code(float amax, a4w4_scale_mode mode);

/* Quantize one 32-element block given its scale code: q = x / 2^(s-127) in fp32, then
 * E2M1 RNE (a4w4_f32_to_e2m1). Writes 16 fp4x2 bytes. contracts §2 step 3. */
void a4w4_quant_block(const float x[32], uint8_t s, uint8_t out[16]);

/* Quantize x [M, K] (row-major, element type `dtype`) per 1x32 block.
 * Outputs: x_fp4 [M, K/2] fp4x2 row-major; x_scale:
 *   shuffle == 0: [M, K/32] row-major E8M0;
 *   shuffle != 0: the §3.3 layout, a4w4_act_scale_padded_rows(M) *
 *                 a4w4_act_scale_padded_cols(K/32) bytes, pads filled 0x7F.
 * A block holding NaN or Inf gets scale 0xFF; its element codes are unspecified (contracts §2
 * step 4). Errors: A4W4_EINVAL when M == 0, K == 0, K % 32 != 0 or a pointer is NULL. */
int a4w4_quantize(const void *x, a4w4_in_dtype dtype, size_t M, size_t K, a4w4_scale_mode mode,
                  int shuffle, uint8_t *x_fp4, uint8_t *x_scale);

/* a4w4_quantize for bf16 input (dtype A4W4_IN_BF16, shuffle 0), faster: the same bytes.
 * x [M, K] bf16 bits row-major; x_fp4 [M, K/2] fp4x2 and x_scale [M, K/32] E8M0, row-major.
 * A NaN/Inf block's codes are the plain path's (contracts §2 step 4). Errors as
 * a4w4_quantize. Held equal to it over every bf16 value in every mode (a4w4_quant_fast.c). */
int a4w4_quantize_bf16_fast(const uint16_t *x, size_t M, size_t K, a4w4_scale_mode mode,
                            uint8_t *x_fp4, uint8_t *x_scale);

/* Dequantize fp4x2 [rows, K/2] with row-major scales [rows, K/32] to fp32 [rows, K]:
 * value = e2m1 * 2^(s-127) computed exactly (NaN for scale 0xFF). A4W4_EINVAL on bad K. */
int a4w4_dequantize(const uint8_t *fp4, const uint8_t *scale, size_t rows, size_t K, float *out);

#endif
