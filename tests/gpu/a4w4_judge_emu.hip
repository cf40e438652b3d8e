/* a4w4_judge_emu.hip — runs the GPU judge's per-output arithmetic (ref/gpu/a4w4_judge_math.h,
 * __host__ __device__) on the CPU against the plain C oracles of ref/: no GPU needed, so it
 * runs wherever the GPU code compiles (CI included).
 *
 *   decode       twice-E2M1 of all 16 codes vs a4w4_e2m1_to_int2x
 *   rounding     a4w4j_round_i128 (an int128 times a power of two to fp32 and to bf16) vs
 *                round to odd through long double (ties, near ties, subnormals, overflow);
 *                the directed adds vs fesetround
 *   per output   the judge's loops (block dots from the decoded codes, blocks in ascending K)
 *                on random cases of six scale regimes (narrow, exact-like, tiny, wide, full
 *                range with 0 / 253 / 254 / 0xFF, all zero / -0 rows):
 *                ordered(1) and ordered(S) vs a4w4_gemm_ordered, exact vs a4w4_gemm_exact
 *                (bf16 and fp32 bits, every output the window certifies; the rest counted),
 *                bounded(S) bound vs a4w4_dot_bounded_bound (the same double), the prover vs
 *                a4w4_exact_regime, row facts included
 *   preshuffle   the judge's index map vs a4w4_preshuffle
 *   atomic(S)    the judge's bf16 adds and its set of orders vs ref/a4w4_atomic.c
 * Exit 0 when everything matches, 1 otherwise. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_judge_math.h"

extern "C" {
#include "a4w4_atomic.h"
#include "a4w4_bound.h"
#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
}

static long g_fail, g_pass;

static void check(bool ok, const char *what, long bad, long total)
{
    if (ok) {
        g_pass++;
        printf("PASS %s (%ld checked)\n", what, total);
    } else {
        g_fail++;
        printf("FAIL %s: %ld/%ld differ\n", what, bad, total);
    }
}

static unsigned long long g_rng = 0x9E3779B97F4A7C15ULL;
static unsigned long long rnd(void)
{
    unsigned long long z = (g_rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---- decode and rounding ------------------------------------------------------------------- */
/* acc * 2^x rounded to p bits in fp32's range, by round to odd into long double (64 bits,
 * enough for any later rounding of 24 or 8) and then into fp32 / bf16. */
static float ref_round(__int128 acc, int x, int p)
{
    if (acc == 0)
        return 0.0f;
    const int neg = acc < 0;
    unsigned __int128 mag = neg ? (unsigned __int128)0 - (unsigned __int128)acc : (unsigned __int128)acc;
    int sh = 0;
    while ((mag >> sh) >> 64)
        sh++;
    unsigned long long m = (unsigned long long)(mag >> sh);
    if (sh && (mag & (((unsigned __int128)1 << sh) - 1)))
        m |= 1; /* sticky: round to odd */
    volatile long double v = ldexpl((long double)m, x + sh);
    volatile float rn = (float)v; /* before the rounding mode changes (no FENV_ACCESS) */
    const int old = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile float f = (float)v;
    fesetround(old);
    uint32_t u;
    float ff = f;
    memcpy(&u, &ff, 4);
    if ((long double)ff != v && !isinf(ff))
        u |= 1u; /* round to odd into fp32 */
    memcpy(&ff, &u, 4);
    float out;
    if (p == 24) {
        out = rn; /* one RNE from the long double (64 bits hold the odd-rounded value) */
    } else {
        const uint32_t b = a4w4_f32_to_bf16(ff);
        const uint32_t bb = b << 16;
        memcpy(&out, &bb, 4);
    }
    return neg ? -fabsf(out) : out;
}

