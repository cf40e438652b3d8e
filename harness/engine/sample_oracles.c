/* sample_oracles.c — see sample_oracles.h. */
#include "sample_oracles.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_atomic.h"
#include "a4w4_bound.h"
#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"

/* ---- the sub-problem ------------------------------------------------------------------- */

/* Threads for a fast-oracle call on an M x N x K problem: one below 2^26 MACs (a few ms on one
 * core), where starting a team costs more than it saves and its idle threads would spin beside
 * the backends; all threads above. */
static unsigned threads_for(size_t M, size_t N, size_t K)
{
    return (double)M * (double)N * (double)K < 0x1p26 ? 1u : 0u;
}

/* Threads for the bounded(S) limits: about 8 ns a block on one core (against well under
 * 1 ns for a block of the fast exact oracle), so a team pays for itself from 2^22 MACs. */
static unsigned bound_threads(const a4w4_sub_problem *p)
{
    return (double)p->M * (double)p->N * (double)p->K < 0x1p22 ? 1u : 0u;
}

static int exact_fast(const uint8_t *a, const uint8_t *as, const uint8_t *w, const uint8_t *ws,
                      size_t M, size_t N, size_t K, uint16_t *y, float *y_f32)
{
    return a4w4_gemm_exact_fast_ex(a, as, w, ws, M, N, K, y, y_f32, threads_for(M, N, K),
                                   A4W4_FAST_AUTO, NULL);
}

static int ordered_fast(const a4w4_sub_problem *p, unsigned S, uint16_t *y)
{
    return a4w4_gemm_ordered_fast_ex(p->a, p->as, p->w, p->ws, p->M, p->N, p->K, S, y, NULL,
                                     threads_for(p->M, p->N, p->K), A4W4_FAST_AUTO, NULL);
}

static void gather(uint8_t *dst, const uint8_t *src, const size_t *idx, size_t n, size_t width)
{
    for (size_t i = 0; i < n; i++)
        memcpy(dst + i * width, src + idx[i] * width, width);
}

int a4w4_sub_problem_make(const a4w4_case_data *d, const a4w4_sample *s, a4w4_sub_problem *p)
{
    size_t K = d->K, rb = K / 2, nb = K / 32;
    memset(p, 0, sizeof *p);
    p->M = s->nrows;
    p->N = s->ncols;
    p->K = K;
    if (s->full) {
        p->a = d->a_fp4.data;
        p->as = d->a_scale.data;
        p->w = d->w_fp4.data;
        p->ws = d->w_scale.data;
        return A4W4_OK;
    }
    uint8_t *c = malloc((p->M + p->N) * (rb + nb));
    if (!c)
        return A4W4_ENOMEM;
    uint8_t *a = c, *as = a + p->M * rb, *w = as + p->M * nb, *ws = w + p->N * rb;
    gather(a, d->a_fp4.data, s->rows, p->M, rb);
    gather(as, d->a_scale.data, s->rows, p->M, nb);
    gather(w, d->w_fp4.data, s->cols, p->N, rb);
    gather(ws, d->w_scale.data, s->cols, p->N, nb);
    p->copy = c;
    p->a = a;
    p->as = as;
    p->w = w;
    p->ws = ws;
    return A4W4_OK;
}

void a4w4_sub_problem_free(a4w4_sub_problem *p)
{
    free(p->copy);
    memset(p, 0, sizeof *p);
}

/* ---- the exact-regime count ------------------------------------------------------------ */

/* a4w4_exact_regime (ref/a4w4_gemm.c) returns 0 for output (m, n) when a block of row m of A
 * or of row n of W has the NaN scale or an element that dequantizes beyond FLT_MAX (it tests
 * every block of both rows); 1 when no block has a nonzero term; else, with e_b = sa_b + sb_b
 * and emin the smallest e_b over blocks with a nonzero term, 1 exactly when emin - 256 >=
 * -149, emin - 256 + 24 <= 128 and units = sum_b iabs_b << (e_b - emin) < 2^24 (its d < 24
 * test is implied: iabs_b >= 1). T = units * 2^(emin-256) is the exact sum of |terms|, the
 * exact oracle on |A| and |W|; under the two range conditions units < 2^24 holds exactly when
 * RNE_fp32(T) < 2^(emin-232) (below: T is exact in fp32; at or above: rounding is monotonic).
 * Per row, lo and hi bound emin (lo_a + lo_w <= emin <= hi_a + hi_w), which decides most
 * outputs without emin; the rest compute emin from per-block masks of nonzero codes. */
