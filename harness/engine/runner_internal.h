/* runner_internal.h — what the runner's stages share (runner.c, run_gemm.c, run_bytes.c,
 * run_device.c, run_golden.c): a case's judging, a GEMM run's state, and the helpers each
 * stage calls. Internal to the engine's runner: nothing outside those files (and budget.c,
 * statecheck.c) includes it. */
#ifndef A4W4_RUNNER_INTERNAL_H
#define A4W4_RUNNER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "devjudge.h"
#include "entry.h"
#include "gen.h"
#include "integrity.h"
#include "judge.h"
#include "runner.h"
#include "sample_oracles.h"

/* An internal status: the backend hung too often and is not called (judging.max_timeouts). */
#define RUN_NOT_RUN (-199)

static inline size_t row_at(const a4w4_sample *s, size_t i) { return s->full ? i : s->rows[i]; }
static inline size_t col_at(const a4w4_sample *s, size_t j) { return s->full ? j : s->cols[j]; }

/* Where a case's operands come from, to rebuild them after a backend wrote into them: a
 * generated case (c over sample s) or given row-major operands op = {a_fp4, a_scale, w_fp4,
 * w_scale} of c's shape (a golden bundle's tensors, a capture's). */
typedef struct {
    const a4w4_case *c;
    const a4w4_sample *s;
    const uint8_t *const *op; /* NULL: generated */
    int all_rows;             /* generated: every row (a4w4_case_generate_all), not s's only */
} case_source;

/* What a case's GEMM entries are judged against: the oracles (E8M0 code 0 read as 2^-127,
 * contracts §1) and, when code 0 occurs, the same oracles on the operands with code 0 read
 * as 2^-126 (alt; NULL else), under the run's A4W4_CODE0_* policy; the run's timeout limit. */
typedef struct {
    a4w4_oracles *o, *alt;
    int policy, max_timeouts;
    const a4w4_devjudge *dev;   /* the case's device judge (NULL: everything on the host) */
    const a4w4_devoracle *dor;  /* its oracle facts over every output */
    unsigned bounded_s;         /* the S of the bounded(S) limits the device judge holds */
} judging;

/* What run_gemm_backend carries between its steps. */
typedef struct {
    a4w4_backend *b;
    const a4w4_contract *k; /* the contract b keeps on this case (its rule for the shape) */
    a4w4_case_data *d;
    const a4w4_sample *s;
    const judging *j;
    const case_source *src;
    a4w4_out_buf y, y2; /* the baseline outputs and a variant's, between poisoned guards */
    size_t n;           /* outputs in the sample */
    a4w4_run_args args;
    a4w4_case_digest dig;
    char why[512], breach[256];
    char stale_of[160]; /* the case whose outputs the baseline repeated bit for bit ("" none) */
    a4w4_comparison cmp;     /* the baseline against the contract's oracle */
    double variants_ms; /* the pad variants' runs, each timed as the baseline's run_ms */
    int ambiguous;      /* the baseline matches one reading of E8M0 code 0 only */
    uint8_t *mism;      /* [n] the mismatches of the mapped comparison (a failing entry) */
    const uint16_t *yfail; /* the outputs the map is of: y's, or a variant's copy (vfail) */
    uint16_t *vfail;    /* the first changing pad variant's outputs when the baseline passed */
    const char *variant; /* which variant vfail holds (NULL none) */
    a4w4_oracles *judged_by; /* the oracles g->cmp was judged against (o, or alt under a stated
                                2^-126 reading) */
    /* device path (engine/devjudge.h, device_judges): every output judged on the device; y
     * holds the backend's outputs at the sample, re-judged by the C oracles into host_cmp */
    const a4w4_devjudge *dev;
    a4w4_comparison host_cmp;
    /* bounded(S) of an S the device judge does not hold: every output judged on the host
     * (run_bounded_dev); the case's M * N outputs (baseline, a variant), exact bf16 and
     * limits, or NULL */
    uint16_t *y_all, *y2_all, *exact_all;
    a4w4_bounded_limits *limits_all;
} gemm_run;

/* The oracles a case's GEMM entries are judged against (judging j): o over the case's
 * operands and, when E8M0 code 0 occurs, alt over them with code 0 read as 2^-126. j
 * points into the struct: it stays where run_case_oracles_open put it. */
typedef struct {
    a4w4_oracles o, alt;
    judging j;
} case_oracles;

/* ---- runner.c ---- */
/* d's deferred W completed on the host, its bytes counted in r's stages (w_host_bytes). */
void run_w_complete(const a4w4_runner *r, a4w4_case_data *d);
void run_enter(const a4w4_backend *b);

void run_leave(const a4w4_backend *b);

int run_call(const a4w4_backend *b, const a4w4_run_args *a);

/* The grid of sample s's outputs (judge.h): row-major nrows x ncols, at s's rows and columns. */
a4w4_judge_grid run_grid_of(const a4w4_sample *s);

