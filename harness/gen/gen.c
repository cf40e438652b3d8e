/* gen.c — case data generation and output sampling (see gen.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE (Linux) */
#include "gen.h"
#include "gen_range.h"
#include "gen_special.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"

/* ---- random draws ----------------------------------------------------------------------- */

static double uniform01(a4w4_rng *r)
{
    return (double)(a4w4_rng_next(r) >> 11) * 0x1p-53;
}

/* stream ids: tensor in the high 32 bits, row in the low */
enum { STREAM_A = 1, STREAM_W = 2, STREAM_X = 3, STREAM_SAMPLE = 4 };

static uint64_t stream_id(int tensor, size_t row)
{
    return ((uint64_t)tensor << 40) | (uint64_t)row;
}

/* ---- guarded buffers --------------------------------------------------------------------- */

/* Buffers of at least this many bytes that generation writes whole (every row, the device
 * judge's case) are asked for huge pages: committing a nightly weight of 1.3 GB by 4 KB page
 * faults took a third of its generation's time on the CPU stand-ins' machine. */
#define DENSE_HUGE_BYTES ((size_t)8 << 20)

/* 2 MB pages for [p, p + len) where the kernel offers them (transparent huge pages on
 * madvise), before its pages are first touched; a no-op elsewhere. */
static void advise_huge(uint8_t *p, size_t len)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + len) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure changes nothing */
#else
    (void)p;
    (void)len;
#endif
}

/* len bytes between two guard zones, zeroed; dense: every byte will be written (advise_huge
 * when large), else untouched pages stay uncommitted (a sampled case's filler rows). */
static int guarded_alloc_as(a4w4_guarded *g, size_t len, int dense)
{
    uint8_t *p = calloc(len + 2 * A4W4_GUARD_BYTES, 1);
    if (!p)
        return A4W4_ENOMEM;
    if (dense && len >= DENSE_HUGE_BYTES)
        advise_huge(p, len + 2 * A4W4_GUARD_BYTES);
    g->data = p + A4W4_GUARD_BYTES;
    g->len = len;
    memset(p, A4W4_GUARD_FILL, A4W4_GUARD_BYTES);
    memset(g->data + len, A4W4_GUARD_FILL, A4W4_GUARD_BYTES);
    return A4W4_OK;
}

static int guarded_alloc(a4w4_guarded *g, size_t len)
{
    return guarded_alloc_as(g, len, 0);
}

static void guarded_free(a4w4_guarded *g)
{
    if (g->data)
        free(g->data - A4W4_GUARD_BYTES);
    g->data = NULL;
    g->len = 0;
}

static int guard_ok(const a4w4_guarded *g, uint8_t fill_after)
{
    if (!g->data)
        return 1;
    for (size_t i = 0; i < A4W4_GUARD_BYTES; i++)
        if (g->data[-(ptrdiff_t)A4W4_GUARD_BYTES + (ptrdiff_t)i] != A4W4_GUARD_FILL ||
            g->data[g->len + i] != fill_after)
            return 0;
    return 1;
}

/* ---- per-row generators ------------------------------------------------------------------ */

/* The common case of fill_codes, maxcode 7: the remainder by 8 is the low 3 bits, so a
 * byte is bits 0-2 and 11 of its draw v (low nibble) and bits 16-18 and 27 (high). The draws
 * are a4w4_rng_next's, written out (state + (j+1) * step, mixed) so that 16 of them are
 * independent and vectorize. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
static void fill_codes7(a4w4_rng *r, uint8_t *fp4, size_t bytes)
{
    uint64_t s0 = r->s;
    size_t i = 0;
    for (; i + 16 <= bytes; i += 16)
        for (size_t j = 0; j < 16; j++) {
            uint64_t v = a4w4_rng_mix(s0 + (uint64_t)(i + j + 1) * 0x9E3779B97F4A7C15ull);
            fp4[i + j] = (uint8_t)((v & 7) | ((v >> 8) & 8) | ((v >> 12) & 0x70) |
                                   ((v >> 20) & 0x80));
        }
    for (; i < bytes; i++) {
        uint64_t v = a4w4_rng_mix(s0 + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
        fp4[i] = (uint8_t)((v & 7) | ((v >> 8) & 8) | ((v >> 12) & 0x70) | ((v >> 20) & 0x80));
    }
    r->s = s0 + (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
}

/* A byte x < 256 modulo d (2..8) without a division: q = x * ceil(2^16 / d) >> 16 is the
 * exact quotient there (the rounding of the reciprocal adds under 256 * 8 / 2^16 < 1 / d),
 * and the arithmetic vectorizes where a table lookup or a division would not. */
static inline unsigned mod_byte(unsigned x, unsigned d, unsigned inv)
{
    return x - ((x * inv) >> 16) * d;
}

