/* a4w4_dispatch.c — AITER's gemm_a4w4 routing (contracts §5): tables, lookup, ASM heuristic and
 * its order-dependence. Prints nothing; errors go into the caller's buffer. */
#include "a4w4_dispatch.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Base-10 integer filling the whole string, in [lo, hi]. 1 on success. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s)
        return 0;
    const char *q = s;
    if (*q == '-' || *q == '+')
        q++;
    if (*q < '0' || *q > '9')
        return 0;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int)v;
    return 1;
}

/* ---- CSV documents (libcsv, fed byte by byte so every field knows its line and column) - */

typedef struct {
    char *text;
    int line, col;
} csv_field_t;

typedef struct {
    csv_field_t *f;
    size_t n, cap;
    int line;             /* line of the record's first field */
    int end_line, end_col;/* where the record ended (terminator, or end of file) */
} csv_record_t;

typedef struct {
    csv_record_t *r;
    size_t n, cap;
} csv_doc_t;

typedef struct {
    csv_doc_t *doc;
    csv_record_t cur;
    int line, col;         /* position of the byte being fed */
    int at_field_start, at_record_start;
    int fline, fcol;       /* first non-blank byte of the field being read */
    int oom;
} csv_state_t;

static void record_free(csv_record_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->f[i].text);
    free(r->f);
    memset(r, 0, sizeof *r);
}

static void doc_free(csv_doc_t *d)
{
    for (size_t i = 0; i < d->n; i++)
        record_free(&d->r[i]);
    free(d->r);
    memset(d, 0, sizeof *d);
}

static void on_field(void *s, size_t len, void *data)
{
    csv_state_t *st = data;
    st->at_field_start = 1;
    if (st->oom)
        return;
    csv_record_t *r = &st->cur;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        csv_field_t *f = realloc(r->f, cap * sizeof *f);
        if (!f) {
            st->oom = 1;
            return;
        }
        r->f = f;
        r->cap = cap;
    }
    char *t = malloc(len + 1);
    if (!t) {
        st->oom = 1;
        return;
    }
    if (len)
        memcpy(t, s, len);
    t[len] = '\0';
    if (r->n == 0 && r->line == 0)
        r->line = st->fline;
    r->f[r->n].text = t;
    r->f[r->n].line = st->fline;
    r->f[r->n].col = st->fcol;
    r->n++;
}

static void on_record(int c, void *data)
{
    (void)c;
    csv_state_t *st = data;
    st->at_field_start = 1;
    st->at_record_start = 1;
    if (st->oom) {
        record_free(&st->cur);
        return;
    }
    st->cur.end_line = st->line;
    st->cur.end_col = st->col;
    csv_doc_t *d = st->doc;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        csv_record_t *r = realloc(d->r, cap * sizeof *r);
        if (!r) {
            st->oom = 1;
            record_free(&st->cur);
            return;
        }
        d->r = r;
        d->cap = cap;
    }
    d->r[d->n++] = st->cur;
    memset(&st->cur, 0, sizeof st->cur);
}

/* Parse a whole CSV file. Strict quoting: a quote inside a quoted field must be doubled or
 * end the field; an unterminated quote is reported at its opening position. */
static int csv_read(const char *path, csv_doc_t *doc, char *err, size_t errlen)
{
    memset(doc, 0, sizeof *doc);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return fail(err, errlen, A4W4_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        fclose(fp);
        return fail(err, errlen, A4W4_ENOMEM, "%s: cannot initialise the CSV parser", path);
    }
    csv_state_t st;
    memset(&st, 0, sizeof st);
    st.doc = doc;
    st.line = 1;
    st.col = 1;
    st.at_field_start = st.at_record_start = 1;
    int status = A4W4_OK;
    int c;
    while ((c = fgetc(fp)) != EOF) {
        unsigned char b = (unsigned char)c;
        if (st.at_field_start) {
            int blank_line = st.at_record_start && (b == '\n' || b == '\r');
            if (!blank_line && b != ' ' && b != '\t') {
                st.fline = st.line;
                st.fcol = st.col;
                st.at_field_start = 0;
                if (st.at_record_start) {
                    st.cur.line = st.line;
                    st.at_record_start = 0;
                }
            }
        }
        if (csv_parse(&p, &b, 1, on_field, on_record, &st) != 1) {
            status = fail(err, errlen, A4W4_EINVAL,
                          "%s:%d:%d: malformed quoting (a quote inside a quoted field must be "
                          "doubled, and a closing quote followed by a delimiter or line end)",
                          path, st.line, st.col);
            break;
        }
        if (st.oom)
            break;
        if (b == '\n') {
            st.line++;
            st.col = 1;
        } else {
            st.col++;
        }
    }
    if (status == A4W4_OK && !st.oom && ferror(fp))
        status = fail(err, errlen, A4W4_EINVAL, "%s: read error", path);
    if (status == A4W4_OK && !st.oom) {
        int open_line = st.fline, open_col = st.fcol;
        if (csv_fini(&p, on_field, on_record, &st) != 0)
            status = fail(err, errlen, A4W4_EINVAL,
                          "%s:%d:%d: unterminated quote (the quoted field opened here never "
                          "closes)",
                          path, open_line, open_col);
    }
    if (status == A4W4_OK && st.oom)
        status = fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    csv_free(&p);
    fclose(fp);
    record_free(&st.cur);
    if (status != A4W4_OK)
        doc_free(doc);
    return status;
}

