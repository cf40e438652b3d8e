/* signature.c — mismatch maps and their one-line hypotheses (signature.h). */
#include "signature.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"

#define POISON 0x7FA5u /* engine/backend.h A4W4_POISON_BF16 */
#define K_TESTED_MAX 256

static const char *const kind_names[A4W4_MK_COUNT] = {
    "unwritten", "nan",  "inf",      "nan-missing", "inf-missing",
    "zero",      "sign", "ulp1-tie", "ulp1",        "values"};

const char *a4w4_mismatch_kind_name(a4w4_mismatch_kind k)
{
    return k < A4W4_MK_COUNT ? kind_names[k] : "?";
}

static int is_inf(uint16_t h) { return (h & 0x7FFFu) == 0x7F80u; }

a4w4_mismatch_kind a4w4_mismatch_kind_of(uint16_t got, uint16_t expected, float exact_f32)
{
    if (got == POISON)
        return A4W4_MK_UNWRITTEN;
    if (a4w4_bf16_is_nan(expected))
        return a4w4_bf16_is_nan(got) ? A4W4_MK_OTHER : A4W4_MK_NAN_MISSING;
    if (a4w4_bf16_is_nan(got))
        return A4W4_MK_NAN;
    if (is_inf(got) && !is_inf(expected))
        return A4W4_MK_INF;
    if (is_inf(expected) && !is_inf(got))
        return A4W4_MK_INF_MISSING;
    if (!(got & 0x7FFFu) && (expected & 0x7FFFu))
        return A4W4_MK_ZERO;
    if ((got ^ expected) == 0x8000u)
        return A4W4_MK_SIGN;
    int dist = (got & 0x8000u) == (expected & 0x8000u) &&
               ((got & 0x7FFFu) + 1 == (expected & 0x7FFFu) ||
                (expected & 0x7FFFu) + 1 == (got & 0x7FFFu));
    if (!dist)
        return A4W4_MK_OTHER;
    uint32_t u;
    memcpy(&u, &exact_f32, sizeof u);
    uint16_t lo = (uint16_t)(u >> 16);
    int tie = !isnan(exact_f32) && (u & 0xFFFFu) == 0x8000u &&
              (lo == got || lo == expected) && (lo + 1u == got || lo + 1u == expected);
    return tie ? A4W4_MK_ULP1_TIE : A4W4_MK_ULP1;
}

/* ---- building the map --------------------------------------------------------------------- */

static size_t at(const size_t *idx, int full, size_t i) { return full ? i : idx[i]; }

/* Runs of consecutive checked indices with cnt > 0 into r (at most A4W4_MAP_RANGES). */
static size_t runs(const size_t *cnt, size_t n, const size_t *idx, int full, a4w4_map_range *r,
                   int *more)
{
    size_t k = 0;
    *more = 0;
    for (size_t i = 0; i < n;) {
        if (!cnt[i]) {
            i++;
            continue;
        }
        size_t j = i, sum = 0;
        while (j < n && cnt[j])
            sum += cnt[j++];
        if (k < A4W4_MAP_RANGES)
            r[k++] = (a4w4_map_range){at(idx, full, i), at(idx, full, j - 1), sum};
        else
            *more = 1;
        i = j;
    }
    return k;
}

/* The largest tile T in {256, ..., 16} such that the hit indices are a union of whole
 * T-aligned blocks of the checked ones (some block with two checked indices, some block
 * without a hit), with *parity 1 / 2 when the hit blocks are exactly the odd / even ones;
 * 0 when none. */
static unsigned stripe_tile(const size_t *cnt, size_t n, const size_t *idx, int full,
                            size_t dim, int *parity)
{
    *parity = 0;
    for (unsigned T = 256; T >= 16; T /= 2) {
        size_t nblocks = (dim + T - 1) / T;
        if (nblocks < 2)
            continue;
        int ok = 1, multi = 0, miss = 0, odd_only = 1, even_only = 1;
        for (size_t i = 0; i < n && ok;) {
            size_t b = at(idx, full, i) / T, j = i, hits = 0;
            while (j < n && at(idx, full, j) / T == b)
                hits += cnt[j++] > 0;
            ok = hits == 0 || hits == j - i;
            multi |= hits > 1;
            miss |= hits == 0;
            if ((hits > 0) != (b % 2 == 1)) /* a hit even block, or an odd one without */
                odd_only = 0;
            if ((hits > 0) != (b % 2 == 0))
                even_only = 0;
            i = j;
        }
        if (ok && multi && miss) {
            *parity = odd_only ? 1 : even_only ? 2 : 0;
            return T;
        }
    }
    return 0;
}

