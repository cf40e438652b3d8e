/* fuzz_kernels.c — libFuzzer target for AITER's ASM kernel-table reader (a4w4_kernels_load,
 * ref/a4w4_dispatch.h; contracts §5.3) and the heuristic that walks the table it returns.
 * Path based: each input is written to <scratch>/gfx950_f4gemm_bf16_per1x32Fp4.csv first
 * (the file name gives the arch, "gfx950").
 *
 * The custom mutator (csv_mutator.h) keeps a kernel-table header and mutates rows (tiles up
 * to and past 65536, splitK / bpreshuffle flags, names, duplicates). Checked for an accepted
 * table: 1..A4W4_MAX_KERNELS rows, each in range and found by name, arch "gfx950"; then for a
 * few shapes chosen by the input the heuristic's file-order winner and every sampled winner
 * belong to the exact any-order winner set (a4w4_heuristic_winners_any_order's promise), and
 * routing an untuned shape answers a kernel of that set; a shape where an eligible kernel
 * needs more than 2^32 - 1 tiles (AITER's uint32 count wraps) is refused by the walk, the
 * any-order set and the route alike, the message naming the limit. A refused table:
 * A4W4_EINVAL / A4W4_ENOMEM, one error line naming the file, the table zeroed. */
#include <string.h>

#include "a4w4_dispatch.h"
#include "csv_mutator.h"
#include "fuzz_common.h"

#define TARGET "kernels"
#define FILE_NAME "gfx950_f4gemm_bf16_per1x32Fp4.csv"

static const char *const header[] = {"tile_M", "tile_N", "splitK", "bpreshuffle", "knl_name",
                                     "co_name", NULL};
static const char *const tiles[] = {"32", "64", "96", "128", "192", "256", "512", "1", "0",
                                    "46341", "65535", "65536", "65537", NULL};
static const char *const flags[] = {"0", "1", "2", "-1", NULL};
static const char *const names[] = {"_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E",
                                    "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512E",
                                    "_ZN5aiter_k1", "_ZN5aiter_k2", "", NULL};
static const char *const cos[] = {"f4gemm.co", "", NULL};
static const fz_csv_column columns[] = {{"tile_M", tiles},     {"tile_N", tiles},
                                        {"splitK", flags},     {"bpreshuffle", flags},
                                        {"knl_name", names},   {"co_name", cos}};
static const fz_csv_dict dict = {header, columns, sizeof columns / sizeof columns[0]};

static void check_table(const a4w4_kernel_table *kt)
{
    fz_check(kt->n >= 1 && kt->n <= A4W4_MAX_KERNELS && !strcmp(kt->arch, "gfx950"), TARGET,
             "accepted %zu kernels, arch '%s'", kt->n, kt->arch);
    for (size_t i = 0; i < kt->n; i++) {
        const a4w4_asm_kernel *k = &kt->rows[i];
        fz_check(k->tile_m >= 1 && k->tile_n >= 1 && (k->split_k | 1) == 1 &&
                     (k->bpreshuffle | 1) == 1 && k->name && k->name[0] && k->co_name,
                 TARGET, "kernel %zu (line %d) out of range", i, k->line);
        fz_check(a4w4_kernels_find(kt, k->name) == (int)i, TARGET, "kernel '%s' twice or not found",
                 k->name);
    }
}

/* Whether an eligible candidate needs more than 2^32 - 1 tiles (AITER's uint32 tile count
 * wraps: the heuristic refuses the shape), from the documented rules (a4w4_dispatch.h: arch
 * gfx950 on a gfx950 table, bpreshuffle matches, split-K kernels only for log2_k_split > 0,
 * 128x512 only when N % 512 == 0; splits 2^log2_k_split, else up to 16), independently of
 * ref/. Tiles ceil(M/tile_M) * ceil(N/tile_N) * split; exact in double near 2^32. */
static int past_tile_limit(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N)
{
    for (size_t i = 0; i < kt->n; i++) {
        const a4w4_asm_kernel *k = &kt->rows[i];
        if (k->bpreshuffle != p->bpreshuffle || (p->log2_k_split > 0 && !k->split_k) ||
            (k->tile_m == 128 && k->tile_n == 512 && N % 512))
            continue;
        int split = !k->split_k ? 1 : p->log2_k_split >= 0 ? 1 << p->log2_k_split : 16;
        double tiles = (double)((M + k->tile_m - 1) / k->tile_m) *
                       (double)((N + (long long)k->tile_n - 1) / k->tile_n) * split;
        if (tiles > 4294967295.0)
            return 1;
    }
    return 0;
}

