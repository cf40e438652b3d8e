/* judge.h — the one judgement: a backend's bf16 outputs against an oracle's, under the
 * contract the backend states (contracts §4.1), into one comparison record; the reading of
 * E8M0 scale code 0 an entry is judged under (contracts §1); and the entry's verdict.
 *
 * Every comparison here is a pure function: arrays in, a record out; nothing printed, no
 * global state, no allocation but a4w4_judge_bounded's scratch (and a4w4_judge_contract's
 * oracles, computed into the a4w4_oracles it is given). The runner (GEMM entries, the
 * oracle's own entry, the device path), the byte and tensor checks of check.h and the layer
 * path (layer_checks.c) all judge through these functions; the device judge's adapter
 * (devjudge.h) fills the same record.
 *
 * Arrays: got, expected, exact are bf16 bit patterns, n outputs each, in the row-major order
 * of a grid of rows x ncols outputs (a4w4_judge_grid). The grid maps an array position back
 * to the case's output (row, col), which is where a recorded mismatch is reported. */
#ifndef A4W4_JUDGE_H
#define A4W4_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_bound.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "sample_oracles.h"
#include "status.h"

struct a4w4_entry_result; /* entry.h's a4w4_entry_result (entry.h includes this header) */

/* A verdict, in this order ("pass", "fail", "n/a", "skip", "ambiguous"). skip: the entry
 * was never run (a bundle without the case's file; commands use it for cells a backend has
 * no entry for). ambiguous: the outputs match one reading of E8M0 code 0 and not the other
 * (contracts §1): never a pass, not judged. */
typedef enum {
    A4W4_VERDICT_PASS = 0,
    A4W4_VERDICT_FAIL = 1,
    A4W4_VERDICT_NA = 2,
    A4W4_VERDICT_SKIP = 3,
    A4W4_VERDICT_AMBIGUOUS = 4
} a4w4_verdict;

/* The mismatches a comparison records (the first ones, in array order). */
#define A4W4_JUDGE_MAX_RECORDED 5

/* Where the compared outputs lie in the case's M x N outputs: array position k is row
 * rows[k / ncols], column cols[k % ncols] (rows or cols NULL: k / ncols, k % ncols). */
typedef struct {
    size_t ncols;       /* outputs per row of the compared arrays; > 0 when n > 0 */
    const size_t *rows; /* [n / ncols] the case rows, or NULL */
    const size_t *cols; /* [ncols] the case columns, or NULL */
} a4w4_judge_grid;

/* One recorded mismatch: the case output (row, col), its bits got and expected. */
typedef struct {
    size_t row, col;
    uint16_t got, expected;
} a4w4_judge_mismatch;

/* The comparison record: every count an entry's verdict and its results.json fields are
 * made of (entry.h a4w4_entry_result copies it). Counts are outputs. */
typedef struct {
    size_t checked;    /* outputs compared (bit for bit, or within a bound) */
    size_t mismatches; /* of those, the ones that fail (unwritten and not_finite included) */
    size_t unwritten;  /* outputs still holding the poison A4W4_POISON_BF16 (backend.h) */
    size_t not_judged; /* outputs left out: outside the exact regime under exact */
    size_t not_finite; /* of those, NaN or Inf where every order gives a finite sum (also in
                          checked: compared, though not bit for bit) */
    unsigned max_ulp;  /* largest bf16 ULP distance of a mismatch (bounded: of any output
                          that differs); UINT_MAX: NaN against a number */
    /* bounded(S) only: the largest |got - exact| / tolerance, and the tolerance in bf16 ULPs
     * of the exact value (median, largest) over the outputs compared within it */
    int has_bound;
    double bound_use, bound_ulp_median, bound_ulp_max;
    /* bounded(S) only, the bound's strength (contracts §4.1 "The strength of a bound"): of
     * the outputs with a finite nonzero exact value and a finite tolerance (bound_weighed),
     * those whose tolerance admits 0 (a kernel writing 0 passes there) */
    size_t bound_weighed, bound_vacuous;
    size_t nrec; /* the first mismatches, in array order */
    a4w4_judge_mismatch rec[A4W4_JUDGE_MAX_RECORDED];
    uint8_t *mism; /* optional [n]: 1 where output k mismatched (the failure map's input) */
} a4w4_comparison;

