/* cmd_bench.c — `a4w4check bench`: throughput of the GEMM oracles (exact, ordered(1); contracts
 * §4.1), plain and fast, beside OpenBLAS sgemm on the same dequantized operands and the CPU
 * systems under test (or any backends of the table), in one run on one machine. A benchmark,
 * not a test: it checks nothing.
 *
 * Structure: a shape's operands are generated once (bench_shape); every method is a
 * bench_method {prepare, run, release} timed by the same loop (time_method: one warm-up, then
 * R timed repetitions, median and minimum of the wall clock). The fixed methods are the plain
 * exact oracle, the fast exact oracle on one thread and on all, the fast ordered(1) oracle on
 * one thread, and sgemm on OpenBLAS's default thread count and on one thread; then one method
 * per backend instance (a4w4_backend_open; default cpu-asm and cpu-fallback), so a GPU backend
 * type registered in registry.c is benchmarked the same way without touching this file. The
 * slow methods (the plain oracle, CPU backends) run on the first rows only when the shape is
 * large (rate from those rows, times scaled to the whole shape, marked). A line of ratios per
 * shape ends it. A backend that wants device-only timing provides the type's bench hook.
 * Each --tree contract (contracts §4.2) adds the fast tree oracle on one thread and the plain
 * tree oracle on one thread (on the first rows: about TREE_PLAIN_LEAVES leaves of outputs),
 * and a line with their ratio. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT: the CPU count nproc reports */
#include <cblas.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_quant.h"
#include "a4w4_tree.h"
#include "a4w4check.h"
#include "backend_list.h"
#include "options.h"
#include "registry.h"
#include "casefile.h"
#include "fsutil.h"
#include "gen.h"

#define DEFAULT_SHAPES "256,5120,5120;16,34816,5120;256,5120,5120:wide"
#define DEFAULT_BACKENDS "cpu-asm,cpu-fallback"
#define DEFAULT_REPS 3
#define MAX_SHAPES 64
#define MAX_BACKENDS 16
#define BENCH_SEED 1
/* The slow methods run on the first rows of A only when the shape has more MACs than this
 * (about 0.3 s of the plain oracle on one core). */
#define SLOW_MACS (1ull << 29)
/* Tree contracts a run times (--tree), and the leaves (outputs times K / leaf) the plain tree
 * oracle runs on at most (about 1 us a leaf: some seconds). */
#define MAX_TREES 8
#define TREE_PLAIN_LEAVES (1ull << 22)

static const char bench_usage[] =
    "usage: a4w4check bench [--shapes M,N,K[:REGIME];...] [--reps R] [--regime REGIME]\n"
    "                       [--backend NAME[,NAME...]] [--backends-only]\n"
    "\n"
    "Throughput of the GEMM oracles beside OpenBLAS and the CPU systems under test, per shape,\n"
    "in one run on the same operands: the plain exact oracle (wide integer accumulator, one\n"
    "thread), the fast exact oracle (ref/a4w4_gemm_fast.h) on one thread and on all, the fast\n"
    "ordered(1) oracle on one thread (contracts §4.1), cblas_sgemm on the operands dequantized\n"
    "to fp32 (dequantization not timed) on OpenBLAS's default thread count and on one thread,\n"
    "then each backend (default cpu-asm and cpu-fallback) on the full output. Shapes above\n"
    "2^29 MACs time the plain oracle and CPU backends on their first rows only (marked '*':\n"
    "the rate is theirs, the times are scaled to the whole shape). Each method: one warm-up\n"
    "run, then R timed repetitions; the wall clock (CLOCK_MONOTONIC) median and minimum are\n"
    "printed with G-MAC/s = M*N*K / median / 1e9, then a line of ratios (fast exact / sgemm\n"
    "on one thread each, fast exact all threads / one) and the instruction-set path. A machine\n"
    "line (CPUs, CPU model, OpenBLAS build and threads) comes first. Operands: a generated\n"
    "case per shape (seed 1). Each --tree TEXT (a tree contract, contracts §4.2) adds the fast\n"
    "tree oracle and the plain tree oracle (about 2^22 leaves of outputs: its first rows), one\n"
    "thread each, and their ratio.\n"
    "\n"
    "options:\n";

typedef struct {
    const char *shapes, *regime;
    int reps, backends_only;
    a4w4_opt_list backend;
    a4w4_opt_strings tree;
} bench_opts;

