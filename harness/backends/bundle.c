/* bundle.c — the "bundle" backend type (`--backend bundle:DIR`): outputs produced
 * elsewhere (another machine, another tool) and stored one safetensors file per case, compared
 * like any backend's. Directory layout, file names and the contract rule: backend_bundle.h. */
#include "bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "a4w4_formats.h"
#include "fsutil.h"
#include "registry.h"
#include "safetensors.h"

#define CONTRACT_FILE "contract.txt"
#define CONTRACT_RULE "ordered(1), ordered(S) with S in 1..65536, exact, bounded"

int a4w4_contract_valid(const char *s)
{
    if (!strcmp(s, "exact") || !strcmp(s, "bounded"))
        return 1;
    if (strncmp(s, "ordered(", 8))
        return 0;
    const char *p = s + 8;
    if (*p < '1' || *p > '9')
        return 0;
    unsigned long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > 65536)
            return 0;
    }
    return p[0] == ')' && p[1] == '\0';
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
    char contract[32];
} bundle_ctx;

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
    char buf[128];
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
    snprintf(contract, contract_len, "ordered(1)");
    if (read_contract(arg, contract, contract_len, err, errlen))
        return -1;
    bundle_ctx *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(arg))) {
        free(c);
        snprintf(err, errlen, "bundle %s: out of memory", arg);
        return -1;
    }
    snprintf(c->contract, sizeof c->contract, "%s", contract);
    *asm_layout = 0; /* stored outputs do not change with the pad fills */
    *ctx = c;
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
        snprintf(a->why, a->whylen, "no bundle %s", path);
        return A4W4_EUNSUPPORTED;
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
    else if (mc && strcmp(mc, c->contract))
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
    .thread_safe = 1, /* each run reads its own file; the context is read-only */
    .prepare = bundle_prepare,
    .run = bundle_run,
    .release = bundle_release};
