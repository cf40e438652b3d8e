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
#include "backend_list.h"
#include "options.h"
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
    "options:\n";

typedef struct {
    const char *shapes, *regime;
    int reps, backends_only;
    a4w4_opt_list backend;
} bench_opts;

static const a4w4_option bench_options[] = {
    OPT_STRING("shapes", bench_opts, shapes, "LIST",
               "';'-separated M,N,K triples, K a multiple of 32\n"
               "(default " DEFAULT_SHAPES ")"),
    OPT_INT("reps", bench_opts, reps, "R", 1, 1000,
            "timed repetitions per method, 1..1000 (default 3)"),
    OPT_STRING("regime", bench_opts, regime, "REGIME",
               "input regime of the generated operands: exact, normal[:mode], wide\n"
               "(default normal)"),
    OPT_FLAG("backends-only", bench_opts, backends_only,
             "time only the --backend methods (no oracles, no sgemm): for large\n"
             "GPU shapes"),
    OPT_LIST("backend", bench_opts, backend, "LIST",
             "also time these backends (as in run --backend, e.g. cpu-asm,\n"
             "cpu-fallback, plugin:./libmy.so) on the full output of each shape"),
    OPT_END(),
};

static const a4w4_command_spec bench_spec = {
    "bench", bench_usage, bench_options, NULL,
    "exit: 0 done, 2 bad usage or a shape that cannot be generated, 3 a GPU backend without GPU\n"};

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
    char name[sizeof "backend  []" + sizeof ((a4w4_backend *)0)->name +
              sizeof ((a4w4_backend *)0)->contract]; /* "backend NAME [CONTRACT]" whole */
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
    a4w4_run_args a = {&b->c, &b->d, &b->s, b->y, why, whylen, NULL};
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

/* What a bench run times: the shapes, the operands' regime, the methods (the four fixed
 * ones, then one per --backend instance). */
typedef struct {
    size_t shapes[MAX_SHAPES][3];
    size_t nshapes;
    a4w4_regime regime;
    a4w4_scale_mode mode;
    bench_method methods[4 + MAX_BACKENDS];
    size_t nmethods;
    a4w4_backend be[MAX_BACKENDS];
    size_t nbe;
    double copy_gbs;
} bench_plan;

