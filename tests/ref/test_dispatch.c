/* test_dispatch.c — contracts §5 dispatch: the real AITER tables in cases/aiter (every tuned row
 * routes to itself; padded gl0/gl1 hits; CK rows), getPaddedM, the ASM heuristic on shapes
 * worked by hand, possible-winner sets (exact over every order, checked against brute force
 * over all permutations of small tables), tile-fit flags, malformed CSV rows (file, line,
 * column), duplicates and conflicts, gfx942, missing and empty tables, and two threads routing
 * at once. Links a4w4_ref only. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "test_util.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif
#ifndef A4W4_BINARY_DIR
#define A4W4_BINARY_DIR "."
#endif

#define TUNED A4W4_SOURCE_DIR "/cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define DSV3 A4W4_SOURCE_DIR "/cases/aiter/dsv3_a4w4_blockscale_tuned_gemm.csv"
#define KERNELS A4W4_SOURCE_DIR "/cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define K256 "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E"
#define K256x128 "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x128E"
#define K32x128 "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E"
#define HDR "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
#define ROW1 "gfx950,256,1,512,4096,21,0,5.4049," K32x128 ",0.78,194.57,0.0\n"

static char err[1024];
static a4w4_tuned_table tuned;
static a4w4_kernel_table kt;
static const a4w4_heur_params P = {"gfx950", 256, 0, 1};

static void load_real(void)
{
    memset(&tuned, 0, sizeof tuned);
    cr_assert_eq(a4w4_tuned_load(&tuned, TUNED, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(a4w4_kernels_load(&kt, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
}

static void free_real(void)
{
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
}

/* A scratch file under the build tree; returns its path (one of 8 static buffers). */
static const char *scratch(const char *name, const char *content)
{
    return tu_scratch_file(A4W4_BINARY_DIR "/test-dispatch", name, content);
}

static int kidx(const char *name)
{
    int i = a4w4_kernels_find(&kt, name);
    cr_assert_geq(i, 0, "kernel %s not in table", name);
    return i;
}

/* ---- tables --------------------------------------------------------------------------- */

Test(tables, real_tables_load_with_their_row_counts, .init = load_real, .fini = free_real)
{
    cr_assert_eq(tuned.n, 1470);
    cr_assert_eq(tuned.dropped, 0);
    cr_assert(tuned.has_gfx);
    /* 34 preshuffled tiles + one plain 256x256 (contracts §5.4) */
    cr_assert_eq(kt.n, 35);
    cr_assert_str_eq(kt.arch, "gfx950");
    int pre = 0, split = 0;
    for (size_t i = 0; i < kt.n; i++) {
        pre += kt.rows[i].bpreshuffle;
        split += kt.rows[i].split_k;
    }
    cr_assert_eq(pre, 34);
    cr_assert_eq(split, 2); /* 256x256 and 128x512 take log2_k_split */
}

