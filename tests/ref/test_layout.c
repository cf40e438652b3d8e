/* test_layout.c — contracts §3 layouts: closed forms vs the view/permute engine, inverses,
 * bijection, support predicates at their edges, act-scale pad fills, hand-worked index
 * examples, the §3.2 tile-locality property, and byte-for-byte agreement with the
 * AITER-produced golden bundles in cases/golden. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_layout.h"
#include "test_util.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif

/* ---- helpers -------------------------------------------------------------------------- */

static tu_rng rng = {0x9E3779B97F4A7C15ull}; /* xorshift64, reseeded per test */

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(tu_xorshift64(&rng) >> 56);
}



/* Closed-form index map vs the view engine on an index-valued tensor: view-permute the
 * source flat indices (uint32) and require map(i) == the position the engine put i at. */
typedef size_t (*map2_fn)(size_t a, size_t b, size_t i, size_t j);

static void check_map_vs_engine(map2_fn map, size_t A, size_t B, size_t rows, size_t cols,
                                int ndim, const size_t *shape, const int *perm)
{
    size_t n = rows * cols;
    uint32_t *src = tu_xmalloc(n * sizeof *src), *dst = tu_xmalloc(n * sizeof *dst);
    for (size_t i = 0; i < n; i++)
        src[i] = (uint32_t)i;
    cr_assert_eq(a4w4_view_permute(src, sizeof *src, ndim, shape, perm, dst), A4W4_OK);
    for (size_t j = 0; j < n; j++) {
        size_t i = dst[j];
        size_t got = map(A, B, i / cols, i % cols);
        if (got != j)
            cr_assert_fail("map(%zu,%zu; %zu,%zu) = %zu, engine puts it at %zu", A, B,
                           i / cols, i % cols, got, j);
    }
    free(src);
    free(dst);
}

/* Every destination in [0, n) hit exactly once by map over the [rows, cols] source. */
static void check_bijection(map2_fn map, size_t A, size_t B, size_t rows, size_t cols, size_t n)
{
    uint8_t *hit = tu_xmalloc(n);
    memset(hit, 0, n);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t d = map(A, B, r, c);
            if (d >= n)
                cr_assert_fail("(%zu,%zu) -> %zu out of range %zu", r, c, d, n);
            if (hit[d]++)
                cr_assert_fail("(%zu,%zu) -> %zu hit twice", r, c, d);
        }
    for (size_t d = 0; d < n; d++)
        if (!hit[d])
            cr_assert_fail("destination %zu never hit (shape %zux%zu)", d, rows, cols);
    free(hit);
}

/* ---- generic view/permute engine ------------------------------------------------------ */

Test(view, hand_transpose_2x3)
{
    /* [[0,1,2],[3,4,5]] permuted (1,0) is its transpose [[0,3],[1,4],[2,5]]. */
    const uint8_t src[6] = {0, 1, 2, 3, 4, 5};
    const uint8_t want[6] = {0, 3, 1, 4, 2, 5};
    uint8_t dst[6] = {0};
    const size_t shape[2] = {2, 3};
    const int perm[2] = {1, 0};
    cr_assert_eq(a4w4_view_permute(src, 1, 2, shape, perm, dst), A4W4_OK);
    cr_assert_eq(memcmp(dst, want, 6), 0);
}

Test(view, hand_3d_u16)
{
    /* shape (2,3,4), perm (2,0,1): dst[k][i][j] = src[i][j][k], dst shape (4,2,3).
     * dst (k=1,i=1,j=2) is flat 1*6 + 1*3 + 2 = 11; src (i=1,j=2,k=1) is flat
     * 1*12 + 2*4 + 1 = 21. dst (k=3,i=0,j=1) is flat 3*6 + 0 + 1 = 19; src (0,1,3) is
     * 0 + 4 + 3 = 7. dst flat 1 is (k=0,i=0,j=1) -> src (0,1,0) = 4. */
    uint16_t src[24], dst[24];
    for (int i = 0; i < 24; i++)
        src[i] = (uint16_t)(1000 + i);
    const size_t shape[3] = {2, 3, 4};
    const int perm[3] = {2, 0, 1};
    cr_assert_eq(a4w4_view_permute(src, 2, 3, shape, perm, dst), A4W4_OK);
    cr_assert_eq(dst[0], 1000);
    cr_assert_eq(dst[1], 1004);
    cr_assert_eq(dst[11], 1021);
    cr_assert_eq(dst[19], 1007);
    cr_assert_eq(dst[23], 1023);
}

/* Scatter reference: decompose each source flat index, permute the multi-index, and
 * place the element — the opposite direction of the engine's gather. */
static void naive_permute(const uint8_t *src, size_t elem, int ndim, const size_t *shape,
                          const int *perm, uint8_t *dst)
{
    size_t total = 1;
    for (int i = 0; i < ndim; i++)
        total *= shape[i];
    for (size_t f = 0; f < total; f++) {
        size_t idx[A4W4_VIEW_MAX_DIMS], rem = f;
        for (int a = ndim - 1; a >= 0; a--) {
            idx[a] = rem % shape[a];
            rem /= shape[a];
        }
        size_t off = 0;
        for (int a = 0; a < ndim; a++)
            off = off * shape[perm[a]] + idx[perm[a]];
        memcpy(dst + off * elem, src + f * elem, elem);
    }
}

