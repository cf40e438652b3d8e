/* markdown.c — a4w4_report_markdown: the summary for a PR comment or a CI step summary (and
 * run's summary.md). Sections: verdict, one line per (backend, contract), failures with
 * coordinates and hex values, environment, a table per case group. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "doc_verdict.h"
#include "layer_parity.h"
#include "report_common.h"

static const a4w4_report_opts default_opts = {0, NULL};

/* "75 pass, 8 n/a" (zero counts left out; "no entries" when all are zero). */
static void counts_text(rbuf *b, const int n[NVERDICTS])
{
    int first = 1;
    for (int v = 0; v < NVERDICTS; v++)
        if (n[v]) {
            rb_printf(b, "%s%d %s", first ? "" : ", ", n[v], verdict_names[v]);
            first = 0;
        }
    if (first)
        rb_puts(b, "no entries");
}

/* A capture's layer and the line that called it: " (layer L at SITE)"; nothing for other
 * entries. */
static void layer_text(rbuf *b, const cJSON *e)
{
    if (!*jstr(e, "layer") && !*jstr(e, "call_site"))
        return;
    rb_puts(b, " (");
    if (*jstr(e, "layer")) {
        rb_puts(b, "layer ");
        rb_md(b, jstr(e, "layer"));
    }
    if (*jstr(e, "call_site")) {
        rb_puts(b, *jstr(e, "layer") ? " at " : "called at ");
        rb_md(b, jstr(e, "call_site"));
    }
    rb_puts(b, ")");
}

/* Entries with "parity" (layers: an ASM layer's output against the fallback path of the same
 * activation): one row each, the peers' verdicts on the difference as recorded. */
/* One map of an invariance document: its buckets as columns, each pair's cells as recorded. */
static void invariance_map(rbuf *b, const cJSON *m)
{
    static const char *const names[] = {"invariant", "variant", "nondeterministic", "unknown"};
    static const char *const marks[] = {"inv", "VAR", "nondet", "?"};
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "counts"), *x, *q;
    rb_puts(b, "### ");
    rb_md(b, jstr(m, "title"));
    rb_printf(b, "\n\n%.0f invariant, %.0f variant, %.0f nondeterministic, %.0f unknown over M "
              "1..%.0f", jnum(c, "invariant", 0), jnum(c, "variant", 0),
              jnum(c, "nondeterministic", 0), jnum(c, "unknown", 0), jnum(m, "m_max", 0));
    if (jnum(m, "first_break_M", 0) > 0)
        rb_printf(b, "; first break at M = %.0f", jnum(m, "first_break_M", 0));
    rb_puts(b, ".\n\n| N | K |");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(m, "buckets")) {
        double lo = cJSON_GetArrayItem(x, 0)->valuedouble, hi = cJSON_GetArrayItem(x, 1)->valuedouble;
        rb_printf(b, lo == hi ? " %.0f |" : " %.0f-%.0f |", lo, hi);
    }
    rb_puts(b, " first break |\n|---|---|");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(m, "buckets"))
        rb_puts(b, "---|");
    rb_puts(b, "---|\n");
    cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(m, "pairs")) {
        rb_printf(b, "| %.0f | %.0f |", jnum(q, "N", 0), jnum(q, "K", 0));
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(q, "cells"))
            for (int k = 0; k < 4; k++)
                if (cJSON_IsString(x) && !strcmp(x->valuestring, names[k]))
                    rb_printf(b, " %s |", marks[k]);
        rb_puts(b, " ");
        rb_md(b, jstr(q, "cause"));
        rb_puts(b, " |\n");
    }
    rb_puts(b, "\n");
}

/* `invariance --out`'s maps and measurements, as recorded (docs/cli/invariance.md). */
static void invariance_section(rbuf *b, const cJSON *doc)
{
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(doc, "invariance"), *x;
    if (!cJSON_IsObject(inv))
        return;
    rb_puts(b, "## Batch invariance\n\nCells: inv (every M of the bucket gives row i the bits "
               "it gets at M = 1), VAR (variant), nondet (bf16 atomics), ? (no declared "
               "contract decides).\n\n");
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(inv, "maps"))
        invariance_map(b, x);
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(inv, "measurements");
    if (cJSON_GetArraySize(ms) > 0)
        rb_puts(b, "### Measured\n\n| backend | N | K | M | measurement |\n|---|---:|---:|---:|---|\n");
    cJSON_ArrayForEach(x, ms) {
        rb_puts(b, "| ");
        rb_md(b, jstr(x, "backend"));
        rb_printf(b, " | %.0f | %.0f | %.0f | ", jnum(x, "N", 0), jnum(x, "K", 0), jnum(x, "M", 0));
        rb_md(b, jstr(x, "line"));
        rb_puts(b, " |\n");
    }
    rb_puts(b, cJSON_GetArraySize(ms) > 0 ? "\n" : "");
}

