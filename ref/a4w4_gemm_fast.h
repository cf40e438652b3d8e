/* a4w4_gemm_fast.h — fast exact and ordered(S) GEMM oracles (contracts §4, §4.1).
 *
 * Optimized implementations of the contracts of a4w4_gemm.h, in the manner of BLIS: the
 * plain oracles (a4w4_gemm_exact, a4w4_gemm_ordered) stay the judge; these compute the same
 * outputs bit for bit on every input (NaN-scale blocks, ±0, saturation, Inf by overflow,
 * subnormal results, E8M0 code 0) and are held equal to them by tests/ref/test_gemm_fast.c.
 *
 * Operands and outputs are those of a4w4_gemm.h: a_fp4 [M, K/2], a_scale [M, K/32],
 * w_fp4 [N, K/2], w_scale [N, K/32] row-major; y_bf16 [M, N] bf16 bits (required), y_f32
 * [M, N] (optional, NULL). K must be a multiple of 32.
 *
 * Method (contracts §4): twice an E2M1 value is an integer in {0, ±1, ±2, ±3, ±4, ±6, ±8,
 * ±12}, so a 32-block dot of doubled codes is an exact integer (|dot| <= 4608), computed with
 * integer SIMD (AMX tiles, vpdpbusd on AVX512-VNNI / AVX-VNNI, vpmaddubsw on AVX2, plain C).
 * exact: the sum over blocks of dot_b * 2^(sa_b + sb_b - 256) is accumulated in an int64
 * window when a proof per tile of outputs shows every term of output (m, n) is an integer
 * multiple of 2^(min_b sa_b + min_b sb_b - 256) (the row's and the column's smallest codes
 * over their nonzero blocks) with a shift of at most 18 (so the total stays below 2^49 of that
 * quantum), else in 32-bit digits held in int64 limbs (any input); the bf16 and fp32 outputs
 * are the RNE of that exact integer sum. a4w4_fast_stats says how many outputs took which.
 * ordered(S): each block value rounded once to fp32, added in ascending K per split from +0.0,
 * split totals added in split order, vectorized across outputs only.
 *
 * Threads: OpenMP when the build has it (otherwise single-threaded). These functions print
 * nothing and keep no state between calls. */
#ifndef A4W4_GEMM_FAST_H
#define A4W4_GEMM_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_formats.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"

/* Instruction-set paths, chosen at run time from CPU features (__builtin_cpu_supports). */
typedef enum {
    A4W4_FAST_AUTO = 0,       /* the best path this build and CPU can run */
    A4W4_FAST_AMX = 1,        /* AMX-INT8 tiles (tdpbssd) + the AVX-512 set below (Linux) */
    A4W4_FAST_AVX512VNNI = 2, /* AVX-512 F/BW/VL/DQ/CD + AVX512-VNNI, 512-bit vpdpbusd */
    A4W4_FAST_AVXVNNI = 3,    /* AVX2 + AVX-VNNI, 256-bit vpdpbusd */
    A4W4_FAST_AVX2 = 4,       /* plain AVX2, vpmaddubsw + vpmaddwd */
    A4W4_FAST_PORTABLE = 5    /* portable C */
} a4w4_fast_isa;

#define A4W4_FAST_ISA_COUNT 6

/* "auto", "amx", "avx512vnni", "avxvnni", "avx2", "portable"; NULL for an unknown value. */
const char *a4w4_fast_isa_name(a4w4_fast_isa isa);

/* 1 when this build was compiled with the path and the CPU (and OS) can run it; AUTO and
 * PORTABLE are always 1; 0 otherwise. */
int a4w4_fast_isa_supported(a4w4_fast_isa isa);

/* The concrete path AUTO stands for (the first supported of AMX, AVX512VNNI, AVXVNNI, AVX2,
 * PORTABLE); any other value is returned unchanged. AMX is supported where the CPU has
 * AMX-TILE and AMX-INT8 and Linux grants the process the tile data state (arch_prctl
 * ARCH_REQ_XCOMP_PERM, requested once by the first check). */
a4w4_fast_isa a4w4_fast_isa_resolve(a4w4_fast_isa isa);

/* Threads a call with threads == 0 uses: omp_get_max_threads(), or 1 without OpenMP. */
unsigned a4w4_fast_max_threads(void);

