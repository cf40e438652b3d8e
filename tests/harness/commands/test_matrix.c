/* test_matrix.c — the shard split of a matrix (harness/commands/matrix.h): deterministic,
 * disjoint and complete for any n, balanced by estimated cost (greedy longest-processing-time),
 * so the nightly's M = 4096 cases and its regimes spread over the shards; the capture items of
 * --captures DIR (subdirectories included, an empty DIR one never-passing item). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "test_util.h"

#define TMP_DIR A4W4_BINARY_DIR "/matrix-test-tmp"

static void load(a4w4_matrix *m, const char *set)
{
    char err[512];
    cr_assert_eq(a4w4_matrix_load(m, set, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_gt(a4w4_matrix_items(m), 0);
}

/* Every item in exactly one shard of n; returns the items of shard 1. */
static size_t expect_partition(a4w4_matrix *m, unsigned n, const char *set)
{
    size_t items = a4w4_matrix_items(m), first = 0;
    for (size_t k = 0; k < items; k++) {
        unsigned owners = 0;
        for (unsigned i = 1; i <= n; i++) {
            int in = a4w4_matrix_in_shard(m, k, i, n);
            cr_assert(in == 0 || in == 1, "%s: in_shard returned %d", set, in);
            owners += (unsigned)in;
            first += (size_t)(in && i == 1);
        }
        cr_assert_eq(owners, 1, "%s n=%u: item %zu is in %u shards", set, n, k, owners);
        cr_assert_eq(a4w4_matrix_in_shard(m, k, 0, n), 0);
        cr_assert_eq(a4w4_matrix_in_shard(m, k, n + 1, n), 0);
    }
    cr_assert_eq(a4w4_matrix_in_shard(m, items, 1, n), 0, "past the last item");
    return first;
}

Test(matrix, shards_are_disjoint_and_complete_for_every_n)
{
    static const char *sets[] = {"premerge", "edge", "nightly", "hazard"};
    static const unsigned ns[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 5000};
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        a4w4_matrix m;
        load(&m, sets[s]);
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            size_t first = expect_partition(&m, ns[j], sets[s]);
            if (ns[j] == 1)
                cr_expect_eq(first, a4w4_matrix_items(&m));
        }
        /* every item when not sharded */
        cr_expect_eq(a4w4_matrix_in_shard(&m, 0, 1, 0), 1);
        a4w4_matrix_free(&m);
    }
}

Test(matrix, the_split_is_the_same_in_every_process_and_after_other_n)
{
    a4w4_matrix a, b;
    load(&a, "nightly");
    load(&b, "nightly");
    size_t items = a4w4_matrix_items(&a);
    (void)a4w4_matrix_in_shard(&b, 0, 1, 3); /* b planned for another n first */
    for (size_t k = 0; k < items; k++)
        for (unsigned i = 1; i <= 8; i++)
            cr_assert_eq(a4w4_matrix_in_shard(&a, k, i, 8), a4w4_matrix_in_shard(&b, k, i, 8));
    a4w4_matrix_free(&a);
    a4w4_matrix_free(&b);
}

Test(matrix, nightly_shard_costs_are_within_20_percent_of_the_mean_at_n_8)
{
    a4w4_matrix m;
    load(&m, "nightly");
    unsigned long long cost[8], total = 0;
    for (unsigned i = 1; i <= 8; i++)
        total += cost[i - 1] = a4w4_matrix_shard_cost(&m, i, 8);
    unsigned long long sum = 0;
    for (size_t k = 0; k < a4w4_matrix_items(&m); k++)
        sum += a4w4_matrix_item_cost(&m, k);
    cr_assert_eq(total, sum, "the shards' costs add up to the matrix's");
    double mean = (double)total / 8;
    for (unsigned i = 0; i < 8; i++)
        cr_expect((double)cost[i] >= 0.8 * mean && (double)cost[i] <= 1.2 * mean,
                  "shard %u/8: cost %.3g, mean %.3g", i + 1, (double)cost[i], mean);
    a4w4_matrix_free(&m);
}