/* Shapes, regime, the fixed methods, the backends and their methods. Returns the exit code. */
static int plan_bench(const bench_opts *o, bench_plan *p)
{
    static const int default_threads = 0, one_thread = 1;
    char err[512];
    if (parse_shapes(o->shapes, p->shapes, &p->nshapes, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    p->mode = A4W4_ROUND_UP;
    if (a4w4_regime_parse(o->regime, &p->regime, &p->mode) || p->regime == A4W4_REGIME_SPECIAL ||
        p->regime == A4W4_REGIME_CODE0) {
        a4w4_errorf("bench: --regime '%s' is not exact, normal, normal:<mode> or wide", o->regime);
        return A4W4_EXIT_BADINPUT;
    }
    const bench_method fixed[4] = {
        {"exact oracle (1 thread)", NULL, run_exact, NULL, NULL},
        {"ordered(1) oracle (1 thread)", NULL, run_ordered1, NULL, NULL},
        {"", prep_sgemm, run_sgemm, release_sgemm, &default_threads},
        {"OpenBLAS sgemm (1 thread)", prep_sgemm, run_sgemm, release_sgemm, &one_thread},
    };
    memcpy(p->methods, fixed, sizeof fixed);
    snprintf(p->methods[2].name, sizeof p->methods[2].name, "OpenBLAS sgemm (%d threads)",
             openblas_get_num_threads());
    p->nmethods = 4;
    if (o->backends_only && !o->backend.text) {
        a4w4_errorf("bench: --backends-only needs --backend LIST");
        return A4W4_EXIT_BADINPUT;
    }
    if (!o->backend.text)
        return A4W4_EXIT_PASS;
    a4w4_backend_list_opts bo = {"bench", MAX_BACKENDS, 0, 0};
    int rc = a4w4_backend_list_open(&bo, &o->backend, p->be, &p->nbe);
    for (size_t i = 0; i < p->nbe; i++) {
        bench_method *m = &p->methods[p->nmethods++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "backend %s [%s]", p->be[i].name, p->be[i].contract);
        m->run = run_backend;
        m->arg = &p->be[i];
    }
    return rc;
}

/* The machine line, the copy bandwidth of a GPU backend, the timing note, the column heads. */
static void print_preamble(const bench_opts *o, bench_plan *p)
{
#ifdef A4W4_HAVE_GPU
    for (size_t i = 0; i < p->nbe; i++)
        if (p->be[i].type->gpu && p->copy_gbs == 0)
            p->copy_gbs = a4w4_hip_copy_bandwidth_gbs(o->reps < 5 ? 5 : o->reps);
#endif
    machine_line();
    if (p->copy_gbs > 0)
        printf("device copy bandwidth (d2d, 1 GiB, read + write, median): %.1f GB/s; GPU "
               "backends are timed with device events around each launch, operands "
               "resident\n", p->copy_gbs);
    printf("timing: median (and min) wall clock, CLOCK_MONOTONIC, of %d timed repetitions "
           "after 1 warm-up, every method in this run on the same operands (regime %s, seed "
           "%d); G-MAC/s = M*N*K / median / 1e9\n\n",
           o->reps, o->regime, BENCH_SEED);
    printf("%-20s %-44s %12s %12s %10s\n", "shape MxNxK", "method", "median ms", "min ms",
           "G-MAC/s");
    fflush(stdout);
}

/* A backend's own device-event timing of shape b: one line (and the share of the copy
 * bandwidth on a GPU). */
static void print_device_bench(const bench_plan *p, const bench_method *m, bench_shape *b,
                               int reps, const char *label, double macs)
{
    const a4w4_backend *bk = m->arg;
    double med = 0, mn = 0, bytes = 0;
    char why[256] = "";
    int st = bk->type->bench(bk->ctx, &b->d, reps, &med, &mn, &bytes, why, sizeof why);
    if (st == A4W4_OK)
        printf("%-20s %-44s %12.3f %12.3f %10.3f  %8.2f TFLOP/s %8.1f GB/s%s\n", label, m->name,
               med, mn, macs / (med * 1e-3) / 1e9, 2.0 * macs / (med * 1e-3) / 1e12,
               bytes / (med * 1e-3) / 1e9, p->copy_gbs > 0 ? "" : "");
    else
        printf("%-20s %-44s %s: %s\n", label, m->name, st == A4W4_EUNSUPPORTED ? "n/a" : "error",
               why);
    if (st == A4W4_OK && p->copy_gbs > 0)
        printf("%-20s %-44s %38s %5.1f%% of the copy bandwidth\n", "", "", "",
               100.0 * bytes / (med * 1e-3) / 1e9 / p->copy_gbs);
    fflush(stdout);
}

/* Time every method on shape si, one line each. Returns the exit code. */
static int bench_shape_rows(const bench_opts *o, const bench_plan *p, size_t si)
{
    bench_shape b;
    char shape[64];
    const size_t *mnk = p->shapes[si];
    snprintf(shape, sizeof shape, "%zux%zux%zu", mnk[0], mnk[1], mnk[2]);
    if (shape_make(&b, mnk, p->regime, p->mode, o->regime, o->backends_only)) {
        a4w4_errorf("bench: shape %s: cannot generate the operands (out of memory)", shape);
        shape_free(&b);
        return A4W4_EXIT_BADINPUT;
    }
    double macs = (double)mnk[0] * mnk[1] * mnk[2];
    size_t first = o->backends_only ? 4 : 0;
    for (size_t mi = first; mi < p->nmethods; mi++) {
        const bench_method *m = &p->methods[mi];
        const a4w4_backend *bk = mi >= 4 ? m->arg : NULL;
        const char *label = mi == first ? shape : "";
        if (bk && bk->type->bench) { /* device-event timing, operands resident */
            print_device_bench(p, m, &b, o->reps, label, macs);
            continue;
        }
        bench_result r;
        time_method(m, &b, o->reps, &r);
        if (r.status == A4W4_OK)
            printf("%-20s %-44s %12.3f %12.3f %10.3f\n", label, m->name, r.median_s * 1e3,
                   r.min_s * 1e3, macs / r.median_s / 1e9);
        else
            printf("%-20s %-44s %s: %s\n", label, m->name,
                   r.status == A4W4_EUNSUPPORTED ? "n/a" : "error",
                   *r.why ? r.why : a4w4_status_str(r.status));
        fflush(stdout);
    }
    shape_free(&b);
    return A4W4_EXIT_PASS;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {DEFAULT_SHAPES, "normal", DEFAULT_REPS, 0, {0}};
    a4w4_args args;
    int rc = a4w4_options_parse(&bench_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    bench_plan p;
    memset(&p, 0, sizeof p);
    rc = plan_bench(&o, &p);
    if (rc == A4W4_EXIT_PASS)
        print_preamble(&o, &p);
    for (size_t si = 0; si < p.nshapes && rc == A4W4_EXIT_PASS; si++)
        rc = bench_shape_rows(&o, &p, si);
    a4w4_backend_list_close(p.be, p.nbe);
    return rc;
}
