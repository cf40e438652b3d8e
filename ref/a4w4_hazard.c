/* a4w4_hazard.c — the static hazard class of a shape (contracts §5, §6); see a4w4_hazard.h. */
#include "a4w4_hazard.h"

#include <string.h>

int a4w4_hazard_classify(a4w4_hazard *h)
{
    if (!h)
        return A4W4_EINVAL;
    h->hazardous = 0;
    h->cls = A4W4_HAZARD_OK;
    if (h->winners < 0 || h->winners_nofit < 0)
        return A4W4_EINVAL;
    /* only the untuned heuristic is order-dependent (contracts §5.3) */
    h->hazardous = h->untuned && (h->winners > 1 || h->winners_nofit > 0);
    if (!h->hazardous)
        h->cls = A4W4_HAZARD_OK;
    else if (!h->policy_asm) /* contracts §6: the layer stays on Triton */
        h->cls = A4W4_HAZARD_FENCED;
    else if (h->winners_nofit > 0)
        h->cls = A4W4_HAZARD_EXPOSED;
    else
        h->cls = A4W4_HAZARD_ORDER_DEPENDENT;
    return A4W4_OK;
}

int a4w4_hazard_of_route(int M, int N, int K, const a4w4_route *r, const a4w4_policy_result *pr,
                         a4w4_hazard *out)
{
    if (!out)
        return A4W4_EINVAL;
    memset(out, 0, sizeof *out);
    if (!r || !pr || r->M != M || r->N != N || r->K != K || r->ncand_any > A4W4_MAX_KERNELS)
        return A4W4_EINVAL;
    out->M = M;
    out->N = N;
    out->K = K;
    out->untuned = r->source == A4W4_SRC_HEURISTIC;
    out->winners = (int)r->ncand_any;
    /* a tuned CK kernel, or an ASM name the kernel table lacks, has no tile: cand_any -1 */
    for (size_t i = 0; i < r->ncand_any; i++)
        out->winners_nofit += r->cand_any[i] >= 0 && (r->cand_fit[i] & A4W4_FIT_N_MASK) != 0;
    out->policy_asm = pr->decision == A4W4_DECIDE_ASM;
    return a4w4_hazard_classify(out);
}

const char *a4w4_hazard_class_name(a4w4_hazard_class c)
{
    switch (c) {
    case A4W4_HAZARD_OK: return "ok";
    case A4W4_HAZARD_EXPOSED: return "exposed";
    case A4W4_HAZARD_ORDER_DEPENDENT: return "order_dependent";
    case A4W4_HAZARD_FENCED: return "fenced";
    }
    return "?";
}
