/* test_run_golden.c — cases made of given operands (engine/run_golden.c): golden bundles
 * through the systems under test the caller passes, and outputs computed elsewhere
 * (a4w4_judge_outputs, the judgement of captures). */
#include <criterion/criterion.h>

#include "run_fixture.h"

/* ---- golden bundles: the systems under test come from the caller (verify_bundle.h) ---- */

static int sut_ordered(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                       const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    int rc = a4w4_gemm_ordered(a, as, w, ws, M, N, K, 1, y, NULL);
    if (ctx && rc == A4W4_OK)
        y[M * N - 1] ^= 0x0001; /* ctx != NULL: one flipped bit */
    return rc;
}

static int sut_unsupported(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                           const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    (void)ctx, (void)a, (void)as, (void)w, (void)ws, (void)M, (void)N, (void)K, (void)y;
    return A4W4_EUNSUPPORTED;
}

Test(runner, golden_bundles_check_the_systems_under_test_the_caller_passes)
{
    static int flip = 1;
    const a4w4_bundle_sut suts[] = {{"good", 0, sut_ordered, NULL},
                                    {"broken", 0, sut_ordered, &flip},
                                    {"refuses", 0, sut_unsupported, NULL},
                                    {"unselected", 0, sut_ordered, &flip}};
    a4w4_backend b[3];
    memset(b, 0, sizeof b);
    snprintf(b[0].name, sizeof b[0].name, "good");
    snprintf(b[1].name, sizeof b[1].name, "broken");
    snprintf(b[2].name, sizeof b[2].name, "refuses");
    a4w4_runner r = {.backends = b, .nbackends = 3};
    a4w4_entry_list en = {0};
    char err[512] = "";
    const char *path = A4W4_SOURCE_DIR "/cases/golden/g1_m1_n256_k512.safetensors";
    cr_assert_eq(a4w4_run_golden(&r, suts, 4, path, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_assert_eq(en.n, 4, "good, broken, refuses, then the oracle (unselected: no entry)");
    cr_expect_str_eq(en.items[0].backend, "good");
    cr_expect_str_eq(verdict(&en.items[0]), "pass");
    cr_expect_str_eq(en.items[0].name, "golden/g1_m1_n256_k512");
    cr_expect_str_eq(verdict(&en.items[1]), "fail");
    cr_expect_eq(en.items[1].mismatches, 1);
    cr_expect_str_eq(en.items[1].first[0].tensor, "broken vs y_ordered");
    cr_expect_str_eq(verdict(&en.items[2]), "n/a");
    cr_expect(strstr(en.items[2].note, "not"), "%s", en.items[2].note);
    cr_expect_str_eq(en.items[3].backend, "oracle");
    cr_expect_str_eq(verdict(&en.items[3]), "pass", "%s", en.items[3].note);
    cr_expect_eq(a4w4_entry_list_failures(&en), 1);
    a4w4_entry_list_free(&en);
    /* a bad bundle: the oracle entry records it, the status says so */
    cr_assert_eq(a4w4_run_golden(&r, suts, 4, A4W4_SOURCE_DIR "/cases/premerge.csv", &en, err,
                                 sizeof err), A4W4_ST_BADINPUT);
    cr_assert_eq(en.n, 1);
    cr_expect_str_eq(verdict(&en.items[0]), "fail");
    cr_expect(strstr(en.items[0].note, "bad input"), "%s", en.items[0].note);
    a4w4_entry_list_free(&en);
}

Test(runner, an_asm_layout_sut_is_not_applicable_without_the_layouts)
{
    const a4w4_bundle_sut suts[] = {{"asm-reader", 1, sut_ordered, NULL}};
    a4w4_check_list checks = {0};
    char err[512] = "";
    /* g5: N = 48 has no scale swizzle, so the bundle holds no ASM layouts */
    const char *path = A4W4_SOURCE_DIR "/cases/golden/g5_m8_n48_k320.safetensors";
    cr_assert_eq(a4w4_verify_bundle(path, suts, 1, &checks, NULL, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    const a4w4_check *last = &checks.items[checks.n - 1];
    cr_expect_str_eq(last->subject, "asm-reader vs y_ordered");
    cr_expect_eq(last->verdict, A4W4_CHECK_NA);
    cr_expect(strstr(last->note, "ASM layouts not applicable"), "%s", last->note);
    a4w4_check_list_free(&checks);
}

/* ---- outputs computed elsewhere (a4w4_judge_outputs, the judgement of captures) ---- */

/* Judge y over the operands of a generated case (M, N, K, regime, seed g_seed) against
 * contract (NULL: none declared); y is that case's ordered(1) result when flip < 0, else with
 * output flip one ULP off. */
static a4w4_entry_result judge_given(const char *contract, a4w4_regime regime, size_t M,
                                     size_t N, size_t K, long flip)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "given");
    c.M = M, c.N = N, c.K = K, c.regime = regime, c.seed = g_seed;
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(M, N, K, c.seed, c.name, 1, &s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    uint16_t *y = malloc(M * N * 2);
    cr_assert(y);
    a4w4_gemm_ordered(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, 1, y,
                      NULL);
    if (flip >= 0)
        y[flip] ^= 1;
    a4w4_judge_input in = {"capture/given", "capture", "capture:op", contract, d.a_fp4.data,
                           d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, y,
                           A4W4_CODE0_BOTH};
    a4w4_entry_result e;
    memset(&e, 0, sizeof e);
    cr_assert_eq(a4w4_judge_outputs(&in, &e), A4W4_ST_OK);
    free(y);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return e;
}

/* A capture's failing outputs (a kernel outside the process) carry the peers' criteria too:
 * one output one ULP off in 16 x 64 passes AITER's checkAllclose and fails hipBLASLt's
 * unit_check. */
Test(runner, a_failing_capture_carries_the_peers_verdicts)
{
    g_seed = 17;
    a4w4_entry_result e = judge_given("ordered(1)", A4W4_REGIME_EXACT, 16, 64, 256, 5);
    cr_assert_eq(e.verdict, A4W4_VERDICT_FAIL, "%s", e.note);
    cr_assert_gt(e.ntol, 0);
    cr_expect_eq(e.tol_outputs, 16 * 64);
    for (size_t i = 0; i < e.ntol; i++) {
        if (!strcmp(e.tol[i].c->id, "aiter-checkallclose"))
            cr_expect_eq(e.tol[i].verdict, A4W4_CRIT_PASS, "%s", e.tol[i].text);
        if (!strcmp(e.tol[i].c->id, "hipblaslt-unit-check"))
            cr_expect_eq(e.tol[i].verdict, A4W4_CRIT_FAIL, "%s", e.tol[i].text);
    }
}

/* Outputs computed elsewhere are judged as a backend's are: by their declared contract on
 * every output; with none declared, recorded "undeclared" and judged as exact inside the
 * exact regime only (a correct ordered(1) result on wide operands where ordered(1) and exact
 * differ is no failure, just not judged); one bit off inside the regime fails. */
Test(runner, outputs_computed_elsewhere_are_judged_by_their_declared_contract_or_none)
{
    g_seed = 17;
    cr_assert_gt(ordered1_not_exact("given", A4W4_REGIME_WIDE, 16, 192, 1024), 0,
                 "the operands must tell ordered(1) from exact");
    a4w4_entry_result e = judge_given("ordered(1)", A4W4_REGIME_WIDE, 16, 192, 1024, -1);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_str_eq(e.contract, "ordered(1)");
    cr_expect_eq(e.judged_bit_exact, 16 * 192);
    cr_expect_str_eq(e.name, "capture/given");
    cr_expect_str_eq(e.backend, "capture:op");
    e = judge_given(NULL, A4W4_REGIME_WIDE, 16, 192, 1024, -1);
    cr_expect_neq(e.verdict, A4W4_VERDICT_FAIL, "%s", note(&e));
    cr_expect_str_eq(e.contract, A4W4_CONTRACT_UNDECLARED);
    cr_expect_eq(e.judged_bit_exact, e.exact_regime_outputs);
    cr_expect_eq(e.judged_bit_exact + e.not_judged, 16 * 192);
    cr_expect(!strncmp(note(&e), "no contract declared", 20), "%s", note(&e));
    e = judge_given(NULL, A4W4_REGIME_EXACT, 3, 32, 256, 5);
    cr_expect_str_eq(verdict(&e), "fail", "%s", note(&e));
    cr_expect_eq(e.mismatches, 1);
    cr_expect_eq(e.first[0].row * 32 + e.first[0].col, 5);
    e = judge_given("bounded(1)", A4W4_REGIME_NORMAL, 4, 32, 2048, -1);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_eq(e.judged_in_bound, 4 * 32);
}

/* The one-line form of an entry (verify's lines) names an ambiguous verdict as such: it once
 * printed word[verdict & 3], so an ambiguous capture (verdict 4, contracts §1: never a pass)
 * read "PASS" in `a4w4check verify`. */
Test(runner, an_ambiguous_entry_is_never_printed_as_a_pass)
{
    a4w4_entry_result e;
    memset(&e, 0, sizeof e);
    e.verdict = A4W4_VERDICT_AMBIGUOUS;
    snprintf(e.contract, sizeof e.contract, "ordered(1)");
    char line[512];
    a4w4_entry_format(&e, "c.safetensors", line, sizeof line);
    cr_assert(!strncmp(line, "AMBIGUOUS c.safetensors: ordered(1)", 35), "%s", line);
}

/* A failing entry that compared no output (a refusal, a crash) says so in its one-line form:
 * never "FAIL ..: ordered(1), 0 checked" (docs/cli/run.md, "When an entry fails"); one that
 * compared outputs keeps its count. */
Test(runner, a_failing_entry_that_compared_nothing_never_reads_0_checked)
{
    a4w4_entry_result e;
    memset(&e, 0, sizeof e);
    e.verdict = A4W4_VERDICT_FAIL;
    snprintf(e.contract, sizeof e.contract, "ordered(1)");
    snprintf(e.note, sizeof e.note, "refused: c.safetensors: file is shorter than 8 bytes");
    char line[512];
    a4w4_entry_format(&e, "c.safetensors", line, sizeof line);
    cr_assert_str_eq(line, "FAIL c.safetensors: ordered(1), no output compared; refused: "
                           "c.safetensors: file is shorter than 8 bytes");
    e.checked = 96;
    e.mismatches = 2;
    a4w4_entry_format(&e, "c.safetensors", line, sizeof line);
    cr_assert(!strncmp(line, "FAIL c.safetensors: ordered(1), 96 checked", 42), "%s", line);
}

