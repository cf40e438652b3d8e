/* cmd_bench.c — `a4w4check bench`: throughput of the GEMM oracles (exact, ordered(1); contracts §4.1)
 * beside OpenBLAS sgemm on the same dequantized operands, and optionally of any backend of the
 * table, in one run on one machine. A benchmark, not a test: it checks nothing.
 *
 * Structure: a shape's operands are generated once (bench_shape); every method is a
 * bench_method {prepare, run, release} timed by the same loop (time_method: one warm-up, then
 * R timed repetitions, median and minimum of the wall clock). The fixed methods are the two
 * oracles and sgemm on OpenBLAS's default thread count and on one thread; `--backend LIST`
 * adds one method per backend instance (a4w4_backend_open), timed on the full output, so a GPU
 * backend type registered in registry.c is benchmarked the same way without touching this file.
 * A backend that wants device-only timing can add its own bench_method here. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT: the CPU count nproc reports */
#include <cblas.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_gemm.h"
#include "a4w4_quant.h"
#include "a4w4check.h"
#include "registry.h"
#include "casefile.h"
#include "gen.h"

#define DEFAULT_SHAPES "16,1024,5120;64,2048,2048;256,512,4096"
#define DEFAULT_REPS 3
#define MAX_SHAPES 64
#define MAX_BACKENDS 16
#define BENCH_SEED 1

static const char bench_usage[] =
    "usage: a4w4check bench [--shapes M,N,K;M,N,K...] [--reps R] [--regime REGIME]\n"
    "                       [--backend NAME[,NAME...]] [--backends-only]\n"
    "\n"
    "Throughput of the GEMM oracles beside OpenBLAS, per shape, in one run: the exact oracle\n"
    "(wide integer accumulator) and the ordered(1) oracle (contracts §4.1), both on one thread,\n"
    "and cblas_sgemm on the same operands dequantized to fp32 (dequantization not timed), on\n"
    "OpenBLAS's default thread count and on one thread. Each method: one warm-up run, then R\n"
    "timed repetitions; the wall clock (CLOCK_MONOTONIC) median and minimum are printed with\n"
    "G-MAC/s = M*N*K / median / 1e9. A machine line (CPUs, CPU model, OpenBLAS build and\n"
    "threads) comes first. Operands: a generated case per shape (seed 1).\n"
    "\n"
    "options:\n"
    "  --shapes LIST    ';'-separated M,N,K triples, K a multiple of 32\n"
    "                   (default " DEFAULT_SHAPES ")\n"
    "  --reps R         timed repetitions per method, 1..1000 (default 3)\n"
    "  --regime REGIME  input regime of the generated operands: exact, normal[:mode], wide\n"
    "                   (default normal)\n"
    "  --backends-only  time only the --backend methods (no oracles, no sgemm): for large\n"
    "                   GPU shapes\n"
    "  --backend LIST   also time these backends (as in run --backend, e.g. cpu-asm,\n"
    "                   cpu-fallback, plugin:./libmy.so) on the full output of each shape\n"
    "\n"
    "exit: 0 done, 2 bad usage or a shape that cannot be generated, 3 a GPU backend without GPU\n";

typedef struct {
    a4w4_case c;
    a4w4_sample s;
    a4w4_case_data d;
    float *A, *W, *C; /* dequantized [M, K], [N, K]; sgemm output [M, N] */
    uint16_t *y;      /* [M, N] bf16 output of the oracles and backends */
} bench_shape;

/* One timed thing. prepare (optional) runs once before the warm-up and may set *ctx;
 * run is one repetition (0 ok; A4W4_EUNSUPPORTED: n/a with why; else an error with why);
 * release (optional) undoes prepare. */
typedef struct {
    char name[96];
    int (*prepare)(bench_shape *b, void **ctx, const void *arg, char *why, size_t whylen);
    int (*run)(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen);
    void (*release)(void *ctx);
    const void *arg;
} bench_method;

typedef struct {
    double median_s, min_s;
    int status;
    char why[256];
} bench_result;

/* ---- the fixed methods ---------------------------------------------------------------- */

static int run_exact(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)arg, (void)why, (void)whylen;
    const a4w4_case_data *d = &b->d;
    return a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                           d->M, d->N, d->K, b->y, NULL);
}

static int run_ordered1(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)arg, (void)why, (void)whylen;
    const a4w4_case_data *d = &b->d;
    return a4w4_gemm_ordered(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                             d->M, d->N, d->K, 1, b->y, NULL);
}

