/* test_gemm.c — contracts §4 / §4.1 GEMM oracles against references written here:
 *
 *  - exact: an independent sign-magnitude big integer (base 2^32 uint32 limbs, positive and
 *    negative parts accumulated separately per ELEMENT product, subtracted at the end),
 *    rounded by RNE with a big-integer remainder-vs-half comparison and encoded to fp32 /
 *    bf16 bits by hand (bf16 rounded directly from the exact value, not via fp32). Random
 *    cases with wide scale spread plus hand-worked adversarial cases (ties, sticky bits,
 *    cancellation to zero, subnormal results, overflow, NaN scales, huge K with carries).
 *  - ordered(S): a plain loop (block dot in double, scaled, rounded once to fp32, fp32
 *    accumulation per split, split totals in order), split sizes worked by hand, and a
 *    constructed case where ordered(1) != ordered(2).
 *  - sgemm: equal to exact wherever the prover says so; the prover itself on hand-built
 *    edges and against an independent statement of the contracts §4.1 regime. */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "test_util.h"

/* ---- small helpers ----------------------------------------------------------------------- */

static tu_rng rng = {0xA4093822299F31D0ull}; /* splitmix64 */

static unsigned rnd(unsigned n)
{
    return tu_splitmix64_below(&rng, n);
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float ffrom(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void *xcalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    cr_assert_not_null(p);
    return p;
}

/* Own nibble access and E2M1 tables (contracts §1), independent of a4w4_formats. */
static uint8_t get4(const uint8_t *row, size_t k)
{
    return (uint8_t)((row[k / 2] >> ((k % 2) * 4)) & 15);
}

static void set4(uint8_t *row, size_t k, uint8_t c)
{
    unsigned sh = (unsigned)(k % 2) * 4;
    row[k / 2] = (uint8_t)((row[k / 2] & ~(15u << sh)) | ((c & 15u) << sh));
}

static const int twice_val[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
static const double e2m1_val[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                    -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

static int is_nan16(uint16_t h)
{
    return (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
}

/* Own fp32 -> bf16 RNE (for ordered results). */
static uint16_t my_bf16(float f)
{
    uint32_t u = fbits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x40);
    uint32_t hi = u >> 16, lo = u & 0xFFFF;
    if (lo > 0x8000 || (lo == 0x8000 && (hi & 1)))
        hi++;
    return (uint16_t)hi;
}

/* ---- independent big integer -------------------------------------------------------------- */

#define RL 28 /* 896 bits: max |sum| < 144 * 2^508 * 2^18 < 2^534 */

typedef struct {
    uint32_t w[RL];
} ubig;

static void ub_add_shifted(ubig *x, uint32_t v, unsigned sh)
{
    unsigned i = sh / 32;
    uint64_t add = (uint64_t)v << (sh % 32), carry = 0;
    while (add || carry) {
        cr_assert_lt(i, RL, "ubig overflow");
        uint64_t s = (uint64_t)x->w[i] + (add & 0xFFFFFFFFu) + carry;
        x->w[i] = (uint32_t)s;
        carry = s >> 32;
        add >>= 32;
        i++;
    }
}

static int ub_cmp(const ubig *a, const ubig *b)
{
    for (int i = RL - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] > b->w[i] ? 1 : -1;
    return 0;
}

static void ub_sub(ubig *a, const ubig *b) /* a -= b, a >= b */
{
    int64_t borrow = 0;
    for (int i = 0; i < RL; i++) {
        int64_t d = (int64_t)a->w[i] - (int64_t)b->w[i] - borrow;
        borrow = d < 0;
        a->w[i] = (uint32_t)(d + (borrow ? ((int64_t)1 << 32) : 0));
    }
    cr_assert_eq(borrow, 0);
}

static int ub_top(const ubig *a)
{
    for (int i = RL - 1; i >= 0; i--)
        if (a->w[i])
            for (int j = 31; j >= 0; j--)
                if (a->w[i] >> j & 1u)
                    return i * 32 + j;
    return -1;
}

static int ub_bit(const ubig *a, int pos)
{
    return (int)(a->w[pos / 32] >> (pos % 32) & 1u);
}

/* out = a mod 2^n */
static void ub_low(const ubig *a, int n, ubig *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < RL; i++) {
        if ((i + 1) * 32 <= n)
            out->w[i] = a->w[i];
        else if (i * 32 < n)
            out->w[i] = a->w[i] & ((1u << (n - i * 32)) - 1u);
    }
}

static void ub_pow2(ubig *out, int n)
{
    memset(out, 0, sizeof *out);
    out->w[n / 32] = 1u << (n % 32);
}

/* |value| = mag * 2^-256 rounded to nearest-even in a binary format with p significand
 * bits and fp32's exponent range (bias 127, emin -126). Returns the magnitude bits:
 * exponent field << (p-1) | fraction. */
static uint32_t ref_round(const ubig *mag, int p)
{
    int top = ub_top(mag);
    if (top < 0)
        return 0;
    int E = top - 256;
    int Eq = (E < -126 ? -126 : E) - (p - 1); /* exponent of one unit in the last place */
    int qb = Eq + 256;                        /* its bit position in mag (> 0 here) */
    cr_assert_gt(qb, 0);
    uint64_t m = 0;
    for (int i = top; i >= qb; i--)
        m = (m << 1) | (uint64_t)ub_bit(mag, i);
    ubig rem, half;
    ub_low(mag, qb, &rem);
    ub_pow2(&half, qb - 1);
    int c = ub_cmp(&rem, &half);
    if (c > 0 || (c == 0 && (m & 1)))
        m++;
    if (m == (1ull << p)) {
        m >>= 1;
        Eq++;
    }
    if (m < (1ull << (p - 1)))
        return (uint32_t)m; /* subnormal (or zero): exponent field 0 */
    int be = Eq + (p - 1) + 127;
    if (be >= 255)
        return 0xFFu << (p - 1); /* Inf */
    return ((uint32_t)be << (p - 1)) | (uint32_t)(m - (1ull << (p - 1)));
}

typedef struct {
    uint16_t bf16;
    uint32_t f32;
} ref_out;

/* Exact reference for one output: rows of length K. */
static ref_out ref_exact(const uint8_t *af, const uint8_t *as, const uint8_t *wf,
                         const uint8_t *ws, size_t K)
{
    ref_out r;
    for (size_t b = 0; b < K / 32; b++)
        if (as[b] == 0xFF || ws[b] == 0xFF) {
            r.bf16 = 0x7FC0;
            r.f32 = 0x7FC00000u;
            return r;
        }
    static ubig pos, neg; /* static: keeps the stack small */
    memset(&pos, 0, sizeof pos);
    memset(&neg, 0, sizeof neg);
    for (size_t k = 0; k < K; k++) {
        int p = twice_val[get4(af, k)] * twice_val[get4(wf, k)];
        unsigned e = (unsigned)as[k / 32] + ws[k / 32];
        /* a*b = (ia/2)(ib/2) 2^(sa-127) 2^(sb-127) = ia*ib * 2^(e-256) */
        if (p > 0)
            ub_add_shifted(&pos, (uint32_t)p, e);
        else if (p < 0)
            ub_add_shifted(&neg, (uint32_t)-p, e);
    }
    int c = ub_cmp(&pos, &neg);
    uint32_t sign = 0;
    if (c >= 0) {
        ub_sub(&pos, &neg);
    } else {
        ub_sub(&neg, &pos);
        pos = neg;
        sign = 1;
    }
    r.f32 = (sign << 31) | ref_round(&pos, 24);
    r.bf16 = (uint16_t)((sign << 15) | ref_round(&pos, 8));
    return r;
}

/* Plain ordered(S) loop (contracts §4.1): k_per = 256 * ceil(ceil(K/S) / 256), at least 256. */
static float ref_ordered(const uint8_t *af, const uint8_t *as, const uint8_t *wf,
                         const uint8_t *ws, size_t K, unsigned S)
{
    size_t per = (K + S - 1) / S;
    per = 256 * ((per + 255) / 256);
    if (per < 256)
        per = 256;
    float total = 0.0f;
    for (size_t k0 = 0; k0 < K; k0 += per) {
        size_t k1 = k0 + per < K ? k0 + per : K;
        float part = 0.0f;
        for (size_t b = k0 / 32; b < k1 / 32; b++) {
            if (as[b] == 0xFF || ws[b] == 0xFF)
                return ffrom(0x7FC00000u);
            double d = 0.0; /* exact: multiples of 1/4, |d| <= 1152 */
            for (size_t k = b * 32; k < b * 32 + 32; k++)
                d += e2m1_val[get4(af, k)] * e2m1_val[get4(wf, k)];
            double v = ldexp(d, (int)as[b] + (int)ws[b] - 254); /* exact in double */
            part += (float)v;                                    /* the one rounding */
        }
        total += part;
    }
    return total;
}

/* Independent statement of the contracts §4.1 regime for one output: no 0xFF scale, every
 * dequantized operand finite, smallest nonzero-term quantum q >= 2^-149 and
 * sum |terms| < 2^24 q. *emin_out = min sa+sb over nonzero terms (or -1). */
static int ref_regime(const uint8_t *af, const uint8_t *as, const uint8_t *wf,
                      const uint8_t *ws, size_t K, int *emin_out)
{
    *emin_out = -1;
    for (size_t b = 0; b < K / 32; b++)
        if (as[b] == 0xFF || ws[b] == 0xFF)
            return 0;
    int emin = 100000;
    for (size_t k = 0; k < K; k++) {
        double va = fabs(ldexp(e2m1_val[get4(af, k)], (int)as[k / 32] - 127));
        double vw = fabs(ldexp(e2m1_val[get4(wf, k)], (int)ws[k / 32] - 127));
        if (va > FLT_MAX || vw > FLT_MAX)
            return 0;
        if (twice_val[get4(af, k)] * twice_val[get4(wf, k)] != 0) {
            int e = (int)as[k / 32] + ws[k / 32];
            if (e < emin)
                emin = e;
        }
    }
    if (emin == 100000)
        return 1;
    *emin_out = emin;
    if (emin - 256 < -149)
        return 0;
    uint64_t units = 0;
    for (size_t k = 0; k < K; k++) {
        int p = abs(twice_val[get4(af, k)] * twice_val[get4(wf, k)]);
        if (!p)
            continue;
        int d = (int)as[k / 32] + ws[k / 32] - emin;
        if (d >= 30)
            return 0;
        units += (uint64_t)p << d;
    }
    return units < (1u << 24);
}

/* ---- one-row builder for hand cases --------------------------------------------------------- */

#define HK 1024

typedef struct {
    size_t K;
    uint8_t a[HK / 2], as[HK / 32], w[HK / 2], ws[HK / 32];
} row1;

static void r_init(row1 *r, size_t K)
{
    memset(r, 0, sizeof *r);
    r->K = K;
    memset(r->as, 127, sizeof r->as);
    memset(r->ws, 127, sizeof r->ws);
}

/* element k gets codes (ca, cw); its block gets scales (sa, sw) */
static void r_term(row1 *r, size_t k, uint8_t ca, uint8_t cw, uint8_t sa, uint8_t sw)
{
    set4(r->a, k, ca);
    set4(r->w, k, cw);
    r->as[k / 32] = sa;
    r->ws[k / 32] = sw;
}

static a4w4_dot_operands r_op(const row1 *r)
{
    a4w4_dot_operands op = {r->a, r->as, r->w, r->ws, r->K};
    return op;
}

/* Check oracle exact and the independent reference against hand-worked bits. */
static void expect_exact(const row1 *r, uint16_t want_bf16, uint32_t want_f32, const char *what)
{
    a4w4_dot_operands op = r_op(r);
    uint16_t h = 0x1234;
    float f = -1.0f;
    a4w4_dot_exact(&op, &h, &f);
    ref_out ro = ref_exact(r->a, r->as, r->w, r->ws, r->K);
    cr_expect_eq(ro.bf16, want_bf16, "[test reference] %s: bf16 0x%04X, hand 0x%04X", what,
                 ro.bf16, want_bf16);
    cr_expect_eq(ro.f32, want_f32, "[test reference] %s: f32 0x%08X, hand 0x%08X", what, ro.f32,
                 want_f32);
    cr_expect_eq(h, want_bf16, "%s: exact bf16 0x%04X, want 0x%04X", what, h, want_bf16);
    cr_expect_eq(fbits(f), want_f32, "%s: exact f32 0x%08X, want 0x%08X", what, fbits(f),
                 want_f32);
    /* whole-matrix form with M = N = 1 gives the same bits */
    uint16_t y = 0;
    float yf = 0;
    cr_expect_eq(a4w4_gemm_exact(r->a, r->as, r->w, r->ws, 1, 1, r->K, &y, &yf), A4W4_OK);
    cr_expect_eq(y, want_bf16, "%s: gemm_exact bf16 0x%04X", what, y);
    cr_expect_eq(fbits(yf), want_f32, "%s: gemm_exact f32 0x%08X", what, fbits(yf));
}

/* Term codes: code 1 (0.5, twice=1) x code 1 -> 1 unit = 2^(sa+sw-256);
 * code 2 (1.0) x code 2 -> 4 units = 2^(sa+sw-254); code 9 = -0.5. */

/* ---- exact: hand-worked cases --------------------------------------------------------------- */

Test(exact_hand, bf16_ties_and_sticky)
{
    row1 r;
    /* 1 + 2^-8: b0 1.0 (2x2 @127,127), b1 2^-8 (1x1 @ sa+sw=248). bf16 tie between 0x3F80
     * and 0x3F81 -> even 0x3F80; f32 exact 0x3F808000. */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 124, 124);
    expect_exact(&r, 0x3F80, 0x3F808000u, "1+2^-8");
    /* + 2^-256 (1x1 @ 0,0): sticky breaks the tie upward -> 0x3F81; f32 0x3F808000 */
    r_term(&r, 64, 1, 1, 0, 0);
    expect_exact(&r, 0x3F81, 0x3F808000u, "1+2^-8+2^-256");
    /* - 2^-256 instead: just below the tie -> 0x3F80 */
    r_term(&r, 64, 9, 1, 0, 0);
    expect_exact(&r, 0x3F80, 0x3F808000u, "1+2^-8-2^-256");
    /* 1 + 2^-7 + 2^-8: tie between 0x3F81 (odd) and 0x3F82 -> 0x3F82; f32: 2^-7 is
     * fraction bit 16, 2^-8 bit 15 -> 0x3F818000 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 125, 124);
    r_term(&r, 64, 1, 1, 124, 124);
    expect_exact(&r, 0x3F82, 0x3F818000u, "1+2^-7+2^-8");
    /* negative mirror: -(1 + 2^-7 + 2^-8) -> 0xBF82 / 0xBF818000 */
    r_term(&r, 0, 10, 2, 127, 127);
    r_term(&r, 32, 9, 1, 125, 124);
    r_term(&r, 64, 9, 1, 124, 124);
    expect_exact(&r, 0xBF82, 0xBF818000u, "-(1+2^-7+2^-8)");
}

Test(exact_hand, f32_ties_and_sticky)
{
    row1 r;
    /* 1 + 2^-24 (1x1 @ sa+sw=232): f32 tie -> even 0x3F800000, bf16 0x3F80 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 116, 116);
    expect_exact(&r, 0x3F80, 0x3F800000u, "1+2^-24");
    /* + 2^-256 -> 0x3F800001 */
    r_term(&r, 64, 1, 1, 0, 0);
    expect_exact(&r, 0x3F80, 0x3F800001u, "1+2^-24+2^-256");
    /* 1 + 2^-24 + 2^-24 (two blocks) = 1 + 2^-23 exactly -> 0x3F800001 */
    r_term(&r, 64, 1, 1, 116, 116);
    expect_exact(&r, 0x3F80, 0x3F800001u, "1+2*2^-24");
    /* (1 + 2^-23) + 2^-24: tie with odd lsb -> 1 + 2^-22 = 0x3F800002 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 117, 116);
    r_term(&r, 64, 1, 1, 116, 116);
    expect_exact(&r, 0x3F80, 0x3F800002u, "1+2^-23+2^-24");
}

Test(exact_hand, cancellation_to_exact_zero_is_plus_zero)
{
    row1 r;
    /* 2^46 (2x2 @ 200,100 -> 4*2^44) - 2^46 (2x10 @ 100,200) + (2^-256 - 2^-256) = 0 -> +0 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 200, 100);
    r_term(&r, 32, 2, 10, 100, 200);
    r_term(&r, 64, 1, 1, 0, 0);
    r_term(&r, 65, 9, 1, 0, 0);
    expect_exact(&r, 0x0000, 0x00000000u, "2^46-2^46+tiny-tiny");
    /* every product a -0: A all code 8, W code 2 -> exact 0 -> +0 */
    r_init(&r, 64);
    for (size_t k = 0; k < 64; k++)
        r_term(&r, k, 8, 2, 127, 127);
    expect_exact(&r, 0x0000, 0x00000000u, "all (-0)*1");
    /* a product with a zero factor and a huge other side: 0 * 6*2^127 -> 0 */
    r_init(&r, 32);
    r_term(&r, 0, 0, 7, 254, 254);
    r_term(&r, 1, 7, 8, 254, 254);
    expect_exact(&r, 0x0000, 0x00000000u, "0*huge");
}

Test(exact_hand, subnormal_results)
{
    row1 r;
    struct {
        uint8_t ca, cw, sa, sw;
        uint16_t bf;
        uint32_t f;
        const char *what;
    } c[] = {
        /* 2^-130 (1x1, e=126): f32 2^19 quanta 0x00080000; bf16 8 quanta of 2^-133 */
        {1, 1, 63, 63, 0x0008, 0x00080000u, "2^-130"},
        /* 3*2^-135 (3x1, e=121): f32 3*2^14 = 0xC000; bf16 0.75 quanta -> 1 */
        {3, 1, 61, 60, 0x0001, 0x0000C000u, "3*2^-135"},
        /* 2^-134 (e=122): f32 0x8000; bf16 exactly half a quantum -> even 0 */
        {1, 1, 61, 61, 0x0000, 0x00008000u, "2^-134"},
        /* -2^-134: -> -0 in bf16 */
        {9, 1, 61, 61, 0x8000, 0x80008000u, "-2^-134"},
        /* 3*2^-134: bf16 1.5 quanta, tie -> 2 */
        {3, 1, 61, 61, 0x0002, 0x00018000u, "3*2^-134"},
        /* 2^-149 (e=107): f32 min subnormal; bf16 0 */
        {1, 1, 54, 53, 0x0000, 0x00000001u, "2^-149"},
        /* 2^-150 (e=106): f32 tie between 0 and 2^-149 -> 0 */
        {1, 1, 53, 53, 0x0000, 0x00000000u, "2^-150"},
        /* -2^-150 -> -0 */
        {9, 1, 53, 53, 0x8000, 0x80000000u, "-2^-150"},
        /* 3*2^-151 = 0.75*2^-149 -> 2^-149 */
        {3, 1, 53, 52, 0x0000, 0x00000001u, "3*2^-151"},
        /* 3*2^-150 = 1.5*2^-149 -> tie -> 2*2^-149 */
        {3, 1, 53, 53, 0x0000, 0x00000002u, "3*2^-150"},
        /* smallest term 2^-256 -> +0 */
        {1, 1, 0, 0, 0x0000, 0x00000000u, "2^-256"},
        /* -12*12*2^-256 -> -0 */
        {15, 7, 0, 0, 0x8000, 0x80000000u, "-144*2^-256"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        r_init(&r, 32);
        r_term(&r, 5, c[i].ca, c[i].cw, c[i].sa, c[i].sw);
        expect_exact(&r, c[i].bf, c[i].f, c[i].what);
    }
    /* 2^-150 + 2^-256 -> f32 2^-149 (sticky) */
    r_init(&r, 64);
    r_term(&r, 0, 1, 1, 53, 53);
    r_term(&r, 32, 1, 1, 0, 0);
    expect_exact(&r, 0x0000, 0x00000001u, "2^-150+2^-256");
    /* 2^-126 - 2^-134: f32 0x007F8000 (subnormal); bf16 tie between 0x007F and 0x0080
     * -> even 0x0080 */
    r_init(&r, 64);
    r_term(&r, 0, 1, 1, 65, 65);
    r_term(&r, 32, 9, 1, 61, 61);
    expect_exact(&r, 0x0080, 0x007F8000u, "2^-126-2^-134");
    /* 2^-126 - 2^-149: f32 0x007FFFFF; bf16 -> 0x0080 */
    r_init(&r, 64);
    r_term(&r, 0, 1, 1, 65, 65);
    r_term(&r, 32, 9, 1, 54, 53);
    expect_exact(&r, 0x0080, 0x007FFFFFu, "2^-126-2^-149");
}

Test(exact_hand, overflow)
{
    row1 r;
    /* 2^128: code 6 (4.0, twice 8) x code 2 (twice 2) = 16 units at e=380 -> 2^128.
     * 2^128 - 2^119 (1x9 at e=375): f32 (2-2^-8)*2^127 = 0x7F7F8000; bf16 tie between max
     * 0x7F7F (odd) and 2^128 -> Inf 0x7F80 */
    r_init(&r, 96);
    r_term(&r, 0, 6, 2, 254, 126);
    r_term(&r, 32, 1, 9, 254, 121);
    expect_exact(&r, 0x7F80, 0x7F7F8000u, "2^128-2^119");
    /* minus 2^-256: below the bf16 tie -> 0x7F7F */
    r_term(&r, 64, 9, 1, 0, 0);
    expect_exact(&r, 0x7F7F, 0x7F7F8000u, "2^128-2^119-2^-256");
    /* 2^128 - 2^103 (1x9 at e=359): f32 tie between FLT_MAX (odd) and 2^128 -> Inf */
    r_init(&r, 96);
    r_term(&r, 0, 6, 2, 254, 126);
    r_term(&r, 32, 1, 9, 254, 105);
    expect_exact(&r, 0x7F80, 0x7F800000u, "2^128-2^103");
    /* minus 2^-256 -> FLT_MAX; bf16 still Inf */
    r_term(&r, 64, 9, 1, 0, 0);
    expect_exact(&r, 0x7F80, 0x7F7FFFFFu, "2^128-2^103-2^-256");
    /* -2^128 -> -Inf */
    r_init(&r, 32);
    r_term(&r, 0, 14, 2, 254, 126);
    expect_exact(&r, 0xFF80, 0xFF800000u, "-2^128");
    /* largest single block: 32 * 144 * 2^252 -> Inf */
    r_init(&r, 32);
    for (size_t k = 0; k < 32; k++)
        r_term(&r, k, 7, 7, 254, 254);
    expect_exact(&r, 0x7F80, 0x7F800000u, "max block");
    /* An operand that is Inf in fp32 (6*2^127) times 2^-128 gives an exact 3.0 */
    r_init(&r, 32);
    r_term(&r, 0, 7, 1, 254, 0);
    expect_exact(&r, 0x4040, 0x40400000u, "Inf-operand * tiny = 3");
    /* Two Inf-sized terms cancelling: 2^128 - 2^128 + 1 = 1 */
    r_init(&r, 96);
    r_term(&r, 0, 6, 2, 254, 126);
    r_term(&r, 32, 14, 2, 254, 126);
    r_term(&r, 64, 2, 2, 127, 127);
    expect_exact(&r, 0x3F80, 0x3F800000u, "2^128-2^128+1");
}

Test(exact_hand, nan_scale_either_side)
{
    row1 r;
    /* 0xFF on A in block 1 (its codes zero) -> NaN 0x7FC0 / 0x7FC00000 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r.as[1] = 0xFF;
    expect_exact(&r, 0x7FC0, 0x7FC00000u, "A scale 0xFF");
    r.as[1] = 127;
    r.ws[2] = 0xFF;
    expect_exact(&r, 0x7FC0, 0x7FC00000u, "W scale 0xFF");
    /* ordered: NaN; S = 1..4 */
    a4w4_dot_operands op = r_op(&r);
    for (unsigned S = 1; S <= 4; S++)
        cr_expect(isnan(a4w4_dot_ordered(&op, S)), "ordered(%u) with 0xFF not NaN", S);
    cr_expect_eq(a4w4_exact_regime(&op), 0);
}

Test(exact_hand, dot_exact_null_outputs)
{
    row1 r;
    r_init(&r, 32);
    r_term(&r, 0, 3, 5, 127, 127); /* 1.5 * 3 = 4.5 -> 0x4090 / 0x40900000 */
    a4w4_dot_operands op = r_op(&r);
    uint16_t h = 0;
    float f = 0;
    a4w4_dot_exact(&op, &h, NULL);
    cr_expect_eq(h, 0x4090);
    a4w4_dot_exact(&op, NULL, &f);
    cr_expect_eq(fbits(f), 0x40900000u);
}

/* ---- exact: huge K with large lazy carries --------------------------------------------------- */

static void big_k_case(int negate)
{
    /* 8192 blocks (K = 262144). Blocks 0..4094: +4608 units at e = 479 (every element 6x6,
     * sa=240, sw=239; e mod 32 = 31 maximises one limb); block 4095: one 1x1 term at e=256
     * (+1.0); blocks 4096..8190: -4608 units at e = 479; block 8191: one -1 unit at e=250
     * (-2^-6). Total = 1 - 2^-6 = 0.984375 = 0x3F7C0000 (bf16 0x3F7C). negate: all signs
     * flipped -> 0xBF7C / 0xBF7C0000. */
    const size_t nb = 8192, K = nb * 32;
    uint8_t *a = xcalloc(K / 2), *w = xcalloc(K / 2), *as = xcalloc(nb), *ws = xcalloc(nb);
    uint8_t sg = negate ? 8 : 0;
    for (size_t b = 0; b < nb; b++) {
        if (b == 4095) {
            as[b] = 128, ws[b] = 128;
            set4(a + b * 16, 0, (uint8_t)(1 | sg));
            set4(w + b * 16, 0, 1);
        } else if (b == 8191) {
            as[b] = 125, ws[b] = 125;
            set4(a + b * 16, 0, (uint8_t)(9 ^ sg));
            set4(w + b * 16, 0, 1);
        } else {
            as[b] = 240, ws[b] = 239;
            uint8_t ca = (uint8_t)((b < 4096 ? 7 : 15) ^ sg);
            for (size_t k = 0; k < 32; k++) {
                set4(a + b * 16, k, ca);
                set4(w + b * 16, k, 7);
            }
        }
    }
    a4w4_dot_operands op = {a, as, w, ws, K};
    uint16_t h;
    float f;
    a4w4_dot_exact(&op, &h, &f);
    uint16_t wb = negate ? 0xBF7C : 0x3F7C;
    uint32_t wf = negate ? 0xBF7C0000u : 0x3F7C0000u;
    ref_out ro = ref_exact(a, as, w, ws, K);
    cr_expect_eq(ro.bf16, wb, "[test reference] 0x%04X", ro.bf16);
    cr_expect_eq(ro.f32, wf, "[test reference] 0x%08X", ro.f32);
    cr_expect_eq(h, wb, "big K exact bf16 0x%04X want 0x%04X", h, wb);
    cr_expect_eq(fbits(f), wf, "big K exact f32 0x%08X want 0x%08X", fbits(f), wf);
    free(a);
    free(w);
    free(as);
    free(ws);
}

Test(exact_hand, huge_k_carries_positive)
{
    big_k_case(0);
}

Test(exact_hand, huge_k_carries_negative)
{
    big_k_case(1);
}

Test(exact_random, huge_k_random_vs_reference)
{
    /* K = 32 * 9000 random codes, scales in a 40-wide band and fully wide. */
    const size_t nb = 9000, K = nb * 32;
    uint8_t *a = xcalloc(K / 2), *w = xcalloc(K / 2), *as = xcalloc(nb), *ws = xcalloc(nb);
    for (int t = 0; t < 4; t++) {
        for (size_t i = 0; i < K / 2; i++) {
            a[i] = (uint8_t)tu_splitmix64(&rng);
            w[i] = (uint8_t)tu_splitmix64(&rng);
        }
        for (size_t b = 0; b < nb; b++) {
            as[b] = (uint8_t)(t < 2 ? 100 + rnd(40) : rnd(255));
            ws[b] = (uint8_t)(t < 2 ? 100 + rnd(40) : rnd(255));
        }
        a4w4_dot_operands op = {a, as, w, ws, K};
        uint16_t h;
        float f;
        a4w4_dot_exact(&op, &h, &f);
        ref_out ro = ref_exact(a, as, w, ws, K);
        cr_expect_eq(h, ro.bf16, "t=%d bf16 0x%04X want 0x%04X", t, h, ro.bf16);
        cr_expect_eq(fbits(f), ro.f32, "t=%d f32 0x%08X want 0x%08X", t, fbits(f), ro.f32);
    }
    free(a);
    free(w);
    free(as);
    free(ws);
}

/* ---- random cases ---------------------------------------------------------------------------- */

typedef struct {
    size_t M, N, K;
    uint8_t *a, *as, *w, *ws;
} gcase;

static void gen_scales(uint8_t *s, size_t rows, size_t nb, int mode)
{
    static const uint8_t extremes[] = {0, 1, 2, 3, 125, 126, 127, 128, 251, 252, 253, 254};
    for (size_t r = 0; r < rows; r++) {
        unsigned base = rnd(247);
        size_t huge = rnd((unsigned)nb);
        for (size_t b = 0; b < nb; b++) {
            uint8_t v;
            switch (mode) {
            case 0: v = (uint8_t)rnd(255); break;                         /* uniform 0..254 */
            case 1: v = (uint8_t)(base + rnd(8)); break;                  /* band */
            case 2: v = extremes[rnd(sizeof extremes)]; break;            /* extremes */
            case 3: v = (uint8_t)(b == huge ? 200 + rnd(55) : rnd(31)); break; /* 1 huge */
            case 4: v = 127; break;
            case 5: v = (uint8_t)(120 + rnd(15)); break;                  /* near 1.0 */
            default: v = (uint8_t)(b == huge ? 160 + rnd(20) : 100 + rnd(20)); break;
            }
            s[r * nb + b] = v;
        }
    }
}

static void gen_codes(uint8_t *p, size_t nbytes, int mode)
{
    for (size_t i = 0; i < nbytes; i++) {
        uint8_t v = (uint8_t)tu_splitmix64(&rng);
        switch (mode) {
        case 0: break;
        case 1: /* sparse */
            if (rnd(8))
                v &= 0xF0;
            if (rnd(8))
                v &= 0x0F;
            break;
        case 2: v &= 0x99; break; /* codes in {0, 1, 8, 9}: 0, +-0.5, -0 */
        case 3: v |= 0x77; break; /* +-6 only */
        default: v &= 0xBB; break; /* {0,1,2,3} with signs */
        }
        p[i] = v;
    }
}

static gcase gen_case(size_t M, size_t N, size_t K, int smode_a, int smode_w, int cmode_a,
                      int cmode_w)
{
    gcase g = {M, N, K, xcalloc(M * K / 2), xcalloc(M * K / 32), xcalloc(N * K / 2),
               xcalloc(N * K / 32)};
    gen_codes(g.a, M * K / 2, cmode_a);
    gen_codes(g.w, N * K / 2, cmode_w);
    gen_scales(g.as, M, K / 32, smode_a);
    gen_scales(g.ws, N, K / 32, smode_w);
    return g;
}

static void free_case(gcase *g)
{
    free(g->a);
    free(g->as);
    free(g->w);
    free(g->ws);
}

#define ROW_A(g, m) ((g)->a + (m) * ((g)->K / 2)), ((g)->as + (m) * ((g)->K / 32))
#define ROW_W(g, n) ((g)->w + (n) * ((g)->K / 2)), ((g)->ws + (n) * ((g)->K / 32))

/* Cancellation structure: second half of the A row is the first half negated, W halves
 * and both scale halves equal -> exact sum 0 for every output. */
static void make_cancelling(gcase *g)
{
    size_t hk = g->K / 2, hb = g->K / 64;
    for (size_t m = 0; m < g->M; m++) {
        uint8_t *a = g->a + m * (g->K / 2), *as = g->as + m * (g->K / 32);
        for (size_t k = 0; k < hk; k++)
            set4(a, hk + k, (uint8_t)(get4(a, k) ^ 8));
        memcpy(as + hb, as, hb);
    }
    for (size_t n = 0; n < g->N; n++) {
        uint8_t *w = g->w + n * (g->K / 2), *ws = g->ws + n * (g->K / 32);
        memcpy(w + hk / 2, w, hk / 2);
        memcpy(ws + hb, ws, hb);
    }
}

static void check_exact_case(gcase *g, const char *tag, int trial)
{
    size_t MN = g->M * g->N;
    uint16_t *y = xcalloc(MN * 2);
    float *yf = xcalloc(MN * 4);
    cr_assert_eq(a4w4_gemm_exact(g->a, g->as, g->w, g->ws, g->M, g->N, g->K, y, yf), A4W4_OK);
    for (size_t m = 0; m < g->M; m++)
        for (size_t n = 0; n < g->N; n++) {
            ref_out ro = ref_exact(ROW_A(g, m), ROW_W(g, n), g->K);
            size_t i = m * g->N + n;
            if (y[i] != ro.bf16 || fbits(yf[i]) != ro.f32)
                cr_assert_fail("%s trial %d (M=%zu N=%zu K=%zu) out (%zu,%zu): exact bf16 0x%04X "
                               "f32 0x%08X, reference 0x%04X 0x%08X",
                               tag, trial, g->M, g->N, g->K, m, n, y[i], fbits(yf[i]), ro.bf16,
                               ro.f32);
        }
    free(y);
    free(yf);
}

Test(exact_random, wide_scale_spread)
{
    for (int t = 0; t < 3000; t++) {
        size_t M = 1 + rnd(4), N = 1 + rnd(4), K = 32 * (1 + rnd(16));
        int sa = (int)rnd(7), sw = (int)rnd(7);
        if (t % 3 == 0)
            sa = sw = 0; /* both sides uniform 0..254 */
        gcase g = gen_case(M, N, K, sa, sw, (int)rnd(5), (int)rnd(5));
        check_exact_case(&g, "wide", t);
        free_case(&g);
    }
}

Test(exact_random, one_huge_block_many_tiny)
{
    for (int t = 0; t < 500; t++) {
        size_t K = 32 * (2 + rnd(31));
        gcase g = gen_case(1 + rnd(3), 1 + rnd(3), K, 3, (int)(rnd(2) ? 3 : 4), 0, (int)rnd(5));
        check_exact_case(&g, "huge+tiny", t);
        free_case(&g);
    }
}

Test(exact_random, cancellation_to_exact_zero)
{
    for (int t = 0; t < 400; t++) {
        size_t K = 64 * (1 + rnd(8));
        gcase g = gen_case(1 + rnd(3), 1 + rnd(3), K, (int)rnd(7), (int)rnd(7), (int)rnd(5),
                           (int)rnd(5));
        make_cancelling(&g);
        size_t MN = g.M * g.N;
        uint16_t *y = xcalloc(MN * 2);
        float *yf = xcalloc(MN * 4);
        cr_assert_eq(a4w4_gemm_exact(g.a, g.as, g.w, g.ws, g.M, g.N, g.K, y, yf), A4W4_OK);
        for (size_t i = 0; i < MN; i++) {
            cr_assert_eq(y[i], 0x0000, "trial %d out %zu: bf16 0x%04X, want +0", t, i, y[i]);
            cr_assert_eq(fbits(yf[i]), 0u, "trial %d out %zu: f32 0x%08X, want +0", t, i,
                         fbits(yf[i]));
        }
        check_exact_case(&g, "cancel", t);
        free(y);
        free(yf);
        free_case(&g);
    }
}

Test(exact_random, subnormal_and_overflow_ranges)
{
    /* Scales chosen so sums land near 2^-149..2^-126 (sa+sw around 100..135) or near
     * 2^128 (sa+sw around 370..385). */
    for (int t = 0; t < 1500; t++) {
        size_t M = 1 + rnd(3), N = 1 + rnd(3), K = 32 * (1 + rnd(8));
        gcase g = gen_case(M, N, K, 4, 4, (int)rnd(5), (int)rnd(5));
        int lo = t & 1;
        for (size_t i = 0; i < M * K / 32; i++)
            g.as[i] = (uint8_t)(lo ? 40 + rnd(20) : 200 + rnd(55));
        for (size_t i = 0; i < N * K / 32; i++)
            g.ws[i] = (uint8_t)(lo ? 55 + rnd(25) : 165 + rnd(20));
        check_exact_case(&g, lo ? "subnormal" : "overflow", t);
        free_case(&g);
    }
}

Test(exact_random, nan_scales_make_nan)
{
    for (int t = 0; t < 300; t++) {
        size_t M = 1 + rnd(3), N = 1 + rnd(3), K = 32 * (1 + rnd(6));
        gcase g = gen_case(M, N, K, 0, 0, 0, 0);
        /* poison one scale in one A row or one W row */
        int side = (int)rnd(2);
        size_t row = side ? rnd((unsigned)N) : rnd((unsigned)M), blk = rnd((unsigned)(K / 32));
        (side ? g.ws : g.as)[row * (K / 32) + blk] = 0xFF;
        uint16_t *y = xcalloc(M * N * 2), *ys = xcalloc(M * N * 2), *yo = xcalloc(M * N * 2);
        float *yf = xcalloc(M * N * 4);
        cr_assert_eq(a4w4_gemm_exact(g.a, g.as, g.w, g.ws, M, N, K, y, yf), A4W4_OK);
        cr_assert_eq(a4w4_gemm_ordered(g.a, g.as, g.w, g.ws, M, N, K, 1, yo, NULL), A4W4_OK);
        cr_assert_eq(a4w4_gemm_sgemm(g.a, g.as, g.w, g.ws, M, N, K, ys, NULL), A4W4_OK);
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++) {
                size_t i = m * N + n;
                int hit = side ? (n == row) : (m == row);
                if (hit) {
                    cr_assert_eq(y[i], 0x7FC0, "exact bf16 0x%04X", y[i]);
                    cr_assert_eq(fbits(yf[i]), 0x7FC00000u);
                    cr_assert(is_nan16(yo[i]), "ordered bf16 0x%04X not NaN", yo[i]);
                    cr_assert(is_nan16(ys[i]), "sgemm bf16 0x%04X not NaN", ys[i]);
                } else {
                    cr_assert(!is_nan16(y[i]), "exact NaN on an output not reading 0xFF");
                }
            }
        free(y);
        free(ys);
        free(yo);
        free(yf);
        free_case(&g);
    }
}

/* ---- ordered(S) ------------------------------------------------------------------------------- */

Test(ordered, split_sizes_by_hand)
{
    /* K=5120,S=3: ceil(5120/3)=1707 -> round up to 256 -> 1792; ceil(5120/1792) = 3 */
    cr_expect_eq(a4w4_split_k_per_split(5120, 3), 1792);
    cr_expect_eq(a4w4_split_count(5120, 3), 3);
    /* K=512,S=4: 128 -> 256; 2 splits */
    cr_expect_eq(a4w4_split_k_per_split(512, 4), 256);
    cr_expect_eq(a4w4_split_count(512, 4), 2);
    /* K=32,S=2: 16 -> 256; 1 split */
    cr_expect_eq(a4w4_split_k_per_split(32, 2), 256);
    cr_expect_eq(a4w4_split_count(32, 2), 1);
    /* K=5120: S=1 -> 5120 (1); S=2 -> 2560 (2); S=4 -> 1280 (4); S=8 -> 640 -> 768,
     * ceil(5120/768)=7 (6*768=4608 < 5120) */
    cr_expect_eq(a4w4_split_k_per_split(5120, 1), 5120);
    cr_expect_eq(a4w4_split_count(5120, 1), 1);
    cr_expect_eq(a4w4_split_k_per_split(5120, 2), 2560);
    cr_expect_eq(a4w4_split_count(5120, 2), 2);
    cr_expect_eq(a4w4_split_k_per_split(5120, 4), 1280);
    cr_expect_eq(a4w4_split_count(5120, 4), 4);
    cr_expect_eq(a4w4_split_k_per_split(5120, 8), 768);
    cr_expect_eq(a4w4_split_count(5120, 8), 7);
    /* K=34816,S=16: 2176 -> 2304 (9*256); 15*2304=34560 < 34816 -> 16 */
    cr_expect_eq(a4w4_split_k_per_split(34816, 16), 2304);
    cr_expect_eq(a4w4_split_count(34816, 16), 16);
    /* K=14336,S=16: 896 -> 1024; 14 */
    cr_expect_eq(a4w4_split_k_per_split(14336, 16), 1024);
    cr_expect_eq(a4w4_split_count(14336, 16), 14);
    /* K=288,S=1: 288 -> 512; 1 */
    cr_expect_eq(a4w4_split_k_per_split(288, 1), 512);
    cr_expect_eq(a4w4_split_count(288, 1), 1);
    /* K=768,S=2: 384 -> 512; 2 (second split 256 long) */
    cr_expect_eq(a4w4_split_k_per_split(768, 2), 512);
    cr_expect_eq(a4w4_split_count(768, 2), 2);
}

/* The constructed split case: K=512, blocks b0 = 2^24 (2x2 @ 151,127), b1 = 2^16
 * (2x2 @ 143,127), b8 = b9 = 1.0 (2x2 @ 127,127), all others zero.
 * ordered(1): 2^24 + 2^16 exact; + 1 -> tie, even mantissa keeps 2^24+2^16; + 1 again the
 *   same -> f32 0x4B808000; bf16: low half 0x8000 tie, 0x4B80 even -> 0x4B80.
 * ordered(2): per = 256 -> split 1 = 2^24+2^16, split 2 = 1+1 = 2; total 2^24+2^16+2
 *   = 0x4B808001 -> bf16 above the tie -> 0x4B81. S=3 (ceil 171 -> 256), S=4 (128 ->
 *   256) are the same split as S=2.
 * exact: 2^24+2^16+2 -> 0x4B808001 / 0x4B81. */
static void build_split_case(row1 *r)
{
    r_init(r, 512);
    r_term(r, 0, 2, 2, 151, 127);
    r_term(r, 32, 2, 2, 143, 127);
    r_term(r, 256, 2, 2, 127, 127);
    r_term(r, 288, 2, 2, 127, 127);
}

Test(ordered, split_changes_the_result)
{
    row1 r;
    build_split_case(&r);
    a4w4_dot_operands op = r_op(&r);
    const uint32_t want[5] = {0, 0x4B808000u, 0x4B808001u, 0x4B808001u, 0x4B808001u};
    for (unsigned S = 1; S <= 4; S++) {
        float got = a4w4_dot_ordered(&op, S);
        float mine = ref_ordered(r.a, r.as, r.w, r.ws, r.K, S);
        cr_expect_eq(fbits(mine), want[S], "[test reference] S=%u 0x%08X", S, fbits(mine));
        cr_expect_eq(fbits(got), want[S], "ordered(%u) = 0x%08X, want 0x%08X", S, fbits(got),
                     want[S]);
    }
    uint16_t y1, y2;
    float f1, f2;
    cr_assert_eq(a4w4_gemm_ordered(r.a, r.as, r.w, r.ws, 1, 1, 512, 1, &y1, &f1), A4W4_OK);
    cr_assert_eq(a4w4_gemm_ordered(r.a, r.as, r.w, r.ws, 1, 1, 512, 2, &y2, &f2), A4W4_OK);
    cr_expect_eq(y1, 0x4B80, "ordered(1) bf16 0x%04X", y1);
    cr_expect_eq(y2, 0x4B81, "ordered(2) bf16 0x%04X", y2);
    cr_expect_neq(y1, y2, "the split must change the bf16 result");
    expect_exact(&r, 0x4B81, 0x4B808001u, "split case exact");
    cr_expect_eq(a4w4_exact_regime(&op), 0, "2^26+ quanta: outside the regime");
}

Test(ordered, fp32_absorption_and_block_rounding)
{
    row1 r;
    /* 1 + 2^-24 + 2^-24 in separate blocks: ordered adds 1 + 2^-24 -> tie -> 1, again -> 1:
     * 0x3F800000; exact = 1 + 2^-23 = 0x3F800001. */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 116, 116);
    r_term(&r, 64, 1, 1, 116, 116);
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(fbits(a4w4_dot_ordered(&op, 1)), 0x3F800000u);
    expect_exact(&r, 0x3F80, 0x3F800001u, "1+2^-24+2^-24");
    /* Block values rounded to fp32 before summing: b0 = 3*2^-151 (3x1 @ e=105) rounds to
     * 2^-149; b1 = -2^-149 (9x1 @ e=107). ordered: 2^-149 - 2^-149 = +0 (0x00000000).
     * exact: 3*2^-151 - 4*2^-151 = -2^-151 -> -0 (0x80000000). */
    r_init(&r, 64);
    r_term(&r, 0, 3, 1, 53, 52);
    r_term(&r, 32, 9, 1, 54, 53);
    op = r_op(&r);
    cr_expect_eq(fbits(a4w4_dot_ordered(&op, 1)), 0x00000000u, "ordered 0x%08X",
                 fbits(a4w4_dot_ordered(&op, 1)));
    expect_exact(&r, 0x8000, 0x80000000u, "3*2^-151-2^-149");
    /* Block overflow: b0 = 2^128 (rounds to Inf in fp32), b1 = -2^127 (14x2 @ 253,126:
     * -16 units at e=379). ordered: Inf; exact 2^127 = 0x7F000000. */
    r_init(&r, 64);
    r_term(&r, 0, 6, 2, 254, 126);
    r_term(&r, 32, 14, 2, 253, 126);
    op = r_op(&r);
    float o = a4w4_dot_ordered(&op, 1);
    cr_expect(isinf(o) && o > 0, "ordered %a, want +Inf", (double)o);
    expect_exact(&r, 0x7F00, 0x7F000000u, "2^128-2^127");
    /* Two opposite Inf blocks: ordered NaN (Inf - Inf); exact 2^128 - 2^128 = +0 */
    r_term(&r, 32, 14, 2, 254, 126);
    op = r_op(&r);
    cr_expect(isnan(a4w4_dot_ordered(&op, 1)), "ordered Inf-Inf must be NaN");
    expect_exact(&r, 0x0000, 0x00000000u, "2^128-2^128");
    /* A block whose value is -0 and a zero total: +0 (accumulator starts at +0) */
    r_init(&r, 32);
    r_term(&r, 0, 8, 2, 127, 127);
    op = r_op(&r);
    cr_expect_eq(fbits(a4w4_dot_ordered(&op, 1)), 0x00000000u);
}