/* What an output holding the poison means (A4W4_POISON_BF16, backend.h). */
typedef enum {
    A4W4_POISON_IGNORED = 0,  /* nothing: a NaN like any other (a recomputed tensor) */
    A4W4_POISON_UNWRITTEN,    /* never written: unwritten and a mismatch (a backend's y) */
    A4W4_POISON_UNLESS_EXPECTED /* the same, unless the expected output is the poison too */
} a4w4_poison_rule;

/* Empty *c for n outputs, mismatches to be marked in mism ([n], zeroed; NULL: not marked). */
void a4w4_judge_start(a4w4_comparison *c, uint8_t *mism, size_t n);

/* Bit for bit (ordered(S) and tree contracts, the oracles against each other, recomputed
 * tensors): got[k] must equal expected[k]; two NaNs compare equal (NaN payloads are in no
 * contract, contracts §2 step 4); +0 != -0. The poison per rule. Every output is checked. */
void a4w4_judge_exact(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                      const uint16_t *expected, size_t n, a4w4_poison_rule rule, uint8_t *mism);

/* exact (contracts §4.1 "exact"): bit for bit against o's exact outputs where the exact
 * regime is proven (o->in_regime) and where the output reads a NaN scale (NaN under every
 * contract, contracts §2); elsewhere not judged (exact is a reference there, not a verdict):
 * only required to be written and, where every order gives a finite sum (o->abs_sum below
 * 2^126), finite (NaN or Inf there: checked, a mismatch, counted in not_finite). n =
 * o->count. The poison is unwritten. */
void a4w4_judge_exact_regime(a4w4_comparison *c, const a4w4_judge_grid *g,
                             const uint16_t *got, const a4w4_oracles *o, uint8_t *mism);

/* bounded(S) (contracts §4.1 "bounded", §4.3): output k passes when |got - e| <= B + 2^-24
 * |e| + 2^-149 with e = L[k].exact and B = L[k].bound (ref/a4w4_bound.h; +-Inf when the model
 * can overflow that way, NaN when both ways or when a scale is 0xFF: then NaN is due).
 * exact[k] (bf16) is what a mismatch records as expected. Sets has_bound and the bound's
 * use, size and strength. The poison is unwritten. */
void a4w4_judge_bounded(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                        const uint16_t *exact, const a4w4_bounded_limits *L, size_t n,
                        uint8_t *mism);

/* atomic(S) (contracts §4.1 "atomic(S)"): output k passes when got[k] equals (bit for bit,
 * two NaNs equal) the result of at least one of the n! orders of its bf16 split values
 * q[k * S .. k * S + n) (ref/a4w4_atomic.h a4w4_atomic_member; every order enumerated).
 * in_order[k] (the split-order result) is what a mismatch records as expected. Every output
 * is checked; the poison is unwritten. */
void a4w4_judge_atomic(a4w4_comparison *c, const a4w4_judge_grid *g, const uint16_t *got,
                       const uint16_t *q, unsigned S, unsigned n, const uint16_t *in_order,
                       size_t count, uint8_t *mism);

/* The bits contract k expects of o's outputs: its ordered(S) or tree oracle's, exact's for
 * exact and bounded(S) (what a bound is measured from), for atomic(S) the adds in split order
 * (one member of each output's set, what a mismatch records). Computes that oracle into o
 * when it is not there yet. NULL when it cannot be (out of memory, too many trees). */
const uint16_t *a4w4_judge_expected(const a4w4_contract *k, a4w4_oracles *o);

/* got against oracles o (over the sample the grid describes, n = o->count) under contract k:
 * bounded(S) a4w4_judge_bounded, exact a4w4_judge_exact_regime, atomic(S)
 * a4w4_judge_atomic, ordered(S) and tree a4w4_judge_exact, the poison unwritten. 0, or -1
 * when the oracle cannot be computed. */
