/* invariance.h — batch invariance predicted from the tables: does row i of an M-row batch get
 * the bits it gets computed alone (M = 1)?
 *
 * A row's output under a deterministic contract (exact, ordered(S), tree: contracts §4.1,
 * §4.2) depends only on that row of A and on W, never on the other rows; so a row's bits can
 * change with M exactly where the path that computes it changes its contract. The path at
 * (M, N, K) is, in order: a framework switch given as data (M <= m runs another kernel
 * family, e.g. vLLM's Triton preshuffle for M <= 64), SGLang's layer decision for (N, K)
 * (contracts §6: a layer fenced to Triton stays there for every M), then AITER's route
 * (contracts §5: tuned row at M, padded gl0, padded gl1, else the ASM heuristic in file
 * order). Its contract: an ASM kernel at one split stores its bf16 result, ordered(1)
 * (contracts §5.3); an ASM kernel at 2^log2_k_split > 1 splits adds bf16 partials with
 * atomics, bounded(S) (contracts §4.1): no bit-exact answer, so the row is nondeterministic;
 * a CK kernel, a layer on Triton and a framework path take the contract the caller declares,
 * else none.
 *
 * Cell verdict of M against M = 1: invariant (both contracts deterministic and equal, or the
 * same ASM or CK kernel at the same split); variant (both deterministic, different);
 * nondeterministic (either bounded); unknown (a path whose contract nobody declared, and the
 * paths differ; a Triton or framework path without a declared contract is unknown at every
 * M, since such a kernel may retune itself with M).
 *
 * The scan walks every M in 1..m_max (each padded-M bucket edge, each heuristic tile change
 * and each switch point are among them) and keeps the maximal runs of M over which the path
 * (switch, policy, kernel, split) stays the same. Nothing here prints; cli/invariance_render.c
 * renders. */
#ifndef A4W4_INVARIANCE_H
#define A4W4_INVARIANCE_H

#include <stddef.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "dispatch_chain.h"

/* Framework switch points given as data: at most this many. */
#define A4W4_INV_MAX_SWITCH 8
/* The largest M the scan walks. */
#define A4W4_INV_M_MAX (1 << 20)

typedef enum {
    A4W4_INV_INVARIANT = 0,
    A4W4_INV_UNKNOWN = 1,
    A4W4_INV_NONDET = 2,
    A4W4_INV_VARIANT = 3 /* the order is the severity: a bucket shows its worst cell */
} a4w4_inv_verdict;

/* "invariant", "unknown", "nondeterministic", "variant". */
const char *a4w4_inv_verdict_name(a4w4_inv_verdict v);

/* A declared contract, or none. */
typedef struct {
    int declared;
    a4w4_contract c;
} a4w4_inv_contract;

/* One framework switch: M <= m_max runs the path `name` (M past every switch runs AITER's
 * gemm_a4w4); its contract as declared. */
typedef struct {
    int m_max;
    char name[64];
    a4w4_inv_contract contract;
} a4w4_inv_switch;

/* What the prediction routes with. Switches sorted by m_max (a4w4_inv_switch_parse keeps
 * them so). */
typedef struct {
    a4w4_dispatch_setup setup;
    a4w4_inv_contract ck, triton; /* the contracts of CK kernels and of Triton layers */
    a4w4_inv_switch sw[A4W4_INV_MAX_SWITCH];
    size_t nsw;
    int m_max; /* the scan's last M, 1..A4W4_INV_M_MAX */
} a4w4_inv_setup;

/* Parse one switch "M:NAME" or "M:NAME:CONTRACT" (M in 1..A4W4_INV_M_MAX, NAME 1..63
 * characters of [A-Za-z0-9_.-], CONTRACT as a4w4_contract_parse) into s, kept sorted by M; a
 * second switch at the same M is refused. A4W4_OK, or A4W4_EINVAL with one line in err. */
int a4w4_inv_switch_parse(a4w4_inv_setup *s, const char *text, char *err, size_t errlen);

