/* csv_mutator.c — structure-aware mutations of CSV text (see csv_mutator.h). */
#include "csv_mutator.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define MAX_ROWS 4096
#define MAX_FIELDS 64

/* Integer texts at the edges of the readers' rules (int, 2^22 / 2^30 / 2^32 shape limits,
 * size_t, sign and syntax variants). */
static const char *const interesting[] = {
    "0", "1", "-1", "2", "7", "31", "32", "33", "64", "255", "256", "512", "4096",
    "46341", "65535", "65536", "65537", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "4294967295", "4294967296", "4294967297", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616", "1073741824",
    "1073741825", "4194304", "4194305", "4194272", "1e3", "1.5", " 7", "7 ", "+7", "07",
    "0x10", "", "-0", "nan", "inf", "\"1\"", "1;2", "\"\"", "\"a,b\"", "\"a\"\"b\"", NULL};

typedef struct {
    char **f;
    size_t n;
    int verbatim; /* a comment or blank line: f[0] is the whole line */
} row;

typedef struct {
    row r[MAX_ROWS];
    size_t n;
    int crlf;
    fz_rng rng;
    const fz_csv_dict *dict;
} table;

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        abort();
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static char *dup_s(const char *s)
{
    return dup_n(s, strlen(s));
}

static void row_free(row *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->f[i]);
    free(r->f);
    memset(r, 0, sizeof *r);
}

static void row_push(row *r, char *field)
{
    if (r->n == MAX_FIELDS) {
        free(field);
        return;
    }
    char **f = realloc(r->f, (r->n + 1) * sizeof *f);
    if (!f)
        abort();
    r->f = f;
    r->f[r->n++] = field;
}

static void parse_line(row *r, const char *s, size_t n)
{
    memset(r, 0, sizeof *r);
    if (n == 0 || s[0] == '#') {
        r->verbatim = 1;
        row_push(r, dup_n(s, n));
        return;
    }
    size_t start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == ',') {
            row_push(r, dup_n(s + start, i - start));
            start = i + 1;
        }
}

static void parse(table *t, const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t start = 0;
    t->n = 0;
    t->crlf = 0;
    for (size_t i = 0; i <= size && t->n < MAX_ROWS; i++) {
        if (i < size && s[i] != '\n')
            continue;
        if (i == size && start == size)
            break;
        size_t len = i - start;
        if (len && s[start + len - 1] == '\r') {
            len--;
            t->crlf = 1;
        }
        parse_line(&t->r[t->n++], s + start, len);
        start = i + 1;
    }
}

/* Text of the table into out (at most max bytes); returns the length or (size_t)-1. */
static size_t serialize(const table *t, uint8_t *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        const row *r = &t->r[i];
        for (size_t j = 0; j < r->n; j++) {
            size_t len = strlen(r->f[j]);
            if (k + len + 3 > max)
                return (size_t)-1;
            if (j)
                out[k++] = ',';
            memcpy(out + k, r->f[j], len);
            k += len;
        }
        if (k + 2 > max)
            return (size_t)-1;
        if (t->crlf)
            out[k++] = '\r';
        out[k++] = '\n';
    }
    return k;
}

static long header_index(const table *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->r[i].verbatim)
            return (long)i;
    return -1;
}

/* A random data row (not the header, not verbatim), or -1. */
static long data_row(table *t)
{
    long h = header_index(t);
    if (h < 0)
        return -1;
    size_t cand[MAX_ROWS], nc = 0;
    for (size_t i = (size_t)h + 1; i < t->n; i++)
        if (!t->r[i].verbatim)
            cand[nc++] = i;
    return nc ? (long)cand[fz_below(&t->rng, nc)] : -1;
}

static const char *pick(fz_rng *rng, const char *const *list)
{
    size_t n = 0;
    while (list[n])
        n++;
    return list[fz_below(rng, n)];
}

/* A value for column col (by the header's name for it). */
static char *column_value(table *t, size_t col)
{
    long h = header_index(t);
    const char *name = h >= 0 && col < t->r[h].n ? t->r[h].f[col] : "";
    for (size_t i = 0; i < t->dict->ncolumns; i++)
        if (!strcmp(t->dict->columns[i].column, name) && !fz_one_in(&t->rng, 4))
            return dup_s(pick(&t->rng, t->dict->columns[i].values));
    if (fz_one_in(&t->rng, 3)) {
        long o = data_row(t);
        if (o >= 0 && col < t->r[o].n)
            return dup_s(t->r[o].f[col]);
    }
    return dup_s(pick(&t->rng, interesting));
}