/* sgemm with a thread count: arg points at an int (0 = OpenBLAS's default). */
static int prep_sgemm(bench_shape *b, void **ctx, const void *arg, char *why, size_t whylen)
{
    (void)b, (void)why, (void)whylen;
    int *saved = malloc(sizeof *saved);
    if (!saved)
        return A4W4_ENOMEM;
    *saved = openblas_get_num_threads();
    int want = *(const int *)arg;
    if (want > 0)
        openblas_set_num_threads(want);
    *ctx = saved;
    return A4W4_OK;
}

static int run_sgemm(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)arg, (void)why, (void)whylen;
    const a4w4_case_data *d = &b->d;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)d->M, (int)d->N, (int)d->K, 1.0f,
                b->A, (int)d->K, b->W, (int)d->K, 0.0f, b->C, (int)d->N);
    return A4W4_OK;
}

static void release_sgemm(void *ctx)
{
    if (ctx)
        openblas_set_num_threads(*(int *)ctx);
    free(ctx);
}

/* ---- backends of the table ------------------------------------------------------------ */

static int run_backend(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx;
    const a4w4_backend *be = arg;
    a4w4_run_args a = {&b->c, &b->d, &b->s, b->y, why, whylen};
    return be->type->run(be->ctx, &a);
}

/* ---- timing ----------------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One warm-up run, then reps timed runs; median and minimum wall clock into r. */
static void time_method(const bench_method *m, bench_shape *b, int reps, bench_result *r)
{
    memset(r, 0, sizeof *r);
    void *ctx = NULL;
    if (m->prepare && (r->status = m->prepare(b, &ctx, m->arg, r->why, sizeof r->why)))
        return;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) {
        r->status = A4W4_ENOMEM;
    } else if (!(r->status = m->run(b, ctx, m->arg, r->why, sizeof r->why))) {
        for (int i = 0; i < reps && !r->status; i++) {
            double t0 = a4w4_now();
            r->status = m->run(b, ctx, m->arg, r->why, sizeof r->why);
            t[i] = a4w4_now() - t0;
        }
        if (!r->status) {
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            r->median_s = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
            r->min_s = t[0];
        }
    }
    free(t);
    if (m->release)
        m->release(ctx);
}

/* ---- shapes ----------------------------------------------------------------------------- */

static void shape_free(bench_shape *b)
{
    a4w4_case_data_free(&b->d);
    a4w4_sample_free(&b->s);
    free(b->A);
    free(b->W);
    free(b->C);
    free(b->y);
    memset(b, 0, sizeof *b);
}

static int shape_make(bench_shape *b, const size_t mnk[3], a4w4_regime regime,
                      a4w4_scale_mode mode, const char *regime_text, int operands_only)
{
    memset(b, 0, sizeof *b);
    size_t M = mnk[0], N = mnk[1], K = mnk[2];
    snprintf(b->c.name, sizeof b->c.name, "bench_m%zu_n%zu_k%zu", M, N, K);
    b->c.M = M;
    b->c.N = N;
    b->c.K = K;
    b->c.regime = regime;
    b->c.mode = mode;
    snprintf(b->c.regime_text, sizeof b->c.regime_text, "%s", regime_text);
    b->c.seed = BENCH_SEED;
    if (a4w4_sample_make(M, N, K, BENCH_SEED, b->c.name, 1, &b->s) ||
        a4w4_case_generate(&b->c, &b->s, &b->d))
        return -1;
    b->y = malloc(M * N * sizeof *b->y);
    if (operands_only)
        return b->y ? 0 : -1;
    b->A = malloc(M * K * sizeof *b->A);
    b->W = malloc(N * K * sizeof *b->W);
    b->C = malloc(M * N * sizeof *b->C);
    if (!b->A || !b->W || !b->C || !b->y)
        return -1;
    if (a4w4_dequantize(b->d.a_fp4.data, b->d.a_scale.data, M, K, b->A) ||
        a4w4_dequantize(b->d.w_fp4.data, b->d.w_scale.data, N, K, b->W))
        return -1;
    return 0;
}