/* The tile T (largest of 256..16 with M % T != 0) whose partial last tile is exactly the hit
 * rows, or 0. */
static unsigned partial_tile(const size_t *cnt, size_t n, const size_t *idx, int full, size_t M)
{
    for (unsigned T = 256; T >= 16; T /= 2) {
        size_t start = M / T * T;
        if (M % T == 0 || start == 0)
            continue;
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++)
            ok = (cnt[i] > 0) == (at(idx, full, i) >= start);
        if (ok)
            return T;
    }
    return 0;
}

static const int8_t twice[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* Block b of output (m, n) as an exact double: sum of the products of twice the E2M1
 * values times 2^(sa + sb - 256) (contracts §4); *nan when a scale is 0xFF. */
static double block_value(const a4w4_case_data *d, size_t m, size_t n, size_t b, int *nan)
{
    size_t nb = d->K / 32;
    unsigned sa = d->a_scale.data[m * nb + b], sb = d->w_scale.data[n * nb + b];
    *nan |= sa == 0xFF || sb == 0xFF;
    const uint8_t *a = d->a_fp4.data + m * (d->K / 2) + b * 16;
    const uint8_t *w = d->w_fp4.data + n * (d->K / 2) + b * 16;
    long isum = 0;
    for (int k = 0; k < 16; k++)
        isum += twice[a[k] & 15] * twice[w[k] & 15] + twice[a[k] >> 4] * twice[w[k] >> 4];
    return ldexp((double)isum, (int)sa + (int)sb - 256);
}

static double ulp_of(double x)
{
    x = fabs(x);
    return x < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(x) - 7);
}

/* ordered(1) of output (m, n) (contracts §4.1) with block skip left out (dir 0) or added
 * twice (dir 1), as bf16 bits. */
static uint16_t ordered_without(const a4w4_case_data *d, size_t m, size_t n, size_t skip,
                                int dir)
{
    float acc = 0.0f;
    int nan = 0;
    for (size_t b = 0; b < d->K / 32; b++) {
        float v = (float)block_value(d, m, n, b, &nan);
        if (b != skip)
            acc += v;
        else if (dir)
            acc = acc + v + v;
    }
    return a4w4_f32_to_bf16(acc);
}

/* Votes of output (m, n) for the blocks whose omission (votes[b]) or repetition
 * (votes[nb + b]) explains got: among the blocks whose value lies within two ULPs of the
 * difference, those whose ordered(1) recomputation gives got exactly where ordered(1) with
 * every block does not, or, when none does (an exact, bounded or tree contract), those whose
 * value is at least half the difference. A block whose omission changes nothing, or far
 * below the difference, explains nothing: a one-ULP difference of another summation order
 * (got is ordered(1), judged by a tree) is not a missing tiny block. code0 set when a scale
 * of the output is E8M0 code 0. */
static void vote_blocks(const a4w4_case_data *d, size_t m, size_t n, uint16_t got,
                        uint16_t exp, size_t *votes, uint8_t *near, int *code0)
{
    size_t nb = d->K / 32, nexact = 0;
    double g = a4w4_bf16_to_f32(got), x = a4w4_bf16_to_f32(exp), diff = g - x;
    double tol = 2 * (ulp_of(g) > ulp_of(x) ? ulp_of(g) : ulp_of(x));
    int nan = 0;
    for (size_t b = 0; b < nb; b++)
        *code0 |= !d->a_scale.data[m * nb + b] || !d->w_scale.data[n * nb + b];
    memset(near, 0, 2 * nb);
    uint16_t all = ordered_without(d, m, n, nb, 0); /* nb: no block left out */
    for (size_t b = 0; b < nb; b++) {
        double v = block_value(d, m, n, b, &nan);
        int hit = v == 0 ? -1 : fabs(diff + v) <= tol ? 0 : fabs(diff - v) <= tol ? 1 : -1;
        if (hit < 0)
            continue;
        int exact = all != got && ordered_without(d, m, n, b, hit) == got;
        if (!exact && fabs(v) < fabs(diff) / 2)
            continue;
        size_t slot = (size_t)hit * nb + b;
        near[slot] = 1 + exact;
        nexact += near[slot] == 2;
    }
    if (nan || isnan(diff))
        return;
    for (size_t i = 0; i < 2 * nb; i++)
        votes[i] += near[i] == 2 || (!nexact && near[i] == 1);
}

