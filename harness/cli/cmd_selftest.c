/* cmd_selftest.c — `a4w4check selftest`: the mutation self-test. Every mutant
 * (mutants.h) runs through a4w4_run_case beside the correct backends on a small matrix
 * (cases/selftest.csv); the harness must give each mutant a failing verdict on some case and
 * every correct backend a pass on every case it applies to. A harness that never fails proves
 * nothing: this is the proof that it catches each known class of fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "options.h"
#include "registry.h"
#include "casefile.h"
#include "mutants.h"
#include "quantizers.h"
#include "selftest.h"

static const char selftest_usage[] =
    "usage: a4w4check selftest [--gpu] [--cases FILE] [--only NAME,...] [--plugin LIB,...]\n"
    "                          [--list] [--verbose] [--quiet]\n"
    "\n"
    "Runs every mutant (a deliberately wrong GEMM, quantizer or layout transform) and the\n"
    "correct backends (cpu-asm, cpu-fallback, ref-quant, ref-layout; with --gpu also the HIP\n"
    "ones) through the runner on a small matrix, exactly as `run` does: per-contract output\n"
    "comparison, poison, guard zones, pad-dependence variants, quantizer and layout bytes.\n"
    "Prints, per mutant, the first case that killed it and the check that did, then the kill\n"
    "rate and each correct backend's verdicts.\n"
    "\n";

typedef struct {
    int gpu, list, verbose, quiet;
    const char *cases_path;
    a4w4_opt_list only, plugins;
} selftest_opts;

static const a4w4_option selftest_options[] = {
    OPT_FLAG("gpu", selftest_opts, gpu, "also the GPU mutants and the GPU backends (exit 3 without a GPU)"),
    OPT_STRING("cases", selftest_opts, cases_path, "FILE", "the matrix (default cases/selftest.csv)"),
    OPT_LIST("only", selftest_opts, only, "LIST", "only these mutants (comma-separated names; see --list)"),
    OPT_LIST("plugin", selftest_opts, plugins, "LIST", "also these plugin kernels as mutants (LIB.so paths, comma-separated; docs/backends.md): each must be killed"),
    OPT_FLAG("list", selftest_opts, list, "list the mutants and their faults, run nothing"),
    OPT_FLAG("verbose", selftest_opts, verbose, "one line per case and backend"),
    OPT_FLAG("quiet", selftest_opts, quiet, A4W4_QUIET_HELP),
    OPT_END(),
};

static const a4w4_command_spec selftest_spec = {
    "selftest", selftest_usage, selftest_options, NULL,
    "exit: 0 every mutant killed and every correct backend passes, 1 otherwise,\n"
    "      2 bad input, 3 --gpu without a usable GPU\n"};

static int in_list(const a4w4_opt_list *list, const char *name)
{
    for (size_t i = 0; i < list->n; i++)
        if (!strcmp(list->item[i], name))
            return 1;
    return 0;
}

/* Every --only name must be a mutant. Returns the exit code. */
static int check_only(const selftest_opts *o, const a4w4_backend_type *const *mt, size_t nmt)
{
    for (size_t k = 0; k < o->only.n; k++) {
        int found = 0;
        for (size_t i = 0; i < nmt; i++)
            found |= !strcmp(mt[i]->name, o->only.item[k]);
        if (!found) {
            a4w4_errorf("selftest: --only '%s' is not a mutant (see a4w4check selftest --list)",
                        o->only.item[k]);
            return A4W4_EXIT_BADINPUT;
        }
    }
    return A4W4_EXIT_PASS;
}

/* Correct backends: the default selection (GPU ones only with --gpu) + the references.
 * *gpu_usable: a GPU backend is among them. skipped: the types the defaults left out. */
