/* annotate.c — see annotate.h. */
#include "annotate.h"

#include <pthread.h>
#include <stdio.h>

#include "a4w4_dispatch.h"
#include "a4w4_hazard.h"
#include "a4w4_policy.h"
#include "fsutil.h"

#define DEFAULT_TUNED "cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define DEFAULT_KERNELS "cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"

/* The default tables, loaded once per process (never freed: they live as long as the run). */
static struct {
    pthread_once_t once;
    int ok;
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
} tables = {PTHREAD_ONCE_INIT, 0, {0}, {0}};

/* a4w4_route_shape is not reentrant (ref/a4w4_dispatch.c sorts the winners with a static qsort
 * context), and the runner runs cases on several threads (hazards --jobs): one route at a
 * time. */
static pthread_mutex_t route_mu = PTHREAD_MUTEX_INITIALIZER;

static void tables_load(void)
{
    char tbuf[4096], kbuf[4096], err[512];
    const char *tpath = a4w4_data_path(DEFAULT_TUNED, tbuf, sizeof tbuf);
    const char *kpath = a4w4_data_path(DEFAULT_KERNELS, kbuf, sizeof kbuf);
    tables.ok = a4w4_tuned_load(&tables.tuned, tpath, err, sizeof err) == A4W4_OK &&
                a4w4_kernels_load(&tables.kt, kpath, NULL, err, sizeof err) == A4W4_OK;
}

static cJSON *route_json(const a4w4_route *r, const a4w4_hazard *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", a4w4_route_source_name(r->source));
    cJSON_AddStringToObject(o, "path", r->is_asm ? "asm" : "ck");
    cJSON_AddStringToObject(o, "kernel", r->kernel ? r->kernel : "");
    if (r->is_asm && r->kernel_index >= 0) {
        char lab[64];
        a4w4_kernel_label(&tables.kt, r->kernel_index, lab, sizeof lab);
        cJSON_AddStringToObject(o, "label", lab);
    } else
        cJSON_AddNullToObject(o, "label");
    if (r->tile_m) {
        int tile[2] = {r->tile_m, r->tile_n};
        cJSON_AddItemToObject(o, "tile", cJSON_CreateIntArray(tile, 2));
    } else
        cJSON_AddNullToObject(o, "tile");
    cJSON_AddNumberToObject(o, "split", r->split);
    cJSON_AddBoolToObject(o, "kernel_fits_N", !(r->fit & A4W4_FIT_N_MASK));
    cJSON_AddNumberToObject(o, "possible_winners", h->winners);
    cJSON_AddNumberToObject(o, "possible_winners_not_fitting_N", h->winners_nofit);
    return o;
}

/* The three fields of shape (M, N, K) in a new object, or NULL (not routable, no memory). */
static cJSON *facts_json(int M, int N, int K)
{
    static const a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    a4w4_route r;
    a4w4_policy_result pr;
    a4w4_hazard h;
    pthread_mutex_lock(&route_mu);
    int rc = a4w4_route_shape(&tables.tuned, &tables.kt, &hp, M, N, K, &r, NULL, 0);
    pthread_mutex_unlock(&route_mu);
    if (rc != A4W4_OK ||
        a4w4_policy_decide(1, hp.gfx, (size_t)N, 2, (size_t)N, (size_t)K / 32,
                           A4W4_INPUT_TENSOR_2D, 0, &pr) != A4W4_OK ||
        a4w4_hazard_of_route(M, N, K, &r, &pr, &h) != A4W4_OK)
        return NULL;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddItemToObject(f, "route", route_json(&r, &h));
    cJSON *p = cJSON_AddObjectToObject(f, "policy");
    cJSON_AddStringToObject(p, "decision", a4w4_decision_name(pr.decision));
    cJSON_AddStringToObject(p, "reason", a4w4_policy_reason_name(pr.reason));
    cJSON_AddStringToObject(f, "hazard", a4w4_hazard_class_name(h.cls));
    return f;
}

int a4w4_annotate_case(const a4w4_case *c, cJSON *entries, int first)
{
    pthread_once(&tables.once, tables_load);
    if (!tables.ok || c->M > A4W4_DIM_MAX || c->N > A4W4_DIM_MAX || c->K > A4W4_DIM_MAX)
        return -1;
    cJSON *f = facts_json((int)c->M, (int)c->N, (int)c->K);
    if (!f)
        return -1;
    int n = cJSON_GetArraySize(entries), rc = 0;
    for (int i = first; i < n; i++) {
        cJSON *e = cJSON_GetArrayItem(entries, i);
        for (const cJSON *x = f->child; x && e; x = x->next) {
            cJSON *dup = cJSON_Duplicate(x, 1);
            if (!dup || !cJSON_AddItemToObject(e, x->string, dup)) {
                cJSON_Delete(dup);
                rc = -1;
            }
        }
    }
    cJSON_Delete(f);
    return rc;
}
