/* safetensors_write.c — the safetensors writer for case bundles (contracts §7): tensors
 * checked, the header built with cJSON, the file written atomically (fsutil.h). Prints
 * nothing: every failure is one line in the caller's err buffer. The reader: safetensors.c. */
#include "safetensors.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errmsg.h"
#include "fsutil.h"
#include "safetensors_internal.h"

/* ---------------------------------------------------------------- writer */

a4w4_hstatus a4w4_st_write_raw(const char *path, const void *data, size_t size, char *err,
                               size_t errlen)
{
    if (!path || (!data && size)) {
        a4w4_errmsg(err, errlen, 0, path, "a4w4_st_write_raw: NULL argument");
        return A4W4_ST_BADINPUT;
    }
    return a4w4_write_atomic(path, data, size, err, errlen);
}

/* cJSON number as exact decimal text (cJSON's own printer goes through double/%g). */
static cJSON *json_size(size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    return cJSON_CreateRaw(buf);
}

/* One writer input: named, a known dtype, 0..8 dims, sizes consistent; *bytes its size. */
static a4w4_hstatus validate_tensor(const char *path, const a4w4_st_tensor_in *ti, size_t i,
                                    size_t *bytes, char *err, size_t errlen)
{
    if (!ti->name || !ti->name[0]) {
        a4w4_errmsg(err, errlen, 0, path, "tensor #%zu has an empty name", i);
        return A4W4_ST_BADINPUT;
    }
    shown_name nm = show(ti->name);
    if (!strcmp(ti->name, "__metadata__")) {
        a4w4_errmsg(err, errlen, 0, path, "tensor #%zu may not be named '__metadata__'", i);
        return A4W4_ST_BADINPUT;
    }
    if (!dtype_valid(ti->dtype)) {
        a4w4_errmsg(err, errlen, 0, path, "tensor '%s' has unknown dtype %d", nm.s, (int)ti->dtype);
        return A4W4_ST_BADINPUT;
    }
    if (ti->ndim < 0 || ti->ndim > A4W4_ST_MAX_DIMS) {
        a4w4_errmsg(err, errlen, 0, path, "tensor '%s' ndim %d outside [0, %d]", nm.s, ti->ndim,
                A4W4_ST_MAX_DIMS);
        return A4W4_ST_BADINPUT;
    }
    int in_product;
    if (shape_bytes(ti->ndim, ti->shape, a4w4_st_dtype_bits(ti->dtype), bytes, &in_product))
        a4w4_errmsg(err, errlen, 0, path, "tensor '%s' shape %s x %s: %s", nm.s,
                show_shape(ti->ndim, ti->shape).s, a4w4_st_dtype_name(ti->dtype),
                in_product == 2 ? "an odd F4 element count does not end on a byte boundary"
                                : "size overflows size_t");
    else if (ti->nbytes && ti->nbytes != *bytes)
        a4w4_errmsg(err, errlen, 0, path,
                "tensor '%s' nbytes %zu does not match shape %s x %s = %zu bytes", nm.s,
                ti->nbytes, show_shape(ti->ndim, ti->shape).s, a4w4_st_dtype_name(ti->dtype),
                *bytes);
    else if (*bytes && !ti->data)
        a4w4_errmsg(err, errlen, 0, path, "tensor '%s' has NULL data for %zu bytes", nm.s, *bytes);
    else
        return A4W4_ST_OK;
    return A4W4_ST_BADINPUT;
}

/* Duplicates: names among tensors, keys among metadata. */
static a4w4_hstatus check_duplicates(const char *path, const a4w4_st_tensor_in *t, size_t n,
                                     const char *const *meta_keys, size_t nmeta, char *err,
                                     size_t errlen)
{
    size_t m = n > nmeta ? n : nmeta;
    if (m < 2)
        return A4W4_ST_OK;
    const char **keys = malloc(m * sizeof *keys);
    if (!keys) {
        a4w4_errmsg(err, errlen, 0, path, "out of memory");
        return A4W4_ST_NOMEM;
    }
    a4w4_hstatus rc = A4W4_ST_OK;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        size_t k = pass ? nmeta : n;
        for (size_t i = 0; i < k; i++)
            keys[i] = pass ? meta_keys[i] : t[i].name;
        qsort(keys, k, sizeof *keys, cmp_str_ptr);
        for (size_t i = 1; i < k; i++)
            if (!strcmp(keys[i - 1], keys[i])) {
                a4w4_errmsg(err, errlen, 0, path, pass ? "duplicate metadata key '%s'"
                                                : "duplicate tensor name '%s'",
                        show(keys[i]).s);
                rc = A4W4_ST_BADINPUT;
                break;
            }
    }
    free(keys);
    return rc;
}

static a4w4_hstatus validate_inputs(const char *path, const a4w4_st_tensor_in *t, size_t n,
                                    const char *const *meta_keys, const char *const *meta_vals,
                                    size_t nmeta, size_t *bytes, char *err, size_t errlen)
{
    if ((n && !t) || (nmeta && (!meta_keys || !meta_vals))) {
        a4w4_errmsg(err, errlen, 0, path, "a4w4_st_write: NULL tensor or metadata array");
        return A4W4_ST_BADINPUT;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        a4w4_hstatus rc = validate_tensor(path, &t[i], i, &bytes[i], err, errlen);
        if (rc)
            return rc;
        if (bytes[i] > SIZE_MAX - total) {
            a4w4_errmsg(err, errlen, 0, path, "total data size overflows size_t");
            return A4W4_ST_BADINPUT;
        }
        total += bytes[i];
    }
    for (size_t i = 0; i < nmeta; i++)
        if (!meta_keys[i] || !meta_vals[i]) {
            a4w4_errmsg(err, errlen, 0, path, "metadata entry #%zu has a NULL key or value", i);
            return A4W4_ST_BADINPUT;
        }
    return check_duplicates(path, t, n, meta_keys, nmeta, err, errlen);
}

