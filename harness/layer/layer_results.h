/* layer_results.h — what `layers` records of the layer matrix (layer.h): one results entry per
 * case and backend pair, in `run`'s schema (entry.h, io/results.h) plus the layer fields
 * (decision and reason, expected and got; input kind, bias, flag, gfx, dtype, computed, the
 * weight's preshuffle and swizzle counts), the header of the run, and the counts of the
 * summary line. Nothing here prints. */
#ifndef A4W4_LAYER_RESULTS_H
#define A4W4_LAYER_RESULTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "layer.h"

/* The results entry of case r of group g on pair p: regime "normal:round_up" on an ASM layer
 * ("normal:even" else), every output checked (never sampled), the first mismatch as
 * tensor/row/col/got/expected (tensor "c1|c2", col 0 for a 5-tuple), max_ulp -1 where no
 * ulp distance applies. The caller owns the object. */
cJSON *a4w4_layer_entry(const a4w4_layer_case_result *r, const a4w4_layer_ops *p,
                        const a4w4_layer_group *g);

/* The run's header, as `run` writes it: set "layers", cases_file "layers/1 qwen_n=N
 * groups=G", its FNV-1a hash as matrix_hash, shard 1/1, the pairs as backends with their
 * contracts, G * A4W4_LAYER_CASES_PER_GROUP items. The caller owns the object. */
cJSON *a4w4_layer_header(size_t qwen_n, size_t ngroups, const a4w4_layer_ops *const *pairs,
                         size_t npairs);

/* The summary's counts: passed and failed entries; of those not computed, the ones the
 * policy rejects (contracts §6.5) and the ones the layer refuses otherwise. */
typedef struct {
    size_t passed, failed, rejected, refused, computed;
} a4w4_layer_counts;

/* Count the entry of case r into n. */
void a4w4_layer_count(a4w4_layer_counts *n, const a4w4_layer_case_result *r);

#endif