typedef struct {
    uint8_t ok;         /* no NaN scale, every block finite */
    unsigned lo, hi;    /* smallest and largest scale over blocks with a nonzero code; lo > hi:
                           no such block */
} row_facts;

/* 1 when every element of the block dequantizes to a finite fp32 value (as ref's test). */
static int block_finite(const uint8_t *fp4, uint8_t s)
{
    if (s < 253)
        return 1;
    for (size_t k = 0; k < 32; k++)
        if (fabs((double)a4w4_e2m1_to_f32(a4w4_fp4_get(fp4, k))) * ldexp(1.0, (int)s - 127) >
            FLT_MAX)
            return 0;
    return 1;
}

/* Bit k set when element k of the block has a nonzero code (sign aside). */
static uint32_t block_mask(const uint8_t *fp4)
{
    uint32_t m = 0;
    for (unsigned j = 0; j < 16; j++) {
        m |= (uint32_t)((fp4[j] & 0x07) != 0) << (2 * j);
        m |= (uint32_t)((fp4[j] & 0x70) != 0) << (2 * j + 1);
    }
    return m;
}

/* Facts and block masks of rows [0, rows) of one operand. */
static void rows_facts(const uint8_t *fp4, const uint8_t *sc, size_t rows, size_t K,
                       row_facts *f, uint32_t *mask)
{
    size_t nb = K / 32;
    for (size_t r = 0; r < rows; r++) {
        row_facts x = {1, 1000, 0};
        for (size_t b = 0; b < nb; b++) {
            const uint8_t *blk = fp4 + r * (K / 2) + b * 16;
            uint8_t s = sc[r * nb + b];
            uint32_t m = block_mask(blk);
            mask[r * nb + b] = m;
            if (s == 0xFF || !block_finite(blk, s))
                x.ok = 0;
            if (m && s < x.lo)
                x.lo = s;
            if (m && s > x.hi)
                x.hi = s;
        }
        f[r] = x;
    }
}

/* The smallest sa + sb over blocks where both rows have a nonzero code; 1000 for none. */
static unsigned emin_of(const uint32_t *ma, const uint32_t *mw, const uint8_t *sa,
                        const uint8_t *sw, size_t nb)
{
    unsigned e = 1000;
    for (size_t b = 0; b < nb; b++) {
        unsigned t = (unsigned)sa[b] + sw[b];
        if (t < e && (ma[b] & mw[b]))
            e = t;
    }
    return e;
}

/* What the prover says for one output, T = RNE_fp32 of its exact sum of |terms|. */
typedef struct {
    const row_facts *fa, *fw;
    const uint32_t *ma, *mw;
    const uint8_t *sa, *sw;
    size_t nb;
} output_facts;

static int proven_at(const output_facts *o, float T)
{
    if (!o->fa->ok || !o->fw->ok)
        return 0;
    if (o->fa->lo > o->fa->hi || o->fw->lo > o->fw->hi)
        return 1; /* no nonzero code on one side: every term is zero */
    int L = (int)(o->fa->lo + o->fw->lo), U = (int)(o->fa->hi + o->fw->hi);
    if ((double)T >= ldexp(1.0, U - 232))
        return 0; /* units >= 2^24 in any quantum the terms can have, or out of range */
    if (L - 256 >= -149 && U - 232 <= 128 && (double)T < ldexp(1.0, L - 232))
        return 1;
    unsigned e = emin_of(o->ma, o->mw, o->sa, o->sw, o->nb);
    if (e == 1000)
        return 1;
    if ((int)e - 256 < -149 || (int)e - 232 > 128)
        return 0;
    return (double)T < ldexp(1.0, (int)e - 232);
}