void run_note(char *note, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void run_case_identity(a4w4_entry_result *e, const a4w4_case *c, a4w4_entry_kind kind,
                       const char *backend, const char *contract);

/* What the n outputs of an entry were judged by: the compared ones bit for bit or within the
 * bound, the rest not judged (an entry that compared nothing, or an ambiguous one, matching
 * one reading of E8M0 code 0 only (contracts §1): all of them). After put_comparison. */
void run_put_judged(a4w4_entry_result *e, const a4w4_comparison *cmp, size_t n);

void run_put_comparison(a4w4_entry_result *e, const a4w4_comparison *cmp, const a4w4_sample *s,
                        double ms, size_t proven, a4w4_verdict verdict);

/* Open co for case data d over sample s, judged under E8M0 code-0 policy A4W4_CODE0_*, a
 * backend stopped after max_timeouts timeouts in a row. 0, or -1 when out of memory; co is
 * valid for case_oracles_close either way. */
int run_case_oracles_open(case_oracles *co, const a4w4_case_data *d, const a4w4_sample *s,
                          int policy, int max_timeouts);

void run_case_oracles_close(case_oracles *co);

/* A generated case prepared for its backends: its sample, its operands (every row on the
 * device path) and its host oracles over the sample, each stage's seconds. st: A4W4_ST_OK;
 * A4W4_ST_NOMEM (sampling or the oracles, err says which); A4W4_ST_BADINPUT (the operands
 * cannot be allocated: err says how much they need). Pure in c and r's settings: the same
 * bytes on any thread (the generator and the oracles are counter-based and exact). */
/* A prepared case. When the device judge takes it and the host checks every output (a full
 * sample: --full or the budget, for the backends judged on the host), the device path's
 * re-check (the C oracles against the judge and each device entry) keeps the case's own
 * sample ds with its oracles dco (have_ds), as without the full check: the device compares
 * every output itself, and gathering every output back to judge it again on the host cost
 * seconds a case (docs/architecture.md "Judging on the device"). Else ds and dco are unused. */
typedef struct {
    const a4w4_case *c;
    a4w4_sample s, ds;
    a4w4_case_data d;
    case_oracles co, dco;
    int have_s, have_d, have_co, have_ds, have_dco; /* what to free */
    a4w4_hstatus st;
    char err[320];
    double gen_s, oracle_s; /* sampling and generation; the host oracles */
} case_prep;

/* Prepare case c of r into *p (st says how it went); run_prep_free frees it either way. */
void run_prep_case(const a4w4_runner *r, const a4w4_case *c, case_prep *p);
void run_prep_free(case_prep *p);

/* The host bytes run_prep_case(r, c) holds, estimated (the prefetch's memory cap): the
 * whole case's operands and layouts, or on the device path with W made there, A's side. */
double run_prep_bytes(const a4w4_runner *r, const a4w4_case *c);

/* ---- run_prefetch.c ---- */
/* r's prepared case c (a4w4_runner.prefetch), after waiting for its thread; NULL when none
 * is there, it is another case's (freed) or its preparation failed (freed: the caller
 * prepares c itself, with the memory of the case before it freed). The caller frees it with
 * run_prep_free. */
case_prep *run_prefetch_take(const a4w4_runner *r, const a4w4_case *c);

/* Start preparing r's next cases (a4w4_prefetch_next) on host threads, up to the depth and
 * the memory cap, dropping queued cases no longer among them; nothing without a prefetch or
 * a next case. */
void run_prefetch_start(const a4w4_runner *r);

/* A4W4_ST_BADINPUT with err = the first refusal's note when an entry of first.. refused its
 * result (another matrix's outputs), else A4W4_ST_OK. */
a4w4_hstatus run_refusals(const a4w4_entry_list *out, size_t first, char *err, size_t errlen);

/* ---- statecheck.c ---- */
/* When c is the call sequence's first case (r->seq, engine/statecheck.h): one entry per
 * backend with a run_sequence appended to out. A4W4_ST_OK or A4W4_ST_NOMEM. */
a4w4_hstatus run_statecheck(const a4w4_runner *r, const a4w4_case *c, a4w4_entry_list *out);

/* ---- run_gemm.c ---- */
/* The contract backend b holds case c to (contracts §4.1, §4.2): the first of its rules that
 * matches c's shape; a backend built without rules, its contract text parsed into *own. NULL
 * when none applies, with why ("contract FILE has no rule for M=.. N=.. K=.."). */
const a4w4_contract *run_case_contract(const a4w4_backend *b, const a4w4_case *c,
                                       a4w4_contract *own, char *why, size_t whylen);

/* Record the outputs' hash e->y_hash and whether it repeats the backend's previous call's
 * on another case bit for bit (g->stale_of). */
void run_note_repeat(gemm_run *g, a4w4_entry_result *e, unsigned long long hash);

/* 1 when comparison c is a bounded(S) one whose bound admits 0 on more than
 * A4W4_BOUND_VACUOUS_SHARE of the outputs it weighs (contracts §4.1 "The strength of a
 * bound"): its outputs are then not judged, and e's note says so. */
int run_bound_vacuous(const a4w4_comparison *c, a4w4_entry_result *e);

/* 1 when GEMM backend b with contract k (NULL: none) runs on the device path in j: it has a
 * device form and keeps a single ordered(S) contract, which the device judge computes over
 * every output bit for bit as the C oracles do, or a bounded(S) contract, whose every output
 * is judged against the limits (run_bounded_dev; contracts §4.1, §4.3).
 * exact (judged inside the exact regime only), tree contracts and shape rules stay on
 * the host sample. */
int run_on_device(const judging *j, const a4w4_backend *b, const a4w4_contract *k);

int run_gemm_backend(const a4w4_runner *r, a4w4_backend *b, const a4w4_case *c,
                     a4w4_case_data *d, const a4w4_sample *s, const judging *j,
                     const case_source *src, a4w4_entry_result *e);

/* ---- run_bytes.c ---- */
/* Finish a byte-comparison entry (layout and quantizer backends) from its checks. */
int run_byte_entry(const a4w4_case *c, const a4w4_backend *b, const a4w4_sample *s,
                   const a4w4_check *chk, int nchk, double ms, const char *na_why,
                   a4w4_entry_result *e);

/* A layout backend: its contracts §3 layouts of d against ref's, byte for byte. */
int run_layout_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                       const a4w4_sample *s, a4w4_entry_result *e);