/* One failure, one line: where, how many, every recorded mismatch in hex. */
static void failure_line(rbuf *b, const cJSON *e)
{
    rb_puts(b, "- `");
    rb_puts(b, jstr(e, "name"));
    rb_puts(b, "`");
    layer_text(b, e);
    rb_puts(b, " on `");
    rb_puts(b, jstr(e, "backend"));
    rb_printf(b, "` (%s), M=%.0f N=%.0f K=%.0f, %s: ", jstr(e, "contract"), jnum(e, "M", 0),
              jnum(e, "N", 0), jnum(e, "K", 0), jstr(e, "regime"));
    double mism = jnum(e, "mismatches", 0), unw = jnum(e, "unwritten", 0);
    char counts[160];
    a4w4_report_differ_text(e, counts, sizeof counts);
    rb_puts(b, counts);
    if (unw > 0)
        rb_printf(b, " (%.0f never written)", unw);
    double mu = jnum(e, "max_ulp", -1);
    if (mism > 0 && mu > 0)
        rb_printf(b, ", max %.0f ULP", mu);
    else if (mism > 0 && mu < 0)
        rb_puts(b, ", ULP distance n/a (NaN against a number)");
    if (jhas(e, "bound_use"))
        rb_printf(b, ", largest distance %.3g times the bound", jnum(e, "bound_use", 0));
    const cJSON *m;
    int k = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(e, "first_mismatches")) {
        rb_printf(b, "%s %s(%.0f, %.0f) got %s expected %s", k ? ";" : ":",
                  *jstr(m, "tensor") ? jstr(m, "tensor") : "y", jnum(m, "row", 0),
                  jnum(m, "col", 0), jstr(m, "got"), jstr(m, "expected"));
        k++;
    }
    if (*jstr(e, "note")) {
        rb_puts(b, ". ");
        rb_md(b, jstr(e, "note"));
    }
    if (*jstr(e, "signature")) {
        rb_puts(b, ". Signature: ");
        rb_md(b, jstr(e, "signature"));
    }
    if (jhas(e, "tolerance"))
        rb_puts(b, ".");
    int tol = tolerance_text(b, e, rb_md);
    if (*jstr(e, "repro")) {
        rb_puts(b, tol ? " Repro: `" : ". Repro: `");
        rb_md(b, jstr(e, "repro"));
        rb_puts(b, "`");
    }
    if (*jstr(e, "saved")) {
        rb_puts(b, "; operands saved as `");
        rb_md(b, jstr(e, "saved"));
        rb_puts(b, ".safetensors`");
    }
    rb_puts(b, "\n");
}

static void case_table(rbuf *b, const group *g, int timings)
{
    rb_printf(b,
              "| case | M | N | K | regime | backend | contract | checked outputs | sampled | "
              "verdict |%s note |\n|---|---:|---:|---:|---|---|---|---:|---|---|%s---|\n",
              timings ? " time ms |" : "", timings ? "---:|" : "");
    for (size_t i = 0; i < g->n; i++) {
        const cJSON *e = g->e[i];
        rb_puts(b, "| ");
        rb_md(b, jstr(e, "name"));
        layer_text(b, e);
        rb_printf(b, " | %.0f | %.0f | %.0f | ", jnum(e, "M", 0), jnum(e, "N", 0), jnum(e, "K", 0));
        rb_md(b, jstr(e, "regime"));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "backend"));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "contract"));
        rb_printf(b, " | %.0f | %s | %s |", jnum(e, "checked_outputs", 0),
                  jtrue(e, "sampled") ? "sampled" : "full", jstr(e, "verdict"));
        if (timings)
            rb_printf(b, " %.1f |", jnum(e, "time_ms", 0));
        rb_puts(b, " ");
        rb_md(b, jstr(e, "note"));
        rb_puts(b, " |\n");
    }
}

/* "N (P %)" of part in whole; "0" when whole is 0. */
static void share_cell(rbuf *b, double part, double whole)
{
    if (whole > 0)
        rb_printf(b, "%.0f (%.1f %%)", part, 100.0 * part / whole);
    else
        rb_puts(b, "0");
}

