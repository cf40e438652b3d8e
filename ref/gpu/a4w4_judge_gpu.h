/* a4w4_judge_gpu.h — the GPU judge: the exact and ordered(S) oracles, the bounded(S) bound,
 * atomic(S)'s split values and the exact-regime prover of contracts §4.1 on the device, plus
 * the device-side comparisons of a kernel's outputs with them. A fast implementation of the
 * contracts of ref/ (like the fast CPU oracles beside the plain ones), written independently of
 * gpu/'s kernels (no shared code or headers: a judge that reuses what it judges repeats its
 * bugs), held equal to the plain C oracles by tests and re-checked against them by the runner
 * on a sample of every case. Built only in GPU builds (library a4w4_judge_gpu); includes only
 * ref/ headers.
 *
 * Operands are DEVICE pointers to row-major tensors (a_fp4 [M, K/2], a_scale [M, K/32], w_fp4
 * [N, K/2], w_scale [N, K/32]) plus HOST copies of the same (the plain C oracle takes the
 * outputs whose rounding the device cannot certify: a4w4_judge_math.h). Outputs are device
 * arrays [M, N] owned by the judge case, valid until a4w4j_close. Every function returns 0 or a
 * negative A4W4J_E* and never prints; a4w4j_last_error() says why.
 *
 * Limits: K % 32 == 0 and K <= 2^21 (a4w4_judge_math.h's window), M, N >= 1; beyond, open
 * returns A4W4J_ESHAPE and the caller judges on the host. */
#ifndef A4W4_JUDGE_GPU_H
#define A4W4_JUDGE_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    A4W4J_OK = 0,
    A4W4J_ENODEV = -1,  /* no usable GPU */
    A4W4J_ESHAPE = -2,  /* M, N or K out of the judge's range */
    A4W4J_ENOMEM = -3,  /* device or host memory */
    A4W4J_ELAUNCH = -4, /* a kernel or copy failed */
    A4W4J_EARG = -5     /* NULL pointer, S == 0 */
};

/* The runtime's or the judge's message of the last failure on this thread. */
const char *a4w4j_last_error(void);
/* Number of usable devices (0 when none). */
int a4w4j_device_count(void);

typedef struct {
    const uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale;         /* device */
    /* host copies; h_w_fp4 and h_w_scale may both be NULL (W made on the device,
     * a4w4j_gen_w): the rows the plain C oracle reads then come from the device */
    const uint8_t *h_a_fp4, *h_a_scale, *h_w_fp4, *h_w_scale;
    size_t M, N, K;
} a4w4j_operands;

typedef struct a4w4j_case a4w4j_case;

/* Open a case on the operands (kept by pointer: they must outlive the case). */
int a4w4j_open(const a4w4j_operands *op, a4w4j_case **out);
void a4w4j_close(a4w4j_case *c);

/* ordered(S) outputs, bf16 [M, N] on the device (computed on first request; ordered(1) and
 * one S > 1 share a pass when asked for together through a4w4j_prepare). */
int a4w4j_ordered(a4w4j_case *c, unsigned S, const uint16_t **y);
/* exact outputs: bf16 and fp32 [M, N] on the device, and the prover's per-output flag (1: in
 * the exact regime) [M, N] uint8; *uncertain: outputs the device could not round (computed by
 * the plain C oracle, then written back). */
int a4w4j_exact(a4w4j_case *c, const uint16_t **bf16, const float **f32, const uint8_t **proven,
                size_t *uncertain);
/* bounded(S) bound B [M, N] double on the device (a4w4_dot_bounded_bound's value, NaN where
 * a scale is 0xFF); computed with the exact outputs. */
int a4w4j_bound(a4w4j_case *c, unsigned S, const double **B);
/* bounded(S) limits of every output (a4w4_dot_bounded_limits' values, contracts §4.1, §4.3):
 * the bound B [M, N] double as a4w4j_bound, the exact value rounded once to double [M, N]
 * (NaN where a scale is 0xFF) and where ±Inf is allowed [M, N] uint8 (A4W4J_INF_POS 1,
 * A4W4J_INF_NEG 2), all on the device. */
int a4w4j_bound_limits(a4w4j_case *c, unsigned S, const double **B, const double **exact,
                       const uint8_t **infs);
/* atomic(S) split values of every output (contracts §4.1 "atomic(S)"), bf16 on the device:
 * split j of output i at q[j * M * N + i], j < *nsplit (n', the non-empty splits); each the
 * split's fp32 total (blocks ascending from +0.0) rounded to bf16 by RNE, NaN 0x7FC0 in a
 * split that reads a 0xFF scale (so every order's result is NaN; ref/a4w4_atomic.c makes
 * every split of such an output NaN: the sets are the same). S in 1 .. 6 (else A4W4J_EARG).
 * Computed on first request per S by the ordered pass. */
int a4w4j_atomic(a4w4j_case *c, unsigned S, const uint16_t **q, unsigned *nsplit);
/* Compute in as few passes as possible what a case needs: ordered(1) and ordered(S1) for
 * S1 > 1 (0: none), exact (+ proven) when exact != 0, bound(Sb) for Sb > 0. */
