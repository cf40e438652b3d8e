/* a4w4_quant.c — per-1x32 quantization in the four scale modes (contracts §2). */
#include "a4w4_quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"

static const char *const mode_names[A4W4_SCALE_MODE_COUNT] = {"round_up", "round_down", "ceil",
                                                               "even"};

const char *a4w4_scale_mode_name(a4w4_scale_mode mode)
{
    return (unsigned)mode < A4W4_SCALE_MODE_COUNT ? mode_names[mode] : "unknown";
}

int a4w4_scale_mode_parse(const char *name)
{
    for (int i = 0; i < A4W4_SCALE_MODE_COUNT; i++)
        if (name && !strcmp(name, mode_names[i]))
            return i;
    return -1;
}

static uint8_t exp_field(float t)
{
    return (uint8_t)((a4w4_f32_bits(t) >> 23) & 0xFFu);
}

/* Exponent field, plus one when any mantissa bit is set, unless the field is 0xFF. */
static uint8_t exp_field_bumped(float t)
{
    uint32_t u = a4w4_f32_bits(t);
    uint8_t e = (uint8_t)((u >> 23) & 0xFFu);
    if (e != 0xFF && (u & 0x7FFFFFu))
        e++;
    return e;
}

uint8_t a4w4_scale_code(float amax, a4w4_scale_mode mode)
{
    if (isnan(amax) || isinf(amax))
        return 0xFF;
    if (amax == 0.0f)
        return 0;
    switch (mode) {
    case A4W4_ROUND_UP:
        return exp_field_bumped(amax / 6.0f);
    case A4W4_ROUND_DOWN:
        return exp_field(amax / 4.0f);
    case A4W4_CEIL:
        return exp_field_bumped(amax / 4.0f);
    case A4W4_EVEN: {
        uint32_t u = a4w4_f32_bits(amax) + 0x00200000u;
        u &= 0xFF800000u;
        return exp_field(a4w4_f32_from_bits(u) / 4.0f);
    }
    }
    return 0xFF;
}

void a4w4_quant_block(const float x[32], uint8_t s, uint8_t out[16])
{
    float scale = a4w4_e8m0_to_f32(s);
    memset(out, 0, 16);
    for (size_t k = 0; k < 32; k++)
        a4w4_fp4_set(out, k, a4w4_f32_to_e2m1(x[k] / scale));
}

static float load_elem(const void *x, a4w4_in_dtype dtype, size_t i)
{
    switch (dtype) {
    case A4W4_IN_BF16: return a4w4_bf16_to_f32(((const uint16_t *)x)[i]);
    case A4W4_IN_FP16: return a4w4_fp16_to_f32(((const uint16_t *)x)[i]);
    case A4W4_IN_F32: break;
    }
    return ((const float *)x)[i];
}

int a4w4_quantize(const void *x, a4w4_in_dtype dtype, size_t M, size_t K, a4w4_scale_mode mode,
                  int shuffle, uint8_t *x_fp4, uint8_t *x_scale)
{
    if (!x || !x_fp4 || !x_scale || M == 0 || K == 0 || K % 32 != 0 ||
        (unsigned)mode >= A4W4_SCALE_MODE_COUNT)
        return A4W4_EINVAL;
    size_t nb = K / 32;
    uint8_t *scale_rm = x_scale;
    if (shuffle) {
        scale_rm = malloc(M * nb);
        if (!scale_rm)
            return A4W4_ENOMEM;
    }
    for (size_t m = 0; m < M; m++) {
        for (size_t b = 0; b < nb; b++) {
            float blk[32];
            float amax = 0.0f;
            int special = 0;
            for (size_t k = 0; k < 32; k++) {
                blk[k] = load_elem(x, dtype, m * K + b * 32 + k);
                if (isnan(blk[k]) || isinf(blk[k]))
                    special = 1;
                else if (fabsf(blk[k]) > amax)
                    amax = fabsf(blk[k]);
            }
            /* contracts §2 step 4: a NaN/Inf block gets scale 0xFF. */
            uint8_t s = special ? 0xFF : a4w4_scale_code(amax, mode);
            scale_rm[m * nb + b] = s;
            a4w4_quant_block(blk, s, x_fp4 + m * (K / 2) + b * 16);
        }
    }
    if (shuffle) {
        int rc = a4w4_act_scale_shuffle(scale_rm, M, nb, A4W4_ACT_SCALE_FILL_DEFAULT,
                                        A4W4_ACT_SCALE_FILL_DEFAULT, x_scale);
        free(scale_rm);
        return rc;
    }
    return A4W4_OK;
}

int a4w4_dequantize(const uint8_t *fp4, const uint8_t *scale, size_t rows, size_t K, float *out)
{
    if (!fp4 || !scale || !out || K == 0 || K % 32 != 0)
        return A4W4_EINVAL;
    size_t nb = K / 32;
    for (size_t r = 0; r < rows; r++) {
        for (size_t k = 0; k < K; k++) {
            uint8_t s = scale[r * nb + k / 32];
            float v = a4w4_e2m1_to_f32(a4w4_fp4_get(fp4 + r * (K / 2), k));
            /* value * 2^(s-127) rounded once (exact unless it overflows fp32) */
            out[r * K + k] = s == 0xFF ? a4w4_e8m0_to_f32(0xFF)
                                       : (float)ldexp((double)v, (int)s - 127);
        }
    }
    return A4W4_OK;
}
