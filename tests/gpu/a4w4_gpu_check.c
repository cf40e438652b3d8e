/* a4w4_gpu_check.c — bit-exact check of the GPU systems under test (gpu/a4w4_gpu.h) against
 * the C11 reference oracles (ref/), on random cases and on the golden bundles.
 *
 *   quantizer     every mode x {f32, bf16, fp16} vs a4w4_quantize (row-major and shuffled
 *                 scales; shuffled with other pad fills vs a4w4_act_scale_shuffle). Element
 *                 codes of a 0xFF block are unspecified (contracts §2 step 4) and masked.
 *   layouts       preshuffle / scale swizzle / act-scale shuffle vs the ref closed forms,
 *                 byte for byte; unsupported shapes must return A4W4_GPU_ELAYOUT.
 *   ASM GEMM      every tile of the table, ordered(1) vs a4w4_gemm_ordered(S=1) bit for bit;
 *                 row fills 0x7F / 0xFF / 0x00 of a_scale_shuffled must not change a bit;
 *                 deterministic split-K vs a4w4_gemm_ordered(S); atomic split-K vs
 *                 a4w4_gemm_exact within the bound derived at atomic_bound() below.
 *   fallback GEMM row-major operands vs a4w4_gemm_ordered(S=1), K % 256 != 0 and any N too.
 *   edges         every device-form output buffer carries guard zones before and after
 *                 [M, N] that must stay untouched; inputs are allocated at their exact size
 *                 (run under compute-sanitizer memcheck to catch any read past them).
 *   golden        the cases/golden bundles (a4w4-case/1 and a4w4-quant/1, contracts §7) through
 *                 the host-form API: layouts, all tiles, fallback, splits, quantizer modes.
 *
 * Bit-for-bit means every uint16 equal, except that two NaNs match (the GPU writes 0x7FC0
 * for every NaN; the ref may carry the sign of an Inf - Inf); such payload differences are
 * counted and printed as notes.
 *
 * Usage: a4w4_gpu_check [--quick] [--golden DIR] [--seed N] [--threads N] [--verbose]
 * Exit: 0 all checks passed; 1 a mismatch or failure; 2 usage; 77 no GPU (CTest skip). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_gpu.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "a4w4_st_mini.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif

/* ---- bookkeeping ---------------------------------------------------------------------- */
static int g_quick, g_verbose, g_threads = 4;
/* The GEMM kernel under test: the GEMM sections run once per engine (a4w4_gpu.h). */
static int g_engine = A4W4_GPU_ENGINE_PORTABLE;
static const char *engine_name(void) { return g_engine == A4W4_GPU_ENGINE_MMA ? "mma" : "plain"; }
static uint64_t g_seed = 20261129;
static long g_pass, g_fail, g_notes;
static long g_nan_payload; /* NaN-vs-NaN with different bits (matched) */
static uint16_t g_nan_got, g_nan_want; /* the first such pair */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void result(int ok, const char *fmt, ...)
{
    va_list ap;
    if (ok)
        g_pass++;
    else
        g_fail++;
    if (ok && !g_verbose)
        return;
    printf("%s ", ok ? "PASS" : "FAIL");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void note(const char *fmt, ...)
{
    va_list ap;
    g_notes++;
    printf("NOTE ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "a4w4_gpu_check: out of host memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* ---- random numbers (splitmix64) ------------------------------------------------------ */
typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(rng_t *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

static void rng_bytes(rng_t *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng_next(r);
}

/* ---- comparisons ---------------------------------------------------------------------- */
/* Number of differing bytes (mask[i] == 0 skips i); *first gets the first index. */
static size_t cmp_bytes(const uint8_t *got, const uint8_t *want, size_t n, const uint8_t *mask,
                        size_t *first)
{
    size_t bad = 0;
    *first = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i])
            continue;
        if (got[i] != want[i]) {
            if (!bad)
                *first = i;
            bad++;
        }
    }
    return bad;
}

static int bf16_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

static size_t cmp_bf16(const uint16_t *got, const uint16_t *want, size_t n, size_t *first)
{
    size_t bad = 0;
    *first = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == want[i])
            continue;
        if (bf16_nan(got[i]) && bf16_nan(want[i])) {
            if (!g_nan_payload++) {
                g_nan_got = got[i];
                g_nan_want = want[i];
            }
            continue;
        }
        if (!bad)
            *first = i;
        bad++;
    }
    return bad;
}

/* "PASS/FAIL <what>: n mismatches, first at (m, n) got .. want .." for a bf16 [M, N]. */
static int check_bf16(const char *what, const uint16_t *got, const uint16_t *want, size_t M,
                      size_t N)
{
    size_t first, bad = cmp_bf16(got, want, M * N, &first);
    if (bad)
        result(0, "%s: %zu/%zu outputs differ, first (m=%zu, n=%zu) got 0x%04x want 0x%04x", what,
               bad, M * N, first / N, first % N, got[first], want[first]);
    else
        result(1, "%s", what);
    if (bad && g_engine == A4W4_GPU_ENGINE_MMA) {
        /* the matrix unit's fragment map shows in which outputs of the first 32 x 32 differ:
         * 'x' differs, '.' equal (row m, column n) */
        static int maps;
        if (maps++ < 4)
            for (size_t m = 0; m < M && m < 32; m++) {
                char line[40];
                size_t n;
                for (n = 0; n < N && n < 32; n++) {
                    const uint16_t a = got[m * N + n], b = want[m * N + n];
                    const int same = a == b || ((a & 0x7FFF) > 0x7F80 && (b & 0x7FFF) > 0x7F80);
                    line[n] = same ? '.' : 'x';
                }
                line[n] = 0;
                printf("NOTE   map m=%2zu %s\n", m, line);
            }
    }
    return bad == 0;
}

static int check_bytes(const char *what, const uint8_t *got, const uint8_t *want, size_t n,
                       const uint8_t *mask)
{
    size_t first, bad = cmp_bytes(got, want, n, mask, &first);
    if (bad)
        result(0, "%s: %zu/%zu bytes differ, first at %zu got 0x%02x want 0x%02x", what, bad, n,
               first, got[first], want[first]);
    else
        result(1, "%s", what);
    return bad == 0;
}

static int check_rc(const char *what, int rc, int want)
{
    if (rc != want)
        result(0, "%s: status %d (%s) want %d [%s]", what, rc, a4w4_gpu_strerror(rc), want,
               a4w4_gpu_last_error());
    else
        result(1, "%s", what);
    return rc == want;
}

/* ---- device buffers ------------------------------------------------------------------- */
static void *dev_up(const void *host, size_t n)
{
    void *d = NULL;
    if (a4w4_gpu_malloc(&d, n) || a4w4_gpu_memcpy_h2d(d, host, n)) {
        result(0, "device upload of %zu bytes: %s", n, a4w4_gpu_last_error());
        a4w4_gpu_free(d);
        return NULL;
    }
    return d;
}

/* Output buffer [count] uint16 between two guard zones of GUARD elements. */
#define GUARD 512
#define GUARD_BYTE 0xA5

typedef struct {
    uint16_t *base; /* device */
    uint16_t *y;    /* device, base + GUARD */
    size_t count;
} guarded;

static int guarded_alloc(guarded *g, size_t count)
{
    g->count = count;
    g->base = NULL;
    if (a4w4_gpu_malloc((void **)&g->base, (count + 2 * GUARD) * 2)) {
        result(0, "device alloc of output: %s", a4w4_gpu_last_error());
        return -1;
    }
    g->y = g->base + GUARD;
    return 0;
}

static int guarded_reset(guarded *g)
{
    return a4w4_gpu_memset(g->base, GUARD_BYTE, (g->count + 2 * GUARD) * 2);
}

