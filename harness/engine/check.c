/* check.c — tensor comparisons (see check.h). */
#include "check.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "grow.h"
#include "judge.h"

static void start(a4w4_check *c, const char *subject, int elem_bytes)
{
    memset(c, 0, sizeof *c);
    snprintf(c->subject, sizeof c->subject, "%s", subject);
    c->elem_bytes = elem_bytes;
}

void a4w4_check_bytes(a4w4_check *c, const char *subject, const uint8_t *got,
                      const uint8_t *expected, size_t rows, size_t cols, const uint8_t *skip)
{
    start(c, subject, 1);
    for (size_t i = 0; i < rows * cols; i++) {
        if (skip && skip[i])
            continue;
        c->checked++;
        if (got[i] != expected[i]) {
            if (!c->mismatches++) {
                c->first_row = i / cols;
                c->first_col = i % cols;
                c->got = got[i];
                c->expected = expected[i];
            }
        }
    }
    c->verdict = c->mismatches ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
}

void a4w4_check_bf16(a4w4_check *c, const char *subject, const uint16_t *got,
                     const uint16_t *expected, size_t rows, size_t cols)
{
    start(c, subject, 2);
    a4w4_judge_grid grid = {cols, NULL, NULL};
    a4w4_comparison j;
    a4w4_judge_exact(&j, &grid, got, expected, rows * cols, A4W4_POISON_IGNORED, NULL);
    c->checked = j.checked;
    c->mismatches = j.mismatches;
    c->max_ulp = j.max_ulp;
    if (j.nrec) {
        c->first_row = j.rec[0].row;
        c->first_col = j.rec[0].col;
        c->got = j.rec[0].got;
        c->expected = j.rec[0].expected;
    }
    c->verdict = c->mismatches ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
}

double a4w4_bounded_use(uint16_t got, float e, double B, double *tol)
{
    *tol = NAN;
    int gn = a4w4_bf16_is_nan(got), en = isnan(e);
    if (gn || en)
        return gn && en ? 0.0 : INFINITY;
    uint32_t u = (uint32_t)got << 16;
    float gf;
    memcpy(&gf, &u, sizeof gf);
    double g = gf;
    if (isinf(e) || isinf(g) || isnan(B))
        return g == e ? 0.0 : INFINITY;
    *tol = B + 0x1p-24 * fabs((double)e) + 0x1p-149;
    return fabs(g - e) / *tol;
}

void a4w4_check_na(a4w4_check *c, const char *subject, const char *why)
{
    start(c, subject, 1);
    c->verdict = A4W4_CHECK_NA;
    snprintf(c->note, sizeof c->note, "%s", why);
}

void a4w4_check_format(const a4w4_check *c, const char *prefix, char *buf, size_t len)
{
    int w = c->elem_bytes * 2;
    switch (c->verdict) {
    case A4W4_CHECK_PASS:
        snprintf(buf, len, "PASS %s %s (%zu checked)%s%s", prefix, c->subject, c->checked,
                 c->note[0] ? "; " : "", c->note);
        break;
    case A4W4_CHECK_FAIL:
        snprintf(buf, len,
                 "FAIL %s %s: first mismatch at (%zu, %zu): got 0x%0*x expected 0x%0*x, "
                 "%zu of %zu mismatch%s%s",
                 prefix, c->subject, c->first_row, c->first_col, w, (unsigned)c->got, w,
                 (unsigned)c->expected, c->mismatches, c->checked, c->note[0] ? "; " : "",
                 c->note);
        break;
    case A4W4_CHECK_NA:
        snprintf(buf, len, "N/A  %s %s: %s", prefix, c->subject, c->note);
        break;
    }
}

a4w4_check *a4w4_check_list_add(a4w4_check_list *l)
{
    if (A4W4_GROW(l->items, l->n + 1, l->cap, 32))
        return NULL;
    memset(&l->items[l->n], 0, sizeof l->items[0]);
    return &l->items[l->n++];
}

void a4w4_check_list_free(a4w4_check_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