/* ---- the edges of the fp32 and bf16 ranges (contracts §4.3) --------------------------------- */

/* Block b of r: `units` (0..384) units of 2^(sa+sw-256), sign neg (tu_units_block). */
static void r_units(row1 *r, size_t b, unsigned units, int neg, uint8_t sa, uint8_t sw)
{
    tu_units_block(r->a + b * 16, r->w + b * 16, units, neg);
    r->as[b] = sa;
    r->ws[b] = sw;
}

/* ordered(1) of r: fp32 bits and bf16 bits. */
static void expect_ordered(const row1 *r, uint32_t want_f32, uint16_t want_bf16, const char *what)
{
    a4w4_dot_operands op = r_op(r);
    float o = a4w4_dot_ordered(&op, 1);
    cr_expect_eq(fbits(o), want_f32, "%s: ordered f32 0x%08X, want 0x%08X", what, fbits(o),
                 want_f32);
    cr_expect_eq(a4w4_f32_to_bf16(o), want_bf16, "%s: ordered bf16 0x%04X, want 0x%04X", what,
                 a4w4_f32_to_bf16(o), want_bf16);
}

Test(range_edges, bf16_boundary_where_exact_and_ordered_part)
{
    row1 r;
    /* 511 * 2^119 - 2^102: b0 255 * 2^120 (code 1 x 15 code-7/3 terms: 21 x 12 + 3 = 255 units
     * at e = 376), b1 2^119 (1 unit at 375), b2 -2^102 (-1 unit at 358).
     * exact: below the bf16 midpoint 511 * 2^119 -> 0x7F7F; f32: 2^-2 ulp below 0x7F7F8000 ->
     * 0x7F7F8000. ordered: 255 * 2^120 + 2^119 = 0x7F7F8000 exactly, then -2^102 (a quarter
     * of fp32's 2^104 ulp) leaves 0x7F7F8000, whose bf16 is the tie -> even -> Inf 0x7F80. */
    r_init(&r, 96);
    r_units(&r, 0, 255, 0, 254, 122);
    r_units(&r, 1, 1, 0, 254, 121);
    r_units(&r, 2, 1, 1, 254, 104);
    expect_exact(&r, 0x7F7F, 0x7F7F8000u, "511*2^119-2^102");
    expect_ordered(&r, 0x7F7F8000u, 0x7F80, "511*2^119-2^102");
    /* - 2^104 instead (-1 unit at 360): fp32 0x7F7F7FFF, below the tie in both: 0x7F7F */
    r_units(&r, 2, 1, 1, 254, 106);
    expect_exact(&r, 0x7F7F, 0x7F7F7FFFu, "511*2^119-2^104");
    expect_ordered(&r, 0x7F7F7FFFu, 0x7F7F, "511*2^119-2^104");
    /* + 2^104: above the tie, Inf in bf16 while fp32 is finite (0x7F7F8001) */
    r_units(&r, 2, 1, 0, 254, 106);
    expect_exact(&r, 0x7F80, 0x7F7F8001u, "511*2^119+2^104");
    expect_ordered(&r, 0x7F7F8001u, 0x7F80, "511*2^119+2^104");
}