/* Let libFuzzer's byte mutator change one field. */
static char *bytes_value(const char *s)
{
    uint8_t buf[256];
    size_t n = strlen(s);
    if (n > 128)
        n = 128;
    memcpy(buf, s, n);
    n = LLVMFuzzerMutate(buf, n, sizeof buf - 1);
    return dup_n((const char *)buf, n);
}

static void set_field(row *r, size_t j, char *v)
{
    free(r->f[j]);
    r->f[j] = v;
}

static void op_field(table *t)
{
    long i = data_row(t);
    if (i < 0 || !t->r[i].n)
        return;
    size_t j = fz_below(&t->rng, t->r[i].n);
    set_field(&t->r[i], j, fz_one_in(&t->rng, 5) ? bytes_value(t->r[i].f[j]) : column_value(t, j));
}

static void copy_row(row *dst, const row *src)
{
    memset(dst, 0, sizeof *dst);
    dst->verbatim = src->verbatim;
    for (size_t j = 0; j < src->n; j++)
        row_push(dst, dup_s(src->f[j]));
}

/* Insert r (taken over: freed when the table is full) before row at. */
static void insert_row(table *t, size_t at, row r)
{
    if (t->n == MAX_ROWS) {
        row_free(&r);
        return;
    }
    memmove(&t->r[at + 1], &t->r[at], (t->n - at) * sizeof t->r[0]);
    t->r[at] = r;
    t->n++;
}

static void op_dup_row(table *t, int change)
{
    long i = data_row(t);
    long h = header_index(t);
    if (i < 0 || t->n == MAX_ROWS)
        return;
    size_t at = (size_t)h + 1 + fz_below(&t->rng, t->n - (size_t)h);
    row r;
    copy_row(&r, &t->r[i]);
    if (change && r.n) {
        size_t j = fz_below(&t->rng, r.n);
        set_field(&r, j, column_value(t, j));
    }
    insert_row(t, at, r);
}

static void op_del_row(table *t)
{
    long i = data_row(t);
    if (i < 0)
        return;
    row_free(&t->r[i]);
    memmove(&t->r[i], &t->r[i + 1], (t->n - (size_t)i - 1) * sizeof t->r[0]);
    t->n--;
}

static void op_move_row(table *t)
{
    long i = data_row(t), j = data_row(t);
    if (i < 0 || j < 0)
        return;
    row tmp = t->r[i];
    t->r[i] = t->r[j];
    t->r[j] = tmp;
}

static size_t header_width(table *t)
{
    long h = header_index(t);
    return h >= 0 ? t->r[h].n : 0;
}

static void op_swap_columns(table *t)
{
    size_t w = header_width(t);
    if (w < 2)
        return;
    size_t a = fz_below(&t->rng, w), b = fz_below(&t->rng, w);
    for (size_t i = 0; i < t->n; i++) {
        row *r = &t->r[i];
        if (r->verbatim || a >= r->n || b >= r->n)
            continue;
        char *tmp = r->f[a];
        r->f[a] = r->f[b];
        r->f[b] = tmp;
    }
}

static void op_del_column(table *t)
{
    size_t w = header_width(t);
    if (w < 1)
        return;
    size_t c = fz_below(&t->rng, w);
    for (size_t i = 0; i < t->n; i++) {
        row *r = &t->r[i];
        if (r->verbatim || c >= r->n)
            continue;
        free(r->f[c]);
        memmove(&r->f[c], &r->f[c + 1], (r->n - c - 1) * sizeof r->f[0]);
        r->n--;
    }
}

static void op_add_column(table *t)
{
    long h = header_index(t);
    if (h < 0)
        return;
    const char *name = fz_one_in(&t->rng, 2) ? pick(&t->rng, t->dict->header) : "extra";
    for (size_t i = (size_t)h; i < t->n; i++)
        if (!t->r[i].verbatim)
            row_push(&t->r[i], i == (size_t)h ? dup_s(name) : column_value(t, t->r[h].n - 1));
}

static void op_arity(table *t)
{
    long i = data_row(t);
    if (i < 0)
        return;
    row *r = &t->r[i];
    if (r->n > 1 && fz_one_in(&t->rng, 2)) {
        free(r->f[--r->n]);
        return;
    }
    row_push(r, dup_s(pick(&t->rng, interesting)));
}