static const a4w4_option bench_options[] = {
    OPT_STRING("shapes", bench_opts, shapes, "LIST",
               "';'-separated M,N,K triples, K a multiple of 32, each with an optional\n"
               ":REGIME (default " DEFAULT_SHAPES ")"),
    OPT_INT("reps", bench_opts, reps, "R", 1, 1000,
            "timed repetitions per method, 1..1000 (default 3)"),
    OPT_STRING("regime", bench_opts, regime, "REGIME",
               "input regime of shapes without their own: exact, normal[:mode], wide\n"
               "(default normal)"),
    OPT_FLAG("backends-only", bench_opts, backends_only,
             "time only the --backend methods (no oracles, no sgemm): for large\n"
             "GPU shapes"),
    OPT_LIST("backend", bench_opts, backend, "LIST",
             "time these backends (as in run --backend, e.g. cpu-asm,\n"
             "cpu-fallback, plugin:./libmy.so) on the full output of each shape\n"
             "(default " DEFAULT_BACKENDS ")"),
    OPT_STRINGS("tree", bench_opts, tree, "TEXT",
                "also time the fast and the plain oracle of this tree contract\n"
                "(e.g. 'tree(leaf=1,fuse=16,prec=26,round=rz)'); repeatable, at most 8"),
    OPT_END(),
};

static const a4w4_command_spec bench_spec = {
    "bench", bench_usage, bench_options, NULL,
    "exit: 0 done, 2 bad usage or a shape that cannot be generated, 3 a GPU backend without GPU\n"};

/* One shape of the run: its size and its operands' regime. */
typedef struct {
    size_t mnk[3];
    a4w4_regime regime;
    a4w4_scale_mode mode;
    char regime_text[32];
} shape_spec;

typedef struct {
    a4w4_case c;
    a4w4_sample s;    /* every output */
    a4w4_sample sub;  /* the first sub_rows rows, every column (the slow methods') */
    size_t sub_rows;
    a4w4_case_data d;
    float *A, *W, *C; /* dequantized [M, K], [N, K]; sgemm output [M, N] */
    uint16_t *y;      /* [M, N] bf16 output of the oracles and backends */
    a4w4_fast_stats st; /* of the last fast-oracle run */
} bench_shape;

/* One timed thing. prepare (optional) runs once before the warm-up and may set *ctx;
 * run is one repetition (0 ok; A4W4_EUNSUPPORTED: n/a with why; else an error with why);
 * release (optional) undoes prepare. slow: on a large shape, timed on the first rows. */
typedef struct {
    char name[sizeof "backend  []" + sizeof ((a4w4_backend *)0)->name +
              sizeof ((a4w4_backend *)0)->contract]; /* "backend NAME [CONTRACT]" whole */
    int (*prepare)(bench_shape *b, void **ctx, const void *arg, char *why, size_t whylen);
    int (*run)(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen);
    void (*release)(void *ctx);
    const void *arg;
    int slow;
} bench_method;

typedef struct {
    double median_s, min_s;
    int status;
    char why[256];
} bench_result;

/* ---- the fixed methods ---------------------------------------------------------------- */

enum { M_PLAIN, M_FAST1, M_FASTN, M_ORDERED1, M_SGEMMN, M_SGEMM1, NFIXED };

static int run_exact(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)arg, (void)why, (void)whylen;
    const a4w4_case_data *d = &b->d;
    return a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                           b->sub_rows, d->N, d->K, b->y, NULL);
}

/* A fast oracle: arg points at {ordered, threads} (threads 0: all). */
typedef struct {
    int ordered;
    unsigned threads;
} fast_arg;

static int run_fast(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)why, (void)whylen;
    const fast_arg *f = arg;
    const a4w4_case_data *d = &b->d;
    if (f->ordered)
        return a4w4_gemm_ordered_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                         d->w_scale.data, d->M, d->N, d->K, 1, b->y, NULL,
                                         f->threads, A4W4_FAST_AUTO, &b->st);
    return a4w4_gemm_exact_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                   d->w_scale.data, d->M, d->N, d->K, b->y, NULL, f->threads,
                                   A4W4_FAST_AUTO, &b->st);
}

/* A tree oracle, one thread: the fast path on every output, or the plain oracle on the first
 * tree_rows rows. */
typedef struct {
    a4w4_tree t;
    int plain;
} tree_arg;

