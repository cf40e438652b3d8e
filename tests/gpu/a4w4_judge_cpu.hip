/* a4w4_judge_cpu.hip — a CPU stand-in for the GPU judge's C ABI (ref/gpu/a4w4_judge_gpu.h), for
 * testing without a GPU: "device" pointers are host memory and every output is computed with
 * the judge's own per-output arithmetic (ref/gpu/a4w4_judge_math.h) in the kernels' order.
 * Linked with the CPU stand-in of gpu/ (a4w4_gpu_cpu.hip) into a4w4check_cpu, it runs the
 * harness's whole device-judge path (engine/devjudge.h, backends/hip/devjudge_hip.c) on a
 * machine without a GPU; it says nothing about tiling, launches or the matrix instructions
 * (a4w4_judge_check does, on the device). Not part of the library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_judge_gpu.h"
#include "a4w4_judge_math.h"
#include "a4w4_judge_wgen.h"

extern "C" {
#include "a4w4_bound.h"
#include "a4w4_gemm.h"
}

static char g_err[256];
static int g_fault;

extern "C" const char *a4w4j_last_error(void) { return g_err; }
extern "C" int a4w4j_device_count(void) { return 1; }
extern "C" void a4w4j_set_fault(int fault) { g_fault = fault; }

struct a4w4j_case {
    a4w4j_operands op;
    uint16_t *atom;    /* atomic(Sa) split values [Sa][M * N] */
    unsigned Sa, natom;
    uint16_t *ord1, *ordS, *ex;
    float *exf;
    uint8_t *proven;
    double *B, *E; /* with Sb: the bound, the exact value rounded to double */
    uint8_t *infs; /* with Sb: where ±Inf is allowed (A4W4J_INF_* bits) */
    unsigned S, Sb;
    int have_exact;
    size_t uncertain;
};

/* Judge cases opened so far and the most rows one had; with A4W4_JUDGE_CPU_OPENS=FILE set,
 * written to FILE at exit as "OPENS MAXROWS" (tests/gpu/cpu_judge_blocks.sh holds the harness
 * to judging a case in blocks of rows when its arrays exceed the judge's ceiling). */
static unsigned long long g_opens, g_max_rows;

static void write_opens(void)
{
    const char *path = getenv("A4W4_JUDGE_CPU_OPENS");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%llu %llu\n", g_opens, g_max_rows);
        fclose(f);
    }
}

extern "C" int a4w4j_open(const a4w4j_operands *op, a4w4j_case **out)
{
    if (!g_opens++)
        atexit(write_opens);
    g_max_rows = op && op->M > g_max_rows ? op->M : g_max_rows;
    *out = NULL;
    if (!op || !op->a_fp4 || !op->h_a_fp4 || !op->M || !op->N || !op->K || op->K % 32 ||
        !op->h_w_fp4 != !op->h_w_scale)
        return A4W4J_EARG;
    a4w4j_case *c = (a4w4j_case *)calloc(1, sizeof *c);
    if (!c)
        return A4W4J_ENOMEM;
    c->op = *op;
    /* the judge mutants, for the CLI tests: 1 ordered(1) wrong, 2 the bounded(S) bound */
    const char *f = getenv("A4W4_JUDGE_CPU_FAULT");
    if (f && *f)
        g_fault = atoi(f);
    *out = c;
    return A4W4J_OK;
}

extern "C" void a4w4j_close(a4w4j_case *c)
{
    if (!c)
        return;
    free(c->atom);
    free(c->ord1);
    free(c->ordS);
    free(c->ex);
    free(c->exf);
    free(c->proven);
    free(c->B);
    free(c->E);
    free(c->infs);
    free(c);
}

/* The codes of rows 0 .. rows-1 of a [rows, K/2] fp4 tensor decoded (a4w4j_decode16: 8 words
 * of packed int8 per 32-block, block b of row r at [(r * K/32 + b) * 8]); NULL when out of
 * memory. Decoded once per pass, not once per output (the same words). */
static uint32_t *decode_rows(const uint8_t *fp4, size_t rows, size_t K)
{
    const size_t nb = K / 32;
    uint32_t *d = (uint32_t *)malloc(rows * nb * 8 * sizeof *d);
    for (size_t i = 0; d && i < rows * nb; i++)
        a4w4j_decode16(fp4 + i * 16, d + i * 8, 0);
    return d;
}