/* Codes drawn from a symmetric set of E2M1 magnitudes {0..maxcode} with random sign: per
 * byte one draw v, magnitudes (v & 0xFF) % (maxcode + 1) and ((v >> 16) & 0xFF) % (maxcode + 1),
 * signs bit 11 and bit 27. The draws are a4w4_rng_next's written out (state + (i+1) * step,
 * mixed), independent of each other, and the remainders are mod_byte's: the loop vectorizes
 * as fill_codes7's does (the exact, special and tiny regimes take maxcode below 7 from K
 * 131,072 on). tests/plain/gen_plain.h keeps the per-element form and test_gen holds them
 * equal. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
static void fill_codes_mod(a4w4_rng *r, uint8_t *fp4, size_t bytes, unsigned maxcode)
{
    const uint64_t s0 = r->s;
    const unsigned d = maxcode + 1, inv = (65536u + d - 1) / d;
    for (size_t i = 0; i < bytes; i++) {
        uint64_t v = a4w4_rng_mix(s0 + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
        unsigned lo = mod_byte((unsigned)(v & 0xFF), d, inv) | (unsigned)((v >> 8) & 8);
        unsigned hi = mod_byte((unsigned)((v >> 16) & 0xFF), d, inv) | (unsigned)((v >> 24) & 8);
        fp4[i] = (uint8_t)(lo | (hi << 4));
    }
    r->s = s0 + (uint64_t)bytes * 0x9E3779B97F4A7C15ull;
}

static void fill_codes(a4w4_rng *r, uint8_t *fp4, size_t bytes, unsigned maxcode)
{
    if (maxcode == 7)
        fill_codes7(r, fp4, bytes);
    else
        fill_codes_mod(r, fp4, bytes, maxcode);
}

static void fill_scales(a4w4_rng *r, uint8_t *s, size_t n, unsigned lo, unsigned hi)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)(lo + a4w4_rng_next(r) % (hi - lo + 1));
}

/* Exact regime parameters: a code range {0..maxcode} and a per-side scale spread d (scales
 * in 127..127+d) with sum|terms| <= K * maxprod * 2^(2d) < 2^24 quanta (contracts §4.1); the
 * prover confirms it per checked output. Depends on K only. */
static void exact_params(size_t K, unsigned *maxcode, unsigned *spread)
{
    static const unsigned maxprod[8] = {0, 1, 4, 9, 16, 36, 64, 144}; /* (2v)^2 */
    for (unsigned mc = 7;; mc--) {
        double bound = (double)K * maxprod[mc];
        int s = 3;
        while (s >= 0 && bound * ldexp(1.0, 2 * s) >= 0x1p24)
            s--;
        if (s >= 0 || mc == 1) {
            *maxcode = mc;
            *spread = s < 0 ? 0 : (unsigned)s;
            return;
        }
    }
}

/* Wide spread scales. Per 32-block column b a centre c_b is drawn over the whole code range
 * (the same for every row, from the case's "centre" stream): A's scale is c_b + d, W's is
 * 254 - c_b + d' (d, d' small), so each side's codes spread over lo..254 while every
 * product's exponent sa + sb stays near 254 and sums stay finite. One block in 16 is an
 * outlier whose scale moves by up to +-50 on that side (products from about 2^-150, fp32
 * underflow, to 2^98), and with lo = 0 (code0 regime) the A side's outliers clamp to code 0. */
static void fill_wide_scales(const a4w4_case *c, a4w4_rng *r, uint8_t *s, size_t nb, int w_side,
                             unsigned lo)
{
    a4w4_rng centre;
    a4w4_rng_init(&centre, c->seed, c->name, 0xC3E7E3ull);
    for (size_t b = 0; b < nb; b++) {
        int cb = 1 + (int)(a4w4_rng_next(&centre) % 254); /* 1..254 */
        uint64_t v = a4w4_rng_next(r);
        int d = (int)(v % 17) - 8;
        if (((v >> 8) & 15) == 0)
            d += (int)((v >> 12) % 101) - 50;
        int code = (w_side ? 254 - cb + 1 : cb) + d;
        if (code < (int)lo)
            code = (int)lo;
        if (code > 254)
            code = 254;
        s[b] = (uint8_t)code;
    }
}

/* x of normal-regime A row `row`: K bf16 values ~ N(0, 1) by Box-Muller on the row's own
 * stream, each double op as written here (a case's operands are a function of seed and name). */
static void normal_x_row(const a4w4_case *c, size_t row, uint16_t *x)
{
    a4w4_rng rx;
    a4w4_rng_init(&rx, c->seed, c->name, stream_id(STREAM_X, row));
    for (size_t i = 0; i < c->K; i += 2) {
        double u1 = uniform01(&rx), u2 = uniform01(&rx);
        double rad = sqrt(-2.0 * log(u1 > 0 ? u1 : 0x1p-53));
        x[i] = a4w4_f32_to_bf16_inline((float)(rad * cos(6.283185307179586 * u2)));
        x[i + 1] = a4w4_f32_to_bf16_inline((float)(rad * sin(6.283185307179586 * u2)));
    }
}

/* Normal-regime A row: x ~ N(0, 1) rounded to bf16, quantized per 1x32 in the case's scale
 * mode (contracts §2) by the fast bf16 quantizer, which writes the plain one's bytes; x is
 * generated straight into xrow when kept. */
static int normal_a_row(const a4w4_case *c, size_t row, uint8_t *fp4, uint8_t *scale,
                        uint16_t *xrow)
{
    uint16_t *x = xrow ? xrow : malloc(c->K * sizeof *x);
    if (!x)
        return A4W4_ENOMEM;
    normal_x_row(c, row, x);
    int rc = a4w4_quantize_bf16_fast(x, 1, c->K, c->mode, fp4, scale);
    if (!xrow)
        free(x);
    return rc;
}

