/* a4w4_judge_check.c — the GPU judge (ref/gpu/a4w4_judge_gpu.h) on the device against the plain
 * C oracles of ref/, bit for bit, on random cases of eight scale regimes (narrow, exact-like,
 * tiny, wide, full range with 0 / 253 / 254 / 0xFF, zero and -0 rows, spans at the exact
 * pass's fixed-base limit, narrow with a few wide rows) and shapes that cross every tile edge
 * of its passes (M, N not multiples of 64 or 32, K % 256 != 0, one block, K = 16384 and
 * 65536); each case's exact pass also runs with the fixed base off (A4W4_JUDGE_EXACT=window)
 * and must give the same bits on every output; then its comparisons (exact with poison and mask, bounded, differences, bytes
 * with masked NaN blocks, the NaN set, gathers) on planted differences, and its preshuffle.
 *
 *   ordered(1), ordered(S)  vs a4w4_gemm_ordered          (bf16)
 *   exact                   vs a4w4_gemm_exact            (bf16 and fp32 bits)
 *   bounded(S) bound        vs a4w4_dot_bounded_bound     (the same double)
 *   exact-regime prover     vs a4w4_exact_regime          (per output)
 *   bounded(S) limits (bound, exact in double, ±Inf) vs a4w4_dot_bounded_limits (per output)
 *   atomic(S) split values  vs a4w4_gemm_atomic_splits   (bf16; NaN in both counts as equal),
 *                           and its membership compare vs a4w4_atomic_member on planted outputs
 * A mismatch prints its output (m, n) with both values. Built with the judge (the device) as
 * a4w4_judge_check, and with the judge's CPU stand-in as a4w4_judge_check_cpu (tests the test).
 * Usage: a4w4_judge_check [--quick]. Exit 0 pass, 1 a mismatch, 77 no GPU (CTest skip). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "a4w4_atomic.h"
#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_judge_gpu.h"
#include "a4w4_layout.h"

static long g_pass, g_fail;
static uint64_t g_rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void result(int ok, const char *fmt, const char *what, size_t bad, size_t n)
{
    if (ok) {
        g_pass++;
        printf("PASS %s (%zu checked)\n", what, n);
    } else {
        g_fail++;
        printf("FAIL %s: %zu of %zu differ", what, bad, n);
        if (fmt)
            printf("; %s", fmt);
        printf("\n");
    }
    fflush(stdout);
}

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "a4w4_judge_check: out of memory\n");
        exit(1);
    }
    return p;
}

static void *dev_of(const void *host, size_t n)
{
    void *d = NULL;
    if (a4w4j_alloc(&d, n) || (host && a4w4j_upload(d, host, n))) {
        fprintf(stderr, "a4w4_judge_check: device memory: %s\n", a4w4j_last_error());
        exit(1);
    }
    return d;
}

/* ---- cases ----------------------------------------------------------------------------- */
enum { R_NARROW, R_EXACT, R_TINY, R_WIDE, R_FULL, R_ZEROS, R_EDGE, R_MIXED, R_COUNT };
static const char *const rname[R_COUNT] = {"narrow", "exact-like", "tiny", "wide", "full range",
                                           "zero rows", "span at the limit", "mixed tiles"};

/* The exact pass's fixed base (ref/gpu/a4w4_judge_math.h) takes an output whose rows' scale
 * spans (over blocks with a nonzero code) add up to at most this: nb * 4608 * 2^limit <= 2^53. */
static int fixed_limit(size_t nb)
{
    int r = -1;
    while (r < 60 && ((uint64_t)nb * 4608u << (r + 1)) <= (1ull << 53))
        r++;
    return r;
}

/* A row's span as that rule reads it: 255 when a scale is 0xFF (a NaN row, taken too). */
static unsigned row_span(const uint8_t *fp4, const uint8_t *sc, size_t nb)
{
    unsigned mn = 255, mx = 0;
    for (size_t b = 0; b < nb; b++) {
        unsigned nz = 0;
        for (int i = 0; i < 16; i++)
            nz |= fp4[b * 16 + i] & 0x77u;
        if (sc[b] == 0xFF)
            return 255;
        if (nz) {
            mn = sc[b] < mn ? sc[b] : mn;
            mx = sc[b] > mx ? sc[b] : mx;
        }
    }
    return mn == 255 ? 0 : mx - mn;
}

