/* a4w4_tree.h — tree contracts (contracts §4.2): the tree's fields and limits, its check against
 * a K, its splits, and the plain tree oracle: per output, exact node sums in a wide fixed-point
 * integer, each rounded once as §4.2 says. The fast path of a4w4_tree_fast.h is held bit-equal
 * to it. Contracts as values (exact, ordered(S), bounded(S), tree), their text and rule sets:
 * a4w4_contract.h.
 *
 * Operands are those of a4w4_gemm.h: a_fp4 [M, K/2], a_scale [M, K/32], w_fp4 [N, K/2],
 * w_scale [N, K/32] row-major, K a multiple of 32; outputs bf16 bits [M, N].
 *
 * Errors: functions return A4W4_OK or a negative a4w4_status and, where they take one, write
 * one line into err (errlen bytes; err may be NULL) naming the offending input and the rule.
 * Nothing here prints. */
#ifndef A4W4_TREE_H
#define A4W4_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_gemm.h"

/* Explicit split boundaries of a tree: at most 63 (64 splits); each a multiple of 32 in
 * 32 .. A4W4_TREE_BOUND_MAX. */
#define A4W4_TREE_MAX_BOUNDS 63
#define A4W4_TREE_BOUND_MAX 4294967264u
/* S of ordered(S), bounded(S) and tree(split=S): 1 .. 65536. fuse: 1 .. 2^32 - 1. */
#define A4W4_SPLIT_MAX 65536u
#define A4W4_TREE_FUSE_MAX 4294967295u
/* L of tree(lanes=L): 1 .. 65536 accumulators inside a split. chunk and tile: positive
 * multiples of 32 up to A4W4_TREE_BOUND_MAX elements. */
#define A4W4_TREE_LANES_MAX 65536u
/* The general form tree(...,sum=(...)) (contracts §4.2 "The general form"): a fixed tree over
 * the n = K/32 blocks of one output, n <= A4W4_SUMTREE_MAX_BLOCKS (K <= 8192), at most
 * A4W4_SUMTREE_MAX_NODES nodes. Held as tokens in prefix order: a block index b (< n), or
 * A4W4_SUMTREE_NODE | a for a node of a >= 1 inputs, the a subtrees following it. */
#define A4W4_SUMTREE_MAX_BLOCKS 256u
#define A4W4_SUMTREE_MAX_NODES 512u
#define A4W4_SUMTREE_MAX_TOKENS (A4W4_SUMTREE_MAX_BLOCKS + A4W4_SUMTREE_MAX_NODES)
#define A4W4_SUMTREE_NODE 0x8000u

typedef enum { A4W4_ORDER_ASC = 0, A4W4_ORDER_DESC = 1 } a4w4_tree_order;
/* How a list of values is reduced (the tree's reduce and combine keys): chain from +0, or
 * pairwise level by level; for lanecomb only, xor: the shuffle v[l] = node(v[l], v[l ^ x]),
 * x = L/2 .. 1, lane 0's value (contracts §4.2 rule 1a). */
typedef enum { A4W4_REDUCE_CHAIN = 0, A4W4_REDUCE_PAIRWISE = 1, A4W4_REDUCE_XOR = 2 } a4w4_tree_reduce;
/* Rounding of a node result and of the final bf16: to nearest even, or toward zero. */
typedef enum { A4W4_ROUND_RNE = 0, A4W4_ROUND_RZ = 1 } a4w4_tree_round;
/* The accumulator format node results are rounded to: fp32, or bf16 (8 significand bits,
 * the fp32 exponent range, subnormals down to 2^-133). */
typedef enum { A4W4_ACC_FP32 = 0, A4W4_ACC_BF16 = 1 } a4w4_tree_acc;

/* A tree contract (contracts §4.2). a4w4_tree_defaults gives ordered(1)'s values. */
typedef struct {
    unsigned leaf;            /* G in {1, 2, 4, 8, 16, 32, 64, 128}: elements per leaf (64, 128:
                               * a fused multi-block leaf, one matrix step) */
    a4w4_tree_round lround;   /* rounding of a leaf's exact sum to fp32 */
    a4w4_tree_order order;    /* leaf consumption order inside a split */
    unsigned fuse;            /* F >= 1: leaves per group (one node) */
    a4w4_tree_reduce reduce;  /* how a split's groups are reduced */
    unsigned prec;            /* P: 0 (exact node sums) or 8..64 (aligned, truncated) */
    a4w4_tree_round round;    /* rounding of every node result */
    a4w4_tree_acc acc;        /* format of every node result */
    unsigned split;           /* S (1..65536) when nbounds == 0: contracts §4.1 k_per_split */
    size_t nbounds;           /* explicit boundaries in elements (0: use split) */
    uint32_t bounds[A4W4_TREE_MAX_BOUNDS]; /* strictly increasing multiples of 32 */
    a4w4_tree_reduce combine; /* how split values are reduced */
    a4w4_tree_round final;    /* rounding of the accumulator value to bf16 */
    unsigned lanes;           /* L >= 1: accumulators inside a split (interleaved, strided) */
    unsigned chunk;           /* elements dealt to one lane at a time (a multiple of 32) */
    a4w4_tree_reduce lanecomb; /* how a split's lane values are reduced (xor: L a power of 2) */
    unsigned tile;            /* 0, or T: splits of T elements each (instead of split) */
    unsigned align;           /* A (a multiple of 32): split=S parts are round_up(ceil(K/S), A)
                               * elements; 256 (or 0) is contracts §4.1's k_per_split */
    unsigned sum_blocks;      /* 0; or n: the general form over n blocks (K = 32 n only) */
    size_t nsum;              /* tokens in sum (0 without the general form) */
    uint16_t sum[A4W4_SUMTREE_MAX_TOKENS]; /* the tree, prefix order (above) */
} a4w4_tree;