int a4w4_gen_normal_a_row_plain(const a4w4_case *c, size_t row, uint8_t *fp4, uint8_t *scale,
                                uint16_t *xrow)
{
    size_t K = c->K;
    /* x ~ N(0, 1) rounded to bf16, quantized per 1x32 in the case's scale mode */
    uint16_t *x = malloc(K * sizeof *x);
    if (!x)
        return A4W4_ENOMEM;
    a4w4_rng rx;
    a4w4_rng_init(&rx, c->seed, c->name, stream_id(STREAM_X, row));
    for (size_t i = 0; i < K; i += 2) {
        double u1 = uniform01(&rx), u2 = uniform01(&rx);
        double rad = sqrt(-2.0 * log(u1 > 0 ? u1 : 0x1p-53));
        x[i] = a4w4_f32_to_bf16((float)(rad * cos(6.283185307179586 * u2)));
        x[i + 1] = a4w4_f32_to_bf16((float)(rad * sin(6.283185307179586 * u2)));
    }
    int rc = a4w4_quantize(x, A4W4_IN_BF16, 1, K, c->mode, 0, fp4, scale);
    if (xrow)
        memcpy(xrow, x, K * sizeof *x);
    free(x);
    return rc;
}

/* One row of A or W (tensor STREAM_A / STREAM_W): K/2 code bytes and K/32 scales; in the
 * normal regime A's row also keeps its bf16 source in xrow (K elements) when xrow != NULL. */
static int gen_row(const a4w4_case *c, int tensor, size_t row, uint8_t *fp4, uint8_t *scale,
                   uint16_t *xrow)
{
    size_t K = c->K, nb = K / 32;
    a4w4_rng r;
    a4w4_rng_init(&r, c->seed, c->name, stream_id(tensor, row));
    unsigned maxcode, spread;
    switch (c->regime) {
    case A4W4_REGIME_EXACT:
    case A4W4_REGIME_SPECIAL:
    case A4W4_REGIME_TINY:
        exact_params(K, &maxcode, &spread);
        fill_codes(&r, fp4, K / 2, maxcode);
        fill_scales(&r, scale, nb, 127, 127 + spread);
        if (c->regime == A4W4_REGIME_TINY) /* fp32 subnormal range (gen_special.h) */
            a4w4_tiny_shift(c, tensor == STREAM_W, row, scale, nb);
        break;
    case A4W4_REGIME_NORMAL:
        if (tensor == STREAM_A)
            return normal_a_row(c, row, fp4, scale, xrow);
        fill_codes(&r, fp4, K / 2, 7);
        fill_scales(&r, scale, nb, 123, 131);
        break;
    case A4W4_REGIME_WIDE:
        fill_codes(&r, fp4, K / 2, 7);
        fill_wide_scales(c, &r, scale, nb, tensor == STREAM_W, 1);
        break;
    case A4W4_REGIME_CODE0:
        fill_codes(&r, fp4, K / 2, 7);
        fill_wide_scales(c, &r, scale, nb, tensor == STREAM_W, 0);
        /* code 0 in block b0 of every row of A, facing code 254 in W: that block's products
         * are 2^(0 + 254 - 256) times the codes, as large as the others, so reading code 0
         * as 2^-126 instead of 2^-127 changes the outputs (contracts §1's ambiguity made visible) */
        scale[c->seed % nb] = tensor == STREAM_A ? 0 : 254;
        break;
    case A4W4_REGIME_RANGE: /* the edges of fp32 and bf16 (gen_range.h) */
        a4w4_range_row(c, tensor == STREAM_W, row, fp4, scale);
        break;
    }
    return A4W4_OK;
}

/* The NaN blocks of the special and range regimes: A row min(a_row, M-1) gets scale 0xFF in
 * block K/64 and W row min(w_row, N-1) in block (K/32 - 1)/3, on generated rows only (need_a,
 * need_w); d->nan_a_row and d->nan_w_row name them (SIZE_MAX when that row is not generated,
 * unless d->w_deferred: W's rows all exist, on the device). Every output reading one must be
 * NaN (contracts §4). */
static void nan_blocks(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                       const uint8_t *need_w, size_t a_row, size_t w_row)
{
    size_t nb = c->K / 32;
    d->nan_a_row = c->M > a_row ? a_row : c->M - 1;
    d->nan_w_row = c->N > w_row ? w_row : c->N - 1;
    if (need_a[d->nan_a_row])
        d->a_scale.data[d->nan_a_row * nb + nb / 2] = 0xFF;
    else
        d->nan_a_row = SIZE_MAX;
    if (need_w[d->nan_w_row])
        d->w_scale.data[d->nan_w_row * nb + (nb - 1) / 3] = 0xFF;
    else if (!d->w_deferred)
        d->nan_w_row = SIZE_MAX;
}

static void zero_sign_w(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_w);

/* Zero-sign rows (contracts §4.1, "the sign of a zero output"), for the special and tiny
 * regimes, on generated rows only (need_a [M], need_w [N] flag them), after the regime's data:
 *   - A row M-1 (when M >= 2): every element -0 (code 8);
 *   - A row M-2 (when M >= 3): +0 and -0 alternating (bytes 0x80);
 *   - W row 0: its codes' sign bits cleared (every value >= +0), so output (M-1, 0) sums
 *     only -0 terms and (M-2, 0) mixed zeros;
 *   - W row N-1 (when N >= 2 and it is not the special regime's NaN row): every element -0,
 *     so column N-1 sums mixed zeros against random A rows and only +0 against row M-1.
 * Every such output is +0 under exact and ordered(S). Rows 0 and M-1, 0 and N-1 are in every
 * output sample (a4w4_sample_make), so sampled cases check them too. */
