/* bench.c — the measuring side of `bench` (bench.h): shapes, their operands, the methods and
 * the loop timing one of them. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT: the CPU count nproc reports */
#include <cblas.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_quant.h"
#include "bench.h"
#include "casefile.h"
#include "runner.h"
#include "fsutil.h"

/* ---- the methods ------------------------------------------------------------------------ */

/* The rows the plain tree oracle runs on: about A4W4_BENCH_TREE_PLAIN_LEAVES leaves, at
 * least 1. */
static size_t tree_rows(const a4w4_bench_shape *b, const a4w4_tree *t)
{
    double per_row = (double)b->c.N * (double)b->c.K / t->leaf;
    size_t rows = (size_t)((double)A4W4_BENCH_TREE_PLAIN_LEAVES / per_row);
    return rows < 1 ? 1 : rows > b->c.M ? b->c.M : rows;
}

/* The rows the bounded(S) methods run on (A4W4_BENCH_BOUND_MACS). */
static size_t bound_rows(const a4w4_bench_shape *b)
{
    size_t rows = (size_t)((double)A4W4_BENCH_BOUND_MACS / ((double)b->c.N * (double)b->c.K));
    return rows < 1 ? 1 : rows > b->c.M ? b->c.M : rows;
}

/* The bounded(S) limits of the first bound_rows rows into b->bound, plain or fast. */
static int run_bound(a4w4_bench_shape *b, const a4w4_bench_bound_arg *ba)
{
    const a4w4_case_data *d = &b->d;
    size_t rows = bound_rows(b), rb = d->K / 2, nb = d->K / 32;
    if (!b->bound && !(b->bound = malloc(rows * d->N * sizeof *b->bound)))
        return A4W4_ENOMEM;
    if (!ba->plain)
        return a4w4_gemm_bounded_limits_fast(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                             d->w_scale.data, rows, d->N, d->K, ba->S,
                                             b->bound, 1);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < d->N; j++) {
            a4w4_dot_operands op = {d->a_fp4.data + i * rb, d->a_scale.data + i * nb,
                                    d->w_fp4.data + j * rb, d->w_scale.data + j * nb, d->K};
            a4w4_dot_bounded_limits(&op, ba->S, &b->bound[i * d->N + j]);
        }
    return A4W4_OK;
}

static int run_fast(a4w4_bench_shape *b, const a4w4_bench_fast_arg *f)
{
    const a4w4_case_data *d = &b->d;
    if (f->ordered)
        return a4w4_gemm_ordered_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                         d->w_scale.data, d->M, d->N, d->K, 1, b->y, NULL,
                                         f->threads, f->isa, &b->st);
    return a4w4_gemm_exact_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                   d->w_scale.data, d->M, d->N, d->K, b->y, NULL, f->threads,
                                   f->isa, &b->st);
}

static int run_tree(a4w4_bench_shape *b, const a4w4_bench_tree_arg *ta)
{
    const a4w4_case_data *d = &b->d;
    if (ta->plain)
        return a4w4_gemm_tree(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                              tree_rows(b, &ta->t), d->N, d->K, &ta->t, b->y, NULL);
    return a4w4_gemm_tree_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                  d->w_scale.data, d->M, d->N, d->K, &ta->t, b->y, NULL, 1,
                                  ta->isa, &b->st);
}

static int run_backend(a4w4_bench_shape *b, const a4w4_backend *be, char *why, size_t whylen)
{
    if (!be->type->run) {
        snprintf(why, whylen, "no GEMM to time (a %s backend)",
                 be->type->layouts ? "layout" : "quantizer");
        return A4W4_EUNSUPPORTED;
    }
    const a4w4_sample *s = b->sub_rows < b->d.M && !be->type->gpu ? &b->sub : &b->s;
    a4w4_run_args a = {.c = &b->c, .d = &b->d, .s = s, .y = b->y, .why = why, .whylen = whylen};
    return be->type->run(be->ctx, &a);
}