/* Parse "M,N,K;M,N,K..." into shapes (3 per shape). 0, or -1 with err. */
static int parse_shapes(const char *text, size_t (*shapes)[3], size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = text;
    for (size_t idx = 1;; idx++) {
        size_t len = strcspn(p, ";");
        char item[128];
        if (len == 0 || len >= sizeof item || *n == MAX_SHAPES) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu %s", text, idx,
                     *n == MAX_SHAPES ? "is one too many (at most 64)"
                                      : "is empty or too long (want M,N,K)");
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        size_t v[3];
        const char *q = item;
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++) {
            char *end = NULL;
            if (*q < '0' || *q > '9')
                ok = 0;
            unsigned long long x = ok ? strtoull(q, &end, 10) : 0;
            if (!ok || x == 0 || x > (1ull << 24) || *end != (i < 2 ? ',' : '\0'))
                ok = 0;
            else {
                v[i] = (size_t)x;
                q = end + 1;
            }
        }
        if (!ok) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s' is not M,N,K (three "
                     "integers in 1..16777216)", text, idx, item);
            return -1;
        }
        if (v[2] % 32) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s': K %zu is not a multiple "
                     "of 32", text, idx, item, v[2]);
            return -1;
        }
        /* every operand and output in fp32 stays below 2^34 bytes (16 GiB) */
        if ((double)v[0] * v[2] + (double)v[1] * v[2] + 2.0 * v[0] * v[1] > (double)(1ull << 32)) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s' is too large (M*K + N*K "
                     "+ 2*M*N must stay below 2^32 elements)", text, idx, item);
            return -1;
        }
        memcpy(shapes[(*n)++], v, sizeof v);
        p += len;
        if (!*p)
            return 0;
        p++;
    }
}

/* ---- machine line ----------------------------------------------------------------------- */

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10))
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, "\n");
        snprintf(buf, len, "%.*s", (int)n, v);
        break;
    }
    fclose(f);
}

static void machine_line(void)
{
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    char model[256];
    cpu_model(model, sizeof model);
    const char *cfg = openblas_get_config();
    printf("machine: %d CPUs usable (nproc), %ld online, %s; %s, %d threads by default\n",
           usable, online, model, cfg ? cfg : "OpenBLAS (no config string)",
           openblas_get_num_threads());
}

/* ---- the command ------------------------------------------------------------------------ */