static void zero_sign_rows(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                           const uint8_t *need_w)
{
    size_t K2 = c->K / 2, M = c->M;
    if (M >= 2 && need_a[M - 1] && d->nan_a_row != M - 1)
        memset(d->a_fp4.data + (M - 1) * K2, 0x88, K2); /* every element -0 */
    if (M >= 3 && need_a[M - 2] && d->nan_a_row != M - 2)
        memset(d->a_fp4.data + (M - 2) * K2, 0x80, K2); /* +0, -0 alternating */
    zero_sign_w(c, d, need_w);
}

/* zero_sign_rows' W rows (need_w [N] flags the generated ones). */
static void zero_sign_w(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_w)
{
    size_t K2 = c->K / 2, N = c->N;
    if (need_w[0] && d->nan_w_row != 0)
        for (size_t i = 0; i < K2; i++)
            d->w_fp4.data[i] &= 0x77; /* every value >= +0 */
    if (N >= 2 && need_w[N - 1] && d->nan_w_row != N - 1)
        memset(d->w_fp4.data + (N - 1) * K2, 0x88, K2);
}

/* special_blocks' W row 0 (when generated): its last block saturating, codes +-6. */
static void special_w(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_w)
{
    size_t nb = c->K / 32;
    if (need_w[0])
        for (size_t i = 0; i < 16; i++)
            d->w_fp4.data[(nb - 1) * 16 + i] = (i & 1) ? 0xF7 : 0x7F; /* +-6 pairs */
}

/* Special regime overrides (on top of exact-regime data), on rows that exist in the case:
 * A row 0 block 0 all +0, the last A row's last block all -0 (code 8), W row 0's last block
 * saturating (codes +-6 at scale 127 + spread), and one NaN-scale block in A row nan_a_row
 * and W row nan_w_row. */
static void special_blocks(const a4w4_case *c, a4w4_case_data *d, const uint8_t *need_a,
                           const uint8_t *need_w)
{
    size_t nb = c->K / 32, K2 = c->K / 2;
    if (need_a[0])
        memset(d->a_fp4.data, 0x00, 16);
    if (need_a[c->M - 1])
        memset(d->a_fp4.data + (c->M - 1) * K2 + (nb - 1) * 16, 0x88, 16);
    special_w(c, d, need_w);
    nan_blocks(c, d, need_a, need_w, 3, 5);
}

void a4w4_case_data_free(a4w4_case_data *d)
{
    guarded_free(&d->a_fp4);
    guarded_free(&d->a_scale);
    guarded_free(&d->w_fp4);
    guarded_free(&d->w_scale);
    guarded_free(&d->a_scale_shuffled);
    guarded_free(&d->w_fp4_shuffled);
    guarded_free(&d->w_scale_swizzled);
    free(d->x);
    memset(d, 0, sizeof *d);
}

/* Preshuffle the rows of 16-row group n0 of w marked in need (every row when need is NULL)
 * into dst (contracts §3.1 is tile-local in 16 rows). The map moves 16-byte runs whole
 * (k2 = kb % 16 is its innermost index), so each run is one copy to where the map sends its
 * first byte. Unmarked rows were never generated (zero in w, calloc'ed zero in dst), so
 * skipping them leaves the same bytes; test_gen holds the result equal to a4w4_preshuffle's
 * byte-by-byte form. */
static void preshuffle_group(const uint8_t *w, size_t N, size_t K, size_t n0,
                             const uint8_t *need, uint8_t *dst)
{
    for (size_t n = n0 * 16; n < n0 * 16 + 16; n++)
        if (!need || need[n])
            for (size_t kb = 0; kb < K / 2; kb += 16)
                memcpy(dst + a4w4_preshuffle_index(N, K, n, kb), w + n * (K / 2) + kb, 16);
}

/* Row r's cells of columns [0, ncols) in the shuffled activation scale set to v. The layout
 * (contracts §3.2 on the padded shape) keeps each 8-column block d3 of a row at a stride of
 * 256 bytes (4 * 16 * 2 * 2): the first block's 8 offsets, taken from the layout's index,
 * serve every block. */
static void pad_row(uint8_t *dst, size_t M, size_t nb, size_t r, size_t ncols, uint8_t v)
{
    size_t off[8];
    for (size_t j = 0; j < 8; j++)
        off[j] = a4w4_act_scale_shuffle_index(M, nb, r, j);
    size_t c = 0;
    for (; c + 8 <= ncols; c += 8)
        for (size_t j = 0; j < 8; j++)
            dst[off[j] + c * 32] = v;
    for (size_t j = 0; c + j < ncols; j++)
        dst[off[j] + c * 32] = v;
}

/* The pad cells of the shuffled activation scale (rows >= M or columns >= K/32) with the given
 * fills, a corner cell taking the column fill (contracts §3.3): the rest of the layout does
 * not depend on the fills, so this equals a whole a4w4_act_scale_shuffle at the cost of the
 * pad alone. The runner refills for every pad variant of every ASM-layout backend, so the pad
 * is written by blocks, not by cell: a 32-row group with no row below M is contiguous
 * (32 * padded columns bytes, §3.2's d0 outermost) and one memset; the rows from M to the end
 * of M's group by pad_row; the pad columns (at most 7 per row) cell by cell. test_gen holds
 * the result equal to the whole shuffle. */
