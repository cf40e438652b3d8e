/* cmd_report.c — `a4w4check report`: render a results document (results.json, validated
 * against the versioned schema) as Markdown, self-contained HTML and JUnit XML (reports/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"

static const char report_usage[] =
    "usage: a4w4check report RESULTS.json [--format md|html|junit|all] [--out DIR|-]\n"
    "                        [--reproducible] [--tuned CSV | --no-tuned]\n"
    "                        [--kernels CSV | --no-dispatch] [--quiet]\n"
    "\n"
    "Renders a results document (results.json of run or merge; a directory means\n"
    "DIR/results.json) after validating it against the results schema (a4w4check-results/1):\n"
    "  md     DIR/summary.md   verdict per backend and contract, every failure with its\n"
    "                          coordinates and hex values, environment, a table per group\n"
    "  html   DIR/report.html  self-contained page: summary, hazard map (M x N per backend,\n"
    "                          the N <= 128 fence, dispatch picks on hover), mismatches, ULP\n"
    "                          histograms of bounded backends, timing, every case\n"
    "  junit  DIR/junit.xml    JUnit XML, one testcase per case x backend\n"
    "  all    the three (default)\n"
    "\n"
    "  --out DIR       where to write (default: the directory of RESULTS.json); '-' writes\n"
    "                  one format to standard output\n"
    "  --reproducible  leave out timings and the environment (same results, same bytes)\n"
    "  --tuned CSV, --no-tuned, --kernels CSV, --no-dispatch\n"
    "                  ignored, accepted for old scripts: the hazard map's dispatch picks\n"
    "                  come from the route, policy and hazard fields run wrote into each entry\n"
    "  --quiet         do not list the files written\n"
    "\n"
    "exit: 0 written, 2 bad input (unreadable, malformed JSON, schema violation, usage),\n"
    "      4 an output could not be written\n";

typedef struct {
    const char *ext, *file;
    char *(*render)(const cJSON *, const a4w4_report_opts *);
} format;

static const format formats[] = {{"md", "summary.md", a4w4_report_markdown},
                                 {"html", "report.html", a4w4_report_html},
                                 {"junit", "junit.xml", a4w4_report_junit}};
#define NFORMATS (sizeof formats / sizeof formats[0])

int cmd_report(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(report_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *input = NULL, *out = NULL, *fmt = "all", *tuned = NULL, *kernels = NULL;
    int no_tuned = 0, no_dispatch = 0, quiet = 0;
    a4w4_report_opts o = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--format") || !strcmp(a, "--out") || !strcmp(a, "--tuned") ||
                    !strcmp(a, "--kernels");
        if (takes && i + 1 >= argc) {
            a4w4_errorf("report: option %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--format"))
            fmt = argv[++i];
        else if (!strcmp(a, "--out"))
            out = argv[++i];
        else if (!strcmp(a, "--tuned"))
            tuned = argv[++i];
        else if (!strcmp(a, "--kernels"))
            kernels = argv[++i];
        else if (!strcmp(a, "--no-tuned"))
            no_tuned = 1;
        else if (!strcmp(a, "--no-dispatch"))
            no_dispatch = 1;
        else if (!strcmp(a, "--reproducible"))
            o.reproducible = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (a[0] == '-' && a[1]) {
            a4w4_errorf("report: unknown option '%s' (see a4w4check report --help)", a);
            return A4W4_EXIT_BADINPUT;
        } else if (input) {
            a4w4_errorf("report: one RESULTS.json at a time ('%s' and '%s' given)", input, a);
            return A4W4_EXIT_BADINPUT;
        } else
            input = a;
    }
    if (!input) {
        a4w4_errorf("report: no RESULTS.json given (usage: a4w4check report RESULTS.json ...)");
        return A4W4_EXIT_BADINPUT;
    }
    int want[NFORMATS] = {0}, nwant = 0;
    for (size_t f = 0; f < NFORMATS; f++) {
        want[f] = !strcmp(fmt, "all") || !strcmp(fmt, formats[f].ext);
        nwant += want[f];
    }
    if (!nwant) {
        a4w4_errorf("report: --format '%s' is not one of md, html, junit, all", fmt);
        return A4W4_EXIT_BADINPUT;
    }
    if ((tuned && no_tuned) || (kernels && no_dispatch)) {
        a4w4_errorf("report: --%s and --no-%s exclude each other",
                    tuned && no_tuned ? "tuned" : "kernels",
                    tuned && no_tuned ? "tuned" : "dispatch");
        return A4W4_EXIT_BADINPUT;
    }
    int to_stdout = out && !strcmp(out, "-");
    if (to_stdout && nwant != 1) {
        a4w4_errorf("report: --out - writes one format to standard output; give --format md, html "
                    "or junit");
        return A4W4_EXIT_BADINPUT;
    }
    char err[1024], dirbuf[4096];
    cJSON *doc = a4w4_results_load(input, err, sizeof err);
    if (!doc) {
        a4w4_errorf("report: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (!out) { /* the input's directory */
        snprintf(dirbuf, sizeof dirbuf, "%s", input);
        size_t L = strlen(dirbuf);
        if (L > 5 && !strcmp(dirbuf + L - 5, ".json")) {
            char *slash = strrchr(dirbuf, '/');
            if (slash)
                *slash = 0;
            else
                snprintf(dirbuf, sizeof dirbuf, ".");
        }
        out = dirbuf;
    }
    o.source = input;
    int rc = A4W4_EXIT_PASS;
    if (!to_stdout && a4w4_mkdir_p(out, err, sizeof err)) {
        a4w4_errorf("report: --out %s", err);
        rc = A4W4_EXIT_IO;
    }
    for (size_t f = 0; f < NFORMATS && rc == A4W4_EXIT_PASS; f++) {
        if (!want[f])
            continue;
        char *text = formats[f].render(doc, &o);
        if (!text) {
            a4w4_errorf("report: %s: out of memory rendering %s", input, formats[f].ext);
            rc = A4W4_EXIT_IO;
            break;
        }
        if (to_stdout) {
            if (fputs(text, stdout) == EOF || fflush(stdout)) {
                a4w4_errorf("report: cannot write standard output");
                rc = A4W4_EXIT_IO;
            }
        } else {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", out, formats[f].file);
            if (a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
                a4w4_errorf("report: %s", err);
                rc = A4W4_EXIT_IO;
            } else if (!quiet) {
                fprintf(stderr, "a4w4check report: wrote %s\n", path);
            }
        }
        free(text);
    }
    cJSON_Delete(doc);
    return rc;
}