static uint8_t scale_of(int regime, size_t b, int w_side, size_t nb, size_t row)
{
    switch (regime) {
    case R_EDGE: { /* spans adding up to the limit (one less when it is odd) */
        const int half = fixed_limit(nb) / 2;
        return (uint8_t)(w_side ? 90 + (int)(rnd() % 2) * half : 80 + (rnd() % 3 == 0) * half);
    }
    case R_MIXED: /* narrow, with a few wide rows: tiles of both paths in one pass */
        if (row % 37 == 5)
            return scale_of(R_WIDE, b, w_side, nb, row);
        return scale_of(R_NARROW, b, w_side, nb, row);
    case R_NARROW: return (uint8_t)(120 + rnd() % 12);
    case R_EXACT: return (uint8_t)(127 + rnd() % 2);
    case R_TINY: return (uint8_t)(w_side ? 60 + rnd() % 8 : 55 + rnd() % 8);
    case R_WIDE: {
        const int cb = 1 + (int)((b * 2654435761u) % 254);
        int code = (w_side ? 255 - cb : cb) + (int)(rnd() % 17) - 8;
        if (rnd() % 16 == 0)
            code += (int)(rnd() % 101) - 50;
        return (uint8_t)(code < 0 ? 0 : code > 254 ? 254 : code);
    }
    case R_FULL: {
        const unsigned u = (unsigned)(rnd() % 60);
        return (uint8_t)(u == 0 ? 0xFF : u == 1 ? 0 : u == 2 ? 254 : u == 3 ? 253 : rnd() % 255);
    }
    default: return (uint8_t)(125 + rnd() % 4);
    }
}

static void codes_of(uint8_t *row, size_t K, int regime, int zero_row)
{
    for (size_t i = 0; i < K / 2; i++) {
        uint8_t v = (uint8_t)rnd();
        if (regime == R_EXACT)
            v &= 0x33;
        if (zero_row)
            v = (uint8_t)(rnd() % 2 ? 0x88 : rnd() % 2 ? 0x00 : 0x80);
        row[i] = v;
    }
}

