/* criteria.h — the peers' tolerance criteria as data, and their verdicts on a set of outputs.
 *
 * The projects whose kernels this tool checks test them with tolerances. Each of their
 * criteria is one row of a table (a4w4_criteria): its thresholds, the reference it compares
 * with, what it does with NaN and with a share of elements out of tolerance, and the public
 * source that states it (docs/criteria.md cites each). a4w4_criterion_eval applies one row to
 * bf16 outputs and a reference, so a report can say beside a bit-exact failure which of those
 * tests would have passed it (contracts §4.1: bit-exactness is against the contract; a
 * criterion's PASS never changes a verdict). Nothing here prints. */
#ifndef A4W4_CRITERIA_H
#define A4W4_CRITERIA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* How a criterion measures: elementwise |got - ref| <= atol + rtol*|ref| (ALLCLOSE, with a
 * share of elements allowed over), cosine similarity over the whole output (COSINE, passes
 * when > threshold), SQNR 20*log10(||ref|| / ||ref - got||) in dB (SQNR, passes when >=
 * threshold), Frobenius ||got - ref|| / ||ref|| (NORM, passes when < threshold), equality
 * within threshold fp32 ULPs of the values widened to fp32 (ULP), value equality (EQUAL,
 * +0 == -0; mistrusted when more than threshold of the reference values are zero). */
typedef enum {
    A4W4_CRIT_ALLCLOSE = 0,
    A4W4_CRIT_COSINE,
    A4W4_CRIT_SQNR,
    A4W4_CRIT_NORM,
    A4W4_CRIT_ULP,
    A4W4_CRIT_EQUAL
} a4w4_crit_kind;

/* The reference a criterion compares with: the product of the dequantized operands in fp32
 * (rounded once to fp32 from the exact sum, then to bf16 where the peer casts its reference
 * to the output type), or the product of the unquantized operands (only where a run has
 * them: the generator's float source; otherwise the criterion is n/a). */
typedef enum { A4W4_REF_DEQUANT = 0, A4W4_REF_UNQUANT = 1 } a4w4_crit_ref;

/* What a criterion does with NaN: NOT_CLOSE, a NaN on either side is an element out of
 * tolerance (torch.isclose, equal_nan False); ZEROED, NaN set to 0 on both sides first;
 * POISONS, a NaN makes the whole measure NaN and the test fails; MUST_MATCH, a NaN reference
 * needs a NaN output and a NaN output needs a NaN reference. */
typedef enum {
    A4W4_NAN_NOT_CLOSE = 0,
    A4W4_NAN_ZEROED,
    A4W4_NAN_POISONS,
    A4W4_NAN_MUST_MATCH
} a4w4_crit_nan;

typedef struct {
    const char *id;       /* stable name in results.json ("aiter-checkallclose") */
    const char *label;    /* as reports print it ("AITER checkAllclose") */
    const char *column;   /* a table column's heading, at most 8 characters ("aiter") */
    a4w4_crit_kind kind;
    a4w4_crit_ref ref;
    int ref_bf16;         /* 1: the reference is rounded to bf16 first (the peer casts it) */
    double rtol, atol;    /* ALLCLOSE */
    double share;         /* ALLCLOSE: the largest share of elements out of tolerance that
                             still passes (0: none may be) */
    double threshold;     /* COSINE, SQNR, NORM, ULP, EQUAL as in a4w4_crit_kind */
    a4w4_crit_nan nan;
    const char *source;   /* "owner/repo path (function)" */
} a4w4_criterion;

/* The table, in report order; *n receives its length. Static storage. */
const a4w4_criterion *a4w4_criteria(size_t *n);
/* The row named id, or NULL. */
const a4w4_criterion *a4w4_criterion_find(const char *id);

#define A4W4_CRITERIA_MAX 12

typedef enum {
    A4W4_CRIT_PASS = 0,
    A4W4_CRIT_FAIL = 1,
    A4W4_CRIT_NA = 2,        /* the reference it needs is not in the run */
    A4W4_CRIT_MISTRUSTED = 3 /* EQUAL: too many zeros for the test to mean anything */
} a4w4_crit_verdict;

/* "PASS", "FAIL", "n/a", "MISTRUSTED". */
const char *a4w4_crit_verdict_name(a4w4_crit_verdict v);