Test(tables, every_row_of_the_real_tuned_tables_routes_to_itself)
{
    const char *files[2] = {TUNED, DSV3};
    cr_assert_eq(a4w4_kernels_load(&kt, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
    for (int f = 0; f < 2; f++) {
        a4w4_tuned_table t = {0};
        cr_assert_eq(a4w4_tuned_load(&t, files[f], err, sizeof err), A4W4_OK, "%s", err);
        cr_assert_gt(t.n, 0);
        for (size_t i = 0; i < t.n; i++) {
            const a4w4_tuned_row *row = &t.rows[i];
            a4w4_heur_params p = {row->gfx, row->cu_num, 0, 1};
            a4w4_route r;
            int rc = a4w4_route_shape(&t, &kt, &p, row->M, row->N, row->K, &r, err, sizeof err);
            cr_assert_eq(rc, A4W4_OK, "%s:%d: %s", row->file, row->line, err);
            cr_assert_eq(r.source, A4W4_SRC_TUNED, "%s:%d", row->file, row->line);
            cr_assert_eq(r.row, row);
            cr_assert_str_eq(r.kernel, row->kernel_name, "%s:%d", row->file, row->line);
            cr_assert_eq(r.is_asm, a4w4_kernel_name_is_asm(row->kernel_name));
            if (r.is_asm)
                cr_assert_geq(r.kernel_index, 0, "%s:%d: ASM kernel not in the kernel table",
                              row->file, row->line);
            cr_assert_eq(r.ncand_any, 1);
        }
        a4w4_tuned_free(&t);
    }
    a4w4_kernels_free(&kt);
}

Test(tables, both_tuned_tables_merge_without_conflict)
{
    a4w4_tuned_table t = {0};
    cr_assert_eq(a4w4_tuned_load(&t, TUNED, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(a4w4_tuned_load(&t, DSV3, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(t.n, 1470 + 30);
    cr_assert_eq(t.loaded, 2);
    const a4w4_tuned_row *r = a4w4_tuned_find(&t, "gfx950", 256, 32, 7168, 4608);
    cr_assert_not_null(r);
    cr_assert_str_eq(r->kernel_name, "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_64x128E");
    a4w4_tuned_free(&t);
}

/* ---- getPaddedM and the lookup ---------------------------------------------------------- */

Test(padded_m, gl0_rounds_to_16_32_64_128_by_range)
{
    cr_assert_eq(a4w4_padded_m(1, 1, 1, 0), 16);
    cr_assert_eq(a4w4_padded_m(16, 1, 1, 0), 16);
    cr_assert_eq(a4w4_padded_m(17, 1, 1, 0), 32);
    cr_assert_eq(a4w4_padded_m(256, 1, 1, 0), 256);
    cr_assert_eq(a4w4_padded_m(257, 1, 1, 0), 288);
    cr_assert_eq(a4w4_padded_m(1024, 1, 1, 0), 1024);
    cr_assert_eq(a4w4_padded_m(1025, 1, 1, 0), 1088);
    cr_assert_eq(a4w4_padded_m(4096, 1, 1, 0), 4096);
    cr_assert_eq(a4w4_padded_m(4097, 1, 1, 0), 4224);
}

Test(padded_m, gl1_is_next_pow2_capped_at_8192_for_large_n)
{
    cr_assert_eq(a4w4_padded_m(1, 1, 1, 1), 1);
    cr_assert_eq(a4w4_padded_m(2, 1, 1, 1), 2);
    cr_assert_eq(a4w4_padded_m(3, 1, 1, 1), 4);
    cr_assert_eq(a4w4_padded_m(300, 1, 1, 1), 512);
    cr_assert_eq(a4w4_padded_m(8192, 8192, 1, 1), 8192);
    cr_assert_eq(a4w4_padded_m(8193, 4097, 1, 1), 8192);
    cr_assert_eq(a4w4_padded_m(8193, 4096, 1, 1), 16384);
    cr_assert_eq(a4w4_padded_m(20000, 1, 1, 5), 20000); /* other gl: M itself */
}

Test(padded_m, buckets_of_tuned_values_by_hand)
{
    /* 112 and 128 are gl 0 values (multiples of 16 up to 256), 8192 and 16384 of 128 past
     * 4096; 1, 2, 128, 8192, 16384 are powers of two (gl 1); 65 and 3000 are neither */
    static const int m[] = {128, 1, 2, 112, 3000, 8192, 16384, 65, 128, 2};
    static const a4w4_m_bucket want[] = {
        {1, 1, 1, 1, 0},         {2, 1, 2, 2, 0},        {65, -1, 65, 65, 0},
        {128, 1, 65, 128, 0},    {112, 0, 97, 112, 0},   {128, 0, 113, 128, 0},
        {3000, -1, 3000, 3000, 0}, {8192, 1, 4097, 8192, 0}, {8192, 0, 8065, 8192, 0},
        {16384, 1, 8193, 16384, -1}, {8192, 1, 8193, A4W4_DIM_MAX, 1},
        {16384, 0, 16257, 16384, 0}};
    size_t nw = sizeof want / sizeof want[0];
    a4w4_m_bucket got[16];
    cr_assert_eq(a4w4_m_buckets(m, sizeof m / sizeof m[0], NULL, 0), nw);
    cr_assert_eq(a4w4_m_buckets(m, sizeof m / sizeof m[0], got, 16), nw);
    for (size_t i = 0; i < nw; i++)
        cr_expect(got[i].m_tuned == want[i].m_tuned && got[i].gl == want[i].gl &&
                      got[i].lo == want[i].lo && got[i].hi == want[i].hi &&
                      got[i].n_rule == want[i].n_rule,
                  "bucket %zu: (%d, gl %d, %d..%d, n %d), want (%d, gl %d, %d..%d, n %d)", i,
                  got[i].m_tuned, got[i].gl, got[i].lo, got[i].hi, got[i].n_rule,
                  want[i].m_tuned, want[i].gl, want[i].lo, want[i].hi, want[i].n_rule);
    /* the edges hold: lo - 1 pads elsewhere at the bucket's step, lo and hi land on m_tuned */
    for (size_t i = 0; i < nw; i++) {
        if (got[i].gl < 0)
            continue;
        int N = got[i].n_rule > 0 ? 8192 : 4096;
        cr_expect_eq(a4w4_padded_m(got[i].lo, N, 1, got[i].gl), got[i].m_tuned);
        if (got[i].hi < A4W4_DIM_MAX)
            cr_expect_eq(a4w4_padded_m(got[i].hi, N, 1, got[i].gl), got[i].m_tuned);
        if (got[i].lo > 1 && got[i].n_rule <= 0) /* (the cap's bucket continues 4097..8192) */
            cr_expect_neq(a4w4_padded_m(got[i].lo - 1, N, 1, got[i].gl), got[i].m_tuned);
    }
}

Test(route, tuned_hit_at_own_m, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 1, 512, 4096, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED);
    cr_assert_eq(r.tuned_m, 1);
    cr_assert_eq(r.row->line, 2);
    cr_assert_str_eq(r.kernel, K32x128);
    cr_assert_eq(r.tile_m, 32);
    cr_assert_eq(r.tile_n, 128);
    cr_assert_eq(r.grid_x, 4); /* ceil(512/128) */
    cr_assert_eq(r.grid_y, 1);
    cr_assert_eq(r.grid_z, 1);
    cr_assert_eq(r.fit, A4W4_FIT_TILE_M_GT_8M); /* 32 > 8*1 */
}

Test(route, padded_gl0_hit, .init = load_real, .fini = free_real)
{
    /* M=3 is not tuned for (512, 4096); getPaddedM(3, gl=0) = 16 is (line 204). */
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 3, 512, 4096, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED_PADDED_GL0);
    cr_assert_eq(r.tuned_m, 16);
    cr_assert_eq(r.row->line, 204);
    cr_assert_str_eq(r.kernel, K32x128);
    cr_assert_str_eq(a4w4_route_source_name(r.source), "tuned_padded_gl0");
}

Test(route, padded_gl1_hit, .init = load_real, .fini = free_real)
{
    /* (2112, 7168): M=5 untuned, gl0 -> 16 untuned, gl1 -> nextPow2(5) = 8 tuned (line 166). */
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 5, 2112, 7168, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED_PADDED_GL1);
    cr_assert_eq(r.tuned_m, 8);
    cr_assert_eq(r.row->line, 166);
    /* (192, 1024): M=33 -> gl0 48 untuned -> gl1 64 tuned (line 348). */
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 33, 192, 1024, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED_PADDED_GL1);
    cr_assert_eq(r.tuned_m, 64);
    cr_assert_eq(r.row->line, 348);
    cr_assert_str_eq(a4w4_route_source_name(r.source), "tuned_padded_gl1");
}

Test(route, ck_name_rows_run_the_ck_kernel, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    /* line 61: a CK name at its own M */
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 1, 18432, 16384, &r, err, sizeof err),
                 A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED);
    cr_assert_eq(r.is_asm, 0);
    cr_assert_eq(r.kernel_index, -1);
    cr_assert_str_eq(r.kernel, "a4w4_blockscale_256x64x128x128_16x16_16x16_8x32x1_8x32x1_"
                               "1x32x1x8_8_2x2_intrawave_v3");
    cr_assert_eq(r.tile_m, 0);
    /* line 205: a CK name reached through gl0 (M=1 -> 16) */
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 1, 512, 7168, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_TUNED_PADDED_GL0);
    cr_assert_eq(r.row->line, 205);
    cr_assert_eq(r.is_asm, 0);
    size_t nck = 0;
    for (size_t i = 0; i < tuned.n; i++)
        nck += !a4w4_kernel_name_is_asm(tuned.rows[i].kernel_name);
    cr_assert_eq(nck, 118);
    cr_assert(a4w4_kernel_name_is_asm(K256));
    cr_assert_not(a4w4_kernel_name_is_asm("a4w4_blockscale_256x32x128x128"));
}

