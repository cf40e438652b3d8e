/* a4w4_dispatch_tables.c — the tables of AITER's gemm_a4w4 routing (contracts §5): the tuned
 * table (a4w4_blockscale_tuned_gemm.csv, merged from one or more files) and the ASM kernel
 * table (<arch>_f4gemm_bf16_per1x32Fp4.csv), read through a4w4_csv. Prints nothing; errors go
 * into the caller's buffer. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_csv.h"
#include "a4w4_dispatch.h"
#include "a4w4_dispatch_internal.h"
#include "a4w4_quote.h"

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Read path and check it has a header: "empty table (no header, no rows)" otherwise. */
static int read_table(const char *path, a4w4_csv_doc *d, char *err, size_t errlen)
{
    int st = a4w4_csv_read(path, d, err, errlen);
    if (st)
        return st;
    if (d->n == 0) {
        a4w4_csv_doc_free(d);
        return errf(err, errlen, A4W4_EINVAL, "%s: empty table (no header, no rows)", path);
    }
    return A4W4_OK;
}

/* ---- tuned table ---------------------------------------------------------------------- */

/* Column indices of a tuned table: the required ones in TUNED_REQUIRED order, then the
 * optional ones (-1 when absent). */
enum { C_CU, C_M, C_N, C_K, C_SPLITK, C_NAME, C_NREQ };
static const char *const TUNED_REQUIRED[C_NREQ] = {"cu_num", "M", "N", "K", "splitK",
                                                   "kernelName"};
typedef struct {
    int req[C_NREQ];
    int gfx, id, us, tf, bw, er;
} tuned_cols;

static int tuned_key_cmp(const a4w4_tuned_row *a, const a4w4_tuned_row *b)
{
    int c = strcmp(a->gfx, b->gfx);
    if (c)
        return c;
    if (a->cu_num != b->cu_num)
        return a->cu_num < b->cu_num ? -1 : 1;
    if (a->M != b->M)
        return a->M < b->M ? -1 : 1;
    if (a->N != b->N)
        return a->N < b->N ? -1 : 1;
    if (a->K != b->K)
        return a->K < b->K ? -1 : 1;
    return 0;
}