/* What one call did, per output (all counts of outputs unless said). */
typedef struct {
    size_t window;     /* exact: summed in the int64 window (proof held for its tile) */
    size_t general;    /* exact: summed in the multi-limb accumulator */
    size_t trivial;    /* every term zero or a NaN row/column: written directly */
    size_t ordered;    /* ordered(S): computed by the ordered kernel */
    size_t plain;      /* handed to the plain oracle (K beyond the fast path's limit, or a
                          tree the fast path does not take) */
    size_t tree;       /* tree: computed by the tree reducer */
    size_t tree_redone; /* tree: of those, recomputed by the plain oracle (a fused node whose
                           rounding the doubles could not decide, a4w4_tree_fast.c) */
    a4w4_fast_isa isa; /* the path that ran */
    unsigned threads;  /* the thread count that ran */
} a4w4_fast_stats;

/* exact, same contract, arguments and errors as a4w4_gemm_exact: A4W4_EINVAL on K % 32 != 0,
 * M or N or K == 0, NULL pointers; A4W4_ENOMEM when scratch memory cannot be allocated.
 * AUTO path, all threads. contracts §4.1 "exact". */
int a4w4_gemm_exact_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                         const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                         float *y_f32);

/* ordered(S), same contract, arguments and errors as a4w4_gemm_ordered (S >= 1, else
 * A4W4_EINVAL). AUTO path, all threads. contracts §4.1 "ordered(S)". */
int a4w4_gemm_ordered_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                           uint16_t *y_bf16, float *y_f32);

/* The same with a thread count (0: a4w4_fast_max_threads()) and a path; stats optional
 * (NULL). A4W4_EUNSUPPORTED when isa is not supported here (a4w4_fast_isa_supported). */
int a4w4_gemm_exact_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                            const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y_bf16,
                            float *y_f32, unsigned threads, a4w4_fast_isa isa,
                            a4w4_fast_stats *stats);
int a4w4_gemm_ordered_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                              const uint8_t *w_scale, size_t M, size_t N, size_t K, unsigned S,
                              uint16_t *y_bf16, float *y_f32, unsigned threads, a4w4_fast_isa isa,
                              a4w4_fast_stats *stats);

/* The largest fuse of a tree with prec > 0 that the fast path takes (a node of finite
 * precision needs all its inputs at hand, contracts §4.2 rule 4). */
#define A4W4_TREE_FAST_PREC_FUSE_MAX 256u

/* The most lanes (tree(lanes=L), contracts §4.2 rule 1a) the fast path takes: it keeps every
 * lane's value of a split at hand. */
#define A4W4_TREE_FAST_LANES_MAX 64u

/* Tree contracts (contracts §4.2): 1 when the fast path computes t itself, else 0. It takes
 * every tree with prec=0 and up to A4W4_TREE_FAST_LANES_MAX lanes, and every tree with
 * prec=8..64, fuse <= A4W4_TREE_FAST_PREC_FUSE_MAX and one lane (any leaf, lround, order,
 * reduce, round, acc, split, tile or align, chunk, lanecomb, combine and final); the others
 * (the general form sum=, more lanes, prec with lanes > 1 or a larger fuse) run the plain
 * oracle, threaded. t NULL: 0. */
int a4w4_tree_fast_eligible(const a4w4_tree *t);

/* A tree contract over every output, same arguments, outputs and errors as a4w4_gemm_tree
 * (ref/a4w4_tree.h; A4W4_EINVAL also when t does not apply to K), bit-equal to it. Eligible
 * trees run vectorized across outputs on the AUTO path; the others, and K beyond the fast
 * path's limit, run the plain oracle over the outputs, threaded. stats (may be NULL) as above.
 * threads 0: a4w4_fast_max_threads(). */
int a4w4_gemm_tree_fast(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                        const uint8_t *w_scale, size_t M, size_t N, size_t K, const a4w4_tree *t,
                        uint16_t *y_bf16, float *y_f32);
int a4w4_gemm_tree_fast_ex(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K,
                           const a4w4_tree *t, uint16_t *y_bf16, float *y_f32, unsigned threads,
                           a4w4_fast_isa isa, a4w4_fast_stats *stats);

/* The bit-exact oracle of contract c (ref/a4w4_contract.h a4w4_gemm_contract) through the fast
 * oracles above, with a thread count (0: all); the same outputs and errors
 * (A4W4_EUNSUPPORTED for bounded(S)). */
int a4w4_gemm_contract_fast(const a4w4_contract *c, const uint8_t *a_fp4, const uint8_t *a_scale,
                            const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                            size_t K, uint16_t *y_bf16, float *y_f32, unsigned threads);

#endif