Test(route, key_includes_cu_num_and_gfx, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    a4w4_heur_params p = P;
    p.num_cu = 304; /* the row is tuned for 256 CUs only */
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &p, 1, 512, 4096, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_HEURISTIC);
    p = P;
    p.gfx = "gfx955"; /* a gfx95x that the table does not name: no hit, no kernel for it */
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &p, 1, 512, 4096, &r, err, sizeof err),
                 A4W4_EUNSUPPORTED);
    cr_assert(strstr(err, "cannot get heuristic kernel"), "%s", err);
}

Test(route, miss_falls_to_the_heuristic, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 16, 128, 5120, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_HEURISTIC);
    cr_assert_null(r.row);
    cr_assert_eq(r.is_asm, 1);
    cr_assert_str_eq(a4w4_route_source_name(r.source), "heuristic");
    /* nothing tuned at all: the same */
    cr_assert_eq(a4w4_route_shape(NULL, &kt, &P, 1, 512, 4096, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.source, A4W4_SRC_HEURISTIC);
}

Test(route, gfx942_gives_aiters_error, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    a4w4_heur_params p = P;
    p.gfx = "gfx942";
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &p, 1, 512, 4096, &r, err, sizeof err),
                 A4W4_EUNSUPPORTED);
    cr_assert(strstr(err, "A4W4 GEMM kernel is not supported on gfx942, but got gfx942!"), "%s",
              err);
}

Test(route, bad_shapes_are_refused, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 0, 512, 4096, &r, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 1, 512, 100, &r, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert(strstr(err, "multiple of 32"), "%s", err);
}

/* ---- the heuristic, worked by hand -------------------------------------------------------- */

Test(heuristic, m16_n128_takes_256x256_alone, .init = load_real, .fini = free_real)
{
    /* M=16, N=128, 256 CUs, log2_k_split 0: every tile is at least 32x128, so every eligible
     * kernel needs ceil(16/tile_M)*ceil(128/tile_N) = 1 tile -> 1 round, 255 empty CUs. The
     * tie goes to the larger ratio: 256x256 has 256*256/512 = 128, the next (224x256) has
     * 57344/480 = 119. No kernel has fewer empty CUs, none a ratio above 128: 256x256 wins
     * under every order. (128x512 is skipped: 128 % 512 != 0.) */
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 16, 128, 5120, &r, err, sizeof err), A4W4_OK);
    cr_assert_str_eq(r.kernel, K256);
    cr_assert_eq(r.choice.tiles, 1);
    cr_assert_eq(r.choice.rounds, 1);
    cr_assert_eq(r.choice.empty_cu, 255);
    cr_assert_eq(r.choice.ratio, 128);
    cr_assert_eq(r.log2_k_split, 0);
    cr_assert_eq(r.split, 1);
    /* split-K kernel with one split: k_per_tg = ceil((5120/1)/256)*256 = 5120, z = 1 */
    cr_assert_eq(r.k_per_tg, 5120);
    cr_assert_eq(r.grid_z, 1);
    cr_assert_eq(r.fit, A4W4_FIT_TILE_N_GT_N | A4W4_FIT_TILE_M_GT_8M);
    cr_assert_eq(r.ncand, 1);
    cr_assert_eq(r.ncand_any, 1);
    cr_assert_eq(r.cand_any[0], kidx(K256));
}

Test(heuristic, m1_n160_file_order_walk, .init = load_real, .fini = free_real)
{
    /* M=1, N=160, 256 CUs, log2 0, file order (line: tile -> tiles, empty, ratio):
     *  3 256x256 -> 1, 255, 128  taken (first: rounds 1 < inf)
     *  5 192x256 -> 1, 255, 109  no;  6 224x256 -> 1, 255, 119  no
     *  7 128x128 -> 2, 254, 64   taken (254 < 255 empty)
     *  8 128x256 -> 1, 255, 85   taken (ratio 85 > 64)
     *  9 128x384 -> 1, 255, 96   taken;  10 160x128 -> 2, 254, 71  taken (fewer empty)
     * 11 160x256 -> 1, 255, 98   taken;  12 160x384 -> 1, 255, 112 taken (ratio)
     * 13 192x128 -> 2, 254, 76   taken;  14 224x128 -> 2, 254, 81  taken (ratio, same empty)
     * 15 256x128 -> 2, 254, 85   taken (ratio 85 > 81)
     * 16..36: 32xN (ratio <= 31), 64xN (<= 60), 96xN (<= 83): none has fewer than 254 empty
     *         CUs or a ratio above 85 -> 256x128 stays.
     * 128x512 (line 4) is skipped: 160 % 512 != 0; line 2 is the non-preshuffled kernel. */
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&kt, &P, 1, 160, NULL, 0, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, kidx(K256x128));
    cr_assert_eq(c.tiles, 2);
    cr_assert_eq(c.empty_cu, 254);
    cr_assert_eq(c.ratio, 85);
    /* Over every order: the Pareto front is {256x128 (254, 85), 256x256 (255, 128)}; from
     * 256x256 any 2-tile kernel (e.g. 32x128: 254, 25) replaces it, and from 32x128 any
     * kernel with ratio > 25 does: all 33 eligible kernels can win. */
    unsigned char w[A4W4_MAX_KERNELS];
    cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, 1, 160, w, err, sizeof err), A4W4_OK);
    int n = 0;
    for (size_t i = 0; i < kt.n; i++)
        n += w[i];
    cr_assert_eq(n, 33);
    cr_assert_eq(w[kidx("_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E")], 0);
    cr_assert_eq(w[kidx("_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E")], 0);
}