int a4w4_judge_contract(a4w4_comparison *c, const a4w4_judge_grid *g, const a4w4_contract *k,
                        a4w4_oracles *o, const uint16_t *got, uint8_t *mism);

/* Of o's n outputs, those where the two readings of E8M0 code 0 (o: 2^-127, alt: 2^-126,
 * contracts §1) expect other bits under contract k (exact values for bounded(S); for exact,
 * only outputs either reading judges). SIZE_MAX when an oracle cannot be computed. */
size_t a4w4_judge_readings_differ(const a4w4_contract *k, a4w4_oracles *o, a4w4_oracles *alt);

/* How an entry with E8M0 code 0 in its operands is judged (contracts §1). */
typedef enum {
    A4W4_CODE0_READINGS_AGREE = 0, /* both readings expect the same bits: 2^-127's comparison */
    A4W4_CODE0_JUDGED_AS_STATED,   /* a reading stated or declared: that reading's comparison */
    A4W4_CODE0_JUDGED_AMBIGUOUS,   /* none stated, the outputs match exactly one: not judged */
    A4W4_CODE0_MATCHES_BOTH,       /* none stated, the outputs match both readings */
    A4W4_CODE0_MATCHES_NEITHER     /* none stated, they match neither: 2^-127's comparison */
} a4w4_code0_outcome;

/* The outcome for outputs whose comparison under 2^-127 found ocp_mismatches and under
 * 2^-126 alt_mismatches, the readings differing on `differ` outputs, under policy (the
 * reading a run states or a backend declares: A4W4_CODE0_OCP, A4W4_CODE0_DRIVER, backend.h;
 * A4W4_CODE0_BOTH: none). */
a4w4_code0_outcome a4w4_judge_code0(size_t differ, int policy, size_t ocp_mismatches,
                                    size_t alt_mismatches);

/* An entry's verdict from its checks: unjudged (A4W4_VERDICT_SKIP: the outputs were never
 * run or no contract applies; A4W4_VERDICT_NA: the case does not apply to the backend;
 * A4W4_VERDICT_PASS: they were judged) wins; then a failed check; then an ambiguous code-0
 * reading (never a pass); then a vacuous bound (skipped: nothing judged); else a pass. */
a4w4_verdict a4w4_judge_verdict(int failed, a4w4_verdict unjudged, int ambiguous, int vacuous);

/* The contract an entry records when its kernel declared none (a4w4_judge_outputs with
 * contract NULL): it is judged as exact, inside the exact regime only (contracts §4.1). */
#define A4W4_CONTRACT_UNDECLARED "undeclared"

/* GEMM outputs computed elsewhere (a capture), to be judged from their own operands. */
typedef struct {
    const char *name, *regime, *backend; /* the entry's identity */
    const char *contract; /* exact, ordered(S), bounded, bounded(S); NULL: none declared */
    const uint8_t *a_fp4, *a_scale, *w_fp4, *w_scale; /* row-major [M, K/2], [M, K/32],
                                                         [N, K/2], [N, K/32] */
    size_t M, N, K;    /* K % 32 == 0 */
    const uint16_t *y; /* [M, N] bf16 bits, the kernel's outputs */
    int code0_reading; /* E8M0 code 0 (contracts §1): A4W4_CODE0_*; 0 judges under both */
} a4w4_judge_input;

/* Judge in->y against in->contract exactly as a backend's outputs on a generated case are
 * judged (every output; contracts §4.1: ordered(S) bit for bit; exact bit for bit inside the
 * exact regime and on NaN-reading outputs, the rest counted not judged; bounded(S) within its
 * per-output bound) into *e: identity, verdict, counts, judged counts, first mismatches, note.
 * A NULL contract (none declared) is judged as exact and recorded as A4W4_CONTRACT_UNDECLARED,
 * the note starting "no contract declared". The one judgement of captures, for `verify` and
 * `run --captures` alike, and of the C library (harness/api); defined with the runner
 * (run_golden.c), whose GEMM-entry path it takes. A4W4_ST_OK (the verdict is in *e), or
 * A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_judge_outputs(const a4w4_judge_input *in, struct a4w4_entry_result *e);

#endif
