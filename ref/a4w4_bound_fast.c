/* a4w4_bound_fast.c — the fast form of the bounded(S) limits (a4w4_bound.h, contracts §4.1
 * "bounded", §4.3), bit-equal to a4w4_dot_bounded_limits.
 *
 * The plain form reads every element twice per output (its facts, then the exact oracle on
 * each split and on the whole row) through a decoder call per element. Here one pass over the
 * K blocks of an output gives everything:
 *  - a pair table holds, for an fp4x2 byte of A and one of W, (|lo*lo| + |hi*hi|) << 16 plus
 *    lo*lo + hi*hi (twice the E2M1 values): 16 lookups give a block's exact dot d and its sum
 *    of |products| a together (|d|, a <= 4608, so the low half sign-extends to d);
 *  - the block's positive and negative product sums are (a + d) / 2 and (a - d) / 2, the
 *    integers the plain form sums element by element; times 2^(sa + sb - 256) (exact in
 *    double) they are added to tpos and tneg in block order, the plain form's double sums;
 *  - d << (e mod 32) is added to digit e / 32 of a 32-bit-digit accumulator (int64 digits,
 *    lazy carries: at most 2^43 an add, so 2^19 adds fit); at the end of a split its digits
 *    are added into the row's, then normalised and rounded once to double (RNE): the exact
 *    partial P_s and, at the end, the exact sum, as a4w4_dot_exact_f64 rounds them.
 * The split's facts then go through the plain form's own arithmetic (a4w4_bound_acc_add,
 * a4w4_bound_acc_limits), so the bound is the same double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "a4w4_bound.h"
#include "a4w4_formats.h"

/* ---- the pair table -------------------------------------------------------------------- */

static int32_t pair_da[65536]; /* index a << 8 | w */
static double pow2_e[512];    /* 2^(e - 256), e = sa + sb in 0..508 */
static once_flag table_once = ONCE_FLAG_INIT;

static void build_table(void)
{
    for (int a = 0; a < 256; a++) {
        int alo = a4w4_e2m1_to_int2x((uint8_t)(a & 15)), ahi = a4w4_e2m1_to_int2x((uint8_t)(a >> 4));
        for (int w = 0; w < 256; w++) {
            int wlo = a4w4_e2m1_to_int2x((uint8_t)(w & 15));
            int whi = a4w4_e2m1_to_int2x((uint8_t)(w >> 4));
            int d = alo * wlo + ahi * whi, s = abs(alo * wlo) + abs(ahi * whi);
            pair_da[a << 8 | w] = s * 65536 + d;
        }
    }
    for (int e = 0; e < 512; e++)
        pow2_e[e] = ldexp(1.0, e - 256);
}

/* ---- exact sums in 32-bit digits --------------------------------------------------------- */

#define DIGITS 21 /* 508 + 13 + 19 bits and a sign, with room for the carries */

typedef struct {
    int64_t d[DIGITS];
    int lo, hi; /* the digits touched since the last clear (lo > hi: none) */
} digits;

static void digits_clear(digits *x)
{
    if (x->lo <= x->hi)
        memset(x->d + x->lo, 0, (size_t)(x->hi - x->lo + 1) * sizeof x->d[0]);
    x->lo = DIGITS;
    x->hi = -1;
}

static inline void digits_add(digits *x, int v, unsigned e)
{
    int q = (int)(e >> 5);
    x->d[q] += (int64_t)v * ((int64_t)1 << (e & 31));
    x->lo = q < x->lo ? q : x->lo;
    x->hi = q > x->hi ? q : x->hi;
}

/* Carries through the digits lo..top-1 into top: they end in [0, 2^32). */
static void normalise(int64_t *d, int lo, int top)
{
    for (int i = lo; i < top; i++) {
        int64_t low = d[i] & 0xFFFFFFFFLL;
        d[i + 1] += (d[i] - low) / 4294967296LL; /* exact: a multiple of 2^32 */
        d[i] = low;
    }
}