/* One block's exact dot and the dot of its magnitudes from the decoded codes: |a| * |w| is
 * |a * w|, so the signed codes give both. */
static void dots(const uint32_t *sa, const uint32_t *sw, int *d, int *ia)
{
    *d = *ia = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            const int p = (int)(int8_t)(sa[i] >> (8 * j)) * (int)(int8_t)(sw[i] >> (8 * j));
            *d += p;
            *ia += p < 0 ? -p : p;
        }
}

/* One output of the exact pass on the fixed base (a4w4_judge_math.h), as a4w4j_fixed_kernel
 * writes it. */
static void fixed_output(a4w4j_case *c, size_t o, const a4w4j_fix *fx, const a4w4j_bound_acc *bd,
                         int base, unsigned fa, unsigned fw, unsigned S, int nan)
{
    uint32_t hb = 0x7FC0u;
    float f = NAN;
    if (!nan)
        a4w4j_fix_round(fx, base, &hb, &f);
    c->ex[o] = (uint16_t)hb;
    c->exf[o] = f;
    c->proven[o] = (uint8_t)a4w4j_fix_proven(fa, fw, fx, base);
    if (S) {
        c->B[o] = nan ? NAN : a4w4j_bound_final(bd);
        if (g_fault == 2) /* the bound mutant, as below */
            c->B[o] *= 2.0;
        c->infs[o] = (uint8_t)(nan ? 0u : a4w4j_bound_infs(bd));
        c->E[o] = nan ? NAN : a4w4j_fix_round_d(fx, base);
    }
}

/* One output of the ordered pass: ordered(1)'s and ordered(S)'s fp32 sums of the block values
 * (split ends every `per` blocks), rounded to bf16; the exact pass's state is not needed. */
static void ordered_output(a4w4j_case *c, size_t m, size_t j, const uint32_t *ad,
                           const uint32_t *wd, size_t per, unsigned S)
{
    const size_t N = c->op.N, nb = c->op.K / 32, o = m * N + j;
    const uint8_t *as = c->op.a_scale + m * nb, *ws = c->op.w_scale + j * nb;
    float t1 = 0.0f, ts = 0.0f, to = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        int d, ia;
        dots(ad + (m * nb + b) * 8, wd + (j * nb + b) * 8, &d, &ia);
        const float v = a4w4j_block_value(d, as[b], ws[b]);
        t1 = J_FADD(t1, v);
        ts = J_FADD(ts, v);
        if ((b + 1) % per == 0 || b + 1 == nb) {
            to = J_FADD(to, ts);
            ts = 0.0f;
        }
    }
    uint32_t h = a4w4j_bf16_of_f32(t1);
    if (g_fault == 1 && j % 16 == 15 && (h & 0x7FFFu) <= 0x7F80u)
        h += 1;
    c->ord1[o] = (uint16_t)h;
    if (S > 1)
        c->ordS[o] = (uint16_t)a4w4j_bf16_of_f32(to);
}

