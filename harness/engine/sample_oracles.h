/* sample_oracles.h — the oracle outputs a run compares against, over the outputs of a sample
 * (contracts §4.1, §4.2): ordered(1), exact (bf16 and fp32), ordered(S) and tree contracts on
 * demand, the sum of the terms' magnitudes for bounded backends, and the count of outputs the
 * exact-regime prover holds for.
 *
 * The sampled rows of A and of W (with their scales) are gathered into one contiguous
 * sub-problem [nrows x K] x [ncols x K] (a full sample uses the case's own buffers), and the
 * fast whole-matrix oracles of ref/a4w4_gemm_fast.h run on it, threaded; they equal the plain
 * per-output oracles bit for bit. Outputs are [nrows, ncols] row-major: index i * ncols + j is
 * output (row_at(i), col_at(j)) of the case. Nothing here prints. */
#ifndef A4W4_SAMPLE_ORACLES_H
#define A4W4_SAMPLE_ORACLES_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_bound.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "gen.h"

/* The sub-problem of a sample: row-major operands a [M, K/2], as [M, K/32], w [N, K/2],
 * ws [N, K/32] with M = nrows and N = ncols. */
typedef struct {
    const uint8_t *a, *as, *w, *ws;
    size_t M, N, K;
    uint8_t *copy; /* the gathered rows (one allocation); NULL for a full sample */
} a4w4_sub_problem;

/* The distinct tree contracts one case's oracles hold (one per backend's tree at most). */
#define A4W4_ORACLES_MAX_TREES 32

/* Oracle values over the sample. */
typedef struct {
    a4w4_sub_problem p;
    size_t count;        /* outputs: nrows * ncols */
    uint16_t *ordered1;  /* ordered(1), bf16 bits [count] */
    uint16_t *exact;     /* exact, bf16 bits [count] */
    float *exact_f32;    /* exact, fp32 [count] */
    double *sum_abs;     /* sum |block terms| per output (bounded backends), NULL until asked */
    size_t proven;       /* outputs for which a4w4_exact_regime() returns 1 */
    uint8_t *in_regime;  /* per output: 1 where a4w4_exact_regime() returns 1 [count] */
    float *abs_sum;      /* per output: the sum of |terms| rounded to fp32 (RNE; NaN when a
                            NaN scale is read) [count] */
    struct {
        unsigned S;
        uint16_t *y;
    } split[8];
    size_t nsplit;
    struct {
        unsigned S;
        a4w4_bounded_limits *b;
    } bound[8];          /* bounded(S) limits per output (a4w4_oracles_bound) */
    size_t nbound;
    struct {
        char text[A4W4_CONTRACT_MAX]; /* the tree's canonical text */
        uint16_t *y;
    } tree[A4W4_ORACLES_MAX_TREES]; /* tree contracts' outputs (a4w4_oracles_tree) */
    size_t ntree;
    struct {
        unsigned S, n;  /* atomic(S), its n' non-empty splits */
        uint16_t *q;    /* [count * S]: output i's bf16 split values at q[i * S ..] */
        uint16_t *in_order; /* [count]: the adds in split order (one member of the set) */
    } atomic[8];        /* atomic(S) split values per output (a4w4_oracles_atomic) */
    size_t natomic;
} a4w4_oracles;

/* Gather the sub-problem of sample s of case data d into *p. 0, or A4W4_ENOMEM. */
int a4w4_sub_problem_make(const a4w4_case_data *d, const a4w4_sample *s, a4w4_sub_problem *p);
void a4w4_sub_problem_free(a4w4_sub_problem *p);

/* The number of outputs of p for which a4w4_exact_regime() (contracts §4.1) returns 1, the
 * same count the per-output prover gives, computed from row and column summaries and the
 * exact sum of |terms| (the fast exact oracle on the operands with their sign bits cleared).
 * 0 with *proven set, or A4W4_ENOMEM. */
int a4w4_exact_regime_count(const a4w4_sub_problem *p, size_t *proven);

/* The same, and per output (i * N + j) 1 or 0 into flags [M * N] and the fp32 sum of |terms|
 * into abs_sum [M * N], each when not NULL. */
int a4w4_exact_regime_flags(const a4w4_sub_problem *p, uint8_t *flags, float *abs_sum,
                            size_t *proven);

/* ordered1, exact, exact_f32, proven, in_regime and abs_sum over sample s of d. 0, or A4W4_ENOMEM (*o is valid
 * for a4w4_oracles_free either way). */
int a4w4_oracles_compute(const a4w4_case_data *d, const a4w4_sample *s, a4w4_oracles *o);
/* The same with E8M0 code 0 read as 2^-126 (contracts §1, the other reading): the sampled rows
 * gathered (every row for a full sample) with each scale byte 0x00 set to 0x01; the case's
 * other rows and its layouts are never touched, so the cost is the sample's, not the case's.
 * 0, or A4W4_ENOMEM (*o valid for a4w4_oracles_free either way). */
int a4w4_oracles_compute_code0_alt(const a4w4_case_data *d, const a4w4_sample *s,
                                   a4w4_oracles *o);

/* ordered(S) over the sample, computed once per S (S <= 1: ordered1). NULL when out of memory
 * or when 8 other splits are held already. */
const uint16_t *a4w4_oracles_ordered(a4w4_oracles *o, unsigned S);

/* Per output: sum over blocks of |isum| * 2^(sa+sb-256), the sum of |terms| (contracts §4.1),
 * computed once. NULL when out of memory. */
const double *a4w4_oracles_sum_abs(a4w4_oracles *o);

/* Per output: the bounded(S) limits of contracts §4.1 and §4.3 (ref/a4w4_bound.h
 * a4w4_dot_bounded_limits: the bound B with |y - exact| <= B for every finite bf16-atomic
 * split-K result over S splits, from the output's own exact split partials and per-split sums
 * of |terms|; the exact value in double; where the model can overflow to +-Inf); bound NaN for
 * an output reading a 0xFF scale. Computed once per S by the fast form
 * (a4w4_gemm_bounded_limits_fast, bit-equal, threaded on large samples). NULL when out of
 * memory or when 8 other S are held already. */
const a4w4_bounded_limits *a4w4_oracles_bound(a4w4_oracles *o, unsigned S);

/* Tree contract t over the sample (contracts §4.2; ref/a4w4_gemm_fast.h
 * a4w4_gemm_tree_fast_ex, bit-equal to the plain oracle), computed once per tree. t must
 * apply to the case's K (a4w4_tree_check). NULL when out of memory, when t does not apply,
 * or when A4W4_ORACLES_MAX_TREES other trees are held already. */
const uint16_t *a4w4_oracles_tree(a4w4_oracles *o, const a4w4_tree *t);

/* atomic(S) over the sample (contracts §4.1 "atomic(S)", ref/a4w4_atomic.h): per output the
 * bf16 split values q [count * S] (output i's at q[i * S], n' = *nsplit of them) and, into
 * *in_order (may be NULL), the result of their adds in split order [count]. Computed once per
 * S, each split by the fast ordered(1) oracle on its K range (bit-equal to
 * a4w4_dot_atomic_splits, tests/harness/engine/test_atomic_judge.c). NULL when out of memory,
 * S is outside 1 .. A4W4_ATOMIC_SPLIT_MAX, or 8 other S are held already. */
const uint16_t *a4w4_oracles_atomic(a4w4_oracles *o, unsigned S, unsigned *nsplit,
                                    const uint16_t **in_order);

void a4w4_oracles_free(a4w4_oracles *o);

#endif