/* Copies [count] out to host and checks both guard zones; returns 0 when intact. */
static int guarded_fetch(guarded *g, uint16_t *host, const char *what)
{
    uint16_t *all = xmalloc((g->count + 2 * GUARD) * 2);
    int rc = a4w4_gpu_memcpy_d2h(all, g->base, (g->count + 2 * GUARD) * 2);
    if (rc) {
        result(0, "%s: copy back failed: %s", what, a4w4_gpu_last_error());
        free(all);
        return -1;
    }
    memcpy(host, all + GUARD, g->count * 2);
    size_t bad = 0;
    const uint16_t gw = (uint16_t)(GUARD_BYTE | (GUARD_BYTE << 8));
    for (size_t i = 0; i < GUARD; i++) {
        bad += all[i] != gw;
        bad += all[GUARD + g->count + i] != gw;
    }
    free(all);
    if (bad) {
        result(0, "%s: %zu guard elements outside [M, N] were written", what, bad);
        return -1;
    }
    return 0;
}

static void guarded_free(guarded *g) { a4w4_gpu_free(g->base); }

/* ---- parallel oracles ------------------------------------------------------------------
 * The ref's whole-matrix functions are pure; split the N columns across threads, each
 * computing a [M, n1-n0] slice into its own buffer, then scatter. */
typedef enum { OR_ORDERED, OR_EXACT, OR_ABSSUM } oracle_kind;

typedef struct {
    const uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale;
    size_t M, N, K, n0, n1;
    unsigned S;
    oracle_kind kind;
    uint16_t *y;  /* [M, N] */
    float *yf;    /* [M, N] or NULL */
    double *abs;  /* OR_ABSSUM: sum of |block values| per output, NaN when a scale is 0xFF */
    int rc;
} oracle_job;

/* Sum over blocks of |exact block value| (double: exact enough for a bound). */
static double abs_block_sum(const uint8_t *a, const uint8_t *as, const uint8_t *w,
                            const uint8_t *ws, size_t K)
{
    double t = 0.0;
    for (size_t b = 0; b < K / 32; b++) {
        if (as[b] == 0xFF || ws[b] == 0xFF)
            return NAN;
        int d = 0;
        for (size_t k = 0; k < 32; k++)
            d += a4w4_e2m1_to_int2x(a4w4_fp4_get(a + b * 16, k)) *
                 a4w4_e2m1_to_int2x(a4w4_fp4_get(w + b * 16, k));
        t += ldexp(fabs((double)d), (int)as[b] + (int)ws[b] - 256);
    }
    return t;
}

static void *oracle_thread(void *arg)
{
    oracle_job *j = arg;
    const size_t nn = j->n1 - j->n0, K = j->K;
    if (j->kind == OR_ABSSUM) {
        for (size_t m = 0; m < j->M; m++)
            for (size_t n = j->n0; n < j->n1; n++)
                j->abs[m * j->N + n] =
                    abs_block_sum(j->a_fp4 + m * (K / 2), j->a_scale + m * (K / 32),
                                  j->w_fp4 + n * (K / 2), j->w_scale + n * (K / 32), K);
        j->rc = 0;
        return NULL;
    }
    uint16_t *y = xmalloc(j->M * nn * 2);
    float *yf = j->yf ? xmalloc(j->M * nn * 4) : NULL;
    const uint8_t *w = j->w_fp4 + j->n0 * (K / 2), *ws = j->w_scale + j->n0 * (K / 32);
    j->rc = j->kind == OR_ORDERED
                ? a4w4_gemm_ordered(j->a_fp4, j->a_scale, w, ws, j->M, nn, K, j->S, y, yf)
                : a4w4_gemm_exact(j->a_fp4, j->a_scale, w, ws, j->M, nn, K, y, yf);
    for (size_t m = 0; m < j->M; m++) {
        memcpy(j->y + m * j->N + j->n0, y + m * nn, nn * 2);
        if (yf)
            memcpy(j->yf + m * j->N + j->n0, yf + m * nn, nn * 4);
    }
    free(y);
    free(yf);
    return NULL;
}

static int oracle(oracle_kind kind, const uint8_t *a_fp4, const uint8_t *a_scale,
                  const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N, size_t K,
                  unsigned S, uint16_t *y, float *yf, double *abs)
{
    int T = g_threads < 1 ? 1 : g_threads;
    if ((size_t)T > N)
        T = (int)N;
    oracle_job *jobs = xmalloc(sizeof *jobs * (size_t)T);
    pthread_t *th = xmalloc(sizeof *th * (size_t)T);
    int rc = 0;
    for (int t = 0; t < T; t++) {
        oracle_job j = {a_fp4, a_scale, w_fp4, w_scale, M, N, K,
                        N * (size_t)t / (size_t)T, N * (size_t)(t + 1) / (size_t)T,
                        S, kind, y, yf, abs, 0};
        jobs[t] = j;
        if (pthread_create(&th[t], NULL, oracle_thread, &jobs[t])) {
            oracle_thread(&jobs[t]);
            th[t] = 0;
        }
    }
    for (int t = 0; t < T; t++) {
        if (th[t])
            pthread_join(th[t], NULL);
        if (jobs[t].rc)
            rc = jobs[t].rc;
    }
    free(jobs);
    free(th);
    return rc;
}

/* ---- atomic split-K error bound -------------------------------------------------------
 * Contract "bounded" (contracts §4.1). Per output, T = sum over blocks of |block value| (exact),
 * n = number of 32-blocks, S = number of non-empty splits, u = 2^-24 (fp32), v = 2^-8 (bf16).
 *  1. Each split j sums its blocks in fp32 from +0: block values round once (only below the
 *     normal range: abs error <= 2^-150 each) and each of its n_j additions errs by at most
 *     u |partial| <= u T_j(1+..); recursive summation gives |p_j - P_j| <= gamma(n_j) T_j +
 *     n_j 2^-150, gamma(k) = k u / (1 - k u).
 *  2. The kernel rounds p_j to bf16: |q_j - p_j| <= v |p_j| + 2^-134 (half the smallest bf16
 *     subnormal step 2^-133).
 *  3. The bf16 atomic computes bf16(fp32(y + q_j)) in any order: per step at most
 *     (u + v + uv) |y + q_j| + 2^-134, and every |y + q_j| <= T (1 + small).
 * Summing, with every partial magnitude bounded by T(1 + 2(S+1)v) (generous):
 *   |y - exact| <= (gamma(n) + S(2v + u + uv)) T (1 + 2(S+1)v) + n 2^-150 + 2S 2^-134.
 * We compare against a4w4_gemm_exact's fp32 rounding of the exact sum, which adds u |exact|
 * <= u T. Outputs whose T is not comfortably finite (T >= 2^126) are not judged (counted). */
static double atomic_bound(double T, size_t nblocks, unsigned S)
{
    const double u = ldexp(1.0, -24), v = ldexp(1.0, -8);
    const double n = (double)nblocks;
    const double gamma = n * u / (1.0 - n * u);
    return (gamma + S * (2 * v + u + u * v)) * T * (1.0 + 2.0 * (S + 1) * v) + u * T +
           n * ldexp(1.0, -150) + 2.0 * S * ldexp(1.0, -134);
}

/* ---- a GEMM case ---------------------------------------------------------------------- */
typedef enum { V_NORMAL, V_WIDE, V_SPECIAL, V_COUNT } variant;
static const char *const variant_name[V_COUNT] = {"normal", "wide", "special"};

typedef struct {
    size_t M, N, K;
    uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale; /* row-major */
    char label[96];
} gcase;

/* Scale of one block. V_WIDE picks a regime per row (`regime`) so that outputs land in
 * every range of fp32 rather than mostly in Inf - Inf: A rows 0 -> [0, 20], 1 -> [118, 136],
 * 2 -> [222, 240]; W rows 0 -> [88, 116], 1 -> [118, 136]. Block exponents sa+sb-256 then
 * span [-168, -120] (subnormal block values, rounded once), normal ranges, and [84, 120]
 * (sums at and past the overflow threshold, |d| reaching 2^12). 0.2% of blocks take any code 0..254. */
