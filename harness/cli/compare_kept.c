/* compare_kept.c — the parity of two runs' kept outputs (compare_kept.h). */
#include "compare_kept.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "criteria.h"
#include "safetensors.h"

static const char *jstring(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The kept-outputs directory a document records, or NULL. */
static const char *kept_dir(const cJSON *doc)
{
    return jstring(cJSON_GetObjectItemCaseSensitive(doc, "kept_outputs"), "dir");
}

/* CAND's backend for BASE's backend b: itself, or its --pair partner; NULL when unpaired. */
static const char *partner(const char *b, const char *const *pb, const char *const *pc,
                           size_t np)
{
    if (!np)
        return b;
    for (size_t i = 0; i < np; i++)
        if (!strcmp(pb[i], b))
            return pc[i];
    return NULL;
}

static const cJSON *find_entry(const cJSON *doc, const char *name, const char *backend)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const char *n = jstring(e, "name"), *b = jstring(e, "backend");
        if (n && b && !strcmp(n, name) && !strcmp(b, backend))
            return e;
    }
    return NULL;
}

/* dir/rel's y into a malloc'ed array; its shape, K and seed metadata. NULL with why. */
static uint16_t *load_y(const char *dir, const char *rel, size_t *M, size_t *N, char *id,
                        size_t idlen, char *why, size_t whylen)
{
    char path[4400], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    a4w4_st_file f;
    if (a4w4_st_load(path, &f, err, sizeof err)) {
        snprintf(why, whylen, "%.300s", err);
        return NULL;
    }
    const a4w4_st_tensor *t = a4w4_st_find(&f, "y");
    uint16_t *y = NULL;
    if (!t || t->dtype != A4W4_DT_BF16 || t->ndim != 2) {
        snprintf(why, whylen, "%.300s: no BF16 tensor y [M, N]", path);
    } else if ((y = malloc((t->shape[0] * t->shape[1] + 1) * sizeof *y))) {
        *M = t->shape[0], *N = t->shape[1];
        const uint8_t *p = t->data;
        for (size_t k = 0; k < *M * *N; k++)
            y[k] = (uint16_t)(p[2 * k] | (p[2 * k + 1] << 8));
        const char *K = a4w4_st_meta(&f, "K"), *s = a4w4_st_meta(&f, "seed");
        const char *r = a4w4_st_meta(&f, "regime");
        snprintf(id, idlen, "K %s, regime %s, seed %s", K ? K : "?", r ? r : "?", s ? s : "?");
    } else {
        snprintf(why, whylen, "out of memory");
    }
    a4w4_st_free(&f);
    return y;
}

static void skip(cJSON *list, const char *name, const char *backend, const char *why)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", name);
    cJSON_AddStringToObject(s, "backend", backend);
    cJSON_AddStringToObject(s, "why", why);
    cJSON_AddItemToArray(list, s);
}

