/* a4w4_gemm_fast_avx512_impl.h — AVX-512 pieces shared by the AVX512-VNNI and AMX paths of
 * the fast oracles (included only by files compiled with -mavx512f -mavx512bw -mavx512vl
 * -mavx512dq -mavx512cd; kernel contracts in a4w4_gemm_fast_kernels.h; contracts §4.1):
 * X-row decode and scan, the window flush, the multi-limb update and the rounding of window
 * and limb sums, eight outputs per vector. */
#ifndef A4W4_GEMM_FAST_AVX512_IMPL_H
#define A4W4_GEMM_FAST_AVX512_IMPL_H

#include "a4w4_gemm_fast_x86.h"

/* 64 source bytes (four blocks) of an X row decoded to 128 bytes: both nibbles through the
 * vpshufb table lut (code -> byte), interleaved within 128-bit lanes, then put back in order.
 * Returns the nonzero-element bit of each of the four blocks (bit j: block j). */
static inline unsigned decode64(const uint8_t *fp4, uint8_t *out, __m512i lut)
{
    const __m512i nib = _mm512_set1_epi8(0x0F);
    __m512i v = _mm512_loadu_si512(fp4);
    __m512i lo = _mm512_shuffle_epi8(lut, _mm512_and_si512(v, nib));
    __m512i hi = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v, 4), nib));
    __m512i a = _mm512_unpacklo_epi8(lo, hi), b = _mm512_unpackhi_epi8(lo, hi);
    _mm512_storeu_si512(
        out, _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), b));
    _mm512_storeu_si512(
        out + 64, _mm512_permutex2var_epi64(a, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), b));
    /* one bit per 8 bytes with a nonzero magnitude nibble; a block is 16 bytes */
    __mmask8 m = _mm512_test_epi64_mask(v, _mm512_set1_epi8(0x77));
    unsigned pairs = (unsigned)(m | (m >> 1)) & 0x55u;
    return (pairs & 1u) | ((pairs >> 1) & 2u) | ((pairs >> 2) & 4u) | ((pairs >> 3) & 8u);
}

/* Codes of 64 blocks from their scales and nonzero bits (a4w4_fast_scan_row's rules; 0xFF
 * marks all-zero and NaN blocks until the row's smallest code is known). */
static inline void codes64(const uint8_t *scale, uint64_t nz, __mmask64 have, uint8_t *code,
                           __m512i *vlo, __m512i *vhi, unsigned *flags)
{
    __m512i sc = _mm512_maskz_loadu_epi8(have, scale);
    __mmask64 nan = _mm512_mask_cmpeq_epi8_mask(have, sc, _mm512_set1_epi8((char)0xFF));
    __mmask64 valid = (__mmask64)nz & have & ~nan;
    *vlo = _mm512_mask_min_epu8(*vlo, valid, *vlo, sc);
    *vhi = _mm512_mask_max_epu8(*vhi, valid, *vhi, sc);
    _mm512_mask_storeu_epi8(code, have,
                            _mm512_mask_blend_epi8(valid, _mm512_set1_epi8((char)0xFF), sc));
    *flags |= (valid ? 1u : 0u) | (nan ? 2u : 0u);
}

static inline uint8_t hmin_epu8(__m512i v)
{
    uint8_t b[64], m = 255;
    _mm512_storeu_si512(b, v);
    for (int i = 0; i < 64; i++)
        m = b[i] < m ? b[i] : m;
    return m;
}

/* load_x with the element table lut: the decode and the scan of one X row in one pass over
 * its bytes; tail blocks (fewer than four) through the 128-bit form of the same table. */
