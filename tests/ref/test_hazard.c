/* test_hazard.c — ref/a4w4_hazard.h: the static hazard class of a shape (contracts §5, §6).
 * The rule on hand-made facts, one test per class and the tuned exception; then one real shape
 * of each class through AITER's tables (cases/aiter/) and SGLang's policy, with the route facts
 * that make it that class asserted first. Links ref/ alone (tests/CMakeLists.txt). The same
 * shapes go through `hazards`, `route` and the HTML report in tests/cli/hazard_classes.cmake. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "a4w4_hazard.h"

#define TUNED A4W4_SOURCE_DIR "/cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define KERNELS A4W4_SOURCE_DIR "/cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"

/* ---------------------------------------------------------------- the rule */

static a4w4_hazard_class rule(int untuned, int winners, int nofit, int policy_asm)
{
    a4w4_hazard h = {1, 256, 256, untuned, winners, nofit, policy_asm, -1, A4W4_HAZARD_FENCED};
    cr_assert_eq(a4w4_hazard_classify(&h), A4W4_OK);
    cr_assert_eq(h.hazardous, untuned && (winners > 1 || nofit > 0));
    return h.cls;
}

Test(hazard_rule, asm_path_with_a_possible_winner_that_does_not_fit_is_exposed)
{
    cr_expect_eq(rule(1, 1, 1, 1), A4W4_HAZARD_EXPOSED);
    cr_expect_eq(rule(1, 33, 17, 1), A4W4_HAZARD_EXPOSED, "some fit, one that does not is enough");
}

Test(hazard_rule, asm_path_with_several_winners_that_all_fit_is_order_dependent)
{
    cr_expect_eq(rule(1, 2, 0, 1), A4W4_HAZARD_ORDER_DEPENDENT);
    cr_expect_eq(rule(1, 1, 0, 1), A4W4_HAZARD_OK, "one winner that fits: no hazard");
}

Test(hazard_rule, triton_on_a_hazardous_shape_is_fenced_and_on_a_safe_one_ok)
{
    cr_expect_eq(rule(1, 1, 1, 0), A4W4_HAZARD_FENCED, "the only winner does not fit");
    cr_expect_eq(rule(1, 5, 0, 0), A4W4_HAZARD_FENCED, "several winners");
    cr_expect_eq(rule(1, 1, 0, 0), A4W4_HAZARD_OK);
}

Test(hazard_rule, a_tuned_shape_is_never_a_hazard)
{
    /* a tuned row is one kernel AITER's tuner measured: no walk order, whatever its fit */
    cr_expect_eq(rule(0, 1, 1, 1), A4W4_HAZARD_OK);
    cr_expect_eq(rule(0, 1, 1, 0), A4W4_HAZARD_OK);
}

Test(hazard_rule, bad_arguments_and_names)
{
    a4w4_hazard h = {1, 256, 256, 1, -1, 0, 1, 1, A4W4_HAZARD_EXPOSED};
    cr_expect_eq(a4w4_hazard_classify(&h), A4W4_EINVAL);
    cr_expect_eq(h.cls, A4W4_HAZARD_OK);
    cr_expect_eq(a4w4_hazard_classify(NULL), A4W4_EINVAL);
    a4w4_route r;
    a4w4_policy_result pr;
    memset(&r, 0, sizeof r);
    memset(&pr, 0, sizeof pr);
    r.M = 1, r.N = 256, r.K = 512;
    cr_expect_eq(a4w4_hazard_of_route(1, 256, 256, &r, &pr, &h), A4W4_EINVAL, "another shape");
    cr_expect_eq(a4w4_hazard_of_route(1, 256, 512, NULL, &pr, &h), A4W4_EINVAL);
    cr_expect_eq(a4w4_hazard_of_route(1, 256, 512, &r, NULL, &h), A4W4_EINVAL);
    cr_expect_str_eq(a4w4_hazard_class_name(A4W4_HAZARD_OK), "ok");
    cr_expect_str_eq(a4w4_hazard_class_name(A4W4_HAZARD_EXPOSED), "exposed");
    cr_expect_str_eq(a4w4_hazard_class_name(A4W4_HAZARD_ORDER_DEPENDENT), "order_dependent");
    cr_expect_str_eq(a4w4_hazard_class_name(A4W4_HAZARD_FENCED), "fenced");
    cr_expect_str_eq(a4w4_hazard_class_name((a4w4_hazard_class)9), "?");
}

/* ---------------------------------------------------------------- real shapes */

static a4w4_tuned_table tuned;
static a4w4_kernel_table kt;
static a4w4_route route;
static a4w4_policy_result pol;