/* The rows the plain tree oracle runs on: about TREE_PLAIN_LEAVES leaves, at least 1. */
static size_t tree_rows(const bench_shape *b, const a4w4_tree *t)
{
    double per_row = (double)b->c.N * (double)b->c.K / t->leaf;
    size_t rows = (size_t)((double)TREE_PLAIN_LEAVES / per_row);
    return rows < 1 ? 1 : rows > b->c.M ? b->c.M : rows;
}

static int run_tree(bench_shape *b, void *ctx, const void *arg, char *why, size_t whylen)
{
    (void)ctx, (void)why, (void)whylen;
    const tree_arg *ta = arg;
    const a4w4_case_data *d = &b->d;
    if (ta->plain)
        return a4w4_gemm_tree(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                              tree_rows(b, &ta->t), d->N, d->K, &ta->t, b->y, NULL);
    return a4w4_gemm_tree_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                  d->w_scale.data, d->M, d->N, d->K, &ta->t, b->y, NULL, 1,
                                  A4W4_FAST_AUTO, &b->st);
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
    if (!be->type->run) {
        snprintf(why, whylen, "no GEMM to time (a %s backend)",
                 be->type->layouts ? "layout" : "quantizer");
        return A4W4_EUNSUPPORTED;
    }
    const a4w4_sample *s = b->sub_rows < b->d.M && !be->type->gpu ? &b->sub : &b->s;
    a4w4_run_args a = {.c = &b->c, .d = &b->d, .s = s, .y = b->y, .why = why, .whylen = whylen};
    return be->type->run(be->ctx, &a);
}

/* Methods that run on the first rows of a large shape: the plain oracle, CPU backends. */
static int runs_on_rows(const bench_method *m)
{
    const a4w4_backend *be = m->run == run_backend ? m->arg : NULL;
    return m->slow || (be && !be->type->gpu);
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
    a4w4_sample_free(&b->sub);
    free(b->A);
    free(b->W);
    free(b->C);
    free(b->y);
    memset(b, 0, sizeof *b);
}

/* The first sub_rows rows (at least 1, all when the shape is at most SLOW_MACS), every
 * column, as an explicit sample. 0 or -1 (out of memory). */
static int sub_sample(bench_shape *b)
{
    size_t M = b->c.M, N = b->c.N, K = b->c.K;
    double nk = (double)N * (double)K;
    b->sub_rows = (double)M * nk <= (double)SLOW_MACS ? M : (size_t)((double)SLOW_MACS / nk);
    if (b->sub_rows < 1)
        b->sub_rows = 1;
    b->sub.rows = malloc(b->sub_rows * sizeof *b->sub.rows);
    b->sub.cols = malloc(N * sizeof *b->sub.cols);
    if (!b->sub.rows || !b->sub.cols)
        return -1;
    for (size_t i = 0; i < b->sub_rows; i++)
        b->sub.rows[i] = i;
    for (size_t j = 0; j < N; j++)
        b->sub.cols[j] = j;
    b->sub.nrows = b->sub_rows;
    b->sub.ncols = N;
    b->sub.full = b->sub_rows == M;
    return 0;
}

