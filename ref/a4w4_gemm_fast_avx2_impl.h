/* a4w4_gemm_fast_avx2_impl.h — the 256-bit kernels of the fast oracles, included once by
 * a4w4_gemm_fast_avx2.c (vpmaddubsw + vpmaddwd) and once by a4w4_gemm_fast_avxvnni.c
 * (vpdpbusd), which define FAST_DOT4(acc, x_u8, y_s8): acc + the sums of four adjacent u8 x s8
 * products per int32 lane. Kernel contracts in a4w4_gemm_fast_kernels.h; contracts §4.1.
 * A panel's 16 lanes are two ymm; MR rows of X per tile. */
#ifndef FAST_DOT4
#error "define FAST_DOT4 before including a4w4_gemm_fast_avx2_impl.h"
#endif

#include "a4w4_gemm_fast_x86.h"

#define MR 4

/* Exact dots of block b for MR rows x 16 lanes (the offset correction is the start value). */
static inline void block_dots(const a4w4_fast_tile *t, size_t b, __m256i d[MR][2])
{
    const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
    const uint8_t *x = t->x + b * 32;
    __m256i n0 = _mm256_load_si256((const __m256i *)(const void *)(rec + A4W4_FAST_NCORR_OFF));
    __m256i n1 = _mm256_load_si256((const __m256i *)(const void *)(rec + A4W4_FAST_NCORR_OFF + 32));
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
        d[r][0] = n0;
        d[r][1] = n1;
    }
#pragma GCC unroll 8
    for (int ks = 0; ks < 8; ks++) {
        __m256i y0 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64));
        __m256i y1 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64 + 32));
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256i xv = _mm256_set1_epi32(a4w4_fast_x4(x + r * t->ldx + ks * 4));
            d[r][0] = FAST_DOT4(d[r][0], xv, y0);
            d[r][1] = FAST_DOT4(d[r][1], xv, y1);
        }
    }
}

static inline __m256i load_ey(const a4w4_fast_tile *t, size_t b, int h)
{
    const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF + h * 32;
    return _mm256_load_si256((const __m256i *)(const void *)rec);
}

static inline void flush_window(__m256i w[MR][2], int64_t *acc)
{
    for (int r = 0; r < MR; r++)
        for (int h = 0; h < 2; h++) {
            __m256i *a = (__m256i *)(void *)(acc + r * 16 + h * 8);
            __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(w[r][h]));
            __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(w[r][h], 1));
            _mm256_store_si256(a, _mm256_add_epi64(_mm256_load_si256(a), lo));
            _mm256_store_si256(a + 1, _mm256_add_epi64(_mm256_load_si256(a + 1), hi));
            w[r][h] = _mm256_setzero_si256();
        }
}

static void exact_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc)
{
    const __m256i yo0 = _mm256_loadu_si256((const __m256i *)(const void *)yoff);
    const __m256i yo1 = _mm256_loadu_si256((const __m256i *)(const void *)(yoff + 8));
    __m256i w[MR][2], d[MR][2];
    for (int r = 0; r < MR; r++)
        w[r][0] = w[r][1] = _mm256_setzero_si256();
    memset(acc, 0, MR * 16 * sizeof *acc);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        block_dots(t, b, d);
        __m256i ey0 = _mm256_add_epi32(load_ey(t, b, 0), yo0);
        __m256i ey1 = _mm256_add_epi32(load_ey(t, b, 1), yo1);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256i er = _mm256_set1_epi32(t->ex[r * t->lde + b] + xoff[r]);
            w[r][0] =
                _mm256_add_epi32(w[r][0], _mm256_sllv_epi32(d[r][0], _mm256_add_epi32(ey0, er)));
            w[r][1] =
                _mm256_add_epi32(w[r][1], _mm256_sllv_epi32(d[r][1], _mm256_add_epi32(ey1, er)));
        }
        if (--left == 0) {
            flush_window(w, acc);
            left = group;
        }
    }
    flush_window(w, acc);
}