/* One matched pair of entries; a row, or a skipped item. Returns 1 when its outputs differ. */
static int one_pair(const char *dirs[2], const cJSON *e[2], cJSON *rows, cJSON *skipped)
{
    const char *name = jstring(e[0], "name"), *b = jstring(e[0], "backend");
    const char *rel[2] = {jstring(e[0], "kept_output"), jstring(e[1], "kept_output")};
    char why[600], id[2][160];
    for (int k = 0; k < 2; k++)
        if (!rel[k]) {
            const char *m = jstring(e[k], "kept_output_missing");
            snprintf(why, sizeof why, "%s kept no output of it: %s", k ? "CAND" : "BASE",
                     m ? m : "not a GEMM entry of a generated case");
            skip(skipped, name, b, why);
            return 0;
        }
    size_t M[2] = {0, 0}, N[2] = {0, 0};
    uint16_t *y[2] = {NULL, NULL};
    for (int k = 0; k < 2 && (k == 0 || y[0]); k++)
        y[k] = load_y(dirs[k], rel[k], &M[k], &N[k], id[k], sizeof id[k], why, sizeof why);
    int differs = 0;
    a4w4_parity_diff d;
    if (!y[0] || !y[1]) {
        skip(skipped, name, b, why);
    } else if (M[0] != M[1] || N[0] != N[1] || strcmp(id[0], id[1])) {
        snprintf(why, sizeof why, "other operands: [%zu, %zu] %s in BASE, [%zu, %zu] %s in "
                 "CAND", M[0], N[0], id[0], M[1], N[1], id[1]);
        skip(skipped, name, b, why);
    } else if (a4w4_parity_diff_of(y[0], y[1], M[0] * N[0], &d)) {
        skip(skipped, name, b, "out of memory");
    } else {
        cJSON *r = a4w4_parity_diff_json(&d);
        if (r) {
            cJSON_AddStringToObject(r, "name", name);
            cJSON_AddStringToObject(r, "base_backend", b);
            cJSON_AddStringToObject(r, "cand_backend", jstring(e[1], "backend"));
            cJSON_AddNumberToObject(r, "M", (double)M[0]);
            cJSON_AddNumberToObject(r, "N", (double)N[0]);
            char brief[512];
            a4w4_criteria_brief(d.tol, d.ntol, brief, sizeof brief);
            cJSON_AddStringToObject(r, "peers", brief);
            cJSON_AddItemToArray(rows, r);
        }
        differs = d.equal != d.n;
    }
    free(y[0]);
    free(y[1]);
    return differs;
}

/* Every BASE entry that a keep run recorded (kept or not) against its CAND partner. */
static void pairs_of(const cJSON *doc[2], const char *dirs[2], const char *const *pb,
                     const char *const *pc, size_t np, cJSON *op)
{
    cJSON *rows = cJSON_AddArrayToObject(op, "rows");
    cJSON *skipped = cJSON_AddArrayToObject(op, "skipped");
    int differ = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc[0], "cases")) {
        const char *name = jstring(e, "name"), *b = jstring(e, "backend");
        if (!name || !b || (!jstring(e, "kept_output") && !jstring(e, "kept_output_missing")))
            continue; /* the oracle's entries, golden bundles, captures: nothing kept */
        const char *cb = partner(b, pb, pc, np);
        if (!cb)
            continue;
        const cJSON *two[2] = {e, find_entry(doc[1], name, cb)};
        if (!two[1])
            skip(skipped, name, b, "no entry of this case and backend in CAND");
        else
            differ += one_pair(dirs, two, rows, skipped);
    }
    cJSON_AddNumberToObject(op, "compared", cJSON_GetArraySize(rows));
    cJSON_AddNumberToObject(op, "differ", differ);
    cJSON_AddNumberToObject(op, "not_compared", cJSON_GetArraySize(skipped));
}

int a4w4_compare_kept(const cJSON *base, const cJSON *cand, const char *const *pb,
                      const char *const *pc, size_t np, cJSON *cmp)
{
    const cJSON *doc[2] = {base, cand};
    const char *dirs[2] = {kept_dir(base), kept_dir(cand)};
    cJSON *op = cJSON_AddObjectToObject(cmp, "output_parity");
    if (!op)
        return -1;
    for (int k = 0; k < 2; k++)
        cJSON_AddItemToObject(op, k ? "cand_dir" : "base_dir",
                              dirs[k] ? cJSON_CreateString(dirs[k]) : cJSON_CreateNull());
    if (dirs[0] && dirs[1]) {
        pairs_of(doc, dirs, pb, pc, np, op);
        return 0;
    }
    char why[200];
    snprintf(why, sizeof why, "%s (run --keep-outputs DIR keeps them): the outputs of the "
             "two runs were not compared", !dirs[0] && !dirs[1] ? "neither run kept its outputs"
                                           : !dirs[0]           ? "BASE kept no outputs"
                                                                : "CAND kept no outputs");
    cJSON_AddStringToObject(op, "why", why);
    cJSON_AddNumberToObject(op, "compared", 0);
    cJSON_AddNumberToObject(op, "differ", 0);
    cJSON_AddNumberToObject(op, "not_compared", 0);
    return 0;
}