static int shape_make(bench_shape *b, const shape_spec *sp, int operands_only)
{
    memset(b, 0, sizeof *b);
    size_t M = sp->mnk[0], N = sp->mnk[1], K = sp->mnk[2];
    snprintf(b->c.name, sizeof b->c.name, "bench_m%zu_n%zu_k%zu", M, N, K);
    b->c.M = M;
    b->c.N = N;
    b->c.K = K;
    b->c.regime = sp->regime;
    b->c.mode = sp->mode;
    snprintf(b->c.regime_text, sizeof b->c.regime_text, "%s", sp->regime_text);
    b->c.seed = BENCH_SEED;
    if (a4w4_sample_make(M, N, K, BENCH_SEED, b->c.name, 1, &b->s) ||
        a4w4_case_generate(&b->c, &b->s, &b->d) || sub_sample(b))
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

/* Parse one "M,N,K[:REGIME]" into sp (REGIME default: dflt). 0, or -1 with err. */
static int parse_shape(const char *text, size_t idx, const char *item, const char *dflt,
                       shape_spec *sp, char *err, size_t errlen)
{
    const char *q = item;
    for (int i = 0; i < 3; i++) {
        size_t L = strcspn(q, i < 2 ? "," : ":");
        long long x;
        if ((i < 2 && q[L] != ',') || a4w4_parse_int(q, L, 1, 1ll << 24, &x)) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s' is not M,N,K[:REGIME] "
                     "(three integers in 1..16777216)", text, idx, item);
            return -1;
        }
        sp->mnk[i] = (size_t)x;
        q += L + (q[L] != '\0');
    }
    const char *regime = q[-1] == ':' ? q : dflt;
    snprintf(sp->regime_text, sizeof sp->regime_text, "%s", regime);
    sp->mode = A4W4_ROUND_UP;
    if (a4w4_regime_parse(regime, &sp->regime, &sp->mode) || sp->regime == A4W4_REGIME_SPECIAL ||
        sp->regime == A4W4_REGIME_CODE0) {
        snprintf(err, errlen, "bench: regime '%s' is not exact, normal, normal:<mode> or wide",
                 regime);
        return -1;
    }
    if (sp->mnk[2] % 32) {
        snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s': K %zu is not a multiple "
                 "of 32", text, idx, item, sp->mnk[2]);
        return -1;
    }
    /* every operand and output in fp32 stays below 2^34 bytes (16 GiB) */
    const size_t *v = sp->mnk;
    if ((double)v[0] * v[2] + (double)v[1] * v[2] + 2.0 * v[0] * v[1] > (double)(1ull << 32)) {
        snprintf(err, errlen, "bench: --shapes '%s': shape %zu '%s' is too large (M*K + N*K "
                 "+ 2*M*N must stay below 2^32 elements)", text, idx, item);
        return -1;
    }
    return 0;
}

/* Parse "M,N,K[:REGIME];..." into shapes. 0, or -1 with err. */
static int parse_shapes(const char *text, const char *dflt, shape_spec *shapes, size_t *n,
                        char *err, size_t errlen)
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
        if (parse_shape(text, idx, item, dflt, &shapes[*n], err, errlen))
            return -1;
        (*n)++;
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
    int not_regular;
    char err[64];
    FILE *f = a4w4_fopen_regular("/proc/cpuinfo", &not_regular, err, sizeof err);
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

/* What a bench run times: the shapes, the methods (the fixed ones, then one per backend
 * instance). */
typedef struct {
    shape_spec shapes[MAX_SHAPES];
    size_t nshapes;
    bench_method methods[NFIXED + MAX_BACKENDS + 2 * MAX_TREES];
    size_t nmethods, ntrees; /* the tree methods follow the others, fast then plain */
    tree_arg trees[2 * MAX_TREES];
    a4w4_backend be[MAX_BACKENDS];
    size_t nbe;
    double copy_gbs;
} bench_plan;

/* The fixed methods into p->methods[0..NFIXED). */
static void fixed_methods(bench_plan *p)
{
    static const int default_threads = 0, one_thread = 1;
    static const fast_arg exact1 = {0, 1}, exactn = {0, 0}, ordered1 = {1, 1};
    const bench_method fixed[NFIXED] = {
        {"plain exact oracle (1 thread)", NULL, run_exact, NULL, NULL, 1},
        {"fast exact oracle (1 thread)", NULL, run_fast, NULL, &exact1, 0},
        {"", NULL, run_fast, NULL, &exactn, 0},
        {"fast ordered(1) oracle (1 thread)", NULL, run_fast, NULL, &ordered1, 0},
        {"", prep_sgemm, run_sgemm, release_sgemm, &default_threads, 0},
        {"OpenBLAS sgemm (1 thread)", prep_sgemm, run_sgemm, release_sgemm, &one_thread, 0},
    };
    memcpy(p->methods, fixed, sizeof fixed);
    snprintf(p->methods[M_FASTN].name, sizeof p->methods[M_FASTN].name,
             "fast exact oracle (%u threads)", a4w4_fast_max_threads());
    snprintf(p->methods[M_SGEMMN].name, sizeof p->methods[M_SGEMMN].name,
             "OpenBLAS sgemm (%d threads)", openblas_get_num_threads());
    p->nmethods = NFIXED;
}

