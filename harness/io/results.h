/* results.h — the results document (results.json) and its Markdown summary.
 *
 * results.json (schema "a4w4check-results/1"): {"schema", "tool", "set", "cases_file",
 * "backends": [...], "cases": [entry...], "totals": {...}}. One entry per (case, backend):
 * name, M, N, K, regime, seed, backend, contract, checked_outputs, sampled, verdict
 * ("pass", "fail", "skip", "n/a"), mismatches, max_ulp, first_mismatches [{row, col, got,
 * expected}] (hex strings), time_ms, exact_regime_outputs, note. Later versions add fields,
 * never rename these. */
#ifndef A4W4_RESULTS_H
#define A4W4_RESULTS_H

#include <cjson/cJSON.h>

#include "status.h"

/* Render the Markdown summary of a results document (malloc'ed string). */
char *a4w4_summary_markdown(const cJSON *doc);

/* Write results.json and summary.md into dir atomically. A4W4_ST_OK, or A4W4_ST_IO /
 * A4W4_ST_NOMEM with err set. */
a4w4_hstatus a4w4_results_write(const cJSON *doc, const char *dir, char *err, size_t errlen);

#endif