static uint8_t gen_scale(rng_t *r, variant v, int is_w, int regime)
{
    switch (v) {
    case V_NORMAL: return (uint8_t)(124 + rng_below(r, 7));
    case V_WIDE: {
        static const int lo[2][3] = {{0, 118, 222}, {88, 118, 118}};
        static const int hi[2][3] = {{20, 136, 240}, {116, 136, 136}};
        if (rng_below(r, 500) == 0)
            return (uint8_t)rng_below(r, 255);
        const int a = lo[is_w][regime], b = hi[is_w][regime];
        return (uint8_t)(a + (int)rng_below(r, (uint32_t)(b - a + 1)));
    }
    default: {
        uint32_t p = rng_below(r, 1000);
        if (p < 3)
            return 0xFF; /* NaN scale: every output reading the block is NaN */
        return (uint8_t)(125 + rng_below(r, 5));
    }
    }
}

static void gen_codes(rng_t *r, uint8_t *row, size_t K, variant v)
{
    rng_bytes(r, row, K / 2);
    if (v != V_SPECIAL)
        return;
    for (size_t b = 0; b < K / 32; b++) {
        uint32_t p = rng_below(r, 10);
        if (p == 0)
            memset(row + b * 16, 0x00, 16); /* zero block */
        else if (p == 1)
            memset(row + b * 16, 0x77, 16); /* all +6: largest block sums */
        else if (p == 2)
            memset(row + b * 16, 0xFF, 16); /* all -6 */
        else if (p == 3)
            memset(row + b * 16, 0x88, 16); /* all -0 */
    }
}

static void gcase_make(gcase *c, size_t M, size_t N, size_t K, variant v, uint64_t seed)
{
    rng_t r = {seed ^ (M * 0x1000193u) ^ (N << 20) ^ (K << 40) ^ ((uint64_t)v << 60)};
    c->M = M;
    c->N = N;
    c->K = K;
    c->a_fp4 = xmalloc(M * K / 2);
    c->a_scale = xmalloc(M * K / 32);
    c->w_fp4 = xmalloc(N * K / 2);
    c->w_scale = xmalloc(N * K / 32);
    for (size_t m = 0; m < M; m++)
        gen_codes(&r, c->a_fp4 + m * K / 2, K, v);
    for (size_t n = 0; n < N; n++)
        gen_codes(&r, c->w_fp4 + n * K / 2, K, v);
    for (size_t m = 0; m < M; m++) {
        const int regime = (int)rng_below(&r, 3);
        for (size_t b = 0; b < K / 32; b++)
            c->a_scale[m * (K / 32) + b] = gen_scale(&r, v, 0, regime);
    }
    for (size_t n = 0; n < N; n++) {
        const int regime = (int)rng_below(&r, 2);
        for (size_t b = 0; b < K / 32; b++)
            c->w_scale[n * (K / 32) + b] = gen_scale(&r, v, 1, regime);
    }
    snprintf(c->label, sizeof c->label, "M=%zu N=%zu K=%zu %s", M, N, K, variant_name[v]);
}

static void gcase_free(gcase *c)
{
    free(c->a_fp4);
    free(c->a_scale);
    free(c->w_fp4);
    free(c->w_scale);
}

/* ---- ASM-layout GEMM on one case --------------------------------------------------------- */
static const char *const main_tiles[] = {"32x128", "64x256", "128x128", "256x256"};

static void check_asm_case(const gcase *c, int all_tiles, const unsigned *splits, int nsplits,
                           const unsigned *asplits, int nasplits)
{
    const size_t M = c->M, N = c->N, K = c->K, cols = K / 32;
    const size_t sbytes = a4w4_gpu_act_scale_shuffled_bytes(M, cols);
    char what[256];
    double t0 = now_s();

    /* Layouts by the ref (independent of the GPU layout kernels, checked separately). */
    uint8_t *w_sh = xmalloc(N * K / 2), *ws_sw = xmalloc(N * cols);
    uint8_t *as_sh[3];
    const uint8_t fills[3] = {0x7F, 0xFF, 0x00};
    if (a4w4_preshuffle(c->w_fp4, N, K, w_sh) || a4w4_scale_swizzle(c->w_scale, N, cols, ws_sw)) {
        result(0, "asm %s: ref layout failed", c->label);
        free(w_sh);
        free(ws_sw);
        return;
    }
    for (int f = 0; f < 3; f++) {
        as_sh[f] = xmalloc(sbytes);
        a4w4_act_scale_shuffle(c->a_scale, M, cols, fills[f], 0x7F, as_sh[f]);
    }

    uint16_t *want = xmalloc(M * N * 2), *got = xmalloc(M * N * 2);
    if (oracle(OR_ORDERED, c->a_fp4, c->a_scale, c->w_fp4, c->w_scale, M, N, K, 1, want, NULL,
               NULL)) {
        result(0, "asm %s: ref ordered(1) failed", c->label);
        goto out_host;
    }

    void *da = dev_up(c->a_fp4, M * K / 2), *dw = dev_up(w_sh, N * K / 2),
         *dw_rm = dev_up(c->w_fp4, N * K / 2), *dws = dev_up(ws_sw, N * cols);
    void *das[3] = {dev_up(as_sh[0], sbytes), dev_up(as_sh[1], sbytes), dev_up(as_sh[2], sbytes)};
    guarded g;
    if (!da || !dw || !dw_rm || !dws || !das[0] || !das[1] || !das[2] || guarded_alloc(&g, M * N))
        goto out_dev;

    int ntile = a4w4_gpu_tile_count(), tiles_ok = 0, tiles_run = 0;
    for (int t = 0; t < ntile; t++) {
        const a4w4_gpu_tile *tl = a4w4_gpu_tile_get(t);
        int is_main = 0;
        for (size_t i = 0; i < sizeof main_tiles / sizeof *main_tiles; i++)
            is_main |= t == a4w4_gpu_tile_find(main_tiles[i]);
        if (!all_tiles && !is_main)
            continue;
        /* Row fills: every fill on the main tiles, 0x7F elsewhere. */
        for (int f = 0; f < (is_main ? 3 : 1); f++) {
            guarded_reset(&g);
            int rc = a4w4_gpu_gemm_asm_engine_dev(g_engine, t, 1, A4W4_GPU_SPLIT_ORDERED, da,
                                                  das[f], tl->bpreshuffle ? dw : dw_rm, dws, M,
                                                  N, K, g.y, NULL, 0, NULL);
            if (!rc)
                rc = a4w4_gpu_synchronize();
            snprintf(what, sizeof what, "asm[%s] %s tile %dx%d%s row_fill 0x%02X ordered(1)",
                     engine_name(), c->label, tl->tile_m, tl->tile_n,
                     tl->bpreshuffle ? "" : " noBpreShuffle", fills[f]);
            tiles_run++;
            if (!check_rc(what, rc, 0) || guarded_fetch(&g, got, what))
                continue;
            tiles_ok += check_bf16(what, got, want, M, N);
        }
    }

    /* Deterministic split-K: ordered(S) on two tiles, own workspace and library-allocated. */
    uint16_t *wantS = xmalloc(M * N * 2);
    for (int si = 0; si < nsplits; si++) {
        const unsigned S = splits[si];
        if (oracle(OR_ORDERED, c->a_fp4, c->a_scale, c->w_fp4, c->w_scale, M, N, K, S, wantS,
                   NULL, NULL)) {
            result(0, "asm %s: ref ordered(%u) failed", c->label, S);
            continue;
        }
        const char *tiles2[2] = {"32x128", "256x256"};
        for (int ti = 0; ti < 2; ti++) {
            int t = a4w4_gpu_tile_find(tiles2[ti]);
            size_t wk = a4w4_gpu_gemm_workspace_bytes(M, N, K, S, A4W4_GPU_SPLIT_ORDERED);
            void *dwk = NULL;
            if (ti == 0 && wk && a4w4_gpu_malloc(&dwk, wk))
                dwk = NULL;
            guarded_reset(&g);
            int rc = a4w4_gpu_gemm_asm_engine_dev(g_engine, t, S, A4W4_GPU_SPLIT_ORDERED, da,
                                                  das[0], dw, dws, M, N, K, g.y, dwk,
                                                  dwk ? wk : 0, NULL);
            if (!rc)
                rc = a4w4_gpu_synchronize();
            a4w4_gpu_free(dwk);
            snprintf(what, sizeof what, "asm[%s] %s tile %s split ordered(%u) (%u non-empty)%s",
                     engine_name(), c->label, tiles2[ti], S, a4w4_gpu_split_count(K, S),
                     dwk ? " own workspace" : "");
            if (!check_rc(what, rc, 0) || guarded_fetch(&g, got, what))
                continue;
            check_bf16(what, got, wantS, M, N);
        }
    }
    free(wantS);

    /* Atomic split-K: bounded against the exact sum. */
    if (nasplits > 0) {
        uint16_t *ex = xmalloc(M * N * 2);
        float *exf = xmalloc(M * N * 4);
        double *T = xmalloc(M * N * sizeof(double));
        if (oracle(OR_EXACT, c->a_fp4, c->a_scale, c->w_fp4, c->w_scale, M, N, K, 1, ex, exf,
                   NULL) ||
            oracle(OR_ABSSUM, c->a_fp4, c->a_scale, c->w_fp4, c->w_scale, M, N, K, 1, ex, NULL,
                   T)) {
            result(0, "asm %s: ref exact failed", c->label);
        } else {
            for (int si = 0; si < nasplits; si++) {
                const unsigned S = asplits[si], Sn = a4w4_gpu_split_count(K, S);
                int t = a4w4_gpu_tile_find("256x256");
                guarded_reset(&g);
                int rc = a4w4_gpu_gemm_asm_engine_dev(g_engine, t, S, A4W4_GPU_SPLIT_ATOMIC, da,
                                                      das[0], dw, dws, M, N, K, g.y, NULL, 0,
                                                      NULL);
                if (!rc)
                    rc = a4w4_gpu_synchronize();
                snprintf(what, sizeof what,
                         "asm[%s] %s tile 256x256 atomic split %u (%u non-empty)", engine_name(),
                         c->label, S, Sn);
                if (!check_rc(what, rc, 0) || guarded_fetch(&g, got, what))
                    continue;
                size_t bad = 0, unjudged = 0, first = 0;
                double worst = 0.0;
                for (size_t i = 0; i < M * N; i++) {
                    const float gv = a4w4_bf16_to_f32(got[i]);
                    if (isnan(T[i])) { /* a 0xFF scale: must be NaN */
                        if (!isnan(gv) && !bad++)
                            first = i;
                        continue;
                    }
                    if (!(T[i] < ldexp(1.0, 126))) {
                        unjudged++;
                        continue;
                    }
                    const double err = fabs((double)gv - (double)exf[i]);
                    const double bound = atomic_bound(T[i], K / 32, Sn);
                    if (!(err <= bound)) {
                        if (!bad++)
                            first = i;
                    } else if (bound > 0 && err / bound > worst) {
                        worst = err / bound;
                    }
                }
                if (bad)
                    result(0, "%s: %zu/%zu outside the bound, first (m=%zu, n=%zu) got 0x%04x "
                              "exact 0x%04x (T=%g)",
                           what, bad, M * N, first / N, first % N, got[first], ex[first],
                           T[first]);
                else
                    result(1, "%s: within bound (worst err/bound %.3g, %zu unjudged)", what,
                           worst, unjudged);
            }
        }
        free(ex);
        free(exf);
        free(T);
    }

    guarded_free(&g);
    printf("asm[%s] %-36s %2d/%2d tile runs bit-exact, splits %d, atomic %d  (%.2fs)\n",
           engine_name(), c->label, tiles_ok, tiles_run, nsplits, nasplits, now_s() - t0);
    fflush(stdout);
out_dev:
    a4w4_gpu_free(da);
    a4w4_gpu_free(dw);
    a4w4_gpu_free(dw_rm);
    a4w4_gpu_free(dws);
    for (int f = 0; f < 3; f++)
        a4w4_gpu_free(das[f]);
out_host:
    free(want);
    free(got);
    for (int f = 0; f < 3; f++)
        free(as_sh[f]);
    free(w_sh);
    free(ws_sw);
}