static void test_basics(void)
{
    long bad = 0;
    for (unsigned c = 0; c < 16; c++)
        bad += (int)(int8_t)a4w4j_twice(c) != a4w4_e2m1_to_int2x((uint8_t)c);
    check(bad == 0, "twice E2M1, all 16 codes", bad, 16);

    bad = 0; /* the device's decode by byte permutes, every 16-bit half of a word */
    for (uint32_t h = 0; h < 65536; h++) {
        const uint32_t src[4] = {h | (h ^ 0xA5C3u) << 16, ~h, h * 40503u, h << 16 | 0x8888u};
        uint8_t bytes[16];
        uint32_t want[8], wabs[8], got[8], gabs[8];
        memcpy(bytes, src, 16);
        a4w4j_decode16(bytes, want, 0);
        a4w4j_decode16(bytes, wabs, 1);
        a4w4j_decode16_perm(src, got, gabs);
        bad += memcmp(got, want, sizeof got) != 0 || memcmp(gabs, wabs, sizeof gabs) != 0;
    }
    check(bad == 0, "decode by byte permutes vs the per-code decode (65536 x 4 words)", bad,
          65536);

    long n = 0;
    bad = 0;
    for (int k = 0; k < 400000; k++, n++) {
        const int bits = 1 + (int)(rnd() % 126), x = -352 + (int)(rnd() % 509);
        unsigned __int128 m = ((unsigned __int128)rnd() << 64) | rnd();
        m >>= 128 - bits;
        m |= (unsigned __int128)1 << (bits - 1);
        if (k % 4 == 1) { /* a tie of 24 bits, or of 8, exactly or plus a far bit */
            const int keep = k % 8 == 1 ? 25 : 9;
            if (bits > keep + 2) {
                m = (m >> (bits - keep)) | 1;
                m <<= bits - keep;
                if (k % 16 == 5)
                    m |= 1;
            }
        }
        const __int128 acc = k % 2 ? -(__int128)m : (__int128)m;
        for (int p = 8; p <= 24; p += 16) {
            const float got = a4w4j_round_i128(acc, x, p), want = ref_round(acc, x, p);
            bad += memcmp(&got, &want, 4) != 0;
        }
    }
    check(bad == 0, "int128 x 2^x rounded to fp32 and bf16 (ties, subnormals, overflow)", bad, 2 * n);

    bad = n = 0;
    for (int k = 0; k < 200000; k++, n++) {
        const double a = ldexp((double)(int64_t)rnd(), (int)(rnd() % 200) - 100);
        const double b = ldexp((double)(int64_t)rnd(), (int)(rnd() % 200) - 100);
        const int old = fegetround();
        fesetround(FE_UPWARD);
        volatile double up = a + b;
        fesetround(FE_DOWNWARD);
        volatile double dn = a - b;
        fesetround(old);
        bad += a4w4j_dadd_ru(a, b) != up || a4w4j_dsub_rd(a, b) != dn;
    }
    check(bad == 0, "directed double adds (TwoSum) vs fesetround", bad, n);
}

/* ---- one output as the judge's kernels compute it ---------------------------------------- */
typedef struct {
    const uint8_t *a, *as, *w, *ws;
    size_t K;
} dotp;

static void block_dots(const dotp *p, size_t b, int *d, int *iabs)
{
    uint32_t sa[8], sw[8], aa[8], aw[8];
    a4w4j_decode16(p->a + b * 16, sa, 0);
    a4w4j_decode16(p->w + b * 16, sw, 0);
    a4w4j_decode16(p->a + b * 16, aa, 1);
    a4w4j_decode16(p->w + b * 16, aw, 1);
    *d = *iabs = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            *d += (int)(int8_t)(sa[i] >> (8 * j)) * (int)(int8_t)(sw[i] >> (8 * j));
            *iabs += (int)(int8_t)(aa[i] >> (8 * j)) * (int)(int8_t)(aw[i] >> (8 * j));
        }
}

typedef struct {
    uint32_t ord1, ordS, ex_bf16;
    float ex_f32;
    int sure, proven;
    double B;
} judged;