/* Carries x's digits up into a digit two above its highest: the digits below end in
 * [0, 2^32), so 2^19 more adds fit before a digit could overflow. */
static void digits_carry(digits *x)
{
    if (x->lo > x->hi)
        return;
    int top = x->hi + 2 < DIGITS - 1 ? x->hi + 2 : DIGITS - 1;
    normalise(x->d, x->lo, top);
    x->hi = top;
}

/* dst += src digit by digit, then dst's carries. */
static void digits_merge(digits *dst, const digits *src)
{
    if (src->lo > src->hi)
        return;
    for (int i = src->lo; i <= src->hi; i++)
        dst->d[i] += src->d[i];
    dst->lo = src->lo < dst->lo ? src->lo : dst->lo;
    dst->hi = src->hi > dst->hi ? src->hi : dst->hi;
    digits_carry(dst);
}

/* RNE of mag * 2^e to a double (mag != 0; the result is normal: 2^-256 <= value < 2^300). */
static double round_mag53(uint64_t mag, int e)
{
    int top = 63 - __builtin_clzll(mag);
    if (top <= 52)
        return ldexp((double)mag, e); /* exact */
    int sh = top - 52;
    uint64_t half = 1ull << (sh - 1), rem = mag & ((half << 1) - 1), m = mag >> sh;
    if (rem > half || (rem == half && (m & 1)))
        m++;
    return ldexp((double)m, e + sh); /* exact: m <= 2^53 */
}

/* The value of x's digits (times 2^-256) rounded once to double, RNE; +0 for a zero sum.
 * x is left as it was. */
static double digits_round(const digits *x)
{
    if (x->lo > x->hi)
        return 0.0;
    int64_t d[DIGITS + 3];
    int lo = x->lo, top = x->hi + 3;
    memcpy(d + lo, x->d + lo, (size_t)(x->hi - lo + 1) * sizeof d[0]);
    for (int i = x->hi + 1; i <= top; i++)
        d[i] = 0;
    normalise(d, lo, top);
    int neg = d[top] < 0;
    if (neg) {
        for (int i = lo; i <= top; i++)
            d[i] = -d[i];
        normalise(d, lo, top);
    }
    int td = top;
    while (td >= lo && d[td] == 0)
        td--;
    if (td < lo)
        return 0.0;
    int tb = td * 32 + (31 - __builtin_clz((unsigned)d[td]));
    int pos = tb - 63 > lo * 32 ? tb - 63 : lo * 32; /* bits [pos, pos + 64), a sticky bit */
    int w = pos / 32, sh = pos % 32;
    uint64_t low = (uint64_t)d[w] | (w + 1 <= top ? (uint64_t)d[w + 1] << 32 : 0);
    uint64_t hi = w + 2 <= top ? (uint64_t)d[w + 2] : 0;
    uint64_t mag = (low >> sh) | (sh ? hi << (64 - sh) : 0);
    int sticky = (d[w] & ((1LL << sh) - 1)) != 0;
    for (int i = lo; i < w && !sticky; i++)
        sticky = d[i] != 0;
    double r = round_mag53(mag | (uint64_t)sticky, pos - 256);
    return neg ? -r : r;
}

/* ---- block sums: each block's exact dot d and sum of |products| a ------------------------- */

#define CHUNK 256 /* blocks whose sums are computed at once */