Test(heuristic, no_split_given_tries_2_4_8_16, .init = load_real, .fini = free_real)
{
    /* M=1, N=128, K=5120, log2_k_split -1: the 256x256 split-K kernel tries splits 2, 4, 8,
     * 16 -> tiles 2, 4, 8, 16, all 1 round, empty 254, 252, 248, 240; each later split has
     * fewer empty CUs and takes over. Every other kernel has 1 tile (255 empty). Winner
     * 256x256 with split 16 (log2 4): k_per_tg = ceil((5120/16)/256)*256 = ceil(320/256)*256
     * = 512, grid z = ceil(5120/512) = 10 (not 16). */
    a4w4_heur_params p = P;
    p.log2_k_split = -1;
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(NULL, &kt, &p, 1, 128, 5120, &r, err, sizeof err), A4W4_OK);
    cr_assert_str_eq(r.kernel, K256);
    cr_assert_eq(r.choice.split, 16);
    cr_assert_eq(r.choice.empty_cu, 240);
    cr_assert_eq(r.log2_k_split, 4);
    cr_assert_eq(r.split, 16);
    cr_assert_eq(r.k_per_tg, 512);
    cr_assert_eq(r.grid_z, 10);
    cr_assert(r.fit & A4W4_FIT_SPLIT_K);
    cr_assert_eq(r.ncand_any, 1);
}

Test(heuristic, forced_split_keeps_only_split_k_kernels, .init = load_real, .fini = free_real)
{
    /* M=1, N=512, K=4096, log2_k_split 2: only split-K kernels, split 4.
     * 256x256: tiles 1*2*4 = 8, empty 248, ratio 128 (taken first);
     * 128x512 (512 % 512 == 0): tiles 1*1*4 = 4, empty 252, ratio 102 -> no.
     * k_per_tg = ceil((4096/4)/256)*256 = 1024, z = 4. */
    a4w4_heur_params p = P;
    p.log2_k_split = 2;
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(NULL, &kt, &p, 1, 512, 4096, &r, err, sizeof err), A4W4_OK);
    cr_assert_str_eq(r.kernel, K256);
    cr_assert_eq(r.choice.tiles, 8);
    cr_assert_eq(r.choice.empty_cu, 248);
    cr_assert_eq(r.split, 4);
    cr_assert_eq(r.k_per_tg, 1024);
    cr_assert_eq(r.grid_z, 4);
    /* 256x256 dominates 128x512 (fewer empty, larger ratio): one possible winner */
    cr_assert_eq(r.ncand_any, 1);
}

Test(heuristic, bpreshuffle_0_takes_the_plain_kernel, .init = load_real, .fini = free_real)
{
    a4w4_heur_params p = P;
    p.bpreshuffle = 0;
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&kt, &p, 64, 1024, NULL, 0, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, kidx("_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E"));
    /* that kernel has no split-K: with log2_k_split > 0 nothing is eligible */
    p.log2_k_split = 1;
    cr_assert_eq(a4w4_heuristic(&kt, &p, 64, 1024, NULL, 0, &c, err, sizeof err),
                 A4W4_EUNSUPPORTED);
    cr_assert(strstr(err, "cannot get heuristic kernel"), "%s", err);
}

Test(heuristic, tile_128x512_only_when_n_is_a_multiple_of_512, .init = load_real,
     .fini = free_real)
{
    int k512 = kidx("_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E");
    unsigned char w[A4W4_MAX_KERNELS];
    for (int N = 16; N <= 4096; N += 16) {
        cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, 200, N, w, err, sizeof err),
                     A4W4_OK);
        if (N % 512)
            cr_assert_eq(w[k512], 0, "N %d", N);
    }
    /* at N = 512 it is eligible and can win (M=1: 1 tile, 255 empty, ratio 102) */
    cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, 1, 512, w, err, sizeof err), A4W4_OK);
    cr_assert_eq(w[k512], 1);
}

/* ---- possible winners ----------------------------------------------------------------- */

Test(winners, small_m_and_n_have_one_winner_256x256, .init = load_real, .fini = free_real)
{
    /* The claim (docs/findings.md, finding 1): M <= 16 and N <= 128 -> exactly one possible winner, 256x256. It
     * holds up to M = 32 (every tile has tile_M >= 32 and tile_N >= 128: one tile each). */
    unsigned char w[A4W4_MAX_KERNELS], s[A4W4_MAX_KERNELS];
    int k = kidx(K256);
    for (int M = 1; M <= 32; M++)
        for (int N = 1; N <= 128; N++) {
            cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, M, N, w, err, sizeof err),
                         A4W4_OK);
            cr_assert_eq(a4w4_heuristic_winners_sampled(&kt, &P, M, N, 64, s, err, sizeof err),
                         A4W4_OK);
            int n = 0, ns = 0;
            for (size_t i = 0; i < kt.n; i++) {
                n += w[i];
                ns += s[i];
            }
            cr_assert_eq(n, 1, "M %d N %d: %d winners", M, N, n);
            cr_assert_eq(ns, 1);
            cr_assert_eq(w[k], 1);
            cr_assert_eq(s[k], 1);
        }
    /* one step past: M = 33 at N = 128 already has several */
    cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, 33, 128, w, err, sizeof err), A4W4_OK);
    int n = 0;
    for (size_t i = 0; i < kt.n; i++)
        n += w[i];
    cr_assert_gt(n, 1);
}

Test(winners, sampled_orders_are_a_subset_of_every_order, .init = load_real, .fini = free_real)
{
    unsigned char w[A4W4_MAX_KERNELS], s[A4W4_MAX_KERNELS];
    for (int M = 1; M <= 300; M += 7)
        for (int N = 16; N <= 2048; N += 48) {
            cr_assert_eq(a4w4_heuristic_winners_any_order(&kt, &P, M, N, w, err, sizeof err),
                         A4W4_OK);
            cr_assert_eq(a4w4_heuristic_winners_sampled(&kt, &P, M, N, 16, s, err, sizeof err),
                         A4W4_OK);
            a4w4_heur_choice c;
            cr_assert_eq(a4w4_heuristic(&kt, &P, M, N, NULL, 0, &c, err, sizeof err), A4W4_OK);
            cr_assert_eq(s[c.kernel], 1, "file-order winner not among the sampled ones");
            for (size_t i = 0; i < kt.n; i++)
                cr_assert(!s[i] || w[i], "M %d N %d: sampled winner %zu not in the exact set", M,
                          N, i);
        }
}

