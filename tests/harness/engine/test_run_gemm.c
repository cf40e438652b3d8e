/* test_run_gemm.c — a GEMM backend's entry (engine/run_gemm.c): the comparison per contract
 * (contracts §4.1), NaN policy, unwritten outputs, out-of-bounds writes, E8M0 code 0 read
 * both ways, timeouts, pad dependence, bounded(S), ordered(S) and tree contracts, through
 * a4w4_run_case with the fault backend of run_fixture.h (each a known fault or a
 * known-correct computation). */
#include <criterion/criterion.h>

#include "run_fixture.h"
#include "test_util.h"

Test(runner, a_correct_ordered_backend_passes_bit_exact)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 5, 64, 512, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass");
    cr_expect_eq(e->checked, 5 * 64);
    cr_expect_eq(fails, 0);
    a4w4_entry_list_free(&en);
}

/* exact (contracts §4.1) is a verdict inside the exact regime only: a correct ordered(1)
 * kernel declared exact, on wide operands where ordered(1) and exact differ, is not failed
 * there; the outputs outside the regime are counted not judged and the entry with them (skip:
 * never a pass over them), the judged ones are exactly the proven ones. The same kernel one
 * bit off inside the regime fails. */
Test(runner, exact_judges_the_exact_regime_only_and_counts_the_rest_not_judged)
{
    g_fault = F_NONE;
    cr_assert_gt(ordered1_not_exact("rt", A4W4_REGIME_WIDE, 16, 192, 1024), 0,
                 "the case must tell ordered(1) from exact");
    int fails;
    a4w4_entry_list en = run_one("exact", 1, 0, A4W4_REGIME_WIDE, 16, 192, 1024, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_neq(e->verdict, A4W4_VERDICT_FAIL, "%s", note(e));
    cr_expect(e->has_judged);
    cr_expect_eq(e->judged_bit_exact, e->exact_regime_outputs);
    cr_expect_eq(e->judged_bit_exact + e->not_judged, 16 * 192);
    cr_expect_gt(e->not_judged, 0);
    cr_expect_str_eq(verdict(e), "skip", "%s", note(e));
    cr_expect(strstr(note(e), "outside the exact regime: not judged"), "%s", note(e));
    cr_expect(strstr(note(e), "so the entry is not judged"), "%s", note(e));
    a4w4_entry_list_free(&en);
    /* NaN where every order of the terms gives a finite sum is wrong under any contract:
     * outside the regime too (a kernel once returned NaN on wide scales this way) */
    g_fault = F_NAN_EVERYWHERE;
    en = run_one("exact", 1, 0, A4W4_REGIME_WIDE, 16, 192, 1024, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->mismatches, 16 * 192, "every output NaN, every one wrong");
    cr_expect_eq(e->judged_bit_exact + e->not_judged, 16 * 192);
    cr_expect(strstr(note(e), "NaN or Inf where every summation order gives a finite value"),
              "%s", note(e));
    a4w4_entry_list_free(&en);
    g_fault = F_FLIP_ONE; /* output 1 of an exact-regime case is in the regime */
    en = run_one("exact", 1, 0, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->judged_bit_exact, 3 * 32);
    cr_expect_eq(e->not_judged, 0);
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
}

/* A kernel declared exact writing +0 wherever ordered(1) and exact differ (outside the exact
 * regime necessarily) and ordered(1) elsewhere is wrong on those outputs under every
 * contract; exact judges none of them, so the entry is never a pass (32x64x256 wide passed on
 * its in-regime outputs) nor n/a (16x192x1024 wide, none in the regime, was n/a), while
 * ordered(1) fails it. */
Test(runner, exact_never_passes_outputs_it_did_not_judge)
{
    static const size_t shape[2][3] = {{32, 64, 256}, {16, 192, 1024}};
    for (int i = 0; i < 2; i++) {
        const size_t M = shape[i][0], N = shape[i][1], K = shape[i][2];
        size_t off = ordered1_not_exact("rt", A4W4_REGIME_WIDE, M, N, K);
        cr_assert_gt(off, 0, "the case must tell ordered(1) from exact");
        int fails;
        g_fault = F_ZERO_OFF_EXACT;
        a4w4_entry_list en = run_one("exact", 1, 0, A4W4_REGIME_WIDE, M, N, K, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        if (i == 0)
            cr_expect_gt(e->judged_bit_exact, 0, "some outputs in the regime: %s", note(e));
        else
            cr_expect_eq(e->judged_bit_exact, 0, "no output in the regime: %s", note(e));
        cr_expect_eq(e->mismatches, 0, "the judged outputs are right");
        cr_expect_str_eq(verdict(e), "skip", "%zux%zux%zu: %s", M, N, K, note(e));
        cr_expect_eq(fails, 0);
        a4w4_entry_list_free(&en);
        en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, M, N, K, &fails);
        e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), "fail");
        cr_expect_gt(e->mismatches, 0, "the zeroed outputs wrong under ordered(1)");
        a4w4_entry_list_free(&en);
    }
    g_fault = F_NONE;
}

