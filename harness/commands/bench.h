/* bench.h — the measuring side of `bench` (cli/cmd_bench.c parses, plans and renders): the
 * shapes a run times and their operands, the methods (the GEMM oracles of contracts §4.1 and
 * §4.2, OpenBLAS sgemm, the backends of the table), and the loop that times one method. It
 * checks nothing and prints nothing.
 *
 * A shape's operands are generated once (a4w4_bench_shape_make); every method is timed by the
 * same loop (a4w4_bench_time: one warm-up, then R timed repetitions, median and minimum of the
 * wall clock, CLOCK_MONOTONIC). The slow methods (the plain oracle, CPU backends, the plain
 * tree oracle) run on the first rows only when the shape is large; the result says on how many
 * rows, so that a rate and a time scaled to the whole shape follow. */
#ifndef A4W4_BENCH_H
#define A4W4_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_bound.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "casefile.h"
#include "devjudge.h"
#include "gen.h"

#define A4W4_BENCH_MAX_SHAPES 64
#define A4W4_BENCH_MAX_BACKENDS 16
#define A4W4_BENCH_MAX_TREES 8 /* --tree contracts of one run */
#define A4W4_BENCH_SEED 1      /* of every shape's generated case */
/* The slow methods run on the first rows of A only when the shape has more MACs than this
 * (about 0.3 s of the plain oracle on one core). */
#define A4W4_BENCH_SLOW_MACS (1ull << 29)
/* The leaves (outputs times K / leaf) the plain tree oracle runs on at most (about 1 us a
 * leaf: some seconds). */
#define A4W4_BENCH_TREE_PLAIN_LEAVES (1ull << 22)

/* One shape of the run: its size and its operands' regime. */
typedef struct {
    size_t mnk[3];
    a4w4_regime regime;
    a4w4_scale_mode mode;
    char regime_text[32];
} a4w4_bench_shape_spec;

/* A shape's operands, generated once, and the outputs every method writes. */
typedef struct {
    a4w4_case c;
    a4w4_sample s;    /* every output */
    a4w4_sample sub;  /* the first sub_rows rows, every column (the slow methods') */
    size_t sub_rows;
    a4w4_case_data d;
    float *A, *W, *C; /* dequantized [M, K], [N, K]; sgemm output [M, N] */
    uint16_t *y;      /* [M, N] bf16 output of the oracles and backends */
    a4w4_bounded_limits *bound; /* the bounded(S) methods' output, [their rows, N] */
    a4w4_fast_stats st; /* of the last fast-oracle run */
} a4w4_bench_shape;

/* What a method runs: the plain exact oracle, a fast oracle (exact or ordered(1)), OpenBLAS
 * sgemm on the dequantized operands, a tree oracle (fast or plain), a backend of the table. */
typedef enum {
    A4W4_BENCH_PLAIN,
    A4W4_BENCH_FAST,
    A4W4_BENCH_SGEMM,
    A4W4_BENCH_TREE,
    A4W4_BENCH_BACKEND,
    A4W4_BENCH_BOUND
} a4w4_bench_kind;

/* A4W4_BENCH_FAST's arg: ordered(1) or exact, on threads threads (0: all), on instruction-set
 * path isa (A4W4_FAST_AUTO: the best this build and CPU run; ref/a4w4_gemm_fast.h). */
typedef struct {
    int ordered;
    unsigned threads;
    a4w4_fast_isa isa;
} a4w4_bench_fast_arg;

/* A4W4_BENCH_TREE's arg: the fast path (on path isa) on every output, or the plain oracle on
 * the first a4w4_bench_tree_rows rows; one thread either way. */
typedef struct {
    a4w4_tree t;
    int plain;
    a4w4_fast_isa isa;
} a4w4_bench_tree_arg;

/* A4W4_BENCH_BOUND's arg: the bounded(S) limits of every output (contracts §4.1 "bounded";
 * ref/a4w4_bound.h), the plain form (a4w4_dot_bounded_limits per output) or the fast one
 * (a4w4_gemm_bounded_limits_fast), one thread either way, on the first a4w4_bench_bound_rows
 * rows. */