Test(view, random_vs_scatter_elem_1_to_8)
{
    tu_xorshift64_seed(&rng, 11);
    for (int trial = 0; trial < 400; trial++) {
        size_t elem = 1 + (size_t)(trial % 8);
        int ndim = 1 + (int)(tu_xorshift64(&rng) % A4W4_VIEW_MAX_DIMS);
        size_t shape[A4W4_VIEW_MAX_DIMS], total = 1;
        for (int i = 0; i < ndim; i++) {
            shape[i] = 1 + (size_t)(tu_xorshift64(&rng) % (ndim > 5 ? 3 : 5));
            total *= shape[i];
        }
        int perm[A4W4_VIEW_MAX_DIMS];
        for (int i = 0; i < ndim; i++)
            perm[i] = i;
        for (int i = ndim - 1; i > 0; i--) {
            int j = (int)(tu_xorshift64(&rng) % (uint64_t)(i + 1));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        size_t n = total * elem;
        uint8_t *src = tu_xmalloc(n), *got = tu_xmalloc(n), *want = tu_xmalloc(n);
        fill_random(src, n);
        memset(got, 0xCD, n);
        naive_permute(src, elem, ndim, shape, perm, want);
        cr_assert_eq(a4w4_view_permute(src, elem, ndim, shape, perm, got), A4W4_OK);
        size_t d = tu_first_diff(got, want, n);
        cr_assert_eq(d, n, "trial %d elem %zu ndim %d: first difference at byte %zu", trial,
                     elem, ndim, d);
        free(src);
        free(got);
        free(want);
    }
}

Test(view, identity_perm_is_copy_and_inverse_perm_round_trips)
{
    tu_xorshift64_seed(&rng, 12);
    const size_t shape[4] = {3, 5, 2, 7};
    const int id[4] = {0, 1, 2, 3};
    const int perm[4] = {2, 0, 3, 1};
    /* inverse of perm: inv[perm[i]] = i -> inv = {1, 3, 0, 2}; permuted shape (2,3,7,5). */
    const int inv[4] = {1, 3, 0, 2};
    const size_t pshape[4] = {2, 3, 7, 5};
    uint32_t src[210], a[210], b[210];
    for (int i = 0; i < 210; i++)
        src[i] = (uint32_t)tu_xorshift64(&rng);
    cr_assert_eq(a4w4_view_permute(src, 4, 4, shape, id, a), A4W4_OK);
    cr_assert_eq(memcmp(a, src, sizeof src), 0);
    cr_assert_eq(a4w4_view_permute(src, 4, 4, shape, perm, a), A4W4_OK);
    cr_assert_neq(memcmp(a, src, sizeof src), 0);
    cr_assert_eq(a4w4_view_permute(a, 4, 4, pshape, inv, b), A4W4_OK);
    cr_assert_eq(memcmp(b, src, sizeof src), 0);
}

Test(view, invalid_arguments)
{
    uint8_t s[16] = {0}, d[16];
    const size_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const int p9[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    const int dup[2] = {0, 0}, neg[2] = {-1, 0}, big[2] = {0, 2};
    const size_t s2[2] = {2, 2};
    cr_assert_eq(a4w4_view_permute(s, 1, 0, shape, p9, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 9, shape, p9, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 8, shape, p9, d), A4W4_OK);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, s2, dup, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, s2, neg, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, s2, big, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 0, 2, s2, p9, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(NULL, 1, 2, s2, p9, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, s2, p9, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, NULL, p9, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_view_permute(s, 1, 2, s2, NULL, d), A4W4_EINVAL);
    const size_t huge[2] = {(size_t)1 << 40, (size_t)1 << 40};
    cr_assert_eq(a4w4_view_permute(s, 1, 2, huge, p9, d), A4W4_EINVAL);
}

Test(view, zero_extent_writes_nothing)
{
    uint8_t s[4] = {1, 2, 3, 4}, d[4] = {9, 9, 9, 9};
    const size_t shape[2] = {0, 4};
    const int perm[2] = {1, 0};
    cr_assert_eq(a4w4_view_permute(s, 1, 2, shape, perm, d), A4W4_OK);
    cr_assert_eq(d[0], 9);
    cr_assert_eq(d[3], 9);
}

/* ---- 3.1 weight preshuffle ------------------------------------------------------------ */

Test(preshuffle, supported_edges)
{
    cr_assert(a4w4_preshuffle_supported(16, 64));
    cr_assert(!a4w4_preshuffle_supported(8, 64));
    cr_assert(!a4w4_preshuffle_supported(24, 64));
    cr_assert(a4w4_preshuffle_supported(32, 64));
    cr_assert(!a4w4_preshuffle_supported(16, 32));
    cr_assert(!a4w4_preshuffle_supported(16, 96));
    cr_assert(a4w4_preshuffle_supported(16, 128));
    cr_assert(!a4w4_preshuffle_supported(16, 65));
    cr_assert(!a4w4_preshuffle_supported(0, 64));
    cr_assert(!a4w4_preshuffle_supported(16, 0));
    cr_assert(a4w4_preshuffle_supported(48, 320)); /* the golden g5 shape */
}

Test(preshuffle, hand_worked_example)
{
    /* N = 32, K = 128 -> Kb = 64, Kb/32 = 2. dst = (((n0*2 + k0)*2 + k1)*16 + n1)*16 + k2.
     * (n=17, kb=37): n0=1 n1=1; kb = 1*32 + 0*16 + 5 -> k0=1 k1=0 k2=5;
     *   (((1*2+1)*2+0)*16+1)*16+5 = ((6*16)+1)*16+5 = 97*16+5 = 1557.
     * (n=5, kb=50): n0=0 n1=5; kb = 1*32 + 1*16 + 2 -> k0=1 k1=1 k2=2;
     *   (((0+1)*2+1)*16+5)*16+2 = (3*16+5)*16+2 = 53*16+2 = 850.
     * (n=31, kb=63): n0=1 n1=15 k0=1 k1=1 k2=15 -> (7*16+15)*16+15 = 2047 (last).
     * Unit steps: n+1 -> 16, kb+16 -> 256, kb+32 -> 512, n+16 -> 1024. */
    const size_t N = 32, K = 128;
    cr_assert_eq(a4w4_preshuffle_index(N, K, 17, 37), 1557);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 5, 50), 850);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 31, 63), 2047);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 0, 0), 0);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 0, 1), 1);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 1, 0), 16);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 0, 16), 256);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 0, 32), 512);
    cr_assert_eq(a4w4_preshuffle_index(N, K, 16, 0), 1024);

    uint8_t w[32 * 64] = {0}, a[32 * 64], b[32 * 64];
    w[17 * 64 + 37] = 0xA5;
    w[5 * 64 + 50] = 0x5A;
    cr_assert_eq(a4w4_preshuffle(w, N, K, a), A4W4_OK);
    cr_assert_eq(a4w4_preshuffle_view(w, N, K, b), A4W4_OK);
    for (size_t i = 0; i < sizeof a; i++) {
        uint8_t want = i == 1557 ? 0xA5 : i == 850 ? 0x5A : 0;
        cr_assert_eq(a[i], want, "closed dst[%zu]", i);
        cr_assert_eq(b[i], want, "view dst[%zu]", i);
    }
}

