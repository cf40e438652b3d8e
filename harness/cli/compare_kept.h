/* compare_kept.h — `compare A/results.json B/results.json` of two runs that kept their outputs
 * (`run --keep-outputs DIR`, engine/kept_outputs.h): per matched entry (case name, and the
 * backend or a --pair's two backends) the parity of the two output bundles, the columns of
 * `compare --outputs` (engine/criteria.h a4w4_parity_diff: bit-equal, differ, max ULP, NaN
 * against a number, the peers' criteria on CAND with BASE as reference, contracts §4), and
 * every entry it could not compare, with why. */
#ifndef A4W4_COMPARE_KEPT_H
#define A4W4_COMPARE_KEPT_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Add "output_parity" to cmp from documents base and cand: {base_dir, cand_dir (null when
 * that run kept no outputs), compared, differ (entries with an output that differs),
 * not_compared (count), why (a run kept no outputs: which, and what to run; absent when both
 * did), rows [{name, base_backend, cand_backend, M, N, outputs, bit_equal, differ, max_ulp,
 * nan_vs_number, tolerance_on_difference, peers ("aiter PASS, torch FAIL, ...")}], skipped [{name, backend, why}]}. pb[i] = pc[i]
 * are the --pair mappings (np 0: each backend with itself). 0, or -1 when out of memory. */
int a4w4_compare_kept(const cJSON *base, const cJSON *cand, const char *const *pb,
                      const char *const *pc, size_t np, cJSON *cmp);

#endif
