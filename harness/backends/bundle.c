/* bundle.c — the "bundle" backend type (`--backend bundle:DIR`): outputs produced
 * elsewhere (another machine, another tool) and stored one safetensors file per case, compared
 * like any backend's. Directory layout, file names and the contract rule: backend_bundle.h. */
#include "bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "a4w4_formats.h"
#include "a4w4_tree.h"
#include "fsutil.h"
#include "registry.h"
#include "safetensors.h"

#define CONTRACT_FILE "contract.txt"
#define CONTRACT_RULE                                                                        \
    "ordered(S) or bounded(S) with S in 1..65536, exact, bounded, or tree(key=value,...) "   \
    "(contracts §4.2)"
#define MANIFEST_FILE "manifest.json"

int a4w4_contract_valid(const char *s)
{
    a4w4_contract c;
    return s && a4w4_contract_parse(s, &c, NULL, 0) == A4W4_OK;
}

/* 1 when contracts a and b name the same contract: the same canonical text (plain "bounded"
 * is "bounded(1)", contracts §4.1; a tree's keys in any order, contracts §4.2). */
static int same_contract(const char *a, const char *b)
{
    a4w4_contract ca, cb;
    return !a4w4_contract_parse(a, &ca, NULL, 0) && !a4w4_contract_parse(b, &cb, NULL, 0) &&
           a4w4_contract_same(&ca, &cb);
}

int a4w4_bundle_file_name(const char *case_name, char *buf, size_t len)
{
    if (!case_name || !*case_name || !len)
        return -1;
    size_t o = 0;
    for (const char *p = case_name; *p; p++) {
        const char *piece = *p == '/' ? "__" : NULL;
        size_t n = piece ? 2 : 1;
        if (o + n >= len)
            return -1;
        if (piece)
            memcpy(buf + o, piece, 2);
        else
            buf[o] = *p;
        o += n;
    }
    static const char ext[] = ".safetensors";
    if (o + sizeof ext > len)
        return -1;
    memcpy(buf + o, ext, sizeof ext);
    return 0;
}

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
    a4w4_st_tensor_in t = {"y", A4W4_ST_BF16, 2, {M, N}, y, M * N * 2};
    return a4w4_st_write(path, &t, 1, keys, vals, 4, err, errlen);
}

typedef struct {
    char *dir;
    char contract[A4W4_CONTRACT_MAX];
    char hash[40], version[40]; /* manifest.json's matrix_hash, tool_version ("" none) */
} bundle_ctx;