/* One criterion's verdict on n outputs. value is its measure (ALLCLOSE: the share of
 * elements over, 0..1; COSINE: the cosine; SQNR: dB, +inf when equal; NORM: the relative
 * error; ULP, EQUAL: the share of elements that differ); max_rel the largest |got - ref| /
 * |ref| over elements with both finite and ref != 0; over the elements out of tolerance
 * (ALLCLOSE, ULP, EQUAL). text: the report line, "AITER checkAllclose: PASS (max rel 0.4 %,
 * 0 % of elements over)". */
typedef struct {
    const a4w4_criterion *c;
    a4w4_crit_verdict verdict;
    size_t n, over;
    double value, max_rel;
    int fails_correct;    /* it also fails the correct outputs (the contract oracle's) on the
                             same case: its FAIL says nothing about the fault (a4w4_criteria_mark) */
    char text[224];
} a4w4_crit_result;

/* Apply criterion c to got [n] (bf16 bits) against ref [n] (fp32 values: the reference of
 * c->ref; NULL when the run lacks it, giving n/a with why_na, e.g. "no unquantized operands in
 * this run"). n == 0 gives n/a. Fills *r, text included. */
void a4w4_criterion_eval(const a4w4_criterion *c, const uint16_t *got, const float *ref,
                         size_t n, const char *why_na, a4w4_crit_result *r);

/* Every criterion of the table on got against the references (dequant: fp32 [n]; unquant:
 * fp32 [n] or NULL), into r [A4W4_CRITERIA_MAX]; returns how many were written. */
size_t a4w4_criteria_eval_all(const uint16_t *got, const float *dequant, const float *unquant,
                              size_t n, const char *why_no_unquant, a4w4_crit_result *r);

/* r [nr] on some outputs, and base [nr] the same criteria on the correct outputs of that
 * case (the contract oracle's): each criterion that does not pass base is marked
 * fails_correct, and its text says "also fails the correct outputs". */
void a4w4_criteria_mark(a4w4_crit_result *r, const a4w4_crit_result *base, size_t nr);

/* 1 when at least one result passes: "a tolerance test would have shipped this". */
int a4w4_criteria_would_ship(const a4w4_crit_result *r, size_t nr);

/* Parity of two paths on the same inputs: every criterion on got [n] (bf16) with the other
 * path's outputs ref [n] (bf16, widened exactly) as its reference, the peers' verdict on the
 * difference (the unquantized reference is n/a). Returns the count written into r
 * [A4W4_CRITERIA_MAX], 0 when out of memory. */
size_t a4w4_criteria_on_pair(const uint16_t *ref, const uint16_t *got, size_t n,
                             a4w4_crit_result *r);

/* Two paths' outputs of the same inputs compared: n outputs, how many are bit-equal, the
 * largest bf16 ULP distance between them (NaN against a number not counted in it, but in
 * nan_vs_number), and the peers' criteria on b with a as reference (a4w4_criteria_on_pair). */
typedef struct {
    size_t n, equal, nan_vs_number;
    unsigned max_ulp;
    size_t ntol;
    a4w4_crit_result tol[A4W4_CRITERIA_MAX];
} a4w4_parity_diff;

/* Fill *d from a [n] (the reference path) and b [n]; 0, or -1 when out of memory (ntol 0). */
int a4w4_parity_diff_of(const uint16_t *a, const uint16_t *b, size_t n, a4w4_parity_diff *d);
/* "bit-equal E of N, D differ, max U ULP; peers on the difference: aiter PASS, ..." */
void a4w4_parity_diff_format(const a4w4_parity_diff *d, char *buf, size_t len);
/* {outputs, bit_equal, differ, max_ulp, nan_vs_number, tolerance_on_difference[]}; NULL when
 * out of memory. */
cJSON *a4w4_parity_diff_json(const a4w4_parity_diff *d);

/* "aiter PASS, torch FAIL, ..." (column names and verdicts), truncated to len. */
void a4w4_criteria_brief(const a4w4_crit_result *r, size_t nr, char *buf, size_t len);

/* A JSON array of r [nr]: {id, verdict, [value], text} each (value absent when n/a or not
 * finite); NULL when out of memory. */
cJSON *a4w4_criteria_json(const a4w4_crit_result *r, size_t nr);

#endif
