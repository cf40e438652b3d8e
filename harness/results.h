/* results.h — the results document (results.json) and its Markdown summary.
 *
 * results.json (schema "a4w4check-results/1"): {"schema", "tool", "set", "cases_file",
 * "backends": [...], "cases": [entry...], "totals": {...}}. One entry per (case, backend):
 * name, M, N, K, regime, seed, backend, contract, checked_outputs, sampled, verdict
 * ("pass", "fail", "skip", "n/a"), mismatches, max_ulp, first_mismatches [{row, col, got,
 * expected}] (hex strings), time_ms, exact_regime_outputs, note. Later issues add fields,
 * never rename these. */
#ifndef A4W4_RESULTS_H
#define A4W4_RESULTS_H

#include <cjson/cJSON.h>

#include "check.h"

/* A new entry object with the identifying fields; add it to an array with cJSON. */
cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract);

/* Fill verdict, counts and first mismatch from a check. */
void a4w4_entry_set_check(cJSON *e, const a4w4_check *c);

/* Render the Markdown summary of a results document (malloc'ed string). */
char *a4w4_summary_markdown(const cJSON *doc);

/* Write results.json and summary.md into dir atomically. 0 or -1 with err. */
int a4w4_results_write(const cJSON *doc, const char *dir, char *err, size_t errlen);

#endif
