/* picks.c — see picks.h. */
#include "picks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_policy.h"
#include "report_common.h"

static int cmp_pick(const void *a, const void *b)
{
    const shape_pick *x = a, *y = b;
    if (x->M != y->M)
        return x->M < y->M ? -1 : 1;
    if (x->N != y->N)
        return x->N < y->N ? -1 : 1;
    return x->K < y->K ? -1 : x->K > y->K;
}

const shape_pick *picks_find(const pick_table *pt, int M, int N, int K)
{
    if (!pt->n)
        return NULL;
    shape_pick key;
    key.M = M;
    key.N = N;
    key.K = K;
    return bsearch(&key, pt->p, pt->n, sizeof *pt->p, cmp_pick);
}

void picks_free(pick_table *pt)
{
    free(pt->p);
    memset(pt, 0, sizeof *pt);
}

/* Route one shape and fill p's flags and text. */
static void route_one(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                      const a4w4_heur_params *hp, a4w4_route *r, shape_pick *p)
{
    char err[300];
    if (p->M < 1 || p->N < 1 || p->K < 32 || p->K % 32) {
        snprintf(p->text, sizeof p->text, "no route: M, N >= 1 and K a multiple of 32 needed");
        return;
    }
    if (a4w4_route_shape(tuned, kt, hp, p->M, p->N, p->K, r, err, sizeof err) != 0) {
        snprintf(p->text, sizeof p->text, "no route: %s", err);
        return;
    }
    a4w4_policy_result pr;
    int prc = a4w4_policy_decide(1, hp->gfx, (size_t)p->N, 2, (size_t)p->N, (size_t)p->K / 32,
                                 A4W4_INPUT_TENSOR_2D, 0, &pr);
    p->ok = 1;
    p->policy_asm = prc == 0 && pr.decision == A4W4_DECIDE_ASM;
    p->untuned = r->source == A4W4_SRC_HEURISTIC;
    p->pick_fits = !(r->fit & A4W4_FIT_N_MASK);
    for (size_t i = 0; i < r->ncand_any; i++)
        p->nofit_any += (r->cand_fit[i] & A4W4_FIT_N_MASK) != 0;
    p->hazard = p->policy_asm && p->untuned && p->nofit_any > 0;
    char lab[64];
    if (r->is_asm && r->kernel_index >= 0)
        a4w4_kernel_label(kt, r->kernel_index, lab, sizeof lab);
    else
        snprintf(lab, sizeof lab, "%.60s", r->kernel ? r->kernel : "?");
    snprintf(p->text, sizeof p->text,
             "%s -> %s %s%s%s; %zu possible winner%s over every walk order%s, %d not fitting N; "
             "policy %s (%s)",
             a4w4_route_source_name(r->source), r->is_asm ? "ASM" : "CK", lab,
             r->split > 1 ? " split-K" : "",
             r->is_asm && r->tile_n ? (p->pick_fits ? " (fits N)" : " (tile does not fit N)") : "",
             r->ncand_any, r->ncand_any == 1 ? "" : "s",
             r->ncand_any > 1 ? " (order-dependent)" : "", p->nofit_any,
             prc == 0 ? a4w4_decision_name(pr.decision) : "?",
             prc == 0 ? a4w4_policy_reason_name(pr.reason) : "error");
}

int picks_build(pick_table *pt, const cJSON *cases, const a4w4_report_opts *o)
{
    memset(pt, 0, sizeof *pt);
    if (!o || !o->kernels_path) {
        snprintf(pt->note, sizeof pt->note, "no kernel table given: dispatch picks not shown");
        return 0;
    }
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
    memset(&tuned, 0, sizeof tuned);
    memset(&kt, 0, sizeof kt);
    char err[400];
    if (o->tuned_path && a4w4_tuned_load(&tuned, o->tuned_path, err, sizeof err) != 0) {
        snprintf(pt->note, sizeof pt->note, "dispatch picks not shown: tuned table %s", err);
        return 0;
    }
    if (a4w4_kernels_load(&kt, o->kernels_path, NULL, err, sizeof err) != 0) {
        snprintf(pt->note, sizeof pt->note, "dispatch picks not shown: kernel table %s", err);
        a4w4_tuned_free(&tuned);
        return 0;
    }
    /* distinct shapes */
    size_t cap = (size_t)cJSON_GetArraySize(cases) + 1;
    pt->p = calloc(cap, sizeof *pt->p);
    a4w4_route *r = malloc(sizeof *r);
    if (!pt->p || !r) {
        free(r);
        picks_free(pt);
        a4w4_tuned_free(&tuned);
        a4w4_kernels_free(&kt);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        shape_pick s;
        memset(&s, 0, sizeof s);
        s.M = (int)jnum(e, "M", 0);
        s.N = (int)jnum(e, "N", 0);
        s.K = (int)jnum(e, "K", 0);
        pt->p[pt->n++] = s;
    }
    qsort(pt->p, pt->n, sizeof *pt->p, cmp_pick);
    size_t u = 0;
    for (size_t i = 0; i < pt->n; i++)
        if (!u || cmp_pick(&pt->p[u - 1], &pt->p[i]))
            pt->p[u++] = pt->p[i];
    pt->n = u;
    a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    for (size_t i = 0; i < pt->n; i++)
        route_one(o->tuned_path ? &tuned : NULL, &kt, &hp, r, &pt->p[i]);
    pt->have = 1;
    snprintf(pt->note, sizeof pt->note,
             "dispatch oracle (contracts §5) with gfx950, 256 CUs, log2_k_split 0, preshuffled "
             "weights; tuned table %s; kernel table %s; layer policy (contracts §6) with the "
             "flag on and 2-D activations",
             o->tuned_path ? o->tuned_path : "none", o->kernels_path);
    free(r);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    return 0;
}
