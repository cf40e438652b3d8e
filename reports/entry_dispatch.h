/* entry_dispatch.h — internal: the dispatch facts of a results entry as the HTML hazard map
 * draws them, read from the entry's optional "route", "policy" and "hazard" fields (written by
 * the runner, harness/engine/annotate.h; reports/schema/results.schema.json). Nothing here
 * routes a shape: a document without the fields renders without picks. */
#ifndef A4W4_ENTRY_DISPATCH_H
#define A4W4_ENTRY_DISPATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* 1 when e carries both a "route" and a "policy" object. */
int entry_has_dispatch(const cJSON *e);

/* One line for e's tooltip and mismatch detail: "heuristic -> ASM 256x128 (tile does not
 * fit N); 3 possible winners over every walk order (order-dependent), 2 not fitting N;
 * policy asm (asm_quantize); hazard exposed" (the hazard part when e has the field).
 * Returns 1, or 0 (buf "") when e has no dispatch fields. */
int entry_dispatch_text(const cJSON *e, char *buf, size_t len);

/* 1 when e's hazard class is "exposed" (the map's black corner: the ASM path and an untuned
 * routing where a tile that does not fit N can win, contracts §5.3 and §6). */
int entry_exposed(const cJSON *e);

/* Where the N <= 128 fence of the layer policy (contracts §6 step 3) falls on the map's N
 * axis Ns[0..nN) (sorted, distinct), from the entries' policy fields. */
typedef struct {
    int known;   /* 1: some entry on the axis has a policy field */
    size_t nle;  /* columns left of the fence: up to the last one with policy reason small_n */
    int all_asm; /* every entry on the axis with a policy field is on the ASM path */
} fence_pos;

fence_pos fence_find(const cJSON *cases, const int *Ns, size_t nN);

/* Entries of cases with dispatch fields. */
size_t entries_with_dispatch(const cJSON *cases);

#endif
