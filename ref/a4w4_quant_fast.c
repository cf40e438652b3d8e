/* a4w4_quant_fast.c — per-1x32 quantization of bf16 input, the same bytes as a4w4_quantize
 * (contracts §2) with integer amax and branch-free E2M1 rounding; held equal to the plain
 * quantizer over every bf16 value in every scale mode (tests/ref/test_quant_fast.c). */
#include "a4w4_quant.h"

#include <string.h>

static inline uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 2^(127 - s) as fp32 for s in 0..254 (s = 254: 2^-127, subnormal): every such power is exact,
 * so x * 2^(127-s) is the exact quotient x / 2^(s-127) rounded once, as the plain path's
 * division (contracts §2 step 3; s = 0 divides by 2^-127). */
static float inv_scale(uint8_t s)
{
    if (s == 0)
        return a4w4_f32_from_bits(0x7F000000u); /* 2^127 */
    if (s == 254)
        return a4w4_f32_from_bits(0x00400000u); /* 2^-127 */
    return a4w4_f32_from_bits((uint32_t)(254 - s) << 23);
}

/* E2M1 code of fp32 bits u (not NaN): a4w4_f32_to_e2m1's midpoint tests on the magnitude's
 * bits, whose integer order is the float order for non-negative non-NaN values; a tie goes to
 * the even code, ±Inf and beyond 5 saturate to 6, the sign is kept (contracts §2 step 3). */
static inline uint32_t e2m1_of_bits(uint32_t u)
{
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t m = (a > 0x3E800000u) + (a >= 0x3F400000u) + (a > 0x3FA00000u) +
                 (a >= 0x3FE00000u) + (a > 0x40200000u) + (a >= 0x40600000u) +
                 (a > 0x40A00000u); /* 0.25 0.75 1.25 1.75 2.5 3.5 5.0 */
    return ((u >> 28) & 8u) | m;
}

/* One block of 32 bf16 values with its finite, non-NaN scale code s (s != 0xFF). */
static void quant_block_bf16(const uint16_t x[32], uint8_t s, uint8_t out[16])
{
    float f = inv_scale(s);
    uint32_t c[32];
    for (int k = 0; k < 32; k++)
        c[k] = e2m1_of_bits(bits_of(float_of((uint32_t)x[k] << 16) * f));
    for (int k = 0; k < 16; k++)
        out[k] = (uint8_t)(c[2 * k] | (c[2 * k + 1] << 4));
}

/* The plain path for a block whose scale is 0xFF (NaN/Inf in it, or an even-mode amax whose
 * rounding overflows): its codes are unspecified by contract, kept equal to the plain ones. */
static void quant_block_plain(const uint16_t x[32], uint8_t s, uint8_t out[16])
{
    float blk[32];
    for (int k = 0; k < 32; k++)
        blk[k] = a4w4_bf16_to_f32(x[k]);
    a4w4_quant_block(blk, s, out);
}

int a4w4_quantize_bf16_fast(const uint16_t *x, size_t M, size_t K, a4w4_scale_mode mode,
                            uint8_t *x_fp4, uint8_t *x_scale)
{
    if (!x || !x_fp4 || !x_scale || M == 0 || K == 0 || K % 32 != 0 ||
        (unsigned)mode >= A4W4_SCALE_MODE_COUNT)
        return A4W4_EINVAL;
    size_t nb = K / 32;
    for (size_t i = 0; i < M * nb; i++) {
        const uint16_t *blk = x + i * 32;
        unsigned amax = 0; /* largest |x|'s bits: integer order is float order (not NaN) */
        for (int k = 0; k < 32; k++) {
            unsigned a = blk[k] & 0x7FFFu;
            amax = a > amax ? a : amax;
        }
        /* contracts §2 step 4: NaN/Inf (|bits| >= 0x7F80 is the largest) gives scale 0xFF */
        uint8_t s = amax >= 0x7F80u ? 0xFF : a4w4_scale_code(float_of(amax << 16), mode);
        x_scale[i] = s;
        if (s == 0xFF)
            quant_block_plain(blk, s, x_fp4 + i * 16);
        else
            quant_block_bf16(blk, s, x_fp4 + i * 16);
    }
    return A4W4_OK;
}
