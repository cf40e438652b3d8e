/* route_scan.c — see route_scan.h. */
#include "route_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t cell_index(int M, int N)
{
    return (size_t)((N - A4W4_SCAN_N_MIN) / A4W4_SCAN_N_STEP) * (A4W4_SCAN_M_MAX + 1) + (size_t)M;
}

const a4w4_scan_cell *a4w4_scan_cell_at(const a4w4_route_scan *s, int M, int N)
{
    return &s->cells[cell_index(M, N)];
}

const a4w4_policy_result *a4w4_scan_policies_of(const a4w4_route_scan *s, int N)
{
    return &s->pol[(size_t)((N - A4W4_SCAN_N_MIN) / A4W4_SCAN_N_STEP) * (size_t)s->nscan_k];
}

int a4w4_scan_same_cell(const a4w4_scan_cell *a, const a4w4_scan_cell *b, size_t n)
{
    return a->untuned_k == b->untuned_k && !memcmp(a->any, b->any, n) &&
           !memcmp(a->nofit, b->nofit, n) && a->file_winner == b->file_winner;
}

/* The layer policy per (N, K). A4W4_SCAN_OK, else the reason with err. */
static a4w4_scan_status scan_policies(a4w4_route_scan *s, char *err, size_t errlen)
{
    for (int N = A4W4_SCAN_N_MIN; N <= A4W4_SCAN_N_MAX; N += A4W4_SCAN_N_STEP) {
        a4w4_policy_result *pol_n = (a4w4_policy_result *)a4w4_scan_policies_of(s, N);
        for (int k = 0; k < s->nscan_k; k++) {
            int rc = a4w4_layer_policy(&s->setup, N, s->scan_k[k], &pol_n[k]);
            if (rc != A4W4_OK) {
                snprintf(err, errlen, "policy for N %d K %d: %s", N, s->scan_k[k],
                         a4w4_status_str(rc));
                return A4W4_SCAN_POLICY;
            }
        }
    }
    return A4W4_SCAN_OK;
}

/* Cell (M, N): at which K it is untuned and, if at any, its possible winners (exact and
 * sampled), which of them do not fit, the file-order winner. */
static a4w4_scan_status cell_fill(a4w4_route_scan *s, const a4w4_tuned_table *tuned,
                                  const a4w4_kernel_table *kt, int M, int N, a4w4_scan_cell *c,
                                  char *err, size_t errlen)
{
    const a4w4_heur_params *hp = &s->setup.hp;
    char why[512];
    for (int k = 0; k < s->nscan_k; k++) {
        s->totals.total++;
        if (!a4w4_tuned_lookup(tuned, hp->gfx, hp->num_cu, M, N, s->scan_k[k], NULL, NULL))
            c->untuned_k |= 1ull << k;
    }
    if (!c->untuned_k)
        return A4W4_SCAN_OK;
    a4w4_heur_choice fw;
    int rc = a4w4_heuristic_winners_any_order(kt, hp, M, N, c->any, why, sizeof why);
    if (!rc)
        rc = a4w4_heuristic_winners_sampled(kt, hp, M, N, A4W4_ROUTE_PERMUTATIONS, c->smp, why,
                                            sizeof why);
    if (!rc)
        rc = a4w4_heuristic(kt, hp, M, N, NULL, 0, &fw, why, sizeof why);
    if (rc) {
        snprintf(err, errlen, "M %d N %d: %s", M, N, why);
        return A4W4_SCAN_CELL;
    }
    for (size_t i = 0; i < kt->n; i++) {
        c->nany += c->any[i];
        c->nsmp += c->smp[i];
        if (!c->any[i])
            continue;
        unsigned f = a4w4_tile_fit(kt->rows[i].tile_m, kt->rows[i].tile_n, 1, M, N);
        c->nofit[i] = (f & A4W4_FIT_N_MASK) != 0;
        c->mfit[i] = (f & A4W4_FIT_TILE_M_GT_8M) != 0;
        c->n_nofit += c->nofit[i];
        c->n_mfit += c->mfit[i];
    }
    c->file_winner = fw.kernel;
    c->file_nofit = c->nofit[fw.kernel];
    return A4W4_SCAN_OK;
}

/* The not-fitting-N counts of one untuned shape of class hz under policy pr. */
static void count_nofit(const a4w4_scan_cell *c, const a4w4_hazard *hz,
                        const a4w4_policy_result *pr, a4w4_scan_totals *t)
{
    t->nofit++;
    if (hz->cls == A4W4_HAZARD_EXPOSED) {
        t->nofit_asm++;
        t->file_nofit_asm += (size_t)c->file_nofit;
        t->all_nofit_asm += c->n_nofit == c->nany;
    } else if (pr->reason == A4W4_REASON_SMALL_N)
        t->nofit_small_n++;
    else if (pr->reason == A4W4_REASON_SCALE_UNSUPPORTED)
        t->nofit_scale++;
    else
        t->nofit_other_triton++;
}