/* One repetition of m on b: 0 ok; A4W4_EUNSUPPORTED: n/a with why; else an error. */
static int run_once(const a4w4_bench_method *m, a4w4_bench_shape *b, char *why, size_t whylen)
{
    const a4w4_case_data *d = &b->d;
    switch (m->kind) {
    case A4W4_BENCH_PLAIN:
        return a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                               b->sub_rows, d->N, d->K, b->y, NULL);
    case A4W4_BENCH_FAST: return run_fast(b, m->arg);
    case A4W4_BENCH_TREE: return run_tree(b, m->arg);
    case A4W4_BENCH_BACKEND: return run_backend(b, m->arg, why, whylen);
    case A4W4_BENCH_BOUND: return run_bound(b, m->arg);
    case A4W4_BENCH_SGEMM:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)d->M, (int)d->N, (int)d->K,
                    1.0f, b->A, (int)d->K, b->W, (int)d->K, 0.0f, b->C, (int)d->N);
        return A4W4_OK;
    }
    return A4W4_EINVAL;
}

/* The rows m runs on: the first rows of a large shape for the plain oracles and CPU
 * backends, else all. */
static size_t method_rows(const a4w4_bench_method *m, const a4w4_bench_shape *b)
{
    if (m->kind == A4W4_BENCH_TREE && m->slow)
        return tree_rows(b, &((const a4w4_bench_tree_arg *)m->arg)->t);
    if (m->kind == A4W4_BENCH_BOUND)
        return bound_rows(b);
    const a4w4_backend *be = m->kind == A4W4_BENCH_BACKEND ? m->arg : NULL;
    return m->slow || (be && !be->type->gpu) ? b->sub_rows : b->c.M;
}

/* ---- timing ----------------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Seconds on clock clk. */
static double bench_now(a4w4_bench_clock clk)
{
    struct timespec ts;
    if (clk == A4W4_BENCH_WALL || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
        return a4w4_now();
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int a4w4_bench_method_parallel(const a4w4_bench_method *m)
{
    switch (m->kind) {
    case A4W4_BENCH_FAST: return ((const a4w4_bench_fast_arg *)m->arg)->threads != 1;
    case A4W4_BENCH_SGEMM: return *(const int *)m->arg != 1;
    case A4W4_BENCH_BACKEND: return ((const a4w4_backend *)m->arg)->type->gpu;
    default: return 0;
    }
}

/* The repetitions after the warm-up (m's sgemm thread count set by the caller). */
static void time_reps(const a4w4_bench_method *m, a4w4_bench_shape *b, int reps,
                      a4w4_bench_clock clk, a4w4_bench_result *r)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t) {
        r->status = A4W4_ENOMEM;
    } else if (!(r->status = run_once(m, b, r->why, sizeof r->why))) {
        for (int i = 0; i < reps && !r->status; i++) {
            double t0 = bench_now(clk);
            r->status = run_once(m, b, r->why, sizeof r->why);
            t[i] = bench_now(clk) - t0;
        }
        if (!r->status) {
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            r->median_s = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
            r->min_s = t[0];
        }
    }
    free(t);
}

void a4w4_bench_time(const a4w4_bench_method *m, a4w4_bench_shape *b, int reps,
                     a4w4_bench_clock clk, a4w4_bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->rows = method_rows(m, b);
    if (clk == A4W4_BENCH_THREAD_CPU && a4w4_bench_method_parallel(m)) {
        r->status = A4W4_EUNSUPPORTED;
        snprintf(r->why, sizeof r->why, "more than one thread or a GPU: not timed on the thread "
                 "CPU clock (--clock thread)");
        return;
    }
    int saved = 0;
    if (m->kind == A4W4_BENCH_SGEMM) { /* OpenBLAS's thread count for this method only */
        saved = openblas_get_num_threads();
        if (*(const int *)m->arg > 0)
            openblas_set_num_threads(*(const int *)m->arg);
    }
    time_reps(m, b, reps, clk, r);
    if (m->kind == A4W4_BENCH_SGEMM)
        openblas_set_num_threads(saved);
    r->rows = method_rows(m, b);
}

int a4w4_bench_device(const a4w4_backend *bk, a4w4_bench_shape *b, int reps, double *median_ms,
                      double *min_ms, double *bytes, char *why, size_t whylen)
{
    return bk->type->bench(bk->ctx, &b->d, reps, median_ms, min_ms, bytes, why, whylen);
}

/* ---- shapes ----------------------------------------------------------------------------- */

void a4w4_bench_shape_free(a4w4_bench_shape *b)
{
    a4w4_case_data_free(&b->d);
    a4w4_sample_free(&b->s);
    a4w4_sample_free(&b->sub);
    free(b->A);
    free(b->W);
    free(b->C);
    free(b->y);
    free(b->bound);
    memset(b, 0, sizeof *b);
}

