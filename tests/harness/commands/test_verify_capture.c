/* test_verify_capture.c — a captured GEMM judged by the contract its metadata records
 * (harness/commands/verify_capture.h, contracts §4.1, §4.2): a tree contract is bit-exact against
 * the tree oracle, a capture whose kernel kept another order fails, and a tree that does not
 * apply to the capture's K or a malformed contract is bad input naming the rule (one failing
 * entry, status A4W4_ST_BADINPUT). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "gen.h"
#include "safetensors.h"
#include "test_util.h"
#include "verify_capture.h"

#define TMP_DIR A4W4_BINARY_DIR "/verify-capture-test-tmp"

/* Write a GEMM capture of generated wide operands (M x N x K) whose y is the tree oracle of
 * `kept`, with metadata contract `declared`; return its path (static storage). */
static const char *write_capture(const char *kept, const char *declared, size_t M, size_t N,
                                 size_t K)
{
    static char path[4200];
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "cap");
    c.M = M, c.N = N, c.K = K, c.regime = A4W4_REGIME_WIDE, c.seed = 11;
    snprintf(c.regime_text, sizeof c.regime_text, "wide");
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(M, N, K, c.seed, c.name, 1, &s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse(kept, &k, NULL, 0), A4W4_OK, "%s", kept);
    uint16_t *y = malloc(M * N * 2);
    cr_assert(y);
    cr_assert_eq(a4w4_gemm_tree(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M,
                                N, K, &k.tree, y, NULL), A4W4_OK);
    a4w4_st_tensor_in t[5] = {{"a_fp4", A4W4_DT_U8, 2, {M, K / 2}, d.a_fp4.data, 0},
                              {"a_scale", A4W4_DT_U8, 2, {M, K / 32}, d.a_scale.data, 0},
                              {"w_fp4", A4W4_DT_U8, 2, {N, K / 2}, d.w_fp4.data, 0},
                              {"w_scale", A4W4_DT_U8, 2, {N, K / 32}, d.w_scale.data, 0},
                              {"y", A4W4_DT_BF16, 2, {M, N}, y, 0}};
    char ms[32], ns[32], ks[32], err[512];
    snprintf(ms, sizeof ms, "%zu", M);
    snprintf(ns, sizeof ns, "%zu", N);
    snprintf(ks, sizeof ks, "%zu", K);
    const char *keys[] = {"format", "op", "M", "N", "K", "contract"};
    const char *vals[] = {A4W4_CAPTURE_FORMAT, "aiter.gemm_a4w4", ms, ns, ks, declared};
    snprintf(path, sizeof path, "%s/cap.safetensors", tu_scratch_dir(TMP_DIR, "cap"));
    cr_assert_eq(a4w4_st_write(path, t, 5, keys, vals, 6, err, sizeof err), A4W4_ST_OK, "%s", err);
    free(y);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return path;
}

/* Judge the capture at path (a4w4_run_capture, the one reading of a capture): its status, the
 * GEMM entry's verdict into *v (SKIP when it made none), err. */
static a4w4_hstatus verify(const char *path, a4w4_verdict *v, char *err, size_t errlen)
{
    a4w4_entry_list el = {0};
    a4w4_hstatus rc = a4w4_run_capture(path, NULL, A4W4_CODE0_BOTH, &el, err, errlen);
    *v = el.n ? el.items[0].verdict : A4W4_VERDICT_SKIP;
    a4w4_entry_list_free(&el);
    return rc;
}

Test(verify_capture, a_tree_contract_is_judged_bit_for_bit_by_the_tree_oracle)
{
    char err[512] = "";
    a4w4_verdict v;
    const char *tree = "tree(reduce=pairwise,fuse=2,round=rz)";
    /* the kernel kept the declared tree (keys in another order): pass */
    const char *p = write_capture(tree, "tree(round=rz,reduce=pairwise,fuse=2)", 9, 40, 2048);
    cr_expect_eq(verify(p, &v, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_expect_eq(v, A4W4_VERDICT_PASS);
    /* ... declared as ordered(1): the RZ accumulation is caught */
    p = write_capture(tree, "ordered(1)", 9, 40, 2048);
    cr_expect_eq(verify(p, &v, err, sizeof err), A4W4_ST_OK); /* the entry says it */
    cr_expect_eq(v, A4W4_VERDICT_FAIL);
    /* a tree whose split boundary is not below K, and a malformed tree: bad input */
    p = write_capture("tree()", "tree(split=0/2048)", 3, 16, 2048);
    cr_expect_eq(verify(p, &v, err, sizeof err), A4W4_ST_BADINPUT);
    cr_expect(strstr(err, "split boundary 2048 is not below K=2048"), "%s", err);
    p = write_capture("tree()", "tree(leaf=3)", 3, 16, 256);
    cr_expect_eq(verify(p, &v, err, sizeof err), A4W4_ST_BADINPUT);
    cr_expect(strstr(err, "leaf=3: leaf is one of"), "%s", err);
}