static inline unsigned load_x_lut(const uint8_t *fp4, const uint8_t *scale, size_t K, uint8_t *out,
                                  uint8_t *code, int32_t *lo, int32_t *hi, __m512i lut)
{
    size_t nb = K / 32;
    unsigned flags = 0;
    __m512i vlo = _mm512_set1_epi8((char)0xFF), vhi = _mm512_setzero_si512();
    for (size_t b0 = 0; b0 < nb; b0 += 64) {
        size_t n = nb - b0 < 64 ? nb - b0 : 64, b = 0;
        uint64_t nz = 0;
        for (; b + 4 <= n; b += 4)
            nz |= (uint64_t)decode64(fp4 + (b0 + b) * 16, out + (b0 + b) * 32, lut) << b;
        for (; b < n; b++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(fp4 + (b0 + b) * 16));
            __m128i l4 = _mm512_castsi512_si128(lut), nib = _mm_set1_epi8(0x0F);
            __m128i el = _mm_shuffle_epi8(l4, _mm_and_si128(v, nib));
            __m128i eh = _mm_shuffle_epi8(l4, _mm_and_si128(_mm_srli_epi16(v, 4), nib));
            _mm_storeu_si128((__m128i *)(void *)(out + (b0 + b) * 32), _mm_unpacklo_epi8(el, eh));
            _mm_storeu_si128((__m128i *)(void *)(out + (b0 + b) * 32 + 16),
                             _mm_unpackhi_epi8(el, eh));
            nz |= (uint64_t)!_mm_testz_si128(v, _mm_set1_epi8(0x77)) << b;
        }
        __mmask64 have = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
        codes64(scale + b0, nz, have, code + b0, &vlo, &vhi, &flags);
    }
    int32_t l = (flags & 1u) ? hmin_epu8(vlo) : 0;
    int32_t h =
        (flags & 1u) ? 255 - hmin_epu8(_mm512_sub_epi8(_mm512_set1_epi8((char)0xFF), vhi)) : 0;
    for (size_t b0 = 0; b0 < nb; b0 += 64) {
        size_t n = nb - b0 < 64 ? nb - b0 : 64;
        __mmask64 have = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
        __m512i c = _mm512_maskz_loadu_epi8(have, code + b0);
        c = _mm512_mask_mov_epi8(c, _mm512_cmpeq_epi8_mask(c, _mm512_set1_epi8((char)0xFF)),
                                 _mm512_set1_epi8((char)l));
        _mm512_mask_storeu_epi8(code + b0, have, c);
    }
    *lo = l;
    *hi = h;
    return flags;
}

/* Add one row's int32 window sums to its int64 accumulators acc[0..15] and clear them. */
static inline void flush_row(__m512i *w, int64_t *acc)
{
    __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(*w));
    __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(*w, 1));
    _mm512_store_si512(acc, _mm512_add_epi64(_mm512_load_si512(acc), lo));
    _mm512_store_si512(acc + 8, _mm512_add_epi64(_mm512_load_si512(acc + 8), hi));
    *w = _mm512_setzero_si512();
}

/* Prefetch the share of t->pf that belongs to block b (spread over the blocks). */
static inline void prefetch_share(const a4w4_fast_tile *t, size_t b)
{
    size_t per = (t->pf_len / t->nb + 63) & ~(size_t)63;
    for (size_t o = b * per; o < (b + 1) * per && o < t->pf_len; o += 64)
        _mm_prefetch((const char *)t->pf + o, _MM_HINT_T0);
}

/* Add one row's 16 terms dot << (e & 31) to limb e >> 5 of each lane (e = ex + ey): lanes
 * whose e lies in [32 q0, 32 q0 + 64) update limbs q0 and q0 + 1 without branches; the rest
 * (rare when q0 follows the block's typical e) one masked add per distinct limb. */
static inline void add_general(int64_t *L, __m512i dot, __m512i ey, const uint8_t *rec, int32_t ex,
                               int32_t eref)
{
    int32_t q0 = (ex + eref) >> 5;
    q0 = q0 < 0 ? 0 : q0 > A4W4_FAST_LIMBS - 2 ? A4W4_FAST_LIMBS - 2 : q0;
    __m512i rel =
        _mm512_sub_epi32(_mm512_add_epi32(ey, _mm512_set1_epi32(ex)), _mm512_set1_epi32(32 * q0));
    __mmask16 out = _mm512_cmpge_epu32_mask(rel, _mm512_set1_epi32(64));
    __mmask16 up = _mm512_mask_cmpge_epu32_mask((__mmask16)~out, rel, _mm512_set1_epi32(32));
    __mmask16 low = (__mmask16)(~out & ~up);
    __m512i r = _mm512_and_si512(rel, _mm512_set1_epi32(31));
    __m512i vlo = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(dot)),
                                    _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r)));
    __m512i vhi = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(dot, 1)),
                                    _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r, 1)));
    int64_t *p = L + q0 * 16;
    __m512i l0 = _mm512_load_si512(p), h0 = _mm512_load_si512(p + 8);
    __m512i l1 = _mm512_load_si512(p + 16), h1 = _mm512_load_si512(p + 24);
    _mm512_store_si512(p, _mm512_mask_add_epi64(l0, (__mmask8)low, l0, vlo));
    _mm512_store_si512(p + 8, _mm512_mask_add_epi64(h0, (__mmask8)(low >> 8), h0, vhi));
    _mm512_store_si512(p + 16, _mm512_mask_add_epi64(l1, (__mmask8)up, l1, vlo));
    _mm512_store_si512(p + 24, _mm512_mask_add_epi64(h1, (__mmask8)(up >> 8), h1, vhi));
    __mmask16 todo = (__mmask16)(out & _mm512_test_epi32_mask(dot, dot));
    if (!todo)
        return;
    __m512i e = _mm512_add_epi32(ey, _mm512_set1_epi32(ex));
    __m512i q = _mm512_srli_epi32(e, 5);
    r = _mm512_and_si512(e, _mm512_set1_epi32(31));
    vlo = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(dot)),
                            _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r)));
    vhi = _mm512_sllv_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(dot, 1)),
                            _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r, 1)));
    do {
        unsigned lane = (unsigned)__builtin_ctz(todo);
        int32_t qq = (ex + a4w4_fast_ey_lane(rec, lane)) >> 5;
        __mmask16 k = _mm512_mask_cmpeq_epi32_mask(todo, q, _mm512_set1_epi32(qq));
        int64_t *pq = L + qq * 16;
        __m512i lo = _mm512_load_si512(pq), hi = _mm512_load_si512(pq + 8);
        _mm512_store_si512(pq, _mm512_mask_add_epi64(lo, (__mmask8)k, lo, vlo));
        _mm512_store_si512(pq + 8, _mm512_mask_add_epi64(hi, (__mmask8)(k >> 8), hi, vhi));
        todo = (__mmask16)(todo & ~k);
    } while (todo);
}