/* The --tree contracts into p->trees (fast, plain per contract); 1 on a refused text. */
static int plan_trees(const bench_opts *o, bench_plan *p)
{
    for (size_t i = 0; i < o->tree.n; i++) {
        a4w4_contract c;
        char err[512] = "";
        if (a4w4_contract_parse(o->tree.v[i], &c, err, sizeof err) == A4W4_OK &&
            c.kind != A4W4_CONTRACT_TREE)
            snprintf(err, sizeof err, "not a tree contract");
        if (*err) {
            a4w4_errorf("bench: --tree '%s': %s", o->tree.v[i], err);
            return 1;
        }
        for (int plain = 0; plain < 2; plain++)
            p->trees[2 * i + plain] = (tree_arg){c.tree, plain};
    }
    p->ntrees = o->tree.n;
    return 0;
}

/* The tree methods (after the backends'): names carry the canonical contract text. */
static void tree_methods(bench_plan *p)
{
    for (size_t i = 0; i < 2 * p->ntrees; i++) {
        bench_method *m = &p->methods[p->nmethods++];
        a4w4_contract c = {A4W4_CONTRACT_TREE, 1, p->trees[i].t};
        char text[A4W4_CONTRACT_MAX];
        a4w4_contract_format(&c, text, sizeof text);
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s tree oracle (1 thread) %s",
                 p->trees[i].plain ? "plain" : "fast", text);
        m->run = run_tree;
        m->arg = &p->trees[i];
        m->slow = p->trees[i].plain;
    }
}