Test(winners, route_lists_candidates_sorted_by_name, .init = load_real, .fini = free_real)
{
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &P, 1, 144, 5120, &r, err, sizeof err), A4W4_OK);
    cr_assert_eq(r.ncand_any, 33);
    cr_assert_leq(r.ncand, r.ncand_any);
    for (size_t i = 1; i < r.ncand_any; i++)
        cr_assert_lt(strcmp(kt.rows[r.cand_any[i - 1]].name, kt.rows[r.cand_any[i]].name), 0);
    for (size_t i = 1; i < r.ncand; i++)
        cr_assert_lt(strcmp(kt.rows[r.cand[i - 1]].name, kt.rows[r.cand[i]].name), 0);
    /* warnings: the chosen tile's N tail and M padding, order dependence, then others */
    size_t nw = a4w4_route_warning_count(&r);
    cr_assert_gt(nw, 3);
    char buf[512];
    a4w4_route_warning(&r, &kt, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "N 144 % tile_N 128 = 16: the last N tile is partial");
    a4w4_route_warning(&r, &kt, 2, buf, sizeof buf);
    cr_assert(strstr(buf, "order-dependent: 33 kernels can win"), "%s", buf);
    a4w4_route_warning(&r, &kt, 3, buf, sizeof buf);
    cr_assert(strstr(buf, "possible winner "), "%s", buf);
}

/* Small in-memory kernel tables for hand-worked and brute-force checks. */
typedef struct {
    a4w4_kernel_table t;
    a4w4_asm_kernel rows[8];
    char names[8][16];
} mini_table;

static void mini_init(mini_table *m, int n, const int (*tiles)[3])
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < n; i++) {
        snprintf(m->names[i], sizeof m->names[i], "k%d", i);
        m->rows[i].tile_m = tiles[i][0];
        m->rows[i].tile_n = tiles[i][1];
        m->rows[i].split_k = tiles[i][2];
        m->rows[i].bpreshuffle = 1;
        m->rows[i].name = m->names[i];
        m->rows[i].co_name = (char *)"";
        m->rows[i].line = i + 2;
    }
    m->t.rows = m->rows;
    m->t.n = (size_t)n;
    m->t.file = (char *)"mini";
}

Test(winners, two_incomparable_kernels_each_win_one_order)
{
    /* 4 CUs, M=32, N=128, log2 0. A = 32x32: 1*4 = 4 tiles, 0 empty, ratio 1024/64 = 16.
     * B = 32x128: 1 tile, 3 empty, ratio 4096/160 = 25. Order A, B: A taken, then B has a
     * larger ratio -> B. Order B, A: B taken, then A has fewer empty CUs -> A. */
    static const int tiles[2][3] = {{32, 32, 0}, {32, 128, 0}};
    mini_table m;
    mini_init(&m, 2, tiles);
    a4w4_heur_params p = {"gfx950", 4, 0, 1};
    a4w4_heur_choice c;
    size_t rev[2] = {1, 0};
    cr_assert_eq(a4w4_heuristic(&m.t, &p, 32, 128, NULL, 0, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, 1);
    cr_assert_eq(a4w4_heuristic(&m.t, &p, 32, 128, rev, 2, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, 0);
    unsigned char w[A4W4_MAX_KERNELS], s[A4W4_MAX_KERNELS];
    cr_assert_eq(a4w4_heuristic_winners_any_order(&m.t, &p, 32, 128, w, err, sizeof err), A4W4_OK);
    cr_assert_eq(a4w4_heuristic_winners_sampled(&m.t, &p, 32, 128, 64, s, err, sizeof err),
                 A4W4_OK);
    cr_assert(w[0] && w[1] && s[0] && s[1]);
}

Test(winners, fewer_rounds_always_win)
{
    /* 4 CUs, M=100, N=256. 64x64: 2*4 = 8 tiles, 2 rounds. 32x128: 4*2 = 8 tiles, 2 rounds.
     * 128x128: 1*2 = 2 tiles, 1 round -> wins under every order. */
    static const int tiles[3][3] = {{64, 64, 0}, {32, 128, 0}, {128, 128, 0}};
    mini_table m;
    mini_init(&m, 3, tiles);
    a4w4_heur_params p = {"gfx950", 4, -1, 1};
    unsigned char w[A4W4_MAX_KERNELS];
    cr_assert_eq(a4w4_heuristic_winners_any_order(&m.t, &p, 100, 256, w, err, sizeof err),
                 A4W4_OK);
    cr_assert(!w[0] && !w[1] && w[2]);
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&m.t, &p, 100, 256, NULL, 0, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, 2);
    cr_assert_eq(c.rounds, 1);
    cr_assert_eq(c.empty_cu, 2);
}

Test(winners, a_dominated_kernel_can_still_win_through_a_chain)
{
    /* 2 CUs, M=8, N=24, log2 0 (every tile 1 round):
     *   m = 16x48: 1*1 = 1 tile,  1 empty, ratio 768/64 = 12
     *   z = 16x16: 1*2 = 2 tiles, 0 empty, ratio 256/32 = 8
     *   w = 16x32: 1*1 = 1 tile,  1 empty, ratio 512/48 = 10
     * m dominates w (same empty CUs, larger ratio), yet the walk m, z, w ends on w:
     * z replaces m (0 < 1 empty), w replaces z (ratio 10 > 8). The replacement relation is
     * not transitive, so "possible winners" is not just the Pareto front {m, z}. */
    static const int tiles[3][3] = {{16, 48, 0}, {16, 16, 0}, {16, 32, 0}};
    mini_table m;
    mini_init(&m, 3, tiles);
    a4w4_heur_params p = {"gfx950", 2, 0, 1};
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&m.t, &p, 8, 24, NULL, 0, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, 2);
    cr_assert_eq(c.empty_cu, 1);
    cr_assert_eq(c.ratio, 10);
    size_t mw[3] = {0, 2, 1}; /* m, w, z: z replaces w at the end */
    cr_assert_eq(a4w4_heuristic(&m.t, &p, 8, 24, mw, 3, &c, err, sizeof err), A4W4_OK);
    cr_assert_eq(c.kernel, 1);
    unsigned char w[A4W4_MAX_KERNELS];
    cr_assert_eq(a4w4_heuristic_winners_any_order(&m.t, &p, 8, 24, w, err, sizeof err), A4W4_OK);
    cr_assert(w[0] && w[1] && w[2]);
}

static tu_rng rng = {0x243F6A8885A308D3ull}; /* xorshift64 */

static unsigned rnd(unsigned n)
{
    return tu_xorshift64_below(&rng, n);
}