static void block_sums_portable(const uint8_t *a, const uint8_t *w, size_t n, int32_t *d,
                                int32_t *s)
{
    for (size_t b = 0; b < n; b++, a += 16, w += 16) {
        int32_t x = 0;
        for (int i = 0; i < 16; i++)
            x += pair_da[a[i] << 8 | w[i]];
        d[b] = (int16_t)(uint16_t)((uint32_t)x & 0xFFFFu);
        s[b] = (x - d[b]) / 65536;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

/* The same with AVX2, two blocks a step: magnitudes |2 e2m1| by vpshufb, the sign of each
 * product from the two sign bits, vpmaddubsw (|a| unsigned, |w| or -|w| signed: pair sums at
 * most 288, no saturation), vpmaddwd, then two horizontal adds. */
__attribute__((target("avx2"))) static void block_sums_avx2(const uint8_t *a, const uint8_t *w,
                                                            size_t n, int32_t *d, int32_t *s)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, 1, 2, 3, 4, 6, 8, 12, 0, 1,
                                         2, 3, 4, 6, 8, 12, 0, 1, 2, 3, 4, 6, 8, 12);
    const __m256i m0f = _mm256_set1_epi8(0x0F), m08 = _mm256_set1_epi8(0x08),
                  one8 = _mm256_set1_epi8(1), one16 = _mm256_set1_epi16(1);
    size_t b = 0;
    for (; b + 2 <= n; b += 2) {
        __m256i va = _mm256_loadu_si256((const __m256i *)(a + b * 16));
        __m256i vw = _mm256_loadu_si256((const __m256i *)(w + b * 16));
        __m256i al = _mm256_and_si256(va, m0f), ah = _mm256_and_si256(_mm256_srli_epi16(va, 4), m0f);
        __m256i wl = _mm256_and_si256(vw, m0f), wh = _mm256_and_si256(_mm256_srli_epi16(vw, 4), m0f);
        __m256i aml = _mm256_shuffle_epi8(lut, al), amh = _mm256_shuffle_epi8(lut, ah);
        __m256i wml = _mm256_shuffle_epi8(lut, wl), wmh = _mm256_shuffle_epi8(lut, wh);
        __m256i sl = _mm256_or_si256(
            _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_xor_si256(al, wl), m08), m08), one8);
        __m256i sh = _mm256_or_si256(
            _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_xor_si256(ah, wh), m08), m08), one8);
        __m256i abs16 = _mm256_add_epi16(_mm256_maddubs_epi16(aml, wml),
                                         _mm256_maddubs_epi16(amh, wmh));
        __m256i dot16 = _mm256_add_epi16(_mm256_maddubs_epi16(aml, _mm256_sign_epi8(wml, sl)),
                                         _mm256_maddubs_epi16(amh, _mm256_sign_epi8(wmh, sh)));
        __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(dot16, one16),
                                      _mm256_madd_epi16(abs16, one16));
        h = _mm256_hadd_epi32(h, h); /* per 128-bit lane (one block): d, a, d, a */
        int32_t t[8];
        _mm256_storeu_si256((__m256i *)t, h);
        d[b] = t[0];
        s[b] = t[1];
        d[b + 1] = t[4];
        s[b + 1] = t[5];
    }
    if (b < n)
        block_sums_portable(a + b * 16, w + b * 16, n - b, d + b, s + b);
}
#endif

typedef void (*block_sums_fn)(const uint8_t *, const uint8_t *, size_t, int32_t *, int32_t *);

/* The path: 1 AVX2 (where the build and the CPU have it), else the portable one. */
static block_sums_fn block_sums_for(int avx2)
{
#ifdef HAVE_AVX2_PATH
    if (avx2 && __builtin_cpu_supports("avx2"))
        return block_sums_avx2;
#endif
    (void)avx2;
    return block_sums_portable;
}

/* ---- one output -------------------------------------------------------------------------- */

/* 1 when a scale code of the nb blocks is 0xFF. */
static int has_nan_scale(const uint8_t *s, size_t nb)
{
    return memchr(s, 0xFF, nb) != NULL;
}

/* The facts of the blocks [b0, b1) of op (a4w4_dot_split_facts, no 0xFF scale among them)
 * into *f, their dots added into *split (cleared first) and then into *row. */
