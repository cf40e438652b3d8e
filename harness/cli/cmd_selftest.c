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
#include "runner.h"

static const char selftest_usage[] =
    "usage: a4w4check selftest [--gpu] [--cases FILE] [--only NAME,...] [--list] [--verbose]\n"
    "\n"
    "Runs every mutant (a deliberately wrong GEMM, quantizer or layout transform) and the\n"
    "correct backends (cpu-asm, cpu-fallback, ref-quant, ref-layout; with --gpu also the HIP\n"
    "ones) through the runner on a small matrix, exactly as `run` does: per-contract output\n"
    "comparison, poison, guard zones, pad-dependence variants, quantizer and layout bytes.\n"
    "Prints, per mutant, the first case that killed it and the check that did, then the kill\n"
    "rate and each correct backend's verdicts.\n"
    "\n";

typedef struct {
    int gpu, list, verbose;
    const char *cases_path;
    a4w4_opt_list only;
} selftest_opts;

static const a4w4_option selftest_options[] = {
    OPT_FLAG("gpu", selftest_opts, gpu, "also the GPU mutants and the GPU backends (exit 3 without a GPU)"),
    OPT_STRING("cases", selftest_opts, cases_path, "FILE", "the matrix (default cases/selftest.csv)"),
    OPT_LIST("only", selftest_opts, only, "LIST", "only these mutants (comma-separated names; see --list)"),
    OPT_FLAG("list", selftest_opts, list, "list the mutants and their faults, run nothing"),
    OPT_FLAG("verbose", selftest_opts, verbose, "one line per case and backend"),
    OPT_END(),
};

static const a4w4_command_spec selftest_spec = {
    "selftest", selftest_usage, selftest_options, NULL,
    "exit: 0 every mutant killed and every correct backend passes, 1 otherwise,\n"
    "      2 bad input, 3 --gpu without a usable GPU\n"};

#define MAX_CORRECT 64
#define MAX_MUTANTS 128

typedef struct {
    a4w4_backend b;
    int killed;
    char kcase[96];
    char reason[640];
    char signature[384]; /* the killing entry's (engine/signature.h) */
} mutant_state;

typedef struct {
    a4w4_backend b;
    size_t pass, fail, na;
    char first_fail[760];
} correct_state;

/* One line saying why an entry failed: the first mismatch, then the runner's note. */
static void entry_reason(const a4w4_entry_result *e, char *buf, size_t len)
{
    const a4w4_mismatch *fm = e->nfirst ? &e->first[0] : NULL;
    size_t u = 0;
    buf[0] = 0;
    if (e->mismatches > 0 && fm) {
        int outputs = !strcmp(fm->tensor, "y");
        char got[16], exp[16];
        a4w4_mismatch_hex(fm->got, fm->elem_bytes, got);
        a4w4_mismatch_hex(fm->expected, fm->elem_bytes, exp);
        u += (size_t)snprintf(buf, len, "%zu of %zu %s differ, first%s%s at (%zu, %zu): "
                              "got %s expected %s",
                              e->mismatches, e->checked, outputs ? "outputs" : "bytes",
                              outputs ? "" : " in ", outputs ? "" : fm->tensor, fm->row, fm->col,
                              got, exp);
    }
    if (e->note[0] && u < len)
        snprintf(buf + u, len - u, "%s%.*s", u ? "; " : "", (int)(len - u), e->note);
    if (!buf[0])
        snprintf(buf, len, "verdict fail");
}

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

/* The backends of a self-test: the correct ones, then the mutants. */
typedef struct {
    mutant_state ms[MAX_MUTANTS];
    correct_state cs[MAX_CORRECT];
    size_t nm, nc;
    int oracle_fail;
    char oracle_note[760];
} selftest_plan;

/* Correct backends: the default selection (GPU ones only with --gpu) + the references.
 * *gpu_usable: a GPU backend is among them. skipped: the types the defaults left out. */
