/* compare_outputs.c — see compare_outputs.h. */
#include "compare_outputs.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "bundle_dir.h"
#include "criteria.h"
#include "fsutil.h"
#include "safetensors.h"

/* One side's case: its file loaded, y's bits copied out (any alignment). */
typedef struct {
    a4w4_st_file f;
    uint16_t *y;
    size_t M, N;
} side;

/* Load dir/fname into s. 0, else -1 with err naming the file and the rule. */
static int load_side(const char *dir, const char *fname, side *s, char *err, size_t errlen)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, fname);
    memset(s, 0, sizeof *s);
    if (a4w4_st_load(path, &s->f, err, errlen))
        return -1;
    const a4w4_st_tensor *t = a4w4_st_find(&s->f, "y");
    if (!t || t->dtype != A4W4_DT_BF16 || t->ndim != 2) {
        snprintf(err, errlen, "%.900s: no BF16 tensor y [M, N] (an output bundle holds one)", path);
        return -1;
    }
    s->M = t->shape[0], s->N = t->shape[1];
    s->y = malloc((s->M * s->N > 0 ? s->M * s->N : 1) * sizeof *s->y);
    if (!s->y) {
        snprintf(err, errlen, "%.900s: out of memory", path);
        return -1;
    }
    const uint8_t *p = t->data;
    for (size_t k = 0; k < s->M * s->N; k++)
        s->y[k] = (uint16_t)(p[2 * k] | (p[2 * k + 1] << 8));
    return 0;
}

static void free_side(side *s)
{
    free(s->y);
    a4w4_st_free(&s->f);
}

/* 0 when a and b are outputs of the same operands and shape, else -1 with err. */
static int same_inputs(const side *a, const side *b, const char *fname, char *err,
                       size_t errlen)
{
    static const char *const keys[] = {"matrix_hash", "seed"};
    if (a->M != b->M || a->N != b->N) {
        snprintf(err, errlen, "%s: y is [%zu, %zu] in BASE and [%zu, %zu] in CAND: not the "
                 "same case", fname, a->M, a->N, b->M, b->N);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        const char *va = a4w4_st_meta(&a->f, keys[i]), *vb = a4w4_st_meta(&b->f, keys[i]);
        if (va && vb && strcmp(va, vb)) {
            snprintf(err, errlen, "%s: metadata %s '%.40s' in BASE, '%.40s' in CAND: outputs of "
                     "other operands", fname, keys[i], va, vb);
            return -1;
        }
    }
    return 0;
}

/* One case of both directories: a table row and a JSON entry; *differs set. 0 or -1 (err). */
static int compare_case(const char *base, const char *cand, const char *fname, FILE *md,
                        cJSON *list, int *differs, char *err, size_t errlen)
{
    side a, b;
    int rc = load_side(base, fname, &a, err, errlen);
    if (!rc && (rc = load_side(cand, fname, &b, err, errlen)))
        free_side(&a);
    if (rc)
        return -1;
    a4w4_parity_diff d;
    char text[2048];
    rc = same_inputs(&a, &b, fname, err, errlen);
    if (!rc && a4w4_parity_diff_of(a.y, b.y, a.M * a.N, &d)) {
        snprintf(err, errlen, "%s: out of memory", fname);
        rc = -1;
    }
    if (!rc) {
        a4w4_parity_diff_format(&d, text, sizeof text);
        fprintf(md, "| %.*s | %zu | %zu | %s |\n", (int)(strlen(fname) - 12), fname, a.M, a.N,
                text);
        cJSON *e = a4w4_parity_diff_json(&d);
        if (e) {
            cJSON_AddStringToObject(e, "file", fname);
            cJSON_AddNumberToObject(e, "M", (double)a.M);
            cJSON_AddNumberToObject(e, "N", (double)a.N);
            cJSON_AddItemToArray(list, e);
        }
        *differs |= d.equal != d.n;
    }
    free_side(&a);
    free_side(&b);
    return rc;
}

/* 1 when name is among v[0..n). */
static int listed(char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], name))
            return 1;
    return 0;
}

