/* discover.h — reveal a kernel's accumulation order by probing it (contracts §4.4), and accept a
 * tree contract (contracts §4.2) only once it predicts the kernel's outputs bit for bit on fresh
 * random cases of every regime.
 *
 * A discovery works through rounds. Each round is a list of calls: GEMMs at one of the
 * requested shapes M x N x K, whose operands are either probes (one patterned row per output
 * row or column, the other operand all 1.0) or generated validation cases (gen.h, seeds the
 * probes never use). The caller runs every call of the round through a backend
 * (a4w4_discover_run_round: the same backend interface `run` uses, plugin isolation
 * included), or writes the round as operand bundles for an outside runner
 * (a4w4_discover_write_round) and reads the runner's output bundles back through a bundle:
 * backend (a4w4_discover_run_round again). After each round the probes are analysed and the
 * next round is planned from what they showed. When no round is left, the result holds the
 * accepted contract per shape (or why none fits) and the evidence.
 *
 * Nothing here prints; the evidence is text the caller renders. */
#ifndef A4W4_DISCOVER_H
#define A4W4_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "casefile.h"
#include "status.h"

/* At most this many shapes per discovery; K at most A4W4_DISCOVER_MAX_K (8192 blocks). */
#define A4W4_DISCOVER_MAX_SHAPES 128
/* At most this many buckets checked between two requested buckets of one N (rules of M,
 * contracts §4.4): more are sampled evenly. */
#define A4W4_DISCOVER_MAX_CHECKS 24
#define A4W4_DISCOVER_MAX_K 262144u

typedef struct {
    size_t M, N, K;
} a4w4_shape;

typedef struct {
    const a4w4_shape *shapes;   /* nshapes >= 1, each with K % 32 == 0 */
    size_t nshapes;
    /* group[i]: shapes with the same group share one probed shape (the first of the group)
     * and are validated each (NULL: every shape is its own group) */
    const size_t *group;
    uint64_t seed;              /* validation seeds derive from it */
    unsigned repeats;           /* >= 1: every probe call is run this many times */
    size_t max_probes;          /* 0: no limit; else refuse a round that needs more */
    unsigned validate_cases;    /* validation cases per regime and shape (>= 1) */
    size_t validate_outputs;    /* outputs checked per validation case (0: all) */
    int threads;                /* oracle threads for the validation (>= 1) */
    /* validate_only[i] 1: shape i is not probed; the rule of K inferred from the probed
     * shapes of its family (same N and padded-M bucket, contracts §5.1) is validated on it;
     * 2: shape i is a bucket of the rules of M (contracts §4.4), only checked: its round-1
     * gap probes and validation cases are held to the rules of K of the nearest probed
     * buckets of its N, below then above (NULL: every shape is probed or grouped) */
    const unsigned char *validate_only;
} a4w4_discover_opts;

/* One GEMM of a round. y (M x N, row-major bf16 bits) is filled by a4w4_discover_run_round. */
typedef struct {
    a4w4_case c;       /* name ("discover/<shape>/r<round>/<what>"), M, N, K, regime, seed */
    size_t shape;      /* index into the options' shapes */
    int generated;     /* 1: a validation case (a4w4_case_generate); 0: a probe call */
    unsigned rep;      /* repeat index (0 .. repeats-1) */
    size_t item;       /* generated: the validation case's index within its shape (a repeat
                        * generates the same operands under its own call name) */
    uint16_t *y;       /* outputs once run; NULL before */
} a4w4_discover_call;

/* Why the result is what it is, per shape. */
typedef enum {
    A4W4_DISCOVER_FOUND = 0,   /* a contract predicted every validation output */
    A4W4_DISCOVER_NO_FIT = 1,  /* no tree in the model family fits */
    A4W4_DISCOVER_FAILED = 2   /* the backend could not run the probes (err in evidence) */
} a4w4_discover_verdict;

typedef struct {
    a4w4_discover_verdict verdict;
    a4w4_contract contract;    /* FOUND: the accepted contract; NO_FIT: the closest */
    int has_closest;           /* NO_FIT: 1 when a closest candidate exists */
    char closest_fails[1024];   /* NO_FIT: where the closest fails (outputs, regime, bits) */
    int nondeterministic;      /* repeated calls disagreed */
    size_t probes;             /* probe outputs used (rows or columns of probe calls) */
    size_t calls;              /* backend calls (probe and validation, repeats included) */
    size_t validated;          /* validation outputs predicted bit for bit (or in the bound) */
    size_t validation_cases;
    /* validation outputs no order can give (contracts §4.4 step 7): NaN or +-inf where every
     * order left open is finite, a value of a sign or size the products' signs rule out, or
     * not NaN beside a NaN scale. FOUND: the accepted contract explains every other output
     * and they are at most half; NO_FIT: the closest's. */
    size_t defects;
    char defect_first[600];    /* FOUND with defects: "case .., row .., col ..: got .., every
                                * order gives .." */
} a4w4_discover_shape_result;

typedef struct a4w4_discovery a4w4_discovery;

