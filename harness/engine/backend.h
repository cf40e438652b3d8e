/* backend.h — the interface every system under test implements (STYLE: like BLIS's context).
 *
 * A backend type names what it runs and the accumulation contract it keeps (contracts §4.1) and
 * provides prepare / run / release. The runner opens the selected types into instances
 * (`--backend cpu-asm,plugin:./libmy.so`), walks them for every case, and compares what
 * they write per contract. Types register in
 * backends/registry.c's table; each lives in its own file under backends/. */
#ifndef A4W4_BACKEND_H
#define A4W4_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "casefile.h"
#include "gen.h"
#include "integrity.h"

/* Returns of a backend's run beyond A4W4_OK / A4W4_EUNSUPPORTED (ref's codes):
 *   A4W4_RUN_SKIP     it has no result for this case (an output bundle directory without the
 *                     case's file): verdict "skip", why says what is missing;
 *   A4W4_RUN_REFUSED  its result belongs to another matrix, seed or tool version (an output
 *                     bundle's metadata): verdict "fail", and the whole run is bad input. */
#define A4W4_RUN_SKIP (-100)
#define A4W4_RUN_REFUSED (-101)
/*   A4W4_RUN_CRASHED  the backend's code died while computing this case (an isolated plugin
 *                     child killed by a signal or exiting nonzero, engine/isolate.h): verdict
 *                     "fail", why names the signal or exit status, the run goes on;
 *   A4W4_RUN_TIMEOUT  it ran past its per-case deadline (`--timeout`) and was killed:
 *                     verdict "fail", why says "timed out after N s", the run goes on. */
#define A4W4_RUN_CRASHED (-102)
#define A4W4_RUN_TIMEOUT (-103)

/* How E8M0 code 0 is read where it occurs (contracts §1: 2^-127 per OCP and AITER's torch
 * reference, the oracles' reading; 2^-126 per one host driver): the reading a backend
 * declares (a4w4_backend_type.code0_reading, or its code0 callback), or that a run states
 * for every backend (`run --e8m0-code0`).
 *   BOTH     the entry is judged under both readings (the other one's oracle is the same
 *            oracle on the operands with every scale byte 0x00 read as 0x01, i.e. 2^-126):
 *            where the two expect the same bits on every checked output the entry is judged
 *            as usual; where they differ it passes only if it passes under both, fails if it
 *            fails under both, and is "ambiguous" (never a pass; not judged, so the run is
 *            INCOMPLETE) when it matches exactly one reading;
 *   2^-127   the oracles' reading is declared or stated: judged under it alone, the note says
 *            so;
 *   2^-126   the other reading is declared or stated: judged under it alone.
 * BOTH is what a backend that declares nothing gets. */
enum { A4W4_CODE0_BOTH = 0, A4W4_CODE0_OCP = 1, A4W4_CODE0_DRIVER = 2 };

/* Who a run is: the matrix hash and tool version written into results.json. */
typedef struct {
    const char *matrix_hash;
    const char *tool_version;
} a4w4_run_identity;

/* What one run gets. y [s->nrows, s->ncols] arrives poisoned; the backend writes every
 * element (output (s->rows[i], s->cols[j]) at y[i * s->ncols + j]; all outputs when
 * s->full). why receives the reason for A4W4_EUNSUPPORTED or an error. */
typedef struct {
    const a4w4_case *c;
    const a4w4_case_data *d;
    const a4w4_sample *s;
    uint16_t *y;
    char *why;
    size_t whylen;
    const a4w4_run_identity *id; /* may be NULL (tests, selftest) */
    /* The runner's integrity checks (engine/integrity.h), for a backend that runs the code
     * elsewhere (an isolated plugin's child) and must carry them there; all 0 / NULL when
     * the caller checks nothing (tests, bench):
     *   y_before, y_after  poisoned guard values around y (y[-y_before] .. y[n + y_after - 1]
     *                      are the caller's): the child's writes to them come back too;
     *   inputs             the digest of d's operands before the call (a4w4_case_digest);
     *   breach             receives one phrase when the code wrote into its operands or
     *                      their guards, or changed y after it returned ("" else). */
    size_t y_before, y_after;
    const a4w4_case_digest *inputs;
    char *breach;
    size_t breachlen;
} a4w4_run_args;

/* One case's tensors on a device, for backends judged there (engine/devjudge.h): opaque
 * device pointers, the layouts of a4w4_case_data (a layout the shape has not is NULL). */