typedef struct {
    unsigned S;
    int plain;
} a4w4_bench_bound_arg;

/* The rows the bounded(S) methods run on: about 2^23 MACs (a tenth of a second of the plain
 * form), at least 1. */
#define A4W4_BENCH_BOUND_MACS (1ull << 23)

/* One timed thing. arg: A4W4_BENCH_FAST an a4w4_bench_fast_arg, A4W4_BENCH_SGEMM an int
 * (OpenBLAS threads, 0: its default), A4W4_BENCH_TREE an a4w4_bench_tree_arg,
 * A4W4_BENCH_BACKEND an opened a4w4_backend, A4W4_BENCH_BOUND an a4w4_bench_bound_arg. slow: on a large shape, timed on the first rows. */
typedef struct {
    char name[sizeof "backend  []" + sizeof ((a4w4_backend *)0)->name +
              sizeof ((a4w4_backend *)0)->contract]; /* "backend NAME [CONTRACT]" whole */
    a4w4_bench_kind kind;
    const void *arg;
    int slow;
} a4w4_bench_method;

/* One method's timing: status A4W4_OK with the median and minimum seconds of the timed
 * repetitions on rows rows of the shape (rows < M: the first rows only); A4W4_EUNSUPPORTED
 * (n/a) or another error with why (may be empty: a4w4_status_str then). */
typedef struct {
    double median_s, min_s;
    size_t rows;
    int status;
    char why[256];
} a4w4_bench_result;

/* The fixed methods, in this order, first in every plan. */
enum {
    A4W4_BENCH_M_PLAIN, A4W4_BENCH_M_FAST1, A4W4_BENCH_M_FASTN, A4W4_BENCH_M_ORDERED1,
    A4W4_BENCH_M_SGEMMN, A4W4_BENCH_M_SGEMM1, A4W4_BENCH_NFIXED
};

/* The clock a run reads: the wall clock (CLOCK_MONOTONIC), or the calling thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: the time it ran, not the time other processes took from it, on a
 * loaded machine; meaningful for the methods on one thread only). */
typedef enum { A4W4_BENCH_WALL, A4W4_BENCH_THREAD_CPU } a4w4_bench_clock;

/* What a bench run times: the shapes, then the methods: the fixed ones, one per backend
 * instance (be[0..nbe), opened by the caller), per tree contract the fast and the plain
 * tree oracle, then (nbound 2) the fast and the plain bounded(S) limits. */
typedef struct {
    a4w4_bench_shape_spec shapes[A4W4_BENCH_MAX_SHAPES];
    size_t nshapes;
    a4w4_bench_method methods[A4W4_BENCH_NFIXED + A4W4_BENCH_MAX_BACKENDS +
                              2 * A4W4_BENCH_MAX_TREES + 2];
    size_t nmethods, ntrees; /* the tree methods follow the others, fast then plain */
    a4w4_bench_tree_arg trees[2 * A4W4_BENCH_MAX_TREES];
    size_t nbound;                  /* 2 with --bounded S (last: fast, then plain), else 0 */
    a4w4_bench_bound_arg bound[2];
    a4w4_fast_isa isa;                /* the fast oracles' path (set before the methods) */
    a4w4_bench_clock clock;           /* what a4w4_bench_time reads */
    a4w4_bench_fast_arg fast_args[3]; /* of the fixed fast methods: exact 1, exact all, ordered 1 */
    a4w4_backend be[A4W4_BENCH_MAX_BACKENDS];
    size_t nbe;
    double copy_gbs; /* a GPU backend's device copy bandwidth (GB/s), 0 when not measured */
} a4w4_bench_plan;

/* The fixed methods into p->methods[0..A4W4_BENCH_NFIXED): their names carry the thread
 * counts of this machine (a4w4_fast_max_threads, OpenBLAS's default); the fast ones run on
 * path p->isa (a4w4_bench_plan_isa; 0 is A4W4_FAST_AUTO). */
void a4w4_bench_fixed_methods(a4w4_bench_plan *p);