/* Every output: the ordered pass (S: ordered_output) or the exact pass (bound Sb, 0 none). */
static int compute(a4w4j_case *c, int exact, unsigned S)
{
    const size_t M = c->op.M, N = c->op.N, K = c->op.K, nb = K / 32, n = M * N;
    const size_t per = a4w4_split_k_per_split(K, S ? S : 1) / 32;
    if (!exact) {
        if (!c->ord1)
            c->ord1 = (uint16_t *)malloc(n * 2);
        if (S > 1 && !c->ordS)
            c->ordS = (uint16_t *)malloc(n * 2);
    } else {
        if (!c->ex) {
            c->ex = (uint16_t *)malloc(n * 2);
            c->exf = (float *)malloc(n * 4);
            c->proven = (uint8_t *)malloc(n);
        }
        if (S && !c->B) {
            c->B = (double *)malloc(n * 8);
            c->E = (double *)malloc(n * 8);
            c->infs = (uint8_t *)malloc(n);
        }
    }
    const char *path = getenv("A4W4_JUDGE_EXACT"); /* "window": the fixed base off */
    const int limit = path && !strcmp(path, "window") ? -2 : a4w4j_fix_limit((long long)nb);
    uint32_t *ad = decode_rows(c->op.a_fp4, M, K), *wd = decode_rows(c->op.w_fp4, N, K);
    if (!ad || !wd) {
        free(ad);
        free(wd);
        return A4W4J_ENOMEM;
    }
    for (size_t m = 0; m < M; m++) {
        const uint8_t *a = c->op.a_fp4 + m * K / 2, *as = c->op.a_scale + m * nb;
        const unsigned fa = a4w4j_row_facts(a, as, (long long)nb);
        uint8_t la, sa_span;
        a4w4j_row_span(a, as, (long long)nb, &la, &sa_span);
        for (size_t j = 0; j < N; j++) {
            if (!exact) {
                ordered_output(c, m, j, ad, wd, per, S);
                continue;
            }
            const uint8_t *w = c->op.w_fp4 + j * K / 2, *ws = c->op.w_scale + j * nb;
            a4w4j_win tot, spl;
            a4w4j_prove pr;
            a4w4j_bound_acc bd, fbd;
            a4w4j_fix fx, fx0;
            uint8_t lw, sw_span;
            a4w4j_row_span(w, c->op.w_scale + j * nb, (long long)nb, &lw, &sw_span);
            const int fixed = limit >= -1 && a4w4j_fix_takes(sa_span, sw_span, limit);
            const int narrow = fixed && a4w4j_fix_takes(sa_span, sw_span, limit < A4W4J_NARROW_SPAN
                                                                              ? limit
                                                                              : A4W4J_NARROW_SPAN);
            a4w4j_fix32 l32 = {0, 0};
            const int base = la + lw;
            double tpos = 0.0, tneg = 0.0;
            int unsure = 0, snan = 0;
            a4w4j_win_init(&tot);
            a4w4j_win_init(&spl);
            a4w4j_prove_init(&pr);
            a4w4j_bound_init(&bd);
            a4w4j_bound_init(&fbd);
            a4w4j_fix_init(&fx);
            fx0 = fx;
            for (size_t b = 0; b < nb; b++) {
                int d, ia;
                dots(ad + (m * nb + b) * 8, wd + (j * nb + b) * 8, &d, &ia);
                const unsigned sa = as[b], sb = ws[b];
                const int split_end = (b + 1) % per == 0 || b + 1 == nb;
                if (narrow) { /* the kernel's narrow form: 32-bit sums flushed per 4 blocks */
                    a4w4j_fix32_add(&fx, &l32, d, ia, (int)(sa + sb), base);
                    if (split_end || b % A4W4J_NARROW_BLOCKS == A4W4J_NARROW_BLOCKS - 1)
                        a4w4j_fix_flush(&fx, &l32);
                } else {
                    a4w4j_fix_add(&fx, d, ia, (int)(sa + sb), base);
                }
                a4w4j_win_add(&tot, d, sa, sb);
                a4w4j_win_add(&spl, d, sa, sb);
                a4w4j_prove_add(&pr, ia, sa, sb);
                if (sa != 0xFFu && sb != 0xFFu) { /* d = ipos - ineg, ia = ipos + ineg */
                    const double q = a4w4j_pow2d((int)(sa + sb) - 256);
                    tpos = J_DADD(tpos, (double)((ia + d) / 2) * q);
                    tneg = J_DADD(tneg, (double)((ia - d) / 2) * q);
                }
                if ((b + 1) % per == 0 || b + 1 == nb) {
                    double pd;
                    if (spl.nan)
                        snan = 1;
                    else if (!a4w4j_win_round_d(&spl, &pd))
                        unsure = 1;
                    else
                        a4w4j_bound_add(&bd, pd, tpos, tneg,
                                        (long long)((b + 1) % per ? (b + 1) % per : per));
                    a4w4j_win_init(&spl);
                    tpos = tneg = 0.0;
                    a4w4j_fix_split(&fbd, &fx, &fx0,  base,
                                    (long long)((b + 1) % per ? (b + 1) % per : per));
                    fx0 = fx;
                }
            }
            const size_t o = m * N + j;
            uint32_t hb = 0;
            float f;
            const unsigned fw = a4w4j_row_facts(w, ws, (long long)nb);
            if (fixed) { /* the device's fixed base (a4w4j_fixed_kernel) */
                fixed_output(c, o, &fx, &fbd, base, fa, fw, S,
                             sa_span == A4W4J_SPAN_NAN || sw_span == A4W4J_SPAN_NAN);
                continue;
            }
            int sure = a4w4j_win_round(&tot, &hb, &f) && !(S && unsure);
            c->proven[o] = (uint8_t)a4w4j_proven(fa, fw, &pr);
            if (S) {
                const int nan = snan || tot.nan;
                c->B[o] = nan ? NAN : a4w4j_bound_final(&bd);
                if (g_fault == 2) /* the bound mutant: twice too lenient (A4W4_JUDGE_CPU_FAULT) */
                    c->B[o] *= 2.0;
                c->infs[o] = (uint8_t)(nan ? 0u : a4w4j_bound_infs(&bd));
                c->E[o] = NAN;
                sure = sure && (nan || a4w4j_win_round_d(&tot, &c->E[o]));
            }
            if (!sure) { /* the plain oracle, as the device path does */
                /* no host W (made on the device): the device's row, as the judge downloads it */
                const uint8_t *hw = c->op.h_w_fp4 ? c->op.h_w_fp4 : c->op.w_fp4;
                const uint8_t *hws = c->op.h_w_fp4 ? c->op.h_w_scale : c->op.w_scale;
                a4w4_dot_operands op = {c->op.h_a_fp4 + m * K / 2, c->op.h_a_scale + m * nb,
                                        hw + j * K / 2, hws + j * nb, K};
                uint16_t h16;
                a4w4_dot_exact(&op, &h16, &f);
                hb = h16;
                if (S) {
                    a4w4_bounded_limits L;
                    a4w4_dot_bounded_limits(&op, S, &L);
                    c->B[o] = L.bound;
                    c->E[o] = L.exact;
                    c->infs[o] = (uint8_t)((L.inf_pos ? A4W4J_INF_POS : 0u) |
                                           (L.inf_neg ? A4W4J_INF_NEG : 0u));
                }
                c->uncertain++;
            }
            c->ex[o] = (uint16_t)hb;
            c->exf[o] = f;
        }
    }
    free(ad);
    free(wd);
    if (exact) {
        c->have_exact = 1;
        c->Sb = S ? S : c->Sb;
    } else if (S > 1) {
        c->S = S;
    }
    return A4W4J_OK;
}

