/* test_invariance.c — batch invariance predicted from the tables (commands/invariance.h): the
 * breakpoint walk against a walk over every M, the verdicts and causes on hand-made tables,
 * the switch parser. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "invariance.h"
#include "test_util.h"

#define TUNED A4W4_SOURCE_DIR "/cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define KERNELS A4W4_SOURCE_DIR "/cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define ASM32 "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E"
#define ASM256 "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E"

static const char head[] = "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n";

static a4w4_inv_setup setup_default(int m_max)
{
    a4w4_inv_setup s;
    memset(&s, 0, sizeof s);
    s.setup = (a4w4_dispatch_setup)A4W4_DISPATCH_SETUP_DEFAULT;
    s.m_max = m_max;
    return s;
}

static void load(a4w4_tuned_table *t, a4w4_kernel_table *kt, const char *tuned_text)
{
    char err[512];
    memset(t, 0, sizeof *t);
    memset(kt, 0, sizeof *kt);
    if (tuned_text) {
        const char *p = tu_scratch_file(A4W4_BINARY_DIR "/test_invariance", "tuned.csv",
                                        tuned_text);
        cr_assert_eq(a4w4_tuned_load(t, p, err, sizeof err), A4W4_OK, "%s", err);
    } else {
        cr_assert_eq(a4w4_tuned_load(t, TUNED, err, sizeof err), A4W4_OK, "%s", err);
    }
    cr_assert_eq(a4w4_kernels_load(kt, KERNELS, NULL, err, sizeof err), A4W4_OK, "%s", err);
}

/* Every M of 1..m_max lies in exactly one run, whose path and verdict are those of the chain
 * at that M computed on its own. */
static void expect_runs_match_every_m(const a4w4_tuned_table *t, const a4w4_kernel_table *kt,
                                      const a4w4_inv_setup *s, const a4w4_inv_pair *q)
{
    char err[512];
    a4w4_inv_path p1, p;
    cr_assert_eq(a4w4_inv_path_of(t, kt, s, 1, q->N, q->K, &p1, err, sizeof err), A4W4_OK);
    size_t r = 0;
    cr_assert_eq(q->runs[0].lo, 1);
    cr_assert_eq(q->runs[q->nruns - 1].hi, s->m_max);
    for (int M = 1; M <= s->m_max; M++) {
        while (q->runs[r].hi < M)
            r++;
        cr_assert_leq(q->runs[r].lo, M);
        cr_assert_eq(a4w4_inv_path_of(t, kt, s, M, q->N, q->K, &p, err, sizeof err), A4W4_OK);
        cr_assert(a4w4_inv_path_same(&q->runs[r].path, &p), "N %d K %d M %d: run %d..%d",
                  q->N, q->K, M, q->runs[r].lo, q->runs[r].hi);
        cr_assert_eq(q->runs[r].verdict, a4w4_inv_compare(&p1, &p), "M %d", M);
    }
}

Test(invariance_scan, the_breakpoints_give_the_path_of_every_m_on_aiters_table)
{
    a4w4_tuned_table t;
    a4w4_kernel_table kt;
    load(&t, &kt, NULL);
    a4w4_inv_setup s = setup_default(2048);
    char err[512];
    cr_assert_eq(a4w4_inv_switch_parse(&s, "64:triton-preshuffle", err, sizeof err), A4W4_OK);
    int *nk;
    size_t n;
    cr_assert_eq(a4w4_inv_pairs_of_table(&t, &nk, &n), A4W4_OK);
    cr_assert_eq(n, 127); /* AITER's table: 127 (N, K) pairs */
    a4w4_inv_prediction p;
    cr_assert_eq(a4w4_inv_predict(&t, &kt, &s, nk, n, &p, err, sizeof err), A4W4_OK, "%s", err);
    for (size_t i = 0; i < n; i += 4 * A4W4_SWEEP_STRIDE)
        expect_runs_match_every_m(&t, &kt, &s, &p.pairs[i]);
    a4w4_inv_prediction_free(&p);
    free(nk);
    a4w4_tuned_free(&t);
    a4w4_kernels_free(&kt);
}

