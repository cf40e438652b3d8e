/* matrix.c — the case matrix: cases, golden bundles, identity hash, shards (see matrix.h). */
#include "matrix.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "stream.h"

int a4w4_matrix_in_shard(size_t k, unsigned i, unsigned n)
{
    return n == 0 || k % n + 1 == i;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/NAME.safetensors, sorted by name. 0 or -1 (unreadable directory, out of memory). */
static int list_bundles(const char *dir, char ***out, size_t *n)
{
    DIR *dp = opendir(dir);
    size_t cap = 0;
    if (!dp)
        return -1;
    for (struct dirent *de; (de = readdir(dp));) {
        size_t L = strlen(de->d_name);
        if (L < 13 || strcmp(de->d_name + L - 12, ".safetensors"))
            continue;
        if (*n == cap) {
            char **p = realloc(*out, (cap = cap ? cap * 2 : 16) * sizeof *p);
            if (!p)
                break;
            *out = p;
        }
        size_t len = strlen(dir) + L + 2;
        if (!((*out)[*n] = malloc(len)))
            break;
        snprintf((*out)[*n], len, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(dp);
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_str);
    return 0;
}

static int resolve_cases(a4w4_matrix *m, const char *set, const char *cases_path, char *err,
                         size_t errlen)
{
    if (cases_path) {
        snprintf(m->set, sizeof m->set, "custom");
        snprintf(m->cases_path, sizeof m->cases_path, "%s", cases_path);
        return 0;
    }
    if (!set)
        set = "premerge";
    if (!*set || strchr(set, '/') || strlen(set) >= sizeof m->set) {
        snprintf(err, errlen, "--set '%s' must be a set name (cases/NAME.csv)", set);
        return -1;
    }
    char rel[128];
    snprintf(m->set, sizeof m->set, "%s", set);
    snprintf(rel, sizeof rel, "cases/%s.csv", set);
    a4w4_data_path(rel, m->cases_path, sizeof m->cases_path);
    return 0;
}

int a4w4_matrix_load(a4w4_matrix *m, const char *set, const char *cases_path,
                     const char *golden_dir, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (resolve_cases(m, set, cases_path, err, errlen))
        return A4W4_MATRIX_EUSAGE;
    if (a4w4_casefile_read(m->cases_path, &m->cases, &m->ncases, err, errlen))
        return A4W4_MATRIX_ECASES;
    if (golden_dir && list_bundles(golden_dir, &m->bundles, &m->nbundles)) {
        snprintf(err, errlen, "--golden %s: cannot read the directory", golden_dir);
        return A4W4_MATRIX_EUSAGE;
    }
    int ok;
    m->hash = a4w4_hash_file(m->cases_path, 0xCBF29CE484222325ull, &ok);
    for (size_t i = 0; i < m->nbundles; i++) {
        const char *b = strrchr(m->bundles[i], '/');
        m->hash = a4w4_hash_str(b ? b + 1 : m->bundles[i], m->hash);
    }
    return 0;
}

/* "<prefix>/<file name of path without .safetensors>". */
static void stem_name(const char *prefix, const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, len, "%s/%.*s", prefix, (int)(strlen(b) - 12), b);
}

void a4w4_matrix_bundle_name(const a4w4_matrix *m, size_t i, char *buf, size_t len)
{
    stem_name("golden", m->bundles[i], buf, len);
}

int a4w4_matrix_add_captures(a4w4_matrix *m, const char *dir, char *err, size_t errlen)
{
    if (list_bundles(dir, &m->captures, &m->ncaptures)) {
        snprintf(err, errlen, "--captures %s: cannot read the directory", dir);
        return A4W4_MATRIX_EUSAGE;
    }
    for (size_t i = 0; i < m->ncaptures; i++) {
        char name[512];
        stem_name("capture", m->captures[i], name, sizeof name);
        m->hash = a4w4_hash_str(name, m->hash);
    }
    return 0;
}

size_t a4w4_matrix_items(const a4w4_matrix *m)
{
    return m->ncases + m->nbundles + m->ncaptures;
}

void a4w4_matrix_item_name(const a4w4_matrix *m, size_t k, char *buf, size_t len)
{
    if (k < m->ncases)
        snprintf(buf, len, "%s", m->cases[k].name);
    else if (k < m->ncases + m->nbundles)
        a4w4_matrix_bundle_name(m, k - m->ncases, buf, len);
    else
        stem_name("capture", m->captures[k - m->ncases - m->nbundles], buf, len);
}

void a4w4_matrix_free(a4w4_matrix *m)
{
    for (size_t i = 0; i < m->nbundles; i++)
        free(m->bundles[i]);
    free(m->bundles);
    for (size_t i = 0; i < m->ncaptures; i++)
        free(m->captures[i]);
    free(m->captures);
    free(m->cases);
    memset(m, 0, sizeof *m);
}
