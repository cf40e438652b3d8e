/* cmd_report.c — `a4w4check report`: render a results document (results.json, validated
 * against the versioned schema) as Markdown, self-contained HTML and JUnit XML (reports/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"
#include "options.h"
#include "results.h"


static const char report_usage[] =
    "usage: a4w4check report RESULTS.json [--format md|html|junit|all] [--out DIR|-]\n"
    "                        [--reproducible] [--quiet]\n"
    "\n"
    "Renders a results document (results.json of run or merge; a directory means\n"
    "DIR/results.json) after validating it against the results schema\n"
    "(a4w4check-results/2, or the older 1):\n"
    "  md     DIR/summary.md   verdict per backend and contract, every failure with its\n"
    "                          coordinates and hex values, environment, a table per group\n"
    "  html   DIR/report.html  self-contained page: summary, hazard map (M x N per backend,\n"
    "                          the N <= 128 fence, dispatch picks on hover), mismatches, ULP\n"
    "                          histograms of bounded backends, timing, every case\n"
    "  junit  DIR/junit.xml    JUnit XML, one testcase per case x backend\n"
    "  all    the three (default)\n"
    "\n";

typedef struct {
    const char *ext, *file;
    char *(*render)(const cJSON *, const a4w4_report_opts *);
} format;

static const format formats[] = {{"md", "summary.md", a4w4_report_markdown},
                                 {"html", "report.html", a4w4_report_html},
                                 {"junit", "junit.xml", a4w4_report_junit}};
#define NFORMATS (sizeof formats / sizeof formats[0])
#define FORMAT_ALL ((int)NFORMATS) /* the index of "all" among format_names */

static const char *const format_names[] = {"md", "html", "junit", "all", NULL};

typedef struct {
    const char *out, *tuned, *kernels;
    int format, no_tuned, no_dispatch, quiet;
    a4w4_report_opts ro;
} report_opts;

static const a4w4_option report_options[] = {
    OPT_CHOICE("format", report_opts, format, "F", format_names, "md, html, junit or all (default all)"),
    OPT_STRING("out", report_opts, out, "DIR",
               "where to write (default: the directory of RESULTS.json); '-' writes\n"
               "one format to standard output"),
    OPT_FLAG("reproducible", report_opts, ro.reproducible,
             "leave out timings and the environment (same results, same bytes)"),
    OPT_FLAG("quiet", report_opts, quiet, A4W4_QUIET_HELP),
    /* ignored since the hazard map's dispatch picks come from the route, policy and hazard
     * fields run writes into each entry */
    OPT_OLD_STRING("tuned", report_opts, tuned, A4W4_OPT_IGNORED),
    OPT_OLD_FLAG("no-tuned", report_opts, no_tuned, A4W4_OPT_IGNORED),
    OPT_OLD_STRING("kernels", report_opts, kernels, A4W4_OPT_IGNORED),
    OPT_OLD_FLAG("no-dispatch", report_opts, no_dispatch, A4W4_OPT_IGNORED),
    OPT_END(),
};

static const a4w4_command_spec report_spec = {
    "report", report_usage, report_options, "RESULTS.json",
    "exit: 0 written, 2 bad input (unreadable, malformed JSON, schema violation, usage),\n"
    "      4 an output could not be written\n"};

/* The checks between options: one input, one format for '-'. Returns -1 when valid, else the exit code. */
static int check_args(const report_opts *o, const a4w4_args *args)
{
    if (args->n > 1) {
        a4w4_errorf("report: one RESULTS.json at a time ('%s' and '%s' given)", args->v[0],
                    args->v[1]);
        return A4W4_EXIT_BADINPUT;
    }
    if (!args->n) {
        a4w4_errorf("report: no RESULTS.json given (usage: a4w4check report RESULTS.json ...)");
        return A4W4_EXIT_BADINPUT;
    }
    if (o->out && !strcmp(o->out, "-") && o->format == FORMAT_ALL) {
        a4w4_errorf("report: --out - writes one format to standard output; give --format md, html "
                    "or junit");
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* Where the files go: --out, or the input's directory (dirbuf). */
static const char *out_dir(const report_opts *o, const char *input, char *dirbuf, size_t len)
{
    if (o->out)
        return o->out;
    snprintf(dirbuf, len, "%s", input);
    size_t L = strlen(dirbuf);
    if (L > 5 && !strcmp(dirbuf + L - 5, ".json")) {
        char *slash = strrchr(dirbuf, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(dirbuf, len, ".");
    }
    return dirbuf;
}

/* Render format f of doc into out (or stdout for --out -). Returns the exit code. */
static int render_one(const report_opts *o, const cJSON *doc, size_t f, const char *input,
                      const char *out, int to_stdout)
{
    char err[1024];
    char *text = formats[f].render(doc, &o->ro);
    if (!text) {
        a4w4_errorf("report: %s: out of memory rendering %s", input, formats[f].ext);
        return A4W4_EXIT_IO;
    }
    int rc = A4W4_EXIT_PASS;
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
        } else if (!o->quiet) {
            fprintf(stderr, "a4w4check report: wrote %s\n", path);
        }
    }
    free(text);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    report_opts o = {.format = FORMAT_ALL};
    a4w4_args args;
    int rc = a4w4_options_parse(&report_spec, &o, argc, argv, &args);
    if (rc == A4W4_OPTS_CONTINUE)
        rc = check_args(&o, &args);
    if (rc != -1)
        return rc;
    const char *input = args.v[0];
    char err[1024], dirbuf[4096];
    cJSON *doc = a4w4_results_read(input, err, sizeof err);
    if (!doc) {
        a4w4_errorf("report: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    const char *out = out_dir(&o, input, dirbuf, sizeof dirbuf);
    o.ro.source = input;
    int to_stdout = o.out && !strcmp(o.out, "-");
    rc = A4W4_EXIT_PASS;
    if (!to_stdout && a4w4_mkdir_p(out, err, sizeof err)) {
        a4w4_errorf("report: --out %s", err);
        rc = A4W4_EXIT_IO;
    }
    for (size_t f = 0; f < NFORMATS && rc == A4W4_EXIT_PASS; f++)
        if (o.format == FORMAT_ALL || o.format == (int)f)
            rc = render_one(&o, doc, f, input, out, to_stdout);
    cJSON_Delete(doc);
    return rc;
}
