/* picks.h — internal: the dispatch oracle's pick (ref/a4w4_dispatch.h) and SGLang's layer
 * decision (ref/a4w4_policy.h) for every distinct (M, N, K) of a results document, for the
 * HTML hazard map's tooltips and corner marks. Defaults as `a4w4check route`: gfx950, 256
 * CUs, log2_k_split 0, preshuffled weights, flag on, 2-D activations. */
#ifndef A4W4_PICKS_H
#define A4W4_PICKS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "a4w4_reports.h"

typedef struct {
    int M, N, K;
    int ok;         /* 1: routed; 0: text says why not */
    int policy_asm; /* the layer policy puts (N, K) on the ASM path */
    int untuned;    /* no tuned row: the ASM heuristic decides */
    int pick_fits;  /* the file-order pick's tile fits N (or not an ASM tile) */
    int nofit_any;  /* possible winners (any walk order) whose tile does not fit N */
    int hazard;     /* policy_asm && untuned && nofit_any > 0 */
    char text[512]; /* one line: route, winners, policy */
} shape_pick;

typedef struct {
    shape_pick *p; /* sorted by (M, N, K) */
    size_t n;
    int have;       /* 1 when the tables loaded and picks were computed */
    char note[600]; /* what was used, or why there are no picks */
} pick_table;

/* Compute the picks for every distinct shape of cases with the tables of o (kernels_path NULL:
 * none, pt->note says so). A table that fails to load leaves pt->have 0 with the error in
 * pt->note (the report shows it; it is not fatal). Returns 0, or -1 when out of memory. */
int picks_build(pick_table *pt, const cJSON *cases, const a4w4_report_opts *o);
/* The pick of (M, N, K), or NULL. */
const shape_pick *picks_find(const pick_table *pt, int M, int N, int K);
void picks_free(pick_table *pt);

#endif
