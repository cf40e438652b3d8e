/* export.c — operand bundles for systems outside this process (see export.h). */
#include "export.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "fsutil.h"
#include "gen.h"
#include "itemfile.h"
#include "safetensors.h"

#define MAX_T 16
#define MAX_META 32

/* The tensors and metadata of one bundle under construction. */
typedef struct {
    a4w4_st_tensor_in t[MAX_T];
    size_t nt;
    char layouts[256], absent[512];
    char m[MAX_META][96];
    const char *keys[MAX_META], *vals[MAX_META];
    size_t nmeta;
    double bytes;
} bundle_out;

/* Add tensor t to the bundle and its name to the layouts list (every tensor present). */
static void add_tensor(bundle_out *b, a4w4_st_tensor_in t)
{
    b->t[b->nt++] = t;
    snprintf(b->layouts + strlen(b->layouts), sizeof b->layouts - strlen(b->layouts), "%s%s",
             b->layouts[0] ? "," : "", t.name);
    b->bytes += (double)t.nbytes;
}

static void add_u8(bundle_out *b, const char *name, const uint8_t *data, size_t rows, size_t cols)
{
    add_tensor(b, (a4w4_st_tensor_in){name, A4W4_DT_U8, 2, {rows, cols}, data, rows * cols});
}

static void add_bf16(bundle_out *b, const char *name, const uint16_t *data, size_t rows, size_t cols)
{
    add_tensor(b, (a4w4_st_tensor_in){name, A4W4_DT_BF16, 2, {rows, cols}, data, rows * cols * 2});
}

static void add_absent(bundle_out *b, const char *name, const char *why)
{
    snprintf(b->absent + strlen(b->absent), sizeof b->absent - strlen(b->absent), "%s%s: %s",
             b->absent[0] ? "; " : "", name, why);
}

static void meta(bundle_out *b, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void meta(bundle_out *b, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->m[b->nmeta], sizeof b->m[0], fmt, ap);
    va_end(ap);
    b->keys[b->nmeta] = key;
    b->vals[b->nmeta] = b->m[b->nmeta];
    b->nmeta++;
}

/* The caller's extra tensors and metadata (a4w4_export_extra), after the operands. -1 with
 * err when they do not fit the bundle. */
static int add_extra(bundle_out *b, const a4w4_export_extra *x, char *err, size_t errlen)
{
    if (!x)
        return 0;
    if (b->nt + x->nt > MAX_T || x->nmeta > MAX_META - 16) {
        snprintf(err, errlen, "operand bundle: %zu extra tensors and %zu metadata keys do not "
                 "fit", x->nt, x->nmeta);
        return -1;
    }
    for (size_t i = 0; i < x->nt; i++)
        add_tensor(b, x->t[i]);
    for (size_t i = 0; i < x->nmeta; i++) {
        b->keys[b->nmeta] = x->keys[i];
        b->vals[b->nmeta++] = x->vals[i];
    }
    return 0;
}

/* Metadata common to generated and golden items, then the write. */
static int finish(bundle_out *b, const char *name, size_t M, size_t N, size_t K,
                  const char *regime, unsigned long long seed, const a4w4_export_opts *o,
                  const char *dir, double *bytes, char *err, size_t errlen)
{
    char path[4096];
    if (a4w4_item_path(dir, name, path, sizeof path)) {
        snprintf(err, errlen, "%s: item name '%s' gives no usable file name", dir, name);
        return -1;
    }
    meta(b, "format", "%s", A4W4_OPERANDS_FORMAT);
    meta(b, "name", "%s", name);
    meta(b, "M", "%zu", M);
    meta(b, "N", "%zu", N);
    meta(b, "K", "%zu", K);
    meta(b, "regime", "%s", regime);
    meta(b, "seed", "%llu", seed);
    meta(b, "matrix_hash", "%s", o->matrix_hash);
    meta(b, "tool_version", "%s", o->tool_version);
    b->keys[b->nmeta] = "layouts", b->vals[b->nmeta++] = b->layouts;
    b->keys[b->nmeta] = "absent", b->vals[b->nmeta++] = b->absent;
    meta(b, "pad", "0x%02X/0x%02X", A4W4_ACT_SCALE_FILL_DEFAULT, A4W4_ACT_SCALE_FILL_DEFAULT);
    meta(b, "expected", "%s", o->with_expected ? "y_exact" : "");
    if (bytes)
        *bytes = b->bytes;
    return a4w4_st_write(path, b->t, b->nt, b->keys, b->vals, b->nmeta, err, errlen) ? -1 : 0;
}