Test(range_edges, combined_scale_past_fp32_with_finite_block_values)
{
    row1 r;
    /* b0 +2^127: 1 unit at e = 383, where 2^(sa+sb-254) = 2^129 is beyond fp32; b1 -3 * 2^126:
     * 3 units at e = 382; b2 a zero dot at (254, 254) from the pairs (+0.5 x +6, +0.5 x -6):
     * every product 3 * 2^254 in magnitude, the dot 0.
     * exact = ordered = 2^127 - 3 * 2^126 = -2^126: 0xFE800000 / 0xFE80 */
    r_init(&r, 96);
    r_units(&r, 0, 1, 0, 254, 129);
    r_units(&r, 1, 3, 1, 254, 128);
    for (size_t k = 64; k < 96; k++)
        r_term(&r, k, 1, (uint8_t)(k % 2 ? 15 : 7), 254, 254);
    expect_exact(&r, 0xFE80, 0xFE800000u, "2^127-3*2^126+0*2^254");
    expect_ordered(&r, 0xFE800000u, 0xFE80, "2^127-3*2^126+0*2^254");
    /* the zero dot alone at sa + sb = 508: +0 under both */
    r_init(&r, 32);
    for (size_t k = 0; k < 32; k++)
        r_term(&r, k, 1, (uint8_t)(k % 2 ? 15 : 7), 254, 254);
    expect_exact(&r, 0x0000, 0x00000000u, "0 at 2^508");
    expect_ordered(&r, 0x00000000u, 0x0000, "0 at 2^508");
}