/* Copy rows of packed codes with every sign bit cleared (|A| or |W|). */
static void abs_codes(uint8_t *dst, const uint8_t *src, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        dst[i] = src[i] & 0x77;
}

/* Scratch of the count: row facts and masks of both operands, |W|, and one chunk of rows of
 * |A| with its T in fp32 (and the bf16 the oracle also writes). */
typedef struct {
    row_facts *fa, *fw;
    uint32_t *ma, *mw;
    uint8_t *absa, *absw;
    float *T;
    uint16_t *Tb;
    size_t chunk; /* rows of A per fast-oracle call */
} count_scratch;

static void count_scratch_free(count_scratch *c)
{
    free(c->fa);
    free(c->fw);
    free(c->ma);
    free(c->mw);
    free(c->absa);
    free(c->absw);
    free(c->T);
    free(c->Tb);
}

static int count_scratch_alloc(count_scratch *c, const a4w4_sub_problem *p)
{
    size_t nb = p->K / 32, rb = p->K / 2;
    memset(c, 0, sizeof *c);
    c->chunk = p->N >= (1u << 22) ? 1 : (1u << 22) / p->N; /* T at most 16 MiB */
    if (c->chunk > p->M)
        c->chunk = p->M;
    c->fa = malloc(p->M * sizeof *c->fa);
    c->fw = malloc(p->N * sizeof *c->fw);
    c->ma = malloc(p->M * nb * sizeof *c->ma);
    c->mw = malloc(p->N * nb * sizeof *c->mw);
    c->absa = malloc(c->chunk * rb);
    c->absw = malloc(p->N * rb);
    c->T = malloc(c->chunk * p->N * sizeof *c->T);
    c->Tb = malloc(c->chunk * p->N * sizeof *c->Tb);
    if (c->fa && c->fw && c->ma && c->mw && c->absa && c->absw && c->T && c->Tb)
        return A4W4_OK;
    count_scratch_free(c);
    return A4W4_ENOMEM;
}

int a4w4_exact_regime_count(const a4w4_sub_problem *p, size_t *proven)
{
    return a4w4_exact_regime_flags(p, NULL, NULL, proven);
}

int a4w4_exact_regime_flags(const a4w4_sub_problem *p, uint8_t *flags, float *abs_sum,
                            size_t *proven)
{
    size_t nb = p->K / 32, rb = p->K / 2, n = 0;
    count_scratch c;
    *proven = 0;
    if (count_scratch_alloc(&c, p))
        return A4W4_ENOMEM;
    rows_facts(p->a, p->as, p->M, p->K, c.fa, c.ma);
    rows_facts(p->w, p->ws, p->N, p->K, c.fw, c.mw);
    abs_codes(c.absw, p->w, p->N * rb);
    int rc = A4W4_OK;
    for (size_t m0 = 0; m0 < p->M && rc == A4W4_OK; m0 += c.chunk) {
        size_t rows = p->M - m0 < c.chunk ? p->M - m0 : c.chunk;
        abs_codes(c.absa, p->a + m0 * rb, rows * rb);
        rc = exact_fast(c.absa, p->as + m0 * nb, c.absw, p->ws, rows, p->N, p->K, c.Tb, c.T);
        for (size_t i = 0; i < rows && rc == A4W4_OK; i++)
            for (size_t j = 0; j < p->N; j++) {
                size_t m = m0 + i;
                output_facts o = {&c.fa[m], &c.fw[j], c.ma + m * nb, c.mw + j * nb,
                                  p->as + m * nb, p->ws + j * nb, nb};
                int in = proven_at(&o, c.T[i * p->N + j]);
                n += (size_t)in;
                if (flags)
                    flags[m * p->N + j] = (uint8_t)in;
                if (abs_sum)
                    abs_sum[m * p->N + j] = c.T[i * p->N + j];
            }
    }
    count_scratch_free(&c);
    *proven = n;
    return rc == A4W4_OK ? A4W4_OK : A4W4_ENOMEM;
}