/* ---- fallback GEMM on one case ----------------------------------------------------------- */
static void check_rowmajor_case(const gcase *c)
{
    const size_t M = c->M, N = c->N, K = c->K;
    char what[160];
    uint16_t *want = xmalloc(M * N * 2), *got = xmalloc(M * N * 2);
    if (oracle(OR_ORDERED, c->a_fp4, c->a_scale, c->w_fp4, c->w_scale, M, N, K, 1, want, NULL,
               NULL)) {
        result(0, "rowmajor %s: ref ordered(1) failed", c->label);
        goto out;
    }
    void *da = dev_up(c->a_fp4, M * K / 2), *das = dev_up(c->a_scale, M * K / 32),
         *dw = dev_up(c->w_fp4, N * K / 2), *dws = dev_up(c->w_scale, N * K / 32);
    guarded g;
    if (da && das && dw && dws && !guarded_alloc(&g, M * N)) {
        guarded_reset(&g);
        int rc = a4w4_gpu_gemm_rowmajor_engine_dev(g_engine, da, das, dw, dws, M, N, K, g.y,
                                                   NULL);
        if (!rc)
            rc = a4w4_gpu_synchronize();
        snprintf(what, sizeof what, "rowmajor[%s] %s ordered(1)", engine_name(), c->label);
        if (check_rc(what, rc, 0) && !guarded_fetch(&g, got, what))
            check_bf16(what, got, want, M, N);
        guarded_free(&g);
    }
    a4w4_gpu_free(da);
    a4w4_gpu_free(das);
    a4w4_gpu_free(dw);
    a4w4_gpu_free(dws);
out:
    free(want);
    free(got);
}

static void section_gemm(void)
{
    static const size_t Ms[] = {1, 2, 33, 300}, Ns[] = {128, 256, 1024},
                        Ks[] = {256, 512, 768, 5120};
    static const size_t qMs[] = {1, 33}, qNs[] = {128, 256}, qKs[] = {256, 768};
    static const unsigned splits[] = {2, 3, 4, 8, 16}, qsplits[] = {2, 4};
    static const unsigned asplits[] = {1, 2, 4, 8}, qasplits[] = {2};
    const size_t *ms = g_quick ? qMs : Ms, *ns = g_quick ? qNs : Ns, *ks = g_quick ? qKs : Ks;
    const size_t nm = g_quick ? 2 : 4, nn = g_quick ? 2 : 3, nk = g_quick ? 2 : 4;
    double t0 = now_s();
    int idx = 0;
    printf("== ASM-layout GEMM, %s kernel (%s)\n", engine_name(), g_quick ? "quick" : "full");
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < nn; j++)
            for (size_t k = 0; k < nk; k++, idx++) {
                gcase c;
                gcase_make(&c, ms[i], ns[j], ks[k], (variant)(idx % V_COUNT), g_seed);
                const int small = ms[i] * ns[j] * ks[k] <= (size_t)64 << 20;
                check_asm_case(&c, !g_quick, g_quick ? qsplits : splits, g_quick ? 2 : 5,
                               g_quick ? qasplits : asplits, small ? (g_quick ? 1 : 4) : 0);
                gcase_free(&c);
            }
    /* Edge shapes: N = 32 / 96 (partial sub-tiles), M across the 256-row scale padding. */
    static const size_t edge[][3] = {{257, 32, 256},  {64, 96, 512},     {65, 160, 1280},
                                     {1, 32, 256},    {16, 1024, 5120},  {4, 128, 2048},
                                     {2048, 512, 1024}, {8, 5120, 14336}};
    const size_t nedge = g_quick ? 2 : sizeof edge / sizeof edge[0];
    for (size_t e = 0; e < nedge; e++, idx++) {
        gcase c;
        gcase_make(&c, edge[e][0], edge[e][1], edge[e][2], (variant)(idx % V_COUNT), g_seed);
        const int small = edge[e][0] * edge[e][1] * edge[e][2] <= (size_t)64 << 20;
        check_asm_case(&c, !g_quick, splits, g_quick ? 1 : 5, asplits,
                       small ? (g_quick ? 1 : 4) : 0);
        gcase_free(&c);
    }
    printf("   ASM GEMM section %.1fs\n", now_s() - t0);

    t0 = now_s();
    printf("== fallback (row-major) GEMM\n");
    static const size_t rN[] = {1, 7, 48, 128, 1040}, rK[] = {32, 96, 320, 800, 5120};
    static const size_t qrN[] = {7, 48}, qrK[] = {32, 320};
    const size_t *rn = g_quick ? qrN : rN, *rk = g_quick ? qrK : rK;
    const size_t nrn = g_quick ? 2 : 5, nrk = g_quick ? 2 : 5;
    for (size_t i = 0; i < nm; i++)
        for (size_t j = 0; j < nrn; j++)
            for (size_t k = 0; k < nrk; k++, idx++) {
                gcase c;
                gcase_make(&c, ms[i], rn[j], rk[k], (variant)(idx % V_COUNT), g_seed + 1);
                check_rowmajor_case(&c);
                gcase_free(&c);
            }
    printf("   fallback GEMM section %.1fs\n", now_s() - t0);
}

