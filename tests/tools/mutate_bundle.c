/* mutate_bundle.c — craft broken case bundles (contracts §7) for the end-to-end CLI tests.
 *
 *   mutate_bundle flip IN OUT TENSOR INDEX   OUT = IN with byte INDEX of TENSOR's data
 *                                            XOR 0x01; prints the element (row, col) touched
 *   mutate_bundle truncate IN OUT BYTES      OUT = first BYTES bytes of IN
 *   mutate_bundle lie-offset IN OUT TENSOR   OUT = IN with TENSOR's data_offsets end set one
 *                                            byte past the data section (header re-serialized)
 *   mutate_bundle drop IN OUT TENSOR         OUT = IN without TENSOR (metadata kept)
 *
 * Exit 0 on success; 2 with one line on stderr for bad usage or an unusable IN; 4 when OUT
 * cannot be written. OUT is written atomically (never left half-written). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "a4w4check.h"
#include "safetensors.h"

static const char usage[] =
    "usage: mutate_bundle flip IN OUT TENSOR INDEX | truncate IN OUT BYTES | "
    "lie-offset IN OUT TENSOR | drop IN OUT TENSOR";

static int bad(const char *msg, const char *arg)
{
    if (arg)
        fprintf(stderr, "mutate_bundle: %s: %s\n", msg, arg);
    else
        fprintf(stderr, "mutate_bundle: %s\n", msg);
    return A4W4_EXIT_BADINPUT;
}

/* Decimal size_t, digits only. */
static int parse_size(const char *s, size_t *out)
{
    if (!*s)
        return -1;
    size_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned dgt = (unsigned)(*s - '0');
        if (v > (SIZE_MAX - dgt) / 10)
            return -1;
        v = v * 10 + dgt;
    }
    *out = v;
    return 0;
}

static int load_in(const char *path, a4w4_st_file *f)
{
    char err[512];
    if (a4w4_st_load(path, f, err, sizeof err)) {
        fprintf(stderr, "mutate_bundle: %s\n", err);
        return -1;
    }
    return 0;
}

static int write_out(const char *path, const void *p, size_t n)
{
    char err[512];
    if (a4w4_st_write_raw(path, p, n, err, sizeof err)) {
        fprintf(stderr, "mutate_bundle: %s\n", err);
        return A4W4_EXIT_IO;
    }
    return 0;
}

static int do_flip(const char *in, const char *out, const char *name, const char *index)
{
    size_t idx;
    if (parse_size(index, &idx))
        return bad("INDEX is not a non-negative integer", index);
    a4w4_st_file f;
    if (load_in(in, &f))
        return A4W4_EXIT_BADINPUT;
    int rc;
    const a4w4_st_tensor *t = a4w4_st_find(&f, name);
    if (!t) {
        rc = bad("no such tensor", name);
        goto out;
    }
    if (idx >= t->nbytes) {
        fprintf(stderr, "mutate_bundle: INDEX %zu outside tensor '%s' (%zu bytes)\n", idx, name,
                t->nbytes);
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }
    size_t at = (size_t)(t->data - f.buf) + idx;
    f.buf[at] ^= 0x01;
    size_t elem = idx / a4w4_st_dtype_size(t->dtype);
    size_t cols = t->ndim >= 1 ? t->shape[t->ndim - 1] : 1;
    rc = write_out(out, f.buf, f.size);
    if (rc == 0)
        printf("flipped byte %zu of %s (file offset %zu, 0x%02x -> 0x%02x): element (%zu, %zu)\n",
               idx, name, at, (unsigned)(f.buf[at] ^ 0x01), (unsigned)f.buf[at], elem / cols,
               elem % cols);
out:
    a4w4_st_free(&f);
    return rc;
}

static int do_truncate(const char *in, const char *out, const char *bytes)
{
    size_t want;
    if (parse_size(bytes, &want))
        return bad("BYTES is not a non-negative integer", bytes);
    FILE *fp = fopen(in, "rb");
    if (!fp) {
        fprintf(stderr, "mutate_bundle: %s: cannot open: %s\n", in, strerror(errno));
        return A4W4_EXIT_BADINPUT;
    }
    uint8_t *buf = malloc(want ? want : 1);
    if (!buf) {
        fclose(fp);
        return bad("out of memory", NULL);
    }
    size_t got = fread(buf, 1, want, fp);
    int rd_err = ferror(fp);
    fclose(fp);
    int rc;
    if (rd_err)
        rc = bad("read error", in);
    else if (got < want) {
        fprintf(stderr, "mutate_bundle: BYTES %zu exceeds the size of %s (%zu bytes)\n", want,
                in, got);
        rc = A4W4_EXIT_BADINPUT;
    } else
        rc = write_out(out, buf, want);
    free(buf);
    return rc;
}