/* n/a is a property of the shape (a4w4_plugin.h "Return codes"): a backend answering n/a on
 * the case's operands but computing the same shape on constant ones (codes 0, scales 0x7F)
 * fails the entry (it was n/a, which a run tolerates: a kernel answered n/a on every wide or
 * NaN-scale case and passed); one answering n/a on every call stays n/a. */
Test(runner, na_that_depends_on_the_values_fails)
{
    int fails;
    g_fault = F_NA_ON_VALUES;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 4, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail", "%s", note(e));
    cr_expect(strstr(note(e), "shape not supported; n/a on these operands, yet the backend "
                              "computed the same shape"), "%s", note(e));
    cr_expect_eq(e->checked, 0);
    a4w4_entry_list_free(&en);
    g_fault = F_NA_ALWAYS;
    en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 4, 32, 256, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "n/a", "%s", note(e));
    cr_expect_str_eq(note(e), "shape not supported");
    cr_expect_eq(fails, 0);
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
}

Test(runner, one_flipped_bit_fails_with_its_coordinates)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 5, 64, 512, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->mismatches, 1);
    cr_assert_geq(e->nfirst, 1);
    cr_expect_eq(e->first[0].row, 0);
    cr_expect_eq(e->first[0].col, 1);
    cr_expect_eq(e->max_ulp, 1);
    cr_expect_eq(fails, 1);
    a4w4_entry_list_free(&en);
}

Test(runner, an_unwritten_output_fails_even_though_the_poison_is_a_nan)
{
    g_fault = F_UNWRITTEN;
    int fails;
    /* special regime: NaN outputs exist, so a poison (also a NaN) must not pass as one */
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->unwritten, 1);
    cr_expect(strstr(note(e), "never written") != NULL, "%s", note(e));
    a4w4_entry_list_free(&en);
}

Test(runner, nan_policy_nan_where_expected_passes_nan_elsewhere_fails)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "pass");
    const a4w4_entry_result *o = entry_of(&en, "oracle");
    cr_expect(strstr(note(o), "0 outside the dependent set") != NULL, "%s", note(o));
    cr_expect_str_eq(verdict(o), "pass");
    a4w4_entry_list_free(&en);
    g_fault = F_NAN_EVERYWHERE;
    en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    /* 6x32 outputs, NaN-dependent: row 3 (32) + column 5 (6) - 1 = 37 */
    cr_expect_eq(e->mismatches, 6 * 32 - 37);
    a4w4_entry_list_free(&en);
}

Test(runner, a_write_past_an_input_fails_as_out_of_bounds)
{
    g_fault = F_OOB_WRITE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_EXACT, 2, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect(strstr(note(e), "out of bounds") && strstr(note(e), "w_fp4"), "%s", note(e));
    a4w4_entry_list_free(&en);
}

/* Writes outside y or into an operand fail the entry, naming what was written (reproducer:
 * a kernel writing y[-1] or 64 values past y passed; one writing into its operands too). */
