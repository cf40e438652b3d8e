/* safetensors.c — strict safetensors reader and atomic writer for case bundles (contracts §7).
 * JSON goes through cJSON; this file only checks what the parsed header says. Prints
 * nothing: every failure is one line in the caller's err buffer. */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "errmsg.h"
#include "fsutil.h"
#include "safetensors_internal.h"

#define ST_DATA_ALIGN 64              /* the data section starts this aligned in memory */
#define ST_MAX_EXACT 9007199254740992.0 /* 2^53: largest integer a JSON double holds exactly */

/* ---------------------------------------------------------------- messages */

static const char *json_kind(const cJSON *j)
{
    if (cJSON_IsString(j))
        return "a string";
    if (cJSON_IsNumber(j))
        return "a number";
    if (cJSON_IsArray(j))
        return "an array";
    if (cJSON_IsObject(j))
        return "an object";
    if (cJSON_IsBool(j))
        return "a boolean";
    if (cJSON_IsNull(j))
        return "null";
    return "an unknown JSON value";
}

/* ---------------------------------------------------------------- dtypes */

size_t a4w4_st_dtype_bits(a4w4_st_dtype dtype)
{
    switch (dtype) {
    case A4W4_DT_F4:
        return 4;
    case A4W4_DT_U8:
    case A4W4_DT_F8_E8M0:
        return 8;
    case A4W4_DT_BF16:
    case A4W4_DT_F16:
        return 16;
    case A4W4_DT_F32:
        return 32;
    }
    return 0;
}

size_t a4w4_st_dtype_size(a4w4_st_dtype dtype)
{
    return a4w4_st_dtype_bits(dtype) / 8;
}

int a4w4_st_packed_2d(const a4w4_st_tensor *t, size_t *rows, size_t *cols)
{
    if (t->ndim != 2 || (t->dtype != A4W4_DT_U8 && t->dtype != A4W4_DT_F8_E8M0 &&
                         t->dtype != A4W4_DT_F4))
        return -1;
    if (t->dtype == A4W4_DT_F4 && t->shape[1] % 2)
        return -1;
    *rows = t->shape[0];
    *cols = t->dtype == A4W4_DT_F4 ? t->shape[1] / 2 : t->shape[1];
    return 0;
}

const char *a4w4_st_dtype_name(a4w4_st_dtype dtype)
{
    switch (dtype) {
    case A4W4_DT_U8:
        return "U8";
    case A4W4_DT_BF16:
        return "BF16";
    case A4W4_DT_F16:
        return "F16";
    case A4W4_DT_F32:
        return "F32";
    case A4W4_DT_F8_E8M0:
        return "F8_E8M0";
    case A4W4_DT_F4:
        return "F4";
    }
    return "?";
}

/* Header dtype string -> enum (contracts §7). */
static int dtype_parse(const char *s, a4w4_st_dtype *out)
{
    static const struct {
        const char *name;
        a4w4_st_dtype dtype;
    } table[] = {{"U8", A4W4_DT_U8},    {"BF16", A4W4_DT_BF16},   {"F16", A4W4_DT_F16},
                 {"F32", A4W4_DT_F32},  {"F8_E8M0", A4W4_DT_F8_E8M0}, {"F4", A4W4_DT_F4}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(s, table[i].name)) {
            *out = table[i].dtype;
            return 0;
        }
    return -1;
}

/* ---------------------------------------------------------------- small helpers */

/* First key of obj that occurs twice (case-sensitive), or NULL; *oom = 1 when allocation
 * failed. */
static const char *duplicate_key(const cJSON *obj, int *oom)
{
    size_t n = 0;
    *oom = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        n++;
    if (n < 2)
        return NULL;
    const char **keys = malloc(n * sizeof *keys);
    if (!keys) {
        *oom = 1;
        return NULL;
    }
    size_t i = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        keys[i++] = c->string ? c->string : "";
    qsort(keys, n, sizeof *keys, cmp_str_ptr);
    const char *dup = NULL;
    for (i = 1; i < n && !dup; i++)
        if (!strcmp(keys[i - 1], keys[i]))
            dup = keys[i];
    free(keys);
    return dup;
}