double a4w4_export_case_bytes(const a4w4_case *c, int with_expected)
{
    double K2 = c->K / 2.0, nb = c->K / 32.0, M = (double)c->M, N = (double)c->N;
    double b = (M + N) * K2 + (M + N) * nb; /* the row-major operands and scales */
    if (a4w4_preshuffle_supported(c->N, c->K))
        b += N * K2;
    if (a4w4_scale_swizzle_supported(2, c->N, c->K / 32))
        b += N * nb;
    b += (double)a4w4_act_scale_padded_rows(c->M) * a4w4_act_scale_padded_cols(c->K / 32);
    if (c->regime == A4W4_REGIME_NORMAL)
        b += 2 * M * c->K;
    return b + (with_expected ? 2 * M * N : 0);
}

/* y_exact of the generated case (malloc'ed), or NULL when out of memory. */
static uint16_t *expected_of(const a4w4_case_data *d)
{
    uint16_t *y = malloc(d->M * d->N * sizeof *y);
    if (y && a4w4_gemm_exact(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                             d->M, d->N, d->K, y, NULL) != A4W4_OK) {
        free(y);
        y = NULL;
    }
    return y;
}

static void add_case_tensors(bundle_out *b, const a4w4_case_data *d)
{
    size_t M = d->M, N = d->N, K = d->K, nb = K / 32;
    add_u8(b, "a_fp4", d->a_fp4.data, M, K / 2);
    add_u8(b, "a_scale", d->a_scale.data, M, nb);
    add_u8(b, "a_scale_shuffled", d->a_scale_shuffled.data, a4w4_act_scale_padded_rows(M),
           a4w4_act_scale_padded_cols(nb));
    add_u8(b, "w_fp4", d->w_fp4.data, N, K / 2);
    if (d->w_fp4_shuffled.data)
        add_u8(b, "w_fp4_shuffled", d->w_fp4_shuffled.data, N, K / 2);
    else
        add_absent(b, "w_fp4_shuffled", "preshuffle needs N % 16 == 0 and K % 64 == 0 (contracts §3.1)");
    add_u8(b, "w_scale", d->w_scale.data, N, nb);
    if (d->w_scale_swizzled.data)
        add_u8(b, "w_scale_swizzled", d->w_scale_swizzled.data, N, nb);
    else
        add_absent(b, "w_scale_swizzled",
                   "swizzle needs N % 32 == 0 and (K/32) % 8 == 0 (contracts §3.2)");
    if (d->x)
        add_bf16(b, "x", d->x, M, K);
}

int a4w4_export_case_data(const char *name, const a4w4_case *c, const a4w4_case_data *d,
                          const a4w4_export_opts *o, const a4w4_export_extra *x,
                          const char *dir, double *bytes, char *err, size_t errlen)
{
    bundle_out *b = calloc(1, sizeof *b);
    uint16_t *y = NULL;
    int rc = -1;
    if (!b) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    add_case_tensors(b, d);
    if (o->with_expected && !(y = expected_of(d)))
        snprintf(err, errlen, "%s: out of memory computing y_exact", name);
    else {
        if (y)
            add_bf16(b, "y_exact", y, d->M, d->N);
        if (!add_extra(b, x, err, errlen))
            rc = finish(b, name, d->M, d->N, d->K, c->regime_text,
                        (unsigned long long)c->seed, o, dir, bytes, err, errlen);
    }
    free(y);
    free(b);
    return rc;
}

int a4w4_export_case(const a4w4_case *c, const a4w4_export_opts *o, const char *dir,
                     double *bytes, char *err, size_t errlen)
{
    a4w4_sample s = {.full = 1};
    a4w4_case_data d;
    if (a4w4_case_generate(c, &s, &d) != A4W4_OK) {
        snprintf(err, errlen, "%s: out of memory generating the operands", c->name);
        return -1;
    }
    int rc = a4w4_export_case_data(c->name, c, &d, o, NULL, dir, bytes, err, errlen);
    a4w4_case_data_free(&d);
    return rc;
}

/* Dimension `key` of a golden bundle's metadata as a positive decimal, else 0. */
static size_t meta_dim(const a4w4_st_file *f, const char *key)
{
    const char *v = a4w4_st_meta(f, key);
    char *end;
    if (!v || *v < '1' || *v > '9')
        return 0;
    unsigned long long x = strtoull(v, &end, 10);
    return *end || x > A4W4_CASE_DIM_MAX ? 0 : (size_t)x;
}