/* A quantizer backend: the activation rows of a normal-regime case, quantized in the case's
 * mode, against ref's codes (NaN blocks' codes skipped) and scales. */
int run_quant_backend(a4w4_backend *b, const a4w4_case *c, const a4w4_case_data *d,
                      const a4w4_sample *s, a4w4_entry_result *e);

/* ---- run_device.c ---- */
/* The device path's baseline: the backend on every output, compared on the device into
 * g->cmp; its outputs at the sample come back in g->y. The device buffers are the judge's:
 * the host's guard zones and operand digests (engine/integrity.h) do not see them. */
int run_baseline_dev(gemm_run *g, a4w4_entry_result *e);

/* A bounded(S) backend on the device path, every output judged by the runner's bounded rule
 * (a4w4_judge_bounded's, contracts §4.1 "bounded", §4.3) against the limits of every output.
 * When the device judge holds this S (g->j->bounded_s) the comparison runs on the device
 * against the judge's limits (the C oracles re-check them on the sample) and only the
 * verdict and the outputs at the sample come back (run_baseline_dev); else every output
 * comes back and is judged on the host against the C oracles' fast form. Into g->cmp, its
 * outputs at the sample into g->y, the backend's status returned. run_bounded_dev_free frees
 * g's arrays. */
int run_bounded_dev(gemm_run *g, a4w4_entry_result *e);
void run_bounded_dev_free(gemm_run *g);

/* A pad variant on the device (the runner refilled the pads): the backend's outputs that
 * change against its baseline, counted on the device (every output when the call failed,
 * which e's note names). */
size_t run_variant_dev(gemm_run *g, const char *what, a4w4_entry_result *e);

/* A layout or quantizer backend judged on the device: its bytes over the whole case. */
int run_bytes_dev(const a4w4_devjudge *dev, a4w4_backend *b, const a4w4_case *c,
                  const a4w4_case_data *d, a4w4_entry_result *e);

/* 1 when some selected backend has a device form. */
int run_wants_device(const a4w4_runner *r);

/* What case d's device backends need of the judge: the S of an ordered(S) one (S > 1) with
 * the largest split-K workspace of those, of a bounded(S) one and of an atomic(S) one (the
 * last selected, if several S); the others are judged on the host (on_device). */
a4w4_devneeds run_device_needs(const a4w4_runner *r, const a4w4_case_data *d);

/* The oracle's entry on the device: ordered(1) == exact on every output the prover holds for,
 * the special regime's NaN set over every output, and the C oracles' re-check of the judge on
 * the sample. *dor receives the judge's facts. Returns 1 when it fails. */
int run_oracle_entry_dev(const a4w4_devjudge *dev, const a4w4_devneeds *need,
                         const a4w4_case *c, const a4w4_case_data *d, const a4w4_sample *s,
                         a4w4_oracles *o, a4w4_devoracle *dor, a4w4_entry_result *e);

/* The device judge of case c (data d) opened for need, or NULL with why: the case is one the
 * judge does not rule on as the C oracles do (the range regime's overflow rules, contracts
 * §4.3; E8M0 code 0 unless the run states the judge's reading 2^-127, contracts §1), or it
 * could not take it; *nofit 1 when the case does not fit the device's memory (devjudge.h's
 * open: the case's oracle entry then fails with why). */
const a4w4_devjudge *run_device_for(const a4w4_runner *r, const a4w4_case *c,
                                    const a4w4_case_data *d, const a4w4_devneeds *need,
                                    char *why, size_t whylen, int *nofit);

/* ---- run_golden.c ---- */
/* 1 when backend name is selected and keeps its declared contract: a system under test judged
 * by another contract (`run --contract`) is not checked against the bundle's y_ordered but
 * through golden_backends, by the oracle of its contract. */
int run_selected(const a4w4_runner *r, const char *name);

#endif