/* N 1024: M 1..16 pads to the 32x128 row (ordered(1)); M 65..128 reaches the M 128 row, a
 * 256x256 tile at splitK 1 (two splits, bf16 atomics). */
Test(invariance_verdicts, a_split_k_row_past_m_64_is_nondeterministic_from_m_65)
{
    a4w4_tuned_table t;
    a4w4_kernel_table kt;
    char text[2048];
    snprintf(text, sizeof text, "%sgfx950,256,16,1024,4096,0,0,1," ASM32 ",0,0,0\n"
             "gfx950,256,128,1024,4096,0,1,1," ASM256 ",0,0,0\n", head);
    load(&t, &kt, text);
    a4w4_inv_setup s = setup_default(300);
    int nk[2] = {1024, 4096};
    a4w4_inv_prediction p;
    char err[512], cause[2048];
    cr_assert_eq(a4w4_inv_predict(&t, &kt, &s, nk, 1, &p, err, sizeof err), A4W4_OK, "%s", err);
    const a4w4_inv_pair *q = &p.pairs[0];
    cr_assert_eq(q->worst, A4W4_INV_NONDET);
    cr_assert_geq(q->first_break, 0);
    cr_assert_eq(q->runs[q->first_break].lo, 65);
    cr_assert_eq(q->runs[q->first_break].hi, 128);
    a4w4_inv_cause(q, (size_t)q->first_break, &s, cause, sizeof cause);
    cr_assert(strstr(cause, "M 64 -> 65: ") && strstr(cause, "-> ASM 256x256 split-K 2") &&
                  strstr(cause, "bounded(2)") && strstr(cause, "(M = 1: ordered(1))"),
              "%s", cause);
    cr_assert_eq(p.count[A4W4_INV_NONDET], 1);
    expect_runs_match_every_m(&t, &kt, &s, q);
    a4w4_inv_prediction_free(&p);
    a4w4_tuned_free(&t);
    a4w4_kernels_free(&kt);
}

/* N 2048: a CK row at M 64 (gl 1 reaches it from M 33): unknown while no contract is
 * declared for CK kernels, invariant when ordered(1) is, variant when ordered(2) is. */
Test(invariance_verdicts, a_ck_row_takes_the_declared_contract)
{
    a4w4_tuned_table t;
    a4w4_kernel_table kt;
    char text[2048], err[512], cause[2048];
    snprintf(text, sizeof text, "%sgfx950,256,64,2048,4096,0,0,1,ck_kernel_a,0,0,0\n", head);
    load(&t, &kt, text);
    int nk[2] = {2048, 4096};
    static const char *const declared[] = {NULL, "ordered(1)", "ordered(2)"};
    static const a4w4_inv_verdict want[] = {A4W4_INV_UNKNOWN, A4W4_INV_INVARIANT,
                                            A4W4_INV_VARIANT};
    for (int i = 0; i < 3; i++) {
        a4w4_inv_setup s = setup_default(200);
        if (declared[i]) {
            cr_assert_eq(a4w4_contract_parse(declared[i], &s.ck.c, err, sizeof err), A4W4_OK);
            s.ck.declared = 1;
        }
        a4w4_inv_prediction p;
        cr_assert_eq(a4w4_inv_predict(&t, &kt, &s, nk, 1, &p, err, sizeof err), A4W4_OK);
        const a4w4_inv_pair *q = &p.pairs[0];
        cr_assert_eq(q->worst, want[i], "declared %s", declared[i] ? declared[i] : "none");
        if (want[i] != A4W4_INV_INVARIANT) {
            cr_assert_eq(q->runs[q->first_break].lo, 33);
            cr_assert_eq(q->runs[q->first_break].hi, 64);
        } else {
            cr_assert_eq(q->first_break, -1);
        }
        if (want[i] == A4W4_INV_VARIANT) {
            a4w4_inv_cause(q, (size_t)q->first_break, &s, cause, sizeof cause);
            cr_assert(strstr(cause, "M 32 -> 33: ") && strstr(cause, "CK ck_kernel_a") &&
                          strstr(cause, "the contract changes from ordered(1) (M = 1) to "
                                        "ordered(2)"),
                      "%s", cause);
        }
        a4w4_inv_prediction_free(&p);
    }
    a4w4_tuned_free(&t);
    a4w4_kernels_free(&kt);
}