/* A JSON number that is an exact integer in [0, 2^53]: 0 and *out, or -1 and *why. */
static int json_uint(const cJSON *j, size_t *out, const char **why, double *val)
{
    *val = 0.0;
    if (!cJSON_IsNumber(j)) {
        *why = "is not a number";
        return -1;
    }
    double d = j->valuedouble;
    *val = d;
    if (!isfinite(d) || d > ST_MAX_EXACT) {
        *why = d < 0 ? "is negative" : "is too large (above 2^53)";
        return -1;
    }
    if (d < 0) {
        *why = "is negative";
        return -1;
    }
    if (d != floor(d)) {
        *why = "is not an integer";
        return -1;
    }
    *out = (size_t)d;
    return 0;
}

/* ---------------------------------------------------------------- reader */

void a4w4_st_free(a4w4_st_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->ntensors; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    for (size_t i = 0; i < f->nmeta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_vals[i]);
    }
    free(f->meta_keys);
    free(f->meta_vals);
    free(f->path);
    free(f->alloc_);
    memset(f, 0, sizeof *f);
}

const a4w4_st_tensor *a4w4_st_find(const a4w4_st_file *f, const char *name)
{
    if (!f || !name)
        return NULL;
    for (size_t i = 0; i < f->ntensors; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const char *a4w4_st_meta(const a4w4_st_file *f, const char *key)
{
    if (!f || !key)
        return NULL;
    for (size_t i = 0; i < f->nmeta; i++)
        if (!strcmp(f->meta_keys[i], key))
            return f->meta_vals[i];
    return NULL;
}

static uint64_t read_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Padding before the file image so that the data section lands ST_DATA_ALIGN-aligned. */
static size_t image_pad(const uint8_t *first8, size_t size)
{
    if (size < 8)
        return 0;
    uint64_t n = read_le64(first8);
    if (n > size - 8)
        return 0;
    size_t start = 8 + (size_t)n;
    return (ST_DATA_ALIGN - start % ST_DATA_ALIGN) % ST_DATA_ALIGN;
}

/* Aligned buffer of pad + size bytes (at least 1); f->alloc_, f->buf set. */
static int alloc_image(a4w4_st_file *f, size_t size, size_t pad)
{
    void *p = NULL;
    if (size > SIZE_MAX - ST_DATA_ALIGN || posix_memalign(&p, ST_DATA_ALIGN, pad + size + 1))
        return -1;
    f->alloc_ = p;
    f->buf = (uint8_t *)p + pad;
    f->size = size;
    return 0;
}

typedef struct {
    size_t begin, end, idx;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static a4w4_hstatus parse_metadata(a4w4_st_file *f, const cJSON *meta, char *err, size_t errlen)
{
    const char *P = f->path;
    if (!cJSON_IsObject(meta)) {
        a4w4_errmsg(err, errlen, 0, P, "__metadata__ must be an object of strings (found %s)",
                json_kind(meta));
        return A4W4_ST_BADINPUT;
    }
    int oom;
    const char *dup = duplicate_key(meta, &oom);
    if (oom)
        goto nomem;
    if (dup) {
        a4w4_errmsg(err, errlen, 0, P, "duplicate __metadata__ key '%s'", show(dup).s);
        return A4W4_ST_BADINPUT;
    }
    size_t n = 0;
    for (const cJSON *c = meta->child; c; c = c->next) {
        if (!cJSON_IsString(c) || !c->valuestring) {
            a4w4_errmsg(err, errlen, 0, P,
                    "__metadata__ must be an object of strings: value of '%s' is %s",
                    show(c->string).s, json_kind(c));
            return A4W4_ST_BADINPUT;
        }
        n++;
    }
    if (n == 0)
        return A4W4_ST_OK;
    f->meta_keys = calloc(n, sizeof *f->meta_keys);
    f->meta_vals = calloc(n, sizeof *f->meta_vals);
    if (!f->meta_keys || !f->meta_vals)
        goto nomem;
    for (const cJSON *c = meta->child; c; c = c->next) {
        char *k = strdup(c->string ? c->string : "");
        char *v = strdup(c->valuestring);
        if (!k || !v) {
            free(k);
            free(v);
            goto nomem;
        }
        f->meta_keys[f->nmeta] = k;
        f->meta_vals[f->nmeta] = v;
        f->nmeta++;
    }
    return A4W4_ST_OK;
nomem:
    a4w4_errmsg(err, errlen, 0, P, "out of memory reading __metadata__");
    return A4W4_ST_NOMEM;
}

/* A tensor entry's frame: an object, no key twice, dtype, shape and data_offsets present. */
static a4w4_hstatus tensor_entry_keys(const char *P, const cJSON *e, const char *nm, char *err,
                                      size_t errlen)
{
    if (!cJSON_IsObject(e)) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' entry must be an object (found %s)", nm,
                json_kind(e));
        return A4W4_ST_BADINPUT;
    }
    int oom;
    const char *dup = duplicate_key(e, &oom);
    if (oom) {
        a4w4_errmsg(err, errlen, 0, P, "out of memory reading tensor '%s'", nm);
        return A4W4_ST_NOMEM;
    }
    if (dup) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' has key '%s' twice", nm, show(dup).s);
        return A4W4_ST_BADINPUT;
    }
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!jd || !js || !jo) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' is missing %s", nm,
                !jd ? "dtype" : !js ? "shape" : "data_offsets");
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