typedef struct {
    const void *a_fp4, *a_scale, *w_fp4, *w_scale;                     /* row-major */
    const void *a_scale_shuffled, *w_fp4_shuffled, *w_scale_swizzled; /* contracts §3 */
    const void *x; /* bf16 [M, K] activations (normal regime), or NULL */
    void *y;       /* run_device: the [M, N] bf16 output, every element poisoned */
    void *out[3];  /* layouts_device: w_fp4_shuffled, w_scale_swizzled, a_scale_shuffled
                      (NULL: not asked); quantize_device: fp4 [M, K/2], scale [M, K/32] */
    void *workspace; /* device scratch of workspace_bytes (split-K partials) */
    size_t workspace_bytes;
} a4w4_dev_tensors;

typedef struct {
    const char *name;     /* "cpu-asm"; types with needs_arg are selected as "name:ARG" */
    const char *what;     /* one line: what it runs */
    /* "ordered(S)", "exact", "bounded(S)", "tree(...)" (contracts §4.1, §4.2); prepare may
     * refine it; "bytes" for layout and quantizer types (no GEMM outputs) */
    const char *contract;
    int asm_layout;       /* reads the contracts §3 layouts: run the pad-dependence variants */
    int needs_arg;        /* 1: selected only explicitly, as "name:ARG" */
    /* 1: ARG names the file whose bytes are the system under test (a plugin's library): a
     * run records its FNV-1a 64 ("backend_files"), which --resume and merge hold to */
    int arg_is_library;
    /* 1: ARG names the directory whose files are the outputs under test (bundle:DIR): a run
     * records the FNV-1a 64 of its files' names and bytes in "backend_files" too */
    int arg_is_outputs;
    int gpu;              /* 1: needs a GPU (exit 3 when asked for without one) */
    /* 1: run / layouts / quantize may be entered from several threads at once (callers run
     * cases in parallel, hazards --jobs); 0 (the default of a type that does not say): the
     * runner makes every call to it under one process-wide lock shared by all such types
     * (GPU backends share one device and their per-case device caches). */
    int thread_safe;
    /* 1: every output of a case is checked (the runner does not sample cases this backend is
     * in): outputs computed elsewhere are all there, and all of them are judged. */
    int full_outputs;
    /* The reading of E8M0 code 0 its GEMM outputs implement (A4W4_CODE0_*; contracts §1): 0
     * (BOTH) declares none, so entries holding code 0 are judged under both readings. */
    int code0_reading;
    /* Optional, for types whose reading depends on the instance (a plugin's, a bundle's
     * manifest): the instance's A4W4_CODE0_*, called once after prepare. NULL: code0_reading. */
    int (*code0)(void *ctx);
    /* 0 when usable here; else fills why (e.g. "no GPU") and returns nonzero. NULL: always. */
    int (*available)(char *why, size_t whylen);
    /* Set *ctx (may stay NULL) from arg (NULL without ":ARG"). contract/asm_layout may be
     * refined through the instance (plugins declare theirs; contract_len is
     * A4W4_CONTRACT_MAX). 0 or nonzero with err. */
    int (*prepare)(const char *arg, void **ctx, char *contract, size_t contract_len,
                   int *asm_layout, char *err, size_t errlen);
    /* A4W4_OK, A4W4_EUNSUPPORTED (verdict n/a, why says the rule) or another status. */
    int (*run)(void *ctx, const a4w4_run_args *a);
    /* Optional (plugins): the call sequence (engine/statecheck.h): calls[0..n) (n <= 16) in
     * this order into one instance of the kernel in one process (an isolated plugin: one
     * child for all of them; in-process: the instance the run's other calls use), each
     * call's status into rcs[i]: A4W4_OK, A4W4_EUNSUPPORTED, an error, or for the call
     * that died A4W4_RUN_CRASHED / A4W4_RUN_TIMEOUT and for the calls after it
     * A4W4_RUN_SKIP (why set for each); each call's a->breach (when not NULL) gets its
     * writes into its operands, checked against a->inputs right after that call where the
     * writes land. A4W4_OK, or a status when nothing ran. */
    int (*run_sequence)(void *ctx, const a4w4_run_args *calls, size_t n, int *rcs);
    /* Optional, for backends whose results were made before the run (bundle:DIR): called
     * once by `run` after prepare, with the run's identity and the names of every item of
     * its matrix (all shards). Nonzero with one line in err when the stored results cannot
     * belong to this run (another matrix, a file no item reads): the run is refused as bad
     * input before any item runs. NULL: nothing to check. */
    int (*check_items)(void *ctx, const a4w4_run_identity *id, const char *const *items,
                       size_t n, char *err, size_t errlen);
    /* Optional, for full_outputs types (bundle:DIR): 1 when the instance has a result for
     * case c (an output file, or a failure the kernel reported: either is judged), 0 with
     * why ("no output: ...") when it has none. A case no backend of a run holds is not
     * judged and costs no operands and no oracle (engine/runner.c); one held by none of the
     * full_outputs backends is sampled as without them. NULL: every case is held. */
    int (*holds)(void *ctx, const a4w4_case *c, char *why, size_t whylen);
    void (*release)(void *ctx);
    /* Layout backends (run == NULL): build the contracts §3 layouts of case d from its row-major
     * tensors into the given buffers (sizes as in a4w4_case_data; a NULL buffer is a layout
     * the shape does not have). The runner compares them byte for byte with ref's. */
    int (*layouts)(void *ctx, const a4w4_case_data *d, uint8_t *w_fp4_shuffled,
                   uint8_t *w_scale_swizzled, uint8_t *a_scale_shuffled, char *why,
                   size_t whylen);
    /* Quantizer backends (run == NULL): quantize x (bf16 [rows, K]) per 1x32 in `mode` into
     * fp4 [rows, K/2] and row-major scale [rows, K/32] (contracts §2). The runner feeds the
     * activation rows of normal-regime cases and compares with ref's quantization. */
    int (*quantize)(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4,
                    uint8_t *scale, char *why, size_t whylen);
    /* Optional device-side timing for `bench` (GPU GEMM backends): operands resident on the
     * device, one warm-up launch, then reps launches each timed with device events; median
     * and minimum in ms, and the bytes one launch must move (operands read + output written). */
    int (*bench)(void *ctx, const a4w4_case_data *d, int reps, double *median_ms,
                 double *min_ms, double *bytes, char *why, size_t whylen);
    /* Optional device forms (GPU backends), used when the run judges on the device
     * (engine/devjudge.h): the same work on t's device tensors, every output of the case
     * written into t->y (run_device), the three layouts into t->out (layouts_device), or a
     * case's activation rows t->x quantized into t->out[0..1] (quantize_device). Enqueue and
     * finish (synchronised) before returning; A4W4_OK, A4W4_EUNSUPPORTED (why) or another
     * status. */
    int (*run_device)(void *ctx, const a4w4_run_args *a, const a4w4_dev_tensors *t);
    int (*layouts_device)(void *ctx, const a4w4_case_data *d, const a4w4_dev_tensors *t,
                          char *why, size_t whylen);
    int (*quantize_device)(void *ctx, const a4w4_case_data *d, int mode,
                           const a4w4_dev_tensors *t, char *why, size_t whylen);
    /* Optional (GPU GEMM backends with a split-K workspace): the bytes of t->workspace that
     * run_device uses on an M x N x K case, 0 when it uses none. The device judge reserves and
     * hands over exactly that (engine/run_device.c run_device_needs); NULL: the most any
     * kernel family of the run's contract wants (docs/gpu.md, "The device judge's memory"). */
    size_t (*device_workspace)(void *ctx, size_t M, size_t N, size_t K);
} a4w4_backend_type;