static int nan16(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

/* Count mismatches of bf16 arrays (NaN == NaN) and describe the first. */
static size_t diff16(const uint16_t *got, const uint16_t *want, size_t M, size_t N, char *first,
                     size_t len)
{
    size_t bad = 0;
    for (size_t k = 0; k < M * N; k++)
        if (!(got[k] == want[k] || (nan16(got[k]) && nan16(want[k])))) {
            if (!bad++)
                snprintf(first, len, "first (m=%zu, n=%zu) judge 0x%04x C 0x%04x", k / N, k % N,
                         got[k], want[k]);
        }
    return bad;
}

/* Equal bits, or both NaN (a NaN's payload is not a result). */
static int same_bits(const void *x, const void *y, size_t len, int both_nan)
{
    return both_nan || !memcmp(x, y, len);
}

/* The exact pass again with the fixed base off (A4W4_JUDGE_EXACT=window): every output it
 * writes (exact bf16 and fp32, prover, bounded(S) bound, exact in double, Inf bits) must be
 * the same bits as the default path's (x, f, pv, B, E, I, host copies). */
static void check_window(const a4w4j_operands *op, unsigned S, const uint16_t *x, const float *f,
                         const uint8_t *pv, const double *B, const double *E, const uint8_t *I,
                         const char *what)
{
    const size_t M = op->M, N = op->N, n = M * N, nb = op->K / 32;
    const int lim = fixed_limit(nb);
    size_t taken = 0;
    unsigned *sw = xmalloc(N * sizeof *sw);
    for (size_t j = 0; j < N; j++)
        sw[j] = row_span((const uint8_t *)op->h_w_fp4 + j * (op->K / 2),
                         (const uint8_t *)op->h_w_scale + j * nb, nb);
    for (size_t m = 0; m < M; m++) {
        const unsigned sa = row_span((const uint8_t *)op->h_a_fp4 + m * (op->K / 2),
                                     (const uint8_t *)op->h_a_scale + m * nb, nb);
        for (size_t j = 0; j < N; j++)
            taken += sa == 255 || sw[j] == 255 || (int)(sa + sw[j]) <= lim;
    }
    free(sw);
    setenv("A4W4_JUDGE_EXACT", "window", 1);
    a4w4j_case *jc = NULL;
    const uint16_t *ex;
    const float *exf;
    const uint8_t *dpv, *dI;
    const double *dB, *dE;
    size_t unsure = 0, bad = 0;
    char first[200] = "", full[420];
    uint16_t *wx = xmalloc(n * 2);
    float *wf = xmalloc(n * 4);
    uint8_t *wp = xmalloc(n), *wI = xmalloc(n);
    double *wB = xmalloc(n * 8), *wE = xmalloc(n * 8);
    int rc = a4w4j_open(op, &jc) || a4w4j_prepare(jc, 1, 1, S) ||
             a4w4j_exact(jc, &ex, &exf, &dpv, &unsure) ||
             a4w4j_bound_limits(jc, S, &dB, &dE, &dI);
    unsetenv("A4W4_JUDGE_EXACT");
    if (rc) {
        snprintf(first, sizeof first, "judge error: %s", a4w4j_last_error());
        bad = 1;
    } else {
        a4w4j_download(wx, ex, n * 2);
        a4w4j_download(wf, exf, n * 4);
        a4w4j_download(wp, dpv, n);
        a4w4j_download(wB, dB, n * 8);
        a4w4j_download(wE, dE, n * 8);
        a4w4j_download(wI, dI, n);
        for (size_t k = 0; k < n; k++)
            if ((x[k] != wx[k] || !same_bits(&f[k], &wf[k], 4, isnan(f[k]) && isnan(wf[k])) ||
                 pv[k] != wp[k] || !same_bits(&B[k], &wB[k], 8, isnan(B[k]) && isnan(wB[k])) ||
                 !same_bits(&E[k], &wE[k], 8, isnan(E[k]) && isnan(wE[k])) || I[k] != wI[k]) &&
                !bad++)
                snprintf(first, sizeof first, "first (m=%zu, n=%zu): bf16 0x%04x / 0x%04x, "
                         "bound %.17g / %.17g", k / N, k % N, x[k], wx[k], B[k], wB[k]);
    }
    snprintf(full, sizeof full, "%s fixed base (on up to %zu outputs) = window, every exact-pass "
             "output bit for bit", what, taken);
    result(!bad, first, full, bad, n);
    a4w4j_close(jc);
    free(wx);
    free(wf);
    free(wp);
    free(wI);
    free(wB);
    free(wE);
}

/* atomic(S) (contracts §4.1 "atomic(S)"): the judge's split values against
 * a4w4_gemm_atomic_splits (equal bits, or NaN in both), then a4w4j_compare_atomic on outputs
 * that are one order's result (the reverse order's) except where planted off the set, against
 * a4w4_atomic_member's count of the same outputs. */
static void check_atomic(a4w4j_case *jc, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                         const uint8_t *ws, size_t M, size_t N, size_t K, unsigned S,
                         const char *what)
{
    const size_t n = M * N;
    const uint16_t *dq;
    unsigned ns = 0, nc = 0;
    char full[420], first[320] = "";
    if (a4w4j_atomic(jc, S, &dq, &ns)) {
        snprintf(full, sizeof full, "%s atomic(%u) split values", what, S);
        result(0, a4w4j_last_error(), full, 1, 1);
        return;
    }
    uint16_t *gq = xmalloc(n * ns * 2 + 2), *cq = xmalloc(n * S * 2), *y = xmalloc(n * 2);
    a4w4j_download(gq, dq, n * ns * 2);
    a4w4_gemm_atomic_splits(a, as, w, ws, M, N, K, S, cq, &nc);
    size_t bad = ns != nc, planted = 0, outside = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned rev[A4W4_ATOMIC_SPLIT_MAX], jn = 0, cn = 0, eq = 1;
        uint16_t v[A4W4_ATOMIC_SPLIT_MAX];
        for (unsigned j = 0; j < nc && j < ns; j++) {
            v[j] = gq[j * n + k];
            rev[j] = nc - 1 - j;
            jn |= nan16(v[j]);
            cn |= nan16(cq[k * S + j]);
            eq &= v[j] == cq[k * S + j];
        }
        if (!(eq || (jn && cn)) && !bad++)
            snprintf(first, sizeof first, "first (m=%zu, n=%zu) split values differ", k / N,
                     k % N);
        y[k] = a4w4_atomic_fold(cq + k * S, rev, nc);
        if (k % 7 == 3) { /* planted: one ULP up, in the set or not */
            y[k] = (uint16_t)(y[k] + 1);
            planted++;
        }
        outside += !a4w4_atomic_member(cq + k * S, nc, y[k]);
    }
    snprintf(full, sizeof full, "%s atomic(%u) split values (%u splits)", what, S, nc);
    result(!bad, first, full, bad, n);
    void *dy = dev_of(y, n * 2);
    a4w4j_cmp c;
    int rc = a4w4j_compare_atomic(dy, dq, ns, n, 0x7FA5, &c);
    snprintf(full, sizeof full, "%s compare atomic(%u): %zu outside the set of %zu planted "
             "(judge %zu)", what, S, outside, planted, rc ? 0 : c.mismatches);
    result(!rc && c.mismatches == outside && c.checked == n, rc ? a4w4j_last_error() : NULL,
           full, rc ? 1 : (c.mismatches > outside ? c.mismatches - outside
                                                 : outside - c.mismatches), n);
    a4w4j_free(dy);
    free(gq);
    free(cq);
    free(y);
}