static void fill_act_scale_pad(a4w4_case_data *d)
{
    size_t nb = d->K / 32, M = d->M;
    size_t prow = a4w4_act_scale_padded_rows(M), pcol = a4w4_act_scale_padded_cols(nb);
    size_t whole = (M + 31) / 32 * 32; /* the first row of the groups wholly in the pad */
    uint8_t *dst = d->a_scale_shuffled.data;
    if (whole < prow)
        memset(dst + a4w4_act_scale_shuffle_index(M, nb, whole, 0), d->row_fill,
               (prow - whole) * pcol);
    for (size_t r = M; r < whole; r++)
        pad_row(dst, M, nb, r, nb, d->row_fill);
    for (size_t r = 0; r < prow; r++)
        for (size_t c = nb; c < pcol; c++)
            dst[a4w4_act_scale_shuffle_index(M, nb, r, c)] = d->col_fill;
}

void a4w4_case_refill(a4w4_case_data *d, uint8_t row_fill, uint8_t col_fill, uint8_t guard)
{
    d->row_fill = row_fill;
    d->col_fill = col_fill;
    d->guard_after = guard;
    d->version++;
    fill_act_scale_pad(d);
    a4w4_guarded *all[] = {&d->a_fp4, &d->a_scale, &d->w_fp4, &d->w_scale,
                           &d->a_scale_shuffled, &d->w_fp4_shuffled, &d->w_scale_swizzled};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->data)
            memset(all[i]->data + all[i]->len, guard, A4W4_GUARD_BYTES);
}

int a4w4_case_guards_intact(const a4w4_case_data *d, const char **which)
{
    const a4w4_guarded *all[] = {&d->a_fp4, &d->a_scale, &d->w_fp4, &d->w_scale,
                                 &d->a_scale_shuffled, &d->w_fp4_shuffled, &d->w_scale_swizzled};
    static const char *const names[] = {"a_fp4", "a_scale", "w_fp4", "w_scale",
                                        "a_scale_shuffled", "w_fp4_shuffled", "w_scale_swizzled"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!guard_ok(all[i], d->guard_after)) {
            *which = names[i];
            return 0;
        }
    }
    return 1;
}

static int derive_layouts(a4w4_case_data *d, const a4w4_sample *s, const uint8_t *need_w,
                          int dense, int defer);
static void swizzle_groups(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst);
static void case_data_init(a4w4_case_data *d, size_t M, size_t N, size_t K);

/* Rows m of one tensor with need[m] (every row when need is NULL), on all cores: each row is
 * its own random stream, so the order of generation never changes a byte. */
static int gen_rows(const a4w4_case *c, int tensor, size_t rows, const uint8_t *need,
                    a4w4_guarded *fp4, a4w4_guarded *scale, uint16_t *x)
{
    size_t nb = c->K / 32, K2 = c->K / 2;
    int rc = A4W4_OK;
    /* one thread below 2^22 elements: cheaper than a team */
#pragma omp parallel for schedule(dynamic, 8) if ((double)rows * (double)c->K >= 0x1p22)
    for (size_t m = 0; m < rows; m++)
        if ((!need || need[m]) &&
            gen_row(c, tensor, m, fp4->data + m * K2, scale->data + m * nb,
                    x ? x + m * c->K : NULL)) {
#pragma omp atomic write
            rc = A4W4_ENOMEM;
        }
    return rc;
}

/* 1 when a scale of a generated row (has[r]) of the [rows, nb] scales is E8M0 code 0: row by
 * row, with memchr over each row's nb scales (no division per scale: the nightly's largest
 * weights hold 83 M scales). */
static int has_code0(const uint8_t *scale, const uint8_t *has, size_t rows, size_t nb)
{
    for (size_t r = 0; r < rows; r++)
        if (has[r] && memchr(scale + r * nb, 0, nb))
            return 1;
    return 0;
}

/* The W-side overrides of the special and tiny regimes on the rows flagged in has_w (the
 * NaN row named in d->nan_w_row first): generate's, and a4w4_case_w_complete's on every row. */
static void w_overrides(const a4w4_case *c, a4w4_case_data *d, const uint8_t *has_w)
{
    if (c->regime == A4W4_REGIME_SPECIAL) {
        special_w(c, d, has_w);
        size_t nb = c->K / 32, w_row = c->N > 5 ? 5 : c->N - 1; /* special_blocks' */
        d->nan_w_row = w_row;
        if (has_w[w_row])
            d->w_scale.data[w_row * nb + (nb - 1) / 3] = 0xFF;
    }
    if (c->regime == A4W4_REGIME_SPECIAL || c->regime == A4W4_REGIME_TINY)
        zero_sign_w(c, d, has_w);
}

/* all_rows: every row of A and W (else the rows of s); defer: the preshuffled weight left
 * unwritten (a4w4_case_generate_dev); defer_w (with all_rows and defer): W's rows outside s
 * and its swizzled scales left for the device (a4w4_case_generate_devw). */