/* ordered(1)'s values: leaf=32, order=asc, fuse=1, reduce=chain, prec=0, round=rne,
 * acc=fp32, split=1, combine=chain, final=rne, lround=rne, lanes=1, chunk=32,
 * lanecomb=chain, tile=0 (off), align=256. contracts §4.2. */
void a4w4_tree_defaults(a4w4_tree *t);

/* A4W4_OK when t is a valid tree (every field in its range) and applies to K (K a positive
 * multiple of 32; every explicit boundary below K; a general form's K = 32 * sum_blocks, its
 * tokens one tree holding every block once, contracts §4.2 "The general form"); else
 * A4W4_EINVAL with err, e.g. "split boundary 4096 is not below K=4096", "sum names 8 blocks
 * (K=256), not K=512". */
int a4w4_tree_check(const a4w4_tree *t, size_t K, char *err, size_t errlen);

/* ---- the general form (contracts §4.2 "The general form"), ref/a4w4_sumtree.c ---------- */

/* Read the value of sum=, v[0..len) ("((0,1),(2,3))": '(' then inputs, block indices or
 * nodes, ','-separated, then ')'), into t->sum, t->nsum and t->sum_blocks (the largest index
 * + 1). 0; or -1 with why = one line naming the offset or block and the rule (a malformed
 * node, a block past A4W4_SUMTREE_MAX_BLOCKS, a block twice or missing, more than
 * A4W4_SUMTREE_MAX_NODES nodes). */
int a4w4_sumtree_parse(const char *v, size_t len, a4w4_tree *t, char *why, size_t whylen);

/* A4W4_OK when t->sum is one tree (prefix tokens, root a node, every node with >= 1 input, at
 * most A4W4_SUMTREE_MAX_NODES nodes) holding every block 0 .. sum_blocks-1 exactly once;
 * else A4W4_EINVAL with err. */
int a4w4_sumtree_check(const a4w4_tree *t, char *err, size_t errlen);

/* The text of t->sum ("((0,1),2)") into buf[len]: its length, or -1 when it does not fit or
 * the tokens are not one tree. */
int a4w4_sumtree_format(const a4w4_tree *t, char *buf, size_t len);

/* The splits of t over K (t checked for K): their count n, and when starts is not NULL the
 * first element of each split in starts[0..n) plus starts[n] = K (max >= n + 1 entries;
 * max too small: returns 0). Split S: parts of round_up(ceil(K/S), align) elements, the last
 * one ending at K (align 256: contracts §4.1, a4w4_split_k_per_split); explicit
 * boundaries b1 < b2 < ...: [0, b1), [b1, b2), ..., [b_last, K); tile T: [0, T), [T, 2T),
 * ..., the last one ending at K. */
size_t a4w4_tree_splits(const a4w4_tree *t, size_t K, size_t *starts, size_t max);

/* One output of tree contract t (contracts §4.2), plain oracle. *bf16 (may be NULL) receives
 * the output's bf16 bits (0x7FC0 when a scale of the output's row of A or W is 0xFF, or a
 * node meets +inf and -inf), *acc (may be NULL) the accumulator value before the final
 * rounding (an fp32 or bf16 value as float; NaN as above). A4W4_OK; A4W4_EINVAL when op or t
 * is NULL or a4w4_tree_check(t, op->K) fails; A4W4_ENOMEM when scratch (K/leaf floats)
 * cannot be allocated. */
int a4w4_dot_tree(const a4w4_dot_operands *op, const a4w4_tree *t, uint16_t *bf16, float *acc);

/* a4w4_dot_tree over every output; arguments in a4w4_gemm_ordered's order with t for S.
 * y_bf16 [M, N] required, y_f32 [M, N] optional (the accumulator values). A4W4_EINVAL on
 * K % 32 != 0, M or N or K == 0, NULL pointers, or t not applying to K (a4w4_tree_check);
 * A4W4_ENOMEM. */
int a4w4_gemm_tree(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                   const uint8_t *w_scale, size_t M, size_t N, size_t K, const a4w4_tree *t,
                   uint16_t *y_bf16, float *y_f32);

#endif
