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

/* load_x for the 256-bit paths: the vpshufb decode, then the portable scan. */
static inline unsigned a4w4_fast_load_x_ssse3(const uint8_t *fp4, const uint8_t *scale, size_t K,
                                              uint8_t *out, uint8_t *code, int32_t *lo, int32_t *hi)
{
    a4w4_fast_decode_x_ssse3(fp4, K, out);
    return a4w4_fast_scan_row(fp4, scale, K / 32, code, lo, hi);
}

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