/* The judged-bit-for-bit, in-bound, not-judged and matching cells of one "judged" row (dashes
 * without one; matching a dash in a document written before it was counted). */
static void judged_cells(rbuf *b, const cJSON *row)
{
    if (!row) {
        rb_puts(b, " - | - | - | - |");
        return;
    }
    double all = jnum(row, "outputs", 0);
    static const char *const keys[4] = {"bit_exact", "in_bound", "not_judged", "matching"};
    for (int k = 0; k < 4; k++) {
        rb_puts(b, " ");
        if (k == 3 && !cJSON_GetObjectItemCaseSensitive(row, keys[k]))
            rb_puts(b, "-");
        else
            share_cell(b, jnum(row, keys[k], 0), all);
        rb_puts(b, " |");
    }
}

/* What was judged (the document's "judged", written by its writer, never recomputed here):
 * per backend and regime, the GEMM outputs covered and how they were judged. */
static void judged_section(rbuf *b, const cJSON *judged)
{
    if (!cJSON_GetArraySize(judged))
        return;
    rb_puts(b, "## What was judged\n\nPer backend and regime, the GEMM outputs its entries "
               "covered: judged bit for bit against the contract's oracle, within the bounded(S) "
               "bound, or not judged (an n/a, skipped, aborted or ambiguous entry, or an output "
               "outside the exact regime under `exact` or under no declared contract; contracts "
               "§4.1); and of the judged ones, how many matched (equal bits, or within the "
               "bound).\n\n"
               "| backend | regime | outputs | judged bit for bit | in bound | not judged | "
               "matching |\n"
               "|---|---|---:|---:|---:|---:|---:|\n");
    const cJSON *pb, *row;
    cJSON_ArrayForEach(pb, judged) {
        cJSON_ArrayForEach(row, pb) {
            rb_puts(b, "| ");
            rb_md(b, pb->string);
            rb_puts(b, " | ");
            rb_md(b, row->string);
            rb_printf(b, " | %.0f |", jnum(row, "outputs", 0));
            judged_cells(b, row);
            rb_puts(b, "\n");
        }
    }
    rb_puts(b, "\n");
}

/* Per bounded entry (contracts §4.1 "bounded"): the bound it was held to, in bf16 ULPs of each
 * output's exact value (median, largest), the largest distance as a fraction of it, and its
 * strength (the share of outputs whose bound excludes 0). */
static void bounded_section(rbuf *b, const cJSON *cases)
{
    const cJSON *e;
    int any = 0;
    cJSON_ArrayForEach(e, cases) {
        if (!jhas(e, "bound_use"))
            continue;
        if (!any++)
            rb_puts(b, "## Bounded entries\n\nEach output is held to its own bound, derived from "
                       "its exact split partials for the entry's S (contracts §4.1). Bound in "
                       "bf16 ULPs of the exact value; use = largest |got - exact| / bound "
                       "(above 1 fails); strength = share of the outputs with a nonzero "
                       "exact value whose bound excludes 0 (below 0.5: not judged, "
                       "contracts §4.1).\n\n| case | backend | contract | verdict | bound "
                       "ULPs (median) | bound ULPs (largest) | use | strength |\n"
                       "|---|---|---|---|---:|---:|---:|---:|\n");
        rb_puts(b, "| ");
        rb_md(b, jstr(e, "name"));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "backend"));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "contract"));
        rb_printf(b, " | %s | %.3g | %.3g | %.3g | %.3g |\n", jstr(e, "verdict"),
                  jnum(e, "bound_ulp_median", 0), jnum(e, "bound_ulp_max", 0),
                  jnum(e, "bound_use", 0), jnum(e, "bound_strength", 1));
    }
    if (any)
        rb_puts(b, "\n");
}

/* The known-failures ledger as the document records it (run, merge, compare annotate it,
 * io/known.h): the known failures (XFAIL), the entries that passed although the ledger
 * expects them to fail (XPASS), the stale ledger entries. */
