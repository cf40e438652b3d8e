/* cmd_compare.c — `a4w4check compare`: the parity report between two runs or two paths:
 * cases newly failing, newly passing, outputs whose bits changed, timing ratios with their
 * geometric mean (reports/compare.c). Exit 1 on any new failure, else 5 when CAND's verdict
 * is INCOMPLETE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "a4w4check.h"
#include "compare_kept.h"
#include "compare_outputs.h"
#include "doc_verdict.h"
#include "ledger.h"
#include "options.h"
#include "results.h"

#define MAX_PAIRS 32

static const char compare_usage[] =
    "usage: a4w4check compare BASE.json CAND.json [--out DIR] [--format md|html|json|all]\n"
    "                         [--pair BASE_BACKEND=CAND_BACKEND]... [--slower RATIO]\n"
    "                         [--min-ms MS] [--reproducible] [--quiet]\n"
    "\n"
    "Compares two results documents (results.json of run or merge; a directory means\n"
    "DIR/results.json) entry by entry, matched by case name and backend:\n"
    "  new failures     fail in CAND, not failing (or absent) in BASE\n"
    "  fixed            fail in BASE, pass in CAND under the same contract (a pass\n"
    "                   under another contract is a verdict change, named per backend)\n"
    "  bits changed     the checked output bits differ: y_hash when both runs record it,\n"
    "                   else a differing mismatch record; unknown otherwise\n"
    "  timing           CAND/BASE time per entry, the geometric mean, entries slower by RATIO\n"
    "Two paths in one comparison: --pair cpu-fallback=cpu-asm matches BASE's cpu-fallback\n"
    "entries with CAND's cpu-asm entries (repeatable); a name without an entry in its\n"
    "document is refused (exit 2).\n"
    "Runs made with run --keep-outputs DIR: per entry the parity of their outputs (bit-equal,\n"
    "differ, max ULP, the peers' criteria on the difference); what could not be compared, why.\n"
    "--outputs: BASE and CAND are output bundle directories (python -m a4w4check.external's,\n"
    "or any bundle:DIR) of the same operands; per case the outputs bit-equal, those that\n"
    "differ, the largest ULP distance and the peers' criteria on the difference (exit 1\n"
    "when some output differs, 5 when a case is in one directory only).\n"
    "\n";

enum { FMT_MD, FMT_HTML, FMT_JSON, FMT_ALL };
static const char *const format_names[] = {"md", "html", "json", "all", NULL};

/* The --pair options: BASE_BACKEND in pb[i], CAND_BACKEND in pc[i] (into pairbuf[i]). */
typedef struct {
    const char *pb[MAX_PAIRS], *pc[MAX_PAIRS];
    char pairbuf[MAX_PAIRS][512];
    size_t np;
} compare_pairs;

typedef struct {
    const char *out, *known;
    int format, quiet, outputs; /* format: -1 until given */
    compare_pairs pairs;
    a4w4_compare_opts co;
    a4w4_report_opts ro;
} compare_opts;

/* --pair BASE_BACKEND=CAND_BACKEND, repeatable. */
static int parse_pair(const a4w4_option *opt, void *field, const char *v, char *err,
                      size_t errlen)
{
    (void)opt;
    compare_pairs *p = field;
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1] || strlen(v) >= sizeof p->pairbuf[0]) {
        snprintf(err, errlen, "--pair '%s' must be BASE_BACKEND=CAND_BACKEND", v);
        return -1;
    }
    if (p->np == MAX_PAIRS) {
        snprintf(err, errlen, "more than %d --pair options", MAX_PAIRS);
        return -1;
    }
    snprintf(p->pairbuf[p->np], sizeof p->pairbuf[p->np], "%s", v);
    p->pairbuf[p->np][eq - v] = 0;
    p->pb[p->np] = p->pairbuf[p->np];
    p->pc[p->np] = p->pairbuf[p->np] + (eq - v) + 1;
    p->np++;
    return 0;
}

/* A positive number (a double field), at most 1e9. */
static int parse_positive(const a4w4_option *opt, void *field, const char *s, char *err,
                          size_t errlen)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (!(*s == '.' || (*s >= '0' && *s <= '9')) || *end || !(v > 0) || v > 1e9) {
        snprintf(err, errlen, "--%s '%s' must be a positive number", opt->name, s);
        return -1;
    }
    *(double *)field = v;
    return 0;
}