extern "C" int a4w4j_prepare(a4w4j_case *c, unsigned S1, int exact, unsigned Sb)
{
    int rc = A4W4J_OK;
    if (!c->ord1 || (S1 > 1 && c->S != S1))
        rc = compute(c, 0, S1);
    if (!rc && (exact || Sb) && (!c->have_exact || (Sb && c->Sb != Sb)))
        rc = compute(c, 1, Sb);
    return rc;
}

extern "C" int a4w4j_ordered(a4w4j_case *c, unsigned S, const uint16_t **y)
{
    int rc = (S == 1 && !c->ord1) || (S > 1 && c->S != S) ? compute(c, 0, S) : A4W4J_OK;
    *y = S == 1 ? c->ord1 : c->ordS;
    return rc;
}

extern "C" int a4w4j_exact(a4w4j_case *c, const uint16_t **bf16, const float **f32,
                           const uint8_t **proven, size_t *uncertain)
{
    int rc = c->have_exact ? A4W4J_OK : compute(c, 1, 0);
    if (bf16)
        *bf16 = c->ex;
    if (f32)
        *f32 = c->exf;
    if (proven)
        *proven = c->proven;
    if (uncertain)
        *uncertain = c->uncertain;
    return rc;
}

extern "C" int a4w4j_bound(a4w4j_case *c, unsigned S, const double **B)
{
    int rc = c->Sb == S ? A4W4J_OK : compute(c, 1, S);
    *B = c->B;
    return rc;
}

extern "C" int a4w4j_bound_limits(a4w4j_case *c, unsigned S, const double **B,
                                  const double **exact, const uint8_t **infs)
{
    int rc = c->Sb == S ? A4W4J_OK : compute(c, 1, S);
    *B = c->B;
    *exact = c->E;
    *infs = c->infs;
    return rc;
}