/* DIR/manifest.json's text (malloc'ed) or NULL: absent (*err empty) or unreadable (err). */
static char *read_text(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    err[0] = 0;
    if (!f) {
        if (errno != ENOENT)
            snprintf(err, errlen, "bundle %s: cannot read (%s)", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (size_t got = 1; got;) {
        if (n + 4096 + 1 > cap) {
            char *p = realloc(buf, cap = cap ? 2 * cap : 8192);
            if (!p || cap > (64u << 20)) {
                snprintf(err, errlen, "bundle %s: too large or out of memory", path);
                free(p ? p : buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        got = fread(buf + n, 1, 4096, f);
        n += got;
    }
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* A manifest string field into out ("" when absent); -1 when present but not a short string. */
static int manifest_str(const cJSON *m, const char *key, char *out, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
    out[0] = 0;
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
        return -1;
    snprintf(out, len, "%s", v->valuestring);
    return 0;
}

/* Read DIR/manifest.json when present (python -m a4w4check.external writes it): its format must
 * be a4w4-outputs/1; contract (valid), matrix_hash and tool_version go to c. 0 (absent or
 * read) or -1 with err naming the file and the rule. */
static int read_manifest(const char *dir, bundle_ctx *c, char *err, size_t errlen)
{
    char path[4096], fmt[32], contract[A4W4_CONTRACT_MAX];
    snprintf(path, sizeof path, "%s/" MANIFEST_FILE, dir);
    char *text = read_text(path, err, errlen);
    if (!text)
        return err[0] ? -1 : 0;
    cJSON *m = cJSON_Parse(text);
    free(text);
    int bad = !cJSON_IsObject(m) || manifest_str(m, "format", fmt, sizeof fmt) ||
              strcmp(fmt, A4W4_BUNDLE_OUTPUTS_FORMAT) ||
              manifest_str(m, "contract", contract, sizeof contract) ||
              (contract[0] && !a4w4_contract_valid(contract)) ||
              manifest_str(m, "matrix_hash", c->hash, sizeof c->hash) ||
              manifest_str(m, "tool_version", c->version, sizeof c->version);
    cJSON_Delete(m);
    if (bad) {
        snprintf(err, errlen, "bundle %s: must be a JSON object with format \"%s\", a contract "
                 "(" CONTRACT_RULE ") and string matrix_hash and tool_version", path,
                 A4W4_BUNDLE_OUTPUTS_FORMAT);
        return -1;
    }
    if (contract[0])
        snprintf(c->contract, sizeof c->contract, "%s", contract);
    return 0;
}

/* Read DIR/contract.txt into contract: 0 (absent leaves contract as is) or -1 with err. */
static int read_contract(const char *dir, char *contract, size_t contract_len, char *err,
                         size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" CONTRACT_FILE, dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "bundle %s: cannot read (%s)", path, strerror(errno));
        return -1;
    }
    char buf[A4W4_CONTRACT_MAX + 64];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int more = !feof(f) && fgetc(f) != EOF;
    fclose(f);
    buf[n] = '\0';
    size_t b = 0, e = n;
    while (b < e && strchr(" \t\r\n", buf[b]))
        b++;
    while (e > b && strchr(" \t\r\n", buf[e - 1]))
        e--;
    buf[e] = '\0';
    const char *s = buf + b;
    if (more || strlen(s) != e - b || strpbrk(s, "\r\n") || !a4w4_contract_valid(s) ||
        strlen(s) >= contract_len) {
        char shown[48];
        snprintf(shown, sizeof shown, "%.40s", s);
        size_t cut = strcspn(shown, "\r\n"); /* the message stays one line */
        int lines = shown[cut] != '\0' || more;
        shown[cut] = '\0';
        for (char *p = shown; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7F)
                *p = '?';
        snprintf(err, errlen, "bundle %s: '%s'%s is not one contract line (" CONTRACT_RULE ")",
                 path, shown, lines ? " (and more lines)" : "");
        return -1;
    }
    snprintf(contract, contract_len, "%s", s);
    return 0;
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
    bundle_ctx *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(arg))) {
        free(c);
        snprintf(err, errlen, "bundle %s: out of memory", arg);
        return -1;
    }
    snprintf(c->contract, sizeof c->contract, "ordered(1)");
    if (read_contract(arg, c->contract, sizeof c->contract, err, errlen) ||
        read_manifest(arg, c, err, errlen)) {
        free(c->dir);
        free(c);
        return -1;
    }
    snprintf(contract, contract_len, "%s", c->contract);
    *asm_layout = 0; /* stored outputs do not change with the pad fills */
    *ctx = c;
    return 0;
}

/* 1 when the file's metadata names another seed, matrix hash or tool version than the case
 * and the run (why says which); absent keys are not checked. */
static int identity_differs(const a4w4_st_file *f, const a4w4_run_args *a, const char *path)
{
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->c->seed);
    const char *keys[3] = {"seed", "matrix_hash", "tool_version"};
    const char *want[3] = {seed, a->id ? a->id->matrix_hash : NULL,
                           a->id ? a->id->tool_version : NULL};
    for (int i = 0; i < 3; i++) {
        const char *v = a4w4_st_meta(f, keys[i]);
        if (v && want[i] && strcmp(v, want[i])) {
            snprintf(a->why, a->whylen, "%s: metadata %s '%.40s', the run's is '%s' (outputs of "
                     "other operands)", path, keys[i], v, want[i]);
            return 1;
        }
    }
    return 0;
}

static int bundle_run(void *vctx, const a4w4_run_args *a)
{
    const bundle_ctx *c = vctx;
    const a4w4_case_data *d = a->d;
    char fname[512], path[4096];
    if (a4w4_bundle_file_name(a->c->name, fname, sizeof fname) ||
        snprintf(path, sizeof path, "%s/%s", c->dir, fname) >= (int)sizeof path) {
        snprintf(a->why, a->whylen, "bundle %s: case name '%s' gives no usable file name",
                 c->dir, a->c->name);
        return A4W4_EINVAL;
    }
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        snprintf(a->why, a->whylen, "no output file %s", path);
        return A4W4_RUN_SKIP;
    }
    if (a->id && c->hash[0] && strcmp(c->hash, a->id->matrix_hash)) {
        snprintf(a->why, a->whylen, "%s/" MANIFEST_FILE ": matrix_hash %s, this run's matrix is "
                 "%s (outputs of other operands)", c->dir, c->hash, a->id->matrix_hash);
        return A4W4_RUN_REFUSED;
    }
    a4w4_st_file f;
    if (a4w4_st_load(path, &f, a->why, a->whylen))
        return A4W4_EINVAL; /* why: "<path>: <rule>" */
    int rc = A4W4_EINVAL;
    const a4w4_st_tensor *t = a4w4_st_find(&f, "y");
    const char *mc = a4w4_st_meta(&f, "contract");
    if (!t)
        snprintf(a->why, a->whylen, "%s: no tensor 'y' (an output bundle holds y, BF16 [M, N])",
                 path);
    else if (t->dtype != A4W4_ST_BF16)
        snprintf(a->why, a->whylen, "%s: tensor y is %s, an output bundle's y is BF16", path,
                 a4w4_st_dtype_name(t->dtype));
    else if (t->ndim != 2 || t->shape[0] != d->M || t->shape[1] != d->N)
        snprintf(a->why, a->whylen, "%s: tensor y has %d dims [%zu, %zu%s], the case needs "
                 "[M, N] = [%zu, %zu]", path, t->ndim, t->ndim > 0 ? t->shape[0] : 0,
                 t->ndim > 1 ? t->shape[1] : 0, t->ndim > 2 ? ", ..." : "", d->M, d->N);
    else if (identity_differs(&f, a, path))
        rc = A4W4_RUN_REFUSED;
    else if (mc && !same_contract(mc, c->contract))
        snprintf(a->why, a->whylen, "%s: metadata contract '%s' disagrees with the directory's "
                 "'%s' (%s/" CONTRACT_FILE ", default ordered(1))", path, mc, c->contract,
                 c->dir);
    else {
        const a4w4_sample *s = a->s;
        int all_r = s->full || !s->rows, all_c = s->full || !s->cols;
        size_t nr = all_r ? d->M : s->nrows, nc = all_c ? d->N : s->ncols;
        for (size_t i = 0; i < nr; i++) {
            size_t r = all_r ? i : s->rows[i];
            const uint8_t *row = t->data + r * d->N * 2;
            for (size_t j = 0; j < nc; j++) {
                const uint8_t *p = row + (all_c ? j : s->cols[j]) * 2;
                a->y[i * nc + j] = (uint16_t)(p[0] | (p[1] << 8));
            }
        }
        rc = A4W4_OK;
    }
    a4w4_st_free(&f);
    return rc;
}

static void bundle_release(void *vctx)
{
    bundle_ctx *c = vctx;
    if (c)
        free(c->dir);
    free(c);
}

const a4w4_backend_type a4w4_backend_bundle = {
    .name = "bundle",
    .what = "outputs produced elsewhere, read from DIR/<case>.safetensors (tensor y, BF16 [M, N])",
    .contract = "ordered(1)",
    .needs_arg = 1,
    .full_outputs = 1,
    .thread_safe = 1, /* each run reads its own file; the context is read-only */
    .prepare = bundle_prepare,
    .run = bundle_run,
    .release = bundle_release};