/* The first sub_rows rows (at least 1, all when the shape is at most A4W4_BENCH_SLOW_MACS),
 * every column, as an explicit sample. 0 or -1 (out of memory). */
static int sub_sample(a4w4_bench_shape *b)
{
    size_t M = b->c.M, N = b->c.N, K = b->c.K;
    double nk = (double)N * (double)K;
    b->sub_rows = (double)M * nk <= (double)A4W4_BENCH_SLOW_MACS
                      ? M : (size_t)((double)A4W4_BENCH_SLOW_MACS / nk);
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

int a4w4_bench_shape_make(a4w4_bench_shape *b, const a4w4_bench_shape_spec *sp,
                          int operands_only)
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
    b->c.seed = A4W4_BENCH_SEED;
    if (a4w4_sample_make(M, N, K, A4W4_BENCH_SEED, b->c.name, 1, &b->s) ||
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
/* ---- the plan ---------------------------------------------------------------------------- */

void a4w4_bench_fixed_methods(a4w4_bench_plan *p)
{
    static const int default_threads = 0, one_thread = 1;
    const a4w4_bench_fast_arg fast[3] = {{0, 1, p->isa}, {0, 0, p->isa}, {1, 1, p->isa}};
    memcpy(p->fast_args, fast, sizeof fast);
    const a4w4_bench_method fixed[A4W4_BENCH_NFIXED] = {
        {"plain exact oracle (1 thread)", A4W4_BENCH_PLAIN, NULL, 1},
        {"fast exact oracle (1 thread)", A4W4_BENCH_FAST, &p->fast_args[0], 0},
        {"", A4W4_BENCH_FAST, &p->fast_args[1], 0},
        {"fast ordered(1) oracle (1 thread)", A4W4_BENCH_FAST, &p->fast_args[2], 0},
        {"", A4W4_BENCH_SGEMM, &default_threads, 0},
        {"OpenBLAS sgemm (1 thread)", A4W4_BENCH_SGEMM, &one_thread, 0},
    };
    memcpy(p->methods, fixed, sizeof fixed);
    snprintf(p->methods[A4W4_BENCH_M_FASTN].name, sizeof p->methods[A4W4_BENCH_M_FASTN].name,
             "fast exact oracle (%u threads)", a4w4_fast_max_threads());
    snprintf(p->methods[A4W4_BENCH_M_SGEMMN].name, sizeof p->methods[A4W4_BENCH_M_SGEMMN].name,
             "OpenBLAS sgemm (%d threads)", openblas_get_num_threads());
    p->nmethods = A4W4_BENCH_NFIXED;
}

int a4w4_bench_plan_isa(a4w4_bench_plan *p, const char *name, char *err, size_t errlen)
{
    int isa = 0;
    while (isa < A4W4_FAST_ISA_COUNT && strcmp(name, a4w4_fast_isa_name((a4w4_fast_isa)isa)))
        isa++;
    if (isa < A4W4_FAST_ISA_COUNT && a4w4_fast_isa_supported((a4w4_fast_isa)isa)) {
        p->isa = (a4w4_fast_isa)isa;
        return 0;
    }
    char runs[128] = "";
    for (int i = 0; i < A4W4_FAST_ISA_COUNT; i++)
        if (a4w4_fast_isa_supported((a4w4_fast_isa)i))
            snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s", *runs ? ", " : "",
                     a4w4_fast_isa_name((a4w4_fast_isa)i));
    snprintf(err, errlen, "bench: --isa '%s': %s (this build and CPU run: %s)", name,
             isa < A4W4_FAST_ISA_COUNT ? "a path this build and CPU cannot run"
                                       : "not an instruction-set path",
             runs);
    return -1;
}

int a4w4_bench_plan_trees(a4w4_bench_plan *p, const char *const *texts, size_t n, char *err,
                          size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        a4w4_contract c;
        char why[512] = "";
        if (a4w4_contract_parse(texts[i], &c, why, sizeof why) == A4W4_OK &&
            c.kind != A4W4_CONTRACT_TREE)
            snprintf(why, sizeof why, "not a tree contract");
        if (*why) {
            snprintf(err, errlen, "bench: --tree '%s': %s", texts[i], why);
            return -1;
        }
        for (int plain = 0; plain < 2; plain++)
            p->trees[2 * i + plain] = (a4w4_bench_tree_arg){c.tree, plain, p->isa};
    }
    p->ntrees = n;
    return 0;
}

