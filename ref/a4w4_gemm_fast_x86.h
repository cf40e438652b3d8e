/* a4w4_gemm_fast_x86.h — SIMD pieces shared by the x86 paths of the fast oracles (included
 * only by files compiled with at least -mssse3; layouts in a4w4_gemm_fast_kernels.h). */
#ifndef A4W4_GEMM_FAST_X86_H
#define A4W4_GEMM_FAST_X86_H

#include <immintrin.h>
#include <string.h>

#include "a4w4_gemm_fast_kernels.h"

/* One X row: K/2 fp4x2 bytes -> K bytes 2 * e2m1 + 12 (contracts §1: the low nibble is the
 * even element), 16 source bytes at a time with a vpshufb table. K % 32 == 0. */
static inline void a4w4_fast_decode_x_ssse3(const uint8_t *fp4, size_t K, uint8_t *out)
{
    const __m128i lut = _mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
    const __m128i nib = _mm_set1_epi8(0x0F);
    for (size_t i = 0; i < K / 2; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(fp4 + i));
        __m128i lo = _mm_shuffle_epi8(lut, _mm_and_si128(v, nib));
        __m128i hi = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(v, 4), nib));
        _mm_storeu_si128((__m128i *)(void *)(out + 2 * i), _mm_unpacklo_epi8(lo, hi));
        _mm_storeu_si128((__m128i *)(void *)(out + 2 * i + 16), _mm_unpackhi_epi8(lo, hi));
    }
}

#if defined(__AVX2__)
/* Bit b of bits -> byte b of the result, 0xFF where set (32 bits -> 32 bytes). */
static inline __m256i a4w4_fast_bits_to_bytes(uint32_t bits)
{
    const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                          2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)bits), pick);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

/* Decode 32 blocks' elements (16 fp4x2 bytes each) to out (2 * e2m1 + 12, 32 bytes a block);
 * returns bit b = block b has a nonzero element (a magnitude nibble != 0). */
static inline uint32_t a4w4_fast_decode32_avx2(const uint8_t *fp4, uint8_t *out)
{
    const __m256i lut = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0,
                                         12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
    const __m256i nib = _mm256_set1_epi8(0x0F), mag = _mm256_set1_epi8(0x77);
    uint32_t nz = 0;
    for (int i = 0; i < 16; i++) { /* two blocks a step */
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(fp4 + i * 32));
        __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, nib));
        __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        __m256i a = _mm256_unpacklo_epi8(lo, hi), b = _mm256_unpackhi_epi8(lo, hi);
        _mm256_storeu_si256((__m256i *)(void *)(out + i * 64), _mm256_permute2x128_si256(a, b, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(out + i * 64 + 32),
                            _mm256_permute2x128_si256(a, b, 0x31));
        uint32_t zero = (uint32_t)_mm256_movemask_epi8(
            _mm256_cmpeq_epi8(_mm256_and_si256(v, mag), _mm256_setzero_si256()));
        nz |= (uint32_t)((zero & 0xFFFFu) != 0xFFFFu) << (2 * i);
        nz |= (uint32_t)((zero >> 16) != 0xFFFFu) << (2 * i + 1);
    }
    return nz;
}

/* load_x for the 256-bit paths (kernel contract in a4w4_gemm_fast_kernels.h): the decode and
 * the scan of one X row in one pass, 32 blocks at a time (a4w4_fast_scan_row's rules: 0xFF
 * marks all-zero and NaN blocks until the row's smallest code is known), the blocks past the
 * last whole 32 through the 128-bit decode and a scalar scan. The same outputs as
 * a4w4_fast_load_x_portable (contracts §1 for the element codes). */
