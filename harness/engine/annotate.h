/* annotate.h — the static dispatch facts of a generated case, carried by its results
 * entries (a4w4_entry_result.dispatch) and written so that reports draw them from the document and never recompute them:
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
 *   "field_bugs": the ids of the field's bug rules (ref/a4w4_hazard.h a4w4_bug_rules) that
 *             flag the shape under that route and decision, e.g. ["aiter-4176"].
 * Routing as `a4w4check route` with its defaults: the tables under cases/aiter/ (tuned
 * a4w4_blockscale_tuned_gemm.csv, kernels gfx950_f4gemm_bf16_per1x32Fp4.csv, resolved with
 * a4w4_data_path), gfx950, 256 CUs, log2_k_split 0, preshuffled weights; policy with the
 * flag on and 2-D activations. Nothing here prints. */
#ifndef A4W4_ANNOTATE_H
#define A4W4_ANNOTATE_H

#include "casefile.h"
#include "entry.h"

/* The facts of generated case c into *f (the default tables are loaded once per process, on
 * the first call; thread-safe: routing is reentrant). Returns 0; -1 with f->has 0 when the
 * tables could not be loaded or the shape cannot be routed (AITER has no kernel for it):
 * readers treat the fields as optional. */
int a4w4_dispatch_facts_of(const a4w4_case *c, a4w4_dispatch_facts *f);

#endif