/* Start a discovery. A4W4_ST_OK with *d; A4W4_ST_BADINPUT with err (a shape with K % 32 != 0
 * or K > A4W4_DISCOVER_MAX_K, M or N zero, too many shapes, repeats 0); A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_discover_new(const a4w4_discover_opts *o, a4w4_discovery **d, char *err,
                               size_t errlen);
void a4w4_discover_free(a4w4_discovery *d);

/* The calls of the current round (*n of them), or NULL with *n = 0 when the discovery is done.
 * round_no receives the round's number (1, 2, ...). The calls stay valid until the next
 * a4w4_discover_run_round / a4w4_discover_skip_round. */
a4w4_discover_call *a4w4_discover_round(a4w4_discovery *d, size_t *n, unsigned *round_no);

/* The probe outputs (patterned rows or columns) of the current round, repeats not counted. */
size_t a4w4_discover_round_probes(const a4w4_discovery *d);

/* The operands of call i of the current round (probe patterns or the generated case) in out
 * (free with a4w4_case_data_free). 0 or A4W4_ENOMEM. */
int a4w4_discover_call_data(const a4w4_discovery *d, size_t i, a4w4_case_data *out);

/* The identity a round's outputs are bound to (the matrix hash of its operand bundles):
 * 16 hex digits of a hash of the options and the round's call names. */
void a4w4_discover_round_hash(const a4w4_discovery *d, char *buf, size_t len);

/* Run every call of the current round through backend b (its type's run, full output sample,
 * y poisoned first; calls serialized), then analyse and plan the next round. id: passed to the
 * backend (a bundle: backend checks its files against it; may be NULL). Returns A4W4_ST_OK;
 * A4W4_ST_BADINPUT when the backend refused a call or left an output unwritten, or a call is
 * not applicable to it (err names the call and the backend's reason); A4W4_ST_NA when the
 * backend has no result for some call (a bundle: directory without the file; err names it);
 * A4W4_ST_NOMEM. progress (may be NULL) is called after each call with (done, total). */
a4w4_hstatus a4w4_discover_run_round(a4w4_discovery *d, a4w4_backend *b,
                                     const a4w4_run_identity *id,
                                     void (*progress)(void *ctx, size_t done, size_t total),
                                     void *progress_ctx, char *err, size_t errlen);

/* Write the current round's operands into dir as operand bundles (gen/export.h, one per
 * call, named by the call) with manifest.json ("set": "discover", matrix hash as
 * a4w4_discover_round_hash). 0, or -1 with err; on failure the bundles written are removed
 * (and dir, when that empties it): never a partial round. */
int a4w4_discover_write_round(const a4w4_discovery *d, const char *dir, const char *tool_version,
                              char *err, size_t errlen);

/* Remove what a4w4_discover_write_round wrote into dir (the bundles, manifest.json, dir when
 * that empties it): a caller whose next step failed leaves no round behind. */
void a4w4_discover_remove_round(const a4w4_discovery *d, const char *dir);

/* 1 when shape i was only validated (opts validate_only 1), not probed; 2 when it is a bucket
 * only checked for the rules of M (opts validate_only 2); 3 when it is a K the discovery
 * added to bisect a split count that changes with K (contracts §4.4, "The split count as a
 * function of K": round 1 and the validation cases only). */
int a4w4_discover_validate_only(const a4w4_discovery *d, size_t shape);

/* The shapes of the discovery: the options' shapes, then those it added (the K of a
 * split-count bisection), at most A4W4_DISCOVER_MAX_SHAPES. Every per-shape accessor takes
 * shape < a4w4_discover_nshapes(d); a4w4_discover_shape gives NULL past it. */
size_t a4w4_discover_nshapes(const a4w4_discovery *d);
const a4w4_shape *a4w4_discover_shape(const a4w4_discovery *d, size_t shape);

/* Per-shape results once a4w4_discover_round returns NULL. */
const a4w4_discover_shape_result *a4w4_discover_result(const a4w4_discovery *d, size_t shape);

/* The evidence of a shape (Markdown-ready text: probe counts, the outputs that decided each
 * parameter, the validation). Valid until a4w4_discover_free. */
const char *a4w4_discover_evidence(const a4w4_discovery *d, size_t shape);

/* The defects of a shape's accepted contract, one Markdown list item each (sorted by case,
 * row and column; at most 4096 listed, every one counted), or "" when it has none. Valid
 * until a4w4_discover_free. */
const char *a4w4_discover_defects(const a4w4_discovery *d, size_t shape);

/* The accepted contracts as the file form of contracts §4.2 into buf. Per family (the shapes
 * of one N and padded-M bucket): its rule of K (one contract for every probed K, or the
 * splits of each written as tile=T) when its validate-only shapes all took it, else one
 * `when M==..,N==..,K==..:` rule per probed shape that found a contract. One unconditional
 * rule when every family has the same rule of K; else `when Mpad==P:` per family (with
 * `,N==..` when two families of one bucket differ). '#' comment lines first name the probed
 * shapes and those only validated. Returns the length, or -1 when it does not fit or no shape
 * found a contract. */
int a4w4_discover_contract_text(const a4w4_discovery *d, char *buf, size_t len);

/* The closest candidates of the shapes no tree fits, in the same form, after a comment line
 * saying they were NOT accepted (for judging a kernel by the order it nearly keeps, labelled
 * so). Length, or -1 when no shape has a closest candidate or it does not fit. */
int a4w4_discover_closest_text(const a4w4_discovery *d, char *buf, size_t len);

#endif
