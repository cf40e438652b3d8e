/* fuzz_tuned.c — libFuzzer target for AITER's tuned-table reader (a4w4_tuned_load,
 * ref/a4w4_dispatch.h) and the shape-list reader (a4w4_shapelist_load, harness/io/shapelist.h);
 * contracts §5.1. Path based: each input is written to <scratch>/a4w4_blockscale_tuned_gemm.csv
 * first.
 *
 * The custom mutator (csv_mutator.h) keeps a tuned-table header and mutates rows (cu_num, M,
 * N, K at their limits, splitK 0..31, ASM and CK kernel names, duplicate and conflicting
 * keys, quoting). Checked for an accepted table: rows sorted by unique key, every field in
 * its documented range, each row found by a4w4_tuned_find and by the lookup walk at its own
 * M, loading the same file again merges (every row an exact duplicate: same rows, two files),
 * and routing a row's shape (a4w4_route_shape, cases/aiter's gfx950 kernel table) answers
 * that row. A refused table: A4W4_EINVAL / A4W4_ENOMEM, one error line naming the file, the
 * table untouched. The shape list read of the same file: every value in 1..A4W4_DIM_MAX. */
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "csv_mutator.h"
#include "fuzz_common.h"
#include "shapelist.h"

#define TARGET "tuned"
#define FILE_NAME "a4w4_blockscale_tuned_gemm.csv"

static const char *const header[] = {"gfx", "cu_num", "M", "N", "K", "kernelId", "splitK",
                                     "us", "kernelName", "tflops", "bw", "errRatio", NULL};
static const char *const gfx[] = {"gfx950", "gfx942", "gfx9500", "", "GFX950", NULL};
static const char *const cu[] = {"256", "80", "304", "1", "0", "2147483647", NULL};
static const char *const dims[] = {"1", "16", "32", "256", "7168", "8192", "8193", "1073741824",
                                   "1073741825", "100", "0", NULL};
static const char *const splitk[] = {"0", "1", "2", "4", "29", "30", "31", "-1", NULL};
static const char *const kernels[] = {
    "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E",
    "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E",
    "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E",
    "_ZN5aiter_unknown", "a4w4_bpreshuffle_256x128x128x128_16x16_16x16_8x32x1_8x32x1", "", NULL};
static const char *const timing[] = {"5.4", "0.0", "", "nan", "1e9", NULL};
static const fz_csv_column columns[] = {
    {"gfx", gfx},         {"cu_num", cu},     {"M", dims},       {"N", dims},
    {"K", dims},          {"splitK", splitk}, {"kernelId", cu},  {"kernelName", kernels},
    {"us", timing},       {"tflops", timing}, {"bw", timing},    {"errRatio", timing}};
static const fz_csv_dict dict = {header, columns, sizeof columns / sizeof columns[0]};

static a4w4_kernel_table kernel_table; /* cases/aiter's gfx950 table, loaded once */

static int key_cmp(const a4w4_tuned_row *a, const a4w4_tuned_row *b)
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
    return (a->K > b->K) - (a->K < b->K);
}

static void check_row(const a4w4_tuned_table *t, size_t i)
{
    const a4w4_tuned_row *r = &t->rows[i];
    fz_check(r->cu_num >= 1 && r->M >= 1 && r->N >= 1 && r->K >= 1 && r->M <= A4W4_DIM_MAX &&
                 r->N <= A4W4_DIM_MAX && r->K <= A4W4_DIM_MAX && r->split_k >= 0 &&
                 r->split_k <= 30,
             TARGET, "row %zu (line %d) out of range", i, r->line);
    fz_check(r->gfx && r->kernel_name && r->kernel_name[0] && r->us && r->tflops && r->bw &&
                 r->err_ratio && r->file && r->line >= 2,
             TARGET, "row %zu: missing text or line", i);
    fz_check(t->has_gfx || !r->gfx[0], TARGET, "row %zu: gfx '%s' without a gfx column", i, r->gfx);
    fz_check(i == 0 || key_cmp(&t->rows[i - 1], r) < 0, TARGET, "rows %zu, %zu not sorted by unique key",
             i - 1, i);
    fz_check(a4w4_tuned_find(t, r->gfx, r->cu_num, r->M, r->N, r->K) == r, TARGET,
             "row %zu not found by its key", i);
    int src = -1, m_hit = 0;
    const a4w4_tuned_row *hit = a4w4_tuned_lookup(t, r->gfx, r->cu_num, r->M, r->N, r->K, &src, &m_hit);
    fz_check(hit == r && src == A4W4_SRC_TUNED && m_hit == r->M, TARGET,
             "row %zu: the lookup walk at its own M does not answer it", i);
}