/* The judge opened without a host copy of W (h_w_fp4, h_w_scale NULL: W made on the device,
 * a4w4j_gen_w): the outputs its plain C oracle takes read W's rows from the device, and its
 * exact outputs and bounded(S) limits must be the bytes of the judge with the host's copy (x,
 * f, B, E, I: downloaded from it). */
static void check_no_host_w(const a4w4j_operands *with, unsigned S, const uint16_t *x,
                            const float *f, const double *B, const double *E, const uint8_t *I,
                            const char *what)
{
    const size_t n = with->M * with->N;
    a4w4j_operands op = *with;
    op.h_w_fp4 = op.h_w_scale = NULL;
    a4w4j_case *jc = NULL;
    const uint16_t *ex;
    const float *exf;
    const uint8_t *pv, *inf;
    const double *dB, *dE;
    size_t unsure = 0, bad = 0;
    char full[420];
    uint16_t *gx = xmalloc(n * 2);
    float *gf = xmalloc(n * 4);
    double *gB = xmalloc(n * 8), *gE = xmalloc(n * 8);
    uint8_t *gI = xmalloc(n);
    if (a4w4j_open(&op, &jc) || a4w4j_prepare(jc, 1, 1, S) ||
        a4w4j_exact(jc, &ex, &exf, &pv, &unsure) || a4w4j_bound_limits(jc, S, &dB, &dE, &inf))
        bad = n;
    else {
        a4w4j_download(gx, ex, n * 2);
        a4w4j_download(gf, exf, n * 4);
        a4w4j_download(gB, dB, n * 8);
        a4w4j_download(gE, dE, n * 8);
        a4w4j_download(gI, inf, n);
        for (size_t k = 0; k < n; k++)
            bad += gx[k] != x[k] || !same_bits(&gf[k], &f[k], 4, 0) ||
                   !same_bits(&gB[k], &B[k], 8, isnan(gB[k]) && isnan(B[k])) ||
                   !same_bits(&gE[k], &E[k], 8, isnan(gE[k]) && isnan(E[k])) || gI[k] != I[k];
    }
    snprintf(full, sizeof full, "%s without a host W (%zu outputs by the plain oracle on W rows "
             "from the device): exact and limits as with it", what, unsure);
    result(!bad, NULL, full, bad, n);
    a4w4j_close(jc);
    free(gx), free(gf), free(gB), free(gE), free(gI);
}