Test(runner, writes_outside_y_or_into_an_operand_fail_naming_them)
{
    static const struct {
        fault f;
        const char *says;
    } t[] = {{F_Y_PAST_END, "wrote 64 values past the end of y"},
             {F_Y_BEFORE, "wrote 1 value before y (down to y[-1])"},
             {F_WRITE_INPUT, "wrote into its input a_scale (its bytes changed during the call)"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_fault = t[i].f;
        int fails;
        a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 33, 64, 512, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), "fail", "%s", t[i].says);
        cr_expect(strstr(note(e), t[i].says) != NULL, "%s: %s", t[i].says, note(e));
        cr_expect_eq(e->mismatches, 0, "its outputs are right: only the write fails it");
        a4w4_entry_list_free(&en);
    }
}

/* E8M0 code 0 (contracts §1), on a case where reading it as 2^-126 changes outputs: judged
 * under both readings by default, an entry matching only one is ambiguous, never a pass, and
 * makes no failure; a stated reading judges under it alone. Reproducer: code-0 entries were
 * written "pass" with ambiguous true. */
Test(runner, code0_results_are_ambiguous_unless_both_readings_agree_or_one_is_stated)
{
    static const struct {
        fault f;
        int policy;
        const char *want;
    } t[] = {{F_NONE, A4W4_CODE0_BOTH, "ambiguous"},     {F_CODE0_126, A4W4_CODE0_BOTH, "ambiguous"},
             {F_NONE, A4W4_CODE0_OCP, "pass"},           {F_CODE0_126, A4W4_CODE0_OCP, "fail"},
             {F_NONE, A4W4_CODE0_DRIVER, "fail"},        {F_CODE0_126, A4W4_CODE0_DRIVER, "pass"},
             {F_FLIP_ONE, A4W4_CODE0_BOTH, "fail"}};
    g_seed = 7014; /* cases/selftest.csv's code-0 case: 2^-126 changes 211 of its outputs */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_fault = t[i].f;
        g_code0 = t[i].policy;
        int fails;
        a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_CODE0, 16, 64, 256, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), t[i].want, "case %zu: %s", i, note(e));
        cr_expect_eq(e->ambiguous, !strcmp(t[i].want, "ambiguous"), "case %zu", i);
        cr_expect_eq(fails, !strcmp(t[i].want, "fail"), "case %zu", i);
        cr_expect(strstr(note(e), "contracts §1") != NULL, "case %zu: %s", i, note(e));
        a4w4_entry_list_free(&en);
    }
    g_seed = 17;
    g_code0 = A4W4_CODE0_BOTH;
}

/* The two readings of E8M0 code 0 (contracts §1) under a tree contract (contracts §4.2):
 * the tree oracle over the operands read either way; a kernel keeping the tree is ambiguous
 * under both readings, passes under its own stated one and fails under the other.
 * Reproducer: a tree-contract backend on a code-0 case was judged under 2^-127 only. */
Test(runner, code0_is_read_both_ways_under_a_tree_contract)
{
    static const char *const tree = "tree(order=desc,final=rz)";
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse(tree, &k, NULL, 0), A4W4_OK);
    g_tree = k.tree;
    static const struct {
        int as126, policy;
        const char *want;
    } t[] = {{0, A4W4_CODE0_BOTH, "ambiguous"}, {1, A4W4_CODE0_BOTH, "ambiguous"},
             {0, A4W4_CODE0_OCP, "pass"},       {1, A4W4_CODE0_OCP, "fail"},
             {1, A4W4_CODE0_DRIVER, "pass"},    {0, A4W4_CODE0_DRIVER, "fail"}};
    g_seed = 7014; /* the code-0 case of the test above */
    g_fault = F_TREE;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_as126 = t[i].as126;
        g_code0 = t[i].policy;
        int fails;
        a4w4_entry_list en = run_one(tree, 1, 0, A4W4_REGIME_CODE0, 16, 64, 256, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), t[i].want, "case %zu: %s", i, note(e));
        cr_expect_eq(e->not_judged, !strcmp(t[i].want, "ambiguous") ? 16 * 64 : 0,
                     "case %zu: an ambiguous entry's outputs are not judged", i);
        a4w4_entry_list_free(&en);
    }
    g_as126 = 0;
    g_fault = F_NONE;
    g_seed = 17;
    g_code0 = A4W4_CODE0_BOTH;
}

