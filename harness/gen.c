/* gen.c — case data generation and output sampling (see gen.h). */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void a4w4_rng_init(a4w4_rng *r, uint64_t seed, const char *name, uint64_t stream)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the name */
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001B3ull;
    r->s = mix(seed ^ mix(h) ^ mix(stream * 0x9E3779B97F4A7C15ull + 1));
}

uint64_t a4w4_rng_next(a4w4_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    return mix(r->s);
}

static double uniform01(a4w4_rng *r)
{
    return (double)(a4w4_rng_next(r) >> 11) * 0x1p-53;
}

/* Codes drawn from a symmetric set of E2M1 magnitudes {0..maxcode} with random sign. */
static void fill_codes(a4w4_rng *r, uint8_t *fp4, size_t bytes, unsigned maxcode)
{
    for (size_t i = 0; i < bytes; i++) {
        uint64_t v = a4w4_rng_next(r);
        uint8_t lo = (uint8_t)((v & 0xFF) % (maxcode + 1)) | (uint8_t)((v >> 8) & 8);
        uint8_t hi = (uint8_t)(((v >> 16) & 0xFF) % (maxcode + 1)) | (uint8_t)((v >> 24) & 8);
        fp4[i] = (uint8_t)(lo | (hi << 4));
    }
}

static void fill_scales(a4w4_rng *r, uint8_t *s, size_t n, unsigned lo, unsigned hi)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (uint8_t)(lo + a4w4_rng_next(r) % (hi - lo + 1));
}

/* Exact regime: choose a code range and a per-side scale spread d (scales in 127..127+d)
 * such that sum|terms| <= K * maxprod * 2^(2d) < 2^24 quanta (SPEC §4.1); the prover then
 * confirms it per checked output. */
static void gen_exact(a4w4_rng *r, const a4w4_case *c, a4w4_case_data *d)
{
    static const unsigned maxprod[8] = {0, 1, 4, 9, 16, 36, 64, 144}; /* (2v)^2 */
    unsigned maxcode = 7, spread = 0;
    for (;;) {
        double bound = (double)c->K * maxprod[maxcode];
        int s = 3;
        while (s >= 0 && bound * ldexp(1.0, 2 * s) >= 0x1p24)
            s--;
        if (s >= 0 || maxcode == 1) {
            spread = s < 0 ? 0 : (unsigned)s;
            break;
        }
        maxcode--;
    }
    fill_codes(r, d->a_fp4, c->M * c->K / 2, maxcode);
    fill_codes(r, d->w_fp4, c->N * c->K / 2, maxcode);
    fill_scales(r, d->a_scale, c->M * c->K / 32, 127, 127 + spread);
    fill_scales(r, d->w_scale, c->N * c->K / 32, 127, 127 + spread);
}

/* Normal activations: x ~ N(0, 1) rounded to bf16, quantized per 1x32 in the case's mode;
 * weights: random codes, scales 127 +- 4. */
static int gen_normal(a4w4_rng *r, const a4w4_case *c, a4w4_case_data *d)
{
    size_t n = c->M * c->K;
    uint16_t *x = malloc(n * sizeof *x);
    if (!x)
        return A4W4_ENOMEM;
    for (size_t i = 0; i < n; i += 2) {
        double u1 = uniform01(r), u2 = uniform01(r);
        double rad = sqrt(-2.0 * log(u1 > 0 ? u1 : 0x1p-53));
        x[i] = a4w4_f32_to_bf16((float)(rad * cos(6.283185307179586 * u2)));
        if (i + 1 < n)
            x[i + 1] = a4w4_f32_to_bf16((float)(rad * sin(6.283185307179586 * u2)));
    }
    int rc = a4w4_quantize(x, A4W4_IN_BF16, c->M, c->K, c->mode, 0, d->a_fp4, d->a_scale);
    free(x);
    fill_codes(r, d->w_fp4, c->N * c->K / 2, 7);
    fill_scales(r, d->w_scale, c->N * c->K / 32, 123, 131);
    return rc;
}

/* Wide scale spread: codes anywhere, scales uniform in 1..254 on both sides, and about one
 * block in 16 an outlier at code 1 or 254. */