/* K-block attribution over the first K_TESTED_MAX finite mismatches: the block with the
 * most votes (vote_blocks). */
static int attribute_blocks(const a4w4_map_input *in, a4w4_mismatch_map *m)
{
    const a4w4_case_data *d = in->d;
    const a4w4_sample *s = in->s;
    size_t nb = d->K / 32, n = s->nrows * s->ncols;
    size_t *votes = calloc(2 * nb, sizeof *votes);
    uint8_t *near = malloc(2 * nb);
    if (!votes || !near) {
        free(votes);
        free(near);
        return -1;
    }
    for (size_t k = 0; k < n && m->k_tested < K_TESTED_MAX; k++) {
        if (!in->mism[k] || in->got[k] == POISON || a4w4_bf16_is_nan(in->got[k]) ||
            a4w4_bf16_is_nan(in->expected[k]))
            continue;
        size_t r = at(s->rows, s->full, k / s->ncols), c = at(s->cols, s->full, k % s->ncols);
        int c0 = 0;
        vote_blocks(d, r, c, in->got[k], in->expected[k], votes, near, &c0);
        m->k_tested++;
        m->code0 += (size_t)c0;
    }
    for (size_t i = 0; i < 2 * nb; i++)
        if (votes[i] > m->k_hits) {
            m->k_hits = votes[i];
            m->k_block = (long)(i % nb);
            m->k_doubled = i >= nb;
        }
    free(votes);
    free(near);
    return 0;
}

int a4w4_map_build(const a4w4_map_input *in, a4w4_mismatch_map *m)
{
    const a4w4_sample *s = in->s;
    size_t nr = s->nrows, nc = s->ncols;
    memset(m, 0, sizeof *m);
    m->k_block = -1;
    size_t *rc = calloc(nr + 1, sizeof *rc), *cc = calloc(nc + 1, sizeof *cc);
    if (!rc || !cc) {
        free(rc);
        free(cc);
        return A4W4_ENOMEM;
    }
    for (size_t k = 0; k < nr * nc; k++) {
        if (!in->mism[k])
            continue;
        m->mismatches++;
        rc[k / nc]++;
        cc[k % nc]++;
        float e = in->exact_f32 ? in->exact_f32[k] : NAN;
        m->kinds[a4w4_mismatch_kind_of(in->got[k], in->expected[k], e)]++;
        uint16_t x = in->expected[k] & 0x7FFFu;
        m->tiny_expected += x && x < 0x0080u;
        m->neg_zero += in->got[k] == 0x8000u && in->expected[k] == 0;
    }
    m->nrows = nr;
    m->ncols = nc;
    for (size_t i = 0; i < nr; i++) {
        m->rows_hit += rc[i] > 0;
        m->rows_whole += rc[i] == nc;
    }
    for (size_t j = 0; j < nc; j++) {
        m->cols_hit += cc[j] > 0;
        m->cols_whole += cc[j] == nr;
    }
    m->nrow_ranges = runs(rc, nr, s->rows, s->full, m->rows, &m->rows_more);
    m->ncol_ranges = runs(cc, nc, s->cols, s->full, m->cols, &m->cols_more);
    m->row_tile = stripe_tile(rc, nr, s->rows, s->full, in->M, &m->row_parity);
    m->col_tile = stripe_tile(cc, nc, s->cols, s->full, in->N, &m->col_parity);
    m->row_partial_tile = partial_tile(rc, nr, s->rows, s->full, in->M);
    int rcode = in->d && in->d->a_fp4.data && m->mismatches ? attribute_blocks(in, m) : 0;
    free(rc);
    free(cc);
    m->has = m->mismatches > 0;
    return rcode ? A4W4_ENOMEM : 0;
}

/* ---- the hypothesis ----------------------------------------------------------------------- */

typedef struct {
    char *s;
    size_t len, k;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->k >= b->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->k, b->len - b->k, fmt, ap);
    va_end(ap);
    b->k = w < 0 ? b->len : b->k + (size_t)w;
}

