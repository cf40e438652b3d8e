/* a4w4_gemm_fast_avx2_impl.h — the 256-bit kernels of the fast oracles, included once by
 * a4w4_gemm_fast_avx2.c (vpmaddubsw + vpmaddwd) and once by a4w4_gemm_fast_avxvnni.c
 * (vpdpbusd), which define row_dots(rec, x, d): d[h] = the exact dots of one X row (x, its
 * block's 32 decoded bytes) with lanes 8h..8h+7 of block record rec, the offset correction
 * included. Kernel contracts in a4w4_gemm_fast_kernels.h; contracts §4.1. A panel's 16 lanes
 * are two ymm; MR rows of X per tile, one row's dots at a time (the y bytes are read from L1
 * per row, leaving the registers to the rows' sums). */
#ifndef A4W4_FAST_ROW_DOTS
#error "define row_dots and A4W4_FAST_ROW_DOTS before including a4w4_gemm_fast_avx2_impl.h"
#endif

#include "a4w4_gemm_fast_x86.h"

#define MR 4

/* Block b's record and row r's decoded bytes of it. */
static inline const uint8_t *block_rec(const a4w4_fast_tile *t, size_t b)
{
    return t->panel + b * A4W4_FAST_BLOCK_BYTES;
}

static inline const uint8_t *block_x(const a4w4_fast_tile *t, int r, size_t b)
{
    return t->x + r * t->ldx + b * 32;
}

/* Exact dots of block b for MR rows x 16 lanes: the MR rows at once where the includer
 * defines A4W4_FAST_ROWS_DOTS4 (rows, x[MR], d), else one row_dots per row. */
static inline void block_dots(const a4w4_fast_tile *t, size_t b, __m256i d[MR][2])
{
#ifdef A4W4_FAST_ROWS_DOTS4
    const uint8_t *x[MR];
    for (int r = 0; r < MR; r++)
        x[r] = block_x(t, r, b);
    A4W4_FAST_ROWS_DOTS4(block_rec(t, b), x, d);
#else
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
        row_dots(block_rec(t, b), block_x(t, r, b), d[r]);
#endif
}

/* Prefetch the share of t->pf that belongs to block b (spread over the blocks): the next X
 * tile's source bytes, which load_x would otherwise wait for. */