Test(range_edges, combined_scale_below_fp32_subnormals)
{
    row1 r;
    /* 2^-134 (4 units at e = 120: one 0.5 x 2.0 term) is the bf16 midpoint between 0 and
     * 2^-133. + 12 units at e = 104 (0.5... here 6.0 x 0.5 at sa 1, sb 103): 1.5 * 2^-149, with
     * 2^(sa+sb-254) = 2^-150 below fp32's subnormals. exact: above the midpoint -> 0x0001, f32
     * 2^-134 + 1.5 * 2^-149 -> tie -> 0x00008002. ordered: the block rounds once to 2^-148
     * (tie to even), total 0x00008002 -> 0x0001. */
    r_init(&r, 64);
    r_term(&r, 0, 1, 4, 1, 119);
    r_term(&r, 32, 7, 1, 1, 103);
    expect_exact(&r, 0x0001, 0x00008002u, "2^-134+12*2^-152");
    expect_ordered(&r, 0x00008002u, 0x0001, "2^-134+12*2^-152");
    /* 12 units at e = 2 (12 * 2^-254) instead: exact above the midpoint -> 0x0001 (f32 0x8000
     * after RNE); ordered: the block rounds to +0 in fp32, total exactly the midpoint -> 0 */
    r_term(&r, 32, 7, 1, 1, 1);
    expect_exact(&r, 0x0001, 0x00008000u, "2^-134+12*2^-254");
    expect_ordered(&r, 0x00008000u, 0x0000, "2^-134+12*2^-254");
    /* negated: -2^-133 (0x8001) exact, -0 (0x8000) ordered */
    r_term(&r, 0, 9, 4, 1, 119);
    r_term(&r, 32, 15, 1, 1, 1);
    expect_exact(&r, 0x8001, 0x80008000u, "-(2^-134+12*2^-254)");
    expect_ordered(&r, 0x80008000u, 0x8000, "-(2^-134+12*2^-254)");
}

