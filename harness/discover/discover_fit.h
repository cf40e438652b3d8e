/* discover_fit.h — what the fit's pieces share inside discover/ (contracts §4.4 step 7): the
 * candidate list (discover_candidates.c) and the parallel loop over outputs that checks a
 * candidate (discover_parcheck.c), both used by discover_fit.c. */
#ifndef A4W4_DISCOVER_FIT_H
#define A4W4_DISCOVER_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "discover_internal.h"

#define MAX_CANDIDATES 512

/* Candidate contracts, each format distinct, at most MAX_CANDIDATES. */
typedef struct {
    a4w4_contract c[MAX_CANDIDATES];
    size_t n;
} cand_list;

/* c appended to L unless L is full or holds the same contract text already. */
void dc_cand_push(cand_list *L, const a4w4_contract *c);
/* The interval-model candidates of shape s's families and numeric findings into L
 * (contracts §4.4 steps 1-6). */
void dc_candidates(const dc_shape *s, cand_list *L);
/* The trees beyond the interval model (contracts §4.2 rules 1a and 2) into L; tiles: add the
 * per-256-K tile partials too. */
void dc_family_candidates(const dc_shape *s, int tiles, cand_list *L);
/* With one element per node (s->num.elem_span 1, contracts §4.4 step 6): each fitted exact
 * tree of leaf 1 with its elements dealt one at a time to 2, 4, 8 or 16 lanes (chunk=1,
 * lanecomb chain or pairwise), as a BLAS kernel's K loop keeps several fused multiply-add
 * accumulators, into L after the fitted ones. */
void dc_element_lane_candidates(const dc_shape *s, const cand_list *fitted, cand_list *L);
/* The xor-shuffle lane trees (lanecomb=xor, 4..64 lanes, chunks 32..256 elements, final RNE
 * then RZ) into L: the short spellings tried before FPRev's general tree. */
void dc_xor_candidates(const dc_shape *s, cand_list *L);

/* The first mismatch of a case (for the evidence). */
typedef struct {
    size_t row, col;
    uint16_t got, expected;
} miss;

/* What one item of a loop is: predicted, a miss (evidence against the contract) or a defect
 * (an output no order can give, contracts §4.4 step 7). */
enum { CHECK_MISS = 0, CHECK_PREDICTED = 1, CHECK_DEFECT = 2 };

/* One item of a loop: CHECK_PREDICTED; else CHECK_MISS or CHECK_DEFECT with *row, *col
 * (ordering the failures), *got and *expected set (a defect: *expected is what the checked
 * contract gives, and *why says what every order gives). */
typedef int (*check_fn)(const void *ctx, size_t k, size_t *row, size_t *col, uint16_t *got,
                        uint16_t *expected, int *why);

/* A defect of a validation case (contracts §4.4 step 7). */
typedef struct {
    size_t vcase, row, col;
    uint16_t got, expected;
    int why; /* DEFECT_* */
} defect;

/* Defects kept for the evidence list per shape; every one is counted. */
#define MAX_DEFECTS_LISTED 4096

typedef struct {
    defect *v;
    size_t n, cap;
} defect_list;

/* Misses of fn over items 0 .. total-1 on up to `threads` threads (stop_early: counting may
 * stop at the first miss, or past budget defects); the first miss (smallest row, col) into
 * *first and *first_k. Defects are counted into *ndefects (may be NULL when fn gives none)
 * and kept in dl (may be NULL; at most MAX_DEFECTS_LISTED) as case vcase's. */
size_t dc_par_check(check_fn fn, const void *ctx, size_t total, int threads, int stop_early,
                    miss *first, size_t *first_k, int *has, size_t *ndefects, size_t budget,
                    defect_list *dl, size_t vcase);

#endif