/* Column index of `name` in the header, or -1. */
static int header_col(const csv_record_t *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->f[i].text, name))
            return (int)i;
    return -1;
}

/* Every data record must have as many fields as the header. */
static int check_width(const char *path, const csv_doc_t *d, char *err, size_t errlen)
{
    size_t w = d->r[0].n;
    for (size_t i = 1; i < d->n; i++) {
        const csv_record_t *r = &d->r[i];
        if (r->n == w)
            continue;
        if (r->n > w)
            return fail(err, errlen, A4W4_EINVAL,
                        "%s:%d:%d: %zu fields where the header has %zu (first extra field here)",
                        path, r->f[w].line, r->f[w].col, r->n, w);
        return fail(err, errlen, A4W4_EINVAL,
                    "%s:%d:%d: %zu fields where the header has %zu (record ends here)", path,
                    r->end_line, r->end_col, r->n, w);
    }
    return A4W4_OK;
}

/* Optional sign, then one or more decimal digits, nothing else. */
static int int_syntax(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static int field_int(const char *path, const csv_record_t *r, int col, const char *name, long lo,
                     long hi, int *out, char *err, size_t errlen)
{
    const csv_field_t *f = &r->f[col];
    if (parse_int(f->text, lo, hi, out))
        return A4W4_OK;
    if (int_syntax(f->text))
        return fail(err, errlen, A4W4_EINVAL, "%s:%d:%d: %s is %s, outside %ld..%ld", path,
                    f->line, f->col, name, f->text, lo, hi);
    return fail(err, errlen, A4W4_EINVAL, "%s:%d:%d: %s is '%s', not an integer", path,
                f->line, f->col, name, f->text);
}

/* ---- tuned table ---------------------------------------------------------------------- */

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

static char *opt_text(const csv_record_t *r, int col)
{
    return dupstr(col >= 0 ? r->f[col].text : "");
}

/* The column index of each required header name into col[]; on the first missing one frees
 * d and fails naming it ("<path>:<line>:1: header lacks column 'X' (<needs>)"). */
static int required_cols(const char *path, csv_doc_t *d, const char *const *names, int n,
                         const char *needs, int *col, char *err, size_t errlen)
{
    const csv_record_t *h = &d->r[0];
    for (int i = 0; i < n; i++)
        if ((col[i] = header_col(h, names[i])) < 0) {
            int line = h->line;
            doc_free(d);
            return fail(err, errlen, A4W4_EINVAL, "%s:%d:1: header lacks column '%s' (%s)", path,
                        line, names[i], needs);
        }
    return A4W4_OK;
}

/* At least one row after the header (else "<path>: <header_only>") and every row as wide as
 * the header; frees d on failure. */
static int rows_present(const char *path, csv_doc_t *d, const char *header_only, char *err,
                        size_t errlen)
{
    int st;
    if (d->n < 2) {
        doc_free(d);
        return fail(err, errlen, A4W4_EINVAL, "%s: %s", path, header_only);
    }
    if ((st = check_width(path, d, err, errlen)))
        doc_free(d);
    return st;
}

int a4w4_tuned_load(a4w4_tuned_table *t, const char *path, char *err, size_t errlen)
{
    if (!t || !path)
        return fail(err, errlen, A4W4_EINVAL, "tuned table: NULL argument");
    csv_doc_t d;
    int st = csv_read(path, &d, err, errlen);
    if (st)
        return st;
    if (d.n == 0) {
        doc_free(&d);
        return fail(err, errlen, A4W4_EINVAL, "%s: empty table (no header, no rows)", path);
    }
    const csv_record_t *h = &d.r[0];
    const int hline = h->line;
    static const char *const required[] = {"cu_num", "M", "N", "K", "splitK", "kernelName"};
    int col[6];
    if ((st = required_cols(path, &d, required, 6,
                            "a tuned table needs cu_num, M, N, K, splitK, kernelName; contracts §5.1",
                            col, err, errlen)))
        return st;
    int c_gfx = header_col(h, "gfx"), c_id = header_col(h, "kernelId");
    int c_us = header_col(h, "us"), c_tf = header_col(h, "tflops");
    int c_bw = header_col(h, "bw"), c_er = header_col(h, "errRatio");
    int has_gfx = c_gfx >= 0;
    if (t->loaded && has_gfx != t->has_gfx) {
        doc_free(&d);
        return fail(err, errlen, A4W4_EINVAL,
                    "%s:%d:1: schema differs from %s (one has a gfx column, the other not); "
                    "merged tuned tables must share one key",
                    path, hline, t->files[0]);
    }
    if ((st = rows_present(path, &d, "empty table (header only, no rows)", err, errlen)))
        return st;
    char *file = dupstr(path);
    char **files = realloc(t->files, (size_t)(t->loaded + 1) * sizeof *files);
    if (!file || !files) {
        free(file);
        if (files)
            t->files = files;
        doc_free(&d);
        return fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    t->files = files;
    size_t nnew = d.n - 1;
    a4w4_tuned_row *all = malloc((t->n + nnew) * sizeof *all);
    if (!all) {
        free(file);
        doc_free(&d);
        return fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    if (t->n)
        memcpy(all, t->rows, t->n * sizeof *all);
    size_t made = 0;
    for (size_t i = 1; i < d.n && st == A4W4_OK; i++) {
        const csv_record_t *r = &d.r[i];
        a4w4_tuned_row row;
        memset(&row, 0, sizeof row);
        row.file = file;
        row.file_index = t->loaded;
        row.line = r->line;
        row.kernel_id = -1;
        if ((st = field_int(path, r, col[0], "cu_num", 1, INT_MAX, &row.cu_num, err, errlen)) ||
            (st = field_int(path, r, col[1], "M", 1, A4W4_DIM_MAX, &row.M, err, errlen)) ||
            (st = field_int(path, r, col[2], "N", 1, A4W4_DIM_MAX, &row.N, err, errlen)) ||
            (st = field_int(path, r, col[3], "K", 1, A4W4_DIM_MAX, &row.K, err, errlen)) ||
            (st = field_int(path, r, col[4], "splitK", 0, 30, &row.split_k, err, errlen)))
            break;
        if (c_id >= 0 &&
            (st = field_int(path, r, c_id, "kernelId", INT_MIN, INT_MAX, &row.kernel_id, err,
                            errlen)))
            break;
        if (!r->f[col[5]].text[0]) {
            st = fail(err, errlen, A4W4_EINVAL, "%s:%d:%d: kernelName is empty", path,
                      r->f[col[5]].line, r->f[col[5]].col);
            break;
        }
        row.gfx = opt_text(r, c_gfx);
        row.kernel_name = opt_text(r, col[5]);
        row.us = opt_text(r, c_us);
        row.tflops = opt_text(r, c_tf);
        row.bw = opt_text(r, c_bw);
        row.err_ratio = opt_text(r, c_er);
        if (!row.gfx || !row.kernel_name || !row.us || !row.tflops || !row.bw || !row.err_ratio) {
            tuned_row_free(&row);
            st = fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
            break;
        }
        all[t->n + made++] = row;
    }
    doc_free(&d);
    size_t total = t->n + made;
    if (st == A4W4_OK) {
        qsort(all, total, sizeof *all, tuned_sort_cmp);
        /* Conflicting rows for one key are an error (pandas' to_dict("index") refuses a
         * non-unique index); checked before anything is dropped. */
        for (size_t i = 1; i < total && st == A4W4_OK; i++) {
            const a4w4_tuned_row *a = &all[i - 1], *b = &all[i];
            if (tuned_key_cmp(a, b) || tuned_rows_equal(a, b))
                continue;
            st = fail(err, errlen, A4W4_EINVAL,
                      "%s:%d:1: conflicting rows for key (gfx '%s', cu_num %d, M %d, N %d, "
                      "K %d): this row (%s, splitK %d) and %s:%d (%s, splitK %d)",
                      b->file, b->line, b->gfx, b->cu_num, b->M, b->N, b->K, b->kernel_name,
                      b->split_k, a->file, a->line, a->kernel_name, a->split_k);
        }
    }
    if (st != A4W4_OK) {
        for (size_t i = 0; i < total; i++)
            if (all[i].file == file)
                tuned_row_free(&all[i]);
        free(all);
        free(file);
        return st;
    }
    /* Drop exact duplicates (pandas drop_duplicates), keeping the first by (file, line). */
    size_t w = 0;
    for (size_t i = 0; i < total; i++) {
        if (w && !tuned_key_cmp(&all[w - 1], &all[i])) {
            if (all[i].file == file)
                tuned_row_free(&all[i]);
            t->dropped++;
            continue;
        }
        all[w++] = all[i];
    }
    free(t->rows);
    t->rows = all;
    t->n = t->cap = w;
    t->has_gfx = has_gfx;
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

int a4w4_kernels_load(a4w4_kernel_table *kt, const char *path, const char *arch, char *err,
                      size_t errlen)
{
    if (!kt || !path)
        return fail(err, errlen, A4W4_EINVAL, "kernel table: NULL argument");
    memset(kt, 0, sizeof *kt);
    csv_doc_t d;
    int st = csv_read(path, &d, err, errlen);
    if (st)
        return st;
    if (d.n == 0) {
        doc_free(&d);
        return fail(err, errlen, A4W4_EINVAL, "%s: empty table (no header, no rows)", path);
    }
    const csv_record_t *h = &d.r[0];
    static const char *const required[] = {"tile_M", "tile_N", "splitK", "bpreshuffle",
                                           "knl_name"};
    int col[5];
    if ((st = required_cols(path, &d, required, 5,
                            "an ASM kernel table needs tile_M, tile_N, splitK, bpreshuffle, "
                            "knl_name; contracts §5.3",
                            col, err, errlen)))
        return st;
    int c_co = header_col(h, "co_name");
    if ((st = rows_present(path, &d, "empty table (header only, no rows)", err, errlen)))
        return st;
    if (d.n - 1 > A4W4_MAX_KERNELS) {
        doc_free(&d);
        return fail(err, errlen, A4W4_EINVAL, "%s: %zu kernels, more than the %d this tool holds",
                    path, d.n - 1, A4W4_MAX_KERNELS);
    }
    kt->rows = calloc(d.n - 1, sizeof *kt->rows);
    kt->file = dupstr(path);
    if (!kt->rows || !kt->file) {
        doc_free(&d);
        a4w4_kernels_free(kt);
        return fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    if (arch) {
        snprintf(kt->arch, sizeof kt->arch, "%s", arch);
    } else {
        arch_from_path(path, kt->arch, sizeof kt->arch);
    }
    for (size_t i = 1; i < d.n; i++) {
        const csv_record_t *r = &d.r[i];
        a4w4_asm_kernel k;
        memset(&k, 0, sizeof k);
        k.line = r->line;
        if ((st = field_int(path, r, col[0], "tile_M", 1, 65536, &k.tile_m, err, errlen)) ||
            (st = field_int(path, r, col[1], "tile_N", 1, 65536, &k.tile_n, err, errlen)) ||
            (st = field_int(path, r, col[2], "splitK", 0, 1, &k.split_k, err, errlen)) ||
            (st = field_int(path, r, col[3], "bpreshuffle", 0, 1, &k.bpreshuffle, err, errlen)))
            break;
        const csv_field_t *nf = &r->f[col[4]];
        if (!nf->text[0]) {
            st = fail(err, errlen, A4W4_EINVAL, "%s:%d:%d: knl_name is empty", path, nf->line,
                      nf->col);
            break;
        }
        const char *co = c_co >= 0 ? r->f[c_co].text : "";
        int dup = -1;
        for (size_t j = 0; j < kt->n; j++)
            if (!strcmp(kt->rows[j].name, nf->text))
                dup = (int)j;
        if (dup >= 0) {
            const a4w4_asm_kernel *o = &kt->rows[dup];
            if (o->tile_m == k.tile_m && o->tile_n == k.tile_n && o->split_k == k.split_k &&
                o->bpreshuffle == k.bpreshuffle && !strcmp(o->co_name, co))
                continue; /* exact duplicate: dropped */
            st = fail(err, errlen, A4W4_EINVAL,
                      "%s:%d:%d: kernel %s is listed again with different contents (first at "
                      "line %d)",
                      path, nf->line, nf->col, nf->text, o->line);
            break;
        }
        k.name = dupstr(nf->text);
        k.co_name = dupstr(co);
        kt->rows[kt->n++] = k;
        if (!k.name || !k.co_name) {
            st = fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
            break;
        }
    }
    doc_free(&d);
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

/* ---- shape lists ---------------------------------------------------------------------- */

int a4w4_shapes_load(const char *path, int **shapes, size_t *n, char *err, size_t errlen)
{
    if (!path || !shapes || !n)
        return fail(err, errlen, A4W4_EINVAL, "shape list: NULL argument");
    *shapes = NULL;
    *n = 0;
    csv_doc_t d;
    int st = csv_read(path, &d, err, errlen);
    if (st)
        return st;
    /* shape lists and case files may carry '#' comment lines (the cases/ CSVs): drop them */
    size_t keep = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (d.r[i].n && d.r[i].f[0].text && d.r[i].f[0].text[0] == '#')
            record_free(&d.r[i]);
        else
            d.r[keep++] = d.r[i];
    }
    d.n = keep;
    if (d.n == 0) {
        doc_free(&d);
        return fail(err, errlen, A4W4_EINVAL, "%s: empty shape list (no header, no rows)", path);
    }
    static const char *const names[3] = {"M", "N", "K"};
    int col[3];
    if ((st = required_cols(path, &d, names, 3, "a shape list names M, N and K", col, err,
                            errlen)) ||
        (st = rows_present(path, &d, "empty shape list (header only)", err, errlen)))
        return st;
    int *s = malloc(3 * (d.n - 1) * sizeof *s);
    if (!s) {
        doc_free(&d);
        return fail(err, errlen, A4W4_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 1; i < d.n && !st; i++)
        for (int j = 0; j < 3 && !st; j++)
            st = field_int(path, &d.r[i], col[j], names[j], 1, A4W4_DIM_MAX, &s[3 * (i - 1) + j],
                           err, errlen);
    if (st) {
        free(s);
    } else {
        *shapes = s;
        *n = d.n - 1;
    }
    doc_free(&d);
    return st;
}

/* ---- lookup --------------------------------------------------------------------------- */

static int next_pow2(int m)
{
    if (m <= 1)
        return 1;
    unsigned v = 1;
    while (v < (unsigned)m)
        v <<= 1;
    return (int)v;
}

int a4w4_padded_m(int M, int N, int K, int gl)
{
    (void)K;
    if (gl == 0) {
        if (M <= 256)
            return (M + 15) / 16 * 16;
        if (M <= 1024)
            return (M + 31) / 32 * 32;
        if (M <= 4096)
            return (M + 63) / 64 * 64;
        return (M + 127) / 128 * 128;
    }
    if (gl == 1) {
        if (M > 8192 && N > 4096)
            return 8192;
        return next_pow2(M);
    }
    return M;
}

int a4w4_kernel_name_is_asm(const char *name)
{
    return name && strstr(name, "_ZN") != NULL;
}

const char *a4w4_route_source_name(a4w4_route_source s)
{
    switch (s) {
    case A4W4_SRC_TUNED: return "tuned";
    case A4W4_SRC_TUNED_PADDED_GL0: return "tuned_padded_gl0";
    case A4W4_SRC_TUNED_PADDED_GL1: return "tuned_padded_gl1";
    case A4W4_SRC_HEURISTIC: return "heuristic";
    }
    return "unknown";
}

const a4w4_tuned_row *a4w4_tuned_lookup(const a4w4_tuned_table *t, const char *gfx, int cu_num,
                                        int M, int N, int K, int *src, int *m_hit)
{
    if (!t)
        return NULL;
    static const int sources[3] = {A4W4_SRC_TUNED, A4W4_SRC_TUNED_PADDED_GL0,
                                   A4W4_SRC_TUNED_PADDED_GL1};
    for (int gl = -1; gl <= 1; gl++) {
        int m = gl < 0 ? M : a4w4_padded_m(M, N, K, gl);
        const a4w4_tuned_row *row = a4w4_tuned_find(t, gfx, cu_num, m, N, K);
        if (row) {
            if (src)
                *src = sources[gl + 1];
            if (m_hit)
                *m_hit = m;
            return row;
        }
    }
    return NULL;
}

/* ---- ASM heuristic -------------------------------------------------------------------- */

static int check_params(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                        char *err, size_t errlen)
{
    if (!kt || !p || !p->gfx)
        return fail(err, errlen, A4W4_EINVAL, "heuristic: NULL argument");
    if (p->num_cu < 1)
        return fail(err, errlen, A4W4_EINVAL, "heuristic: num_cu is %d, must be >= 1", p->num_cu);
    if (p->log2_k_split < -1 || p->log2_k_split > 4)
        return fail(err, errlen, A4W4_EINVAL,
                    "heuristic: log2_k_split is %d, must be -1 (none) or 0..4", p->log2_k_split);
    if (M < 1 || N < 1 || M > A4W4_DIM_MAX || N > A4W4_DIM_MAX)
        return fail(err, errlen, A4W4_EINVAL, "heuristic: M %d, N %d must be in 1..%d", M, N,
                    A4W4_DIM_MAX);
    return A4W4_OK;
}

/* AITER keys its kernel map by arch + knl_name and keeps keys that start with the device arch
 * (el.first.find(arch_id) == 0). */
static int arch_matches(const a4w4_kernel_table *kt, const char *gfx, const char *name)
{
    size_t la = strlen(kt->arch), lg = strlen(gfx);
    if (la == 0)
        return 1; /* a table without an arch prefix serves any arch */
    if (lg <= la)
        return strncmp(kt->arch, gfx, lg) == 0;
    return strncmp(kt->arch, gfx, la) == 0 && strncmp(name, gfx + la, lg - la) == 0;
}

static int eligible(const a4w4_kernel_table *kt, size_t i, const a4w4_heur_params *p, int N)
{
    const a4w4_asm_kernel *k = &kt->rows[i];
    if (!arch_matches(kt, p->gfx, k->name))
        return 0;
    if (k->bpreshuffle != (p->bpreshuffle ? 1 : 0))
        return 0;
    if (k->split_k < (p->log2_k_split > 0 ? 1 : 0))
        return 0;
    /* "tile128x512 may not support N % cfg.tile_N != 0" */
    if (k->tile_m == 128 && k->tile_n == 512 && N % 512 != 0)
        return 0;
    return 1;
}

/* Split counts tried for kernel k, in AITER's order. */
static int split_list(const a4w4_asm_kernel *k, int log2_k_split, int out[4])
{
    if (log2_k_split >= 0 && k->split_k) {
        out[0] = 1 << log2_k_split;
        return 1;
    }
    if (k->split_k) {
        out[0] = 2;
        out[1] = 4;
        out[2] = 8;
        out[3] = 16;
        return 4;
    }
    out[0] = 1;
    return 1;
}

static int ilog2(int v)
{
    int r = 0;
    while (v >>= 1)
        r++;
    return r;
}

static a4w4_heur_choice candidate(const a4w4_asm_kernel *k, int idx, int split, int M, int N,
                                  int num_cu)
{
    a4w4_heur_choice c;
    unsigned long long tgm = ((unsigned long long)M + (unsigned)k->tile_m - 1) / (unsigned)k->tile_m;
    unsigned long long tgn = ((unsigned long long)N + (unsigned)k->tile_n - 1) / (unsigned)k->tile_n;
    c.kernel = idx;
    c.split = split;
    c.log2_split = ilog2(split);
    c.tiles = tgm * tgn * (unsigned)split;
    c.rounds = (c.tiles + (unsigned)num_cu - 1) / (unsigned)num_cu;
    c.empty_cu = c.rounds * (unsigned)num_cu - c.tiles;
    c.ratio = k->tile_m * k->tile_n / (k->tile_m + k->tile_n);
    return c;
}

static int no_kernel(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int N, char *err,
                     size_t errlen)
{
    return fail(err, errlen, A4W4_EUNSUPPORTED,
                "%s: no eligible ASM kernel for %s (bpreshuffle %d, log2_k_split %d, N %d); "
                "AITER raises 'get_heuristic_kernel: cannot get heuristic kernel!'",
                kt->file ? kt->file : "kernel table", p->gfx, p->bpreshuffle ? 1 : 0,
                p->log2_k_split, N);
}

int a4w4_heuristic(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                   const size_t *order, size_t norder, a4w4_heur_choice *out, char *err,
                   size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!out || (order && norder != kt->n))
        return fail(err, errlen, A4W4_EINVAL, "heuristic: bad order or output argument");
    a4w4_heur_choice best;
    memset(&best, 0, sizeof best);
    best.kernel = -1;
    unsigned long long round = UINT_MAX, empty = (unsigned)p->num_cu;
    int ratio = 1; /* compute2mem_effi starts at 1.0; ratios are integers */
    for (size_t w = 0; w < kt->n; w++) {
        size_t i = order ? order[w] : w;
        if (i >= kt->n)
            return fail(err, errlen, A4W4_EINVAL, "heuristic: order names kernel %zu of %zu", i,
                        kt->n);
        if (!eligible(kt, i, p, N))
            continue;
        int splits[4];
        int ns = split_list(&kt->rows[i], p->log2_k_split, splits);
        for (int s = 0; s < ns; s++) {
            a4w4_heur_choice c = candidate(&kt->rows[i], (int)i, splits[s], M, N, p->num_cu);
            if (c.rounds < round || (c.rounds == round && (empty > c.empty_cu || c.ratio > ratio))) {
                round = c.rounds;
                empty = c.empty_cu;
                ratio = c.ratio;
                best = c;
            }
        }
    }
    if (best.kernel < 0)
        return no_kernel(kt, p, N, err, errlen);
    *out = best;
    return A4W4_OK;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int a4w4_heuristic_winners_sampled(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                   int M, int N, int nperm, unsigned char *winners, char *err,
                                   size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!winners || nperm < 0)
        return fail(err, errlen, A4W4_EINVAL, "heuristic: bad winners or permutation count");
    memset(winners, 0, kt->n);
    size_t order[A4W4_MAX_KERNELS];
    a4w4_heur_choice c;
    for (int walk = -2; walk < nperm; walk++) {
        for (size_t i = 0; i < kt->n; i++)
            order[i] = walk == -1 ? kt->n - 1 - i : i;
        if (walk >= 0) {
            uint64_t seed = (uint64_t)walk + 1;
            for (size_t i = kt->n; i > 1; i--) {
                size_t j = (size_t)(splitmix64(&seed) % i);
                size_t t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
            }
        }
        if ((st = a4w4_heuristic(kt, p, M, N, order, kt->n, &c, err, errlen)))
            return st;
        winners[c.kernel] = 1;
    }
    return A4W4_OK;
}

int a4w4_heuristic_winners_any_order(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                     int M, int N, unsigned char *winners, char *err,
                                     size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!winners)
        return fail(err, errlen, A4W4_EINVAL, "heuristic: NULL winners");
    memset(winners, 0, kt->n);
    /* Per eligible kernel: its minimal-round candidates are a prefix of its split list
     * (rounds grow with the split); the block acts as its last minimal-round split. */
    a4w4_heur_choice rep[A4W4_MAX_KERNELS];
    size_t nrep = 0;
    unsigned long long rmin = ULLONG_MAX;
    a4w4_heur_choice first[A4W4_MAX_KERNELS];
    size_t nfirst = 0;
    for (size_t i = 0; i < kt->n; i++) {
        if (!eligible(kt, i, p, N))
            continue;
        int splits[4];
        int ns = split_list(&kt->rows[i], p->log2_k_split, splits);
        a4w4_heur_choice best = candidate(&kt->rows[i], (int)i, splits[0], M, N, p->num_cu);
        for (int s = 1; s < ns; s++) {
            a4w4_heur_choice c = candidate(&kt->rows[i], (int)i, splits[s], M, N, p->num_cu);
            if (c.rounds == best.rounds)
                best = c;
        }
        first[nfirst++] = best;
        if (best.rounds < rmin)
            rmin = best.rounds;
    }
    if (!nfirst)
        return no_kernel(kt, p, N, err, errlen);
    for (size_t i = 0; i < nfirst; i++)
        if (first[i].rounds == rmin)
            rep[nrep++] = first[i];
    /* beats(j, i): j replaces i when i is selected (same rounds). */
#define BEATS(j, i) (rep[j].empty_cu < rep[i].empty_cu || rep[j].ratio > rep[i].ratio)
    unsigned char reach[A4W4_MAX_KERNELS] = {0};
    size_t queue[A4W4_MAX_KERNELS], qh = 0, qt = 0;
    for (size_t i = 0; i < nrep; i++) {
        int maximal = 1;
        for (size_t j = 0; j < nrep && maximal; j++)
            if (rep[j].empty_cu <= rep[i].empty_cu && rep[j].ratio >= rep[i].ratio &&
                (rep[j].empty_cu < rep[i].empty_cu || rep[j].ratio > rep[i].ratio))
                maximal = 0;
        if (maximal) {
            reach[i] = 1;
            queue[qt++] = i;
        }
    }
    while (qh < qt) {
        size_t i = queue[qh++];
        for (size_t j = 0; j < nrep; j++)
            if (!reach[j] && BEATS(j, i)) {
                reach[j] = 1;
                queue[qt++] = j;
            }
    }
#undef BEATS
    for (size_t i = 0; i < nrep; i++)
        if (reach[i])
            winners[rep[i].kernel] = 1;
    return A4W4_OK;
}

/* ---- tile fit ------------------------------------------------------------------------- */

unsigned a4w4_tile_fit(int tile_m, int tile_n, int split, int M, int N)
{
    unsigned f = 0;
    if (tile_n > 0) {
        if (tile_n > N)
            f |= A4W4_FIT_TILE_N_GT_N;
        else if (N % tile_n != 0)
            f |= A4W4_FIT_N_PARTIAL;
    }
    if (tile_m > 0 && (long long)tile_m > 8LL * M)
        f |= A4W4_FIT_TILE_M_GT_8M;
    if (split > 1)
        f |= A4W4_FIT_SPLIT_K;
    return f;
}

/* ---- the whole route ------------------------------------------------------------------ */

static const a4w4_kernel_table *sort_kt; /* qsort context (single-threaded use) */

static int cand_name_cmp(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return strcmp(sort_kt->rows[a].name, sort_kt->rows[b].name);
}

static size_t winners_to_sorted(const a4w4_kernel_table *kt, const unsigned char *w, int *out)
{
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++)
        if (w[i])
            out[n++] = (int)i;
    sort_kt = kt;
    qsort(out, n, sizeof *out, cand_name_cmp);
    sort_kt = NULL;
    return n;
}

/* Fill the ASM launch numbers of kernel idx run with log2 split. */
static int asm_launch(const a4w4_kernel_table *kt, int idx, int log2, a4w4_route *r, char *err,
                      size_t errlen)
{
    const a4w4_asm_kernel *k = &kt->rows[idx];
    r->kernel_index = idx;
    r->tile_m = k->tile_m;
    r->tile_n = k->tile_n;
    r->grid_x = (r->N + k->tile_n - 1) / k->tile_n;
    r->grid_y = (r->M + k->tile_m - 1) / k->tile_m;
    r->grid_z = 1;
    r->log2_k_split = 0;
    r->split = 1;
    r->k_per_tg = 0;
    if (k->split_k) {
        int k_num = 1 << log2;
        if (r->K % k_num != 0)
            return fail(err, errlen, A4W4_EUNSUPPORTED,
                        "M %d N %d K %d: K %% (1 << log2_k_split %d) != 0 (AITER raises "
                        "'Kdim %% (1 << args.log2_k_split) != 0 !')",
                        r->M, r->N, r->K, log2);
        r->log2_k_split = log2;
        r->split = k_num;
        int k_per_tg = r->K / k_num;
        r->k_per_tg = (k_per_tg + 255) / 256 * 256;
        r->grid_z = (r->K + r->k_per_tg - 1) / r->k_per_tg;
    }
    r->fit = a4w4_tile_fit(k->tile_m, k->tile_n, r->split, r->M, r->N);
    return A4W4_OK;
}

int a4w4_route_shape(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_heur_params *p, int M, int N, int K, a4w4_route *r, char *err,
                     size_t errlen)
{
    if (!kt || !p || !p->gfx || !r)
        return fail(err, errlen, A4W4_EINVAL, "route: NULL argument");
    if (M < 1 || N < 1 || K < 1 || M > A4W4_DIM_MAX || N > A4W4_DIM_MAX || K > A4W4_DIM_MAX)
        return fail(err, errlen, A4W4_EINVAL, "M %d N %d K %d: each must be in 1..%d", M, N, K,
                    A4W4_DIM_MAX);
    if (K % 32 != 0)
        return fail(err, errlen, A4W4_EINVAL,
                    "M %d N %d K %d: K must be a multiple of 32 (one E8M0 scale per 32 elements, "
                    "contracts §1)",
                    M, N, K);
    if (!strcmp(p->gfx, "gfx942"))
        return fail(err, errlen, A4W4_EUNSUPPORTED,
                    "A4W4 GEMM kernel is not supported on gfx942, but got gfx942! (AITER "
                    "gemm_a4w4; gfx942 has no a4w4 ASM kernels, contracts §5.4)");
    memset(r, 0, sizeof *r);
    r->M = M;
    r->N = N;
    r->K = K;
    r->kernel_index = -1;
    r->choice.kernel = -1;
    int src = A4W4_SRC_HEURISTIC;
    const a4w4_tuned_row *row =
        a4w4_tuned_lookup(tuned, p->gfx, p->num_cu, M, N, K, &src, &r->tuned_m);
    if (row)
        r->source = (a4w4_route_source)src;
    int st;
    if (row) {
        r->row = row;
        r->kernel = row->kernel_name;
        r->is_asm = a4w4_kernel_name_is_asm(row->kernel_name);
        r->ncand = r->ncand_any = 1;
        if (r->is_asm) {
            int idx = a4w4_kernels_find(kt, row->kernel_name);
            r->cand[0] = r->cand_any[0] = idx;
            if (idx >= 0) {
                if ((st = asm_launch(kt, idx, row->split_k, r, err, errlen)))
                    return st;
                r->cand_fit[0] = r->fit;
            } else {
                r->tuned_not_in_kernels = 1;
                r->log2_k_split = row->split_k;
                r->split = 1 << row->split_k;
                if (r->split > 1)
                    r->fit = A4W4_FIT_SPLIT_K;
            }
        } else {
            /* CK blockscale kernel: splitK is its log2 K batch (KBatch = 2^splitK). */
            r->cand[0] = r->cand_any[0] = -1;
            r->log2_k_split = row->split_k;
            r->split = 1 << row->split_k;
            if (r->split > 1)
                r->fit = A4W4_FIT_SPLIT_K;
        }
        return A4W4_OK;
    }
    r->source = A4W4_SRC_HEURISTIC;
    r->is_asm = 1;
    if ((st = a4w4_heuristic(kt, p, M, N, NULL, 0, &r->choice, err, errlen)))
        return st;
    r->kernel = kt->rows[r->choice.kernel].name;
    if ((st = asm_launch(kt, r->choice.kernel, r->choice.log2_split, r, err, errlen)))
        return st;
    unsigned char w[A4W4_MAX_KERNELS];
    if ((st = a4w4_heuristic_winners_sampled(kt, p, M, N, A4W4_ROUTE_PERMUTATIONS, w, err,
                                             errlen)))
        return st;
    r->ncand = winners_to_sorted(kt, w, r->cand);
    if ((st = a4w4_heuristic_winners_any_order(kt, p, M, N, w, err, errlen)))
        return st;
    r->ncand_any = winners_to_sorted(kt, w, r->cand_any);
    for (size_t i = 0; i < r->ncand_any; i++) {
        const a4w4_asm_kernel *k = &kt->rows[r->cand_any[i]];
        int split = 1;
        if (k->split_k) {
            /* the split this kernel wins with: its last minimal-round split */
            int splits[4];
            int ns = split_list(k, p->log2_k_split, splits);
            a4w4_heur_choice b = candidate(k, r->cand_any[i], splits[0], M, N, p->num_cu);
            for (int s = 1; s < ns; s++) {
                a4w4_heur_choice c = candidate(k, r->cand_any[i], splits[s], M, N, p->num_cu);
                if (c.rounds == b.rounds)
                    b = c;
            }
            split = b.split;
        }
        r->cand_fit[i] = a4w4_tile_fit(k->tile_m, k->tile_n, split, M, N);
    }
    return A4W4_OK;
}

void a4w4_kernel_label(const a4w4_kernel_table *kt, int i, char *buf, size_t len)
{
    if (!kt || i < 0 || (size_t)i >= kt->n) {
        snprintf(buf, len, "?");
        return;
    }
    const a4w4_asm_kernel *k = &kt->rows[i];
    snprintf(buf, len, "%dx%d%s%s", k->tile_m, k->tile_n, k->split_k ? "/splitK" : "",
             k->bpreshuffle ? "" : "/noBpreShuffle");
}

static int popcount(unsigned v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Other possible winners that carry fit flags, in cand_any order. */
static int other_flagged(const a4w4_route *r, size_t j)
{
    return r->cand_any[j] != r->kernel_index && r->cand_fit[j] != 0;
}

size_t a4w4_route_warning_count(const a4w4_route *r)
{
    size_t n = (size_t)popcount(r->fit) + (r->tuned_not_in_kernels ? 1 : 0);
    if (r->ncand_any > 1)
        n++;
    for (size_t j = 0; j < r->ncand_any; j++)
        if (other_flagged(r, j))
            n++;
    return n;
}

static void fit_text(unsigned bit, int tile_m, int tile_n, int split, int log2, int M, int N,
                     char *buf, size_t len)
{
    switch (bit) {
    case A4W4_FIT_TILE_N_GT_N:
        snprintf(buf, len, "tile_N %d > N %d: the N tile runs past the output", tile_n, N);
        break;
    case A4W4_FIT_N_PARTIAL:
        snprintf(buf, len, "N %d %% tile_N %d = %d: the last N tile is partial", N, tile_n,
                 N % tile_n);
        break;
    case A4W4_FIT_TILE_M_GT_8M:
        snprintf(buf, len, "tile_M %d > 8*M = %lld: the M tile is mostly padding rows", tile_m,
                 8LL * M);
        break;
    default:
        snprintf(buf, len,
                 "split-K %d (log2_k_split %d): partials added with bf16 atomics, the result is "
                 "only bounded (contracts §4.1)",
                 split, log2);
        break;
    }
}

void a4w4_route_warning(const a4w4_route *r, const a4w4_kernel_table *kt, size_t i, char *buf,
                        size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = '\0';
    for (unsigned bit = 1; bit <= A4W4_FIT_SPLIT_K; bit <<= 1) {
        if (!(r->fit & bit))
            continue;
        if (i-- == 0) {
            fit_text(bit, r->tile_m, r->tile_n, r->split, r->log2_k_split, r->M, r->N, buf, len);
            return;
        }
    }
    if (r->tuned_not_in_kernels && i-- == 0) {
        snprintf(buf, len,
                 "tuned ASM kernel %s is not in the kernel table %s (AITER raises 'not find "
                 "kernel')",
                 r->kernel, kt && kt->file ? kt->file : "");
        return;
    }
    if (r->ncand_any > 1 && i-- == 0) {
        snprintf(buf, len,
                 "order-dependent: %zu kernels can win (AITER walks its kernel table in "
                 "unordered_map order)",
                 r->ncand_any);
        return;
    }
    for (size_t j = 0; j < r->ncand_any; j++) {
        if (!other_flagged(r, j) || i-- != 0)
            continue;
        char label[64];
        a4w4_kernel_label(kt, r->cand_any[j], label, sizeof label);
        const a4w4_asm_kernel *k = &kt->rows[r->cand_any[j]];
        int used = snprintf(buf, len, "possible winner %s:", label);
        for (unsigned bit = 1; bit <= A4W4_FIT_SPLIT_K && used >= 0 && (size_t)used < len;
             bit <<= 1) {
            if (!(r->cand_fit[j] & bit))
                continue;
            char t[160];
            int split = bit == A4W4_FIT_SPLIT_K ? 2 : 1;
            fit_text(bit, k->tile_m, k->tile_n, split, -1, r->M, r->N, t, sizeof t);
            /* keep the clause before the colon: the rule, not the explanation */
            char *colon = strchr(t, ':');
            if (colon && bit != A4W4_FIT_SPLIT_K)
                *colon = '\0';
            if (bit == A4W4_FIT_SPLIT_K)
                snprintf(t, sizeof t, "split-K");
            used += snprintf(buf + used, len - (size_t)used, " %s;", t);
        }
        if (used > 0 && (size_t)used < len && buf[used - 1] == ';')
            buf[used - 1] = '\0';
        return;
    }
}