static const a4w4_option compare_options[] = {
    OPT_STRING("out", compare_opts, out, "DIR",
               "write DIR/compare.md, compare.html, compare.json (per --format;\n"
               "default all); without --out the Markdown goes to standard output"),
    OPT_CHOICE("format", compare_opts, format, "F", format_names, "md, html, json or all"),
    OPT_CALLBACKS("pair", compare_opts, pairs, "B=C", parse_pair,
                 "match BASE's backend B with CAND's backend C (repeatable)"),
    OPT_CALLBACK("slower", compare_opts, co.slower_ratio, "RATIO", parse_positive,
                 "list entries at least RATIO times slower (default 1.25)"),
    OPT_CALLBACK("min-ms", compare_opts, co.min_ms, "MS", parse_positive,
                 "time only entries of at least MS in both runs (default 0.05)"),
    OPT_FLAG("reproducible", compare_opts, ro.reproducible, "leave out timings"),
    OPT_FLAG("outputs", compare_opts, outputs,
             "BASE and CAND are output bundle directories: parity of their outputs\n"
             "(Markdown on standard output, or compare.md and compare.json in --out)"),
    OPT_STRING("known", compare_opts, known, "FILE",
               "known-failures ledger applied to both documents (default\n"
               "cases/known-failures.csv when it exists; 'none': the annotations\n"
               "the documents hold): a known failure (XFAIL) is no new failure"),
    OPT_FLAG("quiet", compare_opts, quiet, A4W4_QUIET_HELP),
    OPT_END(),
};

static const a4w4_command_spec compare_spec = {
    "compare", compare_usage, compare_options, "BASE.json CAND.json",
    "exit: 0 no new failure, 1 at least one new failure, 2 bad input (unreadable, malformed\n"
    "      JSON, schema violation, a document that contradicts itself, usage), 4 an output\n"
    "      could not be written, 5 no new failure but CAND lacks entries BASE has (a lost\n"
    "      backend, case, every entry, another matrix) or CAND's verdict is INCOMPLETE\n"};

/* Two inputs; the format (default: all with --out, else md) and only one without --out.
 * Returns -1 when valid, else the exit code. */
static int check_args(compare_opts *o, const a4w4_args *args)
{
    if (args->n > 2) {
        a4w4_errorf("compare: two results files only (BASE and CAND); '%s' is a third",
                    args->v[2]);
        return A4W4_EXIT_BADINPUT;
    }
    if (args->n != 2) {
        a4w4_errorf("compare: need BASE.json and CAND.json (usage: a4w4check compare BASE CAND)");
        return A4W4_EXIT_BADINPUT;
    }
    if (o->format < 0)
        o->format = o->out ? FMT_ALL : FMT_MD;
    if (!o->out && o->format == FMT_ALL) {
        a4w4_errorf("compare: without --out one format goes to standard output; give --format md, "
                    "html or json");
        return A4W4_EXIT_BADINPUT;
    }
    o->co.pair_base = o->pairs.pb;
    o->co.pair_cand = o->pairs.pc;
    o->co.npairs = o->pairs.np;
    return -1;
}

/* 1 when some entry of doc has backend name. */
static int has_backend(const cJSON *doc, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "backend");
        if (cJSON_IsString(b) && !strcmp(b->valuestring, name))
            return 1;
    }
    return 0;
}

/* Every --pair B=C names a backend of BASE's entries (B) and of CAND's (C): a pair that
 * matches nothing would silently compare nothing. Returns the exit code. */
static int check_pairs(const compare_opts *o, const a4w4_args *in, cJSON *const doc[2])
{
    for (size_t i = 0; i < o->pairs.np; i++) {
        const char *name[2] = {o->pairs.pb[i], o->pairs.pc[i]};
        for (int k = 0; k < 2; k++) {
            if (has_backend(doc[k], name[k]))
                continue;
            a4w4_errorf("compare: --pair %s=%s: backend '%s' has no entry in %s %s%s", name[0],
                        name[1], name[k], k ? "CAND" : "BASE", in->v[k],
                        has_backend(doc[1 - k], name[k]) ? " (it is in the other document: "
                                                           "swap the pair?)"
                                                         : " nor in the other document");
            return A4W4_EXIT_BADINPUT;
        }
    }
    return A4W4_EXIT_PASS;
}

/* 1 when doc records the verdict INCOMPLETE (something expected was not checked); its
 * reason into why. */