Test(range_edges, exact_sum_rounded_to_double)
{
    row1 r;
    /* 510 * 2^120 (two blocks of 255 units at e = 376): past fp32, exact in double */
    r_init(&r, 64);
    r_units(&r, 0, 255, 0, 254, 122);
    r_units(&r, 1, 255, 0, 254, 122);
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), ldexp(510.0, 120));
    /* the largest block, 4608 * 2^252, and its negation */
    r_init(&r, 32);
    for (size_t k = 0; k < 32; k++)
        r_term(&r, k, 7, 7, 254, 254);
    op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), ldexp(4608.0, 252));
    for (size_t k = 0; k < 32; k++)
        r_term(&r, k, 15, 7, 254, 254);
    op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), -ldexp(4608.0, 252));
    /* 1 + 2^-256: RNE to double (53 bits) -> 1; 2^-256 alone is exact; 0 -> +0 */
    r_init(&r, 64);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 0, 0);
    op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), 1.0);
    r_term(&r, 0, 0, 2, 127, 127);
    op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), ldexp(1.0, -256));
    r_term(&r, 32, 9, 9, 0, 0); /* (-0.5)(-0.5): +1 unit; with 1 x -1 below, 0 */
    r_term(&r, 33, 1, 9, 0, 0);
    op = r_op(&r);
    double z = a4w4_dot_exact_f64(&op);
    cr_expect(z == 0.0 && !signbit(z), "an exact zero sum is +0 (%a)", z);
    /* 1 + 2^-53 + 2^-256: above the double midpoint -> 1 + 2^-52 */
    r_init(&r, 96);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 101, 102);
    r_term(&r, 64, 1, 1, 0, 0);
    op = r_op(&r);
    cr_expect_eq(a4w4_dot_exact_f64(&op), 1.0 + 0x1p-52);
    r.as[2] = 0xFF;
    op = r_op(&r);
    cr_expect(isnan(a4w4_dot_exact_f64(&op)), "scale 0xFF: NaN");
}

