/* cmd_selftest.c — `a4w4check selftest`: the mutation self-test. Every mutant
 * (mutants.h) runs through a4w4_run_case beside the correct backends on a small matrix
 * (cases/selftest.csv); the harness must give each mutant a failing verdict on some case and
 * every correct backend a pass on every case it applies to. A harness that never fails proves
 * nothing: this is the proof that it catches each known class of fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
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
    "\n"
    "  --gpu           also the GPU mutants and the GPU backends (exit 3 without a GPU)\n"
    "  --cases FILE    the matrix (default cases/selftest.csv)\n"
    "  --only LIST     only these mutants (comma-separated names; see --list)\n"
    "  --list          list the mutants and their faults, run nothing\n"
    "  --verbose       one line per case and backend\n"
    "\n"
    "exit: 0 every mutant killed and every correct backend passes, 1 otherwise,\n"
    "      2 bad input, 3 --gpu without a usable GPU\n";

#define MAX_CORRECT 64
#define MAX_MUTANTS 128

typedef struct {
    a4w4_backend b;
    int killed;
    char kcase[96];
    char reason[640];
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

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t L = c ? (size_t)(c - p) : strlen(p);
        if (L == n && !strncmp(p, name, n))
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

int cmd_selftest(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(selftest_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    int gpu = 0, list = 0, verbose = 0;
    const char *cases_path = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--cases") || !strcmp(a, "--only")) && i + 1 >= argc) {
            a4w4_errorf("selftest: %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--gpu"))
            gpu = 1;
        else if (!strcmp(a, "--list"))
            list = 1;
        else if (!strcmp(a, "--verbose"))
            verbose = 1;
        else if (!strcmp(a, "--cases"))
            cases_path = argv[++i];
        else if (!strcmp(a, "--only"))
            only = argv[++i];
        else {
            a4w4_errorf("selftest: unknown argument '%s' (see a4w4check selftest --help)", a);
            return A4W4_EXIT_BADINPUT;
        }
    }
    size_t nmt;
    const a4w4_backend_type *const *mt = a4w4_mutant_types(&nmt);
    if (list) {
        for (size_t i = 0; i < nmt; i++)
            printf("%-22s %s%s\n", mt[i]->name, mt[i]->gpu ? "[gpu] " : "", mt[i]->what);
        return A4W4_EXIT_PASS;
    }
    if (only)
        for (const char *p = only; *p;) {
            const char *c = strchr(p, ',');
            size_t L = c ? (size_t)(c - p) : strlen(p);
            int found = 0;
            for (size_t i = 0; i < nmt; i++)
                found |= strlen(mt[i]->name) == L && !strncmp(mt[i]->name, p, L);
            if (!found) {
                a4w4_errorf("selftest: --only '%.*s' is not a mutant (see a4w4check selftest "
                            "--list)", (int)L, p);
                return A4W4_EXIT_BADINPUT;
            }
            p = c ? c + 1 : p + L;
        }

    char buf[4096], err[1024];
    if (!cases_path)
        cases_path = a4w4_data_path("cases/selftest.csv", buf, sizeof buf);
    a4w4_case *cases = NULL;
    size_t ncases = 0;
    if (a4w4_casefile_read(cases_path, &cases, &ncases, err, sizeof err)) {
        a4w4_errorf("selftest: %s", err);
        return A4W4_EXIT_BADINPUT;
    }

    static mutant_state ms[MAX_MUTANTS];
    static correct_state cs[MAX_CORRECT];
    size_t nm = 0, nc = 0;
    int rc = A4W4_EXIT_PASS;
    /* correct backends: the default selection (GPU ones only with --gpu) + the references */
    a4w4_backend def[MAX_CORRECT];
    char skipped[2048];
    size_t nd = a4w4_backend_defaults(def, MAX_CORRECT - 2, skipped, sizeof skipped);
    int gpu_usable = 0;
    for (size_t i = 0; i < nd; i++) {
        if (def[i].type->gpu && !gpu) {
            a4w4_backend_close(&def[i]);
            continue;
        }
        gpu_usable |= def[i].type->gpu;
        memset(&cs[nc], 0, sizeof cs[nc]);
        cs[nc++].b = def[i];
    }
    const a4w4_backend_type *refs[2] = {&a4w4_quantizer_ref, &a4w4_layout_ref};
    for (int i = 0; i < 2; i++) {
        memset(&cs[nc], 0, sizeof cs[nc]);
        if (a4w4_backend_open_type(refs[i], NULL, &cs[nc].b, err, sizeof err)) {
            a4w4_errorf("selftest: %s", err);
            rc = A4W4_EXIT_BADINPUT;
            goto out;
        }
        nc++;
    }
    for (size_t i = 0; i < nmt && nm < MAX_MUTANTS; i++) {
        if ((mt[i]->gpu && !gpu) || (only && !in_list(only, mt[i]->name)))
            continue;
        memset(&ms[nm], 0, sizeof ms[nm]);
        int orc = a4w4_backend_open_type(mt[i], NULL, &ms[nm].b, err, sizeof err);
        if (orc == A4W4_ST_NOGPU && mt[i]->gpu)
            continue; /* reported below as "no GPU backend or GPU mutant is usable" */
        if (orc) {
            a4w4_errorf("selftest: mutant %s", err);
            rc = a4w4_exit_code(orc);
            goto out;
        }
        gpu_usable |= mt[i]->gpu;
        nm++;
    }
    if (gpu && !gpu_usable) {
        for (size_t L = strlen(skipped); L && skipped[L - 1] == '\n'; L--)
            skipped[L - 1] = 0;
        for (char *p = skipped; *p; p++)
            if (*p == '\n')
                *p = ';';
        a4w4_errorf("selftest --gpu: no GPU backend or GPU mutant is usable here%s%s",
                    skipped[0] ? ": " : " (this build has none)", skipped);
        rc = A4W4_EXIT_NOGPU;
        goto out;
    }
    if (!nm) {
        a4w4_errorf("selftest: no mutant selected");
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }

    double t0 = a4w4_now();
    int oracle_fail = 0;
    char oracle_note[760] = "";
    for (size_t k = 0; k < ncases; k++) {
        a4w4_backend run[MAX_CORRECT + MAX_MUTANTS];
        size_t nr = 0;
        for (size_t i = 0; i < nc; i++)
            run[nr++] = cs[i].b;
        for (size_t i = 0; i < nm; i++)
            if (!ms[i].killed)
                run[nr++] = ms[i].b;
        a4w4_runner runner = {run, nr, 0};
        a4w4_entry_list el = {0};
        if (a4w4_run_case(&runner, &cases[k], &el, err, sizeof err) != A4W4_ST_OK) {
            a4w4_errorf("selftest: %s", err);
            a4w4_entry_list_free(&el);
            rc = A4W4_EXIT_BADINPUT;
            goto out;
        }
        for (size_t ei = 0; ei < el.n; ei++) {
            const a4w4_entry_result *e = &el.items[ei];
            const char *bn = e->backend, *v = a4w4_verdict_name(e->verdict);
            char why[640];
            int failed = e->verdict == A4W4_VERDICT_FAIL;
            if (failed)
                entry_reason(e, why, sizeof why);
            if (verbose)
                printf("  %-28s %-22s %s%s%s\n", cases[k].name, bn, v, failed ? "   " : "",
                       failed ? why : "");
            if (!strcmp(bn, "oracle")) {
                if (failed && !oracle_fail) {
                    oracle_fail = 1;
                    snprintf(oracle_note, sizeof oracle_note, "%s: %s", cases[k].name, why);
                }
                continue;
            }
            for (size_t i = 0; i < nm; i++)
                if (!ms[i].killed && !strcmp(ms[i].b.name, bn) && failed) {
                    ms[i].killed = 1;
                    snprintf(ms[i].kcase, sizeof ms[i].kcase, "%s", cases[k].name);
                    snprintf(ms[i].reason, sizeof ms[i].reason, "%s", why);
                }
            for (size_t i = 0; i < nc; i++)
                if (!strcmp(cs[i].b.name, bn)) {
                    if (failed) {
                        if (!cs[i].fail)
                            snprintf(cs[i].first_fail, sizeof cs[i].first_fail, "%s: %s",
                                     cases[k].name, why);
                        cs[i].fail++;
                    } else if (e->verdict == A4W4_VERDICT_PASS)
                        cs[i].pass++;
                    else
                        cs[i].na++;
                }
        }
        a4w4_entry_list_free(&el);
    }
    double secs = a4w4_now() - t0;

    size_t killed = 0, good = 0;
    printf("selftest: %zu cases (%s), %zu mutants, %zu correct backends\n", ncases, cases_path,
           nm, nc);
    printf("mutants:\n");
    for (size_t i = 0; i < nm; i++) {
        killed += (size_t)ms[i].killed;
        if (ms[i].killed)
            printf("  KILLED   %-22s by %s: %s\n", ms[i].b.name, ms[i].kcase, ms[i].reason);
        else
            printf("  SURVIVED %-22s (%s): no case of the matrix failed it\n", ms[i].b.name,
                   ms[i].b.type->what);
    }
    printf("correct backends:\n");
    for (size_t i = 0; i < nc; i++) {
        int ok = !cs[i].fail && cs[i].pass > 0;
        good += (size_t)ok;
        printf("  %-8s %-22s %zu pass, %zu fail, %zu n/a%s%s\n", ok ? "PASS" : "FAIL",
               cs[i].b.name, cs[i].pass, cs[i].fail, cs[i].na,
               cs[i].fail ? "; first: " : !cs[i].pass ? "; passed no case (proves nothing)" : "",
               cs[i].fail ? cs[i].first_fail : "");
    }
    if (oracle_fail)
        printf("oracle: FAIL %s\n", oracle_note);
    printf("kill rate: %zu/%zu (%.0f%%); correct backends passing: %zu/%zu; %.2f s\n", killed,
           nm, 100.0 * (double)killed / (double)nm, good, nc, secs);
    rc = killed == nm && good == nc && !oracle_fail ? A4W4_EXIT_PASS : A4W4_EXIT_MISMATCH;
out:
    for (size_t i = 0; i < nm; i++)
        a4w4_backend_close(&ms[i].b);
    for (size_t i = 0; i < nc; i++)
        a4w4_backend_close(&cs[i].b);
    free(cases);
    if (fflush(stdout) != 0) {
        a4w4_errorf("selftest: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