static int open_correct(const selftest_opts *o, selftest_plan *p, int *gpu_usable,
                        char *skipped, size_t skippedlen)
{
    char err[1024];
    a4w4_backend def[MAX_CORRECT];
    size_t nd = a4w4_backend_defaults(def, MAX_CORRECT - 2, skipped, skippedlen);
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
                        selftest_plan *p, int *gpu_usable)
{
    char err[1024];
    for (size_t i = 0; i < nmt && p->nm < MAX_MUTANTS; i++) {
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
    return A4W4_EXIT_PASS;
}

/* Open the correct backends and the mutants. Returns the exit code. */
static int plan_selftest(const selftest_opts *o, const a4w4_backend_type *const *mt, size_t nmt,
                         selftest_plan *p)
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

/* One runner entry of case c: the oracle's, a mutant's (the first failure kills it) or a
 * correct backend's verdict. */
static void tally_entry(const selftest_opts *o, selftest_plan *p, const a4w4_case *c,
                        const a4w4_entry_result *e)
{
    const char *bn = e->backend, *v = a4w4_verdict_name(e->verdict);
    char why[640];
    int failed = e->verdict == A4W4_VERDICT_FAIL;
    if (failed)
        entry_reason(e, why, sizeof why);
    if (o->verbose)
        printf("  %-28s %-22s %s%s%s\n", c->name, bn, v, failed ? "   " : "", failed ? why : "");
    if (!strcmp(bn, "oracle")) {
        if (failed && !p->oracle_fail) {
            p->oracle_fail = 1;
            snprintf(p->oracle_note, sizeof p->oracle_note, "%s: %s", c->name, why);
        }
        return;
    }
    for (size_t i = 0; i < p->nm; i++)
        if (!p->ms[i].killed && !strcmp(p->ms[i].b.name, bn) && failed) {
            p->ms[i].killed = 1;
            snprintf(p->ms[i].kcase, sizeof p->ms[i].kcase, "%s", c->name);
            snprintf(p->ms[i].reason, sizeof p->ms[i].reason, "%s", why);
            snprintf(p->ms[i].signature, sizeof p->ms[i].signature, "%s", e->signature);
        }
    for (size_t i = 0; i < p->nc; i++)
        if (!strcmp(p->cs[i].b.name, bn)) {
            if (failed) {
                if (!p->cs[i].fail)
                    snprintf(p->cs[i].first_fail, sizeof p->cs[i].first_fail, "%s: %s", c->name,
                             why);
                p->cs[i].fail++;
            } else if (e->verdict == A4W4_VERDICT_PASS)
                p->cs[i].pass++;
            else
                p->cs[i].na++;
        }
}

/* Case c through the correct backends and the mutants not yet killed. Returns the exit code. */
static int run_one_case(const selftest_opts *o, selftest_plan *p, const a4w4_case *c)
{
    char err[1024];
    a4w4_backend run[MAX_CORRECT + MAX_MUTANTS];
    size_t nr = 0;
    for (size_t i = 0; i < p->nc; i++)
        run[nr++] = p->cs[i].b;
    for (size_t i = 0; i < p->nm; i++)
        if (!p->ms[i].killed)
            run[nr++] = p->ms[i].b;
    /* the mutants are judged by the project's contract, E8M0 code 0 read as 2^-127 (contracts §1):
     * mut-e8m0-code0 reads 2^-126 and must die */
    a4w4_runner runner = {.backends = run, .nbackends = nr, .code0_reading = A4W4_CODE0_OCP};
    a4w4_entry_list el = {0};
    if (a4w4_run_case(&runner, c, &el, err, sizeof err) != A4W4_ST_OK) {
        a4w4_errorf("selftest: %s", err);
        a4w4_entry_list_free(&el);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t ei = 0; ei < el.n; ei++)
        tally_entry(o, p, c, &el.items[ei]);
    a4w4_entry_list_free(&el);
    return A4W4_EXIT_PASS;
}

/* The GPU judge's mutant (a deliberately wrong judge, devjudge.h set_fault): the first case
 * through a matrix-unit backend judged on the device must fail its oracle entry by the C
 * oracles' re-check. Returns 1 killed, 0 survived, -1 no device judge here; why says how. */
static int judge_mutant(const a4w4_case *cases, size_t ncases, char *why, size_t whylen)
{
    char dwhy[256], err[1024];
    const a4w4_devjudge *dev = a4w4_backend_devjudge(dwhy, sizeof dwhy);
    a4w4_backend b;
    if (!dev || a4w4_backend_open("hip-mma-32x128", &b, err, sizeof err)) {
        snprintf(why, whylen, "%s", dev ? err : dwhy);
        return -1;
    }
    a4w4_runner r = {.backends = &b, .nbackends = 1, .dev = dev};
    int killed = 0;
    dev->set_fault(dev->self, 1);
    for (size_t k = 0; k < ncases && !killed; k++) {
        a4w4_entry_list el = {0};
        if (a4w4_run_case(&r, &cases[k], &el, err, sizeof err) == A4W4_ST_OK && el.n &&
            el.items[0].verdict == A4W4_VERDICT_FAIL && strstr(el.items[0].note, "DISAGREES")) {
            killed = 1;
            snprintf(why, whylen, "%s: %s", cases[k].name, el.items[0].note);
        }
        a4w4_entry_list_free(&el);
    }
    dev->set_fault(dev->self, 0);
    a4w4_backend_close(&b);
    if (!killed)
        snprintf(why, whylen, "no case's re-check by the C oracles failed it");
    return killed;
}

/* The verdicts: per mutant, per correct backend, the kill rate. Returns the exit code. */
static int print_report(const selftest_plan *p, size_t ncases, const char *cases_path,
                        double secs)
{
    size_t killed = 0, good = 0;
    printf("selftest: %zu cases (%s), %zu mutants, %zu correct backends\n", ncases, cases_path,
           p->nm, p->nc);
    printf("mutants:\n");
    for (size_t i = 0; i < p->nm; i++) {
        const mutant_state *m = &p->ms[i];
        killed += (size_t)m->killed;
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
        const correct_state *c = &p->cs[i];
        int ok = !c->fail && c->pass > 0;
        good += (size_t)ok;
        printf("  %-8s %-22s %zu pass, %zu fail, %zu n/a%s%s\n", ok ? "PASS" : "FAIL", c->b.name,
               c->pass, c->fail, c->na,
               c->fail ? "; first: " : !c->pass ? "; passed no case (proves nothing)" : "",
               c->fail ? c->first_fail : "");
    }
    if (p->oracle_fail)
        printf("oracle: FAIL %s\n", p->oracle_note);
    printf("kill rate: %zu/%zu (%.0f%%); correct backends passing: %zu/%zu; %.2f s\n", killed,
           p->nm, 100.0 * (double)killed / (double)p->nm, good, p->nc, secs);
    return killed == p->nm && good == p->nc && !p->oracle_fail ? A4W4_EXIT_PASS
                                                              : A4W4_EXIT_MISMATCH;
}

int cmd_selftest(int argc, char **argv)
{
    selftest_opts o = {0, 0, 0, NULL, {0}};
    a4w4_args args;
    int rc = a4w4_options_parse(&selftest_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    size_t nmt;
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nmt);
    if (o.list) {
        for (size_t i = 0; i < nmt; i++)
            printf("%-22s %s%s\n", mt[i]->name, mt[i]->gpu ? "[gpu] " : "", mt[i]->what);
        return A4W4_EXIT_PASS;
    }
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
    static selftest_plan p; /* large: a mutant's and a backend's state each */
    memset(&p, 0, sizeof p);
    rc = plan_selftest(&o, mt, nmt, &p);
    double t0 = a4w4_now();
    for (size_t k = 0; k < ncases && rc == A4W4_EXIT_PASS; k++)
        rc = run_one_case(&o, &p, &cases[k]);
    if (rc == A4W4_EXIT_PASS)
        rc = print_report(&p, ncases, o.cases_path, a4w4_now() - t0);
    if (o.gpu && (rc == A4W4_EXIT_PASS || rc == A4W4_EXIT_MISMATCH)) {
        char why[1024];
        int k = judge_mutant(cases, ncases, why, sizeof why);
        printf("GPU judge mutant: %s%s\n", k > 0 ? "KILLED by " : k == 0 ? "SURVIVED: " : "n/a: ",
               why);
        if (k == 0)
            rc = A4W4_EXIT_MISMATCH;
    }
    for (size_t i = 0; i < p.nm; i++)
        a4w4_backend_close(&p.ms[i].b);
    for (size_t i = 0; i < p.nc; i++)
        a4w4_backend_close(&p.cs[i].b);
    free(cases);
    if (fflush(stdout) != 0) {
        a4w4_errorf("selftest: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
