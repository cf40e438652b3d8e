/* results.h — the results document (results.json): its Markdown summary, reading and writing.
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

#include "a4w4_reports.h"
#include "status.h"

/* The document's verdict (a4w4_doc_verdict, a4w4_completeness, A4W4_MIN_JUDGED_SHARE,
 * a4w4_results_judge) is reports/a4w4_reports.h's, beside the checks that refuse a document
 * contradicting it. */

/* Render the Markdown summary of a results document (malloc'ed string). */
char *a4w4_summary_markdown(const cJSON *doc);

/* Read a results document from path (a directory means DIR/results.json): a regular file
 * only (a4w4_read_regular: a FIFO is refused at once), parsed, validated against the schema
 * and checked for contradictions (a4w4_results_parse). Returns the document (caller frees),
 * or NULL with one line in err (the CLI exits 2). */
cJSON *a4w4_results_read(const char *path, char *err, size_t errlen);

/* Write results.json and summary.md into dir atomically. A document without a "verdict" is
 * judged first as complete over the items it holds (a4w4_results_judge with expected =
 * recorded = its distinct case names: layers, hazards). A4W4_ST_OK, or A4W4_ST_IO /
 * A4W4_ST_NOMEM with err set. */
a4w4_hstatus a4w4_results_write(cJSON *doc, const char *dir, char *err, size_t errlen);

#endif
