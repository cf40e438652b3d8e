/* a4w4_st_mini.h — the few lines of safetensors reading the GPU tests need (contracts §7):
 * an 8-byte little-endian header length, a JSON header, raw data. Not a validating reader
 * (harness/io/safetensors.h is that); it finds a tensor's data_offsets and a __metadata__
 * string by name in the compact JSON Python's safetensors writes. C and C++ both. */
#ifndef A4W4_ST_MINI_H
#define A4W4_ST_MINI_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *buf;
    size_t size, hlen;
    char *hdr;
} stfile;

static void st_free(stfile *f)
{
    free(f->buf);
    free(f->hdr);
    memset(f, 0, sizeof *f);
}

/* 0 on success; -1 when the file cannot be read or its header length is impossible. */
static int st_load(const char *path, stfile *f)
{
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    long sz = -1;
    if (fseek(fp, 0, SEEK_END) == 0)
        sz = ftell(fp);
    if (sz < 8 || fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        return -1;
    }
    f->size = (size_t)sz;
    f->buf = (uint8_t *)malloc(f->size);
    if (!f->buf || fread(f->buf, 1, f->size, fp) != f->size) {
        fclose(fp);
        st_free(f);
        return -1;
    }
    fclose(fp);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | f->buf[i];
    if (n > f->size - 8) {
        st_free(f);
        return -1;
    }
    f->hlen = (size_t)n;
    f->hdr = (char *)malloc(f->hlen + 1);
    if (!f->hdr) {
        st_free(f);
        return -1;
    }
    memcpy(f->hdr, f->buf + 8, f->hlen);
    f->hdr[f->hlen] = 0;
    return 0;
}

/* Data and byte length of tensor `name`, or NULL. */
static const uint8_t *st_tensor(const stfile *f, const char *name, size_t *len)
{
    char key[128];
    snprintf(key, sizeof key, "\"%s\"", name);
    const char *p = f->hdr;
    while ((p = strstr(p, key)) != NULL) {
        const char *q = p + strlen(key);
        while (*q == ' ')
            q++;
        if (*q != ':') {
            p++;
            continue;
        }
        const char *end = strchr(q, '}');
        const char *d = strstr(q, "\"data_offsets\"");
        if (!d || !end || d > end)
            return NULL;
        d = strchr(d, '[');
        unsigned long long b = 0, e = 0;
        if (!d || sscanf(d, "[ %llu , %llu ]", &b, &e) != 2 || e < b ||
            8 + f->hlen + e > f->size)
            return NULL;
        *len = (size_t)(e - b);
        return f->buf + 8 + f->hlen + b;
    }
    return NULL;
}

/* Metadata string value of key, copied to out (truncated); 0 on success. */
static int st_meta(const stfile *f, const char *key, char *out, size_t outlen)
{
    const char *m = strstr(f->hdr, "\"__metadata__\"");
    if (!m)
        return -1;
    const char *end = strchr(m, '}');
    char k[64];
    snprintf(k, sizeof k, "\"%s\"", key);
    const char *p = strstr(m, k);
    if (!p || (end && p > end))
        return -1;
    p = strchr(p + strlen(k), '"');
    if (!p)
        return -1;
    p++;
    size_t i = 0;
    while (*p && *p != '"' && i + 1 < outlen)
        out[i++] = *p++;
    out[i] = 0;
    return 0;
}

static size_t st_meta_size(const stfile *f, const char *key)
{
    char v[32];
    return st_meta(f, key, v, sizeof v) ? 0 : (size_t)strtoull(v, NULL, 10);
}

#endif