static a4w4_hstatus tensor_dtype(const char *P, const char *nm, const cJSON *jd,
                                 a4w4_st_dtype *dtype, char *err, size_t errlen)
{
    if (!cJSON_IsString(jd) || !jd->valuestring) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' dtype must be a string (found %s)", nm,
                json_kind(jd));
        return A4W4_ST_BADINPUT;
    }
    if (dtype_parse(jd->valuestring, dtype)) {
        a4w4_errmsg(err, errlen, 0, P,
                "tensor '%s' has unknown dtype '%s' (known: U8, BF16, F16, F32, F8_E8M0, F4)",
                nm, show(jd->valuestring).s);
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

/* Element d of the tensor's array `what` (shape, data_offsets): an exact integer. */
static a4w4_hstatus tensor_uint(const char *P, const char *nm, const char *what, int d,
                                const cJSON *c, size_t *out, char *err, size_t errlen)
{
    const char *why;
    double v;
    if (!json_uint(c, out, &why, &v))
        return A4W4_ST_OK;
    if (cJSON_IsNumber(c))
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' %s[%d] %s (%.17g)", nm, what, d, why, v);
    else
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' %s[%d] %s (found %s)", nm, what, d, why,
                json_kind(c));
    return A4W4_ST_BADINPUT;
}

/* The shape array: at most A4W4_ST_MAX_DIMS integers, the byte count within size_t. */
static a4w4_hstatus tensor_shape(const char *P, const char *nm, const cJSON *js,
                                 const cJSON *jd, a4w4_st_dtype dtype, int *ndim, size_t *shape,
                                 size_t *nbytes, char *err, size_t errlen)
{
    if (!cJSON_IsArray(js)) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' shape must be an array (found %s)", nm,
                json_kind(js));
        return A4W4_ST_BADINPUT;
    }
    *ndim = cJSON_GetArraySize(js);
    if (*ndim > A4W4_ST_MAX_DIMS) {
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' shape has %d dims, more than %d", nm, *ndim,
                A4W4_ST_MAX_DIMS);
        return A4W4_ST_BADINPUT;
    }
    int d = 0;
    for (const cJSON *c = js->child; c; c = c->next, d++)
        if (tensor_uint(P, nm, "shape", d, c, &shape[d], err, errlen))
            return A4W4_ST_BADINPUT;
    size_t ebits = a4w4_st_dtype_bits(dtype);
    int in_product = 0;
    if (!shape_bytes(*ndim, shape, ebits, nbytes, &in_product))
        return A4W4_ST_OK;
    if (in_product == 2)
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' shape %s x F4 has an odd element count: a sub-byte "
                "tensor must end on a byte boundary", nm, show_shape(*ndim, shape).s);
    else if (in_product)
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' shape %s: element count overflows size_t", nm,
                show_shape(*ndim, shape).s);
    else
        a4w4_errmsg(err, errlen, 0, P,
                "tensor '%s' shape %s x %s (%zu bits): byte count overflows size_t", nm,
                show_shape(*ndim, shape).s, jd->valuestring, ebits);
    return A4W4_ST_BADINPUT;
}