Test(ordered, random_against_plain_loop)
{
    for (int t = 0; t < 1500; t++) {
        size_t M = 1 + rnd(3), N = 1 + rnd(3), K = 32 * (1 + rnd(48)); /* up to 1536 */
        gcase g = gen_case(M, N, K, (int)rnd(7), (int)rnd(7), (int)rnd(5), (int)rnd(5));
        if (t % 10 == 0)
            g.as[rnd((unsigned)(M * K / 32))] = 0xFF;
        for (unsigned S = 1; S <= 4; S++) {
            uint16_t *y = xcalloc(M * N * 2);
            float *yf = xcalloc(M * N * 4);
            cr_assert_eq(a4w4_gemm_ordered(g.a, g.as, g.w, g.ws, M, N, K, S, y, yf), A4W4_OK);
            for (size_t m = 0; m < M; m++)
                for (size_t n = 0; n < N; n++) {
                    size_t i = m * N + n;
                    float want = ref_ordered(ROW_A(&g, m), ROW_W(&g, n), K, S);
                    a4w4_dot_operands op = {ROW_A(&g, m), ROW_W(&g, n), K};
                    float dot = a4w4_dot_ordered(&op, S);
                    if (isnan(want)) {
                        cr_assert(isnan(yf[i]) && is_nan16(y[i]) && isnan(dot),
                                  "t=%d S=%u (%zu,%zu): want NaN", t, S, m, n);
                        continue;
                    }
                    if (fbits(yf[i]) != fbits(want) || fbits(dot) != fbits(want) ||
                        y[i] != my_bf16(want))
                        cr_assert_fail("t=%d S=%u K=%zu (%zu,%zu): ordered f32 0x%08X dot 0x%08X "
                                       "bf16 0x%04X, plain loop 0x%08X bf16 0x%04X",
                                       t, S, K, m, n, fbits(yf[i]), fbits(dot), y[i],
                                       fbits(want), my_bf16(want));
                }
            free(y);
            free(yf);
        }
        free_case(&g);
    }
}

