/* a4w4_layout.c — the three byte layouts of contracts §3 in two independent forms.
 *
 * Closed forms: per-element index maps written digit by digit from the formulas of docs/contracts.md
 * (§3.1, §3.2, §3.3), used by a4w4_preshuffle / a4w4_scale_swizzle / a4w4_act_scale_shuffle
 * and their inverses.
 *
 * View forms: a4w4_view_permute, a generic "row-major view + axis permutation" engine that
 * only knows shapes and strides, plus the three layouts expressed as the "as a view" forms of docs/contracts.md §3
 * lines. The view forms never call the closed-form maps (nor the closed-form padding), so
 * tests that hold the two equal check one against the other.
 *
 * Both forms were checked byte for byte against the AITER-produced golden bundles in
 * cases/golden (w_fp4_shuffled, w_scale_swizzled, a_scale*_shuffled); tests/ref/test_layout.c
 * repeats that check. */
#include "a4w4_layout.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------ */

/* a*b without wrap-around; 0 (and *ok = 0) on overflow. */
static size_t mul_ok(size_t a, size_t b, int *ok)
{
    if (a != 0 && b > (size_t)-1 / a) {
        *ok = 0;
        return 0;
    }
    return a * b;
}

/* ceil(x / m) * m for m > 0; 0 when it would overflow. */
static size_t round_up(size_t x, size_t m)
{
    size_t q = x / m + (x % m != 0);
    if (q > (size_t)-1 / m)
        return 0;
    return q * m;
}

/* ---- 3.1 weight preshuffle ---------------------------------------------------------- */

int a4w4_preshuffle_supported(size_t N, size_t K)
{
    /* K % 64 == 0 is (K/2) % 32 == 0 with K even. */
    return N >= 1 && K >= 1 && N % 16 == 0 && K % 64 == 0;
}

size_t a4w4_preshuffle_index(size_t N, size_t K, size_t n, size_t kb)
{
    size_t Kb = K / 2;
    size_t n0 = n / 16, n1 = n % 16;
    size_t k0 = kb / 32, k1 = (kb % 32) / 16, k2 = kb % 16;
    (void)N;
    /* contracts §3.1: dst[(((n0*(Kb/32) + k0)*2 + k1)*16 + n1)*16 + k2] */
    return (((n0 * (Kb / 32) + k0) * 2 + k1) * 16 + n1) * 16 + k2;
}

/* Shape check shared by the closed form and its inverse. */
static int preshuffle_check(const void *a, size_t N, size_t K, const void *b)
{
    if (!a || !b)
        return A4W4_EINVAL;
    if (!a4w4_preshuffle_supported(N, K))
        return A4W4_EUNSUPPORTED;
    int ok = 1;
    (void)mul_ok(N, K / 2, &ok);
    return ok ? A4W4_OK : A4W4_EINVAL;
}

int a4w4_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    int st = preshuffle_check(w, N, K, dst);
    if (st != A4W4_OK)
        return st;
    size_t Kb = K / 2;
    for (size_t n = 0; n < N; n++)
        for (size_t kb = 0; kb < Kb; kb++)
            dst[a4w4_preshuffle_index(N, K, n, kb)] = w[n * Kb + kb];
    return A4W4_OK;
}

int a4w4_unpreshuffle(const uint8_t *src, size_t N, size_t K, uint8_t *w)
{
    int st = preshuffle_check(src, N, K, w);
    if (st != A4W4_OK)
        return st;
    size_t Kb = K / 2;
    for (size_t n = 0; n < N; n++)
        for (size_t kb = 0; kb < Kb; kb++)
            w[n * Kb + kb] = src[a4w4_preshuffle_index(N, K, n, kb)];
    return A4W4_OK;
}

/* ---- 3.2 weight-scale swizzle ------------------------------------------------------- */

int a4w4_scale_swizzle_supported(int ndim, size_t rows, size_t cols)
{
    return ndim == 2 && rows >= 1 && cols >= 1 && rows % 32 == 0 && cols % 8 == 0;
}

