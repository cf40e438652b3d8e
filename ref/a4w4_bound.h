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
#include <stdint.h>

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

/* Running sums of the bound over the splits of one output (steps 2 and 3 of the proof in
 * a4w4_bound.c), and whether a rounding inside a split can overflow: zeroed, then one
 * a4w4_bound_acc_add per non-empty split in split order. */
typedef struct {
    double dsum, qpos, qneg;
    size_t n;
    int f32_pos, f32_neg; /* an fp32 rounding inside some split can overflow that way */
    int q_pos, q_neg;     /* the bf16 rounding of some split total can overflow that way */
} a4w4_bound_acc;

void a4w4_bound_acc_add(a4w4_bound_acc *a, const a4w4_split_facts *f);

/* The limits from the sums of every split and the output's exact value rounded once to
 * double (contracts §4.1 "bounded", §4.3): what a4w4_dot_bounded_limits writes for a finite
 * output. */
void a4w4_bound_acc_limits(const a4w4_bound_acc *a, double exact, a4w4_bounded_limits *l);

/* The limits of op under S-way split-K (S >= 1): the bound as a4w4_dot_bounded_bound, the
 * exact value, and whether the model can end at +Inf or -Inf: some split's fp32 partial sums
 * (positive terms plus their error) or some bf16 rounding (Q+ or Q- plus the atomic error)
 * can reach that format's overflow threshold (contracts §4.3). Returns 0, or 1 when a scale
 * of op is 0xFF (*l: bound and exact NaN, no Inf allowed; the output must be NaN). */
int a4w4_dot_bounded_limits(const a4w4_dot_operands *op, unsigned S, a4w4_bounded_limits *l);

/* ---- the fast form (a4w4_bound_fast.c), held equal to the plain one above -----------------
 * The same limits as a4w4_dot_bounded_limits, bit for bit on every input (0xFF scales, Inf
 * thresholds, subnormal partials, E8M0 code 0), from one pass over the K blocks per output:
 * each block's exact dot and sum of |products| together (AVX2 where the CPU has it, else a
 * pair table), its positive
 * and negative term sums added in double in the plain order, its dot into a 32-bit-digit
 * accumulator of the split; each split's exact partial and the whole exact sum rounded once
 * to double from those digits (contracts §4.1 "bounded"). Held equal by tests/ref/test_bound.c. */

/* The limits of op as a4w4_dot_bounded_limits (same return value and *l). */
int a4w4_dot_bounded_limits_fast(const a4w4_dot_operands *op, unsigned S, a4w4_bounded_limits *l);

/* The limits of every output of an M x N x K problem under S-way split-K (S >= 1): operands
 * row-major as a4w4_gemm.h (a_fp4 [M, K/2], a_scale [M, K/32], w_fp4 [N, K/2], w_scale
 * [N, K/32]); out [M * N], output (m, n) at m * N + n, each as a4w4_dot_bounded_limits on
 * row m of A and row n of W. threads: 0 all (OpenMP where the build has it), else at most
 * that many. Returns 0, or A4W4_EINVAL (K % 32 != 0, M, N or K 0, S 0, a NULL pointer). */
int a4w4_gemm_bounded_limits_fast(const uint8_t *a_fp4, const uint8_t *a_scale,
                                  const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                  size_t N, size_t K, unsigned S, a4w4_bounded_limits *out,
                                  unsigned threads);

/* The same on a chosen path: simd 1 the AVX2 block sums where the build and the CPU have them
 * (what the two functions above take), 0 the portable pair table; the outputs are the same. */
int a4w4_gemm_bounded_limits_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale,
                                     const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                     size_t N, size_t K, unsigned S, a4w4_bounded_limits *out,
                                     unsigned threads, int simd);

#endif