/* Shapes, the fixed methods, the backends and their methods. Returns the exit code. */
static int plan_bench(const bench_opts *o, bench_plan *p)
{
    char err[512];
    a4w4_regime r;
    a4w4_scale_mode mode;
    if (a4w4_regime_parse(o->regime, &r, &mode) || r == A4W4_REGIME_SPECIAL ||
        r == A4W4_REGIME_CODE0) {
        a4w4_errorf("bench: --regime '%s' is not exact, normal, normal:<mode> or wide", o->regime);
        return A4W4_EXIT_BADINPUT;
    }
    if (parse_shapes(o->shapes, o->regime, p->shapes, &p->nshapes, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    fixed_methods(p);
    if (plan_trees(o, p))
        return A4W4_EXIT_BADINPUT;
    if (o->backends_only && !o->backend.text) {
        a4w4_errorf("bench: --backends-only needs --backend LIST");
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_opt_list dflt = {0};
    if (!o->backend.text && a4w4_opt_list_split(DEFAULT_BACKENDS, &dflt, err, sizeof err)) {
        a4w4_errorf("bench: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_backend_list_opts bo = {"bench", MAX_BACKENDS, 0, 0};
    a4w4_plugin_isolation(0, 0); /* bench times the kernel, not a fork per call; judging is run's */
    int rc = a4w4_backend_list_open(&bo, o->backend.text ? &o->backend : &dflt, p->be, &p->nbe);
    for (size_t i = 0; i < p->nbe; i++) {
        bench_method *m = &p->methods[p->nmethods++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "backend %s [%s]", p->be[i].name, p->be[i].contract);
        m->run = run_backend;
        m->arg = &p->be[i];
    }
    tree_methods(p);
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
    if (!o->backends_only)
        printf("fast oracles: path %s (the best this build and CPU run), %u threads at most\n",
               a4w4_fast_isa_name(a4w4_fast_isa_resolve(A4W4_FAST_AUTO)),
               a4w4_fast_max_threads());
    if (p->copy_gbs > 0)
        printf("device copy bandwidth (d2d, 1 GiB, read + write, median): %.1f GB/s; GPU "
               "backends are timed with device events around each launch, operands "
               "resident\n", p->copy_gbs);
    printf("timing: median (and min) wall clock, CLOCK_MONOTONIC, of %d timed repetitions "
           "after 1 warm-up, every method in this run on the same operands (regime per shape, "
           "seed %d); G-MAC/s = M*N*K / median / 1e9; '*': timed on the first rows only (rate "
           "from those rows, times scaled to the whole shape)\n\n",
           o->reps, BENCH_SEED);
    printf("%-20s %-44s %12s %12s %10s\n", "shape MxNxK", "method", "median ms", "min ms",
           "G-MAC/s");
    fflush(stdout);
}

/* A backend's own device-event timing of shape b: one line (and the share of the copy
 * bandwidth on a GPU). Returns its rate in G-MAC/s (0 when it did not run). */
static double print_device_bench(const bench_plan *p, const bench_method *m, bench_shape *b,
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
    return st == A4W4_OK && med > 0 ? macs / (med * 1e-3) / 1e9 : 0;
}

/* The GPU rows beside the GPU backends' own (GPU builds): the GPU judge's passes on the same
 * operands (device-resident, wall clock around each synchronised call) and cuBLAS's bf16 GEMM
 * of the same shape (NVIDIA), then each GPU backend's rate over cuBLAS's. */
static void print_gpu_rows(const bench_plan *p, bench_shape *b, int reps, const double *brate,
                           double macs)
{
#ifdef A4W4_HAVE_GPU
    char why[256];
    double o1 = 0, ex = 0, all = 0, blas = 0;
    if (!a4w4_hip_bench_judge(&b->d, 4, reps, &o1, &ex, &all, why, sizeof why)) {
        const char *names[3] = {"GPU judge: ordered(1) + ordered(4) pass",
                                "GPU judge: ordered(1) + exact + prover",
                                "GPU judge: all (+ ordered(4), bounded(4))"};
        const double t[3] = {o1, ex, all};
        for (int i = 0; i < 3; i++)
            printf("%-20s %-44s %12.3f %12s %10.3f  %8.2f T-MAC/s\n", "", names[i], t[i], "",
                   macs / (t[i] * 1e-3) / 1e9, macs / (t[i] * 1e-3) / 1e12);
    } else {
        printf("%-20s %-44s error: %s\n", "", "GPU judge", why);
    }
    if (!a4w4_hip_bench_cublas(b->c.M, b->c.N, b->c.K, reps, &blas, why, sizeof why))
        printf("%-20s %-44s %12.3f %12s %10.3f  %8.2f T-MAC/s\n", "", "cuBLAS bf16 GEMM (same shape)",
               blas, "", macs / (blas * 1e-3) / 1e9, macs / (blas * 1e-3) / 1e12);
    else
        printf("%-20s %-44s n/a: %s\n", "", "cuBLAS bf16 GEMM", why);
    printf("%-20s ratios:", "");
    const double brate_blas = blas > 0 ? macs / (blas * 1e-3) / 1e9 : 0;
    for (size_t i = 0; i < p->nbe; i++)
        if (brate[i] > 0 && brate_blas > 0)
            printf(" %s / cuBLAS bf16 x%.3f;", p->be[i].name, brate[i] / brate_blas);
    if (all > 0 && brate_blas > 0)
        printf(" judge (all passes) / cuBLAS bf16 x%.3f", macs / (all * 1e-3) / 1e9 / brate_blas);
    printf("\n");
#else
    (void)p; (void)b; (void)reps; (void)brate; (void)macs;
#endif
}

/* "  [path, window W% general G%]" of a fast-oracle run (the exact one's accumulators). */
static void print_fast_path(const a4w4_fast_stats *st, int ordered)
{
    size_t n = st->window + st->general + st->trivial + st->ordered + st->plain;
    printf("  [%s", a4w4_fast_isa_name(st->isa));
    if (!ordered && n)
        printf(", window %.0f%% general %.0f%%", 100.0 * (double)st->window / (double)n,
               100.0 * (double)st->general / (double)n);
    printf("]");
}

/* Time method m on shape b and print its line; returns its rate in G-MAC/s (0 when it did
 * not run). */
static double time_and_print(const bench_method *m, bench_shape *b, int reps, const char *label)
{
    bench_result r;
    time_method(m, b, reps, &r);
    if (r.status != A4W4_OK) {
        printf("%-20s %-44s %s: %s\n", label, m->name,
               r.status == A4W4_EUNSUPPORTED ? "n/a" : "error",
               *r.why ? r.why : a4w4_status_str(r.status));
        return 0;
    }
    size_t rows = m->run == run_tree && m->slow ? tree_rows(b, &((const tree_arg *)m->arg)->t)
                  : runs_on_rows(m)              ? b->sub_rows
                                                 : b->c.M;
    double scale = (double)b->c.M / (double)rows;
    double rate = (double)rows * (double)b->c.N * (double)b->c.K / r.median_s / 1e9;
    char name[256];
    snprintf(name, sizeof name, "%.200s%s", m->name, rows < b->c.M ? " *" : "");
    printf("%-20s %-44s %12.3f %12.3f %10.3f", label, name, r.median_s * scale * 1e3,
           r.min_s * scale * 1e3, rate);
    if (rows < b->c.M)
        printf("  (rows 0..%zu of %zu)", rows - 1, b->c.M);
    if (m->run == run_fast)
        print_fast_path(&b->st, ((const fast_arg *)m->arg)->ordered);
    if (m->run == run_tree && !m->slow)
        printf("  [%s, %zu of %zu outputs by the tree reducer]", a4w4_fast_isa_name(b->st.isa),
               b->st.tree + b->st.trivial, b->c.M * b->c.N);
    printf("\n");
    return rate;
}

/* The line of ratios of one shape from the rates of its methods (0: did not run). */
static void print_ratios(const double *rate)
{
    printf("%-20s ratios:", "");
    if (rate[M_FAST1] > 0 && rate[M_SGEMM1] > 0)
        printf(" fast exact / sgemm (1 thread each) x%.2f;", rate[M_FAST1] / rate[M_SGEMM1]);
    if (rate[M_FAST1] > 0 && rate[M_FASTN] > 0)
        printf(" fast exact %u / 1 threads x%.2f;", a4w4_fast_max_threads(),
               rate[M_FASTN] / rate[M_FAST1]);
    if (rate[M_SGEMM1] > 0 && rate[M_SGEMMN] > 0)
        printf(" sgemm %d / 1 threads x%.2f;", openblas_get_num_threads(),
               rate[M_SGEMMN] / rate[M_SGEMM1]);
    if (rate[M_FAST1] > 0 && rate[M_PLAIN] > 0)
        printf(" fast / plain exact (1 thread each) x%.1f", rate[M_FAST1] / rate[M_PLAIN]);
    printf("\n");
}

/* A tree contract's two lines (fast, plain; m[0], m[1]) and their ratio. */
static void tree_rows_print(const bench_method *m, bench_shape *b, int reps)
{
    double fast = time_and_print(&m[0], b, reps, "");
    double plain = time_and_print(&m[1], b, reps, "");
    if (fast > 0 && plain > 0)
        printf("%-20s ratios: fast / plain tree (1 thread each) x%.1f\n", "", fast / plain);
}

/* Time every method on shape si, one line each, then the ratios. Returns the exit code. */
static int bench_shape_rows(const bench_opts *o, const bench_plan *p, size_t si)
{
    bench_shape b;
    char shape[64];
    const size_t *mnk = p->shapes[si].mnk;
    snprintf(shape, sizeof shape, "%zux%zux%zu", mnk[0], mnk[1], mnk[2]);
    if (shape_make(&b, &p->shapes[si], o->backends_only)) {
        a4w4_errorf("bench: shape %s: cannot generate the operands (out of memory)", shape);
        shape_free(&b);
        return A4W4_EXIT_BADINPUT;
    }
    double macs = (double)mnk[0] * mnk[1] * mnk[2], rate[NFIXED] = {0}, brate[MAX_BACKENDS] = {0};
    int any_gpu = 0;
    size_t first = o->backends_only ? NFIXED : 0;
    char regime[48];
    snprintf(regime, sizeof regime, "(%s)", p->shapes[si].regime_text);
    size_t ntree = 2 * p->ntrees;
    for (size_t mi = first; mi < p->nmethods - ntree; mi++) {
        const bench_method *m = &p->methods[mi];
        const a4w4_backend *bk = mi >= NFIXED ? m->arg : NULL;
        const char *label = mi == first ? shape : mi == first + 1 ? regime : "";
        if (bk && bk->type->bench) { /* device-event timing, operands resident */
            brate[mi - NFIXED] = print_device_bench(p, m, &b, o->reps, label, macs);
            any_gpu |= bk->type->gpu;
        }
        else if (mi < NFIXED)
            rate[mi] = time_and_print(m, &b, o->reps, label);
        else
            time_and_print(m, &b, o->reps, label);
        fflush(stdout);
    }
    if (!o->backends_only)
        print_ratios(rate);
    for (size_t ti = 0; !o->backends_only && ti < ntree; ti += 2)
        tree_rows_print(&p->methods[p->nmethods - ntree + ti], &b, o->reps);
    if (any_gpu)
        print_gpu_rows(p, &b, o->reps, brate, macs);
    fflush(stdout);
    shape_free(&b);
    return A4W4_EXIT_PASS;
}

int cmd_bench(int argc, char **argv)
{
    const char *trees[MAX_TREES];
    bench_opts o = {DEFAULT_SHAPES, "normal", DEFAULT_REPS, 0, {0}, {trees, 0, MAX_TREES}};
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