static size_t pre_map(size_t N, size_t K, size_t n, size_t kb)
{
    return a4w4_preshuffle_index(N, K, n, kb);
}

Test(preshuffle, closed_equals_view_240_shapes)
{
    tu_xorshift64_seed(&rng, 31);
    int shapes = 0;
    for (size_t nb = 1; nb <= 20; nb++) {
        for (size_t kq = 1; kq <= 12; kq++) {
            size_t N = nb * 16, K = kq * 64, Kb = K / 2, n = N * Kb;
            const size_t shape[5] = {N / 16, 16, Kb / 32, 2, 16};
            const int perm[5] = {0, 2, 3, 1, 4};
            check_map_vs_engine(pre_map, N, K, N, Kb, 5, shape, perm);

            uint8_t *w = tu_xmalloc(n), *a = tu_xmalloc(n), *b = tu_xmalloc(n);
            fill_random(w, n);
            memset(a, 0x11, n);
            memset(b, 0x22, n);
            cr_assert_eq(a4w4_preshuffle(w, N, K, a), A4W4_OK);
            cr_assert_eq(a4w4_preshuffle_view(w, N, K, b), A4W4_OK);
            size_t d = tu_first_diff(a, b, n);
            cr_assert_eq(d, n, "N=%zu K=%zu: closed and view differ at %zu", N, K, d);
            free(w);
            free(a);
            free(b);
            shapes++;
        }
    }
    cr_assert_geq(shapes, 200);
}

Test(preshuffle, bijection)
{
    const size_t Ns[] = {16, 48, 128, 320}, Ks[] = {64, 192, 512, 768};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++)
            check_bijection(pre_map, Ns[i], Ks[j], Ns[i], Ks[j] / 2, Ns[i] * Ks[j] / 2);
}

Test(preshuffle, inverse_is_identity)
{
    tu_xorshift64_seed(&rng, 32);
    const size_t Ns[] = {16, 48, 256}, Ks[] = {64, 320, 1024};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            size_t N = Ns[i], K = Ks[j], n = N * K / 2;
            uint8_t *w = tu_xmalloc(n), *s = tu_xmalloc(n), *back = tu_xmalloc(n);
            fill_random(w, n);
            cr_assert_eq(a4w4_preshuffle(w, N, K, s), A4W4_OK);
            cr_assert_eq(a4w4_unpreshuffle(s, N, K, back), A4W4_OK);
            cr_assert_eq(memcmp(back, w, n), 0, "N=%zu K=%zu", N, K);
            /* the view's output also undoes through the closed inverse */
            cr_assert_eq(a4w4_preshuffle_view(w, N, K, s), A4W4_OK);
            memset(back, 0, n);
            cr_assert_eq(a4w4_unpreshuffle(s, N, K, back), A4W4_OK);
            cr_assert_eq(memcmp(back, w, n), 0, "N=%zu K=%zu (view)", N, K);
            /* and forward o inverse on arbitrary shuffled bytes */
            fill_random(s, n);
            cr_assert_eq(a4w4_unpreshuffle(s, N, K, w), A4W4_OK);
            cr_assert_eq(a4w4_preshuffle(w, N, K, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, n), 0, "N=%zu K=%zu (fwd o inv)", N, K);
            free(w);
            free(s);
            free(back);
        }
}

Test(preshuffle, unsupported_and_invalid)
{
    uint8_t src[96 * 48] = {0}, dst[96 * 48];
    const size_t bad[][2] = {{8, 64}, {24, 64}, {16, 32}, {16, 96}, {0, 64}, {16, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(dst, 0xEE, sizeof dst);
        cr_assert_eq(a4w4_preshuffle(src, bad[i][0], bad[i][1], dst), A4W4_EUNSUPPORTED);
        cr_assert_eq(a4w4_unpreshuffle(src, bad[i][0], bad[i][1], dst), A4W4_EUNSUPPORTED);
        cr_assert_eq(a4w4_preshuffle_view(src, bad[i][0], bad[i][1], dst), A4W4_EUNSUPPORTED);
        cr_assert_eq(dst[0], 0xEE, "dst written on an unsupported shape");
    }
    cr_assert_eq(a4w4_preshuffle(NULL, 16, 64, dst), A4W4_EINVAL);
    cr_assert_eq(a4w4_preshuffle(src, 16, 64, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_unpreshuffle(NULL, 16, 64, dst), A4W4_EINVAL);
    cr_assert_eq(a4w4_preshuffle_view(NULL, 16, 64, dst), A4W4_EINVAL);
}

/* ---- 3.2 weight-scale swizzle --------------------------------------------------------- */

Test(swizzle, supported_edges)
{
    cr_assert(a4w4_scale_swizzle_supported(2, 32, 8));
    cr_assert(!a4w4_scale_swizzle_supported(2, 16, 8));
    cr_assert(!a4w4_scale_swizzle_supported(2, 48, 8));
    cr_assert(a4w4_scale_swizzle_supported(2, 64, 8));
    cr_assert(!a4w4_scale_swizzle_supported(2, 32, 4));
    cr_assert(!a4w4_scale_swizzle_supported(2, 32, 12));
    cr_assert(a4w4_scale_swizzle_supported(2, 32, 16));
    cr_assert(!a4w4_scale_swizzle_supported(1, 32, 8));
    cr_assert(!a4w4_scale_swizzle_supported(3, 32, 8));
    cr_assert(!a4w4_scale_swizzle_supported(0, 32, 8));
    cr_assert(!a4w4_scale_swizzle_supported(2, 0, 8));
    cr_assert(!a4w4_scale_swizzle_supported(2, 32, 0));
    cr_assert(!a4w4_scale_swizzle_supported(2, 48, 10)); /* the golden g5 weight scale */
}

Test(swizzle, hand_worked_example)
{
    /* rows = 64, cols = 16 -> cols/8 = 2.
     * dst = ((((d0*2 + d3)*4 + d5)*16 + d2)*2 + d4)*2 + d1,
     * r = d0*32 + d1*16 + d2, c = d3*8 + d4*4 + d5.
     * (r=49, c=13): 49 = 1*32 + 1*16 + 1 -> d0=1 d1=1 d2=1; 13 = 1*8 + 1*4 + 1 -> d3=1 d4=1
     *   d5=1; (1*2+1)*4+1 = 13; 13*16+1 = 209; 209*2+1 = 419; 419*2+1 = 839.
     * (r=7, c=10): d0=0 d1=0 d2=7; 10 = 1*8 + 0*4 + 2 -> d3=1 d4=0 d5=2;
     *   (0+1)*4+2 = 6; 6*16+7 = 103; 103*2+0 = 206; 206*2+0 = 412.
     * Unit steps: r+16 (d1) -> 1, c+4 (d4) -> 2, r+1 (d2) -> 4, c+1 (d5) -> 64,
     * c+8 (d3) -> 256, r+32 (d0) -> 512. */
    const size_t R = 64, C = 16;
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 49, 13), 839);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 7, 10), 412);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 0, 0), 0);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 16, 0), 1);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 0, 4), 2);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 1, 0), 4);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 0, 1), 64);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 0, 8), 256);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 32, 0), 512);
    cr_assert_eq(a4w4_scale_swizzle_index(R, C, 63, 15), 1023);

    uint8_t s[64 * 16] = {0}, a[64 * 16], b[64 * 16];
    s[49 * 16 + 13] = 0xC3;
    s[7 * 16 + 10] = 0x3C;
    cr_assert_eq(a4w4_scale_swizzle(s, R, C, a), A4W4_OK);
    cr_assert_eq(a4w4_scale_swizzle_view(s, R, C, b), A4W4_OK);
    for (size_t i = 0; i < sizeof a; i++) {
        uint8_t want = i == 839 ? 0xC3 : i == 412 ? 0x3C : 0;
        cr_assert_eq(a[i], want, "closed dst[%zu]", i);
        cr_assert_eq(b[i], want, "view dst[%zu]", i);
    }
}