static inline void prefetch_share(const a4w4_fast_tile *t, size_t b)
{
    size_t per = (t->pf_len / t->nb + 63) & ~(size_t)63;
    for (size_t o = b * per; o < (b + 1) * per && o < t->pf_len; o += 64)
        _mm_prefetch((const char *)t->pf + o, _MM_HINT_T0);
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

/* The row shifts ex[r][b] + xoff[r] of blocks [b0, b0 + n) as int32, er[i][r]: the block loop
 * broadcasts them from memory (a load) instead of moving each code to a vector register and
 * broadcasting it there (two vector operations a row and block). */
#define ER_CHUNK 64

static inline void row_shifts(const a4w4_fast_tile *t, const int32_t *xoff, size_t b0, size_t n,
                              int32_t er[ER_CHUNK][MR])
{
    for (int r = 0; r < MR; r++)
        for (size_t i = 0; i < n; i++)
            er[i][r] = t->ex[r * t->lde + b0 + i] + xoff[r];
}

static void exact_window(const a4w4_fast_tile *t, const int32_t *xoff, const int32_t *yoff,
                         size_t group, int64_t *acc)
{
    const __m256i yo0 = _mm256_loadu_si256((const __m256i *)(const void *)yoff);
    const __m256i yo1 = _mm256_loadu_si256((const __m256i *)(const void *)(yoff + 8));
    __m256i w[MR][2];
    int32_t er[ER_CHUNK][MR];
    for (int r = 0; r < MR; r++)
        w[r][0] = w[r][1] = _mm256_setzero_si256();
    memset(acc, 0, MR * 16 * sizeof *acc);
    size_t left = group;
    for (size_t b = 0; b < t->nb; b++) {
        size_t i = b % ER_CHUNK;
        if (i == 0)
            row_shifts(t, xoff, b, t->nb - b < ER_CHUNK ? t->nb - b : ER_CHUNK, er);
        if (t->pf)
            prefetch_share(t, b);
        __m256i ey0 = _mm256_add_epi32(load_ey(t, b, 0), yo0);
        __m256i ey1 = _mm256_add_epi32(load_ey(t, b, 1), yo1);
#ifdef A4W4_FAST_ROWS_DOTS4
        /* the window sums stay in memory (a load and a store per row a block): the registers
         * go to the four rows' dots */
        __m256i d4[MR][2], (*wm)[2] = w;
        block_dots(t, b, d4);
        A4W4_FAST_OPAQUE(wm);
#else
        __m256i (*wm)[2] = w;
#endif
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
#ifdef A4W4_FAST_ROWS_DOTS4
            __m256i *d = d4[r];
#else
            __m256i d[2];
            row_dots(block_rec(t, b), block_x(t, r, b), d);
#endif
            __m256i e = _mm256_broadcastd_epi32(_mm_cvtsi32_si128(er[i][r]));
            wm[r][0] = _mm256_add_epi32(wm[r][0], _mm256_sllv_epi32(d[0], _mm256_add_epi32(ey0, e)));
            wm[r][1] = _mm256_add_epi32(wm[r][1], _mm256_sllv_epi32(d[1], _mm256_add_epi32(ey1, e)));
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

/* The tiles whose block values come from one fp32 multiply: for e - 256 in [-126, 127] both
 * factors of dot * 2^(e - 256) are exact fp32 values (|dot| <= 4608, a normal power of two),
 * so their IEEE product is the one RNE rounding of the exact value (gradual underflow,
 * overflow to ±Inf; +0 for a zero dot). */
#define FP32_E_LO (256 - 126)
#define FP32_E_HI (256 + 127)

static inline int fp32_exact(const a4w4_fast_tile *t)
{
    return t->e_lo >= FP32_E_LO && t->e_hi <= FP32_E_HI;
}

/* Eight block values in fp32 where fp32_exact holds: eb = e - 256 + 127 in [1, 254], the
 * exponent field of 2^(e - 256). */
static inline __m256 block_values8_fp32(__m256i dot, __m256i eb)
{
    __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(eb, 23));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(dot), scale);
}

/* Row r's block values of block b into v[0..1] (ey[h]: the block's lane codes, plus 127 - 256
 * on the fp32 path). */
static inline void row_values(const a4w4_fast_tile *t, int r, size_t b, const __m256i ey[2],
                              int fp32, __m256 v[2])
{
    __m256i d[2];
    row_dots(block_rec(t, b), block_x(t, r, b), d);
    __m256i er = _mm256_set1_epi32(t->ex[r * t->lde + b]);
    for (int h = 0; h < 2; h++)
        v[h] = fp32 ? block_values8_fp32(d[h], _mm256_add_epi32(ey[h], er))
                    : block_values8(d[h], _mm256_add_epi32(ey[h], er));
}

/* The split's part sums of blocks [b0, b1) added to total (+0.0 + parts in order). */
static inline void ordered_split(const a4w4_fast_tile *t, size_t b0, size_t b1, int fp32,
                                 float *total)
{
    const __m256i bias = _mm256_set1_epi32(fp32 ? 127 - 256 : 0);
    __m256 part[MR][2];
    for (int r = 0; r < MR; r++)
        part[r][0] = part[r][1] = _mm256_setzero_ps();
    for (size_t b = b0; b < b1; b++) {
        if (t->pf)
            prefetch_share(t, b);
        __m256i ey[2] = {_mm256_add_epi32(load_ey(t, b, 0), bias),
                         _mm256_add_epi32(load_ey(t, b, 1), bias)};
#ifdef A4W4_FAST_ROWS_DOTS4
        /* the part sums in memory, the registers to the four rows' dots (as exact_window) */
        __m256i d4[MR][2];
        __m256 (*pm)[2] = part;
        block_dots(t, b, d4);
        A4W4_FAST_OPAQUE(pm);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256i er = _mm256_set1_epi32(t->ex[r * t->lde + b]);
            for (int h = 0; h < 2; h++) {
                __m256i e = _mm256_add_epi32(ey[h], er);
                pm[r][h] = _mm256_add_ps(pm[r][h], fp32 ? block_values8_fp32(d4[r][h], e)
                                                         : block_values8(d4[r][h], e));
            }
        }
#else
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256 v[2];
            row_values(t, r, b, ey, fp32, v);
            part[r][0] = _mm256_add_ps(part[r][0], v[0]);
            part[r][1] = _mm256_add_ps(part[r][1], v[1]);
        }
#endif
    }
    for (int r = 0; r < MR; r++)
        for (int h = 0; h < 2; h++) {
            float *p = total + r * 16 + h * 8;
            _mm256_store_ps(p, _mm256_add_ps(_mm256_load_ps(p), part[r][h]));
        }
}