static judged judge_output(const dotp *p, unsigned S, unsigned fa, unsigned fw)
{
    const size_t nb = p->K / 32, per = a4w4_split_k_per_split(p->K, S) / 32;
    float t1 = 0.0f, ts = 0.0f, to = 0.0f;
    a4w4j_win total, split;
    a4w4j_prove prove;
    a4w4j_bound_acc bound;
    double tpos = 0.0, tneg = 0.0;
    int uncertain = 0, split_nan = 0;
    a4w4j_win_init(&total);
    a4w4j_win_init(&split);
    a4w4j_prove_init(&prove);
    a4w4j_bound_init(&bound);
    for (size_t b = 0; b < nb; b++) {
        int d, ia;
        block_dots(p, b, &d, &ia);
        const unsigned sa = p->as[b], sb = p->ws[b];
        const float v = a4w4j_block_value(d, sa, sb);
        t1 = J_FADD(t1, v);
        ts = J_FADD(ts, v);
        a4w4j_win_add(&total, d, sa, sb);
        a4w4j_win_add(&split, d, sa, sb);
        a4w4j_prove_add(&prove, ia, sa, sb);
        if (sa != 0xFFu && sb != 0xFFu) { /* d = ipos - ineg, ia = ipos + ineg */
            const double q = a4w4j_pow2d((int)(sa + sb) - 256);
            tpos = J_DADD(tpos, (double)((ia + d) / 2) * q);
            tneg = J_DADD(tneg, (double)((ia - d) / 2) * q);
        }
        if ((b + 1) % per == 0 || b + 1 == nb) {
            to = J_FADD(to, ts);
            ts = 0.0f;
            double pd;
            if (split.nan)
                split_nan = 1;
            else if (!a4w4j_win_round_d(&split, &pd))
                uncertain = 1;
            else
                a4w4j_bound_add(&bound, pd, tpos, tneg, (long long)((b + 1) % per ? (b + 1) % per : per));
            a4w4j_win_init(&split);
            tpos = tneg = 0.0;
        }
    }
    judged j;
    j.ord1 = a4w4j_bf16_of_f32(t1);
    j.ordS = a4w4j_bf16_of_f32(to);
    j.sure = a4w4j_win_round(&total, &j.ex_bf16, &j.ex_f32) && !uncertain;
    j.proven = a4w4j_proven(fa, fw, &prove);
    j.B = split_nan || total.nan ? NAN : a4w4j_bound_final(&bound);
    return j;
}

/* One output as a4w4j_fixed_kernel computes it (the fixed base, a4w4_judge_math.h): exact
 * bf16 and fp32, the prover, the bounded(S) limits. 0 when the output is not the fixed base's
 * (a4w4j_fix_takes). */
typedef struct {
    uint32_t ex_bf16;
    float ex_f32;
    int proven;
    double B, E;
    unsigned infs;
} fixed_out;

static long narrow_n; /* blocks the narrow form summed */

static int judge_fixed(const dotp *p, unsigned S, unsigned fa, unsigned fw, fixed_out *out)
{
    const size_t nb = p->K / 32, per = a4w4_split_k_per_split(p->K, S) / 32;
    uint8_t la, sa, lw, sw;
    a4w4j_row_span(p->a, p->as, (long long)nb, &la, &sa);
    a4w4j_row_span(p->w, p->ws, (long long)nb, &lw, &sw);
    if (!a4w4j_fix_takes(sa, sw, a4w4j_fix_limit((long long)nb)))
        return 0;
    const int base = la + lw, nan = sa == A4W4J_SPAN_NAN || sw == A4W4J_SPAN_NAN;
    const int lim = a4w4j_fix_limit((long long)nb);
    const int narrow = a4w4j_fix_takes(sa, sw, lim < A4W4J_NARROW_SPAN ? lim : A4W4J_NARROW_SPAN);
    a4w4j_fix f, f0;
    a4w4j_fix32 l = {0, 0};
    a4w4j_bound_acc bound;
    a4w4j_fix_init(&f);
    f0 = f;
    a4w4j_bound_init(&bound);
    for (size_t b = 0; b < nb; b++) {
        int d, ia;
        block_dots(p, b, &d, &ia);
        const int split_end = (b + 1) % per == 0 || b + 1 == nb;
        if (narrow) { /* the kernel's narrow form: 32-bit sums flushed per chunk of 4 */
            a4w4j_fix32_add(&f, &l, d, ia, p->as[b] + p->ws[b], base);
            if (split_end || b % A4W4J_NARROW_BLOCKS == A4W4J_NARROW_BLOCKS - 1)
                a4w4j_fix_flush(&f, &l);
        } else {
            a4w4j_fix_add(&f, d, ia, p->as[b] + p->ws[b], base);
        }
        narrow_n += narrow;
        if (split_end) {
            a4w4j_fix_split(&bound, &f, &f0, base, (long long)((b + 1) % per ? (b + 1) % per : per));
            f0 = f;
        }
    }
    out->ex_bf16 = 0x7FC0u;
    out->ex_f32 = NAN;
    if (!nan)
        a4w4j_fix_round(&f, base, &out->ex_bf16, &out->ex_f32);
    out->proven = a4w4j_fix_proven(fa, fw, &f, base);
    out->B = nan ? NAN : a4w4j_bound_final(&bound);
    out->E = nan ? NAN : a4w4j_fix_round_d(&f, base);
    out->infs = nan ? 0u : a4w4j_bound_infs(&bound);
    return 1;
}