/* The path at one M. */
typedef enum {
    A4W4_PATH_SWITCH = 0, /* a framework switch's kernel family */
    A4W4_PATH_TRITON,     /* the layer policy keeps the layer on Triton (contracts §6) */
    A4W4_PATH_ASM,        /* AITER's gemm_a4w4 runs an ASM kernel (contracts §5.2, §5.3) */
    A4W4_PATH_CK          /* AITER's gemm_a4w4 runs a CK blockscale kernel (contracts §5.2) */
} a4w4_path_kind;

typedef struct {
    a4w4_path_kind kind;
    int sw;             /* the switch index (kind SWITCH), else -1 */
    const char *kernel; /* the kernel name (ASM, CK; owned by the tables), else NULL */
    int tile_m, tile_n; /* ASM tiles (0 when unknown) */
    int split;          /* ASM: 2^log2_k_split; CK: the row's splitK; else 1 */
    a4w4_route_source source;
    int tuned_m;
    a4w4_inv_contract contract;
} a4w4_inv_path;

/* The path of (M, N, K) with the tables (tuned may be NULL) and setup s. A4W4_OK, or the
 * router's or policy's status with err (one line). Reentrant. */
int a4w4_inv_path_of(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_inv_setup *s, int M, int N, int K, a4w4_inv_path *p,
                     char *err, size_t errlen);

/* 1 when a row computed on path a and on path b is predicted to take the same path key
 * (switch, policy, kernel, split). */
int a4w4_inv_path_same(const a4w4_inv_path *a, const a4w4_inv_path *b);

/* The verdict of path p (at M) against path p1 (at M = 1). */
a4w4_inv_verdict a4w4_inv_compare(const a4w4_inv_path *p1, const a4w4_inv_path *p);

/* One maximal run lo..hi of M over which the path stays the same, with its verdict against
 * M = 1. */
typedef struct {
    int lo, hi;
    a4w4_inv_path path;
    a4w4_inv_verdict verdict;
} a4w4_inv_run;

/* One (N, K): its runs in ascending M, the worst verdict, and the first break (the first run
 * whose verdict is not invariant; -1 when none). */
typedef struct {
    int N, K;
    a4w4_inv_run *runs; /* malloc'ed */
    size_t nruns;
    a4w4_inv_verdict worst;
    long first_break;
} a4w4_inv_pair;

/* The prediction over a list of (N, K) pairs. */
typedef struct {
    a4w4_inv_pair *pairs; /* malloc'ed, in the order given */
    size_t npairs;
    size_t count[4]; /* pairs by worst verdict */
} a4w4_inv_prediction;

/* Predict every pair nk[2i], nk[2i+1] (i < n) over M 1..s->m_max. A4W4_OK, A4W4_ENOMEM, or
 * the status of the first shape the chain refuses, with err "M .. N .. K ..: reason". Free
 * with a4w4_inv_prediction_free (also after an error). */
int a4w4_inv_predict(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_inv_setup *s, const int *nk, size_t n,
                     a4w4_inv_prediction *out, char *err, size_t errlen);
void a4w4_inv_prediction_free(a4w4_inv_prediction *p);

/* The distinct (N, K) pairs of a tuned table (sorted by N, then K) or of a shape list (3 ints
 * per shape, first-seen order) into *nk (2 ints a pair, malloc'ed). A4W4_OK or A4W4_ENOMEM. */
int a4w4_inv_pairs_of_table(const a4w4_tuned_table *t, int **nk, size_t *n);
int a4w4_inv_pairs_of_shapes(const int *shapes, size_t nshapes, int **nk, size_t *n);

/* The path's label: "ASM 32x128 split 1", "CK NAME split 0", "Triton (layer policy)",
 * "NAME (M <= 64)". */
void a4w4_inv_path_label(const a4w4_inv_path *p, const a4w4_inv_setup *s, char *buf,
                         size_t len);
/* The contract's text, or "undeclared". */
void a4w4_inv_contract_text(const a4w4_inv_contract *c, char *buf, size_t len);
/* The cause of run r of pair q: "M 64 -> 65: ASM 32x128 split 1 -> ASM 64x256 split 2: the
 * contract changes from ordered(1) to bounded(2)" (the run before it to it), and for the
 * verdict against M = 1 when the run before is not M = 1's path. */
void a4w4_inv_cause(const a4w4_inv_pair *q, size_t r, const a4w4_inv_setup *s, char *buf,
                    size_t len);

#endif
