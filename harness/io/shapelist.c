/* shapelist.c — shape lists for `route --cases` (see shapelist.h), read with ref/'s CSV
 * reader so their errors name file, line and column as the dispatch tables' do. */
#include "shapelist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "a4w4_csv.h"
#include "a4w4_dispatch.h"
#include "errmsg.h"

static const char *const SHAPE_COLS[3] = {"M", "N", "K"};

/* Drop the records whose first field starts with '#' (the cases/ CSVs carry comment lines). */
static void drop_comments(a4w4_csv_doc *d)
{
    size_t keep = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->r[i].n && d->r[i].f[0].text && d->r[i].f[0].text[0] == '#')
            a4w4_csv_record_free(&d->r[i]);
        else
            d->r[keep++] = d->r[i];
    }
    d->n = keep;
}

/* The rows of d (after its header) as M, N, K triples into s, 3 ints per row. */
static int read_shapes(const char *path, const a4w4_csv_doc *d, const int *col, int *s,
                       char *err, size_t errlen)
{
    int st = A4W4_OK;
    for (size_t i = 1; i < d->n && !st; i++)
        for (int j = 0; j < 3 && !st; j++)
            st = a4w4_csv_field_int(path, &d->r[i], col[j], SHAPE_COLS[j], 1, A4W4_DIM_MAX,
                                    &s[3 * (i - 1) + j], err, errlen);
    return st;
}

int a4w4_shapelist_load(const char *path, int **shapes, size_t *n, char *err, size_t errlen)
{
    if (!path || !shapes || !n)
        return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL, "shape list: NULL argument");
    *shapes = NULL;
    *n = 0;
    a4w4_csv_doc d;
    int st = a4w4_csv_read(path, &d, err, errlen);
    if (st)
        return st;
    drop_comments(&d);
    if (d.n == 0) {
        a4w4_csv_doc_free(&d);
        return a4w4_errmsg(err, errlen, A4W4_EINVAL, NULL,
                           "%s: empty shape list (no header, no rows)", path);
    }
    int col[3];
    if ((st = a4w4_csv_required_cols(path, &d, SHAPE_COLS, 3, "a shape list names M, N and K",
                                     col, err, errlen)) ||
        (st = a4w4_csv_rows_present(path, &d, "empty shape list (header only)", err, errlen)))
        return st;
    int *s = malloc(3 * (d.n - 1) * sizeof *s);
    if (!s) {
        a4w4_csv_doc_free(&d);
        return a4w4_errmsg(err, errlen, A4W4_ENOMEM, NULL, "%s: out of memory", path);
    }
    if ((st = read_shapes(path, &d, col, s, err, errlen))) {
        free(s);
    } else {
        *shapes = s;
        *n = d.n - 1;
    }
    a4w4_csv_doc_free(&d);
    return st;
}