/* ---- random cases -------------------------------------------------------------------------- */
enum { R_NARROW, R_EXACT, R_TINY, R_WIDE, R_FULL, R_ZEROS, R_EDGE, R_COUNT };
static const char *const rname[R_COUNT] = {"narrow", "exact-like", "tiny", "wide", "full range",
                                           "zero rows", "span at the fixed base's limit"};

static uint8_t gen_scale(int regime, size_t b, int w_side, size_t nb)
{
    switch (regime) {
    case R_EDGE: { /* the A and W spans add up to the limit (or one less when it is odd) */
        const int half = a4w4j_fix_limit((long long)nb) / 2;
        return (uint8_t)(w_side ? 90 + (rnd() % 2) * half : 80 + (rnd() % 3 == 0) * half);
    }
    case R_NARROW: return (uint8_t)(120 + rnd() % 12);
    case R_EXACT: return (uint8_t)(127 + rnd() % 2);
    case R_TINY: return (uint8_t)(w_side ? 60 + rnd() % 8 : 55 + rnd() % 8);
    case R_WIDE: { /* centre per block (as the generator's wide regime), outliers of +-50 */
        const int cb = 1 + (int)((b * 2654435761u) % 254);
        int code = (w_side ? 255 - cb : cb) + (int)(rnd() % 17) - 8;
        if (rnd() % 16 == 0)
            code += (int)(rnd() % 101) - 50;
        return (uint8_t)(code < 0 ? 0 : code > 254 ? 254 : code);
    }
    case R_FULL: {
        const unsigned u = (unsigned)(rnd() % 40);
        return (uint8_t)(u == 0 ? 0xFF : u == 1 ? 0 : u == 2 ? 254 : u == 3 ? 253 : rnd() % 255);
    }
    default: return (uint8_t)(125 + rnd() % 4);
    }
}

static void gen_codes(uint8_t *row, size_t K, int regime, int zero_row)
{
    for (size_t i = 0; i < K / 2; i++) {
        uint8_t v = (uint8_t)rnd();
        if (regime == R_EXACT)
            v &= 0x33; /* small magnitudes */
        if (zero_row)
            v = (uint8_t)(rnd() % 2 ? 0x88 : rnd() % 2 ? 0x00 : 0x80);
        row[i] = v;
    }
}