Test(ordered, random_splits_do_differ_somewhere)
{
    /* Sanity of the test set: outside the exact regime, ordered(1) and ordered(2) must
     * disagree on some random case (else the split would be untested). */
    int differ = 0;
    for (int t = 0; t < 400 && !differ; t++) {
        size_t K = 512 + 32 * rnd(32);
        gcase g = gen_case(1, 1, K, 6, 4, 0, 0);
        a4w4_dot_operands op = {g.a, g.as, g.w, g.ws, K};
        differ = fbits(a4w4_dot_ordered(&op, 1)) != fbits(a4w4_dot_ordered(&op, 2));
        free_case(&g);
    }
    cr_expect(differ, "no random case where the split changes the fp32 result");
}

/* ---- the exact-regime prover ----------------------------------------------------------------- */

Test(regime, sum_of_terms_at_the_2_24_edge)
{
    row1 r;
    /* 24 blocks, block j: one 1x1 term (1 unit) at sa = 100 + j, sw = 100 -> 2^j quanta of
     * q = 2^(200-256). Sum = 2^24 - 1 quanta -> in the regime. */
    r_init(&r, 24 * 32);
    for (size_t j = 0; j < 24; j++)
        r_term(&r, j * 32, 1, 1, (uint8_t)(100 + j), 100);
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 1, "2^24-1 quanta must be in the regime");
    int emin;
    cr_expect_eq(ref_regime(r.a, r.as, r.w, r.ws, r.K, &emin), 1);
    /* (2^24-1) * 2^-56 = (2 - 2^-23) * 2^-33: exponent field 127-33 = 94 -> f32 exact
     * 0x2F7FFFFF; bf16 rounds up to 2^-32 = field 95 -> 0x2F80 */
    expect_exact(&r, 0x2F80, 0x2F7FFFFFu, "(2^24-1)*2^-56");
    uint16_t ys;
    uint8_t reg;
    cr_assert_eq(a4w4_gemm_sgemm(r.a, r.as, r.w, r.ws, 1, 1, r.K, &ys, &reg), A4W4_OK);
    cr_expect_eq(reg, 1);
    cr_expect_eq(ys, 0x2F80, "sgemm in the regime 0x%04X, want 0x2F80", ys);
    /* One more unit in block 0 -> exactly 2^24 quanta -> out */
    r_term(&r, 1, 1, 1, 100, 100);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "2^24 quanta must be outside the regime");
    /* The same with the extra unit negative: |terms| still 2^24 quanta -> out */
    r_term(&r, 1, 9, 1, 100, 100);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "sum of |terms| counts, not |sum|");
    /* 2^24 - 1 quanta with mixed signs -> still in */
    r_term(&r, 1, 0, 0, 100, 100);
    r_term(&r, 5 * 32, 9, 1, 105, 100);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 1);
}

Test(regime, block_sums_of_4608_units)
{
    row1 r;
    /* Full blocks of 6x6 (144 units each element, 4608 per block) at the same quantum:
     * 3640 blocks would be needed for 2^24; use scale offsets instead: block 0 at d=0
     * (4608), block 1 at d=11 (4608*2048 = 9437184), block 2 at d=10 (4718592):
     * total 4608 + 9437184 + 4718592 = 14160384 < 16777216 -> in; bump block 2 to d=11
     * -> 4608 + 2*9437184 = 18878976 -> out. */
    r_init(&r, 96);
    for (size_t k = 0; k < 96; k++)
        set4(r.a, k, 7), set4(r.w, k, (k % 3) ? 7 : 15);
    r.as[0] = 100, r.ws[0] = 100;
    r.as[1] = 111, r.ws[1] = 100;
    r.as[2] = 110, r.ws[2] = 100;
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 1);
    r.as[2] = 111;
    cr_expect_eq(a4w4_exact_regime(&op), 0);
}

Test(regime, quantum_below_min_subnormal)
{
    row1 r;
    /* single 1-unit term at sa+sw = 106: q = 2^-150 -> out; at 107: q = 2^-149 -> in */
    r_init(&r, 32);
    r_term(&r, 0, 1, 1, 0, 106);
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "quantum 2^-150 must be out");
    r_term(&r, 0, 1, 1, 0, 107);
    cr_expect_eq(a4w4_exact_regime(&op), 1, "quantum 2^-149 must be in");
    /* a tiny term below 2^-149 next to a normal one: out */
    r_init(&r, 64);
    r_term(&r, 0, 2, 2, 127, 127);
    r_term(&r, 32, 1, 1, 50, 50);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0);
}