int a4w4j_prepare(a4w4j_case *c, unsigned S1, int exact, unsigned Sb);

/* The weight preshuffle of contracts §3.1 on the device: w_fp4 [N, K/2] -> dst (N*K/2 bytes,
 * device); N % 16 == 0 and K % 64 == 0 (else A4W4J_ESHAPE). */
int a4w4j_preshuffle(const uint8_t *w_fp4, size_t N, size_t K, uint8_t *dst);

/* ---- W made on the device (docs/gpu.md, "W made on the device") --------------------------
 * The weight operand of a generated case, bit for bit the bytes the harness's generator makes
 * on the host (harness/gen: row n of W from its own splitmix64 stream keyed by the case's seed,
 * name and n; a4w4_judge_wgen.h states the streams), so that a case the device judges whole
 * needs none of W uploaded. Regimes as harness/io/casefile.h numbers them; the range regime
 * is not made here (the device path never takes it). */
enum {
    A4W4J_WGEN_EXACT = 0,
    A4W4J_WGEN_NORMAL = 1, /* W's side: codes and scales 123..131 (A is the host's) */
    A4W4J_WGEN_WIDE = 2,
    A4W4J_WGEN_SPECIAL = 3,
    A4W4J_WGEN_CODE0 = 4,
    A4W4J_WGEN_TINY = 5
};

typedef struct {
    uint64_t seed;    /* the case's seed */
    const char *name; /* the case's name (NUL-terminated; keys every stream) */
    size_t N, K;      /* W is [N, K/2] codes, [N, K/32] scales */
    int regime;       /* A4W4J_WGEN_* */
} a4w4j_wgen;

/* W of case g on the device: w_fp4 [N, K/2] and w_scale [N, K/32] row-major (device arrays of
 * those sizes), and with w_scale_swizzled != NULL the scales' contracts §3.2 swizzle
 * [N * K/32] (N % 32 == 0 and (K/32) % 8 == 0, else A4W4J_ESHAPE). Every row and every
 * regime's per-row overrides (contracts §4.1); returns when they are written (a kernel
 * under test may read them on any stream next; a failed kernel is the return's). K % 32 == 0,
 * K <= 2^21, N >= 1 (else A4W4J_ESHAPE); a regime outside A4W4J_WGEN_*: A4W4J_EARG. */
int a4w4j_gen_w(const a4w4j_wgen *g, uint8_t *w_fp4, uint8_t *w_scale,
                uint8_t *w_scale_swizzled);
/* Test only: 1 makes a4w4j_gen_w draw every row from the next row's stream (a4w4_wgen_check
 * must fail); 0 none. Process-wide. */
void a4w4j_set_wgen_fault(int fault);

/* ---- comparisons on the device ----------------------------------------------------------- */
#define A4W4J_MAX_FIRST 8

typedef struct {
    size_t checked, mismatches, unwritten;
    unsigned max_ulp;
    unsigned long long hash; /* order-independent hash of every output compared */
    /* bounded compare: the largest |got - e| / tolerance and tolerance / ulp(e) */
    double bound_use, bound_ulp_max;
    /* a4w4j_compare_limits only: the tolerance's median in bf16 ULPs over the outputs it was
     * measured on, and the outputs weighed / with a vacuous tolerance (engine/judge.h) */
    double bound_ulp_median;
    size_t weighed, vacuous;
    size_t nfirst;           /* the first mismatches in row-major order */
    struct {
        size_t index;
        uint16_t got, expected;
    } first[A4W4J_MAX_FIRST];
} a4w4j_cmp;

/* got vs expected, bit for bit (two NaNs match; `poison` counts as unwritten). mask: NULL, or
 * a device uint8 [n]: compare only where it is nonzero (checked counts those). */
int a4w4j_compare_exact(const uint16_t *got, const uint16_t *expected, const uint8_t *mask,
                        size_t n, uint16_t poison, a4w4j_cmp *out);
/* bounded (contracts §4.1): output k passes when |got - e| <= B + 2^-24 |e| + 2^-149, e the
 * exact fp32 value; NaN must meet NaN, Inf the same Inf (the runner's rule). */
int a4w4j_compare_bounded(const uint16_t *got, const uint16_t *exact, const float *exact_f32,
                          const double *B, size_t n, uint16_t poison, a4w4j_cmp *out);
/* The runner's bounded(S) rule against the limits of a4w4j_bound_limits (B, E the exact value
 * in double, infs where ±Inf is allowed; all device arrays [n]), contracts §4.1, §4.3: output
 * k passes when |got - E| <= B + 2^-24 |E| + 2^-149; where B is NaN it must be NaN; a NaN
 * only where both infinities are allowed, an infinity only where its sign is. Fills every
 * field of out as harness/engine/judge.c's a4w4_judge_bounded does for the same outputs
 * (exact: the bf16 exact values the first mismatches record), the tolerance's median in ULPs
 * included (a radix select on the device): only the counts come back, not the outputs. */
