/* runner.h — one case through every backend, compared per contract (contracts §4.1), with the
 * checks that make a verdict trustworthy: poisoned outputs (every output must be written), guard zones (no
 * out-of-bounds write; out-of-bounds scale reads turn into NaN), guarded outputs and operand
 * digests around every call (engine/integrity.h: no write outside y or into an operand),
 * both readings of E8M0 code 0 (contracts §1), a backend that keeps timing out stopped, and,
 * for backends that read the ASM layouts, the pad-dependence variants of contracts §3.3.
 *
 * Results come back as typed entries (entry.h), one per case x backend plus the oracle's;
 * a4w4_entry_list_json writes their results.json form. Calls into a backend whose type is not
 * thread_safe (backend.h) are serialized; everything else may run on several threads. */
#ifndef A4W4_RUNNER_H
#define A4W4_RUNNER_H

#include "backend.h"
#include "casefile.h"
#include "devjudge.h"
#include "entry.h"
#include "status.h"
#include "verify_bundle.h"

/* The command that reruns item `item` (a case name, or "golden/<stem>" for a bundle) on
 * backend `backend` exactly as this run did: one line into buf (cli/ builds it from its own
 * options; engine code never prints it). */
typedef void (*a4w4_repro_fn)(const void *ctx, const char *item, const char *backend,
                              char *buf, size_t len);

/* This run's own rates, measured at its start (a4w4_budget_calibrate): seconds per MAC of the
 * host oracles of one case (ordered(1), exact, the exact-regime count), of one run of each
 * selected GEMM backend judged on the host (0 for the others), and per generated operand
 * element. */
typedef struct {
    double oracle_s_per_mac, gen_s_per_element;
    double run_s_per_mac[64];
    double calibrate_s; /* the calibration's own wall */
    /* The calibration's first call of each backend with a run_sequence (plugins), judged like
     * any other call (engine/statecheck.h reports it in the backend's call-sequence entry):
     * cal_judged[i] 1 when judged (0: not called, or no contract for the shape), its
     * outputs checked and those that differ, cal_bound[i] 1 when judged within a bound. */
    int cal_judged[64], cal_bound[64];
    size_t cal_checked[64], cal_mismatches[64];
} a4w4_rates;

/* The calibration case and the outputs of its first call, in words. */
#define A4W4_CALIBRATION_SHAPE "64x512x4096, a 4x64 sample"

struct a4w4_statecheck;

/* The whole-run budget (a4w4_budget_plan_make): which cases of this shard get every output
 * checked on the host. cases[i] is checked in full when full[i]; est_s[i] its estimate.
 * The run holds it to its measured time (a4w4_budget_hold, a4w4_budget_spent; docs/cli/run.md
 * "Sampling and the budget"): held[i] is A4W4_HELD_KEPT or A4W4_HELD_BACK once case i's check
 * is decided (0 before), spent_s the wall seconds the cases checked in full took so far and
 * spent_est_s their estimates. */
typedef struct {
    const a4w4_case *cases;
    size_t ncases;
    uint8_t *full;
    double *est_s;
    uint8_t *held;
    double budget_s, planned_s; /* the budget and the estimate of what it buys */
    size_t nfull, nsampled, ncheaper;
    size_t ndevice; /* cases every entry of which the device judges (a4w4_judged_on_device):
                       the budget buys nothing there, they are neither full nor sampled */
    size_t nheld;   /* cases the plan had in full that the run sampled to keep the budget */
    double spent_s, spent_est_s;
} a4w4_budget_plan;

/* The plan's index of case c (a pointer into plan->cases), or -1: not one of its cases, or
 * no plan (NULL, or freed). */
long a4w4_budget_plan_index(const a4w4_budget_plan *plan, const a4w4_case *c);

#define A4W4_HELD_KEPT 1
#define A4W4_HELD_BACK 2

/* Where a run's wall time goes, summed over its cases (seconds): generating operands, the
 * device judge (upload, its passes, the C oracles' re-check), the backends under test
 * (device and host runs, pad variants, downloads, comparisons), the host oracles of the
 * samples. The runner adds these; the caller (commands/run_plan.c) adds the rest of the wall
 * so that the table sums to it: setup (plan, calibration, header), record (the entries
 * annotated and turned into results lines, a case's memory freed), bundles (golden and
 * capture items), write (the results stream) and finish (the document). */
typedef struct {
    double setup_s, generate_s, judge_s, kernels_s, host_oracle_s;
    /* a4w4_runner.prefetch: the seconds its thread spent preparing cases (beside the run's
     * table: it overlaps the previous case's stages); generate_s and host_oracle_s then hold
     * what the run waited for it, split in proportion to its two parts */
    double prefetch_s;
    double record_s, bundles_s;
    double write_s, finish_s;   /* the results stream and documents (the caller's) */
    double backend_runs_s;      /* the backends' own run_ms, inside kernels_s */
    double variant_runs_s;      /* their pad variants' runs (contracts §3.3), inside kernels_s */
    double outputs_device, outputs_host; /* outputs compared on the device / on the host */
    double oracle_outputs; /* outputs the host oracles computed (each case's sample) */
    double w_device_bytes; /* bytes of W (codes, scales, swizzled scales) made on the device
                              instead of generated on the host and uploaded (docs/gpu.md) */
    double w_host_bytes;   /* bytes of such a W the host generated after all, for a host reader
                              of every row (a host-run backend, a judge that declined) */
} a4w4_stage_times;

