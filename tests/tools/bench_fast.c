/* bench_fast.c — micro benchmark of the fast exact / ordered(S) oracles (ref/a4w4_gemm_fast.h)
 * against the plain exact oracle and OpenBLAS sgemm, in one run on the same operands, with the
 * ratios taken within the run (contracts §4.1). Not a unit test: it prints a table.
 *
 *   bench_fast [--quick] [--reps R] [--threads T]
 *
 * Shapes: normal-regime 256x5120x5120 and 16x34816x5120 (A quantized per 1x32 round_up from
 * bf16 N(0,1), W codes with scales 123..131, as the case generator makes them) and a
 * wide-regime 256x5120x5120 (scales spread over 1..254 per block column, sums finite);
 * --quick divides N by 8. Rates are G-MAC/s (M*N*K / seconds), best of R repetitions
 * (default 5) taken in turn with every other configuration, so that load from other jobs
 * falls on all alike. "fast exact" is the AUTO path (named on the first line); the AVX512-VNNI
 * path is also timed alone where AUTO picks another. "sgemm" is cblas_sgemm on operands dequantized
 * beforehand (dequantization not timed, as `a4w4check bench` does); "sgemm oracle" is
 * a4w4_gemm_sgemm end to end. The plain exact oracle is timed on the first rows only (its rate does
 * not depend on M), and the fast oracle's outputs on those rows are compared with it bit for bit.
 * The multi-threaded rows use T threads (default: all, a4w4_fast_max_threads() and OpenBLAS's own
 * count). Exit 0, or 1 when an allocation fails or the fast oracle differs from the plain one. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_quant.h"

typedef struct {
    const char *regime;
    size_t M, N, K;
    int wide;
} bench_shape;

typedef struct {
    size_t M, N, K;
    uint8_t *a, *as, *w, *ws;
    float *A, *W, *C;
    uint16_t *y;
} bench_data;

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fill_codes(uint8_t *fp4, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) {
        uint64_t v = next();
        fp4[i] = (uint8_t)(((v & 7) | ((v >> 3) & 8)) | ((((v >> 8) & 7) | ((v >> 11) & 8)) << 4));
    }
}

/* A: bf16 ~ N(0, 1) (sum of 4 uniforms, scaled) quantized per 1x32 in round_up mode. */
static int fill_normal_a(bench_data *d)
{
    uint16_t *x = malloc(d->M * d->K * sizeof *x);
    if (!x)
        return 1;
    for (size_t i = 0; i < d->M * d->K; i++) {
        double s = 0;
        for (int j = 0; j < 4; j++)
            s += (double)(next() >> 11) * 0x1p-53;
        x[i] = a4w4_f32_to_bf16((float)((s - 2.0) * 1.7320508075688772));
    }
    int rc = a4w4_quantize(x, A4W4_IN_BF16, d->M, d->K, A4W4_ROUND_UP, 0, d->a, d->as);
    free(x);
    return rc != A4W4_OK;
}

/* Wide scales as the case generator's wide regime: per block column a centre c in 1..254,
 * A near c and W near 255 - c (±8, one block in 16 moved up to ±50), codes 1..254. */
static void fill_wide_scales(bench_data *d)
{
    size_t nb = d->K / 32;
    int *centre = malloc(nb * sizeof *centre);
    for (size_t b = 0; centre && b < nb; b++)
        centre[b] = 1 + (int)(next() % 254);
    for (int side = 0; centre && side < 2; side++) {
        size_t rows = side ? d->N : d->M;
        uint8_t *s = side ? d->ws : d->as;
        for (size_t i = 0; i < rows * nb; i++) {
            uint64_t v = next();
            int c = (side ? 255 - centre[i % nb] : centre[i % nb]) + (int)(v % 17) - 8;
            if (((v >> 8) & 15) == 0)
                c += (int)((v >> 12) % 101) - 50;
            s[i] = (uint8_t)(c < 1 ? 1 : c > 254 ? 254 : c);
        }
    }
    free(centre);
}

static void data_free(bench_data *d)
{
    free(d->a);
    free(d->as);
    free(d->w);
    free(d->ws);
    free(d->A);
    free(d->W);
    free(d->C);
    free(d->y);
}

static int data_make(const bench_shape *s, size_t ndiv, bench_data *d)
{
    memset(d, 0, sizeof *d);
    d->M = s->M;
    d->N = s->N / ndiv;
    d->K = s->K;
    d->a = malloc(d->M * d->K / 2);
    d->as = malloc(d->M * d->K / 32);
    d->w = malloc(d->N * d->K / 2);
    d->ws = malloc(d->N * d->K / 32);
    d->A = malloc(d->M * d->K * sizeof(float));
    d->W = malloc(d->N * d->K * sizeof(float));
    d->C = malloc(d->M * d->N * sizeof(float));
    d->y = malloc(d->M * d->N * sizeof(uint16_t));
    if (!d->a || !d->as || !d->w || !d->ws || !d->A || !d->W || !d->C || !d->y)
        return 1;
    fill_codes(d->w, d->N * d->K / 2);
    if (s->wide) {
        fill_codes(d->a, d->M * d->K / 2);
        fill_wide_scales(d);
    } else {
        if (fill_normal_a(d))
            return 1;
        for (size_t i = 0; i < d->N * d->K / 32; i++)
            d->ws[i] = (uint8_t)(123 + next() % 9);
    }
    a4w4_dequantize(d->a, d->as, d->M, d->K, d->A);
    a4w4_dequantize(d->w, d->ws, d->N, d->K, d->W);
    return 0;
}