int a4w4j_compare_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                         const double *E, const uint8_t *infs, size_t n, uint16_t poison,
                         a4w4j_cmp *out);
/* a4w4j_compare_limits over one part of a case (a block of its rows, the device judge's
 * bounded memory: docs/gpu.md), without the median: fills out as a4w4j_compare_limits does
 * (indices and hash over the part's own [0, n)) but bound_ulp_median (0); each output's
 * tolerance in bf16 ULPs goes to ulps[k] (a caller's device array [n]: the double's bits,
 * UINT64_MAX where not measured) and *measured counts those measured. Contracts §4.1, §4.3. */
int a4w4j_compare_limits_part(const uint16_t *got, const uint16_t *exact, const double *B,
                              const double *E, const uint8_t *infs, size_t n, uint16_t poison,
                              unsigned long long *ulps, size_t *measured, a4w4j_cmp *out);
/* The median of the measured values of ulps (device [n] as a4w4j_compare_limits_part writes
 * them, `measured` of them measured) into *median: the mean of the two middle values when
 * measured is even, 0 when none; the value a4w4j_compare_limits gives over the same outputs. */
int a4w4j_ulps_median(const unsigned long long *ulps, size_t n, size_t measured, double *median);
/* atomic(S) (contracts §4.1 "atomic(S)"), harness/engine/judge.c's a4w4_judge_atomic on the
 * device: output k passes when got[k] equals (two NaNs equal) the result of one of the
 * nsplit! orders (every one enumerated) of adding q[j * n + k], j < nsplit (a4w4j_atomic's
 * layout), into +0, each add rounded once to bf16; the poison is unwritten. The first
 * mismatches record the split-order result as expected, max_ulp the distance to it. */
int a4w4j_compare_atomic(const uint16_t *got, const uint16_t *q, unsigned nsplit, size_t n,
                         uint16_t poison, a4w4j_cmp *out);
/* Outputs where a and b differ in any bit. */
int a4w4j_count_diff(const uint16_t *a, const uint16_t *b, size_t n, size_t *count);
/* Bytes got vs expected; with scale != NULL, byte i of row r (rows of row_bytes bytes, each
 * 16 bytes one 32-block) is skipped when scale[r * (row_bytes / 16) + (i % row_bytes) / 16]
 * is 0xFF (contracts §2 step 4: a NaN block's codes are unspecified). */
int a4w4j_compare_bytes(const uint8_t *got, const uint8_t *expected, size_t n,
                        const uint8_t *scale, size_t row_bytes, a4w4j_cmp *out);
/* Special regime (contracts §4.1 NaN rule): an output [M, N] counts as NaN when y and y2
 * (NULL: y alone) both are; it must be NaN exactly where row nan_a_row or column nan_w_row is
 * (SIZE_MAX: none). *wrong counts the others, *nans the NaN outputs. */
int a4w4j_nan_set(const uint16_t *y, const uint16_t *y2, size_t M, size_t N, size_t nan_a_row,
                  size_t nan_w_row, size_t *wrong, size_t *nans);
/* Fill n 16-bit elements of a device array with value (the runner's output poison): enqueued
 * on the default stream, so ordered before the work enqueued there next (a kernel under
 * test), without a synchronisation of its own; a failure of the fill itself shows at the next
 * one. */
int a4w4j_fill16(uint16_t *dev, size_t n, uint16_t value);
/* Sum of a device uint8 array (the proven flags). */
int a4w4j_count_flags(const uint8_t *flags, size_t n, size_t *count);

/* Gather device values at rows x cols (host index lists) into host arrays: elem bytes each
 * (2 bf16, 4 fp32, 8 double). */
int a4w4j_gather(const void *dev, size_t elem, size_t N, const size_t *rows, size_t nrows,
                 const size_t *cols, size_t ncols, void *host);

/* ---- device memory ------------------------------------------------------------------------ */
/* The device's free and total memory in bytes (the runtime's view: arrays the judge keeps for
 * later cases count as used). */
int a4w4j_mem_info(size_t *free_bytes, size_t *total_bytes);
/* Frees what the judge keeps on the device between cases and comparisons (the arrays of closed
 * cases, the comparisons' scratch): before a case that needs the memory. Cases still open keep
 * theirs. */
void a4w4j_trim(void);

/* ---- device memory for callers without another runtime (the judge's tests) --------------- */
int a4w4j_alloc(void **dev, size_t bytes);
void a4w4j_free(void *dev);
int a4w4j_upload(void *dev, const void *host, size_t bytes);
int a4w4j_download(void *host, const void *dev, size_t bytes);

/* ---- test only: a deliberately wrong judge (selftest) -------------------------------------
 * 1: the ordered(1) outputs of every output column 7 (mod 64) come out one bf16 ULP high;
 * the C oracle's re-check of a sample must catch it. 0: none. Process-wide. */
void a4w4j_set_fault(int fault);

#ifdef __cplusplus
}
#endif

#endif
