/* cpu_sut_plain.h — the CPU systems under test as they were before the tiled form of
 * harness/backends/cpu_sut.c: one output at a time, every byte through the layout maps,
 * ldexpf for each block value (contracts §4.1 ordered(1)). Kept as the plain reference that
 * tests/harness/backends/test_cpu_sut.c holds the fast form bit-equal to; static, include from one
 * test. */
#ifndef A4W4_CPU_SUT_PLAIN_H
#define A4W4_CPU_SUT_PLAIN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"

/* Twice the E2M1 value of each code (contracts §1 table), signed. */
static const int8_t plain_e2m1_twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* fp32 block value isum * 2^(sa+sb-256), one rounding (ldexpf scales exactly, rounding once
 * on underflow/overflow). */
static float plain_block_to_f32(int isum, unsigned sa, unsigned sb)
{
    return ldexpf((float)isum, (int)(sa + sb) - 256);
}

static uint16_t plain_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static size_t plain_pick(const size_t *list, size_t i)
{
    return list ? list[i] : i;
}

static int plain_cpu_asm_gemm(const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                      const uint8_t *w_fp4_shuffled, const uint8_t *w_scale_swizzled, size_t M,
                      size_t N, size_t K, const size_t *rows, size_t nrows, const size_t *cols,
                      size_t ncols, uint16_t *y)
{
    if (!a_fp4 || !a_scale_shuffled || !w_fp4_shuffled || !w_scale_swizzled || !y || !M || !N ||
        !K || K % 32)
        return A4W4_EINVAL;
    size_t nb = K / 32;
    if (!a4w4_preshuffle_supported(N, K) || !a4w4_scale_swizzle_supported(2, N, nb))
        return A4W4_EUNSUPPORTED;
    if (!rows)
        nrows = M;
    if (!cols)
        ncols = N;
    for (size_t i = 0; i < nrows; i++) {
        size_t m = plain_pick(rows, i);
        if (m >= M)
            return A4W4_EINVAL;
        const uint8_t *arow = a_fp4 + m * (K / 2);
        for (size_t j = 0; j < ncols; j++) {
            size_t n = plain_pick(cols, j);
            if (n >= N)
                return A4W4_EINVAL;
            float acc = 0.0f;
            int nan = 0;
            for (size_t b = 0; b < nb; b++) {
                unsigned sa = a_scale_shuffled[a4w4_act_scale_shuffle_index(M, nb, m, b)];
                unsigned sb = w_scale_swizzled[a4w4_scale_swizzle_index(N, nb, n, b)];
                if (sa == 0xFF || sb == 0xFF)
                    nan = 1;
                int isum = 0;
                for (size_t kb = b * 16; kb < b * 16 + 16; kb++) {
                    uint8_t av = arow[kb];
                    uint8_t wv = w_fp4_shuffled[a4w4_preshuffle_index(N, K, n, kb)];
                    isum += plain_e2m1_twice[av & 15] * plain_e2m1_twice[wv & 15] +
                            plain_e2m1_twice[av >> 4] * plain_e2m1_twice[wv >> 4];
                }
                acc += plain_block_to_f32(isum, sa, sb);
            }
            y[i * ncols + j] = nan ? 0x7FC0 : plain_to_bf16(acc);
        }
    }
    return A4W4_OK;
}

static int plain_cpu_fallback_gemm(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K,
                           const size_t *rows, size_t nrows, const size_t *cols, size_t ncols,
                           uint16_t *y)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !y || !M || !N || !K || K % 32)
        return A4W4_EINVAL;
    size_t nb = K / 32;
    if (!rows)
        nrows = M;
    if (!cols)
        ncols = N;
    for (size_t i = 0; i < nrows; i++) {
        size_t m = plain_pick(rows, i);
        if (m >= M)
            return A4W4_EINVAL;
        for (size_t j = 0; j < ncols; j++) {
            size_t n = plain_pick(cols, j);
            if (n >= N)
                return A4W4_EINVAL;
            const uint8_t *ar = a_fp4 + m * (K / 2), *wr = w_fp4 + n * (K / 2);
            float acc = 0.0f;
            int nan = 0;
            for (size_t b = 0; b < nb; b++) {
                unsigned sa = a_scale[m * nb + b], sb = w_scale[n * nb + b];
                if (sa == 0xFF || sb == 0xFF)
                    nan = 1;
                int isum = 0;
                for (size_t k = b * 32; k < b * 32 + 32; k++)
                    isum += plain_e2m1_twice[a4w4_fp4_get(ar, k)] * plain_e2m1_twice[a4w4_fp4_get(wr, k)];
                acc += plain_block_to_f32(isum, sa, sb);
            }
            y[i * ncols + j] = nan ? 0x7FC0 : plain_to_bf16(acc);
        }
    }
    return A4W4_OK;
}

#endif
