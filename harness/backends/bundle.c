/* bundle.c — the "bundle" backend type (`--backend bundle:DIR`): outputs produced
 * elsewhere (another machine, another tool) and stored one safetensors file per case, compared
 * like any backend's. Directory layout, file names and the contract rule: bundle.h. */
#include "bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_formats.h"
#include "a4w4_quote.h"
#include "bundle_dir.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "fsutil.h"
#include "registry.h"
#include "safetensors.h"

#define CONTRACT_FILE "contract.txt"
#define MANIFEST_FILE "manifest.json"

a4w4_hstatus a4w4_bundle_write_outputs(const char *dir, const char *case_name, size_t M,
                                       size_t N, const uint16_t *y, char *err, size_t errlen)
{
    char fname[512], path[4096];
    if (!dir || !*dir) {
        snprintf(err, errlen, "output bundle: empty directory name");
        return A4W4_ST_BADINPUT;
    }
    if (!case_name || a4w4_bundle_file_name(case_name, fname, sizeof fname)) {
        snprintf(err, errlen, "%s: case name '%s' is empty or too long for a file name", dir,
                 case_name ? case_name : "");
        return A4W4_ST_BADINPUT;
    }
    if (snprintf(path, sizeof path, "%s/%s", dir, fname) >= (int)sizeof path) {
        snprintf(err, errlen, "%s/%s: path too long", dir, fname);
        return A4W4_ST_BADINPUT;
    }
    if (M == 0 || N == 0 || !y || M > SIZE_MAX / 2 / N) {
        snprintf(err, errlen, "%s: outputs [%zu, %zu] must be non-empty and fit in memory", path,
                 M, N);
        return A4W4_ST_BADINPUT;
    }
    a4w4_hstatus rc = a4w4_mkdir_p(dir, err, errlen);
    if (rc)
        return rc;
    char ms[32], ns[32];
    snprintf(ms, sizeof ms, "%zu", M);
    snprintf(ns, sizeof ns, "%zu", N);
    const char *keys[] = {"format", "case", "M", "N"};
    const char *vals[] = {A4W4_BUNDLE_OUTPUTS_FORMAT, case_name, ms, ns};
    a4w4_st_tensor_in t = {"y", A4W4_DT_BF16, 2, {M, N}, y, M * N * 2};
    return a4w4_st_write(path, &t, 1, keys, vals, 4, err, errlen);
}

static int bundle_prepare(const char *arg, void **ctx, char *contract, size_t contract_len,
                          int *asm_layout, char *err, size_t errlen)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "bundle %s: no such directory (%s)", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "bundle %s: not a directory (bundle:DIR names a directory of "
                 "<case>.safetensors output files)", arg);
        return -1;
    }
    a4w4_bundle_dir *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "bundle %s: out of memory", arg);
        return -1;
    }
    if (a4w4_bundle_dir_read(arg, d, err, errlen)) {
        a4w4_bundle_dir_free(d);
        free(d);
        return -1;
    }
    snprintf(contract, contract_len, "%s", d->contract);
    *asm_layout = 0; /* stored outputs do not change with the pad fills */
    *ctx = d;
    return 0;
}

static int bundle_check_items(void *vctx, const a4w4_run_identity *id,
                              const char *const *items, size_t n, char *err, size_t errlen)
{
    return a4w4_bundle_dir_check_items(vctx, id ? id->matrix_hash : NULL, items, n, err,
                                       errlen);
}

/* 1 when the file's metadata names another seed, matrix hash, tool version, kernel (the
 * manifest's) or case than the case and the run (why says which); absent keys are not
 * checked. */