extern "C" int a4w4j_atomic(a4w4j_case *c, unsigned S, const uint16_t **q, unsigned *nsplit)
{
    if (!c || !q || !nsplit || S < 1 || S > A4W4J_ATOMIC_MAX)
        return A4W4J_EARG;
    const size_t M = c->op.M, N = c->op.N, K = c->op.K, nb = K / 32, n = M * N;
    const size_t per = a4w4_split_k_per_split(K, S) / 32, ns = (nb + per - 1) / per;
    if (c->Sa != S) {
        free(c->atom);
        c->Sa = 0;
        uint32_t *ad = decode_rows(c->op.a_fp4, M, K), *wd = decode_rows(c->op.w_fp4, N, K);
        if (!(c->atom = (uint16_t *)malloc(ns * n * 2)) || !ad || !wd) {
            free(ad);
            free(wd);
            return A4W4J_ENOMEM;
        }
        for (size_t m = 0; m < M; m++)
            for (size_t j = 0; j < N; j++) { /* the ordered pass's split totals, in bf16 */
                const uint8_t *as = c->op.a_scale + m * nb, *ws = c->op.w_scale + j * nb;
                float ts = 0.0f;
                for (size_t b = 0; b < nb; b++) {
                    int d, ia;
                    dots(ad + (m * nb + b) * 8, wd + (j * nb + b) * 8, &d, &ia);
                    ts = J_FADD(ts, a4w4j_block_value(d, as[b], ws[b]));
                    if ((b + 1) % per == 0 || b + 1 == nb) {
                        c->atom[(b / per) * n + m * N + j] = (uint16_t)a4w4j_bf16_of_f32(ts);
                        ts = 0.0f;
                    }
                }
            }
        free(ad);
        free(wd);
        c->Sa = S;
        c->natom = (unsigned)ns;
    }
    *q = c->atom;
    *nsplit = c->natom;
    return A4W4J_OK;
}

extern "C" int a4w4j_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    if (N % 16 || K % 64)
        return A4W4J_ESHAPE;
    const size_t Kb = K / 2;
    for (size_t i = 0; i < N * (Kb / 16); i++) {
        const size_t r = i / (Kb / 16), kr = i % (Kb / 16);
        memcpy(dst + ((((r / 16) * (Kb / 32) + kr / 2) * 2 + kr % 2) * 16 + r % 16) * 16,
               w + r * Kb + kr * 16, 16);
    }
    return A4W4J_OK;
}

/* W made "on the device": every 32-block through ref/gpu/a4w4_judge_wgen.h, the lines the
 * device's kernel runs (j_gen_w), block by block in row-major order. A4W4_JUDGE_CPU_WGEN_FAULT
 * (tests): 1 the next row's stream (as a4w4j_set_wgen_fault(1)), 2 one byte of W flipped. */
static int g_wgen_fault;
extern "C" void a4w4j_set_wgen_fault(int fault) { g_wgen_fault = fault; }

extern "C" int a4w4j_gen_w(const a4w4j_wgen *g, uint8_t *w_fp4, uint8_t *w_scale,
                           uint8_t *w_scale_swizzled)
{
    if (!g || !g->name || !w_fp4 || !w_scale || g->regime < A4W4J_WGEN_EXACT ||
        g->regime > A4W4J_WGEN_TINY)
        return A4W4J_EARG;
    if (!g->N || !g->K || g->K % 32 || g->K / 32 > (size_t)A4W4J_MAX_BLOCKS ||
        (w_scale_swizzled && (g->N % 32 || (g->K / 32) % 8)))
        return A4W4J_ESHAPE;
    a4w4j_wgen_plan p;
    a4w4j_wgen_plan_of(g->seed, g->name, (long long)g->N, (long long)g->K, g->regime, &p);
    const char *f = getenv("A4W4_JUDGE_CPU_WGEN_FAULT");
    const int fault = f && *f ? atoi(f) : g_wgen_fault;
    p.fault = fault == 1;
    const long long nb = p.K / 32;
    for (long long i = 0; i < p.N * nb; i++) {
        uint8_t sc;
        a4w4j_wgen_block(&p, i / nb, i % nb, w_fp4 + i * 16, &sc);
        w_scale[i] = sc;
        if (w_scale_swizzled)
            w_scale_swizzled[a4w4j_swizzle_at(nb, i / nb, i % nb)] = sc;
    }
    if (fault == 2) /* one wrong byte in the middle of W */
        w_fp4[(size_t)(p.N / 2) * (size_t)(p.K / 2) + (size_t)(p.K / 4)] ^= 0x10;
    return A4W4J_OK;
}