/* ---- timing -------------------------------------------------------------------------------- */

typedef enum { PLAIN, FAST_EXACT, FAST_EXACT_VNNI, FAST_ORDERED, SGEMM, SGEMM_ORACLE } method;

/* One run of a method on the first `rows` rows of A (all rows except for PLAIN). */
static int run_once(bench_data *d, method m, unsigned threads, size_t rows, a4w4_fast_stats *st)
{
    switch (m) {
    case PLAIN:
        return a4w4_gemm_exact(d->a, d->as, d->w, d->ws, rows, d->N, d->K, d->y, NULL);
    case FAST_EXACT:
        return a4w4_gemm_exact_fast_ex(d->a, d->as, d->w, d->ws, d->M, d->N, d->K, d->y, NULL,
                                       threads, A4W4_FAST_AUTO, st);
    case FAST_EXACT_VNNI:
        if (!a4w4_fast_isa_supported(A4W4_FAST_AVX512VNNI))
            return 0; /* reported as not run */
        return a4w4_gemm_exact_fast_ex(d->a, d->as, d->w, d->ws, d->M, d->N, d->K, d->y, NULL,
                                       threads, A4W4_FAST_AVX512VNNI, st);
    case FAST_ORDERED:
        return a4w4_gemm_ordered_fast_ex(d->a, d->as, d->w, d->ws, d->M, d->N, d->K, 1, d->y, NULL,
                                         threads, A4W4_FAST_AUTO, st);
    case SGEMM:
        openblas_set_num_threads((int)threads);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)d->M, (int)d->N, (int)d->K, 1.0f,
                    d->A, (int)d->K, d->W, (int)d->K, 0.0f, d->C, (int)d->N);
        return 0;
    case SGEMM_ORACLE:
        openblas_set_num_threads((int)threads);
        return a4w4_gemm_sgemm(d->a, d->as, d->w, d->ws, d->M, d->N, d->K, d->y, NULL);
    }
    return -1;
}

/* One timed configuration: a method, a thread count, the rows it runs on, its best time. */
typedef struct {
    const char *label;
    method m;
    unsigned threads;
    size_t rows;
    double best;
} timing;

enum { T_PLAIN, T_FE1, T_FEA, T_FV1, T_FO1, T_FOA, T_SG1, T_SGA, T_SO1, T_COUNT };

/* Rows the plain oracle is timed on: about 3e8 MACs' worth, at least one. */
static size_t plain_rows(const bench_data *d)
{
    size_t rows = (size_t)(3e8 / ((double)d->N * (double)d->K));
    return rows < 1 ? 1 : rows > d->M ? d->M : rows;
}

/* Every configuration once per repetition, in turn, so that a machine shared with other jobs
 * loads them alike; the best time of each. Returns 1 when a run fails. */
static int time_all(bench_data *d, timing *t, int reps, a4w4_fast_stats *st)
{
    for (int i = 0; i < T_COUNT; i++)
        t[i].best = 1e300;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < T_COUNT; i++) {
            if (r > 0 && (t[i].m == PLAIN || t[i].m == SGEMM_ORACLE))
                continue; /* slow: one run is enough */
            double t0 = now();
            if (run_once(d, t[i].m, t[i].threads, t[i].rows, i == T_FE1 ? st : NULL) != 0)
                return 1;
            double dt = now() - t0;
            t[i].best = dt < t[i].best ? dt : t[i].best;
        }
    return 0;
}

static double gmacs(const bench_data *d, const timing *t)
{
    return (double)t->rows * (double)d->N * (double)d->K / t->best * 1e-9;
}

/* 1 when the fast exact oracle equals the plain one on the first rows (bf16 bits). */
static int fast_equals_plain(bench_data *d, size_t rows)
{
    uint16_t *plain = malloc(rows * d->N * sizeof *plain);
    if (!plain || a4w4_gemm_exact(d->a, d->as, d->w, d->ws, rows, d->N, d->K, plain, NULL) ||
        a4w4_gemm_exact_fast(d->a, d->as, d->w, d->ws, d->M, d->N, d->K, d->y, NULL)) {
        free(plain);
        return 0;
    }
    int same = memcmp(plain, d->y, rows * d->N * sizeof *plain) == 0;
    free(plain);
    return same;
}

