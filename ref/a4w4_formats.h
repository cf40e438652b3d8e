/* a4w4_formats.h — element and scale formats of OCP MXFP4 (contracts §1).
 *
 * E2M1: 4-bit element, codes 0..7 = {0, 0.5, 1, 1.5, 2, 3, 4, 6}, codes 8..15 their
 * negatives (8 is -0). E8M0: unsigned byte scale 2^(e-127); 0xFF is NaN; code 0 is
 * 2^-127 (OCP spec, AITER's torch e8m0_to_f32). fp4x2: two E2M1 codes per byte,
 * element 2i in the low nibble, element 2i+1 in the high nibble.
 * bf16/fp16 values travel as their raw uint16_t bit patterns. */
#ifndef A4W4_FORMATS_H
#define A4W4_FORMATS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Status codes returned by every ref/ function that can fail. ref/ prints nothing. */
typedef enum {
    A4W4_OK = 0,
    A4W4_EINVAL = -1,      /* a shape or argument breaks a rule (K % 32, M < 1, NULL) */
    A4W4_EUNSUPPORTED = -2,/* the layout rule does not hold for this shape (contracts §3) */
    A4W4_ENOMEM = -3       /* allocation failed */
} a4w4_status;

/* One short sentence naming the rule behind a status code (static storage). */
const char *a4w4_status_str(int status);

/* E2M1 code (low 4 bits used) -> its value as float, sign kept (code 8 -> -0.0f). contracts §1. */
float a4w4_e2m1_to_f32(uint8_t code);

/* E2M1 code (low 4 bits) -> twice its value as a signed integer in {0,±1,±2,±3,±4,±6,±8,±12}.
 * Exact integer form used by the GEMM oracles (contracts §4). */
int a4w4_e2m1_to_int2x(uint8_t code);

/* fp32 -> E2M1 code by round-to-nearest-even on the E2M1 grid, saturating to ±6, sign kept
 * (-0 and negative values that round to zero give code 8). NaN input gives code 7|sign
 * (unspecified by contracts §2 step 4; callers mark the block 0xFF). contracts §2 step 3. */
uint8_t a4w4_f32_to_e2m1(float q);

/* E8M0 code -> 2^(code-127) as float (code 0 -> 2^-127, fp32 bits 0x00400000;
 * 0xFF -> quiet NaN). contracts §1. */
float a4w4_e8m0_to_f32(uint8_t code);

/* fp32 -> bf16 bits, round-to-nearest-even; NaN -> quiet NaN with the sign kept. */
uint16_t a4w4_f32_to_bf16(float f);

/* 1 when bf16 bits h are a NaN (any sign, any payload: exponent all ones, mantissa not 0). */
static inline int a4w4_bf16_is_nan(uint16_t h) { return (h & 0x7FFFu) > 0x7F80u; }

/* ULP distance between two bf16 patterns on the ordered integer line (-0 and +0 one apart);
 * 0 for two NaNs, UINT_MAX for a NaN against a number. */
unsigned a4w4_bf16_ulp_distance(uint16_t a, uint16_t b);

/* bf16 bits -> fp32 (exact). */
float a4w4_bf16_to_f32(uint16_t h);

/* IEEE binary16 bits -> fp32 (exact, subnormals and Inf/NaN included). */
float a4w4_fp16_to_f32(uint16_t h);

/* Raw bit views of fp32. */
uint32_t a4w4_f32_bits(float f);
float a4w4_f32_from_bits(uint32_t u);

/* a4w4_f32_to_bf16 inline (the one rounding; the out-of-line function calls this): for the
 * generator's per-element loops. RNE, NaN quieted with its sign kept. contracts §1. */
static inline uint16_t a4w4_f32_to_bf16_inline(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* a4w4_e2m1_to_int2x inline (the one table; the out-of-line function calls this): for the
 * oracles' inner loops, which decode every element of every output's two rows. contracts §4. */
static inline int a4w4_e2m1_int2x_inline(uint8_t code)
{
    static const signed char int2x[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    return int2x[code & 15];
}

/* fp4x2 access: element k of a packed row (k even -> low nibble). */
static inline uint8_t a4w4_fp4_get(const uint8_t *row, size_t k)
{
    uint8_t b = row[k >> 1];
    return (k & 1) ? (uint8_t)(b >> 4) : (uint8_t)(b & 0x0F);
}

static inline void a4w4_fp4_set(uint8_t *row, size_t k, uint8_t code)
{
    uint8_t *b = &row[k >> 1];
    if (k & 1)
        *b = (uint8_t)((*b & 0x0F) | ((code & 0x0F) << 4));
    else
        *b = (uint8_t)((*b & 0xF0) | (code & 0x0F));
}

#endif
