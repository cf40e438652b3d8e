/* test_tree_fast.c — the fast tree oracle's nodes of finite precision and bf16 accumulators
 * (ref/a4w4_tree_fast.c, contracts §4.2 rule 4 and "The fast path"): hand-computed outputs of
 * an aligned, truncated fused node (expected bits worked out in the comments), then the fast
 * path bit-equal to the plain oracle (ref/a4w4_tree.c) over a grid of contracts — leaf=1 with
 * fuse=16, prec 8/13/24/26, round rz and rne, acc=bf16, split=0/1408/2816 at K=4096 — on
 * random, wide, code-0, special and tiny operands and on adversarial ones (scales at the ends
 * of E8M0's range: leaves that overflow, underflow or cancel inside one node). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_tree.h"
#include "gen.h"
#include "test_util.h"

static a4w4_tree parse_tree(const char *text)
{
    a4w4_contract c;
    char err[256] = "";
    cr_assert_eq(a4w4_contract_parse(text, &c, err, sizeof err), A4W4_OK, "%s: %s", text, err);
    cr_assert_eq(c.kind, A4W4_CONTRACT_TREE, "%s", text);
    return c.tree;
}

/* ---- hand-computed: one output, K = 64 ----------------------------------------------------
 * W is 1.0 everywhere (code 2, scale 127), so leaf=1's leaf k is A[k]. A[0] = 1.0 (block 0,
 * scale 127); A[32..34] = 1.5 * 2^-25 (code 3, block 1 scale 102); the rest 0. With fuse=16
 * the chain's groups are k 0..15, 16..31, 32..47, 48..63: after the first two acc = 1.0;
 * the third node's inputs are acc = 1.0 (e_max = 0) and three leaves 3 * 2^-26.
 *  prec=26: q = 2^(0 - 26 + 1) = 2^-25, each leaf truncates to 1 * q: s = 1 + 3 * 2^-25, i.e.
 *    0.75 of fp32's ulp 2^-23 at 1.0: rz keeps 1.0 (0x3F800000), rne takes 1 + 2^-23
 *    (0x3F800001).
 *  prec=27: q = 2^-26, the leaves are exact: s = 1 + 9 * 2^-26 = 1 + 1.125 ulp: rz gives
 *    1 + 2^-23 (0x3F800001); so does prec=0 with rz.
 *  acc=bf16, prec=26, rne: s = 1 + 3 * 2^-25 is far below half of bf16's ulp 2^-7: 1.0.
 * The last group (zeros) leaves acc unchanged; every bf16 output is 0x3F80. */
typedef struct {
    uint8_t a[32], as[2], w[32], ws[2];
} k64_output;

static void expect_k64(const k64_output *o, const char *text, uint32_t want)
{
    a4w4_tree t = parse_tree(text);
    a4w4_dot_operands op = {o->a, o->as, o->w, o->ws, 64};
    uint16_t b = 0;
    float f = 0;
    cr_assert_eq(a4w4_dot_tree(&op, &t, &b, &f), A4W4_OK);
    cr_expect_eq(a4w4_f32_bits(f), want, "%s plain: 0x%08x, want 0x%08x", text,
                 a4w4_f32_bits(f), want);
    cr_expect_eq(b, 0x3F80, "%s plain bf16 0x%04x", text, b);
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            continue;
        a4w4_fast_stats st;
        cr_assert_eq(a4w4_gemm_tree_fast_ex(o->a, o->as, o->w, o->ws, 1, 1, 64, &t, &b, &f, 1,
                                            (a4w4_fast_isa)isa, &st),
                     A4W4_OK);
        cr_expect_eq(st.tree, 1, "%s: not by the fast path", text);
        cr_expect_eq(a4w4_f32_bits(f), want, "%s on %s: 0x%08x, want 0x%08x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), a4w4_f32_bits(f), want);
        cr_expect_eq(b, 0x3F80, "%s on %s: bf16 0x%04x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), b);
    }
}

Test(tree_fast_prec, a_fused_node_truncates_its_inputs_to_p_bits_below_the_largest)
{
    k64_output o;
    memset(&o, 0, sizeof o);
    memset(o.w, 0x22, sizeof o.w);
    o.ws[0] = o.ws[1] = 127;
    o.as[0] = 127;
    o.as[1] = 102;
    a4w4_fp4_set(o.a, 0, 2);
    for (size_t k = 32; k < 35; k++)
        a4w4_fp4_set(o.a, k, 3);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rz)", 0x3F800000u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rne)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=27,round=rz)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,round=rz)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rne,acc=bf16)", 0x3F800000u);
}

