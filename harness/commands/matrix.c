/* matrix.c — the case matrix: cases, golden bundles, identity hash, shards (see matrix.h). */
#include "matrix.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_quote.h"
#include "fsutil.h"
#include "grow.h"
#include "stream.h"

/* ---- shards balanced by cost ------------------------------------------------------------ */

static unsigned long long sat_mul(unsigned long long a, unsigned long long b)
{
    unsigned long long r;
    return __builtin_mul_overflow(a, b, &r) ? ~0ull : r;
}

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
    return a + b < a ? ~0ull : a + b;
}

unsigned long long a4w4_matrix_item_cost(const a4w4_matrix *m, size_t k)
{
    if (k >= m->ncases)
        return A4W4_COST_PER_BUNDLE;
    const a4w4_case *c = &m->cases[k];
    unsigned long long macs = sat_mul(sat_mul(c->M, c->N), c->K);
    unsigned long long operands =
        sat_mul(sat_mul(sat_add(c->M, c->N), c->K), A4W4_COST_PER_OPERAND);
    return sat_add(sat_add(macs, operands), A4W4_COST_PER_ITEM);
}

/* A shard's running cost; the heap orders by (cost, shard). */
typedef struct {
    unsigned long long cost;
    unsigned shard;
} bin;

static int bin_less(const bin *a, const bin *b)
{
    return a->cost < b->cost || (a->cost == b->cost && a->shard < b->shard);
}

/* Restore the min-heap below position i of h[0..n). */
static void sift_down(bin *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < n && bin_less(&h[l], &h[s]))
            s = l;
        if (r < n && bin_less(&h[r], &h[s]))
            s = r;
        if (s == i)
            return;
        bin t = h[i];
        h[i] = h[s];
        h[s] = t;
        i = s;
    }
}

/* Items by decreasing cost, ties by index (qsort_r is not C11: costs ride along). */
typedef struct {
    unsigned long long cost;
    size_t k;
} item_cost;