/* ---- quantizer ------------------------------------------------------------------------- */
static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* One block of fp32 inputs of a random kind (see the cases below). */
static void gen_block_f32(rng_t *r, uint32_t *x)
{
    static const uint32_t mant[] = {0, 1, 0x1FFFFF, 0x200000, 0x5FFFFF, 0x600000, 0x7FFFFF};
    static const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, 7.0f};
    const uint32_t kind = rng_below(r, 10);
    const int e = (int)rng_below(r, 254) + 1; /* a block's exponent field */
    for (int i = 0; i < 32; i++) {
        uint32_t sign = (uint32_t)(rng_next(r) & 1) << 31;
        switch (kind) {
        case 0: /* zeros of both signs */
            x[i] = sign;
            break;
        case 1: /* any bit pattern: NaN, Inf, subnormals included */
            x[i] = (uint32_t)rng_next(r);
            break;
        case 2: /* one NaN or Inf in an ordinary block */
        case 3: {
            int ee = e - (int)rng_below(r, 6);
            x[i] = sign | ((uint32_t)(ee < 1 ? 1 : ee) << 23) | (uint32_t)(rng_next(r) & 0x7FFFFF);
            break;
        }
        case 4: /* grid ties: amax 6 * 2^p, elements tie * 2^p */
        case 5: {
            int p = (int)rng_below(r, 240) - 120;
            float v = i == 0 ? 6.0f : ties[rng_below(r, 9)];
            x[i] = sign | f32_bits(ldexpf(v, p));
            break;
        }
        case 6: /* mode boundaries: amax mantissa at the bump / EVEN rounding edges */
            x[i] = sign | ((uint32_t)e << 23) | mant[rng_below(r, 7)];
            if (i > 0 && rng_below(r, 2))
                x[i] = sign | ((uint32_t)(e > 3 ? e - 3 : 1) << 23) | (uint32_t)(rng_next(r) & 0x7FFFFF);
            break;
        case 7: /* subnormal and tiny blocks */
            x[i] = sign | (uint32_t)(rng_next(r) & (rng_below(r, 2) ? 0x7FFFFF : 0xFFFFFF));
            break;
        default: { /* ordinary: exponents within 10 of the block's */
            int ee = e - (int)rng_below(r, 11);
            x[i] = sign | ((uint32_t)(ee < 1 ? 1 : ee) << 23) | (uint32_t)(rng_next(r) & 0x7FFFFF);
            break;
        }
        }
    }
    if (kind == 2)
        x[rng_below(r, 32)] = 0x7FC00000u | (uint32_t)(rng_next(r) & 0x3FFFFF);
    if (kind == 3)
        x[rng_below(r, 32)] = ((uint32_t)(rng_next(r) & 1) << 31) | 0x7F800000u;
}

/* fp16 bits of an f32 pattern: take the top bits of a random block, keeping kinds alike. */
static uint16_t to_fp16ish(rng_t *r, uint32_t f)
{
    (void)r;
    uint32_t sign = (f >> 16) & 0x8000u, e = (f >> 23) & 0xFF, m = f & 0x7FFFFF;
    if (e == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (m ? 0x200u | (m >> 13) : 0));
    int e16 = (int)e % 31; /* fold exponents into fp16's range, subnormals (0) included */
    return (uint16_t)(sign | ((uint32_t)e16 << 10) | (m >> 13));
}

static void quant_one(size_t M, size_t K, int dtype, rng_t *r)
{
    static const char *const dname[3] = {"f32", "bf16", "fp16"};
    const size_t cols = K / 32, esz = dtype == 0 ? 4 : 2;
    const size_t sbytes = a4w4_gpu_act_scale_shuffled_bytes(M, cols);
    uint8_t *x = xmalloc(M * K * esz);
    uint32_t blk[32];
    for (size_t i = 0; i < M * K; i += 32) {
        gen_block_f32(r, blk);
        for (int k = 0; k < 32; k++) {
            if (dtype == 0)
                memcpy(x + (i + k) * 4, &blk[k], 4);
            else {
                uint16_t h = dtype == 1 ? (uint16_t)(blk[k] >> 16) : to_fp16ish(r, blk[k]);
                memcpy(x + (i + k) * 2, &h, 2);
            }
        }
    }
    uint8_t *q_ref = xmalloc(M * K / 2), *s_ref = xmalloc(M * cols), *sh_ref = xmalloc(sbytes);
    uint8_t *q_gpu = xmalloc(M * K / 2), *s_gpu = xmalloc(sbytes), *mask = xmalloc(M * K / 2);
    char what[160];
    for (int mode = 0; mode < 4; mode++) {
        const char *mn = a4w4_scale_mode_name((a4w4_scale_mode)mode);
        if (a4w4_quantize(x, (a4w4_in_dtype)dtype, M, K, (a4w4_scale_mode)mode, 0, q_ref, s_ref) ||
            a4w4_quantize(x, (a4w4_in_dtype)dtype, M, K, (a4w4_scale_mode)mode, 1, q_ref,
                          sh_ref)) {
            result(0, "quant %s M=%zu K=%zu %s: ref failed", dname[dtype], M, K, mn);
            continue;
        }
        /* element codes of a 0xFF block are unspecified */
        size_t ff = 0;
        for (size_t m = 0; m < M; m++)
            for (size_t c = 0; c < cols; c++) {
                uint8_t keep = s_ref[m * cols + c] != 0xFF;
                ff += !keep;
                memset(mask + m * (K / 2) + c * 16, keep, 16);
            }
        snprintf(what, sizeof what, "quant %s M=%zu K=%zu %s row-major (%zu NaN/Inf blocks)",
                 dname[dtype], M, K, mn, ff);
        int rc = a4w4_gpu_quantize(x, dtype, M, K, mode, 0, 0, 0, q_gpu, s_gpu);
        if (check_rc(what, rc, 0)) {
            char w2[200];
            snprintf(w2, sizeof w2, "%s: scales", what);
            check_bytes(w2, s_gpu, s_ref, M * cols, NULL);
            snprintf(w2, sizeof w2, "%s: fp4 codes", what);
            check_bytes(w2, q_gpu, q_ref, M * K / 2, mask);
        }
        /* shuffled: SGLang fills vs the ref quantizer's own shuffled output, other fills vs
         * the ref shuffle of the ref row-major scale */
        static const uint8_t fills[3][2] = {{0x7F, 0x7F}, {0xFF, 0x00}, {0x00, 0xFF}};
        for (int f = 0; f < 3; f++) {
            if (f > 0)
                a4w4_act_scale_shuffle(s_ref, M, cols, fills[f][0], fills[f][1], sh_ref);
            snprintf(what, sizeof what, "quant %s M=%zu K=%zu %s shuffled fills %02X/%02X",
                     dname[dtype], M, K, mn, fills[f][0], fills[f][1]);
            rc = a4w4_gpu_quantize(x, dtype, M, K, mode, 1, fills[f][0], fills[f][1], q_gpu,
                                   s_gpu);
            if (check_rc(what, rc, 0)) {
                check_bytes(what, s_gpu, sh_ref, sbytes, NULL);
                char w2[200];
                snprintf(w2, sizeof w2, "%s: fp4 codes", what);
                check_bytes(w2, q_gpu, q_ref, M * K / 2, mask);
            }
        }
    }
    free(x);
    free(q_ref);
    free(s_ref);
    free(sh_ref);
    free(q_gpu);
    free(s_gpu);
    free(mask);
}