static void check_case(size_t M, size_t N, size_t K, int regime, unsigned S)
{
    const size_t nb = K / 32, n = M * N;
    uint8_t *a = xmalloc(M * K / 2), *as = xmalloc(M * nb), *w = xmalloc(N * K / 2),
            *ws = xmalloc(N * nb);
    for (size_t m = 0; m < M; m++) {
        codes_of(a + m * K / 2, K, regime, regime == R_ZEROS && m % 2 == 0);
        for (size_t b = 0; b < nb; b++)
            as[m * nb + b] = scale_of(regime, b, 0, nb, m);
    }
    for (size_t j = 0; j < N; j++) {
        codes_of(w + j * K / 2, K, regime, regime == R_ZEROS && j % 3 == 0);
        for (size_t b = 0; b < nb; b++)
            ws[j * nb + b] = scale_of(regime, b, 1, nb, j);
    }
    void *da = dev_of(a, M * K / 2), *das = dev_of(as, M * nb), *dw = dev_of(w, N * K / 2),
         *dws = dev_of(ws, N * nb);
    a4w4j_operands op = {da, das, dw, dws, a, as, w, ws, M, N, K};
    a4w4j_case *jc = NULL;
    const uint16_t *o1, *oS, *ex;
    const float *exf;
    const uint8_t *pv;
    const double *B, *E;
    const uint8_t *inf;
    size_t unsure = 0;
    char what[200], first[320] = "";
    snprintf(what, sizeof what, "%s M=%zu N=%zu K=%zu S=%u", rname[regime], M, N, K, S);
    unsetenv("A4W4_JUDGE_EXACT"); /* the default path: the fixed base where it takes */
    if (a4w4j_open(&op, &jc) || a4w4j_prepare(jc, S, 1, S) || a4w4j_ordered(jc, 1, &o1) ||
        a4w4j_ordered(jc, S, &oS) || a4w4j_exact(jc, &ex, &exf, &pv, &unsure) ||
        a4w4j_bound(jc, S, &B) || a4w4j_bound_limits(jc, S, &B, &E, &inf)) {
        snprintf(first, sizeof first, "judge error: %s", a4w4j_last_error());
        result(0, first, what, 1, 1);
        goto out;
    }
    uint16_t *g1 = xmalloc(n * 2), *gS = xmalloc(n * 2), *gx = xmalloc(n * 2);
    uint16_t *w1 = xmalloc(n * 2), *wS = xmalloc(n * 2), *wx = xmalloc(n * 2);
    float *gf = xmalloc(n * 4), *wf = xmalloc(n * 4);
    uint8_t *gp = xmalloc(n);
    double *gB = xmalloc(n * 8), *gE = xmalloc(n * 8);
    uint8_t *gI = xmalloc(n);
    a4w4j_download(g1, o1, n * 2);
    a4w4j_download(gS, S > 1 ? oS : o1, n * 2);
    a4w4j_download(gx, ex, n * 2);
    a4w4j_download(gf, exf, n * 4);
    a4w4j_download(gp, pv, n);
    a4w4j_download(gB, B, n * 8);
    a4w4j_download(gE, E, n * 8);
    a4w4j_download(gI, inf, n);
    a4w4_gemm_ordered(a, as, w, ws, M, N, K, 1, w1, NULL);
    a4w4_gemm_ordered(a, as, w, ws, M, N, K, S, wS, NULL);
    a4w4_gemm_exact(a, as, w, ws, M, N, K, wx, wf);
    char full[420];
    size_t bad = diff16(g1, w1, M, N, first, sizeof first);
    snprintf(full, sizeof full, "%s ordered(1)", what);
    result(!bad, first, full, bad, n);
    bad = diff16(gS, wS, M, N, first, sizeof first);
    snprintf(full, sizeof full, "%s ordered(%u)", what, S);
    result(!bad, first, full, bad, n);
    bad = diff16(gx, wx, M, N, first, sizeof first);
    for (size_t k = 0; k < n; k++) {
        uint32_t x, y;
        memcpy(&x, &gf[k], 4);
        memcpy(&y, &wf[k], 4);
        if (x != y && !(isnan(gf[k]) && isnan(wf[k])) && !bad++)
            snprintf(first, sizeof first, "first fp32 (m=%zu, n=%zu) judge 0x%08x C 0x%08x",
                     k / N, k % N, x, y);
    }
    snprintf(full, sizeof full, "%s exact bf16+fp32 (%zu by the plain oracle)", what, unsure);
    result(!bad, first, full, bad, n);
    bad = 0;
    size_t badp = 0, infs = 0;
    for (size_t m = 0; m < M; m++)
        for (size_t j = 0; j < N; j++) {
            a4w4_dot_operands d = {a + m * K / 2, as + m * nb, w + j * K / 2, ws + j * nb, K};
            a4w4_bounded_limits L;
            a4w4_dot_bounded_limits(&d, S, &L);
            const size_t k = m * N + j;
            const unsigned li = (L.inf_pos ? 1u : 0u) | (L.inf_neg ? 2u : 0u);
            infs += li != 0;
            if (((memcmp(&L.bound, &gB[k], 8) && !(isnan(L.bound) && isnan(gB[k]))) ||
                 (memcmp(&L.exact, &gE[k], 8) && !(isnan(L.exact) && isnan(gE[k]))) ||
                 li != gI[k]) && !bad++)
                snprintf(first, sizeof first, "first (m=%zu, n=%zu) judge %.17g %.17g %u, C "
                         "%.17g %.17g %u", m, j, gB[k], gE[k], gI[k], L.bound, L.exact, li);
            badp += (size_t)(gp[k] != a4w4_exact_regime(&d));
        }
    snprintf(full, sizeof full, "%s bounded(%u) limits: bound, exact in double, where Inf is "
             "allowed (on %zu outputs)", what, S, infs);
    result(!bad, first, full, bad, n);
    snprintf(full, sizeof full, "%s exact-regime prover", what);
    result(!badp, NULL, full, badp, n);
    check_window(&op, S, gx, gf, gp, gB, gE, gI, what);
    check_no_host_w(&op, S, gx, gf, gB, gE, gI, what);
    check_atomic(jc, a, as, w, ws, M, N, K, S > A4W4_ATOMIC_SPLIT_MAX ? 4 : S, what);
    free(g1);
    free(gS);
    free(gx);
    free(w1);
    free(wS);
    free(wx);
    free(gf);
    free(wf);
    free(gp);
    free(gB);
    free(gE);
    free(gI);
out:
    a4w4j_close(jc);
    a4w4j_free(da);
    a4w4j_free(das);
    a4w4j_free(dw);
    a4w4j_free(dws);
    free(a);
    free(as);
    free(w);
    free(ws);
}

