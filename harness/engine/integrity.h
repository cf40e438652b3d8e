/* integrity.h — what the runner checks around every call into a backend, besides its outputs'
 * values: that it wrote nothing outside its outputs and nothing into its operands.
 *
 * Outputs: y [nrows, ncols] sits between guard zones holding the poison (engine/backend.h
 * A4W4_POISON_BF16): A4W4_OUT_GUARD values before it, and after it the padding rows up to a
 * multiple of 32 rows (AITER allocates its output so, contracts §4: a kernel that writes them
 * into y writes past its end) plus A4W4_OUT_GUARD values. A kernel that writes y[-1] or 64
 * values past the end lands in a guard, not in the harness's heap, and the call fails.
 *
 * Inputs: a digest of every operand the backend is given (the row-major A, W and their
 * scales, the contracts §3 layouts), taken before the call and compared after it, so that a
 * kernel that writes into its operands (zeroes them, scribbles a byte) fails naming the
 * operand. A fully checked case is hashed whole; a sampled case over the rows its sample reads
 * (A's rows, W's rows of the sampled columns, their scales, the 16-row preshuffle groups
 * and 32-row swizzle groups holding them, the whole activation-scale layout): the rest is
 * filler no output looks at. Isolated plugins run this check in their child
 * (backends/plugin.c), where their writes land. */
#ifndef A4W4_INTEGRITY_H
#define A4W4_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

#include "gen.h"

/* The output poison: a signalling-NaN bf16 pattern no arithmetic produces. Outputs still
 * holding it after a run were never written. */
#define A4W4_POISON_BF16 0x7FA5u

/* Guard values on each side of y (4 KiB each), beyond the padding rows after it. */
#define A4W4_OUT_GUARD 2048

/* An output buffer between poisoned guards. y = base + before; n = nrows * ncols. */
typedef struct {
    uint16_t *base, *y;
    size_t n, before, after;
} a4w4_out_buf;

/* Allocate o for nrows x ncols outputs: before = A4W4_OUT_GUARD, after = the padding rows up to
 * round_up(nrows, 32) rows of ncols plus A4W4_OUT_GUARD. 0, or A4W4_ENOMEM. */
int a4w4_out_alloc(a4w4_out_buf *o, size_t nrows, size_t ncols);
void a4w4_out_free(a4w4_out_buf *o);

/* Fill y and both guards with the poison. */
void a4w4_out_poison(a4w4_out_buf *o);

/* 1 when a guard no longer holds the poison; why says where in one phrase: "wrote 64 values
 * past the end of y (its guard and padding rows)" or "wrote 1 value before y (y[-1] ...)". */
int a4w4_out_breached(const a4w4_out_buf *o, char *why, size_t len);

/* The digest of a case's operands, one 64-bit hash per buffer (names as in gen.h). */
#define A4W4_DIGEST_BUFFERS 7
typedef struct {
    unsigned long long h[A4W4_DIGEST_BUFFERS];
} a4w4_case_digest;

/* The digest of d's operands over the rows sample s reads (s->full: everything). */
void a4w4_case_digest_of(const a4w4_case_data *d, const a4w4_sample *s, a4w4_case_digest *out);

/* 1 when d's operands differ from before (taken by a4w4_case_digest_of with s) or a guard
 * zone around them changed (a4w4_case_guards_intact); why gets one phrase naming the operand:
 * "wrote into its input a_fp4 (its bytes changed during the call)" or "wrote out of bounds:
 * the guard zone after w_scale changed". */
int a4w4_case_tampered(const a4w4_case_data *d, const a4w4_sample *s,
                       const a4w4_case_digest *before, char *why, size_t len);

#endif
