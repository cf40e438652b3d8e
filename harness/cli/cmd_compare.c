/* cmd_compare.c — `a4w4check compare`: the parity report between two runs or two paths:
 * cases newly failing, newly passing, outputs whose bits changed, timing ratios with their
 * geometric mean (reports/compare.c). Exit 1 on any new failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"

#define MAX_PAIRS 32

static const char compare_usage[] =
    "usage: a4w4check compare BASE.json CAND.json [--out DIR] [--format md|html|json|all]\n"
    "                         [--pair BASE_BACKEND=CAND_BACKEND]... [--slower RATIO]\n"
    "                         [--min-ms MS] [--reproducible] [--quiet]\n"
    "\n"
    "Compares two results documents (results.json of run or merge; a directory means\n"
    "DIR/results.json) entry by entry, matched by case name and backend:\n"
    "  new failures     fail in CAND, not failing (or absent) in BASE\n"
    "  fixed            fail in BASE, pass in CAND\n"
    "  bits changed     the checked output bits differ: y_hash when both runs record it,\n"
    "                   else a differing mismatch record; unknown otherwise\n"
    "  timing           CAND/BASE time per entry, the geometric mean, entries slower by RATIO\n"
    "Two paths in one comparison: --pair cpu-fallback=cpu-asm matches BASE's cpu-fallback\n"
    "entries with CAND's cpu-asm entries (repeatable).\n"
    "\n"
    "  --out DIR       write DIR/compare.md, compare.html, compare.json (per --format;\n"
    "                  default all); without --out the Markdown goes to standard output\n"
    "  --format F      md, html, json or all\n"
    "  --slower RATIO  list entries at least RATIO times slower (default 1.25)\n"
    "  --min-ms MS     time only entries of at least MS in both runs (default 0.05)\n"
    "  --reproducible  leave out timings\n"
    "  --quiet         do not list the files written\n"
    "\n"
    "exit: 0 no new failure, 1 at least one new failure, 2 bad input (unreadable, malformed\n"
    "      JSON, schema violation, usage), 4 an output could not be written\n";

static int parse_positive(const char *opt, const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (!*s || *end || !(v > 0) || v > 1e9) {
        a4w4_errorf("compare: %s '%s' must be a positive number", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(compare_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *in[2] = {NULL, NULL}, *out = NULL, *fmt = NULL;
    const char *pb[MAX_PAIRS], *pc[MAX_PAIRS];
    char pairbuf[MAX_PAIRS][512];
    size_t np = 0;
    int nin = 0, quiet = 0;
    a4w4_compare_opts co = {pb, pc, 0, 0, 0};
    a4w4_report_opts ro = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--out") || !strcmp(a, "--format") || !strcmp(a, "--pair") ||
                    !strcmp(a, "--slower") || !strcmp(a, "--min-ms");
        if (takes && i + 1 >= argc) {
            a4w4_errorf("compare: option %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--out"))
            out = argv[++i];
        else if (!strcmp(a, "--format"))
            fmt = argv[++i];
        else if (!strcmp(a, "--pair")) {
            const char *v = argv[++i];
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1] || strlen(v) >= sizeof pairbuf[0]) {
                a4w4_errorf("compare: --pair '%s' must be BASE_BACKEND=CAND_BACKEND", v);
                return A4W4_EXIT_BADINPUT;
            }
            if (np == MAX_PAIRS) {
                a4w4_errorf("compare: more than %d --pair options", MAX_PAIRS);
                return A4W4_EXIT_BADINPUT;
            }
            snprintf(pairbuf[np], sizeof pairbuf[np], "%s", v);
            pairbuf[np][eq - v] = 0;
            pb[np] = pairbuf[np];
            pc[np] = pairbuf[np] + (eq - v) + 1;
            np++;
        } else if (!strcmp(a, "--slower")) {
            if (parse_positive(a, argv[++i], &co.slower_ratio))
                return A4W4_EXIT_BADINPUT;
        } else if (!strcmp(a, "--min-ms")) {
            if (parse_positive(a, argv[++i], &co.min_ms))
                return A4W4_EXIT_BADINPUT;
        } else if (!strcmp(a, "--reproducible"))
            ro.reproducible = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (a[0] == '-' && a[1]) {
            a4w4_errorf("compare: unknown option '%s' (see a4w4check compare --help)", a);
            return A4W4_EXIT_BADINPUT;
        } else if (nin == 2) {
            a4w4_errorf("compare: two results files only (BASE and CAND); '%s' is a third", a);
            return A4W4_EXIT_BADINPUT;
        } else
            in[nin++] = a;
    }
    co.npairs = np;
    if (nin != 2) {
        a4w4_errorf("compare: need BASE.json and CAND.json (usage: a4w4check compare BASE CAND)");
        return A4W4_EXIT_BADINPUT;
    }
    if (!fmt)
        fmt = out ? "all" : "md";
    int want_md = !strcmp(fmt, "md") || !strcmp(fmt, "all");
    int want_html = !strcmp(fmt, "html") || !strcmp(fmt, "all");
    int want_json = !strcmp(fmt, "json") || !strcmp(fmt, "all");
    if (!want_md && !want_html && !want_json) {
        a4w4_errorf("compare: --format '%s' is not one of md, html, json, all", fmt);
        return A4W4_EXIT_BADINPUT;
    }
    if (!out && want_md + want_html + want_json != 1) {
        a4w4_errorf("compare: without --out one format goes to standard output; give --format md, "
                    "html or json");
        return A4W4_EXIT_BADINPUT;
    }
    char err[1024];
    cJSON *doc[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        doc[k] = a4w4_results_load(in[k], err, sizeof err);
        if (!doc[k]) {
            a4w4_errorf("compare: %s", err);
            cJSON_Delete(doc[0]);
            return A4W4_EXIT_BADINPUT;
        }
    }
    cJSON *cmp = a4w4_compare(doc[0], doc[1], &co);
    cJSON_Delete(doc[0]);
    cJSON_Delete(doc[1]);
    if (!cmp) {
        a4w4_errorf("compare: out of memory comparing %s and %s", in[0], in[1]);
        return A4W4_EXIT_IO;
    }
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cmp, "base"), "source", in[0]);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cmp, "cand"), "source", in[1]);
    int rc = A4W4_EXIT_PASS;
    if (out && a4w4_mkdir_p(out, err, sizeof err)) {
        a4w4_errorf("compare: --out %s", err);
        rc = A4W4_EXIT_IO;
    }
    static const char *const files[3] = {"compare.md", "compare.html", "compare.json"};
    int want[3] = {want_md, want_html, want_json};
    for (int f = 0; f < 3 && rc == A4W4_EXIT_PASS; f++) {
        if (!want[f])
            continue;
        char *text = f == 0   ? a4w4_compare_markdown(cmp, &ro)
                     : f == 1 ? a4w4_compare_html(cmp, &ro)
                              : cJSON_Print(cmp);
        if (!text) {
            a4w4_errorf("compare: out of memory rendering %s", files[f]);
            rc = A4W4_EXIT_IO;
            break;
        }
        if (!out) {
            if (fputs(text, stdout) == EOF || (f == 2 && fputc('\n', stdout) == EOF) ||
                fflush(stdout)) {
                a4w4_errorf("compare: cannot write standard output");
                rc = A4W4_EXIT_IO;
            }
        } else {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", out, files[f]);
            size_t L = strlen(text);
            if (f == 2) { /* end the JSON with a newline like the other files */
                char *t2 = realloc(text, L + 2);
                if (t2) {
                    text = t2;
                    text[L++] = '\n';
                    text[L] = 0;
                }
            }
            if (a4w4_write_atomic(path, text, L, err, sizeof err)) {
                a4w4_errorf("compare: %s", err);
                rc = A4W4_EXIT_IO;
            } else if (!quiet)
                fprintf(stderr, "a4w4check compare: wrote %s\n", path);
        }
        free(text);
    }
    int nf = a4w4_compare_new_failures(cmp);
    if (rc == A4W4_EXIT_PASS && !quiet) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(cmp, "totals");
        fprintf(stderr,
                "a4w4check compare: %d new failures, %d fixed, %d outputs whose bits changed, "
                "%d of %d matched entries slower by >= %.2fx\n",
                nf, cJSON_GetObjectItemCaseSensitive(t, "fixed")->valueint,
                cJSON_GetObjectItemCaseSensitive(t, "bits_changed")->valueint,
                cJSON_GetObjectItemCaseSensitive(t, "slower")->valueint,
                cJSON_GetObjectItemCaseSensitive(t, "matched")->valueint,
                co.slower_ratio > 0 ? co.slower_ratio : 1.25);
    }
    cJSON_Delete(cmp);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    return nf ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
}
