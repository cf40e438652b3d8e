/* selftest.h — the mutation self-test's bookkeeping: correct backends and mutants (deliberately
 * wrong backends, backends/mutants.h) run through a4w4_run_case on a small matrix exactly as
 * `run` runs them (per-contract output comparison, poison, guard zones, pad-dependence
 * variants, quantizer and layout bytes); each mutant must fail some case (it is "killed" by
 * the first), each correct backend must pass every case it applies to, the oracle entry must
 * never fail. The mutants are judged with E8M0 code 0 read as 2^-127 (contracts §1).
 *
 * The caller opens the backends (backends/registry.h) into a4w4_selftest, runs every case
 * through a4w4_selftest_run_case and renders the tally. Nothing here prints. */
#ifndef A4W4_SELFTEST_H
#define A4W4_SELFTEST_H

#include <stddef.h>

#include "backend.h"
#include "casefile.h"
#include "devjudge.h"
#include "entry.h"
#include "invariance_measure.h"
#include "status.h"

#define A4W4_SELFTEST_MAX_CORRECT 64
#define A4W4_SELFTEST_MAX_MUTANTS 128

/* A mutant and the first case that killed it. */
typedef struct {
    a4w4_backend b;
    int killed;
    char kcase[96];
    char reason[640];    /* a4w4_selftest_entry_reason of the killing entry */
    char signature[384]; /* the killing entry's (engine/signature.h) */
    int inv_done;        /* measured by the batch-invariance stage (inv) */
    a4w4_inv_measured inv;
    /* the peers' tolerance criteria on the killing entry's outputs (engine/criteria.h); ntol
     * 0: it was killed by a byte check (layout, quantizer) or with no outputs to judge */
    size_t ntol;
    a4w4_crit_result tol[A4W4_CRITERIA_MAX];
} a4w4_selftest_mutant;

/* A correct backend: its verdict counts, the first failure. */
typedef struct {
    a4w4_backend b;
    size_t pass, fail, na;
    char first_fail[760]; /* "CASE: reason" */
    int inv_done;         /* measured by the batch-invariance stage (inv) */
    a4w4_inv_measured inv;
} a4w4_selftest_correct;

/* The backends of a self-test (correct ones ms[0..nm), cs[0..nc)) and the oracle's record. */
typedef struct {
    a4w4_selftest_mutant ms[A4W4_SELFTEST_MAX_MUTANTS];
    /* field bug reproductions (backends/mutants.h a4w4_field_repro_types): run and killed like
     * the mutants, reported in the field table, not in the kill rate */
    a4w4_selftest_mutant fr[8];
    size_t nfr;
    a4w4_selftest_correct cs[A4W4_SELFTEST_MAX_CORRECT];
    size_t nm, nc;
    int oracle_fail;
    char oracle_note[760]; /* "CASE: reason" of the first failing oracle entry */
} a4w4_selftest;

/* Called for every entry a case gives: the case, the entry, and why it failed ("" unless its
 * verdict is fail). */
typedef void (*a4w4_selftest_entry_fn)(void *user, const a4w4_case *c,
                                       const a4w4_entry_result *e, const char *why);

/* One line into buf saying why entry e failed: "D of C outputs differ, first at (row, col):
 * got 0xG expected 0xE" (bytes of a tensor for quantizer and layout entries), then the
 * runner's note after "; "; "verdict fail" when there is neither. */
void a4w4_selftest_entry_reason(const a4w4_entry_result *e, char *buf, size_t len);

/* Case c through the correct backends and the mutants not yet killed; every entry is tallied
 * (on_entry, when not NULL, sees each first). Returns a4w4_run_case's status (err set when it
 * is not A4W4_ST_OK; nothing tallied then). */
a4w4_hstatus a4w4_selftest_run_case(a4w4_selftest *t, const a4w4_case *c,
                                    a4w4_selftest_entry_fn on_entry, void *user, char *err,
                                    size_t errlen);

/* The batch-invariance stage (commands/invariance_measure.h) at one shape past a batch-size
 * switch (the CLI uses M 65, N 64, K 1024): every correct GEMM backend and every GEMM mutant
 * still alive is measured (alone, at several positions, permuted, repeated) and checked
 * against the prediction of its declared contract. A correct backend whose measurement
 * disagrees fails ("invariance_mM_nN_kK: ..."); a mutant whose measurement disagrees is
 * killed by it. GPU types are left out. A4W4_ST_OK, or A4W4_ST_BADINPUT / A4W4_ST_NOMEM
 * with err when a measurement could not be made. */
a4w4_hstatus a4w4_selftest_invariance(a4w4_selftest *t, size_t M, size_t N, size_t K,
                                      char *err, size_t errlen);
/* The cell of mutant m's row under criterion j of the criteria table (a4w4_criteria): "caught"
 * (the criterion fails the killing entry's outputs), "missed" (it passes them: a tolerance
 * test would have shipped the fault), "alarm" (it fails, but fails the correct outputs of
 * that case too: no evidence of the fault), "n/a" (its reference is not in the run),
 * "mistrust" (benchdnn's zero trust), "bytes" (killed by a byte check: no GEMM outputs to judge), "invar"
 * (killed by the batch-invariance stage with outputs its contract accepts at that shape: the
 * fault shows only between two calls), or "-" (the mutant survived). A mutant killed by the
 * batch-invariance stage is judged on the generated case of that shape. */
const char *a4w4_selftest_criterion_cell(const a4w4_selftest_mutant *m, size_t j);

/* The mutants killed so far; the correct backends that pass (no failure, at least one pass). */
size_t a4w4_selftest_killed(const a4w4_selftest *t);
int a4w4_selftest_correct_ok(const a4w4_selftest_correct *c);
size_t a4w4_selftest_correct_passing(const a4w4_selftest *t);

/* The mutant or field reproduction named name, or NULL. */
const a4w4_selftest_mutant *a4w4_selftest_find(const a4w4_selftest *t, const char *name);

/* 1 when every mutant and field reproduction is killed, every correct backend passes and the
 * oracle never failed. */
int a4w4_selftest_passed(const a4w4_selftest *t);

/* The GPU judge's mutant: with dev's fault set (a deliberately wrong judge, devjudge.h
 * set_fault), the cases through the matrix-unit backend b judged on the device until one
 * fails its oracle entry by the C oracles' re-check ("DISAGREES"); the fault is cleared
 * after. Returns 1 killed (why: "CASE: note"), 0 survived (why says so). */
int a4w4_selftest_judge_mutant(const a4w4_devjudge *dev, a4w4_backend *b,
                               const a4w4_case *cases, size_t ncases, char *why, size_t whylen);

#endif
