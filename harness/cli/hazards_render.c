/* hazards_render.c — see hazards_render.h. */
#include "hazards_render.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "results.h"
#include "stream.h"

static void print_map(const a4w4_hazard_cell *cells, size_t n, const size_t *Ms, size_t nM, const size_t *Ns,
                      size_t nN, size_t K)
{
    /* symbol grid [M][N] for this K ('' where the matrix has no cell) */
    char *g = malloc(nM * (nN + 1));
    if (!g)
        return;
    memset(g, ' ', nM * (nN + 1));
    for (size_t i = 0; i < n; i++) {
        if (cells[i].c->K != K)
            continue;
        size_t mi = 0, ni = 0;
        while (Ms[mi] != cells[i].c->M)
            mi++;
        while (Ns[ni] != cells[i].c->N)
            ni++;
        g[mi * (nN + 1) + ni] = a4w4_hz_class_symbol[cells[i].cls];
    }
    printf("\nK=%zu%*sN:", K, 9, "");
    for (size_t j = 0; j < nN; j++)
        printf("%4zu", Ns[j]);
    printf("\n");
    for (size_t a = 0; a < nM;) {
        size_t b = a;
        while (b + 1 < nM && !memcmp(g + (b + 1) * (nN + 1), g + a * (nN + 1), nN))
            b++;
        char mr[32];
        if (a == b)
            snprintf(mr, sizeof mr, "M=%zu", Ms[a]);
        else
            snprintf(mr, sizeof mr, "M=%zu..%zu", Ms[a], Ms[b]);
        printf("  %-14s  ", mr);
        for (size_t j = 0; j < nN; j++)
            printf("%4c", g[a * (nN + 1) + j]);
        printf("\n");
        a = b + 1;
    }
    free(g);
}

/* See hazards_render.h. */
void hazards_print_text(const hazards_opts *o, const hazards_plan *p)
{
    printf("hazards: %zu cells from %s%s; backends", p->sw.n, p->cases_path,
           o->quick ? " (--quick subset)" : "");
    for (size_t b = 0; b < p->nbk; b++)
        printf("%s %s", b ? "," : "", p->bk[b].name);
    printf("; routing gfx950, 256 CUs, log2_k_split 0, bpreshuffle 1; policy: %s on, 2-D input\n",
           A4W4_POLICY_FLAG);
    printf("legend:");
    for (int c = 0; c < A4W4_HZ_NCLS; c++)
        printf("%s %c %s", c ? ";" : "", a4w4_hz_class_symbol[c], a4w4_hz_class_name[c]);
    printf("\n");
    for (int c = 0; c < A4W4_HZ_NCLS; c++)
        printf("  %c %-16s %s\n", a4w4_hz_class_symbol[c], a4w4_hz_class_name[c], a4w4_hz_class_meaning[c]);
    for (size_t k = 0; k < p->sw.nK; k++)
        print_map(p->sw.cells, p->sw.n, p->sw.Ms, p->sw.nM, p->sw.Ns, p->sw.nN, p->sw.Ks[k]);
    printf("\ncells:");
    for (int c = 0; c < A4W4_HZ_NCLS; c++)
        printf("%s %zu %s", c ? "," : "", p->sw.ncls[c], a4w4_hz_class_name[c]);
    printf("\n");
    for (size_t b = 0; b < p->nbk; b++)
        printf("%-24s %zu pass, %zu fail, %zu n/a%s\n", p->bk[b].name, p->sw.vcount[b][A4W4_HZ_PASS],
               p->sw.vcount[b][A4W4_HZ_VFAIL], p->sw.vcount[b][A4W4_HZ_NA],
               p->sw.vcount[b][A4W4_HZ_SKIP] ? " (some skipped)" : "");
    if (p->sw.oracle_fail)
        printf("oracle cross-check failed on %zu cells\n", p->sw.oracle_fail);
    size_t shown = 0;
    for (size_t i = 0; i < p->sw.n && shown < 20; i++)
        if (p->sw.cells[i].cls == A4W4_HZ_FAIL) {
            printf("FAIL M=%zu N=%zu K=%zu (%s) %s\n", p->sw.cells[i].c->M, p->sw.cells[i].c->N,
                   p->sw.cells[i].c->K, p->sw.cells[i].c->name, p->sw.cells[i].first_fail);
            shown++;
        }
    if (p->sw.ncls[A4W4_HZ_FAIL] > shown)
        printf("... %zu more failing cells (see --format json)\n", p->sw.ncls[A4W4_HZ_FAIL] - shown);
    size_t ncell[A4W4_BUG_COUNT] = {0};
    for (size_t i = 0; i < p->sw.n; i++)
        for (int b = 0; b < A4W4_BUG_COUNT; b++)
            ncell[b] += (p->sw.cells[i].bugs >> b) & 1u;
    char what[600];
    snprintf(what, sizeof what, "the default tuned table's %zu shapes (%s)", p->ntuned, p->tpath);
    a4w4_print_field_bugs(stdout, p->bugs, what, p->ntuned, 12);
    size_t nrules;
    const a4w4_bug_rule *rules = a4w4_bug_rules(&nrules);
    printf("  cells of this map each rule flags:");
    for (int b = 0; b < A4W4_BUG_COUNT; b++)
        printf("%s %s %zu", b ? "," : "", rules[b].id, ncell[b]);
    printf("\n");
    printf("%.1f s, %d job%s\n", p->sw.secs, p->sw.jobs, p->sw.jobs == 1 ? "" : "s");
}