/* ---- the oracles ----------------------------------------------------------------------- */

/* The oracles of o->p (set, o otherwise zeroed): ordered1, exact, exact_f32, in_regime,
 * abs_sum, proven. 0, or A4W4_ENOMEM. */
static int compute_on_sub(a4w4_oracles *o)
{
    o->count = o->p.M * o->p.N;
    o->ordered1 = malloc(o->count * 2);
    o->exact = malloc(o->count * 2);
    o->exact_f32 = malloc(o->count * 4);
    o->in_regime = malloc(o->count ? o->count : 1);
    o->abs_sum = malloc((o->count ? o->count : 1) * sizeof *o->abs_sum);
    if (!o->ordered1 || !o->exact || !o->exact_f32 || !o->in_regime || !o->abs_sum)
        return A4W4_ENOMEM;
    const a4w4_sub_problem *p = &o->p;
    if (ordered_fast(p, 1, o->ordered1) ||
        exact_fast(p->a, p->as, p->w, p->ws, p->M, p->N, p->K, o->exact, o->exact_f32))
        return A4W4_ENOMEM;
    return a4w4_exact_regime_flags(p, o->in_regime, o->abs_sum, &o->proven);
}

int a4w4_oracles_compute(const a4w4_case_data *d, const a4w4_sample *s, a4w4_oracles *o)
{
    memset(o, 0, sizeof *o);
    if (a4w4_sub_problem_make(d, s, &o->p))
        return A4W4_ENOMEM;
    return compute_on_sub(o);
}

/* Every scale byte 0x00 of n bytes at s set to 0x01. */
static void code0_as_min_normal(uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s[i] = s[i] ? s[i] : 0x01;
}

int a4w4_oracles_compute_code0_alt(const a4w4_case_data *d, const a4w4_sample *s,
                                   a4w4_oracles *o)
{
    memset(o, 0, sizeof *o);
    a4w4_sub_problem *p = &o->p;
    if (s->full) { /* the case's own buffers: copy them, the scales are rewritten below */
        size_t rb = d->K / 2, nb = d->K / 32;
        uint8_t *c = malloc((d->M + d->N) * (rb + nb));
        if (!c)
            return A4W4_ENOMEM;
        *p = (a4w4_sub_problem){c, c + d->M * rb, c + d->M * (rb + nb),
                                c + d->M * (rb + nb) + d->N * rb, d->M, d->N, d->K, c};
        memcpy(c, d->a_fp4.data, d->M * rb);
        memcpy(c + d->M * rb, d->a_scale.data, d->M * nb);
        memcpy(c + d->M * (rb + nb), d->w_fp4.data, d->N * rb);
        memcpy(c + d->M * (rb + nb) + d->N * rb, d->w_scale.data, d->N * nb);
    } else if (a4w4_sub_problem_make(d, s, p)) {
        return A4W4_ENOMEM;
    }
    /* the scales lie in p->copy (a4w4_sub_problem_make's layout: a, as, w, ws) */
    size_t nb = p->K / 32;
    code0_as_min_normal(p->copy + (p->as - p->copy), p->M * nb);
    code0_as_min_normal(p->copy + (p->ws - p->copy), p->N * nb);
    return compute_on_sub(o);
}

const uint16_t *a4w4_oracles_ordered(a4w4_oracles *o, unsigned S)
{
    if (S <= 1)
        return o->ordered1;
    for (size_t i = 0; i < o->nsplit; i++)
        if (o->split[i].S == S)
            return o->split[i].y;
    if (o->nsplit == 8)
        return NULL;
    uint16_t *y = malloc(o->count * 2);
    const a4w4_sub_problem *p = &o->p;
    if (!y || ordered_fast(p, S, y)) {
        free(y);
        return NULL;
    }
    o->split[o->nsplit].S = S;
    o->split[o->nsplit++].y = y;
    return y;
}