/* data_offsets [begin, end]: within the data section and spanning exactly nbytes. */
static a4w4_hstatus tensor_offsets(const a4w4_st_file *f, const char *nm, const cJSON *jo,
                                   const cJSON *jd, int ndim, const size_t *shape,
                                   size_t nbytes, size_t off[2], char *err, size_t errlen)
{
    const char *P = f->path;
    if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2) {
        if (cJSON_IsArray(jo))
            a4w4_errmsg(err, errlen, 0, P,
                    "tensor '%s' data_offsets must be [begin, end] (found an array of %d)", nm,
                    cJSON_GetArraySize(jo));
        else
            a4w4_errmsg(err, errlen, 0, P, "tensor '%s' data_offsets must be [begin, end] (found %s)",
                    nm, json_kind(jo));
        return A4W4_ST_BADINPUT;
    }
    int d = 0;
    for (const cJSON *c = jo->child; c; c = c->next, d++)
        if (tensor_uint(P, nm, "data_offsets", d, c, &off[d], err, errlen))
            return A4W4_ST_BADINPUT;
    if (off[0] > off[1])
        a4w4_errmsg(err, errlen, 0, P, "tensor '%s' data_offsets [%zu, %zu] has begin > end", nm,
                off[0], off[1]);
    else if (off[1] > f->data_len)
        a4w4_errmsg(err, errlen, 0, P,
                "tensor '%s' data_offsets [%zu, %zu] past the data section (%zu bytes)", nm,
                off[0], off[1], f->data_len);
    else if (off[1] - off[0] != nbytes)
        a4w4_errmsg(err, errlen, 0, P,
                "tensor '%s' shape %s x %s is %zu bytes but data_offsets [%zu, %zu] span %zu bytes",
                nm, show_shape(ndim, shape).s, jd->valuestring, nbytes, off[0], off[1],
                off[1] - off[0]);
    else
        return A4W4_ST_OK;
    return A4W4_ST_BADINPUT;
}

/* One tensor entry -> f->tensors[f->ntensors] and its span. */
static a4w4_hstatus parse_tensor(a4w4_st_file *f, const cJSON *e, span *sp, char *err,
                                 size_t errlen)
{
    const char *P = f->path;
    shown_name nm = show(e->string);
    a4w4_hstatus rc = tensor_entry_keys(P, e, nm.s, err, errlen);
    if (rc)
        return rc;
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    a4w4_st_dtype dtype;
    int ndim = 0;
    size_t shape[A4W4_ST_MAX_DIMS] = {0}, nbytes = 0, off[2];
    if ((rc = tensor_dtype(P, nm.s, jd, &dtype, err, errlen)) ||
        (rc = tensor_shape(P, nm.s, js, jd, dtype, &ndim, shape, &nbytes, err, errlen)) ||
        (rc = tensor_offsets(f, nm.s, jo, jd, ndim, shape, nbytes, off, err, errlen)))
        return rc;
    a4w4_st_tensor *t = &f->tensors[f->ntensors];
    t->name = strdup(e->string ? e->string : "");
    if (!t->name) {
        a4w4_errmsg(err, errlen, 0, P, "out of memory reading tensor '%s'", nm.s);
        return A4W4_ST_NOMEM;
    }
    t->dtype = dtype;
    t->ndim = ndim;
    memcpy(t->shape, shape, sizeof shape);
    t->nbytes = nbytes;
    t->data = f->buf + f->data_start + off[0];
    sp->begin = off[0];
    sp->end = off[1];
    sp->idx = f->ntensors;
    f->ntensors++;
    return A4W4_ST_OK;
}

/* The 8-byte header length n: 1..size-8; sets data_start and data_len. No NUL in the header. */
static a4w4_hstatus header_span(a4w4_st_file *f, size_t *n, char *err, size_t errlen)
{
    const char *P = f->path;
    if (f->size < 8) {
        a4w4_errmsg(err, errlen, 0, P,
                "file is shorter than 8 bytes (%zu bytes); a safetensors file starts with an "
                "8-byte header length",
                f->size);
        return A4W4_ST_BADINPUT;
    }
    uint64_t n64 = read_le64(f->buf);
    if (n64 == 0) {
        a4w4_errmsg(err, errlen, 0, P, "header length is 0");
        return A4W4_ST_BADINPUT;
    }
    if (n64 > f->size - 8) {
        a4w4_errmsg(err, errlen, 0, P,
                "header length %llu is past the end of the file (%zu bytes after the 8-byte "
                "length)",
                (unsigned long long)n64, f->size - 8);
        return A4W4_ST_BADINPUT;
    }
    *n = (size_t)n64;
    f->data_start = 8 + *n;
    f->data_len = f->size - f->data_start;
    const char *hdr = (const char *)f->buf + 8;
    const char *nul = memchr(hdr, '\0', *n);
    if (nul) {
        a4w4_errmsg(err, errlen, 0, P, "header is not valid JSON: NUL byte at header offset %zu",
                (size_t)(nul - hdr));
        return A4W4_ST_BADINPUT;
    }
    return A4W4_ST_OK;
}