/* A shape past the tile limit: every entry point refuses it alike, naming the limit. */
static void check_refused(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                          int st_any, const char *err_any)
{
    fz_check(st_any == A4W4_EINVAL && strstr(err_any, "4294967295"), TARGET,
             "M %d N %d: past the uint32 tile count, any-order gave %d: %s", M, N, st_any,
             err_any);
    fz_check_err_line(err_any, "heuristic: ", TARGET);
    char err[512] = "";
    a4w4_heur_choice c;
    int st = a4w4_heuristic(kt, p, M, N, NULL, 0, &c, err, sizeof err);
    fz_check(st == A4W4_EINVAL && !strcmp(err, err_any), TARGET,
             "M %d N %d: the walk gave %d (%s), the any-order set EINVAL", M, N, st, err);
    static a4w4_route r; /* large */
    st = a4w4_route_shape(NULL, kt, p, M, N, 1024, &r, err, sizeof err);
    fz_check(st == A4W4_EINVAL, TARGET, "M %d N %d: route past the tile limit gave %d", M, N, st);
}

/* Sampled and file-order winners are any-order winners; an untuned route picks one; a shape
 * past AITER's uint32 tile count is refused by all of them. */
static void check_heuristic(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N)
{
    unsigned char any[A4W4_MAX_KERNELS], sampled[A4W4_MAX_KERNELS];
    char err[512] = "";
    int st = a4w4_heuristic_winners_any_order(kt, p, M, N, any, err, sizeof err);
    if (past_tile_limit(kt, p, M, N)) {
        check_refused(kt, p, M, N, st, err);
        return;
    }
    a4w4_heur_choice c = {.kernel = -1};
    char err1[512] = "";
    int st1 = a4w4_heuristic(kt, p, M, N, NULL, 0, &c, err1, sizeof err1);
    if (st) {
        fz_check(st == A4W4_EUNSUPPORTED && st1 == st, TARGET,
                 "any-order heuristic: %d %s; file-order walk %d", st, err, st1);
        return;
    }
    fz_check(st1 == A4W4_OK && c.kernel >= 0 && any[c.kernel], TARGET,
             "M %d N %d: the file-order winner %d is not an any-order winner (%d: %s)", M, N,
             c.kernel, st1, err1);
    st = a4w4_heuristic_winners_sampled(kt, p, M, N, 8, sampled, err, sizeof err);
    fz_check(st == A4W4_OK, TARGET, "sampled heuristic: %d %s", st, err);
    for (size_t i = 0; i < kt->n; i++)
        fz_check(!sampled[i] || any[i], TARGET, "M %d N %d: kernel %zu wins a sampled walk but "
                 "is not in the any-order set", M, N, i);
    static a4w4_route r; /* large */
    st = a4w4_route_shape(NULL, kt, p, M, N, 1024, &r, err, sizeof err);
    fz_check(st == A4W4_OK || st == A4W4_EUNSUPPORTED, TARGET, "route: %d %s", st, err);
    if (st == A4W4_OK)
        fz_check(r.kernel_index >= 0 && any[r.kernel_index], TARGET, "route picked a non-winner");
}

static void run_heuristics(const a4w4_kernel_table *kt, const uint8_t *data, size_t size)
{
    static const int ms[] = {1, 16, 33, 256, 4096, 1 << 20};
    static const int ns[] = {128, 512, 1024, 7168, 106496, 1 << 30};
    static const int cus[] = {256, 80, 1, 304};
    uint32_t h = 2166136261u; /* FNV-1a of the input: the same input, the same shapes */
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    for (int k = 0; k < 3; k++, h = h * 1103515245u + 12345u) {
        a4w4_heur_params p = {"gfx950", cus[(h >> 4) % 4], (int)((h >> 8) % 6) - 1,
                              (int)((h >> 12) & 1)};
        check_heuristic(kt, &p, ms[(h >> 16) % 6], ns[(h >> 20) % 6]);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_tmp_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024], err[1024] = "";
    fz_write_input(FILE_NAME, data, size, path, sizeof path);
    a4w4_kernel_table kt;
    int st = a4w4_kernels_load(&kt, path, NULL, err, sizeof err);
    if (st) {
        fz_check(st == A4W4_EINVAL || st == A4W4_ENOMEM, TARGET, "status %d", st);
        fz_check(!kt.rows && !kt.n && !kt.file, TARGET, "a refused table left rows");
        fz_check_err_line(err, path, TARGET);
        return 0;
    }
    check_table(&kt);
    run_heuristics(&kt, data, size);
    a4w4_kernels_free(&kt);
    fz_accepted();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_csv_mutate(data, size, max_size, seed, &dict);
}
