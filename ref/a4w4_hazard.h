/* a4w4_hazard.h — the static hazard class of one shape: AITER's routing (contracts §5) joined
 * with SGLang's layer decision (contracts §6), as one pure rule.
 *
 * The hazard is the untuned ASM heuristic's (contracts §5.3): AITER walks its kernel table in
 * unordered_map order, so an untuned shape can get any of its possible winners, and a winner
 * whose tile does not fit N (tile_N > N or N % tile_N != 0) is where the heuristic returned
 * wrong rows (contracts §6 step 3: the N <= 128 fence exists for it). A tuned row is one
 * kernel AITER's tuner measured for that key: never a hazard here (route reports its fit
 * flags as warnings). Classes:
 *   exposed          the policy puts the layer on the ASM path and a possible winner of the
 *                    untuned heuristic does not fit N;
 *   order_dependent  ASM path, untuned, every possible winner fits N, more than one can win
 *                    (the walk order decides);
 *   fenced           the policy keeps Triton (N <= 128, the scale-swizzle rule, ...) on an
 *                    untuned shape that is hazardous: more than one possible winner, or one
 *                    that does not fit N;
 *   ok               none of these (tuned, or one possible winner that fits N, or Triton on
 *                    a shape without a hazard).
 * A backend's failure (the harness's "fail" class) is not a static fact and is not decided
 * here. Nothing here prints or allocates. */
#ifndef A4W4_HAZARD_H
#define A4W4_HAZARD_H

#include "a4w4_dispatch.h"
#include "a4w4_policy.h"

typedef enum {
    A4W4_HAZARD_OK = 0,
    A4W4_HAZARD_EXPOSED = 1,
    A4W4_HAZARD_ORDER_DEPENDENT = 2,
    A4W4_HAZARD_FENCED = 3
} a4w4_hazard_class;

/* The facts of one shape and its class. */
typedef struct {
    int M, N, K;
    int untuned;       /* 1: no tuned row (route source heuristic): the ASM heuristic decides */
    int winners;       /* possible winners over every walk order (1 for a tuned hit) */
    int winners_nofit; /* of those, kernels whose tile does not fit N (A4W4_FIT_N_MASK) */
    int policy_asm;    /* 1: the layer decision is ASM; 0: Triton (or reject) */
    int hazardous;     /* untuned and (winners > 1 or winners_nofit > 0) */
    a4w4_hazard_class cls;
} a4w4_hazard;

/* The rule: set h->hazardous and h->cls from h->untuned, h->winners, h->winners_nofit and
 * h->policy_asm (the classes above, contracts §5.3 and §6). Returns A4W4_OK, or A4W4_EINVAL
 * for NULL h or negative counts (h->cls is then A4W4_HAZARD_OK). */
int a4w4_hazard_classify(a4w4_hazard *h);

/* The facts of shape (M, N, K) from its route r (a4w4_route_shape of that shape: source,
 * possible winners over every walk order cand_any[0..ncand_any) and their fit flags
 * cand_fit) and its layer decision pr (a4w4_policy_decide for the layer (N, K)), classified
 * with a4w4_hazard_classify. Errors: A4W4_EINVAL for a NULL argument or a route of another
 * shape (out is then zeroed). contracts §5, §6. */
int a4w4_hazard_of_route(int M, int N, int K, const a4w4_route *r, const a4w4_policy_result *pr,
                         a4w4_hazard *out);

/* "ok", "exposed", "order_dependent", "fenced" ("?" for another value). */
const char *a4w4_hazard_class_name(a4w4_hazard_class c);

/* ---- the field's bug record as rules -------------------------------------------------------
 * Bugs reported upstream in the kernels and paths this project checks, each a rule over the
 * shape and its route (contracts §5) and layer decision (contracts §6) that says where the bug
 * can strike, with its citation. A rule that no shape decides (data, a kernel configuration
 * the tables do not hold, a Python signature) is listed with shape_rule 0 and flags only what
 * it can (the Triton path for a data rule; nothing otherwise). The known-failures ledger
 * (cases/known-failures.csv) holds the same bugs as expected failures of named backends. */
typedef enum {
    A4W4_BUG_AITER_4176 = 0,  /* ASM gemm_a4w4 with K % 256 != 0 returns garbage */
    A4W4_BUG_AITER_5261,      /* split-K: K passed in elements instead of bytes */
    A4W4_BUG_AITER_5377,      /* BK = 512 with K = 768: nondeterministic NaN, 64 < M <= 256 */
    A4W4_BUG_CK_11774,        /* CK-tile fp4 GEMM wrong for M < 32 */
    A4W4_BUG_SGLANG_26884,    /* a non-preshuffle kernel run on preshuffled weights */
    A4W4_BUG_TILE_128X512,    /* the 128x512 tile where N % 512 != 0 */
    A4W4_BUG_TRITON_11624,    /* tl.dot_scaled decodes E8M0 code 0 as 0 */
    A4W4_BUG_TRITON_8518,     /* microscaling wrong with split_k > 1 */
    A4W4_BUG_VLLM_40754,      /* an AITER signature change binds out as bias */
    A4W4_BUG_COUNT
} a4w4_bug_id;

typedef struct {
    const char *id;         /* short word, also the ledger's id prefix ("aiter-4176") */
    const char *citation;   /* "ROCm/aiter#4176" */
    const char *url;        /* the public record */
    const char *what;       /* the bug, one line */
    const char *rule;       /* where it strikes, one line */
    int shape_rule;         /* 1: decided from the shape and its route; 0: see above */
} a4w4_bug_rule;

/* The rules, indexed by a4w4_bug_id; *n = A4W4_BUG_COUNT. */
const a4w4_bug_rule *a4w4_bug_rules(size_t *n);

/* The facts a rule reads: the shape, its route and the layer decision. */
typedef struct {
    int M, N, K;
    int routed;             /* 0: no route (AITER has no kernel): only data rules apply */
    int is_asm;             /* the route runs an ASM kernel (else CK) */
    int tile_m, tile_n;     /* the ASM kernel's tile (0 unknown) */
    int split;              /* split-K splits of the route (1 none) */
    int kernel_bpreshuffle; /* the ASM kernel's table row: 1, 0, or -1 unknown */
    int bpreshuffle;        /* the weights the call passes are preshuffled (SGLang: 1) */
    int policy_asm;         /* the layer decision is ASM (else Triton or reject) */
} a4w4_bug_shape;

/* Bit i (a4w4_bug_id) set when rule i flags shape s. */
unsigned a4w4_bugs_of(const a4w4_bug_shape *s);

/* The facts of shape (M, N, K) from its route r (NULL: not routable), kernel table kt (for
 * the kernel's bpreshuffle), the call's bpreshuffle and the layer decision pr (NULL:
 * Triton). */
void a4w4_bug_shape_of(int M, int N, int K, const a4w4_route *r, const a4w4_kernel_table *kt,
                       int bpreshuffle, const a4w4_policy_result *pr, a4w4_bug_shape *out);

/* The ids of the rules in mask, joined by sep into buf ("" none); returns buf. */
const char *a4w4_bugs_text(unsigned mask, const char *sep, int citations, char *buf, size_t len);

#endif