static void section_quant(void)
{
    static const size_t shapes[][2] = {{1, 32}, {2, 64}, {33, 320}, {257, 96}, {300, 768},
                                       {64, 5120}};
    const size_t n = g_quick ? 3 : sizeof shapes / sizeof shapes[0];
    rng_t r = {g_seed ^ 0x51u};
    double t0 = now_s();
    long f0 = g_fail;
    printf("== quantizer\n");
    for (size_t i = 0; i < n; i++)
        for (int dt = 0; dt < 3; dt++)
            quant_one(shapes[i][0], shapes[i][1], dt, &r);
    printf("   quantizer: %zu shapes x 3 dtypes x 4 modes, %ld failures (%.1fs)\n", n,
           g_fail - f0, now_s() - t0);
}

/* ---- layouts ---------------------------------------------------------------------------- */
static void section_layout(void)
{
    rng_t r = {g_seed ^ 0x1A70u};
    char what[160];
    double t0 = now_s();
    long f0 = g_fail;
    printf("== layouts\n");
    static const size_t pre[][2] = {{16, 64}, {48, 320}, {128, 256}, {272, 192}, {1024, 5120}};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        size_t N = pre[i][0], K = pre[i][1], nb = N * K / 2;
        uint8_t *w = xmalloc(nb), *a = xmalloc(nb), *b = xmalloc(nb);
        rng_bytes(&r, w, nb);
        a4w4_preshuffle(w, N, K, a);
        snprintf(what, sizeof what, "preshuffle N=%zu K=%zu", N, K);
        if (check_rc(what, a4w4_gpu_preshuffle(w, N, K, b), 0))
            check_bytes(what, b, a, nb, NULL);
        free(w);
        free(a);
        free(b);
    }
    static const size_t swz[][2] = {{32, 8}, {64, 16}, {96, 24}, {1024, 160}, {256, 64}};
    for (size_t i = 0; i < sizeof swz / sizeof swz[0]; i++) {
        size_t R = swz[i][0], C = swz[i][1], nb = R * C;
        uint8_t *s = xmalloc(nb), *a = xmalloc(nb), *b = xmalloc(nb);
        rng_bytes(&r, s, nb);
        a4w4_scale_swizzle(s, R, C, a);
        snprintf(what, sizeof what, "scale swizzle rows=%zu cols=%zu", R, C);
        if (check_rc(what, a4w4_gpu_scale_swizzle(s, R, C, b), 0))
            check_bytes(what, b, a, nb, NULL);
        free(s);
        free(a);
        free(b);
    }
    static const size_t act[][2] = {{1, 8}, {33, 24}, {300, 10}, {257, 3}, {16, 160}, {512, 1}};
    static const uint8_t fills[3][2] = {{0x7F, 0x7F}, {0xFF, 0x00}, {0x00, 0xFF}};
    for (size_t i = 0; i < sizeof act / sizeof act[0]; i++)
        for (int f = 0; f < 3; f++) {
            size_t M = act[i][0], C = act[i][1];
            size_t out = a4w4_gpu_act_scale_shuffled_bytes(M, C);
            uint8_t *s = xmalloc(M * C), *a = xmalloc(out), *b = xmalloc(out);
            rng_bytes(&r, s, M * C);
            a4w4_act_scale_shuffle(s, M, C, fills[f][0], fills[f][1], a);
            snprintf(what, sizeof what, "act scale shuffle M=%zu cols=%zu fills %02X/%02X", M, C,
                     fills[f][0], fills[f][1]);
            if (check_rc(what, a4w4_gpu_act_scale_shuffle(s, M, C, fills[f][0], fills[f][1], b),
                         0))
                check_bytes(what, b, a, out, NULL);
            free(s);
            free(a);
            free(b);
        }
    /* Rules: unsupported shapes are refused with ELAYOUT / ESHAPE, nothing launched. */
    uint8_t dummy[4096];
    uint16_t ydummy[64];
    memset(dummy, 0, sizeof dummy);
    check_rc("preshuffle N=8 refused", a4w4_gpu_preshuffle(dummy, 8, 64, dummy),
             A4W4_GPU_ELAYOUT);
    check_rc("preshuffle K=96 refused", a4w4_gpu_preshuffle(dummy, 16, 96, dummy),
             A4W4_GPU_ELAYOUT);
    check_rc("swizzle rows=16 refused", a4w4_gpu_scale_swizzle(dummy, 16, 8, dummy),
             A4W4_GPU_ELAYOUT);
    check_rc("swizzle cols=10 refused", a4w4_gpu_scale_swizzle(dummy, 32, 10, dummy),
             A4W4_GPU_ELAYOUT);
    check_rc("asm N=48 refused",
             a4w4_gpu_gemm_asm(0, 1, 0, dummy, dummy, dummy, dummy, 1, 48, 256, ydummy),
             A4W4_GPU_ELAYOUT);
    check_rc("asm K=320 refused",
             a4w4_gpu_gemm_asm(1, 1, 0, dummy, dummy, dummy, dummy, 1, 32, 320, ydummy),
             A4W4_GPU_ELAYOUT);
    check_rc("asm K=100 bad shape",
             a4w4_gpu_gemm_asm(1, 1, 0, dummy, dummy, dummy, dummy, 1, 32, 100, ydummy),
             A4W4_GPU_ESHAPE);
    check_rc("asm M=0 bad shape",
             a4w4_gpu_gemm_asm(1, 1, 0, dummy, dummy, dummy, dummy, 0, 32, 256, ydummy),
             A4W4_GPU_ESHAPE);
    check_rc("asm bad tile", a4w4_gpu_gemm_asm(999, 1, 0, dummy, dummy, dummy, dummy, 1, 32, 256,
                                               ydummy),
             A4W4_GPU_EARG);
    check_rc("quantize bad mode", a4w4_gpu_quantize(dummy, 0, 1, 32, 7, 0, 0, 0, dummy, dummy),
             A4W4_GPU_EARG);
    printf("   layouts: %ld failures (%.1fs)\n", g_fail - f0, now_s() - t0);
}

/* ---- tile table -------------------------------------------------------------------------- */
static void section_tiles(void)
{
    char what[200];
    int n = a4w4_gpu_tile_count();
    result(n == 35, "tile table has 35 entries (%d)", n);
    for (size_t i = 0; i < sizeof main_tiles / sizeof *main_tiles; i++) {
        int t = a4w4_gpu_tile_find(main_tiles[i]);
        const a4w4_gpu_tile *tl = a4w4_gpu_tile_get(t);
        snprintf(what, sizeof what, "tile %s found", main_tiles[i]);
        result(tl && tl->bpreshuffle, "%s", what);
        if (tl) {
            result(a4w4_gpu_tile_find(tl->symbol) == t, "tile by symbol %s", tl->symbol);
            char co[128];
            snprintf(co, sizeof co, "%s.co", tl->name);
            result(a4w4_gpu_tile_find(co) == t, "tile by .co name %s", co);
        }
    }
    result(a4w4_gpu_tile_find("f4gemm_bf16_per1x32Fp4_BpreShuffle_7x7") == -1, "unknown tile");
    /* split ranges agree with the ref */
    static const size_t Ks[] = {256, 320, 768, 2048, 5120, 14336, 34816};
    int ok = 1;
    for (size_t i = 0; i < sizeof Ks / sizeof *Ks; i++)
        for (unsigned S = 1; S <= 17; S++)
            ok &= a4w4_gpu_split_k_per_split(Ks[i], S) == a4w4_split_k_per_split(Ks[i], S) &&
                  a4w4_gpu_split_count(Ks[i], S) == a4w4_split_count(Ks[i], S);
    result(ok, "split ranges equal the ref's");
}