/* The seconds of t's stages (backend_runs_s, inside kernels_s, not counted twice). */
double a4w4_stage_sum(const a4w4_stage_times *t);

typedef struct {
    a4w4_backend *backends;
    size_t nbackends;
    int full; /* check every output, no sampling */
    const a4w4_run_identity *id; /* passed to every backend's run; may be NULL */
    /* > 0 without a plan: check every output of a case whose a4w4_full_check_seconds is at
     * most this, sample the others; 0: sample above A4W4_FULL_CHECK_MACS */
    double budget_s;
    /* E8M0 code 0 (contracts §1): the reading the run states for every backend (A4W4_CODE0_*,
     * `--e8m0-code0`); 0, the default, judges each backend under the reading it declares
     * (a4w4_backend.code0_reading) and an undeclared one under both. */
    int code0_reading;
    /* A backend whose calls time out this many times in a row (A4W4_RUN_TIMEOUT: an isolated
     * plugin past --timeout) is not called again: its remaining entries fail "not run:
     * backend hung N times in a row" at once. 0: A4W4_MAX_TIMEOUTS_DEFAULT. */
    int max_timeouts;
    /* optional: every failing GEMM entry gets repro(repro_ctx, ...) as its "repro" */
    a4w4_repro_fn repro;
    const void *repro_ctx;
    /* optional: every failing GEMM entry is saved with its operands into this directory
     * (engine/failing.h; the entry's "saved" names the item, a write error goes to its
     * note and save_failed) */
    const char *save_dir;
    /* optional: every generated case's GEMM outputs kept, per backend, as output bundles in
     * this directory (engine/kept_outputs.h; the entry's "kept_output" names the file, or
     * "kept_output_missing" says why none was kept: sampled, judged on the device, not run) */
    const char *keep_dir;
    const a4w4_budget_plan *plan; /* the run's budget (NULL: budget_s's per-case rule) */
    const a4w4_rates *rates;      /* this run's rates (NULL: the constants below) */
    /* the device judge (NULL: none): every output of every case compared on the device for
     * backends with device forms (engine/devjudge.h) */
    const a4w4_devjudge *dev;
    a4w4_stage_times *stages; /* accumulated when not NULL */
    /* the call sequence (engine/statecheck.h): recorded with its first case's item; NULL or
     * !have: none */
    const struct a4w4_statecheck *seq;
    /* optional (a4w4_prefetch_new): while a case runs its backends, host threads generate
     * the operands of the next cases (a4w4_prefetch_next) and compute their host oracles, so
     * that the device does not wait for them; the results are the same bytes as without.
     * NULL: each case prepared in turn. Only for a runner called from one thread. */
    struct a4w4_prefetch *prefetch;
} a4w4_runner;

/* The most cases a4w4_runner.prefetch prepares ahead at once. */
#define A4W4_PREFETCH_MAX 8

/* A prefetch for a4w4_runner.prefetch preparing up to depth cases ahead at once (1 to
 * A4W4_PREFETCH_MAX, clamped), each on a thread of its own; beyond the first, the cases
 * prepared ahead hold at most 1/8 of the host's memory together (run_prep_bytes' estimate).
 * NULL when out of memory. */
struct a4w4_prefetch *a4w4_prefetch_new(unsigned depth);

/* The depth `run` uses when not told: 3 on a host of 8 or more cores (a GPU host: the
 * device waits for no case's operands), else 1 (the cores run the oracles and kernels). */
unsigned a4w4_prefetch_default_depth(void);

/* The most cases p prepares ahead at once (1 to A4W4_PREFETCH_MAX). */
unsigned a4w4_prefetch_depth(const struct a4w4_prefetch *p);

/* The cases to prepare after the one a4w4_run_case is called with next: next[0..n), in the
 * run's order (n = 0: none; a case then run without being next is prepared in turn; beyond
 * the depth, ignored). The cases must outlive the prefetch's use. */
void a4w4_prefetch_next(struct a4w4_prefetch *p, const a4w4_case *const *next, size_t n);

/* Wait for the prefetch's threads, free what they prepared and the prefetch (NULL: nothing). */
void a4w4_prefetch_free(struct a4w4_prefetch *p);

#define A4W4_MAX_TIMEOUTS_DEFAULT 2

/* A4W4_CODE0_* (how E8M0 code 0 is read): engine/backend.h. */

/* The cost model of a4w4_full_check_seconds without measured rates (runners made by tests and
 * other commands): seconds per MAC of the oracles, of one run of a CPU backend, of one run of
 * a GPU backend (the host's share), and seconds per generated operand element. */
