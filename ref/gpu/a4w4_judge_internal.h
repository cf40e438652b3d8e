/* a4w4_judge_internal.h — launchers of the judge's kernels (ref/gpu only). Each enqueues on
 * the default stream and returns the launch status. */
#ifndef A4W4_JUDGE_INTERNAL_H
#define A4W4_JUDGE_INTERNAL_H

#include <stdint.h>

#include "a4w4_judge_port.h"

/* What one GEMM pass of the judge reads and writes. */
typedef struct {
    const uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale; /* row-major, device */
    long long M, N, K;
    /* ordered pass */
    uint16_t *ord1;        /* ordered(1) bf16, or NULL */
    uint16_t *ordS;        /* ordered(S) bf16, or NULL */
    long long ordS_blocks; /* blocks per split of ordered(S) (and of atom) */
    uint16_t *atom;        /* atomic(S): each split total in bf16 [split][M * N], or NULL
                            * (then ordS is NULL: the pass takes one split size) */
    /* exact pass */
    uint16_t *ex_bf16;
    float *ex_f32;
    uint8_t *proven, *uncertain; /* per output flags */
    const uint8_t *facts_a, *facts_w; /* a4w4j_row_facts per row */
    double *bound;          /* bounded(S) bound, or NULL */
    double *ex_f64;         /* with bound: the exact value rounded once to double */
    uint8_t *infs;          /* with bound: where ±Inf is allowed (A4W4J_INF_* bits) */
    long long bound_blocks; /* blocks per split of the bound */
    /* the fixed-base path of the exact pass (a4w4_judge_math.h), or span_a NULL: the window
     * alone */
    const uint8_t *lo_a, *lo_w, *span_a, *span_w; /* a4w4j_row_span per row */
    int fix_limit;                                /* a4w4j_fix_limit(K / 32) */
    int fault;              /* a4w4j_set_fault */
} a4w4j_pass;

hipError_t a4w4j_launch_ordered(const a4w4j_pass *p);
hipError_t a4w4j_launch_exact(const a4w4j_pass *p);
hipError_t a4w4j_launch_row_facts(const uint8_t *fp4, const uint8_t *sc, long long rows,
                                  long long K, uint8_t *facts);
hipError_t a4w4j_launch_row_span(const uint8_t *fp4, const uint8_t *sc, long long rows,
                                 long long K, uint8_t *lo, uint8_t *span);
hipError_t a4w4j_launch_preshuffle(const uint8_t *w, long long N, long long K, uint8_t *dst);

/* Comparison kernels: per chunk of A4W4J_CHUNK outputs a count of mismatches (and of
 * unwritten outputs), plus device-wide maxima and hash in `glob`. */
#define A4W4J_CHUNK 65536
typedef struct {
    unsigned long long hash, checked;
    unsigned long long max_ulp, use_bits, ulp_bits; /* nonnegative doubles as bits */
} a4w4j_glob;

hipError_t a4w4j_launch_cmp_exact(const uint16_t *got, const uint16_t *exp, const uint8_t *mask,
                                  long long n, uint16_t poison, unsigned *miss, unsigned *unw,
                                  a4w4j_glob *glob);
hipError_t a4w4j_launch_cmp_bounded(const uint16_t *got, const uint16_t *exact, const float *ef,
                                    const double *B, long long n, uint16_t poison,
                                    unsigned *miss, unsigned *unw, a4w4j_glob *glob);
/* The runner's bounded rule against the limits (a4w4j_compare_limits): counts as cmp_bounded,
 * plus lim's outputs weighed, vacuous and measured, and each output's tolerance in bf16 ULPs
 * of the exact value as double bits in ulps[k] (UINT64_MAX where not measured). */
typedef struct {
    unsigned long long weighed, vacuous, measured;
} a4w4j_lim;
hipError_t a4w4j_launch_cmp_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                                   const double *E, const uint8_t *infs, long long n,
                                   uint16_t poison, unsigned *miss, unsigned *unw,
                                   a4w4j_glob *glob, a4w4j_lim *lim, unsigned long long *ulps);
/* Two order statistics of ulps (a4w4j_launch_cmp_limits) selected on the device a byte at a
 * time from the top, without the host: sel[i] holds the rank still to find among the values
 * matching prefix on mask; hist [2][256] counts the next byte (zero between passes). */
typedef struct {
    unsigned long long prefix, mask, rank;
} a4w4j_sel;
/* sel[0].rank = m / 2, sel[1].rank = m / 2 - 1 (m / 2 when m is odd), m = lim->measured;
 * prefixes and masks 0. */
hipError_t a4w4j_launch_sel_init(const a4w4j_lim *lim, a4w4j_sel *sel);
/* One byte (at shift) of both selections: a histogram pass over v[0, n), then the pick. */
hipError_t a4w4j_launch_sel_pass(const unsigned long long *v, long long n, a4w4j_sel *sel,
                                 int shift, unsigned *hist);
/* atomic(S) membership (a4w4j_compare_atomic): q [nsplit][n]; the counts as cmp_exact, the
 * ULP distance to the split-order result. */
hipError_t a4w4j_launch_cmp_atomic(const uint16_t *got, const uint16_t *q, int nsplit, long long n,
                                   uint16_t poison, unsigned *miss, unsigned *unw,
                                   a4w4j_glob *glob);
hipError_t a4w4j_launch_diff(const uint16_t *a, const uint16_t *b, long long n, unsigned *miss);
hipError_t a4w4j_launch_cmp_bytes(const uint8_t *got, const uint8_t *exp, long long n,
                                  const uint8_t *scale, long long row_bytes, unsigned *miss);
hipError_t a4w4j_launch_nan_set(const uint16_t *y, const uint16_t *y2, long long M, long long N,
                                long long ra, long long cw, unsigned *wrong, unsigned *nans);
hipError_t a4w4j_launch_fill16(uint16_t *dev, long long n, uint16_t value);
/* out[k] = the elem-byte element idx[k] of src, k < n. */
hipError_t a4w4j_launch_gather(const void *src, size_t elem, const unsigned long long *idx,
                               long long n, void *out);
hipError_t a4w4j_launch_count(const uint8_t *flags, long long n, unsigned *count);
hipError_t a4w4j_launch_uncertain_list(const uint8_t *flags, long long n, unsigned long long *list,
                                       unsigned *count, unsigned cap);

#endif