static int nan16(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

static unsigned ulp(uint16_t a, uint16_t b)
{
    if (nan16(a) || nan16(b))
        return nan16(a) && nan16(b) ? 0u : 0xFFFFFFFFu;
    const int ia = (a & 0x8000u) ? -(int)(a & 0x7FFFu) - 1 : (int)a;
    const int ib = (b & 0x8000u) ? -(int)(b & 0x7FFFu) - 1 : (int)b;
    return (unsigned)(ia > ib ? ia - ib : ib - ia);
}

static void rec(a4w4j_cmp *o, size_t k, uint16_t g, uint16_t e)
{
    o->mismatches++;
    if (o->nfirst < A4W4J_MAX_FIRST) {
        o->first[o->nfirst].index = k;
        o->first[o->nfirst].got = g;
        o->first[o->nfirst++].expected = e;
    }
    const unsigned d = ulp(g, e);
    o->max_ulp = d > o->max_ulp ? d : o->max_ulp;
}

extern "C" int a4w4j_compare_exact(const uint16_t *got, const uint16_t *exp, const uint8_t *mask,
                                   size_t n, uint16_t poison, a4w4j_cmp *o)
{
    memset(o, 0, sizeof *o);
    for (size_t k = 0; k < n; k++) {
        if (mask && !mask[k])
            continue;
        o->checked++;
        o->hash += (unsigned long long)k * 0x9E3779B97F4A7C15ull + got[k];
        if (got[k] == poison) {
            o->unwritten++;
            rec(o, k, got[k], exp[k]);
        } else if (!(got[k] == exp[k] || (nan16(got[k]) && nan16(exp[k])))) {
            rec(o, k, got[k], exp[k]);
        }
    }
    return A4W4J_OK;
}

extern "C" int a4w4j_compare_atomic(const uint16_t *got, const uint16_t *q, unsigned nsplit,
                                    size_t n, uint16_t poison, a4w4j_cmp *o)
{
    if (!got || !q || !o || nsplit > A4W4J_ATOMIC_MAX)
        return A4W4J_EARG;
    memset(o, 0, sizeof *o);
    for (size_t k = 0; k < n; k++) {
        uint32_t v[A4W4J_ATOMIC_MAX];
        for (unsigned j = 0; j < nsplit; j++)
            v[j] = q[j * n + k];
        const uint16_t in_order = (uint16_t)a4w4j_atomic_fold(v, (int)nsplit);
        o->checked++;
        o->hash += (unsigned long long)k * 0x9E3779B97F4A7C15ull + got[k];
        if (got[k] == poison)
            o->unwritten++;
        if (got[k] == poison || !a4w4j_atomic_member(v, (int)nsplit, got[k]))
            rec(o, k, got[k], in_order);
    }
    return A4W4J_OK;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* a4w4j_compare_limits_part's work: ulps[k] the tolerance in ULPs as double bits (UINT64_MAX
 * where not measured), *measured their count. */
extern "C" int a4w4j_compare_limits_part(const uint16_t *got, const uint16_t *exact,
                                         const double *B, const double *E, const uint8_t *infs,
                                         size_t n, uint16_t poison, unsigned long long *u,
                                         size_t *measured, a4w4j_cmp *o)
{
    memset(o, 0, sizeof *o);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        o->checked++;
        o->hash += (unsigned long long)k * 0x9E3779B97F4A7C15ull + got[k];
        u[k] = ~0ull;
        if (got[k] == poison) {
            o->unwritten++;
            rec(o, k, got[k], exact[k]);
            continue;
        }
        const double e = E[k], tol = B[k] + 0x1p-24 * fabs(e) + 0x1p-149;
        if (isfinite(tol) && e != 0) {
            o->weighed++;
            o->vacuous += fabs(e) <= tol;
        }
        uint32_t bits = (uint32_t)got[k] << 16;
        float gf;
        memcpy(&gf, &bits, 4);
        int ok;
        if (isnan(B[k]))
            ok = nan16(got[k]);
        else if (nan16(got[k]))
            ok = (infs[k] & 1) && (infs[k] & 2);
        else if (isinf(gf))
            ok = gf > 0 ? infs[k] & 1 : (infs[k] & 2) != 0;
        else {
            const double use = fabs((double)gf - e) / tol;
            const double ua = fabs(e) < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(e) - 7);
            const double ul = tol / ua;
            o->bound_use = use > o->bound_use ? use : o->bound_use;
            memcpy(&u[k], &ul, 8);
            m++;
            o->bound_ulp_max = ul > o->bound_ulp_max ? ul : o->bound_ulp_max;
            ok = use <= 1.0;
        }
        if (!ok)
            rec(o, k, got[k], exact[k]);
        else if (got[k] != exact[k] && !nan16(got[k]) && ulp(got[k], exact[k]) > o->max_ulp)
            o->max_ulp = ulp(got[k], exact[k]);
    }
    *measured = m;
    return A4W4J_OK;
}