size_t a4w4_scale_swizzle_index(size_t rows, size_t cols, size_t r, size_t c)
{
    size_t d0 = r / 32, d1 = (r % 32) / 16, d2 = r % 16;
    size_t d3 = c / 8, d4 = (c % 8) / 4, d5 = c % 4;
    (void)rows;
    /* contracts §3.2: dst[((((d0*(cols/8) + d3)*4 + d5)*16 + d2)*2 + d4)*2 + d1] */
    return ((((d0 * (cols / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1;
}

static int swizzle_check(const void *a, size_t rows, size_t cols, const void *b)
{
    if (!a || !b)
        return A4W4_EINVAL;
    if (!a4w4_scale_swizzle_supported(2, rows, cols))
        return A4W4_EUNSUPPORTED;
    int ok = 1;
    (void)mul_ok(rows, cols, &ok);
    return ok ? A4W4_OK : A4W4_EINVAL;
}

int a4w4_scale_swizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    int st = swizzle_check(src, rows, cols, dst);
    if (st != A4W4_OK)
        return st;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            dst[a4w4_scale_swizzle_index(rows, cols, r, c)] = src[r * cols + c];
    return A4W4_OK;
}

int a4w4_scale_unswizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    int st = swizzle_check(src, rows, cols, dst);
    if (st != A4W4_OK)
        return st;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            dst[r * cols + c] = src[a4w4_scale_swizzle_index(rows, cols, r, c)];
    return A4W4_OK;
}

/* ---- 3.3 activation-scale pad + shuffle --------------------------------------------- */

size_t a4w4_act_scale_padded_rows(size_t M)
{
    return round_up(M, 256);
}

size_t a4w4_act_scale_padded_cols(size_t cols)
{
    return round_up(cols, 8);
}

size_t a4w4_act_scale_shuffle_index(size_t M, size_t cols, size_t r, size_t c)
{
    return a4w4_scale_swizzle_index(a4w4_act_scale_padded_rows(M),
                                    a4w4_act_scale_padded_cols(cols), r, c);
}

/* Padded shape of [M, cols]; A4W4_EINVAL on NULLs, a zero extent or size overflow. */
static int act_scale_check(const void *a, size_t M, size_t cols, const void *b, size_t *prow,
                           size_t *pcol)
{
    if (!a || !b || M == 0 || cols == 0)
        return A4W4_EINVAL;
    *prow = a4w4_act_scale_padded_rows(M);
    *pcol = a4w4_act_scale_padded_cols(cols);
    int ok = 1;
    (void)mul_ok(*prow, *pcol, &ok);
    if (*prow == 0 || *pcol == 0 || !ok)
        return A4W4_EINVAL;
    return A4W4_OK;
}

int a4w4_act_scale_shuffle(const uint8_t *src, size_t M, size_t cols, uint8_t row_fill,
                           uint8_t col_fill, uint8_t *dst)
{
    size_t prow, pcol;
    int st = act_scale_check(src, M, cols, dst, &prow, &pcol);
    if (st != A4W4_OK)
        return st;
    for (size_t r = 0; r < prow; r++) {
        for (size_t c = 0; c < pcol; c++) {
            uint8_t v;
            if (c >= cols)
                v = col_fill; /* pad column, any row: the corner cells take col_fill */
            else if (r >= M)
                v = row_fill;
            else
                v = src[r * cols + c];
            dst[a4w4_scale_swizzle_index(prow, pcol, r, c)] = v;
        }
    }
    return A4W4_OK;
}

int a4w4_act_scale_unshuffle(const uint8_t *src, size_t M, size_t cols, uint8_t *dst)
{
    size_t prow, pcol;
    int st = act_scale_check(src, M, cols, dst, &prow, &pcol);
    if (st != A4W4_OK)
        return st;
    for (size_t r = 0; r < M; r++)
        for (size_t c = 0; c < cols; c++)
            dst[r * cols + c] = src[a4w4_scale_swizzle_index(prow, pcol, r, c)];
    return A4W4_OK;
}

/* ---- generic view/permute engine ---------------------------------------------------- */

/* Copy one element of elem bytes. Fixed sizes compile to single moves. */
static void copy_elem(unsigned char *d, const unsigned char *s, size_t elem)
{
    switch (elem) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, elem); break;
    }
}

int a4w4_view_permute(const void *src, size_t elem, int ndim, const size_t *shape,
                      const int *perm, void *dst)
{
    if (!src || !dst || !shape || !perm || elem == 0 || ndim < 1 || ndim > A4W4_VIEW_MAX_DIMS)
        return A4W4_EINVAL;

    int seen[A4W4_VIEW_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++) {
        if (perm[i] < 0 || perm[i] >= ndim || seen[perm[i]])
            return A4W4_EINVAL;
        seen[perm[i]] = 1;
    }

    /* Row-major strides of the source view, in elements; total element count. */
    size_t sstride[A4W4_VIEW_MAX_DIMS];
    size_t total = 1;
    int ok = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        sstride[i] = total;
        total = mul_ok(total, shape[i], &ok);
    }
    (void)mul_ok(total, elem, &ok);
    if (!ok)
        return A4W4_EINVAL;
    if (total == 0)
        return A4W4_OK;

    /* Destination axis i walks source axis perm[i]: extent and source stride. */
    size_t dshape[A4W4_VIEW_MAX_DIMS], dstride[A4W4_VIEW_MAX_DIMS], idx[A4W4_VIEW_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        dshape[i] = shape[perm[i]];
        dstride[i] = sstride[perm[i]];
        idx[i] = 0;
    }

    /* Odometer over the destination in row-major order, gathering through the strides. */
    const unsigned char *s = (const unsigned char *)src;
    unsigned char *d = (unsigned char *)dst;
    size_t soff = 0;
    for (size_t o = 0; o < total; o++) {
        copy_elem(d + o * elem, s + soff * elem, elem);
        for (int a = ndim - 1; a >= 0; a--) {
            idx[a]++;
            soff += dstride[a];
            if (idx[a] < dshape[a])
                break;
            soff -= dstride[a] * dshape[a];
            idx[a] = 0;
        }
    }
    return A4W4_OK;
}