/* One cell of hazards.json. */
static cJSON *cell_json(const hazards_plan *p, const a4w4_hazard_cell *cl)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "M", (double)cl->c->M);
    cJSON_AddNumberToObject(o, "N", (double)cl->c->N);
    cJSON_AddNumberToObject(o, "K", (double)cl->c->K);
    cJSON_AddStringToObject(o, "case", cl->c->name);
    cJSON_AddStringToObject(o, "class", a4w4_hz_class_name[cl->cls]);
    cJSON *res = cJSON_AddObjectToObject(o, "results");
    cJSON *pa = cJSON_AddArrayToObject(o, "pass");
    cJSON *fa = cJSON_AddArrayToObject(o, "fail");
    cJSON *na = cJSON_AddArrayToObject(o, "na");
    for (size_t b = 0; b < p->nbk; b++) {
        cJSON_AddStringToObject(res, p->bk[b].name, a4w4_hz_verdict_name[cl->v[b]]);
        cJSON *to = cl->v[b] == A4W4_HZ_PASS ? pa : cl->v[b] == A4W4_HZ_VFAIL ? fa
                  : cl->v[b] == A4W4_HZ_NA ? na : NULL;
        if (to)
            cJSON_AddItemToArray(to, cJSON_CreateString(p->bk[b].name));
    }
    cJSON_AddStringToObject(o, "oracle", cl->oracle_fail ? "fail" : "pass");
    if (cl->first_fail[0])
        cJSON_AddStringToObject(o, "first_failure", cl->first_fail);
    else
        cJSON_AddNullToObject(o, "first_failure");
    cJSON *r = cJSON_AddObjectToObject(o, "route");
    cJSON_AddStringToObject(r, "source", a4w4_route_source_name(cl->source));
    cJSON_AddStringToObject(r, "kernel", cl->kernel);
    cJSON_AddStringToObject(r, "label", cl->label);
    if (cl->tile_m) {
        int tile[2] = {cl->tile_m, cl->tile_n};
        cJSON_AddItemToObject(r, "tile", cJSON_CreateIntArray(tile, 2));
    } else
        cJSON_AddNullToObject(r, "tile");
    cJSON_AddBoolToObject(r, "kernel_fits_N", cl->kernel_fits);
    cJSON_AddNumberToObject(r, "possible_winners", cl->nwin);
    cJSON_AddNumberToObject(r, "possible_winners_not_fitting_N", cl->nnofit);
    cJSON_AddItemToObject(r, "winners", a4w4_kernel_set_json(&p->kt, cl->win));
    cJSON_AddItemToObject(r, "not_fitting_N", a4w4_kernel_set_json(&p->kt, cl->nofit));
    cJSON *pj = cJSON_AddObjectToObject(o, "policy");
    cJSON_AddStringToObject(pj, "decision", a4w4_decision_name(cl->pol.decision));
    cJSON_AddStringToObject(pj, "reason", a4w4_policy_reason_name(cl->pol.reason));
    cJSON_AddBoolToObject(pj, "fenced", cl->pol.decision != A4W4_DECIDE_ASM);
    cJSON *fb = cJSON_AddArrayToObject(o, "field_bugs");
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    for (size_t b = 0; b < nr; b++)
        if ((cl->bugs >> b) & 1u)
            cJSON_AddItemToArray(fb, cJSON_CreateString(br[b].id));
    return o;
}