static void print_table(const bench_data *d, const timing *t, const a4w4_fast_stats *st)
{
    static const char *const notes[T_COUNT] = {NULL,
                                               NULL,
                                               NULL,
                                               "(the AVX512-VNNI path forced)",
                                               NULL,
                                               NULL,
                                               "(cblas_sgemm on dequantized fp32)",
                                               NULL,
                                               "(a4w4_gemm_sgemm: dequantize + sgemm + bf16)"};
    double n = (double)d->M * (double)d->N;
    for (int i = 0; i < T_COUNT; i++) {
        char label[64];
        snprintf(label, sizeof label, t[i].label,
                 i == T_PLAIN ? t[i].rows - 1 : (size_t)t[i].threads);
        printf("  %-34s %8.2f G-MAC/s", label, gmacs(d, &t[i]));
        if (i == T_FE1)
            printf("  window %.1f%%, general %.1f%%, trivial %.1f%% of outputs",
                   100.0 * (double)st->window / n, 100.0 * (double)st->general / n,
                   100.0 * (double)st->trivial / n);
        printf("%s%s\n", notes[i] ? "  " : "", notes[i] ? notes[i] : "");
    }
    printf(
        "  ratios: fast exact / sgemm (1 thread each) x%.2f (avx512vnni x%.2f) | fast exact %u / "
        "1 threads x%.2f | sgemm %u / 1 threads x%.2f | fast exact / sgemm oracle (1 thread) "
        "x%.2f | fast / plain exact x%.1f\n",
        gmacs(d, &t[T_FE1]) / gmacs(d, &t[T_SG1]), gmacs(d, &t[T_FV1]) / gmacs(d, &t[T_SG1]),
        t[T_FEA].threads, gmacs(d, &t[T_FEA]) / gmacs(d, &t[T_FE1]), t[T_SGA].threads,
        gmacs(d, &t[T_SGA]) / gmacs(d, &t[T_SG1]), gmacs(d, &t[T_FE1]) / gmacs(d, &t[T_SO1]),
        gmacs(d, &t[T_FE1]) / gmacs(d, &t[T_PLAIN]));
}

/* The table of one shape and its ratios. Returns 0, or 1 on a failure or a mismatch. */
static int bench_one(const bench_shape *s, size_t ndiv, int reps, unsigned all)
{
    bench_data d;
    if (data_make(s, ndiv, &d)) {
        data_free(&d);
        fprintf(stderr, "bench_fast: out of memory\n");
        return 1;
    }
    timing t[T_COUNT] = {
        {"plain exact (rows 0..%zu)", PLAIN, 1, plain_rows(&d), 0},
        {"fast exact, %zu thread", FAST_EXACT, 1, d.M, 0},
        {"fast exact, %zu threads", FAST_EXACT, all, d.M, 0},
        {"fast exact avx512vnni, %zu thread", FAST_EXACT_VNNI, 1, d.M, 0},
        {"fast ordered(1), %zu thread", FAST_ORDERED, 1, d.M, 0},
        {"fast ordered(1), %zu threads", FAST_ORDERED, all, d.M, 0},
        {"sgemm, %zu thread", SGEMM, 1, d.M, 0},
        {"sgemm, %zu threads", SGEMM, all, d.M, 0},
        {"sgemm oracle, %zu thread", SGEMM_ORACLE, 1, d.M, 0},
    };
    a4w4_fast_stats st;
    printf("== %s %zux%zux%zu (%.2f G-MAC)\n", s->regime, d.M, d.N, d.K,
           (double)d.M * (double)d.N * (double)d.K * 1e-9);
    int rc = time_all(&d, t, reps, &st);
    if (rc == 0) {
        print_table(&d, t, &st);
        int same = fast_equals_plain(&d, t[T_PLAIN].rows);
        printf("  fast exact == plain exact on rows 0..%zu: %s\n\n", t[T_PLAIN].rows - 1,
               same ? "yes" : "NO");
        rc = !same;
    }
    data_free(&d);
    return rc;
}

static void print_machine(unsigned all)
{
    char line[256], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
            break;
        }
    if (f)
        fclose(f);
    printf("machine: %s; fast path %s; %u threads (OpenMP); OpenBLAS %s\n\n", model,
           a4w4_fast_isa_name(a4w4_fast_isa_resolve(A4W4_FAST_AUTO)), all, openblas_get_config());
}

int main(int argc, char **argv)
{
    static const bench_shape shapes[] = {{"normal", 256, 5120, 5120, 0},
                                         {"normal", 16, 34816, 5120, 0},
                                         {"wide", 256, 5120, 5120, 1}};
    size_t ndiv = 1;
    int reps = 5;
    unsigned all = a4w4_fast_max_threads();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            ndiv = 8;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            all = (unsigned)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_fast [--quick] [--reps R] [--threads T]\n");
            return 2;
        }
    }
    int openblas_default = openblas_get_num_threads(), rc = 0;
    print_machine(all);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        rc |= bench_one(&shapes[i], ndiv, reps, all);
    openblas_set_num_threads(openblas_default);
    return rc;
}
