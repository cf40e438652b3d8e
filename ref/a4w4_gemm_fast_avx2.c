/* a4w4_gemm_fast_avx2.c — the plain AVX2 path of the fast oracles (compiled with -mavx2; run
 * only where the CPU has AVX2): u8 x s8 products by vpmaddubsw, summed in int16 over the
 * block's 32 elements, then pairs to int32 by one vpmaddwd per block. Kernels in
 * a4w4_gemm_fast_avx2_impl.h. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include "a4w4_gemm_fast_x86.h"

/* One X row's dots with the 16 lanes of a block record. Each int16 lane of a vpmaddubsw sums
 * two products x * y with x in [0, 24] (2 * e2m1 + 12) and |y| <= 12 (2 * e2m1): |pair| <=
 * 576, never saturating; the eight steps' int16 sums hold 16 products, |sum| <= 4608 < 2^15;
 * vpmaddwd adds the lane's two int16 sums to int32, then the offset correction. */
static inline void row_dots(const uint8_t *rec, const uint8_t *x, __m256i d[2])
{
    A4W4_FAST_OPAQUE(rec);
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int ks = 0; ks < 8; ks++) {
        int32_t x4;
        memcpy(&x4, x + ks * 4, sizeof x4);
        __m256i xv = _mm256_set1_epi32(x4);
        __m256i y0 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64));
        __m256i y1 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64 + 32));
        s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(xv, y0));
        s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(xv, y1));
    }
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t *nc = rec + A4W4_FAST_NCORR_OFF;
    d[0] = _mm256_add_epi32(_mm256_madd_epi16(s0, ones),
                            _mm256_load_si256((const __m256i *)(const void *)nc));
    d[1] = _mm256_add_epi32(_mm256_madd_epi16(s1, ones),
                            _mm256_load_si256((const __m256i *)(const void *)(nc + 32)));
}

/* The dots of rows x[0..3] with the 16 lanes of block record rec, the four rows at once: each
 * step's two y vectors are loaded once for the four rows (eight int16 sums, two y vectors and
 * one broadcast: 11 of the 16 ymm), so a block costs 16 y loads and 32 x broadcasts for 64
 * vpmaddubsw instead of 64 and 32 (row_dots per row); the sums' bounds are row_dots'. */
static inline void rows_dots4(const uint8_t *rec, const uint8_t *const x[4], __m256i d[4][2])
{
    __m256i s[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++)
        s[r][0] = s[r][1] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int ks = 0; ks < 8; ks++) {
        A4W4_FAST_OPAQUE(rec); /* one step's loads at a time: no spills of hoisted ones */
        __m256i y0 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64));
        __m256i y1 = _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64 + 32));
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
            __m256i xv = _mm256_set1_epi32(a4w4_fast_x4(x[r] + ks * 4));
            s[r][0] = _mm256_add_epi16(s[r][0], _mm256_maddubs_epi16(xv, y0));
            s[r][1] = _mm256_add_epi16(s[r][1], _mm256_maddubs_epi16(xv, y1));
            /* each sum in its register now: GCC's reassociation would otherwise compute a
             * row's eight products first and spill them */
            __asm__("" : "+x"(s[r][0]), "+x"(s[r][1]));
        }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t *nc = rec + A4W4_FAST_NCORR_OFF;
    const __m256i c0 = _mm256_load_si256((const __m256i *)(const void *)nc);
    const __m256i c1 = _mm256_load_si256((const __m256i *)(const void *)(nc + 32));
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        d[r][0] = _mm256_add_epi32(_mm256_madd_epi16(s[r][0], ones), c0);
        d[r][1] = _mm256_add_epi32(_mm256_madd_epi16(s[r][1], ones), c1);
    }
}

#define A4W4_FAST_ROW_DOTS
#define A4W4_FAST_ROWS_DOTS4 rows_dots4
#include "a4w4_gemm_fast_avx2_impl.h"

static const a4w4_fast_kernels table = {
    .name = "avx2",
    .mr = MR,
    .x_zero = A4W4_FAST_X_OFFSET,
    .load_x = a4w4_fast_load_x_avx2,
    .exact_window = exact_window,
    .exact_general = exact_general,
    .ordered = ordered,
    .blocks = blocks,
    .round_window = round_window,
    .round_general = round_general,
};

const a4w4_fast_kernels *a4w4_fast_kernels_avx2(void)
{
    return &table;
}

#else

const a4w4_fast_kernels *a4w4_fast_kernels_avx2(void)
{
    return NULL;
}

#endif