static int cmp_d(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The runner's bounded rule against the limits (a4w4j_compare_limits) on planted outputs of
 * e = 1.0 with bounds 1..3 bf16 ULPs: one beyond, one poison, a NaN bound met and missed, the
 * infinities and a NaN where allowed and not, one vacuous tolerance; the counts, the first
 * mismatches in order and the tolerance's median (this test's own sort) must come back. dg,
 * de: device arrays of n bf16 (overwritten); g, e, B: host scratch of n. */
static void check_limits(void *dg, void *de, uint16_t *g, uint16_t *e, double *B, size_t n)
{
    double *E = xmalloc(n * 8), *u = xmalloc(n * 8);
    uint8_t *inf = xmalloc(n);
    for (size_t k = 0; k < n; k++) {
        e[k] = 0x3F80;
        E[k] = 1.0;
        B[k] = 0x1p-7 * (double)(1 + k % 3);
        inf[k] = 0;
        g[k] = k % 5 == 0 ? 0x3F81 : 0x3F80;
    }
    g[77] = 0x3F84;                   /* 4 ULPs, bound 3: beyond */
    g[100] = 0x7FA5;                  /* poison */
    B[1000] = B[1001] = NAN;          /* a NaN scale: NaN due */
    g[1000] = 0x7FC0;
    g[2000] = 0x7F80, inf[2000] = 1;  /* +Inf allowed */
    g[2001] = 0xFF80, inf[2001] = 1;  /* -Inf not */
    g[2002] = 0x7FC0, inf[2002] = 3;  /* NaN where both are */
    E[3000] = 0x1p-10, e[3000] = g[3000] = 0x3A80; /* |e| within the tolerance: vacuous */
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        const double tol = B[k] + 0x1p-24 * fabs(E[k]) + 0x1p-149;
        if (k != 100 && k != 1000 && k != 1001 && (k < 2000 || k > 2002))
            u[m++] = tol / (fabs(E[k]) < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(E[k]) - 7));
    }
    qsort(u, m, sizeof *u, cmp_d);
    const double median = m % 2 ? u[m / 2] : 0.5 * (u[m / 2 - 1] + u[m / 2]);
    void *dB = dev_of(B, n * 8), *dE = dev_of(E, n * 8), *dI = dev_of(inf, n);
    a4w4j_upload(dg, g, n * 2);
    a4w4j_upload(de, e, n * 2);
    a4w4j_cmp c;
    char what[240];
    int rc = a4w4j_compare_limits(dg, de, dB, dE, dI, n, 0x7FA5, &c);
    int ok = !rc && c.checked == n && c.mismatches == 4 && c.unwritten == 1 && c.nfirst == 4 &&
             c.first[0].index == 77 && c.first[1].index == 100 && c.first[2].index == 1001 &&
             c.first[3].index == 2001 && c.first[0].got == 0x3F84 &&
             c.first[0].expected == 0x3F80 && c.max_ulp == 0xFFFFFFFFu &&
             c.weighed == n - 3 && c.vacuous == 1 && c.bound_use > 1.33 && c.bound_use < 1.34 &&
             c.bound_ulp_median == median && c.bound_ulp_max == u[m - 1];
    snprintf(what, sizeof what, "compare against the bounded limits: 4 beyond (got %zu), 1 "
             "poison, weighed %zu, vacuous %zu, median %.17g (want %.17g)", c.mismatches,
             c.weighed, c.vacuous, c.bound_ulp_median, median);
    result(ok, NULL, what, ok ? 0 : 1, n);
    /* the same in two parts split at 1001 (the device judge's blocks): each part's counts and
     * first mismatches at its own indices, the median selected over both parts' ULPs */
    unsigned long long *dU = NULL;
    a4w4j_cmp p0, p1;
    size_t m0 = 0, m1 = 0, h = 1001;
    double med = -1;
    rc = a4w4j_alloc((void **)&dU, n * 8);
    if (!rc)
        rc = a4w4j_compare_limits_part(dg, de, dB, dE, dI, h, 0x7FA5, dU, &m0, &p0);
    if (!rc)
        rc = a4w4j_compare_limits_part((uint16_t *)dg + h, (uint16_t *)de + h,
                                       (double *)dB + h, (double *)dE + h, (uint8_t *)dI + h,
                                       n - h, 0x7FA5, dU + h, &m1, &p1);
    if (!rc)
        rc = a4w4j_ulps_median(dU, n, m0 + m1, &med);
    ok = !rc && m0 + m1 == m && med == median && p0.mismatches == 2 && p1.mismatches == 2 &&
         p0.first[1].index == 100 && p1.nfirst == 2 && p1.first[0].index == 1001 - h &&
         p1.first[1].index == 2001 - h && p0.checked + p1.checked == n &&
         p0.weighed + p1.weighed == c.weighed && p1.vacuous == 1 && p0.bound_ulp_median == 0 &&
         (p0.bound_ulp_max > p1.bound_ulp_max ? p0.bound_ulp_max : p1.bound_ulp_max) ==
             c.bound_ulp_max;
    snprintf(what, sizeof what, "the bounded limits in two parts: %zu + %zu measured (want %zu), "
             "median %.17g (want %.17g)", m0, m1, m, med, median);
    result(ok, NULL, what, ok ? 0 : 1, n);
    a4w4j_free(dU);
    a4w4j_free(dB);
    a4w4j_free(dE);
    a4w4j_free(dI);
    free(E);
    free(u);
    free(inf);
}

