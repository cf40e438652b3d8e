/* integrity.c — output guards and operand digests around a backend call (see integrity.h). */
#include "integrity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"

int a4w4_out_alloc(a4w4_out_buf *o, size_t nrows, size_t ncols)
{
    size_t pad_rows = (nrows + 31) / 32 * 32 - nrows;
    o->n = nrows * ncols;
    o->before = A4W4_OUT_GUARD;
    o->after = pad_rows * ncols + A4W4_OUT_GUARD;
    o->base = malloc((o->before + o->n + o->after) * sizeof *o->base);
    o->y = o->base ? o->base + o->before : NULL;
    return o->base ? A4W4_OK : A4W4_ENOMEM;
}

void a4w4_out_free(a4w4_out_buf *o)
{
    free(o->base);
    o->base = o->y = NULL;
}

void a4w4_out_poison(a4w4_out_buf *o)
{
    size_t total = o->before + o->n + o->after;
    for (size_t k = 0; k < total; k++)
        o->base[k] = A4W4_POISON_BF16;
}

int a4w4_out_breached(const a4w4_out_buf *o, char *why, size_t len)
{
    size_t first_before = 0, n_before = 0, last_after = 0, n_after = 0;
    for (size_t k = 0; k < o->before; k++)
        if (o->base[k] != A4W4_POISON_BF16) {
            first_before = first_before ? first_before : o->before - k;
            n_before++;
        }
    const uint16_t *after = o->y + o->n;
    for (size_t k = 0; k < o->after; k++)
        if (after[k] != A4W4_POISON_BF16) {
            last_after = k + 1;
            n_after++;
        }
    if (n_after)
        snprintf(why, len, "wrote %zu value%s past the end of y (up to y[%zu + %zu]: the padding "
                 "rows and guard after its %zu outputs)", n_after, n_after == 1 ? "" : "s",
                 o->n, last_after - 1, o->n);
    else if (n_before)
        snprintf(why, len, "wrote %zu value%s before y (down to y[-%zu])", n_before,
                 n_before == 1 ? "" : "s", first_before);
    return n_after || n_before;
}

/* ---- operand digests ----------------------------------------------------------------------- */

/* Fold bytes p[0..n) into h, 8 bytes a step (a multiply-xorshift mix: a digest, not a
 * cryptographic hash; it only has to notice a kernel's writes). */
static unsigned long long fold(unsigned long long h, const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

/* Rows idx[0..n) (ascending) of g, row_bytes each, grouped by `group` rows (1: the rows
 * themselves; 16 or 32: the whole preshuffle or swizzle group holding a row, contiguous in
 * the layout); every row when idx is NULL. */
static unsigned long long fold_rows(const a4w4_guarded *g, const size_t *idx, size_t n,
                                    size_t row_bytes, size_t group)
{
    unsigned long long h = 0xCBF29CE484222325ull;
    if (!g->data)
        return h;
    if (!idx)
        return fold(h, g->data, g->len);
    size_t last = (size_t)-1, span = row_bytes * group;
    for (size_t i = 0; i < n; i++) {
        size_t grp = idx[i] / group;
        if (grp == last || (grp + 1) * span > g->len)
            continue;
        h = fold(h, g->data + grp * span, span);
        last = grp;
    }
    return h;
}

void a4w4_case_digest_of(const a4w4_case_data *d, const a4w4_sample *s, a4w4_case_digest *out)
{
    size_t K2 = d->K / 2, nb = d->K / 32;
    int all = !s || s->full || !s->rows || !s->cols;
    const size_t *rows = all ? NULL : s->rows, *cols = all ? NULL : s->cols;
    size_t nr = all ? 0 : s->nrows, nc = all ? 0 : s->ncols;
    out->h[0] = fold_rows(&d->a_fp4, rows, nr, K2, 1);
    out->h[1] = fold_rows(&d->a_scale, rows, nr, nb, 1);
    out->h[2] = fold_rows(&d->w_fp4, cols, nc, K2, 1);
    out->h[3] = fold_rows(&d->w_scale, cols, nc, nb, 1);
    out->h[4] = fold_rows(&d->a_scale_shuffled, NULL, 0, 0, 1);
    out->h[5] = fold_rows(&d->w_fp4_shuffled, cols, nc, K2, 16);
    out->h[6] = fold_rows(&d->w_scale_swizzled, cols, nc, nb, 32);
}

int a4w4_case_tampered(const a4w4_case_data *d, const a4w4_sample *s,
                       const a4w4_case_digest *before, char *why, size_t len)
{
    static const char *const names[A4W4_DIGEST_BUFFERS] = {
        "a_fp4", "a_scale", "w_fp4", "w_scale", "a_scale_shuffled", "w_fp4_shuffled",
        "w_scale_swizzled"};
    const char *which = NULL;
    if (!a4w4_case_guards_intact(d, &which)) {
        snprintf(why, len, "wrote out of bounds: the guard zone after %s changed", which);
        return 1;
    }
    a4w4_case_digest now;
    a4w4_case_digest_of(d, s, &now);
    for (int i = 0; i < A4W4_DIGEST_BUFFERS; i++)
        if (now.h[i] != before->h[i]) {
            snprintf(why, len, "wrote into its input %s (its bytes changed during the call)",
                     names[i]);
            return 1;
        }
    return 0;
}
