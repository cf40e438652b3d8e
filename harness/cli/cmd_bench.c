/* cmd_bench.c — `a4w4check bench`: throughput of the GEMM oracles (exact, ordered(1); contracts
 * §4.1), plain and fast, beside OpenBLAS sgemm on the same dequantized operands and the CPU
 * systems under test (or any backends of the table), in one run on one machine. A benchmark,
 * not a test: it checks nothing.
 *
 * parse (the options, commands/bench.h's shape list) -> plan (the shapes, the fixed methods,
 * the backends opened here, the --tree contracts; contracts §4.2) -> run (commands/bench.h
 * times each method on each shape's operands) -> render (the machine line, one line per
 * method, the ratios). A GPU backend type registered in registry.c is benchmarked the same
 * way without touching this file; one that wants device-only timing provides its bench hook. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "a4w4_gemm_fast.h"
#include "a4w4check.h"
#include "backend_list.h"
#include "bench.h"
#include "bench_render.h"
#include "options.h"
#include "registry.h"

#define DEFAULT_SHAPES "256,5120,5120;16,34816,5120;256,5120,5120:wide"
#define DEFAULT_BACKENDS "cpu-asm,cpu-fallback"
#define DEFAULT_REPS 3

static const char bench_usage[] =
    "usage: a4w4check bench [--shapes M,N,K[:REGIME];...] [--reps R] [--regime REGIME]\n"
    "                       [--backend NAME[,NAME...]] [--backends-only] [--isa PATH]\n"
    "                       [--clock wall|thread] [--bounded S]\n"
    "\n"
    "Throughput of the GEMM oracles beside OpenBLAS and the CPU systems under test, per shape,\n"
    "in one run on the same operands: the plain exact oracle (wide integer accumulator, one\n"
    "thread), the fast exact oracle (ref/a4w4_gemm_fast.h) on one thread and on all, the fast\n"
    "ordered(1) oracle on one thread (contracts §4.1), cblas_sgemm on the operands dequantized\n"
    "to fp32 (dequantization not timed) on OpenBLAS's default thread count and on one thread,\n"
    "then each backend (default cpu-asm and cpu-fallback) on the full output. Shapes above\n"
    "2^29 MACs time the plain oracle and CPU backends on their first rows only (marked '*':\n"
    "the rate is theirs, the times are scaled to the whole shape). Each method: one warm-up\n"
    "run, then R timed repetitions; the wall clock (CLOCK_MONOTONIC; --clock thread: the\n"
    "thread's CPU time, one-thread methods only) median and minimum are printed with G-MAC/s\n"
    "= M*N*K / median / 1e9, then a line of ratios (fast exact / sgemm on one thread each,\n"
    "fast exact all threads / one, fast ordered(1) / sgemm) and the instruction-set path. A\n"
    "machine line (CPUs, CPU model, OpenBLAS build and threads) and the fast oracles' path\n"
    "(--isa forces one this build and CPU run, e.g. avx2 on an AVX-512 machine) come first.\n"
    "Operands: a generated case per shape (seed 1). Each --tree TEXT (a tree contract, contracts §4.2) adds the fast\n"
    "tree oracle and the plain tree oracle (about 2^22 leaves of outputs: its first rows), one\n"
    "thread each, and their ratio; --bounded S the plain and the fast bounded(S) limits\n"
    "(ref/a4w4_bound.h, about 2^23 MACs of rows, one thread each) and their ratio. Each GPU backend then gets an 'entry cost 1x128x256' row:\n"
    "a 1x128x256 case judged as run judges it, the entry's whole cost, its own run and the\n"
    "difference (the host overhead of one entry), medians of R cases.\n"
    "\n"
    "options:\n";

static const char *const clock_names[] = {"wall", "thread", NULL};

typedef struct {
    const char *shapes, *regime, *isa;
    int reps, backends_only, clock, bounded;
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
    OPT_INT("bounded", bench_opts, bounded, "S", 1, 65536,
            "also time the plain and the fast bounded(S) limits (the bound of\n"
            "each output, contracts §4.1) on the first rows, one thread each"),
    OPT_STRING("isa", bench_opts, isa, "PATH",
               "the fast oracles' instruction-set path: auto (the best this build and\n"
               "CPU run), amx, avx512vnni, avxvnni, avx2 or portable (default auto)"),
    OPT_CHOICE("clock", bench_opts, clock, "CLOCK", clock_names,
               "wall (CLOCK_MONOTONIC, default) or thread (the calling thread's CPU\n"
               "time: one-thread methods only, the others n/a; for a loaded machine)"),
    OPT_END(),
};

static const a4w4_command_spec bench_spec = {
    "bench", bench_usage, bench_options, NULL,
    "exit: 0 done, 2 bad usage or a shape that cannot be generated, 3 a GPU backend without GPU\n"};

/* ---- the command ------------------------------------------------------------------------ */

