/* a4w4_gemm_fast_avxvnni.c — the AVX-VNNI path of the fast oracles (compiled with -mavx2
 * -mavxvnni; run only where the CPU has both): 256-bit vpdpbusd. Kernels in
 * a4w4_gemm_fast_avx2_impl.h. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX2__) && defined(__AVXVNNI__)
#include <immintrin.h>

#include "a4w4_gemm_fast_x86.h"

/* One X row's dots with the 16 lanes of a block record: vpdpbusd from the offset correction. */
static inline void row_dots(const uint8_t *rec, const uint8_t *x, __m256i d[2])
{
    A4W4_FAST_OPAQUE(rec);
    const uint8_t *nc = rec + A4W4_FAST_NCORR_OFF;
    d[0] = _mm256_load_si256((const __m256i *)(const void *)nc);
    d[1] = _mm256_load_si256((const __m256i *)(const void *)(nc + 32));
#pragma GCC unroll 8
    for (int ks = 0; ks < 8; ks++) {
        int32_t x4;
        memcpy(&x4, x + ks * 4, sizeof x4);
        __m256i xv = _mm256_set1_epi32(x4);
        d[0] = _mm256_dpbusd_avx_epi32(
            d[0], xv, _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64)));
        d[1] = _mm256_dpbusd_avx_epi32(
            d[1], xv, _mm256_load_si256((const __m256i *)(const void *)(rec + ks * 64 + 32)));
    }
}

#define A4W4_FAST_ROW_DOTS
#include "a4w4_gemm_fast_avx2_impl.h"

static const a4w4_fast_kernels table = {
    .name = "avxvnni",
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

const a4w4_fast_kernels *a4w4_fast_kernels_avxvnni(void)
{
    return &table;
}

#else

const a4w4_fast_kernels *a4w4_fast_kernels_avxvnni(void)
{
    return NULL;
}

#endif
