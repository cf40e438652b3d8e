/* a4w4_gemm_fast_avxvnni.c — the AVX-VNNI path of the fast oracles (compiled with -mavx2
 * -mavxvnni; run only where the CPU has both): 256-bit vpdpbusd. Kernels in
 * a4w4_gemm_fast_avx2_impl.h. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX2__) && defined(__AVXVNNI__)
#include <immintrin.h>

#define FAST_DOT4(acc, x, y) _mm256_dpbusd_avx_epi32((acc), (x), (y))
#include "a4w4_gemm_fast_avx2_impl.h"

static const a4w4_fast_kernels table = {
    .name = "avxvnni",
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
