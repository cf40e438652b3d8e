/* field_bugs.h — the field's bug record (ref/a4w4_hazard.h a4w4_bug_rules) over a list of
 * shapes, as `hazards` (the default tuned table's shapes) and `layers` (its layer matrix) show
 * it: per rule, the shapes it flags under AITER's route (contracts §5, route's defaults:
 * gfx950, 256 CUs, log2_k_split 0, preshuffled weights) and SGLang's layer decision
 * (contracts §6, the flag on, 2-D input). */
#ifndef A4W4_FIELD_BUGS_H
#define A4W4_FIELD_BUGS_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "a4w4_dispatch.h"
#include "a4w4_hazard.h"

/* The shapes (M, N, K) one rule flags. */
typedef struct {
    int (*shape)[3];
    size_t n, cap;
} a4w4_bug_shapes;

/* Route and decide each of shapes[0..n) and add it to out[rule] for every rule that flags it
 * (out: A4W4_BUG_COUNT lists, zeroed by the caller). A shape AITER cannot route gets the data
 * rules only. 0, or -1 when out of memory. */
int a4w4_field_bugs_of(const int (*shapes)[3], size_t n, const a4w4_tuned_table *tuned,
                       const a4w4_kernel_table *kt, const a4w4_heur_params *hp,
                       a4w4_bug_shapes *out);

/* Every (M, N, K) of tuned table t, in its order (malloc'ed, *n rows). NULL when empty or
 * out of memory. */
int (*a4w4_tuned_shapes(const a4w4_tuned_table *t, size_t *n))[3];

/* On out: one line per rule (id, citation, what, where it strikes, how many of the
 * `what` shapes it flags), then the first max of them as "MxNxK". */
void a4w4_print_field_bugs(FILE *f, const a4w4_bug_shapes *out, const char *what, size_t total,
                           size_t max);

/* [{"id", "citation", "url", "what", "rule", "shape_rule", "count", "shapes": [[M, N, K],
 * ...]}] per rule. */
cJSON *a4w4_field_bugs_json(const a4w4_bug_shapes *out);

void a4w4_field_bugs_free(a4w4_bug_shapes *out);

#endif