int a4w4_preshuffle_view(const uint8_t *w, size_t N, size_t K, uint8_t *dst)
{
    if (!w || !dst)
        return A4W4_EINVAL;
    if (!a4w4_preshuffle_supported(N, K))
        return A4W4_EUNSUPPORTED;
    /* contracts §3.1: view (N/16, 16, Kb/32, 2, 16) permuted (0, 2, 3, 1, 4). */
    const size_t shape[5] = {N / 16, 16, (K / 2) / 32, 2, 16};
    const int perm[5] = {0, 2, 3, 1, 4};
    return a4w4_view_permute(w, 1, 5, shape, perm, dst);
}

int a4w4_scale_swizzle_view(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst)
{
    if (!src || !dst)
        return A4W4_EINVAL;
    if (!a4w4_scale_swizzle_supported(2, rows, cols))
        return A4W4_EUNSUPPORTED;
    /* contracts §3.2: view (rows/32, 2, 16, cols/8, 2, 4) permuted (0, 3, 5, 2, 4, 1). */
    const size_t shape[6] = {rows / 32, 2, 16, cols / 8, 2, 4};
    const int perm[6] = {0, 3, 5, 2, 4, 1};
    return a4w4_view_permute(src, 1, 6, shape, perm, dst);
}

int a4w4_act_scale_shuffle_view(const uint8_t *src, size_t M, size_t cols, uint8_t row_fill,
                                uint8_t col_fill, uint8_t *dst)
{
    if (!src || !dst || M == 0 || cols == 0)
        return A4W4_EINVAL;
    /* Padded extents computed here from scratch (not through the closed-form helpers). */
    size_t prow = (M + 255) / 256 * 256, pcol = (cols + 7) / 8 * 8;
    if (prow < M || pcol < cols)
        return A4W4_EINVAL;
    int ok = 1;
    size_t n = mul_ok(prow, pcol, &ok);
    if (!ok)
        return A4W4_EINVAL;

    /* Pad like torch: a [prow, pcol] buffer filled with row_fill, the pad columns of every
     * row (corner included) overwritten with col_fill, the valid block copied in. */
    uint8_t *pad = (uint8_t *)malloc(n);
    if (!pad)
        return A4W4_ENOMEM;
    memset(pad, row_fill, n);
    for (size_t r = 0; r < prow; r++) {
        if (pcol > cols)
            memset(pad + r * pcol + cols, col_fill, pcol - cols);
        if (r < M)
            memcpy(pad + r * pcol, src + r * cols, cols);
    }
    /* contracts §3.3 then §3.2 over the padded shape. */
    const size_t shape[6] = {prow / 32, 2, 16, pcol / 8, 2, 4};
    const int perm[6] = {0, 3, 5, 2, 4, 1};
    int st = a4w4_view_permute(pad, 1, 6, shape, perm, dst);
    free(pad);
    return st;
}
