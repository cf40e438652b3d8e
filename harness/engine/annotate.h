/* annotate.h — the static dispatch facts of a generated case, written into its results
 * entries so that reports draw them from the document and never recompute them:
 *   "route":  AITER's gemm_a4w4 routing of (M, N, K) (contracts §5, ref/a4w4_dispatch.h)
 *             {"source": "heuristic" | "tuned" | "tuned_padded_gl0" | "tuned_padded_gl1",
 *              "path": "asm" | "ck", "kernel": "<name as in the tables>",
 *              "label": "32x128" | null (CK, or an ASM name the kernel table lacks),
 *              "tile": [tile_M, tile_N] | null, "split": 1,
 *              "kernel_fits_N": true,            // the file-order (or tuned) pick's tile
 *              "possible_winners": 3,            // kernels that win under some walk order
 *              "possible_winners_not_fitting_N": 2}
 *   "policy": SGLang's layer decision for (N, K) (contracts §6, ref/a4w4_policy.h)
 *             {"decision": "asm" | "triton", "reason": "asm_quantize" | "small_n" | ...}
 *   "hazard": the static class of ref/a4w4_hazard.h: "ok" | "exposed" | "order_dependent" |
 *             "fenced".
 * Routing as `a4w4check route` with its defaults: the tables under cases/aiter/ (tuned
 * a4w4_blockscale_tuned_gemm.csv, kernels gfx950_f4gemm_bf16_per1x32Fp4.csv, resolved with
 * a4w4_data_path), gfx950, 256 CUs, log2_k_split 0, preshuffled weights; policy with the
 * flag on and 2-D activations. Nothing here prints. */
#ifndef A4W4_ANNOTATE_H
#define A4W4_ANNOTATE_H

#include <cjson/cJSON.h>

#include "casefile.h"

/* Add "route", "policy" and "hazard" (above) to every entry of the array entries from index
 * first on (the entries a4w4_run_case just appended for case c). The default tables are
 * loaded once per process, on the first call (thread-safe). Returns 0; -1 when the tables
 * could not be loaded or the shape cannot be routed (AITER has no kernel for it): the entries
 * are then left without the fields (readers treat them as optional); -1 too when memory ran
 * out (an entry may then lack some of them). */
int a4w4_annotate_case(const a4w4_case *c, cJSON *entries, int first);

#endif