static int identity_differs(const a4w4_bundle_dir *c, const a4w4_st_file *f,
                            const a4w4_run_args *a, const char *path)
{
    char seed[32], shown[64], wanted[64];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->c->seed);
    const char *keys[6] = {"seed", "matrix_hash", "tool_version", "kernel", "name", "case"};
    const char *want[6] = {seed, a->id ? a->id->matrix_hash : NULL,
                           a->id ? a->id->tool_version : NULL, c->kernel[0] ? c->kernel : NULL,
                           a->c->name, a->c->name};
    for (int i = 0; i < 6; i++) {
        const char *v = a4w4_st_meta(f, keys[i]);
        if (v && want[i] && strcmp(v, want[i])) {
            snprintf(a->why, a->whylen, "%s: metadata %s '%s', the %s is '%s' (%s)", path,
                     keys[i], a4w4_quote(v, shown, sizeof shown),
                     i == 3 ? "manifest's" : i > 3 ? "case's name" : "run's",
                     a4w4_quote(want[i], wanted, sizeof wanted),
                     i == 3 ? "the output of another kernel: a stale file"
                            : i > 3 ? "the output of another case" : "outputs of other operands");
            return 1;
        }
    }
    return 0;
}

/* What the manifest says of the case before its file is read: A4W4_OK (written: read it),
 * A4W4_RUN_SKIP (not listed, or listed and its file missing) or an error (the kernel failed
 * on it: the entry fails). why says which. */
static int manifest_standing(const a4w4_bundle_dir *c, const a4w4_run_args *a,
                             const char *path)
{
    char shown[400], kern[140];
    a4w4_quote(c->kernel[0] ? c->kernel : "not named", kern, sizeof kern);
    const a4w4_bundle_case *fc = a4w4_bundle_dir_failed(c, a->c->name);
    if (fc) {
        snprintf(a->why, a->whylen, "the kernel (%s) failed on this case, %s/" MANIFEST_FILE
                 " says: %s", kern, c->dir, a4w4_quote(fc->why, shown, sizeof shown));
        return A4W4_EINVAL;
    }
    int listed = a4w4_bundle_dir_listed(c, a->c->name) != NULL;
    if (c->has_manifest && !listed) {
        snprintf(a->why, a->whylen, "no output: %s/" MANIFEST_FILE " does not list this case "
                 "(kernel %s)", c->dir, kern);
        return A4W4_RUN_SKIP;
    }
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        snprintf(a->why, a->whylen, "no output file %s%s", path,
                 listed ? " (" MANIFEST_FILE " lists the case as written)" : "");
        return A4W4_RUN_SKIP;
    }
    return A4W4_OK;
}

/* Tensor y of loaded file f checked against the case (dtype, shape, identity, contract):
 * A4W4_OK, or A4W4_RUN_REFUSED with why naming the file and the rule: a file that breaks the
 * output-bundle format (contracts §7) holds no outputs to compare, so it is bad input, never
 * the kernel's mismatch (docs/backends.md, output bundles). */
static int check_file(const a4w4_bundle_dir *c, const a4w4_st_file *f, const a4w4_run_args *a,
                      const char *path)
{
    const a4w4_case_data *d = a->d;
    const a4w4_st_tensor *t = a4w4_st_find(f, "y");
    const char *mc = a4w4_st_meta(f, "contract");
    char shown[64];
    if (!t)
        snprintf(a->why, a->whylen, "%s: no tensor 'y' (an output bundle holds y, BF16 [M, N])",
                 path);
    else if (t->dtype != A4W4_DT_BF16)
        snprintf(a->why, a->whylen, "%s: tensor y is %s, an output bundle's y is BF16", path,
                 a4w4_st_dtype_name(t->dtype));
    else if (t->ndim != 2 || t->shape[0] != d->M || t->shape[1] != d->N)
        snprintf(a->why, a->whylen, "%s: tensor y has %d dims [%zu, %zu%s], the case needs "
                 "[M, N] = [%zu, %zu]", path, t->ndim, t->ndim > 0 ? t->shape[0] : 0,
                 t->ndim > 1 ? t->shape[1] : 0, t->ndim > 2 ? ", ..." : "", d->M, d->N);
    else if (identity_differs(c, f, a, path))
        return A4W4_RUN_REFUSED;
    else if (mc && !a4w4_contract_text_same(mc, c->contract))
        snprintf(a->why, a->whylen, "%s: metadata contract '%s' disagrees with the directory's "
                 "'%s' (%s/" CONTRACT_FILE ", default ordered(1))", path,
                 a4w4_quote(mc, shown, sizeof shown), c->contract, c->dir);
    else
        return A4W4_OK;
    return A4W4_RUN_REFUSED;
}