static int do_lie_offset(const char *in, const char *out, const char *name)
{
    a4w4_st_file f;
    if (load_in(in, &f))
        return A4W4_EXIT_BADINPUT;
    int rc = A4W4_EXIT_BADINPUT;
    char *json = NULL;
    uint8_t *obuf = NULL;
    size_t hlen = f.data_start - 8;
    cJSON *root = cJSON_ParseWithLength((const char *)f.buf + 8, hlen);
    if (!root) {
        rc = bad("cannot re-parse the header", in);
        goto out;
    }
    cJSON *e = cJSON_GetObjectItemCaseSensitive(root, name);
    cJSON *offs = e ? cJSON_GetObjectItemCaseSensitive(e, "data_offsets") : NULL;
    if (!e || !strcmp(name, "__metadata__") || cJSON_GetArraySize(offs) != 2) {
        rc = bad("no such tensor", name);
        goto out;
    }
    size_t lie = f.data_len + 1;
    char num[32];
    snprintf(num, sizeof num, "%zu", lie);
    cJSON *raw = cJSON_CreateRaw(num);
    if (!raw || !cJSON_ReplaceItemInArray(offs, 1, raw)) {
        cJSON_Delete(raw);
        rc = bad("out of memory", NULL);
        goto out;
    }
    json = cJSON_PrintUnformatted(root);
    if (!json) {
        rc = bad("out of memory", NULL);
        goto out;
    }
    size_t jlen = strlen(json), nh = (jlen + 7) / 8 * 8;
    size_t total = 8 + nh + f.data_len;
    obuf = malloc(total);
    if (!obuf) {
        rc = bad("out of memory", NULL);
        goto out;
    }
    for (int i = 0; i < 8; i++)
        obuf[i] = (uint8_t)((uint64_t)nh >> (8 * i));
    memcpy(obuf + 8, json, jlen);
    memset(obuf + 8 + jlen, ' ', nh - jlen);
    memcpy(obuf + 8 + nh, f.buf + f.data_start, f.data_len);
    rc = write_out(out, obuf, total);
    if (rc == 0)
        printf("%s data_offsets end set to %zu (data section %zu bytes)\n", name, lie,
               f.data_len);
out:
    free(obuf);
    cJSON_free(json);
    cJSON_Delete(root);
    a4w4_st_free(&f);
    return rc;
}

static int do_drop(const char *in, const char *out, const char *name)
{
    a4w4_st_file f;
    if (load_in(in, &f))
        return A4W4_EXIT_BADINPUT;
    int rc = A4W4_EXIT_BADINPUT;
    a4w4_st_tensor_in *t = calloc(f.ntensors ? f.ntensors : 1, sizeof *t);
    if (!t) {
        rc = bad("out of memory", NULL);
        goto out;
    }
    if (!a4w4_st_find(&f, name)) {
        rc = bad("no such tensor", name);
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < f.ntensors; i++) {
        const a4w4_st_tensor *s = &f.tensors[i];
        if (!strcmp(s->name, name))
            continue;
        t[n].name = s->name;
        t[n].dtype = s->dtype;
        t[n].ndim = s->ndim;
        memcpy(t[n].shape, s->shape, sizeof s->shape);
        t[n].data = s->data;
        t[n].nbytes = s->nbytes;
        n++;
    }
    char err[512];
    if (a4w4_st_write(out, t, n, (const char *const *)f.meta_keys,
                      (const char *const *)f.meta_vals, f.nmeta, err, sizeof err)) {
        fprintf(stderr, "mutate_bundle: %s\n", err);
        rc = A4W4_EXIT_IO;
        goto out;
    }
    rc = 0;
out:
    free(t);
    a4w4_st_free(&f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return bad(usage, NULL);
    const char *verb = argv[1];
    if (!strcmp(verb, "flip") && argc == 6)
        return do_flip(argv[2], argv[3], argv[4], argv[5]);
    if (!strcmp(verb, "truncate") && argc == 5)
        return do_truncate(argv[2], argv[3], argv[4]);
    if (!strcmp(verb, "lie-offset") && argc == 5)
        return do_lie_offset(argv[2], argv[3], argv[4]);
    if (!strcmp(verb, "drop") && argc == 5)
        return do_drop(argv[2], argv[3], argv[4]);
    return bad(usage, NULL);
}