static int generate(const a4w4_case *c, const a4w4_sample *s, int all_rows, int defer,
                    int defer_w, a4w4_case_data *d)
{
    case_data_init(d, c->M, c->N, c->K);
    /* W is deferred only where the device can make it: not the range regime (gen_range.c's
     * rows are the host's alone) and only when rows are missing (a full sample has them) */
    d->w_deferred = defer_w && all_rows && defer && !s->full && c->regime != A4W4_REGIME_RANGE;
    if (d->w_deferred)
        d->w_case = *c;
    size_t nb = c->K / 32, K2 = c->K / 2;
    uint8_t *need_a = calloc(c->M, 1), *need_w = calloc(c->N, 1), *all_a = NULL, *all_w = NULL;
    int rc = A4W4_ENOMEM;
    if (!need_a || !need_w)
        goto out;
    for (size_t i = 0; i < (s->full ? c->M : s->nrows); i++)
        need_a[s->full ? i : s->rows[i]] = 1;
    for (size_t j = 0; j < (s->full ? c->N : s->ncols); j++)
        need_w[s->full ? j : s->cols[j]] = 1;
    const int w_dense = all_rows && !d->w_deferred;
    if (guarded_alloc_as(&d->a_fp4, c->M * K2, all_rows) ||
        guarded_alloc_as(&d->a_scale, c->M * nb, all_rows) ||
        guarded_alloc_as(&d->w_fp4, c->N * K2, w_dense) ||
        guarded_alloc_as(&d->w_scale, c->N * nb, w_dense))
        goto out;
    memset(d->a_scale.data, A4W4_ACT_SCALE_FILL_DEFAULT, c->M * nb); /* filler rows */
    memset(d->w_scale.data, A4W4_ACT_SCALE_FILL_DEFAULT, c->N * nb);
    if (c->regime == A4W4_REGIME_NORMAL && !(d->x = calloc(c->M * c->K, sizeof *d->x)))
        goto out;
    if (d->x && all_rows && c->M * c->K * sizeof *d->x >= DENSE_HUGE_BYTES) /* written whole */
        advise_huge((uint8_t *)d->x, c->M * c->K * sizeof *d->x);
    if (gen_rows(c, STREAM_A, c->M, all_rows ? NULL : need_a, &d->a_fp4, &d->a_scale, d->x) ||
        gen_rows(c, STREAM_W, c->N, w_dense ? NULL : need_w, &d->w_fp4, &d->w_scale, NULL))
        goto out;
    /* every row exists when all_rows: the overrides see them all, the preshuffle only the
     * sample's */
    if (all_rows && (!(all_a = malloc(c->M)) || !(all_w = malloc(c->N))))
        goto out;
    if (all_rows) {
        memset(all_a, 1, c->M);
        memset(all_w, 1, c->N);
    }
    const uint8_t *has_a = all_rows ? all_a : need_a, *has_w = w_dense ? all_w : need_w;
    if (c->regime == A4W4_REGIME_SPECIAL)
        special_blocks(c, d, has_a, has_w);
    if (c->regime == A4W4_REGIME_RANGE) /* rows 8: past the first kinds and variants */
        nan_blocks(c, d, has_a, has_w, 8, 8);
    if (c->regime == A4W4_REGIME_SPECIAL || c->regime == A4W4_REGIME_TINY)
        zero_sign_rows(c, d, has_a, has_w);
    /* with W deferred, the rows not generated hold no code 0 the others do not show: W's
     * scales reach code 0 only in the code0 regime, where every row of A has one */
    d->code0 = has_code0(d->a_scale.data, has_a, c->M, nb) ||
               has_code0(d->w_scale.data, has_w, c->N, nb);

    if (derive_layouts(d, s, need_w, all_rows, defer))
        goto out;
    rc = A4W4_OK;
out:
    free(need_a);
    free(need_w);
    free(all_a);
    free(all_w);
    if (rc != A4W4_OK)
        a4w4_case_data_free(d);
    return rc;
}

int a4w4_case_generate(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d)
{
    return generate(c, s, 0, 0, 0, d);
}

int a4w4_case_generate_all(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d)
{
    a4w4_sample full = {.full = 1};
    return generate(c, s->full ? &full : s, 1, 0, 0, d);
}

int a4w4_case_generate_dev(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d)
{
    a4w4_sample full = {.full = 1};
    return generate(c, s->full ? &full : s, 1, 1, 0, d);
}

int a4w4_case_generate_devw(const a4w4_case *c, const a4w4_sample *s, a4w4_case_data *d)
{
    a4w4_sample full = {.full = 1};
    return generate(c, s->full ? &full : s, 1, 1, 1, d);
}

void a4w4_case_w_complete(a4w4_case_data *d)
{
    if (!d->w_deferred)
        return;
    const a4w4_case *c = &d->w_case;
    uint8_t *all_w = malloc(c->N);
    if (!all_w)
        return; /* out of memory: left deferred, as filler rows a reader's outputs would show */
    memset(all_w, 1, c->N);
    memset(d->w_scale.data, A4W4_ACT_SCALE_FILL_DEFAULT, c->N * (c->K / 32));
    (void)gen_rows(c, STREAM_W, c->N, NULL, &d->w_fp4, &d->w_scale, NULL); /* W: no allocation */
    w_overrides(c, d, all_w);
    free(all_w);
    if (d->w_scale_swizzled.data)
        swizzle_groups(d->w_scale.data, d->N, d->K / 32, d->w_scale_swizzled.data);
    d->w_deferred = 0;
    d->version++;
}

/* The preshuffle of the rows of W marked in need_w (every row when NULL) into d's
 * w_fp4_shuffled (zeroed, allocated by derive_layouts). */
