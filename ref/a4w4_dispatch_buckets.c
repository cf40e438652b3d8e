/* a4w4_dispatch_buckets.c — the padded-M buckets of a tuned table's M values (contracts §5.1,
 * a4w4_dispatch.h): which M the lookup's steps send to each tuned M. Pure; prints nothing. */
#include <stdlib.h>

#include "a4w4_dispatch.h"

static int cmp_bucket(const void *a, const void *b)
{
    const a4w4_m_bucket *x = a, *y = b;
    if (x->lo != y->lo)
        return (x->lo > y->lo) - (x->lo < y->lo);
    if (x->gl != y->gl)
        return (x->gl > y->gl) - (x->gl < y->gl);
    return (x->n_rule > y->n_rule) - (x->n_rule < y->n_rule);
}

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* Append a bucket when there is room; always count it. */
static void put(a4w4_m_bucket *out, size_t cap, size_t *k, a4w4_m_bucket b)
{
    if (*k < cap)
        out[*k] = b;
    (*k)++;
}

/* The buckets of one distinct tuned value v. */
static void buckets_of(int v, a4w4_m_bucket *out, size_t cap, size_t *k)
{
    int any = 0;
    if (a4w4_padded_m(v, 1, 1, 0) == v) { /* gl 0 does not depend on N or K */
        int lo = v;
        while (lo > 1 && a4w4_padded_m(lo - 1, 1, 1, 0) == v)
            lo--;
        put(out, cap, k, (a4w4_m_bucket){v, 0, lo, v, 0});
        any = 1;
    }
    if (is_pow2(v)) {
        put(out, cap, k, (a4w4_m_bucket){v, 1, v == 1 ? 1 : v / 2 + 1, v, v > 8192 ? -1 : 0});
        if (v == 8192)
            put(out, cap, k, (a4w4_m_bucket){v, 1, 8193, A4W4_DIM_MAX, 1});
        any = 1;
    }
    if (!any)
        put(out, cap, k, (a4w4_m_bucket){v, -1, v, v, 0});
}

size_t a4w4_m_buckets(const int *m, size_t n, a4w4_m_bucket *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i] < 1 || m[i] > A4W4_DIM_MAX)
            continue;
        size_t j = 0;
        while (j < i && m[j] != m[i])
            j++;
        if (j == i) /* the first time this value occurs */
            buckets_of(m[i], out, cap, &k);
    }
    if (out)
        qsort(out, k < cap ? k : cap, sizeof *out, cmp_bucket);
    return k;
}