extern "C" int a4w4j_ulps_median(const unsigned long long *ulps, size_t n, size_t measured,
                                 double *median)
{
    double *u = (double *)malloc((measured ? measured : 1) * sizeof *u);
    size_t m = 0;
    if (!u)
        return A4W4J_ENOMEM;
    for (size_t k = 0; k < n && m < measured; k++)
        if (ulps[k] != ~0ull)
            memcpy(&u[m++], &ulps[k], 8);
    qsort(u, m, sizeof *u, cmp_double); /* a stand-in: a sort, not the device's select */
    *median = !m ? 0 : m % 2 ? u[m / 2] : 0.5 * (u[m / 2 - 1] + u[m / 2]);
    free(u);
    return A4W4J_OK;
}

extern "C" int a4w4j_compare_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                                    const double *E, const uint8_t *infs, size_t n,
                                    uint16_t poison, a4w4j_cmp *o)
{
    unsigned long long *u = (unsigned long long *)malloc((n ? n : 1) * sizeof *u);
    size_t m = 0;
    if (!u)
        return A4W4J_ENOMEM;
    int rc = a4w4j_compare_limits_part(got, exact, B, E, infs, n, poison, u, &m, o);
    if (!rc)
        rc = a4w4j_ulps_median(u, n, m, &o->bound_ulp_median);
    free(u);
    return rc;
}

extern "C" int a4w4j_compare_bounded(const uint16_t *got, const uint16_t *exact, const float *ef,
                                     const double *B, size_t n, uint16_t poison, a4w4j_cmp *o)
{
    memset(o, 0, sizeof *o);
    for (size_t k = 0; k < n; k++) {
        o->checked++;
        o->hash += (unsigned long long)k * 0x9E3779B97F4A7C15ull + got[k];
        if (got[k] == poison) {
            o->unwritten++;
            rec(o, k, got[k], exact[k]);
            continue;
        }
        const int gn = nan16(got[k]), en = isnan(ef[k]);
        if (gn || en) {
            if (!(gn && en))
                rec(o, k, got[k], exact[k]);
            continue;
        }
        uint32_t u = (uint32_t)got[k] << 16;
        float gf;
        memcpy(&gf, &u, 4);
        const double g = gf, e = ef[k];
        if (isinf(e) || isinf(g) || isnan(B[k])) {
            if (g != e)
                rec(o, k, got[k], exact[k]);
            continue;
        }
        const double tol = B[k] + 0x1p-24 * fabs(e) + 0x1p-149, use = fabs(g - e) / tol;
        o->bound_use = use > o->bound_use ? use : o->bound_use;
        const double ua = fabs(e) < 0x1p-126 ? 0x1p-133 : ldexp(1.0, ilogb(e) - 7);
        o->bound_ulp_max = tol / ua > o->bound_ulp_max ? tol / ua : o->bound_ulp_max;
        if (use > 1.0)
            rec(o, k, got[k], exact[k]);
        else if (got[k] != exact[k] && ulp(got[k], exact[k]) > o->max_ulp)
            o->max_ulp = ulp(got[k], exact[k]);
    }
    return A4W4J_OK;
}