static int cmp_item(const void *x, const void *y)
{
    const item_cost *a = x, *b = y;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

/* Greedy longest-processing-time: m->shard_of for n shards. 0 or -1 (out of memory). */
static int plan_shards(a4w4_matrix *m, unsigned n)
{
    size_t items = a4w4_matrix_items(m);
    unsigned *of = malloc((items ? items : 1) * sizeof *of);
    item_cost *order = malloc((items ? items : 1) * sizeof *order);
    bin *h = malloc((size_t)n * sizeof *h); /* shard s at h[s-1]: already a heap */
    if (!of || !order || !h) {
        free(of);
        free(order);
        free(h);
        return -1;
    }
    for (size_t k = 0; k < items; k++)
        order[k] = (item_cost){a4w4_matrix_item_cost(m, k), k};
    qsort(order, items, sizeof *order, cmp_item);
    for (unsigned s = 0; s < n; s++)
        h[s] = (bin){0, s + 1};
    for (size_t j = 0; j < items; j++) {
        of[order[j].k] = h[0].shard;
        h[0].cost = sat_add(h[0].cost, order[j].cost);
        sift_down(h, n, 0);
    }
    free(order);
    free(h);
    free(m->shard_of);
    m->shard_of = of;
    m->shard_n = n;
    return 0;
}

int a4w4_matrix_in_shard(a4w4_matrix *m, size_t k, unsigned i, unsigned n)
{
    if (n == 0)
        return 1;
    if (m->shard_n != n && plan_shards(m, n))
        return -1;
    return k < a4w4_matrix_items(m) && m->shard_of[k] == i;
}

unsigned long long a4w4_matrix_shard_cost(a4w4_matrix *m, unsigned i, unsigned n)
{
    unsigned long long cost = 0;
    size_t items = a4w4_matrix_items(m);
    for (size_t k = 0; k < items; k++)
        if (a4w4_matrix_in_shard(m, k, i, n) == 1)
            cost = sat_add(cost, a4w4_matrix_item_cost(m, k));
    return cost;
}

/* ---- loading ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every DIR/NAME<suffix> (".safetensors", ".csv"), sorted by name. 0 or -1 (unreadable
 * directory, out of memory). */
static int list_files(const char *dir, const char *suffix, char ***out, size_t *n)
{
    DIR *dp = opendir(dir);
    size_t cap = 0, S = strlen(suffix);
    if (!dp)
        return -1;
    for (struct dirent *de; (de = readdir(dp));) {
        size_t L = strlen(de->d_name);
        if (L <= S || strcmp(de->d_name + L - S, suffix))
            continue;
        if (A4W4_GROW(*out, *n + 1, cap, 16))
            break;
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

/* 1 when path is a case file: its first line that is not a '#' comment is the case-file
 * header (io/casefile.h). A FIFO or a device is none (a4w4_fopen_regular: never blocks). */
static int is_case_file(const char *path)
{
    char err[64];
    int not_regular;
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, sizeof err);
    char line[256] = "";
    while (f && fgets(line, sizeof line, f) && line[0] == '#')
        ;
    if (f)
        fclose(f);
    return !strncmp(line, "name,M,N,K,", 11);
}

/* "--set NAME: no cases/NAME.csv (the sets here: a, b, ...)" into err. */
static void no_such_set(const char *set, const char *path, char *err, size_t errlen)
{
    char dir[4096], shown[64];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    size_t k = (size_t)snprintf(err, errlen, "--set %s: there is no %s (the sets here:",
                                a4w4_quote(set, shown, sizeof shown), path);
    char **names = NULL;
    size_t n = 0;
    if (slash && !list_files(dir, ".csv", &names, &n))
        for (size_t i = 0; i < n && k < errlen; i++) {
            const char *b = strrchr(names[i], '/') + 1;
            if (is_case_file(names[i]))
                k += (size_t)snprintf(err + k, errlen - k, " %.*s", (int)strlen(b) - 4, b);
        }
    if (k < errlen)
        snprintf(err + k, errlen - k, "; or --cases FILE)");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
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
    struct stat st;
    if (stat(m->cases_path, &st) && errno == ENOENT) {
        no_such_set(set, m->cases_path, err, errlen);
        return -1;
    }
    return 0;
}

/* Fold a bundle item into the identity hash h: its name, then its file's bytes (docs/cli/run.md,
 * "Results, resume, shards": a bundle rewritten under the same name is another matrix). A
 * file that cannot be read folds a marker instead (its item is judged bad input later). */
static unsigned long long hash_bundle(const char *name, const char *path, unsigned long long h)
{
    int ok;
    h = a4w4_hash_file(path, a4w4_hash_str(name, h), &ok);
    return ok ? h : a4w4_hash_str("\001unreadable", h);
}

int a4w4_matrix_load(a4w4_matrix *m, const char *set, const char *cases_path,
                     const char *golden_dir, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (resolve_cases(m, set, cases_path, err, errlen))
        return A4W4_MATRIX_EUSAGE;
    if (a4w4_casefile_read(m->cases_path, &m->cases, &m->ncases, err, errlen))
        return A4W4_MATRIX_ECASES;
    if (golden_dir && list_files(golden_dir, ".safetensors", &m->bundles, &m->nbundles)) {
        snprintf(err, errlen, "--golden %s: cannot read the directory (%s)", golden_dir,
                 strerror(errno)); /* list_files fails only where opendir does */
        return A4W4_MATRIX_EUSAGE;
    }
    if (golden_dir && !m->nbundles) { /* never a PASS over bundles that are not there */
        snprintf(err, errlen, "--golden %s holds no bundle (*.safetensors): nothing to verify "
                 "there; give --no-golden to verify none", golden_dir);
        return A4W4_MATRIX_EUSAGE;
    }
    int ok;
    m->hash = a4w4_hash_file(m->cases_path, 0xCBF29CE484222325ull, &ok);
    for (size_t i = 0; i < m->nbundles; i++) {
        const char *b = strrchr(m->bundles[i], '/');
        m->hash = hash_bundle(b ? b + 1 : m->bundles[i], m->bundles[i], m->hash);
    }
    return 0;
}

int a4w4_matrix_load_bundles(a4w4_matrix *m, const char *const *paths, size_t n, char *err,
                             size_t errlen)
{
    memset(m, 0, sizeof *m);
    snprintf(m->set, sizeof m->set, "bundle");
    m->hash = 0xCBF29CE484222325ull;
    if (!(m->bundles = calloc(n ? n : 1, sizeof *m->bundles))) {
        snprintf(err, errlen, "--bundle: out of memory");
        return A4W4_MATRIX_EUSAGE;
    }
    for (size_t i = 0; i < n; i++) {
        const char *b = strrchr(paths[i], '/');
        b = b ? b + 1 : paths[i];
        size_t L = strlen(b);
        if (L < 13 || strcmp(b + L - 12, ".safetensors")) {
            snprintf(err, errlen, "--bundle %s: a bundle file is NAME.safetensors", paths[i]);
            return A4W4_MATRIX_EUSAGE;
        }
        for (size_t j = 0; j < i; j++) {
            const char *o = strrchr(m->bundles[j], '/');
            if (!strcmp(o ? o + 1 : m->bundles[j], b)) {
                snprintf(err, errlen, "--bundle %s: two bundles named %s (items are named by "
                         "file name)", paths[i], b);
                return A4W4_MATRIX_EUSAGE;
            }
        }
        if (!(m->bundles[i] = strdup(paths[i]))) {
            snprintf(err, errlen, "--bundle: out of memory");
            return A4W4_MATRIX_EUSAGE;
        }
        m->nbundles++;
        m->hash = hash_bundle(b, paths[i], m->hash);
    }
    return 0;
}

/* 1 when name is one of names[0..n). */
static int wanted(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

/* Keep the paths p[0..*np) whose item name (prefix/stem) is wanted; free the others. */
static void select_paths(char **p, size_t *np, const char *prefix, const char *const *names,
                         size_t n);

/* Keep m's identity and item names as its base (once: a narrowed matrix keeps the first). 0,
 * or -1 when out of memory. */
static int keep_base(a4w4_matrix *m)
{
    if (m->base_items)
        return 0;
    size_t n = a4w4_matrix_items(m);
    if (!(m->base_items = calloc(n ? n : 1, sizeof *m->base_items)))
        return -1;
    for (size_t k = 0; k < n; k++) {
        char item[512];
        a4w4_matrix_item_name(m, k, item, sizeof item);
        if (!(m->base_items[k] = strdup(item)))
            return -1;
        m->nbase_items = k + 1;
    }
    m->base_hash = m->hash;
    return 0;
}

int a4w4_matrix_select(a4w4_matrix *m, const char *const *names, size_t n, char *err,
                       size_t errlen)
{
    if (keep_base(m)) {
        snprintf(err, errlen, "--case: out of memory");
        return A4W4_MATRIX_EUSAGE;
    }
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        char item[512];
        for (size_t k = 0; k < a4w4_matrix_items(m) && !found; k++) {
            a4w4_matrix_item_name(m, k, item, sizeof item);
            found = !strcmp(item, names[i]);
        }
        if (!found) {
            snprintf(err, errlen, "--case %s: no such item in %s (a case name, golden/<stem> or "
                     "capture/<stem>)", names[i], *m->cases_path ? m->cases_path : m->set);
            return A4W4_MATRIX_EUSAGE;
        }
        if (!wanted(names[i], names, i)) /* a name given twice selects, and is folded, once */
            m->hash = a4w4_hash_str(names[i], a4w4_hash_str("case:", m->hash));
    }
    size_t k = 0;
    for (size_t i = 0; i < m->ncases; i++)
        if (wanted(m->cases[i].name, names, n))
            m->cases[k++] = m->cases[i];
    m->ncases = k;
    select_paths(m->bundles, &m->nbundles, "golden", names, n);
    select_paths(m->captures, &m->ncaptures, "capture", names, n);
    m->shard_n = 0;
    return 0;
}

/* "<prefix>/<file name of path without .safetensors>". */
static void stem_name(const char *prefix, const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, len, "%s/%.*s", prefix, (int)(strlen(b) - 12), b);
}

static void select_paths(char **p, size_t *np, const char *prefix, const char *const *names,
                         size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < *np; i++) {
        char item[512];
        stem_name(prefix, p[i], item, sizeof item);
        if (wanted(item, names, n))
            p[k++] = p[i];
        else
            free(p[i]);
    }
    *np = k;
}