/* The header's n bytes: one JSON object starting with '{', only whitespace after it. *root
 * gets the parsed value (also on failure after parsing: the caller deletes it). */
static a4w4_hstatus header_json(const char *P, const char *hdr, size_t n, cJSON **root,
                                char *err, size_t errlen)
{
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(hdr, n, &end, 0);
    if (!*root) {
        size_t at = (end && end >= hdr && end <= hdr + n) ? (size_t)(end - hdr) : 0;
        a4w4_errmsg(err, errlen, 0, P, "header is not valid JSON (parse error near header offset %zu)",
                at);
        return A4W4_ST_BADINPUT;
    }
    if (!cJSON_IsObject(*root)) {
        a4w4_errmsg(err, errlen, 0, P, "header is not a JSON object (found %s)", json_kind(*root));
        return A4W4_ST_BADINPUT;
    }
    if (hdr[0] != '{') {
        a4w4_errmsg(err, errlen, 0, P,
                "header must start with '{' (safetensors rule; found byte 0x%02x)",
                (unsigned)(unsigned char)hdr[0]);
        return A4W4_ST_BADINPUT;
    }
    for (const char *p = end; p < hdr + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            a4w4_errmsg(err, errlen, 0, P,
                    "header is not valid JSON: trailing bytes after the object at header "
                    "offset %zu",
                    (size_t)(p - hdr));
            return A4W4_ST_BADINPUT;
        }
    return A4W4_ST_OK;
}

/* The header's entries: no duplicate key, "__metadata__", then every tensor (spans[i] per
 * tensor, malloc'ed into *spans; *count tensors). */
static a4w4_hstatus header_entries(a4w4_st_file *f, const cJSON *root, span **spans,
                                   size_t *count, char *err, size_t errlen)
{
    const char *P = f->path;
    /* top-level keys: duplicates first (a duplicated name is ambiguous whatever it holds) */
    int oom;
    const char *dup = duplicate_key(root, &oom);
    if (oom) {
        a4w4_errmsg(err, errlen, 0, P, "out of memory reading the header");
        return A4W4_ST_NOMEM;
    }
    if (dup) {
        if (!strcmp(dup, "__metadata__"))
            a4w4_errmsg(err, errlen, 0, P, "duplicate key '__metadata__' in the header");
        else
            a4w4_errmsg(err, errlen, 0, P, "duplicate tensor name '%s'", show(dup).s);
        return A4W4_ST_BADINPUT;
    }
    const cJSON *meta = NULL;
    *count = 0;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (c->string && !strcmp(c->string, "__metadata__"))
            meta = c;
        else
            (*count)++;
    }
    a4w4_hstatus rc = meta ? parse_metadata(f, meta, err, errlen) : A4W4_ST_OK;
    if (rc)
        return rc;
    if (*count) {
        f->tensors = calloc(*count, sizeof *f->tensors);
        *spans = calloc(*count, sizeof **spans);
        if (!f->tensors || !*spans) {
            a4w4_errmsg(err, errlen, 0, P, "out of memory reading the header");
            return A4W4_ST_NOMEM;
        }
    }
    for (const cJSON *c = root->child; c && !rc; c = c->next)
        if (c != meta)
            rc = parse_tensor(f, c, &(*spans)[f->ntensors], err, errlen);
    return rc;
}

/* Overlap: sorted by begin, each non-empty tensor must start at or after the end of the
 * previous non-empty one (which, with no overlap so far, is the furthest end seen). */
static a4w4_hstatus check_overlap(const a4w4_st_file *f, span *spans, size_t count, char *err,
                                  size_t errlen)
{
    if (count < 2)
        return A4W4_ST_OK;
    qsort(spans, count, sizeof *spans, cmp_span);
    const span *prev = NULL;
    for (size_t i = 0; i < count; i++) {
        const span *s = &spans[i];
        if (s->begin == s->end)
            continue;
        if (prev && s->begin < prev->end) {
            a4w4_errmsg(err, errlen, 0, f->path, "tensors '%s' [%zu, %zu] and '%s' [%zu, %zu] overlap",
                    show(f->tensors[prev->idx].name).s, prev->begin, prev->end,
                    show(f->tensors[s->idx].name).s, s->begin, s->end);
            return A4W4_ST_BADINPUT;
        }
        prev = s;
    }
    return A4W4_ST_OK;
}