static void test_case(size_t M, size_t N, size_t K, int regime, unsigned S, long *stats)
{
    const size_t nb = K / 32;
    uint8_t *a = (uint8_t *)calloc(M * K / 2, 1), *as = (uint8_t *)calloc(M * nb, 1);
    uint8_t *w = (uint8_t *)calloc(N * K / 2, 1), *ws = (uint8_t *)calloc(N * nb, 1);
    for (size_t m = 0; m < M; m++) {
        gen_codes(a + m * K / 2, K, regime, regime == R_ZEROS && m % 2 == 0);
        for (size_t b = 0; b < nb; b++)
            as[m * nb + b] = gen_scale(regime, b, 0, nb);
    }
    for (size_t n = 0; n < N; n++) {
        gen_codes(w + n * K / 2, K, regime, regime == R_ZEROS && n % 3 == 0);
        for (size_t b = 0; b < nb; b++)
            ws[n * nb + b] = gen_scale(regime, b, 1, nb);
    }
    uint16_t *o1 = (uint16_t *)malloc(M * N * 2), *oS = (uint16_t *)malloc(M * N * 2);
    uint16_t *ex = (uint16_t *)malloc(M * N * 2);
    float *exf = (float *)malloc(M * N * 4);
    a4w4_gemm_ordered(a, as, w, ws, M, N, K, 1, o1, NULL);
    a4w4_gemm_ordered(a, as, w, ws, M, N, K, S, oS, NULL);
    a4w4_gemm_exact(a, as, w, ws, M, N, K, ex, exf);
    long bad_o = 0, bad_e = 0, bad_b = 0, bad_p = 0, unsure = 0, bad_f = 0, fixed = 0;
    for (size_t m = 0; m < M; m++) {
        const unsigned fa = a4w4j_row_facts(a + m * K / 2, as + m * nb, (long long)nb);
        for (size_t n = 0; n < N; n++) {
            const unsigned fw = a4w4j_row_facts(w + n * K / 2, ws + n * nb, (long long)nb);
            dotp p = {a + m * K / 2, as + m * nb, w + n * K / 2, ws + n * nb, K};
            const judged j = judge_output(&p, S, fa, fw);
            const size_t o = m * N + n;
            const int nan1 = (o1[o] & 0x7FFF) > 0x7F80, nanS = (oS[o] & 0x7FFF) > 0x7F80;
            bad_o += !(j.ord1 == o1[o] || (nan1 && (j.ord1 & 0x7FFF) > 0x7F80));
            bad_o += !(j.ordS == oS[o] || (nanS && (j.ordS & 0x7FFF) > 0x7F80));
            if (!j.sure) {
                unsure++;
            } else {
                uint32_t gf, wf;
                memcpy(&gf, &j.ex_f32, 4);
                memcpy(&wf, &exf[o], 4);
                const int nan = isnan(exf[o]);
                bad_e += !(nan ? isnan(j.ex_f32) && (j.ex_bf16 & 0x7FFF) > 0x7F80
                               : gf == wf && j.ex_bf16 == ex[o]);
                a4w4_dot_operands op = {p.a, p.as, p.w, p.ws, K};
                const double B = a4w4_dot_bounded_bound(&op, S);
                bad_b += !(memcmp(&B, &j.B, 8) == 0 || (isnan(B) && isnan(j.B)));
            }
            a4w4_dot_operands op = {p.a, p.as, p.w, p.ws, K};
            const int regime_ok = a4w4_exact_regime(&op);
            bad_p += j.proven != regime_ok;
            fixed_out fx;
            if (judge_fixed(&p, S, fa, fw, &fx)) {
                fixed++;
                a4w4_bounded_limits L;
                a4w4_dot_bounded_limits(&op, S, &L);
                uint32_t gf, wf;
                memcpy(&gf, &fx.ex_f32, 4);
                memcpy(&wf, &exf[o], 4);
                const int ok_e = isnan(exf[o]) ? isnan(fx.ex_f32) && fx.ex_bf16 == 0x7FC0u
                                               : gf == wf && fx.ex_bf16 == ex[o];
                const int ok_l = (memcmp(&L.bound, &fx.B, 8) == 0 || (isnan(L.bound) && isnan(fx.B))) &&
                                 (memcmp(&L.exact, &fx.E, 8) == 0 || (isnan(L.exact) && isnan(fx.E))) &&
                                 fx.infs == ((L.inf_pos ? A4W4J_INF_POS : 0u) | (L.inf_neg ? A4W4J_INF_NEG : 0u));
                bad_f += !ok_e || !ok_l || fx.proven != regime_ok;
            }
        }
    }
    char what[200];
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu: ordered(1), ordered(%u)", rname[regime], M,
             N, K, S);
    check(bad_o == 0, what, bad_o, (long)(2 * M * N));
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu: exact bf16+fp32 (%ld of %zu certified)",
             rname[regime], M, N, K, (long)(M * N) - unsure, M * N);
    check(bad_e == 0, what, bad_e, (long)(M * N) - unsure);
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu: bounded(%u) bound, same double",
             rname[regime], M, N, K, S);
    check(bad_b == 0, what, bad_b, (long)(M * N) - unsure);
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu: exact-regime prover", rname[regime], M, N,
             K);
    check(bad_p == 0, what, bad_p, (long)(M * N));
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu: fixed base (exact, prover, bounded(%u) "
             "limits) on %ld of %zu outputs", rname[regime], M, N, K, S, fixed, M * N);
    check(bad_f == 0, what, bad_f, fixed);
    stats[0] += unsure;
    stats[1] += (long)(M * N);
    stats[2] += fixed;
    free(a);
    free(as);
    free(w);
    free(ws);
    free(o1);
    free(oS);
    free(ex);
    free(exf);
}