/* ---- the comparisons, on planted differences ------------------------------------------- */
static void check_compares(void)
{
    const size_t M = 300, N = 700, n = M * N; /* four chunks of the device compare */
    uint16_t *e = xmalloc(n * 2), *g = xmalloc(n * 2);
    uint8_t *mask = xmalloc(n);
    for (size_t k = 0; k < n; k++) {
        e[k] = (uint16_t)(0x3F80 + rnd() % 128);
        mask[k] = (uint8_t)(k % 3 != 0);
    }
    memcpy(g, e, n * 2);
    static const size_t at[] = {5, 70001, 150000, 209999};
    for (int i = 0; i < 4; i++)
        g[at[i]] ^= 1;
    g[100] = 0x7FA5;           /* poison: unwritten */
    e[200] = 0x7FC0;           /* NaN meets NaN */
    g[200] = 0xFFC1;
    void *dg = dev_of(g, n * 2), *de = dev_of(e, n * 2), *dm = dev_of(mask, n);
    a4w4j_cmp c;
    char what[160];
    int rc = a4w4j_compare_exact(dg, de, NULL, n, 0x7FA5, &c);
    int ok = !rc && c.checked == n && c.mismatches == 5 && c.unwritten == 1 && c.nfirst == 5 &&
             c.first[0].index == 5 && c.first[1].index == 100 && c.first[4].index == 209999 &&
             c.first[0].got == g[5] && c.first[0].expected == e[5];
    snprintf(what, sizeof what, "compare exact: 4 planted + 1 poison, first 5 in order (got %zu, "
             "%zu unwritten)", c.mismatches, c.unwritten);
    result(ok, NULL, what, ok ? 0 : 1, n);
    rc = a4w4j_compare_exact(dg, de, dm, n, 0x7FA5, &c); /* index 150000 has mask 0 */
    ok = !rc && c.mismatches == 4 && c.checked == n - (n + 2) / 3;
    snprintf(what, sizeof what, "compare exact with a mask (%zu mismatches, %zu checked)",
             c.mismatches, c.checked);
    result(ok, NULL, what, ok ? 0 : 1, n);
    size_t cnt = 0;
    rc = a4w4j_count_diff(dg, de, n, &cnt);
    ok = !rc && cnt == 6;
    result(ok, NULL, "count of differing outputs (4 + poison + NaN payload)", ok ? 0 : 1, n);
    /* bounded: e = 1.0 exactly; the bound admits 2^-8 */
    float *ef = xmalloc(n * 4);
    double *B = xmalloc(n * 8);
    for (size_t k = 0; k < n; k++) {
        e[k] = 0x3F80;
        g[k] = k == 77 ? 0x3F82 : k % 5 == 0 ? 0x3F81 : 0x3F80; /* 2^-6 vs 2^-7 away */
        ef[k] = 1.0f;
        B[k] = 0x1p-7;
    }
    a4w4j_upload(dg, g, n * 2);
    a4w4j_upload(de, e, n * 2);
    void *df = dev_of(ef, n * 4), *dB = dev_of(B, n * 8);
    rc = a4w4j_compare_bounded(dg, de, df, dB, n, 0x7FA5, &c);
    ok = !rc && c.mismatches == 1 && c.nfirst == 1 && c.first[0].index == 77 &&
         c.bound_use > 1.9 && c.bound_use < 2.0;
    snprintf(what, sizeof what, "compare bounded: one output beyond the bound (use %.3f)",
             c.bound_use);
    result(ok, NULL, what, ok ? 0 : 1, n);
    check_limits(dg, de, g, e, B, n);
    /* bytes with NaN blocks masked */
    const size_t rows = 4, rb = 64, nb = rb / 16;
    uint8_t got[256], exp[256], sc[16];
    for (size_t k = 0; k < rows * rb; k++)
        got[k] = exp[k] = (uint8_t)rnd();
    memset(sc, 0x7F, sizeof sc);
    sc[1 * nb + 2] = 0xFF; /* row 1, block 2: bytes 160..175 unspecified */
    got[1 * rb + 2 * 16 + 3] ^= 0x11;
    got[3 * rb + 1] ^= 0x01;
    void *dgb = dev_of(got, sizeof got), *deb = dev_of(exp, sizeof exp), *dsc = dev_of(sc, 16);
    rc = a4w4j_compare_bytes(dgb, deb, rows * rb, dsc, rb, &c);
    ok = !rc && c.mismatches == 1 && c.nfirst == 1 && c.first[0].index == 3 * rb + 1;
    result(ok, NULL, "compare bytes, a NaN block's codes skipped", ok ? 0 : 1, rows * rb);
    /* NaN set: row 3 and column 5 of a 7 x 9 output */
    uint16_t y[63];
    for (int k = 0; k < 63; k++)
        y[k] = (k / 9 == 3 || k % 9 == 5) ? 0x7FC0 : 0x3F80;
    void *dy = dev_of(y, sizeof y);
    size_t wrong = 0, nans = 0;
    rc = a4w4j_nan_set(dy, NULL, 7, 9, 3, 5, &wrong, &nans);
    ok = !rc && wrong == 0 && nans == 15;
    y[0] = 0x7FC0;
    a4w4j_upload(dy, y, sizeof y);
    rc |= a4w4j_nan_set(dy, NULL, 7, 9, 3, 5, &wrong, &nans);
    ok = ok && !rc && wrong == 1;
    result(ok, NULL, "NaN set of the special regime (right, then one stray NaN)", ok ? 0 : 1, 63);
    a4w4j_free(dg);
    a4w4j_free(de);
    a4w4j_free(dm);
    a4w4j_free(df);
    a4w4j_free(dB);
    a4w4j_free(dgb);
    a4w4j_free(deb);
    a4w4j_free(dsc);
    a4w4j_free(dy);
    free(e);
    free(g);
    free(mask);
    free(ef);
    free(B);
}