static void preshuffle_rows(a4w4_case_data *d, const uint8_t *need_w)
{
    for (size_t n0 = 0; n0 < d->N / 16; n0++)
        preshuffle_group(d->w_fp4.data, d->N, d->K, n0, need_w, d->w_fp4_shuffled.data);
}

void a4w4_case_wsh_complete(a4w4_case_data *d, const a4w4_sample *s)
{
    if (!d->wsh_deferred)
        return;
    uint8_t *need_w = s->full ? NULL : calloc(d->N, 1);
    if (!s->full && !need_w)
        return; /* out of memory: left deferred, as zeros a reader's outputs would show */
    for (size_t j = 0; !s->full && j < s->ncols; j++)
        need_w[s->cols[j]] = 1;
    preshuffle_rows(d, need_w);
    free(need_w);
    d->wsh_deferred = 0;
    d->version++;
}

/* The weight-scale swizzle of [rows, cols] src into dst (contracts §3.2): the layout keeps
 * each 32-row group in its own 32 * cols bytes (d0 outermost), so ref's a4w4_scale_swizzle of
 * each group alone gives the whole's bytes; the groups go on all cores (a nightly weight has
 * up to 129 M scales; one thread below 2^22). test_gen holds it equal to the whole swizzle. */
static void swizzle_groups(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
#pragma omp parallel for schedule(static) if ((double)rows * (double)cols >= 0x1p22)
    for (size_t g = 0; g < rows / 32; g++)
        a4w4_scale_swizzle(src + g * 32 * cols, 32, cols, dst + g * 32 * cols);
}

/* The ASM layouts of d's row-major operands (contracts §3): the activation-scale shuffle with
 * d's fills, the weight preshuffle (of the needed rows only when the sample s is not full)
 * and the weight-scale swizzle, where the shape allows them. dense: every row exists (the
 * preshuffle's buffer then asks for huge pages: its 16-row groups interleave their rows every
 * 256 bytes, so the sampled rows alone touch nearly all its pages). defer: the preshuffled
 * weight allocated, not written (d->wsh_deferred). 0, or -1 when out of memory. */
static int derive_layouts(a4w4_case_data *d, const a4w4_sample *s, const uint8_t *need_w,
                          int dense, int defer)
{
    size_t nb = d->K / 32, K2 = d->K / 2;
    size_t prow = a4w4_act_scale_padded_rows(d->M), pcol = a4w4_act_scale_padded_cols(nb);
    if (guarded_alloc(&d->a_scale_shuffled, prow * pcol))
        return -1;
    a4w4_act_scale_shuffle(d->a_scale.data, d->M, nb, d->row_fill, d->col_fill,
                           d->a_scale_shuffled.data);
    if (a4w4_preshuffle_supported(d->N, d->K)) {
        if (guarded_alloc_as(&d->w_fp4_shuffled, d->N * K2, dense))
            return -1;
        if (defer)
            d->wsh_deferred = 1;
        else
            preshuffle_rows(d, s->full ? NULL : need_w);
    }
    if (a4w4_scale_swizzle_supported(2, d->N, nb)) {
        if (guarded_alloc(&d->w_scale_swizzled, d->N * nb))
            return -1;
        if (!d->w_deferred) /* else the device's (a4w4_case_w_complete: the host's) */
            swizzle_groups(d->w_scale.data, d->N, nb, d->w_scale_swizzled.data);
    }
    return 0;
}

/* Fields every case data starts with: shape, default fills, a fresh serial. */
static void case_data_init(a4w4_case_data *d, size_t M, size_t N, size_t K)
{
    memset(d, 0, sizeof *d);
    d->M = M;
    d->N = N;
    d->K = K;
    d->row_fill = d->col_fill = A4W4_ACT_SCALE_FILL_DEFAULT;
    d->guard_after = A4W4_GUARD_FILL;
    static atomic_ulong serial; /* cases are generated on several threads (a prefetch) */
    d->serial = atomic_fetch_add(&serial, 1) + 1;
    d->nan_a_row = d->nan_w_row = SIZE_MAX;
}

int a4w4_case_data_load(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                        const uint8_t *w_scale, size_t M, size_t N, size_t K, a4w4_case_data *d)
{
    size_t nb = K / 32, K2 = K / 2;
    a4w4_sample full = {.full = 1};
    case_data_init(d, M, N, K);
    if (guarded_alloc(&d->a_fp4, M * K2) || guarded_alloc(&d->a_scale, M * nb) ||
        guarded_alloc(&d->w_fp4, N * K2) || guarded_alloc(&d->w_scale, N * nb)) {
        a4w4_case_data_free(d);
        return A4W4_ENOMEM;
    }
    memcpy(d->a_fp4.data, a_fp4, M * K2);
    memcpy(d->a_scale.data, a_scale, M * nb);
    memcpy(d->w_fp4.data, w_fp4, N * K2);
    memcpy(d->w_scale.data, w_scale, N * nb);
    for (size_t i = 0; i < M * nb && !d->code0; i++)
        d->code0 = a_scale[i] == 0;
    for (size_t i = 0; i < N * nb && !d->code0; i++)
        d->code0 = w_scale[i] == 0;
    if (derive_layouts(d, &full, NULL, 1, 0)) {
        a4w4_case_data_free(d);
        return A4W4_ENOMEM;
    }
    return A4W4_OK;
}