static void known_section(rbuf *b, const cJSON *doc, const cJSON *cases, int nxfail)
{
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(doc, "known_failures"), *e;
    int nxpass = 0, nstale = 0;
    cJSON_ArrayForEach(e, cases)
        nxpass += !strcmp(jstr(cJSON_GetObjectItemCaseSensitive(e, "known_failure"), "status"),
                          "xpass");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(kf, "entries"))
        nstale += jtrue(e, "stale");
    if (!nxfail && !nxpass && !nstale)
        return;
    rb_printf(b, "## Known failures (ledger `");
    rb_md(b, jstr(kf, "ledger"));
    rb_printf(b, "`): %d XFAIL, %d XPASS, %d stale\n\n", nxfail, nxpass, nstale);
    cJSON_ArrayForEach(e, cases) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
        int xf = entry_verdict_index(e) == VERDICT_XFAIL, xp = !strcmp(jstr(k, "status"), "xpass");
        if (!xf && !xp)
            continue;
        rb_puts(b, xf ? "- XFAIL `" : "- **XPASS** `");
        rb_md(b, jstr(e, "name"));
        rb_puts(b, "` on `");
        rb_md(b, jstr(e, "backend"));
        rb_puts(b, "`: known failure ");
        rb_md(b, jstr(k, "id"));
        rb_puts(b, " (");
        rb_md(b, jstr(k, "upstream"));
        rb_puts(b, xp ? "): it passes: fixed upstream? remove the entry\n" : ")");
        if (xf && *jstr(e, "signature")) {
            rb_puts(b, "; signature: ");
            rb_md(b, jstr(e, "signature"));
        }
        if (xf)
            rb_puts(b, "\n");
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(kf, "entries"))
        if (jtrue(e, "stale")) {
            rb_puts(b, "- **stale** ledger entry ");
            rb_md(b, jstr(e, "id"));
            rb_puts(b, " (");
            rb_md(b, jstr(e, "upstream"));
            rb_puts(b, "): matched nothing for more than 30 days (last ");
            rb_md(b, jstr(e, "last_matched"));
            rb_puts(b, "): fixed? remove it\n");
        }
    rb_puts(b, "\n");
}

/* The verdict and completeness as the document records them (never recomputed; an older
 * document says "verdict not recorded"), with the entry counts. */
/* Tree contracts (contracts §4.2) and `run --contract` overrides, when the document has them:
 * a line saying how trees are judged, and one row per overridden backend. */
static void contract_section(rbuf *b, const cJSON *doc, const cJSON *cases)
{
    int trees = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) trees |= !strncmp(jstr(e, "contract"), "tree(", 5);
    if (trees)
        rb_puts(b, "Tree contracts (contracts §4.2): every checked output bit-exact against the "
                   "tree oracle of the entry's contract.\n\n");
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(doc, "contract_overrides");
    if (!cJSON_IsObject(ov) || !ov->child)
        return;
    const cJSON *in_force = cJSON_GetObjectItemCaseSensitive(doc, "contracts");
    rb_puts(b, "## Contract overrides (run --contract)\n\n"
               "| backend | judged by | from | declared |\n|---|---|---|---|\n");
    cJSON_ArrayForEach(e, ov)
    {
        rb_puts(b, "| ");
        rb_md(b, e->string);
        rb_puts(b, " | ");
        rb_md(b, jstr(in_force, e->string));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "source"));
        rb_puts(b, " | ");
        rb_md(b, jstr(e, "declared"));
        rb_puts(b, " |\n");
    }
    rb_puts(b, "\n");
}

/* Where the run's time went (the "stages" object), when recorded. */
static void stages_section(rbuf *b, const cJSON *doc, const a4w4_report_opts *o)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "stages");
    if (!cJSON_IsObject(st) || o->reproducible) /* wall times differ run to run */
        return;
    rb_puts(b, "## Stages\n\n| stage | wall s |\n|---|---:|\n");
    static const char *const rows[][2] = {
        {"setup_s", "setup (plan, calibration, header)"},
        {"generate_s", "generate operands"},
        {"judge_s", "judge (device passes, upload, re-check)"},
        {"kernels_s", "backends under test (calls, buffers, pad variants, comparisons)"},
        {"backend_runs_s", "of which the backends' own runs (run_ms)"},
        {"variant_runs_s", "of which their pad variants' runs (the rest: host work)"},
        {"host_oracle_s", "host oracles (samples)"},
        {"record_s", "record (entries into results lines, teardown)"},
        {"bundles_s", "golden bundles and captures"},
        {"write_s", "write results"},
        {"finish_s", "finish (results read back, verdict)"},
        {"other_s", "not attributed (whole run less the above)"},
        {"wall_s", "whole run"},
        {"prefetch_s", "beside the table: next cases prepared on a host thread meanwhile"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(st, rows[i][0])))
            rb_printf(b, "| %s | %.1f |\n", rows[i][1], jnum(st, rows[i][0], 0));
    rb_printf(b, "\nOutputs compared: %.0f on the device, %.0f on the host (the backends' case "
              "entries; the completeness count also holds the oracle's own checks and the "
              "bundles').\n\n",
              jnum(st, "outputs_device", 0), jnum(st, "outputs_host", 0));
}