#define A4W4_COST_ORACLE_S_PER_MAC 1e-10
#define A4W4_COST_CPU_RUN_S_PER_MAC 1e-10
#define A4W4_COST_GPU_RUN_S_PER_MAC 1e-11
#define A4W4_COST_GEN_S_PER_ELEMENT 8e-9
/* A backend held to a tree contract (contracts §4.2) adds its oracle: the fast path's rate
 * per MAC at leaf=32 (up to 2.5 times ordered(1)'s, fused nodes the slowest), times 32/leaf
 * for smaller leaves (summed outside the instruction-set kernels); or, for a tree the fast
 * path does not take, the plain oracle's seconds per leaf of each output (about 1 us a leaf,
 * measured from leaf=1 to leaf=32 on one core; two cores taken). */
#define A4W4_COST_TREE_FAST_S_PER_MAC 5e-11
#define A4W4_COST_TREE_PLAIN_S_PER_LEAF 1e-6
/* A tree the fast path takes with prec > 0 or acc=bf16 (integer nodes of finite precision,
 * bf16 rounding): seconds per leaf of each output, whatever the leaf size (`bench --tree`:
 * 5-6 ns a leaf on one core for tree(leaf=1,fuse=16,prec=26,round=rz), leaf=32 with prec=26,
 * and leaf=1 with acc=bf16; two cores taken). */
#define A4W4_COST_TREE_PREC_S_PER_LEAF 3e-9

/* The pad-dependence variants of contracts §3.3 an ASM-layout backend runs on an M x K
 * activation: 5 when the scale has pad columns or K % 256 != 0 (row and column fills and
 * garbage past the buffers), else 2 when it has pad rows (M % 256 != 0: the row fills), else
 * 0 (no pad exists: every fill gives byte-identical inputs). */
size_t a4w4_pad_variant_count(size_t M, size_t K);

/* Estimated host seconds to check every output of case c with r's backends: M*N*K times the
 * oracles' rate plus, per GEMM backend judged on the host, its runs (the baseline, and for one
 * that reads the ASM layouts its pad variants, a4w4_pad_variant_count) at its rate and its
 * tree contract's oracle for this shape, if any, plus (M + N) * K generated elements. The rates are r->rates when measured, else the constants. */
double a4w4_full_check_seconds(const a4w4_runner *r, const a4w4_case *c);

/* 1 when r has a device judge and every entry of case c is judged on the device: a regime the
 * judge takes (not range) and every selected backend's device form for c (a GEMM's contract
 * ordered(S) or bounded(S), a layout's, a quantizer's on the normal regime's activations; a
 * quantizer on another regime reads nothing: its entry is n/a);
 * E8M0 code 0, known once generated, may still send the case to the host. The host then
 * checks c on its sample alone (docs/architecture.md "Judging on the device"). */
int a4w4_judged_on_device(const a4w4_runner *r, const a4w4_case *c);

/* Run generated case c: append to out one "oracle" entry (ordered(1) == exact where the
 * prover holds; the special regime's NaN set), then one entry per backend in r's order.
 * Returns A4W4_ST_OK (verdicts in the entries: a4w4_entry_list_failures counts the failing
 * ones); A4W4_ST_BADINPUT when a backend refused its result (err: the refusal) or when the
 * case's operands cannot be allocated here (err: "too large for this machine: needs N GB";
 * nothing appended); A4W4_ST_NOMEM when the case cannot be run at all (err set; entries
 * appended so far stay in out). */
a4w4_hstatus a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out,
                           char *err, size_t errlen);

/* a4w4_judge_input, a4w4_judge_outputs and A4W4_CONTRACT_UNDECLARED: judge.h. */

/* Every output of case data d (row-major operands and their layouts, a4w4_case_data_load)
 * through each backend of r with a GEMM, compared per contract like a generated case (pad
 * variants, guards, signatures; c names it: its name, M, N, K, regime text, tags); one entry
 * per backend appended to out, no oracle entry. A4W4_ST_OK or A4W4_ST_NOMEM (err set). */
a4w4_hstatus a4w4_run_data(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                           a4w4_entry_list *out, char *err, size_t errlen);

/* Verify golden bundle path (contracts §7) with the systems under test suts[0..nsuts)
 * (verify_bundle.h): an entry for each of them whose name is also a selected backend's,
 * against the bundle's y_ordered, then one "oracle" entry for every other tensor check, then
 * the bundle's operands through every other selected backend with a GEMM (plugin, bundle,
 * HIP), each output compared per the backend's contract like a generated case's (entries of
 * regime and tags "golden", full outputs). Returns A4W4_ST_OK, A4W4_ST_BADINPUT on bad input (err set; the oracle entry records it as
 * a failure) or A4W4_ST_NOMEM (no room for the entries; err set). */
a4w4_hstatus a4w4_run_golden(const a4w4_runner *r, const a4w4_bundle_sut *suts, size_t nsuts,
                             const char *path, a4w4_entry_list *out, char *err, size_t errlen);

#endif