/* ---- sampling ------------------------------------------------------------------------------ */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted distinct indices of one axis of length len: first and last; one seeded index inside
 * every tile of A4W4_SAMPLE_TILE (so every tile index of the largest output tile is checked,
 * whatever the grid); for each tile size t in {16, 32, 256} the indices before and after every
 * multiple of t when the axis has at most 32 of them, else those around the first 4 and last 4
 * multiples and 16 seeded random ones; plus 8 seeded random indices. keep[i] (allocated here)
 * marks the first, the last and the per-tile indices: thinning never drops them. */
static size_t *axis_sample(size_t len, a4w4_rng *r, size_t *count, unsigned char **keep)
{
    static const size_t tiles[3] = {16, 32, 256};
    size_t ntile = (len + A4W4_SAMPLE_TILE - 1) / A4W4_SAMPLE_TILE;
    size_t cap = 2 + ntile + 8 + 3 * 2 * 32 + 3 * 2 * 24, n = 0;
    size_t *v = malloc(cap * sizeof *v);
    if (!v)
        return NULL;
    v[n++] = 0;
    v[n++] = len - 1;
    for (size_t i = 0; i < ntile; i++) {
        size_t lo = i * A4W4_SAMPLE_TILE, w = len - lo < A4W4_SAMPLE_TILE ? len - lo : A4W4_SAMPLE_TILE;
        v[n++] = lo + (size_t)(a4w4_rng_next(r) % w);
    }
    size_t must = n;
    for (int ti = 0; ti < 3; ti++) {
        size_t t = tiles[ti], mult = (len - 1) / t; /* multiples of t inside (0, len) */
        if (mult <= 32) {
            for (size_t i = 1; i <= mult; i++) {
                v[n++] = i * t - 1;
                v[n++] = i * t;
            }
            continue;
        }
        for (size_t i = 1; i <= 4; i++) {
            v[n++] = i * t - 1;
            v[n++] = i * t;
            v[n++] = (mult + 1 - i) * t - 1;
            v[n++] = (mult + 1 - i) * t;
        }
        for (int i = 0; i < 16; i++) {
            size_t m = 1 + (size_t)(a4w4_rng_next(r) % mult);
            v[n++] = m * t - 1;
            v[n++] = m * t;
        }
    }
    for (int i = 0; i < 8; i++)
        v[n++] = (size_t)(a4w4_rng_next(r) % len);
    size_t *must_v = malloc(must * sizeof *must_v);
    *keep = malloc(n);
    if (!must_v || !*keep) {
        free(must_v);
        free(*keep);
        free(v);
        *keep = NULL;
        return NULL;
    }
    memcpy(must_v, v, must * sizeof *v);
    qsort(must_v, must, sizeof *v, cmp_size);
    qsort(v, n, sizeof *v, cmp_size);
    size_t k = 0, j = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[i] != v[k - 1]) {
            while (j < must && must_v[j] < v[i])
                j++;
            (*keep)[k] = j < must && must_v[j] == v[i];
            v[k++] = v[i];
        }
    free(must_v);
    *count = k;
    return v;
}

/* Keep every other index and every one marked in keep (moved along). Returns 1 when something
 * was dropped. */
static int thin(size_t *v, unsigned char *keep, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (i % 2 == 0 || i == *n - 1 || keep[i]) {
            keep[k] = keep[i];
            v[k++] = v[i];
        }
    int dropped = k < *n;
    *n = k;
    return dropped;
}

int a4w4_sample_make(size_t M, size_t N, size_t K, uint64_t seed, const char *name,
                     int force_full, a4w4_sample *s)
{
    memset(s, 0, sizeof *s);
    if (force_full || (unsigned long long)M * N * K <= A4W4_FULL_CHECK_MACS) {
        s->full = 1;
        s->nrows = M;
        s->ncols = N;
        return A4W4_OK;
    }
    a4w4_rng r;
    a4w4_rng_init(&r, seed, name, stream_id(STREAM_SAMPLE, 0));
    unsigned char *keep_r = NULL, *keep_c = NULL;
    s->rows = axis_sample(M, &r, &s->nrows, &keep_r);
    s->cols = axis_sample(N, &r, &s->ncols, &keep_c);
    if (!s->rows || !s->cols) {
        free(keep_r);
        free(keep_c);
        a4w4_sample_free(s);
        return A4W4_ENOMEM;
    }
    /* work cap: at most A4W4_SAMPLE_BLOCK_DOTS block dot products per implementation, unless
     * the indices that are always kept need more */
    size_t budget = (size_t)(A4W4_SAMPLE_BLOCK_DOTS / (K / 32));
    if (budget < 64)
        budget = 64;
    while (s->nrows * s->ncols > budget) {
        int cols_first = s->ncols >= s->nrows;
        if (!(cols_first ? thin(s->cols, keep_c, &s->ncols) : thin(s->rows, keep_r, &s->nrows)) &&
            !(cols_first ? thin(s->rows, keep_r, &s->nrows) : thin(s->cols, keep_c, &s->ncols)))
            break;
    }
    free(keep_r);
    free(keep_c);
    if (s->nrows == M && s->ncols == N) { /* the sample happens to be everything */
        free(s->rows);
        free(s->cols);
        s->rows = s->cols = NULL;
        s->full = 1;
    }
    return A4W4_OK;
}

void a4w4_sample_free(a4w4_sample *s)
{
    free(s->rows);
    free(s->cols);
    memset(s, 0, sizeof *s);
}