/* Exact is judged inside the exact regime only (contracts §4.1), and there under both
 * readings of E8M0 code 0: one output of two 32-blocks, A's first at code 0 against W at
 * 254 (3 units: 0.75 read as 2^-127, 1.5 as 2^-126), the second 0.25; y the exact sum under
 * either reading, or neither. */
Test(runner, code0_is_read_both_ways_under_exact_inside_the_exact_regime)
{
    uint8_t a[32] = {0}, w[32] = {0}, as[2] = {0, 127}, ws[2] = {254, 127}, as1[2] = {1, 127};
    tu_units_block(a, w, 3, 0);
    tu_units_block(a + 16, w + 16, 1, 0);
    a4w4_dot_operands o127 = {a, as, w, ws, 64}, o126 = {a, as1, w, ws, 64};
    uint16_t y127, y126, y_neither = 0x3F00; /* 1.0, 1.75, 0.5 */
    a4w4_dot_exact(&o127, &y127, NULL);
    a4w4_dot_exact(&o126, &y126, NULL);
    cr_assert_eq(y127, 0x3F80);
    cr_assert_eq(y126, 0x3FE0);
    const struct {
        const uint16_t *y;
        int policy;
        const char *want;
    } t[] = {{&y127, A4W4_CODE0_BOTH, "ambiguous"}, {&y126, A4W4_CODE0_BOTH, "ambiguous"},
             {&y127, A4W4_CODE0_OCP, "pass"},       {&y126, A4W4_CODE0_OCP, "fail"},
             {&y126, A4W4_CODE0_DRIVER, "pass"},    {&y127, A4W4_CODE0_DRIVER, "fail"},
             {&y_neither, A4W4_CODE0_BOTH, "fail"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        a4w4_judge_input in = {"capture/code0", "capture", "capture:op", "exact", a, as, w, ws,
                               1, 1, 64, t[i].y, t[i].policy};
        a4w4_entry_result e;
        memset(&e, 0, sizeof e);
        cr_assert_eq(a4w4_judge_outputs(&in, &e), A4W4_ST_OK);
        cr_expect_str_eq(verdict(&e), t[i].want, "case %zu: %s", i, note(&e));
        cr_expect_eq(e.judged_bit_exact, !strcmp(t[i].want, "ambiguous") ? 0 : 1, "case %zu",
                     i);
    }
}

/* A backend whose calls time out twice in a row is not called again: its later entries fail
 * "not run" at once (reproducer: a plugin hanging on every call cost --timeout per case). */
Test(runner, a_backend_that_timed_out_twice_in_a_row_is_not_called_again)
{
    a4w4_backend b;
    fault_backend(&b, "ordered(1)", 1, 0);
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    g_fault = F_TIMEOUT;
    static const char *const want[4] = {"timed out", "timed out", "not run", "not run"};
    for (int i = 0; i < 4; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "t%d", i);
        c.M = 2, c.N = 32, c.K = 64, c.regime = A4W4_REGIME_EXACT, c.seed = (uint64_t)i + 1;
        a4w4_entry_list en = {0};
        char err[256];
        cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), "fail");
        cr_expect_str_eq(e->aborted, want[i], "case %d: %s", i, note(e));
        if (i >= 2)
            cr_expect(strstr(note(e), "not run: backend hung 2 times in a row") != NULL, "%s",
                      note(e));
        a4w4_entry_list_free(&en);
    }
    g_fault = F_NONE;
}

Test(runner, reading_the_row_pad_is_reported_pad_dependent)
{
    g_fault = F_READ_ROW_PAD;
    int fails;
    /* with the default 0x7F fill the fault's extra term is the same in the baseline and in
     * the oracle comparison it shows as a mismatch too; the variants must name the fills */
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    const char *pd = e->pad_dependent;
    cr_assert(pd[0], "no pad_dependent");
    cr_expect(strstr(pd, "row pad 0xFF") && strstr(pd, "row pad 0x00"), "%s", pd);
    a4w4_entry_list_free(&en);
}

