/* entry.h — one results entry (case x backend) as a C value, the list of them a case produces,
 * and their JSON form (fields as in io/results.h).
 *
 * The runner fills a4w4_entry_result values; commands read verdicts, counts and mismatches
 * from them, and a4w4_entry_json is the one place their results.json form is written. */
#ifndef A4W4_ENTRY_H
#define A4W4_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "check.h"
#include "criteria.h"
#include "judge.h"
#include "signature.h"

/* "pass", "fail", "n/a", "skip", "ambiguous" (static storage; "skip" for any other value). */
const char *a4w4_verdict_name(a4w4_verdict v);

/* One recorded mismatch: the element at (row, col) of tensor (the output "y", or the tensor or
 * check a byte comparison names), its bits got (backend) and expected (oracle). */
typedef struct {
    char tensor[96];
    size_t row, col;
    uint32_t got, expected;
    int elem_bytes; /* 2: written "0x%04x", 1: "0x%02x" */
} a4w4_mismatch;

/* got/expected bits as results.json writes them: "0x" and 2 * elem_bytes hex digits. */
void a4w4_mismatch_hex(uint32_t bits, int elem_bytes, char buf[16]);

#define A4W4_ENTRY_MAX_FIRST A4W4_JUDGE_MAX_RECORDED

/* contracts §4.1 "The strength of a bound": a bounded(S) entry whose bound admits 0 on more
 * than this share of its outputs with a nonzero exact value judges nothing (verdict skip). */
#define A4W4_BOUND_VACUOUS_SHARE 0.5

/* The static dispatch facts of a generated case (engine/annotate.h says what they mean),
 * written after the other fields as "route", "policy" and "hazard". has 0: none (golden
 * bundles; a shape the tables cannot route). */
typedef struct {
    int has;
    char source[24], path[8], kernel[160], label[32];
    int tile_m, tile_n, split; /* tile_m 0: no tile (CK) */
    int has_label, kernel_fits_n, winners, winners_nofit;
    char decision[16], reason[32], hazard[24];
    unsigned bugs; /* bit i: the field bug rule i flags the shape (ref/a4w4_hazard.h) */
} a4w4_dispatch_facts;

/* Which fields an entry has, in results.json's order (a4w4_entry_json):
 *   OUTPUTS  GEMM outputs against the contract's oracle (backends with run, and the oracle's
 *            own cross-check): identity, tags, [run_ms, y_hash, pad_variants, pad_dependent],
 *            checked_outputs, sampled, verdict, mismatches, unwritten, max_ulp,
 *            [bound_use, bound_ulp_median, bound_ulp_max], first_mismatches, time_ms,
 *            [cost_ms], exact_regime_outputs, judged_bit_exact, judged_in_bound, not_judged,
 *            [ambiguous], [note], [aborted], [signature, signature_class, mismatch_map],
 *            [repro], [saved], [layer, call_site], [tolerance];
 *   BYTES    byte or bit checks (layout and quantizer backends, golden bundles): identity,
 *            [tags], checked_outputs, verdict, mismatches, max_ulp, first_mismatches, [note],
 *            sampled, time_ms, [cost_ms], [judged_bit_exact, judged_in_bound, not_judged],
 *            [signature, signature_class], [repro], [layer, call_site]. */
typedef enum { A4W4_ENTRY_OUTPUTS = 0, A4W4_ENTRY_BYTES = 1 } a4w4_entry_kind;