Test(matrix, nightly_m4096_cases_and_regimes_spread_over_the_shards)
{
    a4w4_matrix m;
    load(&m, "nightly");
    size_t big = 0, per[8] = {0};
    unsigned regimes[8] = {0}, all = 0;
    for (size_t k = 0; k < m.ncases; k++) {
        const a4w4_case *c = &m.cases[k];
        all |= 1u << c->regime;
        for (unsigned i = 1; i <= 8; i++)
            if (a4w4_matrix_in_shard(&m, k, i, 8) == 1) {
                per[i - 1] += c->M == 4096;
                regimes[i - 1] |= 1u << c->regime;
            }
        big += c->M == 4096;
    }
    cr_assert_gt(big, 64);
    for (unsigned i = 0; i < 8; i++) {
        /* k % n put every M = 4096 case in shards 4 and 8 */
        cr_expect_geq(per[i], big / 16, "shard %u/8 holds %zu of the %zu M=4096 cases", i + 1,
                      per[i], big);
        cr_expect_eq(regimes[i], all, "shard %u/8 lacks a regime (%#x of %#x)", i + 1,
                     regimes[i], all);
    }
    a4w4_matrix_free(&m);
}

Test(matrix, a_case_costs_its_macs_plus_operands_and_saturates)
{
    a4w4_matrix m;
    memset(&m, 0, sizeof m);
    a4w4_case c[2];
    memset(c, 0, sizeof c);
    c[0].M = 16;
    c[0].N = 1024;
    c[0].K = 5120;
    c[1].M = c[1].N = c[1].K = 1ull << 30;
    m.cases = c;
    m.ncases = 2;
    cr_expect_eq(a4w4_matrix_item_cost(&m, 0),
                 16ull * 1024 * 5120 + A4W4_COST_PER_OPERAND * (16 + 1024) * 5120 +
                     A4W4_COST_PER_ITEM);
    cr_expect_eq(a4w4_matrix_item_cost(&m, 1), ~0ull);
    cr_expect_eq(a4w4_matrix_item_cost(&m, 2), A4W4_COST_PER_BUNDLE, "past the cases: a bundle");
    /* the costliest item goes to shard 1, the next to shard 2 */
    cr_expect_eq(a4w4_matrix_in_shard(&m, 1, 1, 2), 1);
    cr_expect_eq(a4w4_matrix_in_shard(&m, 0, 2, 2), 1);
    free(m.shard_of);
}

/* --captures DIR: every *.safetensors under DIR is an item named by its path under DIR,
 * subdirectories included (reproducer: captures one level down were no items, and the run
 * passed over none). */
Test(matrix, captures_in_subdirectories_are_items_named_by_their_path)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "matrix-captures");
    char path[4096], err[512], name[256];
    TU_SNPRINTF(path, "%s/sub/deeper", dir);
    tu_mkdir_p(path);
    const char *files[] = {"a.safetensors", "sub/b.safetensors", "sub/deeper/c.safetensors",
                           "sub/notes.txt"};
    for (size_t i = 0; i < 4; i++) {
        TU_SNPRINTF(path, "%s/%s", dir, files[i]);
        tu_write_file(path, "x", 1);
    }
    a4w4_matrix m;
    load(&m, "edge");
    size_t before = a4w4_matrix_items(&m);
    unsigned long long hash = m.hash;
    cr_assert_eq(a4w4_matrix_add_captures(&m, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a4w4_matrix_items(&m), before + 3);
    const char *want[] = {"capture/a", "capture/sub/b", "capture/sub/deeper/c"};
    for (size_t i = 0; i < 3; i++) {
        a4w4_matrix_item_name(&m, before + i, name, sizeof name);
        cr_assert_str_eq(name, want[i]);
    }
    cr_assert_neq(m.hash, hash, "the captures are part of the matrix's identity");
    a4w4_matrix_free(&m);
}

/* An empty --captures DIR is one item, A4W4_CAPTURES_NONE, which the run records as a skip
 * (reproducer: run --captures EMPTY passed); a name with a control byte is refused. */
Test(matrix, an_empty_captures_directory_is_one_item_and_control_bytes_are_refused)
{
    const char *dir = tu_scratch_dir(TMP_DIR, "matrix-captures-empty");
    char err[512] = "", name[256], path[4400];
    a4w4_matrix m;
    load(&m, "edge");
    size_t before = a4w4_matrix_items(&m);
    cr_assert_eq(a4w4_matrix_add_captures(&m, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a4w4_matrix_items(&m), before + 1);
    a4w4_matrix_item_name(&m, before, name, sizeof name);
    cr_assert_str_eq(name, A4W4_CAPTURES_NONE);
    a4w4_matrix_free(&m);

    snprintf(path, sizeof path, "%s/x\ny.safetensors", dir);
    tu_write_file(path, "x", 1);
    load(&m, "edge");
    cr_assert_eq(a4w4_matrix_add_captures(&m, dir, err, sizeof err), A4W4_MATRIX_EUSAGE);
    cr_assert(strstr(err, "x?y.safetensors: a name holding a control byte"), "%s", err);
    cr_assert_null(strchr(err, '\n'));
    a4w4_matrix_free(&m);
}