const double *a4w4_oracles_sum_abs(a4w4_oracles *o)
{
    if (o->sum_abs)
        return o->sum_abs;
    o->sum_abs = malloc(o->count * sizeof *o->sum_abs);
    if (!o->sum_abs)
        return NULL;
    const a4w4_sub_problem *p = &o->p;
    size_t nb = p->K / 32;
    for (size_t i = 0; i < p->M; i++)
        for (size_t j = 0; j < p->N; j++) {
            const uint8_t *a = p->a + i * (p->K / 2), *w = p->w + j * (p->K / 2);
            double t = 0;
            for (size_t b = 0; b < nb; b++) {
                double e = ldexp(1.0, (int)p->as[i * nb + b] + (int)p->ws[j * nb + b] - 256);
                for (size_t k = 0; k < 32; k++)
                    t += fabs((double)a4w4_e2m1_to_int2x(a4w4_fp4_get(a, b * 32 + k)) *
                              a4w4_e2m1_to_int2x(a4w4_fp4_get(w, b * 32 + k))) * e;
            }
            o->sum_abs[i * p->N + j] = t;
        }
    return o->sum_abs;
}

const a4w4_bounded_limits *a4w4_oracles_bound(a4w4_oracles *o, unsigned S)
{
    for (size_t i = 0; i < o->nbound; i++)
        if (o->bound[i].S == S)
            return o->bound[i].b;
    if (o->nbound == 8)
        return NULL;
    a4w4_bounded_limits *b = malloc((o->count ? o->count : 1) * sizeof *b);
    if (!b)
        return NULL;
    const a4w4_sub_problem *p = &o->p;
    /* the fast form, bit-equal to a4w4_dot_bounded_limits per output (tests/ref/test_bound.c) */
    if (o->count && a4w4_gemm_bounded_limits_fast(p->a, p->as, p->w, p->ws, p->M, p->N, p->K,
                                                  S < 1 ? 1 : S, b, bound_threads(p))) {
        free(b);
        return NULL;
    }
    o->bound[o->nbound].S = S;
    o->bound[o->nbound++].b = b;
    return b;
}

const uint16_t *a4w4_oracles_tree(a4w4_oracles *o, const a4w4_tree *t)
{
    a4w4_contract c = {A4W4_CONTRACT_TREE, 1, *t};
    char text[A4W4_CONTRACT_MAX];
    if (a4w4_contract_format(&c, text, sizeof text) < 0)
        return NULL;
    for (size_t i = 0; i < o->ntree; i++)
        if (!strcmp(o->tree[i].text, text))
            return o->tree[i].y;
    if (o->ntree == A4W4_ORACLES_MAX_TREES)
        return NULL;
    uint16_t *y = malloc((o->count ? o->count : 1) * 2);
    const a4w4_sub_problem *p = &o->p;
    /* a tree the fast path does not take runs the plain oracle: all threads sooner */
    double macs = (double)p->M * (double)p->N * (double)p->K;
    unsigned threads = a4w4_tree_fast_eligible(t) ? threads_for(p->M, p->N, p->K)
                                                  : macs < 0x1p20 ? 1u : 0u;
    if (!y || a4w4_gemm_tree_fast_ex(p->a, p->as, p->w, p->ws, p->M, p->N, p->K, t, y, NULL,
                                     threads, A4W4_FAST_AUTO, NULL)) {
        free(y);
        return NULL;
    }
    snprintf(o->tree[o->ntree].text, sizeof o->tree[o->ntree].text, "%s", text);
    o->tree[o->ntree++].y = y;
    return y;
}