/* ---- golden bundles ------------------------------------------------------------------- */
static void golden_case(const char *path, const char *name, const stfile *f)
{
    const size_t M = st_meta_size(f, "M"), N = st_meta_size(f, "N"), K = st_meta_size(f, "K");
    size_t l1, l2, l3, l4, l5, l6, l7, l8, l9;
    const uint8_t *a = st_tensor(f, "a_fp4", &l1), *as = st_tensor(f, "a_scale", &l2),
                  *ash = st_tensor(f, "a_scale_shuffled", &l3), *w = st_tensor(f, "w_fp4", &l4),
                  *ws = st_tensor(f, "w_scale", &l5), *wsh = st_tensor(f, "w_fp4_shuffled", &l6),
                  *wsw = st_tensor(f, "w_scale_swizzled", &l7),
                  *yo = st_tensor(f, "y_ordered", &l8), *ye = st_tensor(f, "y_exact", &l9);
    char what[200];
    if (!M || !N || !K || !a || !as || !w || !ws || !yo || !ye || l1 != M * K / 2 ||
        l2 != M * K / 32 || l4 != N * K / 2 || l5 != N * K / 32 || l8 != M * N * 2) {
        result(0, "golden %s: unreadable bundle %s", name, path);
        return;
    }
    const size_t cols = K / 32, sb = a4w4_gpu_act_scale_shuffled_bytes(M, cols);
    uint16_t *want = xmalloc(M * N * 2), *wante = xmalloc(M * N * 2), *got = xmalloc(M * N * 2),
             *ref = xmalloc(M * N * 2);
    memcpy(want, yo, M * N * 2);
    memcpy(wante, ye, M * N * 2);
    uint8_t *buf = xmalloc((N * K / 2 > sb ? N * K / 2 : sb) + 16);

    /* The oracle itself against the bundle (who is wrong if the GPU disagrees). */
    if (!oracle(OR_ORDERED, a, as, w, ws, M, N, K, 1, ref, NULL, NULL)) {
        size_t first, bad = cmp_bf16(ref, want, M * N, &first);
        if (bad)
            note("golden %s: ref a4w4_gemm_ordered(1) differs from the bundle's y_ordered in "
                 "%zu outputs (first %zu: ref 0x%04x bundle 0x%04x)",
                 name, bad, first, ref[first], want[first]);
    }

    if (ash && l3 == sb) {
        snprintf(what, sizeof what, "golden %s act scale shuffle 7F/7F", name);
        if (check_rc(what, a4w4_gpu_act_scale_shuffle(as, M, cols, 0x7F, 0x7F, buf), 0))
            check_bytes(what, buf, ash, sb, NULL);
    }
    if (wsh && l6 == N * K / 2 && N % 16 == 0 && K % 64 == 0) {
        snprintf(what, sizeof what, "golden %s preshuffle", name);
        if (check_rc(what, a4w4_gpu_preshuffle(w, N, K, buf), 0))
            check_bytes(what, buf, wsh, N * K / 2, NULL);
    }
    if (wsw && l7 == N * cols) {
        snprintf(what, sizeof what, "golden %s scale swizzle", name);
        if (check_rc(what, a4w4_gpu_scale_swizzle(ws, N, cols, buf), 0))
            check_bytes(what, buf, wsw, N * cols, NULL);
    }
    /* ASM GEMM on the bundle's own shuffled tensors, every tile (host-form API). */
    if (wsw && ash && wsh && l3 == sb && l7 == N * cols) {
        int ok = 0, run = 0;
        for (int t = 0; t < a4w4_gpu_tile_count(); t++) {
            const a4w4_gpu_tile *tl = a4w4_gpu_tile_get(t);
            if (!tl->bpreshuffle)
                continue;
            if (g_quick && tl->tile_m != 32 && tl->tile_m != 256)
                continue;
            snprintf(what, sizeof what, "golden %s asm %dx%d vs y_ordered", name, tl->tile_m,
                     tl->tile_n);
            run++;
            if (check_rc(what, a4w4_gpu_gemm_asm(t, 1, 0, a, ash, wsh, wsw, M, N, K, got), 0))
                ok += check_bf16(what, got, want, M, N);
        }
        printf("golden %-28s asm: %d/%d tiles bit-exact vs y_ordered\n", name, ok, run);
        static const unsigned S[] = {2, 4, 8};
        for (size_t i = 0; i < 3; i++) {
            oracle(OR_ORDERED, a, as, w, ws, M, N, K, S[i], ref, NULL, NULL);
            snprintf(what, sizeof what, "golden %s asm 64x256 split ordered(%u)", name, S[i]);
            if (check_rc(what,
                         a4w4_gpu_gemm_asm(a4w4_gpu_tile_find("64x256"), S[i], 0, a, ash, wsh,
                                           wsw, M, N, K, got),
                         0))
                check_bf16(what, got, ref, M, N);
            /* the bundles are in the exact regime: ordered(S) must equal y_exact too */
            char w2[300];
            snprintf(w2, sizeof w2, "%s == y_exact (exact regime)", what);
            check_bf16(w2, got, wante, M, N);
        }
    } else {
        printf("golden %-28s asm: skipped (weight scale not swizzle-supported)\n", name);
        snprintf(what, sizeof what, "golden %s asm refused", name);
        check_rc(what,
                 a4w4_gpu_gemm_asm(a4w4_gpu_tile_find("32x128"), 1, 0, a, as, w, ws, M, N, K, got),
                 A4W4_GPU_ELAYOUT);
    }
    snprintf(what, sizeof what, "golden %s rowmajor vs y_ordered", name);
    if (check_rc(what, a4w4_gpu_gemm_rowmajor(a, as, w, ws, M, N, K, got), 0))
        check_bf16(what, got, want, M, N);
    free(want);
    free(wante);
    free(got);
    free(ref);
    free(buf);
}

static void golden_quant(const char *name, const stfile *f)
{
    const size_t rows = st_meta_size(f, "rows"), K = st_meta_size(f, "K");
    size_t lx, lb;
    const uint8_t *xf = st_tensor(f, "x_f32", &lx), *xb = st_tensor(f, "x_bf16", &lb);
    if (!rows || !K || !xf || !xb || lx != rows * K * 4 || lb != rows * K * 2) {
        result(0, "golden %s: unreadable quant bundle", name);
        return;
    }
    const size_t cols = K / 32, sb = a4w4_gpu_act_scale_shuffled_bytes(rows, cols);
    uint8_t *q = xmalloc(rows * K / 2), *s = xmalloc(sb);
    char what[200], tn[96];
    for (int mode = 0; mode < 4; mode++) {
        const char *mn = a4w4_scale_mode_name((a4w4_scale_mode)mode);
        for (int from_bf16 = 0; from_bf16 < 2; from_bf16++) {
            const char *suf = from_bf16 ? "_from_bf16" : "";
            size_t lq, ls, lsh = 0;
            snprintf(tn, sizeof tn, "a_fp4_%s%s", mn, suf);
            const uint8_t *wq = st_tensor(f, tn, &lq);
            snprintf(tn, sizeof tn, "a_scale_%s%s", mn, suf);
            const uint8_t *wsc = st_tensor(f, tn, &ls);
            snprintf(tn, sizeof tn, "a_scale_%s_shuffled", mn);
            const uint8_t *wsh = from_bf16 ? NULL : st_tensor(f, tn, &lsh);
            if (!wq || !wsc || lq != rows * K / 2 || ls != rows * cols) {
                result(0, "golden %s: missing %s tensors", name, mn);
                continue;
            }
            snprintf(what, sizeof what, "golden %s quant %s%s", name, mn, suf);
            int rc = a4w4_gpu_quantize(from_bf16 ? (const void *)xb : (const void *)xf,
                                       from_bf16 ? A4W4_GPU_IN_BF16 : A4W4_GPU_IN_F32, rows, K,
                                       mode, 0, 0, 0, q, s);
            if (check_rc(what, rc, 0)) {
                char w2[220];
                snprintf(w2, sizeof w2, "%s scales", what);
                check_bytes(w2, s, wsc, rows * cols, NULL);
                snprintf(w2, sizeof w2, "%s fp4 codes", what);
                check_bytes(w2, q, wq, rows * K / 2, NULL);
            }
            if (wsh && lsh == sb) {
                snprintf(what, sizeof what, "golden %s quant %s shuffled", name, mn);
                rc = a4w4_gpu_quantize(xf, A4W4_GPU_IN_F32, rows, K, mode, 1, 0x7F, 0x7F, q, s);
                if (check_rc(what, rc, 0))
                    check_bytes(what, s, wsh, sb, NULL);
            }
        }
    }
    printf("golden %-28s quantizer: 4 modes x {f32, bf16} checked\n", name);
    free(q);
    free(s);
}

