/* a4w4_formats.c — element and scale formats (contracts §1). */
#include "a4w4_formats.h"

#include <limits.h>
#include <math.h>
#include <string.h>

const char *a4w4_status_str(int status)
{
    switch (status) {
    case A4W4_OK: return "ok";
    case A4W4_EINVAL: return "invalid shape or argument (K must be a positive multiple of 32; M, N >= 1)";
    case A4W4_EUNSUPPORTED: return "layout rule not met for this shape (contracts §3)";
    case A4W4_ENOMEM: return "out of memory";
    default: return "unknown status";
    }
}

uint32_t a4w4_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float a4w4_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static const float e2m1_values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

float a4w4_e2m1_to_f32(uint8_t code)
{
    float v = e2m1_values[code & 7];
    return (code & 8) ? -v : v;
}

int a4w4_e2m1_to_int2x(uint8_t code)
{
    return a4w4_e2m1_int2x_inline(code);
}

uint8_t a4w4_f32_to_e2m1(float q)
{
    uint8_t sign = signbit(q) ? 8 : 0;
    float a = fabsf(q);
    uint8_t m;
    if (isnan(q))
        return (uint8_t)(sign | 7);
    /* Midpoints of the E2M1 grid; at a tie the even code (mantissa bit 0) wins. */
    if (a <= 0.25f)
        m = 0;              /* tie 0.25 -> 0 (even) */
    else if (a < 0.75f)
        m = 1;              /* 0.5; tie 0.75 -> 1.0 */
    else if (a <= 1.25f)
        m = 2;              /* 1.0; tie 1.25 -> 1.0 */
    else if (a < 1.75f)
        m = 3;              /* 1.5; tie 1.75 -> 2.0 */
    else if (a <= 2.5f)
        m = 4;              /* 2.0; tie 2.5 -> 2.0 */
    else if (a < 3.5f)
        m = 5;              /* 3.0; tie 3.5 -> 4.0 */
    else if (a <= 5.0f)
        m = 6;              /* 4.0; tie 5.0 -> 4.0 */
    else
        m = 7;              /* 6.0, saturating (Inf too) */
    return (uint8_t)(sign | m);
}

float a4w4_e8m0_to_f32(uint8_t code)
{
    if (code == 0xFF)
        return a4w4_f32_from_bits(0x7FC00000u);
    if (code == 0)
        return a4w4_f32_from_bits(0x00400000u); /* 2^-127, subnormal */
    return a4w4_f32_from_bits((uint32_t)code << 23);
}

uint16_t a4w4_f32_to_bf16(float f)
{
    return a4w4_f32_to_bf16_inline(f);
}

float a4w4_bf16_to_f32(uint16_t h)
{
    return a4w4_f32_from_bits((uint32_t)h << 16);
}

float a4w4_fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    uint32_t u;
    if (exp == 0x1F) {
        u = sign | 0x7F800000u | (man << 13);
    } else if (exp != 0) {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        u = sign;
    } else {
        /* subnormal: man * 2^-24, normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        man &= 0x3FFu;
        u = sign | ((uint32_t)(112 - e) << 23) | (man << 13);
    }
    return a4w4_f32_from_bits(u);
}

unsigned a4w4_bf16_ulp_distance(uint16_t a, uint16_t b)
{
    if (a4w4_bf16_is_nan(a) || a4w4_bf16_is_nan(b))
        return (a4w4_bf16_is_nan(a) && a4w4_bf16_is_nan(b)) ? 0 : UINT_MAX;
    /* map sign-magnitude to a monotonic integer line (-0 and +0 one apart) */
    int ia = (a & 0x8000u) ? -(int)(a & 0x7FFFu) - 1 : (int)a;
    int ib = (b & 0x8000u) ? -(int)(b & 0x7FFFu) - 1 : (int)b;
    return (unsigned)(ia > ib ? ia - ib : ib - ia);
}