static int parse_reps(const char *s, int *reps)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 1000) {
        a4w4_errorf("bench: --reps '%s' is not an integer in 1..1000", s);
        return -1;
    }
    *reps = (int)v;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(bench_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *shapes_text = DEFAULT_SHAPES, *regime_text = "normal", *backends = NULL;
    int reps = DEFAULT_REPS, backends_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--backends-only")) {
            backends_only = 1;
            continue;
        }
        int known = !strcmp(o, "--shapes") || !strcmp(o, "--reps") || !strcmp(o, "--regime") ||
                    !strcmp(o, "--backend");
        if (!known) {
            a4w4_errorf("bench: unknown argument '%s' (see 'a4w4check bench --help')", o);
            return A4W4_EXIT_BADINPUT;
        }
        if (i + 1 >= argc) {
            a4w4_errorf("bench: %s needs a value", o);
            return A4W4_EXIT_BADINPUT;
        }
        const char *v = argv[++i];
        if (!strcmp(o, "--shapes"))
            shapes_text = v;
        else if (!strcmp(o, "--regime"))
            regime_text = v;
        else if (!strcmp(o, "--backend"))
            backends = v;
        else if (parse_reps(v, &reps))
            return A4W4_EXIT_BADINPUT;
    }
    static size_t shapes[MAX_SHAPES][3];
    size_t nshapes = 0;
    char err[512];
    if (parse_shapes(shapes_text, shapes, &nshapes, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_regime regime;
    a4w4_scale_mode mode = A4W4_ROUND_UP;
    if (a4w4_regime_parse(regime_text, &regime, &mode) || regime == A4W4_REGIME_SPECIAL ||
        regime == A4W4_REGIME_CODE0) {
        a4w4_errorf("bench: --regime '%s' is not exact, normal, normal:<mode> or wide",
                    regime_text);
        return A4W4_EXIT_BADINPUT;
    }

    static const int default_threads = 0, one_thread = 1;
    bench_method methods[4 + MAX_BACKENDS] = {
        {"exact oracle (1 thread)", NULL, run_exact, NULL, NULL},
        {"ordered(1) oracle (1 thread)", NULL, run_ordered1, NULL, NULL},
        {"", prep_sgemm, run_sgemm, release_sgemm, &default_threads},
        {"OpenBLAS sgemm (1 thread)", prep_sgemm, run_sgemm, release_sgemm, &one_thread},
    };
    snprintf(methods[2].name, sizeof methods[2].name, "OpenBLAS sgemm (%d threads)",
             openblas_get_num_threads());
    size_t nmethods = 4;
    if (backends_only && !backends) {
        a4w4_errorf("bench: --backends-only needs --backend LIST");
        return A4W4_EXIT_BADINPUT;
    }

    a4w4_backend be[MAX_BACKENDS];
    size_t nbe = 0;
    int rc = A4W4_EXIT_PASS;
    if (backends) {
        char list[1024];
        if (snprintf(list, sizeof list, "%s", backends) >= (int)sizeof list) {
            a4w4_errorf("bench: --backend list is longer than 1023 characters");
            return A4W4_EXIT_BADINPUT;
        }
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            if (nbe == MAX_BACKENDS) {
                a4w4_errorf("bench: --backend names more than %d backends", MAX_BACKENDS);
                rc = A4W4_EXIT_BADINPUT;
                break;
            }
            int orc = a4w4_backend_open(tok, &be[nbe], err, sizeof err);
            if (orc) {
                a4w4_errorf("bench: %s", err);
                rc = a4w4_exit_code(orc);
                break;
            }
            bench_method *m = &methods[nmethods++];
            memset(m, 0, sizeof *m);
            snprintf(m->name, sizeof m->name, "backend %s [%s]", be[nbe].name, be[nbe].contract);
            m->run = run_backend;
            m->arg = &be[nbe];
            nbe++;
        }
    }

    double copy_gbs = 0;
#ifdef A4W4_HAVE_GPU
    for (size_t i = 0; i < nbe && rc == A4W4_EXIT_PASS; i++)
        if (be[i].type->gpu && copy_gbs == 0)
            copy_gbs = a4w4_hip_copy_bandwidth_gbs(reps < 5 ? 5 : reps);
#endif
    if (rc == A4W4_EXIT_PASS) {
        machine_line();
        if (copy_gbs > 0)
            printf("device copy bandwidth (d2d, 1 GiB, read + write, median): %.1f GB/s; GPU "
                   "backends are timed with device events around each launch, operands "
                   "resident\n", copy_gbs);
        printf("timing: median (and min) wall clock, CLOCK_MONOTONIC, of %d timed repetitions "
               "after 1 warm-up, every method in this run on the same operands (regime %s, seed "
               "%d); G-MAC/s = M*N*K / median / 1e9\n\n",
               reps, regime_text, BENCH_SEED);
        printf("%-20s %-44s %12s %12s %10s\n", "shape MxNxK", "method", "median ms", "min ms",
               "G-MAC/s");
        fflush(stdout);
    }
    for (size_t si = 0; si < nshapes && rc == A4W4_EXIT_PASS; si++) {
        bench_shape b;
        char shape[64];
        snprintf(shape, sizeof shape, "%zux%zux%zu", shapes[si][0], shapes[si][1], shapes[si][2]);
        if (shape_make(&b, shapes[si], regime, mode, regime_text, backends_only)) {
            a4w4_errorf("bench: shape %s: cannot generate the operands (out of memory)", shape);
            shape_free(&b);
            rc = A4W4_EXIT_BADINPUT;
            break;
        }
        double macs = (double)shapes[si][0] * shapes[si][1] * shapes[si][2];
        for (size_t mi = backends_only ? 4 : 0; mi < nmethods; mi++) {
            bench_result r;
            const a4w4_backend *bk = mi >= 4 ? methods[mi].arg : NULL;
            if (bk && bk->type->bench) { /* device-event timing, operands resident */
                double med = 0, mn = 0, bytes = 0;
                char why[256] = "";
                int st = bk->type->bench(bk->ctx, &b.d, reps, &med, &mn, &bytes, why, sizeof why);
                const char *label = mi == (backends_only ? 4u : 0u) ? shape : "";
                if (st == A4W4_OK)
                    printf("%-20s %-44s %12.3f %12.3f %10.3f  %8.2f TFLOP/s %8.1f GB/s%s\n",
                           label, methods[mi].name, med, mn, macs / (med * 1e-3) / 1e9,
                           2.0 * macs / (med * 1e-3) / 1e12, bytes / (med * 1e-3) / 1e9,
                           copy_gbs > 0 ? "" : "");
                else
                    printf("%-20s %-44s %s: %s\n", label, methods[mi].name,
                           st == A4W4_EUNSUPPORTED ? "n/a" : "error", why);
                if (st == A4W4_OK && copy_gbs > 0)
                    printf("%-20s %-44s %38s %5.1f%% of the copy bandwidth\n", "", "", "",
                           100.0 * bytes / (med * 1e-3) / 1e9 / copy_gbs);
                fflush(stdout);
                continue;
            }
            time_method(&methods[mi], &b, reps, &r);
            const char *label = mi == (backends_only ? 4u : 0u) ? shape : "";
            if (r.status == A4W4_OK)
                printf("%-20s %-44s %12.3f %12.3f %10.3f\n", label, methods[mi].name,
                       r.median_s * 1e3, r.min_s * 1e3, macs / r.median_s / 1e9);
            else
                printf("%-20s %-44s %s: %s\n", label, methods[mi].name,
                       r.status == A4W4_EUNSUPPORTED ? "n/a" : "error",
                       *r.why ? r.why : a4w4_status_str(r.status));
            fflush(stdout);
        }
        shape_free(&b);
    }
    for (size_t i = 0; i < nbe; i++)
        a4w4_backend_close(&be[i]);
    return rc;
}