/* The header fields of hazards.json: schema, backends, routing, policy, axes, classes. */
static void hazards_doc_head(const hazards_opts *o, const hazards_plan *p, cJSON *doc)
{
    cJSON_AddStringToObject(doc, "schema", "a4w4check-hazards/1");
    cJSON_AddStringToObject(doc, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(doc, "cases_file", p->cases_path);
    cJSON_AddBoolToObject(doc, "quick", o->quick);
    cJSON *ba = cJSON_AddArrayToObject(doc, "backends");
    for (size_t b = 0; b < p->nbk; b++)
        cJSON_AddItemToArray(ba, cJSON_CreateString(p->bk[b].name));
    cJSON *ro = cJSON_AddObjectToObject(doc, "routing");
    cJSON_AddStringToObject(ro, "gfx", p->setup.hp.gfx);
    cJSON_AddNumberToObject(ro, "cu_num", p->setup.hp.num_cu);
    cJSON_AddNumberToObject(ro, "log2_k_split", p->setup.hp.log2_k_split);
    cJSON_AddNumberToObject(ro, "bpreshuffle", p->setup.hp.bpreshuffle);
    cJSON_AddStringToObject(ro, "tuned", p->tpath);
    cJSON_AddStringToObject(ro, "kernels", p->kpath);
    cJSON *po = cJSON_AddObjectToObject(doc, "policy");
    cJSON_AddStringToObject(po, "flag", A4W4_POLICY_FLAG);
    cJSON_AddBoolToObject(po, "flag_on", 1);
    cJSON_AddStringToObject(po, "input", "2d");
    cJSON *ax = cJSON_AddObjectToObject(doc, "axes");
    const size_t *av[3] = {p->sw.Ms, p->sw.Ns, p->sw.Ks};
    size_t an[3] = {p->sw.nM, p->sw.nN, p->sw.nK};
    static const char *const anames[3] = {"M", "N", "K"};
    for (int a = 0; a < 3; a++) {
        cJSON *arr = cJSON_AddArrayToObject(ax, anames[a]);
        for (size_t i = 0; i < an[a]; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)av[a][i]));
    }
    cJSON *cd = cJSON_AddObjectToObject(doc, "classes");
    for (int c = 0; c < A4W4_HZ_NCLS; c++)
        cJSON_AddStringToObject(cd, a4w4_hz_class_name[c], a4w4_hz_class_meaning[c]);
}

