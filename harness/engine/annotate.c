/* annotate.c — see annotate.h. */
#include "annotate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dispatch_chain.h"
#include "fsutil.h"

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
    const char *tpath = a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, tbuf, sizeof tbuf);
    const char *kpath = a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, kbuf, sizeof kbuf);
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
    static const a4w4_dispatch_setup setup = A4W4_DISPATCH_SETUP_DEFAULT;
    a4w4_dispatch_chain ch;
    memset(f, 0, sizeof *f);
    pthread_once(&tables.once, tables_load);
    if (!tables.ok || c->M > A4W4_DIM_MAX || c->N > A4W4_DIM_MAX || c->K > A4W4_DIM_MAX)
        return -1;
    if (a4w4_dispatch_chain_of(&tables.tuned, &tables.kt, &setup, (int)c->M, (int)c->N,
                               (int)c->K, &ch, NULL, 0) != A4W4_CHAIN_OK)
        return -1;
    route_facts(&ch.route, &ch.hazard, f);
    snprintf(f->decision, sizeof f->decision, "%s", a4w4_decision_name(ch.policy.decision));
    snprintf(f->reason, sizeof f->reason, "%s", a4w4_policy_reason_name(ch.policy.reason));
    snprintf(f->hazard, sizeof f->hazard, "%s", a4w4_hazard_class_name(ch.hazard.cls));
    f->bugs = ch.bugs;
    f->has = 1;
    return 0;
}