static void verdict_lines(rbuf *b, const cJSON *doc, const int n[NVERDICTS], int total, size_t ncases)
{
    doc_verdict v;
    doc_verdict_read(doc, &v);
    if (v.verdict)
        rb_printf(b, "**Verdict: %s** (%d failing entries of %d: ", v.verdict, n[1], total);
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "invariance")))
        rb_printf(b, "**No verdict: batch invariance predicted from the tables, nothing "
                  "measured** (%d failing entries of %d: ", n[1], total);
    else
        rb_printf(b, "**Verdict not recorded** (an older results document; %d failing entries "
                  "of %d: ", n[1], total);
    counts_text(b, n);
    rb_printf(b, "; %zu cases).\n\n", ncases);
    char comp[1200];
    rb_puts(b, "Completeness: ");
    rb_md(b, doc_completeness_text(&v, comp, sizeof comp));
    if (*v.reason) {
        rb_puts(b, ". Verdict reason: ");
        rb_md(b, v.reason);
    }
    rb_puts(b, ".\n\n");
}

/* The header's clause on E8M0 code 0 (contracts §1): the reading the run states, else each
 * declaring backend's own and both readings for the rest. */
static void code0_line(rbuf *b, const cJSON *doc)
{
    const char *st = jstr(doc, "e8m0_code0");
    if (strcmp(st, "both")) {
        rb_printf(b, ", E8M0 code 0 read as %s, as the run states (contracts §1)", st);
        return;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(doc, "e8m0_code0_declared"), *it;
    if (!cJSON_GetArraySize(d)) {
        rb_puts(b, ", E8M0 code 0 judged under both readings, 2^-127 and 2^-126 (contracts §1)");
        return;
    }
    rb_puts(b, ", E8M0 code 0 read as each backend declares (");
    int i = 0;
    cJSON_ArrayForEach(it, d)
        rb_printf(b, "%s%s: %s", i++ ? ", " : "", it->string,
                  cJSON_IsString(it) ? it->valuestring : "?");
    rb_puts(b, "), any other backend judged under both readings (contracts §1)");
}

char *a4w4_report_markdown(const cJSON *doc, const a4w4_report_opts *o)
{
    if (!o)
        o = &default_opts;
    rbuf b = {0};
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    int n[NVERDICTS];
    verdict_counts(cases, n);
    int total = cJSON_GetArraySize(cases);

    rb_printf(&b, "# a4w4check run: %s\n\n", jstr(doc, "set"));
    verdict_lines(&b, doc, n, total, distinct_cases(cases));
    rb_printf(&b, "Results schema `%s`, a4w4check %s", jstr(doc, "schema"),
              jstr(doc, "tool_version"));
    if (*jstr(doc, "cases_file"))
        rb_printf(&b, ", cases file `%s`", jstr(doc, "cases_file"));
    if (*jstr(doc, "matrix_hash"))
        rb_printf(&b, " (matrix %s)", jstr(doc, "matrix_hash"));
    if (*jstr(doc, "shard") && strcmp(jstr(doc, "shard"), "1/1"))
        rb_printf(&b, ", shard %s", jstr(doc, "shard"));
    /* a run with a bundle backend checks every output whatever its budget (run_plan.c's
     * budget rule says so): the header cites no budget that did not apply */
    const char *rule = jstr(cJSON_GetObjectItemCaseSensitive(doc, "budget"), "rule");
    int whole = !strncmp(rule, "every output (a backend holding every output", 44);
    if (whole)
        rb_puts(&b, ", every output checked (a bundle backend holds every output: no budget "
                    "or sampling applies)");
    else if (jhas(doc, "full"))
        rb_puts(&b, jtrue(doc, "full") ? ", every output checked"
                                       : ", outputs sampled above 2^26 MACs");
    if (!whole && jnum(doc, "budget_seconds", 0) > 0)
        rb_printf(&b, " unless the run's budget of %g s of host checking (at its own measured "
                  "rates) covers the case", jnum(doc, "budget_seconds", 0));
    if (*jstr(doc, "e8m0_code0"))
        code0_line(&b, doc);
    if (*jstr(doc, "judge") && strcmp(jstr(doc, "judge"), "host"))
        rb_printf(&b, "; GPU judge: %s", jstr(doc, "judge"));
    rb_puts(&b, ". Contracts: contracts §4.1 (bit-exact against ordered(S) or exact; bounded "
                "backends within the derived bound, never called bit-exact).\n\n");
    contract_section(&b, doc, cases);

    stages_section(&b, doc, o);

    /* one verdict line per (backend, contract) */
    size_t nt = 0;
    tally *t = tally_build(cases, &nt);
    const cJSON *judged = cJSON_GetObjectItemCaseSensitive(doc, "judged");
    rb_puts(&b, "## Verdict per backend and contract\n\n"
                "The last four columns count the backend's GEMM outputs over all its contracts "
                "(\"What was judged\" below): judged bit for bit, judged within a bound, not "
                "judged, and of the judged ones those that matched.\n\n"
                "| verdict | backend | contract | pass | fail | n/a | skip | max ULP | "
                "judged bit for bit | in bound | not judged | matching |\n"
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < nt; i++) {
        const cJSON *all = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(judged, t[i].backend), "all");
        /* a skipped or ambiguous entry is a comparison not made: no PASS over it */
        const char *v = t[i].n[1]   ? "FAIL"
                        : t[i].n[3] || t[i].n[VERDICT_AMBIGUOUS] ? "INCOMPLETE (entries not judged)"
                        : t[i].n[0] ? (contract_bounded(t[i].contract) ? "PASS (within bound)"
                                       : jnum(all, "not_judged", 0) > 0
                                           ? "PASS (bit-exact where judged)"
                                           : "PASS (bit-exact)")
                                    : "n/a";
        rb_printf(&b, "| %s", v);
        if (t[i].n[VERDICT_XFAIL])
            rb_printf(&b, ", %d XFAIL", t[i].n[VERDICT_XFAIL]);
        rb_puts(&b, " | ");
        rb_md(&b, t[i].backend);
        rb_puts(&b, " | ");
        rb_md(&b, t[i].contract);
        rb_printf(&b, " | %d | %d | %d | %d", t[i].n[0], t[i].n[1], t[i].n[2], t[i].n[3]);
        if (t[i].n[VERDICT_AMBIGUOUS]) /* not judged like a skip, named apart */
            rb_printf(&b, " + %d ambiguous", t[i].n[VERDICT_AMBIGUOUS]);
        rb_puts(&b, " | ");
        ulp_cell(&b, t[i].max_ulp, t[i].nan_ulp, "-");
        rb_puts(&b, " |");
        judged_cells(&b, all);
        rb_puts(&b, "\n");
    }
    free(t);
    rb_puts(&b, "\n");
    judged_section(&b, judged);
    bounded_section(&b, cases);

    if (n[1]) {
        rb_printf(&b, "## Failures (%d)\n\n", n[1]);
        const cJSON *e;
        cJSON_ArrayForEach(e, cases)
            if (entry_verdict_index(e) == 1)
                failure_line(&b, e);
        rb_puts(&b, "\n");
    }
    known_section(&b, doc, cases, n[VERDICT_XFAIL]);
    layer_parity(&b, cases, &rb_markdown);
    invariance_section(&b, doc);

    if (!o->reproducible) {
        const char *labels[16], *values[16];
        char scratch[8][160];
        size_t ne = environment_rows(doc, labels, values, 16, scratch);
        rb_puts(&b, "## Environment\n\n");
        if (!ne)
            rb_puts(&b, "Not recorded in this results file.\n\n");
        else {
            rb_puts(&b, "| | |\n|---|---|\n");
            for (size_t i = 0; i < ne; i++) {
                rb_printf(&b, "| %s | ", labels[i]);
                rb_md(&b, values[i]);
                rb_puts(&b, " |\n");
            }
            rb_puts(&b, "\n");
        }
    }

    size_t ng = 0;
    group *g = groups_build(cases, &ng);
    rb_puts(&b, "## Every case\n\nOne table per group: golden bundles, real layer shapes by "
                "(N, K), other cases by their first tag. Groups with a failure are open.\n\n");
    for (size_t i = 0; i < ng; i++) {
        rb_printf(&b, "<details%s><summary><b>", g[i].n_by_verdict[1] ? " open" : "");
        rb_md(&b, g[i].key);
        rb_printf(&b, "</b>: %zu entries, ", g[i].n);
        counts_text(&b, g[i].n_by_verdict);
        rb_puts(&b, "</summary>\n\n");
        case_table(&b, &g[i], !o->reproducible);
        rb_puts(&b, "\n</details>\n\n");
    }
    groups_free(g, ng);
    return rb_take(&b);
}