static void check_preshuffle(void)
{
    const size_t N = 272, K = 1280;
    uint8_t *w = xmalloc(N * K / 2), *want = xmalloc(N * K / 2), *got = xmalloc(N * K / 2);
    for (size_t i = 0; i < N * K / 2; i++)
        w[i] = (uint8_t)rnd();
    a4w4_preshuffle(w, N, K, want);
    void *dw = dev_of(w, N * K / 2), *dd = dev_of(NULL, N * K / 2);
    int rc = a4w4j_preshuffle(dw, N, K, dd);
    if (!rc)
        rc = a4w4j_download(got, dd, N * K / 2);
    size_t bad = 0;
    for (size_t i = 0; i < N * K / 2; i++)
        bad += got[i] != want[i];
    result(!rc && !bad, NULL, "judge preshuffle vs a4w4_preshuffle (272 x 1280)", bad, N * K / 2);
    a4w4j_free(dw);
    a4w4j_free(dd);
    free(w);
    free(want);
    free(got);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (a4w4j_device_count() < 1) {
        printf("SKIP no GPU for the judge\n");
        return 77;
    }
    static const size_t shapes[][3] = {{1, 1, 32},     {3, 17, 256},   {65, 33, 800},
                                       {64, 64, 2048}, {97, 130, 768}, {7, 300, 16384},
                                       {257, 96, 4096}, {19, 40, 65536}};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    const size_t nshape = quick ? 4 : sizeof shapes / sizeof shapes[0];
    const clock_t t0 = clock();
    for (int r = 0; r < R_COUNT; r++)
        for (size_t s = 0; s < nshape; s++)
            check_case(shapes[s][0], shapes[s][1], shapes[s][2], r, Ss[(r + s) % 5]);
    check_compares();
    check_preshuffle();
    printf("== judge check: %ld passed, %ld failed (%.1f s CPU)\n%s\n", g_pass, g_fail,
           (double)(clock() - t0) / CLOCKS_PER_SEC, g_fail ? "RESULT: FAIL" : "RESULT: PASS");
    return g_fail ? 1 : 0;
}