/* ---- rounding, eight outputs per vector ------------------------------------------------ */

/* The window: acc * 2^e is exact in double (|acc| < 2^53), one RNE to fp32; bf16 from the
 * fp32 bits unless the fp32 result is inexact and a bf16 midpoint (then the scalar rounding of
 * the exact value, a4w4_fast_round_i64). */
static inline void round_window_rows(unsigned mr, const int64_t *acc, const int32_t *xe,
                                     const int32_t *ye, uint16_t *bf16, float *f32)
{
    const __m256i lo16 = _mm256_set1_epi32(0xFFFF), tie = _mm256_set1_epi32(0x8000);
    for (unsigned i = 0; i < mr * 16; i += 8) {
        __m512i e = _mm512_add_epi64(
            _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(ye + i % 16))),
            _mm512_set1_epi64(xe[i / 16] + 1023));
        __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(e, 52)); /* 2^(xe + ye) */
        __m512d v = _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_load_si512(acc + i)), scale);
        __m256 f = _mm512_cvtpd_ps(v);
        __m256i u = _mm256_castps_si256(f);
        __mmask8 fix = _mm512_cmp_pd_mask(_mm512_cvtps_pd(f), v, _CMP_NEQ_UQ) &
                       _mm256_cmpeq_epi32_mask(_mm256_and_si256(u, lo16), tie);
        __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd));
        _mm_storeu_si128((__m128i *)(void *)(bf16 + i),
                         _mm256_cvtepi32_epi16(_mm256_srli_epi32(r, 16)));
        _mm256_storeu_ps(f32 + i, f);
        while (fix) {
            unsigned lane = (unsigned)__builtin_ctz(fix);
            a4w4_fast_round_i64(acc[i + lane], xe[i / 16] + ye[i % 16 + lane], &bf16[i + lane],
                                &f32[i + lane]);
            fix = (__mmask8)(fix & (fix - 1));
        }
    }
}

#define NDIG 19 /* 16 limbs and the digits their carries reach */

/* Carries through the digits of eight lanes: d[0..NDIG-2] end in [0, 2^32). */
static inline void normalise8(__m512i d[NDIG])
{
    const __m512i low = _mm512_set1_epi64(0xFFFFFFFFLL);
    for (int q = 0; q < NDIG - 1; q++) {
        d[q + 1] = _mm512_add_epi64(d[q + 1], _mm512_srai_epi64(d[q], 32));
        d[q] = _mm512_and_si512(d[q], low);
    }
}

/* The top three digits of each lane (d2 != 0 unless the lane is zero), the OR of the digits
 * below them, and the index of the top one (-1 for a zero lane). */
static inline __m512i top_digits(const __m512i d[NDIG], __m512i *d2, __m512i *d1, __m512i *d0,
                                 __m512i *below)
{
    __m512i td = _mm512_set1_epi64(-1);
    for (int q = 0; q < NDIG; q++)
        td = _mm512_mask_mov_epi64(td, _mm512_test_epi64_mask(d[q], d[q]), _mm512_set1_epi64(q));
    *d2 = *d1 = *d0 = *below = _mm512_setzero_si512();
    for (int q = 0; q < NDIG; q++) {
        *d2 = _mm512_mask_mov_epi64(*d2, _mm512_cmpeq_epi64_mask(td, _mm512_set1_epi64(q)), d[q]);
        *d1 =
            _mm512_mask_mov_epi64(*d1, _mm512_cmpeq_epi64_mask(td, _mm512_set1_epi64(q + 1)), d[q]);
        *d0 =
            _mm512_mask_mov_epi64(*d0, _mm512_cmpeq_epi64_mask(td, _mm512_set1_epi64(q + 2)), d[q]);
        __mmask8 lower = _mm512_cmpgt_epi64_mask(td, _mm512_set1_epi64(q + 2));
        *below = _mm512_mask_or_epi64(*below, lower, *below, d[q]);
    }
    return td;
}

