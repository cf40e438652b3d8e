/* annotate.c — see annotate.h. */
#include "annotate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

static void tables_load(void)
{
    char tbuf[4096], kbuf[4096], err[512];
    const char *tpath = a4w4_data_path(DEFAULT_TUNED, tbuf, sizeof tbuf);
    const char *kpath = a4w4_data_path(DEFAULT_KERNELS, kbuf, sizeof kbuf);
    tables.ok = a4w4_tuned_load(&tables.tuned, tpath, err, sizeof err) == A4W4_OK &&
                a4w4_kernels_load(&tables.kt, kpath, NULL, err, sizeof err) == A4W4_OK;
}

static void route_facts(const a4w4_route *r, const a4w4_hazard *h, a4w4_dispatch_facts *f)
{
    snprintf(f->source, sizeof f->source, "%s", a4w4_route_source_name(r->source));
    snprintf(f->path, sizeof f->path, "%s", r->is_asm ? "asm" : "ck");
    snprintf(f->kernel, sizeof f->kernel, "%s", r->kernel ? r->kernel : "");
    f->has_label = r->is_asm && r->kernel_index >= 0;
    if (f->has_label)
        a4w4_kernel_label(&tables.kt, r->kernel_index, f->label, sizeof f->label);
    f->tile_m = r->tile_m;
    f->tile_n = r->tile_n;
    f->split = r->split;
    f->kernel_fits_n = !(r->fit & A4W4_FIT_N_MASK);
    f->winners = h->winners;
    f->winners_nofit = h->winners_nofit;
}

int a4w4_dispatch_facts_of(const a4w4_case *c, a4w4_dispatch_facts *f)
{
    static const a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    a4w4_route r;
    a4w4_policy_result pr;
    a4w4_hazard h;
    memset(f, 0, sizeof *f);
    pthread_once(&tables.once, tables_load);
    if (!tables.ok || c->M > A4W4_DIM_MAX || c->N > A4W4_DIM_MAX || c->K > A4W4_DIM_MAX)
        return -1;
    int M = (int)c->M, N = (int)c->N, K = (int)c->K;
    if (a4w4_route_shape(&tables.tuned, &tables.kt, &hp, M, N, K, &r, NULL, 0) != A4W4_OK ||
        a4w4_policy_decide(1, hp.gfx, (size_t)N, 2, (size_t)N, (size_t)K / 32,
                           A4W4_INPUT_TENSOR_2D, 0, &pr) != A4W4_OK ||
        a4w4_hazard_of_route(M, N, K, &r, &pr, &h) != A4W4_OK)
        return -1;
    route_facts(&r, &h, f);
    snprintf(f->decision, sizeof f->decision, "%s", a4w4_decision_name(pr.decision));
    snprintf(f->reason, sizeof f->reason, "%s", a4w4_policy_reason_name(pr.reason));
    snprintf(f->hazard, sizeof f->hazard, "%s", a4w4_hazard_class_name(h.cls));
    a4w4_bug_shape bs;
    a4w4_bug_shape_of(M, N, K, &r, &tables.kt, hp.bpreshuffle, &pr, &bs);
    f->bugs = a4w4_bugs_of(&bs);
    f->has = 1;
    return 0;
}