/* Validate f->buf[0..size) (already in place) and fill the rest of *f. */
static a4w4_hstatus parse_image(a4w4_st_file *f, char *err, size_t errlen)
{
    size_t n, count = 0;
    a4w4_hstatus rc = header_span(f, &n, err, errlen);
    if (rc)
        return rc;
    cJSON *root = NULL;
    span *spans = NULL;
    rc = header_json(f->path, (const char *)f->buf + 8, n, &root, err, errlen);
    if (!rc)
        rc = header_entries(f, root, &spans, &count, err, errlen);
    if (!rc)
        rc = check_overlap(f, spans, count, err, errlen);
    free(spans);
    cJSON_Delete(root);
    return rc;
}

static a4w4_hstatus load_fail(a4w4_st_file *f, a4w4_hstatus rc)
{
    a4w4_st_free(f);
    return rc;
}

a4w4_hstatus a4w4_st_load_mem(const char *name, const void *data, size_t size, a4w4_st_file *f,
                              char *err, size_t errlen)
{
    if (!f || !name || (!data && size)) {
        a4w4_errmsg(err, errlen, 0, name, "a4w4_st_load_mem: NULL argument");
        if (f)
            memset(f, 0, sizeof *f);
        return A4W4_ST_BADINPUT;
    }
    memset(f, 0, sizeof *f);
    f->path = strdup(name);
    if (!f->path || alloc_image(f, size, size >= 8 ? image_pad(data, size) : 0)) {
        a4w4_errmsg(err, errlen, 0, name, "out of memory (%zu bytes)", size);
        return load_fail(f, A4W4_ST_NOMEM);
    }
    if (size)
        memcpy(f->buf, data, size);
    a4w4_hstatus rc = parse_image(f, err, errlen);
    return rc ? load_fail(f, rc) : A4W4_ST_OK;
}

/* pread exactly n bytes at off: 0, or -1 with errno (0 = file shorter than expected). */
static int pread_full(int fd, void *buf, size_t n, off_t off)
{
    uint8_t *p = buf;
    while (n) {
        size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        ssize_t r = pread(fd, p, chunk, off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = 0;
            return -1;
        }
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

/* The whole regular file fd into f's aligned image. */
static a4w4_hstatus read_image(int fd, const char *path, a4w4_st_file *f, char *err,
                               size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st)) {
        a4w4_errmsg(err, errlen, 0, path, "cannot stat: %s", strerror(errno));
        return A4W4_ST_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        a4w4_errmsg(err, errlen, 0, path, "not a regular file");
        return A4W4_ST_BADINPUT;
    }
    if (st.st_size < 0 || (uintmax_t)st.st_size > (uintmax_t)(SIZE_MAX - 2 * ST_DATA_ALIGN)) {
        a4w4_errmsg(err, errlen, 0, path, "file too large to read into memory");
        return A4W4_ST_BADINPUT;
    }
    size_t size = (size_t)st.st_size;
    uint8_t first8[8] = {0};
    size_t pad = 0;
    if (size >= 8) {
        if (pread_full(fd, first8, 8, 0)) {
            a4w4_errmsg(err, errlen, 0, path, "read error: %s",
                    errno ? strerror(errno) : "file shrank while reading");
            return A4W4_ST_IO;
        }
        pad = image_pad(first8, size);
    }
    if (alloc_image(f, size, pad)) {
        a4w4_errmsg(err, errlen, 0, path, "out of memory (%zu bytes)", size);
        return A4W4_ST_NOMEM;
    }
    if (size && pread_full(fd, f->buf, size, 0)) {
        a4w4_errmsg(err, errlen, 0, path, "read error: %s",
                errno ? strerror(errno) : "file shrank while reading");
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_st_load(const char *path, a4w4_st_file *f, char *err, size_t errlen)
{
    if (!f || !path) {
        a4w4_errmsg(err, errlen, 0, path, "a4w4_st_load: NULL argument");
        if (f)
            memset(f, 0, sizeof *f);
        return A4W4_ST_BADINPUT;
    }
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path) {
        a4w4_errmsg(err, errlen, 0, path, "out of memory");
        return A4W4_ST_NOMEM;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        a4w4_errmsg(err, errlen, 0, path, "cannot open: %s", strerror(errno));
        return load_fail(f, A4W4_ST_IO);
    }
    a4w4_hstatus rc = read_image(fd, path, f, err, errlen);
    close(fd);
    if (!rc)
        rc = parse_image(f, err, errlen);
    return rc ? load_fail(f, rc) : A4W4_ST_OK;
}