/* Classify cell c at each K where it is untuned, given the policy there (pol_n[k]), with
 * ref's hazard rule (contracts §5, §6), and count it. */
static void cell_count(a4w4_route_scan *s, a4w4_scan_cell *c, const a4w4_policy_result *pol_n)
{
    a4w4_scan_totals *t = &s->totals;
    for (int k = 0; k < s->nscan_k; k++) {
        if (!(c->untuned_k & (1ull << k)))
            continue;
        const a4w4_policy_result *pr = &pol_n[k];
        /* the class needs the facts, not M and N; untuned here by construction */
        a4w4_hazard hz = {0, 0, s->scan_k[k], 1, c->nany, c->n_nofit,
                          pr->decision == A4W4_DECIDE_ASM, 0, A4W4_HAZARD_OK};
        a4w4_hazard_classify(&hz);
        int is_asm = hz.policy_asm;
        c->hazard_k |= (unsigned long long)(hz.cls != A4W4_HAZARD_OK) << k;
        c->exposed_k |= (unsigned long long)(hz.cls == A4W4_HAZARD_EXPOSED) << k;
        t->untuned++;
        t->hazard += hz.cls != A4W4_HAZARD_OK;
        t->multi += c->nany > 1;
        t->multi_asm += c->nany > 1 && is_asm;
        t->missed += c->nsmp != c->nany;
        t->mfit += c->n_mfit > 0;
        t->mfit_asm += c->n_mfit > 0 && is_asm;
        if (c->n_nofit)
            count_nofit(c, &hz, pr, t);
    }
}

/* The field bugs (ref/a4w4_hazard.h) of cell (M, N) at every K: an untuned shape gets the
 * heuristic's kernel (an ASM tile of the table, split 2^log2_k_split), a tuned one its route. */
static void cell_bugs(const a4w4_route_scan *s, const a4w4_tuned_table *tuned,
                      const a4w4_kernel_table *kt, int M, int N, a4w4_scan_cell *c,
                      const a4w4_policy_result *pol_n)
{
    const a4w4_heur_params *hp = &s->setup.hp;
    char err[256];
    for (int k = 0; k < s->nscan_k; k++) {
        a4w4_bug_shape bs;
        a4w4_route r;
        int K = s->scan_k[k];
        if (c->untuned_k & (1ull << k)) {
            a4w4_bug_shape_of(M, N, K, NULL, kt, hp->bpreshuffle, &pol_n[k], &bs);
            bs.routed = bs.is_asm = 1;
            bs.tile_m = kt->rows[c->file_winner].tile_m;
            bs.tile_n = kt->rows[c->file_winner].tile_n;
            bs.split = hp->log2_k_split > 0 ? 1 << hp->log2_k_split : 1;
            bs.kernel_bpreshuffle = kt->rows[c->file_winner].bpreshuffle;
        } else if (!a4w4_route_shape(tuned, kt, hp, M, N, K, &r, err, sizeof err)) {
            a4w4_bug_shape_of(M, N, K, &r, kt, hp->bpreshuffle, &pol_n[k], &bs);
        } else
            continue;
        unsigned mask = a4w4_bugs_of(&bs);
        for (int b = 0; b < A4W4_BUG_COUNT; b++)
            c->bug_k[b] |= (unsigned long long)((mask >> b) & 1u) << k;
    }
}

a4w4_scan_status a4w4_route_scan_run(a4w4_route_scan *s, const a4w4_tuned_table *tuned,
                                     const a4w4_kernel_table *kt, char *err, size_t errlen)
{
    memset(&s->totals, 0, sizeof s->totals);
    s->cells = calloc((size_t)A4W4_SCAN_NN * (A4W4_SCAN_M_MAX + 1), sizeof *s->cells);
    s->pol = calloc((size_t)A4W4_SCAN_NN * (size_t)s->nscan_k, sizeof *s->pol);
    if (!s->cells || !s->pol)
        return A4W4_SCAN_NOMEM;
    a4w4_scan_status st = scan_policies(s, err, errlen);
    for (int N = A4W4_SCAN_N_MIN; !st && N <= A4W4_SCAN_N_MAX; N += A4W4_SCAN_N_STEP) {
        const a4w4_policy_result *pol_n = a4w4_scan_policies_of(s, N);
        for (int M = 1; !st && M <= A4W4_SCAN_M_MAX; M++) {
            a4w4_scan_cell *c = &s->cells[cell_index(M, N)];
            st = cell_fill(s, tuned, kt, M, N, c, err, errlen);
            if (st)
                break;
            if (c->untuned_k)
                cell_count(s, c, pol_n);
            cell_bugs(s, tuned, kt, M, N, c, pol_n);
        }
    }
    return st;
}

void a4w4_route_scan_free(a4w4_route_scan *s)
{
    free(s->cells);
    free(s->pol);
    s->cells = NULL;
    s->pol = NULL;
}