static size_t sw_map(size_t rows, size_t cols, size_t r, size_t c)
{
    return a4w4_scale_swizzle_index(rows, cols, r, c);
}

Test(swizzle, closed_equals_view_224_shapes)
{
    tu_xorshift64_seed(&rng, 41);
    int shapes = 0;
    for (size_t rb = 1; rb <= 16; rb++) {
        for (size_t cb = 1; cb <= 14; cb++) {
            size_t R = rb * 32, C = cb * 8, n = R * C;
            const size_t shape[6] = {R / 32, 2, 16, C / 8, 2, 4};
            const int perm[6] = {0, 3, 5, 2, 4, 1};
            check_map_vs_engine(sw_map, R, C, R, C, 6, shape, perm);

            uint8_t *s = tu_xmalloc(n), *a = tu_xmalloc(n), *b = tu_xmalloc(n);
            fill_random(s, n);
            memset(a, 0x11, n);
            memset(b, 0x22, n);
            cr_assert_eq(a4w4_scale_swizzle(s, R, C, a), A4W4_OK);
            cr_assert_eq(a4w4_scale_swizzle_view(s, R, C, b), A4W4_OK);
            size_t d = tu_first_diff(a, b, n);
            cr_assert_eq(d, n, "rows=%zu cols=%zu: closed and view differ at %zu", R, C, d);
            free(s);
            free(a);
            free(b);
            shapes++;
        }
    }
    cr_assert_geq(shapes, 200);
}

Test(swizzle, bijection)
{
    const size_t Rs[] = {32, 96, 256, 1024}, Cs[] = {8, 24, 160};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            check_bijection(sw_map, Rs[i], Cs[j], Rs[i], Cs[j], Rs[i] * Cs[j]);
}

Test(swizzle, inverse_is_identity)
{
    tu_xorshift64_seed(&rng, 42);
    const size_t Rs[] = {32, 160, 512}, Cs[] = {8, 40, 64};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            size_t R = Rs[i], C = Cs[j], n = R * C;
            uint8_t *s = tu_xmalloc(n), *z = tu_xmalloc(n), *back = tu_xmalloc(n);
            fill_random(s, n);
            cr_assert_eq(a4w4_scale_swizzle(s, R, C, z), A4W4_OK);
            cr_assert_eq(a4w4_scale_unswizzle(z, R, C, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, n), 0, "rows=%zu cols=%zu", R, C);
            cr_assert_eq(a4w4_scale_swizzle_view(s, R, C, z), A4W4_OK);
            memset(back, 0, n);
            cr_assert_eq(a4w4_scale_unswizzle(z, R, C, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, n), 0, "rows=%zu cols=%zu (view)", R, C);
            fill_random(z, n);
            cr_assert_eq(a4w4_scale_unswizzle(z, R, C, s), A4W4_OK);
            cr_assert_eq(a4w4_scale_swizzle(s, R, C, back), A4W4_OK);
            cr_assert_eq(memcmp(back, z, n), 0, "rows=%zu cols=%zu (fwd o inv)", R, C);
            free(s);
            free(z);
            free(back);
        }
}