static void test_preshuffle(void)
{
    static const size_t shapes[][2] = {{16, 64}, {48, 320}, {272, 192}};
    long bad = 0, n = 0;
    for (size_t c = 0; c < 3; c++) {
        const size_t N = shapes[c][0], K = shapes[c][1], Kb = K / 2;
        uint8_t *w = (uint8_t *)malloc(N * Kb), *want = (uint8_t *)malloc(N * Kb),
                *got = (uint8_t *)malloc(N * Kb);
        for (size_t i = 0; i < N * Kb; i++)
            w[i] = (uint8_t)rnd();
        a4w4_preshuffle(w, N, K, want);
        for (size_t i = 0; i < N * (Kb / 16); i++) { /* a4w4_judge_cmp.hip's j_preshuffle */
            const size_t r = i / (Kb / 16), kr = i % (Kb / 16);
            const size_t n0 = r / 16, n1 = r % 16, k0 = kr / 2, k1 = kr % 2;
            memcpy(got + (((n0 * (Kb / 32) + k0) * 2 + k1) * 16 + n1) * 16, w + r * Kb + kr * 16,
                   16);
        }
        bad += memcmp(got, want, N * Kb) != 0;
        n++;
        free(w);
        free(want);
        free(got);
    }
    check(bad == 0, "judge preshuffle index map vs a4w4_preshuffle", bad, n);
}

/* atomic(S)'s adds and its set (contracts §4.1 "atomic(S)"): the judge's Heap-order
 * enumeration against ref/'s lexicographic one on random split values (near one another, so
 * that orders differ; one in 16 a NaN or an Inf), n = 1 .. 6, for every candidate output the
 * ref set holds and one ULP beside each. */
static void test_atomic(void)
{
    long bad = 0, total = 0, multi = 0;
    for (int t = 0; t < 3000; t++) {
        const unsigned n = 1 + (unsigned)(rnd() % 6);
        uint16_t q[6], res[720];
        uint32_t v[6];
        const unsigned e = 100 + (unsigned)(rnd() % 60);
        for (unsigned j = 0; j < n; j++) {
            q[j] = (uint16_t)(((e + rnd() % 9) << 7) | (rnd() & 0x7F) | (rnd() % 3 ? 0 : 0x8000));
            if (rnd() % 16 == 0)
                q[j] = rnd() % 2 ? 0x7FC0 : 0xFF80;
            v[j] = q[j];
        }
        const unsigned nr = a4w4_atomic_results(q, n, res);
        multi += nr > 1;
        bad += a4w4j_atomic_fold(v, (int)n) != a4w4_atomic_fold(q, NULL, n);
        for (unsigned r = 0; r < nr; r++)
            for (int d = -1; d <= 1; d++) {
                const uint16_t g = (uint16_t)(res[r] + d);
                bad += !a4w4j_atomic_member(v, (int)n, g) != !a4w4_atomic_member(q, n, g);
                total++;
            }
    }
    check(bad == 0, "atomic(S) adds and set membership vs ref/a4w4_atomic.c", bad, total);
    check(multi > 500, "atomic(S): random sets of more than one result were met",
          multi > 500 ? 0 : 1, 3000);
}

int main(void)
{
    test_basics();
    test_preshuffle();
    test_atomic();
    long stats[3] = {0, 0, 0};
    static const size_t shapes[][3] = {{3, 17, 256}, {8, 8, 2048}, {2, 5, 8192}, {1, 3, 32},
                                       {5, 4, 768}, {2, 2, 65536}};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    for (int r = 0; r < R_COUNT; r++)
        for (size_t s = 0; s < 6; s++)
            test_case(shapes[s][0], shapes[s][1], shapes[s][2], r, Ss[(r + s) % 5], stats);
    printf("NOTE uncertain outputs (handed to the plain oracle on the device path): %ld of %ld\n",
           stats[0], stats[1]);
    /* the fixed base must have been tried: narrow, exact-like, tiny, zero rows and most of
     * the edge regime take it, wide never does */
    check(stats[2] > stats[1] / 2, "the fixed base took more than half of the outputs",
          stats[2] > stats[1] / 2 ? 0 : 1, stats[1]);
    check(narrow_n > 0, "the fixed base's narrow form summed some blocks", narrow_n ? 0 : 1, 1);
    printf("== judge emu summary: %ld passed, %ld failed\n%s\n", g_pass, g_fail,
           g_fail ? "RESULT: FAIL" : "RESULT: PASS");
    return g_fail ? 1 : 0;
}