/* Route row r's shape: the answer is that row (or a documented refusal). */
static void check_route(const a4w4_tuned_table *t, const a4w4_tuned_row *r)
{
    if (r->K % 32)
        return;
    a4w4_heur_params p = {t->has_gfx ? r->gfx : "gfx950", r->cu_num, -1, 1};
    static a4w4_route route; /* large */
    char err[512] = "";
    int st = a4w4_route_shape(t, &kernel_table, &p, r->M, r->N, r->K, &route, err, sizeof err);
    fz_check(st == A4W4_OK || st == A4W4_EUNSUPPORTED, TARGET, "route of row line %d: %d %s",
             r->line, st, err);
    if (st == A4W4_OK)
        fz_check(route.row == r && route.source == A4W4_SRC_TUNED && route.kernel == r->kernel_name,
                 TARGET, "route of row line %d did not answer the row", r->line);
}

static void check_again(a4w4_tuned_table *t, const char *path)
{
    size_t n = t->n;
    char err[512] = "";
    int st = a4w4_tuned_load(t, path, err, sizeof err);
    fz_check(st == A4W4_OK && t->n == n && t->loaded == 2, TARGET,
             "loading the same table twice: %d, %zu rows then %zu (%s)", st, n, t->n, err);
}

static void check_shapes(const char *path)
{
    int *shapes = NULL;
    size_t n = 0;
    char err[512] = "";
    int st = a4w4_shapelist_load(path, &shapes, &n, err, sizeof err);
    if (st) {
        fz_check(!shapes && !n && (st == A4W4_EINVAL || st == A4W4_ENOMEM), TARGET,
                 "shape list refusal %d left shapes", st);
        fz_check_err_line(err, path, TARGET);
        return;
    }
    fz_check(n >= 1, TARGET, "an empty shape list accepted");
    for (size_t i = 0; i < 3 * n; i++)
        fz_check(shapes[i] >= 1 && shapes[i] <= A4W4_DIM_MAX, TARGET, "shape value %d", shapes[i]);
    free(shapes);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_tmp_init();
    char err[512];
    const char *kp = fz_source_path("cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv");
    fz_check(a4w4_kernels_load(&kernel_table, kp, NULL, err, sizeof err) == A4W4_OK, TARGET,
             "cannot load the kernel table: %s", err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024], err[1024] = "";
    fz_write_input(FILE_NAME, data, size, path, sizeof path);
    check_shapes(path);
    a4w4_tuned_table t;
    memset(&t, 0, sizeof t);
    int st = a4w4_tuned_load(&t, path, err, sizeof err);
    if (st) {
        fz_check(st == A4W4_EINVAL || st == A4W4_ENOMEM, TARGET, "status %d", st);
        fz_check(!t.rows && !t.n && !t.loaded && !t.files, TARGET,
                 "a refused table changed t (rows %p, n %zu, loaded %d, files %p): %s",
                 (void *)t.rows, t.n, t.loaded, (void *)t.files, err);
        a4w4_tuned_free(&t);
        fz_check_err_line(err, path, TARGET);
        return 0;
    }
    fz_check(t.n >= 1 && t.loaded == 1, TARGET, "accepted with %zu rows, %d files", t.n, t.loaded);
    for (size_t i = 0; i < t.n; i++)
        check_row(&t, i);
    for (size_t i = 0; i < t.n && i < 8; i++)
        check_route(&t, &t.rows[i]);
    check_again(&t, path);
    a4w4_tuned_free(&t);
    fz_accepted();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_csv_mutate(data, size, max_size, seed, &dict);
}