/* Without pad rows or columns (M % 256 == 0, (K/32) % 8 == 0) every fill gives the same bytes:
 * the variants are not run, and the entry says why; one row short of 256 they run again. */
Test(runner, pad_variants_are_skipped_with_a_note_only_where_no_pad_exists)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 256, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass", "%s", note(e));
    cr_expect_eq(e->pad_variants, 0);
    cr_expect(strstr(note(e), "pad variants not run") && strstr(note(e), "contracts §3.3"),
              "%s", note(e));
    a4w4_entry_list_free(&en);
    en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 255, 32, 256, &fails);
    e = entry_of(&en, "fault");
    cr_expect_eq(e->pad_variants, 2);
    cr_expect(!strstr(note(e), "pad variants not run"), "%s", note(e));
    a4w4_entry_list_free(&en);
    cr_expect_eq(a4w4_pad_variant_count(4096, 16384), 0);
    cr_expect_eq(a4w4_pad_variant_count(4095, 16384), 2);
    cr_expect_eq(a4w4_pad_variant_count(4096, 16384 + 32), 5); /* a pad column */
}

/* A bf16-atomic result some ULPs off exact passes bounded(2) with the distance reported, and
 * fails the exact contract; ordered(1) moved one ULP on every output is no bf16-atomic
 * result (the per-output bound is tighter than that where a split partial is small). */
Test(runner, bounded_contract_accepts_atomic_ulps_and_exact_contract_does_not)
{
    g_fault = F_ATOMIC;
    g_atomic_S = 2;
    g_order_seed = 5;
    int fails;
    a4w4_entry_list en = run_one("bounded(2)", 2, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass", "%s", note(e));
    cr_expect_geq(e->max_ulp, 1);
    cJSON *j = a4w4_entry_json(e); /* the one writer carries the bound fields */
    cr_assert_not_null(j);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_use")) &&
              cJSON_GetObjectItem(j, "bound_use")->valuedouble == e->bound_use);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_ulp_median")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_ulp_max")));
    cJSON_Delete(j);
    a4w4_entry_list_free(&en);
    en = run_one("exact", 1, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail");
    j = a4w4_entry_json(entry_of(&en, "fault"));
    cr_expect_null(cJSON_GetObjectItem(j, "bound_use"), "only bounded entries have a bound");
    cJSON_Delete(j);
    a4w4_entry_list_free(&en);
    g_fault = F_BF16_NEIGHBOUR;
    en = run_one("bounded(2)", 2, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_gt(e->bound_use, 1.0);
    cr_expect(strstr(note(e), "outside the bounded(2) bound"), "%s", note(e));
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
}

/* A correct bf16-atomic split-K (random orders of blocks and of splits) declared bounded(S)
 * passes on every regime where its bound is strong (not judged where it is not), with the per-entry bound fields set; the bound is used (a correct
 * result comes within a visible fraction of it) yet never exceeded. The range regime's
 * outputs at and past bf16's largest value round to +-Inf or NaN on some splits and orders,
 * which the model allows there (contracts §4.3). Reproducer of the bug this holds fixed: a
 * range case through a bounded(4) backend failed with "got 0x7f80 expected 0x7f80 ... outside
 * the bounded(4) bound" (the Inf of 511 * 2^119 measured from a finite fp32 exact value). */
Test(runner, a_correct_bf16_atomic_splitk_passes_within_the_per_output_bound)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL,
                                          A4W4_REGIME_WIDE, A4W4_REGIME_SPECIAL,
                                          A4W4_REGIME_CODE0, A4W4_REGIME_TINY,
                                          A4W4_REGIME_RANGE};
    static const unsigned splits[] = {1, 2, 4, 8};
    static const size_t Ks[] = {512, 2048, 4096};
    g_fault = F_ATOMIC;
    g_code0 = A4W4_CODE0_OCP; /* the bound, not the reading of code 0, is under test here */
    double most = 0;
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t si = 0; si < 4; si++)
            for (size_t ki = 0; ki < 3; ki++) {
                char contract[32];
                snprintf(contract, sizeof contract, "bounded(%u)", splits[si]);
                g_atomic_S = splits[si];
                g_order_seed = 100 * r + 10 * si + ki + 1;
                int fails;
                a4w4_entry_list en =
                    run_one(contract, splits[si], 0, regimes[r], 4, 32, Ks[ki], &fails);
                const a4w4_entry_result *e = entry_of(&en, "fault");
                /* the tiny regime's outputs lie inside the bound's underflow terms, and some
                 * of the range regime's near zero: there the bound admits 0 on most outputs
                 * and the entry is not judged (contracts §4.1, the strength of a bound) */
                int weak = regimes[r] == A4W4_REGIME_TINY || regimes[r] == A4W4_REGIME_RANGE;
                cr_expect_str_eq(verdict(e), e->vacuous ? "skip" : "pass",
                                 "%s regime %zu K %zu: %s", contract, r, Ks[ki], note(e));
                cr_expect(!e->vacuous || weak, "%s regime %zu K %zu judged nothing: %s",
                          contract, r, Ks[ki], note(e));
                cr_expect(e->has_bound && e->bound_use <= 1.0 && e->bound_ulp_median > 0,
                          "%s: bound fields %d %g %g", contract, e->has_bound, e->bound_use,
                          e->bound_ulp_median);
                if (e->bound_use > most)
                    most = e->bound_use;
                a4w4_entry_list_free(&en);
            }
    cr_expect_gt(most, 0.01, "the bound is never approached (largest use %g): too loose?", most);
    g_fault = F_NONE;
}