/* Append the array of n sizes v to o under key; 0 or -1 (out of memory). */
static int add_sizes(cJSON *o, const char *key, const size_t *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    if (!a)
        return -1;
    for (int d = 0; d < n; d++) {
        cJSON *x = json_size(v[d]);
        if (!x || !cJSON_AddItemToArray(a, x)) {
            cJSON_Delete(x);
            return -1;
        }
    }
    return 0;
}

/* The header object: "__metadata__" (when nmeta), then the tensors in `order`, packed from
 * offset 0; pieces[1..n] get their data. NULL when out of memory. */
static cJSON *header_object(const a4w4_st_tensor_in *t, size_t n, const size_t *order,
                            const size_t *bytes, const char *const *meta_keys,
                            const char *const *meta_vals, size_t nmeta, a4w4_write_piece *pieces)
{
    cJSON *root = cJSON_CreateObject(), *meta = NULL;
    if (!root || (nmeta && !(meta = cJSON_AddObjectToObject(root, "__metadata__"))))
        goto nomem;
    for (size_t i = 0; i < nmeta; i++) {
        cJSON *v = cJSON_CreateString(meta_vals[i]);
        if (!v || !cJSON_AddItemToObject(meta, meta_keys[i], v)) {
            cJSON_Delete(v);
            goto nomem;
        }
    }
    size_t off = 0;
    for (size_t j = 0; j < n; j++) {
        const a4w4_st_tensor_in *ti = &t[order[j]];
        size_t ends[2] = {off, off + bytes[order[j]]};
        cJSON *e = cJSON_AddObjectToObject(root, ti->name);
        if (!e || !cJSON_AddStringToObject(e, "dtype", a4w4_st_dtype_name(ti->dtype)) ||
            add_sizes(e, "shape", ti->shape, ti->ndim) || add_sizes(e, "data_offsets", ends, 2))
            goto nomem;
        pieces[j + 1].p = ti->data;
        pieces[j + 1].n = bytes[order[j]];
        off += bytes[order[j]];
    }
    return root;
nomem:
    cJSON_Delete(root);
    return NULL;
}

/* The 8-byte length and the header JSON padded with spaces to a multiple of 8 bytes (so the
 * data section is 8-byte aligned) into pieces[0]; the buffer to free, NULL when out of memory. */
static uint8_t *header_bytes(const cJSON *root, a4w4_write_piece *p0)
{
    char *json = cJSON_PrintUnformatted(root);
    if (!json)
        return NULL;
    size_t jlen = strlen(json);
    size_t hlen = (jlen + 7) / 8 * 8;
    uint8_t *hdr = malloc(8 + hlen);
    if (hdr) {
        for (int i = 0; i < 8; i++)
            hdr[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
        memcpy(hdr + 8, json, jlen);
        memset(hdr + 8 + jlen, ' ', hlen - jlen);
        p0->p = hdr;
        p0->n = 8 + hlen;
    }
    cJSON_free(json);
    return hdr;
}

a4w4_hstatus a4w4_st_write(const char *path, const a4w4_st_tensor_in *t, size_t n,
                           const char *const *meta_keys, const char *const *meta_vals,
                           size_t nmeta, char *err, size_t errlen)
{
    if (!path) {
        a4w4_errmsg(err, errlen, 0, path, "a4w4_st_write: NULL path");
        return A4W4_ST_BADINPUT;
    }
    size_t *bytes = calloc(n ? n : 1, sizeof *bytes);
    size_t *order = calloc(n ? n : 1, sizeof *order);
    a4w4_write_piece *pieces = calloc(n + 1, sizeof *pieces);
    cJSON *root = NULL;
    uint8_t *hdr = NULL;
    a4w4_hstatus rc = A4W4_ST_NOMEM;
    if (!bytes || !order || !pieces)
        a4w4_errmsg(err, errlen, 0, path, "out of memory");
    else
        rc = validate_inputs(path, t, n, meta_keys, meta_vals, nmeta, bytes, err, errlen);
    if (rc)
        goto out;
    /* layout: widest dtype first so every tensor is aligned to its element size */
    size_t k = 0;
    for (size_t eb = 32; eb >= 4; eb /= 2)
        for (size_t i = 0; i < n; i++)
            if (a4w4_st_dtype_bits(t[i].dtype) == eb)
                order[k++] = i;
    root = header_object(t, n, order, bytes, meta_keys, meta_vals, nmeta, pieces);
    hdr = root ? header_bytes(root, &pieces[0]) : NULL;
    if (!hdr) {
        a4w4_errmsg(err, errlen, 0, path, "out of memory building the header");
        rc = A4W4_ST_NOMEM;
        goto out;
    }
    rc = a4w4_write_atomic_pieces(path, pieces, n + 1, err, errlen);
out:
    free(hdr);
    cJSON_Delete(root);
    free(pieces);
    free(order);
    free(bytes);
    return rc;
}
