/* a4w4_gemm_fast_avx512.c — the AVX512-VNNI path of the fast oracles (compiled with
 * -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512cd -mavx512vnni; run only where the CPU has
 * them). Kernel contracts in a4w4_gemm_fast_kernels.h; contracts §4.1. One zmm holds a panel's 16
 * lanes; MR rows of X are broadcast four bytes at a time into vpdpbusd. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) &&                      \
    defined(__AVX512CD__) && defined(__AVX512VNNI__)
#include "a4w4_gemm_fast_avx512_impl.h"

#define MR 8

/* X rows decoded to 2 * e2m1 + 12 (unsigned for vpdpbusd). */
static unsigned load_x(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                       uint8_t *code, int32_t *lo, int32_t *hi)
{
    const __m512i lut = _mm512_broadcast_i32x4(
        _mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
    return load_x_lut(fp4, scale, K, out, code, lo, hi, lut);
}

/* Exact dots of block b for MR rows x 16 lanes (the offset correction is the start value). */
static inline void block_dots(const a4w4_fast_tile *t, size_t b, __m512i d[MR])
{
    const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
    const uint8_t *x = t->x + b * 32;
    __m512i nc = _mm512_load_si512(rec + A4W4_FAST_NCORR_OFF);
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++)
        d[r] = nc;
#pragma GCC unroll 8
    for (int ks = 0; ks < 8; ks++) {
        __m512i yv = _mm512_load_si512(rec + ks * 64);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++)
            d[r] = _mm512_dpbusd_epi32(
                d[r], _mm512_set1_epi32(a4w4_fast_x4(x + r * t->ldx + ks * 4)), yv);
    }
}

static inline void flush_window(__m512i w[MR], int64_t *acc)
{
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++)
        flush_row(&w[r], acc + r * 16);
}

static void exact_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc)
{
    const __m512i yo = _mm512_loadu_si512(yoff);
    __m512i w[MR], d[MR];
    for (int r = 0; r < MR; r++)
        w[r] = _mm512_setzero_si512();
    memset(acc, 0, MR * 16 * sizeof *acc);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        prefetch_share(t, b);
        block_dots(t, b, d);
        __m512i ey = _mm512_add_epi32(
            _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF), yo);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i s = _mm512_add_epi32(ey, _mm512_set1_epi32(t->ex[r * t->lde + b] + xoff[r]));
            w[r] = _mm512_add_epi32(w[r], _mm512_sllv_epi32(d[r], s));
        }
        if (--left == 0) {
            flush_window(w, acc);
            left = group;
        }
    }
    flush_window(w, acc);
}

static void exact_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    __m512i d[MR];
    memset(limbs, 0, MR * A4W4_FAST_LIMBS * 16 * sizeof *limbs);
    for (size_t b = 0; b < t->nb; b++) {
        const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
        prefetch_share(t, b);
        block_dots(t, b, d);
        __m512i ey = _mm512_load_si512(rec + A4W4_FAST_EY_OFF);
        int32_t eref = (_mm512_reduce_add_epi32(ey) >> 4) - 16; /* the lanes' mean - 16 */
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++)
            add_general(limbs + r * A4W4_FAST_LIMBS * 16, d[r], ey, rec, t->ex[r * t->lde + b],
                        eref);
    }
}

/* Block values by vscalefps: dot * 2^(e - 256) with one RNE rounding to fp32 (subnormal
 * results and overflow to Inf included), the value the plain oracle rounds from a double. */
static void ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    __m512 tot[MR], part[MR];
    __m512i d[MR];
    for (int r = 0; r < MR; r++)
        tot[r] = _mm512_setzero_ps();
    for (size_t b0 = 0; b0 < t->nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < t->nb ? b0 + per_blocks : t->nb;
        for (int r = 0; r < MR; r++)
            part[r] = _mm512_setzero_ps();
        for (size_t b = b0; b < b1; b++) {
            prefetch_share(t, b);
            block_dots(t, b, d);
            __m512i ey = _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF);
#pragma GCC unroll 8
            for (int r = 0; r < MR; r++) {
                __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(t->ex[r * t->lde + b] - 256));
                __m512 v = _mm512_scalef_ps(_mm512_cvtepi32_ps(d[r]), _mm512_cvtepi32_ps(e));
                part[r] = _mm512_add_ps(part[r], v);
            }
        }
        for (int r = 0; r < MR; r++)
            tot[r] = _mm512_add_ps(tot[r], part[r]);
    }
    for (int r = 0; r < MR; r++)
        _mm512_store_ps(total + r * 16, tot[r]);
}

static void blocks(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v)
{
    __m512i d[MR];
    for (size_t b = b0; b < b1; b++) {
        prefetch_share(t, b);
        block_dots(t, b, d);
        __m512i ey = _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF);
        float *out = v + (b - b0) * MR * 16;
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(t->ex[r * t->lde + b] - 256));
            _mm512_storeu_ps(out + r * 16,
                             _mm512_scalef_ps(_mm512_cvtepi32_ps(d[r]), _mm512_cvtepi32_ps(e)));
        }
    }
}

static void round_window(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32)
{
    round_window_rows(MR, acc, xe, ye, bf16, f32);
}

static void round_general(const int64_t *limbs, uint16_t *bf16, float *f32)
{
    round_general_rows(MR, limbs, bf16, f32);
}

static const a4w4_fast_kernels table = {
    .name = "avx512vnni",
    .mr = MR,
    .x_zero = A4W4_FAST_X_OFFSET,
    .load_x = load_x,
    .exact_window = exact_window,
    .exact_general = exact_general,
    .ordered = ordered,
    .blocks = blocks,
    .round_window = round_window,
    .round_general = round_general,
};

const a4w4_fast_kernels *a4w4_fast_kernels_avx512vnni(void)
{
    return &table;
}

#else

const a4w4_fast_kernels *a4w4_fast_kernels_avx512vnni(void)
{
    return NULL;
}

#endif
