/* test_failing.c — failing entries saved with their operands (harness/engine/failing.c): the
 * range lists of the checked outputs, the item names, and the re-check of a saved bundle from
 * the file alone (a recorded got that differs from the oracle fails, one that equals it
 * passes, a wrong recorded expected is caught). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_gemm.h"
#include "failing.h"
#include "gen.h"
#include "sample_oracles.h"
#include "verify_bundle.h"

Test(failing, ranges_round_trip_through_their_text)
{
    size_t idx[] = {0, 1, 2, 3, 15, 31, 32, 33, 100};
    char buf[128];
    cr_assert_eq(a4w4_ranges_format(idx, 9, 0, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "0-3,15,31-33,100");
    size_t *back, n;
    cr_assert_eq(a4w4_ranges_parse(buf, 101, &back, &n), 0);
    cr_assert_eq(n, 9);
    cr_assert_arr_eq(back, idx, sizeof idx);
    free(back);
    cr_assert_eq(a4w4_ranges_parse("all", 4, &back, &n), 0);
    cr_assert_eq(n, 4);
    cr_assert_eq(back[3], 3);
    free(back);
    cr_assert_eq(a4w4_ranges_format(idx, 9, 0, buf, 8), -1, "too short a buffer is refused");
}

/* A range list longer than the first allocation (16) grows as it is read: 0-99 and 1000
 * single indices keep every index, in order. "all" over no outputs is refused like "". */
Test(failing, long_range_lists_keep_every_index)
{
    size_t *v, n;
    cr_assert_eq(a4w4_ranges_parse("0-99", 101, &v, &n), 0);
    cr_assert_eq(n, 100);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i], i);
    free(v);
    static char text[8000];
    size_t used = 0;
    for (size_t i = 0; i < 1000; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%zu", i ? "," : "", 3 * i);
    cr_assert_eq(a4w4_ranges_parse(text, 3000, &v, &n), 0);
    cr_assert_eq(n, 1000);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v[i], 3 * i);
    free(v);
    cr_expect_eq(a4w4_ranges_parse("all", 0, &v, &n), -1);
}

Test(failing, malformed_ranges_are_refused)
{
    static const char *const bad[] = {"", "3-1", "1,1", "2,1", "0-4", "1,", ",1", "a", "1-",
                                      "1 2", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t *v, n;
        cr_expect_eq(a4w4_ranges_parse(bad[i], 4, &v, &n), -1, "'%s' accepted", bad[i]);
    }
}

Test(failing, item_names_keep_the_case_and_a_file_safe_backend)
{
    char buf[256];
    a4w4_failing_name("m16_n1024_k5120", "plugin:/opt/x/libmy gemm.so", 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "m16_n1024_k5120@plugin_libmy_gemm.so");
    a4w4_failing_name("golden/g1", "hip-asm:256x256", 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "golden/g1@hip-asm_256x256");
}

Test(failing, two_plugins_of_one_file_name_get_distinct_item_names)
{
    const char *a = "plugin:/opt/a/libk.so", *b = "plugin:/opt/b/libk.so";
    cr_assert(a4w4_failing_names_collide(a, b));
    cr_assert_not(a4w4_failing_names_collide(a, a)); /* the backend itself */
    cr_assert_not(a4w4_failing_names_collide(a, "plugin:/opt/a/libj.so"));
    char na[256], nb[256];
    a4w4_failing_name("c", a, 1, na, sizeof na);
    a4w4_failing_name("c", b, 1, nb, sizeof nb);
    cr_assert_str_neq(na, nb);
    cr_assert_eq(strncmp(na, "c@plugin_libk.so-", 17), 0, "%s", na);
    cr_assert_eq(strlen(na), strlen("c@plugin_libk.so-") + 8, "%s", na);
    char again[256]; /* the same spec, the same name: a rerun overwrites its own file */
    a4w4_failing_name("c", a, 1, again, sizeof again);
    cr_assert_str_eq(na, again);
}

/* Save case c with got = the ordered(1) oracle's outputs, changed at output (1, 2) when
 * break_it; then verify the file. Returns the verify status; *recorded_fails the failing
 * recorded checks. */
static a4w4_hstatus save_and_verify(const char *dir, int break_it, int break_expected,
                                    int *recorded_fails)
{
    a4w4_case c = {.name = "t1", .M = 3, .N = 32, .K = 288, .regime = A4W4_REGIME_EXACT,
                   .seed = 5};
    snprintf(c.regime_text, sizeof c.regime_text, "exact");
    a4w4_sample s;
    a4w4_case_data d;
    a4w4_oracles o = {0};
    cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), 0);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
    cr_assert_eq(a4w4_oracles_compute(&d, &s, &o), 0);
    uint16_t got[96], exp[96];
    memcpy(got, o.ordered1, sizeof got);
    memcpy(exp, o.ordered1, sizeof exp);
    if (break_it)
        got[1 * 32 + 2] ^= 1; /* one bf16 ULP */
    if (break_expected)
        exp[0] ^= 0x8000;
    a4w4_failing f = {&c, &d, &s, got, exp, "plugin:x.so", "ordered(1)", break_it, "", "",
                      "a4w4check run ...", NULL, 0};
    char name[256], err[512], path[1024];
    cr_assert_eq(a4w4_failing_save(&f, dir, name, sizeof name, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    a4w4_check_list checks = {0};
    a4w4_hstatus rc = a4w4_verify_bundle(path, NULL, 0, &checks, NULL, err, sizeof err);
    *recorded_fails = 0;
    for (size_t i = 0; i < checks.n; i++)
        if (!strncmp(checks.items[i].subject, A4W4_RECORDED_SUBJECT,
                     strlen(A4W4_RECORDED_SUBJECT))) {
            *recorded_fails += checks.items[i].verdict == A4W4_CHECK_FAIL;
            if (break_it && strstr(checks.items[i].subject, "y_got"))
                cr_expect(checks.items[i].first_row == 1 && checks.items[i].first_col == 2);
        }
    a4w4_check_list_free(&checks);
    a4w4_oracles_free(&o);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return rc;
}

Test(failing, a_saved_bundle_shows_its_failure_again_from_the_file_alone)
{
    char dir[] = "/tmp/a4w4_failing_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int nfail;
    cr_expect_eq(save_and_verify(dir, 1, 0, &nfail), A4W4_ST_MISMATCH);
    cr_expect_eq(nfail, 1, "the recorded got fails, the recorded expected passes");
    cr_expect_eq(save_and_verify(dir, 0, 0, &nfail), A4W4_ST_OK);
    cr_expect_eq(nfail, 0, "a recorded got equal to the oracle passes");
    cr_expect_eq(save_and_verify(dir, 0, 1, &nfail), A4W4_ST_MISMATCH);
    cr_expect_eq(nfail, 1, "a wrong recorded expected is caught");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