static void gen_wide(a4w4_rng *r, const a4w4_case *c, a4w4_case_data *d)
{
    fill_codes(r, d->a_fp4, c->M * c->K / 2, 7);
    fill_codes(r, d->w_fp4, c->N * c->K / 2, 7);
    uint8_t *sc[2] = {d->a_scale, d->w_scale};
    size_t cnt[2] = {c->M * c->K / 32, c->N * c->K / 32};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < cnt[t]; i++) {
            uint64_t v = a4w4_rng_next(r);
            sc[t][i] = (v & 15) == 0 ? ((v & 16) ? 254 : 1) : (uint8_t)(1 + (v >> 8) % 254);
        }
}

void a4w4_case_data_free(a4w4_case_data *d)
{
    free(d->a_fp4);
    free(d->a_scale);
    free(d->w_fp4);
    free(d->w_scale);
    free(d->a_scale_shuffled);
    free(d->w_fp4_shuffled);
    free(d->w_scale_swizzled);
    memset(d, 0, sizeof *d);
}

int a4w4_case_generate(const a4w4_case *c, a4w4_case_data *d)
{
    memset(d, 0, sizeof *d);
    d->M = c->M;
    d->N = c->N;
    d->K = c->K;
    size_t nb = c->K / 32;
    d->a_fp4 = malloc(c->M * c->K / 2);
    d->a_scale = malloc(c->M * nb);
    d->w_fp4 = malloc(c->N * c->K / 2);
    d->w_scale = malloc(c->N * nb);
    if (!d->a_fp4 || !d->a_scale || !d->w_fp4 || !d->w_scale)
        goto nomem;
    a4w4_rng r;
    a4w4_rng_init(&r, c->seed, c->name, (uint64_t)c->regime);
    switch (c->regime) {
    case A4W4_REGIME_EXACT: gen_exact(&r, c, d); break;
    case A4W4_REGIME_NORMAL:
        if (gen_normal(&r, c, d) != A4W4_OK)
            goto nomem;
        break;
    case A4W4_REGIME_WIDE: gen_wide(&r, c, d); break;
    }
    size_t prow = a4w4_act_scale_padded_rows(c->M), pcol = a4w4_act_scale_padded_cols(nb);
    d->a_scale_shuffled = malloc(prow * pcol);
    if (!d->a_scale_shuffled)
        goto nomem;
    a4w4_act_scale_shuffle(d->a_scale, c->M, nb, A4W4_ACT_SCALE_FILL_DEFAULT,
                           A4W4_ACT_SCALE_FILL_DEFAULT, d->a_scale_shuffled);
    if (a4w4_preshuffle_supported(c->N, c->K)) {
        d->w_fp4_shuffled = malloc(c->N * c->K / 2);
        if (!d->w_fp4_shuffled)
            goto nomem;
        a4w4_preshuffle(d->w_fp4, c->N, c->K, d->w_fp4_shuffled);
    }
    if (a4w4_scale_swizzle_supported(2, c->N, nb)) {
        d->w_scale_swizzled = malloc(c->N * nb);
        if (!d->w_scale_swizzled)
            goto nomem;
        a4w4_scale_swizzle(d->w_scale, c->N, nb, d->w_scale_swizzled);
    }
    return A4W4_OK;
nomem:
    a4w4_case_data_free(d);
    return A4W4_ENOMEM;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted distinct indices of one axis of length len. */
static size_t *axis_sample(size_t len, a4w4_rng *r, size_t *count)
{
    size_t cap = 2 * (len / 16) + 16, n = 0;
    size_t *v = malloc(cap * sizeof *v);
    if (!v)
        return NULL;
    v[n++] = 0;
    v[n++] = len - 1;
    for (size_t t = 16; t < len; t += 16) { /* 16-boundaries include the 32 and 256 ones */
        v[n++] = t - 1;
        v[n++] = t;
    }
    for (int i = 0; i < 8; i++)
        v[n++] = (size_t)(a4w4_rng_next(r) % len);
    qsort(v, n, sizeof *v, cmp_size);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[i] != v[k - 1])
            v[k++] = v[i];
    *count = k;
    return v;
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
    a4w4_rng_init(&r, seed, name, 0x5A4D504Cull);
    s->rows = axis_sample(M, &r, &s->nrows);
    s->cols = axis_sample(N, &r, &s->ncols);
    if (!s->rows || !s->cols) {
        a4w4_sample_free(s);
        return A4W4_ENOMEM;
    }
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