/* vLLM's 64/65 switch with a declared contract other than ordered(1): variant at M 65; the
 * ASM tile changes past it keep ordered(1) and change nothing more. A layer of N <= 128 stays
 * on Triton at every M: unknown without a declared contract. */
Test(invariance_verdicts, a_framework_switch_and_the_layer_policy_fence)
{
    a4w4_tuned_table t;
    a4w4_kernel_table kt;
    char text[2048], err[512];
    snprintf(text, sizeof text, "%sgfx950,256,16,1024,4096,0,0,1," ASM32 ",0,0,0\n", head);
    load(&t, &kt, text);
    a4w4_inv_setup s = setup_default(1000);
    cr_assert_eq(a4w4_inv_switch_parse(&s, "64:triton-preshuffle:ordered(2)", err, sizeof err),
                 A4W4_OK, "%s", err);
    int nk[4] = {1024, 4096, 128, 4096};
    a4w4_inv_prediction p;
    cr_assert_eq(a4w4_inv_predict(&t, &kt, &s, nk, 2, &p, err, sizeof err), A4W4_OK, "%s", err);
    const a4w4_inv_pair *q = &p.pairs[0];
    cr_assert_eq(q->worst, A4W4_INV_VARIANT);
    cr_assert_eq(q->runs[q->first_break].lo, 65);
    for (size_t r = (size_t)q->first_break; r < q->nruns; r++)
        cr_assert_eq(q->runs[r].verdict, A4W4_INV_VARIANT);
    cr_assert_eq(p.pairs[1].runs[0].path.kind, A4W4_PATH_SWITCH);
    cr_assert_eq(p.pairs[1].runs[1].path.kind, A4W4_PATH_TRITON);
    cr_assert_eq(p.pairs[1].worst, A4W4_INV_UNKNOWN);
    expect_runs_match_every_m(&t, &kt, &s, q);
    a4w4_inv_prediction_free(&p);
    a4w4_tuned_free(&t);
    a4w4_kernels_free(&kt);
}

Test(invariance_switch, refuses_malformed_and_duplicate_switches)
{
    static const char *const bad[] = {"64", ":x", "0:x", "064:x", "64:", "64:a b",
                                      "64:x:ordered(0)", "2000000:x", "6x:y"};
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        a4w4_inv_setup s = setup_default(10);
        err[0] = 0;
        cr_assert_eq(a4w4_inv_switch_parse(&s, bad[i], err, sizeof err), A4W4_EINVAL, "%s",
                     bad[i]);
        cr_assert(strstr(err, "switch '"), "%s: %s", bad[i], err);
        cr_assert_eq(s.nsw, 0);
    }
    a4w4_inv_setup s = setup_default(10);
    cr_assert_eq(a4w4_inv_switch_parse(&s, "128:b", err, sizeof err), A4W4_OK);
    cr_assert_eq(a4w4_inv_switch_parse(&s, "64:a:tree(leaf=16)", err, sizeof err), A4W4_OK);
    cr_assert_eq(s.sw[0].m_max, 64); /* kept sorted */
    cr_assert(s.sw[0].contract.declared && !s.sw[1].contract.declared);
    cr_assert_eq(a4w4_inv_switch_parse(&s, "64:c", err, sizeof err), A4W4_EINVAL);
    cr_assert(strstr(err, "already given"), "%s", err);
}