static int open_correct(const selftest_opts *o, a4w4_selftest *p, int *gpu_usable,
                        char *skipped, size_t skippedlen)
{
    char err[1024];
    a4w4_backend def[A4W4_SELFTEST_MAX_CORRECT];
    size_t nd = a4w4_backend_defaults(def, A4W4_SELFTEST_MAX_CORRECT - 2, skipped, skippedlen);
    for (size_t i = 0; i < nd; i++) {
        if (def[i].type->gpu && !o->gpu) {
            a4w4_backend_close(&def[i]);
            continue;
        }
        *gpu_usable |= def[i].type->gpu;
        memset(&p->cs[p->nc], 0, sizeof p->cs[p->nc]);
        p->cs[p->nc++].b = def[i];
    }
    const a4w4_backend_type *refs[2] = {&a4w4_quantizer_ref, &a4w4_layout_ref};
    for (int i = 0; i < 2; i++) {
        memset(&p->cs[p->nc], 0, sizeof p->cs[p->nc]);
        if (a4w4_backend_open_type(refs[i], NULL, &p->cs[p->nc].b, err, sizeof err)) {
            a4w4_errorf("selftest: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        p->nc++;
    }
    return A4W4_EXIT_PASS;
}

/* The mutants (--only's, GPU ones with --gpu). Returns the exit code. */
static int open_mutants(const selftest_opts *o, const a4w4_backend_type *const *mt, size_t nmt,
                        a4w4_selftest *p, int *gpu_usable)
{
    char err[1024];
    for (size_t i = 0; i < nmt && p->nm < A4W4_SELFTEST_MAX_MUTANTS; i++) {
        if ((mt[i]->gpu && !o->gpu) || (o->only.text && !in_list(&o->only, mt[i]->name)))
            continue;
        memset(&p->ms[p->nm], 0, sizeof p->ms[p->nm]);
        int orc = a4w4_backend_open_type(mt[i], NULL, &p->ms[p->nm].b, err, sizeof err);
        if (orc == A4W4_ST_NOGPU && mt[i]->gpu)
            continue; /* reported below as "no GPU backend or GPU mutant is usable" */
        if (orc) {
            a4w4_errorf("selftest: mutant %s", err);
            return a4w4_exit_code(orc);
        }
        *gpu_usable |= mt[i]->gpu;
        p->nm++;
    }
    size_t nfr;
    const a4w4_backend_type *const *fr = a4w4_field_repro_types(&nfr);
    for (size_t i = 0; !o->only.text && i < nfr && p->nfr < sizeof p->fr / sizeof p->fr[0]; i++) {
        memset(&p->fr[p->nfr], 0, sizeof p->fr[p->nfr]);
        if (a4w4_backend_open_type(fr[i], NULL, &p->fr[p->nfr].b, err, sizeof err)) {
            a4w4_errorf("selftest: field reproduction %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        p->nfr++;
    }
    for (size_t k = 0; k < o->plugins.n && p->nm < A4W4_SELFTEST_MAX_MUTANTS; k++) {
        char spec[1100];
        snprintf(spec, sizeof spec, "plugin:%s", o->plugins.item[k]);
        memset(&p->ms[p->nm], 0, sizeof p->ms[p->nm]);
        if (a4w4_backend_open(spec, &p->ms[p->nm].b, err, sizeof err)) {
            a4w4_errorf("selftest: --plugin %s", err);
            return A4W4_EXIT_BADINPUT;
        }
        p->nm++;
    }
    return A4W4_EXIT_PASS;
}

/* Open the correct backends and the mutants. Returns the exit code. */
static int plan_selftest(const selftest_opts *o, const a4w4_backend_type *const *mt, size_t nmt,
                         a4w4_selftest *p)
{
    char skipped[2048];
    int gpu_usable = 0;
    int rc = open_correct(o, p, &gpu_usable, skipped, sizeof skipped);
    if (rc == A4W4_EXIT_PASS)
        rc = open_mutants(o, mt, nmt, p, &gpu_usable);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    if (o->gpu && !gpu_usable) {
        for (size_t L = strlen(skipped); L && skipped[L - 1] == '\n'; L--)
            skipped[L - 1] = 0;
        for (char *q = skipped; *q; q++)
            if (*q == '\n')
                *q = ';';
        a4w4_errorf("selftest --gpu: no GPU backend or GPU mutant is usable here%s%s",
                    skipped[0] ? ": " : " (this build has none)", skipped);
        return A4W4_EXIT_NOGPU;
    }
    if (!p->nm) {
        a4w4_errorf("selftest: no mutant selected");
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* --verbose: one line per case and backend. */
static void print_entry(void *user, const a4w4_case *c, const a4w4_entry_result *e,
                        const char *why)
{
    (void)user;
    printf("  %-28s %-22s %s%s%s\n", c->name, e->backend, a4w4_verdict_name(e->verdict),
           why[0] ? "   " : "", why);
}

/* Every case through the backends. Returns the exit code. */
static int run_cases(const selftest_opts *o, a4w4_selftest *p, const a4w4_case *cases,
                     size_t ncases)
{
    char err[1024];
    for (size_t k = 0; k < ncases; k++)
        if (a4w4_selftest_run_case(p, &cases[k], o->verbose ? print_entry : NULL, NULL, err,
                                   sizeof err) != A4W4_ST_OK) {
            a4w4_errorf("selftest: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
    return A4W4_EXIT_PASS;
}

/* The GPU judge's mutant on the first matrix-unit backend: "GPU judge mutant: ..." (n/a
 * without a device judge). Returns the exit code given rc so far. */
static int judge_mutant(const a4w4_case *cases, size_t ncases, int rc)
{
    char dwhy[256], err[1024], why[1024];
    const a4w4_devjudge *dev = a4w4_backend_devjudge(dwhy, sizeof dwhy);
    a4w4_backend b;
    int k = -1;
    if (!dev || a4w4_backend_open("hip-mma-32x128", &b, err, sizeof err)) {
        snprintf(why, sizeof why, "%s", dev ? err : dwhy);
    } else {
        k = a4w4_selftest_judge_mutant(dev, &b, cases, ncases, why, sizeof why);
        a4w4_backend_close(&b);
    }
    printf("GPU judge mutant: %s%s\n", k > 0 ? "KILLED by " : k == 0 ? "SURVIVED: " : "n/a: ",
           why);
    return k == 0 ? A4W4_EXIT_MISMATCH : rc;
}

/* The mutants x criteria table: each peer criterion (engine/criteria.h) on the outputs of the
 * entry that killed each mutant, the bit-exact verdict last; then per criterion how many of
 * the mutants killed on GEMM outputs it missed. */
static void print_criteria_table(const a4w4_selftest *p)
{
    size_t nc;
    const a4w4_criterion *c = a4w4_criteria(&nc);
    printf("tolerance criteria on each mutant's killing entry (docs/criteria.md):\n  %-22s",
           "mutant");
    for (size_t j = 0; j < nc; j++)
        printf(" %-8s", c[j].column);
    printf(" bit-exact\n");
    size_t missed[A4W4_CRITERIA_MAX] = {0}, outputs = 0;
    for (size_t i = 0; i < p->nm; i++) {
        const a4w4_selftest_mutant *m = &p->ms[i];
        printf("  %-22s", m->b.name);
        for (size_t j = 0; j < nc; j++) {
            const char *cell = a4w4_selftest_criterion_cell(m, j);
            missed[j] += !strcmp(cell, "missed");
            printf(" %-8s", cell);
        }
        outputs += m->killed && m->ntol;
        printf(" %s\n", m->killed ? "caught" : "missed");
    }
    printf("  missed of the %zu mutants killed on GEMM outputs:", outputs);
    for (size_t j = 0; j < nc; j++)
        printf("%s %s %zu", j ? "," : "", c[j].column, missed[j]);
    printf("\n  columns:");
    for (size_t j = 0; j < nc; j++)
        printf("%s %s = %s", j ? ";" : "", c[j].column, c[j].label);
    printf("\n");
}

/* The same table for the field's bug classes, each through the mutant or field reproduction
 * that shows it on GEMM outputs (backends/mutants.h a4w4_field_bug_classes). */
static void print_field_table(const a4w4_selftest *p)
{
    size_t nc, nb;
    const a4w4_criterion *c = a4w4_criteria(&nc);
    const a4w4_field_bug_class *fb = a4w4_field_bug_classes(&nb);
    printf("the same for the field's bug classes, each through its reproduction:\n  %-48s",
           "bug class (reproduction)");
    for (size_t j = 0; j < nc; j++)
        printf(" %-8s", c[j].column);
    printf(" bit-exact\n");
    for (size_t i = 0; i < nb; i++) {
        const a4w4_selftest_mutant *m = a4w4_selftest_find(p, fb[i].repro);
        char row[160];
        snprintf(row, sizeof row, "%s (%s)", fb[i].bug, fb[i].repro);
        printf("  %-48s", row);
        for (size_t j = 0; j < nc; j++)
            printf(" %-8s", m ? a4w4_selftest_criterion_cell(m, j) : "not run");
        printf(" %s\n", !m ? "not run" : m->killed ? "caught" : "missed");
    }
}

/* The verdicts: per mutant, per correct backend, the kill rate. Returns the exit code. */
static int print_report(const a4w4_selftest *p, size_t ncases, const char *cases_path,
                        double secs)
{
    printf("selftest: %zu cases (%s), %zu mutants, %zu correct backends\n", ncases, cases_path,
           p->nm, p->nc);
    printf("mutants:\n");
    for (size_t i = 0; i < p->nm; i++) {
        const a4w4_selftest_mutant *m = &p->ms[i];
        if (m->killed) {
            printf("  KILLED   %-22s by %s: %s\n", m->b.name, m->kcase, m->reason);
            if (m->signature[0])
                printf("           signature: %s\n", m->signature);
        } else
            printf("  SURVIVED %-22s (%s): no case of the matrix failed it\n", m->b.name,
                   m->b.type->what);
    }
    printf("correct backends:\n");
    for (size_t i = 0; i < p->nc; i++) {
        const a4w4_selftest_correct *c = &p->cs[i];
        printf("  %-8s %-22s %zu pass, %zu fail, %zu n/a%s%s\n",
               a4w4_selftest_correct_ok(c) ? "PASS" : "FAIL", c->b.name, c->pass, c->fail, c->na,
               c->fail ? "; first: " : !c->pass ? "; passed no case (proves nothing)" : "",
               c->fail ? c->first_fail : "");
        char inv[700];
        if (c->inv_done) {
            a4w4_inv_measured_text(&c->inv, inv, sizeof inv);
            printf("           batch invariance: %s\n", inv);
        }
    }
    if (p->oracle_fail)
        printf("oracle: FAIL %s\n", p->oracle_note);
    for (size_t i = 0; i < p->nfr; i++)
        printf("  %s %-22s (field reproduction) %s%s%s\n", p->fr[i].killed ? "KILLED  " : "SURVIVED",
               p->fr[i].b.name, p->fr[i].killed ? "by " : "", p->fr[i].killed ? p->fr[i].kcase : "",
               p->fr[i].killed ? "" : ": no case of the matrix failed it");
    print_criteria_table(p);
    print_field_table(p);
    size_t killed = a4w4_selftest_killed(p);
    printf("kill rate: %zu/%zu (%.0f%%); correct backends passing: %zu/%zu; %.2f s\n", killed,
           p->nm, 100.0 * (double)killed / (double)p->nm, a4w4_selftest_correct_passing(p),
           p->nc, secs);
    return a4w4_selftest_passed(p) ? A4W4_EXIT_PASS : A4W4_EXIT_MISMATCH;
}

/* --list: the mutants and their faults. */
static int list_mutants(const a4w4_backend_type *const *mt, size_t nmt)
{
    for (size_t i = 0; i < nmt; i++)
        printf("%-22s %s%s\n", mt[i]->name, mt[i]->gpu ? "[gpu] " : "", mt[i]->what);
    return A4W4_EXIT_PASS;
}

int cmd_selftest(int argc, char **argv)
{
    selftest_opts o = {0};
    a4w4_args args;
    int rc = a4w4_options_parse(&selftest_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    size_t nmt;
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nmt);
    if (o.list)
        return list_mutants(mt, nmt);
    if ((rc = check_only(&o, mt, nmt)) != A4W4_EXIT_PASS)
        return rc;
    char buf[4096], err[1024];
    if (!o.cases_path)
        o.cases_path = a4w4_data_path("cases/selftest.csv", buf, sizeof buf);
    a4w4_case *cases = NULL;
    size_t ncases = 0;
    if (a4w4_casefile_read(o.cases_path, &cases, &ncases, err, sizeof err)) {
        a4w4_errorf("selftest: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    static a4w4_selftest p; /* large: a mutant's and a backend's state each */
    memset(&p, 0, sizeof p);
    rc = plan_selftest(&o, mt, nmt, &p);
    double t0 = a4w4_now();
    if (rc == A4W4_EXIT_PASS)
        rc = run_cases(&o, &p, cases, ncases);
    if (rc == A4W4_EXIT_PASS && a4w4_selftest_invariance(&p, 65, 64, 1024, err, sizeof err)) {
        a4w4_errorf("selftest: batch invariance: %s", err);
        rc = A4W4_EXIT_BADINPUT;
    }
    if (rc == A4W4_EXIT_PASS)
        rc = print_report(&p, ncases, o.cases_path, a4w4_now() - t0);
    if (o.gpu && (rc == A4W4_EXIT_PASS || rc == A4W4_EXIT_MISMATCH))
        rc = judge_mutant(cases, ncases, rc);
    for (size_t i = 0; i < p.nm; i++)
        a4w4_backend_close(&p.ms[i].b);
    for (size_t i = 0; i < p.nfr; i++)
        a4w4_backend_close(&p.fr[i].b);
    for (size_t i = 0; i < p.nc; i++)
        a4w4_backend_close(&p.cs[i].b);
    free(cases);
    if (fflush(stdout) != 0) {
        a4w4_errorf("selftest: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