/* An opened backend. Its contract in force is `contracts` (engine/runner.c takes the rule
 * for each case's shape); `contract` is its text: the canonical text of a single contract, or
 * "rules of SOURCE" for a shape-dependent set. A backend built by hand with `contracts`
 * empty is judged by `contract` parsed (a4w4_contract_parse). */
typedef struct {
    const a4w4_backend_type *type;
    void *ctx;
    char name[160];                      /* as selected, e.g. "plugin:libref.so" */
    char contract[A4W4_CONTRACT_MAX];    /* the contract in force, as text (above) */
    unsigned split;                      /* S of a single ordered(S) or bounded(S); else 1 */
    int asm_layout;
    a4w4_contract_set contracts;         /* owned; empty for types without GEMM outputs */
    char contract_source[256];           /* a set's file ("" for a single contract) */
    char declared[A4W4_CONTRACT_MAX];    /* what the backend declared, when `run --contract`
                                            overrode it; "" otherwise */
    int code0_reading;                   /* the E8M0 code-0 reading it declares (A4W4_CODE0_*,
                                            0: none), contracts §1 */
    /* The runner's record of this instance from case to case (under its lock):
     * timeouts_in_row  calls in a row that ran past their deadline (A4W4_RUN_TIMEOUT);
     * hung             1 once that reached the runner's max_timeouts: not called again;
     * last_y_hash      the outputs of its last baseline call that returned outputs, and
     * last_case        that case's name: a later case's identical, wrong outputs are named
     *                  as its previous call's (a stale result reused). */
    int timeouts_in_row, hung, has_last;
    unsigned long long last_y_hash;
    char last_case[160];
} a4w4_backend;

#endif
