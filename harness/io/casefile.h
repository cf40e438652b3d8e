/* casefile.h — case matrices: CSV files under cases/ (docs/cases.md).
 *
 * Format: a header line `name,M,N,K,regime,seed,tags`, one case per line; lines starting
 * with '#' are comments. regime is `exact` (exact-regime codes), `normal` or
 * `normal:<scale mode>` (activations quantized from normal bf16 data; default round_up), or
 * `wide` (scale codes spread over 1..254 on both sides with sa + sb near 254 so sums stay
 * finite, and outliers), `special` (exact-regime
 * data with special blocks: all zero, all -0, saturating, and one NaN-scale block in A and in
 * W whose dependent outputs must be NaN and no others), `code0` (wide data where E8M0 code
 * 0 appears on both sides: reported as ambiguous, contracts §1), or `tiny` (exact-regime data
 * with scales lowered so block values and outputs fall in the fp32 subnormal range, plus
 * zero-sign rows: contracts §4.1), or `range` (the edges of the fp32 and bf16 ranges: outputs
 * at and past bf16's largest finite value, combined scales beyond fp32 at both ends with
 * representable block values, E8M0 254 and 255 on both sides: contracts §4.3; the
 * generator's gen_range.h). seed is a decimal
 * uint64. tags are ';'-separated words. */
#ifndef A4W4_CASEFILE_H
#define A4W4_CASEFILE_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_quant.h"
#include "status.h"

typedef enum {
    A4W4_REGIME_EXACT = 0,
    A4W4_REGIME_NORMAL = 1,
    A4W4_REGIME_WIDE = 2,
    A4W4_REGIME_SPECIAL = 3,
    A4W4_REGIME_CODE0 = 4,
    A4W4_REGIME_TINY = 5,
    A4W4_REGIME_RANGE = 6
} a4w4_regime;

/* Shape rule of a case (what this machine can generate): each dimension at most 2^22 and
 * the operands (M + N) * K / 2 bytes at most 2^36. */
#define A4W4_CASE_DIM_MAX 4194304u
#define A4W4_CASE_BYTES_MAX 68719476736.0

/* The shape rule above for M, N, K: 0, or -1 with why "M=.. N=.. K=.. breaks the shape rule
 * (each of M, N, K <= 4194304 and (M+N)*K/2 <= 64 GiB of operands)". Every command that takes
 * shapes (a case file, run, discover --shapes) refuses a shape by it, exit 2. */
int a4w4_case_shape_rule(size_t M, size_t N, size_t K, char *why, size_t len);

typedef struct {
    char name[96];
    size_t M, N, K;
    a4w4_regime regime;
    a4w4_scale_mode mode; /* for A4W4_REGIME_NORMAL */
    char regime_text[32]; /* as written in the file */
    uint64_t seed;
    char tags[128];
} a4w4_case;

/* Read a case file. Returns A4W4_ST_OK and a malloc'ed array (*cases, *n); or
 * A4W4_ST_BADINPUT with one line in err naming the file, line and rule (unreadable file, wrong
 * header, wrong column count, a non-integer or zero M/N/K, K not a multiple of 32, a shape past
 * the rule above, unknown regime, duplicate name), or A4W4_ST_NOMEM; then *cases is NULL and
 * *n 0. */
a4w4_hstatus a4w4_casefile_read(const char *path, a4w4_case **cases, size_t *n, char *err,
                                size_t errlen);

/* Parse a regime text ("exact", "normal", "normal:even", "wide", "special", "code0", "tiny",
 * "range"):
 * A4W4_ST_OK, or A4W4_ST_BADINPUT when unknown. */
a4w4_hstatus a4w4_regime_parse(const char *text, a4w4_regime *regime, a4w4_scale_mode *mode);

#endif
