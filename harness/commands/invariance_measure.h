/* invariance_measure.h — batch invariance measured on a backend: for one shape, the M-row
 * batch computed twice (a repeat), rows computed alone (M = 1) at several positions, and the
 * batch with its rows in reverse order, every output compared bit for bit with the batch's.
 * The operands are the normal regime's (random bf16 activations quantized per 1x32, contracts
 * §2), outside the exact regime, so two different accumulation orders differ on some outputs.
 *
 * Verdicts: invariant (every comparison equal), variant (some row alone or permuted differs
 * from the batch: rows, outputs, largest bf16 ULP distance), nondeterministic (the repeat
 * differs), n/a (the backend has no result for the shape: why). The prediction for the
 * backend is its own declared contract (engine/backend.h `contracts`, a shape rule set):
 * invariant when the contract at (M, N, K) is the contract at (1, N, K) and deterministic;
 * a measurement that differs from it is a finding of its own (the contract or the table is
 * wrong). Nothing here prints. */
#ifndef A4W4_INVARIANCE_MEASURE_H
#define A4W4_INVARIANCE_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "export.h"
#include "invariance.h"

/* Rows checked alone: at most this many positions. */
#define A4W4_INV_MAX_ALONE 4
/* Calls of one measurement (batch, repeat, each row alone, reversed) and their names' size. */
#define A4W4_INV_MAX_CALLS (3 + A4W4_INV_MAX_ALONE)
#define A4W4_INV_CALL_NAME_MAX 96

typedef enum {
    A4W4_MEAS_INVARIANT = 0,
    A4W4_MEAS_VARIANT = 1,
    A4W4_MEAS_NONDET = 2,
    A4W4_MEAS_NA = 3
} a4w4_meas_verdict;

/* "invariant", "variant", "nondeterministic", "n/a". */
const char *a4w4_meas_verdict_name(a4w4_meas_verdict v);

typedef struct {
    size_t M, N, K;
    a4w4_meas_verdict verdict;
    size_t positions[A4W4_INV_MAX_ALONE]; /* the rows computed alone: 0, M/2, M-1 (distinct) */
    size_t npositions;
    size_t outputs;       /* outputs compared, over every comparison */
    size_t rows, diffs;   /* rows compared (alone, or in the reversed batch) with an output
                             that differs from the batch's, and those outputs */
    size_t repeat_diffs;  /* outputs of the repeat that differ */
    unsigned max_ulp;     /* the largest bf16 ULP distance of a differing output */
    int first_row;        /* the first differing row (alone or permuted), -1 none */
    /* the prediction from the backend's declared contracts */
    int predicted;        /* 1 when both shapes have a declared contract */
    a4w4_inv_verdict prediction;
    int agrees;           /* 1: the measurement is what the prediction allows */
    char why[512];        /* n/a: the backend's reason */
} a4w4_inv_measured;

/* Measure backend b at (M, N, K) (1 <= M, K % 32 == 0) with operands of seed. Returns
 * A4W4_OK with *out filled (verdict n/a included), or an error status with err: the
 * backend failed (an error, not a verdict: a crash, left outputs unwritten, wrote out of
 * bounds), A4W4_ENOMEM. */
int a4w4_inv_measure(a4w4_backend *b, size_t M, size_t N, size_t K, uint64_t seed,
                     a4w4_inv_measured *out, char *err, size_t errlen);

/* As a4w4_inv_measure, each call handed run identity id (NULL: none; a bundle: backend then
 * refuses outputs whose metadata names another matrix hash or tool version). */
int a4w4_inv_measure_id(a4w4_backend *b, const a4w4_run_identity *id, size_t M, size_t N,
                        size_t K, uint64_t seed, a4w4_inv_measured *out, char *err,
                        size_t errlen);

/* The case names of the calls a4w4_inv_measure makes at (M, N, K), in call order:
 * "invariance_m<M>_n<N>_k<K>_batch", "..._repeat" (the same batch again), "..._row<i>" for
 * each row i computed alone (0, M/2, M-1, each once), "..._reversed" (M > 1). Returns how
 * many (at most A4W4_INV_MAX_CALLS). A bundle: backend finds each call's output by this name
 * (backends/bundle.h, contracts §7); a name without an output makes the measurement n/a. */
size_t a4w4_inv_call_names(size_t M, size_t N, size_t K,
                           char names[A4W4_INV_MAX_CALLS][A4W4_INV_CALL_NAME_MAX]);

/* Write the operands of every call a4w4_inv_measure makes at (M, N, K) with seed into dir,
 * one operand bundle per call named as a4w4_inv_call_names says (export.h, contracts §7:
 * a_fp4 [M, K/2], a_scale [M, K/32], W [N, ...] and their layouts; matrix hash and
 * tool version from o; the directory must exist; its manifest is the caller's:
 * a4w4_export_manifest). *bytes (may be NULL) grows by the tensors' size. Returns A4W4_OK,
 * or an error status with err (a file not written: its path and why; out of memory). */
int a4w4_inv_export(size_t M, size_t N, size_t K, uint64_t seed, const a4w4_export_opts *o,
                    const char *dir, double *bytes, char *err, size_t errlen);

/* The matrix hash of a set of measurement calls: FNV-1a 64 of names[0..n) and seed, as 16
 * hex digits (the export's manifest and the outputs read back carry it). */
void a4w4_inv_calls_hash(const char (*names)[A4W4_INV_CALL_NAME_MAX], size_t n, uint64_t seed,
                         char out[17]);

/* The prediction from b's declared contracts at (M, N, K) against (1, N, K): invariant,
 * variant, nondeterministic (a bounded contract) or unknown (no rule for a shape). */
a4w4_inv_verdict a4w4_inv_declared(const a4w4_backend *b, size_t M, size_t N, size_t K);

/* 1 when measured verdict m is what prediction p allows: invariant for invariant, variant for
 * variant; anything for nondeterministic and unknown; n/a is never a disagreement. */
int a4w4_inv_agrees(a4w4_inv_verdict p, a4w4_meas_verdict m);
/* One line: "variant at M 65 (3 rows, 120 outputs, max 2 ULP; declared contract predicts
 * invariant: DISAGREES)". */
void a4w4_inv_measured_text(const a4w4_inv_measured *m, char *buf, size_t len);

#endif