Test(regime, nan_scale_is_out_even_with_zero_codes)
{
    row1 r;
    r_init(&r, 64);
    r.as[1] = 0xFF;
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "A scale 0xFF");
    r.as[1] = 127;
    r.ws[0] = 0xFF;
    cr_expect_eq(a4w4_exact_regime(&op), 0, "W scale 0xFF");
}

Test(regime, operand_dequantizing_to_inf_is_out)
{
    row1 r;
    /* A: code 6 (4.0) at scale 254 -> 4*2^127 = 2^129 = Inf in fp32; W element 0, so every
     * term is zero, but sgemm would compute Inf*0 = NaN -> out. */
    r_init(&r, 32);
    r_term(&r, 3, 6, 0, 254, 127);
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "A 4*2^127 must be out");
    /* same on the W side */
    r_init(&r, 32);
    r_term(&r, 3, 0, 6, 127, 254);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "W 4*2^127 must be out");
    /* scale 253: code 7 (6*2^126 = 1.5*2^128) -> Inf -> out; code 5 (3*2^126) finite */
    r_init(&r, 32);
    r_term(&r, 3, 7, 0, 253, 127);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "6*2^126 must be out");
    r_term(&r, 3, 5, 0, 253, 127);
    cr_expect_eq(a4w4_exact_regime(&op), 1, "3*2^126 is finite, all terms zero -> in");
    /* scale 254 code 3 (1.5*2^127) is finite; code 4 (2*2^127 = 2^128) is not */
    r_term(&r, 3, 3, 0, 254, 127);
    cr_expect_eq(a4w4_exact_regime(&op), 1);
    r_term(&r, 3, 12, 0, 254, 127);
    cr_expect_eq(a4w4_exact_regime(&op), 0, "-2^128 operand must be out");
    /* the Inf element sits in a block whose other element carries the only term */
    r_init(&r, 32);
    r_term(&r, 0, 7, 0, 254, 0);
    r_term(&r, 1, 1, 1, 254, 0);
    op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 0);
}

Test(regime, all_zero_terms_are_in)
{
    row1 r;
    r_init(&r, 128);
    /* A random codes at scales <= 252 (finite), W zero codes (0 or -0) at any scale */
    for (size_t k = 0; k < 128; k++) {
        set4(r.a, k, (uint8_t)rnd(16));
        set4(r.w, k, rnd(2) ? 0 : 8);
    }
    r.as[0] = 0, r.as[1] = 252, r.as[2] = 127, r.as[3] = 1;
    r.ws[0] = 254, r.ws[1] = 0, r.ws[2] = 200, r.ws[3] = 253;
    a4w4_dot_operands op = r_op(&r);
    cr_expect_eq(a4w4_exact_regime(&op), 1);
    /* and sgemm must then equal exact: +0 */
    uint16_t ys;
    uint8_t reg;
    cr_assert_eq(a4w4_gemm_sgemm(r.a, r.as, r.w, r.ws, 1, 1, r.K, &ys, &reg), A4W4_OK);
    cr_expect_eq(reg, 1);
    expect_exact(&r, 0x0000, 0x00000000u, "all-zero terms");
    cr_expect_eq(ys, 0x0000, "sgemm all-zero terms 0x%04X", ys);
}

Test(regime, negative_zero_products_sgemm_sign)
{
    /* All products are -0 ((-0) * 1): exact gives +0; the regime holds (no nonzero term), so
     * sgemm must give +0 too. M=N=4 and M=1 (a gemv-shaped call). */
    for (int shape = 0; shape < 2; shape++) {
        size_t M = shape ? 1 : 4, N = shape ? 1 : 4, K = 64;
        uint8_t a[4 * 32], w[4 * 32], as[8], ws[8];
        memset(a, 0x88, sizeof a);
        memset(w, 0x22, sizeof w);
        memset(as, 127, sizeof as);
        memset(ws, 127, sizeof ws);
        uint16_t ys[16], ye[16];
        uint8_t reg[16];
        cr_assert_eq(a4w4_gemm_sgemm(a, as, w, ws, M, N, K, ys, reg), A4W4_OK);
        cr_assert_eq(a4w4_gemm_exact(a, as, w, ws, M, N, K, ye, NULL), A4W4_OK);
        for (size_t i = 0; i < M * N; i++) {
            cr_expect_eq(reg[i], 1);
            cr_expect_eq(ye[i], 0x0000);
            cr_expect_eq(ys[i], ye[i], "shape %d out %zu: sgemm 0x%04X, exact 0x%04X", shape, i,
                         ys[i], ye[i]);
        }
    }
}

/* ---- sgemm vs exact over random cases ---------------------------------------------------------- */

Test(sgemm, equals_exact_wherever_the_prover_says_so)
{
    size_t in = 0, out = 0, in_nonzero = 0;
    for (int t = 0; t < 600; t++) {
        size_t M = 1 + rnd(6), N = 1 + rnd(6), K = 32 * (1 + rnd(12));
        int sm = (int)rnd(4);
        /* modes: mostly narrow scale bands and small codes (in the regime), some wide */
        int smode[4] = {5, 1, 4, 0};
        int cmode[4] = {2, 4, 1, 0};
        gcase g = gen_case(M, N, K, smode[sm], smode[(sm + rnd(2)) % 4], cmode[rnd(4)],
                           cmode[rnd(4)]);
        if (t % 7 == 0)
            make_cancelling(&g);
        if (t % 11 == 0)
            g.ws[rnd((unsigned)(N * K / 32))] = (uint8_t)(rnd(2) ? 0xFF : 254);
        uint16_t *ys = xcalloc(M * N * 2);
        uint8_t *reg = xcalloc(M * N);
        cr_assert_eq(a4w4_gemm_sgemm(g.a, g.as, g.w, g.ws, M, N, K, ys, reg), A4W4_OK);
        for (size_t m = 0; m < M; m++)
            for (size_t n = 0; n < N; n++) {
                size_t i = m * N + n;
                int emin;
                int mine = ref_regime(ROW_A(&g, m), ROW_W(&g, n), K, &emin);
                a4w4_dot_operands op = {ROW_A(&g, m), ROW_W(&g, n), K};
                cr_assert_eq(reg[i], a4w4_exact_regime(&op), "regime array vs prover");
                if (reg[i]) {
                    in++;
                    cr_assert(mine, "t=%d (%zu,%zu): prover says in, contracts regime says out", t, m,
                              n);
                    ref_out ro = ref_exact(ROW_A(&g, m), ROW_W(&g, n), K);
                    if (ro.bf16 & 0x7FFF)
                        in_nonzero++;
                    cr_assert_eq(ys[i], ro.bf16,
                                 "t=%d (M=%zu N=%zu K=%zu) out (%zu,%zu) in the regime: sgemm "
                                 "0x%04X, exact 0x%04X",
                                 t, M, N, K, m, n, ys[i], ro.bf16);
                } else {
                    out++;
                    /* completeness where the contracts regime holds and no overflow is possible */
                    cr_assert(!(mine && emin >= 0 && emin - 256 <= 104),
                              "t=%d (%zu,%zu): contracts regime holds (emin %d) but prover says out",
                              t, m, n, emin);
                }
            }
        free(ys);
        free(reg);
        free_case(&g);
    }
    cr_expect_gt(in, 1000, "too few in-regime outputs (%zu)", in);
    cr_expect_gt(in_nonzero, 500, "too few nonzero in-regime outputs (%zu)", in_nonzero);
    cr_expect_gt(out, 1000, "too few out-of-regime outputs (%zu)", out);
}

/* ---- argument errors ---------------------------------------------------------------------------- */

Test(errors, einval)
{
    uint8_t a[64] = {0}, as[4] = {127, 127, 127, 127}, w[64] = {0}, ws[4] = {127, 127, 127, 127};
    uint16_t y[4];
    float yf[4];
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 1, 1, 48, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 0, 1, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 1, 0, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 1, 1, 0, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(NULL, as, w, ws, 1, 1, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, NULL, w, ws, 1, 1, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, NULL, ws, 1, 1, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, NULL, 1, 1, 32, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 1, 1, 32, NULL, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_exact(a, as, w, ws, 1, 1, 32, y, NULL), A4W4_OK);
    cr_expect_eq(a4w4_gemm_ordered(a, as, w, ws, 1, 1, 32, 0, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_ordered(a, as, w, ws, 1, 1, 40, 1, y, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_ordered(a, as, w, ws, 1, 1, 32, 1, NULL, yf), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_ordered(a, as, w, ws, 1, 1, 32, 1, y, NULL), A4W4_OK);
    cr_expect_eq(a4w4_gemm_sgemm(a, as, w, ws, 1, 1, 33, y, NULL), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_sgemm(a, as, w, ws, 0, 1, 32, y, NULL), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_sgemm(a, as, w, ws, 1, 1, 32, NULL, NULL), A4W4_EINVAL);
    cr_expect_eq(a4w4_gemm_sgemm(a, as, w, ws, 1, 1, 32, y, NULL), A4W4_OK);
}
