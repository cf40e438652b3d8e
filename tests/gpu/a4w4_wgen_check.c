/* a4w4_wgen_check.c — W made on the device (ref/gpu's a4w4j_gen_w) against the harness's
 * generator (harness/gen: the reference), byte for byte, for every regime the device path
 * takes (exact, normal, wide, special, code0, tiny) at odd shapes: N of 1, 2, 3, 7, 33 and 161
 * rows (no multiple of anything), N = 64 and 96 (with the swizzled scales), K = 32, 64, 4,096
 * and large K (131,072: the exact regimes' smaller code range; 2^21: the judge's largest).
 * Per case: the device's codes, scales and swizzled scales equal a4w4_case_generate_all's
 * (every row); then the host side of the device path: a4w4_case_generate_devw holds the
 * sample's rows of W equal to the reference's, every row's NaN row and code-0 flag, and after
 * a4w4_case_w_complete every byte of W and of the swizzled scales.
 *
 * Linked with the judge library (a4w4_wgen_check: exits 77 without a GPU) or with its CPU
 * stand-in (a4w4_wgen_check_cpu, which runs a4w4_judge_wgen.h's lines on the host). Exit 0
 * when every byte is equal, 1 with the first difference of each case printed. --fault makes
 * the generator draw each row from the next row's stream (the check must fail); --first stops
 * at the first case with a difference (the fault tests ask only that one is found); --measure
 * times the host's generation with and without W (docs/gpu.md, "W made on the device"). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "a4w4_judge_gpu.h"
#include "gen.h"

typedef struct {
    a4w4_regime regime;
    size_t M, N, K;
} shape;

static int g_fails;

/* The first byte where got and want differ in [0, n), reported; 1 when one does. */
static int differs(const char *what, const char *name, const uint8_t *got, const uint8_t *want,
                   size_t n, size_t row_bytes)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            printf("FAIL %s: %s byte %zu (row %zu) is 0x%02X, the host's generator makes 0x%02X\n",
                   name, what, i, row_bytes ? i / row_bytes : 0, got[i], want[i]);
            return 1;
        }
    return 0;
}

/* W from the device (a4w4j_gen_w, downloaded) against ref's bytes: 0 equal, 1 not, 2 error. */
static int device_vs_ref(const a4w4_case *c, const a4w4_case_data *ref)
{
    const size_t N = c->N, K = c->K, wb = N * K / 2, sb = N * K / 32;
    const int swz = ref->w_scale_swizzled.data != NULL;
    void *dw = NULL, *ds = NULL, *dz = NULL;
    uint8_t *w = malloc(wb), *s = malloc(sb), *z = malloc(sb);
    int rc = !w || !s || !z || a4w4j_alloc(&dw, wb) || a4w4j_alloc(&ds, sb) ||
             a4w4j_alloc(&dz, sb);
    const a4w4j_wgen g = {c->seed, c->name, N, K, (int)c->regime};
    if (!rc && a4w4j_gen_w(&g, dw, ds, swz ? dz : NULL))
        rc = 2;
    if (!rc)
        rc = a4w4j_download(w, dw, wb) || a4w4j_download(s, ds, sb) ||
             (swz && a4w4j_download(z, dz, sb));
    if (rc) {
        printf("ERROR %s: %s\n", c->name, a4w4j_last_error());
        rc = 2;
    } else {
        rc = differs("device w_fp4", c->name, w, ref->w_fp4.data, wb, K / 2) ||
             differs("device w_scale", c->name, s, ref->w_scale.data, sb, K / 32) ||
             (swz && differs("device w_scale_swizzled", c->name, z, ref->w_scale_swizzled.data,
                             sb, 0));
    }
    a4w4j_free(dw), a4w4j_free(ds), a4w4j_free(dz);
    free(w), free(s), free(z);
    return rc;
}

/* The device path's host side: the sample's rows of W, the NaN row and code-0 flag while W is
 * deferred, every byte once completed. 0 equal, 1 not, 2 error. */