/* ---- the grid: fast == plain ------------------------------------------------------------ */

/* Contracts the fast path now takes (prec > 0 with fuse <= 256, acc=bf16), the kernels' own
 * first; split=0/1408/2816 needs K > 2816 (the K = 4096 shape only). */
static const struct {
    const char *text;
    int needs_k4096;
} grid[] = {
    {"tree(leaf=1,fuse=16,prec=26,round=rz)", 0},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,split=0/1408/2816)", 1},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,split=0/1408/2816,combine=pairwise)", 1},
    {"tree(leaf=1,fuse=16,prec=24,round=rz,split=0/1408/2816,final=rz)", 1},
    {"tree(leaf=1,fuse=16,prec=13,round=rne)", 0},
    {"tree(leaf=1,fuse=16,prec=8,round=rz,acc=bf16)", 0},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,acc=bf16,split=0/1408/2816)", 1},
    {"tree(leaf=2,fuse=3,prec=24,reduce=pairwise,order=desc)", 0},
    {"tree(leaf=32,fuse=4,prec=26,round=rz,split=3,combine=pairwise)", 0},
    {"tree(leaf=8,prec=13,round=rz)", 0},
    {"tree(leaf=16,fuse=1,prec=8,reduce=pairwise,round=rne)", 0},
    {"tree(leaf=4,fuse=256,prec=64,round=rz,order=desc)", 0},
    {"tree(leaf=1,fuse=255,prec=53,reduce=pairwise,acc=bf16,final=rz)", 0},
    {"tree(leaf=32,fuse=7,prec=40,split=5,combine=pairwise,round=rz)", 0},
    {"tree(acc=bf16)", 0},
    {"tree(acc=bf16,round=rz,reduce=pairwise)", 0},
    {"tree(leaf=1,acc=bf16,fuse=16,round=rz,split=0/1408/2816,final=rz)", 1},
    {"tree(leaf=4,acc=bf16,fuse=5,order=desc,combine=pairwise,split=3)", 0},
};

/* Adversarial operands: random codes, scales drawn from E8M0's ends and middle (0, 1, 2;
 * 100..140; 250..254) and now and then 0xFF, so that one node meets leaves that overflow
 * fp32, that are subnormal or lost to the alignment, and that cancel. */
static void adversarial(a4w4_case_data *d, uint64_t seed)
{
    tu_rng r;
    tu_xorshift64_seed(&r, seed);
    static const uint8_t ends[] = {0, 1, 2, 250, 251, 252, 253, 254};
    uint8_t *sc[2] = {d->a_scale.data, d->w_scale.data};
    size_t ns[2] = {d->M * (d->K / 32), d->N * (d->K / 32)};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < ns[s]; i++) {
            unsigned pick = tu_xorshift64_below(&r, 64);
            sc[s][i] = pick == 0 ? 0xFF
                       : pick < 24 ? ends[tu_xorshift64_below(&r, sizeof ends)]
                                   : (uint8_t)(100 + tu_xorshift64_below(&r, 41));
        }
    uint8_t *fp[2] = {d->a_fp4.data, d->w_fp4.data};
    size_t nb[2] = {d->M * (d->K / 2), d->N * (d->K / 2)};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < nb[s]; i++)
            fp[s][i] = (uint8_t)tu_xorshift64(&r);
}

/* Fast and plain outputs (bf16 and accumulator bits) of tree t on d; returns the mismatches
 * and asserts that every output was the fast path's (an eligible tree) and none redone
 * beyond prec = 0's rare undecided sums. */