/* Split j of p's K, [k0, k1), as its own sub-problem in buf (gathered columns). */
static a4w4_sub_problem split_of(const a4w4_sub_problem *p, size_t k0, size_t k1, uint8_t *buf)
{
    const size_t K = p->K, w = k1 - k0;
    a4w4_sub_problem s = {buf, buf + p->M * (w / 2), buf + p->M * (w / 2 + w / 32), NULL,
                          p->M, p->N, w, NULL};
    s.ws = s.w + p->N * (w / 2);
    for (size_t i = 0; i < p->M; i++) {
        memcpy((uint8_t *)s.a + i * (w / 2), p->a + i * (K / 2) + k0 / 2, w / 2);
        memcpy((uint8_t *)s.as + i * (w / 32), p->as + i * (K / 32) + k0 / 32, w / 32);
    }
    for (size_t j = 0; j < p->N; j++) {
        memcpy((uint8_t *)s.w + j * (w / 2), p->w + j * (K / 2) + k0 / 2, w / 2);
        memcpy((uint8_t *)s.ws + j * (w / 32), p->ws + j * (K / 32) + k0 / 32, w / 32);
    }
    return s;
}

/* atomic(S)'s split values of p into q [count * S] (a4w4_oracles_atomic); n' into *n. */
static int atomic_fast(const a4w4_sub_problem *p, unsigned S, uint16_t *q, unsigned *n)
{
    const size_t per = a4w4_split_k_per_split(p->K, S), count = p->M * p->N;
    const size_t w = per < p->K ? per : p->K;
    uint8_t *buf = malloc((p->M + p->N) * (w / 2 + w / 32));
    uint16_t *y = malloc(count * 2);
    int rc = !buf || !y;
    *n = 0;
    memset(q, 0, count * S * 2);
    for (size_t k0 = 0; !rc && k0 < p->K; k0 += per) {
        const a4w4_sub_problem sp = split_of(p, k0, k0 + per < p->K ? k0 + per : p->K, buf);
        rc = ordered_fast(&sp, 1, y);
        for (size_t i = 0; !rc && i < count; i++)
            q[i * S + *n] = y[i];
        ++*n;
    }
    for (size_t i = 0; !rc && i < count; i++) { /* a NaN scale: NaN in every split (§4.1) */
        int nan = 0;
        for (unsigned j = 0; j < *n; j++)
            nan |= a4w4_bf16_is_nan(q[i * S + j]);
        for (unsigned j = 0; nan && j < *n; j++)
            q[i * S + j] = 0x7FC0;
    }
    free(buf);
    free(y);
    return rc;
}

const uint16_t *a4w4_oracles_atomic(a4w4_oracles *o, unsigned S, unsigned *nsplit,
                                    const uint16_t **in_order)
{
    size_t i = 0;
    while (i < o->natomic && o->atomic[i].S != S)
        i++;
    if (i == o->natomic) {
        if (o->natomic == 8 || !S || S > A4W4_ATOMIC_SPLIT_MAX)
            return NULL;
        uint16_t *q = malloc((o->count ? o->count : 1) * S * 2);
        uint16_t *r = malloc((o->count ? o->count : 1) * 2);
        unsigned n = 0;
        if (!q || !r || (o->count && atomic_fast(&o->p, S, q, &n))) {
            free(q);
            free(r);
            return NULL;
        }
        for (size_t k = 0; k < o->count; k++)
            r[k] = a4w4_atomic_fold(q + k * S, NULL, n);
        o->atomic[i].S = S;
        o->atomic[i].n = n;
        o->atomic[i].q = q;
        o->atomic[i].in_order = r;
        o->natomic++;
    }
    if (nsplit)
        *nsplit = o->atomic[i].n;
    if (in_order)
        *in_order = o->atomic[i].in_order;
    return o->atomic[i].q;
}

void a4w4_oracles_free(a4w4_oracles *o)
{
    a4w4_sub_problem_free(&o->p);
    free(o->ordered1);
    free(o->exact);
    free(o->exact_f32);
    free(o->in_regime);
    free(o->abs_sum);
    free(o->sum_abs);
    for (size_t i = 0; i < o->nsplit; i++)
        free(o->split[i].y);
    for (size_t i = 0; i < o->nbound; i++)
        free(o->bound[i].b);
    for (size_t i = 0; i < o->ntree; i++)
        free(o->tree[i].y);
    for (size_t i = 0; i < o->natomic; i++) {
        free(o->atomic[i].q);
        free(o->atomic[i].in_order);
    }
    memset(o, 0, sizeof *o);
}