extern "C" int a4w4j_count_diff(const uint16_t *a, const uint16_t *b, size_t n, size_t *count)
{
    *count = 0;
    for (size_t k = 0; k < n; k++)
        *count += a[k] != b[k];
    return A4W4J_OK;
}

extern "C" int a4w4j_compare_bytes(const uint8_t *got, const uint8_t *exp, size_t n,
                                   const uint8_t *scale, size_t row_bytes, a4w4j_cmp *o)
{
    memset(o, 0, sizeof *o);
    o->checked = n;
    for (size_t k = 0; k < n; k++) {
        if (scale && scale[(k / row_bytes) * (row_bytes / 16) + (k % row_bytes) / 16] == 0xFF)
            continue;
        if (got[k] != exp[k])
            rec(o, k, got[k], exp[k]);
    }
    return A4W4J_OK;
}

extern "C" int a4w4j_nan_set(const uint16_t *y, const uint16_t *y2, size_t M, size_t N,
                             size_t ra, size_t cw, size_t *wrong, size_t *nans)
{
    *wrong = *nans = 0;
    for (size_t m = 0; m < M; m++)
        for (size_t j = 0; j < N; j++) {
            const int isn = nan16(y[m * N + j]) && (!y2 || nan16(y2[m * N + j]));
            *nans += (size_t)isn;
            *wrong += (size_t)(((m == ra) || (j == cw)) != isn);
        }
    return A4W4J_OK;
}

extern "C" int a4w4j_fill16(uint16_t *dev, size_t n, uint16_t value)
{
    for (size_t k = 0; k < n; k++)
        dev[k] = value;
    return A4W4J_OK;
}

extern "C" int a4w4j_count_flags(const uint8_t *flags, size_t n, size_t *count)
{
    *count = 0;
    for (size_t k = 0; k < n; k++)
        *count += flags[k] != 0;
    return A4W4J_OK;
}

/* Bytes copied back to the host so far (gathers and downloads); with A4W4_JUDGE_CPU_COPIED=FILE
 * set, written to FILE at exit (tests/gpu/cpu_compact.sh holds the harness to judging a
 * bounded backend's outputs where they are, not copying them back). */
static unsigned long long g_copied;

static void write_copied(void)
{
    const char *path = getenv("A4W4_JUDGE_CPU_COPIED");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%llu\n", g_copied);
        fclose(f);
    }
}

static void count_copied(size_t bytes)
{
    static int registered;
    if (!registered++)
        atexit(write_copied);
    g_copied += bytes;
}

extern "C" int a4w4j_gather(const void *dev, size_t elem, size_t N, const size_t *rows,
                            size_t nrows, const size_t *cols, size_t ncols, void *host)
{
    count_copied(nrows * ncols * elem);
    for (size_t i = 0; i < nrows; i++)
        for (size_t j = 0; j < ncols; j++)
            memcpy((uint8_t *)host + (i * ncols + j) * elem,
                   (const uint8_t *)dev +
                       ((rows ? rows[i] : i) * N + (cols ? cols[j] : j)) * elem,
                   elem);
    return A4W4J_OK;
}

/* The "device" is host memory: A4W4_JUDGE_CPU_FREE=BYTES states its free memory (tests of the
 * device judge's blocks, harness/backends/hip/devjudge_hip.c), else 64 GiB; total 80 GiB. */
extern "C" int a4w4j_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    const char *v = getenv("A4W4_JUDGE_CPU_FREE");
    *total_bytes = (size_t)80 << 30;
    *free_bytes = v && *v ? (size_t)strtoull(v, NULL, 10) : (size_t)64 << 30;
    return A4W4J_OK;
}

extern "C" void a4w4j_trim(void) {}

extern "C" int a4w4j_alloc(void **dev, size_t bytes)
{
    *dev = malloc(bytes ? bytes : 1);
    return *dev ? A4W4J_OK : A4W4J_ENOMEM;
}

extern "C" void a4w4j_free(void *dev) { free(dev); }

extern "C" int a4w4j_upload(void *dev, const void *host, size_t bytes)
{
    memcpy(dev, host, bytes);
    return A4W4J_OK;
}

extern "C" int a4w4j_download(void *host, const void *dev, size_t bytes)
{
    count_copied(bytes);
    memcpy(host, dev, bytes);
    return A4W4J_OK;
}