/* The property itself, straight against ref's bound: many random orders of the blocks inside
 * each split and of the splits, every output of wide and normal cases, never beyond B. */
Test(runner, random_atomic_orders_stay_within_the_bound)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE};
    static const unsigned splits[] = {2, 3, 8};
    double most = 0;
    for (size_t r = 0; r < 2; r++)
        for (size_t si = 0; si < 3; si++) {
            a4w4_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "prop");
            c.M = 3;
            c.N = 8;
            c.K = 4096;
            c.regime = regimes[r];
            c.seed = 31 + r * 3 + si;
            a4w4_sample smp;
            a4w4_case_data d;
            cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &smp), 0);
            cr_assert_eq(a4w4_case_generate(&c, &smp, &d), 0);
            size_t nb = c.K / 32;
            for (size_t m = 0; m < c.M; m++)
                for (size_t n = 0; n < c.N; n++) {
                    a4w4_dot_operands op = {d.a_fp4.data + m * c.K / 2, d.a_scale.data + m * nb,
                                            d.w_fp4.data + n * c.K / 2, d.w_scale.data + n * nb,
                                            c.K};
                    float e;
                    a4w4_dot_exact(&op, NULL, &e);
                    double B = a4w4_dot_bounded_bound(&op, splits[si]);
                    double tol = B + 0x1p-24 * fabs(e) + 0x1p-149;
                    uint64_t x = 977 * m + n + 1000 * c.seed;
                    for (int t = 0; t < 40; t++) {
                        double g = a4w4_bf16_to_f32(atomic_splitk(&op, splits[si], &x));
                        double use = fabs(g - e) / tol;
                        cr_assert_leq(use, 1.0, "S=%u (%zu,%zu) trial %d: |%g - %g| > %g",
                                      splits[si], m, n, t, g, (double)e, tol);
                        most = use > most ? use : most;
                    }
                }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&smp);
        }
    cr_expect_gt(most, 0.01, "largest use %g", most);
}