/* hazards.json (the schema at the top of this file). */
static cJSON *hazards_doc(const hazards_opts *o, const hazards_plan *p)
{
    cJSON *doc = cJSON_CreateObject();
    hazards_doc_head(o, p, doc);
    cJSON *ca = cJSON_AddArrayToObject(doc, "cells");
    for (size_t i = 0; i < p->sw.n; i++)
        cJSON_AddItemToArray(ca, cell_json(p, &p->sw.cells[i]));
    cJSON *tot = cJSON_AddObjectToObject(doc, "totals");
    cJSON_AddNumberToObject(tot, "cells", (double)p->sw.n);
    cJSON *tc = cJSON_AddObjectToObject(tot, "classes");
    for (int c = 0; c < A4W4_HZ_NCLS; c++)
        cJSON_AddNumberToObject(tc, a4w4_hz_class_name[c], (double)p->sw.ncls[c]);
    cJSON *tb = cJSON_AddObjectToObject(tot, "backends");
    for (size_t b = 0; b < p->nbk; b++) {
        cJSON *x = cJSON_AddObjectToObject(tb, p->bk[b].name);
        for (int v = 0; v < 4; v++)
            cJSON_AddNumberToObject(x, a4w4_hz_verdict_name[v], (double)p->sw.vcount[b][v]);
    }
    cJSON_AddNumberToObject(tot, "oracle_fail", (double)p->sw.oracle_fail);
    cJSON_AddNumberToObject(tot, "seconds", p->sw.secs);
    /* the field's bug rules with the default tuned table's shapes each flags */
    cJSON_AddItemToObject(doc, "field_bugs", a4w4_field_bugs_json(p->bugs));
    return doc;
}

/* DIR/hazards.json, atomically. Returns the exit code (PASS: written). */
static int write_hazards_json(const hazards_opts *o, const hazards_plan *p)
{
    char err[1024], path[4096];
    cJSON *doc = hazards_doc(o, p);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    snprintf(path, sizeof path, "%s/hazards.json", o->out_dir);
    int rc = A4W4_EXIT_PASS;
    if (!text || a4w4_mkdir_p(o->out_dir, err, sizeof err) ||
        a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
        a4w4_errorf("hazards: --out %s: %s", o->out_dir, text ? err : "out of memory");
        rc = A4W4_EXIT_IO;
    } else {
        printf("wrote %s\n", path);
    }
    free(text);
    return rc;
}

/* The same cells as a results document, so `a4w4check report DIR --format html` draws the
 * hazard heat map from this run (its schema is that of `run`). Returns the exit code. */
static int write_results_doc(const hazards_opts *o, const hazards_plan *p)
{
    char err[1024];
    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(res, "tool", "a4w4check");
    cJSON_AddStringToObject(res, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(res, "set", "hazard");
    cJSON_AddStringToObject(res, "cases_file", p->cases_path);
    cJSON *bl = cJSON_AddArrayToObject(res, "backends");
    cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
    for (size_t b = 0; b < p->nbk; b++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(p->bk[b].name));
    a4w4_backends_contracts_json(res, p->bk, p->nbk);
    cJSON *all = cJSON_AddArrayToObject(res, "cases");
    for (size_t i = 0; i < p->sw.n; i++) {
        cJSON *e;
        if (p->sw.cells[i].entries)
            cJSON_ArrayForEach(e, p->sw.cells[i].entries) cJSON_AddItemToArray(all, cJSON_Duplicate(e, 1));
    }
    int rc = A4W4_EXIT_PASS;
    if (a4w4_results_write(res, o->out_dir, err, sizeof err)) {
        a4w4_errorf("hazards: --out %s", err);
        rc = A4W4_EXIT_IO;
    } else {
        printf("wrote %s/results.json and %s/summary.md (render the heat map: a4w4check "
               "report %s --format html)\n", o->out_dir, o->out_dir, o->out_dir);
    }
    cJSON_Delete(res);
    return rc;
}

/* See hazards_render.h. */
int hazards_write_json_outputs(const hazards_opts *o, const hazards_plan *p, int rc)
{
    if (write_hazards_json(o, p) != A4W4_EXIT_PASS || write_results_doc(o, p) != A4W4_EXIT_PASS)
        return A4W4_EXIT_IO;
    return rc;
}