void a4w4_matrix_bundle_name(const a4w4_matrix *m, size_t i, char *buf, size_t len)
{
    stem_name("golden", m->bundles[i], buf, len);
}

/* Append path to (*out)[*n] (capacity *cap). 0 or -1 (out of memory). */
static int push_path(char ***out, size_t *n, size_t *cap, const char *dir, const char *name)
{
    if (A4W4_GROW(*out, *n + 1, *cap, 16))
        return -1;
    size_t len = strlen(dir) + strlen(name) + 2;
    if (!((*out)[*n] = malloc(len)))
        return -1;
    snprintf((*out)[*n], len, "%s/%s", dir, name);
    (*n)++;
    return 0;
}

/* Every *.safetensors under dir, subdirectories included (not followed through symbolic
 * links, at most depth levels), appended to m->captures. 0, or -1 with err (a directory that
 * cannot be read, a name holding a control byte, out of memory). */
static int list_captures(a4w4_matrix *m, const char *dir, int depth, size_t *cap, char *err,
                         size_t errlen)
{
    DIR *dp = opendir(dir);
    int rc = 0;
    if (!dp) {
        snprintf(err, errlen, "--captures %s: cannot read the directory (%s)", dir,
                 strerror(errno));
        return -1;
    }
    for (struct dirent *de; !rc && (de = readdir(dp));) {
        const char *nm = de->d_name;
        size_t L = strlen(nm);
        char path[4096], shown[300];
        struct stat st;
        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, nm) >= (int)sizeof path ||
            lstat(path, &st) != 0)
            continue;
        int bundle = L > 12 && !strcmp(nm + L - 12, ".safetensors");
        if ((bundle || S_ISDIR(st.st_mode)) && strcmp(a4w4_quote(nm, shown, sizeof shown), nm)) {
            snprintf(err, errlen, "--captures: %s/%s: a name holding a control byte (rename it: "
                     "it would reach the reports)", dir, shown);
            rc = -1;
        } else if (S_ISDIR(st.st_mode) && depth > 0)
            rc = list_captures(m, path, depth - 1, cap, err, errlen);
        else if (bundle && push_path(&m->captures, &m->ncaptures, cap, dir, nm)) {
            snprintf(err, errlen, "--captures %s: out of memory", dir);
            rc = -1;
        }
    }
    closedir(dp);
    return rc;
}