Test(swizzle, unsupported_and_invalid)
{
    uint8_t src[64 * 16] = {0}, dst[64 * 16];
    const size_t bad[][2] = {{16, 8}, {48, 8}, {32, 4}, {32, 12}, {0, 8}, {32, 0}, {48, 10}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(dst, 0xEE, sizeof dst);
        cr_assert_eq(a4w4_scale_swizzle(src, bad[i][0], bad[i][1], dst), A4W4_EUNSUPPORTED);
        cr_assert_eq(a4w4_scale_unswizzle(src, bad[i][0], bad[i][1], dst), A4W4_EUNSUPPORTED);
        cr_assert_eq(a4w4_scale_swizzle_view(src, bad[i][0], bad[i][1], dst),
                     A4W4_EUNSUPPORTED);
        cr_assert_eq(dst[0], 0xEE, "dst written on an unsupported shape");
    }
    cr_assert_eq(a4w4_scale_swizzle(NULL, 32, 8, dst), A4W4_EINVAL);
    cr_assert_eq(a4w4_scale_swizzle(src, 32, 8, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_scale_unswizzle(NULL, 32, 8, dst), A4W4_EINVAL);
    cr_assert_eq(a4w4_scale_swizzle_view(src, 32, 8, NULL), A4W4_EINVAL);
}

Test(swizzle, tile_local_rows_padding_does_not_move_entries)
{
    /* contracts §3.2: 32-row groups are contiguous blocks of 32*cols bytes, so the swizzle of
     * [R, C] is exactly the prefix of the swizzle of [R + 32j, C] whose first R rows agree. */
    tu_xorshift64_seed(&rng, 43);
    const size_t Cs[] = {8, 24, 64};
    for (size_t ci = 0; ci < 3; ci++)
        for (size_t R = 32; R <= 128; R += 32)
            for (size_t extra = 32; extra <= 96; extra += 32) {
                size_t C = Cs[ci], R2 = R + extra;
                uint8_t *big = tu_xmalloc(R2 * C), *zs = tu_xmalloc(R * C), *zb = tu_xmalloc(R2 * C);
                fill_random(big, R2 * C);
                cr_assert_eq(a4w4_scale_swizzle(big, R, C, zs), A4W4_OK);
                cr_assert_eq(a4w4_scale_swizzle(big, R2, C, zb), A4W4_OK);
                cr_assert_eq(memcmp(zs, zb, R * C), 0, "R=%zu R2=%zu C=%zu", R, R2, C);
                for (size_t r = 0; r < R; r++)
                    for (size_t c = 0; c < C; c++)
                        if (a4w4_scale_swizzle_index(R, C, r, c) !=
                            a4w4_scale_swizzle_index(R2, C, r, c))
                            cr_assert_fail("(%zu,%zu) moved when rows %zu -> %zu", r, c, R, R2);
                free(big);
                free(zs);
                free(zb);
            }
    /* Columns are not tile-local: the row-group stride is 32*cols, so padding columns
     * moves entries of every group past the first (the AITER PR #2900 hazard).
     * (r=32, c=0): d0=1 -> 1*(cols/8)*4*16*2*2 = 256*(cols/8): 256 at cols 8, 512 at 16. */
    cr_assert_eq(a4w4_scale_swizzle_index(32 * 2, 8, 32, 0), 256);
    cr_assert_eq(a4w4_scale_swizzle_index(32 * 2, 16, 32, 0), 512);
    /* ...but within the first 32-row group and the first 8 columns nothing moves. */
    cr_assert_eq(a4w4_scale_swizzle_index(32, 8, 17, 5), a4w4_scale_swizzle_index(32, 16, 17, 5));
}

/* ---- 3.3 activation-scale pad + shuffle ----------------------------------------------- */

Test(act_scale, padded_shape)
{
    cr_assert_eq(a4w4_act_scale_padded_rows(1), 256);
    cr_assert_eq(a4w4_act_scale_padded_rows(255), 256);
    cr_assert_eq(a4w4_act_scale_padded_rows(256), 256);
    cr_assert_eq(a4w4_act_scale_padded_rows(257), 512);
    cr_assert_eq(a4w4_act_scale_padded_rows(0), 0);
    cr_assert_eq(a4w4_act_scale_padded_cols(1), 8);
    cr_assert_eq(a4w4_act_scale_padded_cols(8), 8);
    cr_assert_eq(a4w4_act_scale_padded_cols(9), 16);
    cr_assert_eq(a4w4_act_scale_padded_cols(10), 16);
    cr_assert_eq(a4w4_act_scale_padded_cols(160), 160);
    cr_assert_eq(a4w4_act_scale_padded_cols(0), 0);
}

Test(act_scale, hand_worked_example)
{
    /* M = 3, cols = 5 -> padded [256, 8], cols/8 = 1.
     * dst = ((((d0*1 + d3)*4 + d5)*16 + d2)*2 + d4)*2 + d1.
     * valid (r=2, c=3): d2=2, d5=3 -> (3*16+2)*2*2 = 50*4 = 200.
     * valid (r=0, c=0) -> 0; valid (r=1, c=4): d2=1 d4=1 -> ((0*16+1)*2+1)*2 = 6.
     * pad column (r=0, c=5): d4=1 d5=1 -> ((1*16+0)*2+1)*2+0 = 66 -> col_fill.
     * pad row (r=17, c=0): d1=1 d2=1 -> ((0*16+1)*2+0)*2+1 = 5 -> row_fill.
     * corner (r=17, c=6): d1=1 d2=1 d4=1 d5=2 -> ((2*16+1)*2+1)*2+1 = 67*2+1 = 135
     *   -> col_fill (documented choice: pad columns take col_fill in every row).
     * pad row group (r=200, c=1): d0=6 d1=0 d2=8 d5=1 -> (((6*4+1)*16+8)*2)*2
     *   = (408*2)*2 = 1632 -> row_fill. */
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 2, 3), 200);
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 1, 4), 6);
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 0, 5), 66);
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 17, 0), 5);
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 17, 6), 135);
    cr_assert_eq(a4w4_act_scale_shuffle_index(3, 5, 200, 1), 1632);

    const uint8_t src[15] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x22,
                             0x23, 0x24, 0x30, 0x31, 0x32, 0x33, 0x34};
    uint8_t a[256 * 8], b[256 * 8];
    cr_assert_eq(a4w4_act_scale_shuffle(src, 3, 5, 0xA1, 0xB2, a), A4W4_OK);
    cr_assert_eq(a4w4_act_scale_shuffle_view(src, 3, 5, 0xA1, 0xB2, b), A4W4_OK);
    const uint8_t *outs[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        const uint8_t *o = outs[k];
        cr_assert_eq(o[200], 0x33, "form %d", k);
        cr_assert_eq(o[0], 0x10, "form %d", k);
        cr_assert_eq(o[6], 0x24, "form %d", k);
        cr_assert_eq(o[66], 0xB2, "form %d", k);
        cr_assert_eq(o[5], 0xA1, "form %d", k);
        cr_assert_eq(o[135], 0xB2, "form %d", k);
        cr_assert_eq(o[1632], 0xA1, "form %d", k);
    }
}