Test(runner, ordered_s_contract_compares_against_ordered_s)
{
    /* find a generated wide case where ordered(1) and ordered(4) round to different bf16
     * somewhere (the oracle decides, not the runner), then: an ordered(4) computation
     * declared ordered(4) passes, an ordered(1) computation declared ordered(4) fails */
    uint64_t seed = 0;
    for (uint64_t sd = 1; sd < 400 && !seed; sd++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "rt");
        c.M = 16;
        c.N = 64;
        c.K = 4096;
        c.regime = A4W4_REGIME_WIDE;
        c.seed = sd;
        a4w4_sample s;
        a4w4_case_data d;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, sd, c.name, 1, &s), 0);
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        for (size_t m = 0; m < c.M && !seed; m++)
            for (size_t n = 0; n < c.N && !seed; n++) {
                a4w4_dot_operands op = {d.a_fp4.data + m * 2048, d.a_scale.data + m * 128,
                                        d.w_fp4.data + n * 2048, d.w_scale.data + n * 128, c.K};
                if (a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)) !=
                    a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 4)))
                    seed = sd;
            }
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
    cr_assert_neq(seed, 0, "no wide case separates ordered(1) from ordered(4)");
    g_seed = seed;
    int fails;
    g_fault = F_SPLIT4;
    a4w4_entry_list en = run_one("ordered(4)", 4, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "pass");
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
    en = run_one("ordered(4)", 4, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail", "ordered(1) results passed as ordered(4)");
    a4w4_entry_list_free(&en);
    g_fault = F_SPLIT4;
    en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail", "ordered(4) results passed as ordered(1)");
    a4w4_entry_list_free(&en);
    g_seed = 17;
}

/* ---- tree contracts (contracts §4.2) ------------------------------------------------------ */

/* A backend keeping tree text, judged by contract; its entry's verdict and mismatches. */
static a4w4_entry_result judged(const char *keeps, const char *contract, a4w4_regime regime,
                                size_t K)
{
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse(keeps, &k, NULL, 0), A4W4_OK, "%s", keeps);
    g_tree = k.tree;
    g_fault = F_TREE;
    int fails;
    a4w4_entry_list en = run_one(contract, 1, 0, regime, 5, 48, K, &fails);
    a4w4_entry_result e = *entry_of(&en, "fault");
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
    return e;
}

/* ordered(S) and tree(split=S) give the same verdict and the same mismatches on every regime,
 * for a backend that keeps ordered(S) (pass) and for ones that keep another order: a bf16
 * accumulator, or a final rounding toward zero (they fail wherever the bits differ). The
 * instrumented build takes every A4W4_SWEEP_STRIDE-th (regime, S) point (tests/test_util.h:
 * every regime and every S still met), and the share of failing mis-declared orders it asks
 * for is the whole sweep's (more than 40 of 60). */
Test(runner, ordered_s_and_its_tree_spelling_give_identical_verdicts)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL,
                                          A4W4_REGIME_WIDE,  A4W4_REGIME_SPECIAL,
                                          A4W4_REGIME_CODE0, A4W4_REGIME_TINY};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    const size_t nS = sizeof Ss / sizeof Ss[0];
    size_t failing = 0, points = 0;
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t si = 0; si < nS; si++) {
            if (tu_sweep_skip(r * nS + si))
                continue;
            points++;
            char ord[32], tree[64], keeps[3][64];
            snprintf(ord, sizeof ord, "ordered(%u)", Ss[si]);
            snprintf(tree, sizeof tree, "tree(split=%u)", Ss[si]);
            snprintf(keeps[0], sizeof keeps[0], "tree(split=%u)", Ss[si]);
            snprintf(keeps[1], sizeof keeps[1], "tree(acc=bf16)");
            snprintf(keeps[2], sizeof keeps[2], "tree(split=%u,final=rz)", Ss[si]);
            for (int kb = 0; kb < 3; kb++) {
                a4w4_entry_result a = judged(keeps[kb], ord, regimes[r], 2080);
                a4w4_entry_result b = judged(keeps[kb], tree, regimes[r], 2080);
                cr_expect_eq(a.verdict, b.verdict, "%s judged by %s: %s, by %s: %s", keeps[kb],
                             ord, verdict(&a), tree, verdict(&b));
                cr_expect_eq(a.mismatches, b.mismatches, "%s: %zu vs %zu mismatches", keeps[kb],
                             a.mismatches, b.mismatches);
                cr_expect_eq(a.checked, b.checked);
                cr_expect_str_eq(a.contract, ord);
                cr_expect(strstr(b.contract, "split=") && !strncmp(b.contract, "tree(leaf=32", 12),
                          "recorded canonically: %s", b.contract);
                if (kb == 0)
                    cr_expect_str_eq(verdict(&a), "pass", "%s: %s", keeps[kb], note(&a));
                failing += a.verdict == A4W4_VERDICT_FAIL;
            }
        }
    /* two mis-declared orders per point: more than 40 of 60 over the whole sweep */
    cr_expect_gt(failing * 60, 40 * 2 * points, "the mis-declared orders must fail (%zu of %zu do)",
                 failing, 2 * points);
}