static const char *const kind_text[A4W4_MK_COUNT] = {
    "never written (the poison 0x7fa5 left)",
    "NaN where a finite value is due",
    "Inf where a finite value is due",
    "a number where NaN is due (a 0xFF scale block ignored?)",
    ("a finite value where +-Inf is due (saturated at bf16's largest value, or a total "
     "clamped? contracts §4.3)"),
    "zero where a nonzero value is due",
    "sign only (the magnitude right, the sign wrong)",
    "off by one bf16 ULP on ties (a rounding mode other than round-to-nearest-even?)",
    "off by one bf16 ULP, not on ties (double rounding or another summation order?)",
    "wrong values"};

/* The dominant kind (at least 90% of the mismatches), or -1. */
static int dominant(const a4w4_mismatch_map *m)
{
    for (int k = 0; k < A4W4_MK_COUNT; k++)
        if (m->kinds[k] * 10 >= m->mismatches * 9)
            return k;
    return -1;
}

static void value_part(const a4w4_mismatch_map *m, sbuf *b, char *cls, size_t clen)
{
    int k = dominant(m);
    size_t ulp1 = m->kinds[A4W4_MK_ULP1] + m->kinds[A4W4_MK_ULP1_TIE];
    if (k < 0 && ulp1 * 4 >= m->mismatches * 3) { /* mostly one ULP: the accumulation */
        put(b, "off by one bf16 ULP in %zu of %zu mismatches, more elsewhere (double rounding, "
            "bf16 partials or another summation order?)", ulp1, m->mismatches);
        snprintf(cls, clen, "ulp1");
        return;
    }
    if (k >= 0) {
        if (k == A4W4_MK_SIGN && m->neg_zero == m->kinds[k])
            put(b, "-0 where +0 is due (a total started at -0 or at its first term? contracts "
                   "§4.1)");
        else
            put(b, "%s", kind_text[k]);
        snprintf(cls, clen, "%s", kind_names[k]);
        return;
    }
    if (!m->kinds[A4W4_MK_UNWRITTEN] && !m->kinds[A4W4_MK_NAN] && !m->kinds[A4W4_MK_INF] &&
        !m->kinds[A4W4_MK_NAN_MISSING] &&
        !m->kinds[A4W4_MK_INF_MISSING]) { /* finite, wrong by various amounts */
        put(b, "wrong values (%zu of %zu one bf16 ULP off, %zu zero, %zu sign only)", ulp1,
            m->mismatches, m->kinds[A4W4_MK_ZERO], m->kinds[A4W4_MK_SIGN]);
        snprintf(cls, clen, "values");
        return;
    }
    put(b, "mixed:");
    int first = 1;
    for (int j = 0; j < A4W4_MK_COUNT; j++)
        if (m->kinds[j]) {
            put(b, "%s %zu %s", first ? "" : ",", m->kinds[j], kind_names[j]);
            first = 0;
        }
    snprintf(cls, clen, "mixed");
}

static void ranges_text(const a4w4_map_range *r, size_t n, int more, sbuf *b)
{
    for (size_t i = 0; i < n && i < 4; i++)
        if (r[i].first == r[i].last)
            put(b, "%s%zu", i ? ", " : "", r[i].first);
        else
            put(b, "%s%zu..%zu", i ? ", " : "", r[i].first, r[i].last);
    if (n > 4 || more)
        put(b, ", ...");
}

/* The rows with mismatches, with the hint their shape supports. */
static void rows_text(const a4w4_mismatch_map *m, size_t M, sbuf *b)
{
    int one = m->nrow_ranges == 1 && !m->rows_more, whole = m->rows_whole == m->rows_hit;
    if (one && whole && m->rows[0].first == M - 1 && m->rows[0].last == M - 1) {
        put(b, "row %zu, the last row", M - 1);
        if (m->row_partial_tile)
            put(b, " and the partial last %u-row tile of M=%zu (a skipped tail tile, pad rows "
                "read, or a read past row M-1?)", m->row_partial_tile, M);
        else
            put(b, " (a read past row M-1?)");
    } else if (m->row_partial_tile && whole) {
        put(b, "rows %zu..%zu, the partial last %u-row tile of M=%zu (rows past the last full "
            "tile: pad rows read or the tail tile skipped?)", M / m->row_partial_tile *
            m->row_partial_tile, M - 1, m->row_partial_tile, M);
    } else if (one && m->rows_hit + 1 == m->nrows && m->rows[0].first == 1 && M > 1) {
        put(b, "every row but row 0 (rows 1..%zu: a row stride of 0, every row reading row 0?)",
            M - 1);
    } else if (m->row_tile) {
        put(b, "rows in %u-row tiles ", m->row_tile);
        ranges_text(m->rows, m->nrow_ranges, m->rows_more, b);
        if (m->row_parity)
            put(b, " (every %s %u-row tile)", m->row_parity == 1 ? "odd" : "even", m->row_tile);
    } else {
        put(b, "row%s ", m->rows_hit == 1 ? "" : "s");
        ranges_text(m->rows, m->nrow_ranges, m->rows_more, b);
    }
}