/* Copy the golden bundle's operand tensors (those present) into b. */
static void add_golden_tensors(bundle_out *b, const a4w4_st_file *f, int with_expected)
{
    static const char *const u8[] = {"a_fp4", "a_scale", "a_scale_shuffled", "w_fp4",
                                     "w_fp4_shuffled", "w_scale", "w_scale_swizzled"};
    for (size_t i = 0; i < sizeof u8 / sizeof u8[0]; i++) {
        const a4w4_st_tensor *t = a4w4_st_find(f, u8[i]);
        size_t rows, cols;
        if (t && !a4w4_st_packed_2d(t, &rows, &cols))
            add_u8(b, u8[i], t->data, rows, cols);
        else
            add_absent(b, u8[i], "not in the golden bundle");
    }
    const a4w4_st_tensor *x = a4w4_st_find(f, "x");
    if (x && x->dtype == A4W4_DT_BF16 && x->ndim == 2)
        add_bf16(b, "x", (const uint16_t *)x->data, x->shape[0], x->shape[1]);
    const a4w4_st_tensor *y = a4w4_st_find(f, "y_exact");
    if (with_expected && y && y->dtype == A4W4_DT_BF16 && y->ndim == 2)
        add_bf16(b, "y_exact", (const uint16_t *)y->data, y->shape[0], y->shape[1]);
}

int a4w4_export_golden(const char *path, const char *name, const a4w4_export_opts *o,
                       const char *dir, double *bytes, char *err, size_t errlen)
{
    a4w4_st_file f;
    if (a4w4_st_load(path, &f, err, errlen))
        return -1;
    size_t M = meta_dim(&f, "M"), N = meta_dim(&f, "N"), K = meta_dim(&f, "K");
    const char *format = a4w4_st_meta(&f, "format");
    bundle_out *b = calloc(1, sizeof *b);
    int rc = -1;
    if (format && strcmp(format, "a4w4-case/1")) {
        snprintf(err, errlen, "%s bundle: no GEMM operands", format);
        rc = 1;
    } else if (!M || !N || !K || K % 32)
        snprintf(err, errlen, "%s: metadata M, N, K must be positive decimals with K %% 32 == 0 "
                 "(contracts §7)", path);
    else if (!b)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (add_golden_tensors(b, &f, o->with_expected), !a4w4_st_find(&f, "a_fp4") ||
             !a4w4_st_find(&f, "w_fp4"))
        snprintf(err, errlen, "%s: a case bundle needs a_fp4 and w_fp4 (contracts §7)", path);
    else
        rc = finish(b, name, M, N, K, "golden", 0, o, dir, bytes, err, errlen);
    free(b);
    a4w4_st_free(&f);
    return rc;
}

double a4w4_export_golden_bytes(const char *path, int with_expected)
{
    a4w4_st_file f;
    char err[256];
    if (a4w4_st_load(path, &f, err, sizeof err))
        return 0;
    const char *format = a4w4_st_meta(&f, "format");
    bundle_out *b = format && strcmp(format, "a4w4-case/1") ? NULL : calloc(1, sizeof *b);
    double bytes = 0;
    if (b) {
        add_golden_tensors(b, &f, with_expected);
        bytes = b->bytes;
    }
    free(b);
    a4w4_st_free(&f);
    return bytes;
}

int a4w4_export_manifest(const char *dir, const char *set, const char *cases_file,
                         const char *shard, const a4w4_export_opts *o,
                         const char *const *names, const char *const *why, size_t n,
                         double bytes, char *err, size_t errlen)
{
    char path[4096];
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "format", A4W4_OPERANDS_FORMAT);
    cJSON_AddStringToObject(m, "set", set);
    cJSON_AddStringToObject(m, "cases_file", cases_file);
    cJSON_AddStringToObject(m, "matrix_hash", o->matrix_hash);
    cJSON_AddStringToObject(m, "tool_version", o->tool_version);
    cJSON_AddStringToObject(m, "shard", shard);
    cJSON_AddBoolToObject(m, "with_expected", o->with_expected);
    cJSON_AddNumberToObject(m, "bytes", bytes);
    cJSON *items = cJSON_AddArrayToObject(m, "cases");
    cJSON *skipped = cJSON_AddObjectToObject(m, "not_exported");
    for (size_t i = 0; i < n; i++) {
        if (why[i])
            cJSON_AddStringToObject(skipped, names[i], why[i]);
        else
            cJSON_AddItemToArray(items, cJSON_CreateString(names[i]));
    }
    char *text = cJSON_Print(m);
    int rc = -1;
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (!text)
        snprintf(err, errlen, "%s: out of memory", path);
    else
        rc = a4w4_write_atomic(path, text, strlen(text), err, errlen) ? -1 : 0;
    free(text);
    cJSON_Delete(m);
    return rc;
}