static int doc_incomplete(const cJSON *doc, char *why, size_t len)
{
    doc_verdict v; /* a PASS its own counts contradict reads as INCOMPLETE (doc_verdict.h) */
    doc_verdict_read(doc, &v);
    if (doc_verdict_index(&v) != 2)
        return 0;
    snprintf(why, len, "%s", *v.reason ? v.reason : "no reason recorded");
    return 1;
}

/* Both documents compared; the sources recorded; *incomplete set when CAND's verdict is
 * INCOMPLETE (its reason in why). NULL after the error (*rc: exit code). */
static cJSON *compare_docs(const compare_opts *o, const a4w4_args *in, int *rc,
                           int *incomplete, char *why, size_t whylen)
{
    char err[1024];
    cJSON *doc[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        doc[k] = a4w4_results_read(in->v[k], err, sizeof err);
        if (!doc[k] || (*rc = a4w4_apply_ledger("compare", o->known, doc[k]))) {
            if (!doc[k])
                a4w4_errorf("compare: %s", err);
            cJSON_Delete(doc[0]);
            cJSON_Delete(doc[1]);
            *rc = A4W4_EXIT_BADINPUT;
            return NULL;
        }
    }
    *incomplete = doc_incomplete(doc[1], why, whylen);
    *rc = check_pairs(o, in, doc);
    cJSON *cmp = *rc == A4W4_EXIT_PASS ? a4w4_compare(doc[0], doc[1], &o->co) : NULL;
    if (cmp && a4w4_compare_kept(doc[0], doc[1], (const char *const *)o->pairs.pb,
                                 (const char *const *)o->pairs.pc, o->pairs.np, cmp)) {
        cJSON_Delete(cmp);
        cmp = NULL;
    }
    cJSON_Delete(doc[0]);
    cJSON_Delete(doc[1]);
    if (*rc != A4W4_EXIT_PASS)
        return NULL;
    if (!cmp) {
        a4w4_errorf("compare: out of memory comparing %s and %s", in->v[0], in->v[1]);
        *rc = A4W4_EXIT_IO;
        return NULL;
    }
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cmp, "base"), "source", in->v[0]);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(cmp, "cand"), "source", in->v[1]);
    return cmp;
}

/* Render format f (FMT_MD, FMT_HTML, FMT_JSON) to --out's file or standard output.
 * Returns the exit code. */
static int render_one(const compare_opts *o, const cJSON *cmp, int f)
{
    static const char *const files[3] = {"compare.md", "compare.html", "compare.json"};
    char err[1024];
    char *text = f == FMT_MD     ? a4w4_compare_markdown(cmp, &o->ro)
                 : f == FMT_HTML ? a4w4_compare_html(cmp, &o->ro)
                                 : cJSON_Print(cmp);
    if (!text) {
        a4w4_errorf("compare: out of memory rendering %s", files[f]);
        return A4W4_EXIT_IO;
    }
    int rc = A4W4_EXIT_PASS;
    if (!o->out) {
        if (fputs(text, stdout) == EOF || (f == FMT_JSON && fputc('\n', stdout) == EOF) ||
            fflush(stdout)) {
            a4w4_errorf("compare: cannot write standard output");
            rc = A4W4_EXIT_IO;
        }
    } else {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", o->out, files[f]);
        size_t L = strlen(text);
        if (f == FMT_JSON) { /* end the JSON with a newline like the other files */
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
        } else if (!o->quiet)
            fprintf(stderr, "a4w4check compare: wrote %s\n", path);
    }
    free(text);
    return rc;
}

