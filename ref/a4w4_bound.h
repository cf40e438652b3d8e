/* a4w4_bound.h — the error bound of the bounded(S) contract for one output (contracts §4.1
 * "bounded"), derived from that output's own split structure.
 *
 * A bounded(S) kernel splits K as ordered(S) does (a4w4_split_k_per_split: splits of
 * round_up(ceil(K/S), 256) elements), sums each split in fp32 in any order, rounds each split
 * total to bf16 and adds the totals with bf16 atomics, in any order, into an output that
 * starts at +0. a4w4_dot_bounded_bound returns B with |y - exact| <= B for every such y; the
 * proof is in a4w4_bound.c and in contracts §4.1. Pure: prints nothing, allocates nothing. */
#ifndef A4W4_BOUND_H
#define A4W4_BOUND_H

#include <stddef.h>

#include "a4w4_gemm.h"

/* What the bound needs of one split of one output. */
typedef struct {
    double p;          /* the exact split partial P_s rounded once to double (RNE) */
    double t;          /* an upper bound of the split's sum of |terms| (elementwise products) */
    double tpos, tneg; /* upper bounds of the sums of its positive terms and of |negative
                          terms| (t = tpos + tneg) */
    size_t blocks;     /* 32-blocks in the split */
} a4w4_split_facts;

/* What the bounded(S) model allows for one output (contracts §4.1 "bounded", §4.3). */
typedef struct {
    double bound;  /* B: |y - exact| <= B for every finite result y */
    double exact;  /* the exact sum rounded once to double (a4w4_dot_exact_f64) */
    int inf_pos;   /* 1 when some rounding of the model can overflow upward: +Inf allowed */
    int inf_neg;   /* the same downward: -Inf allowed (NaN only when both are) */
} a4w4_bounded_limits;

/* The facts of split j (0-based) of op under S-way split-K (a4w4_split_count(K, S) splits).
 * Returns 0, or 1 when a block of the split has scale 0xFF (the output is NaN: no bound). */
int a4w4_dot_split_facts(const a4w4_dot_operands *op, unsigned S, unsigned j,
                         a4w4_split_facts *f);

/* The bound B from the facts of the n non-empty splits of one output (contracts §4.1
 * "bounded"): |y - exact| <= B for every finite result y of the kernel model above (every
 * execution without an overflow; a4w4_dot_bounded_limits says where one can overflow). */
double a4w4_bounded_bound_of(const a4w4_split_facts *f, size_t n);

/* a4w4_bounded_bound_of over the splits of op for S (S >= 1), without storing the facts.
 * NaN when a scale of op is 0xFF (the output must be NaN; no bound applies). */
double a4w4_dot_bounded_bound(const a4w4_dot_operands *op, unsigned S);

/* The limits of op under S-way split-K (S >= 1): the bound as a4w4_dot_bounded_bound, the
 * exact value, and whether the model can end at +Inf or -Inf: some split's fp32 partial sums
 * (positive terms plus their error) or some bf16 rounding (Q+ or Q- plus the atomic error)
 * can reach that format's overflow threshold (contracts §4.3). Returns 0, or 1 when a scale
 * of op is 0xFF (*l: bound and exact NaN, no Inf allowed; the output must be NaN). */
int a4w4_dot_bounded_limits(const a4w4_dot_operands *op, unsigned S, a4w4_bounded_limits *l);

#endif