static void section_golden(const char *dir)
{
    static const char *const files[] = {"g1_m1_n256_k512",    "g2_m16_n1024_k5120",
                                        "g3_m33_n256_k768",   "g4_m4_n128_k2048",
                                        "g5_m8_n48_k320",     "q1_quant_modes"};
    double t0 = now_s();
    long f0 = g_fail;
    printf("== golden bundles (%s)\n", dir);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024], fmt[64];
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[i]);
        stfile f;
        if (st_load(path, &f)) {
            result(0, "golden %s: cannot read %s", files[i], path);
            continue;
        }
        if (st_meta(&f, "format", fmt, sizeof fmt))
            fmt[0] = 0;
        if (!strcmp(fmt, "a4w4-case/1"))
            golden_case(path, files[i], &f);
        else if (!strcmp(fmt, "a4w4-quant/1"))
            golden_quant(files[i], &f);
        else
            result(0, "golden %s: unknown format '%s'", files[i], fmt);
        st_free(&f);
    }
    printf("   golden: %ld failures (%.1fs)\n", g_fail - f0, now_s() - t0);
}

/* ---- timing (information only, not a check) ---------------------------------------------- */
static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void section_timing(void)
{
    static const size_t shapes[][3] = {{16, 5120, 5120}, {2048, 5120, 5120}};
    static const char *const tiles[] = {"32x128", "128x128", "256x256"};
    printf("== timing (median of 7 launches after 2 warm-ups; information only)\n");
    a4w4_gpu_timer *tm = NULL;
    if (a4w4_gpu_timer_create(&tm)) {
        result(0, "timer create: %s", a4w4_gpu_last_error());
        return;
    }
    for (size_t i = 0; i < 2; i++) {
        const size_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        gcase c;
        gcase_make(&c, M, N, K, V_NORMAL, g_seed);
        uint8_t *w_sh = xmalloc(N * K / 2), *ws_sw = xmalloc(N * K / 32);
        uint8_t *as_sh = xmalloc(a4w4_gpu_act_scale_shuffled_bytes(M, K / 32));
        a4w4_preshuffle(c.w_fp4, N, K, w_sh);
        a4w4_scale_swizzle(c.w_scale, N, K / 32, ws_sw);
        a4w4_act_scale_shuffle(c.a_scale, M, K / 32, 0x7F, 0x7F, as_sh);
        void *da = dev_up(c.a_fp4, M * K / 2), *das = dev_up(as_sh, a4w4_gpu_act_scale_shuffled_bytes(M, K / 32)),
             *dw = dev_up(w_sh, N * K / 2), *dws = dev_up(ws_sw, N * K / 32),
             *dar = dev_up(c.a_scale, M * K / 32), *dwr = dev_up(c.w_fp4, N * K / 2),
             *dwsr = dev_up(c.w_scale, N * K / 32), *dy = NULL;
        a4w4_gpu_malloc(&dy, M * N * 2);
        for (size_t te = 0; te < 2 * (sizeof tiles / sizeof *tiles + 1) && da && das && dw &&
                            dws && dy;
             te++) {
            const size_t t = te % (sizeof tiles / sizeof *tiles + 1);
            const int eng = te > sizeof tiles / sizeof *tiles ? A4W4_GPU_ENGINE_MMA
                                                              : A4W4_GPU_ENGINE_PORTABLE;
            float ms[7];
            int rc = 0;
            const int tile = t < 3 ? a4w4_gpu_tile_find(tiles[t]) : -1;
            for (int rep = 0; rep < 9 && !rc; rep++) {
                rc = a4w4_gpu_timer_start(tm, NULL);
                if (!rc)
                    rc = tile >= 0 ? a4w4_gpu_gemm_asm_engine_dev(eng, tile, 1, 0, da, das, dw,
                                                                  dws, M, N, K, dy, NULL, 0,
                                                                  NULL)
                                   : a4w4_gpu_gemm_rowmajor_engine_dev(eng, da, dar, dwr, dwsr,
                                                                       M, N, K, dy, NULL);
                if (!rc)
                    rc = a4w4_gpu_timer_stop(tm, NULL);
                if (!rc && rep >= 2)
                    rc = a4w4_gpu_timer_elapsed_ms(tm, &ms[rep - 2]);
            }
            if (rc) {
                result(0, "timing M=%zu N=%zu K=%zu: %s", M, N, K, a4w4_gpu_last_error());
                break;
            }
            qsort(ms, 7, sizeof *ms, cmp_float);
            printf("time M=%-5zu N=%zu K=%zu %-5s %-16s %9.1f us  %7.2f T-MAC/s\n", M, N, K,
                   eng == A4W4_GPU_ENGINE_MMA ? "mma" : "plain", t < 3 ? tiles[t] : "rowmajor",
                   ms[3] * 1e3, (double)M * N * K / (ms[3] * 1e-3) / 1e12);
        }
        a4w4_gpu_free(da);
        a4w4_gpu_free(das);
        a4w4_gpu_free(dw);
        a4w4_gpu_free(dws);
        a4w4_gpu_free(dar);
        a4w4_gpu_free(dwr);
        a4w4_gpu_free(dwsr);
        a4w4_gpu_free(dy);
        free(w_sh);
        free(ws_sw);
        free(as_sh);
        gcase_free(&c);
    }
    a4w4_gpu_timer_destroy(tm);
}

/* ---- main ------------------------------------------------------------------------------ */
int main(int argc, char **argv)
{
    const char *golden = A4W4_SOURCE_DIR "/cases/golden";
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    g_threads = ncpu > 0 ? (int)(ncpu > 32 ? 32 : ncpu) : 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            g_quick = 1;
        else if (!strcmp(argv[i], "--verbose"))
            g_verbose = 1;
        else if (!strcmp(argv[i], "--golden") && i + 1 < argc)
            golden = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            g_seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            g_threads = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s [--quick] [--golden DIR] [--seed N] [--threads N] [--verbose]\n",
                    argv[0]);
            return 2;
        }
    }
    char name[256];
    int ndev = a4w4_gpu_available(name, sizeof name);
    if (ndev <= 0) {
        printf("SKIP: no GPU available to the %s backend (%s)\n", a4w4_gpu_platform(),
               a4w4_gpu_last_error());
        return 77;
    }
    printf("a4w4_gpu_check: %s platform, %d device(s), device 0 '%s', seed %" PRIu64
           ", %d oracle threads, %s\n",
           a4w4_gpu_platform(), ndev, name, g_seed, g_threads, g_quick ? "quick" : "full");
    double t0 = now_s();
    section_tiles();
    section_layout();
    section_quant();
    section_golden(golden);
    section_gemm();
    g_engine = A4W4_GPU_ENGINE_MMA; /* the matrix-unit kernels, held to the same oracles */
    section_gemm();
    g_engine = A4W4_GPU_ENGINE_PORTABLE;
    if (!g_quick)
        section_timing();
    if (g_nan_payload)
        note("%ld NaN outputs matched a NaN with other bits (GPU writes 0x7FC0 for every NaN; "
             "first: got 0x%04x, oracle 0x%04x)",
             g_nan_payload, g_nan_got, g_nan_want);
    printf("== summary: %ld passed, %ld failed, %ld notes, %.1fs wall\n", g_pass, g_fail, g_notes,
           now_s() - t0);
    printf("%s\n", g_fail ? "RESULT: FAIL" : "RESULT: PASS");
    return g_fail ? 1 : 0;
}