/* Key, then load order (file, line): ties never remain, so qsort's result is unique. */
static int tuned_sort_cmp(const void *pa, const void *pb)
{
    const a4w4_tuned_row *a = pa, *b = pb;
    int c = tuned_key_cmp(a, b);
    if (c)
        return c;
    if (a->file_index != b->file_index)
        return a->file_index < b->file_index ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static int tuned_rows_equal(const a4w4_tuned_row *a, const a4w4_tuned_row *b)
{
    return !tuned_key_cmp(a, b) && a->kernel_id == b->kernel_id && a->split_k == b->split_k &&
           !strcmp(a->kernel_name, b->kernel_name) && !strcmp(a->us, b->us) &&
           !strcmp(a->tflops, b->tflops) && !strcmp(a->bw, b->bw) &&
           !strcmp(a->err_ratio, b->err_ratio);
}

static void tuned_row_free(a4w4_tuned_row *r)
{
    free(r->gfx);
    free(r->kernel_name);
    free(r->us);
    free(r->tflops);
    free(r->bw);
    free(r->err_ratio);
}

void a4w4_tuned_free(a4w4_tuned_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        tuned_row_free(&t->rows[i]);
    free(t->rows);
    for (int i = 0; i < t->loaded; i++)
        free(t->files[i]);
    free(t->files);
    memset(t, 0, sizeof *t);
}

static char *opt_text(const a4w4_csv_record *r, int col)
{
    return dupstr(col >= 0 ? r->f[col].text : "");
}

/* Read a tuned table file and check its header against t (required columns, one schema
 * with the files merged before) and its rows' presence and width. Frees d on failure. */
static int tuned_open(const a4w4_tuned_table *t, const char *path, a4w4_csv_doc *d,
                      tuned_cols *c, char *err, size_t errlen)
{
    int st = read_table(path, d, err, errlen);
    if (st)
        return st;
    const a4w4_csv_record *h = &d->r[0];
    const int hline = h->line;
    if ((st = a4w4_csv_required_cols(
             path, d, TUNED_REQUIRED, C_NREQ,
             "a tuned table needs cu_num, M, N, K, splitK, kernelName; contracts §5.1", c->req,
             err, errlen)))
        return st;
    c->gfx = a4w4_csv_header_col(h, "gfx");
    c->id = a4w4_csv_header_col(h, "kernelId");
    c->us = a4w4_csv_header_col(h, "us");
    c->tf = a4w4_csv_header_col(h, "tflops");
    c->bw = a4w4_csv_header_col(h, "bw");
    c->er = a4w4_csv_header_col(h, "errRatio");
    if (t->loaded && (c->gfx >= 0) != t->has_gfx) {
        a4w4_csv_doc_free(d);
        return errf(err, errlen, A4W4_EINVAL,
                    "%s:%d:1: schema differs from %s (one has a gfx column, the other not); "
                    "merged tuned tables must share one key",
                    path, hline, t->files[0]);
    }
    return a4w4_csv_rows_present(path, d, "empty table (header only, no rows)", err, errlen);
}

/* One data record into *row (file, file_index and line set by the caller). On error nothing
 * is left allocated in *row. */
static int tuned_parse_row(const char *path, const a4w4_csv_record *r, const tuned_cols *c,
                           a4w4_tuned_row *row, char *err, size_t errlen)
{
    const int *col = c->req;
    int st;
    row->kernel_id = -1;
    if ((st = a4w4_csv_field_int(path, r, col[C_CU], "cu_num", 1, INT_MAX, &row->cu_num, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[C_M], "M", 1, A4W4_DIM_MAX, &row->M, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[C_N], "N", 1, A4W4_DIM_MAX, &row->N, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[C_K], "K", 1, A4W4_DIM_MAX, &row->K, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[C_SPLITK], "splitK", 0, 30, &row->split_k, err,
                                 errlen)))
        return st;
    if (c->id >= 0 && (st = a4w4_csv_field_int(path, r, c->id, "kernelId", INT_MIN, INT_MAX,
                                               &row->kernel_id, err, errlen)))
        return st;
    const a4w4_csv_field *nf = &r->f[col[C_NAME]];
    if (!nf->text[0])
        return errf(err, errlen, A4W4_EINVAL, "%s:%d:%d: kernelName is empty", path, nf->line,
                    nf->col);
    row->gfx = opt_text(r, c->gfx);
    row->kernel_name = opt_text(r, col[C_NAME]);
    row->us = opt_text(r, c->us);
    row->tflops = opt_text(r, c->tf);
    row->bw = opt_text(r, c->bw);
    row->err_ratio = opt_text(r, c->er);
    if (!row->gfx || !row->kernel_name || !row->us || !row->tflops || !row->bw ||
        !row->err_ratio) {
        tuned_row_free(row);
        return errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    return A4W4_OK;
}

/* Sort all[0..total) by key and load order, then refuse two different rows for one key
 * (pandas' to_dict("index") refuses a non-unique index); checked before anything is
 * dropped. */
static int tuned_sort_check(a4w4_tuned_row *all, size_t total, char *err, size_t errlen)
{
    qsort(all, total, sizeof *all, tuned_sort_cmp);
    for (size_t i = 1; i < total; i++) {
        const a4w4_tuned_row *a = &all[i - 1], *b = &all[i];
        if (tuned_key_cmp(a, b) || tuned_rows_equal(a, b))
            continue;
        char gfx[64], kb[256], ka[256]; /* quoted fields: the message stays one line */
        return errf(err, errlen, A4W4_EINVAL,
                    "%s:%d:1: conflicting rows for key (gfx '%s', cu_num %d, M %d, N %d, "
                    "K %d): this row (%s, splitK %d) and %s:%d (%s, splitK %d)",
                    b->file, b->line, a4w4_quote(b->gfx, gfx, sizeof gfx), b->cu_num, b->M,
                    b->N, b->K, a4w4_quote(b->kernel_name, kb, sizeof kb), b->split_k, a->file,
                    a->line, a4w4_quote(a->kernel_name, ka, sizeof ka), a->split_k);
    }
    return A4W4_OK;
}

/* Drop exact duplicates (pandas drop_duplicates) from the sorted all[], keeping the first by
 * (file, line); rows of the new file (whose path is `file`) are freed, counted in *dropped.
 * Returns the number kept. */
static size_t tuned_drop_duplicates(a4w4_tuned_row *all, size_t total, const char *file,
                                    size_t *dropped)
{
    size_t w = 0;
    for (size_t i = 0; i < total; i++) {
        if (w && !tuned_key_cmp(&all[w - 1], &all[i])) {
            if (all[i].file == file)
                tuned_row_free(&all[i]);
            (*dropped)++;
            continue;
        }
        all[w++] = all[i];
    }
    return w;
}

/* A copy of path (*file) and t->rows plus room for nnew rows in a fresh array *all;
 * A4W4_ENOMEM naming path otherwise (t untouched). */
static int tuned_grow(const a4w4_tuned_table *t, const char *path, size_t nnew, char **file,
                      a4w4_tuned_row **all, char *err, size_t errlen)
{
    *file = dupstr(path);
    *all = *file ? malloc((t->n + nnew) * sizeof **all) : NULL;
    if (!*all) {
        free(*file);
        return errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    if (t->n)
        memcpy(*all, t->rows, t->n * sizeof **all);
    return A4W4_OK;
}

/* Room for one more name in t->files, made only once the file's rows are accepted (a refused
 * load keeps t as it was); A4W4_ENOMEM naming path otherwise. */
static int tuned_files_grow(a4w4_tuned_table *t, const char *path, char *err, size_t errlen)
{
    char **files = realloc(t->files, (size_t)(t->loaded + 1) * sizeof *files);
    if (!files)
        return errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    t->files = files;
    return A4W4_OK;
}

int a4w4_tuned_load(a4w4_tuned_table *t, const char *path, char *err, size_t errlen)
{
    if (!t || !path)
        return errf(err, errlen, A4W4_EINVAL, "tuned table: NULL argument");
    a4w4_csv_doc d;
    tuned_cols c;
    int st = tuned_open(t, path, &d, &c, err, errlen);
    if (st)
        return st;
    char *file;
    a4w4_tuned_row *all;
    if ((st = tuned_grow(t, path, d.n - 1, &file, &all, err, errlen))) {
        a4w4_csv_doc_free(&d);
        return st;
    }
    size_t made = 0;
    for (size_t i = 1; i < d.n && st == A4W4_OK; i++) {
        a4w4_tuned_row *row = &all[t->n + made];
        memset(row, 0, sizeof *row);
        row->file = file;
        row->file_index = t->loaded;
        row->line = d.r[i].line;
        if ((st = tuned_parse_row(path, &d.r[i], &c, row, err, errlen)) == A4W4_OK)
            made++;
    }
    a4w4_csv_doc_free(&d);
    size_t total = t->n + made;
    if (st == A4W4_OK)
        st = tuned_sort_check(all, total, err, errlen);
    if (st == A4W4_OK)
        st = tuned_files_grow(t, path, err, errlen);
    if (st != A4W4_OK) {
        for (size_t i = 0; i < total; i++)
            if (all[i].file == file)
                tuned_row_free(&all[i]);
        free(all);
        free(file);
        return st;
    }
    size_t kept = tuned_drop_duplicates(all, total, file, &t->dropped);
    free(t->rows);
    t->rows = all;
    t->n = t->cap = kept;
    t->has_gfx = c.gfx >= 0;
    t->files[t->loaded++] = file;
    return A4W4_OK;
}

const a4w4_tuned_row *a4w4_tuned_find(const a4w4_tuned_table *t, const char *gfx, int cu_num,
                                      int M, int N, int K)
{
    if (!t || !t->n)
        return NULL;
    a4w4_tuned_row key;
    memset(&key, 0, sizeof key);
    key.gfx = (char *)(t->has_gfx && gfx ? gfx : "");
    key.cu_num = cu_num;
    key.M = M;
    key.N = N;
    key.K = K;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = tuned_key_cmp(&t->rows[mid], &key);
        if (c == 0)
            return &t->rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- ASM kernel table ----------------------------------------------------------------- */

enum { K_TILE_M, K_TILE_N, K_SPLITK, K_BPRESHUFFLE, K_NAME, K_NREQ };
static const char *const KERNEL_REQUIRED[K_NREQ] = {"tile_M", "tile_N", "splitK", "bpreshuffle",
                                                    "knl_name"};

void a4w4_kernels_free(a4w4_kernel_table *kt)
{
    if (!kt)
        return;
    for (size_t i = 0; i < kt->n; i++) {
        free(kt->rows[i].name);
        free(kt->rows[i].co_name);
    }
    free(kt->rows);
    free(kt->file);
    memset(kt, 0, sizeof *kt);
}

/* "gfx950" from ".../gfx950_f4gemm_bf16_per1x32Fp4.csv"; "" when the name has no prefix. */
static void arch_from_path(const char *path, char *arch, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    arch[0] = '\0';
    if (strncmp(base, "gfx", 3) != 0)
        return;
    size_t n = 3;
    while (base[n] && base[n] != '_' && base[n] != '.') {
        char c = base[n];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return;
        n++;
    }
    if (base[n] != '_' || n == 3 || n >= len)
        return;
    memcpy(arch, base, n);
    arch[n] = '\0';
}

/* Read a kernel table file: header (required columns into col[], co_name into *c_co), rows
 * present and as wide as the header, at most A4W4_MAX_KERNELS of them. Frees d on failure. */
static int kernels_open(const char *path, a4w4_csv_doc *d, int *col, int *c_co, char *err,
                        size_t errlen)
{
    int st = read_table(path, d, err, errlen);
    if (st)
        return st;
    if ((st = a4w4_csv_required_cols(path, d, KERNEL_REQUIRED, K_NREQ,
                                     "an ASM kernel table needs tile_M, tile_N, splitK, "
                                     "bpreshuffle, knl_name; contracts §5.3",
                                     col, err, errlen)))
        return st;
    *c_co = a4w4_csv_header_col(&d->r[0], "co_name");
    if ((st = a4w4_csv_rows_present(path, d, "empty table (header only, no rows)", err, errlen)))
        return st;
    if (d->n - 1 > A4W4_MAX_KERNELS) {
        size_t n = d->n - 1;
        a4w4_csv_doc_free(d);
        return errf(err, errlen, A4W4_EINVAL, "%s: %zu kernels, more than the %d this tool holds",
                    path, n, A4W4_MAX_KERNELS);
    }
    return A4W4_OK;
}

/* Add one data record to kt: its numbers, then its name against the rows so far (an exact
 * duplicate is dropped, a name listed again with other contents is an error). */
static int kernels_add_row(a4w4_kernel_table *kt, const char *path, const a4w4_csv_record *r,
                           const int *col, int c_co, char *err, size_t errlen)
{
    a4w4_asm_kernel k;
    memset(&k, 0, sizeof k);
    k.line = r->line;
    int st;
    if ((st = a4w4_csv_field_int(path, r, col[K_TILE_M], "tile_M", 1, 65536, &k.tile_m, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[K_TILE_N], "tile_N", 1, 65536, &k.tile_n, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[K_SPLITK], "splitK", 0, 1, &k.split_k, err,
                                 errlen)) ||
        (st = a4w4_csv_field_int(path, r, col[K_BPRESHUFFLE], "bpreshuffle", 0, 1,
                                 &k.bpreshuffle, err, errlen)))
        return st;
    const a4w4_csv_field *nf = &r->f[col[K_NAME]];
    if (!nf->text[0])
        return errf(err, errlen, A4W4_EINVAL, "%s:%d:%d: knl_name is empty", path, nf->line,
                    nf->col);
    const char *co = c_co >= 0 ? r->f[c_co].text : "";
    int dup = a4w4_kernels_find(kt, nf->text);
    if (dup >= 0) {
        const a4w4_asm_kernel *o = &kt->rows[dup];
        if (o->tile_m == k.tile_m && o->tile_n == k.tile_n && o->split_k == k.split_k &&
            o->bpreshuffle == k.bpreshuffle && !strcmp(o->co_name, co))
            return A4W4_OK; /* exact duplicate: dropped */
        char shown[256]; /* a quoted field may hold line breaks: the message stays one line */
        return errf(err, errlen, A4W4_EINVAL,
                    "%s:%d:%d: kernel %s is listed again with different contents (first at "
                    "line %d)",
                    path, nf->line, nf->col, a4w4_quote(nf->text, shown, sizeof shown), o->line);
    }
    k.name = dupstr(nf->text);
    k.co_name = dupstr(co);
    kt->rows[kt->n++] = k;
    if (!k.name || !k.co_name)
        return errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    return A4W4_OK;
}

int a4w4_kernels_load(a4w4_kernel_table *kt, const char *path, const char *arch, char *err,
                      size_t errlen)
{
    if (!kt || !path)
        return errf(err, errlen, A4W4_EINVAL, "kernel table: NULL argument");
    memset(kt, 0, sizeof *kt);
    a4w4_csv_doc d;
    int col[K_NREQ], c_co;
    int st = kernels_open(path, &d, col, &c_co, err, errlen);
    if (st)
        return st;
    kt->rows = calloc(d.n - 1, sizeof *kt->rows);
    kt->file = dupstr(path);
    if (!kt->rows || !kt->file) {
        a4w4_csv_doc_free(&d);
        a4w4_kernels_free(kt);
        return errf(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    if (arch)
        snprintf(kt->arch, sizeof kt->arch, "%s", arch);
    else
        arch_from_path(path, kt->arch, sizeof kt->arch);
    for (size_t i = 1; i < d.n && st == A4W4_OK; i++)
        st = kernels_add_row(kt, path, &d.r[i], col, c_co, err, errlen);
    a4w4_csv_doc_free(&d);
    if (st)
        a4w4_kernels_free(kt);
    return st;
}

int a4w4_kernels_find(const a4w4_kernel_table *kt, const char *name)
{
    if (!kt || !name)
        return -1;
    for (size_t i = 0; i < kt->n; i++)
        if (!strcmp(kt->rows[i].name, name))
            return (int)i;
    return -1;
}