void a4w4_bench_plan_bound(a4w4_bench_plan *p, unsigned S)
{
    p->bound[0] = (a4w4_bench_bound_arg){S, 0};
    p->bound[1] = (a4w4_bench_bound_arg){S, 1};
    p->nbound = 2;
}

void a4w4_bench_plan_methods(a4w4_bench_plan *p)
{
    for (size_t i = 0; i < p->nbe; i++) {
        a4w4_bench_method *m = &p->methods[p->nmethods++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "backend %s [%s]", p->be[i].name, p->be[i].contract);
        m->kind = A4W4_BENCH_BACKEND;
        m->arg = &p->be[i];
    }
    for (size_t i = 0; i < 2 * p->ntrees; i++) {
        a4w4_bench_method *m = &p->methods[p->nmethods++];
        a4w4_contract c = {A4W4_CONTRACT_TREE, 1, p->trees[i].t};
        char text[A4W4_CONTRACT_MAX];
        a4w4_contract_format(&c, text, sizeof text);
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s tree oracle (1 thread) %s",
                 p->trees[i].plain ? "plain" : "fast", text);
        m->kind = A4W4_BENCH_TREE;
        m->arg = &p->trees[i];
        m->slow = p->trees[i].plain;
    }
    for (size_t i = 0; i < p->nbound; i++) {
        a4w4_bench_method *m = &p->methods[p->nmethods++];
        memset(m, 0, sizeof *m);
        snprintf(m->name, sizeof m->name, "%s bounded(%u) limits (1 thread)",
                 p->bound[i].plain ? "plain" : "fast", p->bound[i].S);
        m->kind = A4W4_BENCH_BOUND;
        m->arg = &p->bound[i];
        m->slow = 1;
    }
}

/* ---- the machine ------------------------------------------------------------------------ */

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

void a4w4_bench_machine_read(a4w4_bench_machine *mc)
{
    cpu_set_t set;
    mc->usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    mc->online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_model(mc->model, sizeof mc->model);
    mc->blas_config = openblas_get_config();
    mc->blas_threads = openblas_get_num_threads();
}

static int cmp_ms(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_ms);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int a4w4_bench_entry_cost(a4w4_backend *bk, const a4w4_devjudge *dev, int reps, double *cost_ms,
                          double *run_ms, char *why, size_t whylen)
{
    reps = reps < 1 ? 1 : reps;
    a4w4_runner r = {.backends = bk, .nbackends = 1, .code0_reading = A4W4_CODE0_OCP,
                     .dev = dev};
    a4w4_case c = {.M = 1, .N = 128, .K = 256, .regime = A4W4_REGIME_NORMAL,
                   .seed = A4W4_BENCH_SEED};
    snprintf(c.name, sizeof c.name, "entry_cost_m1_n128_k256");
    snprintf(c.regime_text, sizeof c.regime_text, "normal");
    double *cost = malloc((size_t)reps * sizeof *cost), *run = malloc((size_t)reps * sizeof *run);
    int rc = cost && run ? A4W4_OK : A4W4_ENOMEM;
    if (rc)
        snprintf(why, whylen, "out of memory");
    for (int i = -1; i < reps && rc == A4W4_OK; i++) { /* i = -1: the warm-up */
        a4w4_entry_list l = {0};
        char err[512];
        if (a4w4_run_case(&r, &c, &l, err, sizeof err) != A4W4_ST_OK || l.n < 2) {
            snprintf(why, whylen, "%s", l.n < 2 ? err : "the case failed to run");
            rc = A4W4_EINVAL;
        } else if (!l.items[1].has_cost || l.items[1].verdict == A4W4_VERDICT_NA ||
                   l.items[1].verdict == A4W4_VERDICT_SKIP) {
            snprintf(why, whylen, "%s", l.items[1].note[0] ? l.items[1].note : "did not run");
            rc = A4W4_EUNSUPPORTED;
        } else if (i >= 0) { /* a layout or quantizer entry: its call and comparison */
            const a4w4_entry_result *e = &l.items[1];
            cost[i] = e->cost_ms;
            run[i] = e->has_run ? e->run_ms : e->time_ms;
        }
        a4w4_entry_list_free(&l);
    }
    if (rc == A4W4_OK) {
        *cost_ms = median_of(cost, reps);
        *run_ms = median_of(run, reps);
    }
    free(cost);
    free(run);
    return rc;
}