static void op_header(table *t)
{
    long h = header_index(t);
    if (h < 0 || !t->r[h].n)
        return;
    size_t j = fz_below(&t->rng, t->r[h].n);
    const char *name = pick(&t->rng, t->dict->header);
    switch (fz_below(&t->rng, 3)) {
    case 0:
        set_field(&t->r[h], j, dup_s(name));
        break;
    case 1: { /* case changed or spaced */
        char *s = dup_s(t->r[h].f[j]);
        if (s[0])
            s[0] = (char)(s[0] ^ 0x20);
        set_field(&t->r[h], j, s);
        break;
    }
    default:
        set_field(&t->r[h], j, bytes_value(t->r[h].f[j]));
    }
}

/* Wrap s as pre + s + post. */
static char *wrap(const char *pre, const char *s, const char *post)
{
    size_t a = strlen(pre), b = strlen(s), c = strlen(post);
    char *p = malloc(a + b + c + 1);
    if (!p)
        abort();
    memcpy(p, pre, a);
    memcpy(p + a, s, b);
    memcpy(p + a + b, post, c + 1);
    return p;
}

static void op_decorate(table *t)
{
    long i = fz_one_in(&t->rng, 4) ? header_index(t) : data_row(t);
    if (i < 0 || !t->r[i].n)
        return;
    row *r = &t->r[i];
    size_t j = fz_below(&t->rng, r->n);
    static const char *const pre[] = {"\"", " ", "\t", "\"", "\xEF\xBB\xBF", "\"x\"\""};
    static const char *const post[] = {"\"", " ", " \r", "\"\"", "", "\""};
    size_t k = fz_below(&t->rng, sizeof pre / sizeof pre[0]);
    set_field(r, j, wrap(pre[k], r->f[j], post[k]));
}

static void op_line(table *t)
{
    row r;
    memset(&r, 0, sizeof r);
    r.verbatim = 1;
    switch (fz_below(&t->rng, 4)) {
    case 0:
        row_push(&r, dup_s("# comment, with a comma"));
        break;
    case 1:
        row_push(&r, dup_s(""));
        break;
    case 2: { /* a line past the 1022-character line buffers */
        size_t n = 1000 + fz_below(&t->rng, 100);
        char *s = malloc(n + 1);
        if (!s)
            abort();
        memset(s, 'x', n);
        s[n] = '\0';
        r.verbatim = 0;
        row_push(&r, s);
        break;
    }
    default:
        t->crlf = !t->crlf;
        return;
    }
    insert_row(t, fz_below(&t->rng, t->n + 1), r);
}

/* A new data row with a value for every header column. */
static void op_fresh_row(table *t)
{
    long h = header_index(t);
    if (h < 0)
        return;
    row r;
    memset(&r, 0, sizeof r);
    for (size_t j = 0; j < t->r[h].n; j++)
        row_push(&r, column_value(t, j));
    insert_row(t, (size_t)h + 1 + fz_below(&t->rng, t->n - (size_t)h), r);
}

static void apply_one(table *t)
{
    switch (fz_below(&t->rng, 14)) {
    case 0: case 1: case 2: op_field(t); break;
    case 3: op_dup_row(t, 0); break;
    case 4: op_dup_row(t, 1); break;
    case 5: op_del_row(t); break;
    case 6: op_move_row(t); break;
    case 7: op_swap_columns(t); break;
    case 8: op_del_column(t); break;
    case 9: op_add_column(t); break;
    case 10: op_arity(t); break;
    case 11: op_header(t); break;
    case 12: fz_one_in(&t->rng, 2) ? op_decorate(t) : op_line(t); break;
    default: op_fresh_row(t); break;
    }
}

size_t fz_csv_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed,
                     const fz_csv_dict *dict)
{
    static table t; /* large: keep it off the stack (libFuzzer runs one mutation at a time) */
    fz_rng_seed(&t.rng, seed);
    t.dict = dict;
    if (fz_one_in(&t.rng, 8) || size == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    parse(&t, data, size);
    size_t nops = 1 + fz_below(&t.rng, 3);
    for (size_t k = 0; k < nops; k++)
        apply_one(&t);
    uint8_t *out = malloc(max_size + 1);
    if (!out)
        abort();
    size_t n = serialize(&t, out, max_size);
    for (size_t i = 0; i < t.n; i++)
        row_free(&t.r[i]);
    if (n == (size_t)-1) {
        free(out);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memcpy(data, out, n);
    free(out);
    return n;
}