typedef struct a4w4_entry_result { /* tagged: judge.h declares it ahead */
    a4w4_entry_kind kind;
    /* identity */
    char name[160];
    size_t M, N, K;
    char regime[32];
    unsigned long long seed;
    char backend[160];
    char contract[A4W4_CONTRACT_MAX]; /* the contract applied: canonical text (contracts §4.2) */
    int has_tags; /* golden bundles have none */
    char tags[128];
    /* the backend's run (OUTPUTS, backends only; has_run 0 when it never ran) */
    int has_run;
    double run_ms;
    int has_y_hash;                /* the run returned A4W4_OK */
    unsigned long long y_hash;     /* FNV-1a 64 of the checked outputs' bytes */
    size_t pad_variants;           /* contracts §3.3 variants run; 0: none ran */
    double variants_ms;            /* their runs' time, as run_ms (not written to results) */
    char pad_dependent[256];       /* the variants that changed valid outputs ("" none) */
    /* the outcome */
    a4w4_verdict verdict;
    size_t checked;                /* outputs (OUTPUTS) or elements (BYTES) compared */
    int sampled;                   /* 1: a sample of the outputs, not all */
    size_t mismatches, unwritten;  /* unwritten: outputs still holding the poison */
    unsigned max_ulp;              /* largest bf16 ULP distance; UINT_MAX: NaN vs a number */
    int has_bound;                 /* bounded(S) entries (contracts §4.1 "bounded"): */
    double bound_use;              /*   largest |got - exact| / bound over the outputs; > 1
                                        fails */
    double bound_ulp_median;       /*   the bound in bf16 ULPs of each output's exact value: */
    double bound_ulp_max;          /*   median and largest over the outputs */
    size_t bound_weighed;          /*   outputs with a finite nonzero exact value and bound */
    size_t bound_vacuous;          /*   of those, the ones whose bound admits 0 (written as
                                        "bound_vacuous" and "bound_strength" = 1 - share) */
    int vacuous;                   /*   more than A4W4_BOUND_VACUOUS_SHARE of them: the entry
                                        is not judged (verdict skip; contracts §4.1) */
    size_t nfirst;                 /* first mismatches recorded (<= A4W4_ENTRY_MAX_FIRST) */
    a4w4_mismatch first[A4W4_ENTRY_MAX_FIRST];
    double time_ms;                /* NaN when the backend never ran (written null) */
    int has_cost;                  /* cost_ms recorded (entries of generated cases) */
    double cost_ms;                /* the entry's whole wall cost: a backend's every call,
                                      buffer, upload, pad variant, download, comparison and
                                      re-check; the oracle entry's: the case's shared work
                                      (generation, the device judge's upload and passes, the
                                      host oracles). Written "cost_ms" after time_ms */
    int has_prep;                  /* the oracle entry of a generated case: prep_* recorded */
    double prep_generate_ms;       /*   of cost_ms: sampling and generating the operands */
    double prep_oracles_ms;        /*   of cost_ms: the host oracles on the sample (both
                                        written after cost_ms, "prep_generate_ms" and
                                        "prep_oracles_ms"; on a prefetch thread beside the
                                        previous case, docs/gpu.md) */
    size_t exact_regime_outputs;   /* OUTPUTS: outputs the exact-regime prover covers */
    /* What the entry's GEMM outputs were judged by (OUTPUTS entries, and BYTES entries that
     * compare GEMM outputs: golden systems under test, captures); the three add up to the
     * outputs the entry covers. has_judged 0: not GEMM outputs (layouts, quantizers, the
     * oracle's own checks), not written. */
    int has_judged;
    size_t judged_bit_exact;       /* compared bit for bit with the contract's oracle */
    size_t judged_in_bound;        /* compared within a bounded(S) bound (contracts §4.1) */
    size_t not_judged;             /* no comparison covered them: the entry is n/a, skipped,
                                      aborted or ambiguous, or (exact, or no contract
                                      declared) the output lies outside the exact regime */
    int ambiguous;                 /* verdict ambiguous: the outputs match one reading of E8M0
                                      code 0 only (contracts §1) */
    char note[768];                /* why n/a or fail, or extra context ("" none) */
    a4w4_dispatch_facts dispatch;  /* generated cases only */
    char aborted[16];              /* "crashed" or "timed out" when the backend's code died or
                                      hung on this case (A4W4_RUN_CRASHED / _TIMEOUT; note
                                      says how); "" otherwise. Written as "aborted". */
    int refused;                   /* the backend refused its result (A4W4_RUN_REFUSED): the
                                      run is bad input; not written to results.json */
    /* failing entries: the one-line hypothesis of the mismatch map and its class (the
     * dominant kind, "mixed", "crashed", a byte check's class, ...: engine/signature.h);
     * written as "signature", "signature_class" and, when built, "mismatch_map" */
    char signature[384];
    char signature_class[24];
    a4w4_mismatch_map map;
    char repro[768];               /* failing entries: the command that reruns exactly this
                                      case on this backend ("" none). Written as "repro". */
    char layer[160];               /* captures: the module path of the call and the line */
    char call_site[320];           /* that called it (a4w4_capture_layer); written as
                                      "layer", "call_site" when set */
    char saved[512];               /* run --save-failing: the item name of the bundle saved
                                      for it (engine/failing.h; "" none). Written as "saved". */
    char kept[320];                /* run --keep-outputs: its output bundle, relative to the
                                      directory (engine/kept_outputs.h; "" none). Written as
                                      "kept_output". */
    char kept_why[160];            /* run --keep-outputs, none kept: why ("sampled: ...").
                                      Written as "kept_output_missing". */
    int save_failed;               /* --save-failing could not write it (note says why) */
    /* failing entries with outputs: the peers' tolerance criteria on the outputs that failed
     * (engine/criteria.h; a verdict of theirs never changes this entry's). Written as
     * "tolerance" {outputs, reference, would_ship, criteria[]}. */
    size_t ntol;                   /* 0: none evaluated */
    size_t tol_outputs;            /* the outputs they were evaluated on (the checked ones) */
    a4w4_crit_result tol[A4W4_CRITERIA_MAX];
} a4w4_entry_result;

