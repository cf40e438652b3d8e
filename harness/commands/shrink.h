/* shrink.h — reduce a failing case on one GEMM backend to a minimal one that still fails the
 * same way (`a4w4check shrink`), as property-based testers shrink a failing input.
 *
 * "Fails the same way": the backend's entry fails with the signature class of the original
 * failure (engine/signature.h: a NaN fault stays a NaN fault, a missing K block does not turn
 * into some other error on the way). Two phases, each deterministic:
 *   1. shape: M, then N, then K (and once more around), each to the smallest value on the
 *      tile grid (1, 2, 3, 4, 8 and t-1, t, t+1 for t = 16, 32, 64, ... below the current
 *      value for M and N; every multiple of 32 up to 256, then p-32, p, p+32 for powers of
 *      two p, and the current K % 256 plus multiples of 256, for K) that still fails. The case
 *      is regenerated from its own line (same name, seed, regime), so the result is a
 *      case-file line anyone can rerun.
 *   2. operands, on that shape's generated data: whole K blocks zeroed (codes 0 in A and W),
 *      then rows of A, rows of W, then the scales of each row of A and of W set to 127 (1.0),
 *      each in halving chunks (all, halves, quarters, ... single units), a change kept when
 *      the case still fails. The result is no longer the generator's: it is an operand bundle
 *      (engine/failing.h) that `run --bundle` reruns.
 * Every trial is one run of the case on the backend (its pad variants included); at most
 * max_calls trials in all (the original's run included). Nothing here prints. */
#ifndef A4W4_SHRINK_H
#define A4W4_SHRINK_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "casefile.h"
#include "entry.h"
#include "gen.h"
#include "status.h"

typedef struct {
    a4w4_backend *b;   /* one backend with a GEMM (run) */
    size_t max_calls;  /* trials allowed, >= 1 */
    int full;          /* check every output of the original (else run's sampling rule) */
    int code0_reading; /* E8M0 code 0 (contracts §1): A4W4_CODE0_*, as run's runner */
} a4w4_shrink_opts;

/* Units of phase 2: which are left (1) and which were cleared (0). */
typedef struct {
    size_t n;
    uint8_t *live;
} a4w4_shrink_units;

typedef struct {
    a4w4_case original, shape;     /* the case, and its smallest failing shape (phase 1) */
    char cls[24];                  /* the signature class kept */
    a4w4_entry_result first, last; /* the original's entry and the minimal case's */
    size_t calls;                  /* trials run */
    int budget_hit;                /* max_calls ran out before the end */
    /* phase 2: the operands of the minimal case (row-major, [M, K/2], [M, K/32], ...) and
     * what is left of them */
    uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale;
    a4w4_shrink_units kblocks, a_rows, w_rows, a_scales, w_scales; /* scales: 1 = kept */
} a4w4_shrink_result;

/* Shrink case c on o->b into *r (free with a4w4_shrink_free). Returns A4W4_ST_OK when c
 * fails and r holds its minimal form; A4W4_ST_NA when c does not fail on the backend
 * (r->first says how it came out); A4W4_ST_NOMEM / A4W4_ST_BADINPUT with err (the backend
 * refused its result, the case cannot be generated here). */
a4w4_hstatus a4w4_shrink(const a4w4_shrink_opts *o, const a4w4_case *c, a4w4_shrink_result *r,
                         char *err, size_t errlen);

/* The minimal operands as case data (layouts derived, contracts §3) for a run or a bundle.
 * 0 or A4W4_ENOMEM. */
int a4w4_shrink_data(const a4w4_shrink_result *r, a4w4_case_data *d);

/* Units of u that are left, as ranges "0-3,7" (a4w4_ranges_format) into buf; "none". */
void a4w4_shrink_units_text(const a4w4_shrink_units *u, int want, char *buf, size_t len);

void a4w4_shrink_free(a4w4_shrink_result *r);

#endif