static int deferred_vs_ref(const a4w4_case *c, const a4w4_case_data *ref)
{
    a4w4_sample s;
    a4w4_case_data d;
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 0, &s))
        return 2;
    if (a4w4_case_generate_devw(c, &s, &d)) {
        a4w4_sample_free(&s);
        return 2;
    }
    const size_t K2 = c->K / 2, nb = c->K / 32;
    int bad = d.w_deferred != !s.full;
    if (bad)
        printf("FAIL %s: W %sdeferred on a %s sample\n", c->name, d.w_deferred ? "" : "not ",
               s.full ? "full" : "partial");
    for (size_t j = 0; !bad && j < (s.full ? c->N : s.ncols); j++) {
        const size_t n = s.full ? j : s.cols[j];
        bad = differs("sampled w_fp4 row", c->name, d.w_fp4.data + n * K2,
                      ref->w_fp4.data + n * K2, K2, 0) ||
              differs("sampled w_scale row", c->name, d.w_scale.data + n * nb,
                      ref->w_scale.data + n * nb, nb, 0);
    }
    if (!bad && (d.nan_w_row != ref->nan_w_row || d.code0 != ref->code0)) {
        printf("FAIL %s: deferred W: NaN row %zu code0 %d, every row's %zu and %d\n", c->name,
               d.nan_w_row, d.code0, ref->nan_w_row, ref->code0);
        bad = 1;
    }
    a4w4_case_w_complete(&d);
    if (!bad)
        bad = d.w_deferred ||
              differs("completed w_fp4", c->name, d.w_fp4.data, ref->w_fp4.data, c->N * K2, K2) ||
              differs("completed w_scale", c->name, d.w_scale.data, ref->w_scale.data,
                      c->N * nb, nb) ||
              (ref->w_scale_swizzled.data &&
               differs("completed w_scale_swizzled", c->name, d.w_scale_swizzled.data,
                       ref->w_scale_swizzled.data, c->N * nb, 0));
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return bad;
}

static void check(const shape *sh, uint64_t seed)
{
    static const char *const names[] = {"exact", "normal", "wide", "special", "code0", "tiny"};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "wgen_%s_%zux%zux%zu", names[sh->regime], sh->M, sh->N, sh->K);
    c.M = sh->M, c.N = sh->N, c.K = sh->K, c.regime = sh->regime, c.seed = seed;
    snprintf(c.regime_text, sizeof c.regime_text, "%s", names[sh->regime]);
    a4w4_sample full = {NULL, c.M, NULL, c.N, 1};
    a4w4_case_data ref;
    if (a4w4_case_generate_all(&c, &full, &ref)) {
        printf("ERROR %s: out of memory\n", c.name);
        g_fails++;
        return;
    }
    int rc = device_vs_ref(&c, &ref);
    if (rc != 2)
        rc |= deferred_vs_ref(&c, &ref);
    g_fails += rc != 0;
    if (!rc)
        printf("ok %s: %zu bytes of W, %zu scales%s equal\n", c.name, c.N * c.K / 2, c.N * c.K / 32,
               ref.w_scale_swizzled.data ? " (and swizzled)" : "");
    a4w4_case_data_free(&ref);
}