static void tables(void)
{
    char err[512];
    cr_assert_eq(a4w4_tuned_load(&tuned, TUNED, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(a4w4_kernels_load(&kt, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
}

static void tables_free(void)
{
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
}

/* Route (M, N, K) with the defaults of `route` and `hazards` (gfx950, 256 CUs, log2_k_split 0,
 * preshuffled weights; policy flag on, 2-D input) and classify it. */
static a4w4_hazard classify(int M, int N, int K)
{
    static const a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    char err[512];
    a4w4_hazard h;
    cr_assert_eq(a4w4_route_shape(&tuned, &kt, &hp, M, N, K, &route, err, sizeof err), A4W4_OK,
                 "%s", err);
    cr_assert_eq(a4w4_policy_decide(1, "gfx950", (size_t)N, 2, (size_t)N, (size_t)K / 32,
                                    A4W4_INPUT_TENSOR_2D, 0, &pol),
                 A4W4_OK);
    cr_assert_eq(a4w4_hazard_of_route(M, N, K, &route, &pol, &h), A4W4_OK);
    cr_expect_eq(h.M, M);
    cr_expect_eq(h.winners, (int)route.ncand_any);
    return h;
}

/* The tile labels of the possible winners, comma-separated, in route's order (by name). */
static void winners(char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < route.ncand_any && u < len; i++) {
        char lab[64];
        a4w4_kernel_label(&kt, route.cand_any[i], lab, sizeof lab);
        u += (size_t)snprintf(buf + u, len - u, "%s%s", i ? "," : "", lab);
    }
}

TestSuite(hazard_shapes, .init = tables, .fini = tables_free);

Test(hazard_shapes, m33_n160_k256_is_exposed)
{
    /* untuned (no tuned row has K = 256); every tile_N is a multiple of 128, so none of the
     * 33 possible winners fits N = 160 (tile_N > 160, or 160 % 128 = 32); N > 128, N % 32 == 0
     * and K/32 = 8 put the layer on the ASM path */
    a4w4_hazard h = classify(33, 160, 256);
    cr_expect_eq(route.source, A4W4_SRC_HEURISTIC);
    cr_expect_eq(h.winners, 33);
    cr_expect_eq(h.winners_nofit, 33);
    cr_expect_eq(pol.decision, A4W4_DECIDE_ASM);
    cr_expect_eq(h.cls, A4W4_HAZARD_EXPOSED, "%s", a4w4_hazard_class_name(h.cls));
}

Test(hazard_shapes, m321_n35840_k256_is_order_dependent)
{
    /* untuned; four kernels can win and 35840 is a multiple of each one's tile_N (896 * 40,
     * 640 * 56, 512 * 70, 1024 * 35): every possible winner fits, the walk order decides; ASM */
    a4w4_hazard h = classify(321, 35840, 256);
    char w[512];
    winners(w, sizeof w);
    cr_expect_eq(route.source, A4W4_SRC_HEURISTIC);
    cr_expect_str_eq(w, "64x896,96x640,128x512/splitK,64x1024");
    cr_expect_eq(h.winners_nofit, 0);
    cr_expect_eq(pol.decision, A4W4_DECIDE_ASM);
    cr_expect_eq(h.cls, A4W4_HAZARD_ORDER_DEPENDENT, "%s", a4w4_hazard_class_name(h.cls));
}

Test(hazard_shapes, m2_n64_k256_is_fenced)
{
    /* untuned; one possible winner, the 256x256 split-K tile, and 256 > N = 64: hazardous;
     * N <= 128 keeps the layer on Triton (contracts §6 step 3) */
    a4w4_hazard h = classify(2, 64, 256);
    char w[512];
    winners(w, sizeof w);
    cr_expect_str_eq(w, "256x256/splitK");
    cr_expect_eq(h.winners_nofit, 1);
    cr_expect_eq(pol.decision, A4W4_DECIDE_TRITON);
    cr_expect_eq(pol.reason, A4W4_REASON_SMALL_N);
    cr_expect_eq(h.cls, A4W4_HAZARD_FENCED, "%s", a4w4_hazard_class_name(h.cls));
}

Test(hazard_shapes, m1_n512_k4096_is_ok)
{
    /* tuned row at M = 1 (the table's first row): 32x128, and 512 % 128 == 0; ASM */
    a4w4_hazard h = classify(1, 512, 4096);
    cr_expect_eq(route.source, A4W4_SRC_TUNED);
    cr_expect_eq(h.winners, 1);
    cr_expect_eq(h.winners_nofit, 0);
    cr_expect_eq(pol.decision, A4W4_DECIDE_ASM);
    cr_expect_eq(h.cls, A4W4_HAZARD_OK, "%s", a4w4_hazard_class_name(h.cls));
}

Test(hazard_shapes, m64_n192_k1024_is_tuned_so_ok_although_its_tile_does_not_fit)
{
    /* tuned row at M = 64: 32x128, and 192 % 128 = 64, so the tile does not fit N; on the ASM
     * path. Before the rule was one, `hazards` called this exposed (it did not ask whether
     * the shape was tuned); `route --scan` and the report's corner mark never counted it. */
    a4w4_hazard h = classify(64, 192, 1024);
    cr_expect_eq(route.source, A4W4_SRC_TUNED);
    cr_expect_eq(h.untuned, 0);
    cr_expect_eq(h.winners, 1);
    cr_expect_eq(h.winners_nofit, 1);
    cr_expect_eq(pol.decision, A4W4_DECIDE_ASM);
    cr_expect_eq(h.cls, A4W4_HAZARD_OK, "%s", a4w4_hazard_class_name(h.cls));
}

/* ------------------------------------------------- the field's bug record as rules */

static unsigned bugs(int M, int N, int K, int is_asm, int tm, int tn, int split, int kpre,
                     int policy_asm)
{
    a4w4_bug_shape s = {M, N, K, 1, is_asm, tm, tn, split, kpre, 1, policy_asm};
    return a4w4_bugs_of(&s);
}

#define BIT(b) (1u << (b))

Test(bug_rules, each_rule_flags_its_shapes_and_not_the_next_one)
{
    cr_expect_eq(bugs(16, 1024, 1664, 1, 32, 128, 1, 1, 1), BIT(A4W4_BUG_AITER_4176));
    cr_expect_eq(bugs(16, 1024, 1792, 1, 32, 128, 1, 1, 1), 0, "K = 7 x 256");
    cr_expect_eq(bugs(16, 1024, 1664, 0, 0, 0, 1, -1, 1), BIT(A4W4_BUG_CK_11774),
                 "a CK route: not the ASM launcher's K bug; CK with M < 32");
    cr_expect_eq(bugs(16, 1024, 5120, 1, 256, 256, 4, 1, 1), BIT(A4W4_BUG_AITER_5261));
    cr_expect_eq(bugs(65, 1024, 768, 1, 32, 128, 1, 1, 1), BIT(A4W4_BUG_AITER_5377));
    cr_expect_eq(bugs(64, 1024, 768, 1, 32, 128, 1, 1, 1), 0, "M = 64 is outside (64, 256]");
    cr_expect_eq(bugs(257, 1024, 768, 1, 32, 128, 1, 1, 1), 0);
    cr_expect_eq(bugs(32, 1024, 5120, 0, 0, 0, 1, -1, 1), 0, "CK with M = 32");
    cr_expect_eq(bugs(16, 1024, 5120, 1, 256, 256, 1, 0, 1), BIT(A4W4_BUG_SGLANG_26884));
    cr_expect_eq(bugs(16384, 800, 5120, 1, 128, 512, 1, 1, 1), BIT(A4W4_BUG_TILE_128X512));
    cr_expect_eq(bugs(16384, 1024, 5120, 1, 128, 512, 1, 1, 1), 0, "N %% 512 == 0");
    cr_expect_eq(bugs(16, 1024, 5120, 1, 32, 128, 1, 1, 0), BIT(A4W4_BUG_TRITON_11624),
                 "the Triton path: the data rule");
}

Test(bug_rules, every_rule_has_a_citation_and_shape_rules_flag_something)
{
    size_t n;
    const a4w4_bug_rule *r = a4w4_bug_rules(&n);
    cr_assert_eq(n, A4W4_BUG_COUNT);
    for (size_t i = 0; i < n; i++) {
        cr_expect(strstr(r[i].url, "https://") == r[i].url, "%s", r[i].id);
        cr_expect(r[i].citation[0] && r[i].what[0] && r[i].rule[0], "%s", r[i].id);
    }
    char buf[128];
    cr_expect_str_eq(a4w4_bugs_text(BIT(A4W4_BUG_AITER_4176) | BIT(A4W4_BUG_CK_11774), ", ", 1,
                                    buf, sizeof buf),
                     "ROCm/aiter#4176, ROCm/rocm-libraries#11774");
}

/* A real tuned row: AITER's table names the 128x512 tile for N = 800 (N % 512 != 0), which
 * its own heuristic would never pick (contracts §5.3). */
Test(bug_rules, the_tuned_table_names_the_128x512_tile_for_n_800)
{
    a4w4_tuned_table t = {0};
    a4w4_kernel_table k = {0};
    char err[512];
    cr_assert_eq(a4w4_tuned_load(&t, A4W4_SOURCE_DIR "/cases/aiter/a4w4_blockscale_tuned_gemm.csv",
                                 err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(a4w4_kernels_load(&k, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
    static const a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    a4w4_route r;
    cr_assert_eq(a4w4_route_shape(&t, &k, &hp, 16384, 800, 5120, &r, err, sizeof err), A4W4_OK,
                 "%s", err);
    cr_assert(r.is_asm && r.tile_m == 128 && r.tile_n == 512, "the tuned pick is 128x512");
    a4w4_policy_result pr = {0};
    pr.decision = A4W4_DECIDE_ASM;
    a4w4_bug_shape s;
    a4w4_bug_shape_of(16384, 800, 5120, &r, &k, 1, &pr, &s);
    cr_expect_eq(a4w4_bugs_of(&s), BIT(A4W4_BUG_TILE_128X512));
    a4w4_tuned_free(&t);
    a4w4_kernels_free(&k);
}
