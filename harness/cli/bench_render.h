/* bench_render.h — the text `bench` prints on stdout (cli/cmd_bench.c runs, commands/bench.h
 * measures): columns "shape MxNxK", "method", "median ms", "min ms", "G-MAC/s", where
 * G-MAC/s = M*N*K / median / 1e9 and a method timed on the first rows only is marked '*'
 * (rate from those rows, times scaled to the whole shape). */
#ifndef A4W4_BENCH_RENDER_H
#define A4W4_BENCH_RENDER_H

#include "bench.h"

/* The machine line (CPUs, CPU model, OpenBLAS build and threads), the fast oracles' path
 * (unless backends_only), p->copy_gbs when measured, the timing note, the column heads. */
void a4w4_bench_print_preamble(const a4w4_bench_plan *p, int reps, int backends_only);

/* Method m's line for shape b from its timing r (or "n/a: why" / "error: why"); label is the
 * first column. Returns the rate in G-MAC/s of the rows it ran on (0 when it did not run). */
double a4w4_bench_print_line(const a4w4_bench_method *m, const a4w4_bench_shape *b,
                             const a4w4_bench_result *r, const char *label);

/* Backend method m's own device-event timing of b (a4w4_bench_device, reps calls): one line
 * with TFLOP/s and GB/s, and the share of p->copy_gbs when measured. macs = M*N*K. Returns its
 * rate in G-MAC/s (0 when it did not run). */
double a4w4_bench_print_device(const a4w4_bench_plan *p, const a4w4_bench_method *m,
                               a4w4_bench_shape *b, int reps, const char *label, double macs);

/* The GPU rows beside the GPU backends' own (GPU builds; nothing otherwise): the GPU judge's
 * passes on b's operands (device-resident, wall clock around each synchronised call) and
 * cuBLAS's bf16 GEMM of the same shape (NVIDIA), then each GPU backend's rate (brate[i] of
 * p->be[i], G-MAC/s) over cuBLAS's. */
/* One row of the per-entry cost (commands/bench.h a4w4_bench_entry_cost): the entry's whole
 * cost, its backend's own run and the difference, the host overhead of one entry; or n/a with
 * why when rc is not 0. */
void a4w4_bench_print_entry_cost(const char *backend, int rc, double cost_ms, double run_ms,
                                 const char *why);

void a4w4_bench_print_gpu_rows(const a4w4_bench_plan *p, a4w4_bench_shape *b, int reps,
                               const double *brate, double macs);

/* The line of ratios of one shape from the rates (G-MAC/s; 0: did not run) of the fixed
 * methods, rate[A4W4_BENCH_M_*]. */
void a4w4_bench_print_ratios(const double *rate);

/* The ratio line of a fast and a plain oracle (what: "tree", "bounded limits") from their
 * rates (nothing when one did not run). */
void a4w4_bench_print_tree_ratio(const char *what, double fast, double plain);

#endif
