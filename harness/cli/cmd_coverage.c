/* cmd_coverage.c — `a4w4check coverage`: which cases of a matrix (default the pre-merge set)
 * exercise each padded-M bucket of the tuned tables (contracts §5.1), each tile_M and tile_N
 * of the ASM kernel table (§5.3), each regime edge (§4.1, §4.3), the output grids past 256 and
 * 1,024 tiles of 256x256, and each fault class of the self-test's CPU mutants. The buckets and
 * tiles come from the tables, never from a list here. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "casefile.h"
#include "coverage.h"
#include "fault_classes.h"
#include "fsutil.h"
#include "mutants.h"
#include "options.h"

#define DEFAULT_CASES "cases/premerge.csv"
#define DEFAULT_TUNED_GLOB "cases/aiter/*_tuned_gemm.csv"
#define DEFAULT_KERNELS "cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define MAX_TUNED 16
#define SHOWN_CASES 4

static const char coverage_usage[] =
    "usage: a4w4check coverage [--cases FILE] [--tuned CSV]... [--kernels CSV] [--all]\n"
    "\n"
    "Which cases of a matrix exercise each item the harness must reach, one line per item:\n"
    "  bucket  every padded-M bucket of the tuned tables' M values (getPaddedM at gl 0 and 1,\n"
    "          or M itself; contracts §5.1): the case with M one past the bucket's lower edge\n"
    "  tile_M, tile_N  every tile size of the ASM kernel table (contracts §5.3): M one row past\n"
    "          a tile edge, N one 32-column group past one\n"
    "  edge    each edge of the generated regimes (the range regime's kinds, E8M0 255 on both\n"
    "          sides, fp32 subnormals, zero-sign rows, E8M0 code 0; contracts §4.1, §4.3)\n"
    "  grid    output grids past 256 and 1,024 tiles of 256x256\n"
    "  fault   each fault class of the self-test's CPU mutants (selftest shows the kill)\n"
    "\n";

typedef struct {
    const char *cases, *kernels;
    const char *tuned_v[MAX_TUNED];
    a4w4_opt_strings tuned;
    int all;
} coverage_opts;

static const a4w4_option coverage_options[] = {
    OPT_STRING("cases", coverage_opts, cases, "FILE", "the matrix (default " DEFAULT_CASES ")"),
    OPT_STRINGS("tuned", coverage_opts, tuned, "CSV",
                "a tuned table (repeat; default every " DEFAULT_TUNED_GLOB ")"),
    OPT_STRING("kernels", coverage_opts, kernels, "CSV",
               "ASM kernel table (default " DEFAULT_KERNELS ")\n"
               "default paths resolve from the current directory, else the source tree"),
    OPT_FLAG("all", coverage_opts, all, "name every case of an item (default: the first 4)"),
    OPT_END(),
};

static const a4w4_command_spec coverage_spec = {
    "coverage", coverage_usage, coverage_options, NULL,
    "exit: 0 every item has a case, 1 some item has none, 2 bad input\n"};

/* What the command works from. */
typedef struct {
    a4w4_case *cases;
    size_t ncases;
    char *tuned_paths[MAX_TUNED];
    size_t ntuned;
    int *m;
    size_t nm;
    a4w4_kernel_table kt;
} coverage_plan;

static void plan_free(coverage_plan *p)
{
    free(p->cases);
    for (size_t i = 0; i < p->ntuned; i++)
        free(p->tuned_paths[i]);
    free(p->m);
    a4w4_kernels_free(&p->kt);
}

/* The tuned tables: --tuned's, else every *_tuned_gemm.csv of cases/aiter/. Exit code or -1. */
static int tuned_paths(const coverage_opts *o, coverage_plan *p)
{
    for (size_t i = 0; i < o->tuned.n; i++)
        if (!(p->tuned_paths[p->ntuned++] = strdup(o->tuned.v[i])))
            return a4w4_exit_code(A4W4_ST_NOMEM);
    if (o->tuned.n)
        return -1;
    char buf[4096];
    glob_t g;
    if (glob(a4w4_data_path(DEFAULT_TUNED_GLOB, buf, sizeof buf), 0, NULL, &g) != 0) {
        a4w4_errorf("coverage: no tuned table matches %s", DEFAULT_TUNED_GLOB);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < g.gl_pathc && p->ntuned < MAX_TUNED; i++)
        p->tuned_paths[p->ntuned++] = strdup(g.gl_pathv[i]);
    globfree(&g);
    for (size_t i = 0; i < p->ntuned; i++)
        if (!p->tuned_paths[i])
            return a4w4_exit_code(A4W4_ST_NOMEM);
    return -1;
}