static double now_s(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* --measure M N K REGIME SEED [REPEATS]: the host's generation of one case on the device path
 * (the runner's sample), W generated there (a4w4_case_generate_dev) against W left to the
 * device (a4w4_case_generate_devw), alternating, REPEATS (default 3) times each: wall and CPU
 * seconds of each (min and max), and the bytes of W no longer uploaded. Nothing is judged. */
static int measure(char **argv, int argc)
{
    static const char *const names[] = {"exact", "normal", "wide", "special", "code0", "tiny"};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    c.M = strtoull(argv[0], NULL, 10), c.N = strtoull(argv[1], NULL, 10);
    c.K = strtoull(argv[2], NULL, 10), c.seed = strtoull(argv[4], NULL, 10);
    int reps = argc > 5 ? atoi(argv[5]) : 3, r = 0;
    while (r < 6 && strcmp(names[r], argv[3]))
        r++;
    if (!c.M || !c.N || !c.K || c.K % 32 || r == 6 || reps < 1) {
        fprintf(stderr, "a4w4_wgen_check --measure M N K REGIME SEED [REPEATS]: bad argument\n");
        return 2;
    }
    c.regime = (a4w4_regime)r;
    snprintf(c.name, sizeof c.name, "n%zu_k%zu_m%zu", c.N, c.K, c.M);
    snprintf(c.regime_text, sizeof c.regime_text, "%s", names[r]);
    a4w4_sample s;
    if (a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 0, &s))
        return 2;
    double lo[2][2] = {{1e30, 1e30}, {1e30, 1e30}}, hi[2][2] = {{0, 0}, {0, 0}};
    size_t wsw = 0;
    for (int i = 0; i < 2 * reps; i++) {
        const int dev = i % 2;
        a4w4_case_data d;
        double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
        if ((dev ? a4w4_case_generate_devw : a4w4_case_generate_dev)(&c, &s, &d))
            return 2;
        const double t[2] = {now_s(CLOCK_MONOTONIC) - w0, now_s(CLOCK_PROCESS_CPUTIME_ID) - c0};
        wsw = d.w_scale_swizzled.data ? d.w_scale_swizzled.len : 0;
        a4w4_case_data_free(&d);
        for (int k = 0; k < 2; k++) {
            lo[dev][k] = t[k] < lo[dev][k] ? t[k] : lo[dev][k];
            hi[dev][k] = t[k] > hi[dev][k] ? t[k] : hi[dev][k];
        }
    }
    printf("%s %s M=%zu N=%zu K=%zu sample %zux%zu, %d runs each:\n", c.name, names[r], c.M, c.N,
           c.K, s.full ? c.M : s.nrows, s.full ? c.N : s.ncols, reps);
    printf("  W on the host (generate_dev):   wall %.3f-%.3f s, CPU %.3f-%.3f s\n", lo[0][0],
           hi[0][0], lo[0][1], hi[0][1]);
    printf("  W on the device (generate_devw): wall %.3f-%.3f s, CPU %.3f-%.3f s\n", lo[1][0],
           hi[1][0], lo[1][1], hi[1][1]);
    printf("  W not uploaded: %zu bytes\n", c.N * c.K / 2 + c.N * c.K / 32 + wsw);
    a4w4_sample_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 6 && !strcmp(argv[1], "--measure"))
        return measure(argv + 2, argc - 2);
    int fault = 0, first = 0;
    for (int i = 1; i < argc; i++) {
        fault |= !strcmp(argv[i], "--fault");
        first |= !strcmp(argv[i], "--first");
    }
    if (a4w4j_device_count() < 1) {
        printf("no GPU: skipped\n");
        return 77;
    }
    a4w4j_set_wgen_fault(fault);
    static const size_t Ns[] = {1, 2, 3, 7, 33, 64, 96, 161};
    static const size_t Ks[] = {32, 64, 4096};
    size_t cases = 0;
    for (int r = A4W4_REGIME_EXACT; r <= A4W4_REGIME_TINY && !(first && g_fails); r++) {
        for (size_t i = 0; i < sizeof Ns / sizeof Ns[0]; i++)
            for (size_t k = 0; k < sizeof Ks / sizeof Ks[0] && !(first && g_fails); k++, cases++)
                check(&(shape){(a4w4_regime)r, 257, Ns[i], Ks[k]}, 0x5EED + cases);
        /* large K: the exact regimes' code range below 7 (K >= 131,072), the judge's largest K;
         * the sampled device path on a case of thousands of rows */
        static const shape large[] = {{A4W4_REGIME_EXACT, 64, 5, 131072},
                                      {A4W4_REGIME_EXACT, 16, 3, 1u << 21},
                                      {A4W4_REGIME_EXACT, 300, 4099, 1024},
                                      {A4W4_REGIME_EXACT, 300, 4096, 1024}};
        static const uint64_t seeds[] = {17, 29, 31, 37};
        for (int j = 0; j < 4 && !(first && g_fails); j++, cases++) {
            shape sh = large[j];
            sh.regime = (a4w4_regime)r;
            check(&sh, seeds[j] + (uint64_t)r);
        }
    }
    printf("%s: %zu cases%s, %d with a difference\n", g_fails ? "FAIL" : "PASS", cases,
           first && g_fails ? " (--first: stopped at the first difference)" : "", g_fails);
    return g_fails ? 1 : 0;
}