static void cols_text(const a4w4_mismatch_map *m, size_t N, sbuf *b)
{
    if (m->col_tile) {
        put(b, "columns in %u-column tiles ", m->col_tile);
        ranges_text(m->cols, m->ncol_ranges, m->cols_more, b);
        if (m->col_parity)
            put(b, " (every %s %u-column tile)", m->col_parity == 1 ? "odd" : "even",
                m->col_tile);
    } else if (m->ncol_ranges == 1 && m->cols[0].first == N - 1 && m->cols[0].last == N - 1) {
        put(b, "column %zu, the last column", N - 1);
    } else {
        put(b, "column%s ", m->cols_hit == 1 ? "" : "s");
        ranges_text(m->cols, m->ncol_ranges, m->cols_more, b);
    }
}

static void where_part(const a4w4_mismatch_map *m, size_t M, size_t N, sbuf *b)
{
    size_t all = m->nrows * m->ncols;
    if (m->mismatches == all) {
        put(b, "every checked output");
        return;
    }
    if (m->mismatches == 1) {
        put(b, "one output, (%zu, %zu)", m->rows[0].first, m->cols[0].first);
        return;
    }
    if (m->rows_hit == m->rows_whole && m->cols_hit == m->ncols) {
        put(b, "whole rows: ");
        rows_text(m, M, b);
    } else if (m->cols_hit == m->cols_whole && m->rows_hit == m->nrows) {
        put(b, "whole columns: ");
        cols_text(m, N, b);
    } else if (m->rows_hit == m->nrows && m->cols_hit == m->ncols) {
        put(b, "outputs scattered over every checked row and column (%zu of %zu)",
            m->mismatches, all);
    } else {
        rows_text(m, M, b);
        put(b, "; ");
        cols_text(m, N, b);
    }
}

/* "one K block ...; " when one block explains at least half of the outputs tested. */
static void kblock_part(const a4w4_mismatch_map *m, size_t K, sbuf *b)
{
    size_t nb = K / 32;
    if (m->k_block < 0 || m->k_hits * 2 < m->k_tested || !m->k_hits)
        return;
    put(b, "one K block %s: block %ld (K elements %ld..%ld", m->k_doubled ? "counted twice"
        : "missing", m->k_block, 32 * m->k_block, 32 * m->k_block + 31);
    if ((size_t)m->k_block == nb - 1)
        put(b, ", the last block%s", K % 256 ? "; K % 256 != 0: a K-tail loop?" : "");
    put(b, ") explains %zu of %zu outputs tested; ", m->k_hits, m->k_tested);
}

static void hints(const a4w4_mismatch_map *m, sbuf *b)
{
    if (m->code0 && m->code0 == m->k_tested)
        put(b, "; every output tested reads an E8M0 code-0 scale (code 0 decoded other than "
               "2^-127? contracts §1)");
    if (m->tiny_expected * 2 >= m->mismatches)
        put(b, "; %zu of %zu due values lie below 2^-126 (fp32 subnormals flushed to zero?)",
            m->tiny_expected, m->mismatches);
}

void a4w4_map_signature(const a4w4_mismatch_map *m, size_t M, size_t N, size_t K, char *sig,
                        size_t len, char *cls, size_t clen)
{
    sbuf b = {sig, len, 0};
    if (len)
        sig[0] = 0;
    if (!m->has) {
        snprintf(cls, clen, "%s", "none");
        return;
    }
    if (m->variant[0])
        put(&b, "only with the %s fill (pad-dependent, contracts §3.3): ", m->variant);
    kblock_part(m, K, &b);
    value_part(m, &b, cls, clen);
    put(&b, " in ");
    where_part(m, M, N, &b);
    hints(m, &b);
}