/* A backend keeping a pairwise tree passes when judged by it and fails as ordered(1) on wide
 * data; a tree that does not apply to K (a split boundary at or past it) skips the entry, the
 * note naming the boundary: not judged, so the run is INCOMPLETE, never "FAIL 0 of 0". */
Test(runner, a_tree_backend_passes_its_tree_and_fails_a_wrong_declaration)
{
    a4w4_entry_result e = judged("tree(reduce=pairwise,fuse=2,round=rz)",
                                 "tree(round=rz,fuse=2,reduce=pairwise)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_eq(e.checked, 5 * 48);
    e = judged("tree(reduce=pairwise,fuse=2,round=rz)", "ordered(1)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "fail");
    cr_expect_gt(e.mismatches, 0);
    e = judged("tree()", "tree(split=0/4096)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "skip", "%s", note(&e)); /* unjudged, never a 0-of-0 FAIL */
    cr_expect_eq(e.checked, 0);
    cr_expect(strstr(note(&e), "not judged: the contract does not apply to this case: split "
                               "boundary 4096 is not below K=4096"), "%s", note(&e));
    e = judged("tree()", "tree(split=0/8192)", A4W4_REGIME_WIDE, 4096); /* past K */
    cr_expect_str_eq(verdict(&e), "skip", "%s", note(&e));
}

/* A rule set picks the rule of each case's shape; a shape no rule matches is skipped (its
 * outputs unjudged: the run is INCOMPLETE) with the reason, never a pass and never n/a. A rule
 * file without a rule for 1,024 of a run's shapes once gave PASS with 0 % judged. */
Test(runner, a_contract_set_picks_the_rule_per_shape_and_an_unmatched_shape_is_skipped)
{
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &fault_type;
    snprintf(b.name, sizeof b.name, "fault");
    snprintf(b.contract_source, sizeof b.contract_source, "rules.txt");
    snprintf(b.contract, sizeof b.contract, "rules of rules.txt (2)");
    char err[256];
    cr_assert_eq(a4w4_contract_set_parse("when K>=1024: tree(order=desc,final=rz)\n"
                                         "when K==512: ordered(1)\n", &b.contracts, err,
                                         sizeof err), A4W4_OK, "%s", err);
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse("tree(final=rz,order=desc)", &k, NULL, 0), A4W4_OK);
    g_tree = k.tree;
    g_fault = F_TREE;
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    static const size_t Ks[] = {2048, 512, 256};
    static const char *const want[] = {"pass", "fail", "skip"};
    for (int i = 0; i < 3; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "set%d", i);
        c.M = 4;
        c.N = 32;
        c.K = Ks[i];
        c.regime = A4W4_REGIME_WIDE;
        snprintf(c.regime_text, sizeof c.regime_text, "wide");
        c.seed = 5;
        a4w4_entry_list en = {0};
        cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), want[i], "K=%zu: %s (%zu mismatches)", Ks[i], note(e), e->mismatches);
        if (i == 2) {
            cr_expect_str_eq(note(e), "contract rules.txt has no rule for M=4 N=32 K=256");
            cr_expect_eq(e->checked, 0);
        }
        if (i == 0)
            cr_expect(!strncmp(e->contract, "tree(leaf=32,order=desc", 23), "%s", e->contract);
        a4w4_entry_list_free(&en);
    }
    g_fault = F_NONE;
    a4w4_contract_set_free(&b.contracts);
}