/* The fast oracles' path from its name (a4w4_fast_isa_name: auto, amx, avx512vnni, avxvnni,
 * avx2, portable) into p->isa, before a4w4_bench_fixed_methods and a4w4_bench_plan_trees.
 * 0, or -1 with "bench: --isa 'NAME': why" in err (an unknown name, or a path this build and
 * CPU cannot run; the message names the paths they run). */
int a4w4_bench_plan_isa(a4w4_bench_plan *p, const char *name, char *err, size_t errlen);

/* The tree contracts texts[0..n) (n <= A4W4_BENCH_MAX_TREES; contracts §4.2) into p->trees.
 * 0, or -1 with "bench: --tree 'TEXT': why" in err (a refused text, or not a tree contract). */
int a4w4_bench_plan_trees(a4w4_bench_plan *p, const char *const *texts, size_t n, char *err,
                          size_t errlen);

/* The fast and the plain bounded(S) limits into p->bound (S >= 1; p->nbound becomes 2). */
void a4w4_bench_plan_bound(a4w4_bench_plan *p, unsigned S);

/* After the fixed methods: one method per opened backend p->be[0..nbe) ("backend NAME
 * [CONTRACT]"), then the tree methods (names carry the canonical contract text), then the
 * bounded(S) methods when p->nbound is 2 (a4w4_bench_plan_bound). */
void a4w4_bench_plan_methods(a4w4_bench_plan *p);

/* Generate shape sp's operands (seed A4W4_BENCH_SEED) into b, with the first-rows sample of
 * the slow methods; operands_only: no dequantized fp32 copies (no sgemm). 0, or -1 (out of
 * memory); a4w4_bench_shape_free releases b either way. */
int a4w4_bench_shape_make(a4w4_bench_shape *b, const a4w4_bench_shape_spec *sp,
                          int operands_only);
void a4w4_bench_shape_free(a4w4_bench_shape *b);

/* 1 when m runs on more than one thread (a fast oracle or sgemm with threads != 1) or on a
 * GPU; 0 otherwise. */
int a4w4_bench_method_parallel(const a4w4_bench_method *m);

/* Time m on b: one warm-up run, then reps (>= 1) timed runs; median and minimum seconds on
 * clock clk and the rows it ran on into r. A4W4_BENCH_THREAD_CPU and a method that
 * a4w4_bench_method_parallel: status A4W4_EUNSUPPORTED (n/a) with why, nothing run. Leaves
 * b->st the fast path's statistics of the last run. */
void a4w4_bench_time(const a4w4_bench_method *m, a4w4_bench_shape *b, int reps,
                     a4w4_bench_clock clk, a4w4_bench_result *r);

/* A backend's own device-event timing of b (its type's bench hook, operands resident): the
 * median and minimum milliseconds of reps calls and the bytes one call moves. Returns A4W4_OK,
 * A4W4_EUNSUPPORTED (n/a) or another error, with why. */
int a4w4_bench_device(const a4w4_backend *bk, a4w4_bench_shape *b, int reps, double *median_ms,
                      double *min_ms, double *bytes, char *why, size_t whylen);

/* The whole cost of one entry of backend bk as `run` makes it (engine/runner.h: its call,
 * buffers, pad variants, comparisons and re-check, on the device judge dev when not NULL, as
 * run's): a 1x128x256 normal-regime case, E8M0 code 0 read as 2^-127, one warm-up then reps
 * (>= 1) cases; the medians of the entry's cost_ms and of its own run_ms (a layout or
 * quantizer entry: its time_ms, the call and its comparison), in milliseconds.
 * Returns A4W4_OK, or another status with why (out of memory, or the entry's note when the
 * backend did not run). */
int a4w4_bench_entry_cost(a4w4_backend *bk, const a4w4_devjudge *dev, int reps, double *cost_ms,
                          double *run_ms, char *why, size_t whylen);

/* The machine a run is on: CPUs usable (nproc; -1 unknown) and online, the CPU model
 * ("unknown CPU" when /proc/cpuinfo has none), OpenBLAS's build (NULL: no config string) and
 * default thread count. */
typedef struct {
    int usable;
    long online;
    char model[256];
    const char *blas_config;
    int blas_threads;
} a4w4_bench_machine;

void a4w4_bench_machine_read(a4w4_bench_machine *mc);

#endif
