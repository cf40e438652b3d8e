/* a4w4_gemm_fast_avx512.c — the AVX512-VNNI path of the fast oracles (compiled with
 * -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni; run only where the CPU has them).
 * Kernel contracts in a4w4_gemm_fast_kernels.h; contracts §4.1. One zmm holds a panel's 16
 * lanes; MR rows of X are broadcast four bytes at a time into vpdpbusd. */
#include "a4w4_gemm_fast_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VNNI__)
#include "a4w4_gemm_fast_x86.h"

#define MR 8

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
            d[r] = _mm512_dpbusd_epi32(d[r], _mm512_set1_epi32(a4w4_fast_x4(x + r * t->ldx + ks * 4)),
                                       yv);
    }
}

static inline void flush_window(__m512i w[MR], int64_t *acc)
{
#pragma GCC unroll 8
    for (int r = 0; r < MR; r++) {
        __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(w[r]));
        __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(w[r], 1));
        _mm512_store_si512(acc + r * 16, _mm512_add_epi64(_mm512_load_si512(acc + r * 16), lo));
        _mm512_store_si512(acc + r * 16 + 8,
                           _mm512_add_epi64(_mm512_load_si512(acc + r * 16 + 8), hi));
        w[r] = _mm512_setzero_si512();
    }
}

static void exact_window(const a4w4_fast_tile *t, int32_t eoff, size_t group, int64_t *acc)
{
    __m512i w[MR], d[MR];
    for (int r = 0; r < MR; r++)
        w[r] = _mm512_setzero_si512();
    memset(acc, 0, MR * 16 * sizeof *acc);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        block_dots(t, b, d);
        __m512i ey = _mm512_load_si512(t->panel + b * A4W4_FAST_BLOCK_BYTES + A4W4_FAST_EY_OFF);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++) {
            __m512i s = _mm512_add_epi32(ey, _mm512_set1_epi32(t->ex[r * t->lde + b] + eoff));
            w[r] = _mm512_add_epi32(w[r], _mm512_sllv_epi32(d[r], s));
        }
        if (--left == 0) {
            flush_window(w, acc);
            left = group;
        }
    }
    flush_window(w, acc);
}

/* Add one row's 16 terms dot << (e & 31) to limb e >> 5 of each lane: one masked add per
 * distinct limb among the lanes with a nonzero dot. */
static inline void add_general(int64_t *L, __m512i dot, __m512i ey, const uint8_t *rec,
                               int32_t ex)
{
    __mmask16 todo = _mm512_test_epi32_mask(dot, dot);
    if (!todo)
        return;
    __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(ex));
    __m512i q = _mm512_srli_epi32(e, 5), r = _mm512_and_si512(e, _mm512_set1_epi32(31));
    __m512i vlo = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(dot)),
                                    _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r)));
    __m512i vhi = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(dot, 1)),
                                    _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r, 1)));
    do {
        unsigned lane = (unsigned)__builtin_ctz(todo);
        int32_t qq = (ex + a4w4_fast_ey_lane(rec, lane)) >> 5;
        __mmask16 k = _mm512_mask_cmpeq_epi32_mask(todo, q, _mm512_set1_epi32(qq));
        int64_t *p = L + qq * 16;
        __m512i lo = _mm512_load_si512(p), hi = _mm512_load_si512(p + 8);
        _mm512_store_si512(p, _mm512_mask_add_epi64(lo, (__mmask8)k, lo, vlo));
        _mm512_store_si512(p + 8, _mm512_mask_add_epi64(hi, (__mmask8)(k >> 8), hi, vhi));
        todo = (__mmask16)(todo & ~k);
    } while (todo);
}

static void exact_general(const a4w4_fast_tile *t, int64_t *limbs)
{
    __m512i d[MR];
    memset(limbs, 0, MR * A4W4_FAST_LIMBS * 16 * sizeof *limbs);
    for (size_t b = 0; b < t->nb; b++) {
        const uint8_t *rec = t->panel + b * A4W4_FAST_BLOCK_BYTES;
        block_dots(t, b, d);
        __m512i ey = _mm512_load_si512(rec + A4W4_FAST_EY_OFF);
#pragma GCC unroll 8
        for (int r = 0; r < MR; r++)
            add_general(limbs + r * A4W4_FAST_LIMBS * 16, d[r], ey, rec, t->ex[r * t->lde + b]);
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

static const a4w4_fast_kernels table = {
    "avx512vnni", MR, a4w4_fast_decode_x_ssse3, exact_window, exact_general, ordered,
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
