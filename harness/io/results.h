/* results.h — the results document (results.json), its verdict, and its Markdown summary.
 *
 * results.json (schema "a4w4check-results/2"): {"schema", "tool", "set", "cases_file",
 * "backends": [...], ..., "verdict", "verdict_reason", "counts", "cases": [entry...]}. One
 * entry per (case, backend): name, M, N, K, regime, seed, backend, contract,
 * checked_outputs, sampled, verdict ("pass", "fail", "skip", "n/a"), mismatches, max_ulp,
 * first_mismatches [{row, col, got, expected}] (hex strings), time_ms, exact_regime_outputs,
 * note. Later versions add fields, never rename these. */
#ifndef A4W4_RESULTS_H
#define A4W4_RESULTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

/* The document's verdict, the top-level "verdict" string in brackets. */
typedef enum {
    A4W4_DOC_PASS = 0,      /* "PASS" */
    A4W4_DOC_FAIL = 1,      /* "FAIL": at least one entry failed */
    A4W4_DOC_INCOMPLETE = 2 /* "INCOMPLETE": no failure, but data is missing */
} a4w4_doc_verdict;

/* What the writer knows about completeness: the items (cases and bundles) the run or the
 * merged shards had to record, and how many the document holds. */
typedef struct {
    size_t expected_items;
    size_t recorded_items;
} a4w4_completeness;

/* The least share of its entries, in percent, a selected backend must judge (pass or fail with
 * outputs checked) for a PASS: a backend n/a or skipped on more than 90 % of a set (a plugin
 * that runs one case of thirty) makes the verdict INCOMPLETE, listed in backends_unchecked,
 * the reason saying how many of its entries it judged. */
#define A4W4_MIN_JUDGED_SHARE 10

/* Judge doc and record the verdict in it (contracts §4.1: a verdict is only as good as what
 * was compared). PASS only when every expected item was recorded
 * (recorded_items == expected_items), every selected backend (the "backends" list but the
 * "oracle" self-checks) has at least one comparison (an entry with verdict pass or fail and
 * checked_outputs > 0) in at least A4W4_MIN_JUDGED_SHARE % of its entries, and no entry failed but known failures; FAIL when an entry failed
 * that is no known failure (io/known.h: an entry whose "known_failure" status is "xfail"
 * counts as "xfail", never as "fail" and never silently: the reason names the count);
 * INCOMPLETE otherwise. Adds, before "cases" (replacing earlier ones): "verdict" ("PASS",
 * "FAIL", "INCOMPLETE"), "verdict_reason" (one line saying why), and "counts" {"entries",
 * "pass", "fail", "n/a", "skip" (entries by verdict), "xfail" and "xpass" (when not zero:
 * known failures failing, known failures passing), "expected_items", "recorded_items",
 * "outputs_checked" (sum of checked_outputs over pass and fail entries),
 * "backends_unchecked" (the selected backends without a comparison)}, and "judged" {backend
 * (the oracle's self-checks left out): {"all" and each regime (without a ":mode" suffix):
 * {"outputs", "bit_exact", "in_bound", "not_judged"}}}, the sums of the entries' judged_*
 * fields (GEMM outputs judged bit for bit, within a bound, not at all). Returns the verdict. */
a4w4_doc_verdict a4w4_results_judge(cJSON *doc, const a4w4_completeness *c);

/* Render the Markdown summary of a results document (malloc'ed string). */
char *a4w4_summary_markdown(const cJSON *doc);

/* Read a results document from path (a directory means DIR/results.json): a regular file
 * only (a4w4_read_regular: a FIFO is refused at once), parsed, validated against the schema
 * and checked for contradictions (a4w4_results_parse). Returns the document (caller frees),
 * or NULL with one line in err (the CLI exits 2). */
cJSON *a4w4_results_read(const char *path, char *err, size_t errlen);

/* Write results.json and summary.md into dir atomically, every text through
 * a4w4_json_text_guard (jsontext.h) first. A document without a "verdict" is
 * judged first as complete over the items it holds (a4w4_results_judge with expected =
 * recorded = its distinct case names: layers, hazards). A4W4_ST_OK, or A4W4_ST_IO /
 * A4W4_ST_NOMEM with err set. */
a4w4_hstatus a4w4_results_write(cJSON *doc, const char *dir, char *err, size_t errlen);

#endif
