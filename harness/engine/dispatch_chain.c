/* dispatch_chain.c — see dispatch_chain.h. */
#include "dispatch_chain.h"

#include <stdio.h>
#include <string.h>

int a4w4_layer_policy(const a4w4_dispatch_setup *s, int N, int K, a4w4_policy_result *pr)
{
    return a4w4_policy_decide(s->asm_flag, s->hp.gfx, (size_t)N, 2, (size_t)N, (size_t)K / 32,
                              s->kind, s->tuple_len, pr);
}

a4w4_chain_step a4w4_dispatch_chain_of(const a4w4_tuned_table *tuned,
                                       const a4w4_kernel_table *kt,
                                       const a4w4_dispatch_setup *s, int M, int N, int K,
                                       a4w4_dispatch_chain *out, char *err, size_t errlen)
{
    a4w4_route *r = &out->route;
    if (a4w4_route_shape(tuned, kt, &s->hp, M, N, K, r, err, errlen))
        return A4W4_CHAIN_ROUTE;
    int rc = a4w4_layer_policy(s, N, K, &out->policy);
    if (rc != A4W4_OK) {
        if (err)
            snprintf(err, errlen, "%s", a4w4_status_str(rc));
        return A4W4_CHAIN_POLICY;
    }
    rc = a4w4_hazard_of_route(M, N, K, r, &out->policy, &out->hazard);
    if (rc != A4W4_OK) {
        if (err)
            snprintf(err, errlen, "%s", a4w4_status_str(rc));
        return A4W4_CHAIN_HAZARD;
    }
    a4w4_bug_shape bs;
    a4w4_bug_shape_of(M, N, K, r, kt, s->hp.bpreshuffle, &out->policy, &bs);
    out->bugs = a4w4_bugs_of(&bs);
    return A4W4_CHAIN_OK;
}

size_t a4w4_kernel_set_by_tile(const a4w4_kernel_table *kt, const unsigned char *set, int *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++)
        if (set[i])
            idx[n++] = (int)i;
    for (size_t a = 1; a < n; a++) /* insertion sort: stable, the sets are small */
        for (size_t b = a; b > 0; b--) {
            const a4w4_asm_kernel *x = &kt->rows[idx[b - 1]], *y = &kt->rows[idx[b]];
            if (x->tile_m < y->tile_m || (x->tile_m == y->tile_m && x->tile_n <= y->tile_n))
                break;
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    return n;
}