int a4w4_matrix_add_captures(a4w4_matrix *m, const char *dir, char *err, size_t errlen)
{
    size_t cap = 0;
    if (!(m->captures_dir = strdup(dir)) || list_captures(m, dir, 16, &cap, err, errlen)) {
        if (!m->captures_dir)
            snprintf(err, errlen, "--captures %s: out of memory", dir);
        return A4W4_MATRIX_EUSAGE;
    }
    if (m->ncaptures)
        qsort(m->captures, m->ncaptures, sizeof *m->captures, cmp_str);
    m->shard_n = 0; /* more items: a shard plan made before is stale */
    size_t k0 = m->ncases + m->nbundles, n = a4w4_matrix_items(m) - k0;
    for (size_t i = 0; i < n; i++) {
        char name[512];
        a4w4_matrix_item_name(m, k0 + i, name, sizeof name);
        m->hash = m->ncaptures ? hash_bundle(name, m->captures[i], m->hash)
                               : a4w4_hash_str(name, m->hash);
    }
    return 0;
}

size_t a4w4_matrix_items(const a4w4_matrix *m)
{
    size_t captures = m->ncaptures ? m->ncaptures : m->captures_dir ? 1 : 0;
    return m->ncases + m->nbundles + captures;
}

void a4w4_matrix_item_name(const a4w4_matrix *m, size_t k, char *buf, size_t len)
{
    if (k < m->ncases)
        snprintf(buf, len, "%s", m->cases[k].name);
    else if (k < m->ncases + m->nbundles)
        a4w4_matrix_bundle_name(m, k - m->ncases, buf, len);
    else if (!m->ncaptures)
        snprintf(buf, len, "%s", A4W4_CAPTURES_NONE);
    else { /* "capture/<path under DIR without .safetensors>" */
        const char *p = m->captures[k - m->ncases - m->nbundles] + strlen(m->captures_dir) + 1;
        snprintf(buf, len, "capture/%.*s", (int)(strlen(p) - 12), p);
    }
}

void a4w4_matrix_free(a4w4_matrix *m)
{
    for (size_t i = 0; i < m->nbundles; i++)
        free(m->bundles[i]);
    free(m->bundles);
    for (size_t i = 0; i < m->ncaptures; i++)
        free(m->captures[i]);
    free(m->captures);
    free(m->captures_dir);
    for (size_t i = 0; i < m->nbase_items; i++)
        free(m->base_items[i]);
    free(m->base_items);
    free(m->cases);
    free(m->shard_of);
    memset(m, 0, sizeof *m);
}