/* The entries of one case (or of several, appended in turn). */
typedef struct {
    a4w4_entry_result *items;
    size_t n, cap;
} a4w4_entry_list;

/* Append a zeroed entry and return it; NULL when out of memory (the list is unchanged). */
a4w4_entry_result *a4w4_entry_list_add(a4w4_entry_list *l);
/* Entries with verdict fail. */
size_t a4w4_entry_list_failures(const a4w4_entry_list *l);
void a4w4_entry_list_free(a4w4_entry_list *l);

/* Set the identity fields of e (strings copied, truncated to their fields). */
void a4w4_entry_identity(a4w4_entry_result *e, a4w4_entry_kind kind, const char *name, size_t M,
                         size_t N, size_t K, const char *regime, unsigned long long seed,
                         const char *backend, const char *contract);

/* Verdict, counts, first mismatch (when it failed with mismatches) and note from a check
 * (check.h); the entry's other fields are left alone. */
void a4w4_entry_set_check(a4w4_entry_result *e, const a4w4_check *c);

/* One human line (for `verify`): "PASS|FAIL|N/A|SKIP <prefix>: <contract>, <checked> checked"
 * ("FAIL <prefix>: <contract>, no output compared" for a failure that compared none),
 * then for a failure the first mismatch "(tensor (row, col): got 0x.. expected 0x..)" and the
 * count, then for GEMM output entries "(J bit-exact, B within bound, U not judged)", then
 * "; <note>". Truncated to len. */
void a4w4_entry_format(const a4w4_entry_result *e, const char *prefix, char *buf, size_t len);

/* The results.json object of e (fields and order as above); NULL when out of memory. */
cJSON *a4w4_entry_json(const a4w4_entry_result *e);

/* A JSON array of the entries of l, in order; NULL when out of memory. */
cJSON *a4w4_entry_list_json(const a4w4_entry_list *l);

/* A new entry object with only the identifying fields (name, M, N, K, regime, seed as a
 * decimal string, backend, contract), for entries of other shapes (`layers`); add it to an
 * array with cJSON. */
cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract);

#endif