/* Parse one "M,N,K[:REGIME]" into sp (REGIME default: dflt). 0, or -1 with err. */
static int parse_shape(const char *text, size_t idx, const char *item, const char *dflt,
                       a4w4_bench_shape_spec *sp, char *err, size_t errlen)
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
static int parse_shapes(const char *text, const char *dflt, a4w4_bench_shape_spec *shapes,
                            size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = text;
    for (size_t idx = 1;; idx++) {
        size_t len = strcspn(p, ";");
        char item[128];
        if (len == 0 || len >= sizeof item || *n == A4W4_BENCH_MAX_SHAPES) {
            snprintf(err, errlen, "bench: --shapes '%s': shape %zu %s", text, idx,
                     *n == A4W4_BENCH_MAX_SHAPES ? "is one too many (at most 64)"
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



/* Shapes, the fixed methods, the backends and their methods. Returns the exit code. */
static int plan_bench(const bench_opts *o, a4w4_bench_plan *p)
{
    char err[1024];
    a4w4_regime r;
    a4w4_scale_mode mode;
    if (a4w4_regime_parse(o->regime, &r, &mode) || r == A4W4_REGIME_SPECIAL ||
        r == A4W4_REGIME_CODE0) {
        a4w4_errorf("bench: --regime '%s' is not exact, normal, normal:<mode> or wide", o->regime);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_bench_plan_isa(p, o->isa, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    p->clock = o->clock ? A4W4_BENCH_THREAD_CPU : A4W4_BENCH_WALL;
    a4w4_bench_fixed_methods(p);
    if (parse_shapes(o->shapes, o->regime, p->shapes, &p->nshapes, err, sizeof err) ||
        a4w4_bench_plan_trees(p, o->tree.v, o->tree.n, err, sizeof err)) {
        a4w4_errorf("%s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (o->backends_only && !o->backend.text) {
        a4w4_errorf("bench: --backends-only needs --backend LIST");
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_opt_list dflt = {0};
    if (!o->backend.text && a4w4_opt_list_split(DEFAULT_BACKENDS, &dflt, err, sizeof err)) {
        a4w4_errorf("bench: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_backend_list_opts bo = {"bench", A4W4_BENCH_MAX_BACKENDS, 0, 0};
    a4w4_plugin_isolation(0, 0); /* bench times the kernel, not a fork per call; judging is run's */
    int rc = a4w4_backend_list_open(&bo, o->backend.text ? &o->backend : &dflt, p->be, &p->nbe);
    if (o->bounded)
        a4w4_bench_plan_bound(p, (unsigned)o->bounded);
    a4w4_bench_plan_methods(p);
#ifdef A4W4_HAVE_GPU
    for (size_t i = 0; i < p->nbe && rc == A4W4_EXIT_PASS; i++)
        if (p->be[i].type->gpu && p->be[i].type->bench && p->copy_gbs == 0)
            p->copy_gbs = a4w4_hip_copy_bandwidth_gbs(o->reps < 5 ? 5 : o->reps);
#endif
    return rc;
}

/* Time every method on shape si, one line each, then the ratios. Returns the exit code. */
static int bench_shape_rows(const bench_opts *o, const a4w4_bench_plan *p, size_t si)
{
    a4w4_bench_shape b;
    char shape[64];
    const size_t *mnk = p->shapes[si].mnk;
    snprintf(shape, sizeof shape, "%zux%zux%zu", mnk[0], mnk[1], mnk[2]);
    if (a4w4_bench_shape_make(&b, &p->shapes[si], o->backends_only)) {
        a4w4_errorf("bench: shape %s: cannot generate the operands (out of memory)", shape);
        a4w4_bench_shape_free(&b);
        return A4W4_EXIT_BADINPUT;
    }
    double macs = (double)mnk[0] * mnk[1] * mnk[2], rate[A4W4_BENCH_NFIXED] = {0},
           brate[A4W4_BENCH_MAX_BACKENDS] = {0}, tree_rate[2];
    a4w4_bench_result r;
    int any_gpu = 0;
    size_t first = o->backends_only ? A4W4_BENCH_NFIXED : 0;
    char regime[48];
    snprintf(regime, sizeof regime, "(%s)", p->shapes[si].regime_text);
    size_t ntree = 2 * p->ntrees, tail = ntree + p->nbound;
    for (size_t mi = first; mi < p->nmethods - tail; mi++) {
        const a4w4_bench_method *m = &p->methods[mi];
        const a4w4_backend *bk = mi >= A4W4_BENCH_NFIXED ? m->arg : NULL;
        const char *label = mi == first ? shape : mi == first + 1 ? regime : "";
        if (bk && bk->type->bench) { /* device-event timing, operands resident */
            brate[mi - A4W4_BENCH_NFIXED] =
                a4w4_bench_print_device(p, m, &b, o->reps, label, macs);
            any_gpu |= bk->type->gpu;
        }
        else {
            a4w4_bench_time(m, &b, o->reps, p->clock, &r);
            double x = a4w4_bench_print_line(m, &b, &r, label);
            if (mi < A4W4_BENCH_NFIXED)
                rate[mi] = x;
        }
        fflush(stdout);
    }
    if (!o->backends_only)
        a4w4_bench_print_ratios(rate);
    for (size_t ti = 0; !o->backends_only && ti < tail; ti++) { /* fast, then plain */
        const a4w4_bench_method *m = &p->methods[p->nmethods - tail + ti];
        a4w4_bench_time(m, &b, o->reps, p->clock, &r);
        tree_rate[ti % 2] = a4w4_bench_print_line(m, &b, &r, "");
        if (ti % 2)
            a4w4_bench_print_tree_ratio(m->kind == A4W4_BENCH_BOUND ? "bounded limits" : "tree",
                                        tree_rate[0], tree_rate[1]);
    }
    if (any_gpu)
        a4w4_bench_print_gpu_rows(p, &b, o->reps, brate, macs);
    fflush(stdout);
    a4w4_bench_shape_free(&b);
    return A4W4_EXIT_PASS;
}

/* The per-entry cost rows: a 1x128x256 case through each GPU backend as run judges it (on
 * the device judge when there is one), after the shapes. */
static void bench_entry_costs(const bench_opts *o, a4w4_bench_plan *p)
{
    const a4w4_devjudge *dev = NULL;
    char why[512];
    for (size_t i = 0; i < p->nbe; i++) {
        if (!p->be[i].type->gpu || (!p->be[i].type->run && !p->be[i].type->layouts &&
                                    !p->be[i].type->quantize))
            continue;
        if (!dev)
            dev = a4w4_backend_devjudge(why, sizeof why);
        double cost = 0, run = 0;
        int rc = a4w4_bench_entry_cost(&p->be[i], dev, o->reps, &cost, &run, why, sizeof why);
        a4w4_bench_print_entry_cost(p->be[i].name, rc, cost, run, why);
        fflush(stdout);
    }
}

int cmd_bench(int argc, char **argv)
{
    const char *trees[A4W4_BENCH_MAX_TREES];
    bench_opts o = {.shapes = DEFAULT_SHAPES, .regime = "normal", .isa = "auto",
                    .reps = DEFAULT_REPS,
                    .tree = {trees, 0, A4W4_BENCH_MAX_TREES}};
    a4w4_args args;
    int rc = a4w4_options_parse(&bench_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    a4w4_bench_plan p;
    memset(&p, 0, sizeof p);
    rc = plan_bench(&o, &p);
    if (rc == A4W4_EXIT_PASS)
        a4w4_bench_print_preamble(&p, o.reps, o.backends_only);
    for (size_t si = 0; si < p.nshapes && rc == A4W4_EXIT_PASS; si++)
        rc = bench_shape_rows(&o, &p, si);
    if (rc == A4W4_EXIT_PASS)
        bench_entry_costs(&o, &p);
    a4w4_backend_list_close(p.be, p.nbe);
    return rc;
}