/* The one-line summary on stderr. */
static void print_totals(const compare_opts *o, const cJSON *cmp, int nf)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cmp, "totals");
    fprintf(stderr,
            "a4w4check compare: %d new failures, %d fixed, %d outputs whose bits changed, "
            "%d of %d matched entries slower by >= %.2fx\n",
            nf, cJSON_GetObjectItemCaseSensitive(t, "fixed")->valueint,
            cJSON_GetObjectItemCaseSensitive(t, "bits_changed")->valueint,
            cJSON_GetObjectItemCaseSensitive(t, "slower")->valueint,
            cJSON_GetObjectItemCaseSensitive(t, "matched")->valueint,
            o->co.slower_ratio > 0 ? o->co.slower_ratio : 1.25);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cmp, "output_parity");
    const cJSON *opw = cJSON_GetObjectItemCaseSensitive(op, "why");
    int kept_any = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(op, "base_dir")) ||
                   cJSON_IsString(cJSON_GetObjectItemCaseSensitive(op, "cand_dir"));
    if (cJSON_IsString(opw)) {
        if (kept_any || !o->quiet) /* one run kept its outputs: said even under --quiet */
            fprintf(stderr, "a4w4check compare: %s\n", opw->valuestring);
    } else if (op)
        fprintf(stderr, "a4w4check compare: kept outputs: %d entries compared, %d with outputs "
                "that differ, %d not compared (compare.md says why)\n",
                cJSON_GetObjectItemCaseSensitive(op, "compared")->valueint,
                cJSON_GetObjectItemCaseSensitive(op, "differ")->valueint,
                cJSON_GetObjectItemCaseSensitive(op, "not_compared")->valueint);
    const cJSON *k; /* even with --quiet: a verdict under another contract is no fix */
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(cmp, "contract_changes"))
        fprintf(stderr, "a4w4check compare: contract changed for %s: %s -> %s (%d entries; "
                "a pass under it is not counted as fixed)\n",
                cJSON_GetObjectItemCaseSensitive(k, "backend")->valuestring,
                cJSON_GetObjectItemCaseSensitive(k, "base")->valuestring,
                cJSON_GetObjectItemCaseSensitive(k, "cand")->valuestring,
                cJSON_GetObjectItemCaseSensitive(k, "entries")->valueint);
}

int cmd_compare(int argc, char **argv)
{
    compare_opts o;
    memset(&o, 0, sizeof o);
    o.format = -1;
    a4w4_args in;
    int rc = a4w4_options_parse(&compare_spec, &o, argc, argv, &in);
    if (rc == A4W4_OPTS_CONTINUE && o.outputs && (o.format >= 0 || o.pairs.np || o.known)) {
        a4w4_errorf("compare: --format, --pair and --known do not apply to --outputs (it "
                    "writes Markdown, or compare.md and compare.json in --out)");
        return A4W4_EXIT_BADINPUT;
    }
    if (rc == A4W4_OPTS_CONTINUE)
        rc = check_args(&o, &in);
    if (rc != -1)
        return rc;
    if (o.outputs)
        return a4w4_compare_outputs(in.v[0], in.v[1], o.out, o.quiet);
    int incomplete;
    char why[1024];
    cJSON *cmp = compare_docs(&o, &in, &rc, &incomplete, why, sizeof why);
    if (!cmp)
        return rc;
    char err[1024];
    rc = A4W4_EXIT_PASS;
    if (o.out && a4w4_mkdir_p(o.out, err, sizeof err)) {
        a4w4_errorf("compare: --out %s", err);
        rc = A4W4_EXIT_IO;
    }
    for (int f = FMT_MD; f <= FMT_JSON && rc == A4W4_EXIT_PASS; f++)
        if (o.format == FMT_ALL || o.format == f)
            rc = render_one(&o, cmp, f);
    int nf = a4w4_compare_new_failures(cmp), lost = a4w4_compare_losses(cmp);
    if (rc == A4W4_EXIT_PASS) /* the result: kept under --quiet */
        print_totals(&o, cmp, nf);
    char first_lost[400] = "";
    const cJSON *fl = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cmp, "only_base"), 0);
    if (fl)
        snprintf(first_lost, sizeof first_lost, "%s on %s",
                 cJSON_GetObjectItemCaseSensitive(fl, "name")->valuestring,
                 cJSON_GetObjectItemCaseSensitive(fl, "backend")->valuestring);
    cJSON_Delete(cmp);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    if (nf)
        return A4W4_EXIT_MISMATCH;
    if (lost) { /* what the candidate no longer checks is no pass either */
        a4w4_errorf("compare: %s lacks %d entr%s of %s (first: %s): a lost backend, case or "
                    "matrix is not a pass", in.v[1], lost, lost == 1 ? "y" : "ies", in.v[0],
                    first_lost);
        return A4W4_EXIT_INCOMPLETE;
    }
    if (incomplete) { /* no new failure is no pass over what was never checked */
        a4w4_errorf("compare: %s has verdict INCOMPLETE (%s): not everything was checked",
                    in.v[1], why);
        return A4W4_EXIT_INCOMPLETE;
    }
    return A4W4_EXIT_PASS;
}
