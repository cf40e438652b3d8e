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

#endif