static size_t act_map(size_t M, size_t cols, size_t r, size_t c)
{
    return a4w4_act_scale_shuffle_index(M, cols, r, c);
}

static const size_t act_Ms[] = {1, 2, 15, 16, 31, 32, 33, 100, 255, 256, 257, 511, 513};
#define N_ACT_MS (sizeof act_Ms / sizeof act_Ms[0])
static const uint8_t act_fills[][2] = {
    {0x7F, 0x7F}, {0x00, 0xFF}, {0xFF, 0x00}, {0xA1, 0xB2}, {0x7F, 0x00}};

Test(act_scale, closed_equals_view_221_shapes)
{
    tu_xorshift64_seed(&rng, 51);
    int shapes = 0;
    for (size_t mi = 0; mi < N_ACT_MS; mi++) {
        for (size_t cols = 1; cols <= 17; cols++) {
            size_t M = act_Ms[mi];
            size_t pr = a4w4_act_scale_padded_rows(M), pc = a4w4_act_scale_padded_cols(cols);
            size_t n = pr * pc;
            const uint8_t *f = act_fills[(size_t)shapes % 5];
            uint8_t *s = tu_xmalloc(M * cols), *a = tu_xmalloc(n), *b = tu_xmalloc(n);
            fill_random(s, M * cols);
            memset(a, 0x11, n);
            memset(b, 0x22, n);
            cr_assert_eq(a4w4_act_scale_shuffle(s, M, cols, f[0], f[1], a), A4W4_OK);
            cr_assert_eq(a4w4_act_scale_shuffle_view(s, M, cols, f[0], f[1], b), A4W4_OK);
            size_t d = tu_first_diff(a, b, n);
            cr_assert_eq(d, n, "M=%zu cols=%zu fills %02x/%02x: closed and view differ at %zu",
                         M, cols, f[0], f[1], d);
            /* the index map itself, against the engine over the padded shape */
            if (cols % 3 == 1) {
                const size_t shape[6] = {pr / 32, 2, 16, pc / 8, 2, 4};
                const int perm[6] = {0, 3, 5, 2, 4, 1};
                check_map_vs_engine(act_map, M, cols, pr, pc, 6, shape, perm);
            }
            free(s);
            free(a);
            free(b);
            shapes++;
        }
    }
    cr_assert_geq(shapes, 200);
}

Test(act_scale, pad_fills_land_exactly_in_pad_positions)
{
    /* Valid bytes are in 0x01..0x7E; row_fill 0xA1 and col_fill 0xB2 are outside that
     * range, so every byte of the output says which class it came from. Undo the swizzle
     * with the §3.2 inverse and check each cell of the padded [pr, pc] tensor. */
    tu_xorshift64_seed(&rng, 52);
    const size_t Ms[] = {1, 31, 33, 256, 300}, Cs[] = {3, 8, 10, 16, 21};
    for (size_t mi = 0; mi < 5; mi++)
        for (size_t ci = 0; ci < 5; ci++) {
            size_t M = Ms[mi], cols = Cs[ci];
            size_t pr = a4w4_act_scale_padded_rows(M), pc = a4w4_act_scale_padded_cols(cols);
            uint8_t *s = tu_xmalloc(M * cols), *z = tu_xmalloc(pr * pc), *p = tu_xmalloc(pr * pc);
            for (size_t i = 0; i < M * cols; i++)
                s[i] = (uint8_t)(1 + tu_xorshift64(&rng) % 0x7E);
            for (int form = 0; form < 2; form++) {
                int st = form ? a4w4_act_scale_shuffle_view(s, M, cols, 0xA1, 0xB2, z)
                              : a4w4_act_scale_shuffle(s, M, cols, 0xA1, 0xB2, z);
                cr_assert_eq(st, A4W4_OK);
                size_t nrow = 0, ncol = 0;
                for (size_t i = 0; i < pr * pc; i++) {
                    nrow += z[i] == 0xA1;
                    ncol += z[i] == 0xB2;
                }
                /* row fill only in r >= M, c < cols; col fill in every row of c >= cols */
                cr_assert_eq(nrow, (pr - M) * cols, "M=%zu cols=%zu form %d", M, cols, form);
                cr_assert_eq(ncol, pr * (pc - cols), "M=%zu cols=%zu form %d", M, cols, form);
                cr_assert_eq(a4w4_scale_unswizzle(z, pr, pc, p), A4W4_OK);
                for (size_t r = 0; r < pr; r++)
                    for (size_t c = 0; c < pc; c++) {
                        uint8_t want = c >= cols ? 0xB2 : r >= M ? 0xA1 : s[r * cols + c];
                        if (p[r * pc + c] != want)
                            cr_assert_fail("M=%zu cols=%zu form %d cell (%zu,%zu): %02x, want "
                                           "%02x",
                                           M, cols, form, r, c, p[r * pc + c], want);
                    }
            }
            free(s);
            free(z);
            free(p);
        }
}

Test(act_scale, equals_swizzle_of_padded_and_row_groups_stay_put)
{
    /* §3.3 is §3.2 over the padded shape: pad by hand, swizzle, compare. And since §3.2 is
     * tile-local in rows, the valid rows sit at the same offsets whatever M is (as long as
     * the padded column count is the same): M=5 and M=300 agree on rows 0..4. */
    tu_xorshift64_seed(&rng, 53);
    const size_t cols = 13, pc = 16;
    uint8_t s[300 * 13];
    fill_random(s, sizeof s);
    uint8_t *pad = tu_xmalloc(512 * pc), *want = tu_xmalloc(512 * pc), *got = tu_xmalloc(512 * pc);
    for (size_t r = 0; r < 512; r++)
        for (size_t c = 0; c < pc; c++)
            pad[r * pc + c] = c >= cols ? 0x00 : r >= 300 ? 0xFF : s[r * cols + c];
    cr_assert_eq(a4w4_scale_swizzle(pad, 512, pc, want), A4W4_OK);
    cr_assert_eq(a4w4_act_scale_shuffle(s, 300, cols, 0xFF, 0x00, got), A4W4_OK);
    cr_assert_eq(memcmp(got, want, 512 * pc), 0);

    uint8_t small[256 * 16];
    cr_assert_eq(a4w4_act_scale_shuffle(s, 5, cols, 0xFF, 0x00, small), A4W4_OK);
    for (size_t r = 0; r < 5; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t i5 = a4w4_act_scale_shuffle_index(5, cols, r, c);
            size_t i300 = a4w4_act_scale_shuffle_index(300, cols, r, c);
            cr_assert_eq(i5, i300, "(%zu,%zu)", r, c);
            cr_assert_eq(small[i5], got[i300]);
        }
    free(pad);
    free(want);
    free(got);
}