static inline unsigned a4w4_fast_load_x_avx2(const uint8_t *fp4, const uint8_t *scale, size_t K,
                                             uint8_t *out, uint8_t *code, int32_t *lo, int32_t *hi)
{
    size_t nb = K / 32, nb32 = nb / 32 * 32;
    const __m256i ff = _mm256_set1_epi8((char)0xFF);
    __m256i vlo = ff, vhi = _mm256_setzero_si256(), any = vhi, nan = vhi;
    for (size_t b0 = 0; b0 < nb32; b0 += 32) {
        __m256i nz = a4w4_fast_bits_to_bytes(a4w4_fast_decode32_avx2(fp4 + b0 * 16, out + b0 * 32));
        __m256i sc = _mm256_loadu_si256((const __m256i *)(const void *)(scale + b0));
        __m256i isnan = _mm256_cmpeq_epi8(sc, ff);
        __m256i valid = _mm256_andnot_si256(isnan, nz);
        __m256i c = _mm256_or_si256(_mm256_and_si256(valid, sc), _mm256_andnot_si256(valid, ff));
        _mm256_storeu_si256((__m256i *)(void *)(code + b0), c);
        vlo = _mm256_min_epu8(vlo, c);
        vhi = _mm256_max_epu8(vhi, _mm256_and_si256(valid, sc));
        any = _mm256_or_si256(any, valid);
        nan = _mm256_or_si256(nan, isnan);
    }
    uint8_t l8[32], h8[32];
    _mm256_storeu_si256((__m256i *)(void *)l8, vlo);
    _mm256_storeu_si256((__m256i *)(void *)h8, vhi);
    int32_t l = 255, h = 0;
    for (int i = 0; i < 32; i++) {
        l = l8[i] < l ? l8[i] : l;
        h = h8[i] > h ? h8[i] : h;
    }
    unsigned flags =
        (_mm256_movemask_epi8(any) ? 1u : 0u) | (_mm256_movemask_epi8(nan) ? 2u : 0u);
    if (nb32 < nb) /* the last blocks: 128-bit decode, scalar scan */
        a4w4_fast_decode_x_ssse3(fp4 + nb32 * 16, K - nb32 * 32, out + nb32 * 32);
    for (size_t b = nb32; b < nb; b++) {
        uint64_t u[2];
        memcpy(u, fp4 + b * 16, sizeof u);
        code[b] = 0xFF;
        if (scale[b] == 0xFF) {
            flags |= 2u;
        } else if ((u[0] | u[1]) & 0x7777777777777777ull) {
            flags |= 1u;
            code[b] = scale[b];
            l = scale[b] < l ? scale[b] : l;
            h = scale[b] > h ? scale[b] : h;
        }
    }
    if (!(flags & 1u))
        l = h = 0;
    /* all-zero and NaN blocks take the row's smallest code */
    const __m256i vl = _mm256_set1_epi8((char)l);
    for (size_t b0 = 0; b0 < nb32; b0 += 32) {
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(code + b0));
        c = _mm256_blendv_epi8(c, vl, _mm256_cmpeq_epi8(c, ff));
        _mm256_storeu_si256((__m256i *)(void *)(code + b0), c);
    }
    for (size_t b = nb32; b < nb; b++)
        if (code[b] == 0xFF)
            code[b] = (uint8_t)l;
    *lo = l;
    *hi = h;
    return flags;
}
#endif

/* Hide a pointer's value from the optimizer, so that loads through it are not merged with
 * the same loads of a neighbouring row (GCC and clang would hold all of a block's y vectors in
 * registers across the rows, spilling them). */
#define A4W4_FAST_OPAQUE(p) __asm__("" : "+r"(p))

/* Four consecutive X bytes as one int32, broadcast-ready. */
static inline int32_t a4w4_fast_x4(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The lane's sanitized scale code in a block record. */
static inline int32_t a4w4_fast_ey_lane(const uint8_t *rec, unsigned lane)
{
    int32_t v;
    memcpy(&v, rec + A4W4_FAST_EY_OFF + lane * sizeof v, sizeof v);
    return v;
}

#endif
