/* check.h — one comparison of a recomputed tensor against an expected one, the unit every
 * report line is made of ("PASS"/"FAIL"/"N/A" with the first mismatch in hex). */
#ifndef A4W4_CHECK_H
#define A4W4_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef enum { A4W4_CHECK_PASS = 0, A4W4_CHECK_FAIL = 1, A4W4_CHECK_NA = 2 } a4w4_check_verdict;

typedef struct {
    char subject[96];   /* what was checked: a tensor name, or "cpu-asm vs y_ordered" */
    a4w4_check_verdict verdict;
    size_t checked;     /* elements compared */
    size_t mismatches;
    size_t first_row, first_col; /* first mismatch, in the tensor's [rows, cols] view */
    uint32_t got, expected;      /* bits at the first mismatch (got = recomputed/backend) */
    int elem_bytes;     /* 1 (U8) or 2 (BF16): how wide got/expected print */
    unsigned max_ulp;   /* largest bf16 ULP distance over mismatches (bf16 checks) */
    char note[160];     /* why N/A, or extra context */
} a4w4_check;

/* Compare U8 tensors byte for byte; the [rows, cols] view locates the first mismatch.
 * skip (optional, rows*cols flags) excludes elements (e.g. codes of NaN blocks). */
void a4w4_check_bytes(a4w4_check *c, const char *subject, const uint8_t *got,
                      const uint8_t *expected, size_t rows, size_t cols, const uint8_t *skip);

/* Compare bf16 bit patterns; two NaNs compare equal (NaN payloads are not part of any
 * contract, contracts §2 step 4), everything else must match bit for bit (+0 != -0). */
void a4w4_check_bf16(a4w4_check *c, const char *subject, const uint16_t *got,
                     const uint16_t *expected, size_t rows, size_t cols);

/* Mark a check not applicable with a reason. */
void a4w4_check_na(a4w4_check *c, const char *subject, const char *why);

/* bounded(S) (contracts §4.1 "bounded"): how far got lies from e = RNE_fp32(exact) as a
 * fraction of the output's tolerance B + 2^-24 |e| + 2^-149 (B: its bound, ref/a4w4_bound.h
 * a4w4_dot_bounded_bound); above 1 fails. NaN must meet NaN and an infinity the same
 * infinity (a NaN B: the output reads a 0xFF scale, got must equal e): those return 0 when
 * they agree, INFINITY when not, and set *tol to NaN; otherwise *tol is the tolerance. */
double a4w4_bounded_use(uint16_t got, float e, double B, double *tol);

/* A growable list of checks (a bundle's tensors, a failing entry's re-check). */
typedef struct {
    a4w4_check *items;
    size_t n, cap;
} a4w4_check_list;

/* Append a zeroed check and return it (NULL when out of memory). */
a4w4_check *a4w4_check_list_add(a4w4_check_list *l);
void a4w4_check_list_free(a4w4_check_list *l);

/* One human line: "PASS subject (n checked)" / "FAIL subject: first mismatch at (r, c): got
 * 0x.. expected 0x.., k mismatches" / "N/A subject: why". */
void a4w4_check_format(const a4w4_check *c, const char *prefix, char *buf, size_t len);

#endif
