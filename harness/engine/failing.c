/* failing.c — failing entries saved with their operands, and their re-check (failing.h). */
#include "failing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_atomic.h"
#include "a4w4_bound.h"
#include "a4w4_formats.h"
#include "a4w4_gemm.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "check.h"
#include "export.h"
#include "fsutil.h"
#include "grow.h"

/* The item's backend part: one selected as TYPE:PATH by TYPE_<file name>, characters outside
 * [A-Za-z0-9._-] as '_'. */
static void backend_part(const char *backend, char *b, size_t len)
{
    /* a backend selected as TYPE:PATH (a library, a directory) by its type and file name */
    const char *colon = strchr(backend, ':'), *slash = strrchr(backend, '/');
    if (colon && slash > colon && slash[1])
        snprintf(b, len, "%.*s_%s", (int)(colon - backend), backend, slash + 1);
    else
        snprintf(b, len, "%s", backend);
    for (char *p = b; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-' || *p == '_'))
            *p = '_';
}

int a4w4_failing_names_collide(const char *a, const char *b)
{
    char pa[200], pb[200];
    backend_part(a, pa, sizeof pa);
    backend_part(b, pb, sizeof pb);
    return strcmp(a, b) != 0 && strcmp(pa, pb) == 0;
}

void a4w4_failing_name(const char *case_name, const char *backend, int qualify, char *buf,
                       size_t len)
{
    char b[200];
    backend_part(backend, b, sizeof b);
    uint32_t h = 2166136261u; /* FNV-1a of the whole backend spec: its path tells them apart */
    for (const char *p = backend; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    if (qualify)
        snprintf(buf, len, "%s@%s-%08x", case_name, b, (unsigned)h);
    else
        snprintf(buf, len, "%s@%s", case_name, b);
}

int a4w4_ranges_format(const size_t *idx, size_t n, int full, char *buf, size_t len)
{
    if (!len)
        return -1;
    buf[0] = 0;
    if (full)
        return snprintf(buf, len, "all") < (int)len ? 0 : -1;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && idx[j + 1] == idx[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + k, len - k, "%s%zu-%zu", k ? "," : "", idx[i], idx[j])
                      : snprintf(buf + k, len - k, "%s%zu", k ? "," : "", idx[i]);
        if (w < 0 || (size_t)w >= len - k)
            return -1;
        k += (size_t)w;
        i = j + 1;
    }
    return 0;
}

/* A decimal at *p (advanced past it); -1 when none. */
static long long parse_index(const char **p)
{
    if (**p < '0' || **p > '9')
        return -1;
    char *end;
    unsigned long long v = strtoull(*p, &end, 10);
    *p = end;
    return v > (1ull << 40) ? -1 : (long long)v;
}

int a4w4_ranges_parse(const char *text, size_t limit, size_t **idx, size_t *n)
{
    *idx = NULL;
    *n = 0;
    int all = !strcmp(text, "all");
    size_t cap = 0, k = 0;
    size_t *v = NULL;
    if (all && A4W4_GROW(v, limit, cap, 1))
        return -1;
    for (const char *p = text; all ? k < limit : *p;) {
        if (all) {
            v[k] = k;
            k++;
            continue;
        }
        long long a = parse_index(&p), b = a;
        if (a >= 0 && *p == '-') {
            p++;
            b = parse_index(&p);
        }
        if (a < 0 || b < a || (size_t)b >= limit || (k && (size_t)a <= v[k - 1]) ||
            (*p && *p != ',') || (*p == ',' && !p[1]))
            goto bad;
        p += *p == ',';
        for (long long x = a; x <= b; x++) {
            if (A4W4_GROW(v, k + 1, cap, 16))
                goto bad;
            v[k++] = (size_t)x;
        }
    }
    if (!k)
        goto bad;
    *idx = v;
    *n = k;
    return 0;
bad:
    free(v);
    return -1;
}

/* The metadata and extra tensors of a failing entry, then the operand bundle's write. */
static a4w4_hstatus save_bundle(const a4w4_failing *f, const a4w4_case_data *d,
                                const char *dir, const char *name, char *err, size_t errlen)
{
    const a4w4_sample *s = f->s;
    size_t nr = s->nrows, nc = s->ncols;
    char *rows = malloc(16 * nr + 8), *cols = malloc(16 * nc + 8), mism[32];
    a4w4_hstatus rc = A4W4_ST_NOMEM;
    if (!rows || !cols ||
        a4w4_ranges_format(s->rows, nr, s->full, rows, 16 * nr + 8) ||
        a4w4_ranges_format(s->cols, nc, s->full, cols, 16 * nc + 8)) {
        snprintf(err, errlen, "%s: out of memory recording the failing outputs", name);
        goto out;
    }
    snprintf(mism, sizeof mism, "%zu", f->mismatches);
    const char *keys[] = {"backend", "contract", "rows", "cols", "mismatches", "variant",
                          "signature", "repro"};
    const char *vals[] = {f->backend, f->contract, rows, cols, mism,
                          f->variant ? f->variant : "", f->signature ? f->signature : "",
                          f->repro ? f->repro : ""};
    a4w4_st_tensor_in t[2] = {
        {"y_got", A4W4_DT_BF16, 2, {nr, nc}, f->got, nr * nc * 2},
        {"y_expected", A4W4_DT_BF16, 2, {nr, nc}, f->expected, nr * nc * 2}};
    a4w4_export_extra x = {t, 2, keys, vals, 8};
    a4w4_export_opts o = {f->id && f->id->matrix_hash ? f->id->matrix_hash : "",
                          f->id && f->id->tool_version ? f->id->tool_version : "",
                          s->full};
    rc = a4w4_export_case_data(name, f->c, d, &o, &x, dir, NULL, err, errlen) ? A4W4_ST_IO
                                                                              : A4W4_ST_OK;
out:
    free(rows);
    free(cols);
    return rc;
}

a4w4_hstatus a4w4_failing_save(const a4w4_failing *f, const char *dir, char *name,
                               size_t namelen, char *err, size_t errlen)
{
    char item[512];
    a4w4_failing_name(f->c->name, f->backend, f->qualify, item, sizeof item);
    if (name)
        snprintf(name, namelen, "%s", item);
    a4w4_hstatus rc = a4w4_mkdir_p(dir, err, errlen);
    if (rc)
        return rc;
    if (f->s->full) /* every row is there already */
        return save_bundle(f, f->d, dir, item, err, errlen);
    a4w4_sample full = {.full = 1};
    a4w4_case_data d;
    if (a4w4_case_generate(f->c, &full, &d) != A4W4_OK) {
        snprintf(err, errlen, "%s: out of memory generating every row of the operands", item);
        return A4W4_ST_NOMEM;
    }
    rc = save_bundle(f, &d, dir, item, err, errlen);
    a4w4_case_data_free(&d);
    return rc;
}

/* ---- the re-check ------------------------------------------------------------------------ */

/* The checked outputs of a recorded failure and its contract. */
typedef struct {
    size_t *rows, nr, *cols, nc;
    a4w4_contract c; /* exact, ordered(S), bounded(S) or tree(...) (contracts §4.1, §4.2) */
} recorded;

/* The recorded contract text into r->c: one contract that applies to K. 0, or -1. */
static int parse_contract(const char *text, size_t K, recorded *r)
{
    char err[256];
    if (a4w4_contract_parse(text, &r->c, err, sizeof err) != A4W4_OK)
        return -1;
    return r->c.kind == A4W4_CONTRACT_TREE && a4w4_tree_check(&r->c.tree, K, err, sizeof err)
               ? -1
               : 0;
}

/* The oracle's bits at output (m, n): ordered(S), the tree's, atomic(S)'s split-order result
 * or the exact value; *e the exact fp32 and *B the bounded(S) bound when r is bounded, or for
 * atomic(S) 1 when got is no order's result. */
static uint16_t oracle_at(const recorded *r, const a4w4_dot_operands *op, uint16_t got, float *e,
                          double *B)
{
    uint16_t bits;
    a4w4_dot_exact(op, &bits, e);
    if (r->c.kind == A4W4_CONTRACT_ORDERED)
        bits = a4w4_f32_to_bf16(a4w4_dot_ordered(op, r->c.split));
    if (r->c.kind == A4W4_CONTRACT_TREE)
        a4w4_dot_tree(op, &r->c.tree, &bits, NULL); /* checked for K by parse_contract */
    if (r->c.kind == A4W4_CONTRACT_BOUNDED)
        *B = a4w4_dot_bounded_bound(op, r->c.split);
    if (r->c.kind == A4W4_CONTRACT_ATOMIC) { /* the split-order member; *B 1 when got is in
                                              * no order's result (contracts §4.1) */
        uint16_t q[A4W4_ATOMIC_SPLIT_MAX];
        unsigned n = a4w4_dot_atomic_splits(op, r->c.split, q);
        bits = a4w4_atomic_fold(q, NULL, n);
        *B = !a4w4_atomic_member(q, n, got);
    }
    return bits;
}

/* Copy of a BF16 tensor [nr, nc] (the file's data need not be aligned), or NULL. */
static uint16_t *bf16_copy(const a4w4_st_file *f, const char *name, size_t nr, size_t nc)
{
    const a4w4_st_tensor *t = a4w4_st_find(f, name);
    if (!t || t->dtype != A4W4_DT_BF16 || t->ndim != 2 || t->shape[0] != nr || t->shape[1] != nc)
        return NULL;
    uint16_t *v = malloc(nr * nc * 2 + 2);
    if (v)
        memcpy(v, t->data, nr * nc * 2);
    return v;
}

/* The recorded got against the oracle: bit for bit, or within the bound. */
static void check_got(a4w4_check *c, const char *subject, const recorded *r,
                      const uint16_t *got, const uint16_t *exp, const float *ef,
                      const double *B)
{
    size_t n = r->nr * r->nc;
    a4w4_check_bf16(c, subject, got, exp, r->nr, r->nc);
    const int atomic = r->c.kind == A4W4_CONTRACT_ATOMIC;
    if (r->c.kind != A4W4_CONTRACT_BOUNDED && !atomic)
        return;
    size_t bad = 0, first = n;
    for (size_t k = 0; k < n; k++) {
        double tol;
        if ((atomic ? B[k] != 0 : a4w4_bounded_use(got[k], ef[k], B[k], &tol) > 1.0) && !bad++)
            first = k;
    }
    c->mismatches = bad;
    c->verdict = bad ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (bad) {
        c->first_row = first / r->nc;
        c->first_col = first % r->nc;
        c->got = got[first];
        c->expected = exp[first];
    }
}

/* Both checks of a recorded failure; -1 when out of memory. */
static int recorded_checks(const recorded *r, const a4w4_dot_operands *base, size_t K,
                           const uint16_t *got, const uint16_t *yexp, const char *what,
                           a4w4_check_list *out, int *fails)
{
    size_t n = r->nr * r->nc, nb = K / 32;
    uint16_t *exp = malloc(n * 2 + 2);
    float *ef = malloc(n * 4 + 4);
    double *B = malloc(n * 8 + 8);
    a4w4_check *c1 = exp && ef && B ? a4w4_check_list_add(out) : NULL;
    a4w4_check *c2 = c1 ? a4w4_check_list_add(out) : NULL;
    if (!c2) {
        free(exp), free(ef), free(B);
        return -1;
    }
    c1 = c2 - 1;
    for (size_t i = 0; i < r->nr; i++)
        for (size_t j = 0; j < r->nc; j++) {
            size_t m = r->rows[i], nn = r->cols[j], k = i * r->nc + j;
            a4w4_dot_operands op = {base->a_fp4 + m * K / 2, base->a_scale + m * nb,
                                    base->w_fp4 + nn * K / 2, base->w_scale + nn * nb, K};
            B[k] = 0;
            exp[k] = oracle_at(r, &op, got[k], &ef[k], &B[k]);
        }
    a4w4_check_bf16(c1, A4W4_RECORDED_SUBJECT "y_expected (the contract's oracle)", yexp, exp,
                    r->nr, r->nc);
    check_got(c2, A4W4_RECORDED_SUBJECT "y_got", r, got, exp, ef, B);
    for (a4w4_check *c = c1; c <= c2; c++) { /* the outputs' own coordinates; whose */
        if (c->mismatches) {
            c->first_row = r->rows[c->first_row];
            c->first_col = r->cols[c->first_col];
        }
        snprintf(c->note, sizeof c->note, "%s", what);
    }
    *fails += (c1->verdict == A4W4_CHECK_FAIL) + (c2->verdict == A4W4_CHECK_FAIL);
    free(exp), free(ef), free(B);
    return 0;
}

a4w4_hstatus a4w4_verify_recorded(const a4w4_st_file *f, const char *path, const uint8_t *a,
                                  const uint8_t *as, const uint8_t *w, const uint8_t *ws,
                                  size_t M, size_t N, size_t K, a4w4_check_list *out,
                                  int *fails, char *err, size_t errlen)
{
    if (!a4w4_st_find(f, "y_got"))
        return A4W4_ST_OK;
    recorded r = {0};
    const char *contract = a4w4_st_meta(f, "contract"), *backend = a4w4_st_meta(f, "backend");
    const char *rows = a4w4_st_meta(f, "rows"), *cols = a4w4_st_meta(f, "cols");
    uint16_t *got = NULL, *yexp = NULL;
    a4w4_hstatus rc = A4W4_ST_BADINPUT;
    if (!contract || parse_contract(contract, K, &r))
        snprintf(err, errlen, "%s: a recorded y_got needs metadata contract exact, ordered(S), "
                 "bounded(S), atomic(S) or a tree(...) that applies to K=%zu (contracts §4.1, "
                 "§4.2)", path, K);
    else if (!rows || !cols || a4w4_ranges_parse(rows, M, &r.rows, &r.nr) ||
             a4w4_ranges_parse(cols, N, &r.cols, &r.nc))
        snprintf(err, errlen, "%s: metadata rows and cols must be \"all\" or ascending ranges "
                 "\"0-3,15\" below M=%zu and N=%zu", path, M, N);
    else if (!(got = bf16_copy(f, "y_got", r.nr, r.nc)) ||
             !(yexp = bf16_copy(f, "y_expected", r.nr, r.nc)))
        snprintf(err, errlen, "%s: y_got and y_expected must be BF16 [%zu, %zu] (the rows and "
                 "cols recorded)", path, r.nr, r.nc);
    else {
        char what[160];
        const char *variant = a4w4_st_meta(f, "variant");
        snprintf(what, sizeof what, "%s, %s%s%s", backend ? backend : "?", contract,
                 variant && *variant ? ", " : "", variant && *variant ? variant : "");
        a4w4_dot_operands base = {a, as, w, ws, K};
        rc = recorded_checks(&r, &base, K, got, yexp, what, out, fails) ? A4W4_ST_NOMEM
                                                                          : A4W4_ST_OK;
        if (rc)
            snprintf(err, errlen, "%s: out of memory", path);
    }
    free(r.rows), free(r.cols), free(got), free(yexp);
    return rc;
}