/* Terms go to their limbs one lane at a time (no masked adds in AVX2). */
static void exact_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    __m256i d[MR][2];
    int32_t dots[MR][16], ey[16];
    memset(limbs, 0, MR * A4W4_FAST_LIMBS * 16 * sizeof *limbs);
    for (size_t b = 0; b < t->nb; b++) {
        block_dots(t, b, d);
        for (int r = 0; r < MR; r++)
            for (int h = 0; h < 2; h++)
                _mm256_storeu_si256((__m256i *)(void *)&dots[r][h * 8], d[r][h]);
        memcpy(ey, t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF, sizeof ey);
        for (int r = 0; r < MR; r++) {
            int32_t er = t->ex[r * t->lde + b];
            int64_t *L = limbs + r * A4W4_FAST_LIMBS * 16;
            for (int l = 0; l < 16; l++) {
                int32_t e = er + ey[l];
                if (dots[r][l])
                    L[(e >> 5) * 16 + l] += (int64_t)dots[r][l] * ((int64_t)1 << (e & 31));
            }
        }
    }
}

/* Four block values: dot * 2^(e - 256) exact in double, then one RNE rounding to fp32. */
static inline __m128 block_values4(__m128i dot, __m128i e)
{
    __m256i bits = _mm256_slli_epi64(
        _mm256_add_epi64(_mm256_cvtepi32_epi64(e), _mm256_set1_epi64x(1023 - 256)), 52);
    return _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(dot), _mm256_castsi256_pd(bits)));
}

static inline __m256 block_values8(__m256i dot, __m256i e)
{
    __m128 lo = block_values4(_mm256_castsi256_si128(dot), _mm256_castsi256_si128(e));
    __m128 hi = block_values4(_mm256_extracti128_si256(dot, 1), _mm256_extracti128_si256(e, 1));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

static void ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    __m256 tot[MR][2], part[MR][2];
    __m256i d[MR][2];
    for (int r = 0; r < MR; r++)
        tot[r][0] = tot[r][1] = _mm256_setzero_ps();
    for (size_t b0 = 0; b0 < t->nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < t->nb ? b0 + per_blocks : t->nb;
        for (int r = 0; r < MR; r++)
            part[r][0] = part[r][1] = _mm256_setzero_ps();
        for (size_t b = b0; b < b1; b++) {
            block_dots(t, b, d);
            __m256i ey0 = load_ey(t, b, 0), ey1 = load_ey(t, b, 1);
#pragma GCC unroll 4
            for (int r = 0; r < MR; r++) {
                __m256i er = _mm256_set1_epi32(t->ex[r * t->lde + b]);
                part[r][0] =
                    _mm256_add_ps(part[r][0], block_values8(d[r][0], _mm256_add_epi32(ey0, er)));
                part[r][1] =
                    _mm256_add_ps(part[r][1], block_values8(d[r][1], _mm256_add_epi32(ey1, er)));
            }
        }
        for (int r = 0; r < MR; r++)
            for (int h = 0; h < 2; h++)
                tot[r][h] = _mm256_add_ps(tot[r][h], part[r][h]);
    }
    for (int r = 0; r < MR; r++)
        for (int h = 0; h < 2; h++)
            _mm256_store_ps(total + r * 16 + h * 8, tot[r][h]);
}

static void blocks(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v)
{
    __m256i d[MR][2];
    for (size_t b = b0; b < b1; b++) {
        block_dots(t, b, d);
        __m256i ey0 = load_ey(t, b, 0), ey1 = load_ey(t, b, 1);
        float *out = v + (b - b0) * MR * 16;
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256i er = _mm256_set1_epi32(t->ex[r * t->lde + b]);
            _mm256_storeu_ps(out + r * 16, block_values8(d[r][0], _mm256_add_epi32(ey0, er)));
            _mm256_storeu_ps(out + r * 16 + 8, block_values8(d[r][1], _mm256_add_epi32(ey1, er)));
        }
    }
}

static void round_window(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32)
{
    a4w4_fast_round_window_tile(MR, acc, xe, ye, bf16, f32);
}

static void round_general(const int64_t *limbs, uint16_t *bf16, float *f32)
{
    a4w4_fast_round_general_tile(MR, limbs, bf16, f32);
}