/* The fp32 path and the double one are separate loops (the choice is made once a tile). */
static void ordered(const a4w4_fast_tile *t, size_t per_blocks, float *total)
{
    for (int i = 0; i < MR * 16; i += 8)
        _mm256_store_ps(total + i, _mm256_setzero_ps());
    int fp32 = fp32_exact(t);
    for (size_t b0 = 0; b0 < t->nb; b0 += per_blocks) {
        size_t b1 = b0 + per_blocks < t->nb ? b0 + per_blocks : t->nb;
        if (fp32)
            ordered_split(t, b0, b1, 1, total);
        else
            ordered_split(t, b0, b1, 0, total);
    }
}

static void blocks(const a4w4_fast_tile *t, size_t b0, size_t b1, float *v)
{
    int fp32 = fp32_exact(t);
    const __m256i bias = _mm256_set1_epi32(fp32 ? 127 - 256 : 0);
    for (size_t b = b0; b < b1; b++) {
        __m256i ey[2] = {_mm256_add_epi32(load_ey(t, b, 0), bias),
                         _mm256_add_epi32(load_ey(t, b, 1), bias)};
        float *out = v + (b - b0) * MR * 16;
        for (int r = 0; r < MR; r++) {
            __m256 vr[2];
            row_values(t, r, b, ey, fp32, vr);
            _mm256_storeu_ps(out + r * 16, vr[0]);
            _mm256_storeu_ps(out + r * 16 + 8, vr[1]);
        }
    }
}

/* Four window sums: acc * 2^e exact in double, one RNE to fp32; bf16 from the fp32 bits
 * unless the fp32 result is inexact and a bf16 midpoint (then a4w4_fast_round_i64, as for a
 * sum at or beyond 2^51, which the int64-to-double conversion below does not take). */
static inline void round_window4(const int64_t *acc, int32_t xe, const int32_t *ye,
                                 uint16_t *bf16, float *f32)
{
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000LL); /* 2^52 + 2^51 */
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)acc);
    __m256i big = _mm256_or_si256(_mm256_cmpgt_epi64(a, _mm256_set1_epi64x((1LL << 51) - 1)),
                                  _mm256_cmpgt_epi64(_mm256_set1_epi64x(-(1LL << 51)), a));
    __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(a, magic)),
                              _mm256_castsi256_pd(magic)); /* exact for |acc| < 2^51 */
    __m256i e = _mm256_add_epi64(
        _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)ye)),
        _mm256_set1_epi64x(xe + 1023));
    __m256d v = _mm256_mul_pd(d, _mm256_castsi256_pd(_mm256_slli_epi64(e, 52)));
    __m128 f = _mm256_cvtpd_ps(v);
    __m128i u = _mm_castps_si128(f);
    int inexact = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_cvtps_pd(f), v, _CMP_NEQ_UQ));
    int tie = _mm_movemask_ps(_mm_castsi128_ps(
        _mm_cmpeq_epi32(_mm_and_si128(u, _mm_set1_epi32(0xFFFF)), _mm_set1_epi32(0x8000))));
    __m128i odd = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
    __m128i r = _mm_srli_epi32(_mm_add_epi32(u, _mm_add_epi32(_mm_set1_epi32(0x7FFF), odd)), 16);
    _mm_storel_epi64((__m128i *)(void *)bf16, _mm_packus_epi32(r, r));
    _mm_storeu_ps(f32, f);
    int fix = (inexact & tie) | _mm256_movemask_pd(_mm256_castsi256_pd(big));
    while (fix) {
        int l = __builtin_ctz((unsigned)fix);
        a4w4_fast_round_i64(acc[l], xe + ye[l], &bf16[l], &f32[l]);
        fix &= fix - 1;
    }
}

static void round_window(const int64_t *acc, const int32_t *xe, const int32_t *ye, uint16_t *bf16,
                         float *f32)
{
    for (int i = 0; i < MR * 16; i += 4)
        round_window4(acc + i, xe[i / 16], ye + i % 16, bf16 + i, f32 + i);
}

static void round_general(const int64_t *limbs, uint16_t *bf16, float *f32)
{
    a4w4_fast_round_general_tile(MR, limbs, bf16, f32);
}