Test(act_scale, bijection)
{
    for (size_t mi = 0; mi < N_ACT_MS; mi += 2)
        for (size_t cols = 1; cols <= 24; cols += 5) {
            size_t M = act_Ms[mi];
            size_t pr = a4w4_act_scale_padded_rows(M), pc = a4w4_act_scale_padded_cols(cols);
            check_bijection(act_map, M, cols, pr, pc, pr * pc);
        }
}

Test(act_scale, inverse_is_identity)
{
    tu_xorshift64_seed(&rng, 54);
    for (size_t mi = 0; mi < N_ACT_MS; mi++)
        for (size_t cols = 1; cols <= 20; cols += 3) {
            size_t M = act_Ms[mi];
            size_t n = a4w4_act_scale_padded_rows(M) * a4w4_act_scale_padded_cols(cols);
            uint8_t *s = tu_xmalloc(M * cols), *z = tu_xmalloc(n), *back = tu_xmalloc(M * cols);
            fill_random(s, M * cols);
            cr_assert_eq(a4w4_act_scale_shuffle(s, M, cols, 0x7F, 0x00, z), A4W4_OK);
            cr_assert_eq(a4w4_act_scale_unshuffle(z, M, cols, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, M * cols), 0, "M=%zu cols=%zu", M, cols);
            cr_assert_eq(a4w4_act_scale_shuffle_view(s, M, cols, 0x00, 0xFF, z), A4W4_OK);
            memset(back, 0, M * cols);
            cr_assert_eq(a4w4_act_scale_unshuffle(z, M, cols, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, M * cols), 0, "M=%zu cols=%zu (view)", M, cols);
            free(s);
            free(z);
            free(back);
        }
}

