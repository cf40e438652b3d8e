/* a4w4_gemm_fast_avx2.c — the plain AVX2 path of the fast oracles (compiled with -mavx2; run
 * only where the CPU has AVX2): u8 x s8 products by vpmaddubsw (|pair sum| <= 576, never
 * saturating), pairs summed to int32 by vpmaddwd. Kernels in a4w4_gemm_fast_avx2_impl.h. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

static inline __m256i dot4_avx2(__m256i acc, __m256i x, __m256i y)
{
    __m256i pairs = _mm256_maddubs_epi16(x, y);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

#define FAST_DOT4(acc, x, y) dot4_avx2((acc), (x), (y))
#include "a4w4_gemm_fast_avx2_impl.h"

static const a4w4_fast_kernels table = {
    .name = "avx2",
    .mr = MR,
    .x_zero = A4W4_FAST_X_OFFSET,
    .load_x = a4w4_fast_load_x_ssse3,
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