static int next_perm(size_t *a, size_t n)
{
    if (n < 2)
        return 0;
    size_t i = n - 1;
    while (i > 0 && a[i - 1] >= a[i])
        i--;
    if (i == 0)
        return 0;
    size_t j = n - 1;
    while (a[j] <= a[i - 1])
        j--;
    size_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (size_t l = i, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

Test(winners, exact_set_equals_brute_force_over_all_orders)
{
    static const int dims[] = {16, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512};
    int checked = 0;
    for (int trial = 0; trial < 400; trial++) {
        int n = 2 + (int)rnd(5); /* 2..6 kernels: at most 720 orders */
        int tiles[6][3];
        for (int i = 0; i < n; i++) {
            tiles[i][0] = dims[rnd(9)];
            tiles[i][1] = rnd(8) == 0 ? 512 : dims[rnd(11)];
            tiles[i][2] = rnd(4) == 0;
            if (rnd(6) == 0) {
                tiles[i][0] = 128;
                tiles[i][1] = 512;
            }
        }
        mini_table m;
        mini_init(&m, n, (const int(*)[3])tiles);
        static const int logs[4] = {-1, 0, 1, 2};
        a4w4_heur_params p = {"gfx950", 1 + (int)rnd(16), logs[rnd(4)], 1};
        int M = 1 + (int)rnd(400), N = 1 + (int)rnd(1100);
        unsigned char w[A4W4_MAX_KERNELS], b[A4W4_MAX_KERNELS] = {0};
        int rc = a4w4_heuristic_winners_any_order(&m.t, &p, M, N, w, err, sizeof err);
        if (rc == A4W4_EUNSUPPORTED)
            continue; /* nothing eligible (e.g. log2 > 0 and no split-K kernel) */
        cr_assert_eq(rc, A4W4_OK, "%s", err);
        size_t order[6];
        for (int i = 0; i < n; i++)
            order[i] = (size_t)i;
        do {
            a4w4_heur_choice c;
            cr_assert_eq(a4w4_heuristic(&m.t, &p, M, N, order, (size_t)n, &c, err, sizeof err),
                         A4W4_OK);
            b[c.kernel] = 1;
        } while (next_perm(order, (size_t)n));
        for (int i = 0; i < n; i++)
            cr_assert_eq(w[i], b[i],
                         "trial %d kernel %d (%dx%d split %d): exact %d, brute force %d "
                         "(M %d N %d cu %d log2 %d)",
                         trial, i, tiles[i][0], tiles[i][1], tiles[i][2], w[i], b[i], M, N,
                         p.num_cu, p.log2_k_split);
        checked++;
    }
    cr_assert_gt(checked, 300);
}

/* ---- tile fit ------------------------------------------------------------------------- */

Test(tile_fit, flags_follow_the_rules)
{
    cr_assert_eq(a4w4_tile_fit(32, 128, 1, 4, 256), 0);
    cr_assert_eq(a4w4_tile_fit(32, 256, 1, 4, 128), A4W4_FIT_TILE_N_GT_N);
    cr_assert_eq(a4w4_tile_fit(32, 128, 1, 4, 144), A4W4_FIT_N_PARTIAL);
    cr_assert_eq(a4w4_tile_fit(64, 128, 1, 7, 128), A4W4_FIT_TILE_M_GT_8M); /* 64 > 56 */
    cr_assert_eq(a4w4_tile_fit(64, 128, 1, 8, 128), 0);                     /* 64 = 64 */
    cr_assert_eq(a4w4_tile_fit(256, 256, 4, 32, 512), A4W4_FIT_SPLIT_K);
}

/* ---- malformed tables ------------------------------------------------------------------- */

static void expect_tuned_error(const char *name, const char *content, const char *needle)
{
    a4w4_tuned_table t = {0};
    const char *path = scratch(name, content);
    int rc = a4w4_tuned_load(&t, path, err, sizeof err);
    cr_assert_eq(rc, A4W4_EINVAL, "%s: loaded although malformed", name);
    cr_assert(strstr(err, needle), "%s: error '%s' lacks '%s'", name, err, needle);
    cr_assert_eq(t.n, 0);
    a4w4_tuned_free(&t);
}

Test(malformed, wrong_column_count_names_line_and_column)
{
    expect_tuned_error("few.csv", HDR ROW1 "gfx950,256,2,512,4096,21,0,5.4,k,0.78,194.57\n",
                       "few.csv:3:45: 11 fields where the header has 12");
    expect_tuned_error("many.csv", HDR ROW1 "gfx950,256,2,512,4096,21,0,5.4,k,0.78,194.57,0,9\n",
                       "many.csv:3:48: 13 fields where the header has 12");
}

Test(malformed, non_integer_where_an_integer_belongs)
{
    expect_tuned_error("nonint.csv", HDR ROW1 "gfx950,256,x2,512,4096,21,0,5.4,k,0.78,1,0\n",
                       "nonint.csv:3:12: M is 'x2', not an integer");
    expect_tuned_error("float.csv", HDR ROW1 "gfx950,256,2,512.0,4096,21,0,5.4,k,0.78,1,0\n",
                       "float.csv:3:14: N is '512.0', not an integer");
    expect_tuned_error("zero.csv", HDR ROW1 "gfx950,256,0,512,4096,21,0,5.4,k,0.78,1,0\n",
                       "zero.csv:3:12: M is 0, outside 1..");
    expect_tuned_error("split.csv", HDR ROW1 "gfx950,256,2,512,4096,21,-1,5.4,k,0.78,1,0\n",
                       "split.csv:3:26: splitK is -1, outside 0..30");
}

Test(malformed, quotes)
{
    expect_tuned_error("unterm.csv", HDR ROW1 "gfx950,256,2,512,4096,21,0,5.4,\"k,0.78,1,0\n",
                       "unterm.csv:3:32: unterminated quote");
    expect_tuned_error("badq.csv", HDR ROW1 "gfx950,256,2,512,4096,21,0,5.4,\"k\"x,0.78,1,0\n",
                       "badq.csv:3:35: malformed quoting");
    /* a well-quoted field with a comma, CRLF line ends and blank lines are fine */
    a4w4_tuned_table t = {0};
    const char *ok = scratch("ok.csv", "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,"
                                       "bw,errRatio\r\n\r\n"
                                       "\"gfx950\", 256 ,2,512,4096,21,0,5.4,\"a,b\",0.78,1,0\r\n");
    cr_assert_eq(a4w4_tuned_load(&t, ok, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(t.n, 1);
    cr_assert_str_eq(t.rows[0].kernel_name, "a,b");
    cr_assert_eq(t.rows[0].line, 3);
    a4w4_tuned_free(&t);
}

Test(malformed, header_must_name_the_key_columns)
{
    expect_tuned_error("nohdr.csv", "gfx,cu_num,M,N,kernelName\ngfx950,256,1,2,k\n",
                       "nohdr.csv:1:1: header lacks column 'K'");
}

Test(malformed, missing_and_empty_tables)
{
    a4w4_tuned_table t = {0};
    cr_assert_eq(a4w4_tuned_load(&t, A4W4_BINARY_DIR "/no/such/table.csv", err, sizeof err),
                 A4W4_EINVAL);
    cr_assert(strstr(err, "table.csv: cannot open"), "%s", err);
    expect_tuned_error("empty.csv", "", "empty.csv: empty table");
    expect_tuned_error("hdronly.csv", HDR, "hdronly.csv: empty table (header only");
    cr_assert_eq(a4w4_kernels_load(&kt, scratch("k_empty.csv", ""), NULL, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert(strstr(err, "empty table"), "%s", err);
}

Test(malformed, duplicates_dropped_conflicts_refused)
{
    a4w4_tuned_table t = {0};
    cr_assert_eq(a4w4_tuned_load(&t, scratch("dup.csv", HDR ROW1 ROW1), err, sizeof err),
                 A4W4_OK, "%s", err);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.dropped, 1);
    /* the same row again from a second file is dropped too */
    cr_assert_eq(a4w4_tuned_load(&t, scratch("dup2.csv", HDR ROW1), err, sizeof err), A4W4_OK);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.dropped, 2);
    /* a different row for the same key, from another file: refused, t unchanged */
    const char *c = scratch("conf2.csv", HDR "gfx950,256,1,512,4096,22,0,5.4,other,0.78,1,0\n");
    cr_assert_eq(a4w4_tuned_load(&t, c, err, sizeof err), A4W4_EINVAL);
    cr_assert(strstr(err, "conf2.csv:2:1: conflicting rows for key (gfx 'gfx950', cu_num 256, "
                          "M 1, N 512, K 4096)"),
              "%s", err);
    cr_assert(strstr(err, "dup.csv:2"), "%s", err);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.loaded, 2);
    a4w4_tuned_free(&t);
    expect_tuned_error("conf.csv", HDR ROW1 "gfx950,256,1,512,4096,22,0,5.4,other,0.78,1,0\n",
                       "conf.csv:3:1: conflicting rows");
}

Test(malformed, old_schema_without_gfx_keys_on_cu_num)
{
    a4w4_tuned_table t = {0};
    const char *old = scratch("old.csv", "cu_num,M,N,K,kernelId,splitK,us,kernelName\n"
                                         "256,1,512,4096,21,0,5.4," K32x128 "\n");
    cr_assert_eq(a4w4_tuned_load(&t, old, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_not(t.has_gfx);
    cr_assert_not_null(a4w4_tuned_find(&t, "gfx950", 256, 1, 512, 4096));
    cr_assert_not_null(a4w4_tuned_find(&t, "anything", 256, 1, 512, 4096));
    /* mixing schemas in one merged table is refused */
    cr_assert_eq(a4w4_tuned_load(&t, TUNED, err, sizeof err), A4W4_EINVAL);
    cr_assert(strstr(err, "schema differs"), "%s", err);
    a4w4_tuned_free(&t);
}

Test(malformed, kernel_table_rules)
{
    const char *h = "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%s32,128,0,1,_ZNa,a.co\n32,128,2,1,_ZNb,b.co\n", h);
    cr_assert_eq(a4w4_kernels_load(&kt, scratch("k_split.csv", buf), NULL, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert(strstr(err, "k_split.csv:3:8: splitK is 2, outside 0..1"), "%s", err);
    snprintf(buf, sizeof buf, "%s32,128,0,1,_ZNa,a.co\n32,256,0,1,_ZNa,a.co\n", h);
    cr_assert_eq(a4w4_kernels_load(&kt, scratch("k_conf.csv", buf), NULL, err, sizeof err),
                 A4W4_EINVAL);
    cr_assert(strstr(err, "k_conf.csv:3:12: kernel _ZNa is listed again"), "%s", err);
    snprintf(buf, sizeof buf, "%s32,128,0,1,_ZNa,a.co\n32,128,0,1,_ZNa,a.co\n", h);
    cr_assert_eq(a4w4_kernels_load(&kt, scratch("gfx950_k_dup.csv", buf), NULL, err, sizeof err),
                 A4W4_OK, "%s", err);
    cr_assert_eq(kt.n, 1);
    cr_assert_str_eq(kt.arch, "gfx950");
    /* a table for gfx950 serves no other arch */
    a4w4_heur_params p = {"gfx1250", 256, 0, 1};
    a4w4_heur_choice c;
    cr_assert_eq(a4w4_heuristic(&kt, &p, 1, 128, NULL, 0, &c, err, sizeof err), A4W4_EUNSUPPORTED);
    a4w4_kernels_free(&kt);
}

/* ---- reentrancy ------------------------------------------------------------------------- */

/* One routing job: its tables, parameters and shapes, and the answers of a sequential run. */
#define JOB_SHAPES 216
#define JOB_WARN 8
typedef struct {
    const a4w4_tuned_table *tuned; /* NULL: nothing tuned */
    const a4w4_kernel_table *kt;
    a4w4_heur_params p;
    int shapes[JOB_SHAPES][3];
    int status[JOB_SHAPES];
    a4w4_route want[JOB_SHAPES];
    char warn[JOB_SHAPES][JOB_WARN][256]; /* the first JOB_WARN warnings of each route */
    int passes;
    size_t mismatches; /* set by the thread */
} route_job;

/* 12 M x 6 N x 3 K: tuned hits, padded hits and heuristic routes with several winners. */
static void job_shapes(route_job *j)
{
    static const int ms[12] = {1, 3, 16, 33, 64, 100, 128, 200, 256, 512, 1000, 4096};
    static const int ns[6] = {128, 160, 512, 1024, 2112, 7168};
    static const int ks[3] = {1024, 4096, 7168};
    int n = 0;
    for (int a = 0; a < 12; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 3; c++) {
                j->shapes[n][0] = ms[a];
                j->shapes[n][1] = ns[b];
                j->shapes[n][2] = ks[c];
                n++;
            }
}

/* Route shape i of j into r (and its warnings into w); the status. */
static int job_route(const route_job *j, int i, a4w4_route *r, char w[JOB_WARN][256],
                     char *e, size_t elen)
{
    const int *s = j->shapes[i];
    int st = a4w4_route_shape(j->tuned, j->kt, &j->p, s[0], s[1], s[2], r, e, elen);
    for (size_t k = 0; k < JOB_WARN; k++)
        w[k][0] = '\0';
    size_t nw = st ? 0 : a4w4_route_warning_count(r);
    for (size_t k = 0; k < nw && k < JOB_WARN; k++)
        a4w4_route_warning(r, j->kt, k, w[k], 256);
    return st;
}

/* 1 when the two routes give the same answer, field by field (padding is not compared). */
static int same_route(const a4w4_route *a, const a4w4_route *b)
{
    if (a->source != b->source || a->tuned_m != b->tuned_m || a->row != b->row ||
        a->is_asm != b->is_asm || a->kernel != b->kernel || a->kernel_index != b->kernel_index ||
        a->tile_m != b->tile_m || a->tile_n != b->tile_n || a->log2_k_split != b->log2_k_split ||
        a->split != b->split || a->k_per_tg != b->k_per_tg || a->grid_x != b->grid_x ||
        a->grid_y != b->grid_y || a->grid_z != b->grid_z || a->fit != b->fit ||
        a->tuned_not_in_kernels != b->tuned_not_in_kernels)
        return 0;
    const a4w4_heur_choice *x = &a->choice, *y = &b->choice;
    if (x->kernel != y->kernel || x->split != y->split || x->tiles != y->tiles ||
        x->rounds != y->rounds || x->empty_cu != y->empty_cu || x->ratio != y->ratio)
        return 0;
    if (a->ncand != b->ncand || a->ncand_any != b->ncand_any)
        return 0;
    for (size_t i = 0; i < a->ncand; i++)
        if (a->cand[i] != b->cand[i])
            return 0;
    for (size_t i = 0; i < a->ncand_any; i++)
        if (a->cand_any[i] != b->cand_any[i] || a->cand_fit[i] != b->cand_fit[i])
            return 0;
    return 1;
}

/* 1 when the warnings of two routes read the same. */
static int same_warnings(char a[JOB_WARN][256], char b[JOB_WARN][256])
{
    for (size_t k = 0; k < JOB_WARN; k++)
        if (strcmp(a[k], b[k]))
            return 0;
    return 1;
}

/* Route every shape of the job `passes` times, counting answers that differ from the
 * sequential run. */
static void *job_thread(void *arg)
{
    route_job *j = arg;
    a4w4_route r;
    char w[JOB_WARN][256], e[512];
    for (int pass = 0; pass < j->passes; pass++)
        for (int i = 0; i < JOB_SHAPES; i++) {
            int st = job_route(j, i, &r, w, e, sizeof e);
            if (st != j->status[i] || (st == A4W4_OK && !same_route(&r, &j->want[i])) ||
                !same_warnings(w, j->warn[i]))
                j->mismatches++;
        }
    return NULL;
}

/* The real kernel table written back in reverse file order: the same kernels at other
 * indices, so a name sort that read the other job's table would put them out of order. */
static void load_reversed(a4w4_kernel_table *out)
{
    static char text[65536];
    size_t u = (size_t)snprintf(text, sizeof text, "tile_M,tile_N,splitK,bpreshuffle,knl_name\n");
    for (size_t i = kt.n; i-- > 0 && u < sizeof text;)
        u += (size_t)snprintf(text + u, sizeof text - u, "%d,%d,%d,%d,%s\n", kt.rows[i].tile_m,
                              kt.rows[i].tile_n, kt.rows[i].split_k, kt.rows[i].bpreshuffle,
                              kt.rows[i].name);
    cr_assert_lt(u, sizeof text);
    const char *path = scratch("gfx950_reversed.csv", text);
    cr_assert_eq(a4w4_kernels_load(out, path, NULL, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(out->n, kt.n);
}

Test(reentrancy, two_threads_route_as_sequential_routing_does, .init = load_real,
     .fini = free_real, .timeout = 240)
{
    a4w4_kernel_table rev;
    load_reversed(&rev);
    static route_job job[2];
    job[0] = (route_job){.tuned = &tuned, .kt = &kt, .p = P, .passes = 3};
    job[1] = (route_job){.tuned = NULL, .kt = &rev, .p = {"gfx950", 304, -1, 1}, .passes = 3};
    size_t differ = 0; /* shapes whose candidate indices differ between the two jobs */
    for (int k = 0; k < 2; k++) {
        job_shapes(&job[k]);
        for (int i = 0; i < JOB_SHAPES; i++) {
            job[k].status[i] = job_route(&job[k], i, &job[k].want[i], job[k].warn[i], err,
                                         sizeof err);
            cr_assert_eq(job[k].status[i], A4W4_OK, "job %d shape %d: %s", k, i, err);
        }
    }
    size_t tuned_hits = 0;
    for (int i = 0; i < JOB_SHAPES; i++) {
        const a4w4_route *a = &job[0].want[i], *b = &job[1].want[i];
        tuned_hits += a->source != A4W4_SRC_HEURISTIC;
        differ += a->ncand_any > 1 && (a->ncand_any != b->ncand_any ||
                                       a->cand_any[0] != b->cand_any[0]);
    }
    cr_assert_gt(tuned_hits, 10, "job 0 must route through tuned rows too");
    cr_assert_gt(differ, 10, "the two jobs must give different answers to tell them apart");
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        cr_assert_eq(pthread_create(&th[k], NULL, job_thread, &job[k]), 0);
    for (int k = 0; k < 2; k++)
        cr_assert_eq(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < 2; k++)
        cr_assert_eq(job[k].mismatches, 0, "job %d: %zu routes differ from sequential routing", k,
                     job[k].mismatches);
    a4w4_kernels_free(&rev);
}
