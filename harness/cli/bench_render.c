/* bench_render.c — the text of `bench` (bench_render.h): the preamble, one line per timed
 * method, the ratios, the GPU rows. */
#include <cblas.h>
#include <stdio.h>

#include "a4w4_gemm_fast.h"
#include "bench_render.h"
#include "registry.h"

void a4w4_bench_print_preamble(const a4w4_bench_plan *p, int reps, int backends_only)
{
    a4w4_bench_machine mc;
    a4w4_bench_machine_read(&mc);
    printf("machine: %d CPUs usable (nproc), %ld online, %s; %s, %d threads by default\n",
           mc.usable, mc.online, mc.model, mc.blas_config ? mc.blas_config
                                                          : "OpenBLAS (no config string)",
           mc.blas_threads);
    const char *best = a4w4_fast_isa_name(a4w4_fast_isa_resolve(A4W4_FAST_AUTO));
    if (!backends_only && p->isa == A4W4_FAST_AUTO)
        printf("fast oracles: path %s (the best this build and CPU run), %u threads at most\n",
               best, a4w4_fast_max_threads());
    else if (!backends_only)
        printf("fast oracles: path %s (forced by --isa; the best this build and CPU run: %s), "
               "%u threads at most\n", a4w4_fast_isa_name(p->isa), best,
               a4w4_fast_max_threads());
    if (p->copy_gbs > 0)
        printf("device copy bandwidth (d2d, 1 GiB, read + write, median): %.1f GB/s; GPU "
               "backends are timed with device events around each launch, operands "
               "resident\n", p->copy_gbs);
    printf("timing: median (and min) %s of %d timed repetitions after 1 warm-up,",
           p->clock == A4W4_BENCH_WALL ? "wall clock, CLOCK_MONOTONIC,"
                                       : "thread CPU time, CLOCK_THREAD_CPUTIME_ID,", reps);
    printf(" every method in this run on the same operands (regime per shape, "
           "seed %d); G-MAC/s = M*N*K / median / 1e9; '*': timed on the first rows only (rate "
           "from those rows, times scaled to the whole shape)\n\n",
           A4W4_BENCH_SEED);
    printf("%-20s %-44s %12s %12s %10s\n", "shape MxNxK", "method", "median ms", "min ms",
           "G-MAC/s");
    fflush(stdout);
}

double a4w4_bench_print_device(const a4w4_bench_plan *p, const a4w4_bench_method *m,
                               a4w4_bench_shape *b, int reps, const char *label, double macs)
{
    double med = 0, mn = 0, bytes = 0;
    char why[256] = "";
    int st = a4w4_bench_device(m->arg, b, reps, &med, &mn, &bytes, why, sizeof why);
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

void a4w4_bench_print_gpu_rows(const a4w4_bench_plan *p, a4w4_bench_shape *b, int reps,
                               const double *brate, double macs)
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

void a4w4_bench_print_entry_cost(const char *backend, int rc, double cost_ms, double run_ms,
                                 const char *why)
{
    if (rc)
        printf("%-20s %-44s n/a: %s\n", "entry cost 1x128x256", backend, why);
    else
        printf("%-20s %-44s entry %.3f ms, its run %.3f ms, per-entry overhead %.3f ms\n",
               "entry cost 1x128x256", backend, cost_ms, run_ms, cost_ms - run_ms);
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

double a4w4_bench_print_line(const a4w4_bench_method *m, const a4w4_bench_shape *b,
                             const a4w4_bench_result *r, const char *label)
{
    if (r->status != A4W4_OK) {
        printf("%-20s %-44s %s: %s\n", label, m->name,
               r->status == A4W4_EUNSUPPORTED ? "n/a" : "error",
               *r->why ? r->why : a4w4_status_str(r->status));
        return 0;
    }
    size_t rows = r->rows;
    double scale = (double)b->c.M / (double)rows;
    double rate = (double)rows * (double)b->c.N * (double)b->c.K / r->median_s / 1e9;
    char name[256];
    snprintf(name, sizeof name, "%.200s%s", m->name, rows < b->c.M ? " *" : "");
    printf("%-20s %-44s %12.3f %12.3f %10.3f", label, name, r->median_s * scale * 1e3,
           r->min_s * scale * 1e3, rate);
    if (rows < b->c.M)
        printf("  (rows 0..%zu of %zu)", rows - 1, b->c.M);
    if (m->kind == A4W4_BENCH_FAST)
        print_fast_path(&b->st, ((const a4w4_bench_fast_arg *)m->arg)->ordered);
    if (m->kind == A4W4_BENCH_TREE && !m->slow)
        printf("  [%s, %zu of %zu outputs by the tree reducer]", a4w4_fast_isa_name(b->st.isa),
               b->st.tree + b->st.trivial, b->c.M * b->c.N);
    printf("\n");
    return rate;
}

void a4w4_bench_print_ratios(const double *rate)
{
    printf("%-20s ratios:", "");
    if (rate[A4W4_BENCH_M_FAST1] > 0 && rate[A4W4_BENCH_M_SGEMM1] > 0)
        printf(" fast exact / sgemm (1 thread each) x%.2f;", rate[A4W4_BENCH_M_FAST1] / rate[A4W4_BENCH_M_SGEMM1]);
    if (rate[A4W4_BENCH_M_FAST1] > 0 && rate[A4W4_BENCH_M_FASTN] > 0)
        printf(" fast exact %u / 1 threads x%.2f;", a4w4_fast_max_threads(),
               rate[A4W4_BENCH_M_FASTN] / rate[A4W4_BENCH_M_FAST1]);
    if (rate[A4W4_BENCH_M_SGEMM1] > 0 && rate[A4W4_BENCH_M_SGEMMN] > 0)
        printf(" sgemm %d / 1 threads x%.2f;", openblas_get_num_threads(),
               rate[A4W4_BENCH_M_SGEMMN] / rate[A4W4_BENCH_M_SGEMM1]);
    if (rate[A4W4_BENCH_M_FAST1] > 0 && rate[A4W4_BENCH_M_PLAIN] > 0)
        printf(" fast / plain exact (1 thread each) x%.1f;", rate[A4W4_BENCH_M_FAST1] / rate[A4W4_BENCH_M_PLAIN]);
    if (rate[A4W4_BENCH_M_ORDERED1] > 0 && rate[A4W4_BENCH_M_SGEMM1] > 0)
        printf(" fast ordered(1) / sgemm (1 thread each) x%.2f",
               rate[A4W4_BENCH_M_ORDERED1] / rate[A4W4_BENCH_M_SGEMM1]);
    printf("\n");
}

void a4w4_bench_print_tree_ratio(const char *what, double fast, double plain)
{
    if (fast > 0 && plain > 0)
        printf("%-20s ratios: fast / plain %s (1 thread each) x%.1f\n", "", what, fast / plain);
}