static void split_facts(const a4w4_dot_operands *op, block_sums_fn sums, size_t b0, size_t b1,
                        digits *split, digits *row, a4w4_split_facts *f)
{
    double tpos = 0, tneg = 0;
    int32_t dd[CHUNK], ss[CHUNK];
    digits_clear(split);
    for (size_t c0 = b0; c0 < b1; c0 += CHUNK) {
        size_t n = b1 - c0 < CHUNK ? b1 - c0 : CHUNK;
        sums(op->a_fp4 + c0 * 16, op->w_fp4 + c0 * 16, n, dd, ss);
        for (size_t i = 0; i < n; i++) {
            int d = dd[i], s = ss[i];
            unsigned e = (unsigned)op->a_scale[c0 + i] + op->w_scale[c0 + i];
            tpos += (double)((s + d) / 2) * pow2_e[e];
            tneg += (double)((s - d) / 2) * pow2_e[e];
            if (d)
                digits_add(split, d, e);
        }
        digits_carry(split); /* every CHUNK blocks: far inside 2^19 adds */
    }
    f->blocks = b1 - b0;
    double grow = 1.0 + 32.0 * (double)f->blocks * 0x1p-52;
    f->tpos = tpos * grow;
    f->tneg = tneg * grow;
    f->t = f->tpos + f->tneg;
    f->p = digits_round(split);
    digits_merge(row, split);
}

/* a4w4_dot_bounded_limits_fast on path sums. */
static int limits_on(const a4w4_dot_operands *op, unsigned S, block_sums_fn sums,
                     a4w4_bounded_limits *l)
{
    size_t nb = op->K / 32;
    if (has_nan_scale(op->a_scale, nb) || has_nan_scale(op->w_scale, nb)) {
        *l = (a4w4_bounded_limits){NAN, NAN, 0, 0};
        return 1;
    }
    S = S < 1 ? 1 : S;
    size_t per = a4w4_split_k_per_split(op->K, S) / 32;
    unsigned ns = a4w4_split_count(op->K, S);
    a4w4_bound_acc acc;
    memset(&acc, 0, sizeof acc);
    digits split = {{0}, DIGITS, -1}, row = {{0}, DIGITS, -1};
    for (unsigned j = 0; j < ns; j++) {
        size_t b0 = (size_t)j * per, b1 = b0 + per < nb ? b0 + per : nb;
        a4w4_split_facts f;
        split_facts(op, sums, b0, b1, &split, &row, &f);
        a4w4_bound_acc_add(&acc, &f);
    }
    a4w4_bound_acc_limits(&acc, digits_round(&row), l);
    return 0;
}

int a4w4_dot_bounded_limits_fast(const a4w4_dot_operands *op, unsigned S, a4w4_bounded_limits *l)
{
    call_once(&table_once, build_table);
    return limits_on(op, S, block_sums_for(1), l);
}

/* ---- every output ------------------------------------------------------------------------- */

int a4w4_gemm_bounded_limits_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale,
                                     const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                     size_t N, size_t K, unsigned S, a4w4_bounded_limits *out,
                                     unsigned threads, int simd)
{
    if (!a_fp4 || !a_scale || !w_fp4 || !w_scale || !out || !M || !N || !K || K % 32 || !S)
        return A4W4_EINVAL;
    call_once(&table_once, build_table);
    block_sums_fn sums = block_sums_for(simd);
    size_t rb = K / 2, nb = K / 32;
    long long count = (long long)(M * N);
#ifdef _OPENMP
    int nt = threads ? (int)threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt) if (nt > 1 && count > 16)
#else
    (void)threads;
#endif
    for (long long k = 0; k < count; k++) {
        size_t i = (size_t)k / N, j = (size_t)k % N;
        a4w4_dot_operands op = {a_fp4 + i * rb, a_scale + i * nb, w_fp4 + j * rb,
                                w_scale + j * nb, K};
        limits_on(&op, S, sums, &out[k]);
    }
    return 0;
}

int a4w4_gemm_bounded_limits_fast(const uint8_t *a_fp4, const uint8_t *a_scale,
                                  const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                  size_t N, size_t K, unsigned S, a4w4_bounded_limits *out,
                                  unsigned threads)
{
    return a4w4_gemm_bounded_limits_fast_ex(a_fp4, a_scale, w_fp4, w_scale, M, N, K, S, out,
                                            threads, 1);
}
