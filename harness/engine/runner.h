/* runner.h — one case through every backend, compared per contract (contracts §4.1), with the
 * checks that make a verdict trustworthy: poisoned outputs (every output must be written), guard zones (no
 * out-of-bounds write; out-of-bounds scale reads turn into NaN), and, for backends that
 * read the ASM layouts, the pad-dependence variants of contracts §3.3.
 *
 * Results come back as typed entries (entry.h), one per case x backend plus the oracle's;
 * a4w4_entry_list_json writes their results.json form. Calls into a backend whose type is not
 * thread_safe (backend.h) are serialized; everything else may run on several threads. */
#ifndef A4W4_RUNNER_H
#define A4W4_RUNNER_H

#include "backend.h"
#include "casefile.h"
#include "entry.h"
#include "status.h"
#include "verify_bundle.h"

/* The command that reruns item `item` (a case name, or "golden/<stem>" for a bundle) on
 * backend `backend` exactly as this run did: one line into buf (cli/ builds it from its own
 * options; engine code never prints it). */
typedef void (*a4w4_repro_fn)(const void *ctx, const char *item, const char *backend,
                              char *buf, size_t len);

typedef struct {
    a4w4_backend *backends;
    size_t nbackends;
    int full; /* check every output, no sampling */
    const a4w4_run_identity *id; /* passed to every backend's run; may be NULL */
    /* > 0: check every output of a case whose a4w4_full_check_seconds is at most this, sample
     * the others (the oracle entry's note says so); 0: sample above A4W4_FULL_CHECK_MACS */
    double budget_s;
    /* optional: every failing GEMM entry gets repro(repro_ctx, ...) as its "repro" */
    a4w4_repro_fn repro;
    const void *repro_ctx;
    /* optional: every failing GEMM entry is saved with its operands into this directory
     * (engine/failing.h; the entry's "saved" names the item, a write error goes to its
     * note and save_failed) */
    const char *save_dir;
} a4w4_runner;

/* `run`'s default --budget-seconds: 0, the fixed 2^26-MAC sampling rule. The budget is per
 * case and its rates are an optimized build's: an unoptimized one (CI's coverage and
 * sanitizer builds) runs a full pre-merge check some 50x slower, so a full default would not
 * fit a test run there. `--budget-seconds 10` checks every pre-merge output (~8.5 s here). */
#define A4W4_DEFAULT_BUDGET_S 0

/* The cost model of a4w4_full_check_seconds (this machine's rates: 2 vCPUs, one core each):
 * seconds per MAC of the oracles (ordered(1), exact, the exact-regime sum: fast, threaded),
 * of one run of a CPU backend (cpu-asm and cpu-fallback 2-46 G-MAC/s measured by `bench`, slowest at
 * M = 1; 10 G-MAC/s taken), of one run of a GPU backend (the host's share), and seconds per
 * generated operand element. */
#define A4W4_COST_ORACLE_S_PER_MAC 1e-10
#define A4W4_COST_CPU_RUN_S_PER_MAC 1e-10
#define A4W4_COST_GPU_RUN_S_PER_MAC 1e-11
#define A4W4_COST_GEN_S_PER_ELEMENT 8e-9

/* Estimated seconds to check every output of case c with r's backends: M*N*K times the
 * oracles' rate plus, per GEMM backend, its runs (the baseline, and for one that reads the
 * ASM layouts its 2 or 5 pad variants, contracts §3.3) at the CPU or GPU rate, plus
 * (M + N) * K generated elements. A constant model (no timing), so the choice between a full
 * check and a sample is the same on every machine and in every shard. */
double a4w4_full_check_seconds(const a4w4_runner *r, const a4w4_case *c);

/* Run generated case c: append to out one "oracle" entry (ordered(1) == exact where the
 * prover holds; the special regime's NaN set), then one entry per backend in r's order.
 * Returns A4W4_ST_OK (verdicts in the entries: a4w4_entry_list_failures counts the failing
 * ones); A4W4_ST_BADINPUT when a backend refused its result (err: the refusal) or when the
 * case's operands cannot be allocated here (err: "too large for this machine: needs N GB";
 * nothing appended); A4W4_ST_NOMEM when the case cannot be run at all (err set; entries
 * appended so far stay in out). */
a4w4_hstatus a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out,
                           char *err, size_t errlen);

/* Verify golden bundle path (contracts §7) with the systems under test suts[0..nsuts)
 * (verify_bundle.h): an entry for each of them whose name is also a selected backend's,
 * against the bundle's y_ordered, then one "oracle" entry for every other tensor check, then
 * the bundle's operands through every other selected backend with a GEMM (plugin, bundle,
 * HIP), each output compared per the backend's contract like a generated case's (entries of
 * regime and tags "golden", full outputs). Returns A4W4_ST_OK, A4W4_ST_BADINPUT on bad input (err set; the oracle entry records it as
 * a failure) or A4W4_ST_NOMEM (no room for the entries; err set). */
/* Judge capture bundle path (engine/verify_capture.h) into one entry per recomputed tensor:
 * name "capture/<file stem>", backend "capture:<op>", the capture's contract, regime
 * "capture". A malformed capture is one failing entry noting the rule. Returns A4W4_ST_OK
 * (also when the capture mismatches: the entries say so), A4W4_ST_BADINPUT (err: "<path>:
 * <rule>") or A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_run_capture(const char *path, a4w4_entry_list *out, char *err, size_t errlen);

/* Every output of case data d (row-major operands and their layouts, a4w4_case_data_load)
 * through each backend of r with a GEMM, compared per contract like a generated case (pad
 * variants, guards, signatures; c names it: its name, M, N, K, regime text, tags); one entry
 * per backend appended to out, no oracle entry. A4W4_ST_OK or A4W4_ST_NOMEM (err set). */
a4w4_hstatus a4w4_run_data(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                           a4w4_entry_list *out, char *err, size_t errlen);

a4w4_hstatus a4w4_run_golden(const a4w4_runner *r, const a4w4_bundle_sut *suts, size_t nsuts,
                             const char *path, a4w4_entry_list *out, char *err, size_t errlen);


#endif