/* Load the matrix and the tables. Exit code or -1. */
static int plan_coverage(const coverage_opts *o, coverage_plan *p)
{
    char err[1024], buf[4096];
    const char *cases = o->cases ? o->cases : a4w4_data_path(DEFAULT_CASES, buf, sizeof buf);
    if (a4w4_casefile_read(cases, &p->cases, &p->ncases, err, sizeof err) != A4W4_ST_OK) {
        a4w4_errorf("coverage: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    int rc = tuned_paths(o, p);
    if (rc != -1)
        return rc;
    if (a4w4_tuned_m_values((const char *const *)p->tuned_paths, p->ntuned, &p->m, &p->nm, err,
                            sizeof err) != A4W4_ST_OK) {
        a4w4_errorf("coverage: tuned table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    const char *kpath = o->kernels ? o->kernels : a4w4_data_path(DEFAULT_KERNELS, buf, sizeof buf);
    if (a4w4_kernels_load(&p->kt, kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("coverage: kernel table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* A mutant without a fault class: no case is known to exercise it (reported uncovered). */
static int no_rule(const a4w4_case *c, const void *arg)
{
    (void)c;
    (void)arg;
    return 0;
}

/* Every item: buckets, tiles, edges and grids, then the CPU mutants' fault classes. */
static a4w4_hstatus build(const coverage_plan *p, a4w4_coverage *cov)
{
    a4w4_hstatus st = a4w4_coverage_buckets(cov, p->cases, p->ncases, p->m, p->nm);
    if (st == A4W4_ST_OK)
        st = a4w4_coverage_tiles(cov, p->cases, p->ncases, &p->kt);
    if (st == A4W4_ST_OK)
        st = a4w4_coverage_edges(cov, p->cases, p->ncases);
    size_t nmt;
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nmt);
    for (size_t i = 0; i < nmt && st == A4W4_ST_OK; i++) {
        if (mt[i]->gpu)
            continue;
        const a4w4_fault_class *fc = a4w4_fault_class_find(mt[i]->name);
        char what[160];
        snprintf(what, sizeof what, "%s: %s", mt[i]->name, mt[i]->what);
        st = a4w4_coverage_add(cov, "fault", what, fc ? fc->rule : "(no rule: a new mutant?)",
                               p->cases, p->ncases, fc ? fc->exposes : no_rule, NULL);
    }
    return st;
}

static void print_item(const coverage_plan *p, const a4w4_cov_item *it, int all)
{
    printf("%-7s %s [%s]: ", it->group, it->what, it->rule);
    if (!it->ncases) {
        printf("NONE\n");
        return;
    }
    size_t shown = all ? it->ncases : (it->ncases < SHOWN_CASES ? it->ncases : SHOWN_CASES);
    printf("%zu case%s", it->ncases, it->ncases == 1 ? "" : "s");
    for (size_t i = 0; i < shown; i++)
        printf("%s%s", i ? ", " : ": ", p->cases[it->cases[i]].name);
    if (shown < it->ncases)
        printf(", ...");
    printf("\n");
}

static void render(const coverage_opts *o, const coverage_plan *p, const a4w4_coverage *cov)
{
    size_t per[6] = {0};
    static const char *const groups[6] = {"bucket", "tile_M", "tile_N", "edge", "grid", "fault"};
    for (size_t i = 0; i < cov->n; i++)
        for (int g = 0; g < 6; g++)
            per[g] += !strcmp(cov->items[i].group, groups[g]);
    printf("coverage of %s: %zu cases; %zu padded-M buckets of %zu tuned tables, %zu tile_M "
           "and %zu tile_N, %zu regime edges, %zu grids, %zu fault classes\n",
           o->cases ? o->cases : DEFAULT_CASES, p->ncases, per[0], p->ntuned, per[1], per[2],
           per[3], per[4], per[5]);
    for (size_t i = 0; i < cov->n; i++)
        print_item(p, &cov->items[i], o->all);
    printf("uncovered: %zu of %zu items\n", a4w4_coverage_uncovered(cov), cov->n);
}

int cmd_coverage(int argc, char **argv)
{
    coverage_opts o;
    memset(&o, 0, sizeof o);
    o.tuned = (a4w4_opt_strings){o.tuned_v, 0, MAX_TUNED};
    a4w4_args pos;
    int rc = a4w4_options_parse(&coverage_spec, &o, argc, argv, &pos);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    coverage_plan p;
    memset(&p, 0, sizeof p);
    a4w4_coverage cov = {0};
    rc = plan_coverage(&o, &p);
    if (rc == -1 && build(&p, &cov) != A4W4_ST_OK) {
        a4w4_errorf("coverage: out of memory");
        rc = a4w4_exit_code(A4W4_ST_NOMEM);
    }
    if (rc == -1) {
        render(&o, &p, &cov);
        rc = a4w4_coverage_uncovered(&cov) ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
        if (fflush(stdout) != 0) {
            a4w4_errorf("coverage: cannot write the output");
            rc = A4W4_EXIT_IO;
        }
    }
    a4w4_coverage_free(&cov);
    plan_free(&p);
    return rc;
}