/* Every file of both: the common ones compared, the others named. Returns the exit code. */
static int compare_dirs(const a4w4_bundle_dir *d[2], FILE *md, cJSON *doc)
{
    char err[1024];
    int differs = 0;
    size_t only = 0, same = 0;
    cJSON *list = cJSON_AddArrayToObject(doc, "cases"), *lone = cJSON_AddArrayToObject(doc,
                                                                                      "only_in");
    fprintf(md, "| case | M | N | parity (CAND against BASE) |\n|---|---|---|---|\n");
    for (size_t i = 0; i < d[0]->nfiles; i++) {
        if (!listed(d[1]->files, d[1]->nfiles, d[0]->files[i]))
            continue;
        same++;
        if (compare_case(d[0]->dir, d[1]->dir, d[0]->files[i], md, list, &differs, err,
                         sizeof err)) {
            a4w4_errorf("compare: --outputs: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
    }
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < d[k]->nfiles; i++)
            if (!listed(d[1 - k]->files, d[1 - k]->nfiles, d[k]->files[i])) {
                fprintf(md, "\n%s only in %s (%s)", d[k]->files[i], k ? "CAND" : "BASE",
                        d[k]->dir);
                cJSON_AddItemToArray(lone, cJSON_CreateString(d[k]->files[i]));
                only++;
            }
    fprintf(md, "%s\n%zu cases in both, %zu in one only\n", only ? "\n" : "", same, only);
    if (differs)
        return A4W4_EXIT_MISMATCH;
    return only || !same ? A4W4_EXIT_INCOMPLETE : A4W4_EXIT_PASS;
}

/* The Markdown and the JSON to standard output or out/. Returns -1, else the exit code. */
static int write_outputs(const char *out, const char *md, const cJSON *doc, int quiet)
{
    char err[1024], path[4200];
    if (!out) {
        if (fputs(md, stdout) == EOF || fflush(stdout)) {
            a4w4_errorf("compare: cannot write standard output");
            return A4W4_EXIT_IO;
        }
        return -1;
    }
    char *json = cJSON_Print(doc);
    if (!json) {
        a4w4_errorf("compare: out of memory");
        return A4W4_EXIT_IO;
    }
    const char *files[2] = {"compare.md", "compare.json"}, *text[2] = {md, json};
    int rc = a4w4_mkdir_p(out, err, sizeof err) ? A4W4_EXIT_IO : -1;
    for (int i = 0; i < 2 && rc == -1; i++) {
        snprintf(path, sizeof path, "%s/%s", out, files[i]);
        if (a4w4_write_atomic(path, text[i], strlen(text[i]), err, sizeof err))
            rc = A4W4_EXIT_IO;
        else if (!quiet)
            fprintf(stderr, "a4w4check compare: wrote %s\n", path);
    }
    if (rc != -1)
        a4w4_errorf("compare: --out %s", err);
    free(json);
    return rc;
}

int a4w4_compare_outputs(const char *base, const char *cand, const char *out, int quiet)
{
    a4w4_bundle_dir dd[2];
    const a4w4_bundle_dir *d[2] = {&dd[0], &dd[1]};
    const char *dirs[2] = {base, cand};
    char err[1024], *md = NULL;
    size_t mdlen = 0;
    int rc = -1;
    memset(dd, 0, sizeof dd);
    for (int k = 0; k < 2 && rc == -1; k++)
        if (a4w4_bundle_dir_read(dirs[k], &dd[k], err, sizeof err)) {
            a4w4_errorf("compare: --outputs %s: %s", k ? "CAND" : "BASE", err);
            rc = A4W4_EXIT_BADINPUT;
        }
    FILE *f = rc == -1 ? open_memstream(&md, &mdlen) : NULL;
    cJSON *doc = cJSON_CreateObject();
    if (rc == -1 && (!f || !doc)) {
        a4w4_errorf("compare: out of memory");
        rc = A4W4_EXIT_IO;
    }
    if (rc == -1) {
        cJSON_AddStringToObject(doc, "base", base);
        cJSON_AddStringToObject(doc, "cand", cand);
        fprintf(f, "# Parity of two output directories\n\nBASE %s, CAND %s: per case the "
                "outputs bit-equal, those that differ, the largest bf16 ULP distance, and the "
                "peers' tolerance criteria on CAND with BASE as reference.\n\n", base, cand);
        rc = compare_dirs(d, f, doc);
    }
    if (f)
        fclose(f);
    if (rc != A4W4_EXIT_BADINPUT && rc != A4W4_EXIT_IO && md) {
        int w = write_outputs(out, md, doc, quiet);
        rc = w == -1 ? rc : w;
    }
    free(md);
    cJSON_Delete(doc);
    a4w4_bundle_dir_free(&dd[0]);
    a4w4_bundle_dir_free(&dd[1]);
    return rc;
}