Test(act_scale, invalid)
{
    uint8_t s[16] = {0}, d[256 * 8];
    cr_assert_eq(a4w4_act_scale_shuffle(s, 0, 4, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle(s, 4, 0, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle(NULL, 4, 4, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle(s, 4, 4, 0x7F, 0x7F, NULL), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle_view(s, 0, 4, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle_view(s, 4, 0, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle_view(NULL, 4, 4, 0x7F, 0x7F, d), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_unshuffle(d, 0, 4, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_unshuffle(d, 4, 0, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_unshuffle(NULL, 4, 4, s), A4W4_EINVAL);
    cr_assert_eq(a4w4_act_scale_shuffle(s, (size_t)-1, 4, 0x7F, 0x7F, d), A4W4_EINVAL);
}

/* ---- golden bundles (AITER-produced, cases/golden) ------------------------------------ */

typedef struct {
    uint8_t *buf;
    size_t len;
    const char *hdr; /* NUL-terminated copy of the JSON header */
    size_t data;     /* offset of the data section in buf */
} bundle;

static bundle load_bundle(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cases/golden/%s", A4W4_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    cr_assert_gt(len, 8);
    bundle b;
    b.len = (size_t)len;
    b.buf = tu_xmalloc(b.len + 1);
    cr_assert_eq(fread(b.buf, 1, b.len, f), b.len);
    fclose(f);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = (hl << 8) | b.buf[i];
    cr_assert_leq(hl, b.len - 8);
    char *h = tu_xmalloc((size_t)hl + 1);
    memcpy(h, b.buf + 8, (size_t)hl);
    h[hl] = 0;
    b.hdr = h;
    b.data = 8 + (size_t)hl;
    return b;
}

static void free_bundle(bundle *b)
{
    free(b->buf);
    free((void *)b->hdr);
}

/* Tensor `name`: its 2-D shape and bytes; NULL when absent. */
static const uint8_t *tensor(const bundle *b, const char *name, size_t *rows, size_t *cols)
{
    char key[128];
    snprintf(key, sizeof key, "\"%s\"", name);
    const char *p = strstr(b->hdr, key);
    while (p) { /* the key must be followed by ':' (not a value that happens to match) */
        const char *q = p + strlen(key);
        while (*q == ' ')
            q++;
        if (*q == ':')
            break;
        p = strstr(p + 1, key);
    }
    if (!p)
        return NULL;
    const char *end = strchr(p, '}');
    const char *sh = strstr(p, "\"shape\"");
    const char *off = strstr(p, "\"data_offsets\"");
    cr_assert(sh && off && sh < end && off < end, "malformed header entry for %s", name);
    sh = strchr(sh, '[');
    char *e;
    *rows = (size_t)strtoull(sh + 1, &e, 10);
    e = strchr(e, ',');
    cr_assert(e && e < strchr(sh, ']'), "%s is not 2-D", name);
    *cols = (size_t)strtoull(e + 1, &e, 10);
    off = strchr(off, '[');
    size_t s0 = (size_t)strtoull(off + 1, &e, 10);
    e = strchr(e, ',');
    size_t s1 = (size_t)strtoull(e + 1, NULL, 10);
    cr_assert_eq(s1 - s0, *rows * *cols, "%s: byte count vs shape", name);
    cr_assert_leq(b->data + s1, b->len);
    return b->buf + b->data + s0;
}

static const char *golden_cases[] = {"g1_m1_n256_k512.safetensors",
                                     "g2_m16_n1024_k5120.safetensors",
                                     "g3_m33_n256_k768.safetensors",
                                     "g4_m4_n128_k2048.safetensors",
                                     "g5_m8_n48_k320.safetensors"};

Test(golden, weight_preshuffle_matches_aiter)
{
    for (size_t i = 0; i < 5; i++) {
        bundle b = load_bundle(golden_cases[i]);
        size_t N, Kb, r2, c2;
        const uint8_t *w = tensor(&b, "w_fp4", &N, &Kb);
        const uint8_t *ws = tensor(&b, "w_fp4_shuffled", &r2, &c2);
        cr_assert(w && ws, "%s", golden_cases[i]);
        cr_assert(a4w4_preshuffle_supported(N, 2 * Kb));
        uint8_t *a = tu_xmalloc(N * Kb), *back = tu_xmalloc(N * Kb);
        cr_assert_eq(a4w4_preshuffle(w, N, 2 * Kb, a), A4W4_OK);
        cr_assert_eq(tu_first_diff(a, ws, N * Kb), N * Kb, "%s closed", golden_cases[i]);
        cr_assert_eq(a4w4_preshuffle_view(w, N, 2 * Kb, a), A4W4_OK);
        cr_assert_eq(tu_first_diff(a, ws, N * Kb), N * Kb, "%s view", golden_cases[i]);
        cr_assert_eq(a4w4_unpreshuffle(ws, N, 2 * Kb, back), A4W4_OK);
        cr_assert_eq(memcmp(back, w, N * Kb), 0, "%s inverse", golden_cases[i]);
        free(a);
        free(back);
        free_bundle(&b);
    }
}

Test(golden, weight_scale_swizzle_matches_aiter)
{
    int compared = 0;
    for (size_t i = 0; i < 5; i++) {
        bundle b = load_bundle(golden_cases[i]);
        size_t R, C, r2, c2;
        const uint8_t *s = tensor(&b, "w_scale", &R, &C);
        const uint8_t *sz = tensor(&b, "w_scale_swizzled", &r2, &c2);
        cr_assert_not_null(s);
        int meta_supported = strstr(b.hdr, "\"scale_swizzle_supported\": \"true\"") ||
                             strstr(b.hdr, "\"scale_swizzle_supported\":\"true\"");
        cr_assert_eq(a4w4_scale_swizzle_supported(2, R, C), meta_supported, "%s",
                     golden_cases[i]);
        uint8_t *a = tu_xmalloc(R * C), *back = tu_xmalloc(R * C);
        if (!sz) {
            cr_assert(!meta_supported);
            cr_assert_eq(a4w4_scale_swizzle(s, R, C, a), A4W4_EUNSUPPORTED);
            cr_assert_eq(a4w4_scale_swizzle_view(s, R, C, a), A4W4_EUNSUPPORTED);
        } else {
            cr_assert_eq(a4w4_scale_swizzle(s, R, C, a), A4W4_OK);
            cr_assert_eq(tu_first_diff(a, sz, R * C), R * C, "%s closed", golden_cases[i]);
            cr_assert_eq(a4w4_scale_swizzle_view(s, R, C, a), A4W4_OK);
            cr_assert_eq(tu_first_diff(a, sz, R * C), R * C, "%s view", golden_cases[i]);
            cr_assert_eq(a4w4_scale_unswizzle(sz, R, C, back), A4W4_OK);
            cr_assert_eq(memcmp(back, s, R * C), 0, "%s inverse", golden_cases[i]);
            compared++;
        }
        free(a);
        free(back);
        free_bundle(&b);
    }
    cr_assert_eq(compared, 4);
}

/* Compare one (a_scale, a_scale_shuffled) pair with the 0x7F/0x7F fill; then, with fills
 * 0x00/0x00, the bytes that differ from the golden must be exactly the pad cells. */
static void check_act_pair(const bundle *b, const char *name, const char *sname, const char *f)
{
    size_t M, cols, pr, pc;
    const uint8_t *s = tensor(b, name, &M, &cols);
    const uint8_t *ref = tensor(b, sname, &pr, &pc);
    cr_assert(s && ref, "%s: %s / %s", f, name, sname);
    cr_assert_eq(pr, a4w4_act_scale_padded_rows(M), "%s %s rows", f, sname);
    cr_assert_eq(pc, a4w4_act_scale_padded_cols(cols), "%s %s cols", f, sname);
    size_t n = pr * pc;
    uint8_t *a = tu_xmalloc(n), *back = tu_xmalloc(M * cols);
    cr_assert_eq(a4w4_act_scale_shuffle(s, M, cols, A4W4_ACT_SCALE_FILL_DEFAULT,
                                        A4W4_ACT_SCALE_FILL_DEFAULT, a),
                 A4W4_OK);
    cr_assert_eq(tu_first_diff(a, ref, n), n, "%s %s closed", f, sname);
    cr_assert_eq(a4w4_act_scale_shuffle_view(s, M, cols, A4W4_ACT_SCALE_FILL_DEFAULT,
                                             A4W4_ACT_SCALE_FILL_DEFAULT, a),
                 A4W4_OK);
    cr_assert_eq(tu_first_diff(a, ref, n), n, "%s %s view", f, sname);
    cr_assert_eq(a4w4_act_scale_unshuffle(ref, M, cols, back), A4W4_OK);
    cr_assert_eq(memcmp(back, s, M * cols), 0, "%s %s inverse", f, sname);

    cr_assert_eq(a4w4_act_scale_shuffle(s, M, cols, 0x00, 0x00, a), A4W4_OK);
    size_t ndiff = 0;
    for (size_t i = 0; i < n; i++)
        ndiff += a[i] != ref[i];
    cr_assert_eq(ndiff, n - M * cols, "%s %s: golden pad cells vs our pad positions", f, sname);
    free(a);
    free(back);
}

Test(golden, act_scale_shuffle_matches_aiter)
{
    for (size_t i = 0; i < 5; i++) {
        bundle b = load_bundle(golden_cases[i]);
        check_act_pair(&b, "a_scale", "a_scale_shuffled", golden_cases[i]);
        free_bundle(&b);
    }
    bundle q = load_bundle("q1_quant_modes.safetensors");
    const char *modes[] = {"round_up", "round_down", "ceil", "even"};
    for (size_t m = 0; m < 4; m++) {
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "a_scale_%s", modes[m]);
        snprintf(n2, sizeof n2, "a_scale_%s_shuffled", modes[m]);
        check_act_pair(&q, n1, n2, "q1_quant_modes");
    }
    free_bundle(&q);
}