/* fp32 bits of the RNE of mag * 2^(tb - 63 - 256) to p significant bits in the fp32 exponent
 * range (mag's bit 63 set, sticky: nonzero bits below mag), Inf on overflow; 64-bit lanes. */
static inline __m512i round_bits(__m512i mag, __mmask8 sticky, __m512i tb, int p)
{
    const __m512i one = _mm512_set1_epi64(1);
    __m512i E = _mm512_sub_epi64(tb, _mm512_set1_epi64(256));
    __m512i Ec = _mm512_max_epi64(E, _mm512_set1_epi64(-126));
    __m512i sh = _mm512_add_epi64(_mm512_sub_epi64(Ec, E), _mm512_set1_epi64(64 - p));
    __m512i m = _mm512_srlv_epi64(mag, sh);
    __m512i rem = _mm512_and_si512(mag, _mm512_sub_epi64(_mm512_sllv_epi64(one, sh), one));
    __m512i half = _mm512_sllv_epi64(one, _mm512_sub_epi64(sh, one));
    __mmask8 near = _mm512_cmple_epi64_mask(sh, _mm512_set1_epi64(64));
    __mmask8 above = _mm512_cmpgt_epu64_mask(rem, half);
    __mmask8 at = _mm512_cmpeq_epu64_mask(rem, half);
    __mmask8 odd = _mm512_test_epi64_mask(m, one);
    __mmask8 up = near & (above | (at & (sticky | odd)));
    m = _mm512_mask_add_epi64(m, up, m, one);
    __m512i bits =
        _mm512_add_epi64(_mm512_slli_epi64(_mm512_add_epi64(Ec, _mm512_set1_epi64(126)), 23),
                         _mm512_slli_epi64(m, 24 - p));
    return _mm512_min_epi64(bits, _mm512_set1_epi64(0x7F800000));
}

/* Eight outputs of one row: their limbs at L[q * 16], q < A4W4_FAST_LIMBS. */
static inline void round_limbs8(const int64_t *L, uint16_t *bf16, float *f32)
{
    __m512i d[NDIG];
    for (int q = 0; q < NDIG; q++)
        d[q] = q < A4W4_FAST_LIMBS ? _mm512_load_si512(L + q * 16) : _mm512_setzero_si512();
    normalise8(d);
    __mmask8 neg = _mm512_movepi64_mask(d[NDIG - 1]);
    if (neg) {
        for (int q = 0; q < NDIG; q++)
            d[q] = _mm512_mask_sub_epi64(d[q], neg, _mm512_setzero_si512(), d[q]);
        normalise8(d);
    }
    __m512i d2, d1, d0, below;
    __m512i td = top_digits(d, &d2, &d1, &d0, &below);
    __m512i b2 = _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(d2)); /* 0..31 */
    __m512i tb = _mm512_add_epi64(_mm512_slli_epi64(td, 5), b2);
    __m512i hi64 = _mm512_or_si512(_mm512_slli_epi64(d2, 32), d1);
    __m512i b21 = _mm512_add_epi64(b2, _mm512_set1_epi64(1));
    __m512i mag =
        _mm512_or_si512(_mm512_sllv_epi64(hi64, _mm512_sub_epi64(_mm512_set1_epi64(31), b2)),
                        _mm512_srlv_epi64(d0, b21));
    __m512i lost = _mm512_and_si512(
        d0, _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), b21), _mm512_set1_epi64(1)));
    __mmask8 sticky = _mm512_test_epi64_mask(lost, lost) | _mm512_test_epi64_mask(below, below);
    __mmask8 zero = _mm512_cmplt_epi64_mask(td, _mm512_setzero_si512());
    __m512i sign = _mm512_maskz_mov_epi64(neg, _mm512_set1_epi64(0x80000000LL));
    __m512i b24 = _mm512_maskz_or_epi64((__mmask8)~zero, round_bits(mag, sticky, tb, 24), sign);
    __m512i b8 = _mm512_maskz_or_epi64((__mmask8)~zero, round_bits(mag, sticky, tb, 8), sign);
    _mm256_storeu_si256((__m256i *)(void *)f32, _mm512_cvtepi64_epi32(b24));
    _mm_storeu_si128((__m128i *)(void *)bf16, _mm512_cvtepi64_epi16(_mm512_srli_epi64(b8, 16)));
}

static inline void round_general_rows(unsigned mr, const int64_t *limbs, uint16_t *bf16, float *f32)
{
    for (unsigned r = 0; r < mr; r++)
        for (int h = 0; h < 2; h++)
            round_limbs8(limbs + r * A4W4_FAST_LIMBS * 16 + h * 8, bf16 + r * 16 + h * 8,
                         f32 + r * 16 + h * 8);
}

#endif