/* The sampled outputs of y (bf16 little-endian bytes [M, N], any alignment) into a->y. */
static void copy_outputs(const uint8_t *y, const a4w4_run_args *a)
{
    const a4w4_sample *s = a->s;
    size_t M = a->d->M, N = a->d->N;
    int all_r = s->full || !s->rows, all_c = s->full || !s->cols;
    size_t nr = all_r ? M : s->nrows, nc = all_c ? N : s->ncols;
    for (size_t i = 0; i < nr; i++) {
        const uint8_t *row = y + (all_r ? i : s->rows[i]) * N * 2;
        for (size_t j = 0; j < nc; j++) {
            const uint8_t *p = row + (all_c ? j : s->cols[j]) * 2;
            a->y[i * nc + j] = (uint16_t)(p[0] | (p[1] << 8));
        }
    }
}

/* The backend type's holds (engine/backend.h): 1 unless manifest_standing says skip. */
static int bundle_holds(void *vctx, const a4w4_case *c, char *why, size_t whylen)
{
    const a4w4_bundle_dir *b = vctx;
    char fname[512], path[4200];
    if (a4w4_bundle_file_name(c->name, fname, sizeof fname) ||
        snprintf(path, sizeof path, "%s/%s", b->dir, fname) >= (int)sizeof path)
        return 1; /* bundle_run reports the unusable name */
    a4w4_run_args a = {.c = c, .why = why, .whylen = whylen};
    return manifest_standing(b, &a, path) != A4W4_RUN_SKIP;
}

static int bundle_run(void *vctx, const a4w4_run_args *a)
{
    const a4w4_bundle_dir *c = vctx;
    char fname[512], path[4200], shown[64];
    if (a4w4_bundle_file_name(a->c->name, fname, sizeof fname) ||
        snprintf(path, sizeof path, "%s/%s", c->dir, fname) >= (int)sizeof path) {
        snprintf(a->why, a->whylen, "bundle %s: case name '%s' gives no usable file name",
                 c->dir, a4w4_quote(a->c->name, shown, sizeof shown));
        return A4W4_EINVAL;
    }
    int rc = manifest_standing(c, a, path);
    if (rc != A4W4_OK)
        return rc;
    if (a->id && c->hash[0] && strcmp(c->hash, a->id->matrix_hash)) {
        snprintf(a->why, a->whylen, "%s/" MANIFEST_FILE ": matrix_hash %s, this run's matrix is "
                 "%s (outputs of other operands)", c->dir, a4w4_quote(c->hash, shown,
                 sizeof shown), a->id->matrix_hash);
        return A4W4_RUN_REFUSED;
    }
    a4w4_st_file f;
    if (a4w4_st_load(path, &f, a->why, a->whylen)) /* truncated, empty, not safetensors */
        return A4W4_RUN_REFUSED;                    /* why: "<path>: <rule>"; bad input */
    rc = check_file(c, &f, a, path);
    if (rc == A4W4_OK)
        copy_outputs(a4w4_st_find(&f, "y")->data, a);
    a4w4_st_free(&f);
    return rc;
}

static void bundle_release(void *vctx)
{
    a4w4_bundle_dir_free(vctx);
    free(vctx);
}

/* The E8M0 code-0 reading the directory's manifest declares (A4W4_CODE0_*; contracts §1). */
static int bundle_code0(void *vctx)
{
    const a4w4_bundle_dir *c = vctx;
    return c ? c->code0 : A4W4_CODE0_BOTH;
}

const a4w4_backend_type a4w4_backend_bundle = {
    .name = "bundle",
    .what = "outputs produced elsewhere, read from DIR/<case>.safetensors (tensor y, BF16 [M, N])",
    .contract = "ordered(1)",
    .needs_arg = 1,
    .full_outputs = 1,
    .arg_is_outputs = 1,
    .thread_safe = 1, /* each run reads its own file; the context is read-only */
    .prepare = bundle_prepare,
    .code0 = bundle_code0,
    .run = bundle_run,
    .check_items = bundle_check_items,
    .holds = bundle_holds,
    .release = bundle_release};