static size_t mismatches(const a4w4_case_data *d, const a4w4_tree *t, unsigned threads,
                         size_t *first)
{
    size_t n = d->M * d->N, bad = 0;
    uint16_t *pb = malloc(n * 2), *fb = malloc(n * 2);
    float *pf = malloc(n * 4), *ff = malloc(n * 4);
    cr_assert(pb && fb && pf && ff);
    cr_assert_eq(a4w4_gemm_tree(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                                d->M, d->N, d->K, t, pb, pf),
                 A4W4_OK);
    a4w4_fast_stats st;
    cr_assert_eq(a4w4_gemm_tree_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                        d->w_scale.data, d->M, d->N, d->K, t, fb, ff, threads,
                                        A4W4_FAST_AUTO, &st),
                 A4W4_OK);
    cr_assert_eq(st.tree + st.trivial, n, "%zu of %zu outputs by the fast path",
                 st.tree + st.trivial, n);
    for (size_t k = 0; k < n; k++)
        if (fb[k] != pb[k] || a4w4_f32_bits(ff[k]) != a4w4_f32_bits(pf[k])) {
            if (!bad)
                *first = k;
            bad++;
        }
    if (bad)
        cr_log_error("first mismatch %zu: fast 0x%04x 0x%08x, plain 0x%04x 0x%08x", *first,
                     fb[*first], a4w4_f32_bits(ff[*first]), pb[*first], a4w4_f32_bits(pf[*first]));
    free(pb);
    free(fb);
    free(pf);
    free(ff);
    return bad;
}

static a4w4_case mk(size_t M, size_t N, size_t K, a4w4_regime r, uint64_t seed)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "tree_fast_m%zu_n%zu_k%zu_r%d", M, N, K, (int)r);
    c.M = M;
    c.N = N;
    c.K = K;
    c.regime = r;
    c.mode = A4W4_ROUND_UP;
    snprintf(c.regime_text, sizeof c.regime_text, "r%d", (int)r);
    c.seed = seed;
    return c;
}

/* Regimes: the generator's (A4W4_REGIME_COUNT of them), then -1 for adversarial(). */
static const int regimes[] = {A4W4_REGIME_NORMAL, A4W4_REGIME_EXACT, A4W4_REGIME_WIDE,
                              A4W4_REGIME_SPECIAL, A4W4_REGIME_CODE0, A4W4_REGIME_TINY, -1};

Test(tree_fast_prec, equals_the_plain_oracle_on_a_grid_of_contracts_and_operands)
{
    /* K = 4096 for the kernels' split; a ragged shape (N not a multiple of 16, M past one
     * tile of rows) at K = 544 */
    static const size_t shapes[][3] = {{3, 17, 4096}, {19, 21, 544}};
    size_t point = 0;
    for (size_t ri = 0; ri < sizeof regimes / sizeof regimes[0]; ri++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            a4w4_regime reg = regimes[ri] < 0 ? A4W4_REGIME_NORMAL : (a4w4_regime)regimes[ri];
            a4w4_case c = mk(shapes[si][0], shapes[si][1], shapes[si][2], reg, 900 + ri * 3 + si);
            a4w4_sample s;
            a4w4_case_data d;
            cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), A4W4_OK);
            cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK, "generate %s", c.name);
            if (regimes[ri] < 0)
                adversarial(&d, c.seed);
            for (size_t gi = 0; gi < sizeof grid / sizeof grid[0]; gi++) {
                if (grid[gi].needs_k4096 && c.K != 4096)
                    continue;
                if (tu_sweep_skip(point++))
                    continue;
                a4w4_tree t = parse_tree(grid[gi].text);
                cr_assert(a4w4_tree_fast_eligible(&t), "%s not taken", grid[gi].text);
                size_t first = 0, bad = mismatches(&d, &t, si == 1 ? 2 : 1, &first);
                cr_assert_eq(bad, 0, "%s, regime %d, %zux%zux%zu: %zu outputs differ, first %zu",
                             grid[gi].text, regimes[ri], c.M, c.N, c.K, bad, first);
            }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}

Test(tree_fast_prec, takes_prec_trees_up_to_the_fuse_limit_and_bf16_accumulators)
{
    a4w4_tree t = parse_tree("tree(prec=26,fuse=256)");
    cr_expect(a4w4_tree_fast_eligible(&t));
    t = parse_tree("tree(prec=26,fuse=257)");
    cr_expect(!a4w4_tree_fast_eligible(&t), "fuse 257 > A4W4_TREE_FAST_PREC_FUSE_MAX");
    t = parse_tree("tree(acc=bf16,fuse=4294967295)");
    cr_expect(a4w4_tree_fast_eligible(&t));
    cr_expect(!a4w4_tree_fast_eligible(NULL));
}