/* ---- byte entries ------------------------------------------------------------------------- */

/* 1 when got holds the same bytes as exp in another order. */
static int same_multiset(const uint8_t *got, const uint8_t *exp, size_t n)
{
    size_t hg[256] = {0}, he[256] = {0};
    for (size_t i = 0; i < n; i++) {
        hg[got[i]]++;
        he[exp[i]]++;
    }
    return !memcmp(hg, he, sizeof hg);
}

/* E2M1 magnitude code of a nibble one step toward zero of another's (3 -> 2, never 0 -> x). */
static int toward_zero(unsigned g, unsigned e)
{
    return (g & 8) == (e & 8) && (e & 7) && (g & 7) + 1 == (e & 7);
}

static int codes_signature(const uint8_t *got, const uint8_t *exp, size_t n, sbuf *b, char *cls,
                           size_t clen)
{
    size_t bad = 0, swapped = 0, trunc = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == exp[i])
            continue;
        bad++;
        swapped += got[i] == (uint8_t)((exp[i] << 4) | (exp[i] >> 4));
        unsigned gl = got[i] & 15, gh = got[i] >> 4, el = exp[i] & 15, eh = exp[i] >> 4;
        trunc += (gl == el || toward_zero(gl, el)) && (gh == eh || toward_zero(gh, eh));
    }
    if (!bad)
        return 0;
    if (swapped == bad) {
        put(b, "a_fp4: the two nibbles of %zu bytes swapped (element 2i in the high nibble, "
            "contracts §1 fp4x2)", bad);
        snprintf(cls, clen, "nibble-swap");
    } else if (trunc == bad) {
        put(b, "a_fp4: E2M1 codes one step toward zero in %zu bytes (rounding by truncation "
            "instead of round-to-nearest-even, contracts §2 step 3)", bad);
        snprintf(cls, clen, "e2m1-rounding");
    } else {
        put(b, "a_fp4: element codes differ in %zu of %zu bytes", bad, n);
        snprintf(cls, clen, "codes");
    }
    return 1;
}

static int scales_signature(const uint8_t *got, const uint8_t *exp, size_t n, sbuf *b,
                            char *cls, size_t clen)
{
    size_t bad = 0, up = 0, down = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == exp[i])
            continue;
        bad++;
        up += got[i] == exp[i] + 1;
        down += got[i] + 1 == exp[i];
    }
    if (!bad)
        return 0;
    if (up + down == bad) {
        put(b, "a_scale: E8M0 codes off by one in %zu of %zu blocks (%zu one above, %zu one "
            "below the due code): the scale rounding mode (contracts §2 step 2)", bad, n, up,
            down);
        snprintf(cls, clen, "scale-mode");
    } else {
        put(b, "a_scale: E8M0 codes differ in %zu of %zu blocks", bad, n);
        snprintf(cls, clen, "scales");
    }
    return 1;
}

int a4w4_bytes_signature(const char *tensor, const uint8_t *got, const uint8_t *expected,
                         size_t n, size_t row_bytes, char *sig, size_t len, char *cls,
                         size_t clen)
{
    sbuf b = {sig, len, 0};
    if (len)
        sig[0] = 0;
    if (!strcmp(tensor, "a_fp4"))
        return codes_signature(got, expected, n, &b, cls, clen);
    if (!strcmp(tensor, "a_scale"))
        return scales_signature(got, expected, n, &b, cls, clen);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (got[i] != expected[i] && !bad++)
            first = i;
    if (!bad)
        return 0;
    int perm = same_multiset(got, expected, n);
    put(&b, "%s: %zu of %zu bytes %s", tensor, bad, n,
        perm ? "in other places, the same bytes (a permutation: the index map of the layout, "
               "contracts §3)"
             : "differ (not a permutation of the right bytes)");
    snprintf(cls, clen, "%s", perm ? "layout-permutation" : "layout-bytes");
    if (row_bytes && first / row_bytes > 0)
        put(&b, "; right in the first %zu 32-row group%s, wrong from row %zu on (the row-group "
            "stride, contracts §3.3)", first / row_bytes, first / row_bytes == 1 ? "" : "s",
            first / row_bytes * 32);
    return 1;
}
